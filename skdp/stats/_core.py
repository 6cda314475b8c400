"""The internal API of :mod:`skdp.stats`: one (curve, release) pair per statistic.

Estimators that need several statistics in one ``fit`` (the DP transformers
and models) use this module directly, so that a fit charges the budget
**once**. For every statistic ``f`` there is:

``_f_curve(epsilon, delta, n_outputs, *, secure=False, ...) -> RDPCurve``
    The privacy curve of the release, computed from the parameters and
    public sizes alone (never from data). ``n_outputs`` is the number of
    released columns: ``1`` for ``axis=None``, ``X.shape[1]`` for ``axis=0``
    on a 2-D ``X`` (``prod(X.shape[1:])`` in general). ``epsilon=inf`` gives
    :meth:`RDPCurve.non_private`.

``_f_release(a, *, epsilon, delta, bounds, axis, rng, secure, ...) -> values``
    The noisy values. It assumes that the caller has validated the input
    (:func:`_check_data`, :func:`_check_axis`, ``check_bounds``) **and has
    already charged** ``_f_curve(epsilon, delta, n_outputs, secure=secure)``
    (alone or composed with other curves). It derives its budget split from
    the same ``(epsilon, delta, n_outputs)``, so the release matches the
    curve exactly when called with the same arguments. ``rng`` is a
    :class:`numpy.random.Generator`. With ``epsilon=inf`` it returns exactly
    what numpy returns on the clipped data.

How a transformer uses it::

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
    floating-point trace of the data (Mironov 2012).
    Quantiles with ``secure=True`` release a point of a public grid chosen
    by the exact base-2 exponential mechanism (Ilvento 2020), charged at its
    effective ε' ≤ ε (:func:`_secure_em_base`); without it their selection
    probabilities are floats and the output lies between data values.
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
from ..mechanisms import exponential_mechanism_rdp
from ..mechanisms._exact import (
    _bernoulli,
    _RandomBits,
    gaussian_sigma_at_least,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    zcdp_rho_at_least,
)

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


# --------------------------------------------------------------------------
# validation helpers (read shapes, dtypes and finiteness only)
# --------------------------------------------------------------------------
def _check_data(a, *, name="a", return_range=False):
    """``a`` as a float array with at least one dimension and only finite values.

    With ``return_range`` also returns the ``(min, max)`` of
    :func:`_finite_range`, the reductions that proved finiteness, kept so
    that a float release can skip clipping when nothing needs it.
    """
    try:
        arr = np.atleast_1d(np.asarray(a, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric; could not convert it to floats.") from None
    value_range = _finite_range(arr, name=name)
    return (arr, value_range) if return_range else arr


def _finite_range(arr, *, name="a"):
    """``(min, max)`` of ``arr``'s entries (``None`` if empty); raise on NaN or infinity.

    ``min`` and ``max`` propagate NaN and an infinity is its own extreme, so
    both are finite exactly when every entry is: two SIMD reductions and no
    temporary array (0.17 ms on 10⁶ floats here, against 0.21 ms for
    ``np.isfinite(arr).all()``). After the charge the range is read only by
    :func:`_clipped_total`, to skip clipping that would change nothing; the
    released value does not depend on it.
    """
    if arr.size == 0:
        return None
    lo, hi = float(arr.min()), float(arr.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(
            f"{name} contains NaN or infinity. skdp.stats needs finite values: "
            "drop or impute missing values first (for example with skdp.impute)."
        )
    return lo, hi


# Entries per block in _clipped_total (measured on 10⁶ normal floats with 27
# values outside: finding and correcting the blocks took 0.15 ms with 2048-entry
# blocks, 0.17 ms with 1024 or 4096, 0.21 ms with 8192).
_RANGE_BLOCK = 2048


def _clipped_total(arr, lower, upper, value_range):
    """``np.sum(np.clip(arr, lower, upper))`` for scalar bounds, clipping only where needed.

    ``value_range`` is ``arr``'s (min, max) (:func:`_finite_range`). If it
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


def _check_axis(arr, axis):
    """Validate ``axis`` (None or 0) and return (n_outputs, output shape)."""
    if axis is None:
        return 1, ()
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise ValueError(f"axis must be None or 0; got {axis!r}.")
    if int(axis) not in (0, -arr.ndim):
        raise ValueError(
            f"axis must be None or 0; got {axis!r}. The first axis indexes rows (people): "
            "a statistic along another axis is one value per row, which cannot be made "
            "private under add/remove-one-row adjacency."
        )
    shape = arr.shape[1:]
    return int(math.prod(shape)), shape


