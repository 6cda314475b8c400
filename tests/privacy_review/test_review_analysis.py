"""Regression tests from an independent privacy review of skdp.analysis (PrivateTable).

What was verified, and is pinned here:

- The mechanism that runs is the curve that is charged: the noise scales drawn
  (recorded from the table's generator) and the exponential mechanisms'
  (ε′, Δ) (recorded at the sampler) give back, when composed over the k·G
  coordinates one person can move (sensitivities derived here by hand), exactly
  the curve in the ledger, and that curve is within (ε, δ).
- A Laplace vector whose L1 shift is spread over several coordinates (a
  histogram, when a person's R rows fall in several bins) is dominated by the
  shift on one coordinate, in RDP and in the hockey-stick divergence: the
  one-coordinate curve the plan charges is valid.
- The quantile's exponential mechanism: on a table and its neighbour with one
  more person of R rows, the log-ratio of every bin's probability is at most ε′.
- Partition selection: a person's keys are cut to G before counting, so a person
  with more one-person keys than G has one released with probability at most δ;
  a count with chosen keys and one row per person and key publishes the
  thresholded selection counts themselves, charged as one (ε, δ) mechanism.
- Contribution bounding chooses rows by position, never by value, and the
  distribution of everyone else's kept rows does not change when a person's rows
  shift their positions; adding a person moves at most G groups by R rows.
- Order of work: invalid queries and refused charges read nothing (a dask
  table whose partitions raise when read), results do not depend on row order,
  the ledger label holds no data, null keys are never released; ε = ∞ leaves no
  bounds behind for later queries; dask gathers partial sums only.

Defects found, fixed, and pinned by the tests below:

- A null privacy unit (NaN/None in the person column) was the code -1 of the
  engines' factorisation, which ``_unit._order_by`` (codes assumed >= 0) cast to
  uint64: its rows interleaved with the person who had the largest code, whose
  pairs then broke into many runs, each kept; one person moved a count by tens
  of rows with max_rows_per_unit = max_groups_per_unit = 1. Rows without a
  person are now left out.
- A released key was the first row's spelling of it: -0.0 or 0.0, True or 1, so
  the release showed which of two equal keys came first (a row-level bit). Keys
  now take one spelling.
- Several key columns: their codes were combined in int64 without a check, and
  wrapped once the product of the cardinalities passed 2^63; groups were then
  merged and released under keys not in the data, or under one row's key. The
  codes are now renumbered densely column by column.
- An unhashable key value raised after the charge; it now counts as missing.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate

from skdp import BudgetExceededError, PrivacyBudget
from skdp.accounting import (approximate_dp_rdp, epsilon_of, gaussian_rdp, laplace_rdp)
from skdp.analysis import PrivateTable, SmallGroupWarning, quantile
from skdp.analysis import _aggregates, _keys
from skdp.mechanisms import exponential_mechanism_rdp

pytestmark = pytest.mark.filterwarnings("ignore::skdp.analysis.SmallGroupWarning")


def _to_polars(frame):
    """A polars DataFrame column by column (polars' from_pandas needs pyarrow, which the
    oldest stack has not)."""
    import polars as pl

    return pl.DataFrame({c: pl.Series(c, frame[c].tolist(), strict=False)
                         if frame[c].dtype == object else frame[c].to_numpy()
                         for c in frame.columns})


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------
class _Recorder:
    """A generator that records every draw (name, args, kwargs) and delegates."""

    def __init__(self, seed):
        self._gen = np.random.default_rng(seed)
        self.calls = []

    def __getattr__(self, name):
        method = getattr(self._gen, name)

        def wrapped(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return method(*args, **kwargs)

        return wrapped


def _people_table(n_people=400, seed=0):
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, 6, n_people)
    person = np.repeat(np.arange(n_people), rows)
    n = person.size
    return pd.DataFrame({
        "person": person,
        "region": rng.choice(["N", "S", "E"], n, p=[0.5, 0.3, 0.2]),
        "x": rng.uniform(-3, 5, n),
        "y": rng.lognormal(3, 1, n),
    })


def _sensitivity(part, lower, upper):
    """One row's move of each sum, derived by hand (values clipped to [lower, upper])."""
    h = (upper - lower) / 2
    return {"rows": 1.0, "n": 1.0, "hist": 1.0, "sum": max(abs(lower), abs(upper)),
            "s1": h, "s2": h * h / 2}[part]


