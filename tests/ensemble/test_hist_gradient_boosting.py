"""DPHistGradientBoostingClassifier / Regressor: scikit-learn API, privacy contract, accuracy."""

import math
import pathlib
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, softmax
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_limits

from skdp import PrivacyBudget, PrivacyLeakWarning
from skdp.ensemble import DPHistGradientBoostingClassifier, DPHistGradientBoostingRegressor
from skdp.tree._histogram import SparseBins
from skdp.ensemble._hist_gradient_boosting._privacy import plan_boosting
from skdp.ensemble._hist_gradient_boosting._splitting import ExactSplitter, PrivateSplitter
from skdp.stats._range import split_curve
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
    name = ("check_classifiers_train" if isinstance(est, DPHistGradientBoostingClassifier)
            else "check_regressors_train")
    return {name: "asks for near non-private accuracy on 100-300 rows; at epsilon=1 the noise "
                  "of a leaf sum (std about 10 rows' gradients) is as large as the signal on so "
                  "few rows (test_private_fit_is_accurate checks accuracy on enough rows)"}


@parametrize_with_checks(
    [DPHistGradientBoostingClassifier(random_state=0),
     DPHistGradientBoostingClassifier(epsilon=math.inf),
     DPHistGradientBoostingRegressor(random_state=0),
     DPHistGradientBoostingRegressor(epsilon=math.inf)],
    expected_failed_checks=_expected_failed,
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the checks use classes=None
        check(estimator)


def _classification(n=3000, k=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 4))
    score = 3 * X[:, 0] - 2 * X[:, 1] + 2 * (X[:, 2] > 0.5)
    y = np.digitize(score + rng.logistic(0, 0.3, n), np.quantile(score, np.arange(1, k) / k))
    return X, y


def _regression(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 4))
    y = 10 * (X[:, 0] > 0.5) + 4 * X[:, 1] * X[:, 2] + rng.normal(0, 0.5, n)
    return X, y


SHARED = dict(max_iter=15, learning_rate=0.2, max_depth=3, max_bins=32, l2_regularization=0.5)


@pytest.mark.parametrize("k", [2, 3])
def test_epsilon_inf_is_sklearn_histogram_boosting(k):
    X, y = _classification(k=k)
    ours = DPHistGradientBoostingClassifier(epsilon=math.inf, classes=list(range(k)),
                                            **SHARED).fit(X, y)
    with threadpool_limits(1):  # OpenMP threads on a loaded machine: many times slower
        ref = HistGradientBoostingClassifier(max_leaf_nodes=None, early_stopping=False,
                                             **SHARED).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_epsilon_inf_regressor_is_sklearn():
    X, y = _regression()
    ours = DPHistGradientBoostingRegressor(epsilon=math.inf, **SHARED).fit(X, y)
    with threadpool_limits(1):
        ref = HistGradientBoostingRegressor(max_leaf_nodes=None, early_stopping=False,
                                            **SHARED).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), atol=1e-6)


def test_private_fit_is_accurate():
    X, y = _classification(n=20000, k=2)
    Xt, yt = _classification(n=5000, k=2, seed=1)
    clf = DPHistGradientBoostingClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1],
                                           random_state=0).fit(X, y)
    exact = DPHistGradientBoostingClassifier(epsilon=math.inf, bounds=(0, 1), classes=[0, 1],
                                             random_state=0).fit(X, y)
    # Same defaults without noise: the private model is within 3 points of it.
    assert clf.score(Xt, yt) > exact.score(Xt, yt) - 0.03
    assert clf.score(Xt, yt) > 0.85  # the majority class is 0.5
    X3, y3 = _classification(n=20000, k=3)
    multi = DPHistGradientBoostingClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1, 2],
                                             random_state=0).fit(X3, y3)
    assert multi.score(*_classification(n=5000, k=3, seed=1)) > 0.75  # majority 1/3
    Xr, yr = _regression(n=20000)
    reg = DPHistGradientBoostingRegressor(epsilon=1.0, bounds=(0, 1), bounds_y=(-5, 20),
                                          random_state=0).fit(Xr, yr)
    assert reg.score(*_regression(n=5000, seed=1)) > 0.9


