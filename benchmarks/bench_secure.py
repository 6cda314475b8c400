"""Fit time with ``secure=False`` and ``secure=True`` (the OS CSPRNG).

Run ``python benchmarks/bench_secure.py``: 20,000 rows of 10 features, one
BLAS thread, 7 fits of each, interleaved; the minimum is the least disturbed by
other jobs on a shared machine. Quoted in
docs/user_guide/floating_point.rst (section "Secure randomness").
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time  # noqa: E402

import numpy as np  # noqa: E402

from skdp.linear_model import DPLogisticRegression, DPSGDClassifier  # noqa: E402

ESTIMATORS = {
    "DPSGDClassifier()": lambda secure: DPSGDClassifier(classes=[0, 1], secure=secure),
    "DPLogisticRegression(bounds_X=(-1, 1))": lambda secure: DPLogisticRegression(
        bounds_X=(-1, 1), classes=[0, 1], secure=secure),
}


def main(n_rows=20_000, n_features=10, repeats=7):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n_rows, n_features))
    y = (X @ rng.normal(size=n_features) > 0).astype(int)
    for name, make in ESTIMATORS.items():
        times = {False: [], True: []}
        for _ in range(repeats):  # interleaved, so that a change of load hits both alike
            for secure in (False, True):
                start = time.perf_counter()
                make(secure).fit(X, y)
                times[secure].append(time.perf_counter() - start)
        for secure, t in times.items():
            print(f"{name:40s} secure={secure!s:5s} min {min(t):.3f} s, median "
                  f"{np.median(t):.3f} s")
        print(f"{name:40s} ratio of the minima {min(times[True]) / min(times[False]):.2f}")


if __name__ == "__main__":
    main()
