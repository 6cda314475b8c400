"""Passes of sums over rows, for in-memory arrays and dask collections alike.

Most fits are a few passes of sums over rows: a function of a block of rows
returns partial sums (counts, clipped sums, a Gram matrix, histogram counts),
and the fit adds them up, then adds noise once. :func:`row_sums` runs such a
function over in-memory arrays (one block: the function on the whole array)
or over dask arrays (one block per chunk of rows, computed where the chunk
lives, the partial sums added by a tree reduction on the workers); only the
sums come back to the client. An estimator writes its pass once, and both
paths run the same code on the same rows, so for the same seed the dask fit
equals the in-memory fit to floating-point round-off (the sums are added in
another order). dask is imported only when a dask collection is given.

Validation (:func:`check_lazy_X`) reads what the
in-memory fit's ``validate_data`` reads, before the charge:

- metadata: dimensions, dtypes, column names, chunk sizes (the number of
  rows, which the in-memory fit reads as ``X.shape[0]`` and never releases);
  a DataFrame's partition lengths and unknown chunk sizes are computed,
  which reads lengths only;
- one pass that checks finiteness per column (and, for a classifier, the
  set of labels of ``y``; for the boosting, the categorical features'
  values against their public categories), because the in-memory fit
  refuses NaN, infinity and those values before the charge. It raises the
  same errors as in memory (they name the column, never a value) and
  otherwise keeps nothing: no value it reads reaches anything released.

Why no error after the charge depends on a row (issue 27, point 2). After
the charge, every pass applies to each row a total map that cannot raise:
values are made finite (:func:`finite_block`), then clipped by the
estimator's block function, exactly as in memory. The finiteness pass has
already refused non-finite input, so on a dask graph that gives the same
values each time it is computed the map is the identity and the fit equals
the in-memory one. A graph that does not (a file rewritten between passes,
an unseeded random source) may bring a NaN or an infinity into a later
pass; then that value is taken as 0 (NaN) or as the largest float (±inf)
before clipping: the row is still a row inside the bounds, so the
sensitivity, the noise and the released values are those the charge paid
for, and nothing raised or warned depends on it. What can still stop a pass
after the charge is the cluster itself (a lost worker, memory), which says
nothing about the values of the rows; the charge then stays, as for any
fit interrupted after its charge.
"""

from __future__ import annotations

import functools
import sys

import numpy as np

__all__ = ["bounded_block", "check_frame_dtypes", "check_lazy_X", "finite_block", "is_lazy",
           "label_index", "lazy_rows", "refuse_lazy", "row_sums", "tree_sum"]

_FLOAT_MAX = np.finfo(np.float64).max


def is_lazy(X):
    """Whether ``X`` is a dask collection (checked by its type's module: dask is not imported)."""
    module = type(X).__module__.split(".")[0]
    return module in ("dask", "dask_expr") and "dask" in sys.modules


def refuse_lazy(what):
    """The ``ValueError`` for an option that dask input does not support yet (before the charge)."""
    return ValueError(f"{what} is not available on dask input yet; use an in-memory array "
                      "or leave it unset. Nothing was charged.")


def _add(a, b):
    """Partial sums added up: arrays and numbers summed, tuples entry by entry."""
    if isinstance(a, tuple):
        return tuple(_add(u, v) for u, v in zip(a, b))
    return a + b


def tree_sum(partials, add=_add):
    """The delayed sum of delayed ``partials``, added in pairs (a tree of depth log2 of their number)."""
    import dask

    while len(partials) > 1:
        partials = [dask.delayed(add)(partials[i], partials[i + 1])
                    if i + 1 < len(partials) else partials[i]
                    for i in range(0, len(partials), 2)]
    return partials[0]


def _row_blocks(a, optimize_graph=True):
    """The delayed row blocks of a dask array of one chunk along every axis but the rows."""
    blocks = a.to_delayed(optimize_graph=optimize_graph)
    return list(blocks.reshape(blocks.shape[0], -1)[:, 0])


