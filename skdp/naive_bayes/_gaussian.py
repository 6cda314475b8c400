"""DPGaussianNB: Gaussian naive Bayes from DP class counts, means and variances."""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .._base import DPEstimatorMixin
from ..preprocessing._validation import check_bool
from ..stats._histograms import _noisy_frequencies
from ..stats._sums import (
    _centre_and_half_width,
    _centred_sums,
    _floor_variance,
    _var_curve,
    _var_from_sums,
    _var_release,
)
from ..stats._range import _bounds_release, check_bounds_or_none, no_bounds, split_curve
from ..utils import DEFAULT_DELTA, check_delta, check_epsilon
from ..utils._rows import check_lazy_X, is_lazy, label_index, lazy_rows, refuse_lazy, row_sums
from ..utils._validation import check_classes, validate_data

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPGaussianNB"]


def _class_sums(X, y, *, classes, lower, upper, centre):
    """Per class: its number of rows, Σy and Σy² of y = clip(x) − centre over them.

    The block function of the fit's one pass over the rows
    (:func:`skdp.utils._rows.row_sums`): on the whole array in memory, on
    each chunk of rows of a dask array. A label outside ``classes`` (only
    possible on a dask graph whose values change after the checks before the
    charge) counts in no class or in a neighbouring one: a row removed or
    added, never an error (:func:`~skdp.utils._rows.label_index`).
    """
    label = label_index(y, classes)
    return tuple((int(np.count_nonzero(rows)),) + _centred_sums(
        X[rows], lower=lower, upper=upper, centre=centre)
        for rows in (label == c for c in range(classes.size)))


def _class_moments(X, y, *, classes, lower, upper, means=None):
    """Per class: (rows, Σx) of the clipped rows, or with ``means`` Σ(x − mean)² (epsilon=inf)."""
    label = label_index(y, classes)
    x = np.clip(X, lower, upper)
    if means is None:
        return tuple((int(np.count_nonzero(label == c)), x[label == c].sum(axis=0))
                     for c in range(classes.size))
    return tuple(((x[label == c] - means[c]) ** 2).sum(axis=0) for c in range(classes.size))


def _lazy_moments(X, y, classes, lower, upper):
    """Exact counts, means and variances per class of a dask X, in two passes (epsilon=inf)."""
    kw = dict(classes=classes, lower=lower, upper=upper)
    first = row_sums(partial(_class_moments, **kw), X, y)
    counts = np.array([float(n) for n, _ in first])
    theta = np.array([s / n if n else np.zeros_like(s) for n, s in first])
    squares = row_sums(partial(_class_moments, means=theta, **kw), X, y)
    var = np.array([q / n if n else np.zeros_like(q) for n, q in zip(counts, squares)])
    return counts, theta, var


def _class_release(Xc, lower, upper, *, epsilon, delta, rng, secure, sums=None):
    """Noisy (count, mean, variance) of the rows ``Xc`` from one release of 2d + 1 sums.

    :func:`skdp.stats._sums._var_release` (a noisy count, Σy and Σ(y² − h²/2)
    with y = x − c centred at the bounds' midpoint c, h = (U − L)/2:
    sensitivities 1, h and h²/2) with its count kept as the class count, so
    the label histogram needs no budget of its own. The caller has charged
    ``_var_curve(epsilon, delta, d, secure=secure)``: Laplace ε/(2d + 1) per sum for δ = 0,
    one Gaussian vector of joint L2 sensitivity √(2d + 1) (in units of each
    sum's sensitivity) for δ > 0 (see :mod:`skdp.stats._noise`).
    """
    n = None if Xc is None else Xc.shape[0]
    if epsilon == math.inf:  # exactly numpy's values on the clipped data, as _var_release
        x = np.clip(Xc, lower, upper)
        if np.isfinite(lower).all() and np.isfinite(upper).all():
            x = (x - (lower + upper) / 2.0) + (lower + upper) / 2.0  # as before: centred, back
        mean = np.mean(x, axis=0) if n else np.zeros(Xc.shape[1])
        return float(n), mean, (np.var(x, axis=0) if n else np.zeros(Xc.shape[1]))
    center, h = (lower + upper) / 2.0, (upper - lower) / 2.0
    if sums is not None:  # the class's (rows, Σy, Σy²) from the fit's pass (_class_sums)
        count, mean, var = _var_from_sums(*sums, center, h, epsilon=epsilon, delta=delta,
                                          rng=rng, axis=0, shape=center.shape, ddof=0,
                                          return_mean=True, return_count=True)
        return count, mean, _floor_variance(var, mean - center, h, count,
                                            epsilon=epsilon, delta=delta)
    count, mean, var = _var_release(Xc, epsilon=epsilon, delta=delta, bounds=(lower, upper),
                                    axis=0, rng=rng, secure=secure, return_mean=True,
                                    return_count=True)
    return count, mean, _floor_variance(var, mean - center, h, count,
                                        epsilon=epsilon, delta=delta)