def _n_outputs(a, axis):
    """The ``n_outputs`` of a curve function for data ``a`` and ``axis``."""
    arr = np.atleast_1d(np.asarray(a))
    return _check_axis(arr, axis)[0]


def _check_n_outputs(n_outputs):
    k = int(n_outputs)
    if k != n_outputs or k < 1:
        raise ValueError(f"n_outputs must be an integer >= 1; got {n_outputs!r}.")
    return k


# --------------------------------------------------------------------------
# k noisy sums: the one primitive behind count, sum, mean, var, histograms
# --------------------------------------------------------------------------
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


def _flatten(arr, bounds, axis):
    """(n_rows, m) clipped values (a new array) and their (m,) bounds for ``axis``.

    For ``axis=None`` a row's entries are summed into one contribution,
    whose bounds are the sums of the entries' bounds.
    """
    n = arr.shape[0]
    x = arr.reshape(n, math.prod(arr.shape[1:]))  # -1 is ambiguous when n == 0
    lower, upper = bounds
    m = x.shape[1]
    lower = np.broadcast_to(np.asarray(lower, dtype=float).reshape(-1) if np.ndim(lower) else lower, (m,))
    upper = np.broadcast_to(np.asarray(upper, dtype=float).reshape(-1) if np.ndim(upper) else upper, (m,))
    x = np.clip(x, _scalar_if_one(lower), _scalar_if_one(upper))
    return x, lower, upper


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
    arr = np.atleast_1d(np.asarray(a, dtype=float))
    n_outputs, shape = _check_axis(arr, axis)
    part, _ = _one_total(arr, bounds, axis, value_range, secure=secure, epsilon=epsilon,
                         centre=False)
    if part is None:
        x, lower, upper = _flatten(arr, bounds, axis)
        if epsilon == math.inf:
            return np.sum(x.reshape(arr.shape), axis=axis)
        if axis is None and x.shape[1] > 1:
            x, lower, upper = x.sum(axis=1, keepdims=True), lower.sum(keepdims=True), upper.sum(keepdims=True)
        part = (x, lower, upper)
    (out,) = _noisy_sums([part], epsilon=epsilon, delta=delta, rng=rng, secure=secure)
    return out[0] if axis is None else out.reshape(shape)


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
    arr = np.atleast_1d(np.asarray(a, dtype=float))
    _, shape = _check_axis(arr, axis)
    part, c = _one_total(arr, bounds, axis, value_range, secure=secure, epsilon=epsilon,
                         centre=True)
    m = math.prod(arr.shape[1:]) if axis is None else 1  # entries per row contribution
    if part is None:
        x, h, c, m = _centered(arr, bounds, axis)
        if epsilon == math.inf:
            return np.mean(x.reshape(arr.shape), axis=axis)
        y = _center_rows(x, c, m)
        part = (y, -h[:1] * m, h[:1] * m) if m > 1 else (y, -h, h)
        c = c[:1] if m > 1 else c
    count, s1 = _noisy_sums([(None, arr.shape[0], None), part],
                            epsilon=epsilon, delta=delta, rng=rng, secure=secure)
    h = part[2] / m  # the bounds are [c − h, c + h]
    # post-processing: the true mean lies in the bounds
    mean = np.clip(c + s1 / (max(count[0], 1.0) * m), c - h, c + h)
    return mean[0] if axis is None else mean.reshape(shape)


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
    arr = np.atleast_1d(np.asarray(a, dtype=float))
    _, shape = _check_axis(arr, axis)
    x, h, c, m = _centered(arr, bounds, axis)
    n_rows = arr.shape[0]
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


# --------------------------------------------------------------------------
# histograms
# --------------------------------------------------------------------------
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


# --------------------------------------------------------------------------
# quantiles
# --------------------------------------------------------------------------
def _quantile_epsilon(epsilon, n_releases):
    """ε of each of the ``n_releases`` exponential mechanisms (an honest equal split)."""
    return epsilon / n_releases


# Quantile methods: "joint" (one exponential mechanism over increasing
# vectors, Gillenwater, Joseph & Kulesza 2021) or "split" (one Smith 2011
# mechanism per level at ε/m). Both are the same mechanism for one level.
_QUANTILE_METHODS = ("joint", "split")
_DEFAULT_QUANTILE_METHOD = "split"  # measured: docs/benchmarks.md, "DP statistics"


