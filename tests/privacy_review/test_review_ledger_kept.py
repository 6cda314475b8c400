"""Review of the SQLite ledger's kept connections (one per process, thread and file).

Charges from threads, forks (inside and outside another thread's transaction),
every multiprocessing start method and joblib's loky, against one ledger and
one cap: every charge recorded is counted, the cap is never crossed, and a new
process reads them all. A charge is readable once ``charge`` returns, even when
its process is killed right after. A refused or failed charge records nothing
and leaves the kept connection usable. A ledger deleted or replaced under a
kept connection is never written nor merged with the old log.

The cap is 2.0 and every charge a pure ε = 1/16 (exact binary fractions): at
δ = 0 the composition is their sum, so exactly 32 charges fit.
"""

import multiprocessing
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from joblib import Parallel, delayed

from skdp import PrivacyBudget
from skdp.accounting import pure_dp_rdp
from skdp.budget import _ledger
from skdp.exceptions import BudgetExceededError, LedgerMismatchError
from _testing import charge_in_process

STEP, CAP, FITS = 0.0625, 2.0, 32
needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _count_in_new_process(path):
    """The number of charges and their total ε, read by a fresh interpreter."""
    code = ("import sys; from skdp import PrivacyBudget; b = PrivacyBudget.open(sys.argv[1]); "
            "print(len(b), b.spent()[0])")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    return int(out[0]), float(out[1])


def _charge_until_refused(budget, n, label):
    done = 0
    for _ in range(n):
        try:
            budget.charge(pure_dp_rdp(STEP), label=label)
        except BudgetExceededError:
            break
        done += 1
    return done


def _fork_charging(budget, n):
    """Fork a child that charges until refused and exits with the number it recorded."""
    pid = os.fork()
    if pid == 0:
        code = 255
        try:
            code = _charge_until_refused(budget, n, f"child {os.getpid()}")
        finally:
            os._exit(code)
    return pid


def _exit_code(pid):
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _assert_write_lock_free(path):
    with sqlite3.connect(path, timeout=2.0, isolation_level=None) as other:
        other.execute("BEGIN IMMEDIATE")  # "database is locked" if the lock were held
        other.execute("ROLLBACK")
    other.close()


