"""DPDecisionTreeClassifier and DPRandomForestClassifier: API, privacy contract, accuracy."""

import math
import pathlib
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp import PrivacyLeakWarning
from skdp.ensemble import DPRandomForestClassifier
from skdp.stats._range import split_curve
from skdp.tree import DPDecisionTreeClassifier
from skdp.tree._classes import CountSplitter, tree_curve
from skdp.tree._histogram import SparseBins
from skdp.utils._testing import (
    assert_bad_input_costs_nothing,
    assert_charges_once,
    assert_refused_fit_fits_nothing,
)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from _dp_audit import epsilon_lower_bound  # noqa: E402


def _expected_failed(est):
    if est.epsilon == math.inf:
        return {}
    return {"check_classifiers_train": "asks for near non-private accuracy on 100-300 rows; "
            "at epsilon=1 a leaf's noisy class counts (noise std about 7 rows, 21 in each of "
            "the forest's 10 trees) drown "
            "so few rows (test_private_trees_are_accurate checks enough rows)"}


@parametrize_with_checks(
    [DPDecisionTreeClassifier(random_state=0), DPDecisionTreeClassifier(epsilon=math.inf),
     DPRandomForestClassifier(random_state=0), DPRandomForestClassifier(epsilon=math.inf)],
    expected_failed_checks=_expected_failed,
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)


def _data(n=4000, k=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 10, size=(n, 4)).astype(float)  # 10 distinct values per feature
    y = (X[:, 0] + 2 * (X[:, 1] > 6) + rng.integers(0, 3, n)) % k
    return X, y


def test_epsilon_inf_is_a_gini_tree():
    # Integer features with <= max_bins values: the bins are scikit-learn's thresholds.
    X, y = _data(k=3)
    ours = DPDecisionTreeClassifier(epsilon=math.inf, classes=[0, 1, 2], max_depth=4).fit(X, y)
    ref = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    # Up to ties between equally good splits, the same tree.
    assert np.mean(ours.predict(X) == ref.predict(X)) > 0.97
    assert abs(ours.score(X, y) - ref.score(X, y)) < 0.01


def test_private_trees_are_accurate():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(6000, 6))
    y = ((X[:, 0] > 0.4) & (X[:, 1] < 0.7)).astype(int)
    Xt = rng.uniform(0, 1, size=(3000, 6))
    yt = ((Xt[:, 0] > 0.4) & (Xt[:, 1] < 0.7)).astype(int)
    tree = DPDecisionTreeClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1],
                                    random_state=0).fit(X, y)
    assert tree.score(Xt, yt) > 0.93  # the majority class is 0.58
    forest = DPRandomForestClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1],
                                      random_state=0).fit(X, y)
    assert forest.score(Xt, yt) > 0.85
    np.testing.assert_allclose(forest.predict_proba(Xt).sum(axis=1), 1.0)


def test_charged_curve_ignores_the_data():
    X, y = _data()
    for est in (DPDecisionTreeClassifier(epsilon=0.6, bounds=(0, 9), classes=[0, 1]),
                DPRandomForestClassifier(epsilon=0.6, bounds=(0, 9), classes=[0, 1])):
        expected = tree_curve(0.6, 1e-5)
        fitted = assert_charges_once(est, X, y, expected_curve=expected)
        assert 0.6 * (1 - 1e-6) <= fitted.epsilon_spent_ <= 0.6
        assert_charges_once(est, X[:700] * 3, 1 - y[:700], expected_curve=expected)
    _, _, with_bounds = split_curve(0.6, 1e-5, 4, lambda e: tree_curve(e, 1e-5))
    assert_charges_once(DPDecisionTreeClassifier(epsilon=0.6, classes=[0, 1]), X, y,
                        expected_curve=with_bounds)


def test_bad_input_costs_nothing():
    X, y = _data(n=200)
    bad = [{"epsilon": 0}, {"delta": 0.0}, {"max_depth": 0}, {"max_depth": 13}, {"max_bins": 1},
           {"bounds": (2, 1)}, {"classes": [0, 5]}, {"random_state": "x"}]
    assert_bad_input_costs_nothing(DPDecisionTreeClassifier(bounds=(0, 9), classes=[0, 1]),
                                   X, y, bad_params=bad, bad_data=[(X[:, :1] * np.inf, y)])
    assert_bad_input_costs_nothing(
        DPRandomForestClassifier(bounds=(0, 9), classes=[0, 1]), X, y,
        bad_params=bad + [{"n_estimators": 0}, {"max_features": 0}, {"max_features": "log"}])
    assert_refused_fit_fits_nothing(DPRandomForestClassifier(bounds=(0, 9), classes=[0, 1]),
                                    X, y)


