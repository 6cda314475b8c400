"""Sphinx configuration for the skdp documentation.

Build with ``sphinx-build -W -n -b html docs docs/_build/html`` (warnings are
errors, and ``-n`` makes every internal cross-reference to a skdp name, page or
label an error when it does not resolve). The build needs no network.
"""

import os
import re
import sys
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
# The checkout's package wins over an installed copy when both exist.
ROOT = Path(os.environ.get("SKDP_SOURCE_ROOT", HERE.parent))
if (ROOT / "skdp" / "__init__.py").is_file():
    sys.path.insert(0, str(ROOT))

import skdp  # noqa: E402

project = "skdp"
author = "skdp developers"
copyright = "skdp developers"
release = skdp.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

# Sources: reStructuredText everywhere, except the benchmarks page. Its source,
# benchmarks.md, is written in sections by the engineers who run the benchmarks;
# it stays plain Markdown (readable on GitHub, one source of truth) and MyST
# renders it, GitHub-style tables included.
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "scripts", "**/README.md"]
templates_path = ["_templates"]
root_doc = "index"

# API reference: one generated page per public name, listed in api.rst.
autosummary_generate = True
autosummary_imported_members = False
# Classes leave out inherited members through the class template; a default of
# "inherited-members": False would also override the template's :inherited-members:,
# which the table classes use (their queries come from one private base).
autodoc_default_options = {"members": True}
autodoc_typehints = "none"
autoclass_content = "class"

# numpydoc renders the docstrings; the members table comes from autosummary.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = True
# Only the aliases below become links; free text in a type ("lower, upper",
# "array-like of shape (n_samples,)") stays text, so it never breaks the build.
numpydoc_xref_ignore = "all"
# numpydoc's default aliases point into the Python and NumPy inventories, which
# an offline build does not have: keep those words as plain (ignored) names.
from numpydoc.xref import DEFAULT_LINKS  # noqa: E402

_OFFLINE_NAMES = sorted(DEFAULT_LINKS)
numpydoc_xref_aliases = {
    "PrivacyBudget": "skdp.PrivacyBudget",
    "RDPCurve": "skdp.accounting.RDPCurve",
    "Charge": "skdp.budget.Charge",
    "BudgetExceededError": "skdp.BudgetExceededError",
    **{name: name for name in _OFFLINE_NAMES},
}

# Nitpicky mode (``-n``) checks every reference. skdp names must resolve; the
# names of other projects (numpy, scipy, scikit-learn, the standard library)
# cannot resolve offline without their inventories, so they are exempted.
nitpicky = True
nitpick_ignore = [(role, name) for name in _OFFLINE_NAMES for role in ("py:obj", "py:class")]
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|sklearn|joblib|pandas|pd|matplotlib|sqlite3|os|pathlib|datetime|typing|collections|warnings)(\..*)?"),
    (r"py:.*", r"(int|float|str|bool|bytes|dict|list|tuple|set|object|callable|None|type|complex|Path|ndarray|array_like|Generator|Exception|ValueError|TypeError|Warning|UserWarning|RuntimeWarning|RuntimeError|KeyError|os\.PathLike|Any|Iterable|Sequence|Mapping|Callable|Optional|Union)"),
    (r"py:.*", r"(array-like|sparse matrix|matrix|estimator|instance|generator|path-like|file-like|RandomState|DataFrame|Series|Figure|Axes)"),
    (r"py:.*", r"(\{.*|.*\}|'.*'|\".*\"|[0-9.eE+-]+)"),
]

# Pages and figures.
html_theme = "alabaster"
html_title = f"skdp {release}"
html_static_path = ["_static"]
# Long lines in code blocks and outputs wrap instead of being cut at the page's edge.
html_css_files = ["skdp.css"]
html_theme_options = {
    "description": "Differentially private scikit-learn estimators with one shared RDP budget",
    "fixed_sidebar": False,
}
html_show_sourcelink = False
math_number_all = False

# MyST (benchmarks.md only): GitHub-style tables, dollar maths, heading anchors.
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
suppress_warnings = []


# Module-level constants (for example ``skdp.accounting.DEFAULT_ORDERS``) have
# no docstring of their own; autodoc would show the docstring of their type
# (numpy.ndarray's). Describe them here instead.
_DATA_DOCS = {
    "skdp.accounting.DEFAULT_ORDERS": (
        "The grid of Rényi orders α that every curve of the package is "
        "evaluated on unless ``orders=`` overrides it: 1.1, 1.2, …, 10.9, then "
        "11, 12, …, 63, then 128, 256, 512, 1024 (a read-only float array)."
    ),
}


def _describe_data(app, what, name, obj, options, lines):
    if what != "data":
        return
    type_doc = (type(obj).__doc__ or "").strip()
    own = "\n".join(lines).strip()
    if name in _DATA_DOCS:
        lines[:] = [_DATA_DOCS[name]]
    elif not own or (type_doc and own.splitlines()[0] in type_doc):
        lines[:] = [f"A constant of type ``{type(obj).__name__}``."]


