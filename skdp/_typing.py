"""Type aliases of skdp's public signatures.

Modules import these under ``typing.TYPE_CHECKING`` with
``from __future__ import annotations``, so that annotations cost nothing at
import (``numpy.typing`` alone takes tens of milliseconds on older numpy).
"""

from typing import Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ArrayLike", "FloatArray", "FloatOrArray", "NDArray", "RandomStateLike"]

#: What ``random_state`` accepts: None (fresh OS entropy), an int seed, a
#: ``numpy.random.Generator`` (used as is) or a legacy ``RandomState``.
RandomStateLike = Union[None, int, np.random.Generator, np.random.RandomState]

#: An array of floats.
FloatArray = NDArray[np.float64]

#: A float for a scalar result, else an array of floats.
FloatOrArray = Union[float, NDArray[np.float64]]
