"""PrivacyBudget across processes and threads: no overspend, durable, reopenable.

The workers are forked (Linux, like CI): a forked child starts at once and
runs a module-level function without importing this test file again.
Budgets reach them pickled, so they also exercise ``__reduce__``.
"""

import json
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from skdp import BudgetExceededError, PrivacyBudget
from skdp.accounting import (
    epsilon_of,
    gaussian_rdp,
    laplace_rdp,
    poisson_subsampled_gaussian_rdp,
    pure_dp_rdp,
    sampled_without_replacement_gaussian_rdp,
)
from _testing import charge_until_refused, run_processes

CTX = multiprocessing.get_context("fork")
N_WORKERS = 8
# Composing N equal float curves one by one may differ from N * curve by an
# ulp; the budget treats a total within this relative distance as the cap.
CAP_RTOL = 1e-12


def _charge_repeatedly(pickled_budget, pickled_curve, attempts, barrier, results):
    accepted = refused = 0
    try:
        budget = pickle.loads(pickled_budget)  # reattaches to the same file
        curve = pickle.loads(pickled_curve)
        if isinstance(curve, list):  # one curve per worker, in turn
            curve = curve[int.from_bytes(os.urandom(2), "little") % len(curve)]
        barrier.wait(timeout=60)
        accepted, refused = charge_until_refused(budget, curve, attempts,
                                                 label=f"worker {os.getpid()}")
    except BaseException as exc:  # report it instead of leaving the parent waiting
        results.put((accepted, refused, repr(exc)))
    else:
        results.put((accepted, refused, None))


def _run_workers(budget, curve, attempts):
    barrier = CTX.Barrier(N_WORKERS)
    results = CTX.Queue()
    args = (pickle.dumps(budget), pickle.dumps(curve), attempts, barrier, results)
    workers = [CTX.Process(target=_charge_repeatedly, args=args) for _ in range(N_WORKERS)]
    outcomes = run_processes(workers, results)
    assert [error for _, _, error in outcomes] == [None] * N_WORKERS
    assert [w.exitcode for w in workers] == [0] * N_WORKERS
    return sum(a for a, _, _ in outcomes), sum(r for _, r, _ in outcomes)


def _assert_never_over_cap(budget, cap):
    # Every prefix of the ledger (the running total after each charge) and
    # the final spend stay within the cap, composed here by hand with the
    # budget's accountant (epsilon_of on the composed curve and its event).
    running = None
    for charge in budget.ledger:
        running = charge.curve if running is None else running + charge.curve
        eps = epsilon_of(running, budget.delta, accountant=budget.accountant)
        # what the charge was checked against: by the worker's running PLD
        # state (an upper bound on another grid than a full composition's)
        assert charge.total_epsilon <= cap * (1 + CAP_RTOL)
        assert eps <= cap * (1 + 1e-3)
        assert charge.total_epsilon == pytest.approx(eps, rel=1e-3)
    assert budget.spent()[0] <= cap * (1 + CAP_RTOL)


def test_processes_charging_pure_dp_never_overspend(tmp_path):
    n_admitted = 10
    cap = n_admitted * 0.1  # ten charges of 0.1 sum to 0.9999999999999999
    budget = PrivacyBudget(cap, 0.0, ledger=tmp_path / "pure.sqlite")
    accepted, refused = _run_workers(budget, pure_dp_rdp(0.1), attempts=3)
    assert accepted == n_admitted
    assert refused == N_WORKERS * 3 - n_admitted
    assert len(budget) == n_admitted
    _assert_never_over_cap(budget, cap)
    assert budget.spent() == (sum([0.1] * n_admitted), 0.0)
    assert [c.id for c in budget.ledger] == list(range(1, n_admitted + 1))


@pytest.mark.parametrize("accountant", ["rdp", "tightest", "pld"])
def test_processes_charging_gaussian_never_overspend(tmp_path, accountant):
    n_admitted = 8
    curve = gaussian_rdp(4.0)
    # The cap is exactly the ε of the 8-fold composition (for σ=4 the sum of
    # 8 RDP curves exceeds 8 * curve by one ulp: the tolerance matters here;
    # the PLD of 8 Gaussians is the exact μ-GDP one, μ = √8/4).
    cap = epsilon_of(n_admitted * curve, 1e-5, accountant=accountant)
    budget = PrivacyBudget(cap, 1e-5, ledger=tmp_path / "gauss.sqlite", accountant=accountant)
    accepted, refused = _run_workers(budget, curve, attempts=2)
    assert accepted == n_admitted
    assert refused == N_WORKERS * 2 - n_admitted
    assert len(budget) == n_admitted
    _assert_never_over_cap(budget, cap)
    assert budget.spent()[0] == pytest.approx(cap, rel=CAP_RTOL)


@pytest.mark.parametrize("accountant", ["tightest", "pld"])
def test_processes_charging_mixed_mechanisms_never_overspend(tmp_path, accountant):
    # Workers charge different mechanisms at once (DP-SGD with either
    # sampling, Laplace, Gaussian, pure DP): the PLD state is composed under
    # the lock, and every prefix of the ledger stays within the cap.
    curves = [
        poisson_subsampled_gaussian_rdp(0.01, 1.5, 300),
        sampled_without_replacement_gaussian_rdp(0.02, 3.0, 50),
        laplace_rdp(4.0),
        gaussian_rdp(6.0) * 2,
        pure_dp_rdp(0.2),
    ]
    cap = 2.0
    budget = PrivacyBudget(cap, 1e-6, ledger=tmp_path / "mixed.sqlite", accountant=accountant)
    accepted, refused = _run_workers(budget, curves, attempts=4)
    assert accepted == len(budget) >= 3 and refused > 0
    assert accepted + refused == N_WORKERS * 4
    _assert_never_over_cap(budget, cap)
    # a refused charge was refused by the same accountant that reports the spend
    spent = budget.spent()[0]
    for curve in curves:
        total = sum((c.curve for c in budget.ledger), curve)
        affordable = epsilon_of(total, 1e-6, accountant=accountant) <= cap * (1 + CAP_RTOL)
        assert budget.can_afford(curve) == affordable
    assert spent <= cap


