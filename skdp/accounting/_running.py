"""A PLD accountant whose composition is extended, not recomposed, as events are added.

:class:`~skdp.accounting.PLDAccountant` composes every event again when one
is added: one FFT per distinct mechanism. A budget whose ledger holds a
thousand distinct mechanisms would pay a thousand FFTs per charge. Here the
composed PLDs (both directions) are a state, valid for the multiset of events
it was built from, on its grid spacing h; adding events convolves the state
with their PLDs on the same grid, so a charge costs a few FFTs of the state's
size whatever the ledger holds.

Why the result stays an upper bound on the exact δ(ε) (and so ε): every step
replaces a PLD by one with a larger δ(·) at every real ε, and composition
keeps that order (see :mod:`skdp.accounting._pld`):

- each new event's PLD is made on the grid by connect-the-dots, as in a full
  composition;
- the convolution of the state with it is linear (no wrap-around), so it is
  the exact PLD of the composition of the two discrete PLDs, up to FFT
  round-off (as in a full composition; negative round-off is clipped to 0,
  which only adds mass);
- the finite mass beyond the top of the result, when at most ``η``, is
  removed and added to the state's ``extra_delta`` (a constant added to
  δ(ε), at least what those cells add to it at any ε), and the mass below the
  bottom, when at most ``η``, is moved up to the lowest cell kept (a larger
  loss: a larger δ(ε) everywhere);
- when the state's grid is much finer than the composition needs, it is
  put on a grid k times coarser by connect-the-dots, which keeps its mass and
  E[e^{−L}] and so increases δ(ε) at every ε (Jensen: (1 − e^{ε}·x)₊ is
  convex in x = e^{−L}; Doroshenko et al. 2022).

The state is a function of the multiset of events alone (composition is
commutative), so a caller validates it by that multiset: this accountant
extends the state only when the new multiset contains the state's, and
recomposes from scratch otherwise (events removed), when the grid it would
choose now is finer than the state's by more than half, when the δ kept
outside the grid grows past a fraction of the δ asked for, or when there are
at most three distinct mechanisms (a full composition costs about the same,
and its ε is then exactly the one :func:`~skdp.accounting.epsilon_of` gives).

A charge adds one event to a ledger that may hold thousands of distinct
ones, so nothing per query may loop over them all: :meth:`RunningPLDAccountant.plus`
adds events to an accountant whose state is known, and with more than
:data:`_SUMMED_FROM` distinct mechanisms the quantities that size the grid
and cap ε (the number of runs, the summed loss variance, the widest span,
the common lattice, the largest composed loss and the mass of infinite
losses, the Gaussians' μ²) are kept as running sums (:class:`_Sums`). The
sums that bound ε (the largest loss, the infinite mass, μ²) are exact sums of
the same float terms, rounded once, so they do not depend on the order in
which events came; the loss variance only sizes the grid.
"""

import functools
import math
import threading
from fractions import Fraction

import numpy as np

from ._accountants import (
    PLDAccountant,
    _is_plain_gaussian,
    _is_silent,
    _largest_loss,
    _lattice,
    _leaf_plds,
    _loss_span,
    _loss_variance,
    _on_lattice,
)
from ._events import NonPrivateEvent
from ._pld_mechanisms import _z
from ._pld import _MAX_FFT, PrivacyLossDistribution, _fast_length, compose_plds

__all__ = []

# The state's grid is kept while it is at most this much coarser than the
# grid a full composition would choose now, and at least this much finer
# (else it is coarsened).
_COARSER = 1.5
_FINER = 4.0
# Below this many cells on either side, the convolution is direct (exact
# products, no FFT round-off).
_DIRECT = 64
# The δ kept outside the state's grid, relative to the δ asked for, past
# which the composition is done again from scratch.
_EXTRA_SHARE = 1e-4
# Up to this many distinct mechanisms a full composition costs about as much
# as extending the state (one FFT each), and it is done instead: a small
# ledger's ε is then exactly that of a full composition (what
# skdp.privacy_cost and epsilon_of report).
_FULL_UP_TO = 3
# Beyond this many distinct mechanisms the grid's sizes and ε's caps come from
# running sums (:class:`_Sums`) instead of a loop over the mechanisms.
_SUMMED_FROM = 64


