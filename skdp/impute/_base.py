"""DPSimpleImputer: fill missing values with DP statistics."""

from __future__ import annotations

import math
import numbers
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve
from ..preprocessing._validation import check_bool
from ..stats._histograms import _histogram_curve, _histogram_release
from ..stats._noise import _ColumnSums, _noisy_counts, _noisy_sums, _sums_curve, _sums_delta
from ..stats._quantiles import _quantile_curve, _quantile_release
from ..stats._sums import _mean_curve, _mean_from_sums, _mean_release
from ..stats._range import _bounds_release, check_bounds_or_none, no_bounds, split_curve
from ..utils import DEFAULT_DELTA, check_delta, check_epsilon
from ..utils._rows import check_lazy_X, is_lazy, lazy_rows, refuse_lazy, row_sums
from ..utils._validation import validate_data

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPSimpleImputer"]

_MAX_CANDIDATES = 10_000


def _candidate_edges(c):
    """Each value counts for its nearest candidate of the sorted ``c``: bins between midpoints.

    A bin holds its lower midpoint (``searchsorted(..., side="right")``): a value exactly
    halfway between two candidates counts for the larger.
    """
    return np.concatenate([[-np.inf], (c[1:] + c[:-1]) / 2, [np.inf]])


def _observed_sums(X, *, lower, upper, centre):
    """Per column of the block ``X``: its observed (not NaN) values' number and Σ(clip(x) − centre).

    The block function of a pass of :func:`~skdp.utils._rows.row_sums`.
    """
    observed = ~np.isnan(X)
    y = np.where(observed, np.clip(X, lower, upper) - centre, 0.0)
    return observed.sum(axis=0), y.sum(axis=0)


def _candidate_counts(X, *, lower, upper, edges):
    """Per column j of the block ``X``, the observed values counted for their nearest candidate.

    ``edges[j]`` are :func:`_candidate_edges` of column j's candidates; a
    tuple of one count array per column. The block function of a pass of
    :func:`~skdp.utils._rows.row_sums`.
    """
    out = []
    for j, e in enumerate(edges):
        col = X[:, j]
        col = np.clip(col[~np.isnan(col)], lower[j], upper[j])
        out.append(np.bincount(np.searchsorted(e, col, side="right") - 1, minlength=len(e) - 1))
    return tuple(out)


