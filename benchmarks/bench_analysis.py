"""Private group-by queries: skdp.analysis against OpenDP, PipelineDP and Tumult Analytics.

The same queries on the same table at the same (ε, δ) and privacy unit (the person, one
region and one row per person and region kept), side by side in one run:

    a  count of rows per region, public keys
    b  mean income per region, public keys
    c  count + mean income + mean age per region, one budget, public keys
    d  median income per region, public keys
    e  count per region, keys chosen privately

For each table size, query and library: the error of each released cell against the exact
answer (RMSE over seeds and regions, per column; for ``e`` over the regions both released
and in the truth, with the mean number of regions released) and the median wall time of the
query. The error table has one row per person (``make_table`` with as many people as rows),
so the contribution bounds drop nothing and the exact group-by is every library's target;
means are compared with the mean of the incomes clipped to the public bound (200,000), as
every library clips. ``--multi-rows`` also times the libraries on a table with four rows per
person on average, where the bounds do cut.

skdp runs in this process on a pandas DataFrame (the query's time includes building the
``PrivateTable``); each peer runs in its own venv (``python benchmarks/setup_peers.py opendp
pipeline-dp tumult``), one query per process, timed from its first object to its released
table (benchmarks/_analysis_peers.py). One thread everywhere (``--threads``).

``--dask-rows N`` adds skdp on a dask DataFrame of N rows generated lazily, partition by
partition, on a ``LocalCluster`` of two single-threaded worker processes: queries a-d, with
the wall time and the peak resident memory of the client and of each worker.

Usage::

    python benchmarks/bench_analysis.py                                # 10^5 and 10^6
    python benchmarks/bench_analysis.py --sizes 1e5 1e6 1e7 --seeds 10 5 2
    python benchmarks/bench_analysis.py --sizes 1e5 --peers opendp --queries a b
    python benchmarks/bench_analysis.py --sizes --dask-rows 1e8        # the dask run alone
"""

import argparse
import math
import os
import resource
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _threads  # noqa: E402

_threads.set_thread_variables()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _analysis_data import (  # noqa: E402
    AGE_BOUNDS,
    INCOME_BOUNDS,
    exact_answers,
    make_table,
    public_keys,
    save_table,
)
from _analysis_peers import run_analysis_peer  # noqa: E402

from skdp.analysis import PrivateTable, SmallGroupWarning  # noqa: E402

BOUNDS = {"income": INCOME_BOUNDS, "age": AGE_BOUNDS}
# the released columns of each query, as _analysis_peers.py names them
COLUMNS = {"a": ["count"], "b": ["income_mean"], "c": ["count", "income_mean", "age_mean"],
           "d": ["income_median"], "e": ["count"]}
# the exact answer each column is compared with (exact_answers' names)
TRUTH = {"count": "count", "income_mean": "income_mean_clipped", "age_mean": "age_mean",
         "income_median": "income_median"}


def skdp_query(df, keys, query, epsilon, delta, seed, max_groups=1, max_rows=1):
    """One query with skdp: ``({region: {column: value}}, seconds)``."""
    start = time.perf_counter()
    t = PrivateTable(df, bounds=BOUNDS, privacy_unit="person", max_rows_per_unit=max_rows,
                     max_groups_per_unit=max_groups, delta=delta, random_state=seed)
    gb = t.groupby("region", keys=None if query == "e" else keys)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallGroupWarning)
        if query in ("a", "e"):
            res = gb.count(epsilon=epsilon)
        elif query == "b":
            res = gb.mean("income", epsilon=epsilon)
        elif query == "c":  # age is never missing: its count is the count of rows
            res = gb.agg({"income": "mean", "age": ["count", "mean"]}, epsilon=epsilon)
            res = res.rename(columns={"age_count": "count"})
        else:
            res = gb.median("income", epsilon=epsilon)
    seconds = time.perf_counter() - start
    values = {str(k): {c: float(res.loc[k, c]) for c in COLUMNS[query]} for k in res.index}
    return values, seconds


def errors(runs, truth, query):
    """RMSE per column over the runs and the regions, and the mean number of regions released."""
    out = {}
    for column in COLUMNS[query]:
        sq = [(values[k][column] - truth[k][TRUTH[column]]) ** 2
              for values in runs for k in values
              if k in truth and values[k][column] is not None
              and not math.isnan(truth[k][TRUTH[column]])]
        out[column] = math.sqrt(sum(sq) / len(sq)) if sq else math.nan
    return out, float(np.mean([len(values) for values in runs]))


