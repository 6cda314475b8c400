"""Differentially private descriptive statistics on arrays.

``count``, ``sum``, ``mean``, ``var``, ``std``, ``histogram``,
``histogram2d``, ``histogramdd``, ``quantile``, ``percentile``, ``median``
and the NaN-aware ``nansum``, ``nanmean``, ``nanvar``, ``nanstd``, ``nanquantile`` and
``nanmedian`` mirror numpy's
signatures and add the keyword-only ``epsilon``, ``delta``, ``bounds``,
``budget``, ``random_state`` and ``secure``. ``bounds`` releases private
bounds of each column when none are public. Each call charges ``budget``
once with its exact RDP curve before reading the data. Estimators that
compose several statistics use the internal curve/release pairs documented
in :mod:`skdp.stats._noise`.
"""

from ._functions import (
    count,
    histogram,
    histogram2d,
    histogramdd,
    mean,
    median,
    quantile,
    std,
    sum,
    var,
)
from ._nan import nanmean, nanmedian, nanquantile, nanstd, nansum, nanvar, percentile
from ._range import bounds

__all__ = [
    "bounds",
    "count",
    "histogram",
    "histogram2d",
    "histogramdd",
    "mean",
    "median",
    "nanmean",
    "nanmedian",
    "nanquantile",
    "nanstd",
    "nansum",
    "nanvar",
    "percentile",
    "quantile",
    "std",
    "sum",
    "var",
]
