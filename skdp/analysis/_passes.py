"""The passes of a query over a chunk of rows: what runs where the rows live.

Each pass is a small picklable object called on one :class:`~._engines.Chunk`
(on a dask worker, or on the whole in-memory table) that returns partial sums;
the engine adds the partials up. A pass holds only public parameters, the
released keys and bounds, and the secret key of the rows' priorities: never
the table or the budget.
"""

from __future__ import annotations

import numpy as np

from . import _aggregates
from ._unit import bound_contributions, row_priorities

__all__ = []  # internal


def groups_of(chunk, index):
    """Each row's position in the released keys, -1 where its key is not released."""
    lookup = np.array([index.get(k, -1) for k in chunk.key_values] + [-1], dtype=np.int64)
    return lookup[chunk.key_codes]  # code -1 (a null key) reads the trailing -1


def bounded(chunk, group, key, max_groups, max_rows, firsts=False):
    """``group`` with -1 for the rows that contribution bounding leaves out.

    Rows whose privacy unit is missing belong to no known person and are
    left out. With ``firsts`` also returns the mask of each person's first
    kept row of each group (None without a privacy unit).
    """
    if chunk.unit is None:
        return (group, None) if firsts else group
    group = np.where(chunk.unit >= 0, group, -1)
    keep = bound_contributions(chunk.unit, group, row_priorities(chunk.positions, key),
                               max_groups=max_groups, max_rows=max_rows, firsts=firsts)
    if firsts:
        keep, first = keep
        return np.where(keep, group, -1), first
    return np.where(keep, group, -1)


def people_per_key(chunk, group, first=None):
    """{key: number of people with a kept row of that key} for one chunk.

    ``first`` marks each person's first kept row of each key (from
    :func:`bound_contributions`); without a privacy unit a row is a person.
    """
    counted = group >= 0 if first is None else first
    counts = np.bincount(group[counted], minlength=len(chunk.key_values))
    return {k: int(c) for k, c in zip(chunk.key_values, counts) if c}


class FirstPass:
    """People per key (to choose keys privately) and log-scale histograms (for bounds).

    ``index`` maps the public keys to groups, or is None when the keys are
    being chosen (then every key of the data is a group).
    """

    def __init__(self, index, key, max_groups, max_rows, select, estimate, exact):
        self.index, self.key = index, key
        self.max_groups, self.max_rows = max_groups, max_rows
        self.select, self.estimate, self.exact = select, estimate, exact

    def __call__(self, chunk):
        from ..stats import _range

        group = chunk.key_codes if self.index is None else groups_of(chunk, self.index)
        group, first = bounded(chunk, group, self.key, self.max_groups, self.max_rows,
                               firsts=True)
        out = {}
        if self.select:
            out["people"] = people_per_key(chunk, group, first)
        for column in self.estimate:
            values = chunk.values[column][group >= 0]
            if self.exact:  # epsilon=inf: the exact range, as pandas would see it
                present = values[~np.isnan(values)]
                out[column] = (present.min(initial=np.inf), present.max(initial=-np.inf))
                continue
            idx = _range.bin_index(values)
            out[column] = np.bincount(idx[idx >= 0], minlength=_range.N_BINS)
        return out


class AggregatePass:
    """The sums of every aggregate per released key (:func:`._aggregates.chunk_sums`)."""

    def __init__(self, index, key, max_groups, max_rows, needs, quantile_columns, bounds, edges):
        self.index, self.key = index, key
        self.max_groups, self.max_rows = max_groups, max_rows
        self.needs, self.quantile_columns, self.bounds = needs, quantile_columns, bounds
        self.edges = edges

    def __call__(self, chunk):
        group = bounded(chunk, groups_of(chunk, self.index), self.key,
                        self.max_groups, self.max_rows)
        return _aggregates.chunk_sums(group, len(self.index), chunk.values, self.needs,
                                      self.quantile_columns, self.bounds, self.edges)
