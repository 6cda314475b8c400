"""DPHistGradientBoostingClassifier and DPHistGradientBoostingRegressor."""

from __future__ import annotations

import math
import time
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import expit, log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..._base import DPEstimatorMixin
from ...stats._range import (
    _bounds_release,
    check_bounds_or_none,
    split_curve,
    split_curve_with_target,
)
from ...utils import DEFAULT_DELTA, check_bounds, check_delta, check_epsilon
from ...utils._rows import check_lazy_X, is_lazy, lazy_rows, row_sums
from ...utils._validation import check_classes, check_numeric_target, check_scalar
from ...tree._categorical import FeaturesMixin, categorical_mask
from ...tree._grower import feature_importances, grow_tree
from ...tree._histogram import make_bins
from ._loss import (GRADIENT_CLIP, log_loss_gradients, one_hot, raw_scores, scaled_target,
                    squared_gradients)
from ._lazy_categorical import chunk_codes, missing_codes, outside_check, public_categories
from ._passes import (ChunkRows, class_counts, grow_on_chunks, log_loss_rows, root_sums,
                      seen_bins, squared_rows, target_sum)
from ._privacy import plan_boosting
from ._splitting import ExactSplitter, PrivateSplitter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..._typing import ArrayLike, NDArray, RandomStateLike
    from ...budget import PrivacyBudget

__all__ = ["DPHistGradientBoostingClassifier", "DPHistGradientBoostingRegressor"]

