"""Passes over the rows of a 2-D array in blocks of a few megabytes, so that no full copy is made.

A fit that clips or centres its rows before summing them works on one block
at a time, in one buffer reused for every block: its memory stays bounded
by the block's size, and the block stays in the processor's cache between
the clip and the products that follow.
"""

from __future__ import annotations

import numpy as np

__all__ = []  # internal

# About 2 MB of float64 a block: measured on benchmarks/bench_decomposition.py --speed and
# benchmarks/bench_kmeans.py --speed (docs/benchmarks.md); 0.5 and 8 MB were no faster.
BLOCK_BYTES = 2 ** 21


def row_blocks(n_rows, n_cols, block_bytes=None):
    """Slices of consecutive rows of an ``(n_rows, n_cols)`` float64 array, ``block_bytes`` each.

    ``None`` reads :data:`BLOCK_BYTES` at the call.

    Examples
    --------
    >>> from skdp.utils._blocks import row_blocks
    >>> list(row_blocks(5, 1, block_bytes=16))
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    """
    if block_bytes is None:
        block_bytes = BLOCK_BYTES
    step = max(1, block_bytes // (8 * max(n_cols, 1)))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def scalar_if_equal(values):
    """``values[0]`` if every entry of the 1-D ``values`` is equal to it, else ``values``.

    A bound equal over the columns, applied as a scalar, lets numpy run one
    loop over a block instead of one per row; the result is the same.
    """
    return values[0] if values.size and np.all(values == values[0]) else values


def clip_block(block, lower, upper, out):
    """``np.clip(block, lower, upper)`` written into ``out[:len(block)]``, which is returned."""
    out = out[:len(block)]
    np.maximum(block, lower, out=out)
    np.minimum(out, upper, out=out)
    return out
