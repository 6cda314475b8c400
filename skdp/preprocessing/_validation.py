"""Checks shared by the private transformers of skdp.preprocessing."""

import numbers

import numpy as np

__all__ = [
    "check_bool",
    "check_choice",
    "check_feature_range",
    "check_n_bins",
    "check_quantile_pair",
]


_FLOAT_MAX = np.finfo(np.float64).max


def finite_output(compute):
    """``compute()``, with ±inf from a float overflow replaced by ±the largest float.

    A DP transformer must map finite input to finite output: in a Pipeline
    the next step refuses inf, after this step has charged the budget, so one
    extreme but finite row (1e308 divided by a scale below 1) would otherwise
    decide whether the fit fails (found in a privacy review). NaN
    stays NaN.
    """
    with np.errstate(over="ignore"):
        X = compute()
    return np.clip(X, -_FLOAT_MAX, _FLOAT_MAX)  # a new array: X may be the caller's


def check_quantile_pair(quantile_range, *, name="quantile_range"):
    """``(q_low, q_high)`` with 0 <= q_low < q_high <= 1, or a ``ValueError``."""
    try:
        low, high = quantile_range
        low, high = float(low), float(high)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (low, high); got {quantile_range!r}.") from None
    if not (0.0 <= low < high <= 1.0):
        raise ValueError(f"{name} must satisfy 0 <= low < high <= 1; got {quantile_range!r}.")
    return low, high


def check_feature_range(feature_range):
    """``(min, max)`` with min < max, both finite."""
    try:
        low, high = feature_range
        low, high = float(low), float(high)
    except (TypeError, ValueError):
        raise ValueError(f"feature_range must be a pair (min, max); got {feature_range!r}.") from None
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(
            f"Minimum of desired feature range must be smaller than maximum; got {feature_range!r}."
        )
    return low, high


def check_n_bins(n_bins, n_features, *, minimum=1):
    """Number of bins per feature: an int >= ``minimum``, or one per feature."""
    values = np.asarray(n_bins)
    if values.dtype == bool or not (
        np.issubdtype(values.dtype, np.integer)
        or (np.issubdtype(values.dtype, np.floating) and np.all(values == np.round(values)))
    ):
        raise ValueError(f"n_bins must be an int or ints; got {n_bins!r}.")
    try:
        values = np.broadcast_to(values.astype(int), (n_features,)).copy()
    except ValueError:
        raise ValueError(f"n_bins must be an int or an array of length {n_features}.") from None
    if np.any(values < minimum):
        raise ValueError(f"n_bins must be >= {minimum}; got {n_bins!r}.")
    return values


def check_bool(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool; got {value!r}.")
    return bool(value)


def check_choice(value, choices, name):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}; got {value!r}.")
    return value


def is_integer(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
