"""The boosting on dask rows (de6827c, e2de04c, f992ce0): a review.

- One validation pass reads the chunks before the charge; every later pass
  comes after it, with the in-memory fit's curve. NaN in y, a wrong shape or
  length, infinity and labels outside ``classes`` are refused before it.
- Values that change after the checks raise and warn nothing: a target
  outside ``bounds_y`` (or NaN, ±inf) is the clipped target of the in-memory
  fit, and a label outside ``classes`` (numbers, or a NaN, None or number in
  a column of strings) counts in no class or a neighbouring one.
- The splits and the noise are drawn on the client: the generator ends in
  the same state on neighbouring datasets and as in memory.
- Chunks of one and zero rows, a chunk whose column is all NaN: the
  in-memory model; predictions are lazy (nothing computed until asked).
- At epsilon=inf, missing values that reach a node without any at fit
  follow scikit-learn's HistGradientBoosting* (the count rule of de6827c).
"""

import math
import warnings

import dask
import dask.array as da
import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

from skdp import PrivacyBudget
from skdp.ensemble import DPHistGradientBoostingClassifier, DPHistGradientBoostingRegressor

RNG = np.random.default_rng(0)
X = RNG.normal(size=(400, 3))
X[RNG.random(X.shape) < 0.1] = np.nan
FILLED = np.nan_to_num(X)
Y_CLASS = (FILLED[:, 0] + RNG.normal(0, 0.5, 400) > 0).astype(int)
Y_THREE = np.digitize(FILLED[:, 1] + RNG.normal(0, 0.5, 400), [-0.5, 0.5])
Y_REAL = FILLED @ [1.0, 2.0, -1.0] + RNG.normal(size=400)
SMALL = dict(max_iter=2, max_depth=2, max_bins=16)


def _classifier(**kw):
    return DPHistGradientBoostingClassifier(
        **{"classes": [0, 1], "bounds": (-3, 3), "random_state": 3, **SMALL, **kw})


def _regressor(**kw):
    return DPHistGradientBoostingRegressor(
        **{"bounds": (-3, 3), "bounds_y": (-4, 4), "random_state": 3, **SMALL, **kw})


def _exact(**kw):
    """The classifier at epsilon=inf (no budget: nothing to charge)."""
    kw.pop("budget", None)
    return _classifier(epsilon=math.inf, **kw)


def _watched(values, budget, seen, change=None):
    """A dask array of ``values`` (2 chunks) whose first chunk records the charges at each read.

    ``change(chunk)`` edits the first chunk at every read after the first one
    (a graph whose values change after the checks).
    """
    def first():
        seen.append(len(budget))
        out = values[:200].copy()
        if change is not None and len(seen) > 1:
            change(out)
        return out

    shape = (200,) + values.shape[1:]
    head = da.from_delayed(dask.delayed(first)(), shape=shape, dtype=values.dtype)
    return da.concatenate([head, da.from_array(values[200:], chunks=(200,) + values.shape[1:])])


def _same_trees(a, b):
    for round_a, round_b in zip(a._predictors, b._predictors, strict=True):
        for tree_a, tree_b in zip(round_a, round_b, strict=True):
            np.testing.assert_array_equal(tree_b.feature, tree_a.feature)
            np.testing.assert_array_equal(tree_b.threshold, tree_a.threshold)
            np.testing.assert_allclose(tree_b.value, tree_a.value, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b._baseline, a._baseline, rtol=1e-12)


@pytest.mark.parametrize("make, y, bounds", [
    (_classifier, Y_CLASS, (-3, 3)), (_classifier, Y_CLASS, None),
    (_regressor, Y_REAL, (-3, 3)), (lambda **kw: _regressor(**{"bounds_y": None, **kw}), Y_REAL,
                                    None)])
def test_one_validation_pass_before_the_charge_and_every_other_after(make, y, bounds):
    budget, seen = PrivacyBudget(10.0, 1e-5), []
    with dask.config.set(scheduler="synchronous"):
        got = make(budget=budget, bounds=bounds).fit(_watched(X, budget, seen),
                                                     da.from_array(y, chunks=200))
    assert seen[0] == 0 and seen.count(0) == 1  # the finiteness and labels pass alone
    assert len(seen) > 2 and set(seen[1:]) == {1}
    ref_budget = PrivacyBudget(10.0, 1e-5)
    ref = make(budget=ref_budget, bounds=bounds).fit(X, y)
    assert got.privacy_curve_ == ref.privacy_curve_ and budget.spent() == ref_budget.spent()
    _same_trees(ref, got)


