"""A candidate's privacy curve, found by fitting it on placeholder rows.

An skdp fit computes its curve from its parameters and the data's public
sizes, and charges it before it reads any value of the data. So a fit on
*placeholders* (rows of zeros, or missing values, with the shape, dtypes and
column names of the data) whose ``budget`` is a :class:`_CurveRecorder`
records the curve the real fit would charge, and can stop at the charge
(:class:`_ProbeStop`). The private search plans its cost this way, and so
do :func:`skdp.privacy_cost` and :class:`skdp.pipeline.DPPipeline`.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.sparse import issparse
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.utils import get_tags

from ..accounting import DEFAULT_ORDERS, RDPCurve
from ..budget import PrivacyBudget
from ._params import _is_private, _set_nested, _with_params


class _ProbeStop(Exception):
    """Raised by a probing budget at a charge: the fit stops before reading the data."""


class _CurveRecorder(PrivacyBudget):
    """A budget-shaped object that records curves and never touches a ledger.

    Copies and clones return the same recorder (as for a real budget). With
    ``stop=True`` a charge records the curve and raises :class:`_ProbeStop`:
    an skdp fit charges before it reads any value of the data, so it stops
    having read only shapes and dtypes.
    """

    # Plain class attributes shadow PrivacyBudget's properties: there is no ledger.
    epsilon, delta, orders, path = math.inf, 0.0, DEFAULT_ORDERS, None

    def __init__(self):  # no ledger on purpose
        self.curves, self.stop = [], False

    def charge(self, curve, *, label=None):
        self.curves.append(curve)
        if self.stop:
            raise _ProbeStop()

    def can_afford(self, curve):
        return True

    def total(self):
        return sum(self.curves, RDPCurve.zero())

    def __reduce__(self):
        raise TypeError("A curve recorder never leaves its process.")

    def __eq__(self, other):
        return other is self

    __hash__ = object.__hash__

    def __repr__(self):
        return "<skdp internal curve recorder>"


def _n_samples(X):
    if hasattr(X, "shape") and len(X.shape) >= 1:
        return int(X.shape[0])
    if hasattr(X, "__len__"):
        return len(X)
    return int(np.asarray(X).shape[0])  # an array-like with only __array__


def _placeholder_X(X, n):
    """An input with ``X``'s columns and dtypes and ``n`` rows, holding no value of ``X``.

    Numeric columns hold 0, boolean ones False, categorical ones their dtype's
    first category, other DataFrame columns missing values, object arrays 0. Only the shape, the
    dtypes and the column names of ``X`` are read.
    """
    if hasattr(X, "dtypes") and hasattr(X, "columns"):  # a DataFrame
        import pandas as pd

        columns = {}
        for i, (name, dtype) in enumerate(X.dtypes.items()):
            if isinstance(dtype, pd.CategoricalDtype):
                codes = np.zeros(n, dtype=int) if len(dtype.categories) else np.full(n, -1)
                columns[i] = pd.Categorical.from_codes(codes, dtype=dtype)
            elif dtype.kind in "biufc":
                # pandas' nullable Int64, Float64, boolean: zeros of their numpy type
                numeric = getattr(dtype, "numpy_dtype", dtype)
                columns[i] = pd.Series(np.zeros(n, dtype=numeric), dtype=dtype)
            else:
                columns[i] = pd.Series([None] * n, dtype=dtype)
        frame = pd.DataFrame(columns)
        frame.columns = X.columns
        return frame
    shape = getattr(X, "shape", None)
    dtype = getattr(X, "dtype", None)
    if shape is None or dtype is None:  # a list: its shape and dtype as an array
        arr = np.asarray(X)
        shape, dtype = arr.shape, arr.dtype
    shape = (n,) + tuple(shape[1:])
    if np.dtype(dtype).kind in "biufc":
        return np.zeros(shape, dtype=dtype)
    # Object arrays: integer 0s, numeric for numeric steps, an unknown category for encoders.
    return np.zeros(shape, dtype=object)


def _placeholder_y(estimator, y, n):
    """``n`` labels cycling through the public label set.

    The label set is the final estimator's ``classes`` parameter when given,
    otherwise the labels present in ``y`` (what the classifier would itself
    read while validating its input).
    """
    final = estimator.steps[-1][1] if isinstance(estimator, Pipeline) else estimator
    classes = final.get_params(deep=False).get("classes") if hasattr(final, "get_params") else None
    if classes is None:
        classes = np.unique(np.asarray(y))
    return np.resize(np.asarray(classes), n)


class _ProbeCache:
    """What the probes of one search share: placeholders, and the public steps' output on them.

    A search probes its candidates many times (each candidate at each scale
    of its ``epsilon`` tried by the plan). The placeholders of ``n`` rows are
    the same each time, and so is the output of a Pipeline's leading public
    steps (they learn nothing, and carry no ``budget``) when their parameters
    are the same: transforming 32,561 placeholder rows of Adult through its
    one-hot encoders took most of the plan's time. Every output is handed
    out as a copy, so that no step can change what the next probe gets.
    """

    def __init__(self, X_like):
        self.X_like = X_like
        self.start = time.perf_counter()
        self._placeholders = {}
        self._outputs = {}
        self._curves = {}

    def curve_of(self, params, n):
        """The curve of the candidate ``params`` on ``n`` rows, if it was probed: else None."""
        return self._curves.get((n, _signature(params)))

    def keep_curve(self, params, n, curve):
        self._curves[(n, _signature(params))] = curve

    def placeholder_X(self, n):
        if n not in self._placeholders:
            self._placeholders[n] = _placeholder_X(self.X_like, n)
        return _copy(self._placeholders[n])

    def transformed(self, key, step, X, y):
        """``step.fit_transform(X, y)``, or its output for the same key before; and its key."""
        key = (key, _signature(step))
        if key not in self._outputs:
            self._outputs[key] = step.fit_transform(X, y)
        return _copy(self._outputs[key]), key


def _copy(X):
    return X.copy() if hasattr(X, "copy") else X


def _signature(value):
    """A hashable picture of ``value`` (an estimator's class and parameters, recursively).

    Two values with the same signature configure a step alike. Values that it
    cannot picture by content (functions, other objects) are pictured by
    identity: a cache miss at worst, never a wrong hit.
    """
    if hasattr(value, "get_params") and not isinstance(value, type):
        return (type(value), tuple(sorted((k, _signature(v))
                                          for k, v in value.get_params(deep=False).items())))
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_signature(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple(sorted((repr(k), _signature(v)) for k, v in value.items())))
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            return (np.ndarray, tuple(_signature(v) for v in value.ravel()), value.shape)
        return (np.ndarray, value.dtype.str, value.shape, value.tobytes())
    if value is None or isinstance(value, (str, bytes, bool, int, float, complex, np.generic)):
        return (type(value), value)
    return ("id", id(value))


def _is_public_step(step):
    """A step that carries no ``budget`` anywhere: it learns nothing private (checked before)."""
    return hasattr(step, "get_params") and not _is_private(step) and not any(
        k == "budget" or k.endswith("__budget") for k in step.get_params(deep=True))


def _recorders_stay_here():
    """joblib's threading backend for the block: a curve recorder never leaves its process.

    A ``ColumnTransformer`` or ``FeatureUnion`` with ``n_jobs`` fits its
    parts with joblib, by default in worker processes, which would need the
    recorder (or a pipeline's reservation) pickled; in threads of this
    process the parts charge the one recorder, and fit in parallel still.
    """
    from joblib import parallel_config

    return parallel_config(backend="threading")


def _probe(estimator, X, y, recorder, cache=None, key=None):
    """Record the curves that fitting ``estimator`` on (X, y) charges (see :func:`_probe_steps`)."""
    with _recorders_stay_here():
        _probe_steps(estimator, X, y, recorder, cache, key)


def _probe_steps(estimator, X, y, recorder, cache=None, key=None):
    """Record the curves that fitting ``estimator`` on (X, y) charges.

    ``X`` and ``y`` are placeholders (see :func:`_placeholder_X`): a
    candidate's curve depends on its parameters and the public sizes only.
    The leading steps of a Pipeline fit on the placeholders (skdp steps
    record their curve; allowed public steps learn nothing); the last step,
    or a lone skdp estimator, stops at its charge; a ColumnTransformer is
    fitted in full (each skdp part records its curve). With a
    :class:`_ProbeCache` (and ``key`` naming ``X`` in it), the output of
    leading public steps is reused from an earlier probe with the same steps.
    """
    if isinstance(estimator, Pipeline):
        # a DPPipeline given a total epsilon: its steps with their shares of it
        with_split = getattr(estimator, "_split_for_probe", None)
        if with_split is not None and getattr(estimator, "epsilon", None) is not None:
            estimator = with_split(X, y, recorder)
        Xt = X
        steps = [step for _, step in estimator.steps]
        for i, step in enumerate(steps[:-1]):
            if step is None or step == "passthrough":
                continue
            recorder.stop = False
            if cache is not None and key is not None and _is_public_step(step):
                Xt, key = cache.transformed(key, step, Xt, y)
            else:
                key = None  # behind a private step, nothing is reused
                Xt = step.fit_transform(Xt, y)
            Xt = _dense_for(steps[i + 1:], Xt)
        last = estimator.steps[-1][1]
        if last is not None and last != "passthrough":
            _probe_steps(last, Xt, y, recorder, cache, key)
        return
    # An skdp estimator (or a private search) charges once: it stops there. A
    # ColumnTransformer may hold several skdp parts: it is fitted in full.
    recorder.stop = _is_private(estimator)
    try:
        estimator.fit(X, y)
    except _ProbeStop:
        pass
    finally:
        recorder.stop = False


def _dense_for(following, X):
    """``X`` as a dense array if the next step refuses sparse input, else ``X``.

    Whether a ``ColumnTransformer`` stacks its blocks sparse depends on their
    density, and placeholder rows are denser or sparser than real ones (an
    encoder writes no entry for a placeholder category): a probe gets the
    format its next step takes, as a fit that succeeds does. A step's curve
    depends on the shape of its input, not on its format.
    """
    nxt = next((s for s in following if s is not None and not isinstance(s, str)), None)
    if nxt is None or not issparse(X):
        return X
    try:
        accepts = bool(get_tags(nxt).input_tags.sparse)
    except Exception:  # a step without scikit-learn's tags: give it dense rows
        accepts = False
    return X if accepts else X.toarray()


def _train_curve(estimator, params, X_like, y_like, n, cache=None):
    """The curve that fitting a candidate on ``n`` rows like (X, y) charges.

    Probes on placeholders of ``n`` rows: no value of ``X`` or ``y`` is read
    (except the label set of ``y`` when the classifier has no ``classes``).
    A :class:`_ProbeCache` for ``X_like`` shares placeholders and public
    steps' outputs among the probes of one search.
    """
    candidate = _with_params(estimator, params)
    recorder = _CurveRecorder()
    if not _set_nested(candidate, "budget", lambda: recorder):
        raise ValueError(
            "The estimator has no `budget` parameter: it is not an skdp estimator, and a "
            "non-private fit inside a private search would void its guarantee."
        )
    # Outputs of the probe are thrown away: an unknown placeholder category may map to zeros.
    for key, value in candidate.get_params(deep=True).items():
        if isinstance(value, OneHotEncoder):
            value.set_params(handle_unknown="ignore")
    if isinstance(candidate, OneHotEncoder):  # pragma: no cover - never a classifier
        candidate.set_params(handle_unknown="ignore")
    y_like_n = _placeholder_y(candidate, y_like, n)
    if cache is None:
        _probe(candidate, _placeholder_X(X_like, n), y_like_n, recorder)
    else:  # the key names the placeholders (n rows) and the labels' placeholder
        key = ("X", n, _signature(y_like_n))
        _probe(candidate, cache.placeholder_X(n), y_like_n, recorder, cache, key)
    if not recorder.curves:
        raise ValueError(
            f"Fitting the candidate {params!r} charged nothing: every step that learns "
            "from the data must be an skdp estimator."
        )
    return recorder.total()
