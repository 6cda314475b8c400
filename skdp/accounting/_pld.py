"""Discretised privacy loss distributions (PLD), composed by FFT.

A mechanism M and an ordered pair of neighbouring datasets (D, D') give the
privacy loss L = log(P(o)/Q(o)) of an output o ~ P = M(D), Q = M(D'). Its
distribution ω (the PLD) gives the exact hockey-stick divergence
(Meiser & Mohammadi 2018; Sommer, Meiser & Mohammadi 2019)::

    δ(ε) = E[(1 − e^{ε − L})₊] = Σ_l ω(l) (1 − e^{ε − l})₊ + ω(∞)

and the PLD of a composition is the convolution of the PLDs (same papers;
Koskela, Jälkö & Honkela 2020).

Here a PLD lives on a grid l = i·h. The losses of one mechanism are put on
the grid by "connect the dots" (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi
2022): a loss l between grid points a < l < b is split into masses at
a and b with the same total mass and the same E[e^{−L}], so the discrete PLD
has the same δ at every grid point ε and a larger δ between them (its δ is
the chord, in e^ε, of a convex function). Mass below the grid is moved up
to its lowest point and mass above it goes to the atom at ∞. Each of these
steps can only increase δ(ε) at every real ε, and if two PLDs are replaced
by PLDs with a larger δ(·) everywhere, so is their convolution (δ of the
sum is E_{L₂}[δ₁(ε − L₂)], monotone in δ₁). So the composed δ, and the ε
read from it, are never below the exact ones.

Composition takes one FFT per mechanism: the grid of the composition is
sized by Chernoff bounds on its finite part (mass beyond them is below a set
``tail_bound`` η, added to δ), the one-step PLDs are folded onto it, and the
product of their transforms raised to the counts is inverted once
(Koskela, Jälkö & Honkela 2020; Gopi, Lee & Wutschitz 2021). Mass outside the window that wraps around only adds mass.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np

from ._conversions import _check_delta

if TYPE_CHECKING:
    from .._typing import ArrayLike, FloatArray, FloatOrArray

__all__ = ["PrivacyLossDistribution"]


def _fast_length(n):
    """The smallest 2^a 3^b 5^c >= n: a length numpy's FFT (pocketfft) transforms fast.

    numpy's FFT rather than scipy's: importing ``scipy.fft`` took about 0.2 s,
    most of the time of ``skdp account``.
    """
    best = 1 << max(n - 1, 0).bit_length()
    five = 1
    while five < best:
        three = five
        while three < best:
            # the smallest power of two that lifts five * three to at least n
            length = three << max(math.ceil(n / three) - 1, 0).bit_length()
            best = min(best, length)
            three *= 3
        five *= 5
    return best

# Largest FFT the composition uses (a guard against absurd grids).
_MAX_FFT = 1 << 23
# Machine epsilon: ε read from a PLD is moved up by a few of these (rounding).
_FLOAT_EPS = np.finfo(float).eps
# Largest grid index whose loss i·h a float holds exactly enough for the grid:
# beyond 2**53 neighbouring indices are the same float.
_MAX_INDEX = 2.0**53


class LossBeyondGridError(ValueError):
    """A privacy loss too large for a PLD grid of the given spacing.

    A grid index i stands for the loss i·h; beyond 2**53 cells from 0,
    floats no longer tell neighbouring indices apart (and beyond 2**63 numpy
    integers overflow), so such a grid would not be pessimistic any more.
    Raised where a mechanism's PLD is put on its grid; the RDP accountant has
    no such limit.
    """


def check_grid_range(lo, hi, step):
    """Raise :class:`LossBeyondGridError` unless the losses [lo, hi] fit on a grid of spacing ``step``."""
    reach = max(abs(lo), abs(hi))
    if not reach / step <= _MAX_INDEX:  # also inf and nan
        raise LossBeyondGridError(
            f"the privacy loss reaches about {reach:.3g}, {reach / step:.3g} grid steps of {step:.3g} "
            f"from 0: beyond the 2**53 cells a PLD grid represents exactly (the noise is too small "
            "for the PLD accountant; the RDP accountant handles it)."
        )


class PrivacyLossDistribution:
    """A privacy loss distribution on the grid ``l = (offset + i) · step``.

    ``pmf[i]`` is the probability of loss ``(offset + i) · step`` and
    ``infinity_mass`` that of an infinite loss (an output that only one of
    the two datasets can produce). The object is pessimistic by construction
    (see the module docstring): :meth:`delta` and :meth:`epsilon` are upper
    bounds for the mechanism it was built from.

    Build one with the functions of the PLD accountant
    (:class:`~skdp.accounting.PLDAccountant`) rather than by hand.

    Parameters
    ----------
    step : float > 0
        The grid spacing h.
    offset : int
        Grid index of ``pmf[0]``.
    pmf : array-like of float >= 0
    infinity_mass : float in [0, 1], default=0
    extra_delta : float >= 0, default=0
        Mass known to lie outside the grid (tail bounds of a composition):
        added to every δ.

    Examples
    --------
    >>> import math
    >>> from skdp.accounting import PrivacyLossDistribution
    >>> p = math.exp(1.0) / (1.0 + math.exp(1.0))
    >>> rr = PrivacyLossDistribution(1.0, -1, [1 - p, 0.0, p])  # 1-DP randomized response
    >>> rr.epsilon(0.0)
    1.0
    >>> round(rr.delta(0.0), 6)  # total variation distance
    0.462117
    """

    __slots__ = ("step", "offset", "pmf", "infinity_mass", "extra_delta", "_tails")

    def __init__(self, step: float, offset: int, pmf: ArrayLike, infinity_mass: float = 0.0, *,
                 extra_delta: float = 0.0) -> None:
        step = float(step)
        if not (math.isfinite(step) and step > 0):
            raise ValueError(f"step must be finite and > 0; got {step!r}.")
        if isinstance(offset, (bool, np.bool_)) or not isinstance(offset, numbers.Integral):
            raise ValueError(f"offset must be an integer; got {offset!r}.")
        pmf = np.array(pmf, dtype=float).ravel()
        if pmf.size == 0 or not np.all(np.isfinite(pmf)) or np.any(pmf < 0):
            raise ValueError("pmf must be a non-empty array of finite values >= 0.")
        infinity_mass = float(infinity_mass)
        if not 0.0 <= infinity_mass <= 1.0:
            raise ValueError(f"infinity_mass must be in [0, 1]; got {infinity_mass!r}.")
        extra_delta = float(extra_delta)
        if not extra_delta >= 0.0:
            raise ValueError(f"extra_delta must be >= 0; got {extra_delta!r}.")
        pmf.setflags(write=False)
        self.step = step
        self.offset = int(offset)
        self.pmf = pmf
        self.infinity_mass = infinity_mass
        self.extra_delta = extra_delta
        self._tails = None

    # -- queries -----------------------------------------------------------
    @property
    def losses(self) -> FloatArray:
        """The loss of each cell of ``pmf``."""
        return (self.offset + np.arange(self.pmf.size)) * self.step

    def _tail_sums(self):
        """Over the cells with loss l_j > 0: S₀_j = Σ_{i>=j} p_i and U_j = Σ_{i>=j} p_i e^{−(l_i − l_j)}.

        U is formed in chunks of at most 600/h cells, so that no exponential
        overflows or underflows to a wrong value even when the losses are in
        the thousands.
        """
        if self._tails is None:
            tails = self._compute_tail_sums()
            for a in tails:
                a.setflags(write=False)
            self._tails = tails
        return self._tails

    def _compute_tail_sums(self):
        start = max(0, -self.offset + 1)  # first cell with l > 0
        p = self.pmf[start:]
        n = p.size
        h = self.step
        losses = (self.offset + start + np.arange(n)) * h
        s0 = np.cumsum(p[::-1])[::-1]
        u = np.empty(n)
        if n == 0:
            return losses, s0, u
        if h > 300.0:
            # e^{−h} < 1e-130: U_j = p_j + e^{−h} U_{j+1} is taken as p_j, a smaller U
            # and so a larger δ (the safe side), without a loop over the cells
            return losses, s0, p.copy()
        chunk = max(1, int(600.0 / h))
        carry, carry_at = 0.0, n  # U at cell carry_at (the start of the chunk after)
        for begin in range(max(0, n - chunk), -chunk, -chunk):
            begin = max(0, begin)
            end = min(n, begin + chunk) if carry_at == n else carry_at
            k = np.arange(end - begin) * h
            with np.errstate(under="ignore"):
                local = np.cumsum((p[begin:end] * np.exp(-k))[::-1])[::-1] * np.exp(k)
                u[begin:end] = local + carry * np.exp(-(end - begin - np.arange(end - begin)) * h)
            carry, carry_at = u[begin], begin
            if begin == 0:
                break
        return losses, s0, u

    def delta(self, epsilon: ArrayLike) -> FloatOrArray:
        """Smallest δ(ε) this PLD certifies, for ε >= 0 (a float or an array).

        δ(ε) = Σ_{l > ε} p(l)(1 − e^{ε − l}) + p(∞) (Sommer, Meiser &
        Mohammadi 2019), plus the tail mass kept outside the grid.
        """
        eps = np.asarray(epsilon, dtype=float)
        if np.any(np.isnan(eps)) or np.any(eps < 0):
            raise ValueError("epsilon must be >= 0.")
        losses, s0, u = self._tail_sums()
        # first cell with loss > ε: δ = S₀ − e^{ε − l} U there (ε − l < 0)
        idx = np.searchsorted(losses, eps, side="right")
        s0 = np.append(s0, 0.0)
        u = np.append(u, 0.0)
        gap = eps - np.append(losses, np.inf)[idx]
        with np.errstate(under="ignore", invalid="ignore"):
            finite = s0[idx] - np.exp(np.minimum(gap, 0.0)) * u[idx]
        finite = np.where(np.isfinite(finite), np.maximum(finite, 0.0), 0.0)
        out = np.minimum(1.0, finite + self.infinity_mass + self.extra_delta)
        return float(out) if out.ndim == 0 else out

    def epsilon(self, delta: float) -> float:
        """Smallest ε >= 0 with :meth:`delta` (ε) <= ``delta`` (``inf`` if none).

        On the cell (l_{j−1}, l_j], δ(ε) = S₀_j − e^{ε − l_j} U_j (suffix sums
        over the cells from j on), so ε is solved exactly in the cell where
        δ crosses the target.
        """
        delta = _check_delta(delta)
        budget = delta - self.infinity_mass - self.extra_delta
        if budget < 0:
            return math.inf
        losses, s0, u = self._tail_sums()
        if losses.size == 0:
            return 0.0
        if budget == 0:  # pure DP: the largest loss that has mass
            nz = np.flatnonzero(s0 > 0)
            return float(losses[nz[-1]]) if nz.size else 0.0
        # δ at each grid loss l_j (cells from j + 1 on, one step h away) and at ε = 0
        with np.errstate(under="ignore"):
            at_grid = np.append(s0[1:] - math.exp(-self.step) * u[1:], 0.0)
            at_zero = s0[0] - math.exp(-float(losses[0])) * u[0]
        if at_zero <= budget:
            return 0.0
        j = int(np.flatnonzero(at_grid <= budget)[0])  # δ(l_j) <= budget < δ(l_{j−1})
        low = float(losses[j - 1]) if j > 0 else 0.0
        high = float(losses[j])
        if u[j] <= 0 or not s0[j] - budget > 0:
            return high
        eps = high + math.log(float((s0[j] - budget) / u[j]))
        eps = min(max(eps, low), high)
        # one ulp-scale step up so that float error stays on the safe side
        return float(max(0.0, eps * (1.0 + 4.0 * _FLOAT_EPS) + 4.0 * _FLOAT_EPS * self.step))

    # -- composition -------------------------------------------------------
    def compose(self, other: PrivacyLossDistribution, *,
                tail_bound: float = 1e-15) -> PrivacyLossDistribution:
        """The PLD of running both mechanisms (on the same pair of datasets)."""
        if not isinstance(other, PrivacyLossDistribution):
            raise TypeError("compose expects a PrivacyLossDistribution.")
        return compose_plds([(self, 1), (other, 1)], tail_bound=tail_bound)

    def self_compose(self, count: int, *, tail_bound: float = 1e-15) -> PrivacyLossDistribution:
        """The PLD of ``count`` runs of this mechanism, by one FFT power."""
        if isinstance(count, (bool, np.bool_)) or not isinstance(count, numbers.Integral) or count < 0:
            raise ValueError(f"count must be an integer >= 0; got {count!r}.")
        return compose_plds([(self, int(count))], tail_bound=tail_bound)

    def __repr__(self):
        return (f"PrivacyLossDistribution(step={self.step:g}, losses=[{self.offset * self.step:g}, "
                f"{(self.offset + self.pmf.size - 1) * self.step:g}], infinity_mass={self.infinity_mass:g})")


def _mgf_side(pld, sign):
    """The cells of ``pld`` ordered from the end that λ of this sign favours, with their distances to it."""
    n = pld.pmf.size
    if sign > 0:
        return pld.pmf[::-1], -np.arange(n) * pld.step, (pld.offset + n - 1) * pld.step
    return pld.pmf, np.arange(n) * pld.step, pld.offset * pld.step


def _log_mgf(side, lam, step):
    """(K, K'): an upper bound on K(λ) = log Σ p(l) e^{λl} over the finite cells, and K'(λ).

    ``side`` is :func:`_mgf_side` of the PLD for the sign of λ. On the grid
    e^{λl} = e^{λ l_end} · r^j with r = e^{−|λ|h} and j the number of cells
    from that end, so the weights are a running product instead of
    exponentials. Its rounding error, below n·2⁻⁵³ relative for n <= 2²³
    cells, is covered by adding 1e-9 to K.
    """
    p, dist, end = side
    n = p.size
    w = np.empty(n)
    w[0] = 1.0
    if n > 1:
        w[1:] = math.exp(-abs(lam) * step)
        with np.errstate(under="ignore"):
            np.cumprod(w[1:], out=w[1:])
    pw = p * w
    total = float(np.sum(pw))
    if total <= 0:
        return -math.inf, 0.0
    slope = end + float(np.sum(pw * dist)) / total
    return lam * end + math.log(total) + 1e-9, slope


def _bennett(var, reach, log_eta):
    """t with exp(−(v/b²) h(bt/v)) = η, h(u) = (1 + u) log(1 + u) − u (Bennett's inequality).

    For independent losses with L_i − E L_i <= b (``reach``) and total
    variance v, P(S − E S >= t) <= η (Bennett 1962).
    """
    if var <= 0 or reach <= 0:
        return 0.0
    target = -log_eta * reach * reach / var
    lo, hi = 0.0, 1.0
    while (1 + hi) * math.log1p(hi) - hi < target:
        hi *= 2.0
    for _ in range(60):
        u = 0.5 * (lo + hi)
        if (1 + u) * math.log1p(u) - u < target:
            lo = u
        else:
            hi = u
    return hi * var / reach


def chernoff_window(parts, log_eta):
    """Losses [lo, hi] beyond which the composed finite mass is <= e^{log_eta} on each side.

    Each side takes the better of two bounds. Bennett's inequality, from the
    variance and the largest step of one run's loss from its mean on that
    side, is nearly Gaussian when that step is small (a light tail). Else
    Chernoff: P(S >= t) <= exp(K(λ) − λt) for λ > 0 (and P(S <= t) for
    λ < 0), with K the log-MGF of the sum of the independent losses. Any λ
    gives a valid bound; the bound on t, (K(λ) − log η)/λ, is unimodal in λ
    (its derivative has the sign of λK' − K + log η, which increases as K is
    convex), so λ is found by bisection on that sign in log λ, between a
    quarter of the inverse span of one run's losses (rare large losses) and
    128 z/sd (z the normal quantile of η, sd the composed standard
    deviation: near-Gaussian sums); the best t seen is kept.
    """
    step = parts[0][0].step
    mean = 0.0
    var = 0.0
    reach_up = reach_down = 0.0
    for pld, count in parts:
        losses = pld.losses
        total = pld.pmf.sum()
        m1 = float(np.sum(pld.pmf * losses) / total)
        m2 = float(np.sum(pld.pmf * (losses - m1) ** 2) / total)
        mean += count * m1
        var += count * m2
        reach_up = max(reach_up, float(losses[-1]) - m1)
        reach_down = max(reach_down, m1 - float(losses[0]))
    sd = max(math.sqrt(var), step)
    z = math.sqrt(-2.0 * log_eta)
    span = max((pld.pmf.size - 1) * pld.step for pld, _ in parts)
    lam_hi = 128.0 * z / sd
    lam_lo = min(z / sd / 128.0, 0.25 / max(span, step))

    def bound(sign):
        best = _bennett(var, reach_up if sign > 0 else reach_down, log_eta)
        if best <= 1.05 * z * sd:  # nearly Gaussian: Chernoff would not do much better
            return mean + sign * best
        best = mean + best if sign > 0 else -(mean - best)
        sides = [(_mgf_side(pld, sign), count) for pld, count in parts]
        a, b = math.log(lam_lo), math.log(lam_hi)
        for _ in range(8):
            x = 0.5 * (a + b)
            lam = sign * math.exp(x)
            k = kp = 0.0
            for side, count in sides:
                k1, kp1 = _log_mgf(side, lam, step)
                k += count * k1
                kp += count * kp1
            t = (k - log_eta) / lam  # P(S >= t) <= η for λ > 0 (<= t for λ < 0)
            best = min(best, t) if sign > 0 else min(best, -t)
            if lam * kp - k + log_eta > 0:  # past the optimum: smaller |λ|
                b = x
            else:
                a = x
        return best if sign > 0 else -best

    return bound(-1.0), bound(1.0), mean, sd


def _power(f, count):
    """f**count for complex f with |f| <= 1, skipping the terms that underflow to 0."""
    with np.errstate(divide="ignore"):
        log_abs = np.log(np.abs(f)) * count
    out = np.zeros_like(f)
    live = log_abs > -745.0
    g = f[live]
    out[live] = np.exp(log_abs[live] + 1j * (count * np.angle(g)))
    return out


def compose_plds(parts, *, tail_bound=1e-15, spectra=None):
    """The PLD of the composition of ``count`` copies of each PLD in ``parts``.

    Parameters
    ----------
    parts : list of (PrivacyLossDistribution, int)
        PLDs on one grid spacing, with their counts.
    tail_bound : float in (0, 1)
        η: the composed finite mass beyond each end of the grid is at most η
        (Chernoff bounds), and 2η is added to every δ.
    spectra : dict, optional
        A cache shared by calls on the same PLD objects (the two directions
        of a composition): the transform of a PLD folded on a circle of a
        given size, raised to a count, depends on nothing else.

    Returns
    -------
    PrivacyLossDistribution
    """
    parts = [(pld, int(count)) for pld, count in parts if count > 0]
    if not parts:
        raise ValueError("nothing to compose.")
    step = parts[0][0].step
    if any(pld.step != step for pld, _ in parts):
        raise ValueError("all PLDs must share one grid spacing.")
    # ∞ atoms: the composition is finite only when every run is.
    log_finite = 0.0
    for pld, count in parts:
        if pld.infinity_mass >= 1.0:
            return PrivacyLossDistribution(step, 0, [0.0], 1.0)
        log_finite += count * math.log1p(-pld.infinity_mass)
    infinity_mass = max(0.0, -math.expm1(log_finite))
    extra = sum(count * pld.extra_delta for pld, count in parts)
    full_lo = sum(count * pld.offset for pld, count in parts)
    full_hi = sum(count * (pld.offset + pld.pmf.size - 1) for pld, count in parts)
    full_n = full_hi - full_lo + 1
    if len(parts) == 1 and parts[0][1] == 1:
        pld = parts[0][0]
        return PrivacyLossDistribution(step, pld.offset, pld.pmf, pld.infinity_mass,
                                       extra_delta=pld.extra_delta)
    if full_n <= 1 << 16:
        lo_idx, n, eta = full_lo, full_n, 0.0
    else:
        t_lo, t_hi, _, _ = chernoff_window(parts, math.log(tail_bound))
        lo_idx = full_lo if not math.isfinite(t_lo) else max(full_lo, math.floor(t_lo / step) - 1)
        hi_idx = full_hi if not math.isfinite(t_hi) else min(full_hi, math.ceil(t_hi / step) + 1)
        n = hi_idx - lo_idx + 1
        eta = 2.0 * tail_bound if n < full_n else 0.0
    if n > _MAX_FFT:
        raise ValueError(
            f"the composed privacy loss needs a grid of {n} points (more than {_MAX_FFT}); "
            "use a coarser value_discretization."
        )
    size = _fast_length(n)
    spectrum = None
    for pld, count in parts:
        key = (id(pld), size, count)
        if spectra is not None and key in spectra:
            f = spectra[key][1]
            spectrum = f if spectrum is None else spectrum * f
            continue
        # fold the one-step PLD onto the circular grid of the composition
        idx = (pld.offset + np.arange(pld.pmf.size)) % size
        folded = np.bincount(idx, weights=pld.pmf, minlength=size) if pld.pmf.size > size else None
        if folded is None:
            folded = np.zeros(size)
            start = pld.offset % size
            first = min(pld.pmf.size, size - start)
            folded[start:start + first] = pld.pmf[:first]
            folded[: pld.pmf.size - first] += pld.pmf[first:]
        f = np.fft.rfft(folded)
        if count > 1:
            f = _power(f, count)
        if spectra is not None:
            spectra[key] = (pld, f)  # the PLD is kept so that its id stays its own
        spectrum = f if spectrum is None else spectrum * f
    circ = np.fft.irfft(spectrum, n=size)
    # place cell (lo_idx + j) at its circular position
    pos = (lo_idx + np.arange(n)) % size
    pmf = circ[pos]
    # FFT round-off is about eps · log2(size) · total mass per cell; values
    # below that are noise. Clipping them to 0 only adds mass (pessimistic).
    pmf = np.where(pmf < 0, 0.0, pmf)
    return PrivacyLossDistribution(step, lo_idx, pmf, infinity_mass, extra_delta=extra + eta)
