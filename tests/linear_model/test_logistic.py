"""Tests of DPLogisticRegression (noisy full-batch gradient descent)."""

import math
import re

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.exceptions import NotFittedError

from skdp import BudgetExceededError, PrivacyBudget
from skdp.accounting import RDPCurve, calibrate_noise_multiplier, gaussian_rdp
from skdp.datasets import adult_preprocessor, adult_schema, load_adult
from skdp.linear_model import DPLogisticRegression
from skdp.linear_model._logistic import _auto_steps
from skdp.linear_model._row_norm import calibrate_gaussian_after, clip_row_norms, norm_estimate_curve
from _testing import (
    assert_bad_input_costs_nothing,
    assert_charges_once,
    assert_refused_fit_fits_nothing,
)


@parametrize_with_checks(
    [
        DPLogisticRegression(epsilon=math.inf, random_state=0),
        DPLogisticRegression(epsilon=1e4, data_norm=10.0, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _blobs(n=2000, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    centers = rng.normal(size=(n_classes, 4))
    X = centers[y] + 0.5 * rng.normal(size=(n, 4))
    X /= np.linalg.norm(X, axis=1).max()  # scaled for the doctest-free tests only
    return X, y


def test_charges_the_documented_curve_once():
    X, y = _blobs()
    est = DPLogisticRegression(epsilon=0.5, delta=1e-6, data_norm=1.0, random_state=0)
    sigma = calibrate_noise_multiplier(0.5, 1e-6)
    # One Gaussian of multiplier σ split between the count (5% of 1/σ²) and the gradients.
    expected = gaussian_rdp(sigma / math.sqrt(0.05)) + gaussian_rdp(sigma / math.sqrt(0.95))
    fitted = assert_charges_once(est, X, y, expected_curve=expected, delta=1e-6)
    # Each of the T steps has multiplier σ_g·√T, so the T steps together cost σ_g.
    assert fitted.noise_multiplier_ == pytest.approx(sigma / math.sqrt(0.95) * math.sqrt(fitted.n_iter_))
    assert fitted.epsilon_spent_ <= 0.5 and fitted.epsilon_spent_ == pytest.approx(0.5, rel=1e-3)
    assert fitted.sensitivity_ == pytest.approx(math.sqrt(2.0))  # data_norm 1, intercept 1


def test_default_norm_is_estimated_privately_in_the_same_charge():
    X, y = _blobs()
    X = 7.0 * X  # a scale no default could guess
    est = DPLogisticRegression(epsilon=1.0, random_state=0)
    fixed = norm_estimate_curve(0.2)  # ε/5 for the norm's histogram
    sigma = calibrate_gaussian_after(fixed, 1.0, 1e-5)
    expected = fixed + gaussian_rdp(sigma / math.sqrt(0.05)) + gaussian_rdp(sigma / math.sqrt(0.95))
    fitted = assert_charges_once(est, X, y, expected_curve=expected)
    # σ meets ε = 1 by RDP beside the norm's curve; the tightest accountant may spend less.
    assert fitted.privacy_curve_.epsilon(1e-5) == pytest.approx(1.0, rel=1e-3)
    assert fitted.epsilon_spent_ <= 1.0
    # The released norm is near the 75% quantile of the norms (within a bin, a factor 2^(1/4)).
    norms = np.linalg.norm(X, axis=1)
    assert np.quantile(norms, 0.5) <= fitted.data_norm_ <= norms.max()
    assert abs(math.log2(fitted.data_norm_ / np.quantile(norms, 0.75))) < 0.25
    assert fitted.sensitivity_ == pytest.approx(math.sqrt(fitted.data_norm_**2 + 1))


def test_the_curve_does_not_depend_on_n_but_the_steps_may():
    X, y = _blobs(n=20_000)
    curves, steps = [], []
    for n in (300, 20_000):
        fitted = DPLogisticRegression(epsilon=1.0, data_norm=1.0, random_state=0).fit(X[:n], y[:n])
        curves.append(fitted.privacy_curve_)
        steps.append(fitted.n_iter_)
    assert curves[0] == curves[1]
    assert steps[0] == 10 and steps[1] > 100  # the floor of 10, and n̂/(28σ_g)


def test_large_sizes_take_the_preconditioned_schedule_at_the_same_cost():
    """From n̂/(28σ_g) ≥ 250: a noisy Gram matrix, 14 steps, the same charged curve."""
    rng = np.random.default_rng(3)
    n, d = 40_000, 5
    X = rng.uniform(-1, 1, size=(n, d)) * [1.0, 0.5, 0.2, 0.05, 0.01]  # ill-conditioned
    y = (X @ [1.0, -2.0, 5.0, 20.0, 0.0] + rng.logistic(size=n) > 0).astype(int)
    kw = dict(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0)
    small = DPLogisticRegression(**kw).fit(X[:2000], y[:2000])
    large = DPLogisticRegression(**kw).fit(X, y)
    assert large.privacy_curve_ == small.privacy_curve_
    sigma_grad = small.noise_multiplier_ / math.sqrt(small.n_iter_)
    assert n / (28 * sigma_grad) > 300 and small.n_iter_ < 100
    # 10% of the gradients' precision went to the Gram matrix: σ_s = σ_g/√0.9.
    assert large.n_iter_ == 14
    assert large.noise_multiplier_ == pytest.approx(sigma_grad / math.sqrt(0.9) * math.sqrt(14))
    exact = LogisticRegression(C=1.0).fit(X, y)
    assert abs(large.score(X, y) - exact.score(X, y)) < 0.005
    # The scores, not the coefficients: at ε = 1 the 0.01-wide column's is mostly noise.
    assert np.corrcoef(large.decision_function(X), exact.decision_function(X))[0, 1] > 0.99


def test_gram_of_the_design_and_its_sensitivity():
    """The Gram matrix is that of the clipped rows; a row moves it by ‖x̃‖² ≤ D² + 1 in Frobenius norm."""
    from skdp.linear_model._logistic import _Design
    from skdp.linear_model._row_norm import RowClipper, box_centre_and_norm

    rng = np.random.default_rng(0)
    X = np.vstack([rng.uniform(-3, 5, size=(300, 3)), [[1e6, -1e6, 0.0]], 5.0 * np.eye(3)])
    centre, norm = box_centre_and_norm(np.full(3, -1.0), np.full(3, 2.0), centre=True)
    for clipper in (RowClipper(lower=-1.0, upper=2.0, centre=centre, data_norm=norm),
                    RowClipper(data_norm=0.7)):
        design = _Design(X, clipper, fit_intercept=True)
        dense = design.copy()
        np.testing.assert_allclose(design.gram(), dense.T @ dense, rtol=1e-12, atol=1e-9)
        bound = clipper.data_norm**2 + 1.0
        for i in range(X.shape[0]):  # remove each row in turn: the neighbour's Gram
            change = np.linalg.norm(np.triu(np.outer(dense[i], dense[i])))
            assert change <= bound * (1 + 1e-12)


@pytest.mark.parametrize("n_hat, sigma, steps", [(10.0, 5.0, 10), (28_000.0, 10.0, 100),
                                                 (1e9, 1.0, 500)])
def test_auto_steps(n_hat, sigma, steps):
    assert _auto_steps(n_hat, sigma) == steps


def test_multiclass_sensitivity_and_single_run():
    X, y = _blobs(n_classes=3)
    budget = PrivacyBudget(10.0, 1e-5)
    clf = DPLogisticRegression(epsilon=2.0, data_norm=1.0, budget=budget, random_state=0).fit(X, y)
    assert len(budget) == 1 and clf.coef_.shape == (3, 4) and clf.intercept_.shape == (3,)
    assert clf.sensitivity_ == pytest.approx(math.sqrt(2.0) * math.sqrt(2.0))
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    assert clf.score(X, y) > 0.9


def test_non_private_charges_non_private_curve():
    X, y = _blobs()
    budget = PrivacyBudget(math.inf, 1e-5)
    clf = DPLogisticRegression(epsilon=math.inf, budget=budget).fit(X, y)
    assert clf.noise_multiplier_ == 0.0 and clf.epsilon_spent_ == math.inf
    assert budget.ledger[0].curve.epsilon(1e-5) == RDPCurve.non_private().epsilon(1e-5)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_epsilon_inf_matches_sklearn_coefficients(n_classes):
    X, y = _blobs(n_classes=n_classes)
    ours = DPLogisticRegression(epsilon=math.inf, data_norm=1.0, C=0.5).fit(X, y)
    ref = LogisticRegression(C=0.5, tol=1e-10, max_iter=10_000).fit(X, y)
    if n_classes > 2:  # softmax is defined up to a shift of all classes: compare centred
        ours_c = ours.coef_ - ours.coef_.mean(axis=0)
        ref_c = ref.coef_ - ref.coef_.mean(axis=0)
        np.testing.assert_allclose(ours_c, ref_c, atol=1e-3)
    else:
        np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-3)
        np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-3)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-4)


@pytest.fixture(scope="module")
def adult():
    pre = adult_preprocessor()
    Xtr, ytr = load_adult(return_X_y=True)
    Xte, yte = load_adult(subset="test", return_X_y=True)
    return pre.fit_transform(Xtr[:10_000]), ytr[:10_000], pre.transform(Xte), yte


def test_adult_epsilon_inf_within_half_a_point_of_sklearn(adult):
    Xtr, ytr, Xte, yte = adult
    norm = adult_schema()["max_row_norm"]
    ours = DPLogisticRegression(epsilon=math.inf, data_norm=norm).fit(Xtr, ytr).score(Xte, yte)
    ref = LogisticRegression(max_iter=5000).fit(Xtr, ytr).score(Xte, yte)
    assert abs(ours - ref) <= 0.005


def test_adult_private_accuracy(adult):
    # 10,000 rows at ε = 1: measured 0.84 over seeds; the noise std of the mean
    # gradient is about 2·10⁻³ per coordinate, so a drop to the majority
    # class (0.764) would mean a bug, not bad luck.
    Xtr, ytr, Xte, yte = adult
    norm = adult_schema()["max_row_norm"]
    acc = DPLogisticRegression(epsilon=1.0, data_norm=norm, random_state=0).fit(Xtr, ytr).score(Xte, yte)
    assert acc > 0.82


def test_noise_is_seeded_and_changes_with_seed():
    X, y = _blobs()
    a = DPLogisticRegression(epsilon=1.0, random_state=1).fit(X, y).coef_
    b = DPLogisticRegression(epsilon=1.0, random_state=1).fit(X, y).coef_
    c = DPLogisticRegression(epsilon=1.0, random_state=2).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_rows_are_clipped_to_data_norm():
    # Scaling X by 100 changes nothing once rows are scaled back to data_norm:
    # every row of _blobs already has norm <= 1, and 100·x is scaled to norm 1.
    X, y = _blobs()
    X = X / np.linalg.norm(X, axis=1, keepdims=True)  # all rows of norm exactly 1
    a = DPLogisticRegression(epsilon=1.0, data_norm=1.0, random_state=3).fit(X, y)
    b = DPLogisticRegression(epsilon=1.0, data_norm=1.0, random_state=3).fit(100 * X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("params", [dict(data_norm=1.0), dict(bounds_X=(-0.2, 0.2)),
                                    dict(data_norm=0.5, bounds_X=(-0.2, 0.2)), dict()])
@pytest.mark.parametrize("epsilon", [1.0, math.inf])
def test_predict_clips_rows_as_fit_does(params, epsilon):
    # One model: a row is clipped the same way at predict as at fit, so the scores of a
    # row and of its clipped version are equal, and a row of norm 300 is not
    # extrapolated. (Without this, a default that clips at fit applies the model to
    # rows unlike its training rows.)
    X, y = _blobs()
    X = 3.0 * X  # many rows of norm > 1, and entries outside (-0.2, 0.2)
    clf = DPLogisticRegression(epsilon=epsilon, random_state=0, **params).fit(X, y)

    def clipped(Z):  # the documented map: box clip, then the norm (the box's centre is 0 here)
        if "bounds_X" in params:
            Z = np.clip(Z, -0.2, 0.2)
        return clip_row_norms(Z, clf.data_norm_) if math.isfinite(clf.data_norm_) else Z

    if "data_norm" in params:
        assert clf.data_norm_ == params["data_norm"]
    for Z in (X, 100 * X):
        np.testing.assert_allclose(clf.decision_function(Z), clf.decision_function(clipped(Z)),
                                   rtol=1e-12, atol=1e-12)
        # ... and they are the linear scores of the clipped rows.
        np.testing.assert_allclose(clf.decision_function(Z),
                                   clipped(Z) @ clf.coef_.ravel() + clf.intercept_[0], atol=1e-10)
    if params or epsilon < math.inf:
        assert math.isfinite(clf.data_norm_)


def test_epsilon_inf_without_bounds_clips_nothing():
    X, y = _blobs()
    X = 50 * X
    clf = DPLogisticRegression(epsilon=math.inf).fit(X, y)
    assert clf.data_norm_ == math.inf
    ref = LogisticRegression(tol=1e-10, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X), atol=1e-4)


@pytest.fixture(scope="module")
def breast_cancer():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    data = load_breast_cancer()
    # Public bounds: the Min and Max printed for each column in the data set's documentation.
    rows = re.findall(r"^[a-z ()]+:\s+([\d.]+)\s+([\d.]+)\s*$", data.DESCR, re.M)
    lower, upper = np.array(rows, dtype=float).T
    assert lower.size == 30
    X = (data.data - lower) / (upper - lower)  # in [0, 1] by public bounds
    return train_test_split(X, data.target, test_size=0.3, random_state=0, stratify=data.target)


@pytest.mark.parametrize("params", [dict(), dict(bounds_X=(0, 1))])
def test_breast_cancer_epsilon_inf_matches_sklearn(breast_cancer, params):
    Xtr, Xte, ytr, yte = breast_cancer
    ours = DPLogisticRegression(epsilon=math.inf, **params).fit(Xtr, ytr)
    ref = LogisticRegression(tol=1e-10, max_iter=10_000).fit(Xtr, ytr)
    assert abs(ours.score(Xte, yte) - ref.score(Xte, yte)) <= 0.01
    np.testing.assert_allclose(ours.predict_proba(Xte), ref.predict_proba(Xte), atol=1e-3)


@pytest.mark.parametrize("params", [dict(), dict(bounds_X=(0, 1))])
def test_breast_cancer_private_defaults_beat_the_majority_class(breast_cancer, params):
    # ε·n = 6 · 398 ≈ 2,400. Measured accuracy about 0.92-0.94 over seeds, against a
    # majority class of 0.63: every one of 5 seeds must beat the majority by 0.1.
    Xtr, Xte, ytr, yte = breast_cancer
    majority = max(yte.mean(), 1 - yte.mean())
    accs = [DPLogisticRegression(epsilon=6.0, classes=[0, 1], random_state=s, **params)
            .fit(Xtr, ytr).score(Xte, yte) for s in range(5)]
    assert min(accs) > majority + 0.1


def test_public_classes():
    X, y = _blobs()
    clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert clf.classes_.tolist() == [0, 1, 2] and clf.coef_.shape == (3, 4)


def test_bad_input_costs_nothing():
    X, y = _blobs(n=200)
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    X_inf = X.copy()
    X_inf[0, 0] = np.inf
    sp = pytest.importorskip("scipy.sparse")
    assert_bad_input_costs_nothing(
        DPLogisticRegression(random_state=0), X, y,
        bad_params=[{"epsilon": 0}, {"epsilon": -1.0}, {"delta": 1.0}, {"delta": 0.0}, {"C": 0},
                    {"data_norm": -1.0}, {"data_norm": math.inf}, {"max_iter": 0},
                    {"bounds_X": (1.0, 0.0)}, {"bounds_X": ([0, 0], [1, 1])},
                    {"max_iter": "many"}, {"classes": [0, 5]}, {"classes": [1]}],
        bad_data=[(X_nan, y), (X_inf, y), (X, np.zeros_like(y)), (sp.csr_matrix(X), y),
                  (X, y[:-1]), (X, np.linspace(0, 1, len(y)))],
    )


def test_refused_fit_fits_nothing_and_keeps_earlier_nothing():
    X, y = _blobs(n=200)
    assert_refused_fit_fits_nothing(DPLogisticRegression(epsilon=1.0, random_state=0), X, y)
    # A fitted estimator refused on a second fit is left unfitted, not half-fitted.
    budget = PrivacyBudget(1.2, 1e-5)  # two ε = 1 fits compose to ε ≈ 1.4 > 1.2
    est = DPLogisticRegression(epsilon=1.0, budget=budget, random_state=0).fit(X, y)
    with pytest.raises(BudgetExceededError):
        est.fit(X, y)
    assert len(budget) == 1
    with pytest.raises(NotFittedError):
        est.predict(X)


def test_clone_shares_budget():
    X, y = _blobs(n=200)
    budget = PrivacyBudget(3.0, 1e-5)
    est = DPLogisticRegression(epsilon=1.0, budget=budget, random_state=0)
    clone(est).fit(X, y)
    est.fit(X, y)
    assert len(budget) == 2
