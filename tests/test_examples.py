"""Every script in examples/ runs, on reduced sizes, and does what it says."""

import importlib.util
import io
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"skdp_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_is_tested():
    tested = {"adult_pipeline", "private_statistics", "dpsgd_neural", "private_selection",
              "durable_budget", "privacy_utility_curve", "privacy_utility_families", "quickstart",
              "table_analysis"}
    assert {p.stem for p in EXAMPLES.glob("*.py")} == tested


def test_adult_pipeline_main_job():
    example = _load("adult_pipeline")
    out = io.StringIO()
    result = example.main(n_train=8000, n_test=3000, n_runs_mean=3, random_state=0, out=out)
    budget, search = result["budget"], result["search"]
    # The whole private search is one charge of the pipeline's total, within the cap.
    assert (budget.epsilon, budget.delta) == (1.0, 1e-5)
    assert len(budget) == 1
    eps, delta = budget.spent()
    assert 0.999 <= eps <= budget.epsilon and delta <= budget.delta
    assert eps == pytest.approx(search.epsilon_spent_)
    assert {p["dplogisticregression__C"] for p in search.candidates_} == set(example.C_VALUES)
    assert search.best_params_["dplogisticregression__C"] in example.C_VALUES
    # Fixed seed: 8000 rows are enough to beat the majority class (0.84 on the full data).
    assert result["majority"] < result["accuracy"] <= result["non_private"] + 0.02
    text = out.getvalue()
    assert f"private model, epsilon = 1:    {result['accuracy']:6.1%}" in text
    assert f"scikit-learn, not private:     {result['non_private']:6.1%}" in text
    assert f"Spent: epsilon = {eps:.3f}, in 1 charge:" in text
    assert "1. epsilon = " in text and "the private search over C (3 values)" in text
    assert "temporary file" in text
    # plain words: none of the search's internal notation
    assert "K~" not in text and "rdp" not in text.lower()


def test_adult_pipeline_pipeline_learns_nothing_without_privacy():
    # The only step that learns from the rows is the skdp model; the encoding is the
    # public schema's fixed map (no budget anywhere in it), and the total goes to the model.
    from skdp.pipeline._split import unset_epsilon_keys

    pipe = _load("adult_pipeline").build_pipeline(1.0)
    assert pipe.epsilon == 1.0
    assert not any(k.endswith("budget") for k in pipe.steps[0][1].get_params(deep=True))
    assert unset_epsilon_keys(pipe) == ["dplogisticregression__epsilon"]


def test_private_statistics():
    result = _load("private_statistics").main(n_rows=5000, epsilon=1.0, random_state=0,
                                              out=io.StringIO())
    budget, releases = result["budget"], result["releases"]
    assert len(budget) == 5
    assert budget.spent()[0] <= 1.0 + 1e-12
    private, exact = releases["mean age"]
    # Mean of 5000 ages clipped to [17, 90] at ε = 0.2 (a noisy sum and a noisy count):
    # Laplace noise of scale ~90/0.1 on the sum, i.e. ~0.2 years on the mean (std ~0.3),
    # so 3 years is about ten standard deviations.
    assert abs(private - exact) < 3
    private, exact = releases["number of rows"]
    assert exact == 5000 and abs(private - 5000) < 200  # Laplace(1/0.2): std 7


def test_dpsgd_neural():
    result = _load("dpsgd_neural").main(n_train=3000, n_test=1000, max_iter=1,
                                        hidden_layer_sizes=(8,), random_state=0,
                                        out=io.StringIO())
    budget, mlp = result["budget"], result["model"][-1]
    assert len(budget) == 1
    assert budget.spent()[0] <= 1.0
    assert mlp.epsilon_spent_ <= 1.0
    assert mlp.hidden_layer_sizes == (8,)
    assert "DPSGDClassifier" in budget.ledger[0].label
    assert 0.0 <= result["accuracy"] <= 1.0


def test_private_selection_costs_less_than_composition():
    example = _load("private_selection")
    result = example.main(n_train=3000, n_test=1000, n_candidates=3, n_runs_mean=4,
                          random_state=0, out=io.StringIO())
    budget = result["budget"]
    assert len(budget) == 1  # the whole search: one charge
    assert result["search_epsilon"] == pytest.approx(result["search"].epsilon_spent_)
    assert result["search_epsilon"] < result["composed_epsilon"]

    # The figure: the candidates, the chosen one at its private model's accuracy, the costs.
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    fig = example.plot_selection(result)
    try:
        selection, costs = fig.axes
        candidates, chosen = selection.lines
        assert sorted(candidates.get_xdata()) == sorted(
            p["classifier__C"] for p in result["search"].candidates_)
        assert list(chosen.get_xdata()) == [result["search"].best_params_["classifier__C"]]
        assert list(chosen.get_ydata()) == [result["accuracy"]]
        assert [bar.get_height() for bar in costs.patches] == [result["search_epsilon"],
                                                                result["composed_epsilon"]]
    finally:
        plt.close(fig)


def test_durable_budget_without_a_file_plays_four_sessions_and_plots(tmp_path):
    # As the documentation's gallery runs it: a temporary ledger, the fourth session
    # refused, then the spend plot (no window: the Agg backend).
    pytest.importorskip("matplotlib")
    env = dict(os.environ, MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, str(EXAMPLES / "durable_budget.py")], check=True,
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.stdout.count("Released the mean age") == 3
    assert done.stdout.count("Refused, nothing read") == 1
    assert "--- session 4 ---" in done.stdout
    assert list(tmp_path.iterdir()) == []  # nothing written where it ran


