"""Accuracy and speed of skdp.stats, side by side with diffprivlib's tools.

Run:  python benchmarks/bench_stats.py [--threads 1] [--speed]
(diffprivlib runs in its peer venv, benchmarks/_peers.py, as a subprocess;
``--speed`` runs the speed part alone.)

Accuracy: on the 6 numeric Adult columns (train, 32,561 rows), at ε = 1 per
statistic, pure ε-DP for both libraries, public bounds below, 200 repetitions:
median absolute error of mean, var and median (quantile 0.5), and the median
L1 error of a 10-bin histogram over the bounds. Speed: each function on 10⁶
rows vs the non-private numpy call (budget=None, best of 20), with
``--threads`` (default 1) BLAS/OpenMP threads for both: the ``*_NUM_THREADS``
variables are set before numpy is imported and the timing runs inside
``threadpoolctl.threadpool_limits`` (benchmarks/_threads.py).
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # for _peers, however run
import _threads  # noqa: E402

THREADS = _threads.set_thread_variables()  # before numpy is imported

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from skdp import stats  # noqa: E402
from skdp.datasets import load_adult  # noqa: E402
from _peers import run_peer  # noqa: E402

BOUNDS = {"age": (17, 90), "fnlwgt": (0, 1_500_000), "education-num": (1, 16),
          "capital-gain": (0, 100_000), "capital-loss": (0, 4_500), "hours-per-week": (1, 99)}
EPS, REPS, BINS = 1.0, 200, 10

DPL_SCRIPT = r"""
import json, sys, numpy as np
from diffprivlib import tools
data = np.load(sys.argv[1])["data"]; cfg = json.loads(sys.argv[2]); out = {}
for j, (name, (lo, hi)) in enumerate(cfg["bounds"].items()):
    x = np.clip(data[:, j], lo, hi); e = cfg["eps"]; r = {}
    rng = np.random.default_rng(0)
    def err(f, truth):
        try:
            return float(np.median([abs(f(int(rng.integers(2**31))) - truth) for _ in range(cfg["reps"])]))
        except Exception:
            return float("nan")  # diffprivlib raised (e.g. NaN probabilities in its quantile)
    r["mean"] = err(lambda s: tools.mean(x, epsilon=e, bounds=(lo, hi), random_state=s), x.mean())
    r["var"] = err(lambda s: tools.var(x, epsilon=e, bounds=(lo, hi), random_state=s), x.var())
    r["median"] = err(lambda s: tools.quantile(x, 0.5, epsilon=e, bounds=(lo, hi), random_state=s), np.median(x))
    truth = np.histogram(x, bins=cfg["bins"], range=(lo, hi))[0]
    r["hist_l1"] = float(np.median([np.abs(tools.histogram(x, epsilon=e, bins=cfg["bins"], range=(lo, hi), random_state=int(rng.integers(2**31)))[0] - truth).sum() for _ in range(cfg["reps"])]))
    out[name] = r
