"""A private search refuses non-finite input before it charges anything."""

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from skdp import PrivacyBudget
from skdp.impute import DPSimpleImputer
from skdp.linear_model import DPLogisticRegression
from skdp.model_selection import DPGridSearchCV


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    return X, y


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_X_costs_nothing(bad):
    X, y = _data()
    X[5, 1] = bad
    budget = PrivacyBudget(10.0, 1e-5)
    search = DPGridSearchCV(DPLogisticRegression(epsilon=1.0), {"C": [0.1, 1.0]},
                            epsilon=None, budget=budget, random_state=0)
    with pytest.raises(ValueError, match="NaN or infinity" if bad == np.inf else
                       "contains NaN .* skdp.impute.DPSimpleImputer"):
        search.fit(X, y)
    assert len(budget) == 0


def test_non_finite_y_costs_nothing():
    X, y = _data()
    y = y.astype(float)
    y[3] = np.nan
    budget = PrivacyBudget(10.0, 1e-5)
    search = DPGridSearchCV(DPLogisticRegression(epsilon=1.0), {"C": [0.1, 1.0]},
                            epsilon=None, budget=budget, random_state=0)
    with pytest.raises(ValueError, match="NaN or infinity"):
        search.fit(X, y)
    assert len(budget) == 0


def test_nan_is_allowed_when_the_pipeline_imputes_it():
    X, y = _data()
    X[5, 1] = np.nan
    budget = PrivacyBudget(50.0, 1e-5)
    pipe = make_pipeline(DPSimpleImputer(bounds=(-1, 1), epsilon=1.0),
                         DPLogisticRegression(epsilon=1.0))
    search = DPGridSearchCV(pipe, {"dplogisticregression__C": [0.1, 1.0]},
                            epsilon=None, budget=budget, random_state=0)
    search.fit(X, y)
    assert len(budget) == 1
