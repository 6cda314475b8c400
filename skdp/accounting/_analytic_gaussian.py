"""The analytic Gaussian mechanism: the exact smallest σ for (ε, δ)-DP."""

import math

from ._conversions import _check_delta
from ._gdp import gdp_to_delta

__all__ = ["analytic_gaussian_sigma"]


def _delta_of_sigma(epsilon, sigma, sensitivity):
    # Balle & Wang 2018, Thm. 8: the Gaussian mechanism with std σ is (ε, δ)-DP iff
    # Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) <= δ; this is μ-GDP's δ(ε) with μ = Δ/σ.
    return gdp_to_delta(sensitivity / sigma, epsilon)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest noise std σ for which the Gaussian mechanism is (ε, δ)-DP.

    Balle & Wang 2018 ("Improving the Gaussian mechanism for differential
    privacy"), Thm. 8 and Alg. 1: the smallest σ with::

        Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) <= δ

    found by bracketing σ geometrically and Brent's method in log σ. The
    returned σ satisfies the inequality (it is nudged up if rounding left it
    just short), so it is on the safe side. Valid for every ε > 0, unlike the
    classic σ = Δ√(2 log(1.25/δ))/ε.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)
    sensitivity : float > 0, default=1.0
        Δ, the L2 sensitivity under add/remove-one-row.

    Returns
    -------
    sigma : float
        The noise standard deviation (not a multiplier: it scales with Δ).

    Examples
    --------
    >>> from skdp.accounting import analytic_gaussian_sigma
    >>> round(analytic_gaussian_sigma(1.0, 1e-5), 4)
    3.7306
    """
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon <= 0 or epsilon == math.inf:
        raise ValueError(f"epsilon must be finite and > 0; got {epsilon!r}.")
    delta = _check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0: no finite Gaussian noise gives pure DP.")
    sensitivity = float(sensitivity)
    if math.isnan(sensitivity) or sensitivity <= 0 or sensitivity == math.inf:
        raise ValueError(f"sensitivity must be finite and > 0; got {sensitivity!r}.")

    def f(log_sigma):
        return _delta_of_sigma(epsilon, math.exp(log_sigma), sensitivity) - delta

    # Start from the classic σ (Dwork & Roth 2014, Thm. A.1) and bracket geometrically.
    guess = math.log(sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon)
    lo, hi = guess - 1.0, guess + 1.0
    while f(hi) > 0:
        lo, hi = hi, hi + 2.0
    while f(lo) <= 0:
        lo, hi = lo - 2.0, lo
        if lo < -745:  # σ below the float range: δ(σ) is already <= target
            return math.exp(hi)
    from scipy.optimize import brentq  # imported where used: import skdp stays fast

    log_sigma = brentq(f, lo, hi, xtol=1e-13, rtol=1e-15)
    sigma = math.exp(log_sigma)
    step = sigma * 1e-15
    while _delta_of_sigma(epsilon, sigma, sensitivity) > delta:  # safe side
        sigma += step
        step *= 2.0
    return sigma
