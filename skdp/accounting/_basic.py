"""RDP curves of the basic mechanisms, vectorised over the orders.

Every function returns an :class:`~skdp.accounting.RDPCurve` under the
add/remove-one-row relation. Noise is always given relative to the L2 (or L1)
sensitivity, so the curves need no data.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ._curve import RDPCurve
from ._events import (
    ApproximateDPEvent,
    BoundedRangeEvent,
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    PureDPEvent,
    RandomizedResponseEvent,
    ZCDPEvent,
)
from ._orders import check_orders

if TYPE_CHECKING:
    from .._typing import ArrayLike

__all__ = [
    "gaussian_rdp",
    "laplace_rdp",
    "pure_dp_rdp",
    "randomized_response_rdp",
    "zcdp_rdp",
    "approximate_dp_rdp",
]


def _positive(name, value, *, allow_inf=False):
    value = float(value)
    if math.isnan(value) or value <= 0 or (value == math.inf and not allow_inf):
        kind = "> 0" if allow_inf else "finite and > 0"
        raise ValueError(f"{name} must be {kind}; got {value!r}.")
    return value


def _fmt(x):
    return f"{x:.6g}"


def gaussian_rdp(noise_multiplier: float, *, orders: ArrayLike | None = None) -> RDPCurve:
    """RDP of the Gaussian mechanism: ε(α) = α / (2σ²).

    Mironov 2017, Prop. 7, with σ = noise std / L2 sensitivity.

    Parameters
    ----------
    noise_multiplier : float > 0
        σ; ``inf`` gives the zero curve.
    orders : array-like, optional

    Returns
    -------
    RDPCurve

    Examples
    --------
    >>> from skdp.accounting import gaussian_rdp
    >>> curve = gaussian_rdp(2.0, orders=[2, 4])
    >>> curve.rdp.tolist()
    [0.25, 0.5]
    """
    sigma = _positive("noise_multiplier", noise_multiplier, allow_inf=True)
    orders = check_orders(orders)
    return RDPCurve(
        orders,
        orders / (2.0 * sigma**2),
        pure_epsilon=0.0 if sigma == math.inf else math.inf,
        mechanism=f"gaussian(noise_multiplier={_fmt(sigma)})",
        event=ComposedEvent(()) if sigma == math.inf else GaussianEvent(sigma),
    )


def laplace_rdp(scale: float, *, sensitivity: float = 1.0,
                orders: ArrayLike | None = None) -> RDPCurve:
    """RDP of the Laplace mechanism with L1 ``sensitivity`` and noise ``scale``.

    Parameters
    ----------
    scale : float > 0
        The noise's scale b (density ∝ exp(−|x|/b)); ``inf`` gives the zero curve.
    sensitivity : float > 0, default=1.0
        The query's L1 sensitivity.
    orders : array-like, optional
        The orders α of the curve; ``None``: :data:`DEFAULT_ORDERS`.

    Returns
    -------
    RDPCurve

    Notes
    -----
    Mironov 2017, Prop. 6 (table 2), with λ = scale / sensitivity::

        ε(α) = 1/(α−1) · log( α/(2α−1) · e^{(α−1)/λ} + (α−1)/(2α−1) · e^{−α/λ} )

    evaluated with log-sum-exp so that large α / λ does not overflow. Its pure
    bound is ε = 1/λ.

    Examples
    --------
    >>> from skdp.accounting import laplace_rdp
    >>> round(laplace_rdp(1.0).epsilon(1e-5) * 1, 4) <= 1.0
    True
    >>> round((laplace_rdp(1.0) * 10).epsilon(1e-5), 4)
    9.9903
    """
    lam = _positive("scale", scale, allow_inf=True) / _positive("sensitivity", sensitivity)
    orders = check_orders(orders)
    inv = 1.0 / lam
    log_terms = np.logaddexp(
        np.log(orders / (2 * orders - 1)) + (orders - 1) * inv,
        np.log((orders - 1) / (2 * orders - 1)) - orders * inv,
    )
    rdp = np.maximum(log_terms / (orders - 1), 0.0)
    return RDPCurve(
        orders,
        rdp,
        pure_epsilon=inv,
        mechanism=f"laplace(scale/sensitivity={_fmt(lam)})",
        event=ComposedEvent(()) if lam == math.inf else LaplaceEvent(lam),
    )


def _binary_rr_rdp(epsilon, orders):
    # D_α(P‖Q) for P = (p, 1−p), Q = (1−p, p), p = e^ε/(1+e^ε):
    # 1/(α−1) log( p^α (1−p)^{1−α} + (1−p)^α p^{1−α} ), in log space.
    log_p = -np.logaddexp(0.0, -epsilon)
    log_q = -np.logaddexp(0.0, epsilon)
    a = orders * log_p + (1 - orders) * log_q
    b = orders * log_q + (1 - orders) * log_p
    return np.maximum(np.logaddexp(a, b) / (orders - 1), 0.0)


def pure_dp_rdp(epsilon: float, *, orders: ArrayLike | None = None) -> RDPCurve:
    """The tightest RDP curve implied by pure ε-DP.

    Parameters
    ----------
    epsilon : float > 0
        ε, finite.
    orders : array-like, optional
        The orders α of the curve; ``None``: :data:`DEFAULT_ORDERS`.

    Returns
    -------
    RDPCurve

    Notes
    -----
    Every ε-DP mechanism is a post-processing of binary randomized response
    with parameter ε (Kairouz, Oh & Viswanath 2015, Thm. 2.4), so by the
    data-processing inequality its RDP curve is at most that of randomized
    response, which is attained; this equals Bun & Steinke 2016, Prop. 3.3::

        ε(α) = 1/(α−1) · log( (sinh(αε) − sinh((α−1)ε)) / sinh(ε) )

    It is never larger than min(ε, αε²/2).

    Examples
    --------
    >>> from skdp.accounting import pure_dp_rdp
    >>> curve = pure_dp_rdp(1.0, orders=[2.0, 1024.0])
    >>> [round(float(v), 4) for v in curve.rdp]
    [0.7353, 0.9997]
    >>> curve.epsilon(0.0)
    1.0
    """
    epsilon = _positive("epsilon", epsilon)
    orders = check_orders(orders)
    return RDPCurve(
        orders,
        _binary_rr_rdp(epsilon, orders),
        pure_epsilon=epsilon,
        mechanism=f"pure_dp(epsilon={_fmt(epsilon)})",
        event=PureDPEvent(epsilon),
    )


def _bounded_range_rdp(epsilon, orders=None):
    """RDP of an ε-bounded-range mechanism (the exponential mechanism at ε), with its event.

    The mechanism is ε-DP and (ε²/8)-zCDP (Cesar & Rogers 2021); both curves
    are valid, so their minimum at each order is too.
    """
    epsilon = _positive("epsilon", epsilon)
    pure = pure_dp_rdp(epsilon, orders=orders)
    zcdp = zcdp_rdp(epsilon**2 / 8.0, orders=pure.orders)
    return RDPCurve(
        pure.orders,
        np.minimum(pure.rdp, zcdp.rdp),
        pure_epsilon=epsilon,
        mechanism=f"exponential(epsilon={epsilon:.6g})",
        event=BoundedRangeEvent(epsilon),
    )


def randomized_response_rdp(epsilon: float, *, n_categories: int = 2,
                            orders: ArrayLike | None = None) -> RDPCurve:
    """RDP of k-ary randomized response with parameter ε.

    Parameters
    ----------
    epsilon : float > 0
        ε, finite.
    n_categories : int >= 2, default=2
        k, the number of possible values.
    orders : array-like, optional
        The orders α of the curve; ``None``: :data:`DEFAULT_ORDERS`.

    Returns
    -------
    RDPCurve

    Notes
    -----
    k-RR reports the true category with probability e^ε/(e^ε + k − 1) and each
    other with probability 1/(e^ε + k − 1) (Warner 1965; Kairouz, Oh &
    Viswanath 2016). The worst pair of inputs swaps two categories, so::

        ε(α) = 1/(α−1) · log( p₁^α p₂^{1−α} + p₂^α p₁^{1−α} + (k − 2) p₂ )

    For k = 2 it equals :func:`pure_dp_rdp`.

    Examples
    --------
    >>> from skdp.accounting import randomized_response_rdp, pure_dp_rdp
    >>> bool(randomized_response_rdp(1.0, n_categories=5).rdp[-1] < pure_dp_rdp(1.0).rdp[-1])
    True
    """
    epsilon = _positive("epsilon", epsilon)
    k = int(n_categories)
    if k != n_categories or k < 2:
        raise ValueError(f"n_categories must be an integer >= 2; got {n_categories!r}.")
    orders = check_orders(orders)
    if k == 2:
        rdp = _binary_rr_rdp(epsilon, orders)
    else:
        log_norm = np.logaddexp(epsilon, math.log(k - 1))
        log_p1, log_p2 = epsilon - log_norm, -log_norm
        a = orders * log_p1 + (1 - orders) * log_p2
        b = orders * log_p2 + (1 - orders) * log_p1
        c = np.full(orders.shape, math.log(k - 2) + log_p2)
        log_sum = np.logaddexp(np.logaddexp(a, b), c)
        rdp = np.maximum(log_sum / (orders - 1), 0.0)
    return RDPCurve(
        orders,
        rdp,
        pure_epsilon=epsilon,
        mechanism=f"randomized_response(epsilon={_fmt(epsilon)}, k={k})",
        event=RandomizedResponseEvent(epsilon, k),
    )


def zcdp_rdp(rho: float, *, orders: ArrayLike | None = None) -> RDPCurve:
    """RDP curve of a ρ-zCDP mechanism: ε(α) = ρα (Bun & Steinke 2016, Def. 1.1).

    Parameters
    ----------
    rho : float >= 0
        ρ, finite.
    orders : array-like, optional
        The orders α of the curve; ``None``: :data:`DEFAULT_ORDERS`.

    Returns
    -------
    RDPCurve

    Examples
    --------
    >>> from skdp.accounting import zcdp_rdp
    >>> zcdp_rdp(0.5, orders=[2, 3]).rdp.tolist()
    [1.0, 1.5]
    """
    rho = float(rho)
    if math.isnan(rho) or rho < 0 or rho == math.inf:
        raise ValueError(f"rho must be finite and >= 0; got {rho!r}.")
    orders = check_orders(orders)
    return RDPCurve(
        orders,
        rho * orders,
        pure_epsilon=0.0 if rho == 0 else math.inf,
        mechanism=f"zcdp(rho={_fmt(rho)})",
        event=ZCDPEvent(rho),
    )


def approximate_dp_rdp(epsilon: float, delta: float, *,
                       orders: ArrayLike | None = None) -> RDPCurve:
    """The curve of an (ε, δ)-DP mechanism that has no RDP analysis.

    Parameters
    ----------
    epsilon : float > 0
        ε, finite.
    delta : float in [0, 1)
        δ.
    orders : array-like, optional
        The orders α of the curve; ``None``: :data:`DEFAULT_ORDERS`.

    Returns
    -------
    RDPCurve

    Notes
    -----
    Its RDP part is the pure ε-DP curve and its δ adds up separately under
    composition; see :class:`~skdp.accounting.RDPCurve` for why this is sound.

    Examples
    --------
    >>> from skdp.accounting import approximate_dp_rdp
    >>> curve = approximate_dp_rdp(1.0, 1e-6) * 3
    >>> curve.delta, curve.epsilon(1e-6 * 3)
    (3e-06, 3.0)
    """
    curve = pure_dp_rdp(epsilon, orders=orders)
    delta = float(delta)
    if math.isnan(delta) or not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1); got {delta!r}.")
    return RDPCurve(
        curve.orders,
        curve.rdp,
        delta=delta,
        pure_epsilon=curve.pure_epsilon,
        mechanism=f"approximate_dp(epsilon={_fmt(epsilon)}, delta={_fmt(delta)})",
        event=ApproximateDPEvent(epsilon, delta),
    )
