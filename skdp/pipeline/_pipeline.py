"""DPPipeline: one charge for every private step of a pipeline, or none."""

from __future__ import annotations

import html
import inspect
import threading
from collections import Counter
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse import csr_matrix, issparse
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from .. import _config
from .._base import DPEstimatorMixin, _DocLinkMixin
from .._cost import _ignore_unknown_categories, _placeholder_target
from .._unsupported import refuse_unsupported
from ..accounting import RDPCurve
from ..budget import PrivacyBudget
from ..model_selection._checks import _check_private_steps, _check_values
from ..model_selection._params import _is_private, _nested_params, _quiet
from ..model_selection._probe import (
    _CurveRecorder,
    _n_samples,
    _placeholder_X,
    _probe,
    _recorders_stay_here,
)
from ..model_selection._runs import _sync_fitted_copies
from ..utils import DEFAULT_DELTA, check_delta, check_epsilon
from ._split import split_epsilon, step_weights, unset_epsilon_keys

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
        self._lock = threading.Lock()

    def charge(self, curve, *, label=None):
        with self._lock:  # steps fitted in parallel threads (a ColumnTransformer's n_jobs)
            self._charge(curve)

    def _charge(self, curve):
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


class DPPipeline(_DocLinkMixin, Pipeline):
    """A ``Pipeline`` that charges its budget once for all its private steps, or not at all.

    The curves of all the private steps are found from their parameters and the
    data's shape, and their composition is charged in one transaction before
    any step is fitted: a refused charge raises
    :class:`~skdp.BudgetExceededError` with nothing spent and nothing fitted.
    Given ``epsilon``, the pipeline splits it among the private steps that
    leave theirs unset. Notes describe the fit and the split.

    Parameters
    ----------
    steps : list of (str, estimator)
    epsilon : float > 0 or None, default=None
        The total ε of the pipeline's private steps, split among those that
        leave their ``epsilon`` unset (at their class's default). ``inf``
        fits those steps without privacy. ``None``: each step spends its own
        ``epsilon``.
    delta : float in [0, 1) or None, default=None
        The δ at which ``epsilon`` is the total. ``None``: the δ of the
        budget the steps charge, else :data:`skdp.utils.DEFAULT_DELTA`.
    budget : PrivacyBudget or None, default=None
        The budget of the private steps that name none.
    transform_input, memory, verbose
        As in :class:`sklearn.pipeline.Pipeline`.

    Attributes
    ----------
    epsilon_split_ : dict
        The ``epsilon`` each step that took a share of the total was fitted
        at, by parameter key (``{"dplogisticregression__epsilon": 0.93, ...}``);
        empty with ``epsilon=None``.

    See Also
    --------
    make_pipeline : Build a DPPipeline from its steps, naming them.

    Notes
    -----
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

    **One total.** Given ``epsilon``, the pipeline splits it among the
    private steps that leave their ``epsilon`` at its default: each gets the
    same weight, the model (the last step) as each step before it (an
    imputer, a scaler, a projection), and one factor scales the weights so
    that the whole pipeline, with the steps that set their own ``epsilon``,
    costs at most ``epsilon`` at the accounting δ (:mod:`skdp.pipeline._split`;
    the rule was chosen on the benchmark suite's tables, see "Pipelines: one
    total" in the benchmarks). The split reads only the data's shape, dtypes
    and column names: :meth:`epsilon_split` and :func:`skdp.privacy_cost` give it before
    the fit, the ledger's label records it, and the fitted pipeline keeps it
    as ``epsilon_split_``. The steps' own parameters are left as they were.

    All the private steps must share one budget (or have ``budget=None``:
    they then share the pipeline's ``budget``, else the default budget of
    :func:`skdp.config_context` when one is in force, and are not charged
    without it, as in a plain ``Pipeline``). Everything else
    is scikit-learn's ``Pipeline``: it clones, pickles and runs inside
    ``GridSearchCV`` and ``cross_val_score``, where each fit is one charge.

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

    One total, split for the steps (a scaler given public bounds weighs 0.35 of the model):

    >>> pipe = make_pipeline(DPStandardScaler(bounds=(-3, 3)),
    ...                      DPGaussianNB(bounds=(-3, 3), classes=[0, 1]),
    ...                      epsilon=0.3, budget=budget)
    >>> split = pipe.epsilon_split(X, y)
    >>> {key: round(eps, 3) for key, eps in split.items()}
    {'dpstandardscaler__epsilon': 0.108, 'dpgaussiannb__epsilon': 0.308}
    >>> round(pipe.fit(X, y).epsilon_split_["dpgaussiannb__epsilon"], 3)
    0.308
    """

    def __init__(self, steps: list[tuple[str, Any]], *, epsilon: float | None = None,
                 delta: float | None = None, budget: PrivacyBudget | None = None,
                 transform_input: list[str] | None = None, memory: str | Memory | None = None,
                 verbose: bool = False) -> None:
        super().__init__(steps, transform_input=transform_input, memory=memory,
                         verbose=verbose)
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget

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
        self._check_total()
        if budget is None:
            self.epsilon_split_ = self._split(X, y, None)
            with _params_set(self, self.epsilon_split_):
                super().fit(X, y, **params)
            return self
        # (1) every step refuses here what it would refuse in the fit.
        _check_step_fit_params(self, params)
        _check_steps_behind_private(self)
        with _quiet():
            _check_values(self._as_pipeline(), X, y, labels=None)
        # (2) the share of the total of each step that leaves its epsilon unset, and the
        # curves of the steps that charge this budget, from shapes only.
        split = self._split(X, y, budget)
        curve = self._reserved_curve(X, y, keys, budget, split)
        # (3) one charge for all of them, or none.
        budget.charge(curve, label=self._label(split))
        self.epsilon_split_ = split
        # (4) the steps fit against the reservation, then get their budget back,
        # also the fitted copies a ColumnTransformer keeps in transformers_.
        prepaid = _as_budget(_Prepaid(curve), budget)
        try:
            with _params_set(self, {**split, **dict.fromkeys(keys, prepaid)}), \
                    _recorders_stay_here():
                super().fit(X, y, **params)
        finally:
            _sync_fitted_copies(self)
            _hand_back_budget(self, prepaid, budget)
        return self

    def epsilon_split(self, X: ArrayLike, y: ArrayLike | None = None) -> dict[str, float]:
        """The ``epsilon`` of each step that takes a share of the total, before the fit.

        Reads only the shape, dtypes and column names of ``X`` (and, for a
        classifier without public ``classes``, the label set of ``y``), as
        :func:`skdp.privacy_cost` does; the fit uses the same split.

        Parameters
        ----------
        X : array-like or DataFrame
            Data shaped like the data to fit.
        y : array-like, default=None

        Returns
        -------
        dict
            ``{parameter key: epsilon}``; empty with ``epsilon=None``.
        """
        self._check_total()
        return self._split(X, y, self._budget_keys()[1])

    def _repr_mimebundle_(self, **kwargs):
        """The notebook view: scikit-learn's, under a line with each step's share of ``epsilon``."""
        output = super()._repr_mimebundle_(**kwargs)
        shares = self._shares()
        if shares and "text/html" in output:
            parts = ", ".join(f"{name} {share:.0%}" for name, share in shares.items())
            caption = (f"<p>epsilon={self.epsilon:g} split by weight: {html.escape(parts)} "
                       "(each step's epsilon: <code>epsilon_split(X, y)</code>)</p>")
            output["text/html"] = caption + output["text/html"]
        return output

    def _shares(self):
        """``{step name: share}`` of the weights of the split (:mod:`._split`), before any data.

        The ε of each step is a little more than its share of the total, since
        the steps compose more tightly than their ε add up: see
        :meth:`epsilon_split`.
        """
        if self.epsilon is None:
            return {}
        weights = step_weights(self, unset_epsilon_keys(self), float(self.epsilon))
        total = sum(weights.values())
        shares = {}
        for key, weight in weights.items():
            step = key.split("__", 1)[0]
            shares[step] = shares.get(step, 0.0) + weight / total
        return shares

    def _check_total(self):
        if self.epsilon is not None:
            check_epsilon(self.epsilon, allow_inf=True)
        if self.delta is not None:
            check_delta(self.delta)

    def _split(self, X, y, budget):
        """``{key: epsilon}`` of the unset steps' shares of ``self.epsilon`` (empty without one)."""
        if self.epsilon is None:
            return {}
        model = self._as_pipeline()
        n = _n_samples(X)
        y_like = None if y is None else _placeholder_target(model, y, n)
        _ignore_unknown_categories(model)
        return self._split_on(model, _placeholder_X(X, n), y_like, budget)

    def _split_on(self, model, X_like, y_like, budget):
        if self.delta is not None:
            delta = float(self.delta)
        elif budget is not None and (budget.delta > 0 or not isinstance(budget, _CurveRecorder)):
            delta = float(budget.delta)
        else:  # no budget, or a probe's recorder that was given no delta
            delta = DEFAULT_DELTA
        accountant = getattr(budget, "accountant", None) or getattr(budget, "_accountant", None)
        return split_epsilon(model, float(self.epsilon), X_like, y_like, delta=delta,
                             accountant=accountant or "tightest")

    def _with_total_split(self, X, y, budget):
        """A clone with ``epsilon=None`` whose unset steps hold their share of the total.

        A private search over the pipeline splits its total once, from the
        shape of ``X``, and scales the steps' ``epsilon`` as for any pipeline.
        """
        split = self._split(X, y, budget)
        return clone(self).set_params(epsilon=None, **split)

    def _split_for_probe(self, X_like, y_like, recorder):
        """The pipeline as a plain ``Pipeline`` whose unset steps hold their share (for probes)."""
        model = self._as_pipeline()  # clones: the probed object keeps its own parameters
        model.set_params(**self._split_on(model, X_like, y_like, recorder))
        return model

    def fit_transform(self, X: ArrayLike, y: ArrayLike | None = None, **params) -> Any:
        """Fit as :meth:`fit` does, then transform ``X`` with the fitted steps."""
        return self.fit(X, y, **params).transform(X)

    def fit_predict(self, X: ArrayLike, y: ArrayLike | None = None, **params) -> NDArray:
        """Fit as :meth:`fit` does, then predict ``X`` with the fitted pipeline."""
        return self.fit(X, y, **params).predict(X)

    def _budget_keys(self):
        """The parameter keys holding the budget, and that budget (one for all steps).

        A private step given no ``budget`` holds the pipeline's ``budget``, else
        the default budget of :func:`skdp.config_context` when one is in force
        for it.
        """
        params = self.get_params(deep=True)
        held = {}
        for key, budget in _nested_params(self, "budget").items():
            if key == "budget":  # the pipeline's own: the default of its steps
                continue
            if budget is None:
                budget = (self.budget if self.budget is not None
                          else _config._default_budget(params.get(key.rpartition("__")[0])))
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

    def _reserved_curve(self, X, y, keys, budget=None, split=None):
        model = self._as_pipeline()
        recorder = _as_budget(_CurveRecorder(), budget)
        model.set_params(**{**(split or {}), **{k: recorder for k in keys}})
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

    def _label(self, split=None):
        names = [type(step).__name__ for _, step in self.steps
                 if step is not None and not isinstance(step, str)]
        text = f"DPPipeline({', '.join(names)})"
        if split:
            shares = ", ".join(f"{key.removesuffix('__epsilon')} {eps:.4g}"
                               for key, eps in split.items())
            text += f" epsilon={self.epsilon:g} split as {shares}"
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


