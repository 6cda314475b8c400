"""Differentially private ordinary least squares by sufficient-statistics perturbation."""

from __future__ import annotations

import math
import numbers
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve, calibrate_noise_multiplier, gaussian_rdp
from ..mechanisms import GaussianMechanism
from ..stats._range import _bounds_release, split_curve, split_curve_with_target
from ..utils import check_bounds, check_delta, check_epsilon
from ..utils._rows import check_lazy_X, is_lazy, lazy_rows, row_sums
from ..utils._validation import check_numeric_target, check_scalar, validate_data
from ._row_norm import RowClipper, box_centre_and_norm, check_data_norm

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPLinearRegression"]

# Failure probability ρ of the ridge bound of AdaSSP (Wang 2018, Alg. 2); only utility, never privacy.
_RIDGE_FAILURE_PROBABILITY = 0.05
# The ridge is AdaSSP's with its noise bound B scaled by a factor in [_RIDGE_SCALE, 1]
# (_ridge_scale). B bounds the spectral norm of the whole noise matrix with probability
# 1 − ρ, but a coefficient is blurred by the noise along its own direction, far less: on the
# six regression tables of benchmarks/bench_suite.py (5 seeds, ε = 0.1 to 5;
# docs/benchmarks.md, issue 26) a quarter of B raised R² at ε = 1 from 0.53 to 0.69
# (weather), 0.82 to 0.94 (diamonds), 0.37 to 0.65 (computers), 0.23 to 0.30 (gpa), 0.20 to
# 0.22 (loans), 0.27 to 0.28 (wage); a tenth of B overfitted the noise (diamonds at
# ε = 0.1: R² -0.9).
_RIDGE_SCALE = 0.25
# Where B is large next to the released count n (the scale of XᵀX's diagonal), the full
# bound: the factor is min(1, max(_RIDGE_SCALE, _RIDGE_COUNT_RATIO · B / n)), the full B
# from B = 0.4·n on. A quarter of B everywhere cost up to 0.03 of R² at ε = 0.1 (loans 0.10
# to 0.08, Wage 0.00 to -0.02, below the mean); with the count rule Wage is at 0.00 and
# loans at 0.11 there, and the tables of more than 10,000 rows keep a quarter of B.
_RIDGE_COUNT_RATIO = 2.5

# Refinement (see DPLinearRegression's Notes). The Gaussian part of the fit (all of ε, or
# what the private bounds leave) is one Gaussian of multiplier σ split in shares of 1/σ²,
# which compose to exactly that Gaussian (Dong, Roth & Su 2022, Cor. 3.3): the noisy Gram
# matrix gets _GRAM_SHARE, the histogram of the per-row gradient norms _SCALE_SHARE, and the
# refinement steps the rest, step t of T in proportion to t (later steps, nearer the
# solution, get less noise). Chosen on the six regression tables of
# benchmarks/bench_suite.py (5-10 seeds, ε = 0.05 to 5; docs/benchmarks.md,
# "DPLinearRegression: refined sufficient statistics"): on weather 8 steps beat 2 and 4
# (fewer were tried there only); 12 and 16 did better on weather (19,585 rows) and worse on
# diamonds at ε = 0.1 and on the tables of 2,000-5,000 rows; equal step shares scored up to
# 0.02 lower than shares growing with t. A Gram share of 0.3 (0.5 before) scored higher on
# Wage, gpa and loans at ε = 0.05 to 0.5 and, with the 128 steps below, on weather and
# diamonds at ε = 0.1 to 1; lower on Computers at ε = 0.2 (0.40 against 0.44, within the
# seeds' spread of 0.06-0.08) and on weather at ε = 0.05 (0.44 against 0.49).
_REFINE_STEPS = 8
_GRAM_SHARE = 0.3
_SCALE_SHARE = 0.05
# The long schedule of refine_steps="auto" (_step_plan): 128 steps with equal shares, a
# preconditioner ridge of at least _STEP_RIDGE_FACTOR times the Gram noise's scale s·√q,
# and the last half of the iterates averaged, where the released count n̂ is at least
# _LONG_FROM times σ. Measured on the six regression tables (10 seeds, ε = 0.05 to 2;
# docs/benchmarks.md, "DPLinearRegression: refined sufficient statistics"): on weather
# (temperature and dew point nearly collinear, the target resting on their difference,
# a direction the noisy Gram matrix cannot see: a step moves along it by about 1 %) 128
# steps raised test R² at ε = 0.1 / 0.2 / 0.5 from 0.70 / 0.84 / 0.95 (64 steps, Gram
# share 0.5) to 0.79 / 0.91 / 0.97, level with or above DPSGDRegressor (0.78 / 0.89 /
# 0.95); 96 steps reached 0.75 / 0.88 / 0.96 and 192 steps 0.80 / 0.93 / 0.97 but dropped
# diamonds at ε = 0.05 (0.78 against 0.86) and loans at 0.5 (0.21 against 0.22). On
# loans and Computers at ε = 0.5 64 steps scored 0.01-0.02 higher. With the solve's own
# ridge as preconditioner, 64 steps dropped diamonds at ε = 0.1 (0.87 against 0.91), and
# with a ridge of 3 s·√q they gained less on weather. Momentum (0.5 to 0.9) and a second
# clipping norm at the middle of the schedule were worse at ε = 0.1. Where n̂/σ was below
# 350 (the tables of 2,000-7,500 rows at ε <= 0.2, Wage and gpa at 0.5) the long schedule
# lost in most cells, up to 0.56 of R² (Wage at ε = 0.1); weather at ε = 0.1 has n̂/σ = 480.
_LONG_STEPS = 128
_LONG_FROM = 400.0
# ... unless every direction is seen: where the released XᵀX block's smallest eigenvalue is at
# least _SEEN_FROM times the Gram noise's scale 2·s·√q, every true curvature is above the noise
# (Weyl's inequality), the first solve is close and the 8 steps converge (each step's error
# shrinks by about the noise over the curvature). On well-conditioned synthetic tables
# (10 Gaussian columns, 2·10^4 to 10^6 rows, ε = 0.1 and 1, 8 seeds) the two schedules scored
# the same R² to 1e-5 wherever the ratio was 1.4 or more; on the six regression tables of the
# suite the ratio is below 0 in every fit (one-hot blocks and collinear columns), so they keep
# the long schedule. On a dask collection the short schedule is 10 passes instead of 130.
_SEEN_FROM = 4.0
_STEP_RIDGE_FACTOR = 2.0
# The clipping norm of a step's per-row gradients is this quantile of their noisy norms
# after the first solve, read on a public grid of powers of two: 0.7 beat 0.9 (weather at
# ε = 0.1: 0.57 against 0.47); 0.5 was level with it over the six tables (higher on gpa,
# lower on weather at ε = 0.5).
_GRADIENT_QUANTILE = 0.7
_GRADIENT_NORM_GRID = 2.0 ** np.arange(-12, 5)


