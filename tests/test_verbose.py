"""verbose= on the long fits: DP-SGD, the boosted trees, the forest, the tree, the logistic
regression, the PCA, the k-means and the private searches.

What they print is counters, public parameters, released values and times: never a value
computed on the training rows without noise, and in a search nothing that tells how many runs
(K, secret) were drawn.
"""

import re
import warnings

import numpy as np
import pytest

from skdp import PrivacyBudget
from skdp.cluster import DPKMeans
from skdp.decomposition import DPPCA
from skdp.ensemble import (
    DPHistGradientBoostingClassifier,
    DPHistGradientBoostingRegressor,
    DPRandomForestClassifier,
)
from skdp.linear_model import DPLogisticRegression, DPSGDClassifier, DPSGDRegressor
from skdp.tree import DPDecisionTreeClassifier
from skdp.model_selection import DPGridSearchCV
from skdp.naive_bayes import DPGaussianNB

rng = np.random.default_rng(0)
X = rng.uniform(0, 1, size=(300, 2))
Y = (X[:, 0] > 0.5).astype(int)


def test_dpsgd_prints_one_line_per_epoch(capsys):
    DPSGDClassifier(classes=[0, 1], noise_multiplier=1.0, epsilon=None, sampling_rate=0.5,
                    max_iter=3, verbose=1, random_state=0).fit(X, Y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    for epoch, line in enumerate(lines, 1):
        assert re.fullmatch(rf"-- Epoch {epoch}: step {2 * epoch}/6, learning rate \S+, "
                            r"\d+\.\d\d s", line), line


def test_dpsgd_prints_nothing_by_default(capsys):
    DPSGDRegressor(bounds_y=(0, 1), noise_multiplier=1.0, epsilon=None, sampling_rate=0.5,
                   max_iter=2, random_state=0).fit(X, X[:, 0])
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("est, y", [
    (DPHistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1, 2], max_iter=2), Y + (Y > 2)),
    (DPHistGradientBoostingRegressor(bounds=(0, 1), bounds_y=(0, 1), max_iter=2), X[:, 0]),
])
def test_boosting_prints_one_line_per_round(est, y, capsys):
    est.set_params(verbose=1, random_state=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    n_trees = 3 if hasattr(est, "classes") else 1
    assert len(lines) == 2
    for i, line in enumerate(lines, 1):
        assert re.fullmatch(rf"\[{i}/2\] {n_trees} tree\(s\), max depth = 2, in \d+\.\d{{3}}s",
                            line), line


def _lines(capsys):
    """The printed lines without their times."""
    return [re.sub(r", \d+\.\d{3}s$", "", line) for line in capsys.readouterr().out.splitlines()]


LONG_FITS = [
    (DPRandomForestClassifier(n_estimators=3, bounds=(0, 1), classes=[0, 1]), Y, [
        "[DPRandomForestClassifier] charged epsilon=1, delta=1e-05; growing 3 tree(s) of depth "
        "6, 2 feature(s) per node",
        "[DPRandomForestClassifier] tree 1/3 grown",
        "[DPRandomForestClassifier] tree 2/3 grown",
        "[DPRandomForestClassifier] tree 3/3 grown"]),
    (DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1], max_depth=2), Y, [
        "[DPDecisionTreeClassifier] charged epsilon=1, delta=1e-05; growing 1 tree(s) of depth "
        "2, 2 feature(s) per node",
        "[DPDecisionTreeClassifier] level 1/2 split",
        "[DPDecisionTreeClassifier] level 2/2 split",
        "[DPDecisionTreeClassifier] tree 1/1 grown"]),
    (DPLogisticRegression(bounds_X=(0, 1), classes=[0, 1], max_iter=3), Y, [
        "[DPLogisticRegression] charged epsilon=1, delta=1e-05",
        "[DPLogisticRegression] 3 steps of noisy gradient descent",
        "[DPLogisticRegression] step 1/3",
        "[DPLogisticRegression] step 2/3",
        "[DPLogisticRegression] step 3/3"]),
    (DPKMeans(3, bounds=(0, 1), max_iter=2), None, [
        "[DPKMeans] charged epsilon=1, delta=1e-05",
        "[DPKMeans] seeded 3 centres from a private tree coreset",
        "[DPKMeans] 2 Lloyd steps",
        "[DPKMeans] Lloyd step 1/2",
        "[DPKMeans] Lloyd step 2/2"]),
    (DPPCA(1, bounds=(0, 1)), None, [
        "[DPPCA] charged epsilon=1, delta=1e-05",
        "[DPPCA] released the noisy covariance of 2 features",
        "[DPPCA] eigendecomposition, 1 components kept"]),
]


