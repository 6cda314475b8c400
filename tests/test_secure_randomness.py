"""secure=True: every random draw of a fit or of a skdp.stats call from the OS CSPRNG, no seed
accepted, and the laws of its samplers.

The tests of the samplers read the real os.urandom, so they are not seeded: each compares an
empirical CDF with the exact one by the Dvoretzky-Kiefer-Wolfowitz inequality with Massart's
constant, P(sup |F_n - F| > t) <= 2 exp(-2 n t^2), valid for every n and every F (discrete
ones too). The threshold t is set for a false-failure probability ALPHA = 1e-6 per test.
"""

import importlib
import inspect
import math
import os
import warnings

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.base import is_classifier, is_regressor

from skdp import PrivacyBudget
from skdp.utils import check_generator
from skdp._secure import SecureGenerator

ALPHA = 1e-6
N = 20_000


def _dkw(n, alpha=ALPHA):
    """The t with 2 exp(-2 n t^2) = alpha (Massart 1990)."""
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * n))


def _sup_distance(sample, cdf):
    """sup_x |F_n(x) - F(x)| of a continuous F: checked on both sides of each jump of F_n."""
    x = np.sort(sample)
    f = cdf(x)
    n = x.size
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def _sup_distance_integers(sample, cdf, support):
    """sup_x |F_n(x) - F(x)| of an integer-valued law: reached at the points of ``support``."""
    counts = np.bincount(sample - support[0], minlength=support.size)[:support.size]
    assert counts.sum() == sample.size  # nothing outside the support
    return np.max(np.abs(np.cumsum(counts) / sample.size - cdf(support)))


# -- the samplers -------------------------------------------------------------------------------

@pytest.mark.parametrize("draw, cdf", [
    (lambda g: g.random(N), sps.uniform.cdf),
    (lambda g: g.uniform(-2.0, 3.0, size=N), sps.uniform(-2.0, 5.0).cdf),
    (lambda g: g.standard_normal(N), sps.norm.cdf),
    (lambda g: g.normal(1.0, 2.0, size=N), sps.norm(1.0, 2.0).cdf),
    (lambda g: g.laplace(0.0, 3.0, size=N), sps.laplace(0.0, 3.0).cdf),
    (lambda g: g.gumbel(size=N), sps.gumbel_r.cdf),
], ids=["random", "uniform", "standard_normal", "normal", "laplace", "gumbel"])
def test_continuous_samplers_follow_their_law(draw, cdf):
    sample = draw(SecureGenerator())
    assert sample.shape == (N,)
    assert _sup_distance(sample, cdf) < _dkw(N)


