"""Accountants: compose privacy events and report (ε, δ).

- :class:`PLDAccountant`: privacy loss distributions, the tightest (ε, δ)
  (see :mod:`skdp.accounting._pld`).
- :class:`RDPAccountant`: Rényi DP curves (:class:`~skdp.accounting.RDPCurve`),
  for every event, including those without a PLD (ρ-zCDP).

Both answer ``supports(event)`` and share one interface: ``compose(event,
count=1)``, ``epsilon(delta)`` and ``delta(epsilon)``, so a ledger can use
the PLD accountant when every charge has a PLD and the RDP one otherwise.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from ._basic import (
    _bounded_range_rdp,
    approximate_dp_rdp,
    gaussian_rdp,
    laplace_rdp,
    pure_dp_rdp,
    randomized_response_rdp,
    zcdp_rdp,
)
from ._conversions import _check_delta
from ._curve import RDPCurve
from ._events import (
    ApproximateDPEvent,
    BoundedRangeEvent,
    ComposedEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    DPEvent,
    GaussianEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PoissonSampledEvent,
    PureDPEvent,
    RandomizedResponseEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ZCDPEvent,
    _flatten,
)
from ._gdp import gdp_to_delta, gdp_to_epsilon
from ._orders import check_orders
from ._pld import LossBeyondGridError, chernoff_window, compose_plds
from . import _pld_mechanisms as _mech
from ._subsampled import poisson_subsampled_gaussian_rdp, sampled_without_replacement_gaussian_rdp

if TYPE_CHECKING:
    from .._typing import ArrayLike
    from ._pld import PrivacyLossDistribution

__all__ = ["PLDAccountant", "RDPAccountant", "epsilon_of"]

# Largest grid (cells) the default discretisation aims for, per PLD.
_MAX_CELLS = 1 << 19


def _check_epsilon(epsilon):
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon < 0:
        raise ValueError(f"epsilon must be >= 0; got {epsilon!r}.")
    return epsilon


_Acc = TypeVar("_Acc", bound="_Accountant")


class _Accountant:
    """What both accountants share: the list of composed events."""

    def __init__(self) -> None:
        self._leaves = {}  # leaf event -> count

    def supports(self, event: DPEvent) -> bool:
        """True when this accountant can analyse ``event`` (and all its parts)."""
        if not isinstance(event, DPEvent):
            return False
        return all(self._leaf_ok(leaf) for leaf, _ in _flatten(event))

    def compose(self: _Acc, event: DPEvent, count: int = 1) -> _Acc:
        """Add ``count`` runs of ``event``; returns the accountant (so calls chain).

        Raises ``ValueError`` (and adds nothing) if the event is not supported.
        """
        event = SelfComposedEvent(event, count) if count != 1 else event
        if not self.supports(event):
            raise ValueError(f"{type(self).__name__} does not support {event!r}.")
        for leaf, c in _flatten(event):
            self._leaves[leaf] = self._leaves.get(leaf, 0) + c
        self._changed()
        return self

    @property
    def event(self) -> ComposedEvent:
        """Everything composed so far, as one :class:`~skdp.accounting.ComposedEvent`."""
        return ComposedEvent(
            tuple(leaf if c == 1 else SelfComposedEvent(leaf, c) for leaf, c in self._leaves.items())
        )

    def _leaf_ok(self, leaf):
        """True when this accountant can analyse the leaf event ``leaf`` (each accountant says)."""
        raise NotImplementedError

    def _changed(self):
        pass

    def __repr__(self):
        return f"{type(self).__name__}({len(self._leaves)} mechanisms)"


# --------------------------------------------------------------------------
# PLD
# --------------------------------------------------------------------------
def _is_plain_gaussian(leaf):
    """σ when ``leaf`` is the un-sampled Gaussian (or sampled with rate 1 by Poisson), else None."""
    if isinstance(leaf, GaussianEvent):
        return leaf.noise_multiplier
    if (isinstance(leaf, PoissonSampledEvent) and leaf.sampling_rate == 1.0
            and isinstance(leaf.event, GaussianEvent)):
        return leaf.event.noise_multiplier
    return None


def _is_silent(leaf):
    return isinstance(leaf, (PoissonSampledEvent, SampledWithoutReplacementEvent)) and leaf.sampling_rate == 0.0


def _finite_atoms(leaf):
    """(losses, masses) of a mechanism whose PLD is finite, else None (for moments and lattices)."""
    if isinstance(leaf, (PureDPEvent, BoundedRangeEvent)):
        leaf = RandomizedResponseEvent(leaf.epsilon, 2)
    if isinstance(leaf, RandomizedResponseEvent):
        e, k = leaf.epsilon, leaf.n_categories
        other = math.exp(-e) / (1.0 + (k - 1) * math.exp(-e))  # 1/(e^ε + k − 1), without overflow
        return [e, -e, 0.0], [1.0 - (k - 1) * other, other, (k - 2) * other]
    if isinstance(leaf, ApproximateDPEvent):
        p = (1 - leaf.delta) / (1 + math.exp(-leaf.epsilon))
        return [leaf.epsilon, -leaf.epsilon], [p, 1 - leaf.delta - p]
    return None


def _lattice(leaf):
    """A spacing g such that every loss of ``leaf`` is a multiple of g, or None."""
    if isinstance(leaf, (PureDPEvent, BoundedRangeEvent, RandomizedResponseEvent, ApproximateDPEvent)):
        return leaf.epsilon if leaf.epsilon > 0 else None
    if isinstance(leaf, DiscreteLaplaceEvent):
        return 1.0 / leaf.scale  # losses a(Δ − 2x), a = 1/scale
    return None


def _common_lattice(leaves):
    """The smallest lattice spacing g of ``leaves`` when all have lattices multiples of g, else None."""
    lattices = [_lattice(leaf) for leaf in leaves]
    if not lattices or any(g is None for g in lattices):
        return None
    g = min(lattices)
    if all(_on_lattice(x, g) for x in lattices):
        return g
    return None


def _on_lattice(x, g):
    return abs(x / g - round(x / g)) <= 1e-9 * x / g


# A ledger may hold 10⁴ distinct mechanisms: these caches hold them all (a few floats each).
@functools.lru_cache(maxsize=1 << 16)
def _loss_variance(leaf):
    """An estimate of the variance of one run's privacy loss (only used to size the grid)."""
    sigma = _is_plain_gaussian(leaf)
    if sigma is not None:
        return (1.0 / sigma) * (1.0 / sigma)
    atoms = _finite_atoms(leaf)
    if atoms is not None:
        losses, masses = atoms
        total = sum(masses)
        mean = sum(l * m for l, m in zip(losses, masses)) / total
        return max(sum((l - mean) ** 2 * m for l, m in zip(losses, masses)) / total, 1e-300)
    if isinstance(leaf, LaplaceEvent):
        return max(_mech.laplace_loss_variance(leaf.noise_multiplier), 1e-300)
    if isinstance(leaf, DiscreteLaplaceEvent):
        losses, masses = _mech.discrete_laplace_atoms(leaf.scale, leaf.sensitivity)
        mean = float(np.sum(losses * masses) / np.sum(masses))
        return max(float(np.sum((losses - mean) ** 2 * masses) / np.sum(masses)), 1e-300)
    if isinstance(leaf, DiscreteGaussianEvent):
        return (leaf.sensitivity / leaf.sigma) ** 2
    if isinstance(leaf, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
        mu = 1.0 / leaf.event.noise_multiplier
        if isinstance(leaf, SampledWithoutReplacementEvent):
            mu *= 2.0
        q = leaf.sampling_rate
        # q²(e^{μ²} − 1): the CLT variance of Bu, Dong, Long & Su 2020 (an estimate)
        return min(mu * mu, q * q * math.expm1(min(mu * mu, 700.0)))
    raise ValueError(f"no PLD for {leaf!r}.")  # pragma: no cover - supports() comes first


@functools.lru_cache(maxsize=1 << 16)
def _loss_span(leaf, tail):
    """About how wide one run's privacy loss is on the grid (before truncation at ``tail``)."""
    z = _mech._z(tail)
    sigma = _is_plain_gaussian(leaf)
    if sigma is not None:
        return 2.0 * z / sigma
    if isinstance(leaf, (PureDPEvent, BoundedRangeEvent, RandomizedResponseEvent, ApproximateDPEvent)):
        return 2.0 * leaf.epsilon
    if isinstance(leaf, LaplaceEvent):
        return 2.0 / leaf.noise_multiplier
    if isinstance(leaf, DiscreteLaplaceEvent):
        return 2.0 * leaf.sensitivity / leaf.scale
    if isinstance(leaf, DiscreteGaussianEvent):
        return 2.4 * z * leaf.sensitivity / leaf.sigma
    if isinstance(leaf, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
        mu = (2.0 if isinstance(leaf, SampledWithoutReplacementEvent) else 1.0) / leaf.event.noise_multiplier
        q = leaf.sampling_rate
        if q >= 1.0:
            return 2.0 * z * mu
        return float(_mech._subsampled_loss(mu + z, q, mu) - _mech._subsampled_loss(-z, q, mu))
    return 0.0


def _largest_loss(leaf):
    """(largest finite privacy loss of one run, probability of an infinite one); inf when unbounded.

    ε-DP mechanisms have losses in [−ε, ε] (their PLDs above); (ε, δ)-DP adds
    an infinite loss with probability δ (Kairouz, Oh & Viswanath 2015).
    """
    if isinstance(leaf, (PureDPEvent, BoundedRangeEvent, RandomizedResponseEvent)):
        return leaf.epsilon, 0.0
    if isinstance(leaf, ApproximateDPEvent):
        return leaf.epsilon, leaf.delta
    if isinstance(leaf, LaplaceEvent):
        return 1.0 / leaf.noise_multiplier, 0.0
    if isinstance(leaf, DiscreteLaplaceEvent):
        return leaf.sensitivity / leaf.scale, 0.0
    return math.inf, 0.0


def _loss_ceiling(active):
    """(L, p): the composed loss is at most L except with probability p (infinite losses).

    So δ(L) = p exactly and, for δ >= p, ε(δ) <= L: a cap that is exact for
    pure DP and keeps the grid's rounding from pushing ε above the largest loss.
    """
    total, log_finite = 0.0, 0.0
    for leaf, c in active:
        loss, inf_mass = _largest_loss(leaf)
        total += c * loss
        log_finite += c * math.log1p(-inf_mass)
    return total, -math.expm1(log_finite)


def _leaf_plds(leaf, step, tail):
    """(remove, add) PLDs of one run of ``leaf``; the same object twice when symmetric."""
    if isinstance(leaf, GaussianEvent):
        pld = _mech.gaussian_pld(leaf.noise_multiplier, step, tail)
    elif isinstance(leaf, LaplaceEvent):
        pld = _mech.laplace_pld(leaf.noise_multiplier, step, tail)
    elif isinstance(leaf, RandomizedResponseEvent):
        pld = _mech.randomized_response_pld(leaf.epsilon, leaf.n_categories, step)
    elif isinstance(leaf, (PureDPEvent, BoundedRangeEvent)):
        # an ε-BR mechanism is ε-DP: the binary RR pair dominates it (Kairouz et al. 2015)
        pld = _mech.randomized_response_pld(leaf.epsilon, 2, step)
    elif isinstance(leaf, ApproximateDPEvent):
        pld = _mech.approximate_dp_pld(leaf.epsilon, leaf.delta, step)
    elif isinstance(leaf, DiscreteLaplaceEvent):
        pld = _mech.discrete_laplace_pld(leaf.scale, leaf.sensitivity, step)
    elif isinstance(leaf, DiscreteGaussianEvent):
        pld = _mech.discrete_gaussian_pld(leaf.sigma, leaf.sensitivity, step, tail)
    elif isinstance(leaf, PoissonSampledEvent):
        q, sigma = leaf.sampling_rate, leaf.event.noise_multiplier
        if q == 1.0:
            pld = _mech.gaussian_pld(sigma, step, tail)
        else:
            return (_mech.poisson_gaussian_remove_pld(q, sigma, step, tail),
                    _mech.poisson_gaussian_add_pld(q, sigma, step, tail))
    elif isinstance(leaf, SampledWithoutReplacementEvent):
        pld = _mech.without_replacement_gaussian_pld(leaf.sampling_rate, leaf.event.noise_multiplier,
                                                     step, tail)
    else:  # pragma: no cover - supports() comes first
        raise ValueError(f"no PLD for {leaf!r}.")
    return pld, pld


class PLDAccountant(_Accountant):
    """The tightest (ε, δ) of a composition, from its privacy loss distribution.

    Each mechanism's privacy loss distribution is discretised pessimistically
    and the composition is computed by FFT, so the ε it reports is never below
    the exact one. Notes give the method and its sources.

    Parameters
    ----------
    value_discretization : float > 0, optional
        The grid spacing of the losses. By default it is chosen from the
        events: at most 1/1000 of the composed loss's standard deviation and
        √0.003 times that of one run (so that rounding widens the composed
        loss by about 0.05% of its variance), with at most about 2¹⁹ cells.
    tail_bound : float in (0, 1e-3], default=1e-15
        Probability mass left out of the grid at each end (it is added to δ).

    Notes
    -----
    Each mechanism's PLD is put on a grid pessimistically ("connect the
    dots", Doroshenko et al. 2022) and the composition is one FFT per
    mechanism (see :class:`~skdp.accounting.PrivacyLossDistribution`), so the
    ε it reports is never below the exact one, and in practice within a
    fraction of a percent of it. Under add/remove the Poisson-subsampled
    Gaussian has different PLDs for adding and for removing a row: both
    compositions are computed and the larger δ is taken (as dp-accounting
    does); for the other mechanisms both are equal. A composition of plain
    Gaussians alone is μ-GDP with μ = √(Σ 1/σ²) (Dong, Roth & Su 2022,
    Cor. 3.3), which is exact and is used directly.

    Examples
    --------
    >>> from skdp.accounting import GaussianEvent, LaplaceEvent, PLDAccountant
    >>> acc = PLDAccountant().compose(LaplaceEvent(10.0), count=20)
    >>> round(acc.epsilon(1e-5), 3)
    1.592
    >>> acc.compose(GaussianEvent(8.0), count=40)
    PLDAccountant(2 mechanisms)
    >>> round(acc.epsilon(1e-5), 3)
    3.882
    """

    def __init__(self, *, value_discretization: float | None = None,
                 tail_bound: float = 1e-15) -> None:
        super().__init__()
        if value_discretization is not None:
            value_discretization = float(value_discretization)
            if not (math.isfinite(value_discretization) and value_discretization > 0):
                raise ValueError(f"value_discretization must be finite and > 0; got {value_discretization!r}.")
        tail_bound = float(tail_bound)
        if not 0 < tail_bound <= 1e-3:
            raise ValueError(f"tail_bound must be in (0, 1e-3]; got {tail_bound!r}.")
        self.value_discretization = value_discretization
        self.tail_bound = tail_bound
        self._cache = None

    def _leaf_ok(self, leaf):
        if isinstance(leaf, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
            return isinstance(leaf.event, GaussianEvent)
        return isinstance(leaf, (GaussianEvent, LaplaceEvent, RandomizedResponseEvent, PureDPEvent,
                                 BoundedRangeEvent, ApproximateDPEvent, DiscreteLaplaceEvent,
                                 DiscreteGaussianEvent, NonPrivateEvent))

    def _changed(self):
        self._cache = None

    def _active(self):
        """The events that release something, with every plain Gaussian merged into one.

        Runs of Gaussians with multipliers σᵢ compose to exactly one Gaussian
        of μ = √(Σ 1/σᵢ²) (Dong, Roth & Su 2022, Cor. 3.3): its PLD is that of
        the whole group, so the composition needs one PLD for all of them.
        Its σ = 1/μ is rounded down (more loss: the safe side).
        """
        active, inverse_square = [], 0.0
        for leaf, c in self._leaves.items():
            if c <= 0 or _is_silent(leaf):
                continue
            sigma = _is_plain_gaussian(leaf)
            if sigma is None:
                active.append((leaf, c))
            else:
                inverse_square += c * (1.0 / sigma) * (1.0 / sigma)  # inf, not an error, on overflow
        if inverse_square > 0:
            sigma = math.nextafter(1.0 / math.sqrt(inverse_square), 0.0)
            if not sigma > 0:
                raise LossBeyondGridError(
                    f"the Gaussians' privacy loss has a mean of 1/(2σ²) = {inverse_square / 2:.3g} "
                    "(beyond the float range): too large for a PLD grid (the RDP accountant "
                    "handles it)."
                )
            active.append((GaussianEvent(sigma * (1.0 - 4.0 * np.finfo(float).eps)), 1))
        return active

    def _gdp_mu(self, active):
        """μ when every active event is a plain Gaussian, else None (from the events, unrounded)."""
        if len(active) != 1 or _is_plain_gaussian(active[0][0]) is None:
            return None
        total = 0.0
        for leaf, c in self._leaves.items():
            if c <= 0 or _is_silent(leaf):
                continue
            sigma = _is_plain_gaussian(leaf)
            if sigma is None:
                return None
            total += c * (1.0 / sigma) * (1.0 / sigma)
        return math.sqrt(total)

    def _one_run_tail(self, active):
        """Mass each run may leave beyond its grid: ``tail_bound`` over the number of runs."""
        return self.tail_bound / max(sum(c for _, c in active), 1)

    def _grid_step(self, active, tail):
        """The grid spacing h for these events (``value_discretization`` if given).

        Two limits: h <= √0.003 · (the standard deviation of one run's loss),
        so that connect-the-dots widens the composed loss by about
        count·h²/6 <= 0.05% of its variance, and h <= (composed standard
        deviation)/1000, so that ε is read on a fine grid. When one run's
        losses span many such cells (rare large losses), the second limit is
        relaxed to 2¹⁷ cells over the composition's window and h is kept
        above 2¹⁹ cells over it (measured on a pilot grid).
        """
        if self.value_discretization is not None:
            return self.value_discretization
        total = sum(c for _, c in active)
        var = sum(c * _loss_variance(leaf) for leaf, c in active)
        span = max(_loss_span(leaf, tail) for leaf, _ in active)
        return self._step_from(total, var, span, _common_lattice(leaf for leaf, _ in active), tail,
                               active)

    def _step_from(self, total, var, span, lattice, tail, active=None):
        """:meth:`_grid_step` from the events' number of runs, summed loss variance, widest
        span and common lattice (``active`` is only needed for a pilot width)."""
        sd = math.sqrt(var)
        step_var = sd * math.sqrt(0.003 / total)
        step_res = sd / 1000.0
        step = min(step_var, step_res)
        if span > (1 << 14) * step:
            width = self._width(self._active() if active is None else active, step, tail)
            step = max(min(step_var, max(step_res, width / (1 << 17))), width / _MAX_CELLS)
        if lattice is not None:
            # put every atom on the grid: then the only error is floating point
            step = lattice / math.ceil(lattice / step - 1e-9)
        return step

    def _width(self, active, step, tail):
        """The window width that sizes the grid (a subclass may reuse one it measured)."""
        return self._pilot_width(active, step, tail)

    def _pilot_width(self, active, step, tail):
        """The width of the composition's window (or of one run's PLD if wider), on a coarse pilot grid.

        Only sizes the grid; the tail bounds added to δ come later, on the real one.
        """
        span = max(_loss_span(leaf, tail) for leaf, _ in active)
        pilot_step = max(step * 64.0, span / (1 << 14))
        widths, removes, adds = [], [], []
        for leaf, c in active:
            r, a = _leaf_plds(leaf, pilot_step, tail)
            widths.append(max(r.pmf.size, a.pmf.size) * pilot_step)
            removes.append((r, c))
            adds.append((a, c))
        for parts in (removes, adds):
            lo, hi, _, _ = chernoff_window(parts, math.log(self.tail_bound))
            full = sum(c * (p.pmf.size - 1) for p, c in parts) * pilot_step
            widths.append(min(hi - lo, full))
        return max(widths)

    def _composed(self):
        """(remove, add) composed PLDs (the same object twice when every event is symmetric)."""
        if self._cache is not None:
            return self._cache
        active = self._active()
        tail = self._one_run_tail(active)
        step = self._grid_step(active, tail)
        while True:
            removes, adds = [], []
            for leaf, c in active:
                r, a = _leaf_plds(leaf, step, tail)
                removes.append((r, c))
                adds.append((a, c))
            try:
                spectra = {}  # transforms of the PLDs that both directions share
                remove = compose_plds(removes, tail_bound=self.tail_bound, spectra=spectra)
                symmetric = all(r is a for (r, _), (a, _) in zip(removes, adds))
                add = remove if symmetric else compose_plds(adds, tail_bound=self.tail_bound,
                                                            spectra=spectra)
                break
            except ValueError as exc:
                if "grid of" not in str(exc) or self.value_discretization is not None:
                    raise
                step *= 2.0  # an extreme composition: coarser (still pessimistic) grid
        self._cache = (remove, add)
        return self._cache

    def _bounds(self):
        """(non-private, empty, ceiling, beyond, μ) of the events composed.

        Whether any event releases without privacy; whether none releases
        anything; the composed loss's ceiling and the probability beyond it
        (:func:`_loss_ceiling`); μ when every event is a plain Gaussian, else None.
        """
        active = self._active()
        if any(isinstance(leaf, NonPrivateEvent) for leaf, _ in active):
            return True, False, math.inf, 1.0, None
        if not active:
            return False, True, 0.0, 0.0, None
        ceiling, beyond = _loss_ceiling(active)
        return False, False, ceiling, beyond, self._gdp_mu(active)

    def epsilon(self, delta: float) -> float:
        """Smallest ε such that the composition is (ε, δ)-DP (``inf`` if none)."""
        delta = _check_delta(delta)
        non_private, empty, ceiling, beyond, mu = self._bounds()
        if non_private:
            return math.inf
        if empty:
            return 0.0
        cap = ceiling if delta >= beyond else math.inf
        if delta == 0.0:
            return cap  # pure ε-DP bounds add up, and the sum is the largest loss (exact)
        if mu is not None:
            return gdp_to_epsilon(mu, delta)
        remove, add = self._composed()
        return min(cap, max(remove.epsilon(delta), add.epsilon(delta)))

    def delta(self, epsilon: float) -> float:
        """Smallest δ such that the composition is (ε, δ)-DP."""
        epsilon = _check_epsilon(epsilon)
        non_private, empty, ceiling, beyond, mu = self._bounds()
        if non_private:
            return 1.0
        if empty:
            return 0.0
        if epsilon >= ceiling:
            return beyond
        if mu is not None:
            return gdp_to_delta(mu, epsilon)
        remove, add = self._composed()
        return max(remove.delta(epsilon), add.delta(epsilon))

    def privacy_loss_distributions(
        self,
    ) -> tuple[PrivacyLossDistribution, PrivacyLossDistribution]:
        """The composed PLDs: ``(remove, add)`` (one object twice when both are equal)."""
        return self._composed()


# --------------------------------------------------------------------------
# RDP
# --------------------------------------------------------------------------
def _leaf_curve(leaf, orders):
    if isinstance(leaf, GaussianEvent):
        return gaussian_rdp(leaf.noise_multiplier, orders=orders)
    if isinstance(leaf, LaplaceEvent):
        return laplace_rdp(leaf.noise_multiplier, orders=orders)
    if isinstance(leaf, RandomizedResponseEvent):
        return randomized_response_rdp(leaf.epsilon, n_categories=leaf.n_categories, orders=orders)
    if isinstance(leaf, PureDPEvent):
        return pure_dp_rdp(leaf.epsilon, orders=orders)
    if isinstance(leaf, BoundedRangeEvent):
        return _bounded_range_rdp(leaf.epsilon, orders=orders)
    if isinstance(leaf, ApproximateDPEvent):
        if leaf.epsilon == 0:
            raise ValueError("the RDP accountant needs epsilon > 0 for an ApproximateDPEvent.")
        return approximate_dp_rdp(leaf.epsilon, leaf.delta, orders=orders)
    if isinstance(leaf, ZCDPEvent):
        return zcdp_rdp(leaf.rho, orders=orders)
    if isinstance(leaf, DiscreteLaplaceEvent):
        return pure_dp_rdp(leaf.sensitivity / leaf.scale, orders=orders)
    if isinstance(leaf, DiscreteGaussianEvent):
        # ρ = Δ²/(2σ²) (Canonne, Kamath & Steinke 2020, Thm. 4), rounded up
        rho = leaf.sensitivity**2 / (2.0 * leaf.sigma**2)
        return zcdp_rdp(math.nextafter(rho, math.inf), orders=orders)
    if isinstance(leaf, NonPrivateEvent):
        return RDPCurve.non_private(orders)
    if isinstance(leaf, PoissonSampledEvent):
        return poisson_subsampled_gaussian_rdp(leaf.sampling_rate, leaf.event.noise_multiplier, orders=orders)
    if isinstance(leaf, SampledWithoutReplacementEvent):
        return sampled_without_replacement_gaussian_rdp(leaf.sampling_rate, leaf.event.noise_multiplier,
                                                        orders=orders)
    raise ValueError(f"no RDP curve for {leaf!r}.")  # pragma: no cover


class RDPAccountant(_Accountant):
    """(ε, δ) of a composition through Rényi DP: the curves of skdp's RDP functions, added up.

    The same numbers as composing :class:`~skdp.accounting.RDPCurve` objects
    (``gaussian_rdp``, ``poisson_subsampled_gaussian_rdp``, ...) by hand.

    Parameters
    ----------
    orders : array-like, optional
        The orders of the curves; ``None``: :data:`DEFAULT_ORDERS`.

    Examples
    --------
    >>> from skdp.accounting import GaussianEvent, PoissonSampledEvent, RDPAccountant
    >>> acc = RDPAccountant().compose(PoissonSampledEvent(0.01, GaussianEvent(4.0)), count=10_000)
    >>> round(acc.epsilon(1e-5), 4)
    1.0355
    """

    def __init__(self, *, orders: ArrayLike | None = None) -> None:
        super().__init__()
        self.orders = check_orders(orders)

    def _leaf_ok(self, leaf):
        if isinstance(leaf, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
            return isinstance(leaf.event, GaussianEvent)
        if isinstance(leaf, ApproximateDPEvent):
            return leaf.epsilon > 0
        return isinstance(leaf, (GaussianEvent, LaplaceEvent, RandomizedResponseEvent, PureDPEvent,
                                 BoundedRangeEvent, ZCDPEvent, DiscreteLaplaceEvent, DiscreteGaussianEvent,
                                 NonPrivateEvent))

    @property
    def curve(self) -> RDPCurve:
        """The composed :class:`~skdp.accounting.RDPCurve`."""
        total = RDPCurve.zero(self.orders)
        for leaf, c in self._leaves.items():
            if c:
                total = total + _leaf_curve(leaf, self.orders) * c
        return total

    def epsilon(self, delta: float) -> float:
        """ε at ``delta`` of the composed curve (:meth:`RDPCurve.epsilon`)."""
        return self.curve.epsilon(delta)

    def delta(self, epsilon: float) -> float:
        """δ at ``epsilon`` of the composed curve (:meth:`RDPCurve.delta_for`)."""
        return self.curve.delta_for(_check_epsilon(epsilon))


# --------------------------------------------------------------------------
# the tightest of both, for curves that carry their event
# --------------------------------------------------------------------------
ACCOUNTANTS = ("tightest", "pld", "rdp")

# Shares of δ tried for the PLD part when PLD and RDP parts are joined by
# basic composition (any share gives a valid bound; the smallest ε is kept).
_SHARES = (0.5, 0.25, 0.75, 0.1, 0.9, 0.03, 0.97, 0.01, 0.99)


def check_accountant(accountant):
    """``accountant`` if it is one of ``"tightest"``, ``"pld"``, ``"rdp"``, else ``ValueError``."""
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}; got {accountant!r}.")
    return accountant


_PLD_SUPPORT = PLDAccountant()


@functools.lru_cache(maxsize=512)
def _event_curve(event, orders_bytes):
    """The RDP accountant's curve of ``event`` on these orders (cached)."""
    return RDPAccountant(orders=np.frombuffer(orders_bytes)).compose(event).curve


def _agrees(event, curve):
    """Whether ``event`` claims no more privacy than ``curve``: its RDP, δ and pure ε are >= the curve's.

    An event is an assertion about the mechanism beside its curve; one that
    is more private than its curve (built by hand, or a ledger edited by
    hand) is not used, and the curve alone accounts the charge.
    """
    if not RDPAccountant().supports(event):
        return False
    other = _event_curve(event, curve.orders.tobytes())
    slack = 1e-9
    with np.errstate(invalid="ignore"):
        low = other.rdp < curve.rdp * (1.0 - slack) - 1e-300
    return (not np.any(low) and other.delta >= curve.delta * (1.0 - slack)
            and other.pure_epsilon >= curve.pure_epsilon * (1.0 - slack))


def pld_leaves(curve):
    """The (leaf event, count) pairs of ``curve`` when the PLD accountant can use its event, else None.

    The event must be one the PLD accountant supports and agree with the
    curve (no more private than it at any order).
    """
    event = curve.event
    if event is None or not _PLD_SUPPORT.supports(event) or not _agrees(event, curve):
        return None
    return _flatten(event)


def _leaves_key(leaves):
    """A hashable, order-free key of (leaf, count) pairs (counts of equal leaves added up)."""
    merged = {}
    for leaf, c in leaves:
        merged[leaf] = merged.get(leaf, 0) + int(c)
    return tuple(sorted(((leaf, c) for leaf, c in merged.items() if c), key=repr))


@functools.lru_cache(maxsize=4)
def _pld_of(key):
    """A PLD accountant with these leaves composed (cached: its composed PLD is kept)."""
    acc = PLDAccountant()
    for leaf, c in key:
        acc.compose(leaf, c)
    return acc


@functools.lru_cache(maxsize=256)
def _pld_epsilon(key, delta):
    return _pld_of(key).epsilon(delta)


def compose_spend(total, leaves, rest, delta, *, accountant="tightest", pld=None):
    """ε at ``delta`` of a composition, by ``accountant``, and how it was found.

    Parameters
    ----------
    total : RDPCurve
        The RDP curve of the whole composition.
    leaves : sequence of (DPEvent, int)
        The events of the parts that have a PLD (with counts).
    rest : RDPCurve or None
        The RDP curve of the parts without one (None if there are none).
    delta : float
    accountant : {"tightest", "pld", "rdp"}
        ``"rdp"``: the RDP conversion of ``total``. ``"pld"``: the PLD of
        ``leaves`` when ``rest`` is None; else the PLD part at δ_a and the
        RDP part at δ − δ_a added up (basic composition, Dwork & Roth 2014,
        Thm. 3.16; the best of a few shares δ_a), or the RDP of ``total`` if
        there is no PLD part. ``"tightest"``: the smaller of both (each is an
        upper bound, so the smaller is valid); when the losses are too large
        for a PLD grid (:class:`~skdp.accounting._pld.LossBeyondGridError`,
        a tiny noise multiplier), RDP alone. ``"pld"`` raises that error.
    pld : PLDAccountant, optional
        An accountant that holds exactly ``leaves`` (a budget's running
        state); by default one is composed (and cached) for them.

    Returns
    -------
    (epsilon, delta_used, by)
        ``delta_used`` is ``delta``, or the curve's own δ when RDP's pure
        ε-DP bound is the result; ``by`` is ``"rdp"``, ``"pld"`` or
        ``"pld+rdp"``.
    """
    check_accountant(accountant)
    delta = _check_delta(delta)
    if pld is not None:
        key = any(c for _, c in leaves)
        pld_epsilon = pld.epsilon
    elif accountant == "rdp":
        key = any(c for _, c in leaves)  # only whether there are any
    else:
        key = _leaves_key(leaves)
        pld_epsilon = functools.partial(_pld_epsilon, key)
    results = []
    if accountant in ("tightest", "rdp") or not key:
        if total.delta > delta:
            eps_r, delta_r = math.inf, delta
        else:
            eps_r, order = total.epsilon_and_order(delta)
            delta_r = total.delta if order == math.inf else delta
        results.append((eps_r, delta_r, "rdp"))
    if accountant in ("tightest", "pld") and key:
        try:
            results.append(_pld_part(pld_epsilon, rest, delta))
        except LossBeyondGridError:
            # losses too large for a PLD grid (a tiny noise multiplier): the
            # RDP answer above is a valid bound by itself
            if accountant != "tightest":
                raise
    # the first smallest: RDP is listed first, so a tie reports RDP
    return min(results, key=lambda r: r[0])


def _pld_part(pld_epsilon, rest, delta):
    """(ε, δ, by) of the PLD part at ``delta``, joined to the RDP curve ``rest`` when there is one."""
    if rest is None:
        return pld_epsilon(delta), delta, "pld"
    best = math.inf
    for share in _SHARES if delta > 0 else (0.0,):
        d_pld = delta * share
        d_rdp = delta - d_pld
        eps = rest.epsilon(d_rdp) if rest.delta <= d_rdp else math.inf
        if eps < best:
            best = min(best, eps + pld_epsilon(d_pld))
    return best, delta, "pld+rdp"


def epsilon_of(curve: RDPCurve, delta: float, *, accountant: str = "tightest") -> float:
    """ε at ``delta`` of ``curve`` (an :class:`~skdp.accounting.RDPCurve`) by ``accountant``.

    Parameters
    ----------
    curve : RDPCurve
    delta : float in [0, 1)
    accountant : {"tightest", "pld", "rdp"}, default="tightest"
        ``"rdp"`` converts the curve (:meth:`RDPCurve.epsilon`); ``"pld"`` uses
        the privacy loss distribution of the curve's event
        (:class:`~skdp.accounting.PLDAccountant`) when it has one that the PLD
        accountant supports, else the curve; ``"tightest"`` (the default) the
        smaller of both, a valid upper bound since both are.

    Returns
    -------
    float

    Examples
    --------
    >>> from skdp.accounting import epsilon_of, gaussian_rdp, laplace_rdp
    >>> curve = gaussian_rdp(8.0) * 40
    >>> round(epsilon_of(curve, 1e-5, accountant="rdp"), 3), round(epsilon_of(curve, 1e-5), 3)
    (3.617, 3.341)
    >>> round(epsilon_of(laplace_rdp(10.0) * 20, 1e-5), 3)
    1.592
    """
    return spend_of(curve, delta, accountant=accountant)[0]


def spend_of(curve, delta, *, accountant="tightest"):
    """``(epsilon, delta_used, by)`` of one curve, as :func:`compose_spend`."""
    leaves = pld_leaves(curve)
    if leaves is None:
        return compose_spend(curve, (), curve, delta, accountant=accountant)
    return compose_spend(curve, leaves, None, delta, accountant=accountant)