def _check_quantile_method(method):
    """``method`` as one of :data:`_QUANTILE_METHODS` (``None`` is the default)."""
    if method is None:
        return _DEFAULT_QUANTILE_METHOD
    if not isinstance(method, str) or method not in _QUANTILE_METHODS:
        raise ValueError(f"method must be one of {_QUANTILE_METHODS}; got {method!r}.")
    return method


def _quantile_curve(epsilon, delta, n_outputs, *, n_quantiles=1, secure=False, method=None,
                    row_size=1):
    """Curve of :func:`skdp.stats.quantile`.

    ``method="split"`` (default): ``n_outputs · n_quantiles`` exponential
    mechanisms, each at ε/(n_outputs · n_quantiles) (an honest split).
    ``method="joint"``: one joint exponential mechanism per column
    (Gillenwater, Joseph & Kulesza 2021), each at ε/n_outputs, whatever the
    number of levels. Every mechanism reports the tighter of its pure-DP and
    bounded-range zCDP curves (:func:`skdp.mechanisms.exponential_mechanism_rdp`:
    an exponential mechanism whose utility has sensitivity Δ, sampled with
    weights exp(ε·u/(2Δ)), is ε-DP and ε-bounded-range, also over a
    continuous output space). ``delta`` is not used: the quantiles are pure ε-DP.

    ``secure=True`` (split only; joint raises): each mechanism is the exact
    base-2 exponential mechanism of :func:`_secure_em_quantile_1d`, whose
    rational base implements an effective ε' ≤ ε/(n_outputs · n_quantiles)
    (:func:`_secure_em_base`); the curve is charged at that ε'. ``row_size``
    is the utility's sensitivity Δ (the entries of a row, > 1 only for
    ``axis=None`` on n-D data), which the rounding of the base depends on.
    """
    method = _check_quantile_method(method)
    k = _check_n_outputs(n_outputs)
    m = _check_n_outputs(n_quantiles)
    row_size = _check_n_outputs(row_size)
    if secure and method == "joint":
        raise ValueError(
            "secure=True is implemented for method='split' only: the joint mechanism's "
            "selection probabilities are computed in floating point. Use method='split'."
        )
    if epsilon == math.inf:
        return RDPCurve.non_private()
    if secure:
        return _secure_quantile_curve_cached(float(epsilon), k * m, row_size)
    return _quantile_curve_cached(float(epsilon), k if method == "joint" else k * m)


@functools.lru_cache(maxsize=256)
def _quantile_curve_cached(epsilon, k):
    """k exponential mechanisms at ε/k each (cached: a pure function; RDPCurve is immutable)."""
    return k * exponential_mechanism_rdp(_quantile_epsilon(epsilon, k))


@functools.lru_cache(maxsize=256)
def _secure_quantile_curve_cached(epsilon, k, row_size):
    """k exact base-2 exponential mechanisms, each at its effective ε' ≤ ε/k."""
    _, _, eps_eff = _secure_em_base(_quantile_epsilon(epsilon, k), row_size)
    return k * exponential_mechanism_rdp(eps_eff)


# --------------------------------------------------------------------------
# secure quantiles: the exact base-2 exponential mechanism on a public grid
# --------------------------------------------------------------------------
# Default number of public candidate outputs of a secure quantile.
_SECURE_GRID_SIZE = 1024
_MAX_SECURE_GRID_SIZE = 2**20
# Bits of the integer weights of the secure sampler's proposal (bounds its memory).
_SECURE_MAX_BITS = 2**17


def _check_grid_size(grid_size):
    """``grid_size`` as an int in [2, 2**20] (``None`` is the default 1024)."""
    if grid_size is None:
        return _SECURE_GRID_SIZE
    if isinstance(grid_size, (bool, np.bool_)) or not isinstance(grid_size, (int, np.integer)) \
            or not 2 <= int(grid_size) <= _MAX_SECURE_GRID_SIZE:
        raise ValueError(f"grid_size must be an integer in [2, {_MAX_SECURE_GRID_SIZE}]; "
                         f"got {grid_size!r}.")
    return int(grid_size)


