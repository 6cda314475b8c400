"""Quantiles by the exponential mechanism: their (curve, release) pair, three ways.

- ``method="split"`` (the default): one mechanism per level and column at
  ε/m (Smith 2011), :func:`_em_quantiles_1d`: a partition and a sort of a
  window of ranks around each level instead of a full sort, and exact
  adaptive rejection outside it (:class:`_PartialOrder`); the same
  distribution as the full-sort :func:`_em_quantiles_sorted`.
- ``method="joint"``: one mechanism per column over increasing vectors of
  outputs (Gillenwater, Joseph & Kulesza 2021), :func:`_joint_quantiles_1d`
  (on fully sorted data: its forward pass needs every interval).
- ``secure=True`` (split only): a point of a public grid chosen by the exact
  base-2 exponential mechanism (Ilvento 2020), charged at its effective
  ε' ≤ ε (:func:`_secure_em_base`), :func:`_secure_em_quantile_1d` (on fully
  sorted data); without it the selection probabilities are floats and the
  output lies between data values.

The quantiles are pure ε-DP and ignore ``delta``. The pair follows the
contract of :mod:`skdp.stats._noise` (:func:`_quantile_curve`,
:func:`_quantile_release`).
"""

import functools
import math
from fractions import Fraction

import numpy as np

from ..accounting import RDPCurve
from ..mechanisms import exponential_mechanism_rdp
from ..mechanisms._exact import _bernoulli, _RandomBits
from ._checks import _check_axis, _check_n_outputs
from ._noise import _flatten

__all__ = []  # internal: see skdp.stats._noise


def _quantile_epsilon(epsilon, n_releases):
    """ε of each of the ``n_releases`` exponential mechanisms (an honest equal split)."""
    return epsilon / n_releases


# Quantile methods: "joint" (one exponential mechanism over increasing
# vectors, Gillenwater, Joseph & Kulesza 2021) or "split" (one Smith 2011
# mechanism per level at ε/m). Both are the same mechanism for one level.
_QUANTILE_METHODS = ("joint", "split")
_DEFAULT_QUANTILE_METHOD = "split"  # measured: docs/benchmarks.md, "DP statistics"


def _check_quantile_method(method):
    """``method`` as one of :data:`_QUANTILE_METHODS` (``None`` is the default)."""
    if method is None:
        return _DEFAULT_QUANTILE_METHOD
    if not isinstance(method, str) or method not in _QUANTILE_METHODS:
        raise ValueError(f"method must be one of {_QUANTILE_METHODS}; got {method!r}.")
    return method


def _quantile_curve(epsilon, delta, n_outputs, *, n_quantiles=1, secure=False, method=None,
                    row_size=1):
    """Curve of :func:`skdp.stats.quantile`.

    ``method="split"`` (default): ``n_outputs · n_quantiles`` exponential
    mechanisms, each at ε/(n_outputs · n_quantiles) (an honest split).
    ``method="joint"``: one joint exponential mechanism per column
    (Gillenwater, Joseph & Kulesza 2021), each at ε/n_outputs, whatever the
    number of levels. Every mechanism reports the tighter of its pure-DP and
    bounded-range zCDP curves (:func:`skdp.mechanisms.exponential_mechanism_rdp`:
    an exponential mechanism whose utility has sensitivity Δ, sampled with
    weights exp(ε·u/(2Δ)), is ε-DP and ε-bounded-range, also over a
    continuous output space). ``delta`` is not used: the quantiles are pure ε-DP.

    ``secure=True`` (split only; joint raises): each mechanism is the exact
    base-2 exponential mechanism of :func:`_secure_em_quantile_1d`, whose
    rational base implements an effective ε' ≤ ε/(n_outputs · n_quantiles)
    (:func:`_secure_em_base`); the curve is charged at that ε'. ``row_size``
    is the utility's sensitivity Δ (the entries of a row, > 1 only for
    ``axis=None`` on n-D data), which the rounding of the base depends on.
    """
    method = _check_quantile_method(method)
    k = _check_n_outputs(n_outputs)
    m = _check_n_outputs(n_quantiles)
    row_size = _check_n_outputs(row_size)
    if secure and method == "joint":
        raise ValueError(
            "secure=True is implemented for method='split' only: the joint mechanism's "
            "selection probabilities are computed in floating point. Use method='split'."
        )
    if epsilon == math.inf:
        return RDPCurve.non_private()
    if secure:
        return _secure_quantile_curve_cached(float(epsilon), k * m, row_size)
    return _quantile_curve_cached(float(epsilon), k if method == "joint" else k * m)


@functools.lru_cache(maxsize=256)
def _quantile_curve_cached(epsilon, k):
    """k exponential mechanisms at ε/k each (cached: a pure function; RDPCurve is immutable)."""
    return k * exponential_mechanism_rdp(_quantile_epsilon(epsilon, k))


