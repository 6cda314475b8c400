"""A small algebra of privacy events: what was released, with which parameters.

An event names a mechanism and its parameters and nothing else: it carries
no privacy numbers, so any accountant can analyse it (RDP curves, privacy
loss distributions), and a ledger can store it as a plain dict (JSON) and
read it back exactly. The design follows dp-accounting's ``dp_event``.

Every event is an immutable value: equal parameters give equal, hashable
events. Noise is given relative to the sensitivity under skdp's
add/remove-one-row relation (a noise multiplier is noise std / L2
sensitivity), so an event holds no data.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "ApproximateDPEvent",
    "BoundedRangeEvent",
    "ComposedEvent",
    "DPEvent",
    "DiscreteGaussianEvent",
    "DiscreteLaplaceEvent",
    "GaussianEvent",
    "LaplaceEvent",
    "NonPrivateEvent",
    "PoissonSampledEvent",
    "PureDPEvent",
    "RandomizedResponseEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "ZCDPEvent",
    "event_from_dict",
]

_KINDS = {}


def _register(cls):
    _KINDS[cls.kind] = cls
    return cls


def _real(name, value, *, low=0.0, low_open=True, allow_inf=False, high=None):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number; got {value!r}.")
    value = float(value)
    if math.isnan(value) or (value == math.inf and not allow_inf):
        raise ValueError(f"{name} must be finite; got {value!r}.")
    if value < low or (low_open and value == low):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low:g}; got {value!r}.")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high:g}; got {value!r}.")
    return value


def _integer(name, value, *, low):
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        out = int(value)
    else:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    if out < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    return out


def _to_json(value):
    if isinstance(value, DPEvent):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_to_json(v) for v in value]
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return value


class DPEvent:
    """Base class of privacy events.

    Subclasses are frozen dataclasses with a class attribute ``kind``, the
    name stored in :meth:`to_dict`.
    """

    kind = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; :func:`event_from_dict` reads it back exactly."""
        out = {"kind": self.kind}
        for field in dataclasses.fields(self):
            out[field.name] = _to_json(getattr(self, field.name))
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DPEvent:
        """Read an event written by :meth:`to_dict` (any kind)."""
        return event_from_dict(d)


def event_from_dict(d: Mapping[str, Any]) -> DPEvent:
    """The event described by ``d`` (the output of ``event.to_dict()``).

    Parameters
    ----------
    d : dict
        A dict with a ``'kind'`` key, as ``event.to_dict()`` writes it.

    Returns
    -------
    DPEvent

    Examples
    --------
    >>> from skdp.accounting import GaussianEvent, PoissonSampledEvent, SelfComposedEvent, event_from_dict
    >>> event = SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(4.0)), 1000)
    >>> event_from_dict(event.to_dict()) == event
    True
    """
    if not isinstance(d, dict) or "kind" not in d:
        raise ValueError(f"an event dict needs a 'kind' key; got {d!r}.")
    kind = d["kind"]
    if kind not in _KINDS:
        raise ValueError(f"unknown event kind {kind!r}; known: {sorted(_KINDS)}.")
    cls = _KINDS[kind]
    kwargs = {}
    for field in dataclasses.fields(cls):
        if field.name not in d:
            continue
        value = d[field.name]
        if field.name == "event":
            value = event_from_dict(value)
        elif field.name == "events":
            value = tuple(event_from_dict(v) for v in value)
        elif value == "inf":
            value = math.inf
        kwargs[field.name] = value
    return cls(**kwargs)


@_register
@dataclasses.dataclass(frozen=True)
class GaussianEvent(DPEvent):
    """The Gaussian mechanism with noise multiplier σ = noise std / L2 sensitivity.

    Parameters
    ----------
    noise_multiplier : float > 0
        σ, finite.

    Examples
    --------
    >>> from skdp.accounting import GaussianEvent
    >>> GaussianEvent(2.0).to_dict()
    {'kind': 'gaussian', 'noise_multiplier': 2.0}
    >>> GaussianEvent.from_scale(6.0, sensitivity=3.0)
    GaussianEvent(noise_multiplier=2.0)
    """

    noise_multiplier: float
    kind = "gaussian"

    def __post_init__(self):
        object.__setattr__(self, "noise_multiplier", _real("noise_multiplier", self.noise_multiplier))

    @classmethod
    def from_scale(cls, std: float, *, sensitivity: float = 1.0) -> GaussianEvent:
        """The event of Gaussian noise of standard deviation ``std`` on a query of that L2 sensitivity."""
        return cls(_real("std", std) / _real("sensitivity", sensitivity))


