"""Several DP quantiles at once: skdp's joint method vs its split method (and diffprivlib).

Run:  python benchmarks/bench_quantiles.py [--threads 1]
      [--timing | --speed | --accuracy | --levels]
(diffprivlib runs in its peer venv, benchmarks/_peers.py, as a subprocess in the same run.)
``--timing`` instead times one joint draw of m = 2, 9 and 99 levels on fnlwgt of Adult's
train and test rows together (48,842 values), best of 3, with ``--threads`` (default 1)
BLAS/OpenMP threads (benchmarks/_threads.py).

``--speed`` times ``stats.median``, ``quantile``, ``percentile``, ``nanmedian`` and
``nanquantile`` (split method, ``budget=None``) against ``np.median`` of the same array at
10^6 and 10^7 values, in interleaved rounds (np.median, then each skdp function, once each per
round): the medians over the rounds and the ratio of the medians, with the range of the
per-round ratios; on an odd number of values too (``np.median`` partitions at the middle one
or two positions and at the last, to find NaN: several kth, which numpy 2 does several times
slower than one). ``--accuracy`` prints, over seeds, the median absolute error of the released
median against ``np.median`` of the clipped data, and the median rank error
|#{x < o} − N/2| / N, on uniform, normal, log-normal, Pareto(1.1), Cauchy (wide bounds) and
integer data, at several N and ε. ``--levels`` times ``stats.quantile`` (split) with m = 1 to
99 evenly spaced levels, ε = 1 per level, on normal data of 10^4 to 10^6 values (median ms of 5
calls). To measure an earlier version, run the same command with
that version's ``skdp`` first on ``PYTHONPATH`` (``git archive <commit> skdp | tar -x -C DIR``;
the script prints which ``skdp`` it imported).

On the 6 numeric Adult columns (train, 32,561 rows), public bounds as in
bench_stats.py, ε = 1 for all the levels of one column together, pure ε-DP,
m = 5 and m = 9 evenly spaced levels j/(m+1), 50 repetitions: the median over
repetitions of the mean over levels of |DP quantile − np.quantile| (value
error), and of |#{x < o} − q·n| / n (rank error), for
``stats.quantile(method="joint")`` (Gillenwater et al. 2021),
``method="split"`` (ε/m per level) and ``diffprivlib.tools.quantile``
(also ε/m per level).
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
EPS, REPS, MS = 1.0, 50, (5, 9)

DPL_SCRIPT = r"""
import json, sys, numpy as np
from diffprivlib import tools
data = np.load(sys.argv[1])["data"]; cfg = json.loads(sys.argv[2]); out = {}
rng = np.random.default_rng(0)
for j, (name, (lo, hi)) in enumerate(cfg["bounds"].items()):
    x = np.sort(np.clip(data[:, j], lo, hi))
    for m in cfg["ms"]:
        q = np.arange(1, m + 1) / (m + 1); truth = np.quantile(x, q); v, r = [], []
        try:
            for _ in range(cfg["reps"]):
                o = np.asarray(tools.quantile(x, q, epsilon=cfg["eps"], bounds=(lo, hi),
                                              random_state=int(rng.integers(2**31))))
                v.append(np.mean(np.abs(o - truth)))
                r.append(np.mean(np.abs(np.searchsorted(x, o) - q * x.size)) / x.size)
            out[f"{name}|{m}"] = [float(np.median(v)), float(np.median(r))]
        except Exception:
            out[f"{name}|{m}"] = [float("nan"), float("nan")]
