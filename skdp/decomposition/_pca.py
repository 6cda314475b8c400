"""DPPCA: principal component analysis by the Analyze Gauss mechanism (Laplace at δ = 0)."""

from __future__ import annotations

import functools
import math
import numbers
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.decomposition import PCA
from sklearn.utils.validation import check_is_fitted

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve, calibrate_noise_multiplier, gaussian_rdp, laplace_rdp
from ..preprocessing._validation import check_bool, finite_output
from ..stats._noise import _noise_multiplier
from ..stats._range import _bounds_release, check_bounds_or_none, split_curve
from ..utils import DEFAULT_DELTA, check_delta, check_epsilon
from ..utils import _blocks
from ..utils._blocks import clip_block, map_blocks, row_blocks, scalar_if_equal
from ..utils._rows import check_lazy_X, is_lazy, lazy_rows, refuse_lazy, row_sums
from ..utils._validation import check_array, validate_data

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPPCA"]

# Shares of the squared weight of the one Gaussian vector (count, sums, second
# moments): the noise std of a part is z·Δ/√share. The second moments carry the
# components; the mean's error enters the covariance only squared.
# Measured with benchmarks/bench_decomposition.py (docs/benchmarks.md).
COUNT_SHARE = 0.05
SUM_SHARE = 0.15
MOMENT_SHARE = 0.80
# δ > 0 without ``data_norm``: share of 1/z² for the noisy histogram of the rows' norms about
# the box's centre, whose NORM_QUANTILE becomes the clipping norm C (the rest of 1/z² goes to
# the shares above), and the share of ε for private bounds. Measured with
# benchmarks/bench_decomposition.py --wide (docs/benchmarks.md): 0.75 of ε for the bounds was
# best while a column whose histogram stayed in the noise got the box (0, 0); since such a
# column shares its table's pooled range instead (skdp.stats._range), half is as good or
# better on every table of fewer than 5,000 rows at ε = 0.5, 1 and 5 but gpa at ε = 0.5.
NORM_SHARE = 0.05
NORM_QUANTILE = 0.8
PCA_BOUNDS_SHARE = 0.5
# The histogram's bins: (C₀·2^-(j+1)/4, C₀·2^-j/4] for j < NORM_BINS, then the rest down to 0.
NORM_BINS = 12
# Rows of the sample that guesses the released C before the pass (guess_norm).
GUESS_ROWS = 4096
# With delta=0: shares of the one L1 unit (count, sums, second moments), Laplace scale of a
# part Δ₁/(share·ε). Measured with bench_decomposition.py --pca-delta 0 (docs/benchmarks.md).
LAPLACE_SHARES = (0.02, 0.08, 0.90)


@functools.lru_cache(maxsize=64)
def gaussian_multiplier(epsilon, delta):
    """The smallest Gaussian noise multiplier reaching (ε, δ) by the tightest accountant (cached)."""
    return calibrate_noise_multiplier(epsilon, delta)


def check_data_norm(data_norm):
    """``None`` or a finite float > 0."""
    if data_norm is None:
        return None
    if isinstance(data_norm, (bool, np.bool_)) or not isinstance(data_norm, numbers.Real) \
            or not math.isfinite(data_norm) or data_norm <= 0:
        raise ValueError(f"data_norm must be a finite float > 0 or None; got {data_norm!r}.")
    return float(data_norm)


def _centre_and_norm(bounds, data_norm):
    """The centre c and the norm bound C of the rows of :func:`clip_rows`."""
    lower, upper = bounds
    if data_norm is not None:
        return np.zeros(lower.size), data_norm
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        return np.zeros(lower.size), math.inf
    half = (upper - lower) / 2.0
    return (lower + upper) / 2.0, float(np.sqrt(np.sum(half * half)))


def clip_rows(X, bounds, data_norm):
    """Rows clipped to the box ``bounds``, centred, and of L2 norm at most C.

    Without ``data_norm`` the centre c is the box's midpoint and C its
    half-diagonal (the box alone bounds the norm); with it, c = 0 and rows
    longer than ``data_norm`` are scaled down to it. Infinite bounds clip
    nothing (``epsilon=inf``). Returns (Y, c, C) with Y = clipped rows − c (a
    new array); :func:`clipped_blocks` gives the same rows block by block.
    """
    c, C = _centre_and_norm(bounds, data_norm)
    Y = np.clip(X, *bounds)
    if data_norm is None:
        return (Y - c if math.isfinite(C) else Y), c, C
    return shrink_rows(Y, C), c, C


