"""Review of the private ranges' histogram by the float's exponent (skdp/stats/_range.py).

Checked and sound (these tests pass and guard it):

- ``bin_index`` equals a reference written from ``math.frexp`` (the exact
  ⌈log2 a⌉) on powers of two and their neighbours, the grid's edges 2^-30
  and 2^60, subnormals, the largest double, ±0, ±inf, NaN and 20,000 values
  spread over every exponent.
- ``_bin_counts`` (by blocks and threads) equals the per-column histogram of
  those reference bins: each finite or infinite entry is one count of its
  column (+inf in the last bin, −inf in the first), NaN none; blocks of a
  few rows on 1 and 3 threads give the same counts.
- Adding one row changes each column's counts by exactly one count in one
  bin (none for a NaN entry): sensitivity 1 per column, as charged.
- Nothing else of the data is read: two datasets with the same counts
  (values moved inside their bins, rows permuted, ±inf swapped for values of
  the end bins) give the same released bounds and the same warnings for the
  same seed.
"""

import math
import warnings

import numpy as np
import pytest

from skdp.stats._range import LOG2_RANGE, N_BINS, _bin_counts, _bounds_release, bin_index
from skdp.utils import _blocks

SIDE = (N_BINS - 1) // 2


def _reference_bin(x):
    """The bin of one value, from the exact exponent of frexp (BINS_PER_OCTAVE = 1)."""
    if math.isnan(x):
        return -1
    a = abs(x)
    if a <= 2.0 ** LOG2_RANGE[0]:
        return SIDE
    if math.isinf(a):
        m = LOG2_RANGE[1]
    else:
        f, e = math.frexp(a)  # a = f·2^e, f in [0.5, 1): ⌈log2 a⌉ = e, or e − 1 when f = 0.5
        m = e - 1 if f == 0.5 else e
    offset = min(max(m, LOG2_RANGE[0] + 1), LOG2_RANGE[1]) - LOG2_RANGE[0]
    return SIDE + offset if x > 0 else SIDE - offset


def _special_values():
    powers = 2.0 ** np.arange(-1074, 1024, dtype=float)
    near = np.concatenate([powers, np.nextafter(powers, 0.0), np.nextafter(powers, np.inf)])
    extra = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 2.2250738585072014e-308,
             np.finfo(float).max, 2.0**-30, 2.0**60, 3.0 * 2.0**59, 1.5 * 2.0**-31]
    rng = np.random.default_rng(0)
    spread = rng.random(20_000) * 2.0 ** rng.integers(-1074, 1024, 20_000)
    values = np.concatenate([near, extra, spread])
    return np.concatenate([values, -values])


def test_bin_index_is_the_exact_ceiling_of_log2():
    values = _special_values()
    expected = np.array([_reference_bin(float(v)) for v in values])
    np.testing.assert_array_equal(bin_index(values), expected)


def _reference_counts(X):
    ref = np.zeros((X.shape[1], N_BINS), dtype=np.int64)
    for j in range(X.shape[1]):
        bins = np.array([_reference_bin(float(v)) for v in X[:, j]], dtype=np.int64)
        ref[j] = np.bincount(bins[bins >= 0], minlength=N_BINS)
    return ref


@pytest.mark.parametrize("threads", [1, 3])
def test_counts_by_blocks_are_one_count_per_entry(monkeypatch, threads):
    """Blocks of 5 rows of 4 columns (160 bytes), on 1 or 3 threads, 1003 rows."""
    values = _special_values()
    rng = np.random.default_rng(1)
    X = rng.choice(values, (1003, 4))
    X[::97, 2] = np.nan
    X[5, 1], X[6, 1], X[7, 3] = np.inf, -np.inf, np.inf
    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 160)
    monkeypatch.setattr(_blocks, "n_threads", lambda: threads)
    counts = _bin_counts(X)
    np.testing.assert_array_equal(counts, _reference_counts(X))
    np.testing.assert_array_equal(counts.sum(axis=1), (~np.isnan(X)).sum(axis=0))
    assert counts[1, N_BINS - 1] >= 1 and counts[1, 0] >= 1


@pytest.mark.parametrize("row", [[1.0, -1.0, 0.0, np.nan], [np.inf, -np.inf, 2.0**60, -2.0**61],
                                 [5e-324, -0.0, 2.0**-30, np.finfo(float).max],
                                 [np.nan, np.nan, np.nan, np.nan]])
def test_one_row_adds_at_most_one_count_per_column(row):
    X = np.random.default_rng(2).normal(0, 1e3, (500, 4))
    diff = _bin_counts(np.vstack([X, row])) - _bin_counts(X)
    assert diff.min() >= 0
    np.testing.assert_array_equal(diff.sum(axis=1), ~np.isnan(row))
    assert np.all(diff.max(axis=1) <= 1)


def _same_bins(X, rng):
    """Another dataset with the same bin counts: each value moved inside its bin (the end bins'
    values, ±inf included, to other values of the end bins), rows permuted."""
    bins = bin_index(X)
    offset = np.abs(bins - SIDE)
    m = np.where(offset == SIDE, LOG2_RANGE[1] + 1 + rng.random(X.shape) * 900,
                 LOG2_RANGE[0] + offset - rng.random(X.shape) * 0.999)  # in (m − 1, m]
    moved = np.sign(bins - SIDE) * 2.0 ** m
    moved = np.where(offset == 0, 0.0, moved)
    moved = np.where(np.isnan(X), np.nan, moved)
    np.testing.assert_array_equal(bin_index(moved), bins)
    return moved[rng.permutation(len(X))]


@pytest.mark.parametrize("delta", [0.0, 1e-6])
@pytest.mark.parametrize("epsilon", [0.05, 2.0])
def test_the_release_reads_the_counts_only(epsilon, delta):
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(100, 30, 600), rng.lognormal(0, 4, 600),
                         rng.normal(0, 1e-12, 600), -rng.exponential(1e20, 600)])
    X[:40, 1], X[40:45, 3] = np.inf, -np.inf
    X[::50, 0] = np.nan
    Y = _same_bins(X, rng)
    assert not np.array_equal(np.nan_to_num(X), np.nan_to_num(Y))
    np.testing.assert_array_equal(_bin_counts(X), _bin_counts(Y))
    releases = []
    for data in (X, Y):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = _bounds_release(data, epsilon=epsilon, delta=delta,
                                  rng=np.random.default_rng(4), n_targets=1)
        releases.append((out, [(w.category, str(w.message)) for w in caught]))
    (a, wa), (b, wb) = releases
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert wa == wb
