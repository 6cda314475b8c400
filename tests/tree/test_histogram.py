"""The histogram layouts (dense uint8 columns, sparse pairs) and the binning: same sums."""

import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.ensemble import (
    DPHistGradientBoostingClassifier,
    DPHistGradientBoostingRegressor,
    DPRandomForestClassifier,
)
from skdp.tree import DPDecisionTreeClassifier, _histogram
from skdp.tree._binning import COMPARE_EDGES, apply_bins, bin_edges, quantile_edges
from skdp.tree._grower import _children
from skdp.tree._histogram import DenseBins, LevelCounts, SparseBins, make_bins, root_counts


def _same_bits(a, b):
    """Equal arrays down to the sign of zero (np.array_equal takes -0.0 == 0.0)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


def _random_case(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    d = int(rng.integers(1, 7))
    n_bins = int(rng.choice([2, 3, 9, 33, 256]))
    binned = np.empty((n, d), dtype=np.uint8)
    for j in range(d):
        kind = rng.integers(4)
        if kind == 0:  # uniform over the bins
            binned[:, j] = rng.integers(0, n_bins, n)
        elif kind == 1:  # mostly one bin (a one-hot column)
            binned[:, j] = np.where(rng.random(n) < 0.9, rng.integers(n_bins),
                                    rng.integers(0, n_bins, n))
        elif kind == 2:  # one bin only
            binned[:, j] = rng.integers(n_bins)
        else:  # two bins tied for the most common
            binned[:, j] = rng.integers(0, 2, n) * (n_bins - 1)
    n_nodes = int(rng.choice([1, 2, 4, 8]))
    node = rng.integers(0, n_nodes, n).astype(np.int64)
    # weights of very different magnitudes, so that the order of the additions shows
    weights = rng.standard_normal(n) * 10.0 ** rng.uniform(-12, 12, n)
    weights[rng.random(n) < 0.05] = -0.0
    weights[rng.random(n) < 0.05] = 0.0
    if seed % 5 == 0:
        weights = np.ones(n)
    return binned, n_bins, node, n_nodes, weights


@pytest.mark.parametrize("chunk_rows", [None, 1, 7, 64])
@pytest.mark.parametrize("seed", range(300))
def test_dense_and_sparse_histograms_are_bit_identical(monkeypatch, seed, chunk_rows):
    if chunk_rows is not None:  # the dense sums by blocks of rows, each from the last's sums
        monkeypatch.setattr(_histogram, "CHUNK_ROWS", chunk_rows)
    binned, n_bins, node, n_nodes, weights = _random_case(seed)
    sparse = SparseBins(binned, n_bins)
    dense = DenseBins(binned, n_bins)
    assert np.array_equal(sparse.common, dense.common)
    hs, ts = sparse.histograms(node, n_nodes, weights)
    hd, td = dense.histograms(node, n_nodes, weights)
    assert hs.shape == hd.shape == (n_nodes, binned.shape[1], n_bins)
    assert np.array_equal(hs, hd) and np.array_equal(ts, td)
    assert _same_bits(hs, hd) and _same_bits(ts, td)


@pytest.mark.parametrize("seed", range(0, 300, 7))
def test_histograms_add_each_bin_in_row_order_and_the_common_bin_is_the_rest(seed):
    binned, n_bins, node, n_nodes, weights = _random_case(seed)
    hist, totals = DenseBins(binned, n_bins).histograms(node, n_nodes, weights)
    common = SparseBins(binned, n_bins).common
    d = binned.shape[1]
    expected = np.zeros((n_nodes, d, n_bins))
    for i in range(binned.shape[0]):  # one addition at a time, rows in increasing order
        for j in range(d):
            if binned[i, j] != common[j]:
                expected[node[i], j, binned[i, j]] += weights[i]
    total = np.zeros(n_nodes)
    for i in range(binned.shape[0]):
        total[node[i]] += weights[i]
    for m in range(n_nodes):
        for j in range(d):
            expected[m, j, common[j]] = total[m] - expected[m, j].sum()
    assert _same_bits(hist, expected) and _same_bits(totals, total)


@pytest.mark.parametrize("chunk_rows", [None, 7])
@pytest.mark.parametrize("seed", range(0, 300, 3))
def test_class_counts_are_the_one_hot_histograms_of_the_chosen_features(monkeypatch, seed,
                                                                         chunk_rows):
    """counts() equals the weighted histograms of each class's one-hot column, bit for bit."""
    if chunk_rows is not None:  # the dense counts by blocks of rows
        monkeypatch.setattr(_histogram, "CHUNK_ROWS", chunk_rows)
    binned, n_bins, node, n_nodes, _ = _random_case(seed)
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 4))
    label = rng.integers(0, k, binned.shape[0])
    d = binned.shape[1]
    features = np.flatnonzero(rng.random(d) < 0.6) if seed % 2 else np.arange(d)
    for layout in (SparseBins(binned, n_bins), DenseBins(binned, n_bins)):
        expected = np.stack([layout.histograms(node, n_nodes, (label == c).astype(float))[0]
                             for c in range(k)])[:, :, features]
        counts = layout.counts(node, n_nodes, label, k, features)
        assert counts.dtype == np.float64 and _same_bits(counts, expected)




