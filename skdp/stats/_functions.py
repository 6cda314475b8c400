"""Differentially private descriptive statistics with numpy-like signatures.

Each function follows the same four steps (DESIGN.md): validate the
parameters and the input (shapes, dtypes, finiteness) and charge ``budget``
once with the privacy curve computed from the parameters and public shapes
alone (:mod:`skdp.stats._checks`); only then read the data's values. The
``_*_curve`` / ``_*_release`` pairs of :mod:`skdp.stats._sums`,
:mod:`skdp.stats._histograms` and :mod:`skdp.stats._quantiles` do the work
and are shared with the DP transformers (their contract:
:mod:`skdp.stats._noise`).

Common keyword-only parameters
------------------------------
epsilon : float > 0
    The privacy parameter of the whole call (all outputs together).
    ``inf`` adds no noise, charges :meth:`RDPCurve.non_private` and returns
    exactly what numpy returns on the clipped data.
delta : float in [0, 1), default=0
    ``0``: Laplace noise, pure ε-DP. ``> 0``: Gaussian noise calibrated in
    RDP to (ε, δ), which is more accurate when many columns are released
    together (the noise grows as √k instead of k). Quantiles are always pure
    ε-DP and ignore ``delta``.
bounds : (lower, upper)
    Public bounds, scalars or one per column. Values are **clipped** to them
    before anything is computed; clipping biases the statistic when the
    bounds are too narrow, and nothing reports how many values were clipped,
    because that count would leak. Bounds must not be derived from the data.
budget : skdp.PrivacyBudget, optional
    Charged once per call, before the data is read. A refused charge raises
    :class:`~skdp.BudgetExceededError` and computes nothing. Without one,
    the default budget of :func:`skdp.config_context` is charged, if one is
    in force.
random_state : None, int or numpy.random.Generator
    ``None`` draws OS entropy; a seed gives reproducible noise. With
    ``secure=True`` it must be ``None``.
secure : bool, default=False
    Floating-point Laplace/Gaussian noise can leak the exact value through
    its low-order bits (Mironov 2012, "On significance of the least
    significant bits for differential privacy"). ``secure=True`` computes
    every noisy sum exactly in integers on a public power-of-two grid and
    adds exact discrete Laplace / discrete Gaussian noise (Canonne, Kamath &
    Steinke 2020), so the released float is an integer times a power of two.
    It is slower (a Python sampler per output) and its noise is slightly
    larger (the grid rounding adds at most half a grid step per value,
    with the grid 1024 times finer than both the noise and the bounds).
    Neither path defends against timing side channels: for example the
    float ``sum``/``mean`` of one output skips clipping when every value
    lies inside the bounds, and otherwise clips only the blocks of 2048
    values that reach outside them, so their running time depends on how
    many such blocks there are (the released value does not).
    ``secure=True`` also draws every random bit from the operating system's
    CSPRNG (:ref:`secure_randomness`), as in the estimators: a seed would
    make the noise reproducible, so ``secure=True`` with a ``random_state``
    other than ``None`` raises a ``ValueError`` before anything is charged.
"""

from __future__ import annotations

import builtins
import math
from typing import TYPE_CHECKING

import numpy as np