def test_charged_curve_is_the_plan_and_ignores_the_data():
    X, y = _classification(n=500)
    est = DPHistGradientBoostingClassifier(epsilon=0.7, bounds=(0, 1), classes=[0, 1])
    expected = plan_boosting(0.7, 1e-5).curve()
    fitted = assert_charges_once(est, X, y, expected_curve=expected)
    assert fitted.epsilon_spent_ == pytest.approx(0.7, rel=1e-6)
    assert fitted.epsilon_spent_ <= 0.7
    # Other rows, another size, other labels: the same curve.
    X2, y2 = _classification(n=1700, seed=5)
    assert_charges_once(est, 100 * X2, 1 - y2, expected_curve=expected)
    # Without public bounds: the private bounds' curve composed in the same charge.
    _, _, with_bounds = split_curve(0.7, 1e-5, X.shape[1],
                                    lambda e: plan_boosting(e, 1e-5).curve())
    fitted = assert_charges_once(est.set_params(bounds=None), X, y, expected_curve=with_bounds)
    assert fitted.epsilon_spent_ <= 0.7
    # The regressor without bounds_y releases the target's bounds in that charge too.
    Xr, yr = _regression(n=500)
    _, _, reg_curve = split_curve(0.7, 1e-5, 1, lambda e: plan_boosting(e, 1e-5).curve())
    reg = DPHistGradientBoostingRegressor(epsilon=0.7, bounds=(0, 1))
    fitted = assert_charges_once(reg, Xr, yr, expected_curve=reg_curve)
    # Released bounds: 0 or ± powers of two, 0.5% of the noisy mass trimmed at each end.
    assert fitted.bounds_y_[0] <= 1 and fitted.bounds_y_[1] >= 8
    assert np.all(fitted.predict(Xr) >= fitted.bounds_y_[0])
    assert np.all(fitted.predict(Xr) <= fitted.bounds_y_[1])


def test_plan_meets_epsilon_at_every_scale():
    for eps in (0.01, 0.1, 1.0, 8.0):
        curve = plan_boosting(eps, 1e-5).curve()
        assert eps * (1 - 1e-6) <= curve.epsilon(1e-5) <= eps


def test_bad_input_costs_nothing():
    X, y = _classification(n=200)
    clf = DPHistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1])
    bad = [{"epsilon": 0}, {"epsilon": -1.0}, {"delta": 0.0}, {"delta": 1.0}, {"max_iter": 0},
           {"max_iter": 2.5}, {"max_depth": 0}, {"max_depth": 13}, {"max_bins": 1},
           {"max_bins": 256}, {"learning_rate": 0.0}, {"learning_rate": math.nan},
           {"l2_regularization": -1.0}, {"min_samples_leaf": 0}, {"bounds": (1, 0)},
           {"bounds": (0, math.inf)}, {"classes": [0, 2]}, {"random_state": "seed"}]
    X_inf = X.copy()
    X_inf[3, 1] = -np.inf  # NaN is a missing value; ±inf is refused
    assert_bad_input_costs_nothing(clf, X, y, bad_params=bad,
                                   bad_data=[(X_inf, y), (X[:, :, None], y), (X, y[:-1])])
    reg = DPHistGradientBoostingRegressor(bounds=(0, 1))
    Xr, yr = _regression(n=200)
    assert_bad_input_costs_nothing(
        reg, Xr, yr, bad_params=[{"bounds_y": (3, 1)}, {"bounds_y": 5}, {"delta": 0.0}],
        bad_data=[(Xr, yr.astype(str)), (Xr, np.where(np.arange(200) == 7, np.inf, yr))])


def test_random_state_is_checked_before_the_charge():
    # check_generator runs after the charge in other estimators; here a bad seed must not cost.
    budget = PrivacyBudget(10.0, 1e-5)
    X, y = _classification(n=200)
    with pytest.raises(ValueError):
        DPHistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1], budget=budget,
                                         random_state="seed").fit(X, y)
    assert len(budget) == 0


def test_refused_fit_fits_nothing():
    X, y = _classification(n=200)
    assert_refused_fit_fits_nothing(
        DPHistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1]), X, y)
    assert_refused_fit_fits_nothing(DPHistGradientBoostingRegressor(bounds=(0, 1)),
                                    *_regression(n=200))


