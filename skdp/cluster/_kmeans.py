"""DPKMeans: a private tree coreset to seed the centres, then Lloyd steps with noisy counts and sums."""

from __future__ import annotations

import math
import numbers
import warnings
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve, gaussian_rdp
from ..decomposition._pca import clipped_blocks, gaussian_multiplier
from ..preprocessing._validation import finite_output
from ..stats._noise import _noise_multiplier
from ..stats._range import (
    BOUNDS_EPSILON_SHARE,
    _bounds_release,
    check_bounds_or_none,
    split_curve,
)
from ..utils import DEFAULT_DELTA, check_delta, check_epsilon
from ..utils._blocks import map_blocks
from ..utils._rows import check_lazy_X, is_lazy, lazy_rows, refuse_lazy, row_sums
from ..utils._validation import check_scalar, validate_data

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPKMeans"]

# The fit is one Gaussian mechanism of multiplier z (all of ε, or what the private bounds
# leave): its parts are Gaussians of multipliers z_i with sum(1/z_i²) = 1/z², which compose
# to exactly one of multiplier z (Dong, Roth & Su 2022, Cor. 3.3; in RDP, Mironov 2017,
# Prop. 1 and 7). Each part gets a share of 1/z²: the noisy count of rows, the tree's noisy
# counts (all its levels), the noisy sums of its leaves, and the Lloyd steps on the rows (the
# rest). The constants below were chosen on the mixtures and the suite's tables of
# benchmarks/bench_kmeans.py at ε = 0.1 and 1 (docs/benchmarks.md).
N_SHARE = 0.02
TREE_COUNT_SHARE = 0.15
LEAF_SHARE = 0.25
# Levels of the tree below its root, fixed in advance: each is one release of counts.
TREE_DEPTH = 12
# A leaf holds at least LEAF_ROWS·√d·(noise multiplier of the leaf sums) rows where n̂ allows
# it, so that the noise of its mean is about 1/LEAF_ROWS of the box's half-diagonal (Google's
# DP clustering library takes 10; 3 did better here); a node branches from BRANCH_FACTOR
# times that.
LEAF_ROWS = 3.0
BRANCH_FACTOR = 3.0
# The Lloyd steps after a private seeding, from the noisy count of rows n̂ (see _n_steps).
MAX_AUTO_STEPS = 8
STEP_PRECISION = 100.0
# The share of ε that estimates the bounds when none are given: the package's (a half);
# 0.2 and 0.3 did worse on benchmarks/bench_kmeans.py, 0.7 no better (docs/benchmarks.md).
BOUNDS_SHARE = BOUNDS_EPSILON_SHARE
# scikit-learn's KMeans defaults, used at epsilon=inf.
SKLEARN_MAX_ITER = 300


def _squared_distances(X, centers):
    """(n, k) squared Euclidean distances, floored at 0."""
    d = (np.einsum("ij,ij->i", X, X)[:, None] - 2.0 * X @ centers.T
         + np.einsum("ij,ij->i", centers, centers)[None, :])
    return np.maximum(d, 0.0)


def _nearest(Y, centers, center_sq):
    """The nearest centre of each row: argmin of ‖c‖² − 2⟨y, c⟩ (‖y‖² is the same for all c).

    ``center_sq`` is ‖c‖² of each centre; one matrix product for the block ``Y``.
    """
    return np.argmin(center_sq - 2.0 * (Y @ centers.T), axis=1)


def _group_sums(labels, Y, k):
    """(k, d) sums of the rows of Y by label (labels in 0..k-1; -1: none), one sparse product.

    The rows labelled -1 have no entry in the sparse one-hot matrix: no copy of Y is made.
    """
    inside = labels >= 0
    indptr = np.concatenate([[0], np.cumsum(inside)])
    onehot = sparse.csr_matrix((np.ones(int(indptr[-1])), labels[inside], indptr),
                               shape=(len(labels), k))
    return np.asarray(onehot.T @ Y, dtype=float)


