"""Review of the linear models' defaults, privacy_cost, DPPipeline, the search's total epsilon
and the ledger's cached connections.

Checked and sound (these tests pass and guard it):

- DPLogisticRegression / DPLinearRegression: ``predict``, ``decision_function``,
  ``predict_proba`` and ``score`` apply the row map the fit used (the
  difference between the scores and the fit's own design times the
  coefficients is one constant, on rows outside the box and with huge norms);
  ``data_norm_`` is ``data_norm``, the box's ‖(upper − lower)/2‖₂ (‖max|bound|‖₂
  without an intercept) or a point of the public log2 grid released by the
  norm estimate at ε/5, whose curve is the fixed part of the one charge.
- DPLogisticRegression's noise, spied on the generator: the count's draw and
  the T gradient draws have the precisions 1/σ_c² + T/(σ_g√T)² that the
  charged Gaussian part states, for every T (auto or fixed), binary and
  multinomial, with any source of the norm. The number of steps follows the
  released n̂ alone (two datasets of other sizes and values given the same
  n̂ take the same T). The per-row gradient on the fit's own design, at rows
  on the corners of the box and far outside it, at extreme weights, stays
  within ``sensitivity_`` and reaches it (binary and softmax).
- DPLinearRegression: the per-row vector of the released Gram entries stays
  within ``sensitivity_`` and reaches it at the box's corners; the Gaussian
  drawn is the curve charged; everything after the release (the ridge, the
  solve) is a function of the released matrix: a fixed release gives the
  same model on two different datasets.
- Bad input (including bounds or norms whose sensitivity is 0 or overflows)
  is refused before the charge; rows of ±1e300 and 0 make no warning after
  the charge; ε = ∞ matches scikit-learn.
- ``privacy_cost`` reads no value of X (an X whose values raise when read,
  arrays and frames, for estimators, pipelines, ColumnTransformers and a
  search with a total ε), and equals the fit's charge.
- ``DPPipeline``: one charge for DP-SGD (whose curve depends on n) and a
  scaler; bad input refused before the reservation; loky workers.
- A search given a total ε charges at most ε at the accounting δ (and within
  0.5% of it; six settings, a pipeline of two private steps and DP-SGD whose
  cost follows the training part's size), picks the same per-run ε on two
  datasets of equal shape, keeps the ratio of the steps' ε, and refuses an ε
  too small before its charge.
- Forked children of a parent that holds a cached ledger connection, and
  threads, never overspend.

Found and fixed (each test failed before its fix):

1. DPLogisticRegression's step 2/L used L = Δ²/4, the smoothness of the mean
   log-loss alone, without the penalty's 1/(C·n̂): when C·n̂ is small (a few
   rows, a small ε, a small C) or Δ is small (a small ``data_norm`` without an
   intercept), heavy-ball steps on the penalised coordinates diverged
   (coefficients of 1e26 where scikit-learn's are near 2).
2. DPLogisticRegression computed its sensitivity and step after the charge:
   public bounds or a ``data_norm`` for which Δ is 0 (a box of width 0
   without an intercept) or Δ² underflows or overflows failed with
   ZeroDivisionError or OverflowError after the budget was charged
   (DPLinearRegression's ``data_norm=1e300`` raised OverflowError, before it).
3. DPPipeline left its ``_Prepaid`` recorder as the budget of the fitted
   copies that a ColumnTransformer keeps in ``transformers_``: the fitted
   pipeline could not be pickled, so ``cross_validate(return_estimator=True)``
   with loky failed after its charges.
4. ``privacy_cost`` and DPPipeline's reservation fitted a OneHotEncoder with
   public categories and ``handle_unknown="error"`` on the placeholders of an
   object column (missing values), which it refused: both failed on
   pipelines whose real rows are all valid.

5. Ledger: SQLite keeps its file-lock bookkeeping per process; a child forked
   while the parent holds a cached connection inherits it and takes no lock
   of its own. When the parent's connection is then closed (its thread ends,
   an error), the parent deletes the WAL while the child still writes to it:
   the child's later charges are lost, so the ledger undercounts. Fixed by
   going back to one connection per transaction, closed after it.

Found and fixed later (the tests below pass):

6. DPPipeline reserves the curve found on placeholders, but fits on the real
   rows: a step before a private step whose output width depends on the
   values (here ``OneHotEncoder(categories="auto")``, which reads the
   categories) changes the private step's curve (its Laplace/Gaussian choice
   follows the number of sums), and the fit fails after the charge, on some
   datasets and not on their neighbours. A ColumnTransformer whose sparse
   stacking follows the rows makes a valid pipeline be refused. Fixed: the
   steps before the first private one run on the real rows and on the
   placeholders before the charge; a width that differs is refused, a
   format that differs is given to the placeholders.
7. Ledger identity is (host, device, inode): restoring a backup by copying it
   over the ledger (``cp backup ledger``, the same inode) or after deleting it
   (ext4 reuses the inode) is not detected; the handle charges the restored
   file and the charges made after the backup are forgotten. The identity is
   also checked before, not inside, the write transaction: a file replaced
   in between takes the charge. Fixed: the identity is checked again under
   the write lock, and a handle refuses a ledger that no longer holds the
   last charge it saw.
"""

import gc
import math
import multiprocessing
import os
import pathlib
import pickle
import shutil
import threading
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, softmax
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import cross_validate
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

import skdp.linear_model._linear as linear_module
import skdp.linear_model._logistic as logistic_module
import skdp.linear_model._row_norm as row_norm_module
from skdp import LedgerMismatchError, PrivacyBudget, privacy_cost
from skdp.accounting import DiscreteGaussianEvent, gaussian_rdp, pure_dp_rdp, zcdp_rdp
from skdp.budget import _ledger
from skdp.linear_model import DPLinearRegression, DPLogisticRegression, DPSGDClassifier
from skdp.linear_model._row_norm import NORM_GRID_LOG2, norm_estimate_curve
from skdp.model_selection import DPGridSearchCV
from skdp.naive_bayes import DPGaussianNB
from skdp.pipeline import make_pipeline
from skdp.preprocessing import DPStandardScaler
from _testing import charge_until_refused

FORK = multiprocessing.get_context("fork")


# -- helpers ----------------------------------------------------------------------------
class _SpyGenerator(np.random.Generator):
    """A Generator that records every standard normal and normal draw (and can force the first)."""

    def __init__(self, seed, first=None):
        super().__init__(np.random.PCG64(seed))
        self.standard, self.normal_scales, self.first = [], [], first

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        z = super().standard_normal(size=size, dtype=dtype, out=out)
        if self.first is not None and not self.standard:
            z = np.full_like(np.asarray(z, dtype=float), self.first)[()]
        self.standard.append(np.array(z, dtype=float, copy=True))
        return z

    def normal(self, loc=0.0, scale=1.0, size=None):
        out = super().normal(loc, scale, size)
        self.normal_scales.append(np.broadcast_to(scale, np.shape(out)).astype(float).ravel())
        return out


