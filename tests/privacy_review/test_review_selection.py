"""Regression tests from an independent privacy review of skdp.model_selection.

The private search replaces each candidate's ``random_state`` by a fresh seed
drawn from the search's (secret) generator, and leaves that seed in the
released model's parameters. Whoever holds ``best_estimator_`` can then re-run
its fit with the same seed on each of two neighbouring datasets and see which
one reproduces the released values exactly: the noise is known, so the release
is not differentially private at all (ε = ∞), whatever the charge says.
Fixed: the released models get the user's ``random_state`` values back. Also,
a label outside the public ``classes`` is now refused before the charge.
Both tests failed before the fixes.
"""

import numpy as np
import pytest
from sklearn.base import clone

from skdp.model_selection import DPGridSearchCV
from skdp.naive_bayes import DPGaussianNB


def test_released_model_does_not_reveal_its_noise_seed():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, size=500)
    X = rng.normal(size=(500, 2)) + 2 * y[:, None]
    X_minus, y_minus = X[:-1], y[:-1]  # the neighbour without the last row
    nb = DPGaussianNB(bounds=([-3, -3], [5, 5]), classes=[0, 1])
    search = DPGridSearchCV(nb, {"epsilon": [0.1, 0.5]}, epsilon=None,
                            score_epsilon=0.2, refit=True,
                            random_state=12345).fit(X, y)
    released = search.best_estimator_

    def reproduces(X_a, y_a):
        # An attacker who sees only the released model (its params and fitted values).
        again = clone(released).fit(X_a, y_a)
        return np.array_equal(again.theta_, released.theta_) and np.array_equal(
            again.var_, released.var_)

    # With the seed released, the true dataset is reproduced bit for bit and its neighbour is
    # not: a perfect membership test. With fresh noise neither is reproduced (the noise is
    # continuous, so an exact match has probability 0).
    assert not (reproduces(X, y) and not reproduces(X_minus, y_minus))


def test_unknown_label_costs_no_budget():
    from skdp import PrivacyBudget

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=300)  # label 2 is not in classes
    X = rng.normal(size=(300, 2))
    budget = PrivacyBudget(100.0, 1e-5)
    nb = DPGaussianNB(bounds=([-3, -3], [5, 5]), classes=[0, 1])
    with pytest.raises(ValueError, match="not in classes"):
        DPGridSearchCV(nb, {"epsilon": [0.1]}, epsilon=None,
                       budget=budget, random_state=0).fit(X, y)
    assert len(budget) == 0


def test_user_generator_state_does_not_reveal_the_number_of_runs():
    # The search draws once from a Generator passed as random_state, whatever the
    # (secret) number of runs K: afterwards its state is the same for every K.
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, size=200)
    X = rng.normal(size=(200, 2)) + 2 * y[:, None]
    nb = DPGaussianNB(bounds=([-3, -3], [5, 5]), classes=[0, 1])
    states = set()
    for mean in (1.5, 30):  # very different K
        gen = np.random.default_rng(7)
        DPGridSearchCV(nb, {"epsilon": [0.1, 0.5]}, epsilon=None,
                       n_runs_mean=mean, random_state=gen).fit(X, y)
        states.add(int(gen.integers(2**62)))
    assert len(states) == 1


def test_callable_column_selection_is_refused_before_the_charge():
    from sklearn.compose import ColumnTransformer, make_column_selector
    from sklearn.pipeline import make_pipeline

    from skdp import PrivacyBudget

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=100)
    X = rng.normal(size=(100, 2))
    nb = DPGaussianNB(bounds=([-3, -3], [5, 5]), classes=[0, 1])
    peek = ColumnTransformer([("keep", "passthrough", lambda X: [0, 1])])
    budget = PrivacyBudget(10.0, 1e-5)
    with pytest.raises(ValueError, match="callable"):
        DPGridSearchCV(make_pipeline(peek, nb), {"dpgaussiannb__epsilon": [0.1]},
                       epsilon=None, budget=budget, random_state=0).fit(X, y)
    assert len(budget) == 0
    # make_column_selector reads only dtypes and names: allowed
    by_dtype = ColumnTransformer([("keep", "passthrough", make_column_selector(dtype_include="number"))])
    import pandas as pd
    DPGridSearchCV(make_pipeline(by_dtype, nb), {"dpgaussiannb__epsilon": [0.1]},
                   epsilon=None, random_state=0).fit(pd.DataFrame(X, columns=["a", "b"]), y)
