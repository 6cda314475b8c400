"""Review of the fixes for the external audit's six defects, and of their siblings.

Checked and sound (these tests pass and guard it):

- Noise selection (``skdp.stats._noise._sums_delta``): for every statistic and
  every estimator built on k noisy sums, float and secure, small and large k
  and ε, the noise actually drawn (spied on the samplers) is the mechanism
  charged: same law (Laplace or Gaussian), same k, and its own RDP curve,
  rebuilt from the drawn scales and the public sensitivities, equals the
  charged curve at every order.
- Private selection against exact Rényi divergences of the best of K (the
  released best score, a post-processing of the output): Poisson K with a
  mean of exactly 1 and above, and the truncated negative binomial laws
  (η from −0.9 to 3), over randomized response and discrete-Laplace scores.
- Seeds stay out of the ledger, the budget's refusal and its warning, also
  for nested steps and a private search.

Found and fixed (each test failed before its fix):

1. A private search used an estimator given as a value of its parameter grid
   (``{"clf": [est_a, est_b]}``) as is, in every run, instead of a copy (as
   scikit-learn's searches clone them): the runs fitted the user's own
   object one after the other, so with ``refit=False`` the released model was
   the *last* run of that candidate, not the best run (a model the selection
   does not release, and whose choice the analysis of Papernot & Steinke
   does not cover); the probes left their curve recorder as the budget of
   the grid's estimators, so the fitted search could not be pickled and,
   under loky, every run failed after the charge.
2. A ``ColumnTransformer`` stacks its parts as a sparse matrix when their
   density is below ``sparse_threshold`` (0.3 by default). A sparse
   ``OneHotEncoder`` that ignores unknown categories (or drops one) writes no
   entry for such a row, so the density, hence the output type, depends on
   the rows: the search checked the whole input (dense), then a run's
   training part came out sparse, the next step refused it, and the search
   failed after its charge on some datasets and not on their neighbours.
3. With the package's default δ = 1e-5, a fit at ε below 0.0035 raised "No
   noise multiplier reaches epsilon" before its charge, where ``delta=0``
   fitted: no Gaussian reaches (ε, δ) on the order grid there, and
   ``_sums_delta`` calibrated one before comparing it with the Laplace. The
   Laplace is now used.
4. A charge refused for another reason than the cap (the ledger file gone)
   left an earlier fitted model half-refitted: ``n_features_in_`` of the new
   data beside the old statistics.
5. A private search refused, before its charge, every DataFrame with a
   column of pandas' nullable dtypes (``Int64``, ``Float64``, ``boolean``):
   its placeholders could not be built (``TypeError``).
"""

import copy
import math
import os
import pickle
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

import skdp.stats._noise as noise
from skdp import BudgetExceededError, PrivacyBudget, stats
from skdp.accounting import (
    DEFAULT_ORDERS,
    Poisson,
    RDPCurve,
    gaussian_rdp,
    laplace_rdp,
    private_selection_rdp,
    run_count_distribution,
    zcdp_rdp,
)
from skdp.exceptions import BudgetExhaustedWarning
from skdp.impute import DPSimpleImputer
from skdp.linear_model import DPLogisticRegression
from skdp.model_selection import DPGridSearchCV, _runs
from skdp.naive_bayes import DPGaussianNB
from skdp.preprocessing import DPHistogramTransformer, DPStandardScaler

_L, _U = -1.0, 3.0
_H = (_U - _L) / 2.0  # the half-width: sensitivity of a centred sum


