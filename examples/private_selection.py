"""
Private model selection: what a DP search costs, against charging its runs one by one
=====================================================================================

Run it with ``python examples/private_selection.py``. ``DPRandomizedSearchCV``
trains each candidate privately, scores it with a noisy validation count, runs
a random, secret number K of times and releases only the best run (Papernot &
Steinke 2022). Its ε is compared with the ε of the same runs (the same
per-run noise) charged one by one by plain RDP composition, as a private
search that released every run would have to pay.

The figure shows the search's selection: the candidates of ``C`` (drawn from
the public distribution, before any data is read) and the one it chose, over
the test accuracy of scikit-learn's non-private ``LogisticRegression`` at
each ``C``, drawn for comparison only (a real study would not compute it on
its private rows); beside it, the two costs. The documentation's gallery runs
it on a sample of 8,000 training and 4,000 test rows
(``SKDP_EXAMPLES_QUICK=1``).
"""

import math
import sys

import numpy as np
from scipy.stats import loguniform
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from skdp import PrivacyBudget
from skdp.accounting import pure_dp_rdp
from skdp.datasets import adult_preprocessor, adult_schema, load_adult
from skdp.linear_model import DPLogisticRegression
from skdp.model_selection import DPRandomizedSearchCV

DELTA = 1e-5


def main(n_train=None, n_test=None, *, run_epsilon=0.5, score_epsilon=0.1, n_candidates=10,
         n_runs_mean=10, random_state=None, out=sys.stdout):
    """Run one private search over C; return its budget, its ε and the composed ε.

    ``n_train`` / ``n_test`` keep that many rows drawn at random (quick tests).
    """
    rng = np.random.default_rng(random_state)
    X, y = load_adult(return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    if n_train is not None:
        keep = rng.choice(len(y), size=n_train, replace=False)
        X, y = X[keep], y[keep]
    if n_test is not None:
        keep = rng.choice(len(y_test), size=n_test, replace=False)
        X_test, y_test = X_test[keep], y_test[keep]

    pipe = Pipeline([
        ("columns", adult_preprocessor()),  # public schema: learns nothing from the rows
        ("classifier", DPLogisticRegression(epsilon=run_epsilon, delta=DELTA, classes=[0, 1],
                                            data_norm=adult_schema()["max_row_norm"])),
    ])
    budget = PrivacyBudget(epsilon=10.0, delta=DELTA)
    search = DPRandomizedSearchCV(
        pipe, {"classifier__C": loguniform(1e-2, 1e2)}, epsilon=None, n_candidates=n_candidates,
        score_epsilon=score_epsilon, n_runs_mean=n_runs_mean, refit=False,
        budget=budget, random_state=random_state,
    ).fit(X, y)
    search_epsilon = budget.spent()[0]

    # The same runs charged one by one: the released model's training curve (the
    # same for every candidate: C does not change the noise) plus its noisy score.
    run_curve = search.best_estimator_.named_steps["classifier"].privacy_curve_
    k = int(math.ceil(n_runs_mean))
    composed_epsilon = (k * (run_curve + pure_dp_rdp(score_epsilon))).epsilon(DELTA)

    accuracy = search.score(X_test, y_test)
    print(f"{n_candidates} candidates of C, mean K = {n_runs_mean} runs; each run: "
          f"DPLogisticRegression ε = {run_epsilon}, noisy score ε = {score_epsilon}.", file=out)
    print(f"ε of the private search (one charge):     {search_epsilon:.4f}", file=out)
    print(f"ε of {k} runs by plain RDP composition:   {composed_epsilon:.4f}", file=out)
    print(f"ratio: {search_epsilon / composed_epsilon:.3f}", file=out)
    print(f"chosen C = {search.best_params_['classifier__C']:.4g}; noisy validation accuracy "
          f"{search.best_score_:.3f}; test accuracy {accuracy:.4f}", file=out)
    return {"search": search, "budget": budget, "search_epsilon": search_epsilon,
            "composed_epsilon": composed_epsilon, "accuracy": accuracy,
            "data": (X, y, X_test, y_test)}


def plot_selection(result):
    """The candidates, the chosen one, and the two costs; non-private accuracies for comparison."""
    import matplotlib.pyplot as plt

    search = result["search"]
    X, y, X_test, y_test = result["data"]
    Cs = np.array(sorted(p["classifier__C"] for p in search.candidates_))
    encode = adult_preprocessor().fit(X)  # the public schema: learns nothing from X
    Xt, Xt_test = encode.transform(X), encode.transform(X_test)
    reference = [LogisticRegression(C=c, max_iter=1000).fit(Xt, y).score(Xt_test, y_test)
                 for c in Cs]
    chosen = search.best_params_["classifier__C"]

    fig, (ax, costs) = plt.subplots(1, 2, figsize=(10, 4.5), width_ratios=(2, 1))
    ax.plot(Cs, reference, "o-", color="tab:gray",
            label=f"the {len(Cs)} candidates: scikit-learn, not private (comparison only)")
    ax.plot([chosen], [result["accuracy"]], "*", color="tab:red", markersize=15,
            label=f"the chosen C = {chosen:.3g}: its private model")
    ax.set_xscale("log")
    ax.set_xlabel("C")
    ax.set_ylabel("test accuracy")
    ax.set_title("The private search's selection")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.15))
    costs.bar(["private search\n(one charge)", "its runs, composed"],
              [result["search_epsilon"], result["composed_epsilon"]], color=["tab:blue", "tab:gray"])
    costs.set_ylabel(f"ε at δ = {DELTA:g}")
    costs.set_title("What it costs")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    import os

    import matplotlib.pyplot as plt

    quick = os.environ.get("SKDP_EXAMPLES_QUICK") == "1"  # set by the documentation's build
    plot_selection(main(**(dict(n_train=8000, n_test=4000) if quick else {})))
    plt.show()
