"""Gaussian differential privacy (μ-GDP) and f-DP trade-off curves.

Dong, Roth & Su 2022, "Gaussian differential privacy", JRSS-B (DRS22).
A mechanism is μ-GDP when telling two neighbours apart from its output is at
least as hard as telling N(0, 1) from N(μ, 1).
"""

from __future__ import annotations

import functools
import math
import sys
from typing import TYPE_CHECKING

import numpy as np

# scipy.optimize and scipy.special are imported where used: import skdp stays fast
from ._conversions import _check_delta

if TYPE_CHECKING:
    from .._typing import ArrayLike, FloatOrArray

__all__ = [
    "compose_gdp",
    "dp_tradeoff",
    "gaussian_mu",
    "gdp_to_delta",
    "gdp_to_epsilon",
    "gdp_tradeoff",
    "group_gdp",
    "poisson_subsampled_gaussian_clt_mu",
]


def _check_mu(mu):
    mu = float(mu)
    if math.isnan(mu) or mu < 0:
        raise ValueError(f"mu must be >= 0; got {mu!r}.")
    return mu


def _check_alpha(alpha):
    alpha = np.asarray(alpha, dtype=float)
    if np.any(np.isnan(alpha)) or np.any(alpha < 0) or np.any(alpha > 1):
        raise ValueError("alpha (a type I error) must be in [0, 1].")
    return alpha


def gdp_tradeoff(mu: float, alpha: ArrayLike) -> FloatOrArray:
    """The trade-off curve G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (DRS22, Eq. 2.4 / Def. 2.5).

    The smallest type II error of any test at type I error α that tells
    N(0, 1) from N(μ, 1).

    Parameters
    ----------
    mu : float >= 0
        μ.
    alpha : float or array-like of floats in [0, 1]
        Type I errors.

    Returns
    -------
    float or ndarray
        The type II error at each ``alpha``.

    Notes
    -----
    Uses Φ⁻¹(1 − α) = −Φ⁻¹(α) to keep small α accurate.

    Examples
    --------
    >>> from skdp.accounting import gdp_tradeoff
    >>> round(float(gdp_tradeoff(1.0, 0.05)), 4)
    0.7405
    """
    from scipy.special import ndtr, ndtri

    mu = _check_mu(mu)
    alpha = _check_alpha(alpha)
    with np.errstate(over="ignore", invalid="ignore"):
        out = ndtr(-ndtri(alpha) - mu)
    return out if out.ndim else float(out)


def dp_tradeoff(epsilon: float, delta: float, alpha: ArrayLike) -> FloatOrArray:
    """The trade-off curve f_{ε,δ} of (ε, δ)-DP (DRS22, Eq. 2.3; Wasserman & Zhou 2010).

    Parameters
    ----------
    epsilon : float >= 0
        ε.
    delta : float in [0, 1]
        δ.
    alpha : float or array-like of floats in [0, 1]
        Type I errors.

    Returns
    -------
    float or ndarray
        The type II error at each ``alpha``.

    Notes
    -----
    ::

        f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)}

    Examples
    --------
    >>> from skdp.accounting import dp_tradeoff
    >>> round(float(dp_tradeoff(1.0, 0.0, 0.1)), 4)
    0.7282
    """
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon < 0:
        raise ValueError(f"epsilon must be >= 0; got {epsilon!r}.")
    delta = float(delta)
    if math.isnan(delta) or not 0 <= delta <= 1:
        raise ValueError(f"delta must be in [0, 1]; got {delta!r}.")
    alpha = _check_alpha(alpha)
    with np.errstate(over="ignore", invalid="ignore"):
        a = np.where(alpha > 0, 1.0 - delta - np.exp(epsilon) * alpha, 1.0 - delta)
        b = math.exp(-epsilon) * (1.0 - delta - alpha)
    out = np.maximum(0.0, np.maximum(a, b))
    return out if out.ndim else float(out)


def gaussian_mu(noise_multiplier: float) -> float:
    """μ of the Gaussian mechanism: μ = 1/σ (DRS22, Thm. 2.7), σ = noise std / L2 sensitivity.

    Parameters
    ----------
    noise_multiplier : float > 0
        σ.

    Returns
    -------
    float

    Examples
    --------
    >>> from skdp.accounting import gaussian_mu
    >>> gaussian_mu(10.0)
    0.1
    """
    sigma = float(noise_multiplier)
    if math.isnan(sigma) or sigma <= 0:
        raise ValueError(f"noise_multiplier must be > 0; got {noise_multiplier!r}.")
    return 1.0 / sigma


