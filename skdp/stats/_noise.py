"""The internal API of :mod:`skdp.stats`, and its one primitive: k noisy sums.

Estimators that need several statistics in one ``fit`` (the DP transformers
and models) use the internal (curve, release) pairs directly, so that a fit
charges the budget **once**. For every statistic ``f`` there is:

``_f_curve(epsilon, delta, n_outputs, *, secure=False, ...) -> RDPCurve``
    The privacy curve of the release, computed from the parameters and
    public sizes alone (never from data). ``n_outputs`` is the number of
    released columns: ``1`` for ``axis=None``, ``X.shape[1]`` for ``axis=0``
    on a 2-D ``X`` (``prod(X.shape[1:])`` in general). ``epsilon=inf`` gives
    :meth:`RDPCurve.non_private`.

``_f_release(a, *, epsilon, delta, bounds, axis, rng, secure, ...) -> values``
    The noisy values. It assumes that the caller has validated the input
    (:func:`~skdp.stats._checks._check_data`,
    :func:`~skdp.stats._checks._check_axis`, ``check_bounds``) **and has
    already charged** ``_f_curve(epsilon, delta, n_outputs, secure=secure)``
    (alone or composed with other curves). It derives its budget split from
    the same ``(epsilon, delta, n_outputs)``, so the release matches the
    curve exactly when called with the same arguments. ``rng`` is a
    :class:`numpy.random.Generator`. With ``epsilon=inf`` it returns exactly
    what numpy returns on the clipped data.

The pairs live by concept, each module importing only those below it:
:mod:`skdp.stats._sums` (count, sum, mean, var, std),
:mod:`skdp.stats._histograms` and :mod:`skdp.stats._quantiles`, on top of
this module (the k noisy sums they share) and :mod:`skdp.stats._checks`
(the checks before the charge).

How a transformer uses them::

    curve = _mean_curve(eps, delta, d) + _quantile_curve(eps, delta, d, n_quantiles=2)
    self._charge_budget(curve)                       # once, before any value is read
    mean = _mean_release(X, epsilon=eps, delta=delta, bounds=(lo, hi), axis=0,
                         rng=rng, secure=False)
    lo_hi = _quantile_release(X, [0.01, 0.99], epsilon=eps, delta=delta,
                              bounds=(lo, hi), axis=0, rng=rng, secure=False)

Disjoint subsets of rows (for example the classes of ``y`` in naive Bayes)
compose in parallel under add/remove-one-row: one added row changes only its
own subset, so releasing the same statistic on each class costs one curve.

Conventions shared by every statistic
-------------------------------------
- **Rows.** The first axis of ``a`` indexes people: neighbouring datasets
  differ by one added or removed row. ``axis=0`` releases one value per
  column; ``axis=None`` releases one value over all entries (a row then
  contributes all its entries at once, and the sensitivity says so). Any
  other axis computes one value per row, a statistic of one person that no
  mechanism can make private under this relation: it raises.
- **Clipping.** Values are clipped to the public ``bounds=(lower, upper)``
  before anything is computed, and nothing reports how many were clipped
  (that count is a statistic of the data too). Bounds are never read from
  the data.
- **Noise and budget split.** A release made of ``k`` noisy sums (for example
  a count and ``d`` column sums for a mean) is calibrated as follows:

  * Laplace noise, ε/k on each sum, scale Δⱼ·k/ε
    (Dwork et al. 2006, Prop. 1; composition Dwork & Roth 2014, Thm. 3.14);
    the curve is ``k * laplace_rdp(k/ε)`` (Mironov 2017, Prop. 6), pure ε-DP.
  * or, with ``delta > 0``, one Gaussian vector: noise std z·√k·Δⱼ on sum j,
    so the sensitivity-normalised vector has L2 sensitivity √k and the curve
    is ``gaussian_rdp(z)`` (Mironov 2017, Prop. 7), with z the smallest noise
    multiplier that reaches (ε, δ) (:func:`skdp.accounting.calibrate_noise_multiplier`).
  * The Gaussian is used only where it adds less noise than the Laplace:
    where z²·k < 2k²/ε², comparing the variances (z√kΔ)² and 2(Δk/ε)² of one
    sum, and where some z reaches (ε, δ) on the order grid at all
    (:func:`_sums_delta`, from public parameters only). Otherwise a
    ``delta > 0`` release is the Laplace one, pure ε-DP: a stronger
    guarantee with less noise.
  * ``secure=True``: every sum is computed exactly in integers on a public
    grid of width 2^-e (a power of two about 1/1024 of the noise scale) and
    released with the exact discrete Laplace (ε/k-DP each, curve
    ``k * pure_dp_rdp(ε/k)``) or discrete Gaussian (curve
    ``zcdp_rdp(1/(2z²))``, Canonne, Kamath & Steinke 2020, Thm. 4) noise.
    The released float is (integer) × (power of two): it carries no
    floating-point trace of the data (Mironov 2012). Quantiles have their
    own secure mechanism (:mod:`skdp.stats._quantiles`).
- **Private n.** Under add/remove the number of rows is private: means and
  variances divide by a noisy count (one of the k sums), floored at 1.
"""

