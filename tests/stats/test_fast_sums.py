"""The one-output float path of sum/mean (block ranges, clipping only where needed).

It must release exactly what the general path (clip a copy, then sum) releases:
same noise draws for the same seed, same value up to float rounding.
"""

import numpy as np
import pytest

from skdp import stats
from skdp.stats import _core

B = _core._RANGE_BLOCK
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
    _, value_range = _core._check_data(x, return_range=True)
    expected = np.sum(np.clip(x, 0.0, 1.0))
    assert _core._clipped_total(x, 0.0, 1.0, value_range) == pytest.approx(expected, rel=1e-13, abs=1e-10)


def test_clipped_total_when_most_blocks_are_outside():
    x = np.linspace(-3, 3, 2 * B + 5)
    _, value_range = _core._check_data(x, return_range=True)
    assert _core._clipped_total(x, -1.0, 1.0, value_range) == pytest.approx(np.clip(x, -1, 1).sum(), abs=1e-9)


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
@pytest.mark.parametrize("release", [_core._sum_release, _core._mean_release])
def test_fast_path_releases_what_the_general_path_releases(n, rest, axis, outliers, delta, release,
                                                           monkeypatch):
    x = _data(n, rest, outliers)
    arr, value_range = _core._check_data(x, return_range=True)
    bounds = (np.zeros(1), np.ones(1))
    kw = dict(epsilon=0.7, delta=delta, bounds=bounds, axis=axis, secure=False)
    general = release(arr, rng=np.random.default_rng(3), **kw)
    with monkeypatch.context() as m:  # the fast path clips no copy
        m.setattr(_core, "_flatten", lambda *a, **k: pytest.fail("took the general path"))
        fast = release(arr, rng=np.random.default_rng(3), value_range=value_range, **kw)
    np.testing.assert_allclose(fast, general, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("secure", [False, True])
def test_general_path_without_a_one_output_release(secure, monkeypatch):
    # per-column bounds, several outputs or secure: the clipped copy is used
    calls = []
    real = _core._flatten
    monkeypatch.setattr(_core, "_flatten", lambda *a, **k: calls.append(1) or real(*a, **k))
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
