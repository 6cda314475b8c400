"""The peers of the table-query benchmark: one group-by query, answered in a peer's venv.

Run by the interpreter of a peer's venv (benchmarks/_peers.py; ``python
benchmarks/setup_peers.py opendp pipeline-dp tumult`` creates them), one query per process::

    python _analysis_peers.py --peer opendp|pipelinedp|tumult --table PATH --query a|b|c|d|e \\
        --epsilon E --delta D --seed S --max-groups G --max-rows R [--threads N] [--keys K,...]

It prints one JSON line, ``{"values": {group: {column: value}}, "seconds": t}``: the released
values per region and the wall time of the query alone, from the library's first object
(context, accountant, session) to its released table, without the imports, the file read or
putting the columns into the library's input form (a polars LazyFrame, a list of row tuples,
a cached Spark DataFrame). A value the library releases as undefined (a mean over a noisy
count <= 0) is ``null``. A query the peer cannot answer prints
``{"values": null, "seconds": null, "unsupported": reason}`` (none so far). From the
benchmark's process, :func:`run_analysis_peer` runs this file in the peer's venv.

The table (benchmarks/_analysis_data.py, ``.npz`` or ``.parquet``): ``person`` (int64, the
privacy unit), ``region`` (str), ``age`` (float, public bounds (18, 90)), ``income`` (float,
public bounds (0, 200000), NaN or null where missing). The public region keys come from the
file (``public_region_keys``, written by ``_analysis_data.save_table``) or from ``--keys``.

The queries, each at one total (ε, δ), privacy unit = person, at most G regions per person
and R rows per person and region (the contribution bounds; rows over them are dropped):

    a  count of rows per region, public keys                -> {"count"}
    b  mean income per region (missing incomes skipped)     -> {"income_mean"}
    c  a, b and mean age per region, one budget            -> {"count", "income_mean", "age_mean"}
    d  median income per region                             -> {"income_median"}
    e  count of rows per region, keys chosen privately      -> {"count"} for the released keys

How each peer answers them, and how it spends (ε, δ) (each peer's own recommended way):

- OpenDP 0.16.0, Polars API: ``dp.Context.compositor`` with ``unit_of(contributions=1,
  identifier="person")`` and ``loss_of(epsilon, delta)`` (Laplace noise; δ is only used to
  choose keys), one query. Public keys: ``.with_keys`` (a join with the key set; OpenDP
  imputes a key with no row). Contribution bounds: ``truncate_per_group(R, by=["region"])``,
  then for R = 1 ``truncate_per_group(G)`` (G rows per person in all, so at most G regions,
  which OpenDP accounts as G), and for R > 1 ``truncate_num_groups(G + 1, keep="first")``:
  in 0.16.0 ``truncate_num_groups(k)`` keeps k - 1 regions per person (its filter is
  ``rank("dense") < k`` and polars' dense rank starts at 1) while the noise is calibrated
  for k, so G + 1 is what keeps G regions, and its noise is that of G + 1 regions; its
  default ``keep="sample"`` fails on a one-column ``by`` (duplicate struct field
  "region"), hence ``keep="first"`` (the alphabetically first regions of a person).
  Every noisy aggregate of one query gets the same share of ε (OpenDP solves one global
  noise scale): a: one count; b: a sum of incomes and a count of the non-missing incomes
  (rows with a missing income filtered out first), ε/2 each, mean = sum / count (the
  docs' recommendation when the row count is not public); c: count, income sum (missing
  as 0), count of non-missing incomes, age sum, ε/4 each (age mean = age sum / count);
  sums are of values rounded to whole units (currency units, years), as OpenDP's docs
  do: the noise of its float sums grows with the public ``max_length`` (the rounding
  error of a float sum enters the sensitivity: at max_length 10^8 about 50 times the
  integer sum's noise); d: ``dp.median`` over 401 candidates 0, 500, ..., 200000
  (exponential mechanism, all of ε), rows with an income; e: ``group_by().agg(dp.len())``
  without keys: Laplace counts with all of ε, released where above a threshold that spends
  δ. At ε >= about 7 OpenDP's own threshold search fails ("threshold must be greater
  than 1"); the script then gives the threshold in the query (see
  :func:`_opendp_threshold_release`). ``resolve`` (the search for the noise scale) is
  most of OpenDP's time here: about 0.85 s of the 1.1 s of query a on 10^5 rows.
  OpenDP's noise comes from its own secure generator: ``--seed`` only seeds polars'
  sampling of rows.
- PipelineDP 0.3.1: ``DPEngine(NaiveBudgetAccountant(ε, δ), LocalBackend())``,
  ``AggregateParams(max_partitions_contributed=G, max_contributions_per_partition=R)``,
  Laplace noise (the default; δ is only used to choose keys), ``public_partitions=keys``.
  The accountant splits ε equally between the mechanisms of the pipeline: a: COUNT (ε);
  b: MEAN (a noisy count and a noisy sum, ε/2 each), rows with a missing income removed
  first (PipelineDP would turn them into a NaN mean); c: one value per aggregation, so
  two aggregations: MEAN of incomes (rows with an income) and COUNT + MEAN of ages (all
  rows; COUNT reuses the mean's noisy count), ε/4 for each of the four noisy values;
  d: PERCENTILE(50) (Google's quantile tree, ε), rows with an income; e: COUNT without
  public partitions: ε/2 to the partition selection (truncated geometric, all of δ) and
  ε/2 to the count. The noise comes from PyDP's secure generator: ``--seed`` seeds
  NumPy's global generator, which PipelineDP uses to sample contributions.
- Tumult Analytics 0.21.0 (pyspark 3.5, local[N]; needs a Java 17 runtime, and its Spark
  warehouse goes to a temporary folder, removed at the end): ``Session.from_dataframe`` with
  ``ApproxDPBudget(ε, δ)`` and ``AddRowsWithID("person")``; each query enforces
  ``MaxGroupsPerID("region", G)`` and ``MaxRowsPerGroupPerID("region", R)``; public keys
  are a ``KeySet``. One aggregation per query, so the session is split between queries:
  a: ``count`` (ε); b: ``average`` (ε; Tumult drops missing incomes, splits it between a
  sum and a count); c: count, average income, average age, ε/3 each; d: ``median`` (ε);
  e: ``get_groups`` (ε/2 and all of δ) then ``count`` on the released keys (ε/2).
  Noise from tmlt.core's secure generator: ``--seed`` changes nothing.
"""