import functools
import math
from fractions import Fraction

import numpy as np

from ..accounting import (
    RDPCurve,
    calibrate_noise_multiplier,
    gaussian_rdp,
    laplace_rdp,
    pure_dp_rdp,
    zcdp_rdp,
)
from ..mechanisms._exact import (
    gaussian_sigma_at_least,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    zcdp_rho_at_least,
)
from ._checks import _check_n_outputs

__all__ = []  # internal: see the module docstring


# The secure grid is about this many times finer than the noise scale, so the
# rounding of each value to the grid adds negligible error.
_GRID_RESOLUTION = 2.0**10


@functools.lru_cache(maxsize=256)
def _noise_multiplier(epsilon, delta):
    """Smallest Gaussian z reaching (ε, δ) in one release under RDP (cached: a pure function).

    RDP, not the tighter μ-GDP inverse: the same z sets the secure releases'
    discrete Gaussian, whose guarantee is zCDP (CKS20, Thm. 4), converted to
    (ε, δ) through RDP; calibrated by the continuous Gaussian's exact
    conversion it would spend more than ε.
    """
    return calibrate_noise_multiplier(epsilon, delta, accountant="rdp")


def _sums_delta(epsilon, delta, k):
    """The δ that ``k`` noisy sums at (ε, δ) use: δ for a Gaussian vector, 0 for Laplace.

    The Gaussian (std z·√k·Δ per sum) is used only where its variance is
    below that of the Laplace with ε/k per sum (2(Δk/ε)²), so ``delta > 0``
    never adds more noise than ``delta = 0``, and where a Gaussian reaches
    (ε, δ) at all (:func:`_reachable_multiplier`). Every curve and every noise
    draw of the k sums calls this with the same arguments, so the release
    runs the mechanism that was charged.
    """
    if delta == 0 or epsilon == math.inf:
        return delta
    z = _reachable_multiplier(epsilon, delta)
    if z is None:  # no Gaussian reaches (ε, δ) on the order grid (ε far below 1)
        return 0.0
    return delta if z * z < 2.0 * k / (epsilon * epsilon) else 0.0


@functools.lru_cache(maxsize=256)
def _reachable_multiplier(epsilon, delta):
    """:func:`_noise_multiplier`, or None where no noise multiplier reaches (ε, δ).

    RDP's conversion to (ε, δ) on the order grid has a floor: below
    ε = 0.0035 at δ = 1e-5 (default orders) no Gaussian reaches (ε, δ)
    (found in a review of the default δ). The Laplace then gives the
    release, pure ε-DP, as with ``delta = 0``, instead of an error.
    """
    try:
        return _noise_multiplier(epsilon, delta)
    except ValueError:
        return None


def _sums_curve(epsilon, delta, n_sums, *, secure=False):
    """Curve of ``n_sums`` noisy sums released together (see the module docstring)."""
    return _sums_curve_cached(float(epsilon), float(delta), _check_n_outputs(n_sums), bool(secure))


@functools.lru_cache(maxsize=256)
def _sums_curve_cached(epsilon, delta, k, secure):
    """:func:`_sums_curve` for checked arguments (cached: RDPCurve is immutable)."""
    if epsilon == math.inf:
        return RDPCurve.non_private()
    if _sums_delta(epsilon, delta, k) == 0:
        if secure:  # discrete Laplace: ε/k-DP each (CKS20 Sec. 2), tightest pure-DP curve
            return k * pure_dp_rdp(epsilon / k)
        return k * laplace_rdp(k / epsilon)  # Mironov 2017, Prop. 6, λ = scale/Δ = k/ε
    z = _noise_multiplier(epsilon, delta)
    if secure:  # discrete Gaussian: Δ²/(2σ²)-zCDP (CKS20, Thm. 4), Δ/σ = 1/z overall
        return zcdp_rdp(zcdp_rho_at_least(z))  # 1/(2z²), rounded up
    return gaussian_rdp(z)  # Mironov 2017, Prop. 7


def _noise_scales(epsilon, delta, n_sums, sensitivities):
    """Per-sum noise scale: Laplace b = Δ·k/ε, or Gaussian std z·√k·Δ."""
    k = n_sums
    if _sums_delta(epsilon, delta, k) == 0:
        return np.asarray(sensitivities, dtype=float) * (k / epsilon)
    z = _noise_multiplier(epsilon, delta)
    return np.asarray(sensitivities, dtype=float) * (z * math.sqrt(k))