@pytest.fixture
def gd_calls(monkeypatch):
    """The arguments of every noisy gradient descent run by DPLogisticRegression.fit."""
    calls = []
    original = logistic_module._noisy_gd

    def spy(Xa, Y, C, penalised, binary, n_hat, steps, sigma, sensitivity, rng, metric=None,
            report=None):
        calls.append(dict(Xa=Xa.copy(), Y=Y.copy(), n_hat=n_hat, steps=steps, sigma=sigma,
                          sensitivity=sensitivity, binary=binary, metric=metric))
        return original(Xa, Y, C, penalised, binary, n_hat, steps, sigma, sensitivity, rng,
                        metric=metric, report=report)

    monkeypatch.setattr(logistic_module, "_noisy_gd", spy)
    return calls


def _extreme_rows(lower, upper, n_random=300, seed=0):
    """Every corner of the box, rows far outside it (huge norms), and random rows inside."""
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    d = lower.size
    corners = np.array([[upper[j] if (k >> j) & 1 else lower[j] for j in range(d)]
                        for k in range(2**d)])
    rng = np.random.default_rng(seed)
    outside = np.vstack([100.0 * corners, -1e6 * np.ones((1, d)), 1e150 * np.eye(d)])
    inside = lower + (upper - lower) * rng.random((n_random, d))
    return np.vstack([corners, outside, inside])


_LOWER, _UPPER = np.array([0.0, -2.0, 5.0]), np.array([1.0, 2.0, 9.0])
_HALF_NORM = float(np.linalg.norm((_UPPER - _LOWER) / 2))  # sqrt(0.25 + 4 + 4) = sqrt(8.25)


def _labels(n, n_classes, seed=1):
    y = np.arange(n) % n_classes
    return np.random.default_rng(seed).permutation(y)


def _gaussian_precision(curve):
    """1/σ² of a curve that is a Gaussian α/(2σ²): the same at every order."""
    precision = 2.0 * curve.rdp / curve.orders
    np.testing.assert_allclose(precision, precision[0], rtol=1e-9)
    return float(precision[0])


# == 1. the linear models ==============================================================
_NORM_MODES = {
    "box": dict(bounds_X=(_LOWER, _UPPER)),
    "box_no_intercept": dict(bounds_X=(_LOWER, _UPPER), fit_intercept=False),
    "data_norm": dict(data_norm=3.0),
    "data_norm_and_box": dict(data_norm=3.0, bounds_X=(_LOWER, _UPPER)),
    "estimated": dict(),
}


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("mode", list(_NORM_MODES))
def test_logistic_predict_uses_the_row_map_of_the_fit(mode, n_classes, gd_calls):
    X = _extreme_rows(_LOWER, _UPPER)
    y = _labels(len(X), n_classes)
    clf = DPLogisticRegression(epsilon=2.0, classes=list(range(n_classes)), random_state=0,
                               **_NORM_MODES[mode]).fit(X, y)
    (call,) = gd_calls
    Xa = call["Xa"][:, :X.shape[1]]  # the design the fit used, without the intercept column
    scores = clf.decision_function(X).reshape(len(X), -1)
    offset = scores - Xa @ clf.coef_.T  # must be one constant per output: b + w·centre
    scale = np.abs(scores).max() + 1.0
    assert np.ptp(offset, axis=0).max() <= 1e-9 * scale
    # predict_proba and score go through the same map.
    np.testing.assert_allclose(clf.predict_proba(X).argmax(axis=1),
                               np.searchsorted(clf.classes_, clf.predict(X)))
    assert clf.score(X, y) == pytest.approx(np.mean(clf.predict(X) == y))


@pytest.mark.parametrize("mode", ["box", "box_no_intercept", "data_norm", "data_norm_and_box"])
def test_linear_predict_uses_the_row_map_of_the_fit(mode, monkeypatch):
    designs = []
    original = linear_module._clipped_design

    def spy(*args, **kwargs):
        Z = original(*args, **kwargs)
        designs.append(Z.copy())
        return Z

    monkeypatch.setattr(linear_module, "_clipped_design", spy)
    X = _extreme_rows(_LOWER, _UPPER)
    y = np.random.default_rng(2).uniform(-1, 3, len(X))
    reg = DPLinearRegression(epsilon=2.0, bounds_y=(-1, 3), random_state=0,
                             **_NORM_MODES[mode]).fit(X, y)
    Z = designs[0]  # the Gram pass; the refinement passes map the rows the same way
    for other in designs[1:]:
        np.testing.assert_array_equal(other, Z)
    offset = reg.predict(X) - Z[:, :X.shape[1]] @ reg.coef_
    assert np.ptp(offset) <= 1e-9 * (np.abs(reg.predict(X)).max() + 1.0)


@pytest.mark.parametrize("intercept, expected", [(True, _HALF_NORM),
                                                 (False, float(np.linalg.norm([1.0, 2.0, 9.0])))])
def test_logistic_norm_from_the_box(intercept, expected):
    X = _extreme_rows(_LOWER, _UPPER)
    y = _labels(len(X), 2)
    clf = DPLogisticRegression(epsilon=1.0, bounds_X=(_LOWER, _UPPER), fit_intercept=intercept,
                               classes=[0, 1], random_state=0).fit(X, y)
    assert clf.data_norm_ == pytest.approx(expected, rel=1e-12)
    assert clf.sensitivity_ == pytest.approx(math.sqrt(expected**2 + intercept), rel=1e-12)
    # No norm estimate in the curve: it is the Gaussian part alone.
    _gaussian_precision(clf.privacy_curve_)


def test_logistic_private_norm_is_released_in_the_one_charge(monkeypatch):
    released = []
    original = logistic_module.estimate_data_norm

    def spy(X, epsilon, rng, **kwargs):
        released.append((epsilon, original(X, epsilon, rng, **kwargs)))
        return released[-1][1]

    monkeypatch.setattr(logistic_module, "estimate_data_norm", spy)
    rng = np.random.default_rng(3)
    X = 37.0 * rng.normal(size=(4000, 5))
    y = (X[:, 0] > 0).astype(int)
    budget = PrivacyBudget(10.0, 1e-5)
    clf = DPLogisticRegression(epsilon=0.8, classes=[0, 1], budget=budget,
                               random_state=0).fit(X, y)
    assert len(budget) == 1
    ((eps_norm, norm),) = released
    assert eps_norm == pytest.approx(0.8 / 5, rel=1e-12)
    assert clf.data_norm_ == norm
    assert NORM_GRID_LOG2[0] <= math.log2(norm) <= NORM_GRID_LOG2[1]
    # The charge = the norm estimate's curve at the ε it was released with + a Gaussian part.
    rest = clf.privacy_curve_.rdp - norm_estimate_curve(eps_norm).rdp
    precision = 2 * rest / clf.privacy_curve_.orders
    np.testing.assert_allclose(precision, precision[0], rtol=1e-9)
    # σ is calibrated beside the norm's curve by RDP, which meets 0.8; the budget's tightest
    # accountant (the PLD of the discrete and continuous Gaussians) may find the fit cheaper.
    assert clf.epsilon_spent_ <= 0.8
    assert clf.privacy_curve_.epsilon(1e-5) == pytest.approx(0.8, rel=1e-3)


