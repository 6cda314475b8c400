"""Fit time with ``secure=False`` and ``secure=True`` (the OS CSPRNG).

Run ``python benchmarks/bench_secure.py [--threads 1]``: 20,000 rows of 10
features, 7 fits of each, interleaved; the minimum is the least disturbed by
other jobs on a shared machine. ``--threads`` (default 1) sets
``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and ``MKL_NUM_THREADS`` before
numpy is imported, and the fits run inside ``threadpoolctl.threadpool_limits``
(benchmarks/_threads.py). Quoted in docs/user_guide/floating_point.rst
(section "Secure randomness").
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _threads  # noqa: E402

THREADS = _threads.set_thread_variables()  # before numpy is imported

import time  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

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
    print(f"threads = {THREADS}, load average at start {os.getloadavg()[0]:.2f}")
    with threadpool_limits(limits=THREADS):
        main()
        print(_threads.describe())
    print(f"load average at end {os.getloadavg()[0]:.2f}")
