"""DPDecisionTreeClassifier, and the class-count trees that DPRandomForestClassifier averages.

A tree is complete to ``max_depth`` over the bins of
:mod:`._binning` (public or released bounds; the data's quantiles only at
ε = ∞), grown level by level (:func:`._grower.grow_levels`) as the boosted trees
of :mod:`skdp.ensemble` are:

- split: the exponential mechanism (McSherry & Talwar 2007) over every
  (feature, threshold, side of the missing values) of a node (the
  candidates of :mod:`._candidates`, fixed by ``max_bins``), score
  max_k C_L,k + max_k C_R,k (the rows a majority vote in each child gets
  right), whose sensitivity is 1: one row, with or without missing values,
  moves one class count of one child by 1 (the max-count score of
  Friedman & Schuster 2010, Sec. 4.3). One level of a tree is one
  ε_s-exponential mechanism (its nodes hold disjoint rows), ε_s²/8-zCDP
  (Cesar & Rogers 2021, Lemma 3.2). Sampled by its inverse CDF, one uniform
  per node (:mod:`._choice`), among the features the node drew.
- a categorical feature (public categories, :mod:`._categorical`): the
  same mechanism over (categories' sign pattern, class a, class b) with the
  score C_L,a + C_R,b (sensitivity 1), sampled exactly
  (:meth:`CountSplitter._private_categorical`).
- leaves: the class counts of every leaf plus Gaussian noise, one
  histogram of L2 sensitivity 1 (Mironov 2017, Prop. 7 for its curve).

At ε = ∞ the split maximises the decrease of the Gini impurity, as
scikit-learn's ``DecisionTreeClassifier``, and the leaves hold exact counts;
a node without missing values in its split feature sends them, at predict,
to the child with more rows.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve, gaussian_rdp, zcdp_rdp
from ._candidates import left_sums, numeric_tables
from ._categorical import FeaturesMixin
from ._choice import exponential_choice
from ._grower import _children, feature_importances, grow_levels
from ._histogram import LevelCounts, make_bins, root_counts
from ._zcdp import calibrate_rho
from ..stats._range import _bounds_release, check_bounds_or_none, split_curve
from ..utils import DEFAULT_DELTA, check_delta, check_epsilon
from ..utils._parallel import Parallel, delayed
from ..utils._validation import check_classes, check_scalar

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

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


def _gini_gain(left, right, totals):
    """Gini decrease Σ_k C_L,k²/n_L + Σ_k C_R,k²/n_R − Σ_k C_k²/n per candidate (ε = ∞)."""
    n_left, n_right = left.sum(axis=0), right.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = (left**2).sum(axis=0) / n_left + (right**2).sum(axis=0) / n_right
    parent = (totals**2).sum(axis=0) / np.maximum(totals.sum(axis=0), 1)
    return np.where((n_left > 0) & (n_right > 0), score - parent[..., None, None], -np.inf)


def _gini_categorical(counts, totals):
    """Best Gini decrease and right sets of one categorical feature in each node (ε = ∞).

    The codes present in the node, sorted by the share of one class and cut
    at every point: with two classes this finds the best partition
    (Breiman et al. 1984, Thm. 4.5); with more, each class's order is tried.
    ``counts`` (nodes, codes, k), ``totals`` (nodes, k).
    """
    n_nodes, n_codes, k = counts.shape
    best = np.full(n_nodes, -np.inf)
    sets = np.zeros((n_nodes, n_codes), dtype=bool)
    n_code = counts.sum(axis=2)
    for i in range(n_nodes):
        present = np.flatnonzero(n_code[i] > 0)
        if present.size < 2:
            continue
        share = counts[i, present] / n_code[i, present, None]
        for c in range(1 if k == 2 else k):
            order = present[np.argsort(share[:, c], kind="stable")]
            left = np.cumsum(counts[i, order], axis=0)[:-1].T  # (k, cuts)
            gain = _gini_gain(left[:, None, None, :], totals[i][:, None, None, None] - left[
                :, None, None, :], totals[i][:, None])[0, 0]
            cut = int(gain.argmax())
            if gain[cut] > best[i]:
                best[i] = gain[cut]
                sets[i] = False
                sets[i, order[cut + 1:]] = True
    return best, sets


class CountSplitter:
    """Splits and leaves of a class-count tree (see the module docstring).

    ``n_bins`` is the number of bins of a numeric feature's values (its
    missing bin is ``n_bins``); ``n_categories`` the categories of each
    feature (0: numeric), or None when every feature is numeric.
    """

    def __init__(self, *, split_epsilon, count_std, max_features, n_features, n_bins,
                 n_classes, n_categories=None):
        self.split_epsilon = split_epsilon
        self.n_classes = n_classes
        self.count_std = count_std
        self.max_features = max_features
        self.n_features = n_features
        self.n_bins = n_bins
        n_categories = np.zeros(n_features, np.int64) if n_categories is None else n_categories
        self.n_categories = np.asarray(n_categories, dtype=np.int64)
        self.numeric = np.flatnonzero(self.n_categories == 0)

    def split(self, bins, node, n_nodes, label, _, rng):
        """(feature, bool row over the bins: True goes right) of each node.

        ``label`` is each row's class (0..k − 1). Every random number is drawn
        first, in a fixed order and shapes fixed by the parameters (with
        finite ε one uniform per node for the exponential mechanism's choice,
        then each categorical feature's uniforms; then the features drawn per
        node); then the class counts are computed for the features that some
        node drew.
        """
        k = self.n_classes
        B = self.n_bins
        d = self.n_features
        categorical = np.flatnonzero(self.n_categories)
        private = self.split_epsilon != math.inf
        if private:  # the exponential mechanism's uniforms
            uniform = rng.random(n_nodes)
            noise = {j: self._categorical_noise(n_nodes, int(self.n_categories[j]) + 1, rng)
                     for j in categorical}
        drawn = None
        if self.max_features < d:  # features drawn per node, public randomness
            drawn = np.argsort(rng.random((n_nodes, d)), axis=1)[:, :self.max_features]
        used = np.arange(d) if drawn is None else np.unique(drawn)
        position = np.full(d, -1)
        position[used] = np.arange(used.size)
        hist = bins.counts(node, n_nodes, label, k, used)  # (k, nodes, used, bins)
        totals = hist[:, :, 0, :].sum(axis=2)  # (k, nodes)
        if private:
            if drawn is None:
                drawn = np.broadcast_to(np.arange(d), (n_nodes, d))
            return self._exponential_split(hist, totals, position, drawn, uniform, noise,
                                           bins.n_bins)
        return self._gini_split(hist, totals, position, drawn, bins.n_bins)

    def _exponential_split(self, hist, totals, position, drawn, uniform, noise, n_bins_total):
        """One draw per node of the exponential mechanism over its drawn features' candidates.

        The candidates of a node are the 2B − 1 of each drawn numeric feature
        (:mod:`._candidates`) and, for each drawn categorical feature, its
        total weight (:meth:`_private_categorical`) in the place of its first
        candidate; one uniform per node picks one of them
        (:func:`._choice.exponential_choice`).
        """
        B = self.n_bins
        n_nodes, m = drawn.shape
        n_candidates = 2 * B - 1
        log_weight = np.full((n_nodes, m, n_candidates), -np.inf)
        nodes, slots = np.nonzero(self.n_categories[drawn] == 0)
        if nodes.size:
            # Left class counts of every (threshold, missing direction), (k, pairs, 2B − 1)
            left = left_sums(hist[:, nodes, position[drawn[nodes, slots]]], B)
            right = totals[:, nodes, None] - left
            # sensitivity 1: one row moves one class count of one child by 1; log weight
            # ε_s·score/(2·1), the exponential mechanism's (McSherry & Talwar 2007)
            log_weight[nodes, slots] = 0.5 * self.split_epsilon * (left.max(axis=0)
                                                                   + right.max(axis=0))
        sets = {}
        for j in np.unique(drawn[self.n_categories[drawn] > 0]):
            # (nodes, codes, k) counts of the categories and the missing
            counts = np.moveaxis(hist[:, :, position[j], :self.n_categories[j] + 1], 0, 2)
            logit, sets[j] = self._private_categorical(counts, *noise[j])
            nodes, slots = np.nonzero(drawn == j)
            log_weight[nodes, slots, 0] = logit[nodes]
        choice = exponential_choice(log_weight.reshape(n_nodes, -1), uniform)
        slot, candidate = np.divmod(choice, n_candidates)
        feature = drawn[np.arange(n_nodes), slot]
        table = numeric_tables(candidate, B, n_bins_total)
        for j in sets:
            nodes = np.flatnonzero(feature == j)
            table[nodes] = False
            table[nodes, :self.n_categories[j] + 1] = sets[j][nodes]
        return feature, table

    def _gini_split(self, hist, totals, position, drawn, n_bins_total):
        """The best Gini split of each node among its drawn features (ε = ∞)."""
        B = self.n_bins
        d = self.n_features
        n_nodes = hist.shape[1]
        numeric = self.numeric
        categorical = np.flatnonzero(self.n_categories)
        feature_logit = np.full((n_nodes, d), -np.inf)
        candidate = np.zeros((n_nodes, d), dtype=np.int64)
        num = np.flatnonzero(position[numeric] >= 0)  # the used numeric features, in numeric
        if num.size:
            # Left class counts of every (threshold, missing direction): _candidates.
            left = left_sums(hist[:, :, position[numeric[num]]], B)  # (k, nodes, num, 2B − 1)
            right = totals[:, :, None, None] - left
            score = _gini_gain(left, right, totals)  # Σ_k C_L,k²/n_L + Σ_k C_R,k²/n_R
            candidate[:, numeric[num]] = score.argmax(axis=2)
            feature_logit[:, numeric[num]] = score.max(axis=2)
        sets = {}
        for j in categorical[position[categorical] >= 0]:
            counts = np.moveaxis(hist[:, :, position[j], :self.n_categories[j] + 1], 0, 2)
            feature_logit[:, j], sets[j] = _gini_categorical(counts, totals.T)
        if drawn is not None:
            masked = np.ones((n_nodes, d), dtype=bool)
            np.put_along_axis(masked, drawn, False, axis=1)
            feature_logit = np.where(masked, -np.inf, feature_logit)
        rows = np.arange(n_nodes)
        feature = feature_logit.argmax(axis=1)
        table = numeric_tables(candidate[rows, feature], B, n_bins_total)
        for j in sets:
            nodes = np.flatnonzero(feature == j)
            table[nodes] = False
            table[nodes, :self.n_categories[j] + 1] = sets[j][nodes]
        none = ~(feature_logit[rows, feature] > 1e-12)
        table[none] = False  # no split: every row left
        # Missing values (and categories) absent from the node go, at predict, to the
        # child with more rows (scikit-learn's DecisionTreeClassifier). A node whose
        # drawn features all have gain −∞ does not split: its feature's counts are unused.
        counted = position[feature] >= 0
        n_node = np.zeros((n_nodes, n_bins_total))
        n_node[counted] = hist.sum(axis=0)[rows[counted], position[feature[counted]]]
        absent = (n_node == 0) & ~none[:, None]
        absent[:, :B] &= self.n_categories[feature][:, None] > 0  # numeric: the missing bin
        n_right = np.where(table, n_node, 0).sum(axis=1)
        larger_right = ~(totals.sum(axis=0) - n_right > n_right)
        return feature, np.where(absent, larger_right[:, None], table)

    def _categorical_noise(self, n_nodes, n_codes, rng):
        """The uniforms of :meth:`_private_categorical`, in its order."""
        return rng.random(n_nodes), rng.random((n_nodes, n_codes))

    def _private_categorical(self, counts, uniform_pair, uniform_code):
        """Log weights and drawn sets of one categorical feature in each node (finite ε).

        The candidates are (s, a, b): a sign pattern s of the c + 1 codes and
        the classes a ≠ b that a majority vote would predict left and right,
        with the score C_L,a + C_R,b, the rows the pair gets right (sensitivity
        1; its maximum over (a, b) is the max-count score of the pattern). The
        score is additive over the codes, so the mechanism is sampled exactly:
        the weight of (a, b) over all patterns is Π_code (e^{h·C_code,a} +
        e^{h·C_code,b}), h = ε_s/2; given (a, b) each code goes left with
        probability e^{h·C_a}/(e^{h·C_a} + e^{h·C_b}). The base measure
        μ = (2·n_bins − 1)/(2^(c+1)·K(K − 1)) gives the feature the prior mass
        of a numeric feature's 2·n_bins − 1 candidates of weight 1. Returns
        the feature's log total weight, against which the node's choice is
        drawn, and the sets drawn given the feature: (a, b) from one uniform
        per node, then each code from one. The uniforms
        (:meth:`_categorical_noise`) are drawn before the counts are read.
        """
        n_nodes, n_codes, k = counts.shape
        h = 0.5 * self.split_epsilon
        pairs = [(a, b) for a in range(k) for b in range(k) if a != b] or [(0, 0)]
        a, b = np.array(pairs).T
        ha, hb = h * counts[:, :, a], h * counts[:, :, b]  # (nodes, codes, pairs)
        log_pair = np.logaddexp(ha, hb).sum(axis=1)  # (nodes, pairs)
        log_mu = (math.log(2 * self.n_bins - 1) - n_codes * math.log(2.0)
                  - math.log(len(pairs)))
        log_weight = log_mu + np.logaddexp.reduce(log_pair, axis=1)
        pair = exponential_choice(log_pair, uniform_pair)
        rows = np.arange(n_nodes)
        p_right = expit(hb[rows, :, pair] - ha[rows, :, pair])  # (nodes, codes)
        return log_weight, uniform_code < p_right

    def leaves(self, counts, rng):
        """The leaves' released class counts: their exact int counts (n_leaves, k) plus noise."""
        counts = counts.astype(np.float64)  # integers: the sums of the one-hot weights
        if self.count_std:
            counts = counts + self.count_std * rng.standard_normal(counts.shape)
        return counts, None

    def impurity(self, counts, _):
        """Gini impurity of each node times its rows, n − Σ_k C_k²/n, from its (noisy) counts.

        scikit-learn's weighted impurity, so a split's gain is its decrease of the
        Gini impurity (its ``feature_importances_``); counts below 0 count as 0.
        """
        counts = np.maximum(counts, 0.0)
        n = counts.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, n - (counts**2).sum(axis=1) / n, 0.0)

    def leaf_values(self, counts, _, learning_rate):
        """Class probabilities of each leaf from its (noisy) counts: post-processing."""
        counts = np.maximum(counts, 0.0)
        total = counts.sum(axis=1, keepdims=True)
        uniform = np.full_like(counts, 1.0 / counts.shape[1])
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, counts / total, uniform)


