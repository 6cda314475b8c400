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
on a log-scale grid). Among the bins where the pooled noisy counts of all
the features stand out (the candidates), a feature also keeps those of its own
that clear a lower bar (:data:`CANDIDATE_RATE` over the few candidates, not
:data:`FALSE_BIN_RATE` over every bin). The features none of whose bins is kept share the hull
of their pooled noisy histogram (:func:`_feature_hull`): on a small or wide
table (digits, 64 columns of 0 to 16) one column's bins stay below the noise
where the sum of the columns' counts does not, and the range (0, 0), which
dropped every such column, becomes the columns' common one. Where even the
pooled counts locate nothing the range is about 0 (± 2^-29), never a bin that
noise alone picked; (0, 0) is left only for a column whose zero bin alone is
kept.

A **target** (the ``n_targets`` last columns of :func:`_bounds_release`) cannot
be dropped: clipping it to 0, or to one bin that leaves a large share of the
rows out, makes the model far worse than predicting the mean (ISLR's Wage,
2,250 training rows averaging 112: R² −6.4 with the range (0, 0), issue 26).
Its range (:func:`_target_hull`) is never a single point: when no bin clears
the threshold, the two adjacent bins of the largest noisy sum stand in for the
kept ones (report noisy max, Dwork & Roth 2014, Claim 3.9, here post-processing of
the released counts), and a :class:`~skdp.NoisyEstimateWarning` says so; and
the hull is widened by one bin at each end where the bin just outside it has
a noisy count above :data:`WIDEN_SHARE` of the kept noisy mass, so that a
share of the rows that the threshold cannot see at a small ε is not clipped.
Both are post-processing of the same noisy counts: the cost is unchanged.

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
import warnings
from typing import TYPE_CHECKING

import numpy as np

from ..exceptions import NoisyEstimateWarning

from ..accounting._bisect import largest_within
from ..utils import check_bounds
from ..utils import _blocks
from ..utils._blocks import map_blocks
from ..utils._rows import is_lazy, row_sums
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
# A target's range takes in the bin just outside either end when that bin's noisy count is
# above this share of the kept noisy mass. 0.02 took in Wage's 2.4% of wages above 256
# (thousand USD) and so doubled the range: R² 0.155 -> -0.149 for DPLinearRegression and
# 0.247 -> -0.011 for DPSGDRegressor at ε = 0.5 (10 seeds); 0.1 keeps the bins that hold a
# quarter of the rows (Wage's 23% from 128 to 256) and lets a few outliers be clipped.
WIDEN_SHARE = 0.1
# The share of the bounds' ε that a target's histogram gets, released alone, when a fit
# estimates its features' bounds too (split_curve_with_target). Measured on the small
# regression tables of benchmarks/_suite_data.py (wage, gpa, computers; DPLinearRegression,
# 10 seeds, ε = 0.05 to 5): 0.25 was above 0.5 at every ε from 0.1 to 1 (the features'
# bounds keep more of the budget; equal within 0.001 at ε = 5), and the target's range was
# never degenerate at ε ≥ 0.1 with either.
TARGET_SHARE_OF_BOUNDS = 0.25
# Probability that noise alone lifts some empty candidate bin of a column (a bin where the
# pooled counts of all columns lie, _feature_hull) above the lower bar for candidates.
CANDIDATE_RATE = 0.01
# Probability that noise alone lifts the sum of two adjacent empty bins of a target's
# column above the level at which the largest such sum is trusted when no bin clears the
# threshold (bins picked by noise alone give a range far from the data). 1% was preferred
# to 5%, which gave one such range in 10 fits on Wage at epsilon = 0.05 (single bins).
SELECT_RATE = 0.01

# The histogram's blocks are at most this many bytes of X (fewer when BLOCK_BYTES is). At
# 10^6 x 50, blocks of 256 kB, 512 kB, 1 MB and 2 MB took 225, 210, 224 and 248 ms of CPU on
# one thread, 226, 203, 224 and 252 on two (load 6.6; docs/benchmarks.md, DPPCA's speed).
HISTOGRAM_BLOCK_BYTES = 2 ** 19

