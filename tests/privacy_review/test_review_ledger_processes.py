"""Review of the SQLite ledger shared by processes of every kind.

Charges from every multiprocessing start method and joblib's loky, beside the
parent's threads, against one ledger and one cap: every charge recorded is
counted, the cap is never crossed, and a new process reads them all. A charge
is readable once ``charge`` returns, even when its process is killed right
after. A backup moved over the ledger is refused and never written.

(Written for a version that kept one connection per thread between charges,
reverted because a process that opens and closes the ledger file itself, a
copy with ``shutil.copyfile`` say, drops SQLite's POSIX locks of its kept
connection, and another process could then delete the log the kept connection
still writes; the tests that hold for a connection per transaction stay.)

The cap is 2.0 and every charge a pure ε = 1/16 (exact binary fractions): at
δ = 0 the composition is their sum, so exactly 32 charges fit.
"""

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import threading

import pytest
from joblib import Parallel, delayed

from skdp import PrivacyBudget
from skdp.accounting import pure_dp_rdp
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


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_processes_of_every_start_method_never_cross_the_cap(tmp_path, method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    path = str(tmp_path / "ledger.sqlite")
    budget = PrivacyBudget(CAP, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(STEP), label="parent")
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
    # Each task unpickles the handle in a worker and charges it; the workers stay alive
    # (loky reuses them) after the tasks end.
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


