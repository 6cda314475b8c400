"""Does the PLD of the exponential mechanism's event lower ε below its RDP curve's?

The exponential mechanism's curve (skdp.mechanisms.exponential_mechanism_rdp:
the smaller of pure ε-DP and (ε²/8)-zCDP) carries a BoundedRangeEvent, whose
PLD is the binary randomized-response pair (valid for every ε-DP mechanism).
For two releases, ε at δ by each accountant and the tightest (the smaller):

- a boosting fit's plan (DPHistGradientBoosting*, the default 20 rounds of
  depth-2 trees, binary): its charged curve is Gaussians plus ρ_split-zCDP
  for the splits; written instead as ``n_levels`` exponential mechanisms at
  ε_s = √(8ρ_split/n_levels) with their events, beside the same Gaussians;
- a quantile release (skdp.stats.quantile, method="split"): k exponential
  mechanisms at ε/k, charged as they are.

Then ledgers that hold either release beside other charges (the issue's
DP-SGD run, 40 Gaussian releases at σ = 8): the budget's tightest ε with the
events, against the same charges without the exponential mechanisms' events
(as before they had one: those charges joined the PLD of the others by RDP
and a split of δ).

    python benchmarks/bench_bounded_range.py
"""

import math
import os
import platform
import time

import numpy as np

from skdp.accounting import epsilon_of, gaussian_rdp, poisson_subsampled_gaussian_rdp
from skdp.ensemble._hist_gradient_boosting._privacy import plan_boosting
from skdp.mechanisms import exponential_mechanism_rdp
from skdp.stats._quantiles import _quantile_curve

DELTA = 1e-5


def boosting_curves(epsilon, n_levels):
    """(charged curve, the same fit with its splits as exponential-mechanism events)."""
    plan = plan_boosting(epsilon, DELTA)
    gaussians = (gaussian_rdp(1.0 / math.sqrt(2.0 * plan.rho_count))
                 + gaussian_rdp(1.0 / math.sqrt(2.0 * plan.rho_grad))
                 + gaussian_rdp(1.0 / math.sqrt(2.0 * plan.rho_hess)))
    splits = n_levels * exponential_mechanism_rdp(plan.split_epsilon(n_levels))
    return plan.curve(), gaussians + splits


def ledger_row(name, charges):
    """The tightest ε of a ledger of ``charges``, with and without the exponential events."""
    from skdp.accounting._accountants import compose_spend, pld_leaves

    def spend(curves):
        total = curves[0]
        for c in curves[1:]:
            total = total + c
        leaves, rest = [], None
        for c in curves:
            found = pld_leaves(c)
            if found is None:
                bare = c.with_event(None)
                rest = bare if rest is None else rest + bare
            else:
                leaves += found
        return compose_spend(total.with_event(None), leaves, rest, DELTA)

    now = spend(charges)
    before = spend([c if c.event is None or "bounded_range" not in str(c.event.to_dict())
                    else c.with_event(None) for c in charges])
    print(f"{name:<46} {before[0]:>8.4f} {before[2]:>8} {now[0]:>8.4f} {now[2]:>8} "
          f"{100 * (1 - now[0] / before[0]):>6.2f}%")


def row(name, curve):
    start = time.perf_counter()
    eps = {a: epsilon_of(curve, DELTA, accountant=a) for a in ("rdp", "pld", "tightest")}
    ms = 1e3 * (time.perf_counter() - start)
    gain = 1.0 - eps["tightest"] / eps["rdp"]
    print(f"{name:<46} {eps['rdp']:>8.4f} {eps['pld']:>8.4f} {eps['tightest']:>8.4f} "
          f"{100 * gain:>6.2f}% {ms:>7.0f}")


def main():
    print(f"Python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"load average {os.getloadavg()[0]:.2f}; δ = {DELTA:g}")
    print(f"{'release':<46} {'RDP ε':>8} {'PLD ε':>8} {'tightest':>8} {'gain':>7} {'ms':>7}")
    for epsilon in (0.5, 1.0, 4.0):
        for max_iter in (20, 100):
            n_levels = max_iter * 2  # depth-2 trees, one per round (binary)
            charged, with_events = boosting_curves(epsilon, n_levels)
            row(f"boosting ε={epsilon:g}, {max_iter} rounds: charged (zCDP)", charged)
            row(f"  same, {n_levels} exponential mechanisms", with_events)
    for epsilon in (0.1, 1.0):
        for k in (1, 2, 3, 10, 100):
            row(f"quantiles ε={epsilon:g}, {k} mechanisms at ε/{k}", _quantile_curve(epsilon, DELTA, k))
    print()
    print(f"{'ledger':<46} {'before':>8} {'by':>8} {'events':>8} {'by':>8} {'gain':>7}")
    sgd = poisson_subsampled_gaussian_rdp(256 / 60000, 1.1, 14063)
    gaussians = 40 * gaussian_rdp(8.0)
    for base_name, base in (("DP-SGD run", sgd), ("40 Gaussians σ=8", gaussians)):
        for epsilon, k in ((0.1, 1), (0.1, 10), (1.0, 1), (1.0, 10), (1.0, 30), (1.0, 100)):
            ledger_row(f"{base_name} + quantiles ε={epsilon:g}, k={k}",
                       [base, _quantile_curve(epsilon, DELTA, k)])
        _, boosting = boosting_curves(1.0, 40)
        ledger_row(f"{base_name} + boosting ε=1 (40 exp. mechanisms)", [base, boosting])


if __name__ == "__main__":
    main()
