"""Review of DPLinearRegression's refinement: the gradient-norm histogram and the clipped steps.

Checked and sound (these tests pass and guard it):

- The releases after the Gram matrix are the histogram (multiplier σ/√0.05,
  sensitivity 1) and one release per step (σ/√share_t, sensitivity C): the
  multipliers are the same on unrelated datasets, with public and with
  private bounds; their 1/σ² add up to the charged Gaussian's. With
  ``refine_steps="auto"`` the number of steps (8 or 64) is a function of the
  released Gram matrix, and for every number of rows, whichever it is, the
  steps' 1/σ² still add up to the same total (fully adaptive composition).
  The number of draws from the fit's generator is the same on neighbouring
  datasets that release the same step count (its state after the fit is
  equal), so no later draw depends on a row beyond the release.
- One row is one count of the histogram, whatever the row (outside the box,
  ±1e300, all zero) and whatever θ (0, tiny, huge enough that the residual
  overflows to ±inf or NaN: those go to the last bin).
- Every row's clipped gradient has L2 norm at most C (to a few units in the
  last place) on the fit's own design and steps, in every row-map mode, with
  and without an intercept, in memory and chunk by chunk on dask (chunks of
  0 and 1 row included).
- Neighbouring datasets (an extreme row added, a zero row added, one row
  alone, every gradient above the grid's top) fit without an error or a
  warning; C is a point of the public grid.
- The dask fit equals the in-memory fit for the same seed (LocalCluster).
- At ε = ∞ the fit is scikit-learn's LinearRegression on the clipped rows.
"""

import math
import warnings

import dask  # the dask extra (in the test extra): these tests fail, never skip, without it
import dask.array as da
import distributed  # noqa: F401 (the LocalCluster of the fixture needs it: fail, never skip)
import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from skdp.exceptions import NoisyEstimateWarning
from skdp.linear_model import DPLinearRegression
from skdp.linear_model import _linear
from skdp.linear_model._linear import (
    _GRADIENT_NORM_GRID,
    _GRAM_SHARE,
    _LONG_STEPS,
    _SCALE_SHARE,
    _clipped_gradient_sum,
    _gradient_norm_counts,
    _gradient_sum_of_rows,
)

from _testing import dask_client

RNG = np.random.default_rng(11)
X = RNG.uniform(-3, 3, (300, 3))
# The third column nearly repeats the first (as weather's dew point does its temperature): a
# direction of XᵀX below its release's noise, so that a large ε takes the long schedule.
X[:, 2] = X[:, 0] + RNG.uniform(-0.05, 0.05, 300)
Y = X @ [1.0, -2.0, 0.5] + 0.3 + RNG.normal(0, 0.5, 300)
# Rows far outside any box, huge, all zero, at the box's corner; targets beyond their bounds.
EXTREME_X = np.array([[1e300, -1e300, 1e300], [0.0, 0.0, 0.0], [-3.0, 3.0, -3.0],
                      [50.0, -70.0, 1e6], [1e-300, 0.0, -1e-300]])
EXTREME_Y = np.array([1e300, 0.0, -9.0, -1e6, 5.0])

MODES = {
    "box": dict(bounds_X=(-3, 3), bounds_y=(-9, 9)),
    "box, no intercept": dict(bounds_X=(-3, 3), bounds_y=(-9, 9), fit_intercept=False),
    "norm": dict(data_norm=4.0, bounds_y=(-9, 9)),
    "norm, no intercept": dict(data_norm=4.0, bounds_y=(-9, 9), fit_intercept=False),
    "box and norm": dict(bounds_X=(-3, 3), data_norm=2.0, bounds_y=(-9, 9)),
    "private bounds": dict(),
    "private y, float ridge": dict(bounds_X=(-3, 3), ridge=3.0),
}


class _Recording(_linear.GaussianMechanism):
    """GaussianMechanism that records each instance's multiplier and sensitivity."""

    made = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _Recording.made.append((self.noise_multiplier, self.sensitivity))