def _parts(spec):
    """The distinct sums a spec reads, as (column, part), in the documented order."""
    out = []
    for column, aggs in spec.items():
        for agg in aggs if isinstance(aggs, list) else [aggs]:
            kind = agg if isinstance(agg, str) else agg.kind
            parts = {"count": ["n"], "sum": ["sum"], "mean": ["n", "s1"], "var": ["n", "s1", "s2"],
                     "std": ["n", "s1", "s2"], "median": ["n"], "quantile": ["n"]}[kind]
            for p in parts:
                if (column, p) not in out:
                    out.append((column, p))
    return out


# ----------------------------------------------------------------------------
# 1. the mechanism that runs is the curve charged
# ----------------------------------------------------------------------------
CONFIGS = [
    # (R, G, epsilon, delta, public keys, spec, public bounds)
    (2, 3, 1.0, 0.0, ["N", "S", "E", "W"], {"x": ["count", "sum", "mean", "var"]},
     {"x": (-2.0, 4.0)}),
    (2, 2, 3.0, 1e-4, None, {"x": ["std", "median"], "y": [quantile(0.3)]}, {"x": (-2.0, 4.0)}),
    (1, 1, 0.5, 1e-6, ["N", "S"], {"y": ["mean", "sum"]}, {}),
    (3, 1, 2.0, 1e-5, None, {"x": ["mean"]}, {"x": (-3.0, 5.0)}),
]


@pytest.mark.parametrize("R, G, eps, delta, keys, spec, bounds", CONFIGS)
def test_the_mechanism_that_runs_is_the_curve_charged(monkeypatch, R, G, eps, delta, keys,
                                                       spec, bounds):
    df = _people_table()
    budget = PrivacyBudget(10.0, 1e-3)
    t = PrivateTable(df, budget=budget, bounds=bounds, privacy_unit="person",
                     max_rows_per_unit=R, max_groups_per_unit=G, random_state=3)
    rec = _Recorder(3)
    t._rng = rec
    ems = []
    sampler = _aggregates.sample_quantiles

    def spy(losses, points, epsilon, sensitivity, rng):
        ems.append((epsilon, sensitivity))
        return sampler(losses, points, epsilon, sensitivity, rng)

    monkeypatch.setattr(_aggregates, "sample_quantiles", spy)
    t.groupby("region", keys=keys).agg(spec, epsilon=eps, delta=delta)
    charged = budget.ledger[-1].curve
    col_bounds = {**t.released_bounds, **bounds}

    draws = [c for c in rec.calls if c[0] in ("laplace", "normal")]
    estimated = [c for c in spec if c not in bounds and any(
        (a if isinstance(a, str) else a.kind) != "count"
        for a in (spec[c] if isinstance(spec[c], list) else [spec[c]]))]
    n_delta_parts = (keys is None) + bool(estimated) + 1  # δ is shared by these parts
    ran = 0
    if keys is None:  # partition selection: Laplace G/ε on people counts, threshold on δ
        name, (_, scale), _ = draws.pop(0)
        assert name == "laplace"
        ran = ran + approximate_dp_rdp(G / scale, delta / n_delta_parts)
    if estimated:  # one log-scale histogram per column, a person keeps R·G rows in all
        name, (_, scale), kw = draws.pop(0)
        n_b = len(estimated)
        assert kw["size"] == (n_b, 181)
        for c in estimated:
            lo, hi = col_bounds[c]
            assert lo < hi  # a real range, so the sensitivities below are not zero
        if name == "laplace":
            ran = ran + n_b * laplace_rdp(scale / (R * G))
        else:
            ran = ran + gaussian_rdp(scale / (R * G * math.sqrt(n_b)))
    needs = _parts(spec)
    assert len(draws) == len(needs)
    kinds = {name for name, _, _ in draws}
    assert len(kinds) == 1
    k = len(needs) * G  # the normalised coordinates one person can move
    per_unit = [scale / (R * _sensitivity(part, *col_bounds.get(column, (0.0, 1.0))))
                for (name, (_, scale), _), (column, part) in zip(draws, needs)]
    assert np.allclose(per_unit, per_unit[0], rtol=1e-12)
    if kinds == {"laplace"}:
        ran = ran + k * laplace_rdp(per_unit[0])
    else:
        ran = ran + gaussian_rdp(per_unit[0] / math.sqrt(k))
    n_q = sum(1 for aggs in spec.values() for a in (aggs if isinstance(aggs, list) else [aggs])
              if not isinstance(a, str) or a == "median")
    assert len(ems) == n_q
    for epsilon_q, sensitivity in ems:
        assert sensitivity == R  # the rank moves by R per person
        ran = ran + G * exponential_mechanism_rdp(epsilon_q)  # one level, G groups a person
    assert np.allclose(ran.rdp, charged.rdp, rtol=1e-9, atol=1e-14)
    assert ran.delta == pytest.approx(charged.delta, rel=1e-12, abs=0)
    assert epsilon_of(charged, delta) <= eps * (1 + 1e-9)


