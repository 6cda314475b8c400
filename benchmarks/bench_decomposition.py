"""DPPCA and DPKMeans against scikit-learn and diffprivlib.

Part 1 (PCA): on the suite's tables (benchmarks/_suite_data.py; features in [0, 1], public
bounds (0, 1) and the public row norm), the variance of the training rows captured by the
top ``--components`` components, sum of vᵀ Σ v, as a ratio to scikit-learn's PCA. DPPCA runs
with the box's default centre and norm, and with ``data_norm`` = the table's public row norm,
each at δ = 1e-5 (Analyze Gauss) and δ = 0 (Laplace); diffprivlib's PCA with the same bounds
and ``data_norm`` (in its own venv, as a subprocess; ``--dpl-pca-tables``). Its Bingham
sampler (diffprivlib 0.6.6) divides by the envelope's factor where Kent, Ganeiber & Mardia
(2013) multiply, so on the tables of 10,000+ rows it accepts a draw with probability 1e-17 or
less and never finishes; ``--dpl-corrected-sampler`` runs it with the published ratio, and
``--dpl-time-limit`` stops each fit (reported as out of time).

Part 2 (KMeans): a well-separated mixture of ``--n-points`` points (``--clusters``
spherical Gaussians of sd 1 in ``--dim`` dimensions, means drawn uniformly in [-8, 8]^d by a
fixed seed, bounds (-12, 12)) and the suite's tables (bounds (0, 1)): the inertia of the
training rows about each method's centres, as a ratio to scikit-learn's KMeans (n_init=10).

Part 3 (``--wide``, PCA with every default): DPPCA() with no bounds and no ``data_norm``
(private bounds) on scikit-learn's digits as shipped (``digits_raw``: 1,797 x 64 pixels in
0..16, split 75/25 by ``random_state=0``) and on the tables of ``--wide-tables``; the variance
of the held-out rows captured by the top k components (k in ``--wide-components``), as a
ratio to that of scikit-learn's PCA fitted on the same training rows, at each ε of
``--wide-epsilons`` (δ = 1e-5), mean ± sd over ``--seeds`` seeds. Run::

    python benchmarks/bench_decomposition.py --pca-tables "" --skip-kmeans --wide

Every private fit is at ``--epsilon`` (default 1) and δ = 1e-5 (diffprivlib's PCA and KMeans
are pure ε-DP), over ``--seeds`` seeds. The k-means table gives the mean fit time of DPKMeans,
of scikit-learn's KMeans (one fit of n_init=10) and of diffprivlib's KMeans, all with the same
number of threads, ``--threads`` (default 1): the script sets ``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS`` and ``MKL_NUM_THREADS`` before it imports numpy (diffprivlib's
subprocess inherits them) and fits inside ``threadpoolctl.threadpool_limits(threads)``
(benchmarks/_threads.py); it prints the setting it used. Run::

    python benchmarks/bench_decomposition.py
    python benchmarks/bench_decomposition.py --pca-tables "" --kmeans-tables adult,diamonds

``--speed`` (issue 30) times instead scikit-learn's ``PCA()`` (its default solver) against
``DPPCA(bounds=(-12, 12))``, ``DPPCA(bounds=(-12, 12), data_norm=15)`` and
``DPPCA(data_norm=15)`` (private bounds), ε = 1, at 3·10^5 x 50 and 10^6 x 50
(``--speed-shapes``; Gaussian rows with standard deviations from 0.5 to 3 over the columns),
rounds interleaved (benchmarks/_speed.py), with one thread and with ``--threads``, and the
peak memory of one fit; ``--baseline REV`` adds ``DPPCA(bounds)`` of commit REV (its
``skdp/decomposition/_pca.py`` and ``skdp/stats/_range.py`` on today's skdp),
``--baseline-all`` REV's three settings::

    python benchmarks/bench_decomposition.py --speed --threads 2 --baseline 8a652f7

``--steps`` times instead, with one thread, each step of ``DPPCA(bounds=(-12, 12))``'s pass
over the rows (skdp.decomposition._pca's own block functions, in its order: the guess of C,
then per block the clip, the norms, the scaling to the guess, the Gram matrix and the
sums, then the norms' histogram) and of scikit-learn's ``PCA()`` (the finite check, the
mean, X.T @ X), rounds interleaved::

    python benchmarks/bench_decomposition.py --steps --speed-shapes 1000000x50 --rounds 3

``--long-rows`` times, with one thread, the two ways DPPCA(bounds) can turn the moments of
the unscaled rows (a pass with no guess of C) into those of the rows scaled down to C: read
again only the rows longer than C and correct (``scale_down_long_rows``), or a second pass
over all rows (``moments``), at shares of long rows from 0.1 to 1 (C the norms' quantile),
rounds interleaved; its crossing sets ``LONG_ROWS_SHARE``::

    python benchmarks/bench_decomposition.py --long-rows --speed-shapes 1000000x50 --rounds 3
"""

