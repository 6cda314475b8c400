"""DPRandomizedSearchCV takes n_iter, scikit-learn's name for its number of candidates."""

import numpy as np
import pytest
from scipy.stats import loguniform
from sklearn.base import clone

from skdp import PrivacyBudget
from skdp.model_selection import DPRandomizedSearchCV
from skdp.naive_bayes import DPGaussianNB


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    return rng.normal(size=(n, 2)) + 2 * y[:, None], y


def _search(**kwargs):
    nb = DPGaussianNB(bounds=([-3, -3], [5, 5]), classes=[0, 1])
    return DPRandomizedSearchCV(nb, {"epsilon": loguniform(0.05, 1.0)}, epsilon=None,
                                n_runs_mean=2, random_state=0, **kwargs)


@pytest.mark.parametrize("kwargs, n", [({"n_iter": 3}, 3), ({"n_candidates": 3}, 3),
                                       ({"n_iter": 4, "n_candidates": 4}, 4), ({}, 10)])
def test_n_iter_sets_the_number_of_candidates(kwargs, n):
    X, y = _data()
    search = _search(**kwargs).fit(X, y)
    assert len(search.candidates_) == n


def test_n_iter_and_n_candidates_draw_the_same_candidates():
    X, y = _data()
    a = _search(n_iter=4).fit(X, y)
    b = _search(n_candidates=4).fit(X, y)
    assert a.candidates_ == b.candidates_


def test_n_iter_is_a_parameter():
    search = _search(n_iter=7)
    assert search.get_params()["n_iter"] == 7
    assert clone(search).n_iter == 7
    assert search.set_params(n_iter=2).n_iter == 2


@pytest.mark.parametrize("kwargs, match", [
    ({"n_iter": 3, "n_candidates": 4}, "two names"),
    ({"n_iter": 0}, "n_iter must be an integer >= 1"),
    ({"n_iter": True}, "n_iter must be an integer >= 1"),
    ({"n_candidates": 2.5}, "n_candidates must be an integer >= 1"),
])
def test_bad_n_iter_is_refused_before_any_charge(kwargs, match):
    X, y = _data()
    budget = PrivacyBudget(10.0, 1e-5)
    with pytest.raises(ValueError, match=match):
        _search(budget=budget, **kwargs).fit(X, y)
    assert budget.spent()[0] == 0.0 and len(budget.ledger) == 0
