"""DPRandomForestClassifier: class-count trees on random features, averaged."""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np

from ..tree._classes import _BaseCountTrees
from ..utils import DEFAULT_DELTA

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPRandomForestClassifier"]


class DPRandomForestClassifier(_BaseCountTrees):
    """A random forest classifier with differential privacy.

    ``n_estimators`` private trees, each on all the rows with an equal share of
    the fit's zCDP ρ, calibrated to (``epsilon``, ``delta``) and charged once
    before any value is read. Notes give the analysis and the measured
    defaults.

    Parameters
    ----------
    n_estimators : int >= 1, default=10
    epsilon, delta, bounds, classes, categorical_features, categories, max_bins, budget, \
random_state, secure
        As in :class:`~skdp.tree.DPDecisionTreeClassifier`.
    max_depth : int in [1, 12], default=6
    max_features : "sqrt", int or None, default="sqrt"
        Features drawn per node: √d (rounded up), an int, or all (None).
    n_jobs : int or None, default=None
        Trees grown at once, in joblib threads (``None``: one, unless in a
        :func:`joblib.parallel_backend` context; ``-1``: all processors). Each
        tree draws from its own generator, seeded from ``random_state``
        before any tree grows: the same forest for the same seed whatever
        ``n_jobs``.
    verbose : int, default=0
        When > 0, print the charge (ε and δ spent, from the parameters) and
        one line per grown tree with the elapsed time; nothing computed on
        the training rows.

    Attributes
    ----------
    classes_, bin_edges_, bounds_, is_categorical_, split_epsilon_, leaf_noise_std_
    feature_importances_ : ndarray of shape (n_features,)
        Each tree's decrease of the Gini impurity by feature, computed from
        its leaves' noisy class counts (post-processing, no privacy cost; see
        :class:`~skdp.tree.DPDecisionTreeClassifier`), normalised per tree
        and averaged, as scikit-learn's forests.
    privacy_curve_, epsilon_spent_, delta_spent_
    n_features_in_, feature_names_in_

    Notes
    -----
    ``n_estimators`` trees of :class:`~skdp.tree.DPDecisionTreeClassifier`,
    each on all the rows with 1/``n_estimators`` of the fit's zCDP ρ, each
    node choosing among ``max_features`` features drawn at random (public
    randomness, as Breiman's forests); the predicted probabilities are the
    mean of the trees' leaf frequencies. The trees compose: n trees of ρ/n
    each are ρ-zCDP (Bun & Steinke 2016, Lemma 2.3), ρ calibrated to (ε, δ)
    and charged once before any value is read. Each node's split is drawn
    from the exponential mechanism's distribution by its inverse CDF, one
    uniform per node, among the candidates of the features the node drew
    (earlier versions drew one Gumbel per candidate of every feature: the
    same distribution, but other forests for the same seed). Every tree
    sees every row: under zCDP that beats disjoint subsets (each tree's
    signal falls by n while its noise falls by √n only).

    Defaults (10 trees of depth 6, √d features per node) measured at ε = 1
    on Adult, breast cancer, fair and digits (benchmarks/bench_trees.py):
    above diffprivlib's forest on each, below the boosted trees except on
    digits (10 classes).

    Missing values (NaN) are handled as by the tree: each split sends them
    to the side the exponential mechanism chose with the threshold.

    With ``epsilon=inf``: Gini splits among the drawn features and exact
    leaf frequencies, without bootstrap.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.ensemble import DPRandomForestClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(5000, 4))
    >>> y = (X[:, 0] + X[:, 1] > 1).astype(int)
    >>> forest = DPRandomForestClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1],
    ...                                   random_state=0).fit(X, y)
    >>> bool(forest.score(X, y) > 0.85)
    True
    """

    def __init__(self, n_estimators: int = 10, *, epsilon: float = 1.0,
                 delta: float = DEFAULT_DELTA, bounds: ArrayLike | None = None,
                 classes: ArrayLike | None = None,
                 categorical_features: str | ArrayLike | None = "from_dtype",
                 categories: Sequence[ArrayLike] | None = None, max_depth: int = 6,
                 max_features: str | int | None = "sqrt", max_bins: int = 32,
                 budget: PrivacyBudget | None = None, random_state: RandomStateLike = None,
                 secure: bool = False, n_jobs: int | None = None, verbose: int = 0) -> None:
        self.n_estimators = n_estimators
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.classes = classes
        self.categorical_features = categorical_features
        self.categories = categories
        self.max_depth = max_depth
        self.max_features = max_features
        self.max_bins = max_bins
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _check_params(self, n_features):
        n = self.n_estimators
        if not isinstance(n, numbers.Integral) or isinstance(n, (bool, np.bool_)) or n < 1:
            raise ValueError(f"n_estimators must be an int >= 1; got {n!r}.")
        self._max_features(n_features)
        return super()._check_params(n_features)

    def _n_trees(self):
        return int(self.n_estimators)

    def _max_features(self, d):
        m = self.max_features
        if m is None:
            return d
        if m == "sqrt":
            return max(1, math.ceil(math.sqrt(d)))
        if isinstance(m, numbers.Integral) and not isinstance(m, (bool, np.bool_)) and m >= 1:
            return min(int(m), d)
        raise ValueError(f"max_features must be 'sqrt', an int >= 1 or None; got {m!r}.")
