import math

import numpy as np
import pytest
from sklearn.impute import SimpleImputer
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp.accounting import RDPCurve, calibrate_noise_multiplier, epsilon_of, gaussian_rdp
from skdp.impute import DPSimpleImputer
from skdp.stats import _range
from skdp.stats._histograms import _histogram_curve
from skdp.stats._quantiles import _quantile_curve
from skdp.stats._sums import _mean_curve
from _testing import (
    assert_bad_input_costs_nothing,
    assert_charges_once,
    assert_refused_fit_fits_nothing,
    assert_same_curve,
)

B = (-10.0, 10.0)


@parametrize_with_checks(
    [DPSimpleImputer(bounds=B, strategy=s, random_state=0)
     for s in ["mean", "median", "most_frequent"]]
    + [DPSimpleImputer(bounds=B, strategy=s, secure=True, random_state=0)
       for s in ["mean", "median", "most_frequent"]]
    + [DPSimpleImputer(strategy="constant"), DPSimpleImputer(bounds=B, epsilon=math.inf),
       DPSimpleImputer(bounds=B, delta=1e-5, random_state=0),
       DPSimpleImputer(bounds=B, delta=1e-5, secure=True, random_state=0)]
    # built with their defaults: bounds estimated privately (none needed at epsilon=inf)
    + [DPSimpleImputer(), DPSimpleImputer(epsilon=math.inf), DPSimpleImputer(strategy="median"),
       DPSimpleImputer(strategy="median", epsilon=math.inf),
       DPSimpleImputer(strategy="most_frequent", categories=list(range(-3, 6)))],
    expected_failed_checks=lambda est: {},
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(n=400, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 6, size=(n, d)).astype(float)
    X[rng.random((n, d)) < 0.2] = np.nan
    return X


@pytest.mark.parametrize("strategy", ["mean", "median", "most_frequent", "constant"])
def test_epsilon_inf_matches_sklearn(strategy):
    X = _data()
    ours = DPSimpleImputer(strategy=strategy, bounds=B, epsilon=math.inf).fit(X)
    ref = SimpleImputer(strategy=strategy, fill_value=0.0 if strategy == "constant" else None)
    ref.fit(X)
    np.testing.assert_allclose(ours.statistics_, ref.statistics_.astype(float), rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=0, atol=1e-8)


def test_each_fit_charges_once_with_its_curve():
    X = _data(d=3)
    cases = [
        (DPSimpleImputer(bounds=B, epsilon=0.9), 3 * _mean_curve(0.3, 0.0, 1)),
        (DPSimpleImputer(bounds=B, strategy="median", epsilon=0.9), 3 * _quantile_curve(0.3, 0.0, 1)),
        (DPSimpleImputer(bounds=B, strategy="most_frequent", epsilon=0.9),
         3 * _histogram_curve(0.3, 0.0, 1)),
        (DPSimpleImputer(strategy="constant", fill_value=7.0), RDPCurve.zero()),
        (DPSimpleImputer(bounds=B, epsilon=math.inf), RDPCurve.non_private()),
    ]
    for est, curve in cases:
        fitted = assert_charges_once(est, X, expected_curve=curve, budget_epsilon=math.inf)
        if math.isfinite(est.epsilon) and est.strategy != "constant":
            # pure ε-DP: exactly ε (reported at δ = 1e-5 it is a little less)
            assert fitted.privacy_curve_.epsilon(0.0) == pytest.approx(0.9, rel=1e-9)
            assert 0.89 < fitted.epsilon_spent_ <= 0.9


def test_bad_input_costs_nothing():
    X = _data(n=50)
    X_inf = X.copy()
    X_inf[0, 0] = np.inf
    assert_bad_input_costs_nothing(
        DPSimpleImputer(bounds=B), X,
        bad_params=[{"bounds": (3.0, -3.0)}, {"bounds": (0, np.inf)}, {"epsilon": 0.0},
                    {"strategy": "most_frequent", "bounds": None},  # no candidates
                    {"epsilon": -2.0}, {"strategy": "bad"}, {"missing_values": 0},
                    {"strategy": "most_frequent", "bounds": (0.2, 0.8)},
                    {"strategy": "most_frequent", "categories": []},
                    {"strategy": "constant", "fill_value": np.nan}, {"delta": 1.0},
                    {"delta": -0.1}],
        bad_data=[(X_inf, None)],
    )


# -- without public bounds: private bounds in the fit's one charge -----------------------
@pytest.mark.parametrize("strategy, delta", [("mean", 0.0), ("mean", 1e-5), ("median", 1e-5)])
def test_default_charges_once_with_the_documented_curve(strategy, delta):
    X = _data(d=12)
    d = X.shape[1]

    def stat(e):  # the curve of the statistic at e: what the fit with public bounds charges
        return DPSimpleImputer(bounds=B, strategy=strategy, epsilon=e, delta=delta).fit(
            X).privacy_curve_

    eps_b, eps_s, curve = _range.split_curve(1.0, delta, d, stat)
    assert_same_curve(curve, _range._bounds_curve(eps_b, delta, d) + stat(eps_s))
    est = DPSimpleImputer(strategy=strategy, delta=delta)
    fitted = assert_charges_once(est, X, expected_curve=curve, budget_epsilon=math.inf)
    assert fitted.epsilon_spent_ <= 1.0 + 1e-12
    # the statistics lie in the private bounds, and bad input costs nothing
    lower, upper = fitted.bounds_
    assert np.all((lower <= fitted.statistics_) & (fitted.statistics_ <= upper))
    X_inf = X.copy()
    X_inf[0, 0] = np.inf
    assert_bad_input_costs_nothing(est, X, bad_params=[{"epsilon": 0.0}, {"delta": 1.0}],
                                   bad_data=[(X_inf, None)])


def test_default_statistics_are_accurate():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(20.0, 3.0, 50_000), rng.integers(0, 4, 50_000),
                         np.full(50_000, np.nan)])
    X[rng.random(50_000) < 0.3, 0] = np.nan
    imp = DPSimpleImputer(random_state=0).fit(X)
    assert imp.statistics_[0] == pytest.approx(20.0, abs=0.1)
    assert imp.statistics_[1] == pytest.approx(1.5, abs=0.05)
    assert -imp.bounds_[0][2] == imp.bounds_[1][2] == 2.0**-29  # no value: about 0
    med = DPSimpleImputer(strategy="median", random_state=0).fit(X)
    assert med.statistics_[0] == pytest.approx(20.0, abs=0.1)
    mf = DPSimpleImputer(strategy="most_frequent", categories=[0, 1, 2, 3], random_state=0)
    assert mf.fit(X[:, 1:2]).privacy_curve_ == _histogram_curve(1.0, 0.0, 1)  # no bounds needed