def _centred_blocks(X, box, blocks=None):
    """The rows of X clipped to the box and centred at its midpoint, block by block (no copy)."""
    return clipped_blocks(X, box, None, blocks)


def _n_steps(n_hat, n_clusters, n_features, z):
    """Lloyd steps after the private seeding: more as the rows per cluster outgrow the noise.

    A step of multiplier z·√T moves a centre of n/k rows by noise of norm about
    √d·z·√T·H/(n/k) against a box of half-diagonal H; T grows until that reaches
    about a hundredth of H, between 1 and MAX_AUTO_STEPS.
    """
    per_cluster = max(n_hat, 1.0) / n_clusters
    ratio = per_cluster / (STEP_PRECISION * math.sqrt(n_features) * z)  # = √T at the limit
    return int(min(MAX_AUTO_STEPS, max(1, math.floor(ratio * ratio))))


def _paths(Y, directions):
    """Each row's path down the tree: bit l (from the top) is its side of hyperplane l.

    The sides are those of ⟨g_l, y⟩ >= 0 for the rows y of the block ``Y``;
    as an int, the path of level l is ``path >> (TREE_DEPTH - l)``.
    """
    path = np.zeros(len(Y), dtype=np.int64)
    for side in directions @ Y.T >= 0.0:
        path = 2 * path + side
    return path


def _path_counts(X, *, box, directions):
    """The number of rows of each path (2^TREE_DEPTH counts): a block function of a pass."""
    def run(blocks):
        return [np.bincount(_paths(Y, directions), minlength=2 ** TREE_DEPTH)
                for _, Y in _centred_blocks(X, box, blocks)]

    return sum(map_blocks(run, *X.shape))


def _leaf_sums(X, *, box, directions, leaf_of, shift, m):
    """(m, d) sums of the centred rows of each leaf; ``leaf_of[path >> shift]`` is the leaf (-1: none).

    A block function of a pass; the blocks' sums are added in block order.
    """
    def run(blocks):
        parts = []
        for _, Y in _centred_blocks(X, box, blocks):
            parts.append(_group_sums(leaf_of[_paths(Y, directions) >> shift], Y, m))
        return parts

    sums = np.zeros((m, X.shape[1]))
    for part in map_blocks(run, *X.shape):
        sums += part
    return sums


def _tree_leaves(path_counts, n_hat, node_min, branch_min, z_level, rng):
    """The tree's leaves, from the number of rows of each path; returns (levels, paths, counts).

    A node of level l is a path of l bits; its rows are the rows whose path
    starts with it, so the counts of every level are sums of ``path_counts``
    (which may be None when the root does not branch). The nodes of a level
    are kept in the order of their paths, and the leaves in the order they
    are found.
    """
    nodes = np.zeros(1, dtype=np.int64)  # the level's nodes, as paths
    counts = np.array([n_hat])  # their noisy counts
    levels, paths, leaf_counts = [], [], []

    def add(level, found, found_counts):
        levels.extend([level] * len(found))
        paths.extend(found)
        leaf_counts.extend(found_counts)

    for level in range(TREE_DEPTH + 1):
        branching = counts >= branch_min if level < TREE_DEPTH else np.zeros(len(counts), bool)
        add(level, nodes[~branching], counts[~branching])  # nodes that do not branch are leaves
        parents = nodes[branching]
        if len(parents) == 0:
            break
        children = (2 * parents[:, None] + np.arange(2)).ravel()
        child_counts = path_counts.reshape(2 ** (level + 1), -1).sum(axis=1)[children]
        child_counts = child_counts.astype(float) + rng.normal(0.0, z_level, size=len(children))
        kept = child_counts >= node_min
        # A branching node whose children are all dropped is a leaf with all its rows; the
        # rows of a dropped child of a node with a kept child leave the tree.
        lone = ~kept.reshape(-1, 2).any(axis=1)
        add(level, parents[lone], counts[branching][lone])
        nodes, counts = children[kept], child_counts[kept]
        if len(counts) == 0:
            break
    return np.array(levels, dtype=np.int64), np.array(paths, dtype=np.int64), leaf_counts