@functools.lru_cache(maxsize=256)
def _secure_em_base(epsilon, sensitivity):
    """The rational base β = x/2^y of the exact exponential mechanism, and its ε'.

    Ilvento 2020 (CCS, "Implementing the Exponential Mechanism with Base-2
    Differential Privacy", Sec. 4-5): weights β^d with an integer utility
    loss d and a base β = x·2^(−y) (x, y integers) are exact dyadic
    rationals. Weights exp(−ε·d/(2Δ)) would need β = e^(−a), a = ε/(2Δ);
    we round β UP to the next multiple of 2^(−y) (plus one), so
    β > e^(−a) and the mechanism implemented, exp(−ε'·d/(2Δ)) with
    ε' = 2Δ·ln(1/β) < ε, is ε'-DP (McSherry & Talwar 2007, Thm. 6) and
    never more private than claimed. y ≤ 52 keeps e^(−a)·2^y exact in a float
    and is chosen so that ε − ε' ≈ 2^(−22)·ε (capped at y = 52 for a ≳ 25).
    Returns (x, y, ε'), ε' rounded up by 2^(−40) relative (log1p's error).
    """
    a = epsilon / (2.0 * sensitivity)
    y = min(52, max(8, math.ceil(22 + a / math.log(2) + math.log2(1.0 / a))))
    x = math.floor(math.exp(-a) * 2.0**y) + 2  # > e^(−a)·2^y even with exp's 1-ulp error
    x = min(x, 2**y - 1)  # reached when y is capped at 52 and a ≲ 2^−51; keeps β < 1
    # ln(1/β) = −log1p(−(2^y − x)/2^y): the fraction is exact, log1p has ~1 ulp error.
    eps_eff = -2.0 * sensitivity * math.log1p(-(2**y - x) / 2.0**y) * (1.0 + 2.0**-40)
    if eps_eff > epsilon:
        # Only when x was capped (a ≲ 2^−51): β = 1 − 2^−52 < e^(−a) would implement
        # an ε' > ε. Refuse (before any charge: the curve calls this first).
        raise ValueError(
            f"epsilon per secure quantile ({epsilon:.3g}) is too small for the exact base-2 "
            "sampler (its base has 52 bits); use a larger epsilon or secure=False."
        )
    return x, y, eps_eff


def _secure_grid(lower, upper, grid_size):
    """The public candidate outputs: ``grid_size`` evenly spaced floats from lower to upper."""
    return np.linspace(lower, upper, grid_size)


def _quantile_losses(sorted_x, grid, level, row_size):
    """Integer utility losses d(g) = r(g) − min r ≥ 0 of the grid points (exact, in int64).

    r(g) = dist(t, [#{x < g}, #{x ≤ g}]) with t = round(q·N), N = len(sorted_x)
    (rounded half up in exact rational arithmetic). Utility −r(g) has
    add/remove sensitivity ``row_size`` (our derivation, the rank utility of
    Smith 2011 made integer): a row adds at most ``row_size`` entries, so
    each of #{x < g}, #{x ≤ g} and t (q·N moves by q·row_size ≤ row_size, a
    monotone rounding by at most ⌈q·row_size⌉) rises by between 0 and
    row_size; r = max(#{x<g} − t, t − #{x≤g}, 0) and each term moves by at
    most row_size. g is an exact q-quantile of the data when r(g) = 0.
    """
    n = sorted_x.size
    q = Fraction(float(level))
    t = (2 * q.numerator * n + q.denominator) // (2 * q.denominator)  # ⌊qN + 1/2⌋
    below = np.searchsorted(sorted_x, grid, side="left").astype(np.int64)
    at_most = np.searchsorted(sorted_x, grid, side="right").astype(np.int64)
    r = np.maximum(np.maximum(below - t, t - at_most), 0)
    return r - r.min()


