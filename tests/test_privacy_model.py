"""docs/privacy_model.rst against the code: every release has an entry, and each entry
names every mechanism that its release charges.

The page is read as reStructuredText list-tables: a row's first cell names its
entries by roles (``:class:`~skdp.x.Name```, ``:func:``, ``:meth:``), and the
whole row is what the page says of them. The checks:

1. every public class and function of skdp's subpackages that releases
   something (and every query method of the table classes) is named in the
   first cell of some row;
2. each release below, run with its defaults on a small synthetic table (a
   few hundred rows) under a :class:`~skdp.PrivacyBudget`, charges a curve
   whose description (``RDPCurve.mechanism``, built by
   ``skdp/accounting/_curve.py``: ``"3 x laplace(...) + gaussian(...)"``) is
   split into the kinds of its parts; the row of the release must name the
   curve function of every kind (``gaussian_rdp``, ``laplace_rdp``, ...). A
   kind that this test does not know fails it: a new mechanism needs a word
   in :data:`KIND_TOKENS` and on the page;
3. every role naming ``skdp.…`` resolves, and every row cites a source;
4. the shares, step counts and thresholds that rows quote are the code's
   constants (:func:`quoted_numbers`).

The match is by word, never by full text, so rewording a row keeps the test
green as long as the row still names what the code charges.
"""

from __future__ import annotations

import importlib
import inspect
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import skdp
from skdp import PrivacyBudget

PAGE = Path(__file__).resolve().parents[1] / "docs" / "privacy_model.rst"

SUBPACKAGES = (
    "linear_model", "preprocessing", "impute", "naive_bayes", "tree", "ensemble", "cluster",
    "decomposition", "neural_network", "model_selection", "stats", "analysis", "pipeline",
    "mechanisms",
)

# Public names that release nothing and charge nothing, with the reason.
NOT_RELEASES = {
    "skdp.analysis.Aggregate": "the description of an aggregate, for PrivateTable.agg",
    "skdp.analysis.quantile": "builds an Aggregate; PrivateTable.agg releases it",
    "skdp.pipeline.make_pipeline": "builds a DPPipeline, which has its entry",
    "skdp.mechanisms.exponential_mechanism_rdp": "a curve, named in the entries that charge it",
    "skdp.mechanisms.sample_bernoulli_exp": "an exact sampler used by the mechanisms",
    "skdp.mechanisms.sample_discrete_gaussian": "an exact sampler used by the mechanisms",
    "skdp.mechanisms.sample_discrete_laplace": "an exact sampler used by the mechanisms",
}
# Public methods of the table classes that release nothing.
NOT_QUERIES = {
    "accuracy": "the noise of a query before it runs: reads nothing, charges nothing",
    "groupby": "a GroupBy, whose queries have their entries",
}

# The kinds of parts of a curve's description, and the word that the row of a release
# charging that kind must hold: the function of skdp.accounting (or the constructor) that
# builds the curve.
KIND_TOKENS = {
    "gaussian": "gaussian_rdp",
    "laplace": "laplace_rdp",
    "pure_dp": "pure_dp_rdp",
    "exponential": "exponential_mechanism_rdp",
    "zcdp": "zcdp_rdp",
    "randomized_response": "randomized_response_rdp",
    "approximate_dp": "approximate_dp_rdp",
    "poisson_subsampled_gaussian": "poisson_subsampled_gaussian_rdp",
    "without_replacement_gaussian": "sampled_without_replacement_gaussian_rdp",
    "best of K": "private_selection_rdp",
    "worst of candidates": "worst candidate",
    "nothing": "zero()",
    "non_private": "non_private()",
}

_ROLE = re.compile(r":(?:class|func|meth|attr|data|mod):`([^`]+)`")


# -- reading the page ----------------------------------------------------------------

def page_rows(text):
    """The rows of every list-table of ``text``: a list of lists of cells (strings)."""
    rows, current, indent = [], None, 0
    for line in text.splitlines():
        start = re.match(r"^(\s*)\* - ?(.*)$", line)
        if start:
            indent = len(start.group(1))
            current = [start.group(2)]
            rows.append(current)
            continue
        if current is None or not line.strip():
            continue
        here = len(line) - len(line.lstrip())
        if here <= indent:  # back in the text: the table ended
            current = None
            continue
        cell = re.match(r"^\s*- ?(.*)$", line)
        if cell and here == indent + 2:
            current.append(cell.group(1))
        else:
            current[-1] += " " + line.strip()
    return rows


