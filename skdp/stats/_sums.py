"""Count, sum, mean, variance and standard deviation: their (curve, release) pairs.

Each release is one release of k noisy sums (:mod:`skdp.stats._noise`, whose
docstring states the pairs' contract and the conventions): a count or a sum
is one noisy sum per output (k = d), a mean a noisy count and d centred sums
(k = d + 1), a variance or a standard deviation a noisy count, d centred sums
and d centred sums of squares (k = 2d + 1). A float release of one output
with scalar bounds takes a faster path to the same sum
(:func:`_one_total`).
"""

import math
from functools import partial

import numpy as np

from ..utils._rows import is_lazy, row_sums
from ._checks import _check_axis, _check_n_outputs
from ._noise import (
    _ColumnSums,
    _column_bounds,
    _flatten,
    _noisy_counts,
    _noise_scales,
    _noisy_sums,
    _scalar_if_one,
    _sums_curve,
    _sums_delta,
)

__all__ = []  # internal: see skdp.stats._noise


# --------------------------------------------------------------------------
# count
# --------------------------------------------------------------------------
def _count_curve(epsilon, delta, n_outputs, *, secure=False):
    """Curve of :func:`skdp.stats.count`: one noisy sum per output."""
    return _sums_curve(epsilon, delta, n_outputs, secure=secure)


def _count_release(a, *, epsilon, delta, axis, rng, secure):
    """Noisy ``np.count_nonzero(a, axis)``.

    A row changes each per-column count by at most 1 (axis=0), or the total
    by at most its number of entries m (axis=None): sensitivity 1 or m.
    """
    arr = np.atleast_1d(np.asarray(a))
    n_outputs, shape = _check_axis(arr, axis)
    if epsilon == math.inf:
        return np.count_nonzero(arr, axis=axis)
    m = math.prod(arr.shape[1:])
    if axis is None:
        counts, sensitivity = np.array([np.count_nonzero(arr)]), m
    else:
        counts, sensitivity = np.count_nonzero(arr.reshape(arr.shape[0], m), axis=0), 1
    out = _noisy_counts(counts, epsilon=epsilon, delta=delta, rng=rng, secure=secure,
                        n_outputs=n_outputs, sensitivity=sensitivity)
    return out[0] if axis is None else out.reshape(shape)


# --------------------------------------------------------------------------
# sum
# --------------------------------------------------------------------------
def _sum_curve(epsilon, delta, n_outputs, *, secure=False):
    """Curve of :func:`skdp.stats.sum`: one noisy sum per output."""
    return _sums_curve(epsilon, delta, n_outputs, secure=secure)


def _sum_release(a, *, epsilon, delta, bounds, axis, rng, secure, value_range=None):
    """Noisy ``np.sum(np.clip(a, *bounds), axis)``; sensitivity max(|lower|, |upper|).

    ``value_range`` is the data's (min, max) from :func:`_check_data`; with
    it a float release of one output clips only where needed
    (:func:`_one_total`).
    """
    arr = a if is_lazy(a) else np.atleast_1d(np.asarray(a, dtype=float))
    n_outputs, shape = _check_axis(arr, axis)
    part, _ = _one_total(arr, bounds, axis, value_range, secure=secure, epsilon=epsilon,
                         centre=False)
    if part is None and _one_pass(arr, axis, epsilon, secure):  # in memory or on dask chunks
        lower, upper = _column_bounds(bounds, math.prod(arr.shape[1:]))
        totals = row_sums(partial(_centred_sums, lower=lower, upper=upper,
                                  centre=np.zeros(lower.size), squares=False), arr)
        part = (_ColumnSums(totals, arr.shape[0]), lower, upper)
    elif part is None:
        x, lower, upper = _flatten(arr, bounds, axis)
        if epsilon == math.inf:
            return np.sum(x.reshape(arr.shape), axis=axis)
        if axis is None and x.shape[1] > 1:
            x, lower, upper = x.sum(axis=1, keepdims=True), lower.sum(keepdims=True), upper.sum(keepdims=True)
        part = (x, lower, upper)
    (out,) = _noisy_sums([part], epsilon=epsilon, delta=delta, rng=rng, secure=secure)
    return out[0] if axis is None else out.reshape(shape)


# --------------------------------------------------------------------------
# the float fast path of one output (sum and mean)
# --------------------------------------------------------------------------
# The mean's fast path computes Σ(x − c) as Σx − n·m·c. Its rounding error is of
# order n·max(|L|, |U|)·2⁻⁵², against n·h·2⁻⁵² for centring each value (h the
# half-width): it is used only while max(|L|, |U|) <= 4h, so that it rounds at
# most 4× as much; bounds far from 0 relative to their width (e.g. [1e12, 1e12 + 1])
# take the general path, where cancellation could move the total by more than h.
_MAX_CENTRE_RATIO = 4.0


