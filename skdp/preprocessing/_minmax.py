"""DPMinMaxScaler: min-max scaling from public bounds, private bounds or DP quantiles."""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve
from ..stats._quantiles import _quantile_curve, _quantile_release
from ..stats._range import (
    _bounds_curve,
    _bounds_release,
    check_bounds_or_none,
    no_bounds,
    split_curve,
)
from ..utils import DEFAULT_DELTA, check_delta, check_epsilon
from ..utils._rows import check_lazy_X, is_lazy, lazy_rows, refuse_lazy
from ..utils._validation import validate_data
from ._validation import check_bool, check_feature_range, check_quantile_pair, finite_output

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPMinMaxScaler"]


def _min_max(X):
    """The exact minimum and maximum of each column (``epsilon=inf``), of memory or dask rows."""
    if not is_lazy(X):
        return X.min(axis=0), X.max(axis=0)
    import dask

    return tuple(np.asarray(v) for v in dask.compute(X.min(axis=0), X.max(axis=0)))


class DPMinMaxScaler(DPEstimatorMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale each feature to ``feature_range``, with differential privacy.

    The range of each feature is the public ``bounds`` (which cost nothing),
    private bounds released with ``epsilon``, or DP quantiles
    (``quantile_range``); the fit charges the budget once. Notes give each
    case.

    Parameters
    ----------
    feature_range : tuple (min, max), default=(0, 1)
        Desired range of transformed data.
    bounds : tuple (lower, upper) or None, default=None
        Public bounds of the features (scalars or arrays of shape
        (n_features,)), never read from the data. ``None``: estimated
        privately (see Notes); public bounds are better.
    quantile_range : tuple (q_low, q_high) or None, default=None
        Quantiles in [0, 1] that define the range, or ``None`` to use ``bounds``.
    epsilon : float > 0, default=1.0
        ε of the fit (unused with public bounds and ``quantile_range=None``).
    delta : float in [0, 1), default=1e-5
        The package's δ (:data:`skdp.utils.DEFAULT_DELTA`), used by the
        private bounds (one Gaussian vector over the features' histograms
        where that adds less noise than the Laplace) and to report
        ``epsilon_spent_``; the quantiles are pure ε-DP.
    copy : bool, default=True
        Kept for compatibility with scikit-learn; inputs are never modified.
    clip : bool, default=False
        Clip transformed values to ``feature_range``.
    secure : bool, default=False
        Only used with ``quantile_range``. **The threat:** with
        ``secure=False`` each quantile's selection probabilities are computed
        in floating point and the output is drawn uniformly between two data
        values, so which floats can come out, and how likely they are,
        depends on the data beyond what the analysis covers (Mironov 2012;
        Ilvento 2020). **What changes:** with ``secure=True`` each quantile
        is a point of a public grid of 1024 evenly spaced values from the
        feature's lower to its upper bound (``np.linspace``), chosen by the
        exact base-2 exponential mechanism (Ilvento 2020) with integer
        arithmetic only, as :func:`skdp.stats.quantile` with ``secure=True``
        does. **The cost:** ``data_min_`` and ``data_max_`` are grid points
        (up to half a step, (upper − lower)/2046, of extra error); the
        mechanism runs at an effective ε' a hair below each quantile's share
        of ``epsilon`` (relative gap about 2^-22), which is what is charged;
        and the sampler runs in Python, one quantile at a time (slower).
        Validated before any charge. Timing is not hardened.
        With ``secure=True`` every random number of the fit also comes from the
        operating system's CSPRNG, and ``random_state`` must be None (see
        :ref:`secure_randomness`).
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None

    Attributes
    ----------
    data_min_, data_max_ : ndarray of shape (n_features,)
        The range used per feature (public or private bounds, or DP quantiles).
    bounds_ : tuple of two ndarrays of shape (n_features,)
        The outer bounds: public, private, or ±inf (``epsilon=inf`` without
        bounds).
    data_range_ : ndarray of shape (n_features,)
    scale_, min_ : ndarray of shape (n_features,)
        ``X * scale_ + min_`` is the transform.
    privacy_curve_, epsilon_spent_, delta_spent_
        What the fit charged.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Like :class:`sklearn.preprocessing.MinMaxScaler`, but the range of each
    feature comes from public information or from a private estimate:

    - ``quantile_range=None`` (default): the range is ``bounds``. Public
      bounds (the best choice) are read from no value of the data: the fit
      charges :meth:`RDPCurve.zero() <skdp.accounting.RDPCurve.zero>` (a
      ledger entry that costs nothing, so that every fit is recorded).
      Without them (``bounds=None``, the default) the range is released
      privately with all of ``epsilon`` (:func:`skdp.stats.bounds`: a noisy
      log-scale histogram; each end is 0 or a power of two, within a factor 2
      of the data's range, and the features none of whose bins stands out
      of the noise share the range of their pooled histogram); with
      ``epsilon=inf``, the data's minimum and
      maximum, as in scikit-learn.
    - ``quantile_range=(q_low, q_high)``, e.g. ``(0.01, 0.99)``: the range is
      the DP quantiles ``q_low`` and ``q_high`` of each feature, searched within
      the outer ``bounds`` (values outside them are clipped first).
      ``epsilon`` is split evenly over the 2 × n_features quantiles, each an
      exponential mechanism (Smith 2011) of :mod:`skdp.stats`; the fit charges
      their composed (pure ε-DP) curve once. Without public bounds, half of
      ``epsilon`` first releases private outer bounds, composed into the same
      charge (see :ref:`bounds`).
      With ``epsilon=inf`` and ``quantile_range=(0, 1)`` the range is the data's
      minimum and maximum, as in scikit-learn.

    The quantiles are not hardened against floating-point attacks unless
    ``secure=True`` (see the parameter and :ref:`floating_point`).

    ``fit`` also takes a dask array or DataFrame (:ref:`larger_than_memory`):
    the private bounds' histograms, or at ``epsilon=inf`` the minimum and
    maximum, are reduced over the chunks, and ``transform`` is lazy; the
    quantiles and ``secure=True`` still need the rows in memory.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import DPMinMaxScaler
    >>> X = np.array([[0.0, 10.0], [5.0, 20.0], [10.0, 40.0]])
    >>> scaler = DPMinMaxScaler(bounds=([0, 0], [10, 40])).fit(X)
    >>> scaler.transform(X)
    array([[0.  , 0.25],
           [0.5 , 0.5 ],
           [1.  , 1.  ]])
    >>> scaler.epsilon_spent_
    0.0

    With DP quantiles, ``secure=True`` picks them from the public grid of 1024
    points between the bounds (here the integers 0, 1, ..., 1023):

    >>> X = np.random.default_rng(0).uniform(0, 1023, size=(10_000, 1))
    >>> scaler = DPMinMaxScaler(bounds=(0, 1023), quantile_range=(0.01, 0.99),
    ...                         secure=True).fit(X)  # unseeded: the OS CSPRNG
    >>> low, high = scaler.data_min_[0], scaler.data_max_[0]
    >>> bool(low == round(low) and high == round(high) and 0 < low < 40 and 985 < high < 1023)
    True

    Without public bounds the range is private, 0 or powers of two:

    >>> DPMinMaxScaler(random_state=0).fit(X).data_max_
    array([1024.])
    """

    def __init__(
        self,
        feature_range: tuple[float, float] = (0, 1),
        *,
        bounds: ArrayLike | None = None,
        quantile_range: tuple[float, float] | None = None,
        epsilon: float = 1.0,
        delta: float = DEFAULT_DELTA,
        copy: bool = True,
        clip: bool = False,
        secure: bool = False,
        budget: PrivacyBudget | None = None,
        random_state: RandomStateLike = None,
    ) -> None:
        self.feature_range = feature_range
        self.bounds = bounds
        self.quantile_range = quantile_range
        self.epsilon = epsilon
        self.delta = delta
        self.copy = copy
        self.clip = clip
        self.secure = secure
        self.budget = budget
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> DPMinMaxScaler:
        """Compute the range per feature; charges the budget once.

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
        low, high = check_feature_range(self.feature_range)
        bounds = check_bounds_or_none(self.bounds, n_features)
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        check_bool(self.clip, "clip")
        secure = check_bool(self.secure, "secure")
        if lazy and secure:
            raise refuse_lazy("secure=True")
        rng = self._check_generator()
        levels = None
        if self.quantile_range is not None:
            levels = np.array(check_quantile_pair(self.quantile_range))
            if lazy:
                raise refuse_lazy("quantile_range (DP quantiles of the sorted rows)")
        # The whole curve from public parameters. Without public bounds (finite
        # epsilon) the private bounds come first: all of epsilon when they are the
        # range, their share when DP quantiles are searched within them.
        estimate = bounds is None and epsilon != math.inf
        if levels is None:
            if estimate:
                eps_bounds, curve = epsilon, _bounds_curve(epsilon, delta, n_features,
                                                           secure=secure)
            else:  # public bounds read nothing; epsilon=inf reads the exact range
                curve = RDPCurve.zero() if bounds is not None else RDPCurve.non_private()
        else:
            # The curve and the release take the same (epsilon, n_features, 2 levels,
            # secure): the release runs exactly the mechanisms charged (stats._quantiles).
            # The curve raises before the charge if secure's epsilon is too small.
            stat_curve = partial(_quantile_curve, delta=0.0, n_outputs=n_features, n_quantiles=2,
                                 secure=secure)
            if estimate:
                eps_bounds, eps_q, curve = split_curve(epsilon, delta, n_features, stat_curve,
                                                       secure=secure)
            else:
                eps_q, curve = epsilon, stat_curve(epsilon)
        self._charge_budget(curve)

        if estimate:
            bounds = _bounds_release(X, epsilon=eps_bounds, delta=delta, rng=rng, secure=secure)
        self.bounds_ = no_bounds(n_features) if bounds is None else bounds
        if levels is None:
            # epsilon=inf without bounds: the data's minimum and maximum, as scikit-learn
            data_min, data_max = _min_max(X) if bounds is None else bounds
        else:
            if bounds is None:  # epsilon=inf without bounds: numpy's quantiles of the data
                q = np.quantile(X, levels, axis=0)
            else:
                q = _quantile_release(X, levels, epsilon=eps_q, delta=0.0, bounds=bounds,
                                      axis=0, rng=rng, secure=secure)
            # Sorting the two noisy quantiles of a feature is post-processing.
            data_min, data_max = np.min(q, axis=0), np.max(q, axis=0)

        data_range = data_max - data_min
        # A (near) zero range scales by 1, as scikit-learn does for constant features.
        safe_range = np.where(data_range < 10 * np.finfo(float).eps, 1.0, data_range)
        self.scale_ = (high - low) / safe_range
        self.min_ = low - data_min * self.scale_
        self.data_min_ = data_min
        self.data_max_ = data_max
        self.data_range_ = data_range
        return self

    @lazy_rows
    def transform(self, X: ArrayLike) -> NDArray:
        """Scale X to ``feature_range``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Xt = finite_output(lambda: X * self.scale_ + self.min_)
        if self.clip:
            Xt = np.clip(Xt, *check_feature_range(self.feature_range))
        return Xt

    @lazy_rows
    def inverse_transform(self, X: ArrayLike) -> NDArray:
        """Undo the scaling.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return finite_output(lambda: (X - self.min_) / self.scale_)