def compose_gdp(mus: ArrayLike) -> float:
    """μ of the composition of μ_i-GDP mechanisms: √(Σ μ_i²) (DRS22, Cor. 3.3).

    Parameters
    ----------
    mus : float or array-like of floats >= 0
        The μ_i of the mechanisms composed.

    Returns
    -------
    float

    Examples
    --------
    >>> from skdp.accounting import compose_gdp
    >>> round(compose_gdp([0.1] * 100), 12)
    1.0
    """
    mus = np.atleast_1d(np.asarray(mus, dtype=float))
    if np.any(np.isnan(mus)) or np.any(mus < 0):
        raise ValueError("every mu must be >= 0.")
    return float(math.sqrt(float(np.sum(mus**2))))


def group_gdp(mu: float, k: int) -> float:
    """μ-GDP gives kμ-GDP for groups of k rows (DRS22, Thm. 2.14).

    Parameters
    ----------
    mu : float >= 0
        μ.
    k : int >= 1
        The size of the group.

    Returns
    -------
    float
        kμ.

    Examples
    --------
    >>> from skdp.accounting import group_gdp
    >>> group_gdp(0.5, 3)
    1.5
    """
    mu = _check_mu(mu)
    if isinstance(k, (bool, np.bool_)) or int(k) != k or k < 1:
        raise ValueError(f"k must be an integer >= 1; got {k!r}.")
    return mu * int(k)


@functools.cache
def _gauss_legendre():
    """16-point Gauss–Legendre rule on [-1, 1] for _log_ndtr_ratio (computed on first use)."""
    return np.polynomial.legendre.leggauss(16)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_DELTA_MARGIN = 1e-12


def _log_ndtr_ratio(b, width):
    """log Φ(b + width) − log Φ(b) for width > 0, accurate also when width is small.

    The plain difference of two ``log_ndtr`` values loses about 1e-16·b²/2
    in absolute terms (and forming a = b + width then a − b loses more), which
    is large relative to the result, about width·|b|, when width is tiny: for
    μ-GDP with μ = 1e-9 and ε = 1e-8 δ was off by 5e-7 relative (found in a
    review). While the result is below 1/2 it is computed instead as
    the integral over [b, b + width] of d/dt log Φ(t) = φ(t)/Φ(t), a smooth
    function, by Gauss–Legendre quadrature with the exact width (16 nodes:
    exact to rounding on such short intervals).
    """
    from scipy.special import erfcx, log_ndtr

    a = b + width
    if width * max(abs(a), abs(b), 1.0) >= 0.5:
        return float(log_ndtr(a) - log_ndtr(b))
    nodes, weights = _gauss_legendre()
    t = b + (nodes + 1.0) * (width / 2.0)
    # φ(t)/Φ(t) = √(2/π) / erfcx(−t/√2): no cancellation for any t (erfcx is the
    # scaled complementary error function; inf for large t, where the ratio is 0)
    with np.errstate(over="ignore"):
        mills = _SQRT_2_OVER_PI / erfcx(-t / math.sqrt(2.0))
    return float(width / 2.0 * np.dot(weights, mills))


def gdp_to_delta(mu: float, epsilon: float) -> float:
    """Exact δ(ε) of μ-GDP (DRS22, Cor. 2.13).

    Parameters
    ----------
    mu : float >= 0
        μ.
    epsilon : float >= 0
        ε.

    Returns
    -------
    float
        δ, rounded up.

    Notes
    -----
    ::

        δ = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)

    computed as Φ(a)·(1 − exp(ε − (log Φ(a) − log Φ(b)))) to avoid cancellation,
    with the log-ratio by quadrature when a − b = μ is small (``_log_ndtr_ratio``).

    Examples
    --------
    >>> from skdp.accounting import gdp_to_delta
    >>> round(gdp_to_delta(1.0, 4.3772) * 1e5, 3)
    1.0
    """
    mu = _check_mu(mu)
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon < 0:
        raise ValueError(f"epsilon must be >= 0; got {epsilon!r}.")
    if mu == 0.0 or epsilon == math.inf:
        return 0.0
    if mu == math.inf:
        return 1.0
    from scipy.special import log_ndtr

    a, b = -epsilon / mu + mu / 2.0, -epsilon / mu - mu / 2.0  # a − b = μ exactly
    log_a = float(log_ndtr(a))
    # δ > 0 for every finite ε (a Gaussian is never pure DP): where δ is below the
    # smallest float (log Φ(a) = −inf once ε/μ is beyond about 1e154, or exp underflows),
    # the smallest positive float is returned, still an upper bound and never a pure-DP 0
    tiny = math.ulp(0.0)
    if log_a == -math.inf:
        return tiny
    ratio = epsilon - _log_ndtr_ratio(b, mu)  # < 0: δ > 0 for all finite ε
    # rounded up by 1e-12 relative, above the float error measured against
    # 80-digit references (at most 3e-13 below them)
    delta = math.exp(log_a) * -math.expm1(min(ratio, 0.0)) * (1.0 + _DELTA_MARGIN)
    return float(min(1.0, max(tiny, delta)))


