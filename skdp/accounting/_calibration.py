"""Noise calibration: the smallest noise multiplier σ that meets a target (ε, δ)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ._accountants import PLDAccountant
from ._conversions import _check_delta, rdp_to_epsilon
from ._events import GaussianEvent, PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent
from ._gdp import gdp_to_delta, gdp_to_epsilon
from ._orders import check_orders
from ._subsampled import (
    _check_rate,
    _check_sigma,
    _check_steps,
    _PoissonGaussian,
    _WORGaussian,
)

if TYPE_CHECKING:
    from .._typing import ArrayLike

__all__ = ["calibrate_noise_multiplier", "epsilon_for"]

_SAMPLINGS = ("poisson", "without_replacement")


def _one_step_engine(sampling, sampling_rate, orders):
    if sampling == "poisson":
        return _PoissonGaussian(sampling_rate, orders)
    if sampling == "without_replacement":
        return _WORGaussian(sampling_rate, orders)
    raise ValueError(f"sampling must be one of {_SAMPLINGS}; got {sampling!r}.")


def epsilon_for(noise_multiplier: float, delta: float, *, sampling_rate: float = 1.0,
                steps: int = 1, sampling: str = "poisson", orders: ArrayLike | None = None,
                accountant: str = "tightest") -> float:
    """ε at ``delta`` of ``steps`` subsampled Gaussian steps with noise multiplier σ.

    Parameters
    ----------
    noise_multiplier : float > 0
        σ = noise std / L2 sensitivity.
    delta : float in (0, 1)
    sampling_rate : float in (0, 1], default=1.0
    steps : int >= 1, default=1
    sampling : {"poisson", "without_replacement"}, default="poisson"
    orders : array-like, optional
        The orders of the RDP curve; ``None``: :data:`DEFAULT_ORDERS`.
    accountant : {"tightest", "pld", "rdp"}, default="tightest"
        The accountant (see Notes).

    Returns
    -------
    float
        ε, an upper bound.

    Notes
    -----
    With ``accountant="rdp"`` this is the same number as
    ``poisson_subsampled_gaussian_rdp(...).epsilon(delta)`` (or the
    without-replacement curve), using the improved RDP → (ε, δ) conversion of
    Canonne, Kamath & Steinke 2020, Prop. 12. With ``accountant="pld"`` it is
    the ε of :class:`~skdp.accounting.PLDAccountant` (``orders`` is then
    unused): tighter, and never below the exact ε. ``"tightest"`` (the
    default) is the smaller of the two, valid since both are upper bounds.

    Examples
    --------
    >>> from skdp.accounting import epsilon_for
    >>> round(epsilon_for(4.0, 1e-5, sampling_rate=0.01, steps=10_000, accountant="rdp"), 4)
    1.0355
    >>> round(epsilon_for(4.0, 1e-5, sampling_rate=0.01, steps=10_000, accountant="pld"), 3)
    0.947
    >>> round(epsilon_for(4.0, 1e-5, sampling_rate=0.01, steps=10_000), 3)
    0.947
    """
    sigma = _check_sigma(noise_multiplier)
    delta = _check_delta(delta)
    q = _check_rate(sampling_rate)
    steps = _check_steps(steps)
    accountant = _check_accountant(accountant)
    if accountant == "tightest":
        return min(epsilon_for(sigma, delta, sampling_rate=q, steps=steps, sampling=sampling,
                               orders=orders, accountant=a) for a in ("rdp", "pld"))
    if accountant == "pld":
        _check_sampling(sampling)
        return _pld_epsilon(sigma, delta, q, steps, sampling)
    orders = check_orders(orders)
    engine = _one_step_engine(sampling, q, orders)
    return rdp_to_epsilon(orders, engine.rdp(sigma) * steps, delta)[0]


def _gaussian_sigma_closed_form(target, delta, steps, orders):
    """Smallest σ with min_α steps·α/(2σ²) + c(α) <= target, for the plain Gaussian.

    With c(α) = log(1 − 1/α) − (log δ + log α)/(α − 1) (CKS20 Prop. 12) and RDP
    α/(2σ²) (Mironov 2017, Prop. 7), each order α alone needs
    σ >= √(steps·α / (2(target − c(α)))), so σ* is the smallest of these.
    """
    c = np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1.0)
    slack = target - c
    ok = slack > 0
    if not np.any(ok):
        return math.inf
    # halved before the division: 2·slack overflows when the target is near the float maximum
    return float(np.min(np.sqrt(steps * orders[ok] / 2.0 / slack[ok])))


def calibrate_noise_multiplier(
    target_epsilon: float,
    delta: float,
    *,
    sampling_rate: float = 1.0,
    steps: int = 1,
    sampling: str = "poisson",
    orders: ArrayLike | None = None,
    rtol: float = 1e-5,
    accountant: str = "tightest",
) -> float:
    """The smallest noise multiplier σ whose composed ε at ``delta`` is <= the target.

    The privacy is that of the subsampled Gaussian (Poisson sampling, or
    sampling without replacement) composed ``steps`` times. The σ returned is
    on the safe side (its ε is <= the target) and within a factor (1 + rtol)
    of the smallest such σ; Notes describe the search.

    Parameters
    ----------
    target_epsilon : float > 0, finite
        ``inf`` raises: no noise at all is the answer to "no privacy", and a
        noise multiplier of 0 is not a valid input to any skdp mechanism, so
        callers must handle ε = ∞ themselves (for example by not adding noise).
    delta : float in (0, 1)
    sampling_rate : float in (0, 1], default=1.0
    steps : int >= 1, default=1
    sampling : {"poisson", "without_replacement"}, default="poisson"
    orders : array-like, optional
    rtol : float in [1e-12, 1e-2], default=1e-5
    accountant : {"tightest", "pld", "rdp"}, default="tightest"
        ``"rdp"`` calibrates on the RDP curve (see Notes). ``"pld"`` calibrates
        with :class:`~skdp.accounting.PLDAccountant` instead (a smaller σ for
        the same target; ``orders`` is unused): the exact μ-GDP inverse for
        the plain Gaussian, otherwise the same bracketing search on the PLD's
        ε, which is never below the exact ε. ``"tightest"`` returns the
        smaller of both σ: its ε by the tightest accountant
        (:func:`epsilon_for` and :func:`epsilon_of` with their default) is
        within the target.

    Returns
    -------
    noise_multiplier : float

    Notes
    -----
    The privacy is that of :func:`poisson_subsampled_gaussian_rdp` (or
    :func:`sampled_without_replacement_gaussian_rdp`) composed ``steps``
    times, converted with CKS20 Prop. 12 on ``orders``. ε decreases in σ, so
    the search keeps a bracket [lo, hi] with ε(lo) > target >= ε(hi), narrowed
    in log σ by the Illinois variant of regula falsi until hi/lo − 1 <= rtol,
    and returns hi. So the answer is always on the safe side (its ε is <= the
    target) and within a factor (1 + rtol) of the smallest such σ. The one-step
    RDP is computed once per σ and multiplied by ``steps``; for the plain
    Gaussian (sampling_rate = 1 with Poisson sampling) σ is solved per order in
    closed form.

    Examples
    --------
    >>> from skdp.accounting import calibrate_noise_multiplier, epsilon_for
    >>> sigma = calibrate_noise_multiplier(1.0, 1e-5, sampling_rate=0.01, steps=10_000, accountant="rdp")
    >>> round(sigma, 3)
    4.126
    >>> epsilon_for(sigma, 1e-5, sampling_rate=0.01, steps=10_000, accountant="rdp") <= 1.0
    True
    >>> sigma = calibrate_noise_multiplier(1.0, 1e-5, sampling_rate=0.01, steps=10_000)
    >>> round(sigma, 2), epsilon_for(sigma, 1e-5, sampling_rate=0.01, steps=10_000) <= 1.0
    (3.81, True)
    """
    target = float(target_epsilon)
    if math.isnan(target) or target <= 0:
        raise ValueError(f"target_epsilon must be > 0; got {target_epsilon!r}.")
    if target == math.inf:
        raise ValueError(
            "target_epsilon is inf: no noise is needed, and a noise multiplier of 0 "
            "is not a valid mechanism parameter; skip the noise instead."
        )
    delta = _check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0: Gaussian noise never gives pure DP.")
    q = _check_rate(sampling_rate)
    steps = _check_steps(steps)
    if q == 0.0 or steps == 0:
        raise ValueError("sampling_rate and steps must be > 0: nothing is released, so there is no σ to find.")
    rtol = float(rtol)
    if not 1e-12 <= rtol <= 1e-2:
        raise ValueError(f"rtol must be in [1e-12, 1e-2]; got {rtol!r}.")
    accountant = _check_accountant(accountant)
    if accountant == "tightest":
        return min(calibrate_noise_multiplier(target, delta, sampling_rate=q, steps=steps, sampling=sampling,
                                              orders=orders, rtol=rtol, accountant=a) for a in ("rdp", "pld"))
    if accountant == "pld":
        _check_sampling(sampling)
        return _pld_calibrate(target, delta, q, steps, sampling, rtol)
    orders = check_orders(orders)
    engine = _one_step_engine(sampling, q, orders)

    def eps_sigma(sigma):
        return rdp_to_epsilon(orders, engine.rdp(sigma) * steps, delta)[0]

    def eps_of(log_sigma):
        return eps_sigma(math.exp(log_sigma))

    full = _gaussian_sigma_closed_form(target, delta, steps, orders)
    if not math.isfinite(full):
        raise ValueError(f"No noise multiplier reaches epsilon={target} at delta={delta} on these orders.")
    if sampling == "without_replacement":
        full *= 2.0  # replace-one base Gaussian has multiplier σ/2 (see _replace_one_noise_multiplier)
    if sampling == "poisson" and q == 1.0:
        sigma = full
        step = max(sigma * 1e-15, math.ulp(sigma))
        while eps_sigma(sigma) > target:  # rounding: stay on the safe side
            sigma += step
            step *= 2.0
        return sigma

    # Bracket. At `full` even the un-sampled mechanism meets the target, and
    # subsampling never increases RDP, so ε(full) <= target. Start below it at
    # the small-q estimate σ ≈ σ_gauss · q · √(2·steps) (one-step RDP ≈ q²α/σ²).
    hi = math.log(full)
    f_hi = eps_of(hi) - target
    while f_hi > 0:  # not expected; guard against rounding
        hi += 1e-12 + abs(hi) * 1e-12
        f_hi = eps_of(hi) - target
    single = _gaussian_sigma_closed_form(target, delta, 1, orders)
    guess = min(hi, math.log(max(single * q * math.sqrt(2.0 * steps), 1e-300)))
    lo = guess
    f_lo = eps_of(lo) - target
    if f_lo <= 0:
        hi, f_hi = lo, f_lo
        width = math.log(1.5)
        while True:
            lo = hi - width
            f_lo = eps_of(lo) - target
            if f_lo > 0:
                break
            hi, f_hi = lo, f_lo
            width *= 2.0
            if lo < -700:
                raise ValueError("Noise calibration failed: epsilon stays below the target as sigma -> 0.")
    else:
        width = math.log(1.5)
        while True:
            cand = min(lo + width, hi)
            f_c = eps_of(cand) - target
            if f_c <= 0:
                hi, f_hi = cand, f_c
                break
            lo, f_lo = cand, f_c
            width *= 2.0

    # Illinois regula falsi in log σ, keeping f(lo) > 0 >= f(hi).
    tol = math.log1p(rtol)
    side = 0
    while hi - lo > tol:
        if math.isfinite(f_lo) and f_lo != f_hi:
            x = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        else:
            x = 0.5 * (lo + hi)
        # keep the step strictly inside and not too close to an end
        margin = 0.25 * tol
        x = min(max(x, lo + margin), hi - margin)
        f_x = eps_of(x) - target
        if f_x > 0:
            lo, f_lo = x, f_x
            if side == -1:
                f_hi *= 0.5
            side = -1
        else:
            hi, f_hi = x, f_x
            if side == 1:
                f_lo *= 0.5
            side = 1
    return math.exp(hi)


# --------------------------------------------------------------------------
# the PLD accountant (accountant="pld")
# --------------------------------------------------------------------------
_ACCOUNTANTS = ("tightest", "rdp", "pld")


def _check_accountant(accountant):
    if accountant not in _ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {_ACCOUNTANTS}; got {accountant!r}.")
    return accountant


def _check_sampling(sampling):
    if sampling not in _SAMPLINGS:
        raise ValueError(f"sampling must be one of {_SAMPLINGS}; got {sampling!r}.")
    return sampling


def _pld_event(sigma, q, steps, sampling):
    inner = GaussianEvent(sigma)
    one = PoissonSampledEvent(q, inner) if sampling == "poisson" else SampledWithoutReplacementEvent(q, inner)
    return SelfComposedEvent(one, steps)


def _pld_epsilon(sigma, delta, q, steps, sampling, step=None):
    if q == 0.0 or steps == 0 or sigma == math.inf:
        return 0.0
    accountant = PLDAccountant(value_discretization=step)
    return accountant.compose(_pld_event(sigma, q, steps, sampling)).epsilon(delta)


def _gdp_mu_for(target, delta):
    """The largest μ whose μ-GDP ε at ``delta`` is <= ``target`` (δ(ε) increases in μ; DRS22 Cor. 2.13)."""
    hi = 1.0
    while gdp_to_delta(hi, target) <= delta:
        hi *= 2.0
    lo = 0.0
    from scipy.optimize import brentq  # imported where used: import skdp stays fast

    mu = brentq(lambda m: gdp_to_delta(m, target) - delta, lo, hi, xtol=1e-15, rtol=1e-14)
    shrink = 1e-14
    while mu > 0 and gdp_to_epsilon(mu, delta) > target:  # safe side
        # growing steps: at a huge target ε is only accurate to about 1e-9 relative
        mu = math.nextafter(mu, 0.0) * (1.0 - shrink)
        shrink = min(2.0 * shrink, 0.5)
    return mu


def _pld_calibrate(target, delta, q, steps, sampling, rtol):
    """σ for the PLD accountant: exact for the plain Gaussian, else a bracketing search on ε(σ)."""
    mu = _gdp_mu_for(target, delta)
    if mu <= 0:
        raise ValueError(f"No noise multiplier reaches epsilon={target} at delta={delta}.")
    full = math.sqrt(steps) / mu  # Gaussian alone: steps runs of μ = 1/σ compose to √steps/σ (DRS22, Cor. 3.3)
    if sampling == "poisson" and q == 1.0:
        sigma = full
        while gdp_to_epsilon(math.sqrt(steps) / sigma, delta) > target:  # rounding: safe side
            sigma = math.nextafter(sigma, math.inf) * (1.0 + 1e-14)
        return sigma
    # Initial guess from the CLT μ ≈ q √(T(e^{1/σ²} − 1)) (Bu, Dong, Long & Su 2020),
    # with twice the sensitivity without replacement; only a starting point.
    scale = 2.0 if sampling == "without_replacement" else 1.0
    guess = scale / math.sqrt(math.log1p((mu / q) ** 2 / steps))
    guess = min(guess, full * scale)
    # the search evaluates exactly epsilon_for(σ, accountant="pld"), so the σ it
    # returns meets the target there
    def f(log_sigma):
        return _pld_epsilon(math.exp(log_sigma), delta, q, steps, sampling) - target

    # ε falls about like σ^(−1.5) here: one predicted step from the guess, then
    # steps of growing size in the same direction until the sign changes
    x = math.log(guess)
    fx = f(x)
    move = max(min(math.log((fx + target) / target) / 1.5, 0.5), -0.5) if fx + target > 0 else -0.5
    move = move * 1.02 if move else (0.01 if fx > 0 else -0.01)
    while True:
        y = x + move
        fy = f(y)
        if (fx > 0) != (fy > 0):
            break
        if abs(y) > 700:
            raise ValueError(f"No noise multiplier reaches epsilon={target} at delta={delta}.")
        x, fx = y, fy
        move *= 2.0
    (lo, f_lo), (hi, f_hi) = ((x, fx), (y, fy)) if fx > 0 else ((y, fy), (x, fx))
    # Illinois regula falsi in log σ, keeping f(lo) > 0 >= f(hi); returns hi (safe side).
    tol = math.log1p(rtol)
    side = 0
    while hi - lo > tol:
        x = hi - f_hi * (hi - lo) / (f_hi - f_lo) if f_lo != f_hi else 0.5 * (lo + hi)
        margin = 0.25 * tol
        x = min(max(x, lo + margin), hi - margin)
        fx = f(x)
        if fx > 0:
            lo, f_lo = x, fx
            if side == -1:
                f_hi *= 0.5
            side = -1
        else:
            hi, f_hi = x, fx
            if side == 1:
                f_lo *= 0.5
            side = 1
    return math.exp(hi)
