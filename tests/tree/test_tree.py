"""DPDecisionTreeClassifier and DPRandomForestClassifier: API, privacy contract, accuracy."""

import math
import pathlib
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
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
                                   X, y, bad_params=bad, bad_data=[(X[:, :1] * np.nan, y)])
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


def _split_draws(extra_row, split_epsilon, n_draws, seed):
    """Root split of one feature with 3 bins; D′ adds one row of class 1 in bin 1.

    Class counts per bin (class 0, class 1): (3, 0), (0, 0), (0, 3). Both
    thresholds score 6; the added row raises one by 1 and leaves the other.
    """
    binned = np.array([[0]] * 3 + [[2]] * 3, dtype=np.uint8)
    label = np.array([0] * 3 + [1] * 3)
    if extra_row:
        binned = np.vstack([binned, [[1]]]).astype(np.uint8)
        label = np.append(label, 1)
    Y = np.eye(2)[label]
    bins = SparseBins(binned, 3)
    splitter = CountSplitter(split_epsilon=split_epsilon, count_std=1.0, max_features=1,
                             n_features=1)
    rng = np.random.default_rng(seed)
    node = np.zeros(len(label), dtype=np.int64)
    return np.array([splitter.split(bins, node, 1, Y, None, rng)[1][0] for _ in range(n_draws)])


@pytest.mark.parametrize("factor", [1.0, 4.0])
def test_split_choice_audit(factor):
    """Clopper-Pearson audit of the max-count exponential mechanism, and its power."""
    t0 = _split_draws(False, factor, 6000, seed=1)
    t1 = _split_draws(True, factor, 6000, seed=2)
    bound = epsilon_lower_bound(np.column_stack([t0 == 1, t0 == 2]),
                                np.column_stack([t1 == 1, t1 == 2]))
    if factor == 1.0:
        assert bound <= 1.0
    else:  # run at 4ε, claimed ε: one score moved by 1 gives log-odds 2ε > ε
        assert bound > 1.0