@pytest.fixture
def recorded(monkeypatch):
    monkeypatch.setattr(_linear, "GaussianMechanism", _Recording)
    _Recording.made = []
    return _Recording.made


@pytest.fixture
def step_calls(monkeypatch):
    """The (X, y, keyword arguments) of every call of the clipped-gradient block function."""
    calls = []

    def spy(X_, y_, **kwargs):
        calls.append((np.array(X_), np.array(y_), kwargs))
        return _clipped_gradient_sum(X_, y_, **kwargs)

    monkeypatch.setattr(_linear, "_clipped_gradient_sum", spy)
    return calls


@pytest.fixture
def row_steps(monkeypatch):
    """The (Z, target, row norms, keyword arguments) of every in-memory step's gradient sum."""
    calls = []

    def spy(Z, target, row_norms, **kwargs):
        calls.append((np.array(Z), np.array(target), np.array(row_norms), kwargs))
        return _gradient_sum_of_rows(Z, target, row_norms, **kwargs)

    monkeypatch.setattr(_linear, "_gradient_sum_of_rows", spy)
    return calls


def _neighbours():
    """Datasets that differ from (X, Y) by one added row (each of the extreme rows)."""
    return [(np.vstack([X, EXTREME_X[i]]), np.append(Y, EXTREME_Y[i]))
            for i in range(len(EXTREME_X))]


@pytest.mark.parametrize("mode", list(MODES))
def test_multipliers_are_fixed_before_the_data_and_compose_to_the_charge(mode, recorded):
    """The list of multipliers is the same on (X, Y), on its neighbours and on unrelated data;
    the sensitivities are Δ, 1 and C each step; 1/σ_i² of the refinement's parts add up to
    1/σ² of the charged Gaussian."""
    other = (RNG.normal(0, 100, (40, 3)), RNG.normal(0, 1e4, 40))
    lists, fits = [], []
    for data in [(X, Y), *_neighbours(), other]:
        recorded.clear()
        fits.append(DPLinearRegression(epsilon=0.8, random_state=4, **MODES[mode]).fit(*data))
        lists.append([z for z, _ in recorded])
    for got in lists[1:]:
        assert got == lists[0]
    assert all(reg.gradient_clip_ in _GRADIENT_NORM_GRID for reg in fits)
    # The fit's last 1 + 1 + 8 mechanisms: the Gram matrix, the histogram and the steps
    # (with private bounds, none of those are GaussianMechanism instances); 300 rows at
    # ε = 0.8 take the short schedule.
    recorded.clear()
    reg = DPLinearRegression(epsilon=0.8, random_state=4, **MODES[mode]).fit(X, Y)
    assert reg.n_refine_steps_ == 8 and len(recorded) == 10
    (z_gram, s_gram), (z_hist, s_hist), *steps = recorded
    sigma = reg.noise_multiplier_
    assert s_gram == reg.sensitivity_ and z_gram == pytest.approx(sigma / math.sqrt(_GRAM_SHARE))
    assert s_hist == 1.0 and z_hist == pytest.approx(sigma / math.sqrt(_SCALE_SHARE))
    assert all(s == reg.gradient_clip_ for _, s in steps)
    shares = [(sigma / z) ** 2 for z, _ in steps]
    np.testing.assert_allclose(
        shares, (1 - _GRAM_SHARE - _SCALE_SHARE) * np.arange(1, 9) / 36, rtol=1e-12)
    precision = sum(1.0 / z**2 for z, _ in recorded)
    assert precision == pytest.approx(1.0 / sigma**2, rel=1e-12)
    plain = DPLinearRegression(epsilon=0.8, refine_steps=0, **MODES[mode]).fit(X, Y)
    assert plain.privacy_curve_ == reg.privacy_curve_


