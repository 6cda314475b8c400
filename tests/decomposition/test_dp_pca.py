import math

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp import PrivacyBudget
from skdp.accounting import calibrate_noise_multiplier, gaussian_rdp, laplace_rdp
from skdp.decomposition import DPPCA
from skdp import privacy_cost
from skdp.decomposition._pca import (
    LAPLACE_SHARES,
    NORM_BINS,
    PCA_BOUNDS_SHARE,
    clip_rows,
    l1_norm_bound,
    noise_scales,
    _centre_and_norm,
    _norm_counts_pass,
    _norm_from_counts,
    _norms_moments_pass,
    clipped_blocks,
    guess_norm,
    moments,
    norm_counts,
    release_norm,
    scale_down_long_rows,
    shrink_rows,
)
from skdp.decomposition import _pca
from skdp.utils import _blocks
from skdp.stats._noise import _noise_multiplier
from skdp.stats._range import split_curve
from _testing import (
    assert_bad_input_costs_nothing,
    assert_charges_once,
    assert_refused_fit_fits_nothing,
    assert_same_curve,
)

B = (-10.0, 10.0)
SCALES = np.array([3.0, 1.0, 0.3])


@parametrize_with_checks(
    [DPPCA(), DPPCA(epsilon=math.inf), DPPCA(bounds=B, random_state=0),
     DPPCA(bounds=B, whiten=True, epsilon=math.inf), DPPCA(whiten=True, random_state=0)],
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(n=20_000, seed=0):
    return np.random.default_rng(seed).normal(size=(n, 3)) * SCALES


@pytest.mark.parametrize("whiten", [False, True])
@pytest.mark.parametrize("bounds", [None, (-50.0, 50.0)])
def test_epsilon_inf_matches_sklearn(whiten, bounds):
    X = _data(500)
    ours = DPPCA(n_components=2, whiten=whiten, bounds=bounds, epsilon=math.inf).fit(X)
    ref = PCA(n_components=2, whiten=whiten, svd_solver="full").fit(X)
    for name in ["components_", "explained_variance_", "explained_variance_ratio_",
                 "singular_values_", "mean_", "noise_variance_"]:
        np.testing.assert_allclose(getattr(ours, name), getattr(ref, name), rtol=1e-12,
                                   atol=1e-12)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), atol=1e-10)
    Z = ref.transform(X[:5])
    np.testing.assert_allclose(ours.inverse_transform(Z), ref.inverse_transform(Z), atol=1e-10)
    assert ours.epsilon_spent_ == math.inf


def test_charged_curve_comes_from_parameters_not_data():
    z = calibrate_noise_multiplier(0.7, 1e-5)
    expected = gaussian_rdp(z)
    est = DPPCA(n_components=2, bounds=B, epsilon=0.7, delta=1e-5)
    a = assert_charges_once(est, _data(3000, 0), expected_curve=expected)
    b = assert_charges_once(est, _data(50, 1) * 4, expected_curve=expected)
    assert a.epsilon_spent_ == pytest.approx(0.7, rel=1e-4)
    assert b.epsilon_spent_ == a.epsilon_spent_
    # private bounds: PCA_BOUNDS_SHARE of epsilon to the bounds, composed in the one charge
    *_, split = split_curve(0.7, 1e-5, 3, lambda e: gaussian_rdp(_noise_multiplier(e, 1e-5)),
                            share=PCA_BOUNDS_SHARE)
    c = assert_charges_once(DPPCA(epsilon=0.7), _data(3000, 2), expected_curve=split)
    assert c.epsilon_spent_ <= 0.7 * (1 + 1e-9)
    # the curve read before the fit is the one charged
    for est, curve in [(DPPCA(n_components=2, bounds=B, epsilon=0.7), expected),
                       (DPPCA(epsilon=0.7), split), (DPPCA(epsilon=0.7, delta=0.0), None)]:
        before = privacy_cost(est, _data(50))
        fitted = est.fit(_data(3000, 3))
        assert_same_curve(fitted.privacy_curve_, before.curve)
        if curve is not None:
            assert_same_curve(before.curve, curve)
        assert before.epsilon == pytest.approx(fitted.epsilon_spent_, rel=1e-12)


