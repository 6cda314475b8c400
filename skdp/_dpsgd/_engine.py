"""The DP-SGD engine shared by every SGD estimator in skdp.

DP-SGD (Abadi et al. 2016, "Deep learning with differential privacy",
Algorithm 1) with:

- **Poisson sampling**: at every step each row joins the batch independently
  with probability ``q``, so batch sizes follow Binomial(n, q). Either ``q``
  is given (``sampling_rate``), and then nothing about the privacy curve, σ,
  ``q`` or the number of steps depends on the number of rows ``n``; or it is
  ``batch_size / n`` with ``n = len(X)``, the DP-SGD convention of Abadi et
  al. 2016 (Sec. 3.1), Opacus and TF Privacy, which treats ``n`` as public
  (the released ``q``, σ and number of steps then reveal it exactly: under
  add/remove adjacency ``n`` is private). The privacy analysis itself only
  needs ``q``.
- **A fixed number of steps** ``max_iter * max(1, round(1 / q))``, computed
  from the public parameters before any value of the data is read.
- **Per-example clipping** to ``clip_norm`` with the ghost-norm identity
  (see :mod:`skdp._dpsgd._network`): no per-example gradient is ever stored.
- **Gaussian noise** of std ``noise_multiplier * clip_norm`` on the sum of the
  clipped gradients, which is then divided by a public *expected* batch size
  (``batch_size``), never by the realised one, so the step reveals nothing
  about the batch size beyond the noisy sum.
- **Accounting**: the Poisson-subsampled Gaussian RDP curve for exactly that
  number of steps (Mironov, Talwar & Zhang 2019).

Neighbouring datasets differ by adding or removing one row; the L2
sensitivity of the sum of clipped gradients is then ``clip_norm``.
"""

import contextlib
import functools
import math
import time

import numpy as np
from threadpoolctl import threadpool_limits

from .. import accounting
from ..accounting import RDPCurve
from ..accounting._bisect import largest_within
from ._optim import learning_rate_at, make_optimizer

__all__ = [
    "dpsgd_schedule",
    "dpsgd_privacy",
    "poisson_batches",
    "clip_factors",
    "clipped_gradient_sum",
    "run_dpsgd",
]

# Below this many multiply-adds per layer product (expected batch x parameters), one
# BLAS thread is faster: waking threads for products this small costs more than it
# saves, and much more on a busy machine (measured in benchmarks/bench_dpsgd.py).
_SINGLE_THREAD_WORK = 2**24


def dpsgd_schedule(n_samples, batch_size, max_iter, *, sampling_rate=None):
    """``(q, steps_per_epoch, n_steps)`` from public sizes only.

    - ``sampling_rate=None``: ``q = batch_size / n_samples`` and one "epoch" is
      ``max(1, round(n_samples / batch_size))`` Poisson-sampled steps, so it
      processes ``n_samples`` rows in expectation. This treats ``n_samples``
      as public: ``q`` and the number of steps reveal it.
    - ``sampling_rate`` given: ``q = sampling_rate`` and one epoch is
      ``max(1, round(1 / q))`` steps; ``n_samples`` and ``batch_size`` are not
      used, so nothing returned depends on the number of rows.

    ``n_steps = max_iter * steps_per_epoch``.

    Examples
    --------
    >>> from skdp._dpsgd import dpsgd_schedule
    >>> dpsgd_schedule(1000, 100, 3)
    (0.1, 10, 30)
    >>> dpsgd_schedule(1001, 100, 3, sampling_rate=0.1)
    (0.1, 10, 30)
    """
    if sampling_rate is not None:
        q = float(sampling_rate)
        steps_per_epoch = max(1, int(round(1.0 / q)))
    else:
        q = batch_size / n_samples
        steps_per_epoch = max(1, int(round(n_samples / batch_size)))
    return q, steps_per_epoch, int(max_iter) * steps_per_epoch