from ._checks import (
    _charge,
    _check_axis,
    _check_common,
    _check_data,
    _check_ddof,
    _check_lazy_release,
    _check_nan_data,
    _check_quantiles,
    _check_stat_bounds,
)
from ._histograms import _histogram_curve, _histogram_release, _histogramdd_release
from ._quantiles import _check_grid_size, _check_quantile_method, _quantile_curve, _quantile_release
from ._sums import (
    _count_curve,
    _count_release,
    _mean_curve,
    _mean_release,
    _std_release,
    _sum_curve,
    _sum_release,
    _var_curve,
    _var_release,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._typing import ArrayLike, FloatArray, FloatOrArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = [
    "count",
    "histogram",
    "histogram2d",
    "histogramdd",
    "mean",
    "median",
    "quantile",
    "std",
    "sum",
    "var",
]


def count(
    a: ArrayLike,
    axis: int | None = None,
    *,
    epsilon: float,
    delta: float = 0.0,
    budget: PrivacyBudget | None = None,
    random_state: RandomStateLike = None,
    secure: bool = False,
) -> FloatOrArray:
    """Differentially private ``np.count_nonzero(a, axis)``.

    The counts are one release, charged to ``budget`` once before the data
    is read; no bounds are needed.

    Parameters
    ----------
    a : array-like
        The data; an entry counts when it is nonzero. To count rows, pass a
        boolean mask or ``np.ones(n)``.
    axis : None or 0, default=None
        ``None``: one count of all the entries; ``0``: one per column.
    epsilon, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes.

    Returns
    -------
    float or ndarray
        The noisy count(s), unrounded and possibly negative (round or clip
        them yourself: that is post-processing).

    Notes
    -----
    One row changes a per-column count (``axis=0``) by at most 1 and the
    total (``axis=None``) by at most its number of entries m; the ``k``
    per-column counts share (ε, δ) as described in :mod:`skdp.stats`.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.arange(1000) % 3 == 0
    >>> round(float(stats.count(x, epsilon=1.0, random_state=0)))
    334
    >>> int(np.count_nonzero(x))
    334
    """
    epsilon, delta, rng, secure = _check_common(epsilon, delta, budget, random_state, secure)
    arr = np.atleast_1d(np.asarray(a))
    if arr.dtype.kind not in "biu":  # booleans and integers are finite: no pass, no float copy
        _check_data(arr)
    n_outputs, _ = _check_axis(arr, axis)
    curve = _count_curve(epsilon, delta, n_outputs, secure=secure)
    _charge(budget, curve, "count", epsilon, delta, n_outputs, secure)
    return _count_release(arr, epsilon=epsilon, delta=delta, axis=axis, rng=rng, secure=secure)


def sum(
    a: ArrayLike,
    axis: int | None = None,
    *,
    epsilon: float,
    bounds: ArrayLike,
    delta: float = 0.0,
    budget: PrivacyBudget | None = None,
    random_state: RandomStateLike = None,
    secure: bool = False,
) -> FloatOrArray:
    """Differentially private ``np.sum(np.clip(a, *bounds), axis)``.

    The sums are one release, charged to ``budget`` once before the data is
    read.

    Parameters
    ----------
    a : array-like
        The data, finite values only (with missing values: :func:`nansum`).
    axis : None or 0, default=None
        ``None``: one sum of all the entries; ``0``: one per column.
    epsilon, bounds, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes.

    Returns
    -------
    float or ndarray
        A float with ``axis=None``, else one value per column.

    Notes
    -----
    Sensitivity per column ``max(|lower|, |upper|)`` (add/remove one row); with
    ``axis=None`` a row contributes the sum of its entries.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.linspace(0, 1, 10_000)
    >>> round(float(stats.sum(x, epsilon=1.0, bounds=(0, 1), random_state=0)))
    5000
    """
    epsilon, delta, rng, secure = _check_common(epsilon, delta, budget, random_state, secure)
    arr, value_range = _check_data(a, return_range=True, lazy=True)
    n_outputs, _ = _check_axis(arr, axis)
    _check_lazy_release(arr, axis, epsilon, secure)
    bounds = _check_stat_bounds(bounds, arr, axis)
    curve = _sum_curve(epsilon, delta, n_outputs, secure=secure)
    _charge(budget, curve, "sum", epsilon, delta, n_outputs, secure)
    return _sum_release(arr, epsilon=epsilon, delta=delta, bounds=bounds, axis=axis,
                        rng=rng, secure=secure, value_range=value_range)


def mean(
    a: ArrayLike,
    axis: int | None = None,
    *,
    epsilon: float,
    bounds: ArrayLike,
    delta: float = 0.0,
    budget: PrivacyBudget | None = None,
    random_state: RandomStateLike = None,
    secure: bool = False,
) -> FloatOrArray:
    """Differentially private ``np.mean(np.clip(a, *bounds), axis)``.

    A noisy count and noisy sums, one release charged to ``budget`` once
    before the data is read; the mean is their ratio.

    Parameters
    ----------
    a : array-like
        The data, finite values only (with missing values: :func:`nanmean`).
    axis : None or 0, default=None
        ``None``: one mean of all the entries; ``0``: one per column.
    epsilon, bounds, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes.

    Returns
    -------
    float or ndarray
        A float with ``axis=None``, else one value per column.

    Notes
    -----
    A noisy count and one noisy centred sum per column (k = d + 1 sums
    sharing (ε, δ)), then mean = c + Σ(x − c)/max(ñ, 1) with c the bounds'
    midpoint, clamped to the bounds (post-processing). The number of rows is
    private under add/remove, hence the noisy count ñ.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).normal(40, 10, size=10_000)
    >>> round(float(stats.mean(x, epsilon=1.0, bounds=(0, 100), random_state=0)), 1)
    40.1
    >>> stats.mean(np.c_[x, 2 * x], axis=0, epsilon=1.0, bounds=(0, 200), random_state=0).shape
    (2,)
    """
    epsilon, delta, rng, secure = _check_common(epsilon, delta, budget, random_state, secure)
    arr, value_range = _check_data(a, return_range=True, lazy=True)
    n_outputs, _ = _check_axis(arr, axis)
    _check_lazy_release(arr, axis, epsilon, secure)
    bounds = _check_stat_bounds(bounds, arr, axis, scalar_for_none=True)
    curve = _mean_curve(epsilon, delta, n_outputs, secure=secure)
    _charge(budget, curve, "mean", epsilon, delta, n_outputs, secure)
    return _mean_release(arr, epsilon=epsilon, delta=delta, bounds=bounds, axis=axis,
                         rng=rng, secure=secure, value_range=value_range)


def var(
    a: ArrayLike,
    axis: int | None = None,
    *,
    epsilon: float,
    bounds: ArrayLike,
    delta: float = 0.0,
    ddof: int = 0,
    budget: PrivacyBudget | None = None,
    random_state: RandomStateLike = None,
    secure: bool = False,
) -> FloatOrArray:
    """Differentially private ``np.var(np.clip(a, *bounds), axis, ddof=ddof)``.

    A noisy count and two noisy sums per column, one release charged to
    ``budget`` once before the data is read; the variance is computed from
    them.

    Parameters
    ----------
    a : array-like
        The data, finite values only (with missing values: :func:`nanvar`).
    axis : None or 0, default=None
        ``None``: one variance of all the entries; ``0``: one per column.
    epsilon, bounds, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes.
    ddof : int >= 0, default=0
        Delta degrees of freedom, as in numpy: the divisor is max(ñ − ``ddof``, 1),
        ñ the noisy count.

    Returns
    -------
    float or ndarray
        A float with ``axis=None``, else one value per column.

    Notes
    -----
    A noisy count, noisy Σy and noisy Σ(y² − h²/2) per column with
    y = x − c (c the midpoint, h the half-width of the bounds), k = 2d + 1
    sums sharing (ε, δ); var = mean(y²) − mean(y)², clamped to [0, h²]
    (post-processing). Du et al. 2020 ("Differentially private confidence
    intervals") discuss this and other constructions.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).normal(40, 10, size=10_000)
    >>> round(float(stats.var(x, epsilon=1.0, bounds=(0, 100), random_state=0)))
    99
    """
    return _variance_statistic("var", _var_release, a, axis, epsilon, bounds, delta, ddof,
                               budget, random_state, secure)


def std(
    a: ArrayLike,
    axis: int | None = None,
    *,
    epsilon: float,
    bounds: ArrayLike,
    delta: float = 0.0,
    ddof: int = 0,
    budget: PrivacyBudget | None = None,
    random_state: RandomStateLike = None,
    secure: bool = False,
) -> FloatOrArray:
    """Differentially private ``np.std``: the square root of :func:`var`.

    It charges what :func:`var` charges, once.

    Parameters
    ----------
    a : array-like
        The data, finite values only (with missing values: :func:`nanstd`).
    axis : None or 0, default=None
        ``None``: one standard deviation of all the entries; ``0``: one per column.
    epsilon, bounds, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes.
    ddof : int >= 0, default=0
        Delta degrees of freedom, as in numpy: the divisor is max(ñ − ``ddof``, 1),
        ñ the noisy count.

    Returns
    -------
    float or ndarray
        A float with ``axis=None``, else one value per column.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).normal(40, 10, size=10_000)
    >>> round(float(stats.std(x, epsilon=1.0, bounds=(0, 100), random_state=0)))
    10
    """
    return _variance_statistic("std", _std_release, a, axis, epsilon, bounds, delta, ddof,
                               budget, random_state, secure)


def _variance_statistic(name, release, a, axis, epsilon, bounds, delta, ddof, budget,
                        random_state, secure):
    """:func:`var` and :func:`std`: one release of the variance (std is its square root)."""
    epsilon, delta, rng, secure = _check_common(epsilon, delta, budget, random_state, secure)
    ddof = _check_ddof(ddof)
    arr = _check_data(a, lazy=True)
    n_outputs, _ = _check_axis(arr, axis)
    _check_lazy_release(arr, axis, epsilon, secure)
    bounds = _check_stat_bounds(bounds, arr, axis, scalar_for_none=True)
    curve = _var_curve(epsilon, delta, n_outputs, secure=secure)
    _charge(budget, curve, name, epsilon, delta, n_outputs, secure)
    return release(arr, epsilon=epsilon, delta=delta, bounds=bounds, axis=axis, rng=rng,
                   secure=secure, ddof=ddof)


def quantile(
    a: ArrayLike,
    q: ArrayLike,
    axis: int | None = None,
    *,
    epsilon: float,
    bounds: ArrayLike,
    delta: float = 0.0,
    budget: PrivacyBudget | None = None,
    random_state: RandomStateLike = None,
    secure: bool = False,
    method: str = "split",
    grid_size: int = 1024,
) -> FloatOrArray:
    """Differentially private ``np.quantile(np.clip(a, *bounds), q, axis)``.

    Each level of each column is chosen by an exponential mechanism over the
    clipped values (Smith 2011); the call is pure ε-DP and charges
    ``budget`` once, before the data is read. Notes give the mechanism, the
    ``"joint"`` method and the exact sampler of ``secure=True``.

    Parameters
    ----------
    a : array-like
        The data, finite values only (with missing values: :func:`nanquantile`).
    q : float or array-like of floats in [0, 1]
        The levels, as in :func:`numpy.quantile`.
    axis : None or 0, default=None
        ``None``: one quantile of all the values; ``0``: one per column,
        the columns splitting ε equally.
    epsilon, bounds, delta, budget, random_state
        As for every function of :mod:`skdp.stats`; ``delta`` is ignored.
    method : {"split", "joint"}, default="split"
        How several levels of one column share ε: one mechanism per level
        at ε/m (``"split"``), or one mechanism over increasing vectors of
        outputs (``"joint"``, O(m²·N) time for m levels; see Notes).
    secure : bool, default=False
        Release a point of a public grid of ``grid_size`` values, sampled
        exactly with integer arithmetic, against floating-point attacks
        (``method="split"`` only; see Notes).
    grid_size : int in [2, 2**20], default=1024
        Number of public candidate outputs with ``secure=True`` (ignored
        otherwise). Validated before any charge.

    Returns
    -------
    float or ndarray
        As :func:`numpy.quantile` returns: one value per level, and per column
        with ``axis=0``.

    Notes
    -----
    One level is chosen by the exponential mechanism over the gaps between
    the sorted, clipped values (Smith 2011): gap i has utility −|i − qN|
    (sensitivity 1) and weight (length)·exp(ε u / 2); the output is uniform
    in the chosen gap. Always pure ε-DP (``delta`` is ignored); each
    mechanism reports the tighter of its pure-DP and bounded-range zCDP
    curves. Columns (``axis=0``) split ε equally. Without ``secure`` and
    with ``method="split"`` the data are not sorted: a partition finds the
    values within about (ln N + 40)·2/ε' ranks of qN (ε' the level's share)
    and draws outside them are exact rejections, so the release has Smith's
    distribution exactly, in about the time of ``np.median`` on continuous
    data; only the running time depends on the data (runs of tied or
    clipped values around qN cost extra passes).

    **method.** How several levels of one column share ε. ``"split"``: one Smith
    mechanism per level at ε/m. ``"joint"``: one
    exponential mechanism over increasing vectors of outputs (JointExp,
    Gillenwater, Joseph & Kulesza 2021), whose utility −Σⱼ|#(oⱼ₋₁ ≤ x < oⱼ)
    − (qⱼ − qⱼ₋₁)N| has sensitivity 2 whatever the number of levels, so
    each column spends ε once; its outputs increase with the levels; it
    takes O(m²·N) time for m levels. For one level both are the same
    mechanism. On Adult's numeric columns at ε = 1 (5 and 9 levels),
    ``"joint"`` was 4× more accurate on the near-continuous ``fnlwgt``
    but far worse on columns with many tied values (capital-gain is
    mostly 0): its utility is flat along some directions there and the
    outputs drift into wide gaps. Hence the default ``"split"``
    (docs/benchmarks.md, "DP statistics").

    **secure: the threat.** With ``secure=False`` the selection probabilities
    are computed in floating point and the output is drawn uniformly
    between two data values, so the set of floats that can come out, and
    their exact probabilities, depend on the data beyond what the
    analysis covers (Mironov 2012; Ilvento 2020 shows such attacks on
    float exponential mechanisms). ``secure=True`` (``method="split"``
    only; ``"joint"`` raises a ValueError before any charge) releases
    instead a point of a **public grid**: ``grid_size`` evenly spaced
    values from ``lower`` to ``upper`` (``np.linspace``), chosen by the
    exponential mechanism with the integer utility
    −dist(round(qN), [#{x < g}, #{x ≤ g}]) (sensitivity 1 under
    add/remove, derived in ``_quantile_losses``), sampled
    **exactly** with integer arithmetic: the base-2 exponential
    mechanism of Ilvento 2020 (CCS), weights β^loss with a rational base
    β = x/2^y, by rejection with the exact Bernoulli draws of
    :mod:`skdp.mechanisms`. The output is a grid point, so it carries
    nothing but the choice.
    **The ε rounding.** β is e^(−ε/(2Δ)) rounded up to a dyadic
    rational, so the mechanism runs at an effective ε' a hair below the
    requested share (relative gap about 2^(−22)); the budget is charged
    at ε', never more than asked. **The resolution cost.** Outputs are
    grid points: on top of the rank error, an error of up to half a grid
    step, (upper − lower)/(2·(grid_size − 1)), and it is slower (a
    Python-level sampler per output, integers of up to 2^17 bits when ε
    is small). Timing is not hardened. With ``random_state=None`` the
    bits come from the OS CSPRNG (:ref:`secure_randomness`).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).normal(40, 10, size=10_000)
    >>> stats.quantile(x, [0.25, 0.75], epsilon=1.0, bounds=(0, 100), random_state=0).round(0)
    array([33., 47.])
    >>> float(stats.quantile(x, 0.5, epsilon=1.0, bounds=(0, 100), secure=True,
    ...                      grid_size=101))  # unseeded; a point of the grid 0, 1, ..., 100
    40.0
    """
    return _quantile(a, q, axis, epsilon=epsilon, bounds=bounds, delta=delta, budget=budget,
                     random_state=random_state, secure=secure, method=method,
                     grid_size=grid_size)


def _quantile(a, q, axis, *, epsilon, bounds, delta, budget, random_state, secure, method,
              grid_size, skip_nan=False):
    """:func:`quantile`, or with ``skip_nan`` :func:`skdp.stats.nanquantile`: check, charge, release."""
    epsilon, delta, rng, secure = _check_common(epsilon, delta, budget, random_state, secure)
    method = _check_quantile_method(method)
    grid_size = _check_grid_size(grid_size)
    q_arr = _check_quantiles(q)
    arr = _check_nan_data(a) if skip_nan else _check_data(a)
    n_outputs, _ = _check_axis(arr, axis)
    bounds = _check_stat_bounds(bounds, arr, axis, scalar_for_none=True)
    row_size = math.prod(arr.shape[1:]) if axis is None else 1
    curve = _quantile_curve(epsilon, delta, n_outputs, n_quantiles=q_arr.size, secure=secure,
                            method=method, row_size=max(row_size, 1))
    _charge(budget, curve, "nanquantile" if skip_nan else "quantile", epsilon, delta,
            n_outputs * q_arr.size, secure)
    return _quantile_release(arr, q_arr, epsilon=epsilon, delta=delta, bounds=bounds,
                             axis=axis, rng=rng, secure=secure, method=method,
                             grid_size=grid_size, skip_nan=skip_nan)


def median(
    a: ArrayLike,
    axis: int | None = None,
    *,
    epsilon: float,
    bounds: ArrayLike,
    delta: float = 0.0,
    budget: PrivacyBudget | None = None,
    random_state: RandomStateLike = None,
    secure: bool = False,
    grid_size: int = 1024,
) -> FloatOrArray:
    """Differentially private ``np.median``: :func:`quantile` at q = 0.5.

    Pure ε-DP, charged to ``budget`` once before the data is read.

    Parameters
    ----------
    a : array-like
        The data, finite values only (with missing values: :func:`nanmedian`).
    axis : None or 0, default=None
        ``None``: one median of all the entries; ``0``: one per column.
    epsilon, bounds, delta, budget, random_state
        The parameters that every function of :mod:`skdp.stats` takes; ``delta`` is ignored.
    secure : bool, default=False
        ``secure=True`` releases a point of a public grid of ``grid_size``
        values, chosen by the exact base-2 exponential mechanism at an
        effective ε' ≤ ε (see :func:`quantile`).
    grid_size : int in [2, 2**20], default=1024
        Number of public candidate outputs with ``secure=True`` (ignored
        otherwise).

    Returns
    -------
    float or ndarray
        A float with ``axis=None``, else one value per column.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).normal(40, 10, size=10_000)
    >>> round(float(stats.median(x, epsilon=1.0, bounds=(0, 100), random_state=0)))
    40
    """
    return quantile(a, 0.5, axis, epsilon=epsilon, bounds=bounds, delta=delta, budget=budget,
                    random_state=random_state, secure=secure, grid_size=grid_size)


def _check_bins_range(bins, range, n_dims):
    """Validate public ``bins`` / ``range`` without reading data; numpy checks the rest."""
    bins_list = bins if (n_dims > 1 and isinstance(bins, (list, tuple))) else [bins] * n_dims
    if len(bins_list) != n_dims:
        raise ValueError(f"bins must have one entry per dimension ({n_dims}).")
    needs_range = []
    for b in bins_list:
        if np.ndim(b) == 0:
            if isinstance(b, str):
                raise ValueError(
                    "bins given as a string would be estimated from the data; give an "
                    "integer number of bins with a public range, or explicit bin edges."
                )
            if isinstance(b, (bool, np.bool_)) or int(b) != b or b <= 0:
                raise ValueError(f"bins must be a positive integer or an array of edges; got {b!r}.")
            needs_range.append(True)
        else:
            edges = np.asarray(b, dtype=float)
            if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)) \
                    or np.any(np.diff(edges) <= 0):
                raise ValueError("bin edges must be a finite, strictly increasing 1-D array.")
            needs_range.append(False)
    if builtins.any(needs_range):
        if range is None:
            raise ValueError(
                "range=(lower, upper) must be given (public): skdp never reads the range "
                "of a histogram from the data."
            )
        ranges = [range] if n_dims == 1 else list(range)
        if len(ranges) != n_dims:
            raise ValueError(f"range must have one (lower, upper) pair per dimension ({n_dims}).")
        for r, need in zip(ranges, needs_range):
            if r is None:
                if need:
                    raise ValueError("range must be given for every dimension with integer bins.")
                continue
            lo, hi = (float(v) for v in r)
            if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
                raise ValueError(f"range must be finite with lower < upper; got {r!r}.")


