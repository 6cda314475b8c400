"""Fit time with ``secure=False`` and ``secure=True`` (the OS CSPRNG).

Run ``python benchmarks/bench_secure.py``: 20,000 rows of 10 features, one
BLAS thread, the median (and range) of 5 fits of each. Quoted in
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


def main(n_rows=20_000, n_features=10, repeats=5):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n_rows, n_features))
    y = (X @ rng.normal(size=n_features) > 0).astype(int)
    for name, make in ESTIMATORS.items():
        for secure in (False, True):
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                make(secure).fit(X, y)
                times.append(time.perf_counter() - start)
            print(f"{name:40s} secure={secure!s:5s} median {np.median(times):.3f} s "
                  f"(min {min(times):.3f}, max {max(times):.3f})")


if __name__ == "__main__":
    main()
