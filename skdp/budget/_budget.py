"""PrivacyBudget: a handle to one shared, durable privacy ledger."""

import atexit
import datetime
import html
import math
import os
import shutil
import socket
import sqlite3
import tempfile
from dataclasses import dataclass

from ..accounting import RDPCurve, check_orders
from ..accounting._conversions import _check_delta
from ..exceptions import BudgetExceededError, LedgerMismatchError
from . import _ledger

__all__ = ["PrivacyBudget", "Charge"]

# Composition adds floating-point curves; a total within this relative distance
# of the cap is float rounding of an exact fit, not a crossing.
_CAP_RTOL = 1e-12


@dataclass(frozen=True)
class Charge:
    """One recorded charge of a ledger.

    Attributes
    ----------
    id : int
        Position in the ledger, from 1.
    time : float
        POSIX time of the charge.
    label : str
        What was charged, usually the estimator and its parameters.
    epsilon : float
        ε of this charge alone at the budget's δ.
    curve : RDPCurve
        The RDP curve that was composed.
    pid : int
        The process that made the charge.
    """

    id: int
    time: float
    label: str
    epsilon: float
    curve: RDPCurve
    pid: int

    @property
    def datetime(self):
        return datetime.datetime.fromtimestamp(self.time)


def _check_cap(epsilon):
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon <= 0:
        raise ValueError(f"The budget's epsilon must be > 0; got {epsilon!r}.")
    return epsilon


def _temporary_ledger():
    folder = tempfile.mkdtemp(prefix="skdp-budget-")
    pid = os.getpid()

    def cleanup():
        if os.getpid() == pid:  # never from a forked worker
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(cleanup)
    return os.path.join(folder, "ledger.sqlite")