@pytest.mark.parametrize("mode", ["box", "norm", "private bounds"])
def test_the_steps_chosen_from_the_release_compose_to_the_charge_for_every_n(mode, recorded):
    """With refine_steps="auto" the step count (8 or 128) and so each step's multiplier are
    chosen from the released Gram matrix; for each number of rows, whichever count the
    release gives, the drawn noises' 1/σ_i² add up to 1/σ² of the charged Gaussian and the
    charged curve is that of the fit without steps."""
    rng = np.random.default_rng(17)
    counts = set()
    for n in (300, 600, 3_000):
        Xn = rng.uniform(-3, 3, (n, 3))
        Xn[:, 2] = Xn[:, 0] + rng.uniform(-0.05, 0.05, n)  # as X: a direction the noise hides
        Yn = Xn @ [1.0, -2.0, 0.5] + 0.3 + rng.normal(0, 0.5, n)
        recorded.clear()
        reg = DPLinearRegression(epsilon=4.0, random_state=n, **MODES[mode]).fit(Xn, Yn)
        counts.add(reg.n_refine_steps_)
        gram_hist_steps = recorded[-(2 + reg.n_refine_steps_):]
        assert len(recorded) == 2 + reg.n_refine_steps_
        (z_gram, s_gram), (z_hist, s_hist), *steps = gram_hist_steps
        assert s_gram == reg.sensitivity_ and s_hist == 1.0
        assert all(s == reg.gradient_clip_ for _, s in steps)
        precision = sum(1.0 / z**2 for z, _ in gram_hist_steps)
        assert precision == pytest.approx(1.0 / reg.noise_multiplier_**2, rel=1e-12)
        if reg.n_refine_steps_ == _LONG_STEPS:  # the long schedule: equal shares
            np.testing.assert_allclose([z for z, _ in steps], steps[0][0], rtol=1e-12)
        plain = DPLinearRegression(epsilon=4.0, refine_steps=0, **MODES[mode]).fit(Xn, Yn)
        assert plain.privacy_curve_ == reg.privacy_curve_
    assert counts == {8, _LONG_STEPS}  # both schedules were checked


@pytest.mark.parametrize("mode", ["box", "norm, no intercept", "private bounds"])
def test_the_number_of_draws_does_not_depend_on_a_row(mode):
    """A Generator given as random_state is used as is: after fits on neighbouring datasets
    (and on data of another scale, same shape) its state is the same, so any later use of
    it draws the same numbers whatever the rows."""
    states = []
    datasets = [(np.vstack([X, X[:1]]), np.append(Y, Y[0])), *_neighbours(),
                (np.vstack([X * 1e5, X[:1]]), np.append(-Y, 0.0))]
    for data in datasets:
        rng = np.random.default_rng(21)
        DPLinearRegression(epsilon=0.8, random_state=rng, **MODES[mode]).fit(*data)
        states.append(rng.bit_generator.state)
    assert all(s == states[0] for s in states)
    fresh = np.random.default_rng(21)
    assert fresh.bit_generator.state != states[0]  # the fit did draw from it


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("theta_scale", [0.0, 1e-300, 1.0, 1e6, 1e300])
def test_one_row_is_one_count_of_the_norm_histogram(fit_intercept, theta_scale):
    """Each row alone gives a one-hot count vector; the counts of all rows add up to n, for
    θ from 0 to so large that z·θ overflows (a residual of ±inf or NaN: the last bin)."""
    reg = DPLinearRegression(epsilon=1.0, fit_intercept=fit_intercept)
    clipper, centre, scale, _ = reg._design(None, 1e60, (-1e60, 1e60), 3)
    rows = dict(clipper=clipper, bounds_y=(-1e60, 1e60), centre=centre, scale=scale,
                fit_intercept=fit_intercept)
    Xs = np.vstack([X, EXTREME_X, [[1e60, 1e60, -1e60]]])
    ys = np.concatenate([Y, EXTREME_Y, [-1e60]])
    theta = theta_scale * np.array([1.0, -1.0, 2.0, 0.5][:3 + fit_intercept])
    with np.errstate(over="ignore", invalid="ignore"):
        total = _gradient_norm_counts(Xs, ys, theta=theta, **rows)
        for i in range(len(Xs)):
            one = _gradient_norm_counts(Xs[i:i + 1], ys[i:i + 1], theta=theta, **rows)
            assert one.sum() == 1 and np.count_nonzero(one) == 1
    assert total.sum() == len(Xs) and total.size == _GRADIENT_NORM_GRID.size + 1
    empty = _gradient_norm_counts(Xs[:0], ys[:0], theta=theta, **rows)
    assert empty.shape == total.shape and not empty.any()