def block_bytes(X):
    """The bytes of a block of DPPCA's passes: X's over 64, within 1 and 4 × ``BLOCK_BYTES``.

    At 10^6 x 50 rows (6.25 MB blocks) fits with bounds, and with bounds and
    ``data_norm``, took 0.99 and 0.96 of their CPU time with 2 MB blocks on
    one thread, 0.94 and 0.97 on two (docs/benchmarks.md). A block larger
    than ``BLOCK_BYTES`` is at most 1/64 of X: a pass still makes no copy of X.
    """
    return min(max(_blocks.BLOCK_BYTES, X.nbytes // 64), 4 * _blocks.BLOCK_BYTES)


def clipped_blocks(X, bounds, data_norm, blocks=None):
    """The rows of :func:`clip_rows` block by block, without a copy of ``X``.

    Yields (rows, Y) for each slice of ``blocks`` (``None``: all of
    :func:`~skdp.utils._blocks.row_blocks`): the slice and its rows clipped,
    centred and scaled down as :func:`clip_rows` does, in one buffer that the
    next block overwrites. ``rows`` may also be an array of row indices (the
    rows are gathered into the buffer first). Centring first and clipping to
    the box less c gives the same bits as clipping and then centring
    (rounding is monotone).
    """
    n, d = X.shape
    c, C = _centre_and_norm(bounds, data_norm)
    centre = data_norm is None and math.isfinite(C) and bool(np.any(c != 0.0))
    lower, upper = (bounds[0] - c, bounds[1] - c) if centre else bounds
    lower, upper = scalar_if_equal(lower), scalar_if_equal(upper)
    c = scalar_if_equal(c)
    buffer = None
    for rows in row_blocks(n, d) if blocks is None else blocks:
        m = rows.stop - rows.start if isinstance(rows, slice) else len(rows)
        if buffer is None:
            buffer = np.empty((m, d))
        Y = buffer[:m]
        block = X[rows] if isinstance(rows, slice) else np.take(X, rows, axis=0, out=Y)
        if centre:
            clip_block(np.subtract(block, c, out=Y), lower, upper, Y)
        else:
            clip_block(block, lower, upper, Y)
        if data_norm is not None:
            shrink_rows(Y, data_norm)
        yield rows, Y


def moments(X, bounds, data_norm, C=math.inf, norms=None):
    """Σ yyᵀ and Σ y over the rows y of :func:`clip_rows`, by blocks (no copy of ``X``).

    With ``norms`` (the rows' norms, as :func:`clipped_blocks` gives them),
    rows longer than C are first scaled down to it, as :func:`shrink_rows`
    does. The blocks' sums are added in block order, whatever the threads
    (:func:`~skdp.utils._blocks.map_blocks`).
    """
    def run(blocks):
        parts = []
        for rows, Y in clipped_blocks(X, bounds, data_norm, blocks):
            if norms is not None:
                _scale_down(Y, norms[rows], C)
            parts.append((Y.T @ Y, column_sums(Y)))
        return parts

    d = X.shape[1]
    gram, sums = np.zeros((d, d)), np.zeros(d)
    for block_gram, block_sums in map_blocks(run, *X.shape, block_bytes=block_bytes(X)):
        gram += block_gram
        sums += block_sums
    return gram, sums


def column_sums(Y):
    """Σ y over the rows of ``Y``, as one product with a vector of ones (BLAS: faster than sum)."""
    return np.ones(len(Y)) @ Y


def _row_norms(Y, out):
    """The L2 norms of the rows of ``Y``, written into ``out``; returns it."""
    np.einsum("ij,ij->i", Y, Y, out=out)
    return np.sqrt(out, out=out)


def _norm_counts_pass(X, bounds, C0):
    """The rows' norms about the box's midpoint (n floats) and their :func:`norm_counts`."""
    norms = np.empty(X.shape[0])

    def run(blocks):
        return [norm_counts(_row_norms(Y, norms[rows]), C0)
                for rows, Y in clipped_blocks(X, bounds, None, blocks)]

    return norms, sum(map_blocks(run, *X.shape, block_bytes=block_bytes(X)))


def guess_norm(X, bounds, C0):
    """The norm C that :func:`release_norm` would give without noise, on a sample of the rows.

    Rows at a regular stride (at most GUESS_ROWS) are clipped and centred, and
    their histogram read by the release's rule. The guess only chooses how the
    pass of :func:`_norms_moments_pass` computes its sums (see
    :func:`scale_down_long_rows`): nothing released depends on it.
    """
    n, d = X.shape
    sample = np.arange(0, n, -(-n // GUESS_ROWS))
    norms = np.empty(sample.size)
    counts = sum(norm_counts(_row_norms(Y, norms[:len(rows)]), C0)
                 for rows, Y in clipped_blocks(
                     X, bounds, None, [sample[b] for b in row_blocks(sample.size, d)]))
    return max(_norm_from_counts(counts, C0), np.finfo(float).tiny)


def _norms_moments_pass(X, bounds, C0, C_guess):
    """:func:`_norm_counts_pass` and, in the same pass, :func:`moments` of rows scaled to a guess.

    Returns (norms, counts, gram, sums): the rows' norms about the box's
    midpoint, their :func:`norm_counts`, and Σ yyᵀ and Σ y over the clipped,
    centred rows y, those longer than ``C_guess`` scaled down to it (none
    with ``math.inf``). :func:`scale_down_long_rows` turns the sums into those
    of the rows scaled down to the released C.
    """
    n, d = X.shape
    norms = np.empty(n)

    def run(blocks):
        parts = []
        for rows, Y in clipped_blocks(X, bounds, None, blocks):
            _scale_down(Y, _row_norms(Y, norms[rows]), C_guess)
            parts.append([0, Y.T @ Y, column_sums(Y)])
        if parts:  # the histogram of the run's norms at once (fewer calls), with its last block
            parts[-1][0] = norm_counts(norms[blocks[0].start:blocks[-1].stop], C0)
        return parts

    counts, gram, sums = 0, np.zeros((d, d)), np.zeros(d)
    for block_counts, block_gram, block_sums in map_blocks(run, n, d,
                                                           block_bytes=block_bytes(X)):
        counts = counts + block_counts
        gram += block_gram
        sums += block_sums
    return norms, counts, gram, sums


def scale_down_long_rows(X, bounds, C, C_guess, norms, gram, sums):
    """:func:`moments` of the rows scaled down to C, from those of the rows scaled to ``C_guess``.

    ``gram`` and ``sums`` are Σ yyᵀ and Σ y over the clipped, centred rows y
    of norm ``norms``, each multiplied by a = min(1, ``C_guess``/‖y‖)
    (:func:`_norms_moments_pass`). With t = min(1, C/‖y‖), a row's share
    moves by (t² − a²)·yyᵀ and (t − a)·y, which is 0 unless the row is
    longer than min(C, ``C_guess``): only those rows are read again (none when
    the guess is C), gathered by blocks. Even when they are all the rows this
    takes no longer than a second pass of :func:`moments` (measured with
    benchmarks/bench_decomposition.py --long-rows). The guess is an internal
    choice of how the same sums are computed before any noise: every guess
    gives the same values to round-off (with C and the guess among the
    histogram's edges, a and t are at least 2^-3, so a subtraction loses at
    most 6 bits), and nothing released depends on it (the time does, as
    every pass's does).
    """
    if C == C_guess:
        return gram, sums
    fix = np.flatnonzero(norms > min(C, C_guess))
    sign = 1.0 if C > C_guess else -1.0  # t ≥ a for every row, or t ≤ a for every row

    def run(blocks):
        parts = []
        for rows, Y in clipped_blocks(X, bounds, None, [fix[b] for b in blocks]):
            a = np.minimum(1.0, C_guess / norms[rows])
            t = np.minimum(1.0, C / norms[rows])
            sums_part = (t - a) @ Y
            Y *= np.sqrt(sign * (t - a) * (t + a))[:, None]
            parts.append((Y.T @ Y, sums_part))
        return parts

    gram, sums = gram.copy(), sums.copy()
    for block_gram, block_sums in map_blocks(run, fix.size, X.shape[1]):
        gram += sign * block_gram
        sums += block_sums
    return gram, sums


def _moments_pass(X, bounds, data_norm, C=math.inf, *, rescale=False):
    """:func:`moments` of an in-memory X, or summed over the chunks of rows of a dask X.

    On dask, each chunk is an in-memory array of its own rows, whose norms
    (when the rows are scaled down to C, ``rescale``) are computed again in
    the chunk, in the same pass as its moments, rather than kept from the
    first pass. (In memory the rows are
    scaled down to a released C by :func:`scale_down_long_rows` instead.)
    """
    if not is_lazy(X):
        return moments(X, bounds, data_norm)
    return row_sums(functools.partial(_chunk_moments, bounds=bounds, data_norm=data_norm,
                                      C=C, rescale=rescale), X)


def _chunk_moments(X, *, bounds, data_norm, C, rescale):
    """:func:`moments` of one chunk of rows (the block function of a dask pass).

    With ``rescale`` the chunk's rows are scaled down to C in the pass that
    computes their norms (:func:`_norms_moments_pass` with the released C as
    its guess: the same floats as the norms' pass followed by :func:`moments`).
    """
    if rescale:
        return _norms_moments_pass(X, bounds, C, C)[2:]
    return moments(X, bounds, data_norm)


def _chunk_norm_counts(X, *, bounds, C0):
    """The :func:`norm_counts` of one chunk of rows (the block function of a dask pass)."""
    return _norm_counts_pass(X, bounds, C0)[1]


def _scale_down(Y, norms, C):
    """Rows of ``Y`` whose ``norms`` exceed C multiplied by C/norm (in place), the others left."""
    long = np.flatnonzero(norms > C)
    Y[long] *= (C / norms[long])[:, None]


def shrink_rows(Y, C):
    """Rows of ``Y`` longer than C scaled down to norm C (in place; returns Y)."""
    if math.isfinite(C):
        _scale_down(Y, np.sqrt(np.einsum("ij,ij->i", Y, Y)), C)
    return Y


def norm_counts(norms, C0):
    """Counts of ``norms`` (each ≤ C0) in the NORM_BINS + 1 bins of :func:`release_norm`."""
    edges = C0 * 2.0 ** (-np.arange(NORM_BINS + 1) / 4.0)  # descending, edges[0] = C0
    # bin j < NORM_BINS holds (edges[j+1], edges[j]]; bin NORM_BINS holds [0, edges[-1]]
    # (bin 0 holds what lies above C0 too). above[j] = #(norms > edges[j + 1]), non-decreasing:
    # one comparison per edge is faster than a search and a bincount over the norms.
    above = np.array([np.count_nonzero(norms > edge) for edge in edges[1:]])
    return np.diff(above, prepend=0, append=len(norms))


def release_norm(counts, C0, std, rng):
    """A private clipping norm C ≤ C0 from the histogram ``counts`` of the rows' norms.

    ``counts`` (from :func:`norm_counts`) are over NORM_BINS + 1 public bins
    (geometric, ratio 2^(1/4), below C0); each gets Gaussian noise of std
    ``std``: one row moves one count by 1, so the L2 sensitivity is 1
    (Gaussian mechanism: Dwork & Roth 2014, Thm A.1; Mironov 2017, Prop. 7).
    C is the smallest edge with at most 1 − NORM_QUANTILE of the noisy
    mass above it (post-processing); C0 when none.
    """
    counts = np.asarray(counts, dtype=float)
    return _norm_from_counts(np.maximum(counts + rng.normal(0.0, std, size=counts.size), 0.0),
                             C0)


def _norm_from_counts(counts, C0):
    """The least edge with at most 1 − NORM_QUANTILE of the ``counts``' mass above it, else C0."""
    edges = C0 * 2.0 ** (-np.arange(NORM_BINS + 1) / 4.0)
    above = np.cumsum(counts)[:-1]  # above[j]: rows of norm > edges[j + 1], non-decreasing
    fits = np.flatnonzero(above <= (1.0 - NORM_QUANTILE) * np.sum(counts))  # a prefix of j
    return float(edges[fits[-1] + 1]) if fits.size else float(C0)


def l1_norm_bound(bounds, data_norm, C):
    """A bound S on ‖y‖₁ of a clipped, centred row y (see :func:`clip_rows`).

    Without ``data_norm``: |y_i| ≤ half the box's width i, so S = Σ half-widths.
    With it: |y_i| ≤ max(|lower_i|, |upper_i|) (the box, then a shrink) and
    ‖y‖₁ ≤ √d·‖y‖₂ ≤ √d·C (Cauchy–Schwarz); S is the smaller.
    """
    lower, upper = bounds
    if data_norm is None:
        return float(np.sum((upper - lower) / 2.0))
    box = float(np.sum(np.maximum(np.abs(lower), np.abs(upper))))
    return min(box, math.sqrt(lower.size) * C)


def noise_scales(delta, noise, C, S):
    """Noise scales of the count, each sum and each second moment (one vector, one mechanism).

    δ > 0: Gaussian std z·Δ₂/√share, Δ₂ = 1, C, C² (``noise`` = z). δ = 0:
    Laplace scale Δ₁/(share·ε), ``noise`` = 1/ε, where one row moves the count
    by 1, the sums by ‖y‖₁ ≤ S and the upper triangle of yyᵀ by
    Σ_{i≤j} |y_i y_j| = (‖y‖₁² + ‖y‖₂²)/2 ≤ (S² + C²)/2 in L1 norm; the shares
    sum to 1, so the normalised vector has L1 sensitivity 1 and is ε-DP
    (Dwork, McSherry, Nissim & Smith 2006, Prop. 1).
    """
    if delta > 0:
        return (noise / math.sqrt(COUNT_SHARE), noise * C / math.sqrt(SUM_SHARE),
                noise * C * C / math.sqrt(MOMENT_SHARE))
    w_count, w_sum, w_moment = LAPLACE_SHARES
    return noise / w_count, noise * S / w_sum, noise * (S * S + C * C) / 2.0 / w_moment


class DPPCA(DPEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Principal component analysis with differential privacy (Analyze Gauss).

    One Gaussian vector (Laplace noise with ``delta=0``) releases the count,
    the sum and the second moment matrix of the clipped, centred rows; the
    components are post-processing. The fit charges the budget once, with
    private bounds in the same charge when none are given. Notes give the
    mechanism, the norm bound and the bounds.

    Parameters
    ----------
    n_components : int, float in (0, 1) or None, default=None
        Number of components kept; a float keeps the fewest components whose
        noisy explained variance ratio reaches it; ``None`` keeps all
        ``n_features`` (the number of rows is private).
    whiten : bool, default=False
        Scale the projections by 1/√``explained_variance_``.
    bounds : tuple (lower, upper) or None, default=None
        Public bounds of the features (scalars or arrays of shape
        (n_features,)); ``None``: estimated privately with half of ``epsilon``.
    data_norm : float > 0 or None, default=None
        Public bound of the L2 norm of a row (see Notes); ``None``: a private
        0.8 quantile of the rows' norms about the box's midpoint (the box's
        half-diagonal with ``delta=0``).
    epsilon : float > 0, default=1.0
    delta : float in [0, 1), default=1e-5
        0 gives pure ε-DP with Laplace noise (see Notes).
    budget : PrivacyBudget or None, default=None
    random_state : int, numpy Generator or None, default=None
    secure : bool, default=False
        Draw every random number of the fit from the operating system's
        CSPRNG instead of numpy's generator; ``random_state`` must then be
        None. See :ref:`secure_randomness`.
    verbose : int, default=0
        When > 0, print the charge (ε and δ spent, from the parameters) and
        one line per step of the fit (the released bounds, the noisy
        covariance, its eigendecomposition) with the elapsed time; nothing
        computed on the training rows without noise.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
    explained_variance_ : ndarray of shape (n_components,)
        Noisy eigenvalues of the covariance of the clipped rows, floored at 0.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        ``explained_variance_`` over the sum of all noisy eigenvalues (floored at 0).
    singular_values_ : ndarray of shape (n_components,)
        √(``explained_variance_`` · (ñ − 1)), ñ the noisy count.
    mean_ : ndarray of shape (n_features,)
    noise_variance_ : float
        Mean of the discarded noisy eigenvalues (0 when none is discarded).
    n_components_ : int
    bounds_ : tuple of two ndarrays of shape (n_features,)
    data_norm_ : float
        The norm C rows were scaled down to (about the box's midpoint without
        ``data_norm``, about 0 with it); ``transform`` does the same.
    privacy_curve_, epsilon_spent_, delta_spent_
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Like :class:`sklearn.decomposition.PCA`. Rows are clipped to the box
    ``bounds``, centred at a public point c, and of L2 norm at most C
    (see ``data_norm``). One Gaussian vector then releases the count of
    rows, the sum of the centred rows and their second moment matrix
    Σ yyᵀ as its diagonal and √2 × its upper triangle (Analyze Gauss:
    Dwork, Talwar, Thakurta & Zhang 2014, Alg. 1, symmetric noise; one row
    changes the count by 1, the sum by ‖y‖ ≤ C and that vector by
    ‖yyᵀ‖_F = ‖y‖² ≤ C² in L2 norm, so an off-diagonal entry gets 1/√2 of
    a diagonal entry's noise). Each part is scaled by its sensitivity and
    weighted by √share (shares 0.05, 0.15 and 0.80 of one unit), so the
    normalised vector has L2 sensitivity 1 and its curve is that of one
    Gaussian mechanism (Mironov 2017, Prop. 7). The covariance
    (M − s sᵀ/ñ)/(ñ − 1) and the mean c + s/ñ are post-processing; the
    components are the eigenvectors of that noisy covariance, with
    scikit-learn's signs (largest entry of each component positive).

    **δ = 0** (pure ε-DP): the same vector gets Laplace noise instead, each
    part scaled by its L1 sensitivity (1, a bound S on ``‖y‖₁`` and
    (S² + C²)/2) and weighted by its share (0.02, 0.08 and 0.90), so the
    vector has L1 sensitivity 1 (Laplace mechanism: Dwork, McSherry, Nissim
    & Smith 2006). S grows like the number of features d (the noise of a
    second moment like d·C²/ε, against z·C² for Analyze Gauss): on the
    benchmark tables of 20-26 columns it captures within a few percent of
    Analyze Gauss's variance at ε = 1, and much less on Adult's 105 columns or
    at ε = 0.1 (see the benchmarks page).

    **Bounds.** Public ``bounds`` cost nothing. Without them
    (``bounds=None``) half of ``epsilon`` releases private bounds
    (:func:`skdp.stats.bounds`), composed into the fit's one charge as
    :class:`~skdp.preprocessing.DPStandardScaler` does (see :ref:`bounds`);
    the tight boxes of that share are what keep the noise ∝ C² small on
    tables of many columns and few rows (measured on the benchmarks page).
    Without ``data_norm`` rows are centred at the box's midpoint; with
    δ > 0, C is then the 0.8 quantile of the rows' norms about it, read from a
    noisy histogram of those norms over 13 geometric bins below the box's
    half-diagonal (one row moves one count by 1; 0.05 of the Gaussian's
    1/z², the vector above gets the rest), and longer rows are scaled down
    to it, so ``explained_variance_`` is the variance of the rows so scaled
    (as ``transform`` sees them), below the data's when a fifth of the rows
    are much longer than the rest; with δ = 0, C is the box's
    half-diagonal, which clips nothing more. A column whose box has width 0
    is 0 in every centred row, and gets no noise. A public ``data_norm`` (a bound on a row's own L2 norm, as for the linear models)
    centres at 0 instead and scales longer rows down to it: C =
    ``data_norm``, often much smaller for one-hot or sparse rows, and the
    second moments' noise is ∝ C². ``transform`` clips
    rows as the fit did. With ``epsilon=inf`` the fit is scikit-learn's
    ``PCA(svd_solver="full")`` on the clipped data (on the data itself
    without bounds).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.decomposition import DPPCA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20_000, 3)) @ np.diag([3.0, 1.0, 0.3])
    >>> pca = DPPCA(n_components=2, bounds=(-10, 10), epsilon=1.0, random_state=0).fit(X)
    >>> np.abs(pca.components_).round(2)
    array([[1., 0., 0.],
           [0., 1., 0.]])
    >>> round(pca.data_norm_, 1)  # the private 0.8 quantile of the rows' norms
    4.3
    >>> pca.explained_variance_.round(1)  # of the rows scaled down to it (the data's: [9., 1.])
    array([6.7, 0.9])
    >>> pca.transform(X[:2]).shape
    (2, 2)
    """

    def __init__(
        self,
        n_components: int | float | None = None,
        *,
        whiten: bool = False,
        bounds: ArrayLike | None = None,
        data_norm: float | None = None,
        epsilon: float = 1.0,
        delta: float = DEFAULT_DELTA,
        budget: PrivacyBudget | None = None,
        random_state: RandomStateLike = None,
        secure: bool = False,
        verbose: int = 0,
    ) -> None:
        self.n_components = n_components
        self.whiten = whiten
        self.bounds = bounds
        self.data_norm = data_norm
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose

    def _check_n_components(self, n_features):
        n = self.n_components
        if n is None:
            return n_features
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Real):
            raise ValueError(f"n_components must be an int, a float in (0, 1) or None; got {n!r}.")
        if isinstance(n, numbers.Integral):
            if not 1 <= n <= n_features:
                raise ValueError(f"n_components={n} must be between 1 and n_features={n_features}.")
            return int(n)
        if not 0 < n < 1:
            raise ValueError(f"A float n_components must be in (0, 1); got {n!r}.")
        return float(n)

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> DPPCA:
        """Release the noisy covariance and keep its top eigenvectors; charges the budget once.

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
        n_components = self._check_n_components(n_features)
        bounds = check_bounds_or_none(self.bounds, n_features)
        data_norm = check_data_norm(self.data_norm)
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        check_bool(self.whiten, "whiten")
        if lazy and epsilon == math.inf:
            raise refuse_lazy("epsilon=inf (scikit-learn's PCA of the rows)")
        rng = self._check_generator()
        say = self._progress(self._check_verbose())
        # The curve from public parameters alone, then one charge. δ = 0: one Laplace
        # mechanism of L1 sensitivity 1 and scale 1/ε (Mironov 2017, Prop. 6).
        estimate = bounds is None and epsilon != math.inf
        if epsilon == math.inf:
            curve = RDPCurve.non_private()
        elif delta == 0:
            eps_stat = epsilon
            if estimate:
                eps_bounds, eps_stat, curve = split_curve(
                    epsilon, delta, n_features, lambda e: laplace_rdp(1.0 / e))
            else:
                curve = laplace_rdp(1.0 / epsilon)
            z = 1.0 / eps_stat
        elif estimate:
            eps_bounds, eps_stat, curve = split_curve(
                epsilon, delta, n_features, lambda e: gaussian_rdp(_noise_multiplier(e, delta)),
                share=PCA_BOUNDS_SHARE)
            z = _noise_multiplier(eps_stat, delta)
        else:
            z = gaussian_multiplier(epsilon, delta)
            curve = gaussian_rdp(z)
        self._charge_budget(curve)
        say(f"charged epsilon={self.epsilon_spent_:.4g}, delta={self.delta_spent_:.3g}")

        if estimate:
            bounds = _bounds_release(X, epsilon=eps_bounds, delta=delta, rng=rng)
            say(f"released the bounds of {n_features} features")
        if epsilon == math.inf:
            self._fit_exact(X, bounds, data_norm, n_components)
            say(f"exact PCA (epsilon=inf), {self.n_components_} components")
            return self
        self.bounds_ = bounds
        c, self.data_norm_ = _centre_and_norm(bounds, data_norm)
        C = max(self.data_norm_, np.finfo(float).tiny)
        if delta == 0:
            gram, sums, count = self._laplace_moments(X, bounds, data_norm, C, z, rng)
        else:
            gram, sums, count = self._gauss_moments(X, bounds, data_norm, C, z, rng)
        say(f"released the noisy covariance of {n_features} features")
        n = max(count, 2.0)
        cov = (gram - np.outer(sums, sums) / n) / (n - 1.0)
        self.mean_ = np.clip(c + sums / n, bounds[0], bounds[1])
        eigval, eigvec = np.linalg.eigh((cov + cov.T) / 2.0)
        order = np.argsort(eigval)[::-1]
        eigval = np.maximum(eigval[order], 0.0)
        components = eigvec[:, order].T
        self._set_components(components, eigval, n, n_components)
        say(f"eigendecomposition, {self.n_components_} components kept")
        return self

    def _laplace_moments(self, X, bounds, data_norm, C, z, rng):
        """δ = 0: the count, sums and second moments with Laplace noise (:func:`noise_scales`).

        One pass over the rows of ``X`` by blocks (:func:`moments`).
        """
        n_features = X.shape[1]
        s_count, s_sum, s_moment = noise_scales(0.0, z, C, l1_norm_bound(bounds, data_norm, C))
        iu = np.triu_indices(n_features)
        noise_m = np.zeros((n_features, n_features))
        noise_m[iu] = rng.laplace(0.0, s_moment, size=iu[0].size)
        noise_m = noise_m + np.triu(noise_m, 1).T  # symmetric: each pair drawn once
        count = X.shape[0] + rng.laplace(0.0, s_count)
        gram, sums = _moments_pass(X, bounds, data_norm)
        sums = sums + rng.laplace(0.0, s_sum, size=n_features)
        return gram + noise_m, sums, count

    def _gauss_moments(self, X, bounds, data_norm, C, z, rng):
        """δ > 0: Analyze Gauss on the clipped, centred rows of ``X``, one Gaussian in parts.

        Without ``data_norm``, first a clipping norm from the noisy histogram of
        the rows' norms (:func:`release_norm`, NORM_SHARE of 1/z²; in memory, the
        pass that counts them also keeps the norms and sums the moments of the
        rows scaled to a guess of C, :func:`scale_down_long_rows`); the rows are
        scaled down to it and the rest of 1/z² is shared as COUNT_SHARE,
        SUM_SHARE and MOMENT_SHARE. The parts' RDP curves add up to ``gaussian_rdp(z)``
        (Mironov 2017, Prop. 1 and 7).
        """
        n, n_features = X.shape
        weight = 1.0
        active = np.arange(n_features)
        lazy = is_lazy(X)
        if data_norm is None:
            # In memory, one pass sums the moments of the rows scaled to a guess of C with
            # their norms' histogram; on dask, a pass of the histogram, then one of the moments.
            if lazy:
                counts = row_sums(functools.partial(_chunk_norm_counts, bounds=bounds, C0=C), X)
            else:
                C_guess = guess_norm(X, bounds, C)
                norms, counts, gram, sums = _norms_moments_pass(X, bounds, C, C_guess)
            C = max(release_norm(counts, C, z / math.sqrt(NORM_SHARE), rng),
                    np.finfo(float).tiny)
            self.data_norm_ = C
            weight = 1.0 - NORM_SHARE
            # A column of width 0 in the public box is 0 in every centred row: nothing to release.
            active = np.flatnonzero(bounds[1] > bounds[0])
        # Analyze Gauss (DTTZ14, Alg. 1) on (diagonal, √2 × upper triangle) of Σ yyᵀ, whose
        # L2 sensitivity is ‖yyᵀ‖_F = ‖y‖² ≤ C²: each pair drawn once, off-diagonal sd / √2.
        s_count = z / math.sqrt(COUNT_SHARE * weight)
        s_sum = z * C / math.sqrt(SUM_SHARE * weight)
        s_moment = z * C * C / math.sqrt(MOMENT_SHARE * weight)
        m = active.size
        half = np.triu(rng.normal(0.0, s_moment, size=(m, m)))
        half[np.triu_indices(m, 1)] /= math.sqrt(2.0)
        noise_m = np.zeros((n_features, n_features))
        noise_m[np.ix_(active, active)] = half + np.triu(half, 1).T
        count = n + rng.normal(0.0, s_count)
        if data_norm is None and not lazy:
            gram, sums = scale_down_long_rows(X, bounds, C, C_guess, norms, gram, sums)
        else:
            gram, sums = _moments_pass(X, bounds, data_norm, C, rescale=data_norm is None)
        sums[active] += rng.normal(0.0, s_sum, size=m)
        return gram + noise_m, sums, count

    def _fit_exact(self, X, bounds, data_norm, n_components):
        """``epsilon=inf``: scikit-learn's full-SVD PCA on the clipped rows."""
        n_features = X.shape[1]
        self.bounds_ = (np.full(n_features, -np.inf), np.full(n_features, np.inf)) \
            if bounds is None else bounds
        Y, c, self.data_norm_ = clip_rows(X, self.bounds_, data_norm)
        Xc = Y + c
        k = n_components if not isinstance(n_components, int) else min(n_components, *Xc.shape)
        pca = PCA(n_components=k, whiten=self.whiten, svd_solver="full").fit(Xc)
        for name in ("components_", "explained_variance_", "explained_variance_ratio_",
                     "singular_values_", "mean_", "noise_variance_", "n_components_"):
            setattr(self, name, getattr(pca, name))
        return self

    def _set_components(self, components, eigval, n, n_components):
        """Keep the top components of the noisy eigen-decomposition (post-processing)."""
        # scikit-learn's signs (svd_flip, u_based_decision=False): largest |entry| positive
        signs = np.sign(components[np.arange(len(components)),
                                   np.argmax(np.abs(components), axis=1)])
        components = components * np.where(signs == 0, 1.0, signs)[:, None]
        total = eigval.sum()
        ratio = eigval / total if total > 0 else np.zeros_like(eigval)
        if isinstance(n_components, float):
            k = int(np.searchsorted(np.cumsum(ratio), n_components, side="right") + 1)
            k = min(k, len(eigval))
        else:
            k = n_components
        self.n_components_ = k
        self.components_ = components[:k]
        self.explained_variance_ = eigval[:k]
        self.explained_variance_ratio_ = ratio[:k]
        self.singular_values_ = np.sqrt(eigval[:k] * (n - 1.0))
        self.noise_variance_ = float(eigval[k:].mean()) if k < len(eigval) else 0.0

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def _clip(self, X):
        """Rows clipped as the fit clipped them (to the box, then to ``data_norm``)."""
        if self.data_norm is not None:
            Y, c, _ = clip_rows(X, self.bounds_, self.data_norm_)
            return Y + c
        Y, c, _ = clip_rows(X, self.bounds_, None)
        return shrink_rows(Y, self.data_norm_) + c

    @lazy_rows
    def transform(self, X: ArrayLike) -> NDArray:
        """Clip X as the fit did, centre it and project it on the components.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)

        def project():
            Z = (self._clip(X) - self.mean_) @ self.components_.T
            if self.whiten:
                Z /= np.sqrt(np.maximum(self.explained_variance_, np.finfo(float).eps))
            return Z

        return finite_output(project)

    @lazy_rows
    def inverse_transform(self, X: ArrayLike) -> NDArray:
        """Map projections back to the feature space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.components_.shape[0]:
            raise ValueError(f"X has {X.shape[1]} columns; expected n_components_="
                             f"{self.components_.shape[0]}.")

        def back():
            Z = X
            if self.whiten:
                Z = Z * np.sqrt(np.maximum(self.explained_variance_, np.finfo(float).eps))
            return Z @ self.components_ + self.mean_

        return finite_output(back)
