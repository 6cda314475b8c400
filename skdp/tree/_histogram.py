"""Gradient and hessian histograms of the nodes of one tree level.

Most entries of a tabular row sit in their feature's most common bin (a
one-hot column is mostly 0), so only the other entries are summed; each
node's most common bin gets the node's total minus its other bins (the
subtraction trick of LightGBM, Ke et al. 2017, Sec. 3, used per bin).
This is internal arithmetic on exact sums: nothing here is released.
"""

import numpy as np

__all__ = ["SparseBins"]


class SparseBins:
    """The binned matrix, kept as its entries outside each feature's most common bin."""

    def __init__(self, binned, n_bins):
        self.n_rows, self.n_features = binned.shape
        self.n_bins = n_bins
        d = self.n_features
        self.common = np.array([np.bincount(binned[:, j], minlength=n_bins).argmax()
                                for j in range(d)], dtype=np.int64)
        rows, cols = np.nonzero(binned != self.common[None, :].astype(binned.dtype))
        self.rows = rows
        # Flat position (feature, bin) of each entry, in a (d, n_bins) block.
        self.offset = cols * n_bins + binned[rows, cols].astype(np.int64)

    def histograms(self, node, n_nodes, weights):
        """Sums of ``weights`` per (node, feature, bin): an array (n_nodes, d, n_bins).

        ``node`` (int array, one per row) is each row's node on the level.
        """
        d, b = self.n_features, self.n_bins
        flat = node[self.rows] * (d * b) + self.offset
        hist = np.bincount(flat, weights=weights[self.rows], minlength=n_nodes * d * b)
        hist = hist.astype(np.float64, copy=False).reshape(n_nodes, d, b)
        totals = np.bincount(node, weights=weights, minlength=n_nodes)
        rest = totals[:, None] - hist.sum(axis=2)
        hist[:, np.arange(d), self.common] += rest
        return hist, totals
