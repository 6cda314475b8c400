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

from ..stats import _core
from . import _aggregates, _plan
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
    return _core._noisy_counts(counts, epsilon=eps, delta=delta, rng=rng, secure=False,
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


def release_quantile(sums, column, level, bounds, plan, rng, exact):
    n = np.cumsum(sums[(column, "le")], axis=1)[:, -1].astype(float)
    losses = _aggregates.quantile_losses(sums[(column, "lt")], sums[(column, "le")], n, level)
    points = _aggregates.grid(*bounds[column])
    if exact:
        out = _aggregates.sample_quantiles(losses, points, math.inf, 1.0, rng)
        return np.where(n > 0, out, np.nan)
    return _aggregates.sample_quantiles(losses, points, plan.quantile_epsilon, plan.max_rows, rng)


def _half(noise, need, alpha):
    dist, scale = noise[need]
    return 0.0 if dist == "none" else _plan.noise_half_width(dist, scale, alpha)


def _std(noise, need):
    dist, scale = noise[need]
    return 0.0 if dist == "none" else _plan.noise_std(dist, scale)


def interval(agg, column, noisy, noise, bounds, alpha, n_groups):
    """The (1 − α) noise interval of one aggregate per group (post-processing)."""
    if agg.kind == "quantile":
        nan = np.full(n_groups, np.nan)
        return nan, nan
    value = _aggregates.finish(agg, column, noisy, bounds, exact=False)
    if column is None or agg.kind in ("count", "sum", "histogram"):
        need = (column, "rows") if column is None else (
            column, {"count": "n", "sum": "sum", "histogram": "hist"}[agg.kind])
        half = _half(noise, need, alpha)
        return value - half, value + half
    from scipy.special import ndtri

    z = float(ndtri(1.0 - alpha / 2.0))
    lower_b, upper_b = bounds[column]
    h = (upper_b - lower_b) / 2.0
    n = np.maximum(noisy[(column, "n")], 1.0)
    s1 = noisy[(column, "s1")]
    sd_n, sd_1 = _std(noise, (column, "n")), _std(noise, (column, "s1"))
    if agg.kind == "mean":
        # m = c + s1/n: ∂m/∂s1 = 1/n, ∂m/∂n = −s1/n² (linearised; noise only)
        sd = np.sqrt((sd_1 / n) ** 2 + (s1 * sd_n / n**2) ** 2)
        return np.clip(value - z * sd, lower_b, upper_b), np.clip(value + z * sd, lower_b, upper_b)
    s2 = noisy[(column, "s2")]
    sd_2 = _std(noise, (column, "s2"))
    # v = s2/n + h²/2 − (s1/n)²: ∂v/∂s2 = 1/n, ∂v/∂s1 = −2s1/n², ∂v/∂n = −s2/n² + 2s1²/n³
    sd = np.sqrt((sd_2 / n) ** 2 + (2 * s1 * sd_1 / n**2) ** 2
                 + ((-s2 / n**2 + 2 * s1**2 / n**3) * sd_n) ** 2)
    var = _aggregates.finish(Aggregate("var"), column, noisy, bounds, exact=False)
    lower, upper = np.maximum(var - z * sd, 0.0), np.minimum(var + z * sd, h * h * 2.0)
    if agg.kind == "std":
        return np.sqrt(lower), np.sqrt(upper)
    return lower, upper


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
            flags |= plan.rank_error(alpha) > SMALL_SHARE * np.maximum(n, 0.0)
            continue
        mean = Aggregate("mean")
        lower, upper = interval(mean, column, noisy, noise, bounds, alpha, n_groups)
        flags |= (upper - lower) > 2 * SMALL_SHARE * (upper_b - lower_b)
    return flags
