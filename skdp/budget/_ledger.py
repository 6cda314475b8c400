"""The SQLite ledger behind a :class:`~skdp.PrivacyBudget`.

One file holds the budget's parameters, every charge and the running total:
the composition of all charges in id order, with the number of charges and
the last id it covers. Each charge is one ``BEGIN IMMEDIATE`` transaction:
read the total, compose, compare with the cap, then insert the charge and the
new total, or refuse. SQLite's write lock serialises concurrent charges from
threads and processes on one machine, so they can never overspend. The
commit is on disk before ``charge`` returns: the log is synced right after
the write lock is released (:func:`_sync_log`).

The total is a cache of the charges, never trusted blindly: triggers delete it
whenever any program inserts, changes or deletes a charge without updating it
(an older skdp, a hand edit), and a total whose last id is not the largest id
in ``charges`` is ignored. A missing or stale total is recomposed from the
charges in the same transaction. Ledgers of schema version 1 (no total) get the
table and triggers inside the first charge's write transaction.

Schema version 3 records what each charge is: its privacy event
(:mod:`skdp.accounting` events, ``to_dict()`` as JSON, NULL when the curve
has none) beside its RDP curve, and the composed ε right after it with the
accountant that found it. Ledgers of versions 1 and 2 have no events; their
charges are composed by their RDP curves.

Schema version 4 keeps each distinct event once, in ``events`` (its text and
a digest of it as its key); a charge refers to its event by ``event_id`` and
says whether the PLD accountant composes it (``pld``), so that a charge
writes a fixed amount however many distinct events the ledger holds. The
running total keeps the RDP composition of all charges and of those without
a PLD (``rest``) and a ``generation``, a random id drawn anew whenever the
total is composed again from the charges (see :mod:`._total`). Triggers drop
the total when ``events`` changes behind its back too. Ledgers of versions 1
to 3 are upgraded inside the first charge's write transaction: the new
columns and table are added and the events stored in the charges' own
``event`` column (by version 3, or by an older skdp writing to the file
later) are moved into ``events``; a total written by an older skdp (no
generation) is composed again from the charges.
"""

import json
import os
import pathlib
import socket
import sqlite3
import time
from contextlib import closing, contextmanager

from ..accounting._accountants import pld_leaves
from ..exceptions import LedgerMismatchError
from ._total import (  # noqa: F401 (Total: used through this module)
    Total,
    cached_total,
    charge_texts,
    compose_texts,
    curve_from_texts,
    event_key,
    new_generation,
    remember,
    rest_texts,
    total_from_rows,
)

SCHEMA_VERSION = 4

_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS charges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time REAL NOT NULL,
    label TEXT NOT NULL,
    epsilon REAL NOT NULL,
    curve TEXT NOT NULL,
    pid INTEGER NOT NULL,
    event TEXT,
    total_epsilon REAL,
    composed_by TEXT,
    event_id INTEGER,
    pld INTEGER
)""",
    """CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    event TEXT NOT NULL
)""",
]
# Columns of schema versions 3 and 4 that older ledgers get by ALTER TABLE.
_CHARGE_COLUMNS = (("event", "TEXT"), ("total_epsilon", "REAL"), ("composed_by", "TEXT"),
                   ("event_id", "INTEGER"), ("pld", "INTEGER"))
_TOTAL_COLUMNS = (("state", "TEXT"), ("rest", "TEXT"), ("generation", "TEXT"))

# Schema version 2: the running total (one row) and the triggers that drop it
# whenever the charges change behind its back.
_TOTAL_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS total (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n_charges INTEGER NOT NULL,
    last_id INTEGER NOT NULL,
    curve TEXT NOT NULL,
    state TEXT,
    rest TEXT,
    generation TEXT
)""",
] + [
    f"CREATE TRIGGER IF NOT EXISTS {table}_{event.lower()}_drops_total "
    f"AFTER {event} ON {table} BEGIN DELETE FROM total; END"
    for table in ("charges", "events") for event in ("INSERT", "UPDATE", "DELETE")
]
_TOTAL_NAMES = {"total", "events"} | {
    f"{table}_{event}_drops_total" for table in ("charges", "events")
    for event in ("insert", "update", "delete")
}


