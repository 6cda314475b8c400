"""How one query spends its (ε, δ): the parts, their shares, and the curve charged once.

A query is made of up to four parts, each a mechanism of its own:

- ``select``: the private choice of keys when none are public (:mod:`._keys`);
- ``bounds``: private bounds of the value columns that have none
  (:mod:`skdp.stats._range`, on the rows kept for the query);
- ``sums``: the noisy sums of every count, sum, mean, var and std
  (:mod:`._aggregates`);
- ``quantiles``: one exponential mechanism per group and quantile.

A count of rows with privately chosen keys and one row per person and key
needs no ``sums`` part: the selection's noisy counts of people are those
counts, published with the keys (as OpenDP and Wilson et al. 2020 do), so the
selection gets all of (ε, δ).

**The split.** Each part gets a weight: one for ``select``, one for
``bounds``, one per aggregate for ``sums`` (:data:`FLAG_COUNT_WEIGHT` when only
quantiles are asked: their counts serve only to flag small groups) and one
per quantile. The parts that use δ
(all but the quantiles) share δ equally. Then every part's ε is the same
multiple x of its weight's share of ε, x the largest (to 1e-6) whose composed
curve is still (ε, δ)-DP by the budget's accountant (PLD, or RDP: Mironov
2017), found by bisection (:func:`skdp.accounting._bisect.largest_within`).
By basic composition (Dwork & Roth 2014, Thm. 3.16) x = 1 always meets the
target. Where every part is ε-DP or (ε, δ)-DP with its own pure ε (Laplace,
the exponential mechanism, the selection), x = 1: the query is then exactly
ε-DP (plus the selection's δ) and two queries at ε/2 compose to ε. Where a
part is Gaussian, the tighter accountants usually let x exceed 1. Everything here comes
from public parameters: the aggregates, the number of groups a person may
touch (G) and rows per group (R), ε and δ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..accounting import RDPCurve, epsilon_of
from ..accounting._bisect import largest_within
from ..mechanisms import exponential_mechanism_rdp
from ..stats import _histograms, _noise
from . import _keys

__all__ = []  # internal

# The weight of the counts of a query that asks only quantiles (they flag small groups).
FLAG_COUNT_WEIGHT = 0.1


@dataclass
class Plan:
    """The parts of one query and the (ε, δ) of each, from public parameters only."""

    epsilon: float
    delta: float
    n_sums: int
    n_quantiles: int
    n_aggregates: int
    select: bool
    n_bounds: int
    max_groups: int
    max_rows: int
    accountant: str = "tightest"
    counts_from_selection: bool = False
    budgets: dict = field(default_factory=dict)

    def __post_init__(self):
        weights = {}
        if self.select:
            weights["select"] = 1.0
        if self.n_bounds:
            weights["bounds"] = 1.0
        if self.n_sums:
            n_sum_aggregates = self.n_aggregates - self.n_quantiles
            # quantiles alone need only the counts that flag small groups: a tenth
            weights["sums"] = float(n_sum_aggregates) if n_sum_aggregates else FLAG_COUNT_WEIGHT
        if self.n_quantiles:
            weights["quantiles"] = float(self.n_quantiles)
        total = sum(weights.values())
        uses_delta = [p for p in weights if p != "quantiles"]
        deltas = {p: self.delta / len(uses_delta) for p in uses_delta}
        self.shares = {p: w / total for p, w in weights.items()}
        self.deltas = deltas
        if self.epsilon == math.inf:
            self.budgets = {p: (math.inf, deltas.get(p, 0.0)) for p in weights}
            self.curve = RDPCurve.non_private()
            return

        def budgets_at(x):
            return {p: (x * s * self.epsilon, deltas.get(p, 0.0)) for p, s in self.shares.items()}

        def cost(x):
            return epsilon_of(self._curve(budgets_at(x)), self.delta, accountant=self.accountant)

        x = 1.0
        if self._curve(budgets_at(1.0)).pure_epsilon > self.epsilon * (1.0 + 1e-12):
            # a Gaussian part: raise every share as far as the accountant allows
            x = largest_within(cost, self.epsilon * (1.0 + 1e-12), 1.0, rtol=1e-6)
        self.budgets = budgets_at(x)
        self.curve = self._curve(self.budgets)

    @property
    def k(self):
        """Normalised sums of the ``sums`` part: k sums in each of G groups."""
        return self.n_sums * self.max_groups

    def _curve(self, budgets):
        curve = 0
        for part, (eps, delta) in budgets.items():
            if part == "select":
                curve = curve + _keys.selection_curve(eps, delta)
            elif part == "bounds":
                curve = curve + _histograms._histogram_curve(eps, delta, self.n_bounds)
            elif part == "sums":
                curve = curve + _noise._sums_curve(eps, delta, self.k)
            else:
                m = self.n_quantiles * self.max_groups
                curve = curve + m * exponential_mechanism_rdp(eps / m)
        return curve

    def sum_noise(self, sensitivities):
        """(distribution, scale) of each noisy sum: "laplace" and b, or "gaussian" and σ.

        ``sensitivities`` are per row; a person moves each by R times that.
        """
        eps, delta = self.budgets["sums"]
        sens = np.asarray(sensitivities, dtype=float) * self.max_rows
        sens = np.where(sens > 0, sens, np.finfo(float).tiny)
        scales = _noise._noise_scales(eps, delta, self.k, sens)
        return ("laplace" if _noise._sums_delta(eps, delta, self.k) == 0 else "gaussian"), scales

    def bounds_noise(self, eps, delta):
        """(distribution, scale) of the counts of the bounds' log-scale histograms.

        A person keeps R·G rows in all, each in one bin of each histogram.
        """
        scale = _noise._noise_scales(eps, delta, self.n_bounds, self.max_rows * self.max_groups)
        dist = "laplace" if _noise._sums_delta(eps, delta, self.n_bounds) == 0 else "gaussian"
        return dist, float(scale)

    @property
    def quantile_epsilon(self):
        """ε of each group's exponential mechanism for one quantile."""
        eps, _ = self.budgets["quantiles"]
        return eps / (self.n_quantiles * self.max_groups)

    def rank_error(self, alpha, n_groups=None):
        """Rank error (rows) of a quantile exceeded with probability at most α.

        The exponential mechanism's utility theorem over the bins (McSherry &
        Talwar 2007, Thm. 8; Dwork & Roth 2014, Thm. 3.11): the loss exceeds
        (2Δ/ε′)·(ln B + ln(1/α)) with probability at most α, Δ = R, for the
        B bins of ``n_groups`` groups (the most bins there can be when the
        number of groups is not known yet).
        """
        from ._aggregates import GRID_SIZE, n_bins

        bins = GRID_SIZE if n_groups is None else n_bins(n_groups)
        return (2.0 * self.max_rows / self.quantile_epsilon) * (
            math.log(bins) + math.log(1.0 / alpha))


def noise_half_width(distribution, scale, alpha):
    """Half-width of the central (1 − α) interval of one noise draw."""
    if distribution == "laplace":
        return scale * math.log(1.0 / alpha)  # P(|Lap(b)| > t) = exp(−t/b)
    from scipy.special import ndtri

    return scale * float(ndtri(1.0 - alpha / 2.0))


def noise_std(distribution, scale):
    """Standard deviation of one noise draw."""
    return scale * math.sqrt(2.0) if distribution == "laplace" else scale
