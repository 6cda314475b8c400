"""From the sums to the released values: noise, quantiles, intervals and flags.

Everything here runs on the client after the charge. The noise is drawn in a
fixed order (the sums in the order of :func:`._aggregates.sums_needed`, the
groups in the order of the keys, then the quantiles), so every engine releases
the same values for the same seed. Intervals and flags are post-processing of
the released values and the public noise scales.
"""

from __future__ import annotations

import math

import numpy as np

from ..stats import _noise
from . import _aggregates, _keys, _plan
from ._aggregates import Aggregate

__all__ = []  # internal

# A group is flagged when the (1 − α) interval of one of its means covers more than this
# share of the column's range, or a quantile's rank error exceeds this share of its count.
SMALL_SHARE = 0.25


def quantity_name(column, part):
    names = {"rows": "rows", "n": "count", "sum": "sum", "s1": "centred sum",
             "s2": "centred sum of squares"}
    return names[part] if column is None else f"{column} {names[part]}"


def noisy_counts(counts, eps, delta, rng, n_outputs, sensitivity):
    """``n_outputs`` histograms of counts plus their noise (:func:`skdp.stats._noise._noisy_counts`)."""
    return _noise._noisy_counts(counts, epsilon=eps, delta=delta, rng=rng, secure=False,
                                n_outputs=n_outputs, sensitivity=sensitivity)


def noisy_sums(sums, needs, bounds, plan, n_groups, rng, exact):
    """Each needed sum plus its noise; and each sum's (distribution, scale)."""
    noisy, noise = {}, {}
    if not needs:
        return noisy, noise
    sens = [_aggregates.sensitivity(part, *bounds.get(column, (0.0, 1.0)))
            for column, part in needs]
    if exact:
        for need in needs:
            noisy[need] = np.asarray(sums[need], dtype=float)
            noise[need] = ("none", 0.0)
        return noisy, noise
    dist, scales = plan.sum_noise(sens)
    draw = rng.laplace if dist == "laplace" else rng.normal
    for need, scale in zip(needs, scales):
        total = np.asarray(sums[need], dtype=float)
        noisy[need] = total + draw(0.0, scale, size=total.shape)
        noise[need] = (dist, float(scale))
    return noisy, noise


def selection_counts(people, plan, intervals, alpha):
    """(columns, flags) of a count whose values are the key selection's noisy counts."""
    columns = {"count": people}
    if intervals:
        eps, _ = plan.budgets["select"]
        half = 0.0 if plan.epsilon == math.inf else _plan.noise_half_width(
            "laplace", _keys.selection_scale(eps, plan.max_groups), alpha)
        columns["count_lower"], columns["count_upper"] = people - half, people + half
    return columns, np.zeros(people.size, dtype=bool)


def release_quantile(sums, column, level, bounds, plan, rng, exact):
    counts = sums[(column, "bins")]
    losses = _aggregates.quantile_losses(counts, level)
    edges = _aggregates.grid(*bounds[column], counts.shape[0])
    if exact:
        out = _aggregates.sample_quantiles(losses, edges, math.inf, 1.0, rng)
        return np.where(counts.sum(axis=1) > 0, out, np.nan)
    return _aggregates.sample_quantiles(losses, edges, plan.quantile_epsilon, plan.max_rows, rng)


def _half(noise, need, alpha):
    dist, scale = noise[need]
    return 0.0 if dist == "none" else _plan.noise_half_width(dist, scale, alpha)


def _box(noisy, noise, column, part, alpha):
    """Where the sum lies before its noise, with probability 1 − α: (low, high)."""
    half = _half(noise, (column, part), alpha)
    value = noisy[(column, part)]
    return value - half, value + half


def _ratio_range(num, den):
    """The range of a/b over a in [num], b in [den] with b >= 1 (the count's floor)."""
    lo_b, hi_b = np.maximum(den[0], 1.0), np.maximum(den[1], 1.0)
    candidates = np.stack([num[0] / lo_b, num[0] / hi_b, num[1] / lo_b, num[1] / hi_b])
    return candidates.min(axis=0), candidates.max(axis=0)


def interval(agg, column, noisy, noise, bounds, alpha, n_groups):
    """An interval per group that holds the noiseless value with probability at least 1 − α.

    Counts, sums and histograms: the central (1 − α) interval of their noise.
    A mean, variance or standard deviation is a function of k noisy sums
    (k = 2 or 3): each sum's noise is within its (1 − α/k) interval with
    probability at least 1 − α together (a union bound), and the interval is
    the range of the function over that box of sums (and clipped as the
    release is). It covers the noise only: not the sampling of rows by
    contribution bounding, nor the clipping to the bounds. Quantiles: NaN
    (:meth:`GroupBy.accuracy` gives their rank error).
    """
    if agg.kind == "quantile":
        nan = np.full(n_groups, np.nan)
        return nan, nan
    if column is None or agg.kind in ("count", "sum", "histogram"):
        part = "rows" if column is None else {"count": "n", "sum": "sum",
                                              "histogram": "hist"}[agg.kind]
        return _box(noisy, noise, column, part, alpha)
    lower_b, upper_b = bounds[column]
    c, h = (lower_b + upper_b) / 2.0, (upper_b - lower_b) / 2.0
    k = 2 if agg.kind == "mean" else 3
    n = _box(noisy, noise, column, "n", alpha / k)
    m1 = _ratio_range(_box(noisy, noise, column, "s1", alpha / k), n)
    m1 = np.clip(m1[0], -h, h), np.clip(m1[1], -h, h)
    if agg.kind == "mean":
        return c + m1[0], c + m1[1]
    m2 = _ratio_range(_box(noisy, noise, column, "s2", alpha / k), n)
    m2 = (np.clip(m2[0] + h * h / 2.0, 0.0, h * h), np.clip(m2[1] + h * h / 2.0, 0.0, h * h))
    square_low = np.where((m1[0] <= 0) & (m1[1] >= 0), 0.0,
                          np.minimum(m1[0] ** 2, m1[1] ** 2))
    square_high = np.maximum(m1[0] ** 2, m1[1] ** 2)
    var_low = np.clip(m2[0] - square_high, 0.0, h * h)
    var_high = np.clip(m2[1] - square_low, 0.0, h * h)
    # ddof = 1: times n/(n − 1), which falls as n grows, over the count's range
    n_low, n_high = np.maximum(n[0], 1.0), np.maximum(n[1], 1.0)
    var_low = var_low * n_high / np.maximum(n_high - 1.0, 1.0)
    var_high = var_high * n_low / np.maximum(n_low - 1.0, 1.0)
    if agg.kind == "std":
        return np.sqrt(var_low), np.sqrt(var_high)
    return var_low, var_high


def small_groups(aggregates, noisy, noise, bounds, plan, alpha, n_groups):
    """Groups whose means or quantiles say little, from the released values and public noise."""
    flags = np.zeros(n_groups, dtype=bool)
    if plan.epsilon == math.inf:
        return flags
    for column, agg in aggregates:
        if column is None or agg.kind in ("count", "sum", "histogram"):
            continue
        lower_b, upper_b = bounds[column]
        if agg.kind == "quantile":
            n = noisy[(column, "n")]
            flags |= plan.rank_error(alpha, n_groups) > SMALL_SHARE * np.maximum(n, 0.0)
            continue
        mean = Aggregate("mean")
        lower, upper = interval(mean, column, noisy, noise, bounds, alpha, n_groups)
        flags |= (upper - lower) > SMALL_SHARE * (upper_b - lower_b)
    return flags