class _BaseDPHistGradientBoosting(FeaturesMixin, DPEstimatorMixin, BaseEstimator):
    """The boosting loop; the subclasses give the loss and its public bounds."""

    def __init__(self, *, epsilon: float = 1.0, delta: float = DEFAULT_DELTA,
                 bounds: ArrayLike | None = None,
                 categorical_features: str | ArrayLike | None = "from_dtype",
                 categories: Sequence[ArrayLike] | None = None, max_iter: int = 20,
                 learning_rate: float = 0.5, max_depth: int = 2, max_bins: int = 32,
                 l2_regularization: float = 0.0, min_samples_leaf: int = 20,
                 budget: PrivacyBudget | None = None, random_state: RandomStateLike = None,
                 secure: bool = False, verbose: int = 0) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.categorical_features = categorical_features
        self.categories = categories
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.max_bins = max_bins
        self.l2_regularization = l2_regularization
        self.min_samples_leaf = min_samples_leaf
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = True  # a bin of its own; ±inf is refused
        return tags

    def _check_params(self, n_features):
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        if epsilon < math.inf and delta == 0.0:
            raise ValueError("delta must be > 0 for finite epsilon: the Gaussian leaf sums "
                             "never give pure DP.")
        check_scalar(self.max_iter, "max_iter", int, min_val=1)
        check_scalar(self.learning_rate, "learning_rate", float, min_val=0.0,
                     include_boundaries="neither")
        check_scalar(self.max_depth, "max_depth", int, min_val=1, max_val=12)
        check_scalar(self.max_bins, "max_bins", int, min_val=2, max_val=255)
        check_scalar(self.l2_regularization, "l2_regularization", float, min_val=0.0)
        check_scalar(self.min_samples_leaf, "min_samples_leaf", int, min_val=1)
        bounds = check_bounds_or_none(self.bounds, n_features)
        return epsilon, delta, bounds

    def _boost(self, X, grad_hess, raw, *, edges, n_trees, plan, sensitivities, rng,
               clip_raw=None, gradient_bound=1.0):
        """The boosting loop: ``max_iter`` rounds of ``n_trees`` trees on one gradient each.

        ``grad_hess(raw)`` gives the (n, n_trees) gradients and hessians of
        the loss at the raw predictions; ``clip_raw`` (regression) is where
        the raw predictions are clipped before the gradients;
        ``gradient_bound`` bounds every gradient (the split score's
        sensitivity).
        """
        self.bin_edges_ = edges
        binned = self._binned(X)
        # A numeric feature's max_bins bins and its missing bin; a categorical feature's
        # c <= max_bins categories and its missing code c.
        n_bins = self.max_bins + 1
        bins = make_bins(binned, n_bins)
        seen = None
        if not plan.private:  # ε = ∞ only: which bins occur at fit (missing bins, categories)
            seen = np.stack([np.bincount(binned[:, j], minlength=n_bins) > 0
                             for j in range(X.shape[1])])
        splitter = self._splitter(plan, n_trees, sensitivities, gradient_bound, seen)
        predictors = []
        verbose, start = self._check_verbose(), time.perf_counter()
        # Arrays of one entry per row, made once and reused by every tree: the rows' nodes
        # and their leaves' values (a new array as large as a column at every level and tree
        # cost as much as the work on it at 10^7 rows).
        n = X.shape[0]
        nodes = (np.zeros(n, dtype=np.intp), np.empty(n, dtype=np.intp))
        update = np.empty(n)
        for iteration in range(self.max_iter):
            g, h = grad_hess(raw if clip_raw is None else np.clip(raw, *clip_raw))
            round_trees = []
            for k in range(n_trees):
                tree, leaf = grow_tree(bins, binned, g[:, k], h[:, k], max_depth=self.max_depth,
                                       splitter=splitter,
                                       learning_rate=float(self.learning_rate), rng=rng,
                                       nodes=nodes)
                np.take(tree.value, leaf, out=update)
                raw[:, k] += update
                round_trees.append(tree)
            predictors.append(round_trees)
            self._round_done(iteration, n_trees, verbose, start)
        self._boosted(predictors, splitter, plan, X.shape[1])

    def _splitter(self, plan, n_trees, sensitivities, gradient_bound, seen):
        """The fit's splitter: private from the plan, or (ε = ∞) the exact one with ``seen``."""
        lam = float(self.l2_regularization)
        n_categories = self._n_categories()
        if plan.private:
            grad_std, hess_std = plan.leaf_stds(self.max_iter, *sensitivities)
            return PrivateSplitter(
                split_epsilon=plan.split_epsilon(self.max_iter * n_trees * self.max_depth),
                grad_std=grad_std, hess_std=hess_std, l2_regularization=lam,
                n_bins=self.max_bins, n_categories=n_categories, gradient_bound=gradient_bound)
        return ExactSplitter(l2_regularization=lam, min_samples_leaf=self.min_samples_leaf,
                             n_bins=self.max_bins, n_categories=n_categories, seen=seen)

    def _round_done(self, iteration, n_trees, verbose, start):
        if verbose:  # public counts and the time only, as scikit-learn's
            print(f"[{iteration + 1}/{self.max_iter}] {n_trees} tree(s), max depth = "
                  f"{self.max_depth}, in {time.perf_counter() - start:.3f}s", flush=True)

    def _boosted(self, predictors, splitter, plan, n_features):
        """The fitted attributes of the released rounds."""
        self._predictors = predictors
        self.n_iter_ = self.max_iter
        # post-processing of the released trees: their leaves' noisy gradient and hessian sums
        self.feature_importances_ = feature_importances(
            [tree for round_trees in predictors for tree in round_trees], n_features,
            per_tree=False)
        if plan.private:
            self.split_epsilon_ = splitter.split_epsilon
            self.leaf_noise_std_ = (splitter.grad_std, splitter.hess_std)

    def _boost_lazy(self, X, y, rows, *, n_trees, plan, sensitivities, rng, gradient_bound=1.0):
        """The boosting loop on dask rows: a pass over the chunks per tree level and per leaves.

        The in-memory loop of :meth:`_boost` with each row's state recomputed in
        its chunk (:mod:`._passes`); the same splitter draws from ``rng`` in
        the same order.
        """
        self.bin_edges_ = rows.edges
        n_bins = self.max_bins + 1
        seen = None
        if not plan.private:  # ε = ∞ only: which bins occur at fit (the missing bins)
            seen = row_sums(partial(seen_bins, edges=rows.edges, n_bins=n_bins,
                                    categorical=rows.categorical), X) > 0
        splitter = self._splitter(plan, n_trees, sensitivities, gradient_bound, seen)
        predictors = []
        verbose, start = self._check_verbose(), time.perf_counter()
        for iteration in range(self.max_iter):
            roots = ((None,) if n_trees == 1 else
                     root_sums(X, y, rows, predictors, splitter=splitter, n_bins=n_bins))
            predictors.append([
                grow_on_chunks(X, y, rows, predictors, k, max_depth=self.max_depth,
                               splitter=splitter, learning_rate=float(self.learning_rate),
                               rng=rng, n_bins=n_bins, root=root)
                for k, root in enumerate(roots)])
            self._round_done(iteration, n_trees, verbose, start)
        self._boosted(predictors, splitter, plan, X.shape[1])

    def _validate_lazy(self, X, y, y_kind):
        """check_lazy_X for the boosting, after the refusals that need no pass over the data.

        Categorical features get their public categories from metadata
        (:mod:`._lazy_categorical`), and each chunk's codes; values outside
        the categories are refused in check_lazy_X's one pass, as in memory.
        """
        mask, from_dtype = categorical_mask(X, self.categorical_features)  # dtypes and names only
        if mask is None and self.categories is not None:
            raise ValueError("categories is given but no feature is categorical: set "
                             "categorical_features.")
        numeric = mask is None or not mask.all()
        if check_epsilon(self.epsilon) == math.inf and self.bounds is None and numeric:
            raise ValueError("epsilon=inf on dask input needs public bounds: without them the "
                             "bins are the data's exact quantiles, which passes of sums over "
                             "the chunks do not give. Pass bounds=(lower, upper) or fit an "
                             "in-memory array. Nothing was charged.")
        self.is_categorical_ = mask
        self._categories = None
        if mask is None:
            return check_lazy_X(self, X, y, allow_nan=True, y_kind=y_kind)
        self._categories = public_categories(X, mask, from_dtype, self.categories,
                                             self.max_bins)
        X, *rest = check_lazy_X(self, chunk_codes(X, mask, self._categories), y,
                                allow_nan=True, y_kind=y_kind, also=outside_check(self, mask))
        return (missing_codes(X, mask, self._categories), *rest)

    def _raw_predict(self, X):
        check_is_fitted(self)
        X = self._validate_predict_data(X)
        return raw_scores(self._binned(X), self._baseline, self._predictors)

    def _bounds_and_curve(self, X, epsilon, delta, bounds, stat_curve, extra_columns=()):
        """The fit's curve, and a function that releases the missing bounds after the charge.

        Without public ``bounds`` (and ε < ∞) the features' bounds, and the
        ``extra_columns`` (the regressor's target without public bounds),
        are released by :func:`skdp.stats.bounds` with half of ε, composed
        with the boosting's curve into one charge (:func:`split_curve`; with
        both, the target's histogram is released alone with a share of that
        half, :func:`split_curve_with_target`). Returns the boosting's ε, the
        curve, and the ε of the features' and of the target's bounds.
        """
        n_numeric = int(self._numeric(X.shape[1]).sum())
        n_features = n_numeric if bounds is None else 0
        n_missing = n_features + len(extra_columns)
        if epsilon == math.inf or n_missing == 0:
            return epsilon, stat_curve(epsilon), None, None
        if n_features and extra_columns:  # the target's histogram is released alone
            eps_bounds, eps_target, eps_stat, curve = split_curve_with_target(
                epsilon, delta, n_features, stat_curve)
            return eps_stat, curve, eps_bounds, eps_target
        eps_bounds, eps_stat, curve = split_curve(epsilon, delta, n_missing, stat_curve)
        return eps_stat, curve, eps_bounds, eps_bounds


