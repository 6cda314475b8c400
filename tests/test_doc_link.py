"""The notebook view's "?" link: every public estimator links to its own API page.

scikit-learn's HTML repr shows the link that ``_get_doc_link`` returns; skdp's
is ``skdp._base.DOCS_URL`` followed by the page that ``docs/api.rst`` generates
for the name (``generated/<module>.<Name>.html``). That the page exists in the
built site is checked by the Sphinx build in ``tests/test_docs.py``.
"""

import importlib

import pytest
from sklearn.base import BaseEstimator
from sklearn.utils import estimator_html_repr

from skdp import _base
from skdp.linear_model import DPLogisticRegression
from skdp.pipeline import make_pipeline
from skdp.preprocessing import DPStandardScaler
from test_docs import DOCS, _documented_names


def _public_estimators():
    """``{documented name: class}`` of the estimators listed in docs/api.rst."""
    found = {}
    for name in _documented_names((DOCS / "api.rst").read_text(encoding="utf-8")):
        module, _, attr = name.rpartition(".")
        obj = getattr(importlib.import_module(module), attr)
        if isinstance(obj, type) and issubclass(obj, BaseEstimator):
            found[name] = obj
    return found


ESTIMATORS = _public_estimators()


def doc_page(name):
    """The path of a name's API page in the built site, as the link gives it."""
    return f"generated/{name}.html"


def test_estimators_are_found():
    # guards the test below against checking nothing
    assert {"skdp.linear_model.DPLogisticRegression", "skdp.pipeline.DPPipeline",
            "skdp.ensemble.DPHistGradientBoostingClassifier",
            "skdp.model_selection.DPGridSearchCV"} <= set(ESTIMATORS)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_link_is_the_documented_page(name):
    # _get_doc_link reads class attributes only, so no parameters are needed
    estimator = ESTIMATORS[name].__new__(ESTIMATORS[name])
    assert estimator._get_doc_link() == _base.DOCS_URL + doc_page(name)


def test_html_repr_shows_the_link():
    html = estimator_html_repr(DPLogisticRegression(epsilon=0.5))
    assert f'href="{_base.DOCS_URL}{doc_page("skdp.linear_model.DPLogisticRegression")}"' in html


def test_pipeline_view_links_itself_and_its_steps_and_keeps_its_caption():
    pipe = make_pipeline(DPStandardScaler(), DPLogisticRegression(), epsilon=1.0)
    html = pipe._repr_mimebundle_()["text/html"]
    assert html.startswith("<p>epsilon=1 split by weight: ")
    for name in ["skdp.pipeline.DPPipeline", "skdp.preprocessing.DPStandardScaler",
                 "skdp.linear_model.DPLogisticRegression"]:
        assert f'href="{_base.DOCS_URL}{doc_page(name)}"' in html, name


def test_the_base_address_is_read_at_each_repr(monkeypatch):
    monkeypatch.setattr(_base, "DOCS_URL", "https://docs.example.org/skdp/0.1")
    assert DPLogisticRegression()._get_doc_link() == (
        "https://docs.example.org/skdp/0.1/generated/skdp.linear_model.DPLogisticRegression.html")


def test_an_instance_may_set_its_own_template_as_in_scikit_learn():
    estimator = DPLogisticRegression()
    estimator._doc_link_template = "https://docs.example.org/{estimator_name}"
    assert estimator._get_doc_link() == "https://docs.example.org/DPLogisticRegression"
    other = DPLogisticRegression()
    assert other._get_doc_link() == _base.DOCS_URL + doc_page("skdp.linear_model.DPLogisticRegression")


class _UserEstimator(DPLogisticRegression):
    """A subclass defined outside skdp: it has no skdp API page."""


def test_a_subclass_outside_skdp_has_no_link():
    assert _UserEstimator()._get_doc_link() == ""
