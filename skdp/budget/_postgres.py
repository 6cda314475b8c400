"""The PostgreSQL ledger behind ``PrivacyBudget(..., ledger="postgresql://...")``.

For workers on many machines: every worker reaches the one database. Several
budgets live side by side in one database, one row each in ``skdp_budgets``
(its name, a random id, its cap and orders as JSON, and the running total),
their charges in ``skdp_charges`` (numbered from 1 within each budget), and
each distinct event of a budget once in ``skdp_events`` (see
:mod:`skdp.budget._ledger`, schema version 4, for what the SQLite file holds
alike; tables of schema 1 get the new table and columns in :meth:`create`,
and their charges' events are moved by the first charge). The
URL names the budget with a ``budget`` query parameter, which is taken out
before the URL reaches libpq (``default`` when absent)::

    postgresql://user@ledger-host:5432/privacy?budget=census-2026

Each charge is one transaction: ``SELECT ... FOR UPDATE`` locks the budget's
row, which holds the running total, so concurrent charges from any number of
processes and machines queue on it; the handle composes, compares with the
cap, and inserts the charge and the new total, or rolls back. The commit
is asynchronous, so the row is free for the next charge at once, and is
followed, in the same round trip, by a wait until the server's log is on disk
up to it (:func:`_commit`): a charge is on disk before ``charge`` returns. A
row trigger drops a budget's total whenever its charges are inserted, changed
or deleted (skdp writes the new total after its own insert), and a total whose
last id is not the budget's largest charge id is ignored: as in the SQLite ledger, a
missing or stale total is recomposed from the charges in the same
transaction. The tables, function and trigger are created on first use,
under an advisory lock so that processes starting at once do not collide.

A handle knows its ledger by the budget's row id and random id, checked in
every transaction: another database at the same address, or a budget deleted
and made again under the same name, is refused with
:class:`~skdp.LedgerMismatchError`.

Connections: one per process, thread and URL, kept open between charges (and
closed once their thread has ended, as each holds a server slot). The
server keeps every lock and transaction per connection, so nothing of a
charge lives in the client's memory that a fork could copy: a process forked
while a connection is open never uses the parent's (the cache is keyed by
``os.getpid()``) and opens its own, and psycopg does not close a connection
inherited across a fork (libpq's ``PQfinish`` only runs in the process that
opened it), so the parent's stays intact. A connection found broken when a
transaction starts (the server restarted) is replaced once; one lost inside a
transaction raises :class:`~skdp.LedgerConnectionError` (the server rolled
the transaction back), and one lost during the commit is resolved by looking
the charge up on a new connection.

psycopg 3 is imported on first use (``pip install 'skdp[postgres]'``).
"""

import atexit
import json
import os
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from urllib.parse import unquote

from ..accounting._accountants import pld_leaves
from ..exceptions import LedgerConnectionError, LedgerMismatchError
from ._total import (
    _READ_AT_MOST,
    cached_total,
    charge_texts,
    compose_texts,
    event_key,
    kept_marks,
    new_generation,
    remember,
    rest_texts,
    total_from_rows,
)