def test_private_norm_is_a_discrete_gaussian_histogram_of_the_row_norms(monkeypatch):
    # The release is the charged mechanism: one count per public bin, discrete Gaussian noise
    # of std >= 2/ε on each (sensitivity 1: (ε²/8)-zCDP, the curve charged); the bound is
    # read from the noisy counts alone.
    draws = []
    original = row_norm_module.sample_discrete_gaussian

    def spy(sigma, size, *, random_state):
        draws.append((sigma, size, original(sigma, size, random_state=random_state)))
        return draws[-1][2]

    monkeypatch.setattr(row_norm_module, "sample_discrete_gaussian", spy)
    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 4))
    norm = row_norm_module.estimate_data_norm(X, 0.3, np.random.default_rng(0))
    ((sigma, size, noise),) = draws
    assert sigma >= Fraction(2) / Fraction(0.3) and float(sigma) == pytest.approx(2 / 0.3)
    assert size == row_norm_module._norm_bins()
    curve = norm_estimate_curve(0.3)
    np.testing.assert_allclose(curve.rdp, zcdp_rdp(0.3**2 / 8).rdp, rtol=1e-12)
    # the PLD accountant gets the discrete Gaussian drawn, σ exactly 2/ε
    assert curve.event == DiscreteGaussianEvent(sigma=float(sigma), sensitivity=1)
    norms = np.linalg.norm(X, axis=1)
    assert np.quantile(norms, 0.5) < norm < 2 * norms.max()
    # With the noise fixed, the bound is a function of the counts alone: the 75% point of the
    # counts of the bins above the threshold, log-linear inside its bin.
    monkeypatch.setattr(row_norm_module, "sample_discrete_gaussian",
                        lambda sigma, size, *, random_state: np.zeros(size, dtype=np.int64))
    exact = row_norm_module.estimate_data_norm(X, 0.3, None)
    assert 2 ** -0.25 * np.quantile(norms, 0.75) < exact < 2 ** 0.25 * np.quantile(norms, 0.75)
    assert row_norm_module.estimate_data_norm(X[::-1] * -1.0, 0.3, None) == exact


def test_private_norm_cost_stops_growing_at_large_epsilon():
    # (ε_n²/8)-zCDP grows as ε²: at a fit's ε of about 150 the norm alone spent the fit's whole
    # ε and the default refused to fit. Above ε_n = 4 the counts' std stays at 1/2 (2-zCDP).
    np.testing.assert_allclose(norm_estimate_curve(4.0).rdp, zcdp_rdp(2.0).rdp, rtol=1e-12)
    assert norm_estimate_curve(200.0) == norm_estimate_curve(4.0)
    assert norm_estimate_curve(2.0) != norm_estimate_curve(4.0)
    rng = np.random.default_rng(11)
    X = rng.normal(size=(500, 3))
    y = (X[:, 0] > 0).astype(int)
    clf = DPLogisticRegression(epsilon=1000.0, classes=[0, 1], random_state=0).fit(X, y)
    assert clf.epsilon_spent_ <= 1000.0 and clf.score(X, y) > 0.9


def test_private_norm_holds_where_every_row_has_the_same_norm():
    # One-hot rows of 3 categorical columns all have norm √3. An exponential-mechanism
    # quantile over the log grid found every grid point above √3 equally good and drew the
    # bound uniformly up to 2^40 (a model of almost nothing, below the majority class at
    # every ε); the histogram's bin stands out of the noise at once.
    rng = np.random.default_rng(9)
    n = 4000
    codes = rng.integers(0, 4, size=(n, 3))
    X = np.zeros((n, 12))
    X[np.arange(n)[:, None], codes + 4 * np.arange(3)] = 1.0
    # √3 lies in the bin (2^0.75, 2^1] and only it stands out: 75% of the way through it
    edge = 2.0 ** (0.75 + 0.75 / 4)
    assert math.sqrt(3) < edge < 2.0
    for seed in range(5):
        assert row_norm_module.estimate_data_norm(X, 0.02, np.random.default_rng(seed)) == edge
    y = (codes[:, 0] == 1) ^ (rng.random(n) < 0.15)  # label = one category, 15% flipped
    clf = DPLogisticRegression(epsilon=0.5, classes=[False, True], random_state=0).fit(X, y)
    assert clf.data_norm_ == edge
    assert clf.score(X, y) > 0.8  # the majority class scores about 0.68, the exact model 0.85


def test_private_norm_without_a_bin_above_the_noise_scales_rows_to_almost_zero():
    # Too few rows for ε: no bin is kept, and the bound is the grid's lowest point; the fit
    # still ends (no data-dependent error after the charge) with finite predictions.
    rng = np.random.default_rng(10)
    X = rng.random((20, 3))
    assert row_norm_module.estimate_data_norm(X, 0.01, np.random.default_rng(0)) == 2.0**-20
    for intercept in (True, False):
        clf = DPLogisticRegression(epsilon=0.01, classes=[0, 1], fit_intercept=intercept,
                                   random_state=0).fit(X, (X[:, 0] > 0.5).astype(int))
        assert clf.data_norm_ == 2.0**-20
        assert np.isfinite(clf.predict_proba(X)).all()


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("mode, max_iter", [("box", "auto"), ("estimated", "auto"),
                                            ("data_norm", "auto"), ("box", 37), ("box", 1)])
def test_logistic_noise_drawn_is_the_curve_charged(mode, max_iter, n_classes, gd_calls):
    rng = np.random.default_rng(4)
    n, d = 3000, 3
    X = _LOWER + (_UPPER - _LOWER) * rng.random((n, d))
    y = _labels(n, n_classes)
    spy = _SpyGenerator(5)
    eps = 0.7
    clf = DPLogisticRegression(epsilon=eps, classes=list(range(n_classes)), max_iter=max_iter,
                               random_state=spy, **_NORM_MODES[mode]).fit(X, y)
    (call,) = gd_calls
    T = call["steps"]
    assert clf.n_iter_ == T
    # Draws: one count, then T gradient vectors of the shape of W.
    assert np.ndim(spy.standard[0]) == 0 and len(spy.standard) == 1 + T
    shape = (d + 1, 1 if n_classes == 2 else n_classes)
    assert all(z.shape == shape for z in spy.standard[1:])
    sigma_count = (call["n_hat"] - n) / float(spy.standard[0])
    sigma_step = call["sigma"]
    assert clf.noise_multiplier_ == sigma_step and clf.sensitivity_ == call["sensitivity"]
    # What was drawn: a count Gaussian (sensitivity 1) and T Gaussians of multiplier σ_step.
    drawn = 1.0 / sigma_count**2 + T / sigma_step**2
    charged = clf.privacy_curve_
    fixed = norm_estimate_curve(eps / 5).rdp if mode == "estimated" else 0.0
    precision = 2 * (charged.rdp - fixed) / charged.orders
    np.testing.assert_allclose(precision, drawn, rtol=1e-9)


