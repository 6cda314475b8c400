"""DPRandomForestClassifier(n_jobs=...): trees grown in joblib threads, the same forest whatever n_jobs."""

import numpy as np
import pytest

from skdp import PrivacyBudget
from skdp.ensemble import DPRandomForestClassifier

rng = np.random.default_rng(0)
X = rng.uniform(0, 1, size=(2000, 5))
Y = (X[:, 0] + X[:, 1] > 1).astype(int)


def _forest(**params):
    return DPRandomForestClassifier(n_estimators=8, bounds=(0, 1), classes=[0, 1], **params)


def test_the_same_seed_grows_the_same_forest_whatever_n_jobs():
    fits = [_forest(n_jobs=n_jobs, random_state=3).fit(X, Y) for n_jobs in (None, 1, 2, -1)]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.predict_proba(X), fits[0].predict_proba(X))
        np.testing.assert_array_equal(other.feature_importances_, fits[0].feature_importances_)
    # and another seed grows another forest (the trees' generators come from the seed)
    assert not np.array_equal(_forest(n_jobs=2, random_state=4).fit(X, Y).predict_proba(X),
                              fits[0].predict_proba(X))


def test_the_trees_of_a_forest_differ():
    # each tree has its own generator: no two trees draw the same noise
    forest = _forest(n_jobs=2, random_state=0).fit(X, Y)
    leaves = [tree.value for tree in forest._trees]
    assert all(not np.array_equal(leaves[0], other) for other in leaves[1:])


def test_secure_forest_in_threads():
    forest = _forest(n_jobs=2, secure=True).fit(X, Y)
    assert forest.score(X, Y) > 0.8  # 8 trees at epsilon=1 on 2000 rows: about 0.9


@pytest.mark.parametrize("n_jobs", [0, 1.5, "2", True])
def test_bad_n_jobs_costs_nothing(n_jobs):
    budget = PrivacyBudget(10.0, 1e-5)
    with pytest.raises(ValueError, match="n_jobs must be None or a nonzero int"):
        _forest(n_jobs=n_jobs, budget=budget).fit(X, Y)
    assert len(budget) == 0
