"""Passes over the rows of a 2-D array in blocks of a few megabytes, so that no full copy is made.

A fit that clips or centres its rows before summing them works on one block
at a time, in one buffer reused for every block of a run: its memory stays
bounded by the block's size, and the block stays in the processor's cache
between the clip and the products that follow. :func:`map_blocks` shares
the blocks among threads, as scikit-learn's k-means shares its chunks (with
one BLAS thread each); the results come back in block order, so sums added
in that order do not depend on the number of threads.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = []  # internal

# About 2 MB of float64 a block (a processor's L2 cache here). Blocks of 0.25, 0.5, 1 and 2 MB
# gave the same CPU time (within 15%) for DPPCA's two passes over 3·10^5 x 50 rows on one
# thread; the speed against scikit-learn is in docs/benchmarks.md (the --speed options).
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
    """``np.clip(block, lower, upper)`` written into ``out`` (which may be ``block``); returns it."""
    if np.ndim(lower) == 0 and np.ndim(upper) == 0:
        return np.clip(block, lower, upper, out=out)
    np.maximum(block, lower, out=out)
    return np.minimum(out, upper, out=out)


_CONTROLLER = []  # threadpoolctl's controller of the loaded libraries, made at the first pass


def _controller():
    if not _CONTROLLER:  # finding the libraries reads the process's maps (ms): once
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def n_threads():
    """The threads a pass may use: BLAS's (threadpoolctl's limits or the environment), ≤ CPUs."""
    blas = _controller().select(user_api="blas").lib_controllers
    counts = [lib.num_threads for lib in blas]  # asked of each library now
    return max(1, min(min(counts, default=1), os.cpu_count() or 1))


def map_blocks(func, n_rows, n_cols, threads=None, block_bytes=None):
    """``func(blocks)`` on runs of consecutive row blocks, one run per thread; results in order.

    ``func`` takes a list of slices (:func:`row_blocks` of ``block_bytes``)
    and returns a list of one result per slice. With several threads
    (``None``: :func:`n_threads`) each runs ``func`` on its run of blocks
    with BLAS held to one thread (numpy releases the GIL in its loops and
    products).
    """
    blocks = list(row_blocks(n_rows, n_cols, block_bytes))
    if len(blocks) < 2:
        return func(blocks)
    threads = min(n_threads() if threads is None else threads, len(blocks))
    if threads <= 1:
        return func(blocks)
    runs = [list(run) for run in np.array_split(np.array(blocks, dtype=object), threads)]
    with _controller().limit(limits=1, user_api="blas"), ThreadPoolExecutor(threads) as pool:
        parts = list(pool.map(func, runs))
    return [result for part in parts for result in part]
