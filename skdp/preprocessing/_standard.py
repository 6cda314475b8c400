"""DPStandardScaler: standardisation with DP means and variances."""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve
from ..stats._sums import (
    _centre_and_half_width,
    _floor_variance,
    _mean_curve,
    _mean_release,
    _var_curve,
    _var_release,
)
from ..stats._range import _bounds_release, check_bounds_or_none, no_bounds, split_curve
from ..utils import DEFAULT_DELTA, check_delta, check_epsilon
from ..utils._rows import check_lazy_X, is_lazy, lazy_rows, refuse_lazy
from ..utils._validation import validate_data
from ._validation import check_bool, finite_output

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPStandardScaler"]


class DPStandardScaler(DPEstimatorMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardise features by a DP mean and a DP standard deviation.

    The mean and variance of every feature come from one release of noisy sums
    of the clipped values (:mod:`skdp.stats`), charged once at (``epsilon``,
    ``delta``); without public ``bounds``, half of ``epsilon`` first releases
    private ones, in the same charge. Notes give the mechanism and the bounds.

    Parameters
    ----------
    bounds : tuple (lower, upper) or None, default=None
        Public bounds of the features: scalars or arrays of shape
        (n_features,). ``None``: estimated privately with half of ``epsilon``
        (see Notes); public bounds are better.
    epsilon : float > 0, default=1.0
    delta : float in [0, 1), default=1e-5
        The package's δ (:data:`skdp.utils.DEFAULT_DELTA`). With δ > 0 the
        sums are one Gaussian vector where that adds less noise than the
        Laplace split (many features: noise std ∝ √k instead of k for k
        sums), else the Laplace, which is then pure ε-DP. 0 always gives pure
        ε-DP (Laplace). ``epsilon_spent_`` is reported at this δ.
    with_mean : bool, default=True
        Centre the data.
    with_std : bool, default=True
        Scale the data to unit variance.
    copy : bool, default=True
        Kept for compatibility with scikit-learn; inputs are never modified.
    secure : bool, default=False
        Exact discrete noise on a public grid (see :mod:`skdp.stats`),
        against floating-point attacks (Mironov 2012).
        With ``secure=True`` every random number of the fit also comes from the
        operating system's CSPRNG, and ``random_state`` must be None (see
        :ref:`secure_randomness`).
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,) or None
        DP mean; ``None`` when ``with_mean=False`` and ``with_std=False``.
    var_ : ndarray of shape (n_features,) or None
        DP variance, in [s, ((upper − lower)/2)²] with s the standard
        deviation of its own noise (see Notes); ``None`` when ``with_std=False``.
    scale_ : ndarray of shape (n_features,) or None
        ``sqrt(var_)``, with 1 for (near) zero variances.
    bounds_ : tuple of two ndarrays of shape (n_features,)
        The bounds the fit clipped to and ``transform`` clips to: the public
        ones, the private estimate, or ±inf (``epsilon=inf`` without bounds,
        or nothing computed).
    privacy_curve_, epsilon_spent_, delta_spent_
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Like :class:`sklearn.preprocessing.StandardScaler`. Values are clipped to
    ``bounds`` and the mean and variance of every feature come from one
    release of :mod:`skdp.stats`: a noisy count and, per feature, a noisy sum
    and a noisy sum of squares (``with_std=True``), or a noisy count and
    noisy sums (``with_mean=True, with_std=False``). ``epsilon`` covers the
    whole fit, which charges the budget once; with ``delta=0`` the noise is
    Laplace (pure ε-DP), with ``delta > 0`` (the default) one Gaussian vector
    where that adds less noise. The count of rows is private: the means
    divide by the noisy count. ``with_mean=False, with_std=False`` reads
    nothing and charges :meth:`RDPCurve.zero() <skdp.accounting.RDPCurve.zero>`.
    A released variance below the standard deviation s of its own noise
    (found from the public parameters and the released count and mean, to
    first order) cannot be told from 0 and is raised to s, as
    :class:`~skdp.naive_bayes.DPGaussianNB` does: clamped to 0 it would give
    the feature a scale of 1, leaving it in its raw units, hundreds of times
    the other features' on a table of few rows in wide bounds
    (post-processing: no budget).

    **Bounds.** Public bounds (known from the data's meaning, never read
    from it) are the best choice: they cost nothing. Without them
    (``bounds=None``, the default) the fit first releases private bounds of
    each feature with half of ``epsilon`` (:func:`skdp.stats.bounds`: a
    noisy log-scale histogram, within a factor 2 of the data's range; the
    features none of whose bins stands out of the noise share the range of
    their pooled histogram), and the mean and variance take the rest, composed into the
    fit's one charge (see :ref:`bounds`). Either way the bounds are part of
    the model (``bounds_``): ``transform`` clips to them as the fit did. With
    ``epsilon=inf`` no bounds are needed and the result equals
    scikit-learn's (with public bounds, for data inside them).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import DPStandardScaler
    >>> X = np.random.default_rng(0).uniform(0, 10, size=(100_000, 2))
    >>> scaler = DPStandardScaler(bounds=(0, 10), epsilon=1.0, random_state=0).fit(X)
    >>> np.round(scaler.mean_, 1), np.round(scaler.scale_, 1)
    (array([5., 5.]), array([2.9, 2.9]))

    Without public bounds, half of ε goes to private ones:

    >>> scaler = DPStandardScaler(epsilon=1.0, random_state=0).fit(X)
    >>> scaler.bounds_
    (array([0.03125, 0.03125]), array([16., 16.]))
    >>> np.round(scaler.mean_, 1), np.round(scaler.scale_, 1)
    (array([5., 5.]), array([2.9, 2.9]))
    """

    def __init__(
        self,
        *,
        bounds: ArrayLike | None = None,
        epsilon: float = 1.0,
        delta: float = DEFAULT_DELTA,
        with_mean: bool = True,
        with_std: bool = True,
        copy: bool = True,
        secure: bool = False,
        budget: PrivacyBudget | None = None,
        random_state: RandomStateLike = None,
    ) -> None:
        self.bounds = bounds
        self.epsilon = epsilon
        self.delta = delta
        self.with_mean = with_mean
        self.with_std = with_std
        self.copy = copy
        self.secure = secure
        self.budget = budget
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> DPStandardScaler:
        """Compute the DP mean and variance; charges the budget once.

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
        bounds = check_bounds_or_none(self.bounds, n_features)
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        with_mean = check_bool(self.with_mean, "with_mean")
        with_std = check_bool(self.with_std, "with_std")
        secure = check_bool(self.secure, "secure")
        if lazy and secure:
            raise refuse_lazy("secure=True")
        rng = self._check_generator()
        stat_curve = None  # the curve of the statistic at a given epsilon
        if with_std or with_mean:
            stat_curve = partial(_var_curve if with_std else _mean_curve, delta=delta,
                                 n_outputs=n_features, secure=secure)
        # The whole curve from public parameters: the statistic alone (public bounds,
        # epsilon=inf, nothing to compute) or the private bounds composed with it.
        estimate = bounds is None and stat_curve is not None and epsilon != math.inf
        if stat_curve is None:
            curve = RDPCurve.zero()
        elif estimate:
            eps_bounds, eps_stat, curve = split_curve(epsilon, delta, n_features, stat_curve,
                                                      secure=secure)
        else:
            eps_stat, curve = epsilon, stat_curve(epsilon)
        self._charge_budget(curve)

        if estimate:
            bounds = _bounds_release(X, epsilon=eps_bounds, delta=delta, rng=rng, secure=secure)
        if stat_curve is None:  # nothing computed, nothing clipped
            self.bounds_ = no_bounds(n_features)
            self.mean_ = self.var_ = self.scale_ = None
            return self
        self.bounds_ = no_bounds(n_features) if bounds is None else bounds
        if bounds is None:  # epsilon=inf without bounds: scikit-learn's statistics, no clipping
            self.mean_ = np.asarray(np.mean(X, axis=0))  # (np.asarray computes a dask result)
            self.var_ = np.asarray(np.var(X, axis=0)) if with_std else None
        else:
            kw = dict(epsilon=eps_stat, delta=delta, bounds=bounds, axis=0, rng=rng,
                      secure=secure)
            if with_std:
                count, self.mean_, self.var_ = _var_release(X, return_mean=True,
                                                            return_count=True, **kw)
                if eps_stat != math.inf:
                    # post-processing: a variance below its own noise's std reads as that
                    # std, not 0 (whose scale of 1 would leave the feature in raw units)
                    _, _, centre, half = _centre_and_half_width(bounds, n_features)
                    self.var_ = _floor_variance(self.var_, self.mean_ - centre, half, count,
                                                epsilon=eps_stat, delta=delta)
            else:
                self.mean_, self.var_ = _mean_release(X, **kw), None
        if with_std:
            scale = np.sqrt(self.var_)
            self.scale_ = np.where(scale < 10 * np.finfo(float).eps, 1.0, scale)
        else:
            self.scale_ = None
        return self

    @lazy_rows
    def transform(self, X: ArrayLike, copy: bool | None = None) -> NDArray:
        """Clip X to ``bounds_`` (as the fit did), then standardise it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        copy : bool or None
            Ignored; a new array is returned.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return finite_output(lambda: self._standardise(np.clip(X, *self.bounds_)))

    def _standardise(self, X):
        if self.with_mean:
            X = X - self.mean_
        if self.with_std:
            X = X / self.scale_
        return X

    @lazy_rows
    def inverse_transform(self, X: ArrayLike, copy: bool | None = None) -> NDArray:
        """Undo the standardisation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        copy : bool or None
            Ignored.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return finite_output(lambda: self._unstandardise(X))

    def _unstandardise(self, X):
        if self.with_std:
            X = X * self.scale_
        if self.with_mean:
            X = X + self.mean_
        return X
