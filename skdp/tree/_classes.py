"""DPDecisionTreeClassifier, and the class-count trees that DPRandomForestClassifier averages.

A tree is complete to ``max_depth`` over the bins of
:mod:`._binning` (public or released bounds; the data's quantiles only at
ε = ∞), grown by :func:`._grower.grow_tree` as the boosted trees of
:mod:`skdp.ensemble` are:

- split: the exponential mechanism (McSherry & Talwar 2007) over every
  (feature, threshold, side of the missing values) of a node (the
  candidates of :mod:`._candidates`, fixed by ``max_bins``), score
  max_k C_L,k + max_k C_R,k (the rows a majority vote in each child gets
  right), whose sensitivity is 1: one row, with or without missing values,
  moves one class count of one child by 1 (the max-count score of
  Friedman & Schuster 2010, Sec. 4.3). One level of a tree is one
  ε_s-exponential mechanism (its nodes hold disjoint rows), ε_s²/8-zCDP
  (Cesar & Rogers 2021, Lemma 3.2).
- leaves: the class counts of every leaf plus Gaussian noise, one
  histogram of L2 sensitivity 1 (Mironov 2017, Prop. 7 for its curve).

At ε = ∞ the split maximises the decrease of the Gini impurity, as
scikit-learn's ``DecisionTreeClassifier``, and the leaves hold exact counts;
a node without missing values in its split feature sends them, at predict,
to the child with more rows.
"""

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve, gaussian_rdp, zcdp_rdp
from ._binning import apply_bins, bin_edges, quantile_edges
from ._candidates import left_sums, numeric_tables
from ._grower import grow_tree
from ._histogram import SparseBins
from ._zcdp import calibrate_rho
from ..stats._range import _bounds_release, check_bounds_or_none, split_curve
from ..utils import DEFAULT_DELTA, check_delta, check_epsilon
from ..utils._validation import check_classes

__all__ = ["DPDecisionTreeClassifier"]

# Share of each tree's ρ spent on its splits (the rest on its leaf counts).
SPLIT_SHARE = 0.5


def tree_curve(epsilon, delta):
    """The curve of class-count trees at (ε, δ): ``zcdp(ρ_split) + gaussian(leaves)``."""
    if epsilon == math.inf:
        return RDPCurve.non_private()
    rho = calibrate_rho(epsilon, delta)
    leaves = gaussian_rdp(1.0 / math.sqrt(2.0 * (1 - SPLIT_SHARE) * rho))
    return zcdp_rdp(SPLIT_SHARE * rho) + leaves


