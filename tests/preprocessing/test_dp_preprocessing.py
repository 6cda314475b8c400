import inspect
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.preprocessing import KBinsDiscretizer, MinMaxScaler, StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp.accounting import RDPCurve
from skdp.preprocessing import (
    DPHistogramTransformer,
    DPKBinsDiscretizer,
    DPMinMaxScaler,
    DPStandardScaler,
)
from skdp.stats import _range
from skdp.stats._histograms import _histogram_curve
from skdp.stats._quantiles import _quantile_curve
from skdp.stats._sums import _mean_curve, _var_curve
from _testing import (
    assert_bad_input_costs_nothing,
    assert_charges_once,
    assert_refused_fit_fits_nothing,
)

B = (-10.0, 10.0)
ESTIMATORS = [
    DPStandardScaler(bounds=B, random_state=0),
    DPStandardScaler(bounds=B, epsilon=math.inf),
    DPMinMaxScaler(bounds=B),
    DPMinMaxScaler(bounds=B, quantile_range=(0.01, 0.99), random_state=0),
    DPMinMaxScaler(bounds=B, quantile_range=(0.01, 0.99), secure=True, random_state=0),
    DPKBinsDiscretizer(bounds=B),
    DPKBinsDiscretizer(bounds=B, strategy="quantile", random_state=0),
    DPKBinsDiscretizer(bounds=B, strategy="quantile", secure=True, random_state=0),
    DPKBinsDiscretizer(bounds=B, encode="onehot-dense"),
    DPHistogramTransformer(bounds=B, random_state=0),
    DPHistogramTransformer(bounds=B, output="density", delta=1e-6, random_state=0),
]
# Built with their defaults: bounds=None, estimated privately at finite epsilon;
# at epsilon=inf none are needed (scikit-learn's results).
DEFAULTS = [
    DPStandardScaler(), DPStandardScaler(epsilon=math.inf),
    DPStandardScaler(secure=True, delta=0.0),
    DPMinMaxScaler(), DPMinMaxScaler(epsilon=math.inf),
    DPMinMaxScaler(quantile_range=(0.01, 0.99)),
    DPKBinsDiscretizer(), DPKBinsDiscretizer(epsilon=math.inf),
    DPKBinsDiscretizer(strategy="quantile"),
    DPKBinsDiscretizer(strategy="quantile", epsilon=math.inf),
    DPHistogramTransformer(), DPHistogramTransformer(epsilon=math.inf),
]


@parametrize_with_checks(ESTIMATORS + DEFAULTS, expected_failed_checks=lambda est: {})
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 5, size=(n, d)) * np.arange(1, d + 1)


# -- epsilon = inf equals scikit-learn ------------------------------------------------
@pytest.mark.parametrize("with_mean, with_std", [(True, True), (True, False), (False, True)])
def test_standard_scaler_inf_matches_sklearn(with_mean, with_std):
    X = _data()
    ours = DPStandardScaler(bounds=(-100, 100), epsilon=math.inf, with_mean=with_mean,
                            with_std=with_std).fit(X)
    ref = StandardScaler(with_mean=with_mean, with_std=with_std).fit(X)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.mean_, ref.mean_, rtol=0, atol=1e-8)
    if with_std:
        np.testing.assert_allclose(ours.var_, ref.var_, rtol=0, atol=1e-8)
        np.testing.assert_allclose(ours.scale_, ref.scale_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.inverse_transform(ours.transform(X)), X, atol=1e-8)


@pytest.mark.parametrize("feature_range", [(0, 1), (-3, 2)])
def test_minmax_inf_matches_sklearn(feature_range):
    X = _data()
    ref = MinMaxScaler(feature_range=feature_range).fit(X)
    ours = DPMinMaxScaler(feature_range, bounds=(-100, 100), quantile_range=(0, 1),
                          epsilon=math.inf).fit(X)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=0, atol=1e-8)
    for name in ["data_min_", "data_max_", "scale_", "min_"]:
        np.testing.assert_allclose(getattr(ours, name), getattr(ref, name), rtol=0, atol=1e-8)
    # From public bounds equal to the data's range: the same, with nothing spent.
    free = DPMinMaxScaler(feature_range, bounds=(X.min(0), X.max(0))).fit(X)
    np.testing.assert_allclose(free.transform(X), ref.transform(X), rtol=0, atol=1e-8)
    assert free.epsilon_spent_ == 0.0


