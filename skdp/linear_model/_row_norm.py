"""What the linear models do to a row, at fit and at predict: box clip, then norm clip.

A model that clips its training rows (to a public box ``bounds_X``, then to
an L2 norm ``data_norm`` around a public centre) is a model of clipped rows:
``predict`` must clip the rows it gets in the same way, or it applies the
fitted coefficients to data unlike the data they were fitted on. The
:class:`RowClipper` here is that one transformation, stored on the fitted
estimator and applied by ``fit`` and by every prediction method.

When no norm bound is public, :func:`estimate_data_norm` releases a noisy
histogram of the row norms over public log-scale bins (exact discrete
Gaussian noise) and reads a bound from the bins that stand out of the noise,
charged in the estimator's one charge with :func:`norm_estimate_curve`.
"""

import math
import numbers
from functools import partial

import numpy as np

from ..accounting import DiscreteGaussianEvent, calibrate_noise_multiplier, gaussian_rdp, zcdp_rdp
from ..accounting._bisect import smallest_meeting
from ..mechanisms._exact import gaussian_sigma_at_least, sample_discrete_gaussian, zcdp_rho_at_least
from ..utils._rows import row_sums
from ..utils._validation import MAX_BOUND

__all__ = [
    "RowClipper",
    "apply_clip_factors",
    "box_centre_and_norm",
    "calibrate_gaussian_after",
    "check_data_norm",
    "clip_row_norms",
    "estimate_data_norm",
    "norm_estimate_curve",
    "row_blocks",
    "row_norm_scales",
    "rows_at_norm",
    "wide_rows",
]

# The public bins of the private norm bound: bin k of the row norms is
# (2^(lo + k/4), 2^(lo + (k + 1)/4)], 4 bins per factor 2 (a factor 2^(1/4) ≈ 1.19),
# from 2^-20 to 2^40. Any row norm of a table in a sane unit lies inside; norms
# outside count in the end bins.
NORM_GRID_LOG2 = (-20.0, 40.0)
NORM_BINS_PER_OCTAVE = 4
# Probability that noise alone lifts some empty bin over the threshold.
NORM_FALSE_BIN_RATE = 1e-5
# The smallest std of the counts' noise (reached at ε_n = 4): such a discrete Gaussian is 0
# four times in five, and a bin of 3 rows stands out of it.
NORM_MIN_NOISE = 0.5
# The bound is where the kept bins' noisy mass reaches this share (log-linearly
# inside its bin): the 75% quantile of the rows whose bins stand out of the noise.
NORM_QUANTILE = 0.75
# Rows per block when a model walks over X without copying it: temporaries are
# O(BLOCK_ROWS · n_features), and a block of 50 float64 columns (1.6 MB) stays
# in cache between the two matrix products of a gradient.
BLOCK_ROWS = 4096


def row_blocks(n_rows, block_rows=BLOCK_ROWS):
    """The slices ``[0, b), [b, 2b), ...`` that cover ``range(n_rows)``.

    Examples
    --------
    >>> from skdp.linear_model._row_norm import row_blocks
    >>> row_blocks(5, 2)
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    """
    return [slice(start, min(start + block_rows, n_rows)) for start in range(0, n_rows, block_rows)]


def check_data_norm(data_norm, *, name="data_norm"):
    """Return ``data_norm`` as a float in (0, 1e100].

    Raises ``TypeError`` if it is not a real number (a bool is not), and
    ``ValueError`` if it is not > 0 or above 1e100 (the limit of public
    bounds, :data:`skdp.utils._validation.MAX_BOUND`: the squares and sums
    of squares of the sensitivities must not overflow).
    """
    if isinstance(data_norm, (bool, np.bool_)) or not isinstance(data_norm, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(data_norm).__name__}.")
    if not (0 < float(data_norm) <= MAX_BOUND):
        raise ValueError(f"{name} must be finite and > 0, and at most {MAX_BOUND:g}; "
                         f"got {data_norm!r}.")
    return float(data_norm)