@pytest.mark.parametrize("seed", range(5))
def test_sparse_counts_of_few_features_take_their_entries(seed):
    """Features with fewer than half of the entries: their runs of entries alone, same counts."""
    rng = np.random.default_rng(seed)
    n, d, n_bins, n_nodes, k = 500, 12, 33, 8, 3
    binned = rng.integers(0, n_bins, (n, d)).astype(np.uint8)
    binned[:, 1:] = np.where(rng.random((n, d - 1)) < 0.8, 0, binned[:, 1:])
    node, label = rng.integers(0, n_nodes, n), rng.integers(0, k, n)
    sparse, dense = SparseBins(binned, n_bins), DenseBins(binned, n_bins)
    for features in ([0, 5, 7], [3], []):
        length = np.diff(sparse.starts)[features]
        assert 2 * length.sum() < sparse.rows.size  # the runs of entries are taken
        counts = sparse.counts(node, n_nodes, label, k, features)
        assert counts.shape == (k, n_nodes, len(features), n_bins)
        assert _same_bits(counts, dense.counts(node, n_nodes, label, k, features))


@pytest.mark.parametrize("n_nodes", [85, 86])  # 3 classes, 256 bins: 65,280 and 66,048 cells
def test_dense_counts_in_uint16_cells_and_beyond_are_the_sparse_counts(monkeypatch, n_nodes):
    monkeypatch.setattr(_histogram, "CHUNK_ROWS", 1000)
    rng = np.random.default_rng(n_nodes)
    binned = rng.integers(0, 256, (3000, 3)).astype(np.uint8)
    binned[:, 1] = np.where(rng.random(3000) < 0.5, 255, binned[:, 1])  # the top cells
    label = rng.integers(0, 3, 3000)
    node = rng.integers(0, n_nodes, 3000)
    node[:10], label[:10] = n_nodes - 1, 2  # the last cell
    rows = np.flatnonzero(rng.random(3000) < 0.3)
    features = np.array([0, 1, 2])
    dense, sparse = DenseBins(binned, 256), SparseBins(binned, 256)
    assert _same_bits(dense.counts(node, n_nodes, label, 3, features),
                      sparse.counts(node, n_nodes, label, 3, features))
    selected = np.zeros(3000, dtype=bool)
    selected[rows] = True
    expected = sparse.counts(np.where(selected, node, n_nodes), n_nodes + 1, label, 3,
                             features)[:, :n_nodes]
    assert _same_bits(dense.counts(node, n_nodes, label, 3, features, rows), expected)