def _sample_base2_em(losses, x, y, bits):
    """Index j drawn with probability exactly ∝ (x/2^y)^losses[j] (integer losses ≥ 0).

    Rejection sampling with integer arithmetic only (Ilvento 2020's exact
    normalised sampling, with a capped proposal to bound the integers'
    size): propose j with probability ∝ β^min(d_j, c), as integer weights
    x^e·2^(y(c − e)) with one uniform integer below their total; accept
    with probability β^(d_j − c), as d_j − c exact Bernoulli(x/2^y) draws
    (:mod:`skdp.mechanisms._exact`); otherwise start again. The cap c makes
    the proposal's tail mass at most about half (β^c·len ≤ 1/2) and its
    integers at most :data:`_SECURE_MAX_BITS` bits.
    """
    size = losses.size
    log2_inv_beta = y - math.log2(x)  # only sizes the proposal: any cap c ≥ 0 is exact
    cap = math.ceil((math.log2(size) + 1.0) / log2_inv_beta)
    cap = max(1, min(cap, _SECURE_MAX_BITS // y, int(losses.max()) if size else 0))
    capped = np.minimum(losses, cap)
    exps, counts = np.unique(capped, return_counts=True)
    weights = [x ** int(e) << (y * (cap - int(e))) for e in exps]
    blocks = [w * int(c) for w, c in zip(weights, counts)]
    total = sum(blocks)
    beta = Fraction(x, 2**y)
    while True:
        r = bits.randbelow(total)
        for e, w, block in zip(exps, weights, blocks):
            if r < block:
                # r is uniform in this block of count·w: r // w is uniform among its points
                j = int(np.flatnonzero(capped == e)[r // w])
                break
            r -= block
        if all(_bernoulli(beta, bits) for _ in range(int(losses[j]) - cap)):
            return j


def _secure_em_quantile_1d(sorted_x, lower, upper, level, epsilon, row_size, grid_size, bits):
    """One secure quantile: a grid point of ``_secure_grid(lower, upper, grid_size)``.

    The exponential mechanism with utility −r(g) (:func:`_quantile_losses`,
    sensitivity ``row_size``) over the public grid, sampled exactly with
    weights β^(r(g) − min r), β from :func:`_secure_em_base` (ε' ≤ ``epsilon``).
    """
    grid = _secure_grid(lower, upper, grid_size)
    if lower == upper:
        return float(lower)
    x, y, _ = _secure_em_base(epsilon, row_size)
    losses = _quantile_losses(sorted_x, grid, level, row_size)
    return float(grid[_sample_base2_em(losses, x, y, bits)])


# Block length of the two-level inverse CDF in _em_quantiles_1d.
_CDF_BLOCK = 1024
# exp(v) == 0.0 exactly in float64 for every v < -746 (exp(-745.2) is the
# smallest subnormal): weights whose log is that far below the largest are 0.
_EXP_ZERO = 746.0


def _em_quantiles_1d(sorted_x, lower, upper, levels, epsilon, sensitivity, rng):
    """Smith 2011 exponential mechanism for quantiles of sorted, clipped data.

    The N + 1 gaps between L, x₍₁₎, …, x₍N₎, U get utility −|i − qN| for
    gap i (i points below it), sensitivity 1 per entry under add/remove, and
    weight (gap length) · exp(ε·u/(2·sensitivity)); the output is uniform in
    the selected gap (Smith 2011, Sec. 3; Gillenwater et al. 2021, Sec. 2).
    Each level in ``levels`` is one mechanism at ``epsilon``; they share the
    sorted data, the gaps and their logarithms.

    The log-weights of all gaps are computed (their maximum needs them all),
    then normalised weights exp(log w − max) only where they can be nonzero
    in float64: log w ≤ log(largest gap) − ε|i − qN|/(2Δ), so outside
    |i − qN| ≤ (log(largest gap) − max + 746)·2Δ/ε every weight is exactly 0,
    as it would be if computed. The gap is drawn by inverse CDF with one
    uniform: block sums of the weights locate the block, a cumulative sum
    inside it the gap (the same distribution as one cumulative sum over all
    gaps, without its serial pass).
    """
    n = sorted_x.size
    # gap i runs from edge i to edge i + 1 of L, x₍₁₎, …, x₍N₎, U
    log_gaps = np.empty(n + 1)
    np.subtract(sorted_x[1:], sorted_x[:-1], out=log_gaps[1:n])
    log_gaps[0] = (sorted_x[0] if n else upper) - lower
    if n:
        log_gaps[n] = upper - sorted_x[-1]
    with np.errstate(divide="ignore"):
        np.log(log_gaps, out=log_gaps)
    log_gap_max = np.max(log_gaps)
    a = epsilon / (2.0 * sensitivity)
    index = np.arange(n + 1, dtype=float) if len(levels) > 1 else None
    out = []
    for q in levels:
        if index is None:  # one level: build the index in place
            log_w = np.arange(n + 1, dtype=float)
            log_w -= q * n
        else:
            log_w = np.subtract(index, q * n)
        np.abs(log_w, out=log_w)
        log_w *= -a
        log_w += log_gaps  # log(gap) + ε·u/(2Δ), u = −|i − qN|
        top = np.max(log_w)
        if top == -math.inf:  # every gap has length 0: lower == upper
            out.append(float(lower))
            continue
        # +1 on each side: a margin for the rounding of the bound itself.
        reach = (log_gap_max - top + _EXP_ZERO) / a + 1.0
        start = max(int(math.floor(q * n - reach)), 0)
        stop = min(int(math.ceil(q * n + reach)), n) + 1
        weights = np.subtract(log_w[start:stop], top)
        np.exp(weights, out=weights)
        i = start + _inverse_cdf(weights, rng.random())
        i = min(i, n)
        left = lower if i == 0 else sorted_x[i - 1]
        right = upper if i == n else sorted_x[i]
        out.append(float(rng.uniform(left, right)))
    return out


def _inverse_cdf(weights, u):
    """Index i with cumsum(w)[i-1] ≤ u·Σw < cumsum(w)[i] (blocked: no full serial pass)."""
    n_blocks = -(-weights.size // _CDF_BLOCK)
    padded = np.zeros(n_blocks * _CDF_BLOCK)
    padded[: weights.size] = weights
    block_cdf = np.cumsum(padded.reshape(n_blocks, _CDF_BLOCK).sum(axis=1))
    target = u * block_cdf[-1]
    b = min(int(np.searchsorted(block_cdf, target, side="right")), n_blocks - 1)
    inner = np.cumsum(padded[b * _CDF_BLOCK:(b + 1) * _CDF_BLOCK])
    before = block_cdf[b - 1] if b else 0.0
    return min(b * _CDF_BLOCK + int(np.searchsorted(inner, target - before, side="right")),
               weights.size - 1)


def _window_logsumexp(g, width):
    """log Σ_{p=i−width}^{i−1} exp(g[p]) for every i in 0..len(g)−1 (−inf when empty).

    Sliding-window log-sum-exp without subtraction (van Herk / Gil–Werman):
    with blocks of ``width`` entries, a window is a suffix of one block plus
    a prefix of the next, both from cumulative ``logaddexp`` passes.
    """
    size = g.size
    # padded[p + width] = g[p]; window of i: padded[i .. i + width − 1]
    n_blocks = -(-(size + width) // width)
    padded = np.full(n_blocks * width, -np.inf)
    padded[width:width + size] = g
    blocks = padded.reshape(n_blocks, width)
    prefix = np.logaddexp.accumulate(blocks, axis=1).reshape(-1)
    suffix = np.logaddexp.accumulate(blocks[:, ::-1], axis=1)[:, ::-1].reshape(-1)
    start = np.arange(size)
    stop = start + width - 1
    out = suffix[start]
    partial = start % width != 0  # the window runs into the next block
    out[partial] = np.logaddexp(out[partial], prefix[stop[partial]])
    return out


def _joint_transition(prev, d, c):
    """log Σ_{i' < i} exp(prev[i'] − c·|i − i' − d|) for every i (O(n), no subtraction).

    The kernel is exp(−c(D − d)) for D = i − i' ≥ K = max(1, ⌈d⌉) and
    exp(−c(d − D)) for 1 ≤ D < K: a cumulative log-sum-exp of
    prev[i'] + c·i' (far part) and a sliding window of prev[i'] − c·i' (near part).
    """
    size = prev.size
    idx = np.arange(size, dtype=float)
    big_k = max(1, math.ceil(d))
    out = np.full(size, -np.inf)
    if big_k < size:
        far = np.logaddexp.accumulate(prev + c * idx)[: size - big_k]
        out[big_k:] = far + c * (d - idx[big_k:])
    if big_k > 1:
        near = _window_logsumexp(prev - c * idx, big_k - 1) + c * (idx - d)
        out = np.logaddexp(out, near)
    return out


def _joint_alpha(arrivals, j, log_len, c, cum_d):
    """log-weights α_j(i, k), shape (j, n + 1): step j's output is the k-th in interval i.

    ``arrivals[l − 1]`` holds α_l(i, 1) (output l opens interval i). Each of
    the k − 1 later outputs in the same interval adds utility −d_l and the
    volume of k sorted points in an interval of length ℓ is ℓ^k / k!.
    """
    rows = [arrivals[j - 1]]
    for k in range(2, j + 1):
        rows.append(arrivals[j - k] + (k - 1) * log_len - c * (cum_d[j] - cum_d[j - k + 1])
                    - math.lgamma(k + 1))
    return np.vstack(rows)


def _sample_log_weights(log_w, rng):
    """Index (into the flattened ``log_w``) drawn with probability ∝ exp(log_w)."""
    flat = np.ravel(log_w)
    top = np.max(flat)
    weights = np.exp(flat - top)
    return _inverse_cdf(weights, rng.random())


def _joint_quantiles_1d(sorted_x, lower, upper, levels, epsilon, sensitivity, rng,
                        n_draws=None):
    """JointExp (Gillenwater, Joseph & Kulesza 2021, Sec. 3): all levels at once.

    ``levels`` must be non-decreasing. With edges L, x₍₁₎, …, x₍N₎, U,
    interval i = [edge i, edge i + 1) of length ℓᵢ holds the outputs with i
    data points below them. For increasing outputs o₁ ≤ … ≤ o_m with rᵢ data
    points below oⱼ (r₀ = 0, r_{m+1} = N) and targets tⱼ = qⱼN (t₀ = 0,
    t_{m+1} = N), the utility is

        u(o) = −Σ_{j=1}^{m+1} |(rⱼ − rⱼ₋₁) − (tⱼ − tⱼ₋₁)|     (GJK21, Sec. 3.1).

    Sensitivity under add/remove (our derivation; GJK21 state 2 for their
    neighbouring relation): a new point raises one count rⱼ − rⱼ₋₁ (say j = s)
    by 1, and every target gap tⱼ − tⱼ₋₁ by dⱼ = qⱼ − qⱼ₋₁ (q₀ = 0,
    q_{m+1} = 1, Σ dⱼ = 1), so |Δu| ≤ (1 − d_s) + Σ_{j≠s} dⱼ = 2(1 − d_s)
    ≤ Δ = 2(1 − minⱼ dⱼ) ≤ 2 (for one level, 2·max(q, 1 − q): the Smith
    utility's own add/remove sensitivity, doubled as u counts |i − qN| twice).
    A row of ``sensitivity`` entries (axis=None on n-D data) moves it by at
    most that many times Δ.
    The density over the increasing vectors is ∝ exp(ε·u/(2Δ)) (McSherry &
    Talwar 2007): ε-DP. It is sampled exactly (up to float rounding): a
    forward pass over the levels computes, in log space, the total weight of
    every (level j, interval i, k-th output in i) — the volume of k sorted
    points in one interval is ℓᵢᵏ/k! — then a backward pass draws the
    intervals and the outputs are sorted uniforms in them. Time
    O(m²·N) (O(N) per transition, O(m) interval repeats), memory O(m·N).
    Returns a list of m floats, or with ``n_draws`` an (n_draws, m) array of
    independent draws that share the forward pass (for tests).
    """
    n = sorted_x.size
    m = len(levels)
    edges = np.concatenate(([lower], sorted_x, [upper]))
    with np.errstate(divide="ignore"):
        log_len = np.log(np.diff(edges))
    if np.all(log_len == -np.inf):  # lower == upper: a single possible output
        out = np.full((1 if n_draws is None else n_draws, m), float(lower))
        return out[0].tolist() if n_draws is None else out
    q_ext = np.concatenate(([0.0], np.asarray(levels, dtype=float), [1.0]))
    delta_u = 2.0 * (1.0 - float(np.min(np.diff(q_ext)))) * sensitivity
    c = epsilon / (2.0 * delta_u)  # McSherry & Talwar 2007: weights exp(ε·u/(2Δ))
    d = np.diff(q_ext * n)  # d[j − 1] = tⱼ − tⱼ₋₁, j = 1..m+1
    cum_d = np.concatenate(([0.0], np.cumsum(d)))  # cum_d[j] = Σ_{l ≤ j} d_l
    idx = np.arange(n + 1, dtype=float)
    # forward pass: arrivals[j − 1] = α_j(·, 1), totals = log Σ_k α_j(·, k)
    arrivals = [log_len - c * np.abs(idx - d[0])]
    total = arrivals[0]
    for j in range(2, m + 1):
        arrivals.append(log_len + _joint_transition(total, d[j - 1], c))
        total = np.logaddexp.reduce(_joint_alpha(arrivals, j, log_len, c, cum_d), axis=0)
    if n_draws is None:
        return _joint_backward(arrivals, edges, log_len, c, d, cum_d, rng).tolist()
    return np.array([_joint_backward(arrivals, edges, log_len, c, d, cum_d, rng)
                     for _ in range(n_draws)])


def _joint_backward(arrivals, edges, log_len, c, d, cum_d, rng):
    """One draw of JointExp given its forward pass: the last output's (interval,
    repeat), then each predecessor given its successor; sorted uniforms in them."""
    m, size = len(arrivals), log_len.size
    n = size - 1
    idx = np.arange(size, dtype=float)
    alpha = _joint_alpha(arrivals, m, log_len, c, cum_d)
    flat = _sample_log_weights(alpha - c * np.abs(n - idx - d[m]), rng)
    k, i = divmod(flat, size)
    k += 1
    chosen = [0] * m
    for j in range(m, 0, -1):
        chosen[j - 1] = i
        if k > 1:  # output j − 1 is in the same interval, one repeat fewer
            k -= 1
            continue
        if j == 1:
            break
        alpha = _joint_alpha(arrivals, j - 1, log_len, c, cum_d)[:, :i]
        flat = _sample_log_weights(alpha - c * np.abs(i - idx[:i] - d[j - 1]), rng)
        k, i = divmod(flat, i)
        k += 1
    chosen = np.asarray(chosen)
    return np.sort(rng.uniform(edges[chosen], edges[chosen + 1]))


def _quantile_release(a, q, *, epsilon, delta, bounds, axis, rng, secure=False, method=None,
                      grid_size=None, skip_nan=False):
    """Noisy ``np.quantile(np.clip(a, *bounds), q, axis)`` by the exponential mechanism.

    ``q`` is a float or a 1-D array of levels in [0, 1]; the output has
    numpy's shape (q's shape first). With axis=None on n-D data every row
    adds its m entries, so the utility's sensitivity is m times larger.
    ``method`` is ``"split"`` (default: :func:`_em_quantiles_1d` per level
    at ε/m) or ``"joint"`` (:func:`_joint_quantiles_1d`, the outputs of a
    column increase with the levels); it must match the charged
    :func:`_quantile_curve`.

    ``secure=False`` is NOT hardened against floating-point attacks: the
    selection probabilities are computed in floating point, and the output is
    drawn uniformly between two data values, so which floats can come out
    depends on the data (compare Mironov 2012). ``secure=True`` (split only)
    runs :func:`_secure_em_quantile_1d` per level and column: the exact
    base-2 exponential mechanism (Ilvento 2020) over ``grid_size`` public
    points (default 1024), at the effective ε' ≤ ε/m charged by
    :func:`_quantile_curve` with ``secure=True``. With ``skip_nan`` the NaN
    entries of each column are left out (``np.nanquantile``): a row's NaN
    entry adds nothing to its column, so the utility's sensitivity holds.
    """
    method = _check_quantile_method(method)
    if secure and method == "joint":
        _quantile_curve(1.0, 0.0, 1, secure=True, method="joint")  # raises: split only
    arr = np.atleast_1d(np.asarray(a, dtype=float))
    n_outputs, shape = _check_axis(arr, axis)
    q_arr = np.asarray(q, dtype=float)
    grid_size = _check_grid_size(grid_size)
    x, lower, upper = _flatten(arr, bounds, axis)
    if epsilon == math.inf:
        return (np.nanquantile if skip_nan else np.quantile)(x.reshape(arr.shape), q_arr,
                                                              axis=axis)
    if axis is None:
        cols = [np.sort(x.ravel())]
        lows, ups = [float(np.min(lower))], [float(np.max(upper))]
        if np.ptp(lower) or np.ptp(upper):
            raise ValueError("axis=None on multi-column data needs scalar bounds for quantiles.")
        sensitivity = float(x.shape[1])
    else:
        sorted_x = np.sort(x, axis=0)
        cols = [sorted_x[:, j] for j in range(x.shape[1])]
        lows, ups = lower, upper
        sensitivity = 1.0
    if skip_nan:  # np.sort puts NaN last
        cols = [col[:np.count_nonzero(~np.isnan(col))] for col in cols]
    levels = q_arr.reshape(-1)
    out = np.empty((levels.size, len(cols)))
    if method == "split":
        eps_each = _quantile_epsilon(epsilon, n_outputs * levels.size)
        if secure:
            bits = _RandomBits(rng)
            for j, col in enumerate(cols):
                for i, level in enumerate(levels):
                    out[i, j] = _secure_em_quantile_1d(col, float(lows[j]), float(ups[j]), level,
                                                       eps_each, int(sensitivity), grid_size, bits)
        else:
            for j, col in enumerate(cols):
                out[:, j] = _em_quantiles_1d(col, lows[j], ups[j], levels, eps_each, sensitivity,
                                             rng)
    else:
        order = np.argsort(levels, kind="stable")  # the joint mechanism takes increasing levels
        eps_each = _quantile_epsilon(epsilon, n_outputs)
        for j, col in enumerate(cols):
            out[order, j] = _joint_quantiles_1d(col, lows[j], ups[j], levels[order], eps_each,
                                                sensitivity, rng)
    return out.reshape(q_arr.shape + shape)
