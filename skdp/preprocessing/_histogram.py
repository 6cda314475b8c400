"""DPHistogramTransformer: values mapped to DP bin frequencies or densities."""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._base import DPEstimatorMixin
from ..stats._histograms import _histogram_curve, _histogram_release, _noisy_frequencies
from ..stats._range import _bounds_release, check_bounds_or_none, split_curve
from ..utils import DEFAULT_DELTA, check_delta, check_epsilon
from ..utils._validation import validate_data
from ._validation import check_bool, check_choice, check_n_bins

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPHistogramTransformer"]


class DPHistogramTransformer(DPEstimatorMixin, OneToOneFeatureMixin, TransformerMixin,
                             BaseEstimator):
    """Replace each value by the DP frequency (or density) of its bin.

    ``fit`` releases one noisy histogram per feature, charged once (with
    private bounds in the same charge when none are given), and ``transform``
    maps each value to its bin's noisy frequency or density. Notes give the
    mechanism and the bounds.

    Parameters
    ----------
    bins : int or array-like of shape (n_features,), default=10
        Number of equal-width bins, >= 1.
    bounds : tuple (lower, upper) or None, default=None
        Public range of the features. ``None``: estimated privately with half
        of ``epsilon`` (see Notes); public bounds are better.
    output : {"frequency", "density"}, default="frequency"
    epsilon : float > 0, default=1.0
    delta : float in [0, 1), default=1e-5
        The package's δ (:data:`skdp.utils.DEFAULT_DELTA`). With δ > 0 the
        sums are one Gaussian vector where that adds less noise than the
        Laplace split (many features: noise std ∝ √k instead of k for k
        sums), else the Laplace, which is then pure ε-DP. 0 always gives pure
        ε-DP (Laplace). ``epsilon_spent_`` is reported at this δ.
    secure : bool, default=False
        Exact discrete noise (see :mod:`skdp.stats`).
        With ``secure=True`` every random number of the fit also comes from the
        operating system's CSPRNG, and ``random_state`` must be None (see
        :ref:`secure_randomness`).
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None

    Attributes
    ----------
    histograms_ : list of ndarray
        The noisy counts of each feature (may be negative or fractional: raw
        DP output, unrounded).
    bin_edges_ : list of ndarray
        The edges of each feature's bins (from public or private bounds).
    bounds_ : tuple of two ndarrays of shape (n_features,)
        The range of each feature's bins.
    frequencies_ : list of ndarray
        The normalised frequencies used by ``transform``.
    privacy_curve_, epsilon_spent_, delta_spent_
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    ``fit`` releases one DP histogram per feature: ``bins`` equal-width bins
    between the ``bounds``. Values are clipped to the bounds first, so every row
    falls in exactly one bin of every feature; the d histograms are one
    release of :mod:`skdp.stats` (sensitivity 1 per histogram; ``delta=0``:
    Laplace with ε/d per histogram, ``delta > 0``: one Gaussian vector where
    that adds less noise), and
    the fit charges it once. The noisy histograms are kept for analysis in
    ``histograms_`` and ``bin_edges_``.

    ``transform`` maps a value to its bin's frequency (``output="frequency"``)
    or density (``output="density"``: frequency / bin width), a feature
    usable in a model (a smoothed, private target-free encoding of how common
    a value is). The frequencies are the noisy counts floored at 0 and divided
    by **their own noisy total** (not by the private true n): post-processing
    of the release, costing nothing more, but the total carries the noise of
    all bins. An all-zero noisy histogram gives uniform frequencies.

    Bounds: public bounds (known from the data's meaning, never read from
    it) are the best choice: they cost nothing. Without them
    (``bounds=None``, the default) the fit first releases private bounds of
    each feature with half of ``epsilon`` (:func:`skdp.stats.bounds`: a
    noisy log-scale histogram, within a factor 2 of the data's range), and
    the histograms take the rest, composed into the fit's one charge (see
    :ref:`bounds`); with ``epsilon=inf``, the data's minimum and maximum, as
    :func:`numpy.histogram` takes them. A range of one point (a private
    range (0, 0), or a constant feature at ``epsilon=inf``) is widened by
    0.5 on each side, as numpy does.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import DPHistogramTransformer
    >>> X = np.repeat([[0.5], [1.5], [3.5]], [6000, 3000, 1000], axis=0)
    >>> est = DPHistogramTransformer(bins=4, bounds=(0, 4), random_state=0).fit(X)
    >>> np.round(est.transform([[0.2], [1.9], [2.5], [3.1]]), 2)
    array([[0.6],
           [0.3],
           [0. ],
           [0.1]])
    """

    def __init__(self, bins: int | ArrayLike = 10, *, bounds: ArrayLike | None = None,
                 output: str = "frequency", epsilon: float = 1.0, delta: float = DEFAULT_DELTA,
                 secure: bool = False, budget: PrivacyBudget | None = None,
                 random_state: RandomStateLike = None) -> None:
        self.bins = bins
        self.bounds = bounds
        self.output = output
        self.epsilon = epsilon
        self.delta = delta
        self.secure = secure
        self.budget = budget
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> DPHistogramTransformer:
        """Release one DP histogram per feature; charges the budget once.

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
        d = X.shape[1]
        bins = check_n_bins(self.bins, d, minimum=1)
        bounds = check_bounds_or_none(self.bounds, d)
        if bounds is not None and np.any(bounds[0] == bounds[1]):
            raise ValueError("bounds: every lower bound must be < its upper bound for bins.")
        check_choice(self.output, {"frequency", "density"}, "output")
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        secure = check_bool(self.secure, "secure")
        rng = self._check_generator()

        # The whole curve from public parameters: without public bounds (finite
        # epsilon) the private bounds and the histograms, in one charge.
        stat_curve = partial(_histogram_curve, delta=delta, n_outputs=d, secure=secure)
        estimate = bounds is None and epsilon != math.inf
        if estimate:
            eps_bounds, eps_hist, curve = split_curve(epsilon, delta, d, stat_curve, secure=secure)
        else:
            eps_hist, curve = epsilon, stat_curve(epsilon)
        self._charge_budget(curve)

        if estimate:
            bounds = _bounds_release(X, epsilon=eps_bounds, delta=delta, rng=rng, secure=secure)
        # epsilon=inf without bounds: the data's range, as numpy's histogram takes it.
        lower, upper = (X.min(axis=0), X.max(axis=0)) if bounds is None else bounds
        # A single point (a private range of one value, or a constant column at
        # epsilon=inf) gets numpy's range of one unit around it.
        flat = lower == upper
        lower, upper = np.where(flat, lower - 0.5, lower), np.where(flat, upper + 0.5, upper)
        self.bounds_ = (lower, upper)
        X = np.clip(X, lower, upper)
        self.histograms_, self.bin_edges_, self.frequencies_ = [], [], []
        for j in range(d):
            hist, edges = _histogram_release(
                X[:, j], epsilon=eps_hist, delta=delta, bins=int(bins[j]),
                range=(lower[j], upper[j]), rng=rng, secure=secure, n_outputs=d,
            )
            hist = np.asarray(hist, dtype=float)
            self.histograms_.append(hist)
            self.bin_edges_.append(edges)
            self.frequencies_.append(_noisy_frequencies(hist))
        return self

    def transform(self, X: ArrayLike) -> NDArray:
        """Map each value to the DP frequency or density of its bin.

        Values outside the bounds count as in the first or last bin.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        out = np.empty_like(X)
        for j, (edges, freq) in enumerate(zip(self.bin_edges_, self.frequencies_)):
            idx = np.clip(np.searchsorted(edges, X[:, j], side="right") - 1, 0, freq.size - 1)
            values = freq if self.output == "frequency" else freq / np.diff(edges)
            out[:, j] = values[idx]
        return out
