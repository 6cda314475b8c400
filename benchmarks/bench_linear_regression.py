"""DPLinearRegression on UCI Adult against scikit-learn and diffprivlib (side by side, one run).

Run from the repository root (diffprivlib needs scikit-learn < 1.8, so it runs in its own
venv as a subprocess; without /work/dplvenv its column is left out):

    /work/venv/bin/python benchmarks/bench_linear_regression.py

Target: hours-per-week, scaled to [0, 1] by its public bounds 1..99 (the last column of
skdp.datasets.adult_preprocessor); features: the other 104 columns (99 one-hot, 5 numeric in
[0, 1]). Train on adult.data, test on adult.test; test R², mean ± std over 5 seeds, δ = 1e-5.

Public bounds, from the schema alone (never from the rows):
- bounds_X = (0, 1): every output column of the preprocessor lies in [0, 1];
- bounds_y = (0, 1): the scaled target;
- data_norm = sqrt(13): by adult_schema(), each of the 8 categorical attributes is one one-hot
  block with at most one 1, and the 5 numeric feature columns lie in [0, 1], so
  ||x||² <= 8 + 5 (adult_schema()["max_row_norm"] = sqrt(14) counts hours-per-week too).
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.linear_model import LinearRegression

from skdp.datasets import adult_preprocessor, adult_schema, load_adult
from skdp.linear_model import DPLinearRegression

EPSILONS = [0.1, 1.0, 5.0]
SEEDS = range(5)
DELTA = 1e-5
DPL_PYTHON = "/work/dplvenv/bin/python"

DPL_SCRIPT = r"""
import json, sys, warnings
import numpy as np
from diffprivlib.models import LinearRegression
warnings.simplefilter("ignore")
d = np.load(sys.argv[1])
out = {}
for eps in json.loads(sys.argv[2]):
    r2 = []
    for seed in range(int(sys.argv[3])):
        reg = LinearRegression(epsilon=eps, bounds_X=(0, 1), bounds_y=(0, 1), random_state=seed)
        r2.append(float(reg.fit(d["Xtr"], d["ytr"]).score(d["Xte"], d["yte"])))
    out[str(eps)] = r2
print(json.dumps(out))
"""


def fmt(x, digits=4):
    """Fixed point, or 3 significant digits when huge (diffprivlib's R² can be -1e18)."""
    return f"{x:.{digits}f}" if abs(x) < 1e3 else f"{x:.3g}"


def adult_regression():
    pre = adult_preprocessor()
    Xtr = pre.fit_transform(load_adult(return_X_y=True)[0])
    Xte = pre.transform(load_adult(subset="test", return_X_y=True)[0])
    # The preprocessor puts the numeric columns last, in schema order: hours-per-week is last.
    assert list(adult_schema()["numeric_bounds"])[-1] == "hours-per-week"
    return Xtr[:, :-1], Xtr[:, -1], Xte[:, :-1], Xte[:, -1]


def public_data_norm():
    schema = adult_schema()
    n_numeric_features = len(schema["numeric_bounds"]) - 1  # hours-per-week is the target
    return math.sqrt(len(schema["categorical"]) + n_numeric_features)


def diffprivlib_r2(Xtr, ytr, Xte, yte):
    if not os.path.exists(DPL_PYTHON):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "adult.npz")
        np.savez(path, Xtr=Xtr, ytr=ytr, Xte=Xte, yte=yte)
        res = subprocess.run([DPL_PYTHON, "-c", DPL_SCRIPT, path, json.dumps(EPSILONS),
                              str(len(SEEDS))], capture_output=True, text=True, check=True)
    return {float(k): v for k, v in json.loads(res.stdout).items()}


def main():
    Xtr, ytr, Xte, yte = adult_regression()
    data_norm = public_data_norm()
    base = LinearRegression().fit(Xtr, ytr).score(Xte, yte)
    print(f"Adult: train {Xtr.shape}, test {Xte.shape}; data_norm = sqrt(13) = {data_norm:.4f}")
    print(f"non-private sklearn LinearRegression: test R² = {base:.4f}")
    t0 = time.perf_counter()
    dpl = diffprivlib_r2(Xtr, ytr, Xte, yte)
    t_dpl = time.perf_counter() - t0
    variants = {
        "box (0, 1) only": dict(bounds_X=(0, 1)),
        "box + data_norm": dict(bounds_X=(0, 1), data_norm=data_norm),
        "data_norm only": dict(data_norm=data_norm),
    }
    names = list(variants)
    print("| epsilon | " + " | ".join(f"skdp {n}" for n in names)
          + " | diffprivlib (pure ε) | skdp box + data_norm / sklearn | diffprivlib / sklearn |")
    print("|---" * (len(names) + 4) + "|")
    t_skdp = 0.0
    for eps in EPSILONS + [math.inf]:
        cells, means = [], {}
        for name in names:
            r2 = []
            for seed in SEEDS:
                t0 = time.perf_counter()
                reg = DPLinearRegression(epsilon=eps, delta=DELTA, bounds_y=(0, 1),
                                         random_state=seed, **variants[name])
                r2.append(reg.fit(Xtr, ytr).score(Xte, yte))
                t_skdp += time.perf_counter() - t0
            means[name] = np.mean(r2)
            cells.append(f"{np.mean(r2):.4f} ± {np.std(r2):.4f}")
        if dpl and eps in dpl:
            d = f"{fmt(np.mean(dpl[eps]))} ± {fmt(np.std(dpl[eps]))}"
            d_ratio = fmt(np.mean(dpl[eps]) / base, 3)
        else:
            d, d_ratio = "n/a", ""
        print(f"| {eps} | " + " | ".join(cells)
              + f" | {d} | {means['box + data_norm'] / base:.3f} | {d_ratio} |")
    print(f"(time for the {len(names) * len(SEEDS) * (len(EPSILONS) + 1)} skdp fits+scores: "
          f"{t_skdp:.1f} s; diffprivlib subprocess incl. start-up {t_dpl:.1f} s)")


if __name__ == "__main__":
    sys.exit(main())
