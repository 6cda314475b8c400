"""Accounting benchmark: skdp against dp-accounting, Opacus and prv-accountant, side by side in one run.

Part 1 (RDP), for a Poisson-subsampled Gaussian training run (q = 256/60000,
σ = 1.1, 14,063 steps, δ = 1e-5):

1. the time to compute ε of the whole run;
2. the time to calibrate σ for a target ε (the ε skdp gives for σ = 1.1);
3. the ε each library reports for the same run.

Part 2 (tight accountants: privacy loss distributions and PRV), at δ = 1e-5,
on the four cases of the issue that asked for skdp's PLD accountant:
DP-SGD q = 256/60000, σ = 1.1, 14,063 steps; DP-SGD q = 0.01, σ = 4,
10,000 steps; 40 Gaussian releases with σ = 8; 20 Laplace releases with
ε = 0.1 each. For each: ε and the time to compute it with skdp's RDP and
PLD accountants, dp-accounting's PLD accountant (its default grid, 1e-4),
Opacus's PRV accountant (eps_error 0.01; subsampled Gaussian only) and
prv-accountant (eps_error 0.01, delta_error 1e-10; its upper bound). Then
the time to calibrate σ of the first case for skdp's PLD ε at σ = 1.1.

Peers that are not installed are reported as "not installed". Every library
runs in the same process with the same number of threads, ``--threads``
(default 1): the ``*_NUM_THREADS`` variables are set before numpy (and torch,
through Opacus) is imported, and the run is inside
``threadpoolctl.threadpool_limits`` (benchmarks/_threads.py); the script
prints the setting and the load average.

Run::

    python benchmarks/bench_accounting.py [--threads 1]
"""

import os
import platform
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _threads  # noqa: E402

THREADS = _threads.set_thread_variables()  # before numpy is imported

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import skdp  # noqa: E402
from skdp.accounting import DEFAULT_ORDERS, calibrate_noise_multiplier, poisson_subsampled_gaussian_rdp  # noqa: E402

Q, SIGMA, STEPS, DELTA = 256 / 60000, 1.1, 14_063, 1e-5


def timeit(fn, *, repeat=7, min_time=0.2):
    """Median seconds per call over `repeat` batches (each batch >= min_time / repeat)."""
    fn()  # warm-up (imports, caches)
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    number = max(1, int(min_time / repeat / one))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


# -- skdp ----------------------------------------------------------------------
def skdp_epsilon():
    return poisson_subsampled_gaussian_rdp(Q, SIGMA, STEPS).epsilon(DELTA)


def skdp_calibrate(target):
    # RDP against the peers' RDP (the library default is the tightest accountant)
    return calibrate_noise_multiplier(target, DELTA, sampling_rate=Q, steps=STEPS, accountant="rdp")


# -- dp-accounting -------------------------------------------------------------------
def dpa_available():
    try:
        import dp_accounting  # noqa: F401
    except ImportError:
        return False
    return True


def dpa_epsilon():
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    acc = rdp.RdpAccountant(orders=list(DEFAULT_ORDERS))
    event = dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(SIGMA)), STEPS
    )
    acc.compose(event)
    return acc.get_epsilon(DELTA)


def dpa_calibrate(target):
    from dp_accounting import dp_event, mechanism_calibration
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    def make_event(sigma):
        return dp_event.SelfComposedDpEvent(
            dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(sigma)), STEPS
        )

    return mechanism_calibration.calibrate_dp_mechanism(
        lambda: rdp.RdpAccountant(orders=list(DEFAULT_ORDERS)),
        make_event,
        target,
        DELTA,
        mechanism_calibration.LowerEndpointAndGuess(0.0, 1.0),
        tol=1e-4,  # absolute tolerance on σ ~ 1e-4 relative here
    )


# -- Opacus ---------------------------------------------------------------------------
def opacus_available():
    try:
        import opacus  # noqa: F401
    except ImportError:
        return False
    return True


def opacus_epsilon():
    from opacus.accountants import RDPAccountant

    acc = RDPAccountant()
    acc.history = [(SIGMA, Q, STEPS)]
    return acc.get_epsilon(DELTA, alphas=list(DEFAULT_ORDERS))


def opacus_calibrate(target):
    from opacus.accountants.utils import get_noise_multiplier

    return get_noise_multiplier(
        target_epsilon=target, target_delta=DELTA, sample_rate=Q, steps=STEPS,
        accountant="rdp", epsilon_tolerance=0.001,
    )


