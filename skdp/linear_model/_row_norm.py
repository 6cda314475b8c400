"""What the linear models do to a row, at fit and at predict: box clip, then norm clip.

A model that clips its training rows (to a public box ``bounds_X``, then to
an L2 norm ``data_norm`` around a public centre) is a model of clipped rows:
``predict`` must clip the rows it gets in the same way, or it applies the
fitted coefficients to data unlike the data they were fitted on. The
:class:`RowClipper` here is that one transformation, stored on the fitted
estimator and applied by ``fit`` and by every prediction method.

When no norm bound is public, :func:`estimate_data_norm` releases a private
quantile of the row norms (a public log-scale grid, the exact exponential
mechanism of :func:`skdp.stats.quantile` with ``secure=True``), charged in
the estimator's one charge with :func:`norm_estimate_curve`.
"""

import math
import numbers

import numpy as np

from ..accounting import calibrate_noise_multiplier, gaussian_rdp
from ..accounting._bisect import smallest_meeting
from ..stats._core import _quantile_curve, _quantile_release
from ..utils._validation import MAX_BOUND

__all__ = [
    "RowClipper",
    "box_centre_and_norm",
    "calibrate_gaussian_after",
    "check_data_norm",
    "clip_row_norms",
    "estimate_data_norm",
    "norm_estimate_curve",
    "row_blocks",
    "row_norm_scales",
]

# The public grid of the private norm estimate: 481 points evenly spaced in
# log2 from 2^-20 to 2^40 (a factor 2^(1/8) ≈ 1.09 apart). Any row norm of a
# table in a sane unit lies inside; norms outside count at the nearest end.
NORM_GRID_LOG2 = (-20.0, 40.0)
NORM_GRID_SIZE = 481
# The level of the released quantile of the row norms. The quantile's
# exponential mechanism must put little mass on the grid points above the
# largest norm, whose utility is only −(1 − q)·n: at q = 0.75 and ε_q·n = 100
# (the smallest ε·n the defaults aim at, with ε_q = ε/5) their total weight
# is below 481·exp(−100·0.25/2) ≈ 2·10⁻³.
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
    return X * row_norm_scales(X, data_norm)[:, None]


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

    def scales(self, X, block_rows=BLOCK_ROWS):
        """The factor ``s_i`` of each row's norm clip, or None when ``data_norm`` is ``inf``.

        ``centred(x_i) = s_i · (boxed(x_i) − c)`` with
        ``s_i = min(1, data_norm / ‖boxed(x_i) − c‖)`` (:func:`row_norm_scales`),
        so a linear model can use ``X`` and the n factors instead of a
        clipped copy of ``X``. Computed block by block of rows, with
        temporaries of ``block_rows`` rows; the same values as :meth:`centred`.
        """
        if not math.isfinite(self.data_norm):
            return None
        scales = np.empty(X.shape[0])
        for rows in row_blocks(X.shape[0], block_rows):
            B = self.boxed(X[rows])
            scales[rows] = row_norm_scales(B if self.centre is None else B - self.centre,
                                           self.data_norm)
        return scales


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
    """Privacy curve of :func:`estimate_data_norm` at ``epsilon`` (from public inputs only)."""
    return _quantile_curve(epsilon, 0.0, 1, secure=True)


def estimate_data_norm(X, epsilon, rng, *, centre=None):
    """A private :data:`NORM_QUANTILE`-quantile of the row norms ‖x − centre‖₂ (ε-DP).

    The log2 of each row's norm (a norm of 0 counts as the grid's lowest
    point) goes to :func:`skdp.stats.quantile`'s exact base-2 exponential
    mechanism over the public grid of :data:`NORM_GRID_SIZE` points from
    2^-20 to 2^40 (Smith 2011's rank utility on a grid, sampled exactly as in
    Ilvento 2020; one row changes the utility by at most 1, so it is
    ``epsilon``-DP under add/remove-one-row). The caller has charged
    :func:`norm_estimate_curve` (``epsilon``). Returns the released grid
    point 2^g, a float > 0.
    """
    norms = np.empty(X.shape[0])
    for rows in row_blocks(X.shape[0]):  # no copy of X: temporaries of one block of rows
        B = np.asarray(X[rows], dtype=float)
        with np.errstate(over="ignore"):
            norms[rows] = np.linalg.norm(B if centre is None else B - centre, axis=1)
    with np.errstate(divide="ignore"):
        log_norms = np.log2(norms)
    lo, hi = NORM_GRID_LOG2
    log_norms = np.clip(np.nan_to_num(log_norms, nan=hi, posinf=hi, neginf=lo), lo, hi)
    g = _quantile_release(log_norms, NORM_QUANTILE, epsilon=epsilon, delta=0.0, bounds=(lo, hi),
                          axis=None, rng=rng, secure=True, grid_size=NORM_GRID_SIZE)
    return float(2.0 ** float(g))


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