def role_targets(text):
    """The dotted targets of the roles of ``text`` (``~`` and titles removed)."""
    out = []
    for target in _ROLE.findall(text):
        inner = re.search(r"<([^>]+)>", target)
        target = (inner.group(1) if inner else target).lstrip("~").strip()
        out.append(target[:-2] if target.endswith("()") else target)
    return out


def resolve(target):
    """The object that a dotted name under ``skdp`` names."""
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(target)


def entries(text):
    """{id of a named object: the text of every row whose first cell names it}."""
    out = {}
    for cells in page_rows(text):
        for target in role_targets(cells[0]):
            try:
                obj = resolve(target)
            except (ImportError, AttributeError):  # test_every_role_on_the_page_resolves says so
                continue
            if target.startswith("skdp."):
                out.setdefault(id(obj), []).append(" ".join(cells))
    return {key: " ".join(rows) for key, rows in out.items()}


# -- reading a curve's description -----------------------------------------------------

def curve_kinds(description):
    """The kinds of the parts of a curve description (keys of :data:`KIND_TOKENS`).

    Raises ``ValueError`` on a part that it does not know, so that a new kind of
    mechanism cannot pass unseen.
    """
    kinds = set()
    rest = re.sub(r"K~\w+\([^()]*\)", "K", description)  # the law of K is no mechanism
    if "best of K runs of" in rest:
        kinds.add("best of K")
        rest = rest.replace("best of K runs of", " ")
    if re.search(r"worst of \d+ candidates", rest):
        kinds.add("worst of candidates")
        rest = re.sub(r"worst of \d+ candidates", " ", rest)
    for word in ("nothing", "non_private"):
        if re.search(rf"\b{word}\b(?!\()", rest):
            kinds.add(word)
            rest = re.sub(rf"\b{word}\b(?!\()", " ", rest)
    for name in re.findall(r"\b([a-z_]+)\(", rest):
        if name not in KIND_TOKENS:
            raise ValueError(f"unknown kind of curve {name!r} in {description!r}")
        kinds.add(name)
    rest = re.sub(r"\b[a-z_]+\([^()]*\)", " ", rest)
    if len(kinds) > 1:  # a part that releases nothing adds nothing to name
        kinds.discard("nothing")
    if not re.fullmatch(r"[\s\d+x()]*", rest):
        raise ValueError(f"unknown part {rest.strip()!r} in {description!r}")
    return kinds


def missing_kinds(description, row):
    """The kinds of ``description`` whose word :data:`KIND_TOKENS` is not in ``row``."""
    return sorted(kind for kind in curve_kinds(description)
                  if not re.search(r"(?<![\w.])" + re.escape(KIND_TOKENS[kind]), row))


# -- the tests -----------------------------------------------------------------------

TEXT = PAGE.read_text(encoding="utf-8")
ENTRIES = entries(TEXT)


def public_releases():
    """(dotted name, object) of every public name of the subpackages that releases."""
    out = []
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"skdp.{sub}")
        for name in module.__all__:
            dotted, obj = f"skdp.{sub}.{name}", getattr(module, name)
            if dotted in NOT_RELEASES or (inspect.isclass(obj) and issubclass(obj, Warning)):
                continue
            out.append((dotted, obj))
    return out


def table_queries():
    """(dotted name, function) of every public query method of the table classes."""
    from skdp.analysis import GroupBy, PrivateTable

    out = []
    for cls in (PrivateTable, GroupBy):
        for name, member in inspect.getmembers(cls, inspect.isfunction):
            if not name.startswith("_") and name not in NOT_QUERIES:
                out.append((f"skdp.analysis.{cls.__name__}.{name}", member))
    return out


def test_page_has_rows():
    assert len(page_rows(TEXT)) > 40
    assert len(ENTRIES) > 40


def test_every_role_on_the_page_resolves():
    stale = []
    for target in role_targets(TEXT):
        if target.startswith("skdp."):
            try:
                resolve(target)
            except (ImportError, AttributeError):
                stale.append(target)
    assert not stale, f"the page names what the code no longer has: {stale}"


