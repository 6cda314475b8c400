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
from skdp.stats._core import _histogram_curve, _mean_curve, _quantile_curve, _var_curve
from skdp.utils._testing import (
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


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: {})
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
    ref_q = KBinsDiscretizer(n_bins=4, encode=encode, strategy="quantile",
                             quantile_method="linear").fit(X)
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
COMMON_BAD = [{"bounds": None}, {"bounds": (1.0, -1.0)}, {"bounds": ([0, 0], [1, 1])},
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


@pytest.mark.parametrize("est", [e for e in ESTIMATORS if math.isfinite(e.epsilon)
                                 and not isinstance(e, (DPMinMaxScaler, DPKBinsDiscretizer))
                                 or getattr(e, "strategy", "") == "quantile"
                                 or getattr(e, "quantile_range", None) is not None])
def test_refused_fit_fits_nothing(est):
    # fits that spend nothing (bounds-only) are never refused; the others are
    assert_refused_fit_fits_nothing(est, _data(n=40))


def test_missing_bounds_message():
    with pytest.raises(ValueError, match="never reads bounds"):
        DPStandardScaler().fit(_data())


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
