"""Private selection on Adult: one DPRandomizedSearchCV vs charging its runs one by one.

The search (10 candidates over C, mean K = 10, refit=False; K logarithmic, then
truncated negative binomial with eta = -0.5) is
charged by Papernot & Steinke 2022 (Thm. 2). The reference charges the same
10 runs (same per-run noise: the same DPLogisticRegression and noisy score)
by plain RDP composition. Also prints the test accuracy of the released model
next to the non-private scikit-learn LogisticRegression, fitted side by side.

    python benchmarks/bench_selection.py [--threads 1]

Both fits run with ``--threads`` (default 1) BLAS/OpenMP threads: the
``*_NUM_THREADS`` variables are set before numpy is imported and the run is
inside ``threadpoolctl.threadpool_limits`` (benchmarks/_threads.py).
"""

import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _threads  # noqa: E402

THREADS = _threads.set_thread_variables()  # before numpy is imported

import numpy as np  # noqa: E402
from scipy.stats import loguniform  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from skdp import PrivacyBudget  # noqa: E402
from skdp.accounting import pure_dp_rdp  # noqa: E402
from skdp.datasets import adult_preprocessor, load_adult  # noqa: E402
from skdp.linear_model import DPLogisticRegression  # noqa: E402
from skdp.model_selection import DPRandomizedSearchCV  # noqa: E402

DELTA = 1e-5
RUN_EPSILON = 0.5
SCORE_EPSILON = 0.1


def main():
    print(f"threads = {THREADS}, load average at start {os.getloadavg()[0]:.2f}\n")
    with threadpool_limits(limits=THREADS):
        for law, eta in [("logarithmic", None), ("truncated_negative_binomial", -0.5)]:
            run(law, eta)
            print()
        print(_threads.describe())
    print(f"load average at end {os.getloadavg()[0]:.2f}")


def run(law, eta):
    X, y = load_adult(subset="train", return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    pipe = Pipeline([
        ("prep", adult_preprocessor()),
        ("clf", DPLogisticRegression(epsilon=RUN_EPSILON, delta=DELTA, data_norm=math.sqrt(14),
                                     classes=[0, 1])),
    ])
    budget = PrivacyBudget(epsilon=10.0, delta=DELTA)
    # epsilon=None: each run spends RUN_EPSILON, as the composition it is compared with
    search = DPRandomizedSearchCV(pipe, {"clf__C": loguniform(1e-2, 1e2)}, epsilon=None,
                                  n_candidates=10, score_epsilon=SCORE_EPSILON, n_runs_mean=10,
                                  n_runs_distribution=law, eta=eta, refit=False,
                                  budget=budget, random_state=0)
    t0 = time.perf_counter()
    search.fit(X, y)
    seconds = time.perf_counter() - t0
    eps_search = budget.spent()[0]

    # The same runs charged one by one: 10 × (training curve + noisy score).
    train = pipe.fit(X, y).named_steps["clf"].privacy_curve_
    eps_composed = (10 * (train + pure_dp_rdp(SCORE_EPSILON))).epsilon(DELTA)

    sk = Pipeline([("prep", adult_preprocessor()), ("clf", LogisticRegression(max_iter=1000))])
    acc_sk = sk.fit(X, y).score(X_test, y_test)
    acc_dp = search.score(X_test, y_test)
    print(f"K ~ {law}" + ("" if eta is None else f" (eta={eta})") + ", mean 10")
    print(f"per run: DPLogisticRegression epsilon={RUN_EPSILON}, noisy score epsilon={SCORE_EPSILON}, "
          f"delta={DELTA}")
    print(f"epsilon of DPRandomizedSearchCV (10 candidates, mean K = 10): {eps_search:.4f}")
    print(f"epsilon of the 10 runs by RDP composition:                  {eps_composed:.4f}")
    print(f"ratio search / composition: {eps_search / eps_composed:.3f}")
    print(f"chosen C = {search.best_params_['clf__C']:.4g}, noisy validation accuracy "
          f"{search.best_score_:.4f}")
    print(f"test accuracy: private search {acc_dp:.4f}, sklearn LogisticRegression {acc_sk:.4f} "
          f"(ratio {acc_dp / acc_sk:.3f}); search took {seconds:.1f} s")


if __name__ == "__main__":
    main()