def _open(path, *, create):
    # ``mode=rw`` never creates a file: a handle whose ledger is gone (deleted,
    # or unpickled on another machine) fails instead of starting an empty one.
    if not create and not os.path.exists(path):
        raise FileNotFoundError(f"No privacy ledger at {path!r}.")
    uri = pathlib.Path(os.path.abspath(path)).as_uri() + ("?mode=rwc" if create else "?mode=rw")
    try:
        return sqlite3.connect(uri, uri=True, timeout=600.0, isolation_level=None)
    except sqlite3.OperationalError as exc:
        if not create and not os.path.exists(path):
            raise FileNotFoundError(f"No privacy ledger at {path!r}.") from None
        raise OSError(f"Cannot open the privacy ledger {path!r}: {exc}") from None


def _configure(conn):
    """Wait for the write lock, and sync what a write transaction commits (see :func:`_connect`).

    In WAL mode ``synchronous = NORMAL``: the commit writes the log without
    syncing it, and :func:`_connect` syncs it once the write lock is released.
    Other modes (a ledger made by an older skdp, or the file being created)
    keep ``FULL``, which syncs inside the commit.
    """
    conn.execute("PRAGMA busy_timeout = 600000")
    wal = conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
    conn.execute(f"PRAGMA synchronous = {'NORMAL' if wal else 'FULL'}")
    return conn


@contextmanager
def _connect(path, *, write, create=False):
    """A transaction on a connection opened for it and closed after it.

    ``write`` takes the write lock at once. A connection is never kept open
    between transactions: a process forked while one is open would inherit
    SQLite's lock bookkeeping and take no lock of its own, and the parent's
    later close could delete the write-ahead log the child still writes, so
    the child's charges would be lost (found in a review of a version that
    kept one connection open per thread).

    A committed write is on disk when this returns, even if the machine
    loses power right after: the log is synced after the commit, with the
    write lock already released, so that the charges of other processes
    need not wait for this one's sync (:func:`_sync_log`).
    """
    with closing(_configure(_open(path, create=create))) as conn:
        with _transaction(conn, write):
            yield conn
    if write:
        _sync_log(path)


def _sync_log(path):
    """Put on disk every transaction committed to the ledger at ``path`` so far.

    Called after a commit in ``synchronous = NORMAL``, where SQLite writes
    the log at the commit and syncs it only before a checkpoint. The
    committed frames are then either in the log file at ``path + "-wal"``,
    whose sync puts them (and every frame before them) on disk, or no
    longer in it: a log is rewound or deleted only after a checkpoint has
    copied all its frames into the database file and synced it. A new log's
    header and folder entry are synced by SQLite before its first frame. So
    a charge is on disk before ``charge`` returns, as with ``FULL``; a later
    charge decided on a total that includes an earlier one is in the same
    log after it, and is never on disk without it.
    """
    # SQLite keeps the log beside the file a symbolic link points to, not beside the link
    # (a path through a link found its log missing and synced nothing; found in a review).
    try:
        fd = os.open(os.path.realpath(path) + "-wal", os.O_RDWR)
    except FileNotFoundError:
        return  # checkpointed into the database file, synced, and removed by the last close
    try:
        _sync(fd)
    finally:
        os.close(fd)


_sync = getattr(os, "fdatasync", os.fsync)  # SQLite's own sync on Linux is fdatasync


@contextmanager
def _transaction(conn, write):
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield conn
    except BaseException:
        # SQLite may already have rolled back (e.g. on a full disk); a
        # failing ROLLBACK must not hide the error that caused it.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def _decoded(rows):
    return {k: json.loads(v) for k, v in rows}


