"""What every ledger shares: the running total and how charges are stored as text.

A ledger backend (:mod:`._ledger` for SQLite files, :mod:`._postgres` for
PostgreSQL) stores each charge's RDP curve as JSON text and whether the PLD
accountant composes its event (``pld``: the event agrees with the curve),
each distinct event once in a table of events (its JSON text and a digest of
it as its key), and a running total: the RDP composition of every charge, the RDP composition of the
charges without a PLD, the number of charges, the last id covered and a
generation, a random id that changes whenever the total is composed again
from the charges. A charge so writes a fixed amount whatever the ledger holds.
The backends differ only in how they lock, read and write; composing,
comparing with the cap and deciding are done once, in
:meth:`skdp.PrivacyBudget.charge`, on the transaction object a backend hands
it:

``ledger.transaction(write=...)``
    A context manager: one transaction, the write lock taken at once when
    ``write`` (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's ``SELECT ... FOR
    UPDATE`` of the budget's row), the ledger's identity checked inside it.
    It yields an object with ``read_total(orders)``, ``insert_charge(...)``
    (returns the new id and time), ``write_total(total, last_id=...)``,
    ``read_charges()`` and ``count()``; leaving it with an exception rolls
    back, leaving it normally commits.

Reading the total costs the charges recorded since this process last saw the
ledger, not the ledger: each process keeps the last :class:`Total` it read or
wrote per ledger and generation (:func:`cached_total`), checks that the charge
it ended at is still there as it was, and adds the charges after it. Else
(another generation, or a new process) the total is read from its row and
the events of the charges the PLD composes, counted by the database.
"""

import hashlib
import json
import threading
import uuid

from ..accounting import RDPCurve, event_from_dict
from ..accounting._accountants import pld_leaves
from ..accounting._events import _flatten

__all__ = ["Total", "charge_texts", "curve_from_texts", "event_key", "rest_texts"]


class Total:
    """The running composition of a ledger's charges (never changed once made).

    ``curve`` is the RDP composition of every charge; ``leaves`` maps each
    distinct event of the charges that have a PLD to its count; ``rest`` is
    the RDP composition of the charges that have none (None if there are
    none); ``n_charges`` counts the charges. ``flags`` (only on a total
    composed from charges read with their ids) lists the (pld, id) of the
    charges whose stored ``pld`` is not what their curve and event say.

    The leaves are kept as a log of (event, count) pairs shared by the totals
    that extend one another (each total owns the first ``size`` entries), so
    :meth:`plus` costs the new charge, not the ledger, and
    :meth:`added_since` tells what a later total added. A log that grows to
    four times the distinct events it started from (and past
    :data:`_COMPACT_FROM` entries) starts anew from the merged leaves, so a
    process's memory does not grow with every charge it makes.
    """

    __slots__ = ("curve", "rest", "n_charges", "flags", "_log", "_size", "_leaves", "_start")

    def __init__(self, curve, leaves, rest, n_charges):
        self.curve, self.rest, self.n_charges = curve, rest, n_charges
        self._log = [(leaf, c) for leaf, c in dict(leaves).items() if c]
        self._size = self._start = len(self._log)
        self._leaves = None
        self.flags = None

    @classmethod
    def empty(cls, orders):
        return cls(RDPCurve.zero(orders), {}, None, 0)

    def plus(self, curve, found=False):
        """The total with ``curve`` charged after the others (a new object).

        ``found``: ``pld_leaves(curve)`` when the caller has it.
        """
        rest = self.rest
        log, size, start = self._log, self._size, self._start
        if found is False:
            found = pld_leaves(curve)
        if found is None:
            bare = curve.with_event(None)
            rest = bare if rest is None else rest + bare
        else:
            if size > max(_COMPACT_FROM, 4 * start):  # start anew from the merged leaves
                log = [(leaf, c) for leaf, c in self.leaves.items()]
                size = start = len(log)
            with _LOG_LOCK:  # handles charged from several threads
                if len(log) != size:  # another total was made from this one: branch off
                    log = log[:size]
                log.extend(found)
                size += len(found)
        # the RDP total repeats exactly the float additions of a recomposition
        new = Total.__new__(Total)
        new.curve, new.rest, new.n_charges = self.curve + curve.with_event(None), rest, self.n_charges + 1
        new._log, new._size, new._start, new._leaves, new.flags = log, size, start, None, None
        return new

    @property
    def leaves(self):
        if self._leaves is None:
            leaves = {}
            for leaf, c in self._log[:self._size]:
                leaves[leaf] = leaves.get(leaf, 0) + c
            self._leaves = leaves
        return self._leaves

    def has_leaves(self):
        return self._size > 0

    def leaf_items(self):
        return [(leaf, c) for leaf, c in self.leaves.items() if c]

    def at(self):
        """What :meth:`added_since` takes to tell what a later total added to this one."""
        return self._log, self._size

    def added_since(self, at):
        """The (event, count) pairs this total added to the total of ``at``, or None if it
        does not extend that total."""
        log, size = at
        if log is self._log and size <= self._size:
            return self._log[size:self._size]
        return None


