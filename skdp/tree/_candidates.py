"""The split candidates of a numeric feature: a threshold and where the missing values go.

A numeric feature has ``B = max_bins`` bins of values and the bin ``B`` of
its missing values (NaN). A split is one of ``2B − 1`` candidates, in this
order (scikit-learn's ``HistGradientBoosting*`` considers the same ones,
XGBoost's sparsity-aware split, Chen & Guestrin 2016, Alg. 3):

- index ``t − 1`` for ``t = 1..B``: the bins ``>= t`` and the missing values
  go right (``t = B``: the missing values alone go right, a split on NaN);
- index ``B + t − 1`` for ``t = 1..B − 1``: the bins ``>= t`` go right, the
  missing values left.

**Privacy.** The candidates are fixed by ``max_bins`` alone: every numeric
feature has all ``2B − 1`` of them at finite ε, whether or not any value is
missing (only ε = ∞ looks at which features have missing values). Each
candidate is a fixed partition of the node's bins, missing bin included, so
adding or removing one row (with or without missing values) moves its
left or its right sums by that row's contribution alone: a score of
sensitivity Δ over the two children's sums (the boosting's
``|G_L| + |G_R|``, the trees' ``max_k C_L,k + max_k C_R,k``) keeps
sensitivity Δ on every candidate. The exponential mechanism's guarantee
does not depend on how many candidates it has (McSherry & Talwar 2007,
Thm. 6; ε_s-bounded range, Durfee & Rogers 2019), so choosing the
direction of the missing values with the threshold costs nothing more than
choosing the threshold: the level is still ε_s²/8-zCDP (Cesar & Rogers
2021, Lemma 3.2). A row with a missing value is in one child of every
split and in one leaf of every tree, like any other row, so the leaves'
sensitivities are unchanged too.
"""

import numpy as np

__all__ = ["left_sums", "numeric_tables"]


def left_sums(hist, n_bins):
    """Left-child sums of every candidate: (..., 2·n_bins − 1) from (..., n_bins + 1) bins.

    ``hist[..., :n_bins]`` are the value bins, ``hist[..., n_bins]`` the missing bin.
    """
    cum = np.cumsum(hist[..., :n_bins], axis=-1)
    missing = hist[..., n_bins:n_bins + 1]
    return np.concatenate([cum, cum[..., :-1] + missing], axis=-1)


def numeric_tables(candidate, n_bins, n_bins_total):
    """Bool rows (n, n_bins_total) 'goes right' of the candidates (int array (n,))."""
    candidate = np.asarray(candidate)
    missing_left = candidate >= n_bins
    threshold = np.where(missing_left, candidate - n_bins + 1, candidate + 1)
    table = np.arange(n_bins_total)[None, :] >= threshold[:, None]
    table[:, n_bins:] = False
    table[:, n_bins] = ~missing_left
    return table
