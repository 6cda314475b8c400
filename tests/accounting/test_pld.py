"""The PLD accountant against closed forms and exact numerical integration.

Every reference here is computed in the test itself, independently of the
code under test: the exact δ(ε) of the Gaussian (Balle & Wang 2018, Thm. 8),
of the Laplace mechanism, of randomized response (a finite PLD, composed by
exact enumeration), of the discrete Gaussian (a sum over the integers), and of
the Poisson-subsampled Gaussian at one and two steps (numerical integration
of the densities with scipy.integrate.quad). The accountant must never be
below them (it is pessimistic) and be within a small margin above them.
"""

import math

import numpy as np
import pytest
from scipy import integrate, optimize, signal
from scipy.stats import binom, norm

from skdp.accounting import (
    ApproximateDPEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    GaussianEvent,
    PLDAccountant,
    PoissonSampledEvent,
    PrivacyLossDistribution,
    PureDPEvent,
    RandomizedResponseEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    gdp_to_epsilon,
    sampled_without_replacement_gaussian_rdp,
)
from skdp.accounting import _pld_mechanisms as mech
from skdp.accounting._pld import compose_plds


def gaussian_delta(mu, eps):
    """Exact δ(ε) of N(μ, 1) vs N(0, 1) (Balle & Wang 2018, Thm. 8)."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def invert(delta_of, delta, hi=200.0):
    """The ε at which a decreasing δ(ε) crosses ``delta`` (bisection to 1e-13)."""
    lo = 0.0
    if delta_of(lo) <= delta:
        return 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if delta_of(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


# -- Gaussian -----------------------------------------------------------------
@pytest.mark.parametrize("sigma, count", [(0.5, 1), (1.0, 7), (3.0, 100), (20.0, 2000)])
def test_gaussian_pld_composition_is_the_gaussian_with_sigma_over_sqrt_count(sigma, count):
    mu = math.sqrt(count) / sigma
    step = mu / 1000
    pld = compose_plds([(mech.gaussian_pld(sigma, step, 1e-18), count)])
    for eps in [0.0, 0.3 * mu, mu, 2 * mu + mu * mu / 2]:
        exact = gaussian_delta(mu, eps)
        got = pld.delta(eps)
        assert got >= exact * (1 - 1e-9) - 1e-15
        assert got <= exact * 1.01 + 1e-13
    exact_eps = invert(lambda e: gaussian_delta(mu, e), 1e-6)
    got_eps = pld.epsilon(1e-6)
    assert exact_eps <= got_eps <= exact_eps * 1.001


def test_heterogeneous_gaussians_compose_like_one():
    # N(0, σᵢ²) runs compose to μ = √(Σ kᵢ/σᵢ²) (Dong, Roth & Su 2022, Cor. 3.3)
    parts = [(0.7, 3), (2.0, 10), (5.0, 40)]
    mu = math.sqrt(sum(k / s**2 for s, k in parts))
    step = mu / 2000
    pld = compose_plds([(mech.gaussian_pld(s, step, 1e-18), k) for s, k in parts])
    exact = invert(lambda e: gaussian_delta(mu, e), 1e-5)
    assert exact <= pld.epsilon(1e-5) <= exact * 1.0005


def test_coarse_grids_stay_above_the_exact_gaussian():
    # pessimism does not depend on a fine grid
    for step in [0.5, 0.1, 0.01]:
        pld = compose_plds([(mech.gaussian_pld(1.0, step, 1e-18), 16)])
        mu = 4.0
        for eps in [0.0, 1.0, 4.0, 10.0]:
            assert pld.delta(eps) >= gaussian_delta(mu, eps) * (1 - 1e-9) - 1e-15


def test_gaussian_accountant_is_the_exact_mu_gdp():
    acc = PLDAccountant().compose(GaussianEvent(8.0), 40).compose(GaussianEvent(2.0))
    mu = math.sqrt(40 / 64 + 1 / 4)
    assert acc.epsilon(1e-5) == gdp_to_epsilon(mu, 1e-5)
    assert acc.epsilon(1e-5) >= invert(lambda e: gaussian_delta(mu, e), 1e-5) * (1 - 1e-12)
    assert acc.delta(1.0) == pytest.approx(gaussian_delta(mu, 1.0), rel=1e-10)


# -- Laplace ------------------------------------------------------------------
@pytest.mark.parametrize("lam", [0.3, 1.0, 10.0])
def test_laplace_single_release_is_exact_at_grid_points(lam):
    eps0 = 1 / lam
    step = eps0 / 500
    pld = mech.laplace_pld(lam, step, 1e-18)

    def exact(eps):  # from the two densities: 1 − e^{(ε − ε₀)/2} on [0, ε₀]
        return max(0.0, 1.0 - math.exp((eps - eps0) / 2))

    for i in [0, 1, 100, 250, 499, 500, 600]:
        eps = i * step
        assert pld.delta(eps) == pytest.approx(exact(eps), rel=1e-9, abs=1e-15)
    for eps in np.linspace(0, eps0, 37):  # between grid points: above, barely
        assert exact(eps) - 1e-15 <= pld.delta(eps) <= exact(eps) + 1e-5
    delta = 1e-3
    assert eps0 + 2 * math.log1p(-delta) <= pld.epsilon(delta) <= eps0 + 2 * math.log1p(-delta) + step


def _full_power(pmf, count):
    """count-fold convolution by squaring, on the full support (no window, no folding)."""
    result, base = np.array([1.0]), np.asarray(pmf, dtype=float)
    while count:
        if count & 1:
            result = np.clip(signal.fftconvolve(result, base), 0, None)
        count >>= 1
        if count:
            base = np.clip(signal.fftconvolve(base, base), 0, None)
    return result


def test_windowed_fft_composition_matches_the_full_convolution():
    # 300 Laplace releases on a grid of 1e-3: the full support has 600,301 cells,
    # so the composition runs on a Chernoff window with wrap-around
    step, count = 1e-3, 300
    one = mech.laplace_pld(1.0, step, 1e-18)
    fast = compose_plds([(one, count)], tail_bound=1e-15)
    assert fast.pmf.size < count * (one.pmf.size - 1) + 1  # a window was used
    full = PrivacyLossDistribution(step, count * one.offset, _full_power(one.pmf, count))
    for eps in [0.0, 10.0, 30.0, 45.0, 60.0]:
        ref = full.delta(eps)
        got = fast.delta(eps)
        assert got >= ref - 1e-12
        assert got <= ref * (1 + 1e-6) + 3e-15
    assert full.epsilon(1e-8) <= fast.epsilon(1e-8) <= full.epsilon(1e-8) * (1 + 1e-7)


# -- finite PLDs: randomized response, pure and approximate DP ------------------
def _pure_delta(eps0, count, eps):
    """Exact δ(ε) of count runs of ε₀-randomized response (Kairouz, Oh & Viswanath 2015)."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    j = np.arange(count + 1)
    losses = (2 * j - count) * eps0
    masses = binom.pmf(j, count, p)
    keep = losses > eps
    return float(np.sum(masses[keep] * -np.expm1(eps - losses[keep])))