_LOG_LOCK = threading.Lock()
_COMPACT_FROM = 1 << 16


def event_key(text):
    """The key of an event's JSON text in the table of events."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def new_generation():
    return uuid.uuid4().hex


def _named(d, name):
    d["mechanism"] = name
    return d


def _event(text):
    """The event stored in a charge, or None (none stored, or one this version cannot read)."""
    if text is None:
        return None
    try:
        return event_from_dict(json.loads(text))
    except (ValueError, TypeError, KeyError):
        return None  # composed by its RDP curve, which is always valid


def curve_from_texts(curve_text, event_text):
    """The curve of a stored charge, with its event when one is stored."""
    curve = RDPCurve.from_dict(json.loads(curve_text))
    event = _event(event_text)
    return curve if event is None else curve.with_event(event)


def charge_texts(curve):
    """(curve, event) of a charge as stored: the curve without its event, the event or None."""
    data = curve.to_dict()
    event = data.pop("event", None)
    return json.dumps(data), None if event is None else json.dumps(event)


def compose_texts(rows, orders):
    """The :class:`Total` of stored (curve, event) texts, composed one at a time in id order.

    The running total repeats exactly these float additions. Rows of (curve,
    event, id, pld) also give the total's ``flags``.
    """
    total = Total.empty(orders)
    flags = []
    for row in rows:
        curve = curve_from_texts(row[0], row[1])
        found = pld_leaves(curve)
        total = total.plus(curve, found)
        if len(row) > 2 and (row[3] is None or bool(row[3]) != (found is not None)):
            flags.append((found is not None, row[2]))
    total.flags = flags
    return total


def rest_texts(total):
    """(curve, rest) of a running :class:`Total` as stored."""
    data = total.curve.to_dict()
    data.pop("event", None)
    # The composed mechanism names would grow with every charge.
    data["mechanism"] = f"composition of {total.n_charges} charges"
    rest = None if total.rest is None else json.dumps(
        _named(total.rest.to_dict(), "charges without a PLD"))
    return json.dumps(data), rest


def total_from_rows(n_charges, curve_text, rest_text, events):
    """The stored running total: its row's texts and the (event text, number of charges) of
    the events of the charges the PLD composes.

    None when it cannot be read (then recompose).
    """
    try:
        leaves = {}
        for text, count in events:
            for leaf, c in _flatten(event_from_dict(json.loads(text))):
                leaves[leaf] = leaves.get(leaf, 0) + c * int(count)
        curve = RDPCurve.from_dict(json.loads(curve_text))
        rest = None if rest_text is None else RDPCurve.from_dict(json.loads(rest_text))
    except (ValueError, TypeError, KeyError):
        return None  # an event or a total this version cannot read
    return Total(curve, leaves, rest, int(n_charges))


# The last total read or written per ledger and generation: (last id, its time, Total).
_TOTALS = {}
_TOTALS_LOCK = threading.Lock()


def remember(ledger, generation, mark, total):
    """Keep ``total``, the total of a ledger's charges up to ``mark`` (id, time)."""
    if generation is None or mark is None:
        return
    with _TOTALS_LOCK:
        _TOTALS.pop((ledger, generation), None)  # the last one remembered comes last
        _TOTALS[(ledger, generation)] = (tuple(mark), total)
        while len(_TOTALS) > 64:
            _TOTALS.pop(next(iter(_TOTALS)))


def kept_marks(ledger):
    """The id of the last charge of the total this process kept last for ``ledger``, or None."""
    for (key, _), ((seen_id, _), _) in reversed(list(_TOTALS.items())):
        if key == ledger:
            return seen_id
    return None


def cached_total(ledger, generation, last_id, n_charges, time_of, charges_after):
    """The total of a ledger's charges up to ``last_id`` from the one this process kept, or None.

    ``time_of(id)`` reads a charge's time (None if there is none);
    ``charges_after(id)`` reads the (curve, event) texts of the charges after
    it, in id order. The kept total is used only if the charge it ended at is
    in the ledger as it was (not a backup put in its place with other charges
    after it) and few charges were added since.
    """
    hit = _TOTALS.get((ledger, generation))
    if hit is None:
        return None
    (seen_id, seen_time), total = hit
    if seen_id > last_id or last_id - seen_id > _READ_AT_MOST:
        return None
    if seen_id and time_of(seen_id) != seen_time:
        return None
    if seen_id == last_id:
        return total if total.n_charges == n_charges else None
    for curve_text, event_text in charges_after(seen_id):
        total = total.plus(curve_from_texts(curve_text, event_text))
    return total if total.n_charges == n_charges else None


# More charges than this since the kept total: read the total's row and the events instead.
_READ_AT_MOST = 256
