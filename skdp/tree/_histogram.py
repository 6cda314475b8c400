"""Gradient and hessian histograms of the nodes of one tree level.

Every (node, feature, bin) sum but one per (node, feature) is the sum of the
rows' weights in increasing row order; each node's most common bin of a
feature gets the node's total minus its other bins (the subtraction trick of
LightGBM, Ke et al. 2017, Sec. 3, used per bin). Two layouts compute exactly
these sums, bit for bit:

- :class:`SparseBins` keeps only the entries outside each feature's most
  common bin (a one-hot column is mostly 0), as (row, flat offset) int64 pairs:
  16 bytes per kept entry, time in their number;
- :class:`DenseBins` keeps the uint8 binned matrix, one contiguous column per
  feature (1 byte per entry, as scikit-learn's bins), and adds every row.

:func:`make_bins` chooses between them by the binned matrix's density. This is
internal arithmetic on exact sums before any noise: nothing here is released,
and the two layouts give the same histograms (tests/tree/test_histogram.py), so
the choice changes no released value, only the time and memory of a fit.

The class-count trees need counts, not weighted sums: ``counts`` gives the
(class, node, feature, bin) row counts of some features in one pass without
weights. Counts are integers, exact in float64 whatever the order of the
additions, so they equal the sums of the one-hot class weights bit for bit.
"""

import numpy as np

__all__ = ["DenseBins", "SparseBins", "make_bins", "root_counts"]

# make_bins keeps the sparse layout when at most this fraction of the binned entries lies
# outside their feature's most common bin. The dense columns are the binned matrix itself
# (no memory beyond it); the sparse pairs add 16 bytes per kept entry (2 bytes per entry of
# the matrix at 1/8, a quarter of a float64 X) and are faster on sparser matrices. Measured
# by benchmarks/bench_trees.py --layouts on 2·10^5 × 50 entries, 33 bins, building the layout
# and 3 trees of 2 levels (medians of 5 interleaved rounds, docs/benchmarks.md "Boosting at
# scale"), sparse / dense: 80 / 191 ms at 1/64, 102 / 186 ms at 1/16, 152 / 181 ms at 1/8,
# 280 / 156 ms at 1/4, 496 / 133 ms at 1/2.
SPARSE_DENSITY = 1 / 8

# DenseBins sums this many rows at a time (every feature), so that their weights stay in the
# cache: see DenseBins.histograms. The histograms of one tree of 2 levels, medians of 3
# interleaved rounds, blocks of 2^13 / 2^14 / 2^15 / 2^16 / 2^17 rows: 0.45 / 0.38 / 0.36 /
# 0.43 / 0.46 s on 5·10^6 × 20 (0.80 s in one pass over all the rows), 0.175 / 0.166 / 0.159 /
# 0.167 / 0.195 s on 10^6 × 50 (0.21 s in one pass).
CHUNK_ROWS = 2**15

# LevelCounts counts the rows of the smaller children (m of the n rows) for the s >= 2
# features of a level that the level above counted when m·(a + c·s) + n < n·s: the costs of
# a pass over one column of every row as the unit, a the selection's per row (the rows'
# class and node gathered), c the gathered rows' per feature (the column gathered, then
# added and counted), and n for finding the rows (their nodes' sizes and positions).
# Measured on 10^6 rows, 33 bins, 16 nodes, 2 classes (one pass 1.6-1.8 ms): a selected
# row costs about 2 passes per feature (3.7 ns of gather, add and count) and 3 for its class
# and node. 18 features: 13.3 ms for 20% of the rows against 32.5 ms for every row, 18.9 /
# 29.2 ms at 35%, 27.6 / 29.7 ms at 50% (the rule counts every row there).
SUBTRACT_COST = (3.0, 2.0)


