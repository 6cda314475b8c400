"""Errors on bad input say what is wrong and what to do, never quote a row's value, cost nothing.

The messages come from the shared checks (``skdp.utils._validation``: ``validate_data``,
``check_bounds``; the budget's own checks), so one estimator of each kind stands for the others.
"""

import importlib
import inspect
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from sklearn.utils import get_tags

from skdp import BudgetExceededError, PrivacyBudget, stats
from skdp.decomposition import DPPCA
from skdp.ensemble import DPHistGradientBoostingClassifier, DPRandomForestClassifier
from skdp.linear_model import DPLogisticRegression
from skdp.naive_bayes import DPGaussianNB
from skdp.preprocessing import DPStandardScaler
from skdp.tree import DPDecisionTreeClassifier
from skdp.utils._validation import NAN_CAPABLE

rng = np.random.default_rng(0)
X = rng.uniform(0, 1, size=(200, 2))
Y = (X[:, 0] > 0.5).astype(int)
SUBPACKAGES = ["cluster", "decomposition", "ensemble", "impute", "linear_model",
               "naive_bayes", "preprocessing", "tree"]


def _estimators():
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"skdp.{sub}")
        for name in module.__all__:
            cls = getattr(module, name)
            if inspect.isclass(cls) and issubclass(cls, BaseEstimator):
                yield f"skdp.{sub}.{name}", cls


def _refused(make_fit, error=ValueError, match=None):
    """Run the fit made by ``make_fit(budget)``: it raises and charges nothing; the message."""
    budget = PrivacyBudget(100.0, 1e-5)
    with pytest.raises(error, match=match) as info:
        make_fit(budget)
    assert len(budget) == 0
    return str(info.value)


def test_the_nan_capable_list_is_the_estimators_with_the_allow_nan_tag():
    tagged = {name for name, cls in _estimators() if get_tags(cls()).input_tags.allow_nan}
    assert tagged == set(NAN_CAPABLE)


@pytest.mark.parametrize("est", [
    DPGaussianNB(bounds=(0, 1), classes=[0, 1]),
    DPLogisticRegression(classes=[0, 1]),
    DPStandardScaler(bounds=(0, 1)),
    DPPCA(bounds=(0, 1)),
], ids=lambda e: type(e).__name__)
def test_a_refused_nan_points_to_skdps_nan_capable_estimators(est):
    Xn = X.copy()
    Xn[3, 1] = np.nan
    message = _refused(lambda b: est.set_params(budget=b).fit(Xn, Y), match="contains NaN")
    assert "in column 1." in message  # the column, not the row
    assert "sklearn" not in message and "HistGradientBoostingClassifier" in message
    for name in NAN_CAPABLE:
        assert name in message


def test_a_search_refuses_nan_with_the_same_pointer():
    from skdp.model_selection import DPGridSearchCV

    Xn = X.copy()
    Xn[3, 1] = np.nan
    message = _refused(lambda b: DPGridSearchCV(
        DPGaussianNB(bounds=(0, 1), classes=[0, 1]), {"var_smoothing": [1e-9]}, epsilon=None,
        budget=b).fit(Xn, Y), match="contains NaN")
    assert "sklearn" not in message and all(name in message for name in NAN_CAPABLE)


def test_a_nan_capable_estimator_still_fits_nan():
    Xn = X.copy()
    Xn[::7, 0] = np.nan
    DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1], random_state=0).fit(Xn, Y)


@pytest.mark.parametrize("est", [
    DPGaussianNB(bounds=(0, 1), classes=[0, 1]),
    DPRandomForestClassifier(bounds=(0, 1), classes=[0, 1], n_estimators=2),
], ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("frame", [True, False], ids=["DataFrame", "object array"])
def test_text_in_a_numeric_column_is_named_by_column_never_quoted(est, frame):
    data = pd.DataFrame({"age": X[:, 0].astype(object), "income": X[:, 1].astype(object)})
    data.loc[5, "income"] = "oops"
    data = data if frame else data.to_numpy()
    message = _refused(lambda b: est.set_params(budget=b).fit(data, Y), match="must be numeric")
    assert "oops" not in message
    assert ("column 'income'" if frame else "column 1") in message


def test_text_in_the_numeric_column_of_a_table_with_categorical_features():
    data = pd.DataFrame({"age": X[:, 0].astype(object),
                         "colour": pd.Categorical(["red"] * 200, categories=["red", "blue"])})
    data.loc[7, "age"] = "oops"
    message = _refused(lambda b: DPHistGradientBoostingClassifier(
        bounds=(0, 1), classes=[0, 1], budget=b).fit(data, Y), match="must be numeric")
    assert "oops" not in message and "column 'age'" in message


@pytest.mark.parametrize("est", [
    DPLogisticRegression(classes=[0, 1]),
    DPHistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1]),
    DPStandardScaler(bounds=(0, 1)),
], ids=lambda e: type(e).__name__)
def test_dates_beside_numbers_are_named_by_column(est):
    # numpy's DTypePromotionError (a TypeError naming dtypes) becomes the ValueError of a
    # column that is not numeric, before any charge.
    data = pd.DataFrame({"age": X[:, 0],
                         "signed": pd.date_range("2020-01-01", periods=len(X), freq="D"),
                         "waited": pd.to_timedelta(np.arange(len(X)), unit="D")})
    message = _refused(lambda b: est.set_params(budget=b).fit(data, Y), match="must be numeric")
    assert "columns 'signed', 'waited' hold dates or durations" in message
    assert "2020" not in message