def histogram(
    a: ArrayLike,
    bins: int | ArrayLike = 10,
    range: tuple[float, float] | None = None,
    *,
    epsilon: float,
    delta: float = 0.0,
    density: bool = False,
    budget: PrivacyBudget | None = None,
    random_state: RandomStateLike = None,
    secure: bool = False,
) -> tuple[FloatArray, FloatArray]:
    """Differentially private ``np.histogram(a, bins, range)``.

    The counts are one release, charged to ``budget`` once before the data
    is read.

    Parameters
    ----------
    a : array-like of shape (n_rows,)
        One value per row, finite.
    bins : int or array-like of edges, default=10
        Public: a number of equal-width bins over ``range``, or the edges.
    range : (float, float), default=None
        Public ``(lower, upper)``; required with an integer ``bins``. Values
        outside it are not counted, as in numpy.
    epsilon, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes; no bounds are needed.
    density : bool, default=False
        Normalise the noisy counts (floored at 0) by their own total, as
        numpy's ``density`` does (post-processing).

    Returns
    -------
    hist : ndarray of float (noisy, unrounded; may be negative unless density)
    bin_edges : ndarray

    Notes
    -----
    One row falls in at most one bin, so the counts have L1 and L2
    sensitivity 1 under add/remove (Dwork et al. 2006, Example 1): every bin
    gets Laplace(1/ε) noise (or Gaussian with ``delta > 0``), vectorised.
    ``bins`` and ``range`` are public and ``range`` is required with integer
    ``bins``; values outside the range are not counted, as in numpy.
    ``density=True`` normalises the noisy counts (floored at 0) by their own
    total (post-processing).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).normal(size=10_000)
    >>> hist, edges = stats.histogram(x, bins=4, range=(-2, 2), epsilon=1.0, random_state=0)
    >>> hist.round(0), edges
    (array([1335., 3458., 3361., 1384.]), array([-2., -1.,  0.,  1.,  2.]))
    """
    epsilon, delta, rng, secure = _check_common(epsilon, delta, budget, random_state, secure)
    arr = _check_data(a)
    if arr.ndim != 1:
        # One row must change one count by at most 1: numpy would flatten a
        # (n, m) array and let one row move m counts, m times the sensitivity.
        raise ValueError(
            f"histogram takes a 1-D array of one value per row; got shape {arr.shape}. "
            "Use histogramdd for several columns, or one histogram per column."
        )
    _check_bins_range(bins, range, 1)
    np.histogram(np.empty(0), bins=bins, range=range)  # numpy's own checks, on no data
    curve = _histogram_curve(epsilon, delta, 1, secure=secure)
    _charge(budget, curve, "histogram", epsilon, delta, 1, secure)
    return _histogram_release(arr, epsilon=epsilon, delta=delta, bins=bins, range=range,
                              rng=rng, secure=secure, density=density)


