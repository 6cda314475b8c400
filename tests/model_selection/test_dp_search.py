"""DPGridSearchCV / DPRandomizedSearchCV: one mechanism, one charge, before any run."""

import sys

import cloudpickle
import joblib
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

from skdp import BudgetExceededError, PrivacyBudget
from skdp.accounting import (
    gaussian_rdp,
    private_selection_rdp,
    pure_dp_rdp,
    run_count_distribution,
)
from skdp.model_selection import DPGridSearchCV, DPRandomizedSearchCV, NoCandidateWarning
from skdp.naive_bayes import DPGaussianNB
from skdp.preprocessing import DPStandardScaler

cloudpickle.register_pickle_by_value(sys.modules[__name__])

from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin  # noqa: E402
from sklearn.utils.validation import check_is_fitted, validate_data  # noqa: E402

from skdp._base import DPEstimatorMixin  # noqa: E402
from skdp.utils import check_generator  # noqa: E402

FITS_PAST_THE_CHARGE = []


class Centroids(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Nearest class centroid with Gaussian noise on clipped class sums and counts."""

    def __init__(self, noise_multiplier=1.0, budget=None, random_state=None):
        self.noise_multiplier = noise_multiplier
        self.budget = budget
        self.random_state = random_state

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=float)
        classes = np.array([0, 1])
        if not np.all(np.isin(y, classes)):
            raise ValueError("labels must be 0 or 1")
        self._charge_budget(gaussian_rdp(self.noise_multiplier))
        FITS_PAST_THE_CHARGE.append(1)
        rng = check_generator(self.random_state)
        X = X * np.minimum(1.0, 1.0 / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300))
        # One row moves one class's (sum, count) by L2 norm ≤ sqrt(2).
        std = self.noise_multiplier * np.sqrt(2.0)
        sums = np.stack([X[y == c].sum(axis=0) for c in classes]) + rng.normal(0, std, (2, X.shape[1]))
        counts = np.array([np.sum(y == c) for c in classes]) + rng.normal(0, std, 2)
        self.classes_ = classes
        self.centroids_ = sums / np.maximum(counts, 1.0)[:, None]
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        d = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(d, axis=1)]


DELTA = 1e-5


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    X = 0.3 * rng.normal(size=(n, 2)) + np.where(y[:, None] == 1, 0.5, -0.5)
    return X, y


def _expected(sigmas, score_eps, kind="logarithmic", mean=10.0, refit=True):
    run = max((gaussian_rdp(s) + pure_dp_rdp(score_eps) for s in sigmas),
              key=lambda c: c.rdp.sum())  # equal orders: the least noise is the worst
    total = private_selection_rdp(run, run_count_distribution(kind, mean)) + pure_dp_rdp(score_eps)
    if refit:
        total = total + gaussian_rdp(min(sigmas))
    return total


@pytest.mark.parametrize("refit", [True, False])
def test_one_charge_equal_to_the_formula(refit):
    X, y = _data()
    budget = PrivacyBudget(epsilon=100.0, delta=DELTA)
    search = DPGridSearchCV(Centroids(), {"noise_multiplier": [2.0, 5.0]}, epsilon=None,
                            score_epsilon=0.5,
                            refit=refit, budget=budget, random_state=0).fit(X, y)
    assert len(budget) == 1
    expected = _expected([2.0, 5.0], 0.5, refit=refit)
    np.testing.assert_allclose(budget.ledger[0].curve.rdp, expected.rdp, rtol=1e-12)
    assert budget.spent()[0] == pytest.approx(expected.epsilon(DELTA), rel=1e-12)
    assert search.epsilon_spent_ == pytest.approx(expected.epsilon(DELTA), rel=1e-12)
    # Far cheaper than charging the expected 10 runs one by one.
    assert budget.spent()[0] < (10 * (gaussian_rdp(2.0) + pure_dp_rdp(0.5))).epsilon(DELTA)


def test_charged_before_any_run_and_refused_runs_nothing():
    X, y = _data()
    budget = PrivacyBudget(epsilon=0.5, delta=DELTA)
    FITS_PAST_THE_CHARGE.clear()
    search = DPGridSearchCV(Centroids(), {"noise_multiplier": [2.0, 5.0]}, epsilon=None,
                            budget=budget,
                            random_state=0)
    with pytest.warns(Warning), pytest.raises(BudgetExceededError):
        search.fit(X, y)
    assert len(budget) == 0
    assert FITS_PAST_THE_CHARGE == []  # the probes stopped at their charge; no run started
    assert not hasattr(search, "best_estimator_")


def test_picks_the_less_noisy_candidate_and_releases_only_it():
    X, y = _data(n=2000)
    search = DPGridSearchCV(Centroids(), {"noise_multiplier": [0.05, 1e4]}, epsilon=None,
                            score_epsilon=1.0,
                            n_runs_mean=20, refit=False, random_state=3).fit(X, y)
    # σ = 1e4 gives chance accuracy; σ = 0.05 about 0.95. With mean K = 20 the
    # good candidate is drawn unless K is tiny (fixed seed).
    assert search.best_params_ == {"noise_multiplier": 0.05}
    assert 0.85 < search.best_score_ <= 1.0
    assert search.score(X, y) > 0.85
    assert list(search.cv_results_) == ["params", "mean_test_score", "rank_test_score"]
    assert search.cv_results_["params"] == [search.best_params_]
    public = [a for a in vars(search) if a.endswith("_") and not a.startswith("_")]
    assert not [a for a in public if "run" in a or "split" in a]


def test_randomized_search_covers_the_worst_drawn_candidate():
    X, y = _data()
    budget = PrivacyBudget(epsilon=100.0, delta=DELTA)
    search = DPRandomizedSearchCV(Centroids(), {"noise_multiplier": [1.0, 2.0, 3.0, 4.0]},
                                  epsilon=None,
                                  n_candidates=3, score_epsilon=0.3, n_runs_distribution="geometric",
                                  n_runs_mean=5, budget=budget, random_state=1).fit(X, y)
    sigmas = [c["noise_multiplier"] for c in search.candidates_]
    expected = _expected(sigmas, 0.3, kind="geometric", mean=5)
    assert budget.spent()[0] == pytest.approx(expected.epsilon(DELTA), rel=1e-12)


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_runs_never_write_the_ledger(backend):
    X, y = _data()
    budget = PrivacyBudget(epsilon=100.0, delta=DELTA)
    with joblib.parallel_config(backend=backend):
        DPGridSearchCV(Centroids(), {"noise_multiplier": [2.0, 5.0]}, epsilon=None,
                       budget=budget, n_jobs=2,
                       random_state=0).fit(X, y)
    assert len(budget) == 1


def test_runs_on_dask_process_workers():
    distributed = pytest.importorskip("distributed")
    X, y = _data()
    budget = PrivacyBudget(epsilon=100.0, delta=DELTA)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster:
        with distributed.Client(cluster), joblib.parallel_config(backend="dask"):
            search = DPGridSearchCV(Centroids(), {"noise_multiplier": [2.0, 5.0]}, epsilon=None,
                                    budget=budget,
                                    n_jobs=-1, random_state=0).fit(X, y)
    assert len(budget) == 1
    assert search.predict(X).shape == (X.shape[0],)


def test_same_seed_same_result():
    X, y = _data()
    a = DPGridSearchCV(Centroids(), {"noise_multiplier": [2.0, 5.0]}, epsilon=None,
                       random_state=5).fit(X, y)
    b = DPGridSearchCV(Centroids(), {"noise_multiplier": [2.0, 5.0]}, epsilon=None,
                       random_state=5).fit(X, y)
    assert a.best_params_ == b.best_params_ and a.best_score_ == b.best_score_
    np.testing.assert_array_equal(a.best_estimator_.centroids_, b.best_estimator_.centroids_)


def test_rejects_non_private_estimators_for_free():
    X, y = _data()
    budget = PrivacyBudget(epsilon=10.0, delta=DELTA)
    with pytest.raises(ValueError, match="without privacy"):
        DPGridSearchCV(LogisticRegression(), {"C": [1.0]}, epsilon=None, budget=budget).fit(X, y)
    with pytest.raises(ValueError, match="score_epsilon"):
        DPGridSearchCV(Centroids(), {"noise_multiplier": [1.0]}, epsilon=None, score_epsilon=0,
                       budget=budget).fit(X, y)
    with pytest.raises(ValueError, match="n_runs_distribution"):
        DPGridSearchCV(Centroids(), {"noise_multiplier": [1.0]}, epsilon=None,
                       n_runs_distribution="uniform",
                       budget=budget).fit(X, y)
    with pytest.raises(ValueError, match="validation_fraction"):
        DPGridSearchCV(Centroids(), {"noise_multiplier": [1.0]}, epsilon=None,
                       validation_fraction=1.0,
                       budget=budget).fit(X, y)
    assert len(budget) == 0


def test_real_pipeline_one_charge():
    X, y = _data(n=5000)
    budget = PrivacyBudget(epsilon=50.0, delta=DELTA)
    pipe = Pipeline([("scale", DPStandardScaler(bounds=([-3, -3], [3, 3]), epsilon=0.5)),
                     ("nb", DPGaussianNB(bounds=([-4, -4], [4, 4]), classes=[0, 1]))])
    search = DPGridSearchCV(pipe, {"nb__epsilon": [0.3, 1.0]}, epsilon=None,
                            score_epsilon=0.5, budget=budget,
                            random_state=0).fit(X, y)
    assert len(budget) == 1
    # Each run's training curve is the scaler's plus the worst NB's: compare with
    # the curves the estimators themselves report.
    scaler = DPStandardScaler(bounds=([-3, -3], [3, 3]), epsilon=0.5).fit(X)
    nb = DPGaussianNB(bounds=([-4, -4], [4, 4]), classes=[0, 1], epsilon=1.0).fit(X, y)
    train = scaler.privacy_curve_ + nb.privacy_curve_
    run = train + pure_dp_rdp(0.5)
    expected = (private_selection_rdp(run, run_count_distribution("logarithmic", 10))
                + pure_dp_rdp(0.5) + train)
    assert budget.spent()[0] == pytest.approx(expected.epsilon(DELTA), rel=1e-9)
    assert search.score(X, y) > 0.8


# -- a refused search reads no value; non-private steps are refused for free ---------
SEEN_REAL_VALUES = []


class Spy(DPEstimatorMixin, TransformerMixin, BaseEstimator):
    """An skdp-like step (pure 0.1-DP charge) that records whether its fit saw nonzero values."""

    def __init__(self, budget=None):
        self.budget = budget

    def fit(self, X, y=None):
        X = validate_data(self, X, dtype=float)
        self._charge_budget(pure_dp_rdp(0.1))
        SEEN_REAL_VALUES.append(bool(np.any(X != 0)))
        return self

    def transform(self, X):
        return np.asarray(X, dtype=float)


class Guarded:
    """An X whose shape and dtype are public and whose values may be read by validation only.

    The reads allowed are validation's (bad input must be refused before the
    charge): the search's finiteness check, and each candidate's own input
    validation (one read per candidate here: the public step passes X on, the
    final estimator validates it and stops at its charge). Any other read raises.
    """

    shape, dtype = (600, 2), np.dtype(float)

    def __init__(self, allowed_reads):
        self.reads, self.allowed_reads = 0, allowed_reads

    def __len__(self):
        return self.shape[0]

    def __array__(self, *args, **kwargs):
        self.reads += 1
        if self.reads > self.allowed_reads:
            raise AssertionError("a value of X was read beyond validation")
        return np.ones(self.shape)

    def __getitem__(self, index):
        raise AssertionError("a value of X was read")


def test_refused_search_reads_no_value():
    X, y = _data()
    X = X + 10.0  # no zero anywhere: a fit that saw a nonzero value saw real data
    budget = PrivacyBudget(epsilon=0.5, delta=DELTA)
    pipe = Pipeline([("spy", Spy()), ("clf", Centroids())])
    SEEN_REAL_VALUES.clear()
    FITS_PAST_THE_CHARGE.clear()
    with pytest.warns(Warning), pytest.raises(BudgetExceededError):
        DPGridSearchCV(pipe, {"clf__noise_multiplier": [2.0, 5.0]}, epsilon=None, budget=budget,
                       random_state=0).fit(X, y)
    assert len(budget) == 0
    assert SEEN_REAL_VALUES and not any(SEEN_REAL_VALUES)  # probed, on placeholders only
    assert FITS_PAST_THE_CHARGE == []
    # The same with an X whose values cannot be read at all, through a public step.
    pipe = Pipeline([("f", FunctionTransformer()), ("clf", Centroids())])
    guarded = Guarded(allowed_reads=3)
    with pytest.warns(Warning), pytest.raises(BudgetExceededError):
        DPGridSearchCV(pipe, {"clf__noise_multiplier": [2.0, 5.0]}, epsilon=None, budget=budget,
                       random_state=0).fit(guarded, y)
    assert len(budget) == 0
    assert guarded.reads == 3  # the finiteness check and two candidates' validation, no more
    assert FITS_PAST_THE_CHARGE == []


def test_pipeline_probe_on_placeholders_charges_the_real_curve():
    X, y = _data()
    X = X + 10.0
    budget = PrivacyBudget(epsilon=100.0, delta=DELTA)
    SEEN_REAL_VALUES.clear()
    pipe = Pipeline([("spy", Spy()), ("clf", Centroids())])
    DPGridSearchCV(pipe, {"clf__noise_multiplier": [2.0, 5.0]}, epsilon=None, score_epsilon=0.5,
                   budget=budget, random_state=0).fit(X, y)
    assert len(budget) == 1
    train = pure_dp_rdp(0.1) + gaussian_rdp(2.0)
    expected = (private_selection_rdp(train + pure_dp_rdp(0.5),
                                      run_count_distribution("logarithmic", 10))
                + pure_dp_rdp(0.5) + train)
    assert budget.spent()[0] == pytest.approx(expected.epsilon(DELTA), rel=1e-9)
    assert any(SEEN_REAL_VALUES)  # the runs, after the charge, used the data


@pytest.mark.parametrize("pipe,grid,match", [
    (Pipeline([("scale", StandardScaler()), ("nb", Centroids())]), {}, "StandardScaler"),
    (Pipeline([("scale", DPStandardScaler(bounds=([-3, -3], [3, 3]))), ("nb", Centroids())]),
     {"scale": [DPStandardScaler(bounds=([-3, -3], [3, 3])), StandardScaler()]}, "StandardScaler"),
    (Pipeline([("ct", ColumnTransformer([("s", StandardScaler(), [0])], remainder="passthrough")),
               ("nb", Centroids())]), {}, "StandardScaler"),
    (Pipeline([("ct", ColumnTransformer([("o", OneHotEncoder(), [0])], remainder="passthrough")),
               ("nb", Centroids())]), {}, "categories"),
    (Pipeline([("ct", ColumnTransformer([("o", OneHotEncoder(categories=[[0, 1]],
                                                             min_frequency=5), [0])])),
               ("nb", Centroids())]), {}, "min_frequency"),
    (Pipeline([("f", FunctionTransformer(np.exp, np.log)), ("nb", Centroids())]), {},
     "check_inverse"),
])
def test_non_private_steps_refused_before_charging(pipe, grid, match):
    # Pipeline(StandardScaler(), ...) would release the exact mean in best_estimator_[0].mean_.
    X, y = _data()
    budget = PrivacyBudget(epsilon=100.0, delta=DELTA)
    grid = {"nb__noise_multiplier": [2.0], **grid}
    with pytest.raises(ValueError, match=match):
        DPGridSearchCV(pipe, grid, epsilon=None, budget=budget, random_state=0).fit(X, y)
    assert len(budget) == 0


@pytest.mark.parametrize("as_frame", [True, False])
def test_public_steps_on_a_dataframe_or_object_array_are_allowed(as_frame):
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame({"colour": np.where(y == 1, "red", "blue").astype(object),
                          "a": X[:, 0], "b": X[:, 1]})
    cols = (["colour"], ["a"], ["b"]) if as_frame else ([0], [1], [2])
    if not as_frame:
        frame = frame.to_numpy(dtype=object)
    pre = ColumnTransformer([
        ("onehot", OneHotEncoder(categories=[["blue", "red"]], sparse_output=False), cols[0]),
        ("clip", FunctionTransformer(np.clip, kw_args={"a_min": -1, "a_max": 1}), cols[1]),
        ("keep", "passthrough", cols[2]),
    ])
    budget = PrivacyBudget(epsilon=100.0, delta=DELTA)
    pipe = Pipeline([("pre", pre), ("clf", Centroids())])
    search = DPGridSearchCV(pipe, {"clf__noise_multiplier": [0.5]}, epsilon=None, score_epsilon=0.5,
                            budget=budget, random_state=0).fit(frame, y)
    assert len(budget) == 1
    expected = _expected([0.5], 0.5)
    assert budget.spent()[0] == pytest.approx(expected.epsilon(DELTA), rel=1e-9)
    assert search.score(frame, y) > 0.9


def test_poisson_zero_runs_outputs_no_candidate_and_keeps_the_charge():
    # P[K = 0] = exp(-1) ≈ 0.37 for a Poisson law of mean 1 (the smallest mean that
    # Thm. 6 covers); seed 0 draws K = 0.
    X, y = _data()
    budget = PrivacyBudget(epsilon=100.0, delta=DELTA)
    FITS_PAST_THE_CHARGE.clear()
    search = DPGridSearchCV(Centroids(), {"noise_multiplier": [2.0]}, epsilon=None,
                            score_epsilon=0.5,
                            n_runs_distribution="poisson", n_runs_mean=1.0, budget=budget,
                            random_state=0)
    with pytest.warns(NoCandidateWarning):
        search.fit(X, y)
    assert len(budget) == 1
    expected = _expected([2.0], 0.5, kind="poisson", mean=1.0)
    assert budget.spent()[0] == pytest.approx(expected.epsilon(DELTA), rel=1e-12)
    assert search.best_estimator_ is None and search.best_params_ is None
    assert FITS_PAST_THE_CHARGE == []  # nothing ran
    with pytest.raises(ValueError, match="no candidate"):
        search.predict(X)


def test_delegated_methods_exist_only_where_the_model_has_them():
    # as for scikit-learn's searches: hasattr tells whether the released model has the method
    X, y = _data(n=200)
    search = DPGridSearchCV(Centroids(), {"noise_multiplier": [2.0, 5.0]}, epsilon=None,
                            n_runs_mean=2.0,
                            random_state=0)
    assert not hasattr(search, "predict_proba") and not hasattr(search, "decision_function")
    search.fit(X, y)
    assert not hasattr(search, "predict_proba") and not hasattr(search, "decision_function")
    nb = DPGridSearchCV(DPGaussianNB(bounds=(-2, 2), classes=[0, 1]), {"var_smoothing": [1e-9]},
                        epsilon=None, n_runs_mean=2.0, random_state=0).fit(X, y)
    assert hasattr(nb, "predict_proba") and not hasattr(nb, "decision_function")
    np.testing.assert_array_equal(nb.predict_proba(X), nb.best_estimator_.predict_proba(X))