class DPHistGradientBoostingClassifier(ClassifierMixin, _BaseDPHistGradientBoosting):
    """Histogram gradient boosting for classification, with differential privacy.

    Every read of the data is a noisy release: splits chosen by the exponential
    mechanism, leaf values from noisy gradient and hessian sums. The whole fit
    is one curve calibrated to (``epsilon``, ``delta``), charged once before
    any value is read (with private bounds in the same charge when none are
    given). Notes give the algorithm, its privacy analysis and the defaults.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
    delta : float in (0, 1), default=1e-5
        :data:`skdp.utils.DEFAULT_DELTA`; must be > 0 for finite ε.
    bounds : tuple (lower, upper) or None, default=None
        Public bounds of the features (scalars or arrays of shape
        (n_features,); the entries of categorical features are ignored);
        values outside fall in the first or last bin. ``None``: the numeric
        features' bounds are released privately with half of ε (public
        bounds are better).
    classes : array-like or None, default=None
        The public labels; ``None`` reads them from ``y`` (a warned leak).
    categorical_features : {"from_dtype"} or array-like or None, default="from_dtype"
        The categorical features, as in scikit-learn's
        ``HistGradientBoosting*``: a boolean mask, integer indices, feature
        names (DataFrame input), ``"from_dtype"`` (the columns of a pandas
        DataFrame with a ``Categorical`` dtype) or ``None``. A categorical
        feature splits into two sets of categories (see :ref:`trees`); a
        missing value (NaN or None) is a category of its own.
    categories : list of array-like or None, default=None
        The public categories, one list per categorical feature in column
        order (as :class:`~sklearn.preprocessing.OneHotEncoder`'s
        ``categories``), at most ``max_bins`` each. ``None``: the categories
        of each column's pandas ``Categorical`` dtype. **The categories of a
        pandas Categorical dtype are part of the table's schema and are
        treated as public**: build the dtype from the schema
        (``pd.CategoricalDtype(categories)``), never from the rows
        (``astype("category")`` lists the values that occur, which leaks
        them). Categories are never read from the data's values: a value
        outside them is refused at fit, before the charge; at predict it
        goes where the missing values go.
    max_iter : int, default=20
        Boosting rounds.
    learning_rate : float > 0, default=0.5
    max_depth : int in [1, 12], default=2
        Trees are complete: 2^max_depth leaves, and histograms of
        2^(max_depth − 1) × n_features × max_bins sums on the last level.
    max_bins : int in [2, 255], default=32
    l2_regularization : float >= 0, default=0.0
    min_samples_leaf : int, default=20
        Only for ``epsilon=inf`` (see Notes).
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None
    secure : bool, default=False
        Draw every random number of the fit from the operating system's
        CSPRNG instead of numpy's generator; ``random_state`` must then be
        None. See :ref:`secure_randomness`.
    verbose : int, default=0
        Print one line per boosting round (its trees and leaves, the elapsed
        time) when > 0; nothing computed on the training rows is printed.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
    n_trees_per_iteration_ : int
    bin_edges_ : ndarray of shape (n_features, max_bins − 1)
        The inner edges of the bins (from the bounds, or the quantiles at ε = ∞);
        NaN for categorical features (their bins are their categories).
    bounds_ : tuple of two ndarrays, or None
        The bounds the bins span (public or released; NaN for categorical
        features); None at ε = ∞ without bounds.
    is_categorical_ : ndarray of shape (n_features,) or None
        Which features are categorical; None if none is.
    split_epsilon_ : float
        ε_s of each level's exponential mechanism (finite ε only).
    leaf_noise_std_ : tuple (float, float)
        Noise std of each leaf's gradient and hessian sum (finite ε only).
    feature_importances_ : ndarray of shape (n_features,)
        The importance of each feature, from the released trees alone: the
        gain G_L²/(H_L + λ) + G_R²/(H_R + λ) − G²/(H + λ) of each split (the
        loss decrease of Newton leaves) computed from the leaves' released
        gradient and hessian sums (noisy with finite ε, each hessian sum
        floored at 10 times its noise std as the leaf values are; a node's
        sums are its leaves'), floored at 0, added up by feature over every
        tree and normalised to sum to 1, as scikit-learn's
        ``GradientBoosting*`` does (its ``HistGradientBoosting*`` has none);
        all zeros if no split has a gain. Post-processing: it costs no
        privacy.
    privacy_curve_, epsilon_spent_, delta_spent_
    n_features_in_, feature_names_in_

    Notes
    -----
    The boosting of scikit-learn's
    :class:`~sklearn.ensemble.HistGradientBoostingClassifier` (log-loss,
    Newton leaf values, one tree per class per round for more than two
    classes), with every read of the data a noisy release:

    1. **Bins** (``max_bins`` equal-width bins per feature) come from the
       public ``bounds``; without them (``bounds=None``) from bounds released
       by :func:`skdp.stats.bounds` with half of ε, in the same charge. They
       are never read from the data.
    2. **Baseline**: the noisy class counts (Gaussian, L2 sensitivity 1)
       give the initial log-odds.
    3. **Trees**, complete to ``max_depth``: each level's splits are chosen
       by the exponential mechanism (McSherry & Talwar 2007) with the score
       ``|G_L| + |G_R|`` of the gradient sums (sensitivity 1, since a row's
       gradient p − y is in [−1, 1]); each leaf's value is a Newton step
       −lr·G̃/(max(H̃, 10·s) + λ) from Gaussian noisy gradient and hessian
       sums (Maddock et al. 2022, CCS; hessians p(1 − p) ≤ 1/4), s the std
       of the hessian noise (a shrinkage of the leaves whose hessian is not
       well above its noise). The sensitivities are in :ref:`trees`.
       A categorical feature (``categorical_features``, with public
       ``categories``) splits into two sets of categories: the exponential
       mechanism's candidates for it are every assignment of its categories
       (and of the missing value) to the two children, with the score
       ``G_R − G_L`` (sensitivity 1), sampled exactly; with ``epsilon=inf``
       it is scikit-learn's sorted-category split.
    4. **Missing values** (NaN) of a numeric feature have a bin of their
       own, as in scikit-learn. Each split sends them left or right: with
       finite ε the side is chosen by the same exponential mechanism as the
       threshold, whose candidates are every (threshold, side) pair and the
       split of the missing values from the rest, for every numeric
       feature whatever the data holds. Every candidate's score keeps
       sensitivity 1 and the mechanism's cost does not depend on the number
       of candidates, so missing values cost nothing (see :ref:`trees`).
       With ``epsilon=inf`` the side is scikit-learn's. ±inf is refused.

    **Privacy.** Every part is zCDP; the whole fit is the curve of one
    Gaussian calibrated to (ε, δ), computed from the parameters alone and
    charged once before any value is read (see :ref:`trees`). Two
    percent of it goes to the class counts, half of the rest to the splits
    and half to the leaves. More classes: each row's gradient vector has L2
    norm at most √2 and its hessians at most 1/2 (‖p − e_y‖² ≤ 2;
    Σ(p_k(1 − p_k))² ≤ ¼·Σp_k(1 − p_k) ≤ ¼), which is the sensitivity of a
    round's leaf sums over all its trees; the splits of each class's tree
    are separate mechanisms.

    **Defaults** (20 rounds of depth-2 trees, learning rate 0.5, 32 bins)
    are fixed, not tuned per table (how they were chosen, and what they
    give on the benchmark suite's tables: :ref:`trees`). Few shallow trees
    are what noise allows: every round divides the budget.

    With ``epsilon=inf`` there is no noise and the splits maximise the gain
    G_L²/(H_L + λ) + G_R²/(H_R + λ) − G²/(H + λ) under ``min_samples_leaf``
    and the bins are the data's quantiles when no ``bounds`` are given: the
    algorithm of scikit-learn's estimator with ``max_leaf_nodes=None``,
    ``early_stopping=False`` and the same ``max_depth``, ``max_iter``,
    ``learning_rate``, ``max_bins`` and ``l2_regularization``
    (``min_samples_leaf`` applies only there: with finite ε the trees are
    complete). The private splitter is a different algorithm: the gain has
    no bounded sensitivity.

    ``fit`` also takes a dask array or DataFrame with an in-memory or dask
    ``y`` (:ref:`larger_than_memory`): the same plan and charge, then one
    pass over the chunks per tree level and one per tree's leaves, each
    chunk recomputing its rows' codes, bins and raw scores from the trees
    released so far and returning its histogram sums; the splits and the
    noise are drawn on the client, so the model is the in-memory one up to
    the order of float additions. Categorical features work as in memory:
    a dask DataFrame's ``Categorical`` columns must have known categories
    in its metadata (``cat.known``; unknown ones are refused before the
    charge, since ``.cat.as_known()`` would read them from the rows), or
    ``categories`` gives them; a value outside them is refused in the
    checks before the charge. ``predict``, ``predict_proba`` and
    ``decision_function`` of dask input are lazy. ``epsilon=inf`` without
    ``bounds`` (the data's quantiles) still needs the rows in memory.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.ensemble import DPHistGradientBoostingClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(20000, 4))
    >>> y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.5)).astype(int)
    >>> clf = DPHistGradientBoostingClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1],
    ...                                        random_state=0).fit(X, y)
    >>> round(clf.epsilon_spent_, 3)
    1.0
    >>> bool(clf.score(X, y) > 0.9)
    True

    A categorical feature, its categories public through its pandas dtype:

    >>> import pandas as pd
    >>> colours = ["red", "green", "blue"]
    >>> frame = pd.DataFrame({"x": X[:, 0], "colour": pd.Categorical(
    ...     rng.choice(colours, 20000), categories=colours)})
    >>> y = ((frame.x > 0.5) ^ (frame.colour == "blue")).astype(int)
    >>> clf = DPHistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1],
    ...                                        random_state=0).fit(frame, y)
    >>> clf.is_categorical_
    array([False,  True])
    >>> bool(clf.score(frame, y) > 0.9)
    True
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = DEFAULT_DELTA,
                 bounds: ArrayLike | None = None, classes: ArrayLike | None = None,
                 categorical_features: str | ArrayLike | None = "from_dtype",
                 categories: Sequence[ArrayLike] | None = None, max_iter: int = 20,
                 learning_rate: float = 0.5, max_depth: int = 2, max_bins: int = 32,
                 l2_regularization: float = 0.0, min_samples_leaf: int = 20,
                 budget: PrivacyBudget | None = None, random_state: RandomStateLike = None,
                 secure: bool = False, verbose: int = 0) -> None:
        super().__init__(epsilon=epsilon, delta=delta, bounds=bounds,
                         categorical_features=categorical_features, categories=categories,
                         max_iter=max_iter,
                         learning_rate=learning_rate, max_depth=max_depth, max_bins=max_bins,
                         l2_regularization=l2_regularization,
                         min_samples_leaf=min_samples_leaf, budget=budget,
                         random_state=random_state, secure=secure, verbose=verbose)
        self.classes = classes

    def fit(self, X: ArrayLike, y: ArrayLike) -> DPHistGradientBoostingClassifier:
        """Fit the boosted trees; charges ``budget`` once, before reading the data's values.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        # 1. validate (shapes, dtypes, finiteness).
        lazy = is_lazy(X)  # a dask array or DataFrame: passes of sums over its chunks
        if lazy:
            X, y, labels = self._validate_lazy(X, y, "labels")
        else:
            X, y = self._validate_fit_data(X, y)
            labels = y
        epsilon, delta, bounds = self._check_params(X.shape[1])
        private = epsilon != math.inf
        classes = check_classes(labels, self.classes, private=private)
        k = classes.size
        n_trees = 1 if k == 2 else k
        # 2. the curve, from the parameters alone.
        eps_stat, curve, eps_bounds, _ = self._bounds_and_curve(
            X, epsilon, delta, bounds, lambda e: plan_boosting(e, delta).curve())
        plan = plan_boosting(eps_stat, delta)
        rng = self._check_generator()  # a bad seed is refused before the charge
        self._check_verbose()  # so is a bad verbose
        # 3. charge once.
        self._charge_budget(curve)
        # 4. read the data.
        if eps_bounds is not None:
            bounds = self._full_bounds(
                *_bounds_release(X[:, self._numeric(X.shape[1])], epsilon=eps_bounds,
                                 delta=delta, rng=rng), X.shape[1])
        if lazy:
            counts = row_sums(partial(class_counts, classes=classes), y)
        else:
            label = np.searchsorted(classes, y)
            counts = np.bincount(label, minlength=k)
        # Class counts: a histogram, L2 sensitivity 1 (one row moves one count).
        counts = counts + plan.count_std(1.0) * rng.standard_normal(k)
        freq = np.maximum(counts, 1.0) / np.maximum(counts, 1.0).sum()
        if n_trees == 1:
            baseline = np.array([math.log(freq[1] / freq[0])])
        else:
            baseline = np.log(freq)  # as scikit-learn's multinomial baseline
        # Sensitivities of a round's leaf sums: see the class docstring.
        sens = (1.0, 0.25) if n_trees == 1 else (math.sqrt(2.0), 0.5)
        self._baseline = baseline
        edges = self._edges(X, bounds, private)
        if lazy:
            rows = ChunkRows(edges, baseline,
                             partial(log_loss_rows, classes=classes, n_trees=n_trees),
                             self.is_categorical_)
            self._boost_lazy(X, y, rows, n_trees=n_trees, plan=plan, sensitivities=sens,
                             rng=rng)
        else:
            # One-hot labels; with two classes the second column alone (one tree per round).
            Y = one_hot(label, n_trees, k)
            prob, hess = np.empty(Y.shape), np.empty(Y.shape)  # reused every round
            raw = np.tile(baseline, (X.shape[0], 1))
            self._boost(X, lambda raw: log_loss_gradients(raw, Y, prob, hess), raw,
                        edges=edges, n_trees=n_trees, plan=plan, sensitivities=sens, rng=rng)
        self.classes_ = classes
        self.n_trees_per_iteration_ = n_trees
        self.bounds_ = bounds
        return self

    @lazy_rows
    def decision_function(self, X: ArrayLike) -> NDArray:
        """Raw scores: shape (n,) for two classes, (n, n_classes) otherwise."""
        raw = self._raw_predict(X)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    @lazy_rows
    def predict_proba(self, X: ArrayLike) -> NDArray:
        """Class probabilities."""
        raw = self._raw_predict(X)
        if raw.shape[1] == 1:
            p = expit(raw[:, 0])
            return np.column_stack([1.0 - p, p])
        return softmax(raw, axis=1)

    @lazy_rows
    def predict_log_proba(self, X: ArrayLike) -> NDArray:
        """Log of :meth:`predict_proba`."""
        raw = self._raw_predict(X)
        if raw.shape[1] == 1:
            raw = np.column_stack([np.zeros(raw.shape[0]), raw[:, 0]])
        return log_softmax(raw, axis=1)

    @lazy_rows
    def predict(self, X: ArrayLike) -> NDArray:
        """The most probable class."""
        raw = self._raw_predict(X)
        index = (raw[:, 0] > 0).astype(int) if raw.shape[1] == 1 else raw.argmax(axis=1)
        return self.classes_[index]


