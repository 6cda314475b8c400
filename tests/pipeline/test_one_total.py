"""DPPipeline(epsilon=total): one total, split among the private steps that leave theirs unset."""

import math

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import cross_val_score
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skdp import PrivacyBudget, config_context, privacy_cost
from skdp.model_selection import DPGridSearchCV
from skdp.naive_bayes import DPGaussianNB
from skdp.pipeline import DPPipeline, make_pipeline
from skdp.pipeline._split import (
    MODEL_WEIGHT,
    PREPROCESSING_WEIGHT,
    PUBLIC_BOUNDS_WEIGHT,
    preprocessing_weight,
    step_weights,
    unset_epsilon_keys,
)
from skdp.preprocessing import DPMinMaxScaler, DPStandardScaler

B = (-3.0, 3.0)


def _data(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    return X, (X[:, 0] > 0).astype(int)


def _steps(**scaler):
    return [DPStandardScaler(bounds=B, random_state=0, **scaler),
            DPGaussianNB(bounds=B, classes=[0, 1], random_state=0)]


def test_the_total_is_spent_in_one_charge_split_by_the_rule():
    X, y = _data()
    budget = PrivacyBudget(2.0, 1e-5)
    pipe = make_pipeline(*_steps(), epsilon=0.8, budget=budget)
    split = pipe.epsilon_split(X, y)
    keys = ["dpstandardscaler__epsilon", "dpgaussiannb__epsilon"]
    assert list(split) == keys
    weights = step_weights(pipe, keys, 0.8)
    assert weights == {keys[0]: PUBLIC_BOUNDS_WEIGHT, keys[1]: MODEL_WEIGHT}
    assert split[keys[0]] / split[keys[1]] == pytest.approx(weights[keys[0]] / MODEL_WEIGHT)
    cost = privacy_cost(pipe, X, y)
    assert 0.8 * (1 - 1e-3) <= cost.epsilon <= 0.8  # the total, never above it
    pipe.fit(X, y)
    assert len(budget) == 1 and budget.spent()[0] == pytest.approx(cost.epsilon, rel=1e-9)
    assert pipe.epsilon_split_ == split
    label = budget.ledger[0].label
    assert "epsilon=0.8 split as dpstandardscaler" in label and "dpgaussiannb" in label
    # each step fitted at its share; its own parameter is left as it was
    assert pipe[-1].epsilon_spent_ < 0.8 and pipe[-1].epsilon == 1.0
    assert pipe[0].get_params()["epsilon"] == 1.0 and pipe[0].budget is None


def test_a_step_that_estimates_its_ranges_weighs_as_the_model_one_given_bounds_less():
    # the weight reads the step's own bounds parameter, never the data
    pipe = make_pipeline(DPStandardScaler(), DPMinMaxScaler(bounds=B),
                         DPGaussianNB(classes=[0, 1]), epsilon=1.0)
    keys = unset_epsilon_keys(pipe)
    assert step_weights(pipe, keys, 1.0) == {
        "dpstandardscaler__epsilon": PREPROCESSING_WEIGHT,
        "dpminmaxscaler__epsilon": PUBLIC_BOUNDS_WEIGHT,
        "dpgaussiannb__epsilon": MODEL_WEIGHT}
    assert PUBLIC_BOUNDS_WEIGHT < PREPROCESSING_WEIGHT
    X, y = _data()
    split = pipe.epsilon_split(X, y)
    assert split["dpminmaxscaler__epsilon"] == pytest.approx(
        split["dpstandardscaler__epsilon"] * PUBLIC_BOUNDS_WEIGHT / PREPROCESSING_WEIGHT)
    assert privacy_cost(pipe, X, y).epsilon == pytest.approx(1.0, rel=1e-3)


@pytest.mark.parametrize("total", [0.5, 1.0, 4.0, 9.0])
def test_a_step_that_estimates_its_ranges_weighs_less_above_a_total_of_one(total):
    pipe = make_pipeline(DPStandardScaler(), DPMinMaxScaler(bounds=B),
                         DPGaussianNB(classes=[0, 1]), epsilon=total)
    expected = PREPROCESSING_WEIGHT / max(1.0, math.sqrt(total))  # 1, 1, 1/2, 1/3
    assert preprocessing_weight(total) == pytest.approx(expected)
    weights = step_weights(pipe, unset_epsilon_keys(pipe), total)
    assert weights["dpstandardscaler__epsilon"] == pytest.approx(expected)
    # a step given public bounds and the model keep their weights
    assert weights["dpminmaxscaler__epsilon"] == PUBLIC_BOUNDS_WEIGHT
    assert weights["dpgaussiannb__epsilon"] == MODEL_WEIGHT
    X, y = _data()
    split = pipe.epsilon_split(X, y)
    assert split["dpstandardscaler__epsilon"] / split["dpgaussiannb__epsilon"] == pytest.approx(
        expected / MODEL_WEIGHT)
    assert privacy_cost(pipe, X, y).epsilon == pytest.approx(total, rel=1e-3)
    shares = pipe._shares()
    assert shares["dpstandardscaler"] == pytest.approx(expected / sum(weights.values()))


def test_a_step_given_its_own_epsilon_keeps_it():
    X, y = _data()
    pipe = make_pipeline(*_steps(epsilon=0.05), epsilon=1.0)
    assert unset_epsilon_keys(pipe) == ["dpgaussiannb__epsilon"]
    split = pipe.epsilon_split(X, y)
    assert list(split) == ["dpgaussiannb__epsilon"]
    # the model takes the rest of the total, composed with the scaler's 0.05
    both = privacy_cost(Pipeline([(n, s) for n, s in pipe.set_params(epsilon=None).steps])
                        .set_params(**split), X, y, delta=1e-5)
    assert both.epsilon == pytest.approx(1.0, rel=1e-3) and both.epsilon <= 1.0


def test_nested_steps_share_the_total_and_searches_scale_it():
    X, y = _data(600)
    cols = ColumnTransformer([("num", DPMinMaxScaler(bounds=B), [0, 1]),
                              ("std", DPStandardScaler(bounds=B), [2])])
    pipe = make_pipeline(cols, DPGaussianNB(bounds=(-5, 5), classes=[0, 1]), epsilon=0.6)
    split = pipe.epsilon_split(X, y)
    assert set(split) == {"columntransformer__num__epsilon", "columntransformer__std__epsilon",
                          "dpgaussiannb__epsilon"}
    assert split["columntransformer__num__epsilon"] == pytest.approx(
        split["dpgaussiannb__epsilon"] * PUBLIC_BOUNDS_WEIGHT / MODEL_WEIGHT)
    assert privacy_cost(pipe, X, y).epsilon == pytest.approx(0.6, rel=1e-3)

    budget = PrivacyBudget(1.0, 1e-5)
    search = DPGridSearchCV(pipe, {"dpgaussiannb__var_smoothing": [1e-9, 1e-3]}, epsilon=0.9,
                            budget=budget, random_state=0).fit(X, y)
    assert budget.spent()[0] == pytest.approx(0.9, rel=1e-3)
    # the search split the pipeline's total once, then scaled the steps' shares together
    best = search.best_estimator_.get_params()
    assert search.best_estimator_.epsilon is None
    ratio = {k: best[k] / split[k] for k in split}
    assert max(ratio.values()) == pytest.approx(min(ratio.values()), rel=1e-9)


def test_epsilon_inf_is_scikit_learn():
    X, y = _data()
    pipe = make_pipeline(DPStandardScaler(), DPGaussianNB(classes=[0, 1]), epsilon=math.inf)
    pipe.fit(X, y)
    ref = Pipeline([("s", StandardScaler()), ("nb", GaussianNB())]).fit(X, y)
    assert set(pipe.epsilon_split_.values()) == {math.inf}
    np.testing.assert_allclose(pipe.predict_proba(X), ref.predict_proba(X), rtol=1e-7, atol=1e-9)


def test_the_pipelines_budget_and_the_default_budget_are_charged_once():
    X, y = _data()
    budget = PrivacyBudget(1.0, 1e-5)
    first = make_pipeline(*_steps(), epsilon=0.5, budget=budget)
    expected = [privacy_cost(first, X, y).epsilon]
    first.fit(X, y)
    with config_context(budget=budget):
        second = make_pipeline(*_steps(), epsilon=0.3)
        expected.append(privacy_cost(second, X, y).epsilon)
        second.fit(X, y)
    assert len(budget) == 2
    # at most the total each; below it only where a step's mechanism changes (Laplace above
    # some epsilon, Gaussian below) so that a slightly larger share would cost more than it
    assert [c.epsilon for c in budget.ledger] == pytest.approx(expected, rel=1e-9)
    assert expected[0] <= 0.5 and expected[1] <= 0.3 and min(expected) > 0.25
    other = PrivacyBudget(1.0, 1e-5)
    steps = _steps()
    steps[0].set_params(budget=other)
    with pytest.raises(ValueError, match="share one PrivacyBudget"):
        make_pipeline(*steps, epsilon=0.5, budget=budget).fit(X, y)
    assert len(budget) == 2 and len(other) == 0


def test_inside_cross_val_score_each_fit_charges_the_total():
    X, y = _data()
    budget = PrivacyBudget(10.0, 1e-5)
    scores = cross_val_score(make_pipeline(*_steps(), epsilon=0.5, budget=budget), X, y, cv=3)
    assert len(budget) == 3 and np.all(scores > 0.8)
    one = privacy_cost(make_pipeline(*_steps(), epsilon=0.5), X[:667], y[:667]).epsilon
    assert one <= 0.5
    for charge in budget.ledger:
        assert charge.epsilon == pytest.approx(one, rel=1e-9)


@pytest.mark.parametrize("total, match", [(0.0, "epsilon"), (-1.0, "epsilon"), ("1", "epsilon")])
def test_a_bad_total_is_refused_and_costs_nothing(total, match):
    X, y = _data()
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises((ValueError, TypeError), match=match):
        make_pipeline(*_steps(), epsilon=total, budget=budget).fit(X, y)
    assert len(budget) == 0


def test_no_step_to_share_it_or_too_small_a_total_costs_nothing():
    X, y = _data()
    budget = PrivacyBudget(1.0, 1e-5)
    fixed = [DPStandardScaler(bounds=B, epsilon=0.5), DPGaussianNB(bounds=B, epsilon=0.5,
                                                                   classes=[0, 1])]
    with pytest.raises(ValueError, match="no private step leaves its epsilon unset"):
        make_pipeline(*fixed, epsilon=0.5, budget=budget).fit(X, y)
    with pytest.raises(ValueError, match="too small for this pipeline"):
        make_pipeline(*_steps(epsilon=0.5), epsilon=0.4, budget=budget).fit(X, y)
    assert len(budget) == 0


def test_the_split_reads_only_the_shape():
    X, y = _data()
    pipe = make_pipeline(*_steps(), epsilon=0.7)
    assert pipe.epsilon_split(X, y) == pipe.epsilon_split(np.zeros_like(X) + 1e6, y)


def test_without_an_epsilon_nothing_changes():
    X, y = _data()
    pipe = make_pipeline(*_steps())
    assert pipe.epsilon_split(X, y) == {}
    assert pipe.fit(X, y).epsilon_split_ == {}
    assert isinstance(pipe, DPPipeline)


def test_a_sparse_one_hot_encoder_before_the_private_steps():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 3, 500), rng.uniform(-3, 3, 500)])
    y = (X[:, 1] > 0).astype(int)
    cols = ColumnTransformer([("cat", OneHotEncoder(categories=[[0, 1, 2]]), [0])],
                             remainder="passthrough")
    pipe = make_pipeline(cols, DPGaussianNB(bounds=B, classes=[0, 1]), epsilon=0.5)
    assert list(pipe.epsilon_split(X, y)) == ["dpgaussiannb__epsilon"]
    assert privacy_cost(pipe, X, y).epsilon == pytest.approx(0.5, rel=1e-3)