def test_complex_numbers_are_refused_without_printing_the_rows():
    Xc = X.astype(complex)
    Xc[4, 1] = 0.25 + 0.5j
    message = _refused(lambda b: DPGaussianNB(bounds=(0, 1), classes=[0, 1], budget=b).fit(
        Xc, Y), match="input X holds complex numbers in column 1;")
    assert "0.25" not in message and "j" not in message.replace("just", "")
    yc = Y.astype(complex)
    yc[2] = 1 + 3j
    message = _refused(lambda b: DPGaussianNB(bounds=(0, 1), classes=[0, 1], budget=b).fit(
        X, yc), match="input y holds complex numbers")
    assert "3j" not in message and "1.+" not in message


@pytest.mark.parametrize("stat", [stats.mean, stats.nanmean])
def test_a_statistic_refuses_complex_numbers_instead_of_dropping_their_imaginary_part(stat):
    _refused(lambda b: stat(np.array([0.5, 0.25 + 1j]), epsilon=1.0, bounds=(0, 1), budget=b),
             match="must be real numbers; it holds complex numbers")


def test_a_value_outside_the_public_categories_is_not_quoted():
    data = pd.DataFrame({"age": X[:, 0], "colour": ["red"] * 199 + ["zzz"]})
    message = _refused(lambda b: DPHistGradientBoostingClassifier(
        bounds=(0, 1), classes=[0, 1], categorical_features=["colour"], categories=[["red"]],
        budget=b).fit(data, Y), match="outside its public categories")
    assert "zzz" not in message and "'colour'" in message


@pytest.mark.parametrize("make", [
    lambda b: DPHistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1], budget=b),
    lambda b: DPLogisticRegression(classes=[0, 1], budget=b),
    lambda b: DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1], budget=b),
])
@pytest.mark.filterwarnings("ignore::skdp.exceptions.BudgetExhaustedWarning")
def test_a_gaussian_fit_on_a_delta_zero_budget_says_why(make):
    budget = PrivacyBudget(1.0, 0.0)
    with pytest.raises(BudgetExceededError, match="delta = 0 admits no Gaussian mechanism") as info:
        make(budget).fit(X, Y)
    assert "delta > 0" in str(info.value) and "over the cap" not in str(info.value)
    assert len(budget) == 0


def test_a_non_private_fit_on_a_delta_zero_budget_is_over_the_cap():
    budget = PrivacyBudget(1.0, 0.0)
    with pytest.raises(BudgetExceededError, match="ε=inf alone.*over the cap"):
        DPGaussianNB(epsilon=math.inf, classes=[0, 1], budget=budget).fit(X, Y)
    assert len(budget) == 0


def test_a_delta_zero_budget_still_takes_pure_dp_and_says_over_the_cap_otherwise():
    budget = PrivacyBudget(1.0, 0.0)
    stats.mean(X[:, 0], epsilon=0.6, delta=0.0, bounds=(0, 1), budget=budget)
    assert len(budget) == 1
    with pytest.raises(BudgetExceededError, match="over the cap"):
        stats.mean(X[:, 0], epsilon=0.6, delta=0.0, bounds=(0, 1), budget=budget)
    assert len(budget) == 1


@pytest.mark.parametrize("make", [
    lambda b: DPGaussianNB(bounds=(1, 1), classes=[0, 1], budget=b),
    lambda b: DPDecisionTreeClassifier(bounds=(1, 1), classes=[0, 1], budget=b),
    lambda b: DPStandardScaler(bounds=([0.5, 0.5], [0.5, 0.5]), budget=b),
    lambda b: DPLogisticRegression(bounds_X=(1, 1), classes=[0, 1], budget=b),
])
def test_degenerate_bounds_are_refused(make):
    _refused(lambda b: make(b).fit(X, Y), match="bounds.* degenerate: lower == upper")


def test_degenerate_bounds_of_a_statistic_are_refused():
    _refused(lambda b: stats.mean(X[:, 0], epsilon=1.0, bounds=(1, 1), budget=b),
             match="degenerate")


def test_one_constant_feature_among_others_is_accepted():
    budget = PrivacyBudget(100.0, 1e-5)
    DPStandardScaler(bounds=([0, 5], [1, 5]), budget=budget, random_state=0).fit(
        np.c_[X[:, 0], np.full(200, 5.0)])
    assert len(budget) == 1


@pytest.mark.parametrize("value", ["1", True, None])
def test_epsilon_of_the_wrong_type_is_refused(value):
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        PrivacyBudget(value, 1e-5)
    with pytest.raises(TypeError, match="delta must be a real number"):
        PrivacyBudget(1.0, value)
    for make in [lambda b: DPGaussianNB(bounds=(0, 1), classes=[0, 1], epsilon=value, budget=b),
                 lambda b: DPRandomForestClassifier(bounds=(0, 1), classes=[0, 1],
                                                    epsilon=value, budget=b)]:
        _refused(lambda b: make(b).fit(X, Y), error=TypeError,
                 match="epsilon must be a real number")
    _refused(lambda b: stats.mean(X[:, 0], epsilon=value, bounds=(0, 1), budget=b),
             error=TypeError, match="epsilon must be a real number")


def test_numpy_scalars_are_real_numbers():
    budget = PrivacyBudget(np.float64(2.0), np.float32(1e-5))
    assert budget.epsilon == 2.0 and math.isclose(budget.delta, 1e-5, rel_tol=1e-6)