# -- the noise drawn is the noise charged ---------------------------------------------
class _SpyGenerator(np.random.Generator):
    """A Generator that records each float Laplace / Gaussian draw: (law, scale of each value)."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.draws = []

    def laplace(self, loc=0.0, scale=1.0, size=None):
        out = super().laplace(loc, scale, size)
        self.draws.append(("laplace", np.broadcast_to(scale, np.shape(out)).astype(float).ravel()))
        return out

    def normal(self, loc=0.0, scale=1.0, size=None):
        out = super().normal(loc, scale, size)
        self.draws.append(("normal", np.broadcast_to(scale, np.shape(out)).astype(float).ravel()))
        return out


def _drawn_curve(law, blocks, orders):
    """The RDP curve of the noise drawn, from its scales and the public sensitivities.

    ``blocks`` are disjoint groups of rows (the classes of naive Bayes: one row
    is in one block, so the worst block counts); each block is a list of draws
    ``(mode, scales, sensitivities)``, where one row changes every value by its
    sensitivity (``"all"``: a vector of sums) or one value (``"one"``: the bins
    of a histogram). Laplace values of scale b and sensitivity Δ compose as
    ``laplace_rdp(b/Δ)`` each (Mironov 2017, Prop. 6); Gaussian values make one
    vector of squared L2 sensitivity Σ(Δ/σ)² (Mironov 2017, Prop. 7).
    """
    if law == "laplace":
        worst = np.zeros(len(orders))
        for block in blocks:
            total = np.zeros(len(orders))
            for mode, scales, sens in block:
                each = np.array([laplace_rdp(b / d, orders=orders).rdp
                                 for b, d in zip(scales, np.broadcast_to(sens, scales.shape))])
                total += each.sum(axis=0) if mode == "all" else each.max(axis=0)
            worst = np.maximum(worst, total)
        return worst
    worst = 0.0
    for block in blocks:
        total = 0.0
        for mode, scales, sens in block:
            ratio = (np.asarray(sens) / scales) ** 2
            total += ratio.sum() if mode == "all" else ratio.max()
        worst = max(worst, total)
    return gaussian_rdp(1.0 / math.sqrt(worst), orders=orders).rdp


def _data(d, n=120, seed=0):
    return np.random.default_rng(seed).uniform(_L, _U, size=(n, d))


def _var_blocks(draws, d, offset=0):
    count, s1, s2 = (draws[offset + i][1] for i in range(3))
    return [("all", count, 1.0), ("all", s1, _H), ("all", s2, _H * _H / 2.0)]


def _release(name, d, eps, delta, rng, tmp_path):
    """Run one release with the spy ``rng``; return (charged curve, blocks of draws)."""
    X = _data(d)
    if name.startswith("stats."):
        budget = PrivacyBudget(math.inf, 0.5, ledger=tmp_path / f"{name}-{d}-{eps}.sqlite")
        kw = dict(epsilon=eps, delta=delta, budget=budget, random_state=rng)
        draws = rng.draws
        if name == "stats.count":
            stats.count(X, axis=0, **kw)
            blocks = [[("all", draws[0][1], 1.0)]]
        elif name == "stats.sum":
            stats.sum(X, axis=0, bounds=(_L, _U), **kw)
            blocks = [[("all", draws[0][1], max(abs(_L), abs(_U)))]]
        elif name == "stats.mean":
            stats.mean(X, axis=0, bounds=(_L, _U), **kw)
            blocks = [[("all", draws[0][1], 1.0), ("all", draws[1][1], _H)]]
        elif name == "stats.mean_all":  # axis=None: a row adds its d entries
            stats.mean(X, bounds=(_L, _U), **kw)
            blocks = [[("all", draws[0][1], 1.0), ("all", draws[1][1], d * _H)]]
        elif name in ("stats.var", "stats.std"):
            getattr(stats, name[6:])(X, axis=0, bounds=(_L, _U), **kw)
            blocks = [_var_blocks(draws, d)]
        elif name == "stats.histogram":
            stats.histogram(X[:, 0], bins=d + 1, range=(_L, _U), **kw)
            blocks = [[("one", draws[0][1], 1.0)]]
        elif name == "stats.histogramdd":  # one row falls in one of the 3 x (d + 1) bins
            stats.histogramdd(X[:, [0, -1]], bins=[3, d + 1], range=[(_L, _U)] * 2, **kw)
            blocks = [[("one", draws[0][1], 1.0)]]
        return budget.ledger[0].curve, blocks
    if name == "scaler":
        est = DPStandardScaler(bounds=(_L, _U), epsilon=eps, delta=delta, random_state=rng).fit(X)
        blocks = [_var_blocks(rng.draws, d)]
    elif name == "scaler_mean":
        est = DPStandardScaler(bounds=(_L, _U), epsilon=eps, delta=delta, with_std=False,
                               random_state=rng).fit(X)
        blocks = [[("all", rng.draws[0][1], 1.0), ("all", rng.draws[1][1], _H)]]
    elif name == "histogram":
        est = DPHistogramTransformer(5, bounds=(_L, _U), epsilon=eps, delta=delta,
                                     random_state=rng).fit(X)
        blocks = [[("one", scales, 1.0) for _, scales in rng.draws]]
    elif name == "naive_bayes":
        y = np.arange(X.shape[0]) % 3
        est = DPGaussianNB(bounds=(_L, _U), classes=[0, 1, 2], epsilon=eps, delta=delta,
                           random_state=rng).fit(X, y)
        blocks = [_var_blocks(rng.draws, d, 3 * c) for c in range(3)]
    elif name == "imputer":
        X[::7, 0] = np.nan
        est = DPSimpleImputer(bounds=(_L, _U), epsilon=eps, delta=delta, random_state=rng).fit(X)
        draws = rng.draws
        if len(draws) == 2:  # one vector of d counts and d sums
            blocks = [[("all", draws[0][1], 1.0), ("all", draws[1][1], _H)]]
        else:  # per feature: its count and its sum, at ε/d
            blocks = [[("all", draws[i][1], 1.0 if i % 2 == 0 else _H)
                       for i in range(len(draws))]]
    return est.privacy_curve_, blocks


_RELEASES = ["stats.count", "stats.sum", "stats.mean", "stats.mean_all", "stats.var",
             "stats.std", "stats.histogram", "stats.histogramdd", "scaler", "scaler_mean",
             "histogram", "naive_bayes", "imputer"]


@pytest.mark.parametrize("eps", [0.05, 1.0, 8.0])
@pytest.mark.parametrize("d", [1, 40])
@pytest.mark.parametrize("name", _RELEASES)
def test_float_noise_drawn_is_the_noise_charged(name, d, eps, tmp_path):
    rng = _SpyGenerator(1)
    charged, blocks = _release(name, d, eps, 1e-5, rng, tmp_path)
    laws = {law for law, _ in rng.draws}
    assert len(laws) == 1  # never Laplace for some sums and Gaussian for others
    law = laws.pop()
    # A pure ε-DP curve was charged exactly when Laplace noise was drawn.
    assert math.isfinite(charged.pure_epsilon) == (law == "laplace")
    drawn = _drawn_curve(law, blocks, charged.orders)
    np.testing.assert_allclose(drawn, charged.rdp, rtol=1e-9, atol=1e-12)


def test_both_laws_are_reached_by_the_noise_selection():
    # The test above covers both branches: few sums take the Laplace, many the Gaussian.
    assert noise._sums_delta(1.0, 1e-5, 3) == 0.0
    assert noise._sums_delta(1.0, 1e-5, 81) == 1e-5
    assert noise._sums_delta(8.0, 1e-5, 3) == 0.0
    assert noise._sums_delta(0.05, 1e-5, 81) == 1e-5


class _SecureSpy:
    """Records the exact samplers' draws and the σ asked of gaussian_sigma_at_least."""

    def __init__(self, monkeypatch):
        self.draws, self.sigmas = [], []
        laplace, gauss, sigma = (noise.sample_discrete_laplace, noise.sample_discrete_gaussian,
                                 noise.gaussian_sigma_at_least)

        def spy_laplace(scale, size=None, *, random_state=None):
            self.draws.append(("laplace", Fraction(scale), size))
            return laplace(scale, size, random_state=random_state)

        def spy_gauss(s, size=None, *, random_state=None):
            self.draws.append(("gauss", Fraction(s), size))
            return gauss(s, size, random_state=random_state)

        def spy_sigma(z, sensitivity=1, n_sums=1):
            out = sigma(z, sensitivity, n_sums)
            self.sigmas.append((z, Fraction(sensitivity), int(n_sums), out))
            return out

        monkeypatch.setattr(noise, "sample_discrete_laplace", spy_laplace)
        monkeypatch.setattr(noise, "sample_discrete_gaussian", spy_gauss)
        monkeypatch.setattr(noise, "gaussian_sigma_at_least", spy_sigma)