def row_norm_scales(X, data_norm):
    """``min(1, data_norm / ||x_i||)`` for each row of ``X`` (1 for a row of norm 0).

    A finite row whose squared norm overflows keeps its direction: its scale
    is computed from the row divided by its largest entry.
    """
    with np.errstate(over="ignore"):  # overflowing rows are handled below
        norms = np.linalg.norm(X, axis=1)
    over = norms > data_norm
    scale = np.ones_like(norms)
    scale[over] = data_norm / norms[over]  # min(1, D/||x||) without dividing by a zero norm
    huge = np.isinf(norms)  # a finite row whose squared norm overflows (entries ≳ 1e154)
    if huge.any():  # D/||x|| as (D/peak)/||x/peak||, which keeps the row's direction
        peak = np.max(np.abs(X[huge]), axis=1)
        scale[huge] = (data_norm / peak) / np.linalg.norm(X[huge] / peak[:, None], axis=1)
    return scale


# Rows of norm above WIDE_NORM are clipped as their direction times the bound: their factor
# D/||x|| can be subnormal (norms up to 1.8e308 against D down to 2^-20), which loses the
# factor's precision, and products x·w of such a row before its clip can overflow to inf.
WIDE_NORM = 1e150


def wide_rows(scales, data_norm):
    """The rows whose norm-clip factor (:func:`row_norm_scales`) marks a norm above ``WIDE_NORM``.

    No row with an infinite ``data_norm``: none is scaled.
    """
    if not math.isfinite(data_norm):
        return np.zeros(np.shape(scales), dtype=bool)
    return scales < data_norm / WIDE_NORM


def rows_at_norm(X, data_norm):
    """Each row of ``X`` (every one of norm > 0) scaled to L2 norm ``data_norm``, its direction kept.

    Computed as (x/peak)·(D/‖x/peak‖), peak the row's largest magnitude:
    every intermediate is a normal float, whatever the row's scale.
    """
    peak = np.max(np.abs(X), axis=1)
    unit = X / peak[:, None]
    return unit * (data_norm / np.linalg.norm(unit, axis=1))[:, None]


def clip_row_norms(X, data_norm):
    """Scale each row of ``X`` down to L2 norm at most ``data_norm`` (rows within it are kept).

    Row i is multiplied by ``min(1, data_norm / ||x_i||)``
    (:func:`row_norm_scales`): it keeps its direction, and every entry's
    magnitude only shrinks (so a row inside a box around 0 stays inside it).
    A row of norm 0 is left as it is. Returns a new array.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model._row_norm import clip_row_norms
    >>> clip_row_norms(np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]]), 1.0).tolist()
    [[0.6000000000000001, 0.8], [0.3, 0.4], [0.0, 0.0]]
    """
    scales = row_norm_scales(X, data_norm)
    return apply_clip_factors(X, scales, wide_rows(scales, data_norm), data_norm)


def apply_clip_factors(X, scales, wide, data_norm):
    """The rows of ``X`` times their factors ``scales`` (:func:`row_norm_scales`), the ``wide`` ones
    (:func:`wide_rows`) set to norm ``data_norm`` by :func:`rows_at_norm` instead (a new array)."""
    out = X * scales[:, None]
    if wide.any():
        out[wide] = rows_at_norm(X[wide], data_norm)
    return out


