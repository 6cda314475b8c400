"""Categorical features with public categories: which columns, their categories, their codes.

The categories of a feature decide which splits a tree can make, so they are
part of the privacy analysis, as the bins of a numeric feature are: they come
from the user (``categories``, one list per categorical feature, as
:class:`~sklearn.preprocessing.OneHotEncoder`'s) or from a pandas
``Categorical`` dtype, whose categories are part of the table's schema. They
are never read from the data's values. A feature with c categories gets the
codes 0, ..., c − 1 in the order given, and the code c for a missing value
(and, at predict, for a category unknown at fit).

Everything here runs before the charge, reading the column's dtypes and
checking that every value is one of the public categories (a value outside
them is bad input, refused before any budget is spent, as ±inf is).

:class:`FeaturesMixin` is what the trees, the forest and the boosting share:
the validation of ``X`` with its categorical features, the codes, and the
bins of every feature.
"""

import math
import numbers

import numpy as np

from ..utils._validation import check_array, validate_data
from ._binning import apply_bins, bin_edges, quantile_edges

__all__ = ["FeaturesMixin", "bin_features", "categorical_mask", "category_codes",
           "check_categories", "encode_categorical", "outside_error"]


class FeaturesMixin:
    """Numeric and categorical features of a tree estimator (``categorical_features``,
    ``categories`` and ``max_bins`` parameters): validation, codes and bins.

    Sets ``is_categorical_`` (None when no feature is categorical) at fit.
    """

    def _validate_fit_data(self, X, y, **kwargs):
        """validate_data, and the categorical features' codes (before the charge).

        Sets ``is_categorical_`` and the public categories; a value outside
        them is refused here. Returns float X (codes for categorical
        features, NaN for a numeric feature's missing values), y.
        """
        mask, from_dtype = categorical_mask(X, self.categorical_features)
        if mask is None:
            if self.categories is not None:
                raise ValueError("categories is given but no feature is categorical: set "
                                 "categorical_features.")
            self.is_categorical_ = None
            self._categories = None
            return validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan",
                                 **kwargs)
        X, y = validate_data(self, _nullable_as_float(X), y, dtype=None,
                             ensure_all_finite=False, **kwargs)
        if mask.size != X.shape[1]:  # pragma: no cover - the mask comes from X's columns
            raise ValueError("categorical_features does not match X's columns.")
        max_bins = self.max_bins
        if not isinstance(max_bins, numbers.Integral) or isinstance(max_bins, (bool, np.bool_)):
            raise TypeError(f"max_bins must be an int; got {max_bins!r}.")
        if not 2 <= max_bins <= 255:
            raise ValueError(f"max_bins must be in [2, 255]; got {max_bins!r}.")
        self._categories = check_categories(mask, from_dtype, self.categories, int(max_bins),
                                            getattr(self, "feature_names_in_", None))
        self.is_categorical_ = mask
        return self._encode(X, unknown="error"), y

    def _validate_predict_data(self, X):
        """Float X as at fit; a category unknown at fit goes with the missing values."""
        if self.is_categorical_ is None:
            return validate_data(self, X, reset=False, dtype=np.float64,
                                 ensure_all_finite="allow-nan")
        X = validate_data(self, _nullable_as_float(X), reset=False, dtype=None,
                          ensure_all_finite=False)
        return self._encode(X, unknown="missing")

    def _encode(self, X, *, unknown):
        """Float matrix: numeric columns checked finite or NaN, categorical ones as codes."""
        mask = self.is_categorical_
        out = np.empty(X.shape, dtype=np.float64)
        names = getattr(self, "feature_names_in_", None)
        if not mask.all():
            numeric = (np.flatnonzero(~mask) if names is None else names[~mask]).tolist()
            out[:, ~mask] = check_array(X[:, ~mask], dtype=np.float64, columns=numeric,
                                        ensure_all_finite="allow-nan", estimator=self)
        for j in np.flatnonzero(mask):
            name = repr(str(names[j])) if names is not None else f"at index {j}"
            out[:, j] = encode_categorical(X[:, j], self._categories[j], unknown=unknown,
                                           feature=name)
        return out

    def _n_categories(self):
        """Categories per feature (0 for numeric ones), or None without categorical features."""
        if self.is_categorical_ is None:
            return None
        return np.array([0 if c is None else len(c) for c in self._categories])

    def _numeric(self, n_features):
        mask = self.is_categorical_
        return np.ones(n_features, dtype=bool) if mask is None else ~mask

    def _binned(self, X):
        """uint8 bins: numeric features by ``bin_edges_``, categorical ones their codes."""
        return bin_features(X, self.bin_edges_, self.is_categorical_)

    def _edges(self, X, bounds, private):
        """Inner bin edges: public or released bounds, else (ε = ∞) the data's quantiles.

        Rows of categorical features are NaN (their bins are their codes).
        """
        numeric = self._numeric(X.shape[1])
        edges = np.full((X.shape[1], self.max_bins - 1), np.nan)
        if not numeric.any():
            return edges
        if bounds is not None:
            edges[numeric] = bin_edges(bounds[0][numeric], bounds[1][numeric], self.max_bins)
        elif private:
            raise AssertionError("private fits with numeric features always have bounds here")
        else:
            edges[numeric] = quantile_edges(X[:, numeric], self.max_bins)
        return edges

    def _full_bounds(self, lower, upper, n_features):
        """Released bounds of the numeric features as arrays over all (NaN: categorical)."""
        numeric = self._numeric(n_features)
        full = np.full((2, n_features), np.nan)
        full[0, numeric], full[1, numeric] = lower, upper
        return full[0], full[1]