class PrivacyBudget:
    """One shared privacy budget, composed in Rényi DP and capped at (ε, δ).

    A ``PrivacyBudget`` is a *handle* to a ledger: an SQLite file that records
    every charge. Copies, clones and pickles of a budget all refer to the same
    ledger, so every estimator fitted inside ``Pipeline``, ``cross_val_score``
    or ``GridSearchCV`` charges the one budget, also from joblib or dask worker
    processes on the same machine.

    Each :meth:`charge` is one transaction: it composes all recorded curves
    with the new one (Mironov 2017, Prop. 1), converts the total to ε at the
    budget's δ (Canonne, Kamath & Steinke 2020, Prop. 12), and records the
    charge only if that ε is within the cap. A refused charge records nothing
    and raises :class:`~skdp.BudgetExceededError`. A recorded charge is
    committed to disk before :meth:`charge` returns. The ledger keeps the
    composed total of its charges beside them, so a charge costs the same
    after thousands of charges as after one.

    Pure ε-DP charges compose both as RDP curves and as a sum of ε; the
    smaller bound counts. (ε, δ)-DP charges without an RDP analysis
    (:func:`~skdp.accounting.approximate_dp_rdp`) add their δ up separately:
    they are first subtracted from the budget's δ, and the RDP part is
    converted at what remains.

    Parameters
    ----------
    epsilon : float > 0
        The cap on the total ε. ``inf`` records charges without a cap.
    delta : float in [0, 1)
        The δ at which the total is converted to ε.
    ledger : str or os.PathLike, default=None
        Path of the ledger file. ``None`` creates a temporary ledger that lives
        as long as this Python process. With a path the spend is durable: a
        budget opened again on the same file continues where it stopped. The
        file stores ε, δ and the orders, and opening it with other values
        raises ``ValueError``; :meth:`open` reopens it with its own.
    orders : array-like of float, default=None
        The Rényi orders of the composition; ``None`` is
        :data:`skdp.accounting.DEFAULT_ORDERS`.

    Attributes
    ----------
    epsilon, delta : float
        The cap.
    path : str
        The ledger file.
    orders : ndarray
        The Rényi orders.

    Examples
    --------
    >>> from skdp import PrivacyBudget
    >>> from skdp.accounting import gaussian_rdp
    >>> budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    >>> charge = budget.charge(gaussian_rdp(8.0), label="a Gaussian release")
    >>> charge.id, round(charge.epsilon, 3)
    (1, 0.478)
    >>> for _ in range(2):
    ...     _ = budget.charge(gaussian_rdp(8.0), label="another one")
    >>> eps, delta = budget.spent()
    >>> round(eps, 3), delta, len(budget)
    (0.866, 1e-05, 3)
    >>> budget.charge(gaussian_rdp(8.0))
    Traceback (most recent call last):
    ...
    skdp.exceptions.BudgetExceededError: ...
    >>> len(budget)
    3
    """

    def __init__(self, epsilon, delta, *, ledger=None, orders=None):
        self._epsilon = _check_cap(epsilon)
        self._delta = _check_delta(delta)
        self._orders = check_orders(orders)
        path = _temporary_ledger() if ledger is None else os.fspath(ledger)
        self._path = os.path.abspath(path)
        self._temporary = ledger is None
        params = {"epsilon": self.epsilon, "delta": self.delta, "orders": self.orders.tolist()}
        stored = _ledger.init_ledger(self.path, _encode(params))
        self._identity = _file_identity(self.path)
        if _decode(stored)["epsilon"] != self.epsilon or stored["delta"] != self.delta or (
            stored["orders"] != params["orders"]
        ):
            raise ValueError(
                f"The ledger {self.path!r} belongs to a budget with epsilon="
                f"{_decode(stored)['epsilon']}, delta={stored['delta']} and its own orders; "
                "open it with PrivacyBudget.open(path) to continue it."
            )

    @classmethod
    def open(cls, ledger):
        """Reopen an existing ledger file with the cap and orders stored in it.

        Examples
        --------
        >>> import os, tempfile
        >>> from skdp import PrivacyBudget
        >>> from skdp.accounting import pure_dp_rdp
        >>> path = os.path.join(tempfile.mkdtemp(), "study.sqlite")
        >>> _ = PrivacyBudget(2.0, 0.0, ledger=path).charge(pure_dp_rdp(0.5))
        >>> again = PrivacyBudget.open(path)
        >>> again.epsilon, len(again), again.spent()
        (2.0, 1, (0.5, 0.0))
        """
        params = _decode(_ledger.read_params(os.fspath(ledger)))
        return cls(params["epsilon"], params["delta"], ledger=ledger, orders=params["orders"])

    # -- the cap is read-only: it is stored in the ledger file ----------------
    @property
    def epsilon(self):
        """The cap on the total ε."""
        return self._epsilon

    @property
    def delta(self):
        """The δ at which the total is converted to ε."""
        return self._delta

    @property
    def orders(self):
        """The Rényi orders of the composition (read-only array)."""
        return self._orders

    @property
    def path(self):
        """The ledger file."""
        return self._path

    # -- handles, not values -------------------------------------------------
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        state = (self.path, self.epsilon, self.delta, self.orders.tolist(), self._temporary,
                 self._identity)
        return (_reattach, state)

    def __eq__(self, other):
        return isinstance(other, PrivacyBudget) and other.path == self.path

    def __hash__(self):
        return hash(self.path)

    # -- the ledger file ------------------------------------------------------
    def _connect(self, *, write):
        """A transaction on the ledger; a clear error if the file is gone or another one."""
        if not os.path.exists(self.path):
            raise FileNotFoundError(self._missing_message())
        found = _file_identity(self.path)
        if self._identity is not None and found != self._identity:  # None: an older pickle
            raise LedgerMismatchError(self._mismatch_message(found))
        return _ledger._connect(self.path, write=write)

    def _mismatch_message(self, found):
        host, *_ = self._identity
        where = (f"on host {found[0]!r}, not on {host!r} where the budget was made"
                 if found[0] != host else "a different file (another device or inode)")
        return (
            f"The file at {self.path!r} is not this budget's ledger: it is {where}. It may be "
            "a copy, a restored backup, or another machine's file at the same path; "
            "charging it would fork the spend, so nothing was charged. Give every worker "
            "the one ledger (run the workers on the machine that holds the file), or open "
            "the file on purpose with PrivacyBudget.open(path), which continues it as it "
            "is now."
        )

    def _missing_message(self):
        if self._temporary:
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

    def _unavailable(self, exc):
        """What showing a budget says instead of failing when its ledger can't be read."""
        if isinstance(exc, FileNotFoundError):
            reason = "its temporary ledger is gone" if self._temporary else "no ledger file"
        elif isinstance(exc, LedgerMismatchError):
            reason = "the file at its path is another ledger"
        else:
            reason = "cannot read the ledger"
        return f"unavailable: {reason}"

    # -- charging ------------------------------------------------------------
    def _composed(self, rows, extra=None):
        total = RDPCurve.zero(self.orders)
        for row in rows:
            total = total + _ledger.curve_from_row(row)
        if extra is not None:
            total = total + extra
        return total

    def _running_total(self, conn):
        """The composition of all charges (in id order) and their number."""
        return _ledger.read_total(conn, self.orders)

    def _within_cap(self, eps):
        return eps <= self.epsilon * (1.0 + _CAP_RTOL)

    def _total_epsilon(self, prior, curve):
        # The approximate-DP δ of the charges adds up and must stay within the
        # budget's δ; checked before composing, which refuses a δ sum >= 1.
        if prior.delta + curve.delta > self.delta:
            return math.inf
        return (prior + curve).epsilon(self.delta)

    def charge(self, curve, *, label=None):
        """Record ``curve`` if the composed total stays within the cap.

        Parameters
        ----------
        curve : RDPCurve
            The privacy curve of the release to pay for.
        label : str, optional
            What is charged, kept in the ledger.

        Returns
        -------
        Charge
            The recorded charge.

        Raises
        ------
        BudgetExceededError
            If the total would cross the cap. Nothing is recorded.
        """
        if not isinstance(curve, RDPCurve):
            raise TypeError(f"charge() takes an RDPCurve; got {type(curve).__name__}.")
        label = curve.mechanism if label is None else str(label)
        alone = curve.epsilon(self.delta) if curve.delta <= self.delta else math.inf
        with self._connect(write=True) as conn:
            _ledger.ensure_total_table(conn)
            prior, n_prior = self._running_total(conn)
            eps_total = self._total_epsilon(prior, curve)
            if not self._within_cap(eps_total):
                spent = prior.epsilon(self.delta) if n_prior else 0.0
                raise BudgetExceededError(
                    f"Charging {label!r} (ε={alone:.4g} alone) would bring the total to "
                    f"ε={eps_total:.4g} at δ={self.delta:g}, over the cap ε={self.epsilon:g}; "
                    f"already spent ε={spent:.4g} in {n_prior} charges. Nothing was recorded."
                )
            # Composed before the insert: if it fails, nothing is recorded.
            total = prior + curve
            charge_id, when = _ledger.insert_charge(conn, label=label, epsilon=alone, curve=curve)
            _ledger.write_total(conn, total, n_charges=n_prior + 1, last_id=charge_id)
        return Charge(charge_id, when, label, alone, curve, os.getpid())

    def can_afford(self, curve):
        """Whether :meth:`charge` would accept ``curve`` now (records nothing)."""
        if not isinstance(curve, RDPCurve):
            raise TypeError(f"can_afford() takes an RDPCurve; got {type(curve).__name__}.")
        with self._connect(write=False) as conn:
            prior, _ = self._running_total(conn)
        return self._within_cap(self._total_epsilon(prior, curve))

    # -- reading -------------------------------------------------------------
    def _rows(self):
        with self._connect(write=False) as conn:
            return _ledger.read_charges(conn)

    def _read_total(self):
        with self._connect(write=False) as conn:
            return self._running_total(conn)

    def total_curve(self):
        """The composition of all charges, as one :class:`RDPCurve`."""
        return self._read_total()[0]

    def spent(self):
        """The composed spend (ε, δ) of all charges at the budget's δ.

        When the pure ε-DP sum is the tighter bound, δ is the δ of the
        approximate-DP charges alone (0 if there are none).
        """
        return self._spent_of(*self._read_total())

    def _spent(self, rows):
        return self._spent_of(self._composed(rows), len(rows))

    def _spent_of(self, total, n_charges):
        if not n_charges:
            return 0.0, 0.0
        if total.delta > self.delta:
            return math.inf, self.delta
        eps, order = total.epsilon_and_order(self.delta)
        return eps, (total.delta if order == math.inf else self.delta)

    def _delta_alone(self, curve):
        """The δ of a charge's ε alone: the budget's, or its own when its pure bound is used."""
        return self._spent_of(curve, 1)[1]

    def remaining_epsilon(self):
        """The cap minus the spent ε: a reading, not a promise.

        Under RDP a new charge of ε' costs less than ε' once composed, so
        what a new fit may spend is decided by :meth:`can_afford`, not by this.
        """
        return max(0.0, self.epsilon - self.spent()[0])

    @property
    def ledger(self):
        """Every charge, in order, as a list of :class:`Charge`."""
        return self._charges(self._rows())

    @staticmethod
    def _charges(rows):
        return [
            Charge(row[0], row[1], row[2], row[3], _ledger.curve_from_row(row), row[5])
            for row in rows
        ]

    def __len__(self):
        with self._connect(write=False) as conn:
            return conn.execute("SELECT COUNT(*) FROM charges").fetchone()[0]

    # -- display -------------------------------------------------------------
    def _history(self, rows):
        """Each charge with the composed ε of all charges up to it."""
        history, running = [], RDPCurve.zero(self.orders)
        for c in self._charges(rows):
            running = running + c.curve
            total = running.epsilon(self.delta) if running.delta <= self.delta else math.inf
            history.append((c, total))
        return history

    def _table(self, rows):
        return [
            (c.id, c.datetime.strftime("%Y-%m-%d %H:%M:%S"), c.label, c.epsilon, total)
            for c, total in self._history(rows)
        ]

    def to_dict(self):
        """The cap, the spend and every charge as plain Python values.

        Read in one transaction. Each charge has its ``id``, ``time`` (POSIX),
        ``datetime`` (ISO 8601, local time with offset), ``label``,
        ``epsilon`` and ``delta`` (the charge alone is (``epsilon``,
        ``delta``)-DP: ``delta`` is the budget's δ, or the charge's own δ when
        its pure ε-DP bound is the tighter one, 0 for a pure ε-DP charge),
        ``total_epsilon`` (all charges up to it composed, at the budget's δ),
        ``approximate_delta`` (the δ part of an (ε, δ)-DP charge without an
        RDP analysis, which adds up across charges; 0 for every other
        charge), ``mechanism`` and ``pid``. Floats may be ``inf``.

        Examples
        --------
        >>> from skdp import PrivacyBudget
        >>> from skdp.accounting import pure_dp_rdp
        >>> budget = PrivacyBudget(1.0, 0.0)
        >>> _ = budget.charge(pure_dp_rdp(0.25), label="count")
        >>> info = budget.to_dict()
        >>> info["spent_epsilon"], [(c["label"], c["total_epsilon"]) for c in info["charges"]]
        (0.25, [('count', 0.25)])
        """
        rows = self._rows()
        eps, delta = self._spent(rows)
        charges = [
            {
                "id": c.id,
                "time": c.time,
                "datetime": c.datetime.astimezone().isoformat(timespec="seconds"),
                "label": c.label,
                "epsilon": c.epsilon,
                "delta": self._delta_alone(c.curve),
                "total_epsilon": total,
                "approximate_delta": c.curve.delta,
                "mechanism": c.curve.mechanism,
                "pid": c.pid,
            }
            for c, total in self._history(rows)
        ]
        return {
            "path": self.path,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "spent_epsilon": eps,
            "spent_delta": delta,
            "n_charges": len(rows),
            "charges": charges,
        }

    def report(self):
        """A plain-text table of the charges with the running total.

        Each line shows a charge's id, time, ε alone and the composed ε of all
        charges up to it, at the budget's δ; all read in one transaction.
        """
        try:
            rows = self._rows()
        except (OSError, ValueError, sqlite3.Error) as exc:
            return (
                f"PrivacyBudget: cap ε={self.epsilon:g} at δ={self.delta:g}; ledger "
                f"{self._unavailable(exc)}\nledger: {self.path}"
            )
        eps, delta = self._spent(rows)
        head = (
            f"PrivacyBudget: cap ε={self.epsilon:g} at δ={self.delta:g}; "
            f"spent ε={eps:.4f} (δ={delta:g}) in {len(rows)} charges\nledger: {self.path}"
        )
        lines = [head, f"{'#':>4}  {'time':19}  {'ε alone':>9}  {'ε total':>9}  label"]
        for cid, when, label, alone, total in self._table(rows):
            lines.append(f"{cid:>4}  {when:19}  {alone:9.4f}  {total:9.4f}  {label}")
        return "\n".join(lines)

    def _repr_html_(self):
        try:
            rows = self._rows()
        except (OSError, ValueError, sqlite3.Error) as exc:
            return f"<div>{html.escape(repr(self))} ({html.escape(str(exc))})</div>"
        eps, delta = self._spent(rows)
        body = "".join(
            f"<tr><td>{cid}</td><td>{when}</td><td>{html.escape(label)}</td>"
            f"<td>{alone:.4f}</td><td>{total:.4f}</td></tr>"
            for cid, when, label, alone, total in self._table(rows)
        )
        return (
            f"<div><strong>PrivacyBudget</strong>: spent ε={eps:.4f} of {self.epsilon:g} "
            f"at δ={self.delta:g} in {len(rows)} charges"
            "<table><thead><tr><th>#</th><th>time</th><th>label</th><th>ε alone</th>"
            f"<th>ε total</th></tr></thead><tbody>{body}</tbody></table></div>"
        )

    def __repr__(self):
        where = "temporary" if self._temporary else repr(self.path)
        head = f"PrivacyBudget(epsilon={self.epsilon:g}, delta={self.delta:g}, "
        try:
            total, n_charges = self._read_total()
        except (OSError, ValueError, sqlite3.Error) as exc:
            # Showing a budget (or a model that holds one) never fails.
            return f"{head}ledger={where}, {self._unavailable(exc)})"
        eps, _ = self._spent_of(total, n_charges)
        return f"{head}spent={eps:.4g}, charges={n_charges}, ledger={where})"

    def plot(self, ax=None):
        """Plot the composed ε after each charge, with the cap as a line.

        Needs matplotlib (``pip install 'skdp[plot]'``).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; ``None`` draws on a new figure.

        Returns
        -------
        matplotlib.axes.Axes
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:
            raise ImportError(
                "PrivacyBudget.plot needs matplotlib; install it with "
                "pip install 'skdp[plot]' (the `plot` extra)."
            ) from exc
        if ax is None:
            _, ax = plt.subplots()
        history = self._history(self._rows())
        ids = [0] + [c.id for c, _ in history]
        totals = [0.0] + [total for _, total in history]
        ax.step(ids, totals, where="post", marker="o", label="composed ε")
        if math.isfinite(self.epsilon):
            ax.axhline(self.epsilon, color="tab:red", linestyle="--", label=f"cap ε={self.epsilon:g}")
        ax.set_xlabel("charge")
        ax.set_ylabel(f"ε at δ={self.delta:g}")
        ax.set_title(f"PrivacyBudget: {len(history)} charges")
        ax.legend(loc="lower right")
        return ax


def _encode(params):
    # JSON has no inf: a cap of inf is stored as the string "inf".
    return {k: ("inf" if v == math.inf else v) for k, v in params.items()}


def _decode(params):
    out = dict(params)
    out["epsilon"] = float(out["epsilon"])
    return out


def _file_identity(path):
    """(host, device, inode) of the ledger file: what a handle knows its ledger by."""
    st = os.stat(path)
    return (socket.gethostname(), st.st_dev, st.st_ino)


def _reattach(path, epsilon, delta, orders, temporary, identity=None):
    # In a worker process: attach to the same file, without creating it anew.
    budget = PrivacyBudget.__new__(PrivacyBudget)
    budget._identity = identity
    budget._epsilon, budget._delta = epsilon, delta
    budget._orders = check_orders(orders)
    budget._path = path
    budget._temporary = temporary
    return budget
