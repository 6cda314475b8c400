"""Ledger schema 4: each distinct event stored once; a charge costs the same however large the ledger."""

import json
import math
import multiprocessing
import os
import shutil
import sqlite3

import pytest

from skdp import BudgetExceededError, PrivacyBudget
from skdp.accounting import (
    PLDAccountant,
    RDPCurve,
    gaussian_rdp,
    laplace_rdp,
    pure_dp_rdp,
    zcdp_rdp,
)
from skdp.accounting import _running
from skdp.accounting._running import RunningPLDAccountant, _Sums
from skdp.budget import _ledger, _total

DATA = os.path.join(os.path.dirname(__file__), "data")
ORDERS = [1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 64.0]  # those of legacy_v3.sqlite


def _query(path, sql, args=()):
    conn = sqlite3.connect(path, isolation_level=None)  # autocommit
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def _version(path):
    return json.loads(_query(path, "SELECT value FROM meta WHERE key = 'schema_version'")[0][0])


@pytest.fixture
def legacy(tmp_path):
    """A copy of a ledger written by skdp at schema version 3, and what that skdp reported."""
    path = str(tmp_path / "legacy.sqlite")
    shutil.copy(os.path.join(DATA, "legacy_v3.sqlite"), path)
    with open(os.path.join(DATA, "legacy_v3.json")) as f:
        return path, json.load(f)


def test_a_v3_ledger_reads_as_before_without_writing(legacy):
    path, before = legacy
    budget = PrivacyBudget.open(path)
    assert list(budget.spent()) == before["spent"]
    info = budget.to_dict()
    assert [c["event"] for c in info["charges"]] == before["events"]
    assert [c["total_epsilon"] for c in info["charges"]] == before["totals"]
    assert budget.total_curve().rdp.tolist() == RDPCurve.from_dict(before["total_curve"]).rdp.tolist()
    with pytest.raises(BudgetExceededError):  # a refused charge is rolled back with its upgrade
        budget.charge(pure_dp_rdp(60.0, orders=ORDERS))
    assert _version(path) == 3
    assert not _query(path, "SELECT name FROM sqlite_master WHERE name = 'events'")


def test_a_v3_ledger_is_upgraded_by_its_first_charge(legacy):
    path, before = legacy
    budget = PrivacyBudget.open(path)
    new = laplace_rdp(39.0, orders=ORDERS)
    charge = budget.charge(new, label="new")
    assert _version(path) == 4
    # every event moved into the events table, once each
    events = before["events"] + [new.event.to_dict()]
    distinct = {json.dumps(e) for e in events if e is not None}
    rows = _query(path, "SELECT event FROM events")
    assert sorted(r[0] for r in rows) == sorted(distinct)
    assert _query(path, "SELECT count(*) FROM charges WHERE event IS NOT NULL") == [(0,)]
    assert [None if c.event is None else c.event.to_dict() for c in budget.ledger] == events
    # each charge says whether the PLD accountant composes its event (zCDP: no)
    counts = {json.loads(text)["kind"] + str(json.loads(text).get("noise_multiplier", "")): c
              for text, c in _query(path, "SELECT e.event, COUNT(*) FROM charges c JOIN events e "
                                          "ON e.id = c.event_id WHERE c.pld = 1 GROUP BY e.id")}
    assert counts["laplace40.0"] == 2 and counts["laplace41.0"] == 1 and counts["gaussian20.0"] == 3
    assert "zcdp" not in counts and counts["laplace39.0"] == 1
    # the old charges are accounted as before, and the new total is the recomposition's
    history = budget.to_dict()["charges"]
    assert [c["total_epsilon"] for c in history[:-1]] == before["totals"]
    with sqlite3.connect(path) as conn:
        recomposed = _ledger.compose_charges(conn, budget.orders)
    assert budget.total_curve().rdp.tobytes() == recomposed.curve.rdp.tobytes()
    assert budget.total_curve().rdp.tobytes() == (
        RDPCurve.from_dict(before["total_curve"]) + new.with_event(None)).rdp.tobytes()
    fresh = PrivacyBudget.open(path)  # a handle that composes the whole ledger afresh
    assert fresh.spent()[0] == pytest.approx(charge.total_epsilon, rel=2e-3)
    assert charge.total_epsilon >= before["spent"][0]


