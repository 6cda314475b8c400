"""NaN-aware DP statistics (``nansum``, ``nanmean``, ``nanvar``, ``nanstd``, ``nanquantile``,
``nanmedian``) and ``percentile``.

The NaN-aware functions drop the NaN entries of each column, as numpy's
``nan*`` functions do, and count what is left privately: under add/remove
one row the number of values of a column is as private as the number of
rows. Each is one release of noisy sums (:mod:`skdp.stats._noise`, module
docstring): a NaN entry contributes 0 to every sum of its column, which lies
inside each sum's range, so the sensitivities are those of the plain
statistics (Dwork, McSherry, Nissim & Smith 2006, Prop. 1).

- ``nansum``: one sum per output, sensitivity ``max(|lower|, |upper|)``: the
  curve of :func:`skdp.stats.sum`.
- ``nanmean``: per output a count of values (sensitivity 1) and a centred
  sum (sensitivity (upper − lower)/2): k = 2d sums, against d + 1 for
  :func:`skdp.stats.mean`, whose one count of rows serves every column.
- ``nanvar`` / ``nanstd``: per output a count, Σy and Σ(y² − h²/2)
  (y = x − c, as :func:`skdp.stats.var`): k = 3d sums.

Infinite entries are refused (before any charge), NaN entries are not.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ._checks import (
    _charge,
    _check_axis,
    _check_common,
    _check_ddof,
    _check_n_outputs,
    _check_nan_data,
    _check_stat_bounds,
)
from ._functions import _quantile, quantile
from ._noise import _flatten, _noisy_sums, _sums_curve

if TYPE_CHECKING:
    from .._typing import ArrayLike, FloatOrArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["nanmean", "nanmedian", "nanquantile", "nanstd", "nansum", "nanvar", "percentile"]


def _nan_curve(epsilon, delta, n_outputs, per_output, *, secure=False):
    """Curve of a NaN-aware release: ``per_output`` noisy sums per output (module docstring)."""
    return _sums_curve(epsilon, delta, per_output * _check_n_outputs(n_outputs),
                       secure=secure)


def _nan_parts(arr, bounds, axis, centre):
    """Clipped values with NaN entries set to 0, their observed mask and their bounds.

    Returns (x, observed, lower, upper, c, m): x (n, m_out) holds clip(value) − c
    (c the bounds' midpoint with ``centre``, else 0) where observed, 0 elsewhere;
    ``observed`` counts the values of each contribution. With ``axis=None`` on
    n-D data a row contributes the totals of its m entries (m > 1).
    """
    x, lower, upper = _flatten(arr, bounds, axis)
    observed = ~np.isnan(x)
    c = (lower + upper) / 2.0 if centre else np.zeros_like(lower)
    x = np.where(observed, x - c, 0.0)
    obs = observed.astype(float)
    m = 1
    if axis is None and x.shape[1] > 1:
        if np.ptp(lower) or np.ptp(upper):
            raise ValueError("axis=None on multi-column data needs scalar bounds.")
        m = x.shape[1]
        x, obs = x.sum(axis=1, keepdims=True), obs.sum(axis=1, keepdims=True)
        lower, upper, c = lower[:1], upper[:1], c[:1]
    return x, obs, lower - c, upper - c, c, m


def _prepare(a, axis, epsilon, delta, bounds, budget, random_state, secure):
    epsilon, delta, rng, secure = _check_common(epsilon, delta, budget, random_state, secure)
    arr = _check_nan_data(a)
    n_outputs, shape = _check_axis(arr, axis)
    bounds = _check_stat_bounds(bounds, arr, axis, scalar_for_none=True)
    return arr, n_outputs, shape, bounds, epsilon, delta, rng, secure


def _clipped(arr, bounds, axis):
    """``arr`` clipped to the bounds, NaN entries kept (for ``epsilon=inf``)."""
    return _flatten(arr, bounds, axis)[0].reshape(arr.shape)


def _shaped(values, axis, shape):
    return values[0] if axis is None else values.reshape(shape)


def nansum(
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
    """Differentially private ``np.nansum(np.clip(a, *bounds), axis)``.

    NaN entries count as 0; the others are clipped to the bounds. One
    release, charged to ``budget`` once before the data is read.

    Parameters
    ----------
    a : array-like
        The data; NaN entries are missing values, infinite ones are refused.
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
    One row changes a column's sum by at most ``max(|lower|, |upper|)``, as
    for :func:`skdp.stats.sum`, whose curve this is.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.linspace(0, 1, 10_000)
    >>> x[::2] = np.nan
    >>> round(float(stats.nansum(x, epsilon=1.0, bounds=(0, 1), random_state=0)))
    2501
    >>> round(float(np.nansum(x)))
    2500
    """
    arr, n_outputs, shape, bounds, epsilon, delta, rng, secure = _prepare(
        a, axis, epsilon, delta, bounds, budget, random_state, secure)
    curve = _nan_curve(epsilon, delta, n_outputs, 1, secure=secure)
    _charge(budget, curve, "nansum", epsilon, delta, n_outputs, secure)
    if epsilon == math.inf:
        return np.nansum(_clipped(arr, bounds, axis), axis=axis)
    x, _, lower, upper, _, m = _nan_parts(arr, bounds, axis, centre=False)
    lo, hi = m * np.minimum(lower, 0.0), m * np.maximum(upper, 0.0)  # a NaN entry adds 0
    (total,) = _noisy_sums([(x, lo, hi)], epsilon=epsilon, delta=delta, rng=rng,
                           secure=secure)
    return _shaped(total, axis, shape)


def nanmean(
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
    """Differentially private ``np.nanmean(np.clip(a, *bounds), axis)``.

    A noisy count of the values and a noisy sum per output, one release
    charged to ``budget`` once before the data is read. An output with no
    value returns noise around the bounds' midpoint (numpy returns NaN).

    Parameters
    ----------
    a : array-like
        The data; NaN entries are missing values, infinite ones are refused.
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
    Per output a noisy count of its non-NaN values and a noisy sum of
    their offsets from the bounds' midpoint c (2 sums per output sharing
    (ε, δ)); mean = c + Σ(x − c)/max(ñ, 1), clamped to the bounds
    (post-processing). An output with no value returns noise around c
    (numpy returns NaN): the count of values is private.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).normal(40, 10, size=10_000)
    >>> x[x > 55] = np.nan
    >>> round(float(stats.nanmean(x, epsilon=1.0, bounds=(0, 100), random_state=0)), 1)
    38.7
    >>> round(float(np.nanmean(x)), 1)
    38.7
    """
    arr, n_outputs, shape, bounds, epsilon, delta, rng, secure = _prepare(
        a, axis, epsilon, delta, bounds, budget, random_state, secure)
    curve = _nan_curve(epsilon, delta, n_outputs, 2, secure=secure)
    _charge(budget, curve, "nanmean", epsilon, delta, n_outputs, secure)
    if epsilon == math.inf:
        return np.nanmean(_clipped(arr, bounds, axis), axis=axis)
    y, obs, lower, upper, c, m = _nan_parts(arr, bounds, axis, centre=True)
    count, s1 = _noisy_sums([(obs, np.zeros_like(lower), np.full_like(upper, m)),
                             (y, m * lower, m * upper)],
                            epsilon=epsilon, delta=delta, rng=rng, secure=secure)
    mean = np.clip(c + s1 / np.maximum(count, 1.0), c + lower, c + upper)
    return _shaped(mean, axis, shape)


def _nanvar(a, axis, epsilon, bounds, delta, ddof, budget, random_state, secure, name):
    arr, n_outputs, shape, bounds, epsilon, delta, rng, secure = _prepare(
        a, axis, epsilon, delta, bounds, budget, random_state, secure)
    ddof = _check_ddof(ddof)
    curve = _nan_curve(epsilon, delta, n_outputs, 3, secure=secure)
    _charge(budget, curve, name, epsilon, delta, n_outputs, secure)
    if epsilon == math.inf:
        return np.nanvar(_clipped(arr, bounds, axis), axis=axis, ddof=ddof)
    x, lower, upper = _flatten(arr, bounds, axis)
    observed = ~np.isnan(x)
    c = (lower + upper) / 2.0
    h = (upper - lower) / 2.0
    y = np.where(observed, x - c, 0.0)
    y2 = np.where(observed, y * y - h * h / 2.0, 0.0)  # in [−h²/2, h²/2], 0 for NaN
    obs = observed.astype(float)
    m = 1
    if axis is None and x.shape[1] > 1:
        m = x.shape[1]
        y, y2, obs = (v.sum(axis=1, keepdims=True) for v in (y, y2, obs))
        h = h[:1]
    count, s1, s2 = _noisy_sums(
        [(obs, np.zeros_like(h), np.full_like(h, m)), (y, -m * h, m * h),
         (y2, -m * h * h / 2.0, m * h * h / 2.0)],
        epsilon=epsilon, delta=delta, rng=rng, secure=secure)
    n = np.maximum(count, 1.0)
    mean_y = np.clip(s1 / n, -h, h)
    mean_sq = np.clip(s2 / n + h * h / 2.0, 0.0, h * h)
    var = np.clip(mean_sq - mean_y**2, 0.0, h * h)
    if ddof:
        var = var * n / np.maximum(n - ddof, 1.0)
    return _shaped(var, axis, shape)


def nanvar(
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
    """Differentially private ``np.nanvar(np.clip(a, *bounds), axis, ddof=ddof)``.

    A noisy count of the values and two noisy sums per output, one release
    charged to ``budget`` once before the data is read.

    Parameters
    ----------
    a : array-like
        The data; NaN entries are missing values, infinite ones are refused.
    axis : None or 0, default=None
        ``None``: one variance of all the entries; ``0``: one per column.
    epsilon, bounds, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes.
    ddof : int >= 0, default=0
        Delta degrees of freedom, as in numpy: the divisor is max(ñ − ``ddof``, 1),
        ñ the noisy count of values.

    Returns
    -------
    float or ndarray
        A float with ``axis=None``, else one value per column.

    Notes
    -----
    Per output a noisy count of its values, noisy Σy and noisy
    Σ(y² − h²/2) over them (y = x − c, c the midpoint and h the half-width
    of the bounds; 3 sums per output sharing (ε, δ)); var = mean(y²) −
    mean(y)², clamped to [0, h²] (post-processing), as :func:`skdp.stats.var`.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).normal(40, 10, size=10_000)
    >>> x[::3] = np.nan
    >>> round(float(stats.nanvar(x, epsilon=1.0, bounds=(0, 100), random_state=0)))
    96
    >>> round(float(np.nanvar(x)))
    98
    """
    return _nanvar(a, axis, epsilon, bounds, delta, ddof, budget, random_state, secure, "nanvar")


def nanstd(
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
    """Differentially private ``np.nanstd``: the square root of :func:`nanvar`.

    It charges what :func:`nanvar` charges, once.

    Parameters
    ----------
    a : array-like
        The data; NaN entries are missing values, infinite ones are refused.
    axis : None or 0, default=None
        ``None``: one standard deviation of all the entries; ``0``: one per column.
    epsilon, bounds, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes.
    ddof : int >= 0, default=0
        Delta degrees of freedom, as in numpy: the divisor is max(ñ − ``ddof``, 1),
        ñ the noisy count of values.

    Returns
    -------
    float or ndarray
        A float with ``axis=None``, else one value per column.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).normal(40, 10, size=10_000)
    >>> x[::3] = np.nan
    >>> round(float(stats.nanstd(x, epsilon=1.0, bounds=(0, 100), random_state=0)))
    10
    """
    return np.sqrt(_nanvar(a, axis, epsilon, bounds, delta, ddof, budget, random_state, secure,
                           "nanstd"))


def percentile(
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
    """Differentially private ``np.percentile``: :func:`skdp.stats.quantile` at ``q / 100``.

    Everything but ``q`` (the mechanism, its curve, its one charge,
    ``secure`` and ``method``) is that of :func:`skdp.stats.quantile`.

    Parameters
    ----------
    a : array-like
        The data, finite values only.
    q : float or array-like of floats in [0, 100]
        The levels, in percent.
    axis : None or 0, default=None
        ``None``: one percentile of all the entries; ``0``: one per column.
    epsilon, bounds, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes; ``delta``
        is ignored (pure ε-DP).
    method : {"split", "joint"}, default="split"
        How several levels of one column share ε (see :func:`skdp.stats.quantile`).
    grid_size : int in [2, 2**20], default=1024
        Number of public candidate outputs with ``secure=True`` (see
        :func:`skdp.stats.quantile`).

    Returns
    -------
    float or ndarray
        As :func:`numpy.percentile` returns.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).normal(40, 10, size=10_000)
    >>> stats.percentile(x, [25, 75], epsilon=1.0, bounds=(0, 100), random_state=0).round(0)
    array([33., 47.])
    """
    q_arr = np.asarray(q, dtype=float)
    if q_arr.ndim > 1 or q_arr.size == 0 or np.any(np.isnan(q_arr)) \
            or np.any((q_arr < 0) | (q_arr > 100)):
        raise ValueError(f"Percentiles q must be a float or a 1-D array in [0, 100]; got {q!r}.")
    return quantile(a, q_arr / 100.0, axis, epsilon=epsilon, bounds=bounds, delta=delta,
                    budget=budget, random_state=random_state, secure=secure, method=method,
                    grid_size=grid_size)


def nanquantile(
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
    """Differentially private ``np.nanquantile``: :func:`skdp.stats.quantile` without the NaNs.

    Pure ε-DP, the curve of :func:`skdp.stats.quantile`, charged to
    ``budget`` once before the data is read.

    Parameters
    ----------
    a : array-like
        The data; NaN entries are missing values, infinite ones are refused.
    q : float or array-like of floats in [0, 1]
        The levels.
    axis : None or 0, default=None
        ``None``: one quantile of all the entries; ``0``: one per column.
    epsilon, bounds, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes; ``delta``
        is ignored (pure ε-DP).
    method : {"split", "joint"}, default="split"
        How several levels of one column share ε (see :func:`skdp.stats.quantile`).
    grid_size : int in [2, 2**20], default=1024
        Number of public candidate outputs with ``secure=True`` (see
        :func:`skdp.stats.quantile`).

    Returns
    -------
    float or ndarray
        As :func:`numpy.nanquantile` returns.

    Notes
    -----
    Each column's NaN entries are left out before the exponential mechanism
    runs on the rest; a row's NaN entry adds nothing to its column, so the
    rank utility keeps its sensitivity and the curve is that of
    :func:`skdp.stats.quantile` (pure ε-DP; ``delta`` is ignored). A column
    with no value left gets a point drawn over its bounds alone. Infinite
    entries are refused before any charge.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).normal(40, 10, size=10_000)
    >>> x[::3] = np.nan
    >>> stats.nanquantile(x, [0.25, 0.75], epsilon=1.0, bounds=(0, 100), random_state=0).round(0)
    array([33., 47.])
    """
    return _quantile(a, q, axis, epsilon=epsilon, bounds=bounds, delta=delta, budget=budget,
                     random_state=random_state, secure=secure, method=method,
                     grid_size=grid_size, skip_nan=True)


def nanmedian(
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
    """Differentially private ``np.nanmedian``: :func:`nanquantile` at q = 0.5.

    Pure ε-DP, charged to ``budget`` once before the data is read.

    Parameters
    ----------
    a : array-like
        The data; NaN entries are missing values, infinite ones are refused.
    axis : None or 0, default=None
        ``None``: one median of all the entries; ``0``: one per column.
    epsilon, bounds, delta, budget, random_state, secure
        The parameters that every function of :mod:`skdp.stats` takes; ``delta``
        is ignored (pure ε-DP).
    grid_size : int in [2, 2**20], default=1024
        Number of public candidate outputs with ``secure=True`` (see
        :func:`skdp.stats.quantile`).

    Returns
    -------
    float or ndarray
        A float with ``axis=None``, else one value per column.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import stats
    >>> x = np.random.default_rng(0).normal(40, 10, size=10_000)
    >>> x[::3] = np.nan
    >>> round(float(stats.nanmedian(x, epsilon=1.0, bounds=(0, 100), random_state=0)))
    40
    """
    return nanquantile(a, 0.5, axis, epsilon=epsilon, bounds=bounds, delta=delta, budget=budget,
                       random_state=random_state, secure=secure, grid_size=grid_size)