def _one_total(arr, bounds, axis, value_range, *, secure, epsilon, centre):
    """The part ``(Σ(clip(x) − c), lower − c, upper − c)`` of a one-output float release, or None.

    The fast path of :func:`_sum_release` and :func:`_mean_release`: for a
    float release (not ``secure``, finite ε) of a single output (``axis=None``
    or one column) with scalar bounds, the clipped total comes from
    :func:`_clipped_total` instead of a clipped copy. A row contributes its m
    entries, so its contribution lies in [m(L − c), m(U − c)], with c = 0 or,
    with ``centre``, the bounds' midpoint. Returns ``(part, c)`` with c as a
    (1,) array, or ``(None, None)`` when the general path must be taken.
    """
    m = math.prod(arr.shape[1:])
    scalar = _uniform_bounds(bounds)
    if secure or epsilon == math.inf or value_range is None or scalar is None or (axis is not None and m > 1):
        return None, None
    lower, upper = scalar
    c = (lower + upper) / 2.0 if centre else 0.0
    if centre and max(abs(lower), abs(upper)) > _MAX_CENTRE_RATIO * (upper - lower) / 2.0:
        return None, None  # Σx − n·m·c would cancel: centre each value instead (general path)
    n = arr.shape[0]
    total = _clipped_total(arr, lower, upper, value_range) - n * m * c
    part = (_ColumnSums([total], n), np.array([m * (lower - c)]), np.array([m * (upper - c)]))
    return part, np.array([c])


# Entries per block in _clipped_total (measured on 10⁶ normal floats with 27
# values outside: finding and correcting the blocks took 0.15 ms with 2048-entry
# blocks, 0.17 ms with 1024 or 4096, 0.21 ms with 8192).
_RANGE_BLOCK = 2048


def _clipped_total(arr, lower, upper, value_range):
    """``np.sum(np.clip(arr, lower, upper))`` for scalar bounds, clipping only where needed.

    ``value_range`` is ``arr``'s (min, max) (:func:`~skdp.stats._checks._finite_range`). If it
    lies inside the bounds, the total is the plain sum (``einsum``: one SIMD
    pass, half the time of ``np.sum``). Otherwise per-block extremes over
    blocks of ``_RANGE_BLOCK`` entries find the blocks that reach past a
    bound; the total is the sum of the other blocks' own sums plus the sum of
    the clipped values of those blocks (and of the short last block). No
    value outside the bounds ever enters a float sum, so a huge value cannot
    absorb the others or overflow (as ``Σx + Σ(bound − v)`` would). The time
    depends on how many blocks reach outside (see ``secure`` in
    :mod:`skdp.stats`); the value is the clipped sum up to float rounding.
    """
    if value_range is None:
        return 0.0
    flat = arr.reshape(-1)
    lo, hi = value_range
    if lo >= lower and hi <= upper:  # every value is inside the bounds
        return float(np.einsum("i->", flat))
    k = flat.size // _RANGE_BLOCK
    head = flat[: k * _RANGE_BLOCK].reshape(k, _RANGE_BLOCK)
    dirty = np.zeros(k, dtype=bool)
    if lo < lower:
        dirty |= head.min(axis=1) < lower
    if hi > upper:
        dirty |= head.max(axis=1) > upper
    with np.errstate(over="ignore", invalid="ignore"):  # dirty blocks' raw sums are not used
        block_sums = np.einsum("ij->i", head)
    clipped = np.concatenate([head[dirty].reshape(-1), flat[k * _RANGE_BLOCK:]])
    np.clip(clipped, lower, upper, out=clipped)
    return float(np.sum(block_sums[~dirty])) + float(np.einsum("i->", clipped))


def _uniform_bounds(bounds):
    """The scalar (lower, upper) if every column has the same bounds, else None."""
    lower, upper = (np.asarray(b, dtype=float).reshape(-1) for b in bounds)
    if lower.size > 1 and (lower.min() < lower.max() or upper.min() < upper.max()):
        return None
    return float(lower[0]), float(upper[0])


# --------------------------------------------------------------------------
# mean, var, std
# --------------------------------------------------------------------------
def _mean_curve(epsilon, delta, n_outputs, *, secure=False):
    """Curve of :func:`skdp.stats.mean`: a noisy count and ``n_outputs`` noisy sums."""
    return _sums_curve(epsilon, delta, _check_n_outputs(n_outputs) + 1, secure=secure)


