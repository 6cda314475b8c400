"""Privacy review of the DP-SGD engine: regressions for confirmed bugs.

Overflow in the ghost norm. The per-example squared norm is computed as
``|g_i|^2 (|a_i|^2 + 1)``. For a finite row with entries around 1e155 or
more, ``|a_i|^2`` overflows to inf; when that row's output gradient is
exactly 0 (a confidently correct prediction under log-loss or hinge), the
product is ``0 * inf = NaN``, the clip factor ``min(1, C / NaN)`` is NaN, and
the re-weighted backward pass turns the whole batch's gradient sum, hence
every parameter, into NaN. One (finite, so validated) row then decides
whether the released model is NaN: its contribution is not bounded by
``clip_norm``, and the privacy loss is unbounded.

Fixed: ``clipped_gradient_sum`` leaves a row whose squared norm is not finite
out of the re-weighted pass (a dropped row contributes 0, within
``clip_norm``). These tests failed before the fix.
"""

import numpy as np

from skdp._dpsgd import DenseNetwork, clipped_gradient_sum, make_loss
from skdp.linear_model import DPSGDClassifier


# Two finite rows of opposite sign, both labelled 1: whatever the weights, one
# of them has a score of about +1e200, so sigmoid(f) - y is exactly 0 there.
_BIG_ROWS = np.array([[1e200, 1e200], [-1e200, -1e200]])


def test_one_huge_row_moves_the_clipped_sum_by_at_most_clip_norm():
    rng = np.random.default_rng(0)
    network = DenseNetwork((2, 1), "relu", rng)
    loss = make_loss("log_loss_binary")
    X = rng.normal(size=(20, 2))
    Y = rng.integers(0, 2, size=(20, 1)).astype(float)
    clip_norm = 1.0
    without = clipped_gradient_sum(network, loss, X, Y, clip_norm)
    for row in _BIG_ROWS:
        with np.errstate(all="ignore"):
            with_row = clipped_gradient_sum(
                network, loss, np.vstack([X, row]), np.vstack([Y, [[1.0]]]), clip_norm
            )
        assert np.all(np.isfinite(with_row))
        # add/remove sensitivity of the sum of clipped gradients
        assert np.linalg.norm(with_row - without) <= clip_norm * (1 + 1e-12)


def test_dpsgd_classifier_model_stays_finite_with_a_huge_finite_row():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(500, 2))
    y = (X[:, 0] > 0).astype(int)
    X = np.vstack([X, _BIG_ROWS])
    y = np.concatenate([y, [1, 1]])
    clf = DPSGDClassifier(
        epsilon=1.0, delta=1e-5, classes=[0, 1], sampling_rate=0.1, batch_size=50,
        max_iter=2, random_state=0,
    )
    with np.errstate(all="ignore"):
        clf.fit(X, y)
    # Without the two rows every parameter is finite; with them the release must be too.
    assert np.all(np.isfinite(clf.coef_)) and np.all(np.isfinite(clf.intercept_))
