"""Checks shared by every estimator and stats function.

They read only parameters, shapes, dtypes and finiteness: never the data's
values in a way that depends on them beyond "is it finite".
"""

from __future__ import annotations

import datetime
import math
import numbers
import warnings
from typing import TYPE_CHECKING, overload

import numpy as np
from sklearn.utils import check_array as _sklearn_check_array
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data as _sklearn_validate_data

from ..budget import PrivacyBudget
from ..exceptions import PrivacyLeakWarning

if TYPE_CHECKING:
    from .._typing import ArrayLike, FloatArray, RandomStateLike
    from .._secure import SecureGenerator

__all__ = [
    "check_bounds",
    "check_budget",
    "check_classes",
    "check_delta",
    "check_epsilon",
    "check_generator",
    "check_scalar",
    "validate_data",
]


def check_epsilon(epsilon: float, *, name: str = "epsilon", allow_inf: bool = True) -> float:
    """Return ``epsilon`` as a float > 0, or raise ``ValueError``.

    Parameters
    ----------
    epsilon : float
    name : str, default="epsilon"
        The parameter's name in the error message.
    allow_inf : bool, default=True
        Whether ``inf`` (no privacy) is accepted.

    Examples
    --------
    >>> from skdp.utils import check_epsilon
    >>> check_epsilon(0.5)
    0.5
    >>> check_epsilon(0)
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be > 0; got 0.0.
    """
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(epsilon).__name__}.")
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon <= 0:
        raise ValueError(f"{name} must be > 0; got {epsilon!r}.")
    if epsilon == math.inf and not allow_inf:
        raise ValueError(f"{name} must be finite here; got inf.")
    return epsilon


_BOUNDARIES = {"both": ("[", "]"), "left": ("[", ")"), "right": ("(", "]"), "neither": ("(", ")")}


@overload
def check_scalar(x: object, name: str, target_type: type[int], *, min_val: float | None = None,
                 max_val: float | None = None, include_boundaries: str = "both") -> int: ...


@overload
def check_scalar(x: object, name: str, target_type: type[float], *, min_val: float | None = None,
                 max_val: float | None = None, include_boundaries: str = "both") -> float: ...


def check_scalar(x, name, target_type, *, min_val=None, max_val=None, include_boundaries="both"):
    """``x`` as an ``int`` or a finite ``float`` within ``[min_val, max_val]``, or raise.

    The one check of a numeric hyper-parameter, with one wording for every
    estimator. Like :func:`sklearn.utils.check_scalar` (same parameters), but
    booleans are refused (``True`` is no int here), a float must be finite,
    and the value comes back converted. ``target_type`` is ``int`` (any
    integral number) or ``float`` (any real number); ``include_boundaries``
    says which of the given ends belong to the interval (``"both"``,
    ``"left"``, ``"right"`` or ``"neither"``). A value of the wrong type
    raises ``TypeError``, one outside the interval (or not finite)
    ``ValueError``, both with the same sentence.

    Examples
    --------
    >>> from skdp.utils._validation import check_scalar
    >>> check_scalar(255, "max_bins", int, min_val=2, max_val=255)
    255
    >>> check_scalar(1.0, "momentum", float, min_val=0.0, max_val=1.0, include_boundaries="left")
    Traceback (most recent call last):
    ...
    ValueError: momentum must be a finite real number in [0, 1); got 1.0.
    >>> check_scalar(2.5, "max_iter", int, min_val=1)
    Traceback (most recent call last):
    ...
    TypeError: max_iter must be an int >= 1; got 2.5.
    """
    integral = target_type is int
    kind = "an int" if integral else "a finite real number"
    left, right = _BOUNDARIES[include_boundaries]
    if min_val is not None and max_val is not None:
        span = f" in {left}{min_val:g}, {max_val:g}{right}"
    elif min_val is not None:
        span = f" {'>=' if left == '[' else '>'} {min_val:g}"
    elif max_val is not None:
        span = f" {'<=' if right == ']' else '<'} {max_val:g}"
    else:
        span = ""
    number = numbers.Integral if integral else numbers.Real
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, number):
        raise TypeError(f"{name} must be {kind}{span}; got {x!r}.")
    value = int(x) if integral else float(x)
    inside = integral or math.isfinite(value)
    if min_val is not None:
        inside = inside and (value >= min_val if left == "[" else value > min_val)
    if max_val is not None:
        inside = inside and (value <= max_val if right == "]" else value < max_val)
    if not inside:
        raise ValueError(f"{name} must be {kind}{span}; got {value!r}.")
    return value


