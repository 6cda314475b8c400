"""DPPCA's one pass with a guess of C (be34b1d, b915b79, f053dc7, 1929128): a review.

- The guess is computed after the charge (never for refused input), and no
  error, warning or random draw after the charge depends on a row, also on
  neighbouring datasets built to sit on the guess, on C or far outside the box.
- Every released attribute is the same whatever the guess (each histogram
  edge, infinity, the smallest float): the same C exactly, the rest to
  round-off; no attribute records the guess.
- The correction G − Σ (a² − t²) y yᵀ stays at float64 round-off: C and the
  guess are histogram edges within a factor 8 of the box's half-diagonal, so
  t, a ≥ 1/8 and a subtraction loses at most 6 bits; the sums agree with a
  long-double reference of the rows scaled down to C within 2^10 ulps.
"""

import math
import warnings

import numpy as np
import pytest

from skdp import BudgetExceededError, BudgetExhaustedWarning, PrivacyBudget
from skdp.decomposition import DPPCA, _pca
from skdp.decomposition._pca import (
    NORM_BINS,
    _centre_and_norm,
    _norm_counts_pass,
    _norms_moments_pass,
    guess_norm,
    scale_down_long_rows,
)
from skdp.utils import _blocks

BOUNDS = (np.array([-1.0, -2.0, 0.0, -0.5]), np.array([1.0, 2.0, 3.0, 0.5]))
CENTRE, C0 = _centre_and_norm(BOUNDS, None)
EDGES = C0 * 2.0 ** (-np.arange(NORM_BINS + 1) / 4.0)  # the only values C and the guess take
EPS = np.finfo(float).eps


def _corners(n, seed):
    """Rows at the box's corners: every norm is C0, the longest a row can be."""
    rng = np.random.default_rng(seed)
    return np.where(rng.random((n, 4)) < 0.5, BOUNDS[0], BOUNDS[1])


def _datasets():
    rng = np.random.default_rng(0)
    half = (BOUNDS[1] - BOUNDS[0]) / 2
    on_edges = CENTRE + np.outer(np.resize(EDGES, 300), [1.0, 0, 0, 0])  # norms at the edges
    return {
        "corners": _corners(500, 1),
        "far outside the box": 1e300 * np.sign(rng.normal(size=(500, 4))),
        "at the centre": np.tile(CENTRE, (500, 1)),
        "norms at the edges": on_edges,
        "near-constant rows": BOUNDS[1] - 1e-9 * rng.random((500, 4)),
        "one row": BOUNDS[1][None, :],
        "gaussian": CENTRE + half * rng.normal(0, 0.4, size=(2000, 4)),
    }


def _spy(monkeypatch, budget, seen):
    """Record the number of charges when the guess and the one pass run."""
    for name in ("guess_norm", "_norms_moments_pass"):
        real = getattr(_pca, name)

        def spy(*args, real=real, name=name, **kwargs):
            seen.append((name, len(budget)))
            return real(*args, **kwargs)

        monkeypatch.setattr(_pca, name, spy)


@pytest.mark.parametrize("bounds", [BOUNDS, None])
def test_the_guess_is_computed_after_the_charge(monkeypatch, bounds):
    budget, seen = PrivacyBudget(10.0, 1e-5), []
    _spy(monkeypatch, budget, seen)
    DPPCA(bounds=bounds, random_state=0, budget=budget).fit(_datasets()["gaussian"])
    assert [name for name, _ in seen] == ["guess_norm", "_norms_moments_pass"]
    assert all(charges == 1 for _, charges in seen)


def test_refused_input_computes_no_guess_and_costs_nothing(monkeypatch):
    budget, seen = PrivacyBudget(10.0, 1e-5), []
    _spy(monkeypatch, budget, seen)
    X = _datasets()["gaussian"]
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPPCA(bounds=BOUNDS, budget=budget).fit(bad)
    with pytest.raises(ValueError, match="n_components"):
        DPPCA(n_components=9, bounds=BOUNDS, budget=budget).fit(X)
    with pytest.raises(BudgetExceededError), pytest.warns(BudgetExhaustedWarning):
        DPPCA(bounds=BOUNDS, epsilon=20.0, budget=budget).fit(X)
    assert seen == [] and len(budget) == 0


def test_the_guess_and_the_released_c_are_edges_within_a_factor_8(monkeypatch):
    # The premise of the 6-bit bound: t = min(1, C/|y|) and a = min(1, guess/|y|) are >= 1/8.
    for name, X in _datasets().items():
        X = np.clip(X, *BOUNDS)
        norms, _ = _norm_counts_pass(X, BOUNDS, C0)
        assert norms.max() <= C0 * (1 + 4 * EPS), name
        guess = guess_norm(X, BOUNDS, C0)
        assert guess in EDGES, name
        est = DPPCA(bounds=BOUNDS, random_state=1).fit(X)
        assert est.data_norm_ in EDGES, name