@pytest.mark.parametrize("name, obj", public_releases() + table_queries(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_every_public_release_has_an_entry(name, obj):
    assert id(obj) in ENTRIES, (
        f"{name} has no row on docs/privacy_model.rst (name it in a row's first cell, "
        f"or list it in NOT_RELEASES with the reason)")


# -- what each release charges ----------------------------------------------------------

RNG = np.random.default_rng(0)
N = 300
X = RNG.normal(size=(N, 3))
X_NAN = np.where(RNG.random((N, 3)) < 0.1, np.nan, X)
X_WIDE = RNG.normal(size=(N, 20))  # 20 columns: enough sums for the Gaussian to win
Y = (X[:, 0] + 0.5 * RNG.normal(size=N) > 0).astype(int)
Y_REG = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * RNG.normal(size=N)
DF = pd.DataFrame({"g": RNG.choice(["a", "b"], N), "x": X[:, 0]})
BOX = (-4.0, 4.0)


def _fit(make, target=None, data=X):
    def run(budget):
        estimator = make().set_params(budget=budget)
        estimator.fit(data) if target is None else estimator.fit(data, target)
    return run


def _call(function, *args, **kwargs):
    return lambda budget: function(*args, budget=budget, **kwargs)


def _query(make_query, **table):
    def run(budget):
        from skdp.analysis import PrivateTable

        make_query(PrivateTable(DF, budget=budget, random_state=0, **table))
    return run


def _cases():
    from skdp import (cluster, decomposition, ensemble, impute, linear_model, naive_bayes,
                      preprocessing, stats, tree)
    from skdp.model_selection import DPGridSearchCV, DPRandomizedSearchCV
    from skdp.pipeline import make_pipeline

    c01 = {"classes": [0, 1]}
    lm, pp = linear_model, preprocessing
    # (case id, entry, run(budget), further entries whose rows also speak for the curve)
    yield "linreg", lm.DPLinearRegression, _fit(lm.DPLinearRegression, Y_REG), ()
    yield "linreg-public", lm.DPLinearRegression, _fit(
        lambda: lm.DPLinearRegression(bounds_X=BOX, bounds_y=(-10, 10)), Y_REG), ()
    yield "logreg", lm.DPLogisticRegression, _fit(lambda: lm.DPLogisticRegression(**c01), Y), ()
    yield "logreg-norm", lm.DPLogisticRegression, _fit(
        lambda: lm.DPLogisticRegression(data_norm=3.0, **c01), Y), ()
    yield "sgd-clf", lm.DPSGDClassifier, _fit(lambda: lm.DPSGDClassifier(**c01), Y), ()
    yield "sgd-reg", lm.DPSGDRegressor, _fit(lm.DPSGDRegressor, Y_REG), ()
    yield "sgd-reg-int-batch", lm.DPSGDRegressor, _fit(
        lambda: lm.DPSGDRegressor(bounds_y=(-10, 10), batch_size=30), Y_REG), ()
    yield "hist", pp.DPHistogramTransformer, _fit(pp.DPHistogramTransformer), ()
    yield "hist-secure", pp.DPHistogramTransformer, _fit(
        lambda: pp.DPHistogramTransformer(bounds=BOX, secure=True)), ()
    yield "kbins", pp.DPKBinsDiscretizer, _fit(pp.DPKBinsDiscretizer), ()
    yield "kbins-quantile", pp.DPKBinsDiscretizer, _fit(
        lambda: pp.DPKBinsDiscretizer(strategy="quantile")), ()
    yield "minmax", pp.DPMinMaxScaler, _fit(pp.DPMinMaxScaler), ()
    yield "minmax-quantile", pp.DPMinMaxScaler, _fit(
        lambda: pp.DPMinMaxScaler(bounds=BOX, quantile_range=(0.05, 0.95))), ()
    yield "minmax-public", pp.DPMinMaxScaler, _fit(lambda: pp.DPMinMaxScaler(bounds=BOX)), ()
    yield "standard", pp.DPStandardScaler, _fit(pp.DPStandardScaler), ()
    yield "standard-secure", pp.DPStandardScaler, _fit(
        lambda: pp.DPStandardScaler(bounds=BOX, secure=True)), ()
    yield "standard-wide", pp.DPStandardScaler, _fit(
        lambda: pp.DPStandardScaler(bounds=BOX, epsilon=10.0), data=X_WIDE), ()
    yield "standard-nothing", pp.DPStandardScaler, _fit(
        lambda: pp.DPStandardScaler(with_mean=False, with_std=False)), ()
    yield "imputer", impute.DPSimpleImputer, _fit(impute.DPSimpleImputer, data=X_NAN), ()
    yield "imputer-joint", impute.DPSimpleImputer, _fit(
        lambda: impute.DPSimpleImputer(bounds=BOX),
        data=np.where(RNG.random((N, 20)) < 0.1, np.nan, X_WIDE)), ()
    yield "imputer-median", impute.DPSimpleImputer, _fit(
        lambda: impute.DPSimpleImputer(strategy="median", bounds=BOX), data=X_NAN), ()
    yield "imputer-frequent", impute.DPSimpleImputer, _fit(
        lambda: impute.DPSimpleImputer(strategy="most_frequent",
                                       categories=[[0.0, 1.0]] * 3),
        data=np.where(np.isnan(X_NAN), np.nan, (X_NAN > 0).astype(float))), ()
    yield "imputer-constant", impute.DPSimpleImputer, _fit(
        lambda: impute.DPSimpleImputer(strategy="constant", fill_value=0.0), data=X_NAN), ()
    yield "nb", naive_bayes.DPGaussianNB, _fit(lambda: naive_bayes.DPGaussianNB(**c01), Y), ()
    yield "nb-secure", naive_bayes.DPGaussianNB, _fit(
        lambda: naive_bayes.DPGaussianNB(secure=True, **c01), Y), ()
    yield "nb-pure", naive_bayes.DPGaussianNB, _fit(
        lambda: naive_bayes.DPGaussianNB(bounds=BOX, delta=0.0, **c01), Y), ()
    yield "tree", tree.DPDecisionTreeClassifier, _fit(
        lambda: tree.DPDecisionTreeClassifier(**c01), Y), ()
    yield "forest", ensemble.DPRandomForestClassifier, _fit(
        lambda: ensemble.DPRandomForestClassifier(**c01), Y), ()
    yield "hgb-clf", ensemble.DPHistGradientBoostingClassifier, _fit(
        lambda: ensemble.DPHistGradientBoostingClassifier(**c01), Y), ()
    yield "hgb-reg", ensemble.DPHistGradientBoostingRegressor, _fit(
        ensemble.DPHistGradientBoostingRegressor, Y_REG), ()
    yield "kmeans", cluster.DPKMeans, _fit(lambda: cluster.DPKMeans(n_clusters=3)), ()
    yield "kmeans-public", cluster.DPKMeans, _fit(
        lambda: cluster.DPKMeans(n_clusters=3, bounds=BOX)), ()
    yield "pca", decomposition.DPPCA, _fit(decomposition.DPPCA), ()
    yield "pca-pure", decomposition.DPPCA, _fit(lambda: decomposition.DPPCA(delta=0.0)), ()

    # statistics: bounds are public (required) except for stats.bounds
    for name in ("count", "sum", "mean", "var", "std", "nansum", "nanmean", "nanvar",
                 "nanstd", "median", "nanmedian"):
        function = getattr(stats, name)
        data = X_NAN if name.startswith("nan") else X
        kwargs = {} if name == "count" else {"bounds": BOX}
        yield f"stats-{name}", function, _call(function, data, axis=0, epsilon=1.0, **kwargs), ()
        if name not in ("median", "nanmedian"):
            yield f"stats-{name}-gaussian", function, _call(
                function, X_WIDE, axis=0, epsilon=10.0, delta=1e-5, **kwargs), ()
            yield f"stats-{name}-secure", function, _call(
                function, X, axis=0, epsilon=1.0, secure=True, **kwargs), ()
    for name, q in (("quantile", 0.5), ("nanquantile", 0.5), ("percentile", 50)):
        function = getattr(stats, name)
        data = X_NAN if name.startswith("nan") else X
        yield f"stats-{name}", function, _call(function, data, q, axis=0, epsilon=1.0,
                                                bounds=BOX), ()
        yield f"stats-{name}-joint", function, _call(function, X, [q, q], axis=0, epsilon=1.0,
                                                      bounds=BOX, method="joint"), ()
    yield "stats-quantile-secure", stats.quantile, _call(
        stats.quantile, X, 0.5, axis=0, epsilon=1.0, bounds=BOX, secure=True), ()
    yield "stats-histogram", stats.histogram, _call(stats.histogram, X[:, 0], range=BOX,
                                                    epsilon=1.0), ()
    yield "stats-histogram2d", stats.histogram2d, _call(
        stats.histogram2d, X[:, 0], X[:, 1], range=[BOX, BOX], epsilon=1.0), ()
    yield "stats-histogramdd", stats.histogramdd, _call(
        stats.histogramdd, X, range=[BOX] * 3, epsilon=1.0, delta=1e-5), ()
    yield "stats-bounds", stats.bounds, _call(stats.bounds, X, epsilon=1.0), ()
    yield "stats-bounds-secure", stats.bounds, _call(stats.bounds, X, epsilon=1.0,
                                                     secure=True), ()

    # table queries
    from skdp.analysis import PrivateTable, quantile

    yield "table-count", PrivateTable.count, _query(lambda t: t.count(epsilon=1.0)), ()
    yield "table-count-keys", PrivateTable.count, _query(
        lambda t: t.groupby("g", keys=["a", "b"]).count(epsilon=1.0)), ()
    yield "table-count-select", PrivateTable.count, _query(
        lambda t: t.groupby("g").count(epsilon=1.0)), ()
    yield "table-agg", PrivateTable.agg, _query(
        lambda t: t.agg({"x": ["mean", "var", "median", quantile(0.9)]}, epsilon=1.0),
        bounds={"x": BOX}), ()
    yield "table-agg-private-bounds", PrivateTable.agg, _query(
        lambda t: t.groupby("g", keys=["a", "b"]).agg({"x": "sum"}, epsilon=1.0)), ()
    yield "table-agg-select", PrivateTable.agg, _query(
        lambda t: t.groupby("g").mean("x", epsilon=1.0), bounds={"x": BOX}), ()
    for name in ("sum", "mean", "var", "std", "median"):  # agg's shortcuts
        yield f"table-{name}", getattr(PrivateTable, name), _query(
            lambda t, name=name: getattr(t, name)("x", epsilon=1.0), bounds={"x": BOX}), ()
    yield "table-quantile", PrivateTable.quantile, _query(
        lambda t: t.quantile("x", 0.9, epsilon=1.0), bounds={"x": BOX}), ()
    yield "table-histogram", PrivateTable.histogram, _query(
        lambda t: t.histogram("x", epsilon=1.0), bounds={"x": BOX}), ()
    yield "table-histogram-select", PrivateTable.histogram, _query(
        lambda t: t.histogram("g", epsilon=1.0)), ()

    # a pipeline and the searches: their rows and those of their steps speak for the curve
    scaler, logistic = pp.DPStandardScaler, lm.DPLogisticRegression

    def pipeline(budget):
        make_pipeline(scaler(), logistic(**c01), epsilon=2.0, budget=budget).fit(X, Y)

    yield "pipeline", skdp.pipeline.DPPipeline, pipeline, (scaler, logistic)
    nb = naive_bayes.DPGaussianNB
    grid = {"var_smoothing": [1e-9, 1e-3]}

    def search(cls, **kwargs):
        def run(budget):
            cls(nb(bounds=BOX, **c01), grid, budget=budget, random_state=0, **kwargs).fit(X, Y)
        return run

    yield "grid", DPGridSearchCV, search(DPGridSearchCV), (nb,)
    yield "grid-score-epsilon", DPGridSearchCV, search(DPGridSearchCV, score_epsilon=0.1), (nb,)
    yield "random", DPRandomizedSearchCV, search(DPRandomizedSearchCV, epsilon=2.0,
                                                 n_iter=2), (nb,)


CASES = list(_cases())


@pytest.fixture(scope="module")
def budget():
    return PrivacyBudget(math.inf, 1e-5, accountant="rdp")


@pytest.mark.parametrize("entry, run, also", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_row_names_what_its_release_charges(entry, run, also, budget):
    before = len(budget)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(budget)
    assert len(budget) == before + 1, "one release, one charge"
    description = budget.ledger[-1].curve.mechanism
    assert id(entry) in ENTRIES, f"{entry} has no row"
    row = " ".join(ENTRIES[id(named)] for named in (entry, *also))
    assert not missing_kinds(description, row), (
        f"the row of {entry.__qualname__} does not name {missing_kinds(description, row)} "
        f"of its charged curve {description!r}")


MECHANISMS = {
    "LaplaceMechanism": {"epsilon": 1.0},
    "GaussianMechanism": {"epsilon": 1.0, "delta": 1e-5},
    "DiscreteLaplaceMechanism": {"epsilon": 1.0},
    "DiscreteGaussianMechanism": {"noise_multiplier": 2.0},
    "ExponentialMechanism": {"epsilon": 1.0},
    "PermuteAndFlip": {"epsilon": 1.0},
    "RandomizedResponse": {"epsilon": 1.0},
}


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_each_mechanism_row_names_its_curve(name):
    cls = getattr(skdp.mechanisms, name)
    description = cls(**MECHANISMS[name]).privacy_curve().mechanism
    assert not missing_kinds(description, ENTRIES[id(cls)])


def test_every_estimator_has_a_case():
    cased = {id(c[1]) for c in CASES}
    cased |= {id(getattr(skdp.mechanisms, name)) for name in MECHANISMS}
    # the table classes are cased by their queries (GroupBy's are PrivateTable's functions)
    uncased = [name for name, obj in public_releases() + table_queries()
               if id(obj) not in cased and not name.endswith(("PrivateTable", "GroupBy"))]
    assert uncased == []


# -- the numbers the page quotes are the code's ------------------------------------------

_WORDS = {0.5: "half", 0.25: "a quarter"}


def quoted_numbers():
    """(entry or None for the whole page, the phrase that the code's constants give)."""
    from fractions import Fraction

    from skdp.cluster import DPKMeans, _kmeans
    from skdp.decomposition import DPPCA, _pca
    from skdp.ensemble import DPHistGradientBoostingClassifier
    from skdp.ensemble._hist_gradient_boosting import _privacy as boosting
    from skdp.linear_model import DPLogisticRegression, DPSGDRegressor, _dpsgd, _logistic
    from skdp.linear_model import _row_norm
    from skdp.stats import _range
    from skdp.stats._noise import _sums_delta
    from skdp.tree import DPDecisionTreeClassifier, _classes

    def gaussian_from(epsilon):  # the fewest noisy sums that take the Gaussian at δ = 1e-5
        return next(k for k in range(1, 1000) if _sums_delta(epsilon, 1e-5, k) > 0)

    yield None, (f"the Gaussian is used from k = {gaussian_from(0.1)} sums at ε = 0.1, "
                 f"{gaussian_from(1.0)} at ε = 1 and {gaussian_from(10.0)} at ε = 10")
    yield None, f"in the same charge (``skdp/stats/_range.py``, ``split_curve``): " \
                f"{_WORDS[_range.BOUNDS_EPSILON_SHARE]} of ε"
    yield None, f"with {_WORDS[_range.TARGET_SHARE_OF_BOUNDS]} of that half"
    changed = "(the code changed)"  # a phrase the page never holds
    yield None, "target bounds a tenth of ε" if _dpsgd.TARGET_BOUNDS_SHARE == 0.1 else changed
    yield DPSGDRegressor, f"ε/{round(1 / _dpsgd.TARGET_BOUNDS_SHARE)})"
    # DPKMeans's private bounds take the package's share, which the page states once
    yield DPKMeans, "plus the bounds' curve" if (
        _kmeans.BOUNDS_SHARE == _range.BOUNDS_EPSILON_SHARE) else changed
    yield DPKMeans, f"n̂ ({_kmeans.N_SHARE:.0%})"
    yield DPKMeans, f"each of its {_kmeans.TREE_DEPTH} levels ({_kmeans.TREE_COUNT_SHARE:.0%})"
    yield DPKMeans, f"leaves ({_kmeans.LEAF_SHARE:.0%})"
    yield DPPCA, f"shares {_pca.COUNT_SHARE:.2f}, {_pca.SUM_SHARE:.2f}, {_pca.MOMENT_SHARE:.2f}"
    yield DPPCA, "shares {:.2f}, {:.2f}, {:.2f}".format(*_pca.LAPLACE_SHARES)
    yield DPPCA, f"the rows' norms ({_pca.NORM_SHARE:.2f} of 1/z²"
    yield DPPCA, f"whose {_pca.NORM_QUANTILE:g} quantile is the clipping norm"
    yield DPPCA, f"Private bounds take {_pca.PCA_BOUNDS_SHARE:g} of ε"
    yield DPHistGradientBoostingClassifier, f"shared {boosting.COUNT_SHARE:.0%} to the first"
    yield DPHistGradientBoostingClassifier, (f"{_WORDS[boosting.SPLIT_SHARE]} of the rest to "
                                             "the splits")
    yield DPHistGradientBoostingClassifier, (f"{round(100 * (1 - boosting.HESSIAN_SHARE))}/"
                                             f"{round(100 * boosting.HESSIAN_SHARE)} to gradients")
    yield DPDecisionTreeClassifier, f"{_WORDS[_classes.SPLIT_SHARE]} to the splits"
    yield DPLogisticRegression, f"ε/{round(1 / _logistic._NORM_EPSILON_SHARE)})"
    yield DPLogisticRegression, f"({_logistic._MIN_STEPS} to {_logistic._MAX_STEPS})"
    yield DPLogisticRegression, (f"n̂/({_logistic._ROWS_PER_STEP:g} σ_g) ≥ "
                                 f"{_logistic._PRECONDITION_FROM:g}")
    yield DPLogisticRegression, f"at most {_logistic._MAX_GRAM_WIDTH:,} columns"
    yield DPLogisticRegression, f"preconditions {_logistic._PRECONDITIONED_STEPS} steps"
    yield DPLogisticRegression, f"max(2/ε_n, {Fraction(_row_norm.NORM_MIN_NOISE)})"


@pytest.mark.parametrize("entry, phrase", list(quoted_numbers()))
def test_the_numbers_quoted_are_the_codes(entry, phrase):
    where = " ".join(TEXT.split()) if entry is None else ENTRIES[id(entry)]
    assert phrase in where, f"the page does not say {phrase!r}: its numbers are stale"


# -- the checker can fail ---------------------------------------------------------------

def test_checker_reports_a_mechanism_the_row_omits():
    row = ("DPGaussianNB noisy sums: Laplace, scale Δk/ε; curve ``k * laplace_rdp(k/ε)`` "
           "(Dwork et al. 2006, Prop. 1)")
    description = "3 x laplace(scale/sensitivity=6) + gaussian(noise_multiplier=4.5)"
    assert missing_kinds(description, row) == ["gaussian"]
    # a word inside a longer curve's name does not count
    assert missing_kinds("gaussian(noise_multiplier=2)",
                         "``poisson_subsampled_gaussian_rdp(q, σ, T)``") == ["gaussian"]
    assert missing_kinds(description, row + "; ``gaussian_rdp(z)``") == []


def test_checker_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="unknown kind"):
        curve_kinds("2 x laplace(scale/sensitivity=1) + staircase(epsilon=1)")
    with pytest.raises(ValueError, match="unknown part"):
        curve_kinds("custom")
    assert curve_kinds(
        "best of K~logarithmic(gamma=0.03) runs of (worst of 2 candidates) + "
        "zcdp(rho=0.001) + worst of 2 candidates") == {"best of K", "worst of candidates",
                                                       "zcdp"}


def test_rows_are_read_cell_by_cell():
    text = """
.. list-table::
   :header-rows: 1

   * - :class:`~skdp.pipeline.DPPipeline`,
       :func:`skdp.stats.mean`
     - first
       still first
     - second

After the table.
"""
    assert page_rows(text) == [[":class:`~skdp.pipeline.DPPipeline`, :func:`skdp.stats.mean`",
                                "first still first", "second"]]
    assert role_targets(page_rows(text)[0][0]) == ["skdp.pipeline.DPPipeline", "skdp.stats.mean"]


def test_every_entry_cites_a_source():
    uncited = [cells[0] for cells in page_rows(TEXT)
               if any(t.startswith("skdp.") for t in role_targets(cells[0]))
               and not re.search(r"\b(19|20)\d\d\b", " ".join(cells[1:]))]
    assert not uncited, f"rows without a source (author and year): {uncited}"
