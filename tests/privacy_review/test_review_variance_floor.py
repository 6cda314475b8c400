"""The variance floor of DPStandardScaler and DPGaussianNB (e3762ec): a review.

``_floor_variance`` raises a released variance to s, the std of its own noise
to first order (the delta method on v = S₂/ñ + h²/2 − (S₁/ñ)²), computed from
public parameters and released values only. Checked here: s is the formula
with each mechanism's per-sum noise std (Laplace of scale k/ε: std √2·k/ε;
Gaussian std z·√k, z the package's noise multiplier), and the released
variances' measured std equals s at the true values, for δ = 0 and δ > 0, in
floats and on the secure (discrete) path.
"""

import math

import numpy as np
import pytest

from skdp.stats._noise import _noise_multiplier, _sums_delta
from skdp.stats._sums import _floor_variance, _var_release

D, N, H = 8, 2000, 5.0
X = np.random.default_rng(0).uniform(0, 10, size=(N, D))  # true variances 8.3: never clipped
X[:, 0] = np.random.default_rng(1).uniform(3, 7, size=N)  # variance 1.3, mean at the centre
BOUNDS = (np.zeros(D), np.full(D, 2 * H))


def _sigma0(epsilon, delta):
    """The std of the noise on a sum of sensitivity 1 among the k = 2d + 1 sums."""
    k = 2 * D + 1
    if _sums_delta(epsilon, delta, k) == 0:
        return math.sqrt(2.0) * k / epsilon  # Laplace of scale k/ε (ε/k per sum)
    return _noise_multiplier(epsilon, delta) * math.sqrt(k)  # one Gaussian vector


def _s(epsilon, delta, mean_y, var, n):
    """s: the three sums' noise stds (σ₀, σ₀·h, σ₀·h²/2) times v's partial derivatives."""
    sigma0 = _sigma0(epsilon, delta)
    return sigma0 * np.sqrt((H * H / 2) ** 2 + (2 * mean_y * H) ** 2
                            + (mean_y**2 - var + H * H / 2) ** 2) / n


@pytest.mark.parametrize("delta, secure, rounds", [(0.0, False, 400), (1e-5, False, 400),
                                                   (0.0, True, 200), (1e-5, True, 200)])
def test_the_floor_is_the_std_of_the_released_variance(delta, secure, rounds):
    epsilon = 1.0
    gaussian = _sums_delta(epsilon, delta, 2 * D + 1) > 0
    assert gaussian == (delta > 0)  # both mechanisms are exercised
    released = [_var_release(X, epsilon=epsilon, delta=delta, bounds=BOUNDS, axis=0,
                             rng=np.random.default_rng(seed), secure=secure, return_mean=True,
                             return_count=True) for seed in range(rounds)]
    # the implementation is the formula (at a released count and mean, a variance of ~0)
    count, mean, _ = released[0]
    tiny = np.full(D, 1e-300)
    np.testing.assert_allclose(
        _floor_variance(tiny, mean - H, np.full(D, H), count, epsilon=epsilon, delta=delta),
        _s(epsilon, delta, mean - H, 0.0, count), rtol=1e-12)
    # the formula is the noise: the measured std of the released variances against s at the
    # true values. Pooled over the 8 columns of `rounds` releases, the relative standard
    # error of a std is about √((κ − 1)/(4·rounds)) per column (κ ≤ 6, the Laplace's
    # kurtosis): 5.6% at 200 rounds, about 3% pooled; 12% is four of them, and a missing
    # √2 (29%) or a wrong k (≥ 40%) is far outside.
    var = np.array([v for _, _, v in released])
    expected = _s(epsilon, delta, X.mean(axis=0) - H, X.var(axis=0), N)
    ratio = var.std(axis=0) / expected
    assert abs(ratio.mean() - 1.0) < 0.12, ratio
    assert np.all(np.abs(ratio - 1.0) < 0.3), ratio
