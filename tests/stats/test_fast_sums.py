"""The one-output float path of sum/mean (block ranges, clipping only where needed).

It must release exactly what the general path (clip a copy, then sum) releases:
same noise draws for the same seed, same value up to float rounding.
"""

import math

import numpy as np
import pytest

from skdp import stats
from skdp.stats import _checks, _noise, _sums


@pytest.fixture(autouse=True)
def _secure_takes_seeds_here(monkeypatch):
    # secure=True refuses a seed; the seeded secure calls in this file read seeded bytes
    # through the same samplers (seeded_secure of tests/_testing.py).
    from _testing import seeded_secure

    seeded_secure(monkeypatch)


B = _sums._RANGE_BLOCK
SIZES = [5, B, 3 * B + 17]


def _data(n, shape_rest, outliers, seed=0):
    x = np.random.default_rng(seed).uniform(0.2, 0.8, size=(n, *shape_rest))
    if outliers:  # a few values beyond each bound, in different blocks
        flat = x.reshape(-1)
        flat[:: max(flat.size // 3, 1)] = -2.5
        flat[-1] = 7.0
    return x


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("outliers", [False, True])
def test_clipped_total_equals_clipped_sum(n, outliers):
    x = _data(n, (), outliers)
    _, value_range = _checks._check_data(x, return_range=True)
    expected = np.sum(np.clip(x, 0.0, 1.0))
    assert _sums._clipped_total(x, 0.0, 1.0, value_range) == pytest.approx(expected, rel=1e-13, abs=1e-10)


def test_clipped_total_when_most_blocks_are_outside():
    x = np.linspace(-3, 3, 2 * B + 5)
    _, value_range = _checks._check_data(x, return_range=True)
    assert _sums._clipped_total(x, -1.0, 1.0, value_range) == pytest.approx(np.clip(x, -1, 1).sum(), abs=1e-9)


CASES = [  # (shape after n, axis)
    ((), None),
    ((1,), 0),
    ((3,), None),
    ((2, 2), None),
]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("rest,axis", CASES)
@pytest.mark.parametrize("outliers", [False, True])
@pytest.mark.parametrize("delta", [0.0, 1e-5])
@pytest.mark.parametrize("release", [_sums._sum_release, _sums._mean_release])
def test_fast_path_releases_what_the_general_path_releases(n, rest, axis, outliers, delta, release,
                                                           monkeypatch):
    x = _data(n, rest, outliers)
    arr, value_range = _checks._check_data(x, return_range=True)
    bounds = (np.zeros(1), np.ones(1))
    kw = dict(epsilon=0.7, delta=delta, bounds=bounds, axis=axis, secure=False)
    general = release(arr, rng=np.random.default_rng(3), **kw)
    with monkeypatch.context() as m:  # the fast path clips no copy
        m.setattr(_sums, "_flatten", lambda *a, **k: pytest.fail("took the general path"))
        fast = release(arr, rng=np.random.default_rng(3), value_range=value_range, **kw)
    np.testing.assert_allclose(fast, general, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("secure", [False, True])
def test_general_path_without_a_one_output_release(secure, monkeypatch):
    # per-column bounds, several outputs or secure: the clipped copy is used (the whole
    # array's, or each block's in a pass of sums over the rows)
    calls = []
    real, real_blocks = _noise._flatten, _sums._centred_sums
    monkeypatch.setattr(_sums, "_flatten", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(_sums, "_centred_sums",
                        lambda *a, **k: calls.append(1) or real_blocks(*a, **k))
    x = _data(50, (2,), True)
    stats.sum(x, axis=0, epsilon=1.0, bounds=(0, 1), random_state=0, secure=secure)
    stats.mean(x[:, 0], epsilon=1.0, bounds=(0, 1), random_state=0, secure=secure)
    stats.sum(x, epsilon=1.0, bounds=([0, 0], [1, 2]), random_state=0, secure=secure)
    assert len(calls) == (3 if secure else 2)


def test_public_functions_take_the_fast_path_and_clip():
    x = _data(3 * B + 17, (), True)
    # sum(clip(x)) with the bounds' outliers clipped; noise std √2·1/ε = 1.4e-3 here
    s = stats.sum(x, epsilon=1000.0, bounds=(0, 1), random_state=0)
    assert s == pytest.approx(np.clip(x, 0, 1).sum(), abs=0.02)
    m = stats.mean(x, epsilon=1000.0, bounds=(0, 1), random_state=0)
    assert m == pytest.approx(np.clip(x, 0, 1).mean(), abs=1e-4)


def test_nan_and_inf_anywhere_are_refused():
    for n in SIZES:
        for pos in (0, n // 2, n - 1):
            for bad in (np.nan, np.inf, -np.inf):
                x = np.zeros(n)
                x[pos] = bad
                with pytest.raises(ValueError, match="NaN or infinity"):
                    stats.sum(x, epsilon=1.0, bounds=(0, 1))


# -- regressions from a privacy review -----------------------------------------
# A first version summed the raw values and subtracted the parts past the bounds
# (a value of 1e20 absorbed every other row, two of 1e308 gave NaN), and computed
# the mean's Σ(x − c) as Σx − n·c for any bounds (with bounds [1e12, 1e12 + 1] one
# row moved the centred total by 2.0 > h = 0.5). No value outside the bounds may
# enter a float sum, and bounds far from 0 take the general path.
@pytest.mark.parametrize("release", [stats.sum, stats.mean])
def test_one_far_outlier_does_not_erase_the_other_rows(release):
    x = np.random.default_rng(0).uniform(0.0, 1.0, 1000)
    y = np.append(x, 1e20)  # a neighbour: one added row, clipped to 1 by the bounds
    # epsilon = 1e6: the noise std is at most 2·√2/ε ≈ 3e-6 on the sum (Laplace, k ≤ 2)
    out = release(y, epsilon=1e6, bounds=(0.0, 1.0), random_state=0)
    expected = {stats.sum: np.clip(y, 0, 1).sum(), stats.mean: np.clip(y, 0, 1).mean()}[release]
    assert out == pytest.approx(expected, abs=1e-3)


def test_two_huge_rows_release_a_finite_sum():
    x = np.append(np.random.default_rng(1).uniform(0.0, 1.0, 100), [1e308, 1e308])
    assert math.isfinite(stats.sum(x, epsilon=1.0, bounds=(0.0, 1.0), random_state=0))
    assert math.isfinite(stats.mean(x, epsilon=1.0, bounds=(0.0, 1.0), random_state=0))


def test_mean_with_bounds_far_from_zero_is_the_clipped_mean():
    lower, upper = 1e12, 1e12 + 1.0  # h = 0.5: one row moves Σ(x − c) by at most 0.5
    x = lower + np.random.default_rng(2).uniform(0.0, 1.0, 10**6)
    # epsilon = 1e9: the noise on Σ(x − c) has std 2√2·h/ε ≈ 1.4e-9 and the count's
    # 2√2/ε, so the released mean is the clipped mean up to ~1e-15 plus float rounding of
    # the general path (Σ of the exact x − c: error far below 1e-9 here). The fast path
    # computes Σx − n·c with n·c ≈ 1e18 (float spacing 128) and was measured off by 337
    # in the centred total (3.4e-4 in the mean); on neighbours (n = 10⁴) it moved the
    # centred total by 2.0 > h.
    out = stats.mean(x, epsilon=1e9, bounds=(lower, upper), random_state=0)
    expected = lower + float(np.mean(np.clip(x, lower, upper) - (lower + upper) / 2.0)) + 0.5
    assert abs(out - expected) <= 1e-5


def test_mean_fast_path_only_for_bounds_near_zero():
    x = np.random.default_rng(0).uniform(0, 1, 100)
    arr, value_range = _checks._check_data(x, return_range=True)
    kw = dict(axis=None, secure=False, epsilon=1.0, centre=True)
    assert _sums._one_total(arr, (0.0, 1.0), value_range=value_range, **kw)[0] is not None
    assert _sums._one_total(arr, (-3.0, 5.0), value_range=value_range, **kw)[0] is not None  # 5 <= 4·4
    assert _sums._one_total(arr, (3.0, 5.0), value_range=value_range, **kw)[0] is None  # 5 > 4·1
    # the sum is not centred: its rounding is relative to its own sensitivity
    assert _sums._one_total(arr, (3.0, 5.0), value_range=value_range,
                            **{**kw, "centre": False})[0] is not None
