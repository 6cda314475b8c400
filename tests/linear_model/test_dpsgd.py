"""Tests of DPSGDClassifier / DPSGDRegressor and of the DP-SGD engine's sampling and accounting."""

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression, LogisticRegression, SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import check_is_fitted

import skdp._dpsgd._engine as engine
import skdp.linear_model._dpsgd as dpsgd_module
from skdp import BudgetExceededError, PrivacyBudget
from skdp._dpsgd import dpsgd_privacy, dpsgd_schedule, poisson_batches
from skdp._dpsgd._engine import count_noise_multiplier
from skdp.stats._range import _bounds_curve
from skdp.accounting import (
    RDPCurve,
    calibrate_noise_multiplier,
    epsilon_of,
    gaussian_rdp,
    poisson_subsampled_gaussian_rdp,
)
from skdp.cli import main as cli_main
from skdp.linear_model import DPSGDClassifier, DPSGDRegressor
from _testing import (
    assert_bad_input_costs_nothing,
    assert_charges_once,
    assert_refused_fit_fits_nothing,
)

DELTA = 1e-5


def _blobs(n=600, n_features=4, n_classes=2, seed=0):
    X, y = make_classification(
        n_samples=n, n_features=n_features, n_informative=n_features, n_redundant=0,
        n_classes=n_classes, n_clusters_per_class=1, class_sep=1.5, random_state=seed,
    )
    return X / 4.0, y


