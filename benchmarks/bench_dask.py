"""skdp's estimators fitted on dask arrays generated lazily, on a LocalCluster of 2 workers.

For each estimator: the time of the dask fit on ``--rows`` rows (generated chunk by chunk
on the workers, never held whole), the peak resident memory of each worker during it (the
peak is reset before each fit, so it is that fit's), and the test score of
the model next to that of the same estimator fitted in memory on the first ``--sample``
rows, and next to dask-ml's non-private estimator fitted on the same dask rows on the same
cluster (when dask-ml is installed: ``pip install dask-ml``). The test rows are another
draw of the same distribution. DPKMeans (against dask-ml's KMeans, k-means|| seeding) runs
on rows drawn about 5 centres; its score is the test rows' mean squared distance to the
nearest centre (lower is better; the true centres give about ``--features``). Usage::

    python benchmarks/bench_dask.py                       # 10^7 rows x 10 features
    python benchmarks/bench_dask.py --rows 100000000      # 10^8 rows: 8 GB as float64
    python benchmarks/bench_dask.py --only DPLinearRegression --rows 1000000
    python benchmarks/bench_dask.py --only DPKMeans --rounds 2   # skdp, dask-ml, skdp, dask-ml
    python benchmarks/bench_dask.py --only DPHistGradientBoostingClassifier \
        DPHistGradientBoostingRegressor --rows 1000000   # no peer: dask-ml has no boosting

``--row-blocks`` times instead each pass's graph as skdp builds it (where X and y share
tasks, the chunks' delayed blocks unfused, so that those tasks run once; else fused array by
array) against the graph always fused array by array (the code before: the shared tasks
copied into both), and against it always unfused, in interleaved rounds, for
DPGaussianNB and DPLinearRegression on two sources: the lazily drawn rows above (y computed
from X) and a Parquet folder written to a temporary folder and read with
``dask.dataframe.read_parquet`` (X its feature columns, y its target column)::

    python benchmarks/bench_dask.py --row-blocks --rows 4000000 --rounds 3

Not run in CI. Results in docs/benchmarks.md.
"""

import argparse
import resource
import time

import numpy as np
from _scores import inertia

WEIGHTS_SEED, TRAIN_SEED, TEST_SEED = 0, 1, 2
N_CLUSTERS = 5
UNSUPERVISED = ("scaler", "clustering")


def _weights(d):
    return np.random.default_rng(WEIGHTS_SEED).normal(0.0, 1.0, d) / np.sqrt(d)


def _centres(d):
    """The clusters' centres of the clustering rows: N_CLUSTERS uniform points in [-2, 2]^d."""
    return np.random.default_rng(WEIGHTS_SEED).uniform(-2.0, 2.0, (N_CLUSTERS, d))


def _rows(n, d, chunk, seed, task):
    """X ~ N(0, I) and the target of ``task``, both lazy (chunks drawn on the workers).

    For ``task="clustering"``, X is N(0, I) about one of :func:`_centres` drawn uniformly
    for each row, and the target is the row's cluster.
    """
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.normal(0.0, 1.0, size=(n, d), chunks=(chunk, d))
    if task == "clustering":
        labels = rng.integers(0, N_CLUSTERS, size=n, chunks=chunk)
        onehot = (labels[:, None] == np.arange(N_CLUSTERS)).astype(float)
        return X + onehot @ _centres(d), labels
    score = X @ _weights(d)
    noise = rng.normal(0.0, 1.0, size=n, chunks=chunk)
    if task == "regression":
        return X, score + 0.5 * noise
    return X, (score + noise > 0).astype(np.int64)


