"""Private bounds when none are public: a noisy log-scale histogram per column.

Estimators that clip to ``bounds`` use this when the user gives none. The
range is released, never read: per column, one histogram of the values over
a **public** grid of bins along the real line, symmetric in sign and
logarithmic in magnitude (:data:`BINS_PER_OCTAVE` bin per factor 2 from
2^-30 to 2^60 on each side, and one bin for the magnitudes up to 2^-30,
which count as 0). Each value falls in exactly one bin of its column, so one
row moves one count of each column's histogram by 1: the d histograms are
d sums of sensitivity 1 released together, the noisy-sums release of
:mod:`skdp.stats._noise` (Dwork, McSherry, Nissim & Smith 2006; Laplace, or
one Gaussian vector where that adds less noise). The rest is
post-processing: a bin is kept when its noisy count exceeds a threshold set
from the noise alone (so that an empty bin is kept with probability below
:data:`FALSE_BIN_RATE` over all bins of a column), and the range is the hull
of the kept bins after at most :data:`TRIM` of their noisy mass is left out
at each end (the range-from-heavy-bins idea of Karwa & Vadhan 2018, Sec. 4,
on a log-scale grid). If no bin is kept the range is (0, 0): the column is
clipped to 0 (dropped), not to a bin that noise alone picked.

The range is a pair of public grid points, so it carries no floating-point
trace of the data beyond the selection; ``secure=True`` adds exact discrete
noise to the integer counts (Canonne, Kamath & Steinke 2020).

A fit that estimates its bounds spends :data:`BOUNDS_EPSILON_SHARE` of its
ε on them, charged in the fit's one charge: :func:`split_curve` composes the
range's curve with the statistic's, the statistic taking the largest ε that
keeps the whole at the fit's (ε, δ). Public bounds are always better: they
cost nothing and fit the data's meaning rather than a log-scale grid.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..accounting._bisect import largest_within
from ..utils import check_bounds
from ._checks import _charge, _check_common, _check_data
from ._histograms import _histogram_curve
from ._noise import _noise_scales, _noisy_counts, _sums_delta

if TYPE_CHECKING:
    from .._typing import ArrayLike, FloatArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["bounds"]

# The share of a fit's ε spent on its bounds when none are public. Measured with
# benchmarks/bench_private_bounds.py (docs/user_guide/bounds.rst, "When no public
# bound is known"): 0.1 and 0.2 leave most columns of small tables (breast cancer,
# digits) below the noise; 0.5 did best, 0.7 left the statistics too noisy.
BOUNDS_EPSILON_SHARE = 0.5
# The public grid: magnitudes 2^-30 .. 2^60, BINS_PER_OCTAVE bins per factor 2.
LOG2_RANGE = (-30, 60)
BINS_PER_OCTAVE = 1
# Probability that noise alone lifts some empty bin of a column over the threshold.
FALSE_BIN_RATE = 1e-5
# Noisy mass left out at each end of the kept bins (a few extreme rows move no bound).
TRIM = 0.005

_SIDE = (LOG2_RANGE[1] - LOG2_RANGE[0]) * BINS_PER_OCTAVE  # bins per sign
N_BINS = 2 * _SIDE + 1  # negative bins, the zero bin, positive bins
_MAGNITUDES = 2.0 ** (np.arange(LOG2_RANGE[0] * BINS_PER_OCTAVE,
                                LOG2_RANGE[1] * BINS_PER_OCTAVE + 1) / BINS_PER_OCTAVE)
# Bin b is [_LEFT[b], _RIGHT[b]] on the real line; the zero bin is the point 0.
_LEFT = np.concatenate([-_MAGNITUDES[:0:-1], [0.0], _MAGNITUDES[:-1]])
_RIGHT = np.concatenate([-_MAGNITUDES[-2::-1], [0.0], _MAGNITUDES[1:]])


def bin_index(X):
    """The bin of each entry of ``X`` (int array of X's shape); NaN entries get -1.

    Magnitude a > 2^-30 goes to the bin (2^((m − 1)/r), 2^(m/r)] with
    m = ⌈r·log2 a⌉ (r = :data:`BINS_PER_OCTAVE`), magnitudes above 2^60 to
    the last one; its sign picks the side. Magnitudes up to 2^-30 go to
    the zero bin.
    """
    X = np.asarray(X, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.ceil(BINS_PER_OCTAVE * np.log2(np.abs(X)))
    offset = np.clip(m, LOG2_RANGE[0] * BINS_PER_OCTAVE + 1, LOG2_RANGE[1] * BINS_PER_OCTAVE)
    offset = np.nan_to_num(offset - LOG2_RANGE[0] * BINS_PER_OCTAVE).astype(np.int64)
    idx = np.where(X > 0, _SIDE + offset, _SIDE - offset)
    idx[np.abs(X) <= _MAGNITUDES[0]] = _SIDE
    idx[np.isnan(X)] = -1
    return idx


def _bounds_curve(epsilon, delta, n_features, *, secure=False):
    """Curve of :func:`_bounds_release`: ``n_features`` histograms of sensitivity 1, one release."""
    return _histogram_curve(epsilon, delta, n_features, secure=secure)


def _threshold(epsilon, delta, n_features):
    """The noisy count above which a bin is kept, from the noise distribution alone.

    An empty bin's noisy count is Laplace(b) or N(0, s²) (b, s from
    ``_noise_scales``); each of the :data:`N_BINS` bins of a column passes
    with probability :data:`FALSE_BIN_RATE`/N_BINS: b·ln(N_BINS/(2p)) for
    the Laplace tail ½e^(−τ/b), s·Φ⁻¹(1 − p/N_BINS) for the Gaussian.
    """
    scale = float(_noise_scales(epsilon, delta, n_features, 1.0))
    tail = FALSE_BIN_RATE / N_BINS
    if _sums_delta(epsilon, delta, n_features) == 0:
        return scale * math.log(0.5 / tail)
    from scipy.special import ndtri  # imported where used: import skdp.stats stays fast

    return scale * float(-ndtri(tail))


def _bounds_release(X, *, epsilon, delta, rng, secure=False):
    """Private ``(lower, upper)`` arrays per column of the 2-D ``X`` (NaN entries are skipped).

    The caller has charged ``_bounds_curve(epsilon, delta, X.shape[1],
    secure=secure)``. With ``epsilon=inf``: the columns' exact minimum and
    maximum (0 for a column without values).
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    if epsilon == math.inf:
        observed = ~np.isnan(X)
        lower = np.where(observed, X, np.inf).min(axis=0, initial=np.inf)
        upper = np.where(observed, X, -np.inf).max(axis=0, initial=-np.inf)
        empty = ~observed.any(axis=0)
        lower[empty] = upper[empty] = 0.0
        return lower, upper
    idx = bin_index(X)
    flat = (idx + np.arange(d) * N_BINS)[idx >= 0]
    counts = np.bincount(flat, minlength=d * N_BINS).reshape(d, N_BINS)
    noisy = _noisy_counts(counts, epsilon=epsilon, delta=delta, rng=rng, secure=secure,
                          n_outputs=d)
    return _hull(np.asarray(noisy, dtype=float), _threshold(epsilon, delta, d))