@pytest.mark.parametrize("eps0, count", [(1.0, 1), (0.1, 50), (0.5, 400), (0.03, 3000)])
def test_pure_dp_composition_is_the_exact_binomial(eps0, count):
    acc = PLDAccountant().compose(PureDPEvent(eps0), count)
    for eps in [0.0, 0.5 * eps0 * math.sqrt(count), eps0 * math.sqrt(count), 3 * eps0 * math.sqrt(count)]:
        exact = _pure_delta(eps0, count, eps)
        assert acc.delta(eps) == pytest.approx(exact, rel=1e-8, abs=1e-14)
        assert acc.delta(eps) >= exact * (1 - 1e-8) - 1e-15
    exact_eps = invert(lambda e: _pure_delta(eps0, count, e), 1e-6, hi=count * eps0 + 1)
    assert acc.epsilon(1e-6) == pytest.approx(exact_eps, rel=1e-7)
    assert acc.epsilon(0.0) == pytest.approx(count * eps0, rel=1e-12)


def test_k_ary_randomized_response_is_exact():
    eps0, k, count = 0.8, 5, 30
    p1 = math.exp(eps0) / (math.exp(eps0) + k - 1)
    p2 = 1 / (math.exp(eps0) + k - 1)
    # exact composed PLD on the lattice of multiples of ε₀ (offset count): convolution of (p2, (k−2)p2, p1)
    pmf = np.array([1.0])
    for _ in range(count):
        pmf = np.convolve(pmf, [p2, (k - 2) * p2, p1])
    losses = (np.arange(pmf.size) - count) * eps0

    def exact(eps):
        keep = losses > eps
        return float(np.sum(pmf[keep] * -np.expm1(eps - losses[keep])))

    acc = PLDAccountant().compose(RandomizedResponseEvent(eps0, n_categories=k), count)
    for eps in [0.0, 1.0, 3.3, 8.0]:
        assert acc.delta(eps) == pytest.approx(exact(eps), rel=1e-9, abs=1e-15)
    # k-RR leaks less than binary RR with the same ε
    assert acc.epsilon(1e-6) < PLDAccountant().compose(PureDPEvent(eps0), count).epsilon(1e-6)