def test_released_norm_is_a_noisy_quantile_of_the_norms():
    rng = np.random.default_rng(0)
    edges = 16.0 * 2.0 ** (-np.arange(NORM_BINS + 1) / 4.0)
    # without noise: the smallest edge with at most 10% of the rows above it
    def released(norms, std):
        return release_norm(norm_counts(norms, 16.0), 16.0, std, rng)

    assert released(np.r_[np.full(950, 3.0), np.full(50, 15.0)], 0.0) == edges[9]  # 2.83 < 3
    # 20% above: no edge below 15
    assert released(np.r_[np.full(800, 3.0), np.full(200, 15.0)], 0.0) == 16.0
    assert released(np.zeros(1000), 0.0) == edges[-1]  # every row in the last bin
    # with noise it stays among the edges, and a row moves one count by one (sensitivity 1)
    assert released(np.zeros(1000), 30.0) in edges
    assert norm_counts(np.r_[np.zeros(3), edges], 16.0).tolist() == [1] * NORM_BINS + [4]
    norms = np.r_[np.linspace(0, 16, 200), edges]
    index = NORM_BINS - np.searchsorted(edges[:0:-1], norms, side="left")
    inside = np.where(index < NORM_BINS, edges[np.minimum(index, NORM_BINS - 1) + 1], 0.0)
    assert np.all((norms > inside) | (index == NORM_BINS))
    assert np.all(norms <= edges[index])
    above = np.r_[norms, 17.0, 1e300]  # above C0 (round-off): bin 0, as the search put them
    index = NORM_BINS - np.searchsorted(edges[:0:-1], above, side="left")
    np.testing.assert_array_equal(norm_counts(above, 16.0),
                                  np.bincount(index, minlength=NORM_BINS + 1))


def test_off_diagonal_noise_is_half_the_variance_and_dead_columns_get_none():
    # Rows all at the box's centre: the released moments are the noise alone.
    X = np.zeros((4000, 4))
    bounds = (np.array([-1.0, -1.0, -1.0, 2.0]), np.array([1.0, 1.0, 1.0, 2.0]))
    diag, off, dead = [], [], []
    for seed in range(300):
        est = DPPCA(bounds=bounds, epsilon=1.0, random_state=seed)
        est.bounds_ = bounds
        _, _, C = clip_rows(X, bounds, None)
        M, sums, _ = est._gauss_moments(X, bounds, None, C, 1.0, np.random.default_rng(seed))
        diag.extend(np.diag(M)[:3])
        off.extend(M[np.triu_indices(3, 1)])
        dead.extend(np.r_[M[3], M[:, 3], sums[3]])
        assert np.array_equal(M, M.T)
    assert np.var(off) / np.var(diag) == pytest.approx(0.5, rel=0.15)
    assert not np.any(dead)


