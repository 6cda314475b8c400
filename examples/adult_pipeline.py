"""The main job: a private Adult income model, tuned privately, under one budget.

Run it with ``python examples/adult_pipeline.py`` (about 5-10 s on 2 cores).

1. Load the bundled UCI Adult data (its published train/test split).
2. Build a ``Pipeline`` from the data set's PUBLIC schema, so that nothing is
   learned from the rows without privacy:

   - the 8 categorical columns are one-hot encoded with the category lists
     printed in ``adult.names`` (not read from the data);
   - the 6 numeric columns are clipped to public bounds and mapped onto
     [0, 1] (a fixed map), then standardised by ``DPStandardScaler`` with a
     differentially private mean and variance;
   - ``DPLogisticRegression`` (noisy gradient descent) learns the model.

3. Select ``C`` and the split of each run's ε between the scaler and the
   classifier with ``DPGridSearchCV``: the whole search is ONE private
   mechanism (random secret number of runs, noisy validation scores, only the
   best run released; Papernot & Steinke 2022), charged once to ONE
   ``PrivacyBudget(epsilon=1.0, delta=1e-5)``, before it reads the data.
4. Print the test accuracy, the budget's ledger and the total spend.

The test set is used only to evaluate the released model, as a public
benchmark would; the search itself never sees it.
"""

import math
import sys

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from skdp import PrivacyBudget
from skdp.datasets import adult_schema, load_adult, scale_to_public_bounds
from skdp.linear_model import DPLogisticRegression
from skdp.model_selection import DPGridSearchCV
from skdp.preprocessing import DPStandardScaler

DELTA = 1e-5
# Each run of the search spends RUN_EPSILON (at δ), split between the scaler and
# the classifier; the search picks the split. The score of a run costs SCORE_EPSILON.
RUN_EPSILON = 0.4
SCORE_EPSILON = 0.05
SCALER_SHARES = (0.05, 0.2)
C_VALUES = (0.1, 1.0, 10.0)
# Standardised values beyond ±Z_MAX are rare; a row's norm is at most
# sqrt(8 one-hot ones + 6 numeric Z_MAX²). DPLogisticRegression scales longer rows
# down to this public bound (it never reads norms from the data).
Z_MAX = 2.0


def build_pipeline(schema):
    """The Pipeline, built from the public schema alone."""
    names = schema["feature_names"]
    categorical = list(schema["categorical"])
    numeric = list(schema["numeric_bounds"])
    bounds = np.array([schema["numeric_bounds"][name] for name in numeric])
    to_unit = FunctionTransformer(
        scale_to_public_bounds,
        kw_args={
            "lower": bounds[:, 0].tolist(),
            "upper": bounds[:, 1].tolist(),
            "log_scaled": [name in schema["log_scaled"] for name in numeric],
        },
        feature_names_out="one-to-one",
    )
    numeric_steps = Pipeline([
        ("public_bounds", to_unit),  # clip to public bounds, map onto [0, 1]: learns nothing
        ("scale", DPStandardScaler(bounds=(0.0, 1.0), delta=DELTA)),  # DP mean and variance
    ])
    one_hot = OneHotEncoder(
        categories=[schema["categorical"][name] for name in categorical],
        handle_unknown="ignore",  # missing ("?") and unlisted values: an all-zero block
        sparse_output=False,
    )
    columns = ColumnTransformer([
        ("categorical", one_hot, [names.index(name) for name in categorical]),
        ("numeric", numeric_steps, [names.index(name) for name in numeric]),
    ])
    data_norm = math.sqrt(len(categorical) + len(numeric) * Z_MAX**2)
    classifier = DPLogisticRegression(delta=DELTA, data_norm=data_norm, classes=[0, 1])
    return Pipeline([("columns", columns), ("classifier", classifier)])


def candidates():
    """C and the split of a run's ε between scaler and classifier: chosen without the data."""
    return [
        {
            "columns__numeric__scale__epsilon": [share * RUN_EPSILON],
            "classifier__epsilon": [(1 - share) * RUN_EPSILON],
            "classifier__C": list(C_VALUES),
        }
        for share in SCALER_SHARES
    ]


def main(n_train=None, n_test=None, *, epsilon=1.0, n_runs_mean=5, random_state=None,
         out=sys.stdout):
    """Run the main job; return the fitted search, the budget and the test accuracy.

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

    budget = PrivacyBudget(epsilon=epsilon, delta=DELTA)
    search = DPGridSearchCV(
        build_pipeline(adult_schema()),
        candidates(),
        epsilon=None,  # each run spends its candidate's split of RUN_EPSILON
        score_epsilon=SCORE_EPSILON,
        n_runs_mean=n_runs_mean,
        budget=budget,
        random_state=random_state,
    )
    search.fit(X, y)

    accuracy = search.score(X_test, y_test)
    majority = max(np.mean(y_test), 1 - np.mean(y_test))
    best = search.best_params_
    print(f"Adult: {len(y)} training rows, {len(y_test)} test rows.", file=out)
    print(
        f"Chosen by the private search: C = {best['classifier__C']:g}, ε per run = "
        f"{best['columns__numeric__scale__epsilon']:.3g} (scaler) + "
        f"{best['classifier__epsilon']:.3g} (classifier); noisy validation accuracy "
        f"{search.best_score_:.3f}.",
        file=out,
    )
    print(f"Test accuracy: {accuracy:.4f} (always predicting the majority class: {majority:.4f}).",
          file=out)
    print(file=out)
    print(budget.report(), file=out)
    spent_eps, spent_delta = budget.spent()
    print(file=out)
    print(f"Total spend: ε = {spent_eps:.4f}, δ = {spent_delta:g} "
          f"(cap ε = {budget.epsilon:g}, δ = {budget.delta:g}).", file=out)
    return {"search": search, "budget": budget, "accuracy": accuracy, "majority": majority}


if __name__ == "__main__":
    main()
