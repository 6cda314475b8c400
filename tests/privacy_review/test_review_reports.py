"""Privacy review of what skdp reports: the ``skdp`` command line and accounting helpers.

Regressions for confirmed defects (each test failed before its fix):

1. ``skdp account --epochs E --sampling-rate Q`` counts ``ceil(E / Q)`` steps,
   while DP-SGD estimators fitted with ``max_iter=E`` run
   ``E * max(1, round(1 / Q))`` steps (``skdp._dpsgd.dpsgd_schedule``). When
   ``1/Q`` rounds up (Q = 0.015: 670 steps against 667; batch_size=150 of
   n=1000: 21 against 20) the command prints a smaller ε than the estimator
   charged, and ``skdp calibrate --epochs`` gives a σ that the estimator then
   refuses (or spends above the target with ``epsilon=None``).
2. ``skdp account`` accepts ``--steps 0`` and ``--sampling-rate 0`` (prints
   ε = 0) although ``--epochs`` and ``skdp calibrate`` refuse them.
3. ``analytic_gaussian_sigma`` for tiny ε returns a σ below the exact smallest
   σ of Balle & Wang 2018, Thm. 8 (so its (ε, δ) claim does not hold): the
   float δ(σ) it checks loses ~1e-5 relative accuracy there (log Φ(a) − log Φ(b)
   cancels when μ = Δ/σ is tiny).
"""

import contextlib
import io
import json

import numpy as np
import pytest

from skdp.accounting import analytic_gaussian_sigma
from skdp.cli import main
from skdp.linear_model import DPSGDClassifier


def _cli_json(args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = main([*args, "--json"])
    assert status == 0, args
    return json.loads(out.getvalue())


def _data(n):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    return X, (X[:, 0] > 0).astype(int)


# (n rows, estimator keyword arguments, the Q a user passes to the CLI)
_RUNS = [
    (50, dict(sampling_rate=0.015, batch_size=1, max_iter=10), 0.015),  # 670 vs 667 steps
    (1000, dict(batch_size=150, max_iter=3), 0.15),  # q = 150/1000: 21 vs 20 steps
]


@pytest.mark.parametrize("n, params, q", _RUNS)
def test_account_with_epochs_reports_the_epsilon_the_estimator_charged(n, params, q):
    X, y = _data(n)
    clf = DPSGDClassifier(
        epsilon=None, noise_multiplier=1.0, delta=1e-6, classes=[0, 1],
        hidden_layer_sizes=(), random_state=0, **params,
    ).fit(X, y)
    printed = _cli_json([
        "account", "--noise-multiplier", "1.0", "--sampling-rate", repr(q),
        "--epochs", str(params["max_iter"]), "--delta", "1e-6",
    ])
    assert printed["steps"] == clf.n_steps_
    assert printed["epsilon"] >= clf.epsilon_spent_


def test_calibrate_with_epochs_gives_a_sigma_the_estimator_can_use():
    X, y = _data(50)
    printed = _cli_json([
        "calibrate", "--target-epsilon", "1", "--delta", "1e-6", "--sampling-rate", "0.015",
        "--epochs", "10",
    ])
    clf = DPSGDClassifier(
        epsilon=None, noise_multiplier=printed["noise_multiplier"], delta=1e-6, classes=[0, 1],
        sampling_rate=0.015, batch_size=1, max_iter=10, hidden_layer_sizes=(), random_state=0,
    ).fit(X, y)
    assert clf.epsilon_spent_ <= 1.0


@pytest.mark.parametrize("rate, steps", [("0.01", "0"), ("0", "100")])
def test_account_refuses_no_steps_and_zero_rate(rate, steps):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        status = main([
            "account", "--noise-multiplier", "1", "--sampling-rate", rate, "--steps", steps,
            "--delta", "1e-5",
        ])
    assert status == 2


# The exact smallest sigma (Balle & Wang 2018, Thm. 8, Delta = 1), i.e. the root of
# Phi(1/(2s) - eps*s) - e^eps Phi(-1/(2s) - eps*s) = delta, computed with mpmath at 80
# digits (findroot, tolerance 1e-60) during the review.
_EXACT_SMALLEST_SIGMA = [
    (1e-8, 1e-30, 927600089.3096443),
    (1e-8, 1e-12, 306222667.98427643),
    (1e-7, 1e-30, 95132039.78735642),
]


@pytest.mark.parametrize("epsilon, delta, exact", _EXACT_SMALLEST_SIGMA)
def test_analytic_gaussian_sigma_is_never_below_the_exact_minimum(epsilon, delta, exact):
    # The returned sigma is 1e-7 to 6e-7 relative below `exact`, far more than the
    # 1e-15 uncertainty of the float literal.
    assert analytic_gaussian_sigma(epsilon, delta) >= exact