# -- scikit-learn conformance ---------------------------------------------------------------
@parametrize_with_checks(
    [
        DPSGDClassifier(noise_multiplier=0.5, epsilon=None, random_state=0),
        # the default schedule: 100 steps per epoch whatever the size (the checks' data sets
        # have 20-300 rows), so 20 epochs are 2,000 small steps
        DPSGDClassifier(epsilon=math.inf, hidden_layer_sizes=(8,), random_state=0),
        DPSGDClassifier("modified_huber", epsilon=math.inf, random_state=0),
        # a public sampling rate: the divisor is batch_size, not q * n
        DPSGDClassifier(epsilon=math.inf, sampling_rate=0.5, batch_size=64, max_iter=100,
                        random_state=0),
        DPSGDRegressor(noise_multiplier=0.5, epsilon=None, bounds_y=(-5, 5), random_state=0),
        DPSGDRegressor(epsilon=math.inf, learning_rate=0.05, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# -- accounting ------------------------------------------------------------------------------
def test_reported_epsilon_equals_the_subsampled_gaussian_curve():
    X, y = _blobs(n=1000)
    clf = DPSGDClassifier(
        noise_multiplier=1.3, epsilon=None, delta=DELTA, batch_size=50, max_iter=3, random_state=0
    ).fit(X, y)
    q, _, steps = dpsgd_schedule(1000, 50, 3)
    assert (clf.sampling_rate_, clf.n_steps_) == (0.05, 60) == (q, steps)
    assert clf.noise_multiplier_ == 1.3
    expected = poisson_subsampled_gaussian_rdp(0.05, 1.3, 60)
    # the tightest valid epsilon of the curve (the smaller of RDP's and the PLD's)
    assert clf.epsilon_spent_ == epsilon_of(expected, DELTA) <= expected.epsilon(DELTA)
    assert clf.delta_spent_ == DELTA
    assert clf.privacy_curve_ == expected
    assert_charges_once(
        DPSGDClassifier(noise_multiplier=1.3, epsilon=None, batch_size=50, max_iter=3, random_state=0),
        X, y, expected_curve=expected,
    )


def test_reported_epsilon_equals_skdp_account(capsys):
    X, y = _blobs(n=1000)
    clf = DPSGDClassifier(epsilon=2.0, delta=DELTA, batch_size=50, max_iter=3, random_state=0,
                          noise_multiplier=None)
    clf.fit(X, y)
    q, steps = clf.sampling_rate_, clf.n_steps_
    # sigma is the calibrated one, and the epsilon spent is at most the target
    assert clf.noise_multiplier_ == calibrate_noise_multiplier(
        2.0, DELTA, sampling_rate=q, steps=steps, sampling="poisson"
    )
    assert clf.epsilon_spent_ <= 2.0
    assert clf.epsilon_spent_ == pytest.approx(2.0, rel=1e-3)
    # the command line's PLD gives the same epsilon for the same sigma, q and steps, and
    # its RDP an upper bound
    for accountant in ("pld", "rdp"):
        assert cli_main([
            "account", "--noise-multiplier", repr(clf.noise_multiplier_), "--sampling-rate",
            repr(q), "--steps", str(steps), "--delta", repr(DELTA), "--json",
            "--accountant", accountant,
        ]) == 0
        printed = json.loads(capsys.readouterr().out)
        if accountant == "pld":
            assert printed["epsilon"] == pytest.approx(clf.epsilon_spent_, rel=1e-9)
        else:
            assert printed["epsilon"] >= clf.epsilon_spent_


def test_noise_multiplier_with_epsilon_is_a_cap():
    X, y = _blobs(n=1000)
    budget = PrivacyBudget(100.0, DELTA)
    # sigma = 0.3 with q = 0.256 over 80 steps spends far more than epsilon = 1: refused, free
    clf = DPSGDClassifier(noise_multiplier=0.3, epsilon=1.0, budget=budget, random_state=0)
    with pytest.raises(ValueError, match="more than"):
        clf.fit(X, y)
    assert len(budget) == 0


def test_epsilon_inf_charges_non_private_and_adds_no_noise():
    X, y = _blobs()
    clf = assert_charges_once(
        DPSGDClassifier(epsilon=math.inf, random_state=0), X, y,
        budget_epsilon=math.inf, expected_curve=RDPCurve.non_private(),
    )
    assert clf.noise_multiplier_ == 0.0 and clf.epsilon_spent_ == math.inf
    # clip_norm is ignored: no clipping at epsilon = inf
    other = DPSGDClassifier(epsilon=math.inf, clip_norm=1e-6, random_state=0).fit(X, y)
    np.testing.assert_array_equal(other.coef_, clf.coef_)
    # a finite budget refuses a non-private fit
    assert_refused_fit_fits_nothing(DPSGDClassifier(epsilon=math.inf, random_state=0), X, y,
                                    budget_epsilon=10.0)


def test_multiclass_is_one_model_in_one_run():
    X, y = _blobs(n_classes=3)
    # the default schedule: q = 0.01, 20 epochs of 100 steps, and the noisy count
    sigma_count = count_noise_multiplier(2.0, 0.01, 2000)
    clf = assert_charges_once(
        DPSGDClassifier(noise_multiplier=2.0, epsilon=None, random_state=0), X, y,
        expected_curve=gaussian_rdp(sigma_count) + poisson_subsampled_gaussian_rdp(0.01, 2.0, 2000),
    )
    assert clf.coef_.shape == (3, 4) and clf.intercept_.shape == (3,)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


# -- Poisson sampling ------------------------------------------------------------------------
def test_batch_sizes_follow_binomial():
    n, q, steps = 300, 0.1, 5000
    sizes = np.array([idx.size for idx in poisson_batches(np.random.default_rng(0), n, q, steps)])
    # Chi-square goodness of fit to Binomial(n, q): one bin per size between the 1% and 99%
    # quantiles, the tails pooled into the end bins (every expected count >= 5). At a fixed
    # seed the p-value is one number; it must be above 1e-3.
    lo, hi = (int(stats.binom.ppf(p, n, q)) for p in (0.01, 0.99))
    probs = stats.binom.pmf(np.arange(lo, hi + 1), n, q)
    probs[0] = stats.binom.cdf(lo, n, q)
    probs[-1] = stats.binom.sf(hi - 1, n, q)
    observed = np.bincount(np.clip(sizes, lo, hi) - lo, minlength=hi - lo + 1)
    assert observed.sum() == steps and probs.sum() == pytest.approx(1.0)
    expected = probs * steps
    assert expected.min() >= 5
    p_value = stats.chisquare(observed, expected).pvalue
    assert p_value > 1e-3
    # every row is included with probability q: counts per row ~ Binomial(steps, q), whose
    # mean over 300 rows has std sqrt(q (1 - q) steps / n) ~ 1.2; allow 5 std
    counts = np.zeros(n)
    for idx in poisson_batches(np.random.default_rng(1), n, q, steps):
        assert np.all(np.diff(idx) > 0)  # no row twice in a batch
        counts[idx] += 1
    assert abs(counts.mean() - q * steps) < 5 * math.sqrt(q * (1 - q) * steps / n)
    assert counts.std() == pytest.approx(math.sqrt(q * (1 - q) * steps), rel=0.15)


def test_fit_uses_poisson_batches(monkeypatch):
    sizes = []

    def recording(rng, n, q, steps):
        for idx in poisson_batches(rng, n, q, steps):
            sizes.append(idx.size)
            yield idx

    monkeypatch.setattr(engine, "poisson_batches", recording)
    X, y = _blobs(n=1000)
    clf = DPSGDClassifier(noise_multiplier=1.0, epsilon=None, batch_size=100, max_iter=20,
                          random_state=0).fit(X, y)
    assert len(sizes) == clf.n_steps_ == 200
    # Binomial(1000, 0.1): mean 100, std 9.5; the mean of 200 sizes has std 0.67
    assert abs(np.mean(sizes) - 100) < 5 * 0.67
    assert np.std(sizes) == pytest.approx(math.sqrt(1000 * 0.1 * 0.9), rel=0.2)


# -- budget ----------------------------------------------------------------------------------
def test_unaffordable_fit_is_refused_and_fits_nothing():
    X, y = _blobs()
    assert_refused_fit_fits_nothing(
        DPSGDClassifier(noise_multiplier=1.0, epsilon=None, random_state=0), X, y, budget_epsilon=0.5
    )
    assert_refused_fit_fits_nothing(
        DPSGDRegressor(noise_multiplier=1.0, epsilon=None, bounds_y=(0, 1), random_state=0),
        X, y, budget_epsilon=0.5,
    )


def test_refit_refused_leaves_nothing_fitted():
    X, y = _blobs()
    clf = DPSGDClassifier(noise_multiplier=1.0, epsilon=None, random_state=0).fit(X, y)
    budget = PrivacyBudget(0.5, DELTA)
    with pytest.raises(BudgetExceededError):
        clf.set_params(budget=budget).fit(X, y)
    with pytest.raises(NotFittedError):
        clf.predict(X)
    assert len(budget) == 0


def test_failure_after_the_charge_keeps_the_charge(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("training failed")

    monkeypatch.setattr(dpsgd_module, "run_dpsgd", broken)
    X, y = _blobs()
    budget = PrivacyBudget(100.0, DELTA)
    clf = DPSGDClassifier(noise_multiplier=1.0, epsilon=None, budget=budget, random_state=0)
    with pytest.raises(RuntimeError, match="training failed"):
        clf.fit(X, y)
    assert len(budget) == 1
    assert budget.spent()[0] > 0
    with pytest.raises(NotFittedError):
        check_is_fitted(clf)


# -- bad input costs nothing -----------------------------------------------------------------
def test_bad_input_costs_nothing():
    X, y = _blobs(n=100)
    X_nan, X_inf = X.copy(), X.copy()
    X_nan[3, 1] = np.nan
    X_inf[5, 0] = np.inf
    common = dict(
        bad_params=[
            {"epsilon": 0.0}, {"epsilon": -1.0}, {"epsilon": math.nan}, {"delta": 1.0},
            {"delta": 0.0}, {"delta": -0.1}, {"batch_size": 101}, {"batch_size": 0},
            {"noise_multiplier": 0.0}, {"noise_multiplier": -1.0}, {"clip_norm": 0.0},
            {"max_iter": 0}, {"learning_rate": 0.0}, {"hidden_layer_sizes": (0,)},
            {"activation": "sigmoid"}, {"optimizer": "rmsprop"}, {"schedule": "adaptive"},
            {"alpha": -1.0}, {"momentum": 1.0},
        ],
        bad_data=[(X_nan, y), (X_inf, y), (sp.csr_matrix(X), y), (X[:, :, None], y)],
    )
    assert_bad_input_costs_nothing(
        DPSGDClassifier(epsilon=1.0, random_state=0), X, y,
        bad_params=common["bad_params"] + [{"loss": "squared_error"}, {"classes": [0]}],
        bad_data=common["bad_data"] + [(X, np.zeros(100)), (X, np.linspace(0, 1, 100))],
    )
    assert_bad_input_costs_nothing(
        DPSGDRegressor(epsilon=1.0, bounds_y=(0, 1), random_state=0), X, y.astype(float),
        bad_params=common["bad_params"] + [
            {"loss": "hinge"}, {"bounds_y": (1, 0)}, {"bounds_y": (0, np.inf)},
            {"huber_threshold": 0.0},
        ],
        bad_data=common["bad_data"] + [(X, np.full(100, np.nan))],
    )


def test_sparse_input_error_is_clear():
    X, y = _blobs(n=100)
    with pytest.raises(TypeError, match="dense data is required"):
        DPSGDClassifier(epsilon=1.0).fit(sp.csr_matrix(X), y)


def test_unknown_labels_with_public_classes():
    X, y = _blobs(n=100)
    with pytest.raises(ValueError, match="not in classes"):
        DPSGDClassifier(epsilon=math.inf, classes=[0, 2]).fit(X, y)
    # public classes may include labels that the data lacks: one run, three outputs
    clf = DPSGDClassifier(epsilon=math.inf, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert clf.classes_.tolist() == [0, 1, 2] and clf.coef_.shape == (3, 4)


# -- epsilon = inf matches scikit-learn --------------------------------------------------------
def test_linear_epsilon_inf_matches_sklearn():
    X, y = _blobs(n=4000, n_features=8, seed=1)
    X = X + np.random.default_rng(1).normal(scale=0.3, size=X.shape)  # overlapping classes
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=0)
    ours = DPSGDClassifier(epsilon=math.inf, learning_rate=0.05, random_state=0)
    ours = ours.fit(X_tr, y_tr).score(X_te, y_te)
    logreg = LogisticRegression().fit(X_tr, y_tr).score(X_te, y_te)
    sgd = SGDClassifier(loss="log_loss", random_state=0).fit(X_tr, y_tr).score(X_te, y_te)
    # "within 0.5 points": not worse than either by more than 0.005 accuracy on 2000 test rows
    assert ours >= max(logreg, sgd) - 0.005, (ours, logreg, sgd)


def test_regressor_epsilon_inf_matches_sklearn():
    X, y = make_regression(n_samples=2000, n_features=5, noise=5.0, random_state=0)
    X /= 3.0
    ref = LinearRegression().fit(X, y)
    # with public bounds, targets are rescaled to [-1, 1] and predictions mapped back
    bounded = DPSGDRegressor(epsilon=math.inf, bounds_y=(-400, 400), max_iter=50,
                             random_state=0).fit(X, y)
    assert bounded.score(X, y) >= ref.score(X, y) - 0.005


def test_private_fit_learns():
    X, y = _blobs(n=5000, seed=2)
    clf = DPSGDClassifier(noise_multiplier=1.0, epsilon=None, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.85
    for loss in ("hinge", "modified_huber"):
        clf = DPSGDClassifier(loss, noise_multiplier=1.0, epsilon=None, random_state=0).fit(X, y)
        assert clf.score(X, y) > 0.85
    assert not hasattr(DPSGDClassifier("hinge"), "predict_proba")


def test_regressor_without_bounds_needs_a_finite_epsilon():
    X, y = make_regression(n_samples=200, n_features=3, random_state=0)
    for params in ({"epsilon": math.inf, "noise_multiplier": 1.0},
                   {"epsilon": None, "noise_multiplier": 1.0}):
        budget = PrivacyBudget(1e6, DELTA)
        with pytest.raises(ValueError, match="bounds_y"):
            DPSGDRegressor(budget=budget, **params).fit(X, y)
        assert len(budget) == 0


def test_regressor_private_target_bounds_are_in_the_one_charge():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(20000, 3))
    y = 50.0 + 20.0 * (X @ [1.0, -1.0, 0.5]) + rng.normal(0, 1, 20000)  # in about [10, 90]
    budget = PrivacyBudget(1e6, DELTA)
    reg = DPSGDRegressor(epsilon=1.0, delta=DELTA, budget=budget, random_state=0).fit(X, y)
    # a tenth of epsilon on the target's bounds, then the count and the steps, one charge
    fixed = _bounds_curve(0.1, DELTA, 1)
    sigma = reg.noise_multiplier_
    expected = fixed + (gaussian_rdp(count_noise_multiplier(sigma, 0.01, 2000))
                        + poisson_subsampled_gaussian_rdp(0.01, sigma, 2000))
    assert len(budget) == 1 and budget.ledger[0].curve == expected
    assert reg.epsilon_spent_ <= 1.0 and reg.epsilon_spent_ == pytest.approx(1.0, rel=5e-3)
    # power-of-two bins: the released range holds the bulk of y, within a factor 2 or so
    lo, hi = reg.bounds_y_
    assert 0 < lo <= np.quantile(y, 0.01) and np.quantile(y, 0.99) <= hi <= 256
    assert reg.score(X, y) > 0.9
    # at epsilon = inf without bounds: the exact range, and scikit-learn's fit
    exact = DPSGDRegressor(epsilon=math.inf, random_state=0).fit(X, y)
    assert exact.bounds_y_ == (y.min(), y.max())
    assert exact.score(X, y) >= LinearRegression().fit(X, y).score(X, y) - 0.01


# -- sampling_rate: nothing released depends on the private number of rows --------------------
def _neighbours(n, seed=0):
    """D with n rows and D' = D plus one extreme row (add/remove adjacency)."""
    X, y = _blobs(n=n, seed=seed)
    return (X, y), (np.vstack([X, np.full((1, X.shape[1]), 50.0)]), np.r_[y, 1])


@pytest.mark.parametrize("batch_size", ["auto", 40])
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_sampling_rate_charge_and_attributes_do_not_depend_on_n(kind, batch_size):
    # n = 120 < 256, so an "auto" batch size of min(256, n) would differ on D and D'.
    (X, y), (Xn, yn) = _neighbours(120)
    params = dict(epsilon=1.0, delta=DELTA, sampling_rate=0.1, batch_size=batch_size,
                  max_iter=2, random_state=0)
    if kind == "classifier":
        est = DPSGDClassifier(**params)
    else:
        est = DPSGDRegressor(bounds_y=(0, 1) if batch_size != "auto" else None, **params)
    fitted, budgets = [], []
    for Xd, yd in [(X, y), (Xn, yn)]:
        budget = PrivacyBudget(1e6, DELTA)
        fitted.append(clone(est).set_params(budget=budget).fit(Xd, yd))
        budgets.append(budget)
    a, b = fitted
    # the values come from the public parameters alone: q = 0.1, 2 epochs of round(1/q) steps,
    # sigma calibrated for them (and for the noisy count with "auto")
    count = batch_size == "auto"
    sigma, _, curve = dpsgd_privacy(0.1, 20, epsilon=1.0, delta=DELTA, count=count,
                                    fixed=_bounds_curve(0.1, DELTA, 1) if kind == "regressor" and count else None)
    for est_fit in (a, b):
        assert est_fit.sampling_rate_ == 0.1
        assert est_fit.n_steps_ == 20
        assert est_fit.noise_multiplier_ == sigma
        assert est_fit.privacy_curve_ == curve
    if count:
        # the divisor is q times the noisy count: the same noise draw on D and D' (one seed)
        # moves it by q for the one added row, as the Gaussian count release allows
        assert b.batch_size_ - a.batch_size_ == pytest.approx(0.1)
    else:
        assert a.batch_size_ == b.batch_size_ == batch_size
    assert a.privacy_curve_ == b.privacy_curve_
    assert (a.epsilon_spent_, a.delta_spent_) == (b.epsilon_spent_, b.delta_spent_)
    assert [len(bud) for bud in budgets] == [1, 1]
    assert budgets[0].ledger[0].label == budgets[1].ledger[0].label
    assert budgets[0].ledger[0].curve == budgets[1].ledger[0].curve


def test_sampling_rate_trains_with_public_divisor(monkeypatch):
    # run_dpsgd gets q, the steps and the divisor from public parameters on D and on D'
    calls = []

    def recording(*args, **kwargs):
        calls.append({k: kwargs[k] for k in ("sampling_rate", "expected_batch_size", "n_steps",
                                             "steps_per_epoch", "noise_multiplier")})
        return engine.run_dpsgd(*args, **kwargs)

    monkeypatch.setattr(dpsgd_module, "run_dpsgd", recording)
    (X, y), (Xn, yn) = _neighbours(300)
    for Xd, yd in [(X, y), (Xn, yn)]:
        DPSGDClassifier(epsilon=1.0, delta=DELTA, sampling_rate=0.25, batch_size=75, max_iter=1,
                        random_state=0).fit(Xd, yd)
    assert calls[0] == calls[1]
    assert calls[0]["sampling_rate"] == 0.25 and calls[0]["expected_batch_size"] == 75
    assert calls[0]["n_steps"] == calls[0]["steps_per_epoch"] == 4


def test_sampling_rate_batch_size_is_not_checked_against_n():
    # a batch_size above n must not raise with sampling_rate: the error would reveal n
    X, y = _blobs(n=100)
    clf = DPSGDClassifier(epsilon=1.0, delta=DELTA, sampling_rate=0.5, batch_size=1000,
                          max_iter=1, random_state=0).fit(X, y)
    assert clf.batch_size_ == 1000 and clf.n_steps_ == 2


def test_int_batch_size_without_sampling_rate_treats_n_as_public():
    # The documented convention of an int batch_size alone (q = batch_size / n): neighbouring
    # data sets get different q and sigma. This test pins that documented behaviour.
    (X, y), (Xn, yn) = _neighbours(300)
    a = DPSGDClassifier(epsilon=1.0, delta=DELTA, batch_size=256, max_iter=1, random_state=0).fit(X, y)
    b = DPSGDClassifier(epsilon=1.0, delta=DELTA, batch_size=256, max_iter=1, random_state=0).fit(Xn, yn)
    assert (a.sampling_rate_, b.sampling_rate_) == (256 / 300, 256 / 301)
    assert a.noise_multiplier_ != b.noise_multiplier_


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_default_schedule_does_not_depend_on_n(kind):
    # By default q = 0.01, 100 steps per epoch and sigma come from public parameters; only
    # the divisor follows n, through the noisy count (add/remove: it moves by q on D').
    (X, y), (Xn, yn) = _neighbours(500)
    est = DPSGDClassifier if kind == "classifier" else DPSGDRegressor
    a = est(epsilon=1.0, max_iter=2, random_state=3).fit(X, y)
    b = est(epsilon=1.0, max_iter=2, random_state=3).fit(Xn, yn)
    assert a.sampling_rate_ == b.sampling_rate_ == 0.01
    assert a.n_steps_ == b.n_steps_ == 200
    assert a.noise_multiplier_ == b.noise_multiplier_
    assert a.privacy_curve_ == b.privacy_curve_
    # sigma is calibrated to 0.1% (the tightest accountant's epsilon, within 0.5% of the target)
    assert a.epsilon_spent_ <= 1.0 and a.epsilon_spent_ == pytest.approx(1.0, rel=5e-3)
    assert b.batch_size_ - a.batch_size_ == pytest.approx(0.01)


def test_default_divisor_is_q_times_a_noisy_count():
    # The count's noise is N(0, sigma_c^2) with the sigma_c of the curve: over seeds, the
    # divisor / q - n has that standard deviation (40 seeds: a chi-square bound at 1e-3).
    X, y = _blobs(n=400)
    draws = np.array([
        DPSGDClassifier(epsilon=1.0, max_iter=1, random_state=s).fit(X, y).batch_size_ / 0.01 - 400
        for s in range(40)
    ])
    sigma_c = count_noise_multiplier(
        DPSGDClassifier(epsilon=1.0, max_iter=1, random_state=0).fit(X, y).noise_multiplier_,
        0.01, 100)
    ratio = np.sum(draws**2) / sigma_c**2  # ~ chi-square with 40 degrees of freedom
    assert 17.9 < ratio < 73.4


@pytest.mark.parametrize("value", [0.0, -0.1, 1.5, math.nan, math.inf])
def test_bad_sampling_rate_costs_nothing(value):
    X, y = _blobs(n=100)
    assert_bad_input_costs_nothing(
        DPSGDClassifier(epsilon=1.0, random_state=0), X, y, bad_params=[{"sampling_rate": value}]
    )
    with pytest.raises(ValueError, match="sampling_rate"):
        DPSGDClassifier(epsilon=1.0, sampling_rate=value).fit(X, y)


def test_sampling_rate_string_is_a_type_error():
    X, y = _blobs(n=100)
    with pytest.raises(TypeError, match="sampling_rate"):
        DPSGDRegressor(epsilon=1.0, bounds_y=(0, 1), sampling_rate="0.1").fit(X, y)


def test_noisy_sum_is_divided_by_the_given_expected_batch_size():
    # One step of plain SGD (lr 1, no momentum, no noise, q = 1 so the batch is every row):
    # the update is minus the gradient sum over the rows divided by expected_batch_size,
    # whatever the number of rows.
    from skdp._dpsgd import DenseNetwork, clipped_gradient_sum, make_loss

    X, y = _blobs(n=50)
    Y = y[:, None].astype(float)
    loss = make_loss("log_loss_binary")
    net = DenseNetwork((4, 1), "relu", np.random.default_rng(0))
    start = net.params.copy()
    expected = -clipped_gradient_sum(net, loss, X, Y, None) / 7.0
    engine.run_dpsgd(net, loss, X, Y, rng=np.random.default_rng(1), sampling_rate=1.0,
                     expected_batch_size=7, n_steps=1, steps_per_epoch=1, noise_multiplier=0.0,
                     clip_norm=None, optimizer="sgd", momentum=0.0, learning_rate=1.0)
    np.testing.assert_allclose(net.params - start, expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("count, fixed", [(True, None), (True, "bounds")])
def test_calibrated_noise_multiplier_is_on_the_safe_side_of_the_boundary(count, fixed):
    # the σ returned meets (ε, δ) by the tightest accountant, and σ one rtol lower does not
    from skdp import accounting
    from skdp._dpsgd._engine import _run_curve, _smallest_noise_multiplier

    fixed = _bounds_curve(0.1, DELTA, 1) if fixed else None
    rtol = 1e-3
    sigma = _smallest_noise_multiplier(1.0, DELTA, 0.05, 40, count=count, fixed=fixed, rtol=rtol)

    def spent(s):
        return accounting.epsilon_of(_run_curve(0.05, 40, s, count=count, fixed=fixed), DELTA)

    assert spent(sigma) <= 1.0 < spent(sigma / (1 + 2 * rtol))


def test_calibration_without_a_fixed_part_is_remembered():
    # a search asks the same public question once per candidate: it is answered once
    from skdp._dpsgd._engine import _cached_noise_multiplier, _smallest_noise_multiplier

    _cached_noise_multiplier.cache_clear()
    first = _smallest_noise_multiplier(0.7, DELTA, 0.05, 20, count=True, fixed=None)
    again = _smallest_noise_multiplier(0.7, DELTA, 0.05, 20, count=True, fixed=None)
    info = _cached_noise_multiplier.cache_info()
    assert first == again and (info.hits, info.misses) == (1, 1)