def test_threads_charging_never_overspend():
    n_admitted = 10
    cap = n_admitted * 0.1
    budget = PrivacyBudget(cap, 0.0)
    barrier = threading.Barrier(N_WORKERS)

    def work(_):
        barrier.wait()
        return charge_until_refused(budget, pure_dp_rdp(0.1), 3)[0]

    with ThreadPoolExecutor(N_WORKERS) as pool:
        accepted = sum(pool.map(work, range(N_WORKERS)))
    assert accepted == n_admitted == len(budget)
    _assert_never_over_cap(budget, cap)


def _charge_then_wait_to_be_killed(path, conn):
    budget = PrivacyBudget.open(path)
    charge = budget.charge(gaussian_rdp(4.0), label="charged, then killed")
    conn.send(charge.id)  # only after charge() returned
    signal.pause()  # never returns: the parent kills us


def test_charge_survives_sigkill_right_after_it_returns(tmp_path):
    path = str(tmp_path / "durable.sqlite")
    PrivacyBudget(5.0, 1e-5, ledger=path).charge(pure_dp_rdp(0.5), label="before")
    receiver, sender = CTX.Pipe(duplex=False)
    child = CTX.Process(target=_charge_then_wait_to_be_killed, args=(path, sender))
    child.start()
    assert receiver.poll(60), "the child never charged"
    charge_id = receiver.recv()
    os.kill(child.pid, signal.SIGKILL)
    child.join(timeout=60)
    assert child.exitcode == -signal.SIGKILL
    budget = PrivacyBudget.open(path)
    assert len(budget) == 2
    last = budget.ledger[-1]
    assert (last.id, last.label, last.pid) == (charge_id, "charged, then killed", child.pid)
    assert last.curve == gaussian_rdp(4.0)


_CONTINUE_IN_A_NEW_PROCESS = textwrap.dedent(
    """
    import json, sys
    from skdp import PrivacyBudget
    from skdp.accounting import pure_dp_rdp

    path = sys.argv[1]
    opened = PrivacyBudget.open(path)
    before = len(opened), opened.spent()[0]
    opened.charge(pure_dp_rdp(0.25), label="opened")
    same = PrivacyBudget(2.0, 1e-6, ledger=path, orders=[2.0, 4.0, 16.0], accountant="rdp")
    same.charge(pure_dp_rdp(0.25), label="same params")
    errors = []
    for kwargs in ({"epsilon": 3.0, "delta": 1e-6}, {"epsilon": 2.0, "delta": 0.0}):
        try:
            PrivacyBudget(ledger=path, orders=[2.0, 4.0, 16.0], **kwargs)
        except ValueError as exc:
            errors.append(str(exc))
    try:
        PrivacyBudget(2.0, 1e-6, ledger=path)  # default orders
    except ValueError as exc:
        errors.append(str(exc))
    try:
        opened.charge(pure_dp_rdp(0.75))  # 1.25 + 0.75 > 2 would be fine; 2.0 == cap
        refused = False
    except Exception:
        refused = True
    print(json.dumps({"before": before, "errors": errors, "refused": refused,
                      "after": [len(same), same.spent()[0]]}))
    """
)


def test_budget_reopened_in_a_new_process_continues(tmp_path):
    path = str(tmp_path / "study.sqlite")
    # RDP: pure ε-DP charges add up to exactly the cap (open() keeps the accountant)
    budget = PrivacyBudget(2.0, 1e-6, ledger=path, orders=[2.0, 4.0, 16.0], accountant="rdp")
    budget.charge(pure_dp_rdp(0.5), label="first session")
    budget.charge(pure_dp_rdp(0.25), label="first session")
    out = subprocess.run(
        [sys.executable, "-c", _CONTINUE_IN_A_NEW_PROCESS, path],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(out.stdout)
    assert result["before"] == [2, 0.75]
    assert len(result["errors"]) == 3
    assert all("PrivacyBudget.open" in e for e in result["errors"])
    assert result["refused"] is False  # 0.5+0.25+0.25+0.25+0.75 = 2.0: exactly the cap
    assert result["after"] == [5, 2.0]
    # Back in this process, the first handle sees the new session's charges.
    assert len(budget) == 5
    assert [c.label for c in budget.ledger][2:] == ["opened", "same params", "pure_dp(epsilon=0.75)"]
    with pytest.raises(BudgetExceededError):
        budget.charge(pure_dp_rdp(0.01))


def _create_and_charge(path, barrier, results):
    try:
        barrier.wait(timeout=60)
        budget = PrivacyBudget(1.0, 0.0, ledger=path)  # all create the file at once
        accepted, _ = charge_until_refused(budget, pure_dp_rdp(0.1), 3)
    except BaseException as exc:
        results.put(repr(exc))
    else:
        results.put(accepted)


def test_processes_creating_the_same_ledger_at_once(tmp_path):
    path = str(tmp_path / "new.sqlite")
    barrier, results = CTX.Barrier(N_WORKERS), CTX.Queue()
    workers = [CTX.Process(target=_create_and_charge, args=(path, barrier, results))
               for _ in range(N_WORKERS)]
    outcomes = run_processes(workers, results)
    assert all(isinstance(o, int) for o in outcomes), outcomes
    assert sum(outcomes) == 10 == len(PrivacyBudget.open(path))
