"""Time and peak memory of DPLogisticRegression against scikit-learn's LogisticRegression at scale.

Synthetic binary data, ``n`` rows (10^4 to 10^6, and 10^7 with ``--with-1e7``) and
``--features`` columns (50), float64 C-contiguous: every entry uniform in
[-1/√d, 1/√d], so every row has L2 norm at most 1, the public norm passed as
``data_norm=1``; labels from a fixed linear model with logistic noise.

Each fit runs alone in a fresh subprocess, which builds the data in place (its
peak so far is the interpreter, the imports and the data), then fits once:

- ``time``: wall-clock seconds of ``fit``;
- ``extra peak``: the growth of the process's peak resident memory
  (``resource.getrusage(...).ru_maxrss``) during ``fit``, i.e. the fit's peak
  memory beyond the data it was given; shown with the data's own size.

Compared side by side in one run, each with the same thread limit
(``threadpoolctl.threadpool_limits(--threads)`` for BLAS and OpenMP, plus the
``*_NUM_THREADS`` variables): ``DPLogisticRegression(epsilon=1, data_norm=1,
classes=[0, 1], random_state=0)`` (δ = 1e-5) and ``LogisticRegression()``
(lbfgs, its defaults). ``passes`` is DP-GD's steps T (one pass over the data
each) and lbfgs's iterations (``n_iter_``). Run::

    python benchmarks/bench_logistic_scale.py             # n = 1e4, 1e5, 1e6
    python benchmarks/bench_logistic_scale.py --with-1e7  # and n = 1e7 (4 GB of data)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _threads  # noqa: E402

CHILD = r"""
import json, math, os, resource, sys, time, warnings
import numpy as np
from threadpoolctl import threadpool_limits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from skdp.linear_model import DPLogisticRegression

job = json.loads(sys.argv[1])
n, d = job["n"], job["d"]
rng = np.random.default_rng(job["seed"])
X = np.empty((n, d))
rng.random(out=X)  # in place: the peak so far is the data, not a temporary
X *= 2.0 / math.sqrt(d)
X -= 1.0 / math.sqrt(d)  # entries in [-1/sqrt(d), 1/sqrt(d)]: every row norm <= 1
beta = np.random.default_rng(1).normal(size=d)
beta *= 30.0 / np.linalg.norm(beta)
y = (X @ beta + rng.logistic(size=n) > 0).astype(int)
if job["method"] == "skdp":
    est = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0)
else:
    est = LogisticRegression()
warnings.simplefilter("ignore", ConvergenceWarning)
with threadpool_limits(limits=job["threads"]):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    est.fit(X, y)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    acc = float(est.score(X[:100_000], y[:100_000]))
print(json.dumps(dict(seconds=seconds, extra_mb=(after - before) / 1024, base_mb=before / 1024,
                      data_mb=X.nbytes / 2**20, passes=int(np.max(est.n_iter_)), acc=acc)))
"""


def run(method, n, d, threads, seed):
    env = dict(os.environ)
    env.update(dict.fromkeys(_threads.THREAD_VARIABLES, str(threads)))
    job = json.dumps(dict(method=method, n=n, d=d, threads=threads, seed=seed))
    out = subprocess.run([sys.executable, "-c", CHILD, job], env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--with-1e7", action="store_true", help="also n = 10^7 (4 GB at d = 50)")
    parser.add_argument("--sizes", type=str, default=None,
                        help="comma-separated row counts instead of the defaults")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3,
                        help="fits of each method per size, alternately, each in a fresh process; "
                             "the median time is printed")
    args = parser.parse_args()
    sizes = ([int(float(s)) for s in args.sizes.split(",")] if args.sizes
             else [10**4, 10**5, 10**6] + ([10**7] if args.with_1e7 else []))
    print(f"d = {args.features}, float64 C-contiguous, threads = {args.threads} (both), "
          f"median of {args.repeats} fits each, load average at start {os.getloadavg()[0]:.2f}")
    print("| n | data MB | skdp time s | sklearn time s | time ratio | skdp passes | "
          "sklearn iters | skdp extra peak MB | sklearn extra peak MB | skdp acc | sklearn acc |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        fits = [(run("skdp", n, args.features, args.threads, args.seed),
                 run("sklearn", n, args.features, args.threads, args.seed))
                for _ in range(args.repeats)]
        ours, ref = fits[0]  # memory, passes and accuracy: the same in every repeat
        ours["seconds"] = statistics.median(f[0]["seconds"] for f in fits)
        ref["seconds"] = statistics.median(f[1]["seconds"] for f in fits)
        print(f"| {n:.0e} | {ours['data_mb']:.0f} | {ours['seconds']:.2f} | {ref['seconds']:.2f} | "
              f"{ours['seconds'] / ref['seconds']:.2f} | {ours['passes']} | {ref['passes']} | "
              f"{ours['extra_mb']:.0f} | {ref['extra_mb']:.0f} | {ours['acc']:.3f} | "
              f"{ref['acc']:.3f} |", flush=True)
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