@contextmanager
def _params_set(estimator, params):
    """``estimator`` with ``params`` set inside the block, and its own values back after it.

    The values go back to the objects that held them, also where the fit
    replaced a step by a fitted clone of it (a Pipeline with ``memory``), and
    then to the fitted steps too.
    """
    current = estimator.get_params(deep=True)
    given = {k: v for k, v in current.items() if k in params}
    owners = [(current[key.rpartition("__")[0]], key.rpartition("__")[2], value)
              for key, value in given.items() if "__" in key]
    estimator.set_params(**params)
    try:
        yield estimator
    finally:
        for owner, name, value in owners:
            owner.set_params(**{name: value})
        estimator.set_params(**given)


def _hand_back_budget(estimator, prepaid, budget, seen=None):
    """Give ``budget`` back to every fitted copy still holding the reservation ``prepaid``.

    A step that clones its private estimator in its fit (a meta-estimator
    such as ``OneVsRestClassifier``, whose copies go to ``estimators_``)
    keeps copies whose ``budget`` is the reservation, which never leaves its
    process: the fitted pipeline would not pickle (found in a review).
    :func:`~skdp.model_selection._runs._sync_fitted_copies` knows
    scikit-learn's compositions; this walks every fitted attribute.
    """
    seen = set() if seen is None else seen
    if id(estimator) in seen or isinstance(estimator, (str, bytes, np.ndarray, type)):
        return
    seen.add(id(estimator))
    if isinstance(estimator, dict):
        children = list(estimator.values())
    elif isinstance(estimator, (list, tuple)):
        children = list(estimator)
    elif hasattr(estimator, "get_params"):
        if vars(estimator).get("budget") is prepaid:
            estimator.set_params(budget=budget)
        children = list(vars(estimator).values())
    else:
        return
    for child in children:
        _hand_back_budget(child, prepaid, budget, seen)