import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _threads  # noqa: E402

_threads.set_thread_variables()  # before numpy is imported

import numpy as np  # noqa: E402
from sklearn.cluster import KMeans  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from _peers import run_peer  # noqa: E402
from _scores import captured, inertia  # noqa: E402
from _speed import speed_table  # noqa: E402
from _suite_data import LOADERS  # noqa: E402

from skdp.cluster import DPKMeans  # noqa: E402
from skdp.decomposition import DPPCA  # noqa: E402

DPL_SCRIPT = r"""
import json, signal, sys, time, warnings
import numpy as np
from diffprivlib.mechanisms import Bingham
from diffprivlib.models import PCA, KMeans
warnings.simplefilter("ignore")
d = np.load(sys.argv[1])
job = json.loads(sys.argv[2])


def corrected_randomise(self, value):
    # Bingham.randomise with Kent, Ganeiber & Mardia's (2013) acceptance ratio: same density
    # exp(-x'Ax), A = eps (lambda_max I - value) / (4 sensitivity), same ACG envelope
    # Omega = I + 2A/b, sum 1/(b + 2 a_i) = 1, bound M = exp(-(q - b)/2) (q/b)^(q/2); accept
    # with probability exp(-x'Ax) (x'Omega x)^(q/2) / M (0.6.6 divides by (x'Omega x)^(q/2)).
    lam, vec = np.linalg.eigh(value)
    q = len(lam)
    if q == 1:
        return np.ones(1)
    a = self.epsilon * (lam.max() - lam) / 4 / self.sensitivity
    lo, hi = 0.0, float(q)
    for _ in range(100):
        b = (lo + hi) / 2
        lo, hi = (b, hi) if np.sum(1 / (b + 2 * a)) > 1 else (lo, b)
    w = 1 + 2 * a / hi
    log_m = -(q - hi) / 2 + q / 2 * np.log(q / hi)
    while True:
        x = self._rng.standard_normal(q) / np.sqrt(w)
        x /= np.linalg.norm(x)
        if np.log(self._rng.random()) < -(x * x) @ a + q / 2 * np.log((x * x) @ w) - log_m:
            return vec @ x


def out_of_time(signum, frame):
    raise TimeoutError


if job.get("corrected"):
    Bingham.randomise = corrected_randomise
signal.signal(signal.SIGALRM, out_of_time)
out, seconds = [], []
for seed in job["seeds"]:
    signal.alarm(job.get("time_limit", 0))
    start = time.perf_counter()
    try:
        if job["kind"] == "pca":
            est = PCA(n_components=None if job.get("all") else job["k"], epsilon=job["eps"],
                      data_norm=job["data_norm"], bounds=tuple(job["bounds"]),
                      random_state=seed).fit(d["X"])
            out.append(np.asarray(est.components_)[:job["k"]].tolist())
        else:
            est = KMeans(n_clusters=job["k"], epsilon=job["eps"], bounds=tuple(job["bounds"]),
                         random_state=seed).fit(d["X"])
            out.append(np.asarray(est.cluster_centers_).tolist())
        seconds.append(time.perf_counter() - start)
    except TimeoutError:
        out.append(None)
    signal.alarm(0)
print(json.dumps(dict(results=out, seconds=seconds)))
"""


def summary(values):
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.3f} ± {v.std():.3f}" if v.size else "n/a"


