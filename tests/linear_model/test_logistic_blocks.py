"""DPLogisticRegression walks X by blocks of rows: no copy of X, the same model as the dense design."""

import math
import tracemalloc

import numpy as np
import pytest

import skdp.linear_model._logistic as logistic_module
from skdp.linear_model import DPLogisticRegression
from skdp.linear_model._row_norm import RowClipper, clip_row_norms, row_norm_scales, rows_at_norm


def _data(n, d, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, n_classes, n)
    return X, y


@pytest.mark.parametrize("params", [dict(data_norm=1.0), dict(bounds_X=(-1.0, 1.0)), dict()])
def test_fit_never_copies_X(params):
    # The data is 8 MB; what a fit allocates besides it is O(n) vectors (the row
    # factors, the labels, their one-hot 0/1 column: 0.4 MB each) and a few
    # temporaries of one block of rows (4096 x 20 floats, 0.66 MB each): measured
    # 1.1 to 2.4 MB. A copy of X alone would be 8 MB (the dense design peaked at 17 MB).
    X, y = _data(50_000, 20)
    est = DPLogisticRegression(epsilon=1.0, classes=[0, 1], max_iter=2, random_state=0, **params)
    tracemalloc.start()
    try:
        est.fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 0.5 * X.nbytes


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("intercept", [True, False])
def test_block_gradient_equals_the_dense_design(n_classes, intercept):
    # Box clip, centre and norm clip all active; 10,000 rows span three blocks.
    X, y = _data(10_000, 4, n_classes=n_classes)
    clipper = RowClipper(lower=np.full(4, -1.5), upper=np.full(4, 2.0), centre=np.full(4, 0.25),
                         data_norm=1.2)
    design = logistic_module._Design(X, clipper, intercept)
    dense = design.copy()
    assert dense.shape == design.shape == (10_000, 4 + intercept)
    np.testing.assert_array_equal(dense[:, :4], clipper.centred(X))
    Y = np.eye(n_classes)[y][:, 1:] if n_classes == 2 else np.eye(n_classes)[y]
    W = np.random.default_rng(1).normal(size=(dense.shape[1], Y.shape[1]))

    binary = n_classes == 2
    grad, total = design.gradient(W, Y, binary, with_loss=True)
    R, loss = logistic_module._block_residual(dense @ W, Y, binary, True)
    # Sums of 10,000 terms of size at most about 3: round-off far below 1e-9.
    np.testing.assert_allclose(grad, dense.T @ R, rtol=0, atol=1e-9)
    assert total == pytest.approx(float(loss), rel=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("intercept", [True, False])
def test_a_row_of_huge_entries_is_clipped_before_any_product(n_classes, intercept):
    # One finite row of entries near the float64 limit: x·w of the unclipped row overflowed to
    # inf, times its tiny clip factor gave NaN, and the whole model came out NaN (one row
    # deciding the output: no privacy at any epsilon). The fit is a function of the clipped
    # rows alone, so the huge row must fit as its clipped version (direction times the bound).
    X, y = _data(5_000, 8, n_classes=n_classes)
    X[0] = [1.7e308] * 3 + [-1.7e308] * 5
    clipped = X.copy()
    clipped[0] = rows_at_norm(X[:1], 1.0)
    assert np.linalg.norm(clipped[0]) == pytest.approx(1.0, rel=1e-15)
    fits = [DPLogisticRegression(epsilon=1.0, data_norm=1.0, fit_intercept=intercept,
                                 classes=list(range(n_classes)), random_state=0).fit(A, y)
            for A in (X, clipped)]
    assert np.isfinite(fits[0].coef_).all() and np.isfinite(fits[0].intercept_).all()
    np.testing.assert_allclose(fits[0].coef_, fits[1].coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fits[0].intercept_, fits[1].intercept_, rtol=1e-9, atol=1e-12)


def test_clip_factors_of_huge_rows_keep_the_bound_exactly():
    # A norm of 9e307 against a bound of 2^-20 has a subnormal factor (about 1e-314): the
    # clipped row is computed as direction times the bound instead, to the last bits.
    X = np.array([[9e307, 1.0], [1.7e308, -1.7e308], [3.0, 4.0]])
    norms = np.linalg.norm(clip_row_norms(X, 2.0**-20), axis=1)
    np.testing.assert_allclose(norms, 2.0**-20, rtol=1e-15)


def test_float32_input_is_read_exactly_as_float64():
    # Blocks of float32 rows are converted to float64 exactly: the same model as the
    # float64 array of the same values, without an upcast copy of X.
    X, y = _data(6000, 5)
    X32 = X.astype(np.float32)
    fits = [DPLogisticRegression(epsilon=1.0, bounds_X=(-2.0, 2.0), classes=[0, 1],
                                 random_state=0).fit(Z, y) for Z in (X32, X32.astype(np.float64))]
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    np.testing.assert_array_equal(fits[0].intercept_, fits[1].intercept_)
    np.testing.assert_array_equal(fits[0].decision_function(X32), fits[1].decision_function(X32))


def test_epsilon_inf_with_float32_matches_float64():
    X, y = _data(3000, 3)
    X32 = X.astype(np.float32)
    a = DPLogisticRegression(epsilon=math.inf).fit(X32, y)
    b = DPLogisticRegression(epsilon=math.inf).fit(X32.astype(np.float64), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("first", ["gram", "gradient"])
def test_the_first_pass_fills_the_clip_factors(first):
    # The factors s_i are computed block by block by the first pass over X, Gram or
    # gradient: they equal the clipper's own, and the passes after it give what it gave.
    X, y = _data(10_000, 4, n_classes=2)
    X[5] = 1e200  # a wide row, clipped before its products
    clipper = RowClipper(centre=np.full(4, 0.25), data_norm=1.2)
    design = logistic_module._Design(X, clipper, True)
    W = np.random.default_rng(1).normal(size=(5, 1))
    Y = (np.asarray(y) == 1).astype(float)[:, None]

    before = design.gram() if first == "gram" else design.gradient(W, Y, True)[0]
    np.testing.assert_array_equal(design.scales, row_norm_scales(X - clipper.centre, 1.2))
    np.testing.assert_array_equal(design.wide, np.arange(10_000) == 5)
    after = design.gram() if first == "gram" else design.gradient(W, Y, True)[0]
    np.testing.assert_array_equal(before, after)