class DPSimpleImputer(DPEstimatorMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Replace missing values (NaN) by a DP statistic of each feature.

    Each feature's statistic (mean, median, most frequent value or a constant)
    is computed privately from its observed values, clipped to the ``bounds``;
    ``epsilon`` is split evenly over the features and the fit charges the
    budget once. Notes give each strategy's mechanism and the bounds.

    Parameters
    ----------
    missing_values : float, default=np.nan
        Only ``np.nan`` is supported.
    strategy : {"mean", "median", "most_frequent", "constant"}, default="mean"
    bounds : tuple (lower, upper) or None, default=None
        Public bounds of the features (not needed for ``"constant"``).
        ``None``: estimated privately (see Notes); public bounds are better.
    categories : array-like or list of array-like, default=None
        Public candidate values for ``"most_frequent"``: one array for every
        feature, or one per feature. ``None``: the integers within the bounds.
    fill_value : float, default=None
        For ``"constant"``; ``None`` means 0.
    epsilon : float > 0, default=1.0
    delta : float in [0, 1), default=1e-5
        The package's δ (:data:`skdp.utils.DEFAULT_DELTA`). 0: pure ε-DP, as
        described in Notes. δ > 0, strategy
        ``"mean"``: (ε, δ)-DP (a weaker, approximate guarantee) from one
        Gaussian vector over the d counts and d sums with their joint L2
        sensitivity (noise std ∝ √d instead of d for the Laplace split), z
        calibrated to (ε, δ) in RDP, where that adds less noise than the
        Laplace split (else the Laplace, pure ε-DP). Other strategies stay
        pure ε-DP (which is also (ε, δ)-DP); ``epsilon_spent_`` is reported
        at this δ.
    secure : bool, default=False
        **The threat:** with ``secure=False`` the noise is floating-point
        Laplace or Gaussian noise added to float sums and counts, and the
        median's selection probabilities are floats with an output drawn
        uniformly between two data values; the low-order bits of such
        releases can reveal the data beyond what the analysis covers
        (Mironov 2012; Ilvento 2020 for the exponential mechanism).
        **What changes** with ``secure=True`` (the paths of
        :mod:`skdp.stats` with ``secure=True``, see :ref:`floating_point`):

        - ``"mean"``: every count and sum is computed exactly in integers on
          a public power-of-two grid (about 1024 times finer than both the
          noise and the bounds) and released with exact discrete Laplace
          noise (``delta=0``) or, for the joint ``delta > 0`` release, discrete
          Gaussian noise (Canonne, Kamath & Steinke 2020), charged at the
          discrete mechanisms' curves; the mean is their ratio
          (post-processing).
        - ``"median"``: a point of a public grid of 1024 evenly spaced
          values from the feature's lower to its upper bound, chosen by the
          exact base-2 exponential mechanism (Ilvento 2020), charged at its
          effective ε' a hair below ε/d (relative gap about 2^-22).
        - ``"most_frequent"``: the histogram's counts get exact discrete
          Laplace noise; the fill value is a public candidate as before.
        - ``"constant"``: nothing changes (nothing is read).

        **The cost:** the rounding to the grids (up to half a step:
        (upper − lower)/2046 for the median, negligible against the noise for
        the mean) and speed (the exact samplers run in Python, one output at
        a time). Validated before any charge. Timing is not hardened.
        With ``secure=True`` every random number of the fit also comes from the
        operating system's CSPRNG, and ``random_state`` must be None (see
        :ref:`secure_randomness`).
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None

    Attributes
    ----------
    statistics_ : ndarray of shape (n_features,)
        The fill value of each feature.
    bounds_ : tuple of two ndarrays of shape (n_features,)
        The bounds the observed values were clipped to: public, private, or
        ±inf (none needed).
    privacy_curve_, epsilon_spent_, delta_spent_
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Like :class:`sklearn.impute.SimpleImputer` with ``missing_values=np.nan``.
    NaN is allowed in X here (it marks a missing value); infinities are not.
    For each feature the statistic is computed privately from its observed
    values, clipped to the ``bounds``; ``epsilon`` is split evenly over the
    features and the fit charges the composed curve once (pure ε-DP;
    ``"mean"`` with ``delta > 0`` is (ε, δ)-DP, see ``delta``):

    - ``"mean"``: DP mean of :mod:`skdp.stats` (a noisy count of the observed
      values and a noisy sum). The number of observed, hence of missing,
      values is private: it is only used noised, never released.
    - ``"median"``: DP median (exponential mechanism, Smith 2011).
    - ``"most_frequent"``: the largest count of a DP histogram over public
      candidate values ``categories`` (default: the integers within the
      bounds); each observed value counts for its nearest candidate (a
      value exactly halfway between two counts for the larger), and ties
      of the counts go to the smallest candidate, as in scikit-learn.
    - ``"constant"``: ``fill_value``; reads nothing and charges
      :meth:`RDPCurve.zero() <skdp.accounting.RDPCurve.zero>`.

    Bounds: public bounds (known from the data's meaning, never read from
    it) are the best choice: they cost nothing. Without them
    (``bounds=None``, the default) ``"mean"`` and ``"median"`` first release
    private bounds of each feature's observed values with half of
    ``epsilon`` (:func:`skdp.stats.bounds`: a noisy log-scale histogram,
    within a factor 2 of the data's range; the features none of whose bins
    stands out of the noise share the range of their pooled histogram, about
    0 where that too is noise), and the
    statistics take the rest, composed into the fit's one charge (see
    :ref:`bounds`). ``"most_frequent"`` needs no bounds when ``categories``
    are given (each value counts for its nearest candidate), and refuses to
    fit without both, before any charge. With ``epsilon=inf`` no bounds are
    needed (scikit-learn's statistics).

    ``fit`` also takes a dask array or DataFrame (:ref:`larger_than_memory`)
    for the ``"mean"``, ``"most_frequent"`` and ``"constant"`` strategies: the
    counts and sums of the observed values (or the candidates' counts) are
    reduced over the chunks in one pass, and ``transform`` is lazy;
    ``"median"`` and ``secure=True`` still need the rows in memory.

    Unlike scikit-learn, features with no observed value are never dropped
    (dropping them would reveal that every value is missing); like
    scikit-learn's ``keep_empty_features=True`` they are kept. With
    ``epsilon=inf`` the statistics equal scikit-learn's (for data in the
    bounds and no all-missing feature).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.impute import DPSimpleImputer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 5, size=(5000, 1)).astype(float)
    >>> X[:200] = 4.0
    >>> X[::10] = np.nan
    >>> imp = DPSimpleImputer(strategy="most_frequent", bounds=(0, 4), random_state=0).fit(X)
    >>> imp.statistics_
    array([4.])
    >>> imp.transform([[np.nan], [1.0]])
    array([[4.],
           [1.]])

    A secure median is a point of the public grid of 1024 values between the
    bounds (here the integers 0, 1, ..., 1023):

    >>> X = rng.normal(50, 10, size=(5000, 1))
    >>> X[::10] = np.nan
    >>> median = DPSimpleImputer(strategy="median", bounds=(0, 1023),
    ...                          secure=True).fit(X).statistics_[0]  # the OS CSPRNG
    >>> bool(median == round(median) and 45 <= median <= 55)
    True
    """

    def __init__(self, *, missing_values: float = np.nan, strategy: str = "mean",
                 bounds: ArrayLike | None = None,
                 categories: ArrayLike | Sequence[ArrayLike] | None = None,
                 fill_value: float | None = None, epsilon: float = 1.0, delta: float = DEFAULT_DELTA,
                 secure: bool = False, budget: PrivacyBudget | None = None,
                 random_state: RandomStateLike = None) -> None:
        self.missing_values = missing_values
        self.strategy = strategy
        self.bounds = bounds
        self.categories = categories
        self.fill_value = fill_value
        self.epsilon = epsilon
        self.delta = delta
        self.secure = secure
        self.budget = budget
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def _check_missing_values(self):
        mv = self.missing_values
        if not (isinstance(mv, numbers.Real) and math.isnan(mv)):
            raise ValueError(f"missing_values must be np.nan; got {mv!r}.")

    def _candidates(self, n_features, lower, upper):
        if self.categories is None:
            cands = []
            for lo, hi in zip(lower, upper):
                c = np.arange(math.ceil(lo), math.floor(hi) + 1, dtype=float)
                if c.size == 0 or c.size > _MAX_CANDIDATES:
                    raise ValueError(
                        "most_frequent without categories takes the integers within the "
                        f"bounds, and needs 1 to {_MAX_CANDIDATES} of them; got {c.size}. "
                        "Pass public candidate values as categories."
                    )
                cands.append(c)
            return cands
        cats = self.categories
        if len(cats) == 0:
            raise ValueError("categories must be non-empty.")
        if not isinstance(cats[0], (list, tuple, np.ndarray)):
            cats = [cats] * n_features
        if len(cats) != n_features:
            raise ValueError(f"categories must be one array or {n_features} arrays.")
        out = []
        for c in cats:
            c = np.unique(np.asarray(c, dtype=float))
            if c.size == 0 or not np.all(np.isfinite(c)):
                raise ValueError("categories must be non-empty and finite.")
            out.append(c)
        return out

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> DPSimpleImputer:
        """Compute the DP fill values; charges the budget once.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks a missing value.
        y : None
            Ignored.

        Returns
        -------
        self
        """
        lazy = is_lazy(X)  # a dask array or DataFrame: sums on the workers (skdp.utils._rows)
        X = (check_lazy_X(self, X, allow_nan=True) if lazy
             else validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan"))
        d = X.shape[1]
        self._check_missing_values()
        strategy = self.strategy
        if strategy not in ("mean", "median", "most_frequent", "constant"):
            raise ValueError(
                "strategy must be 'mean', 'median', 'most_frequent' or 'constant'; "
                f"got {strategy!r}."
            )
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        secure = check_bool(self.secure, "secure")
        if lazy and secure:
            raise refuse_lazy("secure=True")
        if lazy and strategy == "median":
            raise refuse_lazy('strategy="median" (an exponential mechanism on sorted values)')
        rng = self._check_generator()
        if strategy == "constant":
            fill = 0.0 if self.fill_value is None else self.fill_value
            if not isinstance(fill, numbers.Real) or not math.isfinite(fill):
                raise ValueError(f"fill_value must be a finite number; got {fill!r}.")
            self._charge_budget(RDPCurve.zero())
            self.statistics_ = np.full(d, float(fill))
            self.bounds_ = no_bounds(d)
            return self

        bounds = check_bounds_or_none(self.bounds, d)
        if strategy == "most_frequent":
            if bounds is None and self.categories is None:
                raise ValueError(
                    "most_frequent needs public candidate values: pass categories (or "
                    "public bounds, whose integers are then the candidates)."
                )
            candidates = self._candidates(d, *(no_bounds(d) if bounds is None else bounds))

        # The whole curve from public parameters. Without public bounds (finite
        # epsilon) the private bounds of the observed values come first, in the
        # same charge; the statistic takes the rest (stats._range.split_curve).
        # Each curve takes the (epsilon, delta, sizes, secure) that its release
        # below takes, so the release runs exactly the mechanisms charged (stats._sums,
        # stats._histograms, stats._quantiles); a secure median's epsilon too small
        # raises here, before the charge.
        def stat_curve(eps):
            if self._joint(strategy, eps, delta, d):  # d counts and d sums, one Gaussian
                return _sums_curve(eps, delta, 2 * d, secure=secure)
            each = {"mean": _mean_curve, "median": _quantile_curve,
                    "most_frequent": _histogram_curve}[strategy]
            return d * each(eps / d, 0.0, 1, secure=secure)

        # most_frequent counts each value for its nearest public candidate: it needs
        # no bounds (public ones still clip the values first).
        estimate = bounds is None and epsilon != math.inf and strategy != "most_frequent"
        if estimate:
            eps_bounds, eps_stat, curve = split_curve(epsilon, delta, d, stat_curve, secure=secure)
        else:
            eps_stat, curve = epsilon, stat_curve(epsilon)
        self._charge_budget(curve)

        if estimate:
            bounds = _bounds_release(X, epsilon=eps_bounds, delta=delta, rng=rng, secure=secure)
        self.bounds_ = no_bounds(d) if bounds is None else bounds
        lower, upper = self.bounds_
        if self._joint(strategy, eps_stat, delta, d):
            self.statistics_ = self._joint_means(X, lower, upper, eps_stat, delta, rng, secure)
            return self
        if lazy:
            self.statistics_ = self._lazy_statistics(X, strategy, candidates if strategy ==
                                                     "most_frequent" else None, eps_stat, rng)
            return self

        eps = eps_stat / d  # split evenly over the features: each has its own observed rows
        stats = np.empty(d)
        for j in range(d):
            col = X[~np.isnan(X[:, j]), j]
            kw = dict(epsilon=eps, delta=0.0, rng=rng, secure=secure)
            if epsilon == math.inf and (col.size == 0 or strategy != "most_frequent"):
                # numpy's statistic of the clipped values (unclipped without bounds);
                # an empty feature gets 0, as scikit-learn's keep_empty_features=True
                col = np.clip(col, lower[j], upper[j])
                stats[j] = 0.0 if col.size == 0 else (
                    np.mean(col) if strategy == "mean" else np.median(col))
            elif strategy == "mean":
                stats[j] = _mean_release(col, bounds=(lower[j], upper[j]), axis=0, **kw)
            elif strategy == "median":
                stats[j] = _quantile_release(col, 0.5, bounds=(lower[j], upper[j]), axis=0, **kw)
            else:
                c = candidates[j]
                edges = _candidate_edges(c)
                idx = np.searchsorted(edges, np.clip(col, lower[j], upper[j]), side="right") - 1
                hist, _ = _histogram_release(idx, bins=c.size, range=(-0.5, c.size - 0.5), **kw)
                stats[j] = c[int(np.argmax(hist))]  # first maximum: the smallest candidate
        self.statistics_ = stats
        return self

    @staticmethod
    def _joint(strategy, epsilon, delta, d):
        """Whether the means are one Gaussian release of 2d sums (where it adds less noise)."""
        return strategy == "mean" and epsilon != math.inf and _sums_delta(epsilon, delta, 2 * d) > 0

    @staticmethod
    def _joint_means(X, lower, upper, epsilon, delta, rng, secure):
        """DP means of the observed values from one Gaussian release of 2d sums.

        Per feature, the count of observed values (sensitivity 1) and the sum
        of the observed values minus the bounds' midpoint c (sensitivity
        h = (U − L)/2; a missing entry adds 0). One row changes every one of
        the 2d sums by at most its sensitivity, so the normalised vector has
        L2 sensitivity √(2d): noise std z·√(2d)·Δⱼ, curve ``gaussian_rdp(z)``
        (``_sums_curve(ε, δ, 2d)``; Mironov 2017, Prop. 7). With ``secure``
        the same sums are snapped to public grids and get exact discrete
        Gaussian noise (``_sums_curve(ε, δ, 2d, secure=True)``, Canonne,
        Kamath & Steinke 2020, Thm. 4).
        """
        center, h = (lower + upper) / 2.0, (upper - lower) / 2.0
        if is_lazy(X):  # the same sums, over the chunks
            n = X.shape[0]
            counts, sums = row_sums(partial(_observed_sums, lower=lower, upper=upper,
                                            centre=center), X)
            observed, y = _ColumnSums(counts, n), _ColumnSums(sums, n)
        else:
            observed = ~np.isnan(X)
            y = np.where(observed, np.clip(np.nan_to_num(X), lower, upper) - center, 0.0)
            observed = observed.astype(float)
        counts, sums = _noisy_sums(
            [(observed, np.zeros_like(h), np.ones_like(h)), (y, -h, h)],
            epsilon=epsilon, delta=delta, rng=rng, secure=secure,
        )
        # Divide by the noisy count floored at 1; the true mean lies in the bounds.
        return np.clip(center + sums / np.maximum(counts, 1.0), lower, upper)

    def _lazy_statistics(self, X, strategy, candidates, epsilon, rng):
        """The fill values from one pass of sums over the chunks of a dask ``X`` (not secure).

        Per feature, in the in-memory order and with its noise: the mean from the
        count and the centred sum of the observed values (:func:`_observed_sums`),
        the most frequent candidate from the counts of the values nearest each
        (:func:`_candidate_counts`). ``epsilon`` is the statistics' share.
        """
        lower, upper = self.bounds_
        d = X.shape[1]
        exact = epsilon == math.inf
        eps = epsilon / d
        stats = np.empty(d)
        if strategy == "most_frequent":
            edges = [_candidate_edges(c) for c in candidates]
            counts = row_sums(partial(_candidate_counts, lower=lower, upper=upper, edges=edges),
                              X)
            for j, c in enumerate(candidates):
                if exact and counts[j].sum() == 0:
                    stats[j] = 0.0  # as scikit-learn's keep_empty_features=True
                    continue
                hist = counts[j] if exact else _noisy_counts(
                    counts[j], epsilon=eps, delta=0.0, rng=rng, secure=False, n_outputs=1)
                stats[j] = c[int(np.argmax(hist))]
            return stats
        # the mean: at epsilon=inf the plain sums (no centre: the bounds may be infinite)
        c, h = ((np.zeros(d), None) if exact else
                ((lower + upper) / 2.0, (upper - lower) / 2.0))
        n_obs, sums = row_sums(partial(_observed_sums, lower=lower, upper=upper, centre=c), X)
        if exact:
            return np.where(n_obs > 0, sums / np.maximum(n_obs, 1), 0.0)
        for j in range(d):
            stats[j] = _mean_from_sums(int(n_obs[j]), sums[j:j + 1], c[j:j + 1], h[j:j + 1],
                                       epsilon=eps, delta=0.0, rng=rng)[0]
        return stats

    @lazy_rows
    def transform(self, X: ArrayLike) -> NDArray:
        """Replace every NaN by its feature's fill value.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan",
                          reset=False, copy=True)
        mask = np.isnan(X)
        X[mask] = np.broadcast_to(self.statistics_, X.shape)[mask]
        return X
