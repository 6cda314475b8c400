"""
Privacy-utility curves of each model family, against scikit-learn and the peers
================================================================================

Run it with ``python examples/privacy_utility_families.py [out.png]``; needs
matplotlib (``pip install 'skdp[plot]'``). It fits nothing: it plots the test
scores that the benchmarks recorded on UCI Adult (full published training and
test files, mean and standard deviation over 5 seeds, δ = 1e-5 for skdp) and
wrote into ``docs/benchmarks.md``, one panel per model family:

* linear classifiers: ``DPLogisticRegression`` and ``DPSGDClassifier`` against
  diffprivlib's ``LogisticRegression`` (``benchmarks/bench_adult_accuracy.py``);
* trees and boosting: ``DPHistGradientBoostingClassifier`` and
  ``DPRandomForestClassifier`` against interpret's DP-EBM and diffprivlib's
  forest (``benchmarks/bench_trees.py``);
* naive Bayes: ``DPGaussianNB`` against diffprivlib's ``GaussianNB``
  (``benchmarks/bench_models.py``);
* linear regression (hours per week): ``DPLinearRegression`` against
  diffprivlib's ``LinearRegression`` (``benchmarks/bench_linear_regression.py``);
* PCA: the variance of the training rows that ``DPPCA``'s top 5 components
  capture, as a ratio to scikit-learn's ``PCA``, against diffprivlib's ``PCA``
  (``benchmarks/bench_decomposition.py``; measured at ε = 0.1 and 1 only);
* k-means: the test inertia of ``DPKMeans``'s centres as a ratio to
  scikit-learn's ``KMeans`` (lower is better; ``benchmarks/bench_kmeans.py``),
  and at ε = 1 and k = 5 against diffprivlib's ``KMeans``
  (``benchmarks/bench_decomposition.py``).

The peers (diffprivlib, DP-EBM) run in their own environments and cannot be
installed where this documentation is built, so every curve here, skdp's
included, is read from the tables of the benchmarks page rather than
recomputed; the :doc:`/benchmarks` page has the commands, the machine and the
discussion. The dashed line is scikit-learn's non-private model on the same
features, the dotted one the majority class. diffprivlib is pure ε-DP (δ = 0),
a stricter guarantee than skdp's (ε, 1e-5).
"""

import re
import sys
from pathlib import Path

_NUMBER = r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?"