def test_the_notebook_view_shows_each_steps_share():
    pipe = make_pipeline(*_steps(), epsilon=1.0)
    html = pipe._repr_mimebundle_()["text/html"]
    weights = step_weights(pipe, unset_epsilon_keys(pipe), 1.0)
    model_share = MODEL_WEIGHT / sum(weights.values())
    assert f"dpgaussiannb {model_share:.0%}" in html and "epsilon=1 split" in html
    assert "split" not in make_pipeline(*_steps())._repr_mimebundle_()["text/html"][:200]


def test_parts_fitted_in_parallel_are_costed_and_charged_once():
    # A ColumnTransformer or FeatureUnion with n_jobs fits its parts with joblib: the
    # probes and the reservation stay in this process (threads), and it is one charge.
    from sklearn.pipeline import FeatureUnion

    X, y = _data()
    cols = ColumnTransformer([("a", DPStandardScaler(bounds=B, random_state=0), [0, 1]),
                              ("b", DPMinMaxScaler(bounds=B, random_state=1), [2])], n_jobs=2)
    union = FeatureUnion([("s", DPStandardScaler(bounds=B, random_state=0)),
                          ("m", DPMinMaxScaler(bounds=B, random_state=1))], n_jobs=2)
    for part in (cols, union):
        budget = PrivacyBudget(5.0, 1e-5)
        pipe = make_pipeline(part, DPGaussianNB(bounds=(-5, 5), classes=[0, 1], random_state=2),
                             epsilon=1.0, budget=budget)
        cost = privacy_cost(pipe, X, y).epsilon
        assert 0.99 <= cost <= 1.0
        pipe.fit(X, y)
        assert len(budget) == 1 and budget.spent()[0] == pytest.approx(cost, rel=1e-9)
        assert pipe.score(X, y) > 0.8


def test_a_probe_refused_for_another_reason_says_that_reason():
    # y=None for a classifier: the steps' own refusal, not "too small a total"
    X, _ = _data()
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises(ValueError) as refused:
        make_pipeline(*_steps(), epsilon=1.0, budget=budget).epsilon_split(X, None)
    assert "too small" not in str(refused.value)
    assert len(budget) == 0