def _var_curve(epsilon, delta, n_outputs, *, secure=False):
    """Curve of :func:`skdp.stats.var` (and std): a noisy count, sums and sums of squares."""
    return _sums_curve(epsilon, delta, 2 * _check_n_outputs(n_outputs) + 1, secure=secure)


def _centered(arr, bounds, axis):
    """Clipped values minus the bounds' midpoint c, per row contribution.

    Returns (y, h, c, m): y of shape (n, m_out) in [−h·m, h·m] (a new array),
    h = (U − L)/2, and m entries per contribution (m > 1 only for axis=None
    on n-D data), or for ``epsilon=inf`` callers the clipped x itself.
    """
    x, lower, upper = _flatten(arr, bounds, axis)
    c = (lower + upper) / 2.0
    h = (upper - lower) / 2.0
    m = 1
    if axis is None and x.shape[1] > 1:
        if np.ptp(lower) or np.ptp(upper):
            raise ValueError("axis=None on multi-column data needs scalar bounds for mean/var/std.")
        m = x.shape[1]
    return x, h, c, m


def _center_rows(x, c, m):
    """y = x − c in place in the (own) clipped buffer x; for m > 1 the row sums."""
    np.subtract(x, _scalar_if_one(c), out=x)
    return x.sum(axis=1, keepdims=True) if m > 1 else x


def _mean_release(a, *, epsilon, delta, bounds, axis, rng, secure, value_range=None):
    """Noisy mean: c + (noisy Σ(x − c)) / (m·max(noisy n, 1)), clamped to the bounds.

    Centring at the bounds' midpoint c halves the sensitivity of the sum to
    (U − L)/2 (the standard construction; see Du et al. 2020, Sec. 3). The
    count and the d sums share (ε, δ) as k = d + 1 sums (module docstring).
    ``value_range`` enables the fast path of :func:`_one_total`.
    """
    arr = a if is_lazy(a) else np.atleast_1d(np.asarray(a, dtype=float))
    _, shape = _check_axis(arr, axis)
    part, c = _one_total(arr, bounds, axis, value_range, secure=secure, epsilon=epsilon,
                         centre=True)
    m = math.prod(arr.shape[1:]) if axis is None else 1  # entries per row contribution
    if part is None and _one_pass(arr, axis, epsilon, secure):  # in memory or on dask chunks
        lower, upper, c, h = _centre_and_half_width(bounds, math.prod(arr.shape[1:]))
        totals = row_sums(partial(_centred_sums, lower=lower, upper=upper, centre=c,
                                  squares=False), arr)
        part = (_ColumnSums(totals, arr.shape[0]), -h, h)
    elif part is None:
        x, h, c, m = _centered(arr, bounds, axis)
        if epsilon == math.inf:
            return np.mean(x.reshape(arr.shape), axis=axis)
        y = _center_rows(x, c, m)
        part = (y, -h[:1] * m, h[:1] * m) if m > 1 else (y, -h, h)
        c = c[:1] if m > 1 else c
    mean = _mean_noisy(arr.shape[0], part, c, m, epsilon=epsilon, delta=delta, rng=rng,
                       secure=secure)
    return mean[0] if axis is None else mean.reshape(shape)


def _mean_from_sums(n_rows, totals, c, h, *, epsilon, delta, rng):
    """:func:`_mean_release` (float, axis=0) from the exact sums Σ(clip(x) − c) of ``n_rows`` rows.

    ``c`` and ``h`` are the bounds' midpoints and half-widths, arrays like ``totals``.
    """
    return _mean_noisy(n_rows, (_ColumnSums(totals, n_rows), -h, h), c, 1, epsilon=epsilon,
                       delta=delta, rng=rng, secure=False)


def _mean_noisy(n_rows, part, c, m, *, epsilon, delta, rng, secure):
    """The noisy count and centred sums of ``part`` released together, and the mean from them."""
    count, s1 = _noisy_sums([(None, n_rows, None), part],
                            epsilon=epsilon, delta=delta, rng=rng, secure=secure)
    h = part[2] / m  # the bounds are [c − h, c + h]
    # post-processing: the true mean lies in the bounds
    return np.clip(c + s1 / (max(count[0], 1.0) * m), c - h, c + h)