DEFAULT_DELTA = 1e-5
"""The δ of every skdp estimator that takes one, unless told otherwise.

One convention for the whole package (see "One δ for the package" in the
privacy model): 1e-5, the common choice for tables up to about 100,000 rows.
δ should be well below 1/n; for larger tables pass a smaller ``delta``. With
``delta=0`` every estimator that can gives pure ε-DP.
"""


def check_delta(delta: float, *, name: str = "delta", allow_zero: bool = True) -> float:
    """Return ``delta`` as a float in [0, 1) (or (0, 1)), or raise ``ValueError``.

    Parameters
    ----------
    delta : float
    name : str, default="delta"
        The parameter's name in the error message.
    allow_zero : bool, default=True
        Whether 0 (pure ε-DP) is accepted.
    """
    if isinstance(delta, (bool, np.bool_)) or not isinstance(delta, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(delta).__name__}.")
    delta = float(delta)
    if math.isnan(delta) or not 0.0 <= delta < 1.0 or (delta == 0.0 and not allow_zero):
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise ValueError(f"{name} must be in {interval}; got {delta!r}.")
    return delta


def check_budget(budget: PrivacyBudget | None) -> PrivacyBudget | None:
    """Return ``budget`` if it is ``None`` or a :class:`~skdp.PrivacyBudget`.

    Parameters
    ----------
    budget : PrivacyBudget or None

    Raises
    ------
    TypeError
        For anything else.
    """
    if budget is not None and not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a skdp.PrivacyBudget or None; got {type(budget).__name__}.")
    return budget


# Largest |bound| accepted: its square (1e200) and sums of 10^100 such squares stay
# finite in float64, so no statistic overflows after the budget is charged.
MAX_BOUND = 1e100


def check_bounds(bounds: ArrayLike, n_features: int | None = None, *,
                 name: str = "bounds") -> tuple[FloatArray, FloatArray]:
    """Return public bounds as two float arrays ``(lower, upper)``.

    Parameters
    ----------
    bounds : tuple (lower, upper)
        Each a scalar or an array of shape (n_features,). They must be public:
        chosen without looking at the private data.
    n_features : int, optional
        Broadcast the bounds to this many features.
    name : str, default="bounds"
        The parameter's name in the error messages.

    Raises
    ------
    ValueError
        If ``bounds`` is ``None``, not finite, beyond ±1e100 (their squares
        must not overflow), lower > upper, or lower == upper for every
        feature (a single point: the release would not depend on the data).
        Bounds are never read from the data: that would leak it.

    Examples
    --------
    >>> from skdp.utils import check_bounds
    >>> lo, hi = check_bounds((0, [1, 2]), 2)
    >>> lo.tolist(), hi.tolist()
    ([0.0, 0.0], [1.0, 2.0])
    """
    if bounds is None:
        raise ValueError(
            f"{name} must be given as (lower, upper) public bounds. skdp never reads bounds "
            "from the data, because that would reveal it."
        )
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lower, upper); got {bounds!r}.") from None
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    if n_features is not None:
        try:
            lower = np.broadcast_to(lower, (n_features,)).copy()
            upper = np.broadcast_to(upper, (n_features,)).copy()
        except ValueError:
            raise ValueError(
                f"{name} must be scalars or arrays of length {n_features}; "
                f"got shapes {np.shape(bounds[0])} and {np.shape(bounds[1])}."
            ) from None
    if not (np.isfinite(lower).all() and np.isfinite(upper).all()):
        raise ValueError(f"{name} must be finite; got {bounds!r}.")
    if max(np.abs(lower).max(initial=0.0), np.abs(upper).max(initial=0.0)) > MAX_BOUND:
        raise ValueError(
            f"{name} must lie within ±{MAX_BOUND:g}: the squares and sums of larger values "
            f"overflow float64 (variances, Gram matrices); got {bounds!r}. Rescale the data."
        )
    if (lower > upper).any():
        raise ValueError(f"{name}: every lower bound must be <= its upper bound; got {bounds!r}.")
    if lower.size and (lower == upper).all():
        raise ValueError(
            f"{name} are degenerate: lower == upper for every feature (got {bounds!r}), so every "
            "value would be clipped to one point and the release would say nothing about the "
            "data while spending budget. Give each feature lower < upper (a feature known to be "
            "constant may keep lower == upper when others do not); nothing was charged."
        )
    return lower, upper