def histogramdd(
    sample: ArrayLike,
    bins: int | ArrayLike = 10,
    range: ArrayLike | None = None,
    *,
    epsilon: float,
    delta: float = 0.0,
    density: bool = False,
    budget: PrivacyBudget | None = None,
    random_state: RandomStateLike = None,
    secure: bool = False,
) -> tuple[FloatArray, Sequence[FloatArray]]:
    """Differentially private ``np.histogramdd(sample, bins, range)``.

    The counts are one release, charged to ``budget`` once before the data
    is read.

    Parameters
    ----------
    sample : array-like of shape (n_rows, D)
        One point per row, finite.
    bins : int, array-like of edges, or a sequence of D of these, default=10
        Public, as in numpy.
    range : sequence of D (lower, upper) pairs, default=None
        Public; required for the dimensions with an integer number of bins.
    epsilon, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes; no bounds are needed.
    density : bool, default=False
        Normalise the noisy counts (floored at 0) by their own total, as
        numpy's ``density`` does (post-processing).

    Returns
    -------
    hist : ndarray of D dimensions
    edges : list of D ndarrays

    Notes
    -----
    One row falls in at most one cell, so the sensitivity is 1 as for
    :func:`histogram`.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).uniform(size=(10_000, 2))
    >>> hist, edges = stats.histogramdd(x, bins=2, range=[(0, 1), (0, 1)], epsilon=1.0,
    ...                                 random_state=0)
    >>> bool(np.all(np.abs(hist - 2500) < 150))  # multinomial sd ≈ 43, Laplace noise sd ≈ 1.4
    True
    """
    epsilon, delta, rng, secure = _check_common(epsilon, delta, budget, random_state, secure)
    arr = _check_data(sample, name="sample")
    if arr.ndim != 2:
        raise ValueError(f"sample must have shape (n_rows, D); got {arr.shape}.")
    _check_bins_range(bins, range, arr.shape[1])
    np.histogramdd(np.empty((0, arr.shape[1])), bins=bins, range=range)  # numpy's checks, no data
    curve = _histogram_curve(epsilon, delta, 1, secure=secure)
    _charge(budget, curve, "histogramdd", epsilon, delta, 1, secure)
    return _histogramdd_release(arr, epsilon=epsilon, delta=delta, bins=bins, range=range,
                                rng=rng, secure=secure, density=density)


