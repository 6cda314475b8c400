"""What skdp refuses on purpose from a scikit-learn user says why, in privacy terms.

``sample_weight`` in ``fit``, ``warm_start``, ``class_weight``, ``partial_fit`` and the other
names of skdp/_unsupported.py are refused by every estimator, in the constructor, ``fit``,
``fit_transform``, ``fit_predict`` and ``set_params``, with the reason, before any charge.
Nothing here fits a model: each test takes milliseconds.
"""

import importlib
import inspect
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import has_fit_parameter

from skdp import PrivacyBudget
from skdp._base import DPEstimatorMixin
from skdp._unsupported import PARTIAL_FIT, UNSUPPORTED
from skdp.linear_model import DPSGDClassifier
from skdp.model_selection import DPGridSearchCV
from skdp.naive_bayes import DPGaussianNB
from skdp.pipeline import make_pipeline
from skdp.preprocessing import DPStandardScaler

PACKAGES = ["cluster", "decomposition", "ensemble", "impute", "linear_model", "model_selection",
            "naive_bayes", "neural_network", "preprocessing", "tree"]
GUIDE = Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "sklearn_differences.rst"


def _estimator_classes():
    found = {}
    for package in PACKAGES:
        module = importlib.import_module(f"skdp.{package}")
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found[obj.__name__] = obj
    return [found[name] for name in sorted(found)]


ESTIMATORS = _estimator_classes()


def _args(cls):
    """Required positional arguments: the searches take an estimator and a grid."""
    return (DPGaussianNB(), {}) if "Search" in cls.__name__ else ()


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(20, 2))
    return X, (X[:, 0] > 0).astype(int)


def test_every_public_estimator_is_covered():
    assert len(ESTIMATORS) >= 18
    assert all(issubclass(cls, DPEstimatorMixin) for cls in ESTIMATORS)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_constructor_and_set_params_refuse_with_the_reason(cls):
    for name, reason in UNSUPPORTED.items():
        with pytest.raises(TypeError) as info:
            cls(*_args(cls), **{name: 1})
        assert str(info.value) == f"{cls.__name__} does not take {name}: {reason}"
        # set_params raises scikit-learn's type of error for a parameter it does not have
        with pytest.raises(ValueError, match=f"^{cls.__name__} does not take {name}: "):
            cls(*_args(cls)).set_params(**{name: 1})
    # any other name still gets Python's own error
    with pytest.raises(TypeError, match="unexpected keyword argument 'no_such_parameter'"):
        cls(*_args(cls), no_such_parameter=1)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_sample_weight_is_refused_before_any_charge(cls):
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    estimator = cls(*_args(cls)).set_params(budget=budget)
    methods = [m for m in ("fit", "fit_transform", "fit_predict") if hasattr(estimator, m)]
    for method in methods:
        with pytest.raises(TypeError, match=f"^{cls.__name__} does not take sample_weight: "):
            getattr(estimator, method)(X, y, sample_weight=np.ones(len(X)))
    assert len(budget) == 0
    assert not [k for k in vars(estimator) if k.endswith("_") and not k.startswith("_")]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_partial_fit_says_why_and_hasattr_stays_false(cls):
    estimator = cls(*_args(cls))
    assert not hasattr(estimator, "partial_fit")
    with pytest.raises(AttributeError) as info:
        estimator.partial_fit
    assert str(info.value) == f"{cls.__name__} has no partial_fit: {PARTIAL_FIT}"


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_scikit_learn_sees_the_real_signatures(cls):
    params = inspect.signature(cls).parameters
    assert not set(params) & set(UNSUPPORTED)
    assert not has_fit_parameter(cls(*_args(cls)), "sample_weight")
    # clone (get_params, then the constructor) works as before
    estimator = cls(*_args(cls))
    assert clone(estimator).get_params().keys() == estimator.get_params().keys()


def test_a_pipeline_and_a_search_pass_the_refusal_on():
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    pipe = make_pipeline(DPStandardScaler(bounds=(-1, 1), budget=budget),
                         DPGaussianNB(bounds=(-3, 3), classes=[0, 1], budget=budget))
    with pytest.raises(TypeError, match="^DPGaussianNB does not take sample_weight: "):
        pipe.fit(X, y, dpgaussiannb__sample_weight=np.ones(len(X)))
    # a DPPipeline charges all its steps before fitting them: a parameter no step takes
    # is refused before that charge too
    with pytest.raises(TypeError, match="unexpected keyword argument 'no_such_parameter'"):
        pipe.fit(X, y, dpgaussiannb__no_such_parameter=1)
    with pytest.raises(ValueError, match="^DPGaussianNB does not take warm_start: "):
        pipe.set_params(dpgaussiannb__warm_start=True)
    search = DPGridSearchCV(DPGaussianNB(bounds=(-1, 1), classes=[0, 1]),
                            {"warm_start": [True, False]}, epsilon=None, budget=budget)
    with pytest.raises(ValueError, match="^DPGaussianNB does not take warm_start: "):
        search.fit(X, y)
    assert len(budget) == 0


def test_the_user_guide_lists_every_refusal():
    text = GUIDE.read_text(encoding="utf-8")
    for name in [*UNSUPPORTED, "partial_fit"]:
        assert f"``{name}``" in text, name


@pytest.mark.parametrize("schedule", ["constant", "invscaling", "adaptive"])
def test_dpsgd_learning_rate_given_a_schedule_points_at_schedule(schedule):
    # scikit-learn's MLP calls its schedule learning_rate; here it is the step size
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    with pytest.raises(ValueError, match="initial step size.*pass it as schedule="):
        DPSGDClassifier(learning_rate=schedule, classes=[0, 1], budget=budget).fit(X, y)
    assert len(budget) == 0