class _ColumnSums:
    """Column sums computed by the caller (non-secure releases only).

    ``totals`` (shape (m,)) are the sums of ``n_rows`` rows whose values lie in
    the part's ``[lower, upper]``; passing them instead of the rows lets a
    release get several sums from one pass (for example Σy and Σy² by one dot
    product) without changing what is released.
    """

    __slots__ = ("totals", "n_rows")

    def __init__(self, totals, n_rows):
        self.totals = np.asarray(totals, dtype=float).reshape(-1)
        self.n_rows = n_rows

    @property
    def shape(self):
        return (self.n_rows, self.totals.size)


def _noisy_sums(parts, *, epsilon, delta, rng, secure):
    """Release the column sums of every part with noise, composed as one release.

    Parameters
    ----------
    parts : list of (values, lower, upper)
        ``values`` has shape (n_rows, m) and lies in ``[lower, upper]``
        (arrays of shape (m,)) row by row; ``(None, n_rows, None)`` means
        "count the n_rows rows" (one sum of ones, sensitivity 1); ``values``
        may also be a :class:`_ColumnSums` of such rows when ``secure`` is
        False. Every column of every part is one of the k sums; one row
        changes sum j by at most Δⱼ = max(|lowerⱼ|, |upperⱼ|). The
        ``values`` arrays are the caller's scratch buffers: with ``secure``
        they are overwritten (snapped to the grid in place).
    epsilon, delta : float
        The whole release's privacy (after a charge of ``_sums_curve(ε, δ, k)``).

    Returns
    -------
    list of float arrays of shape (m,), one per part.
    """
    k = sum(1 if v is None else v.shape[1] for v, _, _ in parts)
    out = []
    for values, lower, upper in parts:
        if values is None:
            sens = np.ones(1)
        else:
            sens = np.maximum(np.abs(lower), np.abs(upper))
            sens = np.where(sens > 0, sens, np.finfo(float).tiny)  # all-zero bounds: no noise needed, keep > 0
        scales = _noise_scales(epsilon, delta, k, sens)
        if secure:
            if isinstance(values, _ColumnSums):
                raise TypeError("secure sums need the rows, not precomputed float sums.")
            out.append(_secure_sums(values, lower, upper, scales, sens,
                                    epsilon=epsilon, delta=delta, k=k, rng=rng, n_rows=_rows(parts)))
            continue
        if values is None:
            total = np.array([float(_rows(parts))])
        elif isinstance(values, _ColumnSums):
            total = values.totals
        else:
            total = np.sum(values, axis=0)
        if _sums_delta(epsilon, delta, k) == 0:
            noise = rng.laplace(0.0, scales)
        else:
            noise = rng.normal(0.0, scales)
        out.append(total + noise)
    return out


def _rows(parts):
    for values, _, _ in parts:
        if values is not None:
            return values.shape[0]
    return parts[0][1]  # a count-only release passes n_rows as ``lower``


def _scalar_if_one(v):
    """A float for a length-1 array: numpy's scalar loops are much faster than
    broadcasting a (1,) array along a long (n, 1) array (same values)."""
    return float(v[0]) if v.size == 1 else v


def _int_sums(ints, bound):
    """Exact column sums of the integer-valued float array ``ints`` (n, m).

    ``bound`` ≥ max |ints| comes from the public bounds. While bound·n < 2^53
    every partial sum is an integer below 2^53, so the float sum is exact;
    otherwise sum in int64 (while bound·n < 2^62) or in Python ints.
    """
    n = max(ints.shape[0], 1)
    if bound * n < 2**53:
        return [int(v) for v in np.sum(ints, axis=0)]
    if bound * n < 2**62:
        return [int(v) for v in np.sum(ints.astype(np.int64), axis=0)]
    return [int(v) for v in np.sum(np.frompyfunc(int, 1, 1)(ints), axis=0)]  # exact Python ints


