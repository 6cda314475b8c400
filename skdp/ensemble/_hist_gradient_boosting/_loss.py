"""The boosting's losses and raw scores, row by row: the same arithmetic in memory and in chunks.

A fit in memory keeps each row's raw score and updates it tree by tree; a fit
on dask recomputes it in each chunk at each pass (:mod:`._passes`). Both add
the baseline and the trees' leaf values in the same order and apply the same
element-wise functions, so each row's gradient is the same float either way.
"""

import numpy as np
from scipy.special import expit, softmax

__all__ = ["GRADIENT_CLIP", "log_loss_gradients", "one_hot", "raw_scores", "scaled_target",
           "squared_gradients"]

# The regressor's bound on each row's gradient F − y (the target scaled to [0, 1] by
# bounds_y): the split score's and the leaf gradient sums' sensitivity, so their noise, is
# 4 times smaller than with the whole [−1, 1]; a larger residual pulls with 1/4 (the
# gradient of the Huber loss with δ = range/4). Measured with benchmarks/bench_trees.py's
# loaders at ε = 1 (8 seeds), every regression table of the suite, bound 1 / 0.5 / 0.25 /
# 0.125: diamonds R² 0.958 / 0.963 / 0.967 / 0.967, loans 0.191 / 0.240 / 0.260 / 0.258,
# weather 0.798 / 0.853 / 0.876 / 0.848; 0.25 against 1 at ε = 0.1 and 5 (4 seeds): at or
# above on each (docs/benchmarks.md).
GRADIENT_CLIP = 0.25


def raw_scores(binned, baseline, predictors):
    """Each row's raw scores (n, n_trees): the baseline plus every round's trees, in order."""
    raw = np.tile(baseline, (binned.shape[0], 1))
    for round_trees in predictors:
        for k, tree in enumerate(round_trees):
            raw[:, k] += tree.predict(binned)
    return raw


def one_hot(label, n_trees, n_classes):
    """One column per tree: the class indicators, the second class's alone with two classes.

    A label index outside 0..n_classes − 1 (a dask graph whose values changed
    after the checks) gets a row of zeros: a row of no class, whose gradients
    stay within their bounds.
    """
    columns = np.arange(1 if n_trees == 1 else 0, n_classes)
    return (label[:, None] == columns[None, :]).astype(float)


def log_loss_gradients(raw, Y, prob=None, hess=None):
    """Gradients p − Y and hessians p·(1 − p) of the log loss (sigmoid if one column, softmax).

    ``prob`` and ``hess``, when given, are arrays of Y's shape that receive them.
    """
    if prob is None:
        prob, hess = np.empty(Y.shape), np.empty(Y.shape)
    if Y.shape[1] == 1:
        expit(raw, out=prob)
    else:
        prob[...] = softmax(raw, axis=1)
    np.subtract(1.0, prob, out=hess)
    np.multiply(hess, prob, out=hess)  # p·(1 − p)
    return np.subtract(prob, Y, out=prob), hess


def scaled_target(y, bounds_y):
    """The regression target clipped to ``bounds_y`` and scaled to [0, 1] (as it is without)."""
    if bounds_y is None:
        return y
    offset, scale = bounds_y[0], (bounds_y[1] - bounds_y[0]) or 1.0
    return (np.clip(y, *bounds_y) - offset) / scale


def squared_gradients(raw, target, private):
    """Gradients F − y of the squared error (clipped to ±GRADIENT_CLIP if private); hessians 1."""
    residual = raw - target[:, None]
    if private:  # each row's gradient clipped: sensitivity GRADIENT_CLIP
        residual = np.clip(residual, -GRADIENT_CLIP, GRADIENT_CLIP)
    return residual, np.ones_like(raw)