print(json.dumps(out))
"""


def skdp_errors(data, method):
    out = {}
    rng = np.random.default_rng(0)
    for j, (name, (lo, hi)) in enumerate(BOUNDS.items()):
        x = np.sort(np.clip(data[:, j], lo, hi))
        for m in MS:
            q = np.arange(1, m + 1) / (m + 1)
            truth = np.quantile(x, q)
            v, r = [], []
            for _ in range(REPS):
                o = stats.quantile(x, q, epsilon=EPS, bounds=(lo, hi), random_state=rng,
                                   method=method)
                v.append(np.mean(np.abs(o - truth)))
                r.append(np.mean(np.abs(np.searchsorted(x, o) - q * x.size)) / x.size)
            out[f"{name}|{m}"] = [float(np.median(v)), float(np.median(r))]
    return out


def dpl_errors(data):
    cfg = json.dumps({"bounds": BOUNDS, "eps": EPS, "reps": REPS, "ms": MS})
    return run_peer(DPL_SCRIPT, {"data": data}, cfg)


def joint_timing():
    """Seconds of one joint draw of m levels on fnlwgt of Adult's train and test rows."""
    lo, hi = BOUNDS["fnlwgt"]
    parts = [load_adult(subset=subset) for subset in ("train", "test")]
    x = np.concatenate([b.data[:, list(b.feature_names).index("fnlwgt")].astype(float)
                        for b in parts])
    print(f"threads = {THREADS}, load average at start {os.getloadavg()[0]:.2f}")
    with threadpool_limits(limits=THREADS):
        for m in (2, 9, 99):
            q = np.arange(1, m + 1) / (m + 1)
            times = []
            for seed in range(3):
                start = time.perf_counter()
                stats.quantile(x, q, epsilon=EPS, bounds=(lo, hi), random_state=seed,
                               method="joint")
                times.append(time.perf_counter() - start)
            print(f"joint, n = {x.size}, m = {m}: best of 3 {min(times):.3f} s, "
                  f"worst {max(times):.3f} s", flush=True)
        print(f"{_threads.describe()}; load average at end {os.getloadavg()[0]:.2f}")


SPEED_SIZES = {10**6: 9, 10**7: 5}  # N: rounds


def speed():
    """Median ms of each private quantile and of np.median, interleaved, at 10^6 and 10^7."""
    import skdp

    print(f"skdp from {os.path.dirname(skdp.__file__)}; threads = {THREADS}, "
          f"load average at start {os.getloadavg()[0]:.2f}")
    kw = dict(epsilon=1.0, bounds=(0, 100))
    contenders = {
        "median": lambda x, r: stats.median(x, random_state=r, **kw),
        "quantile 0.3": lambda x, r: stats.quantile(x, 0.3, random_state=r, **kw),
        "percentile 30": lambda x, r: stats.percentile(x, 30, random_state=r, **kw),
        "quantile [0.25, 0.75]": lambda x, r: stats.quantile(x, [0.25, 0.75], random_state=r,
                                                             **kw),
        "nanmedian": lambda x, r: stats.nanmedian(x, random_state=r, **kw),
        "nanquantile 0.3": lambda x, r: stats.nanquantile(x, 0.3, random_state=r, **kw),
    }
    with threadpool_limits(limits=THREADS):
        for n, rounds in SPEED_SIZES.items():
            # np.median partitions at the middle one or two kth and at -1 (NaN check), odd N or even
            data = {"normal(40, 10)": np.random.default_rng(0).normal(40, 10, n),
                    "integers 0..99": np.random.default_rng(1).integers(0, 100, n).astype(float),
                    "normal(40, 10), N + 1 (odd)": np.random.default_rng(0).normal(40, 10, n + 1)}
            for name, x in data.items():
                times = {"np.median": []} | {k: [] for k in contenders}
                for r in range(rounds):
                    start = time.perf_counter()
                    np.median(x)
                    times["np.median"].append(time.perf_counter() - start)
                    for key, f in contenders.items():
                        start = time.perf_counter()
                        f(x, r)
                        times[key].append(time.perf_counter() - start)
                base = np.array(times["np.median"])
                print(f"\nN = {n:.0e}, {name}, {rounds} rounds: np.median "
                      f"{np.median(base) * 1e3:.2f} ms")
                print("| function | ms (median) | / np.median (ratio of medians) "
                      "| per-round range |")
                print("|---|---|---|---|")
                for key in contenders:
                    t = np.array(times[key])
                    ratios = t / base
                    ratio = np.median(t) / np.median(base)
                    print(f"| {key} | {np.median(t) * 1e3:.2f} | {ratio:.2f} "
                          f"| {ratios.min():.2f}–{ratios.max():.2f} |", flush=True)
        print(f"{_threads.describe()}; load average at end {os.getloadavg()[0]:.2f}")