def _is_frame(X):
    return hasattr(X, "columns") and hasattr(X, "dtypes")


def _nullable_as_float(X):
    """A pandas DataFrame's nullable numeric and boolean columns as float64, NaN for ``pd.NA``.

    scikit-learn's ``validate_data`` casts a frame that holds a pandas
    extension dtype (``Int64``, ``Float64``, ``boolean``) to float64 as a
    whole, a ``Categorical``'s strings too, and refuses it; these columns
    alone are cast here, from their dtypes, as the boosting on dask rows
    reads a partition's numeric columns
    (:mod:`skdp.ensemble._hist_gradient_boosting._lazy_categorical`).
    """
    if type(X).__module__.split(".")[0] != "pandas" or not _is_frame(X):
        return X
    import pandas as pd

    nullable = {c: np.float64 for c, t in X.dtypes.items()
                if isinstance(t, pd.api.extensions.ExtensionDtype)
                and not isinstance(t, pd.CategoricalDtype)
                and (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))}
    return X.astype(nullable) if nullable else X


def _dtype_categories(dtype):
    """The categories of a pandas Categorical dtype, else None (read from the dtype only)."""
    if getattr(dtype, "name", None) == "category" and hasattr(dtype, "categories"):
        return list(dtype.categories)
    return None


def categorical_mask(X, categorical_features):
    """The boolean mask of the categorical features, and the dtypes' categories (or None).

    ``categorical_features`` as scikit-learn's ``HistGradientBoosting*``:
    None, ``"from_dtype"`` (the pandas Categorical columns of a DataFrame),
    a boolean mask, integer indices, or feature names (DataFrame input).
    Reads the column names and dtypes only. Returns ``(None, None)`` when
    no feature is categorical.
    """
    frame = _is_frame(X)
    n_features = X.shape[1] if hasattr(X, "shape") and len(X.shape) == 2 else None
    from_dtype = [_dtype_categories(t) for t in X.dtypes] if frame else None
    spec = categorical_features
    if spec is None or (isinstance(spec, str) and spec == "from_dtype" and not frame):
        return None, None
    if isinstance(spec, str):
        if spec != "from_dtype":
            raise ValueError('categorical_features must be None, "from_dtype", a boolean '
                             'mask, integer indices or feature names; got '
                             f'{categorical_features!r}.')
        mask = np.array([c is not None for c in from_dtype], dtype=bool)
        return (mask, from_dtype) if mask.any() else (None, None)
    spec = np.asarray(spec)
    if spec.ndim != 1:
        raise ValueError("categorical_features must be a 1-d array-like; got shape "
                         f"{spec.shape}.")
    if n_features is None:  # validate_data refuses it next, before the charge
        return None, None
    if spec.size == 0:
        return None, None
    if spec.dtype.kind == "b":
        if spec.size != n_features:
            raise ValueError(f"categorical_features as a boolean mask has {spec.size} "
                             f"entries; X has {n_features} features.")
        mask = spec.copy()
    elif spec.dtype.kind in "iu":
        if np.any(spec < 0) or np.any(spec >= n_features):
            raise ValueError(f"categorical_features holds an index outside [0, {n_features}); "
                             f"got {spec.tolist()}.")
        mask = np.zeros(n_features, dtype=bool)
        mask[spec] = True
    elif spec.dtype.kind in "UO" and all(isinstance(s, str) for s in spec):
        if not frame:
            raise ValueError("categorical_features given as feature names needs a DataFrame "
                             "with those column names; pass a boolean mask or indices.")
        names = [str(c) for c in X.columns]
        missing = [s for s in spec if s not in names]
        if missing:
            raise ValueError(f"categorical_features names {missing} that are not columns "
                             f"of X.")
        mask = np.isin(names, spec)
    else:
        raise ValueError("categorical_features must hold bools, ints or str; got "
                         f"{spec.dtype}.")
    return (mask, from_dtype) if mask.any() else (None, None)