def _resolve_short_skdp_name(app, env, node, contnode):
    """Resolve ``:class:`Charge``` to the one documented skdp object so named.

    Docstrings often name a skdp object by its short name from a module where
    it is not defined (``Charge`` inside ``PrivacyBudget``). When exactly one
    documented ``skdp.*`` object ends with that name, link to it; otherwise
    leave the reference unresolved, so that ``-n`` reports it.
    """
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip("~.")
    if target.startswith("skdp.") and any(p.startswith("_") for p in target.split(".")):
        # Private modules and classes (skdp._dpsgd, skdp._base.DPEstimatorMixin)
        # have no page by design: render the reference as text.
        return contnode
    if not target or target.startswith(("skdp.", "numpy.", "sklearn.")):
        return None
    domain = env.get_domain("py")
    suffix = "." + target
    matches = [
        name for name, obj in domain.objects.items()
        if name.startswith("skdp.") and name.endswith(suffix) and not obj.aliased
    ]
    if len(matches) != 1:
        return None
    from sphinx.util.nodes import make_refnode

    obj = domain.objects[matches[0]]
    return make_refnode(app.builder, node["refdoc"], obj.docname, obj.node_id, contnode, matches[0])


def _skip_routing_methods(app, what, name, obj, skip, options):
    # scikit-learn generates set_{fit,score,...}_request on every estimator
    # class; their docstrings link into scikit-learn's own user guide.
    if re.fullmatch(r"set_\w+_request", name):
        return True
    return None


# The command-line page shows real output: run the commands at build time (no
# network, about a second) and include what they print.
_CLI_RUNS = {
    "help": ["--help"],
    "account_help": ["account", "--help"],
    "calibrate_help": ["calibrate", "--help"],
    "budget_show_help": ["budget", "show", "--help"],
    "account": ["account", "--noise-multiplier", "1.1", "--sampling-rate", "0.0042666",
                "--steps", "14063", "--delta", "1e-5"],
    "account_json": ["account", "--noise-multiplier", "1.1", "--sampling-rate", "0.0042666",
                     "--steps", "14063", "--delta", "1e-5", "--json"],
    "calibrate": ["calibrate", "--target-epsilon", "1", "--delta", "1e-5",
                  "--sampling-rate", "0.01", "--epochs", "20"],
    "bad_input": ["account", "--noise-multiplier", "-1", "--steps", "10", "--delta", "1e-5"],
}


def _run_cli(args, env):
    import subprocess

    result = subprocess.run([sys.executable, "-m", "skdp", *args], capture_output=True,
                            text=True, env=env, timeout=120)
    shown = "$ skdp " + " ".join(args) + "\n" + result.stdout + result.stderr
    if result.returncode:
        shown += f"(exit status {result.returncode})\n"
    return shown


def _write_cli_outputs(app):
    import tempfile

    out = Path(app.srcdir) / "generated" / "cli"
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, COLUMNS="88", PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for name, args in _CLI_RUNS.items():
        (out / f"{name}.txt").write_text(_run_cli(args, env), encoding="utf-8")
    # A small ledger for "skdp budget show".
    from skdp import PrivacyBudget
    from skdp.accounting import gaussian_rdp, laplace_rdp

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "study.sqlite")
        budget = PrivacyBudget(1.0, 1e-5, ledger=path)
        budget.charge(gaussian_rdp(8.0), label="mean age (Gaussian, sigma 8)")
        budget.charge(laplace_rdp(10.0), label="histogram of education (Laplace, scale 10)")
        text = _run_cli(["budget", "show", path], env).replace(folder + os.sep, "")
        (out / "budget_show.txt").write_text(text, encoding="utf-8")


# The gallery: every script of examples/ is run at build time (in the checkout's
# folder, so that the build of a copy of docs/ finds them) and rendered with its
# printed output and its figures. The longer scripts read SKDP_EXAMPLES_QUICK and
# then run on a sample of the rows, which keeps the build to seconds; each says so.
os.environ["SKDP_EXAMPLES_QUICK"] = "1"
# One BLAS/OpenMP thread for the whole build: CI builds the docs on both stacks at
# once on 2 cores, where two threads per process oversubscribe them (a scikit-learn
# logistic regression of the gallery ran 20 times slower with two threads than with
# one on the loaded machine).
threadpool_limits(1)
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"\.py$",  # run every example, not only plot_*.py
    "within_subsection_order": "sphinx_gallery.sorting.FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
}

# The budgets page shows a budget's HTML view (what a notebook displays) and its
# ``budget.plot()``, made by the installed skdp at build time, so they cannot go stale.
def _write_budget_views(app):
    import tempfile

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skdp import PrivacyBudget, stats

    out = Path(app.srcdir) / "generated" / "budget"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        budget = PrivacyBudget(epsilon=1.0, delta=1e-5, ledger=os.path.join(folder, "study.sqlite"))
        ages = np.random.default_rng(0).normal(40, 10, size=10_000)
        stats.mean(ages, epsilon=0.5, bounds=(0, 100), budget=budget, random_state=0)
        stats.median(ages, epsilon=0.3, bounds=(0, 100), budget=budget, random_state=0)
        text = budget._repr_html_()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        budget.plot(ax=ax)
        fig.tight_layout()
        fig.savefig(out / "plot.png", dpi=100)
        plt.close(fig)
    (out / "repr.html").write_text(f'<div class="skdp-html-repr">{text}</div>\n', encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _write_cli_outputs)
    app.connect("builder-inited", _write_budget_views)
    app.connect("autodoc-skip-member", _skip_routing_methods)
    app.connect("autodoc-process-docstring", _describe_data)
    app.connect("missing-reference", _resolve_short_skdp_name)
