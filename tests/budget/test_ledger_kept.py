"""The SQLite ledger's kept connections: one per process, thread and file, never across a fork.

A thread keeps its connection to a ledger file between transactions (a charge
then syncs the disk once). SQLite's locks are per process, so a child must
never use nor close a connection of its parent: every kept connection is
closed before a fork, and one inherited anyway (a fork inside a transaction of
the forking thread) is left open and unused by the child. A kept connection
never writes a file other than the one at the ledger's path.
"""

import multiprocessing
import os
import shutil
import sqlite3

import pytest

from skdp import PrivacyBudget
from skdp.accounting import pure_dp_rdp
from skdp.budget import _ledger
from _testing import charge_in_process


@pytest.mark.parametrize("method", ["fork", "spawn"])  # spawn: as loky's workers
def test_children_charging_while_the_parent_charges_lose_no_charge(tmp_path, method):
    path = str(tmp_path / "ledger.sqlite")
    budget = PrivacyBudget(100.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(0.01), label="parent")  # the parent's connection is kept
    ctx = multiprocessing.get_context(method)
    go, results = ctx.Event(), ctx.Queue()
    children = [ctx.Process(target=charge_in_process, args=(path, pure_dp_rdp(0.01), 15, go, results))
                for _ in range(3)]
    for child in children:
        child.start()
    go.set()
    for _ in range(15):
        budget.charge(pure_dp_rdp(0.01), label="parent")
    assert [results.get(timeout=120) for _ in children] == [None] * 3
    for child in children:
        child.join(60)
    charges = budget.ledger
    assert len(charges) == 16 + 3 * 15 == len(PrivacyBudget.open(path))
    labels = [c.label for c in charges]
    assert labels.count("parent") == 16
    assert sorted(labels.count(f"process {c.pid}") for c in children) == [15, 15, 15]
    assert budget.spent()[0] == pytest.approx(0.01 * 61, rel=1e-12)


def test_a_child_forked_inside_a_transaction_never_uses_nor_closes_the_parents_connection(
        tmp_path):
    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork")
    path = str(tmp_path / "ledger.sqlite")
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(0.1), label="parent")
    with budget._store.transaction(write=False):  # this thread's connection is in use
        conn = _ledger._local.kept[budget._store.path].conn
        pid = os.fork()
        if pid == 0:  # the child: exits without running the parent's test code
            code = 1
            try:
                leaked = any(c is conn for c in _ledger._leaked)
                budget.charge(pure_dp_rdp(0.1), label="child")  # on a connection of its own
                mine = _ledger._local.kept[budget._store.path].conn
                conn.total_changes  # noqa: B018 (raises if it was closed)
                code = 0 if leaked and mine is not conn else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    budget.charge(pure_dp_rdp(0.1), label="parent")  # the parent's connection still works
    assert [c.label for c in budget.ledger] == ["parent", "child", "parent"]
    assert _ledger._local.kept[budget._store.path].conn is conn


def test_a_deleted_ledger_is_not_made_again(tmp_path):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(1.0))  # kept, its log beside the file
    os.remove(path)
    with pytest.raises(FileNotFoundError, match="Nothing was charged"):
        budget.charge(pure_dp_rdp(1.0))
    assert not path.exists()
    # Below the handle's own check: the kept connection is not written either.
    with pytest.raises(FileNotFoundError):
        with _ledger._kept_transaction(str(path), write=True):
            pass
    assert not path.exists()
    # The old log was emptied into the old file: a new ledger at the path starts empty.
    assert not os.path.exists(f"{path}-wal") or os.path.getsize(f"{path}-wal") == 0
    fresh = PrivacyBudget(10.0, 0.0, ledger=path)
    assert len(fresh) == 0 and fresh.charge(pure_dp_rdp(1.0)).id == 1


def test_a_kept_connection_never_writes_a_file_moved_away_from_the_path(tmp_path):
    # A handle that does not know its file's identity (pickled by an older skdp) charges
    # the file at the path, as a connection opened per transaction would, and not the
    # file its kept connection opened, which was moved away.
    path, other = tmp_path / "ledger.sqlite", tmp_path / "other.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(1.0), label="first file")
    PrivacyBudget(10.0, 0.0, ledger=other)
    os.link(path, tmp_path / "moved.sqlite")  # the first file, reachable under another name
    os.replace(other, path)
    budget._store.identity, budget._seen = None, None
    budget.charge(pure_dp_rdp(1.0), label="second file")
    with sqlite3.connect(tmp_path / "moved.sqlite") as conn:
        assert conn.execute("SELECT label FROM charges").fetchall() == [("first file",)]
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT label FROM charges").fetchall() == [("second file",)]


def test_a_thread_keeps_its_connection_and_syncs_the_log_once_per_charge(tmp_path, monkeypatch):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(0.1))
    conn = _ledger._local.kept[budget._store.path].conn
    synced = []
    sync = _ledger._sync
    monkeypatch.setattr(_ledger, "_sync", lambda fd: (synced.append(fd), sync(fd)))
    for _ in range(3):
        budget.charge(pure_dp_rdp(0.1))
    assert len(synced) == 3 and _ledger._local.kept[budget._store.path].conn is conn
    shutil.copy(path, tmp_path / "copy.sqlite")  # the file alone lacks the charges in the log
    assert len(budget) == 4


def test_an_error_as_a_transaction_begins_leaves_no_lock_held(tmp_path, monkeypatch):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(0.1))
    kept = _ledger._local.kept[budget._store.path]

    def interrupted(kept, wait=2.0):
        monkeypatch.undo()
        raise KeyboardInterrupt

    monkeypatch.setattr(_ledger, "_written_behind", interrupted)  # inside BEGIN IMMEDIATE
    with pytest.raises(KeyboardInterrupt):
        budget.charge(pure_dp_rdp(0.1))
    assert not kept.lock.locked() and not kept.conn.in_transaction
    assert budget.charge(pure_dp_rdp(0.1)).id == 2 and len(budget) == 2