def test_approximate_dp_composition():
    eps0, delta0, count = 0.2, 1e-7, 25
    acc = PLDAccountant().compose(ApproximateDPEvent(eps0, delta0), count)
    # at ε = count·ε₀ only the δ parts remain: 1 − (1 − δ₀)^count
    assert acc.delta(count * eps0) == pytest.approx(-math.expm1(count * math.log1p(-delta0)), rel=1e-9)
    assert acc.epsilon(1e-3) < count * eps0  # advanced composition: much less than the sum
    single = PLDAccountant().compose(ApproximateDPEvent(eps0, delta0))
    assert single.delta(eps0) == pytest.approx(delta0, rel=1e-9)
    assert single.epsilon(delta0) == pytest.approx(eps0, rel=1e-9)


# -- discrete mechanisms --------------------------------------------------------
def test_discrete_laplace_with_sensitivity_one_is_randomized_response():
    # P(x) ∝ e^{−|x|/s} with Δ = 1 has losses ±1/s with masses 1/(1 + e^{−1/s}), e^{−1/s}/(1 + e^{−1/s})
    for scale in [0.5, 2.0, 10.0]:
        a = PLDAccountant().compose(DiscreteLaplaceEvent(scale), 17)
        b = PLDAccountant().compose(PureDPEvent(1 / scale), 17)
        assert a.epsilon(1e-6) == pytest.approx(b.epsilon(1e-6), rel=1e-10)


@pytest.mark.parametrize("scale, sens", [(1.0, 3), (4.0, 2), (0.7, 5)])
def test_discrete_laplace_against_the_sums(scale, sens):
    x = np.arange(-400, 400 + sens)
    p = np.exp(-np.abs(x) / scale)
    p /= p.sum()
    q = np.exp(-np.abs(x - sens) / scale)
    q /= q.sum()
    acc = PLDAccountant().compose(DiscreteLaplaceEvent(scale, sensitivity=sens))
    for eps in [0.0, 0.5 / scale, sens / scale]:
        exact = float(np.sum(np.maximum(p - math.exp(eps) * q, 0)))
        assert acc.delta(eps) == pytest.approx(exact, rel=1e-9, abs=1e-15)
    assert acc.epsilon(0.0) == pytest.approx(sens / scale, rel=1e-12)


