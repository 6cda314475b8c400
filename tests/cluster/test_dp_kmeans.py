import math

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp.accounting import calibrate_noise_multiplier, gaussian_rdp
from skdp.cluster import DPKMeans
from skdp.stats._noise import _noise_multiplier
from skdp.stats._range import split_curve
from _testing import (
    assert_bad_input_costs_nothing,
    assert_charges_once,
    assert_refused_fit_fits_nothing,
)

B = (-10.0, 10.0)
MEANS = np.array([[-3.0, -3.0], [0.0, 3.0], [3.0, -1.0]])


def _expected_failed(est):
    if est.epsilon == math.inf:
        return {}
    return {"check_clustering": "reads labels_, which a private fit does not store (the "
            "training rows' labels are one output per person), and asks an adjusted Rand "
            "index > 0.4 on 50 rows, too few for the noise at epsilon=1 "
            "(test_dp_fit_finds_the_centres checks accuracy on enough rows)"}


@parametrize_with_checks(
    [DPKMeans(), DPKMeans(epsilon=math.inf), DPKMeans(bounds=B, random_state=0),
     DPKMeans(bounds=B, epsilon=math.inf, max_iter=20)],
    expected_failed_checks=_expected_failed,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(n_per=5000, seed=0, sd=0.5):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(m, sd, size=(n_per, 2)) for m in MEANS])


@pytest.mark.parametrize("bounds", [None, (-20.0, 20.0)])
def test_epsilon_inf_matches_sklearn(bounds):
    X = _data(300, sd=1.5)
    init = MEANS + np.array([1.0, -0.5])
    ours = DPKMeans(3, init=init, max_iter=4, bounds=bounds, epsilon=math.inf).fit(X)
    ref = KMeans(3, init=init, n_init=1, max_iter=4, algorithm="lloyd", tol=0).fit(X)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, atol=1e-10)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), atol=1e-10)
    assert ours.epsilon_spent_ == math.inf


def test_charged_curve_comes_from_parameters_not_data():
    z = calibrate_noise_multiplier(0.8, 1e-5)
    for init, steps in [("private", 6), ("random", 5), (MEANS, 5)]:
        expected = steps * gaussian_rdp(z * math.sqrt(steps))
        est = DPKMeans(3, init=init, max_iter=5, bounds=B, epsilon=0.8)
        a = assert_charges_once(est, _data(100, 0), expected_curve=expected)
        b = assert_charges_once(est, _data(7, 1) * 3, expected_curve=expected)
        assert a.epsilon_spent_ == pytest.approx(0.8, rel=1e-4)
        assert b.epsilon_spent_ == a.epsilon_spent_
    *_, split = split_curve(0.8, 1e-5, 2, lambda e: 6 * gaussian_rdp(
        _noise_multiplier(e, 1e-5) * math.sqrt(6)))
    c = assert_charges_once(DPKMeans(3, epsilon=0.8), _data(100), expected_curve=split)
    assert c.epsilon_spent_ <= 0.8 * (1 + 1e-9)


def test_bad_input_costs_nothing():
    X = _data(50)
    nan_X = X.copy()
    nan_X[3, 1] = np.nan
    inf_X = X.copy()
    inf_X[0, 0] = -np.inf
    assert_bad_input_costs_nothing(
        DPKMeans(3, bounds=B), X,
        bad_params=[{"epsilon": 0}, {"epsilon": -1.0}, {"delta": 0.0}, {"delta": 1.0},
                    {"n_clusters": 0}, {"n_clusters": 2.5}, {"max_iter": 0},
                    {"max_iter": True}, {"init": "k-means++"}, {"init": np.zeros((2, 2))},
                    {"init": np.full((3, 2), np.nan)}, {"bounds": ([0, 0, 0], [1, 1, 1])},
                    {"bounds": (1, 0)}],
        bad_data=[(nan_X, None), (inf_X, None), (X[:, :, None], None)],
    )


def test_refused_fit_fits_nothing():
    assert_refused_fit_fits_nothing(DPKMeans(3, bounds=B), _data(50))
    assert_refused_fit_fits_nothing(DPKMeans(3), _data(50))


def test_dp_fit_finds_the_centres():
    X = _data()
    km = DPKMeans(3, bounds=B, epsilon=1.0, random_state=0).fit(X)
    # Six Gaussian steps of multiplier z·√6 ≈ 9.1 (z ≈ 3.73 at epsilon=1): the sums'
    # noise std is 9.1·H/√(√2/(1 + √2)) ≈ 9.1·14.1/0.77 ≈ 168 per coordinate
    # (H = 10·√2), so a centre of 5000 rows is off by about 168/5000 ≈ 0.034
    # (plus a sampling sd of 0.5/√5000 ≈ 0.007); 0.2 is about 6 such sds.
    found = km.cluster_centers_[np.argsort(km.cluster_centers_[:, 0])]
    np.testing.assert_allclose(found, MEANS, atol=0.2)
    ref = KMeans(3, n_init=1, random_state=0).fit(X)
    assert _inertia(X, km.cluster_centers_) <= 1.05 * ref.inertia_
    assert not hasattr(km, "labels_") and not hasattr(km, "inertia_")


def _inertia(X, centers):
    return float(np.min(((X[:, None, :] - centers[None]) ** 2).sum(axis=2), axis=1).sum())


def test_fixed_seed_reproduces_and_fit_predict_stores_nothing():
    X = _data(500)
    a = DPKMeans(3, bounds=B, random_state=5)
    labels = a.fit_predict(X)
    b = DPKMeans(3, bounds=B, random_state=5).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(labels, b.predict(X))
    assert not hasattr(a, "labels_")


def test_predict_clips_rows_as_the_fit_did():
    km = DPKMeans(3, bounds=(-4, 4), epsilon=math.inf, init=MEANS).fit(_data(200))
    np.testing.assert_allclose(km.transform([[100.0, 3.0]]), km.transform([[4.0, 3.0]]))