@functools.lru_cache(maxsize=16)  # a self-composed PLD may hold 10⁵ cells per direction
def _leaf_runs(leaf, count, step, tail, tail_bound):
    """(remove, add) PLDs of ``count`` runs of ``leaf`` on this grid (one FFT power when count > 1)."""
    remove, add = _leaf_plds(leaf, step, tail)
    if count == 1:
        return remove, add
    spectra = {}
    r = compose_plds([(remove, count)], tail_bound=tail_bound, spectra=spectra)
    a = r if add is remove else compose_plds([(add, count)], tail_bound=tail_bound, spectra=spectra)
    return r, a


_SPECTRA = {}  # (id of a one-event PLD, FFT size) -> (that PLD, its transform)
_SPECTRA_LOCK = threading.Lock()


def _spectrum(pld, size):
    """The transform of ``pld`` zero-padded to ``size`` (the last few are kept: the same
    mechanism charged again convolves the same PLD on a state of about the same size)."""
    key = (id(pld), size)
    hit = _SPECTRA.get(key)
    if hit is not None and hit[0] is pld:
        return hit[1]
    f = np.fft.rfft(pld.pmf, size)
    with _SPECTRA_LOCK:  # handles charged from several threads
        while len(_SPECTRA) >= 8:
            _SPECTRA.pop(next(iter(_SPECTRA)))
        _SPECTRA[key] = (pld, f)
    return f


def _convolve(base, parts, eta):
    """The PLD of ``base`` composed with each of ``parts`` (linear convolution), trimmed at mass ``eta``.

    Returns None if the result would need a grid larger than the FFT limit.
    """
    step = base.step
    lo = base.offset + sum(p.offset for p in parts)
    n = base.pmf.size + sum(p.pmf.size - 1 for p in parts)
    if n > _MAX_FFT:
        return None
    if len(parts) == 1 and min(base.pmf.size, parts[0].pmf.size) <= _DIRECT:
        pmf = np.convolve(base.pmf, parts[0].pmf)
    else:
        size = _fast_length(n)
        spectrum = np.fft.rfft(base.pmf, size)
        for p in parts:
            spectrum *= _spectrum(p, size)
        pmf = np.fft.irfft(spectrum, size)[:n]
        np.maximum(pmf, 0.0, out=pmf)  # round-off: clipping to 0 only adds mass
    log_finite = math.log1p(-base.infinity_mass) + sum(math.log1p(-p.infinity_mass) for p in parts)
    infinity_mass = max(0.0, -math.expm1(log_finite))
    extra = base.extra_delta + sum(p.extra_delta for p in parts)
    reach = 2 * sum(p.pmf.size for p in parts) + 64  # where the cells to trim are, usually
    return _trimmed(step, lo, pmf, infinity_mass, extra, eta, reach)


def _cut(pmf, eta, reach):
    """(k, mass): the first k cells of ``pmf`` hold ``mass`` <= eta, and k is the largest
    such (looked for among the first ``reach`` cells first), with k < pmf.size."""
    while True:
        head = np.cumsum(pmf[:reach])
        k = int(np.searchsorted(head, eta, side="right"))
        if k < head.size or reach >= pmf.size:
            k = min(k, pmf.size - 1)
            return k, float(head[k - 1]) if k else 0.0
        reach *= 4


def _trimmed(step, lo, pmf, infinity_mass, extra, eta, reach):
    """The PLD with its top cells of total mass <= eta moved to extra_delta and its bottom ones moved up."""
    cut_top, mass = _cut(pmf[::-1], eta, reach)
    if cut_top:
        extra += mass
        pmf = pmf[: pmf.size - cut_top]
    cut_bottom, moved = _cut(pmf, eta, reach)
    if cut_bottom:
        pmf = pmf[cut_bottom:].copy()
        pmf[0] += moved
        lo += cut_bottom
    return PrivacyLossDistribution(step, lo, pmf, min(1.0, infinity_mass), extra_delta=extra)


