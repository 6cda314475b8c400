"""Tests of noise calibration: safe side, tolerance, speed, errors."""

import math
import time

import numpy as np
import pytest

from skdp.accounting import (
    calibrate_noise_multiplier,
    epsilon_for,
    gaussian_rdp,
    poisson_subsampled_gaussian_rdp,
    sampled_without_replacement_gaussian_rdp,
)

CASES = [
    # target ε, δ, q, steps, sampling
    (1.0, 1e-5, 0.01, 10_000, "poisson"),
    (2.597, 1e-5, 256 / 60000, 14_063, "poisson"),
    (8.0, 1e-5, 0.004, 100_000, "poisson"),
    (0.1, 1e-6, 0.001, 1000, "poisson"),
    (1.0, 1e-5, 1.0, 1, "poisson"),
    (4.0, 1e-5, 1.0, 100, "poisson"),
    (50.0, 1e-3, 0.5, 3, "poisson"),
    (1.0, 1e-5, 0.01, 1000, "without_replacement"),
    (3.0, 1e-6, 0.05, 200, "without_replacement"),
    (1.0, 1e-5, 1e-6, 10**7, "poisson"),
]


def _curve(sigma, q, steps, sampling):
    if sampling == "poisson":
        return poisson_subsampled_gaussian_rdp(q, sigma, steps)
    return sampled_without_replacement_gaussian_rdp(q, sigma, steps)


@pytest.mark.parametrize("target, delta, q, steps, sampling", CASES)
def test_safe_side_and_tolerance(target, delta, q, steps, sampling):
    rtol = 1e-5
    sigma = calibrate_noise_multiplier(target, delta, sampling_rate=q, steps=steps, sampling=sampling, rtol=rtol, accountant="rdp")
    # safe side, checked through the public curve
    assert _curve(sigma, q, steps, sampling).epsilon(delta) <= target
    # and tight: a σ smaller by the tolerance no longer meets the target
    assert _curve(sigma / (1 + rtol), q, steps, sampling).epsilon(delta) > target


def test_reference_sigma_for_reference_epsilon():
    # σ = 4 gives ε = 1.0355 (MTZ19 case), so calibrating to that ε gives back ~4.
    eps = poisson_subsampled_gaussian_rdp(0.01, 4.0, 10_000).epsilon(1e-5)
    sigma = calibrate_noise_multiplier(eps, 1e-5, sampling_rate=0.01, steps=10_000, accountant="rdp")
    assert sigma == pytest.approx(4.0, rel=1e-5)


def test_plain_gaussian_closed_form():
    sigma = calibrate_noise_multiplier(4.7285, 1e-5, steps=100, accountant="rdp")
    assert sigma == pytest.approx(10.0, rel=1e-4)
    assert (gaussian_rdp(sigma) * 100).epsilon(1e-5) <= 4.7285


def test_tighter_rtol_is_honoured():
    a = calibrate_noise_multiplier(1.0, 1e-5, sampling_rate=0.01, steps=1000, rtol=1e-10, accountant="rdp")
    eps = poisson_subsampled_gaussian_rdp(0.01, a, 1000).epsilon(1e-5)
    assert eps <= 1.0 and eps > 1.0 - 1e-6


def test_monotone_in_target_and_steps():
    s = [calibrate_noise_multiplier(e, 1e-5, sampling_rate=0.01, steps=1000) for e in (0.5, 1.0, 2.0, 8.0)]
    assert all(a > b for a, b in zip(s, s[1:]))
    s = [calibrate_noise_multiplier(1.0, 1e-5, sampling_rate=0.01, steps=k) for k in (10, 100, 1000, 10_000)]
    assert all(a < b for a, b in zip(s, s[1:]))


def test_epsilon_for_matches_curve():
    for sampling in ("poisson", "without_replacement"):
        got = epsilon_for(1.3, 1e-5, sampling_rate=0.02, steps=500, sampling=sampling, accountant="rdp")
        assert got == _curve(1.3, 0.02, 500, sampling).epsilon(1e-5)


def test_fast_enough():
    calibrate_noise_multiplier(1.0, 1e-5, sampling_rate=0.01, steps=10_000)  # warm caches
    times = []
    for _ in range(5):
        t = time.perf_counter()
        calibrate_noise_multiplier(1.0, 1e-5, sampling_rate=0.01, steps=10_000, accountant="rdp")
        times.append(time.perf_counter() - t)
    # the target is 20 ms; leave room for a loaded CI machine
    assert min(times) < 0.1


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(target_epsilon=math.inf, delta=1e-5),
        dict(target_epsilon=0.0, delta=1e-5),
        dict(target_epsilon=-1.0, delta=1e-5),
        dict(target_epsilon=float("nan"), delta=1e-5),
        dict(target_epsilon=1.0, delta=0.0),
        dict(target_epsilon=1.0, delta=1.0),
        dict(target_epsilon=1.0, delta=1e-5, sampling_rate=0.0),
        dict(target_epsilon=1.0, delta=1e-5, steps=0),
        dict(target_epsilon=1.0, delta=1e-5, sampling="shuffle"),
        dict(target_epsilon=1.0, delta=1e-5, rtol=0.5),
        dict(target_epsilon=1.0, delta=1e-5, sampling_rate=2.0),
    ],
)
def test_invalid_inputs_raise(kwargs):
    with pytest.raises(ValueError):
        calibrate_noise_multiplier(**kwargs)


def test_infinite_target_message():
    with pytest.raises(ValueError, match="no noise is needed"):
        calibrate_noise_multiplier(math.inf, 1e-5, accountant="rdp")


def test_custom_orders():
    orders = np.arange(2, 65)
    sigma = calibrate_noise_multiplier(1.0, 1e-5, sampling_rate=0.01, steps=1000, orders=orders, accountant="rdp")
    assert poisson_subsampled_gaussian_rdp(0.01, sigma, 1000, orders=orders).epsilon(1e-5) <= 1.0