def _column_sq_sums(y):
    """Σᵢ yᵢⱼ² per column of the (n, m) array y in one pass, no temporary.

    einsum's own SIMD loop: single threaded, unlike a BLAS dot, whose threads
    were measured far slower on a busy machine.
    """
    if y.shape[1] == 1:
        return np.array([np.einsum("i,i->", y.reshape(-1), y.reshape(-1))])
    return np.einsum("ij,ij->j", y, y)


def _var_release(a, *, epsilon, delta, bounds, axis, rng, secure, ddof=0, return_mean=False,
                 return_count=False):
    """Noisy variance from a noisy count, Σy and Σ(y² − h²/2), y = x − c.

    var = E[y²] − E[y]² (the noisy sum-of-squares construction; Du et al.
    2020 compare it with alternatives). Both sums are centred, so their
    sensitivities are h and h²/2; the 2d + 1 sums share (ε, δ). The result is
    clamped to [0, h²], the range of a variance of values in [L, U]
    (post-processing). With ``return_mean=True`` returns ``(mean, var)``
    from the same release (no extra budget); with ``return_count=True`` the
    noisy count of rows (not floored; the true count for ``epsilon=inf``)
    comes first: ``(count, var)`` or ``(count, mean, var)``.

    Without ``secure`` the two sums come from one centred buffer: Σy by a
    sum, and Σ(y² − h²/2) = Σy² − n·h²/2 with Σy² by one dot product (equal
    in exact arithmetic; the float results differ in the last bits only).
    With ``secure`` every y² − h²/2 is snapped to the grid row by row.
    """
    arr = a if is_lazy(a) else np.atleast_1d(np.asarray(a, dtype=float))
    _, shape = _check_axis(arr, axis)
    n_rows = arr.shape[0]
    if _one_pass(arr, axis, epsilon, secure):  # in memory or on dask chunks alike
        lower, upper, c, h = _centre_and_half_width(bounds, math.prod(arr.shape[1:]))
        s1, sq = row_sums(partial(_centred_sums, lower=lower, upper=upper, centre=c), arr)
        return _var_from_sums(n_rows, s1, sq, c, h, epsilon=epsilon, delta=delta, rng=rng,
                              axis=axis, shape=shape, ddof=ddof, return_mean=return_mean,
                              return_count=return_count)
    x, h, c, m = _centered(arr, bounds, axis)
    if epsilon == math.inf:
        xr = x.reshape(arr.shape)
        mean = np.mean(xr, axis=axis) if return_mean else None
        var = np.var(xr, axis=axis, ddof=ddof)
        return _var_result(float(n_rows), mean, var, return_mean, return_count)
    if m > 1:  # a row contributes the sums of its m centred entries and squares
        np.subtract(x, _scalar_if_one(c), out=x)
        y = x.sum(axis=1, keepdims=True)
        y2 = np.einsum("ij,ij->i", x, x)[:, None]
        y2 -= m * (h[0] * h[0] / 2.0)
        h, c = h[:1], c[:1]
    else:
        y = _center_rows(x, c, m)
        if secure:
            y2 = y * y
            y2 -= _scalar_if_one(h * h / 2.0)
        else:
            y2 = _ColumnSums(_column_sq_sums(y) - n_rows * (h * h / 2.0), n_rows)
            y = _ColumnSums(np.sum(y, axis=0), n_rows)
    return _var_noisy(n_rows, y, y2, c, h, m, epsilon=epsilon, delta=delta, rng=rng,
                      secure=secure, axis=axis, shape=shape, ddof=ddof, return_mean=return_mean,
                      return_count=return_count)


def _floor_variance(var, mean_y, h, count, *, epsilon, delta):
    """Released variances post-processed into [s, h²], s the std of their own noise.

    ``_var_release`` computes v = S₂/ñ + h²/2 − (S₁/ñ)² from the noisy count
    ñ, S₁ = Σy and S₂ = Σ(y² − h²/2), with independent noise of std σ₀, σ₁ =
    σ₀·h and σ₂ = σ₀·h²/2 (σ₀ that of a sensitivity-1 sum: from public
    parameters alone). To first order (the delta method) the noise on v has
    std s = √(σ₂² + (2ȳ·σ₁)² + ((ȳ² − v + h²/2)·σ₀)²) / ñ, with ȳ = S₁/ñ the
    released centred mean (the three partial derivatives of v times the
    three noise stds). A variance below s cannot be told from 0, and a
    near-zero variance makes one feature dominate the likelihood. s uses
    only released values and public parameters: post-processing.
    """
    n_noisy = max(count, 1.0)  # the noisy count _var_release divided by
    k = 2 * h.size + 1
    sigma0 = float(_noise_scales(epsilon, delta, k, 1.0))
    if _sums_delta(epsilon, delta, k) == 0:
        sigma0 *= math.sqrt(2.0)  # the std of a Laplace of scale b is √2·b
    noise_std = sigma0 * np.sqrt((h * h / 2.0) ** 2 + (2.0 * mean_y * h) ** 2
                                 + (mean_y**2 - var + h * h / 2.0) ** 2) / n_noisy
    return np.minimum(np.maximum(var, noise_std), h * h)