def test_logistic_steps_follow_the_released_count_alone(gd_calls):
    """Two datasets of other sizes and values, given the same n̂, release the same T and D."""
    rng = np.random.default_rng(6)
    data = []
    for n, scale in ((2000, 1.0), (9000, 0.1)):
        data.append((scale * rng.uniform(-1, 1, size=(n, 3)), rng.integers(0, 2, n)))

    def fit(X, y, z):
        return DPLogisticRegression(epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1],
                                    random_state=_SpyGenerator(1, first=z)).fit(X, y)

    fit(*data[0], z=1.0)
    sigma_count = gd_calls[-1]["n_hat"] - len(data[0][1])  # n̂ = n + σ_c·z with z = 1
    assert sigma_count > 1.0
    with_n = [fit(X, y, 0.0) for X, y in data]  # n̂ = n: the count decides T
    assert with_n[0].n_iter_ != with_n[1].n_iter_
    same = [fit(X, y, (5000 - len(y)) / sigma_count) for X, y in data]
    assert [c["n_hat"] for c in gd_calls[-2:]] == pytest.approx([5000.0, 5000.0], rel=1e-12)
    released = [(c.n_iter_, c.data_norm_, c.sensitivity_, c.noise_multiplier_) for c in same]
    assert released[0] == released[1]
    sigma_grad = released[0][3] / math.sqrt(released[0][0])
    assert released[0][0] == logistic_module._auto_steps(5000.0, sigma_grad)


def _row_gradient_norms(Xa, Y, W, binary):
    """‖∇ of one row's log-loss‖ for every row, at the weights W (features x outputs)."""
    Z = Xa @ W
    residual = expit(Z) - Y if binary else softmax(Z, axis=1) - Y
    return np.linalg.norm(Xa, axis=1) * np.linalg.norm(residual, axis=1)


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("mode", list(_NORM_MODES))
def test_logistic_per_row_gradient_within_the_sensitivity(mode, n_classes, gd_calls):
    X = _extreme_rows(_LOWER, _UPPER)
    y = _labels(len(X), n_classes)
    DPLogisticRegression(epsilon=1.0, classes=list(range(n_classes)), random_state=0,
                         **_NORM_MODES[mode]).fit(X, y)
    (call,) = gd_calls
    Xa, Y, sens = call["Xa"], call["Y"], call["sensitivity"]
    rng = np.random.default_rng(7)
    worst = 0.0
    for scale in (0.0, 1.0, 1e3, 1e6):
        for _ in range(20):
            W = scale * rng.normal(size=(Xa.shape[1], Y.shape[1]))
            worst = max(worst, _row_gradient_norms(Xa, Y, W, call["binary"]).max())
    # Weights that push every row's score to the wrong class's extreme.
    for row in np.argsort(np.linalg.norm(Xa, axis=1))[-5:]:
        x = Xa[row] / np.linalg.norm(Xa[row]) ** 2
        wrong = 1 - Y[row] if call["binary"] else np.roll(Y[row], 1)
        W = 1e4 * np.outer(x, (2 * wrong - 1) if call["binary"] else wrong - Y[row])
        worst = max(worst, _row_gradient_norms(Xa, Y, W, call["binary"])[row])
    assert worst <= sens * (1 + 1e-12)
    assert worst >= 0.999 * sens  # the bound is reached (not loose by a wrong factor)


@pytest.mark.parametrize("mode", ["box", "box_no_intercept", "data_norm", "data_norm_and_box"])
def test_linear_gram_sensitivity_is_a_bound_reached_by_extreme_rows(mode, monkeypatch):
    designs = []
    original = linear_module._clipped_design

    def spy(*args, **kwargs):
        Z = original(*args, **kwargs)
        designs.append(Z.copy())
        return Z

    monkeypatch.setattr(linear_module, "_clipped_design", spy)
    X = _extreme_rows(_LOWER, _UPPER)
    if mode.startswith("data_norm"):  # rows where the greedy point of the derivation sits
        X = np.vstack([X, [[1.0, 2.0, math.sqrt(9 - 1 - 4)]], [[0.0, 2.0, math.sqrt(5.0)]]])
    y = np.resize([-1.0, 3.0, 50.0, -50.0], len(X))  # y at both bounds, and beyond them
    reg = DPLinearRegression(epsilon=1.0, bounds_y=(-1, 3), random_state=0,
                             **_NORM_MODES[mode]).fit(X, y)
    Z = designs[0]  # the Gram pass (the refinement passes map the rows the same way)
    q = Z.shape[1]
    rows, cols = np.triu_indices(q)
    keep = ~((rows == q - 1) & (cols == q - 1))  # the (y, y) entry is not released
    per_row = np.linalg.norm((Z[:, rows] * Z[:, cols])[:, keep], axis=1)
    assert per_row.max() <= reg.sensitivity_ * (1 + 1e-12)
    assert per_row.max() >= 0.999 * reg.sensitivity_


@pytest.mark.parametrize("mode", ["box", "data_norm"])
def test_linear_noise_drawn_is_the_curve_charged(mode):
    rng = np.random.default_rng(8)
    X = _LOWER + (_UPPER - _LOWER) * rng.random((500, 3))
    y = rng.random(500)
    spy = _SpyGenerator(9)
    reg = DPLinearRegression(epsilon=0.6, bounds_y=(0, 1), refine_steps=0, random_state=spy,
                             **_NORM_MODES[mode]).fit(X, y)
    (scales,) = spy.normal_scales
    q = 3 + 1 + 1  # features, intercept, target
    assert scales.size == q * (q + 1) // 2 and np.ptp(scales) == 0
    multiplier = scales[0] / reg.sensitivity_
    assert multiplier == pytest.approx(reg.noise_multiplier_, rel=1e-12)
    np.testing.assert_allclose(reg.privacy_curve_.rdp, gaussian_rdp(multiplier).rdp, rtol=1e-9)
    assert reg.epsilon_spent_ <= 0.6 and reg.epsilon_spent_ == pytest.approx(0.6, rel=1e-3)

    # With refinement: the Gram release, the gradient-norm histogram (sensitivity 1) and one
    # release per step (sensitivity gradient_clip_). Their multipliers' 1/z² add up to the
    # charged Gaussian's 1/z² (Gaussians compose exactly), and the curve is unchanged.
    spy = _SpyGenerator(9)
    refined = DPLinearRegression(epsilon=0.6, bounds_y=(0, 1), random_state=spy,
                                 **_NORM_MODES[mode]).fit(X, y)
    gram, counts, *steps = spy.normal_scales
    assert len(steps) == refined.n_refine_steps_ == 8
    assert gram.size == q * (q + 1) // 2 and counts.size == 18
    assert all(s.size == q - 1 for s in steps)  # the coefficients and the intercept
    assert all(np.ptp(s) == 0 for s in (gram, counts, *steps))
    multipliers = [gram[0] / refined.sensitivity_, counts[0] / 1.0]
    multipliers += [s[0] / refined.gradient_clip_ for s in steps]
    precision = sum(1.0 / z**2 for z in multipliers)
    assert precision == pytest.approx(1.0 / refined.noise_multiplier_**2, rel=1e-12)
    assert refined.noise_multiplier_ == reg.noise_multiplier_
    np.testing.assert_allclose(refined.privacy_curve_.rdp, reg.privacy_curve_.rdp, rtol=1e-12)


