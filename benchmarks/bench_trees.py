"""Trees and boosting, side by side: skdp's DPHistGradientBoosting* against its peers.

One run fits, on each table of the benchmark suite (benchmarks/_suite_data.py: the public
schema maps every feature to [0, 1], so ``bounds=(0, 1)`` is public; regression targets have
their documented ``bounds_y``):

- scikit-learn's ``HistGradientBoosting*(max_iter=100, early_stopping=False)``, non-private
  (the reference, and the fit time the issue compares to);
- skdp's ``DPHistGradientBoostingClassifier`` / ``Regressor`` with its defaults,
  ``bounds=(0, 1)`` (and ``bounds_y``), δ = 1e-5;
- on tables with categorical columns, also ``DPHistGradientBoosting*`` with
  ``categorical_features``: the categorical columns as pandas ``Categorical`` columns whose
  categories are the public schema's (Adult: ``adult.names``, :func:`skdp.datasets.adult_schema`;
  the others: benchmarks/_suite_data.py), the numeric ones scaled as in the one-hot table;
  ``max_bins=64`` on Adult (native-country has 41 categories, and a categorical feature has at
  most ``max_bins``, as in scikit-learn), the default 32 elsewhere;
- skdp's ``DPRandomForestClassifier`` and ``DPDecisionTreeClassifier`` with their defaults and
  ``bounds=(0, 1)`` (classification), and on tables with categorical columns also with
  ``categorical_features`` (the same table and ``max_bins`` as the boosting's);
- skdp's ``DPLogisticRegression(data_norm=row_norm)`` / ``DPLinearRegression(bounds_X=(0, 1),
  bounds_y=...)``, their documented settings in the suite;
- interpret's ``DPExplainableBoostingClassifier`` / ``Regressor`` (DP-EBM, Nori et al. 2021)
  with ``privacy_bounds`` (0, 1) per feature (and ``privacy_target_min/max``), δ = 1e-5,
  ``n_jobs=1``;
- diffprivlib's ``RandomForestClassifier(bounds=(0, 1), classes=...)`` (classification), in
  its own venv, found as the suite finds it (benchmarks/_peers.py: ``$SKDP_BENCH_PEERS_DIR``,
  created by ``python benchmarks/setup_peers.py``).

Accuracy (classification) or R² (regression) on the table's fixed test part, mean ± std over
seeds, and the mean fit time in seconds. Every contender runs with the same number of threads,
``--threads`` (default 1): the script sets ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and
``MKL_NUM_THREADS`` before it imports numpy (diffprivlib's subprocess inherits them) and fits
inside ``threadpoolctl.threadpool_limits(threads)``, which also holds scikit-learn's
HistGradientBoosting (OpenMP); DP-EBM runs with ``n_jobs=1`` (benchmarks/_threads.py). It
prints the setting it used. Run::

    python benchmarks/bench_trees.py                 # Adult, 5 seeds, one thread
    python benchmarks/bench_trees.py --tables all --seeds 3 --eps 1
    python benchmarks/bench_trees.py --only RandomForest   # the forests' rows alone

``--dense 200000x50,1000000x50`` times the boosting at scale instead: dense synthetic data (n × d
uniform floats in [0, 1), public ``bounds=(0, 1)``, a binary label from the first 5 features
and noise), skdp's ``DPHistGradientBoostingClassifier`` (its defaults: 20 trees of depth 2,
32 bins; ε = 1) against scikit-learn's ``HistGradientBoostingClassifier(max_iter=20,
max_depth=2, max_bins=32, learning_rate=0.5, early_stopping=False)``, and skdp with its sparse
histograms forced (``--sparse``; the layout that every dense table used before). Each fit runs in
a fresh process (``--threads``, default 1, threadpoolctl limits; scikit-learn's OpenMP uses them,
skdp's boosting runs in one), in interleaved rounds (A, B, A, B, ...; ``--rounds``), which
prints its fit time, its CPU time (``time.process_time``, all its threads: less moved than the
wall time by other work on a loaded machine) and its peak extra memory: the process's peak
resident set (``ru_maxrss``) during the fit less its resident set before it, data loaded and a
small fit done (imports). Medians over rounds; ratios to scikit-learn's median::

    nice -n 10 python benchmarks/bench_trees.py --dense 200000x50,1000000x50 --rounds 3 --sparse

``--forest adult,1000000x20`` times the forests at equal trees and depth instead: skdp's
``DPRandomForestClassifier`` against diffprivlib's ``RandomForestClassifier`` (its venv, as
above), both with ``n_estimators`` and ``max_depth`` of diffprivlib's defaults (10 and 5;
``--trees``, ``--depth``), ε = 1, ``bounds=(0, 1)``, the public classes, ``n_jobs`` = the
threads, on Adult or on dense synthetic data of the given shape (as ``--dense``'s). Each fit
runs in a fresh process of its venv (a small fit first, for the imports), the two in
interleaved rounds (seed = round); the fit alone is timed (wall and CPU time), accuracy on
the test rows. ``--skdp-from`` times skdp from the given source trees instead of the installed
one (``git worktree``\ s of two commits, each a contender in the same rounds), to time a change
before and after::

    SKDP_BENCH_PEERS_DIR=/path/to/peer/venvs nice -n 10 python benchmarks/bench_trees.py \
        --forest adult,1000000x20 --rounds 5 --threads 1
    git worktree add /tmp/before <commit>
    git worktree add /tmp/after <commit>
    python benchmarks/bench_trees.py --forest adult --skdp-from /tmp/before,/tmp/after

``--layouts`` times the two histogram layouts of skdp.tree._histogram (the sparse pairs and
the dense uint8 columns) on 2·10^5 × 50 binned entries of which a given fraction lies outside
the common bin: building the layout and the histograms of 3 trees of 2 levels, interleaved
rounds, medians; the rule of ``make_bins`` (``SPARSE_DENSITY``) comes from it.
"""

