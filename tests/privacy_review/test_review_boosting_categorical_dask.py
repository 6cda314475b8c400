"""Categorical features of the boosting on dask rows (f74e4f7, 3ba5abe): a review.

The dask fit's codes are the in-memory codes, so its trees are the in-memory
trees. A pandas nullable numeric column (``Int64``, ``Float64``,
``boolean``, with ``pd.NA``) beside a ``Categorical`` one was taken by the
dask fit (each partition's column read as float64 with NaN), while the
in-memory fit and every predict (which run the in-memory checks on each
partition) refused the frame: scikit-learn's ``validate_data`` casts a frame
holding a pandas extension dtype to float64 as a whole, the Categorical's
strings too ("Cannot cast str dtype to float64"). So a model fitted on dask
could not predict its own rows. The nullable columns are now read as float64
with NaN for the missing values (from their dtypes alone), in memory as on
dask.

Also checked, and found as claimed: partitions whose Categorical dtypes
differ (order, an extra category) give the in-memory codes, and a value
outside the public categories that appears after the charge takes the
missing code in every pass, without raising.
"""

import warnings

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from skdp.ensemble import DPHistGradientBoostingClassifier, DPHistGradientBoostingRegressor

RNG = np.random.default_rng(11)
N = 300
COLOUR = pd.Categorical(RNG.choice(["red", "green", "blue", None], N),
                        categories=["red", "green", "blue"])
COUNT = RNG.integers(-3, 4, N)
Y = ((COUNT > 0) ^ (np.asarray(COLOUR) == "red")).astype(int)


def _frame(dtype):
    values = {"Int64": COUNT, "Float64": COUNT + 0.5, "boolean": COUNT > 0}[dtype]
    column = pd.array(values, dtype=dtype)
    column[np.random.default_rng(12).random(N) < 0.1] = pd.NA
    return pd.DataFrame({"count": column, "colour": COLOUR})


def _trees(model):
    return [tree for trees in model._predictors for tree in trees]


@pytest.mark.parametrize("estimator", [DPHistGradientBoostingClassifier,
                                       DPHistGradientBoostingRegressor])
@pytest.mark.parametrize("dtype", ["Int64", "Float64", "boolean"])
def test_nullable_numeric_beside_a_categorical_as_in_memory(estimator, dtype):
    frame = _frame(dtype)
    extra = {"classes": [0, 1]} if estimator is DPHistGradientBoostingClassifier else {
        "bounds_y": (0, 1)}
    make = lambda: estimator(bounds=(-4, 4), max_iter=2, max_depth=2,  # noqa: E731
                             random_state=3, **extra)
    lazy = dd.from_pandas(frame, npartitions=3)
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = make().fit(frame, Y)
        got = make().fit(lazy, dd.from_pandas(pd.Series(Y), npartitions=3))
        # the same public categories and codes: the in-memory floats with NaN
        plain = frame.astype({"count": "float64"})
        assert np.array_equal(ref._validate_predict_data(frame),
                              ref._validate_predict_data(plain), equal_nan=True)
        for a, b in zip(_trees(ref), _trees(got), strict=True):
            np.testing.assert_array_equal(a.feature, b.feature)
            np.testing.assert_array_equal(a.threshold, b.threshold)
            np.testing.assert_allclose(a.value, b.value, rtol=1e-9, atol=1e-12)
        out = got.predict(lazy)
        assert isinstance(out, da.Array)  # lazy, and computes
        np.testing.assert_allclose(out.compute(), ref.predict(frame), rtol=1e-9)
        assert any((tree.feature == 0).any() for tree in _trees(ref))  # splits on the count


_BUDGET = []


def _partition(i, frame):
    """Partition i of ``frame``; the second with its own category dtype (other order, one
    more category), and from the charge on three of its rows in that extra category."""
    part = frame.iloc[i * 300:(i + 1) * 300].copy()
    if i == 1:
        part["colour"] = part["colour"].cat.reorder_categories(
            ["blue", "red", "green"]).cat.add_categories(["violet"])
        if len(_BUDGET[0]):  # after the charge: values outside the public categories
            part.iloc[:3, 1] = "violet"
    return part


def test_partition_dtypes_and_a_category_outside_after_the_charge():
    # Each partition's codes come from its own dtype's categories, matched to the public
    # ones (the metadata's) by value; a value outside them that appears after the checks
    # takes the missing code in every pass (nothing raises), as the in-memory model sends
    # a category unknown at fit: the trees are those of the rows with these values missing.
    rng = np.random.default_rng(5)
    colour = rng.choice(["red", "green", "blue"], 600)
    a = rng.normal(size=600)
    y = ((a > 0) ^ (colour == "red")).astype(int)
    frame = pd.DataFrame({"a": a, "colour": pd.Categorical(colour,
                                                           categories=["red", "green", "blue"])})
    from skdp import PrivacyBudget

    _BUDGET[:] = [PrivacyBudget(5.0, 1e-5)]
    lazy = dd.from_map(_partition, [0, 1], frame=frame, meta=frame.iloc[:0],
                       enforce_metadata=False)
    make = lambda budget=None: DPHistGradientBoostingClassifier(  # noqa: E731
        classes=[0, 1], bounds=(-4, 4), max_iter=2, max_depth=2, random_state=1, budget=budget)
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = make(_BUDGET[0]).fit(lazy, y)
        missing = frame.copy()
        missing.iloc[300:303, 1] = np.nan
        ref = make().fit(missing, y)
        plain = make().fit(frame, y)
    assert len(_BUDGET[0]) == 1
    for a_, b_ in zip(_trees(ref), _trees(got), strict=True):
        np.testing.assert_array_equal(a_.feature, b_.feature)
        np.testing.assert_array_equal(a_.threshold, b_.threshold)
        np.testing.assert_allclose(a_.value, b_.value, rtol=1e-9, atol=1e-12)
    assert any(not np.array_equal(u.value, v.value)  # the three rows made a difference
               for u, v in zip(_trees(ref), _trees(plain)))
