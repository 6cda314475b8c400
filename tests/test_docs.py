"""The documentation: the API reference is complete, and the site builds.

The build runs ``sphinx-build -W -n -b html``: every warning is an error, and
nitpicky mode (``-n``) turns every internal reference (``:ref:``, ``:doc:``,
``:func:``, ``:class:``, ... to a skdp name, page or label) that does not
resolve into an error. That is the offline link check: it needs no network.
"""

import importlib
import importlib.util
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import skdp

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _public_packages():
    """skdp and every subpackage whose dotted name has no private component."""
    names = ["skdp"]
    for info in pkgutil.walk_packages(skdp.__path__, prefix="skdp."):
        parts = info.name.split(".")
        if info.ispkg and not any(p.startswith("_") for p in parts):
            names.append(info.name)
    return names


def _documented_names(text):
    """Fully qualified names listed in the autosummary blocks of api.rst."""
    names = []
    module = None
    in_autosummary = False
    for line in text.splitlines():
        directive = re.match(r"\.\.\s+currentmodule::\s+(\S+)", line)
        if directive:
            module = directive.group(1)
            in_autosummary = False
            continue
        if re.match(r"\.\.\s+autosummary::", line):
            in_autosummary = True
            continue
        if not in_autosummary:
            continue
        if line and not line[0].isspace():
            in_autosummary = False
            continue
        entry = line.strip()
        if not entry or entry.startswith(":"):
            continue
        entry = entry.lstrip("~")
        assert module is not None, f"{entry} is listed before any currentmodule"
        names.append(entry if entry.startswith("skdp.") else f"{module}.{entry}")
    return names


def _resolve(qualified_name):
    module_name, _, attr = qualified_name.rpartition(".")
    return getattr(importlib.import_module(module_name), attr)


def test_api_reference_lists_every_public_name():
    documented = _documented_names((DOCS / "api.rst").read_text(encoding="utf-8"))
    assert len(documented) == len(set(documented)), "a name is listed twice in docs/api.rst"

    # Every listed name exists. Each object is documented once, where users import it
    # from; a re-export (skdp.PrivacyBudget is skdp.budget.PrivacyBudget) counts as
    # documented wherever the same object is listed.
    # And nothing else: every listed name is in its module's __all__ (no stale entries).
    stale = [n for n in documented
             if n.rpartition(".")[2] not in getattr(importlib.import_module(n.rpartition(".")[0]), "__all__", [])]
    assert not stale, f"docs/api.rst lists names that are not in their module's __all__: {stale}"

    documented_ids = set()
    for name in documented:
        try:
            documented_ids.add(id(_resolve(name)))
        except (ImportError, AttributeError) as exc:
            pytest.fail(f"docs/api.rst lists {name}, which does not import: {exc}")

    missing = []
    for package_name in _public_packages():
        package = importlib.import_module(package_name)
        for name in getattr(package, "__all__", []):
            if name.startswith("__"):  # __version__
                continue
            if id(getattr(package, name)) not in documented_ids:
                missing.append(f"{package_name}.{name}")
    assert not missing, (
        "public names missing from docs/api.rst (add them to an autosummary list): "
        + ", ".join(missing)
    )


def test_public_packages_are_found():
    # Guards the test above against silently checking nothing.
    packages = _public_packages()
    assert {"skdp", "skdp.accounting", "skdp.budget"} <= set(packages)
    assert _documented_names("..  currentmodule:: skdp.x\n\n.. autosummary::\n   :toctree: g/\n\n   a\n   ~b\n\nText\n   c\n") == [
        "skdp.x.a",
        "skdp.x.b",
    ]


PAGES = sorted(p for p in DOCS.rglob("*.rst") if "generated" not in p.parts and "_build" not in p.parts)


# getting_started.rst shows a refused fit, which warns as well as raising.
@pytest.mark.filterwarnings("ignore::skdp.BudgetExhaustedWarning")
@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_examples_in_pages_run(page, tmp_path, monkeypatch):
    # The ``>>>`` examples of the user guide are doctests, like the docstrings'.
    import doctest

    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    result = doctest.testfile(
        str(page),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        verbose=False,
        report=True,
    )
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {page.name} failed (see output)"


def _require_sphinx():
    missing = [m for m in ("sphinx", "numpydoc", "myst_parser") if importlib.util.find_spec(m) is None]
    if not missing:
        return
    reason = f"{', '.join(missing)} not installed: pip install -e '.[docs]'"
    if os.environ.get("CI"):
        pytest.fail(f"CI must build the docs, but {reason}")
    pytest.skip(f"local run without the docs extra ({reason})")