_SECURE = [("stats.count", lambda d: d), ("stats.mean", lambda d: d + 1),
           ("stats.var", lambda d: 2 * d + 1), ("stats.histogram", lambda d: 1),
           ("scaler", lambda d: 2 * d + 1), ("histogram", lambda d: d),
           ("naive_bayes", lambda d: 2 * d + 1), ("imputer", lambda d: 2 * d)]


@pytest.mark.parametrize("d", [1, 20])
@pytest.mark.parametrize("name,n_sums", _SECURE, ids=[n for n, _ in _SECURE])
def test_secure_noise_drawn_is_the_noise_charged(name, n_sums, d, monkeypatch, tmp_path):
    eps, delta, k = 1.0, 1e-5, n_sums(d)
    spy = _SecureSpy(monkeypatch)
    X = _data(d, n=60)
    if name.startswith("stats."):
        budget = PrivacyBudget(math.inf, 0.5, ledger=tmp_path / "l.sqlite")
        kw = dict(epsilon=eps, delta=delta, budget=budget, random_state=0, secure=True)
        if name == "stats.histogram":
            stats.histogram(X[:, 0], bins=4, range=(_L, _U), **kw)
        elif name == "stats.count":
            stats.count(X, axis=0, **kw)
        else:
            getattr(stats, name[6:])(X, axis=0, bounds=(_L, _U), **kw)
        charged = budget.ledger[0].curve
    elif name == "scaler":
        charged = DPStandardScaler(bounds=(_L, _U), delta=delta, secure=True,
                                   random_state=0).fit(X).privacy_curve_
    elif name == "histogram":
        charged = DPHistogramTransformer(4, bounds=(_L, _U), delta=delta, secure=True,
                                         random_state=0).fit(X).privacy_curve_
    elif name == "imputer":  # 2d sums: one Gaussian vector, or per feature ε/d over 2 sums
        X[::5, 0] = np.nan
        charged = DPSimpleImputer(bounds=(_L, _U), delta=delta, secure=True,
                                  random_state=0).fit(X).privacy_curve_
    else:
        charged = DPGaussianNB(bounds=(_L, _U), classes=[0, 1], delta=delta, secure=True,
                               random_state=0).fit(X, np.arange(60) % 2).privacy_curve_
    laws = {law for law, _, _ in spy.draws}
    assert len(laws) == 1
    law = laws.pop()
    assert math.isfinite(charged.pure_epsilon) == (law == "laplace")
    assert law == ("gauss" if noise._sums_delta(eps, delta, k) else "laplace")
    if law == "laplace":
        # ε/k-DP per sum: scale s·k/ε for an integer sensitivity s on the grid
        # (s = 1 for counts and bins), CKS20 Sec. 2.
        for _, scale, _ in spy.draws:
            s = scale * Fraction(eps) / k
            assert s.denominator == 1 and s >= 1
        return
    # Discrete Gaussian: σ >= z·√k·s for the z charged, so that one row's vector
    # is at most Σ s²/(2σ²)-zCDP (CKS20, Thm. 4); naive Bayes: per class.
    z = noise._noise_multiplier(eps, delta)
    assert all(zz == z and kk == k for zz, _, kk, _ in spy.sigmas)
    blocks = 2 if name == "naive_bayes" else 1
    per = len(spy.sigmas) // blocks
    rho = max(sum(float(s * s / (2 * out * out))
                  for _, s, _, out in spy.sigmas[b * per:(b + 1) * per])
              for b in range(blocks))
    assert np.all(zcdp_rdp(rho, orders=charged.orders).rdp <= charged.rdp * (1 + 1e-12))


