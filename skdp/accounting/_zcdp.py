"""Conversions from ρ-zero-concentrated DP (zCDP) to (ε, δ)-DP."""

from __future__ import annotations

import math

import numpy as np

# scipy.optimize is imported where used: import skdp stays fast
from ._conversions import _check_delta

__all__ = ["zcdp_to_epsilon", "zcdp_to_delta"]


def _check_rho(rho):
    rho = float(rho)
    if math.isnan(rho) or rho < 0 or rho == math.inf:
        raise ValueError(f"rho must be finite and >= 0; got {rho!r}.")
    return rho


def _check_method(method):
    if method not in ("cks20", "bs16"):
        raise ValueError(f"method must be 'cks20' or 'bs16'; got {method!r}.")
    return method


def _minimise_over_alpha(objective):
    """min over α > 1 of ``objective`` (vectorised over α), searched in t = log(α − 1).

    A log-spaced grid of t finds the basin, then Brent's bounded method
    refines it. Any α gives a valid bound, so an inexact minimiser only loses
    tightness, never safety.
    """
    grid = np.linspace(-16.0, 16.0, 321)
    with np.errstate(over="ignore", invalid="ignore"):
        values = objective(1.0 + np.exp(grid))
    values = np.where(np.isnan(values), np.inf, values)
    k = int(np.argmin(values))
    best = float(values[k])
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(
        lambda t: float(objective(np.array(1.0 + math.exp(t)))),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-10},
    )
    if np.isfinite(res.fun):
        best = min(best, float(res.fun))
    return best


def zcdp_to_epsilon(rho: float, delta: float, *, method: str = "cks20") -> float:
    """ε such that a ρ-zCDP mechanism is (ε, δ)-DP.

    - ``"bs16"``: Bun & Steinke 2016, Prop. 1.3: ε = ρ + 2√(ρ log(1/δ)).
    - ``"cks20"`` (default): Canonne, Kamath & Steinke 2020, Prop. 12 /
      Cor. 13 applied to the RDP curve ρα (Bun & Steinke 2016, Def. 1.1),
      minimised over all real α > 1::

          ε = min_α  ρα + log(1 − 1/α) − (log δ + log α)/(α − 1)

      It is never larger than ``"bs16"``.

    Parameters
    ----------
    rho : float >= 0
    delta : float in [0, 1)
    method : {"cks20", "bs16"}

    Returns
    -------
    epsilon : float
        ``inf`` when ``delta == 0`` and ``rho > 0``.

    Examples
    --------
    >>> from skdp.accounting import zcdp_to_epsilon
    >>> round(zcdp_to_epsilon(0.5, 1e-5, method="bs16"), 4)
    5.2985
    >>> bool(zcdp_to_epsilon(0.5, 1e-5) < 5.2985)
    True
    """
    rho = _check_rho(rho)
    delta = _check_delta(delta)
    _check_method(method)
    if rho == 0.0:
        return 0.0
    if delta == 0.0:
        return math.inf
    log_inv_delta = -math.log(delta)
    bs16 = rho + 2.0 * math.sqrt(rho * log_inv_delta)  # Bun & Steinke 2016, Prop. 1.3
    if method == "bs16":
        return bs16

    def objective(alpha):  # CKS20 Prop. 12 with RDP ε(α) = ρα
        return rho * alpha + np.log1p(-1.0 / alpha) - (math.log(delta) + np.log(alpha)) / (alpha - 1.0)

    eps = _minimise_over_alpha(objective)
    return max(0.0, min(eps, bs16))


def zcdp_to_delta(rho: float, epsilon: float, *, method: str = "cks20") -> float:
    """Smallest δ such that a ρ-zCDP mechanism is (ε, δ)-DP.

    Parameters
    ----------
    rho : float >= 0
    epsilon : float >= 0
    method : {"cks20", "bs16"}, default="cks20"
        The conversion (see Notes).

    Returns
    -------
    delta : float

    Notes
    -----
    - ``"bs16"``: the inverse of Bun & Steinke 2016, Prop. 1.3:
      δ = exp(−(ε − ρ)²/(4ρ)) for ε >= ρ (and 1 below).
    - ``"cks20"`` (default): Canonne, Kamath & Steinke 2020, Cor. 13::

          δ = min_α  exp((α − 1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α

    Examples
    --------
    >>> from skdp.accounting import zcdp_to_delta, zcdp_to_epsilon
    >>> eps = zcdp_to_epsilon(0.5, 1e-5, method="bs16")
    >>> round(zcdp_to_delta(0.5, eps, method="bs16") * 1e5, 6)
    1.0
    >>> bool(zcdp_to_delta(0.5, eps) < 1e-5)
    True
    """
    rho = _check_rho(rho)
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon < 0:
        raise ValueError(f"epsilon must be >= 0; got {epsilon!r}.")
    _check_method(method)
    if rho == 0.0:
        return 0.0
    if epsilon == math.inf:
        return 0.0
    if epsilon <= rho:
        bs16 = 1.0
    else:
        bs16 = math.exp(-((epsilon - rho) ** 2) / (4.0 * rho))  # inverse of BS16 Prop. 1.3
    if method == "bs16":
        return bs16

    def log_delta(alpha):  # CKS20 Cor. 13, in log space
        return (alpha - 1.0) * (alpha * rho - epsilon) + alpha * np.log1p(-1.0 / alpha) - np.log(alpha - 1.0)

    value = _minimise_over_alpha(log_delta)
    return float(min(1.0, bs16, math.exp(min(value, 0.0))))