def test_pandas_input_and_fixed_seeds():
    X, y = _classification(n=1000)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    clf = DPHistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1], random_state=3)
    one = clf.fit(frame, pd.Series(y)).predict_proba(frame)
    assert list(clf.feature_names_in_) == ["a", "b", "c", "d"]
    two = DPHistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1],
                                           random_state=3).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(one, two)
    other = DPHistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1],
                                             random_state=4).fit(X, y).predict_proba(X)
    assert not np.array_equal(one, other)


def test_gradient_and_hessian_sensitivities():
    """The bounds the noise is calibrated to hold for any raw scores and labels."""
    rng = np.random.default_rng(0)
    raw = rng.normal(0, 30, size=(20000, 5))
    y = rng.integers(0, 5, 20000)
    p = softmax(raw, axis=1)
    g = p - np.eye(5)[y]
    h = p * (1 - p)
    assert np.max(np.sum(g**2, axis=1)) <= 2.0  # the multiclass gradient sensitivity √2
    assert np.max(np.sum(h**2, axis=1)) <= 0.25  # the multiclass hessian sensitivity 1/2
    pb = expit(raw[:, 0])
    assert np.max(np.abs(pb - (y % 2))) <= 1.0 and np.max(pb * (1 - pb)) <= 0.25
    # Regression: the fitted model's raw scores stay clipped to [0, 1] for the gradients.
    Xr, yr = _regression(n=2000)
    reg = DPHistGradientBoostingRegressor(epsilon=0.5, bounds=(0, 1), bounds_y=(0, 5),
                                          learning_rate=2.0, random_state=0).fit(Xr, 10 * yr)
    assert np.all((reg.predict(Xr) >= 0) & (reg.predict(Xr) <= 5))


# A root split of one feature with 3 bins of values and the missing bin, as a row over the 4
# bins (True: goes right) read as the bits of an int: the feature's 5 candidates (_candidates).
CANDIDATE_CODES = {"1, missing right": 14, "2, missing right": 12, "missing alone right": 8,
                   "1, missing left": 6, "2, missing left": 4}


def _split_draws(extra_row, split_epsilon, n_draws, seed):
    """Root splits of ``n_draws`` nodes on D, or on D plus one row of gradient 1.

    D: value-bin sums (−3, 0, +3), no missing value; every threshold scores 6
    whichever side the missing values go. The added row in bin 1 raises
    threshold 1's scores by 1 and lowers threshold 2's by 1; the added row
    with a missing value raises the scores of every 'missing right'
    candidate by 1 and lowers the 'missing left' ones by 1: the largest moves
    the exponential mechanism allows.
    """
    bin_ = [0] * 3 + [1] * 2 + [2] * 3 + {None: [], "value": [1], "missing": [3]}[extra_row]
    g = [-1.0] * 3 + [0.0] * 2 + [1.0] * 3 + ([] if extra_row is None else [1.0])
    binned = np.array(bin_ * n_draws, dtype=np.uint8)[:, None]
    node = np.repeat(np.arange(n_draws), len(bin_))
    splitter = PrivateSplitter(split_epsilon=split_epsilon, grad_std=1.0, hess_std=1.0,
                               l2_regularization=0.0, n_bins=3)
    table = splitter.split(SparseBins(binned, 4), node, n_draws, np.array(g * n_draws), None,
                           np.random.default_rng(seed))[1]
    code = table @ np.array([1, 2, 4, 8])
    assert set(code) <= set(CANDIDATE_CODES.values())
    return np.column_stack([code == c for c in CANDIDATE_CODES.values()])


@pytest.mark.parametrize("factor", [1.0, 2.0])
@pytest.mark.parametrize("extra_row", ["value", "missing"])
def test_split_choice_audit(factor, extra_row):
    """Clopper-Pearson audit of the exponential mechanism's split at ε_s = 1 (and its power).

    The neighbour adds a row with a value, or with a missing value: the
    direction of the missing values is chosen with the threshold at no
    further cost.
    """
    eps = 1.0
    events0 = _split_draws(None, factor * eps, 6000, seed=1)
    events1 = _split_draws(extra_row, factor * eps, 6000, seed=2)
    bound = epsilon_lower_bound(events0, events1)
    if factor == 1.0:
        assert bound <= eps
    else:  # run at 2ε, claimed ε: the audit must catch it
        assert bound > eps