def _ledger_error(path, exc):
    # "file is not a database" or missing tables: some other file. Anything
    # else (read-only file, locked, I/O) is a problem with a real ledger.
    if isinstance(exc, sqlite3.OperationalError) and "no such table" not in str(exc):
        return OSError(f"Cannot use the privacy ledger {path!r}: {exc}")
    return ValueError(f"{path!r} is not a skdp privacy ledger: {exc}")


def init_ledger(path, params):
    """Create the ledger at ``path`` or check that it holds the same ``params``.

    Returns the parameters stored in the file. An existing ledger is only
    read (no write lock, so a read-only copy can be opened). A file that is
    not a skdp ledger (another SQLite database, or no database at all) raises
    ``ValueError`` and is left untouched.
    """
    try:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            with _connect(path, write=False) as conn:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
                if {"meta", "charges"} <= tables:
                    rows = conn.execute("SELECT key, value FROM meta").fetchall()
                    if rows:
                        return _decoded(rows)
        with _connect(path, write=True, create=True) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if tables and not {"meta", "charges"} <= tables:
                raise ValueError(f"{path!r} is an SQLite file but not a skdp privacy ledger.")
            for statement in _SCHEMA + _TOTAL_SCHEMA:
                conn.execute(statement)
            rows = conn.execute("SELECT key, value FROM meta").fetchall()
            if not rows:
                stored = dict(params, schema_version=SCHEMA_VERSION, created=time.time())
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [(k, json.dumps(v)) for k, v in stored.items()],
                )
            else:
                stored = _decoded(rows)
        with closing(_open(path, create=False)) as conn:
            _use_wal(conn)
    except sqlite3.DatabaseError as exc:
        raise _ledger_error(path, exc) from None
    return stored