def _lap_hockey(e, d):
    """Hockey-stick E_P[(1 - e^(e - L))_+] of Lap(0, 1) against Lap(d, 1), d >= 0."""
    if e >= d:
        return 0.0
    if e <= -d:
        return 1.0 - math.exp(e)
    return 1.0 - math.exp((e - d) / 2.0)


def _lap_hockey_2d(e, d1, d2):
    """The same for the product of two Laplace coordinates shifted by d1 and d2."""
    atoms = 0.5 * _lap_hockey(e - d1, d2) + 0.5 * math.exp(-d1) * _lap_hockey(e + d1, d2)
    inner = integrate.quad(lambda x: 0.5 * math.exp(-x) * _lap_hockey(e - (d1 - 2 * x), d2),
                           0, d1)[0]
    return atoms + inner


def test_laplace_l1_shift_spread_over_coordinates_is_dominated_by_one_coordinate():
    # A histogram (and each bounds histogram) is charged as one Laplace coordinate of
    # shift R (R·G): valid only if spreading that shift over bins never costs more.
    full = laplace_rdp(1.0)
    for a in (0.5, 0.3, 0.1):
        split = laplace_rdp(1.0, sensitivity=a).rdp + laplace_rdp(1.0, sensitivity=1 - a).rdp
        assert np.all(split <= full.rdp + 1e-12)
    for e in (0.0, 0.2, 0.5, 0.8):
        one = _lap_hockey(e, 1.0)
        for a in (0.5, 0.25):
            assert _lap_hockey_2d(e, a, 1 - a) <= one + 1e-9


