"""When a charge is on disk: the SQLite ledger syncs its log after the commit, outside the lock.

In WAL mode a write commits with ``synchronous = NORMAL`` (the log written,
not synced) and :func:`skdp.budget._ledger._sync_log` syncs the log once the
write lock is released, before ``charge`` returns; other journal modes keep
``FULL``. A power loss cannot be simulated here: these tests check the order
of the steps that the argument in ``_sync_log`` relies on.
"""

import os
import shutil
import sqlite3

import pytest

from skdp import PrivacyBudget
from skdp.accounting import pure_dp_rdp
from skdp.budget import _ledger


def _synchronous(path):
    with _ledger._connect(str(path), write=False) as conn:
        return conn.execute("PRAGMA synchronous").fetchone()[0]


def test_wal_ledgers_commit_without_a_sync_and_others_sync_in_the_commit(tmp_path):
    path = tmp_path / "ledger.sqlite"
    PrivacyBudget(10.0, 0.0, ledger=path)
    assert _synchronous(path) == 1  # NORMAL: the log is synced by _sync_log
    legacy = tmp_path / "legacy.sqlite"
    shutil.copy(path, legacy)
    with sqlite3.connect(legacy) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
    assert _synchronous(legacy) == 2  # FULL: a rollback journal syncs inside the commit
    assert PrivacyBudget.open(legacy).charge(pure_dp_rdp(1.0)).id == 1


def test_the_log_is_synced_after_the_write_lock_is_released(tmp_path, monkeypatch):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(1.0))
    # Another open connection: the charge's close is not the last one, so the
    # log stays (as when other processes charge the ledger) and must be synced.
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    other.execute("SELECT count(*) FROM charges").fetchone()
    synced = []
    real = _ledger._sync

    def sync(fd):
        assert os.path.samefile(f"/proc/self/fd/{fd}", f"{path}-wal")
        other.execute("BEGIN IMMEDIATE")  # raises "database is locked" while the lock is held
        synced.append(other.execute("SELECT count(*) FROM charges").fetchone()[0])
        other.execute("ROLLBACK")
        real(fd)

    monkeypatch.setattr(_ledger, "_sync", sync)
    budget.charge(pure_dp_rdp(1.0))
    assert synced == [2]  # once, after the commit, with the lock free
    other.close()


def test_a_ledger_left_alone_is_one_self_contained_file(tmp_path, monkeypatch):
    # The last connection's close checkpoints the log into the file (synced) and
    # removes it: nothing is left to sync, and a copy of the file alone holds
    # every charge.
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    calls = []
    monkeypatch.setattr(_ledger, "_sync", calls.append)
    budget.charge(pure_dp_rdp(1.0))
    assert calls == [] and not os.path.exists(f"{path}-wal")
    shutil.copy(path, tmp_path / "copy.sqlite")
    assert len(PrivacyBudget.open(tmp_path / "copy.sqlite")) == 1


def test_a_failed_sync_fails_the_charge_which_stays_recorded(tmp_path, monkeypatch):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    other = sqlite3.connect(path)  # keeps the log, so the charge syncs it
    other.execute("SELECT count(*) FROM charges").fetchone()

    def failing(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(_ledger, "_sync", failing)
    with pytest.raises(OSError, match="Input/output error"):
        budget.charge(pure_dp_rdp(1.0))  # the fit that asked for it does not run
    monkeypatch.undo()
    other.close()
    assert len(budget) == 1  # it counts, unused: never under the spend


def test_a_ledger_reached_through_a_symbolic_link_syncs_the_log_beside_its_file(
        tmp_path, monkeypatch):
    # SQLite keeps the log beside the file the link points to; the sync must find it there
    # (it looked beside the link, found nothing and synced nothing)
    (tmp_path / "real").mkdir()
    real = str(tmp_path / "real" / "ledger.sqlite")
    link = str(tmp_path / "link.sqlite")
    PrivacyBudget(10.0, 0.0, ledger=real)
    os.symlink(real, link)
    budget = PrivacyBudget.open(link)
    budget.charge(pure_dp_rdp(0.1))
    other = sqlite3.connect(real, isolation_level=None)  # another user: the log stays
    try:
        other.execute("SELECT count(*) FROM charges").fetchone()
        synced = []
        sync = _ledger._sync
        monkeypatch.setattr(_ledger, "_sync",
                            lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), sync(fd)))
        budget.charge(pure_dp_rdp(0.1))
        assert os.path.exists(real + "-wal")
        assert synced == [real + "-wal"]
    finally:
        other.close()