@pytest.mark.parametrize("encode", ["onehot", "onehot-dense", "ordinal"])
def test_kbins_inf_matches_sklearn(encode):
    X = _data()
    ref_u = KBinsDiscretizer(n_bins=[3, 4, 5], encode=encode, strategy="uniform").fit(X)
    ours_u = DPKBinsDiscretizer([3, 4, 5], encode=encode, bounds=(X.min(0), X.max(0))).fit(X)
    # scikit-learn >= 1.7 asks for quantile_method; before it, its quantiles were numpy's
    # default ("linear") ones, the same as quantile_method="linear".
    linear = ({"quantile_method": "linear"}
              if "quantile_method" in inspect.signature(KBinsDiscretizer).parameters else {})
    ref_q = KBinsDiscretizer(n_bins=4, encode=encode, strategy="quantile", **linear).fit(X)
    ours_q = DPKBinsDiscretizer(4, encode=encode, strategy="quantile", epsilon=math.inf,
                                bounds=(X.min(0), X.max(0))).fit(X)
    for ours, ref in [(ours_u, ref_u), (ours_q, ref_q)]:
        a, b = ours.transform(X), ref.transform(X)
        if encode == "onehot":
            a, b = a.toarray(), b.toarray()
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-8)
        for e1, e2 in zip(ours.bin_edges_, ref.bin_edges_):
            np.testing.assert_allclose(e1, e2, rtol=0, atol=1e-8)
        np.testing.assert_array_equal(ours.get_feature_names_out(), ref.get_feature_names_out())
        np.testing.assert_allclose(ours.inverse_transform(ours.transform(X)),
                                   ref.inverse_transform(ref.transform(X)), atol=1e-8)


def test_histogram_inf_is_exact():
    X = _data()
    est = DPHistogramTransformer(bins=5, bounds=(-10, 20), epsilon=math.inf).fit(X)
    for j in range(X.shape[1]):
        counts, edges = np.histogram(X[:, j], bins=5, range=(-10, 20))
        np.testing.assert_array_equal(est.histograms_[j], counts)
        np.testing.assert_array_equal(est.bin_edges_[j], edges)
        idx = np.clip(np.searchsorted(edges, X[:, j], side="right") - 1, 0, 4)
        np.testing.assert_allclose(est.transform(X)[:, j], counts[idx] / X.shape[0])
    dens = DPHistogramTransformer(bins=5, bounds=(-10, 20), epsilon=math.inf,
                                  output="density").fit(X)
    np.testing.assert_allclose(dens.transform(X), est.transform(X) / 6.0)


# -- each fit charges once, with the expected curve -------------------------------------
def test_each_fit_charges_once_with_its_curve():
    X = _data(d=3)
    cases = [
        (DPStandardScaler(bounds=B, epsilon=0.5), _var_curve(0.5, 0.0, 3)),
        (DPStandardScaler(bounds=B, epsilon=0.5, delta=1e-6), _var_curve(0.5, 1e-6, 3)),
        (DPStandardScaler(bounds=B, epsilon=0.5, with_std=False), _mean_curve(0.5, 0.0, 3)),
        (DPStandardScaler(bounds=B, with_std=False, with_mean=False), RDPCurve.zero()),
        (DPMinMaxScaler(bounds=B), RDPCurve.zero()),
        (DPMinMaxScaler(bounds=B, quantile_range=(0.05, 0.95), epsilon=0.6),
         _quantile_curve(0.6, 0.0, 3, n_quantiles=2)),
        (DPKBinsDiscretizer(4, bounds=B), RDPCurve.zero()),
        (DPKBinsDiscretizer([3, 4, 5], bounds=B, strategy="quantile", epsilon=0.9),
         sum((_quantile_curve(0.3, 0.0, 1, n_quantiles=k) for k in (2, 3, 4)), RDPCurve.zero())),
        (DPHistogramTransformer(bounds=B, epsilon=0.8), _histogram_curve(0.8, 0.0, 3)),
        (DPStandardScaler(bounds=B, epsilon=math.inf), RDPCurve.non_private()),
    ]
    for est, curve in cases:
        fitted = assert_charges_once(est, X, expected_curve=curve, budget_epsilon=math.inf)
        if math.isfinite(est.epsilon) and curve.pure_epsilon > 0 and est.get_params().get(
                "delta", 0) == 0:
            # pure ε-DP fits spend exactly their epsilon (or 0 when they read nothing)
            assert fitted.epsilon_spent_ == pytest.approx(est.epsilon, rel=1e-9)
    # The 3 quantile edges of KBins with n_bins=[3, 4, 5] sum to 0.9 in pure DP.
    assert cases[7][1].pure_epsilon == pytest.approx(0.9)