class RowClipper:
    """The map a linear model applies to every row, at fit and at predict.

    ``x ↦ c + clip_norm(clip_box(x) − c)``: entries are clipped to the box
    ``[lower, upper]`` (skipped when ``lower`` is None), then the row's offset
    from the centre ``c`` is scaled down to L2 norm at most ``data_norm``
    (skipped when it is ``inf``). :meth:`centred` returns ``clip(x) − c``, the
    design the fit uses; a linear model with coefficients w on it is the
    model ``w·clip(x) + (b − w·c)`` on the original scale.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model._row_norm import RowClipper
    >>> clipper = RowClipper(lower=np.zeros(2), upper=np.ones(2), centre=np.full(2, 0.5),
    ...                      data_norm=0.5)
    >>> clipper.transform(np.array([[2.0, 0.5], [0.5, 0.6]])).tolist()
    [[1.0, 0.5], [0.5, 0.6]]
    >>> clipper.transform(np.array([[1.0, 1.0]])).round(4).tolist()
    [[0.8536, 0.8536]]
    """

    def __init__(self, *, lower=None, upper=None, centre=None, data_norm=math.inf):
        self.lower = lower
        self.upper = upper
        self.centre = centre
        self.data_norm = float(data_norm)

    def centred(self, X):
        """The clipped rows minus the centre (never the input array itself)."""
        X = np.array(X, dtype=float, copy=True)
        if self.lower is not None:
            X = np.clip(X, self.lower, self.upper)
        if self.centre is not None:
            X = X - self.centre
        if math.isfinite(self.data_norm):
            X = clip_row_norms(X, self.data_norm)
        return X

    def transform(self, X):
        """The clipped rows on the original scale."""
        X = self.centred(X)
        return X + self.centre if self.centre is not None else X

    def boxed(self, X):
        """The rows clipped to the box, in float64 (``X`` itself if it is float64 and there is no box)."""
        X = np.asarray(X, dtype=float)
        return X if self.lower is None else np.clip(X, self.lower, self.upper)


def box_centre_and_norm(lower, upper, *, centre):
    """Centre and L2 norm bound implied by the public box ``[lower, upper]``.

    With ``centre=True`` (a model with an intercept, which absorbs the shift)
    rows are centred at the box's midpoint, and every clipped row lies within
    ``‖(upper − lower)/2‖₂`` of it; otherwise within ``‖max(|lower|, |upper|)‖₂``
    of 0. Both follow from the box alone.
    """
    if centre:
        return (lower + upper) / 2.0, float(np.linalg.norm((upper - lower) / 2.0))
    return None, float(np.linalg.norm(np.maximum(np.abs(lower), np.abs(upper))))


def norm_estimate_curve(epsilon):
    """Privacy curve of :func:`estimate_data_norm` at ``epsilon`` (from public inputs only).

    ``epsilon`` names the share of the fit's ε given to the norm: the
    histogram's noise is set so that its cost is (ε²/8)-zCDP, the zCDP bound
    of an ε-DP exponential mechanism (Cesar & Rogers 2021), so the share
    costs what a private quantile at that ε would; above ε = 4 the cost
    stays at 2-zCDP (:func:`_norm_noise_multiplier`).
    """
    z = _norm_noise_multiplier(epsilon)
    # the event gives the PLD accountant the discrete Gaussian itself (σ = z exactly: √1 is)
    return zcdp_rdp(zcdp_rho_at_least(z)).with_event(DiscreteGaussianEvent(sigma=z))


def _norm_noise_multiplier(epsilon):
    """z = max(2/ε, ``NORM_MIN_NOISE``): the discrete Gaussian of std ≥ z on counts of sensitivity 1
    is (1/(2z²))-zCDP, ε²/8 up to ε = 4 and a constant 2 above, where counts this exact buy
    nothing more; without the floor its cost would grow as ε² and, at a fit's ε of about 150 or
    more, spend the fit's whole ε alone."""
    return max(2.0 / epsilon, NORM_MIN_NOISE)


def _norm_bins():
    lo, hi = NORM_GRID_LOG2
    return int((hi - lo) * NORM_BINS_PER_OCTAVE)


