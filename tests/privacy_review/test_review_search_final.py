"""Regressions from the final review of skdp/model_selection/_search.py (fixed; each failed before).

1. A ColumnTransformer clones its transformers at fit: the fitted copies in
   ``transformers_`` keep the secret seed (and the curve recorder) that
   ``_private_fit`` put in the templates, because ``set_params`` restores only
   the templates. Refitting the released fitted step with its kept seed on
   the same data replays its noise exactly (the 224dd71 leak, through a
   ColumnTransformer); the search cannot be pickled, and under loky
   (n_jobs=2) it fails after its charge (the run's model cannot leave the worker).
2. ``classes=None`` given in the parameter grid (while the estimator has
   ``classes``) is not filled with the label set read before the charge:
   ``_label_set`` looks at ``self.estimator`` only, so that candidate reads
   its training part's labels and fails after the charge when a rare label
   lands in the validation part (the 1ae30b4 fix, bypassed through the grid).
"""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline

from skdp import PrivacyBudget
from skdp.linear_model import DPLogisticRegression
from skdp.model_selection import DPGridSearchCV
from skdp.preprocessing import DPStandardScaler


def _data(n=600, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = pd.DataFrame(rng.normal(size=(n, 3)) + y[:, None], columns=["a", "b", "c"])
    return X, y


def _ct_pipeline():
    scaler = DPStandardScaler(bounds=([-4] * 3, [5] * 3), epsilon=0.5, random_state=3)
    ct = ColumnTransformer([("num", scaler, ["a", "b", "c"])])
    return Pipeline([("ct", ct), ("clf", DPLogisticRegression(classes=[0, 1], random_state=5))])


def test_column_transformer_fitted_step_keeps_the_users_seed():
    X, y = _data()
    search = DPGridSearchCV(_ct_pipeline(), {"clf__C": [1.0]}, epsilon=None, n_runs_mean=2,
                            random_state=0).fit(X, y)
    fitted = search.best_estimator_.named_steps["ct"].named_transformers_["num"]
    # Replay: the fitted step with its kept seed, refit on the same data.
    replay = clone(fitted).set_params(budget=None).fit(X)
    assert not np.array_equal(replay.mean_, fitted.mean_)
    assert fitted.random_state == 3
    assert fitted.budget is None
    pickle.dumps(search)


def test_classes_none_from_the_grid_gets_the_label_set():
    X, _ = _data(n=1500)
    y = np.zeros(1500, dtype=int)
    y[5] = 1  # one row of label 1; with random_state=10 it lands in the validation part
    budget = PrivacyBudget(100.0, 1e-5)
    search = DPGridSearchCV(DPLogisticRegression(classes=[0, 1], random_state=1),
                            {"classes": [None]}, epsilon=None, budget=budget, n_runs_mean=3,
                            random_state=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)  # the standalone path (estimator classes=None) succeeds here
    assert list(search.classes_) == [0, 1]
