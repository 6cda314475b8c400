"""A target's private range is never degenerate, and the default regressors never collapse.

On small regression tables the features' rule (keep the bins whose noisy count clears a
threshold, else (0, 0)) clipped the target to 0 or to one power of two (issue 26: ISLR's
Wage at epsilon = 0.1 gave bounds_y_ = (0, 0) and R² -6.4 for every default regressor).
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from skdp import NoisyEstimateWarning
from skdp.accounting import gaussian_rdp
from skdp.ensemble import DPHistGradientBoostingRegressor
from skdp.linear_model import DPLinearRegression, DPSGDRegressor
from skdp.stats import _range
from skdp.stats._range import _LEFT, _RIGHT, _SIDE, N_BINS, bin_index


def _bin(value):
    return int(bin_index(np.array([value]))[0])


def _counts(pairs, noise=0.0):
    """One column of noisy counts: ``noise`` everywhere, the given counts in their bins."""
    row = np.full((1, N_BINS), noise)
    for value, count in pairs:
        row[0, _bin(value)] = count
    return row


def test_a_target_without_a_kept_bin_gets_the_largest_pair_and_a_warning():
    # threshold 1000: no bin clears it; the pair (64, 128], (128, 256] has the largest sum
    noisy = _counts([(100.0, 900.0), (200.0, 500.0), (40.0, 20.0)])
    with pytest.warns(NoisyEstimateWarning, match=r"range \(64, 256\)"):
        lower, upper = _range._target_hull(noisy, 1000.0, 800.0, epsilon=0.05)
    assert (lower[0], upper[0]) == (64.0, 256.0)
    # the features' rule on the same counts drops the column
    assert tuple(x[0] for x in _range._hull(noisy, 1000.0)) == (0.0, 0.0)


def test_a_target_whose_largest_pair_is_within_the_noise_is_about_zero_not_a_point():
    noisy = _counts([(100.0, 300.0), (200.0, 200.0)])  # pair sum 500 < level 800
    with pytest.warns(NoisyEstimateWarning):
        lower, upper = _range._target_hull(noisy, 1000.0, 800.0, epsilon=0.05)
    assert lower[0] < 0.0 < upper[0] and max(-lower[0], upper[0]) <= 2.0**-29


def test_a_target_range_takes_in_a_neighbour_with_a_large_noisy_share():
    # kept: (64, 128] alone; (128, 256] holds 400 / 2000 = 20% > WIDEN_SHARE of the kept
    # mass; (32, 64] holds 100 / 2000 = 5% < WIDEN_SHARE: clipped
    noisy = _counts([(100.0, 2000.0), (200.0, 400.0), (40.0, 100.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a bin cleared the threshold: no warning
        lower, upper = _range._target_hull(noisy, 1000.0, 800.0, epsilon=1.0)
    assert (lower[0], upper[0]) == (64.0, 256.0)
    assert tuple(x[0] for x in _range._hull(noisy, 1000.0)) == (64.0, 128.0)


def test_the_zero_bin_alone_is_widened_to_both_neighbours():
    noisy = _counts([(0.0, 5000.0)])
    lower, upper = _range._target_hull(noisy, 1000.0, 800.0, epsilon=1.0)
    assert (lower[0], upper[0]) == (_LEFT[_SIDE - 1], _RIGHT[_SIDE + 1])


def test_the_pair_level_is_the_tail_of_the_sum_of_two_noises():
    # Laplace (delta = 0): P(L1 + L2 > level) = SELECT_RATE / N_BINS; checked by
    # simulation at a larger rate, where the same bisection gives a level 10^6 draws see
    rng = np.random.default_rng(0)
    b = 3.0
    sums = rng.laplace(0, b, (10**6, 2)).sum(axis=1)
    x = 6.0  # closed form: 1/4 e^-x (2 + x) = 0.00496
    expected = 0.25 * math.exp(-x) * (2 + x)
    # binomial std of the observed rate: sqrt(p / 10^6) = 7e-5, so 5e-4 is 7 of them
    assert abs(np.mean(sums > x * b) - expected) < 5e-4
    level = _range._pair_level(1.0, 0.0, 1)
    assert 0.25 * math.exp(-level) * (2 + level) == pytest.approx(_range.SELECT_RATE / N_BINS,
                                                                 rel=1e-6)


def test_the_target_histogram_is_released_alone_and_the_split_stays_within_epsilon():
    def stat(e):
        return gaussian_rdp(4.0 / e)

    eps_x, eps_y, eps_s, curve = _range.split_curve_with_target(1.0, 1e-5, 20, stat)
    assert eps_x + eps_y == pytest.approx(_range.BOUNDS_EPSILON_SHARE)
    assert eps_y == pytest.approx(_range.TARGET_SHARE_OF_BOUNDS * _range.BOUNDS_EPSILON_SHARE)
    composed = (_range._bounds_curve(eps_x, 1e-5, 20) + _range._bounds_curve(eps_y, 1e-5, 1)
                + stat(eps_s))
    assert curve.epsilon(1e-5) == pytest.approx(composed.epsilon(1e-5))
    assert curve.epsilon(1e-5) <= 1.0 * (1 + 1e-9)


def _wage_like(n, seed):
    """A public synthetic table shaped like ISLR's Wage: a positive target around 120."""
    rng = np.random.default_rng(seed)
    edu = rng.integers(0, 5, n)
    X = np.column_stack([rng.uniform(0, 1, (n, 2)), np.eye(5)[edu],
                         np.eye(2)[rng.integers(0, 2, n)]])
    y = np.exp(4.4 + 0.12 * edu + 0.2 * X[:, 0] + rng.normal(0, 0.3, n))
    return X, y