# -- 3. no Gaussian at (ε, δ): the Laplace, not an error -----------------------------
def _fit(est, X, y, **params):
    return clone(est).set_params(random_state=0, **params).fit(X, y)


def test_small_epsilon_with_the_default_delta_uses_the_laplace():
    X = _data(3, n=200)
    y = (X[:, 0] > 1).astype(int)
    for est in [DPStandardScaler(bounds=(_L, _U), epsilon=0.001),
                DPHistogramTransformer(bounds=(_L, _U), epsilon=0.001),
                DPGaussianNB(bounds=(_L, _U), classes=[0, 1], epsilon=0.001),
                DPSimpleImputer(bounds=(_L, _U), epsilon=0.003)]:
        assert est.delta == 1e-5
        default, pure = _fit(est, X, y), _fit(est, X, y, delta=0.0)
        # The same pure ε-DP release as with delta=0, not an error.
        np.testing.assert_array_equal(default.privacy_curve_.rdp, pure.privacy_curve_.rdp)
        assert default.privacy_curve_.pure_epsilon == pure.privacy_curve_.pure_epsilon
        assert default.epsilon_spent_ <= est.epsilon
    assert stats.mean(X, axis=0, epsilon=0.001, delta=1e-5, bounds=(_L, _U),
                      random_state=0).shape == (3,)


