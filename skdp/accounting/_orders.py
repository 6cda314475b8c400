"""The grid of Rényi orders shared by the whole package."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .._typing import ArrayLike, FloatArray

__all__ = ["DEFAULT_ORDERS", "check_orders"]


def _reference_grid():
    # The reference grid of the privacy-accounting literature (TF Privacy, Opacus):
    # 1.1, 1.2, ..., 10.9, then 11, 12, ..., 63, then 128, 256, 512, 1024.
    fractional = np.round(np.arange(11, 110) / 10.0, 1)
    integers = np.arange(11, 64, dtype=float)
    large = np.array([128.0, 256.0, 512.0, 1024.0])
    return np.concatenate([fractional, integers, large])


DEFAULT_ORDERS = _reference_grid()
DEFAULT_ORDERS.setflags(write=False)


def check_orders(orders: ArrayLike | None = None) -> FloatArray:
    """Return a validated, sorted, read-only float array of Rényi orders.

    Parameters
    ----------
    orders : array-like of float or None
        Orders α > 1. ``None`` gives :data:`DEFAULT_ORDERS`.

    Returns
    -------
    orders : ndarray of shape (n_orders,)

    Examples
    --------
    >>> from skdp.accounting import check_orders
    >>> check_orders([2, 4, 8]).tolist()
    [2.0, 4.0, 8.0]
    >>> float(check_orders()[0]), float(check_orders()[-1])
    (1.1, 1024.0)
    """
    if orders is None:
        return DEFAULT_ORDERS
    arr = np.asarray(orders, dtype=float)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("orders must be a non-empty 1-D array of floats > 1.")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 1):
        raise ValueError(f"Every Rényi order must be finite and > 1; got {arr!r}.")
    arr = np.unique(arr)
    arr.setflags(write=False)
    return arr
