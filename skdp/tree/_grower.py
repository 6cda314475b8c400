"""Depth-wise growth of one tree, and the fitted tree's predictor.

A tree is complete to ``max_depth``: its shape is public (it never depends
on the data), so the cost of a fit is fixed by its parameters. Nodes are
numbered as a heap (root 0, children 2i + 1 and 2i + 2); a row goes right
when its bin is >= the node's threshold bin. A node that the exact
splitter leaves unsplit sends every row left (threshold ``n_bins``).
"""

import numpy as np

__all__ = ["TreePredictor", "grow_tree"]


class TreePredictor:
    """A fitted tree: split features and threshold bins per inner node, values per leaf."""

    def __init__(self, feature, threshold, value):
        self.feature = feature
        self.threshold = threshold
        self.value = value
        self.depth = int(np.log2(value.shape[0]))

    def leaf_index(self, binned):
        n = binned.shape[0]
        node = np.zeros(n, dtype=np.int64)
        rows = np.arange(n)
        for _ in range(self.depth):
            right = binned[rows, self.feature[node]] >= self.threshold[node]
            node = 2 * node + 1 + right
        return node - (self.value.shape[0] - 1)

    def predict(self, binned):
        return self.value[self.leaf_index(binned)]


def grow_tree(bins, binned, g, h, *, max_depth, splitter, learning_rate, rng):
    """Grow one tree on gradients ``g`` and hessians ``h``; returns (predictor, each row's leaf)."""
    n = binned.shape[0]
    rows = np.arange(n)
    n_inner = 2**max_depth - 1
    feature = np.zeros(n_inner, dtype=np.int64)
    threshold = np.zeros(n_inner, dtype=np.int64)
    local = np.zeros(n, dtype=np.int64)  # each row's node among the level's nodes
    for level in range(max_depth):
        n_nodes = 2**level
        f, t = splitter.split(bins, local, n_nodes, g, h, rng)
        first = n_nodes - 1
        feature[first:first + n_nodes] = f
        threshold[first:first + n_nodes] = t
        right = binned[rows, f[local]] >= t[local]
        local = 2 * local + right
    n_leaves = 2**max_depth
    G, H = splitter.leaves(local, n_leaves, g, h, rng)
    value = splitter.leaf_values(G, H, learning_rate)
    return TreePredictor(feature, threshold, value), local