SCHEMA_VERSION = 2
_SCHEMES = ("postgresql://", "postgres://")
# Any fixed number: serialises the creation of the tables between processes.
_SCHEMA_LOCK = 0x736B6470  # "skdp"

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS skdp_budgets (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    uid TEXT NOT NULL,
    params TEXT NOT NULL,
    n_charges BIGINT,
    last_id BIGINT,
    curve TEXT,
    state TEXT,
    rest TEXT,
    generation TEXT
)""",
    """CREATE TABLE IF NOT EXISTS skdp_charges (
    budget_id BIGINT NOT NULL REFERENCES skdp_budgets (id),
    id BIGINT NOT NULL,
    time DOUBLE PRECISION NOT NULL,
    label TEXT NOT NULL,
    epsilon DOUBLE PRECISION NOT NULL,
    curve TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    event TEXT,
    total_epsilon DOUBLE PRECISION,
    composed_by TEXT,
    event_id BIGINT,
    pld BOOLEAN,
    PRIMARY KEY (budget_id, id)
)""",
    # schema version 2: each distinct event once (see skdp.budget._ledger), a
    # generation of the total; version 1 tables get the columns here
    "ALTER TABLE skdp_budgets ADD COLUMN IF NOT EXISTS rest TEXT",
    "ALTER TABLE skdp_budgets ADD COLUMN IF NOT EXISTS generation TEXT",
    "ALTER TABLE skdp_charges ADD COLUMN IF NOT EXISTS event_id BIGINT",
    "ALTER TABLE skdp_charges ADD COLUMN IF NOT EXISTS pld BOOLEAN",
    """CREATE TABLE IF NOT EXISTS skdp_events (
    budget_id BIGINT NOT NULL REFERENCES skdp_budgets (id) ON DELETE CASCADE,
    id BIGINT GENERATED ALWAYS AS IDENTITY,
    key TEXT NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (budget_id, id),
    UNIQUE (budget_id, key)
)""",
    # (a total already dropped is left alone: one version of the budget's row, not one
    # per row changed, when a statement changes many)
    """CREATE OR REPLACE FUNCTION skdp_drop_total() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE skdp_budgets SET n_charges = NULL, last_id = NULL, curve = NULL, state = NULL,
        rest = NULL, generation = NULL
    WHERE (id = OLD.budget_id OR id = NEW.budget_id) AND (n_charges IS NOT NULL
        OR last_id IS NOT NULL OR curve IS NOT NULL OR state IS NOT NULL OR rest IS NOT NULL
        OR generation IS NOT NULL);
    RETURN NULL;
