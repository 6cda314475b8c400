"""Every estimator works with its defaults: scikit-learn's checks on default-constructed skdp
estimators.

A user passes only what the docs call required, so ``Estimator()`` must fit: without public
bounds the estimators release private ones, and DP-SGD takes its divisor from a noisy count.
At finite epsilon the only checks allowed to fail are scikit-learn's accuracy checks on its
small training sets (``check_classifiers_train`` asks 0.83 accuracy of a model fitted on
~150 rows, ``check_regressors_train`` R^2 > 0.5: at epsilon = 1 the noise is far larger on
so few rows); at ``epsilon=inf`` every check passes.
"""

import math
import warnings

import pytest
from sklearn.utils.estimator_checks import check_estimator

from skdp.impute import DPSimpleImputer
from skdp.linear_model import DPLinearRegression, DPLogisticRegression, DPSGDClassifier, DPSGDRegressor
from skdp.naive_bayes import DPGaussianNB
from skdp.preprocessing import (
    DPHistogramTransformer,
    DPKBinsDiscretizer,
    DPMinMaxScaler,
    DPStandardScaler,
)

ESTIMATORS = [
    DPLogisticRegression, DPLinearRegression, DPSGDClassifier, DPSGDRegressor, DPGaussianNB,
    DPSimpleImputer, DPHistogramTransformer, DPKBinsDiscretizer, DPMinMaxScaler, DPStandardScaler,
]
ACCURACY_CHECKS = {"check_classifiers_train", "check_regressors_train"}


def _failed_checks(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the label-set PrivacyLeakWarning of classes=None
        results = check_estimator(estimator, on_fail=None)
    assert len(results) > 20  # the checks ran
    return {r["check_name"] for r in results if r["status"] == "failed"}


@pytest.mark.parametrize("Estimator", ESTIMATORS, ids=lambda e: e.__name__)
def test_default_constructed_passes_the_checks_but_accuracy(Estimator):
    assert _failed_checks(Estimator()) <= ACCURACY_CHECKS


@pytest.mark.parametrize("Estimator", ESTIMATORS, ids=lambda e: e.__name__)
def test_default_constructed_at_epsilon_inf_passes_every_check(Estimator):
    assert _failed_checks(Estimator(epsilon=math.inf)) == set()
