"""Dask fits: nothing after the charge depends on a row, and empty chunks change nothing.

- A graph whose values change after the finiteness pass (one entry becomes
  +inf, -inf or NaN in every later compute) gives the same errors (none) and
  the same warnings as the clean graph, and one charge.
- Chunks of zero rows, and partitions emptied by a filter on the values,
  give the in-memory fit of the same rows for the same seed.
"""

import warnings

import dask  # the dask extra (in the test extra): these tests fail, never skip, without it
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from skdp import PrivacyBudget
from skdp.cluster import DPKMeans
from skdp.decomposition import DPPCA
from skdp.ensemble import DPHistGradientBoostingClassifier, DPHistGradientBoostingRegressor
from skdp.impute import DPSimpleImputer
from skdp.linear_model import DPLinearRegression, DPLogisticRegression
from skdp.naive_bayes import DPGaussianNB
from skdp.preprocessing import DPMinMaxScaler, DPStandardScaler

RNG = np.random.default_rng(0)
X = RNG.normal(size=(400, 3))
Y_CLASS = (X[:, 0] > 0).astype(int)
Y_REAL = X @ [1.0, 2.0, 3.0] + RNG.normal(size=400)
MODELS = {
    "scaler": (lambda: DPStandardScaler(epsilon=1.0, random_state=3), None),
    "nb": (lambda: DPGaussianNB(epsilon=1.0, classes=[0, 1], random_state=3), Y_CLASS),
    "linreg": (lambda: DPLinearRegression(epsilon=1.0, random_state=3), Y_REAL),
    "logreg": (lambda: DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=3), Y_CLASS),
    "pca": (lambda: DPPCA(n_components=2, epsilon=1.0, random_state=3), None),
    "kmeans": (lambda: DPKMeans(2, epsilon=1.0, random_state=3), None),
    "minmax": (lambda: DPMinMaxScaler(epsilon=1.0, random_state=3), None),
    "imputer": (lambda: DPSimpleImputer(epsilon=1.0, random_state=3), None),
    "boosting": (lambda: DPHistGradientBoostingClassifier(classes=[0, 1], max_iter=2,
                                                          random_state=3), Y_CLASS),
    "boosting_reg": (lambda: DPHistGradientBoostingRegressor(max_iter=2, random_state=3), Y_REAL),
}
ATTRS = ("mean_", "scale_", "theta_", "var_", "coef_", "intercept_", "components_",
         "cluster_centers_", "data_min_", "data_max_", "statistics_", "bin_edges_",
         "feature_importances_", "bounds_y_")


def _flaky(bad, calls):
    def block():
        calls.append(1)
        out = X[:200].copy()
        if len(calls) > 1:  # the first compute is the finiteness pass before the charge
            out[7, 1] = bad
        return out

    first = da.from_delayed(dask.delayed(block)(), shape=(200, 3), dtype=float)
    return da.concatenate([first, da.from_array(X[200:], chunks=(200, 3))])


def _fit(name, X_, y_):
    make, _ = MODELS[name]
    budget = PrivacyBudget(100.0, 1e-5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = make().set_params(budget=budget)
        model.fit(X_) if y_ is None else model.fit(X_, y_)
    return model, sorted({f"{w.category.__name__}: {w.message}" for w in caught}), len(budget)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_values_changing_after_the_charge_raise_and_warn_nothing_new(name, bad):
    target = MODELS[name][1]
    y_ = None if target is None else da.from_array(target, chunks=200)
    with dask.config.set(scheduler="synchronous"):
        _, clean, _ = _fit(name, _flaky(0.0, []), y_)
        calls = []
        _, flaky, n_charges = _fit(name, _flaky(bad, calls), y_)
    assert len(calls) > 1  # the changed value did reach a pass after the charge
    assert flaky == clean and n_charges == 1


@pytest.mark.parametrize("name", sorted(MODELS))
def test_empty_chunks_and_partitions_give_the_in_memory_fit(name):
    target = MODELS[name][1]
    chunks = (100, 0, 150, 150, 0)
    frame = pd.DataFrame(X, columns=list("abc")).assign(y=target if target is not None else 0,
                                                         k=np.arange(400))
    kept = frame[(frame.k < 100) | (frame.k >= 200)]
    lazy_frame = dd.from_pandas(frame, npartitions=4)
    lazy_frame = lazy_frame[(lazy_frame.k < 100) | (lazy_frame.k >= 200)]  # partition 2 empty
    inputs = [
        (da.from_array(X, chunks=(chunks, 3)),
         None if target is None else da.from_array(target, chunks=(chunks,)), X, target),
        (lazy_frame[list("abc")], None if target is None else lazy_frame["y"],
         kept[list("abc")].to_numpy(), None if target is None else kept["y"].to_numpy()),
    ]
    with dask.config.set(scheduler="synchronous"):
        for X_lazy, y_lazy, X_mem, y_mem in inputs:
            lazy, _, _ = _fit(name, X_lazy, y_lazy)
            memory, _, _ = _fit(name, X_mem, y_mem)
            compared = [a for a in ATTRS if hasattr(memory, a)]
            assert compared
            for attr in compared:
                np.testing.assert_allclose(getattr(lazy, attr), getattr(memory, attr),
                                           rtol=1e-9, atol=1e-12, err_msg=f"{name}.{attr}")