def _one_pass(arr, axis, epsilon, secure):
    """Whether :func:`_var_release` and :func:`_mean_release` take their sums in one pass of rows.

    The float releases (not ``secure``, finite ε) where a row contributes
    one value per output: :func:`_centred_sums` over the rows, through
    :func:`skdp.utils._rows.row_sums`, on an in-memory array or a dask one.
    """
    return not secure and epsilon != math.inf and (axis is not None or
                                                   math.prod(arr.shape[1:]) == 1)


def _centre_and_half_width(bounds, m):
    """(lower, upper, c, h) of (m,) arrays: the bounds, their midpoint c and half-width h."""
    lower, upper = _column_bounds(bounds, m)
    return lower, upper, (lower + upper) / 2.0, (upper - lower) / 2.0


def _centred_sums(x, *, lower, upper, centre, squares=True):
    """Σy and Σy² per column of the block ``x``, y = clip(x, lower, upper) − centre.

    The block function of a pass of :func:`skdp.utils._rows.row_sums`: the
    same operations as the in-memory release (one clipped buffer, centred in
    place, a sum and one dot product), so one block gives the same bits.
    """
    y = np.clip(x.reshape(x.shape[0], lower.size), _scalar_if_one(lower), _scalar_if_one(upper))
    np.subtract(y, _scalar_if_one(centre), out=y)
    if not squares:
        return np.sum(y, axis=0)
    return np.sum(y, axis=0), _column_sq_sums(y)


def _var_from_sums(n_rows, s1, sq, c, h, **kwargs):
    """:func:`_var_release` from the exact sums Σy and Σy² of ``n_rows`` rows (y = x − c).

    Σ(y² − h²/2) = Σy² − n·h²/2; the noise is added by :func:`_noisy_sums`.
    """
    y = _ColumnSums(s1, n_rows)
    y2 = _ColumnSums(sq - n_rows * (h * h / 2.0), n_rows)
    return _var_noisy(n_rows, y, y2, c, h, 1, secure=False, **kwargs)


def _var_noisy(n_rows, y, y2, c, h, m, *, epsilon, delta, rng, secure, axis, shape, ddof,
               return_mean, return_count):
    """The noisy count, Σy and Σ(y² − h²/2) released together, and the mean and variance from them."""
    h_sum = h * m
    half_sq = m * h * h / 2.0
    count, s1, s2 = _noisy_sums(
        [(None, n_rows, None), (y, -h_sum, h_sum), (y2, -half_sq, half_sq)],
        epsilon=epsilon, delta=delta, rng=rng, secure=secure,
    )
    n = max(count[0], 1.0) * m
    mean_y = np.clip(s1 / n, -h, h)
    mean_sq = np.clip(s2 / n + h * h / 2.0, 0.0, h * h)
    var = np.clip(mean_sq - mean_y**2, 0.0, h * h)
    if ddof:
        var = var * n / max(n - ddof, 1.0)
    mean = c + mean_y
    if axis is None:
        mean, var = mean[0], var[0]
    else:
        mean, var = mean.reshape(shape), var.reshape(shape)
    return _var_result(count[0], mean, var, return_mean, return_count)


def _var_result(count, mean, var, return_mean, return_count):
    """What :func:`_var_release` returns for its ``return_mean`` and ``return_count``."""
    out = (var,)
    if return_mean:
        out = (mean,) + out
    if return_count:
        out = (count,) + out
    return out if len(out) > 1 else var


def _std_release(a, *, epsilon, delta, bounds, axis, rng, secure, ddof=0):
    """Square root of :func:`_var_release` (post-processing)."""
    if epsilon == math.inf:
        arr = np.atleast_1d(np.asarray(a, dtype=float))
        x, _, _ = _flatten(arr, bounds, axis)
        return np.std(x.reshape(arr.shape), axis=axis, ddof=ddof)
    return np.sqrt(_var_release(a, epsilon=epsilon, delta=delta, bounds=bounds, axis=axis,
                                rng=rng, secure=secure, ddof=ddof))