@pytest.mark.parametrize("make, y, error", [
    (_classifier, np.where(np.arange(400) == 5, np.nan, Y_CLASS.astype(float)), "NaN"),
    (_regressor, np.where(np.arange(400) == 5, np.nan, Y_REAL), "NaN"),
    (_regressor, np.where(np.arange(400) == 5, -np.inf, Y_REAL), "infinity"),
    (_classifier, np.where(np.arange(400) == 5, 2, Y_CLASS), "labels not in classes"),
    (_classifier, np.column_stack([Y_CLASS, Y_CLASS]), "1d array"),
    (_regressor, Y_REAL[:-1], "inconsistent numbers of samples"),
])
def test_bad_targets_are_refused_before_the_charge(make, y, error):
    budget, seen = PrivacyBudget(10.0, 1e-5), []
    y_lazy = da.from_array(y, chunks=(200,) + y.shape[1:] if y.shape[0] == 400 else -1)
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match=error):
        make(budget=budget).fit(_watched(X, budget, seen), y_lazy)
    assert len(budget) == 0 and set(seen) <= {0} and len(seen) <= 1


def _fit_flaky(make, y, change, y_dtype=None):
    budget, seen = PrivacyBudget(10.0, 1e-5), []
    y = y if y_dtype is None else y.astype(y_dtype)
    rng = np.random.default_rng(11)
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("error")
        model = make(budget=budget, random_state=rng).fit(
            da.from_array(X, chunks=200), _watched(y, budget, seen, change))
    assert len(budget) == 1 and len(seen) > 2  # the change reached the passes after the charge
    return model, rng.bit_generator.state


@pytest.mark.parametrize("bad, clipped", [(1e300, 4.0), (-np.inf, -4.0), (np.nan, 0.0),
                                          (4.5, 4.0)])
def test_a_target_changed_after_the_checks_is_clipped_as_in_memory(bad, clipped):
    def change(chunk):
        chunk[7] = bad

    got, _ = _fit_flaky(_regressor, Y_REAL, change)
    y = Y_REAL.copy()
    y[7] = clipped
    ref = _regressor(budget=PrivacyBudget(10.0, 1e-5), random_state=np.random.default_rng(11))
    _same_trees(ref.fit(X, y), got)


@pytest.mark.parametrize("labels, classes, bad", [
    (Y_CLASS, [0, 1], 7), (Y_CLASS, [0, 1], -1), (Y_CLASS.astype(float), [0, 1], 0.5),
    (Y_THREE, [0, 1, 2], 9),
    (np.where(Y_CLASS == 1, "yes", "no").astype(object), ["no", "yes"], np.nan),
    (np.where(Y_CLASS == 1, "yes", "no").astype(object), ["no", "yes"], None),
    (np.where(Y_CLASS == 1, "yes", "no").astype(object), ["no", "yes"], 3),
    (np.where(Y_CLASS == 1, "yes", "no").astype(object), ["no", "yes"], "zzz"),
])
def test_a_label_changed_after_the_checks_raises_and_warns_nothing(labels, classes, bad):
    # the fix of this review: a NaN, None or number among string labels made the label
    # search raise on the worker after the charge (TypeError), a row-dependent error
    def change(chunk):
        chunk[7] = bad

    def make(**kw):
        return _classifier(**{"classes": classes, **kw})

    model, state = _fit_flaky(make, labels, change)
    clean, clean_state = _fit_flaky(make, labels, None)
    assert state == clean_state  # the same draws
    assert np.isfinite(model._baseline).all()
    assert all(np.isfinite(tree.value).all() for trees in model._predictors for tree in trees)


@pytest.mark.parametrize("make, y", [
    (lambda **kw: _classifier(**{"classes": [0, 1, 2], "bounds": None, **kw}), Y_THREE),
    (lambda **kw: _regressor(**{"bounds": None, "bounds_y": None, **kw}), Y_REAL),
    (_exact, Y_CLASS)])
