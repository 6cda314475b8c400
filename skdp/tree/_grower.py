"""Depth-wise growth of one tree, and the fitted tree's predictor.

A tree is complete to ``max_depth``: its shape is public (it never depends
on the data), so the cost of a fit is fixed by its parameters. Nodes are
numbered as a heap (root 0, children 2i + 1 and 2i + 2). A splitter gives
each node a feature and a boolean row over its bins: a row goes right when
its bin's entry is True. That holds a numeric threshold with the direction
of the missing bin (:mod:`._candidates`) as well as a categorical feature's
set of categories. A node that the exact splitter leaves unsplit sends
every row left (a row of False). An int threshold per node (a row goes
right when its bin is >= it) is accepted too.

Each split's gain is computed from the leaves' released sums alone (the
noisy class counts, or the noisy gradient and hessian sums): a node's sums
are the sums of its leaves', and its gain is the impurity of its sums less
its children's, by the splitter's ``impurity``. That is post-processing;
:func:`feature_importances` adds the gains up by feature.
"""

import numpy as np

__all__ = ["TreePredictor", "descend", "feature_importances", "grow_levels", "grow_tree"]


class TreePredictor:
    """A fitted tree: split features and threshold bins per inner node, values per leaf.

    ``threshold`` is an int array (n_inner,), or a bool array (n_inner, n_bins)
    whose entry [node, bin] is True when the bin goes right. ``split_gain``
    (n_inner,) is each split's gain from the leaves' released sums (>= 0).
    """

    def __init__(self, feature, threshold, value, split_gain=None):
        self.feature = feature
        self.threshold = threshold
        self.value = value
        self.split_gain = split_gain
        self.depth = int(np.log2(value.shape[0]))

    def leaf_index(self, binned):
        table = self.threshold
        if table.ndim == 1:  # int thresholds: bins >= the threshold go right
            table = np.arange(256)[None, :] >= table[:, None]
        return descend(binned, self.feature, table, self.depth)

    def predict(self, binned):
        return self.value[self.leaf_index(binned)]


# _children works on blocks of BLOCK rows, so that its temporaries (intp, one per row of the
# block) stay in the cache and the rows' nodes are read, and their children written, once. A
# level of 2 nodes picks each row's column by its node; with more it gathers each row's bin by
# its node's feature. Measured at 10^6 rows, 20 features, 33 bins (cold cache, one thread):
# 1.6 / 3.9 / 4.9 / 5.3 / 5.9 ms for 1 / 2 / 4 / 8 / 16 nodes against 3.3 / 4.9 / 6.2 / 9.0 /
# 9.9 ms before (node by node up to 4 nodes, then a gather over every row at once).
BLOCK = 1 << 14


def _children(binned, local, n_nodes, feature, table, out=None):
    """Each row's node on the next level, 2·node + (1 if its bin goes right), from its node.

    ``local`` (intp, one per row) is each row's node among the level's
    ``n_nodes``; node i splits on ``feature[i]`` by the bool row ``table[i]``.
    Each row's bin of its node's feature, ``binned[row, feature[local[row]]]``,
    then one lookup of (node, bin) in a table of the children. ``out``, when
    given, is an intp array other than ``local`` that receives the result.
    Every bin is below ``table.shape[1]`` and every node below ``n_nodes``, as
    the binning and the grower make them (not checked: the lookups clip).
    """
    table = np.asarray(table, dtype=bool)
    n, n_bins = local.shape[0], table.shape[1]
    if out is None:
        out = np.empty(n, dtype=np.intp)
    feature = np.asarray(feature, dtype=np.intp)
    child = (2 * np.arange(n_nodes)[:, None] + table).ravel()  # (node, bin) → its child
    columns = np.asfortranarray(binned)  # one contiguous column per feature
    flat = columns.T.ravel()  # feature by feature: a view of columns
    offset = feature * n  # node i's feature's column in flat
    step = np.arange(min(BLOCK, n))
    for start in range(0, n, BLOCK):  # the indices are in range: mode="clip" skips a buffer
        stop = min(start + BLOCK, n)
        node = local[start:stop]
        if n_nodes == 1:  # every row in node 0: its bin is its key
            np.take(child, columns[start:stop, feature[0]], out=out[start:stop], mode="clip")
            continue
        if n_nodes == 2:
            column = columns[start:stop, feature[0]].copy()  # node 1's rows take its
            if feature[1] != feature[0]:  # column: uint8 arithmetic mod 256
                move = columns[start:stop, feature[1]] - column
                move *= (node == 1).view(np.uint8)
                column += move
        else:
            where = np.take(offset + start, node, mode="clip")
            where += step[:stop - start]
            column = flat.take(where, mode="clip")
        key = node * n_bins
        key += column
        np.take(child, key, out=out[start:stop], mode="clip")
    return out


