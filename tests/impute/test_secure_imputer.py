"""DPSimpleImputer(secure=True): the secure paths of skdp.stats, per strategy.

The fit must charge exactly the curve that the skdp.stats functions charge with
secure=True for the same statistics, run the same mechanisms (bit-identical outputs for
the same seed), release grid values where the mechanism says so, and validate
``secure`` before any charge.
"""

import math

import numpy as np
import pytest
from sklearn.impute import SimpleImputer

from skdp import PrivacyBudget, stats
from skdp.accounting import RDPCurve, calibrate_noise_multiplier, zcdp_rdp
from skdp.impute import DPSimpleImputer
from skdp.impute import _base
from skdp.stats import _histograms, _noise, _sums
from _testing import (
    assert_bad_input_costs_nothing,
    assert_charges_once,
    assert_refused_fit_fits_nothing,
    assert_same_curve,
)

LOWER = np.array([-10.0, 0.0])
UPPER = np.array([10.0, 6.0])
BOUNDS = (LOWER, UPPER)
GRID = 1024  # skdp.stats' default public grid size for secure quantiles


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, 2)).astype(float) + rng.normal(0, 0.3, size=(n, 2))
    X[rng.random((n, 2)) < 0.2] = np.nan
    return X


def _columns(X):
    return [X[~np.isnan(X[:, j]), j] for j in range(X.shape[1])]


def _stats_release(strategy, col, j, eps, rng, budget=None):
    """What skdp.stats releases for one feature, secure, with the imputer's parameters."""
    kw = dict(epsilon=eps, secure=True, random_state=rng, budget=budget)
    if strategy == "mean":
        return float(stats.mean(col, axis=0, bounds=(LOWER[j], UPPER[j]), **kw))
    if strategy == "median":
        return float(stats.median(col, axis=0, bounds=(LOWER[j], UPPER[j]), **kw))
    # most_frequent over the integers of the bounds: each value counts for its nearest one
    cands = np.arange(math.ceil(LOWER[j]), math.floor(UPPER[j]) + 1, dtype=float)
    edges = np.concatenate([[-np.inf], (cands[1:] + cands[:-1]) / 2, [np.inf]])
    idx = np.searchsorted(edges, np.clip(col, LOWER[j], UPPER[j]), side="right") - 1
    hist, _ = stats.histogram(idx, bins=cands.size, range=(-0.5, cands.size - 0.5), **kw)
    return float(cands[int(np.argmax(hist))])


# -- the charged curve is the stats secure curve, charged once ---------------------------
@pytest.mark.parametrize("strategy", ["mean", "median", "most_frequent"])
def test_charges_the_stats_secure_curve_once(strategy):
    X = _data()
    budget = PrivacyBudget(math.inf, 1e-5)
    for j, col in enumerate(_columns(X)):  # one stats call per feature at ε/d
        _stats_release(strategy, col, j, 0.8 / 2, rng=0, budget=budget)
    expected = budget.ledger[0].curve + budget.ledger[1].curve
    est = DPSimpleImputer(strategy=strategy, bounds=BOUNDS, epsilon=0.8, secure=True)
    fitted = assert_charges_once(est, X, expected_curve=expected, budget_epsilon=math.inf)
    if strategy == "median":  # charged at the effective ε' a hair below ε
        assert 0.8 * (1 - 1e-5) < fitted.privacy_curve_.pure_epsilon < 0.8
    else:  # discrete Laplace: exactly ε, pure DP
        assert fitted.privacy_curve_.pure_epsilon == pytest.approx(0.8, rel=1e-12)


def test_joint_gaussian_mean_charges_the_discrete_gaussian_curve():
    X = np.hstack([_data(), _data(seed=1), _data(seed=2)])  # 2d = 12 sums: the Gaussian adds less
    z = calibrate_noise_multiplier(0.9, 1e-5, accountant="rdp")
    # 2d sums, each normalised by its noise std z·√(2d)·Δⱼ: L2 sensitivity 1/z, so
    # 1/(2z²)-zCDP (Canonne, Kamath & Steinke 2020, Thm. 4), not the float Gaussian curve.
    bounds = (np.tile(LOWER, 3), np.tile(UPPER, 3))
    est = DPSimpleImputer(bounds=bounds, epsilon=0.9, delta=1e-5, secure=True)
    assert_charges_once(est, X, expected_curve=zcdp_rdp(1 / (2 * z * z)),
                        budget_epsilon=math.inf)
    assert_same_curve(zcdp_rdp(1 / (2 * z * z)), _noise._sums_curve(0.9, 1e-5, 12, secure=True))