def check_categories(mask, from_dtype, categories, max_bins, feature_names):
    """The public categories of each categorical feature (a list; None for numeric ones).

    ``categories`` (one list per categorical feature, in column order)
    wins over a pandas dtype's categories. Each list must be non-empty,
    without duplicates or missing values, and at most ``max_bins`` long
    (scikit-learn's rule: a category is a bin).
    """
    n_features = mask.size
    index = np.flatnonzero(mask)

    def name(j):
        return repr(str(feature_names[j])) if feature_names is not None else f"at index {j}"

    if categories is not None:
        if isinstance(categories, str) or len(categories) != index.size:
            raise ValueError(f"categories must be a list of {index.size} lists, one per "
                             f"categorical feature; got {categories!r}.")
    out = [None] * n_features
    for k, j in enumerate(index):
        cats = categories[k] if categories is not None else (
            from_dtype[j] if from_dtype is not None else None)
        if cats is None:
            raise ValueError(
                f"Categorical feature {name(j)} has no public categories: pass them with "
                "categories=[...] (one list per categorical feature) or give the column a "
                "pandas Categorical dtype. They are never read from the data.")
        if isinstance(cats, str) or not hasattr(cats, "__len__"):
            raise ValueError(f"The categories of feature {name(j)} must be a list; got "
                             f"{cats!r}.")
        cats = list(cats)
        if len(cats) == 0:
            raise ValueError(f"Categorical feature {name(j)} has an empty list of categories.")
        if any(_missing(c) for c in cats):
            raise ValueError(f"The categories of feature {name(j)} hold a missing value; a "
                             "missing value is its own category already.")
        if len(set(cats)) != len(cats):
            raise ValueError(f"The categories of feature {name(j)} hold duplicates.")
        if len(cats) > max_bins:
            raise ValueError(f"Categorical feature {name(j)} is expected to have a "
                             f"cardinality <= max_bins={max_bins} but has {len(cats)} "
                             "categories.")
        out[j] = cats
    return out


def _missing(value):
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return math.isnan(value)
    return type(value).__name__ in ("NAType", "NaTType")


def bin_features(X, edges, categorical):
    """uint8 bins of float ``X``: numeric features by ``edges``, categorical ones their codes.

    ``categorical`` is the mask of the categorical features (None: none is),
    whose columns hold the codes 0..c of :func:`encode_categorical`.
    """
    if categorical is None or not categorical.any():
        return apply_bins(X, edges)
    numeric = ~categorical
    binned = np.empty(X.shape, dtype=np.uint8, order="F")
    binned[:, categorical] = X[:, categorical]  # codes 0..c, c <= max_bins <= 255
    if numeric.any():  # never cast: a value out of uint8's range would warn
        binned[:, numeric] = apply_bins(X[:, numeric], edges[numeric])
    return binned


def category_codes(column, categories):
    """Codes 0..c−1 of the public categories, c for a missing value, −1 for any other value.

    Values match categories by Python equality (1 and 1.0 are one category,
    as in scikit-learn). Returns a float array; never raises.
    """
    c = len(categories)
    lookup = {v: k for k, v in enumerate(categories)}
    column = np.asarray(column)
    if column.dtype.kind in "biuf":  # numeric codes: look up each distinct value once
        values, inverse = np.unique(column.astype(np.float64), return_inverse=True)
        table = np.array([lookup.get(v, -1) for v in values.tolist()], dtype=np.float64)
        table[np.isnan(values)] = c  # a category is never NaN (check_categories)
        return table[inverse.reshape(-1)]
    codes = np.array([_get(lookup, v) for v in column], dtype=np.float64)
    for i in np.flatnonzero(codes < 0):
        if _missing(column[i]):
            codes[i] = c
    return codes


def outside_error(feature):
    """The error for values outside a feature's public categories (before the charge)."""
    # Never quote the values (nor count them): they are rows' private values.
    return ValueError(f"Categorical feature {feature} holds values outside its public "
                      "categories. Add them to its categories or make them missing values "
                      "before fitting; nothing was charged.")


def encode_categorical(column, categories, *, unknown, feature):
    """Codes 0..c−1 of the public categories, c for a missing value (float array).

    :func:`category_codes`; ``unknown="error"`` refuses a value outside the
    categories (fit, before the charge); ``unknown="missing"`` gives it the
    code c (predict).
    """
    codes = category_codes(column, categories)
    outside = codes < 0
    if outside.any():
        if unknown == "error":
            raise outside_error(feature)
        codes[outside] = len(categories)
    return codes


def _get(lookup, value):
    try:
        return lookup.get(value, -1)
    except TypeError:  # unhashable: never a category
        return -1