def _gram_sensitivity(max_abs_X, max_abs_y, *, data_norm=math.inf, intercept=True):
    """L2 sensitivity of the upper triangle of ZᵀZ without its (y, y) entry.

    One row is z = (x, [1], y) (the 1 only with ``intercept``) with public
    constraints abs(x_j) <= m_j (``max_abs_X``; ``inf`` when there is no box),
    ||x||_2 <= D (``data_norm``) and |y| <= m_y (``max_abs_y``). Adding or
    removing the row changes the released vector by
    u = {z_j z_k : j <= k, (j, k) != (y, y)}. The release is the symmetric
    Gaussian perturbation of a Gram matrix ("Analyze Gauss", Dwork, Talwar,
    Thakurta & Zhang 2014, Alg. 1), used for regression by Sheffet 2017 and
    Wang 2018 (SSP/AdaSSP, Alg. 2); the bound below is derived here.

    Derivation. With t_j = z_j² >= 0, ||u||² = Σ_{j<=k} t_j t_k − t_y²
    = ((Σ t)² + Σ t²)/2 − t_y² =: f(t). f is nondecreasing in every t_j
    (∂f/∂t_j = Σ t + t_j >= 0, and ∂f/∂t_y = Σ t − t_y >= 0), so t_y = m_y²
    and the intercept's t = 1 are worst. For the x-part write S = Σ_x t_j and
    P = Σ_x t_j²; f increases with both, and t ranges over the polytope
    {0 <= t_j <= min(m_j², D²), S <= D²}. Let g be the greedy point: fill the
    coordinates in decreasing order of m_j² up to m_j² until the total D² is
    used. g maximises S (S(g) = min(D², Σ m_j²)) and, since the sum of the k
    largest entries of any feasible t is at most min(D², sum of the k largest
    m_j²) = that of g, g weakly submajorises every feasible t, so
    P(t) <= P(g) (Σ t² is convex and increasing on t >= 0; Marshall & Olkin,
    "Inequalities", 3.C.1.b). Hence

        Δ² = ((S(g) + c + m_y²)² + P(g) + c + m_y⁴) / 2 − m_y⁴,   c = [intercept],

    attained by x_j = ±sqrt(g_j), y = ±m_y whenever that row is allowed (always
    for boxes containing 0). Without ``data_norm`` (D = inf), g_j = m_j² and
    this is the box bound ((Σ m²)² + Σ m⁴)/2 − m_y⁴. Without a box, g puts D²
    on one coordinate: ((D² + c + m_y²)² + D⁴ + c + m_y⁴)/2 − m_y⁴.
    """
    t = np.minimum(np.asarray(max_abs_X, dtype=float) ** 2, float(data_norm) ** 2)
    t = np.sort(t)[::-1]
    used_before = np.concatenate([[0.0], np.cumsum(t)[:-1]])
    g = np.clip(float(data_norm) ** 2 - used_before, 0.0, t)
    c = 1.0 if intercept else 0.0
    t_y = float(max_abs_y) ** 2
    total = g.sum() + c + t_y
    squares = np.sum(g**2) + c + t_y**2
    return math.sqrt(max((total**2 + squares) / 2.0 - t_y**2, 0.0))


def _clipped_design(X, y, *, clipper, bounds_y, centre, scale, fit_intercept):
    """Z = (x', [1], y') per row: x' = ``clipper.centred(x)``, y' the mapped target.

    ``clipper`` (a :class:`~skdp.linear_model._row_norm.RowClipper`) clips x
    to the box, subtracts its centre and scales the offset down to its norm
    bound; so every row has abs(x'_j) <= m_j and ||x'|| <= data_norm, the
    constraints ``_gram_sensitivity`` uses. The target is clipped to
    ``bounds_y`` and mapped to y' = (y − centre) / scale; the final clip to
    that map's image of the bounds only removes rounding.
    """
    X = clipper.centred(X)
    lower_y, upper_y = bounds_y
    max_abs_y = max(abs(lower_y - centre), abs(upper_y - centre)) / scale
    y = np.clip((np.clip(y, lower_y, upper_y) - centre) / scale, -max_abs_y, max_abs_y)
    columns = [X, np.ones((X.shape[0], 1))] if fit_intercept else [X]
    return np.hstack(columns + [y[:, None]])


def _design_gram(X, y, **design):
    """ZᵀZ of the rows of the block (X, y), Z from :func:`_clipped_design`.

    The block function of the fit's pass (:func:`skdp.utils._rows.row_sums`):
    on the whole arrays in memory, on each chunk of rows of dask arrays.
    """
    Z = _clipped_design(X, y, **design)
    return Z.T @ Z


def _design_rows(X, y, *, clipper, bounds_y, centre, scale, fit_intercept):
    """``(Z, y')``: the design rows (x', [1]) and the mapped target of :func:`_clipped_design`."""
    Z = _clipped_design(X, y, clipper=clipper, bounds_y=bounds_y, centre=centre, scale=scale,
                        fit_intercept=fit_intercept)
    return Z[:, :-1], Z[:, -1]


def _gradient_norm_counts(X, y, *, theta, **design):
    """Counts of the rows' least-squares gradient norms ‖z‖·|y' − zθ| on the public grid.

    Bin k holds the norms in (grid[k-1], grid[k]] (bin 0 those up to grid[0],
    the last those above grid[-1]). One row is in one bin: the counts have L2
    sensitivity 1. A block function of :func:`skdp.utils._rows.row_sums`.
    """
    Z, target = _design_rows(X, y, **design)
    norms = np.abs(target - Z @ theta) * np.linalg.norm(Z, axis=1)
    bins = np.searchsorted(_GRADIENT_NORM_GRID, norms)
    return np.bincount(bins, minlength=_GRADIENT_NORM_GRID.size + 1).astype(float)