# -- bad input costs nothing ------------------------------------------------------------
COMMON_BAD = [{"bounds": (1.0, -1.0)}, {"bounds": ([0, 0], [1, 1])}, {"bounds": (0, np.inf)},
              {"epsilon": 0.0}, {"epsilon": -1.0}]


@pytest.mark.parametrize("est, extra_bad", [
    (DPStandardScaler(bounds=B), [{"delta": 1.0}, {"delta": -0.1}, {"with_mean": "no"}]),
    (DPMinMaxScaler(bounds=B, quantile_range=(0.01, 0.99)),
     [{"quantile_range": (-0.1, 0.9)}, {"quantile_range": (0.2, 1.5)},
      {"quantile_range": (0.9, 0.1)}, {"feature_range": (1, 0)}]),
    (DPKBinsDiscretizer(bounds=B, strategy="quantile"),
     [{"n_bins": 0}, {"n_bins": -3}, {"n_bins": 1}, {"n_bins": 2.5}, {"encode": "bad"},
      {"strategy": "kmeans"}]),
    (DPHistogramTransformer(bounds=B),
     [{"bins": 0}, {"bins": -1}, {"output": "bad"}, {"delta": 1.0}, {"bounds": (1.0, 1.0)}]),
])
def test_bad_input_costs_nothing(est, extra_bad):
    X = _data(n=40)
    X_nan, X_inf = X.copy(), X.copy()
    X_nan[5, 1] = np.nan
    X_inf[0, 0] = -np.inf
    assert_bad_input_costs_nothing(est, X, bad_params=COMMON_BAD + extra_bad,
                                   bad_data=[(X_nan, None), (X_inf, None)])
    # Without public bounds (estimated in the fit) the same bad input costs nothing.
    no_bounds = [p for p in COMMON_BAD + extra_bad if "bounds" not in p]
    assert_bad_input_costs_nothing(est.set_params(bounds=None), X, bad_params=no_bounds,
                                   bad_data=[(X_nan, None), (X_inf, None)])


@pytest.mark.parametrize("est", [e for e in ESTIMATORS if math.isfinite(e.epsilon)
                                 and not isinstance(e, (DPMinMaxScaler, DPKBinsDiscretizer))
                                 or getattr(e, "strategy", "") == "quantile"
                                 or getattr(e, "quantile_range", None) is not None])
def test_refused_fit_fits_nothing(est):
    # fits that spend nothing (bounds-only) are never refused; the others are
    assert_refused_fit_fits_nothing(est, _data(n=40))


# -- without public bounds: private bounds in the fit's one charge -----------------------
def _share_curve(eps, delta, d, stat):
    """The documented curve: private bounds at share·ε composed with the statistic."""
    return _range.split_curve(eps, delta, d, stat)[2]


