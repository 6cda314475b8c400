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
from _testing import (
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


@pytest.mark.parametrize("data", ["missing", "categorical"])
def test_leaves_hold_the_class_counts_of_their_rows(data):
    """The leaves' counts come from the last level's counts, not from the rows moved to the
    leaves: at ε = ∞ (no noise) each leaf's class frequencies are those of the training rows
    that the fitted tree sends to it, exactly. Depth 6, so that some nodes do not split and
    some leaves are empty; missing values, and a categorical feature's sets of codes."""
    if data == "missing":
        X, y = _missing()
        kw = dict(bounds=(0, 9))
    else:
        X, y = _categorical()
        kw = dict(categorical_features=[1], categories=CATEGORIES)
    for est in (DPDecisionTreeClassifier(epsilon=math.inf, max_depth=6, **kw),
                DPRandomForestClassifier(epsilon=math.inf, max_depth=6, n_estimators=3,
                                         random_state=0, **kw)):
        est.fit(X, y)
        binned = est._binned(est._validate_predict_data(X))
        for tree in est._trees:
            leaf = tree.leaf_index(binned)
            counts = np.bincount(leaf * 2 + y, minlength=2 * 64).reshape(64, 2)
            total = counts.sum(axis=1, keepdims=True)
            expected = np.where(total > 0, counts / np.maximum(total, 1), 0.5)
            assert (total == 0).any() and (total > 0).sum() > 8
            np.testing.assert_array_equal(tree.value, expected)


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
                             n_features=1, n_bins=3, n_classes=2)
    table = splitter.split(SparseBins(binned, 4), node, n_draws, np.array(label * n_draws),
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


def test_split_with_drawn_features_is_the_exponential_mechanism():
    """One feature of two drawn per node (probability 1/2 each), then the mechanism over its
    candidates: the law of the drawn (feature, candidate) is the mixture of the two features'
    exponential mechanisms. 20,000 nodes at once, each cell within 4.5 binomial standard
    deviations (6 cells)."""
    eps = 0.9
    # Rows of one node: (bin of feature 0, bin of feature 1, class); bin 2 is a missing value.
    rows = [(0, 1, 0), (0, 0, 0), (1, 1, 1), (1, 0, 1), (0, 2, 0), (1, 1, 1), (2, 0, 0),
            (2, 1, 1), (0, 0, 0)]
    n_nodes = 20_000
    binned = np.array([[b0, b1] for b0, b1, _ in rows] * n_nodes, dtype=np.uint8)
    label = np.array([c for *_, c in rows] * n_nodes)
    node = np.repeat(np.arange(n_nodes), len(rows))
    splitter = CountSplitter(split_epsilon=eps, count_std=1.0, max_features=1, n_features=2,
                             n_bins=2, n_classes=2)
    feature, table = splitter.split(SparseBins(binned, 3), node, n_nodes, label, None,
                                    np.random.default_rng(3))
    # The 3 candidates of a feature with 2 bins, as rows 'goes right' over (bin 0, 1, missing).
    candidates = [[False, True, True], [False, False, True], [False, True, False]]
    expected = []
    for j in (0, 1):
        weights = []
        for right in candidates:
            counts = np.zeros((2, 2))
            for r in rows:
                counts[int(right[r[j]]), r[2]] += 1
            weights.append(math.exp(eps / 2 * counts.max(axis=1).sum()))
        expected += [0.5 * w / sum(weights) for w in weights]
    code = {tuple(c): i for i, c in enumerate(candidates)}
    drawn = [3 * f + code[tuple(t[:3])] for f, t in zip(feature, table)]
    freq = np.bincount(drawn, minlength=6) / n_nodes
    expected = np.array(expected)
    assert np.all(np.abs(freq - expected) <= 4.5 * np.sqrt(expected * (1 - expected) / n_nodes))


# ---------------------------------------------------------------------------------------------
# Categorical features with public categories
# ---------------------------------------------------------------------------------------------

def _categorical(n=4000, seed=0):
    """A numeric feature and a categorical one of 12 coded categories (some missing)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0, 1, n), rng.integers(0, 12, n)]).astype(float)
    X[rng.random(n) < 0.05, 1] = np.nan
    effect = np.random.default_rng(100).normal(0, 1.5, 13)  # 12 categories and the missing
    code = np.where(np.isnan(X[:, 1]), 12, X[:, 1]).astype(int)
    score = 2 * X[:, 0] + effect[code]
    y = (score + rng.logistic(0, 0.3, n) > np.median(score)).astype(int)
    return X, y


CATEGORIES = [list(range(12))]


def test_private_categorical_split_is_the_exponential_mechanism():
    """The drawn (feature, partition) has the law of the mechanism over (s, a, b).

    One numeric feature (max_bins=2: 3 candidates of weight 1) and one categorical of 2
    categories (codes 0, 1 and the missing code 2: 8 patterns s, with the class pairs
    (a, b) = (0, 1), (1, 0), each of weight μ = 3/(8·2)); 8,000 nodes drawn at once.
    """
    eps = 0.8
    # Rows of one node: (numeric bin, code, class); numeric bin 2 is a missing value.
    rows = [(0, 0, 0), (0, 0, 0), (1, 1, 1), (1, 0, 1), (0, 2, 0), (1, 1, 1), (2, 1, 0),
            (2, 2, 1)]
    n_nodes = 8000
    binned = np.array([[b, c] for b, c, _ in rows] * n_nodes, dtype=np.uint8)
    label = np.array([label for *_, label in rows] * n_nodes)
    node = np.repeat(np.arange(n_nodes), len(rows))
    splitter = CountSplitter(split_epsilon=eps, count_std=1.0, max_features=2, n_features=2,
                             n_bins=2, n_classes=2, n_categories=[0, 2])
    feature, table = splitter.split(SparseBins(binned, 3), node, n_nodes, label, None,
                                    np.random.default_rng(0))
    h = eps / 2

    def max_count(goes_right, column):
        left = np.zeros(2)
        right = np.zeros(2)
        for r in rows:
            (right if goes_right[r[column]] else left)[r[2]] += 1
        return left, right

    numeric = [[False, True, True], [False, False, True], [False, True, False]]
    weights = []
    for row in numeric:
        left, right = max_count(row, 0)
        weights.append(math.exp(h * (left.max() + right.max())))
    patterns = [[bool((p >> k) & 1) for k in range(3)] for p in range(8)]
    for row in patterns:
        left, right = max_count(row, 1)
        weights.append(3 / 16 * sum(math.exp(h * (left[a] + right[1 - a])) for a in (0, 1)))
    expected = np.array(weights) / sum(weights)
    code = table[:, :3] @ np.array([1, 2, 4])
    numeric_cell = {int(np.dot(row, [1, 2, 4])): i for i, row in enumerate(numeric)}
    assert set(code[feature == 0]) <= set(numeric_cell)
    drawn = [numeric_cell[c] if f == 0 else 3 + c for f, c in zip(feature, code)]
    freq = np.bincount(drawn, minlength=11) / n_nodes
    # Each frequency within 4.5 binomial standard deviations (11 cells).
    assert np.all(np.abs(freq - expected) <= 4.5 * np.sqrt(expected * (1 - expected) / n_nodes))


def test_epsilon_inf_categorical_split_is_the_best_gini_partition():
    """Two classes: the sorted cut is the best of all 2^7 partitions (Breiman et al. 1984)."""
    X, y = _categorical(n=3000)
    X = X[:, 1:]
    tree = DPDecisionTreeClassifier(epsilon=math.inf, classes=[0, 1], max_depth=1,
                                    categorical_features=[0], categories=[list(range(6))])
    X = np.where(X >= 6, np.nan, X)  # codes 0..5 and the missing
    tree.fit(X, y)
    code = np.where(np.isnan(X[:, 0]), 6, X[:, 0]).astype(int)
    counts = np.stack([np.bincount(code[y == c], minlength=7) for c in (0, 1)], axis=1)

    def gini_score(right):
        sides = [counts[~right].sum(axis=0), counts[right].sum(axis=0)]
        return sum((s**2).sum() / s.sum() for s in sides if s.sum() > 0)

    best = max(gini_score(np.array([bool((p >> k) & 1) for k in range(7)]))
               for p in range(1, 127))
    chosen = tree._trees[0].threshold[0, :7]
    assert gini_score(chosen) == pytest.approx(best, rel=1e-12)


def test_categorical_trees_refuse_unknown_categories_before_the_charge():
    X, y = _categorical(n=500)
    X_unknown = X.copy()
    X_unknown[3, 1] = 12.0  # not among the 12 public categories 0..11
    for est in (DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1],
                                         categorical_features=[1], categories=CATEGORIES),
                DPRandomForestClassifier(bounds=(0, 1), classes=[0, 1],
                                         categorical_features=[1], categories=CATEGORIES)):
        bad = [{"categories": None}, {"categories": [list(range(12)), [0]]},
               {"categories": CATEGORIES, "max_bins": 8}, {"categorical_features": [5]},
               {"categorical_features": None}]
        assert_bad_input_costs_nothing(est, X, y, bad_params=bad, bad_data=[(X_unknown, y)])
        # Without bounds, only the numeric feature's are released, in the one charge.
        _, _, curve = split_curve(0.7, 1e-5, 1, lambda e: tree_curve(e, 1e-5))
        fitted = assert_charges_once(clone(est).set_params(epsilon=0.7, bounds=None), X, y,
                                     expected_curve=curve)
        assert np.isnan(fitted.bounds_[0][1]) and np.isfinite(fitted.bounds_[0][0])
        np.testing.assert_array_equal(fitted.is_categorical_, [False, True])
        # At predict, an unknown category goes where the missing values go.
        Xt = X[:50].copy()
        Xt[:, 1] = np.nan
        unknown = Xt.copy()
        unknown[:, 1] = 40.0
        np.testing.assert_array_equal(fitted.predict_proba(unknown), fitted.predict_proba(Xt))


def test_private_categorical_trees_are_accurate():
    """The 12-category feature at ε = 1 beats its numeric codes (majority class: 0.5)."""
    X, y = _categorical()
    Xt, yt = _categorical(seed=1)
    frame = pd.DataFrame({"x": X[:, 0], "c": pd.Categorical(X[:, 1], categories=range(12))})
    frame_t = pd.DataFrame({"x": Xt[:, 0], "c": pd.Categorical(Xt[:, 1], categories=range(12))})
    codes, codes_t = np.nan_to_num(X / [1, 12], nan=1), np.nan_to_num(Xt / [1, 12], nan=1)
    for est in (DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1], random_state=0),
                DPRandomForestClassifier(bounds=(0, 1), classes=[0, 1], max_features=None,
                                         random_state=0)):
        fitted = clone(est).fit(frame, y)  # categorical_features="from_dtype"
        np.testing.assert_array_equal(fitted.is_categorical_, [False, True])
        # Above the numeric codes by more than two standard errors of a score on 4,000 test
        # rows (0.008 each).
        assert fitted.score(frame_t, yt) > clone(est).fit(codes, y).score(codes_t, yt) + 0.02