@pytest.mark.parametrize("q", [0.0, 0.3, 0.5, 1.0])
def test_quantile_exponential_mechanism_log_ratio_is_at_most_its_epsilon(monkeypatch, q):
    R = 3
    rng = np.random.default_rng(5)
    n = 200
    base = pd.DataFrame({"person": np.arange(n), "g": "a",
                         "v": np.round(rng.uniform(-1, 12, n), 0)})  # many ties, some clipped
    base.loc[rng.random(n) < 0.1, "v"] = np.nan
    seen = []
    sampler = _aggregates.sample_quantiles

    def spy(losses, points, epsilon, sensitivity, rng_):
        seen.append((np.asarray(losses, dtype=float)[0], epsilon, sensitivity))
        return sampler(losses, points, epsilon, sensitivity, rng_)

    monkeypatch.setattr(_aggregates, "sample_quantiles", spy)
    for extra in ([10.0, 10.0, 10.0], [-5.0, 11.0, np.nan], [3.0, 3.0, 20.0]):
        # the new person comes last: everyone else keeps the same rows under the same key
        more = pd.concat([base, pd.DataFrame({"person": n, "g": "a", "v": extra})],
                         ignore_index=True)
        seen.clear()
        for df in (base, more):
            t = PrivateTable(df, bounds={"v": (0, 10)}, privacy_unit="person",
                             max_rows_per_unit=R, random_state=0)
            t.groupby("g", keys=["a"]).quantile("v", q, epsilon=1.0)
        (r0, eps0, s0), (r1, eps1, s1) = seen
        assert eps0 == eps1 and s0 == s1 == R
        # the weights the mechanism draws with: exp(-ε′·r/(2Δ)), Δ the sensitivity it was given
        log_w = [-eps0 * r / (2 * s0) for r in (r0, r1)]
        log_p = [w - np.logaddexp.reduce(w) for w in log_w]
        assert np.max(np.abs(log_p[0] - log_p[1])) <= eps0 * (1 + 1e-12)


# ----------------------------------------------------------------------------
# 2. partition selection
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("G", [1, 2, 5])
def test_a_one_person_key_passes_the_threshold_with_probability_delta_over_G(G):
    for eps, delta in ((0.3, 1e-6), (1.0, 1e-3), (4.0, 1e-8)):
        tau = _keys.selection_threshold(eps, delta, G)
        b = _keys.selection_scale(eps, G)
        assert b == G / eps
        assert 0.5 * math.exp(-(tau - 1.0) / b) == pytest.approx(delta / G, rel=1e-12)


def test_a_person_with_more_keys_than_G_has_one_released_at_most_at_rate_delta():
    # 1000 people with 5 keys each that nobody else holds; G = 3 keeps 3 of them, so each
    # person has a key released with probability at most 3 · δ/3 = δ (5/3 of it if the bound
    # were not applied before counting). The count with one row per person and key publishes
    # the selection's own counts, so the selection gets the whole (ε, δ).
    G, n_people, reps, delta, eps = 3, 1000, 30, 0.02, 1.0
    solo = pd.DataFrame({"person": np.repeat(np.arange(n_people), 5),
                         "k": [f"s{i}" for i in range(5 * n_people)]})
    big = pd.DataFrame({"person": 10_000 + np.arange(3000), "k": "big"})
    t = PrivateTable(pd.concat([big, solo], ignore_index=True), privacy_unit="person",
                     max_groups_per_unit=G, random_state=4)
    released = 0
    for _ in range(reps):
        keys = list(t.groupby("k").count(epsilon=eps, delta=delta).index)
        assert "big" in keys
        released += len(keys) - 1
    expected = n_people * reps * delta  # 600 at most: standard deviation below 25
    assert released <= expected + 5 * math.sqrt(expected)  # unbounded: 1000
    assert released >= 0.25 * expected  # not vacuous


@pytest.mark.parametrize("G", [1, 3])
def test_a_count_with_chosen_keys_publishes_the_thresholded_selection_counts(G):
    # One row per person and key: the selection's noisy people counts are the row counts,
    # the whole (ε, δ) to one thresholded Laplace release (Wilson et al. 2020, Sec. 3.2).
    df = _people_table(2000, seed=1)
    budget = PrivacyBudget(5.0, 1e-4)
    t = PrivateTable(df, budget=budget, privacy_unit="person", max_groups_per_unit=G,
                     random_state=2)
    rec = _Recorder(2)
    t._rng = rec
    res = t.groupby("region").count(epsilon=1.0, delta=1e-5)
    draws = [c for c in rec.calls if c[0] in ("laplace", "normal")]
    assert len(draws) == 1  # the selection's draw, nothing else
    name, (_, scale), _ = draws[0]
    assert name == "laplace"
    charged = budget.ledger[-1].curve
    ran = approximate_dp_rdp(G / scale, 1e-5)
    np.testing.assert_allclose(ran.rdp, charged.rdp, rtol=1e-12)
    assert charged.delta == pytest.approx(1e-5)
    assert epsilon_of(charged, 1e-5) <= 1.0 * (1 + 1e-9)
    tau = _keys.selection_threshold(G / scale, 1e-5, G)
    assert (res["count"] > tau).all()  # only counts above the threshold are published