def test_default_fits_charge_once_with_the_documented_curve():
    X = _data(d=3)
    share = _range.BOUNDS_EPSILON_SHARE
    cases = [
        (DPStandardScaler(), _share_curve(1.0, 1e-5, 3, lambda e: _var_curve(e, 1e-5, 3))),
        (DPStandardScaler(epsilon=0.5, delta=0.0, with_std=False),
         _range._bounds_curve(share * 0.5, 0.0, 3) + _mean_curve((1 - share) * 0.5, 0.0, 3)),
        (DPStandardScaler(with_std=False, with_mean=False), RDPCurve.zero()),
        (DPMinMaxScaler(), _range._bounds_curve(1.0, 1e-5, 3)),
        (DPMinMaxScaler(epsilon=0.6, quantile_range=(0.05, 0.95)),
         _share_curve(0.6, 1e-5, 3, lambda e: _quantile_curve(e, 0.0, 3, n_quantiles=2))),
        (DPKBinsDiscretizer(4), _range._bounds_curve(1.0, 1e-5, 3)),
        (DPKBinsDiscretizer([3, 4, 5], strategy="quantile", epsilon=0.9, delta=0.0),
         _range._bounds_curve(share * 0.9, 0.0, 3)
         + sum((_quantile_curve((1 - share) * 0.3, 0.0, 1, n_quantiles=k) for k in (2, 3, 4)),
               RDPCurve.zero())),
        (DPHistogramTransformer(epsilon=0.8),
         _share_curve(0.8, 1e-5, 3, lambda e: _histogram_curve(e, 1e-5, 3))),
        (DPStandardScaler(epsilon=math.inf), RDPCurve.non_private()),
        (DPMinMaxScaler(epsilon=math.inf), RDPCurve.non_private()),
        (DPKBinsDiscretizer(epsilon=math.inf), RDPCurve.non_private()),
    ]
    for est, curve in cases:
        fitted = assert_charges_once(est, X, expected_curve=curve, budget_epsilon=math.inf)
        if est.get_params()["delta"] == 0:  # pure ε-DP: exactly epsilon, the parts add up
            assert fitted.epsilon_spent_ == pytest.approx(est.epsilon, rel=1e-5)
        elif math.isfinite(est.epsilon) and curve.pure_epsilon > 0:  # (ε, δ): at most epsilon
            assert fitted.epsilon_spent_ <= est.epsilon
    # the parts are as documented: share·ε on the bounds, the rest on the statistic
    assert cases[1][1].pure_epsilon == pytest.approx(0.5)
    assert cases[6][1].pure_epsilon == pytest.approx(0.9)


def test_default_bounds_are_fitted_and_clip_at_transform():
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(40, 10, 200_000), rng.integers(0, 2, 200_000), np.zeros(200_000)]
    sc = DPStandardScaler(random_state=0).fit(X)
    lower, upper = sc.bounds_
    # N(40, 10): 0.8% of the rows lie in each of the bins (8, 16] and (64, 128]
    assert lower.tolist()[1:] == [0.0, 0.0] and upper.tolist()[1:] == [1.0, 0.0]
    assert lower[0] in (8.0, 16.0) and upper[0] in (64.0, 128.0)
    # the statistics of the clipped data; with bounds (8, 128) (h = 60) the sum of
    # squares has noise of std about 7/0.5·1800·√2 ≈ 36,000 (Laplace, k = 7 sums at
    # ε ≈ 0.5), so var_ about 0.18 and scale_ about 0.009; a constant scales by 1
    clipped = np.clip(X, lower, upper)
    np.testing.assert_allclose(sc.mean_, clipped.mean(axis=0), atol=0.05)
    np.testing.assert_allclose(sc.scale_, [clipped[:, 0].std(), 0.5, 1.0], atol=0.05)
    # transform clips to bounds_ as the fit did: a row far outside maps as the bound does
    far = sc.transform([[1e9, -5.0, 3.0]])
    np.testing.assert_allclose(far, sc.transform([[upper[0], 0.0, 0.0]]))
    # and the scaler's output stays within the clipped box
    assert np.all(np.isfinite(sc.transform(X * 1e300)))


def test_public_bounds_also_clip_at_transform():
    sc = DPStandardScaler(bounds=(0, 10), epsilon=math.inf).fit(np.array([[0.0], [10.0]]))
    np.testing.assert_allclose(sc.transform([[20.0], [-5.0]]), [[1.0], [-1.0]])


