"""Review of the private search's discrete Gaussian counts (with a total epsilon) and refit share.

1. ``_count_noise_multiplier`` formed ρ = (√(log(1/δ) + ε) − √log(1/δ))² by a
   difference of two close square roots: below ε ≈ 1e-5 the cancellation
   lost more than the 1e-9 margin, and a count's ρ was up to ~1e-5 (relative)
   above what Bun & Steinke 2016, Prop. 1.3 allows for (ε, δ). The search's
   charge was always that of the ρ actually used (the budget composes the
   curve, not the ε/10 claim), so no spend exceeded its total; the claim
   "one count alone is (ε/10, δ)-DP" did not hold there.
2. With ``refit=True`` and a total too small for DPLogisticRegression, the
   refit's calibration error ("No noise multiplier reaches epsilon=0.00195…",
   an ε the user never gave) came out of the refit's share search instead of
   the search's own "epsilon is too small for this search" (nothing charged
   either way).
3. An empirical audit of the count noise as the search draws it: for
   neighbouring counts c and c + 1, every tail set S keeps
   P[M(c) ∈ S] <= e^ε P[M(c + 1) ∈ S] + δ within Clopper–Pearson bounds
   (ε = total/10), the same test flags neighbours 10 apart, and the draws
   follow the exact discrete Gaussian pmf.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import beta

from skdp import PrivacyBudget
from skdp.accounting import zcdp_to_epsilon
from skdp.linear_model import DPLogisticRegression
from skdp.model_selection import DPGridSearchCV
from skdp.model_selection._plan import _count_noise_multiplier
from skdp.naive_bayes import DPGaussianNB


def _search(epsilon, delta=1e-5, **kw):
    return DPGridSearchCV(DPGaussianNB(bounds=(-3.0, 3.0), classes=[0, 1]),
                          {"var_smoothing": [1e-9]}, epsilon=epsilon, delta=delta, **kw)


@pytest.mark.parametrize("delta", [1e-12, 1e-8, 1e-5, 1e-2, 0.5])
def test_one_count_is_eps_over_10_delta_dp_even_at_tiny_eps(delta):
    # Bun & Steinke 2016, Prop. 1.3 for the rho charged, at every epsilon the search accepts
    for total in np.logspace(-9, 4, 131):
        search = _search(total, delta)
        eps, counts = search._score_epsilon(), search._score_mechanism()
        assert eps == pytest.approx(total / 10, rel=1e-12)
        bs16 = zcdp_to_epsilon(counts.rho, delta, method="bs16")
        assert bs16 <= eps, (eps, delta, bs16 / eps - 1)
        assert bs16 >= eps * (1 - 1e-8)  # and not much more noise than needed
        # the sigma drawn (and the PLD event's) is at least the one behind the charged rho
        assert Fraction(counts.sigma) ** 2 * 2 * Fraction(counts.rho) >= 1
        assert counts.privacy_curve().event.sigma == counts.sigma
        assert counts.sigma >= _count_noise_multiplier(eps, delta)


def test_a_total_too_small_for_the_refit_is_refused_by_the_search_itself():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    budget = PrivacyBudget(10.0, 1e-5)
    search = DPGridSearchCV(DPLogisticRegression(classes=[0, 1]), {"C": [1.0]}, epsilon=0.005,
                            budget=budget, random_state=0)
    with pytest.raises(ValueError, match="epsilon is too small for this search"):
        search.fit(X, y)
    assert budget.spent()[0] == 0.0


def _clopper_pearson(k, n, alpha):
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        lo = np.where(k == 0, 0.0, beta.ppf(alpha / 2, k, n - k + 1))
        hi = np.where(k == n, 1.0, beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def _largest_violation(a, b, eps, delta, alpha=1e-6):
    """max over tail sets S of lower_CP(P[a ∈ S]) − (e^ε upper_CP(P[b ∈ S]) + δ), both ways.

    The discrete Gaussian's shifts have a monotone likelihood ratio, so the
    sets {x <= t} and {x >= t} are the ones where a violation would show.
    """
    ts = np.arange(min(a.min(), b.min()) - 1, max(a.max(), b.max()) + 2)
    sa, sb = np.sort(a), np.sort(b)
    worst = -np.inf
    for le in (True, False):
        ka = np.searchsorted(sa, ts, "right") if le else a.size - np.searchsorted(sa, ts, "left")
        kb = np.searchsorted(sb, ts, "right") if le else b.size - np.searchsorted(sb, ts, "left")
        (la, ua), (lb, ub) = _clopper_pearson(ka, a.size, alpha), _clopper_pearson(kb, b.size, alpha)
        worst = max(worst, np.max(la - (math.exp(eps) * ub + delta)),
                    np.max(lb - (math.exp(eps) * ua + delta)))
    return worst


@pytest.mark.parametrize("total", [10.0, 3.0])
def test_the_counts_noise_passes_an_empirical_dp_audit(total):
    n, c, delta = 2500, 1000, 1e-5
    counts = _search(total, delta)._score_mechanism()
    # as _one_run draws it: count + noise, with the mechanism's own randomise
    a = np.asarray(counts.randomise(np.full(n, c), random_state=1))
    b = np.asarray(counts.randomise(np.full(n, c + 1), random_state=2))
    assert _largest_violation(a, b, total / 10, delta) <= 0
    # the audit has power: the same draws, neighbours 10 apart (sensitivity 10), fail it
    assert _largest_violation(a, b + 9, total / 10, delta) > 0
    # the draws follow the exact pmf P(x) ∝ exp(−x²/(2σ²)): the empirical CDF is within the
    # DKW band (failure probability 1e-6) of the exact one
    noise = np.concatenate([a - c, b - c - 1])
    grid = np.arange(-int(40 * counts.sigma) - 10, int(40 * counts.sigma) + 11)
    pmf = np.exp(-grid.astype(float) ** 2 / (2 * counts.sigma ** 2))
    cdf = np.cumsum(pmf / pmf.sum())
    ecdf = np.searchsorted(np.sort(noise), grid, "right") / noise.size
    assert np.max(np.abs(ecdf - cdf)) <= math.sqrt(math.log(2 / 1e-6) / (2 * noise.size))