def test_goal_on_digits_at_epsilon_one():
    """Issue 26: the default DPPCA keeps ≥ 0.8 of scikit-learn's held-out variance (d = 64).

    Over 30 seeds one fit captures 0.91 ± 0.02 (k = 2) and 0.832 ± 0.014
    (k = 5, lowest 0.80), so the mean of 5 seeds has an sd of about 0.006 and
    sits 5 of them above 0.8 at k = 5 (k = 10: 0.78 ± 0.014, not asserted).
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, X_test = train_test_split(load_digits().data, test_size=0.25, random_state=0)
    Xc = X_test - X_test.mean(axis=0)

    def captured(components):
        q, _ = np.linalg.qr(components.T)
        return float(np.sum((Xc @ q) ** 2))

    for k in (2, 5):
        ref = captured(PCA(k, svd_solver="full").fit(X).components_)
        ratios = [captured(DPPCA(k, epsilon=1.0, random_state=seed).fit(X).components_) / ref
                  for seed in range(5)]
        assert np.mean(ratios) >= 0.8, (k, ratios)


def test_bad_input_costs_nothing():
    X = _data(200)
    bad_X = X.copy()
    bad_X[3, 1] = np.nan
    inf_X = X.copy()
    inf_X[0, 0] = np.inf
    assert_bad_input_costs_nothing(
        DPPCA(bounds=B), X,
        bad_params=[{"epsilon": 0}, {"epsilon": -1.0}, {"epsilon": np.nan}, {"delta": -0.1},
                    {"delta": 1.0}, {"n_components": 0}, {"n_components": 4},
                    {"n_components": 1.5}, {"n_components": "mle"}, {"data_norm": -1.0},
                    {"data_norm": np.inf}, {"bounds": ([0, 0], [1, 1])}, {"bounds": (1, 0)},
                    {"whiten": "yes"}],
        bad_data=[(bad_X, None), (inf_X, None), (X[:, :, None], None), (np.empty((0, 3)), None)],
    )


def test_refused_fit_fits_nothing():
    assert_refused_fit_fits_nothing(DPPCA(bounds=B), _data(200))
    assert_refused_fit_fits_nothing(DPPCA(), _data(200))


def test_dp_fit_is_accurate():
    X = _data()
    pca = DPPCA(n_components=2, bounds=B, epsilon=1.0, random_state=0).fit(X)
    # Rows are scaled down to C, a private 0.8 quantile of their norms (about 4.3 here), so
    # the released variances are those of the rows as transform sees them. Noise std of a
    # covariance entry at most z·C²/(√(0.8·0.95)·n) = 3.73·19/(0.87·20000) ≈ 0.004, far below
    # the sampling sd 9·√(2/n) ≈ 0.09 of the top eigenvalue; the top component turns by
    # about 0.01 rad. Tolerances are 5 times those or more.
    ref = PCA(n_components=2, svd_solver="full").fit(pca._clip(X))
    assert 3.0 < pca.data_norm_ < 6.0
    np.testing.assert_allclose(pca.explained_variance_, ref.explained_variance_, atol=0.5)
    assert abs(pca.components_[0, 0]) > 0.99
    assert abs(pca.components_[1, 1]) > 0.95
    assert pca.components_[0, 0] > 0  # scikit-learn's sign: the largest entry positive
    np.testing.assert_allclose(pca.mean_, 0.0, atol=0.1)
    np.testing.assert_allclose(np.linalg.norm(pca.components_, axis=1), 1.0)
    # with a public data_norm nothing is clipped below it: the variances are the data's
    full = DPPCA(n_components=2, bounds=B, data_norm=20.0, epsilon=1.0, random_state=0).fit(X)
    assert abs(full.explained_variance_[0] - 9.0) < 0.6
    assert abs(full.explained_variance_[1] - 1.0) < 0.6


def test_fixed_seed_reproduces_and_seeds_differ():
    X = _data(2000)
    a = DPPCA(bounds=B, random_state=3).fit(X)
    b = DPPCA(bounds=B, random_state=3).fit(X)
    c = DPPCA(bounds=B, random_state=4).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert not np.array_equal(a.explained_variance_, c.explained_variance_)


def test_transform_scales_rows_to_the_released_norm():
    X = _data(2000)
    pca = DPPCA(bounds=(-10, 10), epsilon=1.0, random_state=0).fit(X)
    C = pca.data_norm_
    assert 1.0 < C < math.sqrt(300)  # a private quantile of norms far below the half-diagonal
    long = np.array([[9.0, 0.0, 0.0]])
    np.testing.assert_allclose(pca.transform(long), pca.transform(long * C / 9.0))
    short = np.array([[0.5, 0.2, 0.0]])
    np.testing.assert_allclose(pca.transform(short), (short - pca.mean_) @ pca.components_.T)


def test_transform_clips_rows_as_the_fit_did():
    X = _data(2000)
    pca = DPPCA(bounds=(-2, 2), data_norm=2.0, random_state=0).fit(X)
    far = np.array([[30.0, 0.0, 0.0]])
    np.testing.assert_allclose(pca.transform(far), pca.transform([[2.0, 0.0, 0.0]]))
    long = np.array([[2.0, 2.0, 0.0]])  # inside the box, norm 2.83 > data_norm
    np.testing.assert_allclose(pca.transform(long), pca.transform(long / math.sqrt(2)))


def test_float_n_components_and_pandas_output():
    pd = pytest.importorskip("pandas")
    X = _data(20_000)
    pca = DPPCA(n_components=0.85, bounds=B, random_state=0).fit(X)
    assert pca.n_components_ == 1  # ratios about 0.89, 0.10, 0.01
    out = DPPCA(n_components=2, bounds=B, random_state=0).set_output(transform="pandas") \
        .fit_transform(pd.DataFrame(X, columns=["a", "b", "c"]))
    assert list(out.columns) == ["dppca0", "dppca1"]


def test_budget_is_charged_once_per_fit():
    budget = PrivacyBudget(10.0, 1e-5)
    DPPCA(bounds=B, epsilon=1.0, budget=budget, random_state=0).fit(_data(500))
    assert len(budget) == 1


# delta=0: pure epsilon-DP, Laplace noise on the same vector


def test_delta_zero_charges_one_laplace_mechanism():
    expected = laplace_rdp(1 / 0.7)  # L1 sensitivity 1, scale 1/epsilon
    a = assert_charges_once(DPPCA(n_components=2, bounds=B, epsilon=0.7, delta=0), _data(3000),
                            expected_curve=expected)
    assert (a.epsilon_spent_, a.delta_spent_) == (pytest.approx(0.7, rel=1e-12), 0.0)
    *_, split = split_curve(0.7, 0.0, 3, lambda e: laplace_rdp(1 / e))
    b = assert_charges_once(DPPCA(epsilon=0.7, delta=0), _data(3000, 2), expected_curve=split)
    assert b.epsilon_spent_ <= 0.7 * (1 + 1e-12) and b.delta_spent_ == 0.0


@pytest.mark.parametrize("data_norm", [None, 1.0, 2.5, 100.0])
def test_delta_zero_l1_sensitivity_holds_on_neighbours(data_norm):
    # Adding one row y moves the count by 1, the sums by y and the upper triangle by that of
    # yy^T; Laplace noise of scales b_p is eps-DP iff sum |change_p| / b_p <= eps.
    lower, upper = np.array([-1.0, 0.0, -3.0]), np.array([2.0, 1.0, 3.0])
    corners = np.array(np.meshgrid(*zip(lower, upper))).reshape(3, -1).T
    rows = np.vstack([corners, np.random.default_rng(0).uniform(-5, 5, size=(200, 3))])
    Y, _, C = clip_rows(rows, (lower, upper), data_norm)
    scales = noise_scales(0.0, 1 / 0.7, C, l1_norm_bound((lower, upper), data_norm, C))
    iu = np.triu_indices(3)
    moved = (1 / scales[0] + np.abs(Y).sum(axis=1) / scales[1]
             + np.abs(np.einsum("ni,nj->nij", Y, Y)[:, iu[0], iu[1]]).sum(axis=1) / scales[2])
    assert moved.max() <= 0.7 * (1 + 1e-12)
    if data_norm is None:  # a corner of the box reaches the bound
        assert moved.max() == pytest.approx(0.7, rel=1e-12)


def test_delta_zero_draws_laplace_of_those_scales():
    calls = []

    class Spy(np.random.Generator):
        def laplace(self, loc=0.0, scale=1.0, size=None):
            calls.append((scale, size))
            return super().laplace(loc, scale, size)

        def normal(self, *args, **kwargs):
            raise AssertionError("delta=0 draws no Gaussian noise")

    DPPCA(bounds=(-1, 2), epsilon=0.5, delta=0, random_state=Spy(np.random.PCG64(0))) \
        .fit(_data(100))
    S, C2 = 4.5, 3 * 1.5 ** 2  # the box's half-widths: sum and sum of squares
    w_count, w_sum, w_moment = LAPLACE_SHARES
    assert sorted(calls, key=str) == sorted([
        (pytest.approx((S * S + C2) / 2 / (w_moment * 0.5)), 6),
        (pytest.approx(1 / (w_count * 0.5)), None),
        (pytest.approx(S / (w_sum * 0.5)), 3)], key=str)
    assert sum(LAPLACE_SHARES) == pytest.approx(1.0, abs=1e-15)


def test_delta_zero_epsilon_inf_matches_sklearn():
    X = _data(500)
    ours = DPPCA(n_components=2, delta=0, epsilon=math.inf).fit(X)
    ref = PCA(n_components=2, svd_solver="full").fit(X)
    np.testing.assert_allclose(ours.components_, ref.components_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.explained_variance_, ref.explained_variance_, rtol=1e-12)


def test_delta_zero_fit_is_accurate():
    X = _data()
    pca = DPPCA(n_components=2, bounds=B, epsilon=1.0, delta=0, random_state=0).fit(X)
    # Laplace scale of a second moment (S² + C²)/(2·0.9) = (30² + 300)/1.8 ≈ 667, sd
    # √2·667 ≈ 943, so ≈ 0.047 per covariance entry (n = 20000): as Analyze Gauss's 0.063
    # in test_dp_fit_is_accurate, whose tolerances apply.
    assert abs(pca.explained_variance_[0] - 9.0) < 0.6
    assert abs(pca.explained_variance_[1] - 1.0) < 0.6
    assert abs(pca.components_[0, 0]) > 0.99
    assert abs(pca.components_[1, 1]) > 0.95
    np.testing.assert_allclose(pca.mean_, 0.0, atol=0.1)


@pytest.mark.parametrize("data_norm", [None, 1.5])
def test_blocks_give_the_rows_of_clip_rows_and_their_moments(monkeypatch, data_norm):
    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 8 * 3 * 7)  # 7 rows of 3 columns a block
    X = _data(100)
    bounds = (np.array([-2.0, -1.0, -0.5]), np.array([2.0, 1.5, 0.5]))
    Y, _, _ = clip_rows(X, bounds, data_norm)
    blocks = [(rows, block.copy()) for rows, block in clipped_blocks(X, bounds, data_norm)]
    assert [rows.stop - rows.start for rows, _ in blocks] == [7] * 14 + [2]
    np.testing.assert_array_equal(np.concatenate([block for _, block in blocks]), Y)
    gram, sums = moments(X, bounds, data_norm)
    np.testing.assert_allclose(gram, Y.T @ Y, rtol=1e-12)
    np.testing.assert_allclose(sums, Y.sum(axis=0), rtol=1e-12)
    # scaled down to a norm C from the norms of a first pass, as shrink_rows scales them
    norms = np.sqrt(np.einsum("ij,ij->i", Y, Y))
    gram, sums = moments(X, bounds, data_norm, 0.8, norms)
    Z = shrink_rows(Y.copy(), 0.8)
    assert np.sqrt(np.einsum("ij,ij->i", Z, Z)).max() <= 0.8 * (1 + 1e-12)
    np.testing.assert_allclose(gram, Z.T @ Z, rtol=1e-12)
    np.testing.assert_allclose(sums, Z.sum(axis=0), rtol=1e-12)


def _two_passes(X, bounds, C):
    """The norms' pass, then the moments of the rows scaled down to C in a second pass."""
    _, C0 = _centre_and_norm(bounds, None)
    norms, counts = _norm_counts_pass(X, bounds, C0)
    return norms, counts, *moments(X, bounds, None, C, norms)