@pytest.fixture(scope="module")
def built_docs(tmp_path_factory):
    """The site built once for this module's tests: ``(sphinx's result, html folder)``."""
    _require_sphinx()
    tmp_path = tmp_path_factory.mktemp("docs_build")
    # Build a copy, so that autosummary's generated pages, the gallery and the build
    # never touch the checkout (other builds may run at the same time). The gallery
    # runs the checkout's examples/ (docs/conf.py finds them from SKDP_SOURCE_ROOT).
    source = tmp_path / "docs"
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns("_build", "generated", "auto_examples"))
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")  # getting_started includes it
    env = dict(os.environ, SKDP_SOURCE_ROOT=str(ROOT))
    result = subprocess.run(
        [
            sys.executable, "-m", "sphinx",
            "-W", "--keep-going", "-n", "-q", "-E",
            "-b", "html",
            str(source), str(tmp_path / "html"),
        ],
        capture_output=True, text=True, env=env, timeout=900,
    )
    return result, tmp_path / "html"


def test_docs_build_without_warnings_or_broken_internal_references(built_docs):
    result, html = built_docs
    assert result.returncode == 0, f"sphinx-build failed:\n{result.stderr[-8000:]}"
    for page in ["index", "getting_started", "auto_examples/index", "api", "privacy_model",
                 "command_line", "benchmarks", "user_guide/index"]:
        assert (html / f"{page}.html").is_file(), page
    # The gallery: one page per script of examples/, each with the figures it drew.
    for script in sorted((ROOT / "examples").glob("*.py")):
        assert (html / "auto_examples" / f"{script.stem}.html").is_file(), script.name
    for name in ["privacy_utility_families", "privacy_utility_curve", "private_selection",
                 "durable_budget"]:
        assert (html / "_images" / f"sphx_glr_{name}_001.png").is_file(), name
    # One generated page per public name, and each is linked from the reference.
    api_html = (html / "api.html").read_text(encoding="utf-8")
    for name in _documented_names((DOCS / "api.rst").read_text(encoding="utf-8")):
        assert (html / "generated" / f"{name}.html").is_file(), name
        assert f"generated/{name}.html" in api_html, name
    # The notebook view's "?" link of every estimator is a page of this site.
    from skdp._base import DOCS_URL
    from test_doc_link import ESTIMATORS

    for name, cls in ESTIMATORS.items():
        link = cls.__new__(cls)._get_doc_link()
        assert link.startswith(DOCS_URL), link
        assert (html / link[len(DOCS_URL):]).is_file(), link

    # Offline link check of the built site: every relative link and image in every
    # page points to a file that exists and, with a #fragment, to an id in it.
    broken = _broken_internal_links(html)
    assert not broken, "broken internal links:\n" + "\n".join(broken[:50])


_LINK_RE = re.compile(r"""(?:href|src)=["']([^"']+)["']""")
_ID_RE = re.compile(r"""\bid=["']([^"']+)["']""")


