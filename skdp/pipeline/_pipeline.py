"""DPPipeline: one charge for every private step of a pipeline, or none."""

from __future__ import annotations

import inspect
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse import csr_matrix, issparse
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from .. import _config
from .._base import DPEstimatorMixin
from .._cost import _ignore_unknown_categories, _placeholder_target
from .._unsupported import refuse_unsupported
from ..accounting import RDPCurve
from ..budget import PrivacyBudget
from ..model_selection._checks import _check_values
from ..model_selection._params import _nested_params, _quiet
from ..model_selection._probe import _CurveRecorder, _n_samples, _placeholder_X, _probe
from ..model_selection._runs import _sync_fitted_copies

if TYPE_CHECKING:
    from typing import Any

    from joblib import Memory

    from .._typing import ArrayLike, NDArray

__all__ = ["DPPipeline", "make_pipeline"]


class _Prepaid(_CurveRecorder):
    """Stands for the budget while the steps fit: their curves were charged in advance.

    Each step's charge is checked against what the pipeline reserved; a step
    charging more than that (which would mean its curve depended on something
    the reservation did not see) raises instead of spending it.
    """

    def __init__(self, reserved):
        super().__init__()
        self.reserved = reserved

    def charge(self, curve, *, label=None):
        spent, reserved = self.total() + curve, self.reserved
        within = (
            spent.delta <= reserved.delta
            and np.array_equal(spent.orders, reserved.orders)
            and np.all(spent.rdp <= reserved.rdp * (1 + 1e-9) + 1e-15)
        )
        if not within:
            raise RuntimeError(
                "A step of the pipeline charged more than the pipeline reserved for it; "
                "nothing more was charged. Please report this as a bug of skdp."
            )
        self.curves.append(curve)


