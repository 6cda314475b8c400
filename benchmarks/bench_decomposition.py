"""DPPCA and DPKMeans against scikit-learn and diffprivlib.

Part 1 (PCA): on the suite's tables (benchmarks/_suite_data.py; features in [0, 1], public
bounds (0, 1) and the public row norm), the variance of the training rows captured by the
top ``--components`` components, sum of vᵀ Σ v, as a ratio to scikit-learn's PCA. DPPCA runs
with the box's default centre and norm, and with ``data_norm`` = the table's public row norm;
diffprivlib's PCA with the same bounds and ``data_norm`` (in its own venv, as a subprocess).

Part 2 (KMeans): a well-separated mixture of ``--n-points`` points (``--clusters``
spherical Gaussians of sd 1 in ``--dim`` dimensions, means drawn uniformly in [-8, 8]^d by a
fixed seed, bounds (-12, 12)) and the suite's tables (bounds (0, 1)): the inertia of the
training rows about each method's centres, as a ratio to scikit-learn's KMeans (n_init=10).

Every private fit is at ``--epsilon`` (default 1) and δ = 1e-5 (diffprivlib's PCA and KMeans
are pure ε-DP), over ``--seeds`` seeds. Run::

    python benchmarks/bench_decomposition.py
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _peers import run_peer  # noqa: E402
from _suite_data import LOADERS  # noqa: E402

from skdp.cluster import DPKMeans  # noqa: E402
from skdp.decomposition import DPPCA  # noqa: E402

DPL_SCRIPT = r"""
import json, sys, warnings
import numpy as np
from diffprivlib.models import PCA, KMeans
warnings.simplefilter("ignore")
d = np.load(sys.argv[1])
job = json.loads(sys.argv[2])
out = []
for seed in job["seeds"]:
    if job["kind"] == "pca":
        est = PCA(n_components=job["k"], epsilon=job["eps"], data_norm=job["data_norm"],
                  bounds=tuple(job["bounds"]), random_state=seed).fit(d["X"])
        out.append(np.asarray(est.components_).tolist())
    else:
        est = KMeans(n_clusters=job["k"], epsilon=job["eps"], bounds=tuple(job["bounds"]),
                     random_state=seed).fit(d["X"])
        out.append(np.asarray(est.cluster_centers_).tolist())
print(json.dumps(out))
"""


def captured(X, components):
    """Sum over the components v of vᵀ Σ v, Σ the covariance of X (rows orthonormalised)."""
    q, _ = np.linalg.qr(np.asarray(components).T)
    Xc = X - X.mean(axis=0)
    return float(np.sum((Xc @ q) ** 2) / (len(X) - 1))


def inertia(X, centers):
    centers = np.asarray(centers)
    d = (np.einsum("ij,ij->i", X, X)[:, None] - 2 * X @ centers.T
         + np.einsum("ij,ij->i", centers, centers)[None])
    return float(np.maximum(d, 0).min(axis=1).sum())


def summary(values):
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.3f} ± {v.std():.3f}" if v.size else "n/a"


def peer(kind, X, k, eps, bounds, seeds, data_norm=None):
    job = dict(kind=kind, k=k, eps=eps, bounds=list(bounds), seeds=seeds, data_norm=data_norm)
    try:
        return run_peer(DPL_SCRIPT, {"X": X}, json.dumps(job))
    except RuntimeError as exc:
        print(f"  diffprivlib failed: {str(exc).splitlines()[-1]}")
        return None


def bench_pca(tables, k, eps, seeds, dpl_tables):
    print(f"\n## PCA: variance captured by the top {k} components / scikit-learn's (eps={eps})")
    print("| table | rows x cols | DPPCA | DPPCA(data_norm) | diffprivlib | seconds (DPPCA) |")
    print("|---|---|---|---|---|---|")
    for name in tables:
        task = LOADERS[name]()
        X = task.X_train
        kk = min(k, X.shape[1])
        ref = captured(X, PCA(kk, svd_solver="full").fit(X).components_)
        ours, normed, times = [], [], []
        for seed in seeds:
            t = time.perf_counter()
            est = DPPCA(kk, bounds=(0, 1), epsilon=eps, random_state=seed).fit(X)
            times.append(time.perf_counter() - t)
            ours.append(captured(X, est.components_) / ref)
            est = DPPCA(kk, bounds=(0, 1), data_norm=task.row_norm, epsilon=eps,
                        random_state=seed).fit(X)
            normed.append(captured(X, est.components_) / ref)
        dpl = None
        if name in dpl_tables:
            dpl = peer("pca", X, kk, eps, (0.0, 1.0), seeds, data_norm=task.row_norm)
        dpl_ratio = [captured(X, c) / ref for c in dpl] if dpl else []
        print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {summary(ours)} | {summary(normed)} "
              f"| {summary(dpl_ratio)} | {np.mean(times):.2f} |")


def mixture(n, k, dim, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.uniform(-8, 8, size=(k, dim))
    labels = rng.integers(0, k, size=n)
    return means[labels] + rng.normal(size=(n, dim))


def bench_kmeans_on(name, X, k, eps, bounds, seeds, max_iter):
    ref = KMeans(k, n_init=10, random_state=0).fit(X).inertia_
    ours, times = [], []
    for seed in seeds:
        t = time.perf_counter()
        est = DPKMeans(k, bounds=bounds, epsilon=eps, max_iter=max_iter,
                       random_state=seed).fit(X)
        times.append(time.perf_counter() - t)
        ours.append(inertia(X, est.cluster_centers_) / ref)
    dpl = peer("kmeans", X, k, eps, bounds, seeds)
    dpl_ratio = [inertia(X, c) / ref for c in dpl] if dpl else []
    print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {k} | {summary(ours)} | "
          f"{summary(dpl_ratio)} | {np.mean(times):.2f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--components", type=int, default=5)
    parser.add_argument("--pca-tables", default="adult,diamonds")
    parser.add_argument("--dpl-pca-tables", default="",
                        help="tables on which diffprivlib's PCA runs (comma-separated; none by "
                             "default: on Adult (105 columns) and diamonds (26) it ran over 6 "
                             "minutes for 2 seeds and was stopped)")
    parser.add_argument("--n-points", type=int, default=20_000)
    parser.add_argument("--clusters", type=int, default=5)
    parser.add_argument("--dim", type=int, default=5)
    parser.add_argument("--max-iter", type=int, default=5)
    parser.add_argument("--kmeans-tables", default=",".join(LOADERS))
    args = parser.parse_args(argv)
    seeds = list(range(args.seeds))
    tables = [t for t in args.pca_tables.split(",") if t]
    if tables:
        bench_pca(tables, args.components, args.epsilon, seeds, args.dpl_pca_tables.split(","))
    print(f"\n## KMeans: inertia / scikit-learn's (KMeans n_init=10), eps={args.epsilon}, "
          f"DPKMeans max_iter={args.max_iter}")
    print("| data | rows x cols | k | DPKMeans | diffprivlib | seconds (DPKMeans) |")
    print("|---|---|---|---|---|---|")
    X = mixture(args.n_points, args.clusters, args.dim)
    bench_kmeans_on("mixture", X, args.clusters, args.epsilon, (-12.0, 12.0), seeds,
                    args.max_iter)
    for name in [t for t in args.kmeans_tables.split(",") if t]:
        X = LOADERS[name]().X_train
        bench_kmeans_on(name, X, args.clusters, args.epsilon, (0.0, 1.0), seeds, args.max_iter)
    return 0


if __name__ == "__main__":
    sys.exit(main())