@pytest.mark.parametrize("est, y, expected", LONG_FITS, ids=lambda e: type(e).__name__)
def test_long_fits_print_public_lines_that_do_not_depend_on_the_rows(est, y, expected, capsys):
    est.set_params(verbose=1, random_state=0).fit(X, y)
    assert _lines(capsys) == expected
    # Other values, the same shape and seed: the same lines (times aside).
    other = np.random.default_rng(5).uniform(0, 1, size=X.shape)
    est.fit(other, None if y is None else 1 - y)
    assert _lines(capsys) == expected
    est.set_params(verbose=0).fit(X, y)
    assert capsys.readouterr().out == ""


def test_the_logistic_regression_prints_about_ten_step_lines(capsys):
    DPLogisticRegression(bounds_X=(0, 1), classes=[0, 1], max_iter=40, verbose=1,
                         random_state=0).fit(X, Y)
    steps = [line for line in _lines(capsys) if " step " in line]
    assert steps == [f"[DPLogisticRegression] step {t}/40" for t in range(4, 41, 4)]


@pytest.mark.parametrize("verbose", [-1, 1.5, "yes"])
def test_bad_verbose_costs_nothing(verbose):
    budget = PrivacyBudget(10.0, 1e-5)
    for est in [DPSGDClassifier(classes=[0, 1], verbose=verbose, budget=budget),
                DPHistGradientBoostingClassifier(classes=[0, 1], verbose=verbose, budget=budget),
                DPRandomForestClassifier(classes=[0, 1], verbose=verbose, budget=budget),
                DPDecisionTreeClassifier(classes=[0, 1], verbose=verbose, budget=budget),
                DPLogisticRegression(classes=[0, 1], verbose=verbose, budget=budget),
                DPPCA(verbose=verbose, budget=budget),
                DPKMeans(verbose=verbose, budget=budget),
                DPGridSearchCV(DPGaussianNB(bounds=(0, 1), classes=[0, 1]), {"epsilon": [1.0]},
                               epsilon=None, verbose=verbose, budget=budget)]:
        with pytest.raises(ValueError, match="verbose must be an int"):
            est.fit(X, Y)
    assert len(budget) == 0


def _search_output(capsys, verbose, seed):
    inner = DPSGDClassifier(classes=[0, 1], noise_multiplier=1.0, epsilon=None,
                            sampling_rate=0.5, max_iter=1, verbose=1)
    search = DPGridSearchCV(inner, {"alpha": [1e-4, 1e-2]}, epsilon=None,
                            n_runs_mean=3.0, verbose=verbose,
                            random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, Y)
    return search, capsys.readouterr().out.splitlines()


def test_search_prints_the_same_lines_whatever_the_number_of_runs(capsys, monkeypatch):
    # K differs between the seeds; the lines do not tell it, and no run prints (the
    # estimator's verbose=1 is set to 0 in each run, then given back).
    from skdp.model_selection import _runs

    runs, one_run = [], _runs._one_run
    monkeypatch.setattr(_runs, "_one_run", lambda *a: runs.append(1) or one_run(*a))
    n_runs = []
    for seed in range(3):
        runs.clear()
        search, out = _search_output(capsys, 1, seed)
        n_runs.append(len(runs))
        assert search.estimator.verbose == 1
        assert not any("Epoch" in line for line in out)
        assert len(out) == 3
        assert out[0] == "[DPGridSearchCV] planning the search's cost"
        assert re.fullmatch(r"\[DPGridSearchCV\] charged epsilon=\S+, delta=\S+ for 2 "
                            r"candidates; running, \d+\.\d\d s", out[1]), out[1]
        best = search.best_index_ + 1
        assert out[2] == (f"[DPGridSearchCV] released candidate {best}/2 {search.best_params_}, "
                          f"noisy validation accuracy {search.best_score_:.3f}")
    assert len(set(n_runs)) > 1, n_runs  # the seeds drew different numbers of runs


def test_search_verbose_2_prints_each_planned_candidate(capsys):
    _, out = _search_output(capsys, 2, 0)
    planned = [line for line in out if "planned candidate" in line]
    assert [line.split(" {")[0] for line in planned] == [
        "[DPGridSearchCV] planned candidate 1/2", "[DPGridSearchCV] planned candidate 2/2"]
    assert len(out) == 5
