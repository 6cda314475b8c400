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
the same rows are kept for the same seed. The key is drawn from the query's
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
    """Uniform priorities in [0, 1) of the rows at ``positions`` (int array) under ``key``.

    The i-th value of SplitMix64's stream seeded with ``key``:
    mix(key + (i + 1)·γ), γ = 0x9E3779B97F4A7C15, its top 53 bits as a float.
    """
    with np.errstate(over="ignore"):
        z = np.uint64(key) + (np.asarray(positions, dtype=np.uint64) + np.uint64(1)) * _GOLDEN
        z = _mix64(z)
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 2.0**53)


def bound_contributions(unit, group, priority, *, max_groups, max_rows):
    """Mask of the rows kept when each person keeps ``max_groups`` groups, ``max_rows`` rows each.

    Parameters
    ----------
    unit : int array (n,)
        The person of each row, as codes (any integers; equal codes, same person).
    group : int array (n,)
        The group of each row, as codes; rows with a negative code are in no
        group and are never kept.
    priority : float array (n,)
        The rows' secret priorities (:func:`row_priorities`).
    max_groups, max_rows : int >= 1

    Returns
    -------
    bool array (n,)
    """
    keep = np.zeros(unit.shape[0], dtype=bool)
    live = np.flatnonzero(group >= 0)
    if live.size == 0:
        return keep
    # Rows in order of (person, group, priority): each pair's rows are contiguous, smallest
    # priority first, so a row's rank in its pair is its distance to the pair's first row.
    order = live[np.lexsort((priority[live], group[live], unit[live]))]
    u, g = unit[order], group[order]
    pair_first = np.flatnonzero(np.r_[True, (u[1:] != u[:-1]) | (g[1:] != g[:-1])])
    pair_size = np.diff(np.r_[pair_first, u.size])
    row_in_pair = np.arange(u.size) - np.repeat(pair_first, pair_size)
    # A person's pairs in order of their smallest priority: the first max_groups are kept.
    pair_unit, pair_priority = u[pair_first], priority[order[pair_first]]
    pair_order = np.lexsort((pair_priority, pair_unit))
    sorted_unit = pair_unit[pair_order]
    unit_first = np.flatnonzero(np.r_[True, sorted_unit[1:] != sorted_unit[:-1]])
    rank = np.empty(pair_first.size, dtype=np.int64)
    rank[pair_order] = np.arange(pair_first.size) - np.repeat(
        unit_first, np.diff(np.r_[unit_first, pair_first.size]))
    kept = (np.repeat(rank, pair_size) < max_groups) & (row_in_pair < max_rows)
    keep[order[kept]] = True
    return keep