class DPPipeline(Pipeline):
    """A ``Pipeline`` that charges its budget once for all its private steps, or not at all.

    With scikit-learn's ``Pipeline``, every skdp step charges the shared
    budget when it is fitted: a pipeline whose steps cannot all be afforded
    spends on the first steps and then fails on a later one, leaving nothing
    fitted and the budget spent. ``DPPipeline`` fits in four steps:

    1. every step validates the real input up to its own charge (bad input
       is refused before anything is spent);
    2. the curves of all the private steps that share the budget are found
       from their parameters and the data's shape (as
       :func:`skdp.privacy_cost` finds them); the public steps before the
       first private one must give it as many columns on the real rows as on
       placeholder rows of the same schema (a step that reads its width from
       the values, such as ``OneHotEncoder(categories="auto")``, is refused
       here, before anything is spent);
    3. their composition is charged in **one** transaction, or refused with
       :class:`~skdp.BudgetExceededError` before any step is fitted;
    4. the steps are fitted, each drawing on that reservation.

    All the private steps must share one budget (or have ``budget=None``:
    they then share the default budget of :func:`skdp.config_context` when
    one is in force, and are not charged without it, as in a plain
    ``Pipeline``). Everything else
    is scikit-learn's ``Pipeline``: it clones, pickles and runs inside
    ``GridSearchCV`` and ``cross_val_score``, where each fit is one charge.

    Parameters
    ----------
    steps : list of (str, estimator)
    transform_input, memory, verbose
        As in :class:`sklearn.pipeline.Pipeline`.

    See Also
    --------
    make_pipeline : Build a DPPipeline from its steps, naming them.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetExceededError, PrivacyBudget
    >>> from skdp.naive_bayes import DPGaussianNB
    >>> from skdp.pipeline import make_pipeline
    >>> from skdp.preprocessing import DPStandardScaler
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(2000, 3)); y = (X[:, 0] > 0).astype(int)
    >>> budget = PrivacyBudget(1.0, 1e-5)
    >>> pipe = make_pipeline(DPStandardScaler(bounds=(-3, 3), epsilon=0.5, budget=budget),
    ...                      DPGaussianNB(bounds=(-3, 3), epsilon=1.0, classes=[0, 1],
    ...                                   budget=budget))
    >>> try:
    ...     pipe.fit(X, y)
    ... except BudgetExceededError:
    ...     print("refused as a whole:", len(budget), "charges")
    refused as a whole: 0 charges
    >>> pipe.set_params(dpstandardscaler__epsilon=0.2, dpgaussiannb__epsilon=0.5).fit(X, y)
    DPPipeline(...)
    >>> len(budget)
    1
    """

    def fit(self, X: ArrayLike, y: ArrayLike | None = None, **params) -> DPPipeline:
        """Charge the private steps' curves once, then fit every step.

        Parameters
        ----------
        X : iterable
            Training data, as for :meth:`sklearn.pipeline.Pipeline.fit`.
        y : iterable, default=None
        **params : dict
            Passed on as by :meth:`sklearn.pipeline.Pipeline.fit`.

        Returns
        -------
        self
        """
        keys, budget = self._budget_keys()
        if budget is None:
            return super().fit(X, y, **params)
        # (1) every step refuses here what it would refuse in the fit.
        _check_step_fit_params(self, params)
        with _quiet():
            _check_values(self._as_pipeline(), X, y, labels=None)
        # (2) the curves of the steps that charge this budget, from shapes only.
        curve = self._reserved_curve(X, y, keys, budget)
        # (3) one charge for all of them, or none.
        budget.charge(curve, label=self._label())
        # (4) the steps fit against the reservation, then get their budget back,
        # also the fitted copies a ColumnTransformer keeps in transformers_.
        prepaid = _as_budget(_Prepaid(curve), budget)
        given = {k: v for k, v in self.get_params(deep=True).items() if k in keys}
        self.set_params(**{k: prepaid for k in keys})
        try:
            super().fit(X, y, **params)
        finally:
            self.set_params(**given)
            _sync_fitted_copies(self)
        return self

    def fit_transform(self, X: ArrayLike, y: ArrayLike | None = None, **params) -> Any:
        """Fit as :meth:`fit` does, then transform ``X`` with the fitted steps."""
        return self.fit(X, y, **params).transform(X)

    def fit_predict(self, X: ArrayLike, y: ArrayLike | None = None, **params) -> NDArray:
        """Fit as :meth:`fit` does, then predict ``X`` with the fitted pipeline."""
        return self.fit(X, y, **params).predict(X)

    def _budget_keys(self):
        """The parameter keys holding the budget, and that budget (one for all steps).

        A private step given no ``budget`` holds the default budget of
        :func:`skdp.config_context` when one is in force for it.
        """
        params = self.get_params(deep=True)
        held = {}
        for key, budget in _nested_params(self, "budget").items():
            if budget is None:
                owner = params.get(key.rpartition("__")[0]) if "__" in key else self
                budget = _config._default_budget(owner)
            if budget is not None:
                held[key] = budget
        budgets = {id(b): b for b in held.values()}
        if len(budgets) > 1:
            raise ValueError(
                "The private steps of a DPPipeline must share one PrivacyBudget (or have "
                f"budget=None); these hold {len(budgets)} different ones: {sorted(held)}."
            )
        budget = next(iter(budgets.values()), None)
        if budget is not None and not isinstance(budget, PrivacyBudget):
            raise TypeError(f"budget must be a PrivacyBudget; got {type(budget).__name__}.")
        return list(held), budget

    def _reserved_curve(self, X, y, keys, budget=None):
        model = self._as_pipeline()
        recorder = _as_budget(_CurveRecorder(), budget)
        model.set_params(**{k: recorder for k in keys})
        _ignore_unknown_categories(model)  # the real input's categories were checked in (1)
        n = _n_samples(X)
        y_like = None if y is None else _placeholder_target(model, y, n)
        with _quiet():
            X_like, rest = self._private_input(model, X, y, y_like, n)
            _probe(rest, X_like, y_like, recorder)
        return recorder.total() if recorder.curves else RDPCurve.zero()

    def _private_input(self, model, X, y, y_like, n):
        """The placeholders the first private step gets, and the pipeline from that step on.

        The steps before the first private one learn nothing private (they are
        the user's public preprocessing), and they already ran on the real rows
        in (1). Here they run on the real rows and on placeholders: the private
        steps' curves follow the width of what they get, so a width that
        differs (a step that reads it from the values, such as
        ``OneHotEncoder(categories="auto")``) would change the curve after the
        charge, and is refused before it. A sparse or dense output that differs
        (a ``ColumnTransformer`` stacks by density) only changes the format:
        the placeholders take the real rows' format.
        """
        first = next((i for i, (_, step) in enumerate(model.steps)
                      if hasattr(step, "get_params") and _nested_params(step, "budget")),
                     len(model.steps))
        if first in (0, len(model.steps)):
            return _placeholder_X(X, n), model
        prefix, rest = Pipeline(model.steps[:first]), Pipeline(model.steps[first:])
        real = clone(prefix).fit_transform(X, y)
        like = prefix.fit_transform(_placeholder_X(X, n), y_like)
        width_real, width_like = _width(real), _width(like)
        if width_real != width_like:
            name = model.steps[first][0]
            raise ValueError(
                f"The steps before {name!r} give it another number of columns on these rows "
                f"than on placeholder rows of the same schema ({width_like}): their output width "
                "depends on the values (for example OneHotEncoder(categories='auto') reads "
                "the categories), so the private steps' cost could not be known before the "
                "fit. Give those steps their public schema (OneHotEncoder(categories=[...])); "
                "nothing was charged."
            )
        if issparse(real) and not issparse(like):
            like = csr_matrix(like)
        elif issparse(like) and not issparse(real):
            like = like.toarray()
        return like, rest

    def _as_pipeline(self):
        """An unfitted scikit-learn Pipeline of clones of the steps (it charges step by step)."""
        return Pipeline(clone(self).steps)

    def _label(self):
        names = [type(step).__name__ for _, step in self.steps
                 if step is not None and not isinstance(step, str)]
        text = f"DPPipeline({', '.join(names)})"
        return text if len(text) <= 300 else text[:297] + "..."


