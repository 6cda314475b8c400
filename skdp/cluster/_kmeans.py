"""DPKMeans: Lloyd's algorithm with noisy counts and sums per cluster."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
)
from sklearn.utils.validation import check_is_fitted, validate_data

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve, gaussian_rdp
from ..decomposition._pca import gaussian_multiplier
from ..preprocessing._validation import finite_output
from ..stats._noise import _noise_multiplier
from ..stats._range import _bounds_release, check_bounds_or_none, split_curve
from ..utils import DEFAULT_DELTA, check_delta, check_epsilon
from ..utils._validation import check_scalar

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPKMeans"]

# Candidates of the private initialisation per cluster.
CANDIDATES_PER_CLUSTER = 4


def _squared_distances(X, centers):
    """(n, k) squared Euclidean distances, floored at 0."""
    d = (np.einsum("ij,ij->i", X, X)[:, None] - 2.0 * X @ centers.T
         + np.einsum("ij,ij->i", centers, centers)[None, :])
    return np.maximum(d, 0.0)


class DPKMeans(DPEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin,
               BaseEstimator):
    """K-means clustering with differential privacy: Lloyd steps with noisy counts and sums.

    Like :class:`sklearn.cluster.KMeans` with ``algorithm="lloyd"``. Rows
    are clipped to the box ``bounds`` and centred at its midpoint c, so a
    row's L2 norm is at most H, the box's half-diagonal. Each Lloyd step
    assigns every row to its nearest centre and releases, per cluster, a
    noisy count (sensitivity 1) and a noisy sum of its centred rows
    (L2 sensitivity H): one row is in one cluster, so the k clusters compose
    in parallel and a step is one Gaussian vector of L2 sensitivity 1 once
    its parts are scaled by their sensitivities and weighted by √share
    (count share 1/(1 + √d), sums √d/(1 + √d): the shares that minimise
    the centre's error d/w_s² + 1/w_c², with centres within the box).
    ``max_iter`` steps (plus one for the private initialisation) are fixed
    in advance and composed in RDP and as privacy loss distributions (T
    Gaussians of multiplier z√T are one of multiplier z: Mironov 2017,
    Prop. 7 and Prop. 1). This is DP Lloyd with Gaussian noise under RDP as
    in Lu & Shen 2020; Su et al. 2016 use Laplace noise and split ε over
    the steps. A centre moves only where its noisy count exceeds three
    standard deviations of the count's noise (post-processing; otherwise it
    stays). ``delta`` must be > 0.

    **Initialisation.** ``init="private"`` (default) draws
    ``4 × n_clusters`` candidate points uniformly in the box (independent
    of the data), runs one private Lloyd step from them, and picks
    ``n_clusters`` of the noisy candidate centroids by k-means++ weighted by
    their noisy counts (post-processing). ``init="random"``: ``n_clusters``
    uniform points in the box, no extra step. An array: public centres.

    **Bounds.** As :class:`~skdp.decomposition.DPPCA`: public ``bounds`` cost
    nothing; ``bounds=None`` spends half of ``epsilon`` on private ones in
    the same charge. ``predict`` and ``transform`` clip rows as the fit did.

    ``inertia_`` is not computed (a private inertia would need more
    budget), nor ``labels_`` at finite ε: the training rows' labels are
    one output per person, kept only at ``epsilon=inf``. ``fit_predict``
    returns them without storing them. With ``epsilon=inf`` and the same
    ``init`` the centres are those of scikit-learn's
    ``KMeans(init=..., n_init=1, max_iter=max_iter, algorithm="lloyd")``
    (scikit-learn moves an empty cluster to a far point; DPKMeans leaves
    it).

    Parameters
    ----------
    n_clusters : int >= 1, default=8
    init : {"private", "random"} or array of shape (n_clusters, n_features), default="private"
    max_iter : int >= 1, default=5
        Lloyd steps, all run: each costs privacy, so fewer is better at small ε.
    bounds : tuple (lower, upper) or None, default=None
    epsilon : float > 0, default=1.0
    delta : float in (0, 1), default=1e-5
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None
    secure : bool, default=False
        Draw every random number of the fit from the operating system's
        CSPRNG instead of numpy's generator; ``random_state`` must then be
        None. See :ref:`secure_randomness`.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    n_iter_ : int
        ``max_iter``: every step is run.
    bounds_ : tuple of two ndarrays of shape (n_features,)
    labels_ : ndarray of shape (n_samples,)
        Only with ``epsilon=inf``.
    privacy_curve_, epsilon_spent_, delta_spent_
    n_features_in_ : int
    feature_names_in_ : ndarray of str

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
        max_iter: int = 5,
        bounds: ArrayLike | None = None,
        epsilon: float = 1.0,
        delta: float = DEFAULT_DELTA,
        budget: PrivacyBudget | None = None,
        random_state: RandomStateLike = None,
        secure: bool = False,
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

    def _n_releases(self, init, max_iter):
        return max_iter + (1 if isinstance(init, str) and init == "private" else 0)

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> DPKMeans:
        """Run ``max_iter`` private Lloyd steps; charges the budget once.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=np.float64)
        n_features = X.shape[1]
        n_clusters = check_scalar(self.n_clusters, "n_clusters", int, min_val=1)
        max_iter = check_scalar(self.max_iter, "max_iter", int, min_val=1)
        init = self._check_init(n_clusters, n_features)
        bounds = check_bounds_or_none(self.bounds, n_features)
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        rng = self._check_generator()
        if epsilon != math.inf and delta == 0:
            raise ValueError("DPKMeans adds Gaussian noise and needs delta > 0.")
        steps = self._n_releases(init, max_iter)
        estimate = bounds is None and epsilon != math.inf
        z = None
        if epsilon == math.inf:
            curve = RDPCurve.non_private()
        elif estimate:
            def stat_curve(e):  # T steps of multiplier z·√T: together (e, δ) in RDP
                return steps * gaussian_rdp(_noise_multiplier(e, delta) * math.sqrt(steps))

            eps_bounds, eps_stat, curve = split_curve(epsilon, delta, n_features, stat_curve)
            z = _noise_multiplier(eps_stat, delta) * math.sqrt(steps)
        else:
            z = gaussian_multiplier(epsilon, delta) * math.sqrt(steps)
            curve = steps * gaussian_rdp(z)
        self._charge_budget(curve)

        if estimate:
            bounds = _bounds_release(X, epsilon=eps_bounds, delta=delta, rng=rng)
        if bounds is None:  # epsilon=inf without bounds: no clipping
            self.bounds_ = (np.full(n_features, -np.inf), np.full(n_features, np.inf))
            box = (X.min(axis=0), X.max(axis=0)) if X.shape[0] else (np.zeros(n_features),) * 2
        else:
            self.bounds_ = box = bounds
        Xc = np.clip(X, *self.bounds_)
        c = (box[0] + box[1]) / 2.0
        H = float(np.sqrt(np.sum(((box[1] - box[0]) / 2.0) ** 2)))
        count_w = 1.0 / (1.0 + math.sqrt(n_features))  # squared weight of the counts
        step = _LloydStep(Xc, c, H, z, count_w, box, rng)
        if isinstance(init, str):
            centers = rng.uniform(box[0], box[1], size=(n_clusters, n_features))
            if init == "private":
                centers = self._private_init(step, n_clusters, rng)
        else:
            centers = init
        for _ in range(max_iter):
            centers = step(centers)[0]
        self.cluster_centers_ = centers
        self.n_iter_ = max_iter
        if epsilon == math.inf:
            self.labels_ = self._labels(Xc)
        return self

    def _private_init(self, step, n_clusters, rng):
        """One private Lloyd step from random candidates, then weighted k-means++ on them."""
        m = CANDIDATES_PER_CLUSTER * n_clusters
        box = step.box
        candidates = rng.uniform(box[0], box[1], size=(m, len(step.c)))
        cand, counts, moved = step(candidates)
        weights = np.where(moved, np.maximum(counts, 0.0), 0.0)
        if weights.sum() <= 0:
            weights = np.ones(m)
        chosen = [int(np.argmax(weights))]
        for _ in range(1, n_clusters):
            d2 = _squared_distances(cand, cand[chosen]).min(axis=1)
            p = weights * d2
            if p.sum() <= 0:
                p = np.ones(m)
                p[chosen] = 0.0
            chosen.append(int(rng.choice(m, p=p / p.sum())))
        return cand[chosen]

    def _labels(self, Xc):
        return np.argmin(_squared_distances(Xc, self.cluster_centers_), axis=1).astype(np.int64)

    @property
    def _n_features_out(self):
        return self.cluster_centers_.shape[0]

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


class _LloydStep:
    """One Lloyd step on the clipped rows: the centroids from noisy counts and sums.

    ``z`` is the noise multiplier of the step's Gaussian vector (None: exact).
    Returns (centres, noisy counts, moved) for the given centres.
    """

    def __init__(self, Xc, c, H, z, count_w, box, rng):
        self.Xc, self.c, self.H, self.z, self.box, self.rng = Xc, c, H, z, box, rng
        self.count_w = count_w

    def __call__(self, centers):
        k, d = centers.shape
        labels = np.argmin(_squared_distances(self.Xc, centers), axis=1)
        counts = np.bincount(labels, minlength=k).astype(float)
        Y = self.Xc - self.c
        sums = np.stack([np.bincount(labels, weights=Y[:, j], minlength=k) for j in range(d)],
                        axis=1) if d else np.zeros((k, 0))
        if self.z is None:
            moved = counts > 0
            new = np.where(moved[:, None], self.c + sums / np.maximum(counts, 1.0)[:, None],
                           centers)
            return new, counts, moved
        count_std = self.z / math.sqrt(self.count_w)
        counts = counts + self.rng.normal(0.0, count_std, size=k)
        sums = sums + self.rng.normal(0.0, self.z * self.H / math.sqrt(1.0 - self.count_w),
                                      size=(k, d))
        moved = counts > 3.0 * count_std
        new = self.c + sums / np.maximum(counts, 1.0)[:, None]
        new = np.where(moved[:, None], np.clip(new, *self.box), centers)
        return new, counts, moved