# ----------------------------------------------------------------------------
# 3. contribution bounding
# ----------------------------------------------------------------------------
def test_rows_are_kept_by_position_never_by_value():
    def kept(values):
        df = pd.DataFrame({"person": [1, 1, 1], "x": values})
        t = PrivateTable(df, privacy_unit="person", random_state=0)
        return np.array([t.sum("x", epsilon=math.inf) for _ in range(60)])

    a, b = kept([1.0, 2.0, 3.0]), kept([3.0, 2.0, 1.0])
    np.testing.assert_array_equal(a, 4.0 - b)  # the same positions, whatever their values
    assert set(a) == {1.0, 2.0, 3.0}


def test_shifting_positions_leaves_the_distribution_of_others_kept_rows_unchanged():
    # A (3 rows) and B (2 rows) keep one row each (R = 1); prepending Z shifts their positions.
    others = pd.DataFrame({"person": [1, 1, 1, 2, 2], "x": [1.0, 2.0, 3.0, 10.0, 20.0]})
    z = pd.DataFrame({"person": [9] * 5, "x": [0.0] * 5})
    n = 900
    runs = {}
    for name, df in (("D", others), ("D'", pd.concat([z, others], ignore_index=True))):
        t = PrivateTable(df, privacy_unit="person", random_state=11)
        runs[name] = np.array([t.sum("x", epsilon=math.inf) for _ in range(n)])
    cells = [a + b for a in (1, 2, 3) for b in (10, 20)]
    sd = math.sqrt((1 / 6) * (5 / 6) / n)
    for out in runs.values():
        freq = np.array([(out == c).mean() for c in cells])
        assert freq.sum() == 1.0
        assert np.all(np.abs(freq - 1 / 6) <= 5 * sd)  # uniform over the 6 pairs, jointly
    # for one key the kept rows do move: the claim holds in distribution, not row by row
    assert np.any(runs["D"] != runs["D'"])


@pytest.mark.parametrize("engine", ["pandas", "polars"])
@pytest.mark.parametrize("R, G", [(1, 1), (2, 3), (4, 2)])
@pytest.mark.parametrize("public", [True, False])
def test_adding_a_person_moves_at_most_G_groups_by_R_rows(engine, R, G, public):
    df = _people_table(300, seed=2)
    heavy = pd.DataFrame({"person": 99_999, "region": np.repeat(["N", "S", "E", "W"], 15),
                          "x": 5.0, "y": 1.0})
    more = pd.concat([df, heavy], ignore_index=True)  # last: the others' positions are kept

    def release(frame):
        if engine == "polars":
            pl = pytest.importorskip("polars")
            frame = _to_polars(frame)
        t = PrivateTable(frame, bounds={"x": (0.0, 5.0)}, privacy_unit="person",
                         max_rows_per_unit=R, max_groups_per_unit=G, random_state=7)
        keys = ["N", "S", "E", "W"] if public else None
        out = t.groupby("region", keys=keys).agg({"x": ["count", "sum"]}, epsilon=math.inf)
        if engine == "polars":
            out = pd.DataFrame({c: out[c].to_list() for c in out.columns}).set_index("region")
        return out.drop(columns="too_few_rows").reindex(["N", "S", "E", "W"]).fillna(0.0)

    moved = release(more) - release(df)
    assert (moved["x_count"] >= 0).all() and (moved["x_count"] <= R).all()
    assert (moved["x_count"] > 0).sum() <= G
    assert moved["x_count"].sum() == R * G  # the heavy person fills the bound
    assert (moved["x_sum"].abs() <= R * 5.0 + 1e-9).all()