# The skdp estimators that accept missing values (NaN) in X: the ``allow_nan`` tag
# (tests/test_input_errors.py checks this list against the tags of every estimator).
NAN_CAPABLE = ("skdp.tree.DPDecisionTreeClassifier", "skdp.ensemble.DPRandomForestClassifier",
               "skdp.ensemble.DPHistGradientBoostingClassifier",
               "skdp.ensemble.DPHistGradientBoostingRegressor", "skdp.impute.DPSimpleImputer")


def validate_data(estimator, X="no_validation", y="no_validation", **kwargs):
    """:func:`sklearn.utils.validation.validate_data`, whose errors never quote a value.

    The same parameters and results. Three of scikit-learn's errors are said
    again in skdp's words: a text value in a numeric input (numpy's
    ``could not convert string to float: 'oops'`` quotes the row's value)
    and complex numbers (scikit-learn prints the whole array) name the
    column instead, and a NaN refused by an estimator names the columns and
    points to skdp's estimators that accept missing values (scikit-learn's
    message recommends its own non-private ones). Every
    estimator calls this first in ``fit``, before the charge: an input
    refused here costs nothing.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.naive_bayes import DPGaussianNB
    >>> X = np.array([[0.5, "oops"], [0.2, 0.1]], dtype=object)
    >>> DPGaussianNB(bounds=(0, 1), classes=[0, 1]).fit(X, [0, 1])
    Traceback (most recent call last):
    ...
    ValueError: Input X must be numeric: column 1 holds values that are not numbers. Encode it first (for example as a categorical feature of skdp's trees and boosting, or one-hot with public categories); nothing was charged.
    """
    try:
        return _sklearn_validate_data(estimator, X, y, **kwargs)
    except (ValueError, TypeError) as exc:
        plain = _plain_input_error(exc, X, estimator)
        if plain is None:
            raise
        raise plain from None


def check_array(array, *, columns=None, estimator=None, **kwargs):
    """:func:`sklearn.utils.check_array` with the errors of :func:`validate_data`.

    ``columns`` names the columns of ``array`` in the error (default: the
    DataFrame's columns, else their indices).
    """
    try:
        return _sklearn_check_array(array, estimator=estimator, **kwargs)
    except (ValueError, TypeError) as exc:
        plain = _plain_input_error(exc, array, estimator, columns)
        if plain is None:
            raise
        raise plain from None


def _times_refused(X, columns=None):
    """The ``ValueError`` for dates or durations in a numeric input (None: there are none).

    numpy refuses to make one float array of dates and numbers with a
    ``DTypePromotionError`` that names dtypes, not columns.
    """
    where = _columns_where(X, columns, _holds_times)
    if not where:
        return None
    verb = "hold" if where.startswith(" in columns") else "holds"
    return ValueError(
        f"Input X must be numeric:{where.replace(' in ', ' ', 1)} {verb} dates or durations. "
        "Encode them first (for example as numbers of days since a public date); nothing was "
        "charged.")


def _holds_times(column):
    column = np.asarray(column)
    if column.dtype.kind in "mM":
        return True
    return column.dtype == object and any(
        isinstance(v, (np.datetime64, np.timedelta64, datetime.date, datetime.timedelta))
        for v in column.ravel())


