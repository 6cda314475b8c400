"""The trees' exponential-mechanism sampler: one uniform per choice, by inverse CDF."""

import math

import numpy as np
from scipy import stats

from skdp.tree._choice import exponential_choice


def test_inverse_cdf_at_the_cumulative_weights():
    """Weights 1, 1, 2: u in [0, 1/4) draws 0, [1/4, 1/2) draws 1, [1/2, 1) draws 2."""
    log_w = np.log([[1.0, 1.0, 2.0]] * 7)
    u = np.array([0.0, 0.2499, 0.25, 0.4999, 0.5, 0.75, 1 - 2.0**-53])
    np.testing.assert_array_equal(exponential_choice(log_w, u), [0, 0, 1, 1, 2, 2, 2])


def test_weight_zero_is_never_drawn():
    """−∞ first, inside and last, at the edges of the drawable candidates' intervals."""
    log_w = np.array([[-np.inf, 0.0, -np.inf, 0.0, 0.0, -np.inf]] * 5)
    u = np.array([0.0, 1 / 3, 0.5, 2 / 3, 1 - 2.0**-53])  # the largest u of a generator
    np.testing.assert_array_equal(exponential_choice(log_w, u), [1, 3, 3, 4, 4])


def test_draws_follow_the_exponential_mechanism():
    """Frequencies of 10^5 draws against w_j / Σ w: a chi-square test and each cell.

    Log weights near 800 (e^800 overflows float64) check that the largest is
    subtracted first; the −∞ candidate is never drawn. The chi-square statistic
    of the 4 drawable candidates (3 degrees of freedom) is below its 0.999
    quantile, and each frequency within 4.5 binomial standard deviations.
    """
    n = 100_000
    log_w = 800.0 + np.array([0.0, math.log(2.0), -np.inf, math.log(5.0), -1.3])
    expected = np.exp(log_w[[0, 1, 3, 4]] - 800.0)
    expected /= expected.sum()
    rng = np.random.default_rng(7)
    drawn = exponential_choice(np.tile(log_w, (n, 1)), rng.random(n))
    counts = np.bincount(drawn, minlength=5)
    assert counts[2] == 0
    observed = counts[[0, 1, 3, 4]]
    chi2 = (((observed - n * expected) ** 2) / (n * expected)).sum()
    assert chi2 < stats.chi2.ppf(0.999, df=3)
    freq = observed / n
    assert np.all(np.abs(freq - expected) <= 4.5 * np.sqrt(expected * (1 - expected) / n))