def _common_bins(columns, n_bins, counts=None):
    """Each feature's most common bin (the first of the most common) and its count.

    ``counts`` (d, n_bins), each feature's rows per bin, when already counted;
    else counted by blocks of rows (integers: the same counts), so that no
    column is converted to a whole int array at once.
    """
    if counts is None:
        counts = np.zeros((len(columns), n_bins), dtype=np.int64)
        n = columns.shape[1] if len(columns) else 0
        for start in range(0, n, max(1, CHUNK_ROWS)):
            for j, col in enumerate(columns):
                counts[j] += np.bincount(col[start:start + CHUNK_ROWS], minlength=n_bins)
    common = counts.argmax(axis=1).astype(np.int64)
    return common, counts[np.arange(common.size), common]


def root_counts(binned, label, n_classes, n_bins):
    """Every feature's class counts over every row: int64 (k, 1, d, n_bins).

    ``label`` is each row's class in 0..k − 1. These are the root's counts
    of every class-count tree grown on these rows (:class:`LevelCounts`'s
    ``roots``) and, summed over the classes, each feature's rows per bin
    (:func:`make_bins`'s ``bin_counts``): one pass of
    :meth:`DenseBins.int_counts` for both.
    """
    columns = np.asfortranarray(binned)
    n, d = columns.shape
    layout = DenseBins(columns, n_bins, common=np.zeros(d, dtype=np.int64))  # not read here
    return layout.int_counts(np.zeros(n, dtype=np.intp), 1, label, n_classes, np.arange(d))


def make_bins(binned, n_bins, *, bin_counts=None):
    """The histogram layout of the uint8 binned matrix (n, d): dense, or sparse if mostly common.

    The rule reads the binned matrix's density, a property of the data, but
    only to choose how exact sums are computed: :class:`DenseBins` and
    :class:`SparseBins` give bit-identical histograms, so nothing released
    depends on the choice. ``bin_counts`` (d, n_bins), each feature's rows
    per bin when the caller has counted them (:func:`root_counts`), spares
    the rule its own pass over the rows.
    """
    n, d = binned.shape
    columns = np.asfortranarray(binned)  # one contiguous column per feature
    common, n_common = _common_bins(columns.T, n_bins, bin_counts)
    outside = n * d - int(n_common.sum())
    if outside <= SPARSE_DENSITY * n * d:
        return SparseBins(binned, n_bins, common=common)
    return DenseBins(columns, n_bins, common=common)


def _fill_common(hist, common, totals):
    """Give each node's most common bin its total less the other bins.

    ``hist`` (n_nodes, d, b) holds 0.0 in the common bins; ``totals`` are the
    nodes' sums in row order (as ``np.bincount(node, weights)``). The same
    arithmetic for both layouts: the other bins' sum by ``ndarray.sum`` over
    the last axis.
    """
    rest = totals[:, None] - hist.sum(axis=2)
    hist[:, np.arange(hist.shape[1]), common] += rest


