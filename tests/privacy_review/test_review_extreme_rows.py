"""Independent review: one finite but extreme row (or a badly typed input).

Each test documents a confirmed defect, failed before its fix, and passes
now (the fixes: DP scalers map finite input to finite output; regressors
refuse a non-numeric target before the charge; the secure sums' integer
bounds are Python ints).

- A DP transformer's ``transform`` can turn a finite row into ±inf
  (DPStandardScaler divides by ``scale_``; DPMinMaxScaler multiplies by a
  large ``scale_`` when the bounds are narrow). Inside a Pipeline the next DP
  step then refuses its input **after** the transformer's charge, and a
  DPGridSearchCV over such a pipeline raises after the search's charge. One
  row decides whether the release is a model or an exception: an unbounded
  privacy loss, and the budget spent is lost.
- DPLinearRegression and DPSGDRegressor accept a target of strings, bytes or
  datetimes (``y_numeric=True`` converts only object arrays) and crash after
  the charge: invalid input must cost nothing.
- ``secure=True`` sums at ε ≳ 1e16: the grid-integer bounds overflow int64 and
  the integer sensitivity becomes 1, so the discrete Laplace noise is ~1000
  times smaller than the charged curve assumes.
"""

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from skdp import PrivacyBudget, stats
from skdp.linear_model import DPLinearRegression, DPLogisticRegression, DPSGDRegressor
from skdp.model_selection import DPGridSearchCV
from skdp.naive_bayes import DPGaussianNB
from skdp.preprocessing import DPMinMaxScaler, DPStandardScaler
from skdp.stats import _noise


@pytest.fixture(autouse=True)
def _secure_takes_seeds_here(monkeypatch):
    # secure=True refuses a seed; the seeded secure calls in this file read seeded bytes
    # through the same samplers (seeded_secure of tests/_testing.py).
    from _testing import seeded_secure

    seeded_secure(monkeypatch)


def _data(n=200, seed=0, low=-1.0, high=1.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(low, high, size=(n, 2))
    y = (X[:, 0] > (low + high) / 2).astype(int)
    return X, y


def _add_row(X, y, value):
    return np.vstack([X, np.full((1, X.shape[1]), value)]), np.append(y, 1)


@pytest.mark.parametrize("value", [1.7e308, -1.7e308])
def test_standard_scaler_pipeline_survives_extreme_row(value):
    X, y = _add_row(*_data(), value)
    budget = PrivacyBudget(100, 1e-3)
    pipe = make_pipeline(
        DPStandardScaler(bounds=(-1, 1), budget=budget, random_state=0),
        DPLogisticRegression(classes=[0, 1], budget=budget, random_state=0),
    )
    pipe.fit(X, y)  # raises "Input X contains infinity" on this neighbour only
    assert len(budget) == 2
    assert np.all(np.isfinite(pipe[0].transform(X)))


def test_minmax_scaler_pipeline_survives_extreme_row():
    X, y = _add_row(*_data(low=0.0, high=1e-3), 1e306)
    budget = PrivacyBudget(100, 1e-3)
    pipe = make_pipeline(
        DPMinMaxScaler(bounds=(0, 1e-3), budget=budget, random_state=0),
        DPLogisticRegression(classes=[0, 1], budget=budget, random_state=0),
    )
    pipe.fit(X, y)
    assert len(budget) == 2


def test_search_outcome_not_decided_by_one_extreme_row():
    X, y = _data(300)
    outcomes = []
    for Xd, yd in [(X, y), _add_row(X, y, 1.7e308)]:
        budget = PrivacyBudget(100, 1e-3)
        pipe = make_pipeline(DPStandardScaler(bounds=(-1, 1)),
                             DPGaussianNB(bounds=(-3, 3), classes=[0, 1]))
        search = DPGridSearchCV(pipe, {"dpgaussiannb__epsilon": [0.5, 1.0]}, epsilon=None,
                                n_runs_mean=3,
                                budget=budget, random_state=0)
        try:
            search.fit(Xd, yd)
            outcomes.append("model")
        except ValueError:
            outcomes.append("raised")
    assert outcomes == ["model", "model"]


@pytest.mark.parametrize("make", [
    lambda b: DPLinearRegression(bounds_X=(-1, 1), bounds_y=(-5, 5), budget=b, random_state=0),
    lambda b: DPSGDRegressor(bounds_y=(-5, 5), max_iter=1, budget=b, random_state=0),
], ids=["DPLinearRegression", "DPSGDRegressor"])
@pytest.mark.parametrize("y", [np.array(["1.5", "2"] * 10), np.arange(20).astype("datetime64[D]")],
                         ids=["str", "datetime64"])
def test_regressor_non_numeric_target_refused_before_charge(make, y):
    X, _ = _data(20)
    budget = PrivacyBudget(100, 1e-3)
    with pytest.raises((ValueError, TypeError)):
        make(budget).fit(X, y)
    assert len(budget) == 0


def test_secure_sum_noise_matches_curve_at_huge_epsilon(monkeypatch):
    scales = []
    original = _noise.sample_discrete_laplace

    def spy(scale, *args, **kwargs):
        scales.append(float(scale))
        return original(scale, *args, **kwargs)

    monkeypatch.setattr(_noise, "sample_discrete_laplace", spy)
    epsilon = 1e17
    stats.sum(np.full(10, 0.5), epsilon=epsilon, bounds=(0, 1), secure=True, random_state=0)
    # Grid g = 2^floor(log2(min(1/ε, 1)/1024)) (_secure_sums); the integer sensitivity is
    # rint(1/g) and the discrete Laplace scale for one sum is that over ε (CKS20 Sec. 2).
    grid = 2.0 ** np.floor(np.log2(min(1.0 / epsilon, 1.0) / 1024))
    expected = (1.0 / grid) / epsilon
    assert scales[0] == pytest.approx(expected, rel=1e-9)
