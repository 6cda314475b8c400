"""DPKBinsDiscretizer: bins from public or private bounds, or from DP quantiles."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.preprocessing import OneHotEncoder
from sklearn.utils.validation import check_is_fitted

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve
from ..stats._quantiles import _quantile_curve, _quantile_release
from ..stats._range import _bounds_curve, _bounds_release, check_bounds_or_none, split_curve
from ..utils import DEFAULT_DELTA, check_delta, check_epsilon
from ..utils._validation import validate_data
from ._validation import check_bool, check_choice, check_n_bins

if TYPE_CHECKING:
    from scipy.sparse import spmatrix

    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPKBinsDiscretizer"]


class DPKBinsDiscretizer(DPEstimatorMixin, TransformerMixin, BaseEstimator):
    """Bin continuous data into intervals, with differential privacy.

    ``strategy="uniform"`` cuts equal-width bins between the ``bounds`` (free
    with public bounds), ``"quantile"`` at DP quantiles; without public
    bounds, private ones are released in the fit's one charge. Every bin is
    kept, so the output's shape depends on ``n_bins`` alone. Notes give both
    strategies and the bounds.

    Parameters
    ----------
    n_bins : int or array-like of shape (n_features,), default=5
        Number of bins, >= 2.
    encode : {"onehot", "onehot-dense", "ordinal"}, default="onehot"
        Encoding of the result, as in scikit-learn ("onehot" is sparse).
    strategy : {"uniform", "quantile"}, default="uniform"
    bounds : tuple (lower, upper) or None, default=None
        Public bounds of the features, never read from the data. ``None``:
        estimated privately (see Notes); public bounds are better.
    epsilon : float > 0, default=1.0
        ε of the fit (unused with public bounds and ``strategy="uniform"``).
    delta : float in [0, 1), default=1e-5
        The package's δ (:data:`skdp.utils.DEFAULT_DELTA`), used by the
        private bounds (one Gaussian vector over the features' histograms
        where that adds less noise than the Laplace) and to report
        ``epsilon_spent_``; the quantiles are pure ε-DP.
    dtype : {np.float32, np.float64} or None, default=None
        Output dtype; ``None`` keeps the input's float dtype.
    secure : bool, default=False
        Only used with ``strategy="quantile"``. **The threat:** with
        ``secure=False`` each quantile's selection probabilities are computed
        in floating point and the edge is drawn uniformly between two data
        values, so which floats can come out, and how likely they are,
        depends on the data beyond what the analysis covers (Mironov 2012;
        Ilvento 2020). **What changes:** with ``secure=True`` every inner
        edge is a point of a public grid of 1024 evenly spaced values from
        the feature's lower to its upper bound (``np.linspace``), chosen by
        the exact base-2 exponential mechanism (Ilvento 2020) with integer
        arithmetic only, as :func:`skdp.stats.quantile` with ``secure=True``
        does. **The cost:** edges are grid points (up to half a step,
        (upper − lower)/2046, of extra error; edges that land on the same
        point leave empty bins between them, which are kept);
        each mechanism runs at an effective ε' a hair below its share of
        ``epsilon`` (relative gap about 2^-22), which is what is charged; and
        the sampler runs in Python, one edge at a time (slower). Validated
        before any charge. Timing is not hardened.
        With ``secure=True`` every random number of the fit also comes from the
        operating system's CSPRNG, and ``random_state`` must be None (see
        :ref:`secure_randomness`).
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None

    Attributes
    ----------
    bin_edges_ : ndarray of ndarray, shape (n_features,)
        The edges of each feature's bins: ``n_bins_[j] + 1`` nondecreasing
        values for feature j (repeated where private edges collide).
    n_bins_ : ndarray of int, shape (n_features,)
        Equal to ``n_bins`` (every bin is kept).
    bounds_ : tuple of two ndarrays of shape (n_features,)
        The outer edges: the public bounds, the private ones, or the data's
        minimum and maximum (``epsilon=inf`` without bounds).
    privacy_curve_, epsilon_spent_, delta_spent_
        What the fit charged.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Like :class:`sklearn.preprocessing.KBinsDiscretizer`, with two strategies:

    - ``strategy="uniform"``: equal-width bins between the ``bounds``. With
      public bounds the fit reads no value of the data and charges
      :meth:`RDPCurve.zero() <skdp.accounting.RDPCurve.zero>`.
    - ``strategy="quantile"``: the inner edges are the DP quantiles
      1/k, ..., (k−1)/k of each feature (clipped to the ``bounds``),
      released by :mod:`skdp.stats`; ``epsilon`` is split evenly over the
      (k − 1) × n_features quantiles, and their composed curve is charged once.
      The outer edges are the bounds. Noisy edges are sorted (which is
      post-processing). These quantiles are not hardened against
      floating-point attacks unless ``secure=True`` (see the parameter and
      :ref:`floating_point`).

    Bounds: public bounds (known from the data's meaning, never read from
    it) are the best choice. Without them (``bounds=None``, the default) the
    fit releases private bounds of each feature (:func:`skdp.stats.bounds`:
    a noisy log-scale histogram; each end is 0 or a power of two, within a
    factor 2 of the data's range, and the features none of whose bins stands
    out of the noise share the range of their pooled histogram), with all of
    ``epsilon`` for ``"uniform"`` and
    half of it for ``"quantile"``, composed into the fit's one charge (see
    :ref:`bounds`); with ``epsilon=inf``, the data's minimum and maximum, as
    scikit-learn.

    **Every bin is kept**, unlike scikit-learn: its ``KBinsDiscretizer``
    removes bins of width <= 1e-8 (edges that collide on tightly packed data)
    with a warning. Here edges that collide leave empty bins, so the number
    of bins ``n_bins_``, the shapes of ``bin_edges_``, the output columns
    and ``get_feature_names_out`` depend on ``n_bins`` alone, never on the
    data: removed bins (or the warning) would reveal how packed the private
    values are, and in a pipeline the next step's cost, which depends on
    its number of input columns, would no longer be the one computed
    before the charge (what :class:`~skdp.model_selection.DPGridSearchCV`
    probes). A value equal to repeated edges falls in the last bin they
    bound.

    Values outside the bounds fall in the first or last bin. With
    ``epsilon=inf`` the result equals scikit-learn's (for ``"uniform"``
    without bounds, or when they are the data's minimum and maximum; for
    ``"quantile"`` with the same ``quantile_method``), where scikit-learn
    removes no bin.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import DPKBinsDiscretizer
    >>> X = np.array([[0.5, 1.0], [2.5, 3.0], [3.9, 9.0]])
    >>> est = DPKBinsDiscretizer(n_bins=4, encode="ordinal", bounds=(0, 4)).fit(X)
    >>> est.bin_edges_[0]
    array([0., 1., 2., 3., 4.])
    >>> est.transform(X)
    array([[0., 1.],
           [2., 3.],
           [3., 3.]])

    Without public bounds the range is private (here all of ε on it):

    >>> X = np.random.default_rng(0).integers(0, 8, size=(5000, 1))
    >>> DPKBinsDiscretizer(n_bins=4, random_state=0).fit(X).bin_edges_[0]
    array([0., 2., 4., 6., 8.])
    """

    def __init__(
        self,
        n_bins: int | ArrayLike = 5,
        *,
        encode: str = "onehot",
        strategy: str = "uniform",
        bounds: ArrayLike | None = None,
        epsilon: float = 1.0,
        delta: float = DEFAULT_DELTA,
        dtype: type[np.floating] | None = None,
        secure: bool = False,
        budget: PrivacyBudget | None = None,
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_bins = n_bins
        self.encode = encode
        self.strategy = strategy
        self.bounds = bounds
        self.epsilon = epsilon
        self.delta = delta
        self.dtype = dtype
        self.secure = secure
        self.budget = budget
        self.random_state = random_state

    def _output_dtype(self, X):
        if self.dtype is None:
            return X.dtype
        if self.dtype in (np.float64, np.float32):
            return np.dtype(self.dtype)
        raise ValueError(f"dtype must be np.float32, np.float64 or None; got {self.dtype!r}.")

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> DPKBinsDiscretizer:
        """Compute the bin edges; charges the budget once.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=(np.float64, np.float32))
        n_features = X.shape[1]
        n_bins = check_n_bins(self.n_bins, n_features, minimum=2)
        check_choice(self.encode, {"onehot", "onehot-dense", "ordinal"}, "encode")
        check_choice(self.strategy, {"uniform", "quantile"}, "strategy")
        bounds = check_bounds_or_none(self.bounds, n_features)
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        output_dtype = self._output_dtype(X)
        secure = check_bool(self.secure, "secure")
        rng = self._check_generator()

        # The whole curve from public parameters. Without public bounds (finite
        # epsilon) the private bounds come first: all of epsilon for "uniform" (they
        # are the range), their share for "quantile" (the quantiles are searched
        # within them).
        estimate = bounds is None and epsilon != math.inf
        if self.strategy == "uniform":
            if estimate:
                eps_bounds, curve = epsilon, _bounds_curve(epsilon, delta, n_features,
                                                           secure=secure)
            else:  # public bounds read nothing; epsilon=inf reads the exact range
                curve = RDPCurve.zero() if bounds is not None else RDPCurve.non_private()
        else:
            # epsilon is split evenly over the features, and each feature's k − 1
            # inner edges split its share evenly (exponential mechanisms of skdp.stats).
            # Feature j's curve and release take the same (eps_feature, 1 column,
            # k_j − 1 levels, secure), so the release runs exactly the mechanisms
            # charged; a secure epsilon too small raises here, before the charge.
            def stat_curve(eps):
                return sum((_quantile_curve(eps / n_features, 0.0, 1, n_quantiles=k - 1,
                                            secure=secure) for k in n_bins), RDPCurve.zero())

            if estimate:
                eps_bounds, eps_q, curve = split_curve(epsilon, delta, n_features, stat_curve,
                                                       secure=secure)
            else:
                eps_q, curve = epsilon, stat_curve(epsilon)
        self._charge_budget(curve)

        if estimate:
            bounds = _bounds_release(X, epsilon=eps_bounds, delta=delta, rng=rng, secure=secure)
        if bounds is None:  # epsilon=inf without bounds: the data's range, as scikit-learn
            lower, upper = X.min(axis=0).astype(np.float64), X.max(axis=0).astype(np.float64)
        else:
            lower, upper = bounds
        self.bounds_ = (lower, upper)
        if self.strategy == "uniform":
            edges = [np.linspace(lower[j], upper[j], n_bins[j] + 1) for j in range(n_features)]
        else:
            edges = []
            for j in range(n_features):
                levels = np.linspace(0.0, 1.0, n_bins[j] + 1)[1:-1]
                inner = _quantile_release(X[:, [j]].astype(np.float64), levels,
                                          epsilon=eps_q / n_features, delta=0.0,
                                          bounds=(lower[j], upper[j]), axis=0, rng=rng,
                                          secure=secure)
                # Colliding edges are kept (empty bins): the number of bins, so of
                # output columns, must not depend on the data (see the docstring).
                edges.append(np.concatenate([[lower[j]], np.sort(inner.ravel()), [upper[j]]]))
        self.bin_edges_ = np.empty(n_features, dtype=object)
        self.bin_edges_[:] = [np.asarray(e, dtype=np.float64) for e in edges]
        self.n_bins_ = np.array([len(e) - 1 for e in self.bin_edges_], dtype=int)
        if self.encode != "ordinal":
            self._encoder = OneHotEncoder(
                categories=[np.arange(k) for k in self.n_bins_],
                sparse_output=self.encode == "onehot",
                dtype=output_dtype,
            ).fit(np.zeros((1, n_features)))  # public categories only, no data
        return self

    def transform(self, X: ArrayLike) -> NDArray | spmatrix:
        """Bin X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray or sparse matrix
            Sparse when ``encode="onehot"``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=(np.float64, np.float32), reset=False)
        dtype = self._output_dtype(X)
        Xt = np.empty(X.shape, dtype=dtype)
        for j, edges in enumerate(self.bin_edges_):
            Xt[:, j] = np.searchsorted(edges[1:-1], X[:, j], side="right")
        if self.encode == "ordinal":
            return Xt
        return self._encoder.transform(Xt)

    def inverse_transform(self, X: ArrayLike) -> NDArray:
        """Map bins back to their centres.

        Parameters
        ----------
        X : array-like
            Binned data.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        if self.encode != "ordinal":
            X = self._encoder.inverse_transform(X)
        X = np.array(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"Expected {self.n_features_in_} features; got shape {X.shape}.")
        out = np.empty_like(X)
        for j, edges in enumerate(self.bin_edges_):
            centres = (edges[1:] + edges[:-1]) * 0.5
            out[:, j] = centres[np.clip(X[:, j].astype(int), 0, len(centres) - 1)]
        return out

    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> NDArray[np.object_]:
        """Output feature names, as scikit-learn's ``KBinsDiscretizer`` names them.

        Parameters
        ----------
        input_features : array-like of str or None

        Returns
        -------
        ndarray of str
        """
        check_is_fitted(self, "n_features_in_")
        names = self._input_names(input_features)
        if self.encode == "ordinal":
            return names
        return self._encoder.get_feature_names_out(names)

    def _input_names(self, input_features):
        if input_features is None:
            if hasattr(self, "feature_names_in_"):
                return np.asarray(self.feature_names_in_, dtype=object)
            return np.asarray([f"x{i}" for i in range(self.n_features_in_)], dtype=object)
        input_features = np.asarray(input_features, dtype=object)
        if len(input_features) != self.n_features_in_:
            raise ValueError(
                f"input_features should have length equal to number of features "
                f"({self.n_features_in_}), got {len(input_features)}"
            )
        if hasattr(self, "feature_names_in_") and not np.array_equal(
            self.feature_names_in_, input_features
        ):
            raise ValueError("input_features is not equal to feature_names_in_")
        return input_features