def _plain_input_error(exc, X, estimator, columns=None):
    """The ``ValueError`` to raise instead of ``exc`` (None: keep ``exc``)."""
    if isinstance(exc, TypeError):  # numpy's DTypePromotionError for dates beside numbers
        return _times_refused(X, columns)
    message = str(exc)
    if message.startswith("Input X contains NaN"):
        return nan_refused(estimator, _columns_where(X, columns, _holds_nan))
    if message.startswith("Complex data not supported"):
        # scikit-learn's message prints the whole array: every row's values
        if _is_complex(X):
            where = _columns_where(X, columns, _has_imaginary)
            return ValueError(f"Complex data not supported: input X holds complex numbers"
                              f"{where}; skdp takes real numbers only. Nothing was charged.")
        return ValueError("Complex data not supported: input y holds complex numbers; skdp "
                          "takes real numbers only. Nothing was charged.")
    if message.startswith(("could not convert", "invalid literal", "complex() arg")):
        # numpy's conversion errors quote the offending value: name its column instead
        where = _columns_where(X, columns, _not_numbers) or " in some column"
        return ValueError(
            f"Input X must be numeric:{where.replace(' in ', ' ', 1)} holds values that are not "
            "numbers. Encode it first (for example as a categorical feature of skdp's trees and "
            "boosting, or one-hot with public categories); nothing was charged."
        )
    return None


def nan_refused(estimator, where=""):
    """The ``ValueError`` for a NaN in X that ``estimator`` does not accept.

    It points to skdp's estimators that accept missing values
    (:data:`NAN_CAPABLE`); ``where`` says in which columns (" in column 'a'").
    """
    name = type(estimator).__name__ if estimator is not None else "This estimator"
    capable = ", ".join(NAN_CAPABLE[:-1])
    return ValueError(
        f"Input X contains NaN (missing values){where}. {name} does not accept missing "
        f"values. skdp's estimators that do: {capable} (missing values have a bin of their "
        f"own), and {NAN_CAPABLE[-1]}, which imputes them privately (first in a "
        f"skdp.pipeline.make_pipeline with {name}). Or drop those rows; nothing was charged."
    )


def _is_complex(values):
    try:
        return bool(np.iscomplexobj(np.asarray(values)) or any(
            isinstance(v, complex) for v in np.asarray(values, dtype=object).ravel()))
    except (TypeError, ValueError):
        return False


def _has_imaginary(column):
    try:
        return bool(np.any(np.imag(np.asarray(column, dtype=complex)) != 0))
    except (TypeError, ValueError):
        return False


def _holds_nan(column):
    try:
        return bool(np.isnan(np.asarray(column, dtype=np.float64)).any())
    except (TypeError, ValueError):
        return False


def _not_numbers(column):
    try:
        np.asarray(column, dtype=np.float64)
    except (TypeError, ValueError):
        return True
    return False


def _columns_where(X, columns, test):
    """" in column 'a'" (or "in columns 'a', 'b'"): the columns of ``X`` where ``test`` holds.

    Names, or indices without them; "" when they cannot be told (a sparse
    matrix, a ragged list). Read only on the way to an error, before any
    charge, one column at a time (a DataFrame's columns keep their dtypes).
    """
    if hasattr(X, "iloc"):  # pandas
        n_columns, column = X.shape[1], lambda j: X.iloc[:, j].to_numpy()
    elif hasattr(X, "to_series") and hasattr(X, "columns"):  # polars
        n_columns, column = X.shape[1], lambda j: X.to_series(j).to_numpy()
    else:
        try:
            arr = np.asarray(X)
        except (TypeError, ValueError):
            return ""
        if arr.ndim != 2:
            return ""
        n_columns, column = arr.shape[1], lambda j: arr[:, j]
    if columns is None:
        columns = getattr(X, "columns", None)
    names = [repr(c) if isinstance(c, str) else str(c) for c in
             (range(n_columns) if columns is None else columns)]
    found = [names[j] for j in range(n_columns) if test(column(j))]
    if not found:
        return ""
    shown = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
    return f" in column{'s' if len(found) > 1 else ''} {shown}"


def check_numeric_target(y):
    """A regression target as a float64 array, or raise ``ValueError`` before any charge.

    ``validate_data(..., y_numeric=True)`` converts only object arrays: a
    target of strings, bytes or dates would pass it and fail inside the fit,
    after the budget was charged. Booleans, integers and floats are accepted
    (object arrays of numbers too); finiteness is checked by ``validate_data``.

    Examples
    --------
    >>> from skdp.utils._validation import check_numeric_target
    >>> check_numeric_target([1, 2.5]).tolist()
    [1.0, 2.5]
    >>> check_numeric_target(["1.5", "2"])
    Traceback (most recent call last):
    ...
    ValueError: y must be numeric (bool, int or float); got dtype <U3.
    """
    if y is None:
        return None  # validate_data raises its own "requires y" error
    arr = np.asarray(y)
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError("y must be numeric; it holds values that are not numbers.") from None
    if arr.dtype.kind == "c":
        return arr  # validate_data refuses complex data with scikit-learn's own message
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"y must be numeric (bool, int or float); got dtype {arr.dtype}.")
    return arr.astype(np.float64, copy=False)


