"""Decision trees with differential privacy."""

from ._classes import DPDecisionTreeClassifier

__all__ = ["DPDecisionTreeClassifier"]
