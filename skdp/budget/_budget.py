"""PrivacyBudget: a handle to one shared, durable privacy ledger."""

from __future__ import annotations

import atexit
import datetime
import html
import math
import numbers
import os
import shutil
import sqlite3
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..accounting import RDPCurve, check_orders
from ..accounting._accountants import check_accountant, compose_spend, spend_of
from ..accounting._conversions import _check_delta
from ..accounting._running import RunningPLDAccountant
from ..exceptions import BudgetExceededError
from . import _ledger, _postgres

if TYPE_CHECKING:
    from typing import Any

    from matplotlib.axes import Axes

    from .._typing import ArrayLike, FloatArray
    from ..accounting import DPEvent

__all__ = ["PrivacyBudget", "Charge"]

# Showing a budget never fails: what its ledger may raise when it cannot be read.
_SHOW_ERRORS = (OSError, ValueError, ImportError, sqlite3.Error)

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
        The RDP curve that was composed, with its event (``curve.event``)
        when one was recorded.
    pid : int
        The process that made the charge.
    total_epsilon : float or None
        The composed ε of all charges up to this one, as found when it was
        charged (None in ledgers written before skdp recorded it).
    composed_by : str or None
        How ``total_epsilon`` was found: ``"rdp"``, ``"pld"`` or
        ``"pld+rdp"`` (see :class:`PrivacyBudget`).
    """

    id: int
    time: float
    label: str
    epsilon: float
    curve: RDPCurve
    pid: int
    total_epsilon: float | None = None
    composed_by: str | None = None

    @property
    def event(self) -> DPEvent | None:
        """What was charged (a :mod:`skdp.accounting` event), or None if not recorded."""
        return self.curve.event

    @property
    def datetime(self) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self.time)


def _check_real(value, name):
    """Refuse a string or a bool as the budget's ε or δ: ``float("1")`` would accept it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"The budget's {name} must be a real number; got "
                        f"{type(value).__name__}.")
    return value