def _share_tasks(arrays):
    """Whether the graphs of several dask arrays hold common tasks (X and y of one source).

    Optimized array by array, such tasks (rows drawn once, a partition that
    holds both X's and y's columns) are fused into each array's blocks and
    computed once per array in every pass; :func:`row_sums` then takes the
    graphs unoptimized, where each runs once. Graphs that share nothing (the
    columns of a Parquet file read apart) keep their fusion, whose fewer
    tasks were faster there (docs/benchmarks.md, "Data larger than memory").
    """
    if len(arrays) < 2:
        return False
    seen = set()
    for a in arrays:
        keys = set(a.__dask_graph__().keys())
        if seen & keys:
            return True
        seen |= keys
    return False


def row_sums(func, *arrays):
    """``func(*blocks)`` summed over the blocks of rows of ``arrays``.

    In memory ``func`` runs once, on the whole arrays. On dask arrays (as
    :func:`check_lazy_X` returns them: one column
    chunk, the same row chunks) ``func`` runs on each chunk of rows on the
    workers, and the partial results (an array, a number, or a tuple of
    them) are added on the workers; only the total is computed to the client.
    ``func`` must be picklable (a module-level function or a
    :func:`functools.partial` of one) and must not raise on finite input.
    """
    if not is_lazy(arrays[0]):
        return func(*arrays)
    import dask

    fuse = not _share_tasks(arrays)
    blocks = zip(*(_row_blocks(a, optimize_graph=fuse) for a in arrays))
    partials = [dask.delayed(func)(*b) for b in blocks]
    return dask.compute(tree_sum(partials))[0]


def label_index(y, classes):
    """Each label's index in ``classes`` by :func:`numpy.searchsorted`; never raises.

    The checks before the charge found only labels of ``classes``; a dask
    graph whose values change after them may bring a label outside them,
    which counts in no class or in a neighbouring one (a row removed or
    added, or its label changed). A label that does not compare with the classes (a
    NaN or None in a column of strings) would make the search raise after
    the charge: it counts in no class (index ``classes.size``).
    """
    try:
        return np.searchsorted(classes, y)
    except (TypeError, ValueError):
        label = np.full(len(y), classes.size, dtype=np.intp)
        for i, value in enumerate(y):
            try:
                label[i] = np.searchsorted(classes, value)
            except (TypeError, ValueError):
                pass
        return label


def finite_block(block):
    """``block`` with NaN as 0 and ±inf as ± the largest float (a copy only where one is found).

    The identity on finite input; see the module docstring for why it is there.
    """
    if block.dtype.kind == "f" and not np.isfinite(block).all():
        block = np.nan_to_num(block, nan=0.0, posinf=_FLOAT_MAX, neginf=-_FLOAT_MAX)
    return block


def bounded_block(block):
    """``block`` with ±inf as ± the largest float and NaN kept (a copy only where one is found).

    :func:`finite_block` for data where NaN marks a missing value.
    """
    if block.dtype.kind == "f" and np.isinf(block).any():
        block = np.clip(block, -_FLOAT_MAX, _FLOAT_MAX)
    return block


def _dtype_error(name, where=""):
    return ValueError(
        f"Input {name} must be numeric:{where} holds values that are not numbers. Encode it "
        "first (for example as a categorical feature of skdp's trees and boosting, or one-hot "
        "with public categories); nothing was charged.")


def _as_dask_array(X, name):
    """A dask array of known chunk sizes from a dask array, DataFrame or Series (lengths read)."""
    import dask.array as da

    if not isinstance(X, da.Array):
        if not hasattr(X, "to_dask_array"):
            raise TypeError(f"{name} must be a dask array, DataFrame or Series; got "
                            f"{type(X).__module__}.{type(X).__name__}.")
        # dask's expressions fuse a Parquet column's small partitions when they are optimized,
        # also where the lengths are counted, but not in the array they are given to (dask
        # 2026.8 refuses "3 != 8"): optimized first, the array and its lengths agree
        optimize = getattr(X, "optimize", None)
        if callable(optimize):
            X = optimize()
        return X.to_dask_array(lengths=True)
    if any(np.isnan(c) for chunks in X.chunks for c in chunks):
        X = X.compute_chunk_sizes()
    return X


