"""A budget handle knows its ledger: a copy, a restored file or another host's file is refused."""

import multiprocessing
import os
import pickle
import shutil
import socket

import pytest

from skdp import LedgerMismatchError, PrivacyBudget
from skdp.accounting import pure_dp_rdp
from _testing import left_alone


def test_a_copy_put_in_place_of_the_ledger_is_refused(tmp_path):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(1.0), label="before the backup")
    shutil.copy(path, tmp_path / "backup.sqlite")
    budget.charge(pure_dp_rdp(1.0), label="after the backup")
    # A backup restored over the ledger would forget the second charge.
    shutil.copy(tmp_path / "backup.sqlite", tmp_path / "restored.sqlite")
    (tmp_path / "restored.sqlite").replace(path)
    with pytest.raises(LedgerMismatchError, match="not this budget's ledger.*nothing was charged"):
        budget.charge(pure_dp_rdp(1.0))
    with pytest.raises(LedgerMismatchError):
        budget.spent()
    assert "another ledger" in repr(budget)  # showing never fails
    # Opened on purpose, the file at the path is continued as it is now.
    reopened = PrivacyBudget.open(path)
    n = len(reopened)
    reopened.charge(pure_dp_rdp(1.0))
    assert len(reopened) == n + 1


def test_a_handle_unpickled_on_another_host_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    shipped = pickle.dumps(budget)
    assert pickle.loads(shipped).charge(pure_dp_rdp(1.0)).id == 1  # same host: the one ledger
    # Another machine with its own file at the same path: same path, other host.
    monkeypatch.setattr(socket, "gethostname", lambda: "worker-2")
    worker = pickle.loads(shipped)
    with pytest.raises(LedgerMismatchError, match="host 'worker-2'"):
        worker.charge(pure_dp_rdp(1.0))
    monkeypatch.undo()
    assert len(budget) == 1


def test_a_backup_copied_into_the_same_file_is_refused_by_every_handle_that_saw_more(tmp_path):
    # shutil.copy writes into the ledger's own inode: host, device and inode
    # all match, but the charges the handles saw are missing. Each step runs in a
    # thread that ends, so no connection is open when the file is copied (left_alone).
    path, backup = tmp_path / "ledger.sqlite", tmp_path / "backup.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    left_alone(lambda: budget.charge(pure_dp_rdp(1.0), label="before the backup"))
    shutil.copy(path, backup)
    left_alone(lambda: budget.charge(pure_dp_rdp(1.0), label="after the backup"))
    shipped = pickle.dumps(budget)  # a worker's handle knows what its sender saw
    reader = PrivacyBudget.open(path)
    assert left_alone(lambda: len(reader)) == 2  # a read is enough to know the second charge
    shutil.copy(backup, path)
    for handle in (budget, pickle.loads(shipped), reader):
        with pytest.raises(LedgerMismatchError, match="without charge #2 as this handle saw it"):
            left_alone(lambda: handle.charge(pure_dp_rdp(1.0)))
        assert "another ledger" in left_alone(lambda: repr(handle))
    reopened = PrivacyBudget.open(path)  # on purpose: continued as it is now
    assert left_alone(lambda: (len(reopened), reopened.charge(pure_dp_rdp(1.0)).id)) == (1, 2)


def test_a_backup_copied_over_a_ledger_this_process_keeps_open_is_refused(tmp_path):
    # The thread's connection stays open, and the charges since the backup are in its
    # log: the file written behind SQLite's back is refused, and never written again.
    path, backup = tmp_path / "ledger.sqlite", tmp_path / "backup.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    left_alone(lambda: budget.charge(pure_dp_rdp(1.0), label="before the backup"))
    shutil.copy(path, backup)
    budget.charge(pure_dp_rdp(1.0), label="after the backup")
    assert os.path.getsize(f"{path}-wal") > 0  # the second charge is in the log, not the file
    shutil.copy(backup, path)
    for handle in (budget, PrivacyBudget.open(path)):
        with pytest.raises(LedgerMismatchError, match="written while this process had the"):
            handle.charge(pure_dp_rdp(1.0))
    with pytest.raises(LedgerMismatchError, match="written while this process had the"):
        len(budget)
    assert "another ledger" in repr(budget)
    if hasattr(os, "fork"):  # a fork closes the kept connections, except this one
        child = multiprocessing.get_context("fork").Process(target=os.getpid)
        child.start()
        child.join(60)
    assert backup.read_bytes() == path.read_bytes()  # its log was never copied into the file
