"""DPMinMaxScaler: min-max scaling from public bounds or DP quantiles."""

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve
from ..stats._core import _quantile_curve, _quantile_release
from ..utils import check_bounds, check_epsilon, check_generator
from ._validation import check_bool, check_feature_range, check_quantile_pair, finite_output

__all__ = ["DPMinMaxScaler"]


class DPMinMaxScaler(DPEstimatorMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale each feature to ``feature_range``, with differential privacy.

    Like :class:`sklearn.preprocessing.MinMaxScaler`, but the range of each
    feature comes from public information or from a private estimate:

    - ``quantile_range=None`` (default): the range is the public ``bounds``.
      The fit reads no value of the data and charges the budget
      :meth:`RDPCurve.zero() <skdp.accounting.RDPCurve.zero>` (a ledger entry
      that costs nothing, so that every fit is recorded).
    - ``quantile_range=(q_low, q_high)``, e.g. ``(0.01, 0.99)``: the range is
      the DP quantiles ``q_low`` and ``q_high`` of each feature, searched within
      the public outer ``bounds`` (values outside them are clipped first).
      ``epsilon`` is split evenly over the 2 × n_features quantiles, each an
      exponential mechanism (Smith 2011) of :mod:`skdp.stats`; the fit charges
      their composed (pure ε-DP) curve once.
      With ``epsilon=inf`` and ``quantile_range=(0, 1)`` the range is the data's
      minimum and maximum, as in scikit-learn.

    The quantiles are not hardened against floating-point attacks unless
    ``secure=True`` (see the parameter and :ref:`floating_point`).

    Parameters
    ----------
    feature_range : tuple (min, max), default=(0, 1)
        Desired range of transformed data.
    bounds : tuple (lower, upper)
        Public bounds of the features (scalars or arrays of shape
        (n_features,)). Required; never read from the data.
    quantile_range : tuple (q_low, q_high) or None, default=None
        Quantiles in [0, 1] that define the range, or ``None`` to use ``bounds``.
    epsilon : float > 0, default=1.0
        ε of the fit when ``quantile_range`` is given (unused otherwise).
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
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None

    Attributes
    ----------
    data_min_, data_max_ : ndarray of shape (n_features,)
        The range used per feature (public bounds, or DP quantiles).
    data_range_ : ndarray of shape (n_features,)
    scale_, min_ : ndarray of shape (n_features,)
        ``X * scale_ + min_`` is the transform.
    privacy_curve_, epsilon_spent_, delta_spent_
        What the fit charged.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

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
    >>> scaler = DPMinMaxScaler(bounds=(0, 1023), quantile_range=(0.01, 0.99), secure=True,
    ...                         random_state=0).fit(X)
    >>> scaler.data_min_, scaler.data_max_
    (array([12.]), array([1014.]))
    """

    def __init__(
        self,
        feature_range=(0, 1),
        *,
        bounds=None,
        quantile_range=None,
        epsilon=1.0,
        copy=True,
        clip=False,
        secure=False,
        budget=None,
        random_state=None,
    ):
        self.feature_range = feature_range
        self.bounds = bounds
        self.quantile_range = quantile_range
        self.epsilon = epsilon
        self.copy = copy
        self.clip = clip
        self.secure = secure
        self.budget = budget
        self.random_state = random_state

    def fit(self, X, y=None):
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
        X = validate_data(self, X, dtype=np.float64)
        low, high = check_feature_range(self.feature_range)
        lower, upper = check_bounds(self.bounds, X.shape[1])
        epsilon = check_epsilon(self.epsilon)
        check_bool(self.clip, "clip")
        secure = check_bool(self.secure, "secure")
        rng = check_generator(self.random_state)
        if self.quantile_range is None:
            self._charge_budget(RDPCurve.zero())
            data_min, data_max = lower, upper
        else:
            levels = np.array(check_quantile_pair(self.quantile_range))
            n_features = X.shape[1]
            # The curve and the release take the same (epsilon, n_features, 2 levels,
            # secure): the release runs exactly the mechanisms charged (stats._core).
            # The curve raises before the charge if secure's epsilon is too small.
            curve = _quantile_curve(epsilon, 0.0, n_features, n_quantiles=2, secure=secure)
            self._charge_budget(curve)
            q = _quantile_release(X, levels, epsilon=epsilon, delta=0.0, bounds=(lower, upper),
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

    def transform(self, X):
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

    def inverse_transform(self, X):
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