@pytest.mark.parametrize("case", ["mixed", "all long", "none long", "one row", "a block and a row"])
def test_one_pass_and_its_correction_give_the_two_passes_sums(monkeypatch, case):
    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 8 * 3 * 7)  # 7 rows of 3 columns a block
    bounds = (np.array([-2.0, -1.0, -0.5]), np.array([2.0, 1.5, 0.5]))
    X, C = {"mixed": (_data(100), 0.8), "all long": (_data(100) + 5.0, 0.5),
            "none long": (_data(100) * 0.01, 0.8), "one row": (_data(1), 0.1),
            "a block and a row": (_data(8), 0.8)}[case]
    _, C0 = _centre_and_norm(bounds, None)
    norms, counts, gram, sums = _two_passes(X, bounds, C)
    share = np.mean(norms > C)
    assert {"mixed": 0 < share < 1, "all long": share == 1, "none long": share == 0,
            "one row": share == 1, "a block and a row": 0 < share < 1}[case]
    scale = len(X) * C0 * C0  # each row adds at most C0² to an entry
    for C_guess in (math.inf, C, 2.0 * C, C / 2.0, 1e-3):
        norms1, counts1, gram1, sums1 = _norms_moments_pass(X, bounds, C0, C_guess)
        np.testing.assert_array_equal(norms1, norms)
        np.testing.assert_array_equal(counts1, counts)
        gram1, sums1 = scale_down_long_rows(X, bounds, C, C_guess, norms1, gram1, sums1)
        np.testing.assert_allclose(gram1, gram, rtol=1e-12, atol=1e-14 * scale)
        np.testing.assert_allclose(sums1, sums, rtol=1e-12, atol=1e-14 * scale)