def main():
    print(f"threads = {THREADS} for every library, load average at start "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    with threadpool_limits(limits=THREADS):
        status = _main()
        print(f"\n{_threads.describe()}" + (
            f"; torch {sys.modules['torch'].get_num_threads()} threads"
            if "torch" in sys.modules else ""))
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return status


def _main():
    # Opacus warns that its own calibration grid tops out; that is its business.
    warnings.filterwarnings("ignore", message="Optimal order is the largest alpha")
    rows = []
    target = skdp_epsilon()
    s_eps_t = timeit(skdp_epsilon)
    s_cal = skdp_calibrate(target)
    s_cal_t = timeit(lambda: skdp_calibrate(target), repeat=5)
    rows.append(("skdp", skdp.__version__ if hasattr(skdp, "__version__") else "dev", target, s_eps_t, s_cal, s_cal_t))

    for name, available, eps_fn, cal_fn, mod in (
        ("dp-accounting", dpa_available, dpa_epsilon, dpa_calibrate, "dp_accounting"),
        ("opacus", opacus_available, opacus_epsilon, opacus_calibrate, "opacus"),
    ):
        if not available():
            rows.append((name, None, None, None, None, None))
            continue
        version = getattr(__import__(mod), "__version__", "?")
        eps = float(eps_fn())
        eps_t = timeit(eps_fn, repeat=5, min_time=0.5)
        sigma = float(cal_fn(target))
        cal_t = timeit(lambda: cal_fn(target), repeat=3, min_time=1.0)
        rows.append((name, version, eps, eps_t, sigma, cal_t))

    print(f"Python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    print(f"Case: Poisson q={Q:.6g}, sigma={SIGMA}, steps={STEPS}, delta={DELTA}; "
          f"calibration target eps={target:.6f}; {len(DEFAULT_ORDERS)} orders")
    header = (f"| library | version | epsilon | time for epsilon | ratio vs skdp | "
              f"calibrated sigma | time to calibrate | ratio vs skdp |")
    print(header)
    print("|---|---|---|---|---|---|---|---|")
    base_eps_t, base_cal_t = rows[0][3], rows[0][5]
    for name, version, eps, eps_t, sigma, cal_t in rows:
        if version is None:
            print(f"| {name} | not installed | | | | | | |")
            continue
        print(
            f"| {name} | {version} | {eps:.6f} | {eps_t * 1e3:.3f} ms | {eps_t / base_eps_t:.1f}x | "
            f"{sigma:.6f} | {cal_t * 1e3:.2f} ms | {cal_t / base_cal_t:.1f}x |"
        )
    print()
    tight()
    return 0


# -- part 2: tight accountants --------------------------------------------------------
TIGHT_CASES = [
    # name, kind, parameters, count
    ("DP-SGD q=256/60000, sigma=1.1, 14,063 steps", "poisson", (256 / 60000, 1.1), 14_063),
    ("DP-SGD q=0.01, sigma=4, 10,000 steps", "poisson", (0.01, 4.0), 10_000),
    ("40 Gaussian releases, sigma=8", "gaussian", (8.0,), 40),
    ("20 Laplace releases, epsilon=0.1 each", "laplace", (10.0,), 20),
]


def _slow_timeit(fn):
    """Median seconds per call; a single call when one call takes over a second."""
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    if one > 1.0:
        return one
    return timeit(fn, repeat=5, min_time=0.5)


def _skdp_event(kind, params, count):
    from skdp.accounting import GaussianEvent, LaplaceEvent, PoissonSampledEvent, SelfComposedEvent

    if kind == "poisson":
        return SelfComposedEvent(PoissonSampledEvent(params[0], GaussianEvent(params[1])), count)
    if kind == "gaussian":
        return SelfComposedEvent(GaussianEvent(params[0]), count)
    return SelfComposedEvent(LaplaceEvent(params[0]), count)


def skdp_rdp_eps(kind, params, count):
    from skdp.accounting import RDPAccountant

    return RDPAccountant().compose(_skdp_event(kind, params, count)).epsilon(DELTA)


def skdp_pld_eps(kind, params, count):
    from skdp.accounting import PLDAccountant

    return PLDAccountant().compose(_skdp_event(kind, params, count)).epsilon(DELTA)


def dpa_pld_eps(kind, params, count):
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    if kind == "poisson":
        event = dp_event.PoissonSampledDpEvent(params[0], dp_event.GaussianDpEvent(params[1]))
    elif kind == "gaussian":
        event = dp_event.GaussianDpEvent(params[0])
    else:
        event = dp_event.LaplaceDpEvent(params[0])
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(dp_event.SelfComposedDpEvent(event, count))
    return acc.get_epsilon(DELTA)


def opacus_prv_eps(kind, params, count):
    from opacus.accountants import PRVAccountant

    if kind == "laplace":
        return None  # Opacus accounts for the (subsampled) Gaussian only
    q, sigma = (params[0], params[1]) if kind == "poisson" else (1.0, params[0])
    acc = PRVAccountant()
    acc.history = [(sigma, q, count)]
    return acc.get_epsilon(DELTA, eps_error=0.01)


def prv_eps(kind, params, count):
    import prv_accountant as prv

    if kind == "poisson":
        mech = prv.PoissonSubsampledGaussianMechanism(sampling_probability=params[0], noise_multiplier=params[1])
    elif kind == "gaussian":
        mech = prv.GaussianMechanism(noise_multiplier=params[0])
    else:
        mech = prv.LaplaceMechanism(mu=1.0 / params[0])  # its mu is the largest loss, ε = 1/λ
    acc = prv.PRVAccountant(prvs=[mech], max_self_compositions=[count], eps_error=0.01, delta_error=1e-10)
    return acc.compute_epsilon(delta=DELTA, num_self_compositions=[count])[2]  # the upper bound


def skdp_pld_calibrate(target):
    return calibrate_noise_multiplier(target, DELTA, sampling_rate=Q, steps=STEPS, accountant="pld")


def dpa_pld_calibrate(target):
    from dp_accounting import dp_event, mechanism_calibration
    from dp_accounting.pld import pld_privacy_accountant

    def make_event(sigma):
        return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(sigma)), STEPS)

    return mechanism_calibration.calibrate_dp_mechanism(
        pld_privacy_accountant.PLDAccountant, make_event, target, DELTA,
        mechanism_calibration.LowerEndpointAndGuess(0.0, 1.0), tol=1e-4,
    )