@_register
@dataclasses.dataclass(frozen=True)
class LaplaceEvent(DPEvent):
    """The Laplace mechanism with noise multiplier λ = scale / L1 sensitivity (ε = 1/λ).

    Parameters
    ----------
    noise_multiplier : float > 0
        λ, finite.

    Examples
    --------
    >>> from skdp.accounting import LaplaceEvent
    >>> LaplaceEvent.from_scale(2.0, sensitivity=4.0)
    LaplaceEvent(noise_multiplier=0.5)
    """

    noise_multiplier: float
    kind = "laplace"

    def __post_init__(self):
        object.__setattr__(self, "noise_multiplier", _real("noise_multiplier", self.noise_multiplier))

    @classmethod
    def from_scale(cls, scale: float, *, sensitivity: float = 1.0) -> LaplaceEvent:
        """The event of Laplace noise of ``scale`` on a query of that L1 sensitivity."""
        return cls(_real("scale", scale) / _real("sensitivity", sensitivity))


@_register
@dataclasses.dataclass(frozen=True)
class RandomizedResponseEvent(DPEvent):
    """k-ary randomized response with parameter ε (the true value with probability e^ε/(e^ε + k − 1)).

    Parameters
    ----------
    epsilon : float > 0
        ε, finite.
    n_categories : int >= 2, default=2
        k, the number of possible values.
    """

    epsilon: float
    n_categories: int = 2
    kind = "randomized_response"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _real("epsilon", self.epsilon))
        object.__setattr__(self, "n_categories", _integer("n_categories", self.n_categories, low=2))


@_register
@dataclasses.dataclass(frozen=True)
class PureDPEvent(DPEvent):
    """Any ε-DP mechanism (analysed as binary randomized response, its worst case).

    Parameters
    ----------
    epsilon : float > 0
        ε, finite.
    """

    epsilon: float
    kind = "pure_dp"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _real("epsilon", self.epsilon))


@_register
@dataclasses.dataclass(frozen=True)
class BoundedRangeEvent(DPEvent):
    """An ε-bounded-range mechanism, such as the exponential mechanism run at ε.

    Parameters
    ----------
    epsilon : float > 0
        ε, finite.

    Notes
    -----
    Its privacy loss on any neighbouring pair ranges over an interval of
    width at most ε, and the exponential mechanism that samples with weights
    exp(ε·u/(2Δ)) is ε-BR (Durfee & Rogers 2019). RDP accountant: the smaller of its ε-DP curve and the
    (ε²/8)-zCDP curve of BR mechanisms (Cesar & Rogers 2021), as
    :func:`skdp.mechanisms.exponential_mechanism_rdp`. PLD accountant: the
    binary randomized-response pair, which dominates every ε-DP mechanism
    (Kairouz, Oh & Viswanath 2015, Thm. 2.4).

    Examples
    --------
    >>> from skdp.accounting import BoundedRangeEvent
    >>> BoundedRangeEvent(0.5).to_dict()
    {'kind': 'bounded_range', 'epsilon': 0.5}
    """

    epsilon: float
    kind = "bounded_range"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _real("epsilon", self.epsilon))


@_register
@dataclasses.dataclass(frozen=True)
class ApproximateDPEvent(DPEvent):
    """Any (ε, δ)-DP mechanism without a finer analysis.

    Parameters
    ----------
    epsilon : float >= 0
        ε, finite.
    delta : float in [0, 1)
        δ.
    """

    epsilon: float
    delta: float
    kind = "approximate_dp"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _real("epsilon", self.epsilon, low_open=False))
        delta = _real("delta", self.delta, low_open=False)
        if delta >= 1.0:
            raise ValueError(f"delta must be < 1; got {self.delta!r}.")
        object.__setattr__(self, "delta", delta)


@_register
@dataclasses.dataclass(frozen=True)
class ZCDPEvent(DPEvent):
    """A ρ-zCDP mechanism without a finer analysis (RDP ε(α) = ρα).

    Parameters
    ----------
    rho : float >= 0
        ρ, finite.
    """

    rho: float
    kind = "zcdp"

    def __post_init__(self):
        object.__setattr__(self, "rho", _real("rho", self.rho, low_open=False))


@_register
@dataclasses.dataclass(frozen=True)
class DiscreteLaplaceEvent(DPEvent):
    """Discrete Laplace noise P(x) ∝ exp(−|x|/scale) on an integer query of L1 sensitivity Δ.

    It is (Δ/scale)-DP; skdp's ``DiscreteLaplaceMechanism(epsilon, sensitivity=Δ)``
    has scale Δ/ε.

    Parameters
    ----------
    scale : float > 0
        The noise's scale, finite.
    sensitivity : int >= 1, default=1
        Δ.
    """

    scale: float
    sensitivity: int = 1
    kind = "discrete_laplace"

    def __post_init__(self):
        object.__setattr__(self, "scale", _real("scale", self.scale))
        object.__setattr__(self, "sensitivity", _integer("sensitivity", self.sensitivity, low=1))


