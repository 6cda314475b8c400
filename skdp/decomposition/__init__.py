"""Differentially private matrix decomposition: :class:`DPPCA`."""

from ._pca import DPPCA

__all__ = ["DPPCA"]