_Trees = TypeVar("_Trees", bound="_BaseCountTrees")


def grow_count_tree(counts, binned, label, *, max_depth, splitter, rng, report=None):
    """One class-count tree from the rows' bins and classes: its :class:`._grower.TreePredictor`.

    :func:`._grower.grow_tree`'s levels with ``counts`` (a
    :class:`._histogram.LevelCounts`) as the splitter's counts, except that
    the leaves' class counts are the last level's children's
    (:meth:`LevelCounts.children <._histogram.LevelCounts.children>`, the
    same integers as the leaves' rows): the rows are never moved to the
    leaves nor counted there.
    """
    n = binned.shape[0]
    nodes = (np.zeros(n, dtype=np.intp), np.empty(n if max_depth > 1 else 0, dtype=np.intp))
    last = {}

    def split_level(level, feature, threshold):
        n_nodes = 2**level
        node = nodes[level % 2]
        f, t = splitter.split(counts, node, n_nodes, label, None, rng)
        last["children"] = counts.children(f, t)
        if level + 1 < max_depth:
            _children(binned, node, n_nodes, f, t, out=nodes[(level + 1) % 2])
        return f, t

    def leaves(feature, threshold):
        return splitter.leaves(last["children"].T, rng)

    return grow_levels(split_level, leaves, max_depth=max_depth, splitter=splitter,
                       learning_rate=1.0, report=report)