_SIDE = (LOG2_RANGE[1] - LOG2_RANGE[0]) * BINS_PER_OCTAVE  # bins per sign
N_BINS = 2 * _SIDE + 1  # negative bins, the zero bin, positive bins
_MAGNITUDES = 2.0 ** (np.arange(LOG2_RANGE[0] * BINS_PER_OCTAVE,
                                LOG2_RANGE[1] * BINS_PER_OCTAVE + 1) / BINS_PER_OCTAVE)
# Bin b is [_LEFT[b], _RIGHT[b]] on the real line; the zero bin is the point 0.
_LEFT = np.concatenate([-_MAGNITUDES[:0:-1], [0.0], _MAGNITUDES[:-1]])
_RIGHT = np.concatenate([-_MAGNITUDES[-2::-1], [0.0], _MAGNITUDES[1:]])


# The bin of a value from its float64 bits, without a logarithm. For a normal a > 0,
# b = a·(1 − 2^-53) rounds to the largest double below a when a is a power of two and to a
# double in [2^⌊log2 a⌋, a] otherwise (the product is within half a unit in the last place of
# a, and 2^⌊log2 a⌋ is a double), so the exponent field E of b is ⌈log2 a⌉ + 1022 (IEEE 754
# binary64; the field of ±0 and of subnormals is 0, of ±inf and NaN 2047). The 12 bits of
# sign and E index _KEY_BIN; two slots past N_BINS take +inf or NaN and −inf or −NaN.
_BELOW = 1.0 - 2.0 ** -53
_TOP_BITS = np.uint64(52)
_INF_OR_NAN = (N_BINS, N_BINS + 1)  # by sign


def _key_bins():
    """The bin of each of the 4096 sign-and-exponent keys (BINS_PER_OCTAVE == 1)."""
    if BINS_PER_OCTAVE != 1:  # a key is one octave: finer bins need the mantissa too
        raise NotImplementedError("_key_bins reads one bin per octave from the exponent")
    exponent = np.arange(2048) - 1022  # ⌈log2 a⌉ for the field E = 0 .. 2047
    offset = np.clip(exponent, LOG2_RANGE[0] + 1, LOG2_RANGE[1]) - LOG2_RANGE[0]
    offset[exponent <= LOG2_RANGE[0]] = 0  # up to 2^-30 (and E = 0: 0 or subnormal)
    bins = np.concatenate([_SIDE + offset, _SIDE - offset])
    bins[[2047, 4095]] = _INF_OR_NAN
    return bins


_KEY_BIN = _key_bins()


def _bins_into(block, y):
    """The bins of the entries of ``block`` (int64, in ``y``'s buffer); ±inf, NaN in two slots."""
    with np.errstate(invalid="ignore"):  # a signalling NaN
        np.multiply(block, _BELOW, out=y)
    key = y.view(np.uint64)
    np.right_shift(key, _TOP_BITS, out=key)
    bins = key.view(np.int64)  # the keys are < 4096: the same bits
    return np.take(_KEY_BIN, bins, out=bins, mode="clip")  # every key is in range


def bin_index(X):
    """The bin of each entry of ``X`` (int array of X's shape); NaN entries get -1.

    Magnitude a > 2^-30 goes to the bin (2^(m − 1), 2^m] with m = ⌈log2 a⌉
    (:data:`BINS_PER_OCTAVE` is 1), magnitudes above 2^60 to the last one;
    its sign picks the side. Magnitudes up to 2^-30 go to the zero bin. m
    is read from the float's exponent, exactly (see :data:`_BELOW`).
    """
    X = np.asarray(X, dtype=float)
    idx = _bins_into(X, np.empty(X.shape))
    idx[idx == _INF_OR_NAN[0]] = N_BINS - 1
    idx[idx == _INF_OR_NAN[1]] = 0
    idx[np.isnan(X)] = -1
    return idx


def _bounds_curve(epsilon, delta, n_features, *, secure=False):
    """Curve of :func:`_bounds_release`: ``n_features`` histograms of sensitivity 1, one release."""
    return _histogram_curve(epsilon, delta, n_features, secure=secure)