@pytest.mark.parametrize("chunk_rows", [None, 7])
@pytest.mark.parametrize("seed", range(40))
def test_level_counts_by_subtraction_are_the_direct_counts(monkeypatch, seed, chunk_rows):
    """Each level's counts from LevelCounts equal DenseBins.counts of every row, exactly.

    A tree of 1 to 6 levels over random bins (a missing bin, columns of a few codes as
    categorical ones have), each parent's rows sent to its children at random, some
    parents sending every row left (an empty child, then empty nodes below it), the
    features of each level a random set; the rule of SUBTRACT_COST set so that every
    level with 2 features shared with the level above counts the smaller children.
    """
    if chunk_rows is not None:
        monkeypatch.setattr(_histogram, "CHUNK_ROWS", chunk_rows)
    monkeypatch.setattr(_histogram, "SUBTRACT_COST", (-1.0, 0.0))
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(0, 500)), int(rng.integers(1, 8))
    n_bins = int(rng.choice([3, 9, 33]))
    binned = rng.integers(0, n_bins, (n, d)).astype(np.uint8)
    binned[rng.random((n, d)) < 0.1] = n_bins - 1  # the missing bin
    codes = rng.random(d) < 0.3  # a few codes, as a categorical feature's
    binned[:, codes] = rng.integers(0, min(4, n_bins), (n, int(codes.sum())))
    k = int(rng.integers(1, 4))
    label = rng.integers(0, k, n)
    dense = DenseBins(binned, n_bins)
    levels = LevelCounts(dense)
    subtracted = []
    spy = dense.int_counts

    def int_counts(*args):
        subtracted.append(len(args) > 5 and args[5] is not None)
        return spy(*args)

    monkeypatch.setattr(dense, "int_counts", int_counts)
    node, previous, expect = np.zeros(n, dtype=np.intp), np.zeros(0, np.intp), False
    for level in range(int(rng.integers(1, 7))):
        n_nodes = 2**level
        features = np.flatnonzero(rng.random(d) < 0.7)
        if features.size == 0:
            features = np.array([int(rng.integers(d))])
        got = levels.counts(node, n_nodes, label, k, features)
        direct = dense.counts(node, n_nodes, label, k, features)
        assert got.dtype == np.float64 and _same_bits(got, direct)
        expect |= np.isin(features, previous).sum() >= 2
        previous = features
        right = rng.random(n) < rng.random(n_nodes)[node]
        right &= (rng.random(n_nodes) < 0.8)[node]  # some nodes send every row left
        node = 2 * node + right
    assert any(subtracted) == expect



@pytest.mark.parametrize("seed", range(30))
def test_children_counts_are_the_counts_of_the_rows_moved(monkeypatch, seed):
    """LevelCounts.children: each child's class counts equal those of the rows that
    _children sends it, exactly, on both layouts; the next level's counts choose the same
    smaller children from them as from a count of the rows, and equal the direct counts.

    Random tables (a missing bin, codes), some nodes sending every row left (an empty
    child), and a node whose feature the level did not count sending every row left too.
    """
    monkeypatch.setattr(_histogram, "SUBTRACT_COST", (-1.0, 0.0))  # subtract whenever shared
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(0, 500)), int(rng.integers(2, 8))
    n_bins = int(rng.choice([3, 9, 33]))
    binned = rng.integers(0, n_bins, (n, d)).astype(np.uint8)
    binned[rng.random((n, d)) < 0.1] = n_bins - 1  # the missing bin
    k = int(rng.integers(1, 4))
    label = rng.integers(0, k, n)
    for layout in (DenseBins(binned, n_bins), SparseBins(binned, n_bins)):
        levels = LevelCounts(layout)
        chosen = []
        smaller = levels._smaller_children

        def spy(node, n_nodes, n_shared, sizes=None):
            got = smaller(node, n_nodes, n_shared, sizes)
            direct = smaller(node, n_nodes, n_shared)
            chosen.append(sizes is not None)
            assert (got is None and direct is None) or np.array_equal(got, direct)
            return got

        monkeypatch.setattr(levels, "_smaller_children", spy)
        node = np.zeros(n, dtype=np.intp)
        for level in range(5):
            n_nodes = 2**level
            features = np.unique(rng.integers(0, d, int(rng.integers(2, d + 1))))
            got = levels.counts(node, n_nodes, label, k, features)
            assert _same_bits(got, layout.counts(node, n_nodes, label, k, features))
            feature = rng.choice(features, n_nodes)
            table = rng.random((n_nodes, n_bins)) < 0.5
            table[rng.random(n_nodes) < 0.2] = False  # every row left
            uncounted = np.setdiff1d(np.arange(d), features)
            if uncounted.size and n_nodes > 1:  # a feature not counted: every row left
                feature[0], table[0] = uncounted[0], False
            children = levels.children(feature, table)
            node = _children(binned, node, n_nodes, feature, table)
            direct = np.bincount(node * k + label, minlength=2 * n_nodes * k)
            assert children.dtype == np.int64
            np.testing.assert_array_equal(children, direct.reshape(2 * n_nodes, k).T)
        assert any(chosen) == isinstance(layout, DenseBins)


