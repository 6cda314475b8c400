import math
import warnings

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp import PrivacyBudget, PrivacyLeakWarning, stats
from skdp.accounting import RDPCurve, calibrate_noise_multiplier, epsilon_of, gaussian_rdp
from skdp.naive_bayes import DPGaussianNB
from skdp.naive_bayes import _gaussian
from skdp.stats import _range
from skdp.stats._sums import _var_curve
from _testing import (
    assert_bad_input_costs_nothing,
    assert_charges_once,
    assert_refused_fit_fits_nothing,
    assert_same_curve,
)

B = (-10.0, 10.0)


def _expected_failed(est):
    if est.epsilon == math.inf:
        return {}
    if est.bounds is None:
        return {"check_classifiers_train": "asks accuracy > 0.83 on 200 and 300 rows of 2 "
                "features; at epsilon=1 the bins of the private bounds hold too few rows to "
                "stand out of their noise and the bounds shrink or drop a feature "
                "(test_default_fit_is_accurate_and_predict_clips_to_its_bounds checks "
                "accuracy on enough rows)"}
    return {"check_classifiers_train": "asks accuracy > 0.83 on 200 and 300 rows; the noise of an "
            "epsilon=1 fit with bounds (-10, 10) is too large on so few rows "
            "(test_dp_fit_is_accurate checks accuracy on enough rows)"}