def _tree_coreset(X, box, H, n_hat, n_clusters, z_level, z_leaf, rng):
    """A private coreset of the rows Y of X clipped to ``box`` and centred at its midpoint.

    It holds the noisy means and counts of a tree's leaves. The tree is a prefix tree of
    random-hyperplane hashes (SimHash, Charikar 2002): level l splits each node by the
    sign of ⟨g_l, y⟩, g_l a Gaussian direction drawn independently of the data. A node
    branches where its noisy count reaches ``branch_min``; a child is kept where its noisy
    count reaches ``node_min`` (rows of the others are dropped), and a node without kept
    children is a leaf, as in Chang, Ghazi, Kumar & Manurangsi 2021 (the private coreset
    of Google's DP clustering library). A row is in one node of each level, so each
    level's counts have L2 sensitivity 1 (noise std ``z_level``); it is in at most one
    leaf, so the leaves' sums have L2 sensitivity H (noise std ``z_leaf``·H per
    coordinate). Returns (points, weights).

    Two passes of sums over the rows (:func:`~skdp.utils._rows.row_sums`, in memory or
    on dask chunks): the number of rows of each path (:func:`_paths`), from which every
    level's counts are sums, then the sums of each leaf's rows, whose paths are computed
    again from the same directions. No row's state is kept between the passes.
    """
    n, d = X.shape
    node_min = max(1.0, min(LEAF_ROWS * math.sqrt(d) * z_leaf, n_hat / (2.0 * n_clusters)))
    branch_min = BRANCH_FACTOR * node_min
    directions = rng.standard_normal((TREE_DEPTH, d))
    path_counts = None
    if n_hat >= branch_min:  # the root branches: the first pass
        path_counts = row_sums(partial(_path_counts, box=box, directions=directions), X)
    levels, paths, leaf_counts = _tree_leaves(path_counts, n_hat, node_min, branch_min,
                                              z_level, rng)
    # Each leaf of level l owns the paths of the deepest leaf's length that start with it.
    depth = int(levels.max())
    leaf_of = np.full(2 ** depth, -1, dtype=np.int64)
    for i, (level, path) in enumerate(zip(levels, paths)):
        width = 2 ** (depth - level)
        leaf_of[path * width:(path + 1) * width] = i
    sums = row_sums(partial(_leaf_sums, box=box, directions=directions, leaf_of=leaf_of,
                            shift=TREE_DEPTH - depth, m=len(levels)), X)
    sums += rng.normal(0.0, z_leaf * H, size=sums.shape)
    weights = np.maximum(np.asarray(leaf_counts, dtype=float), 1.0)
    return sums / weights[:, None], weights


def _weighted_kmeans(points, weights, n_clusters, box, c, rng):
    """k centres of the weighted coreset by scikit-learn's KMeans (post-processing)."""
    from sklearn.cluster import KMeans

    d = len(c)
    points = np.clip(points + c, *box) if len(points) else np.zeros((0, d))
    if len(points) < n_clusters:  # too few leaves: the rest uniform in the box
        extra = rng.uniform(box[0], box[1], size=(n_clusters - len(points), d))
        return np.concatenate([points, extra])
    seed = int(rng.integers(0, 2**31 - 1))
    km = KMeans(n_clusters, n_init=10, random_state=seed)
    # One thread: the coreset has a few thousand points at most, and OpenMP's threads waiting
    # on a loaded machine made this fit 20 times slower (5 s against 0.2, bench_kmeans --speed).
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore", ConvergenceWarning)  # leaves clipped to a corner
        return km.fit(points, sample_weight=weights).cluster_centers_


