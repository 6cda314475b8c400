"""The boosting on dask with a categorical feature, against the same column taken as numeric.

``--rows`` rows of ``--features`` numeric N(0, 1) features and one feature of
``--categories`` categories (a tenth missing), whose effect on the binary target
is not monotone in its code. The rows are a dask DataFrame of ``--partitions``
partitions, persisted on a LocalCluster of 2 one-thread worker processes (so
each pass reads memory, and the time is the passes' own). Fitted in
interleaved rounds, the same seed, ε = 1, public bounds:

- ``dtype``: the column has a pandas Categorical dtype with known categories
  (each chunk's codes from a table of the dtype's categories);
- ``mask``: the column holds the numbers 0, ..., c − 1 (NaN: missing), made
  categorical by ``categorical_features`` and ``categories``
  (:func:`skdp.tree._categorical.category_codes` on each chunk);
- ``numeric``: the same numbers as a numeric feature (no codes: the cost of a
  pass without a categorical feature);
- ``memory``: the ``dtype`` rows fitted in memory (the client's process).

Prints each fit's time and its ratio to ``numeric`` in the same round (the
rounds alternate the order of the variants), and the accuracy on another draw
of the rows. Usage::

    python benchmarks/bench_dask_categorical.py                  # 10^6 rows, 2 rounds
    python benchmarks/bench_dask_categorical.py --rows 100000 --rounds 1
    python benchmarks/bench_dask_categorical.py --codes    # one partition's codes, no cluster

``--codes`` times, in this process, what the categorical feature adds to each
chunk of each pass: one partition's float rows with their codes (``dtype``
and ``mask``) against the numeric partition's float rows (``numeric``), the
fastest of 20 calls, variants interleaved.

Not run in CI. Results in docs/benchmarks.md.
"""

import argparse
import time

import numpy as np

VARIANTS = ("dtype", "mask", "numeric", "memory")


def _rows(n, d, c, seed):
    """The numeric features, the category codes (c: missing) and the binary target."""
    rng = np.random.default_rng(seed)
    X = rng.normal(0.0, 1.0, size=(n, d))
    code = np.where(rng.random(n) < 0.1, c, rng.integers(0, c, n))
    effect = np.random.default_rng(0).normal(0.0, 1.0, c + 1)[code]  # same for every draw
    y = (X[:, 0] + effect + rng.normal(0.0, 1.0, n) > 0).astype(int)
    return X, code, y


def _frame(X, code, c, kind):
    import pandas as pd

    columns = {f"x{j}": X[:, j] for j in range(X.shape[1])}
    numbers = np.where(code == c, np.nan, code.astype(float))
    if kind == "dtype":
        names = [f"k{k}" for k in range(c)]
        values = np.array(names + [None], dtype=object)[code]
        columns["cat"] = pd.Categorical(values, categories=names)
    else:
        columns["cat"] = numbers
    return pd.DataFrame(columns)


def _model(kind, c, d):
    from skdp.ensemble import DPHistGradientBoostingClassifier

    params = dict(classes=[0, 1], bounds=(-4, 4), random_state=0)
    if kind == "mask":
        params.update(categorical_features=[d], categories=[list(range(c))])
    elif kind == "numeric":
        params.update(categorical_features=None)
    return params, DPHistGradientBoostingClassifier


def _codes_times(args):
    from skdp.ensemble._hist_gradient_boosting._lazy_categorical import _frame_codes

    n, d, c = args.rows // args.partitions, args.features, args.categories
    X, code, _ = _rows(n, d, c, seed=1)
    mask = np.arange(d + 1) == d
    frames = {kind: _frame(X, code, c, kind) for kind in ("dtype", "mask")}
    calls = {"dtype": lambda: _frame_codes(frames["dtype"], mask,
                                           [None] * d + [[f"k{k}" for k in range(c)]]),
             "mask": lambda: _frame_codes(frames["mask"], mask, [None] * d + [list(range(c))]),
             "numeric": lambda: frames["mask"].to_numpy(dtype=np.float64)}
    best = dict.fromkeys(calls, np.inf)
    for _ in range(20):
        for kind, call in calls.items():
            start = time.perf_counter()
            call()
            best[kind] = min(best[kind], time.perf_counter() - start)
    print(f"one partition of {n} rows x {d + 1} columns, fastest of 20 calls")
    for kind, seconds in best.items():
        print(f"{kind}: {1e3 * seconds:.2f} ms")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10**6)
    parser.add_argument("--features", type=int, default=5)
    parser.add_argument("--categories", type=int, default=12)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--max-iter", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--codes", action="store_true",
                        help="time one partition's codes in this process, then stop")
    args = parser.parse_args(argv)
    if args.codes:
        _codes_times(args)
        return

    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    n, d, c = args.rows, args.features, args.categories
    X, code, y = _rows(n, d, c, seed=1)
    X_test, code_test, y_test = _rows(200_000, d, c, seed=2)
    frames = {kind: _frame(X, code, c, kind) for kind in ("dtype", "mask")}
    frames["numeric"] = frames["mask"]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        lazy = {kind: client.persist(dd.from_pandas(frame, npartitions=args.partitions))
                for kind, frame in frames.items()}
        y_lazy = client.persist(dd.from_pandas(
            frames["dtype"].assign(y=y), npartitions=args.partitions)["y"])
        for kind in ("dtype", "mask"):  # not timed: the workers import skdp and pandas
            params, estimator = _model(kind, c, d)
            estimator(max_iter=1, **params).fit(lazy[kind], y_lazy)
        print(f"{n} rows x ({d} numeric + 1 categorical of {c} categories), "
              f"{args.partitions} partitions, max_iter={args.max_iter}")
        print("round | variant | fit (s) | / numeric | test accuracy")
        for r in range(args.rounds):
            times, accuracy = {}, {}
            order = VARIANTS if r % 2 == 0 else VARIANTS[::-1]  # rounds alternate the order
            for kind in order:
                params, estimator = _model("dtype" if kind == "memory" else kind, c, d)
                model = estimator(max_iter=args.max_iter, **params)
                start = time.perf_counter()
                if kind == "memory":
                    model.fit(frames["dtype"], y)
                else:
                    model.fit(lazy[kind], y_lazy)
                times[kind] = time.perf_counter() - start
                test = _frame(X_test, code_test, c, "dtype" if kind == "memory" else kind)
                accuracy[kind] = float(np.mean(model.predict(test) == y_test))
            for kind in order:
                print(f"{r + 1} | {kind} | {times[kind]:.1f} | "
                      f"{times[kind] / times['numeric']:.2f} | {accuracy[kind]:.4f}",
                      flush=True)

if __name__ == "__main__":
    main()
