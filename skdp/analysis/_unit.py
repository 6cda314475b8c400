"""Contribution bounding: each person keeps at most G groups and R rows in each.

With a privacy unit (``privacy_unit="person_id"``) neighbouring tables differ
by one person with all their rows. Before any sum is taken, each person's rows
are cut down at random, never by value (the contribution bounding of Wilson,
Zhang, Lam, Desfontaines, Simmons-Marengo & Gipson 2020, "Differentially
Private SQL with Bounded User Contribution", Sec. 3):

1. every row gets a secret uniform priority (:func:`row_priorities`);
2. a person's groups are ranked by the smallest priority among the person's
   rows in the group, and the first ``max_groups`` are kept;
3. in each kept (person, group) pair the ``max_rows`` rows of smallest
   priority are kept.

Each person's kept rows are a random function of that person's rows alone,
with randomness independent of everyone else's, so adding one person adds at
most ``max_groups`` groups with at most ``max_rows`` rows each and leaves the
distribution of everyone else's kept rows unchanged: every sensitivity is the
one-row sensitivity times ``max_rows``, over ``max_groups`` groups.

The priorities are a keyed hash of each row's position in the table
(SplitMix64, Steele, Lea & Flood 2014, "Fast splittable pseudorandom number
generators", the finaliser ``mix64variant13``), so a table split into the
partitions of a dask DataFrame gets the same priorities as in one piece, and
the same rows are kept for the same seed (ties between two rows of one person
in the top bits compared are left to the sort, with probability below 2^-24). The key is drawn from the query's
generator and never leaves the process.
"""

import numpy as np

__all__ = []  # internal

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix64(z):
    """SplitMix64's finaliser on a uint64 array (a bijection that scrambles every bit)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def row_priorities(positions, key):
    """Secret priorities (uint64, uniform) of the rows at ``positions`` (int array) under ``key``.

    The i-th value of SplitMix64's stream seeded with ``key``:
    mix(key + (i + 1)·γ), γ = 0x9E3779B97F4A7C15.
    """
    with np.errstate(over="ignore"):
        z = np.uint64(key) + (np.asarray(positions, dtype=np.uint64) + np.uint64(1)) * _GOLDEN
        return _mix64(z)


def _order_by(codes, n_codes, priority):
    """Indices that sort rows by ``codes`` (ints in [0, n_codes)), then by ``priority``.

    One sort of a uint64 key, the code in the high bits and the priority's
    top bits below it, where at least 24 bits are left for the priority (two
    rows of one code then tie with probability below 2^-24 per pair, and a
    tie only orders two equally likely rows); otherwise a lexsort.
    """
    code_bits = max(int(n_codes - 1).bit_length(), 1)
    priority_bits = 64 - code_bits
    if priority_bits < 24:
        return np.lexsort((priority, codes))
    key = (codes.astype(np.uint64) << np.uint64(priority_bits)) | (
        priority >> np.uint64(code_bits))
    return np.argsort(key)


def bound_contributions(unit, group, priority, *, max_groups, max_rows, firsts=False):
    """Mask of the rows kept when each person keeps ``max_groups`` groups, ``max_rows`` rows each.

    Parameters
    ----------
    unit : int array (n,)
        The person of each row, as codes >= 0 (equal codes, same person; the
        engines give dense codes 0, 1, ...).
    group : int array (n,)
        The group of each row, as codes; rows with a negative code are in no
        group and are never kept.
    priority : uint64 array (n,)
        The rows' secret priorities (:func:`row_priorities`).
    max_groups, max_rows : int >= 1
    firsts : bool, default=False
        Also return the mask of the kept rows that come first in their
        (person, group) pair: one per person and kept group.

    Returns
    -------
    bool array (n,), or two with ``firsts``
    """
    keep = np.zeros(unit.shape[0], dtype=bool)
    first = np.zeros(unit.shape[0], dtype=bool)
    live = np.flatnonzero(group >= 0)
    if live.size == 0:
        return (keep, first) if firsts else keep
    if unit[live].min() < 0:  # the sort keys below hold codes >= 0
        raise ValueError("Every row in a group must have a person (a code >= 0).")
    # Rows in order of (person, group, priority): each pair's rows are contiguous, smallest
    # priority first, so a row's rank in its pair is its distance to the pair's first row.
    pair = unit[live].astype(np.int64) * (int(group.max()) + 1) + group[live]
    order = _order_by(pair, int(pair.max()) + 1, priority[live])
    pair = pair[order]
    order = live[order]
    pair_first = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
    pair_size = np.diff(np.r_[pair_first, pair.size])
    row_in_pair = np.arange(pair.size) - np.repeat(pair_first, pair_size)
    # A person's pairs in order of their smallest priority: the first max_groups are kept.
    pair_unit = unit[order[pair_first]]
    pair_order = _order_by(pair_unit, int(pair_unit.max()) + 1, priority[order[pair_first]])
    sorted_unit = pair_unit[pair_order]
    unit_first = np.flatnonzero(np.r_[True, sorted_unit[1:] != sorted_unit[:-1]])
    rank = np.empty(pair_first.size, dtype=np.int64)
    rank[pair_order] = np.arange(pair_first.size) - np.repeat(
        unit_first, np.diff(np.r_[unit_first, pair_first.size]))
    kept = (np.repeat(rank, pair_size) < max_groups) & (row_in_pair < max_rows)
    keep[order[kept]] = True
    if firsts:
        first[order[pair_first[rank < max_groups]]] = True
        return keep, first
    return keep