END $$""",
] + [
    statement
    for table in ("skdp_charges", "skdp_events")
    for statement in (
        f"DROP TRIGGER IF EXISTS {table}_drop_total ON {table}",
        f"""CREATE TRIGGER {table}_drop_total AFTER INSERT OR UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION skdp_drop_total()""",
    )
]
# The last statement of the schema (of version 2): its trigger on skdp_events.
_SCHEMA_PRESENT = (
    "SELECT count(*) FROM pg_trigger "
    "WHERE tgname = 'skdp_events_drop_total' AND tgrelid = to_regclass('skdp_events')"
)
# A transaction is two round trips: these statements in one, its writes and
# COMMIT in the other (several statements with their values as literals,
# quoted by psycopg.sql). Each statement sees what was committed before it
# (READ COMMITTED), so the largest id is read after the lock is held.
# The last two: the budget's last charge (its high-water mark), and the time of
# the charge the handle saw last (see PostgresLedger.transaction).
_BEGIN_WRITE = (
    "BEGIN; SELECT uid, n_charges, last_id, curve, rest, generation FROM skdp_budgets "
    "WHERE id = {id} FOR UPDATE; "
)
_BEGIN_READ = (
    "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; SELECT uid, n_charges, last_id, curve, "
    "rest, generation FROM skdp_budgets WHERE id = {id}; "
)
# The last: the charges from the one this process's kept total ends at (its
# time, and those after it; see skdp.budget._total.cached_total).
_MARKS = (
    "SELECT id, time FROM skdp_charges WHERE budget_id = {id} ORDER BY id DESC LIMIT 1; "
    "SELECT time FROM skdp_charges WHERE budget_id = {id} AND id = {seen}; "
    "SELECT c.id, c.time, c.curve, COALESCE(e.event, c.event) FROM skdp_charges c "
    "LEFT JOIN skdp_events e ON e.budget_id = c.budget_id AND e.id = c.event_id "
    "WHERE c.budget_id = {id} AND c.id >= {kept} ORDER BY c.id LIMIT {limit}"
)
_EVENT = ("FROM skdp_charges c LEFT JOIN skdp_events e ON e.budget_id = c.budget_id "
          "AND e.id = c.event_id WHERE c.budget_id = %s ORDER BY c.id")
_CHARGES = ("SELECT c.id, c.time, c.label, c.epsilon, c.curve, c.pid, COALESCE(e.event, c.event), "
            "c.total_epsilon, c.composed_by " + _EVENT)


def is_url(ledger):
    """Whether ``ledger`` names a PostgreSQL ledger."""
    return isinstance(ledger, str) and ledger.startswith(_SCHEMES)


def split_url(url):
    """(the URL libpq gets, the budget's name): the ``budget`` parameter taken out."""
    base, _, query = url.partition("?")
    kept, name = [], "default"
    for part in query.split("&") if query else ():
        key, _, value = part.partition("=")
        if key == "budget":
            name = unquote(value)
        elif part:
            kept.append(part)
    if not name:
        raise ValueError(f"The budget's name in {masked(url)!r} is empty.")
    return base + ("?" + "&".join(kept) if kept else ""), name


def masked(url):
    """The URL with its password (in the user part or a ``password`` parameter) hidden."""
    scheme, _, rest = url.partition("://")
    netloc, slash, tail = rest.partition("/")
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        if ":" in user and user.split(":", 1)[1]:
            netloc = f"{user.split(':', 1)[0]}:***@{host}"
    path, question, query = tail.partition("?")
    parts = [("password=***" if p.startswith("password=") else p) for p in query.split("&")]
    return f"{scheme}://{netloc}{slash}{path}{question}{'&'.join(parts) if query else ''}"


def _psycopg():
    try:
        import psycopg
    except ImportError as exc:
        raise ImportError(
            "A PostgreSQL ledger (PrivacyBudget(..., ledger='postgresql://...')) needs "
            "psycopg 3; install it with pip install 'skdp[postgres]'."
        ) from exc
    return psycopg


# (pid, thread, URL) -> connection. Keyed by the pid: a forked child never
# uses (nor closes) its parent's connections, which stay in the dict untouched.
_connections = {}


def _connection(conninfo):
    key = (os.getpid(), threading.get_ident(), conninfo)
    if len(_connections) > 1:
        _close_for_ended_threads()
    conn = _connections.get(key)
    if conn is None or conn.closed:
        psycopg = _psycopg()
        conn = psycopg.connect(conninfo, autocommit=True)
        # as the SQLite ledger's busy timeout: wait for a charge in progress, not forever
        conn.execute("SET lock_timeout = '600s'")
        _connections[key] = conn
    return conn


def _close_for_ended_threads():
    """Close this process's connections of threads that have ended (each holds a server slot)."""
    alive = {t.ident for t in threading.enumerate()}
    for (pid, ident, _), conn in list(_connections.items()):
        if pid == os.getpid() and ident not in alive:
            _drop(conn)


def _drop(conn):
    for key, value in list(_connections.items()):
        if value is conn:
            del _connections[key]
    try:
        conn.close()
    except Exception:  # noqa: BLE001 (a broken connection may fail to close; it is gone anyway)
        pass


def _close_all():
    for (pid, _, _), conn in list(_connections.items()):
        if pid == os.getpid():
            _drop(conn)


atexit.register(_close_all)


class _Transaction:
    """One open transaction on a budget of a PostgreSQL ledger (the interface of :mod:`._total`)."""

    def __init__(self, conn, budget_id, row, mark, recent, ledger, write):
        self.conn, self.budget_id, self.row, self.mark = conn, budget_id, row, mark
        self.recent, self.ledger, self.write = recent, ledger, write
        self.max_id = 0 if mark is None else mark[0]
        self.inserted = None
        self.writes = []  # sent with the COMMIT
        self.generation = None  # of the total read; None: composed from the charges
        self.kept = None  # (generation, mark, total) to remember once committed

    def read_total(self, orders):
        _, n_charges, last_id, curve_text, rest_text, generation = self.row
        total = None
        if last_id is not None and last_id == self.max_id and generation is not None:
            times = {i: t for i, t, _, _ in self.recent}
            total = cached_total(
                self.ledger, generation, last_id, n_charges, times.get,
                lambda after: [(c, e) for i, _, c, e in self.recent if i > after])
            if total is None:
                events = self.conn.execute(
                    "SELECT e.event, count(*) FROM skdp_charges c JOIN skdp_events e ON "
                    "e.budget_id = c.budget_id AND e.id = c.event_id WHERE c.budget_id = %s "
                    "AND c.pld GROUP BY e.id, e.event", (self.budget_id,))
                total = total_from_rows(n_charges, curve_text, rest_text, events)
        if total is not None:
            self.generation = generation
        else:
            total = compose_texts(self.conn.execute(
                "SELECT c.curve, COALESCE(e.event, c.event), c.id, c.pld " + _EVENT,
                (self.budget_id,)), orders)
            if self.write:
                self._rebuild(total.flags)
        self.kept = (self.generation, self.mark, total)
        return total

    def _rebuild(self, flags):
        """Writes that move the events stored in the charges into skdp_events and set the
        (pld, id) ``flags`` of the charges."""
        from psycopg import sql

        inline = self.conn.execute(
            "SELECT id, event FROM skdp_charges WHERE budget_id = %s AND event IS NOT NULL",
            (self.budget_id,)).fetchall()
        if inline:
            keys = {text: event_key(text) for _, text in inline}
            self.writes.append(sql.SQL(
                "INSERT INTO skdp_events (budget_id, key, event) VALUES {} "
                "ON CONFLICT (budget_id, key) DO NOTHING").format(sql.SQL(", ").join(
                    _statement("({}, {}, {})", self.budget_id, key, text)
                    for text, key in keys.items())))
            # joined on the charges' ids and the events' keys (both indexed), never on the texts
            self.writes.append(sql.SQL(
                "UPDATE skdp_charges c SET event_id = e.id, event = NULL "
                "FROM (VALUES {}) AS v (id, key), skdp_events e WHERE c.budget_id = {} "
                "AND c.id = v.id AND e.budget_id = c.budget_id AND e.key = v.key").format(
                    sql.SQL(", ").join(_statement("({}::bigint, {})", charge_id, keys[text])
                                       for charge_id, text in inline),
                    sql.Literal(self.budget_id)))
        if flags:
            self.writes.append(sql.SQL(
                "UPDATE skdp_charges c SET pld = v.pld FROM (VALUES {}) AS v (id, pld) "
                "WHERE c.budget_id = {} AND c.id = v.id").format(
                    sql.SQL(", ").join(_statement("({}::bigint, {})", charge_id, bool(pld))
                                       for pld, charge_id in flags),
                    sql.Literal(self.budget_id)))

    def insert_charge(self, *, label, epsilon, curve, total_epsilon=None, composed_by=None):
        new_id = self.max_id + 1
        now = time.time()
        curve_text, event_text = charge_texts(curve)
        event_id = None
        if event_text is not None:
            key = event_key(event_text)
            self.writes.append(_statement(
                "INSERT INTO skdp_events (budget_id, key, event) VALUES ({}, {}, {}) "
                "ON CONFLICT (budget_id, key) DO NOTHING", self.budget_id, key, event_text))
            event_id = _statement("(SELECT id FROM skdp_events WHERE budget_id = {} AND key = {})",
                                  self.budget_id, key)
        self.writes.append(_statement(
            "INSERT INTO skdp_charges (budget_id, id, time, label, epsilon, curve, pid, host, "
            "event_id, pld, total_epsilon, composed_by) VALUES ({}, {}, {}, {}, {}, {}, {}, {}, ",
            self.budget_id, new_id, now, label, float(epsilon), curve_text, os.getpid(),
            socket.gethostname(),
        ) + (_null() if event_id is None else event_id) + _statement(
            ", {}, {}, {})", event_id is not None and pld_leaves(curve) is not None,
            None if total_epsilon is None else float(total_epsilon), composed_by,
        ))
        self.inserted = (new_id, now, os.getpid())
        self.mark = (new_id, now)
        return new_id, now

    def write_total(self, total, *, last_id):
        if self.generation is None:
            self.generation = new_generation()
        curve_text, rest_text = rest_texts(total)
        self.writes.append(_statement(
            "UPDATE skdp_budgets SET n_charges = {}, last_id = {}, curve = {}, state = NULL, "
            "rest = {}, generation = {} WHERE id = {}", total.n_charges, last_id, curve_text,
            rest_text, self.generation, self.budget_id,
        ))
        self.kept = (self.generation, self.mark, total)

    def read_charges(self):
        return self.conn.execute(_CHARGES, (self.budget_id,)).fetchall()

    def count(self):
        return self.conn.execute("SELECT count(*) FROM skdp_charges WHERE budget_id = %s",
                                 (self.budget_id,)).fetchone()[0]

    def committed(self):
        if self.kept is not None:
            remember(self.ledger, *self.kept)


class PostgresLedger:
    """One budget of a PostgreSQL database, known by its row id and random id.

    ``identity`` is ``(row id, random id)``, None until :meth:`create` (or
    given by a pickle).
    """

    temporary = False
    errors = ()  # every psycopg error is raised as an OSError or ValueError

    def __init__(self, url, *, identity=None):
        self.url = url
        self.conninfo, self.name = split_url(url)
        self.identity = None if identity is None else tuple(identity)

    @property
    def where(self):
        """What the ledger is shown as: its URL without the password."""
        return masked(self.url)

    @property
    def address(self):
        """What a pickled handle carries to find the ledger again (the whole URL)."""
        return self.url

    @property
    def key(self):
        return (masked(self.conninfo), self.identity)

    # -- creating and opening -------------------------------------------------
    def create(self, params):
        """Create the schema and the budget if missing; returns the budget's stored parameters."""
        stored = dict(params, schema_version=SCHEMA_VERSION, created=time.time())
        with self._plain_transaction() as conn:
            if not conn.execute(_SCHEMA_PRESENT).fetchone()[0]:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                if not conn.execute(_SCHEMA_PRESENT).fetchone()[0]:
                    for statement in _SCHEMA:
                        conn.execute(statement)
            conn.execute(
                "INSERT INTO skdp_budgets (name, uid, params, n_charges, last_id) "
                "VALUES (%s, %s, %s, 0, 0) ON CONFLICT (name) DO NOTHING",
                (self.name, uuid.uuid4().hex, json.dumps(stored)),
            )
            budget_id, uid, text = conn.execute(
                "SELECT id, uid, params FROM skdp_budgets WHERE name = %s", (self.name,)).fetchone()
        self.identity = (budget_id, uid)
        return json.loads(text)

    def read_params(self):
        """The parameters of the named budget; ValueError if the database has none."""
        psycopg = _psycopg()
        try:
            with self._plain_transaction() as conn:
                row = conn.execute("SELECT params FROM skdp_budgets WHERE name = %s",
                                   (self.name,)).fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
        if row is None:
            raise ValueError(f"No budget named {self.name!r} in the PostgreSQL ledger at "
                             f"{self.where!r}.")
        return json.loads(row[0])

    @contextmanager
    def _plain_transaction(self):
        psycopg = _psycopg()
        conn = self._open()
        try:  # kept connections may be stale (the server restarted): these are rare, so ping
            conn.execute("SELECT 1")
        except psycopg.OperationalError:
            _drop(conn)
            conn = self._open()
        try:
            with conn.transaction():
                yield conn
        except psycopg.OperationalError as exc:
            if conn.broken or conn.closed:
                _drop(conn)
                raise self._lost(exc, "") from exc
            raise self._unusable(exc) from exc
        except psycopg.errors.UndefinedTable:
            raise
        except psycopg.Error as exc:
            raise self._unusable(exc) from exc

    def _open(self):
        psycopg = _psycopg()
        try:
            return _connection(self.conninfo)
        except psycopg.Error as exc:
            raise LedgerConnectionError(
                f"Cannot connect to the PostgreSQL ledger at {self.where!r}: "
                f"{' '.join(str(exc).split())}. Nothing was charged."
            ) from exc

    # -- transactions ---------------------------------------------------------
    def _begin(self, write, seen):
        """(connection, the budget's row) with the transaction open; the row locked when ``write``.

        A connection that turns out broken at this point (the server restarted
        since it was last used) has done nothing in this transaction, so it is
        replaced once.
        """
        psycopg = _psycopg()
        budget_id = self.identity[0]
        for attempt in range(2):
            conn = self._open()
            try:
                template = (_BEGIN_WRITE if write else _BEGIN_READ) + _MARKS
                kept = kept_marks(self.key)
                cur = conn.execute(_statement_ids(template, budget_id,
                                                  -1 if seen is None else seen[0],
                                                  _NONE_KEPT if kept is None else kept))
                cur.nextset()
                row = cur.fetchone()
                cur.nextset()
                mark = cur.fetchone()
                cur.nextset()
                seen_time = cur.fetchone()
                cur.nextset()
                recent = cur.fetchall()
            except psycopg.errors.UndefinedTable:
                _rollback(conn)
                raise self._mismatch("it has no skdp ledger tables") from None
            except psycopg.OperationalError as exc:
                if conn.broken or conn.closed:
                    _drop(conn)
                    if attempt == 0:
                        continue
                    raise self._lost(exc, "") from exc
                _rollback(conn)
                raise self._unusable(exc) from exc
            except psycopg.Error as exc:
                _rollback(conn)
                raise self._unusable(exc) from exc
            if row is None or row[0] != self.identity[1]:
                _rollback(conn)
                raise self._mismatch("it has no budget with this budget's row id and random id")
            if seen is not None and (seen_time is None or seen_time[0] != seen[1]):
                _rollback(conn)
                raise self._mismatch(f"its budget has no charge #{seen[0]} as this handle saw "
                                     "it recorded (a restored backup, or charges deleted by hand)")
            return conn, row, mark, recent
        raise AssertionError("unreachable")

    @contextmanager
    def transaction(self, *, write, seen=None):
        """One transaction on the budget: its row locked at once when ``write``, its identity checked.

        ``seen`` is the (id, time) of a charge the handle saw recorded: a
        budget without it (a restored backup of the database) is refused.
        """
        psycopg = _psycopg()
        conn, row, mark, recent = self._begin(write, seen)
        tx = _Transaction(conn, self.identity[0], row, mark, recent, self.key, write)
        try:
            yield tx
        except psycopg.Error as exc:
            lost = conn.broken or conn.closed
            _rollback(conn)
            if lost:
                _drop(conn)
                raise self._lost(exc, "the transaction was rolled back by the server, so nothing "
                                      "was recorded") from exc
            raise self._unusable(exc) from exc
        except BaseException:
            _rollback(conn)
            raise
        try:
            _commit(conn, tx.writes)
        except psycopg.Error as exc:
            lost = conn.broken or conn.closed
            if not lost and (tx.inserted is None or
                             conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE):
                # refused before its COMMIT (the rest of the message is skipped): nothing
                # was committed
                _rollback(conn)
                raise self._unusable(exc) from exc
            if lost:
                _drop(conn)
            if tx.inserted is None:
                raise self._lost(exc, "nothing was written") from exc
            # The commit got no answer (lost), or it was reached and it or the flush after
            # it failed: the charge stands if it is in the ledger, put on disk by the lookup.
            try:
                recorded = self._was_recorded(tx.inserted)
            except LedgerConnectionError:
                if lost:
                    raise
                raise LedgerConnectionError(
                    f"The PostgreSQL ledger at {self.where!r} may have recorded the charge but "
                    f"did not confirm that it is on disk ({' '.join(str(exc).split())}). The "
                    "fit that asked for it did not run; see budget.ledger (a recorded charge "
                    "counts, unused)."
                ) from exc
            if not recorded:
                if lost:
                    raise self._lost(exc, "the charge is not in the ledger, so nothing was "
                                          "recorded") from exc
                raise self._unusable(exc) from exc
        else:
            tx.committed()

    def _was_recorded(self, inserted):
        """Whether a charge whose commit failed or got no answer is in the ledger.

        Looked up anew; a charge found is put on disk by the lookup's commit.
        """
        charge_id, when, pid = inserted
        try:
            with self._plain_transaction() as conn:
                found = conn.execute(
                    "SELECT count(*) FROM skdp_charges WHERE budget_id = %s AND id = %s "
                    "AND time = %s AND pid = %s", (self.identity[0], charge_id, when, pid),
                ).fetchone()[0] == 1
                if found:  # committed asynchronously: this transaction's commit puts it on disk
                    conn.execute(_WAIT)
                return found
        except OSError as exc:
            raise LedgerConnectionError(
                f"The connection to the PostgreSQL ledger at {self.where!r} was lost while a "
                f"charge was committed, and the ledger cannot be reached to tell whether it was "
                f"recorded ({exc}). The fit that asked for it did not run; see budget.ledger "
                "once the server is back (a recorded charge counts, unused)."
            ) from None

    # -- messages -------------------------------------------------------------
    def _lost(self, exc, outcome):
        said = f"; {outcome}" if outcome else ""
        return LedgerConnectionError(
            f"The connection to the PostgreSQL ledger at {self.where!r} was lost "
            f"({' '.join(str(exc).split())}){said}. The fit that asked for a charge did not "
            "run; the next charge or read opens a new connection."
        )

    def _unusable(self, exc):
        return OSError(f"Cannot use the PostgreSQL ledger at {self.where!r}: "
                       f"{' '.join(str(exc).split())}")

    def _mismatch(self, why):
        return LedgerMismatchError(
            f"The database at {self.where!r} is not this budget's ledger: {why} (budget "
            f"{self.name!r}, row {self.identity[0]}). It may be another server or database at "
            "the same address, a restored copy, or the budget was deleted and made again; "
            "charging it would fork the spend, so nothing was charged. Point every worker "
            "at the one database, or open it on purpose with PrivacyBudget.open(url), which "
            "continues the budget stored there as it is now."
        )

    def unavailable(self, exc):
        """Why the ledger cannot be shown, in a few words."""
        if isinstance(exc, LedgerMismatchError):
            return "the database at its address holds another ledger"
        if isinstance(exc, ImportError):
            return "psycopg is not installed"
        if isinstance(exc, LedgerConnectionError):
            return "cannot reach the database"
        return "cannot read the ledger"


def _statement(template, *values):
    from psycopg import sql

    return sql.SQL(template).format(*(sql.Literal(v) for v in values))


def _statement_ids(template, budget_id, seen_id, kept_id):
    from psycopg import sql

    return sql.SQL(template).format(id=sql.Literal(int(budget_id)), seen=sql.Literal(int(seen_id)),
                                    kept=sql.Literal(int(kept_id)),
                                    limit=sql.Literal(_READ_AT_MOST + 1))


_NONE_KEPT = 1 << 62  # no kept total: no charge has this id


def _null():
    from psycopg import sql

    return sql.SQL("NULL")


def _commit(conn, writes):
    """The transaction's writes and COMMIT, in one round trip; a write then waits for the disk.

    A transaction that writes commits asynchronously: the server releases
    the budget's row to the next charge at its COMMIT, before the commit
    record is on disk, and the statement after it in the same message
    (:data:`_FLUSH`, its own transaction) waits until it is. The server
    answers once both have run, so a charge is on disk before ``charge``
    returns, as with a synchronous commit, while concurrent charges need not
    wait for each other's flush (and concurrent flushes are shared).
    """
    from psycopg import sql

    if not writes:
        conn.execute("COMMIT")
        return
    conn.execute(sql.SQL("; ").join([sql.SQL("SET LOCAL synchronous_commit = off"), *writes,
                                     sql.SQL("COMMIT"), sql.SQL(_FLUSH)]))


# A transaction that writes to the log waits at its commit, with
# synchronous_commit on (set here for that one transaction: a server, database,
# role or URL may set it off, which would make the wait return at once; found
# in a review), until the log is on disk up
# to its commit record, which comes after the commit records of every
# transaction committed before it: those of this connection's charges, and of
# any charge whose total a later charge read. A transactional logical message
# is such a write, with no table touched and no lock taken (PostgreSQL 9.6 and
# later, callable by any role; logical decoding sees it as a message with the
# prefix "skdp", which subscribers ignore unless they ask for messages). A
# transaction that only takes an id, such as SELECT txid_current(), writes
# nothing but its commit record and so does not wait (measured).
_WAIT = ("SET LOCAL synchronous_commit = on; "
         "SELECT pg_logical_emit_message(true, 'skdp', 'charge on disk')")
_FLUSH = f"BEGIN; {_WAIT}; COMMIT"


def _rollback(conn):
    # The server rolls back by itself when the connection is gone.
    if not conn.closed:
        try:
            conn.execute("ROLLBACK")
        except Exception:  # noqa: BLE001 (the error that led here is the one to report)
            pass
