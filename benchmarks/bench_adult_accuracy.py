"""Accuracy on the UCI Adult test split against ε (issue 3 targets).

Every model sees the same public-schema preprocessing (skdp.datasets.adult_preprocessor:
one-hot with the categories of adult.names, numeric columns scaled by public bounds;
nothing learnt from the data). Mean (and std) over seeds, δ = 1e-5, default
hyper-parameters; linear models get the public row-norm bound √14 of that preprocessing.

Peers, side by side in one run:
- scikit-learn LogisticRegression (non-private) and the majority class;
- diffprivlib LogisticRegression (pure ε-DP, data_norm = √14), run in its own venv
  (it needs scikit-learn < 1.8) as a subprocess on the same preprocessed arrays;
- skdp DPSGDClassifier(hidden_layer_sizes=(64, 64)) if it is importable.

Usage:  python benchmarks/bench_adult_accuracy.py [--seeds 5] [--dpl-python PATH]  (default: diffprivlib's peer venv, benchmarks/_peers.py)
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
from sklearn.linear_model import LogisticRegression

from skdp.datasets import adult_preprocessor, adult_schema, load_adult
from skdp.linear_model import DPLogisticRegression

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # for _peers, however run
from _peers import DPL_PYTHON, run_peer  # noqa: E402

EPSILONS = [0.1, 0.5, 1.0, 2.0, 5.0, math.inf]
DELTA = 1e-5

DPL_SCRIPT = r"""
import json, sys, warnings
import numpy as np
from diffprivlib.models import LogisticRegression
warnings.simplefilter("ignore")
d = np.load(sys.argv[1])
epsilons, seeds, norm = json.loads(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
out = {}
for eps in epsilons:
    accs = [LogisticRegression(epsilon=eps, data_norm=norm, random_state=s)
            .fit(d["Xtr"], d["ytr"]).score(d["Xte"], d["yte"]) for s in range(seeds)]
    out[str(eps)] = accs
print(json.dumps(out))
"""


def fmt(accs):
    return f"{np.mean(accs):.4f} ± {np.std(accs):.4f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--dpl-python", default=DPL_PYTHON)
    parser.add_argument("--plot", metavar="PNG", help="also save accuracy against ε to this PNG")
    args = parser.parse_args()

    pre = adult_preprocessor()
    Xtr, ytr = load_adult(return_X_y=True)
    Xte, yte = load_adult(subset="test", return_X_y=True)
    Xtr = pre.fit_transform(Xtr)
    Xte = pre.transform(Xte)
    norm = adult_schema()["max_row_norm"]
    print(f"Adult: train {Xtr.shape}, test {Xte.shape}; δ = {DELTA}; {args.seeds} seeds; data_norm = √14")

    sk = LogisticRegression(max_iter=5000).fit(Xtr, ytr).score(Xte, yte)
    majority = max(yte.mean(), 1 - yte.mean())
    print(f"non-private sklearn LogisticRegression: {sk:.4f}; majority class: {majority:.4f}")

    results = {}
    rows = []
    t0 = time.perf_counter()
    for eps in EPSILONS:
        accs = [DPLogisticRegression(epsilon=eps, delta=DELTA, data_norm=norm, classes=[0, 1], random_state=s)
                .fit(Xtr, ytr).score(Xte, yte) for s in range(args.seeds)]
        results[("skdp DPLogisticRegression", eps)] = accs
    print(f"[DPLogisticRegression: {time.perf_counter() - t0:.1f} s]")

    try:
        from skdp.linear_model import DPSGDClassifier
    except ImportError:
        print("NOTE: skdp DPSGDClassifier is not importable yet; skipped.")
        DPSGDClassifier = None
    if DPSGDClassifier is not None:
        t0 = time.perf_counter()
        for eps in EPSILONS:
            try:
                accs = [DPSGDClassifier(hidden_layer_sizes=(64, 64), epsilon=eps, delta=DELTA, classes=[0, 1],
                                        random_state=s)
                        .fit(Xtr, ytr).score(Xte, yte) for s in range(args.seeds)]
            except Exception as exc:  # report, don't hide
                print(f"NOTE: DPSGDClassifier(hidden_layer_sizes=(64, 64), epsilon={eps}) failed: {exc!r}")
                continue
            results[("skdp DPSGDClassifier (64, 64)", eps)] = accs
        print(f"[DPSGDClassifier (64, 64): {time.perf_counter() - t0:.1f} s]")

    finite = [e for e in EPSILONS if e < math.inf]
    t0 = time.perf_counter()
    try:
        dpl = run_peer(DPL_SCRIPT, dict(Xtr=Xtr, ytr=ytr, Xte=Xte, yte=yte), json.dumps(finite),
                       str(args.seeds), repr(norm), python=args.dpl_python)
    except RuntimeError as exc:  # keep the skdp results of this long run
        print(f"NOTE: diffprivlib run failed:\n{exc}")
        dpl = None
    if dpl is not None:
        for eps, accs in dpl.items():
            results[("diffprivlib LogisticRegression", float(eps))] = accs
        print(f"[diffprivlib: {time.perf_counter() - t0:.1f} s]")

    models = sorted({m for m, _ in results}, key=lambda m: (not m.startswith("skdp DPL"), m))
    header = "| model | " + " | ".join(f"ε={e:g}" for e in EPSILONS) + " |"
    print()
    print(header)
    print("|" + "---|" * (len(EPSILONS) + 1))
    for m in models:
        cells = [fmt(results[(m, e)]) if (m, e) in results else "–" for e in EPSILONS]
        print(f"| {m} | " + " | ".join(cells) + " |")
    print(f"| sklearn LogisticRegression (non-private) | {sk:.4f} (all ε) |")
    print()
    print("Ratio of mean accuracy to non-private sklearn:")
    for m in models:
        cells = [f"{np.mean(results[(m, e)]) / sk:.3f}" if (m, e) in results else "–" for e in EPSILONS]
        print(f"  {m}: " + ", ".join(f"ε={e:g}: {c}" for e, c in zip(EPSILONS, cells)))
    if args.plot:
        plot(results, models, sk, majority, args.plot)
        print(f"figure: {args.plot}")


def plot(results, models, sk, majority, path):
    """Mean test accuracy (±1 sd over seeds) against finite ε, one line per model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    finite = [e for e in EPSILONS if e < math.inf]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for m in models:
        eps = [e for e in finite if (m, e) in results]
        mean = np.array([np.mean(results[(m, e)]) for e in eps])
        sd = np.array([np.std(results[(m, e)]) for e in eps])
        ax.errorbar(eps, mean, yerr=sd, marker="o", capsize=3, label=m)
    ax.axhline(sk, color="k", linestyle="--", linewidth=1, label="sklearn LogisticRegression (non-private)")
    ax.axhline(majority, color="grey", linestyle=":", linewidth=1, label="majority class")
    ax.set_xscale("log")
    ax.set_xlabel("ε (δ = 1e-5)")
    ax.set_ylabel("test accuracy on Adult")
    ax.set_title("Accuracy against ε on Adult (mean of seeds, ±1 sd)")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