def _as_budget(recorder, budget):
    """``recorder`` with the δ and the accountant of ``budget``, which a step may read.

    A private search inside the pipeline calibrates its plan at its budget's
    δ: its reservation and its fit must see the same δ as its charge would.
    """
    if budget is not None:
        recorder.delta = budget.delta
        recorder._accountant = getattr(budget, "accountant", "tightest")
    return recorder


def _width(X):
    shape = getattr(X, "shape", None)
    return shape[1] if shape is not None and len(shape) > 1 else None


def _check_step_fit_params(pipeline, params):
    """Refuse a ``step__name`` fit parameter that the step's fit would refuse after the charge."""
    for key in params:
        step_name, _, name = key.partition("__")
        step = pipeline.named_steps.get(step_name)
        if not name or step is None or isinstance(step, str):
            continue
        if isinstance(step, DPEstimatorMixin):
            refuse_unsupported(type(step), [name])
        accepted = inspect.signature(step.fit).parameters
        if name not in accepted and not any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()
        ):
            raise TypeError(f"{type(step).__name__}.fit() got an unexpected keyword argument "
                            f"{name!r} (passed to the DPPipeline as {key!r}).")


def make_pipeline(*steps, memory: str | Memory | None = None,
                  transform_input: list[str] | None = None, verbose: bool = False) -> DPPipeline:
    """Build a :class:`DPPipeline` from its steps, named after their classes in lower case.

    Parameters
    ----------
    *steps : estimators
    memory, transform_input, verbose
        As in :func:`sklearn.pipeline.make_pipeline`.

    Returns
    -------
    DPPipeline

    Examples
    --------
    >>> from skdp.pipeline import make_pipeline
    >>> from skdp.naive_bayes import DPGaussianNB
    >>> from skdp.preprocessing import DPStandardScaler
    >>> pipe = make_pipeline(DPStandardScaler(bounds=(0, 1)), DPGaussianNB(bounds=(-5, 5)))
    >>> [name for name, _ in pipe.steps]
    ['dpstandardscaler', 'dpgaussiannb']
    """
    names = [type(s).__name__.lower() if not isinstance(s, str) else s for s in steps]
    counts, seen = Counter(names), Counter()
    named = []
    for name, step in zip(names, steps):
        if counts[name] > 1:
            seen[name] += 1
            name = f"{name}-{seen[name]}"
        named.append((name, step))
    return DPPipeline(named, memory=memory, transform_input=transform_input, verbose=verbose)
