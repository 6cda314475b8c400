"""The API pages open with a short summary, then the parameters (issue #28).

Every public class and function listed in docs/api.rst has a docstring whose
text before its first section (the summary and extended summary, as numpydoc's
``docscrape`` parses them) is at most :data:`MAX_WORDS` words: what the name
does and what it charges. The algorithm, the privacy analysis and the longer
explanations belong in its Notes section. Its sections come in numpydoc's order,
and its Parameters section names every parameter of its signature and nothing
else (a record's fields may be its Attributes instead).
"""

import inspect
import re

import pytest
from numpydoc.docscrape import NumpyDocString

from test_docs import DOCS, _documented_names, _resolve

# The longest opening today is about 105 words (skdp.config_context); a few
# sentences fit, an algorithm does not.
MAX_WORDS = 120

# numpydoc's order (https://numpydoc.readthedocs.io/en/latest/format.html), with a
# class's Attributes and Methods right after its Parameters.
ORDER = ["Parameters", "Attributes", "Methods", "Returns", "Yields", "Receives",
         "Other Parameters", "Raises", "Warns", "Warnings", "See Also", "Notes",
         "References", "Examples"]
_HEADER = re.compile(r"^(%s)\n-{3,}$" % "|".join(ORDER), flags=re.M)


def _documented():
    """``{name: docstring}`` of every class and function listed in docs/api.rst."""
    found = {}
    for name in _documented_names((DOCS / "api.rst").read_text(encoding="utf-8")):
        obj = _resolve(name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            found[name] = inspect.getdoc(obj) or ""
    return found


DOCUMENTED = _documented()


def opening_words(doc):
    """Words of a docstring before its first section, as numpydoc parses it."""
    parsed = NumpyDocString(doc)
    return len(" ".join(parsed["Summary"] + parsed["Extended Summary"]).split())


def documented_names(doc, section):
    """Names that a section documents (``a, b : int`` documents ``a`` and ``b``)."""
    return {part.strip().lstrip("*") for item in NumpyDocString(doc)[section]
            for part in item.name.split(",")}


def signature_names(obj, *, variadic=False):
    """Parameters of a class's constructor or a function (``*args`` and ``**kwargs`` on request)."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # a builtin exception's constructor
        return []
    return [p.name for p in signature.parameters.values()
            if variadic or p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def section_order(doc):
    """The section headers of a docstring, in the order they appear."""
    return _HEADER.findall(doc)


def test_names_are_found():
    # guards the tests below against checking nothing
    assert len(DOCUMENTED) > 100
    assert {"skdp.linear_model.DPLogisticRegression", "skdp.stats.quantile",
            "skdp.accounting.private_selection_rdp"} <= set(DOCUMENTED)


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_docstring_opens_short_and_in_order(name):
    doc = DOCUMENTED[name]
    assert doc, f"{name} has no docstring"
    words = opening_words(doc)
    assert words <= MAX_WORDS, (
        f"{name}: {words} words before the first section (at most {MAX_WORDS}); "
        "move the algorithm and the privacy analysis to Notes")
    order = section_order(doc)
    assert order == sorted(order, key=ORDER.index), f"{name}: sections out of order: {order}"
    assert len(order) == len(set(order)), f"{name}: a section appears twice: {order}"


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_parameters_section_matches_the_signature(name):
    doc = DOCUMENTED[name]
    params = signature_names(_resolve(name))
    documented = documented_names(doc, "Parameters")
    missing = [p for p in params if p not in documented | documented_names(doc, "Attributes")]
    assert not missing, f"{name}: parameters not documented: {missing}"
    unknown = sorted(documented - set(signature_names(_resolve(name), variadic=True)))
    assert not unknown, f"{name}: Parameters names what the signature does not have: {unknown}"


def test_the_checks_fail_on_a_long_opening_and_a_late_parameters_section():
    algorithm = " ".join(["word"] * (MAX_WORDS + 1))
    long_doc = f"Summary.\n\n{algorithm}\n\nParameters\n----------\nx : int\n    A number.\n"
    assert opening_words(long_doc) == MAX_WORDS + 2
    short_doc = f"Summary.\n\nParameters\n----------\nx : int\n    {algorithm}\n"
    assert opening_words(short_doc) == 1
    late = "Summary.\n\nNotes\n-----\nText.\n\nParameters\n----------\nx : int\n"
    assert section_order(late) == ["Notes", "Parameters"]
    assert section_order(late) != sorted(section_order(late), key=ORDER.index)
    assert documented_names(short_doc, "Parameters") == {"x"}
    combined = "Summary.\n\nParameters\n----------\na, *b : int\n"
    assert documented_names(combined, "Parameters") == {"a", "b"}

    def function(x, y=1, *args, **kwargs):
        """Summary."""

    assert signature_names(function) == ["x", "y"]
    assert signature_names(function, variadic=True) == ["x", "y", "args", "kwargs"]
