import itertools
import math

import numpy as np
import pytest
from scipy import linalg, stats
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp import BudgetExceededError, PrivacyBudget
from skdp.accounting import RDPCurve, calibrate_noise_multiplier, gaussian_rdp
from skdp.mechanisms import GaussianMechanism
from skdp.stats._range import split_curve
from skdp.utils import check_bounds
from skdp.linear_model._linear import (
    DPLinearRegression,
    _gram_sensitivity,
    _adaptive_ridge,
    _clipped_gradient_sum,
    _gradient_clip,
    _gradient_norm_counts,
    _perturbed_gram,
    _psd_solver,
    _step_plan,
    _step_shares,
)
from _testing import (
    assert_bad_input_costs_nothing,
    assert_charges_once,
    assert_refused_fit_fits_nothing,
)

BOUNDS = dict(bounds_X=(-10.0, 10.0), bounds_y=(-100.0, 100.0))


def _data(n=500, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = X @ np.arange(1.0, d + 1) + 0.3 + rng.normal(0, 0.1, n)
    return X, y


def _expected_failed_checks(estimator):
    if estimator.epsilon == math.inf:
        return {}  # without noise it is LinearRegression and passes every check
    return {
        "check_regressors_train": "asks R² > 0.5 on 150 rows scaled to unit variance; the "
        "noise of a DP fit at epsilon=1 with public bounds (-10, 10) is far larger on so "
        "few rows (test_dp_fit_is_accurate checks accuracy on enough rows)",
    }


@parametrize_with_checks(
    [
        DPLinearRegression(epsilon=math.inf, random_state=0, **BOUNDS),
        DPLinearRegression(epsilon=1.0, random_state=0, **BOUNDS),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_epsilon_inf_matches_sklearn(fit_intercept):
    X, y = _data()
    X[:, 0] += 3.0  # off-centre, so the intercept matters
    ours = DPLinearRegression(epsilon=math.inf, fit_intercept=fit_intercept, **BOUNDS).fit(X, y)
    ref = LinearRegression(fit_intercept=fit_intercept).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=0, atol=1e-8)
    assert ours.ridge_ == 0.0 and ours.noise_multiplier_ == 0.0
    assert ours.privacy_curve_ == RDPCurve.non_private()


def test_charges_once_with_the_gaussian_curve():
    X, y = _data()
    est = DPLinearRegression(epsilon=0.7, delta=1e-6, random_state=0, **BOUNDS)
    sigma = calibrate_noise_multiplier(0.7, 1e-6)
    fitted = assert_charges_once(est, X, y, expected_curve=gaussian_rdp(sigma), delta=1e-6)
    assert fitted.epsilon_spent_ == pytest.approx(0.7, rel=1e-3)
    assert fitted.epsilon_spent_ <= 0.7 * (1 + 1e-9)
    assert fitted.noise_multiplier_ == sigma
    # epsilon=inf charges the non-private curve, which a finite budget refuses.
    assert_charges_once(est.set_params(epsilon=math.inf), X, y,
                        expected_curve=RDPCurve.non_private(), budget_epsilon=math.inf)


def test_bad_input_costs_nothing():
    X, y = _data(n=50)
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    y_inf = y.copy()
    y_inf[0] = np.inf
    assert_bad_input_costs_nothing(
        DPLinearRegression(**BOUNDS), X, y,
        bad_params=[
            {"epsilon": 0.0}, {"epsilon": -1.0}, {"epsilon": float("nan")},
            {"delta": 0.0}, {"delta": 1.0}, {"delta": -0.1},
            {"bounds_X": (1.0, -1.0)},
            {"bounds_y": (5.0, 4.0)}, {"bounds_X": ([0, 0], [1, 1])},
            {"ridge": -1.0}, {"ridge": "large"}, {"fit_intercept": "yes"},
        ],
        bad_data=[(X_nan, y), (X, y_inf), (X, y[:-1])],
    )


def test_without_bounds_private_bounds_are_in_the_one_charge():
    # No bounds_X, data_norm or bounds_y: private bounds of the d + 1 columns take half
    # of epsilon (skdp.stats.bounds, split_curve), the Gram release the rest, one charge.
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(20000, 3))
    y = X @ [1.0, -2.0, 0.5] + 4.0 + rng.normal(0, 0.5, 20000)
    budget = PrivacyBudget(100.0, 1e-5)
    reg = DPLinearRegression(epsilon=1.0, budget=budget, random_state=0).fit(X, y)

    def stat_curve(e):
        return gaussian_rdp(calibrate_noise_multiplier(e, 1e-5, accountant="rdp"))

    _, stat_epsilon, curve = split_curve(1.0, 1e-5, 4, stat_curve)
    assert len(budget) == 1 and budget.ledger[0].curve == curve
    assert reg.noise_multiplier_ == calibrate_noise_multiplier(stat_epsilon, 1e-5, accountant="rdp")
    assert reg.epsilon_spent_ <= 1.0
    # power-of-two bins: each released range holds the data and is within a factor 2
    lower, upper = reg.bounds_X_
    assert np.all(lower <= -2.9) and np.all(lower >= -8) and np.all(upper >= 2.9) and np.all(upper <= 8)
    assert reg.bounds_y_[0] <= np.quantile(y, 0.01) and reg.bounds_y_[1] >= np.quantile(y, 0.99)
    assert reg.score(X, y) > 0.95
    # at epsilon = inf: the exact ranges, and scikit-learn's least squares
    exact = DPLinearRegression(epsilon=np.inf).fit(X, y)
    np.testing.assert_allclose(exact.coef_, LinearRegression().fit(X, y).coef_, rtol=1e-8)
    assert exact.bounds_y_ == (y.min(), y.max())


def test_refused_fit_fits_nothing():
    X, y = _data(n=50)
    est = DPLinearRegression(epsilon=1.0, **BOUNDS)
    assert_refused_fit_fits_nothing(est, X, y)
    # A refused refit of a fitted estimator leaves it unfitted, not half-fitted.
    est.fit(X, y)
    budget = PrivacyBudget(0.01, 1e-5)
    with pytest.raises(BudgetExceededError):
        est.set_params(budget=budget).fit(X[:, :2], y)
    assert len(budget) == 0
    with pytest.raises(NotFittedError):
        est.predict(X)


def _released_vector(Z):
    q = Z.shape[1]
    rows, cols = np.triu_indices(q)
    keep = ~((rows == q - 1) & (cols == q - 1))
    return (Z.T @ Z)[rows[keep], cols[keep]]


def test_sensitivity_is_attained_and_never_exceeded():
    lower, upper = np.array([-1.0, 0.0, -3.0]), np.array([2.0, 0.5, 1.0])
    m = np.maximum(np.abs(lower), np.abs(upper))
    # Box only: z = (x0, x1, y) without intercept, y in [-3, 1] (m_y = 3).
    delta = _gram_sensitivity(m[:2], 3.0, intercept=False)
    # Attained at the vertex of largest magnitudes ...
    vertex = np.where(np.abs(lower) > np.abs(upper), lower, upper)
    assert np.linalg.norm(_released_vector(vertex[None, :])) == pytest.approx(delta, rel=1e-12)
    # ... and no vertex or random point of the box exceeds it.
    for v in itertools.product(*zip(lower, upper)):
        assert np.linalg.norm(_released_vector(np.array(v)[None, :])) <= delta * (1 + 1e-12)
    rng = np.random.default_rng(1)
    Z = rng.uniform(lower, upper, size=(40, 3))
    for z in rng.uniform(lower, upper, size=(200, 3)):  # add one row to Z
        diff = _released_vector(np.vstack([Z, z])) - _released_vector(Z)
        assert np.linalg.norm(diff) <= delta * (1 + 1e-12)
    # It is below the simple bound ||z||² (the Frobenius norm of z zᵀ).
    assert delta < np.sum(m**2)


def test_sensitivity_of_the_estimator():
    # The target is mapped onto [-1, 1] by its bounds, so m_y = 1 in the sensitivity. With an
    # intercept and no data_norm, rows are centred at the box's midpoint (0, 0.5), so the
    # sensitivity is that of the half-widths (1, 2.5), not of max(|lower|, |upper|) = (1, 3).
    X, y = _data(n=30, d=2)
    est = DPLinearRegression(bounds_X=([-1, -2], [1, 3]), bounds_y=(-5, 4), random_state=0)
    est.fit(X, y)
    assert est.sensitivity_ == pytest.approx(_gram_sensitivity([1, 2.5], 1.0))
    t = [1, 6.25, 1, 1]  # z² at the worst centred row (1, 2.5, 1, 1)
    assert est.sensitivity_ == pytest.approx(math.sqrt((sum(t) ** 2 + sum(v**2 for v in t)) / 2 - 1))
    assert est.data_norm_ == pytest.approx(math.sqrt(1 + 2.5**2))
    # Without an intercept nothing can absorb a shift: no centring.
    est.set_params(fit_intercept=False).fit(X, y)
    assert est.sensitivity_ == pytest.approx(_gram_sensitivity([1, 3], 1.0, intercept=False))
    assert est.data_norm_ == pytest.approx(math.sqrt(1 + 3**2))


def test_centring_at_the_box_midpoint_cuts_the_sensitivity_of_a_unit_box():
    # 57 columns in [0, 1]: centred, every entry is within 1/2 of the midpoint, so
    # ||x'||² <= 57/4 and the Gram sensitivity (about ||x'||²) falls about 4-fold.
    rng = np.random.default_rng(0)
    X, y = rng.uniform(0, 1, (50, 57)), rng.uniform(0, 1, 50)
    est = DPLinearRegression(bounds_X=(0, 1), bounds_y=(0, 1), random_state=0).fit(X, y)
    assert est.sensitivity_ == pytest.approx(_gram_sensitivity(np.full(57, 0.5), 1.0))
    assert est.sensitivity_ < 0.3 * _gram_sensitivity(np.ones(57), 1.0)


def test_noise_scale_matches_the_formula():
    # Noise of each released entry of the perturbed Gram matrix: N(0, s²) with s = σΔ.
    X, y = _data(n=100, d=2)
    est = DPLinearRegression(epsilon=2.0, delta=1e-5, random_state=0, **BOUNDS).fit(X, y)
    s = est.noise_multiplier_ * est.sensitivity_
    Z = np.hstack([X, np.ones((100, 1)), y[:, None]])
    exact = Z.T @ Z
    rng = np.random.default_rng(3)
    mechanism = GaussianMechanism(noise_multiplier=est.noise_multiplier_,
                                  sensitivity=est.sensitivity_)
    draws = np.array([_perturbed_gram(exact, mechanism, rng) - exact for _ in range(1000)])
    assert np.allclose(draws, np.swapaxes(draws, 1, 2))  # symmetric
    rows, cols = np.triu_indices(4)
    keep = ~((rows == 3) & (cols == 3))
    noise = draws[:, rows[keep], cols[keep]].ravel()  # 9 000 i.i.d. N(0, s²) values
    k = noise.size
    # Σ noise² / s² ~ χ²(k): accept between its 1e-6 and 1 − 1e-6 quantiles.
    statistic = np.sum(noise**2) / s**2
    assert stats.chi2.ppf(1e-6, k) < statistic < stats.chi2.ppf(1 - 1e-6, k)
    # The mean is 0: |mean| / (s/√k) is N(0, 1); accept within 5 standard errors.
    assert abs(noise.mean()) < 5 * s / math.sqrt(k)
    # Independent entries: correlation between two entries within 5/√n of 0.
    a, b = draws[:, 0, 1], draws[:, 1, 2]
    assert abs(np.corrcoef(a, b)[0, 1]) < 5 / math.sqrt(a.size)


def test_solve_handles_an_indefinite_matrix():
    A = np.array([[1.0, 0.0], [0.0, -2.0]])
    b = np.array([1.0, 1.0])
    # Negative eigenvalue clipped to 0; the ridge makes it invertible.
    np.testing.assert_allclose(_psd_solver(linalg.eigh(A), 0.5)(b), [1 / 1.5, 1 / 0.5])
    # Without ridge: the pseudo-inverse drops the null direction.
    np.testing.assert_allclose(_psd_solver(linalg.eigh(A), 0.0)(b), [1.0, 0.0])


def test_adaptive_ridge_rule():
    # λ = max(0, B − max(0, λ_min(A) − B)): B when A is singular, falling to 0 at λ_min(A) = 2B.
    B = 3.0
    assert _adaptive_ridge(np.array([0.0, 10.0]), B) == B
    assert _adaptive_ridge(np.array([-5.0, 10.0]), B) == B
    assert _adaptive_ridge(np.array([4.0, 10.0]), B) == pytest.approx(2.0)
    assert _adaptive_ridge(np.array([6.0, 10.0]), B) == 0.0
    assert _adaptive_ridge(np.array([10.0, 60.0]), B) == 0.0


def test_auto_ridge_is_adassp_with_the_released_lambda_min():
    X, y = _data(n=100, d=2)
    est = DPLinearRegression(epsilon=1.0, refine_steps=0, random_state=0, **BOUNDS).fit(X, y)
    s, q = est.noise_multiplier_ * est.sensitivity_, 3
    bound = s * math.sqrt(q * math.log(2 * q**2 / 0.05))
    # 100 rows in a box of half-width 10: XᵀX is small next to the noise, and the bound
    # (about 700) far above 0.4 times the count: the full bound.
    assert est.ridge_ == pytest.approx(bound)
    # With refinement steps the Gram matrix gets 0.3 of 1/σ²: its noise is 1/√0.3 times larger.
    refined = DPLinearRegression(epsilon=1.0, random_state=0, **BOUNDS).fit(X, y)
    assert refined.noise_multiplier_ == est.noise_multiplier_
    assert refined.ridge_ == pytest.approx(bound / math.sqrt(0.3))
    assert DPLinearRegression(ridge=2.5, **BOUNDS).fit(X, y).ridge_ == 2.5
    # Many well-spread rows: λ_min(XᵀX) far above 2B, so no ridge is added (no over-shrinking).
    rng = np.random.default_rng(0)
    Xl = rng.uniform(-1, 1, (200_000, 2))
    yl = Xl @ [1.0, -1.0] + rng.normal(0, 0.1, 200_000)
    big = DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-3, 3), random_state=0)
    assert big.fit(Xl, yl).ridge_ == 0.0


