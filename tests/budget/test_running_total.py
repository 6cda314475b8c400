"""The ledger's running total: equal to the recomposition, migration of v1 files, self-healing."""

import json
import math
import sqlite3
import threading
import time

import numpy as np
import pytest

from skdp import BudgetExceededError, LedgerMismatchError, PrivacyBudget
from skdp.accounting import (
    DEFAULT_ORDERS,
    RDPCurve,
    approximate_dp_rdp,
    epsilon_of,
    gaussian_rdp,
    laplace_rdp,
    pure_dp_rdp,
)
from skdp.budget import _ledger

TRIGGERS = {f"charges_{e}_drops_total" for e in ("insert", "update", "delete")}


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "ledger.sqlite")


def _mixed_curves():
    rng = np.random.default_rng(0)
    curves = []
    for sigma in rng.uniform(3.0, 40.0, size=30):
        curves.append(gaussian_rdp(float(sigma)))
    curves += [laplace_rdp(25.0), pure_dp_rdp(0.01), approximate_dp_rdp(0.01, 1e-9)]
    # A curve on part of the orders: the total lives on the common orders.
    curves.append(RDPCurve(DEFAULT_ORDERS[::2], 1e-3 * DEFAULT_ORDERS[::2], mechanism="half"))
    curves += [gaussian_rdp(float(s)) for s in rng.uniform(3.0, 40.0, size=10)]
    return curves


def _recomposed(path, orders):
    """Every charge's curve composed in id order from zero, as before v2."""
    with sqlite3.connect(path) as conn:
        texts = [r[0] for r in conn.execute("SELECT curve FROM charges ORDER BY id")]
    total = RDPCurve.zero(orders)
    for text in texts:
        total = total + RDPCurve.from_dict(json.loads(text))
    return total


def _stored_total(path):
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT n_charges, last_id, curve FROM total").fetchall()


def _assert_identical(a, b):
    # Bit for bit: same orders, same floats, same δ and pure ε.
    assert np.array_equal(a.orders, b.orders)
    assert a.rdp.tobytes() == b.rdp.tobytes()
    assert (a.delta, a.pure_epsilon) == (b.delta, b.pure_epsilon)


def _old_spent(budget, total):
    # PrivacyBudget.spent() as it was computed from the recomposition.
    eps, order = total.epsilon_and_order(budget.delta)
    return eps, (total.delta if order == math.inf else budget.delta)


# -- equality with the recomposition -------------------------------------------
def test_running_total_is_bit_identical_to_the_recomposition_in_id_order(path):
    budget = PrivacyBudget(50.0, 1e-5, ledger=path, accountant="rdp")
    curves = _mixed_curves()
    for i, curve in enumerate(curves):
        budget.charge(curve, label=f"charge {i}")
        (n, last_id, text), = _stored_total(path)
        assert (n, last_id) == (i + 1, i + 1)
        recomposed = _recomposed(path, budget.orders)
        _assert_identical(RDPCurve.from_dict(json.loads(text)), recomposed)
    total = budget.total_curve()
    _assert_identical(total, _recomposed(path, budget.orders))
    assert total.orders.size == DEFAULT_ORDERS[::2].size  # the common orders
    assert budget.spent() == _old_spent(budget, total)
    info = budget.to_dict()
    assert info["charges"][-1]["total_epsilon"] == budget.spent()[0] == info["spent_epsilon"]
    # The test has power: composing the same curves in another order moves
    # at least one value by rounding, so an out-of-order total would fail.
    reverse = RDPCurve.zero(budget.orders)
    for curve in reversed(curves):
        reverse = reverse + curve
    assert reverse.rdp.tobytes() != total.rdp.tobytes()


def test_charge_does_not_recompose_the_ledger(path, monkeypatch):
    budget = PrivacyBudget(10.0, 1e-5, ledger=path, accountant="rdp")
    for _ in range(5):
        budget.charge(gaussian_rdp(20.0))

    def forbidden(*args, **kwargs):
        raise AssertionError("the whole ledger was recomposed")

    monkeypatch.setattr(_ledger, "compose_charges", forbidden)
    budget.charge(gaussian_rdp(20.0))
    assert budget.can_afford(gaussian_rdp(20.0))
    assert budget.spent() == _old_spent(budget, _recomposed(path, budget.orders))
    assert len(budget) == 6 and "charges=6" in repr(budget)


