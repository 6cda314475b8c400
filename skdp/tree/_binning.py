"""Bin edges of the features, from public or released bounds, or exact quantiles (ε = ∞).

The edges decide every split a tree can make, so they are part of the
privacy analysis: with finite ε they come from public ``bounds`` or from
bounds released by :func:`skdp.stats.bounds` (charged in the fit's one
charge), split into ``max_bins`` equal-width bins; they are never read
from the data. Only with ``epsilon=inf`` (no privacy) are they the data's
quantiles, as scikit-learn's ``HistGradientBoosting*`` bins its features.

A missing value (NaN) of a numeric feature gets a bin of its own, the bin
``max_bins`` after the ``max_bins`` bins of the values (scikit-learn's
``missing_values_bin_idx``): a public index, whatever the data.
"""

import numpy as np

__all__ = ["bin_edges", "apply_bins"]

# apply_bins counts the edges below each value with one comparison per edge up to this many
# edges, and by binary search (np.searchsorted) above it. Measured on 2·10^5 uniform values
# and 31 edges: 0.18 ns per value and edge (1.1 ms), against 26 ns per value for the search
# of a contiguous column (5.3 ms; 7.0 ms for a column of a C-ordered X). The comparisons run
# on blocks of about BLOCK values (rows × features), X read along its rows: on a C-ordered
# 10^6 × 50 X and 31 edges, medians of 4 interleaved rounds 0.75 / 0.78 / 0.99 / 0.98 s in
# blocks of 2^15 / 2^16 / 2^17 / 2^18 values, against 1.24 s column by column.
COMPARE_EDGES = 64
BLOCK = 2**16

# From this many edges, apply_bins finds a value's bin on an equal-width grid by arithmetic
# (a guess from (x − e_0)/w, then one comparison with the edge on each side) for the features
# whose edges lie on such a grid (public or released bounds, ε < ∞). Measured on 10^6 × 20
# uniform values and 31 edges: see docs/benchmarks.md, "Boosting at scale".
GRID_EDGES = 8
# ... on blocks of about this many values (its arrays of the block stay in the cache): on
# 10^6 × 20 uniform values and 31 edges, CPU medians of 3, blocks of 2^12 / 2^13 / 2^14 /
# 2^15 / 2^16 values: 0.28 / 0.21 / 0.19 / 0.21 / 0.23 s.
GRID_BLOCK = 2**14


def bin_edges(lower, upper, max_bins):
    """Inner edges of ``max_bins`` equal-width bins of each feature, shape (d, max_bins − 1).

    A feature with ``lower == upper`` gets ``max_bins − 1`` equal edges: every
    value falls in one bin (the feature cannot split).
    """
    steps = np.arange(1, max_bins) / max_bins
    return lower[:, None] + (upper - lower)[:, None] * steps[None, :]


def _percentile_method():
    import sklearn
    from sklearn.utils.fixes import parse_version

    new = parse_version(sklearn.__version__).release >= (1, 7)
    return "averaged_inverted_cdf" if new else "midpoint"


def quantile_edges(X, max_bins):
    """Non-private inner edges: midpoints between distinct values, or the data's quantiles.

    The rule of scikit-learn's ``_find_binning_thresholds``: with at most
    ``max_bins`` distinct values, the midpoints between consecutive ones;
    otherwise the percentiles ``100·k/max_bins`` (``method="averaged_inverted_cdf"``
    from scikit-learn 1.7, ``"midpoint"`` before, to match the installed one).
    Padded with the last edge to ``max_bins − 1`` columns. Missing values
    (NaN) are left out, as scikit-learn does. Only for ε = ∞.
    """
    d = X.shape[1]
    edges = np.empty((d, max_bins - 1))
    for j in range(d):
        column = X[:, j][~np.isnan(X[:, j])]
        distinct = np.unique(column)
        if distinct.size <= max_bins:
            inner = (distinct[:-1] + distinct[1:]) * 0.5
        else:
            pct = np.linspace(0, 100, num=max_bins + 1)[1:-1]
            inner = np.percentile(column, pct, method=_percentile_method())
        if inner.size == 0:
            inner = np.array([np.inf])
        edges[j] = np.concatenate([inner, np.full(max_bins - 1 - inner.size, inner[-1])])
    return edges


