"""skdp ships its type hints (PEP 561), and the public API is fully annotated."""

import collections.abc
import importlib
import inspect
import os
import re
import typing
from pathlib import Path

import numpy as np
import pytest
from joblib import Memory
from scipy.sparse import spmatrix
from sklearn.base import BaseEstimator

import skdp
import skdp._typing
import skdp.cli
from skdp._secure import SecureGenerator

ROOT = Path(__file__).resolve().parents[1]
MODULES = [skdp] + [importlib.import_module(f"skdp.{name}") for name in sorted(skdp._SUBPACKAGES)]


def test_py_typed_is_shipped():
    assert (Path(skdp.__file__).parent / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    package_data = pyproject.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    assert re.search(r'^"skdp"\s*=\s*\[[^\]]*"py\.typed"', package_data, re.M), package_data


def _defined_in_skdp(cls):
    """The public methods (and ``__init__``) that skdp's own classes in ``cls``'s MRO define."""
    out = []
    for klass in cls.__mro__:
        if not klass.__module__.startswith("skdp."):
            continue  # scikit-learn's and builtins' methods are theirs to annotate
        for attr, member in vars(klass).items():
            if attr.startswith("_") and attr != "__init__":
                continue
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            elif isinstance(member, property):
                member = member.fget
            member = getattr(member, "fn", member)  # a method behind sklearn's available_if
            if inspect.isfunction(member):
                out.append(member)
    return out


def _public_callables():
    """Every function exported by skdp or a subpackage, and its classes' own public methods."""
    out = {skdp.cli.main: None}
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                out.update(dict.fromkeys(_defined_in_skdp(obj)))
            elif inspect.isfunction(obj):
                out[obj] = None
    return list(out)


def _namespace():
    """Names the annotations may use: they are strings, imported under TYPE_CHECKING."""
    names = {**vars(typing), **vars(collections.abc), **vars(skdp._typing), "np": np,
             "SecureGenerator": SecureGenerator, "BaseEstimator": BaseEstimator,
             "Memory": Memory, "spmatrix": spmatrix}
    for module in MODULES:
        names.update((name, getattr(module, name)) for name in module.__all__)
    return names


NAMESPACE = _namespace()


class _ImportedOnUse(dict):
    """Names whose module is slow to import (matplotlib: about a second), found when asked for."""

    MODULES = {"Axes": "matplotlib.axes"}

    def __missing__(self, name):
        if name not in self.MODULES:
            raise KeyError(name)
        return getattr(importlib.import_module(self.MODULES[name]), name)


@pytest.mark.parametrize("func", _public_callables(),
                         ids=lambda f: f"{f.__module__}.{f.__qualname__}")
def test_public_signature_is_fully_annotated(func):
    sig = inspect.signature(func)
    missing = [name for name, p in sig.parameters.items()
               if name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               and p.annotation is inspect.Parameter.empty]
    assert not missing, f"{func.__qualname__}: parameters without a type: {missing}"
    assert sig.return_annotation is not inspect.Signature.empty, f"{func.__qualname__}: no return type"
    # the annotations (strings under postponed evaluation) name real types
    hints = typing.get_type_hints(func, globalns={**NAMESPACE, **inspect.unwrap(func).__globals__},
                                  localns=_ImportedOnUse())
    assert "return" in hints


def test_walk_covers_the_estimators_and_the_budget():
    qualnames = {f.__qualname__ for f in _public_callables()}
    assert {"PrivacyBudget.charge", "RDPCurve.epsilon", "DPLogisticRegression.fit",
            "DPStandardScaler.transform", "privacy_cost", "check_generator",
            "analytic_gaussian_sigma", "main"} <= qualnames
    assert "BaseEstimator.get_params" not in qualnames


def test_mypy_finds_no_error():
    """mypy, configured in pyproject.toml ([tool.mypy] says what it leaves out), passes on skdp."""
    from mypy import api

    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                "--cache-dir", os.devnull, str(ROOT / "skdp")])
    assert status == 0, out + err
    assert out.startswith("Success: no issues found"), out
