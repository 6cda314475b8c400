"""Tests of skdp.stats: empirical DP audits, accounting, bad input, epsilon=inf."""

import math
import pathlib
import sys

import numpy as np
import pytest

from skdp import PrivacyBudget, stats
from skdp.accounting import RDPCurve, calibrate_noise_multiplier, gaussian_rdp, laplace_rdp
from skdp.mechanisms import exponential_mechanism_rdp
from skdp.stats import _histograms, _noise, _quantiles, _sums

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from _dp_audit import split_audit  # noqa: E402


@pytest.fixture(autouse=True)
def _secure_takes_seeds_here(monkeypatch):
    # secure=True refuses a seed; the seeded secure calls in this file read seeded bytes
    # through the same samplers (seeded_secure of tests/_testing.py).
    from _testing import seeded_secure

    seeded_secure(monkeypatch)


B01 = (np.zeros(1), np.ones(1))


# -- empirical DP audits -----------------------------------------------------
def _audit(release, d0, d1, eps, n_draws, n_select=2000):
    # n_draws estimate the probabilities of events chosen on n_select further,
    # independent draws (split_audit), so the Clopper–Pearson bound holds.
    rng0, rng1 = np.random.default_rng(10), np.random.default_rng(11)
    out0 = np.array([release(d0, rng0) for _ in range(n_select + n_draws)], dtype=float)
    out1 = np.array([release(d1, rng1) for _ in range(n_select + n_draws)], dtype=float)
    return split_audit(out0, out1, n_select=n_select)


@pytest.mark.parametrize("factor", [1, 2])
def test_mean_audit(factor):
    # D′ adds a row at the far bound: the sum moves by h and the count by 1.
    eps = 1.0
    lb = _audit(lambda d, rng: _sums._mean_release(d, epsilon=eps * factor, delta=0.0, bounds=B01,
                                                   axis=None, rng=rng, secure=False),
                np.ones(2), np.r_[np.ones(2), 0.0], eps, 20_000)
    # factor 2 is a mean run at 2ε while claiming ε: the audit must catch it (measured 1.32;
    # 0.60 at ε).
    assert (lb <= eps) if factor == 1 else (lb > eps)


@pytest.mark.parametrize("factor", [1, 2])
def test_quantile_audit(factor):
    # q = 0.1 with the added row below the data: the utilities of the gaps just
    # under the quantile and above it move in opposite directions (loss ≈ (1 − q)ε).
    eps = 1.0
    d0 = np.linspace(0.5, 1.0, 20)
    lb = _audit(lambda d, rng: _quantiles._quantile_release(d, 0.1, epsilon=eps * factor, delta=0.0,
                                                            bounds=B01, axis=None, rng=rng),
                     d0, np.r_[d0, 0.0], eps, 20_000)
    assert (lb <= eps) if factor == 1 else (lb > eps)


# count, sum, var, std, the histograms, the secure paths and the Gaussian
# releases are audited, with their power shown, in test_audits.py.


# -- accounting by hand -------------------------------------------------------
def test_curves_by_hand():
    # mean over 3 columns, pure: 4 sums (count + 3) at ε/4 each: 4 × laplace_rdp(4/ε).
    assert _sums._mean_curve(1.0, 0.0, 3) == 4 * laplace_rdp(4.0)
    assert _sums._var_curve(1.0, 0.0, 1) == 3 * laplace_rdp(3.0)
    z = calibrate_noise_multiplier(1.0, 1e-5, accountant="rdp")
    # δ > 0: one Gaussian vector where it adds less noise than the Laplace
    # (z² < 2k/ε², z = 4.05 here: from k = 9 sums on), else the Laplace.
    assert _sums._mean_curve(1.0, 1e-5, 8) == gaussian_rdp(z)
    assert _sums._mean_curve(1.0, 1e-5, 3) == 4 * laplace_rdp(4.0)
    assert _histograms._histogram_curve(0.5, 0.0) == laplace_rdp(2.0)
    assert _quantiles._quantile_curve(1.0, 0.0, 2, n_quantiles=2) == 4 * exponential_mechanism_rdp(0.25)
    assert _sums._mean_curve(math.inf, 0.0, 1) == RDPCurve.non_private()
    # The composed curves give back the ε that was asked for.
    assert _sums._mean_curve(1.0, 0.0, 3).epsilon(0.0) == pytest.approx(1.0)
    assert _sums._mean_curve(1.0, 1e-5, 8).epsilon(1e-5) <= 1.0


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2])
def test_delta_buys_a_gaussian_only_where_it_adds_less_noise(epsilon, delta):
    # Per-sum noise variance of k sums: Laplace 2(k/ε)², Gaussian (z√k)²; the
    # release takes the smaller, and its curve and noise scale say the same.
    z = calibrate_noise_multiplier(epsilon, delta, accountant="rdp")
    for k in [1, 2, 5, 10, 50, 500]:
        laplace_var, gauss_var = 2 * (k / epsilon) ** 2, z * z * k
        scale = float(_noise._noise_scales(epsilon, delta, k, 1.0))
        curve = _noise._sums_curve(epsilon, delta, k)
        if gauss_var < laplace_var:
            assert (scale, curve) == (pytest.approx(z * math.sqrt(k)), gaussian_rdp(z))
        else:
            assert (scale, curve) == (pytest.approx(k / epsilon), k * laplace_rdp(k / epsilon))