class SparseBins:
    """The binned matrix, kept as its entries outside each feature's most common bin."""

    def __init__(self, binned, n_bins, *, common=None):
        self.n_rows, self.n_features = binned.shape
        self.n_bins = n_bins
        d = self.n_features
        if common is None:
            common = np.array([np.bincount(binned[:, j], minlength=n_bins).argmax()
                               for j in range(d)], dtype=np.int64)
        self.common = common
        # The entries feature by feature, each feature's in increasing row order (a cell of
        # the histograms gets one feature's entries only, so its rows still add in order).
        by_feature = binned.T
        # The entries' flat positions in by_feature, in the order of a 2-D np.nonzero: on
        # Adult's 105 × 32,561 bins, flatnonzero and a divmod took 5–7 ms against 9–11 ms for
        # np.nonzero, and the flat gather of the bins 1–2 ms against 3 ms for the 2-D one.
        flat = np.flatnonzero(by_feature != self.common[:, None].astype(binned.dtype))
        cols, rows = np.divmod(flat, self.n_rows)
        self.rows = rows
        # Flat position (feature, bin) of each entry, in a (d, n_bins) block.
        self.offset = cols * n_bins + np.ravel(by_feature)[flat].astype(np.int64)
        self.starts = np.concatenate([[0], np.cumsum(np.bincount(cols, minlength=d))])

    def histograms(self, node, n_nodes, weights):
        """Sums of ``weights`` per (node, feature, bin): an array (n_nodes, d, n_bins).

        ``node`` (int array, one per row) is each row's node on the level.
        """
        d, b = self.n_features, self.n_bins
        flat = node[self.rows] * (d * b) + self.offset
        # Each feature's entries are in increasing row order: each bin adds its rows in order.
        hist = np.bincount(flat, weights=weights[self.rows], minlength=n_nodes * d * b)
        hist = hist.astype(np.float64, copy=False).reshape(n_nodes, d, b)
        totals = np.bincount(node, weights=weights, minlength=n_nodes)
        _fill_common(hist, self.common, totals)
        return hist, totals

    def counts(self, node, n_nodes, label, n_classes, features):
        """Row counts per (class, node, feature, bin) of ``features``: float (k, n_nodes, f, b).

        ``label`` (int array, one per row) is each row's class in 0..k − 1.
        The entries of ``features`` are taken (runs of entries, one per
        feature) when they are fewer than half of all, else every feature's
        entries are counted and ``features`` taken from them.
        """
        return self.int_counts(node, n_nodes, label, n_classes, features).astype(np.float64)

    def int_counts(self, node, n_nodes, label, n_classes, features):
        """:meth:`counts` as int64."""
        d, b = self.n_features, self.n_bins
        features = np.asarray(features, dtype=np.intp)
        f = features.size
        group = label * n_nodes + node  # (class, node) of each row
        first, length = self.starts[features], np.diff(self.starts)[features]
        # One new array as long as the entries, added to in place; the indices are in range
        # (take's mode="clip" skips a buffer). On Adult's 282,075 entries, a forest's 50
        # calls took 45-48 ms against 51-56 ms with an array per step.
        if 2 * length.sum() < self.rows.size:
            runs = [slice(s, s + m) for s, m in zip(first, length)] or [slice(0, 0)]
            rows = np.concatenate([self.rows[run] for run in runs])
            key = np.concatenate([self.offset[run] for run in runs])
            key += np.repeat((np.arange(f) - features) * b, length)  # (feature, bin) in f
            key += np.take(group * (f * b), rows, mode="clip")
            hist = np.bincount(key, minlength=n_classes * n_nodes * f * b)
            hist = hist.reshape(n_classes, n_nodes, f, b)
        else:
            key = np.take(group * (d * b), self.rows, mode="clip")
            key += self.offset
            hist = np.bincount(key, minlength=n_classes * n_nodes * d * b)
            hist = hist.reshape(n_classes, n_nodes, d, b)
            if f < d:
                hist = hist[:, :, features]
        totals = np.bincount(group, minlength=n_classes * n_nodes).reshape(n_classes, n_nodes)
        hist[:, :, np.arange(f), self.common[features]] = totals[:, :, None] - hist.sum(axis=3)
        return hist


class DenseBins:
    """The binned matrix as uint8 columns (1 byte per entry); every row is added.

    ``columns`` is the (n, d) uint8 binned matrix; a Fortran-ordered one is
    kept as it is (no copy). ``common`` is each feature's most common bin.
    """

    def __init__(self, columns, n_bins, *, common=None):
        self.columns = np.asfortranarray(columns, dtype=np.uint8)
        self.n_rows, self.n_features = self.columns.shape
        self.n_bins = n_bins
        if common is None:
            common = _common_bins(self.columns.T, n_bins)[0]
        self.common = common

    def histograms(self, node, n_nodes, weights):
        """Sums of ``weights`` per (node, feature, bin): an array (n_nodes, d, n_bins).

        The same sums as :meth:`SparseBins.histograms`, bit for bit: np.bincount
        adds each bin's rows in increasing row order, and the most common bins,
        whose rows the sparse layout never adds, are set to 0.0 before they get
        the node's total less the other bins.
        """
        d, b = self.n_features, self.n_bins
        n_cells = n_nodes * b
        weights = np.asarray(weights, dtype=np.float64)
        sums = np.zeros((d, n_cells))  # (feature, node · b + bin), the sums so far
        rows = max(1, CHUNK_ROWS)
        # A block of rows at a time, every feature, so that the block's weights stay in the
        # cache. Each np.bincount starts from the block's earlier sums, given as its first
        # n_cells entries: 0.0 + s is s exactly (a sum that starts at +0.0 is never −0.0),
        # then the block's rows follow in order, so every sum adds its rows one at a time
        # in increasing row order, as one np.bincount over all the rows would. The nodes'
        # totals are summed the same way, from the block's weights while they are cached.
        index = np.empty(n_cells + min(rows, self.n_rows), dtype=np.intp)
        index[:n_cells] = np.arange(n_cells)
        values = np.empty(index.size)
        totals = np.zeros(n_nodes)
        by_node = np.zeros(n_nodes + min(rows, self.n_rows), dtype=np.intp)
        by_node[:n_nodes] = np.arange(n_nodes)
        for start in range(0, self.n_rows, rows):
            stop = min(start + rows, self.n_rows)
            m = n_cells + stop - start
            idx, val = index[:m], values[:m]
            val[n_cells:] = weights[start:stop]
            val[n_cells - n_nodes:n_cells] = totals  # n_nodes <= n_cells
            if n_nodes > 1:  # with one node, every row's is 0
                by_node[n_nodes:n_nodes + stop - start] = node[start:stop]
            totals = np.bincount(by_node[:n_nodes + stop - start],
                                 weights=val[n_cells - n_nodes:], minlength=n_nodes)
            base = None if n_nodes == 1 else node[start:stop] * b
            for j in range(d):
                col = self.columns[start:stop, j]
                if base is None:
                    idx[n_cells:] = col
                else:
                    np.add(base, col, out=idx[n_cells:])
                val[:n_cells] = sums[j]
                sums[j] = np.bincount(idx, weights=val, minlength=n_cells)
        hist = np.ascontiguousarray(sums.reshape(d, n_nodes, b).transpose(1, 0, 2))
        hist[:, np.arange(d), self.common] = 0.0
        _fill_common(hist, self.common, totals)
        return hist, totals

    def counts(self, node, n_nodes, label, n_classes, features, rows=None):
        """Row counts per (class, node, feature, bin) of ``features``: float (k, n_nodes, f, b).

        As :meth:`SparseBins.counts`: one ``np.bincount`` of each feature's
        column offset by each row's (class, node), every bin counted.
        ``rows`` (increasing row indices), when given, counts those rows only.
        """
        return self.int_counts(node, n_nodes, label, n_classes, features, rows).astype(np.float64)

    def int_counts(self, node, n_nodes, label, n_classes, features, rows=None):
        """:meth:`counts` as int64."""
        b = self.n_bins
        cells = n_classes * n_nodes * b
        hist = np.zeros((len(features), cells), dtype=np.int64)
        n = self.n_rows if rows is None else rows.size
        block = max(1, CHUNK_ROWS)
        # uint16 cells when they fit: its addition of the uint8 column is faster than intp's
        # (np.bincount converts to intp either way), 34 against 37-42 ms for 20 columns of
        # 10^6 rows, 16 nodes and 33 bins
        index = np.empty(min(block, n), dtype=np.uint16 if cells <= 2**16 else np.intp)
        column = np.empty(0 if rows is None else index.size, dtype=np.uint8)
        for start in range(0, n, block):  # blocks of rows: their index in the cache
            stop = min(start + block, n)
            if rows is None:
                where = slice(start, stop)
            else:
                where = rows[start:stop]
            base = (label[where] * n_nodes + node[where]) * b  # (class, node)
            base = base.astype(index.dtype, copy=False)
            idx = index[:stop - start]
            for i, j in enumerate(features):
                if rows is None:
                    np.add(base, self.columns[start:stop, j], out=idx)
                else:  # the block's rows of the column: a gather in increasing row order
                    np.add(base, np.take(self.columns[:, j], where, out=column[:stop - start]),
                           out=idx)
                hist[i] += np.bincount(idx, minlength=cells)  # integers: any order
        return hist.reshape(-1, n_classes, n_nodes, b).transpose(1, 2, 0, 3)


class LevelCounts:
    """One tree's class counts, level by level, the larger child of each split by subtraction.

    Wraps a layout for :meth:`CountSplitter.split <skdp.tree._classes.CountSplitter.split>`
    (its ``counts`` and ``n_bins``); one per tree, called once per level in
    order (root first; level l has 2^l nodes, node i's children are 2i and
    2i + 1). The sibling subtraction of LightGBM (Ke et al. 2017, Sec. 3) and
    scikit-learn's HistGradientBoosting, on counts: a child's counts are its
    parent's less its sibling's, integers, so exactly the counts of its rows.
    For the features that both this level and the one above count, only the
    rows of each parent's child with fewer rows (the left one on a tie) are
    counted (when the rule of ``SUBTRACT_COST`` expects it to be faster);
    the other features are counted from every row. :meth:`children`, given
    the level's splits, sums the split features' counts into each child's
    class counts: the next level's node sizes (which child is smaller,
    without a pass over the rows) and, after the last level, the leaves'
    counts.

    No privacy change: the counts are the same integers as
    :meth:`DenseBins.counts` of every row gives, so the trees are the same
    bit for bit and nothing released changes. Which child is counted, and
    whether, is internal arithmetic on the nodes' row counts, never
    released; it moves only the time of the fit, as the choice of layout
    by :func:`make_bins` does. The sparse layout counts every row (its
    entries have no cheap subset of rows). The counts kept from the level
    above are int64 (k, nodes, features, bins) with half the nodes of the
    level being counted.

    ``roots``, a dict shared by the trees of one fit (the same rows and
    labels), keeps the root's counts of each feature once counted: every
    tree's root holds every row, so its counts of a feature are the same
    integers in every tree. ``splits``, shared likewise, keeps the root's
    children's counts of each feature by the root's split (its feature and
    table, told by :meth:`children`): trees whose roots split alike (the
    exponential mechanism often draws the same best split) have children
    of the same rows, so the same counts.
    """

    def __init__(self, bins, roots=None, splits=None):
        self.bins = bins
        self.n_bins = bins.n_bins
        self.roots = {} if roots is None else roots  # feature: int64 (k, 1, 1, bins)
        # (root's feature, its table's bytes, feature): int64 (k, 2, 1, bins)
        self.splits = {} if splits is None else splits
        self._kept = None  # (n_nodes, features, int64 counts) of the level above
        self._sizes = None  # the rows of each node of the next level, from children()
        self._root_split = None  # the root's (feature, table's bytes), from children()

    def counts(self, node, n_nodes, label, n_classes, features):
        """Row counts per (class, node, feature, bin) of ``features`` (increasing): float.

        The same numbers as ``bins.counts(node, n_nodes, label, n_classes,
        features)``, an array (k, n_nodes, f, b).
        """
        features = np.asarray(features, dtype=np.intp)
        kept, self._kept = self._kept, None
        sizes, self._sizes = self._sizes, None
        split, self._root_split = self._root_split, None
        if n_nodes == 1:
            hist = self._root_counts(node, label, n_classes, features)
        elif n_nodes == 2 and split is not None:
            # The root's children hold the same rows in every tree whose root splits alike:
            # their counts of a feature are counted once per fit and such split.
            hist = _kept_per_feature(
                self.splits, lambda j: split + (j,), features, (n_classes, 2, 0, self.n_bins),
                lambda new: self._level_counts(node, n_nodes, label, n_classes, new, kept,
                                               sizes))
        else:
            hist = self._level_counts(node, n_nodes, label, n_classes, features, kept, sizes)
        self._kept = (n_nodes, features, hist)
        return hist.astype(np.float64)

    def _level_counts(self, node, n_nodes, label, n_classes, features, kept, sizes):
        """The int64 counts of a level below the root: by subtraction where it pays (dense)."""
        if not isinstance(self.bins, DenseBins):
            return self.bins.int_counts(node, n_nodes, label, n_classes, features)
        shared = np.zeros(features.size, dtype=bool)
        if kept is not None and kept[0] * 2 == n_nodes:
            shared = np.isin(features, kept[1])
        if sizes is None or sizes.size != n_nodes:
            sizes = None
        small = self._smaller_children(node, n_nodes, int(shared.sum()), sizes)
        if small is None:
            return self.bins.int_counts(node, n_nodes, label, n_classes, features)
        is_small = np.zeros(n_nodes, dtype=bool)
        is_small[small] = True
        rows = np.flatnonzero(is_small[node])  # increasing
        counted = self.bins.int_counts(node, n_nodes, label, n_classes, features[shared], rows)
        parent = kept[2][:, :, np.searchsorted(kept[1], features[shared])]
        counted[:, small ^ 1] = parent - counted[:, small]  # integers: exact
        if shared.all():
            return counted
        hist = np.empty((n_classes, n_nodes, features.size, self.n_bins), np.int64)
        hist[:, :, shared] = counted
        hist[:, :, ~shared] = self.bins.int_counts(node, n_nodes, label, n_classes,
                                                   features[~shared])
        return hist

    def _root_counts(self, node, label, n_classes, features):
        """The root's int64 counts of ``features``, each feature's counted once per fit."""
        return _kept_per_feature(
            self.roots, lambda j: j, features, (n_classes, 1, 0, self.n_bins),
            lambda new: self.bins.int_counts(node, 1, label, n_classes, new))

    def children(self, feature, table):
        """Each child's class counts, from the level's counts and splits: int64 (k, 2·n_nodes).

        Node i of the level last counted splits on ``feature[i]`` by the bool
        row ``table[i]`` (True: the bin's rows go right, as in
        :mod:`._grower`); its children are 2i and 2i + 1. The right child's
        counts are the sums of the node's counts of that feature over the
        bins that go right, the left child's the node's counts less them:
        integers, so exactly the counts of the children's rows. A node whose
        feature the level did not count must send every row left (its table
        all False), as :class:`~skdp.tree._classes.CountSplitter`'s do.
        The children's sizes are kept for the next level's :meth:`counts`.
        """
        n_nodes, features, hist = self._kept
        if n_nodes == 1:  # the root's split decides its children's rows
            self._root_split = (int(feature[0]), np.asarray(table[0], dtype=bool).tobytes())
        # where each node's feature is among the counted ones (an uncounted one's row is False)
        at = np.minimum(np.searchsorted(features, feature), features.size - 1)
        right = (hist[:, np.arange(n_nodes), at] * np.asarray(table, dtype=bool)).sum(axis=2)
        total = hist[:, :, 0].sum(axis=2)  # each node's rows of one feature: all its rows
        both = np.stack([total - right, right], axis=2).reshape(hist.shape[0], 2 * n_nodes)
        self._sizes = both.sum(axis=0)
        return both

    def _smaller_children(self, node, n_nodes, n_shared, sizes=None):
        """The child with fewer rows of each parent (heap order), or None to count every row.

        None unless the rule of ``SUBTRACT_COST`` expects the subtraction to be
        faster for ``n_shared`` features (never for fewer than 2). ``sizes``,
        each node's rows when known (:meth:`children`), saves their count.
        """
        n = node.shape[0]
        if n_shared < 2:
            return None
        if sizes is None:
            sizes = np.bincount(node, minlength=n_nodes)
        size = sizes.reshape(-1, 2)  # (parent, child)
        a, c = SUBTRACT_COST
        if int(size.min(axis=1).sum()) * (a + c * n_shared) + n >= n * n_shared:
            return None
        return 2 * np.arange(n_nodes // 2) + (size[:, 1] < size[:, 0])


def _kept_per_feature(kept, key, features, empty_shape, count):
    """int64 counts (k, nodes, f, bins) of ``features``, each feature's kept in ``kept``.

    ``kept[key(j)]`` holds feature j's counts (k, nodes, 1, bins) once
    counted; the features not kept yet are counted together by
    ``count(features)`` and kept.
    """
    new = np.array([j for j in features if key(j) not in kept], dtype=np.intp)
    if new.size:
        counted = count(new)
        for i, j in enumerate(new):
            kept[key(j)] = counted[:, :, i:i + 1]
    empty = np.zeros(empty_shape, dtype=np.int64)
    return np.concatenate([empty] + [kept[key(j)] for j in features], axis=2)
