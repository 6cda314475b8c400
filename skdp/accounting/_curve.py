"""The privacy curve: an RDP curve over a grid of orders, the unit of composition."""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np

from ._conversions import _check_delta, rdp_to_delta, rdp_to_epsilon
from ._events import ComposedEvent, DPEvent, NonPrivateEvent, SelfComposedEvent, _flatten, event_from_dict
from ._orders import check_orders

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from .._typing import ArrayLike, FloatArray

__all__ = ["RDPCurve"]


class RDPCurve:
    """A Rényi-DP curve ε(α) on a grid of orders, closed under composition.

    A curve describes the privacy of one release (or of a composition of
    releases) under the add/remove-one-row neighbouring relation. Curves
    compose by addition (Mironov 2017, Prop. 1), also across different
    mechanisms: ``curve_a + curve_b`` and ``k * curve``.

    It also carries a pure ε-DP bound and the δ of charges that have no RDP
    analysis (see Notes).

    Parameters
    ----------
    orders : array-like of float
        Rényi orders α > 1.
    rdp : array-like of float
        ε(α) at each order, >= 0; ``inf`` where unbounded.
    delta : float in [0, 1), default=0
        Additive δ of approximate-DP parts.
    pure_epsilon : float, default=inf
        A pure ε-DP bound, if the mechanism has one.
    mechanism : str, default="custom"
        A readable description, kept in ledgers.
    event : DPEvent, default=None
        What was released (:mod:`skdp.accounting` events), when the curve is
        exactly that mechanism's: then other accountants (the privacy loss
        distributions of :class:`~skdp.accounting.PLDAccountant`) can account
        it too. Events compose with the curves (``+`` and ``k *``); a curve
        built from an RDP array alone, or composed with one, has none and is
        accounted by its curve. The functions that build mechanism curves
        (:func:`gaussian_rdp`, :func:`laplace_rdp`,
        :func:`poisson_subsampled_gaussian_rdp`, ...) set it.

    Notes
    -----
    Two further parts make every kind of charge fit in one algebra:

    - ``pure_epsilon``: a pure ε-DP bound, the RDP value at α = ∞
      (``inf`` when there is none, as for the Gaussian). Pure bounds add up
      (Dwork et al. 2006). The conversion to (ε, δ) returns the smaller of
      this bound and the RDP conversion, so a ledger of pure ε-DP charges
      also reports its exact sum at δ = 0.
    - ``delta``: the δ of (ε, δ)-DP charges that have no RDP analysis. Such a
      charge is δ-approximately ε-DP: outside an event of probability δ it is
      ε-DP (Kairouz, Oh & Viswanath 2015, Thm. 3.4), and its RDP part is the
      pure ε-DP curve. These δ add up under composition (Bun & Steinke 2016,
      Def. 8.1 and Lemma 8.8), and the conversion to (ε, δ_total) spends
      ``delta`` first: ε is converted at δ_total − ``delta``.

    Examples
    --------
    >>> from skdp.accounting import gaussian_rdp
    >>> curve = gaussian_rdp(10.0) * 100
    >>> round(curve.epsilon(1e-5), 4)
    4.7285
    >>> curve.mechanism
    '100 x gaussian(noise_multiplier=10)'
    >>> curve.event
    SelfComposedEvent(event=GaussianEvent(noise_multiplier=10.0), count=100)
    """

    __slots__ = ("orders", "rdp", "delta", "pure_epsilon", "mechanism", "event")
    # the slots' types, for type checkers (set once, by __init__ or __setstate__)
    orders: FloatArray
    rdp: FloatArray
    delta: float
    pure_epsilon: float
    mechanism: str
    event: DPEvent | None

    def __init__(self, orders: ArrayLike | None, rdp: ArrayLike, *, delta: float = 0.0,
                 pure_epsilon: float = math.inf, mechanism: str = "custom",
                 event: DPEvent | None = None) -> None:
        raw = None if orders is None else np.atleast_1d(np.asarray(orders, dtype=float))
        orders = check_orders(orders) if orders is not None else check_orders()
        rdp = np.array(rdp, dtype=float)
        if rdp.ndim == 0:
            rdp = np.full(orders.shape, float(rdp))
        if raw is not None and raw.shape != orders.shape:
            raise ValueError("orders must not contain duplicates.")
        if rdp.shape != orders.shape:
            raise ValueError(
                f"rdp has shape {rdp.shape} but there are {orders.shape[0]} orders."
            )
        if raw is not None and not np.array_equal(raw, orders):
            # check_orders sorts the orders: keep each value with its own order.
            rdp = rdp[np.argsort(raw, kind="stable")]
        if np.any(np.isnan(rdp)) or np.any(rdp < 0):
            raise ValueError("RDP values must be >= 0 (inf allowed), never NaN.")
        pure_epsilon = float(pure_epsilon)
        if math.isnan(pure_epsilon) or pure_epsilon < 0:
            raise ValueError(f"pure_epsilon must be >= 0 or inf; got {pure_epsilon!r}.")
        if event is not None and not isinstance(event, DPEvent):
            raise ValueError(f"event must be a DPEvent or None; got {event!r}.")
        rdp.setflags(write=False)
        object.__setattr__(self, "event", event)
        object.__setattr__(self, "orders", orders)
        object.__setattr__(self, "rdp", rdp)
        object.__setattr__(self, "delta", _check_delta(delta))
        object.__setattr__(self, "pure_epsilon", pure_epsilon)
        object.__setattr__(self, "mechanism", str(mechanism))

    def __setattr__(self, name, value):
        raise AttributeError("RDPCurve is immutable.")

    # -- composition -------------------------------------------------------
    def __add__(self, other: RDPCurve) -> RDPCurve:
        if not isinstance(other, RDPCurve):
            return NotImplemented
        if np.array_equal(self.orders, other.orders):
            orders, a, b = self.orders, self.rdp, other.rdp
        else:
            # Composing on the common orders only is safe: fewer orders can
            # only make the (ε, δ) conversion larger.
            orders, ia, ib = np.intersect1d(self.orders, other.orders, return_indices=True)
            if orders.size == 0:
                raise ValueError("The two curves share no Rényi order.")
            a, b = self.rdp[ia], other.rdp[ib]
        delta = self.delta + other.delta
        if delta >= 1.0:
            raise ValueError("The composed approximate-DP delta reaches 1.")
        return RDPCurve(
            orders,
            a + b,
            delta=delta,
            pure_epsilon=self.pure_epsilon + other.pure_epsilon,
            mechanism=f"{self.mechanism} + {other.mechanism}",
            event=_compose_events(self.event, other.event),
        )

    def __radd__(self, other: int) -> RDPCurve:
        if isinstance(other, numbers.Number) and other == 0:  # so sum() works
            return self
        return NotImplemented

    def __mul__(self, k: int) -> RDPCurve:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral) or k < 0:
            return NotImplemented
        k = int(k)
        delta = self.delta * k
        if delta >= 1.0:
            raise ValueError("The composed approximate-DP delta reaches 1.")
        return RDPCurve(
            self.orders,
            self.rdp * k,
            delta=delta,
            pure_epsilon=self.pure_epsilon * k if k else 0.0,
            mechanism=f"{k} x {self.mechanism}",
            event=None if self.event is None else _normalised(SelfComposedEvent(self.event, k)),
        )

    __rmul__ = __mul__

    @classmethod
    def zero(cls, orders: ArrayLike | None = None) -> RDPCurve:
        """The curve of a release that reveals nothing."""
        orders = check_orders(orders)
        return cls(orders, np.zeros(orders.shape), pure_epsilon=0.0, mechanism="nothing",
                   event=ComposedEvent(()))

    @classmethod
    def non_private(cls, orders: ArrayLike | None = None) -> RDPCurve:
        """The curve of a release with no privacy at all (ε = ∞ at every order).

        Estimators fitted with ``epsilon=inf`` charge this: a budget with a
        finite cap refuses it, as it must.
        """
        orders = check_orders(orders)
        return cls(orders, np.full(orders.shape, np.inf), mechanism="non_private",
                   event=NonPrivateEvent())

    # -- conversion --------------------------------------------------------
    def epsilon(self, delta: float, *, method: str = "improved") -> float:
        """ε such that this curve is (ε, δ)-DP."""
        return self.epsilon_and_order(delta, method=method)[0]

    def epsilon_and_order(self, delta: float, *, method: str = "improved") -> tuple[float, float]:
        """ε at ``delta`` and the optimal order (``inf`` for a pure-DP bound).

        See :func:`skdp.accounting.rdp_to_epsilon` for the conversion.
        """
        delta = _check_delta(delta)
        if delta < self.delta or (delta == self.delta and self.pure_epsilon == math.inf):
            return math.inf, math.nan
        eps, order = rdp_to_epsilon(self.orders, self.rdp, delta - self.delta, method=method)
        if self.pure_epsilon <= eps:
            return self.pure_epsilon, math.inf
        return eps, order

    def delta_for(self, epsilon: float) -> float:
        """Smallest δ such that this curve is (ε, δ)-DP."""
        epsilon = float(epsilon)
        if math.isnan(epsilon) or epsilon < 0:
            raise ValueError(f"epsilon must be >= 0; got {epsilon!r}.")
        if epsilon >= self.pure_epsilon:
            return self.delta
        return min(1.0, self.delta + rdp_to_delta(self.orders, self.rdp, epsilon)[0])

    # -- serialisation -----------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; :meth:`from_dict` reads it back exactly.

        The event, if any, is under ``"event"`` (its ``to_dict()``).
        """
        out = {
            "orders": self.orders.tolist(),
            "rdp": [float(v) if np.isfinite(v) else "inf" for v in self.rdp],
            "delta": self.delta,
            "pure_epsilon": self.pure_epsilon if math.isfinite(self.pure_epsilon) else "inf",
            "mechanism": self.mechanism,
        }
        if self.event is not None:
            out["event"] = self.event.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RDPCurve:
        event = d.get("event")
        return cls(
            d["orders"],
            [float(v) for v in d["rdp"]],
            delta=d.get("delta", 0.0),
            pure_epsilon=float(d.get("pure_epsilon", "inf")),
            mechanism=d.get("mechanism", "custom"),
            event=None if event is None else event_from_dict(event),
        )

    def with_event(self, event: DPEvent | None) -> RDPCurve:
        """This curve with ``event`` (or none): assert what mechanism the curve is exactly."""
        return RDPCurve(self.orders, self.rdp, delta=self.delta, pure_epsilon=self.pure_epsilon,
                        mechanism=self.mechanism, event=event)

    def __eq__(self, other):
        if not isinstance(other, RDPCurve):
            return NotImplemented
        return (
            np.array_equal(self.orders, other.orders)
            and np.array_equal(self.rdp, other.rdp)
            and self.delta == other.delta
            and self.pure_epsilon == other.pure_epsilon
        )

    __hash__ = None

    # Pickle, joblib and skops.io all restore a curve through __getstate__ and
    # __setstate__; its state is to_dict() (lists, floats and strings only),
    # checked again by from_dict on load. skops needs this: a class with
    # __slots__ has no __dict__ to restore.
    def __getstate__(self):
        return self.to_dict()

    def __setstate__(self, state):
        if any(hasattr(self, name) for name in RDPCurve.__slots__):
            raise AttributeError("RDPCurve is immutable.")
        curve = RDPCurve.from_dict(state)
        for name in RDPCurve.__slots__:
            object.__setattr__(self, name, getattr(curve, name))

    def __repr__(self):
        return f"RDPCurve({self.mechanism}, n_orders={self.orders.size})"


def _normalised(event):
    """``event`` as one flat composition of its distinct leaves with their counts.

    Composition is commutative, so this is the same event for every
    accountant; it keeps the events of long sums of curves shallow and small.
    """
    leaves = _flatten(event)
    if len(leaves) == 1 and leaves[0][1] == 1:
        return leaves[0][0]
    if len(leaves) == 1:
        return SelfComposedEvent(*leaves[0])
    return ComposedEvent(tuple(leaf if c == 1 else SelfComposedEvent(leaf, c) for leaf, c in leaves))


def _compose_events(a, b):
    """The event of running both (None when either is unknown)."""
    if a is None or b is None:
        return None
    return _normalised(ComposedEvent((a, b)))