class CountSplitter:
    """Splits and leaves of a class-count tree (see the module docstring)."""

    def __init__(self, *, split_epsilon, count_std, max_features, n_features):
        self.split_epsilon = split_epsilon
        self.count_std = count_std
        self.max_features = max_features
        self.n_features = n_features

    def split(self, bins, node, n_nodes, Y, _, rng):
        """(feature, bool row over the bins: True goes right) of each node."""
        k = Y.shape[1]
        B = bins.n_bins - 1  # the value bins; bin B holds the missing values
        # Left class counts of every (threshold, missing direction): _candidates.
        left = np.stack([left_sums(bins.histograms(node, n_nodes, Y[:, c])[0], B)
                         for c in range(k)])  # (k, nodes, d, 2B − 1)
        totals = np.stack([np.bincount(node, weights=Y[:, c], minlength=n_nodes)
                           for c in range(k)])
        right = totals[:, :, None, None] - left
        if self.split_epsilon == math.inf:  # Gini: Σ_k C_L,k²/n_L + Σ_k C_R,k²/n_R
            n_left, n_right = left.sum(axis=0), right.sum(axis=0)
            with np.errstate(divide="ignore", invalid="ignore"):
                score = (left**2).sum(axis=0) / n_left + (right**2).sum(axis=0) / n_right
            parent = (totals**2).sum(axis=0) / np.maximum(totals.sum(axis=0), 1)
            score = np.where((n_left > 0) & (n_right > 0), score - parent[:, None, None],
                             -np.inf)
        else:  # sensitivity 1: one row moves one class count of one child by 1
            score = 0.5 * self.split_epsilon * (left.max(axis=0) + right.max(axis=0))
            score = score + rng.gumbel(size=score.shape)  # the exponential mechanism
        if self.max_features < self.n_features:  # features drawn per node, public randomness
            drawn = np.argsort(rng.random((n_nodes, self.n_features)), axis=1)
            masked = np.ones((n_nodes, self.n_features), dtype=bool)
            np.put_along_axis(masked, drawn[:, :self.max_features], False, axis=1)
            score = np.where(masked[:, :, None], -np.inf, score)
        flat = score.reshape(n_nodes, -1)
        best = flat.argmax(axis=1)
        feature, candidate = np.divmod(best, 2 * B - 1)
        table = numeric_tables(candidate, B, bins.n_bins)
        if self.split_epsilon == math.inf:
            rows = np.arange(n_nodes)
            none = ~(flat[rows, best] > 1e-12)
            table[none] = False  # no split: every row left
            # A node without missing values of its feature sends them, at predict, to the
            # child with more rows (scikit-learn's DecisionTreeClassifier).
            n_left = left.sum(axis=0)[rows, feature]  # (nodes, 2B − 1)
            n_missing = n_left[:, B] - n_left[:, 0]  # the first threshold, missing left − right
            n_left = n_left[rows, candidate]
            unseen = (n_missing == 0) & ~none
            table[unseen, B] = ~(n_left > totals.sum(axis=0) - n_left)[unseen]
        return feature, table

    def leaves(self, leaf, n_leaves, Y, _, rng):
        counts = np.stack([np.bincount(leaf, weights=Y[:, c], minlength=n_leaves)
                           for c in range(Y.shape[1])], axis=1)
        if self.count_std:
            counts = counts + self.count_std * rng.standard_normal(counts.shape)
        return counts, None

    def leaf_values(self, counts, _, learning_rate):
        """Class probabilities of each leaf from its (noisy) counts: post-processing."""
        counts = np.maximum(counts, 0.0)
        total = counts.sum(axis=1, keepdims=True)
        uniform = np.full_like(counts, 1.0 / counts.shape[1])
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, counts / total, uniform)


def _check_int(value, name, low, high=None):
    if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int; got {value!r}.")
    if value < low or (high is not None and value > high):
        span = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {span}; got {value!r}.")
    return int(value)