def test_gradient_bound_scales_the_split_score():
    """Gradients bounded by Δ: the mechanism on g/Δ with sensitivity 1, draw for draw."""
    rng = np.random.default_rng(0)
    binned = rng.integers(0, 5, size=(3000, 3)).astype(np.uint8)
    binned[rng.random(3000) < 0.1, 0] = 4  # the missing bin of max_bins=4
    g = np.clip(rng.normal(0, 0.2, 3000) + 0.1 * binned[:, 1], -0.25, 0.25)
    node = rng.integers(0, 4, 3000)
    draws = []
    for bound, grad in ((1.0, g / 0.25), (0.25, g)):
        splitter = PrivateSplitter(split_epsilon=0.5, grad_std=1.0, hess_std=1.0,
                                   l2_regularization=0.0, n_bins=4, n_categories=[0, 0, 3],
                                   gradient_bound=bound)
        draws.append(splitter.split(SparseBins(binned, 5), node, 4, grad, None,
                                    np.random.default_rng(1)))
    np.testing.assert_array_equal(draws[0][0], draws[1][0])
    np.testing.assert_array_equal(draws[0][1], draws[1][1])


def test_regressor_clips_its_gradients_to_a_quarter():
    """The leaf noise is calibrated to gradients in [−1/4, 1/4]; the fit follows them."""
    from skdp.ensemble._hist_gradient_boosting.gradient_boosting import GRADIENT_CLIP

    assert GRADIENT_CLIP == 0.25
    Xr, yr = _regression(n=2000)
    reg = DPHistGradientBoostingRegressor(epsilon=0.5, bounds=(0, 1), bounds_y=(-5, 20),
                                          random_state=0).fit(Xr, yr)
    plan = plan_boosting(0.5, 1e-5)
    assert reg.leaf_noise_std_ == plan.leaf_stds(reg.max_iter, 0.25, 1.0)
    assert reg.split_epsilon_ == plan.split_epsilon(reg.max_iter * reg.max_depth)
    assert reg.score(Xr, yr) > 0.8


def test_leaf_noise_has_the_planned_std():
    rng = np.random.default_rng(0)
    splitter = PrivateSplitter(split_epsilon=1.0, grad_std=3.0, hess_std=0.5,
                               l2_regularization=0.0, n_bins=2)
    leaf = np.zeros(10, dtype=np.int64)
    draws = np.array([splitter.leaves(leaf, 1, np.ones(10), np.ones(10), rng)
                      for _ in range(4000)])[:, :, 0]
    # std of a sample std of 4000 normals is about σ/√8000: 5 of them is a loose bound.
    assert abs(draws[:, 0].std() - 3.0) < 5 * 3.0 / math.sqrt(8000)
    assert abs(draws[:, 1].std() - 0.5) < 5 * 0.5 / math.sqrt(8000)
    assert abs(draws[:, 0].mean() - 10) < 5 * 3.0 / math.sqrt(4000)


# ---------------------------------------------------------------------------------------------
# Categorical features with public categories
# ---------------------------------------------------------------------------------------------

