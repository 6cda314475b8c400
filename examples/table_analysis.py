"""
Analyse a table and fit a model on it under one budget: Adult, by education and sex
===================================================================================

Run it with ``python examples/table_analysis.py``. Three private group-by
queries (:class:`skdp.analysis.PrivateTable`), each one release charged once,
and a private logistic regression share one ``PrivacyBudget`` of ε = 2. The
exact answers are printed next to the private ones for comparison only: a real
release would publish the private columns alone.
"""

import math
import sys
import warnings

import numpy as np

from skdp import PrivacyBudget
from skdp.analysis import PrivateTable, SmallGroupWarning
from skdp.datasets import adult_preprocessor, adult_schema, load_adult


def main(*, random_state=None, out=sys.stdout):
    """Run the queries and the fit; returns ``{"budget", "by_sex", "by_education", "model"}``."""
    from skdp.linear_model import DPLogisticRegression
    from skdp.pipeline import make_pipeline

    df, y = load_adult(as_frame=True, return_X_y=True)
    df = df.assign(high_income=y.astype(float))
    bounds = {name: tuple(b) for name, b in adult_schema()["numeric_bounds"].items()}
    bounds["high_income"] = (0.0, 1.0)
    budget = PrivacyBudget(epsilon=2.0, delta=1e-5)
    t = PrivateTable(df, budget=budget, bounds=bounds, random_state=random_state)

    def show(title, private, exact):
        print(f"\n{title}", file=out)
        print(private.join(exact.add_prefix("exact "), how="left").round(2).to_string(),
              file=out)

    # 1. public keys: the two values of sex; one query, one charge for both groups
    by_sex = t.groupby("sex", keys=["Female", "Male"]).agg(
        {"hours-per-week": ["mean", "median"], "high_income": "mean"}, epsilon=0.5)
    exact = df.groupby("sex", observed=True).agg(
        {"hours-per-week": ["mean", "median"], "high_income": "mean"})
    exact.columns = [f"{c}_{a}" for c, a in exact.columns]
    show("By sex (public keys, epsilon = 0.5):", by_sex.drop(columns="too_few_rows"), exact)

    # 2. keys chosen privately: education levels held by enough people are released
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallGroupWarning)  # the flag column says it too
        by_education = t.groupby("education").agg(
            {"age": "mean", "high_income": "mean"}, epsilon=0.5, intervals=True)
    exact = df.groupby("education", observed=True).agg({"age": "mean", "high_income": "mean"})
    exact.columns = [f"{c}_mean" for c in exact.columns]
    show("By education (keys chosen privately, epsilon = 0.5, 95 % intervals):",
         by_education[["age_mean", "high_income_mean", "high_income_mean_lower",
                       "high_income_mean_upper", "too_few_rows"]], exact)

    # 3. a model on the same table, charged to the same budget
    X_train, y_train = load_adult(return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    model = make_pipeline(adult_preprocessor(),
                          DPLogisticRegression(classes=[0, 1], random_state=random_state),
                          epsilon=1.0, budget=budget)
    model.fit(X_train, y_train)
    accuracy = float(np.mean(model.predict(X_test) == y_test))
    print(f"\nDPLogisticRegression at epsilon = 1: test accuracy {accuracy:.3f}", file=out)
    eps, delta = budget.spent()
    print(f"\n{budget.report()}\nTotal spend: epsilon = {eps:.3f} of {budget.epsilon} "
          f"(delta = {delta:g}): the two queries and the fit, composed.", file=out)
    assert eps <= budget.epsilon + 1e-9 and not math.isnan(accuracy)
    return {"budget": budget, "by_sex": by_sex, "by_education": by_education,
            "accuracy": accuracy}


if __name__ == "__main__":
    main()