class DPGaussianNB(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Gaussian naive Bayes with differential privacy (Vaidya, Shafiq, Basu & Hong 2013).

    For every class the fit releases one vector of noisy sums (its count, and
    per feature the sums that give the mean and the variance); the classes
    compose in parallel, so the fit charges one curve at (``epsilon``,
    ``delta``): Laplace noise with ``delta=0``, Gaussian noise otherwise.
    Notes give the mechanism, the variance floor, ``secure``, the classes and
    the bounds.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
    delta : float in [0, 1), default=1e-5
        The package's δ (:data:`skdp.utils.DEFAULT_DELTA`). With δ > 0 the
        sums are one Gaussian vector where that adds less noise than the
        Laplace split (many features: noise std ∝ √k instead of k for k
        sums), else the Laplace, which is then pure ε-DP. 0 always gives pure
        ε-DP (Laplace). ``epsilon_spent_`` is reported at this δ.
    bounds : tuple (lower, upper) or None, default=None
        Public bounds of the features. ``None``: estimated privately with
        half of ``epsilon`` (see Notes); public bounds are better.
    classes : array-like or None, default=None
        The public set of labels; ``None`` reads them from ``y`` (warned leak).
    priors : array-like of shape (n_classes,) or None, default=None
        Public class priors; ``None`` uses the DP class frequencies.
    var_smoothing : float >= 0, default=1e-9
    secure : bool, default=False
        Exact integer sums and discrete noise, against floating-point attacks
        (Mironov 2012); see Notes.
        With ``secure=True`` every random number of the fit also comes from the
        operating system's CSPRNG, and ``random_state`` must be None (see
        :ref:`secure_randomness`).
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        DP counts (from each class's release), floored at 0.
    class_prior_ : ndarray of shape (n_classes,)
    theta_ : ndarray of shape (n_classes, n_features)
        DP means.
    var_ : ndarray of shape (n_classes, n_features)
        DP variances (floored at the std of their own noise) plus ``epsilon_``.
    epsilon_ : float
        The variance smoothing added.
    bounds_ : tuple of two ndarrays of shape (n_features,)
        The bounds the fit clipped to and the predictions clip to: the public
        ones, the private estimate, or ±inf (``epsilon=inf`` without bounds).
    privacy_curve_, epsilon_spent_, delta_spent_
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    For every class the fit makes **one** release of 2d + 1 noisy sums of that
    class's rows (its count, Σ(x − c) and Σ((x − c)² − h²/2) per feature, c
    and h the midpoint and half-width of the ``bounds``; the
    construction of :func:`skdp.stats.var`), and builds the model from them
    (post-processing): the noisy count is the class count, the other sums
    give the means and variances. The classes partition the rows, so the
    per-class releases compose in parallel under add/remove-one-row: one row
    changes only its own class, and the fit charges one curve,
    ``_var_curve(epsilon, delta, d)`` of :mod:`skdp.stats._sums`.

    - ``delta=0``: pure ε-DP. Laplace noise, ε/(2d + 1) on each of
      the 2d + 1 sums (noise std ∝ d/ε per sum).
    - ``delta>0`` (default 1e-5): (ε, δ)-DP, a weaker guarantee (approximate DP). One
      Gaussian vector per class with the joint L2 sensitivity of all 2d + 1
      sums, noise std z·√(2d + 1)·Δⱼ on sum j, z calibrated to (ε, δ) in RDP
      (:func:`~skdp.accounting.calibrate_noise_multiplier`): std ∝ √d instead
      of d, about 5× less noise at d = 105 and δ = 1e-5. Choose δ well below
      1/n. Where the Gaussian would add more noise than the Laplace (few
      features), the Laplace is used, pure ε-DP.

    Why one joint release: the count costs 1/(2d + 1) of the budget inside
    it instead of a separate label histogram, and the means and variances get
    equal shares. A share that favours means is not used: the effect of a
    noisy variance on the log-likelihood relative to a noisy mean grows with
    h/σ (σ the feature's std within the class), which is private, so no
    data-independent split beats the equal one in general.

    Variances are post-processed into [s, h²], where s is the std of the noise
    on the released variance itself, to first order (the delta method) from
    the noise of all three sums it is computed from: the count, Σy and
    Σ(y² − h²/2) (their noise stds come from public parameters; the
    derivatives use the released mean and variance, so this is
    post-processing). A variance below its own noise level cannot be told
    from 0, and a near-zero variance makes one feature dominate the
    likelihood. For a feature whose mean is near a bound (a rare one-hot
    category) the mean term dominates s, about 4× the noise of the mean
    square alone. With ``epsilon=inf`` there
    is no noise and no floor.

    ``secure=True`` guards against floating-point attacks: a floating-point
    Laplace or Gaussian sample added to a float sum leaves gaps and
    irregularities in its low-order bits, from which an attacker can tell
    neighbouring inputs apart and even recover the exact sum (Mironov 2012,
    "On significance of the least significant bits for differential
    privacy"). With ``secure=True`` every one of the 2d + 1 sums is computed
    exactly in integers on a public power-of-two grid and gets exact discrete
    Laplace (δ = 0) or discrete Gaussian (δ > 0) noise (Canonne, Kamath &
    Steinke 2020), as in :mod:`skdp.stats` with ``secure=True``: the class
    counts are released as integers, and the fit charges the curve of those
    discrete mechanisms (``_var_curve(epsilon, delta, d, secure=True)``, the
    same ε). The noise is slightly larger (the grid adds at most half a step
    per value, the grid being about 1024 times finer than both the noise and
    the sum's sensitivity) and the fit samples 2d + 1 values per class in
    Python. The model is then
    post-processing of those releases.

    Classes: the set of labels present in ``y`` is itself private (a rare
    label reveals that someone has it). Pass the public list of labels as
    ``classes``. With ``classes=None`` the labels found in ``y`` are used, as
    scikit-learn does, with a :class:`~skdp.PrivacyLeakWarning` (none with
    ``epsilon=inf``, which promises no privacy). Repeated labels in
    ``classes`` are dropped; one class is allowed (the rules of every skdp
    classifier, from one shared check).

    ``var_smoothing`` adds ``var_smoothing`` × (the largest total variance of
    a feature) to the variances, as scikit-learn does; here the total
    variance comes from the released per-class statistics (law of total
    variance), so it costs nothing more. With ``epsilon=inf`` the model
    equals scikit-learn's :class:`~sklearn.naive_bayes.GaussianNB` (without
    bounds, or with public bounds that hold the data).

    Bounds: public bounds (known from the data's meaning, never read from
    it) are the best choice: they cost nothing. Without them
    (``bounds=None``, the default) the fit first releases private bounds of
    each feature from all rows with half of ``epsilon``
    (:func:`skdp.stats.bounds`: a noisy log-scale histogram, within a factor
    2 of the data's range; the features none of whose bins stands out of
    the noise share the range of their pooled histogram), and the class statistics take the
    rest, composed into the fit's one charge (see :ref:`bounds`). Either way
    the model is one of clipped rows: the prediction methods clip their rows
    to ``bounds_`` too.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.naive_bayes import DPGaussianNB
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 20000)
    >>> X = rng.normal(2.0 * y[:, None], 1.0, size=(20000, 2))
    >>> clf = DPGaussianNB(epsilon=1.0, bounds=(-4, 6), classes=[0, 1], random_state=0)
    >>> clf.fit(X, y).predict([[0.0, 0.0], [2.0, 2.0]])
    array([0, 1])
    >>> round(clf.score(X, y), 2)
    0.92

    Without public bounds, half of ε goes to private ones:

    >>> clf = DPGaussianNB(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.bounds_
    (array([-4., -4.]), array([8., 8.]))
    >>> round(clf.score(X, y), 2)
    0.92
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = DEFAULT_DELTA,
                 bounds: ArrayLike | None = None, classes: ArrayLike | None = None,
                 priors: ArrayLike | None = None, var_smoothing: float = 1e-9,
                 secure: bool = False, budget: PrivacyBudget | None = None,
                 random_state: RandomStateLike = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.classes = classes
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.secure = secure
        self.budget = budget
        self.random_state = random_state

    def _check_priors(self, n_classes):
        if self.priors is None:
            return None
        priors = np.asarray(self.priors, dtype=float)
        if priors.shape != (n_classes,):
            raise ValueError("Number of priors must match number of classes.")
        if not np.isclose(priors.sum(), 1.0) or np.any(priors < 0):
            raise ValueError("The priors must be non-negative and sum to 1.")
        return priors

    def fit(self, X: ArrayLike, y: ArrayLike) -> DPGaussianNB:
        """Fit from DP statistics; charges the budget once.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        lazy = is_lazy(X)  # a dask array or DataFrame: sums on the workers (skdp.utils._rows)
        if lazy:
            X, y, labels = check_lazy_X(self, X, y, y_kind="labels")
        else:
            X, y = validate_data(self, X, y, dtype=np.float64)
            labels = y
        d = X.shape[1]
        bounds = check_bounds_or_none(self.bounds, d)
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        vs = self.var_smoothing
        if isinstance(vs, bool) or not isinstance(vs, (int, float)) or not (
                math.isfinite(vs) and vs >= 0):
            raise ValueError(f"var_smoothing must be a finite float >= 0; got {vs!r}.")
        secure = check_bool(self.secure, "secure")
        if lazy and secure:
            raise refuse_lazy("secure=True")
        rng = self._check_generator()
        # A Gaussian naive Bayes model can describe one class (as scikit-learn's does).
        classes = check_classes(labels, self.classes, private=epsilon != math.inf, min_classes=1)
        priors = self._check_priors(classes.size)
        k = classes.size

        # One release per class of 2d + 1 sums (its count, Σy, Σ(y² − h²/2)); the classes
        # split the rows, so the k releases compose in parallel: one curve. Without
        # public bounds (and finite epsilon) the private bounds of all rows come first,
        # in the same charge.
        stat_curve = partial(_var_curve, delta=delta, n_outputs=d, secure=secure)
        estimate = bounds is None and epsilon != math.inf
        if estimate:
            eps_bounds, eps_stat, curve = split_curve(epsilon, delta, d, stat_curve, secure=secure)
        else:
            eps_stat, curve = epsilon, stat_curve(epsilon)
        self._charge_budget(curve)

        if estimate:
            bounds = _bounds_release(X, epsilon=eps_bounds, delta=delta, rng=rng, secure=secure)
        lower, upper = no_bounds(d) if bounds is None else bounds
        counts = np.empty(k)
        theta = np.empty((k, d))
        var = np.empty((k, d))
        if lazy and epsilon == math.inf:
            counts, theta, var = _lazy_moments(X, y, classes, lower, upper)
        elif secure or epsilon == math.inf:  # in memory: the rows of each class
            label = np.searchsorted(classes, y)
            for c in range(k):
                counts[c], theta[c], var[c] = _class_release(
                    X[label == c], lower, upper, epsilon=eps_stat, delta=delta, rng=rng,
                    secure=secure)
        else:  # one pass of sums per class over the rows, in memory or on dask chunks
            low, up, centre, _ = _centre_and_half_width((lower, upper), d)
            sums = row_sums(partial(_class_sums, classes=classes, lower=low, upper=up,
                                    centre=centre), X, y)
            for c in range(k):
                counts[c], theta[c], var[c] = _class_release(
                    None, lower, upper, epsilon=eps_stat, delta=delta, rng=rng, secure=secure,
                    sums=sums[c])
        weights = _noisy_frequencies(counts)
        counts = np.maximum(counts, 0.0)
        # Law of total variance on the released statistics (post-processing).
        grand_mean = weights @ theta
        total_var = weights @ (var + (theta - grand_mean) ** 2)
        self.epsilon_ = float(vs * np.max(total_var))
        self.bounds_ = (lower, upper)
        self.classes_ = classes
        self.class_count_ = counts
        self.class_prior_ = weights if priors is None else priors
        self.theta_ = theta
        self.var_ = var + self.epsilon_
        return self

    def _joint_log_likelihood(self, X):
        check_is_fitted(self)
        X = np.clip(validate_data(self, X, dtype=np.float64, reset=False), *self.bounds_)
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.class_prior_)
        var = np.maximum(self.var_, np.finfo(float).tiny)
        n_ij = -0.5 * np.sum(np.log(2.0 * np.pi * var), axis=1)
        sq = ((X[:, None, :] - self.theta_[None, :, :]) ** 2 / var[None, :, :]).sum(axis=2)
        return log_prior + n_ij - 0.5 * sq

    @lazy_rows
    def predict(self, X: ArrayLike) -> NDArray:
        """Most probable class of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self._joint_log_likelihood(X), axis=1)]

    @lazy_rows
    def predict_log_proba(self, X: ArrayLike) -> NDArray:
        """Log-probability of each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        jll = self._joint_log_likelihood(X)
        return jll - logsumexp(jll, axis=1, keepdims=True)

    @lazy_rows
    def predict_proba(self, X: ArrayLike) -> NDArray:
        """Probability of each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return np.exp(self.predict_log_proba(X))
