"""One small adapter per DataFrame engine: pandas, polars and dask.

A query never iterates over rows in Python and never converts a table row by
row. Each adapter reads the columns a query needs as numpy arrays (the
engine's own columnar export), turns key columns into integer codes with the
engine's own factorisation, and hands :mod:`skdp.analysis._aggregates` one
:class:`Chunk` per partition: the whole table for pandas and polars, one per
partition for dask, where the function runs on the workers and only its
small partial sums come back to the client.

Metadata (column names, dtypes) is read before any charge; values only after.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from ..utils._rows import tree_sum

__all__ = []  # internal

# Name of the column of global row positions a dask table carries through a shuffle.
_POSITION = "__skdp_position__"


@dataclass
class Chunk:
    """The rows of one partition, as numpy columns.

    Attributes
    ----------
    positions : int64 array (n,)
        Each row's position in the whole table (the same in every engine).
    key_codes : int64 array (n,)
        Each row's key as an index into ``key_values``; -1 where a key column is null.
    key_values : list of tuple
        The distinct keys of these rows.
    unit : int64 array (n,) or None
        Each row's person, as codes local to the chunk (every row of a person
        is in one chunk); None when one row is one person.
    values : dict of str to float64 array (n,)
        The value columns, NaN where null.
    """

    positions: np.ndarray
    key_codes: np.ndarray
    key_values: list
    unit: np.ndarray | None
    values: dict


def _combine_codes(per_column):
    """Codes of the tuples of several columns from each column's (codes, uniques)."""
    n = per_column[0][0].shape[0] if per_column else 0
    if not per_column:
        return np.zeros(n, dtype=np.int64), [()]
    if len(per_column) == 1:
        codes, uniques = per_column[0]
        return codes, [(u,) for u in uniques]
    null = np.zeros(n, dtype=bool)
    for codes, _ in per_column:
        null |= codes < 0
    # Combine column by column, renumbering the tuples met so far densely each time, so
    # that a code never exceeds (rows) x (values of one column): no int64 overflow.
    combined = np.zeros(int((~null).sum()), dtype=np.int64)
    firsts = np.zeros(0, dtype=np.int64)  # a row of each tuple so far, in code order
    for codes, uniques in per_column:
        combined = combined * max(len(uniques), 1) + codes[~null]
        _, firsts, combined = np.unique(combined, return_index=True, return_inverse=True)
        combined = combined.reshape(-1)
    out = np.full(n, -1, dtype=np.int64)
    out[~null] = combined
    rows = np.flatnonzero(~null)[firsts]
    keys = [tuple(uniques[codes[r]] for codes, uniques in per_column) for r in rows]
    return out, keys


class _Engine:
    """What every adapter answers: metadata before the charge, chunks after it."""

    kind = ""

    def __init__(self, data):
        self.data = data

    def columns(self):
        raise NotImplementedError

    def is_numeric(self, column):
        raise NotImplementedError


    def map_reduce(self, func, *, keys, unit, values):
        """``func(chunk)`` on every partition, the partial results summed (:func:`add_partials`)."""
        raise NotImplementedError

    def frame(self, key_names, key_values, columns):
        """A result of the input's kind: one row per key, one column per entry of ``columns``."""
        raise NotImplementedError


def add_partials(a, b):
    """Two partial results added up: arrays and dicts of counts per key are summed, and
    ``(min, max)`` pairs give the pair of the smaller minimum and the larger maximum."""
    out = dict(a)
    for name, value in b.items():
        if name not in out:
            out[name] = value
        elif isinstance(value, tuple):
            out[name] = (min(out[name][0], value[0]), max(out[name][1], value[1]))
        elif isinstance(value, dict):
            merged = dict(out[name])
            for key, count in value.items():
                merged[key] = merged.get(key, 0) + count
            out[name] = merged
        else:
            out[name] = out[name] + value
    return out


class _PandasEngine(_Engine):
    kind = "pandas"

    def columns(self):
        return [str(c) if not isinstance(c, str) else c for c in self.data.columns]

    def is_numeric(self, column):
        import pandas as pd

        dtype = self.data[column].dtype
        if pd.api.types.is_complex_dtype(dtype):
            return False
        return bool(pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype))


    def map_reduce(self, func, *, keys, unit, values):
        return func(_pandas_chunk(self.data, keys, unit, values, 0))

    def frame(self, key_names, key_values, columns):
        return _pandas_frame(key_names, key_values, columns)


