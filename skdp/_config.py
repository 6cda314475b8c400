"""The scoped default budget: ``config_context``, ``set_config``, ``get_config``.

As :func:`sklearn.config_context`, the configuration is **thread-local**: each
thread starts with the global defaults (no default budget) and
:func:`config_context` restores, on exit, what was in force before it.
Nothing accumulates in a module-level global: a default budget is in force
only in the thread (and the scope) where it was set.

A fit that runs elsewhere on that thread's behalf charges it too:

- skdp's own parallel work (:mod:`skdp.utils._parallel`, as scikit-learn's
  ``sklearn.utils.parallel``) captures the configuration when it is
  dispatched and sets it in the joblib (loky, threading, dask) worker;
- an skdp estimator cloned in a thread where a default budget is in force
  carries it (a :class:`~skdp.PrivacyBudget` pickles as a handle to its
  ledger), so that scikit-learn's own parallel helpers
  (``cross_val_score(n_jobs=2)``, ``GridSearchCV(n_jobs=2)``), which clone
  the estimator for each fit and send the clone to a worker, charge it in
  the worker. A clone that their dispatch makes in joblib's own threads
  (not the caller's) finds the default of the thread that cloned the same
  estimator last, while that thread's scope is in force. The carried
  default counts only while the scope it was captured in is in force (or
  in another process, a worker's copy); once the ``with`` block is left, a
  later fit in this process charges what is configured then.

This module imports only :mod:`skdp.budget`, so ``import skdp`` stays light.
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .budget import PrivacyBudget

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["config_context", "get_config", "set_config"]

_DEFAULTS: dict[str, Any] = {"budget": None}


class _Unset:
    """The default of ``set_config`` and ``config_context``: leave the setting as it is."""

    def __repr__(self):
        return "<unchanged>"


_UNCHANGED: Any = _Unset()

_local = threading.local()


class _Scope:
    """One setting of a thread's configuration, in force while it is that thread's current one.

    Unpickled in the process that made it (dask copies a task's arguments
    through pickle before sending them), it is the same object; in another
    process, a copy that keeps the configuration and the process it came from.
    """

    __slots__ = ("__weakref__", "config", "in_force", "key", "pid")

    def __init__(self, config, pid=None, key=None):
        self.config = dict(config)
        self.pid = os.getpid() if pid is None else pid
        self.key = next(_scope_keys) if key is None else key
        self.in_force = False
        if pid is None:
            _live_scopes[self.key] = self

    def __reduce__(self):
        return (_restore_scope, (self.config, self.pid, self.key))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


_scope_keys = itertools.count()
_live_scopes: weakref.WeakValueDictionary[int, _Scope] = weakref.WeakValueDictionary()


def _restore_scope(config, pid, key):
    """The scope a pickle names: itself in the process that made it (if it is alive), else a copy."""
    if pid == os.getpid():
        live = _live_scopes.get(key)
        if live is not None:
            return live
    return _Scope(config, pid, key)


def _current():
    """The scope in force in this thread, or None where the thread never set one."""
    return getattr(_local, "scope", None)


def _enter(scope):
    """Make ``scope`` (or None: the global defaults) this thread's current one; return the former."""
    former = _current()
    if former is not None:
        former.in_force = False
    if scope is not None:
        scope.in_force = True
    _local.scope = scope
    return former


def get_config() -> dict[str, Any]:
    """The skdp configuration in force in this thread.

    Returns
    -------
    dict
        ``{"budget": PrivacyBudget or None}``: the default budget that every
        fit, search, :mod:`skdp.stats` function and :mod:`skdp.analysis`
        query without an explicit ``budget`` charges (None: no default).

    See Also
    --------
    config_context : Set a default budget for the ``with`` block.
    set_config : Set a default budget in this thread.

    Examples
    --------
    >>> import skdp
    >>> skdp.get_config()
    {'budget': None}
    """
    scope = _current()
    return dict(_DEFAULTS if scope is None else scope.config)


def set_config(*, budget: PrivacyBudget | None = _UNCHANGED) -> None:
    """Set skdp's configuration in this thread (as :func:`sklearn.set_config`).

    Prefer :func:`config_context`, which restores the former configuration
    when its block ends. A setting made here lasts until the thread sets
    another (or a :func:`config_context` around it ends); other threads do
    not see it.

    Parameters
    ----------
    budget : PrivacyBudget or None, optional
        The default budget: every fit, search, :mod:`skdp.stats` function and
        :mod:`skdp.analysis` query given no ``budget`` (``budget=None``)
        charges it. ``None`` sets no default budget (unlike scikit-learn's
        ``set_config``, where None leaves a setting unchanged); leave it out
        to keep the current one.

    Returns
    -------
    None

    See Also
    --------
    config_context, get_config

    Examples
    --------
    >>> import skdp
    >>> budget = skdp.PrivacyBudget(1.0, 1e-5)
    >>> skdp.set_config(budget=budget)
    >>> skdp.get_config()["budget"] is budget
    True
    >>> skdp.set_config(budget=None)
    >>> skdp.get_config()
    {'budget': None}
    """
    config = get_config()
    if budget is not _UNCHANGED:
        config["budget"] = _check_budget(budget)
    _enter(_Scope(config))


