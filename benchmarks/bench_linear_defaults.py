"""DPLogisticRegression and DPLinearRegression with their defaults, on tables other than Adult.

Every table is mapped to [0, 1] by public bounds (never by its own min and max):

- breast_cancer (scikit-learn's bundled copy of UCI WDBC, 569 rows, 30 columns, binary): the
  Min and Max of each column as printed in the data set's documentation (its DESCR);
- digits (scikit-learn's bundled copy of UCI optdigits, 1,797 rows, 64 columns, 10 classes):
  pixel counts in 0..16, by the documentation;
- Adult (skdp.datasets.adult_preprocessor, 105 columns, binary): the public schema;
- diabetes (scikit-learn's bundled copy, 442 rows, 10 columns, regression): each column is
  documented to be scaled to a sum of squares of 1, so it lies in [-1, 1]; the target is taken
  to lie in [0, 400] (its documented meaning, a disease-progression score; a stated public bound);
- Adult hours-per-week (the last column of the same preprocessing, in [0, 1]) from the other 104.

For each table and ε, the mean test score over repeated stratified 70/30 splits (Adult: its own
test file) and seeds, next to scikit-learn's LogisticRegression / LinearRegression on the same
arrays, and the majority class (or the mean predictor, R² ≤ 0). The estimators are run as a user
would: ``DPLogisticRegression(epsilon=ε)`` ("default": no bounds, no data_norm),
``DPLogisticRegression(epsilon=ε, bounds_X=(0, 1))`` ("box"), and
``DPLinearRegression(epsilon=ε, bounds_X=(0, 1) or (-1, 1), bounds_y=...)``; ``classes`` is
always given (public).

Usage (from the repository root; about 10 minutes on 2 cores):

    python benchmarks/bench_linear_defaults.py [--seeds 3] [--splits 5]

A configuration the installed skdp does not accept (an unknown parameter) prints "n/a".
"""

import argparse
import math
import re
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit

from skdp.datasets import adult_preprocessor, load_adult
from skdp.linear_model import DPLinearRegression, DPLogisticRegression

DELTA = 1e-5


def breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    # The "Min Max" table of the documentation: one line per column, in column order.
    rows = re.findall(r"^[a-z ()]+:\s+([\d.]+)\s+([\d.]+)\s*$", load_breast_cancer().DESCR, re.M)
    lower, upper = np.array(rows, dtype=float).T
    assert lower.size == X.shape[1]
    return (X - lower) / (upper - lower), y


def digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


def adult():
    pre = adult_preprocessor()
    Xtr, ytr = load_adult(return_X_y=True)
    Xte, yte = load_adult(subset="test", return_X_y=True)
    return pre.fit_transform(Xtr), np.asarray(ytr), pre.transform(Xte), np.asarray(yte)


def splits(X, y, n_splits, stratify=True):
    cls = StratifiedShuffleSplit if stratify else ShuffleSplit
    cv = cls(n_splits=n_splits, test_size=0.3, random_state=0)
    return [(X[a], y[a], X[b], y[b]) for a, b in cv.split(X, y)]


def score(make, parts, seeds):
    """Mean test score over splits and seeds; None if this skdp does not take the parameters."""
    out = []
    for Xtr, ytr, Xte, yte in parts:
        for seed in range(seeds):
            try:
                model = make(seed)
            except TypeError:
                return None
            try:
                out.append(model.fit(Xtr, ytr).score(Xte, yte))
            except TypeError:  # an unknown parameter is only found at fit (set_params)
                return None
    return float(np.mean(out))


def fmt(v):
    if v is None:
        return "n/a"
    return f"{v:.3f}" if abs(v) < 100 else f"{v:.3g}"


def classification(name, parts, epsilons, configs, seeds):
    classes = np.unique(np.concatenate([p[1] for p in parts]))
    majority = np.mean([max(np.mean(p[3] == c) for c in classes) for p in parts])
    sk = np.mean([LogisticRegression(max_iter=10_000).fit(a, b).score(c, d) for a, b, c, d in parts])
    n = len(parts[0][1])
    print(f"\n{name}: n_train = {n}, majority class {majority:.3f}, sklearn LogisticRegression {sk:.3f}")
    print("| config | " + " | ".join(f"ε={e:g} (ε·n={e * n:.0f})" if e < math.inf else "ε=inf"
                                     for e in epsilons) + " |")
    print("|---|" + "---|" * len(epsilons))
    for label, kw in configs:
        cells = []
        for eps in epsilons:
            def make(seed, eps=eps, kw=kw):
                return DPLogisticRegression(epsilon=eps, delta=DELTA, classes=classes,
                                            random_state=seed, **kw)
            cells.append(fmt(score(make, parts, seeds if eps < math.inf else 1)))
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


def regression(name, parts, epsilons, configs, seeds):
    sk = np.mean([LinearRegression().fit(a, b).score(c, d) for a, b, c, d in parts])
    n = len(parts[0][1])
    print(f"\n{name}: n_train = {n}, sklearn LinearRegression R² {sk:.3f} (mean predictor ≤ 0)")
    print("| config | " + " | ".join(f"ε={e:g}" for e in epsilons) + " |")
    print("|---|" + "---|" * len(epsilons))
    for label, kw in configs:
        cells = []
        for eps in epsilons:
            def make(seed, eps=eps, kw=kw):
                return DPLinearRegression(epsilon=eps, delta=DELTA, random_state=seed, **kw)
            cells.append(fmt(score(make, parts, seeds if eps < math.inf else 1)))
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--splits", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # convergence and PrivacyLeakWarning noise of the peers
    t0 = time.perf_counter()
    logistic_configs = [("default", {}), ("box (0, 1)", {"bounds_X": (0, 1)}),
                        ("data_norm=1.0", {"data_norm": 1.0})]

    X, y = breast_cancer()
    classification("breast_cancer", splits(X, y, args.splits), [1.0, 3.5, 5.0, 10.0, 30.0, math.inf],
                   logistic_configs, args.seeds)
    X, y = digits()
    classification("digits (10 classes)", splits(X, y, args.splits), [0.5, 1.6, 5.0, 20.0, math.inf],
                   logistic_configs, args.seeds)
    Xtr, ytr, Xte, yte = adult()
    sub = np.random.default_rng(0).choice(len(ytr), 5000, replace=False)
    classification("Adult, 5,000 training rows", [(Xtr[sub], ytr[sub], Xte, yte)],
                   [0.1, 0.4, 2.0, math.inf],
                   logistic_configs + [("data_norm=√14 (public)", {"data_norm": math.sqrt(14)})],
                   args.seeds)

    X, y = load_diabetes(return_X_y=True)
    regression("diabetes", splits(X, y, args.splits, stratify=False), [1.0, 5.0, 20.0, math.inf],
               [("box (-1, 1)", {"bounds_X": (-1, 1), "bounds_y": (0, 400)})], args.seeds)
    hours = [(Xtr[:, :-1], Xtr[:, -1], Xte[:, :-1], Xte[:, -1])]
    regression("Adult hours-per-week from 104 columns", hours, [0.1, 1.0, 5.0, math.inf],
               [("box (0, 1)", {"bounds_X": (0, 1), "bounds_y": (0, 1)}),
                ("box and data_norm=√13", {"bounds_X": (0, 1), "data_norm": math.sqrt(13),
                                           "bounds_y": (0, 1)})], args.seeds)
    print(f"\n[{time.perf_counter() - t0:.0f} s]")


if __name__ == "__main__":
    sys.exit(main())