def _threshold(epsilon, delta, n_features, *, rate=FALSE_BIN_RATE, n_bins=N_BINS):
    """The noisy count above which a bin is kept, from the noise distribution alone.

    An empty bin's noisy count is Laplace(b) or N(0, s²) (b, s from
    ``_noise_scales``); each of the ``n_bins`` bins of a column (all
    :data:`N_BINS`, or the candidates of :func:`_feature_hull`) passes with
    probability p = ``rate``/n_bins: b·ln(1/(2p)) for the Laplace tail
    ½e^(−τ/b), s·Φ⁻¹(1 − p) for the Gaussian.
    """
    scale = float(_noise_scales(epsilon, delta, n_features, 1.0))
    tail = rate / n_bins
    if _sums_delta(epsilon, delta, n_features) == 0:
        return scale * math.log(0.5 / tail)
    from scipy.special import ndtri  # imported where used: import skdp.stats stays fast

    return scale * float(-ndtri(tail))


def _pair_level(epsilon, delta, n_features):
    """The level that the noisy sum of two empty bins exceeds with probability SELECT_RATE / N_BINS.

    The two noises are independent Laplace(b) or N(0, s²) (b, s from
    ``_noise_scales``, as in :func:`_threshold`). The sum of two Gaussians is
    N(0, 2s²): level √2·s·Φ⁻¹(1 − p). The sum of two Laplace(b) has the tail
    P(L₁ + L₂ > t) = ¼·e^(−t/b)·(2 + t/b) for t ≥ 0 (the convolution of the
    two densities); the level solves it = p by bisection on t/b. With p =
    SELECT_RATE / N_BINS, a union bound over the pairs of a column gives
    the rate SELECT_RATE for the column. Public parameters only.
    """
    scale = float(_noise_scales(epsilon, delta, n_features, 1.0))
    tail = SELECT_RATE / N_BINS
    if _sums_delta(epsilon, delta, n_features) != 0:
        from scipy.special import ndtri  # imported where used: import skdp.stats stays fast

        return math.sqrt(2.0) * scale * float(-ndtri(tail))
    lo, hi = 0.0, 100.0  # ¼·e^(−x)·(2 + x) falls from 1/2 at x = 0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if 0.25 * math.exp(-mid) * (2.0 + mid) > tail else (lo, mid)
    return scale * hi


def _bounds_release(X, *, epsilon, delta, rng, secure=False, n_targets=0):
    """Private ``(lower, upper)`` arrays per column of the 2-D ``X`` (NaN entries are skipped).

    The caller has charged ``_bounds_curve(epsilon, delta, X.shape[1],
    secure=secure)``. With ``epsilon=inf``: the columns' exact minimum and
    maximum (0 for a column without values). The last ``n_targets`` columns
    are targets: their range comes from :func:`_target_hull` (never a single
    point), the others' from :func:`_hull`. The same noisy counts are
    released either way: the choice is post-processing.
    """
    lazy = is_lazy(X)
    X = X if lazy else np.asarray(X, dtype=float)
    n, d = X.shape
    if epsilon == math.inf and lazy:  # validated: finite values
        import dask

        return tuple(np.asarray(v, dtype=float) for v in
                     dask.compute(X.min(axis=0), X.max(axis=0)))
    if epsilon == math.inf:
        observed = ~np.isnan(X)
        lower = np.where(observed, X, np.inf).min(axis=0, initial=np.inf)
        upper = np.where(observed, X, -np.inf).max(axis=0, initial=-np.inf)
        empty = ~observed.any(axis=0)
        lower[empty] = upper[empty] = 0.0
        return lower, upper
    counts = row_sums(_bin_counts, X)  # in memory, or summed over dask chunks
    noisy = _noisy_counts(counts, epsilon=epsilon, delta=delta, rng=rng, secure=secure,
                          n_outputs=d)
    noisy = np.asarray(noisy, dtype=float)
    threshold = _threshold(epsilon, delta, d)
    n_features = d - n_targets
    lower, upper = _feature_hull(
        noisy[:n_features], threshold, _pair_level(epsilon, delta, d),
        lambda k: _threshold(epsilon, delta, d, rate=CANDIDATE_RATE, n_bins=k))
    if n_targets:
        t_lower, t_upper = _target_hull(noisy[n_features:], threshold,
                                        _pair_level(epsilon, delta, d), epsilon=epsilon)
        lower, upper = np.concatenate([lower, t_lower]), np.concatenate([upper, t_upper])
    return lower, upper


