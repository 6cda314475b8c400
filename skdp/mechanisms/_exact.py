"""Exact samplers of the discrete Laplace and discrete Gaussian distributions.

Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential
Privacy" (NeurIPS 2020), Algorithms 1, 2 and 3. Every decision is made with
integer and :class:`fractions.Fraction` arithmetic on uniform random integers:
no floating-point number is ever computed in the sampling path, so the output
distribution is *exactly* the claimed one. This closes the floating-point
attack on textbook Laplace noise (Mironov 2012, "On significance of the least
significant bits for differential privacy", CCS 2012), in which the low bits
of ``x + noise`` reveal ``x``.

Parameters are given as floats or fractions; floats are converted exactly with
``Fraction(float)`` (every finite float is a dyadic rational).

Random bits come from a :class:`numpy.random.Generator` (its ``bytes``), so a
seeded generator gives reproducible draws. The uniform integers are drawn by
rejection from those bits, which is exact.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .._typing import NDArray, RandomStateLike

__all__ = [
    "sample_bernoulli_exp",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
]

_ONE = Fraction(1)


class _RandomBits:
    """Uniform random bits and integers drawn from a numpy ``Generator``."""

    __slots__ = ("_rng", "_pool", "_n_bits")

    def __init__(self, rng):
        self._rng = rng
        self._pool = 0
        self._n_bits = 0

    def getrandbits(self, k):
        while self._n_bits < k:
            self._pool |= int.from_bytes(self._rng.bytes(64), "little") << self._n_bits
            self._n_bits += 512
        out = self._pool & ((1 << k) - 1)
        self._pool >>= k
        self._n_bits -= k
        return out

    def randbelow(self, n):
        """Uniform on {0, ..., n − 1} by rejection: exact for any integer n >= 1."""
        k = n.bit_length()
        out = self.getrandbits(k)
        while out >= n:
            out = self.getrandbits(k)
        return out


def _bernoulli(p, bits):
    # Bernoulli(p) for a Fraction p in [0, 1]: U < num with U uniform on {0..den-1}.
    return bits.randbelow(p.denominator) < p.numerator


def _bernoulli_exp_unit(gamma, bits):
    # CKS20 Algorithm 1, γ in [0, 1]: K = 1; while Bernoulli(γ/K): K += 1;
    # return K odd. P(K odd) = Σ_k (−γ)^k / k! = e^{−γ}.
    k = 1
    num, den = gamma.numerator, gamma.denominator
    while bits.randbelow(den * k) < num:
        k += 1
    return k % 2 == 1


def _bernoulli_exp(gamma, bits):
    # CKS20 Algorithm 1 for γ > 1: e^{−γ} = (e^{−1})^{⌊γ⌋} · e^{−(γ − ⌊γ⌋)}.
    whole = gamma.numerator // gamma.denominator
    for _ in range(whole):
        if not _bernoulli_exp_unit(_ONE, bits):
            return False
    return _bernoulli_exp_unit(gamma - whole, bits)


def _discrete_laplace(s, t, bits):
    # CKS20 Algorithm 2: one draw with P(x) ∝ exp(−|x| · s / t), s, t integers >= 1.
    while True:
        u = bits.randbelow(t)
        if not _bernoulli_exp(Fraction(u, t), bits):
            continue
        v = 0
        while _bernoulli_exp_unit(_ONE, bits):
            v += 1
        y = (u + t * v) // s
        negative = bits.getrandbits(1)
        if negative and y == 0:
            continue
        return -y if negative else y


def _discrete_gaussian(sigma2, t, bits):
    # CKS20 Algorithm 3: P(x) ∝ exp(−x² / (2σ²)), with t = ⌊σ⌋ + 1.
    shift = sigma2 / t
    two_sigma2 = 2 * sigma2
    while True:
        y = _discrete_laplace(1, t, bits)
        if _bernoulli_exp((abs(y) - shift) ** 2 / two_sigma2, bits):
            return y


def gaussian_sigma_at_least(noise_multiplier, sensitivity=1, n_sums=1):
    """σ = z·√k·Δ as an exact Fraction, never below the real value.

    ``noise_multiplier`` z and ``sensitivity`` Δ are floats or ints (exact
    rationals); √k is bounded above by a dyadic rational within 2⁻⁶⁰ (exact
    for perfect squares). A σ formed in floats can round a few ulps below
    z·√k·Δ, and the discrete Gaussian is then slightly less private than the
    ρ = 1/(2z²) charged for it (CKS20, Thm. 4, with ρ = Δ²k/(2σ²)).
    """
    k = int(n_sums)
    scaled = k << 120  # k·4⁶⁰
    root = math.isqrt(scaled)
    if root * root != scaled:
        root += 1
    return Fraction(noise_multiplier) * Fraction(sensitivity) * Fraction(root, 1 << 60)


def float_at_least(value):
    """The smallest float >= the exact rational ``value`` (float() rounds to nearest)."""
    out = float(value)
    return out if Fraction(out) >= value else math.nextafter(out, math.inf)


def zcdp_rho_at_least(noise_multiplier):
    """ρ = 1/(2z²) rounded up: the discrete Gaussian with σ >= z·√k·Δ
    (:func:`gaussian_sigma_at_least`) is at most this ρ-zCDP (CKS20, Thm. 4)."""
    z = Fraction(noise_multiplier)
    rho = 1 / (2 * z * z)
    if rho > Fraction(sys.float_info.max):
        raise ValueError(
            f"noise_multiplier={float(noise_multiplier)!r} is too small: the discrete Gaussian's "
            "rho = 1/(2 z**2) is beyond the largest float (z must be above about 5.3e-155)."
        )
    return float_at_least(rho)


def _as_fraction(name, value):
    if isinstance(value, Fraction):
        out = value
    elif isinstance(value, int):
        out = Fraction(value)
    else:
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite and > 0; got {value!r}.")
        out = Fraction(value)  # exact: a float is a dyadic rational
    if out <= 0:
        raise ValueError(f"{name} must be > 0; got {value!r}.")
    return out


def _as_rng(random_state):
    from ..utils import check_generator

    return check_generator(random_state)


def _draw(one, size, rng):
    bits = _RandomBits(rng)
    if size is None:
        return one(bits)
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    count = math.prod(shape)
    out = np.array([one(bits) for _ in range(count)], dtype=object)
    if all(-(2**62) < x < 2**62 for x in out):
        out = out.astype(np.int64)
    return out.reshape(shape)


def sample_bernoulli_exp(
    gamma: float | Fraction,
    size: int | tuple[int, ...] | None = None,
    *,
    random_state: RandomStateLike = None,
) -> bool | NDArray[np.bool_]:
    """Exact draws of Bernoulli(exp(−γ)) (Canonne, Kamath & Steinke 2020, Alg. 1).

    Parameters
    ----------
    gamma : float, int or Fraction, >= 0
    size : int or tuple, optional
        ``None`` returns one bool.
    random_state : int, Generator or None

    Returns
    -------
    bool or ndarray of bool

    Examples
    --------
    >>> from skdp.mechanisms import sample_bernoulli_exp
    >>> draws = sample_bernoulli_exp(1, size=2000, random_state=0)
    >>> bool(0.33 < draws.mean() < 0.41)  # e^{-1} = 0.368; 4 standard deviations
    True
    """
    gamma = Fraction(0) if gamma == 0 else _as_fraction("gamma", gamma)
    rng = _as_rng(random_state)
    out = _draw(lambda bits: _bernoulli_exp(gamma, bits), size, rng)
    return np.asarray(out, dtype=bool) if size is not None else bool(out)


def sample_discrete_laplace(
    scale: float | Fraction,
    size: int | tuple[int, ...] | None = None,
    *,
    random_state: RandomStateLike = None,
) -> int | np.ndarray:
    """Exact draws of the discrete Laplace distribution on the integers.

    P(x) = (e^{1/scale} − 1)/(e^{1/scale} + 1) · exp(−|x| / scale), sampled
    with Canonne, Kamath & Steinke 2020, Algorithm 2 (integer and rational
    arithmetic only). Adding it to an integer query of sensitivity Δ with
    ``scale = Δ/ε`` is ε-DP (CKS20, Sec. 2; Ghosh, Roughgarden & Sundararajan
    2009 for the geometric mechanism).

    Parameters
    ----------
    scale : float, int or Fraction > 0
        Converted to a fraction ``t/s`` exactly.
    size : int or tuple, optional
        ``None`` returns one Python int.
    random_state : int, Generator or None

    Returns
    -------
    int or ndarray of int64 (object if a draw exceeds 2**62)

    Examples
    --------
    >>> from skdp.mechanisms import sample_discrete_laplace
    >>> sample_discrete_laplace(2.0, size=5, random_state=0).dtype
    dtype('int64')
    """
    scale = _as_fraction("scale", scale)
    s, t = scale.denominator, scale.numerator
    return _draw(lambda bits: _discrete_laplace(s, t, bits), size, _as_rng(random_state))


def sample_discrete_gaussian(
    sigma: float | Fraction,
    size: int | tuple[int, ...] | None = None,
    *,
    random_state: RandomStateLike = None,
) -> int | np.ndarray:
    """Exact draws of the discrete Gaussian N_Z(0, σ²) on the integers.

    P(x) ∝ exp(−x²/(2σ²)), sampled with Canonne, Kamath & Steinke 2020,
    Algorithm 3 (integer and rational arithmetic only). Adding it to an
    integer query of L2 sensitivity Δ is (Δ²/(2σ²))-zCDP (CKS20, Thm. 4).

    Parameters
    ----------
    sigma : float, int or Fraction > 0
        The scale parameter σ (the variance is slightly below σ²). σ² is
        formed exactly as a fraction.
    size : int or tuple, optional
    random_state : int, Generator or None

    Examples
    --------
    >>> from skdp.mechanisms import sample_discrete_gaussian
    >>> x = sample_discrete_gaussian(3.0, size=4000, random_state=0)
    >>> 8.0 < float(x.var()) < 10.0  # σ² = 9; Var(sample variance) ≈ 2σ⁴/n
    True
    """
    sigma = _as_fraction("sigma", sigma)
    sigma2 = sigma * sigma
    t = math.isqrt(sigma2.numerator // sigma2.denominator) + 1  # ⌊σ⌋ + 1
    return _draw(lambda bits: _discrete_gaussian(sigma2, t, bits), size, _as_rng(random_state))
