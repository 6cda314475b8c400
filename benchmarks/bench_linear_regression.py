"""DPLinearRegression on UCI Adult against scikit-learn and diffprivlib (side by side, one run).

Run from the repository root (diffprivlib needs scikit-learn < 1.8, so it runs in its own
venv as a subprocess; without diffprivlib's peer venv (benchmarks/_peers.py) its columns are left out):

    python benchmarks/bench_linear_regression.py

Target: hours-per-week, scaled to [0, 1] by its public bounds 1..99 (the last column of
skdp.datasets.adult_preprocessor). Train on adult.data, test on adult.test; test R², mean ± std
over 5 seeds, δ = 1e-5. Three feature designs, all chosen from the schema and the
preprocessor's feature names (never from the rows):

- "all 104": the other 104 columns (99 one-hot, 5 numeric in [0, 1]). Five one-hot blocks
  (education, marital-status, relationship, race, sex: no missing values) sum to 1 on every
  row, so they are collinear with the intercept, and education-num is a linear function of
  the education block (adult_schema: it is the code of the 16 education levels);
- "reference coding": drop the first level (in adult_schema() order) of each of the 8 one-hot
  blocks and drop education-num: 91 one-hot + 4 numeric columns, full-rank design;
- "numeric only": the 5 numeric feature columns.

Public bounds, from the schema alone: bounds_X = (0, 1) and bounds_y = (0, 1) for every design
(all columns lie in [0, 1]); data_norm = sqrt(#one-hot blocks + #numeric columns) of the design
(each block has at most one 1): sqrt(13), sqrt(12) and sqrt(5).

For diffprivlib the run also prints, per design and ε, the eigenvalues of the noisy quadratic
form its functional mechanism minimises (the noisy centred Gram matrix, which diffprivlib keeps
in ``_obj_coefs[2]``; read here for diagnosis only) and the norm of its coefficients.
"""

import json
import math
import os
import sys
import time

import numpy as np
from sklearn.linear_model import LinearRegression

from skdp.datasets import adult_preprocessor, adult_schema, load_adult
from skdp.linear_model import DPLinearRegression

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # for _peers, however run
from _peers import run_peer  # noqa: E402

EPSILONS = [0.1, 1.0, 5.0]
SEEDS = range(5)
DELTA = 1e-5

