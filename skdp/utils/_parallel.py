"""skdp's joblib helpers: scikit-learn's ``Parallel`` and ``delayed`` that also carry skdp's configuration.

:class:`sklearn.utils.parallel.Parallel` captures scikit-learn's
thread-local configuration in the thread that calls it and sets it in the
workers, around each task of :func:`sklearn.utils.parallel.delayed` (the
tasks may be dispatched from joblib's own threads). These do the same for
skdp's (:func:`skdp.config_context`): the default budget reaches the loky,
threading and dask workers of every parallel step that skdp dispatches
itself, where a fit given ``budget=None`` charges it. A
:class:`~skdp.PrivacyBudget` pickles as a handle to its ledger, so a worker
process charges the same ledger.
"""

from __future__ import annotations

import functools

from sklearn.utils.parallel import Parallel as _SklearnParallel
from sklearn.utils.parallel import delayed as _sklearn_delayed

from .. import _config

__all__ = []  # internal

class _NotCaptured:
    """The configuration slot of a task before :class:`Parallel` fills it (one object, also unpickled)."""

    def __reduce__(self):
        return "_NOT_CAPTURED"


_NOT_CAPTURED = _NotCaptured()


def _run_in_config(function, config, *args, **kwargs):
    """Call ``function`` inside ``config`` (skdp's configuration of the dispatching thread)."""
    if config is _NOT_CAPTURED:
        return function(*args, **kwargs)
    with _config.config_context(**config):
        return function(*args, **kwargs)


def delayed(function):
    """:func:`sklearn.utils.parallel.delayed` for :class:`Parallel`: a task that runs in skdp's configuration."""

    @functools.wraps(function)
    def delayed_function(*args, **kwargs):
        return _sklearn_delayed(_run_in_config)(function, _NOT_CAPTURED, *args, **kwargs)

    return delayed_function


class Parallel(_SklearnParallel):
    """:class:`sklearn.utils.parallel.Parallel` that also sets skdp's configuration in the workers.

    The configuration is captured when the call is made, in the calling
    thread (as scikit-learn captures its own), and set around each task made
    by :func:`delayed`. A thread that set no configuration sends none: a
    worker then charges what the estimators carry (see :mod:`skdp._config`).
    """

    def __call__(self, iterable):
        config = _config._dispatch_config()
        if config is None:
            return super().__call__(iterable)
        return super().__call__(
            (function, _with_config(args, config), kwargs) for function, args, kwargs in iterable)


def _with_config(args, config):
    if len(args) >= 2 and args[1] is _NOT_CAPTURED:
        return (args[0], config) + tuple(args[2:])
    return args
