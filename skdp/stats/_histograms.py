"""Histograms: their (curve, release) pair, and the post-processing of noisy counts.

A row falls in at most one bin, so a histogram is one noisy vector of counts
of sensitivity 1, and k histograms of the same rows are k sums in the sense
of :mod:`skdp.stats._noise` (:func:`~skdp.stats._noise._noisy_counts`).
Frequencies and densities divide the noisy counts by their own noisy total:
post-processing, no extra budget.
"""

import math

import numpy as np

from ._checks import _check_n_outputs
from ._noise import _noisy_counts, _sums_curve

__all__ = []  # internal: see skdp.stats._noise


def _histogram_curve(epsilon, delta, n_outputs=1, *, secure=False):
    """Curve of a histogram (any number of bins, 1-D or d-D).

    A row falls in at most one bin, so adding or removing it changes one
    count by 1: L1 = L2 sensitivity 1 over the whole vector of counts
    (Dwork, McSherry, Nissim & Smith 2006, Example 1; Dwork & Roth 2014,
    Sec. 3.3). The bins are one noisy release whatever their number. Pass
    ``n_outputs`` > 1 for that many histograms of the same rows (for example
    one per feature), which compose.
    """
    # k histograms = k sensitivity-1 sums in the sense of _sums_curve: Laplace
    # ε/k each, or one Gaussian of L2 sensitivity √k; one row moves one bin.
    return _sums_curve(epsilon, delta, _check_n_outputs(n_outputs), secure=secure)


def _noisy_frequencies(noisy):
    """Noisy counts floored at 0 over their own noisy total (post-processing).

    Not divided by the private true n, so no extra budget is spent; an
    all-zero noisy histogram gives uniform frequencies.
    """
    counts = np.maximum(noisy, 0.0)
    total = counts.sum()
    if total > 0:
        return counts / total
    return np.full(counts.shape, 1.0 / counts.size)


def _density(noisy, edges):
    """numpy's ``density=True`` applied to noisy counts (post-processing).

    :func:`_noisy_frequencies` divided by the bins' widths (areas).
    """
    noisy = np.asarray(noisy, dtype=float)
    widths = np.ones(noisy.shape)
    for axis, e in enumerate(edges):
        shape = [1] * noisy.ndim
        shape[axis] = -1
        widths = widths * np.diff(e).reshape(shape)
    return _noisy_frequencies(noisy) / widths


def _histogram_release(a, *, epsilon, delta, bins, range, rng, secure, density=False, n_outputs=1):
    """Noisy ``np.histogram(a, bins, range)``: returns (hist, bin_edges).

    ``n_outputs`` is the number of histograms charged together by the
    caller's curve (each gets its share, see :func:`_histogram_curve`).
    """
    counts, edges = np.histogram(np.asarray(a, dtype=float).ravel(), bins=bins, range=range)
    if epsilon == math.inf:
        if density:
            return np.histogram(np.asarray(a, dtype=float).ravel(), bins=bins, range=range,
                                density=True)
        return counts, edges
    noisy = _noisy_counts(counts, epsilon=epsilon, delta=delta, rng=rng, secure=secure,
                          n_outputs=n_outputs)
    return (_density(noisy, [edges]) if density else noisy), edges


def _histogramdd_release(sample, *, epsilon, delta, bins, range, rng, secure, density=False,
                         n_outputs=1):
    """Noisy ``np.histogramdd(sample, bins, range)``: returns (hist, edges)."""
    counts, edges = np.histogramdd(sample, bins=bins, range=range)
    if epsilon == math.inf:
        if density:
            return np.histogramdd(sample, bins=bins, range=range, density=True)
        return counts, edges
    noisy = _noisy_counts(counts.astype(np.int64), epsilon=epsilon, delta=delta, rng=rng,
                          secure=secure, n_outputs=n_outputs)
    return (_density(noisy, edges) if density else noisy), edges
