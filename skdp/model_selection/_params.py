"""What every part of the private search shares: a candidate's parameters, and quiet fits.

A candidate is the search's ``estimator`` with one point of its grid set; its
parameters are nested in its steps (``step__name``). Here: reading, setting
and filling such a parameter wherever it is nested, copying the estimator
with a candidate's parameters, telling an skdp step from a public one, and
:func:`_quiet`, which silences the fits the search makes on its own behalf
(probes, checks and runs).
"""

from __future__ import annotations

import contextlib
import warnings

from sklearn.base import clone

from .._base import DPEstimatorMixin


def _nested_params(estimator, name):
    """``{key: value}`` of every parameter ``name`` of ``estimator``, also nested (``step__name``)."""
    return {k: v for k, v in estimator.get_params(deep=True).items()
            if k == name or k.endswith("__" + name)}


def _set_nested(estimator, name, value_for):
    """Set every parameter ``name`` (also nested ``step__name``) to ``value_for()``."""
    keys = list(_nested_params(estimator, name))
    if keys:
        estimator.set_params(**{k: value_for() for k in keys})
    return keys


def _fill_missing(estimator, name, value):
    """Set every (nested) parameter ``name`` that is None to ``value``; return {key: None}."""
    keys = [k for k, v in _nested_params(estimator, name).items() if v is None]
    if keys:
        estimator.set_params(**{k: value for k in keys})
    return dict.fromkeys(keys)


def _with_params(estimator, params):
    """A copy of ``estimator`` with a candidate's ``params``, each of them a copy too.

    A parameter value may be an estimator (``{"clf": [est_a, est_b]}``): as
    scikit-learn's searches do, every probe, run and refit gets its own clone
    of it. Set as is, the grid's one object was fitted by every run in turn,
    so ``refit=False`` released the last run of that candidate instead of the
    best run, and the probes' curve recorder stayed in the grid (found in a
    review of the audit fixes).
    """
    return clone(estimator).set_params(**{k: clone(v, safe=False) for k, v in params.items()})


def _is_private(estimator):
    """Whether ``estimator`` is an skdp estimator (it charges its own curve)."""
    return isinstance(estimator, DPEstimatorMixin) or hasattr(estimator, "_charge_budget")


@contextlib.contextmanager
def _quiet():
    """Ignore every warning inside (entered by one thread of a process at a time)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
