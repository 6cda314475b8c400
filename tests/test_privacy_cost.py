"""skdp.privacy_cost: the cost of a fit, read before the fit, equals what the fit charges."""

import math

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skdp import PrivacyBudget, privacy_cost
from skdp.impute import DPSimpleImputer
from skdp.linear_model import DPLinearRegression, DPLogisticRegression, DPSGDClassifier
from skdp.model_selection import DPGridSearchCV
from skdp.naive_bayes import DPGaussianNB
from skdp.preprocessing import DPHistogramTransformer, DPMinMaxScaler, DPStandardScaler

B = (-3.0, 3.0)


def _data(n=600, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, d))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


def _models(budget):
    kw = dict(budget=budget, random_state=0)
    return [
        DPGaussianNB(bounds=B, classes=[0, 1], epsilon=0.7, **kw),
        DPStandardScaler(bounds=B, epsilon=0.3, **kw),
        DPMinMaxScaler(bounds=B, quantile_range=(0.05, 0.95), epsilon=0.4, **kw),
        DPHistogramTransformer(bounds=B, epsilon=0.2, **kw),
        DPSimpleImputer(bounds=B, epsilon=0.5, **kw),
        DPLogisticRegression(classes=[0, 1], epsilon=0.9, **kw),
        DPSGDClassifier(classes=[0, 1], epsilon=0.8, max_iter=2, **kw),
        DPLinearRegression(bounds_X=B, bounds_y=(0, 1), epsilon=0.6, **kw),
        make_pipeline(DPStandardScaler(bounds=B, epsilon=0.3, **kw),
                      DPGaussianNB(bounds=B, classes=[0, 1], epsilon=0.7, **kw)),
        ColumnTransformer([("a", DPStandardScaler(bounds=B, epsilon=0.3, **kw), [0, 1]),
                           ("b", DPHistogramTransformer(bounds=B, epsilon=0.2, **kw), [2, 3])]),
    ]


@pytest.mark.parametrize("index", range(10))
def test_the_cost_is_what_the_fit_charges(index):
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    model = _models(budget)[index]
    cost = privacy_cost(model, X, y)
    assert len(budget) == 0  # reading the cost charges nothing
    model.fit(X, y)
    eps, delta = budget.spent()
    assert (cost.epsilon, cost.delta) == (pytest.approx(eps, rel=1e-12), delta)
    np.testing.assert_allclose(cost.curve.rdp, budget.total_curve().rdp, rtol=1e-12)


def test_the_cost_of_a_search_is_its_one_charge():
    X, y = _data(2000)
    budget = PrivacyBudget(100.0, 1e-5)
    search = DPGridSearchCV(DPGaussianNB(bounds=B, classes=[0, 1], epsilon=0.5),
                            {"var_smoothing": [1e-9, 1e-3]}, epsilon=None,
                            budget=budget, random_state=0)
    cost = privacy_cost(search, X, y)
    assert len(budget) == 0
    search.fit(X, y)
    assert len(budget) == 1
    assert cost.epsilon == pytest.approx(budget.spent()[0], rel=1e-12)


def test_no_value_of_the_data_is_read():
    # Values the fit would refuse (NaN, strings) change nothing: only shapes are read.
    X, y = _data()
    expected = privacy_cost(DPGaussianNB(bounds=B, classes=[0, 1]), X, y)
    X_bad = np.full(X.shape, np.nan)
    y_bad = np.full(len(y), "not a label")
    got = privacy_cost(DPGaussianNB(bounds=B, classes=[0, 1]), X_bad, y_bad)
    assert got == expected


def test_delta_defaults_to_the_budget_and_can_be_given():
    X, y = _data()
    model = DPGaussianNB(bounds=B, classes=[0, 1], budget=PrivacyBudget(10.0, 1e-7))
    assert privacy_cost(model, X, y).delta == 1e-7
    assert privacy_cost(model, X, y, delta=1e-3).delta == 1e-3
    # Without a budget, the estimator's own δ: a pure ε-DP fit costs (ε, 0).
    pure = privacy_cost(DPGaussianNB(bounds=B, classes=[0, 1], delta=0.0), X, y)
    assert (pure.epsilon, pure.delta) == (pytest.approx(1.0, rel=1e-12), 0.0)
    assert math.isinf(privacy_cost(DPGaussianNB(bounds=B, epsilon=math.inf), X, y).epsilon)


def test_a_non_private_estimator_is_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="not an skdp estimator"):
        privacy_cost(LogisticRegression(), X, y)
    with pytest.raises(ValueError, match="not an skdp estimator"):
        privacy_cost(make_pipeline(OneHotEncoder(), LogisticRegression()), X, y)