def test_refused_charge_leaves_the_total_unchanged(path):
    budget = PrivacyBudget(1.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(0.7))
    before = _stored_total(path)
    with pytest.raises(BudgetExceededError):
        budget.charge(pure_dp_rdp(0.4))
    assert _stored_total(path) == before
    assert budget.spent() == (0.7, 0.0)


def test_infinite_cap_deltas_reaching_one_record_nothing(path):
    # The cap does not refuse, but the composed δ would reach 1: the charge
    # fails before anything is written and the ledger stays readable.
    budget = PrivacyBudget(math.inf, 0.5, ledger=path)
    budget.charge(approximate_dp_rdp(0.1, 0.6))
    with pytest.raises(ValueError, match="delta reaches 1"):
        budget.charge(approximate_dp_rdp(0.1, 0.5))
    assert len(budget) == 1
    assert budget.spent() == (math.inf, 0.5)
    assert _stored_total(path)[0][:2] == (1, 1)


# -- ledgers of schema version 1 -----------------------------------------------
def _write_v1_ledger(path, epsilon, delta, curves):
    """A ledger as skdp wrote it before the running total (schema version 1)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute(
        "CREATE TABLE charges (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, "
        "label TEXT NOT NULL, epsilon REAL NOT NULL, curve TEXT NOT NULL, pid INTEGER NOT NULL)"
    )
    meta = {"epsilon": epsilon, "delta": delta, "orders": DEFAULT_ORDERS.tolist(),
            "schema_version": 1, "created": time.time()}
    rows = [(k, json.dumps(v)) for k, v in meta.items()]
    conn.executemany("INSERT INTO meta VALUES (?, ?)", rows)
    for i, curve in enumerate(curves):
        conn.execute(
            "INSERT INTO charges (time, label, epsilon, curve, pid) VALUES (?, ?, ?, ?, ?)",
            (time.time(), f"old {i}", curve.epsilon(delta), json.dumps(_old_curve_dict(curve)), 1),
        )
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()


def _old_curve_dict(curve):
    """A curve as skdp wrote it before curves carried events."""
    return {k: v for k, v in curve.to_dict().items() if k != "event"}


def _schema(path):
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        version = json.loads(
            conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        )
    return names, version


def test_v1_ledger_is_read_without_writing_and_migrated_by_the_first_charge(path):
    curves = [gaussian_rdp(10.0), pure_dp_rdp(0.2), gaussian_rdp(12.0)]
    _write_v1_ledger(path, 3.0, 1e-5, curves)
    budget = PrivacyBudget.open(path)
    assert budget.accountant == "tightest"  # the default: the file stored none
    expected = _recomposed(path, budget.orders)
    # Reading composes on the fly and changes nothing in the file; charges
    # without an event are composed by their curves, as before.
    assert budget.spent() == _old_spent(budget, expected)
    _assert_identical(budget.total_curve(), expected)
    assert len(budget) == 3 and budget.can_afford(gaussian_rdp(10.0))
    assert [c.label for c in budget.ledger] == ["old 0", "old 1", "old 2"]
    names, version = _schema(path)
    assert "total" not in names and version == 1
    # A refused charge migrates nothing either: its transaction is rolled back.
    with pytest.raises(BudgetExceededError):
        budget.charge(pure_dp_rdp(10.0))
    assert _schema(path) == (names, 1)
    # The first recorded charge migrates inside its own write transaction.
    budget.charge(gaussian_rdp(10.0), label="new")
    names, version = _schema(path)
    assert {"total"} | TRIGGERS <= names and version == 4
    (n, last_id, text), = _stored_total(path)
    assert (n, last_id) == (4, 4)
    _assert_identical(RDPCurve.from_dict(json.loads(text)), _recomposed(path, budget.orders))
    assert [c.label for c in budget.ledger][-1] == "new"
    assert [c.event for c in budget.ledger] == [None, None, None, gaussian_rdp(10.0).event]
    # The new charge has a PLD, the old ones only curves: the smaller of RDP
    # and (PLD of the new + RDP of the old, basic composition).
    rdp = _old_spent(budget, _recomposed(path, budget.orders))
    old = sum((c.curve for c in budget.ledger[:3]), RDPCurve.zero(budget.orders))
    hybrid = min(old.epsilon(1e-5 * (1 - f)) + epsilon_of(gaussian_rdp(10.0), 1e-5 * f)
                 for f in (0.5, 0.25, 0.75, 0.1, 0.9, 0.03, 0.97, 0.01, 0.99))
    assert budget.spent()[0] == min(rdp[0], hybrid)
    assert PrivacyBudget.open(path, accountant="rdp").spent() == rdp


def test_threads_charging_a_v1_ledger_never_overspend(path):
    _write_v1_ledger(path, 1.0, 0.0, [pure_dp_rdp(0.1)] * 2)
    budget = PrivacyBudget.open(path)
    barrier = threading.Barrier(4)
    accepted = []

    def work():
        barrier.wait()
        for _ in range(4):
            try:
                budget.charge(pure_dp_rdp(0.1))
                accepted.append(1)
            except BudgetExceededError:
                pass

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Ten charges of 0.1 sum to 0.9999999999999999: 2 old + 8 new fit the cap of 1.
    assert len(accepted) == 8 and len(budget) == 10
    assert budget.spent() == (sum([0.1] * 10), 0.0)
    assert _stored_total(path)[0][:2] == (10, 10)


# -- self-healing ---------------------------------------------------------------
def _raw(path, *statements):
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for sql, args in statements:
            conn.execute(sql, args)
    finally:
        conn.close()


def _raw_insert(curve):
    # What an older skdp (or any other program) writes: a charge, no total.
    return (
        "INSERT INTO charges (time, label, epsilon, curve, pid) VALUES (?, 'raw', 0, ?, 1)",
        (time.time(), json.dumps(_old_curve_dict(curve))),
    )


def test_charge_inserted_without_the_total_still_counts_towards_the_cap(path):
    budget = PrivacyBudget(1.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(0.4))
    _raw(path, _raw_insert(pure_dp_rdp(0.4)))
    assert _stored_total(path) == []  # the insert trigger dropped it
    assert budget.spent() == (0.8, 0.0) and not budget.can_afford(pure_dp_rdp(0.4))
    with pytest.raises(BudgetExceededError, match="in 2 charges"):
        budget.charge(pure_dp_rdp(0.4))
    budget.charge(pure_dp_rdp(0.2))
    assert _stored_total(path)[0][:2] == (3, 3)
    assert budget.spent() == (0.4 + 0.4 + 0.2, 0.0)


def test_stale_total_is_recomposed_even_without_the_triggers(path):
    budget = PrivacyBudget(1.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(0.4))
    _raw(path, *[(f"DROP TRIGGER {name}", ()) for name in sorted(TRIGGERS)])
    _raw(path, _raw_insert(pure_dp_rdp(0.4)))
    assert _stored_total(path)[0][:2] == (1, 1)  # kept, but its last id is not the last charge
    assert budget.spent() == (0.8, 0.0)
    with pytest.raises(BudgetExceededError):
        budget.charge(pure_dp_rdp(0.4))
    # The next recorded charge puts the triggers back and a correct total.
    budget.charge(pure_dp_rdp(0.1))
    assert TRIGGERS <= _schema(path)[0]
    assert _stored_total(path)[0][:2] == (3, 3)
    assert budget.spent() == (0.4 + 0.4 + 0.1, 0.0)


@pytest.mark.parametrize(
    "tamper",
    [
        ("DELETE FROM total", ()),
        ("DELETE FROM charges WHERE id = 1", ()),
        ("DELETE FROM charges WHERE id = 2", ()),
        ("UPDATE charges SET curve = ? WHERE id = 1", (json.dumps(pure_dp_rdp(0.5).to_dict()),)),
    ],
)
def test_total_follows_any_change_to_the_charges(path, tamper):
    # Editing a charge's curve leaves its event behind: an event more private
    # than its curve is not used (the curve alone counts), so every
    # accountant follows the edit.
    budget = PrivacyBudget(2.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(0.25))
    budget.charge(pure_dp_rdp(0.125))
    _raw(path, tamper)
    if "id = 2" in tamper[0] and tamper[0].startswith("DELETE"):
        # A handle that saw a charge refuses a ledger without it (it looks like a
        # backup put in its place); opened again on purpose, the ledger is followed.
        with pytest.raises(LedgerMismatchError, match="without charge #2"):
            budget.spent()
        budget = PrivacyBudget.open(path)
    expected = _recomposed(path, budget.orders)
    assert budget.spent() == _old_spent(budget, expected)
    budget.charge(pure_dp_rdp(0.0625))
    (n, last_id, text), = _stored_total(path)
    assert n == len(budget)
    _assert_identical(RDPCurve.from_dict(json.loads(text)), _recomposed(path, budget.orders))
    assert budget.spent() == _old_spent(budget, _recomposed(path, budget.orders))