@pytest.mark.parametrize("seed", range(6))
def test_root_counts_shared_by_trees_are_the_direct_counts(monkeypatch, seed):
    """Trees sharing ``roots`` get the root's direct counts; each feature is counted once."""
    binned, n_bins, _, _, _ = _random_case(seed)
    rng = np.random.default_rng(seed)
    k, n, d = int(rng.integers(1, 4)), binned.shape[0], binned.shape[1]
    label = rng.integers(0, k, n)
    root = np.zeros(n, dtype=np.intp)
    for layout in (SparseBins(binned, n_bins), DenseBins(binned, n_bins)):
        roots, counted = {}, []
        spy = layout.int_counts

        def count(node, n_nodes, label, n_classes, features, *rest, spy=spy):
            counted.extend(features.tolist())
            return spy(node, n_nodes, label, n_classes, features, *rest)

        monkeypatch.setattr(layout, "int_counts", count)
        for _ in range(4):  # four trees' roots
            features = np.flatnonzero(rng.random(d) < 0.5)
            got = LevelCounts(layout, roots).counts(root, 1, label, k, features)
            direct = spy(root, 1, label, k, features).astype(np.float64)
            assert _same_bits(got, direct)
        assert sorted(counted) == sorted(roots) and len(set(counted)) == len(counted)

@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", ["tree", "forest", "categorical"])
def test_trees_are_identical_with_and_without_subtraction(monkeypatch, name, seed):
    """Dense layout, missing values and categorical features: the same trees bit for bit."""
    X, y, frame = _table(seed)
    _layout(monkeypatch, "dense")
    monkeypatch.setattr(_histogram, "CHUNK_ROWS", 500)
    kw = dict(epsilon=1.0, random_state=seed, max_depth=6)
    make, data = {
        "tree": (lambda: DPDecisionTreeClassifier(bounds=(0, 1), **kw), X),
        "forest": (lambda: DPRandomForestClassifier(bounds=(0, 1), n_estimators=3, **kw), X),
        "categorical": (lambda: DPRandomForestClassifier(n_estimators=3, **kw), frame),
    }[name]
    models = []
    for cost in ((1e9, 1e9), (-1.0, 0.0)):  # never, and whenever 2 features are shared
        monkeypatch.setattr(_histogram, "SUBTRACT_COST", cost)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            models.append(make().fit(data, y))
    direct, subtracted = models
    for a, b in zip(_trees(direct), _trees(subtracted), strict=True):
        assert np.array_equal(a.feature, b.feature)
        assert np.array_equal(a.threshold, b.threshold)
        assert _same_bits(a.value, b.value) and _same_bits(a.split_gain, b.split_gain)
    assert _same_bits(direct.predict_proba(data), subtracted.predict_proba(data))

def test_make_bins_is_dense_unless_most_entries_are_in_their_common_bin():
    rng = np.random.default_rng(0)
    dense = rng.integers(0, 32, (1000, 5)).astype(np.uint8)
    assert isinstance(make_bins(dense, 33), DenseBins)
    one_hot = np.zeros((1000, 40), dtype=np.uint8)
    one_hot[np.arange(1000), rng.integers(0, 40, 1000)] = 31  # 1 entry in 40 outside bin 0
    assert isinstance(make_bins(one_hot, 33), SparseBins)
    assert isinstance(make_bins(np.zeros((0, 3), np.uint8), 33), SparseBins)
    column = np.zeros((800, 1), np.uint8)
    column[:100] = 5  # 1/8 of the entries outside the common bin: still sparse
    assert isinstance(make_bins(column, 33), SparseBins)
    column[100] = 5
    assert isinstance(make_bins(column, 33), DenseBins)
    assert not np.shares_memory(make_bins(dense, 33).columns, dense)  # C-ordered: copied
    columns = np.asfortranarray(dense)
    assert make_bins(columns, 33).columns is columns  # a Fortran-ordered one is not