def _feature_names(estimator, X, reset):
    """Set or check ``feature_names_in_`` from a dask DataFrame's columns, as scikit-learn does."""
    columns = getattr(X, "columns", None)
    names = None
    if columns is not None and all(isinstance(c, str) for c in columns):
        names = np.asarray(list(columns), dtype=object)
    if reset:
        if names is not None:
            estimator.feature_names_in_ = names
        elif hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
        return
    fitted = getattr(estimator, "feature_names_in_", None)
    if fitted is not None and names is not None and (
            len(fitted) != len(names) or np.any(fitted != names)):
        raise ValueError("The feature names should match those that were passed during fit.")


def check_frame_dtypes(X, columns):
    """Refuse, from the metadata, the ``columns`` of a DataFrame ``X`` that are not numeric."""
    import pandas as pd

    bad = [c for c in columns if not (pd.api.types.is_numeric_dtype(X[c].dtype)
                                      or pd.api.types.is_bool_dtype(X[c].dtype))
           or pd.api.types.is_complex_dtype(X[c].dtype)]
    if bad:
        shown = ", ".join(repr(c) if isinstance(c, str) else str(c) for c in bad[:5])
        raise _dtype_error("X", f" column{'s' if len(bad) > 1 else ''} {shown}")


def check_lazy_X(estimator, X, y=None, *, reset=True, allow_nan=False, y_kind="numeric",
                 also=None):
    """Validate a dask ``X`` (and ``y``) as the in-memory ``validate_data(..., dtype=float64)`` does.

    Reads metadata (dimensions, dtypes, names, chunk sizes), then one pass
    over the values that refuses NaN and infinity in ``X`` and in ``y`` with
    the in-memory errors, and, with ``y_kind="labels"``, finds the labels of
    ``y``. With ``allow_nan`` (``ensure_all_finite="allow-nan"``, where NaN
    marks a missing value) only infinity is refused in ``X``, and NaN is kept
    after the checks. Call it before the charge: nothing it reads is kept but
    the labels, which the caller checks against the public ``classes`` (or
    releases with a warning, as in memory).

    ``also``, when given, is a function of the float dask ``X`` that returns
    ``(collection, refuse)``: the collection is computed in the same pass,
    and ``refuse(value)`` is called with its value after the finiteness
    checks, to raise the caller's own error before the charge (the
    boosting's values outside the public categories).

    Returns
    -------
    X : dask array of float64, one column chunk, finite blocks (:func:`finite_block`;
        with ``allow_nan``, :func:`bounded_block`)
    y : dask array with X's row chunks (float64 for ``y_kind="numeric"``); only when ``y`` is given
    labels : ndarray, the sorted labels of ``y``; only for ``y_kind="labels"``
    """
    import dask
    import dask.array as da

    columns = getattr(X, "columns", None)
    _feature_names(estimator, X, reset)
    if columns is not None:  # a DataFrame: the dtypes of its columns, from metadata
        check_frame_dtypes(X, columns)
    X = _as_dask_array(X, "X")
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D array, got a {X.ndim}D dask array instead: reshape "
                         "it to (n_samples, n_features).")
    if X.dtype.kind not in "biuf":
        raise _dtype_error("X")
    n, d = X.shape
    if n < 1 or d < 1:
        raise ValueError(f"Found array with {n} sample(s) and {d} feature(s) (shape=({n}, {d})) "
                         "while a minimum of 1 is required.")
    if reset:
        estimator.n_features_in_ = d
    elif d != estimator.n_features_in_:
        raise ValueError(f"X has {d} features, but {type(estimator).__name__} is expecting "
                         f"{estimator.n_features_in_} features as input.")
    X = X.astype(np.float64).rechunk({1: -1})
    checks = {"X": (da.zeros(d, dtype=bool) if allow_nan else da.isnan(X).any(axis=0),
                    da.isinf(X).any(axis=0))}
    if y is not None:
        if not is_lazy(y):  # an in-memory target beside dask rows: one chunk, whose length
            # the check below compares with X's before it is cut into X's row chunks
            y = da.from_array(np.atleast_1d(np.asarray(y)), chunks=-1)
        y = _as_dask_array(y, "y")
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.rechunk({1: -1})[:, 0]
        if y.ndim != 1:
            raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
        if y.shape[0] != n:
            raise ValueError("Found input variables with inconsistent numbers of samples: "
                             f"[{n}, {y.shape[0]}]")
        y = y.rechunk((X.chunks[0],))
        if y_kind == "numeric":
            if y.dtype.kind not in "biuf":
                raise ValueError(f"y must be numeric (bool, int or float); got dtype {y.dtype}.")
            y = y.astype(np.float64)
        if y.dtype.kind == "f":
            checks["y"] = (da.isnan(y).any(), da.isinf(y).any())
        if y_kind == "labels":
            checks["labels"] = da.unique(y)
    refuse = None
    if also is not None:
        checks["also"], refuse = also(X)
    found = dask.compute(checks)[0] if checks else {}
    if "X" in found:
        _refuse_non_finite(estimator, np.asarray(found["X"][0]), np.asarray(found["X"][1]),
                           columns)
    if refuse is not None:
        refuse(found["also"])
    if "y" in found:
        _refuse_non_finite(estimator, np.atleast_1d(found["y"][0]),
                           np.atleast_1d(found["y"][1]), None, name="y")
    X = X.map_blocks(bounded_block if allow_nan else finite_block, dtype=np.float64)
    if y is None:
        return X
    if y.dtype.kind == "f":
        y = y.map_blocks(finite_block, dtype=y.dtype)
    return (X, y, np.asarray(found["labels"])) if y_kind == "labels" else (X, y)