import argparse
import atexit
import json
import math
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _threads  # noqa: E402  (standard library only: safe in every venv)

# CLI name -> venv name (benchmarks/_peers.py)
PEER_VENVS = {"opendp": "opendp", "pipelinedp": "pipeline-dp", "tumult": "tumult"}
QUERIES = {
    "a": "count per region, public keys",
    "b": "mean income per region, public keys",
    "c": "count + mean income + mean age per region, one budget, public keys",
    "d": "median income per region, public keys",
    "e": "count per region, keys chosen privately",
}
AGE_BOUNDS = (18.0, 90.0)
INCOME_BOUNDS = (0.0, 200_000.0)
KEYS_ENTRY = "public_region_keys"
# OpenDP's median: candidates every 500 on the income bounds (401 of them)
MEDIAN_CANDIDATES = [500.0 * i for i in range(401)]
# OpenDP needs a public bound on the number of rows of a group (overflow of its integer
# sums); 10^8 is loose for any table of this benchmark.
OPENDP_MAX_LENGTH = 10**8


# ---------------------------------------------------------------------------- the table

def read_table(path):
    """The columns of the table at ``path`` as numpy arrays, and its public keys (or None).

    ``.npz``: numpy alone; ``.parquet``: pyarrow (in every peer venv). Missing incomes come
    back as NaN whatever the file held (NaN or null).
    """
    import numpy as np

    if path.endswith(".npz"):
        with np.load(path) as data:
            columns = {name: data[name] for name in ("person", "region", "age", "income")}
            keys = data[KEYS_ENTRY].tolist() if KEYS_ENTRY in data.files else None
    elif path.endswith(".parquet"):
        import pyarrow.parquet as pq

        table = pq.read_table(path, columns=["person", "region", "age", "income"])
        columns = {name: table.column(name).to_numpy(zero_copy_only=False)
                   for name in table.column_names}
        attrs = (table.schema.metadata or {}).get(b"PANDAS_ATTRS")
        keys = json.loads(attrs).get(KEYS_ENTRY) if attrs else None
    else:
        raise ValueError(f"{path}: expected a .npz or .parquet table")
    columns["person"] = np.asarray(columns["person"], dtype=np.int64)
    columns["region"] = np.asarray(columns["region"]).astype(str)
    columns["age"] = np.asarray(columns["age"], dtype=np.float64)
    columns["income"] = np.asarray(columns["income"], dtype=np.float64)  # None -> NaN
    return columns, keys