def _long_double_moments(X, C):
    """Σ yyᵀ and Σ y of the clipped, centred rows scaled down to C, in long double."""
    Y = np.clip(X, *BOUNDS).astype(np.longdouble) - CENTRE.astype(np.longdouble)
    norms = np.sqrt(np.sum(Y * Y, axis=1))
    scale = np.where(norms > C, np.longdouble(C) / np.where(norms > 0, norms, 1), 1)
    Y = Y * scale[:, None]
    return Y.T @ Y, Y.sum(axis=0)


@pytest.mark.parametrize("name", ["corners", "near-constant rows", "gaussian",
                                  "norms at the edges", "one row"])
def test_the_correction_stays_at_round_off_for_every_guess(monkeypatch, name):
    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 8 * 4 * 64)  # many blocks of 64 rows
    X = np.clip(_datasets()[name], *BOUNDS)
    for C in (EDGES[-1], EDGES[5], EDGES[0]):
        ref_gram, ref_sums = _long_double_moments(X, C)
        size_gram = float(np.abs(ref_gram).max()) or 1.0
        for guess in (math.inf, *EDGES, C):
            norms, _, gram, sums = _norms_moments_pass(X, BOUNDS, C0, guess)
            gram, sums = scale_down_long_rows(X, BOUNDS, C, guess, norms, gram, sums)
            err = float(np.abs(gram - ref_gram).max())
            # 6 bits lost at most in a subtraction, 4 more for the sums over the blocks
            assert err <= 2**10 * EPS * size_gram, (name, C, guess, err / size_gram)
            np.testing.assert_allclose(sums, ref_sums.astype(float), rtol=0,
                                       atol=2**10 * EPS * len(X) * C)


_ATTRIBUTES = ("components_", "explained_variance_", "explained_variance_ratio_",
               "singular_values_", "mean_", "noise_variance_")


@pytest.mark.parametrize("bounds", [BOUNDS, None])
@pytest.mark.parametrize("name", ["corners", "far outside the box", "norms at the edges",
                                  "near-constant rows", "one row"])
def test_released_attributes_do_not_depend_on_the_guess(monkeypatch, name, bounds):
    X = _datasets()[name]
    ref = DPPCA(n_components=3, bounds=bounds, random_state=4).fit(X)
    box = ref.bounds_
    C0_fit = _centre_and_norm(box, None)[1]
    guesses = [math.inf, np.finfo(float).tiny, *(C0_fit * 2.0 ** (-np.arange(13) / 4.0))]
    for guess in guesses:
        monkeypatch.setattr(_pca, "guess_norm", lambda X, bounds, C0, g=guess: g)
        est = DPPCA(n_components=3, bounds=bounds, random_state=4).fit(X)
        assert sorted(vars(est)) == sorted(vars(ref))  # no attribute records the guess
        assert est.data_norm_ == ref.data_norm_ and est.n_components_ == ref.n_components_
        np.testing.assert_array_equal(est.bounds_, ref.bounds_)
        scale = ref.data_norm_**2  # a second moment's scale; the noise std is z·C² / √0.8
        for attr in _ATTRIBUTES:
            a, b = getattr(ref, attr), getattr(est, attr)
            tol = 1e-9 * (scale if attr in ("explained_variance_", "noise_variance_")
                          else math.sqrt(scale) * len(X) if attr == "singular_values_"
                          else 1.0)
            np.testing.assert_allclose(b, a, rtol=1e-9, atol=tol, err_msg=(name, guess, attr))


def _fit_quietly(X, rng, budget):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning (numpy's overflow, invalid...) fails the fit
        return DPPCA(bounds=BOUNDS, random_state=rng, budget=budget).fit(X)


@pytest.mark.parametrize("extra", ["corner", "far outside", "centre", "norm at the guess",
                                   "norm at the released C"])
def test_neighbours_raise_warn_and_draw_the_same(extra):
    X = _datasets()["gaussian"]
    guess = guess_norm(X, BOUNDS, C0)
    ref_C = DPPCA(bounds=BOUNDS, random_state=0).fit(X).data_norm_
    row = {"corner": BOUNDS[1], "far outside": np.full(4, -1e308), "centre": CENTRE,
           "norm at the guess": CENTRE + [guess, 0, 0, 0],
           "norm at the released C": CENTRE + [ref_C, 0, 0, 0]}[extra]
    states = []
    for data in (X, np.vstack([X, row]), X[1:]):
        rng, budget = np.random.default_rng(7), PrivacyBudget(10.0, 1e-5)
        est = _fit_quietly(data, rng, budget)
        assert len(budget) == 1 and np.isfinite(est.components_).all()
        states.append(rng.bit_generator.state)
    assert states[0] == states[1] == states[2]  # the same draws whatever the rows
