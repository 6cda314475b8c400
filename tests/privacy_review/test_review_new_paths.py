"""Privacy review of the recently added paths.

The DP-SGD schedule with a noisy row count, the private bounds of
DPLinearRegression and DPSGDRegressor, the refit share of the private search,
the trees and boosting (exponential-mechanism splits, Gaussian leaves, zCDP
accounting), DPPCA and DPKMeans. The review confirmed two defects, both fixed:
an invalid or negative ``random_state`` was refused after the charge in DP-SGD
and DPLogisticRegression (bad input cost budget). The other tests pin the
properties that hold.
"""

import itertools
import math
import warnings

import numpy as np
import pytest

from skdp import NoisyEstimateWarning, PrivacyBudget, accounting
from skdp._dpsgd._engine import count_noise_multiplier, dpsgd_privacy
from skdp.cluster import DPKMeans
from skdp.decomposition import DPPCA
from skdp.decomposition._pca import COUNT_SHARE, MOMENT_SHARE, SUM_SHARE, clip_rows
from skdp.ensemble import DPHistGradientBoostingClassifier, DPHistGradientBoostingRegressor
from skdp.ensemble._hist_gradient_boosting._privacy import plan_boosting
from skdp.linear_model import DPLinearRegression, DPSGDClassifier, DPSGDRegressor
from skdp.linear_model._linear import _clipped_design
from skdp.model_selection import DPGridSearchCV
from skdp.linear_model import DPLogisticRegression
from skdp.stats._range import _bounds_curve
from skdp.tree import DPDecisionTreeClassifier
from skdp.tree._histogram import SparseBins
from skdp.tree._zcdp import calibrate_rho

DELTA = 1e-5


# -- 1. DP-SGD default schedule with a noisy count ------------------------------------

@pytest.mark.parametrize("eps, q, steps, fixed_eps", [
    (0.3, 0.01, 200, None), (1.0, 0.01, 500, None), (4.0, 0.1, 30, None),
    (1.0, 0.01, 200, 0.1), (8.0, 0.01, 100, 0.8),
])
def test_dpsgd_calibration_is_within_and_tight(eps, q, steps, fixed_eps):
    fixed = None if fixed_eps is None else _bounds_curve(fixed_eps, DELTA, 1)
    sigma, sigma_c, curve = dpsgd_privacy(q, steps, epsilon=eps, delta=DELTA, count=True,
                                          fixed=fixed)
    # the charged curve is exactly fixed + count Gaussian (sensitivity 1) + the steps
    parts = (accounting.gaussian_rdp(count_noise_multiplier(sigma, q, steps))
             + accounting.poisson_subsampled_gaussian_rdp(q, sigma, steps))
    parts = parts if fixed is None else fixed + parts
    assert sigma_c == count_noise_multiplier(sigma, q, steps)
    assert accounting.epsilon_of(curve, DELTA) == pytest.approx(
        accounting.epsilon_of(parts, DELTA), rel=1e-12)
    assert accounting.epsilon_of(curve, DELTA) <= eps
    # tight to the bisection's rtol (1e-3): a slightly smaller sigma overspends
    smaller = accounting.poisson_subsampled_gaussian_rdp(q, sigma / 1.0011, steps)
    smaller = accounting.gaussian_rdp(count_noise_multiplier(sigma / 1.0011, q, steps)) + smaller
    smaller = smaller if fixed is None else fixed + smaller
    assert accounting.epsilon_of(smaller, DELTA) > eps