def gdp_to_epsilon(mu: float, delta: float) -> float:
    """Smallest ε with μ-GDP ⇒ (ε, δ)-DP: the inverse of :func:`gdp_to_delta`.

    Parameters
    ----------
    mu : float >= 0
        μ.
    delta : float in [0, 1)
        δ.

    Returns
    -------
    float
        ε, on the safe side.

    Notes
    -----
    Solved by a bracketing root finder (Brent); the returned ε is nudged up
    until ``gdp_to_delta(mu, eps) <= delta``, so it is on the safe side.

    Examples
    --------
    >>> from skdp.accounting import gdp_to_epsilon
    >>> round(gdp_to_epsilon(1.0, 1e-5), 4)
    4.3772
    """
    mu = _check_mu(mu)
    delta = _check_delta(delta)
    if mu == 0.0:
        return 0.0
    if delta == 0.0 or mu == math.inf:
        return math.inf
    if gdp_to_delta(mu, 0.0) <= delta:
        return 0.0

    def f(eps):
        return gdp_to_delta(mu, eps) - delta

    # μ-GDP is (μ²/2)-zCDP (Bun & Steinke 2016, Prop. 1.6 via the Gaussian), so
    # the Prop. 1.3 bound ε = μ²/2 + μ√(2 log(1/δ)) satisfies f <= 0.
    # (μ/2)·μ, not μ**2/2, and at most a quarter of the float maximum, so that
    # the root finder's midpoints stay finite; beyond it ε is reported as inf
    # (an upper bound)
    huge = sys.float_info.max / 4.0
    hi = min(mu * (mu / 2.0) + mu * math.sqrt(2.0 * math.log(1.0 / delta)) + 1.0, huge)
    while f(hi) > 0 and hi < huge:  # guard; not expected
        hi = min(2.0 * hi, huge)
    if f(hi) > 0:
        return math.inf
    from scipy.optimize import brentq

    eps = brentq(f, 0.0, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)
    step = max(1e-14, 1e-14 * eps)
    while f(eps) > 0:  # safe side
        eps += step
        step *= 2.0
    return float(eps)


def poisson_subsampled_gaussian_clt_mu(sampling_rate: float, noise_multiplier: float,
                                       steps: int) -> float:
    """APPROXIMATE μ of DP-SGD from the central limit theorem. Never use it to charge a budget.

    A limit as T → ∞, not a bound: at finite T it UNDERESTIMATES ε, sometimes
    by a lot. It returns a bare float, never an
    :class:`~skdp.accounting.RDPCurve`, so that it cannot authorise a spend;
    use :func:`poisson_subsampled_gaussian_rdp` for that.

    Parameters
    ----------
    sampling_rate : float in [0, 1]
        q, the Poisson sampling rate.
    noise_multiplier : float > 0
        σ.
    steps : int >= 0
        T.

    Returns
    -------
    float
        μ ≈ q √(T (e^{1/σ²} − 1)).

    Notes
    -----
    Bu, Dong, Long & Su 2020 (HDSR), Sec. 3, and DRS22, Sec. 5 (CLT for
    NoisySGD): with Poisson rate q, noise multiplier σ and T steps,
    μ ≈ q √(T (e^{1/σ²} − 1)). This is a limit as T → ∞ with q√T fixed, not
    a bound: at finite T it UNDERESTIMATES ε, sometimes by a lot. It returns a
    bare float, never an :class:`~skdp.accounting.RDPCurve`, so that it cannot
    authorise a spend; use :func:`poisson_subsampled_gaussian_rdp` for that.

    Examples
    --------
    >>> from skdp.accounting import poisson_subsampled_gaussian_clt_mu
    >>> round(poisson_subsampled_gaussian_clt_mu(0.01, 1.0, 10_000), 4)
    1.3108
    """
    q = float(sampling_rate)
    if math.isnan(q) or not 0 <= q <= 1:
        raise ValueError(f"sampling_rate must be in [0, 1]; got {sampling_rate!r}.")
    sigma = float(noise_multiplier)
    if math.isnan(sigma) or sigma <= 0:
        raise ValueError(f"noise_multiplier must be > 0; got {noise_multiplier!r}.")
    if isinstance(steps, (bool, np.bool_)) or int(steps) != steps or steps < 0:
        raise ValueError(f"steps must be an integer >= 0; got {steps!r}.")
    return float(q * math.sqrt(int(steps) * math.expm1(1.0 / sigma**2)))