def _bin_counts(X):
    """The (d, N_BINS) counts of the entries of the 2-D ``X`` in each column's bins (NaN skipped).

    By blocks of rows (:func:`~skdp.utils._blocks.map_blocks`, at most
    :data:`HISTOGRAM_BLOCK_BYTES`), each counted with one ``np.bincount`` over
    (column, bin): nothing of X's size is made.
    """
    n, d = X.shape
    width = N_BINS + 2  # a column's bins, then its two slots of ±inf or NaN
    offsets = np.arange(d) * width

    def run(blocks):  # the counts of a run of blocks, in one buffer reused by each block
        total, y = np.zeros(d * width, dtype=np.int64), None
        for rows in blocks:
            if y is None:
                y = np.empty((rows.stop - rows.start, d))
            bins = _bins_into(X[rows], y[:rows.stop - rows.start])
            bins += offsets
            total += np.bincount(bins.ravel(), minlength=d * width)
        return [total]

    block_bytes = min(_blocks.BLOCK_BYTES, HISTOGRAM_BLOCK_BYTES)
    counts = sum(map_blocks(run, n, d, block_bytes=block_bytes),
                 np.zeros(d * width, dtype=np.int64)).reshape(d, width)
    slots = counts[:, N_BINS:]
    for j in np.flatnonzero(slots.any(axis=1)):  # ±inf count in the outer bins, NaN in none
        column = X[:, j]
        counts[j, N_BINS - 1] += np.count_nonzero(column == np.inf)
        counts[j, 0] += np.count_nonzero(column == -np.inf)
    return counts[:, :N_BINS]


def _hull_bins(noisy, kept, threshold):
    """First and last bin of the hull of the ``kept`` bins, less TRIM of their mass at each end.

    Also returns the kept noisy mass per column (each kept count floored at
    the threshold).
    """
    mass = np.where(kept, np.maximum(noisy, threshold), 0.0)
    total = mass.sum(axis=1)
    cut = TRIM * total[:, None]
    first = np.argmax(np.cumsum(mass, axis=1) > cut, axis=1)
    last = N_BINS - 1 - np.argmax(np.cumsum(mass[:, ::-1], axis=1) > cut, axis=1)
    return first, last, total


def _hull(noisy, threshold):
    """Post-processing of the noisy counts (d, N_BINS) into the bounds of each column.

    A column none of whose bins clears the threshold gets the zero bin,
    (0, 0): its values are clipped to 0, which drops the column from what
    follows rather than clip it to a bin that noise alone picked.
    """
    kept = noisy > threshold
    kept[~kept.any(axis=1), _SIDE] = True
    first, last, _ = _hull_bins(noisy, kept, threshold)
    return _LEFT[first].copy(), _RIGHT[last].copy()