@pytest.mark.parametrize("est", [DPStandardScaler(), DPMinMaxScaler(),
                                 DPKBinsDiscretizer(encode="onehot-dense"),
                                 DPKBinsDiscretizer(strategy="quantile", encode="ordinal"),
                                 DPHistogramTransformer()])
def test_default_fits_on_hard_columns(est):
    # constant, all-zero, huge, tiny and integer columns, from a pandas frame
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    n = 3000
    X = pd.DataFrame({"const": np.full(n, 7.0), "zero": np.zeros(n),
                      "huge": rng.uniform(1e14, 1e15, n), "tiny": rng.uniform(1e-8, 1e-7, n),
                      "int": rng.integers(-5, 6, n)})
    out = est.set_params(random_state=0).set_output(transform="pandas").fit_transform(X)
    assert out.shape[0] == n and np.all(np.isfinite(out.to_numpy()))
    lower, upper = est.bounds_
    assert np.all(lower <= upper)
    if isinstance(est, DPHistogramTransformer):  # a point range is widened, as numpy does
        assert (lower[1], upper[1]) == (-0.5, 0.5)
    else:
        assert lower[1] == upper[1] == 0.0  # all zero: the zero bin
    assert 2.0**46 <= lower[2] <= 2.0**47 and upper[2] == 2.0**50  # 1e14 < 2^47, 1e15 < 2^50


def test_minmax_default_range_is_private_and_close():
    rng = np.random.default_rng(1)
    X = np.c_[rng.uniform(3, 100, 50_000), rng.integers(0, 2, 50_000)]
    mm = DPMinMaxScaler(random_state=0).fit(X)
    assert mm.data_min_.tolist() == [2.0, 0.0] and mm.data_max_.tolist() == [128.0, 1.0]
    np.testing.assert_array_equal(mm.bounds_[0], mm.data_min_)


@pytest.mark.parametrize("est, ref", [
    (DPMinMaxScaler(epsilon=math.inf), MinMaxScaler()),
    (DPKBinsDiscretizer(epsilon=math.inf, encode="ordinal"),
     KBinsDiscretizer(encode="ordinal", strategy="uniform")),
    (DPStandardScaler(epsilon=math.inf), StandardScaler()),
])
def test_defaults_at_epsilon_inf_match_sklearn_without_bounds(est, ref):
    X = _data() * 1e3 - 7.0  # no bounds are given or needed
    np.testing.assert_allclose(est.fit_transform(X), ref.fit_transform(X), rtol=0, atol=1e-10)


def test_histogram_default_at_epsilon_inf_is_numpys():
    X = _data()
    est = DPHistogramTransformer(bins=5, epsilon=math.inf).fit(X)
    for j in range(X.shape[1]):
        counts, edges = np.histogram(X[:, j], bins=5)
        np.testing.assert_array_equal(est.histograms_[j], counts)
        np.testing.assert_allclose(est.bin_edges_[j], edges)


# -- noise matches the formula ----------------------------------------------------------
def test_histogram_noise_scale_is_laplace_d_over_epsilon():
    # d histograms at total ε: Laplace of scale d/ε on every count (sensitivity 1 each).
    X = np.zeros((50, 2))
    eps, d = 2.0, 2
    noise = []
    for seed in range(300):
        est = DPHistogramTransformer(bins=10, bounds=(0, 1), epsilon=eps, random_state=seed)
        est.fit(X)
        noise.append(np.concatenate([h - np.r_[50, np.zeros(9)] for h in est.histograms_]))
    noise = np.concatenate(noise)  # 6000 i.i.d. Laplace(d/ε)
    # Kolmogorov–Smirnov against Laplace(0, d/ε); reject only at p < 1e-4.
    assert stats.kstest(noise, stats.laplace(scale=d / eps).cdf).pvalue > 1e-4
    # And a scale twice as large is rejected (the test has power).
    assert stats.kstest(noise, stats.laplace(scale=2 * d / eps).cdf).pvalue < 1e-4