def test_noise_scale_by_hand():
    # histogram with ε = 0.5: Laplace(2) per bin, variance 8; 2000 bins of zeros.
    hist, _ = stats.histogram(np.empty(0), bins=2000, range=(0, 1), epsilon=0.5, random_state=0)
    # sample variance of 2000 draws: relative sd ≈ sqrt(kurtosis-1 / n) = sqrt(5/2000) = 5%
    assert hist.var() == pytest.approx(8.0, rel=0.2)


def test_budget_charged_once_with_the_curve():
    budget = PrivacyBudget(10.0, 1e-5)
    x = np.random.default_rng(0).uniform(size=(100, 3))
    stats.mean(x, axis=0, epsilon=1.0, bounds=(0, 1), budget=budget, random_state=0)
    stats.quantile(x, [0.1, 0.9], axis=0, epsilon=1.0, bounds=(0, 1), budget=budget)
    assert len(budget) == 2
    assert budget.ledger[0].curve == _sums._mean_curve(1.0, 0.0, 3)
    assert budget.ledger[1].curve == _quantiles._quantile_curve(1.0, 0.0, 3, n_quantiles=2)


# -- bad input: clear error, no budget ---------------------------------------
X = np.random.default_rng(0).uniform(size=(50, 2))
X_NAN = X.copy()
X_NAN[3, 1] = np.nan
BAD_CALLS = {
    "nan": lambda b: stats.mean(X_NAN, axis=0, epsilon=1.0, bounds=(0, 1), budget=b),
    "inf": lambda b: stats.histogram(np.r_[X[:, 0], np.inf], range=(0, 1), epsilon=1.0, budget=b),
    "bounds": lambda b: stats.var(X, axis=0, epsilon=1.0, bounds=(1, 0), budget=b),
    "no_bounds": lambda b: stats.sum(X, epsilon=1.0, bounds=None, budget=b),
    "bins0": lambda b: stats.histogram(X[:, 0], bins=0, range=(0, 1), epsilon=1.0, budget=b),
    "bins_neg": lambda b: stats.histogramdd(X, bins=-2, range=[(0, 1)] * 2, epsilon=1.0, budget=b),
    "no_range": lambda b: stats.histogram(X[:, 0], bins=5, epsilon=1.0, budget=b),
    "q_high": lambda b: stats.quantile(X, 1.5, epsilon=1.0, bounds=(0, 1), budget=b),
    "q_neg": lambda b: stats.quantile(X, [0.5, -0.1], epsilon=1.0, bounds=(0, 1), budget=b),
    "eps0": lambda b: stats.mean(X, epsilon=0.0, bounds=(0, 1), budget=b),
    "eps_neg": lambda b: stats.count(X, epsilon=-1.0, budget=b),
    "delta1": lambda b: stats.mean(X, epsilon=1.0, delta=1.0, bounds=(0, 1), budget=b),
    "delta_neg": lambda b: stats.median(X, epsilon=1.0, delta=-0.1, bounds=(0, 1), budget=b),
    "axis1": lambda b: stats.mean(X, axis=1, epsilon=1.0, bounds=(0, 1), budget=b),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_bad_input_costs_nothing(name):
    budget = PrivacyBudget(10.0, 1e-5)
    with pytest.raises(ValueError):
        BAD_CALLS[name](budget)
    assert len(budget) == 0 and budget.spent() == (0.0, 0.0)


def test_refused_charge_raises():
    from skdp import BudgetExceededError

    budget = PrivacyBudget(0.5, 1e-5)
    with pytest.raises(BudgetExceededError):
        stats.mean(X, epsilon=1.0, bounds=(0, 1), budget=budget)
    assert len(budget) == 0


# -- epsilon = inf matches numpy exactly --------------------------------------
def test_epsilon_inf_matches_numpy():
    x = np.random.default_rng(1).normal(size=(200, 3))
    kw = dict(epsilon=math.inf, bounds=(-10, 10))
    for axis in (None, 0):
        assert np.array_equal(stats.sum(x, axis, **kw), np.sum(x, axis))
        assert np.array_equal(stats.mean(x, axis, **kw), np.mean(x, axis))
        assert np.array_equal(stats.var(x, axis, ddof=1, **kw), np.var(x, axis, ddof=1))
        assert np.array_equal(stats.std(x, axis, **kw), np.std(x, axis))
        assert np.array_equal(stats.quantile(x, [0.1, 0.7], axis, **kw),
                              np.quantile(x, [0.1, 0.7], axis))
        assert np.array_equal(stats.median(x, axis, **kw), np.median(x, axis))
        assert np.array_equal(stats.count(x > 0, axis, epsilon=math.inf),
                              np.count_nonzero(x > 0, axis))
    h, e = stats.histogram(x[:, 0], bins=7, range=(-3, 3), epsilon=math.inf)
    h2, e2 = np.histogram(x[:, 0], bins=7, range=(-3, 3))
    assert np.array_equal(h, h2) and np.array_equal(e, e2)
    h, xe, ye = stats.histogram2d(x[:, 0], x[:, 1], bins=3, range=[(-3, 3), (-3, 3)],
                                  epsilon=math.inf, density=True)
    h2, xe2, ye2 = np.histogram2d(x[:, 0], x[:, 1], bins=3, range=[(-3, 3), (-3, 3)], density=True)
    assert np.array_equal(h, h2) and np.array_equal(xe, xe2)


def test_epsilon_inf_charges_non_private():
    budget = PrivacyBudget(1.0, 1e-5)
    from skdp import BudgetExceededError

    with pytest.raises(BudgetExceededError):
        stats.mean(X, epsilon=math.inf, bounds=(0, 1), budget=budget)


# -- behaviour -----------------------------------------------------------------
def test_clipping_to_bounds():
    x = np.r_[np.zeros(50), np.full(50, 100.0)]
    # Values above 1 are clipped to 1: the true clipped mean is 0.5.
    assert stats.mean(x, epsilon=math.inf, bounds=(0, 1)) == 0.5
    assert abs(stats.mean(x, epsilon=5.0, bounds=(0, 1), random_state=0) - 0.5) < 0.2


def test_secure_outputs_are_grid_valued_and_accurate():
    x = np.random.default_rng(2).uniform(size=5000)
    s = stats.sum(x, epsilon=1.0, bounds=(0, 1), secure=True, random_state=0)
    # Laplace scale 1: grid 2^-10; the released float is an integer times 2^-10.
    assert (s * 2**10) == int(s * 2**10)
    assert abs(s - x.sum()) < 15  # 15 Laplace(1) scales
    h, _ = stats.histogram(x, bins=4, range=(0, 1), epsilon=1.0, secure=True, random_state=0)
    assert np.array_equal(h, np.round(h))
    m = stats.mean(x, epsilon=1.0, delta=1e-5, bounds=(0, 1), secure=True, random_state=0)
    assert abs(m - x.mean()) < 0.02


def test_accuracy_axis0_and_shapes():
    rng = np.random.default_rng(3)
    x = rng.normal([0, 10], [1, 2], size=(20_000, 2))
    m = stats.mean(x, axis=0, epsilon=1.0, bounds=([-5, 0], [5, 20]), random_state=0)
    np.testing.assert_allclose(m, x.mean(0), atol=0.05)
    v = stats.var(x, axis=0, epsilon=1.0, delta=1e-6, bounds=([-5, 0], [5, 20]), random_state=0)
    np.testing.assert_allclose(v, [1, 4], rtol=0.1)
    q = stats.quantile(x, [0.25, 0.5], axis=0, epsilon=1.0, bounds=([-5, 0], [5, 20]),
                       random_state=0)
    assert q.shape == (2, 2)
    np.testing.assert_allclose(q, np.quantile(x, [0.25, 0.5], axis=0), atol=0.1)
    h, edges = stats.histogramdd(x, bins=(3, 4), range=[(-5, 5), (0, 20)], epsilon=1.0,
                                 random_state=0)
    assert h.shape == (3, 4) and len(edges) == 2


def test_secure_grid_keeps_values_under_large_noise(monkeypatch):
    # With the noise scale far above the bounds (1/ε = 1e4 here), a grid made
    # only from the noise scale would be 8 wide and round every 1 to 0. The grid
    # is also 1024× finer than the bounds, so with the noise draw set to 0 the
    # secure sum of 0/1 values is exact.
    monkeypatch.setattr(_noise, "sample_discrete_laplace", lambda scale, random_state=None: 0)
    x = (np.arange(1000) % 3 == 0).astype(float)
    s = stats.sum(x, epsilon=1e-4, bounds=(0, 1), secure=True, random_state=0)
    assert s == 334.0
