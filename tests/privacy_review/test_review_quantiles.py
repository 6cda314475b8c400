"""Independent privacy checks of the DP quantiles (review of 2759533 and f9125bb).

- JointExp (method="joint"): the utility written from its definition
  (Gillenwater, Joseph & Kulesza 2021, Sec. 3.1) is evaluated by brute force
  on every pair of small neighbouring datasets (add/remove one row) at every
  interval assignment of the outputs; the largest change must be at most the
  derived Δ = 2(1 − min dⱼ) and reach it (the bound is tight). The exact
  cell probabilities of the mechanism at the code's Δ are then compared
  across the neighbours: the ratio must be at most e^ε.
- Secure grid quantile: the code's integer losses on every small neighbouring
  pair move by at most ``row_size``; the exact pmf of weights β^d at the
  code's base gives a ratio at most e^{ε'} with ε' the charged ε; and ε'
  never exceeds the ε the caller asked for (regression: a base capped at
  1 − 2^-52 for ε ≲ 4.4e-16 used to be charged at ε while it implements
  more).
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from skdp.stats import _quantiles


# -- JointExp -----------------------------------------------------------------------
def _joint_utility(data, outputs, levels):
    """u(o) = −Σ_{j=1}^{m+1} |(r_j − r_{j−1}) − (q_j − q_{j−1})·N| from the definition."""
    n = len(data)
    r = [0] + [sum(1 for x in data if x < o) for o in outputs] + [n]
    q = [0.0] + list(levels) + [1.0]
    return -sum(abs((r[j] - r[j - 1]) - (q[j] - q[j - 1]) * n) for j in range(1, len(r)))


def _neighbours(max_n, values):
    """Pairs (D, D + one row) of multisets on ``values`` with |D| < max_n."""
    for n in range(max_n):
        for d in itertools.combinations_with_replacement(values, n):
            for extra in values:
                yield list(d), sorted(d + (extra,))


# Outputs between the data values 0..3: every rank pattern of increasing outputs.
_OUTPUT_POINTS = (-0.5, 0.5, 1.5, 2.5, 3.5)


@pytest.mark.parametrize("levels", [(0.5,), (0.1,), (0.25, 0.75), (0.3, 0.4), (0.2, 0.5, 0.9),
                                    (0.5, 0.5)])
def test_joint_utility_sensitivity_is_the_derived_bound_and_tight(levels):
    gaps = np.diff(np.concatenate(([0.0], levels, [1.0])))
    derived = 2.0 * (1.0 - gaps.min())
    worst = 0.0
    outs = list(itertools.combinations_with_replacement(_OUTPUT_POINTS, len(levels)))
    for d, d2 in _neighbours(5, range(4)):
        for o in outs:
            worst = max(worst, abs(_joint_utility(d, o, levels) - _joint_utility(d2, o, levels)))
    assert worst <= derived + 1e-12
    assert worst >= derived - 1e-12  # tight: a smaller Δ would be wrong


def _joint_cell_probabilities(data, levels, epsilon, delta_u, cells):
    """Exact probability that the sorted outputs fall in each multiset of ``cells``.

    Density ∝ exp(ε·u/(2Δ)) on increasing vectors in [lower, upper]; u is
    constant on a product of cells with no data point inside, so the mass of
    cells (c₁ ≤ … ≤ c_m) is exp(ε·u/(2Δ)) times the volume of sorted points
    in them, Π ℓ_c^{k_c} / k_c! for k_c outputs in cell c.
    """
    masses = {}
    for combo in itertools.combinations_with_replacement(range(len(cells)), len(levels)):
        mids = [(cells[c][0] + cells[c][1]) / 2 for c in combo]
        vol = 1.0
        for c in set(combo):
            k = combo.count(c)
            vol *= (cells[c][1] - cells[c][0]) ** k / math.factorial(k)
        masses[combo] = math.exp(epsilon * _joint_utility(data, mids, levels) / (2 * delta_u)) * vol
    total = sum(masses.values())
    return {k: v / total for k, v in masses.items()}


@pytest.mark.parametrize("levels", [(0.5,), (0.25, 0.75), (0.2, 0.3)])
def test_joint_mechanism_ratio_at_most_e_eps_on_neighbours(levels):
    # Data on 0.5, 1.5, 2.5 in [0, 3]; cells between all data points of both datasets.
    epsilon = 1.0
    gaps = np.diff(np.concatenate(([0.0], levels, [1.0])))
    delta_u = 2.0 * (1.0 - gaps.min())  # the code's Δ (_joint_quantiles_1d)
    cells = [(0.0, 0.5), (0.5, 1.5), (1.5, 2.5), (2.5, 3.0)]
    worst = 0.0
    for d, d2 in _neighbours(4, (0.5, 1.5, 2.5)):
        p = _joint_cell_probabilities(d, levels, epsilon, delta_u, cells)
        p2 = _joint_cell_probabilities(d2, levels, epsilon, delta_u, cells)
        worst = max(worst, max(abs(math.log(p[k] / p2[k])) for k in p))
    assert worst <= epsilon + 1e-9
    assert worst > 0.5 * epsilon  # the check has power: the ratio is not trivially 1


def test_joint_sampler_matches_the_brute_force_cell_probabilities():
    # The code's draws fall in the data cells with the brute-force probabilities
    # (chi-square on 20000 draws; 0.001 level, 9 cells).
    from scipy import stats

    data = np.array([0.5, 1.5, 2.5])
    levels = [0.25, 0.75]
    eps = 2.0
    cells = [(0.0, 0.5), (0.5, 1.5), (1.5, 2.5), (2.5, 3.0)]
    delta_u = 2.0 * (1.0 - 0.25)
    p = _joint_cell_probabilities(list(data), levels, eps, delta_u, cells)
    draws = _quantiles._joint_quantiles_1d(data, 0.0, 3.0, levels, eps, 1.0,
                                           np.random.default_rng(7), n_draws=20000)
    idx = np.searchsorted([0.5, 1.5, 2.5], draws, side="right")
    keys = sorted(p)
    observed = np.array([np.sum((idx[:, 0] == a) & (idx[:, 1] == b)) for a, b in keys])
    expected = np.array([p[k] for k in keys]) * len(draws)
    assert stats.chisquare(observed, expected).pvalue > 1e-3


# -- secure grid quantile -------------------------------------------------------------
@pytest.mark.parametrize("level", [0.0, 0.1, 0.5, 0.7, 1.0])
@pytest.mark.parametrize("row_size", [1, 2])
def test_secure_losses_move_by_at_most_row_size(level, row_size):
    grid = np.linspace(0.0, 3.0, 7)  # grid points on and between the data values
    worst = 0
    values = (0.0, 1.0, 1.5, 3.0)
    for n in range(5):
        for d in itertools.combinations_with_replacement(values, n):
            for extra in itertools.combinations_with_replacement(values, row_size):
                d2 = np.sort(np.array(d + extra))
                d1 = np.sort(np.array(d, dtype=float))
                # raw r(g) (before the shift by min r, which cancels in the mechanism)
                r1 = _raw_losses(d1, grid, level)
                r2 = _raw_losses(d2, grid, level)
                worst = max(worst, int(np.max(np.abs(r1 - r2))))
    assert worst <= row_size
    assert worst >= 1  # the check has power (the bound need not be tight for every level)


def _raw_losses(sorted_x, grid, level):
    n = sorted_x.size
    t = math.floor(Fraction(float(level)) * n + Fraction(1, 2))
    below = np.searchsorted(sorted_x, grid, side="left")
    at_most = np.searchsorted(sorted_x, grid, side="right")
    r = np.maximum(np.maximum(below - t, t - at_most), 0)
    # the code's losses are r − min r
    np.testing.assert_array_equal(_quantiles._quantile_losses(sorted_x, grid, level, 1), r - r.min())
    return r


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0])
def test_secure_exact_pmf_ratio_at_most_charged_eps(epsilon):
    x, y, eps_eff = _quantiles._secure_em_base(epsilon, 1)
    beta = Fraction(x, 2**y)
    grid = np.linspace(0.0, 3.0, 7)
    worst = 0.0
    for d, d2 in _neighbours(5, (0.0, 1.0, 1.5, 3.0)):
        pmfs = []
        for data in (d, d2):
            losses = _quantiles._quantile_losses(np.array(data, dtype=float), grid, 0.5, 1)
            w = [beta ** int(v) for v in losses]
            pmfs.append([wi / sum(w) for wi in w])
        worst = max(worst, max(abs(math.log(a / b)) for a, b in zip(*pmfs)))
    assert worst <= eps_eff * (1 + 1e-12)
    assert eps_eff <= epsilon


@pytest.mark.parametrize("epsilon", [1e-20, 1e-16, 2e-16, 4e-16, 1e-15, 1e-12, 1e-3, 1.0, 40.0,
                                     200.0])
@pytest.mark.parametrize("sensitivity", [1, 3])
def test_secure_base_never_less_private_than_charged(epsilon, sensitivity):
    """ε' = 2Δ·ln(1/β) of the implemented base must be ≤ the charged ε' ≤ ε, or raise."""
    try:
        x, y, charged = _quantiles._secure_em_base(epsilon, sensitivity)
    except ValueError:
        return  # refusing an ε the exact sampler cannot implement is safe
    # ln(1/β) with β = x/2^y, exactly enough: log1p of an exact fraction.
    implemented = -2.0 * sensitivity * math.log1p(-(2**y - x) / 2.0**y)
    assert implemented <= charged * (1 + 1e-12)
    assert charged <= epsilon


def test_secure_quantile_tiny_epsilon_costs_nothing_or_is_charged_honestly():
    from skdp import PrivacyBudget
    from skdp.stats import quantile

    budget = PrivacyBudget(1.0, 1e-6)
    try:
        quantile(np.arange(10.0), 0.5, epsilon=1e-16, bounds=(0, 10), secure=True,
                 budget=budget, random_state=0)
    except ValueError:
        assert len(budget) == 0
        return
    x, y, _ = _quantiles._secure_em_base(1e-16, 1)
    implemented = -2.0 * math.log1p(-(2**y - x) / 2.0**y)
    assert budget.ledger[0].curve.pure_epsilon >= implemented * (1 - 1e-12)