import argparse
import dataclasses
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _threads  # noqa: E402

_threads.set_thread_variables()  # before numpy is imported

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import _suite_data  # noqa: E402
import _suite_peers as peers  # noqa: E402

DELTA = 1e-5


def _timed(make, task, score):
    t = time.perf_counter()
    est = make().fit(task.X_train, task.y_train)
    seconds = time.perf_counter() - t
    return score(est), seconds


def _score(task):
    from sklearn.metrics import r2_score

    if task.kind == "classification":
        return lambda est: float(np.mean(est.predict(task.X_test) == task.y_test))
    return lambda est: float(r2_score(task.y_test, est.predict(task.X_test)))


def _makers(task, eps, seed):
    """(name, constructor) of every in-process model at ``eps``."""
    from skdp.ensemble import (
        DPHistGradientBoostingClassifier,
        DPHistGradientBoostingRegressor,
        DPRandomForestClassifier,
    )
    from skdp.linear_model import DPLinearRegression, DPLogisticRegression
    from skdp.tree import DPDecisionTreeClassifier

    d = task.X_train.shape[1]
    makers = []
    if task.kind == "classification":
        makers.append(("skdp DPHistGradientBoostingClassifier", lambda:
                       DPHistGradientBoostingClassifier(epsilon=eps, delta=DELTA, bounds=(0, 1),
                                                        classes=task.classes,
                                                        random_state=seed)))
        makers.append(("skdp DPRandomForestClassifier", lambda: DPRandomForestClassifier(
            epsilon=eps, delta=DELTA, bounds=(0, 1), classes=task.classes, random_state=seed)))
        makers.append(("skdp DPDecisionTreeClassifier", lambda: DPDecisionTreeClassifier(
            epsilon=eps, delta=DELTA, bounds=(0, 1), classes=task.classes, random_state=seed)))
        makers.append(("skdp DPLogisticRegression", lambda: DPLogisticRegression(
            epsilon=eps, delta=DELTA, data_norm=task.row_norm, classes=task.classes,
            random_state=seed)))
    else:
        makers.append(("skdp DPHistGradientBoostingRegressor", lambda:
                       DPHistGradientBoostingRegressor(epsilon=eps, delta=DELTA, bounds=(0, 1),
                                                       bounds_y=task.bounds_y,
                                                       random_state=seed)))
        makers.append(("skdp DPLinearRegression", lambda: DPLinearRegression(
            epsilon=eps, delta=DELTA, bounds_X=(0, 1), bounds_y=task.bounds_y, random_state=seed)))
    try:
        from interpret.privacy import (
            DPExplainableBoostingClassifier,
            DPExplainableBoostingRegressor,
        )
    except ImportError:
        print("NOTE: interpret is not installed (pip install interpret-core); DP-EBM skipped.")
    else:
        bounds = np.array([[0.0, 1.0]] * d)
        if task.kind == "classification":
            makers.append(("interpret DP-EBM", lambda: DPExplainableBoostingClassifier(
                epsilon=eps, delta=DELTA, privacy_bounds=bounds, n_jobs=1, random_state=seed)))
        else:
            lo, hi = task.bounds_y
            makers.append(("interpret DP-EBM", lambda: DPExplainableBoostingRegressor(
                epsilon=eps, delta=DELTA, privacy_bounds=bounds, privacy_target_min=lo,
                privacy_target_max=hi, n_jobs=1, random_state=seed)))
    return makers


