"""RDP of the subsampled Gaussian mechanism, vectorised over the orders.

Two sampling schemes:

- Poisson sampling (each row joins the batch independently with probability
  q): the exact RDP of Mironov, Talwar & Zhang 2019, "Rényi Differential
  Privacy of the Sampled Gaussian Mechanism" (MTZ19), under add/remove.
- Sampling a fixed-size batch without replacement: the general upper bound of
  Wang, Balle & Kasiviswanathan 2019 (WBK19, AISTATS), Thm. 9, which is stated
  for replace-one neighbours. See :func:`_replace_one_noise_multiplier` for
  the conversion to skdp's add/remove convention.

All the arithmetic is done in log space on 2-D arrays (orders × terms) so
that there is no Python loop over the orders.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from typing import TYPE_CHECKING

import numpy as np

# scipy.special is imported where used: import skdp stays fast
from ._curve import RDPCurve
from ._events import (
    ComposedEvent,
    GaussianEvent,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
)
from ._orders import check_orders

if TYPE_CHECKING:
    from .._typing import ArrayLike

__all__ = [
    "poisson_subsampled_gaussian_rdp",
    "sampled_without_replacement_gaussian_rdp",
]

_EPS = np.finfo(float).eps
# Adaptive series for fractional orders: first and last number of terms.
_SERIES_START = 64
_SERIES_MAX = 1 << 16
# Stop adding terms once the truncation bound is below this fraction of A − 1.
_SERIES_RTOL = 1e-11


# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------
def _check_rate(sampling_rate):
    if isinstance(sampling_rate, (bool, np.bool_)):
        raise ValueError(f"sampling_rate must be a number in [0, 1]; got {sampling_rate!r}.")
    try:
        q = float(sampling_rate)
    except (TypeError, ValueError):
        raise ValueError(f"sampling_rate must be a number in [0, 1]; got {sampling_rate!r}.") from None
    if not 0.0 <= q <= 1.0:  # also rejects NaN
        raise ValueError(f"sampling_rate must be in [0, 1]; got {sampling_rate!r}.")
    return q


def _check_sigma(noise_multiplier):
    if isinstance(noise_multiplier, (bool, np.bool_)):
        raise ValueError(f"noise_multiplier must be > 0; got {noise_multiplier!r}.")
    try:
        sigma = float(noise_multiplier)
    except (TypeError, ValueError):
        raise ValueError(f"noise_multiplier must be > 0; got {noise_multiplier!r}.") from None
    if not sigma > 0:  # also rejects NaN
        raise ValueError(f"noise_multiplier must be > 0 (inf allowed); got {noise_multiplier!r}.")
    return sigma


def _check_steps(steps):
    if isinstance(steps, (bool, np.bool_)):
        raise ValueError(f"steps must be an integer >= 0; got {steps!r}.")
    if isinstance(steps, numbers.Integral):
        k = int(steps)
    elif isinstance(steps, numbers.Real) and math.isfinite(steps) and float(steps).is_integer():
        k = int(steps)  # accept 1e7 written as a float
    else:
        raise ValueError(f"steps must be an integer >= 0; got {steps!r}.")
    if k < 0:
        raise ValueError(f"steps must be an integer >= 0; got {steps!r}.")
    return k


def _fmt(x):
    return f"{x:.6g}"


def _split_orders(orders):
    """Integer orders, fractional orders, and the integer orders needed overall."""
    is_int = orders == np.round(orders)
    frac = orders[~is_int]
    needed = np.union1d(orders[is_int], np.ceil(frac)).astype(np.int64)
    return is_int, frac, needed


def _log_expm1(x):
    """log(e^x − 1) for x > 0, accurate for tiny and for huge x."""
    with np.errstate(divide="ignore"):
        return x + np.log(-np.expm1(-x))


# --------------------------------------------------------------------------
# integer orders: sums of non-negative terms
# --------------------------------------------------------------------------
@functools.lru_cache(maxsize=32)
def _integer_blocks(int_orders):
    """Split sorted integer orders into blocks, each with its log C(α, k) table.

    A block holds rows α (orders) and columns k = 0..max α of the block, with
    log C(α, k) (−inf for k > α). Blocks keep the rectangles small: one block
    for 2..1024 would be mostly padding. The split minimises the number of
    cells plus a fixed cost per block (dynamic programming, cached per grid).
    """
    from scipy.special import gammaln

    alphas = np.asarray(int_orders, dtype=np.int64)
    n, overhead = alphas.size, 4096
    best = [0.0] + [math.inf] * n
    cut = [0] * (n + 1)
    for end in range(1, n + 1):
        for start in range(end):
            cost = best[start] + (end - start) * (alphas[end - 1] + 1) + overhead
            if cost < best[end]:
                best[end], cut[end] = cost, start
    bounds, end = [], n
    while end > 0:
        bounds.append((cut[end], end))
        end = cut[end]
    blocks = []
    for start, end in reversed(bounds):
        alpha = alphas[start:end].astype(float)[:, None]
        k = np.arange(int(alpha.max()) + 1, dtype=float)[None, :]
        with np.errstate(invalid="ignore"):
            table = gammaln(alpha + 1) - gammaln(k + 1) - gammaln(alpha - k + 1)
        table = np.where(k <= alpha, table, -np.inf)
        for a in (alpha, table):
            a.setflags(write=False)
        blocks.append((start, end, alpha, table))
    return blocks


def _lse_rows(a):
    """log Σ exp(a) along axis 1 (all −inf rows give −inf)."""
    m = a.max(axis=1)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(a - safe[:, None]), axis=1)) + safe


def _int_sum(int_orders, log_terms):
    """log Σ_k exp(log C(α,k) + log_terms(α, k)) for each integer order α, blockwise."""
    out = np.empty(len(int_orders))
    for start, end, alpha, table in _integer_blocks(tuple(int(a) for a in int_orders)):
        k = np.arange(table.shape[1], dtype=float)
        with np.errstate(invalid="ignore"):
            terms = table + log_terms(alpha, k)
        terms = np.where(np.isnan(terms), -np.inf, terms)  # −inf·0 where k > α
        out[start:end] = _lse_rows(terms)
    return out


def _poisson_log_a_minus_1_int(int_orders, log_q, log_1mq, sigma):
    """log(A_α − 1) of the Poisson-subsampled Gaussian at integer orders α >= 2.

    MTZ19, Sec. 3.2: A_α = Σ_k C(α,k) (1−q)^{α−k} q^k exp((k²−k)/(2σ²)).
    As Σ_k C(α,k)(1−q)^{α−k} q^k = 1 and the k = 0, 1 terms have exp(0) = 1,
    A_α − 1 = Σ_{k≥2} C(α,k) (1−q)^{α−k} q^k expm1(k(k−1)/(2σ²)): every term
    is >= 0, so nothing cancels, even when A_α − 1 is 1e-30.
    """

    def log_terms(alpha, k):
        with np.errstate(divide="ignore"):
            log_growth = _log_expm1(k * (k - 1) / (2.0 * sigma**2))  # −inf at k = 0, 1
        return (alpha - k) * log_1mq + (k * log_q + log_growth)

    return _int_sum(int_orders, log_terms)


def _poisson_rdp_int(int_orders, q, sigma):
    """Exact one-step RDP ε(α) = log(A_α)/(α − 1) at integer orders, 0 < q < 1."""
    log_am1 = _poisson_log_a_minus_1_int(int_orders, math.log(q), math.log1p(-q), sigma)
    log_a = np.logaddexp(0.0, log_am1)  # log(1 + (A − 1)), = log1p when A − 1 is tiny
    return log_a / (np.asarray(int_orders, dtype=float) - 1.0)


# --------------------------------------------------------------------------
# fractional orders: the two series of MTZ19, Sec. 3.3
# --------------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def _series_coefficients(alpha, n_terms):
    """σ- and q-free parts of the MTZ19 Sec. 3.3 series: log |C(α, i)|, its sign, i and j = α − i."""
    from scipy.special import gammaln, gammasgn

    alpha = np.asarray(alpha, dtype=float)[:, None]
    i = np.arange(n_terms + 1, dtype=float)
    j = alpha - i[None, :]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_binom = gammaln(alpha + 1) - gammaln(i + 1) - gammaln(j + 1)
        sign = gammasgn(j + 1)
    pole = (j + 1 <= 0) & (j == np.round(j))  # C(α, i) = 0 for integer α < i
    log_binom = np.where(pole, -np.inf, log_binom)
    sign = np.where(pole, 0.0, sign)
    for a in (log_binom, sign, i, j):
        a.setflags(write=False)
    return log_binom, sign, i, j


def _poisson_log_a_series(alpha, q, sigma, n_terms):
    """The MTZ19 Sec. 3.3 series for A_α at each order in ``alpha``, with error terms.

    With μ₀ = N(0, σ²), L(z) = exp((2z − 1)/(2σ²)) and
    z₀ = σ² log(1/q − 1) + 1/2 (where (1 − q) = qL), MTZ19 Sec. 3.3 splits
    A_α = ∫ μ₀(z) ((1 − q) + qL(z))^α dz at z₀ and expands each half with the
    generalised binomial series::

        A_α = Σ_i C(α,i) [ (1−q)^{α−i} q^i e^{(i²−i)/(2σ²)} Φ((z₀ − i)/σ)
                         + q^{α−i} (1−q)^i e^{(j²−j)/(2σ²)} Φ((j − z₀)/σ) ],  j = α − i.

    For i >= α + 1 the signs of C(α,i) alternate and both bracketed terms
    decrease in i (u²/2 + log Φ(−u) and v²/2 + log Φ(v) are monotone), so the
    error after n terms is at most the magnitude T_n of the first omitted term.

    Returns
    -------
    log_abs_sum, sign : ndarray
        log |Σ_{i<n} ...| and its sign.
    log_tail : ndarray
        log T_n, a bound on the truncation error (valid once n > α + 1).
    log_roundoff : ndarray
        log of a bound on the floating-point error of the sum.
    """
    from scipy.special import log_ndtr

    log_binom, sign, i, j = _series_coefficients(tuple(float(a) for a in np.atleast_1d(alpha)), n_terms)
    log_q, log_1mq = math.log(q), math.log1p(-q)
    z0 = sigma**2 * (log_1mq - log_q) + 0.5
    two_s2 = 2.0 * sigma**2
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e0 = (i * i - i) / two_s2  # depends on i only
        c0 = log_ndtr((z0 - i) / sigma)
        e1 = (j * j - j) / two_s2
        c1 = log_ndtr((j - z0) / sigma)
        part0 = (i * log_q + e0 + c0)[None, :] + j * log_1mq
        part1 = j * log_q + (i * log_1mq)[None, :] + e1 + c1
        log_t = log_binom + np.logaddexp(part0, part1)
        # Size of the numbers each term's logarithm was built from: the relative
        # error of a term is about eps times this (cancellation of exponents).
        scale = (
            (16.0 + n_terms) + np.abs(log_binom) + np.abs(e1) + np.abs(c1) + np.abs(j * log_q)
            + (np.abs(e0) + np.abs(c0) + np.abs(i * log_q))[None, :]
        )
    log_t = np.where(np.isnan(log_t), -np.inf, log_t)
    scale = np.where(np.isfinite(log_t), scale, 0.0)
    body = log_t[:, :-1]
    m = body.max(axis=1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    w = np.exp(body - m)
    total = np.sum(w * sign[:, :-1], axis=1)
    with np.errstate(divide="ignore"):
        log_abs_sum = np.log(np.abs(total)) + m[:, 0]
        log_roundoff = math.log(_EPS) + np.log(np.sum(w * scale[:, :-1], axis=1)) + m[:, 0]
    return log_abs_sum, np.sign(total), log_t[:, -1], log_roundoff


def _poisson_rdp_frac(frac_orders, q, sigma, *, with_error=True):
    """One-step RDP at fractional orders from the MTZ19 Sec. 3.3 series, as an upper bound.

    The number of terms grows (doubling, only for the orders that need it)
    until the truncation bound is below 1e-11 · (A − 1) or below the
    floating-point error. Both bounds are then added to A, so the value is on
    the safe side. Orders whose series never reach that state get ``inf``,
    with a warning naming them (the caller then uses the bound at ⌈α⌉).
    ``with_error=False`` leaves the error bounds out (for tests of the series).
    """
    frac_orders = np.asarray(frac_orders, dtype=float)
    out = np.full(frac_orders.shape, np.inf)
    todo = np.arange(frac_orders.size)
    n = max(_SERIES_START, 2 * int(np.ceil(frac_orders.max(initial=0.0))) + 16)
    while todo.size:
        alpha = frac_orders[todo]
        log_abs, sgn, log_tail, log_round = _poisson_log_a_series(alpha, q, sigma, n)
        with np.errstate(over="ignore", invalid="ignore"):
            a_minus_1 = np.where(sgn > 0, np.expm1(log_abs), -1.0)
            err = np.exp(log_tail) + np.exp(log_round)
            converged = (n > alpha + 1) & (
                (log_tail <= math.log(_SERIES_RTOL) + np.log(np.abs(a_minus_1)))
                | (log_tail <= log_round)
                | (log_tail == -np.inf)
            )
            if not with_error:
                err = 0.0
            upper = np.maximum(a_minus_1, 0.0) + err  # A − 1 upper bound
            rdp = np.log1p(upper) / (alpha - 1.0)
        # A − 1 may overflow for huge A; log A = log|Σ| then (error is negligible)
        big = ~np.isfinite(upper) & (sgn > 0)
        rdp = np.where(big, log_abs / (alpha - 1.0), rdp)
        ok = converged & np.isfinite(rdp) & ~np.isnan(rdp)
        out[todo[ok]] = rdp[ok]
        todo = todo[~ok]
        if todo.size and n >= _SERIES_MAX:
            bad = ", ".join(_fmt(a) for a in frac_orders[todo])
            warnings.warn(
                f"The subsampled-Gaussian series (q={_fmt(q)}, sigma={_fmt(sigma)}) did not "
                f"converge at order(s) {bad}; using the exact bound at the next integer order.",
                RuntimeWarning,
                stacklevel=3,
            )
            break
        n *= 2
    return np.maximum(out, 0.0)


class _PoissonGaussian:
    """One-step RDP of the Poisson-subsampled Gaussian on fixed orders and q.

    Everything that does not depend on σ is computed once, so noise
    calibration can evaluate many σ cheaply.
    """

    event = PoissonSampledEvent

    def __init__(self, sampling_rate, orders):
        self.q = sampling_rate
        self.orders = orders
        self.is_int, self.frac, self.needed = _split_orders(orders)
        self.int_pos = np.searchsorted(self.needed, orders[self.is_int].astype(np.int64))
        self.ceil_pos = np.searchsorted(self.needed, np.ceil(self.frac).astype(np.int64))

    def rdp(self, sigma):
        q, orders = self.q, self.orders
        if q == 0.0 or sigma == math.inf:
            return np.zeros(orders.shape)
        if q == 1.0:
            return orders / (2.0 * sigma**2)  # the plain Gaussian, Mironov 2017 Prop. 7
        out = np.empty(orders.shape)
        at_int = _poisson_rdp_int(self.needed, q, sigma)
        out[self.is_int] = at_int[self.int_pos]
        if self.frac.size:
            series = _poisson_rdp_frac(self.frac, q, sigma)
            # RDP is non-decreasing in α (van Erven & Harremoës 2014, Thm. 3), so
            # ε(⌈α⌉) also bounds ε(α): keep the smaller of the two upper bounds.
            out[~self.is_int] = np.minimum(series, at_int[self.ceil_pos])
        return out


def poisson_subsampled_gaussian_rdp(sampling_rate: float, noise_multiplier: float, steps: int = 1,
                                    *, orders: ArrayLike | None = None) -> RDPCurve:
    """RDP of the Poisson-subsampled Gaussian mechanism, composed ``steps`` times.

    Each step includes every row independently with probability
    ``sampling_rate`` and adds Gaussian noise of std σ · (L2 sensitivity) to a
    sum over the batch (DP-SGD). The curve is exact (Mironov, Talwar & Zhang
    2019) under add/remove-one-row; Notes give its computation.

    Parameters
    ----------
    sampling_rate : float in [0, 1]
        q, the probability that a row is in a batch.
    noise_multiplier : float > 0
        σ = noise std / L2 sensitivity under add/remove; ``inf`` gives zero.
    steps : int >= 0, default=1
        Number of compositions.
    orders : array-like, optional
        Rényi orders; default :data:`~skdp.accounting.DEFAULT_ORDERS`.

    Returns
    -------
    RDPCurve

    Notes
    -----
    Each step includes every row independently with probability
    ``sampling_rate`` = q and adds Gaussian noise of std σ · (L2 sensitivity)
    to a sum over the batch (DP-SGD). The RDP is exact (Mironov, Talwar &
    Zhang 2019), under add/remove-one-row:

    - integer α: the binomial sum of MTZ19 Sec. 3.2, written as
      A_α − 1 = Σ_{k≥2} C(α,k)(1−q)^{α−k} q^k expm1(k(k−1)/(2σ²)), a sum of
      non-negative terms in log space, then log A_α = log1p(A_α − 1);
    - fractional α: the two convergent series of MTZ19 Sec. 3.3 with an
      adaptive number of terms and their truncation and rounding errors added
      (so the value is an upper bound), capped by the exact value at ⌈α⌉
      (RDP is non-decreasing in α: van Erven & Harremoës 2014, Thm. 3).

    q = 1 gives the plain Gaussian α/(2σ²) exactly, and q = 0 gives zero.
    Composition over ``steps`` adds up (Mironov 2017, Prop. 1).

    Examples
    --------
    >>> from skdp.accounting import poisson_subsampled_gaussian_rdp
    >>> curve = poisson_subsampled_gaussian_rdp(0.01, 4.0, steps=10_000)
    >>> eps, order = curve.epsilon_and_order(1e-5)
    >>> round(eps, 4), order
    (1.0355, 17.0)
    """
    return _subsampled_curve(_PoissonGaussian, "poisson_subsampled_gaussian", sampling_rate,
                             noise_multiplier, steps, orders)


def _subsampled_curve(accountant, name, sampling_rate, noise_multiplier, steps, orders):
    """``steps`` compositions of a subsampled Gaussian, whose RDP ``accountant`` computes.

    The curve is silent (ε = 0) when nothing is released: rate 0, σ = ∞ or
    no step.
    """
    q = _check_rate(sampling_rate)
    sigma = _check_sigma(noise_multiplier)
    steps = _check_steps(steps)
    orders = check_orders(orders)
    rdp = accountant(q, orders).rdp(sigma) * steps
    silent = q == 0.0 or sigma == math.inf or steps == 0
    if silent:
        event = ComposedEvent(())
    else:
        event = accountant.event(q, GaussianEvent(sigma))
        event = event if steps == 1 else SelfComposedEvent(event, steps)
    return RDPCurve(
        orders,
        rdp,
        pure_epsilon=0.0 if silent else math.inf,
        mechanism=f"{steps} x {name}(sampling_rate={_fmt(q)}, noise_multiplier={_fmt(sigma)})",
        event=event,
    )


# --------------------------------------------------------------------------
# sampling without replacement: WBK19, Theorem 9
# --------------------------------------------------------------------------
def _replace_one_noise_multiplier(noise_multiplier):
    """σ relative to the replace-one sensitivity, from σ relative to add/remove.

    skdp's σ is noise std / C, where C is the add/remove-one L2 sensitivity
    (the clipping norm of one row's contribution to a sum). Replacing one row
    changes that sum by up to 2C, so the same noise has multiplier σ/2 relative
    to the replace-one sensitivity. WBK19 analyse replace-one neighbours; this
    is the one place where skdp converts.
    """
    return noise_multiplier / 2.0


def _wbk_log_moment_int(int_orders, gamma, base_rdp):
    """log of WBK19 Thm. 9's bound on E[(p/q)^α] at integer α >= 2.

    For a base mechanism with RDP ε(·) and no pure-DP bound (ε(∞) = ∞, so
    every min{2, (e^{ε(∞)} − 1)^j} is 2), sampling a fraction γ without
    replacement gives::

        1 + γ² C(α,2) min{4(e^{ε(2)} − 1), 2 e^{ε(2)}}
          + Σ_{j=3}^{α} 2 γ^j C(α,j) e^{(j−1) ε(j)}

    ``base_rdp(j)`` is ε(j), vectorised over an array of integers j.
    """
    log_gamma = math.log(gamma)
    eps2 = float(base_rdp(np.array([2.0]))[0])
    second = min(math.log(4.0) + float(_log_expm1(np.array(eps2))), math.log(2.0) + eps2)

    def log_terms(alpha, j):
        with np.errstate(invalid="ignore"):
            row = math.log(2.0) + j * log_gamma + (j - 1) * base_rdp(j)
        row[:2] = -np.inf
        row[2] = 2 * log_gamma + second
        return row[None, :]

    return np.logaddexp(0.0, _int_sum(int_orders, log_terms))


class _WORGaussian:
    """One-step RDP of the Gaussian with sampling without replacement (WBK19 Thm. 9)."""

    event = SampledWithoutReplacementEvent

    def __init__(self, sampling_rate, orders):
        self.gamma = sampling_rate
        self.orders = orders
        self.is_int, self.frac, self.needed = _split_orders(orders)
        # Fractional α: the bound at ⌈α⌉, valid as RDP is non-decreasing in α
        # (van Erven & Harremoës 2014, Thm. 3).
        self.pos = np.searchsorted(self.needed, np.ceil(orders).astype(np.int64))

    def rdp(self, sigma):
        if self.gamma == 0.0 or sigma == math.inf:
            return np.zeros(self.orders.shape)
        s1 = _replace_one_noise_multiplier(sigma)

        def base_rdp(j):  # Gaussian RDP under replace-one: α/(2 s1²), Mironov 2017 Prop. 7
            return j / (2.0 * s1**2)

        alpha = self.needed.astype(float)
        wbk = _wbk_log_moment_int(self.needed, self.gamma, base_rdp) / (alpha - 1.0)
        # Subsampling never hurts: the un-sampled mechanism's RDP also bounds it
        # (data processing; as in WBK19's own accountant).
        at_int = np.minimum(wbk, base_rdp(alpha))
        return at_int[self.pos]


def sampled_without_replacement_gaussian_rdp(
    sampling_rate: float, noise_multiplier: float, steps: int = 1, *,
    orders: ArrayLike | None = None,
) -> RDPCurve:
    """RDP of the Gaussian mechanism on fixed-size batches sampled without replacement.

    Each step sums per-row terms clipped to norm C over a uniformly random
    batch of fixed size and adds Gaussian noise of std σ · C. The bound is that
    of Wang, Balle & Kasiviswanathan 2019, Thm. 9, converted from replace-one
    to skdp's add/remove neighbours (see Notes).

    Parameters
    ----------
    sampling_rate : float in [0, 1]
        γ = batch size / dataset size.
    noise_multiplier : float > 0
        σ = noise std / add-remove L2 sensitivity; ``inf`` gives zero.
    steps : int >= 0, default=1
    orders : array-like, optional

    Returns
    -------
    RDPCurve

    Notes
    -----
    Each step uses a uniformly random batch of m = γ·n rows and adds Gaussian
    noise of std σ · C to a sum of per-row terms clipped to norm C. Uses the
    general upper bound of Wang, Balle & Kasiviswanathan 2019 (AISTATS),
    Thm. 9, at integer orders. At a fractional α it uses the bound at ⌈α⌉,
    which is valid because RDP is non-decreasing in α (van Erven &
    Harremoës 2014, Thm. 3).

    WBK19 analyse replace-one neighbours (the batch size is fixed), while
    ``noise_multiplier`` follows skdp's convention (σ relative to the
    add/remove sensitivity C). Replacing a row moves the sum by up to 2C, so
    the base Gaussian is evaluated with replace-one multiplier σ/2, i.e. with
    RDP α/(2(σ/2)²) = 2α/σ². The result is never above that base curve.

    Examples
    --------
    >>> from skdp.accounting import sampled_without_replacement_gaussian_rdp
    >>> curve = sampled_without_replacement_gaussian_rdp(0.01, 4.0, steps=10_000)
    >>> round(curve.epsilon(1e-5), 2)
    5.2
    """
    return _subsampled_curve(_WORGaussian, "without_replacement_gaussian", sampling_rate,
                             noise_multiplier, steps, orders)