def _feature_hull(noisy, threshold, pair_level, candidate_level=None):
    """The range of each feature column (d, N_BINS): never (0, 0) for want of a kept bin.

    A column keeps the bins that clear the threshold, as in :func:`_hull`,
    and also, among the m bins that the sum of all d columns' noisy counts
    keeps at √d·threshold (the candidates: where the table's values lie), those
    whose noisy count clears ``candidate_level(m)`` (:func:`_threshold` with
    :data:`CANDIDATE_RATE` over m bins): a lower bar, as only m bins are
    tried, so that a column of pixels, half 0 and half 9 to 16, keeps its
    zero bin where one of the two bins alone cleared the threshold (its range
    would leave every 0 out). The k columns with none (weak columns) share the hull of
    their pooled histogram, the sum of their noisy counts: its noise is the
    sum of k independent noises, which exceeds √k times a column's threshold
    no more often than one noise exceeds the threshold (as often for the
    Gaussian, far less often for the Laplace), while the rows of k columns
    with a common scale (pixels, counts, one-hot blocks) add up k times. If no
    pooled bin clears √k·threshold, the two adjacent bins of the largest pooled
    sum stand in (report noisy max, Dwork & Roth 2014, Claim 3.9), when that
    sum clears √k·``pair_level`` (:func:`_pair_level`); below it nothing
    located the columns and they get the zero bin widened to both neighbours
    (about 0, as a target's range is then). Post-processing of the released
    counts with public constants: the cost is unchanged. A range is (0, 0)
    only when the zero bin alone clears the threshold (a column that is almost
    all zero).
    """
    kept = noisy > threshold
    candidates = noisy.sum(axis=0) > math.sqrt(noisy.shape[0]) * threshold
    if candidate_level is not None and kept.any(axis=1).any() and candidates.any():
        kept |= candidates & (noisy > candidate_level(int(candidates.sum())))
        kept[~(noisy > threshold).any(axis=1)] = False  # a weak column stays weak
    first, last, _ = _hull_bins(noisy, kept, threshold)
    weak = ~kept.any(axis=1)
    k = int(weak.sum())
    if k:
        pooled = noisy[weak].sum(axis=0, keepdims=True)
        level = math.sqrt(k) * threshold
        pooled_kept = pooled > level
        if not pooled_kept.any():
            pairs = pooled[0, :-1] + pooled[0, 1:]  # bins b and b + 1
            best = int(np.argmax(pairs))
            if pairs[best] > math.sqrt(k) * pair_level:
                pooled_kept[0, best:best + 2] = True
        if pooled_kept.any():
            p_first, p_last, _ = _hull_bins(pooled, pooled_kept, level)
            first[weak], last[weak] = p_first[0], p_last[0]
        else:
            first[weak], last[weak] = _SIDE - 1, _SIDE + 1
    return _LEFT[first].copy(), _RIGHT[last].copy()


def _target_hull(noisy, threshold, pair_level, *, epsilon):
    """The range of each target column (d, N_BINS): never a single point.

    1. The bins whose noisy count clears the threshold are kept, as in
       :func:`_hull`. Where none does, the two adjacent bins of the largest
       noisy sum are kept instead (report noisy max, Dwork & Roth 2014,
       Claim 3.9, on the counts already released; a target's rows often
       straddle a power of two) and a :class:`~skdp.NoisyEstimateWarning`
       says that the range rests on them. Their sum must still clear
       ``pair_level`` (:func:`_pair_level`), which the sum of two empty
       bins' noise exceeds somewhere in the column with probability at most
       :data:`SELECT_RATE`; below it the zero bin stands in (the range is
       then about 0, as a feature's would be: nothing located the target).
    2. The hull of the kept bins (less :data:`TRIM` of their mass at each
       end) is widened by the bin just outside it at each end whose noisy
       count is above :data:`WIDEN_SHARE` of the kept noisy mass: at a small
       ε the threshold is far above the count of a bin holding, say, a
       quarter of the rows, which would otherwise be clipped.
    3. A hull of the zero bin alone (the point 0) takes in both neighbours.

    Everything here is a function of the noisy counts and public constants.
    """
    kept = noisy > threshold
    weak = ~kept.any(axis=1)
    rows = np.flatnonzero(weak)
    pairs = noisy[rows, :-1] + noisy[rows, 1:]  # bins b and b + 1
    best = np.argmax(pairs, axis=1)
    # Two empty bins sum above pair_level with probability SELECT_RATE / N_BINS: below it
    # nothing located the target, and the zero bin stands in (step 3 widens it).
    located = pairs[np.arange(rows.size), best] > pair_level
    kept[rows[located], best[located]] = True
    kept[rows[located], best[located] + 1] = True
    kept[rows[~located], _SIDE] = True
    first, last, mass = _hull_bins(noisy, kept, threshold)
    columns = np.arange(noisy.shape[0])
    below, above = np.maximum(first - 1, 0), np.minimum(last + 1, N_BINS - 1)
    share = WIDEN_SHARE * mass
    first = np.where(noisy[columns, below] > share, below, first)
    last = np.where(noisy[columns, above] > share, above, last)
    point = (first == _SIDE) & (last == _SIDE)
    first, last = np.where(point, _SIDE - 1, first), np.where(point, _SIDE + 1, last)
    lower, upper = _LEFT[first].copy(), _RIGHT[last].copy()
    for j in rows:  # released values only: the noisy counts and the range they gave
        warnings.warn(
            f"No bin of the target's private histogram stood out of the noise at "
            f"epsilon={epsilon:g} for its range: the range ({lower[j]:g}, {upper[j]:g}) "
            f"rests on the largest noisy counts, or on 0 where even they were within "
            f"the noise. Give public bounds_y, or a larger epsilon.",
            NoisyEstimateWarning, stacklevel=3)
    return lower, upper


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
    eps_stat, curve = _rest(fixed, epsilon, delta, stat_curve)
    return eps_bounds, eps_stat, curve