def _secure_sums(values, lower, upper, scales, sens, *, epsilon, delta, k, rng, n_rows):
    """Exact integer sums on a public power-of-two grid plus exact discrete noise.

    Each value is rounded to the grid g = 2^⌊log₂(min(scale, Δ)/1024)⌋
    (public: from the bounds and the privacy parameters only), finer than
    both the noise and the values' own range (without the Δ term, a 0/1
    column under noise of scale > 2048 would round every 1 to 0, losing
    the signal, though not privacy); rint is monotone, so the
    integer sensitivity is max(|rint(lower/g)|, |rint(upper/g)|). The
    released float g·(S + Z) is an integer times a power of two. The rows
    are snapped and summed by vectorised numpy; only the m noise draws are
    Python-level.
    """
    if values is None:
        totals, int_sens, grids = [n_rows], [1], [1.0]
    else:
        # (at most 2⁶⁰ grid steps per Δ, so bound/g stays finite at any ε; 1e-300
        # keeps g normal for zero-width bounds, whose Δ is the smallest float)
        grids = [2.0 ** math.floor(math.log2(max(min(s, d), d * 2.0**-60, 1e-300) / _GRID_RESOLUTION))
                 for s, d in zip(scales, sens)]
        grids = np.array(grids)
        # Python ints: exact at any size (an int64 cast overflowed at ε ≳ 1e16 and
        # made the sensitivity 1, with noise far below the curve charged).
        lo_i = [int(v) for v in np.rint(lower / grids)]
        hi_i = [int(v) for v in np.rint(upper / grids)]
        int_sens = [max(abs(a), abs(b), 1) for a, b in zip(lo_i, hi_i)]
        # Clip again to the declared bounds: float sums and differences may
        # round an ulp past them, and the integer sensitivity must hold exactly.
        # In place in the caller's scratch buffer: clip, times 1/g (exactly
        # values / g: g is a power of two), rint; every entry is then an
        # integer in [lo_i, hi_i].
        ints = np.clip(values, _scalar_if_one(lower), _scalar_if_one(upper), out=values)
        np.multiply(ints, _scalar_if_one(1.0 / grids), out=ints)
        np.rint(ints, out=ints)
        totals = _int_sums(ints, max(int_sens))
    out = np.empty(len(totals))
    if _sums_delta(epsilon, delta, k) == 0:
        for j, (total, s) in enumerate(zip(totals, int_sens)):
            # ε/k-DP for an integer query of sensitivity s: scale s·k/ε (CKS20 Sec. 2)
            scale = Fraction(s * k) / Fraction(epsilon)
            noisy = total + sample_discrete_laplace(scale, random_state=rng)
            out[j] = float(noisy) * grids[j]
    else:
        z = _noise_multiplier(epsilon, delta)
        for j, (total, s) in enumerate(zip(totals, int_sens)):
            sigma = gaussian_sigma_at_least(z, s, k)  # z·√k·s, rounded up exactly
            noisy = total + sample_discrete_gaussian(sigma, random_state=rng)
            out[j] = float(noisy) * grids[j]
    return out


def _noisy_counts(counts, *, epsilon, delta, rng, secure, n_outputs=1, sensitivity=1):
    """Integer counts + noise, as k = ``n_outputs`` sums of integer ``sensitivity``.

    For a histogram, one row changes one bin by 1 (sensitivity 1 over the
    vector of bins, so each of k histograms is one of the k sums of
    :func:`_sums_curve`). Noise: Laplace scale Δ·k/ε, or Gaussian std
    z·√k·Δ; with ``secure`` their exact discrete versions.
    """
    counts = np.asarray(counts)
    if epsilon == math.inf:
        return counts
    k = n_outputs
    if _sums_delta(epsilon, delta, k) == 0:
        scale = sensitivity * k / epsilon  # Laplace, ε/k per sum (Dwork et al. 2006, Prop. 1)
        if secure:
            noise = sample_discrete_laplace(Fraction(sensitivity * k) / Fraction(epsilon),
                                            counts.shape or 1, random_state=rng)
            return (counts.astype(np.int64) + np.asarray(noise).reshape(counts.shape)).astype(float)
        return counts + rng.laplace(0.0, scale, size=counts.shape)
    z = _noise_multiplier(epsilon, delta)
    sigma = z * math.sqrt(k) * sensitivity  # k sums of sensitivity Δ: L2 √k·Δ together
    if secure:
        noise = sample_discrete_gaussian(gaussian_sigma_at_least(z, sensitivity, k),
                                         counts.shape or 1, random_state=rng)
        return (counts.astype(np.int64) + np.asarray(noise).reshape(counts.shape)).astype(float)
    return counts + rng.normal(0.0, sigma, size=counts.shape)


def _flatten(arr, bounds, axis):
    """(n_rows, m) clipped values (a new array) and their (m,) bounds for ``axis``.

    For ``axis=None`` a row's entries are summed into one contribution,
    whose bounds are the sums of the entries' bounds.
    """
    n = arr.shape[0]
    x = arr.reshape(n, math.prod(arr.shape[1:]))  # -1 is ambiguous when n == 0
    lower, upper = _column_bounds(bounds, x.shape[1])
    x = np.clip(x, _scalar_if_one(lower), _scalar_if_one(upper))
    return x, lower, upper


def _column_bounds(bounds, m):
    """The (m,) arrays of lower and upper bounds of ``bounds`` (scalars or arrays)."""
    lower, upper = bounds
    lower = np.broadcast_to(np.asarray(lower, dtype=float).reshape(-1) if np.ndim(lower) else lower, (m,))
    upper = np.broadcast_to(np.asarray(upper, dtype=float).reshape(-1) if np.ndim(upper) else upper, (m,))
    return lower, upper
