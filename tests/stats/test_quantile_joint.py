"""The joint quantile mechanism (JointExp, Gillenwater, Joseph & Kulesza 2021) of skdp.stats."""

import itertools
import math
import pathlib
import sys

import numpy as np
import pytest
from scipy.stats import chisquare

from skdp import PrivacyBudget, stats
from skdp.mechanisms import exponential_mechanism_rdp
from skdp.stats import _quantiles

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from _dp_audit import epsilon_lower_bound  # noqa: E402


def _exact_cells(x, lower, upper, levels, eps):
    """P(output j lies in interval i_j for every j), by enumerating every i_1 ≤ … ≤ i_m.

    The JointExp density exp(ε·u/(2Δ)) on the increasing vectors, integrated
    over a cell: exp(ε·u/(2Δ)) · Π ℓ^k / k! (k outputs sharing an interval).
    """
    x = np.sort(x)
    n, edges = x.size, np.r_[lower, np.sort(x), upper]
    lengths = np.diff(edges)
    q = np.r_[0.0, levels, 1.0]
    c = eps / (2 * 2 * (1 - np.diff(q).min()))
    weights = {}
    for cells in itertools.combinations_with_replacement(range(n + 1), len(levels)):
        u = -np.abs(np.diff(np.r_[0, cells, n]) - np.diff(q * n)).sum()
        vol = math.prod(lengths[s] ** cells.count(s) / math.factorial(cells.count(s))
                        for s in set(cells))
        weights[cells] = math.exp(c * u) * vol
    total = sum(weights.values())
    return {k: v / total for k, v in weights.items()}


@pytest.mark.parametrize("levels", [[0.2, 0.3, 0.8], [0.1, 0.9]])
def test_joint_sampler_matches_exact_pmf(levels):
    # 5 and 9 points: [0.1, 0.9] has target gaps up to 7.2 (the sliding-window part).
    x = np.sort(np.random.default_rng(1).uniform(size=5 if len(levels) == 3 else 9))
    eps, n_draws = 2.0, 20_000
    exact = _exact_cells(x, 0.0, 1.0, levels, eps)
    draws = _quantiles._joint_quantiles_1d(x, 0.0, 1.0, levels, eps, 1.0, np.random.default_rng(0),
                                           n_draws=n_draws)
    assert np.all(np.diff(draws, axis=1) >= 0)
    edges = np.r_[0.0, x, 1.0]
    cells = np.searchsorted(edges, draws, side="right") - 1
    keys = sorted(exact)
    observed = np.array([np.sum(np.all(cells == k, axis=1)) for k in keys])
    assert observed.sum() == n_draws  # no draw outside the enumerated cells
    expected = np.array([exact[k] for k in keys]) * n_draws
    big = expected >= 5  # cells expected < 5 times are pooled (chi-square validity)
    p = chisquare(np.r_[observed[big], observed[~big].sum()],
                  np.r_[expected[big], expected[~big].sum()]).pvalue
    assert p > 1e-3  # a correct sampler fails with probability 1e-3 (fixed seed: deterministic)


def test_joint_outputs_increase_with_the_levels():
    rng = np.random.default_rng(3)
    q = np.array([0.9, 0.1, 0.5, 0.5, 0.3])  # unsorted, with a repeat
    for _ in range(20):
        x = rng.exponential(size=(50, 2))
        out = stats.quantile(x, q, axis=0, epsilon=0.5, bounds=(0, 5), random_state=rng,
                             method="joint")
        assert out.shape == (5, 2)
        assert np.all(np.diff(out[np.argsort(q, kind="stable")], axis=0) >= 0)


def test_joint_close_to_true_quantiles():
    # x = (i − ½)/n, n = 1000, q = (¼, ¾), ε = 2 on [0, 1]. The density is ∝ exp(c·u),
    # c = ε/(2Δ), Δ = 2(1 − ¼) = 1.5, over the increasing pairs (volume 1/2). The
    # cell with u = 0 (oⱼ in interval qⱼn) has volume n⁻², so
    # P(u ≤ −s) ≤ (1/2)·n²·e^{−cs}. Each rank error |rⱼ − qⱼn| ≤ −u/2 (the sum of
    # the first j terms of u, and of the last m + 1 − j). With s = (ln(n²/2) + ln 10⁶)/c
    # = 89.1: rank errors ≤ 44.6 with probability 1 − 10⁻⁶, values within
    # (44.6 + 1)/n of np.quantile (gaps of 1/n; np.quantile interpolates in one gap).
    n, eps, q = 1000, 2.0, np.array([0.25, 0.75])
    x = (np.arange(1, n + 1) - 0.5) / n
    c = eps / (2 * 1.5)
    s = (math.log(n**2 / 2) + math.log(1e6)) / c
    tol = (s / 2 + 1) / n
    rng = np.random.default_rng(4)
    for _ in range(20):  # 20 draws: a correct mechanism fails with probability < 2·10⁻⁵
        out = stats.quantile(x, q, epsilon=eps, bounds=(0, 1), random_state=rng, method="joint")
        assert np.all(np.abs(out - np.quantile(x, q)) <= tol)


