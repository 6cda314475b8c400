"""Private bounds without public bounds (skdp.stats.bounds and skdp.stats._range)."""

import math
import pathlib
import sys

import numpy as np
import pytest

from skdp import PrivacyBudget, stats
from skdp.accounting import RDPCurve
from skdp.stats import _range
from skdp.stats._histograms import _histogram_curve
from skdp.stats._sums import _mean_curve, _var_curve
from _testing import assert_same_curve

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from _dp_audit import split_audit  # noqa: E402


# -- the public grid ---------------------------------------------------------------------
def test_every_value_falls_in_its_bin():
    rng = np.random.default_rng(0)
    x = np.concatenate([
        rng.normal(size=1000) * 10.0 ** rng.uniform(-8, 17, size=1000),
        2.0 ** np.arange(-29, 60),  # the grid's own edges
        -(2.0 ** np.arange(-29, 60)),
        [0.0, -0.0, 1e-12, -1e-12, 2.0**-30, 1.0, 3.0, 16.0, 17.0],
    ])
    idx = _range.bin_index(x)
    assert idx.min() >= 0 and idx.max() < _range.N_BINS
    left, right = _range._LEFT[idx], _range._RIGHT[idx]
    inside = np.abs(x) > 2.0**-30
    assert np.all((left <= x) & (x <= right) | ~inside)
    assert np.all(idx[~inside] == _range.N_BINS // 2)  # magnitudes up to 2^-30 count as 0
    # bins are ordered along the real line: the index never decreases with the value
    order = np.argsort(x, kind="stable")
    assert np.all(np.diff(idx[order]) >= 0)


def test_out_of_grid_values_and_nan():
    idx = _range.bin_index([1e300, -1e300, np.nan])
    assert idx.tolist() == [_range.N_BINS - 1, 0, -1]
    assert _range._RIGHT[-1] == 2.0**_range.LOG2_RANGE[1]


def _log2_bin_index(x):
    """The bins as skdp computed them before reading the exponent: ⌈log2 |x|⌉ by np.log2."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.ceil(np.log2(np.abs(x)))
    low, high = _range.LOG2_RANGE
    offset = np.nan_to_num(np.clip(m, low + 1, high) - low).astype(np.int64)
    idx = np.where(x > 0, _range._SIDE + offset, _range._SIDE - offset)
    idx[np.abs(x) <= 2.0**low] = _range._SIDE
    idx[np.isnan(x)] = -1
    return idx


def _hard_values():
    rng = np.random.default_rng(5)
    powers = 2.0 ** np.arange(-1074, 1024)  # subnormals, the grid's edges 2^-30 and 2^60
    x = np.concatenate([
        powers, np.nextafter(powers, np.inf), np.nextafter(powers, 0.0),
        [0.0, np.inf, np.nan, np.finfo(float).max, np.finfo(float).tiny, 3.0, 17.0],
        rng.normal(size=200_000) * 10.0 ** rng.uniform(-40, 40, size=200_000),
        rng.integers(-2**40, 2**40, size=100_000).astype(float),
        rng.integers(0, 2**63, size=200_000, dtype=np.int64).view(float),  # any bits
    ])
    return np.concatenate([x, -x])


def test_the_exponent_gives_the_bins_of_log2_but_where_log2_rounds_to_the_power_below():
    x = _hard_values()
    new, old = _range.bin_index(x), _log2_bin_index(x)
    differ = new != old
    # np.log2 of a value a few units in the last place above a power of two 2^k (k >= 2 or
    # k <= -2) rounds to k, which put the value in the bin below, outside the bin's edges
    # (2^(k-1), 2^k]; the exponent puts it in (2^k, 2^(k+1)], as documented
    a = np.abs(x[differ])
    power = 2.0 ** np.floor(np.log2(a))
    assert 0 < differ.sum() < 400 and np.all((a > power) & (a <= power * (1 + 2.0**-50)))
    assert np.all(np.abs(new[differ] - old[differ]) == 1)
    inside = (np.abs(x) > 2.0**-30) & (np.abs(x) <= 2.0**60)
    idx = new[inside]
    assert np.all((_range._LEFT[idx] <= x[inside]) & (x[inside] <= _range._RIGHT[idx]))
    assert not np.all(_range._RIGHT[old[inside & differ]] >= x[inside & differ])


def test_bin_counts_read_blocks_of_at_most_histogram_block_bytes(monkeypatch):
    from skdp.utils import _blocks

    seen = []

    def recording(*args, block_bytes=None, **kw):
        seen.append(block_bytes)
        return _blocks.map_blocks(*args, block_bytes=block_bytes, **kw)

    monkeypatch.setattr(_range, "map_blocks", recording)
    X = np.random.default_rng(7).normal(size=(30_000, 7)) * 100.0  # 1.7 MB: 4 blocks
    expected = np.stack([np.bincount(i, minlength=_range.N_BINS)
                         for i in _range.bin_index(X).T])
    assert _range.HISTOGRAM_BLOCK_BYTES == 2 ** 19 < _blocks.BLOCK_BYTES
    np.testing.assert_array_equal(_range._bin_counts(X), expected)
    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 8 * 7 * 64)  # smaller: BLOCK_BYTES
    np.testing.assert_array_equal(_range._bin_counts(X), expected)
    assert seen == [2 ** 19, 8 * 7 * 64]


@pytest.mark.parametrize("threads", [1, 3])
def test_bin_counts_by_blocks_are_the_counts_of_bin_index(monkeypatch, threads):
    from skdp.utils import _blocks

    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 8 * 7 * 64)  # 64 rows a block
    monkeypatch.setattr(_blocks, "n_threads", lambda: threads)
    rng = np.random.default_rng(6)
    X = rng.normal(size=(5000, 7)) * 10.0 ** rng.uniform(-12, 20, size=(5000, 7))
    X[rng.random(X.shape) < 0.05] = np.nan
    X[rng.random(X.shape) < 0.05] = 0.0
    X[rng.random(X.shape) < 0.02] = -0.0
    X[:, 3] = rng.integers(0, 5, 5000)  # powers of two and zeros
    X[[3, 9], 2], X[[5, 7, 8], 2], X[11, 4] = np.inf, -np.inf, -np.nan
    expected = np.stack([np.bincount(i[i >= 0], minlength=_range.N_BINS)
                         for i in _range.bin_index(X).T])
    assert expected[2, -1] >= 2 and expected[2, 0] >= 3
    for data in (X, np.asfortranarray(X), X[::3]):
        counts = _range._bin_counts(data)
        want = expected if data.shape == X.shape else np.stack(
            [np.bincount(i[i >= 0], minlength=_range.N_BINS) for i in _range.bin_index(data).T])
        np.testing.assert_array_equal(counts, want)
        assert counts.sum() == np.count_nonzero(~np.isnan(data))
    assert _range._bin_counts(np.zeros((0, 3))).shape == (3, _range.N_BINS)


# -- the release on hard columns ---------------------------------------------------------
def _bounds(X, eps=1.0, delta=0.0, seed=0):
    return stats.bounds(X, epsilon=eps, delta=delta, random_state=seed)


@pytest.mark.parametrize("value, expected", [
    (0.0, (0.0, 0.0)),                       # all zero
    (5.0, (4.0, 8.0)),                       # constant: its bin (2^2, 2^3]
    (1.0, (0.5, 1.0)),                       # a power of two is its bin's right edge
    (-3.0, (-4.0, -2.0)),
    (1e15, (2.0**49, 2.0**50)),              # huge
    (-1e-7, (-(2.0**-23), -(2.0**-24))),     # tiny
])
def test_constant_columns(value, expected):
    assert _bounds(np.full(1000, value)) == expected


def test_mixed_columns_pandas_and_integers():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    n = 5000
    frame = pd.DataFrame({
        "age": rng.integers(17, 91, n),              # integers
        "flag": rng.integers(0, 2, n),               # one-hot like
        "zero": np.zeros(n, dtype=int),
        "signed": rng.normal(0, 100, n),
    })
    lower, upper = _bounds(frame, eps=2.0, delta=1e-5)
    assert lower.tolist()[:3] == [16.0, 0.0, 0.0] and upper.tolist()[:3] == [128.0, 1.0, 0.0]
    # N(0, 100): the bins (128, 256] hold 10% of the rows each side, (256, 512]
    # 0.5% (about 25 rows, near the threshold): either may be the last one kept
    assert lower[3] in (-256.0, -512.0) and upper[3] in (256.0, 512.0)


def test_a_few_extreme_rows_move_no_bound():
    # 40 rows (0.4%) at 1e12 stand out of the noise but are trimmed (at most 0.5%
    # of the kept mass is left out at each end); the small bins near 0 are below
    # the threshold (the bin (2^-7, 2^-6] holds about 78 rows).
    x = np.r_[np.random.default_rng(2).uniform(0, 1, 10_000), np.full(40, 1e12)]
    for seed in range(5):
        lower, upper = _bounds(x, seed=seed)
        assert upper == 1.0 and 0 <= lower <= 2.0**-6


def test_a_column_lost_in_the_noise_is_about_zero_never_a_random_bin():
    # 30 rows at epsilon 0.01: no bin stands out of the noise (Laplace scale 100), not
    # even the largest pair of bins: the range is the zero bin widened to both
    # neighbours (about 0, never the point (0, 0)), never a random bin far from the data.
    for s in range(50):
        lower, upper = _bounds(np.full(30, 7.0), eps=0.01, seed=s)
        assert lower == -(2.0**-29) and upper == 2.0**-29


def test_weak_columns_share_the_hull_of_their_pooled_histogram():
    # 64 columns of 300 rows, half 0 and half 9..16, at epsilon 0.5 (a digits-like table):
    # one column's bins stay below its threshold, the 64 columns' pooled counts clear
    # sqrt(64) times it
    rng = np.random.default_rng(3)
    X = rng.integers(9, 17, size=(300, 64)) * rng.integers(0, 2, size=(300, 64)).astype(float)
    for seed in range(5):
        lower, upper = _range._bounds_release(X, epsilon=0.5, delta=1e-5,
                                              rng=np.random.default_rng(seed))
        pooled = (lower == 0.0) & (upper == 16.0)
        own = (lower == 8.0) & (upper == 16.0)  # a column whose (8, 16] bin cleared alone
        assert np.all(pooled | own) and pooled.sum() >= 56


def _one_column(pairs):
    row = np.zeros(_range.N_BINS)
    for value, count in pairs:
        row[_range.bin_index(np.array([value]))[0]] = count
    return row


def test_feature_hull_keeps_a_strong_column_and_pools_the_weak_ones():
    threshold, pair_level = 1000.0, 800.0
    strong = _one_column([(100.0, 5000.0)])
    weak = _one_column([(10.0, 400.0), (0.0, 300.0)])
    noisy = np.array([strong] + [weak] * 16)  # pooled: 6400 and 4800 > sqrt(16) * 1000
    lower, upper = _range._feature_hull(noisy, threshold, pair_level)
    assert (lower[0], upper[0]) == (64.0, 128.0)
    assert np.all(lower[1:] == 0.0) and np.all(upper[1:] == 16.0)
    # 4 weak columns: pooled 1600 and 1200 stay below sqrt(4) * 1000, their sum 2800 clears
    # sqrt(4) * 800: the pair of adjacent bins (8, 16], (16, 32] stands in
    weak = _one_column([(10.0, 400.0), (20.0, 300.0)])
    lower, upper = _range._feature_hull(np.array([weak] * 4), threshold, pair_level)
    assert np.all(lower == 8.0) and np.all(upper == 32.0)
    # below that level: about 0, never a single point
    lower, upper = _range._feature_hull(np.array([weak] * 4) / 2, threshold, pair_level)
    assert np.all(lower == -(2.0**-29)) and np.all(upper == 2.0**-29)
    # the zero bin alone clearing the threshold is (0, 0): a column almost all zero
    lower, upper = _range._feature_hull(_one_column([(0.0, 5000.0)])[None], threshold,
                                        pair_level)
    assert (lower[0], upper[0]) == (0.0, 0.0)


def test_a_column_keeps_a_candidate_bin_at_a_lower_bar():
    # 16 columns, half 0 and half in (8, 16]: the pooled counts make both bins candidates.
    # Column 0 cleared (8, 16] alone; its zero bin (600) clears the candidates' bar (500)
    # but not the threshold, and is kept: its range takes in the zeros. Its 600 in
    # (64, 128], not a candidate, is not kept.
    threshold, pair_level = 1000.0, 800.0
    first = _one_column([(10.0, 1200.0), (0.0, 600.0), (100.0, 600.0)])
    others = _one_column([(10.0, 1100.0), (0.0, 1100.0)])
    noisy = np.array([first] + [others] * 15)
    lower, upper = _range._feature_hull(noisy, threshold, pair_level, lambda m: 500.0)
    assert (lower[0], upper[0]) == (0.0, 16.0)
    lower, upper = _range._feature_hull(noisy, threshold, pair_level, lambda m: 700.0)
    assert (lower[0], upper[0]) == (8.0, 16.0)
    # the bar is the threshold's formula over the m candidates at CANDIDATE_RATE: lower
    assert (_range._threshold(1.0, 1e-5, 16, rate=_range.CANDIDATE_RATE, n_bins=6)
            < _range._threshold(1.0, 1e-5, 16))


def test_the_pooled_level_is_conservative_for_laplace_noise():
    # the sum of two Laplace(b) exceeds sqrt(2) * tau with probability
    # 1/4 e^(-x) (2 + x), x = sqrt(2) tau / b, below one Laplace's 1/2 e^(-tau / b)
    b = float(_range._noise_scales(0.5, 0.0, 10, 1.0))
    tau = _range._threshold(0.5, 0.0, 10) / b
    x = math.sqrt(2.0) * tau
    assert 0.25 * math.exp(-x) * (2.0 + x) < 0.5 * math.exp(-tau)


def test_epsilon_inf_is_the_exact_range():
    x = np.array([[1.5, -2.0], [3.0, 7.25], [-4.0, 0.5]])
    lower, upper = _bounds(x, eps=math.inf)
    assert lower.tolist() == [-4.0, -2.0] and upper.tolist() == [3.0, 7.25]


def test_nan_entries_are_skipped():
    X = np.full((4000, 2), 3.0)
    X[::2, 0] = np.nan
    X[:, 1] = np.nan
    lower, upper = _range._bounds_release(X, epsilon=5.0, delta=0.0,
                                          rng=np.random.default_rng(0))
    assert (lower[0], upper[0]) == (2.0, 4.0)
    assert (lower[1], upper[1]) == (-(2.0**-29), 2.0**-29)  # no value: about 0


def test_charges_its_curve_once_and_refuses_bad_input_for_free():
    budget = PrivacyBudget(10.0, 1e-5)
    X = np.random.default_rng(0).normal(size=(500, 3))
    stats.bounds(X, epsilon=0.5, delta=1e-5, budget=budget, random_state=0)
    assert len(budget) == 1
    assert_same_curve(budget.ledger[0].curve, _histogram_curve(0.5, 1e-5, 3))
    for bad in (dict(a=np.c_[X, np.full(500, np.nan)], epsilon=0.5),
                dict(a=X, epsilon=0.0), dict(a=X, epsilon=0.5, delta=1.0),
                dict(a=X[:, :, None], epsilon=0.5)):
        with pytest.raises(ValueError):
            stats.bounds(budget=budget, **bad)
    assert len(budget) == 1


# -- the split of a fit's epsilon --------------------------------------------------------
@pytest.mark.parametrize("delta, secure", [(0.0, False), (0.0, True), (1e-5, False),
                                           (1e-5, True), (1e-8, False)])
@pytest.mark.parametrize("d", [1, 30])
def test_split_curve_spends_epsilon_and_no_more(delta, secure, d):
    eps = 1.0

    def stat(e):
        return _var_curve(e, delta, d, secure=secure)

    eps_b, eps_s, curve = _range.split_curve(eps, delta, d, stat, secure=secure)
    assert eps_b == pytest.approx(_range.BOUNDS_EPSILON_SHARE * eps)
    assert_same_curve(curve, _range._bounds_curve(eps_b, delta, d, secure=secure) + stat(eps_s))
    spent = curve.epsilon(delta)
    assert spent <= eps * (1 + 1e-12)  # up to the float rounding of a sum of pure parts
    assert spent > eps * (1 - 1e-5)  # the statistic takes all that is left
    if delta == 0:  # pure parts add up: the statistic gets exactly the rest
        assert eps_s == pytest.approx((1 - _range.BOUNDS_EPSILON_SHARE) * eps, rel=1e-5)
    else:  # composed in RDP the two parts cost at most their sum: the statistic gets more
        assert eps_s >= (1 - _range.BOUNDS_EPSILON_SHARE) * eps * (1 - 1e-5)


def test_split_curve_with_a_mean():
    eps_b, eps_s, curve = _range.split_curve(
        2.0, 1e-5, 4, lambda e: _mean_curve(e, 1e-5, 4))
    assert isinstance(curve, RDPCurve) and curve.epsilon(1e-5) <= 2.0
    assert eps_s < 2.0


# -- empirical privacy of the range -----------------------------------------------------
# D: many rows at 0 and c rows at 1 (the bin (1/2, 1]); D' adds one row at 1. The
# upper bound is 1 exactly when that bin's noisy count clears the threshold τ
# (the zero bin always does, and the trim cannot remove a bin of c ≈ τ rows next
# to a zero bin of 4τ rows), so P(upper = 1) is the Laplace tail ½e^(−(τ − c)/b),
# b = 1/ε, whose ratio between c + 1 and c is e^ε: the tightest event of the
# mechanism. With c = τ − 2b both probabilities are moderate (about 0.07 and 0.18).
def _upper(data, rng, eps):
    return _range._bounds_release(data, epsilon=eps, delta=0.0, rng=rng)[1][0]


def _neighbours(eps):
    tau = _range._threshold(eps, 0.0, 1)
    c = int(round(tau - 2.0 / eps))
    d0 = np.r_[np.zeros(int(4 * tau)), np.ones(c)].reshape(-1, 1)
    return d0, np.r_[d0, [[1.0]]]


@pytest.mark.parametrize("factor, ok", [(1.0, True), (2.0, False)])
def test_range_audit(factor, ok):
    eps = 1.0
    d0, d1 = _neighbours(eps * factor)
    out = []
    for data, seed in ((d0, 10), (d1, 11)):
        rng = np.random.default_rng(seed)
        out.append([_upper(data, rng, eps * factor) for _ in range(6000)])
    lower_bound = split_audit(out[0], out[1], n_select=1000)
    # A correct release stays below its ε; one run at 2ε while claiming ε is caught.
    assert (lower_bound <= eps) is ok, lower_bound
