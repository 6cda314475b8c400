"""A public bound on the L2 norm of a row, shared by the linear models that take ``data_norm``."""

import math
import numbers

import numpy as np

__all__ = ["check_data_norm", "clip_row_norms"]


def check_data_norm(data_norm, *, name="data_norm"):
    """Return ``data_norm`` as a float, finite and > 0.

    Raises ``TypeError`` if it is not a real number (a bool is not), and
    ``ValueError`` if it is not finite or not > 0.
    """
    if isinstance(data_norm, (bool, np.bool_)) or not isinstance(data_norm, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(data_norm).__name__}.")
    if not (0 < float(data_norm) < math.inf):
        raise ValueError(f"{name} must be finite and > 0; got {data_norm!r}.")
    return float(data_norm)


def clip_row_norms(X, data_norm):
    """Scale each row of ``X`` down to L2 norm at most ``data_norm`` (rows within it are kept).

    Row i is multiplied by ``min(1, data_norm / ||x_i||)``: it keeps its
    direction, and every entry's magnitude only shrinks (so a row inside a box
    around 0 stays inside it). A row of norm 0 is left as it is. Returns a new
    array.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model._row_norm import clip_row_norms
    >>> clip_row_norms(np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]]), 1.0).tolist()
    [[0.6000000000000001, 0.8], [0.3, 0.4], [0.0, 0.0]]
    """
    with np.errstate(over="ignore"):  # overflowing rows are handled below
        norms = np.linalg.norm(X, axis=1)
    over = norms > data_norm
    scale = np.ones_like(norms)
    scale[over] = data_norm / norms[over]  # min(1, D/||x||) without dividing by a zero norm
    huge = np.isinf(norms)  # a finite row whose squared norm overflows (entries ≳ 1e154)
    if huge.any():  # D/||x|| as (D/peak)/||x/peak||, which keeps the row's direction
        peak = np.max(np.abs(X[huge]), axis=1)
        scale[huge] = (data_norm / peak) / np.linalg.norm(X[huge] / peak[:, None], axis=1)
    return X * scale[:, None]
