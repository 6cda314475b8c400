"""Ensembles of trees with differential privacy."""

from ._forest import DPRandomForestClassifier
from ._hist_gradient_boosting import (
    DPHistGradientBoostingClassifier,
    DPHistGradientBoostingRegressor,
)

__all__ = [
    "DPHistGradientBoostingClassifier",
    "DPHistGradientBoostingRegressor",
    "DPRandomForestClassifier",
]
