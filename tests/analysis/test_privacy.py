"""Privacy of table queries: audits on neighbouring tables that differ by one person.

- An empirical Clopper-Pearson audit (tests/_dp_audit.py, ``split_audit``) of one
  group-by query on neighbouring tables: D' adds one person with 50 rows, of which
  the query keeps ``max_rows_per_unit``. The audit must stay at or below ε, and report
  above ε for the same query run at 2ε (so a passing audit means something).
- Private key selection: a key that one person holds is released with probability
  at most its share of δ (the rate is measured, not only bounded), and keys with
  thousands of people always are.
- Contribution bounding moves a group's count and sum by at most the bound.
- The noise scales and the charged curve against a hand computation.
"""

import math
import pathlib
import sys

import numpy as np
import pandas as pd
import pytest

from skdp import PrivacyBudget
from skdp.accounting import approximate_dp_rdp, epsilon_of, laplace_rdp
from skdp.analysis import PrivateTable
from skdp.analysis import _keys, _plan

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from _dp_audit import split_audit  # noqa: E402


def _people(n_people, rows_each, region, seed):
    rng = np.random.default_rng(seed)
    person = np.repeat(np.arange(n_people), rows_each)
    return pd.DataFrame({"person": person, "region": region,
                         "income": rng.uniform(0, 100, person.size)})


@pytest.fixture(scope="module")
def neighbours():
    base = pd.concat([_people(300, 3, "A", 0), _people(300, 3, "B", 1).assign(
        person=lambda d: d.person + 1000)], ignore_index=True)
    extra = pd.DataFrame({"person": 5000, "region": "A", "income": np.full(50, 100.0)})
    return base, pd.concat([base, extra], ignore_index=True)


def _released(table, query, epsilon, n, seed):
    t = PrivateTable(table, bounds={"income": (0, 100)}, privacy_unit="person",
                     max_rows_per_unit=3, random_state=seed)
    gb = t.groupby("region", keys=["A", "B"])
    return np.array([query(gb, epsilon) for _ in range(n)])


QUERIES = {
    "count": lambda gb, eps: gb.count(epsilon=eps, delta=0.0)["count"].iloc[0],
    "sum": lambda gb, eps: gb.sum("income", epsilon=eps, delta=0.0)["income_sum"].iloc[0],
}


@pytest.mark.parametrize("name", list(QUERIES))
@pytest.mark.parametrize("factor", [1, 2])
def test_group_by_audit_on_a_person_added_with_all_rows(neighbours, name, factor):
    d0, d1 = neighbours
    eps = 1.0
    out0 = _released(d0, QUERIES[name], factor * eps, 2000, 20)
    out1 = _released(d1, QUERIES[name], factor * eps, 2000, 21)
    bound = split_audit(out0, out1, n_select=500)
    if factor == 1:
        assert bound <= eps
    else:  # the query run at 2ε while claiming ε: the audit must see it
        assert bound > eps


@pytest.mark.parametrize("max_rows, share", [(5, 0.5), (1, 1.0)])
def test_a_key_of_one_person_is_released_at_the_rate_delta_allows(max_rows, share):
    """P(release) of a one-person key is ½·exp(−(τ − 1)/b) = δ_select / G exactly.

    A count of rows with more than one row per person and key splits δ between the
    selection and the counts (δ_select = δ/2); with one row per person and key the
    selection's noisy people counts are the released counts, and it gets all of δ.
    """
    big = _people(2000, 2, "big", 0)
    rng = np.random.default_rng(1)
    single = pd.DataFrame({"person": np.repeat(10_000 + np.arange(200), 20),
                           "region": np.repeat([f"solo{i}" for i in range(200)], 20),
                           "income": rng.uniform(0, 100, 4000)})
    df = pd.concat([big, single], ignore_index=True)
    delta = 1e-3
    t = PrivateTable(df, privacy_unit="person", max_rows_per_unit=max_rows, random_state=2)
    released = 0
    for _ in range(300):
        res = t.groupby("region").count(epsilon=1.0, delta=delta)
        assert "big" in res.index
        # Laplace of scale at most 2R (ε/2 per part): beyond 15 scales in 300 draws w.p. 1e-4
        assert abs(res.loc["big", "count"] - 2000 * min(max_rows, 2)) < 15 * 2 * max_rows
        released += len(res) - 1
    plan = _plan.Plan(epsilon=1.0, delta=delta, n_sums=0 if max_rows == 1 else 1,
                      n_quantiles=0, n_aggregates=1, select=True, n_bounds=0, max_groups=1,
                      max_rows=max_rows, counts_from_selection=max_rows == 1)
    eps_sel, delta_sel = plan.budgets["select"]
    assert delta_sel == delta * share
    tau = _keys.selection_threshold(eps_sel, delta_sel, 1)
    p = 0.5 * math.exp(-(tau - 1) / _keys.selection_scale(eps_sel, 1))
    assert p == pytest.approx(delta_sel)
    # 60,000 one-person keys: Binomial(60000, p), mean 30 (share 1/2) or 60, ± 4 sd
    mean = 60_000 * p
    assert mean - 4 * math.sqrt(mean) <= released <= mean + 4 * math.sqrt(mean)


