"""Write tests/accounting/data/pld_reference.json: dp-accounting's PLD ε on a set of cases.

dp-accounting is not a dependency of skdp, not even for the tests: this
script is run once, by hand, with dp-accounting installed
(``pip install dp-accounting``), and its output is committed. The tests
then check skdp's PLD accountant against the stored numbers without
dp-accounting.

For each case it stores the event (``event.to_dict()``, so the test rebuilds
it with ``event_from_dict``), δ, and two ε of dp-accounting on a grid of
spacing ``GRID``:

- ``pessimistic``: its pessimistic ("connect the dots") PLD, an upper bound
  on the exact ε;
- ``optimistic``: its optimistic PLD, a lower bound on the exact ε.

The cases: the four of the issue that asked for the accountant, 24 random
DP-SGD runs (seed 0: q from 1e-5 to 1, σ from 0.4 to 50, up to 1e5 steps,
δ from 1e-10 to 1e-3, kept when skdp's RDP ε is between 0.05 and 30), and
compositions of Laplace, discrete Laplace and discrete Gaussian releases.

Run::

    python benchmarks/make_pld_reference.py
"""

import json
import math
import pathlib
import sys
import time

import numpy as np

from skdp.accounting import (
    ComposedEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    SelfComposedEvent,
    poisson_subsampled_gaussian_rdp,
)

GRID = 1e-4
OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "accounting" / "data" / "pld_reference.json"


def dpa_pld(leaf, pessimistic):
    """dp-accounting's PLD of one run of a skdp leaf event."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    kw = dict(pessimistic_estimate=pessimistic, value_discretization_interval=GRID)
    if isinstance(leaf, PoissonSampledEvent):
        return pld.from_gaussian_mechanism(leaf.event.noise_multiplier, sampling_prob=leaf.sampling_rate,
                                           use_connect_dots=pessimistic, **kw)
    if isinstance(leaf, GaussianEvent):
        return pld.from_gaussian_mechanism(leaf.noise_multiplier, use_connect_dots=pessimistic, **kw)
    if isinstance(leaf, LaplaceEvent):
        return pld.from_laplace_mechanism(leaf.noise_multiplier, use_connect_dots=pessimistic, **kw)
    if isinstance(leaf, DiscreteLaplaceEvent):
        return pld.from_discrete_laplace_mechanism(1.0 / leaf.scale, sensitivity=leaf.sensitivity, **kw)
    if isinstance(leaf, DiscreteGaussianEvent):
        return pld.from_discrete_gaussian_mechanism(leaf.sigma, sensitivity=leaf.sensitivity, **kw)
    raise ValueError(leaf)


def dpa_epsilon(event, delta, pessimistic):
    parts = event.events if isinstance(event, ComposedEvent) else (event,)
    total = None
    for part in parts:
        leaf, count = (part.event, part.count) if isinstance(part, SelfComposedEvent) else (part, 1)
        one = dpa_pld(leaf, pessimistic).self_compose(count)
        total = one if total is None else total.compose(one)
    return float(total.get_epsilon_for_delta(delta))


def cases():
    def dpsgd(q, sigma, steps):
        return SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(sigma)), steps)

    out = [
        (dpsgd(256 / 60000, 1.1, 14063), 1e-5),
        (dpsgd(0.01, 4.0, 10000), 1e-5),
        (SelfComposedEvent(GaussianEvent(8.0), 40), 1e-5),
        (SelfComposedEvent(LaplaceEvent(10.0), 20), 1e-5),
        (ComposedEvent([SelfComposedEvent(LaplaceEvent(10.0), 20), SelfComposedEvent(GaussianEvent(8.0), 40)]), 1e-6),
        (SelfComposedEvent(DiscreteLaplaceEvent(3.0, sensitivity=2), 30), 1e-6),
        (SelfComposedEvent(DiscreteGaussianEvent(5.0, sensitivity=1), 50), 1e-6),
        (SelfComposedEvent(LaplaceEvent(2.0), 200), 1e-8),
    ]
    rng = np.random.default_rng(0)
    kept = 0
    while kept < 24:
        q = float(10 ** rng.uniform(-5, 0))
        sigma = float(10 ** rng.uniform(math.log10(0.4), math.log10(50)))
        steps = int(round(10 ** rng.uniform(0, 5)))
        delta = float(10 ** rng.uniform(-10, -3))
        q, sigma, delta = float(f"{q:.4g}"), float(f"{sigma:.4g}"), float(f"{delta:.3g}")
        eps_rdp = poisson_subsampled_gaussian_rdp(q, sigma, steps).epsilon(delta)
        if not 0.05 <= eps_rdp <= 30:
            continue
        out.append((dpsgd(q, sigma, steps), delta))
        kept += 1
    return out


def main():
    import dp_accounting

    rows = []
    for event, delta in cases():
        t0 = time.perf_counter()
        pess = dpa_epsilon(event, delta, True)
        opt = dpa_epsilon(event, delta, False)
        seconds = time.perf_counter() - t0
        rows.append({"event": event.to_dict(), "delta": delta, "pessimistic": pess, "optimistic": opt})
        print(f"{pess:12.6f} {opt:12.6f} {seconds:7.1f}s  delta={delta:.3g}  {event}", flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "generator": "benchmarks/make_pld_reference.py",
        "dp_accounting_version": getattr(dp_accounting, "__version__", "?"),
        "grid": GRID,
        "cases": rows,
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {OUT} ({len(rows)} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
