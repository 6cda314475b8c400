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
    (NaN) falls in the bin ``max_bins`` (= ``edges.shape[1] + 1``).
    """
    out = np.empty(X.shape, dtype=np.uint8)
    missing = edges.shape[1] + 1
    for j in range(X.shape[1]):
        out[:, j] = np.searchsorted(edges[j], X[:, j], side="left")
        out[np.isnan(X[:, j]), j] = missing
    return out