@functools.lru_cache(maxsize=256)
def _secure_quantile_curve_cached(epsilon, k, row_size):
    """k exact base-2 exponential mechanisms, each at its effective ε' ≤ ε/k."""
    _, _, eps_eff = _secure_em_base(_quantile_epsilon(epsilon, k), row_size)
    return k * exponential_mechanism_rdp(eps_eff)


# --------------------------------------------------------------------------
# secure quantiles: the exact base-2 exponential mechanism on a public grid
# --------------------------------------------------------------------------
# Default number of public candidate outputs of a secure quantile.
_SECURE_GRID_SIZE = 1024
_MAX_SECURE_GRID_SIZE = 2**20
# Bits of the integer weights of the secure sampler's proposal (bounds its memory).
_SECURE_MAX_BITS = 2**17


def _check_grid_size(grid_size):
    """``grid_size`` as an int in [2, 2**20] (``None`` is the default 1024)."""
    if grid_size is None:
        return _SECURE_GRID_SIZE
    if isinstance(grid_size, (bool, np.bool_)) or not isinstance(grid_size, (int, np.integer)) \
            or not 2 <= int(grid_size) <= _MAX_SECURE_GRID_SIZE:
        raise ValueError(f"grid_size must be an integer in [2, {_MAX_SECURE_GRID_SIZE}]; "
                         f"got {grid_size!r}.")
    return int(grid_size)


@functools.lru_cache(maxsize=256)
def _secure_em_base(epsilon, sensitivity):
    """The rational base β = x/2^y of the exact exponential mechanism, and its ε'.

    Ilvento 2020 (CCS, "Implementing the Exponential Mechanism with Base-2
    Differential Privacy", Sec. 4-5): weights β^d with an integer utility
    loss d and a base β = x·2^(−y) (x, y integers) are exact dyadic
    rationals. Weights exp(−ε·d/(2Δ)) would need β = e^(−a), a = ε/(2Δ);
    we round β UP to the next multiple of 2^(−y) (plus one), so
    β > e^(−a) and the mechanism implemented, exp(−ε'·d/(2Δ)) with
    ε' = 2Δ·ln(1/β) < ε, is ε'-DP (McSherry & Talwar 2007, Thm. 6) and
    never more private than claimed. y ≤ 52 keeps e^(−a)·2^y exact in a float
    and is chosen so that ε − ε' ≈ 2^(−22)·ε (capped at y = 52 for a ≳ 25).
    Returns (x, y, ε'), ε' rounded up by 2^(−40) relative (log1p's error).
    """
    a = epsilon / (2.0 * sensitivity)
    y = min(52, max(8, math.ceil(22 + a / math.log(2) + math.log2(1.0 / a))))
    x = math.floor(math.exp(-a) * 2.0**y) + 2  # > e^(−a)·2^y even with exp's 1-ulp error
    x = min(x, 2**y - 1)  # reached when y is capped at 52 and a ≲ 2^−51; keeps β < 1
    # ln(1/β) = −log1p(−(2^y − x)/2^y): the fraction is exact, log1p has ~1 ulp error.
    eps_eff = -2.0 * sensitivity * math.log1p(-(2**y - x) / 2.0**y) * (1.0 + 2.0**-40)
    if eps_eff > epsilon:
        # Only when x was capped (a ≲ 2^−51): β = 1 − 2^−52 < e^(−a) would implement
        # an ε' > ε. Refuse (before any charge: the curve calls this first).
        raise ValueError(
            f"epsilon per secure quantile ({epsilon:.3g}) is too small for the exact base-2 "
            "sampler (its base has 52 bits); use a larger epsilon or secure=False."
        )
    return x, y, eps_eff


def _secure_grid(lower, upper, grid_size):
    """The public candidate outputs: ``grid_size`` evenly spaced floats from lower to upper."""
    return np.linspace(lower, upper, grid_size)


def _quantile_losses(sorted_x, grid, level, row_size):
    """Integer utility losses d(g) = r(g) − min r ≥ 0 of the grid points (exact, in int64).

    r(g) = dist(t, [#{x < g}, #{x ≤ g}]) with t = round(q·N), N = len(sorted_x)
    (rounded half up in exact rational arithmetic). Utility −r(g) has
    add/remove sensitivity ``row_size`` (our derivation, the rank utility of
    Smith 2011 made integer): a row adds at most ``row_size`` entries, so
    each of #{x < g}, #{x ≤ g} and t (q·N moves by q·row_size ≤ row_size, a
    monotone rounding by at most ⌈q·row_size⌉) rises by between 0 and
    row_size; r = max(#{x<g} − t, t − #{x≤g}, 0) and each term moves by at
    most row_size. g is an exact q-quantile of the data when r(g) = 0.
    """
    n = sorted_x.size
    q = Fraction(float(level))
    t = (2 * q.numerator * n + q.denominator) // (2 * q.denominator)  # ⌊qN + 1/2⌋
    below = np.searchsorted(sorted_x, grid, side="left").astype(np.int64)
    at_most = np.searchsorted(sorted_x, grid, side="right").astype(np.int64)
    r = np.maximum(np.maximum(below - t, t - at_most), 0)
    return r - r.min()


