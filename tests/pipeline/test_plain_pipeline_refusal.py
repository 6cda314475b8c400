"""A plain scikit-learn Pipeline refused mid-way says what its earlier steps spent.

scikit-learn's Pipeline fits and charges its steps one by one: a step that the
budget refuses leaves the earlier steps' charges in the ledger. Its
BudgetExceededError names them, says what they spent together, and points to
skdp.pipeline.make_pipeline, which charges every step at once or none.
"""

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline

from skdp import BudgetExceededError, PrivacyBudget, config_context
from skdp.linear_model import DPLogisticRegression
from skdp.naive_bayes import DPGaussianNB
from skdp.pipeline import make_pipeline as dp_make_pipeline
from skdp.preprocessing import DPMinMaxScaler, DPStandardScaler

B = (-3.0, 3.0)
pytestmark = pytest.mark.filterwarnings("ignore::skdp.BudgetExhaustedWarning")


def _data(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    return X, (X[:, 0] > 0).astype(int)


def test_the_refusal_names_the_steps_that_were_charged_before_it():
    X, y = _data()
    budget = PrivacyBudget(1.0, 1e-5)
    pipe = make_pipeline(DPStandardScaler(bounds=B, epsilon=0.5, budget=budget),
                         DPMinMaxScaler(bounds=B, quantile_range=(0.05, 0.95), epsilon=0.3,
                                        budget=budget),
                         DPGaussianNB(bounds=(0, 1), classes=[0, 1], epsilon=1.0,
                                      budget=budget))
    with pytest.raises(BudgetExceededError) as info:
        pipe.fit(X, y)
    message = str(info.value)
    assert message.startswith("Charging 'DPGaussianNB(")  # the budget's own words first
    scaler, minmax = pipe.steps[0][1], pipe.steps[1][1]  # fitted, and charged
    assert f"'dpstandardscaler' (DPStandardScaler, epsilon={scaler.epsilon_spent_:.4g})" in message
    assert f"'dpminmaxscaler' (DPMinMaxScaler, epsilon={minmax.epsilon_spent_:.4g})" in message
    spent = budget.spent()[0]
    assert len(budget) == 2 and f"epsilon={spent:.4g} together at delta=1e-05" in message
    assert "skdp.pipeline.make_pipeline" in message and "stay in the ledger" in message


def test_a_step_inside_a_column_transformer_and_the_default_budget_are_told_too():
    X, y = _data()
    budget = PrivacyBudget(1.0, 1e-5)
    pipe = make_pipeline(
        DPStandardScaler(bounds=B, epsilon=0.6),
        ColumnTransformer([("a", DPStandardScaler(bounds=B, epsilon=0.2), [0]),
                           ("b", DPStandardScaler(bounds=B, epsilon=0.9), [1, 2])]),
        DPLogisticRegression(classes=[0, 1], epsilon=0.5))
    with config_context(budget=budget), pytest.raises(BudgetExceededError) as info:
        pipe.fit(X, y)
    first = pipe.steps[0][1]
    assert f"'dpstandardscaler' (DPStandardScaler, epsilon={first.epsilon_spent_:.4g})" \
        in str(info.value)
    assert len(budget) == 2  # the first step and the column transformer's first part


def test_nothing_is_added_where_nothing_was_charged_before():
    X, y = _data()
    budget = PrivacyBudget(0.5, 1e-5)
    with pytest.raises(BudgetExceededError) as info:
        make_pipeline(DPGaussianNB(bounds=B, classes=[0, 1], epsilon=1.0, budget=budget)).fit(X, y)
    assert "earlier steps" not in str(info.value)
    with pytest.raises(BudgetExceededError) as info:  # a DPPipeline refuses before any step
        dp_make_pipeline(DPStandardScaler(bounds=B, epsilon=0.4, budget=budget),
                         DPGaussianNB(bounds=B, classes=[0, 1], epsilon=1.0,
                                      budget=budget)).fit(X, y)
    assert "earlier steps" not in str(info.value) and len(budget) == 0
