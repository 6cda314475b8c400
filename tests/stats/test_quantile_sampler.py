"""Smith's (2011) distribution, drawn by the split quantile's sampler without a full sort."""

import numpy as np
import pytest
from scipy.stats import chisquare

from skdp import stats
from skdp.stats import _quantiles


def _smith_probabilities(x, lower, upper, q, a):
    """P(gap i) ∝ ℓᵢ·exp(−a|i − qN|) over the N + 1 gaps of L, sorted x, U (Smith 2011)."""
    edges = np.r_[lower, np.sort(x), upper]
    with np.errstate(divide="ignore"):
        log_w = np.log(np.diff(edges)) - a * np.abs(np.arange(x.size + 1) - q * x.size)
    w = np.exp(log_w - log_w.max())
    return w / w.sum()


def _assert_follows(draws, x, lower, upper, q, a):
    """Chi-square of the drawn gaps against Smith's probabilities (cells < 5 expected pooled)."""
    exact = _smith_probabilities(x, lower, upper, q, a)
    gaps = np.searchsorted(np.sort(x), draws, side="right")  # a tied edge: its last gap
    assert np.all(exact[gaps] > 0)  # never a gap of length 0
    observed = np.bincount(gaps, minlength=exact.size)
    expected = exact * draws.size
    big = expected >= 5
    p = chisquare(np.r_[observed[big], observed[~big].sum()],
                  np.r_[expected[big], expected[~big].sum()]).pvalue
    assert p > 1e-3  # a correct sampler fails with probability 1e-3 (fixed seed: deterministic)


# 30 values in [0, 1] with ties, and two clipped to each bound
TINY = np.array([0.0, 0.0, 0.02, 0.1, 0.1, 0.1, 0.18, 0.25, 0.3, 0.3, 0.33, 0.41, 0.44, 0.5,
                 0.52, 0.55, 0.62, 0.64, 0.7, 0.7, 0.7, 0.7, 0.75, 0.79, 0.83, 0.9, 0.91, 0.97,
                 1.0, 1.0])


def _no_full_sort(*args, **kwargs):
    raise AssertionError("the windows should be used, not the full sort")


@pytest.mark.parametrize("sort_run", [2, 256])
def test_windowed_sampler_matches_smith_on_a_tiny_array(monkeypatch, sort_run):
    # half = 1: a window of 3 gaps per level, so most of the weight lies in the unsorted
    # runs and the adaptive rejection (splitting runs, or sorting them) does most draws.
    monkeypatch.setattr(_quantiles, "_SORT_RUN", sort_run)
    monkeypatch.setattr(_quantiles, "_em_quantiles_sorted", _no_full_sort)
    rng, eps, levels, n_draws = np.random.default_rng(0), 2.0, [0.3, 0.6], 6_000
    draws = np.array([_quantiles._em_quantiles_1d(TINY.copy(), 0.0, 1.0, levels, eps, 1.0, rng,
                                                  half=1.0) for _ in range(n_draws)])
    for j, q in enumerate(levels):
        _assert_follows(draws[:, j], TINY, 0.0, 1.0, q, eps / 2)


def test_windowed_sampler_matches_smith_inside_a_run_of_ties(monkeypatch):
    # 4,000 integers in 0..9: the windows (±49 ranks at a = 1) lie inside the runs of 4s and
    # of 9s, whose gaps have length 0: every draw comes from the unsorted runs around them.
    monkeypatch.setattr(_quantiles, "_em_quantiles_sorted", _no_full_sort)
    x = np.random.default_rng(1).integers(0, 10, 4_000).astype(float)
    rng, eps, n_draws = np.random.default_rng(2), 2.0, 3_000
    draws = np.array([_quantiles._em_quantiles_1d(x.copy(), -0.5, 9.5, [0.5, 0.97], eps, 1.0,
                                                  rng)
                      for _ in range(n_draws)])
    for j, q in enumerate([0.5, 0.97]):
        _assert_follows(draws[:, j], x, -0.5, 9.5, q, eps / 2)


def test_windowed_sampler_releases_what_the_full_sort_released():
    # Without ties the first proposal is a window's gap (the rest weighs ~e^-40 of it), drawn
    # by the same uniforms as the full-sort sampler: the same seed gives the same release.
    x = np.random.default_rng(3).lognormal(0.0, 2.0, 20_000)
    levels = [0.5, 0.05, 0.99]
    for seed in range(10):
        fast = _quantiles._em_quantiles_1d(np.clip(x, 0, 1e4), 0.0, 1e4, levels, 0.5, 1.0,
                                           np.random.default_rng(seed))
        full = _quantiles._em_quantiles_sorted(np.sort(np.clip(x, 0, 1e4)), 0.0, 1e4, levels,
                                               0.5, 1.0, np.random.default_rng(seed))
        assert fast == full


@pytest.mark.parametrize("axis", [None, 0])
def test_quantile_leaves_its_input_alone(axis):
    # the sampler reorders its column in place: it must be the clipped copy, never the input
    x = np.random.default_rng(4).normal(size=(25_000, 2))
    before = x.copy()
    stats.quantile(x, [0.1, 0.5], axis, epsilon=1.0, bounds=(-5, 5), random_state=0)
    stats.nanquantile(x, 0.5, axis, epsilon=1.0, bounds=(-5, 5), random_state=0)
    stats.median(x[:, 0], epsilon=1.0, bounds=(-5, 5), random_state=0)
    assert np.array_equal(x, before)
