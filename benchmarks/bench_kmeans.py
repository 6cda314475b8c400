"""DPKMeans against scikit-learn's KMeans (and diffprivlib's KMeans) on mixtures and real tables.

Data:

- separated Gaussian mixtures: k spherical clusters of standard deviation 1 in d dimensions,
  means uniform in [-8, 8]^d and redrawn until every two are at least 6 apart, equal
  weights; n training rows and n test rows; public bounds (-12, 12);
- the benchmark suite's tables (benchmarks/_suite_data.py): their training and test parts,
  every column already in [0, 1] by the public schema, so bounds (0, 1).

For each ε and seed, scikit-learn's ``KMeans(k, random_state=seed)`` (its defaults:
k-means++, n_init="auto", i.e. one initialisation, Lloyd to convergence) is fitted on the
training rows, and every contender is scored by its **test inertia** (the sum of squared
distances of the test rows to the nearest centre) as a ratio to scikit-learn's. Contenders:

- ``DPKMeans(bounds)``: ``DPKMeans(k, bounds=<public bounds>, epsilon=ε, random_state=seed)``;
- ``DPKMeans()``: the defaults, bounds estimated privately (half of ε);
- ``DPKMeans@REV`` (with ``--baseline REV``): the DPKMeans of skdp's commit REV, its module
  read from git and run on the same rows, with public bounds;
- diffprivlib 0.6.6's ``KMeans(k, epsilon=ε, bounds=<public bounds>, random_state=seed)``
  in its own venv (benchmarks/_peers.py; finite ε only; left out when the venv is missing
  or with ``--no-dpl``).

Every fit uses δ = 1e-5 (diffprivlib's KMeans is pure ε-DP). It prints, per data set and k,
the mean ± sd (and the largest) ratio over the seeds at each ε, then per ε and contender the
geometric mean over the rows of the table of their mean ratios, then the seconds of a fit,
every contender with one thread. ``--set NAME=VALUE`` changes a
constant of skdp/cluster/_kmeans.py (LEAF_ROWS, TREE_DEPTH, the shares, ...) before the run,
to measure a variant of the defaults. Usage::

    python benchmarks/bench_kmeans.py --baseline 491fefd        # everything, 3 seeds
    python benchmarks/bench_kmeans.py --tables "" --seeds 2 --epsilons 1 inf
    python benchmarks/bench_kmeans.py --epsilons 0.1 0.5 1 --no-dpl --no-private-bounds \
        --set LEAF_ROWS=10
    python benchmarks/bench_kmeans.py --tables "" --mixture 1000000,10,8 --epsilons 1 inf

``--speed`` (issue 30) times instead the same number of Lloyd steps (``--steps``, 5) at
3·10^5 x 50 and 10^6 x 50 (``--speed-shapes``): k = 8 overlapping spherical Gaussians (sd 2,
means uniform in [-4, 4]^50, so that no run converges early), public bounds (-12, 12), the
same k starting centres (rows drawn by a fixed seed) for scikit-learn's
``KMeans(k, init=centres, n_init=1, max_iter=steps, tol=0, algorithm="lloyd")`` and
``DPKMeans(k, init=centres, max_iter=steps, bounds, epsilon=1)``; also
``DPKMeans(k, max_iter=steps, bounds)`` (its private tree seeding, then the steps). Rounds
interleaved (benchmarks/_speed.py), with one thread and with ``--threads`` (BLAS and
OpenMP), and the peak memory of one fit; ``--baseline REV`` adds the DPKMeans of commit REV
with the same centres::

    python benchmarks/bench_kmeans.py --speed --threads 2 --baseline 8a652f7
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
import types
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _threads  # noqa: E402

_threads.set_thread_variables()  # before numpy is imported

import numpy as np  # noqa: E402
from sklearn.cluster import KMeans  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from _peers import peer_python, run_peer  # noqa: E402
from _scores import inertia  # noqa: E402
from _speed import speed_table  # noqa: E402
from _suite_data import LOADERS  # noqa: E402

import skdp.cluster._kmeans as kmeans_module  # noqa: E402
from skdp.cluster import DPKMeans  # noqa: E402

EPSILONS = [0.1, 0.5, 1.0, 5.0, math.inf]
DELTA = 1e-5
MIXTURES = [(2_000, 2, 3), (20_000, 2, 3), (10_000, 5, 5), (5_000, 10, 5), (30_000, 10, 5),
            (30_000, 10, 8), (100_000, 10, 8)]
MIXTURE_BOUNDS = (-12.0, 12.0)

DPL_SCRIPT = r"""
import json, sys, time, warnings
import numpy as np
from diffprivlib.models import KMeans
warnings.simplefilter("ignore")
d = np.load(sys.argv[1])
job = json.loads(sys.argv[2])
out, seconds = [], []
for eps in job["epsilons"]:
    for seed in job["seeds"]:
        start = time.perf_counter()
        est = KMeans(n_clusters=job["k"], epsilon=eps, bounds=tuple(job["bounds"]),
                     random_state=seed).fit(d["X"])
        seconds.append(time.perf_counter() - start)
        out.append(np.asarray(est.cluster_centers_).tolist())