@pytest.mark.parametrize("seed", range(10))
def test_root_children_counts_shared_by_trees_whose_roots_split_alike(monkeypatch, seed):
    """Trees sharing ``splits``: the root's children's counts of a feature are counted once
    per root split (feature and table) and equal the direct counts; another split (another
    table of the same feature, or another feature) counts its own."""
    rng = np.random.default_rng(seed)
    n, d, n_bins = int(rng.integers(1, 400)), 4, 9
    binned = rng.integers(0, n_bins, (n, d)).astype(np.uint8)
    k = int(rng.integers(1, 4))
    label = rng.integers(0, k, n)
    table = rng.random((2, n_bins)) < 0.5
    for layout in (DenseBins(binned, n_bins), SparseBins(binned, n_bins)):
        roots, splits, counted = {}, {}, []
        spy = layout.int_counts

        def count(node, n_nodes, label, n_classes, features, *rest, spy=spy):
            if n_nodes == 2:
                counted.extend(features.tolist())
            return spy(node, n_nodes, label, n_classes, features, *rest)

        monkeypatch.setattr(layout, "int_counts", count)
        # (root feature, its table, level 1's features, the features counted anew)
        trees = [(0, 0, [1, 2], [1, 2]), (0, 0, [1, 3], [3]), (0, 1, [1], [1]),
                 (2, 0, [1, 2, 3], [1, 2, 3]), (0, 0, [2, 3], [])]
        for feature, which, features, expected in trees:
            levels = LevelCounts(layout, roots, splits)
            root = np.zeros(n, dtype=np.intp)
            levels.counts(root, 1, label, k, np.array([0, 2]))
            levels.children(np.array([feature]), table[which][None])
            node = _children(binned, root, 1, [feature], table[which][None])
            del counted[:]
            got = levels.counts(node, 2, label, k, np.array(features))
            assert counted == expected
            assert _same_bits(got, spy(node, 2, label, k, np.array(features)).astype(float))


@pytest.mark.parametrize("seed", range(20))
def test_root_counts_are_the_direct_counts_and_choose_the_same_layout(monkeypatch, seed):
    """root_counts: every feature's class counts over every row, the same integers as each
    layout's counts at one node; summed over the classes, make_bins makes from them the
    layout and the common bins that it makes from its own count of the rows."""
    binned, n_bins, _, _, _ = _random_case(seed)
    rng = np.random.default_rng(seed)
    n, d = binned.shape
    k = int(rng.integers(1, 4))
    label = rng.integers(0, k, n)
    got = root_counts(binned, label, k, n_bins)
    root = np.zeros(n, dtype=np.intp)
    assert got.dtype == np.int64 and got.shape == (k, 1, d, n_bins)
    for layout in (SparseBins(binned, n_bins), DenseBins(binned, n_bins)):
        assert _same_bits(got, layout.counts(root, 1, label, k, np.arange(d)))
    for density in (1.0, -1.0, _histogram.SPARSE_DENSITY, 0.3):
        monkeypatch.setattr(_histogram, "SPARSE_DENSITY", density)
        own = make_bins(binned, n_bins)
        given = make_bins(binned, n_bins, bin_counts=got.sum(axis=(0, 1)))
        assert type(given) is type(own)
        np.testing.assert_array_equal(given.common, own.common)


def _layout(monkeypatch, layout):
    # SPARSE_DENSITY = 1: every matrix sparse; -1: every matrix with a row dense.
    monkeypatch.setattr(_histogram, "SPARSE_DENSITY", 1.0 if layout == "sparse" else -1.0)


def _table(seed, n=1500):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 6))
    X[:, 2] = (X[:, 2] < 0.05) * 0.7  # mostly one bin
    X[rng.random((n, 6)) < 0.04] = np.nan
    y = (X[:, 0] + np.nan_to_num(X[:, 1]) + 0.3 * rng.standard_normal(n) > 1).astype(int)
    y[(X[:, 3] > 0.7) & (y == 1)] = 2
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    frame["c"] = pd.Categorical(rng.choice(["a", "b", "c"], n), categories=["a", "b", "c"])
    return X, y, frame


def _trees(est):
    if hasattr(est, "_predictors"):
        return [tree for trees in est._predictors for tree in trees]
    return est._trees


