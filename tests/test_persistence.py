"""Fitted estimators round-trip through pickle, joblib and skops.io.

Every public estimator is fitted once on tiny data (few iterations: the whole file
takes seconds), saved and loaded each way, and must then give the same outputs,
bit for bit, and report the same spend. A budget goes along as the handle it is:
the loaded estimator charges the same ledger. A ``Generator`` passed as
``random_state`` is never saved (it would let anyone replay the noise of the fit).
"""

import pickle
import warnings

import joblib
import numpy as np
import pytest
import skops.io as sio

from skdp import PrivacyBudget
from skdp.accounting import DEFAULT_ORDERS, RDPCurve, gaussian_rdp, laplace_rdp
from skdp.budget._budget import _reattach
from skdp.cluster import DPKMeans
from skdp.decomposition import DPPCA
from skdp.ensemble import (
    DPHistGradientBoostingClassifier,
    DPHistGradientBoostingRegressor,
    DPRandomForestClassifier,
)
from skdp.impute import DPSimpleImputer
from skdp.linear_model import DPLinearRegression, DPLogisticRegression, DPSGDClassifier, DPSGDRegressor
from skdp.model_selection import DPGridSearchCV, DPRandomizedSearchCV
from skdp.naive_bayes import DPGaussianNB
from skdp.pipeline import DPPipeline, make_pipeline
from skdp.preprocessing import (
    DPHistogramTransformer,
    DPKBinsDiscretizer,
    DPMinMaxScaler,
    DPStandardScaler,
)
from skdp.tree import DPDecisionTreeClassifier

_rng = np.random.default_rng(0)
X = _rng.uniform(-1.0, 1.0, size=(40, 3))
Y_CLASS = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
Y_REG = X[:, 0] - 0.5 * X[:, 2]
B = (-1.0, 1.0)
C = [0, 1]


def _nb(**kw):
    return DPGaussianNB(bounds=B, classes=C, epsilon=0.5, **kw)


# (id, estimator, target) for every public estimator; every fit is seeded.
CASES = [
    ("DPSGDClassifier", DPSGDClassifier(max_iter=2, classes=C, random_state=0), Y_CLASS),
    ("DPSGDClassifier-mlp", DPSGDClassifier(hidden_layer_sizes=(4,), max_iter=2, classes=C,
                                            random_state=0), Y_CLASS),
    ("DPSGDRegressor", DPSGDRegressor(max_iter=2, bounds_y=(-2, 2), random_state=0), Y_REG),
    ("DPLinearRegression", DPLinearRegression(bounds_X=B, bounds_y=(-2, 2), random_state=0), Y_REG),
    ("DPLogisticRegression", DPLogisticRegression(data_norm=2.0, classes=C, random_state=0),
     Y_CLASS),
    ("DPGaussianNB", _nb(random_state=0), Y_CLASS),
    ("DPStandardScaler", DPStandardScaler(bounds=B, random_state=0), None),
    ("DPMinMaxScaler", DPMinMaxScaler(bounds=B, random_state=0), None),
    ("DPKBinsDiscretizer", DPKBinsDiscretizer(bounds=B, random_state=0), None),
    ("DPHistogramTransformer", DPHistogramTransformer(bounds=B, random_state=0), None),
    ("DPSimpleImputer", DPSimpleImputer(bounds=B, random_state=0), None),
    ("DPGridSearchCV", DPGridSearchCV(_nb(), {"var_smoothing": [1e-9, 1e-3]}, epsilon=None,
                                      n_runs_mean=2.0,
                                      random_state=0), Y_CLASS),
    ("DPRandomizedSearchCV", DPRandomizedSearchCV(_nb(), {"var_smoothing": [1e-9, 1e-3]},
                                                  epsilon=None,
                                                  n_iter=2, n_runs_mean=2.0, random_state=0),
     Y_CLASS),
    ("DPHistGradientBoostingClassifier", DPHistGradientBoostingClassifier(
        bounds=B, classes=C, max_iter=2, min_samples_leaf=5, random_state=0), Y_CLASS),
    ("DPHistGradientBoostingRegressor", DPHistGradientBoostingRegressor(
        bounds=B, bounds_y=(-2, 2), max_iter=2, min_samples_leaf=5, random_state=0), Y_REG),
    ("DPRandomForestClassifier", DPRandomForestClassifier(n_estimators=2, max_depth=3, bounds=B,
                                                          classes=C, random_state=0), Y_CLASS),
    ("DPDecisionTreeClassifier", DPDecisionTreeClassifier(max_depth=3, bounds=B, classes=C,
                                                          random_state=0), Y_CLASS),
    ("DPPCA", DPPCA(n_components=2, bounds=B, random_state=0), None),
    ("DPKMeans", DPKMeans(n_clusters=2, max_iter=2, bounds=B, random_state=0), None),
    ("DPPipeline", make_pipeline(DPStandardScaler(bounds=B, random_state=0),
                                 DPGaussianNB(bounds=(-4, 4), classes=C, random_state=1)),
     Y_CLASS),
]
IDS = [case[0] for case in CASES]
OUTPUTS = ("predict", "predict_proba", "decision_function", "transform", "score_samples")