def peer(kind, X, k, eps, bounds, seeds, data_norm=None, **options):
    job = dict(kind=kind, k=k, eps=eps, bounds=list(bounds), seeds=seeds, data_norm=data_norm,
               **options)
    try:
        out = run_peer(DPL_SCRIPT, {"X": X}, json.dumps(job))
        return (None, []) if out is None else (out["results"], out["seconds"])
    except RuntimeError as exc:
        print(f"  diffprivlib failed: {str(exc).splitlines()[-1]}")
        return None, []


def bench_pca(tables, k, eps, seeds, dpl_tables, dpl_options):
    print(f"\n## PCA: variance captured by the top {k} components / scikit-learn's (eps={eps})")
    print("| table | rows x cols | DPPCA | DPPCA(data_norm) | DPPCA(delta=0) "
          "| DPPCA(delta=0, data_norm) | diffprivlib | seconds (DPPCA) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in tables:
        task = LOADERS[name]()
        X = task.X_train
        kk = min(k, X.shape[1])
        ref = captured(X, PCA(kk, svd_solver="full").fit(X).components_)
        ratios = {key: [] for key in ("box", "norm", "box0", "norm0")}
        times = []
        for seed in seeds:
            for key, delta, data_norm in (("box", 1e-5, None), ("norm", 1e-5, task.row_norm),
                                          ("box0", 0.0, None), ("norm0", 0.0, task.row_norm)):
                t = time.perf_counter()
                est = DPPCA(kk, bounds=(0, 1), data_norm=data_norm, epsilon=eps, delta=delta,
                            random_state=seed).fit(X)
                if key == "box":
                    times.append(time.perf_counter() - t)
                ratios[key].append(captured(X, est.components_) / ref)
        dpl = None
        if name in dpl_tables:
            dpl, _ = peer("pca", X, kk, eps, (0.0, 1.0), seeds, data_norm=task.row_norm,
                          **dpl_options)
        dpl_ratio = [captured(X, c) / ref for c in dpl if c is not None] if dpl else []
        unfinished = sum(c is None for c in dpl) if dpl else 0
        dpl_text = summary(dpl_ratio) + (f" ({unfinished} of {len(dpl)} seeds out of time)"
                                         if unfinished else "")
        print(f"| {name} | {X.shape[0]} x {X.shape[1]} | "
              + " | ".join(summary(ratios[key]) for key in ("box", "norm", "box0", "norm0"))
              + f" | {dpl_text} | {np.mean(times):.2f} |", flush=True)


def wide_table(name):
    """(X_train, X_test) of a table of Part 3."""
    if name == "digits_raw":
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split

        return tuple(train_test_split(load_digits().data, test_size=0.25, random_state=0))
    task = LOADERS[name]()
    return task.X_train, task.X_test


def bench_pca_defaults(tables, ks, epsilons, seeds):
    print("\n## PCA with every default: held-out variance captured by DPPCA's top k "
          "components / scikit-learn's")
    print("| table | rows x cols | epsilon | " + " | ".join(f"k = {k}" for k in ks) + " |")
    print("|---|---|---|" + "---|" * len(ks))
    for name in tables:
        X, X_test = wide_table(name)
        for eps in epsilons:
            cells = []
            for k in ks:
                kk = min(k, X.shape[1] - 1)
                ref = captured(X_test, PCA(kk, svd_solver="full").fit(X).components_)
                cells.append(summary([captured(X_test, DPPCA(kk, epsilon=eps, random_state=seed)
                                               .fit(X).components_) / ref for seed in seeds]))
            print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {eps:g} | " + " | ".join(cells)
                  + " |", flush=True)


