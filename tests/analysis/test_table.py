"""PrivateTable and GroupBy on pandas: results, the charge, errors before it, accuracy."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp import BudgetExceededError, PrivacyBudget
from skdp.analysis import PrivateTable, SmallGroupWarning, quantile
from skdp.analysis._aggregates import n_bins

BOUNDS = {"income": (0.0, 200_000.0), "age": (18.0, 90.0)}


def _table(n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "person": rng.integers(0, n // 3, n),
        "region": rng.choice(["N", "S", "E", "W"], n, p=[0.4, 0.3, 0.2, 0.1]),
        "sex": rng.choice(["f", "m"], n),
        "income": rng.lognormal(10.5, 0.6, n),
        "age": rng.uniform(18, 90, n),
    })
    df.loc[rng.random(n) < 0.05, "income"] = np.nan
    df.loc[0, "income"] = 1e9  # clipped to the bounds
    return df


@pytest.fixture(scope="module")
def df():
    return _table()


def test_infinite_epsilon_is_pandas_on_clipped_values(df):
    t = PrivateTable(df, bounds=BOUNDS, random_state=0)
    spec = {"income": ["count", "sum", "mean", "var", "std"], "age": ["mean", "std"]}
    got = t.groupby("region", keys=["E", "N", "S", "W"]).agg(spec, epsilon=math.inf)
    clipped = df.assign(income=df.income.clip(*BOUNDS["income"]))
    want = clipped.groupby("region").agg(spec)
    for column, aggs in spec.items():
        for agg in aggs if isinstance(aggs, list) else [aggs]:
            np.testing.assert_allclose(got[f"{column}_{agg}"].to_numpy(),
                                       want[(column, agg)].to_numpy(), rtol=1e-9)
    assert not got["too_few_rows"].any()
    np.testing.assert_array_equal(t.groupby("region").count(epsilon=math.inf)["count"],
                                  df.groupby("region").size().to_numpy())


def test_infinite_epsilon_quantiles_are_in_the_bin_of_the_value(df):
    """Without noise a quantile is the midpoint of the bin holding the t-th value, t = round(qN).

    Computed here from the sorted values: bin j's loss is t's distance to
    [#{x < e_j}, #{x < e_(j+1)}], and the release is the middle of the bins of least loss.
    """
    t = PrivateTable(df, bounds=BOUNDS, random_state=0)
    got = t.groupby("region").agg({"income": ["median", quantile(0.9)]}, epsilon=math.inf)
    clipped = df.income.clip(*BOUNDS["income"])
    edges = np.linspace(*BOUNDS["income"], n_bins(4) + 1)
    for q, name in ((0.5, "income_median"), (0.9, "income_q0.9")):
        for region, value in got[name].items():
            s = np.sort(clipped[df.region == region].dropna().to_numpy())
            rank = np.floor(q * s.size + 0.5)
            below = np.searchsorted(s, edges[:-1], "left")
            above = np.r_[np.searchsorted(s, edges[1:-1], "left"), s.size]
            loss = np.maximum(np.maximum(below - rank, rank - above), 0)
            mids = ((edges[:-1] + edges[1:]) / 2)[loss == loss.min()]
            assert value == pytest.approx((mids[0] + mids[-1]) / 2, rel=1e-12)
            assert abs(value - np.quantile(s, q)) < 0.005 * BOUNDS["income"][1]


def test_a_quantile_of_tied_values_stays_in_their_bin():
    df = pd.DataFrame({"g": ["a", "b"] * 500, "hours": [40.0, 20.0] * 500})
    t = PrivateTable(df, bounds={"hours": (0, 99)}, random_state=0)
    res = t.groupby("g", keys=["a", "b"]).agg({"hours": ["median", quantile(0.9)]},
                                              epsilon=1.0)
    half_bin = 99 / n_bins(2) / 2
    np.testing.assert_allclose(res["hours_median"], [40, 20], atol=half_bin)
    np.testing.assert_allclose(res["hours_q0.9"], [40, 20], atol=half_bin)


def test_one_charge_per_query_whatever_the_number_of_groups(df):
    budget = PrivacyBudget(10.0, 1e-5)
    t = PrivateTable(df, budget=budget, bounds=BOUNDS, random_state=0)
    t.groupby("region", keys=["N", "S", "E", "W"]).agg({"income": ["mean", "median"]},
                                                       epsilon=1.0)
    t.groupby(["region", "sex"], keys={"region": ["N", "S", "E", "W"], "sex": ["f", "m"]}
              ).agg({"income": ["mean", "median"]}, epsilon=1.0)
    t.agg({"income": ["mean", "median"]}, epsilon=1.0)
    assert len(budget) == 3
    eps = [c.epsilon for c in budget.ledger]
    # parallel composition: 4 groups, 8 groups and the whole table cost the same
    np.testing.assert_allclose(eps, eps[0], rtol=1e-12)
    assert 0.99 < eps[0] <= 1.0 + 1e-9
    assert "region" in budget.ledger[0].label and "income: mean, median" in budget.ledger[0].label


def test_result_frame(df):
    t = PrivateTable(df, bounds=BOUNDS, random_state=1)
    keys = {"region": ["N", "S"], "sex": ["f", "m", "x"]}
    with pytest.warns(SmallGroupWarning):
        res = t.groupby(["region", "sex"], keys=keys).agg(
            {"income": ["mean", "median"], "age": "mean"}, epsilon=1.0, intervals=True)
    assert isinstance(res, pd.DataFrame)
    assert res.index.names == ["region", "sex"]
    assert list(res.index) == [(r, s) for r in ["N", "S"] for s in ["f", "m", "x"]]
    assert list(res.columns) == [
        "income_mean", "income_mean_lower", "income_mean_upper",
        "income_median", "income_median_lower", "income_median_upper",
        "age_mean", "age_mean_lower", "age_mean_upper", "too_few_rows"]
    # the absent key "x" is flagged and its mean clipped to the bounds, not silently wrong
    assert res["too_few_rows"].tolist() == [False, False, True, False, False, True]
    assert res["income_mean"].between(*BOUNDS["income"]).all()
    assert (res["income_mean_lower"] <= res["income_mean"]).all()
    assert (res["income_mean"] <= res["income_mean_upper"]).all()
    assert res["income_median_lower"].isna().all()


def test_table_queries_return_numbers(df):
    t = PrivateTable(df, bounds=BOUNDS, random_state=0)
    n = t.count(epsilon=1.0)
    assert isinstance(n, float) and abs(n - len(df)) < 50
    assert abs(t.mean("age", epsilon=1.0) - df.age.mean()) < 1.0
    assert abs(t.median("age", epsilon=1.0) - df.age.median()) < 1.0
    assert abs(t.quantile("age", 0.25, epsilon=1.0) - df.age.quantile(0.25)) < 1.0
    res = t.agg({"age": ["mean", "std"]}, epsilon=1.0)
    assert list(res.columns) == ["age_mean", "age_std", "too_few_rows"] and len(res) == 1


def test_nan_values_are_skipped_and_counted_privately(df):
    t = PrivateTable(df, bounds=BOUNDS, random_state=0)
    res = t.agg({"income": ["count", "mean"]}, epsilon=5.0)
    assert abs(res["income_count"][0] - df.income.notna().sum()) < 20
    assert abs(res["income_count"][0] - len(df)) > 500  # not the count of rows
    clipped_mean = df.income.clip(*BOUNDS["income"]).mean()
    assert abs(res["income_mean"][0] - clipped_mean) < 500


def test_public_keys_absent_from_the_data_get_noisy_zeros(df):
    t = PrivateTable(df, bounds=BOUNDS, random_state=0)
    res = t.groupby("region", keys=["N", "Z"]).count(epsilon=1.0)
    assert list(res.index) == ["N", "Z"]
    # Laplace(1/1): |noise| < 15 with probability 1 - 3e-7
    assert abs(res.loc["Z", "count"]) < 15
    assert abs(res.loc["N", "count"] - (df.region == "N").sum()) < 15


def test_private_keys_release_large_groups_only(df):
    df = df.copy()
    df.loc[df.index[:3], "region"] = ["rare1", "rare2", "rare3"]
    t = PrivateTable(df, bounds=BOUNDS, random_state=0)
    res = t.groupby("region").count(epsilon=1.0)
    assert sorted(res.index) == ["E", "N", "S", "W"]


def test_private_bounds_are_released_once_and_kept(df):
    budget = PrivacyBudget(5.0, 1e-5)
    t = PrivateTable(df, budget=budget, random_state=0)
    first = t.mean("age", epsilon=1.0)
    lower, upper = t.released_bounds["age"]
    assert lower <= 18 and 90 <= upper <= 256  # powers of two around the data
    assert abs(first - df.age.mean()) < 5
    t.mean("age", epsilon=1.0)  # no bounds part: the same charge, all spent on the mean
    assert t.released_bounds["age"] == (lower, upper)
    assert len(budget) == 2


def test_accuracy_matches_the_noise(df):
    """The std that accuracy() reports is the std of the released counts (20 % of 400 draws)."""
    t = PrivateTable(df, bounds=BOUNDS, random_state=5)
    acc = t.groupby("region", keys=["N"]).accuracy({"income": "mean"}, epsilon=0.5)
    assert list(acc["quantity"]) == ["income count", "income centred sum"]
    std_count = acc["std"][0]
    draws = [t.groupby("region", keys=["N"]).agg({"income": "count"}, epsilon=0.5)
             ["income_count"].iloc[0] for _ in range(400)]
    # the count alone gets a larger share than in the mean's two sums: compare with its own plan
    acc_count = t.groupby("region", keys=["N"]).accuracy({"income": "count"}, epsilon=0.5)
    assert acc_count["std"][0] < std_count
    # sample std of 400 draws: relative standard error about 5 % (Laplace kurtosis 6)
    assert abs(np.std(draws) / acc_count["std"][0] - 1) < 0.2


def test_count_intervals_cover_at_their_level(df):
    t = PrivateTable(df, bounds=BOUNDS, random_state=7)
    truth = (df.region == "N").sum()
    hits = 0
    for _ in range(500):
        r = t.groupby("region", keys=["N"]).count(epsilon=0.3, intervals=True, alpha=0.1)
        hits += r["count_lower"].iloc[0] <= truth <= r["count_upper"].iloc[0]
    # Binomial(500, 0.9): 450 ± 3 sd (20)
    assert 430 <= hits <= 470


def test_accuracy_reads_nothing_and_charges_nothing(df):
    budget = PrivacyBudget(1.0, 1e-5)
    t = PrivateTable(df, budget=budget, bounds=BOUNDS)
    acc = t.groupby("region").accuracy({"income": ["mean", "median"]}, epsilon=1.0)
    assert len(budget) == 0
    assert list(acc["noise"]) == ["laplace", "laplace", "exponential mechanism",
                                  "laplace threshold"]


@pytest.mark.parametrize("call, match", [
    (lambda t: t.agg({"nope": "mean"}, epsilon=1.0), "Unknown column 'nope'"),
    (lambda t: t.agg({"region": "mean"}, epsilon=1.0), "Column 'region' is not numeric"),
    (lambda t: t.agg({"age": "mode"}, epsilon=1.0), "Unknown aggregate 'mode'"),
    (lambda t: t.count(epsilon=0.0), "epsilon"),
    (lambda t: t.count(epsilon=-1.0), "epsilon"),
    (lambda t: t.count(epsilon=1.0, delta=1.0), "delta"),
    (lambda t: t.groupby("nope"), "unknown column 'nope'"),
    (lambda t: t.groupby("region", keys=[]), "keys is empty"),
    (lambda t: t.groupby("region").count(epsilon=1.0, delta=0.0), "needs delta > 0"),
    (lambda t: t.count(epsilon=1.0, alpha=2.0), "alpha"),
])
def test_bad_queries_raise_before_any_charge(df, call, match):
    budget = PrivacyBudget(1.0, 1e-5)
    t = PrivateTable(df, budget=budget, bounds=BOUNDS)
    with pytest.raises((ValueError, TypeError), match=match):
        call(t)
    assert len(budget) == 0


@pytest.mark.parametrize("kwargs, match", [
    ({"bounds": {"age": (90, 18)}}, "lower must be below upper"),
    ({"bounds": {"age": (1, 1)}}, "lower must be below upper"),
    ({"bounds": {"region": (0, 1)}}, "column 'region' is not numeric"),
    ({"bounds": {"nope": (0, 1)}}, "unknown column 'nope'"),
    ({"bounds": {"age": (0, math.inf)}}, "must be finite"),
    ({"privacy_unit": "nope"}, "unknown column 'nope'"),
    ({"max_rows_per_unit": 2}, "need privacy_unit"),
    ({"privacy_unit": "person", "max_rows_per_unit": 0}, "max_rows_per_unit"),
    ({"delta": 1.0}, "delta"),
])
def test_bad_tables_raise(df, kwargs, match):
    with pytest.raises(ValueError, match=match):
        PrivateTable(df, **kwargs)


def test_errors_name_the_column_not_a_value():
    df = pd.DataFrame({"city": ["secret-town", "b"], "x": [1.0, 2.0]})
    t = PrivateTable(df)
    for call in (lambda: t.agg({"city": "mean"}, epsilon=1.0),
                 lambda: PrivateTable(df, bounds={"city": (0, 1)})):
        with pytest.raises(ValueError) as info:
            call()
        assert "city" in str(info.value) and "secret-town" not in str(info.value)


def test_an_empty_table_is_a_release_like_any_other():
    """No error: emptiness is a property of the rows, and a one-row table is its neighbour."""
    budget = PrivacyBudget(1.0, 1e-5)
    t = PrivateTable(pd.DataFrame({"g": pd.Series([], dtype=object),
                                   "x": np.array([], dtype=float)}),
                     budget=budget, bounds={"x": (0, 1)}, random_state=0)
    assert abs(t.count(epsilon=0.5)) < 20  # Laplace(2): beyond 20 w.p. 7e-5
    res = t.groupby("g", keys=["a"]).mean("x", epsilon=0.5)
    assert res["too_few_rows"].tolist() == [True]
    assert len(budget) == 2
    with pytest.raises(TypeError, match="pandas, polars or dask DataFrame"):
        PrivateTable(np.zeros((3, 2)))


def test_a_refused_charge_reads_nothing(df):
    budget = PrivacyBudget(0.5, 1e-5)
    t = PrivateTable(df, budget=budget, bounds=BOUNDS, random_state=0)
    with pytest.raises(BudgetExceededError):
        t.groupby("region").agg({"income": "mean"}, epsilon=1.0)
    assert len(budget) == 0 and t.released_bounds == {}


def test_no_warning_on_large_groups(df):
    t = PrivateTable(df, bounds=BOUNDS, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t.groupby("region", keys=["N", "S"]).agg({"income": "mean"}, epsilon=1.0)


def test_same_seed_same_release(df):
    a = PrivateTable(df, bounds=BOUNDS, random_state=3).groupby("region").agg(
        {"income": ["mean", "median"]}, epsilon=1.0)
    b = PrivateTable(df, bounds=BOUNDS, random_state=3).groupby("region").agg(
        {"income": ["mean", "median"]}, epsilon=1.0)
    pd.testing.assert_frame_equal(a, b)


def test_numeric_histogram_is_numpy_histogram_at_infinite_epsilon(df):
    t = PrivateTable(df, bounds=BOUNDS, random_state=0)
    res = t.groupby("region", keys=["N", "S"]).histogram("age", bins=[18, 30, 60, 90],
                                                          epsilon=math.inf)
    assert list(res.columns) == ["age[18, 30)", "age[30, 60)", "age[60, 90]"]
    for region in ["N", "S"]:
        want, _ = np.histogram(df.age[df.region == region], bins=[18, 30, 60, 90])
        np.testing.assert_array_equal(res.loc[region].to_numpy(), want)
    four = t.histogram("age", bins=4, epsilon=1.0)
    assert list(four.columns) == ["age[18, 36)", "age[36, 54)", "age[54, 72)", "age[72, 90]"]


def test_a_histogram_costs_one_count_whatever_its_bins(df):
    budget = PrivacyBudget(5.0, 1e-5)
    t = PrivateTable(df, budget=budget, bounds=BOUNDS, random_state=0)
    t.histogram("age", bins=50, epsilon=1.0, delta=0.0)
    t.count(epsilon=1.0, delta=0.0)
    assert budget.ledger[0].epsilon == pytest.approx(budget.ledger[1].epsilon, rel=1e-9)


def test_categorical_histogram(df):
    t = PrivateTable(df, bounds=BOUNDS, random_state=0)
    exact = t.groupby("region").histogram("sex", epsilon=math.inf)
    want = df.groupby(["region", "sex"]).size().unstack()
    np.testing.assert_array_equal(exact.to_numpy(), want.to_numpy())
    assert list(exact.columns) == ["sex=f", "sex=m"]
    public = t.groupby("region", keys=["N", "Z"]).histogram(
        "sex", categories=["f", "m", "other"], epsilon=1.0)
    assert list(public.columns) == ["sex=f", "sex=m", "sex=other"]
    assert list(public.index) == ["N", "Z"]
    assert abs(public.loc["Z"]).max() < 20  # noisy zeros, Laplace(1/1)
    private = t.histogram("region", epsilon=1.0)
    assert sorted(private.columns) == ["region=E", "region=N", "region=S", "region=W"]


def test_private_bounds_of_a_small_table_are_never_a_point():
    """Too few rows for any bin of a column to clear the threshold: the column shares the
    range of the pooled counts (skdp.stats._range._feature_hull) instead of (0, 0), which
    would make every sum 0 and every mean the midpoint 0, silently."""
    rng = np.random.default_rng(3)
    # 400 rows in 20..60: before, all three columns got (0, 0) at this ε
    small = pd.DataFrame({"g": "x", "a": rng.uniform(20, 60, 400), "b": rng.uniform(20, 60, 400),
                          "c": rng.uniform(20, 60, 400)})
    t = PrivateTable(small, random_state=0)
    t.groupby("g", keys=["x"]).agg({"a": "mean", "b": "mean", "c": "mean"}, epsilon=0.5)
    for column in "abc":
        lower, upper = t.released_bounds[column]
        assert lower <= 32 and upper >= 64, column  # powers of two about the pooled data
