"""
The privacy-utility curve: test accuracy against ε on Adult
===========================================================

Run it with ``python examples/privacy_utility_curve.py [out.png]`` (with a
file name it saves the figure there, without one it shows it); needs
matplotlib (``pip install 'skdp[plot]'``). For each ε it fits the public-schema
pipeline with ``DPLogisticRegression`` (a few seeds) and plots the mean test
accuracy, next to scikit-learn's non-private ``LogisticRegression`` and the
majority class. The documentation's gallery runs it on a sample of 8,000
training and 4,000 test rows with 2 seeds per ε (``SKDP_EXAMPLES_QUICK=1``),
so its curve is noisier than the full run's (15 s), whose
numbers are on the :doc:`/benchmarks` page with those of the peers
(:ref:`sphx_glr_auto_examples_privacy_utility_families.py`).

Drawing such a curve on the data you protect is itself a study that costs
privacy: every fit is a release. The fits charge a budget with no cap
(``epsilon=inf``) so that the total is at least on record; on real private
data, draw the curve on public or synthetic data instead.
"""

import math
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression

from skdp import PrivacyBudget
from skdp.datasets import adult_preprocessor, adult_schema, load_adult
from skdp.linear_model import DPLogisticRegression

DELTA = 1e-5


def main(path=None, n_train=None, n_test=None, *,
         epsilons=(0.03, 0.1, 0.3, 1.0, 3.0), n_seeds=3, random_state=None, out=sys.stdout):
    """Fit and plot the curve (saved to ``path`` if given); return the accuracies and the figure."""
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(random_state)
    X, y = load_adult(return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    if n_train is not None:
        keep = rng.choice(len(y), size=n_train, replace=False)
        X, y = X[keep], y[keep]
    if n_test is not None:
        keep = rng.choice(len(y_test), size=n_test, replace=False)
        X_test, y_test = X_test[keep], y_test[keep]

    prep = adult_preprocessor().fit(X)  # learns nothing from X: the public schema
    Xt, Xt_test = prep.transform(X), prep.transform(X_test)
    budget = PrivacyBudget(epsilon=math.inf, delta=DELTA)  # no cap: a record of the study's cost
    accuracy = {}
    for eps in epsilons:
        scores = [
            DPLogisticRegression(epsilon=eps, delta=DELTA, data_norm=adult_schema()["max_row_norm"],
                                 classes=[0, 1], budget=budget, random_state=rng)
            .fit(Xt, y).score(Xt_test, y_test)
            for _ in range(n_seeds)
        ]
        accuracy[eps] = (float(np.mean(scores)), float(np.std(scores)))
        print(f"ε = {eps:<5g} test accuracy {accuracy[eps][0]:.4f} ± {accuracy[eps][1]:.4f} "
              f"({n_seeds} fits)", file=out)
    non_private = LogisticRegression(max_iter=1000).fit(Xt, y).score(Xt_test, y_test)
    majority = max(np.mean(y_test), 1 - np.mean(y_test))
    print(f"non-private LogisticRegression {non_private:.4f}; majority class {majority:.4f}", file=out)
    print(f"The whole study spent ε = {budget.spent()[0]:.3f} at δ = {DELTA:g} "
          f"in {len(budget)} fits.", file=out)

    fig, ax = plt.subplots(figsize=(6, 4))
    means = np.array([accuracy[e][0] for e in epsilons])
    stds = np.array([accuracy[e][1] for e in epsilons])
    ax.errorbar(epsilons, means, yerr=stds, marker="o", capsize=3, label="DPLogisticRegression")
    ax.axhline(non_private, color="tab:green", linestyle="--", label="non-private (scikit-learn)")
    ax.axhline(majority, color="tab:gray", linestyle=":", label="majority class")
    ax.set_xscale("log")
    ax.set_xlabel(f"ε (δ = {DELTA:g})")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"Adult: privacy-utility curve ({len(y)} training rows)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
        plt.close(fig)
        print(f"Saved {path}", file=out)
    return {"accuracy": accuracy, "non_private": non_private, "majority": majority,
            "budget": budget, "path": path, "figure": fig}


if __name__ == "__main__":
    import os

    import matplotlib.pyplot as plt

    quick = os.environ.get("SKDP_EXAMPLES_QUICK") == "1"  # set by the documentation's build
    main(*sys.argv[1:2], **(dict(n_train=8000, n_test=4000, n_seeds=2) if quick else {}))
    if len(sys.argv) < 2:
        plt.show()