# The noisy count that sets the divisor gets this share of the run's noise budget,
# counted as 1/σ² of a Gaussian: the T Poisson-subsampled Gaussian steps are close to one
# Gaussian of multiplier σ / (q·√T) (the central limit of Bu, Dong, Long & Su 2020,
# Thm. 5, with e^(1/σ²) − 1 ≈ 1/σ²). A rule on public numbers only; the privacy of both
# releases is accounted exactly by their RDP curves below.
COUNT_SHARE = 0.05


def count_noise_multiplier(noise_multiplier, sampling_rate, n_steps):
    """σ_c of the noisy row count, a fixed multiple of the run's σ (public numbers only).

    ``1/σ_c² = COUNT_SHARE / (1 − COUNT_SHARE) · q²T/σ²``: the count gets
    :data:`COUNT_SHARE` of the run's Gaussian-equivalent ``q²T/σ² + 1/σ_c²``.

    Examples
    --------
    >>> from skdp._dpsgd._engine import count_noise_multiplier
    >>> round(count_noise_multiplier(2.0, 0.01, 2000), 2)
    19.49
    """
    ratio = math.sqrt((1.0 - COUNT_SHARE) / COUNT_SHARE)
    return noise_multiplier * ratio / (sampling_rate * math.sqrt(n_steps))


def _run_curve(sampling_rate, n_steps, sigma, *, count, fixed):
    """The curve of the whole fit: ``fixed``, the noisy count (if any), then the steps."""
    curve = accounting.poisson_subsampled_gaussian_rdp(sampling_rate, sigma, n_steps)
    if count:
        sigma_count = count_noise_multiplier(sigma, sampling_rate, n_steps)
        # the count has sensitivity 1 under add/remove (Gaussian: Mironov 2017, Prop. 7)
        curve = accounting.gaussian_rdp(sigma_count) + curve
    return curve if fixed is None else fixed + curve


def _smallest_noise_multiplier(epsilon, delta, sampling_rate, n_steps, *, count, fixed,
                               rtol=1e-3):
    """The smallest σ (within ``rtol``) for which the fit's curve is (ε, δ)-DP.

    ε is that of the tightest accountant (:func:`skdp.accounting.epsilon_of`,
    the smaller of RDP's and the PLD's, both valid upper bounds) and falls as
    σ grows. Starting from the σ that RDP alone calibrates, regula falsi in
    log(1/σ) (:func:`~skdp.accounting._bisect.largest_within`) keeps a
    bracket and returns a σ that was evaluated and meets the target (the
    safe side). Without ``fixed`` the answer is a function of public numbers
    alone and is remembered (:func:`_cached_noise_multiplier`): a search
    calibrates the same run once per candidate, and every candidate that
    differs only in parameters without a privacy cost asks the same question.
    """
    if fixed is None:
        return _cached_noise_multiplier(float(epsilon), float(delta), float(sampling_rate),
                                        int(n_steps), bool(count), float(rtol))
    if fixed.epsilon(delta) >= epsilon:
        raise ValueError("the fixed part of the curve already spends epsilon.")
    return _calibrate_noise_multiplier(epsilon, delta, sampling_rate, n_steps, count=count,
                                       fixed=fixed, rtol=rtol)


@functools.lru_cache(maxsize=1024)
def _cached_noise_multiplier(epsilon, delta, sampling_rate, n_steps, count, rtol):
    """:func:`_calibrate_noise_multiplier` without ``fixed``, remembered (public inputs only)."""
    return _calibrate_noise_multiplier(epsilon, delta, sampling_rate, n_steps, count=count,
                                       fixed=None, rtol=rtol)


def _calibrate_noise_multiplier(epsilon, delta, sampling_rate, n_steps, *, count, fixed, rtol):
    def cost(inverse_sigma):  # ε grows with 1/σ
        curve = _run_curve(sampling_rate, n_steps, 1.0 / inverse_sigma, count=count, fixed=fixed)
        return accounting.epsilon_of(curve, delta)

    rdp_sigma = float(accounting.calibrate_noise_multiplier(
        epsilon, delta, sampling_rate=sampling_rate, steps=n_steps, sampling="poisson",
        accountant="rdp"))
    return 1.0 / largest_within(cost, epsilon, 1.0 / rdp_sigma, rtol=rtol, factor=1.25)