def test_linear_ridge_and_solve_read_only_the_release(monkeypatch):
    """After the release, the model is a function of the released matrix: a fixed release
    gives the same ridge and coefficients on two unrelated datasets."""
    rng = np.random.default_rng(10)
    noisy = rng.normal(size=(5, 5))
    noisy = noisy @ noisy.T * 50.0
    monkeypatch.setattr(linear_module, "_perturbed_gram", lambda gram, mechanism, rng: noisy.copy())
    models = []
    for n, seed in ((300, 0), (5000, 1)):
        r = np.random.default_rng(seed)
        X = _LOWER + (_UPPER - _LOWER) * r.random((n, 3))
        reg = DPLinearRegression(epsilon=1.0, bounds_X=(_LOWER, _UPPER), bounds_y=(0, 1),
                                 refine_steps=0, random_state=seed).fit(X, r.random(n))
        models.append((reg.ridge_, reg.coef_.tolist(), reg.intercept_, reg.data_norm_))
    assert models[0] == models[1]
    assert models[0][0] > 0  # the ridge is AdaSSP's max(0, B - lambda_min) of the release


@pytest.mark.parametrize("params", [dict(data_norm=0.01, fit_intercept=False),
                                    dict(bounds_X=(-0.005, 0.005), fit_intercept=False),
                                    dict(data_norm=0.01, C=1e-4), dict(data_norm=1.0, C=1e-4)])
def test_logistic_steps_do_not_diverge_where_the_penalty_is_steep(params):
    """The minimiser of mean log-loss + ‖w‖²/(2Cn) has ‖w‖² <= 2Cn·log 2 (the objective at 0 is
    log 2); the private model, its noise included, stays within a few times that."""
    rng = np.random.default_rng(0)
    n = 2000
    X = rng.uniform(-1, 1, size=(n, 3)) * 0.005
    y = (X @ [3.0, -3.0, 1.0] > 0).astype(int)
    C = params.get("C", 1.0)
    for seed in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow either
            clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=seed,
                                       **params).fit(X, y)
        assert np.linalg.norm(clf.coef_) <= 10 * math.sqrt(2 * C * n * math.log(2))

@pytest.mark.parametrize("mode", list(_NORM_MODES))
def test_nothing_is_warned_or_raised_after_the_charge_on_extreme_rows(mode):
    """Rows of 1e300, of 0 and of mixed signs: the fit warns nothing (a warning after the
    charge would depend on a row) and releases finite values."""
    rng = np.random.default_rng(16)
    X = rng.uniform(-1, 1, size=(300, 3))
    X[:5] = 1e300
    X[5:10] = -1e300
    X[10:20] = 0.0
    X[20, :] = [1e300, -1e300, 1e-300]
    y = _labels(300, 3)
    t = rng.uniform(0, 1, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1, 2], random_state=0,
                                   **_NORM_MODES[mode]).fit(X, y)
        assert np.isfinite(clf.decision_function(X)).all()
        if mode != "estimated":
            reg = DPLinearRegression(epsilon=1.0, bounds_y=(0, 1), random_state=0,
                                     **_NORM_MODES[mode]).fit(X, t)
            assert np.isfinite(reg.predict(X)).all()

def _refusals(make, X, y, cases):
    for params, bX, by in cases:
        budget = PrivacyBudget(1e6, 1e-5)
        est = make().set_params(budget=budget, **params)
        with pytest.raises((ValueError, TypeError)):
            est.fit(bX, by)
        assert len(budget) == 0, params


def test_logistic_bad_input_is_refused_before_the_charge():
    rng = np.random.default_rng(11)
    X = rng.uniform(0, 1, size=(100, 2))
    y = (X[:, 0] > 0.5).astype(int)
    y_nan = y.astype(object)
    y_nan[3] = np.nan
    X_str = X.astype(str).astype(object)
    X_str[0, 0] = "a"
    _refusals(lambda: DPLogisticRegression(classes=[0, 1], random_state=0), X, y, [
        ({"fit_intercept": "yes"}, X, y), ({"C": True}, X, y), ({"data_norm": True}, X, y),
        ({"bounds_X": ([0, np.nan], [1, 1])}, X, y), ({"bounds_X": ([0] * 3, [1] * 3)}, X, y),
        ({"max_iter": True}, X, y), ({"max_iter": 2.5}, X, y), ({"classes": ["a", "b"]}, X, y),
        ({}, X, y_nan), ({}, X_str, y), ({}, X[:, 0], y), ({}, X[:0], y[:0]),
        ({}, X[:, :0], y), ({"delta": np.nan}, X, y), ({"epsilon": np.nan}, X, y),
    ])


def test_linear_bad_input_is_refused_before_the_charge():
    rng = np.random.default_rng(12)
    X = rng.uniform(0, 1, size=(100, 2))
    y = X[:, 0].copy()
    y_nan, y_inf = y.copy(), y.copy()
    y_nan[1], y_inf[2] = np.nan, np.inf
    _refusals(lambda: DPLinearRegression(bounds_X=(0, 1), bounds_y=(0, 1), random_state=0), X, y, [
        ({"ridge": -1.0}, X, y),
        ({"ridge": "big"}, X, y), ({"fit_intercept": "yes"}, X, y), ({"delta": 0.0}, X, y),
        ({"data_norm": 0.0}, X, y), ({}, X, y_nan), ({}, X, y_inf),
        ({}, X, np.column_stack([y, y])), ({}, X, y[:-1]), ({"bounds_X": (1, 0)}, X, y),
    ])