@_register
@dataclasses.dataclass(frozen=True)
class DiscreteGaussianEvent(DPEvent):
    """Discrete Gaussian noise N_Z(0, σ²) (σ the std parameter) on an integer query of L2 sensitivity Δ.

    Parameters
    ----------
    sigma : float > 0
        σ, finite.
    sensitivity : int >= 1, default=1
        Δ.
    """

    sigma: float
    sensitivity: int = 1
    kind = "discrete_gaussian"

    def __post_init__(self):
        object.__setattr__(self, "sigma", _real("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", _integer("sensitivity", self.sensitivity, low=1))


@_register
@dataclasses.dataclass(frozen=True)
class NonPrivateEvent(DPEvent):
    """A release with no privacy guarantee (ε = ∞)."""

    kind = "non_private"


@_register
@dataclasses.dataclass(frozen=True)
class PoissonSampledEvent(DPEvent):
    """``event`` run on a batch holding each row independently with probability ``sampling_rate``.

    Parameters
    ----------
    sampling_rate : float in [0, 1]
        q, the probability that a row is in the batch.
    event : DPEvent
        The mechanism run on the batch.
    """

    sampling_rate: float
    event: DPEvent
    kind = "poisson_sampled"

    def __post_init__(self):
        object.__setattr__(self, "sampling_rate",
                           _real("sampling_rate", self.sampling_rate, low_open=False, high=1.0))
        if not isinstance(self.event, DPEvent):
            raise ValueError(f"event must be a DPEvent; got {self.event!r}.")


@_register
@dataclasses.dataclass(frozen=True)
class SampledWithoutReplacementEvent(DPEvent):
    """``event`` run on a fixed-size batch of ``sampling_rate`` · n rows drawn without replacement.

    Parameters
    ----------
    sampling_rate : float in [0, 1]
        γ, the batch's share of the rows.
    event : DPEvent
        The mechanism run on the batch.

    Notes
    -----
    Analysed under replace-one and converted to add/remove (the sensitivity
    of the inner event doubles), as in
    :func:`~skdp.accounting.sampled_without_replacement_gaussian_rdp`.
    """

    sampling_rate: float
    event: DPEvent
    kind = "sampled_without_replacement"

    def __post_init__(self):
        object.__setattr__(self, "sampling_rate",
                           _real("sampling_rate", self.sampling_rate, low_open=False, high=1.0))
        if not isinstance(self.event, DPEvent):
            raise ValueError(f"event must be a DPEvent; got {self.event!r}.")


@_register
@dataclasses.dataclass(frozen=True)
class SelfComposedEvent(DPEvent):
    """``count`` independent runs of ``event``.

    Parameters
    ----------
    event : DPEvent
        The mechanism run each time.
    count : int >= 0
        The number of runs.
    """

    event: DPEvent
    count: int
    kind = "self_composed"

    def __post_init__(self):
        if not isinstance(self.event, DPEvent):
            raise ValueError(f"event must be a DPEvent; got {self.event!r}.")
        object.__setattr__(self, "count", _integer("count", self.count, low=0))


@_register
@dataclasses.dataclass(frozen=True)
class ComposedEvent(DPEvent):
    """Independent runs of each event in ``events`` (any mix of mechanisms).

    Parameters
    ----------
    events : iterable of DPEvent
        The events, kept as a tuple.

    Examples
    --------
    >>> from skdp.accounting import ComposedEvent, GaussianEvent, LaplaceEvent
    >>> ComposedEvent([GaussianEvent(1.0), LaplaceEvent(2.0)]).events
    (GaussianEvent(noise_multiplier=1.0), LaplaceEvent(noise_multiplier=2.0))
    """

    events: tuple
    kind = "composed"

    def __post_init__(self):
        events = tuple(self.events)
        for e in events:
            if not isinstance(e, DPEvent):
                raise ValueError(f"every event must be a DPEvent; got {e!r}.")
        object.__setattr__(self, "events", events)


def _flatten(event, count=1):
    """(leaf event, count) pairs of an event tree; counts of equal leaves are added up."""
    out = {}

    def walk(e, c):
        if c == 0:
            return
        if isinstance(e, SelfComposedEvent):
            walk(e.event, c * e.count)
        elif isinstance(e, ComposedEvent):
            for sub in e.events:
                walk(sub, c)
        else:
            out[e] = out.get(e, 0) + c

    walk(event, count)
    return list(out.items())