def _toy(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, (X[:, 0] > 0).astype(int)


def test_dpsgd_default_depends_on_n_only_through_the_drawn_count():
    fits = {}
    for n in (200, 201):
        X, y = _toy(n)
        fits[n] = DPSGDClassifier(epsilon=1.0, classes=[0, 1], max_iter=1,
                                  random_state=7).fit(X, y)
    a, b = fits[200], fits[201]
    assert a.noise_multiplier_ == b.noise_multiplier_
    assert a.n_steps_ == b.n_steps_ == 100 and a.sampling_rate_ == b.sampling_rate_ == 0.01
    assert a.epsilon_spent_ == b.epsilon_spent_ <= 1.0
    # The divisor is q (n + sigma_c N(0, 1)), the count's noise being the first draw of
    # the fit's generator: the std drawn is the sigma_c of the charged curve.
    sigma_c = count_noise_multiplier(a.noise_multiplier_, 0.01, a.n_steps_)
    z = np.random.default_rng(7).standard_normal()
    for n, fit in fits.items():
        assert fit.batch_size_ == pytest.approx(max(0.01 * (n + sigma_c * z), 1.0), rel=1e-12)


@pytest.mark.parametrize("est", [DPSGDRegressor, DPSGDClassifier, DPLogisticRegression])
def test_bad_random_state_is_refused_before_the_charge(est):
    X, y = _toy(60)
    budget = PrivacyBudget(10.0, DELTA)
    kw = {"bounds_y": (-1, 1)} if est is DPSGDRegressor else {"classes": [0, 1]}
    if est is DPLogisticRegression:
        kw["data_norm"] = 3.0
    else:
        kw["max_iter"] = 1
    with pytest.raises(ValueError, match="random_state"):
        est(epsilon=1.0, budget=budget, random_state="seed", **kw).fit(X, y)
    assert len(budget) == 0


def test_dpsgd_regressor_private_target_bounds_within_epsilon():
    X, _ = _toy(300)
    y = 3.0 * X[:, 0]
    reg = DPSGDRegressor(epsilon=1.0, max_iter=1, random_state=0).fit(X, y)
    assert accounting.epsilon_of(reg.privacy_curve_, DELTA) <= 1.0
    fixed = _bounds_curve(0.1, DELTA, 1)
    _, _, curve = dpsgd_privacy(0.01, reg.n_steps_, epsilon=1.0, delta=DELTA, count=True,
                                fixed=fixed)
    assert reg.epsilon_spent_ == pytest.approx(accounting.epsilon_of(curve, DELTA), rel=1e-12)


# -- 2. DPLinearRegression: sensitivity of the rows as clipped to released bounds -----

def _upper_norm(Z):
    """||upper triangle of z z^T without the (y, y) entry|| per row."""
    out = []
    for z in Z:
        m = np.outer(z, z)[np.triu_indices(z.size)]
        out.append(math.sqrt(max(np.sum(m**2) - z[-1] ** 4, 0.0)))
    return np.array(out)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("kw", [{}, {"data_norm": 1.5}, {"bounds_y": (-3.0, 1.0)},
                                {"bounds_X": ([-1.0, 0.0, 2.0], [3.0, 0.5, 2.5])}])
def test_linear_sensitivity_covers_every_clipped_row(fit_intercept, kw):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 3)) * [1.0, 4.0, 0.2] + [0.0, 1.0, 5.0]
    y = X @ [1.0, -0.5, 2.0] + rng.normal(size=2000)
    budget = PrivacyBudget(100.0, DELTA)
    reg = DPLinearRegression(epsilon=1.0, fit_intercept=fit_intercept, budget=budget,
                             random_state=0, **kw).fit(X, y)
    assert len(budget) == 1 and budget.spent()[0] <= 1.0
    assert accounting.epsilon_of(reg.privacy_curve_, DELTA) <= 1.0
    clipper, centre, scale, sens = reg._design(reg.bounds_X_, kw.get("data_norm"),
                                               reg.bounds_y_, 3)
    assert sens == reg.sensitivity_
    # extreme rows: every corner of a box far beyond any released bound, and y at both ends
    corners = np.array(list(itertools.product([-1e6, 1e6, 0.0], repeat=3)))
    rows = np.repeat(corners, 2, axis=0)
    ys = np.tile([-1e6, 1e6], len(corners))
    Z = _clipped_design(rows, ys, clipper=clipper, bounds_y=reg.bounds_y_, centre=centre,
                        scale=scale, fit_intercept=fit_intercept)
    norms = _upper_norm(Z)
    assert norms.max() <= reg.sensitivity_ * (1 + 1e-12)
    if "data_norm" not in kw:  # the box bound is attained at a corner
        assert norms.max() == pytest.approx(reg.sensitivity_, rel=1e-9)