@pytest.mark.parametrize("make", [
    lambda: DPLogisticRegression(bounds_X=(0, 0), fit_intercept=False),
    lambda: DPLogisticRegression(bounds_X=(0, 1e-200), fit_intercept=False),
    lambda: DPLogisticRegression(data_norm=1e-300, fit_intercept=False),
    lambda: DPLogisticRegression(data_norm=1e300),
    lambda: DPLinearRegression(data_norm=1e300, bounds_y=(0, 1)),
])
def test_a_sensitivity_of_zero_or_out_of_range_is_refused_before_the_charge(make):
    """Public bounds that make the gradients' sensitivity 0, or its square underflow or overflow,
    failed with ZeroDivisionError or OverflowError (after the charge for the logistic model)."""
    rng = np.random.default_rng(15)
    X = rng.uniform(0, 1, size=(200, 2))
    y = (X[:, 0] > 0.5).astype(int)
    budget = PrivacyBudget(100.0, 1e-5)
    est = make().set_params(budget=budget, random_state=0)
    if isinstance(est, DPLogisticRegression):
        est.set_params(classes=[0, 1])
    with pytest.raises(ValueError):
        est.fit(X, y)
    assert len(budget) == 0

def test_epsilon_inf_matches_scikit_learn_inside_the_bounds():
    rng = np.random.default_rng(13)
    X = _LOWER + (_UPPER - _LOWER) * rng.random((400, 3))
    y = rng.integers(0, 3, 400)
    ours = DPLogisticRegression(epsilon=math.inf, bounds_X=(_LOWER, _UPPER), C=0.5).fit(X, y)
    theirs = LogisticRegression(C=0.5, tol=1e-10, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-4)
    t = X @ [1.0, -0.5, 0.25] + rng.normal(0, 0.1, 400)
    reg = DPLinearRegression(epsilon=math.inf, bounds_X=(_LOWER, _UPPER),
                             bounds_y=(t.min() - 1, t.max() + 1)).fit(X, t)
    ols = LinearRegression().fit(X, t)
    np.testing.assert_allclose(reg.coef_, ols.coef_, rtol=1e-8)
    assert reg.intercept_ == pytest.approx(ols.intercept_, rel=1e-8)


# == 2. privacy_cost reads no value of X ================================================
class _NoValues:
    """Shape, dtype (and a frame's dtypes and columns) of an input whose values raise when read."""

    def __init__(self, data):
        self.shape = data.shape
        if isinstance(data, pd.DataFrame):
            self.dtypes, self.columns = data.dtypes, data.columns
        else:
            self.dtype = data.dtype

    def __len__(self):
        return self.shape[0]

    def _read(self, *args, **kwargs):
        raise AssertionError("a value of the data was read")

    __array__ = __getitem__ = __iter__ = to_numpy = _read


def _frame(n=600, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.uniform(-3, 3, n), "b": rng.uniform(-3, 3, n),
                          "c": rng.choice(["x", "y", "z"], n)})
    return frame, (frame.a > 0).astype(int).to_numpy()


def _cost_cases(budget):
    b = (-3.0, 3.0)
    kw = dict(budget=budget, random_state=0)
    ct = ColumnTransformer([("num", DPStandardScaler(bounds=b, epsilon=0.3, **kw), ["a", "b"]),
                            ("cat", OneHotEncoder(categories=[["x", "y", "z"]],
                                                  sparse_output=False), ["c"])])
    return {
        "logistic_estimated_norm": (DPLogisticRegression(classes=[0, 1], epsilon=0.9, **kw), False),
        "logistic_box": (DPLogisticRegression(classes=[0, 1], bounds_X=b, **kw), False),
        "linear": (DPLinearRegression(bounds_X=b, bounds_y=(0, 1), epsilon=0.6, **kw), False),
        "dp_pipeline": (make_pipeline(DPStandardScaler(bounds=b, epsilon=0.3, **kw),
                                      DPSGDClassifier(classes=[0, 1], max_iter=2, **kw)), False),
        "column_transformer": (make_pipeline(ct, DPGaussianNB(
            bounds=(-10, 10), classes=[0, 1], epsilon=0.5, **kw)), True),
        "search_total_epsilon": (DPGridSearchCV(
            make_pipeline(DPStandardScaler(bounds=b, epsilon=1.0),
                          DPLogisticRegression(classes=[0, 1], bounds_X=(-10, 10), epsilon=3.0)),
            {"dplogisticregression__C": [0.1, 1.0]}, epsilon=2.0, n_runs_mean=3,
            budget=budget, random_state=0), False),
    }


@pytest.mark.parametrize("case", ["logistic_estimated_norm", "logistic_box", "linear",
                                  "dp_pipeline", "column_transformer", "search_total_epsilon"])
def test_privacy_cost_reads_no_value_and_equals_the_charge(case):
    budget = PrivacyBudget(100.0, 1e-5)
    model, frame = _cost_cases(budget)[case]
    X, y = _frame() if frame else (np.random.default_rng(1).uniform(-3, 3, (600, 2)), None)
    if y is None:
        y = (X[:, 0] > 0).astype(int)
    cost = privacy_cost(model, _NoValues(X), _NoValues(y))
    assert len(budget) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    assert len(budget) == 1
    if case == "search_total_epsilon":  # the training part's size is random: within a hair
        assert cost.epsilon == pytest.approx(budget.spent()[0], rel=1e-3)
        assert budget.spent()[0] <= 2.0 * (1 + 1e-12)
    else:
        np.testing.assert_allclose(cost.curve.rdp, budget.total_curve().rdp, rtol=1e-12)


# == 3. DPPipeline ========================================================================
def _pipe_data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, (X[:, 0] > 0).astype(int)


def test_dp_pipeline_with_dpsgd_charges_its_probed_cost_once():
    """DP-SGD's curve depends on n (sampling rate batch/n): the reservation sees the same n."""
    X, y = _pipe_data()
    budget = PrivacyBudget(100.0, 1e-5)
    pipe = make_pipeline(DPStandardScaler(bounds=(-1, 1), epsilon=0.5, budget=budget),
                         DPSGDClassifier(epsilon=1.0, classes=[0, 1], max_iter=3, budget=budget,
                                         random_state=0))
    cost = privacy_cost(pipe, X, y)
    pipe.fit(X, y)
    assert len(budget) == 1
    np.testing.assert_allclose(budget.total_curve().rdp, cost.curve.rdp, rtol=1e-12)
    assert pipe[-1].budget is budget and pipe[0].budget is budget
    pickle.loads(pickle.dumps(pipe))


def test_dp_pipeline_bad_input_is_refused_before_the_reservation():
    X, y = _pipe_data()
    budget = PrivacyBudget(100.0, 1e-5)

    def pipe():
        return make_pipeline(DPStandardScaler(bounds=([-1] * 3, [1] * 3), epsilon=0.5,
                                              budget=budget),
                             DPLogisticRegression(classes=[0, 1], bounds_X=(-5, 5), budget=budget))

    X_nan = X.copy()
    X_nan[5, 1] = np.nan
    X_str = X.astype(object)
    X_str[7, 2] = "abc"
    for bX, by in [(X_nan, y), (X, np.where(y == 1, 2, 0)), (X[:, :2], y), (X, y[:-1]),
                   (X_str, y)]:
        with pytest.raises((ValueError, TypeError)):
            pipe().fit(bX, by)
    bad_param = pipe().set_params(dplogisticregression__max_iter=0)
    with pytest.raises(ValueError):
        bad_param.fit(X, y)
    assert len(budget) == 0