@contextmanager
def config_context(*, budget: PrivacyBudget | None = _UNCHANGED) -> Iterator[None]:
    """Set a default budget for a ``with`` block (as :func:`sklearn.config_context`).

    Inside the block, in this thread, every skdp fit, private search,
    :mod:`skdp.stats` function and :mod:`skdp.analysis` query without an
    explicit ``budget`` charges ``budget``; an explicit ``budget=`` wins. A
    fit run on the block's behalf in a joblib or dask worker charges it
    too: skdp's own parallel work carries the configuration to its workers,
    and an skdp estimator cloned in the block (as
    ``cross_val_score(n_jobs=2)`` and ``GridSearchCV(n_jobs=2)`` clone it for
    each fit) carries the budget, which pickles as a handle to its ledger.
    On exit the former configuration is in force again. Other threads keep
    their own.

    Parameters
    ----------
    budget : PrivacyBudget or None, optional
        The default budget in the block. ``None``: no default budget in the
        block (unlike scikit-learn's ``config_context``, where None leaves a
        setting unchanged); leave it out to keep the current one.

    Yields
    ------
    None

    See Also
    --------
    set_config, get_config

    Examples
    --------
    >>> import skdp
    >>> budget = skdp.PrivacyBudget(1.0, 1e-5)
    >>> with skdp.config_context(budget=budget):
    ...     skdp.get_config()["budget"] is budget
    True
    >>> skdp.get_config()["budget"] is None
    True

    In the block, ``DPLogisticRegression().fit(X, y)`` or
    ``skdp.stats.mean(x, bounds=(0, 1))`` charges ``budget``; see
    :ref:`default_budget`.
    """
    former = _current()
    config = get_config()
    if budget is not _UNCHANGED:
        config["budget"] = _check_budget(budget)
    _enter(_Scope(config))
    try:
        yield
    finally:
        _enter(former)


def _check_budget(budget):
    if budget is not None and not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a skdp.PrivacyBudget or None; got {type(budget).__name__}.")
    return budget


# -- the default a fit charges ------------------------------------------------------------

# The last default that a thread with a configuration of its own was in when it cloned an
# estimator: {id(estimator): (weak reference, budget, scope)}. A clone of the same
# estimator made then in a thread without one (joblib dispatches from its own threads)
# takes it, while that scope is in force.
_cloned_in: dict[int, tuple[Any, Any, _Scope]] = {}
_cloned_lock = threading.Lock()


def _capture(source):
    """The default budget that a clone of ``source`` made now carries: ``(budget, scope)`` or None.

    The configuration of this thread, if it set one; else the default that
    ``source`` carries itself (a clone of a clone); else the one of the
    thread that last cloned ``source`` within its scope. Called by
    :meth:`skdp._base.DPEstimatorMixin.__sklearn_clone__`.
    """
    scope = _current()
    if scope is not None:
        with _cloned_lock:
            _forget_dead()
            try:
                _cloned_in[id(source)] = (weakref.ref(source), scope.config["budget"], scope)
            except TypeError:  # an object without weak references: not remembered
                pass
        return scope.config["budget"], scope
    carried = getattr(source, "_skdp_default_budget", None)
    if carried is not None and _counts(carried[1]):
        return carried
    with _cloned_lock:
        entry = _cloned_in.get(id(source))
    if entry is not None and entry[0]() is source and entry[2].in_force:
        return entry[1], entry[2]
    return None


def _forget_dead():
    for key in [k for k, (ref, _, scope) in _cloned_in.items()
                if ref() is None or not scope.in_force]:
        del _cloned_in[key]


def _counts(scope):
    """Whether a default captured in ``scope`` still counts here: in force, or from another process."""
    return scope.pid != os.getpid() or scope.in_force


def _default_budget(owner=None):
    """The budget that a call given ``budget=None`` charges, or None.

    The default budget in force in this thread; in a thread that set no
    configuration, the one that ``owner`` (an estimator) carries from the
    thread that cloned it (:func:`_capture`), while it counts.
    """
    scope = _current()
    if scope is not None:
        return scope.config["budget"]
    carried = getattr(owner, "_skdp_default_budget", None) if owner is not None else None
    if carried is not None and _counts(carried[1]):
        return carried[0]
    return None


def _resolve_budget(budget, owner=None):
    """``budget`` if given, else the default budget (:func:`_default_budget`), or None."""
    return budget if budget is not None else _default_budget(owner)


def _dispatch_config():
    """The configuration to set in a worker for this thread, or None where the thread set none."""
    scope = _current()
    return None if scope is None else dict(scope.config)