# -- private selection against exact divergences -------------------------------------
def _exact_rdp(P, Q, orders):
    """max(D_λ(P‖Q), D_λ(Q‖P)) of two finite laws (Rényi 1961), in log space."""
    lp, lq = np.log(P), np.log(Q)
    return np.array([max(logsumexp(a * lp + (1 - a) * lq), logsumexp(a * lq + (1 - a) * lp))
                     / (a - 1) for a in orders])


def _pgf(law):
    """E[x^K] of the law of K."""
    if isinstance(law, Poisson):
        return lambda x: math.exp(law.mu * (x - 1.0))
    eta, gamma = law.eta, law.gamma
    if eta == 0.0:
        return lambda x: math.log1p(-(1 - gamma) * x) / math.log(gamma)
    return lambda x: ((1 - (1 - gamma) * x) ** (-eta) - 1) / (gamma ** (-eta) - 1)


def _best_law(P, pgf):
    """Law of the best score of K runs with scores ~ P: P(max <= s) = E[F(s)^K].

    With a Poisson K, K = 0 (no output, ⊥) comes first, with probability E[0^K].
    """
    F = np.concatenate([[0.0], np.cumsum(P)])
    F[-1] = 1.0
    G = np.array([pgf(x) for x in F])
    return np.concatenate([[G[0]], np.diff(G)]) if G[0] > 0 else np.diff(G)


def _score_pair(eps, m, shift):
    """Scores 0..m−1 of one run on D and on D′: discrete Laplace shapes, shifted."""
    s = np.arange(m)
    P = np.exp(-eps * np.abs(s - (m - 1) / 2))
    Q = np.exp(-eps * np.abs(s - (m - 1) / 2 - shift))
    return P / P.sum(), Q / Q.sum()


def _rr_pair(eps):
    p = math.exp(eps) / (1 + math.exp(eps))
    return np.array([1 - p, p]), np.array([p, 1 - p])