def _reset_peak():
    """Reset this process's peak resident memory (Linux: VmHWM, reset by clear_refs 5); warm up."""
    import skdp.cluster  # noqa: F401  (imported before the timed fit, in every worker)
    import skdp.ensemble  # noqa: F401
    import skdp.linear_model  # noqa: F401
    import skdp.naive_bayes  # noqa: F401
    import skdp.preprocessing  # noqa: F401

    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _peak_rss():
    """This process's peak resident memory (bytes) since :func:`_reset_peak`."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _score(model, X, y, task):
    if task == "clustering":  # the test rows' mean squared distance to the nearest centre
        return inertia(X, model.cluster_centers_) / len(X)
    pred = model.predict(X)
    pred = np.asarray(pred.compute() if hasattr(pred, "compute") else pred)  # dask-ml's: lazy
    if task == "regression":
        return 1.0 - np.mean((pred - y) ** 2) / np.var(y)
    return float(np.mean(pred == y))


def _cases(d):
    from skdp.cluster import DPKMeans
    from skdp.ensemble import DPHistGradientBoostingClassifier, DPHistGradientBoostingRegressor
    from skdp.linear_model import DPLinearRegression, DPLogisticRegression
    from skdp.naive_bayes import DPGaussianNB
    from skdp.preprocessing import DPStandardScaler

    bounds = (-4.0, 4.0)
    cases = {
        "DPStandardScaler": ("scaler", lambda: DPStandardScaler(bounds=bounds, epsilon=1.0,
                                                                random_state=0),
                             ("dask_ml.preprocessing", "StandardScaler", {})),
        "DPGaussianNB": ("classification",
                         lambda: DPGaussianNB(bounds=bounds, classes=[0, 1], epsilon=1.0,
                                              random_state=0),
                         ("dask_ml.naive_bayes", "GaussianNB", {})),
        "DPLinearRegression": ("regression",
                               lambda: DPLinearRegression(bounds_X=bounds, bounds_y=(-8, 8),
                                                          epsilon=1.0, random_state=0),
                               ("dask_ml.linear_model", "LinearRegression",
                                {"solver": "lbfgs", "max_iter": 20})),
        "DPLogisticRegression": ("classification",
                                 lambda: DPLogisticRegression(bounds_X=bounds, classes=[0, 1],
                                                              epsilon=1.0, max_iter=20,
                                                              random_state=0),
                                 ("dask_ml.linear_model", "LogisticRegression",
                                  {"solver": "lbfgs", "max_iter": 20})),
        "DPKMeans": ("clustering",
                     lambda: DPKMeans(N_CLUSTERS, bounds=(-6.0, 6.0), epsilon=1.0,
                                      random_state=0),
                     ("dask_ml.cluster", "KMeans", {"n_clusters": N_CLUSTERS,
                                                    "random_state": 0})),
        # no dask-ml peer: a pass over the chunks per tree level and per tree's leaves
        "DPHistGradientBoostingClassifier": (
            "classification", lambda: DPHistGradientBoostingClassifier(
                bounds=bounds, classes=[0, 1], epsilon=1.0, random_state=0), None),
        "DPHistGradientBoostingRegressor": (
            "regression", lambda: DPHistGradientBoostingRegressor(
                bounds=bounds, bounds_y=(-8, 8), epsilon=1.0, random_state=0), None),
    }
    return cases


def _peer(spec):
    import importlib

    if spec is None:
        return None
    module, name, params = spec
    try:
        return getattr(importlib.import_module(module), name)(**params)
    except ImportError:
        return None


def _fit_on_cluster(client, make, X, y, task):
    client.run(_reset_peak)
    start = time.perf_counter()
    model = make().fit(X) if task in UNSUPERVISED else make().fit(X, y)
    seconds = time.perf_counter() - start
    peaks = client.run(_peak_rss)
    return model, seconds, max(peaks.values())


def _fused_row_blocks(a, optimize_graph=True):
    """The row blocks as skdp made them before: each array's graph fused on its own."""
    blocks = a.to_delayed()
    return list(blocks.reshape(blocks.shape[0], -1)[:, 0])


def _unfused_row_blocks(a, optimize_graph=True):
    """The row blocks of every array's graph unfused, shared tasks or not."""
    blocks = a.to_delayed(optimize_graph=False)
    return list(blocks.reshape(blocks.shape[0], -1)[:, 0])


