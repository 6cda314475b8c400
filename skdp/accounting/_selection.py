"""Private selection: the RDP of the best of K runs, with K random.

Papernot & Steinke 2022 ("Hyperparameter tuning with Rényi differential
privacy", ICLR): run a private algorithm Q (one training run plus its noisy
score) K times, with K drawn independently of the data, and release only the
best run. The whole procedure is one mechanism whose RDP is a little more than
that of a single run, and much less than the composition of K runs.

- Truncated negative binomial K (Thm. 2), including the geometric (η = 1,
  Liu & Talwar 2019) and logarithmic (η = 0) laws;
- Poisson K (Thm. 6).

The number of runs K must stay secret: it is not part of the output.

The statements of Thms. 2 and 6 used here (every term, and E[K]) were checked
against arXiv 2110.03620 and autodp's implementation of the same theorems.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np

# scipy.optimize and scipy.special are imported where used: import skdp stays fast
from ._curve import RDPCurve

if TYPE_CHECKING:
    from .._typing import ArrayLike, FloatArray, NDArray
    from .._secure import SecureGenerator

__all__ = [
    "Poisson",
    "TruncatedNegativeBinomial",
    "geometric",
    "logarithmic",
    "private_selection_rdp",
    "run_count_distribution",
]


def _check_open_unit(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r}.")
    value = float(value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in (0, 1); got {value!r}.")
    return value


def _fmt(x):
    return f"{x:.6g}"


class TruncatedNegativeBinomial:
    """The law of the number of runs K of Papernot & Steinke 2022, Def. 1.

    For η ∈ (−1, ∞) and γ ∈ (0, 1), K ∈ {1, 2, ...} with::

        P[K = k] = (1 − γ)^k / (γ^{−η} − 1) · ∏_{ℓ=0}^{k−1} (ℓ + η) / (ℓ + 1)

    and, for η = 0, the logarithmic law P[K = k] = (1 − γ)^k / (k · log(1/γ)).
    η = 1 is the geometric law P[K = k] = γ (1 − γ)^{k−1}.

    Parameters
    ----------
    eta : float > −1
        Shape η. Smaller η gives a smaller privacy cost and a heavier tail.
    gamma : float in (0, 1)
        γ; the mean of K grows as γ goes to 0.

    Examples
    --------
    >>> from skdp.accounting import TruncatedNegativeBinomial
    >>> k_law = TruncatedNegativeBinomial(eta=1.0, gamma=0.1)
    >>> round(k_law.mean, 6)
    10.0
    >>> round(float(k_law.pmf(1)), 6), round(float(k_law.pmf(2)), 6)
    (0.1, 0.09)
    """

    def __init__(self, eta: float, gamma: float) -> None:
        if isinstance(eta, (bool, np.bool_)) or not isinstance(eta, numbers.Real):
            raise TypeError(f"eta must be a real number; got {eta!r}.")
        eta = float(eta)
        if not (eta > -1.0 and math.isfinite(eta)):
            raise ValueError(f"eta must be finite and > -1; got {eta!r}.")
        self.eta = eta
        self.gamma = _check_open_unit("gamma", gamma)

    @property
    def mean(self) -> float:
        """E[K] (Papernot & Steinke 2022, Thm. 2)."""
        eta, gamma = self.eta, self.gamma
        log_gamma = math.log(gamma)
        if eta == 0.0:
            return (1.0 / gamma - 1.0) / -log_gamma
        # η(1 − γ) / (γ (1 − γ^η)), with 1 − γ^η = −expm1(η log γ).
        return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * log_gamma))

    def log_pmf(self, k: ArrayLike) -> FloatArray:
        """log P[K = k] for integers k >= 1 (−inf below 1), vectorised."""
        from scipy.special import gammaln

        k = np.asarray(k, dtype=float)
        eta, gamma = self.eta, self.gamma
        kk = np.maximum(k, 1.0)
        if eta == 0.0:
            out = kk * math.log1p(-gamma) - np.log(kk) - math.log(-math.log(gamma))
        else:
            # |∏_{ℓ<k} (ℓ + η)| = |η| Γ(k + η) / Γ(1 + η) for η > −1, and the
            # normaliser γ^{−η} − 1 has the sign of η, so the ratio is positive.
            out = (
                kk * math.log1p(-gamma)
                + math.log(abs(eta))
                + gammaln(kk + eta)
                - gammaln(1.0 + eta)
                - gammaln(kk + 1.0)
                - math.log(abs(math.expm1(-eta * math.log(gamma))))
            )
        return np.where(k >= 1, out, -np.inf)

    def pmf(self, k: ArrayLike) -> FloatArray:
        """P[K = k], vectorised."""
        return np.exp(self.log_pmf(k))

    def sample(self, random_state: np.random.Generator | SecureGenerator,
               size: int | tuple[int, ...] | None = None) -> int | NDArray:
        """Draw K by inversion of the CDF, from a numpy ``Generator``.

        The support is extended in blocks until the CDF passes every uniform
        draw; a draw beyond the point where the computed CDF stops growing in
        floating point (a tail of probability < 1e-15) returns that point.
        """
        return _sample_by_inversion(self.log_pmf, random_state, size)

    def __repr__(self):
        return f"TruncatedNegativeBinomial(eta={_fmt(self.eta)}, gamma={_fmt(self.gamma)})"

    def _describe(self):
        if self.eta == 1.0:
            return f"geometric(gamma={_fmt(self.gamma)})"
        if self.eta == 0.0:
            return f"logarithmic(gamma={_fmt(self.gamma)})"
        return f"truncated_negative_binomial(eta={_fmt(self.eta)}, gamma={_fmt(self.gamma)})"


class Poisson:
    """A Poisson number of runs K ~ Poisson(μ) (Papernot & Steinke 2022, Thm. 6).

    K may be 0; the selection then outputs nothing.

    Parameters
    ----------
    mu : float >= 1
        μ, the mean of K, finite.

    Notes
    -----
    μ must be at least 1. Thm. 6's bound has the term log(μ)/(λ − 1), which is
    negative for μ < 1, and there the bound falls below the true Rényi
    divergence: for a 1-DP randomized-response run and μ = 0.1, the exact
    divergence of the best of K at order 3.5 is 0.234 and the bound gives
    less than 0 (found by an external audit). dp-accounting refuses μ < 1 too.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.accounting import Poisson
    >>> k_law = Poisson(10.0)
    >>> k_law.mean
    10.0
    >>> int(k_law.sample(np.random.default_rng(0)))
    11
    """

    def __init__(self, mu: float) -> None:
        if isinstance(mu, (bool, np.bool_)) or not isinstance(mu, numbers.Real):
            raise TypeError(f"mu must be a real number; got {mu!r}.")
        mu = float(mu)
        if not (mu >= 1.0 and math.isfinite(mu)):
            raise ValueError(
                f"mu must be finite and >= 1; got {mu!r}. Papernot & Steinke's Thm. 6 "
                "does not bound the privacy of a Poisson number of runs with a mean "
                "below 1; use a mean of at least 1."
            )
        self.mu = mu

    @property
    def mean(self) -> float:
        """E[K] = μ."""
        return self.mu

    def log_pmf(self, k: ArrayLike) -> FloatArray:
        from scipy.special import gammaln

        k = np.asarray(k, dtype=float)
        kk = np.maximum(k, 0.0)
        out = kk * math.log(self.mu) - self.mu - gammaln(kk + 1.0)
        return np.where(k >= 0, out, -np.inf)

    def pmf(self, k: ArrayLike) -> FloatArray:
        return np.exp(self.log_pmf(k))

    def sample(self, random_state: np.random.Generator | SecureGenerator,
               size: int | tuple[int, ...] | None = None) -> int | NDArray:
        """Draw K from a numpy ``Generator``."""
        return _generator(random_state).poisson(self.mu, size=size)

    def __repr__(self):
        return f"Poisson(mu={_fmt(self.mu)})"

    def _describe(self):
        return f"poisson(mu={_fmt(self.mu)})"


def geometric(gamma: float) -> TruncatedNegativeBinomial:
    """The geometric law P[K = k] = γ(1 − γ)^{k−1}: a truncated negative binomial with η = 1.

    Parameters
    ----------
    gamma : float in (0, 1)
        γ; the mean of K is 1/γ.

    Returns
    -------
    TruncatedNegativeBinomial

    Examples
    --------
    >>> from skdp.accounting import geometric
    >>> geometric(0.25).mean
    4.0
    """
    return TruncatedNegativeBinomial(1.0, gamma)


def logarithmic(gamma: float) -> TruncatedNegativeBinomial:
    """The logarithmic law P[K = k] = (1 − γ)^k / (k log(1/γ)): η = 0.

    Parameters
    ----------
    gamma : float in (0, 1)
        γ; the mean of K grows as γ goes to 0.

    Returns
    -------
    TruncatedNegativeBinomial

    Examples
    --------
    >>> from skdp.accounting import logarithmic
    >>> round(logarithmic(0.05).mean, 4)
    6.3424
    """
    return TruncatedNegativeBinomial(0.0, gamma)


def run_count_distribution(kind: str, mean: float, *,
                           eta: float | None = None) -> TruncatedNegativeBinomial | Poisson:
    """The law of K with the given mean.

    Parameters
    ----------
    kind : {"geometric", "logarithmic", "truncated_negative_binomial", "poisson"}
    mean : float
        E[K]; > 1 for the truncated negative binomial laws (their support
        starts at 1), >= 1 for Poisson (Thm. 6 covers no smaller mean).
    eta : float > −1, optional
        Required for ``"truncated_negative_binomial"`` only.

    Returns
    -------
    TruncatedNegativeBinomial or Poisson

    Examples
    --------
    >>> from skdp.accounting import run_count_distribution
    >>> run_count_distribution("geometric", 10)
    TruncatedNegativeBinomial(eta=1, gamma=0.1)
    >>> round(run_count_distribution("logarithmic", 10).mean, 9)
    10.0
    """
    if isinstance(mean, (bool, np.bool_)) or not isinstance(mean, numbers.Real):
        raise TypeError(f"mean must be a real number; got {mean!r}.")
    mean = float(mean)
    if kind == "poisson":
        if eta is not None:
            raise ValueError("eta applies to the truncated negative binomial laws only.")
        return Poisson(mean)
    fixed = {"geometric": 1.0, "logarithmic": 0.0}
    if kind in fixed:
        if eta is not None:
            raise ValueError(f"eta is fixed for the {kind} law; leave it None.")
        eta = fixed[kind]
    elif kind == "truncated_negative_binomial":
        if eta is None:
            raise ValueError("The truncated negative binomial law needs eta.")
    else:
        raise ValueError(
            "kind must be 'geometric', 'logarithmic', 'truncated_negative_binomial' or "
            f"'poisson'; got {kind!r}."
        )
    if not (mean > 1.0 and math.isfinite(mean)):
        raise ValueError(f"The mean of K must be finite and > 1; got {mean!r}.")
    if eta == 1.0:
        return TruncatedNegativeBinomial(1.0, 1.0 / mean)
    TruncatedNegativeBinomial(eta, 0.5)  # validates eta
    # E[K] decreases from ∞ (γ → 0) to 1 (γ → 1): solve in log γ.
    def gap(log_gamma):
        return math.log(TruncatedNegativeBinomial(eta, math.exp(log_gamma)).mean) - math.log(mean)

    lo, hi = -1.0, -1e-12
    while gap(lo) < 0:
        lo *= 2.0
        if lo < -1e4:
            raise ValueError(f"No gamma gives a mean of {mean!r}.")
    from scipy.optimize import brentq

    log_gamma = brentq(gap, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
    return TruncatedNegativeBinomial(eta, math.exp(log_gamma))


def private_selection_rdp(base: RDPCurve,
                          distribution: TruncatedNegativeBinomial | Poisson) -> RDPCurve:
    """RDP curve of releasing the best of K runs of a mechanism, K random.

    ``base`` is the curve of **one run** (training a candidate and computing
    its noisy score); the result is the curve of the whole search, which
    releases only the best run (by its score) and never K.

    K follows a truncated negative binomial law (Papernot & Steinke 2022,
    Thm. 2) or a Poisson law (Thm. 6); Notes give both bounds.

    Parameters
    ----------
    base : RDPCurve
        The curve of one run. Runs with different hyper-parameters are
        covered by the maximum of their curves at each order (Rényi
        divergence is jointly quasi-convex, van Erven & Harremoës 2014,
        Thm. 13, so a run that picks its candidate at random independently
        of the data is no worse than its worst candidate).
    distribution : TruncatedNegativeBinomial or Poisson
        The law of K.

    Returns
    -------
    RDPCurve
        On the orders of ``base``.

    Notes
    -----
    Truncated negative binomial K (Papernot & Steinke 2022, Thm. 2): if one
    run is (λ, ε(λ))-RDP for all λ on the grid, then for every λ on the grid
    and every λ̂ on the grid the search is (λ, ε'(λ))-RDP with::

        ε'(λ) = ε(λ) + (1 + η)(1 − 1/λ̂) ε(λ̂) + (1 + η) log(1/γ) / λ̂ + log(E[K]) / (λ − 1)

    The λ̂-term does not depend on λ: it is minimised once over the grid,
    also at λ̂ → ∞ where it is (1 + η) ε_pure when the run has a pure ε-DP
    bound. The bound only ever uses ε at orders where it is known, so any
    grid (fractional orders included) gives a valid bound. A pure ε-DP run
    gives a pure (2 + η)ε-DP search (λ, λ̂ → ∞ in Thm. 2): 2ε for the
    logarithmic law, 3ε for the geometric one (Liu & Talwar 2019).

    Poisson K with mean μ (Papernot & Steinke 2022, Thm. 6): if one run is
    (λ, ε(λ))-RDP and (ε̂, δ̂)-DP with e^ε̂ ≤ 1 + 1/(λ − 1), then::

        ε'(λ) = ε(λ) + μ δ̂ + log(μ) / (λ − 1)

    with ε̂ = log(1 + 1/(λ − 1)) (rounded down) and δ̂ the run's δ at ε̂ by
    :meth:`RDPCurve.delta_for` (Canonne, Kamath & Steinke 2020, Prop. 12).

    Examples
    --------
    >>> from skdp.accounting import geometric, logarithmic, private_selection_rdp, pure_dp_rdp
    >>> private_selection_rdp(pure_dp_rdp(0.1), geometric(0.1)).epsilon(0.0)
    0.30000000000000004
    >>> private_selection_rdp(pure_dp_rdp(0.1), logarithmic(0.1)).epsilon(0.0)
    0.2
    """
    if not isinstance(base, RDPCurve):
        raise TypeError(f"base must be an RDPCurve; got {type(base).__name__}.")
    if base.delta > 0:
        raise ValueError(
            "Private selection needs an RDP curve for one run; this curve has an "
            "approximate-DP delta part that Papernot & Steinke's theorems do not cover."
        )
    orders = base.orders
    rdp = np.minimum(base.rdp, base.pure_epsilon)  # D_λ ≤ D_∞
    if isinstance(distribution, TruncatedNegativeBinomial):
        eta, gamma = distribution.eta, distribution.gamma
        log_inv_gamma = -math.log(gamma)
        with np.errstate(invalid="ignore"):
            hat_terms = (1.0 + eta) * ((1.0 - 1.0 / orders) * rdp + log_inv_gamma / orders)
        hat_terms = np.where(np.isfinite(rdp), hat_terms, np.inf)
        hat = min(float(np.min(hat_terms)), (1.0 + eta) * base.pure_epsilon)
        log_mean = math.log(distribution.mean)
        new = rdp + hat + log_mean / (orders - 1.0)
        pure = (2.0 + eta) * base.pure_epsilon
    elif isinstance(distribution, Poisson):
        mu = distribution.mu
        # ε̂ = log(1 + 1/(λ−1)), one ulp down so that e^ε̂ ≤ 1 + 1/(λ−1) holds
        # despite rounding; a smaller ε̂ only makes δ̂ larger.
        eps_hat = np.nextafter(np.log1p(1.0 / (orders - 1.0)), 0.0)
        # One conversion per order, once per search (not a hot path).
        delta_hat = np.array([base.delta_for(e) for e in eps_hat])
        # μ >= 1 (checked by Poisson), so every term is >= 0.
        new = rdp + mu * delta_hat + math.log(mu) / (orders - 1.0)
        pure = math.inf
    else:
        raise TypeError(
            "distribution must be a TruncatedNegativeBinomial or a Poisson; "
            f"got {type(distribution).__name__}."
        )
    new = np.where(np.isfinite(rdp), new, np.inf)
    return RDPCurve(
        orders,
        new,
        pure_epsilon=pure,
        mechanism=f"best of K~{distribution._describe()} runs of ({base.mechanism})",
    )


def _generator(random_state):
    from .._secure import SecureGenerator  # the OS CSPRNG of secure=True

    if not isinstance(random_state, (np.random.Generator, SecureGenerator)):
        raise TypeError("random_state must be a numpy Generator (see skdp.utils.check_generator).")
    return random_state


def _sample_by_inversion(log_pmf, random_state, size):
    rng = _generator(random_state)
    u = rng.random(size=size)
    flat = np.atleast_1d(u).ravel()
    target = float(flat.max()) if flat.size else 0.0
    cdf = np.empty(0)
    block, start = 64, 1
    while True:
        ks = np.arange(start, start + block, dtype=float)
        probs = np.exp(log_pmf(ks))
        base = cdf[-1] if cdf.size else 0.0
        new = base + np.cumsum(probs)
        cdf = np.concatenate([cdf, new])
        if cdf[-1] >= target or cdf[-1] == base:
            break
        start += block
        block *= 2
    # K = smallest k with CDF(k) > u, capped at the end of the computed support.
    k = np.minimum(np.searchsorted(cdf, flat, side="right"), cdf.size - 1) + 1
    if size is None:
        return int(k[0])
    return k.reshape(np.shape(u))