def check_classes(y, classes, *, private=True, min_classes=2):
    """The sorted labels of a classifier, or raise ``ValueError``.

    ``classes`` is the public label set (repeats are dropped, as scikit-learn
    does); ``None`` takes the labels found in ``y`` (as scikit-learn does).
    Every label of ``y`` must be in ``classes``. The set of labels present in
    ``y`` is itself private (a rare label reveals that someone has it), and a
    fitted classifier releases it in ``classes_``: with ``classes=None`` and
    ``private=True`` this emits a :class:`~skdp.PrivacyLeakWarning` that says
    so. Fewer than ``min_classes`` labels raise: 2 for discriminative
    solvers, 1 for models that can describe a single class (naive Bayes).

    Examples
    --------
    >>> from skdp.utils._validation import check_classes
    >>> check_classes([1, 0, 1], classes=[0, 1, 2]).tolist()
    [0, 1, 2]
    >>> check_classes([1, 3], classes=[0, 1])
    Traceback (most recent call last):
    ...
    ValueError: y contains labels not in classes (the public label set).
    """
    check_classification_targets(y)
    if classes is None:
        if private:
            warnings.warn(
                "classes=None: the set of labels is read from y, which reveals which labels "
                "occur in the private data. Pass the public list of labels as classes.",
                PrivacyLeakWarning,
                stacklevel=3,
            )
        classes = np.unique(y)
    else:
        classes = np.unique(np.asarray(classes))
        unknown = np.setdiff1d(np.unique(y), classes)
        if unknown.size:
            # Never echo the labels (nor their number): they are private values of y.
            raise ValueError("y contains labels not in classes (the public label set).")
    if classes.size < min_classes:
        raise ValueError(
            f"This solver needs samples of at least {min_classes} classes; got "
            f"{'one class' if classes.size == 1 else 'none'} (in `classes` when given, "
            "otherwise in y)."
        )
    return classes


def check_generator(random_state: RandomStateLike | SecureGenerator, *,
                    secure: bool = False) -> np.random.Generator | SecureGenerator:
    """A :class:`numpy.random.Generator` from ``random_state``.

    Parameters
    ----------
    random_state : None, int, numpy Generator or RandomState
        ``None`` draws fresh OS entropy; an int seeds a generator for
        reproducible tests; a ``Generator`` is used as is; a legacy
        ``RandomState`` seeds a new generator from one draw.
    secure : bool, default=False
        Draw from the operating system's CSPRNG (see Notes); ``random_state``
        must then be ``None``.

    Returns
    -------
    numpy.random.Generator or SecureGenerator

    Notes
    -----
    With ``secure=True`` the generator is a
    ``SecureGenerator`` (``skdp._secure``): every draw comes from the
    operating system's CSPRNG (:func:`os.urandom`), and ``random_state`` must
    be ``None``: a seed makes the noise reproducible, which is what
    ``secure=True`` excludes (see :ref:`secure_randomness`). An estimator
    calls this before its charge, so a refused seed costs nothing.

    Examples
    --------
    >>> from skdp.utils import check_generator
    >>> float(check_generator(0).random()) == float(check_generator(0).random())
    True
    >>> check_generator(None, secure=True)
    SecureGenerator(os.urandom)
    """
    from .._secure import SecureGenerator

    if secure:
        if random_state is not None and not isinstance(random_state, SecureGenerator):
            raise ValueError(
                "secure=True draws the noise from the operating system's CSPRNG and cannot "
                f"be seeded; got random_state={random_state!r}. Pass random_state=None, or "
                "secure=False for reproducible (seeded) noise."
            )
        return random_state if random_state is not None else SecureGenerator()
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, (np.random.Generator, SecureGenerator)):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError("random_state must be a non-negative int (or None, or a numpy "
                             "Generator); got a negative int.")
        return np.random.default_rng(int(random_state))
    raise ValueError(f"random_state must be None, an int or a numpy Generator; got {random_state!r}.")