def _adult_categorical_task(task):
    """Adult with its categorical columns as pandas Categoricals of the public categories."""
    import pandas as pd

    from skdp.datasets import adult_preprocessor, adult_schema, load_adult

    schema = adult_schema()
    numeric = list(schema["numeric_bounds"])
    pre = adult_preprocessor()  # learns nothing: its numeric part scales by the public bounds
    frames = []
    for subset in ("train", "test"):
        X = load_adult(subset=subset, as_frame=True, return_X_y=True)[0]
        frame = pd.DataFrame(pre.fit_transform(X)[:, -len(numeric):], columns=numeric)
        for name, categories in schema["categorical"].items():
            frame[name] = pd.Categorical(X[name].astype(object), categories=categories)
        frames.append(frame)
    return dataclasses.replace(task, X_train=frames[0], X_test=frames[1])


def _categorical_task(name, task):
    """The table with its categorical columns as pandas Categoricals of the schema's categories.

    The suite's loader runs again with its one-hot encoding replaced: numeric columns are
    scaled by the suite's own rule, each categorical column becomes a ``Categorical`` of its
    documented categories (an unlisted value is missing, as the one-hot all-zero block). The
    split is the suite's (same seed, same rows). None for a table without categorical columns.
    """
    import pandas as pd

    if name == "adult":
        return _adult_categorical_task(task)
    original = _suite_data._encode
    found = []

    def encode(frame, schema):
        numeric = [col for col in schema if col[0] == "num"]
        X, norm = original(frame, numeric)
        out = pd.DataFrame(X, columns=[col[1] for col in numeric], index=frame.index)
        for col in schema:
            if col[0] == "cat":
                found.append(col[1])
                out[col[1]] = pd.Categorical(frame[col[1]].astype(object), categories=col[2])
        return out, norm

    _suite_data._encode = encode
    try:
        cat_task = _suite_data.LOADERS[name]()
    finally:
        _suite_data._encode = original
    return cat_task if found else None


def _categorical_makers(task, eps, seed):
    from skdp.ensemble import (
        DPHistGradientBoostingClassifier,
        DPHistGradientBoostingRegressor,
        DPRandomForestClassifier,
    )
    from skdp.tree import DPDecisionTreeClassifier

    n_categories = max(len(t.categories) for t in task.X_train.dtypes
                       if getattr(t, "name", "") == "category")
    max_bins = 64 if n_categories > 32 else 32  # at most max_bins categories, as scikit-learn
    label = f"skdp DPHistGradientBoosting*, categorical_features (max_bins={max_bins})"
    if task.kind == "classification":
        kw = dict(epsilon=eps, delta=DELTA, bounds=(0, 1), classes=task.classes,
                  max_bins=max_bins, random_state=seed)
        return [(label, lambda: DPHistGradientBoostingClassifier(**kw)),
                ("skdp DPRandomForestClassifier, categorical_features",
                 lambda: DPRandomForestClassifier(**kw)),
                ("skdp DPDecisionTreeClassifier, categorical_features",
                 lambda: DPDecisionTreeClassifier(**kw))]
    return [(label, lambda: DPHistGradientBoostingRegressor(
        epsilon=eps, delta=DELTA, bounds=(0, 1), bounds_y=task.bounds_y, max_bins=max_bins,
        random_state=seed))]


def _reference(task):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    cls = (HistGradientBoostingClassifier if task.kind == "classification"
           else HistGradientBoostingRegressor)
    return _timed(lambda: cls(max_iter=100, early_stopping=False, random_state=0), task,
                  _score(task))


