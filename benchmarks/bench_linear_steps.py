"""Fit time of DPLinearRegression's refinement schedules, side by side in one run.

On the suite's weather and diamonds tables (benchmarks/_suite_data.py), at ε = 1, in
interleaved rounds (one fit of each contender per round), it prints the median fit time of
scikit-learn's LinearRegression, DPLinearRegression with the 8 steps of the short schedule
(``refine_steps=8``), with its default (``refine_steps="auto"``: 128 steps on these tables)
and DPSGDRegressor's default, and the ratios of the default to the others. Every contender
runs with ``--threads N`` BLAS threads (default 1; see benchmarks/_threads.py).

    python benchmarks/bench_linear_steps.py [--rounds 5] [--threads 1]
"""

import sys

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from _threads import set_thread_variables  # noqa: E402

THREADS = set_thread_variables()

import argparse  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from _suite_data import LOADERS  # noqa: E402
from _threads import describe  # noqa: E402


def contenders(seed):
    from sklearn.linear_model import LinearRegression

    from skdp.linear_model import DPLinearRegression, DPSGDRegressor

    return {
        "LinearRegression": LinearRegression(),
        "refine_steps=8": DPLinearRegression(epsilon=1.0, refine_steps=8, random_state=seed),
        "default": DPLinearRegression(epsilon=1.0, random_state=seed),
        "DPSGDRegressor": DPSGDRegressor(epsilon=1.0, random_state=seed),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"threads: {describe()}; load average {os.getloadavg()[0]:.1f}")
    for name in ("weather", "diamonds"):
        task = LOADERS[name]()
        times, steps = {}, set()
        with threadpool_limits(THREADS), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for seed in range(args.rounds):
                for label, est in contenders(seed).items():
                    start = time.perf_counter()
                    est.fit(task.X_train, task.y_train)
                    times.setdefault(label, []).append(time.perf_counter() - start)
                    if label == "default":
                        steps.add(est.n_refine_steps_)
        median = {label: float(np.median(t)) for label, t in times.items()}
        cells = ", ".join(f"{label} {t:.3f} s" for label, t in median.items())
        ratios = ", ".join(f"{median['default'] / median[label]:.2f}× {label}"
                           for label in median if label != "default")
        print(f"{name} ({task.X_train.shape[0]} × {task.X_train.shape[1]}; default took "
              f"{sorted(steps)} steps): {cells}; default = {ratios}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