_LAWS = ([("poisson", mu, None) for mu in [1.0, 1.2, 30.0]]
         + [(kind, mu, None) for kind in ["geometric", "logarithmic"] for mu in [1.01, 10.0]]
         + [("truncated_negative_binomial", mu, eta) for eta in [-0.9, 3.0] for mu in [1.05, 50.0]])
_PAIRS = ([("rr", eps, _rr_pair(eps)) for eps in [0.01, 1.0, 8.0]]
          + [("laplace8", eps, _score_pair(eps, 8, 1)) for eps in [0.05, 2.0]]
          + [("far", 1.0, _score_pair(1.0, 6, 3))])


@pytest.mark.parametrize("kind,mu,eta", _LAWS)
def test_private_selection_bounds_the_exact_divergence_of_the_best_score(kind, mu, eta):
    law = run_count_distribution(kind, mu, eta=eta)
    orders = DEFAULT_ORDERS
    for _, _, (P, Q) in _PAIRS:
        # The base curve is the run's exact RDP: the tightest curve it satisfies.
        base = RDPCurve(orders, _exact_rdp(P, Q, orders),
                        pure_epsilon=float(np.max(np.abs(np.log(P) - np.log(Q)))))
        curve = private_selection_rdp(base, law)
        pgf = _pgf(law)
        Pb, Qb = _best_law(P, pgf), _best_law(Q, pgf)
        assert np.all(curve.rdp >= _exact_rdp(Pb, Qb, orders) * (1 - 1e-9))
        assert curve.pure_epsilon >= float(np.max(np.abs(np.log(Pb) - np.log(Qb))))


# -- seeds stay out of the ledger and its messages -------------------------------------
_SEED = 1_834_967_201


def test_no_seed_in_the_ledger_or_the_refusal(tmp_path):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    X = rng.normal(size=(400, 2)) + y[:, None]
    budget = PrivacyBudget(1.2, 1e-5, ledger=tmp_path / "l.sqlite")
    pipe = Pipeline([("scale", DPStandardScaler(bounds=(-4, 5), epsilon=0.5, random_state=_SEED)),
                     ("clf", DPGaussianNB(bounds=(-4, 5), classes=[0, 1], epsilon=0.5,
                                          random_state=_SEED + 1))])
    pipe.set_params(scale__budget=budget, clf__budget=budget).fit(X, y)
    search = DPGridSearchCV(pipe, {"clf__epsilon": [0.2, 0.4]}, epsilon=None,
                            budget=budget, n_runs_mean=2,
                            random_state=_SEED + 2)
    with warnings.catch_warnings(record=True) as log, pytest.raises(BudgetExceededError) as refused:
        warnings.simplefilter("always")
        pipe.fit(X, y)  # the scaler's second 0.5 is refused
    with warnings.catch_warnings(record=True) as search_log:
        warnings.simplefilter("always")
        with pytest.raises(BudgetExceededError) as search_refused:
            search.fit(X, y)
    shown = " ".join([c.label for c in budget.ledger] + [str(w.message) for w in log + search_log]
                     + [str(refused.value), str(search_refused.value), budget.report()])
    assert any(w.category is BudgetExhaustedWarning for w in log)
    assert "DPGaussianNB" in shown
    for seed in (_SEED, _SEED + 1, _SEED + 2):
        assert str(seed) not in shown


# -- 1. a search copies the estimators in its grid -------------------------------------
def _grid_data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return rng.normal(size=(n, 2)) + y[:, None], y


def _grid_search(nb, lr, **kw):
    pipe = Pipeline([("clf", DPGaussianNB(bounds=(-4, 5), classes=[0, 1]))])
    return DPGridSearchCV(pipe, {"clf": [nb, lr]}, **{"epsilon": None, "n_runs_mean": 4, **kw})


