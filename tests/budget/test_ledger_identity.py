"""A budget handle knows its ledger: a copy, a restored file or another host's file is refused."""

import pickle
import shutil
import socket

import pytest

from skdp import LedgerMismatchError, PrivacyBudget
from skdp.accounting import pure_dp_rdp


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
    # all match, but the charges the handles saw are missing.
    path, backup = tmp_path / "ledger.sqlite", tmp_path / "backup.sqlite"
    budget = PrivacyBudget(10.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(1.0), label="before the backup")
    shutil.copy(path, backup)
    budget.charge(pure_dp_rdp(1.0), label="after the backup")
    shipped = pickle.dumps(budget)  # a worker's handle knows what its sender saw
    reader = PrivacyBudget.open(path)
    assert len(reader) == 2  # a read is enough to know the second charge
    shutil.copy(backup, path)
    for handle in (budget, pickle.loads(shipped), reader):
        with pytest.raises(LedgerMismatchError, match="without charge #2 as this handle saw it"):
            handle.charge(pure_dp_rdp(1.0))
        assert "another ledger" in repr(handle)
    reopened = PrivacyBudget.open(path)  # on purpose: continued as it is now
    assert len(reopened) == 1 and reopened.charge(pure_dp_rdp(1.0)).id == 2