def test_each_event_is_stored_once_and_the_total_does_not_grow(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    budget = PrivacyBudget(100.0, 1e-5, ledger=path)
    sizes = []
    for round_ in range(3):
        for i in range(40):
            budget.charge(laplace_rdp(100.0 + i))
        budget.charge(zcdp_rdp(1e-4))
        sizes.append(_query(path, "SELECT length(curve) + length(rest), state FROM total"))
    assert _query(path, "SELECT count(*) FROM events") == [(41,)]
    assert _query(path, "SELECT pld, count(*) FROM charges GROUP BY pld") == [(0, 3), (1, 120)]
    assert _query(path, "SELECT count(*) FROM charges WHERE event_id IS NULL") == [(0,)]
    # what the total stores is about the same size after 41 charges as after 123 (the
    # digits of its floats vary): no events in it
    lengths = [size[0][0] for size in sizes]
    assert max(lengths) < 1.05 * min(lengths) and all(size[0][1] is None for size in sizes)


def _fill_distinct(path, n):
    budget = PrivacyBudget(math.inf, 1e-5, ledger=path, accountant="pld")
    with _ledger._connect(path, write=True) as conn:
        _ledger.ensure_schema(conn)
        for i in range(n):
            _ledger.insert_charge(conn, label=f"c{i}", epsilon=0.0, curve=laplace_rdp(200.0 + i))
    budget.charge(laplace_rdp(199.0))  # composes the ledger once, and keeps the state
    return budget


def test_a_charge_on_many_distinct_events_loops_over_none_of_them(tmp_path, monkeypatch):
    n = 3 * _running._SUMMED_FROM
    budget = _fill_distinct(str(tmp_path / "ledger.sqlite"), n)

    def forbidden(*args, **kwargs):
        raise AssertionError("looped over every event of the ledger")

    monkeypatch.setattr(_ledger, "compose_charges", forbidden)
    monkeypatch.setattr(_ledger, "total_from_rows", forbidden)  # the process kept the total
    monkeypatch.setattr(RunningPLDAccountant, "_active", forbidden)
    monkeypatch.setattr(RunningPLDAccountant, "with_leaves", forbidden)
    monkeypatch.setattr(_Sums, "of", forbidden)
    monkeypatch.setattr(_total.Total, "leaves", property(forbidden))
    for i in range(5):
        charge = budget.charge(laplace_rdp(150.0 - i))
    monkeypatch.undo()
    state = budget._pld
    assert state.incremental and len(budget) == n + 6
    # the running sums are those of the events, as a fresh sum gives them
    fresh = _Sums.of(dict(state.leaf_pairs()))
    assert state._sums.bounds() == fresh.bounds() and state._sums.n_runs() == n + 6
    assert state._sums.var == pytest.approx(fresh.var, rel=1e-12)
    full = PLDAccountant()
    for c in budget.ledger:
        full.compose(c.event)
    assert charge.total_epsilon == pytest.approx(full.epsilon(1e-5), rel=2e-3)


def test_changing_the_events_behind_the_totals_back_drops_it(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    budget = PrivacyBudget(2.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(0.25))
    budget.charge(pure_dp_rdp(0.25))
    assert budget.spent() == (0.5, 0.0)
    # an event that claims more privacy than the charges' curves: read from the kept
    # total, the PLD would count two charges of ε = 0.01
    _query(path, "UPDATE events SET event = ?", (json.dumps(pure_dp_rdp(0.01).event.to_dict()),))
    assert _query(path, "SELECT count(*) FROM total") == [(0,)]
    assert PrivacyBudget.open(path).spent() == (0.5, 0.0)  # the curves alone count
    budget.charge(pure_dp_rdp(0.25))  # composes again and writes whom the PLD composes
    assert _query(path, "SELECT pld FROM charges ORDER BY id") == [(0,), (0,), (1,)]
    assert PrivacyBudget.open(path).spent() == (0.75, 0.0)
    assert budget.spent() == (0.75, 0.0)


def _charge_in_child(path, epsilon):
    PrivacyBudget.open(path).charge(pure_dp_rdp(epsilon))


def test_a_total_kept_for_a_ledger_later_replaced_by_a_backup_is_not_used(tmp_path):
    # The process keeps the total it wrote last; the file is then put back to a
    # backup of the same generation, and another process charges it, so its
    # last id and generation are those the kept total has, with another charge.
    path = str(tmp_path / "ledger.sqlite")
    budget = PrivacyBudget(5.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(0.5))
    budget.charge(pure_dp_rdp(0.5))
    shutil.copyfile(path, str(tmp_path / "backup.sqlite"))
    budget.charge(pure_dp_rdp(0.25))
    shutil.copyfile(str(tmp_path / "backup.sqlite"), path)  # the same inode, the old content
    child = multiprocessing.get_context("fork").Process(target=_charge_in_child, args=(path, 2.0))
    child.start()
    child.join()
    assert child.exitcode == 0
    reopened = PrivacyBudget.open(path)
    assert len(reopened) == 3 and reopened.spent() == (3.0, 0.0)
    reopened.charge(pure_dp_rdp(0.5))
    assert reopened.spent() == (3.5, 0.0)
    with sqlite3.connect(path) as conn:
        assert _ledger.compose_charges(conn, reopened.orders).curve.pure_epsilon == 3.5


def test_another_processs_charges_are_added_to_the_kept_total(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    budget = PrivacyBudget(10.0, 1e-5, ledger=path)
    for i in range(3):
        budget.charge(gaussian_rdp(10.0 + i))
    ctx = multiprocessing.get_context("fork")
    for eps in (0.5, 0.25):
        child = ctx.Process(target=_charge_in_child, args=(path, eps))
        child.start()
        child.join()
        assert child.exitcode == 0
    charge = budget.charge(laplace_rdp(20.0))
    with sqlite3.connect(path) as conn:
        recomposed = _ledger.compose_charges(conn, budget.orders)
    assert budget.total_curve().rdp.tobytes() == recomposed.curve.rdp.tobytes()
    assert dict(budget._pld.leaf_pairs()) == recomposed.leaves
    assert charge.total_epsilon == PrivacyBudget.open(path).spent()[0]


def test_the_log_of_a_processs_totals_starts_anew_instead_of_growing(tmp_path, monkeypatch):
    monkeypatch.setattr(_total, "_COMPACT_FROM", 8)
    budget = PrivacyBudget(100.0, 1e-5, ledger=str(tmp_path / "ledger.sqlite"))
    for i in range(40):
        charge = budget.charge(laplace_rdp(50.0 + i % 2))
        log, size = budget._pld_at
        assert len(log) <= 9 and size <= 9  # 8 entries at most, then one added
    assert dict(budget._pld.leaf_pairs()) == {laplace_rdp(50.0).event: 20, laplace_rdp(51.0).event: 20}
    fresh = PrivacyBudget.open(str(tmp_path / "ledger.sqlite"))
    assert fresh.spent()[0] == pytest.approx(charge.total_epsilon, rel=1e-9)


def test_the_running_sums_are_those_of_the_events_as_a_loop_over_them_gives():
    from skdp.accounting import (
        ApproximateDPEvent,
        GaussianEvent,
        LaplaceEvent,
        PoissonSampledEvent,
        PureDPEvent,
    )

    # ε-DP events on a common lattice of 0.02, then one of 0.01 (a new smallest spacing that
    # the others are multiples of), one of 0.015 (none left), many Gaussians (merged into one), then events without a
    # lattice, with infinite losses, and with an infinite-loss mass (approximate DP)
    events = [PureDPEvent(0.02 * (1 + i)) for i in range(70)] + [PureDPEvent(0.01)]
    events += [PureDPEvent(0.015)]  # not a multiple of 0.01: no common lattice
    events += [GaussianEvent(20.0 + i) for i in range(30)]
    events += [ApproximateDPEvent(0.05, 1e-9), LaplaceEvent(30.0),
               PoissonSampledEvent(0.01, GaussianEvent(2.0))]
    acc = RunningPLDAccountant()
    seen, checked, lattices = {}, 0, []
    for event in events:
        acc = acc.plus([(event, 2)])
        seen[event] = seen.get(event, 0) + 2
        if len(seen) <= _running._SUMMED_FROM:
            continue
        sums = acc._summed()
        full = PLDAccountant()
        for leaf, c in seen.items():
            full.compose(leaf, c)
        got, want = sums.bounds(), full._bounds()
        assert got[:2] == want[:2]
        for a, b in zip(got[2:], want[2:]):
            assert (a is None and b is None) or a == pytest.approx(b, rel=1e-12, abs=1e-300)
        active = full._active()
        tail = full.tail_bound / 2.0 ** math.ceil(math.log2(sum(c for _, c in active)))
        assert sums.step(acc, tail, acc._leaves) == pytest.approx(full._grid_step(active, tail),
                                                                   rel=1e-9)
        assert sums.n_active() == len(active) and sums.n_runs() == sum(c for _, c in active)
        lattices.append(None if sums.no_lattice or sums.gauss > 0 else sums.lattice)
        checked += 1
    assert checked == len(events) - _running._SUMMED_FROM
    # the sums cover the last 6 of the 70 ε-DP events, then the 0.01 one, then the rest
    assert lattices[:8] == [pytest.approx(0.02)] * 6 + [pytest.approx(0.01), None]
    assert lattices[-1] is None