@pytest.mark.parametrize("X, y", [
    (np.zeros((40, 2)), np.zeros(40)),
    (np.full((40, 2), 3.0), np.full(40, 7.0)),
    (np.random.default_rng(0).normal(size=(300, 2)) * 1e200,
     np.random.default_rng(1).normal(size=300) * 1e250),
    (np.random.default_rng(0).normal(size=(300, 2)) * 1e-40, np.zeros(300)),
])
def test_linear_private_bounds_never_raise_after_the_charge(X, y):
    for fit_intercept in (True, False):
        budget = PrivacyBudget(100.0, DELTA)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            # on 40 to 300 rows the target's private range may rest on no bin that stands
            # out of the noise: a warning of released values, not an error
            warnings.simplefilter("ignore", NoisyEstimateWarning)
            reg = DPLinearRegression(epsilon=1.0, fit_intercept=fit_intercept, budget=budget,
                                     random_state=0).fit(X, y)
        assert len(budget) == 1
        assert np.all(np.isfinite(reg.coef_)) and np.isfinite(reg.intercept_)


# -- 3. the private search with a total epsilon ---------------------------------------

@pytest.mark.parametrize("refit", [True, False])
def test_search_total_epsilon_is_a_cap(refit):
    X, y = _toy(400, seed=2)
    budget = PrivacyBudget(100.0, DELTA)
    search = DPGridSearchCV(DPLogisticRegression(classes=[0, 1], data_norm=5.0),
                            {"C": [0.1, 1.0]}, epsilon=0.5, n_runs_mean=2.0, refit=refit,
                            budget=budget, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert len(budget) == 1
    assert budget.spent()[0] <= 0.5 * (1 + 1e-9)


# -- 4. trees and boosting ------------------------------------------------------------

def _scores(bins, node, n_nodes, g):
    G, Gt = bins.histograms(node, n_nodes, g)
    GL = np.cumsum(G, axis=2)[:, :, :-1]
    return np.abs(GL) + np.abs(Gt[:, None, None] - GL)


def test_split_score_sensitivity_is_one_under_add_remove():
    rng = np.random.default_rng(5)
    n, d, n_bins = 300, 3, 8
    binned = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    g = rng.choice([-1.0, 1.0], size=n) * rng.uniform(0.5, 1.0, size=n)
    node = rng.integers(0, 2, size=n)
    full = _scores(SparseBins(binned, n_bins), node, 2, g)
    worst = 0.0
    for i in range(0, n, 7):  # remove row i (the others' gradients are fixed by the releases)
        keep = np.arange(n) != i
        part = _scores(SparseBins(binned[keep], n_bins), node[keep], 2, g[keep])
        worst = max(worst, np.abs(full - part).max())
    assert worst <= 1.0 + 1e-12
    assert worst > 0.5  # the bound is nearly reached


def test_multiclass_gradient_and_hessian_sensitivities():
    rng = np.random.default_rng(0)
    for k in (3, 4, 7):
        p = rng.dirichlet(np.full(k, 0.3), size=20000)
        p = np.vstack([p, np.eye(k), np.full((1, k), 1.0 / k),
                       np.r_[[0.5, 0.5], np.zeros(k - 2)][None, :]])
        for c in range(k):
            grad = p - np.eye(k)[c]
            assert np.sqrt((grad**2).sum(axis=1)).max() <= math.sqrt(2.0) + 1e-12
        assert np.sqrt(((p * (1 - p)) ** 2).sum(axis=1)).max() <= 0.5


def test_boosting_plan_parts_sum_to_the_calibrated_rho():
    for eps in (0.3, 1.0, 5.0):
        plan = plan_boosting(eps, DELTA)
        rho = calibrate_rho(eps, DELTA)
        assert (plan.rho_count + plan.rho_split + plan.rho_grad + plan.rho_hess
                == pytest.approx(rho, rel=1e-12))
        assert accounting.epsilon_of(plan.curve(), DELTA) <= eps
        levels, rounds = 20 * 3 * 2, 20
        assert levels * plan.split_epsilon(levels) ** 2 / 8 == pytest.approx(plan.rho_split)
        s_g, s_h = plan.leaf_stds(rounds, math.sqrt(2.0), 0.5)
        assert rounds * 2.0 / (2 * s_g**2) == pytest.approx(plan.rho_grad)
        assert rounds * 0.25 / (2 * s_h**2) == pytest.approx(plan.rho_hess)


def test_tree_and_boosting_bins_and_cost_come_from_public_bounds():
    rng = np.random.default_rng(1)
    fits = []
    for scale in (1.0, 100.0):
        X = rng.uniform(0, scale, size=(300, 2))
        y = (X[:, 0] > scale / 2).astype(int)
        fits.append((DPHistGradientBoostingClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1],
                                                      max_iter=2, random_state=0).fit(X, y),
                     DPHistGradientBoostingRegressor(epsilon=1.0, bounds=(0, 1),
                                                     bounds_y=(0, 1), max_iter=2,
                                                     random_state=0).fit(X, X[:, 0]),
                     DPDecisionTreeClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1],
                                              random_state=0).fit(X, y)))
    for a, b in zip(*fits):
        np.testing.assert_array_equal(a.bin_edges_, b.bin_edges_)
        assert a.epsilon_spent_ == b.epsilon_spent_ <= 1.0
        assert a.split_epsilon_ == b.split_epsilon_ and a.leaf_noise_std_ == b.leaf_noise_std_