@pytest.mark.parametrize("sigma, sens", [(0.8, 1), (3.0, 2), (10.0, 1)])
def test_discrete_gaussian_against_the_sum_over_the_integers(sigma, sens):
    x = np.arange(-int(60 * sigma) - 20, int(60 * sigma) + 20 + sens)
    p = np.exp(-(x**2) / (2 * sigma**2))
    p /= p.sum()
    q = np.exp(-((x - sens) ** 2) / (2 * sigma**2))
    q /= q.sum()
    acc = PLDAccountant().compose(DiscreteGaussianEvent(sigma, sensitivity=sens))
    for eps in [0.0, 0.1, 0.5, 1.5]:
        exact = float(np.sum(np.maximum(p - math.exp(eps) * q, 0)))
        got = acc.delta(eps)
        assert got >= exact * (1 - 1e-9) - 1e-15
        assert got <= exact * 1.001 + 1e-12
    # a discrete Gaussian leaks at most as much as... itself: the RDP view is looser
    from skdp.accounting import RDPAccountant
    assert acc.epsilon(1e-6) <= RDPAccountant().compose(DiscreteGaussianEvent(sigma, sensitivity=sens)).epsilon(1e-6)


# -- Poisson-subsampled Gaussian: numerical integration --------------------------
def _mixture(x, q, mu):
    return (1 - q) * norm.pdf(x) + q * norm.pdf(x - mu)


def _hockey_stick(p, qd, eps, mu):
    """∫ max(0, p(x) − e^ε q(x)) dx, split where the integrand changes sign (found by root finding)."""

    def f(x):
        return p(x) - math.exp(eps) * qd(x)

    grid = np.linspace(-14.01234, 14.00567 + mu, 2001)  # off any symmetric crossing point
    vals = f(grid)
    cuts = [optimize.brentq(f, grid[i], grid[i + 1], xtol=1e-14)
            for i in np.flatnonzero(vals[:-1] * vals[1:] < 0)]
    edges = [-40.0] + cuts + [40.0 + mu]
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        probe = min(max(0.5 * (a + b), -13.9), 13.9 + mu)  # where the densities do not underflow
        if not a < probe < b:
            probe = 0.5 * (a + b)
        if f(probe) > 0:
            total += integrate.quad(f, a, b, epsabs=1e-15, epsrel=1e-11, limit=200)[0]
    return total


@pytest.mark.parametrize("q, sigma", [(0.01, 1.0), (0.3, 0.8), (0.001, 0.5), (0.7, 3.0)])
def test_poisson_subsampled_gaussian_one_step_against_integration(q, sigma):
    mu = 1 / sigma
    acc = PLDAccountant().compose(PoissonSampledEvent(q, GaussianEvent(sigma)))
    for eps in [0.0, 0.01, 0.2, 1.0]:
        remove = _hockey_stick(lambda x: _mixture(x, q, mu), norm.pdf, eps, mu)
        add = _hockey_stick(norm.pdf, lambda x: _mixture(x, q, mu), eps, mu)
        exact = max(remove, add)
        got = acc.delta(eps)
        assert got >= exact * (1 - 1e-7) - 1e-14
        assert got <= exact * 1.002 + 1e-12


def test_poisson_subsampled_gaussian_two_steps_against_integration():
    # δ of two runs (remove direction; the add direction's loss stays below
    # 2·log(1/(1 − q)) < ε, so its δ is 0): ∫ p(x) δ₁(ε − L(x)) dx by adaptive
    # quadrature, with δ₁(t) the one-run δ at any real t (Gaussian tails beyond the
    # crossing point of the two densities)
    q, sigma, eps = 0.2, 1.0, 0.5
    mu = 1 / sigma
    assert 2 * -math.log1p(-q) < eps

    def remove_loss(x):
        return math.log(1 - q + q * math.exp(mu * x - mu * mu / 2))

    def one_run(t):  # ∫ max(0, p − e^t φ): p − e^t φ = φ(x)(1 − q − e^t + q e^{μx − μ²/2}) changes sign once
        if 1 - q - math.exp(t) >= 0:
            return -math.expm1(t)
        cut = optimize.brentq(lambda x: q * math.exp(mu * x - mu * mu / 2) - (math.exp(t) - 1 + q), -60, 60,
                              xtol=1e-14)
        # the integral of the Gaussian densities beyond the cut
        return (1 - q - math.exp(t)) * norm.sf(cut) + q * norm.sf(cut - mu)

    exact = integrate.quad(lambda x: _mixture(x, q, mu) * one_run(eps - remove_loss(x)), -12, 12 + mu,
                           epsabs=1e-14, epsrel=1e-11, limit=200)[0]
    acc = PLDAccountant().compose(PoissonSampledEvent(q, GaussianEvent(sigma)), 2)
    got = acc.delta(eps)
    assert got >= exact * (1 - 1e-8)
    assert got <= exact * 1.0001
    remove, add = acc.privacy_loss_distributions()
    assert add.delta(eps) <= 1e-14