def test_durable_budget_continues_across_sessions(tmp_path):
    example = _load("durable_budget")
    path = tmp_path / "study.sqlite"
    budget, released = example.main(str(path), n_rows=2000, random_state=0, out=io.StringIO())
    assert released is not None and len(budget) == 1
    # A restart: a new Python process reopens the ledger and continues the spend.
    subprocess.run([sys.executable, str(EXAMPLES / "durable_budget.py"), str(path)],
                   check=True, capture_output=True)
    budget, released = example.main(str(path), n_rows=2000, random_state=1, out=io.StringIO())
    assert released is not None and len(budget) == 3
    assert budget.spent()[0] == pytest.approx(3 * example.PER_SESSION)
    # The fourth session would cross the cap of 1: refused, nothing recorded.
    out = io.StringIO()
    budget, released = example.main(str(path), n_rows=2000, random_state=2, out=out)
    assert released is None and len(budget) == 3
    assert "Refused" in out.getvalue()
    assert budget.spent()[0] <= budget.epsilon


def test_privacy_utility_curve(tmp_path):
    path = tmp_path / "curve.png"
    result = _load("privacy_utility_curve").main(str(path), n_train=3000, n_test=1000,
                                                 epsilons=(0.1, 1.0), n_seeds=1, random_state=0,
                                                 out=io.StringIO())
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert set(result["accuracy"]) == {0.1, 1.0}
    assert len(result["budget"]) == 2  # one charge per fit


def test_privacy_utility_families_plots_every_recorded_curve(tmp_path):
    pytest.importorskip("matplotlib")
    example = _load("privacy_utility_families")
    path = tmp_path / "families.png"
    result = example.main(str(path), benchmarks=EXAMPLES.parent / "docs" / "benchmarks.md")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    families = {f["title"]: f for f in result["families"]}
    assert set(families) == {"Linear classifiers", "Trees and boosting", "Naive Bayes",
                             "Linear regression (hours per week)", "PCA (5 components)", "k-means"}
    # Every family: skdp at two or more values of ε and at least one peer, next to the
    # non-private scikit-learn score; accuracies are accuracies.
    for title, family in families.items():
        curves = family["curves"]
        assert any(n.startswith("skdp") and len(c) >= 2 for n, c in curves.items()), title
        assert any(n.startswith(("diffprivlib", "interpret")) for n in curves), title
        for name, points in curves.items():
            eps = [p[0] for p in points]
            assert eps and eps == sorted(eps) and 0 < eps[0] and eps[-1] < math.inf, (title, name)
            if family["ylabel"] == "test accuracy":
                assert all(0.5 < p[1] < 1 for p in points), (title, name)
        assert 0 < family["sklearn"][1] <= 1, title


def test_privacy_utility_families_reads_the_benchmark_tables():
    example = _load("privacy_utility_families")
    text = ("## Section\n\nSome words, majority class 0.75.\n\n"
            "| model | ε=0.1 | ε=1 | ε=∞ |\n|---|---|---|---|\n"
            "| skdp `A` | 0.80 ± 0.01 | **0.85 ± 0.002** (1.2 s) | 0.86 ± 0.00 |\n"
            "| peer `B` | 0.70 ± 0.02 | – | – |\n\n"
            "| epsilon | skdp | peer |\n|---|---|---|\n| 0.1 | 0.5 ± 0.1 | -1.97e+18 ± 3.95e+18 |\n")
    header, rows = example.table_after(text, "| model |")
    assert example.curves_by_row(header, rows, {"A": "skdp `A`", "B": "peer `B`"}) == {
        "A": [(0.1, 0.80, 0.01), (1.0, 0.85, 0.002)], "B": [(0.1, 0.70, 0.02)]}
    header, rows = example.table_after(text, "| epsilon |")
    assert example.curves_by_column(header, rows, {"peer": "peer"}) == {
        "peer": [(0.1, -1.97e18, 3.95e18)]}
    assert example.number_after(text, "majority class") == 0.75


def test_quickstart():
    out = io.StringIO()
    from contextlib import redirect_stdout

    with redirect_stdout(out):
        _load("quickstart").main()
    assert "refused: one release too many" in out.getvalue()


def load_adult_education():
    from skdp.datasets import adult_schema

    return adult_schema()["categorical"]["education"]


def test_table_analysis_shares_one_budget_between_queries_and_a_model():
    pytest.importorskip("pandas")
    example = _load("table_analysis")
    out = io.StringIO()
    result = example.main(random_state=0, out=out)
    budget = result["budget"]
    assert len(budget) == 3  # two queries, one charge each, and the fit
    assert budget.spent()[0] <= budget.epsilon
    by_sex = result["by_sex"]
    assert list(by_sex.index) == ["Female", "Male"]
    # Adult: 11 % of women and 31 % of men earn above 50K; 8,000+ rows per group
    assert abs(by_sex.loc["Female", "high_income_mean"] - 0.11) < 0.02
    assert abs(by_sex.loc["Male", "high_income_mean"] - 0.31) < 0.02
    # the largest education levels (thousands of people) are released, only real ones
    released = set(result["by_education"].index)
    assert {"HS-grad", "Some-college", "Bachelors"} <= released
    assert released <= set(load_adult_education())
    assert result["accuracy"] > 0.8
    assert "Total spend" in out.getvalue()