def _check_cap(epsilon):
    epsilon = float(_check_real(epsilon, "epsilon"))
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
    """One shared privacy budget, composed by the tightest accountant and capped at (ε, δ).

    Copies, clones and pickles of a budget are handles to the same ledger (an
    SQLite file, or a PostgreSQL database), so every fit in a pipeline, a
    search or a worker process charges the one budget. Each :meth:`charge` is
    one transaction: it records the charge only if the composed spend stays
    within the cap, and otherwise raises :class:`~skdp.BudgetExceededError`
    and records nothing. Notes describe the ledger and the accountants.

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
        raises ``ValueError``; :meth:`open` reopens it with its own. A
        ``postgresql://`` URL puts the ledger on a PostgreSQL server, for
        workers on many machines, with the same contract; its ``budget``
        parameter names the budget in the database (``default`` when absent),
        so several live side by side. It needs psycopg 3
        (``pip install 'skdp[postgres]'``); see the user guide's page on
        clusters.
    orders : array-like of float, default=None
        The Rényi orders of the composition; ``None`` is
        :data:`skdp.accounting.DEFAULT_ORDERS`.
    accountant : {"tightest", "pld", "rdp"}, default="tightest"
        How the charges are composed into ε (see Notes).

    Attributes
    ----------
    epsilon, delta : float
        The cap.
    path : str
        The ledger file, or the PostgreSQL URL with its password hidden.
    orders : ndarray
        The Rényi orders.

    Notes
    -----
    A ``PrivacyBudget`` is a *handle* to a ledger that records every charge:
    an SQLite file, or a budget in a PostgreSQL database. Copies, clones and
    pickles of a budget all refer to the same ledger, so every estimator
    fitted inside ``Pipeline``, ``cross_val_score`` or ``GridSearchCV``
    charges the one budget, also from joblib or dask worker processes: on the
    same machine with a file, on any machine that reaches the database with
    PostgreSQL.

    Each :meth:`charge` is one transaction: it composes all recorded charges
    with the new one, converts the total to ε at the budget's δ with the
    budget's ``accountant``, and records the charge only if that ε is within
    the cap. A refused charge records nothing and raises
    :class:`~skdp.BudgetExceededError`. A recorded charge is committed to
    disk before :meth:`charge` returns. The ledger keeps the composed total of
    its charges beside them (the RDP curve) and each distinct event once, so
    a charge neither re-reads the ledger nor writes more as it grows.

    Each charge records its RDP curve and, when the curve carries one, its
    event (``curve.event``: the mechanism and its parameters, set by
    :func:`~skdp.accounting.gaussian_rdp`, :func:`~skdp.accounting.laplace_rdp`,
    :func:`~skdp.accounting.poisson_subsampled_gaussian_rdp` and the other
    mechanism curves, and kept by ``+`` and ``k *``). So a ledger can be
    accounted again by either accountant. The accountants:

    - ``"rdp"``: the RDP curves added up (Mironov 2017, Prop. 1) and
      converted to ε (Canonne, Kamath & Steinke 2020, Prop. 12).
    - ``"pld"``: the privacy loss distribution of all the events
      (:class:`~skdp.accounting.PLDAccountant`), never below the exact ε.
      Charges without a PLD (no event: a private selection, a curve built
      by hand, a charge recorded before skdp stored events; or an event the
      PLD accountant does not analyse, such as ρ-zCDP) are composed by their
      RDP curves, and the two parts are joined by basic composition: ε_PLD at
      δ_a plus ε_RDP at δ − δ_a, the best of a few splits of δ (Dwork & Roth
      2014, Thm. 3.16). With no PLD part at all it is ``"rdp"``. A handle
      keeps the composed PLDs of the events it last saw and convolves each
      new charge into them (a few FFTs, however many charges the ledger
      holds); the state is checked, inside each transaction, against the
      events the ledger holds then (other processes' charges included) and
      composed again from them when it does not match. Its ε is an upper
      bound like a full composition's, on another grid, so two handles may
      report ε differing in the last digits; a charge that the state puts
      over the cap is decided by a full composition.
    - ``"tightest"`` (the default): the smaller of both, valid because both
      are upper bounds.

    The refusal and :meth:`spent` use the same accountant, the handle's
    own. Handles with different accountants may share a ledger: each accepts
    a charge only if its own valid bound on the whole ledger stays within
    the cap, so the cap is never crossed.

    Pure ε-DP charges compose both as RDP curves and as a sum of ε; the
    smaller bound counts. (ε, δ)-DP charges without an RDP analysis
    (:func:`~skdp.accounting.approximate_dp_rdp`) add their δ up separately:
    they are first subtracted from the budget's δ, and the RDP part is
    converted at what remains.

    Examples
    --------
    >>> from skdp import PrivacyBudget
    >>> from skdp.accounting import gaussian_rdp
    >>> budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    >>> charge = budget.charge(gaussian_rdp(8.0), label="a Gaussian release")
    >>> charge.id, round(charge.epsilon, 3), charge.event
    (1, 0.434, GaussianEvent(noise_multiplier=8.0))
    >>> for _ in range(3):
    ...     _ = budget.charge(gaussian_rdp(8.0), label="another one")
    >>> eps, delta = budget.spent()
    >>> round(eps, 3), delta, len(budget)
    (0.926, 1e-05, 4)
    >>> budget.charge(gaussian_rdp(8.0))
    Traceback (most recent call last):
    ...
    skdp.exceptions.BudgetExceededError: ...
    >>> len(budget)
    4

    The RDP accountant alone spends more on the same charges:

    >>> rdp = PrivacyBudget(epsilon=1.0, delta=1e-5, accountant="rdp")
    >>> for _ in range(4):
    ...     _ = rdp.charge(gaussian_rdp(8.0))
    Traceback (most recent call last):
    ...
    skdp.exceptions.BudgetExceededError: ...
    >>> len(rdp), round(rdp.spent()[0], 3)
    (3, 0.866)
    """

    def __init__(self, epsilon: float, delta: float, *, ledger: str | os.PathLike[str] | None = None,
                 orders: ArrayLike | None = None, accountant: str = "tightest") -> None:
        self._epsilon = _check_cap(epsilon)
        self._delta = _check_delta(_check_real(delta, "delta"))
        self._orders = check_orders(orders)
        self._accountant = check_accountant(accountant)
        self._store = _make_ledger(ledger)
        self._seen = None  # (id, time) of the last charge this handle saw
        self._pld = None  # running PLD state (see _spend_with)
        self._pld_at = None  # Total.at() of the total whose events it composes
        params = {"epsilon": self.epsilon, "delta": self.delta, "orders": self.orders.tolist(),
                  "accountant": self.accountant}
        stored = self._store.create(_encode(params))
        if _decode(stored)["epsilon"] != self.epsilon or stored["delta"] != self.delta or (
            stored["orders"] != params["orders"]
        ):
            raise ValueError(
                f"The ledger {self.path!r} belongs to a budget with epsilon="
                f"{_decode(stored)['epsilon']}, delta={stored['delta']} and its own orders; "
                "open it with PrivacyBudget.open(path) to continue it."
            )

    @classmethod
    def open(cls, ledger: str | os.PathLike[str], *, accountant: str | None = None) -> PrivacyBudget:
        """Reopen an existing ledger (a file or a PostgreSQL URL) with its stored cap and orders.

        ``accountant=None`` uses the one the ledger was created with
        (``"tightest"`` for ledgers that stored none); give one to account the
        ledger another way.

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
        params = _decode(_make_ledger(ledger).read_params())
        if accountant is None:
            accountant = params.get("accountant", "tightest")
        return cls(params["epsilon"], params["delta"], ledger=ledger, orders=params["orders"],
                   accountant=accountant)

    # -- the cap is read-only: it is stored in the ledger file ----------------
    @property
    def epsilon(self) -> float:
        """The cap on the total ε."""
        return self._epsilon

    @property
    def delta(self) -> float:
        """The δ at which the total is converted to ε."""
        return self._delta

    @property
    def orders(self) -> FloatArray:
        """The Rényi orders of the composition (read-only array)."""
        return self._orders

    @property
    def path(self) -> str:
        """The ledger file, or the PostgreSQL ledger's URL without its password."""
        return self._store.where

    @property
    def accountant(self) -> str:
        """How charges are composed: ``"tightest"``, ``"pld"`` or ``"rdp"``."""
        return self._accountant

    # -- handles, not values -------------------------------------------------
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        store = self._store
        state = (store.address, self.epsilon, self.delta, self.orders.tolist(), store.temporary,
                 store.identity, self.accountant, self._seen)
        return (_reattach, state)

    # skops.io restores an object from __getstate__ and __setstate__, not from
    # __reduce__: the same handle as an unpickled one, attached to the same
    # ledger without opening it.
    def __getstate__(self):
        if self._store.address != self._store.where:
            # a skops file is made to be shared: it must not carry a password
            raise TypeError(
                f"This budget's ledger URL ({self._store.where}) holds a password, which "
                "skops.io would write into the model file. Save the model after "
                "set_params(budget=None) (step__budget=None in a pipeline), or give the "
                "password through PGPASSWORD or a .pgpass file instead of the URL."
            )
        return dict(zip(_REATTACH_ARGS, self.__reduce__()[1]))

    def __setstate__(self, state):
        self.__dict__.update(vars(_reattach(**state)))

    def __eq__(self, other):
        return isinstance(other, PrivacyBudget) and other._store.key == self._store.key

    def __hash__(self):
        return hash(self._store.key)

    # -- the ledger -----------------------------------------------------------
    @contextmanager
    def _connect(self, *, write):
        """A transaction on the ledger; a clear error if it is gone or another one.

        The handle remembers the last charge it saw (its id and time): a ledger
        that no longer holds it has lost charges (a backup put in its place,
        even copied into the same file; charges deleted by hand), and is
        refused like another ledger.
        """
        with self._store.transaction(write=write, seen=self._seen) as tx:
            yield tx
        if tx.mark is not None:
            self._seen = tuple(tx.mark)

    def _unavailable(self, exc):
        """What showing a budget says instead of failing when its ledger can't be read."""
        return f"unavailable: {self._store.unavailable(exc)}"

    # -- charging ------------------------------------------------------------
    def _within_cap(self, eps):
        return eps <= self.epsilon * (1.0 + _CAP_RTOL)

    def _spend(self, total, *, keep=True):
        """(ε, δ used, how) of a total, by this budget's accountant.

        ``keep``: make the PLD state of ``total`` the handle's running state
        (only for a total that the ledger holds).
        """
        out, state = self._spend_with(total)
        if keep and state is not None:
            self._keep(state, total)
        return out

    def _keep(self, state, total):
        self._pld, self._pld_at = state, total.at()

    def _spend_with(self, total):
        """((ε, δ used, how), PLD state) of a total.

        The PLD part starts from the handle's running state: the composed
        PLDs of the events of the total it last saw, which are a function of
        that multiset of events alone. When ``total`` (read from the ledger
        in the caller's transaction, so with every other process's charges)
        extends that total, the state is extended by the events added since,
        at their cost alone; otherwise by the difference of the multisets
        when the state's is contained in ``total``'s, and composed again from
        scratch when not (see :mod:`skdp.accounting._running`).
        """
        if not total.n_charges:
            return (0.0, 0.0, self._how_empty()), None
        state = None
        leaves = ()
        if self.accountant != "rdp" and total.has_leaves():
            added = None if self._pld is None else total.added_since(self._pld_at)
            if added is not None:
                state = self._pld.plus(added)
            else:
                base = self._pld if self._pld is not None else RunningPLDAccountant()
                state = base.with_leaves(total.leaf_items())
            leaves = state.leaf_pairs()
        out = compose_spend(total.curve, leaves, total.rest, self.delta,
                            accountant=self.accountant, pld=state)
        if state is not None and state.incremental and not self._within_cap(out[0]):
            # Over the cap by the extended state: decide by a full composition
            # (both are upper bounds), which then becomes the state.
            state = RunningPLDAccountant().with_leaves(total.leaf_items())
            out = min(out, compose_spend(total.curve, leaves, total.rest, self.delta,
                                         accountant=self.accountant, pld=state),
                      key=lambda r: r[0])
        return out, state

    def _how_empty(self):
        return "rdp" if self.accountant == "rdp" else "pld"

    def charge(self, curve: RDPCurve, *, label: str | None = None) -> Charge:
        """Record ``curve`` if the composed total stays within the cap.

        Parameters
        ----------
        curve : RDPCurve
            The privacy curve of the release to pay for; its event
            (``curve.event``), when it has one, is recorded and accounted too.
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
        alone = spend_of(curve, self.delta, accountant=self.accountant)[0]
        state = None
        with self._connect(write=True) as tx:
            prior = tx.read_total(self.orders)
            eps_total, how = self._over_delta(prior, curve)
            # Composed before the insert: if it fails, nothing is recorded.
            total = prior.plus(curve) if self._within_cap(eps_total) else None
            if total is not None and how is None:
                (eps_total, _, how), state = self._spend_with(total)
            if not self._within_cap(eps_total):
                if self.delta == 0.0 and alone == math.inf and (
                        curve.delta > 0 or np.isfinite(curve.rdp).any()):
                    # private at some δ > 0 (a Gaussian), not at δ = 0; not a non-private fit
                    raise BudgetExceededError(
                        f"Charging {label!r} is refused: this budget has delta=0 (pure ε-DP), "
                        "and delta = 0 admits no Gaussian mechanism (nor any other that is "
                        "only (ε, δ)-DP with δ > 0): at δ = 0 its ε is infinite, whatever its "
                        "noise. Give the budget a delta > 0 (for example PrivacyBudget("
                        f"{self.epsilon:g}, 1e-5)), or fit with a pure ε-DP mechanism (delta=0 "
                        "where the estimator offers it). Nothing was recorded."
                    )
                spent = self._spend(prior)[0]
                raise BudgetExceededError(
                    f"Charging {label!r} (ε={alone:.4g} alone) would bring the total to "
                    f"ε={eps_total:.4g} at δ={self.delta:g}, over the cap ε={self.epsilon:g}; "
                    f"already spent ε={spent:.4g} in {prior.n_charges} charges "
                    f"(accountant {self.accountant!r}). Nothing was recorded."
                )
            charge_id, when = tx.insert_charge(label=label, epsilon=alone, curve=curve,
                                               total_epsilon=eps_total, composed_by=how)
            tx.write_total(total, last_id=charge_id)
        if state is not None:  # committed: the ledger now holds what the state composes
            self._keep(state, total)
        return Charge(charge_id, when, label, alone, curve, os.getpid(), eps_total, how)

    def can_afford(self, curve: RDPCurve) -> bool:
        """Whether :meth:`charge` would accept ``curve`` now (records nothing)."""
        if not isinstance(curve, RDPCurve):
            raise TypeError(f"can_afford() takes an RDPCurve; got {type(curve).__name__}.")
        with self._connect(write=False) as tx:
            prior = tx.read_total(self.orders)
        eps, how = self._over_delta(prior, curve)
        if how is None and self._within_cap(eps):
            eps = self._spend(prior.plus(curve), keep=False)[0]
        return self._within_cap(eps)

    def _over_delta(self, prior, curve):
        """(inf, "rdp") when the approximate-DP δ of the charges would pass the budget's δ, else (0, None).

        Checked before composing, which refuses a δ sum >= 1.
        """
        if prior.curve.delta + curve.delta > self.delta:
            return math.inf, "rdp"
        return 0.0, None

    # -- reading -------------------------------------------------------------
    def _rows(self):
        with self._connect(write=False) as tx:
            return tx.read_charges()

    def _read_total(self):
        with self._connect(write=False) as tx:
            return tx.read_total(self.orders)

    def total_curve(self) -> RDPCurve:
        """The RDP composition of all charges, as one :class:`RDPCurve`."""
        return self._read_total().curve

    def spent(self) -> tuple[float, float]:
        """The composed spend (ε, δ) of all charges at the budget's δ, by its accountant.

        When RDP's pure ε-DP sum is the tightest bound, δ is the δ of the
        approximate-DP charges alone (0 if there are none).
        """
        eps, delta, _ = self._spend(self._read_total())
        return eps, delta

    def _total_of(self, rows):
        total = _ledger.Total.empty(self.orders)
        for row in rows:
            total = total.plus(_ledger.curve_from_row(row))
        return total

    def _spent(self, rows):
        eps, delta, _ = self._spend(self._total_of(rows))
        return eps, delta

    def _delta_alone(self, charge):
        """The δ of a charge's ε alone: the budget's, or its own when RDP's pure bound gave it."""
        curve = charge.curve
        if curve.delta > self.delta:
            return self.delta
        eps_rdp, order = curve.epsilon_and_order(self.delta)
        if order == math.inf and eps_rdp <= charge.epsilon:
            return curve.delta
        return self.delta

    def remaining_epsilon(self) -> float:
        """The cap minus the spent ε: a reading, not a promise.

        A new charge of ε' costs less than ε' once composed, so what a new fit
        may spend is decided by :meth:`can_afford`, not by this.
        """
        return max(0.0, self.epsilon - self.spent()[0])

    @property
    def ledger(self) -> list[Charge]:
        """Every charge, in order, as a list of :class:`Charge`."""
        return self._charges(self._rows())

    @staticmethod
    def _charges(rows):
        return [
            Charge(row[0], row[1], row[2], row[3], _ledger.curve_from_row(row), row[5],
                   row[7], row[8])
            for row in rows
        ]

    def __len__(self) -> int:
        with self._connect(write=False) as tx:
            return tx.count()

    # -- display -------------------------------------------------------------
    def _history(self, rows):
        """Each charge with the composed ε of all charges up to it and how it was found.

        That ε is the one recorded at the charge (by the accountant of the
        handle that made it); charges recorded before skdp stored it get the
        RDP composition of the charges up to them.
        """
        history, running = [], RDPCurve.zero(self.orders)
        for c in self._charges(rows):
            running = running + c.curve.with_event(None)
            if c.total_epsilon is not None:
                history.append((c, c.total_epsilon, c.composed_by or "rdp"))
            else:
                total = running.epsilon(self.delta) if running.delta <= self.delta else math.inf
                history.append((c, total, "rdp"))
        return history

    def _table(self, rows):
        return [
            (c.id, c.datetime.strftime("%Y-%m-%d %H:%M:%S"), c.label, c.epsilon, total, how,
             c.curve.event is not None and _ledger.pld_leaves(c.curve) is not None)
            for c, total, how in self._history(rows)
        ]

    def _how_text(self, total, n_with_pld):
        """How the spend is composed, in one sentence (for report())."""
        if self.accountant == "rdp":
            return "composed by RDP (every charge's RDP curve)"
        n_rest = total.n_charges - n_with_pld
        parts = ("the smaller of RDP (every charge's RDP curve) and PLD"
                 if self.accountant == "tightest" else "PLD")
        text = f"composed by {parts} (privacy loss distributions of the charges' events)"
        if n_rest and total.leaves:
            text += (f"; {n_rest} charge(s) without a PLD (no event recorded, or one the PLD "
                     "accountant does not analyse, such as a private selection or zCDP) enter "
                     "the PLD side by their RDP curve, joined to the PLD of the others by basic "
                     "composition (δ split)")
        elif n_rest:
            text += f"; no charge has a PLD ({n_rest} without one), so RDP composes them all"
        return text

    def to_dict(self) -> dict[str, Any]:
        """The cap, the spend and every charge as plain Python values.

        Read in one transaction. Each charge has its ``id``, ``time`` (POSIX),
        ``datetime`` (ISO 8601, local time with offset), ``label``,
        ``epsilon`` and ``delta`` (the charge alone is (``epsilon``,
        ``delta``)-DP: ``delta`` is the budget's δ, or the charge's own δ when
        its pure ε-DP bound is the tighter one, 0 for a pure ε-DP charge),
        ``total_epsilon`` (all charges up to it composed, at the budget's δ),
        ``composed_by`` (how: ``"rdp"``, ``"pld"`` or ``"pld+rdp"``),
        ``event`` (the recorded event's ``to_dict()``, or None),
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
        >>> info["accountant"], info["charges"][0]["event"]
        ('tightest', {'kind': 'pure_dp', 'epsilon': 0.25})
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
                "delta": self._delta_alone(c),
                "total_epsilon": total,
                "composed_by": how,
                "event": None if c.curve.event is None else c.curve.event.to_dict(),
                "approximate_delta": c.curve.delta,
                "mechanism": c.curve.mechanism,
                "pid": c.pid,
            }
            for c, total, how in self._history(rows)
        ]
        return {
            "path": self.path,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "accountant": self.accountant,
            "spent_epsilon": eps,
            "spent_delta": delta,
            "n_charges": len(rows),
            "charges": charges,
        }

    def report(self) -> str:
        """A plain-text table of the charges with the running total.

        Each line shows a charge's id, time, ε alone, the composed ε of all
        charges up to it at the budget's δ, how that total was composed
        (``rdp``, ``pld``, or ``pld+rdp`` where some charges have no PLD) and
        whether the charge has a PLD; a last line says how the spend is
        composed. All read in one transaction.
        """
        try:
            rows = self._rows()
        except _SHOW_ERRORS as exc:
            return (
                f"PrivacyBudget: cap ε={self.epsilon:g} at δ={self.delta:g}; ledger "
                f"{self._unavailable(exc)}\nledger: {self.path}"
            )
        total = self._total_of(rows)
        eps, delta, _ = self._spend(total)
        table = self._table(rows)
        n_with_pld = sum(1 for *_, has_pld in table if has_pld)
        head = (
            f"PrivacyBudget: cap ε={self.epsilon:g} at δ={self.delta:g}; "
            f"spent ε={eps:.4f} (δ={delta:g}) in {len(rows)} charges; accountant "
            f"{self.accountant!r}\nledger: {self.path}"
        )
        lines = [head, f"{'#':>4}  {'time':19}  {'ε alone':>9}  {'ε total':>9}  {'by':7}  {'PLD':3}  label"]
        for cid, when, label, alone, tot, how, has_pld in table:
            lines.append(f"{cid:>4}  {when:19}  {alone:9.4f}  {tot:9.4f}  {how:7}  "
                         f"{'yes' if has_pld else 'no':3}  {label}")
        lines.append(f"spend {self._how_text(total, n_with_pld)}.")
        return "\n".join(lines)

    def _repr_html_(self):
        try:
            rows = self._rows()
        except _SHOW_ERRORS as exc:
            return f"<div>{html.escape(repr(self))} ({html.escape(str(exc))})</div>"
        eps, delta = self._spent(rows)
        body = "".join(
            f"<tr><td>{cid}</td><td>{when}</td><td>{html.escape(label)}</td>"
            f"<td>{alone:.4f}</td><td>{total:.4f}</td><td>{how}</td></tr>"
            for cid, when, label, alone, total, how, _ in self._table(rows)
        )
        return (
            f"<div><strong>PrivacyBudget</strong>: spent ε={eps:.4f} of {self.epsilon:g} "
            f"at δ={self.delta:g} in {len(rows)} charges (accountant {html.escape(self.accountant)})"
            "<table><thead><tr><th>#</th><th>time</th><th>label</th><th>ε alone</th>"
            f"<th>ε total</th><th>by</th></tr></thead><tbody>{body}</tbody></table></div>"
        )

    def __repr__(self):
        where = "temporary" if self._store.temporary else repr(self.path)
        head = f"PrivacyBudget(epsilon={self.epsilon:g}, delta={self.delta:g}, "
        try:
            total = self._read_total()
        except _SHOW_ERRORS as exc:
            # Showing a budget (or a model that holds one) never fails.
            return f"{head}ledger={where}, {self._unavailable(exc)})"
        eps = self._spend(total)[0]
        return f"{head}spent={eps:.4g}, charges={total.n_charges}, ledger={where})"

    def plot(self, ax: Axes | None = None) -> Axes:
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
        ids = [0] + [c.id for c, _, _ in history]
        totals = [0.0] + [total for _, total, _ in history]
        ax.step(ids, totals, where="post", marker="o", label="composed ε")
        if math.isfinite(self.epsilon):
            ax.axhline(self.epsilon, color="tab:red", linestyle="--", label=f"cap ε={self.epsilon:g}")
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # charges are counted, not measured
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


def _make_ledger(ledger, *, temporary=False, identity=None):
    """The backend of ``ledger``: a PostgreSQL URL, a file path, or None (a temporary file)."""
    if ledger is None:
        return _ledger.SQLiteLedger(_temporary_ledger(), temporary=True)
    if _postgres.is_url(ledger):
        return _postgres.PostgresLedger(ledger, identity=identity)
    return _ledger.SQLiteLedger(ledger, temporary=temporary, identity=identity)


_REATTACH_ARGS = ("path", "epsilon", "delta", "orders", "temporary", "identity", "accountant",
                  "seen")


def _reattach(path, epsilon, delta, orders, temporary, identity=None, accountant="tightest",
              seen=None):
    # In a worker process: attach to the same ledger, without creating it anew.
    budget = PrivacyBudget.__new__(PrivacyBudget)
    budget._accountant = accountant
    budget._epsilon, budget._delta = epsilon, delta
    budget._orders = check_orders(orders)
    budget._store = _make_ledger(path, temporary=temporary, identity=identity)
    budget._seen = None if seen is None else tuple(seen)  # the last charge the sender saw
    budget._pld = budget._pld_at = None  # the running PLD state is this process's own
    return budget
