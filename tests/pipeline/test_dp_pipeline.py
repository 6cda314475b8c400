"""DPPipeline: all the private steps of a pipeline are charged once, or none is."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from skdp import BudgetExceededError, PrivacyBudget, privacy_cost
from skdp.accounting import epsilon_of
from skdp.naive_bayes import DPGaussianNB
from skdp.pipeline import DPPipeline, make_pipeline
from skdp.preprocessing import DPHistogramTransformer, DPStandardScaler

B = (-3.0, 3.0)


def _data(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    return X, (X[:, 0] > 0).astype(int)


def _pipe(budget, eps_scaler=0.5, eps_nb=1.0):
    return make_pipeline(
        DPStandardScaler(bounds=B, epsilon=eps_scaler, budget=budget, random_state=0),
        DPGaussianNB(bounds=B, epsilon=eps_nb, classes=[0, 1], budget=budget, random_state=0),
    )


def test_a_pipeline_it_cannot_afford_is_refused_before_any_step_spends():
    # The scaler alone fits in the cap; the two together do not. scikit-learn's
    # Pipeline would charge the scaler, then fail on the classifier.
    X, y = _data()
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises(BudgetExceededError):
        Pipeline(_pipe(budget).steps).fit(X, y)
    assert len(budget) == 1  # the partial spend that DPPipeline prevents

    budget = PrivacyBudget(1.0, 1e-5)
    pipe = _pipe(budget)
    with pytest.raises(BudgetExceededError, match="DPPipeline"):
        pipe.fit(X, y)
    assert len(budget) == 0
    for _, step in pipe.steps:
        with pytest.raises(NotFittedError):
            check_is_fitted(step)


def test_one_charge_for_all_steps_equal_to_the_cost_read_before():
    X, y = _data()
    budget = PrivacyBudget(10.0, 1e-5)
    pipe = _pipe(budget)
    cost = privacy_cost(pipe, X, y)
    pipe.fit(X, y)
    assert len(budget) == 1 and budget.ledger[0].label == "DPPipeline(DPStandardScaler, DPGaussianNB)"
    assert budget.spent()[0] == pytest.approx(cost.epsilon, rel=1e-12)
    # Each step reports its own spend and keeps the real budget.
    scaler, nb = pipe.named_steps.values()
    assert scaler.budget is budget and nb.budget is budget
    assert epsilon_of(scaler.privacy_curve_ + nb.privacy_curve_, 1e-5) == pytest.approx(cost.epsilon)
    # The same model as the plain Pipeline with the same seeds.
    plain = Pipeline(clone(pipe).set_params(dpstandardscaler__budget=None,
                                            dpgaussiannb__budget=None).steps).fit(X, y)
    np.testing.assert_array_equal(pipe.predict_proba(X), plain.predict_proba(X))


def test_bad_input_costs_nothing():
    X, y = _data()
    budget = PrivacyBudget(10.0, 1e-5)
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    with pytest.raises(ValueError):
        _pipe(budget).fit(X_nan, y)
    with pytest.raises(ValueError):
        _pipe(budget).fit(X, np.where(y == 1, 2, 0))  # a label outside classes
    assert len(budget) == 0


def test_steps_must_share_one_budget():
    X, y = _data()
    a, b = PrivacyBudget(10.0, 1e-5), PrivacyBudget(10.0, 1e-5)
    pipe = _pipe(a).set_params(dpgaussiannb__budget=b)
    with pytest.raises(ValueError, match="share one PrivacyBudget"):
        pipe.fit(X, y)
    assert len(a) == len(b) == 0


def test_without_a_budget_it_is_a_plain_pipeline():
    X, y = _data()
    pipe = _pipe(None).fit(X, y)
    assert pipe.score(X, y) > 0.8
    assert isinstance(clone(pipe), DPPipeline)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_inside_scikit_learn_model_selection_each_fit_is_all_or_nothing(n_jobs):
    # A cap that affords some whole pipelines but not all of them: every fit is
    # either one charge of its whole curve or refused with nothing charged.
    X, y = _data()
    one = privacy_cost(_pipe(None, 0.3, 0.3), X[:800], y[:800], delta=1e-5).curve
    cap = (epsilon_of(3 * one, 1e-5) + epsilon_of(4 * one, 1e-5)) / 2  # room for 3 of the 5 fits
    budget = PrivacyBudget(cap, 1e-5)
    with pytest.warns(FitFailedWarning):  # scikit-learn warns that some fits failed
        scores = cross_val_score(_pipe(budget, 0.3, 0.3), X, y, cv=5, n_jobs=n_jobs)
    fitted = int(np.sum(np.isfinite(scores)))
    assert fitted == 3
    assert len(budget) == fitted
    assert all(c.label.startswith("DPPipeline") for c in budget.ledger)
    np.testing.assert_allclose(budget.total_curve().rdp, (fitted * one).rdp, rtol=1e-9)

    budget = PrivacyBudget(100.0, 1e-5)
    search = GridSearchCV(_pipe(budget), {"dpgaussiannb__epsilon": [0.5, 1.0]}, cv=2,
                          n_jobs=n_jobs).fit(X, y)
    assert len(budget) == 2 * 2 + 1  # every fit and the refit, one charge each
    assert search.best_estimator_.named_steps["dpgaussiannb"].budget == budget


def test_pickles_with_its_budget(tmp_path):
    X, y = _data()
    budget = PrivacyBudget(10.0, 1e-5, ledger=tmp_path / "l.sqlite")
    pipe = pickle.loads(pickle.dumps(_pipe(budget)))
    pipe.fit(X, y)
    assert len(budget) == 1


def test_make_pipeline_names_steps_like_scikit_learn():
    pipe = make_pipeline(DPHistogramTransformer(bounds=B), DPHistogramTransformer(bounds=B),
                         DPGaussianNB(bounds=B))
    assert [n for n, _ in pipe.steps] == ["dphistogramtransformer-1", "dphistogramtransformer-2",
                                          "dpgaussiannb"]
