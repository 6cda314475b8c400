"""The keys of a group-by: public, or chosen privately by a thresholded noisy count.

Public keys (a list, a dict of lists whose product is taken, or a DataFrame of
key rows) cost nothing: a key absent from the data comes back with noisy zero
counts, and rows whose key is not public are left out.

Without public keys, the keys are chosen by **partition selection**: each key
present in the table gets the number of people who have a row with it (after
each person keeps at most G keys), plus Laplace noise of scale b = G/ε, and is
kept when that noisy count exceeds

    τ = 1 + b·ln(G / (2δ)).

A key that people already have moves by at most 1 per key and G keys: the
Laplace mechanism, ε-DP (Dwork, McSherry, Nissim & Smith 2006, Prop. 1). A key
that only the added person has appears with probability ½·exp(−(τ − 1)/b) each,
at most δ over their G keys. So the selection is (ε, δ)-DP (Korolova,
Kenthapadi, Mishra & Ntoulas 2009, Thm. 1; Wilson et al. 2020, Sec. 3.2,
"Differentially Private SQL with Bounded User Contribution"), and no key held
by a single person appears with probability above δ. The released keys are
then public for the aggregates that follow (sequential composition).
"""

from __future__ import annotations

import math

import numpy as np

from ..accounting import approximate_dp_rdp

__all__ = []  # internal


def check_keys(keys, by, engine_kind):
    """Public ``keys`` as a list of tuples (one entry per ``by`` column), or None.

    Accepts a list of values (one ``by`` column), a list of tuples (several),
    a dict ``{column: values}`` (their product, like Tumult's
    ``KeySet.from_dict``), or a pandas / polars DataFrame whose columns are
    the ``by`` columns.
    """
    if keys is None:
        return None
    module = type(keys).__module__.split(".")[0]
    if module in ("pandas", "polars") and type(keys).__name__ == "DataFrame":
        missing = [c for c in by if c not in list(keys.columns)]
        if missing:
            raise ValueError(f"keys is missing the group-by column {missing[0]!r}.")
        columns = [list(keys[c].to_list() if module == "polars" else keys[c].tolist())
                   for c in by]
        out = list(zip(*columns))
    elif isinstance(keys, dict):
        unknown = [c for c in keys if c not in by]
        missing = [c for c in by if c not in keys]
        if unknown or missing:
            raise ValueError(
                f"keys as a dict needs one entry per group-by column {list(by)}; "
                + (f"{unknown[0]!r} is not one." if unknown else f"{missing[0]!r} is missing.")
            )
        import itertools

        out = list(itertools.product(*[list(keys[c]) for c in by]))
    elif isinstance(keys, (list, tuple, np.ndarray)) or type(keys).__name__ in ("Index", "Series"):
        values = list(keys)
        if len(by) == 1:
            out = [(v,) for v in values]
        else:
            out = []
            for v in values:
                if not isinstance(v, tuple) or len(v) != len(by):
                    raise ValueError(
                        f"With {len(by)} group-by columns each key must be a tuple of "
                        f"{len(by)} values."
                    )
                out.append(v)
    else:
        raise TypeError("keys must be a list, a dict of lists or a DataFrame; got "
                        f"{type(keys).__name__}.")
    if len(out) == 0:
        raise ValueError("keys is empty: give at least one key, or keys=None to choose them "
                         "privately.")
    if len(set(out)) != len(out):
        raise ValueError("keys holds a key twice.")
    for key in out:
        for column, value in zip(by, key):
            if value is None or (isinstance(value, float) and math.isnan(value)):
                raise ValueError(f"keys of column {column!r} holds a missing value.")
    return out


def sorted_keys(keys):
    """Keys in a canonical order, the same whatever order the engine met them in."""
    try:
        return sorted(keys)
    except TypeError:
        return sorted(keys, key=lambda k: tuple((type(v).__name__, repr(v)) for v in k))


def selection_scale(epsilon, max_groups):
    """Laplace scale b = G/ε of the people counts (L1 sensitivity G)."""
    return max_groups / epsilon


def selection_threshold(epsilon, delta, max_groups):
    """τ = 1 + b·ln(G/(2δ)): a single person's key passes with probability at most δ/G."""
    b = selection_scale(epsilon, max_groups)
    return 1.0 + b * math.log(max_groups / (2.0 * delta))


def selection_curve(epsilon, delta):
    """The (ε, δ)-DP curve of the selection (module docstring)."""
    return approximate_dp_rdp(epsilon, delta)


def people_needed(epsilon, delta, max_groups, alpha):
    """People a key needs to be kept with probability at least 1 − α."""
    b = selection_scale(epsilon, max_groups)
    return selection_threshold(epsilon, delta, max_groups) + b * math.log(1.0 / (2.0 * alpha))


def select_keys(counts, *, epsilon, delta, max_groups, rng):
    """The keys whose noisy people count exceeds the threshold, and those noisy counts.

    ``counts`` maps each key present in the table to its number of people.
    Returns ``(keys, noisy)``, the keys in canonical order. With
    ``epsilon=inf`` every key with a person is kept, with its exact count.
    The noisy counts of the kept keys are part of the same (ε, δ)-DP release
    (Wilson et al. 2020, Sec. 3.2: the thresholded Laplace counts are
    published with the keys).
    """
    candidates = sorted_keys([k for k, c in counts.items() if c > 0])
    people = np.array([counts[k] for k in candidates], dtype=float)
    if epsilon == math.inf:
        return candidates, people
    noisy = people + rng.laplace(0.0, selection_scale(epsilon, max_groups), size=people.size)
    kept = noisy > selection_threshold(epsilon, delta, max_groups)
    return [k for k, keep in zip(candidates, kept) if keep], noisy[kept]