# -- sampling without replacement ---------------------------------------------------
@pytest.mark.parametrize("q", [0.001, 0.05, 0.3, 0.9])
@pytest.mark.parametrize("mu", [0.2, 1.0, 3.0])
def test_remove_direction_dominates_add_for_positive_epsilon(q, mu):
    # the fact the without-replacement PLD rests on: for ε >= 0 the "remove" pair
    # ((1 − q)N(0,1) + qN(μ,1), N(0,1)) has the larger δ (checked by integration)
    for eps in [0.0, 0.1, 1.0, 3.0]:
        remove = _hockey_stick(lambda x: _mixture(x, q, mu), norm.pdf, eps, mu)
        add = _hockey_stick(norm.pdf, lambda x: _mixture(x, q, mu), eps, mu)
        assert remove >= add * (1 - 1e-9) - 1e-16


def test_without_replacement_is_the_symmetrised_remove_pld_with_doubled_sensitivity():
    gamma, sigma, step = 0.05, 2.0, 1e-3
    wor = mech.without_replacement_gaussian_pld(gamma, sigma, step, 1e-18)
    remove = mech.poisson_gaussian_remove_pld(gamma, sigma / 2, step, 1e-18)
    eps = np.linspace(0, 2, 41)
    np.testing.assert_allclose(wor.delta(eps), remove.delta(eps), rtol=1e-12, atol=1e-16)
    # symmetric: mass e^{−l} p(l) at −l, and a proper distribution
    losses = wor.losses
    pos = losses > 0
    mirrored = wor.pmf[: (wor.pmf.size - 1) // 2][::-1]
    np.testing.assert_allclose(mirrored, wor.pmf[(wor.pmf.size + 1) // 2:] * np.exp(-losses[pos]), rtol=1e-12)
    assert wor.pmf.sum() + wor.infinity_mass == pytest.approx(1.0, abs=1e-12)


def test_without_replacement_full_batch_is_the_replace_one_gaussian():
    # γ = 1: every step is the Gaussian with replace-one sensitivity 2C, μ = 2/σ per step
    acc = PLDAccountant().compose(SampledWithoutReplacementEvent(1.0, GaussianEvent(4.0)), 9)
    mu = 2 * 3 / 4.0
    exact = invert(lambda e: gaussian_delta(mu, e), 1e-5)
    assert exact <= acc.epsilon(1e-5) <= exact * 1.001


def test_without_replacement_is_tighter_than_its_rdp_bound():
    for gamma, sigma, steps in [(0.01, 1.0, 1000), (0.1, 3.0, 200)]:
        pld = PLDAccountant().compose(SampledWithoutReplacementEvent(gamma, GaussianEvent(sigma)), steps)
        rdp = sampled_without_replacement_gaussian_rdp(gamma, sigma, steps).epsilon(1e-5)
        poisson = PLDAccountant().compose(PoissonSampledEvent(gamma, GaussianEvent(sigma)), steps)
        assert poisson.epsilon(1e-5) < pld.epsilon(1e-5) < rdp


# -- monotonicity -------------------------------------------------------------------
def _dpsgd_eps(q, sigma, steps, delta):
    return PLDAccountant().compose(PoissonSampledEvent(q, GaussianEvent(sigma)), steps).epsilon(delta)


@pytest.mark.parametrize("seed", range(6))
def test_monotone_in_sigma_rate_steps_and_delta(seed):
    rng = np.random.default_rng(seed)
    q = float(10 ** rng.uniform(-3, -0.5))
    sigma = float(10 ** rng.uniform(math.log10(0.6), 1))
    steps = int(10 ** rng.uniform(0, 3))
    delta = float(10 ** rng.uniform(-9, -4))
    base = _dpsgd_eps(q, sigma, steps, delta)
    assert _dpsgd_eps(q, sigma * 1.05, steps, delta) < base
    assert _dpsgd_eps(min(1.0, q * 1.5), sigma, steps, delta) > base
    assert _dpsgd_eps(q, sigma, steps * 2, delta) > base
    assert _dpsgd_eps(q, sigma, steps, delta * 10) < base


# -- the PrivacyLossDistribution object ---------------------------------------------
def test_privacy_loss_distribution_queries_and_validation():
    p = math.exp(0.5) / (1 + math.exp(0.5))
    pld = PrivacyLossDistribution(0.5, -1, [1 - p, 0.0, p])
    assert pld.epsilon(0.0) == 0.5
    assert pld.delta(0.5) == 0.0
    assert pld.delta(0.0) == pytest.approx(p - (1 - p), rel=1e-12)  # total variation
    assert pld.delta(np.array([0.0, 0.25, 0.5])).shape == (3,)
    twice = pld.self_compose(2)
    assert twice.epsilon(0.0) == pytest.approx(1.0)
    assert twice.delta(0.0) == pytest.approx(_pure_delta(0.5, 2, 0.0), rel=1e-12)
    assert pld.compose(pld).delta(0.3) == pytest.approx(twice.delta(0.3), rel=1e-12)
    with pytest.raises(ValueError):
        PrivacyLossDistribution(0.0, 0, [1.0])
    with pytest.raises(ValueError):
        PrivacyLossDistribution(0.1, 0, [-0.1, 1.1])
    with pytest.raises(ValueError):
        PrivacyLossDistribution(0.1, 0.5, [1.0])
    with pytest.raises(ValueError):
        pld.delta(-1.0)
    with pytest.raises(ValueError):
        pld.epsilon(1.0)
    inf = PrivacyLossDistribution(0.1, 0, [0.5], 0.5)
    assert inf.epsilon(0.4) == math.inf and inf.epsilon(0.5) == 0.0


def test_self_composition_of_zero_runs_is_refused_and_counts_are_checked():
    pld = PrivacyLossDistribution(0.1, 0, [1.0])
    with pytest.raises(ValueError):
        pld.self_compose(-1)
    with pytest.raises(ValueError):
        pld.self_compose(1.5)


def test_losses_in_the_thousands():
    # e^{−l} underflows for such losses; δ and ε are computed relative to each cell
    acc = PLDAccountant().compose(PureDPEvent(800.0), 3)
    assert acc.epsilon(1e-6) == pytest.approx(2400.0, abs=1e-3)
    assert acc.delta(2399.0) == pytest.approx(-math.expm1(-1.0), rel=1e-6)
    from skdp.accounting import RDPAccountant

    event = SelfComposedEvent(PoissonSampledEvent(0.4, GaussianEvent(0.6)), 3000)
    pld = PLDAccountant().compose(event).epsilon(1e-9)
    assert 100 < pld < RDPAccountant().compose(event).epsilon(1e-9)


def test_nearly_pure_compositions_stay_below_their_largest_loss_and_rdp():
    # found by a random sweep: the grid was sized from an over-estimated discrete
    # Laplace loss variance, and ε came out above both the largest loss and RDP
    from skdp.accounting import ComposedEvent, RDPAccountant

    event = ComposedEvent([SelfComposedEvent(ApproximateDPEvent(2.4914, 1e-10), 214),
                           SelfComposedEvent(DiscreteLaplaceEvent(0.18426, sensitivity=3), 589)])
    acc = PLDAccountant().compose(event)
    ceiling = 214 * 2.4914 + 589 * 3 / 0.18426
    assert acc.epsilon(4.44e-7) < RDPAccountant().compose(event).epsilon(4.44e-7)
    assert acc.epsilon(4.44e-7) < ceiling
    # beyond the largest finite loss only the infinite losses of the δ parts remain
    assert acc.delta(ceiling) == pytest.approx(-math.expm1(214 * math.log1p(-1e-10)), rel=1e-9)
    assert acc.epsilon(0.0) == math.inf