def opacus_prv_calibrate(target):
    from opacus.accountants.utils import get_noise_multiplier

    return get_noise_multiplier(target_epsilon=target, target_delta=DELTA, sample_rate=Q, steps=STEPS,
                                accountant="prv", epsilon_tolerance=0.001)


def _available(module):
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def tight():
    peers = [
        ("skdp RDP", "skdp", skdp_rdp_eps, None),
        ("skdp PLD", "skdp", skdp_pld_eps, skdp_pld_calibrate),
        ("dp-accounting PLD", "dp_accounting", dpa_pld_eps, dpa_pld_calibrate),
        ("Opacus PRV", "opacus", opacus_prv_eps, opacus_prv_calibrate),
        ("prv-accountant", "prv_accountant", prv_eps, None),
    ]
    print(f"Tight accountants, delta = {DELTA}")
    print("| case | accountant | epsilon | time for epsilon |")
    print("|---|---|---|---|")
    for name, kind, params, count in TIGHT_CASES:
        for label, module, eps_fn, _ in peers:
            if not _available(module):
                print(f"| {name} | {label} | not installed | |")
                continue
            eps = eps_fn(kind, params, count)
            if eps is None:
                print(f"| {name} | {label} | not supported | |")
                continue
            t = _slow_timeit(lambda: eps_fn(kind, params, count))
            print(f"| {name} | {label} | {float(eps):.4f} | {t * 1e3:.1f} ms |", flush=True)
    target = skdp_pld_eps(*TIGHT_CASES[0][1:])
    print()
    print(f"Calibration for the first case: target epsilon = {target:.6f} (skdp PLD at sigma = 1.1)")
    print("| accountant | sigma | its own epsilon at that sigma | time to calibrate |")
    print("|---|---|---|---|")
    for label, module, eps_fn, cal_fn in peers:
        if cal_fn is None:
            continue
        if not _available(module):
            print(f"| {label} | not installed | | |")
            continue
        sigma = float(cal_fn(target))
        own = {"skdp PLD": lambda s: skdp_pld_eps("poisson", (Q, s), STEPS),
               "dp-accounting PLD": lambda s: dpa_pld_eps("poisson", (Q, s), STEPS),
               "Opacus PRV": lambda s: opacus_prv_eps("poisson", (Q, s), STEPS)}[label](sigma)
        t = _slow_timeit(lambda: cal_fn(target))
        print(f"| {label} | {sigma:.6f} | {float(own):.6f} | {t * 1e3:.0f} ms |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
