"""One budget across Pipeline, ColumnTransformer, cross-validation and the sklearn searches.

Every fit charges the one ledger exactly once (every CV fit, the refit, every
step of a pipeline), on the joblib backends loky (n_jobs=1 and -1),
threading and dask, and a search that reaches the cap never fits over it.

The first tests use two tiny private estimators defined here (their curve is
known in closed form); the last ones use real skdp estimators.
"""

import sys
import warnings

import cloudpickle
import joblib
import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import (
    GridSearchCV,
    RandomizedSearchCV,
    cross_val_score,
    cross_validate,
)
from sklearn.pipeline import Pipeline

from skdp import BudgetExceededError, BudgetExhaustedWarning, PrivacyBudget
from skdp.accounting import RDPCurve, epsilon_of, gaussian_rdp

# Worker processes cannot import a test module (pytest imports it under its
# own name): send the classes defined here by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

# ---------------------------------------------------------------------------
# Two tiny private estimators: Gaussian noisy means with a closed-form curve.
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp._base import DPEstimatorMixin
from skdp.accounting import gaussian_rdp
from skdp.utils import check_generator


def _clip_rows(X, norm):
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X * np.minimum(1.0, norm / np.maximum(norms, 1e-300))


def _noisy_sums_and_counts(X, groups, n_groups, noise_multiplier, rng):
    # One row changes one group's (clipped sum, count) by at most (1, 1) in L2
    # norm sqrt(2): Gaussian noise of std σ·sqrt(2) on every coordinate.
    X = _clip_rows(X, 1.0)
    sums = np.zeros((n_groups, X.shape[1]))
    np.add.at(sums, groups, X)
    counts = np.bincount(groups, minlength=n_groups).astype(float)
    std = noise_multiplier * np.sqrt(2.0)
    sums += rng.normal(0.0, std, size=sums.shape)
    counts += rng.normal(0.0, std, size=counts.shape)
    return sums / np.maximum(counts, 1.0)[:, None]


class NoisyCentering(DPEstimatorMixin, TransformerMixin, BaseEstimator):
    """Subtract a noisy mean of the L2-clipped rows."""

    def __init__(self, noise_multiplier=5.0, budget=None, random_state=None):
        self.noise_multiplier = noise_multiplier
        self.budget = budget
        self.random_state = random_state

    def fit(self, X, y=None):
        X = validate_data(self, X, dtype=float)
        self._charge_budget(gaussian_rdp(self.noise_multiplier))
        rng = check_generator(self.random_state)
        groups = np.zeros(X.shape[0], dtype=int)
        self.mean_ = _noisy_sums_and_counts(X, groups, 1, self.noise_multiplier, rng)[0]
        return self

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        return X - self.mean_