def test_rows_without_a_person_do_not_break_another_persons_bound():
    others = pd.DataFrame({"person": [0.0, 1.0, 2.0] + [np.nan] * 40,
                           "g": ["B", "B", "B"] + ["A"] * 40})
    person = pd.DataFrame({"person": [3.0] * 40, "g": "A"})
    with_person = pd.concat([others, person], ignore_index=True)  # last: positions kept
    for seed in range(5):
        def counts(df):
            t = PrivateTable(df, privacy_unit="person", random_state=seed)
            return t.groupby("g", keys=["A", "B"]).count(epsilon=math.inf)["count"].to_numpy()

        moved = np.abs(counts(with_person) - counts(others))
        assert moved.sum() <= 1  # R · G


def test_adding_a_row_without_a_person_moves_at_most_one_group():
    one = pd.DataFrame({"person": [None], "g": ["A"]})
    two = pd.DataFrame({"person": [None, None], "g": ["A", "B"]})
    for seed in range(8):
        def counts(df):
            t = PrivateTable(df, privacy_unit="person", random_state=seed)
            return t.groupby("g", keys=["A", "B"]).count(epsilon=math.inf)["count"].to_numpy()

        assert np.abs(counts(two) - counts(one)).sum() <= 1


# ----------------------------------------------------------------------------
# 4. order of work: validation, curve, charge, values
# ----------------------------------------------------------------------------
def _poisoned_dask():
    """A dask table whose metadata is known and whose rows raise when read."""
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")

    def boom():
        raise RuntimeError("a row was read")

    meta = pd.DataFrame({"person": pd.Series([], dtype="int64"),
                         "g": pd.Series([], dtype=object), "x": pd.Series([], dtype=float)})
    return dd.from_delayed([dask.delayed(boom)()], meta=meta, verify_meta=False)


def test_invalid_queries_and_refused_charges_read_nothing():
    data = _poisoned_dask()
    budget = PrivacyBudget(1.0, 1e-5)
    t = PrivateTable(data, budget=budget, bounds={"x": (0, 1)}, privacy_unit="person",
                     random_state=0)
    gb = t.groupby("g", keys=["a"])
    for call in (lambda: gb.mean("nope", epsilon=0.5),
                 lambda: gb.mean("g", epsilon=0.5),
                 lambda: t.groupby("g").count(epsilon=0.5, delta=0.0),
                 lambda: gb.count(epsilon=0.5, alpha=1.5),
                 lambda: gb.count(epsilon=0.5, intervals="yes"),
                 lambda: gb.histogram("x", bins=[1.0, 0.0], epsilon=0.5),
                 lambda: gb.agg({"x": "mode"}, epsilon=0.5),
                 lambda: gb.count(epsilon=-1.0)):
        with pytest.raises((ValueError, TypeError)) as info:
            call()
        assert not isinstance(info.value, BudgetExceededError)
        assert "row was read" not in str(info.value)
    assert len(budget) == 0
    gb.accuracy({"x": ["mean", "median"]}, epsilon=0.5)  # reads and charges nothing
    assert len(budget) == 0
    with pytest.raises(BudgetExceededError):  # refused before any value is read
        gb.mean("x", epsilon=2.0)
    with pytest.raises(BudgetExceededError):
        t.count(epsilon=math.inf)
    assert len(budget) == 0
    with pytest.raises(RuntimeError, match="row was read"):  # a charged query does read
        gb.mean("x", epsilon=0.5)
    assert len(budget) == 1


def test_an_empty_table_never_raises_after_the_charge():
    empty = pd.DataFrame({"g": pd.Series([], dtype=object), "x": pd.Series([], dtype=float)})
    frames = [empty]
    try:
        import polars as pl
        frames.append(_to_polars(empty))
    except ImportError:
        pass
    for frame in frames:
        budget = PrivacyBudget(1.0, 1e-5)
        t = PrivateTable(frame, budget=budget, bounds={"x": (0, 1)}, random_state=0)
        try:
            t.groupby("g", keys=["a"]).mean("x", epsilon=0.5)
        except ValueError as e:
            assert len(budget) == 0, e  # refused before the charge (documented)
            assert "empty" in str(e)