def _use_wal(conn, timeout=600.0):
    """Switch the file to WAL mode (stored in the file) unless it is already.

    WAL lets readers run beside one writer. The switch needs the file to
    itself, and SQLite answers "database is locked" at once, without waiting
    for the busy timeout, while other processes read it (several processes
    creating the same ledger): so wait and retry here.
    """
    deadline = time.monotonic() + timeout
    while conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def read_params(path):
    """The parameters stored in an existing ledger file."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"No privacy ledger at {path!r}.")
    try:
        with _connect(path, write=False) as conn:
            rows = conn.execute("SELECT key, value FROM meta").fetchall()
    except sqlite3.DatabaseError as exc:
        raise _ledger_error(path, exc) from None
    if not rows:
        raise ValueError(f"{path!r} is not a skdp privacy ledger.")
    return _decoded(rows)


def _columns(conn, table):
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


_CHARGE_EVENT = "COALESCE(e.event, c.event)"
_WITH_EVENTS = "FROM charges c LEFT JOIN events e ON e.id = c.event_id"


def read_charges(conn):
    """All charges, in the order they were recorded.

    Each row is ``(id, time, label, epsilon, curve, pid, event, total_epsilon,
    composed_by)``; the last three are None in ledgers of schema 1 and 2.
    """
    present = _columns(conn, "charges")
    if "event_id" in present:
        query = ("SELECT c.id, c.time, c.label, c.epsilon, c.curve, c.pid, "
                 f"{_CHARGE_EVENT}, c.total_epsilon, c.composed_by {_WITH_EVENTS} ORDER BY c.id")
    elif {"event", "total_epsilon", "composed_by"} <= present:
        query = ("SELECT id, time, label, epsilon, curve, pid, event, total_epsilon, composed_by "
                 "FROM charges ORDER BY id")
    else:
        query = ("SELECT id, time, label, epsilon, curve, pid, NULL, NULL, NULL "
                 "FROM charges ORDER BY id")
    return conn.execute(query).fetchall()


def insert_charge(conn, *, label, epsilon, curve, total_epsilon=None, composed_by=None):
    """Insert a charge: its curve, whether the PLD composes it, and its event into ``events``
    (once: a charge of an event already there writes nothing there)."""
    now = time.time()
    curve_text, event_text = charge_texts(curve)
    event_id = None
    if event_text is not None:
        key = event_key(event_text)
        conn.execute("INSERT OR IGNORE INTO events (key, event) VALUES (?, ?)", (key, event_text))
        event_id = conn.execute("SELECT id FROM events WHERE key = ?", (key,)).fetchone()[0]
    cur = conn.execute(
        "INSERT INTO charges (time, label, epsilon, curve, pid, event_id, pld, total_epsilon, "
        "composed_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (now, label, float(epsilon), curve_text, os.getpid(), event_id,
         int(event_id is not None and pld_leaves(curve) is not None),
         None if total_epsilon is None else float(total_epsilon), composed_by),
    )
    return cur.lastrowid, now


def curve_from_row(row):
    """The curve of a :func:`read_charges` row, with its event when one is stored."""
    return curve_from_texts(row[4], row[6] if len(row) > 6 else None)


def compose_charges(conn, orders):
    """The :class:`Total` of every charge, composed one charge at a time in id order.

    The running total repeats exactly these float additions.
    """
    present = _columns(conn, "charges")
    if {"event_id", "pld"} <= present:
        query = f"SELECT c.curve, {_CHARGE_EVENT}, c.id, c.pld {_WITH_EVENTS} ORDER BY c.id"
    elif "event" in present:
        query = "SELECT curve, event FROM charges ORDER BY id"
    else:
        query = "SELECT curve, NULL FROM charges ORDER BY id"
    return compose_texts(conn.execute(query), orders)


def read_total(conn, orders, ledger=None):
    """(the :class:`Total` of all charges, its generation or None if composed here).

    Uses the stored running total when it covers exactly the recorded charges
    (its last id is the largest id) and has a generation (an older skdp
    writes none): from the total this process kept for ``ledger`` and that
    generation plus the charges after it, or else from the total's row and
    the events of the charges the PLD composes. Otherwise composes the
    charges again.
    """
    mark = last_mark(conn)
    last_id = 0 if mark is None else mark[0]
    try:
        row = conn.execute(
            "SELECT n_charges, last_id, curve, rest, generation FROM total WHERE id = 1").fetchone()
    except sqlite3.OperationalError as exc:  # schema 1 (no total) to 3 (no generation)
        if "no such" not in str(exc):
            raise
        row = None
    if row is not None and row[1] == last_id and row[4] is not None:
        generation = row[4]
        total = None if ledger is None else cached_total(
            ledger, generation, last_id, row[0], lambda i: _time_of(conn, i),
            lambda i: conn.execute(f"SELECT c.curve, {_CHARGE_EVENT} {_WITH_EVENTS} "
                                   "WHERE c.id > ? ORDER BY c.id", (i,)))
        if total is None:
            total = total_from_rows(row[0], row[2], row[3], conn.execute(
                "SELECT e.event, COUNT(*) FROM charges c JOIN events e ON e.id = c.event_id "
                "WHERE c.pld = 1 GROUP BY c.event_id"))
        if total is not None:
            return total, generation
    return compose_charges(conn, orders), None


def _time_of(conn, charge_id):
    row = conn.execute("SELECT time FROM charges WHERE id = ?", (charge_id,)).fetchone()
    return None if row is None else row[0]


def ensure_schema(conn):
    """Upgrade a ledger of schema version 1 to 3 to 4; call inside a write transaction."""
    query = "SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')"
    changed = False
    if not {r[0] for r in conn.execute(query)} >= _TOTAL_NAMES:
        for statement in _SCHEMA + _TOTAL_SCHEMA:
            conn.execute(statement)
        changed = True
    present = _columns(conn, "total")
    for name, kind in _TOTAL_COLUMNS:
        if name not in present:
            conn.execute(f"ALTER TABLE total ADD COLUMN {name} {kind}")
            changed = True
    present = _columns(conn, "charges")
    for name, kind in _CHARGE_COLUMNS:
        if name not in present:
            conn.execute(f"ALTER TABLE charges ADD COLUMN {name} {kind}")
            changed = True
    if changed:
        adopt_events(conn)
        conn.execute("DELETE FROM total")  # whatever was there is not trusted
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
            (json.dumps(SCHEMA_VERSION),),
        )


ensure_total_table = ensure_schema


def adopt_events(conn):
    """Move the events stored in the charges' own column into ``events`` (once each)."""
    rows = conn.execute("SELECT id, event FROM charges WHERE event IS NOT NULL").fetchall()
    ids = {}
    for _, text in rows:
        if text not in ids:
            key = event_key(text)
            conn.execute("INSERT OR IGNORE INTO events (key, event) VALUES (?, ?)", (key, text))
            ids[text] = conn.execute("SELECT id FROM events WHERE key = ?", (key,)).fetchone()[0]
    conn.executemany("UPDATE charges SET event_id = ?, event = NULL WHERE id = ?",
                     [(ids[text], charge_id) for charge_id, text in rows])


