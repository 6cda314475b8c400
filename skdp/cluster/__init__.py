"""Differentially private clustering: :class:`DPKMeans`."""

from ._kmeans import DPKMeans

__all__ = ["DPKMeans"]