def _coarsened(pld, factor):
    """``pld`` on a grid ``factor`` times coarser, by connect-the-dots (a larger δ(ε) at every ε)."""
    if factor == 1:
        return pld
    h = pld.step * factor
    idx = pld.offset + np.arange(pld.pmf.size)
    below = np.floor_divide(idx, factor)
    frac = (idx - below * factor) * pld.step
    # an atom at a + r with 0 < r < H sends p(1 − e^{−r})/(1 − e^{−H}) up (same mass and E[e^{−L}])
    up = np.clip(pld.pmf * -np.expm1(-frac) / -math.expm1(-h), 0.0, pld.pmf)
    lo = int(below[0])
    pmf = np.zeros(int(below[-1]) - lo + 2)
    np.add.at(pmf, below - lo, pld.pmf - up)
    np.add.at(pmf, below - lo + 1, up)
    return PrivacyLossDistribution(h, lo, pmf, pld.infinity_mass, extra_delta=pld.extra_delta)


class _Sums:
    """What sizes the grid and caps ε, summed over a multiset of events and kept as events are added.

    Plain Gaussians compose to one Gaussian of μ² = Σ c/σ² (Dong, Roth & Su
    2022, Cor. 3.3), counted as one run of one mechanism, as
    :meth:`PLDAccountant._active` merges them.
    """

    __slots__ = ("runs", "distinct", "var", "gauss", "ceiling", "unbounded", "log_finite",
                 "non_private", "lattices", "no_lattice", "lattice", "tail", "span")

    def __init__(self):
        self.runs = self.distinct = 0  # of the mechanisms other than plain Gaussians
        self.var = 0.0
        self.gauss = self.ceiling = self.log_finite = Fraction(0)  # exact sums of float terms
        self.unbounded = self.non_private = self.no_lattice = False
        self.lattices = set()
        self.lattice = None  # the common lattice of ``lattices`` (None: none)
        self.tail = self.span = None  # the widest span at the tail it was taken for

    @classmethod
    def of(cls, leaves):
        sums = cls()
        for leaf, c in leaves.items():
            sums.add(leaf, c, new=True)
        return sums

    def copy(self):
        other = _Sums.__new__(_Sums)
        for name in self.__slots__:
            setattr(other, name, getattr(self, name))
        other.lattices = set(self.lattices)
        return other

    def add(self, leaf, count, *, new):
        """Add ``count`` runs of ``leaf`` (``new``: the multiset held none before)."""
        if count <= 0 or _is_silent(leaf):
            return
        sigma = _is_plain_gaussian(leaf)
        if sigma is not None:
            self.gauss += count * Fraction((1.0 / sigma) * (1.0 / sigma))
            return
        self.runs += count
        self.distinct += bool(new)
        if isinstance(leaf, NonPrivateEvent):
            self.non_private = True
            return
        self.var += count * _loss_variance(leaf)
        loss, inf_mass = _largest_loss(leaf)
        if loss == math.inf:
            self.unbounded = True
        else:
            self.ceiling += count * Fraction(loss)
        if inf_mass:
            self.log_finite += count * Fraction(math.log1p(-inf_mass))
        if self.tail is not None:
            self.span = max(self.span, _loss_span(leaf, self.tail))
        g = _lattice(leaf)
        if g is None:
            self.no_lattice = True
        elif not self.no_lattice and g not in self.lattices:
            self.lattices.add(g)
            low = min(self.lattices)
            if self.lattice is not None and low == self.lattice:
                self.lattice = low if _on_lattice(g, low) else None
            else:  # a new smallest spacing: are the others multiples of it?
                self.lattice = low if all(_on_lattice(x, low) for x in self.lattices) else None

    def n_active(self):
        """Distinct mechanisms, the plain Gaussians counted as one."""
        return self.distinct + (self.gauss > 0)

    def n_runs(self):
        return self.runs + (self.gauss > 0)

    def bounds(self):
        """As :meth:`PLDAccountant._bounds`."""
        if self.non_private:
            return True, False, math.inf, 1.0, None
        if not self.n_active():
            return False, True, 0.0, 0.0, None
        ceiling = math.inf if self.unbounded or self.gauss > 0 else float(self.ceiling)
        beyond = -math.expm1(float(self.log_finite))
        mu = math.sqrt(float(self.gauss)) if self.gauss > 0 and not self.distinct else None
        return False, False, ceiling, beyond, mu

    def step(self, accountant, tail, leaves):
        """The grid spacing :meth:`PLDAccountant._grid_step` would choose for these events."""
        if self.tail != tail:  # the tail changes when the runs pass a power of two: rarely
            self.tail = tail
            spans = [_loss_span(leaf, tail) for leaf, c in leaves.items()
                     if c > 0 and not _is_silent(leaf) and _is_plain_gaussian(leaf) is None]
            self.span = max(spans, default=0.0)
        var, span = self.var, self.span
        if self.gauss > 0:
            mu2 = float(self.gauss)
            var += mu2
            span = max(span, 2.0 * _z(tail) * math.sqrt(mu2))  # as _loss_span of their Gaussian
        lattice = None if self.no_lattice or self.gauss > 0 else self.lattice
        return accountant._step_from(self.n_runs(), var, span, lattice, tail)