@pytest.mark.parametrize("strategy", ["mean", "median"])
def test_default_at_epsilon_inf_matches_sklearn_without_bounds(strategy):
    X = _data() * 1e3
    ours = DPSimpleImputer(strategy=strategy, epsilon=math.inf).fit(X)
    ref = SimpleImputer(strategy=strategy).fit(X)
    np.testing.assert_allclose(ours.statistics_, ref.statistics_, rtol=1e-12)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=1e-12)


def test_nan_is_allowed_and_refused_fit_fits_nothing():
    X = _data(n=50)
    for s in ["mean", "median", "most_frequent"]:
        assert_refused_fit_fits_nothing(DPSimpleImputer(bounds=B, strategy=s), X)
    assert_refused_fit_fits_nothing(DPSimpleImputer(), X)


def test_dp_statistics_are_accurate_and_all_missing_column_is_kept():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(2.0, 1.0, 50_000), rng.integers(0, 4, 50_000)])
    X[rng.random(50_000) < 0.3, 0] = np.nan
    X[:20_000, 1] = 3.0
    mean = DPSimpleImputer(bounds=(-5, 8), epsilon=1.0, random_state=0).fit(X).statistics_
    assert mean[0] == pytest.approx(2.0, abs=0.05)
    med = DPSimpleImputer(bounds=(-5, 8), strategy="median", random_state=0).fit(X).statistics_
    assert med[0] == pytest.approx(2.0, abs=0.05)
    mf = DPSimpleImputer(bounds=(0, 3), strategy="most_frequent", categories=[0, 1, 2, 3],
                         random_state=0).fit(X[:, 1:]).statistics_
    assert mf[0] == 3.0
    empty = np.full((30, 2), np.nan)
    out = DPSimpleImputer(bounds=(0, 1), random_state=0).fit_transform(empty)
    assert out.shape == (30, 2) and np.all((out >= 0) & (out <= 1))