def mixture(n, k, dim, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.uniform(-8, 8, size=(k, dim))
    labels = rng.integers(0, k, size=n)
    return means[labels] + rng.normal(size=(n, dim))


def bench_kmeans_on(name, X, k, eps, bounds, seeds, max_iter):
    t = time.perf_counter()
    ref = KMeans(k, n_init=10, random_state=0).fit(X).inertia_
    ref_seconds = time.perf_counter() - t
    ours, times = [], []
    for seed in seeds:
        t = time.perf_counter()
        est = DPKMeans(k, bounds=bounds, epsilon=eps, max_iter=max_iter,
                       random_state=seed).fit(X)
        times.append(time.perf_counter() - t)
        ours.append(inertia(X, est.cluster_centers_) / ref)
    dpl, dpl_seconds = peer("kmeans", X, k, eps, bounds, seeds)
    dpl_ratio = [inertia(X, c) / ref for c in dpl] if dpl else []
    dpl_time = f"{np.mean(dpl_seconds):.3f}" if dpl_seconds else "n/a"
    print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {k} | {summary(ours)} | "
          f"{summary(dpl_ratio)} | {np.mean(times):.3f} | {ref_seconds:.3f} | {dpl_time} |",
          flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--components", type=int, default=5)
    parser.add_argument("--pca-tables", default="adult,diamonds")
    parser.add_argument("--dpl-pca-tables", default="",
                        help="tables on which diffprivlib's PCA runs (comma-separated; none by "
                             "default: its Bingham sampler does not finish on the tables of "
                             "10,000+ rows, see --dpl-corrected-sampler)")
    parser.add_argument("--dpl-corrected-sampler", action="store_true",
                        help="run diffprivlib's PCA with Kent et al.'s acceptance ratio in its "
                             "Bingham sampler (0.6.6's ratio accepts with probability 1e-17 to "
                             "1e-48 on the suite's tables of 10,000+ rows)")
    parser.add_argument("--dpl-time-limit", type=int, default=300,
                        help="seconds per diffprivlib PCA fit before it counts as out of time")
    parser.add_argument("--dpl-all-components", action="store_true",
                        help="fit diffprivlib's PCA with n_components=None (its default: every "
                             "component, each at a smaller epsilon, so its sampler finishes "
                             "sooner) and keep the first --components")
    parser.add_argument("--wide", action="store_true",
                        help="Part 3: DPPCA with every default, held-out variance captured")
    parser.add_argument("--wide-tables",
                        default="digits_raw,digits,breast_cancer,wage,gpa,fair,computers,loans,"
                                "nassCDS,weather,diamonds,adult")
    parser.add_argument("--wide-components", default="2,5,10")
    parser.add_argument("--wide-epsilons", default="0.5,1,5")
    parser.add_argument("--skip-kmeans", action="store_true")
    parser.add_argument("--n-points", type=int, default=20_000)
    parser.add_argument("--clusters", type=int, default=5)
    parser.add_argument("--dim", type=int, default=5)
    parser.add_argument("--max-iter", type=int, default=5)
    parser.add_argument("--kmeans-tables", default=",".join(LOADERS))
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads of every contender (default 1)")
    parser.add_argument("--speed", action="store_true",
                        help="time DPPCA against scikit-learn's PCA instead")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--speed-shapes", default="300000x50,1000000x50")
    parser.add_argument("--baseline", metavar="REV", help="with --speed: also DPPCA of REV")
    parser.add_argument("--baseline-all", action="store_true",
                        help="with --baseline: REV's DPPCA in the three settings, not only bounds")
    parser.add_argument("--steps", action="store_true",
                        help="time each step of DPPCA(bounds)'s pass and of PCA(), one thread")
    parser.add_argument("--long-rows", action="store_true",
                        help="time the correction of the long rows against a second pass")
    args = parser.parse_args(argv)
    if args.speed:
        return speed(args)
    if args.steps:
        return steps(args)
    if args.long_rows:
        return long_rows(args)
    _threads.set_thread_variables(args.threads)  # the peers' subprocesses inherit them
    seeds = list(range(args.seeds))
    with threadpool_limits(limits=args.threads):
        print(f"threads = {args.threads} for every contender ({_threads.describe()}), "
              f"load average at start {os.getloadavg()[0]:.2f}")
        run(args, seeds)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


def run(args, seeds):
    tables = [t for t in args.pca_tables.split(",") if t]
    if tables:
        bench_pca(tables, args.components, args.epsilon, seeds, args.dpl_pca_tables.split(","),
                  dict(corrected=args.dpl_corrected_sampler, time_limit=args.dpl_time_limit,
                       all=args.dpl_all_components))
    if args.wide:
        bench_pca_defaults([t for t in args.wide_tables.split(",") if t],
                           [int(k) for k in args.wide_components.split(",")],
                           [float(e) for e in args.wide_epsilons.split(",")], seeds)
    if args.skip_kmeans:
        return
    print(f"\n## KMeans: inertia / scikit-learn's (KMeans n_init=10), eps={args.epsilon}, "
          f"DPKMeans max_iter={args.max_iter}")
    print("| data | rows x cols | k | DPKMeans | diffprivlib | seconds: DPKMeans | "
          "scikit-learn (n_init=10) | diffprivlib |")
    print("|---|---|---|---|---|---|---|---|")
    X = mixture(args.n_points, args.clusters, args.dim)
    bench_kmeans_on("mixture", X, args.clusters, args.epsilon, (-12.0, 12.0), seeds,
                    args.max_iter)
    for name in [t for t in args.kmeans_tables.split(",") if t]:
        X = LOADERS[name]().X_train
        bench_kmeans_on(name, X, args.clusters, args.epsilon, (0.0, 1.0), seeds, args.max_iter)


def baseline_class(rev):
    """DPPCA as it was at commit ``rev``: its module and that of the private bounds
    (skdp/stats/_range.py) from git, their imports made absolute, on today's skdp."""
    import re
    import subprocess
    import types

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def module_at(path, package, replace=()):
        source = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=root, check=True,
                                capture_output=True, text=True).stdout
        source = re.sub(r"from \.(\w)", rf"from {package}.\1",
                        re.sub(r"from \.\.", "from skdp.", source))
        for old, new in replace:
            source = source.replace(old, new)
        module = types.ModuleType(f"{os.path.basename(path)[:-3]}_at_{rev}")
        sys.modules[module.__name__] = module
        exec(compile(source, module.__name__, "exec"), module.__dict__)
        return module

    bounds = module_at("skdp/stats/_range.py", "skdp.stats")
    module = module_at("skdp/decomposition/_pca.py", "skdp.decomposition",
                       [("from skdp.stats._range import", f"from {bounds.__name__} import")])
    return module.DPPCA