# Run in diffprivlib's peer venv. For each design: test R², number of negative eigenvalues and the
# smallest eigenvalue of the noisy quadratic form, and ||coef||, per ε and seed.
DPL_SCRIPT = r"""
import json, sys, warnings
import numpy as np
from diffprivlib.models import LinearRegression
warnings.simplefilter("ignore")
d = np.load(sys.argv[1])
designs = json.loads(sys.argv[4])
out = {}
for name, cols in designs.items():
    Xtr, Xte = d["Xtr"][:, cols], d["Xte"][:, cols]
    out[name] = {}
    for eps in json.loads(sys.argv[2]):
        rows = []
        for seed in range(int(sys.argv[3])):
            reg = LinearRegression(epsilon=eps, bounds_X=(0, 1), bounds_y=(0, 1),
                                   random_state=seed).fit(Xtr, d["ytr"])
            eig = np.linalg.eigvalsh(reg._obj_coefs[2])
            rows.append(dict(r2=float(reg.score(Xte, d["yte"])), n_neg=int((eig < 0).sum()),
                             eig_min=float(eig[0]), coef_norm=float(np.linalg.norm(reg.coef_))))
        out[name][str(eps)] = rows
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
    names = list(pre.get_feature_names_out())[:-1]
    return Xtr[:, :-1], Xtr[:, -1], Xte[:, :-1], Xte[:, -1], names


def designs(feature_names):
    """Column indices and public data_norm of each design, from the schema and feature names.

    The preprocessor names a one-hot column "x<i>_<level>" and a numeric column "x<i>", where
    <i> is the attribute's position in adult_schema()["feature_names"].
    """
    schema = adult_schema()
    position = {name: f"x{i}" for i, name in enumerate(schema["feature_names"])}
    blocks = {}
    for attr, levels in schema["categorical"].items():
        blocks[attr] = [feature_names.index(f"{position[attr]}_{level}") for level in levels]
    numeric = {attr: feature_names.index(position[attr])
               for attr in schema["numeric_bounds"] if attr != "hours-per-week"}
    assert sorted(sum(blocks.values(), []) + list(numeric.values())) == list(range(104))
    reference = sorted([j for cols in blocks.values() for j in cols[1:]]
                       + [j for attr, j in numeric.items() if attr != "education-num"])
    n_blocks = len(blocks)
    return {
        "all 104": (list(range(104)), math.sqrt(n_blocks + len(numeric))),
        "reference coding": (reference, math.sqrt(n_blocks + len(numeric) - 1)),
        "numeric only": (sorted(numeric.values()), math.sqrt(len(numeric))),
    }


def smallest_centred_gram_eigenvalue(X):
    Xc = X - X.mean(axis=0)
    return np.linalg.eigvalsh(Xc.T @ Xc)[0]


def diffprivlib_runs(Xtr, ytr, Xte, yte, design_cols):
    out = run_peer(DPL_SCRIPT, dict(Xtr=Xtr, ytr=ytr, Xte=Xte, yte=yte),
                   json.dumps(EPSILONS), str(len(SEEDS)), json.dumps(design_cols))
    if out is None:
        return None
    return {name: {float(k): v for k, v in per_eps.items()} for name, per_eps in out.items()}


def skdp_r2(Xtr, ytr, Xte, yte, eps, params):
    r2 = []
    for seed in SEEDS:
        reg = DPLinearRegression(epsilon=eps, delta=DELTA, bounds_y=(0, 1),
                                 random_state=seed, **params)
        r2.append(reg.fit(Xtr, ytr).score(Xte, yte))
    return np.array(r2)


def main():
    Xtr, ytr, Xte, yte, names = adult_regression()
    design = designs(names)
    print(f"Adult: train {Xtr.shape}, test {Xte.shape}")
    t0 = time.perf_counter()
    dpl = diffprivlib_runs(Xtr, ytr, Xte, yte, {k: v[0] for k, v in design.items()})
    t_dpl = time.perf_counter() - t0
    t_skdp = 0.0

    # Table 1: the 104-column design, three ways of giving skdp its public bounds.
    Xtr_all, Xte_all = Xtr, Xte
    base = LinearRegression().fit(Xtr_all, ytr).score(Xte_all, yte)
    data_norm = design["all 104"][1]
    print(f"\nall 104 columns: data_norm = {data_norm:.4f}; "
          f"non-private sklearn LinearRegression: test R² = {base:.4f}")
    variants = {
        "box (0, 1) only": dict(bounds_X=(0, 1)),
        "box + data_norm": dict(bounds_X=(0, 1), data_norm=data_norm),
        "data_norm only": dict(data_norm=data_norm),
    }
    print("| epsilon | " + " | ".join(f"skdp {n}" for n in variants)
          + " | diffprivlib (pure ε) | skdp box + data_norm / sklearn | diffprivlib / sklearn |")
    print("|---" * (len(variants) + 4) + "|")
    for eps in EPSILONS + [math.inf]:
        cells, means = [], {}
        for name, params in variants.items():
            t0 = time.perf_counter()
            r2 = skdp_r2(Xtr_all, ytr, Xte_all, yte, eps, params)
            t_skdp += time.perf_counter() - t0
            means[name] = r2.mean()
            cells.append(f"{r2.mean():.4f} ± {r2.std():.4f}")
        if dpl and eps in dpl["all 104"]:
            r = np.array([row["r2"] for row in dpl["all 104"][eps]])
            d, d_ratio = f"{fmt(r.mean())} ± {fmt(r.std())}", fmt(r.mean() / base, 3)
        else:
            d, d_ratio = "n/a", ""
        print(f"| {eps} | " + " | ".join(cells)
              + f" | {d} | {means['box + data_norm'] / base:.3f} | {d_ratio} |")

    # Table 2: the three designs, skdp (box + data_norm) vs diffprivlib vs sklearn.
    print("\n| design (p, data_norm, sklearn R², min eig of centred XᵀX) | epsilon "
          "| skdp box + data_norm | diffprivlib | skdp / sklearn | diffprivlib / sklearn "
          "| diffprivlib: negative eigenvalues of its noisy quadratic form (of p), "
          "median [min, max] | diffprivlib: median smallest eigenvalue | "
          "diffprivlib: median ‖coef‖ |")
    print("|---" * 9 + "|")
    for name, (cols, norm) in design.items():
        Xa, Xb = Xtr[:, cols], Xte[:, cols]
        base_d = LinearRegression().fit(Xa, ytr).score(Xb, yte)
        label = (f"{name} ({len(cols)}, √{round(norm ** 2)}, {base_d:.4f}, "
                 f"{smallest_centred_gram_eigenvalue(Xa):.3g})")
        for eps in EPSILONS + [math.inf]:
            t0 = time.perf_counter()
            r2 = skdp_r2(Xa, ytr, Xb, yte, eps, dict(bounds_X=(0, 1), data_norm=norm))
            t_skdp += time.perf_counter() - t0
            cells = [f"{r2.mean():.4f} ± {r2.std():.4f}"]
            if dpl and eps in dpl[name]:
                rows = dpl[name][eps]
                r = np.array([row["r2"] for row in rows])
                n_neg = [row["n_neg"] for row in rows]
                cells += [f"{fmt(r.mean())} ± {fmt(r.std())}", f"{r2.mean() / base_d:.3f}",
                          fmt(r.mean() / base_d, 3),
                          f"{np.median(n_neg):g} [{min(n_neg)}, {max(n_neg)}]",
                          f"{np.median([row['eig_min'] for row in rows]):.3g}",
                          f"{np.median([row['coef_norm'] for row in rows]):.3g}"]
            else:
                cells += ["n/a", f"{r2.mean() / base_d:.3f}", "", "", "", ""]
            print(f"| {label} | {eps} | " + " | ".join(cells) + " |")
            label = ""
    print(f"(time for the skdp fits+scores: {t_skdp:.1f} s; diffprivlib subprocess "
          f"incl. start-up {t_dpl:.1f} s)")


if __name__ == "__main__":
    sys.exit(main())