def split_curve_with_target(epsilon, delta, n_features, stat_curve, *, secure=False,
                            share=None):
    """:func:`split_curve` for a fit that estimates its features' bounds and a target's.

    The target's histogram is released alone (a second release of
    :func:`_bounds_curve` with one column), with :data:`TARGET_SHARE_OF_BOUNDS`
    of the bounds' ε; the ``n_features`` features' histograms share the rest.
    In one release with the features the target's counts would get the
    noise of all d + 1 columns (std ∝ sqrt(d + 1) for the Gaussian), which at
    a small ε·n hides even the bin holding most of the rows. The curves
    compose (RDP, Mironov 2017, Prop. 1); the statistic takes the largest ε
    that keeps the whole at (ε, δ), as in :func:`split_curve`.

    Returns
    -------
    (features_epsilon, target_epsilon, stat_epsilon, curve)
    """
    eps_bounds = (BOUNDS_EPSILON_SHARE if share is None else share) * epsilon
    eps_target = TARGET_SHARE_OF_BOUNDS * eps_bounds
    eps_features = eps_bounds - eps_target
    fixed = (_bounds_curve(eps_features, delta, n_features, secure=secure)
             + _bounds_curve(eps_target, delta, 1, secure=secure))
    eps_stat, curve = _rest(fixed, epsilon, delta, stat_curve)
    return eps_features, eps_target, eps_stat, curve


def _rest(fixed, epsilon, delta, stat_curve):
    """The largest ε_s with ``fixed + stat_curve(ε_s)`` still (ε, δ)-DP, and that curve."""

    def cost(e):
        return (fixed + stat_curve(e)).epsilon(delta)

    # From basic composition's share, which met in every case measured; the target is
    # within float rounding of the sum of pure parts (a few ulps).
    eps_stat = largest_within(cost, epsilon * (1.0 + 1e-12), epsilon - fixed.epsilon(delta),
                              rtol=1e-6, upper=epsilon)
    return eps_stat, fixed + stat_curve(eps_stat)


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

    One noisy histogram per column over public power-of-two bins, charged
    once. The bounds are 0 or ± powers of two, within a factor 2 of the data's
    range: use them as the public ``bounds`` of later statistics. Notes give
    the mechanism and its limits.

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

    Notes
    -----
    One noisy histogram per column over a public grid of bins, one per
    power of two of the magnitude (from 2^-30 to 2^60, either sign, plus
    0), then the hull of the bins whose noisy count stands out of the
    noise, leaving out at most 0.5% of their mass at each end; see
    :mod:`skdp.stats._range`. One row changes one count per column by 1
    (Dwork, McSherry, Nissim & Smith 2006); the columns share (ε, δ) as
    the noisy sums of :mod:`skdp.stats` do. The bounds are 0 or ± powers
    of two, within a factor 2 of the data's range: use them as the public
    ``bounds`` of later statistics (post-processing). The columns whose
    values no bin holds enough of to stand out of the noise share the
    range of their pooled histogram (about 0 where that too is noise).
    A column far from 0 relative to its spread (years, say) gets loose
    bounds: prefer bounds known from the data's meaning.

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

