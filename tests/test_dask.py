"""Estimators fitted on dask arrays and DataFrames equal the in-memory ones (issue 27).

The dask fits run on a real ``dask.distributed.LocalCluster`` (two workers,
started once for the module; in this process, which halves the time, but the
scheduler still serialises every task as for remote workers, so a block
function that cannot be pickled fails here too): each pass over the rows is
reduced on the workers and only sums come back. The noise is drawn on the client from
the same generator, so for the same seed every fitted attribute equals the
in-memory one up to the order in which the chunks' float sums are added
(relative differences of a few 1e-16 per addition; RTOL leaves a margin of
about 1e3 over the chunks' sums of a few thousand rows), and the budget is
charged once, with the same curve.
"""

from functools import partial

import numpy as np
import pytest

from skdp import PrivacyBudget, stats
from skdp.cluster import DPKMeans
from skdp.decomposition import DPPCA
from skdp.ensemble import DPHistGradientBoostingClassifier, DPHistGradientBoostingRegressor
from skdp.impute import DPSimpleImputer
from skdp.linear_model import DPLinearRegression, DPLogisticRegression
from skdp.naive_bayes import DPGaussianNB
from skdp.preprocessing import DPMinMaxScaler, DPStandardScaler
from skdp.utils._rows import check_lazy_X, row_sums

from _testing import dask_client

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")

RTOL = 1e-11


@pytest.fixture(scope="module")
def client():
    with dask_client() as c:
        yield c


def _data(n=6000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(3.0, 2.0, size=(n, d)) * np.arange(1, d + 1)
    y = (X[:, 0] + rng.normal(0, 1, n) > 3.0).astype(int)
    return X, y


def _lazy(X, kind):
    if kind == "array":
        return da.from_array(X, chunks=(1000, 2))  # chunks split the columns too
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    return dd.from_pandas(frame, npartitions=5)


def _lazy_pair(X, kind):
    """``X`` in memory (the computed DataFrame, for a frame) and as dask."""
    Xd = _lazy(X, kind)
    return (Xd.compute() if kind == "frame" else X), Xd


def _same_fit(make, X, Xd, *attributes, y=None, yd=None):
    """Fit ``make(budget)`` on memory and on dask; the attributes and the ledgers agree."""
    budgets = PrivacyBudget(50.0, 1e-5), PrivacyBudget(50.0, 1e-5)
    ref = make(budgets[0]).fit(X, *([] if y is None else [y]))
    got = make(budgets[1]).fit(Xd, *([] if yd is None else [yd]))
    for name in attributes:
        a, b = getattr(ref, name), getattr(got, name)
        if isinstance(a, tuple):
            for u, v in zip(a, b):
                np.testing.assert_allclose(v, u, rtol=RTOL, atol=0, err_msg=name)
        else:
            np.testing.assert_allclose(b, a, rtol=RTOL, atol=0, err_msg=name)
    if ref.budget is not None:
        assert len(budgets[0]) == len(budgets[1]) == 1
        assert budgets[0].spent() == budgets[1].spent()
    assert ref.privacy_curve_ == got.privacy_curve_
    return ref, got


def test_row_sums_adds_the_chunks_partial_sums(client):
    X = np.arange(40.0).reshape(20, 2)

    def block(x):
        return x.shape[0], x.sum(axis=0), (x**2).sum()

    Xd = check_lazy_X(DPStandardScaler(), da.from_array(X, chunks=(3, 1)))
    n, s, q = row_sums(block, Xd)
    assert n == 20 and s.tolist() == X.sum(axis=0).tolist() and q == (X**2).sum()


# inverse_transform of an array (no names) by a scaler fitted on a DataFrame: as in memory
@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize("kind, params", [
    ("array", {"bounds": (-10, 30)}),
    ("frame", {"bounds": (-10, 30)}),
    ("array", {}),  # private bounds: the histograms are summed over the chunks too
    ("frame", {"with_std": False, "bounds": (-10, 30)}),
    ("array", {"delta": 0.0}),
    ("array", {"epsilon": np.inf}),
])
def test_standard_scaler_equals_the_in_memory_fit(client, kind, params):
    X, _ = _data()
    Xd = _lazy(X, kind)
    if kind == "frame":
        X = Xd.compute()
    private = params.get("epsilon", 1.0) != np.inf  # a budget refuses epsilon=inf
    ref, got = _same_fit(lambda b: DPStandardScaler(budget=b if private else None,
                                                    random_state=7, **params),
                         X, Xd, "mean_", "bounds_", *(["var_", "scale_"]
                                                     if params.get("with_std", True) else []))
    out = got.transform(Xd)
    assert isinstance(out, da.Array)
    np.testing.assert_allclose(out.compute(), ref.transform(X), rtol=1e-9, atol=1e-12)
    back = got.inverse_transform(out)  # (a DataFrame's partitions: rows of unknown number)
    assert isinstance(back, da.Array) and back.compute().shape == X.shape


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize("kind, params", [
    ("array", {}),  # private bounds: the histograms summed over the chunks
    ("frame", {"bounds": (-10, 30), "clip": True}),  # public bounds: nothing read
    ("array", {"epsilon": np.inf}),  # the columns' minimum and maximum
])
def test_min_max_scaler_equals_the_in_memory_fit(client, kind, params):
    X, _ = _data()
    X, Xd = _lazy_pair(X, kind)
    private = params.get("epsilon", 1.0) != np.inf
    ref, got = _same_fit(lambda b: DPMinMaxScaler(budget=b if private else None,
                                                  random_state=7, **params),
                         X, Xd, "data_min_", "data_max_", "scale_", "min_", "bounds_")
    out = got.transform(Xd)
    assert isinstance(out, da.Array)
    np.testing.assert_allclose(out.compute(), ref.transform(X), rtol=1e-9, atol=1e-12)
    back = got.inverse_transform(out)
    assert isinstance(back, da.Array)
    np.testing.assert_allclose(back.compute(), ref.inverse_transform(ref.transform(X)),
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kind, params", [
    ("array", {"bounds": (-10, 30)}),  # a count and a sum per feature, Laplace noise
    ("frame", {"bounds": (-10, 30), "epsilon": 0.1}),  # one Gaussian of the 2d sums
    ("array", {}),  # private bounds of the observed values
    ("array", {"epsilon": np.inf}),
    ("frame", {"strategy": "most_frequent", "bounds": (-5, 10)}),  # the integers' counts
    ("array", {"strategy": "most_frequent", "categories": [1.0, 3.0, 5.0],
               "epsilon": np.inf}),
])
def test_simple_imputer_equals_the_in_memory_fit(client, kind, params):
    X, _ = _data()
    if params.get("strategy") == "most_frequent":
        X = X.round()
    rng = np.random.default_rng(9)
    X[rng.random(X.shape) < 0.2] = np.nan  # missing values, and a feature with one value
    X[1:, 2] = np.nan
    X, Xd = _lazy_pair(X, kind)
    private = params.get("epsilon", 1.0) != np.inf
    ref, got = _same_fit(lambda b: DPSimpleImputer(budget=b if private else None,
                                                   random_state=4, **params),
                         X, Xd, "statistics_", "bounds_")
    out = got.transform(Xd)
    assert isinstance(out, da.Array)
    np.testing.assert_allclose(out.compute(), ref.transform(X), rtol=1e-9, atol=0)