def _canonical(value):
    """One spelling of equal keys, whatever row came first: 0.0 for -0.0, 1 for True or 1.0.

    pandas keeps the first row's spelling of keys that compare equal; a
    released key must not tell which row that was.
    """
    if isinstance(value, (bool, np.bool_, numbers.Number)) and not isinstance(value, complex):
        if isinstance(value, (bool, np.bool_)):
            return int(value)
        value = value + 0  # -0.0 + 0 is 0.0
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            return int(value)
    return value


def _pandas_factorize(series):
    """Codes (-1 where null) and distinct values of a key column, with pandas' hashing.

    Values that cannot be hashed (a list in an object column) count as
    missing rather than raising after the charge. Keys of an object column
    take one spelling (:func:`_canonical`); those of a float column 0.0 for
    -0.0.
    """
    import pandas as pd

    try:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
    except TypeError:
        series = series.map(lambda v: v if isinstance(v, Hashable) else None)
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
    uniques = list(uniques)
    if series.dtype == object:
        uniques = [_canonical(v) for v in uniques]
    elif pd.api.types.is_float_dtype(series.dtype):
        uniques = [v + 0.0 for v in uniques]
    return codes.astype(np.int64), uniques


def _pandas_unit_codes(series):
    """The codes of the privacy unit's column (-1 where missing): only the codes are needed."""
    import pandas as pd

    try:
        codes, _ = pd.factorize(series, use_na_sentinel=True)
    except TypeError:
        codes, _ = _pandas_factorize(series)
    return codes.astype(np.int64, copy=False)


def _pandas_chunk(df, keys, unit, values, offset, positions=None):
    n = len(df)
    key_codes, key_values = _combine_codes([_pandas_factorize(df[k]) for k in keys])
    if not keys:
        key_codes = np.zeros(n, dtype=np.int64)
    unit_codes = None if unit is None else _pandas_unit_codes(df[unit])
    cols = {}
    for name in values:
        col = df[name]
        if col.dtype == bool or str(col.dtype) == "boolean":
            col = col.astype("float64")
        cols[name] = col.to_numpy(dtype=np.float64, na_value=np.nan)
    if positions is None:
        positions = np.arange(offset, offset + n, dtype=np.int64)
    return Chunk(positions, key_codes, key_values, unit_codes, cols)


def _pandas_frame(key_names, key_values, columns):
    import pandas as pd

    if not key_names:
        index = pd.RangeIndex(1)
    elif len(key_names) == 1:
        index = pd.Index([k[0] for k in key_values], name=key_names[0])
    else:
        index = pd.MultiIndex.from_tuples(key_values, names=key_names) if key_values else \
            pd.MultiIndex.from_arrays([[] for _ in key_names], names=key_names)
    return pd.DataFrame({name: np.asarray(v) for name, v in columns.items()}, index=index)


class _PolarsEngine(_Engine):
    kind = "polars"

    def columns(self):
        return list(self.data.columns)

    def is_numeric(self, column):
        import polars as pl

        dtype = self.data.schema[column]
        return bool(dtype.is_numeric() or dtype == pl.Boolean)


    def map_reduce(self, func, *, keys, unit, values):
        return func(self._chunk(keys, unit, values))

    def _factorize(self, column):
        import polars as pl

        s = self.data[column]
        if s.dtype.is_float():
            s = s.fill_nan(None)
        ranks = s.rank("dense")
        codes = ranks.fill_null(0).cast(pl.Int64).to_numpy() - 1
        uniques = s.drop_nulls().unique().sort().to_list()
        if s.dtype.is_float():  # polars keeps the first row's -0.0 or 0.0: one spelling
            uniques = [v + 0.0 for v in uniques]
        return codes, uniques

    def _chunk(self, keys, unit, values):
        import polars as pl

        n = self.data.height
        key_codes, key_values = _combine_codes([self._factorize(k) for k in keys])
        if not keys:
            key_codes = np.zeros(n, dtype=np.int64)
        unit_codes = None if unit is None else self._factorize(unit)[0]
        cols = {name: self.data[name].cast(pl.Float64).to_numpy() for name in values}
        return Chunk(np.arange(n, dtype=np.int64), key_codes, key_values, unit_codes, cols)

    def frame(self, key_names, key_values, columns):
        import polars as pl

        data = {name: [k[i] for k in key_values] for i, name in enumerate(key_names)}
        data.update({name: np.asarray(v) for name, v in columns.items()})
        return pl.DataFrame(data)


