"""pandas, polars and dask give the same release for the same seed.

The dask runs use a real ``dask.distributed.LocalCluster`` (two worker
processes): the passes run on the workers and only partial sums come back.
Sums of floats are added in another order across partitions, so the released
values agree to floating-point round-off; counts and chosen keys exactly.
"""

import math

import numpy as np
import pandas as pd
import pytest

from skdp.analysis import PrivateTable, quantile

pl = pytest.importorskip("polars")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

BOUNDS = {"income": (0.0, 200_000.0), "age": (18.0, 90.0)}
SPEC = {"income": ["count", "mean", "std", "median"], "age": ["mean", quantile(0.25)]}


def _table(n=30_000, seed=0):
    rng = np.random.default_rng(seed)
    people = rng.integers(0, n // 4, n)
    region = np.array(["N", "S", "E", "W", "rare"])[
        rng.choice(5, n, p=[0.4, 0.3, 0.2, 0.0999, 0.0001])]
    df = pd.DataFrame({"person": people, "region": region, "band": people % 3,
                       "income": rng.lognormal(10.5, 0.6, n), "age": rng.uniform(18, 90, n)})
    df.loc[rng.random(n) < 0.03, "income"] = np.nan
    return df


@pytest.fixture(scope="module")
def df():
    return _table()


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _polars(df):
    return pl.DataFrame({c: df[c].to_numpy() for c in df.columns})


def _run(data, *, by=("region",), keys=None, spec=SPEC, epsilon=1.0, **table):
    t = PrivateTable(data, bounds=BOUNDS, random_state=11, **table)
    return t.groupby(list(by), keys=keys).agg(spec, epsilon=epsilon)


def _as_pandas(res, by):
    if isinstance(res, pd.DataFrame):
        return res
    # column by column: polars' to_pandas needs pyarrow, which skdp does not
    return pd.DataFrame({c: res[c].to_list() for c in res.columns}).set_index(list(by))


CASES = [
    {"keys": ["N", "S", "E", "W", "X"]},
    {"keys": None},
    {"keys": None, "privacy_unit": "person", "max_rows_per_unit": 2, "max_groups_per_unit": 2},
    {"by": ("region", "band"), "keys": {"region": ["N", "S"], "band": [0, 1, 2]},
     "privacy_unit": "person"},
]


@pytest.mark.parametrize("case", CASES, ids=["public", "private keys", "privacy unit", "two keys"])
def test_polars_and_dask_give_the_pandas_release(df, client, case):
    by = case.get("by", ("region",))
    want = _run(df, **case)
    got_polars = _as_pandas(_run(_polars(df), **case), by)
    got_dask = _run(dd.from_pandas(df, npartitions=5), **case)
    for got in (got_polars, got_dask):
        assert list(got.index) == list(want.index)
        assert list(got.columns) == list(want.columns)
        np.testing.assert_array_equal(got["too_few_rows"], want["too_few_rows"])
        np.testing.assert_allclose(got.drop(columns="too_few_rows").to_numpy(float),
                                   want.drop(columns="too_few_rows").to_numpy(float),
                                   rtol=1e-9)
    if case["keys"] is None:
        assert "rare" not in list(want.index)


def test_dask_exact_release_and_private_bounds(df, client):
    ddf = dd.from_pandas(df, npartitions=4)
    got = PrivateTable(ddf, random_state=2).groupby("region").agg(
        {"income": ["count", "sum"]}, epsilon=math.inf)
    want = df.groupby("region").agg({"income": ["count", "sum"]})
    np.testing.assert_allclose(got["income_count"], want[("income", "count")])
    assert PrivateTable(ddf).released_bounds == {}  # exact ranges are not kept
    t_dask = PrivateTable(ddf, random_state=4)
    t_pandas = PrivateTable(df, random_state=4)
    a = t_dask.mean("age", epsilon=1.0)
    b = t_pandas.mean("age", epsilon=1.0)
    assert t_dask.released_bounds == t_pandas.released_bounds
    assert a == pytest.approx(b, rel=1e-12)


def test_polars_null_keys_and_values_are_skipped():
    data = pl.DataFrame({"g": ["a", None, "a", "b"], "x": [1.0, 2.0, None, float("nan")]})
    res = PrivateTable(data, bounds={"x": (0, 10)}).groupby("g").agg(
        {"x": ["count", "mean"]}, epsilon=math.inf)
    assert res["g"].to_list() == ["a", "b"]
    assert res["x_count"].to_list() == [1.0, 0.0]
    assert res["x_mean"][0] == 1.0 and math.isnan(res["x_mean"][1])


def test_histograms_on_every_engine(df, client):
    def run(data):
        t = PrivateTable(data, bounds=BOUNDS, random_state=5, privacy_unit="person",
                         max_rows_per_unit=2)
        numeric = t.groupby("region", keys=["N", "S"]).histogram("age", bins=4, epsilon=1.0)
        categorical = t.groupby("band", keys=[0, 1, 2]).histogram(
            "region", categories=["N", "S", "E"], epsilon=1.0)
        return numeric, categorical

    want = run(df)
    got_polars = [_as_pandas(r, by) for r, by in zip(run(_polars(df)), (["region"], ["band"]))]
    got_dask = list(run(dd.from_pandas(df, npartitions=3)))
    for got in (got_polars, got_dask):
        for g, w in zip(got, want):
            assert list(g.columns) == list(w.columns)
            np.testing.assert_allclose(g.to_numpy(float), w.to_numpy(float), rtol=1e-9)
