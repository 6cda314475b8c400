"""The package's layers: every import runs down the order that the developer's guide writes.

``docs/developers.rst`` (section "Layers") lists the layers from the ground
up, each named by packages and modules. This test reads that list, walks the
imports of every module under ``skdp/`` with :mod:`ast` (imports inside
functions and under ``TYPE_CHECKING`` too) and checks that each module is in
exactly one layer, that no import reaches a layer listed after its own, and
that no modules import each other in a circle.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "skdp"
GUIDE = ROOT / "docs" / "developers.rst"


def _module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def documented_layers(text):
    """The layers of the guide's numbered list under ``.. _layers:``, ground first.

    Each layer is the set of ``skdp...`` names in double back-quotes in its item.
    """
    section = text.split(".. _layers:", 1)[1]
    section = re.split(r"\n[^\n]+\n=+\n", section.split("\n======\n", 1)[1], maxsplit=1)[0]
    items = [re.split(r"\n\n(?=\S)", item)[0]  # an item ends where unindented text follows
             for item in re.split(r"\n(?=\d+\. )", "\n" + section) if re.match(r"\d+\. ", item)]
    layers = [set(re.findall(r"``(skdp(?:\.\w+)*)``", item)) for item in items]
    return [layer for layer in layers if layer]


def layer_of(module, layers):
    """Index of the layer whose most specific name covers ``module`` (``skdp`` covers only itself)."""
    best = None
    for i, layer in enumerate(layers):
        for name in layer:
            covers = module == name or (name != "skdp" and module.startswith(name + "."))
            if covers and (best is None or len(name) > len(best[1])):
                best = (i, name)
    return None if best is None else best[0]


def imports_of(module, path):
    """(line, imported module) of every import of skdp in ``path``, at any depth of the code.

    ``from X import name`` imports the module ``X.name`` when there is one, else ``X``.
    """
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source
                       for alias in node.names]
        else:
            continue
        for target in targets:
            if target.split(".")[0] != "skdp":
                continue
            while target not in MODULES:  # skdp.x.y where y is a name inside skdp.x
                target = target.rsplit(".", 1)[0]
            if target != module:
                yield node.lineno, target


def _graph():
    return {module: sorted(set(imports_of(module, path))) for module, path in MODULES.items()}


def circles(graph):
    """The strongly connected components of more than one module (Tarjan 1972)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for _, w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


@pytest.fixture(scope="module")
def layers():
    return documented_layers(GUIDE.read_text(encoding="utf-8"))


def test_the_guide_lists_the_layers_from_the_ground_up(layers):
    assert len(layers) >= 8
    assert "skdp.accounting" in layers[1] and "skdp.cli" in layers[-1]
    names = [name for layer in layers for name in layer]
    assert not [n for n in names if n not in MODULES], "the guide names modules that do not exist"
    twice = {n for n in names if sum(n in layer for layer in layers) > 1}
    assert not twice, f"named in two layers: {sorted(twice)}"


def test_every_module_is_in_a_layer(layers):
    unplaced = [m for m in MODULES if layer_of(m, layers) is None]
    assert not unplaced, f"not in any layer of docs/developers.rst: {unplaced}"


def test_no_import_runs_up_the_layers(layers):
    upward = []
    for module, edges in _graph().items():
        here = layer_of(module, layers)
        for line, target in edges:
            there = layer_of(target, layers)
            if here is not None and there is not None and there > here:
                upward.append(f"{MODULES[module].relative_to(ROOT)}:{line} imports {target} "
                              f"(layer {there + 1} above {here + 1})")
    assert not upward, "imports that run up the layers:\n" + "\n".join(upward)


def test_no_import_circle():
    found = circles(_graph())
    assert not found, f"modules that import each other in a circle: {found}"


def test_the_walk_sees_imports_in_functions_and_relative_ones():
    # the checks above would pass vacuously if the walk missed these
    edges = dict(_graph())
    assert "skdp.stats._noise" in {t for _, t in edges["skdp.stats._sums"]}  # from ._noise import
    assert "skdp.accounting" in {t for _, t in edges["skdp._dpsgd._engine"]}  # from .. import accounting
    assert "skdp.budget" in {t for _, t in edges["skdp.utils._validation"]}
    assert "skdp._secure" in {t for _, t in edges["skdp.accounting._selection"]}  # in a function
