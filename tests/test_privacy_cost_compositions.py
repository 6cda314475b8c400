"""The cost before the fit, for every composition: it equals what the fit charges.

skdp.privacy_cost and skdp.pipeline.DPPipeline (which reserves that cost in one
charge) probe a copy of the model on placeholder rows. Each composition below
is costed, then fitted, in a scikit-learn Pipeline (each private step charges)
and in a DPPipeline (one charge): sparse one-hot output of a ColumnTransformer
(the placeholders made it sparse where the real rows stack dense), a
ColumnTransformer with every kind of remainder, FeatureUnion,
TransformedTargetRegressor, nested pipelines and a private search inside a
pipeline.
"""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.pipeline import FeatureUnion, Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skdp import PrivacyBudget, privacy_cost
from skdp.linear_model import DPLinearRegression, DPLogisticRegression
from skdp.model_selection import DPGridSearchCV
from skdp.naive_bayes import DPGaussianNB
from skdp.pipeline import DPPipeline
from skdp.preprocessing import DPMinMaxScaler, DPStandardScaler

B = (-3.0, 3.0)
CATEGORIES = [["x", "y", "z"], ["u", "v"]]

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _frame(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.uniform(-3, 3, n), "b": rng.uniform(-3, 3, n),
                       "c": rng.choice(["x", "y", "z"], n), "d": rng.choice(["u", "v"], n)})
    y = (df["a"] + (df["c"] == "x") > 0).astype(int).to_numpy()
    return df, y, 2 * df["a"].to_numpy() + 1


def _compositions(budget):
    """name -> (model, which target, which columns); every private step holds ``budget``."""
    kw = dict(budget=budget, random_state=0)

    def clf(epsilon=0.5):
        return DPLogisticRegression(classes=[0, 1], epsilon=epsilon, **kw)

    numeric = ColumnTransformer([("num", "passthrough", ["a", "b"])])
    return {
        # OneHotEncoder() at its defaults (sparse_output=True): the one-hot block of the
        # placeholders holds no entry, so it stacked sparse where the real rows stack dense
        "onehot default": (make_pipeline(ColumnTransformer(
            [("num", DPStandardScaler(bounds=B, epsilon=0.3, **kw), ["a", "b"]),
             ("cat", OneHotEncoder(), ["c", "d"])]), clf()), "y", "all"),
        "onehot public, remainder passthrough": (make_pipeline(ColumnTransformer(
            [("cat", OneHotEncoder(categories=CATEGORIES), ["c", "d"])],
            remainder="passthrough"), clf()), "y", "all"),
        "remainder private": (make_pipeline(ColumnTransformer(
            [("cat", OneHotEncoder(categories=CATEGORIES), ["c", "d"])],
            remainder=DPStandardScaler(bounds=B, epsilon=0.3, **kw)), clf()), "y", "all"),
        "remainder drop": (make_pipeline(ColumnTransformer(
            [("num", DPMinMaxScaler(bounds=B, quantile_range=(0.05, 0.95), epsilon=0.2, **kw),
              ["a"])], remainder="drop"),
            DPGaussianNB(bounds=(0, 1), classes=[0, 1], epsilon=0.5, **kw)), "y", "all"),
        "feature union": (make_pipeline(numeric, FeatureUnion(
            [("std", DPStandardScaler(bounds=B, epsilon=0.3, **kw)),
             ("minmax", DPMinMaxScaler(bounds=B, quantile_range=(0.05, 0.95), epsilon=0.2,
                                       **kw))]), clf()), "y", "all"),
        "transformed target": (make_pipeline(numeric, TransformedTargetRegressor(
            regressor=DPLinearRegression(bounds_X=B, bounds_y=(-3, 3), epsilon=0.7, **kw),
            func=np.arcsinh, inverse_func=np.sinh, check_inverse=False)), "yr", "all"),
        "transformed target alone": (TransformedTargetRegressor(
            regressor=DPLinearRegression(bounds_X=B, bounds_y=(-3, 3), epsilon=0.7, **kw),
            func=np.arcsinh, inverse_func=np.sinh), "yr", "numeric"),
        "nested pipelines": (make_pipeline(numeric, make_pipeline(
            DPStandardScaler(bounds=B, epsilon=0.3, **kw),
            make_pipeline(DPMinMaxScaler(bounds=(-5, 5), epsilon=0.2, **kw))),
            make_pipeline(DPGaussianNB(bounds=(0, 1), classes=[0, 1], epsilon=0.5, **kw))),
            "y", "all"),
        "search in a pipeline": (make_pipeline(
            numeric, DPStandardScaler(bounds=B, epsilon=0.3, **kw),
            DPGridSearchCV(DPLogisticRegression(classes=[0, 1], epsilon=1.0), {"C": [0.1, 1.0]},
                           budget=budget, random_state=0)), "y", "all"),
    }