def _dpl_forest(task, eps_list, seeds, python):
    if task.kind != "classification" or python is None:
        return {}
    jobs = [dict(key="forest", eps=e, seed=s, model="RandomForestClassifier",
                 kwargs=dict(bounds=[0.0, 1.0], classes=list(task.classes)))
            for e in eps_list for s in seeds]
    results = peers.run_jobs(peers.DPL_SCRIPT, python, task, jobs)
    cells = {}
    for job, res in zip(jobs, results):
        cells.setdefault(job["eps"], []).append(res)
    return cells


def _fmt(scores, seconds):
    if not scores:
        return "error"
    return f"{np.mean(scores):.3f} ± {np.std(scores):.3f} ({np.mean(seconds):.2f} s)"


def run_table(name, eps_list, seeds, dpl_python, only=None):
    """One table's rows; ``only``: just the contenders whose label holds this text."""
    task = _suite_data.LOADERS[name]()
    ref, ref_s = _reference(task)
    metric = "accuracy" if task.kind == "classification" else "R²"
    print(f"\n### {name} ({task.n_train} training rows, {task.X_train.shape[1]} features, "
          f"{metric})\n")
    print(f"scikit-learn HistGradientBoosting (max_iter=100, non-private): {ref:.3f} "
          f"({ref_s:.2f} s)\n")
    rows = {}
    cat_task = _categorical_task(name, task)
    for eps in eps_list:
        for seed in seeds:
            makers = [(label, make, task) for label, make in _makers(task, eps, seed)]
            if cat_task is not None:
                makers[1:1] = [(label, make, cat_task)
                               for label, make in _categorical_makers(cat_task, eps, seed)]
            if only is not None:
                makers = [m for m in makers if only in m[0]]
            for label, make, data in makers:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        value, seconds = _timed(make, data, _score(data))
                    except Exception as exc:  # noqa: BLE001 - report and go on
                        print(f"NOTE: {label} at eps={eps} failed: {type(exc).__name__}: {exc}")
                        continue
                rows.setdefault(label, {}).setdefault(eps, ([], []))
                rows[label][eps][0].append(value)
                rows[label][eps][1].append(seconds)
    if only is not None and only not in "diffprivlib RandomForestClassifier":
        dpl_python = None
    for eps, results in _dpl_forest(task, eps_list, seeds, dpl_python).items():
        ok = [r for r in results if "score" in r]
        for r in results:
            if "error" in r:
                print(f"NOTE: diffprivlib RandomForestClassifier at eps={eps}: {r['error']}")
        rows.setdefault("diffprivlib RandomForestClassifier", {})[eps] = (
            [r["score"] for r in ok], [r["seconds"] for r in ok])
    header = "| model | " + " | ".join(f"ε = {e:g}" for e in eps_list) + " |"
    print(header)
    print("|" + " --- |" * (len(eps_list) + 1))
    for label, cells in rows.items():
        print(f"| {label} | " + " | ".join(_fmt(*cells.get(e, ([], []))) for e in eps_list) + " |")
    sys.stdout.flush()


DENSE_MODELS = ("scikit-learn", "skdp", "skdp sparse")


def _dense_data(n, d, seed=0):
    """n × d uniform floats (made in place: no temporary as large as X) and a binary label."""
    rng = np.random.default_rng(seed)
    X = np.empty((n, d))
    rng.random(out=X)
    logit = X[:, :5] @ np.array([3.0, -2.0, 2.0, -1.0, 1.0]) - 1.5
    y = (logit + rng.logistic(size=n) > 0).astype(np.int64)
    return X, y


def _dense_model(model, seed=0):
    if model == "scikit-learn":
        from sklearn.ensemble import HistGradientBoostingClassifier
        return HistGradientBoostingClassifier(max_iter=20, max_depth=2, max_bins=32,
                                              learning_rate=0.5, early_stopping=False,
                                              random_state=seed)
    from skdp.ensemble import DPHistGradientBoostingClassifier
    if model == "skdp sparse":
        from skdp.tree import _histogram
        _histogram.SPARSE_DENSITY = 1.0  # every table takes the sparse layout
    return DPHistGradientBoostingClassifier(epsilon=1.0, delta=DELTA, bounds=(0, 1),
                                            classes=[0, 1], random_state=seed)