def _check_steps_behind_private(pipeline):
    """Refuse, before the charge, a step behind a private one that could fail on its output.

    The steps after the first private step see its output, which exists only
    after the charge: one that learns from it without privacy, or that may
    refuse a value (``OneHotEncoder(handle_unknown="error")``, a
    ``FunctionTransformer``'s ``func``), would fail, or change the private
    steps' cost, after the charge, on a value of a row (found in a review), as
    a private search refuses them (:func:`~skdp.model_selection._checks._check_private_steps`).
    """
    behind = False
    for name, step in pipeline.steps:
        if behind:
            _check_private_steps(step, f"The step {name!r}", after_private=True,
                                 owner="pipeline")
        elif hasattr(step, "get_params") and (_is_private(step) or _nested_params(step, "budget")):
            behind = True


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


def make_pipeline(*steps, epsilon: float | None = None, delta: float | None = None,
                  budget: PrivacyBudget | None = None, memory: str | Memory | None = None,
                  transform_input: list[str] | None = None, verbose: bool = False) -> DPPipeline:
    """Build a :class:`DPPipeline` from its steps, named after their classes in lower case.

    Parameters
    ----------
    *steps : estimators
    epsilon, delta, budget
        The pipeline's total ε (split among the private steps that leave
        theirs unset), the δ it is stated at, and the budget of the steps
        that name none: see :class:`DPPipeline`.
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
    return DPPipeline(named, epsilon=epsilon, delta=delta, budget=budget, memory=memory,
                      transform_input=transform_input, verbose=verbose)