def run_size(n_rows, n_seeds, args, rows_per_person=1):
    n_people = max(n_rows // rows_per_person, 1)
    df = make_table(n_rows, n_people, args.regions, seed=0)
    keys = public_keys(args.regions)
    truth = exact_answers(df, keys)
    print(f"\n## {n_rows:,} rows, {n_people:,} people, {args.regions} regions, "
          f"epsilon={args.epsilon}, delta={args.delta}, {n_seeds} seeds")
    header = f"{'query':5s} {'library':10s} {'time (s)':>9s} {'x skdp':>7s}  " + \
        "  ".join(f"{'rmse ' + c:>20s}" for c in ["count", "income_mean", "age_mean",
                                                    "income_median"]) + "  regions"
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        path = save_table(df, os.path.join(tmp, "table.npz"), keys)
        for query in args.queries:
            results = {}
            runs, times = [], []
            for seed in range(n_seeds):
                values, seconds = skdp_query(df, keys, query, args.epsilon, args.delta, seed)
                runs.append(values)
                times.append(seconds)
            results["skdp"] = (runs, times)
            for peer in args.peers:
                if peer == "tumult" and n_rows > args.tumult_max_rows:
                    continue
                runs, times = [], []
                for seed in range(min(n_seeds, args.peer_seeds or n_seeds)):
                    out = run_analysis_peer(peer, path, query, args.epsilon, args.delta,
                                            seed=seed, threads=args.threads)
                    if out is None or out.get("values") is None:
                        break
                    runs.append({k: v for k, v in out["values"].items()})
                    times.append(out["seconds"])
                if runs:
                    results[peer] = (runs, times)
            base = float(np.median(results["skdp"][1]))
            for library, (runs, times) in results.items():
                rmse, regions = errors(runs, truth, query)
                cells = "  ".join(f"{rmse.get(c, math.nan):20.4g}" for c in
                                  ["count", "income_mean", "age_mean", "income_median"])
                t = float(np.median(times))
                print(f"{query:5s} {library:10s} {t:9.3f} {t / base:7.1f}  {cells}  "
                      f"{regions:7.1f}", flush=True)


def _lazy_partition(i, rows, n_regions):
    """Partition i of the lazily generated table: one row per person, ids unique overall."""
    df = make_table(rows, rows, n_regions, seed=1000 + i)
    df["person"] = df["person"] + i * rows
    df.attrs = {}
    return df


def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_dask(n_rows, args):
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    part_rows = 10**6
    n_parts = max(n_rows // part_rows, 1)
    keys = public_keys(args.regions)
    print(f"\n## dask: {n_parts * part_rows:,} rows generated lazily in {n_parts} partitions "
          f"on a LocalCluster of 2 worker processes x 1 thread, epsilon={args.epsilon}")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        meta = _lazy_partition(0, 10, args.regions).iloc[:0]
        ddf = dd.from_map(_lazy_partition, range(n_parts), rows=part_rows,
                          n_regions=args.regions, meta=meta)
        for query in [q for q in args.queries if q != "e"]:
            start = time.perf_counter()
            t = PrivateTable(ddf, bounds=BOUNDS, delta=args.delta, random_state=0)
            gb = t.groupby("region", keys=keys)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SmallGroupWarning)
                if query == "a":
                    gb.count(epsilon=args.epsilon)
                elif query == "b":
                    gb.mean("income", epsilon=args.epsilon)
                elif query == "c":
                    gb.agg({"income": "mean", "age": ["count", "mean"]}, epsilon=args.epsilon)
                else:
                    gb.median("income", epsilon=args.epsilon)
            seconds = time.perf_counter() - start
            workers = client.run(_peak_rss_mb)
            print(f"{query:5s} skdp-dask  {seconds:9.1f} s   peak RSS client "
                  f"{_peak_rss_mb():.0f} MB, workers "
                  + ", ".join(f"{v:.0f} MB" for v in workers.values()), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", type=float, default=[1e5, 1e6])
    parser.add_argument("--seeds", nargs="*", type=int, default=[10, 5],
                        help="seeds per size (the last one repeats)")
    parser.add_argument("--peer-seeds", type=int, default=None,
                        help="at most this many seeds for the peers (default: as skdp)")
    parser.add_argument("--peers", nargs="*", default=["opendp", "pipelinedp", "tumult"])
    parser.add_argument("--queries", nargs="*", default=list(COLUMNS))
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--regions", type=int, default=20)
    parser.add_argument("--tumult-max-rows", type=float, default=1e6,
                        help="Tumult (Spark) only up to this many rows")
    parser.add_argument("--multi-rows", action="store_true",
                        help="also time a table with 4 rows per person on average")
    parser.add_argument("--dask-rows", type=float, default=None)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"threads: {_threads.describe()}")
    for i, size in enumerate(args.sizes):
        seeds = args.seeds[min(i, len(args.seeds) - 1)]
        run_size(int(size), seeds, args)
        if args.multi_rows:
            run_size(int(size), seeds, args, rows_per_person=4)
    if args.dask_rows:
        run_dask(int(args.dask_rows), args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