@pytest.mark.parametrize("kind, params", [
    ("array", {"bounds": (-10, 30), "classes": [0, 1, 2]}),  # a class without rows
    ("frame", {"classes": [0, 1]}),  # private bounds
    ("array", {"delta": 0.0, "bounds": (-10, 30), "classes": [0, 1]}),
    ("frame", {"epsilon": np.inf}),
])
def test_gaussian_nb_equals_the_in_memory_fit(client, kind, params):
    X, y = _data()
    Xd, yd = _lazy(X, kind), da.from_array(y, chunks=700)  # y's chunks are aligned with X's
    if kind == "frame":
        X, yd = Xd.compute(), dd.from_pandas(pd.Series(y), npartitions=3)
    private = params.get("epsilon", 1.0) != np.inf
    ref, got = _same_fit(lambda b: DPGaussianNB(budget=b if private else None,
                                                random_state=3, **params),
                         X, Xd, "class_count_", "class_prior_", "theta_", "var_", "bounds_",
                         "classes_", y=y, yd=yd)
    proba = got.predict_proba(Xd)
    assert isinstance(proba, da.Array) and isinstance(got.predict(Xd), da.Array)
    np.testing.assert_allclose(proba.compute(), ref.predict_proba(X), rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(got.predict(Xd).compute(), ref.predict(X))


@pytest.mark.parametrize("params", [
    {"bounds_X": (-30, 40), "bounds_y": (-80, 80)},
    {},  # private bounds of X and y
    {"data_norm": 60.0, "bounds_y": (-80, 80), "fit_intercept": False, "ridge": 1.0},
    {"epsilon": np.inf},
])
def test_linear_regression_equals_the_in_memory_fit(client, params):
    X, _ = _data()
    y = X @ np.array([1.0, -2.0, 0.5]) + np.random.default_rng(1).normal(0, 1, len(X))
    Xd, yd = _lazy(X, "array"), da.from_array(y, chunks=1500)
    private = params.get("epsilon", 1.0) != np.inf
    ref, got = _same_fit(lambda b: DPLinearRegression(budget=b if private else None,
                                                      random_state=5, **params),
                         X, Xd, "coef_", "intercept_", "ridge_", "bounds_y_", y=y, yd=yd)
    pred = got.predict(Xd)
    assert isinstance(pred, da.Array)
    np.testing.assert_allclose(pred.compute(), ref.predict(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("params", [
    {"classes": [0, 1], "max_iter": 5},  # the rows' norm bound from a summed histogram
    {"bounds_X": (-30, 40), "classes": [0, 1, 2], "max_iter": 5},  # softmax, a class empty
    {"epsilon": np.inf, "data_norm": 40.0},
])
def test_logistic_regression_equals_the_in_memory_fit(client, params):
    # every step of the full-batch descent is one pass of gradient sums over the chunks
    X, y = _data()
    Xd, yd = _lazy(X, "frame"), dd.from_pandas(pd.Series(y), npartitions=2)
    X = Xd.compute()
    private = params.get("epsilon", 1.0) != np.inf
    ref, got = _same_fit(lambda b: DPLogisticRegression(budget=b if private else None,
                                                        random_state=2, **params),
                         X, Xd, "coef_", "intercept_", "data_norm_", "n_iter_", y=y, yd=yd)
    proba = got.predict_proba(Xd)
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), ref.predict_proba(X), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("params", [
    {"bounds": (-30, 40), "n_components": 2},
    {},  # private bounds, and the clipping norm from a summed histogram of the rows' norms
    {"delta": 0.0, "bounds": (-30, 40)},
    {"data_norm": 50.0, "bounds": (-30, 40)},
])
def test_pca_equals_the_in_memory_fit(client, params):
    X, _ = _data()
    Xd = _lazy(X, "array")
    ref, got = _same_fit(lambda b: DPPCA(budget=b, random_state=6, **params), X, Xd,
                         "components_", "explained_variance_", "mean_", "data_norm_",
                         "bounds_")
    Z = got.transform(Xd)
    assert isinstance(Z, da.Array)
    np.testing.assert_allclose(Z.compute(), ref.transform(X), rtol=1e-8, atol=1e-9)
    back = got.inverse_transform(Z)
    np.testing.assert_allclose(back.compute(), ref.inverse_transform(ref.transform(X)),
                               rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("kind, params", [
    ("array", {"bounds": (-30, 40)}),  # the tree coreset: paths counted, then leaves summed
    ("frame", {}),  # private bounds
    ("array", {"init": "random", "bounds": (-30, 40), "max_iter": 3}),
    ("array", {"bounds": (-30, 40), "epsilon": 0.01}),  # both children dropped: one leaf
])
def test_kmeans_equals_the_in_memory_fit(client, kind, params):
    X, _ = _data()
    X[:2000] += 20.0  # three clusters, so the tree branches
    X[2000:4000] -= 10.0
    X, Xd = _lazy_pair(X, kind)
    ref, got = _same_fit(lambda b: DPKMeans(3, budget=b, random_state=8, **params), X, Xd,
                         "cluster_centers_", "n_iter_", "bounds_")
    labels, distances = got.predict(Xd), got.transform(Xd)
    assert isinstance(labels, da.Array) and isinstance(distances, da.Array)
    np.testing.assert_array_equal(labels.compute(), ref.predict(X))
    np.testing.assert_allclose(distances.compute(), ref.transform(X), rtol=1e-9, atol=1e-9)


def test_kmeans_secure_randomness_fits_dask_rows(client):
    # secure=True draws the hyperplanes and the noise on the client from the OS, as in memory
    X, _ = _data(n=2000)
    budget = PrivacyBudget(5.0, 1e-5)
    km = DPKMeans(2, bounds=(-30, 40), secure=True, budget=budget)
    labels = km.fit_predict(_lazy(X, "array"))
    assert isinstance(labels, da.Array) and len(budget) == 1
    assert km.cluster_centers_.shape == (2, 3) and np.isfinite(km.cluster_centers_).all()
    np.testing.assert_array_equal(labels.compute(), km.predict(X))


def _boosting_data(kind, n=2000):
    """Rows with missing values, three targets, and their dask forms with an empty chunk.

    The array has a chunk of zero rows; the DataFrame's second partition is
    emptied by a filter on a column, so its in-memory rows are the kept ones.
    """
    rng = np.random.default_rng(3)
    X = rng.normal(3.0, 2.0, size=(n, 3)) * np.arange(1, 4)
    X[rng.random(X.shape) < 0.1] = np.nan
    filled = np.nan_to_num(X)
    targets = {"binary": (filled[:, 0] + rng.normal(0, 1, n) > 3.0).astype(int),
               "three": np.digitize(filled[:, 1] + rng.normal(0, 1, n), [2.0, 8.0]),
               "real": filled[:, 0] - 0.5 * filled[:, 2] + rng.normal(0, 1, n)}
    if kind == "array":
        chunks = (n // 3, 0, n // 3, n - 2 * (n // 3))
        return X, targets, da.from_array(X, chunks=(chunks, 2)), {
            name: da.from_array(y, chunks=(chunks,)) for name, y in targets.items()}
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(k=np.arange(n), **targets)
    lazy = dd.from_pandas(frame, npartitions=4)
    kept = (frame.k < n // 4) | (frame.k >= n // 2)
    lazy = lazy[(lazy.k < n // 4) | (lazy.k >= n // 2)]  # partition 2 empty
    return (frame.loc[kept, ["a", "b", "c"]], {name: y[kept.to_numpy()] for name, y in
                                               targets.items()},
            lazy[["a", "b", "c"]], {name: lazy[name] for name in targets})


def _same_boosting(make, X, y, Xd, yd):
    """The in-memory and dask fits: the same trees (splits exactly, leaves to round-off)."""
    ref, got = _same_fit(make, X, Xd, "bin_edges_", "feature_importances_", "_baseline",
                         "n_iter_", y=y, yd=yd)
    for a, b in zip(ref._predictors, got._predictors, strict=True):
        for tree_a, tree_b in zip(a, b, strict=True):
            np.testing.assert_array_equal(tree_b.feature, tree_a.feature)
            np.testing.assert_array_equal(tree_b.threshold, tree_a.threshold)
            np.testing.assert_allclose(tree_b.value, tree_a.value, rtol=1e-9, atol=1e-12)
    return ref, got


@pytest.mark.parametrize("kind, target, params", [
    ("array", "binary", {"bounds": (-10, 30)}),
    ("frame", "binary", {}),  # private bounds: the range histograms summed over the chunks
    ("array", "three", {}),  # a tree per class and round
    ("frame", "three", {"bounds": (-10, 30), "max_depth": 3}),
    ("array", "binary", {"bounds": (-10, 30), "epsilon": np.inf}),  # the greedy splits
])
def test_boosting_classifier_equals_the_in_memory_fit(client, kind, target, params):
    X, targets, Xd, lazy_targets = _boosting_data(kind)
    classes = [0, 1] if target == "binary" else [0, 1, 2]
    private = params.get("epsilon", 1.0) != np.inf
    ref, got = _same_boosting(
        lambda b: DPHistGradientBoostingClassifier(classes=classes, max_iter=3,
                                                   budget=b if private else None,
                                                   random_state=5, **params),
        X, targets[target], Xd, lazy_targets[target])
    assert np.isnan(np.asarray(X, dtype=float)).any()  # missing values, in their own bin
    for method in ("predict", "predict_proba", "decision_function"):
        out = getattr(got, method)(Xd)
        assert isinstance(out, da.Array)  # lazy, an empty chunk included
        np.testing.assert_allclose(out.compute(), getattr(ref, method)(X), rtol=1e-9,
                                   atol=1e-12)


@pytest.mark.parametrize("kind, params", [
    ("array", {"bounds": (-10, 30), "bounds_y": (-20, 20)}),
    ("frame", {}),  # the features' and the target's private bounds
    ("array", {"bounds": (-10, 30), "epsilon": np.inf}),  # nothing clipped or scaled
])
def test_boosting_regressor_equals_the_in_memory_fit(client, kind, params):
    X, targets, Xd, lazy_targets = _boosting_data(kind)
    private = params.get("epsilon", 1.0) != np.inf
    ref, got = _same_boosting(
        lambda b: DPHistGradientBoostingRegressor(max_iter=3, budget=b if private else None,
                                                  random_state=6, **params),
        X, targets["real"], Xd, lazy_targets["real"])
    assert ref.bounds_y_ == got.bounds_y_
    pred = got.predict(Xd)
    assert isinstance(pred, da.Array)
    np.testing.assert_allclose(pred.compute(), ref.predict(X), rtol=1e-9, atol=1e-9)


def test_boosting_passes_over_the_chunks(client, monkeypatch):
    # Three classes, 2 rounds of depth-2 trees: the class counts, then per round one pass for
    # the three roots and, per tree, one for its second level and one for its leaves.
    from skdp.ensemble._hist_gradient_boosting import _passes, gradient_boosting

    calls = []

    def counted(func, *arrays):
        calls.append(1)
        return row_sums(func, *arrays)

    monkeypatch.setattr(_passes, "row_sums", counted)
    monkeypatch.setattr(gradient_boosting, "row_sums", counted)
    _, _, Xd, lazy_targets = _boosting_data("array", n=600)
    DPHistGradientBoostingClassifier(bounds=(-10, 30), classes=[0, 1, 2], max_iter=2,
                                     random_state=0).fit(Xd, lazy_targets["three"])
    assert len(calls) == 1 + 2 * (1 + 3 * 2)


def test_boosting_secure_randomness_fits_dask_rows_with_an_in_memory_target(client):
    # secure=True draws the splits and the noise on the client from the OS, as in memory
    X, targets, Xd, _ = _boosting_data("array", n=600)
    budget = PrivacyBudget(5.0, 1e-5)
    model = DPHistGradientBoostingClassifier(bounds=(-10, 30), classes=[0, 1], max_iter=2,
                                             secure=True, budget=budget).fit(
        Xd, targets["binary"])
    assert len(budget) == 1 and len(model._predictors) == 2
    proba = model.predict_proba(Xd)
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), model.predict_proba(X), rtol=1e-12)


def test_boosting_on_dask_refuses_before_the_charge(client):
    X, targets, Xd, lazy_targets = _boosting_data("array", n=300)
    budget = PrivacyBudget(5.0, 1e-5)
    with pytest.raises(ValueError, match="epsilon=inf on dask input needs public bounds"):
        DPHistGradientBoostingRegressor(epsilon=np.inf).fit(Xd, lazy_targets["real"])
    with pytest.raises(ValueError, match="labels not in classes"):
        DPHistGradientBoostingClassifier(classes=[0, 1], budget=budget).fit(
            Xd, lazy_targets["three"])
    Xd_inf = da.from_array(np.where(np.isnan(X), np.inf, X), chunks=100)
    with pytest.raises(ValueError, match="infinity"):
        DPHistGradientBoostingRegressor(budget=budget).fit(Xd_inf, targets["real"])
    assert len(budget) == 0


COLOURS = ["red", "green", "blue"]
CODES = [1, 2, 5]  # the public categories of the array's categorical column


def _categorical_data(kind, n=1500):
    """Rows with a categorical feature (a tenth missing), two targets, and their dask forms.

    "frame": the feature is the column "colour" of a pandas Categorical dtype
    (its categories in the metadata), in the middle of two numeric ones; the
    targets are columns of the same dask DataFrame. "array": the feature is
    column 1, holding the numbers of ``CODES`` or NaN, in chunks that split
    the columns too. "numbers": those columns as a dask DataFrame.
    """
    rng = np.random.default_rng(4)
    x = rng.normal(3.0, 2.0, size=(n, 2))
    x[rng.random(x.shape) < 0.1] = np.nan
    code = np.where(rng.random(n) < 0.1, 3, rng.integers(0, 3, n))  # 3: missing
    effect = np.array([0.0, 4.0, -3.0, 2.0])[code]  # the missing values have an effect too
    signal = np.nan_to_num(x[:, 0]) + effect
    targets = {"binary": (signal + rng.normal(0, 1, n) > 3.0).astype(int),
               "real": signal + rng.normal(0, 1, n)}
    numbers = np.array(CODES + [np.nan])[code]
    if kind == "array":
        X = np.column_stack([x[:, 0], numbers, x[:, 1]])
        chunks = (n // 3, n // 3, n - 2 * (n // 3))
        return X, targets, da.from_array(X, chunks=(chunks, 2)), {
            name: da.from_array(y, chunks=(chunks,)) for name, y in targets.items()}
    colour = pd.Categorical(np.array(COLOURS + [None], dtype=object)[code], categories=COLOURS)
    frame = pd.DataFrame({"a": x[:, 0], "colour": colour if kind == "frame" else numbers,
                          "b": x[:, 1]})
    lazy = dd.from_pandas(frame.assign(**targets), npartitions=3)
    return frame, targets, lazy[["a", "colour", "b"]], {name: lazy[name] for name in targets}


@pytest.mark.parametrize("kind, estimator, params", [
    ("frame", DPHistGradientBoostingClassifier, {}),  # from the dtype; private bounds
    ("frame", DPHistGradientBoostingRegressor, {"bounds": (-10, 20), "bounds_y": (-10, 20)}),
    ("array", DPHistGradientBoostingClassifier,
     {"categorical_features": [1], "categories": [CODES], "bounds": (-10, 20)}),
    ("array", DPHistGradientBoostingRegressor,  # the features' and the target's private bounds
     {"categorical_features": [False, True, False], "categories": [CODES]}),
    ("numbers", DPHistGradientBoostingRegressor,  # a DataFrame's float column by a mask
     {"categorical_features": [1], "categories": [CODES], "bounds": (-10, 20)}),
    ("frame", DPHistGradientBoostingClassifier,  # public categories in another order, by name
     {"categorical_features": ["colour"], "categories": [COLOURS[::-1]], "max_depth": 3,
      "bounds": (-10, 20)}),
    ("array", DPHistGradientBoostingClassifier,  # the greedy splits of the categories seen
     {"categorical_features": [1], "categories": [CODES + [7]], "bounds": (-10, 20),
      "epsilon": np.inf}),
])
def test_boosting_categorical_feature_equals_the_in_memory_fit(client, kind, estimator, params):
    X, targets, Xd, lazy_targets = _categorical_data(kind)
    classifier = estimator is DPHistGradientBoostingClassifier
    target = "binary" if classifier else "real"
    private = params.get("epsilon", 1.0) != np.inf
    extra = {"classes": [0, 1]} if classifier else {}
    ref, got = _same_boosting(
        lambda b: estimator(max_iter=3, budget=b if private else None, random_state=7,
                            **extra, **params),
        X, targets[target], Xd, lazy_targets[target])
    np.testing.assert_array_equal(got.is_categorical_, [False, True, False])
    assert got._categories == ref._categories
    categorical = [tree.feature == 1 for trees in ref._predictors for tree in trees]
    assert np.concatenate(categorical).any()  # the fits split on the categorical feature
    assert np.isnan(np.asarray(ref._validate_predict_data(X))).any()
    methods = ("predict", "predict_proba", "decision_function") if classifier else ("predict",)
    for method in methods:
        out = getattr(got, method)(Xd)
        assert isinstance(out, da.Array)  # lazy
        np.testing.assert_allclose(out.compute(), getattr(ref, method)(X), rtol=1e-9,
                                   atol=1e-12)


def test_boosting_refuses_unknown_categories_before_the_charge(client):
    frame, targets, lazy, lazy_targets = _categorical_data("frame", n=300)
    unknown = lazy.assign(colour=lazy.colour.cat.as_unknown())
    budget = PrivacyBudget(5.0, 1e-5)
    for estimator, extra, y in ((DPHistGradientBoostingClassifier, {"classes": [0, 1]},
                                 lazy_targets["binary"]),
                                (DPHistGradientBoostingRegressor, {}, lazy_targets["real"])):
        with pytest.raises(ValueError, match=r"'colour' has unknown categories(.|\n)*"
                                             r"as_known\(\) would read them from the rows"):
            estimator(bounds=(-10, 20), budget=budget, **extra).fit(unknown, y)
    assert len(budget) == 0
    # The categories given as a parameter are public: the metadata's are not needed.
    _same_boosting(lambda b: DPHistGradientBoostingClassifier(
        classes=[0, 1], categories=[COLOURS], bounds=(-10, 20), max_iter=1, budget=b,
        random_state=8), frame, targets["binary"], unknown, lazy_targets["binary"])


def test_boosting_refuses_a_value_outside_the_categories_as_in_memory(client):
    # Checked in the one pass before the charge, with the in-memory error (naming the
    # column, never the value); nothing charged.
    X, targets, _, _ = _categorical_data("array", n=300)
    X[250, 1] = 7.0  # in the last chunk
    frame, _, lazy, _ = _categorical_data("frame", n=300)
    budget = PrivacyBudget(5.0, 1e-5)
    cases = [(X, da.from_array(X, chunks=(100, 2)),
              {"categorical_features": [1], "categories": [CODES]}),
             (frame, lazy, {"categories": [COLOURS[:2]]})]  # "blue" is outside
    for X_mem, X_lazy, params in cases:
        for estimator, target in ((DPHistGradientBoostingClassifier, "binary"),
                                  (DPHistGradientBoostingRegressor, "real")):
            extra = {"classes": [0, 1]} if target == "binary" else {}
            make = partial(estimator, bounds=(-10, 20), budget=budget, **extra, **params)
            with pytest.raises(ValueError) as in_memory:
                make().fit(X_mem, targets[target])
            with pytest.raises(ValueError) as on_dask:
                make().fit(X_lazy, targets[target])
            assert str(on_dask.value) == str(in_memory.value)
            assert "holds values outside its public categories" in str(on_dask.value)
    assert len(budget) == 0


_OUTSIDE_CALLS = []


def _outside_after_the_checks(x):
    """A chunk that holds a value outside the public categories from its second computation."""
    _OUTSIDE_CALLS.append(1)
    x = x.copy()
    if len(_OUTSIDE_CALLS) > 2:  # the two chunks of the pass before the charge saw CODES
        x[3, 1] = 7.0
    return x


def test_a_value_outside_the_categories_after_the_charge_is_a_missing_value():
    # A graph whose values change after the checks (issue 27, point 2) may bring a value
    # outside the categories into a pass after the charge: the pass does not raise (an error
    # there would differ between neighbouring datasets), and the value goes where the
    # in-memory model sends it, with the missing values.
    import dask

    X, targets, _, _ = _categorical_data("array", n=600)
    X[[3, 303], 1] = 1.0
    _OUTSIDE_CALLS.clear()
    chunks = [da.from_delayed(dask.delayed(_outside_after_the_checks)(X[i:i + 300]),
                              shape=(300, 3), dtype=float) for i in (0, 300)]
    params = dict(categorical_features=[1], categories=[CODES], bounds=(-10, 20),
                  classes=[0, 1], max_iter=2, random_state=9)
    budget = PrivacyBudget(5.0, 1e-5)
    with dask.config.set(scheduler="synchronous"):
        got = DPHistGradientBoostingClassifier(budget=budget, **params).fit(
            da.concatenate(chunks), targets["binary"])
    assert len(_OUTSIDE_CALLS) > 2 and len(budget) == 1
    missing = X.copy()
    missing[[3, 303], 1] = np.nan
    ref = DPHistGradientBoostingClassifier(**params).fit(missing, targets["binary"])
    for a, b in zip(ref._predictors, got._predictors, strict=True):
        for tree_a, tree_b in zip(a, b, strict=True):
            np.testing.assert_array_equal(tree_b.feature, tree_a.feature)
            np.testing.assert_array_equal(tree_b.threshold, tree_a.threshold)
            np.testing.assert_allclose(tree_b.value, tree_a.value, rtol=1e-9, atol=1e-12)
    assert not all(np.array_equal(np.asarray(u.value), np.asarray(v.value)) for u, v in zip(
        DPHistGradientBoostingClassifier(**params).fit(X, targets["binary"])._predictors[-1],
        ref._predictors[-1]))  # the two rows' category made a difference


def test_a_pipeline_of_dask_steps_equals_the_in_memory_one(client):
    # the scaler's lazy transform feeds the model's fit; y may stay in memory
    from sklearn.pipeline import make_pipeline

    X, y = _data()
    budgets = PrivacyBudget(5.0, 1e-5), PrivacyBudget(5.0, 1e-5)
    ref, got = (make_pipeline(DPStandardScaler(bounds=(-30, 40), budget=b, random_state=1),
                              DPLogisticRegression(classes=[0, 1], data_norm=5.0, max_iter=5,
                                                   budget=b, random_state=2)).fit(data, y)
                for data, b in zip((X, _lazy(X, "array")), budgets))
    np.testing.assert_allclose(got[-1].coef_, ref[-1].coef_, rtol=RTOL)
    assert len(budgets[0]) == len(budgets[1]) == 2
    assert budgets[0].spent() == budgets[1].spent()
    np.testing.assert_array_equal(got.predict(_lazy(X, "array")).compute(), ref.predict(X))


@pytest.mark.parametrize("name, delta", [("sum", 0.0), ("mean", 1e-5), ("var", 0.0),
                                         ("std", 1e-5)])
def test_stats_sums_equal_the_in_memory_release(client, name, delta):
    X, _ = _data()
    for a, lazy, axis in [(X, _lazy(X, "array"), 0), (X[:, 1], da.from_array(X[:, 1], 700), None)]:
        budgets = PrivacyBudget(5.0, 1e-5), PrivacyBudget(5.0, 1e-5)
        ref, got = (getattr(stats, name)(data, epsilon=1.0, delta=delta, bounds=(-10, 30),
                                         axis=axis, budget=budget, random_state=4)
                    for data, budget in zip((a, lazy), budgets))
        np.testing.assert_allclose(got, ref, rtol=RTOL, atol=0)
        assert len(budgets[0]) == len(budgets[1]) == 1
        assert budgets[0].spent() == budgets[1].spent()


def test_bad_dask_input_is_refused_before_the_charge_with_the_in_memory_error(client):
    X, _ = _data(n=300)
    X[7, 2] = np.nan
    budget = PrivacyBudget(5.0, 1e-5)
    with pytest.raises(ValueError) as in_memory:
        DPStandardScaler(budget=budget).fit(X)
    with pytest.raises(ValueError) as lazy:
        DPStandardScaler(budget=budget).fit(da.from_array(X, chunks=50))
    assert str(lazy.value) == str(in_memory.value) and "column 2" in str(lazy.value)
    X[7, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        DPStandardScaler(budget=budget).fit(da.from_array(X, chunks=50))
    frame = dd.from_pandas(pd.DataFrame({"a": X[:, 0], "b": ["u"] * len(X)}), npartitions=2)
    with pytest.raises(ValueError, match="column 'b' holds values that are not numbers"):
        DPStandardScaler(budget=budget).fit(frame)
    with pytest.raises(ValueError, match="secure=True is not available on dask input"):
        DPStandardScaler(budget=budget, secure=True).fit(da.from_array(X[:, :2], chunks=50))
    Xd = da.from_array(X[:, :2], chunks=50)
    with pytest.raises(ValueError, match="only sum, mean, var and std read dask arrays"):
        stats.median(Xd, epsilon=1.0, bounds=(0, 1), budget=budget)
    with pytest.raises(ValueError, match="secure=True is not available on dask input"):
        stats.mean(Xd, epsilon=1.0, bounds=(0, 1), axis=0, secure=True, budget=budget)
    with pytest.raises(ValueError, match="a contains NaN or infinity"):
        stats.mean(da.from_array(X, chunks=50), epsilon=1.0, bounds=(0, 1), axis=0,
                   budget=budget)
    with pytest.raises(ValueError, match="epsilon=inf"):
        DPPCA(epsilon=np.inf).fit(Xd)
    with pytest.raises(ValueError, match="epsilon=inf"):
        DPKMeans(2, epsilon=np.inf).fit(Xd)
    with pytest.raises(ValueError, match="quantile_range .* is not available on dask input"):
        DPMinMaxScaler(budget=budget, quantile_range=(0.1, 0.9)).fit(Xd)
    with pytest.raises(ValueError, match="median.* is not available on dask input"):
        DPSimpleImputer(budget=budget, strategy="median").fit(Xd)
    with pytest.raises(ValueError, match="infinity"):  # NaN is a missing value, inf refused
        DPSimpleImputer(budget=budget).fit(da.from_array(X, chunks=50))
    with pytest.raises(ValueError, match="labels not in classes"):
        DPGaussianNB(budget=budget, classes=[0, 1]).fit(Xd, da.from_array(np.arange(300) % 3))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        DPGaussianNB(budget=budget, classes=[0, 1]).fit(Xd, da.zeros(299, dtype=int))
    assert len(budget) == 0
    scaler = DPStandardScaler(bounds=(0, 1), budget=budget).fit(da.from_array(X[:, :2], 50))
    with pytest.raises(ValueError, match="expecting 2 features"):
        scaler.transform(da.from_array(X, chunks=50))


_CALLS = []


def _finite_then_nan(block_id=None):
    """A chunk whose values differ between computations: finite the first time, NaN after."""
    _CALLS.append(1)
    x = np.full((100, 2), 0.5)
    if len(_CALLS) > 2:  # the two chunks of the finiteness pass saw finite values
        x[3, 1] = np.nan
        x[4, 0] = np.inf
    return x


def test_a_nan_that_appears_after_the_charge_is_a_row_inside_the_bounds():
    # A graph that gives other values when computed again (a file rewritten between the
    # passes) can bring a NaN into a pass after the charge: it must neither raise nor
    # reach the release as NaN (issue 27, point 2). The synchronous scheduler keeps the
    # call count in this process.
    import dask

    _CALLS.clear()
    chunks = [da.from_delayed(dask.delayed(_finite_then_nan)(), shape=(100, 2), dtype=float)
              for _ in range(2)]
    budget = PrivacyBudget(5.0, 1e-5)
    with dask.config.set(scheduler="synchronous"):
        scaler = DPStandardScaler(bounds=(0, 1), budget=budget, random_state=0).fit(
            da.concatenate(chunks))
    assert len(_CALLS) > 2 and len(budget) == 1
    assert np.isfinite(scaler.mean_).all() and np.isfinite(scaler.var_).all()


def test_columns_read_from_parquet_fit_as_in_memory(client, tmp_path):
    # A target column read from Parquet: dask fuses a projected column's small files into
    # fewer partitions when it optimizes, and its to_dask_array(lengths=True) refused the
    # mismatch ("3 != 8") before the lengths were counted on the optimized column.
    pytest.importorskip("pyarrow")
    X, y = _data(n=8000, d=3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=y.astype(float))
    dd.from_pandas(frame, npartitions=8).to_parquet(tmp_path, write_index=False)
    lazy = dd.read_parquet(tmp_path)
    features, target = lazy[["a", "b", "c"]], lazy["y"]
    _same_fit(lambda b: DPLinearRegression(bounds_X=(-20, 20), bounds_y=(0, 1), budget=b,
                                           random_state=0),
              frame[["a", "b", "c"]], features, "coef_", "intercept_", y=y.astype(float),
              yd=target)
    _same_fit(lambda b: DPGaussianNB(bounds=(-20, 20), classes=[0, 1], budget=b,
                                     random_state=0),
              frame[["a", "b", "c"]], features, "theta_", "var_", y=y,
              yd=target.astype("int64"))


def test_a_pass_computes_the_tasks_x_and_y_share_once():
    # y computed from X's rows: fused array by array, each chunk's rows were drawn twice per
    # pass (once in X's blocks, once in y's); row_sums computes them once.
    import dask

    from skdp.utils._rows import _share_tasks

    calls = []

    def rows(block_info=None):
        calls.append(1)
        return np.random.default_rng(block_info[None]["chunk-location"][0]).normal(size=(50, 2))

    X = da.map_blocks(rows, chunks=((50,) * 6, (2,)), dtype=float)
    y = X[:, 0] > 0
    assert _share_tasks([X, y]) and not _share_tasks([X, da.zeros(300, chunks=50)])
    with dask.config.set(scheduler="synchronous"):
        calls.clear()
        total = row_sums(lambda a, b: (a.sum(), b.sum()), X, y)
        assert len(calls) == 6
    values = X.compute()
    np.testing.assert_allclose(total[0], values.sum())
    assert total[1] == (values[:, 0] > 0).sum()
