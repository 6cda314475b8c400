"""The running PLD state (skdp.accounting._running) against exact values and full recomposition."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import ndtr

from skdp.accounting import (
    GaussianEvent,
    LaplaceEvent,
    PLDAccountant,
    PoissonSampledEvent,
    PureDPEvent,
)
from skdp.accounting import _running
from skdp.accounting._running import RunningPLDAccountant


@pytest.fixture(autouse=True)
def _always_extend(monkeypatch, request):
    """Extend the state however few mechanisms it holds (by default up to 3 are composed afresh)."""
    if "few_mechanisms" not in request.node.name:
        monkeypatch.setattr(_running, "_FULL_UP_TO", 0)


def test_a_few_mechanisms_are_composed_afresh_as_a_full_composition():
    out, leaves = _grow([LaplaceEvent(3.0), PureDPEvent(0.2), LaplaceEvent(3.0), PureDPEvent(0.3)], 1e-5)
    assert not any(inc for _, inc in out)
    assert out[-1][0] == _full(leaves, 1e-5)


def _exact_epsilon(delta_of, delta, hi):
    """Smallest ε in [0, hi] with delta_of(ε) <= delta (δ decreasing), by bisection to 1e-12."""
    lo = 0.0
    if delta_of(0.0) <= delta:
        return 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if delta_of(mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def _pure_atoms(epsilons):
    """The exact PLD of a composition of ε-DP randomized responses: (losses, probabilities)."""
    losses, probs = [], []
    for signs in itertools.product((1, -1), repeat=len(epsilons)):
        losses.append(sum(s * e for s, e in zip(signs, epsilons)))
        probs.append(math.prod(1 / (1 + math.exp(-s * e)) for s, e in zip(signs, epsilons)))
    return np.array(losses), np.array(probs)


def _gaussian_delta(mu, eps):
    """δ(ε) of the μ-GDP Gaussian pair at any real ε (Balle & Wang 2018, Thm. 8)."""
    return ndtr(-eps / mu + mu / 2) - np.exp(eps) * ndtr(-eps / mu - mu / 2)


def _grow(events, delta):
    """ε after each event is added to one running accountant (each query extends the last state)."""
    acc = RunningPLDAccountant()
    leaves, out = {}, []
    for e in events:
        leaves[e] = leaves.get(e, 0) + 1
        acc = acc.with_leaves(leaves.items())
        out.append((acc.epsilon(delta), acc.incremental))
    return out, leaves


def _full(leaves, delta):
    acc = PLDAccountant()
    for leaf, c in leaves.items():
        acc.compose(leaf, c)
    return acc.epsilon(delta)


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-9])
def test_pure_dp_charges_never_below_the_exact_epsilon(delta):
    # heterogeneous ε's (no common lattice), the first one small: the grid is
    # coarsened on the way
    epsilons = [0.0137, 0.353, 0.6071, 0.912, 0.4433, 1.31, 0.2017, 0.7519]
    out, _ = _grow([PureDPEvent(e) for e in epsilons], delta)
    assert all(inc for _, inc in out[1:])  # extended every time, never composed again
    for k, (eps, _) in enumerate(out, start=1):
        losses, probs = _pure_atoms(epsilons[:k])
        exact = _exact_epsilon(
            lambda x: float(np.sum(probs * np.maximum(0.0, 1 - np.exp(x - losses)))), delta, sum(epsilons[:k]))
        assert exact * (1 - 1e-12) <= eps <= exact * 1.01 + 1e-9


def test_the_grid_is_coarsened_when_the_composition_outgrows_it():
    acc = RunningPLDAccountant().with_leaves([(PureDPEvent(0.001), 1)])
    acc.epsilon(1e-5)
    first = acc._state.step
    acc = acc.with_leaves([(PureDPEvent(0.001), 1), (LaplaceEvent(0.5), 200)])
    eps = acc.epsilon(1e-5)
    assert acc.incremental and acc._state.step >= 4 * first
    full = _full({PureDPEvent(0.001): 1, LaplaceEvent(0.5): 200}, 1e-5)
    assert eps == pytest.approx(full, rel=2e-3)


def test_gaussians_added_one_by_one_never_below_the_exact_epsilon():
    # Gaussians of σ = 3 and two ε-DP charges: δ(ε) = Σ_j p_j δ_G(ε − l_j) exactly
    events = [GaussianEvent(3.0)] * 3 + [PureDPEvent(0.3)] + [GaussianEvent(3.0)] * 3 + [PureDPEvent(0.7)]
    delta = 1e-6
    out, leaves = _grow(events, delta)
    eps, incremental = out[-1]
    assert incremental
    losses, probs = _pure_atoms([0.3, 0.7])
    mu = math.sqrt(6) / 3.0
    exact = _exact_epsilon(lambda x: float(np.sum(probs * _gaussian_delta(mu, x - losses))), delta, 20.0)
    assert exact * (1 - 1e-12) <= eps <= exact * 1.01
    assert eps == pytest.approx(_full(leaves, delta), rel=2e-3)


def test_mixed_charges_stay_close_to_a_full_composition():
    sgd = PoissonSampledEvent(0.01, GaussianEvent(1.0))
    events = [sgd, LaplaceEvent(20.0), sgd, PureDPEvent(0.05), GaussianEvent(30.0), sgd, LaplaceEvent(25.0)]
    acc = RunningPLDAccountant()
    leaves = {}
    for e in events:
        leaves[e] = leaves.get(e, 0) + 50
        acc = acc.with_leaves(leaves.items())
        for delta in (1e-5, 1e-8):
            assert acc.epsilon(delta) == pytest.approx(_full(leaves, delta), rel=2e-3)
        acc.delta(1.0)  # the other query shares the state
    assert acc.incremental


def test_a_state_of_events_the_multiset_does_not_hold_is_not_used():
    acc = RunningPLDAccountant().with_leaves([(LaplaceEvent(5.0), 3), (PureDPEvent(0.2), 1)])
    acc.epsilon(1e-5)
    # another process's ledger: the charge of ε = 0.2 is not in it (a handle
    # that composed a charge that was then refused or rolled back)
    other = acc.with_leaves([(LaplaceEvent(5.0), 4)])
    eps = other.epsilon(1e-5)
    assert not other.incremental
    assert eps == _full({LaplaceEvent(5.0): 4}, 1e-5)  # the same computation as a full composition


def test_too_much_delta_outside_the_grid_composes_again(monkeypatch):
    monkeypatch.setattr(_running, "_EXTRA_SHARE", 0.0)
    acc = RunningPLDAccountant().with_leaves([(LaplaceEvent(5.0), 3)])
    acc.epsilon(1e-5)
    acc = acc.with_leaves([(LaplaceEvent(5.0), 3), (PoissonSampledEvent(0.01, GaussianEvent(1.0)), 100)])
    acc.epsilon(1e-5)
    assert not acc.incremental  # its extension kept some δ outside the grid