def _sample_base2_em(losses, x, y, bits):
    """Index j drawn with probability exactly ∝ (x/2^y)^losses[j] (integer losses ≥ 0).

    Rejection sampling with integer arithmetic only (Ilvento 2020's exact
    normalised sampling, with a capped proposal to bound the integers'
    size): propose j with probability ∝ β^min(d_j, c), as integer weights
    x^e·2^(y(c − e)) with one uniform integer below their total; accept
    with probability β^(d_j − c), as d_j − c exact Bernoulli(x/2^y) draws
    (:mod:`skdp.mechanisms._exact`); otherwise start again. The cap c makes
    the proposal's tail mass at most about half (β^c·len ≤ 1/2) and its
    integers at most :data:`_SECURE_MAX_BITS` bits.
    """
    size = losses.size
    log2_inv_beta = y - math.log2(x)  # only sizes the proposal: any cap c ≥ 0 is exact
    cap = math.ceil((math.log2(size) + 1.0) / log2_inv_beta)
    cap = max(1, min(cap, _SECURE_MAX_BITS // y, int(losses.max()) if size else 0))
    capped = np.minimum(losses, cap)
    exps, counts = np.unique(capped, return_counts=True)
    weights = [x ** int(e) << (y * (cap - int(e))) for e in exps]
    blocks = [w * int(c) for w, c in zip(weights, counts)]
    total = sum(blocks)
    beta = Fraction(x, 2**y)
    while True:
        r = bits.randbelow(total)
        for e, w, block in zip(exps, weights, blocks):
            if r < block:
                # r is uniform in this block of count·w: r // w is uniform among its points
                j = int(np.flatnonzero(capped == e)[r // w])
                break
            r -= block
        if all(_bernoulli(beta, bits) for _ in range(int(losses[j]) - cap)):
            return j


def _secure_em_quantile_1d(sorted_x, lower, upper, level, epsilon, row_size, grid_size, bits):
    """One secure quantile: a grid point of ``_secure_grid(lower, upper, grid_size)``.

    The exponential mechanism with utility −r(g) (:func:`_quantile_losses`,
    sensitivity ``row_size``) over the public grid, sampled exactly with
    weights β^(r(g) − min r), β from :func:`_secure_em_base` (ε' ≤ ``epsilon``).
    """
    grid = _secure_grid(lower, upper, grid_size)
    if lower == upper:
        return float(lower)
    x, y, _ = _secure_em_base(epsilon, row_size)
    losses = _quantile_losses(sorted_x, grid, level, row_size)
    return float(grid[_sample_base2_em(losses, x, y, bits)])


# Block length of the two-level inverse CDF in _em_quantiles_1d.
_CDF_BLOCK = 1024
# exp(v) == 0.0 exactly in float64 for every v < -746 (exp(-745.2) is the
# smallest subnormal): weights whose log is that far below the largest are 0.
_EXP_ZERO = 746.0


def _em_quantiles_1d(x, lower, upper, levels, epsilon, sensitivity, rng, *, half=None):
    """Smith 2011 exponential mechanism for quantiles of clipped data ``x``, without a full sort.

    The same distribution as :func:`_em_quantiles_sorted` (which documents
    the mechanism), so the same privacy analysis; ``x`` is reordered in
    place. Gap i (between the order statistics x₍ᵢ₎ and x₍ᵢ₊₁₎, with
    x₍₀₎ = L and x₍N₊₁₎ = U) has weight ℓᵢ·exp(−a|i − qN|), a = ε/(2Δ);
    equivalently the output has density exp(−a|r(o) − qN|) on [L, U], with
    r(o) = #{x < o}. For each level only the gaps within ``half`` ranks of
    qN (default (ln(N + 1) + 40)/a) are computed: single-kth
    ``np.partition`` calls at the windows' ends, then a sort of each window
    (:class:`_PartialOrder`). The rest is drawn by adaptive rejection
    (:meth:`_PartialOrder.draw`), exact whatever the data. Where the
    windows cover more than a quarter of the data (small N or tiny ε),
    ``x`` is sorted instead. Only the running time depends on the data
    beyond the release (ties or clipped values around qN cost extra passes).
    """
    n = x.size
    a = epsilon / (2.0 * sensitivity)
    if half is None:
        half = (math.log(n + 1.0) + _WINDOW_LOG_MARGIN) / a
    windows = [(max(int(math.floor(q * n - half)), 0), min(int(math.ceil(q * n + half)), n))
               for q in levels]
    if 4 * sum(h - s + 1 for s, h in windows) > n:
        x.sort()
        return _em_quantiles_sorted(x, lower, upper, levels, epsilon, sensitivity, rng)
    order = _PartialOrder(x, lower, upper)
    # gaps s..h lie between the order statistics at positions s − 1 … h of x
    order.select(0, x.size, {k for s, h in windows for k in (s - 1, h) if 0 <= k < x.size})
    out = []
    for q, (s, h) in zip(levels, windows):
        order.sort_within(s, h)
        out.append(order.draw(q * n, a, rng, window=(s - 1, h)))
    return out


# Half-width of the fast sampler's rank window, in units of 1/a beyond ln(N + 1): on data
# spread over its bounds, the weight outside the window is then about e^−40 of the inside.
_WINDOW_LOG_MARGIN = 40.0
# Unsorted runs of at most this many values are sorted when the sampler refines them.
_SORT_RUN = 4096


class _PartialOrder:
    """``x`` reordered in place so that some positions hold their order statistic.

    ``known`` lists the runs [p, p') of such positions, in order; positions
    −1 and N stand for L and U. Between two runs lies an unsorted run
    [p₀, p₁): it holds exactly the order statistics p₀ + 1 … p₁, in any order,
    so the gaps p₀ … p₁ cover [x[p₀ − 1], x[p₁]) without being known one by one.
    """

    def __init__(self, x, lower, upper):
        self.x, self.lower, self.upper = x, lower, upper
        self.known = [(-1, 0), (x.size, x.size + 1)]

    def value(self, p):
        """The order statistic at position p (L at −1, U at N)."""
        return self.lower if p < 0 else self.upper if p >= self.x.size else self.x[p]

    def _mark(self, start, stop):
        """Record that positions [start, stop) hold their order statistics."""
        runs = sorted(self.known + [(start, stop)])
        merged = [runs[0]]
        for lo, hi in runs[1:]:
            if lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        self.known = merged

    def select(self, start, stop, positions):
        """Put the order statistics at ``positions`` of the unsorted run [start, stop).

        One ``partition`` per position, at the middle one first, then in each
        half: numpy partitions at a single kth several times faster than at
        several (measured: 1.4 ms against 9 ms for two kth on 10⁶ floats).
        """
        positions = sorted(positions)
        if not positions:
            return
        mid = positions[len(positions) // 2]
        self.x[start:stop].partition(mid - start)
        self._mark(mid, mid + 1)
        self.select(start, mid, [p for p in positions if p < mid])
        self.select(mid + 1, stop, [p for p in positions if p > mid])

    def sort_within(self, start, stop):
        """Sort every unsorted run inside [start, stop) (whose ends must be known)."""
        for lo, hi in self.unsorted():
            if start <= lo and hi <= stop:
                self.x[lo:hi].sort()
                self._mark(lo, hi)

    def unsorted(self):
        """The unsorted runs [p₀, p₁), in order."""
        return [(self.known[j][1], self.known[j + 1][0]) for j in range(len(self.known) - 1)]

    def _slots(self, t, a, window=None):
        """Log-weights of the known gaps and of the unsorted runs, in order, what they are,
        and whether ``window`` left out any known run.

        A known gap i weighs ℓᵢ·exp(−a|i − t|), as in :func:`_em_quantiles_sorted`;
        an unsorted run [p₀, p₁) weighs (x[p₁] − x[p₀ − 1])·exp(−a·d), d the
        distance from t to [p₀, p₁], a bound on the total weight of its gaps.
        With ``window`` = (p, p'), the known runs that do not meet positions
        p … p' count as unsorted: any range between known positions holds
        exactly its order statistics, so the bound holds (other levels'
        windows then cost nothing here).
        """
        logs, what = [], []
        n = self.x.size
        known = self.known if window is None else [
            (lo, hi) for lo, hi in self.known
            if lo < 0 or hi > n or (lo <= window[1] and hi > window[0])]
        folded = len(known) < len(self.known)
        for j, (lo, hi) in enumerate(known):
            if hi - lo >= 2:  # gaps lo + 1 … hi − 1, between known positions
                edges = self.x[max(lo, 0):min(hi, n)]
                edges = np.concatenate(([self.lower] if lo < 0 else [], edges,
                                        [self.upper] if hi > n else []))
                with np.errstate(divide="ignore"):
                    log_w = np.log(np.diff(edges))
                log_w -= a * np.abs(np.arange(lo + 1, hi, dtype=float) - t)
                logs.append(log_w)
                what.append((lo + 1, hi))
            if j + 1 < len(known):
                p0, p1 = hi, known[j + 1][0]
                near = min(max(t, p0), p1)  # the gap index in p0 … p1 nearest t
                with np.errstate(divide="ignore"):
                    log_b = np.log(self.value(p1) - self.value(p0 - 1)) - a * abs(near - t)
                logs.append(np.array([log_b]))
                what.append((p0, p1, a * abs(near - t)))
        return logs, what, folded

    def draw(self, t, a, rng, window=None):
        """One output of density ∝ exp(−a|r(o) − t|) on [L, U], by adaptive rejection.

        Propose from the slots of :meth:`_slots` (one uniform, inverse CDF):
        a known gap is accepted, the output uniform in it; in an unsorted run
        the proposal o is uniform over its range, its gap r found by a count,
        and it is accepted with probability exp(−a|r − t| + a·d) ≤ 1; after a
        rejection that run is split (or sorted) and the draw starts again.
        Each accepted output has the target density whatever the proposals
        (Gilks & Wild 1992, adaptive rejection sampling); with the windows
        of :func:`_em_quantiles_1d` the first proposal is almost always a
        known gap, and the draws of the uniform and the output are those of
        :func:`_em_quantiles_sorted`. With ``window`` the first proposals see
        only that window's known runs (:meth:`_slots`); after a rejection, all.
        """
        while True:
            logs, what, folded = self._slots(t, a, window)
            flat = np.concatenate(logs)
            top = np.max(flat)
            if top == -math.inf:  # every gap has length 0: lower == upper
                return float(self.lower)
            k = _inverse_cdf(np.exp(flat - top), rng.random())
            sizes = np.cumsum([w.size for w in logs])
            j = int(np.searchsorted(sizes, k, side="right"))
            if len(what[j]) == 2:  # a known gap
                i = what[j][0] + k - (sizes[j - 1] if j else 0)
                return float(rng.uniform(self.value(i - 1), self.value(i)))
            p0, p1, a_d = what[j]
            o = float(rng.uniform(self.value(p0 - 1), self.value(p1)))
            r = min(p0 + int(np.count_nonzero(self.x[p0:p1] <= o)), p1)
            if rng.random() < math.exp(a_d - a * abs(r - t)):
                return o
            window = None
            if folded:  # a finer bound first: every known run
                continue
            if p1 - p0 <= _SORT_RUN:
                self.x[p0:p1].sort()
                self._mark(p0, p1)
            else:
                self.select(p0, p1, [(p0 + p1) // 2])


def _em_quantiles_sorted(sorted_x, lower, upper, levels, epsilon, sensitivity, rng):
    """Smith 2011 exponential mechanism for quantiles of sorted, clipped data.

    The N + 1 gaps between L, x₍₁₎, …, x₍N₎, U get utility −|i − qN| for
    gap i (i points below it), sensitivity 1 per entry under add/remove, and
    weight (gap length) · exp(ε·u/(2·sensitivity)); the output is uniform in
    the selected gap (Smith 2011, Sec. 3; Gillenwater et al. 2021, Sec. 2).
    Each level in ``levels`` is one mechanism at ``epsilon``; they share the
    sorted data, the gaps and their logarithms.

    The log-weights of all gaps are computed (their maximum needs them all),
    then normalised weights exp(log w − max) only where they can be nonzero
    in float64: log w ≤ log(largest gap) − ε|i − qN|/(2Δ), so outside
    |i − qN| ≤ (log(largest gap) − max + 746)·2Δ/ε every weight is exactly 0,
    as it would be if computed. The gap is drawn by inverse CDF with one
    uniform: block sums of the weights locate the block, a cumulative sum
    inside it the gap (the same distribution as one cumulative sum over all
    gaps, without its serial pass).
    """
    n = sorted_x.size
    # gap i runs from edge i to edge i + 1 of L, x₍₁₎, …, x₍N₎, U
    log_gaps = np.empty(n + 1)
    np.subtract(sorted_x[1:], sorted_x[:-1], out=log_gaps[1:n])
    log_gaps[0] = (sorted_x[0] if n else upper) - lower
    if n:
        log_gaps[n] = upper - sorted_x[-1]
    with np.errstate(divide="ignore"):
        np.log(log_gaps, out=log_gaps)
    log_gap_max = np.max(log_gaps)
    a = epsilon / (2.0 * sensitivity)
    index = np.arange(n + 1, dtype=float) if len(levels) > 1 else None
    out = []
    for q in levels:
        if index is None:  # one level: build the index in place
            log_w = np.arange(n + 1, dtype=float)
            log_w -= q * n
        else:
            log_w = np.subtract(index, q * n)
        np.abs(log_w, out=log_w)
        log_w *= -a
        log_w += log_gaps  # log(gap) + ε·u/(2Δ), u = −|i − qN|
        top = np.max(log_w)
        if top == -math.inf:  # every gap has length 0: lower == upper
            out.append(float(lower))
            continue
        # +1 on each side: a margin for the rounding of the bound itself.
        reach = (log_gap_max - top + _EXP_ZERO) / a + 1.0
        start = max(int(math.floor(q * n - reach)), 0)
        stop = min(int(math.ceil(q * n + reach)), n) + 1
        weights = np.subtract(log_w[start:stop], top)
        np.exp(weights, out=weights)
        i = start + _inverse_cdf(weights, rng.random())
        i = min(i, n)
        left = lower if i == 0 else sorted_x[i - 1]
        right = upper if i == n else sorted_x[i]
        out.append(float(rng.uniform(left, right)))
    return out


def _inverse_cdf(weights, u):
    """Index i with cumsum(w)[i-1] ≤ u·Σw < cumsum(w)[i] (blocked: no full serial pass)."""
    n_blocks = -(-weights.size // _CDF_BLOCK)
    padded = np.zeros(n_blocks * _CDF_BLOCK)
    padded[: weights.size] = weights
    block_cdf = np.cumsum(padded.reshape(n_blocks, _CDF_BLOCK).sum(axis=1))
    target = u * block_cdf[-1]
    b = min(int(np.searchsorted(block_cdf, target, side="right")), n_blocks - 1)
    inner = np.cumsum(padded[b * _CDF_BLOCK:(b + 1) * _CDF_BLOCK])
    before = block_cdf[b - 1] if b else 0.0
    return min(b * _CDF_BLOCK + int(np.searchsorted(inner, target - before, side="right")),
               weights.size - 1)


def _window_logsumexp(g, width):
    """log Σ_{p=i−width}^{i−1} exp(g[p]) for every i in 0..len(g)−1 (−inf when empty).

    Sliding-window log-sum-exp without subtraction (van Herk / Gil–Werman):
    with blocks of ``width`` entries, a window is a suffix of one block plus
    a prefix of the next, both from cumulative ``logaddexp`` passes.
    """
    size = g.size
    # padded[p + width] = g[p]; window of i: padded[i .. i + width − 1]
    n_blocks = -(-(size + width) // width)
    padded = np.full(n_blocks * width, -np.inf)
    padded[width:width + size] = g
    blocks = padded.reshape(n_blocks, width)
    prefix = np.logaddexp.accumulate(blocks, axis=1).reshape(-1)
    suffix = np.logaddexp.accumulate(blocks[:, ::-1], axis=1)[:, ::-1].reshape(-1)
    start = np.arange(size)
    stop = start + width - 1
    out = suffix[start]
    partial = start % width != 0  # the window runs into the next block
    out[partial] = np.logaddexp(out[partial], prefix[stop[partial]])
    return out


def _joint_transition(prev, d, c):
    """log Σ_{i' < i} exp(prev[i'] − c·|i − i' − d|) for every i (O(n), no subtraction).

    The kernel is exp(−c(D − d)) for D = i − i' ≥ K = max(1, ⌈d⌉) and
    exp(−c(d − D)) for 1 ≤ D < K: a cumulative log-sum-exp of
    prev[i'] + c·i' (far part) and a sliding window of prev[i'] − c·i' (near part).
    """
    size = prev.size
    idx = np.arange(size, dtype=float)
    big_k = max(1, math.ceil(d))
    out = np.full(size, -np.inf)
    if big_k < size:
        far = np.logaddexp.accumulate(prev + c * idx)[: size - big_k]
        out[big_k:] = far + c * (d - idx[big_k:])
    if big_k > 1:
        near = _window_logsumexp(prev - c * idx, big_k - 1) + c * (idx - d)
        out = np.logaddexp(out, near)
    return out


def _joint_alpha(arrivals, j, log_len, c, cum_d):
    """log-weights α_j(i, k), shape (j, n + 1): step j's output is the k-th in interval i.

    ``arrivals[l − 1]`` holds α_l(i, 1) (output l opens interval i). Each of
    the k − 1 later outputs in the same interval adds utility −d_l and the
    volume of k sorted points in an interval of length ℓ is ℓ^k / k!.
    """
    rows = [arrivals[j - 1]]
    for k in range(2, j + 1):
        rows.append(arrivals[j - k] + (k - 1) * log_len - c * (cum_d[j] - cum_d[j - k + 1])
                    - math.lgamma(k + 1))
    return np.vstack(rows)


def _sample_log_weights(log_w, rng):
    """Index (into the flattened ``log_w``) drawn with probability ∝ exp(log_w)."""
    flat = np.ravel(log_w)
    top = np.max(flat)
    weights = np.exp(flat - top)
    return _inverse_cdf(weights, rng.random())


def _joint_quantiles_1d(sorted_x, lower, upper, levels, epsilon, sensitivity, rng,
                        n_draws=None):
    """JointExp (Gillenwater, Joseph & Kulesza 2021, Sec. 3): all levels at once.

    ``levels`` must be non-decreasing. With edges L, x₍₁₎, …, x₍N₎, U,
    interval i = [edge i, edge i + 1) of length ℓᵢ holds the outputs with i
    data points below them. For increasing outputs o₁ ≤ … ≤ o_m with rᵢ data
    points below oⱼ (r₀ = 0, r_{m+1} = N) and targets tⱼ = qⱼN (t₀ = 0,
    t_{m+1} = N), the utility is

        u(o) = −Σ_{j=1}^{m+1} |(rⱼ − rⱼ₋₁) − (tⱼ − tⱼ₋₁)|     (GJK21, Sec. 3.1).

    Sensitivity under add/remove (our derivation; GJK21 state 2 for their
    neighbouring relation): a new point raises one count rⱼ − rⱼ₋₁ (say j = s)
    by 1, and every target gap tⱼ − tⱼ₋₁ by dⱼ = qⱼ − qⱼ₋₁ (q₀ = 0,
    q_{m+1} = 1, Σ dⱼ = 1), so |Δu| ≤ (1 − d_s) + Σ_{j≠s} dⱼ = 2(1 − d_s)
    ≤ Δ = 2(1 − minⱼ dⱼ) ≤ 2 (for one level, 2·max(q, 1 − q): the Smith
    utility's own add/remove sensitivity, doubled as u counts |i − qN| twice).
    A row of ``sensitivity`` entries (axis=None on n-D data) moves it by at
    most that many times Δ.
    The density over the increasing vectors is ∝ exp(ε·u/(2Δ)) (McSherry &
    Talwar 2007): ε-DP. It is sampled exactly (up to float rounding): a
    forward pass over the levels computes, in log space, the total weight of
    every (level j, interval i, k-th output in i) — the volume of k sorted
    points in one interval is ℓᵢᵏ/k! — then a backward pass draws the
    intervals and the outputs are sorted uniforms in them. Time
    O(m²·N) (O(N) per transition, O(m) interval repeats), memory O(m·N).
    Returns a list of m floats, or with ``n_draws`` an (n_draws, m) array of
    independent draws that share the forward pass (for tests).
    """
    n = sorted_x.size
    m = len(levels)
    edges = np.concatenate(([lower], sorted_x, [upper]))
    with np.errstate(divide="ignore"):
        log_len = np.log(np.diff(edges))
    if np.all(log_len == -np.inf):  # lower == upper: a single possible output
        out = np.full((1 if n_draws is None else n_draws, m), float(lower))
        return out[0].tolist() if n_draws is None else out
    q_ext = np.concatenate(([0.0], np.asarray(levels, dtype=float), [1.0]))
    delta_u = 2.0 * (1.0 - float(np.min(np.diff(q_ext)))) * sensitivity
    c = epsilon / (2.0 * delta_u)  # McSherry & Talwar 2007: weights exp(ε·u/(2Δ))
    d = np.diff(q_ext * n)  # d[j − 1] = tⱼ − tⱼ₋₁, j = 1..m+1
    cum_d = np.concatenate(([0.0], np.cumsum(d)))  # cum_d[j] = Σ_{l ≤ j} d_l
    idx = np.arange(n + 1, dtype=float)
    # forward pass: arrivals[j − 1] = α_j(·, 1), totals = log Σ_k α_j(·, k)
    arrivals = [log_len - c * np.abs(idx - d[0])]
    total = arrivals[0]
    for j in range(2, m + 1):
        arrivals.append(log_len + _joint_transition(total, d[j - 1], c))
        total = np.logaddexp.reduce(_joint_alpha(arrivals, j, log_len, c, cum_d), axis=0)
    if n_draws is None:
        return _joint_backward(arrivals, edges, log_len, c, d, cum_d, rng).tolist()
    return np.array([_joint_backward(arrivals, edges, log_len, c, d, cum_d, rng)
                     for _ in range(n_draws)])


def _joint_backward(arrivals, edges, log_len, c, d, cum_d, rng):
    """One draw of JointExp given its forward pass: the last output's (interval,
    repeat), then each predecessor given its successor; sorted uniforms in them."""
    m, size = len(arrivals), log_len.size
    n = size - 1
    idx = np.arange(size, dtype=float)
    alpha = _joint_alpha(arrivals, m, log_len, c, cum_d)
    flat = _sample_log_weights(alpha - c * np.abs(n - idx - d[m]), rng)
    k, i = divmod(flat, size)
    k += 1
    chosen = [0] * m
    for j in range(m, 0, -1):
        chosen[j - 1] = i
        if k > 1:  # output j − 1 is in the same interval, one repeat fewer
            k -= 1
            continue
        if j == 1:
            break
        alpha = _joint_alpha(arrivals, j - 1, log_len, c, cum_d)[:, :i]
        flat = _sample_log_weights(alpha - c * np.abs(i - idx[:i] - d[j - 1]), rng)
        k, i = divmod(flat, i)
        k += 1
    chosen = np.asarray(chosen)
    return np.sort(rng.uniform(edges[chosen], edges[chosen + 1]))


def _quantile_release(a, q, *, epsilon, delta, bounds, axis, rng, secure=False, method=None,
                      grid_size=None, skip_nan=False):
    """Noisy ``np.quantile(np.clip(a, *bounds), q, axis)`` by the exponential mechanism.

    ``q`` is a float or a 1-D array of levels in [0, 1]; the output has
    numpy's shape (q's shape first). With axis=None on n-D data every row
    adds its m entries, so the utility's sensitivity is m times larger.
    ``method`` is ``"split"`` (default: :func:`_em_quantiles_1d` per level
    at ε/m) or ``"joint"`` (:func:`_joint_quantiles_1d`, the outputs of a
    column increase with the levels); it must match the charged
    :func:`_quantile_curve`.

    ``secure=False`` is NOT hardened against floating-point attacks: the
    selection probabilities are computed in floating point, and the output is
    drawn uniformly between two data values, so which floats can come out
    depends on the data (compare Mironov 2012). ``secure=True`` (split only)
    runs :func:`_secure_em_quantile_1d` per level and column: the exact
    base-2 exponential mechanism (Ilvento 2020) over ``grid_size`` public
    points (default 1024), at the effective ε' ≤ ε/m charged by
    :func:`_quantile_curve` with ``secure=True``. With ``skip_nan`` the NaN
    entries of each column are left out (``np.nanquantile``): a row's NaN
    entry adds nothing to its column, so the utility's sensitivity holds.
    """
    method = _check_quantile_method(method)
    if secure and method == "joint":
        _quantile_curve(1.0, 0.0, 1, secure=True, method="joint")  # raises: split only
    arr = np.atleast_1d(np.asarray(a, dtype=float))
    n_outputs, shape = _check_axis(arr, axis)
    q_arr = np.asarray(q, dtype=float)
    grid_size = _check_grid_size(grid_size)
    x, lower, upper = _flatten(arr, bounds, axis)
    if epsilon == math.inf:
        return (np.nanquantile if skip_nan else np.quantile)(x.reshape(arr.shape), q_arr,
                                                              axis=axis)
    # x is a clipped copy: the samplers may reorder its columns in place
    if axis is None:
        cols = [x.ravel()]
        lows, ups = [float(np.min(lower))], [float(np.max(upper))]
        if np.ptp(lower) or np.ptp(upper):
            raise ValueError("axis=None on multi-column data needs scalar bounds for quantiles.")
        sensitivity = float(x.shape[1])
    else:
        cols = [np.ascontiguousarray(x[:, j]) for j in range(x.shape[1])]
        lows, ups = lower, upper
        sensitivity = 1.0
    if skip_nan:
        nans = [np.isnan(col) for col in cols]
        cols = [col[~nan] if nan.any() else col for col, nan in zip(cols, nans)]
    if secure or method == "joint":  # these take sorted data; the split sampler sorts no more
        for col in cols:
            col.sort()
    levels = q_arr.reshape(-1)
    out = np.empty((levels.size, len(cols)))
    if method == "split":
        eps_each = _quantile_epsilon(epsilon, n_outputs * levels.size)
        if secure:
            bits = _RandomBits(rng)
            for j, col in enumerate(cols):
                for i, level in enumerate(levels):
                    out[i, j] = _secure_em_quantile_1d(col, float(lows[j]), float(ups[j]), level,
                                                       eps_each, int(sensitivity), grid_size, bits)
        else:
            for j, col in enumerate(cols):
                out[:, j] = _em_quantiles_1d(col, lows[j], ups[j], levels, eps_each, sensitivity,
                                             rng)
    else:
        order = np.argsort(levels, kind="stable")  # the joint mechanism takes increasing levels
        eps_each = _quantile_epsilon(epsilon, n_outputs)
        for j, col in enumerate(cols):
            out[order, j] = _joint_quantiles_1d(col, lows[j], ups[j], levels[order], eps_each,
                                                sensitivity, rng)
    return out.reshape(q_arr.shape + shape)