def _clipped_gradient_sum(X, y, *, theta, clip, **design):
    """Σ_i g_i, each row's gradient g_i = z_i (y'_i − z_i θ) scaled down to L2 norm ``clip``.

    Adding or removing a row moves the sum by at most ``clip`` in L2 (per-row
    clipping as in Abadi et al. 2016, Alg. 1). A block function of
    :func:`skdp.utils._rows.row_sums`.
    """
    Z, target = _design_rows(X, y, **design)
    return _gradient_sum_of_rows(Z, target, np.linalg.norm(Z, axis=1), theta=theta, clip=clip)


def _gradient_sum_of_rows(Z, target, row_norms, *, theta, clip):
    """:func:`_clipped_gradient_sum` on the design rows ``Z`` (norms ``row_norms``) and ``target``.

    In memory the fit builds the design once and calls this at every step.
    """
    residual = target - Z @ theta
    norms = np.abs(residual) * row_norms
    with np.errstate(divide="ignore"):
        residual *= np.minimum(1.0, clip / norms)
    return Z.T @ residual


def _gradient_clip(counts):
    """The grid point at which the noisy counts' cumulative share reaches the quantile.

    Post-processing of the released counts: negative noisy counts count as 0;
    with no mass at all, the top of the grid.
    """
    mass = np.cumsum(np.maximum(counts, 0.0))
    if mass[-1] <= 0:
        return float(_GRADIENT_NORM_GRID[-1])
    k = int(np.searchsorted(mass / mass[-1], _GRADIENT_QUANTILE))
    return float(_GRADIENT_NORM_GRID[min(k, _GRADIENT_NORM_GRID.size - 1)])


def _step_shares(n_steps):
    """The shares of 1/σ² of the refinement steps: ∝ t for step t = 1..T, summing to 1."""
    weights = np.arange(1, n_steps + 1, dtype=float)
    return weights / weights.sum()


def _step_plan(refine_steps, gram, eigenvalues, ridge, noise_std, sigma, fit_intercept):
    """``(shares, step_ridge, n_averaged)``: the refinement's schedule (see Notes).

    A function of public parameters and the released Gram matrix only
    (``eigenvalues``: those of its XᵀX block, ascending). An
    int ``refine_steps`` T is the short schedule: T steps with shares of 1/σ²
    ∝ t, the solve's own ridge λ in the steps' preconditioner, and the last
    iterate. ``"auto"`` is the short schedule with 8 steps, or, where the
    released count n̂ (the intercept's diagonal entry) is at least
    ``_LONG_FROM`` times the fit's multiplier σ, the long one:
    ``_LONG_STEPS`` steps with equal shares, the preconditioner's ridge
    h = max(λ, 2·s·√q), s the std of each noisy entry of the q × q Gram
    matrix (2·s·√q is about the spectral norm of its symmetric noise,
    Bandeira & van Handel 2016, Thm. 1.1, so the preconditioner stays above
    the true curvature and no step overshoots), and the mean of the last
    half of the iterates (Polyak & Juditsky 1992). Without an intercept no
    count is released: the short schedule. Nor is the long schedule taken
    where the released matrix's smallest eigenvalue is at least
    ``_SEEN_FROM`` times 2·s·√q: there every direction's curvature stands
    above the noise, and the short schedule converges.
    """
    if refine_steps != "auto":
        return _step_shares(refine_steps), ridge, 1
    q = gram.shape[0] - 1
    noise_scale = _STEP_RIDGE_FACTOR * noise_std * math.sqrt(q)
    if (fit_intercept and float(gram[q - 1, q - 1]) >= _LONG_FROM * sigma
            and float(eigenvalues[0]) < _SEEN_FROM * noise_scale):
        step_ridge = max(ridge, noise_scale)
        return np.full(_LONG_STEPS, 1.0 / _LONG_STEPS), step_ridge, _LONG_STEPS // 2
    return _step_shares(_REFINE_STEPS), ridge, 1


def _perturbed_gram(gram, mechanism, rng):
    """``gram`` (ZᵀZ, :func:`_design_gram`) plus symmetric noise of ``mechanism`` (or none).

    The upper triangle gets i.i.d. noise and the lower triangle mirrors it
    (Dwork et al. 2014, Alg. 1), so each released number is noised once. The
    (y, y) entry (last row and column) is neither needed nor released: it is
    set to 0.
    """
    gram = np.array(gram, dtype=float)  # a copy: the (y, y) entry is overwritten
    q = gram.shape[0]
    if mechanism is not None:
        noise = np.zeros((q, q))
        rows, cols = np.triu_indices(q)
        noise[rows, cols] = mechanism.sample_noise(rows.size, random_state=rng)
        noise = noise + np.triu(noise, 1).T
        gram = gram + noise
    gram[-1, -1] = 0.0
    return gram


def _psd_solver(spectrum, ridge):
    """The map b ↦ θ solving (P(A) + ridge·I) θ = b, P(A) clipping A's eigenvalues at 0.

    ``spectrum`` is ``scipy.linalg.eigh(A)``: A is decomposed once, for the
    ridge, the schedule, the first solve and every refinement step.
    The noisy Gram matrix A may be indefinite. Projecting it on the PSD cone
    (clipping negative eigenvalues, the nearest PSD matrix in Frobenius norm,
    Higham 1988, Thm. 2.1) and adding the ridge keeps the problem convex.
    Eigenvalues below a relative tolerance count as zero (a pseudo-inverse),
    so a singular problem gets the minimum-norm solution, like
    :func:`scipy.linalg.lstsq`.
    """
    w, V = spectrum
    w = np.maximum(w, 0.0) + ridge
    tol = max(w.max(initial=0.0), 0.0) * w.size * np.finfo(float).eps
    inv = np.zeros_like(w)
    keep = w > tol
    inv[keep] = 1.0 / w[keep]
    return lambda b: V @ (inv * (V.T @ b))


