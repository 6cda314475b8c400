"""A private search given its total epsilon splits it itself, before the charge."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline

from skdp import PrivacyBudget, privacy_cost
from skdp.model_selection import DPGridSearchCV, DPRandomizedSearchCV
from skdp.accounting import zcdp_rdp, zcdp_to_epsilon
from skdp.model_selection._plan import REFIT_SHARE_TOL, REFIT_SHARES
from skdp.naive_bayes import DPGaussianNB
from skdp.preprocessing import DPStandardScaler

B = (-3.0, 3.0)


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    return X, (X[:, 0] + X[:, 1] > 0).astype(int)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("refit", [True, False])
def test_the_search_spends_its_total_epsilon(epsilon, refit):
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    search = DPGridSearchCV(DPGaussianNB(bounds=B, classes=[0, 1]),
                            {"var_smoothing": [1e-9, 1e-2]}, epsilon=epsilon, refit=refit,
                            budget=budget, random_state=0)
    cost = privacy_cost(search, X, y)
    search.fit(X, y)
    spent = budget.spent()[0]
    # The largest per-run epsilon (to 0.01%) whose search fits the total. The cost jumps
    # where a run's DPGaussianNB turns from Laplace to Gaussian noise (at a total of 4, from
    # 3.966 to 4.09 within 0.01% of the runs' epsilon), so the spend is within 1% of it.
    assert epsilon * (1 - 1e-2) <= spent <= epsilon
    assert cost.epsilon == pytest.approx(spent, rel=1e-9)
    assert search.best_params_["epsilon"] < epsilon
    assert (f"score_epsilon={0.1 * epsilon:g} at delta=1e-05 (discrete Gaussian)"
            in budget.ledger[0].label)


def test_the_steps_keep_their_shares():
    X, y = _data()
    pipe = make_pipeline(DPStandardScaler(bounds=B, epsilon=0.5),
                         DPGaussianNB(bounds=(-10, 10), epsilon=1.0, classes=[0, 1]))
    search = DPRandomizedSearchCV(pipe, {"dpgaussiannb__var_smoothing": [1e-9, 1e-3]},
                                  n_candidates=2, epsilon=2.0, random_state=0).fit(X, y)
    params = search.best_params_
    assert params["dpgaussiannb__epsilon"] == pytest.approx(2 * params["dpstandardscaler__epsilon"])
    assert 2.0 * (1 - 1e-3) <= search.epsilon_spent_ <= 2.0


def test_bad_total_epsilon_is_refused_before_the_charge():
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    nb = DPGaussianNB(bounds=B, classes=[0, 1])
    bad = [
        (DPGridSearchCV(nb, {"epsilon": [0.1, 1.0]}, epsilon=1.0, budget=budget), "sets"),
        (DPGridSearchCV(nb, {"var_smoothing": [1e-9]}, epsilon=0.1, score_epsilon=0.5,
                        budget=budget), "too small"),
        (DPGridSearchCV(nb, {"var_smoothing": [1e-9]}, epsilon=-1.0, budget=budget), "epsilon"),
        (DPGridSearchCV(clone(nb).set_params(epsilon=np.inf), {"var_smoothing": [1e-9]}, epsilon=1.0,
                        budget=budget), "finite"),
    ]
    for search, match in bad:
        with pytest.raises(ValueError, match=match):
            search.fit(X, y)
    assert len(budget) == 0


def test_the_refit_keeps_its_share_of_the_total():
    # With refit=True and a total epsilon, the released model alone costs three quarters
    # of it where that leaves room for runs of a tenth of its epsilon (RDP, at the
    # accounting delta); the runs get what is left, less than the refit.
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    search = DPGridSearchCV(DPGaussianNB(bounds=B, classes=[0, 1]),
                            {"var_smoothing": [1e-9, 1e-2]}, epsilon=4.0, budget=budget,
                            random_state=0).fit(X, y)
    refit_epsilon = search.best_estimator_.privacy_curve_.epsilon(1e-5)
    assert REFIT_SHARES[0] * 4.0 * (1 - 1e-3) <= refit_epsilon <= REFIT_SHARES[0] * 4.0
    assert search.best_params_["epsilon"] > search.candidates_[0]["epsilon"]
    assert 4.0 * (1 - 1e-2) <= budget.spent()[0] <= 4.0  # within 1%: see above
    # without refit, the runs get the whole total
    no_refit = DPGridSearchCV(DPGaussianNB(bounds=B, classes=[0, 1]),
                              {"var_smoothing": [1e-9, 1e-2]}, epsilon=4.0, refit=False,
                              random_state=0).fit(X, y)
    assert no_refit.candidates_[0]["epsilon"] > search.candidates_[0]["epsilon"]


def test_a_small_total_raises_the_refit_share_by_bisection():
    # At a total of 0.1 three quarters leave no room for the runs here, 0.6 does: the
    # share is then raised towards 0.75, to REFIT_SHARE_TOL, not left at 0.6.
    X, y = _data()
    search = DPGridSearchCV(DPGaussianNB(bounds=B, classes=[0, 1]),
                            {"var_smoothing": [1e-9, 1e-2]}, epsilon=0.1, random_state=0)
    search.fit(X, y)
    share = search.best_estimator_.privacy_curve_.epsilon(1e-5) / 0.1
    assert REFIT_SHARES[1] + REFIT_SHARE_TOL < share < REFIT_SHARES[0]
    assert 0.1 * (1 - 1e-3) <= search.epsilon_spent_ <= 0.1
    # the runs keep at least a tenth of the refit's epsilon
    assert search.candidates_[0]["epsilon"] >= 0.1 * search.best_params_["epsilon"]


@pytest.mark.parametrize("epsilon", [0.05, 1.0, 20.0])
def test_with_a_total_epsilon_the_counts_are_gaussian_at_a_tenth_of_it(epsilon):
    search = DPGridSearchCV(DPGaussianNB(bounds=B, classes=[0, 1]), {"var_smoothing": [1e-9]},
                            epsilon=epsilon, delta=1e-6)
    counts = search._score_mechanism()
    curve = counts.privacy_curve()
    # one count alone is (epsilon/10, delta)-DP by Bun & Steinke's conversion, to round-off
    bs16 = zcdp_to_epsilon(counts.rho, 1e-6, method="bs16")
    assert bs16 <= 0.1 * epsilon and bs16 == pytest.approx(0.1 * epsilon, rel=1e-8)
    assert curve == zcdp_rdp(counts.rho).with_event(curve.event)
    assert curve.event.sigma == counts.sigma
    assert counts.sigma ** 2 * 2 * counts.rho >= 1.0  # the sigma drawn is at least the charged one
    draws = counts.sample_noise(20_000, random_state=0)
    # the std of 20,000 draws is within 3% of sigma (its relative s.e. is 1/sqrt(2n) = 0.5%)
    assert np.std(draws) == pytest.approx(counts.sigma, rel=0.03)
    # an explicit score_epsilon, or no total, keeps pure-DP Laplace counts
    for laplace in (search.set_params(score_epsilon=0.2), search.set_params(epsilon=None)):
        assert type(laplace._score_mechanism()).__name__ == "DiscreteLaplaceMechanism"
    assert type(search.set_params(epsilon=1.0, delta=0.0)._score_mechanism()).__name__ \
        == "DiscreteLaplaceMechanism"


def test_the_plan_probes_each_candidate_once_per_epsilon_and_size(monkeypatch):
    # The plan tries many scales of the candidates' epsilon; each (candidate, scale, size)
    # is probed once, and the public steps before the private ones transform the
    # placeholder rows once per size (on Adult they took most of the plan's 13 s).
    from sklearn.preprocessing import FunctionTransformer

    from skdp.model_selection import _plan

    X, y = _data()
    probed, real = [], _plan._train_curve

    def counting(estimator, params, X_like, y_like, n, cache=None):
        probed.append((n, tuple(sorted(params.items()))))
        return real(estimator, params, X_like, y_like, n, cache)

    on_placeholders = []

    def public(Z):
        on_placeholders.append(len(Z)) if not np.any(Z) else None
        return Z

    monkeypatch.setattr(_plan, "_train_curve", counting)
    pipe = make_pipeline(FunctionTransformer(public),
                         DPGaussianNB(bounds=B, classes=[0, 1], epsilon=1.0))
    search = DPGridSearchCV(pipe, {"dpgaussiannb__var_smoothing": [1e-9, 1e-2]}, epsilon=1.0,
                            random_state=0).fit(X, y)
    assert len(probed) == len(set(probed)) > 8
    assert len(on_placeholders) == len(set(on_placeholders)) == 2  # the training part, all rows
    assert 1.0 * (1 - 1e-2) <= search.epsilon_spent_ <= 1.0


def test_by_default_a_search_costs_what_one_fit_of_its_estimator_costs():
    # epsilon="auto": the total is the estimator's own epsilon (one fit's cost at the
    # search's delta), read before the fit; never the runs' sum or the selection's multiple.
    X, y = _data()
    nb = DPGaussianNB(bounds=B, classes=[0, 1], epsilon=1.0)
    pipe = make_pipeline(DPStandardScaler(bounds=B, epsilon=0.5),
                         DPGaussianNB(bounds=(-10, 10), epsilon=1.0, classes=[0, 1]))
    for estimator, grid in [(nb, {"var_smoothing": [1e-9, 1e-2]}),
                            (pipe, {"dpgaussiannb__var_smoothing": [1e-9, 1e-2]})]:
        budget = PrivacyBudget(100.0, 1e-5)
        own = privacy_cost(estimator, X, y, delta=1e-5).epsilon
        search = DPGridSearchCV(estimator, grid, budget=budget, random_state=0)
        assert search.epsilon == "auto"
        cost = privacy_cost(search, X, y)
        search.fit(X, y)
        spent = budget.spent()[0]
        assert len(budget) == 1 and cost.epsilon == pytest.approx(spent, rel=1e-9)
        assert own * (1 - 1e-2) <= spent <= own * (1 + 1e-12)
    # the estimator at epsilon=inf: the search is not private either
    inf = DPGridSearchCV(clone(nb).set_params(epsilon=np.inf), {"var_smoothing": [1e-9]})
    assert privacy_cost(inf, X, y).epsilon == np.inf


def test_by_default_the_grid_may_not_set_a_steps_epsilon():
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    nb = DPGaussianNB(bounds=B, classes=[0, 1])
    with pytest.raises(ValueError, match=r"epsilon='auto' \(the default\).*epsilon=None"):
        DPGridSearchCV(nb, {"epsilon": [0.1, 1.0]}, budget=budget).fit(X, y)
    with pytest.raises(ValueError, match="epsilon must be 'auto', a float > 0 or None"):
        DPGridSearchCV(nb, {"var_smoothing": [1e-9]}, epsilon="total", budget=budget).fit(X, y)
    assert len(budget) == 0
    # epsilon=None searches over them, each run spending its candidate's epsilon
    DPGridSearchCV(nb, {"epsilon": [0.1, 1.0]}, epsilon=None, budget=budget).fit(X, y)
    assert len(budget) == 1