class NoisyCentroids(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Nearest noisy class centroid, for the public classes ``classes``."""

    def __init__(self, noise_multiplier=5.0, classes=(0, 1), budget=None, random_state=None):
        self.noise_multiplier = noise_multiplier
        self.classes = classes
        self.budget = budget
        self.random_state = random_state

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=float)
        classes = np.asarray(self.classes)
        if not np.all(np.isin(y, classes)):
            raise ValueError("y has labels outside the public classes.")
        self._charge_budget(gaussian_rdp(self.noise_multiplier))
        rng = check_generator(self.random_state)
        self.classes_ = classes
        groups = np.searchsorted(classes, y)
        self.centroids_ = _noisy_sums_and_counts(X, groups, classes.size, self.noise_multiplier, rng)
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        d = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(d, axis=1)]


# ---------------------------------------------------------------------------
DELTA = 1e-5


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    X = rng.normal(size=(n, 3)) + y[:, None]
    return X, y


def _pipe(sigma_t=6.0, sigma_c=5.0):
    return Pipeline([("center", NoisyCentering(sigma_t, random_state=0)),
                     ("clf", NoisyCentroids(sigma_c, random_state=0))])


def _budget(epsilon=1e3):
    return PrivacyBudget(epsilon=epsilon, delta=DELTA)


def _assert_ledger(budget, curves):
    """The ledger has exactly these charges (as a multiset) and composes to them."""
    got = sorted(tuple(np.round(c.curve.rdp, 12)) for c in budget.ledger)
    want = sorted(tuple(np.round(c.rdp, 12)) for c in curves)
    assert len(budget) == len(curves)
    assert got == want
    # composed by the budget's default accountant (the smaller of RDP and PLD)
    assert budget.spent()[0] == pytest.approx(epsilon_of(sum(curves, RDPCurve.zero()), DELTA), rel=1e-9)


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


BACKENDS = [("loky", 1), ("loky", -1), ("threading", 2), ("dask", -1)]


@pytest.fixture(params=BACKENDS, ids=[f"{b}-{n}" for b, n in BACKENDS])
def backend(request):
    name, n_jobs = request.param
    if name == "dask":
        request.getfixturevalue("dask_client")
    return name, n_jobs


def _run(backend, func):
    name, n_jobs = backend
    with joblib.parallel_config(backend=name, n_jobs=n_jobs):
        return func()


# -- Pipeline and ColumnTransformer ---------------------------------------------
def test_pipeline_charges_each_step_once():
    X, y = _data()
    budget = _budget()
    pipe = _pipe().set_params(center__budget=budget, clf__budget=budget)
    pipe.fit(X, y)
    _assert_ledger(budget, [gaussian_rdp(6.0), gaussian_rdp(5.0)])
    pipe.predict(X)  # predicting is post-processing: no charge
    assert len(budget) == 2


def test_column_transformer_charges_each_transformer_once():
    X, y = _data()
    budget = _budget()
    ct = ColumnTransformer([("a", NoisyCentering(6.0, budget=budget, random_state=0), [0, 1]),
                            ("b", NoisyCentering(7.0, budget=budget, random_state=0), [2])])
    pipe = Pipeline([("ct", ct), ("clf", NoisyCentroids(5.0, budget=budget, random_state=0))])
    pipe.fit(X, y)
    _assert_ledger(budget, [gaussian_rdp(6.0), gaussian_rdp(7.0), gaussian_rdp(5.0)])


# -- cross-validation and the searches, on every backend --------------------------
def test_cross_val_score(backend):
    X, y = _data()
    budget = _budget()
    pipe = _pipe().set_params(center__budget=budget, clf__budget=budget)
    scores = _run(backend, lambda: cross_val_score(pipe, X, y, cv=3, n_jobs=backend[1]))
    assert np.all(np.isfinite(scores))
    _assert_ledger(budget, 3 * [gaussian_rdp(6.0), gaussian_rdp(5.0)])


def test_cross_validate(backend):
    X, y = _data()
    budget = _budget()
    pipe = _pipe().set_params(center__budget=budget, clf__budget=budget)
    out = _run(backend, lambda: cross_validate(pipe, X, y, cv=4, n_jobs=backend[1],
                                               return_train_score=True))
    assert np.all(np.isfinite(out["test_score"]))
    _assert_ledger(budget, 4 * [gaussian_rdp(6.0), gaussian_rdp(5.0)])


def test_grid_search_charges_every_fit_and_the_refit(backend):
    X, y = _data()
    budget = _budget()
    pipe = _pipe().set_params(center__budget=budget, clf__budget=budget)
    search = GridSearchCV(pipe, {"clf__noise_multiplier": [4.0, 8.0]}, cv=3, n_jobs=backend[1],
                          error_score="raise")
    _run(backend, lambda: search.fit(X, y))
    best = search.best_params_["clf__noise_multiplier"]
    # 2 candidates × 3 folds, each fitting both steps, plus the refit of the best.
    expected = 6 * [gaussian_rdp(6.0)] + 3 * [gaussian_rdp(4.0)] + 3 * [gaussian_rdp(8.0)]
    expected += [gaussian_rdp(6.0), gaussian_rdp(best)]
    _assert_ledger(budget, expected)


def test_randomized_search_charges_every_fit_and_the_refit(backend):
    X, y = _data()
    budget = _budget()
    pipe = _pipe().set_params(center__budget=budget, clf__budget=budget)
    search = RandomizedSearchCV(pipe, {"center__noise_multiplier": [5.0, 9.0, 12.0]}, n_iter=2,
                                cv=2, n_jobs=backend[1], random_state=0, error_score="raise")
    _run(backend, lambda: search.fit(X, y))
    tried = [p["center__noise_multiplier"] for p in search.cv_results_["params"]]
    best = search.best_params_["center__noise_multiplier"]
    expected = [gaussian_rdp(s) for s in tried for _ in range(2)] + [gaussian_rdp(best)]
    expected += 5 * [gaussian_rdp(5.0)]
    _assert_ledger(budget, expected)


# -- the cap, reached in the middle of a search -------------------------------------
def _cap_after(k_fits, sigma=5.0):
    # A cap between the spend of k and k + 1 Gaussian fits (the budget's default accountant).
    lo = epsilon_of(k_fits * gaussian_rdp(sigma), DELTA)
    hi = epsilon_of((k_fits + 1) * gaussian_rdp(sigma), DELTA)
    return (lo + hi) / 2


def test_cap_mid_search_nan_scores_warn_and_never_overspend():
    X, y = _data()
    budget = _budget(_cap_after(4))
    clf = NoisyCentroids(5.0, budget=budget, random_state=0)
    # Default error_score=np.nan: refused fits become NaN scores.
    search = GridSearchCV(clf, {"random_state": [0, 1, 2]}, cv=3, refit=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)
    kinds = {w.category for w in caught}
    assert BudgetExhaustedWarning in kinds and FitFailedWarning in kinds
    message = next(str(w.message) for w in caught if w.category is BudgetExhaustedWarning)
    assert "budget ran out" in message and 'error_score="raise"' in message
    assert len(budget) == 4
    assert budget.spent()[0] <= budget.epsilon
    # The first candidate's 3 fits and one more were accepted; the rest are NaN.
    mean = search.cv_results_["mean_test_score"]
    assert np.isfinite(mean[0]) and np.isnan(mean[1:]).all()
    assert np.isfinite(search.cv_results_["split0_test_score"][1])


def test_refit_over_the_cap_raises():
    X, y = _data()
    budget = _budget(_cap_after(3))
    clf = NoisyCentroids(5.0, budget=budget, random_state=0)
    search = GridSearchCV(clf, {"random_state": [0]}, cv=3)
    with pytest.warns(BudgetExhaustedWarning) as warned:
        with pytest.raises(BudgetExceededError) as refused:
            search.fit(X, y)  # the 3 CV fits pass; the refit is refused
    assert len(budget) == 3
    # said once: the error has the whole story, the warning only points at it
    assert str(refused.value) not in str(warned[0].message)
    assert "BudgetExceededError says why" in str(warned[0].message)


def test_cap_mid_search_error_score_raise_stops():
    X, y = _data()
    budget = _budget(_cap_after(2))
    clf = NoisyCentroids(5.0, budget=budget, random_state=0)
    search = GridSearchCV(clf, {"random_state": [0, 1]}, cv=3, error_score="raise")
    with pytest.warns(BudgetExhaustedWarning, match="budget ran out"):
        with pytest.raises(BudgetExceededError):
            search.fit(X, y)
    assert len(budget) == 2


@pytest.mark.parametrize("backend_name", ["loky", "threading"])
def test_cap_with_parallel_fits_never_overspends(backend_name):
    X, y = _data()
    budget = _budget(_cap_after(5))
    clf = NoisyCentroids(5.0, budget=budget, random_state=0)
    with joblib.parallel_config(backend=backend_name, n_jobs=2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = cross_val_score(clf, X, y, cv=8, n_jobs=2)
    # Exactly 5 fits were accepted, concurrent charges notwithstanding.
    assert len(budget) == 5
    assert np.isfinite(scores).sum() == 5
    assert budget.spent()[0] <= budget.epsilon
