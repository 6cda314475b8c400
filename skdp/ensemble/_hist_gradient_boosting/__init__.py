"""Histogram gradient boosting with differential privacy."""

from .gradient_boosting import DPHistGradientBoostingClassifier, DPHistGradientBoostingRegressor

__all__ = ["DPHistGradientBoostingClassifier", "DPHistGradientBoostingRegressor"]