def test_constant_reads_nothing_with_secure():
    est = DPSimpleImputer(strategy="constant", fill_value=3.0, secure=True)
    fitted = assert_charges_once(est, _data(), expected_curve=RDPCurve.zero(),
                                 budget_epsilon=math.inf)
    np.testing.assert_array_equal(fitted.statistics_, [3.0, 3.0])


# -- the same mechanisms as skdp.stats, on their grids -----------------------------------
@pytest.mark.parametrize("strategy", ["mean", "median", "most_frequent"])
@pytest.mark.parametrize("seed", range(4))
def test_secure_is_the_stats_secure_release(strategy, seed):
    X = _data(seed=seed)
    est = DPSimpleImputer(strategy=strategy, bounds=BOUNDS, epsilon=0.5, secure=True,
                          random_state=seed).fit(X)
    rng = np.random.default_rng(seed)  # the fit draws all features from one generator
    expected = [_stats_release(strategy, col, j, 0.25, rng) for j, col in enumerate(_columns(X))]
    # Same seed, same calls: bit-identical draws of the same mechanisms.
    np.testing.assert_array_equal(est.statistics_, expected)
    if strategy == "median":
        for j in range(2):
            assert est.statistics_[j] in np.linspace(LOWER[j], UPPER[j], GRID)


def _spy(monkeypatch, module, name):
    """Record (args, kwargs, result) of every call of module.name."""
    calls, original = [], getattr(module, name)

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        calls.append((args, kwargs, out))
        return out

    monkeypatch.setattr(module, name, spy)
    return calls


def _power_of_two_grid(scale, sensitivity):
    """The public grid width of a secure noisy sum (stats._noise._secure_sums):
    2^⌊log₂(min(scale, Δ)/1024)⌋, finer than both the noise and the bounds."""
    return 2.0 ** math.floor(math.log2(min(scale, sensitivity) / 1024))


def _assert_multiples(values, grid):
    ratio = np.asarray(values) / grid
    np.testing.assert_array_equal(ratio, np.round(ratio))


def test_secure_mean_sums_are_multiples_of_the_public_grid(monkeypatch):
    X = _data()
    calls = _spy(monkeypatch, _sums, "_noisy_sums")
    DPSimpleImputer(bounds=BOUNDS, epsilon=0.5, secure=True, random_state=0).fit(X)
    assert len(calls) == 2  # one release (a count and a centred sum) per feature
    h = (UPPER - LOWER) / 2
    for j, (_, _, (count, total)) in enumerate(calls):
        _assert_multiples(count, 1.0)  # the count is an integer plus integer noise
        # Laplace scale of the centred sum: Δ·k/ε with Δ = h, k = 2 sums, ε = 0.5/2
        _assert_multiples(total, _power_of_two_grid(h[j] * 2 / 0.25, h[j]))
    # Without secure the float noise leaves the grid (the check has power).
    calls.clear()
    DPSimpleImputer(bounds=BOUNDS, epsilon=0.5, random_state=0).fit(X)
    with pytest.raises(AssertionError):
        _assert_multiples(calls[0][2][1], _power_of_two_grid(h[0] * 2 / 0.25, h[0]))


def test_secure_joint_mean_sums_are_multiples_of_the_public_grid(monkeypatch):
    X = np.hstack([_data(), _data(seed=1), _data(seed=2)])  # 2d = 12: the Gaussian adds less
    lower, upper = np.tile(LOWER, 3), np.tile(UPPER, 3)
    calls = _spy(monkeypatch, _base, "_noisy_sums")
    DPSimpleImputer(bounds=(lower, upper), epsilon=0.9, delta=1e-5, secure=True,
                    random_state=0).fit(X)
    ((_, kwargs, (counts, sums)),) = calls
    assert kwargs["secure"] is True
    z = calibrate_noise_multiplier(0.9, 1e-5, accountant="rdp")
    # Gaussian std of sum j: z·√(2d)·Δⱼ with Δ = 1 for the counts and h for the centred sums
    for j, h in enumerate((upper - lower) / 2):
        _assert_multiples(counts[j], _power_of_two_grid(z * math.sqrt(12) * 1.0, 1.0))
        _assert_multiples(sums[j], _power_of_two_grid(z * math.sqrt(12) * h, h))