def test_mean_noise_scale():
    # Column of 1000 observed zeros at midpoint 0 of (-1, 1): count and sum get Laplace(2/ε)
    # (k = 2 sums at ε/2; sensitivity 1 each), so the mean ≈ Laplace(2/ε)/1000: std √2·2/ε/1000.
    X = np.zeros((1000, 1))
    X = np.vstack([X, np.full((200, 1), np.nan)])
    means = np.array([DPSimpleImputer(bounds=(-1, 1), epsilon=1.0, random_state=s).fit(X)
                      .statistics_[0] for s in range(400)])
    # sample std of 400 Laplace draws: relative sd ≈ √(5/4)/√400 ≈ 5.6%; ±25% is > 4 sd.
    assert np.std(means) == pytest.approx(math.sqrt(2) * 2 / 1000, rel=0.25)


def test_gaussian_mean_is_one_joint_release():
    # 2d = 10 sums: the Gaussian adds less noise than the Laplace (z² < 2k/ε²).
    z = calibrate_noise_multiplier(0.9, 1e-5, accountant="rdp")
    est = DPSimpleImputer(bounds=B, epsilon=0.9, delta=1e-5)
    fitted = assert_charges_once(est, _data(d=5), expected_curve=gaussian_rdp(z),
                                 budget_epsilon=math.inf)
    # z is RDP-calibrated: the curve's RDP ε is 0.9; the tightest accountant reports less
    assert 0.89 < fitted.privacy_curve_.epsilon(1e-5) <= 0.9 * (1 + 1e-9) and fitted.delta_spent_ == 1e-5
    assert fitted.epsilon_spent_ == epsilon_of(fitted.privacy_curve_, 1e-5) < 0.9
    # 2d = 6 sums: the Laplace adds less, and δ > 0 changes nothing.
    X = _data(d=3)
    fitted = assert_charges_once(est, X, expected_curve=3 * _mean_curve(0.3, 0.0, 1),
                                 budget_epsilon=math.inf)
    assert fitted.privacy_curve_.epsilon(0.0) == pytest.approx(0.9, rel=1e-9)  # pure ε-DP
    # Other strategies stay pure ε-DP with delta > 0 (the same curve as delta = 0).
    med = DPSimpleImputer(bounds=B, strategy="median", epsilon=0.9, delta=1e-5)
    assert_charges_once(med, X, expected_curve=3 * _quantile_curve(0.3, 0.0, 1),
                        budget_epsilon=math.inf)
    inf = DPSimpleImputer(bounds=B, epsilon=math.inf, delta=1e-5).fit(X)
    np.testing.assert_allclose(inf.statistics_, SimpleImputer().fit(X).statistics_, atol=1e-8)


def test_gaussian_mean_noise_scale():
    # d = 20 columns of 1000 observed zeros (midpoint of (-1, 1)) and 200 NaN: each count and
    # sum gets N(0, (z·√(2d))²) (sensitivities 1 and h = 1), so a mean is ≈ N(0, (z√40/1000)²).
    d = 20
    X = np.vstack([np.zeros((1000, d)), np.full((200, d), np.nan)])
    z = calibrate_noise_multiplier(1.0, 1e-5, accountant="rdp")
    means = np.concatenate([DPSimpleImputer(bounds=(-1, 1), epsilon=1.0, delta=1e-5,
                                            random_state=s).fit(X).statistics_ for s in range(30)])
    # 600 normal draws: relative sd of the sample std ≈ 1/√1200 ≈ 2.9%; ±15% is > 5 sd.
    assert np.std(means) == pytest.approx(z * math.sqrt(2 * d) / 1000, rel=0.15)
    # The Laplace split at the same ε has std √2·2d/ε/1000 per mean: over twice as much.
    assert z * math.sqrt(2 * d) < 0.5 * math.sqrt(2) * 2 * d


def test_pandas_output():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(_data(), columns=["a", "b", "c"])
    out = DPSimpleImputer(bounds=B, random_state=0).set_output(transform="pandas").fit_transform(X)
    assert list(out.columns) == ["a", "b", "c"] and not out.isna().any().any()


@pytest.fixture(autouse=True)
def _secure_takes_seeds_here(monkeypatch):
    # secure=True refuses a seed; scikit-learn's checks and the seeded comparisons in this
    # file need one: secure fits here read seeded bytes (seeded_secure of tests/_testing.py).
    from _testing import seeded_secure

    seeded_secure(monkeypatch)