class DPKMeans(DPEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin,
               BaseEstimator):
    """K-means clustering with differential privacy: a private tree coreset, then noisy Lloyd steps.

    The fit is one Gaussian mechanism at (``epsilon``, ``delta``), charged
    once: a noisy count, a private coreset that seeds the centres, and noisy
    Lloyd steps; without public ``bounds``, half of ``epsilon`` releases
    private ones in the same charge. Notes give the algorithm and its shares.

    Parameters
    ----------
    n_clusters : int >= 1, default=8
    init : {"private", "random"} or array of shape (n_clusters, n_features), default="private"
    max_iter : "auto" or int >= 1, default="auto"
        Lloyd steps at finite ε, all run (each costs privacy); the most
        iterations at ``epsilon=inf`` (``"auto"``: 300).
    bounds : tuple (lower, upper) or None, default=None
    epsilon : float > 0, default=1.0
    delta : float in (0, 1), default=1e-5
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None
    secure : bool, default=False
        Draw every random number of the fit from the operating system's
        CSPRNG instead of numpy's generator; ``random_state`` must then be
        None. See :ref:`secure_randomness`.
    verbose : int, default=0
        When > 0, print the charge (ε and δ spent, from the parameters), the
        seeding, the number of Lloyd steps (``n_iter_``) and one line per
        step with the elapsed time; nothing computed on the training rows
        without noise.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    n_iter_ : int
        The Lloyd steps run (scikit-learn's iterations at ``epsilon=inf``).
    bounds_ : tuple of two ndarrays of shape (n_features,)
    labels_ : ndarray of shape (n_samples,)
        Only with ``epsilon=inf``.
    inertia_ : float
        Only with ``epsilon=inf``.
    privacy_curve_, epsilon_spent_, delta_spent_
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Like :class:`sklearn.cluster.KMeans`. Rows are clipped to the box
    ``bounds`` and centred at its midpoint c, so a row's L2 norm is at most
    H, the box's half-diagonal. The fit is one Gaussian mechanism at
    (``epsilon``, ``delta``), made of parts whose shares of 1/z² add up
    (Gaussians compose exactly: Dong, Roth & Su 2022, Cor. 3.3):

    1. a noisy count n̂ of the rows (2%);
    2. with ``init="private"`` (default), a private coreset (Chang, Ghazi,
       Kumar & Manurangsi 2021): a prefix tree of random-hyperplane
       hashes, each level splitting a node by the side of a random
       hyperplane through c, with noisy counts at every level (15%; a node
       branches only where its noisy count is large, so the tree grows where
       the rows are), and the noisy sums of its leaves (25%). The leaves'
       noisy means, weighted by their noisy counts, are clustered by
       scikit-learn's ``KMeans`` (post-processing) to seed the centres;
    3. Lloyd steps on the rows (the rest): each assigns every row to its
       nearest centre and releases, per cluster, a noisy count
       (sensitivity 1) and a noisy sum of its centred rows (L2 sensitivity
       H); one row is in one cluster, so the clusters compose in parallel
       (DP Lloyd with Gaussian noise, Lu & Shen 2020; Su et al. 2016 use
       Laplace noise). The count gets 1/(1 + √d) of the step's share and the
       sums the rest (the split that minimises the centre's error
       d/w_s² + 1/w_c²). A centre moves only where its noisy count exceeds
       three standard deviations of the count's noise (post-processing).

    With ``max_iter="auto"`` the number of Lloyd steps comes from n̂
    (post-processing, so the cost does not depend on it): from 1 to 8, more
    as the rows per cluster grow. An int runs that many. ``init="random"``
    starts the Lloyd steps from uniform points in the box, an array from
    public centres; neither spends on a tree. ``delta`` must be > 0.

    **Bounds.** As :class:`~skdp.decomposition.DPPCA`: public ``bounds`` cost
    nothing; ``bounds=None`` spends half of ``epsilon`` on private ones in
    the same charge. ``predict`` and ``transform`` clip rows as the fit did.

    **epsilon=inf** is scikit-learn's ``KMeans(n_clusters, init=...,
    n_init=1, max_iter=..., random_state=random_state)`` on the
    clipped rows, with ``init="private"`` read as ``"k-means++"`` and
    ``max_iter="auto"`` as 300: the same centres, labels, inertia and
    iterations for the same integer seed. ``inertia_`` and the training
    rows' ``labels_`` are kept only there: at finite ε a private inertia
    would need more budget, and the labels are one output per person.
    ``fit_predict`` returns them without storing them.

    **Dask.** ``fit`` also takes a dask array or DataFrame (finite ε): the
    number of rows of each path of the tree, the leaves' sums and each Lloyd
    step's counts and sums are passes of sums over the chunks, and the
    hyperplanes and the noise are drawn on the client, so for the same seed
    the centres are the in-memory ones up to round-off; ``predict`` and
    ``transform`` of dask input are lazy (:ref:`larger_than_memory`).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.cluster import DPKMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(m, 0.5, size=(5_000, 2)) for m in (-3, 0, 3)])
    >>> km = DPKMeans(n_clusters=3, bounds=(-5, 5), epsilon=1.0, random_state=0).fit(X)
    >>> np.sort(km.cluster_centers_[:, 0]).round(1)
    array([-3.,  0.,  3.])
    >>> km.predict([[2.9, 3.2]]) == km.predict([[3.0, 3.0]])
    array([ True])
    """

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        init: str | ArrayLike = "private",
        max_iter: int | str = "auto",
        bounds: ArrayLike | None = None,
        epsilon: float = 1.0,
        delta: float = DEFAULT_DELTA,
        budget: PrivacyBudget | None = None,
        random_state: RandomStateLike = None,
        secure: bool = False,
        verbose: int = 0,
    ) -> None:
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.bounds = bounds
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose

    def _check_init(self, n_clusters, n_features):
        init = self.init
        if isinstance(init, str):
            if init not in ("private", "random"):
                raise ValueError(f'init must be "private", "random" or an array; got {init!r}.')
            return init
        centers = np.asarray(init, dtype=float)
        if centers.shape != (n_clusters, n_features) or not np.all(np.isfinite(centers)):
            raise ValueError(f"An array init must be finite with shape ({n_clusters}, "
                             f"{n_features}); got shape {centers.shape}.")
        return centers.copy()

    def _check_max_iter(self):
        if isinstance(self.max_iter, str):
            if self.max_iter != "auto":
                raise ValueError(f'max_iter must be "auto" or an int >= 1; got {self.max_iter!r}.')
            return None
        return check_scalar(self.max_iter, "max_iter", int, min_val=1)

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> DPKMeans:
        """Seed the centres and run the Lloyd steps; charges the budget once.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self
        """
        lazy = is_lazy(X)  # a dask array or DataFrame: sums on the workers (skdp.utils._rows)
        X = check_lazy_X(self, X) if lazy else validate_data(self, X, dtype=np.float64)
        n_features = X.shape[1]
        n_clusters = check_scalar(self.n_clusters, "n_clusters", int, min_val=1)
        max_iter = self._check_max_iter()
        init = self._check_init(n_clusters, n_features)
        bounds = check_bounds_or_none(self.bounds, n_features)
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        if lazy and epsilon == math.inf:
            raise refuse_lazy("epsilon=inf (scikit-learn's KMeans of the rows)")
        rng = self._check_generator()
        if epsilon != math.inf and delta == 0:
            raise ValueError("DPKMeans adds Gaussian noise and needs delta > 0.")
        if epsilon == math.inf and X.shape[0] < n_clusters:
            raise ValueError(f"n_samples={X.shape[0]} should be >= n_clusters={n_clusters}.")
        if X.shape[0] < n_clusters:  # the shapes only, before the charge
            warnings.warn(
                f"n_clusters={n_clusters} is more than the {X.shape[0]} rows of X: most centres "
                "can hold no row and are noise, while the fit's time grows with n_clusters. "
                "Choose n_clusters well below the number of rows.", UserWarning, stacklevel=2)
        say = self._progress(self._check_verbose())
        estimate = bounds is None and epsilon != math.inf
        z = None
        if epsilon == math.inf:
            curve = RDPCurve.non_private()
        elif estimate:
            def stat_curve(e):
                return gaussian_rdp(_noise_multiplier(e, delta))

            eps_bounds, eps_stat, curve = split_curve(epsilon, delta, n_features, stat_curve,
                                                      share=BOUNDS_SHARE)
            z = _noise_multiplier(eps_stat, delta)
        else:
            z = gaussian_multiplier(epsilon, delta)
            curve = gaussian_rdp(z)
        self._charge_budget(curve)
        say(f"charged epsilon={self.epsilon_spent_:.4g}, delta={self.delta_spent_:.3g}")

        if estimate:
            bounds = _bounds_release(X, epsilon=eps_bounds, delta=delta, rng=rng)
            say(f"released the bounds of {n_features} features")
        if bounds is None:  # epsilon=inf without bounds: no clipping
            self.bounds_ = (np.full(n_features, -np.inf), np.full(n_features, np.inf))
        else:
            self.bounds_ = bounds
        if epsilon == math.inf:
            self._fit_exact(np.clip(X, *self.bounds_), init, n_clusters, max_iter, rng)
            say(f"scikit-learn's KMeans (epsilon=inf), {self.n_iter_} iterations")
            return self
        box = self.bounds_
        c = (box[0] + box[1]) / 2.0
        H = float(np.sqrt(np.sum(((box[1] - box[0]) / 2.0) ** 2)))
        private_init = isinstance(init, str) and init == "private"
        n_hat = X.shape[0] + rng.normal(0.0, z / math.sqrt(N_SHARE))
        rest = 1.0 - N_SHARE
        if private_init:
            z_level = z * math.sqrt((TREE_DEPTH) / TREE_COUNT_SHARE)
            z_leaf = z / math.sqrt(LEAF_SHARE)
            points, weights = _tree_coreset(X, box, H, n_hat, n_clusters, z_level, z_leaf, rng)
            centers = _weighted_kmeans(points, weights, n_clusters, box, c, rng)
            rest -= TREE_COUNT_SHARE + LEAF_SHARE
            say(f"seeded {n_clusters} centres from a private tree coreset")
        elif isinstance(init, str):
            centers = rng.uniform(box[0], box[1], size=(n_clusters, n_features))
        else:
            centers = init
        z_lloyd = z / math.sqrt(rest)
        steps = max_iter or _n_steps(n_hat, n_clusters, n_features, z_lloyd)
        step = _LloydStep(X, c, H, z_lloyd * math.sqrt(steps),
                          1.0 / (1.0 + math.sqrt(n_features)), box, rng)
        say(f"{steps} Lloyd steps")  # from the released count of rows: n_iter_
        for t in range(steps):
            centers = step(centers)
            say(f"Lloyd step {t + 1}/{steps}")
        self.cluster_centers_ = centers
        self.n_iter_ = steps
        return self

    def _fit_exact(self, Xc, init, n_clusters, max_iter, rng):
        """scikit-learn's KMeans on the clipped rows (epsilon=inf)."""
        from sklearn.cluster import KMeans

        if isinstance(init, str) and init == "random":
            finite = np.isfinite(self.bounds_[0]) & np.isfinite(self.bounds_[1])
            lo = np.where(finite, self.bounds_[0], Xc.min(axis=0))
            hi = np.where(finite, self.bounds_[1], Xc.max(axis=0))
            init = rng.uniform(lo, hi, size=(n_clusters, Xc.shape[1]))
        elif isinstance(init, str):
            init = "k-means++"
        seed = self.random_state
        if not (seed is None or isinstance(seed, (numbers.Integral, np.random.RandomState))):
            seed = int(rng.integers(0, 2**31 - 1))  # a Generator or secure=True
        km = KMeans(n_clusters, init=init, n_init=1, max_iter=max_iter or SKLEARN_MAX_ITER,
                    random_state=seed).fit(Xc)
        self.cluster_centers_ = km.cluster_centers_
        self.labels_ = km.labels_.astype(np.int64)
        self.inertia_ = float(km.inertia_)
        self.n_iter_ = int(km.n_iter_)
        return self

    def _labels(self, Xc):
        return np.argmin(_squared_distances(Xc, self.cluster_centers_), axis=1).astype(np.int64)

    @property
    def _n_features_out(self):
        return self.cluster_centers_.shape[0]

    @lazy_rows
    def predict(self, X: ArrayLike) -> NDArray:
        """The nearest centre of each row, clipped to ``bounds_`` as in the fit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of int of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._labels(np.clip(X, *self.bounds_))

    def fit_predict(self, X: ArrayLike, y: ArrayLike | None = None) -> NDArray:
        """Fit, then return the labels of X's rows (not stored at finite ε).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        ndarray of int of shape (n_samples,)
        """
        return self.fit(X).predict(X)

    @lazy_rows
    def transform(self, X: ArrayLike) -> NDArray:
        """Euclidean distances of each (clipped) row to every centre.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_clusters)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return finite_output(lambda: np.sqrt(_squared_distances(np.clip(X, *self.bounds_),
                                                                self.cluster_centers_)))


