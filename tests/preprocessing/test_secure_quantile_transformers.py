"""secure=True in DPMinMaxScaler and DPKBinsDiscretizer: the secure quantiles of skdp.stats.

The fit must charge exactly the curve that skdp.stats.quantile(secure=True) charges for the
same quantiles, run that same mechanism (bit-identical outputs for the same seed), release
points of the public grid, and validate ``secure`` before any charge.
"""

import math

import numpy as np
import pytest

from skdp import PrivacyBudget, stats
from skdp.accounting import RDPCurve
from skdp.preprocessing import DPKBinsDiscretizer, DPMinMaxScaler
from skdp.stats._quantiles import _quantile_curve
from _testing import (
    assert_bad_input_costs_nothing,
    assert_charges_once,
    assert_refused_fit_fits_nothing,
    assert_same_curve,
)

LOWER = np.array([-10.0, 0.0, -3.0])
UPPER = np.array([10.0, 40.0, 17.0])
BOUNDS = (LOWER, UPPER)
GRID = 1024  # skdp.stats' default public grid size for secure quantiles


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 5, size=(n, 3)) * np.arange(1, 4)


def _on_grid(values, lower, upper):
    """Each value is exactly one of the points np.linspace(lower, upper, GRID)."""
    return np.isin(values, np.linspace(lower, upper, GRID))


# -- the charged curve is the stats secure curve, charged once ---------------------------
def test_minmax_charges_the_stats_secure_curve_once():
    X = _data()
    levels = [0.05, 0.95]
    budget = PrivacyBudget(math.inf, 1e-5)
    stats.quantile(X, levels, axis=0, epsilon=0.6, bounds=BOUNDS, secure=True, budget=budget,
                   random_state=0)
    expected = budget.ledger[0].curve
    est = DPMinMaxScaler(bounds=BOUNDS, quantile_range=(0.05, 0.95), epsilon=0.6, secure=True)
    fitted = assert_charges_once(est, X, expected_curve=expected, budget_epsilon=math.inf)
    # It is the secure curve (ε' a hair below ε: 6 mechanisms at ε'≤ 0.1), not the float one.
    assert_same_curve(expected, _quantile_curve(0.6, 0.0, 3, n_quantiles=2, secure=True))
    assert 0.6 * (1 - 1e-5) < fitted.privacy_curve_.pure_epsilon < 0.6
    assert _quantile_curve(0.6, 0.0, 3, n_quantiles=2).pure_epsilon == pytest.approx(0.6)


def test_kbins_charges_the_stats_secure_curve_once():
    X = _data()
    n_bins = [3, 4, 5]
    budget = PrivacyBudget(math.inf, 1e-5)
    for j, k in enumerate(n_bins):  # one feature at a time, at ε/d each
        levels = np.linspace(0, 1, k + 1)[1:-1]
        stats.quantile(X[:, [j]], levels, axis=0, epsilon=0.9 / 3, bounds=(LOWER[j], UPPER[j]),
                       secure=True, budget=budget, random_state=0)
    assert len(budget) == 3
    expected = budget.ledger[0].curve + budget.ledger[1].curve + budget.ledger[2].curve
    est = DPKBinsDiscretizer(n_bins, strategy="quantile", bounds=BOUNDS, epsilon=0.9,
                             secure=True)
    fitted = assert_charges_once(est, X, expected_curve=expected, budget_epsilon=math.inf)
    assert 0.9 * (1 - 1e-5) < fitted.privacy_curve_.pure_epsilon < 0.9


def test_secure_without_quantiles_reads_nothing_and_costs_nothing():
    X = _data()
    for est in [DPMinMaxScaler(bounds=BOUNDS, secure=True),
                DPKBinsDiscretizer(4, bounds=BOUNDS, secure=True)]:
        fitted = assert_charges_once(est, X, expected_curve=RDPCurve.zero(),
                                     budget_epsilon=math.inf)
        assert fitted.epsilon_spent_ == 0.0


# -- the same mechanism as skdp.stats, on the public grid --------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_minmax_secure_is_the_stats_secure_quantile(seed):
    X = _data(seed=seed)
    est = DPMinMaxScaler(bounds=BOUNDS, quantile_range=(0.1, 0.9), epsilon=0.5, secure=True,
                         random_state=seed).fit(X)
    q = stats.quantile(X, [0.1, 0.9], axis=0, epsilon=0.5, bounds=BOUNDS, secure=True,
                       random_state=seed)
    # Same seed, same calls: bit-identical draws of the one mechanism (so the same
    # output distribution); the transformer only orders each feature's pair.
    np.testing.assert_array_equal(est.data_min_, q.min(axis=0))
    np.testing.assert_array_equal(est.data_max_, q.max(axis=0))
    for j in range(3):
        assert _on_grid([est.data_min_[j], est.data_max_[j]], LOWER[j], UPPER[j]).all()
    # The float mechanism (secure=False) draws other outputs, between data values.
    plain = DPMinMaxScaler(bounds=BOUNDS, quantile_range=(0.1, 0.9), epsilon=0.5,
                           random_state=seed).fit(X)
    assert not _on_grid(plain.data_min_, LOWER, UPPER).any()