def _ct_pipe(budget):
    ct = ColumnTransformer([("sc", DPStandardScaler(bounds=(-1, 1), epsilon=0.5, budget=budget),
                             [0, 1]), ("rest", "passthrough", [2])])
    return make_pipeline(ct, DPGaussianNB(bounds=(-5, 5), classes=[0, 1], epsilon=0.5,
                                          budget=budget))


def test_dp_pipeline_gives_fitted_copies_their_budget_back():
    X, y = _pipe_data()
    budget = PrivacyBudget(100.0, 1e-5)
    pipe = _ct_pipe(budget).fit(X, y)
    assert len(budget) == 1
    fitted = pipe[0].transformers_[0][1]  # the ColumnTransformer's fitted clone
    assert fitted.budget is budget
    pickle.loads(pickle.dumps(pipe))


def test_dp_pipeline_returns_fitted_column_transformers_from_loky_workers():
    X, y = _pipe_data()
    budget = PrivacyBudget(100.0, 1e-5)
    result = cross_validate(_ct_pipe(budget), X, y, cv=3, n_jobs=2, return_estimator=True,
                            error_score="raise")
    assert len(budget) == 3 and len(result["estimator"]) == 3


def _frame_with_categories(n=600, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.uniform(-1, 1, n), "b": rng.uniform(-1, 1, n),
                          "c": rng.choice(["x", "y", "z"], n)})
    return frame, (frame.a > 0).astype(int).to_numpy()


def _encoded_pipe(budget, **encoder):
    ct = ColumnTransformer([
        ("num", DPStandardScaler(bounds=(-1, 1), epsilon=0.5, budget=budget), ["a", "b"]),
        ("cat", OneHotEncoder(categories=[["x", "y", "z"]], **encoder), ["c"])])
    return make_pipeline(ct, DPGaussianNB(bounds=(-5, 5), classes=[0, 1], epsilon=0.5,
                                          budget=budget))


def test_public_categories_of_an_object_column_are_accepted():
    """The placeholders of an object column are missing values, which an encoder with public
    categories and handle_unknown='error' refused: the reservation (and privacy_cost) failed
    on a pipeline whose real rows are all valid."""
    frame, y = _frame_with_categories()
    budget = PrivacyBudget(100.0, 1e-5)
    pipe = _encoded_pipe(budget, sparse_output=False)
    cost = privacy_cost(pipe, frame, y)
    pipe.fit(frame, y)
    assert len(budget) == 1
    np.testing.assert_allclose(budget.total_curve().rdp, cost.curve.rdp, rtol=1e-12)
    # An unknown category in the real rows is still refused, before the charge.
    bad = frame.copy()
    bad.loc[3, "c"] = "w"
    with pytest.raises(ValueError):
        _encoded_pipe(budget, sparse_output=False).fit(bad, y)
    assert len(budget) == 1


def test_dp_pipeline_never_fails_after_its_charge_on_data_dependent_widths():
    rng = np.random.default_rng(14)
    y = rng.integers(0, 2, 500)
    budget = PrivacyBudget(100.0, 1e-5)
    for n_categories in (2, 30):  # neighbouring choices of data: a few or many categories
        X = rng.integers(0, n_categories, size=(500, 1))
        pipe = make_pipeline(OneHotEncoder(sparse_output=False),
                             DPStandardScaler(bounds=(0, 1), epsilon=1.0, budget=budget),
                             DPGaussianNB(bounds=(-5, 5), classes=[0, 1], budget=budget))
        spent = len(budget)
        # The encoder reads its width from the values: refused before the charge, as it
        # would change the private steps' curves after it.
        with pytest.raises(ValueError, match="output width depends on the values"):
            pipe.fit(X, y)
        assert len(budget) == spent
        assert pipe[1].budget is budget


def test_dp_pipeline_accepts_a_column_transformer_stacking_dense_on_the_real_rows():
    frame, y = _frame_with_categories()
    budget = PrivacyBudget(100.0, 1e-5)
    ct = ColumnTransformer([("cat", OneHotEncoder(categories=[["x", "y", "z"]],
                                                  handle_unknown="ignore"), ["c"]),
                            ("num", "passthrough", ["a"])])
    pipe = make_pipeline(ct, DPGaussianNB(bounds=(-5, 5), classes=[0, 1], budget=budget))
    Pipeline(pipe.steps).fit(frame, y)  # the real rows stack dense: a plain Pipeline fits
    assert len(budget) == 1
    pipe.fit(frame, y)
    assert len(budget) == 2


