"""What every ledger shares: the running total and how charges are stored as text.

A ledger backend (:mod:`._ledger` for SQLite files, :mod:`._postgres` for
PostgreSQL) stores each charge's RDP curve and event as JSON text and keeps a
running :class:`Total` beside the charges. The backends differ only in how
they lock, read and write; composing, comparing with the cap and deciding are
done once, in :meth:`skdp.PrivacyBudget.charge`, on the transaction object a
backend hands it:

``ledger.transaction(write=...)``
    A context manager: one transaction, the write lock taken at once when
    ``write`` (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's ``SELECT ... FOR
    UPDATE`` of the budget's row), the ledger's identity checked inside it.
    It yields an object with ``read_total(orders)``, ``insert_charge(...)``
    (returns the new id and time), ``write_total(total, last_id=...)``,
    ``read_charges()`` and ``count()``; leaving it with an exception rolls
    back, leaving it normally commits.
"""

import collections
import functools
import json
import threading

from ..accounting import RDPCurve, event_from_dict
from ..accounting._accountants import pld_leaves

__all__ = ["Total", "charge_texts", "curve_from_texts", "total_from_texts", "total_texts"]


class Total:
    """The running composition of a ledger's charges.

    ``curve`` is the RDP composition of every charge; ``leaves`` maps each
    distinct event of the charges that have a PLD to its count; ``rest`` is
    the RDP composition of the charges that have none (None if there are
    none); ``n_charges`` counts the charges.
    """

    __slots__ = ("curve", "leaves", "rest", "n_charges")

    def __init__(self, curve, leaves, rest, n_charges):
        self.curve, self.leaves, self.rest, self.n_charges = curve, leaves, rest, n_charges

    @classmethod
    def empty(cls, orders):
        return cls(RDPCurve.zero(orders), {}, None, 0)

    def plus(self, curve):
        """The total with ``curve`` charged after the others (a new object)."""
        leaves = dict(self.leaves)
        rest = self.rest
        found = pld_leaves(curve)
        if found is None:
            bare = curve.with_event(None)
            rest = bare if rest is None else rest + bare
        else:
            for leaf, c in found:
                leaves[leaf] = leaves.get(leaf, 0) + c
        # the RDP total repeats exactly the float additions of a recomposition
        total = self.curve + curve.with_event(None)
        return Total(total, leaves, rest, self.n_charges + 1)

    def leaf_items(self):
        return [(leaf, c) for leaf, c in self.leaves.items() if c]

    def state(self):
        return json.loads(self.state_text())

    def state_text(self):
        """:meth:`state` as JSON text, each event's text made once per process (a ledger
        may hold thousands of distinct events)."""
        leaves = ", ".join(f"[{_event_text(leaf)}, {int(c)}]" for leaf, c in self.leaves.items() if c)
        return f'{{"leaves": [{leaves}], "rest": {self._rest_text()}}}'

    def _rest_text(self):
        if self.rest is None:
            return "null"
        return json.dumps(_named(self.rest.to_dict(), "charges without a PLD"))

    @classmethod
    def from_state(cls, curve, n_charges, state):
        leaves = {}
        for d, c in state["leaves"]:
            leaf = event_from_dict(d)
            leaves[leaf] = leaves.get(leaf, 0) + int(c)
        rest = None if state["rest"] is None else RDPCurve.from_dict(state["rest"])
        return cls(curve, leaves, rest, n_charges)


@functools.lru_cache(maxsize=1 << 14)
def _event_text(event):
    return json.dumps(event.to_dict())


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


def compose_texts(pairs, orders):
    """The :class:`Total` of stored (curve, event) texts, composed one at a time in id order.

    The running total repeats exactly these float additions.
    """
    total = Total.empty(orders)
    for curve_text, event_text in pairs:
        total = total.plus(curve_from_texts(curve_text, event_text))
    return total


def total_texts(total):
    """(curve, state) of a running :class:`Total` as stored."""
    data = total.curve.to_dict()
    data.pop("event", None)
    # The composed mechanism names would grow with every charge.
    data["mechanism"] = f"composition of {total.n_charges} charges"
    curve_text, state_text = json.dumps(data), total.state_text()
    # what reading these texts back gives, without decoding every event again
    rest = total._rest_text()
    _remember((total.n_charges, curve_text, state_text), Total(
        RDPCurve.from_dict(json.loads(curve_text)),
        total.leaves,  # no zero counts: a charge only adds
        None if rest == "null" else RDPCurve.from_dict(json.loads(rest)),
        total.n_charges,
    ))
    return curve_text, state_text


# The last few totals written or read, by their texts (a Total is never
# changed in place): a handle that charges a ledger alone reads back the
# texts it wrote, and decoding thousands of events takes longer than a charge.
_KNOWN = collections.OrderedDict()


_KNOWN_LOCK = threading.Lock()


def _remember(key, total):
    with _KNOWN_LOCK:  # handles charged from several threads
        _KNOWN[key] = total
        _KNOWN.move_to_end(key)
        while len(_KNOWN) > 8:
            _KNOWN.popitem(last=False)


def total_from_texts(n_charges, curve_text, state_text):
    """The stored running total, or None when it cannot be read (then recompose)."""
    if curve_text is None or state_text is None or n_charges is None:
        return None  # none stored, or one written by an older skdp (no PLD state)
    key = (int(n_charges), curve_text, state_text)
    total = _KNOWN.get(key)
    if total is not None:
        return total
    try:
        total = Total.from_state(RDPCurve.from_dict(json.loads(curve_text)), int(n_charges),
                                 json.loads(state_text))
    except (ValueError, TypeError, KeyError):
        return None  # a state this version cannot read
    _remember(key, total)
    return total