def _resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _dense_one(model, n, d, threads=1):
    """One fit in this process: prints a JSON line (seconds, peak extra bytes, accuracy)."""
    import gc
    import json
    import resource

    X, y = _dense_data(n, d)
    X_test, y_test = _dense_data(20_000, d, seed=1)
    with threadpool_limits(limits=threads):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _dense_model(model).fit(X[:2000], y[:2000])  # imports, lazy loads
            gc.collect()
            before = _resident_bytes()
            t, cpu = time.perf_counter(), time.process_time()
            est = _dense_model(model).fit(X, y)
            seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux
    print(json.dumps(dict(seconds=seconds, cpu=cpu, extra=peak - before, data=X.nbytes,
                          accuracy=float(np.mean(est.predict(X_test) == y_test)))))


def run_dense(shapes, rounds, models, threads=1):
    """Interleaved rounds of one fit per process; medians and ratios to scikit-learn."""
    import json
    import subprocess

    for n, d in shapes:
        results = {m: [] for m in models}
        for r in range(rounds):
            for m in models:
                out = subprocess.run([sys.executable, os.path.abspath(__file__), "--dense-one",
                                      m, str(n), str(d), str(threads)], check=True,
                                     capture_output=True, text=True).stdout
                res = json.loads(out.strip().splitlines()[-1])
                results[m].append(res)
                print(f"  round {r + 1}, {n}x{d}, {m}: {res['seconds']:.2f} s, CPU "
                      f"{res['cpu']:.2f} s, {res['extra'] / 2**20:.0f} MB "
                      f"(load {os.getloadavg()[0]:.2f})", flush=True)
        data = results[models[0]][0]["data"]
        ref = np.median([r["seconds"] for r in results["scikit-learn"]])
        ref_cpu = np.median([r["cpu"] for r in results["scikit-learn"]])
        print(f"\n### {n:,} x {d} (data {data / 2**20:.0f} MB), {rounds} rounds\n")
        print("| fit | time, median (range) | / scikit-learn | CPU time, median | / scikit-learn "
              "| peak extra memory, median | / data | accuracy |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for m in models:
            s = [r["seconds"] for r in results[m]]
            c = np.median([r["cpu"] for r in results[m]])
            e = np.median([r["extra"] for r in results[m]])
            print(f"| {m} | {np.median(s):.2f} s ({min(s):.2f}–{max(s):.2f}) | "
                  f"{np.median(s) / ref:.2f}× | {c:.2f} s | {c / ref_cpu:.2f}× | "
                  f"{e / 2**20:.0f} MB | {e / data:.2f}× | {results[m][0]['accuracy']:.3f} |")
        sys.stdout.flush()


FOREST_SCRIPT = r"""
import json, sys, time, warnings
import numpy as np
from threadpoolctl import threadpool_limits
warnings.simplefilter("ignore")
data = np.load(sys.argv[1])
library, trees, depth, seed, threads = sys.argv[2], *map(int, sys.argv[3:7])
if library == "skdp":
    from skdp.ensemble import DPRandomForestClassifier as Forest
else:
    from diffprivlib.models import RandomForestClassifier as Forest
classes = np.unique(data["ytr"])


def make():
    return Forest(n_estimators=trees, max_depth=depth, epsilon=1.0, bounds=(0.0, 1.0),
                  classes=list(classes), random_state=seed, n_jobs=threads)


with threadpool_limits(limits=threads):
    make().fit(data["Xtr"][:2000], data["ytr"][:2000])  # imports, lazy loads
    t, cpu = time.perf_counter(), time.process_time()
    forest = make().fit(data["Xtr"], data["ytr"])
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    accuracy = float(np.mean(forest.predict(data["Xte"]) == data["yte"]))
print(json.dumps(dict(seconds=seconds, cpu=cpu, accuracy=accuracy)))
"""


def _forest_data(name):
    if name == "adult":
        task = _suite_data.LOADERS["adult"]()
        return "Adult", task.X_train, task.y_train, task.X_test, task.y_test
    n, d = (int(v) for v in name.split("x"))
    X, y = _dense_data(n, d)
    X_test, y_test = _dense_data(20_000, d, seed=1)
    return f"{n:,} x {d} (dense, synthetic)", X, y, X_test, y_test


def _source_label(tree):
    """'skdp at <short commit>' of a git work tree (the commit it has checked out)."""
    import subprocess

    commit = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    return f"skdp DPRandomForestClassifier at {commit}"


def run_forest(names, rounds, trees, depth, threads, dpl_python, sources=()):
    """skdp's forest against diffprivlib's, one fit per process, interleaved rounds.

    ``sources``: source trees of skdp (git work trees) timed instead of the installed skdp,
    each a contender of its own in the same rounds: this venv's Python with ``PYTHONPATH``
    set to the tree (and the temporary folder as the working directory, so that ``-c``
    finds no other skdp first).
    """
    import json
    import subprocess
    import tempfile

    contenders = {} if sources else {"skdp DPRandomForestClassifier": (sys.executable, None)}
    for tree in sources:
        contenders[_source_label(tree)] = (sys.executable, os.path.abspath(tree))
    if dpl_python is not None:
        contenders["diffprivlib RandomForestClassifier"] = (dpl_python, None)
    for name in names:
        title, X, y, X_test, y_test = _forest_data(name)
        results = {c: [] for c in contenders}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "arrays.npz")
            np.savez(path, Xtr=X, ytr=y, Xte=X_test, yte=y_test)
            for r in range(rounds):
                for label, (python, tree) in contenders.items():
                    library = "skdp" if label.startswith("skdp") else "diffprivlib"
                    env = dict(os.environ)
                    if tree is not None:
                        env["PYTHONPATH"] = tree
                    out = subprocess.run([python, "-c", FOREST_SCRIPT, path, library, str(trees),
                                          str(depth), str(r), str(threads)], check=True,
                                         capture_output=True, text=True, env=env,
                                         cwd=tmp).stdout  # not the caller's skdp in '.'
                    res = json.loads(out.strip().splitlines()[-1])
                    results[label].append(res)
                    print(f"  round {r + 1}, {name}, {label}: {res['seconds']:.3f} s, CPU "
                          f"{res['cpu']:.3f} s (load {os.getloadavg()[0]:.2f})", flush=True)
        last = results[list(contenders)[-1]]
        ref = np.median([res["seconds"] for res in last])
        ref_cpu = np.median([res["cpu"] for res in last])
        print(f"\n### {title}: {X.shape[0]:,} rows, {X.shape[1]} features; {trees} trees of "
              f"depth {depth}, {threads} thread(s), {rounds} rounds\n")
        print("| forest | fit time, median (range) | / last | CPU time, median | / last "
              "| accuracy, mean ± std |")
        print("| --- | --- | --- | --- | --- | --- |")
        for label in contenders:
            s = [res["seconds"] for res in results[label]]
            c = np.median([res["cpu"] for res in results[label]])
            acc = [res["accuracy"] for res in results[label]]
            print(f"| {label} | {np.median(s):.3f} s ({min(s):.3f}–{max(s):.3f}) | "
                  f"{np.median(s) / ref:.2f}× | {c:.3f} s | {c / ref_cpu:.2f}× | "
                  f"{np.mean(acc):.3f} ± {np.std(acc):.3f} |")
        sys.stdout.flush()