def speed(args):
    """Seconds of a fit against scikit-learn's PCA (default solver), side by side."""
    def make(n, d):
        X = np.random.default_rng(0).standard_normal((n, d))
        X *= np.linspace(0.5, 3.0, d)
        contenders = {
            "PCA()": lambda: PCA().fit(X),
            "DPPCA(bounds)": lambda: DPPCA(bounds=(-12.0, 12.0), random_state=0).fit(X),
            "DPPCA(bounds, data_norm)": lambda: DPPCA(bounds=(-12.0, 12.0), data_norm=15.0,
                                                      random_state=0).fit(X),
            "DPPCA(data_norm)": lambda: DPPCA(data_norm=15.0, random_state=0).fit(X),
        }
        if args.baseline:
            Old = baseline_class(args.baseline)
            for name, kw in (("bounds", dict(bounds=(-12.0, 12.0))),
                             ("bounds, data_norm", dict(bounds=(-12.0, 12.0), data_norm=15.0)),
                             ("data_norm", dict(data_norm=15.0)))[:3 if args.baseline_all else 1]:
                contenders[f"DPPCA@{args.baseline}({name})"] = \
                    lambda kw=kw: Old(random_state=0, **kw).fit(X)
        return X, contenders

    shapes = [tuple(int(v) for v in s.split("x")) for s in args.speed_shapes.split(",")]
    print(f"epsilon=1, delta=1e-5; {_threads.describe()}")
    speed_table(shapes, make, "PCA()", args.rounds, sorted({1, args.threads}))
    return 0