def _cluster_sums(X, *, box, shifted, center_sq):
    """Per cluster, the count and the sum of the centred rows nearest its centre.

    ``shifted`` are the centres less the box's midpoint, ``center_sq`` their
    squared norms. A block function of a pass (in memory or on a dask chunk):
    per block one product for the distances and one for the clusters' sums,
    added in block order.
    """
    k, d = shifted.shape

    def run(blocks):
        parts = []
        for _, Y in _centred_blocks(X, box, blocks):
            labels = _nearest(Y, shifted, center_sq)
            onehot = (labels == np.arange(k)[:, None]).astype(float)  # (k, rows)
            parts.append((onehot.sum(axis=1), onehot @ Y))
        return parts

    counts, sums = np.zeros(k), np.zeros((k, d))
    for block_counts, block_sums in map_blocks(run, *X.shape):  # in block order
        counts += block_counts
        sums += block_sums
    return counts, sums


class _LloydStep:
    """One private Lloyd step on the rows of X clipped to ``box`` and centred at its midpoint c.

    Centroids from noisy counts and sums. ``z`` is the noise multiplier of the step's
    Gaussian vector: the counts (sensitivity 1) get std z/√count_w and the sums (L2
    sensitivity H) std z·H/√(1 − count_w), so the vector has L2 sensitivity 1 once scaled
    (one row is in one cluster). The counts and sums are one pass of
    :func:`_cluster_sums` (:func:`~skdp.utils._rows.row_sums`: in memory or on dask chunks).
    """

    def __init__(self, X, c, H, z, count_w, box, rng):
        self.X, self.c, self.H, self.z, self.box, self.rng = X, c, H, z, box, rng
        self.count_w = count_w

    def __call__(self, centers):
        k, d = centers.shape
        shifted = centers - self.c
        center_sq = np.einsum("ij,ij->i", shifted, shifted)
        counts, sums = row_sums(partial(_cluster_sums, box=self.box, shifted=shifted,
                                        center_sq=center_sq), self.X)
        count_std = self.z / math.sqrt(self.count_w)
        counts = counts + self.rng.normal(0.0, count_std, size=k)
        sums = sums + self.rng.normal(0.0, self.z * self.H / math.sqrt(1.0 - self.count_w),
                                      size=(k, d))
        moved = counts > 3.0 * count_std
        new = self.c + sums / np.maximum(counts, 1.0)[:, None]
        return np.where(moved[:, None], np.clip(new, *self.box), centers)