def _assert_gram(gram, Y):
    """``gram`` is YᵀY to the error bound of two sums of m products (Higham 2002, eq. 3.5)."""
    m = len(Y)
    gamma = m * np.finfo(float).eps / 2 / (1 - m * np.finfo(float).eps / 2)
    assert np.all(np.abs(gram - Y.T @ Y) <= 2 * gamma * (np.abs(Y).T @ np.abs(Y)))


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("n", [1, 7, 8, 100])  # one row, one block, a block and a row, 15 blocks
def test_one_pass_gives_the_direct_counts_and_moments(monkeypatch, threads, n):
    # The histogram is counted once per thread's run of blocks: the counts of all the norms;
    # and YᵀY and Σ y of the rows scaled down.
    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 8 * 3 * 7)  # 7 rows of 3 columns a block
    monkeypatch.setattr(_blocks, "n_threads", lambda: threads)
    X = _data(n) * 2.0
    bounds = (np.array([-2.0, -1.0, -0.5]), np.array([2.0, 1.5, 0.5]))
    Y, _, C0 = clip_rows(X, bounds, None)
    norms = np.sqrt(np.einsum("ij,ij->i", Y, Y))
    for C_guess in (math.inf, 0.8):
        norms1, counts, gram, sums = _norms_moments_pass(X, bounds, C0, C_guess)
        np.testing.assert_array_equal(norms1, norms)
        np.testing.assert_array_equal(counts, norm_counts(norms, C0))
        assert counts.sum() == n
        Z = shrink_rows(Y.copy(), C_guess)
        assert np.array_equal(gram, gram.T)
        _assert_gram(gram, Z)
        np.testing.assert_allclose(sums, Z.sum(axis=0), rtol=1e-12, atol=1e-15 * n)


