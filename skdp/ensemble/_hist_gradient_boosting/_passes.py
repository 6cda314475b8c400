"""The boosting's passes over the chunks of a dask X (issue 27).

Rows larger than memory leave no room for the in-memory fit's per-row state
(each row's raw scores and node). Each pass recomputes it inside each chunk
from what has been released so far: the chunk is binned by the public or
released edges, its raw scores are the baseline plus the finished rounds'
trees (:func:`._loss.raw_scores`), its gradients and hessians follow from the
loss, and its rows descend the tree being grown to the level being split.
A categorical feature's column holds its codes, computed in the chunk by
its public categories (:mod:`._lazy_categorical`); the codes are its bins,
as in memory. The chunk then returns its (node, feature, bin) sums,
computed by the splitter's own :meth:`histograms` on the chunk's layout
(:func:`skdp.tree._histogram.make_bins`); :func:`skdp.utils._rows.row_sums`
adds the chunks' sums, and the splitter chooses on the client with the
fit's generator, as in memory. So the fit is the in-memory fit up to the
order in which float sums are added: one pass per tree level and one per
tree's leaves, less one per tree but the first of a round of several trees
(their roots share a pass, :func:`root_sums`).

Every function here is total on finite or NaN input (NaN is a missing value
with a bin of its own; ±inf was made ± the largest float by
:func:`skdp.utils._rows.check_lazy_X`): nothing raised in a chunk depends on
a row.
"""

from functools import partial

import numpy as np

from ...tree._categorical import bin_features
from ...tree._grower import descend, grow_levels
from ...tree._histogram import make_bins
from ...utils._rows import label_index, row_sums
from ._loss import log_loss_gradients, one_hot, raw_scores, scaled_target, squared_gradients
from ._splitting import leaf_sums

__all__ = ["ChunkRows", "class_counts", "grow_on_chunks", "log_loss_rows", "root_sums",
           "seen_bins", "squared_rows", "target_sum"]


class ChunkRows:
    """What a chunk needs to recompute its rows' state: the bins, the baseline, the loss.

    ``loss(raw, y)`` gives the (n, n_trees) gradients and hessians of a
    chunk's rows at their raw scores (a picklable function: it runs on the
    workers). ``categorical`` is the mask of the categorical features (None:
    none is), whose columns hold their codes (:mod:`._lazy_categorical`).
    """

    def __init__(self, edges, baseline, loss, categorical=None):
        self.edges = edges
        self.baseline = baseline
        self.loss = loss
        self.categorical = categorical

    def state(self, X, y, predictors):
        """The chunk's bins, gradients and hessians after the released rounds ``predictors``."""
        binned = bin_features(X, self.edges, self.categorical)
        g, h = self.loss(raw_scores(binned, self.baseline, predictors), y)
        return binned, g, h


def log_loss_rows(raw, y, *, classes, n_trees):
    """Log-loss gradients and hessians of a chunk's rows, from their labels ``y``."""
    return log_loss_gradients(raw, one_hot(label_index(y, classes), n_trees, classes.size))


def squared_rows(raw, y, *, bounds_y, clip, private):
    """Squared-error gradients and hessians of a chunk's rows, from their target ``y``."""
    return squared_gradients(raw if clip is None else np.clip(raw, *clip),
                             scaled_target(y, bounds_y), private)


def class_counts(y, *, classes):
    """Rows per class of a chunk (a label outside ``classes`` counts in none or a neighbour)."""
    label = label_index(y, classes)
    return np.bincount(label[label < classes.size], minlength=classes.size)


def target_sum(y, *, bounds_y):
    """The sum of a chunk's scaled target."""
    return scaled_target(y, bounds_y).sum()


def seen_bins(X, *, edges, n_bins, categorical=None):
    """Rows per (feature, bin) of a chunk: which bins occur at fit (ε = ∞ only)."""
    binned = bin_features(X, edges, categorical)
    return np.stack([np.bincount(binned[:, j], minlength=n_bins)
                     for j in range(binned.shape[1])]).reshape(binned.shape[1], n_bins)


def _level_sums(X, y, *, rows, predictors, k, feature, threshold, level, splitter, n_bins):
    """The splitter's histograms of a chunk's rows on one level of the tree being grown."""
    binned, g, h = rows.state(X, y, predictors)
    node = descend(binned, feature, threshold, level)
    return splitter.histograms(make_bins(binned, n_bins), node, 2**level, g[:, k], h[:, k])


def _root_sums(X, y, *, rows, predictors, splitter, n_bins):
    """The splitter's root histograms of a chunk's rows for every tree of a round."""
    binned, g, h = rows.state(X, y, predictors)
    bins, node = make_bins(binned, n_bins), np.zeros(binned.shape[0], dtype=np.intp)
    return tuple(splitter.histograms(bins, node, 1, g[:, k], h[:, k])
                 for k in range(g.shape[1]))


def root_sums(X, y, rows, predictors, *, splitter, n_bins):
    """The root histograms of every tree of a round, in one pass.

    A round's trees all take their gradients at the round's start, so their
    roots need nothing of each other: one pass gives them all, and each tree
    draws its root split from them in its turn (the draws keep their order).
    """
    return row_sums(partial(_root_sums, rows=rows, predictors=tuple(predictors),
                            splitter=splitter, n_bins=n_bins), X, y)


def _leaf_sums(X, y, *, rows, predictors, k, feature, threshold, depth):
    """The gradient and hessian sums of the leaves of a chunk's rows."""
    binned, g, h = rows.state(X, y, predictors)
    return leaf_sums(descend(binned, feature, threshold, depth), 2**depth, g[:, k], h[:, k])


def grow_on_chunks(X, y, rows, predictors, k, *, max_depth, splitter, learning_rate, rng,
                   n_bins, root=None):
    """Grow the tree of column ``k`` of a round on the chunks of ``X`` (dask) and ``y``.

    ``predictors`` are the rounds released before this one (the gradients of
    a round are taken at its start, as in memory). The splits and the leaves'
    noise are drawn on the client from ``rng``, in the in-memory order.
    ``root``, when given, is the root's histograms (:func:`root_sums`): no
    pass for the root.
    """
    common = dict(rows=rows, predictors=tuple(predictors), k=k)

    def split_level(level, feature, threshold):
        if level == 0 and root is not None:
            return splitter.choose(root, rng)
        sums = row_sums(partial(_level_sums, feature=feature.copy(), level=level,
                                threshold=None if threshold is None else threshold.copy(),
                                splitter=splitter, n_bins=n_bins, **common), X, y)
        return splitter.choose(sums, rng)

    def leaves(feature, threshold):
        G, H = row_sums(partial(_leaf_sums, feature=feature.copy(), threshold=threshold.copy(),
                                depth=max_depth, **common), X, y)
        return splitter.release_leaves(G, H, rng)

    return grow_levels(split_level, leaves, max_depth=max_depth, splitter=splitter,
                       learning_rate=learning_rate)