def dpsgd_privacy(sampling_rate, n_steps, *, epsilon, delta, noise_multiplier=None,
                  count=False, fixed=None):
    """The noise multipliers and the privacy curve of a DP-SGD fit.

    Depends only on hyper-parameters and public sizes, never on the data.

    - ``noise_multiplier`` given: σ is that value; ``epsilon`` (if not ``None``
      nor ``inf``) is a cap, and a σ whose ε at ``delta`` exceeds it raises
      ``ValueError``.
    - ``noise_multiplier=None`` and finite ``epsilon``: σ is the smallest noise
      multiplier for which the whole fit's curve reaches (``epsilon``, ``delta``).
    - ``noise_multiplier=None`` and ``epsilon=inf``: no noise and no clipping;
      σ = 0 and the curve is :meth:`RDPCurve.non_private`.

    ``count=True`` adds a noisy count of the rows (the divisor of each step
    is the sampling rate times that count), of multiplier
    :func:`count_noise_multiplier`; ``fixed`` is the curve of the fit's
    other releases (e.g. private bounds of the target).

    Returns
    -------
    noise_multiplier : float
    count_noise_multiplier : float or None
        σ_c of the count (``None`` without ``count`` or without noise).
    curve : RDPCurve
        ``fixed`` + ``gaussian_rdp(σ_c)`` (with ``count``) +
        ``poisson_subsampled_gaussian_rdp(q, σ, n_steps)`` (Mironov, Talwar & Zhang 2019).
    """
    if noise_multiplier is None and epsilon == math.inf:
        return 0.0, None, RDPCurve.non_private()
    if delta == 0.0:
        raise ValueError(
            "delta must be > 0 for DP-SGD: the Gaussian mechanism has no pure epsilon-DP "
            "guarantee (Mironov 2017, Prop. 7)."
        )
    if noise_multiplier is None:
        if count or fixed is not None:
            sigma = _smallest_noise_multiplier(epsilon, delta, sampling_rate, n_steps,
                                               count=count, fixed=fixed)
        else:
            sigma = float(accounting.calibrate_noise_multiplier(
                epsilon, delta, sampling_rate=sampling_rate, steps=n_steps, sampling="poisson"))
    else:
        sigma = float(noise_multiplier)
    curve = _run_curve(sampling_rate, n_steps, sigma, count=count, fixed=fixed)
    if noise_multiplier is not None and epsilon is not None and epsilon != math.inf:
        spent = accounting.epsilon_of(curve, delta)  # the budget's default accountant
        if spent > epsilon * (1 + 1e-9):
            raise ValueError(
                f"noise_multiplier={sigma} with sampling rate {sampling_rate:.6g} and "
                f"{n_steps} steps spends epsilon={spent:.4g} at delta={delta:g}, more than "
                f"epsilon={epsilon:g}. Raise noise_multiplier, or set epsilon=None to accept it."
            )
    sigma_count = count_noise_multiplier(sigma, sampling_rate, n_steps) if count else None
    return sigma, sigma_count, curve


def poisson_batches(rng, n_samples, sampling_rate, n_steps):
    """Yield ``n_steps`` Poisson-sampled batches of row indices (sorted).

    Including each row independently with probability ``q`` is the same
    distribution as drawing the size ``m ~ Binomial(n, q)`` and then a
    uniformly random subset of that size; that is how it is sampled here, in
    O(m) per step rather than O(n).
    """
    for _ in range(n_steps):
        m = rng.binomial(n_samples, sampling_rate)
        idx = rng.choice(n_samples, size=m, replace=False)
        idx.sort()
        yield idx


def clip_factors(sq_norms, clip_norm):
    """``c_i = min(1, clip_norm / |grad_i|)`` from squared norms (1 where the norm is 0)."""
    norms = np.sqrt(sq_norms)
    with np.errstate(divide="ignore"):
        return np.minimum(1.0, clip_norm / norms)


