"""What the private search refuses, or reads, before its charge.

Bad input costs nothing: whatever a run would refuse after the search's
charge, and whose refusal would then depend on a row, is refused here first.
The candidates' steps must each be private or learn nothing from the data
(:func:`_check_private_steps`), and with ``secure=True`` be secure too; the
numeric input must be finite where the first step refuses NaN; the labels
must lie in every public ``classes``; and every step of every candidate
validates the real input as it would in a run, stopped at its charge
(:func:`_check_values`). The label set of ``y``, where a candidate has
``classes=None``, is read here too, once, with a warning (:func:`_label_set`).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone, is_classifier
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor, make_column_selector
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from sklearn.utils import get_tags

from ..exceptions import PrivacyLeakWarning
from ..utils._validation import check_classes, nan_refused
from ._params import _fill_missing, _is_private, _nested_params, _set_nested
from ._probe import _CurveRecorder, _n_samples, _placeholder_X, _ProbeStop, _recorders_stay_here


def _check_private_steps(estimator, where="estimator", after_private=False, sparse_stack=False,
                         owner="search"):
    """Refuse a candidate with a step that learns from the data without privacy.

    Allowed: skdp estimators (they charge their own curve), ``None``,
    ``"passthrough"`` and ``"drop"``, and transformers that learn nothing
    from the data: ``FunctionTransformer`` (without a data-dependent inverse
    check), ``OneHotEncoder`` with explicit ``categories`` lists and no
    infrequent-category grouping (the public-schema preprocessor of
    :mod:`skdp.datasets` is made of these two), and ``Pipeline`` /
    ``ColumnTransformer`` whose parts are all allowed (a ``ColumnTransformer``
    must name its columns, or select them with ``make_column_selector``: any
    other callable may read the data). Anything else (a
    ``StandardScaler``, ``OneHotEncoder(categories="auto")``, ...) would
    release exact statistics of the data in the searched model.

    Also refused: a step that may refuse a value, behind a private step
    (``after_private``): a ``OneHotEncoder`` with ``handle_unknown="error"``,
    or a ``FunctionTransformer`` with a ``func``. Such a step sees the private
    step's output, which exists only after the search's charge, so whether it
    fails cannot be checked before the charge (:func:`_check_values` checks
    every other step on the real input).

    And a sparse ``OneHotEncoder`` that writes no entry for some rows (an
    ignored unknown category, or a dropped one) inside a ``ColumnTransformer``
    with 0 < ``sparse_threshold`` < 1 (``sparse_stack``): the stacked output
    is sparse when its density is below the threshold, so its type would
    depend on how many rows have no entry. The whole input could stack dense
    and a run's training part sparse, which the next step refuses after the
    charge (found in a review of the audit fixes).

    ``owner`` names what charges in the messages ("search", or "pipeline" for
    :class:`~skdp.pipeline.DPPipeline`'s steps behind its first private one).

    Returns whether ``estimator`` holds a private step.
    """
    if estimator is None or (isinstance(estimator, str) and estimator in ("passthrough", "drop")):
        return False
    if _is_private(estimator):
        return True
    if isinstance(estimator, Pipeline):
        private = False
        for name, step in estimator.steps:
            private |= _check_private_steps(step, f"{where} step {name!r}",
                                            after_private or private, sparse_stack, owner)
        return private
    if isinstance(estimator, ColumnTransformer):
        private = False
        sparse_stack = sparse_stack or 0 < estimator.sparse_threshold < 1
        for name, step, columns in estimator.transformers:
            if callable(columns) and not isinstance(columns, make_column_selector):
                raise ValueError(
                    f"{where} transformer {name!r} selects its columns with a callable, which "
                    f"may read the data; the columns it picks are released in the {owner}'s "
                    "model. Pass column names or indices, or make_column_selector (it reads "
                    "only dtypes and names).")
            private |= _check_private_steps(step, f"{where} transformer {name!r}",
                                            after_private, sparse_stack, owner)
        return _check_private_steps(estimator.remainder, f"{where} remainder",
                                    after_private, sparse_stack, owner) or private
    if isinstance(estimator, FunctionTransformer):
        if estimator.check_inverse and estimator.func is not None and (
                estimator.inverse_func is not None):
            raise ValueError(
                f"{where} (FunctionTransformer) has check_inverse=True: its fit compares "
                "func and inverse_func on the data and warns on the result. Pass "
                f"check_inverse=False inside a private {owner}.")
        if after_private and estimator.func is not None:
            raise ValueError(
                f"{where} is a FunctionTransformer behind a private step: its func sees "
                f"that step's output, which exists only after the {owner}'s charge, so an "
                "error it raises on a value could not be found before the charge. Apply "
                "it to the input, before the private steps.")
        return False
    if isinstance(estimator, OneHotEncoder):
        if isinstance(estimator.categories, str):
            raise ValueError(
                f"{where} is OneHotEncoder(categories={estimator.categories!r}): it reads the "
                "categories from the data. Pass the public categories as a list of lists.")
        if estimator.min_frequency is not None or estimator.max_categories is not None:
            raise ValueError(
                f"{where} is a OneHotEncoder with min_frequency or max_categories: it counts "
                "categories in the data without privacy.")
        if after_private and estimator.handle_unknown == "error":
            raise ValueError(
                f"{where} is a OneHotEncoder with handle_unknown='error' behind a private "
                "step: whether that step's output holds an unknown category is known only "
                f"after the {owner}'s charge. Pass handle_unknown='ignore', or encode the "
                "input before the private steps.")
        if sparse_stack and estimator.sparse_output and (
                estimator.handle_unknown != "error" or estimator.drop is not None):
            raise ValueError(
                f"{where} is a sparse OneHotEncoder that writes no entry for an unknown or "
                "dropped category, inside a ColumnTransformer with 0 < sparse_threshold < 1: "
                "whether the stacked output is sparse depends on how many rows have no "
                f"entry, so a fit could fail after the {owner}'s charge. Pass "
                "sparse_output=False to the encoder, or sparse_threshold=0 to the "
                "ColumnTransformer.")
        return False
    raise ValueError(
        f"{where} ({type(estimator).__name__}) learns from the data without privacy: its "
        f"fitted state would be released in the {owner}'s model. Inside a private {owner}, "
        "every step must be an skdp estimator or a transformer that learns nothing from the "
        "data (FunctionTransformer, OneHotEncoder with explicit categories, 'passthrough', "
        "'drop', Pipeline / ColumnTransformer of these).")


def _check_secure_steps(estimator):
    """With ``secure=True``: every step that has ``secure`` has it True, before the charge."""
    insecure = sorted(k for k, v in _nested_params(estimator, "secure").items() if v is not True)
    if insecure:
        raise ValueError(f"secure=True in the search needs secure=True in its estimator too "
                         f"(the runs draw every random number from the OS CSPRNG); got "
                         f"{insecure} not True. Nothing was charged.")


def _accepts_nan(estimator):
    """Whether the step that first sees X accepts NaN (scikit-learn's ``allow_nan`` tag)."""
    if isinstance(estimator, Pipeline):
        first = [s for _, s in estimator.steps if s not in (None, "passthrough")]
        return _accepts_nan(first[0]) if first else False
    if isinstance(estimator, ColumnTransformer):
        return any(_accepts_nan(t) for _, t, _ in estimator.transformers
                   if t not in ("drop", "passthrough"))
    return bool(get_tags(estimator).input_tags.allow_nan)


def _check_finite_input(estimator, X, y):
    """Refuse NaN/inf in the numeric input before the charge (bad input costs nothing).

    Only finiteness is read. NaN is let through when the estimator's first step
    accepts it (``allow_nan`` tag, e.g. :class:`~skdp.impute.DPSimpleImputer`);
    inf never is. Object columns, and NaN reaching a later step, are checked
    by every step itself in :func:`_check_values`.
    """
    allow_nan = _accepts_nan(estimator)
    parts = [("X", X), ("y", y)]
    for name, data in parts:
        if hasattr(data, "select_dtypes"):  # a DataFrame: its numeric columns
            values = data.select_dtypes("number").to_numpy(dtype=float)
        elif hasattr(data, "to_numpy"):  # a Series
            values = data.to_numpy()
        else:
            values = np.asarray(data)
        if values.dtype.kind not in "fiucb":
            continue
        values = values.astype(float, copy=False)
        if name == "X" and not allow_nan and not np.isinf(values).any() and np.isnan(values).any():
            raise nan_refused(estimator)  # points to skdp's estimators that accept NaN
        if np.isinf(values).any() or (np.isnan(values).any() and (name == "y" or not allow_nan)):
            raise ValueError(f"Input {name} contains NaN or infinity; nothing was charged.")


def _check_public_labels(estimator, y):
    """Refuse a label of ``y`` outside a (nested) public ``classes`` before the charge.

    The candidates would refuse it only inside their fits, after the search's
    charge; a standalone estimator refuses it before charging (bad input
    costs nothing). Nothing is checked where ``classes`` is None.
    """
    for classes in _nested_params(estimator, "classes").values():
        if classes is not None:
            check_classes(np.asarray(y), classes, private=False, min_classes=1)


def _label_set(estimators, y):
    """The labels of ``y`` when a candidate classifier has ``classes=None``, else None.

    Read before the charge, once for the whole search (with a
    :class:`~skdp.PrivacyLeakWarning`, as every private classifier warns
    when it reads the labels itself).
    """
    def reads_labels(estimator):
        return is_classifier(estimator) and any(
            v is None for v in _nested_params(estimator, "classes").values())

    if y is None or not any(reads_labels(e) for e in estimators):
        return None
    warnings.warn(
        "classes=None: the search reads the set of labels from y, which reveals which labels "
        "occur in the private data. Pass the public list of labels as classes.",
        PrivacyLeakWarning, stacklevel=3)
    return np.unique(np.asarray(y))


class _ValidateOnly(TransformerMixin, BaseEstimator):
    """A private step's stand-in in :func:`_check_values`: validate, then output placeholders.

    ``fit_transform`` runs ``step``'s own ``fit`` on the real input and stops
    it at its charge (an skdp fit validates the input, then charges, before it
    reads any value), so the step refuses here whatever it would refuse in a
    run. Its output, which exists only after a charge, is replaced by that of
    ``step`` fitted on placeholders, as :func:`_probe` fits it.
    """

    def __init__(self, step=None):
        self.step = step

    def fit(self, X, y=None):
        self.fit_transform(X, y)
        return self

    def fit_transform(self, X, y=None, **params):
        checker, recorder = clone(self.step), _CurveRecorder()
        recorder.stop = True
        _set_nested(checker, "budget", lambda: recorder)
        try:
            checker.fit(X, y)
        except _ProbeStop:
            pass
        self.proxy_ = clone(self.step)
        _set_nested(self.proxy_, "budget", _CurveRecorder)
        out = self.proxy_.fit_transform(_placeholder_X(X, _n_samples(X)), y)
        _set_nested(self.proxy_, "budget", lambda: None)  # recorders never leave the process
        return out

    def transform(self, X):
        return self.proxy_.transform(_placeholder_X(X, _n_samples(X)))

    def get_feature_names_out(self, input_features=None):
        return self.proxy_.get_feature_names_out(input_features)


def _value_checker(estimator, final):
    """A copy of ``estimator`` for :func:`_check_values`.

    Every private step but the ``final`` estimator becomes a
    :class:`_ValidateOnly` (with no budget: it sets its own recorders); the
    final estimator's budget stops its fit at the charge; public steps are
    plain copies (their own ``handle_unknown``, not the probe's).
    """
    if estimator is None or isinstance(estimator, str):
        return estimator
    if isinstance(estimator, Pipeline):
        # a plain Pipeline (a DPPipeline's charge and split are not what is checked here)
        last = len(estimator.steps) - 1
        return Pipeline([(name, _value_checker(step, final and i == last))
                         for i, (name, step) in enumerate(estimator.steps)])
    if isinstance(estimator, ColumnTransformer):
        return clone(estimator).set_params(
            transformers=[(name, _value_checker(step, False), columns)
                          for name, step, columns in estimator.transformers],
            remainder=_value_checker(estimator.remainder, False))
    if isinstance(estimator, FeatureUnion):
        return clone(estimator).set_params(transformer_list=[
            (name, _value_checker(step, False)) for name, step in estimator.transformer_list])
    if isinstance(estimator, TransformedTargetRegressor):
        # it fits a clone of its regressor on the transformed target: that clone stops
        return clone(estimator).set_params(regressor=_value_checker(estimator.regressor, final))
    copy = clone(estimator)
    if not _is_private(estimator) and not _nested_params(estimator, "budget"):
        return copy  # a public step: it fits on the real input
    if not _is_private(estimator):
        # Another composition holding private steps: none of them may charge its own
        # budget here. It validates up to its first private step's charge.
        recorder = _CurveRecorder()
        recorder.stop = True
        _set_nested(copy, "budget", lambda: recorder)
        if final or not hasattr(estimator, "transform"):
            return copy
        return _ValidateOnly(clone(estimator).set_params(
            **dict.fromkeys(_nested_params(estimator, "budget"))))
    if final:
        recorder = _CurveRecorder()
        recorder.stop = True
        _set_nested(copy, "budget", lambda: recorder)
        return copy
    _set_nested(copy, "budget", lambda: None)
    return _ValidateOnly(copy)


def _check_values(candidate, X, y, labels):
    """Let every step of ``candidate`` refuse, before the charge, what it would refuse in a run.

    A run fits the candidate on a part of (X, y) after the search's charge; a
    value that one of its steps refuses (a category outside an encoder's
    public ``categories``, a string where a step converts to float, NaN where
    a step refuses it, a label outside ``classes``) would then fail the run,
    and the failure would depend on a row. So each step validates the real
    input here, where a refusal costs nothing: public steps (which learn
    nothing) fit on it, private steps run their own validation and stop at
    their charge (:class:`_ValidateOnly`), the final estimator stops at its
    charge. Behind a private step the input exists only after a charge:
    steps there that may refuse a value are refused by
    :func:`_check_private_steps`. Every check is row by row, so what passes
    on all rows passes on the training and validation parts.
    """
    checker = _value_checker(candidate, final=True)
    if labels is not None:
        _fill_missing(checker, "classes", labels)
    try:
        with _recorders_stay_here():
            checker.fit(X, y)
    except _ProbeStop:
        pass
    except ValueError as exc:
        # scikit-learn's encoders quote the unknown values: name the column only
        found = re.match(r"Found unknown categories .* in column (\S+) during fit", str(exc))
        if found is None:
            raise
        raise ValueError(f"Found unknown categories in column {found.group(1)} of a public "
                         "step's input: values outside its public categories. Add them to its "
                         "categories or handle them before the search; nothing was "
                         "charged.") from None