def test_release_and_index_do_not_depend_on_row_order():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"k": rng.choice(["a", "b", "c", "d"], 4000, p=[.4, .3, .29, .01]),
                       "x": rng.uniform(0, 1, 4000)})
    shuffled = df.sample(frac=1.0, random_state=1).reset_index(drop=True)
    for keys in (None, ["d", "b", "a", "z"]):
        out = [PrivateTable(d, random_state=5).groupby("k", keys=keys).count(epsilon=1.0)
               for d in (df, shuffled)]
        pd.testing.assert_frame_equal(out[0], out[1])
        if keys is None:
            assert list(out[0].index) == sorted(out[0].index)
        else:
            assert list(out[0].index) == keys


def test_ledger_label_is_the_same_for_different_tables():
    labels = []
    for seed in (0, 1):
        df = _people_table(100 + 50 * seed, seed=seed)
        budget = PrivacyBudget(10.0, 1e-5)
        t = PrivateTable(df, budget=budget, privacy_unit="person", max_rows_per_unit=2,
                         random_state=seed)
        t.groupby("region").agg({"y": ["mean", "median"]}, epsilon=1.0)
        labels.append(budget.ledger[0].label)
        assert t.released_bounds  # private bounds were released, and are not in the label
    assert labels[0] == labels[1]


def test_null_keys_are_never_released_and_their_rows_are_left_out():
    df = pd.DataFrame({"k": ["a"] * 3000 + [None] * 3000 + [np.nan] * 3000, "x": 1.0})
    for keys in (None, ["a"]):
        res = PrivateTable(df, random_state=0).groupby("k", keys=keys).count(epsilon=math.inf)
        assert list(res.index) == ["a"] and res["count"].tolist() == [3000.0]
    with pytest.raises(ValueError, match="missing value"):
        PrivateTable(df).groupby("k", keys=["a", None])


def test_a_bool_column_is_its_float_column():
    rng = np.random.default_rng(0)
    b = rng.random(500) < 0.3
    out = [PrivateTable(pd.DataFrame({"b": col}), bounds={"b": (0, 1)}, random_state=2)
           .agg({"b": ["mean", "sum"]}, epsilon=1.0) for col in (b, b.astype(float))]
    pd.testing.assert_frame_equal(out[0], out[1])


def test_small_group_flags_come_with_the_warning():
    df = pd.DataFrame({"k": ["a"] * 5000 + ["b"] * 5, "x": np.linspace(0, 1, 5005)})
    t = PrivateTable(df, bounds={"x": (0, 1)}, random_state=0)
    with pytest.warns(SmallGroupWarning, match="1 of 2 groups"):
        res = t.groupby("k", keys=["a", "b"]).mean("x", epsilon=1.0)
    assert res["too_few_rows"].tolist() == [False, True]


@pytest.mark.parametrize("case", ["float -0.0", "polars -0.0", "object True/1"])
def test_a_released_key_does_not_reveal_which_row_came_first(case):
    if case == "object True/1":
        spellings, rest = (True, 1), pd.Series([1] * 3000, dtype=object)
    else:
        spellings, rest = (-0.0, 0.0), pd.Series([0.0] * 3000)
    shown = []
    for first in spellings:  # the neighbour differs by its first row only
        col = pd.concat([pd.Series([first], dtype=rest.dtype), rest], ignore_index=True)
        df = pd.DataFrame({"k": col})
        if case.startswith("polars"):
            pl = pytest.importorskip("polars")
            df = _to_polars(df)
            key = PrivateTable(df, random_state=0).groupby("k").count(epsilon=1.0)["k"][0]
        else:
            key = PrivateTable(df, random_state=0).groupby("k").count(epsilon=1.0).index[0]
        shown.append(repr(key))
    assert shown[0] == shown[1]


