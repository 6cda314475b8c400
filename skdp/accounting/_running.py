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
"""

import functools
import math
import threading

import numpy as np

from ._accountants import PLDAccountant, _is_silent, _leaf_plds
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

    def _changed(self):
        self._cache = None  # the state stays: it is extended on the next query
        self._active_events = None

    def _active(self):
        if getattr(self, "_active_events", None) is None:
            self._active_events = super()._active()
        return self._active_events

    def with_leaves(self, leaves):
        """A new accountant of these (event, count) pairs that starts from this one's state.

        The pairs must be events this accountant supports (they are not
        checked again); the state is used only if it covers a sub-multiset
        of them.
        """
        new = RunningPLDAccountant(value_discretization=self.value_discretization,
                                   tail_bound=self.tail_bound)
        new._leaves = {leaf: int(c) for leaf, c in leaves if c}
        if len(new._leaves) != sum(1 for _, c in leaves if c):  # the same event twice: add up
            new._leaves = {}
            for leaf, c in leaves:
                if c:
                    new._leaves[leaf] = new._leaves.get(leaf, 0) + int(c)
        new._changed()
        new._state = self._state
        return new

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
            target = {leaf: c for leaf, c in self._leaves.items() if c > 0 and not _is_silent(leaf)}
            state = self._extended(target)
        if (state is not None and state.incremental and self._min_delta is not None
                and state.extra() > _EXTRA_SHARE * self._min_delta):
            state = None  # too much δ kept outside the grid for this δ: compose again
        if state is None:
            self._cache = None
            self._state = self._measured = None
            remove, add = super()._composed()
            target = {leaf: c for leaf, c in self._leaves.items() if c > 0 and not _is_silent(leaf)}
            state = _State(target, remove.step, remove, add, incremental=False, width=self._measured)
        self._state = state
        self._cache = (state.remove, state.add)
        return self._cache

    def _extended(self, target):
        """The kept state extended to ``target``, or None when it has to be composed from scratch."""
        state = self._state
        if state is None or len(self._active()) <= _FULL_UP_TO:
            return None
        diff = {}
        for leaf, c in state.leaves.items():
            if target.get(leaf, 0) < c:
                return None  # events removed: not a sub-multiset
        for leaf, c in target.items():
            more = c - state.leaves.get(leaf, 0)
            if more:
                diff[leaf] = more
        if not diff:
            return state
        active = self._active()
        # tail_bound over the number of runs rounded up to a power of two (a
        # smaller tail: valid), so that it changes rarely and the one-run
        # PLDs and their grid sizes are reused
        runs = max(sum(c for _, c in active), 1)
        tail = self.tail_bound / 2.0 ** math.ceil(math.log2(runs))
        step, factor = state.step, 1
        if self.value_discretization is None:
            ideal = self._grid_step(active, tail)
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
        return _State(target, step, new_remove, new_add, incremental=True, width=state.width)