class DPHistGradientBoostingRegressor(RegressorMixin, _BaseDPHistGradientBoosting):
    """Histogram gradient boosting for regression (squared error), with differential privacy.

    The target is clipped to ``bounds_y`` and every gradient is clipped per
    row; the fit is charged once, as the classifier's. Notes give the clipping
    and the sensitivities.

    Parameters
    ----------
    epsilon, delta, bounds, categorical_features, categories, max_iter, learning_rate, \
max_depth, max_bins, l2_regularization, min_samples_leaf, budget, random_state, \
secure, verbose
        As in :class:`~skdp.ensemble.DPHistGradientBoostingClassifier`.
    bounds_y : tuple (lower, upper) or None, default=None
        Public bounds of the target; ``None``: released privately.

    Attributes
    ----------
    bounds_y_ : tuple (float, float) or None
    n_iter_, bin_edges_, bounds_, is_categorical_, split_epsilon_, leaf_noise_std_
    feature_importances_
        As in :class:`~skdp.ensemble.DPHistGradientBoostingClassifier`.
    privacy_curve_, epsilon_spent_, delta_spent_
    n_features_in_, feature_names_in_

    Notes
    -----
    The algorithm of :class:`~skdp.ensemble.DPHistGradientBoostingClassifier` on the squared
    error. The target is clipped to ``bounds_y`` (public; without them
    released by :func:`skdp.stats.bounds` with the features' missing bounds,
    in the same charge, its histogram alone with a quarter of their ε; the
    range is never a single point, see :mod:`skdp.stats._range`) and scaled
    to [0, 1]; the raw predictions are
    clipped to [0, 1] before each gradient, and every gradient F − y is
    clipped to [−1/4, 1/4] (per row, as DP-SGD clips; the gradient of the
    Huber loss with δ a quarter of the target's range): the exponential
    mechanism's score has sensitivity 1/4, a leaf's gradient sum 1/4 and
    its hessian sum (its row count, every hessian being 1) 1. A quarter of
    the range was measured on every regression table of the benchmark suite
    (:ref:`trees`): R² 0.958 → 0.967 on diamonds, 0.191 → 0.260 on loans,
    0.798 → 0.876 on weather at ε = 1. The baseline is the noisy mean (a
    noisy count and a noisy sum of the scaled target, one Gaussian of L2
    sensitivity √2). Predictions are clipped to ``bounds_y_`` as the fit
    clipped.

    With ``epsilon=inf`` nothing is clipped or scaled unless ``bounds_y`` is
    given: scikit-learn's ``HistGradientBoostingRegressor`` (squared error)
    with ``max_leaf_nodes=None`` and ``early_stopping=False``.

    ``fit`` and ``predict`` take dask input as the classifier's do
    (:ref:`larger_than_memory`).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.ensemble import DPHistGradientBoostingRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(20000, 3))
    >>> y = 10 * (X[:, 0] > 0.5) + X[:, 1] + rng.normal(0, 0.5, 20000)
    >>> reg = DPHistGradientBoostingRegressor(epsilon=1.0, bounds=(0, 1), bounds_y=(-5, 15),
    ...                                       random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.9)
    True
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = DEFAULT_DELTA,
                 bounds: ArrayLike | None = None, bounds_y: ArrayLike | None = None,
                 categorical_features: str | ArrayLike | None = "from_dtype",
                 categories: Sequence[ArrayLike] | None = None, max_iter: int = 20,
                 learning_rate: float = 0.5, max_depth: int = 2, max_bins: int = 32,
                 l2_regularization: float = 0.0, min_samples_leaf: int = 20,
                 budget: PrivacyBudget | None = None, random_state: RandomStateLike = None,
                 secure: bool = False, verbose: int = 0) -> None:
        super().__init__(epsilon=epsilon, delta=delta, bounds=bounds,
                         categorical_features=categorical_features, categories=categories,
                         max_iter=max_iter,
                         learning_rate=learning_rate, max_depth=max_depth, max_bins=max_bins,
                         l2_regularization=l2_regularization,
                         min_samples_leaf=min_samples_leaf, budget=budget,
                         random_state=random_state, secure=secure, verbose=verbose)
        self.bounds_y = bounds_y

    def fit(self, X: ArrayLike, y: ArrayLike) -> DPHistGradientBoostingRegressor:
        """Fit the boosted trees; charges ``budget`` once, before reading the data's values.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        lazy = is_lazy(X)  # a dask array or DataFrame: passes of sums over its chunks
        if lazy:
            X, y = self._validate_lazy(X, y, "numeric")
        else:
            X, y = self._validate_fit_data(X, check_numeric_target(y), y_numeric=True)
        epsilon, delta, bounds = self._check_params(X.shape[1])
        bounds_y = None
        if self.bounds_y is not None:
            lo, hi = check_bounds(self.bounds_y, 1, name="bounds_y")
            bounds_y = (float(lo[0]), float(hi[0]))
        private = epsilon != math.inf
        extra = (y,) if bounds_y is None and private else ()
        eps_stat, curve, eps_bounds, eps_target = self._bounds_and_curve(
            X, epsilon, delta, bounds, lambda e: plan_boosting(e, delta).curve(), extra)
        plan = plan_boosting(eps_stat, delta)
        rng = self._check_generator()
        self._check_verbose()  # so is a bad verbose
        self._charge_budget(curve)

        if eps_bounds is not None:
            numeric = self._numeric(X.shape[1])
            if bounds is None and numeric.any():
                bounds = self._full_bounds(
                    *_bounds_release(X[:, numeric], epsilon=eps_bounds, delta=delta, rng=rng),
                    X.shape[1])
            elif bounds is None:  # no numeric feature: nothing to bound
                bounds = self._full_bounds(np.empty(0), np.empty(0), X.shape[1])
            if extra:
                (lower_y,), (upper_y,) = _bounds_release(y[:, None], epsilon=eps_target,
                                                         delta=delta, rng=rng, n_targets=1)
                bounds_y = (float(lower_y), float(upper_y))
        if bounds_y is None:
            offset, scale, clip = 0.0, 1.0, None
        else:
            offset, scale = bounds_y[0], (bounds_y[1] - bounds_y[0]) or 1.0
            clip = (0.0, 1.0) if private else None
        # The mean from a count and a sum (each sensitivity 1: one Gaussian, L2 √2).
        std = plan.count_std(math.sqrt(2.0))
        count = max(X.shape[0] + std * rng.standard_normal(), 1.0)
        if lazy:
            total = row_sums(partial(target_sum, bounds_y=bounds_y), y)
        else:
            target = scaled_target(y, bounds_y)
            total = target.sum()
        mean = (total + std * rng.standard_normal()) / count
        if clip is not None:
            mean = min(max(mean, 0.0), 1.0)
        baseline = np.array([mean])
        self._baseline = baseline
        edges = self._edges(X, bounds, private)
        if lazy:
            rows = ChunkRows(edges, baseline, partial(squared_rows, bounds_y=bounds_y,
                                                      clip=clip, private=private),
                             self.is_categorical_)
            self._boost_lazy(X, y, rows, n_trees=1, plan=plan,
                             sensitivities=(GRADIENT_CLIP, 1.0), rng=rng,
                             gradient_bound=GRADIENT_CLIP)
        else:
            raw = np.tile(baseline, (X.shape[0], 1))
            self._boost(X, lambda raw: squared_gradients(raw, target, private), raw,
                        edges=edges, n_trees=1, plan=plan, sensitivities=(GRADIENT_CLIP, 1.0),
                        rng=rng, clip_raw=clip, gradient_bound=GRADIENT_CLIP)
        self._scale = (offset, scale, clip)
        self.bounds_ = bounds
        self.bounds_y_ = bounds_y
        return self

    @lazy_rows
    def predict(self, X: ArrayLike) -> NDArray:
        """Predicted targets (clipped to ``bounds_y_`` when the fit clipped)."""
        raw = self._raw_predict(X)[:, 0]
        offset, scale, clip = self._scale
        if clip is not None:
            raw = np.clip(raw, *clip)
        return offset + scale * raw