def test_search_leaves_the_estimators_of_its_grid_untouched():
    X, y = _grid_data()
    user_budget = PrivacyBudget(100.0, 1e-5)
    nb = DPGaussianNB(bounds=(-4, 5), classes=[0, 1], budget=user_budget, random_state=7)
    lr = DPLogisticRegression(classes=[0, 1], budget=user_budget)
    search_budget = PrivacyBudget(100.0, 1e-5)
    search = _grid_search(nb, lr, budget=search_budget, random_state=0).fit(X, y)
    assert len(search_budget) == 1 and len(user_budget) == 0
    for est in (nb, lr):  # the user's objects: not fitted, their parameters as given
        assert not hasattr(est, "n_features_in_")
        assert est.budget is user_budget
    assert nb.random_state == 7
    released = search.best_estimator_.named_steps["clf"]
    assert released is not nb and released is not lr
    assert released.random_state == (7 if isinstance(released, DPGaussianNB) else None)
    assert released.budget is None  # the search's runs never keep a budget
    pickle.loads(pickle.dumps(search))  # no curve recorder left anywhere


def test_search_over_grid_estimators_runs_in_worker_processes():
    X, y = _grid_data()
    budget = PrivacyBudget(100.0, 1e-5)
    nb = DPGaussianNB(bounds=(-4, 5), classes=[0, 1])
    lr = DPLogisticRegression(classes=[0, 1])
    search = _grid_search(nb, lr, budget=budget, n_jobs=2, random_state=0).fit(X, y)
    assert len(budget) == 1
    assert search.score(X, y) > 0.5


def test_refit_false_releases_the_best_runs_model(monkeypatch):
    X, y = _grid_data()
    runs = []

    def spy(*args, **kwargs):
        noisy, candidate = one_run(*args, **kwargs)
        runs[-1].append((noisy, copy.deepcopy(candidate.named_steps["clf"].theta_)))
        return noisy, candidate

    one_run = _runs._one_run
    monkeypatch.setattr(_runs, "_one_run", spy)
    best_is_not_last = 0
    for seed in range(8):
        runs.append([])
        nb = DPGaussianNB(bounds=(-4, 5), classes=[0, 1], epsilon=0.5)
        pipe = Pipeline([("clf", DPGaussianNB(bounds=(-4, 5), classes=[0, 1]))])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = DPGridSearchCV(pipe, {"clf": [nb]}, epsilon=None, refit=False, n_runs_mean=6,
                                    random_state=seed).fit(X, y)
        best = int(np.argmax([noisy for noisy, _ in runs[-1]]))
        best_is_not_last += best != len(runs[-1]) - 1
        np.testing.assert_array_equal(search.best_estimator_.named_steps["clf"].theta_,
                                      runs[-1][best][1])
    assert best_is_not_last  # the check above could fail


# -- 2. a ColumnTransformer's output type must not depend on the rows -------------------
_CATS = ["a", "b", "c", "d"]


def _sparse_pipeline(**encoder):
    encoder = {"categories": [_CATS], "handle_unknown": "ignore", **encoder}
    ct = ColumnTransformer([("cat", OneHotEncoder(**encoder), ["cat"]),
                            ("x", "passthrough", ["x"])])  # sparse_threshold=0.3
    return Pipeline([("ct", ct), ("clf", DPLogisticRegression(classes=[0, 1]))])


def _frame(first, other, n_first, categories, n=1000, seed=0):
    """A categorical column of ``n_first`` rows ``first`` and the others ``other``, and x."""
    rng = np.random.default_rng(seed)
    cat = rng.permutation(np.array([first] * n_first + [other] * (n - n_first)))
    X = pd.DataFrame({"cat": pd.Categorical(cat, categories=categories),
                      "x": rng.uniform(-1, 1, n)})
    return X, np.arange(n) % 2


