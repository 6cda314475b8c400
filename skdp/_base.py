"""What every skdp estimator shares: validate, compute the curve, charge, fit.

Every ``fit`` in skdp follows the same four steps (see DESIGN.md):

1. validate the parameters and the input (shapes, dtypes, finiteness only);
2. compute the privacy curve from the hyper-parameters and public sizes alone;
3. charge the budget atomically (:meth:`DPEstimatorMixin._charge_budget`);
4. only then compute anything from the data's values.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import sys
import time
import warnings
from typing import Any, NoReturn, TypeVar

import numpy as np
from sklearn.base import clone

from . import _config
from .accounting import RDPCurve
from .accounting._accountants import spend_of
from ._unsupported import PARTIAL_FIT, refuse_unsupported
from .exceptions import BudgetExceededError, BudgetExhaustedWarning
from .utils import check_budget, check_generator

__all__ = ["DPEstimatorMixin"]

_Estimator = TypeVar("_Estimator", bound="DPEstimatorMixin")

#: Base address of skdp's HTML documentation (the output folder of the Sphinx
#: build, ``docs/_build/html/``, once published). The notebook view's "?" link
#: of an estimator is ``DOCS_URL + "generated/<module>.<Name>.html"``, the API
#: page that ``docs/api.rst`` generates for it. The documentation is not
#: published yet: this is the one place to change when it is (read at each
#: repr, so assigning ``skdp._base.DOCS_URL`` also works at run time).
DOCS_URL = "https://skdp.readthedocs.io/en/latest/"


class _DocLinkMixin:
    """The notebook view's "?" link to the estimator's skdp API page.

    scikit-learn's HTML repr links an estimator to ``_doc_link_template``
    formatted with the class's name and its module up to the first private
    part (``skdp.linear_model``), when the class's top-level package is
    ``_doc_link_module``; for a subclass defined outside skdp it shows no link.
    As in scikit-learn, assigning ``_doc_link_template`` on an instance
    overrides the template for that instance.
    """

    _doc_link_module = "skdp"

    @property
    def _doc_link_template(self):
        default = DOCS_URL.rstrip("/") + "/generated/{estimator_module}.{estimator_name}.html"
        return getattr(self, "__doc_link_template", default)

    @_doc_link_template.setter
    def _doc_link_template(self, value):
        setattr(self, "__doc_link_template", value)


class DPEstimatorMixin(_DocLinkMixin):
    """Mixin for skdp estimators: one place that charges the budget.

    Its estimators' notebook view links to their API page under
    :data:`DOCS_URL` (:class:`_DocLinkMixin`).

    Subclasses have the parameters ``epsilon`` and ``budget`` (and ``delta``
    when their mechanism needs one). After a fit they expose:

    - ``privacy_curve_`` : the :class:`~skdp.accounting.RDPCurve` charged
      (with its event, ``privacy_curve_.event``, when it has one);
    - ``epsilon_spent_``, ``delta_spent_`` : that curve as (ε, δ)-DP at the
      estimator's own δ (0 for pure ε-DP mechanisms), by the budget's
      accountant, or without a budget by the tightest one
      (:func:`skdp.accounting.epsilon_of`: the smaller of RDP and the
      privacy loss distribution of the event), as noise is calibrated.
    """

    def __init_subclass__(cls, **kwargs):
        # A scikit-learn name that skdp refuses on purpose (sample_weight, warm_start,
        # class_weight, ... in skdp/_unsupported.py) gets its reason in privacy terms
        # rather than Python's "unexpected keyword argument". The wrapper keeps the
        # method's signature (inspect follows __wrapped__), so scikit-learn sees none
        # of these names: has_fit_parameter(estimator, "sample_weight") stays False.
        super().__init_subclass__(**kwargs)
        for name in ("__init__", "fit", "fit_transform", "fit_predict"):
            method = vars(cls).get(name)
            if inspect.isfunction(method):
                setattr(cls, name, _refusing_unsupported(method))

    def set_params(self: _Estimator, **params: Any) -> _Estimator:
        """Set the parameters, as :meth:`sklearn.base.BaseEstimator.set_params` does.

        A parameter that skdp refuses on purpose raises ``ValueError`` with the
        reason (scikit-learn's error for a parameter an estimator does not have).
        """
        refuse_unsupported(type(self), params, ValueError)
        return super().set_params(**params)

    @property
    def partial_fit(self) -> NoReturn:
        # hasattr(estimator, "partial_fit") stays False, as scikit-learn's checks expect.
        raise AttributeError(f"{type(self).__name__} has no partial_fit: {PARTIAL_FIT}")

    def __getstate__(self):
        """Pickle without a ``Generator`` or ``RandomState`` passed as ``random_state``.

        Such an object carries its seed entropy or state: from a pickled model
        anyone could rebuild it, replay the noise of the fit, and tell
        neighbouring datasets apart exactly (found in a privacy review). An
        unpickled estimator has ``random_state=None`` instead (a refit draws
        fresh OS entropy). An int seed is kept: it is the user's explicit
        choice of reproducible noise (see "Seeds are secret" in the privacy
        model).
        """
        state = super().__getstate__()
        if isinstance(state.get("random_state"), (np.random.Generator, np.random.RandomState)):
            state = {**state, "random_state": None}
        carried = state.get("_skdp_default_budget")
        if carried is not None and not _config._counts(carried[1]):
            # a default budget captured in a scope that has ended stays behind: a model
            # saved after the ``with`` block does not charge that budget when refitted
            state = {k: v for k, v in state.items() if k != "_skdp_default_budget"}
        return state

    def __sklearn_clone__(self):
        """A clone, as :func:`sklearn.base.clone` makes it, that carries the default budget.

        A clone made where a default budget is in force
        (:func:`skdp.config_context`) carries it, so that a fit of the clone in
        a joblib or dask worker, where scikit-learn's helpers send it, charges
        that budget when it has no ``budget`` of its own (see
        :mod:`skdp._config`). It is no parameter: ``get_params`` does not show it.
        """
        clone_ = super().__sklearn_clone__()
        carried = _config._capture(self)
        if carried is not None and carried[0] is not None:
            clone_._skdp_default_budget = carried
        return clone_

    def _check_generator(self):
        """The fit's random generator, from ``random_state`` and ``secure``.

        ``secure=True`` (where the estimator has that parameter) gives a
        ``SecureGenerator`` (``skdp._secure``) over the OS CSPRNG and
        refuses a non-None ``random_state``; call this before the charge, so a
        refusal costs nothing (see :ref:`secure_randomness`).
        """
        secure = getattr(self, "secure", False)
        if not isinstance(secure, (bool, np.bool_)):
            raise ValueError(f"secure must be a bool; got {secure!r}.")
        return check_generator(getattr(self, "random_state", None), secure=bool(secure))

    def _check_verbose(self):
        """``verbose`` as an int >= 0 (a bool counts as 0 or 1), checked before the charge."""
        verbose = getattr(self, "verbose", 0)
        if not isinstance(verbose, (numbers.Integral, np.bool_)) or verbose < 0:
            raise ValueError(f"verbose must be an int >= 0; got {verbose!r}.")
        return int(verbose)

    def _progress(self, verbose):
        """A function that prints one line of the fit's progress when ``verbose`` (else nothing).

        Each line reads ``[Name] what, 0.123s`` (the time since this call).
        Give it public things only: parameters, what the charge spent, counts
        fixed by the parameters or released, times; never a value computed on
        the rows without noise.
        """
        if not verbose:
            return lambda message: None
        name, start = type(self).__name__, time.perf_counter()

        def say(message):
            print(f"[{name}] {message}, {time.perf_counter() - start:.3f}s", flush=True)

        return say

    def _check_n_jobs(self):
        """``n_jobs`` as None or a nonzero int (joblib's), checked before the charge.

        joblib would refuse a bad value only when the work starts, after the
        charge; a refusal here costs nothing.
        """
        n_jobs = getattr(self, "n_jobs", None)
        if n_jobs is not None and (isinstance(n_jobs, (bool, np.bool_))
                                   or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0):
            raise ValueError(f"n_jobs must be None or a nonzero int; got {n_jobs!r}.")
        return None if n_jobs is None else int(n_jobs)

    def _accounting_delta(self):
        """The δ at which this estimator reports its spend."""
        return float(getattr(self, "delta", 0.0) or 0.0)

    def _budget_label(self):
        """The ledger's label of a fit: the estimator's public hyper-parameters.

        The ledger is shown to anyone who audits the budget, so the label
        leaves out every ``random_state`` (a seed is secret: with it the noise
        of the fit can be replayed, found by an external audit) and every
        ``budget`` (its own repr), nested ones included.
        """
        public = clone(self)
        hidden = {
            key: None
            for key in public.get_params(deep=True)
            if key.rsplit("__", 1)[-1] in ("random_state", "budget")
        }
        text = repr(public.set_params(**hidden))
        text = " ".join(text.split())  # one line in the ledger
        return text if len(text) <= 300 else text[:297] + "..."

    def _budget_in_force(self):
        """``self.budget``, or without one the default budget (:func:`skdp.config_context`), or None."""
        return _config._resolve_budget(getattr(self, "budget", None), self)

    def _charge_budget(self, curve, *, label=None):
        """Charge ``self.budget`` (when set) with ``curve`` and record the spend.

        Without a ``budget``, the default budget in force is charged
        (:func:`skdp.config_context`); without either, nothing is.

        Call it after validation and before reading any value of the data.
        It raises :class:`~skdp.BudgetExceededError` when the budget cannot
        afford the fit, and the ledger's own error when it cannot be charged
        at all (for example ``FileNotFoundError`` when its file is gone); then
        nothing is recorded, and every fitted attribute (``n_features_in_``
        set by ``validate_data``, and those of an earlier fit) is removed, so
        that the estimator is plainly not fitted rather than half-fitted on
        new data.
        """
        if not isinstance(curve, RDPCurve):
            raise TypeError(f"Expected an RDPCurve; got {type(curve).__name__}.")
        budget = check_budget(self._budget_in_force())
        if budget is not None:
            try:
                budget.charge(curve, label=label or self._budget_label())
            except Exception as exc:
                if isinstance(exc, BudgetExceededError):
                    # Inside cross-validation scikit-learn's default error_score=np.nan
                    # turns this error into a NaN score: say plainly what happened.
                    # The error tells the whole story; the warning only points at it,
                    # so a refusal is said once.
                    warnings.warn(
                        f"The privacy budget ran out: {type(self).__name__}.fit was refused "
                        "(BudgetExceededError says why). Inside GridSearchCV, cross_validate "
                        "or cross_val_score this shows up as a NaN score, not as a bad "
                        'candidate; pass error_score="raise" to stop at the first refused fit.',
                        BudgetExhaustedWarning,
                        stacklevel=2,
                    )
                    _say_what_the_pipeline_spent(exc, self, budget)
                for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                    delattr(self, name)
                raise
        delta = self._accounting_delta()
        accountant = getattr(budget, "accountant", "tightest")
        eps, delta_used, _ = spend_of(curve, delta, accountant=accountant)
        self.privacy_curve_ = curve
        self.epsilon_spent_ = eps
        self.delta_spent_ = delta_used
        return curve


def _say_what_the_pipeline_spent(exc, step, budget):
    """Add to ``exc`` what the earlier steps of the scikit-learn Pipeline being fitted spent.

    scikit-learn's ``Pipeline`` fits its steps one by one, and each skdp step
    charges its own curve when it is fitted: a step refused by the budget
    leaves the earlier steps' charges in the ledger. The error names them and
    what they spent together (from their curves: parameters and sizes, no
    value of a row), and points to :func:`skdp.pipeline.make_pipeline`, which
    charges every step at once or none. The Pipeline is the nearest caller
    whose ``self`` is one; the step being fitted is the one of its steps
    that a caller in between is (a ColumnTransformer fits clones of its
    parts). Nothing is added where they cannot be told.
    """
    from sklearn.pipeline import Pipeline

    frame, callers = sys._getframe(1), []
    while frame is not None:
        owner = frame.f_locals.get("self")
        if isinstance(owner, Pipeline) and owner is not step:
            break
        callers.append(owner)
        frame = frame.f_back
    if frame is None or hasattr(owner, "_reserved_curve"):  # none, or a DPPipeline
        return
    current = next((i for i, (_, s) in enumerate(owner.steps)
                    if any(s is c for c in callers)), None)
    if current is None:  # steps cloned (memory=...): which came first is not known here
        return
    spent = []
    for name, earlier in owner.steps[:current]:
        for part in _fitted_parts(earlier):
            if isinstance(part, DPEstimatorMixin) and "privacy_curve_" in vars(part) and \
                    part._budget_in_force() is budget:
                spent.append((name, part))
    if not spent:
        return
    curve = sum((part.privacy_curve_ for _, part in spent), RDPCurve.zero())
    total, _, _ = spend_of(curve, budget.delta, accountant=getattr(budget, "accountant", "tightest"))
    steps = ", ".join(f"{name!r} ({type(part).__name__}, epsilon={part.epsilon_spent_:.4g})"
                      for name, part in spent)
    exc.args = (f"{exc.args[0] if exc.args else ''} The earlier steps of this scikit-learn "
                f"Pipeline were charged before it: {steps}, epsilon={total:.4g} together at "
                f"delta={budget.delta:g}; those charges stay in the ledger. A Pipeline fits "
                "and charges its steps one by one; skdp.pipeline.make_pipeline (DPPipeline) "
                "charges all of them at once, or refuses before any is charged.",
                ) + tuple(exc.args[1:])


def _fitted_parts(estimator):
    """``estimator`` and the estimators fitted inside it (a ColumnTransformer's fitted clones too)."""
    yield estimator
    if hasattr(estimator, "steps"):
        for _, step in estimator.steps:
            yield from _fitted_parts(step)
    for attribute in ("transformers_", "transformer_list"):
        for item in getattr(estimator, attribute, None) or ():
            yield from _fitted_parts(item[1])
    if hasattr(estimator, "regressor_"):
        yield from _fitted_parts(estimator.regressor_)


def _refusing_unsupported(method):
    """``method`` that first refuses the keyword arguments skdp does not take on purpose."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if kwargs:
            refuse_unsupported(type(self), kwargs)
        return method(self, *args, **kwargs)

    return wrapper