def test_guess_is_the_noiseless_release_on_a_sample(monkeypatch):
    X = _data(1000)
    bounds = (np.full(3, -10.0), np.full(3, 10.0))
    _, C0 = _centre_and_norm(bounds, None)
    norms, counts = _norm_counts_pass(X, bounds, C0)
    assert guess_norm(X, bounds, C0) == _norm_from_counts(counts, C0)  # all rows: the rule
    assert guess_norm(X, bounds, C0) == release_norm(counts, C0, 0.0, np.random.default_rng())
    monkeypatch.setattr(_pca, "GUESS_ROWS", 10)  # rows 0, 100, ..., 900
    _, sample = _norm_counts_pass(X[::100], bounds, C0)
    assert guess_norm(X, bounds, C0) == _norm_from_counts(sample, C0)


def _assert_same_fit(est, ref):
    """The same norm bound, and the same model to round-off (sums added in another order)."""
    assert est.data_norm_ == ref.data_norm_
    for name in ("components_", "explained_variance_", "mean_"):
        np.testing.assert_allclose(getattr(est, name), getattr(ref, name), rtol=1e-10,
                                   atol=1e-12)


def test_fit_does_not_depend_on_the_guess(monkeypatch):
    # The guess only chooses how the same sums are computed: the same model to round-off, the
    # same norm bound. A guess of inf is the unscaled pass corrected by the long rows.
    X = _data(3000)
    ref = DPPCA(bounds=B, random_state=0).fit(X)
    bounds = (np.full(3, -10.0), np.full(3, 10.0))
    assert ref.data_norm_ == guess_norm(X, bounds, _centre_and_norm(bounds, None)[1])  # right
    for C_guess in (math.inf, 1.0, 100.0):
        monkeypatch.setattr(_pca, "guess_norm", lambda X, bounds, C0, C_guess=C_guess: C_guess)
        _assert_same_fit(DPPCA(bounds=B, random_state=0).fit(X), ref)