@parametrize_with_checks(
    [DPGaussianNB(bounds=B, epsilon=math.inf), DPGaussianNB(bounds=B, random_state=0),
     DPGaussianNB(bounds=B, delta=1e-5, random_state=0),
     DPGaussianNB(bounds=B, secure=True, random_state=0),
     DPGaussianNB(), DPGaussianNB(epsilon=math.inf), DPGaussianNB(secure=True, delta=0.0)],
    expected_failed_checks=_expected_failed,
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the checks use classes=None
        check(estimator)


def _data(n=600, d=3, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.normal(y[:, None] * 1.5, 1.0 + 0.3 * np.arange(d), size=(n, d))
    return X, y


def test_epsilon_inf_matches_sklearn():
    X, y = _data()
    ours = DPGaussianNB(bounds=(-50, 50), epsilon=math.inf, classes=[0, 1, 2]).fit(X, y)
    ref = GaussianNB().fit(X, y)
    for name in ["theta_", "var_", "class_prior_", "class_count_", "epsilon_"]:
        np.testing.assert_allclose(getattr(ours, name), getattr(ref, name), rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    pri = DPGaussianNB(bounds=(-50, 50), epsilon=math.inf, classes=[0, 1, 2],
                       priors=[0.2, 0.3, 0.5], var_smoothing=1e-3).fit(X, y)
    ref = GaussianNB(priors=[0.2, 0.3, 0.5], var_smoothing=1e-3).fit(X, y)
    np.testing.assert_allclose(pri.predict_log_proba(X), ref.predict_log_proba(X), atol=1e-8)


def test_charges_once_with_its_curve():
    X, y = _data(d=3)
    est = DPGaussianNB(bounds=B, epsilon=0.8, delta=0.0, classes=[0, 1, 2])
    # One release of 2d + 1 = 7 sums per class (count inside), classes in parallel.
    curve = _var_curve(0.8, 0.0, 3)
    fitted = assert_charges_once(est, X, y, expected_curve=curve)
    assert fitted.epsilon_spent_ == pytest.approx(0.8, rel=1e-9)
    assert fitted.delta_spent_ == 0.0
    # δ > 0 with 7 sums: the Laplace adds less noise (z² ≥ 2k/ε²), so the same pure curve.
    fitted = assert_charges_once(est.set_params(delta=1e-5), X, y, expected_curve=curve)
    assert fitted.privacy_curve_.epsilon(0.0) == pytest.approx(0.8, rel=1e-9)  # pure ε-DP
    # δ > 0 with 2d + 1 = 11 sums: one Gaussian vector per class,
    # z = calibrate_noise_multiplier(0.8, 1e-5).
    X, y = _data(d=5)
    z = calibrate_noise_multiplier(0.8, 1e-5, accountant="rdp")
    fitted = assert_charges_once(est, X, y, expected_curve=gaussian_rdp(z))
    # calibrated by RDP (the statistics' noise is), reported by the budget's tightest accountant
    assert fitted.privacy_curve_.epsilon(1e-5) == pytest.approx(0.8, rel=1e-4)
    assert fitted.epsilon_spent_ == pytest.approx(epsilon_of(gaussian_rdp(z), 1e-5), rel=1e-9)
    assert fitted.epsilon_spent_ <= 0.8 * (1 + 1e-9)
    assert fitted.delta_spent_ == 1e-5
    assert math.isinf(fitted.privacy_curve_.epsilon(0.0))  # approximate, not pure, DP
    assert_charges_once(est.set_params(epsilon=math.inf), X, y,
                        expected_curve=RDPCurve.non_private(), budget_epsilon=math.inf)


def test_classes_none_warns_of_the_leak_and_classes_given_does_not():
    X, y = _data(n=100)
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        DPGaussianNB(bounds=B, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf = DPGaussianNB(bounds=B, classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    assert clf.classes_.tolist() == [0, 1, 2, 3]  # a public class absent from y is kept
    # The shared check_classes: repeated public labels are dropped (as scikit-learn does),
    # a label of y outside classes raises without echoing it, and one class is a valid model.
    clf = DPGaussianNB(bounds=B, classes=[2, 0, 0, 1], random_state=0).fit(X, y)
    assert clf.classes_.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="not in classes"):
        DPGaussianNB(bounds=B, classes=[0, 1], random_state=0).fit(X, y)
    one = DPGaussianNB(bounds=B, classes=[7], random_state=0).fit(X, np.full(100, 7))
    assert one.predict(X[:3]).tolist() == [7, 7, 7]
    # epsilon=inf releases nothing private, so it has no leak to warn of.
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        DPGaussianNB(bounds=B, epsilon=math.inf).fit(X, y)


def test_bad_input_costs_nothing():
    X, y = _data(n=60)
    X_nan = X.copy()
    X_nan[1, 1] = np.nan
    assert_bad_input_costs_nothing(
        DPGaussianNB(bounds=B, classes=[0, 1, 2]), X, y,
        bad_params=[{"bounds": (2.0, -2.0)}, {"bounds": (0, np.nan)}, {"epsilon": 0.0},
                    {"epsilon": -1.0}, {"classes": [0, 1]}, {"classes": []},
                    {"secure": "yes"}, {"secure": 1},
                    {"priors": [0.5, 0.5]}, {"priors": [0.5, 0.6, -0.1]},
                    {"var_smoothing": -1.0}, {"delta": 1.0}, {"delta": -1e-5},
                    {"delta": float("nan")}],
        bad_data=[(X_nan, y), (X, y[:-1]), (X, y.astype(float) + 0.5)],
    )


def test_refused_fit_fits_nothing():
    X, y = _data(n=60)
    assert_refused_fit_fits_nothing(DPGaussianNB(bounds=B, classes=[0, 1, 2]), X, y)
    assert_refused_fit_fits_nothing(DPGaussianNB(classes=[0, 1, 2]), X, y)


# -- without public bounds: private bounds in the fit's one charge -----------------------
def test_default_charges_once_with_the_documented_curve():
    X, y = _data(d=5)
    for delta in (0.0, 1e-5):
        est = DPGaussianNB(epsilon=0.8, delta=delta, classes=[0, 1, 2])
        eps_b, eps_s, curve = _range.split_curve(
            0.8, delta, 5, lambda e: _var_curve(e, delta, 5))
        assert eps_b == pytest.approx(0.8 * _range.BOUNDS_EPSILON_SHARE)
        assert_same_curve(curve, _range._bounds_curve(eps_b, delta, 5)
                          + _var_curve(eps_s, delta, 5))
        fitted = assert_charges_once(est, X, y, expected_curve=curve)
        assert fitted.epsilon_spent_ <= 0.8 * (1 + 1e-12)
        if delta == 0:
            assert fitted.epsilon_spent_ == pytest.approx(0.8, rel=1e-9)
    # bad input without bounds costs nothing either
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    assert_bad_input_costs_nothing(DPGaussianNB(classes=[0, 1, 2]), X, y,
                                   bad_params=[{"epsilon": 0.0}, {"classes": [0, 1]}],
                                   bad_data=[(X_nan, y)])


def test_default_fit_is_accurate_and_predict_clips_to_its_bounds():
    X, y = _data(n=30_000)
    clf = DPGaussianNB(classes=[0, 1, 2], random_state=0).fit(X, y)
    ref = GaussianNB().fit(X, y)
    assert clf.score(X, y) > ref.score(X, y) - 0.01
    lower, upper = clf.bounds_
    assert np.all(lower <= np.quantile(X, 0.01, axis=0))
    assert np.all(upper >= np.quantile(X, 0.99, axis=0))
    # the model is one of clipped rows: a row far outside is predicted as its clipped self
    far = np.array([[1e6, -1e6, 1e6]])
    np.testing.assert_allclose(clf.predict_proba(far),
                               clf.predict_proba(np.clip(far, lower, upper)))


def test_default_at_epsilon_inf_matches_sklearn_without_bounds():
    X, y = _data()
    X = X * 1e4  # no bounds are given or needed
    ours = DPGaussianNB(epsilon=math.inf).fit(X, y)
    ref = GaussianNB().fit(X, y)
    for name in ["theta_", "var_", "class_prior_", "class_count_", "epsilon_"]:
        np.testing.assert_allclose(getattr(ours, name), getattr(ref, name), rtol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-10)
    assert np.all(np.isinf(ours.bounds_[0])) and np.all(np.isinf(ours.bounds_[1]))


def test_dp_fit_is_accurate():
    X, y = _data(n=30_000)
    clf = DPGaussianNB(bounds=(-5, 10), epsilon=1.0, classes=[0, 1, 2], random_state=0)
    ref = GaussianNB().fit(X, y)
    assert clf.fit(X, y).score(X, y) > ref.score(X, y) - 0.01
    np.testing.assert_allclose(clf.theta_, ref.theta_, atol=0.05)


def test_count_noise_scale():
    # Class counts get Laplace noise of scale (2d + 1)/ε: the count is one of the 2d + 1
    # sums of its class's release, ε/(2d + 1) each.
    X = np.zeros((100, 1))
    y = np.zeros(100, dtype=int)
    y[:50] = 1
    counts = np.array([DPGaussianNB(bounds=(-1, 1), epsilon=2.0, classes=[0, 1], random_state=s)
                       .fit(X, y).class_count_ for s in range(300)])
    # scale 3/2 ≪ 50, so flooring at 0 never acts; std of Laplace(1.5) is 1.5√2. Over 600
    # draws the sample std is within ±20% of it (relative sd ≈ √(5/4)/√600 ≈ 4.6%).
    assert np.std(counts - 50) == pytest.approx(1.5 * math.sqrt(2), rel=0.2)


def test_gaussian_noise_scale_is_joint_over_features():
    # δ > 0: noise std z·√(2d + 1) on the count (sensitivity 1): √d scaling, not d.
    d = 20
    X = np.zeros((200, d))
    y = np.repeat([0, 1], 100)
    z = calibrate_noise_multiplier(1.0, 1e-5, accountant="rdp")
    counts = np.array([DPGaussianNB(bounds=(-1, 1), epsilon=1.0, delta=1e-5, classes=[0, 1],
                                    random_state=s).fit(X, y).class_count_ for s in range(300)])
    # std z·√41 ≈ 26 ≪ 100: the floor at 0 acts with probability < 1e-4 per draw. Sample std
    # of 600 normal draws: relative sd 1/√1200 ≈ 2.9%; ±15% is > 5 sd.
    assert np.std(counts - 100) == pytest.approx(z * math.sqrt(2 * d + 1), rel=0.15)
    # Laplace at the same ε has std √2·(2d + 1)/ε ≈ 58, over twice as much at d = 20.
    assert z * math.sqrt(2 * d + 1) < 0.5 * math.sqrt(2) * (2 * d + 1)


def test_variances_are_floored_at_their_noise_level():
    # A constant feature has variance 0; the released variance is at least the std of its
    # own noise. Its σ₂ term alone, (scale of Σ(y² − h²/2))·√2/ñ for Laplace, is
    # (h²/2)·(2d + 1)/ε·√2/ñ with h = 1, d = 1, ε = 1: 1.5·√2/ñ, ñ the noisy count.
    X = np.zeros((1000, 1))
    y = np.zeros(1000, dtype=int)
    for s in range(20):
        clf = DPGaussianNB(bounds=(-1, 1), epsilon=1.0, classes=[0], random_state=s).fit(X, y)
        floor = 1.5 * math.sqrt(2) / max(clf.class_count_[0], 1.0)
        assert clf.var_[0, 0] >= floor * (1 - 1e-12)
        assert clf.var_[0, 0] <= 1.0 + clf.epsilon_


@pytest.mark.parametrize("delta, gaussian", [(0.0, False), (1e-5, False), (1e-2, True)])
def test_variance_floor_is_the_delta_method_std(delta, gaussian):
    # v = S₂/ñ + h²/2 − (S₁/ñ)²: its first-order noise std from the three sums' noise stds
    # σ₀ (count), σ₀·h (Σy) and σ₀·h²/2 (Σ(y² − h²/2)), computed here by hand.
    h = np.array([0.5, 2.0, 1.0])
    mean_y = np.array([-0.5, 0.3, 0.0])
    var = np.array([0.0, 0.01, 0.9])
    count, eps, k = 400.0, 2.0, 7
    # The noise of the 7 sums: Laplace (std √2·k/ε) unless the Gaussian adds less
    # (z² < 2k/ε²: at ε = 2 with δ = 1e-2, not with δ = 1e-5).
    z = calibrate_noise_multiplier(eps, delta, accountant="rdp") if delta else math.inf
    assert (z * z < 2 * k / eps**2) == gaussian
    sigma0 = z * math.sqrt(k) if gaussian else math.sqrt(2) * k / eps
    s = np.array([sigma0 * math.sqrt((hj**2 / 2) ** 2 + (2 * m * hj) ** 2
                                     + (m**2 - v + hj**2 / 2) ** 2) / count
                  for hj, m, v in zip(h, mean_y, var)])
    got = _gaussian._floor_variance(var, mean_y, h, count, epsilon=eps, delta=delta)
    np.testing.assert_allclose(got, np.minimum(np.maximum(var, s), h**2), rtol=1e-12)
    assert got[0] > 0 and got[2] == 0.9  # a zero variance is lifted; a large one is kept


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_secure_charges_the_stats_secure_curve_once(delta):
    # secure=True charges what skdp.stats.var(secure=True) charges for d columns: discrete
    # Laplace (k·pure_dp_rdp(ε/k)) or discrete Gaussian (zCDP) curve, once per fit.
    X, y = _data(n=300, d=5)  # 11 sums: with δ > 0 the Gaussian adds less noise
    stats_budget = PrivacyBudget(1e6, 1e-5)
    stats.var(X, axis=0, epsilon=0.7, delta=delta, bounds=B, secure=True,
              budget=stats_budget, random_state=0)
    expected = stats_budget.ledger[0].curve
    assert_same_curve(expected, _var_curve(0.7, delta, 5, secure=True))
    est = DPGaussianNB(bounds=B, epsilon=0.7, delta=delta, classes=[0, 1, 2], secure=True,
                       random_state=0)
    fitted = assert_charges_once(est, X, y, expected_curve=expected)
    assert fitted.epsilon_spent_ <= 0.7 * (1 + 1e-9)
    assert fitted.delta_spent_ == delta
    # The discrete mechanisms' curve, not the floating-point one's.
    assert fitted.privacy_curve_.mechanism.split("(")[0].split()[-1] == (
        "pure_dp" if delta == 0 else "zcdp")


def test_secure_fit_is_accurate_and_releases_integer_counts():
    X, y = _data(n=30_000)
    ref = GaussianNB().fit(X, y)
    for delta in (0.0, 1e-5):
        clf = DPGaussianNB(bounds=(-5, 10), epsilon=1.0, delta=delta, classes=[0, 1, 2],
                           secure=True, random_state=0).fit(X, y)
        # Exact discrete noise on the integer count: the released class counts are integers.
        np.testing.assert_array_equal(clf.class_count_, np.round(clf.class_count_))
        # Mean noise: Laplace std √2·7.5·7/ε ≈ 74 on a sum over ~10,000 rows → ≈ 0.007,
        # so 0.05 is > 5 sd; accuracy as in test_dp_fit_is_accurate.
        np.testing.assert_allclose(clf.theta_, ref.theta_, atol=0.05)
        assert clf.score(X, y) > ref.score(X, y) - 0.01
    float_counts = DPGaussianNB(bounds=(-5, 10), epsilon=1.0, classes=[0, 1, 2],
                                random_state=0).fit(X, y).class_count_
    assert np.any(float_counts != np.round(float_counts))  # the float path is continuous


@pytest.fixture(autouse=True)
def _secure_takes_seeds_here(monkeypatch):
    # secure=True refuses a seed; scikit-learn's checks and the seeded comparisons in this
    # file need one: secure fits here read seeded bytes (seeded_secure of tests/_testing.py).
    from _testing import seeded_secure

    seeded_secure(monkeypatch)
