"""BoundedRangeEvent: the exponential mechanism's event, against exact privacy profiles."""

import itertools
import math

import numpy as np
import pytest

from skdp.accounting import (
    BoundedRangeEvent,
    PLDAccountant,
    PureDPEvent,
    RDPAccountant,
    SelfComposedEvent,
    epsilon_of,
    gaussian_rdp,
)
from skdp.mechanisms import exponential_mechanism_rdp
from skdp.stats._quantiles import _quantile_curve


def test_the_exponential_curve_carries_its_event_and_is_its_rdp():
    curve = exponential_mechanism_rdp(0.7)
    assert curve.event == BoundedRangeEvent(0.7)
    again = RDPAccountant().compose(BoundedRangeEvent(0.7)).curve
    np.testing.assert_array_equal(again.rdp, curve.rdp)
    assert again.pure_epsilon == curve.pure_epsilon == 0.7
    # a quantile release of k mechanisms records k of them
    assert _quantile_curve(1.0, 1e-5, 4).event == SelfComposedEvent(BoundedRangeEvent(0.25), 4)


def _exponential_mechanism(scores, epsilon):
    """Output probabilities of the exponential mechanism with weights exp(ε·u/2) (sensitivity 1)."""
    w = np.exp(epsilon * (scores - scores.max()) / 2.0)
    return w / w.sum()


def _hockey_stick(p, q, eps):
    return float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0)))


@pytest.mark.parametrize("seed", range(3))
def test_its_pld_dominates_exponential_mechanisms_on_neighbouring_datasets(seed):
    # scores on neighbouring datasets differ by at most 1 per candidate; two
    # mechanisms composed (product distributions), both orders of the pair
    rng = np.random.default_rng(seed)
    eps = [0.8, 1.5]
    pairs = []
    for e in eps:
        u = rng.normal(0.0, 2.0, size=6)
        v = u + rng.choice([-1.0, 0.0, 1.0], size=6)  # a neighbour's scores
        pairs.append((_exponential_mechanism(u, e), _exponential_mechanism(v, e)))
    p = np.outer(pairs[0][0], pairs[1][0]).ravel()
    q = np.outer(pairs[0][1], pairs[1][1]).ravel()
    acc = PLDAccountant().compose(BoundedRangeEvent(eps[0])).compose(BoundedRangeEvent(eps[1]))
    for e in np.linspace(0.0, 2.5, 11):
        bound = acc.delta(float(e))
        assert _hockey_stick(p, q, e) <= bound + 1e-12
        assert _hockey_stick(q, p, e) <= bound + 1e-12


def test_its_pld_is_that_of_pure_dp_and_never_below_the_exact_one():
    # k runs of the ε-RR pair: the exact δ(ε') is a binomial sum
    k, e, delta = 6, 0.4, 1e-5
    pld = PLDAccountant().compose(BoundedRangeEvent(e), count=k).epsilon(delta)
    assert pld == PLDAccountant().compose(PureDPEvent(e), count=k).epsilon(delta)
    p = 1 / (1 + math.exp(-e))
    atoms = [(e * (2 * j - k), math.comb(k, j) * p**j * (1 - p) ** (k - j)) for j in range(k + 1)]
    lo, hi = 0.0, k * e
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if sum(m * max(0.0, 1 - math.exp(mid - l)) for l, m in atoms) <= delta:
            hi = mid
        else:
            lo = mid
    assert hi * (1 - 1e-12) <= pld <= hi * 1.001


def test_the_tightest_accountant_gains_on_a_ledger_of_gaussians_and_quantiles():
    # before the event, the quantiles joined the Gaussians' PLD by RDP and a split of δ
    gaussians = 40 * gaussian_rdp(8.0)
    quantiles = _quantile_curve(1.0, 1e-5, 30)
    with_event = epsilon_of(gaussians + quantiles, 1e-5)
    from skdp.accounting._accountants import compose_spend, pld_leaves

    before = compose_spend((gaussians + quantiles).with_event(None), pld_leaves(gaussians),
                           quantiles.with_event(None), 1e-5)[0]
    assert with_event < 0.96 * before
    # a release alone of many mechanisms: RDP (the zCDP bound) stays the tightest
    assert epsilon_of(quantiles, 1e-5) == epsilon_of(quantiles, 1e-5, accountant="rdp")


@pytest.mark.parametrize("k", [1, 3, 10])
def test_a_quantile_release_never_costs_more_than_its_epsilon(k):
    for eps in (0.1, 1.0):
        curve = _quantile_curve(eps, 1e-5, k)
        for accountant in ("tightest", "pld", "rdp"):
            assert epsilon_of(curve, 1e-5, accountant=accountant) <= eps * (1 + 1e-12)