@pytest.mark.parametrize("seed", range(5))
def test_kbins_secure_is_the_stats_secure_quantile(seed):
    X = _data(seed=seed)
    n_bins = [3, 4, 6]
    est = DPKBinsDiscretizer(n_bins, strategy="quantile", encode="ordinal", bounds=BOUNDS,
                             epsilon=0.9, secure=True, random_state=seed).fit(X)
    rng = np.random.default_rng(seed)  # the fit draws all features from one generator
    for j, k in enumerate(n_bins):
        levels = np.linspace(0, 1, k + 1)[1:-1]
        inner = stats.quantile(X[:, [j]], levels, axis=0, epsilon=0.3,
                               bounds=(LOWER[j], UPPER[j]), secure=True, random_state=rng)
        edges = np.concatenate([[LOWER[j]], np.sort(inner.ravel()), [UPPER[j]]])
        edges = edges[np.ediff1d(edges, to_begin=np.inf) > 1e-8]
        np.testing.assert_array_equal(est.bin_edges_[j], edges)
        assert _on_grid(est.bin_edges_[j], LOWER[j], UPPER[j]).all()
    assert est.transform(X).shape == X.shape


def test_secure_inf_matches_the_non_private_fit():
    X = _data()
    for params in [dict(quantile_range=(0, 1)), dict(quantile_range=(0.2, 0.7))]:
        a = DPMinMaxScaler(bounds=BOUNDS, epsilon=math.inf, secure=True, **params).fit(X)
        b = DPMinMaxScaler(bounds=BOUNDS, epsilon=math.inf, **params).fit(X)
        np.testing.assert_array_equal(a.data_min_, b.data_min_)
        np.testing.assert_array_equal(a.data_max_, b.data_max_)
    a = DPKBinsDiscretizer(4, strategy="quantile", bounds=BOUNDS, epsilon=math.inf,
                           secure=True).fit(X)
    b = DPKBinsDiscretizer(4, strategy="quantile", bounds=BOUNDS, epsilon=math.inf).fit(X)
    for ea, eb in zip(a.bin_edges_, b.bin_edges_):
        np.testing.assert_array_equal(ea, eb)


def test_secure_quantiles_are_accurate_with_enough_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(2.0, 1.5, size=(100_000, 2))
    step = 20.0 / (GRID - 1)  # grid spacing of the bounds (-8, 12)
    mm = DPMinMaxScaler(bounds=(-8, 12), quantile_range=(0.01, 0.99), epsilon=1.0, secure=True,
                        random_state=0).fit(X)
    # The float mechanism meets 0.05 here (test_dp_preprocessing); the grid adds ≤ step/2.
    np.testing.assert_allclose(mm.data_min_, np.quantile(X, 0.01, axis=0), atol=0.05 + step / 2)
    np.testing.assert_allclose(mm.data_max_, np.quantile(X, 0.99, axis=0), atol=0.05 + step / 2)
    kb = DPKBinsDiscretizer(4, encode="ordinal", strategy="quantile", bounds=(-8, 12),
                            epsilon=1.0, secure=True, random_state=0).fit(X)
    counts = np.bincount(kb.transform(X)[:, 0].astype(int), minlength=4) / X.shape[0]
    # The density of N(2, 1.5²) is ≤ 0.27, so a half step (0.0098) moves a bin's mass by
    # ≤ 0.0027 on top of the 0.01 the float mechanism meets.
    np.testing.assert_allclose(counts, 0.25, atol=0.0127)


# -- validation before the charge --------------------------------------------------------
BAD_SECURE = [{"secure": "yes"}, {"secure": 1}, {"secure": None}, {"secure": np.array([True])}]


@pytest.mark.parametrize("est", [
    DPMinMaxScaler(bounds=BOUNDS, quantile_range=(0.01, 0.99), secure=True),
    DPMinMaxScaler(bounds=BOUNDS, secure=True),
    DPKBinsDiscretizer(bounds=BOUNDS, strategy="quantile", secure=True),
    DPKBinsDiscretizer(bounds=BOUNDS, secure=True),
])
def test_bad_secure_costs_nothing(est):
    X = _data(n=40)
    assert_bad_input_costs_nothing(est, X, bad_params=BAD_SECURE)
    with pytest.raises(ValueError, match="secure must be a bool"):
        est.set_params(secure="yes").fit(X)


@pytest.mark.parametrize("est", [
    DPMinMaxScaler(bounds=BOUNDS, quantile_range=(0.01, 0.99), secure=True),
    DPKBinsDiscretizer(bounds=BOUNDS, strategy="quantile", secure=True),
])
def test_secure_epsilon_too_small_costs_nothing(est):
    # Per mechanism ε below what the 52-bit base can implement: stats refuses it in the
    # curve, so the fit raises before its charge (and a larger budget is not the issue).
    X = _data(n=40)
    assert_bad_input_costs_nothing(est, X, bad_params=[{"epsilon": 1e-16}])
    with pytest.raises(ValueError, match="too small for the exact base-2"):
        est.set_params(epsilon=1e-16).fit(X)


@pytest.mark.parametrize("est", [
    DPMinMaxScaler(bounds=BOUNDS, quantile_range=(0.01, 0.99), secure=True),
    DPKBinsDiscretizer(bounds=BOUNDS, strategy="quantile", secure=True),
])
def test_secure_refused_fit_fits_nothing(est):
    assert_refused_fit_fits_nothing(est, _data(n=40))


@pytest.fixture(autouse=True)
def _secure_takes_seeds_here(monkeypatch):
    # secure=True refuses a seed; scikit-learn's checks and the seeded comparisons in this
    # file need one: secure fits here read seeded bytes (seeded_secure of tests/_testing.py).
    from _testing import seeded_secure

    seeded_secure(monkeypatch)