def test_dp_fit_is_accurate():
    # With many rows the noise is small relative to XᵀX: coefficients come out close.
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(50_000, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.25 + rng.normal(0, 0.1, 50_000)
    est = DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-5, 5), random_state=0)
    est.fit(X, y)
    np.testing.assert_allclose(est.coef_, [1.0, -2.0, 0.5], atol=0.05)
    assert est.intercept_ == pytest.approx(0.25, abs=0.05)
    assert est.score(X, y) > 0.95


def test_clips_to_the_bounds():
    X, y = _data(n=200, d=1)
    X_out = X.copy()
    X_out[0, 0] = 1e6
    kw = dict(epsilon=math.inf, bounds_X=(-1, 1), bounds_y=(-5, 5))
    a = DPLinearRegression(**kw).fit(X_out, y)
    b = DPLinearRegression(**kw).fit(np.clip(X_out, -1, 1), y)
    np.testing.assert_allclose(a.coef_, b.coef_)


def test_reproducible_with_seed_and_different_without():
    X, y = _data(n=100)
    a = DPLinearRegression(random_state=5, **BOUNDS).fit(X, y).coef_
    b = DPLinearRegression(random_state=5, **BOUNDS).fit(X, y).coef_
    c = DPLinearRegression(random_state=None, **BOUNDS).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_refinement_gradient_sum_moves_by_at_most_the_clip():
    """One row changes the released gradient sum by at most C in L2 (its sensitivity), and
    extreme rows reach C; one row is one count of the norm histogram."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-10, 10, (50, 3))
    X[:5] = [[-10, 10, 10], [10, 10, -10], [1e6, -1e6, 3], [0, 0, 0], [-10, -10, -10]]
    y = rng.uniform(-100, 100, 50)
    y[:3] = [1e9, -1e9, 100]
    reg = DPLinearRegression(epsilon=1.0, bounds_X=(-10, 10), bounds_y=(-100, 100))
    clipper, centre, scale, _ = reg._design(check_bounds((-10, 10), 3, name="b"), None,
                                            (-100.0, 100.0), 3)
    rows = dict(clipper=clipper, bounds_y=(-100.0, 100.0), centre=centre, scale=scale,
                fit_intercept=True)
    theta = np.array([0.3, -2.0, 5.0, 0.1])
    clip = 0.25
    per_row = np.array([_clipped_gradient_sum(X[i:i + 1], y[i:i + 1], theta=theta, clip=clip,
                                              **rows) for i in range(len(X))])
    norms = np.linalg.norm(per_row, axis=1)
    assert norms.max() <= clip * (1 + 1e-12) and norms.max() >= clip * (1 - 1e-12)
    np.testing.assert_allclose(per_row.sum(axis=0),
                               _clipped_gradient_sum(X, y, theta=theta, clip=clip, **rows))
    counts = [_gradient_norm_counts(X[i:i + 1], y[i:i + 1], theta=theta, **rows)
              for i in range(len(X))]
    assert all(c.sum() == 1 and np.count_nonzero(c) == 1 for c in counts)


def test_refinement_clip_is_the_quantile_of_the_noisy_counts():
    grid_size = 17
    counts = np.zeros(grid_size + 1)
    counts[[4, 6]] = [69.0, 31.0]  # 69% of the mass in bin 4, the rest in bin 6
    assert _gradient_clip(counts) == 2.0**-6  # bin 6 is (2^-7, 2^-6]: the 0.7 quantile
    counts[4] = 80.0  # 80 of 111
    assert _gradient_clip(counts) == 2.0**-8
    assert _gradient_clip(-np.ones(grid_size + 1)) == 2.0**4  # no mass: the top of the grid
    np.testing.assert_allclose(_step_shares(4), [0.1, 0.2, 0.3, 0.4])


def test_refinement_steps_improve_collinear_fits_and_leave_epsilon_inf_alone():
    # Two nearly collinear columns and a loose public target range: the one noisy Gram
    # matrix alone blurs the coefficients (R² 0.91-0.98 over the seeds); the steps reach
    # the exact least squares' R² at the same charge.
    rng = np.random.default_rng(0)
    n = 20_000
    t = rng.uniform(0, 1, n)
    X = np.column_stack([t, np.clip(t + rng.normal(0, 0.05, n), 0, 1), rng.uniform(0, 1, n)])
    y = 3 * X[:, 0] - 2 * X[:, 1] + X[:, 2] + rng.normal(0, 0.05, n)
    best = LinearRegression().fit(X, y).score(X, y)
    kw = dict(epsilon=0.5, bounds_X=(0, 1), bounds_y=(-10, 10))
    plain = [DPLinearRegression(refine_steps=0, random_state=s, **kw).fit(X, y).score(X, y)
             for s in range(4)]
    refined = [DPLinearRegression(random_state=s, **kw).fit(X, y).score(X, y) for s in range(4)]
    assert min(refined) > best - 0.003
    assert np.mean(refined) > np.mean(plain) + 0.02
    a = DPLinearRegression(**dict(kw, epsilon=math.inf)).fit(X, y)
    b = DPLinearRegression(refine_steps=0, **dict(kw, epsilon=math.inf)).fit(X, y)
    assert a.gradient_clip_ is None
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_step_plan_takes_the_long_schedule_from_the_released_count():
    """refine_steps="auto": 8 steps with shares ∝ t and the solve's ridge, or, where the
    released count (the intercept's diagonal entry) is at least 400 σ, 128 equal steps, the
    ridge raised to 2·s·√q and the last 64 iterates averaged; an int is always the short
    schedule, and without an intercept there is no count."""
    sigma, sd, ridge = 2.0, 3.0, 1.5
    gram = np.zeros((5, 5))  # q = 4: three features and the intercept, then the target

    def plan(steps, ridge, *rest):  # from the matrix as it is at the call
        return _step_plan(steps, gram, linalg.eigvalsh(gram[:-1, :-1]), ridge, *rest)

    gram[3, 3] = 400 * sigma - 1e-9
    shares, step_ridge, averaged = plan("auto", ridge, sd, sigma, True)
    np.testing.assert_allclose(shares, np.arange(1, 9) / 36)
    assert (step_ridge, averaged) == (ridge, 1)
    gram[3, 3] = 400 * sigma
    shares, step_ridge, averaged = plan("auto", ridge, sd, sigma, True)
    np.testing.assert_allclose(shares, np.full(128, 1 / 128))
    assert step_ridge == 2 * sd * math.sqrt(4) and averaged == 64
    assert plan("auto", 100.0, sd, sigma, True)[1] == 100.0  # the larger ridge
    assert plan("auto", ridge, sd, sigma, False)[0].size == 8
    # every eigenvalue of the released XᵀX block at least 4·2·s·√q: every direction is seen,
    # the short schedule; just below it, the long one
    seen = 4 * 2 * sd * math.sqrt(4)
    gram[:4, :4] = np.diag([seen * 3, seen * 2, seen, 400 * sigma + seen])
    assert plan("auto", ridge, sd, sigma, True)[0].size == 8
    gram[2, 2] = seen * (1 - 1e-9)
    assert plan("auto", ridge, sd, sigma, True)[0].size == 128
    shares, step_ridge, averaged = plan(3, ridge, sd, sigma, True)
    np.testing.assert_allclose(shares, [1 / 6, 2 / 6, 3 / 6])
    assert (step_ridge, averaged) == (ridge, 1)


def test_long_schedule_finds_a_target_resting_on_a_direction_the_gram_cannot_see():
    """Two columns nearly collinear (like temperature and dew point) and a target resting on
    their difference: its curvature is far below the noisy Gram matrix's noise. The long
    schedule, taken where the count outweighs σ, recovers it; the 8 steps of the short one
    move along it by a fraction λ/(λ + ridge) each and stay far below."""
    rng = np.random.default_rng(0)
    n = 6_000
    temp, gap = rng.uniform(0.2, 0.8, n), rng.uniform(0.0, 0.15, n)
    other = rng.uniform(0, 1, (n, 6))
    X = np.column_stack([temp, temp - gap, other])
    y = 90 - 400 * gap + other @ [5, -5, 3, 0, 0, 2] + rng.normal(0, 3, n)
    best = LinearRegression().fit(X, y).score(X, y)  # 0.97
    kw = dict(epsilon=0.5, bounds_X=(0, 1), bounds_y=(0, 100))
    auto = [DPLinearRegression(random_state=s, **kw).fit(X, y) for s in range(4)]
    short = [DPLinearRegression(refine_steps=8, random_state=s, **kw).fit(X, y)
             for s in range(4)]
    assert all(r.n_refine_steps_ == 128 for r in auto)
    assert all(r.n_refine_steps_ == 8 for r in short)
    auto_r2 = np.mean([r.score(X, y) for r in auto])
    short_r2 = np.mean([r.score(X, y) for r in short])
    assert auto_r2 > short_r2 + 0.1 and auto_r2 > best - 0.15


def test_well_conditioned_large_table_takes_the_short_schedule():
    """Many rows of independent columns: every curvature of XᵀX stands far above the noise
    of its release, so refine_steps="auto" takes the 8 steps (10 passes over the rows, not
    130), and the fit is as good as least squares."""
    rng = np.random.default_rng(3)
    X = np.clip(rng.normal(0, 1, (100_000, 10)), -4, 4)
    y = np.clip(X @ rng.normal(0, 1, 10) + rng.normal(0, 2, 100_000), -15, 15)
    kw = dict(epsilon=1.0, bounds_X=(-4, 4), bounds_y=(-15, 15))
    fits = [DPLinearRegression(random_state=s, **kw).fit(X, y) for s in range(2)]
    assert all(r.n_refine_steps_ == 8 for r in fits)
    best = LinearRegression().fit(X, y).score(X, y)
    assert all(r.score(X, y) > best - 1e-3 for r in fits)


def test_refine_steps_must_be_a_count():
    X, y = _data(n=50, d=2)
    assert_bad_input_costs_nothing(
        DPLinearRegression(**BOUNDS), X, y, match="refine_steps",
        bad_params=[dict(refine_steps=s) for s in (-1, 1.5, "8", "Auto", None)])