def test_pandas_input_and_fixed_seeds():
    X, y = _data(n=1000)
    frame = pd.DataFrame(X, columns=list("abcd"))
    one = DPRandomForestClassifier(bounds=(0, 9), classes=[0, 1], random_state=1).fit(
        frame, y)
    assert list(one.feature_names_in_) == list("abcd")
    two = DPRandomForestClassifier(bounds=(0, 9), classes=[0, 1], random_state=1).fit(X, y)
    np.testing.assert_array_equal(one.predict_proba(frame), two.predict_proba(X))


def _missing(n=4000, seed=0):
    """Integer features with missing values; a missing third feature means class 1."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 10, size=(n, 4)).astype(float)
    y = ((X[:, 0] + X[:, 1] > 9) ^ (rng.random(n) < 0.1)).astype(int)
    missing = rng.random(X.shape) < [0.1, 0.05, 0.2, 0.0]
    y[missing[:, 2]] = 1
    X[missing] = np.nan
    return X, y


def test_epsilon_inf_missing_values_as_sklearn_tree():
    """Gini splits with the missing values' side as scikit-learn's DecisionTreeClassifier.

    Up to ties between equally good splits, as test_epsilon_inf_is_a_gini_tree; the test rows
    hold missing values where the fit had none (feature 2: to the child with more rows).
    """
    X, y = _missing()
    ours = DPDecisionTreeClassifier(epsilon=math.inf, classes=[0, 1], max_depth=4).fit(X, y)
    ref = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    Xt = X.copy()
    Xt[:500, 3] = np.nan
    assert np.mean(ours.predict(Xt) == ref.predict(Xt)) > 0.97
    assert abs(ours.score(X, y) - ref.score(X, y)) < 0.01


def test_missing_values_cost_nothing_more_and_are_used():
    X, y = _missing()
    Xt, yt = _missing(seed=1)
    filled, filled_t = np.nan_to_num(X, nan=4.5), np.nan_to_num(Xt, nan=4.5)
    for est in (DPDecisionTreeClassifier(epsilon=1.0, bounds=(0, 9), classes=[0, 1],
                                         random_state=0),
                DPRandomForestClassifier(epsilon=1.0, bounds=(0, 9), classes=[0, 1],
                                         random_state=0)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fitted = assert_charges_once(est, X, y, expected_curve=tree_curve(1.0, 1e-5))
        # The missing values filled with 4.5 lose the signal of the third feature's: below
        # by more than two standard errors of a score on 4,000 test rows (0.008 each).
        assert fitted.score(Xt, yt) > clone(est).fit(filled, y).score(filled_t, yt) + 0.02


def _split_draws(extra_row, split_epsilon, n_draws, seed):
    """Root splits of ``n_draws`` nodes of one feature with 3 bins of values and a missing bin.

    Class counts per bin (class 0, class 1): (3, 0), (0, 0), (0, 3), none
    missing; every threshold scores 6 whichever side the missing values go.
    D′ adds one row of class 1 in bin 1 (threshold 1's scores go up by 1), or
    with a missing value (the 'missing right' candidates' scores go up by 1).
    Returns the events 'candidate drawn', one per candidate (a row over the
    4 bins read as the bits of an int).
    """
    bin_ = [0] * 3 + [2] * 3 + {None: [], "value": [1], "missing": [3]}[extra_row]
    label = [0] * 3 + [1] * 3 + ([] if extra_row is None else [1])
    binned = np.array(bin_ * n_draws, dtype=np.uint8)[:, None]
    node = np.repeat(np.arange(n_draws), len(bin_))
    splitter = CountSplitter(split_epsilon=split_epsilon, count_std=1.0, max_features=1,
                             n_features=1)
    table = splitter.split(SparseBins(binned, 4), node, n_draws, np.eye(2)[label * n_draws],
                           None, np.random.default_rng(seed))[1]
    code = table @ np.array([1, 2, 4, 8])
    candidates = [14, 12, 8, 6, 4]  # thresholds 1, 2 (missing right), missing alone, 1, 2 (left)
    assert set(code) <= set(candidates)
    return np.column_stack([code == c for c in candidates])


@pytest.mark.parametrize("factor", [1.0, 4.0])
@pytest.mark.parametrize("extra_row", ["value", "missing"])
def test_split_choice_audit(factor, extra_row):
    """Clopper-Pearson audit of the max-count exponential mechanism, and its power."""
    bound = epsilon_lower_bound(_split_draws(None, factor, 6000, seed=1),
                                _split_draws(extra_row, factor, 6000, seed=2))
    if factor == 1.0:
        assert bound <= 1.0
    else:  # run at 4ε, claimed ε: one score moved by 1 gives log-odds 2ε > ε
        assert bound > 1.0