def histogram2d(
    x: ArrayLike,
    y: ArrayLike,
    bins: int | ArrayLike = 10,
    range: ArrayLike | None = None,
    *,
    epsilon: float,
    delta: float = 0.0,
    density: bool = False,
    budget: PrivacyBudget | None = None,
    random_state: RandomStateLike = None,
    secure: bool = False,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Differentially private ``np.histogram2d(x, y, bins, range)``.

    Row i is the pair (x[i], y[i]); see :func:`histogramdd`, which it calls
    (one charge).

    Parameters
    ----------
    x, y : array-like of shape (n_rows,)
        The two values of each row.
    bins : int, array-like of edges, or a pair of these, default=10
        Public, as in numpy.
    range : pair of (lower, upper) pairs, default=None
        Public; required with an integer number of bins.
    epsilon, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes; no bounds are needed.
    density : bool, default=False
        Normalise the noisy counts (floored at 0) by their own total, as
        numpy's ``density`` does (post-processing).

    Returns
    -------
    hist : ndarray of shape (nx, ny)
    xedges, yedges : ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> rng = np.random.default_rng(0)
    >>> h, xe, ye = stats.histogram2d(rng.uniform(size=1000), rng.uniform(size=1000), bins=2,
    ...                               range=[(0, 1), (0, 1)], epsilon=1.0, random_state=0)
    >>> h.shape
    (2, 2)
    """
    xa = np.asarray(x)
    ya = np.asarray(y)
    if xa.ndim != 1 or ya.shape != xa.shape:
        raise ValueError("x and y must be 1-D arrays of the same length.")
    hist, edges = histogramdd(np.column_stack([xa, ya]) if xa.size else np.empty((0, 2)),
                              bins=bins, range=range, epsilon=epsilon, delta=delta,
                              density=density, budget=budget, random_state=random_state,
                              secure=secure)
    return hist, edges[0], edges[1]