def steps(args):
    """Milliseconds (wall and CPU) of each step of DPPCA(bounds)'s pass and of PCA()'s, one thread."""
    from skdp.decomposition import _pca

    def dppca(X, tick):
        n, d = X.shape
        bounds = (np.full(d, -12.0), np.full(d, 12.0))
        _, C0 = _pca._centre_and_norm(bounds, None)
        np.isfinite(X.sum())
        tick("finite check (validate_data's)")
        C_guess = _pca.guess_norm(X, bounds, C0)
        tick("the guess of C (4,096 rows)")
        norms = np.empty(n)
        gram, sums = np.zeros((d, d)), np.zeros(d)
        blocks = list(_pca.row_blocks(n, d, _pca.block_bytes(X)))  # the fit's blocks
        for rows, Y in _steps_blocks(_pca.clipped_blocks(X, bounds, None, blocks), tick, "clip"):
            _pca._row_norms(Y, norms[rows])
            tick("the rows' norms")
            _pca._scale_down(Y, norms[rows], C_guess)
            tick("scale the rows longer than the guess")
            gram += Y.T @ Y
            tick("Gram matrix")
            sums += _pca.column_sums(Y)
            tick("sums")
        _pca.norm_counts(norms, C0)  # one thread: the run is all the rows
        tick("the norms' histogram")

    def pca(X, tick):
        np.isfinite(X.sum())
        tick("PCA: finite check")
        X.mean(axis=0)
        tick("PCA: mean")
        X.T @ X
        tick("PCA: X.T @ X")

    load = os.getloadavg()[0]
    for n, d in (tuple(int(v) for v in s.split("x")) for s in args.speed_shapes.split(",")):
        X = np.random.default_rng(0).standard_normal((n, d))
        X *= np.linspace(0.5, 3.0, d)
        totals = {}  # step: [wall seconds, the process's CPU seconds]
        with threadpool_limits(1):
            for _ in range(args.rounds):
                for run in (dppca, pca):
                    last = [time.perf_counter(), time.process_time()]

                    def tick(step):
                        now = [time.perf_counter(), time.process_time()]
                        spent = totals.setdefault(step, [0.0, 0.0])
                        for i in (0, 1):
                            spent[i] += now[i] - last[i]
                        last[:] = now

                    run(X, tick)
        print(f"{n} x {d}, one thread, mean of {args.rounds} interleaved rounds "
              "(ms, wall / the process's CPU):")
        for step, (wall, cpu) in totals.items():
            print(f"  {step}: {1e3 * wall / args.rounds:.1f} / {1e3 * cpu / args.rounds:.1f}")
        for i, what in ((0, "wall"), (1, "CPU")):
            print(f"  in all ({what}): DPPCA(bounds) %.1f, PCA() %.1f" % tuple(
                1e3 * sum(v[i] for k, v in totals.items()
                          if k.startswith(p) == want)
                / args.rounds for p, want in (("PCA", False), ("PCA", True))))
    print(f"load average at start {load:.2f}, at end {os.getloadavg()[0]:.2f}")
    return 0


def long_rows(args):
    """Milliseconds of the long rows' correction and of a second pass, by share, one thread."""
    from _speed import interleaved
    from skdp.decomposition import _pca

    print(f"load average at start {os.getloadavg()[0]:.2f}; {args.rounds} interleaved rounds")
    for n, d in (tuple(int(v) for v in s.split("x")) for s in args.speed_shapes.split(",")):
        X = np.random.default_rng(0).standard_normal((n, d))
        X *= np.linspace(0.5, 3.0, d)
        bounds = (np.full(d, -12.0), np.full(d, 12.0))
        _, C0 = _pca._centre_and_norm(bounds, None)
        print(f"{n} x {d}, one thread: median ms (wall; the process's CPU)")
        print("| share of rows longer than C | correction | second pass | correction / pass |")
        print("|---|---|---|---|")
        with threadpool_limits(1):
            norms, _, gram, sums = _pca._norms_moments_pass(X, bounds, C0, math.inf)
            for share in (0.1, 0.2, 0.3, 0.5, 0.6, 0.75, 0.9, 1.0):
                C = float(np.quantile(norms, 1.0 - share)) if share < 1 else norms.min() / 2

                def correct(C=C):
                    _pca.LONG_ROWS_SHARE = 1.0  # never the second pass
                    _pca.scale_down_long_rows(X, bounds, C, math.inf, norms, gram, sums)

                times = interleaved({"correction": correct, "second pass": lambda C=C:
                                     _pca.moments(X, bounds, None, C, norms)}, args.rounds)
                cells = [" / ".join(f"{1e3 * np.median(t[k]):.1f}" for t in times)
                         for k in ("correction", "second pass")]
                ratio = " / ".join(
                    f"{np.median(np.array(t['correction']) / t['second pass']):.2f}"
                    for t in times)
                print(f"| {np.mean(norms > C):.2f} | {cells[0]} | {cells[1]} | {ratio} |",
                      flush=True)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


def _steps_blocks(blocks, tick, step):
    """The (rows, Y) of ``blocks``, the time spent making each charged to ``step``."""
    for rows, Y in blocks:
        tick(step)
        yield rows, Y


if __name__ == "__main__":
    sys.exit(main())