# == 4. the private search's total epsilon ==============================================
def _search_data(n=1500, seed=0, shift=1.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.clip(rng.normal(size=(n, 2)) + shift * y[:, None], -3, 3)
    return X, y


_TWO_STEPS = make_pipeline(DPStandardScaler(bounds=(-3, 3), epsilon=1.0),
                           DPGaussianNB(bounds=(-5, 5), classes=[0, 1], epsilon=3.0))
_DPSGD = DPSGDClassifier(classes=[0, 1], epsilon=1.0, max_iter=2, batch_size=64)


_SEARCH_KW = [
    dict(), dict(refit=False), dict(n_runs_distribution="poisson", n_runs_mean=3.0),
    dict(n_runs_distribution="geometric", n_runs_mean=5.0), dict(delta=1e-7),
    dict(score_epsilon=0.05),
]


# Every option with the two-step pipeline; DP-SGD (whose plan calibrates each candidate's
# sigma by PLD at every trial scale, about 10 s a search here) with the default and another delta.
@pytest.mark.parametrize("estimator, grid, kw", [
    *[(_TWO_STEPS, {"dpgaussiannb__var_smoothing": [1e-9, 1e-2]}, kw) for kw in _SEARCH_KW],
    *[(_DPSGD, {"alpha": [1e-4, 1e-2]}, kw) for kw in (dict(), dict(delta=1e-7))],
])
def test_search_with_a_total_epsilon_charges_at_most_it(estimator, grid, kw):
    X, y = _search_data()
    budget = PrivacyBudget(100.0, 1e-6)
    search = DPGridSearchCV(clone(estimator), grid, epsilon=1.5, budget=budget,
                            random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert len(budget) == 1
    delta = kw.get("delta", 1e-6)  # the accounting δ: the search's, else the budget's
    charged = budget.total_curve()
    assert charged.epsilon(delta) <= 1.5 * (1 + 1e-12)
    assert search.epsilon_spent_ <= 1.5 * (1 + 1e-12) and search.delta_spent_ <= delta
    assert charged.epsilon(delta) >= 0.995 * 1.5  # the largest factor (to 0.01%) is used


def test_search_total_epsilon_is_chosen_from_public_inputs_only():
    """Two datasets of the same shape and labels, other values: the same per-run epsilons,
    and the steps keep the ratio of their own epsilons."""
    chosen = []
    for seed, shift in ((0, 1.0), (1, 3.0)):
        X, y = _search_data(seed=seed, shift=shift)
        search = DPGridSearchCV(clone(_TWO_STEPS), {"dpgaussiannb__var_smoothing": [1e-9]},
                                epsilon=1.0, n_runs_mean=3, random_state=0)
        search.fit(X, y)
        (params,) = search.candidates_
        chosen.append((params["dpstandardscaler__epsilon"], params["dpgaussiannb__epsilon"]))
    assert chosen[0] == chosen[1]
    assert chosen[0][1] == pytest.approx(3.0 * chosen[0][0], rel=1e-12)


def test_search_total_epsilon_too_small_is_refused_before_the_charge():
    X, y = _search_data()
    budget = PrivacyBudget(100.0, 1e-5)
    search = DPGridSearchCV(clone(_TWO_STEPS), {"dpgaussiannb__var_smoothing": [1e-9]},
                            epsilon=1e-4, score_epsilon=0.5, budget=budget, random_state=0)
    with pytest.raises(ValueError, match="too small"):
        search.fit(X, y)
    assert len(budget) == 0


# == 5. the ledger's cached connections ==================================================
def _in_thread(work):
    """Run ``work`` in a new thread whose cached ledger connection is closed when it ends."""
    out = []

    def run():
        try:
            out.append(("ok", work()))
        except BaseException as exc:  # re-raised in the caller
            out.append(("error", exc))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    gc.collect()  # the thread's connection (and its WAL, if it was the last) is closed
    kind, value = out[0]
    if kind == "error":
        raise value
    return value


def test_no_connection_to_the_ledger_stays_open_between_charges(tmp_path):
    # A connection open at a fork would let the child write a WAL the parent deletes
    # (test_a_child_keeps_its_charges_when_the_parents_connection_closes).
    budget = PrivacyBudget(10.0, 0.0, ledger=tmp_path / "ledger.sqlite")
    budget.charge(pure_dp_rdp(0.1))
    budget.spent()
    fds = pathlib.Path("/proc/self/fd")
    if not fds.exists():
        pytest.skip("needs /proc to list this process's open files")
    opened = [os.readlink(fd) for fd in fds.iterdir() if fd.is_symlink()]
    assert not [f for f in opened if f.startswith(str(tmp_path))]


def _charge_until_refused(budget, start, results):
    accepted = 0
    try:
        start.wait(60)
        accepted, _ = charge_until_refused(budget, pure_dp_rdp(0.1), 4,
                                           label=f"child {os.getpid()}")
    except BaseException as exc:
        results.put((accepted, repr(exc)))
    else:
        results.put((accepted, None))


def test_children_forked_while_the_parent_holds_a_connection_never_overspend(tmp_path):
    budget = PrivacyBudget(1.0, 0.0, ledger=tmp_path / "ledger.sqlite")
    budget.charge(pure_dp_rdp(0.1), label="parent")  # the parent's cached connection stays open
    start, results = FORK.Event(), FORK.Queue()
    children = [FORK.Process(target=_charge_until_refused, args=(budget, start, results))
                for _ in range(4)]
    for child in children:
        child.start()
    start.set()
    outcomes = [results.get(timeout=120) for _ in children]
    for child in children:
        child.join(60)
    assert [error for _, error in outcomes] == [None] * 4
    assert sum(a for a, _ in outcomes) == 9  # 10 charges of 0.1 fit in the cap of 1
    assert len(budget) == 10 == _in_thread(lambda: len(budget))
    assert budget.spent()[0] <= 1.0 * (1 + 1e-12)


def _child_charges_around_a_close(budget, first_done, parent_closed, results):
    try:
        for _ in range(3):
            budget.charge(pure_dp_rdp(0.01), label="child, before")
        first_done.set()
        parent_closed.wait(60)
        for _ in range(3):
            budget.charge(pure_dp_rdp(0.01), label="child, after")
        results.put((len(budget), None))
    except BaseException as exc:
        results.put((None, repr(exc)))


def test_a_child_keeps_its_charges_when_the_parents_connection_closes(tmp_path):
    budget = PrivacyBudget(100.0, 0.0, ledger=tmp_path / "ledger.sqlite")
    holding, release = threading.Event(), threading.Event()

    def parent_worker():  # e.g. a thread pool of the parent that charged, then ends
        budget.charge(pure_dp_rdp(0.01), label="parent")
        holding.set()
        release.wait(60)

    worker = threading.Thread(target=parent_worker)
    worker.start()
    holding.wait(60)
    first_done, parent_closed, results = FORK.Event(), FORK.Event(), FORK.Queue()
    child = FORK.Process(target=_child_charges_around_a_close,
                         args=(budget, first_done, parent_closed, results))
    child.start()
    first_done.wait(60)
    release.set()
    worker.join(60)
    gc.collect()  # the parent's connection of that thread is closed
    parent_closed.set()
    seen_by_child, error = results.get(timeout=60)
    child.join(60)
    assert error is None and seen_by_child == 7
    assert _in_thread(lambda: len(budget)) == 7  # every recorded charge is still there


def test_a_backup_copied_over_the_ledger_is_refused(tmp_path):
    path, backup = tmp_path / "ledger.sqlite", tmp_path / "backup.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    _in_thread(lambda: budget.charge(pure_dp_rdp(1.0), label="before the backup"))
    shutil.copy(path, backup)
    _in_thread(lambda: budget.charge(pure_dp_rdp(1.0), label="after the backup"))
    shutil.copy(backup, path)  # restored in place: the same device and inode
    with pytest.raises(LedgerMismatchError):
        _in_thread(lambda: budget.charge(pure_dp_rdp(1.0), label="on the restored file"))


def test_a_file_replaced_between_the_check_and_the_charge_never_takes_it(tmp_path, monkeypatch):
    path, copy = tmp_path / "ledger.sqlite", tmp_path / "copy.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    _in_thread(lambda: budget.charge(pure_dp_rdp(1.0), label="first"))
    shutil.copy(path, copy)
    original = _ledger._open

    def replaced_now(p, **kwargs):  # another program moves a copy over the ledger at this instant
        if copy.exists():
            os.replace(copy, p)
        return original(p, **kwargs)

    monkeypatch.setattr(_ledger, "_open", replaced_now)
    with pytest.raises(LedgerMismatchError):
        _in_thread(lambda: budget.charge(pure_dp_rdp(1.0), label="second"))