print(json.dumps(dict(centers=out, seconds=seconds)))
"""


def mixture(n, d, k, seed):
    """n training and n test rows of k separated spherical Gaussians (sd 1) in d dimensions."""
    rng = np.random.default_rng([n, d, k, seed])
    while True:
        means = rng.uniform(-8.0, 8.0, size=(k, d))
        gaps = np.sqrt(((means[:, None] - means[None]) ** 2).sum(-1))
        if gaps[np.triu_indices(k, 1)].min() >= 6.0:
            break
    labels = rng.integers(0, k, size=2 * n)
    X = means[labels] + rng.standard_normal((2 * n, d))
    return X[:n], X[n:]


def baseline_class(rev):
    """DPKMeans as it was at commit ``rev`` (its module from git, imports made absolute)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    source = subprocess.run(["git", "show", f"{rev}:skdp/cluster/_kmeans.py"], cwd=root,
                            check=True, capture_output=True, text=True).stdout
    module = types.ModuleType(f"_kmeans_at_{rev}")
    exec(compile(re.sub(r"from \.\.", "from skdp.", source), module.__name__, "exec"),
         module.__dict__)
    return module.DPKMeans


def data_sets(args):
    for n, d, k in (args.mixture or MIXTURES) if args.mixtures else []:
        yield f"mixture n={n} d={d}", [k], MIXTURE_BOUNDS, lambda s, n=n, d=d, k=k: mixture(n, d, k, s)
    for name in args.tables:
        task = LOADERS[name]()
        split = (task.X_train, task.X_test)
        yield name, args.table_k, (0.0, 1.0), lambda s, split=split: split