def write_flags(conn, flags):
    """Move the charges' own events into ``events`` and set the (pld, id) ``flags``."""
    adopt_events(conn)
    conn.executemany("UPDATE charges SET pld = ? WHERE id = ?",
                     [(int(pld), charge_id) for pld, charge_id in flags])


def write_total(conn, total, *, last_id, generation):
    """Store the running :class:`Total`; call after inserting the charge it covers."""
    curve_text, rest_text = rest_texts(total)
    conn.execute(
        "INSERT OR REPLACE INTO total (id, n_charges, last_id, curve, state, rest, generation) "
        "VALUES (1, ?, ?, ?, NULL, ?, ?)",
        (total.n_charges, last_id, curve_text, rest_text, generation),
    )


def file_identity(path):
    """(host, device, inode) of a ledger file: what a handle knows its ledger by."""
    st = os.stat(path)
    return (socket.gethostname(), st.st_dev, st.st_ino)


def last_mark(conn):
    """(id, time) of the last charge, or None: the ledger's high-water mark."""
    return conn.execute("SELECT id, time FROM charges ORDER BY id DESC LIMIT 1").fetchone()


def has_mark(conn, mark):
    """Whether the charge of ``mark`` (id, time) is in the ledger as it was recorded."""
    row = conn.execute("SELECT time FROM charges WHERE id = ?", (mark[0],)).fetchone()
    return row is not None and row[0] == mark[1]


class _Transaction:
    """One open transaction on an SQLite ledger (the interface of :mod:`._total`)."""

    def __init__(self, conn, mark, ledger):
        self.conn = conn
        self.mark = mark
        self.ledger = ledger
        self.generation = None  # of the total read; None: composed from the charges
        self.flags = None  # the charges' pld to write when the total was composed here
        self.kept = None  # (generation, mark, total) to remember once committed

    def read_total(self, orders):
        total, self.generation = read_total(self.conn, orders, self.ledger)
        self.flags = total.flags if self.generation is None else None
        self.kept = (self.generation, self.mark, total)
        return total

    def insert_charge(self, **kwargs):
        if self.flags is not None:  # composed from the charges: their flags first
            write_flags(self.conn, self.flags)
            self.flags = None
            self.generation = new_generation()
        self.mark = insert_charge(self.conn, **kwargs)
        self.kept = None
        return self.mark

    def write_total(self, total, *, last_id):
        if self.generation is None:
            self.generation = new_generation()
        write_total(self.conn, total, last_id=last_id, generation=self.generation)
        self.kept = (self.generation, self.mark, total)

    def read_charges(self):
        return read_charges(self.conn)

    def count(self):
        return self.conn.execute("SELECT COUNT(*) FROM charges").fetchone()[0]

    def committed(self):
        if self.kept is not None:
            remember(self.ledger, *self.kept)