def test_fit_by_small_blocks_is_the_fit_in_one_block(monkeypatch):
    # Only the order of the sums changes: the same model to round-off, the same norm bound.
    X = _data(3000)
    settings = [{}, {"data_norm": 5.0}, {"delta": 0.0}]
    whole = [DPPCA(bounds=B, random_state=0, **kw).fit(X) for kw in settings]
    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 8 * 3 * 100)
    for kw, ref in zip(settings, whole):
        _assert_same_fit(DPPCA(bounds=B, random_state=0, **kw).fit(X), ref)


def test_blocks_grow_with_X_up_to_four_times_the_block_size(monkeypatch):
    # Blocks of X's size / 64 within 1 and 4 × BLOCK_BYTES; the fits are those by blocks of
    # BLOCK_BYTES to round-off, with the same norm bound.
    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 8 * 3 * 10)  # 10 rows of 3 columns
    assert _pca.block_bytes(np.empty((100, 3))) == 240  # 2,400 bytes / 64 < 240
    assert _pca.block_bytes(np.empty((1000, 3))) == 24_000 // 64
    assert _pca.block_bytes(np.empty((10_000, 3))) == 4 * 240
    seen = []

    def recording(*args, block_bytes=None, **kw):
        seen.append(block_bytes)
        return _blocks.map_blocks(*args, block_bytes=block_bytes, **kw)

    monkeypatch.setattr(_pca, "map_blocks", recording)
    X = _data(2000)  # 48,000 bytes: blocks of 750 bytes (31 rows)
    settings = [{}, {"data_norm": 5.0}, {"delta": 0.0}]
    grown = [DPPCA(bounds=B, random_state=0, **kw).fit(X) for kw in settings]
    assert set(seen) == {48_000 // 64}
    monkeypatch.setattr(_pca, "block_bytes", lambda X: 240)
    seen.clear()
    for kw, ref in zip(settings, grown):
        _assert_same_fit(DPPCA(bounds=B, random_state=0, **kw).fit(X), ref)
    assert set(seen) == {240}


@pytest.mark.parametrize("guess", [None, math.inf])  # inf: every long row corrected
def test_fit_does_not_depend_on_the_number_of_threads(monkeypatch, guess):
    # The blocks' sums are added in block order whatever thread summed them: the same bits.
    X = _data(3000)
    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 8 * 3 * 100)
    if guess is not None:
        monkeypatch.setattr(_pca, "guess_norm", lambda X, bounds, C0: guess)
    fits = []
    for threads in (1, 3):
        monkeypatch.setattr(_blocks, "n_threads", lambda threads=threads: threads)
        fits.append(DPPCA(bounds=B, random_state=0).fit(X))
    assert np.array_equal(fits[0].components_, fits[1].components_)
    assert np.array_equal(fits[0].explained_variance_, fits[1].explained_variance_)


@pytest.mark.parametrize("kw", [{}, {"data_norm": 20.0}, {"delta": 0.0}])
def test_fit_makes_no_copy_of_X(kw):
    import tracemalloc

    X = np.random.default_rng(0).normal(size=(40_000, 50))  # 16 MB; a block is 2 MB
    tracemalloc.start()
    try:
        DPPCA(bounds=B, random_state=0, **kw).fit(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 0.4 * X.nbytes  # a clipped copy of X alone would be 1.0