def _number(value):
    """A released value as a JSON number, None where it is undefined (None, NaN, inf)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _ratio(numerator, denominator):
    """A mean from a noisy sum and a noisy count; None where the count is not positive."""
    if numerator is None or denominator is None or not denominator > 0:
        return None
    return float(numerator) / float(denominator)


# ---------------------------------------------------------------------------- OpenDP

def run_opendp(columns, keys, query, epsilon, delta, max_groups, max_rows, seed, threads):
    os.environ["POLARS_MAX_THREADS"] = str(threads)  # before polars starts its pool
    import polars as pl
    import opendp.prelude as dp

    dp.enable_features("contrib")
    pl.set_random_seed(seed)  # the row sampling of truncate_per_group; not OpenDP's noise
    data = pl.LazyFrame({
        "person": columns["person"],
        "region": pl.Series(columns["region"].tolist(), dtype=pl.String),
        "age": columns["age"],
        # missing incomes as nulls: polars' missing value, which fill_null / count know
        "income": pl.Series(columns["income"], nan_to_null=True),
    })
    key_frame = pl.LazyFrame({"region": pl.Series(keys, dtype=pl.String)})

    def whole(column, bounds):
        # The DP sum of a column rounded to whole units (incomes in currency units, ages in
        # years; unbiased: x + 0.5 truncated), nulls as 0. OpenDP's docs sum integers: the
        # noise of a float sum grows with the public max_length (rounding error), about 50
        # times the integer sum's at max_length = 10^8. (.round() is not supported.)
        return ((column + 0.5).cast(pl.Int64).fill_null(0)
                .dp.sum((int(bounds[0]), int(bounds[1]))))

    def bounded(q):
        # (see the module docstring for why R = 1 and R > 1 differ)
        q = q.truncate_per_group(max_rows, by=["region"])
        if max_rows == 1:
            return q.truncate_per_group(max_groups)
        return q.truncate_num_groups(max_groups + 1, by=["region"], keep="first")

    start = time.perf_counter()
    context = dp.Context.compositor(
        data=data,
        privacy_unit=dp.unit_of(contributions=1, identifier="person"),
        privacy_loss=dp.loss_of(epsilon=epsilon, delta=delta),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=OPENDP_MAX_LENGTH)],
    )
    q = context.query()
    if query in ("b", "d"):
        q = q.filter(pl.col("income").is_not_null())
    q = bounded(q).group_by("region")
    if query in ("a", "e"):
        q = q.agg(dp.len(signed=True).alias("count"))
    elif query == "b":
        q = q.agg(whole(pl.col("income"), INCOME_BOUNDS).alias("income_sum"),
                  pl.col("income").dp.count(signed=True).alias("income_count"))
    elif query == "c":
        q = q.agg(dp.len(signed=True).alias("count"),
                  # nulls add 0 to the sum and are not counted by .count()
                  whole(pl.col("income"), INCOME_BOUNDS).alias("income_sum"),
                  pl.col("income").dp.count(signed=True).alias("income_count"),
                  whole(pl.col("age"), AGE_BOUNDS).alias("age_sum"))
    elif query == "d":
        q = q.agg(pl.col("income").dp.median(MEDIAN_CANDIDATES).alias("income_median"))
    if query != "e":
        q = q.with_keys(key_frame)
    try:
        released = q.release().collect()
    except dp.OpenDPException as exc:
        if query != "e" or "threshold must be greater than 1" not in str(exc):
            raise
        released = _opendp_threshold_release(context, q, delta, pl)
    seconds = time.perf_counter() - start

    values = {}
    for row in released.iter_rows(named=True):
        if query in ("a", "e"):
            out = {"count": _number(row["count"])}
        elif query == "b":
            out = {"income_mean": _ratio(row["income_sum"], row["income_count"])}
        elif query == "c":
            out = {"count": _number(row["count"]),
                   "income_mean": _ratio(row["income_sum"], row["income_count"]),
                   "age_mean": _ratio(row["age_sum"], row["count"])}
        else:
            out = {"income_median": _number(row["income_median"])}
        values[row["region"]] = out
    return values, seconds


def _opendp_threshold_release(context, query, delta, pl):
    """Query e when OpenDP's own threshold search fails (0.16.0, at ε >= about 7).

    At a large ε the threshold that OpenDP's ``resolve`` looks for is 1 or less, which its
    measurement refuses ("threshold must be greater than 1"). The Polars API also takes the
    threshold from the query itself (a filter ``count > T`` after the aggregation), so this
    tries T = 2, 3, 5, 9, ... and then bisects for the smallest T whose measurement, by
    OpenDP's own privacy map, spends at most δ; each try is a full ``resolve`` (about 2 s
    here), which the query's time includes.
    """
    def measurement(threshold):
        m = query.filter(pl.col("count") > threshold).resolve()
        return m if m.map(context.d_in)[1] <= delta else None

    low, high = 1, 2
    found = measurement(high)
    while found is None:
        low, high = high, 2 * high - 1
        found = measurement(high)
    while high - low > 1:
        middle = (low + high) // 2
        m = measurement(middle)
        if m is None:
            low = middle
        else:
            high, found = middle, m
    return context(found).collect()


# ---------------------------------------------------------------------------- PipelineDP

def run_pipelinedp(columns, keys, query, epsilon, delta, max_groups, max_rows, seed, threads):
    import numpy as np
    import pipeline_dp

    np.random.seed(seed)  # PipelineDP samples contributions with NumPy's global generator
    rows = list(zip(columns["person"].tolist(), columns["region"].tolist(),
                    columns["age"].tolist(), columns["income"].tolist()))
    Metrics = pipeline_dp.Metrics

    def params(metrics, bounds=None):
        low, high = bounds or (None, None)
        return pipeline_dp.AggregateParams(
            metrics=metrics, noise_kind=pipeline_dp.NoiseKind.LAPLACE,
            max_partitions_contributed=max_groups, max_contributions_per_partition=max_rows,
            min_value=low, max_value=high)

    def extractors(value_index):
        return pipeline_dp.DataExtractors(privacy_id_extractor=lambda row: row[0],
                                          partition_extractor=lambda row: row[1],
                                          value_extractor=lambda row: row[value_index])

    start = time.perf_counter()
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=delta)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    public = None if query == "e" else list(keys)
    with_income = ([row for row in rows if row[3] == row[3]]  # NaN != NaN
                   if query in ("b", "c", "d") else None)
    if query in ("a", "e"):
        results = [engine.aggregate(rows, params([Metrics.COUNT]), extractors(3),
                                    public_partitions=public)]
    elif query == "b":
        results = [engine.aggregate(with_income, params([Metrics.MEAN], INCOME_BOUNDS),
                                    extractors(3), public_partitions=public)]
    elif query == "c":
        results = [engine.aggregate(with_income, params([Metrics.MEAN], INCOME_BOUNDS),
                                    extractors(3), public_partitions=public),
                   engine.aggregate(rows, params([Metrics.COUNT, Metrics.MEAN], AGE_BOUNDS),
                                    extractors(2), public_partitions=public)]
    else:
        results = [engine.aggregate(with_income,
                                    params([Metrics.PERCENTILE(50)], INCOME_BOUNDS),
                                    extractors(3), public_partitions=public)]
    accountant.compute_budgets()  # after every aggregation is declared, before running
    results = [list(result) for result in results]  # LocalBackend is lazy: this runs it
    seconds = time.perf_counter() - start

    values = {}
    if query in ("a", "e"):
        for key, metrics in results[0]:
            values[key] = {"count": _number(metrics.count)}
    elif query == "b":
        for key, metrics in results[0]:
            values[key] = {"income_mean": _number(metrics.mean)}
    elif query == "c":
        for key, metrics in results[0]:
            values.setdefault(key, {})["income_mean"] = _number(metrics.mean)
        for key, metrics in results[1]:
            values.setdefault(key, {}).update(count=_number(metrics.count),
                                              age_mean=_number(metrics.mean))
    else:
        for key, metrics in results[0]:
            values[key] = {"income_median": _number(metrics.percentile_50)}
    return values, seconds


# ---------------------------------------------------------------------------- Tumult

def run_tumult(columns, keys, query, epsilon, delta, max_groups, max_rows, seed, threads):
    # Spark's Python workers must run this venv's interpreter (they unpickle tmlt objects)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    import pandas as pd
    from pyspark.sql import SparkSession
    from tmlt.analytics import (AddRowsWithID, ApproxDPBudget, KeySet, MaxGroupsPerID,
                                MaxRowsPerGroupPerID, QueryBuilder, Session)

    # Tumult keeps temporary tables in Spark's warehouse folder: not in the working folder
    warehouse = tempfile.mkdtemp(prefix="skdp_bench_spark_")
    atexit.register(shutil.rmtree, warehouse, ignore_errors=True)
    spark = (SparkSession.builder.master(f"local[{threads}]")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.warehouse.dir", warehouse)
             .config("spark.sql.shuffle.partitions", str(max(2, threads)))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.createDataFrame(pd.DataFrame(columns)).cache()
    frame.count()  # materialise the input before the clock starts

    start = time.perf_counter()
    session = Session.from_dataframe(privacy_budget=ApproxDPBudget(epsilon, delta),
                                     source_id="table", dataframe=frame,
                                     protected_change=AddRowsWithID(id_column="person"))
    base = (QueryBuilder("table").enforce(MaxGroupsPerID("region", max_groups))
            .enforce(MaxRowsPerGroupPerID("region", max_rows)))
    key_set = KeySet.from_dict({"region": list(keys)})
    answers = []
    if query == "a":
        answers.append(session.evaluate(base.groupby(key_set).count(name="count"),
                                        ApproxDPBudget(epsilon, 0)))
    elif query == "b":
        answers.append(session.evaluate(
            base.groupby(key_set).average("income", *INCOME_BOUNDS, name="income_mean"),
            ApproxDPBudget(epsilon, 0)))
    elif query == "c":
        share = ApproxDPBudget(epsilon / 3, 0)
        answers.append(session.evaluate(base.groupby(key_set).count(name="count"), share))
        answers.append(session.evaluate(
            base.groupby(key_set).average("income", *INCOME_BOUNDS, name="income_mean"), share))
        answers.append(session.evaluate(
            base.groupby(key_set).average("age", *AGE_BOUNDS, name="age_mean"), share))
    elif query == "d":
        answers.append(session.evaluate(
            base.groupby(key_set).median("income", *INCOME_BOUNDS, name="income_median"),
            ApproxDPBudget(epsilon, 0)))
    else:
        groups = session.evaluate(base.get_groups(["region"]), ApproxDPBudget(epsilon / 2, delta))
        answers.append(session.evaluate(
            base.groupby(KeySet.from_dataframe(groups)).count(name="count"),
            ApproxDPBudget(epsilon / 2, 0)))
    answers = [answer.toPandas() for answer in answers]
    seconds = time.perf_counter() - start

    values = {}
    for answer in answers:
        for record in answer.to_dict("records"):
            key = record.pop("region")
            values.setdefault(key, {}).update({name: _number(v) for name, v in record.items()})
    return values, seconds


RUNNERS = {"opendp": run_opendp, "pipelinedp": run_pipelinedp, "tumult": run_tumult}


# ---------------------------------------------------------------------------- command line

def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", required=True, choices=sorted(RUNNERS))
    parser.add_argument("--table", required=True,
                        help=".npz or .parquet (benchmarks/_analysis_data.py)")
    parser.add_argument("--query", required=True, choices=sorted(QUERIES))
    parser.add_argument("--epsilon", required=True, type=float)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-groups", type=int, default=1, help="regions per person (G)")
    parser.add_argument("--max-rows", type=int, default=1, help="rows per person and region (R)")
    parser.add_argument("--threads", type=int, default=1,
                        help="polars' pool (OpenDP), Spark's local[N] (Tumult); PipelineDP's "
                             "LocalBackend runs on one")
    parser.add_argument("--keys", help="the public region keys, comma-separated "
                                       "(default: the table file's public_region_keys)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    _threads.set_thread_variables(args.threads)  # before numpy is imported
    columns, keys = read_table(args.table)
    if args.keys:
        keys = args.keys.split(",")
    if keys is None and args.query != "e":
        raise SystemExit(f"{args.table} holds no {KEYS_ENTRY}: pass --keys")
    try:
        values, seconds = RUNNERS[args.peer](
            columns, keys, args.query, args.epsilon, args.delta, args.max_groups,
            args.max_rows, args.seed, args.threads)
    except NotImplementedError as exc:
        print(json.dumps({"values": None, "seconds": None, "unsupported": str(exc)}))
        return 0
    print(json.dumps({"values": dict(sorted(values.items())), "seconds": seconds}))
    return 0


# ---------------------------------------------------------------------------- from the benchmark

def run_analysis_peer(peer, table, query, epsilon, delta=1e-5, seed=0, max_groups=1,
                      max_rows=1, threads=1, keys=None):
    """Run this file in ``peer``'s venv (benchmarks/_peers.py) and return its JSON.

    ``peer`` is a CLI name (``opendp``, ``pipelinedp``, ``tumult``); ``table`` a path written
    by ``_analysis_data.save_table``. Returns ``{"values": ..., "seconds": ...}``, or None
    (with a printed note) if the peer's venv does not exist; raises RuntimeError if the
    script fails.
    """
    from _peers import peer_python, run_peer_file

    args = ["--peer", peer, "--table", os.fspath(table), "--query", query,
            "--epsilon", repr(float(epsilon)), "--delta", repr(float(delta)),
            "--seed", str(seed), "--max-groups", str(max_groups), "--max-rows", str(max_rows),
            "--threads", str(threads)]
    if keys is not None:
        args += ["--keys", ",".join(keys)]
    return run_peer_file(os.path.abspath(__file__), *args, python=peer_python(PEER_VENVS[peer]))


if __name__ == "__main__":
    sys.exit(main())
