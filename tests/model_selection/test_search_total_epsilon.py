"""A private search given its total epsilon splits it itself, before the charge."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline

from skdp import PrivacyBudget, privacy_cost
from skdp.model_selection import DPGridSearchCV, DPRandomizedSearchCV
from skdp.model_selection._search import REFIT_SHARES
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
    # The largest per-run epsilon (to 0.01%) whose search fits the total.
    assert epsilon * (1 - 1e-3) <= spent <= epsilon
    assert cost.epsilon == pytest.approx(spent, rel=1e-9)
    assert search.best_params_["epsilon"] < epsilon
    assert f"score_epsilon={0.1 * epsilon:g}" in budget.ledger[0].label


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
    # With refit=True and a total epsilon, the released model alone costs one of the
    # REFIT_SHARES of it (RDP, at the accounting delta: the largest that leaves room for
    # runs of a tenth of its epsilon); the runs get what is left, less than the refit.
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    search = DPGridSearchCV(DPGaussianNB(bounds=B, classes=[0, 1]),
                            {"var_smoothing": [1e-9, 1e-2]}, epsilon=4.0, budget=budget,
                            random_state=0).fit(X, y)
    refit_epsilon = search.best_estimator_.privacy_curve_.epsilon(1e-5)
    share = min(REFIT_SHARES, key=lambda s: abs(s * 4.0 - refit_epsilon))
    assert share * 4.0 * (1 - 1e-3) <= refit_epsilon <= share * 4.0
    assert search.best_params_["epsilon"] > search.candidates_[0]["epsilon"]
    assert 4.0 * (1 - 1e-3) <= budget.spent()[0] <= 4.0
    # without refit, the runs get the whole total
    no_refit = DPGridSearchCV(DPGaussianNB(bounds=B, classes=[0, 1]),
                              {"var_smoothing": [1e-9, 1e-2]}, epsilon=4.0, refit=False,
                              random_state=0).fit(X, y)
    assert no_refit.candidates_[0]["epsilon"] > search.candidates_[0]["epsilon"]