def estimate_data_norm(X, epsilon, rng, *, centre=None):
    """A private bound on the row norms ‖x − centre‖₂ (a float > 0).

    One histogram of the row norms over the :func:`_norm_bins` public bins of
    ``NORM_GRID_LOG2`` (a norm of 0 counts in the lowest bin, norms beyond
    the grid in the end bins), with exact discrete Gaussian noise of std
    σ ≥ max(2/``epsilon``, 1/2) on every count: one row moves one count by 1, L2
    sensitivity 1 under add/remove-one-row, so the release is
    (1/(2σ²))-zCDP (Canonne, Kamath & Steinke 2020, Thm. 4), the curve
    :func:`norm_estimate_curve` that the caller has charged. The rest is
    post-processing of the noisy counts: a bin is kept when its count
    exceeds the threshold σ·√(2 ln(bins/p)), which an empty bin passes with
    probability at most p/bins (CKS20 show the discrete Gaussian is
    σ²-subgaussian; this sets only utility, not privacy), so
    p = ``NORM_FALSE_BIN_RATE`` over all bins; the
    bound is where the kept bins' noisy mass reaches ``NORM_QUANTILE``,
    log-linearly inside the bin where it does. If no bin is kept (too few rows for ε), the
    bound is the grid's lowest point, 2^-20: every row is scaled to almost
    0, and a model with an intercept fits the intercept alone, not a scale
    that noise picked.

    Unlike an exponential-mechanism quantile over the same grid, the
    threshold does not fail where many rows share a norm: on one-hot rows
    (every norm equal) the grid points above the data all had the
    quantile's smallest rank loss, so that mechanism drew a bound uniformly
    from them, up to 2^40.
    """
    # one pass over the rows, in memory or summed over dask chunks (skdp.utils._rows)
    counts = row_sums(partial(_norm_counts, centre=centre), X)
    lo = NORM_GRID_LOG2[0]
    n_bins = _norm_bins()
    sigma = gaussian_sigma_at_least(_norm_noise_multiplier(epsilon))
    noise = np.asarray(sample_discrete_gaussian(sigma, n_bins, random_state=rng))
    noisy = (counts + noise).astype(float)
    threshold = float(sigma) * math.sqrt(2.0 * math.log(n_bins / NORM_FALSE_BIN_RATE))
    kept = np.where(noisy > threshold, noisy, 0.0)
    if not kept.any():
        return float(2.0**lo)
    mass = np.cumsum(kept)
    target = NORM_QUANTILE * mass[-1]
    b = int(np.argmax(mass >= target))
    # within bin b, log-linearly: the share of its mass the quantile still needs
    inside = (target - (mass[b] - kept[b])) / kept[b]
    return float(2.0 ** (lo + (b + inside) / NORM_BINS_PER_OCTAVE))


def _norm_counts(X, centre=None):
    """The counts of the row norms ‖x − centre‖₂ of the block ``X`` in the bins of :func:`_norm_bins`."""
    norms = np.empty(X.shape[0])
    for rows in row_blocks(X.shape[0]):  # no copy of X: temporaries of one block of rows
        B = np.asarray(X[rows], dtype=float)
        with np.errstate(over="ignore"):
            norms[rows] = np.linalg.norm(B if centre is None else B - centre, axis=1)
    lo = NORM_GRID_LOG2[0]
    n_bins = _norm_bins()
    with np.errstate(divide="ignore"):
        position = np.ceil(NORM_BINS_PER_OCTAVE * (np.log2(norms) - lo)) - 1.0
    position = np.nan_to_num(position, nan=n_bins - 1, posinf=n_bins - 1, neginf=0.0)
    return np.bincount(np.clip(position, 0, n_bins - 1).astype(np.int64), minlength=n_bins)


def calibrate_gaussian_after(fixed, epsilon, delta, *, rtol=1e-6):
    """The smallest σ with ``(fixed + gaussian_rdp(σ)).epsilon(delta) <= epsilon`` (within rtol).

    ``fixed`` is the curve of the fit's other releases (an
    :class:`~skdp.accounting.RDPCurve`, e.g. :func:`norm_estimate_curve`),
    or None. ε(σ) decreases in σ; bisection in log σ keeps a bracket whose
    upper end always meets the target, and returns it (the safe side).
    Raises ``ValueError`` when ``fixed`` alone already spends ``epsilon``.
    """
    sigma = calibrate_noise_multiplier(epsilon, delta)  # the answer without ``fixed``
    if fixed is None:
        return sigma
    if fixed.epsilon(delta) >= epsilon:
        raise ValueError("the fixed part of the curve already spends epsilon.")

    def meets(s):
        return (fixed + gaussian_rdp(s)).epsilon(delta) <= epsilon

    return smallest_meeting(meets, sigma, rtol=rtol)
