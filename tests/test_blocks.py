"""skdp.utils._blocks: row blocks, the clip, and passes shared among threads."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from skdp.utils import _blocks


def test_row_blocks_cover_the_rows_once_in_order():
    blocks = list(_blocks.row_blocks(1001, 10, block_bytes=8 * 10 * 100))
    assert [(b.start, b.stop) for b in blocks] == [(i, min(i + 100, 1001)) for i in
                                                   range(0, 1001, 100)]
    assert list(_blocks.row_blocks(3, 1000, block_bytes=8)) == [slice(0, 1), slice(1, 2),
                                                                slice(2, 3)]


@pytest.mark.parametrize("lower, upper", [(-1.0, 2.0), (np.array([-1.0, 0.0, 0.5]),
                                                         np.array([2.0, 0.1, 3.0]))])
def test_clip_block_is_numpy_clip(lower, upper):
    block = np.random.default_rng(0).normal(size=(50, 3)) * 2
    out = np.empty_like(block)
    assert _blocks.clip_block(block, lower, upper, out) is out
    np.testing.assert_array_equal(out, np.clip(block, lower, upper))
    assert _blocks.scalar_if_equal(np.full(3, 2.5)) == 2.5
    assert _blocks.scalar_if_equal(np.array([1.0, 2.0])).shape == (2,)


def test_map_blocks_gives_the_results_in_block_order_whatever_the_threads(monkeypatch):
    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 8 * 2 * 7)  # 7 rows of 2 columns a block
    X = np.random.default_rng(0).normal(size=(100, 2))

    def run(blocks):
        return [(rows.start, X[rows].sum(axis=0)) for rows in blocks]

    one = _blocks.map_blocks(run, *X.shape, threads=1)
    assert [start for start, _ in one] == list(range(0, 100, 7))
    for threads in (2, 3, 20):
        out = _blocks.map_blocks(run, *X.shape, threads=threads)
        assert [start for start, _ in out] == [start for start, _ in one]
        assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(out, one))
    with threadpool_limits(1):
        assert _blocks.n_threads() == 1