NAMES = list(_compositions(None))


@pytest.mark.parametrize("kind", ["Pipeline", "DPPipeline"])
@pytest.mark.parametrize("name", NAMES)
def test_the_cost_read_before_the_fit_is_what_the_fit_charges(name, kind):
    df, y, yr = _frame()
    budget = PrivacyBudget(100.0, 1e-5)
    model, target, columns = _compositions(budget)[name]
    if kind == "DPPipeline":
        if not isinstance(model, Pipeline):
            pytest.skip("not a pipeline")
        model = DPPipeline(model.steps)
    X = df[["a", "b"]] if columns == "numeric" else df
    target = y if target == "y" else yr
    cost = privacy_cost(model, X, target)
    assert len(budget) == 0  # reading the cost charges nothing
    model.fit(X, target)
    if kind == "DPPipeline":
        assert len(budget) == 1  # all or nothing: no step charged on its own
    assert cost.epsilon == pytest.approx(budget.spent()[0], rel=1e-9)
    assert cost.delta == budget.spent()[1]
    np.testing.assert_allclose(cost.curve.rdp, budget.total_curve().rdp, rtol=1e-9)
    model.predict(X)
    pickle.dumps(model)  # no curve recorder is left in the fitted model


def test_a_dp_pipeline_validates_a_feature_union_without_charging_its_parts():
    # DPPipeline's first step (every step refuses what it would refuse in the fit)
    # fitted a FeatureUnion or a TransformedTargetRegressor as a public step: their
    # private parts charged the budget, one by one, outside the one charge.
    df, y, _ = _frame()
    budget = PrivacyBudget(100.0, 1e-5)
    pipe = DPPipeline(_compositions(budget)["feature union"][0].steps)
    bad = df.assign(a=np.where(np.arange(len(df)) == 7, np.inf, df["a"]))
    with pytest.raises(ValueError, match="infinity|inf"):
        pipe.fit(bad, y)
    assert len(budget) == 0
    pipe.fit(df, y)
    assert [c.label.split("(")[0] for c in budget.ledger] == ["DPPipeline"]


def test_sparse_output_that_a_step_takes_stays_sparse():
    # A step that takes sparse input gets the placeholders' sparse output as it is;
    # one that refuses it gets dense rows: its curve depends on the shape alone.
    from scipy.sparse import issparse
    from sklearn.linear_model import LogisticRegression

    from skdp.model_selection._probe import _dense_for

    from sklearn.utils import get_tags

    sparse = OneHotEncoder(categories=[["x", "y"]]).fit_transform(np.array([["x"], ["y"]]))
    # LogisticRegression's tags declare sparse input from scikit-learn 1.6.1 on (1.6.0: not)
    takes_sparse = get_tags(LogisticRegression()).input_tags.sparse
    assert issparse(_dense_for([LogisticRegression()], sparse)) == takes_sparse
    assert not issparse(_dense_for(["passthrough", DPStandardScaler()], sparse))
    assert _dense_for([], sparse) is sparse