def _ridge_scale(noise_bound, gram, n_features, fit_intercept):
    """The factor of AdaSSP's noise bound B in the automatic ridge, in [_RIDGE_SCALE, 1].

    A quarter of B where the released count n (the intercept's diagonal
    entry of the noisy Gram matrix: post-processing) is large next to B,
    the full B where B >= n / _RIDGE_COUNT_RATIO, linear in B/n between.
    Without an intercept no count is released: a quarter of B.
    """
    if not fit_intercept:
        return _RIDGE_SCALE
    count = max(float(gram[n_features, n_features]), 1.0)
    return min(1.0, max(_RIDGE_SCALE, _RIDGE_COUNT_RATIO * noise_bound / count))


def _adaptive_ridge(eigenvalues, noise_bound):
    """AdaSSP's ridge max(0, B − λ̃_min), with λ̃_min read from the released noisy XᵀX.

    Wang 2018 (Alg. 2) adds λ = max(0, B − λ̃_min) where B bounds the noise's
    spectral norm with probability 1 − ρ and λ̃_min is a private lower bound
    on λ_min(XᵀX), released with its own share of ε. Here λ̃_min comes from
    the noisy matrix A = XᵀX + E already released: by Weyl's inequality
    λ_min(XᵀX) >= λ_min(A) − ‖E‖ >= λ_min(A) − B on the same event, so
    λ̃_min = max(0, λ_min(A) − B) costs no privacy (post-processing). A well
    conditioned XᵀX (large n) gets a ridge that falls to 0, instead of the
    data-independent B. ``eigenvalues`` are A's, ascending.
    """
    lam_min = float(eigenvalues[0]) if eigenvalues.size else 0.0
    return max(0.0, noise_bound - max(0.0, lam_min - noise_bound))


