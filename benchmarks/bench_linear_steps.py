"""Fit time of DPLinearRegression's refinement schedules, side by side in one run.

On the suite's weather and diamonds tables (benchmarks/_suite_data.py), at ε = 1, in
interleaved rounds (one fit of each contender per round), it prints the median fit time of
scikit-learn's LinearRegression, DPLinearRegression with the 8 steps of the short schedule
(``refine_steps=8``), with its default (``refine_steps="auto"``: 128 steps on these tables)
and DPSGDRegressor's default, and the ratios of the default to the others. Every contender
runs with ``--threads N`` BLAS threads (default 1; see benchmarks/_threads.py).

    python benchmarks/bench_linear_steps.py [--rounds 5] [--threads 1]

``--conditioned`` instead compares the two schedules' test R² (``refine_steps="auto"`` and
``refine_steps=8``, 8 seeds, public bounds) on well-conditioned synthetic tables (10
independent Gaussian columns clipped to ±4, a linear target with noise of sd 2, 2·10^4 to
10^6 rows, ε = 0.1 and 1), with the steps "auto" took and the ratio of the released XᵀX's
smallest eigenvalue to the noise scale 2·s·√q that chooses them::

    python benchmarks/bench_linear_steps.py --conditioned
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


def conditioned(seeds=8):
    """Test R² of the two schedules on well-conditioned tables (see the module docstring)."""
    import math

    from skdp.linear_model import DPLinearRegression
    from skdp.linear_model import _linear

    ratios = []
    plan = _linear._step_plan

    def recording_plan(refine_steps, gram, eigenvalues, ridge, noise_std, sigma, fit_intercept):
        q = gram.shape[0] - 1
        scale = _linear._STEP_RIDGE_FACTOR * noise_std * math.sqrt(q)
        ratios.append(eigenvalues[0] / scale)
        return plan(refine_steps, gram, eigenvalues, ridge, noise_std, sigma, fit_intercept)

    _linear._step_plan = recording_plan
    rng = np.random.default_rng(0)
    for n in (20_000, 100_000, 1_000_000):
        w = rng.normal(0, 1, 10)
        X = np.clip(rng.normal(0, 1, (n, 10)), -4, 4)
        y = np.clip(X @ w + rng.normal(0, 2, n), -15, 15)
        X_test = np.clip(rng.normal(0, 1, (50_000, 10)), -4, 4)
        y_test = X_test @ w + rng.normal(0, 2, 50_000)
        for eps in (0.1, 1.0):
            cells = []
            for steps in ("auto", 8):
                ratios.clear()
                fits = [DPLinearRegression(epsilon=eps, bounds_X=(-4, 4), bounds_y=(-15, 15),
                                           refine_steps=steps, random_state=s).fit(X, y)
                        for s in range(seeds)]
                scores = [f.score(X_test, y_test) for f in fits]
                cells.append(f"refine_steps={steps!r}: R² {np.mean(scores):.5f} ± "
                             f"{np.std(scores):.5f}, steps {sorted({f.n_refine_steps_ for f in fits})}")
            print(f"{n} rows, ε = {eps}: λ_min / (2·s·√q) = {np.mean(ratios):.1f}; "
                  + "; ".join(cells))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--conditioned", action="store_true")
    args = parser.parse_args(argv)
    if args.conditioned:
        with threadpool_limits(THREADS), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            conditioned()
        return
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
