"""
The main job: predict income from census answers, privately, under one budget
=============================================================================

Run it with ``python examples/adult_pipeline.py`` (9 s of CPU; 15 s measured on a loaded 2-core machine).
The documentation's gallery runs it on a sample of 8,000 training and 4,000
test rows (``SKDP_EXAMPLES_QUICK=1``), so the numbers below its code differ a
little from a full run's.

The task: from 14 answers to the 1994 US census (age, education, occupation,
hours worked, ...), predict whether a person earns more than $50,000 a year
(UCI Adult, bundled with skdp, with its published training and test files).

1. The features are encoded with the data set's PUBLIC schema (the category
   lists and value ranges printed in its documentation), so the encoding
   learns nothing from the people in it.
2. A private logistic regression learns the model. Its regularisation strength
   ``C`` is chosen by a private search: a secret number of trial fits, each
   scored on noisy validation counts, of which only the best is released and
   refitted on all rows. The whole search spends ONE total, ε = 1, charged to
   ONE privacy budget before it reads the data.
3. It prints the test accuracy next to scikit-learn's non-private model and
   the always-say-no guess, and what the budget bought.

The test set only measures the released model, as a public benchmark would;
the search never sees it.
"""

import sys
import textwrap

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline as make_public_pipeline

from skdp import PrivacyBudget
from skdp.datasets import adult_preprocessor, adult_schema, load_adult
from skdp.linear_model import DPLogisticRegression
from skdp.model_selection import DPGridSearchCV
from skdp.pipeline import make_pipeline

DELTA = 1e-5
C_VALUES = (0.1, 1.0, 10.0)


def build_pipeline(epsilon):
    """The private pipeline, built from the public schema alone, spending ``epsilon`` in all."""
    return make_pipeline(
        adult_preprocessor(),  # one-hot codes and [0, 1] scales from the public schema
        DPLogisticRegression(data_norm=adult_schema()["max_row_norm"], classes=[0, 1]),
        epsilon=epsilon,
    )


def main(n_train=None, n_test=None, *, epsilon=1.0, n_runs_mean=5, random_state=None,
         out=sys.stdout):
    """Run the main job; return the fitted search, the budget and the accuracies.

    ``n_train`` and ``n_test`` keep only that many rows, drawn at random
    independently of their values (for quick tests); ``None`` keeps them all.
    ``random_state=None`` draws the noise from the operating system: with a
    published seed anyone could recompute the noise, so seeds are for tests.
    """
    rng = np.random.default_rng(random_state)
    X, y = load_adult(subset="train", return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    if n_train is not None:
        keep = rng.choice(len(y), size=n_train, replace=False)
        X, y = X[keep], y[keep]
    if n_test is not None:
        keep = rng.choice(len(y_test), size=n_test, replace=False)
        X_test, y_test = X_test[keep], y_test[keep]

    # A budget of epsilon at delta. Its ledger is a temporary file here; give
    # PrivacyBudget(..., ledger="adult_budget.sqlite") to keep the spend across runs.
    budget = PrivacyBudget(epsilon=epsilon, delta=DELTA)
    search = DPGridSearchCV(build_pipeline(epsilon), {"dplogisticregression__C": list(C_VALUES)},
                            n_runs_mean=n_runs_mean, budget=budget, random_state=random_state)
    search.fit(X, y)

    private = search.score(X_test, y_test)
    public = make_public_pipeline(adult_preprocessor(), LogisticRegression(max_iter=1000))
    non_private = public.fit(X, y).score(X_test, y_test)
    majority = max(np.mean(y_test), 1 - np.mean(y_test))

    print("Task: predict whether a person earns more than $50,000 a year from 14 census "
          f"answers\n(UCI Adult: {len(y):,} people to learn from, {len(y_test):,} to test on).",
          file=out)
    print(file=out)
    print("Test accuracy", file=out)
    print(f"  private model, epsilon = {epsilon:g}:    {private:6.1%}", file=out)
    print(f"  scikit-learn, not private:     {non_private:6.1%}", file=out)
    print(f"  always guessing 'not above':   {majority:6.1%}", file=out)
    print(file=out)
    spent, delta = budget.spent()
    print(f"Privacy budget: epsilon = {budget.epsilon:g} at delta = {budget.delta:g}. "
          f"Spent: epsilon = {spent:.3f}, in {len(budget)} "
          f"charge{'' if len(budget) == 1 else 's'}:", file=out)
    for i, charge in enumerate(budget.ledger, 1):
        line = f"{i}. epsilon = {charge.epsilon:.3f}: {describe(charge.label)}"
        print(textwrap.fill(line, width=88, initial_indent="  ", subsequent_indent="     "),
              file=out)
    print(f"The private search chose C = {search.best_params_['dplogisticregression__C']:g} "
          "(its noisy validation accuracy: "
          f"{search.best_score_:.1%}).", file=out)
    print("The budget's ledger was a temporary file, removed when this script ends.", file=out)
    return {"search": search, "budget": budget, "accuracy": private,
            "non_private": non_private, "majority": majority}


def describe(label):
    """A ledger entry's label in words (the entries this script makes)."""
    if label.startswith("DPGridSearchCV"):
        return (f"the private search over C ({len(C_VALUES)} values): trial fits of the "
                "pipeline, each scored on noisy validation counts, only the best one "
                "released, then refitted on all rows with most of the budget.")
    return label


if __name__ == "__main__":
    import os

    quick = os.environ.get("SKDP_EXAMPLES_QUICK") == "1"  # set by the documentation's build
    main(**(dict(n_train=8000, n_test=4000) if quick else {}))