def clipped_gradient_sum(network, loss, X, Y, clip_norm, out=None):
    """``sum_i clip(grad_i, clip_norm)`` over the rows of ``(X, Y)``.

    ``clip_norm=None`` sums the unclipped gradients. Uses the ghost norms and
    one re-weighted backward pass; the per-example gradients are never formed.

    A row whose gradient norm is not finite (a finite input of magnitude
    around 1e155 or more overflows ``|a_i|^2``, and ``0 * inf`` is NaN when
    its output gradient is 0) is left out of the clipped sum: it contributes
    0, which is within ``clip_norm``, so the sensitivity holds and one row
    cannot turn the whole sum into NaN (found in a privacy review).
    """
    if out is None:
        out = np.empty(network.n_params)
    # In a private fit an overflow on an extreme but finite row must not warn
    # after the charge (its occurrence would depend on that row); such a row
    # is left out of the clipped sum below.
    quiet = np.errstate(over="ignore", invalid="ignore") if clip_norm is not None \
        else contextlib.nullcontext()
    with quiet:
        activations = network.forward(X)
        _, dloss = loss(activations[-1], Y)
        out_grads = network.output_gradients(activations, dloss)
        sq_norms = None if clip_norm is None else network.per_example_sq_norms(activations, out_grads)
    factors = None
    if clip_norm is not None:
        finite = np.isfinite(sq_norms)
        if not finite.all():
            activations = [a[finite] for a in activations]
            out_grads = [g[finite] for g in out_grads]
            sq_norms = sq_norms[finite]
        factors = clip_factors(sq_norms, clip_norm)
    return network.weighted_gradient(activations, out_grads, factors, out)


def run_dpsgd(
    network,
    loss,
    X,
    Y,
    *,
    rng,
    sampling_rate,
    expected_batch_size,
    n_steps,
    steps_per_epoch,
    noise_multiplier,
    clip_norm,
    alpha=0.0,
    optimizer="adam",
    learning_rate=1e-3,
    schedule="constant",
    momentum=0.9,
    verbose=0,
):
    """Train ``network`` in place by DP-SGD; return it.

    Each step's noisy sum of clipped gradients is divided by
    ``expected_batch_size``, a public number (never the realised batch size,
    nor ``sampling_rate * len(X)``, which would use the private row count).
    ``noise_multiplier=0`` (the ``epsilon=inf`` case) trains without noise and
    without clipping. ``alpha`` adds ``alpha * w`` (L2 on the weights, not the
    biases) to the noisy gradient: a function of the released gradient and
    the current parameters, so post-processing.

    ``verbose > 0`` prints one line per epoch: its number, the steps done, the
    public step size and the elapsed time; never a loss or a gradient norm,
    which would be computed on the private rows without noise.
    """
    n_samples = X.shape[0]
    private = noise_multiplier > 0
    expected_batch = float(expected_batch_size)
    noise_std = noise_multiplier * clip_norm if private else 0.0
    grad = np.empty(network.n_params)
    decay = alpha * network.weight_mask if alpha else None
    opt = make_optimizer(optimizer, network.n_params, momentum=momentum)
    small = expected_batch * network.n_params <= _SINGLE_THREAD_WORK
    blas = threadpool_limits(limits=1, user_api="blas") if small else contextlib.nullcontext()
    batches = poisson_batches(rng, n_samples, sampling_rate, n_steps)
    start = time.perf_counter()
    with blas:
        for step, idx in enumerate(batches):
            clipped_gradient_sum(
                network, loss, X[idx], Y[idx], clip_norm if private else None, grad
            )
            if private:
                grad += noise_std * rng.standard_normal(network.n_params)
            grad /= expected_batch
            if decay is not None:
                grad += decay * network.params
            lr = learning_rate_at(
                schedule, learning_rate, step, n_steps, steps_per_epoch=steps_per_epoch
            )
            opt.step(network.params, grad, lr)
            if verbose and ((step + 1) % steps_per_epoch == 0 or step + 1 == n_steps):
                print(f"-- Epoch {-(-(step + 1) // steps_per_epoch)}: step {step + 1}/{n_steps}, "
                      f"learning rate {lr:.3g}, {time.perf_counter() - start:.2f} s",
                      flush=True)
    return network
