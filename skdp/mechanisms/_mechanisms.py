"""Noise primitives: each knows its noise, its sampler and its RDP curve.

Every mechanism is a small immutable object built from its sensitivity and its
privacy parameter. It samples from a :class:`numpy.random.Generator`
(``random_state``: ``None`` draws OS entropy, an int seeds) and reports its
Rényi-DP curve through :mod:`skdp.accounting` with :meth:`privacy_curve`.
Neighbouring datasets differ by one added or removed row; sensitivities are
given by the caller under that relation.

Floating-point warning (Mironov 2012, CCS): :class:`LaplaceMechanism` and
:class:`GaussianMechanism` add floating-point noise. When ``value + noise`` is
released as a float, its low-order bits can reveal ``value`` exactly. Use
:class:`DiscreteLaplaceMechanism` / :class:`DiscreteGaussianMechanism` (exact
integer samplers) on integer or grid-valued queries when a float is released
directly; the stats functions do so with ``secure=True``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from ..accounting import (
    RDPCurve,
    gaussian_rdp,
    laplace_rdp,
    pure_dp_rdp,
    randomized_response_rdp,
    zcdp_rdp,
)
from ..accounting._basic import _bounded_range_rdp
from ..utils import check_delta, check_epsilon, check_generator
from ._exact import (
    float_at_least,
    gaussian_sigma_at_least,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    zcdp_rho_at_least,
)

if TYPE_CHECKING:
    from .._typing import ArrayLike, FloatArray, FloatOrArray, RandomStateLike

__all__ = [
    "DiscreteGaussianMechanism",
    "DiscreteLaplaceMechanism",
    "ExponentialMechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "PermuteAndFlip",
    "RandomizedResponse",
    "exponential_mechanism_rdp",
]


def _check_sensitivity(sensitivity, *, integer=False):
    if isinstance(sensitivity, (bool, np.bool_)):
        raise TypeError("sensitivity must be a number.")
    value = float(sensitivity)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"sensitivity must be finite and > 0; got {sensitivity!r}.")
    if integer:
        if value != int(value):
            raise ValueError(
                f"sensitivity must be a positive integer for a discrete mechanism; got {sensitivity!r}."
            )
        return int(value)
    return value


def _check_positive(name, value):
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and > 0; got {value!r}.")
    return value


def exponential_mechanism_rdp(epsilon: float, *, orders: ArrayLike | None = None) -> RDPCurve:
    """RDP curve of the exponential mechanism run at privacy parameter ε.

    Parameters
    ----------
    epsilon : float > 0
        ε, finite.
    orders : array-like, optional
        The orders of the curve; ``None``: :data:`skdp.accounting.DEFAULT_ORDERS`.

    Returns
    -------
    RDPCurve
        It carries its event, :class:`~skdp.accounting.BoundedRangeEvent`.

    Notes
    -----
    The mechanism is ε-DP (McSherry & Talwar 2007, Thm. 6) and ε-bounded
    range (Durfee & Rogers 2019), hence (ε²/8)-zCDP (Cesar & Rogers 2021,
    "bounded range implies zCDP"; lemma numbers not re-checked). Both curves are valid, so their minimum at each order is
    too: the pure-DP curve is tighter at small α, the zCDP one at large α.
    The curve carries its event, :class:`~skdp.accounting.BoundedRangeEvent`,
    so the PLD accountant composes it too.

    Examples
    --------
    >>> from skdp.mechanisms import exponential_mechanism_rdp
    >>> from skdp.accounting import pure_dp_rdp
    >>> curve = exponential_mechanism_rdp(1.0, orders=[2.0, 64.0])
    >>> [round(float(v), 4) for v in curve.rdp]
    [0.25, 0.995]
    >>> curve.pure_epsilon
    1.0
    """
    epsilon = check_epsilon(epsilon, allow_inf=False)
    return _bounded_range_rdp(epsilon, orders=orders)


class LaplaceMechanism:
    """The Laplace mechanism: value + Lap(sensitivity / ε) (Dwork et al. 2006, Prop. 1).

    Parameters
    ----------
    epsilon : float > 0
    sensitivity : float > 0, default=1
        L1 sensitivity of the query under add/remove-one-row.

    Examples
    --------
    >>> from skdp.mechanisms import LaplaceMechanism
    >>> mech = LaplaceMechanism(0.5, sensitivity=2.0)
    >>> mech.scale
    4.0
    >>> mech.privacy_curve().pure_epsilon
    0.5
    >>> mech.randomise([10.0, 20.0], random_state=0).shape
    (2,)
    """

    def __init__(self, epsilon: float, *, sensitivity: float = 1.0) -> None:
        self.epsilon = check_epsilon(epsilon, allow_inf=False)
        self.sensitivity = _check_sensitivity(sensitivity)
        self.scale = self.sensitivity / self.epsilon

    def privacy_curve(self, *, orders: ArrayLike | None = None) -> RDPCurve:
        """Exact RDP curve of Laplace noise (Mironov 2017, Prop. 6)."""
        return laplace_rdp(self.scale, sensitivity=self.sensitivity, orders=orders)

    def sample_noise(self, size: int | tuple[int, ...] | None = None, *,
                     random_state: RandomStateLike = None) -> FloatOrArray:
        return check_generator(random_state).laplace(0.0, self.scale, size=size)

    def randomise(self, value: ArrayLike, *, random_state: RandomStateLike = None) -> FloatOrArray:
        value = np.asarray(value, dtype=float)
        return value + self.sample_noise(value.shape, random_state=random_state)

    def __repr__(self) -> str:
        return f"LaplaceMechanism(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r})"


class GaussianMechanism:
    """The Gaussian mechanism: value + N(0, σ²) with σ set three ways.

    σ comes from a noise multiplier, or from (ε, δ) by the classical or the
    analytic calibration; the curve it reports (and charges) is the Gaussian
    RDP curve of σ over the sensitivity. Notes give the formulas and their
    sources.

    Parameters
    ----------
    epsilon, delta : float, optional
        Required unless ``noise_multiplier`` is given.
    sensitivity : float > 0, default=1
        L2 sensitivity under add/remove-one-row.
    noise_multiplier : float > 0, optional
    method : {"classical", "analytic"}, default="analytic"

    Notes
    -----
    - ``noise_multiplier=z``: σ = z · sensitivity;
    - ``method="classical"``: σ = Δ·√(2 ln(1.25/δ))/ε, valid for ε < 1
      (Dwork & Roth 2014, Thm. A.1);
    - ``method="analytic"``: the smallest σ that is (ε, δ)-DP
      (Balle & Wang 2018, Thm. 8), from
      :func:`skdp.accounting.analytic_gaussian_sigma`.

    Whatever sets σ, the curve reported is the Gaussian RDP curve α/(2z²)
    with z = σ/Δ (Mironov 2017, Prop. 7). Converted to (ε, δ) it may read a
    little above the ε asked for with ``method="analytic"``: the RDP-to-DP
    conversion is not tight, and the budget is charged with the curve.

    Examples
    --------
    >>> from skdp.mechanisms import GaussianMechanism
    >>> round(GaussianMechanism(0.5, 1e-5, method="classical").sigma, 4)
    9.6896
    >>> GaussianMechanism(noise_multiplier=2.0, sensitivity=3.0).sigma
    6.0
    """

    def __init__(self, epsilon: float | None = None, delta: float | None = None, *,
                 sensitivity: float = 1.0, noise_multiplier: float | None = None,
                 method: str = "analytic") -> None:
        self.sensitivity = _check_sensitivity(sensitivity)
        if noise_multiplier is not None:
            if epsilon is not None or delta is not None:
                raise ValueError("Give either noise_multiplier or (epsilon, delta), not both.")
            self.noise_multiplier = _check_positive("noise_multiplier", noise_multiplier)
            self.epsilon, self.delta, self.method = None, None, "noise_multiplier"
        else:
            if epsilon is None or delta is None:
                raise ValueError("GaussianMechanism needs (epsilon, delta) or noise_multiplier.")
            epsilon = check_epsilon(epsilon, allow_inf=False)
            delta = check_delta(delta, allow_zero=False)
            if method == "classical":
                if epsilon >= 1:
                    raise ValueError(
                        "The classical Gaussian calibration holds only for epsilon < 1 "
                        "(Dwork & Roth 2014, Thm. A.1); use method='analytic'."
                    )
                z = math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
            elif method == "analytic":
                from ..accounting import analytic_gaussian_sigma

                z = analytic_gaussian_sigma(epsilon, delta, 1.0)
            else:
                raise ValueError(f"method must be 'classical' or 'analytic'; got {method!r}.")
            self.noise_multiplier = float(z)
            self.epsilon, self.delta, self.method = epsilon, delta, method
        self.sigma = self.noise_multiplier * self.sensitivity

    def privacy_curve(self, *, orders: ArrayLike | None = None) -> RDPCurve:
        """Gaussian RDP α/(2z²) (Mironov 2017, Prop. 7)."""
        return gaussian_rdp(self.noise_multiplier, orders=orders)

    def sample_noise(self, size: int | tuple[int, ...] | None = None, *,
                     random_state: RandomStateLike = None) -> FloatOrArray:
        return check_generator(random_state).normal(0.0, self.sigma, size=size)

    def randomise(self, value: ArrayLike, *, random_state: RandomStateLike = None) -> FloatOrArray:
        value = np.asarray(value, dtype=float)
        return value + self.sample_noise(value.shape, random_state=random_state)

    def __repr__(self) -> str:
        return (f"GaussianMechanism(noise_multiplier={self.noise_multiplier:.6g}, "
                f"sensitivity={self.sensitivity!r})")


class DiscreteLaplaceMechanism:
    """Integer value + discrete Laplace noise, sampled exactly.

    Pure ε-DP, with no floating-point leak: the sampler uses only integer
    arithmetic.

    Parameters
    ----------
    epsilon : float > 0
        ε, finite.
    sensitivity : int >= 1, default=1
        Δ, the L1 sensitivity of the integer query under add/remove-one-row.

    Notes
    -----
    P(noise = x) ∝ exp(−ε|x|/Δ); for an integer query of L1 sensitivity Δ
    this is ε-DP (Ghosh, Roughgarden & Sundararajan 2009; Canonne, Kamath &
    Steinke 2020, Sec. 2). The sampler uses only integer arithmetic
    (CKS20, Alg. 2), so releasing the result leaks nothing through
    floating-point bits.

    The curve is :func:`~skdp.accounting.pure_dp_rdp` (ε), the tightest one
    implied by ε-DP.

    Examples
    --------
    >>> from skdp.mechanisms import DiscreteLaplaceMechanism
    >>> mech = DiscreteLaplaceMechanism(1.0, sensitivity=2)
    >>> mech.randomise([10, 20], random_state=0).dtype
    dtype('int64')
    """

    def __init__(self, epsilon: float, *, sensitivity: int = 1) -> None:
        self.epsilon = check_epsilon(epsilon, allow_inf=False)
        self.sensitivity = _check_sensitivity(sensitivity, integer=True)
        self.scale = Fraction(self.sensitivity) / Fraction(self.epsilon)

    def privacy_curve(self, *, orders: ArrayLike | None = None) -> RDPCurve:
        return pure_dp_rdp(self.epsilon, orders=orders)

    def sample_noise(self, size: int | tuple[int, ...] | None = None, *,
                     random_state: RandomStateLike = None) -> int | np.ndarray:
        return sample_discrete_laplace(self.scale, size, random_state=random_state)

    def randomise(self, value: ArrayLike, *,
                  random_state: RandomStateLike = None) -> int | np.ndarray:
        value = _as_integer_array(value)
        return value + self.sample_noise(value.shape, random_state=random_state)


class DiscreteGaussianMechanism:
    """Integer value + discrete Gaussian noise N_Z(0, σ²), sampled exactly.

    Parameters
    ----------
    noise_multiplier : float > 0
        σ/Δ, finite.
    sensitivity : int >= 1, default=1
        Δ, the L2 sensitivity of the integer query under add/remove-one-row.

    Notes
    -----
    For an integer query of L2 sensitivity Δ this is ρ-zCDP with
    ρ = Δ²/(2σ²) (Canonne, Kamath & Steinke 2020, Thm. 4 and Prop. 5), so
    the curve is :func:`~skdp.accounting.zcdp_rdp` (ρ). σ = noise_multiplier · Δ.

    Examples
    --------
    >>> from skdp.mechanisms import DiscreteGaussianMechanism
    >>> mech = DiscreteGaussianMechanism(noise_multiplier=2.0, sensitivity=3)
    >>> mech.sigma, mech.rho
    (6.0, 0.125)
    """

    def __init__(self, *, noise_multiplier: float, sensitivity: int = 1) -> None:
        self.noise_multiplier = _check_positive("noise_multiplier", noise_multiplier)
        self.sensitivity = _check_sensitivity(sensitivity, integer=True)
        # the smallest float >= z·Δ: a float product may round below it (0.7·3), and
        # a smaller σ would be less private than the ρ charged
        self.sigma = float_at_least(gaussian_sigma_at_least(self.noise_multiplier, self.sensitivity))
        self.rho = zcdp_rho_at_least(self.noise_multiplier)  # >= Δ²/(2σ²) for the σ sampled

    def privacy_curve(self, *, orders: ArrayLike | None = None) -> RDPCurve:
        return zcdp_rdp(self.rho, orders=orders)

    def sample_noise(self, size: int | tuple[int, ...] | None = None, *,
                     random_state: RandomStateLike = None) -> int | np.ndarray:
        return sample_discrete_gaussian(self.sigma, size, random_state=random_state)

    def randomise(self, value: ArrayLike, *,
                  random_state: RandomStateLike = None) -> int | np.ndarray:
        value = _as_integer_array(value)
        return value + self.sample_noise(value.shape, random_state=random_state)


def _as_integer_array(value):
    value = np.asarray(value)
    if value.dtype.kind not in "iu":
        raise TypeError("A discrete mechanism needs integer values.")
    return value.astype(np.int64)


def _check_utilities(utilities):
    u = np.asarray(utilities, dtype=float)
    if u.ndim != 1 or u.size == 0:
        raise ValueError("utilities must be a non-empty 1-D array.")
    if np.any(np.isnan(u)) or np.any(u == np.inf):
        raise ValueError("utilities must not be NaN or +inf.")
    return u


class ExponentialMechanism:
    """The exponential mechanism: P(r) ∝ exp(ε·u(r) / (2Δ)) (McSherry & Talwar 2007).

    Parameters
    ----------
    epsilon : float > 0
        ε, finite.
    sensitivity : float > 0, default=1.0
        Δ, the most one row changes any utility.
    monotonic : bool, default=False
        Every utility moves the same way when a row is added: the factor 2
        is dropped (see Notes).

    Notes
    -----
    With ``monotonic=True`` (every utility moves the same way when a row is
    added) the factor 2 is dropped, still ε-DP (McSherry & Talwar 2007,
    Sec. 3). Sampling is by the Gumbel-max trick on log-weights, vectorised.
    The selection probabilities are computed in floating point.

    ``select(utilities, log_base=...)`` also accepts a public base measure
    (log-weights added to each candidate, as for the interval lengths of the
    quantile mechanism, Smith 2011).

    Examples
    --------
    >>> from skdp.mechanisms import ExponentialMechanism
    >>> mech = ExponentialMechanism(2.0)
    >>> int(mech.select([0.0, 10.0, 1.0], random_state=0))
    1
    """

    def __init__(self, epsilon: float, *, sensitivity: float = 1.0, monotonic: bool = False) -> None:
        self.epsilon = check_epsilon(epsilon, allow_inf=False)
        self.sensitivity = _check_sensitivity(sensitivity)
        self.monotonic = bool(monotonic)

    def _log_weights(self, utilities, log_base):
        factor = self.epsilon / (self.sensitivity * (1.0 if self.monotonic else 2.0))
        u = _check_utilities(utilities)
        log_w = factor * u
        if log_base is not None:
            log_w = log_w + np.asarray(log_base, dtype=float)
        return log_w

    def probabilities(self, utilities: ArrayLike, *, log_base: ArrayLike | None = None) -> FloatArray:
        log_w = self._log_weights(utilities, log_base)
        log_w = log_w - np.max(log_w)
        w = np.exp(log_w)
        return w / w.sum()

    def select(self, utilities: ArrayLike, *, log_base: ArrayLike | None = None,
               random_state: RandomStateLike = None) -> int:
        """Index of the selected candidate."""
        log_w = self._log_weights(utilities, log_base)
        gumbel = check_generator(random_state).gumbel(size=log_w.shape)
        return int(np.argmax(log_w + gumbel))

    def privacy_curve(self, *, orders: ArrayLike | None = None) -> RDPCurve:
        return exponential_mechanism_rdp(self.epsilon, orders=orders)


class PermuteAndFlip:
    """Permute-and-flip (McKenna & Sheldon 2020, Alg. 1): ε-DP, never worse than EM.

    Parameters
    ----------
    epsilon : float > 0
        ε, finite.
    sensitivity : float > 0, default=1.0
        Δ, the most one row changes any utility.
    monotonic : bool, default=False
        Every utility moves the same way when a row is added: the factor 2
        is dropped.

    Notes
    -----
    Visit the candidates in a random order and stop at the first r with a
    coin of probability exp(ε(u(r) − u*)/(2Δ)) showing heads (u* the best
    utility, which always stops). Vectorised: one permutation and one
    uniform per candidate, then the first success in permuted order. With
    ``monotonic=True`` the factor 2 is dropped. Its curve is the pure ε-DP
    curve (McKenna & Sheldon 2020, Thm. 1 prove ε-DP).

    Examples
    --------
    >>> from skdp.mechanisms import PermuteAndFlip
    >>> int(PermuteAndFlip(5.0).select([0.0, 10.0, 1.0], random_state=0))
    1
    """

    def __init__(self, epsilon: float, *, sensitivity: float = 1.0, monotonic: bool = False) -> None:
        self.epsilon = check_epsilon(epsilon, allow_inf=False)
        self.sensitivity = _check_sensitivity(sensitivity)
        self.monotonic = bool(monotonic)

    def select(self, utilities: ArrayLike, *, random_state: RandomStateLike = None) -> int:
        u = _check_utilities(utilities)
        rng = check_generator(random_state)
        factor = self.epsilon / (self.sensitivity * (1.0 if self.monotonic else 2.0))
        accept = np.exp(factor * (u - u.max()))
        order = rng.permutation(u.size)
        heads = rng.random(u.size) < accept[order]
        return int(order[np.argmax(heads)])  # the best candidate always has heads

    def privacy_curve(self, *, orders: ArrayLike | None = None) -> RDPCurve:
        return pure_dp_rdp(self.epsilon, orders=orders)


class RandomizedResponse:
    """k-ary randomized response (Warner 1965; Kairouz, Oh & Viswanath 2016).

    ε-DP for each respondent (local DP); a central budget may be charged
    with it only where the number of rows is public (see Notes).

    Parameters
    ----------
    epsilon : float > 0
        ε, finite.
    n_categories : int >= 2, default=2
        k: the values are 0, …, k − 1.

    Notes
    -----
    Each value in {0, …, k−1} is kept with probability e^ε/(e^ε + k − 1) and
    otherwise replaced by one of the k − 1 other values uniformly. It is ε-DP
    for each respondent (local DP) and reports
    :func:`~skdp.accounting.randomized_response_rdp`.

    That curve is for changing one person's value. Randomising a whole
    column and releasing it also releases its length, the number of rows n,
    which is private under the add/remove adjacency of
    :class:`~skdp.PrivacyBudget`: charge a central budget with it only where
    n is public.

    Examples
    --------
    >>> from skdp.mechanisms import RandomizedResponse
    >>> rr = RandomizedResponse(1.0, n_categories=3)
    >>> round(rr.p_keep, 4)
    0.5761
    >>> rr.randomise([0, 1, 2, 2], random_state=0).tolist()
    [1, 1, 2, 2]
    """

    def __init__(self, epsilon: float, *, n_categories: int = 2) -> None:
        self.epsilon = check_epsilon(epsilon, allow_inf=False)
        k = int(n_categories)
        if k != n_categories or k < 2:
            raise ValueError(f"n_categories must be an integer >= 2; got {n_categories!r}.")
        self.n_categories = k
        self.p_keep = math.exp(self.epsilon) / (math.exp(self.epsilon) + k - 1) if self.epsilon < 700 else 1.0

    def randomise(self, value: ArrayLike, *,
                  random_state: RandomStateLike = None) -> np.ndarray:
        value = np.asarray(value)
        if value.dtype.kind not in "iu" or np.any(value < 0) or np.any(value >= self.n_categories):
            raise ValueError(f"values must be integers in [0, {self.n_categories}).")
        rng = check_generator(random_state)
        flip = rng.random(value.shape) >= self.p_keep
        # Uniform on the other k-1 values: add 1..k-1 modulo k.
        shift = rng.integers(1, self.n_categories, size=value.shape)
        return np.where(flip, (value + shift) % self.n_categories, value)

    def privacy_curve(self, *, orders: ArrayLike | None = None) -> RDPCurve:
        return randomized_response_rdp(self.epsilon, n_categories=self.n_categories, orders=orders)