print(json.dumps(out))
"""


def skdp_errors(data):
    out = {}
    rng = np.random.default_rng(0)
    for j, (name, (lo, hi)) in enumerate(BOUNDS.items()):
        x = np.clip(data[:, j], lo, hi)
        kw = dict(epsilon=EPS, bounds=(lo, hi))
        def err(f, truth):
            return float(np.median([abs(f(rng) - truth) for _ in range(REPS)]))
        truth_h = np.histogram(x, bins=BINS, range=(lo, hi))[0]
        out[name] = {
            "mean": err(lambda r: stats.mean(x, random_state=r, **kw), x.mean()),
            "var": err(lambda r: stats.var(x, random_state=r, **kw), x.var()),
            "median": err(lambda r: stats.median(x, random_state=r, **kw), np.median(x)),
            "hist_l1": float(np.median([np.abs(stats.histogram(x, bins=BINS, range=(lo, hi), epsilon=EPS,
                                                               random_state=rng)[0] - truth_h).sum()
                                        for _ in range(REPS)])),
        }
    return out


def dpl_errors(data):
    cfg = json.dumps({"bounds": BOUNDS, "eps": EPS, "reps": REPS, "bins": BINS})
    return run_peer(DPL_SCRIPT, {"data": data}, cfg)


def best_time(f, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def speed():
    x = np.random.default_rng(0).normal(40, 10, size=1_000_000)
    x_in = np.clip(x, 0, 100)
    kw = dict(epsilon=1.0, bounds=(0, 100), random_state=0)
    pairs = {
        "count": (lambda: stats.count(x > 40, epsilon=1.0, random_state=0), lambda: np.count_nonzero(x > 40)),
        "sum": (lambda: stats.sum(x, **kw), lambda: np.sum(x)),
        "mean": (lambda: stats.mean(x, **kw), lambda: np.mean(x)),
        "var": (lambda: stats.var(x, **kw), lambda: np.var(x)),
        "std": (lambda: stats.std(x, **kw), lambda: np.std(x)),
        "quantile": (lambda: stats.quantile(x, 0.3, **kw), lambda: np.quantile(x, 0.3)),
        "median": (lambda: stats.median(x, **kw), lambda: np.median(x)),
        "histogram": (lambda: stats.histogram(x, bins=50, range=(0, 100), epsilon=1.0, random_state=0),
                      lambda: np.histogram(x, bins=50, range=(0, 100))),
        "histogram2d": (lambda: stats.histogram2d(x, x[::-1], bins=20, range=[(0, 100)] * 2, epsilon=1.0,
                                                  random_state=0),
                        lambda: np.histogram2d(x, x[::-1], bins=20, range=[(0, 100)] * 2)),
        # secure=True refuses a seed: the OS CSPRNG
        "mean (secure)": (lambda: stats.mean(x, secure=True, **{**kw, "random_state": None}),
                          lambda: np.mean(x)),
        # x has 27 of its 10^6 values below 0 (clipped); x_in lies inside the bounds
        "sum, inside": (lambda: stats.sum(x_in, **kw), lambda: np.sum(x_in)),
        "mean, inside": (lambda: stats.mean(x_in, **kw), lambda: np.mean(x_in)),
        # against the non-private computation of the same (clipped) statistic
        "sum/np.clip": (lambda: stats.sum(x, **kw), lambda: np.sum(np.clip(x, 0, 100))),
        "mean/np.clip": (lambda: stats.mean(x, **kw), lambda: np.mean(np.clip(x, 0, 100))),
    }
    print(f"\nSpeed on 1e6 rows (best of 20): skdp vs numpy, threads = {THREADS} for both, "
          f"load average at start {os.getloadavg()[0]:.2f}")
    print(f"{'function':<15}{'skdp ms':>10}{'numpy ms':>10}{'ratio':>8}")
    with threadpool_limits(limits=THREADS):
        for name, (f_dp, f_np) in pairs.items():
            t_dp, t_np = best_time(f_dp, 20), best_time(f_np, 20)
            print(f"{name:<15}{t_dp * 1e3:>10.2f}{t_np * 1e3:>10.2f}{t_dp / t_np:>8.2f}")
        print(f"{_threads.describe()}; load average at end {os.getloadavg()[0]:.2f}")


def main():
    if "--speed" in sys.argv[1:]:
        speed()
        return 0
    bunch = load_adult()
    names = list(bunch.feature_names)
    data = np.column_stack([bunch.data[:, names.index(c)].astype(float) for c in BOUNDS])
    ours, theirs = skdp_errors(data), dpl_errors(data)
    print(f"Adult train, n = {len(data)}, ε = {EPS} per statistic, {REPS} repetitions")
    print(f"{'column':<16}{'stat':<9}{'skdp':>12}{'diffprivlib':>13}{'ratio':>8}")
    for name in BOUNDS:
        for stat in ("mean", "var", "median", "hist_l1"):
            a = ours[name][stat]
            b = theirs[name][stat] if theirs else float("nan")
            print(f"{name:<16}{stat:<9}{a:>12.4g}{b:>13.4g}{a / b if b else float('nan'):>8.2f}")
    speed()


if __name__ == "__main__":
    sys.exit(main())
