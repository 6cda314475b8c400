"""quantile/median with secure=True: the exact base-2 exponential mechanism on a public grid."""

import math
import pathlib
import sys
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from skdp import PrivacyBudget, stats
from skdp.accounting import RDPCurve
from skdp.mechanisms import exponential_mechanism_rdp
from skdp.mechanisms._exact import _RandomBits
from skdp.stats import _quantiles

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from _dp_audit import split_audit  # noqa: E402


@pytest.fixture(autouse=True)
def _secure_takes_seeds_here(monkeypatch):
    # secure=True refuses a seed; the seeded secure calls in this file read seeded bytes
    # through the same samplers (seeded_secure of tests/_testing.py).
    from _testing import seeded_secure

    seeded_secure(monkeypatch)


def _exact_pmf(data, level, grid, epsilon):
    """P(grid point j), by hand: weights β^r(g) with r = dist(round(qN), [#x<g, #x≤g])."""
    x_num, y, _ = _quantiles._secure_em_base(epsilon, 1)
    beta = Fraction(x_num, 2**y)
    t = math.floor(Fraction(level) * len(data) + Fraction(1, 2))
    r = [max(int(np.sum(data < g)) - t, t - int(np.sum(data <= g)), 0) for g in grid]
    w = [beta ** (ri - min(r)) for ri in r]
    return np.array([float(wi / sum(w)) for wi in w])


def test_sampler_matches_exact_pmf():
    # 9 grid points, ε = 2: the proposal's cap (3) is below the largest loss (7), so the
    # Bernoulli tail of the rejection sampler is exercised too.
    data = np.sort(np.random.default_rng(3).uniform(size=12))
    grid, eps, n_draws = np.linspace(0, 1, 9), 2.0, 20_000
    exact = _exact_pmf(data, 0.3, grid, eps)
    bits = _RandomBits(np.random.default_rng(0))
    draws = [_quantiles._secure_em_quantile_1d(data, 0.0, 1.0, 0.3, eps, 1, 9, bits)
             for _ in range(n_draws)]
    assert np.all(np.isin(draws, grid))  # outputs are grid points
    observed = np.array([np.sum(np.asarray(draws) == g) for g in grid])
    expected = exact * n_draws
    assert np.all(expected >= 5)  # chi-square validity
    p = chisquare(observed, expected).pvalue
    assert p > 1e-3  # a correct sampler fails with probability 1e-3 (fixed seed: deterministic)


def test_outputs_are_grid_points():
    x = np.random.default_rng(0).normal(0.3, 0.2, size=(2000, 2))
    out = stats.quantile(x, [0.1, 0.5, 0.9], axis=0, epsilon=6.0, bounds=(-1, 2), secure=True,
                         grid_size=37, random_state=0)
    assert out.shape == (3, 2)
    assert np.all(np.isin(out, np.linspace(-1, 2, 37)))
    # ε' ≈ 1 per output: P(rank error ≥ r) ≈ e^(−r/2); one grid step (1/12) holds ≥ 90 ranks
    # at these levels, so an output 2 steps off the true quantile has probability < e^(−40).
    assert np.all(np.abs(out - np.quantile(x, [0.1, 0.5, 0.9], axis=0)) <= 2 * 3 / 36)


@pytest.mark.parametrize("factor", [1, 2])
def test_secure_quantile_audit(factor):
    # Grid {0, 0.5, 1}, median of [.25, .25, .25, 1] against the same plus a row at 1: the
    # loss on events of probability ≥ 0.1 is 0.84ε (exact pmf). factor 2 runs the mechanism
    # at 2ε while claiming ε: the audit must catch it.
    eps, n_select, n_draws = 1.0, 2000, 20_000
    d0 = np.array([0.25, 0.25, 0.25, 1.0])
    outs = []
    for data, seed in ((d0, 10), (np.r_[d0, 1.0], 11)):
        bits = _RandomBits(np.random.default_rng(seed))
        outs.append([_quantiles._secure_em_quantile_1d(data, 0.0, 1.0, 0.5, eps * factor, 1, 3, bits)
                     for _ in range(n_select + n_draws)])
    lb = split_audit(outs[0], outs[1], n_select=n_select)
    assert (lb <= eps) if factor == 1 else (lb > eps)


def test_curve_is_the_effective_epsilon():
    for eps, k, row in ((1.0, 1, 1), (0.3, 6, 1), (2.0, 1, 4), (1e-4, 1, 1), (60.0, 1, 1)):
        x_num, y, eff = _quantiles._secure_em_base(eps / k, row)
        true_eff = 2 * row * (y * math.log(2) - math.log(x_num))
        assert true_eff < eps / k  # the base is rounded up: never less private than asked
        assert true_eff <= eff <= eps / k
        assert eff == pytest.approx(true_eff, rel=1e-9)
        if eps / k < 20:  # y < 52: the rounding loses about 2^-22 of ε
            assert eff > (eps / k) * (1 - 2.0**-20)
        assert _quantiles._quantile_curve(eps, 0.0, k, secure=True, row_size=row) == \
            k * exponential_mechanism_rdp(eff)
    budget = PrivacyBudget(10.0, 0.0)
    x = np.random.default_rng(0).uniform(size=(100, 3))
    stats.quantile(x, [0.2, 0.8], axis=0, epsilon=1.0, bounds=(0, 1), secure=True,
                   budget=budget, random_state=0)
    assert budget.ledger[0].curve == _quantiles._quantile_curve(1.0, 0.0, 3, n_quantiles=2,
                                                                secure=True)
    assert budget.spent()[0] <= 1.0
    stats.median(x, epsilon=1.0, bounds=(0, 1), secure=True, budget=budget, random_state=0)
    assert budget.ledger[1].curve == _quantiles._quantile_curve(1.0, 0.0, 1, secure=True, row_size=3)


@pytest.mark.parametrize("kwargs", [
    {"grid_size": 1}, {"grid_size": 2.5}, {"grid_size": True}, {"grid_size": 2**21},
    {"method": "joint", "secure": True},
])
def test_bad_secure_input_costs_nothing(kwargs):
    budget = PrivacyBudget(1.0, 0.0)
    kw = {"secure": True, **kwargs}
    with pytest.raises(ValueError, match="grid_size|split"):
        stats.quantile(np.arange(10.0), 0.5, epsilon=1.0, bounds=(0, 10), budget=budget, **kw)
    assert len(budget) == 0


def test_epsilon_inf_unchanged():
    x = np.random.default_rng(0).normal(size=(50, 2))
    budget = PrivacyBudget(math.inf, 0.0)
    out = stats.quantile(x, [0.25, 0.5], axis=0, epsilon=math.inf, bounds=(-1, 1), secure=True,
                         budget=budget)
    np.testing.assert_array_equal(out, np.quantile(np.clip(x, -1, 1), [0.25, 0.5], axis=0))
    assert budget.ledger[0].curve == RDPCurve.non_private()


def test_lower_equals_upper_is_refused():
    with pytest.raises(ValueError, match="degenerate"):
        stats.median(np.arange(5.0), epsilon=1.0, bounds=(2, 2), secure=True)