# Rows without an entry: unknown ones (ignored), or those of the dropped first category.
_NO_ENTRY = {
    # density (1[known] + 1)/5: 0.3 for the whole input, below for a training part
    # with fewer known rows (random_state=2)
    "ignore": ({}, ("a", "z", 500, _CATS + ["z"]), 2),
    # density (1[not "a"] + 1)/4: the same at 200 rows of "b" (random_state=0); the
    # dtype's first category, "b", is what the search's placeholders hold
    "drop": ({"handle_unknown": "error", "drop": "first"},
             ("a", "b", 800, ["b", "a", "c", "d"]), 0),
}


@pytest.mark.parametrize("case", sorted(_NO_ENTRY))
def test_data_dependent_sparse_stacking_is_refused_before_the_charge(case):
    # The whole input stacks dense and passes every check; a run's training part
    # stacked sparse, the classifier refused it, and the search failed after its
    # charge (on data with a few more rows with an entry, it fitted).
    encoder, rows, seed = _NO_ENTRY[case]
    X, y = _frame(*rows)
    budget = PrivacyBudget(100.0, 1e-5)
    with pytest.raises(ValueError, match="sparse"):
        DPGridSearchCV(_sparse_pipeline(**encoder), {"clf__C": [1.0]}, epsilon=None, budget=budget,
                       n_runs_mean=2, random_state=seed).fit(X, y)
    assert len(budget) == 0


@pytest.mark.parametrize("encoder,rows", [
    ({"sparse_output": False}, ("a", "z", 500, _CATS + ["z"])),
    ({"handle_unknown": "error"}, ("a", "b", 500, _CATS)),  # one entry in every row
], ids=["dense", "every-row-one-entry"])
def test_stacking_with_a_fixed_output_type_is_accepted(encoder, rows):
    X, y = _frame(*rows)
    budget = PrivacyBudget(100.0, 1e-5)
    for seed in range(4):
        DPGridSearchCV(_sparse_pipeline(**encoder), {"clf__C": [1.0]}, epsilon=None, budget=budget,
                       n_runs_mean=2, random_state=seed).fit(X, y)
    assert len(budget) == 4


# -- 4. a refused charge leaves no half-refitted model ----------------------------------
def test_a_charge_refused_by_a_missing_ledger_leaves_no_half_fitted_model(tmp_path):
    path = tmp_path / "l.sqlite"
    model = DPStandardScaler(bounds=(0, 1), budget=PrivacyBudget(10.0, 1e-5, ledger=path),
                             random_state=0).fit(_data(2))
    os.remove(path)
    with pytest.raises(FileNotFoundError):
        model.fit(_data(3))
    assert not hasattr(model, "n_features_in_") and not hasattr(model, "mean_")


# -- 5. pandas' nullable dtypes reach the search's placeholders ---------------------------
@pytest.mark.parametrize("dtype", ["Int64", "Float64", "boolean"])
def test_search_accepts_pandas_nullable_columns(dtype):
    # The placeholders were np.zeros(n, dtype=<pandas dtype>): a TypeError before the
    # charge, so no search ran on such a frame, though every skdp step accepts it.
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    x = pd.Series(y + rng.integers(0, 2, 400) > 0).astype(dtype)
    X = pd.DataFrame({"x": x, "z": rng.normal(size=400)})
    budget = PrivacyBudget(100.0, 1e-5)
    nb = DPGaussianNB(bounds=(-4, 4), classes=[0, 1])
    search = DPGridSearchCV(nb, {"epsilon": [0.5, 1.0]}, epsilon=None, budget=budget, n_runs_mean=2,
                            random_state=0).fit(X, y)
    assert len(budget) == 1
    assert search.predict(X.iloc[:5]).shape == (5,)


@pytest.fixture(autouse=True)
def _secure_takes_seeds_here(monkeypatch):
    # secure=True refuses a seed; scikit-learn's checks and the seeded comparisons in this
    # file need one: secure fits here read seeded bytes (seeded_secure of tests/_testing.py).
    from _testing import seeded_secure

    seeded_secure(monkeypatch)