class SQLiteLedger:
    """A ledger in an SQLite file, known by its host, device and inode.

    ``identity`` is None until :meth:`create` (or given by a pickle). Every
    transaction checks the file before opening it (a missing file is never
    created anew) and again once the lock is held, so a file moved over the
    ledger in between is refused too.
    """

    errors = (sqlite3.Error,)

    def __init__(self, path, *, temporary=False, identity=None):
        self.path = os.path.abspath(os.fspath(path))
        self.temporary = temporary
        self.identity = None if identity is None else tuple(identity)

    @property
    def where(self):
        """What the ledger is shown as: its path."""
        return self.path

    @property
    def address(self):
        """What a pickled handle carries to find the ledger again."""
        return self.path

    @property
    def key(self):
        return self.path

    def create(self, params):
        stored = init_ledger(self.path, params)
        self.identity = file_identity(self.path)
        return stored

    def read_params(self):
        return read_params(self.path)

    @contextmanager
    def transaction(self, *, write, seen=None):
        """A transaction on the ledger; a clear error if the file is gone or another one.

        ``seen`` is the (id, time) of a charge the handle saw recorded: a file
        without it (a backup copied over the ledger, even into the same inode)
        is refused.
        """
        self._check_file()
        with _connect(self.path, write=write) as conn:
            self._check_file()  # the lock is held: the file at the path is the one opened
            if write:
                ensure_schema(conn)
            if seen is not None and not has_mark(conn, seen):
                raise self._mismatch(seen=seen)
            tx = _Transaction(conn, last_mark(conn), self.key)
            yield tx
        if write:
            self._check_file()  # moved away during the charge: the charge went with it
        tx.committed()

    def _check_file(self):
        if not os.path.exists(self.path):
            raise FileNotFoundError(self._missing_message())
        found = file_identity(self.path)
        if self.identity is not None and found != self.identity:  # None: an older pickle
            raise self._mismatch(found)

    def _mismatch(self, found=None, seen=None):
        if seen is not None:
            where = (f"a ledger without charge #{seen[0]} as this handle saw it recorded (a "
                     "backup copied over the ledger, or charges deleted by hand)")
        elif found[0] != self.identity[0]:
            where = f"on host {found[0]!r}, not on {self.identity[0]!r} where the budget was made"
        else:
            where = "a different file (another device or inode)"
        return LedgerMismatchError(
            f"The file at {self.path!r} is not this budget's ledger: it is {where}. It may be "
            "a copy, a restored backup, or another machine's file at the same path; "
            "charging it would fork the spend, so nothing was charged. Give every worker "
            "the one ledger (run the workers on the machine that holds the file, or use a "
            "PostgreSQL ledger), or open the file on purpose with PrivacyBudget.open(path), "
            "which continues it as it is now."
        )

    def _missing_message(self):
        if self.temporary:
            return (
                f"This budget's ledger {self.path!r} is gone. It was a temporary ledger "
                "(PrivacyBudget(..., ledger=None)), deleted when the Python process that "
                "created it exited; a model or budget unpickled in another process keeps a "
                "handle to it but can neither charge nor read it. Nothing was charged. To "
                "keep a budget across processes, give it a file: "
                "PrivacyBudget(..., ledger='path/to/ledger.sqlite')."
            )
        return (
            f"No privacy ledger at {self.path!r}: the file was moved or deleted, or this "
            "handle was unpickled on a machine that does not have it. Nothing was charged."
        )

    def unavailable(self, exc):
        """Why the ledger cannot be shown, in a few words."""
        if isinstance(exc, FileNotFoundError):
            return "its temporary ledger is gone" if self.temporary else "no ledger file"
        if isinstance(exc, LedgerMismatchError):
            return "the file at its path is another ledger"
        return "cannot read the ledger"