@pytest.mark.parametrize("make, seeds", [
    (lambda s: DPLinearRegression(epsilon=0.1, random_state=s), 20),
    (lambda s: DPHistGradientBoostingRegressor(epsilon=0.1, random_state=s), 20),
    (lambda s: DPSGDRegressor(epsilon=0.1, max_iter=5, random_state=s), 5),
])
def test_default_regressors_never_collapse_on_a_small_table(make, seeds):
    # 2,250 rows at epsilon = 0.1 (epsilon * n = 225): before issue 26 the range was (0, 0)
    # in most seeds, R² about -8 (the target's mean squared over its variance); the mean
    # predictor scores 0. A fit on the right range is at worst the noisy mean: its
    # intercept's noise is a fraction of the target's spread, R² > -0.5 (measured: -0.03 at
    # worst for the linear model and the boosting over 20 seeds, about -0.5 at worst for
    # DP-SGD over 10 seeds on Wage itself).
    X, y = _wage_like(2250, 0)
    X_test, y_test = _wage_like(2000, 1)
    scores = []
    for seed in range(seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoisyEstimateWarning)
            reg = make(seed).fit(X, y)
        lower, upper = reg.bounds_y_
        assert lower < upper
        # the bulk of the rows (the 5th to the 95th percentile, about 74 to 200) is inside
        assert lower <= 64.0 and upper >= 256.0 or lower <= 32.0 and upper >= 128.0
        scores.append(reg.score(X_test, y_test))
    assert min(scores) > -1.0
    assert np.mean(scores) > -0.3


def test_the_ridge_shrinks_the_intercept_towards_the_mean():
    # A huge ridge shrinks the coefficients to 0: the intercept is then the target's mean
    # (noise-free at epsilon = inf), not the midpoint of bounds_y (0 here).
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (500, 3))
    y = 5.0 + X @ [1.0, 2.0, 3.0]
    reg = DPLinearRegression(epsilon=math.inf, bounds_X=(0, 1), bounds_y=(-20, 20),
                             ridge=1e12).fit(X, y)
    assert np.abs(reg.coef_).max() < 1e-6
    assert reg.intercept_ == pytest.approx(y.mean(), rel=1e-4)  # the midpoint is 0
    # ridge 0 at epsilon = inf is still scikit-learn's least squares
    reg = DPLinearRegression(epsilon=math.inf, bounds_X=(0, 1), bounds_y=(-20, 20)).fit(X, y)
    ref = LinearRegression().fit(X, y)
    np.testing.assert_allclose(reg.coef_, ref.coef_, atol=1e-8)
    assert reg.intercept_ == pytest.approx(ref.intercept_, abs=1e-8)


def test_the_ridge_is_a_quarter_of_adassps_where_the_count_outweighs_its_noise_bound():
    from skdp.linear_model._linear import _ridge_scale

    gram = np.zeros((3, 3))
    gram[1, 1] = 1000.0  # the released count n of a design with one feature and an intercept
    assert _ridge_scale(10.0, gram, 1, True) == 0.25  # B = n/100
    assert _ridge_scale(200.0, gram, 1, True) == pytest.approx(0.5)  # 2.5 B / n
    assert _ridge_scale(400.0, gram, 1, True) == 1.0  # B >= 0.4 n: AdaSSP's full bound
    assert _ridge_scale(1e6, gram, 1, True) == 1.0
    assert _ridge_scale(1e6, gram, 1, False) == 0.25  # no count released without an intercept
