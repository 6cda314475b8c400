"""DPLogisticRegression's preconditioned schedule: steps, step size and momentum, side by side.

The preconditioned schedule (``_PRECONDITIONED_STEPS``, ``_PRECONDITIONED_STEP`` and
``_PRECONDITIONED_MOMENTUM`` in ``skdp/linear_model/_logistic.py``) is post-processing: it
changes the model, never the privacy curve. This script sets those three module constants to
each variant in turn and fits the documented setting (public ``data_norm``, ``classes``) on the
benchmark suite's classification tables (``benchmarks/_suite_data.py``).

For each table and variant it prints the mean over seeds of

- the *objective gap*: the training objective of scikit-learn's ``LogisticRegression`` (mean
  log-loss + ||w||²/(2Cn), C = 1) at the private model, minus its value at the exact fit
  (``epsilon=inf``); at ε = 1000 noise is negligible and the gap shows the optimisation alone;
- the test accuracy.

A fit takes the preconditioned schedule only where n̂/(28 σ_g) ≥ 250: at small ε a table's
rows repeat the same numbers for every variant.

Usage (from the repository root; about 2 minutes per ε for the default variants):

    python benchmarks/bench_logistic_schedule.py [--epsilon 1000] [--seeds 2]
        [--variants 20:2:0 14:1.5:0.4] [--tables adult nassCDS digits breast_cancer fair]

A variant is ``steps:step:momentum``.
"""

import argparse
import math
import os
import sys

import numpy as np
from scipy.special import log_softmax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _suite_data import LOADERS  # noqa: E402

import skdp.linear_model._logistic as logistic  # noqa: E402
from skdp.linear_model import DPLogisticRegression  # noqa: E402

CLASSIFICATION = ["adult", "nassCDS", "digits", "breast_cancer", "fair"]


def objective(model, X, y):
    """scikit-learn's objective divided by C·n, C = 1: mean log-loss + ||w||²/(2n)."""
    scores = model.decision_function(X)
    if scores.ndim == 1:
        scores = np.column_stack([np.zeros_like(scores), scores])
    log_p = log_softmax(scores, axis=1)[np.arange(len(y)), np.searchsorted(model.classes_, y)]
    return -log_p.mean() + 0.5 * np.sum(model.coef_**2) / len(y)


def parse_variant(text):
    steps, step, momentum = text.split(":")
    return int(steps), float(step), float(momentum)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epsilon", type=float, default=1000.0)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--variants", nargs="+", type=parse_variant,
                        default=[(20, 2.0, 0.0), (14, 1.5, 0.4)])
    parser.add_argument("--tables", nargs="+", default=CLASSIFICATION, choices=CLASSIFICATION)
    args = parser.parse_args(argv)
    saved = (logistic._PRECONDITIONED_STEPS, logistic._PRECONDITIONED_STEP,
             logistic._PRECONDITIONED_MOMENTUM)
    print(f"epsilon = {args.epsilon:g}, seeds 0..{args.seeds - 1}, documented setting "
          f"(data_norm = the table's public row norm); objective gap / test accuracy")
    print("| variant (steps, step, momentum) | " + " | ".join(args.tables) + " |")
    print("|---" * (len(args.tables) + 1) + "|")
    tasks = {name: LOADERS[name]() for name in args.tables}
    exact = {}
    for name, task in tasks.items():
        model = DPLogisticRegression(epsilon=math.inf, classes=task.classes, data_norm=task.row_norm)
        exact[name] = objective(model.fit(task.X_train, task.y_train), task.X_train, task.y_train)
    try:
        for steps, step, momentum in args.variants:
            (logistic._PRECONDITIONED_STEPS, logistic._PRECONDITIONED_STEP,
             logistic._PRECONDITIONED_MOMENTUM) = steps, step, momentum
            cells = []
            for name, task in tasks.items():
                gaps, accuracies = [], []
                for seed in range(args.seeds):
                    model = DPLogisticRegression(epsilon=args.epsilon, classes=task.classes,
                                                 data_norm=task.row_norm, random_state=seed)
                    model.fit(task.X_train, task.y_train)
                    gaps.append(objective(model, task.X_train, task.y_train) - exact[name])
                    accuracies.append(model.score(task.X_test, task.y_test))
                cells.append(f"{np.mean(gaps):.5f} / {np.mean(accuracies):.4f}")
            print(f"| {steps}, {step:g}, {momentum:g} | " + " | ".join(cells) + " |", flush=True)
    finally:
        (logistic._PRECONDITIONED_STEPS, logistic._PRECONDITIONED_STEP,
         logistic._PRECONDITIONED_MOMENTUM) = saved
    return 0


if __name__ == "__main__":
    sys.exit(main())
