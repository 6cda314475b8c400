"""The rows' moves to their children (skdp.tree._grower._children)."""

import numpy as np
import pytest

from skdp.tree._grower import BLOCK, _children, descend


def _direct(binned, local, feature, table):
    """2·node + table[node, bin of the node's feature], row by row (the definition)."""
    rows = np.arange(local.shape[0])
    return 2 * local + table[local, binned[rows, np.asarray(feature)[local]]]


def _level(rng, n, n_nodes, n_bins, d=6):
    # numeric features of n_bins - 1 bins and their missing bin (NaN), categorical features
    # of 3 and 5 categories and their missing code, in one uint8 table
    binned = rng.integers(0, n_bins - 1, size=(n, d)).astype(np.uint8)
    binned[rng.random((n, d)) < 0.1] = n_bins - 1  # missing values
    binned[:, 1] = rng.integers(0, 4, size=n)  # categorical: codes 0..2, 3 missing
    binned[:, 4] = rng.integers(0, 6, size=n)  # categorical: codes 0..4, 5 missing
    local = rng.integers(0, n_nodes, size=n).astype(np.intp)
    if n_nodes > 2:
        local[local == n_nodes - 1] = 0  # a node without rows
    feature = rng.integers(0, d, size=n_nodes)
    table = rng.random((n_nodes, n_bins)) < 0.5
    return binned, local, feature, table


@pytest.mark.parametrize("n_nodes", [1, 2, 4, 8, 16, 64])
@pytest.mark.parametrize("n_bins", [33, 256])
def test_children_equal_the_direct_lookup(n_nodes, n_bins):
    rng = np.random.default_rng(n_nodes * 1000 + n_bins)
    n = 2 * BLOCK + 77  # full blocks and a partial one
    binned, local, feature, table = _level(rng, n, n_nodes, n_bins)
    expected = _direct(binned, local, feature, table)
    for layout in (np.asfortranarray(binned), np.ascontiguousarray(binned)):
        got = _children(layout, local, n_nodes, feature, table)
        assert got.dtype == np.intp
        np.testing.assert_array_equal(got, expected)
        out = np.full(n, -1, dtype=np.intp)
        assert _children(layout, local, n_nodes, feature, table, out=out) is out
        np.testing.assert_array_equal(out, expected)


def test_children_of_nodes_that_share_a_feature():
    rng = np.random.default_rng(7)
    n = BLOCK + 5
    for feature in ([3, 3], [2, 2, 2, 2], [0, 5, 0, 5, 1, 1, 0, 0]):
        n_nodes = len(feature)
        binned, local, _, table = _level(rng, n, n_nodes, 33)
        np.testing.assert_array_equal(_children(binned, local, n_nodes, feature, table),
                                      _direct(binned, local, feature, table))


def test_descend_equals_the_levels_one_by_one():
    rng = np.random.default_rng(3)
    n, depth = 3 * BLOCK // 2, 4
    binned = np.asfortranarray(rng.integers(0, 33, size=(n, 6)).astype(np.uint8))
    feature = rng.integers(0, 6, size=2**depth - 1)
    threshold = rng.random((2**depth - 1, 33)) < 0.5
    node = np.zeros(n, dtype=np.intp)  # heap index of each row's node
    for _ in range(depth):
        node = 2 * node + 1 + threshold[node, binned[np.arange(n), feature[node]]]
    np.testing.assert_array_equal(descend(binned, feature, threshold, depth),
                                  node - (2**depth - 1))