def read_tables(text):
    """Every Markdown table of ``text``: a list of ``(line number, header, rows)``."""
    tables, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"\|\s*-", lines[i + 1]):
            header = [c.strip() for c in lines[i].strip().strip("|").split("|")]
            cells, j = [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                cells.append([c.strip() for c in lines[j].strip().strip("|").split("|")])
                j += 1
            tables.append((i, header, cells))
            i = j
        else:
            i += 1
    return tables


def table_after(text, marker):
    """The first table that starts at or after the first line of ``text`` containing ``marker``."""
    start = next(n for n, line in enumerate(text.splitlines()) if marker in line)
    return next((header, rows) for n, header, rows in read_tables(text) if n >= start)


def number_after(text, pattern):
    """The number that follows the regular expression ``pattern`` in ``text``."""
    return float(re.search(pattern + r"\s*(" + _NUMBER + ")", text).group(1))


def mean_std(cell):
    """``"0.8286 ± 0.0038 (0.2 s)"`` -> ``(0.8286, 0.0038)``; ``None`` for "–" or "n/a"."""
    found = re.match(rf"\*?\*?({_NUMBER})(?:\s*±\s*({_NUMBER}))?", cell)
    return None if found is None else (float(found.group(1)), float(found.group(2) or 0.0))


def epsilon_of(label):
    """The ε of a column header or a row label: ``"ε = 0.1"`` -> 0.1, ``"ε=∞"`` -> inf."""
    found = re.search(rf"(?:ε\s*=\s*)?(∞|inf|{_NUMBER})\s*$", label)
    return float("inf") if found.group(1) in ("∞", "inf") else float(found.group(1))


def curves_by_row(header, rows, names):
    """Curves of a table with one model per row and one ε per column."""
    columns = [(k, epsilon_of(h)) for k, h in enumerate(header) if "ε" in h]
    curves = {}
    for row in rows:
        name = next((short for short, full in names.items() if row[0].startswith(full)), None)
        if name is not None and name not in curves:
            points = [(eps, mean_std(row[k])) for k, eps in columns]
            curves[name] = [(eps, *value) for eps, value in points if value and eps != float("inf")]
    return curves


def curves_by_column(header, rows, names):
    """Curves of a table with one ε per row and one model per column."""
    curves = {}
    for short, full in names.items():
        k = header.index(full)
        points = sorted((epsilon_of(row[0]), mean_std(row[k])) for row in rows)
        curves[short] = [(eps, *value) for eps, value in points if value and eps != float("inf")]
    return curves


def adult_rows(table, column=0, k=None):
    """The table's rows of the Adult data (column ``column``), with ``k`` clusters if given."""
    header, rows = table
    k_column = header.index("k") if k is not None else None
    return header, [row for row in rows
                    if row[column] == "adult" and (k is None or row[k_column] == k)]


def read_results(text):
    """Each family's curves and reference lines, from the benchmarks page's text."""
    adult = text[text.index("## Adult accuracy"):]
    trees = text[text.index("## Trees and boosting"):]
    models = text[text.index("## DP models"):]
    regression = models[models.index("bench_linear_regression.py"):]
    pca = text[text.index("## PCA and k-means"):]
    kmeans = text[text.index("## DPKMeans"):]
    header, rows = adult_rows(table_after(pca, "| data | rows x cols | k | DPKMeans |"))
    kmeans_k5 = {name: mean_std(rows[0][header.index(column)])
                 for name, column in [("skdp DPKMeans", "DPKMeans"), ("diffprivlib KMeans", "diffprivlib")]}
    return [
        {"title": "Linear classifiers", "ylabel": "test accuracy",
         "curves": curves_by_row(*table_after(adult, "| model |"), {
             "skdp DPLogisticRegression": "skdp `DPLogisticRegression`",
             "skdp DPSGDClassifier (64, 64)": "skdp `DPSGDClassifier",
             "diffprivlib LogisticRegression": "diffprivlib `LogisticRegression`"}),
         "sklearn": ("LogisticRegression", number_after(
             adult, r"Non-private scikit-learn `LogisticRegression` on the same 105 features:")),
         "majority": number_after(adult, r"majority class")},
        {"title": "Trees and boosting", "ylabel": "test accuracy",
         "curves": curves_by_row(*table_after(trees, "**Adult**"), {
             "skdp DPHistGradientBoostingClassifier": "skdp DPHistGradientBoostingClassifier",
             "skdp DPRandomForestClassifier": "skdp DPRandomForestClassifier",
             "interpret DP-EBM": "interpret DP-EBM",
             "diffprivlib RandomForestClassifier": "diffprivlib RandomForestClassifier"}),
         "sklearn": ("HistGradientBoostingClassifier", number_after(
             trees, r"scikit-learn's `HistGradientBoostingClassifier` \(one fit\):")),
         "majority": number_after(adult, r"majority class")},
        {"title": "Naive Bayes", "ylabel": "test accuracy",
         "curves": curves_by_column(*table_after(models, "| epsilon |"), {
             "skdp DPGaussianNB (δ = 0)": "skdp δ=0 (pure)",
             "skdp DPGaussianNB (δ = 1e-5)": "skdp δ=1e-5",
             "diffprivlib GaussianNB": "diffprivlib GaussianNB (pure)"}),
         "sklearn": ("GaussianNB", number_after(models, r"Non-private scikit-learn `GaussianNB`:")),
         "majority": number_after(models, r"Majority class on the test set:")},
        {"title": "Linear regression (hours per week)", "ylabel": "test R²",
         "curves": curves_by_column(*table_after(regression, "| epsilon |"), {
             "skdp DPLinearRegression": "skdp box + data_norm",
             "diffprivlib LinearRegression": "diffprivlib (pure ε)"}),
         "sklearn": ("LinearRegression", number_after(
             regression, r"Non-private `LinearRegression`: R² =")),
         "majority": None},
        {"title": "PCA (5 components)", "ylabel": "variance captured / scikit-learn's",
         "curves": curves_by_column(*adult_rows(table_after(pca, "| ε | table |"), column=1), {
             "skdp DPPCA": "DPPCA",
             "diffprivlib PCA": "diffprivlib (corrected sampler)"}),
         "sklearn": ("PCA", 1.0), "majority": None},
        {"title": "k-means", "ylabel": "test inertia / scikit-learn's (lower is better)",
         "curves": {**{f"skdp DPKMeans, k = {k}": curves_by_row(
                        *adult_rows(table_after(kmeans, "| data | rows x cols | k | ε="), k=k),
                        {"skdp": "adult"})["skdp"] for k in ("3", "8")},
                    **{f"{name}, k = 5": [(number_after(pca, r"\(5 seeds, ε ="), *value)]
                       for name, value in kmeans_k5.items()}},
         "sklearn": ("KMeans", 1.0), "majority": None},
    ]


def main(path=None, benchmarks=None):
    """Plot the recorded curves; save them to ``path`` if given. Return the figure and data.

    ``benchmarks`` is the benchmarks page (``docs/benchmarks.md`` of the checkout
    this script is in, by default).
    """
    import matplotlib.pyplot as plt

    if benchmarks is None:
        benchmarks = Path(sys.argv[0]).resolve().parents[1] / "docs" / "benchmarks.md"
    families = read_results(Path(benchmarks).read_text(encoding="utf-8"))
    fig, axes = plt.subplots(2, 3, figsize=(16, 8.5))
    for ax, family in zip(axes.flat, families):
        low = family["sklearn"][1] if family["majority"] is None else family["majority"]
        for name, points in family["curves"].items():
            eps, mean, std = zip(*points)
            if max(mean) < low - 1:  # a peer far below the axis: say so in the legend instead
                ax.plot([], [], " ", label=f"{name}: {max(mean):.1e} at best (off the axis)")
                continue
            ax.errorbar(eps, mean, yerr=std, marker="o", capsize=3, label=name,
                        linestyle="--" if not name.startswith("skdp") else "-")
        sklearn_name, sklearn_score = family["sklearn"]
        ax.axhline(sklearn_score, color="black", linestyle="--", linewidth=1,
                   label=f"scikit-learn {sklearn_name} (not private)")
        if family["majority"] is not None:
            ax.axhline(family["majority"], color="tab:gray", linestyle=":", label="majority class")
        ax.set_xscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel(family["ylabel"])
        ax.set_title(f"Adult: {family['title']}")
        low, high = ax.get_ylim()
        ax.set_ylim(low, high + 0.5 * (high - low))  # room for the legend above the curves
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("Recorded by the benchmarks (docs/benchmarks.md): mean over 5 seeds, ± std where recorded")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
        plt.close(fig)
    return {"figure": fig, "families": families}


if __name__ == "__main__":
    main(*sys.argv[1:2])