def test_secure_most_frequent_counts_are_integers(monkeypatch):
    X = _data()
    calls = _spy(monkeypatch, _histograms, "_noisy_counts")
    est = DPSimpleImputer(strategy="most_frequent", bounds=BOUNDS, epsilon=0.5, secure=True,
                          random_state=0).fit(X)
    assert len(calls) == 2
    for _, kwargs, noisy in calls:
        assert kwargs["secure"] is True
        _assert_multiples(noisy, 1.0)  # integer counts plus discrete Laplace noise
    for j in range(2):
        assert est.statistics_[j] in np.arange(LOWER[j], UPPER[j] + 1)


@pytest.mark.parametrize("strategy", ["mean", "median", "most_frequent"])
def test_secure_inf_matches_sklearn(strategy):
    X = _data()
    ours = DPSimpleImputer(strategy=strategy, bounds=(-100, 100), epsilon=math.inf,
                           secure=True).fit(X)
    ref = SimpleImputer(strategy=strategy).fit(np.round(X) if strategy == "most_frequent" else X)
    if strategy == "most_frequent":  # the DP version counts each value for its nearest integer
        np.testing.assert_array_equal(ours.statistics_, ref.statistics_)
    else:
        np.testing.assert_allclose(ours.statistics_, ref.statistics_, rtol=0, atol=1e-8)


def test_secure_statistics_are_accurate_with_enough_rows():
    rng = np.random.default_rng(1)
    X = rng.normal(2.0, 1.0, size=(50_000, 1))
    X[rng.random(50_000) < 0.3] = np.nan
    # As the float mechanisms in test_dp_imputer (0.05), plus at most half a grid step
    # for the median (13/1023/2 ≈ 0.006); the mean's grid is 2^-10 of its noise scale.
    mean = DPSimpleImputer(bounds=(-5, 8), secure=True, random_state=0).fit(X).statistics_
    assert mean[0] == pytest.approx(2.0, abs=0.05)
    med = DPSimpleImputer(bounds=(-5, 8), strategy="median", secure=True,
                          random_state=0).fit(X).statistics_
    assert med[0] == pytest.approx(2.0, abs=0.05 + 13 / 1023 / 2)


# -- validation before the charge --------------------------------------------------------
@pytest.mark.parametrize("strategy", ["mean", "median", "most_frequent", "constant"])
def test_bad_secure_costs_nothing(strategy):
    X = _data(n=50)
    est = DPSimpleImputer(strategy=strategy, bounds=BOUNDS, secure=True)
    bad = [{"secure": "yes"}, {"secure": 1}, {"secure": None}, {"secure": np.array([True])}]
    assert_bad_input_costs_nothing(est, X, bad_params=bad)
    with pytest.raises(ValueError, match="secure must be a bool"):
        est.set_params(secure="yes").fit(X)


def test_secure_median_epsilon_too_small_costs_nothing():
    # ε/d below what the 52-bit base can implement: stats refuses it in the curve.
    est = DPSimpleImputer(strategy="median", bounds=BOUNDS, secure=True)
    assert_bad_input_costs_nothing(est, _data(n=50), bad_params=[{"epsilon": 1e-16}])


@pytest.mark.parametrize("strategy", ["mean", "median", "most_frequent"])
def test_secure_refused_fit_fits_nothing(strategy):
    est = DPSimpleImputer(strategy=strategy, bounds=BOUNDS, secure=True)
    assert_refused_fit_fits_nothing(est, _data(n=50))


@pytest.fixture(autouse=True)
def _secure_takes_seeds_here(monkeypatch):
    # secure=True refuses a seed; scikit-learn's checks and the seeded comparisons in this
    # file need one: secure fits here read seeded bytes (seeded_secure of tests/_testing.py).
    from _testing import seeded_secure

    seeded_secure(monkeypatch)