def _hull(noisy, threshold):
    """Post-processing of the noisy counts (d, N_BINS) into the bounds of each column.

    A column none of whose bins clears the threshold gets the zero bin,
    (0, 0): its values are clipped to 0, which drops the column from what
    follows rather than clip it to a bin that noise alone picked.
    """
    kept = noisy > threshold
    kept[~kept.any(axis=1), _SIDE] = True
    mass = np.where(kept, np.maximum(noisy, threshold), 0.0)
    cut = TRIM * mass.sum(axis=1, keepdims=True)
    first = np.argmax(np.cumsum(mass, axis=1) > cut, axis=1)
    last = N_BINS - 1 - np.argmax(np.cumsum(mass[:, ::-1], axis=1) > cut, axis=1)
    return _LEFT[first].copy(), _RIGHT[last].copy()


def split_curve(epsilon, delta, n_features, stat_curve, *, secure=False, share=None):
    """The curve of a fit that estimates its bounds, and the ε of each part.

    The bounds get ``share`` × ε (default :data:`BOUNDS_EPSILON_SHARE`):
    :func:`_bounds_curve` at (share·ε, δ).
    The statistic gets the largest ε_s ≤ ε (to a relative 1e-6, by
    bisection) for which ``bounds curve + stat_curve(ε_s)`` is still
    (ε, δ)-DP; with δ = 0 and pure ε-DP parts that is ε·(1 − share), while
    with δ > 0 composing the two RDP curves leaves the statistic more.
    Everything comes from public parameters.

    Returns
    -------
    (bounds_epsilon, stat_epsilon, curve)
    """
    eps_bounds = (BOUNDS_EPSILON_SHARE if share is None else share) * epsilon
    fixed = _bounds_curve(eps_bounds, delta, n_features, secure=secure)

    def cost(e):
        return (fixed + stat_curve(e)).epsilon(delta)

    # From basic composition's share, which met in every case measured; the target is
    # within float rounding of the sum of pure parts (a few ulps).
    eps_stat = largest_within(cost, epsilon * (1.0 + 1e-12), epsilon - fixed.epsilon(delta),
                              rtol=1e-6, upper=epsilon)
    return eps_bounds, eps_stat, fixed + stat_curve(eps_stat)


