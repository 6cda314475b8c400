"""The privacy cost of an estimator, a pipeline or a private search, before it is fitted."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from . import _config
from .accounting import RDPCurve
from .accounting._accountants import check_accountant, spend_of
from .model_selection._params import _nested_params, _quiet, _set_nested
from .model_selection._probe import (
    _CurveRecorder,
    _n_samples,
    _placeholder_X,
    _placeholder_y,
    _probe,
)
from .model_selection._search import _BaseDPSearch
from .utils import DEFAULT_DELTA, check_delta

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

    from ._typing import ArrayLike

__all__ = ["PrivacyCost", "privacy_cost"]


class PrivacyCost(NamedTuple):
    """What a fit charges: ``(epsilon, delta)`` and the RDP curve they come from.

    Returned by :func:`privacy_cost`.

    Parameters
    ----------
    epsilon : float
        Found by the accountant (by default the tightest: the smaller of RDP
        and the privacy loss distribution of the curve's event).
    delta : float
        The δ asked for, or the curve's own δ (0 for pure ε-DP) when RDP's
        pure bound gives the smaller ε, as in ``epsilon_spent_``.
    curve : RDPCurve
    """

    epsilon: float
    delta: float
    curve: RDPCurve


def privacy_cost(estimator: BaseEstimator, X: ArrayLike, y: ArrayLike | None = None, *,
                 delta: float | None = None, accountant: str | None = None) -> PrivacyCost:
    """The privacy curve that fitting ``estimator`` on data like ``X`` charges, before fitting.

    Works for skdp estimators, private searches, :class:`~skdp.pipeline.DPPipeline`
    and scikit-learn's compositions of them. It fits a clone on placeholders
    shaped like ``X``: no value of ``X`` is read and nothing is charged (of
    ``y``, only the label set, for a classifier without public ``classes``).
    Notes list what is supported and the limits.

    Parameters
    ----------
    estimator : estimator, private search, or a composition of them
        Not fitted, not changed.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Data shaped like the data to fit (only its shape, dtypes and column
        names are read).
    y : array-like of shape (n_samples,), default=None
        The target, when the fit takes one.
    delta : float in [0, 1), default=None
        The δ at which to state the cost. ``None``: the δ of the budget the
        estimator (or a step of it) holds, else the estimator's own ``delta``,
        else :data:`skdp.utils.DEFAULT_DELTA`.
    accountant : {"tightest", "pld", "rdp"}, default=None
        How the curve is converted to ε. ``None``: the accountant of the
        budget the estimator (or a step of it) holds, else ``"tightest"``.

    Returns
    -------
    PrivacyCost
        ``(epsilon, delta, curve)``.

    Notes
    -----
    Works for an skdp estimator, a private search, and their compositions
    with public transformers: ``Pipeline`` (nested too), ``ColumnTransformer``
    (any ``remainder``, sparse outputs such as ``OneHotEncoder()``'s),
    ``FeatureUnion``, ``TransformedTargetRegressor``, a search inside a
    pipeline, and :class:`~skdp.pipeline.DPPipeline`. Every skdp fit
    computes its curve from its parameters and the data's public sizes before
    it reads a value, so the cost is found by fitting a clone on
    *placeholders* with the shape, dtypes and column names of ``X``, each skdp
    step charging a recorder instead of a budget: no value of ``X`` is read,
    and nothing is charged. Of ``y``, only the label set is read, and only for
    a classifier without a public ``classes``. Whether a ``ColumnTransformer``
    stacks its output sparse depends on its density, which placeholders do not
    have: a step that refuses sparse input is given the placeholders' output
    dense, as the real fit gives it (a step's curve depends on the shape of
    its input, not on its format).

    The cost of a search is that of the whole search (its runs, scores and
    refit); the cost of a pipeline is the composition of its skdp steps'
    curves, each step counted whatever its ``budget``. Estimators whose cost
    depends on the number of rows (DP-SGD with ``sampling_rate=None``) need
    ``X`` with as many rows as the fit will have; a search's training part has
    a random size, so its cost can differ from the charge by that much.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from skdp import privacy_cost
    >>> from skdp.naive_bayes import DPGaussianNB
    >>> from skdp.preprocessing import DPStandardScaler
    >>> X, y = np.zeros((1000, 4)), np.zeros(1000)
    >>> pipe = make_pipeline(DPStandardScaler(bounds=(-3, 3), epsilon=0.5),
    ...                      DPGaussianNB(bounds=(-3, 3), epsilon=1.0, classes=[0, 1]))
    >>> cost = privacy_cost(pipe, X, y)
    >>> round(cost.epsilon, 2), cost.delta
    (1.05, 1e-05)

    Composed, the two fits cost less than 0.5 + 1.
    """
    budgets = [b for b in _nested_params(estimator, "budget").values() if b is not None]
    if not budgets and _config._default_budget(estimator) is not None:
        budgets = [_config._default_budget(estimator)]  # skdp.config_context's
    if delta is None:
        own = estimator.get_params(deep=False).get("delta")
        delta = budgets[0].delta if budgets else DEFAULT_DELTA if own is None else own
    delta = check_delta(delta)
    if accountant is None:
        accountant = getattr(budgets[0], "accountant", "tightest") if budgets else "tightest"
    accountant = check_accountant(accountant)
    model = clone(estimator)
    recorder = _CurveRecorder()
    recorder.delta = delta  # what a search given a total epsilon calibrates at
    recorder._accountant = accountant
    if not _set_nested(model, "budget", lambda: recorder):
        raise ValueError(
            f"{type(estimator).__name__} has no `budget` parameter, nor does any step of it: "
            "it is not an skdp estimator and has no privacy cost to compute."
        )
    n = _n_samples(X)
    X_like = _placeholder_X(X, n)
    y_like = None if y is None else _placeholder_target(model, y, n)
    _ignore_unknown_categories(model)
    with _quiet():
        _probe(model, X_like, y_like, recorder)
    curve = recorder.total()
    eps, delta_used, _ = spend_of(curve, delta, accountant=accountant)
    return PrivacyCost(eps, delta_used, curve)


def _ignore_unknown_categories(model):
    """Let every OneHotEncoder of a probe copy ignore unknown categories.

    The placeholders of an object column are missing values, outside any
    public ``categories``: an encoder with ``handle_unknown="error"`` would
    refuse them, though the real rows may all be valid. The probe's output is
    thrown away and its width is that of the public categories either way.
    """
    encoders = [model] + list(model.get_params(deep=True).values())
    for encoder in encoders:
        if isinstance(encoder, OneHotEncoder):
            encoder.set_params(handle_unknown="ignore")


def _placeholder_target(model, y, n):
    """Labels cycling through the public label set for a classifier, zeros otherwise."""
    final = model.estimator if isinstance(model, _BaseDPSearch) else model
    if isinstance(final, Pipeline):
        final = final.steps[-1][1]
    return _placeholder_y(final, y, n) if is_classifier(final) else np.zeros(n)