def test_standard_scaler_mean_noise_is_unbiased_and_scaled():
    # Constant data at the midpoint: the DP mean is c + noise/noisy n; its spread shrinks as 1/n.
    X = np.full((2000, 1), 3.0)
    means = np.array([DPStandardScaler(bounds=(0, 6), epsilon=1.0, with_std=False,
                                       random_state=s).fit(X).mean_[0] for s in range(400)])
    # Σ(x − c) has Laplace noise of scale 2·3/1 (k = 2 sums at ε/2, sensitivity 3):
    # mean − 3 ≈ Laplace(6)/2000, std √2·6/2000. Its sample std over 400 draws lies
    # within ±25% of that with overwhelming probability (std of the sample std ≈ 6% here).
    assert np.std(means) == pytest.approx(math.sqrt(2) * 6 / 2000, rel=0.25)
    assert abs(np.mean(means) - 3.0) < 5 * math.sqrt(2) * 6 / 2000 / math.sqrt(400)


def test_standard_scaler_variance_below_its_noise_is_floored_not_zero():
    # Few rows in wide public bounds at a small epsilon: the noise on the variance is about
    # the variance itself, and released variances below 0 were clamped to 0, whose scale of 1
    # left those features in their raw units (here hundreds of times the others'). They are
    # now floored at the std of their own noise (post-processing, as DPGaussianNB does), so
    # every scale stays in the data's units: true std 1000/√12 ≈ 289, noise floor ≈ 230.
    X = np.random.default_rng(0).uniform(0, 1000, size=(300, 5))
    scales = np.array([DPStandardScaler(bounds=(0, 1000), epsilon=0.1, random_state=s)
                       .fit(X).scale_ for s in range(20)])
    assert scales.min() > 100
    assert scales.max() <= 500  # the variance's own clamp, h² = 500²
    # With enough rows the floor is far below the variance: the release is unchanged.
    big = np.random.default_rng(1).uniform(0, 1000, size=(200_000, 2))
    sc = DPStandardScaler(bounds=(0, 1000), epsilon=1.0, random_state=0).fit(big)
    np.testing.assert_allclose(sc.scale_, big.std(axis=0), rtol=0.01)


def test_dp_fits_are_accurate_with_enough_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(2.0, 1.5, size=(100_000, 2))
    sc = DPStandardScaler(bounds=(-8, 12), epsilon=1.0, random_state=0).fit(X)
    np.testing.assert_allclose(sc.mean_, 2.0, atol=0.02)
    np.testing.assert_allclose(sc.scale_, 1.5, atol=0.02)
    mm = DPMinMaxScaler(bounds=(-8, 12), quantile_range=(0.01, 0.99), epsilon=1.0,
                        random_state=0).fit(X)
    np.testing.assert_allclose(mm.data_min_, np.quantile(X, 0.01, axis=0), atol=0.05)
    np.testing.assert_allclose(mm.data_max_, np.quantile(X, 0.99, axis=0), atol=0.05)
    kb = DPKBinsDiscretizer(4, encode="ordinal", strategy="quantile", bounds=(-8, 12),
                            epsilon=1.0, random_state=0).fit(X)
    counts = np.bincount(kb.transform(X)[:, 0].astype(int), minlength=4) / X.shape[0]
    np.testing.assert_allclose(counts, 0.25, atol=0.01)


def test_set_output_pandas_and_feature_names():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(_data(), columns=["a", "b", "c"])
    for est in [DPStandardScaler(bounds=B, random_state=0), DPMinMaxScaler(bounds=B),
                DPHistogramTransformer(bounds=B, random_state=0),
                DPKBinsDiscretizer(3, encode="onehot-dense", bounds=B)]:
        out = est.set_output(transform="pandas").fit_transform(X)
        assert isinstance(out, pd.DataFrame)
        assert list(out.columns) == list(est.get_feature_names_out())
    assert list(out.columns)[:3] == ["a_0.0", "a_1.0", "a_2.0"]


@pytest.fixture(autouse=True)
def _secure_takes_seeds_here(monkeypatch):
    # secure=True refuses a seed; scikit-learn's checks and the seeded comparisons in this
    # file need one: secure fits here read seeded bytes (seeded_secure of tests/_testing.py).
    from _testing import seeded_secure

    seeded_secure(monkeypatch)