def _refuse_non_finite(estimator, nan, inf, columns, name="X"):
    """The in-memory error for NaN or infinity in the columns flagged by ``nan`` and ``inf``."""
    from ._validation import nan_refused

    if nan.any():
        if name != "X":
            raise ValueError(f"Input {name} contains NaN.")
        labels = [repr(c) if isinstance(c, str) else str(c) for c in
                  (range(nan.size) if columns is None else columns)]
        found = [labels[j] for j in np.flatnonzero(nan)]
        shown = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
        raise nan_refused(estimator, f" in column{'s' if len(found) > 1 else ''} {shown}")
    if inf.any():
        raise ValueError(f"Input {name} contains infinity or a value too large for "
                         "dtype('float64').")


def _apply(block, estimator, name, args, kwargs, empty=None):
    """``estimator.name(block, ...)`` on one in-memory block of rows; ``empty`` for no rows.

    A chunk or partition of zero rows (which validation refuses) gives
    ``empty``, the output of no rows, without calling the method.
    """
    if empty is not None and block.shape[0] == 0:
        return empty
    return getattr(estimator, name)(block, *args, **kwargs)


def lazy_rows(method):
    """Make ``predict``, ``predict_proba``, ``transform``... lazy on dask input.

    On a dask array or DataFrame the method returns a dask array computed
    block by block on the workers (as dask-ml's ``ParallelPostFit``); on
    anything else it runs as it is. The output's shape and dtype come from
    the method applied to one row of zeros as wide as the input (public),
    whose feature names are those of the input; so a wrong width is refused
    at once, with the in-memory error.
    """

    @functools.wraps(method)
    def wrapper(self, X, *args, **kwargs):
        if not is_lazy(X):
            return method(self, X, *args, **kwargs)
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        columns = getattr(X, "columns", None)
        if columns is not None:
            import pandas as pd

            probe = method(self, pd.DataFrame(np.zeros((1, len(columns))), columns=columns),
                           *args, **kwargs)
            probe = np.asarray(probe)
            return X.map_partitions(_apply, self, method.__name__, args, kwargs, probe[:0],
                                    meta=probe[:0])
        if X.ndim != 2:
            raise ValueError(f"Expected a 2D array, got a {X.ndim}D dask array instead.")
        # a row of zeros as wide as X: the method's own checks refuse a wrong width here
        probe = np.asarray(method(self, np.zeros((1, X.shape[1])), *args, **kwargs))
        X = X.rechunk({1: -1})
        if probe.ndim == 1:
            return X.map_blocks(_apply, self, method.__name__, args, kwargs, probe[:0],
                                dtype=probe.dtype, drop_axis=1, meta=probe[:0])
        return X.map_blocks(_apply, self, method.__name__, args, kwargs, probe[:0],
                            dtype=probe.dtype, chunks=(X.chunks[0], probe.shape[1:]),
                            meta=probe[:0])

    return wrapper