def test_the_draws_do_not_depend_on_the_rows(make, y):
    extra = np.array([[1e308, -1e308, np.nan]])
    datasets = [(X, y), (X[1:], y[1:]), (np.vstack([X, extra]), np.append(y, y[0])),
                (np.where(np.isnan(X), 0.0, -X), y[::-1])]
    states = []
    for rows, target in datasets:
        for lazy in (False, True):
            rng = np.random.default_rng(5)
            data = (da.from_array(rows, chunks=150), da.from_array(target, chunks=150)) \
                if lazy else (rows, target)
            with dask.config.set(scheduler="synchronous"):
                make(random_state=rng).fit(*data)
            states.append(rng.bit_generator.state)
    assert all(state == states[0] for state in states)


@pytest.mark.parametrize("make, y", [(_classifier, Y_CLASS), (_regressor, Y_REAL),
                                     (_exact, Y_CLASS)])
def test_small_empty_and_missing_chunks_give_the_in_memory_model(make, y):
    rows = X.copy()
    rows[20:60, 1] = np.nan  # a chunk whose second column is all missing
    rows[100] = [1e308, -1e308, 0.0]
    chunks = (1, 0, 1, 18, 40, 0, 139, 1, 200)
    with dask.config.set(scheduler="synchronous"):
        got = make(budget=PrivacyBudget(10.0, 1e-5)).fit(
            da.from_array(rows, chunks=(chunks, 3)), da.from_array(y, chunks=(chunks,)))
        ref = make(budget=PrivacyBudget(10.0, 1e-5)).fit(rows, y)
        _same_trees(ref, got)
        np.testing.assert_array_equal(got.bin_edges_, ref.bin_edges_)
        np.testing.assert_allclose(got.feature_importances_, ref.feature_importances_,
                                   rtol=1e-9, atol=1e-12)


def test_predictions_are_lazy_and_equal_the_in_memory_ones():
    model = _classifier(classes=[0, 1, 2],
                        budget=PrivacyBudget(10.0, 1e-5)).fit(X, Y_THREE)
    budget, seen = PrivacyBudget(1.0, 1e-5), []
    Xd = _watched(X, budget, seen)
    with dask.config.set(scheduler="synchronous"):
        outputs = {name: getattr(model, name)(Xd)
                   for name in ("predict", "predict_proba", "decision_function")}
        assert seen == []  # nothing read until computed
        for name, out in outputs.items():
            assert isinstance(out, da.Array)
            np.testing.assert_allclose(out.compute(), getattr(model, name)(X), rtol=1e-12)
    assert len(seen) == 3


SHARED = dict(max_iter=15, learning_rate=0.2, max_depth=3, max_bins=32, l2_regularization=0.5)


def _missing_in_some_nodes(seed, n=3000):
    """Feature 1 is missing only where feature 0 > 0.5: the nodes on the other side have none.

    The test rows miss feature 1 everywhere, so they reach those nodes too.
    """
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 3))
    missing = (X[:, 0] > 0.5) & (rng.random(n) < 0.4)
    score = 3 * X[:, 1] + 2 * (X[:, 0] > 0.5) + X[:, 2] - 1.5 * missing
    X[missing, 1] = np.nan
    y = (score + rng.logistic(0, 0.3, n) > np.median(score)).astype(int)
    target = score + rng.normal(0, 0.3, n)
    test = rng.uniform(0, 1, size=(1000, 3))
    test[:, 1] = np.nan
    return X, y, target, test


@pytest.mark.parametrize("seed", [0, 1])
def test_epsilon_inf_missing_values_in_nodes_without_any_follow_sklearn(seed):
    # Before de6827c the two scans' gains, a round-off apart, chose the direction in such
    # nodes: these two seeds differed from scikit-learn by 0.05 and 0.36 in probability.
    X, y, target, test = _missing_in_some_nodes(seed)
    ours = DPHistGradientBoostingClassifier(epsilon=math.inf, classes=[0, 1], **SHARED).fit(X, y)
    reg = DPHistGradientBoostingRegressor(epsilon=math.inf, **SHARED).fit(X, target)
    with threadpool_limits(1):
        ref = HistGradientBoostingClassifier(max_leaf_nodes=None, early_stopping=False,
                                             **SHARED).fit(X, y)
        ref_reg = HistGradientBoostingRegressor(max_leaf_nodes=None, early_stopping=False,
                                                **SHARED).fit(X, target)
    np.testing.assert_allclose(ours.predict_proba(test), ref.predict_proba(test), atol=1e-6)
    np.testing.assert_allclose(reg.predict(test), ref_reg.predict(test), atol=1e-6)
