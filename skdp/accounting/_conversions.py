"""Conversions from Rényi DP to (ε, δ)-DP, vectorised over the orders."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .._typing import ArrayLike

__all__ = ["rdp_to_epsilon", "rdp_to_delta"]


def _check_delta(delta):
    delta = float(delta)
    if not 0.0 <= delta < 1.0 or math.isnan(delta):
        raise ValueError(f"delta must be in [0, 1); got {delta!r}.")
    return delta


def rdp_to_epsilon(orders: ArrayLike, rdp: ArrayLike, delta: float, *,
                   method: str = "improved") -> tuple[float, float]:
    """Smallest ε over the orders such that the RDP curve implies (ε, δ)-DP.

    ``method="improved"`` uses Canonne, Kamath & Steinke 2020, Prop. 12
    (also Balle et al. 2020, Thm. 21; Asoodeh et al. 2020)::

        ε = min_α  r(α) + log(1 − 1/α) − (log δ + log α) / (α − 1)

    ``method="classic"`` uses Mironov 2017, Prop. 3: ε = r(α) + log(1/δ)/(α − 1).

    Parameters
    ----------
    orders : ndarray of shape (n_orders,)
        Rényi orders α > 1.
    rdp : ndarray of shape (n_orders,)
        RDP ε(α) at each order; ``inf`` where unbounded.
    delta : float in [0, 1)
    method : {"improved", "classic"}

    Returns
    -------
    epsilon : float
        ``inf`` when no order gives a finite bound (for example ``delta=0``).
    order : float
        The order that attains the minimum (``nan`` when ``epsilon`` is ``inf``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.accounting import DEFAULT_ORDERS, rdp_to_epsilon
    >>> eps, order = rdp_to_epsilon(DEFAULT_ORDERS, DEFAULT_ORDERS / 2, 1e-5)
    >>> round(eps, 4), float(order)
    (4.7285, 5.4)
    """
    orders = np.asarray(orders, dtype=float)
    rdp = np.asarray(rdp, dtype=float)
    delta = _check_delta(delta)
    if orders.shape != rdp.shape:
        raise ValueError("orders and rdp must have the same shape.")
    if np.any(np.isnan(rdp)) or np.any(rdp < 0):
        raise ValueError("RDP values must be >= 0 (inf allowed), never NaN.")
    if delta == 0.0:
        return math.inf, math.nan
    with np.errstate(over="ignore", invalid="ignore"):
        if method == "improved":
            eps = rdp + np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1)
        elif method == "classic":
            eps = rdp - math.log(delta) / (orders - 1)
        else:
            raise ValueError(f"method must be 'improved' or 'classic'; got {method!r}.")
    eps = np.where(np.isfinite(rdp), eps, np.inf)
    idx = int(np.argmin(eps))
    if not np.isfinite(eps[idx]):
        return math.inf, math.nan
    return max(0.0, float(eps[idx])), float(orders[idx])


def rdp_to_delta(orders: ArrayLike, rdp: ArrayLike, epsilon: float) -> tuple[float, float]:
    """Smallest δ over the orders such that the RDP curve implies (ε, δ)-DP.

    The inverse of the improved conversion, Canonne, Kamath & Steinke 2020, Prop. 12::

        δ = min_α  exp((α − 1)(r(α) − ε)) · (1 − 1/α)^α / (α − 1)

    Parameters
    ----------
    orders, rdp : ndarray of shape (n_orders,)
    epsilon : float >= 0

    Returns
    -------
    delta : float in [0, 1]
    order : float
        The order that attains the minimum (``nan`` when ``delta`` is 1).

    Examples
    --------
    >>> from skdp.accounting import DEFAULT_ORDERS, rdp_to_delta
    >>> d, order = rdp_to_delta(DEFAULT_ORDERS, DEFAULT_ORDERS / 2, 4.7285)
    >>> bool(abs(d - 1e-5) < 1e-8)
    True
    """
    orders = np.asarray(orders, dtype=float)
    rdp = np.asarray(rdp, dtype=float)
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon < 0:
        raise ValueError(f"epsilon must be >= 0; got {epsilon!r}.")
    if np.any(np.isnan(rdp)) or np.any(rdp < 0):
        raise ValueError("RDP values must be >= 0 (inf allowed), never NaN.")
    with np.errstate(over="ignore", invalid="ignore"):
        log_delta = (orders - 1) * (rdp - epsilon) + orders * np.log1p(-1.0 / orders) - np.log(orders - 1)
    log_delta = np.where(np.isfinite(rdp), log_delta, np.inf)
    idx = int(np.argmin(log_delta))
    if not log_delta[idx] < 0:
        return 1.0, math.nan
    return float(math.exp(log_delta[idx])), float(orders[idx])