def grow_tree(bins, binned, g, h, *, max_depth, splitter, learning_rate, rng, report=None,
              nodes=None):
    """Grow one tree on gradients ``g`` and hessians ``h``; returns (predictor, each row's leaf).

    ``report(level)``, when given, is called after each level's splits (1..max_depth).
    ``nodes``, when given, is two intp arrays of one entry per row that receive
    the rows' nodes level after level, in turn (a caller growing many trees
    reuses them: no new array as large as a column per level); the returned
    leaves are one of them.
    """
    n = binned.shape[0]
    if nodes is None:
        nodes = (np.zeros(n, dtype=np.intp), np.empty(n, dtype=np.intp))
    else:
        nodes[0][...] = 0
    rows = {"local": nodes[0]}  # each row's node among the level's nodes

    def split_level(level, feature, threshold):
        n_nodes = 2**level
        f, t = splitter.split(bins, rows["local"], n_nodes, g, h, rng)
        rows["local"] = _children(binned, rows["local"], n_nodes, f, t,
                                  out=nodes[(level + 1) % 2])
        return f, t

    def leaves(feature, threshold):
        return splitter.leaves(rows["local"], 2**max_depth, g, h, rng)

    tree = grow_levels(split_level, leaves, max_depth=max_depth, splitter=splitter,
                       learning_rate=learning_rate, report=report)
    return tree, rows["local"]


def grow_levels(split_level, leaves, *, max_depth, splitter, learning_rate, report=None):
    """Grow one tree level by level from a source of splits and leaf sums; returns the predictor.

    ``split_level(level, feature, threshold)`` gives the (feature, threshold)
    of the level's ``2**level`` nodes, from the splits of the levels above it
    (``feature`` and ``threshold`` of the first ``2**level − 1`` nodes, heap
    order; ``threshold`` is None at the root). ``leaves(feature, threshold)``
    gives the leaves' released (G, H) sums from the whole tree's splits.
    :func:`grow_tree` reads them from rows in memory; the boosting on dask
    from a pass over the chunks per level (the same splitter, the same draws).
    """
    n_inner = 2**max_depth - 1
    feature = np.zeros(n_inner, dtype=np.int64)
    threshold = None
    for level in range(max_depth):
        n_nodes = 2**level
        first = n_nodes - 1
        f, t = split_level(level, feature[:first],
                           None if threshold is None else threshold[:first])
        if threshold is None:
            threshold = np.zeros((n_inner,) + t.shape[1:], dtype=t.dtype)
        feature[first:first + n_nodes] = f
        threshold[first:first + n_nodes] = t
        if report is not None:
            report(level + 1)
    G, H = leaves(feature, threshold)
    value = splitter.leaf_values(G, H, learning_rate)
    gain = _split_gains(splitter.impurity(_node_sums(G), None if H is None else _node_sums(H)))
    return TreePredictor(feature, threshold, value, gain)


def descend(binned, feature, threshold, depth):
    """Each row's node among the ``2**depth`` nodes of level ``depth`` (bool thresholds).

    ``feature`` and ``threshold`` hold at least the splits of the levels
    above ``depth`` (heap order).
    """
    local = np.zeros(binned.shape[0], dtype=np.intp)
    for level in range(depth):
        first, n_nodes = 2**level - 1, 2**level
        local = _children(binned, local, n_nodes, feature[first:first + n_nodes],
                          threshold[first:first + n_nodes])
    return local


def _node_sums(leaf_sums):
    """The sums of every node of a complete tree (heap order), from its leaves' sums."""
    levels = [np.asarray(leaf_sums, dtype=np.float64)]
    while levels[-1].shape[0] > 1:
        below = levels[-1]
        levels.append(below[0::2] + below[1::2])  # nodes 2i + 1 and 2i + 2 are i's children
    return np.concatenate(levels[::-1])


def _split_gains(impurity):
    """Impurity of each inner node less its children's, floored at 0 (noisy sums can invert it)."""
    n_inner = impurity.shape[0] // 2
    inner = np.arange(n_inner)
    gain = impurity[inner] - impurity[2 * inner + 1] - impurity[2 * inner + 2]
    return np.maximum(gain, 0.0)


def feature_importances(trees, n_features, *, per_tree):
    """Gains of the splits added up by feature, as a distribution over the features.

    ``per_tree=True`` normalises each tree's importances first and averages
    them, as scikit-learn's forests do; ``False`` adds every split's gain of
    every tree, as its gradient boosting does. All zeros when no split has a
    positive gain (as scikit-learn, for trees that never split).
    """
    totals = []
    for tree in trees:
        totals.append(np.bincount(tree.feature, weights=tree.split_gain, minlength=n_features))
    totals = np.array(totals).reshape(-1, n_features)
    if per_tree:
        sums = totals.sum(axis=1)
        totals = totals[sums > 0] / sums[sums > 0, None]
    importances = totals.sum(axis=0)
    total = importances.sum()
    return importances / total if total > 0 else importances