def levels_timing():
    """Median ms of stats.quantile with m evenly spaced levels, ε = 1 each, N = 10^4 to 10^6."""
    import skdp

    print(f"skdp from {os.path.dirname(skdp.__file__)}; threads = {THREADS}, "
          f"load average at start {os.getloadavg()[0]:.2f}")
    ms = (1, 2, 4, 8, 16, 32, 99)
    print("| N | " + " | ".join(f"m = {m}" for m in ms) + " |")
    print("|---|" + "---|" * len(ms))
    with threadpool_limits(limits=THREADS):
        for n in (10**4, 10**5, 10**6):
            x = np.random.default_rng(0).normal(40, 10, n)
            cells = []
            for m in ms:
                q = np.arange(1, m + 1) / (m + 1)
                times = []
                for r in range(5):
                    start = time.perf_counter()
                    stats.quantile(x, q, epsilon=float(m), bounds=(0, 100), random_state=r)
                    times.append(time.perf_counter() - start)
                cells.append(f"{np.median(times) * 1e3:.2f}")
            print(f"| {n:.0e} | " + " | ".join(cells) + " |", flush=True)
    print(f"load average at end {os.getloadavg()[0]:.2f}")


def _families(n, rng):
    """(data, public bounds) of each family of the accuracy table."""
    return {
        "uniform": (rng.uniform(0, 1, n), (0, 1)),
        "normal": (rng.normal(40, 10, n), (0, 100)),
        "lognormal(10, 1.5)": (rng.lognormal(10, 1.5, n), (0, 1e7)),
        "pareto(1.1)": (rng.pareto(1.1, n), (0, 1e6)),
        "cauchy": (rng.standard_cauchy(n), (-1e6, 1e6)),
        "integers 17..89": (rng.integers(17, 90, n).astype(float), (17, 90)),
    }


def accuracy():
    """Median |DP median − np.median| and rank error over seeds, per family, N and ε."""
    import skdp

    print(f"skdp from {os.path.dirname(skdp.__file__)}")
    print("| data | N | ε | seeds | median abs error | median rank error | mean abs error |")
    print("|---|---|---|---|---|---|---|")
    for n, seeds in ((1_000, 200), (100_000, 100), (1_000_000, 30)):
        for name, (x, (lo, hi)) in _families(n, np.random.default_rng(n)).items():
            xc = np.sort(np.clip(x, lo, hi))
            truth = np.median(xc)
            for eps in (0.1, 1.0):
                out = np.array([stats.median(x, epsilon=eps, bounds=(lo, hi), random_state=s)
                                for s in range(seeds)])
                err = np.abs(out - truth)
                rank = np.abs(np.searchsorted(xc, out) - n / 2) / n
                print(f"| {name} | {n:.0e} | {eps} | {seeds} | {np.median(err):.4g} "
                      f"| {np.median(rank):.2e} | {np.mean(err):.4g} |", flush=True)


def main():
    if "--timing" in sys.argv[1:]:
        joint_timing()
        return
    if "--speed" in sys.argv[1:]:
        speed()
        return
    if "--accuracy" in sys.argv[1:]:
        accuracy()
        return
    if "--levels" in sys.argv[1:]:
        levels_timing()
        return
    bunch = load_adult()
    names = list(bunch.feature_names)
    data = np.column_stack([bunch.data[:, names.index(c)].astype(float) for c in BOUNDS])
    joint, split, dpl = skdp_errors(data, "joint"), skdp_errors(data, "split"), dpl_errors(data)
    print(f"Adult train, n = {len(data)}, ε = {EPS} per column, {REPS} repetitions")
    print("| column | m | joint value err | split value err | diffprivlib value err "
          "| joint rank err | split rank err | diffprivlib rank err | joint/split (value) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in MS:
        for name in BOUNDS:
            key = f"{name}|{m}"
            (jv, jr), (sv, sr) = joint[key], split[key]
            dv, dr = dpl[key] if dpl else (float("nan"), float("nan"))
            ratio = jv / sv if sv else float("nan")
            print(f"| {name} | {m} | {jv:.4g} | {sv:.4g} | {dv:.4g} | {jr:.2e} | {sr:.2e} "
                  f"| {dr:.2e} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