def run_layouts(n=200_000, d=50, n_bins=33, rounds=5):
    """The two histogram layouts by density: time of building one and 3 trees of 2 levels."""
    from skdp.tree._histogram import DenseBins, SparseBins

    rng = np.random.default_rng(0)
    nodes = [np.zeros(n, dtype=np.int64), rng.integers(0, 2, n)]
    w = rng.standard_normal(n)
    print(f"\n### Histogram layouts, {n:,} x {d}, {n_bins} bins, {rounds} rounds\n")
    print("| outside the common bin | sparse | dense | sparse pairs | dense columns |")
    print("| --- | --- | --- | --- | --- |")
    for density in (1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2):
        binned = np.where(rng.random((n, d)) < density, rng.integers(1, n_bins - 1, (n, d)),
                          0).astype(np.uint8)
        columns = np.asfortranarray(binned)  # as apply_bins gives it
        seconds = {"sparse": [], "dense": []}
        for _ in range(rounds):
            for layout in seconds:
                t = time.perf_counter()
                bins = SparseBins(binned, n_bins) if layout == "sparse" else DenseBins(columns,
                                                                                       n_bins)
                for _ in range(3):
                    for level, node in enumerate(nodes):
                        bins.histograms(node, 2**level, w)
                seconds[layout].append(time.perf_counter() - t)
                if layout == "sparse":
                    pairs = bins.rows.nbytes + bins.offset.nbytes
        print(f"| {density:.4f} | {np.median(seconds['sparse']) * 1e3:.0f} ms | "
              f"{np.median(seconds['dense']) * 1e3:.0f} ms | {pairs / 2**20:.1f} MB | "
              f"{columns.nbytes / 2**20:.1f} MB |")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--dense-one":
        return _dense_one(argv[1], int(argv[2]), int(argv[3]), int(argv[4]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="adult",
                        help="comma-separated names of benchmarks/_suite_data.py, or 'all'")
    parser.add_argument("--eps", default="0.1,1,5", help="comma-separated epsilons")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--no-peers", action="store_true", help="skip diffprivlib's venv")
    parser.add_argument("--only", default=None,
                        help="tables: only the contenders whose label contains this text "
                             "(e.g. RandomForest; scikit-learn's reference is always fitted)")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads of every contender (default 1)")
    parser.add_argument("--dense", default=None,
                        help="comma-separated n x d shapes, e.g. 200000x50: the boosting at "
                             "scale against scikit-learn (--threads) instead of the tables")
    parser.add_argument("--rounds", type=int, default=3, help="--dense: interleaved rounds")
    parser.add_argument("--sparse", action="store_true",
                        help="--dense: also skdp with its sparse histograms forced")
    parser.add_argument("--forest", default=None,
                        help="comma-separated 'adult' or n x d shapes: skdp's forest against "
                             "diffprivlib's at equal trees and depth instead of the tables")
    parser.add_argument("--trees", type=int, default=10, help="--forest: trees (default 10)")
    parser.add_argument("--depth", type=int, default=5, help="--forest: depth (default 5)")
    parser.add_argument("--skdp-from", default=None,
                        help="--forest: comma-separated skdp source trees (git work trees of "
                             "commits) timed instead of the installed skdp, in the same rounds")
    parser.add_argument("--layouts", action="store_true",
                        help="time the sparse and dense histogram layouts by density instead")
    args = parser.parse_args(argv)
    _threads.set_thread_variables(args.threads)  # the peers' subprocesses inherit them
    if args.layouts:
        with threadpool_limits(limits=args.threads):
            run_layouts()
        return
    if args.forest:
        dpl = None if args.no_peers else peers.first_existing(peers.DPL_CANDIDATES)
        if dpl is None and not args.no_peers:
            print("NOTE: no diffprivlib venv found; its forest is skipped.")
        print(f"{args.threads} thread(s) and n_jobs, one fit per process "
              f"({_threads.describe()}), load average at start {os.getloadavg()[0]:.2f}")
        sources = args.skdp_from.split(",") if args.skdp_from else ()
        run_forest(args.forest.split(","), args.rounds, args.trees, args.depth, args.threads,
                   dpl, sources)
        print(f"load average at end {os.getloadavg()[0]:.2f}")
        return
    if args.dense:
        shapes = [tuple(int(v) for v in shape.split("x")) for shape in args.dense.split(",")]
        models = DENSE_MODELS if args.sparse else DENSE_MODELS[:2]
        print(f"{args.threads} thread(s), one fit per process ({_threads.describe()}), load "
              f"average at start {os.getloadavg()[0]:.2f}")
        run_dense(shapes, args.rounds, models, args.threads)
        print(f"load average at end {os.getloadavg()[0]:.2f}")
        return
    import sklearn.ensemble  # noqa: F401 - loads the OpenMP runtime, so describe() lists it
    names = list(_suite_data.LOADERS) if args.tables == "all" else args.tables.split(",")
    eps_list = [float(e) for e in args.eps.split(",")]
    seeds = list(range(args.seeds))
    dpl = None if args.no_peers else peers.first_existing(peers.DPL_CANDIDATES)
    if dpl is None and not args.no_peers:
        print("NOTE: no diffprivlib venv found; its forest is skipped.")
    with threadpool_limits(limits=args.threads):
        print(f"δ = {DELTA:g}, seeds {seeds}, threads = {args.threads} for every contender "
              f"({_threads.describe()}; DP-EBM n_jobs=1), "
              f"load average at start {os.getloadavg()[0]:.2f}")
        for name in names:
            run_table(name, eps_list, seeds, dpl, args.only)
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
