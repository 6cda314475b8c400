"""skdp ships its type hints (PEP 561), and the typed public API is fully annotated."""

import inspect
import re
import typing
from pathlib import Path

import pytest

import skdp
import skdp._typing
import skdp.cli
import skdp.mechanisms
import skdp.stats
from skdp.accounting import analytic_gaussian_sigma
from skdp.budget import PrivacyBudget

ROOT = Path(__file__).resolve().parents[1]


def test_py_typed_is_shipped():
    assert (Path(skdp.__file__).parent / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    package_data = pyproject.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    assert re.search(r'^"skdp"\s*=\s*\[[^\]]*"py\.typed"', package_data, re.M), package_data


def _public_callables():
    """The functions, classes' __init__ and public methods of the typed modules."""
    out = [skdp.cli.main, skdp.show_versions, analytic_gaussian_sigma]
    for module in (skdp.stats, skdp.mechanisms):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                out.append(obj.__init__)
                out += [member for attr, member in vars(obj).items()
                        if inspect.isfunction(member) and not attr.startswith("_")]
            else:
                out.append(obj)
    return out


@pytest.mark.parametrize("func", _public_callables(), ids=lambda f: f.__qualname__)
def test_public_signature_is_fully_annotated(func):
    sig = inspect.signature(func)
    missing = [name for name, p in sig.parameters.items()
               if name != "self" and p.annotation is inspect.Parameter.empty]
    assert not missing, f"{func.__qualname__}: parameters without a type: {missing}"
    assert sig.return_annotation is not inspect.Signature.empty, f"{func.__qualname__}: no return type"
    # the annotations (strings under postponed evaluation) name real types
    namespace = {**func.__globals__, **vars(skdp._typing), "PrivacyBudget": PrivacyBudget,
                 "Sequence": typing.Sequence}
    hints = typing.get_type_hints(func, globalns=namespace)
    assert "return" in hints