class _BaseCountTrees(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Fit ``_n_trees()`` class-count trees on all rows, each with 1/n of the fit's ρ."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = True  # a bin of its own; ±inf is refused
        return tags

    def _n_trees(self):
        return 1

    def _max_features(self, d):
        return d

    def _check_params(self, n_features):
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        if epsilon < math.inf and delta == 0.0:
            raise ValueError("delta must be > 0 for finite epsilon: the Gaussian leaf counts "
                             "never give pure DP.")
        _check_int(self.max_depth, "max_depth", 1, 12)
        _check_int(self.max_bins, "max_bins", 2, 255)
        return epsilon, delta, check_bounds_or_none(self.bounds, n_features)

    def fit(self, X, y):
        """Fit the trees; charges ``budget`` once, before reading the data's values.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan")
        d = X.shape[1]
        epsilon, delta, bounds = self._check_params(d)
        n_trees = self._n_trees()
        max_features = self._max_features(d)
        private = epsilon != math.inf
        classes = check_classes(y, self.classes, private=private, min_classes=1)
        rng = self._check_generator()
        if private and bounds is None:
            eps_bounds, eps_trees, curve = split_curve(epsilon, delta, d,
                                                       lambda e: tree_curve(e, delta))
        else:
            eps_bounds, eps_trees, curve = None, epsilon, tree_curve(epsilon, delta)
        self._charge_budget(curve)

        if eps_bounds is not None:
            bounds = _bounds_release(X, epsilon=eps_bounds, delta=delta, rng=rng)
        if bounds is not None:
            edges = bin_edges(bounds[0], bounds[1], self.max_bins)
        else:
            edges = quantile_edges(X, self.max_bins)
        binned = apply_bins(X, edges)
        bins = SparseBins(binned, self.max_bins + 1)  # the values' bins and the missing bin
        Y = (y[:, None] == classes[None, :]).astype(float)
        if private:  # n trees of ρ/n each compose to ρ (Bun & Steinke 2016, Lemma 2.3)
            rho = calibrate_rho(eps_trees, delta) / n_trees
            split_epsilon = math.sqrt(8.0 * SPLIT_SHARE * rho / self.max_depth)
            count_std = 1.0 / math.sqrt(2.0 * (1 - SPLIT_SHARE) * rho)
        else:
            split_epsilon, count_std = math.inf, 0.0
        splitter = CountSplitter(split_epsilon=split_epsilon, count_std=count_std,
                                 max_features=max_features, n_features=d)
        self._trees = [grow_tree(bins, binned, Y, None, max_depth=self.max_depth,
                                 splitter=splitter, learning_rate=1.0, rng=rng)[0]
                       for _ in range(n_trees)]
        self.classes_ = classes
        self.bin_edges_ = edges
        self.bounds_ = bounds
        if private:
            self.split_epsilon_ = split_epsilon
            self.leaf_noise_std_ = count_std
        return self

    def predict_proba(self, X):
        """Class probabilities: the mean over trees of the leaf's (noisy) class frequencies."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64,
                          ensure_all_finite="allow-nan")
        binned = apply_bins(X, self.bin_edges_)
        return np.mean([tree.predict(binned) for tree in self._trees], axis=0)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The most probable class."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class DPDecisionTreeClassifier(_BaseCountTrees):
    """A decision tree classifier with differential privacy.

    A complete binary tree of depth ``max_depth`` over ``max_bins``
    equal-width bins of each feature. Each level's splits are chosen by the
    exponential mechanism with the max-count score (the rows a majority vote
    in each child gets right; sensitivity 1), and each leaf releases its
    class counts with Gaussian noise; the predicted probabilities are the
    leaf's noisy class frequencies. Unlike a tree built without looking at
    the data (diffprivlib's), the splits follow the labels.

    Missing values (NaN) have a bin of their own: each split sends them left
    or right, the side chosen with the threshold by the same exponential
    mechanism (its candidates are every threshold with either side, and the
    split of the missing values from the rest, for every feature whatever
    the data holds), at no extra cost (see :ref:`trees`). ±inf is refused.

    **Privacy.** The fit is ρ-zCDP with ρ calibrated to (ε, δ): half to the
    ``max_depth`` levels' exponential mechanisms (ε_s²/8 each), half to the
    leaf counts (a Gaussian of L2 sensitivity 1); the curve comes from the
    parameters alone and is charged once before any value is read. Bins come
    from the public ``bounds`` or, without them, from bounds released by
    :func:`skdp.stats.bounds` with half of ε in the same charge.

    With ``epsilon=inf`` the splits maximise the decrease of the Gini
    impurity over the data's quantile bins (midpoints between distinct
    values when a feature has at most ``max_bins``): scikit-learn's
    ``DecisionTreeClassifier(max_depth=...)`` on such features, up to ties.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
    delta : float in (0, 1), default=1e-5
    bounds : tuple (lower, upper) or None, default=None
        Public bounds of the features; ``None``: released privately.
    classes : array-like or None, default=None
        The public labels; ``None`` reads them from ``y`` (a warned leak).
    max_depth : int in [1, 12], default=4
    max_bins : int in [2, 255], default=32
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None
    secure : bool, default=False
        Draw every random number of the fit from the operating system's
        CSPRNG instead of numpy's generator; ``random_state`` must then be
        None. See :ref:`secure_randomness`.

    Attributes
    ----------
    classes_, bin_edges_, bounds_, split_epsilon_, leaf_noise_std_
    privacy_curve_, epsilon_spent_, delta_spent_
    n_features_in_, feature_names_in_

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.tree import DPDecisionTreeClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(5000, 3))
    >>> y = (X[:, 0] > 0.3).astype(int)
    >>> tree = DPDecisionTreeClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1],
    ...                                 random_state=0).fit(X, y)
    >>> bool(tree.score(X, y) > 0.95)
    True
    """

    def __init__(self, *, epsilon=1.0, delta=DEFAULT_DELTA, bounds=None, classes=None,
                 max_depth=4, max_bins=32, budget=None, random_state=None, secure=False):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.classes = classes
        self.max_depth = max_depth
        self.max_bins = max_bins
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