def _fit_both(monkeypatch, make, X, y):
    monkeypatch.setattr(_histogram, "CHUNK_ROWS", 500)  # several blocks of rows
    models = []
    for layout in ("sparse", "dense"):
        _layout(monkeypatch, layout)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            models.append(make().fit(X, y))
    return models


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", ["boosting", "regressor", "tree", "forest", "categorical"])
def test_fitted_models_are_identical_with_either_layout(monkeypatch, name, seed, epsilon):
    X, y, frame = _table(seed)
    kw = dict(epsilon=epsilon, random_state=seed)
    make, data, target = {
        "boosting": (lambda: DPHistGradientBoostingClassifier(bounds=(0, 1), max_iter=4,
                                                              max_depth=3, **kw), X, y),
        "regressor": (lambda: DPHistGradientBoostingRegressor(bounds=(0, 1), bounds_y=(0, 2),
                                                              max_iter=4, **kw), X, y),
        "tree": (lambda: DPDecisionTreeClassifier(bounds=(0, 1), max_depth=4, **kw), X, y),
        "forest": (lambda: DPRandomForestClassifier(bounds=(0, 1), n_estimators=3, **kw), X, y),
        # bounds released privately (ε < ∞), categorical codes next to the numeric bins
        "categorical": (lambda: DPHistGradientBoostingClassifier(max_iter=4, **kw), frame, y),
    }[name]
    sparse, dense = _fit_both(monkeypatch, make, data, target)
    for a, b in zip(_trees(sparse), _trees(dense), strict=True):
        assert np.array_equal(a.feature, b.feature)
        assert np.array_equal(a.threshold, b.threshold)
        assert _same_bits(a.value, b.value) and _same_bits(a.split_gain, b.split_gain)
    predict = "predict_proba" if hasattr(sparse, "predict_proba") else "predict"
    assert _same_bits(getattr(sparse, predict)(data), getattr(dense, predict)(data))
    assert _same_bits(sparse.feature_importances_, dense.feature_importances_)


def _searchsorted_bins(X, edges):
    """The binning before the comparisons: np.searchsorted on each column."""
    out = np.empty(X.shape, dtype=np.uint8)
    for j in range(X.shape[1]):
        out[:, j] = np.searchsorted(edges[j], X[:, j], side="left")
        out[np.isnan(X[:, j]), j] = edges.shape[1] + 1
    return out


@pytest.mark.parametrize("max_bins", [2, 3, 32, COMPARE_EDGES + 1, COMPARE_EDGES + 2, 255])
@pytest.mark.parametrize("seed", range(4))
def test_apply_bins_counts_the_edges_below_as_searchsorted(max_bins, seed):
    rng = np.random.default_rng(seed)
    n, d = 500, 4
    lower, upper = np.array([0.0, -3.0, 2.0, 1.0]), np.array([1.0, 5.0, 2.0, 1.0 + 2.0**-40])
    edges = bin_edges(lower, upper, max_bins)  # feature 2 has equal edges
    X = lower + (upper - lower) * rng.uniform(-0.2, 1.2, (n, d))
    on_edge = rng.random((n, d)) < 0.2  # values equal to an edge, and their neighbours
    picks = edges[np.arange(d), rng.integers(0, max_bins - 1, (n, d))]
    nudge = rng.integers(-1, 2, (n, d))  # the edge, or the float just below or above it
    picks = np.where(nudge < 0, np.nextafter(picks, -np.inf),
                     np.where(nudge > 0, np.nextafter(picks, np.inf), picks))
    X = np.where(on_edge, picks, X)
    X[rng.random((n, d)) < 0.1] = np.nan
    quantiles = quantile_edges(X, max_bins)
    for e in (edges, quantiles):
        for data in (X, np.asfortranarray(X)):
            got = apply_bins(data, e)
            assert got.dtype == np.uint8 and got.flags.f_contiguous
            assert np.array_equal(got, _searchsorted_bins(X, e))
    X32 = X.astype(np.float32)
    assert np.array_equal(apply_bins(X32, edges), _searchsorted_bins(X32, edges))


@pytest.mark.parametrize("seed", range(20))
def test_apply_bins_on_equal_width_grids_by_arithmetic_is_searchsorted(seed):
    """The grid's guess and one comparison on each side: any scale, values far outside."""
    rng = np.random.default_rng(seed)
    d = 6
    max_bins = int(rng.choice([9, 16, 32, 65]))
    lower = rng.normal(0, 10.0 ** rng.uniform(-6, 6, d))
    upper = lower + 10.0 ** rng.uniform(-8, 8, d)
    edges = bin_edges(lower, upper, max_bins)
    X = lower + (upper - lower) * rng.uniform(-0.5, 1.5, (3000, d))
    X[:20] = rng.choice([-1e300, 1e300, 0.0], (20, d))
    picks = edges[np.arange(d), rng.integers(0, max_bins - 1, (3000, d))]
    X = np.where(rng.random(X.shape) < 0.3, np.nextafter(picks, rng.choice(
        [-np.inf, np.inf], X.shape)), X)
    X = np.where(rng.random(X.shape) < 0.1, picks, X)
    X[rng.random(X.shape) < 0.05] = np.nan
    assert np.array_equal(apply_bins(X, edges), _searchsorted_bins(X, edges))
