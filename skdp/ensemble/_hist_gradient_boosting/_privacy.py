"""The privacy plan of a boosting fit: from public parameters alone, before the charge.

Every release of the fit is ρ-zCDP (Bun & Steinke 2016): the Gaussian sums
with ρ = 1/(2σ²) (σ = noise std / L2 sensitivity; Mironov 2017, Prop. 7)
and the exponential-mechanism splits with ρ = ε_s²/8 (Cesar & Rogers 2021,
Lemma 3.2). So the whole fit has the curve α·ρ_total of one Gaussian,
ρ_total the largest whose RDP curve converts to (ε, δ)
(:func:`calibrate_rho`, by bisection on the curve's own conversion). It is shared as:

- :data:`COUNT_SHARE` to the first release (the class counts, or the count
  and the sum of the scaled target), which gives the model's baseline and
  the noisy row count;
- of the rest, :data:`SPLIT_SHARE` to the splits, evenly over the
  ``max_iter × n_trees_per_round × max_depth`` levels (ε_s = √(8ρ/levels));
- the remainder to the leaves, over ``max_iter`` rounds, :data:`HESSIAN_SHARE`
  of it to the hessian sums. A round's leaf sums of all its trees are one
  Gaussian release of joint L2 sensitivity Δ_g (gradients) and Δ_h
  (hessians) per row.

Splitting ρ evenly over rounds fixes each release's noise whatever the data.
"""

import math
from dataclasses import dataclass

from ...accounting import RDPCurve, gaussian_rdp, zcdp_rdp
from ...tree._zcdp import calibrate_rho

__all__ = ["BoostingPlan", "plan_boosting"]

# Shares of ρ_total, fixed once (not tuned per table). Checked at ε = 1 (3 seeds,
# benchmarks/bench_trees.py's tables) against split shares 0.3 and 0.7 and a hessian
# share of 0.15: (0.5, 0.3) was best on adult, breast_cancer and diamonds; loans
# preferred (0.3, 0.15) (R² 0.194 against 0.178).
COUNT_SHARE = 0.02
SPLIT_SHARE = 0.5
HESSIAN_SHARE = 0.3


@dataclass(frozen=True)
class BoostingPlan:
    """The zCDP ρ of each part of a fit (``inf`` for ε = ∞)."""

    rho_count: float
    rho_split: float
    rho_grad: float
    rho_hess: float

    @property
    def private(self):
        return self.rho_count < math.inf

    def curve(self):
        """The fit's RDP curve: the sum of its parts' (each linear in α)."""
        if not self.private:
            return RDPCurve.non_private()
        return (gaussian_rdp(1.0 / math.sqrt(2.0 * self.rho_count))
                + zcdp_rdp(self.rho_split)
                + gaussian_rdp(1.0 / math.sqrt(2.0 * self.rho_grad))
                + gaussian_rdp(1.0 / math.sqrt(2.0 * self.rho_hess)))

    def count_std(self, sensitivity):
        """Noise std of the first release, of L2 ``sensitivity``."""
        return sensitivity / math.sqrt(2.0 * self.rho_count) if self.private else 0.0

    def split_epsilon(self, n_levels):
        """ε_s of each of the fit's ``n_levels`` exponential mechanisms."""
        return math.sqrt(8.0 * self.rho_split / n_levels) if self.private else math.inf

    def leaf_stds(self, n_rounds, grad_sensitivity, hess_sensitivity):
        """Noise stds of every leaf's gradient and hessian sum, ``n_rounds`` rounds."""
        if not self.private:
            return 0.0, 0.0
        return (grad_sensitivity * math.sqrt(n_rounds / (2.0 * self.rho_grad)),
                hess_sensitivity * math.sqrt(n_rounds / (2.0 * self.rho_hess)))


def plan_boosting(epsilon, delta):
    """The plan of a fit at (ε, δ): the ρ_total of :func:`calibrate_rho`, shared."""
    if epsilon == math.inf:
        return BoostingPlan(math.inf, math.inf, math.inf, math.inf)
    rho = calibrate_rho(epsilon, delta)
    rest = rho * (1.0 - COUNT_SHARE)
    leaves = rest * (1.0 - SPLIT_SHARE)
    return BoostingPlan(rho_count=rho * COUNT_SHARE, rho_split=rest * SPLIT_SHARE,
                        rho_grad=leaves * (1.0 - HESSIAN_SHARE),
                        rho_hess=leaves * HESSIAN_SHARE)