@needs_fork
def test_threads_and_forks_inside_and_outside_a_transaction_count_every_charge(
        tmp_path, monkeypatch):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(CAP, 0.0, ledger=path)
    parent, inside = os.getpid(), threading.Event()
    insert = _ledger.insert_charge

    def slow_insert(conn, **kwargs):  # the parent's threads linger inside the transaction
        if os.getpid() == parent:
            inside.set()
            time.sleep(0.02)
        return insert(conn, **kwargs)

    monkeypatch.setattr(_ledger, "insert_charge", slow_insert)
    done = []
    threads = [threading.Thread(target=lambda: done.append(_charge_until_refused(budget, 8, "t")))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    children = []
    for _ in range(2):  # forked while a thread is inside a write transaction
        inside.clear()
        assert inside.wait(30)
        children.append(_fork_charging(budget, 8))
    for thread in threads:
        thread.join(60)
    children.append(_fork_charging(budget, 8))  # forked while every thread is idle
    codes = [_exit_code(pid) for pid in children]
    assert all(0 <= code <= 8 for code in codes)
    recorded = sum(done) + sum(codes)
    labels = [c.label for c in budget.ledger]
    assert len(labels) == recorded and labels.count("t") == sum(done)
    assert sorted(labels.count(f"child {pid}") for pid in children) == sorted(codes)
    # 40 tries, 32 fit: a child is refused, only once the cap is reached exactly.
    assert any(code < 8 for code in codes) and recorded == FITS
    assert budget.spent()[0] == CAP
    assert _count_in_new_process(path) == (FITS, CAP)


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_processes_of_every_start_method_never_cross_the_cap(tmp_path, method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    path = str(tmp_path / "ledger.sqlite")
    budget = PrivacyBudget(CAP, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(STEP), label="parent")  # kept by the main thread
    ctx = multiprocessing.get_context(method)
    go, results = ctx.Event(), ctx.Queue()
    children = [ctx.Process(target=charge_in_process, args=(path, pure_dp_rdp(STEP), 12, go, results))
                for _ in range(3)]
    for child in children:
        child.start()
    go.set()
    mine = [_charge_until_refused(budget, 12, "parent")]
    thread = threading.Thread(target=lambda: mine.append(_charge_until_refused(budget, 6, "thread")))
    thread.start()
    outcomes = [results.get(timeout=120) for _ in children]
    thread.join(60)
    for child in children:
        child.join(60)
        assert child.exitcode == 0
    # 1 + 12 + 6 + 3 * 12 = 55 tries, 32 fit: someone is refused, and only at the cap.
    assert all(o is None or o.startswith("BudgetExceededError") for o in outcomes)
    assert any(o is not None for o in outcomes) or min(mine) < 12
    labels = [c.label for c in budget.ledger]
    assert len(labels) == FITS
    assert labels.count("parent") == 1 + mine[0] and labels.count("thread") == mine[1]
    per_child = [labels.count(f"process {c.pid}") for c in children]
    # The queue's order is not the children's: those never refused made all 12 charges.
    assert sum(n == 12 for n in per_child) == outcomes.count(None)
    assert sum(per_child) == FITS - 1 - sum(mine)
    assert budget.spent()[0] == CAP
    assert _count_in_new_process(path) == (FITS, CAP)


def test_loky_workers_and_the_parent_lose_no_charge(tmp_path):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(CAP, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(STEP), label="parent")
    background = threading.Thread(
        target=lambda: [budget.charge(pure_dp_rdp(STEP), label="parent") for _ in range(5)])
    background.start()
    # Each task unpickles the handle in a worker and charges it with that worker's kept
    # connection; the workers stay alive (loky reuses them) after the tasks end.
    charges = Parallel(n_jobs=2, backend="loky")(
        delayed(budget.charge)(pure_dp_rdp(STEP), label="loky") for _ in range(20))
    background.join(60)
    assert len({c.id for c in charges}) == 20
    labels = [c.label for c in budget.ledger]
    assert labels.count("loky") == 20 and labels.count("parent") == 6
    assert _count_in_new_process(path) == (26, STEP * 26)
    with pytest.raises(BudgetExceededError):  # 26 + 7 > 32: the last one is refused
        Parallel(n_jobs=2, backend="loky")(
            delayed(budget.charge)(pure_dp_rdp(STEP), label="loky") for _ in range(7))
    assert len(budget) == FITS and budget.spent()[0] == CAP


_CHARGE_AND_DIE = """
import os, signal, sys
from skdp import PrivacyBudget
from skdp.accounting import pure_dp_rdp
budget = PrivacyBudget.open(sys.argv[1])
budget.charge(pure_dp_rdp(0.0625), label="killed")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_charge_survives_its_process_killed_right_after(tmp_path):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(CAP, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(STEP), label="live")  # this process keeps its connection
    assert budget.spent()[0] == STEP
    for n in (2, 3):
        proc = subprocess.run([sys.executable, "-c", _CHARGE_AND_DIE, str(path)], timeout=120)
        assert proc.returncode == -signal.SIGKILL
        # The live process's running total and a new process both see the killed one's charge.
        assert budget.spent()[0] == STEP * n
        assert [c.label for c in budget.ledger] == ["live"] + ["killed"] * (n - 1)
        assert _count_in_new_process(path) == (n, STEP * n)
    budget.charge(pure_dp_rdp(STEP), label="live")
    assert _count_in_new_process(path) == (4, STEP * 4)


@needs_fork
def test_a_forked_child_killed_after_its_charge_leaves_it_recorded(tmp_path):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(CAP, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(STEP), label="parent")
    pid = os.fork()
    if pid == 0:
        try:
            budget.charge(pure_dp_rdp(STEP), label="child")
            os.kill(os.getpid(), signal.SIGKILL)
        finally:
            os._exit(1)
    assert _exit_code(pid) == -signal.SIGKILL
    assert budget.spent()[0] == 2 * STEP
    assert _count_in_new_process(path) == (2, 2 * STEP)
    budget.charge(pure_dp_rdp(STEP), label="parent")
    assert [c.label for c in budget.ledger] == ["parent", "child", "parent"]


def _assert_nothing_recorded_and_usable(budget, path, n):
    kept = _ledger._local.kept[budget._store.path]
    assert kept.conn is not None and not kept.conn.in_transaction
    assert not kept.lock.locked()
    _assert_write_lock_free(path)
    assert len(budget) == n and budget.spent()[0] == STEP * n
    assert _count_in_new_process(path) == (n, STEP * n)


def test_a_refused_or_failed_charge_records_nothing_and_frees_the_connection(
        tmp_path, monkeypatch):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(2 * STEP, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(STEP))
    with pytest.raises(BudgetExceededError):
        budget.charge(pure_dp_rdp(2 * STEP))  # over the cap
    _assert_nothing_recorded_and_usable(budget, path, 1)
    with pytest.raises(TypeError):
        budget.charge("not a curve")  # bad input
    _assert_nothing_recorded_and_usable(budget, path, 1)

    # An error in the middle of the write transaction: after the charge is inserted,
    # before the total is written.
    def broken(*args, **kwargs):
        raise RuntimeError("disk gone")

    for step in ("write_total", "insert_charge"):
        monkeypatch.setattr(_ledger, step, broken)
        with pytest.raises(RuntimeError, match="disk gone"):
            budget.charge(pure_dp_rdp(STEP))
        monkeypatch.undo()
        _assert_nothing_recorded_and_usable(budget, path, 1)

    # An interrupt once the charge is inserted (the event stored, the row not yet).
    insert = _ledger.insert_charge

    def interrupted(conn, **kwargs):
        insert(conn, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(_ledger, "insert_charge", interrupted)
    with pytest.raises(KeyboardInterrupt):
        budget.charge(pure_dp_rdp(STEP))
    monkeypatch.undo()
    _assert_nothing_recorded_and_usable(budget, path, 1)
    budget.charge(pure_dp_rdp(STEP))  # the same connection charges the next one
    _assert_nothing_recorded_and_usable(budget, path, 2)


def test_a_ledger_deleted_under_another_threads_kept_connection_is_never_made_again(tmp_path):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget(CAP, 0.0, ledger=path)
    go, deleted, outcome = threading.Event(), threading.Event(), []

    def worker():  # keeps its connection, idle, while the file is deleted
        budget.charge(pure_dp_rdp(STEP), label="thread")
        go.set()
        deleted.wait(30)
        try:
            budget.charge(pure_dp_rdp(STEP), label="thread")
        except FileNotFoundError as exc:
            outcome.append(exc)
        try:  # below the handle's checks too
            with _ledger._kept_transaction(str(path), write=True):
                outcome.append("written")
        except FileNotFoundError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    assert go.wait(30)
    os.remove(path)
    deleted.set()
    thread.join(60)
    assert len(outcome) == 2 and all(isinstance(o, FileNotFoundError) for o in outcome)
    assert not path.exists()
    with pytest.raises(FileNotFoundError, match="Nothing was charged"):
        budget.charge(pure_dp_rdp(STEP))
    assert not path.exists()
    fresh = PrivacyBudget(CAP, 0.0, ledger=path)  # the old log is not read into it
    assert len(fresh) == 0 and fresh.spent()[0] == 0.0


@pytest.mark.parametrize("current", [False, True], ids=["older backup", "current backup"])
def test_a_backup_moved_over_the_ledger_is_refused_and_not_written(tmp_path, current):
    # A current backup holds every charge the handle saw: only the file's identity
    # (device and inode) tells it from the ledger.
    path, backup = tmp_path / "ledger.sqlite", tmp_path / "backup.sqlite"
    budget = PrivacyBudget(CAP, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(STEP), label="before")
    if current:
        budget.charge(pure_dp_rdp(STEP), label="after")
    with sqlite3.connect(path) as src, sqlite3.connect(backup) as dst:
        src.backup(dst)  # SQLite's backup, as the user guide says
    src.close(), dst.close()
    if not current:
        budget.charge(pure_dp_rdp(STEP), label="after")
    os.replace(backup, path)
    with pytest.raises(LedgerMismatchError, match="a different file.*nothing was charged"):
        budget.charge(pure_dp_rdp(STEP))
    with pytest.raises(LedgerMismatchError):
        len(budget)
    restored = PrivacyBudget.open(path)  # continued on purpose: the backup as it is
    labels = ["before", "after"] if current else ["before"]
    assert [c.label for c in restored.ledger] == labels
    restored.charge(pure_dp_rdp(STEP), label="restored")
    assert [c.label for c in restored.ledger] == labels + ["restored"]
    assert _count_in_new_process(path) == (len(labels) + 1, STEP * (len(labels) + 1))


def test_a_backup_copied_into_the_ledger_is_refused_and_never_merged(tmp_path):
    # The same inode: the handle's last seen charge, or the kept log's frames, refuse it.
    path, backup = tmp_path / "ledger.sqlite", tmp_path / "backup.sqlite"
    budget = PrivacyBudget(CAP, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(STEP), label="before")
    with sqlite3.connect(path) as src, sqlite3.connect(backup) as dst:
        src.backup(dst)
    src.close(), dst.close()
    budget.charge(pure_dp_rdp(STEP), label="after")  # in the kept log, maybe not the file
    inode = os.stat(path).st_ino
    shutil.copyfile(backup, path)
    assert os.stat(path).st_ino == inode
    with pytest.raises(LedgerMismatchError, match="nothing was charged"):
        budget.charge(pure_dp_rdp(STEP))
    # A handle that never saw a charge (opened after the restore) is refused too in this
    # process, whose kept log held frames the copied file lacks.
    with pytest.raises(LedgerMismatchError, match="not by SQLite"):
        PrivacyBudget.open(path).charge(pure_dp_rdp(STEP))
    with sqlite3.connect(backup) as conn:  # the backup itself was never written
        assert conn.execute("SELECT label FROM charges").fetchall() == [("before",)]
    conn.close()


_COPY_AND_CHARGE = """
import shutil, sys
from skdp import PrivacyBudget
from skdp.accounting import pure_dp_rdp
shutil.copyfile(sys.argv[2], sys.argv[1])  # another program copies a backup into the file
budget = PrivacyBudget.open(sys.argv[1])  # then another process charges: its frames go to the log
budget.charge(pure_dp_rdp(0.0625), label="other process")
print(len(budget))
"""


def test_a_backup_copied_in_by_another_program_is_refused_after_another_process_charged(
        tmp_path):
    # The user guide: a process that keeps the ledger open refuses a file copied into it
    # behind SQLite's back while its log holds charges the file lacks. Another process's
    # commit in between adds frames to the log; that is no checkpoint, and does not explain
    # the file's write. (It did: this process went on charging the backup merged with its
    # log.) The copy runs in another process: closing a copy of the file here would drop
    # this process's locks on it.
    path, backup = tmp_path / "ledger.sqlite", tmp_path / "backup.sqlite"
    budget = PrivacyBudget(CAP, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(STEP), label="before")
    with sqlite3.connect(path) as src, sqlite3.connect(backup) as dst:
        src.backup(dst)
    src.close(), dst.close()
    budget.charge(pure_dp_rdp(STEP), label="after")  # in the kept log only
    kept = _ledger._local.kept[budget._store.path]
    frames, _, copied = kept.seen[1]
    assert frames != copied
    subprocess.run([sys.executable, "-c", _COPY_AND_CHARGE, str(path), str(backup)],
                   check=True, timeout=120)
    with pytest.raises(LedgerMismatchError, match="not by SQLite"):
        budget.charge(pure_dp_rdp(STEP), label="refused")
    with pytest.raises(LedgerMismatchError, match="not by SQLite"):
        PrivacyBudget.open(path).charge(pure_dp_rdp(STEP), label="refused")
    with sqlite3.connect(backup) as conn:  # the backup itself was never written
        assert conn.execute("SELECT label FROM charges").fetchall() == [("before",)]
    conn.close()