def fmt(values):
    if not values:
        return "n/a"
    v = np.asarray(values)
    return f"{v.mean():.3f} ± {v.std():.3f} (max {v.max():.2f})"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilons", nargs="+", type=float, default=EPSILONS)
    parser.add_argument("--tables", type=lambda s: [t for t in s.split(",") if t],
                        default=list(LOADERS), help="comma-separated suite tables ('' for none)")
    parser.add_argument("--table-k", nargs="+", type=int, default=[3, 8])
    parser.add_argument("--no-mixtures", dest="mixtures", action="store_false")
    parser.add_argument("--mixture", action="append", metavar="N,D,K",
                        type=lambda t: tuple(int(v) for v in t.split(",")),
                        help="run this mixture (repeatable) instead of the default ones")
    parser.add_argument("--baseline", metavar="REV", help="also run DPKMeans of commit REV")
    parser.add_argument("--no-dpl", action="store_true", help="leave diffprivlib out")
    parser.add_argument("--no-private-bounds", action="store_true",
                        help="leave DPKMeans() (private bounds) out")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="set a constant of skdp.cluster._kmeans first")
    parser.add_argument("--speed", action="store_true",
                        help="time the same Lloyd steps as scikit-learn's KMeans instead")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--speed-shapes", default="300000x50,1000000x50")
    parser.add_argument("--threads", type=int, default=1,
                        help="with --speed: also time with this many threads")
    args = parser.parse_args(argv)
    if args.speed:
        return speed(args)
    for item in args.set:
        name, value = item.split("=")
        old = getattr(kmeans_module, name)  # an AttributeError names a wrong constant
        setattr(kmeans_module, name, type(old)(value))
        print(f"skdp.cluster._kmeans.{name} = {value} (default {old})")
    warnings.simplefilter("ignore")
    seeds = list(range(args.seeds))
    dpl = not args.no_dpl and os.path.exists(peer_python("diffprivlib"))
    contenders = {"DPKMeans(bounds)": lambda k, b, e, s: DPKMeans(k, bounds=b, epsilon=e,
                                                                 random_state=s),
                  "DPKMeans()": lambda k, b, e, s: DPKMeans(k, epsilon=e, random_state=s)}
    if args.no_private_bounds:
        del contenders["DPKMeans()"]
    if args.baseline:
        Old = baseline_class(args.baseline)
        contenders[f"DPKMeans@{args.baseline}"] = lambda k, b, e, s: Old(
            k, bounds=b, epsilon=e, random_state=s)
    names = list(contenders) + (["diffprivlib"] if dpl else [])
    print(f"test inertia / scikit-learn KMeans(k, random_state=seed)'s; seeds {seeds}, "
          f"delta={DELTA}; diffprivlib {'in' if dpl else 'left out'}")
    print("| data | rows x cols | k | ε | " + " | ".join(names) + " |")
    print("|---|---|---|---|" + "---|" * len(names))
    start = time.perf_counter()
    means = {(name, e): [] for name in names for e in args.epsilons}
    seconds = []
    with threadpool_limits(1):
        for label, ks, bounds, load in data_sets(args):
            splits = {s: load(s) for s in seeds}
            for k in ks:
                refs, times = {}, {name: [] for name in ["scikit-learn", *names]}
                for s in seeds:
                    t = time.perf_counter()
                    ref = KMeans(k, random_state=s).fit(splits[s][0])
                    times["scikit-learn"].append(time.perf_counter() - t)
                    refs[s] = inertia(splits[s][1], ref.cluster_centers_)
                cells = {(name, e): [] for name in names for e in args.epsilons}
                for e in args.epsilons:
                    for s in seeds:
                        Xtr, Xte = splits[s]
                        for name, make in contenders.items():
                            t = time.perf_counter()
                            est = make(k, bounds, e, s).set_params(delta=DELTA).fit(Xtr)
                            if e < math.inf:
                                times[name].append(time.perf_counter() - t)
                            cells[name, e].append(inertia(Xte, est.cluster_centers_) / refs[s])
                finite = [e for e in args.epsilons if e < math.inf]
                if dpl and finite:
                    for s in seeds:  # one subprocess per split: every ε at once
                        Xtr, Xte = splits[s]
                        job = dict(k=k, bounds=list(bounds), epsilons=finite, seeds=[s])
                        out = run_peer(DPL_SCRIPT, {"X": Xtr}, json.dumps(job))
                        for e, centers in zip(finite, out["centers"]):
                            cells["diffprivlib", e].append(inertia(Xte, centers) / refs[s])
                        times["diffprivlib"].extend(out["seconds"])
                Xtr = splits[seeds[0]][0]
                for key, values in cells.items():
                    if values:
                        means[key].append(np.mean(values))
                seconds.append((label, Xtr.shape, k, times))
                for e in args.epsilons:
                    print(f"| {label} | {Xtr.shape[0]} x {Xtr.shape[1]} | {k} | {e:g} | "
                          + " | ".join(fmt(cells[name, e]) for name in names) + " |", flush=True)
    print("\ngeometric mean over the rows above of the mean ratio:")
    for e in args.epsilons:
        print(f"  ε={e:g}: " + ", ".join(f"{name} {np.exp(np.mean(np.log(means[name, e]))):.3f}"
                                         for name in names if means[name, e]))
    print("\nseconds per fit, one thread: scikit-learn's KMeans(k) the mean over the seeds, the "
          "private ones over the seeds and the finite ε")
    print("| data | rows x cols | k | scikit-learn | " + " | ".join(names) + " |")
    print("|---|---|---|---|" + "---|" * len(names))
    for label, shape, k, times in seconds:
        print(f"| {label} | {shape[0]} x {shape[1]} | {k} | " + " | ".join(
            f"{np.mean(times[name]):.3f}" if times[name] else "n/a"
            for name in ["scikit-learn", *names]) + " |")
    print(f"\n{time.perf_counter() - start:.0f} s")


def speed(args, k=8):
    """Seconds of the same Lloyd steps against scikit-learn's KMeans, side by side."""
    steps = args.steps
    bounds = (-12.0, 12.0)

    def make(n, d):
        rng = np.random.default_rng(0)
        X = rng.standard_normal((n, d))
        X *= 2.0
        X += rng.uniform(-4, 4, size=(k, d))[rng.integers(0, k, n)]
        init = X[rng.choice(n, k, replace=False)].copy()
        km = KMeans(k, init=init, n_init=1, max_iter=steps, tol=0.0, algorithm="lloyd")
        contenders = {
            "scikit-learn": lambda: km.fit(X),
            "DPKMeans(init=centres)": lambda: DPKMeans(
                k, init=init, max_iter=steps, bounds=bounds, random_state=0).fit(X),
            "DPKMeans(private init)": lambda: DPKMeans(
                k, max_iter=steps, bounds=bounds, random_state=0).fit(X),
        }
        if args.baseline:
            Old = baseline_class(args.baseline)
            contenders[f"DPKMeans@{args.baseline}(init=centres)"] = lambda: Old(
                k, init=init, max_iter=steps, bounds=bounds, random_state=0).fit(X)
        assert km.fit(X).n_iter_ == steps, "scikit-learn converged before the last step"
        return X, contenders

    shapes = [tuple(int(v) for v in s.split("x")) for s in args.speed_shapes.split(",")]
    print(f"{steps} Lloyd steps, k={k}, bounds {bounds}, epsilon=1; {_threads.describe()}")
    speed_table(shapes, make, "scikit-learn", args.rounds, sorted({1, args.threads}))
    return 0


if __name__ == "__main__":
    main()
