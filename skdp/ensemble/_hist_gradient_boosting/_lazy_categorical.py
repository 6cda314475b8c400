"""Categorical features of dask rows: each chunk's codes by the public categories (issue 27).

The in-memory fit turns a categorical feature into codes before the charge
(:mod:`skdp.tree._categorical`): 0, ..., c − 1 for its c public categories,
c for a missing value, and a value outside the categories is refused. On
dask rows each chunk computes the same codes where it lives:

- a column of pandas ``Categorical`` dtype by its integer codes, through a
  table from the partition's dtype categories to the public ones (the
  table made by :func:`~skdp.tree._categorical.category_codes`, so values
  match categories by the same Python equality as in memory);
- any other categorical column by :func:`~skdp.tree._categorical.category_codes`
  itself.

The public categories come from the user (``categories``) or from the dtype
in the DataFrame's metadata; metadata whose categories are unknown is
refused (:func:`public_categories`), since dask's ``.cat.as_known()`` reads
them from the rows.

The codes of the validation pass mark a value outside the public categories
with −1: :func:`skdp.utils._rows.check_lazy_X` finds them in its one pass
and the fit refuses them with the in-memory error, before the charge
(:func:`outside_check`). After the checks :func:`missing_codes` gives such a
value the missing code c, as the in-memory ``predict`` does: a total map, so
a graph whose values change after the checks never makes a pass raise.
"""

import numpy as np

from ...tree._categorical import category_codes, check_categories, outside_error
from ...utils._rows import check_frame_dtypes
from ...utils._validation import check_scalar

__all__ = ["chunk_codes", "missing_codes", "outside_check", "public_categories"]


def _names(X):
    columns = getattr(X, "columns", None)
    if columns is not None and all(isinstance(c, str) for c in columns):
        return np.asarray(list(columns), dtype=object)
    return None


def _label(names, j):
    return repr(str(names[j])) if names is not None else f"at index {j}"


def public_categories(X, mask, from_dtype, categories, max_bins):
    """The public categories of a dask ``X``'s categorical features, from metadata only.

    As the in-memory :func:`~skdp.tree._categorical.check_categories`, after
    refusing a DataFrame column whose dtype's categories would be used but
    are unknown (``cat.known`` is False), and the non-numeric columns that
    are not categorical.
    """
    check_scalar(max_bins, "max_bins", int, min_val=2, max_val=255)
    names = _names(X)
    columns = getattr(X, "columns", None)
    if columns is None:
        if X.dtype.kind not in "biuf":
            raise ValueError(f"Input X must be numeric: a dask array of dtype {X.dtype} holds "
                             "values that are not numbers. Give categories that are not "
                             "numbers as a dask DataFrame column (a pandas Categorical dtype "
                             "or categories=[...]); nothing was charged.")
        return check_categories(mask, None, categories, int(max_bins), names)
    check_frame_dtypes(X, [c for c, m in zip(columns, mask) if not m])
    if categories is None:
        for j in np.flatnonzero(mask):
            column = X[columns[j]]
            if from_dtype[j] is not None and not column.cat.known:
                raise ValueError(
                    f"Categorical feature {_label(names, j)} has unknown categories in the "
                    "dask DataFrame's metadata (as after astype('category')). Dask's "
                    ".cat.as_known() would read them from the rows, which leaks them: give "
                    "the public categories yourself, from the table's schema, with "
                    "X.astype({column: pd.CategoricalDtype(categories)}) or "
                    "categories=[...] (one list per categorical feature). Nothing was "
                    "charged.")
    return check_categories(mask, from_dtype, categories, int(max_bins), names)


def _frame_codes(frame, mask, categories):
    """Float rows of a pandas partition: categorical columns as codes (−1: outside)."""
    # column by column into a Fortran-ordered array, which the DataFrame wraps without a copy
    out = np.empty(frame.shape, dtype=np.float64, order="F")
    for j in range(frame.shape[1]):
        values = frame.iloc[:, j]
        if not mask[j]:
            out[:, j] = values.to_numpy(dtype=np.float64, na_value=np.nan)
        elif getattr(values.dtype, "name", None) == "category":  # a table from the
            # partition's own dtype categories to the public codes
            dtype_categories = np.empty(len(values.cat.categories), dtype=object)
            dtype_categories[:] = list(values.cat.categories)
            table = np.append(category_codes(dtype_categories, categories[j]),
                              len(categories[j]))  # code −1 of the dtype (missing): c
            out[:, j] = table[values.cat.codes.to_numpy()]
        else:
            out[:, j] = category_codes(values.to_numpy(), categories[j])
    import pandas as pd

    return pd.DataFrame(out, columns=frame.columns, index=frame.index, copy=False)


def _block_codes(block, mask, categories):
    """A float copy of a block of rows, its categorical columns as codes (−1: outside)."""
    out = block.astype(np.float64)
    for j in np.flatnonzero(mask):
        out[:, j] = category_codes(block[:, j], categories[j])
    return out


def chunk_codes(X, mask, categories):
    """``X`` (dask) as float rows whose categorical columns hold each chunk's codes.

    A value outside the public categories has the code −1 (refused by
    :func:`outside_check`, then :func:`missing_codes`). A DataFrame stays
    a DataFrame of the same columns (its names are checked as before).
    """
    if hasattr(X, "columns"):
        import pandas as pd

        meta = pd.DataFrame(np.empty((0, len(X.columns))), columns=X.columns)
        return X.map_partitions(_frame_codes, mask, categories, meta=meta)
    if X.ndim != 2:  # pragma: no cover - categorical_mask found no mask for it
        return X
    return X.rechunk({1: -1}).map_blocks(_block_codes, mask, categories, dtype=np.float64)


def outside_check(estimator, mask):
    """check_lazy_X's ``also``: refuse the codes −1 with the in-memory error."""

    def also(X):
        def refuse(found):
            if found.any():
                j = np.flatnonzero(mask)[np.flatnonzero(found)[0]]
                raise outside_error(_label(getattr(estimator, "feature_names_in_", None), j))

        return (X[:, mask] < 0).any(axis=0), refuse

    return also


def _missing_code(block, index, n_categories):
    outside = block[:, index] < 0
    if not outside.any():
        return block
    block = block.copy()
    block[:, index] = np.where(outside, n_categories, block[:, index])
    return block


def missing_codes(X, mask, categories):
    """The checked dask ``X`` with a code −1 (outside the categories) as the missing code c."""
    index = np.flatnonzero(mask)
    n_categories = np.array([len(categories[j]) for j in index], dtype=np.float64)
    return X.map_blocks(_missing_code, index, n_categories, dtype=np.float64)