def bounds(
    a: ArrayLike,
    *,
    epsilon: float,
    delta: float = 0.0,
    budget: PrivacyBudget | None = None,
    random_state: RandomStateLike = None,
    secure: bool = False,
) -> tuple[float, float] | tuple[FloatArray, FloatArray]:
    """Differentially private bounds ``(lower, upper)`` of each column, without any bounds.

    One noisy histogram per column over a public grid of bins, one per
    power of two of the magnitude (from 2^-30 to 2^60, either sign, plus
    0), then the hull of the bins whose noisy count stands out of the
    noise, leaving out at most 0.5% of their mass at each end; see
    :mod:`skdp.stats._range`. One row changes one count per column by 1
    (Dwork, McSherry, Nissim & Smith 2006); the columns share (ε, δ) as
    the noisy sums of :mod:`skdp.stats` do. The bounds are 0 or ± powers
    of two, within a factor 2 of the data's range: use them as the public
    ``bounds`` of later statistics (post-processing). A column whose
    values no bin holds enough of to stand out of the noise gets (0, 0).
    A column far from 0 relative to its spread (years, say) gets loose
    bounds: prefer bounds known from the data's meaning.

    Parameters
    ----------
    a : array-like of shape (n_rows,) or (n_rows, n_columns)
        Finite values; one row per person.
    epsilon : float > 0
        ``inf`` returns each column's exact minimum and maximum.
    delta : float in [0, 1), default=0
    budget, random_state, secure
        As in the other functions of :mod:`skdp.stats`: ``secure=True`` adds
        exact discrete noise to the counts and draws every random bit from
        the OS CSPRNG, so it refuses a ``random_state`` other than ``None``
        (a ``ValueError`` before anything is charged).

    Returns
    -------
    (lower, upper)
        Floats for 1-D ``a``, arrays of shape (n_columns,) otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> ages = np.random.default_rng(0).normal(40, 10, size=10_000).clip(17, 90)
    >>> lower, upper = stats.bounds(ages, epsilon=0.1, random_state=0)
    >>> lower, upper
    (16.0, 64.0)
    >>> round(float(stats.mean(ages, epsilon=0.9, bounds=(lower, upper), random_state=0)), 1)
    40.1
    """
    epsilon, delta, rng, secure = _check_common(epsilon, delta, budget, random_state, secure)
    arr = _check_data(a)
    if arr.ndim > 2:
        raise ValueError(f"a must have shape (n_rows,) or (n_rows, n_columns); got {arr.shape}.")
    X = arr.reshape(arr.shape[0], -1) if arr.ndim == 2 else arr.reshape(-1, 1)
    curve = _bounds_curve(epsilon, delta, X.shape[1], secure=secure)
    _charge(budget, curve, "bounds", epsilon, delta, X.shape[1], secure)
    lower, upper = _bounds_release(X, epsilon=epsilon, delta=delta, rng=rng, secure=secure)
    if arr.ndim == 1:
        return float(lower[0]), float(upper[0])
    return lower, upper


def check_bounds_or_none(bounds, n_features):
    """``None`` or the checked public bounds (:func:`skdp.utils.check_bounds`)."""
    return None if bounds is None else check_bounds(bounds, n_features)


def no_bounds(n_features):
    """``(-inf, inf)`` per feature: the bounds of a fit that clips nothing (ε = inf)."""
    return np.full(n_features, -np.inf), np.full(n_features, np.inf)