def _box_events(out, thresholds):
    """[o₁ ≤ a and o₂ ≤ b] for every pair of thresholds, and their complements."""
    below1 = out[:, [0]] <= thresholds[None, :]
    below2 = out[:, [1]] <= thresholds[None, :]
    box = (below1[:, :, None] & below2[:, None, :]).reshape(len(out), -1)
    return np.hstack([box, ~box])


@pytest.mark.parametrize("factor", [1, 2])
def test_joint_audit(factor):
    # 6 points in [0, ½], D′ adds 1, q = (¼, ¾): found by enumerating small designs with
    # _exact_cells; its best box event has privacy loss ≈ 0.58ε (1.16 at 2ε).
    eps, n_draws, q = 1.0, 20_000, [0.25, 0.75]
    d0 = np.linspace(0.0, 0.5, 6)
    d1 = np.r_[d0, 1.0]
    out = [_quantiles._joint_quantiles_1d(np.sort(d), 0.0, 1.0, q, eps * factor, 1.0,
                                          np.random.default_rng(seed), n_draws=n_draws)
                for d, seed in ((d0, 10), (d1, 11))]
    thresholds = np.unique(d1)
    lb = epsilon_lower_bound(_box_events(out[0], thresholds), _box_events(out[1], thresholds))
    # factor 2 runs at 2ε while claiming ε: the audit must catch it.
    assert (lb <= eps) if factor == 1 else (lb > eps)


def test_joint_curve_and_charge():
    # One joint mechanism per column at ε/columns, whatever the number of levels.
    assert (_quantiles._quantile_curve(1.0, 0.0, 1, n_quantiles=9, method="joint")
            == exponential_mechanism_rdp(1.0))
    assert (_quantiles._quantile_curve(1.0, 0.0, 3, n_quantiles=5, method="joint")
            == 3 * exponential_mechanism_rdp(1.0 / 3))
    assert (_quantiles._quantile_curve(1.0, 0.0, 3, n_quantiles=5, method="split")
            == 15 * exponential_mechanism_rdp(1.0 / 15))
    assert (_quantiles._quantile_curve(1.0, 0.0, 1, n_quantiles=9, method="joint").epsilon(0.0)
            == pytest.approx(1.0))
    budget = PrivacyBudget(10.0, 1e-5)
    x = np.random.default_rng(0).uniform(size=(100, 2))
    stats.quantile(x, [0.1, 0.5, 0.9], axis=0, epsilon=1.0, bounds=(0, 1), budget=budget,
                   method="joint")
    stats.quantile(x, [0.1, 0.5, 0.9], axis=0, epsilon=1.0, bounds=(0, 1), budget=budget,
                   method="split")
    assert budget.ledger[0].curve == 2 * exponential_mechanism_rdp(0.5)
    assert budget.ledger[1].curve == 6 * exponential_mechanism_rdp(1.0 / 6)


def test_bad_method_costs_nothing():
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises(ValueError, match="method"):
        stats.quantile(np.ones(5), [0.1, 0.9], epsilon=1.0, bounds=(0, 1), budget=budget,
                       method="smith")
    assert len(budget) == 0


@pytest.mark.parametrize("method", ["joint", "split"])
def test_methods_at_infinite_epsilon_and_degenerate_bounds(method):
    x = np.random.default_rng(0).normal(size=(30, 2))
    kw = dict(axis=0, bounds=(-1, 1), method=method)
    assert np.array_equal(stats.quantile(x, [0.2, 0.6], epsilon=math.inf, **kw),
                          np.quantile(np.clip(x, -1, 1), [0.2, 0.6], axis=0))
    out = stats.quantile(x, [0.2, 0.6], epsilon=1.0, axis=0, bounds=([0.5, -1], [0.5, 1]),
                         method=method, random_state=0)
    assert np.all(out[:, 0] == 0.5)
    empty = stats.quantile(np.empty(0), [0.2, 0.6], epsilon=1.0, bounds=(0, 1), method=method,
                           random_state=0)
    assert np.all((empty >= 0) & (empty <= 1))