def test_several_key_columns_release_only_keys_of_the_data():
    n, cols = 300, [f"c{i}" for i in range(8)]
    rng = np.random.default_rng(0)
    filler = pd.DataFrame({c: rng.permutation(n) for c in cols})  # 300 one-person keys
    heavy = pd.DataFrame({c: np.full(3000, -1) for c in cols})  # one key, 3000 people
    df = pd.concat([filler, heavy], ignore_index=True)
    in_data = set(map(tuple, df.to_numpy().tolist()))
    res = PrivateTable(df, random_state=0).groupby(cols).count(epsilon=1.0)
    assert all(k in in_data for k in res.index)
    assert (-1,) * 8 in list(res.index)


def test_an_unhashable_key_does_not_raise_after_the_charge():
    df = pd.DataFrame({"k": pd.Series([[1], "a"] * 50, dtype=object), "x": 1.0})
    budget = PrivacyBudget(10.0, 1e-5)
    t = PrivateTable(df, budget=budget, random_state=0)
    try:
        t.groupby("k", keys=["a"]).count(epsilon=1.0)
    except TypeError:
        assert len(budget) == 0


# ----------------------------------------------------------------------------
# 5. dask: only partial sums come back
# ----------------------------------------------------------------------------
def test_dask_gathers_partial_sums_only(monkeypatch):
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    import dask.base

    from skdp.stats import _range

    df = _people_table(300, seed=4)
    gathered = []
    compute = dask.base.compute

    def spy(*args, **kwargs):
        out = compute(*args, **kwargs)
        gathered.extend(out)
        return out

    monkeypatch.setattr(dask, "compute", spy)
    monkeypatch.setattr(dask.base, "compute", spy)
    with dask.config.set(scheduler="synchronous"):
        t = PrivateTable(dd.from_pandas(df, npartitions=3), privacy_unit="person",
                         max_rows_per_unit=2, random_state=9)
        res = t.groupby("region").agg({"y": ["mean", "median"]}, epsilon=2.0, delta=1e-4)
    ref = PrivateTable(df, privacy_unit="person", max_rows_per_unit=2, random_state=9) \
        .groupby("region").agg({"y": ["mean", "median"]}, epsilon=2.0, delta=1e-4)
    assert list(res.index) == list(ref.index)
    np.testing.assert_allclose(res["y_median"], ref["y_median"])
    limit = max(_range.N_BINS, 3 * (_aggregates.GRID_SIZE + 2))
    lengths = [g for g in gathered if isinstance(g, pd.Series)]
    # the partitions' lengths (for row positions): kept on the client, never in a release
    assert len(lengths) == 1 and int(lengths[0].sum()) == len(df)
    for g in gathered:
        if isinstance(g, pd.Series):
            continue
        assert isinstance(g, dict)
        for name, value in g.items():
            if name == "people":  # people per key, for the selection
                assert all(isinstance(c, int) for c in value.values())
            else:
                assert isinstance(value, np.ndarray) and value.size <= limit


# ----------------------------------------------------------------------------
# 6. epsilon = inf leaves nothing for later queries
# ----------------------------------------------------------------------------
def test_an_exact_query_leaves_no_bounds_for_later_finite_queries():
    df = _people_table(300, seed=6)
    t = PrivateTable(df, random_state=0)
    exact = t.groupby("region", keys=["N"]).mean("y", epsilon=math.inf)
    assert np.isfinite(exact["y_mean"]).all()
    assert t.released_bounds == {}
    budgets = []
    for table in (t, PrivateTable(df, random_state=0)):  # after an exact query, and fresh
        budget = PrivacyBudget(5.0, 1e-5)
        table.budget = budget
        table.groupby("region", keys=["N"]).mean("y", epsilon=1.0)
        budgets.append(budget.ledger[0].curve)
    # the later query still pays for its own private bounds: the same curve as a fresh table
    np.testing.assert_array_equal(budgets[0].rdp, budgets[1].rdp)
    assert set(t.released_bounds) == {"y"}
