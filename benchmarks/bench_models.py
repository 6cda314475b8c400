"""DP models on UCI Adult: DPGaussianNB vs diffprivlib and scikit-learn.

DPLinearRegression has its own benchmark: benchmarks/bench_linear_regression.py.

Run from the repository root (diffprivlib needs scikit-learn < 1.8, so it runs in its own
venv as a subprocess; without diffprivlib's peer venv (benchmarks/_peers.py) its column is left out):

    python benchmarks/bench_models.py

Features: skdp.datasets.adult_preprocessor (public schema, learns nothing): 105 columns in
[0, 1], so the public bounds are (0, 1). Train on adult.data, test on adult.test.
"""

import json
import os
import sys
import time

import numpy as np
from sklearn.naive_bayes import GaussianNB

from skdp.datasets import adult_preprocessor, load_adult
from skdp.naive_bayes import DPGaussianNB

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # for _peers, however run
from _peers import run_peer  # noqa: E402

EPSILONS = [0.1, 1.0, 5.0]
SEEDS = range(5)
DPL_SCRIPT = r"""
import json, sys, warnings
import numpy as np
from diffprivlib.models import GaussianNB
warnings.simplefilter("ignore")
d = np.load(sys.argv[1])
out = {}
for eps in json.loads(sys.argv[2]):
    accs = []
    for seed in range(int(sys.argv[3])):
        clf = GaussianNB(epsilon=eps, bounds=(np.zeros(d["Xtr"].shape[1]), np.ones(d["Xtr"].shape[1])),
                         random_state=seed)
        accs.append(float(clf.fit(d["Xtr"], d["ytr"]).score(d["Xte"], d["yte"])))
    out[str(eps)] = accs
print(json.dumps(out))
"""


def adult():
    pre = adult_preprocessor()
    Xtr, ytr = load_adult(return_X_y=True)
    Xte, yte = load_adult(subset="test", return_X_y=True)
    return pre.fit_transform(Xtr), ytr, pre.transform(Xte), yte


def diffprivlib_nb(Xtr, ytr, Xte, yte):
    out = run_peer(DPL_SCRIPT, dict(Xtr=Xtr, ytr=ytr, Xte=Xte, yte=yte),
                   json.dumps(EPSILONS), str(len(SEEDS)))
    return None if out is None else {float(k): v for k, v in out.items()}


def main():
    Xtr, ytr, Xte, yte = adult()
    print(f"Adult: train {Xtr.shape}, test {Xte.shape}; bounds (0, 1) on every column")

    print("\n## DPGaussianNB (test accuracy, mean ± std over 5 seeds)")
    ref = GaussianNB().fit(Xtr, ytr)
    base = ref.score(Xte, yte)
    majority = max(np.mean(yte == c) for c in np.unique(yte))
    t0 = time.perf_counter()
    dpl = diffprivlib_nb(Xtr, ytr, Xte, yte)
    t_dpl = time.perf_counter() - t0
    print(f"non-private sklearn GaussianNB: {base:.4f}; majority class on the test set: "
          f"{majority:.4f}")
    print("| epsilon | skdp δ=0 (pure) | skdp δ=1e-5 | diffprivlib GaussianNB (pure) | "
          "skdp δ=0 / sklearn | mean abs error of θ, δ=0 | same, δ=1e-5 |")
    print("|---|---|---|---|---|---|---|")
    t_skdp = 0.0
    for eps in EPSILONS:
        cells, errs = [], []
        for delta in (0.0, 1e-5):
            accs, err = [], []
            for seed in SEEDS:
                t0 = time.perf_counter()
                clf = DPGaussianNB(epsilon=eps, delta=delta, bounds=(0, 1), classes=[0, 1],
                                   random_state=seed)
                accs.append(clf.fit(Xtr, ytr).score(Xte, yte))
                t_skdp += time.perf_counter() - t0
                err.append(np.mean(np.abs(clf.theta_ - ref.theta_)))
            cells.append(accs)
            errs.append(np.mean(err))
        d = f"{np.mean(dpl[eps]):.4f} ± {np.std(dpl[eps]):.4f}" if dpl else "n/a"
        print(f"| {eps} | {np.mean(cells[0]):.4f} ± {np.std(cells[0]):.4f} | "
              f"{np.mean(cells[1]):.4f} ± {np.std(cells[1]):.4f} | {d} | "
              f"{np.mean(cells[0]) / base:.3f} | {errs[0]:.5f} | {errs[1]:.5f} |")
    print(f"(time for the 30 fits+scores: skdp {t_skdp:.2f} s; diffprivlib subprocess incl. "
          f"start-up {t_dpl:.2f} s)")


if __name__ == "__main__":
    sys.exit(main())