class DPLinearRegression(DPEstimatorMixin, RegressorMixin, BaseEstimator):
    """Ordinary least squares with (ε, δ)-differential privacy.

    Sufficient-statistics perturbation (Sheffet 2017; Wang 2018, "Revisiting
    differentially private linear regression", AdaSSP): one Gaussian release of
    the statistics XᵀX, Xᵀy (and, with an intercept, the count n and the
    column sums) and a least-squares solve, then a few noisy Newton steps on
    clipped gradients that use the released XᵀX as their Hessian.

    The fit charges the budget once, with the Gaussian curve of (``epsilon``,
    ``delta``); without public bounds, half of ε releases private ones in the
    same charge. Notes give the clipping, the sensitivity, the ridge and the
    refinement steps.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
        ε of the fit. ``inf`` adds no noise and charges
        :meth:`RDPCurve.non_private <skdp.accounting.RDPCurve.non_private>`.
    delta : float in (0, 1), default=1e-5
        δ of the fit.
    bounds_X : tuple (lower, upper) or None, default=None
        Public bounds on the features: scalars or arrays of shape
        (n_features,); never read from the data. Giving both ``bounds_X`` and
        ``data_norm`` is best when both are known. With neither, the fit
        releases private bounds first (see **Without public bounds**).
    bounds_y : tuple (lower, upper) or None, default=None
        Public bounds on the target. ``None``: released privately with the
        features' (see **Without public bounds**).
    data_norm : float > 0 or None, default=None
        Public bound on the L2 norm of a row of X (after the box clip). Rows
        with a larger norm are scaled down to it, at fit and at predict.
        None: the bound implied by ``bounds_X`` (around its midpoint with an
        intercept). With all the columns of
        :func:`skdp.datasets.adult_preprocessor` use
        ``adult_schema()["max_row_norm"]`` (√14); with one numeric column
        taken out as the target, √13.
    fit_intercept : bool, default=True
        Fit an intercept, as an extra column of ones in the design.
    ridge : "auto" or float >= 0, default="auto"
        The ridge λ added to the noisy XᵀX (see Notes): "auto" is a function
        of public parameters and the released noisy matrix only. It shrinks
        the coefficients towards 0 and the intercept towards the noisy mean
        of the target.
    refine_steps : "auto" or int >= 0, default="auto"
        Noisy refinement steps after the first solve (see **Refinement**);
        0 is plain sufficient-statistics perturbation (AdaSSP). "auto" takes
        8 steps, or 128 on a longer schedule where the released statistics
        say they pay. The steps share the fit's ε with the first solve: the
        charge does not change.
    budget : PrivacyBudget or None, default=None
        The shared budget to charge.
    random_state : int, numpy Generator or None, default=None
        Source of the noise; ``None`` draws OS entropy.
    secure : bool, default=False
        Draw every random number of the fit from the operating system's
        CSPRNG instead of numpy's generator; ``random_state`` must then be
        None. See :ref:`secure_randomness`.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    noise_multiplier_ : float
        σ (``0.0`` when ``epsilon=inf``).
    sensitivity_ : float
        Δ, the L2 sensitivity of the released statistics (of the mapped
        target y').
    ridge_ : float
        λ used in the solve.
    gradient_clip_ : float or None
        The L2 norm the refinement clips each row's gradient to (on the
        scale of the mapped target, a power of two); None without
        refinement steps.
    n_refine_steps_ : int
        The refinement steps taken (0, ``refine_steps``, or with "auto" 8
        or 128).
    data_norm_ : float
        The norm to which rows (centred at the box's midpoint when it comes
        from ``bounds_X``) are scaled at fit and predict.
    bounds_X_ : tuple of two ndarrays or None
        The box rows are clipped to: ``bounds_X``, the private estimate, or
        ``None`` (``data_norm`` alone).
    bounds_y_ : tuple of two floats
        The bounds the target is clipped to: ``bounds_y`` or the private
        estimate.
    privacy_curve_, epsilon_spent_, delta_spent_
        What the fit charged; see :class:`skdp._base.DPEstimatorMixin`.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string feature names.

    Notes
    -----
    **Clipping, at fit and at predict.** Each row is first clipped to the
    public box ``bounds_X`` (values outside it are moved to the nearest
    bound); then, when ``data_norm`` is given, scaled down to L2 norm at most
    ``data_norm`` (:func:`~skdp.linear_model._row_norm.clip_row_norms`,
    shared with :class:`DPLogisticRegression`). Without ``data_norm`` the
    norm bound comes from the box itself: with ``fit_intercept`` rows are
    centred at the box's midpoint (the intercept absorbs the shift; the
    coefficients are reported on the original scale), so every entry is
    within the half-width m_j = (upper_j − lower_j)/2 and the norm within
    ‖m‖₂: on a unit box m_j = 1/2 instead of 1, and the sensitivity (about
    ‖m‖²) falls about 4-fold. Either ``bounds_X`` or ``data_norm`` may be
    omitted; without both, the box is released privately (below). The target is clipped to ``bounds_y``. ``predict``
    and ``score`` apply the same row map (``data_norm_`` is the norm used),
    so the model is never applied to rows unlike its training rows. Clipping
    is silent per row; how many rows were clipped is never released.

    **Without public bounds.** Where neither ``bounds_X`` nor ``data_norm``
    is given, or ``bounds_y`` is not, the fit first releases private bounds of
    those columns (:func:`skdp.stats.bounds`: one noisy histogram per column
    over a public log-scale grid, so each range is within a factor 2 of the
    data's) with half of ε, and the Gram release gets the largest ε that
    keeps the composed curve at (ε, δ) (``split_curve``); both are in the
    fit's one charge. Where both are estimated, the target's histogram is
    released alone with a quarter of that half (``split_curve_with_target``):
    in one release with the features its counts would carry the noise of
    every column. The target's range is never a single point, and is widened
    where a neighbouring bin holds a large noisy share of the rows (see
    :mod:`skdp.stats._range`); where no bin stands out of the noise the fit
    warns (:class:`~skdp.NoisyEstimateWarning`). The row map, the target map
    and the sensitivity are then
    functions of the released bounds (``bounds_X_``, ``bounds_y_``). Public
    bounds, known from the data's meaning, stay the better choice: they cost
    nothing and are often tighter. At ``epsilon=inf`` the exact ranges are
    used (nothing is private), which gives scikit-learn's least squares.

    **Target scale.** The clipped target is mapped to [−1, 1] by its public
    bounds, y' = (y − mid)/half_range (with ``fit_intercept=False``, where no
    intercept can absorb a shift, y' = y / max|bound|), and the fitted
    coefficients are mapped back. Without noise this is an exact
    reparametrisation. With noise it fixes the split of the one Gaussian
    release between the XᵀX block and the Xᵀy block: scaling y by w is the
    same as giving the Xᵀy entries noise w times smaller relative to their
    signal, for a larger joint sensitivity. Centring shrinks m_y, which
    lowers the sensitivity. On a 75/25 split of Adult's training file
    (hours-per-week from the other 104 columns, δ = 1e-5, 5 seeds), mapping
    y from [0, 1] to [−1, 1] raised R² from −0.16 / 0.110 / 0.172 to
    0.035 / 0.136 / 0.175 at ε = 0.1 / 1 / 5; [−2, 2] and [−5.5, 5.5] gave
    the same within the seeds' noise, [−0.25, 0.25] was worse.

    **Sensitivity.** Let z = (x, 1, y') be one clipped row (the 1 only with
    ``fit_intercept``). The released vector is the upper triangle of ZᵀZ
    without the unused y'ᵀy' entry; under add/remove-one-row adjacency its L2
    sensitivity Δ is the maximum of ||upper triangle of zzᵀ|| over the rows
    allowed by the box and ``data_norm`` (derived in ``_gram_sensitivity``;
    with a box only, Δ = sqrt(((Σ m_j²)² + Σ m_j⁴)/2 − m_y⁴)). On one-hot data
    the box alone is loose: predicting hours-per-week from the other 104
    columns of :func:`skdp.datasets.adult_preprocessor` (all in [0, 1]), the
    box centred at its midpoint gives ||x'||² <= 104/4 (Δ = 19.9), while an
    uncentred row has ||x||² <= 13 (8 one-hot blocks with at most one 1,
    5 numeric columns): with ``data_norm=sqrt(13)`` Δ falls to 10.9, and
    the noise with it. (Where the rows are dense, the centred box is the
    better bound.)
    Every released entry gets Gaussian noise of std σΔ, with the noise
    multiplier σ calibrated so that the Gaussian RDP curve (Mironov 2017,
    Prop. 7) gives (``epsilon``, ``delta``)-DP. The fit charges ``budget``
    once with that curve.

    **Solve.** The noisy Gram matrix can be indefinite: its eigenvalues are
    clipped at 0 (the nearest PSD matrix) and a ridge λ is added.
    ``ridge="auto"`` is AdaSSP's ridge (Wang 2018, Alg. 2)
    λ = max(0, B − λ̃_min) with its noise bound scaled by a factor f:
    B = f·σΔ·sqrt(q·log(2q²/ρ)) (q the size of the Gram matrix, ρ = 0.05;
    with f = 1, B bounds the noise's spectral norm with probability
    1 − ρ), and λ̃_min = max(0, λ_min(noisy XᵀX) − B) (with f = 1, a
    lower bound on λ_min(XᵀX) on the same event by Weyl's inequality), read
    from the released matrix instead of AdaSSP's separate release, so it
    costs no budget (``_adaptive_ridge``). The full bound over-shrank: a
    coefficient is blurred by the noise along its own direction, not by the
    noise's norm. f is 1/4 where the released count n is large next to the
    full bound, and grows to 1 where the full bound reaches 0.4·n
    (``_ridge_scale``, post-processing of the released count); on six
    regression tables this raised R² at ε = 1 by up to 0.28 and kept the
    small tables at or above the mean at ε = 0.1 (docs/benchmarks.md,
    "Regression defaults on small tables"). A singular XᵀX (one-hot columns) gets λ = B;
    a well-conditioned one at large n gets less, down to 0, so the fit does
    not over-shrink where the data outweigh the noise. The ridge shrinks the
    coefficients towards 0 and the intercept towards the noisy mean of the
    target (Σy'/n from the released statistics; the solve is
    (P(A) + λI)θ = b + λθ₀, θ₀ that intercept alone): where the noise
    shrinks the coefficients to 0 the fit falls back to that mean, not to
    the midpoint of ``bounds_y``, which on a loose or private range can be
    far from it (on ISLR's Wage at ε = 0.1, the midpoint 160 of (64, 256)
    against a mean of 112). Leaving the intercept unshrunk did as well with
    the defaults but worse with ``data_norm``, where uncentred one-hot
    blocks are collinear with the intercept's column.
    With ``epsilon=inf`` there is no noise, λ = 0 and the result is
    scikit-learn's :class:`~sklearn.linear_model.LinearRegression` on the
    clipped rows (on any data inside the bounds and ``data_norm``).

    **Refinement.** One noisy XᵀX alone blurs a model whose coefficients
    rest on nearly collinear columns, and its Xᵀy carries noise on the
    scale of the target's whole range. So after the solve above, the fit
    takes ``refine_steps`` noisy Newton steps with the released matrix as
    the Hessian: each step releases the sum of the rows' least-squares
    gradients z(y' − zθ), each scaled down to the L2 norm C, with Gaussian
    noise of std ∝ C (sensitivity C under add/remove-one-row, as in DP-SGD,
    Abadi et al. 2016), and moves θ by (P(A) + λI)⁻¹ of it. The residuals
    shrink as θ improves, so C, the 0.7 quantile of the gradient norms at
    the first solution, read from a noisy histogram on a public grid of
    powers of two (counts of sensitivity 1), is far below the target's
    range that scales the noise of Xᵀy. The parts are Gaussians whose
    shares of 1/σ² add up to one: the matrix 0.3, the histogram 0.05, the
    steps the rest, step t in proportion to t. Gaussians compose exactly
    (Dong, Roth & Su 2022, Cor. 3.3), so the charge is the same as without
    steps. With ``ridge="auto"`` the steps descend the least-squares loss
    (the ridge only steadies the released Hessian); with a float ``ridge``
    they descend the ridge objective. Without steps (``refine_steps=0``)
    this is AdaSSP. Each step is one more pass over the rows.

    **How many steps.** Where a direction's curvature (an eigenvalue of
    XᵀX) is below the Gram noise's spectral norm, the released matrix cannot
    see it and a step moves along it by a fraction λ/(λ + ridge) only; on
    weather the target rests on such a direction (the difference of
    temperature and dew point). ``refine_steps="auto"`` then takes a long
    schedule: 128 steps with equal shares of the steps' 1/σ², the
    preconditioner's ridge raised to at least 2·s·√q, s the std of each
    noisy entry (about the spectral norm of the symmetric noise, so no step
    overshoots), and the mean of the last 64 iterates (Polyak & Juditsky
    1992). It does so where the released count n̂ is at least 400 times
    the fit's noise multiplier σ and the released matrix's smallest
    eigenvalue is below 4·2·s·√q (``_step_plan``), else it takes the 8
    steps above: with few rows no direction is resolved and 128 steps add
    128 times the noise of one; with every eigenvalue above the noise the
    8 steps converge (on 10 well-conditioned columns from 2·10^4 rows, the
    same R² to 1e-5). The number of steps and their noise are thus chosen from
    a release, with their 1/σ² still adding up to the same total: fully
    adaptive composition of Gaussian DP (Smith & Thakurta 2022; Whitehouse
    et al. 2023) keeps the charge. On the suite's six regression tables
    the long schedule (with the Gram matrix's share at 0.3) raised
    weather's test R² at ε = 0.1 / 0.2 / 0.5 from 0.57 / 0.71 / 0.87
    (8 steps) to 0.79 / 0.91 / 0.97, level with or above
    :class:`~skdp.linear_model.DPSGDRegressor` (0.78 / 0.89 / 0.95), and
    diamonds' at ε = 1 from 0.961 to 0.975; the tables of 2,000–7,500 rows
    keep 8 steps at ε <= 0.2 (docs/benchmarks.md, "DPLinearRegression:
    refined sufficient statistics").

    **When to prefer DP-SGD.** On the tables of 2,000–3,000 rows at
    ε <= 0.5 :class:`~skdp.linear_model.DPSGDRegressor` can score higher.
    Each refinement step is one pass over the rows: on a dask collection
    the long schedule is 128 passes, against DP-SGD's epochs.

    Floating-point noise is attackable when noisy values are released
    directly (Mironov 2012); here only the solved coefficients are released.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model import DPLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 2))
    >>> y = np.clip(X @ [1.0, -2.0] + 0.5 + rng.normal(0, 0.1, 20000), -4, 4)
    >>> reg = DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-4, 4),
    ...                          random_state=0).fit(X, y)
    >>> np.round(reg.coef_, 1), round(float(reg.intercept_), 1)
    (array([ 1., -2.]), 0.5)
    >>> round(reg.epsilon_spent_, 6)
    1.0

    A public bound on the row norm alone (here ||x|| <= sqrt(2)) also works:

    >>> reg = DPLinearRegression(epsilon=1.0, data_norm=np.sqrt(2), bounds_y=(-4, 4),
    ...                          random_state=0).fit(X, y)
    >>> np.round(reg.coef_, 1), round(float(reg.intercept_), 1)
    (array([ 1., -2.]), 0.5)

    Without any bounds, half of ε goes to private ones (powers of two):

    >>> reg = DPLinearRegression(epsilon=1.0, random_state=0).fit(X, y)
    >>> reg.bounds_y_
    (-4.0, 4.0)
    >>> np.round(reg.coef_, 1)
    array([ 1., -2.])
    """

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        bounds_X: ArrayLike | None = None,
        bounds_y: ArrayLike | None = None,
        data_norm: float | None = None,
        fit_intercept: bool = True,
        ridge: float | str = "auto",
        refine_steps: int | str = "auto",
        budget: PrivacyBudget | None = None,
        random_state: RandomStateLike = None,
        secure: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        self.ridge = ridge
        self.refine_steps = refine_steps
        self.budget = budget
        self.random_state = random_state
        self.secure = secure

    def _check_params(self, n_features):
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta, allow_zero=False)
        data_norm = None if self.data_norm is None else check_data_norm(self.data_norm)
        if self.bounds_X is None:
            bounds_X = None
        else:
            bounds_X = check_bounds(self.bounds_X, n_features, name="bounds_X")
        if self.bounds_y is None:
            bounds_y = None
        else:
            (lower_y,), (upper_y,) = check_bounds(self.bounds_y, 1, name="bounds_y")
            bounds_y = (float(lower_y), float(upper_y))
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be a bool; got {self.fit_intercept!r}.")
        ridge = self.ridge
        if not (isinstance(ridge, str) and ridge == "auto"):
            if isinstance(ridge, (bool, np.bool_)) or not isinstance(ridge, numbers.Real):
                raise ValueError(f'ridge must be "auto" or a float >= 0; got {ridge!r}.')
            if not (math.isfinite(float(ridge)) and float(ridge) >= 0):
                raise ValueError(f'ridge must be "auto" or a finite float >= 0; got {ridge!r}.')
        refine_steps = self.refine_steps
        if not (isinstance(refine_steps, str) and refine_steps == "auto"):
            if isinstance(refine_steps, str):
                raise ValueError(f'refine_steps must be "auto" or an int >= 0; got '
                                 f'{refine_steps!r}.')
            refine_steps = check_scalar(refine_steps, "refine_steps", int, min_val=0)
        return epsilon, delta, bounds_X, data_norm, bounds_y, refine_steps

    def fit(self, X: ArrayLike, y: ArrayLike) -> DPLinearRegression:
        """Fit the private linear model; charges the budget once.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        # (1) validate parameters and input: shapes, dtypes and finiteness only.
        if is_lazy(X):  # a dask array or DataFrame: sums on the workers (skdp.utils._rows)
            X, y = check_lazy_X(self, X, y)
        else:
            X, y = validate_data(self, X, check_numeric_target(y), y_numeric=True,
                                 dtype=np.float64)
        epsilon, delta, bounds_X, data_norm, bounds_y, refine_steps = self._check_params(
            X.shape[1])
        rng = self._check_generator()
        # Without public bounds (the box or a norm for X, and bounds_y), the fit releases
        # private ones first (skdp.stats.bounds), with a share of epsilon, in its one charge.
        estimate_X = bounds_X is None and data_norm is None
        estimate_y = bounds_y is None
        estimate = estimate_X or estimate_y

        if not estimate:  # the row map and the sensitivity from the public bounds
            design = self._design(bounds_X, data_norm, bounds_y, X.shape[1])

        # (2) the curve, from public parameters alone.
        if epsilon == math.inf:
            sigma, curve = 0.0, RDPCurve.non_private()
            eps_X = eps_y = math.inf
        elif estimate:
            def stat_curve(e):
                return gaussian_rdp(calibrate_noise_multiplier(e, delta, accountant="rdp"))

            if estimate_X and estimate_y:  # the target's histogram is released alone
                eps_X, eps_y, stat_epsilon, curve = split_curve_with_target(
                    epsilon, delta, X.shape[1], stat_curve)
            else:
                eps_bounds, stat_epsilon, curve = split_curve(
                    epsilon, delta, X.shape[1] if estimate_X else 1, stat_curve)
                eps_X = eps_y = eps_bounds
            sigma = float(calibrate_noise_multiplier(stat_epsilon, delta, accountant="rdp"))
        else:
            sigma = float(calibrate_noise_multiplier(epsilon, delta))
            curve = gaussian_rdp(sigma)

        # (3) charge once; a refusal raises before any value is read.
        self._charge_budget(curve)

        # (4) only now read the values: first the private bounds, if any (at epsilon=inf
        # the exact ranges); the row map and the sensitivity are functions of them.
        if estimate:
            if estimate_X:
                bounds_X = _bounds_release(X, epsilon=eps_X, delta=delta, rng=rng)
            if estimate_y:
                (lower_y,), (upper_y,) = _bounds_release(y[:, None], epsilon=eps_y, delta=delta,
                                                         rng=rng, n_targets=1)
                bounds_y = (float(lower_y), float(upper_y))
            design = self._design(bounds_X, data_norm, bounds_y, X.shape[1])
        clipper, centre, scale, sensitivity = design
        if epsilon == math.inf or sensitivity == 0:  # Δ = 0: private bounds left every row 0
            mechanism, noise_std, n_steps = None, 0.0, 0
        else:
            # The Gaussian of multiplier sigma, whose curve is charged above, at the
            # sensitivity of the rows as clipped; with refinement steps the Gram matrix
            # gets _GRAM_SHARE of 1/sigma² and the steps the rest (_refine).
            n_steps = refine_steps
            gram_sigma = sigma / math.sqrt(_GRAM_SHARE) if n_steps != 0 else sigma
            mechanism = GaussianMechanism(noise_multiplier=gram_sigma, sensitivity=sensitivity)
            noise_std = mechanism.sigma
        q = X.shape[1] + int(bool(self.fit_intercept))  # size of the Gram matrix of the design
        # A bound, with probability 1 − ρ, on the spectral norm of the noise of
        # the XᵀX block (the noise-dependent term of AdaSSP's ridge, Wang 2018, Alg. 2).
        noise_bound = noise_std * math.sqrt(q * math.log(2 * q**2 / _RIDGE_FAILURE_PROBABILITY))
        # one pass over the rows: ZᵀZ, in memory or summed over dask chunks on the workers
        rows = dict(clipper=clipper, bounds_y=bounds_y, centre=centre, scale=scale,
                    fit_intercept=bool(self.fit_intercept))
        exact = row_sums(partial(_design_gram, **rows), X, y)
        gram = _perturbed_gram(exact, mechanism, rng)
        # The released XᵀX block, decomposed once for the ridge, the schedule and every solve.
        spectrum = linalg.eigh(gram[:-1, :-1])
        if self.ridge == "auto":
            noise_bound *= _ridge_scale(noise_bound, gram, X.shape[1], bool(self.fit_intercept))
            ridge = _adaptive_ridge(spectrum[0], noise_bound)
        else:
            ridge = float(self.ridge)
        # The ridge shrinks the coefficients towards 0 and the intercept towards the noisy
        # mean Σy'/n of the released statistics (not towards 0, the midpoint of bounds_y):
        # minimising θᵀAθ − 2bᵀθ + λ‖θ − θ₀‖² gives (A + λI)θ = b + λθ₀.
        target = np.zeros(q)
        if self.fit_intercept:
            d = X.shape[1]
            target[d] = gram[d, -1] / max(float(gram[d, d]), 1.0)
        solve = _psd_solver(spectrum, ridge)
        theta = solve(gram[:-1, -1] + ridge * target)
        n_taken, clip = 0, None
        if n_steps != 0:
            # How many steps, their shares and preconditioner: post-processing of the release.
            shares, step_ridge, n_averaged = _step_plan(n_steps, gram, spectrum[0], ridge,
                                                        noise_std, sigma, bool(self.fit_intercept))
            if step_ridge != ridge:
                solve = _psd_solver(spectrum, step_ridge)
            theta, clip = self._refine(X, y, theta, solve, shares, sigma, rows, rng,
                                       ridge=None if self.ridge == "auto" else (ridge, target),
                                       n_averaged=n_averaged)
            n_taken = shares.size

        n_features = X.shape[1]
        self.coef_ = theta[:n_features] * scale
        self.intercept_ = float(theta[n_features] * scale + centre) if self.fit_intercept else 0.0
        if clipper.centre is not None:  # w·(x − c) + b = w·x + (b − w·c)
            self.intercept_ = float(self.intercept_ - self.coef_ @ clipper.centre)
        self.noise_multiplier_ = sigma
        self.sensitivity_ = sensitivity
        self.ridge_ = ridge
        self.gradient_clip_ = clip
        self.n_refine_steps_ = n_taken
        self.data_norm_ = clipper.data_norm
        self.bounds_X_ = bounds_X
        self.bounds_y_ = bounds_y
        self._clipper = clipper
        return self

    def _refine(self, X, y, theta, solve, shares, sigma, rows, rng, *, ridge, n_averaged):
        """``(θ, clip)``: noisy preconditioned steps from the first solve ``theta``; see Notes.

        Each step releases the sum of the rows' clipped least-squares
        gradients with Gaussian noise, and moves θ by ``solve`` of it (a
        Newton step with the released Hessian). Step t gets ``shares[t]`` of
        the steps' part of 1/σ². With a public ``ridge=(λ, θ₀)`` the step
        follows the ridge objective's gradient instead (its term λ(θ − θ₀) is
        public given θ). θ is the mean of the last ``n_averaged`` iterates.
        """
        # The clipping norm: the quantile of a noisy histogram of the gradient norms at
        # theta (counts of L2 sensitivity 1), with _SCALE_SHARE of 1/sigma².
        counts = row_sums(partial(_gradient_norm_counts, theta=theta, **rows), X, y)
        counts = counts + GaussianMechanism(
            noise_multiplier=sigma / math.sqrt(_SCALE_SHARE), sensitivity=1.0,
        ).sample_noise(counts.size, random_state=rng)
        clip = _gradient_clip(counts)
        rest = 1.0 - _GRAM_SHARE - _SCALE_SHARE
        # The number of steps and their shares are functions of the released Gram matrix;
        # their 1/σ_t² still add up to rest/σ², which fully adaptive composition of Gaussian
        # DP allows (Smith & Thakurta 2022; Whitehouse et al. 2023).
        if is_lazy(X):  # one pass over the chunks per step
            def gradient_sum(theta):
                return row_sums(partial(_clipped_gradient_sum, theta=theta, clip=clip, **rows),
                                X, y)
        else:  # in memory, the design rows are built once for all the steps
            Z, target = _design_rows(X, y, **rows)
            gradient_sum = partial(_gradient_sum_of_rows, Z, target, np.linalg.norm(Z, axis=1),
                                   clip=clip)
        tail = []
        for t, share in enumerate(rest * shares):
            gradient = gradient_sum(theta=theta)
            # Σ of gradients clipped to `clip`: L2 sensitivity `clip` (Abadi et al. 2016)
            gradient = gradient + GaussianMechanism(
                noise_multiplier=sigma / math.sqrt(share), sensitivity=clip,
            ).sample_noise(theta.size, random_state=rng)
            if ridge is not None:
                lam, centre = ridge
                gradient = gradient - lam * (theta - centre)
            theta = theta + solve(gradient)
            if t >= shares.size - n_averaged:
                tail.append(theta)
        return np.mean(tail, axis=0), clip

    def _design(self, bounds_X, data_norm, bounds_y, n_features):
        """``(row clipper, target centre, target scale, sensitivity)`` from the bounds."""
        clipper, max_abs_X = self._row_clipper(bounds_X, data_norm, n_features)
        lower_y, upper_y = bounds_y
        # The target's map onto [-1, 1]: y' = (y - centre) / scale.
        if self.fit_intercept:
            centre, scale = (lower_y + upper_y) / 2.0, (upper_y - lower_y) / 2.0
        else:
            centre, scale = 0.0, max(abs(lower_y), abs(upper_y))
        scale = scale if scale > 0 else 1.0
        max_abs_y = max(abs(lower_y - centre), abs(upper_y - centre)) / scale
        sensitivity = _gram_sensitivity(
            max_abs_X, max_abs_y, data_norm=clipper.data_norm,
            intercept=bool(self.fit_intercept),
        )
        return clipper, centre, scale, sensitivity

    def _row_clipper(self, bounds_X, data_norm, n_features):
        """The row map of the model, and the per-feature bound m of its centred rows.

        ``data_norm`` given: rows are clipped to the box (if any), then scaled
        to ``data_norm`` around 0. Only ``bounds_X``: rows are clipped to the
        box and, with an intercept, centred at its midpoint, which the
        intercept absorbs; the norm bound is then the box's
        (:func:`~skdp.linear_model._row_norm.box_centre_and_norm`), and m the
        box's half-widths.
        """
        if bounds_X is None:
            return RowClipper(data_norm=data_norm), np.full(n_features, math.inf)
        lower, upper = bounds_X
        if data_norm is not None:
            return (RowClipper(lower=lower, upper=upper, data_norm=data_norm),
                    np.maximum(np.abs(lower), np.abs(upper)))
        centre, norm = box_centre_and_norm(lower, upper, centre=bool(self.fit_intercept))
        max_abs = (upper - lower) / 2.0 if centre is not None else np.maximum(np.abs(lower), np.abs(upper))
        return RowClipper(lower=lower, upper=upper, centre=centre, data_norm=norm), max_abs

    @lazy_rows
    def predict(self, X: ArrayLike) -> NDArray:
        """Predict with the private linear model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._clipper.transform(X) @ self.coef_ + self.intercept_