def _broken_internal_links(html_root):
    from urllib.parse import unquote, urldefrag

    ids = {}
    broken = []
    pages = sorted(html_root.rglob("*.html"))
    for page in pages:
        for link in _LINK_RE.findall(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", link, flags=re.I):  # http:, mailto:, data:
                continue
            target, fragment = urldefrag(unquote(link))
            target = target.split("?", 1)[0]  # _static/basic.css?v=...
            path = (page.parent / target).resolve() if target else page
            if target.endswith("/"):
                path = path / "index.html"
            if not path.exists():
                broken.append(f"{page.relative_to(html_root)} -> {link}")
                continue
            if fragment and path.suffix == ".html":
                if path not in ids:
                    ids[path] = set(_ID_RE.findall(path.read_text(encoding="utf-8")))
                if fragment not in ids[path]:
                    broken.append(f"{page.relative_to(html_root)} -> {link} (no such anchor)")
    return broken


# Pages looked at in a real browser: the home page, Getting started, the gallery and
# one example with figures, the budgets page (HTML view and plot) and one API page.
SCREENSHOT_PAGES = ["index", "getting_started", "auto_examples/index",
                    "auto_examples/private_selection", "user_guide/budgets",
                    "generated/skdp.PrivacyBudget"]

# Run in the page after it loads: the images the browser could not show, how much text
# the page displays, and how many code blocks are wider than their box (lines cut at
# the edge or hidden behind a scroll bar; docs/_static/skdp.css makes them wrap). --dump-dom prints the page with these attributes set.
_PROBE = """<script>
window.addEventListener("load", function () {
  var broken = Array.prototype.filter.call(document.images, function (img) {
    return !img.complete || img.naturalWidth === 0;
  }).map(function (img) { return img.getAttribute("src"); });
  document.body.setAttribute("data-probe-broken-images", JSON.stringify(broken));
  document.body.setAttribute("data-probe-text-length", String(document.body.innerText.trim().length));
  var cut = Array.prototype.filter.call(document.querySelectorAll("pre"), function (pre) {
    return pre.scrollWidth > pre.clientWidth + 1;
  }).length;
  document.body.setAttribute("data-probe-cut-code-blocks", String(cut));
});
</script>"""


def _browser():
    """Debian's chromium; in CI (CI=true) a missing browser fails, elsewhere it skips."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    reason = "no headless browser (apt-get install -y chromium)"
    if os.environ.get("CI"):
        pytest.fail(f"CI must screenshot the docs, but there is {reason}; .ci/run installs it")
    pytest.skip(f"local run without a browser: {reason}")


def _chromium(browser, profile, *args):
    # --no-sandbox: CI runs as root, where chromium refuses its sandbox. A profile of
    # its own per call, so that two runs at once (the two CI stacks) never share one.
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--hide-scrollbars", "--no-first-run", "--window-size=1280,1600",
         f"--user-data-dir={profile}", "--virtual-time-budget=5000", *args],
        capture_output=True, text=True, timeout=120,
    )


def _page_problems(browser, page, screenshot, work):
    """What is wrong with ``page`` as the browser shows it (an empty list if nothing)."""
    from matplotlib.image import imread

    problems = []
    text = page.read_text(encoding="utf-8")
    # The site's own error markers: a reST error left in the page, a traceback printed
    # by a gallery example.
    if 'class="system-message"' in text:
        problems.append("a Sphinx system-message (a reST error) is shown")
    if "highlight-pytb" in text or re.search(
            r'class="sphx-glr-script-out".*?Traceback \(most recent call last\)', text, flags=re.S):
        problems.append("a Python traceback is shown in an example's output")
    # The page as the browser draws it.
    probe = page.with_name(f"_probe_{page.name}")
    probe.write_text(text.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    dom = _chromium(browser, work / "profile-dom", "--dump-dom", probe.as_uri()).stdout
    probe.unlink()
    broken = re.search(r'data-probe-broken-images="([^"]*)"', dom)
    length = re.search(r'data-probe-text-length="(\d+)"', dom)
    cut = re.search(r'data-probe-cut-code-blocks="(\d+)"', dom)
    if broken is None or length is None or cut is None:
        problems.append("the browser did not load the page")
    else:
        import html as html_module
        import json

        missing = json.loads(html_module.unescape(broken.group(1)))
        if missing:
            problems.append(f"broken images: {missing}")
        if int(length.group(1)) < 200:
            problems.append(f"almost no text is displayed ({length.group(1)} characters)")
        if int(cut.group(1)):
            problems.append(f"{cut.group(1)} code blocks are wider than the page's column")
    result = _chromium(browser, work / "profile-png", f"--screenshot={screenshot}", page.as_uri())
    if not screenshot.is_file():
        return problems + [f"no screenshot: {result.stderr[-2000:]}"]
    # Blank: nearly every pixel has the page's most common colour.
    rgb = imread(screenshot)[..., :3]  # floats in [0, 1]
    pixels = np.round(255 * rgb.mean(axis=-1)).astype(np.int64)  # grey levels
    background = np.bincount(pixels.ravel()).argmax()
    drawn = np.mean(np.abs(pixels - background) > 24)
    if drawn < 0.01:
        problems.append(f"renders blank ({drawn:.2%} of the pixels differ from the background)")
    return problems


def test_pages_render_in_a_headless_browser(built_docs, tmp_path):
    result, html = built_docs
    assert result.returncode == 0, f"sphinx-build failed:\n{result.stderr[-8000:]}"
    browser = _browser()
    # SKDP_DOCS_SCREENSHOTS=<folder> keeps the screenshots there, to look at them.
    shots = Path(os.environ.get("SKDP_DOCS_SCREENSHOTS", tmp_path / "screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    problems = {}
    for name in SCREENSHOT_PAGES:
        page = html / f"{name}.html"
        assert page.is_file(), name
        found = _page_problems(browser, page, shots / f"{name.replace('/', '_')}.png", tmp_path)
        if found:
            problems[name] = found
    assert not problems, f"pages that do not render right: {problems}"


def test_browser_check_catches_blank_pages_errors_and_broken_images(tmp_path):
    # The check above passes only because it works: a blank page, and a page with a
    # traceback in an example's output, a reST error, a broken image and a code block
    # too wide for its box, must have each of these reported, and a good page nothing.
    browser = _browser()
    words = "<p>" + "A paragraph of ordinary words in the page. " * 30 + "</p>"
    pages = {
        "blank": "<html><body></body></html>",
        "errors": f'<html><body>{words}<div class="sphx-glr-script-out"><pre>'
                  "Traceback (most recent call last):\n  ValueError</pre></div>"
                  '<div class="system-message">Error</div><img src="no_such.png">'
                  f'<pre style="width: 20em">{"x = 1; " * 40}</pre></body></html>',
        "good": f"<html><body><h1>Title</h1>{words}</body></html>",
    }
    found = {}
    for name, text in pages.items():
        page = tmp_path / f"{name}.html"
        page.write_text(text, encoding="utf-8")
        found[name] = _page_problems(browser, page, tmp_path / f"{name}.png", tmp_path)
    assert found["good"] == [], found["good"]
    assert any("renders blank" in p for p in found["blank"]), found["blank"]
    assert any("almost no text" in p for p in found["blank"]), found["blank"]
    for problem in ["traceback", "system-message", "no_such.png", "1 code blocks are wider"]:
        assert any(problem in p for p in found["errors"]), (problem, found["errors"])


def test_offline_link_checks_catch_broken_references(tmp_path):
    # The build above passes only because its checks work: a page with a broken
    # reference to a skdp function, a label and a page must fail, and a broken
    # relative link in HTML must be reported.
    _require_sphinx()
    source = tmp_path / "docs"
    source.mkdir()
    shutil.copy(DOCS / "conf.py", source / "conf.py")
    shutil.copytree(DOCS / "_templates", source / "_templates")
    shutil.copytree(DOCS / "_static", source / "_static")
    (source / "index.rst").write_text(
        "Broken\n======\n\n"
        ":func:`skdp.accounting.no_such_function`, :ref:`no-such-label`, :doc:`no_such_page`.\n",
        encoding="utf-8",
    )
    env = dict(os.environ, SKDP_SOURCE_ROOT=str(ROOT))
    result = subprocess.run(
        # plot_gallery=0: the gallery's pages are written but its scripts not run
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-E", "-b", "html",
         "-D", "plot_gallery=0", str(source), str(tmp_path / "html")],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert result.returncode != 0
    for name in ["no_such_function", "no-such-label", "no_such_page"]:
        assert name in result.stderr, result.stderr

    site = tmp_path / "site"
    site.mkdir()
    (site / "a.html").write_text('<a href="b.html#here">x</a> <a href="c.html">y</a> '
                                 '<img src="img.png"> <a href="https://example.org/">z</a>')
    (site / "b.html").write_text('<p id="there"></p>')
    assert sorted(_broken_internal_links(site)) == [
        "a.html -> b.html#here (no such anchor)",
        "a.html -> c.html",
        "a.html -> img.png",
    ]


def _list_table_rows(text):
    """Rows (lists of cell strings) of the list-tables in an rst page."""
    rows = []
    for line in text.splitlines():
        if line.startswith("   * -"):
            rows.append([line[len("   * -"):].strip()])
        elif line.startswith("     - ") or line == "     -":
            if rows:
                rows[-1].append(line.strip()[1:].strip())
    return rows


def test_composition_table_matches_the_plot_script():
    # The numbers in the composition page are what docs/scripts/plot_composition.py
    # computes with skdp.accounting today, to the digits shown.
    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("plot_composition", DOCS / "scripts" / "plot_composition.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    computed = {
        "Gaussian": dict(zip(("basic", "advanced", "RDP"), script.gaussian_curves(20.0))),
        "Laplace": dict(zip(("basic", "advanced", "RDP"), script.laplace_curves(0.1))),
    }
    rows = _list_table_rows((DOCS / "user_guide" / "composition.rst").read_text(encoding="utf-8"))
    header, body = rows[0], rows[1:]
    ks = [int(cell.split("=")[1]) for cell in header[2:]]
    mechanism = None
    checked = 0
    for row in body:
        mechanism = row[0].split(",")[0] or mechanism
        for k, shown in zip(ks, row[2:]):
            i = int(np.searchsorted(script.FITS, k))
            assert script.FITS[i] == k
            value = computed[mechanism][row[1]][i]
            decimals = len(shown.split(".")[1]) if "." in shown else 0
            assert abs(float(shown) - value) <= 0.51 * 10.0**-decimals, (mechanism, row[1], k, shown, value)
            checked += 1
    assert checked == 24
