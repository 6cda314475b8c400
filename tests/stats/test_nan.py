import math

import numpy as np
import pytest

from skdp import PrivacyBudget, stats
from skdp.stats._noise import _sums_curve
from _testing import assert_same_curve


@pytest.fixture(autouse=True)
def _secure_takes_seeds_here(monkeypatch):
    # secure=True refuses a seed; the seeded secure calls in this file read seeded bytes
    # through the same samplers (seeded_secure of tests/_testing.py).
    from _testing import seeded_secure

    seeded_secure(monkeypatch)


FUNCS = {"nansum": (stats.nansum, np.nansum, 1), "nanmean": (stats.nanmean, np.nanmean, 2),
         "nanvar": (stats.nanvar, np.nanvar, 3), "nanstd": (stats.nanstd, np.nanstd, 3)}


def _data(n=6000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(40, 10, size=(n, d))
    X[rng.random((n, d)) < 0.3] = np.nan
    X[0, 0] = 150.0  # clipped by the bounds (0, 100)
    return X


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("axis", [None, 0])
def test_epsilon_inf_is_numpy_on_clipped_data(name, axis):
    ours, ref, _ = FUNCS[name]
    X = _data()
    expected = ref(np.clip(X, 0, 100), axis=axis)
    np.testing.assert_allclose(ours(X, axis, epsilon=math.inf, bounds=(0, 100)), expected,
                               rtol=1e-12)


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_charges_its_curve_once_whatever_the_data(name, delta):
    ours, _, per_output = FUNCS[name]
    for X in (_data(), _data(50, seed=1) * 2):
        budget = PrivacyBudget(100.0, 1e-5)
        ours(X, 0, epsilon=0.5, delta=delta, bounds=(0, 100), budget=budget, random_state=0)
        assert len(budget) == 1
        assert_same_curve(budget.ledger[0].curve, _sums_curve(0.5, delta, per_output * 3))


@pytest.mark.parametrize("name", FUNCS)
def test_bad_input_is_refused_before_any_charge(name):
    ours, _, _ = FUNCS[name]
    budget = PrivacyBudget(100.0, 1e-5)
    X = _data(100)
    inf_X = X.copy()
    inf_X[1, 1] = np.inf
    cases = [dict(a=inf_X, epsilon=1.0, bounds=(0, 100)),
             dict(a=X, epsilon=0.0, bounds=(0, 100)),
             dict(a=X, epsilon=1.0, bounds=(100, 0)),
             dict(a=X, epsilon=1.0, bounds=(0, 100), delta=1.5),
             dict(a=X, epsilon=1.0, bounds=(0, 100), axis=1),
             dict(a=[["x"]], epsilon=1.0, bounds=(0, 100))]
    for kw in cases:
        with pytest.raises((ValueError, TypeError)):
            ours(**kw, budget=budget)
    assert len(budget) == 0


def test_nanmean_is_accurate():
    X = _data()
    true = np.nanmean(np.clip(X, 0, 100), axis=0)
    got = stats.nanmean(X, 0, epsilon=1.0, bounds=(0, 100), random_state=0)
    # 6 Laplace sums of scale 6·Δ/ε: the centred sums (Δ = 50) have sd √2·300 ≈ 424 over
    # about 4200 values per column, so the mean is off by about 0.1; the counts' error
    # (sd √2·6 ≈ 8.5, relative 0.002) moves it by far less. 0.6 is 6 sds.
    np.testing.assert_allclose(got, true, atol=0.6)


def test_nanvar_and_nanstd_are_accurate():
    X = _data()
    true = np.nanvar(np.clip(X, 0, 100), axis=0)
    got = stats.nanvar(X, 0, epsilon=1.0, delta=1e-5, bounds=(0, 100), random_state=0)
    # Gaussian with 9 sums: std z·3·Δ ≈ 3.73·3·1250 ≈ 14000 on Σ(y² − h²/2) over 4200
    # values: about 3.3 on the mean square; 20 is 6 sds.
    np.testing.assert_allclose(got, true, atol=20)
    std = stats.nanstd(X, 0, epsilon=1.0, delta=1e-5, bounds=(0, 100), random_state=0)
    np.testing.assert_allclose(std, np.sqrt(got))


def test_nansum_secure_is_accurate():
    x = _data(20_000, d=1)[:, 0]
    true = np.nansum(np.clip(x, 0, 100))
    got = stats.nansum(x, epsilon=1.0, bounds=(0, 100), secure=True, random_state=0)
    # discrete Laplace of scale 100/ε: sd ≈ 141; 1000 is 7 sds
    assert abs(got - true) < 1000


def test_nan_only_column_returns_noise_within_the_bounds():
    X = _data(500)
    X[:, 2] = np.nan
    got = stats.nanmean(X, 0, epsilon=1.0, bounds=(0, 100), random_state=0)
    assert np.all((got >= 0) & (got <= 100))


def test_percentile_is_quantile_in_percent():
    x = np.random.default_rng(0).normal(40, 10, size=5000)
    kw = dict(epsilon=1.0, bounds=(0, 100), random_state=0)
    np.testing.assert_array_equal(stats.percentile(x, [10, 50, 90], **kw),
                                  stats.quantile(x, [0.1, 0.5, 0.9], **kw))
    assert stats.percentile(x, 50, epsilon=math.inf, bounds=(0, 100)) == np.percentile(x, 50)
    budget = PrivacyBudget(10.0, 1e-5)
    for q in (101, -1, [[50]], np.nan, []):
        with pytest.raises(ValueError):
            stats.percentile(x, q, budget=budget, **kw)
    assert len(budget) == 0


def test_nanquantile_is_quantile_of_the_values_present():
    """Same seed, same release as stats.quantile on each column's non-NaN values."""
    rng = np.random.default_rng(3)
    x = rng.normal(50, 10, size=(2000, 2))
    x[rng.random(x.shape) < 0.3] = np.nan
    got = stats.nanquantile(x, [0.1, 0.5], axis=0, epsilon=2.0, bounds=(0, 100),
                            random_state=4)
    gen = np.random.default_rng(4)
    for j in range(2):
        want = stats.quantile(x[~np.isnan(x[:, j]), j], [0.1, 0.5], epsilon=1.0,
                              bounds=(0, 100), random_state=gen)
        np.testing.assert_array_equal(got[:, j], want)
    np.testing.assert_allclose(stats.nanmedian(x, axis=0, epsilon=np.inf, bounds=(0, 100)),
                               np.nanmedian(x, axis=0))


def test_nanmedian_charges_the_quantile_curve_and_refuses_infinity():
    budget = PrivacyBudget(1.0, 1e-5)
    x = np.array([1.0, np.nan, 3.0, 4.0])
    stats.nanmedian(x, epsilon=0.5, bounds=(0, 10), budget=budget, random_state=0)
    stats.median(x[~np.isnan(x)], epsilon=0.5, bounds=(0, 10), budget=budget, random_state=0)
    assert budget.ledger[0].epsilon == budget.ledger[1].epsilon
    with pytest.raises(ValueError, match="infinity"):
        stats.nanmedian(np.array([1.0, np.inf]), epsilon=1.0, bounds=(0, 10), budget=budget)
    assert len(budget) == 2