@pytest.fixture(scope="module")
def fitted():
    """Each estimator fitted once for the whole module."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's warnings on 40 rows
        for name, estimator, y in CASES:
            out[name] = estimator.fit(X) if y is None else estimator.fit(X, y)
    return out


def _round_trip(estimator, how, tmp_path):
    path = tmp_path / "model"
    if how == "pickle":
        return pickle.loads(pickle.dumps(estimator))
    if how == "joblib":
        joblib.dump(estimator, path)
        return joblib.load(path)
    sio.dump(estimator, path)
    untrusted = sio.get_untrusted_types(file=path)
    # what a user is asked to trust: skdp's own types (numpy.dtype: skops's list lacks it)
    assert all(name.startswith("skdp.") or name == "numpy.dtype" for name in untrusted), untrusted
    return sio.load(path, trusted=untrusted)


def _outputs(estimator):
    out = {}
    for method in OUTPUTS:
        if hasattr(estimator, method):
            value = getattr(estimator, method)(X)
            out[method] = value.toarray() if hasattr(value, "toarray") else np.asarray(value)
    assert out, f"{type(estimator).__name__} has no output method"
    return out


def _spends(estimator):
    """The spend of the estimator and of each fitted part it holds."""
    parts = [("", estimator)]
    if isinstance(estimator, DPPipeline):
        parts += [(name, step) for name, step in estimator.steps]
    if hasattr(estimator, "best_estimator_"):
        parts.append(("best_estimator_", estimator.best_estimator_))
    spends = {
        (name, attr): getattr(part, attr)
        for name, part in parts
        for attr in ("privacy_curve_", "epsilon_spent_", "delta_spent_")
        if hasattr(part, attr)
    }
    assert spends, f"{type(estimator).__name__} reports no spend"
    return spends


@pytest.mark.parametrize("how", ["pickle", "joblib", "skops"])
@pytest.mark.parametrize("name", IDS)
def test_round_trip_keeps_outputs_and_spend(fitted, name, how, tmp_path):
    estimator = fitted[name]
    loaded = _round_trip(estimator, how, tmp_path)
    assert type(loaded) is type(estimator)
    expected, got = _outputs(estimator), _outputs(loaded)
    assert got.keys() == expected.keys()
    for method in expected:
        np.testing.assert_array_equal(got[method], expected[method], err_msg=method)
    spends, loaded_spends = _spends(estimator), _spends(loaded)
    assert loaded_spends.keys() == spends.keys()
    for key, value in spends.items():
        if isinstance(value, RDPCurve):
            assert loaded_spends[key] == value
            assert loaded_spends[key].event == value.event
            assert loaded_spends[key].mechanism == value.mechanism
        else:
            assert loaded_spends[key] == value, key


@pytest.mark.parametrize("how", ["pickle", "joblib", "skops"])
def test_round_trip_keeps_the_budget_handle(how, tmp_path):
    budget = PrivacyBudget(10.0, 1e-5, ledger=tmp_path / "ledger.sqlite")
    pipe = make_pipeline(DPStandardScaler(bounds=B, budget=budget, random_state=0),
                         _nb(budget=budget, random_state=1)).fit(X, Y_CLASS)
    spent = budget.spent()
    loaded = _round_trip(pipe, how, tmp_path)
    for step in (loaded[0], loaded[1]):
        assert step.budget == budget and step.budget.path == budget.path
    assert loaded[1].budget.spent() == spent
    np.testing.assert_array_equal(loaded.predict_proba(X), pipe.predict_proba(X))
    # a refit of the loaded model charges the same ledger
    loaded.fit(X, Y_CLASS)
    assert len(budget) == 2
    assert budget.spent()[0] > spent[0]


@pytest.mark.parametrize("how", ["pickle", "joblib", "skops"])
def test_a_generator_random_state_is_not_saved(how, tmp_path):
    # its state would let anyone replay the noise of the fit
    model = _nb(random_state=np.random.default_rng(7)).fit(X, Y_CLASS)
    loaded = _round_trip(model, how, tmp_path)
    assert loaded.random_state is None
    assert isinstance(model.random_state, np.random.Generator)
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_curve_state_is_plain_data_and_the_curve_stays_immutable():
    curve = gaussian_rdp(3.0) * 4 + laplace_rdp(1.0)
    state = curve.__getstate__()
    assert state == curve.to_dict()
    copy = RDPCurve.__new__(RDPCurve)
    copy.__setstate__(state)
    assert copy == curve and copy.event == curve.event and copy.mechanism == curve.mechanism
    assert not copy.rdp.flags.writeable
    with pytest.raises(AttributeError, match="immutable"):
        curve.__setstate__(gaussian_rdp(1.0).to_dict())
    assert curve == gaussian_rdp(3.0) * 4 + laplace_rdp(1.0)


def test_skops_refuses_a_budget_whose_ledger_url_holds_a_password():
    # a skops file is made to be shared; the handle is built without reaching the server
    url = "postgresql://analyst:s3cret@127.0.0.1/study?budget=adult"
    budget = _reattach(url, 1.0, 1e-5, list(DEFAULT_ORDERS), False, identity=(1, "id"))
    with pytest.raises(TypeError, match=r"holds a password.*set_params\(budget=None\)") as info:
        sio.dumps(_nb(budget=budget))
    assert "s3cret" not in str(info.value)
    # without a password in the URL the handle is saved as any other
    budget = _reattach(url.replace(":s3cret", ""), 1.0, 1e-5, list(DEFAULT_ORDERS), False,
                       identity=(1, "id"))
    loaded = sio.loads(sio.dumps(_nb(budget=budget)), trusted=[
        "skdp.budget._budget.PrivacyBudget", "skdp.naive_bayes._gaussian.DPGaussianNB"])
    assert loaded.budget == budget
