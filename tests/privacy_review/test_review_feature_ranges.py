"""Private feature ranges are post-processing of the released noisy counts.

Whatever the rows (their number, their values), the ranges, and every
warning raised on the way, are the same function of the noisy histogram:
the noisy counts are replaced by fixed arrays and the raw data varied.
"""

import math
import warnings

import numpy as np
import pytest

import skdp.stats._range as R


def _release(monkeypatch, X, noisy, n_targets):
    seen = []

    def fixed(counts, **kwargs):
        seen.append(np.asarray(counts).sum())
        return noisy.copy()

    monkeypatch.setattr(R, "_noisy_counts", fixed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lower, upper = R._bounds_release(X, epsilon=0.5, delta=1e-6,
                                         rng=np.random.default_rng(0), n_targets=n_targets)
    assert seen, "the counts went through the noise"
    return lower, upper, [str(w.message) for w in caught]


def _noisy(kind, d, threshold):
    rng = np.random.default_rng(7)
    noisy = rng.normal(scale=threshold / 3, size=(d, R.N_BINS))
    if kind == "strong":  # one column clears the threshold, the others stay weak
        noisy[0, R._SIDE + 40: R._SIDE + 44] += 3 * threshold
    if kind == "pooled":  # weak columns whose pooled counts stand out
        noisy[1:, R._SIDE + 60] += 0.8 * threshold
    if kind == "candidates":  # strong columns and candidate bins at the lower bar
        noisy[:, R._SIDE + 30] += 2 * threshold
        noisy[: d // 2, R._SIDE] += 0.7 * threshold
    return noisy


@pytest.mark.parametrize("kind", ["noise", "strong", "pooled", "candidates"])
@pytest.mark.parametrize("n_targets", [0, 1])
def test_ranges_depend_on_the_noisy_counts_alone(monkeypatch, kind, n_targets):
    d = 6
    noisy = _noisy(kind, d, R._threshold(0.5, 1e-6, d))
    rng = np.random.default_rng(1)
    small = rng.normal(size=(20, d))
    large = rng.exponential(1e4, size=(3000, d)) - 7.0
    large[::5, 2] = np.nan  # missing entries are skipped, never an error
    a = _release(monkeypatch, small, noisy, n_targets)
    b = _release(monkeypatch, large, noisy, n_targets)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert a[2] == b[2]  # the same warnings, word for word
    assert np.all(np.isfinite(a[0])) and np.all(a[0] <= a[1])


def test_threshold_calibration_unchanged():
    """The default bar: each empty bin passes with probability FALSE_BIN_RATE / N_BINS."""
    from scipy.stats import norm

    from skdp.stats._noise import _noise_scales, _sums_delta

    for eps, delta, d in [(0.5, 1e-6, 6), (1.0, 0.0, 3)]:
        scale = float(_noise_scales(eps, delta, d, 1.0))
        tail = R.FALSE_BIN_RATE / R.N_BINS
        if _sums_delta(eps, delta, d) == 0:  # Laplace: P(L > t) = exp(-t/b) / 2
            assert math.isclose(0.5 * math.exp(-R._threshold(eps, delta, d) / scale), tail)
        else:
            assert math.isclose(norm.sf(R._threshold(eps, delta, d) / scale), tail)