def apply_bins(X, edges):
    """The bin of each entry: the number of inner edges strictly below it (uint8), shape of X.

    A value equal to an edge falls in the bin to the edge's left, as in
    scikit-learn (``x <= threshold`` goes left). Values outside the bounds
    fall in the first or last bin, as if clipped to them. A missing value
    (NaN) falls in the bin ``max_bins`` (= ``edges.shape[1] + 1``). The result
    is Fortran-ordered: the histograms add one feature's column at a time.
    """
    out = np.empty(X.shape, dtype=np.uint8, order="F")  # one contiguous column per feature
    n, d = X.shape
    missing = edges.shape[1] + 1
    if edges.shape[1] > COMPARE_EDGES:
        for j in range(d):
            column = np.ascontiguousarray(X[:, j], dtype=np.float64)
            out[:, j] = np.searchsorted(edges[j], column, side="left")
            out[np.isnan(column), j] = missing
        return out
    # The number of edges below each value: on an equal-width grid by arithmetic, otherwise
    # edge by edge (the same count as searchsorted's: the edges are sorted). A block of rows at
    # a time, all features at once, so that X is read along its rows and the block stays in
    # the cache.
    grid = _Grid(edges) if edges.shape[1] >= GRID_EDGES else None
    on_grid = np.zeros(d, dtype=bool) if grid is None else grid.features
    rest = np.flatnonzero(~on_grid)
    by_edge = np.ascontiguousarray(edges[rest].T)  # (edges, d): the k-th edge of each feature
    rows = max(1, (GRID_BLOCK if on_grid.all() else BLOCK) // max(d, 1))
    for start in range(0, n, rows):
        block = np.asarray(X[start:start + rows], dtype=np.float64)
        if on_grid.all():
            out[start:start + block.shape[0]] = grid.bins(block)
            continue
        if on_grid.any():
            out[start:start + block.shape[0], on_grid] = grid.bins(block[:, on_grid])
        part = block if rest.size == d else block[:, rest]
        count = np.zeros(part.shape, dtype=np.uint8)
        above = np.empty(part.shape, dtype=bool)
        for edge in by_edge:
            np.greater(part, edge, out=above)
            count += above
        np.isnan(part, out=above)
        count[above] = missing
        out[start:start + block.shape[0], rest] = count
    return out


class _Grid:
    """The bins of the features whose inner edges lie on an equal-width grid, by arithmetic.

    A feature is on the grid when its m >= 2 edges are finite and each lies
    within w/8 of e_0 + k·w, w = (e_{m−1} − e_0)/(m − 1) > 0, and w is not
    below 2^-40 of the edges' magnitude. Then the guess
    g = ⌊(x − e_0)/w⌋ + 1 (clipped to 0..m) is within one of the true bin t =
    #{k : e_k < x}, and one comparison with each of g's two edges gives t
    exactly: t = g + [x > e_g] − [x <= e_{g−1}] (e_{−1} = −∞, e_m = +∞).
    """

    def __init__(self, edges):
        m = edges.shape[1]
        e0, last = edges[:, 0], edges[:, -1]
        with np.errstate(all="ignore"):
            width = (last - e0) / (m - 1)
            ideal = e0[:, None] + width[:, None] * np.arange(m)
            self.features = (np.all(np.isfinite(edges), axis=1) & (width > 0)
                             & np.all(np.abs(edges - ideal) <= width[:, None] / 8, axis=1)
                             & (np.abs(e0) + np.abs(last) < width * 2.0**40))
        kept = edges[self.features]
        self.m = m
        self.e0 = e0[self.features]
        self.scale = 1.0 / width[self.features]
        f = kept.shape[0]
        # Bin g of feature i: its lower edge at i·(m + 1) + g of below, its upper one of above.
        self.below = np.concatenate([np.full((f, 1), -np.inf), kept], axis=1).ravel()
        self.above = np.concatenate([kept, np.full((f, 1), np.inf)], axis=1).ravel()
        self.offset = np.arange(f) * (m + 1)

    def bins(self, block):
        """uint8 bins of a (rows, features on the grid) float64 block; NaN: the bin m + 1."""
        m = self.m
        with np.errstate(over="ignore"):  # far outside the bounds: ±inf, then clipped
            guess = block - self.e0
            guess *= self.scale
        np.fmax(guess, -1.0, out=guess)  # NaN becomes −1 too
        np.fmin(guess, float(m), out=guess)
        np.floor(guess, out=guess)
        t = guess.astype(np.intp)
        t += 1
        np.minimum(t, m, out=t)
        index = t + self.offset
        t += block > self.above[index]
        t -= block <= self.below[index]
        t[np.isnan(block)] = m + 1
        return t.astype(np.uint8)