class _State:
    """Composed PLDs (remove, add) of a multiset of events on grid spacing ``step``.

    ``width`` is the composition's window measured on a pilot grid when the
    grid was chosen (None if it was not needed).
    """

    __slots__ = ("leaves", "step", "remove", "add", "incremental", "width")

    def __init__(self, leaves, step, remove, add, incremental, width):
        self.leaves, self.step, self.remove, self.add = leaves, step, remove, add
        self.incremental = incremental  # False: built by a full composition
        self.width = width

    def extra(self):
        return max(self.remove.extra_delta, self.add.extra_delta)


class RunningPLDAccountant(PLDAccountant):
    """A :class:`~skdp.accounting.PLDAccountant` that extends its composed PLDs as events are added.

    Same interface and guarantees (every ε it reports is an upper bound); the
    composition of the events added since the last query is convolved into
    the composed PLDs kept from it (see the module docstring). Used by
    :class:`~skdp.PrivacyBudget` as its running state.
    """

    def __init__(self, *, value_discretization=None, tail_bound=1e-15):
        super().__init__(value_discretization=value_discretization, tail_bound=tail_bound)
        self._state = None
        self._min_delta = None
        self._measured = None  # the pilot width measured by the last full composition
        self._sums = None  # running _Sums of the events, once there are many
        self._pending = None  # events added since the state, when known (else found by comparing)

    def _changed(self):
        self._cache = None  # the state stays: it is extended on the next query
        self._active_events = None
        self._sums = self._pending = None

    def _active(self):
        if getattr(self, "_active_events", None) is None:
            self._active_events = super()._active()
        return self._active_events

    def _new(self):
        new = RunningPLDAccountant(value_discretization=self.value_discretization,
                                   tail_bound=self.tail_bound)
        new._state = self._state
        return new

    def with_leaves(self, leaves):
        """A new accountant of these (event, count) pairs that starts from this one's state.

        The pairs must be events this accountant supports (they are not
        checked again); the state is used only if it covers a sub-multiset
        of them.
        """
        new = self._new()
        new._leaves = {leaf: int(c) for leaf, c in leaves if c}
        if len(new._leaves) != sum(1 for _, c in leaves if c):  # the same event twice: add up
            new._leaves = {}
            for leaf, c in leaves:
                if c:
                    new._leaves[leaf] = new._leaves.get(leaf, 0) + int(c)
        new._changed()
        return new

    def plus(self, pairs):
        """A new accountant of this one's events and these (event, count) pairs, from its state.

        Costs the pairs, not the events held: the events added since the state
        are tracked, so they need not be found by comparing multisets, and
        the sums are extended (see the module docstring). The pairs must be
        events this accountant supports.
        """
        new = self._new()
        new._leaves = leaves = dict(self._leaves)
        sums = None if self._sums is None else self._sums.copy()
        pending = None
        if self._state is not None and self._pending is not None:
            pending = dict(self._pending)
        for leaf, c in pairs:
            c = int(c)
            if not c:
                continue
            before = leaves.get(leaf, 0)
            leaves[leaf] = before + c
            if sums is not None:
                sums.add(leaf, c, new=not before)
            if pending is not None:
                pending[leaf] = pending.get(leaf, 0) + c
        new._changed()
        new._sums, new._pending = sums, pending
        return new

    def leaf_pairs(self):
        """The (event, count) pairs composed (a view: no copy)."""
        return self._leaves.items()

    def _summed(self):
        """The running :class:`_Sums`, or None while there are few mechanisms (then loop over them)."""
        if self._sums is None and len(self._leaves) > _SUMMED_FROM:
            self._sums = _Sums.of(self._leaves)  # once; plus() extends them
        return self._sums

    def _bounds(self):
        sums = self._summed()
        return super()._bounds() if sums is None else sums.bounds()

    def _width(self, active, step, tail):
        """The pilot width of the kept state when there is one, else measured.

        Adding events only widens the composition's window and a wider one
        only allows a coarser grid, so the kept width gives a grid at least as
        fine as a new measurement would: a check of the state's grid, not of
        its validity (any grid is valid).
        """
        state = self._state
        if state is not None and state.width is not None:
            return state.width
        self._measured = super()._width(active, step, tail)
        return self._measured

    @property
    def incremental(self):
        """Whether the last composition extended a kept state (False: composed from scratch)."""
        return self._state is not None and self._state.incremental

    def epsilon(self, delta):
        if delta > 0:  # δ = 0 is answered without the composed PLDs
            self._min_delta = delta if self._min_delta is None else min(self._min_delta, delta)
        return super().epsilon(delta)

    def _composed(self):
        state = self._state if self._cache is not None else None
        if state is None:
            state = self._extended()
        if (state is not None and state.incremental and self._min_delta is not None
                and state.extra() > _EXTRA_SHARE * self._min_delta):
            state = None  # too much δ kept outside the grid for this δ: compose again
        if state is None:
            self._cache = None
            self._state = self._measured = None
            remove, add = super()._composed()
            state = _State(self._leaves, remove.step, remove, add, incremental=False,
                           width=self._measured)
        self._state = state
        self._pending = {}
        self._cache = (state.remove, state.add)
        return self._cache

    def _diff(self):
        """The events added since the state (event -> count), or None when the state does not
        cover a sub-multiset of the events."""
        if self._pending is not None:
            return self._pending
        state = self._state
        for leaf, c in state.leaves.items():
            if self._leaves.get(leaf, 0) < c:
                return None  # events removed: not a sub-multiset
        diff = {}
        for leaf, c in self._leaves.items():
            more = c - state.leaves.get(leaf, 0)
            if more:
                diff[leaf] = more
        return diff

    def _extended(self):
        """The kept state extended to this accountant's events, or None when it has to be
        composed from scratch."""
        state = self._state
        if state is None:
            return None
        sums = self._summed()
        if (len(self._active()) if sums is None else sums.n_active()) <= _FULL_UP_TO:
            return None
        diff = self._diff()
        if diff is None:
            return None
        diff = {leaf: c for leaf, c in diff.items() if c > 0 and not _is_silent(leaf)}
        if not diff:
            return _State(self._leaves, state.step, state.remove, state.add, state.incremental,
                          state.width)
        # tail_bound over the number of runs rounded up to a power of two (a
        # smaller tail: valid), so that it changes rarely and the one-run
        # PLDs and their grid sizes are reused
        runs = max(sum(c for _, c in self._active()) if sums is None else sums.n_runs(), 1)
        tail = self.tail_bound / 2.0 ** math.ceil(math.log2(runs))
        step, factor = state.step, 1
        if self.value_discretization is None:
            if sums is None:
                ideal = self._grid_step(self._active(), tail)
            else:
                ideal = sums.step(self, tail, self._leaves)
            if step > _COARSER * ideal:
                return None  # the kept grid is too coarse for what the composition has become
            if step * _FINER < ideal:  # far finer than needed: coarsen to within (ideal/2, ideal]
                factor = 2 ** math.floor(math.log2(ideal / step))
            step *= factor
        remove = _coarsened(state.remove, factor)
        add = remove if state.add is state.remove else _coarsened(state.add, factor)
        removes, adds = [], []
        for leaf, c in diff.items():
            r, a = _leaf_runs(leaf, c, step, tail, self.tail_bound)
            removes.append(r)
            adds.append(a)
        new_remove = _convolve(remove, removes, self.tail_bound)
        symmetric = add is remove and all(r is a for r, a in zip(removes, adds))
        new_add = new_remove if symmetric else _convolve(add, adds, self.tail_bound)
        if new_remove is None or new_add is None:
            return None
        width = state.width if state.width is not None else self._measured
        return _State(self._leaves, step, new_remove, new_add, incremental=True, width=width)