@pytest.mark.parametrize("draw, law, support", [
    (lambda g: g.binomial(2000, 0.005, size=N // 10), sps.binom(2000, 0.005), np.arange(2001)),
    (lambda g: g.binomial(30, 0.8, size=N // 10), sps.binom(30, 0.8), np.arange(31)),
    (lambda g: g.poisson(3.0, size=N), sps.poisson(3.0), np.arange(60)),
    (lambda g: g.integers(-3, 4, size=N), sps.randint(-3, 4), np.arange(-3, 4)),
    (lambda g: np.array([g.choice(5, p=[0.1, 0.2, 0.3, 0.2, 0.2]) for _ in range(N // 10)]),
     sps.rv_discrete(values=(np.arange(5), [0.1, 0.2, 0.3, 0.2, 0.2])), np.arange(5)),
    (lambda g: np.array([int(np.flatnonzero(g.permutation(10) == 0)[0]) for _ in range(N // 10)]),
     sps.randint(0, 10), np.arange(10)),
], ids=["binomial", "binomial_p_above_half", "poisson", "integers", "choice_p",
        "permutation_position"])
def test_discrete_samplers_follow_their_law(draw, law, support):
    sample = np.asarray(draw(SecureGenerator()))
    assert _sup_distance_integers(sample, law.cdf, support) < _dkw(sample.size)


@pytest.mark.parametrize("width", [3 * 2**62, 3 * 2**61], ids=["array_path", "scalar_path"])
def test_integers_have_no_modulo_bias(width):
    # "64-bit word mod width" would put 1/2 (width 3 * 2^62) or 3/4 (width 3 * 2^61) of the
    # draws below c = 2^64 mod width = 2^62, instead of c / width (1/3, 2/3): rejection keeps
    # the law uniform (Lemire 2019).
    sample = SecureGenerator().integers(width, size=N, dtype=np.uint64)
    assert sample.max() < width
    below = np.mean(sample < np.uint64(2**62))
    assert abs(below - 2**62 / width) < _dkw(N)


def test_choice_without_replacement_is_distinct_and_uniform():
    g = SecureGenerator()
    picks = np.concatenate([g.choice(50, size=10, replace=False) for _ in range(N // 20)])
    assert all(np.unique(p).size == 10 for p in picks.reshape(-1, 10))
    # each of the 50 values is included with probability 1/5 in each draw of 10
    assert _sup_distance_integers(picks, sps.randint(0, 50).cdf, np.arange(50)) < _dkw(picks.size)
    assert sorted(g.choice(6, size=6, replace=False).tolist()) == list(range(6))


def test_shapes_and_scalars_as_numpy():
    g, ref = SecureGenerator(), np.random.default_rng(0)
    for name, args, kwargs in [("random", (), {}), ("standard_normal", (), {}),
                               ("normal", (0.0, 1.0), {}), ("uniform", ([0, 1], 2.0), {}),
                               ("normal", (0.0, np.ones((2, 3))), {}),
                               ("laplace", (0.0, 1.0), {"size": (2, 2)}),
                               ("integers", (5,), {}), ("integers", (1, 4), {"size": 3}),
                               ("binomial", (10, 0.5), {}), ("poisson", (2.0,), {})]:
        ours, theirs = getattr(g, name)(*args, **kwargs), getattr(ref, name)(*args, **kwargs)
        assert np.shape(ours) == np.shape(theirs), name
        assert np.ndim(ours) > 0 or isinstance(ours, (float, int, np.integer)), name
    assert len(g.bytes(7)) == 7


# -- the estimators -----------------------------------------------------------------------------

def _public_estimators():
    """Every public class with ``fit`` and ``random_state`` of skdp's subpackages."""
    found = {}
    for package in ["cluster", "decomposition", "ensemble", "impute", "linear_model",
                    "model_selection", "naive_bayes", "neural_network", "preprocessing", "tree"]:
        module = importlib.import_module(f"skdp.{package}")
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and hasattr(obj, "fit") and \
                    "random_state" in inspect.signature(obj).parameters:
                found[name] = obj
    return found


ESTIMATORS = _public_estimators()
_rng = np.random.default_rng(0)
X = _rng.uniform(0, 1, size=(400, 3))
Y = (X[:, 0] > 0.5).astype(int)
YR = X[:, 0] + X[:, 1]


def _small(name):
    """A fast instance of each estimator (public bounds, few steps), with secure=True."""
    from skdp.naive_bayes import DPGaussianNB

    cls = ESTIMATORS[name]
    params = set(inspect.signature(cls).parameters)
    kw = {"secure": True}
    for key, value in [("bounds", (0, 1)), ("bounds_X", (0, 1)), ("bounds_y", (0, 2)),
                       ("classes", [0, 1]), ("max_iter", 2), ("sampling_rate", 0.5),
                       ("n_estimators", 2)]:
        if key in params:
            kw[key] = value
    if "estimator" in params:
        kw["estimator"] = DPGaussianNB(bounds=(0, 1), classes=[0, 1], secure=True)
        kw["param_grid" if "param_grid" in params else "param_distributions"] = {
            "epsilon": [0.5, 1.0]}
        kw["n_runs_mean"] = 2.0  # few runs: a fast test
        kw["epsilon"] = None  # each run spends its candidate's epsilon
    if "noise_multiplier" in params:
        kw.update(noise_multiplier=1.0, epsilon=None)  # DP-SGD without its calibration
    if name == "DPMinMaxScaler":
        kw["quantile_range"] = (0.05, 0.95)  # public bounds alone draw nothing
    if name == "DPKBinsDiscretizer":
        kw["strategy"] = "quantile"
    if name in ("DPPCA", "DPKMeans"):
        kw["n_components" if name == "DPPCA" else "n_clusters"] = 2
    return cls(**kw)


def _fit(est):
    y = YR if is_regressor(est) else Y if is_classifier(est) else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def _output(est):
    out = est.transform(X) if hasattr(est, "transform") else est.predict(X)
    return out.toarray() if hasattr(out, "toarray") else out  # the one-hot bins are sparse


def test_every_public_estimator_takes_secure():
    assert len(ESTIMATORS) >= 18
    missing = [n for n, c in ESTIMATORS.items() if "secure" not in inspect.signature(c).parameters]
    assert missing == []


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_secure_with_a_seed_is_refused_before_any_charge(name):
    budget = PrivacyBudget(100.0, 1e-5)
    est = _small(name).set_params(random_state=0, budget=budget)
    with pytest.raises(ValueError, match="cannot be seeded"):
        _fit(est)
    assert len(budget) == 0
    assert not hasattr(est, "epsilon_spent_")


def _seeded_urandom(monkeypatch, seed):
    """Replace os.urandom by a seeded stream, and refuse numpy generators seeded from the OS."""
    stream = np.random.default_rng(seed)
    calls = []

    def urandom(n):
        calls.append(n)
        return stream.bytes(n)

    real_default_rng = np.random.default_rng

    def default_rng(seed=None):
        assert seed is not None, "a secure fit made a numpy generator seeded from the OS"
        return real_default_rng(seed)

    monkeypatch.setattr(os, "urandom", urandom)
    monkeypatch.setattr(np.random, "default_rng", default_rng)
    return calls


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_secure_fit_draws_every_bit_from_os_urandom(name, monkeypatch):
    # Two fits on the same replacement of os.urandom give the same model, and nothing made a
    # numpy generator from OS entropy: every random draw went through os.urandom.
    calls = _seeded_urandom(monkeypatch, 7)
    first = _output(_fit(_small(name)))
    assert sum(calls) > 0
    _seeded_urandom(monkeypatch, 7)
    np.testing.assert_array_equal(_output(_fit(_small(name))), first)


@pytest.mark.parametrize("name", ["DPLogisticRegression", "DPSGDRegressor", "DPStandardScaler"])
def test_two_secure_fits_differ(name):
    a, b = (_output(_fit(_small(name))) for _ in range(2))
    assert not np.array_equal(a, b)


def test_check_generator_secure():
    assert isinstance(check_generator(None, secure=True), SecureGenerator)
    for seed in [0, np.random.default_rng(0), np.random.RandomState(0)]:
        with pytest.raises(ValueError, match="cannot be seeded"):
            check_generator(seed, secure=True)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_bad_secure_costs_nothing(bad):
    from skdp.linear_model import DPLogisticRegression

    budget = PrivacyBudget(10.0, 1e-5)
    with pytest.raises(ValueError, match="secure must be a bool"):
        DPLogisticRegression(classes=[0, 1], secure=bad, budget=budget).fit(X, Y)
    assert len(budget) == 0


def test_secure_search_needs_secure_steps_before_any_charge():
    from skdp.model_selection import DPGridSearchCV
    from skdp.naive_bayes import DPGaussianNB

    budget = PrivacyBudget(100.0, 1e-5)
    nb = DPGaussianNB(bounds=(0, 1), classes=[0, 1])
    with pytest.raises(ValueError, match="needs secure=True in its estimator"):
        DPGridSearchCV(nb, {"epsilon": [1.0]}, epsilon=None, secure=True, budget=budget).fit(X, Y)
    grid = {"epsilon": [1.0], "secure": [True, False]}
    with pytest.raises(ValueError, match="needs secure=True in its estimator"):
        DPGridSearchCV(nb, grid, epsilon=None, secure=True, budget=budget).fit(X, Y)
    assert len(budget) == 0


def test_seeded_search_leaves_secure_steps_unseeded():
    # A search seeds its runs' steps, except a step with secure=True, which refuses a seed.
    from skdp.model_selection import DPGridSearchCV
    from skdp.naive_bayes import DPGaussianNB
    from skdp.pipeline import make_pipeline
    from skdp.preprocessing import DPStandardScaler

    pipe = make_pipeline(DPStandardScaler(bounds=(0, 1), delta=0.0, secure=True),
                         DPGaussianNB(bounds=(-5, 5), classes=[0, 1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = DPGridSearchCV(pipe, {"dpgaussiannb__epsilon": [0.5, 1.0]}, epsilon=None,
                                n_runs_mean=2.0,
                                random_state=0).fit(X, Y)
    assert search.best_estimator_ is None or search.best_estimator_.score(X, Y) > 0.5


# -- the functions of skdp.stats ----------------------------------------------------------------

_XS = np.round(X[:40], 2)  # 40 rows of 3 features in [0, 1]: the exact samplers stay fast
_XN = np.where(np.arange(_XS.size).reshape(_XS.shape) % 7 == 0, np.nan, _XS)

_STATS_CALLS = {
    "bounds": lambda st, **kw: st.bounds(_XS, **kw),
    "count": lambda st, **kw: st.count(_XS[:, 0] > 0.5, **kw),
    "histogram": lambda st, **kw: st.histogram(_XS[:, 0], bins=4, range=(0, 1), **kw),
    "histogram2d": lambda st, **kw: st.histogram2d(_XS[:, 0], _XS[:, 1], bins=2,
                                                   range=[(0, 1), (0, 1)], **kw),
    "histogramdd": lambda st, **kw: st.histogramdd(_XS, bins=2, range=[(0, 1)] * 3, **kw),
    "mean": lambda st, **kw: st.mean(_XS, axis=0, bounds=(0, 1), **kw),
    "median": lambda st, **kw: st.median(_XS[:, 0], bounds=(0, 1), **kw),
    "nanmean": lambda st, **kw: st.nanmean(_XN, axis=0, bounds=(0, 1), **kw),
    "nanmedian": lambda st, **kw: st.nanmedian(_XN[:, 0], bounds=(0, 1), **kw),
    "nanquantile": lambda st, **kw: st.nanquantile(_XN, [0.25, 0.75], axis=0, bounds=(0, 1),
                                                   **kw),
    "nanstd": lambda st, **kw: st.nanstd(_XN, axis=0, bounds=(0, 1), **kw),
    "nansum": lambda st, **kw: st.nansum(_XN, axis=0, bounds=(0, 1), **kw),
    "nanvar": lambda st, **kw: st.nanvar(_XN, axis=0, bounds=(0, 1), **kw),
    "percentile": lambda st, **kw: st.percentile(_XS[:, 0], [25, 75], bounds=(0, 1), **kw),
    "quantile": lambda st, **kw: st.quantile(_XS[:, 0], [0.25, 0.75], bounds=(0, 1), **kw),
    "std": lambda st, **kw: st.std(_XS, axis=0, bounds=(0, 1), **kw),
    "sum": lambda st, **kw: st.sum(_XS, axis=0, bounds=(0, 1), **kw),
    "var": lambda st, **kw: st.var(_XS, axis=0, bounds=(0, 1), **kw),
}


def _stat(name, **kw):
    from skdp import stats

    out = _STATS_CALLS[name](stats, epsilon=1.0, secure=True, **kw)
    parts = out if isinstance(out, tuple) else (out,)
    return np.concatenate([np.ravel(p) for p in parts])


def test_every_public_stats_function_is_checked():
    from skdp import stats

    assert sorted(_STATS_CALLS) == sorted(stats.__all__)
    assert all("secure" in inspect.signature(getattr(stats, n)).parameters for n in stats.__all__)


@pytest.mark.parametrize("seed", [0, np.random.default_rng(0), np.random.RandomState(0)],
                         ids=["int", "Generator", "RandomState"])
@pytest.mark.parametrize("name", sorted(_STATS_CALLS))
def test_secure_stats_with_a_seed_are_refused_before_any_charge(name, seed):
    budget = PrivacyBudget(100.0, 1e-5)
    with pytest.raises(ValueError, match="cannot be seeded"):
        _stat(name, random_state=seed, budget=budget)
    assert len(budget) == 0


@pytest.mark.parametrize("name", sorted(_STATS_CALLS))
def test_secure_stats_draw_every_bit_from_os_urandom(name, monkeypatch):
    # As for the fits: two calls on the same replacement of os.urandom release the same values,
    # and no numpy generator was made from OS entropy.
    calls = _seeded_urandom(monkeypatch, 7)
    first = _stat(name)
    assert sum(calls) > 0
    _seeded_urandom(monkeypatch, 7)
    np.testing.assert_array_equal(_stat(name), first)


def test_secure_stats_take_a_secure_generator():
    # An estimator passes its own SecureGenerator down: that is no seed, and it is used.
    calls = []

    def source(n):
        calls.append(n)
        return os.urandom(n)

    budget = PrivacyBudget(100.0, 1e-5)
    _stat("mean", random_state=SecureGenerator(source=source), budget=budget)
    assert sum(calls) > 0
    assert len(budget) == 1