class _DaskEngine(_Engine):
    """A dask DataFrame: each partition is reduced where it lives.

    With a privacy unit the rows are first shuffled by person, so that each
    person's rows meet in one partition, carrying their global positions along
    (from the partitions' lengths: one pass that reads lengths only, kept for
    later queries); contribution bounding then runs per partition exactly as
    in memory.
    """

    kind = "dask"

    def __init__(self, data):
        super().__init__(data)
        self._offsets = None

    def columns(self):
        return [str(c) for c in self.data.columns]

    def is_numeric(self, column):
        import pandas as pd

        dtype = self.data[column].dtype
        if pd.api.types.is_complex_dtype(dtype):
            return False
        return bool(pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype))


    def _partition_offsets(self):
        if self._offsets is None:
            lengths = self.data.map_partitions(len).compute()
            self._offsets = np.r_[0, np.cumsum(np.asarray(lengths, dtype=np.int64))[:-1]]
        return self._offsets

    def map_reduce(self, func, *, keys, unit, values):
        import dask
        import pandas as pd

        needed = list(dict.fromkeys([*keys, *([unit] if unit else []), *values]))
        parts = self.data[needed].to_delayed()
        if unit is None:  # positions only order a person's rows: none are needed
            partials = [dask.delayed(_dask_partial)(func, p, 0, keys, unit, values)
                        for p in parts]
        else:
            offsets = self._partition_offsets()
            import dask.dataframe as dd

            meta = self.data[needed]._meta.assign(**{_POSITION: pd.Series([], dtype=np.int64)})
            positioned = dd.from_delayed(
                [dask.delayed(_with_positions)(p, int(o)) for p, o in zip(parts, offsets)],
                meta=meta, verify_meta=False)
            shuffled = positioned.shuffle(on=unit)
            partials = [dask.delayed(_dask_partial)(func, p, None, keys, unit, values)
                        for p in shuffled.to_delayed()]
        total = _tree_sum(partials)
        return dask.compute(total)[0]

    def frame(self, key_names, key_values, columns):
        return _pandas_frame(key_names, key_values, columns)


def _with_positions(df, offset):
    return df.assign(**{_POSITION: np.arange(offset, offset + len(df), dtype=np.int64)})


def _dask_partial(func, df, offset, keys, unit, values):
    positions = None
    if offset is None:
        positions = df[_POSITION].to_numpy(dtype=np.int64)
    return func(_pandas_chunk(df, keys, unit, values, offset or 0, positions=positions))


def _tree_sum(partials):
    """The partial results added in pairs on the workers (the estimators' passes do the same)."""
    return tree_sum(partials, add=add_partials)


def engine_for(data):
    """The adapter of a pandas, polars or dask DataFrame; a TypeError for anything else.

    Looks at the type's module only, so no engine is imported that the
    caller has not imported already.
    """
    module = type(data).__module__.split(".")[0]
    if module == "pandas" and type(data).__name__ == "DataFrame":
        return _PandasEngine(data)
    if module == "polars" and type(data).__name__ == "DataFrame":
        return _PolarsEngine(data)
    if module in ("dask", "dask_expr") and "dask.dataframe" in sys.modules:
        import dask.dataframe as dd

        if isinstance(data, dd.DataFrame):
            return _DaskEngine(data)
    raise TypeError(
        "PrivateTable takes a pandas, polars or dask DataFrame; got "
        f"{type(data).__module__}.{type(data).__name__}. Wrap a numpy array in "
        "pandas.DataFrame first, or use skdp.stats for arrays."
    )
