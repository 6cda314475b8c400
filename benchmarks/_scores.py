"""Scores of unsupervised models on held-out rows, shared by the benchmarks (numpy only)."""

import numpy as np


def captured(X, components):
    """Sum over the components v of vᵀ Σ v, Σ the covariance of X (rows orthonormalised)."""
    q, _ = np.linalg.qr(np.asarray(components).T)
    Xc = X - X.mean(axis=0)
    return float(np.sum((Xc @ q) ** 2) / (len(X) - 1))


def inertia(X, centers):
    """Sum over the rows of X of the squared distance to the nearest centre."""
    centers = np.asarray(centers, dtype=float)
    d = (np.einsum("ij,ij->i", X, X)[:, None] - 2 * X @ centers.T
         + np.einsum("ij,ij->i", centers, centers)[None])
    return float(np.maximum(d, 0).min(axis=1).sum())