def _categorical(n=3000, seed=0, missing=0.05):
    """Two numeric features and two categorical ones (5 and 12 coded categories, some NaN)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0, 1, n), rng.integers(0, 5, n), rng.uniform(0, 1, n),
                         rng.integers(0, 12, n)]).astype(float)
    X[rng.random(n) < missing, 3] = np.nan
    effect = np.random.default_rng(100).normal(0, 1.5, 13)  # 12 categories and the missing
    code = np.where(np.isnan(X[:, 3]), 12, X[:, 3]).astype(int)
    score = 2 * X[:, 0] + np.array([0, 1.5, -1, 0.5, 2])[X[:, 1].astype(int)] + effect[code]
    y = (score + rng.logistic(0, 0.5, n) > np.median(score)).astype(int)
    return X, y


CATEGORIES = [list(range(5)), list(range(12))]


def _unknown_and_missing(X):
    """Test rows: codes unknown at fit (7 and 40) and missing values (NaN)."""
    Xt = X[:300].copy()
    Xt[:50, 1] = 7
    Xt[50:100, 3] = np.nan
    Xt[100:150, 3] = 40
    return Xt


def test_epsilon_inf_categorical_is_sklearn():
    """Sorted-category splits, missing codes and unknown categories as scikit-learn's.

    Same tolerance as the numeric tests: the same sums in another order, 15 rounds.
    """
    X, y = _categorical()
    ours = DPHistGradientBoostingClassifier(epsilon=math.inf, classes=[0, 1],
                                            categorical_features=[1, 3], categories=CATEGORIES,
                                            **SHARED).fit(X, y)
    with threadpool_limits(1):
        ref = HistGradientBoostingClassifier(max_leaf_nodes=None, early_stopping=False,
                                             categorical_features=[1, 3], **SHARED).fit(X, y)
    Xt = _unknown_and_missing(X)
    np.testing.assert_allclose(ours.predict_proba(Xt), ref.predict_proba(Xt), atol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    # The regressor on a DataFrame: a Categorical dtype whose last category never occurs at fit
    # (scikit-learn, which learns categories from the rows, treats it as unknown at predict).
    rng = np.random.default_rng(1)
    letters = list("abcdefgh")
    frame = pd.DataFrame({"x": X[:, 0], "c": pd.Categorical(rng.choice(letters[:7], 3000),
                                                            categories=letters)})
    frame.loc[rng.random(3000) < 0.03, "c"] = None
    effect = np.random.default_rng(2).normal(0, 2, 9)  # 8 categories and the missing (code -1)
    target = 3 * frame.x + effect[frame.c.cat.codes.to_numpy()]
    reg = DPHistGradientBoostingRegressor(epsilon=math.inf, **SHARED).fit(frame, target)
    with threadpool_limits(1):
        ref = HistGradientBoostingRegressor(max_leaf_nodes=None, early_stopping=False,
                                            **SHARED).fit(frame, target)
    test = frame[:200].copy()
    test["c"] = test["c"].cat.add_categories(["zz"])
    test.loc[:30, "c"] = "h"
    test.loc[30:60, "c"] = "zz"
    np.testing.assert_array_equal(reg.is_categorical_, [False, True])
    np.testing.assert_allclose(reg.predict(test), ref.predict(test), atol=1e-6)


def test_categorical_features_mask_indices_names_and_dtype_agree():
    X, y = _categorical(n=2000)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    kw = dict(epsilon=1.0, bounds=(0, 1), classes=[0, 1], random_state=0)
    Xt = _unknown_and_missing(X)
    ref = DPHistGradientBoostingClassifier(categorical_features=[1, 3], categories=CATEGORIES,
                                           **kw).fit(X, y).predict_proba(Xt)
    test_frame = pd.DataFrame(Xt, columns=["a", "b", "c", "d"])
    for spec, data, test in (([False, True, False, True], X, Xt), (np.array([1, 3]), X, Xt),
                             (["b", "d"], frame, test_frame)):
        est = DPHistGradientBoostingClassifier(categorical_features=spec, categories=CATEGORIES,
                                               **kw).fit(data, y)
        np.testing.assert_array_equal(est.predict_proba(test), ref)
    # The categories of a pandas Categorical dtype (categorical_features="from_dtype").
    typed = frame.copy()
    for name, cats in zip(["b", "d"], CATEGORIES):
        typed[name] = pd.Categorical(frame[name], categories=[float(c) for c in cats])
    got = DPHistGradientBoostingClassifier(**kw).fit(typed, y)
    np.testing.assert_array_equal(got.is_categorical_, [False, True, False, True])
    test = typed.iloc[:150]
    same = got.predict_proba(test.assign(
        b=pd.Categorical(Xt[:150, 1], categories=[0.0, 1, 2, 3, 4, 7]),
        d=pd.Categorical(Xt[:150, 3], categories=[float(c) for c in range(12)] + [40.0])))
    np.testing.assert_array_equal(same, ref[:150])


def test_unknown_category_is_refused_before_the_charge():
    X, y = _categorical(n=500)
    clf = DPHistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1],
                                           categorical_features=[1, 3], categories=CATEGORIES)
    X_unknown = X.copy()
    X_unknown[7, 3] = 12.0  # not among the 12 public categories 0..11
    X_inf_numeric = X.copy()
    X_inf_numeric[4, 0] = np.inf
    bad = [{"categories": None}, {"categories": [list(range(5))]},
           {"categories": [[0, 1, 1, 2, 3, 4], list(range(12))]},
           {"categories": [list(range(5)), [0, 1, np.nan]]},
           {"categories": CATEGORIES, "max_bins": 8},  # 12 categories > max_bins
           {"categorical_features": ["b", "d"]},  # names without a DataFrame
           {"categorical_features": [1, 9]}, {"categorical_features": [True, False]},
           {"categorical_features": "auto"},
           {"categorical_features": None}]  # categories given, no categorical feature
    assert_bad_input_costs_nothing(clf, X, y, bad_params=bad,
                                   bad_data=[(X_unknown, y), (X_inf_numeric, y)])
    budget = PrivacyBudget(10.0, 1e-5)
    with pytest.raises(ValueError, match="outside its public categories.*nothing was charged"):
        clf.set_params(budget=budget).fit(X_unknown, y)
    assert len(budget) == 0
    # A pandas Categorical column built from the rows is public only by declaration; a column
    # without a Categorical dtype and without categories is refused (nothing read from it).
    frame = pd.DataFrame({"a": X[:, 0], "s": np.where(X[:, 1] > 2, "u", "v")})
    with pytest.raises(ValueError, match="no public categories"):
        DPHistGradientBoostingClassifier(classes=[0, 1], categorical_features=["s"],
                                         budget=budget).fit(frame, y)
    assert len(budget) == 0


def test_categorical_curve_releases_only_the_numeric_bounds():
    X, y = _categorical(n=500)
    est = DPHistGradientBoostingClassifier(epsilon=0.7, classes=[0, 1],
                                           categorical_features=[1, 3], categories=CATEGORIES)
    _, _, curve = split_curve(0.7, 1e-5, 2, lambda e: plan_boosting(e, 1e-5).curve())
    fitted = assert_charges_once(est, X, y, expected_curve=curve)
    assert np.isnan(fitted.bounds_[0][[1, 3]]).all()
    assert np.isfinite(fitted.bounds_[0][[0, 2]]).all()
    assert np.isnan(fitted.bin_edges_[[1, 3]]).all()
    # Every feature categorical: no bounds to release, the boosting's curve alone.
    only = DPHistGradientBoostingClassifier(epsilon=0.7, classes=[0, 1],
                                            categorical_features=[0, 1], categories=CATEGORIES)
    assert_charges_once(only, X[:, [1, 3]], y, expected_curve=plan_boosting(0.7, 1e-5).curve())


def test_private_categorical_split_is_the_exponential_mechanism():
    """The sampled (feature, sign pattern) has the exponential mechanism's exact law.

    One numeric feature (max_bins=2: the threshold with the missing values right or left,
    and the split on missing values; base weight 1/3 each) and one categorical of 2
    categories (codes 0, 1 and the missing code 2: 8 sign patterns, base weight 1/8 each).
    The 11 probabilities ∝ μ·exp(ε_s·u/2); 8,000 nodes drawn at once.
    """
    eps = 0.8
    # Rows of one node: (numeric bin, code, gradient); numeric bin 2 is a missing value.
    rows = [(0, 0, 1.0), (0, 0, 1.0), (1, 1, -1.0), (1, 0, 0.5), (0, 2, -1.0), (1, 1, -1.0),
            (2, 1, 0.5), (2, 0, 1.0)]
    n_nodes = 8000
    binned = np.array([[b, c] for b, c, _ in rows] * n_nodes, dtype=np.uint8)
    g = np.array([v for *_, v in rows] * n_nodes)
    node = np.repeat(np.arange(n_nodes), len(rows))
    splitter = PrivateSplitter(split_epsilon=eps, grad_std=1.0, hess_std=1.0,
                               l2_regularization=0.0, n_bins=2, n_categories=[0, 2])
    feature, table = splitter.split(SparseBins(binned, 3), node, n_nodes, g, g,
                                    np.random.default_rng(0))
    G_num = np.array([sum(v for b, _, v in rows if b == k) for k in (0, 1, 2)])
    G_cat = np.array([sum(v for _, c, v in rows if c == k) for k in (0, 1, 2)])
    total = G_num.sum()
    # The numeric candidates' left sums: bin 0 (missing right), bins 0-1 (missing alone
    # right), bin 0 with the missing values.
    numeric = [(G_num[0], [False, True, True]), (G_num[:2].sum(), [False, False, True]),
               (G_num[0] + G_num[2], [False, True, False])]
    logits = [math.log(1 / 3) + 0.5 * eps * (abs(gl) + abs(total - gl)) for gl, _ in numeric]
    patterns = np.array([[(p >> k) & 1 for k in range(3)] for p in range(8)], dtype=bool)
    logits += [math.log(1 / 8) + 0.5 * eps * np.sum(np.where(p, 1, -1) * G_cat) for p in patterns]
    expected = softmax(np.array(logits))
    code = (table[:, :3] * [1, 2, 4]).sum(axis=1)
    numeric_cell = {int(np.dot(row, [1, 2, 4])): i for i, (_, row) in enumerate(numeric)}
    assert set(code[feature == 0]) <= set(numeric_cell)
    drawn = [numeric_cell[c] if f == 0 else 3 + c for f, c in zip(feature, code)]
    freq = np.bincount(drawn, minlength=11) / n_nodes
    # Each frequency within 4.5 binomial standard deviations (11 cells).
    assert np.all(np.abs(freq - expected) <= 4.5 * np.sqrt(expected * (1 - expected) / n_nodes))


def test_private_categorical_fit_is_accurate():
    """The signal of a 12-category feature is found at ε = 1 (majority class: 0.5)."""
    X, y = _categorical(n=20000)
    Xt, yt = _categorical(n=5000, seed=1)
    kw = dict(epsilon=1.0, bounds=(0, 1), classes=[0, 1], random_state=0)
    clf = DPHistGradientBoostingClassifier(categorical_features=[1, 3], categories=CATEGORIES,
                                           **kw).fit(X, y)
    exact = DPHistGradientBoostingClassifier(categorical_features=[1, 3], categories=CATEGORIES,
                                             **{**kw, "epsilon": math.inf}).fit(X, y)
    assert clf.score(Xt, yt) > exact.score(Xt, yt) - 0.03
    # The same table with the two features as numeric codes (splits between codes only):
    # above it by more than two standard errors of a score on 5,000 test rows (0.005 each).
    numeric = DPHistGradientBoostingClassifier(**kw).fit(np.nan_to_num(X / [1, 4, 1, 12], nan=1),
                                                       y)
    assert clf.score(Xt, yt) > numeric.score(np.nan_to_num(Xt / [1, 4, 1, 12], nan=1), yt) + 0.01


# ---------------------------------------------------------------------------------------------
# Missing values of numeric features
# ---------------------------------------------------------------------------------------------

def _missing(n=3000, k=2, seed=0):
    """Four numeric features, three with missing values (the first's carry signal)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 4))
    X[:, 3] = rng.integers(0, 5, n)
    missing = rng.random((n, 4)) < [0.2, 0.0, 0.05, 0.1]
    score = 3 * X[:, 0] - 2 * X[:, 1] + 2 * (X[:, 2] > 0.5) + 1.5 * missing[:, 0] - missing[:, 3]
    X[missing] = np.nan
    y = np.digitize(score + rng.logistic(0, 0.3, n), np.quantile(score, np.arange(1, k) / k))
    return X, y, score


def _missing_test_rows(X):
    """Test rows with missing values where the fit had none (feature 1) and where it had."""
    Xt = X[:400].copy()
    Xt[:100, 1] = np.nan
    Xt[100:200, 2] = np.nan
    return Xt


@pytest.mark.parametrize("k", [2, 3])
def test_epsilon_inf_missing_values_is_sklearn(k):
    """The missing bin and its direction as scikit-learn's, at the numeric tests' tolerance."""
    X, y, score = _missing(k=k)
    Xt = _missing_test_rows(X)
    ours = DPHistGradientBoostingClassifier(epsilon=math.inf, classes=list(range(k)),
                                            **SHARED).fit(X, y)
    with threadpool_limits(1):
        ref = HistGradientBoostingClassifier(max_leaf_nodes=None, early_stopping=False,
                                             **SHARED).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(Xt), ref.predict_proba(Xt), atol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    if k == 2:
        target = score + np.random.default_rng(1).normal(0, 0.3, score.size)
        reg = DPHistGradientBoostingRegressor(epsilon=math.inf, **SHARED).fit(X, target)
        with threadpool_limits(1):
            ref = HistGradientBoostingRegressor(max_leaf_nodes=None, early_stopping=False,
                                                **SHARED).fit(X, target)
        np.testing.assert_allclose(reg.predict(Xt), ref.predict(Xt), atol=1e-6)


@pytest.mark.parametrize("round_off", [-1e-9, 0.0, 1e-9])
def test_epsilon_inf_node_without_missing_values_sends_them_right(round_off):
    # A node without missing rows, of a feature that had some at fit: scikit-learn keeps the
    # first scan's split (missing right), whatever the missing bin's gradient sum, which the
    # most-common-bin fill leaves a round-off away from 0 (and the chunks of a dask fit
    # another round-off).
    C = np.array([[[10.0, 0.0, 0.0, 20.0, 0.0]]])
    G = np.array([[[-10.0, 0.0, 0.0, 10.0, round_off]]])
    H = 0.25 * C
    sums = (G, G.sum(axis=2)[:, 0], H, H.sum(axis=2)[:, 0], C, C.sum(axis=2)[:, 0])
    splitter = ExactSplitter(l2_regularization=0.0, min_samples_leaf=1, n_bins=4,
                             seen=np.ones((1, 5), dtype=bool))
    feature, table = splitter.choose(sums, None)
    assert feature.tolist() == [0]
    assert table[0].tolist() == [False, True, True, True, True]  # bins >= 1 and missing right


def test_missing_values_change_no_cost_and_no_attribute():
    """Rows with NaN: the same curve, the same attributes, no warning after the charge."""
    X, y, _ = _missing(n=600)
    full = np.nan_to_num(X, nan=0.5)
    for est, expected in (
            (DPHistGradientBoostingClassifier(epsilon=0.7, bounds=(0, 4), classes=[0, 1],
                                              random_state=0), plan_boosting(0.7, 1e-5).curve()),
            (DPHistGradientBoostingClassifier(epsilon=0.7, classes=[0, 1], random_state=0),
             split_curve(0.7, 1e-5, 4, lambda e: plan_boosting(e, 1e-5).curve())[2])):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with_nan = assert_charges_once(est, X, y, expected_curve=expected)
            attributes = set(vars(with_nan))
            without = assert_charges_once(est, full, y, expected_curve=expected)
        assert set(vars(without)) == attributes
        assert np.isfinite(with_nan.bin_edges_).all() and np.isfinite(with_nan.bounds_).all()
        # Whatever the fit, a missing value at predict goes down one side of every split.
        assert np.isfinite(without.predict_proba(np.full((3, 4), np.nan))).all()


def test_private_fit_finds_the_missing_values_signal():
    """The missingness of feature 0 moves the score by 1.5: found at ε = 1."""
    X, y, _ = _missing(n=20000)
    Xt, yt, _ = _missing(n=5000, seed=1)
    kw = dict(epsilon=1.0, bounds=(0, 4), classes=[0, 1], random_state=0)
    clf = DPHistGradientBoostingClassifier(**kw).fit(X, y)
    exact = DPHistGradientBoostingClassifier(**{**kw, "epsilon": math.inf}).fit(X, y)
    assert clf.score(Xt, yt) > exact.score(Xt, yt) - 0.03
    # The missing values of feature 0 replaced by its mean (no signal left in them): below
    # by more than two standard errors of a score on 5,000 test rows (0.005 each).
    imputed = DPHistGradientBoostingClassifier(**kw).fit(np.nan_to_num(X, nan=0.5), y)
    assert clf.score(Xt, yt) > imputed.score(np.nan_to_num(Xt, nan=0.5), yt) + 0.01