def test_a_count_with_private_keys_spends_all_of_epsilon_on_the_selection():
    df = _people(3000, 1, "A", 0)
    budget = PrivacyBudget(5.0, 1e-5)
    t = PrivateTable(df, budget=budget, random_state=0)
    t.groupby("region").count(epsilon=1.0, delta=1e-5)
    charged = budget.ledger[0].curve
    reference = approximate_dp_rdp(1.0, 1e-5)
    assert epsilon_of(charged, 1e-5) == pytest.approx(epsilon_of(reference, 1e-5), rel=1e-9)
    acc = t.groupby("region").accuracy(epsilon=1.0, delta=1e-5)
    assert acc["quantity"].tolist() == ["rows", "key kept (people)"]
    assert acc["std"][0] == pytest.approx(math.sqrt(2.0))  # Laplace(1/ε)


def test_one_person_with_many_rows_moves_a_group_by_the_bound():
    base = pd.concat([_people(500, 2, "A", 0), _people(500, 2, "B", 1)], ignore_index=True)
    base["person"] = np.arange(len(base)) // 2
    heavy = pd.DataFrame({"person": -1, "region": ["A"] * 600 + ["B"] * 400,
                          "income": np.full(1000, 100.0)})
    bigger = pd.concat([base, heavy], ignore_index=True)
    for rows, groups in ((1, 1), (5, 1), (3, 2)):
        def release(df):
            t = PrivateTable(df, bounds={"income": (0, 100)}, privacy_unit="person",
                             max_rows_per_unit=rows, max_groups_per_unit=groups,
                             random_state=0)
            return t.groupby("region", keys=["A", "B"]).agg(
                {"income": ["count", "sum", "mean"]}, epsilon=math.inf)

        before, after = release(base), release(bigger)
        moved = after.drop(columns="too_few_rows") - before.drop(columns="too_few_rows")
        # each group moves by at most R rows, and by R rows in at most G groups
        assert (moved["income_count"] <= rows).all()
        assert moved["income_count"].sum() == rows * groups
        assert (moved["income_sum"] <= rows * 100.0).all()
        n = before["income_count"]
        assert (moved["income_mean"].abs() <= rows * 100.0 / (n + rows)).all()


@pytest.mark.parametrize("max_rows, max_groups", [(1, 1), (4, 1), (2, 3)])
def test_noise_scale_and_curve_by_hand(max_rows, max_groups):
    """One count per group, δ = 0: Laplace scale R·G/ε, the curve of one Laplace release."""
    eps = 0.7
    plan = _plan.Plan(epsilon=eps, delta=0.0, n_sums=1, n_quantiles=0, n_aggregates=1,
                      select=False, n_bounds=0, max_groups=max_groups, max_rows=max_rows)
    dist, scales = plan.sum_noise([1.0])
    assert dist == "laplace"
    # the plan may raise ε by its bisection only if the curve allows: here it cannot
    assert scales[0] == pytest.approx(max_rows * max_groups / eps, rel=1e-5)
    reference = max_groups * laplace_rdp(max_groups / plan.budgets["sums"][0])
    assert epsilon_of(plan.curve, 0.0) == pytest.approx(epsilon_of(reference, 0.0), rel=1e-9)
    assert epsilon_of(plan.curve, 0.0) <= eps * (1 + 1e-9)


def test_the_charged_curve_is_within_epsilon_and_the_composition_is_tight():
    plan = _plan.Plan(epsilon=1.0, delta=1e-5, n_sums=5, n_quantiles=2, n_aggregates=5,
                      select=True, n_bounds=2, max_groups=2, max_rows=3)
    spent = epsilon_of(plan.curve, 1e-5)
    assert 0.999 <= spent <= 1.0 + 1e-9
    shares = {p: e for p, (e, _) in plan.budgets.items()}
    # basic composition would give each part its share of ε: the accountant gives more
    assert sum(shares.values()) >= 1.0
