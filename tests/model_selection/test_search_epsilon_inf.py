"""A private search at a total epsilon=inf: not private, and a plain hold-out search.

Every private step runs at epsilon=inf, each candidate runs once on the
training part and is scored by its exact count of correct validation
predictions, the best is refitted at epsilon=inf: the choice and the model
are those of the non-private scikit-learn estimator on the same split.
"""

import math

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB

from skdp import BudgetExceededError, PrivacyBudget, privacy_cost
from skdp.accounting import RDPCurve
from skdp.model_selection import DPGridSearchCV, DPRandomizedSearchCV, _runs
from skdp.naive_bayes import DPGaussianNB

B = (-50.0, 50.0)


def _data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    X = rng.normal(size=(n, 3)) + 1.2 * y[:, None]
    return X, y


def test_each_candidate_runs_once_and_the_choice_is_the_non_private_one(monkeypatch):
    X, y = _data()
    runs, one_run = [], _runs._one_run

    def spy(estimator, params, seed, X_train, y_train, X_val, y_val, *rest):
        out = one_run(estimator, params, seed, X_train, y_train, X_val, y_val, *rest)
        runs.append((params, X_train, y_train, X_val, y_val, out[0]))
        return out

    monkeypatch.setattr(_runs, "_one_run", spy)
    grid = {"var_smoothing": [1e-9, 10.0, 1e3]}
    search = DPGridSearchCV(DPGaussianNB(bounds=B, classes=[0, 1], epsilon=0.5), grid,
                            epsilon=math.inf, random_state=0).fit(X, y)
    # each candidate once, in order, at epsilon=inf, with exact counts (scikit-learn's)
    assert [p["var_smoothing"] for p, *_ in runs] == grid["var_smoothing"]
    assert all(p["epsilon"] == math.inf for p, *_ in runs)
    counts = []
    for params, X_train, y_train, X_val, y_val, count in runs:
        exact = GaussianNB(var_smoothing=params["var_smoothing"]).fit(X_train, y_train)
        assert count == int(np.sum(exact.predict(X_val) == y_val))
        counts.append(count)
    best = int(np.argmax(counts))
    assert search.best_index_ == best
    assert search.best_params_ == {"epsilon": math.inf, "var_smoothing": grid["var_smoothing"][best]}
    assert search.best_score_ == counts[best] / len(runs[0][4])
    # the refit is scikit-learn's on all the data
    refit = GaussianNB(var_smoothing=grid["var_smoothing"][best]).fit(X, y)
    np.testing.assert_array_equal(search.predict(X), refit.predict(X))
    np.testing.assert_allclose(search.best_estimator_.theta_, refit.theta_, rtol=1e-12)
    assert search.epsilon_spent_ == math.inf
    assert search.privacy_curve_ == RDPCurve.non_private()
    assert search.candidates_ == [{"epsilon": math.inf, "var_smoothing": v}
                                  for v in grid["var_smoothing"]]


def test_a_finite_budget_refuses_it_before_any_run_and_an_infinite_one_records_it():
    X, y = _data()
    nb = DPGaussianNB(bounds=B, classes=[0, 1])
    budget = PrivacyBudget(100.0, 1e-5)
    search = DPGridSearchCV(nb, {"var_smoothing": [1e-9, 1e-3]}, epsilon=math.inf, budget=budget)
    with pytest.raises(BudgetExceededError), pytest.warns(UserWarning):
        search.fit(X, y)
    assert len(budget) == 0 and not hasattr(search, "best_estimator_")
    assert privacy_cost(search, X, y).epsilon == math.inf
    unlimited = PrivacyBudget(math.inf, 1e-5)
    search.set_params(budget=unlimited).fit(X, y)
    assert len(unlimited) == 1
    assert "epsilon=inf: not private" in unlimited.ledger[0].label


def test_the_randomized_search_runs_its_candidates_once_too(monkeypatch):
    X, y = _data()
    runs, one_run = [], _runs._one_run
    monkeypatch.setattr(_runs, "_one_run", lambda *a: runs.append(a[1]) or one_run(*a))
    search = DPRandomizedSearchCV(DPGaussianNB(bounds=B, classes=[0, 1]),
                                  {"var_smoothing": [1e-9, 1e-6, 1e-3, 1.0]}, n_iter=3,
                                  epsilon=math.inf, random_state=0).fit(X, y)
    assert runs == search.candidates_ and len(runs) == 3
    assert search.best_params_ in search.candidates_ and search.epsilon_spent_ == math.inf


def test_the_grid_may_not_set_the_epsilon_that_infinity_sets():
    X, y = _data()
    search = DPGridSearchCV(DPGaussianNB(bounds=B, classes=[0, 1]), {"epsilon": [0.1, 1.0]},
                            epsilon=math.inf)
    with pytest.raises(ValueError, match=r"sets \['epsilon'\] itself"):
        search.fit(X, y)