@pytest.mark.parametrize("epsilon", [0.5, 50.0])  # the short and the long schedule
@pytest.mark.parametrize("mode", list(MODES))
def test_every_rows_clipped_gradient_is_within_the_clip(mode, epsilon, row_steps):
    """On the fit's own design (built once in memory), θ and C (first and last step), each
    row's gradient has L2 norm at most C; rows outside the box and huge rows reach C; the
    design is the one the block function builds from the rows."""
    Xs, ys = np.vstack([X, EXTREME_X]), np.concatenate([Y, EXTREME_Y])
    reg = DPLinearRegression(epsilon=epsilon, random_state=2, **MODES[mode]).fit(Xs, ys)
    long = epsilon > 1 and reg.fit_intercept  # without an intercept no count: 8 steps
    assert len(row_steps) == reg.n_refine_steps_ == (_LONG_STEPS if long else 8)
    reached = 0.0
    for Z, target, row_norms, kwargs in (row_steps[0], row_steps[-1]):
        clip = kwargs["clip"]
        per_row = np.array([_gradient_sum_of_rows(Z[i:i + 1], target[i:i + 1],
                                                  row_norms[i:i + 1], **kwargs)
                            for i in range(len(Z))])
        norms = np.linalg.norm(per_row, axis=1)
        assert np.all(np.isfinite(norms))
        assert norms.max() <= clip * (1 + 1e-12)
        reached = max(reached, norms.max() / clip)
        np.testing.assert_array_equal(row_norms, np.linalg.norm(Z, axis=1))
        design = dict(clipper=reg._clipper, bounds_y=reg.bounds_y_, fit_intercept=reg.fit_intercept)
        lower_y, upper_y = reg.bounds_y_
        if reg.fit_intercept:
            design.update(centre=(lower_y + upper_y) / 2, scale=(upper_y - lower_y) / 2 or 1.0)
        else:
            design.update(centre=0.0, scale=max(abs(lower_y), abs(upper_y)) or 1.0)
        np.testing.assert_allclose(per_row.sum(axis=0),
                                   _clipped_gradient_sum(Xs, ys, **kwargs, **design),
                                   rtol=1e-9, atol=1e-9 * clip)
    # At ε = 50 C is read from the data (0.125-1 here) and the extreme rows reach it; at
    # ε = 0.5 the noisy histogram of 45 rows can put C (up to 16) above every row's norm.
    if epsilon > 1:
        assert reached >= 1 - 1e-12


def test_dask_chunks_clip_every_row_too(step_calls):
    """Chunk by chunk (chunks of 0, 1 and many rows), each row's gradient is within C."""
    Xs, ys = np.vstack([X, EXTREME_X]), np.concatenate([Y, EXTREME_Y])
    chunks = (0, 1, 100, 0, len(Xs) - 101)
    with dask.config.set(scheduler="sync"):
        DPLinearRegression(epsilon=0.5, random_state=2, **MODES["box and norm"]).fit(
            da.from_array(Xs, chunks=(chunks, 3)), da.from_array(ys, chunks=(chunks,)))
    assert len(step_calls) == 8 * len(chunks)
    assert sorted({len(c[0]) for c in step_calls}) == [0, 1, 100, len(Xs) - 101]
    for X_, y_, kwargs in step_calls:
        for i in range(len(X_)):
            g = _clipped_gradient_sum(X_[i:i + 1], y_[i:i + 1], **kwargs)
            assert np.linalg.norm(g) <= kwargs["clip"] * (1 + 1e-12)


