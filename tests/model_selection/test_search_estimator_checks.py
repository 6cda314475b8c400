"""scikit-learn's estimator checks for the private searches (a small skdp classifier inside)."""

import math

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp.linear_model import DPLogisticRegression
from skdp.model_selection import DPGridSearchCV, DPRandomizedSearchCV

# Small data, small epsilon: the inner solver's warnings are expected.
pytestmark = pytest.mark.filterwarnings("ignore")

# No expected failures: every check passes (poor_score is a tag: private fits on tiny data).
EXPECTED_FAILED = {}


@parametrize_with_checks(
    [
        DPGridSearchCV(DPLogisticRegression(epsilon=1.0), {"C": [1.0, 2.0]}, epsilon=None,
                       n_runs_mean=2,
                       random_state=0),
        DPRandomizedSearchCV(DPLogisticRegression(epsilon=1.0), {"C": [1.0, 2.0]},
                             epsilon=None, n_candidates=2, n_runs_mean=2, random_state=0),
        # the default epsilon="auto": the estimator's own epsilon is the search's total
        DPGridSearchCV(DPLogisticRegression(epsilon=1.0), {"C": [1.0, 2.0]}, n_runs_mean=2,
                       random_state=0),
        # at a total epsilon=inf: not private, each candidate run once with exact scores
        DPGridSearchCV(DPLogisticRegression(), {"C": [1.0, 2.0]}, epsilon=math.inf,
                       random_state=0),
        DPRandomizedSearchCV(DPLogisticRegression(), {"C": [1.0, 2.0]}, n_candidates=2,
                             epsilon=math.inf, random_state=0),
    ],
    expected_failed_checks=lambda est: EXPECTED_FAILED,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