def _tree_generators(rng, n_trees):
    """One generator per tree: the fit's for a single tree, else each seeded by 256 bits of it.

    A ``SecureGenerator`` (OS CSPRNG, no state) serves every tree itself.
    """
    if n_trees == 1 or not isinstance(rng, np.random.Generator):
        return [rng] * n_trees
    return [np.random.default_rng(entropy) for entropy in
            rng.integers(0, 2**63, size=(n_trees, 4), dtype=np.int64)]


class _BaseCountTrees(FeaturesMixin, DPEstimatorMixin, ClassifierMixin, BaseEstimator):
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
        check_scalar(self.max_depth, "max_depth", int, min_val=1, max_val=12)
        check_scalar(self.max_bins, "max_bins", int, min_val=2, max_val=255)
        return epsilon, delta, check_bounds_or_none(self.bounds, n_features)

    def fit(self: _Trees, X: ArrayLike, y: ArrayLike) -> _Trees:
        """Fit the trees; charges ``budget`` once, before reading the data's values.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = self._validate_fit_data(X, y)
        d = X.shape[1]
        epsilon, delta, bounds = self._check_params(d)
        n_trees = self._n_trees()
        max_features = self._max_features(d)
        private = epsilon != math.inf
        classes = check_classes(y, self.classes, private=private, min_classes=1)
        rng = self._check_generator()
        verbose, n_jobs = self._check_verbose(), self._check_n_jobs()  # before the charge
        numeric = self._numeric(d)
        if private and bounds is None and numeric.any():  # the numeric features' bounds
            eps_bounds, eps_trees, curve = split_curve(epsilon, delta, int(numeric.sum()),
                                                       lambda e: tree_curve(e, delta))
        else:
            eps_bounds, eps_trees, curve = None, epsilon, tree_curve(epsilon, delta)
        self._charge_budget(curve)

        if eps_bounds is not None:
            bounds = self._full_bounds(*_bounds_release(X[:, numeric], epsilon=eps_bounds,
                                                        delta=delta, rng=rng), d)
        self.bin_edges_ = self._edges(X, bounds, private)
        binned = self._binned(X)
        label = np.searchsorted(classes, y)  # each row's class: y holds only classes
        # A numeric feature's max_bins bins and its missing bin; a categorical feature's
        # c <= max_bins categories and its missing code c. Every tree's root holds every
        # row: the roots' class counts of every feature are counted once, and give the
        # layout's rule its counts per bin.
        roots = root_counts(binned, label, classes.size, self.max_bins + 1)
        bins = make_bins(binned, self.max_bins + 1, bin_counts=roots.sum(axis=(0, 1)))
        roots = {j: roots[:, :, j:j + 1] for j in range(d)}
        splits = {}  # the root's children's counts, by the root's split: shared by the trees
        if private:  # n trees of ρ/n each compose to ρ (Bun & Steinke 2016, Lemma 2.3)
            rho = calibrate_rho(eps_trees, delta) / n_trees
            split_epsilon = math.sqrt(8.0 * SPLIT_SHARE * rho / self.max_depth)
            count_std = 1.0 / math.sqrt(2.0 * (1 - SPLIT_SHARE) * rho)
        else:
            split_epsilon, count_std = math.inf, 0.0
        splitter = CountSplitter(split_epsilon=split_epsilon, count_std=count_std,
                                 max_features=max_features, n_features=d,
                                 n_bins=self.max_bins, n_classes=classes.size,
                                 n_categories=self._n_categories())
        say = self._progress(verbose)  # public parameters, counters and times only
        say(f"charged epsilon={self.epsilon_spent_:.4g}, delta={self.delta_spent_:.3g}; "
            f"growing {n_trees} tree(s) of depth {self.max_depth}, {max_features} feature(s) "
            "per node")

        def level_done(level):  # one tree: a line per level (a forest's trees say when grown)
            say(f"level {level}/{self.max_depth} split")

        def grow(tree_rng):  # the tree's own LevelCounts: the counts kept from level to level
            return grow_count_tree(LevelCounts(bins, roots, splits), binned, label,
                                   max_depth=self.max_depth, splitter=splitter, rng=tree_rng,
                                   report=level_done if n_trees == 1 else None)

        # Each tree draws from its own generator, seeded from the fit's before any tree
        # grows: the same trees for the same seed whatever n_jobs and the threads' order.
        grown = Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator")(
            delayed(grow)(tree_rng) for tree_rng in _tree_generators(rng, n_trees))
        self._trees = []
        for tree in grown:
            self._trees.append(tree)
            say(f"tree {len(self._trees)}/{n_trees} grown")
        # post-processing of the released trees: their leaves' noisy class counts
        self.feature_importances_ = feature_importances(self._trees, d, per_tree=True)
        self.classes_ = classes
        self.bounds_ = bounds
        if private:
            self.split_epsilon_ = split_epsilon
            self.leaf_noise_std_ = count_std
        return self

    def predict_proba(self, X: ArrayLike) -> NDArray:
        """Class probabilities: the mean over trees of the leaf's (noisy) class frequencies."""
        check_is_fitted(self)
        binned = self._binned(self._validate_predict_data(X))
        return np.mean([tree.predict(binned) for tree in self._trees], axis=0)

    def predict_log_proba(self, X: ArrayLike) -> NDArray:
        """Log of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X: ArrayLike) -> NDArray:
        """The most probable class."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class DPDecisionTreeClassifier(_BaseCountTrees):
    """A decision tree classifier with differential privacy.

    Splits are chosen by the exponential mechanism and the leaves release
    noisy class counts; the fit is ρ-zCDP, calibrated to (``epsilon``,
    ``delta``) and charged once before any value is read. Notes give the
    algorithm, missing values, categorical features and the privacy analysis.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
    delta : float in (0, 1), default=1e-5
    bounds : tuple (lower, upper) or None, default=None
        Public bounds of the features (the entries of categorical features
        are ignored); ``None``: the numeric features' bounds are released
        privately.
    classes : array-like or None, default=None
        The public labels; ``None`` reads them from ``y`` (a warned leak).
    categorical_features : {"from_dtype"} or array-like or None, default="from_dtype"
        The categorical features, as in
        :class:`~skdp.ensemble.DPHistGradientBoostingClassifier` (a boolean
        mask, integer indices, feature names, or the pandas ``Categorical``
        columns of a DataFrame).
    categories : list of array-like or None, default=None
        The public categories of each categorical feature, at most
        ``max_bins`` each, as in
        :class:`~skdp.ensemble.DPHistGradientBoostingClassifier`; ``None``:
        those of the columns' pandas ``Categorical`` dtypes. Never read from
        the data: a value outside them is refused at fit, before the charge;
        at predict it goes where the missing values go.
    max_depth : int in [1, 12], default=4
    max_bins : int in [2, 255], default=32
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None
    secure : bool, default=False
        Draw every random number of the fit from the operating system's
        CSPRNG instead of numpy's generator; ``random_state`` must then be
        None. See :ref:`secure_randomness`.
    verbose : int, default=0
        When > 0, print the charge (ε and δ spent, from the parameters) and
        one line per level of the tree with the elapsed time (a fit on 10^6
        rows takes seconds); nothing computed on the training rows.

    Attributes
    ----------
    classes_, bin_edges_, bounds_, split_epsilon_, leaf_noise_std_
    is_categorical_ : ndarray of shape (n_features,) or None
        Which features are categorical; None if none is.
    feature_importances_ : ndarray of shape (n_features,)
        The impurity-based importance of each feature (scikit-learn's mean
        decrease in impurity), computed from the released tree alone: a
        node's class counts are the sums of its leaves' noisy counts
        (negative ones as 0), and each split's decrease of the Gini impurity,
        weighted by the node's (noisy) rows, is added to its feature, then
        normalised to sum to 1 (all zeros if no split decreases the
        impurity). Post-processing: it costs no privacy. With finite ε the
        tree is complete, and a split chosen by the noise still credits its
        feature with the noise's decrease, so a useless feature keeps a
        share (smaller for larger ε).
    privacy_curve_, epsilon_spent_, delta_spent_
    n_features_in_, feature_names_in_

    Notes
    -----
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

    A categorical feature (``categorical_features``, with public
    ``categories``) splits into two sets of categories. The exponential
    mechanism's candidates for it are every assignment of its categories
    (and of the missing value) to the two children together with the two
    classes predicted left and right (a ≠ b), scored by the rows those
    predictions get right, C_L,a + C_R,b (sensitivity 1; its maximum over
    the classes is the max-count score), sampled exactly. With
    ``epsilon=inf`` the categories are sorted by a class's share in the node
    and the best Gini cut is taken (the best partition with two classes,
    Breiman et al. 1984).

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

    def __init__(self, *, epsilon: float = 1.0, delta: float = DEFAULT_DELTA,
                 bounds: ArrayLike | None = None, classes: ArrayLike | None = None,
                 categorical_features: str | ArrayLike | None = "from_dtype",
                 categories: Sequence[ArrayLike] | None = None, max_depth: int = 4,
                 max_bins: int = 32, budget: PrivacyBudget | None = None,
                 random_state: RandomStateLike = None, secure: bool = False,
                 verbose: int = 0) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.classes = classes
        self.categorical_features = categorical_features
        self.categories = categories
        self.max_depth = max_depth
        self.max_bins = max_bins
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose
