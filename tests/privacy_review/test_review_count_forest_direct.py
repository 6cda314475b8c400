"""Class-count trees and forests against a direct counter that shares nothing.

The fit's counts come from :class:`skdp.tree._histogram.LevelCounts`: the roots
counted once per fit, the root's children once per root split, each child's
counts from its parent's (sibling subtraction, ``children``). The claim is the
same integers as counting each node's rows, so the same trees bit for bit.
Here the fit runs a second time with a counter that counts every level's rows
directly (``np.add.at``, no layout, no cache, no subtraction) and moves the
rows to the leaves to count them there, on odd shapes: one row, a feature of
one value (every row in one child), missing values, categorical codes, one
class, many levels (empty nodes), features drawn per node, threads.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.ensemble import DPRandomForestClassifier
from skdp.tree import DPDecisionTreeClassifier, _classes, _histogram


class _DirectCounts:
    """What CountSplitter and grow_count_tree read from LevelCounts, counted row by row."""

    made = 0

    def __init__(self, binned, n_bins):
        self.binned, self.n_bins = binned, n_bins
        type(self).made += 1

    def counts(self, node, n_nodes, label, n_classes, features):
        self.level = (node.copy(), n_nodes, label, n_classes)
        hist = np.zeros((n_classes, n_nodes, len(features), self.n_bins), dtype=np.int64)
        for i, j in enumerate(features):
            np.add.at(hist, (label, node, i, self.binned[:, j]), 1)
        return hist.astype(np.float64)

    def children(self, feature, table):
        node, n_nodes, label, n_classes = self.level
        rows = np.arange(node.size)
        child = 2 * node + np.asarray(table, bool)[node, self.binned[rows, feature[node]]]
        counts = np.zeros((n_classes, 2 * n_nodes), dtype=np.int64)
        np.add.at(counts, (label, child), 1)
        return counts


def _direct(monkeypatch):
    """Make the fits count directly: LevelCounts replaced by _DirectCounts."""
    seen = {}
    make_bins = _classes.make_bins

    def recording(binned, n_bins, **kwargs):
        seen["binned"], seen["n_bins"] = binned, n_bins
        return make_bins(binned, n_bins, **kwargs)

    monkeypatch.setattr(_classes, "make_bins", recording)
    monkeypatch.setattr(_classes, "LevelCounts",
                        lambda bins, roots=None, splits=None: _DirectCounts(seen["binned"],
                                                                            seen["n_bins"]))


def _case(seed):
    """(X, y, classes, estimator params) of an odd shape drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 2, 3, 40, 300, 1200]))
    d = int(rng.integers(1, 6))
    X = rng.random((n, d))
    X[:, rng.random(d) < 0.3] = 0.5  # a feature of one value: every row in one child
    X[rng.random((n, d)) < 0.1] = np.nan  # the missing bin
    k = int(rng.integers(1, 5))
    y = (np.nan_to_num(X[:, 0]) * k).astype(int) % k
    y = np.where(np.isnan(X[:, 0]), rng.integers(0, k, n), y)
    y[rng.random(n) < 0.2] = rng.integers(0, k)
    params = dict(max_depth=int(rng.integers(1, 8)), max_bins=int(rng.choice([2, 5, 32, 255])),
                  bounds=(0.0, 1.0), classes=list(range(k)), random_state=seed)
    data = X
    if rng.random() < 0.5:  # a categorical feature of the DataFrame's dtype
        data = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
        cats = ["a", "b", "c", "d"][: int(rng.integers(1, 5))]
        values = np.array(cats + [None], dtype=object)[rng.integers(0, len(cats) + 1, n)]
        data["c"] = pd.Categorical(values, categories=cats)
        params["max_bins"] = max(params["max_bins"], len(cats))
    return data, y, params


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
@pytest.mark.parametrize("seed", range(16))
def test_count_trees_equal_the_direct_counts_bit_for_bit(monkeypatch, seed, epsilon):
    data, y, params = _case(seed)
    rng = np.random.default_rng(1000 + seed)
    n_trees = int(rng.integers(2, 6))
    if rng.random() < 0.7:
        make = lambda: DPRandomForestClassifier(  # noqa: E731
            n_estimators=n_trees, epsilon=epsilon, n_jobs=2, **params)
    else:
        make = lambda: DPDecisionTreeClassifier(epsilon=epsilon, **params)  # noqa: E731
    # every shared feature counted by subtraction, and small blocks of rows; either layout
    monkeypatch.setattr(_histogram, "SUBTRACT_COST", (-1.0, 0.0))
    monkeypatch.setattr(_histogram, "SPARSE_DENSITY", 1.0 if seed % 2 else -1.0)
    monkeypatch.setattr(_histogram, "CHUNK_ROWS", 64)
    models, made = [], _DirectCounts.made
    for direct in (False, True):
        if direct:
            _direct(monkeypatch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            models.append(make().fit(data, y))
    fast, slow = models
    assert _DirectCounts.made - made == len(slow._trees)  # every tree counted directly
    assert len(fast._trees) == len(slow._trees) >= 1
    for a, b in zip(fast._trees, slow._trees, strict=True):
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_array_equal(a.threshold, b.threshold)
        assert a.value.tobytes() == b.value.tobytes()
        assert a.split_gain.tobytes() == b.split_gain.tobytes()
    assert fast.predict_proba(data).tobytes() == slow.predict_proba(data).tobytes()