@pytest.mark.parametrize("mode", ["box", "norm, no intercept", "private bounds"])
def test_neighbours_fit_without_an_error_or_a_warning(mode):
    """After the charge nothing raises or warns on any of these neighbours: extreme rows
    added, one row alone, all-zero rows, gradients all above the grid's top (C = 16)."""
    zeros = (np.zeros((50, 3)), np.zeros(50))
    datasets = [(X, Y), *_neighbours(), (X[:1], Y[:1]), zeros,
                (np.vstack([zeros[0], EXTREME_X[:1]]), np.append(zeros[1], 1e300))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # The private bounds' own warning is a function of their released noisy counts.
        warnings.simplefilter("ignore", NoisyEstimateWarning)
        for data in datasets:
            reg = DPLinearRegression(epsilon=1.0, random_state=3, **MODES[mode]).fit(*data)
            assert reg.gradient_clip_ in _GRADIENT_NORM_GRID
            assert np.all(np.isfinite(reg.coef_)) and math.isfinite(reg.intercept_)
    # Gradients all far above the grid (rows of norm 173, residuals near 1): at a large ε
    # the clip is the grid's top, and neither the fit nor its neighbour warns.
    signs = np.random.default_rng(5).choice([-1.0, 1.0], (4001, 4))
    rows, targets = 100.0 * signs[:, :3], 9.0 * signs[:, 3]
    rows[-1], targets[-1] = 1e300, -1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (4000, 4001):
            big = DPLinearRegression(epsilon=1e4, bounds_X=(-100, 100), bounds_y=(-9, 9),
                                     fit_intercept=False, random_state=3).fit(rows[:n],
                                                                              targets[:n])
            assert big.gradient_clip_ == _GRADIENT_NORM_GRID[-1]


@pytest.fixture(scope="module")
def client():
    with dask_client() as c:
        yield c


@pytest.mark.parametrize("mode", ["box, no intercept", "box and norm", "private bounds",
                                  "private y, float ridge"])
def test_dask_fit_equals_the_in_memory_fit(client, mode):
    Xs, ys = np.vstack([X, EXTREME_X]), np.concatenate([Y, EXTREME_Y])
    chunks = (120, 0, 1, len(Xs) - 121)
    ref = DPLinearRegression(epsilon=1.0, random_state=8, **MODES[mode]).fit(Xs, ys)
    got = DPLinearRegression(epsilon=1.0, random_state=8, **MODES[mode]).fit(
        da.from_array(Xs, chunks=(chunks, 2)), da.from_array(ys, chunks=(chunks,)))
    assert got.gradient_clip_ == ref.gradient_clip_
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9)
    assert got.intercept_ == pytest.approx(ref.intercept_, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("mode", ["box", "box, no intercept", "norm", "box and norm"])
def test_epsilon_inf_is_least_squares_on_the_clipped_rows(mode):
    Xs, ys = np.vstack([X, EXTREME_X[1:]]), np.concatenate([Y, EXTREME_Y[1:]])
    reg = DPLinearRegression(epsilon=math.inf, **MODES[mode]).fit(Xs, ys)
    assert reg.gradient_clip_ is None
    Xc = reg._clipper.transform(Xs)
    yc = np.clip(ys, -9, 9)
    ref = LinearRegression(fit_intercept=MODES[mode].get("fit_intercept", True)).fit(Xc, yc)
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    assert reg.intercept_ == pytest.approx(ref.intercept_, rel=1e-8, abs=1e-10)
    assert not np.allclose(Xc, Xs)  # the rows were clipped: the test compares the clipped fit