# -- 5. DPPCA and DPKMeans ------------------------------------------------------------

@pytest.mark.parametrize("data_norm", [None, 1.0])
def test_pca_release_has_unit_sensitivity_once_weighted(data_norm):
    assert COUNT_SHARE + SUM_SHARE + MOMENT_SHARE == pytest.approx(1.0)
    bounds = (np.array([-1.0, 0.0, 2.0]), np.array([3.0, 0.5, 2.5]))
    corners = np.array(list(itertools.product([-1e6, 1e6, 0.0], repeat=3)))
    Y, _, C = clip_rows(corners, bounds, data_norm)
    assert np.sqrt((Y**2).sum(axis=1)).max() <= C * (1 + 1e-12)
    iu = np.triu_indices(3)
    moments = np.array([np.outer(r, r)[iu] for r in Y])
    assert np.sqrt((moments**2).sum(axis=1)).max() <= C * C * (1 + 1e-12)


def test_pca_and_kmeans_cost_and_schedule_do_not_read_the_data():
    rng = np.random.default_rng(2)
    out = []
    for shift in (0.0, 3.0):
        X = rng.normal(shift, 1.0, size=(500, 3))
        out.append((DPPCA(n_components=2, epsilon=1.0, random_state=0).fit(X),
                    DPKMeans(n_clusters=3, epsilon=1.0, max_iter=3, random_state=0).fit(X)))
    for a, b in zip(*out):
        assert a.epsilon_spent_ == b.epsilon_spent_ <= 1.0
    assert out[0][1].n_iter_ == out[1][1].n_iter_ == 3


def test_negative_seed_gets_a_clear_error_and_costs_nothing():
    X, y = _toy(60)
    budget = PrivacyBudget(10.0, DELTA)
    with pytest.raises(ValueError, match="random_state"):
        DPSGDClassifier(epsilon=1.0, classes=[0, 1], max_iter=1, budget=budget,
                        random_state=-1).fit(X, y)
    assert len(budget) == 0
