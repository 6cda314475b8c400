"""Accuracy with public bounds against bounds estimated privately (the estimators' default).

Two models on three tables, each fitted with ``bounds=`` public and with
``bounds=None`` (private bounds from a share of the fit's ε, skdp.stats._range):

- ``DPGaussianNB(epsilon=ε, classes=public)``;
- ``DPStandardScaler(epsilon=ε)`` then ``DPLogisticRegression(epsilon=ε,
  data_norm=√d, classes=public)`` (the public norm √d of a standardised row
  with d features; only the scaler's bounds differ between the two arms).

Tables: scikit-learn's breast cancer (569 × 30) and digits (1797 × 64), split
70/30 (stratified, seed 0), and Adult (skdp.datasets.load_adult, its
train/test split: 99 one-hot columns of the public categories and the 6 raw
numeric columns, 105 in all). The "public" bounds: digits (0, 16), the pixel
range; Adult the schema's (adult_schema: one-hot [0, 1], numeric columns
from the census coding); breast cancer has no documented range, so its
"public" arm uses the training split's own minimum and maximum, an oracle
that no private fit may use (it flatters the public arm).

Run: ``python benchmarks/bench_private_bounds.py [--seeds 5] [--share 0.5]``
(``--share`` overrides skdp.stats._range.BOUNDS_EPSILON_SHARE, to compare
shares). Prints mean ± std test accuracy over the seeds.

``--speed`` (issue 30) times instead the private bounds' histograms: scikit-learn's
``StandardScaler()`` against ``DPStandardScaler(bounds=(-12, 12))``, ``DPStandardScaler()``
(private bounds, half of ε = 1) and ``skdp.stats.bounds`` alone, at 10^6 x 50
(``--speed-shapes``; the Gaussian rows of bench_decomposition.py's ``--speed``), rounds
interleaved (benchmarks/_speed.py), with one thread and with ``--threads``::

    python benchmarks/bench_private_bounds.py --speed --threads 2
"""

import argparse
import math
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _threads  # noqa: E402

_threads.set_thread_variables()  # before numpy is imported

import numpy as np  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder  # noqa: E402

from skdp import stats  # noqa: E402
from skdp.datasets import adult_schema, load_adult  # noqa: E402
from skdp.linear_model import DPLogisticRegression  # noqa: E402
from skdp.naive_bayes import DPGaussianNB  # noqa: E402
from skdp.preprocessing import DPStandardScaler  # noqa: E402
from skdp.stats import _range  # noqa: E402


def tables():
    """(name, X_train, X_test, y_train, y_test, public bounds, classes) for each table."""
    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    yield "breast_cancer", Xtr, Xte, ytr, yte, (Xtr.min(0), Xtr.max(0)), [0, 1]
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    yield "digits", Xtr, Xte, ytr, yte, (0.0, 16.0), list(range(10))
    schema = adult_schema()
    cats, nums = list(schema["categorical"]), list(schema["numeric_bounds"])
    encode = ColumnTransformer([
        ("cat", OneHotEncoder(categories=[schema["categorical"][c] for c in cats],
                              handle_unknown="ignore", sparse_output=False), cats),
        ("num", "passthrough", nums)])
    Xa, ya = load_adult(return_X_y=True, as_frame=True)
    Xb, yb = load_adult(subset="test", return_X_y=True, as_frame=True)
    Xtr = encode.fit_transform(Xa).astype(float)  # public categories: nothing is learned
    Xte = encode.transform(Xb).astype(float)
    n_cat = Xtr.shape[1] - len(nums)
    lower = np.r_[np.zeros(n_cat), [schema["numeric_bounds"][c][0] for c in nums]]
    upper = np.r_[np.ones(n_cat), [schema["numeric_bounds"][c][1] for c in nums]]
    classes = sorted(set(np.asarray(ya)))
    yield "adult", Xtr, Xte, np.asarray(ya), np.asarray(yb), (lower, upper), classes


def model(kind, eps, bounds, classes, d, seed):
    if kind == "nb":
        return DPGaussianNB(epsilon=eps, bounds=bounds, classes=classes, random_state=seed)
    return make_pipeline(
        DPStandardScaler(epsilon=eps, bounds=bounds, random_state=seed),
        DPLogisticRegression(epsilon=eps, data_norm=math.sqrt(d), classes=classes,
                             random_state=seed))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--share", type=float, default=None)
    parser.add_argument("--epsilons", default="0.5,1,2,4")
    parser.add_argument("--speed", action="store_true",
                        help="time the private bounds against scikit-learn's StandardScaler")
    parser.add_argument("--speed-shapes", default="1000000x50")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1,
                        help="with --speed: also time with this many threads")
    args = parser.parse_args()
    if args.speed:
        return speed(args)
    if args.share is not None:
        _range.BOUNDS_EPSILON_SHARE = args.share
    epsilons = [float(e) for e in args.epsilons.split(",")]
    warnings.filterwarnings("ignore")
    start = time.time()
    print(f"share of epsilon on private bounds: {_range.BOUNDS_EPSILON_SHARE}, "
          f"{args.seeds} seeds")
    print("| table | model | ε | public bounds | private bounds |")
    print("|---|---|---|---|---|")
    for name, Xtr, Xte, ytr, yte, public, classes in tables():
        d = Xtr.shape[1]
        for kind in ("nb", "scaler+lr"):
            for eps in epsilons:
                cells = []
                for bounds in (public, None):
                    acc = [model(kind, eps, bounds, classes, d, s).fit(Xtr, ytr).score(Xte, yte)
                           for s in range(args.seeds)]
                    cells.append(f"{np.mean(acc):.3f} ± {np.std(acc):.3f}")
                print(f"| {name} | {kind} | {eps:g} | {cells[0]} | {cells[1]} |", flush=True)
    print(f"({time.time() - start:.0f} s)")



def speed(args):
    """Seconds of a fit with private bounds against scikit-learn's StandardScaler, side by side."""
    from sklearn.preprocessing import StandardScaler

    from _speed import speed_table

    def make(n, d):
        X = np.random.default_rng(0).standard_normal((n, d))
        X *= np.linspace(0.5, 3.0, d)
        return X, {
            "StandardScaler()": lambda: StandardScaler().fit(X),
            "DPStandardScaler(bounds)": lambda: DPStandardScaler(
                bounds=(-12.0, 12.0), random_state=0).fit(X),
            "DPStandardScaler()": lambda: DPStandardScaler(random_state=0).fit(X),
            "stats.bounds": lambda: stats.bounds(X, epsilon=0.5, random_state=0),
        }

    shapes = [tuple(int(v) for v in s.split("x")) for s in args.speed_shapes.split(",")]
    print(f"epsilon=1, delta=1e-5 (stats.bounds: epsilon=0.5); {_threads.describe()}")
    speed_table(shapes, make, "StandardScaler()", args.rounds, sorted({1, args.threads}))


if __name__ == "__main__":
    main()