def _parquet_rows(n, d, chunk, seed, folder):
    """The regression rows of :func:`_rows` written to Parquet, then read back lazily."""
    import dask.dataframe as dd

    X, y = _rows(n, d, chunk, seed, "regression")
    columns = [f"x{j}" for j in range(d)]
    frame = dd.concat([dd.from_dask_array(X, columns=columns),
                       dd.from_dask_array(y, columns=["y"])], axis=1)
    frame.to_parquet(folder, write_index=False)
    frame = dd.read_parquet(folder)
    return frame[columns], frame["y"]


def row_blocks(args):
    """``--row-blocks``: a fit's passes as skdp builds them, always fused (before), always unfused."""
    import os
    import tempfile

    import distributed

    from skdp.linear_model import DPLinearRegression
    from skdp.naive_bayes import DPGaussianNB
    from skdp.utils import _rows as rows_module

    now = rows_module._row_blocks
    n, d, chunk = args.rows, args.features, args.chunk_rows
    bounds = (-4.0, 4.0)
    makes = {"DPGaussianNB": lambda: DPGaussianNB(bounds=bounds, classes=[0, 1], random_state=0),
             "DPLinearRegression": lambda: DPLinearRegression(bounds_X=bounds,
                                                              bounds_y=(-8.0, 8.0),
                                                              random_state=0)}
    print(f"{n:,} rows x {d} features, chunks of {chunk:,} rows; LocalCluster of 2 workers x 1 "
          f"thread; {args.rounds} interleaved rounds (fused, now, unfused); load "
          f"{os.getloadavg()[0]:.1f}")
    print("| source | estimator | fused per array (s), the code before | now (s) | now / fused "
          "| always unfused (s) | unfused / fused | same model |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder, \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     memory_limit=args.memory_limit, dashboard_address=None,
                                     silence_logs=40) as cluster, distributed.Client(cluster):
        sources = {"drawn (y from X)": lambda task: _rows(n, d, chunk, TRAIN_SEED, task),
                   "Parquet": lambda task: _parquet_rows(n, d, chunk, TRAIN_SEED, folder + "/"
                                                         + task)}
        for source, make_rows in sources.items():
            for name, make in makes.items():
                task = "classification" if name == "DPGaussianNB" else "regression"
                X, y = make_rows(task)
                if source == "Parquet" and task == "classification":
                    y = (y > 0).astype("int64")
                times = {"fused": [], "now": [], "unfused": []}
                models = {}
                for _ in range(args.rounds):
                    for variant, blocks in (("fused", _fused_row_blocks), ("now", now),
                                            ("unfused", _unfused_row_blocks)):
                        rows_module._row_blocks = blocks
                        try:
                            start = time.perf_counter()
                            models[variant] = make().fit(X, y)
                            times[variant].append(time.perf_counter() - start)
                        finally:
                            rows_module._row_blocks = now
                attr = "theta_" if name == "DPGaussianNB" else "coef_"
                same = all(np.allclose(getattr(models["fused"], attr),
                                       getattr(models[v], attr), rtol=1e-9, atol=1e-12)
                           for v in ("now", "unfused"))
                fused, current, unfused = (np.median(times[v]) for v in times)
                print(f"| {source} | {name} | {fused:.1f} | {current:.1f} | "
                      f"{current / fused:.2f} | {unfused:.1f} | {unfused / fused:.2f} | "
                      f"{same} |", flush=True)
                print("  rounds: " + "; ".join(
                    f"{v} " + ", ".join(f"{t:.1f}" for t in ts) for v, ts in times.items())
                    + f"; load now {os.getloadavg()[0]:.1f}", flush=True)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10**7)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--sample", type=int, default=10**6)
    parser.add_argument("--test-rows", type=int, default=200_000)
    parser.add_argument("--memory-limit", default="3GB", help="per worker")
    parser.add_argument("--only", nargs="*", help="estimators to run (default: all)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="fits of each estimator and of its peer, interleaved; the table "
                             "shows the fastest")
    parser.add_argument("--row-blocks", action="store_true",
                        help="time the passes' unfused graphs against graphs fused array by "
                             "array (see the module docstring)")
    args = parser.parse_args(argv)
    if args.row_blocks:
        return row_blocks(args)
    import os

    import distributed

    n, d, chunk = args.rows, args.features, args.chunk_rows
    cases = _cases(d)
    names = args.only or list(cases)
    print(f"{n:,} rows x {d} features ({n * d * 8 / 1e9:.1f} GB as float64), chunks of "
          f"{chunk:,} rows ({chunk * d * 8 / 1e6:.0f} MB); LocalCluster of 2 workers x 1 "
          f"thread, memory limit {args.memory_limit} each; in-memory sample {args.sample:,} "
          f"rows; load {os.getloadavg()[0]:.1f}")
    header = ("| estimator | dask fit (s) | peak RSS per worker (MB) | test score, dask fit | "
              f"test score, in-memory fit on {args.sample:,} rows | dask-ml fit (s) | "
              "dask-ml peak RSS (MB) | dask-ml test score |")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  memory_limit=args.memory_limit, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        for name in names:
            task, make, peer_spec = cases[name]
            kind = "classification" if task == "scaler" else task
            X, y = _rows(n, d, chunk, TRAIN_SEED, kind)
            X_test, y_test = (np.asarray(a) for a in _rows(args.test_rows, d, chunk, TEST_SEED,
                                                           kind))
            rounds, peer_rounds = [], []
            for _ in range(args.rounds):  # interleaved: skdp's fit, then dask-ml's
                model, seconds, peak = _fit_on_cluster(client, make, X, y, task)
                rounds.append((seconds, peak))
                peer = _peer(peer_spec)
                if peer is not None:
                    _, peer_seconds, peer_peak = _fit_on_cluster(client, lambda: peer, X, y,
                                                                 task)
                    peer_rounds.append((peer_seconds, peer_peak))
            X_sample, y_sample = (np.asarray(a) for a in (X[:args.sample], y[:args.sample]))
            start = time.perf_counter()
            small = (make().fit(X_sample) if task in UNSUPERVISED
                     else make().fit(X_sample, y_sample))
            small_seconds = time.perf_counter() - start
            if task == "scaler":  # the score of a scaler: max |mean error| + |std error|
                score = f"{np.max(np.abs(model.mean_)) + np.max(np.abs(model.scale_ - 1)):.2e}"
                small_score = (f"{np.max(np.abs(small.mean_)) + np.max(np.abs(small.scale_ - 1)):.2e}")
            else:
                score = f"{_score(model, X_test, y_test, task):.4f}"
                small_score = f"{_score(small, X_test, y_test, task):.4f}"
            peer_cells = ["-", "-", "-"]
            if peer_rounds:
                if task == "scaler":
                    peer_score = (f"{np.max(np.abs(np.asarray(peer.mean_))) + np.max(np.abs(np.asarray(peer.scale_) - 1)):.2e}")
                else:
                    peer_score = f"{_score(peer, X_test, y_test, task):.4f}"
                peer_cells = [f"{min(t for t, _ in peer_rounds):.1f}",
                              f"{max(m for _, m in peer_rounds) / 1e6:.0f}", peer_score]
            seconds, peak = min(t for t, _ in rounds), max(m for _, m in rounds)
            print(f"| {name} | {seconds:.1f} | {peak / 1e6:.0f} | {score} | {small_score} | "
                  + " | ".join(peer_cells) + " |", flush=True)
            print(f"  in-memory fit of {name} on {args.sample:,} rows in this process: "
                  f"{small_seconds:.1f} s", flush=True)
            if args.rounds > 1:  # the table shows the fastest round and the highest peak
                print(f"  rounds of {name}: skdp " + ", ".join(f"{t:.1f} s" for t, _ in rounds)
                      + "; dask-ml " + ", ".join(f"{t:.1f} s" for t, _ in peer_rounds)
                      + f"; load now {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
