"""The default budget: skdp.config_context, set_config and get_config (as scikit-learn's).

A fit, a search, a pipeline, an skdp.stats function or an skdp.analysis query
given no ``budget`` charges the default budget in force; an explicit budget
wins; without either nothing is charged, as before. The configuration is
thread-local and restored on exit, and reaches joblib (loky, threading) and
dask workers: those of skdp's own parallel work, and the clones that
scikit-learn's helpers send to their workers.
"""

import os
import pickle
import threading

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline

import skdp
from skdp import PrivacyBudget, config_context, get_config, privacy_cost, set_config
from skdp.analysis import PrivateTable
from skdp.model_selection import DPGridSearchCV
from skdp.naive_bayes import DPGaussianNB
from skdp.pipeline import make_pipeline as dp_make_pipeline
from skdp.preprocessing import DPStandardScaler
from skdp.stats import mean, quantile
from skdp.utils._parallel import Parallel, delayed

from _testing import epsilon_spent_of_fit

B = (-3.0, 3.0)


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    return X, (X[:, 0] > 0).astype(int)


def _nb(**kw):
    return DPGaussianNB(**{"bounds": B, "classes": [0, 1], "epsilon": 0.5, "random_state": 0, **kw})


@pytest.fixture(autouse=True)
def _no_configuration_left():
    set_config(budget=None)  # each test starts, and leaves this thread, without a default
    yield
    set_config(budget=None)


# -- the configuration itself --------------------------------------------------------
def test_contexts_nest_and_restore_on_exit():
    a, b = PrivacyBudget(1.0, 1e-5), PrivacyBudget(2.0, 1e-5)
    assert get_config() == {"budget": None}
    with config_context(budget=a):
        assert get_config()["budget"] is a
        with config_context(budget=b):
            assert get_config()["budget"] is b
            with config_context():  # nothing given: nothing changes
                assert get_config()["budget"] is b
            with config_context(budget=None):  # None: no default in this block
                assert get_config()["budget"] is None
            assert get_config()["budget"] is b
        assert get_config()["budget"] is a
    assert get_config() == {"budget": None}
    # restored after an error too
    with pytest.raises(RuntimeError), config_context(budget=a):
        raise RuntimeError
    assert get_config()["budget"] is None
    # get_config returns a copy
    get_config()["budget"] = a
    assert get_config()["budget"] is None


def test_set_config_lasts_until_changed_or_a_context_around_it_ends():
    a, b = PrivacyBudget(1.0, 1e-5), PrivacyBudget(2.0, 1e-5)
    set_config(budget=a)
    assert get_config()["budget"] is a
    set_config()
    assert get_config()["budget"] is a
    with config_context(budget=b):
        set_config(budget=None)
        assert get_config()["budget"] is None
    assert get_config()["budget"] is a


def test_only_a_privacy_budget_is_accepted():
    with pytest.raises(TypeError, match="budget must be a skdp.PrivacyBudget"):
        set_config(budget=1.0)
    with pytest.raises(TypeError, match="budget must be a skdp.PrivacyBudget"), \
            config_context(budget="ledger.sqlite"):
        pass
    assert get_config()["budget"] is None


def test_the_configuration_is_thread_local():
    a, b = PrivacyBudget(1.0, 1e-5), PrivacyBudget(2.0, 1e-5)
    X, y = _data()
    seen, ready, done = {}, threading.Event(), threading.Event()

    def other():
        seen["before"] = get_config()["budget"]
        with config_context(budget=b):
            _nb().fit(X, y)  # charges b, the default of this thread
            ready.set()
            done.wait(10)
        seen["after"] = get_config()["budget"]

    with config_context(budget=a):
        thread = threading.Thread(target=other)
        thread.start()
        ready.wait(10)
        assert get_config()["budget"] is a  # the other thread's block changes nothing here
        _nb().fit(X, y)
        done.set()
        thread.join()
    assert seen == {"before": None, "after": None}
    assert (len(a), len(b)) == (1, 1)


# -- what charges the default budget -------------------------------------------------
def test_a_fit_without_budget_charges_the_default_and_an_explicit_one_wins():
    X, y = _data()
    default, own = PrivacyBudget(10.0, 1e-5), PrivacyBudget(10.0, 1e-5)
    with config_context(budget=default):
        nb = _nb().fit(X, y)
        _nb(budget=own).fit(X, y)
    assert (len(default), len(own)) == (1, 1)
    assert default.spent()[0] == pytest.approx(nb.epsilon_spent_, rel=1e-12)
    assert nb.budget is None  # fit never writes to a parameter
    assert "DPGaussianNB" in default.ledger[0].label


def test_without_any_budget_nothing_is_charged():
    X, y = _data()
    budget = PrivacyBudget(10.0, 1e-5)
    with config_context(budget=budget):
        pass
    nb = _nb().fit(X, y)
    mean(X[:, 0], epsilon=0.5, bounds=B, random_state=0)
    assert len(budget) == 0
    assert 0 < nb.epsilon_spent_ <= 0.5  # still private, and says what it spent


def test_a_refused_default_budget_fails_the_fit_before_it_reads_the_data():
    X, y = _data()
    budget = PrivacyBudget(0.3, 1e-5)
    nb = _nb()
    with config_context(budget=budget), pytest.raises(skdp.BudgetExceededError), \
            pytest.warns(skdp.BudgetExhaustedWarning):
        nb.fit(X, y)
    assert len(budget) == 0 and not hasattr(nb, "theta_")


def test_stats_functions_charge_the_default_budget():
    x = np.linspace(-1, 1, 200)
    default, own = PrivacyBudget(10.0, 1e-5), PrivacyBudget(10.0, 1e-5)
    with config_context(budget=default):
        mean(x, epsilon=0.5, bounds=(-1, 1), random_state=0)
        quantile(x, 0.5, epsilon=0.5, bounds=(-1, 1), random_state=0)
        mean(x, epsilon=0.5, bounds=(-1, 1), budget=own, random_state=0)
        with pytest.raises(ValueError):  # bad input costs nothing
            mean(x, epsilon=-1.0, bounds=(-1, 1))
    assert (len(default), len(own)) == (2, 1)
    assert default.ledger[0].label.startswith("skdp.stats.mean(")


def test_a_table_without_budget_charges_the_default_at_each_query():
    df = pd.DataFrame({"region": np.repeat(["N", "S"], 200),
                       "income": np.linspace(0, 100.0, 400)})
    table = PrivateTable(df, bounds={"income": (0, 100)}, random_state=0)  # outside any block
    first, second = PrivacyBudget(10.0, 1e-5), PrivacyBudget(10.0, 1e-5)
    with config_context(budget=first):
        table.count(epsilon=0.5)
    with config_context(budget=second):
        table.groupby("region", keys=["N", "S"]).agg({"income": "mean"}, epsilon=0.5)
    table.count(epsilon=0.5)  # no default any more: charges nothing
    assert (len(first), len(second)) == (1, 1)
    own = PrivacyBudget(10.0, 1e-5)
    with config_context(budget=first):
        PrivateTable(df, budget=own, random_state=0).count(epsilon=0.5)
    assert (len(first), len(own)) == (1, 1)


def test_a_search_charges_the_default_once_as_privacy_cost_reads_it():
    X, y = _data(2000)
    budget = PrivacyBudget(50.0, 1e-7)
    search = DPGridSearchCV(_nb(), {"var_smoothing": [1e-9, 1e-3]}, epsilon=1.0, random_state=0)
    with config_context(budget=budget):
        cost = privacy_cost(search, X, y)
        search.fit(X, y)
    assert len(budget) == 1
    assert cost.delta == 1e-7  # the default budget's delta, as the search calibrates at
    assert cost.epsilon == pytest.approx(budget.spent()[0], rel=1e-9)
    assert search.epsilon_spent_ == pytest.approx(budget.spent()[0], rel=1e-9)


def test_a_dp_pipeline_charges_the_default_once_for_all_steps():
    X, y = _data()
    budget = PrivacyBudget(1.0, 1e-5)
    pipe = dp_make_pipeline(DPStandardScaler(bounds=B, epsilon=0.5, random_state=0), _nb(epsilon=1.0))
    with config_context(budget=budget), pytest.raises(skdp.BudgetExceededError, match="DPPipeline"):
        pipe.fit(X, y)  # all or nothing, as with an explicit budget
    assert len(budget) == 0
    pipe.set_params(dpstandardscaler__epsilon=0.2, dpgaussiannb__epsilon=0.5)
    with config_context(budget=budget):
        cost = privacy_cost(pipe, X, y)
        pipe.fit(X, y)
    assert len(budget) == 1 and budget.ledger[0].label.startswith("DPPipeline(")
    assert cost.epsilon == pytest.approx(budget.spent()[0], rel=1e-12)
    assert pipe.named_steps["dpgaussiannb"].budget is None  # the parameters are given back


def test_a_plain_pipeline_charges_each_step():
    X, y = _data()
    budget = PrivacyBudget(10.0, 1e-5)
    with config_context(budget=budget):
        make_pipeline(DPStandardScaler(bounds=B, epsilon=0.5), _nb()).fit(X, y)
    assert len(budget) == 2


# -- workers ---------------------------------------------------------------------------
def _fit_in_worker(X, y):
    """A naive Bayes fit's ε, as a joblib task that worker processes can import."""
    return delayed(epsilon_spent_of_fit)(_nb(), X, y)


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_skdp_parallel_sets_the_default_in_its_workers(backend):
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    with config_context(budget=budget):
        # more tasks than pre-dispatched: later ones leave from joblib's own threads
        spent = Parallel(n_jobs=2, backend=backend, pre_dispatch=2)(
            _fit_in_worker(X, y) for _ in range(6))
    assert len(budget) == 6 and spent == [epsilon_spent_of_fit(_nb(), X, y)] * 6
    Parallel(n_jobs=2, backend=backend)(_fit_in_worker(X, y) for _ in range(2))
    assert len(budget) == 6  # after the block: no default in the workers


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_cross_val_score_with_two_jobs_charges_every_fold(backend):
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    est = _nb()
    with config_context(budget=budget), joblib.parallel_config(backend=backend):
        # 5 folds, 4 dispatched first: the fifth is cloned in a joblib thread
        scores = cross_val_score(est, X, y, cv=5, n_jobs=2)
    assert np.all(np.isfinite(scores))
    assert len(budget) == 5 and est.budget is None
    if backend == "loky":  # charged by the worker processes, on the one ledger
        assert os.getpid() not in {c.pid for c in budget.ledger}
    cross_val_score(est, X, y, cv=3, n_jobs=2)
    assert len(budget) == 5  # after the block: nothing


def test_grid_search_with_two_jobs_charges_every_fit_and_the_refit():
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    with config_context(budget=budget):
        GridSearchCV(_nb(), {"var_smoothing": [1e-9, 1e-3]}, cv=3, n_jobs=2).fit(X, y)
    assert len(budget) == 2 * 3 + 1


def test_a_clone_carries_the_default_only_while_its_block_lasts():
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    with config_context(budget=budget):
        copy = clone(_nb())
        inside = pickle.dumps(copy)
    outside = pickle.dumps(copy)
    copy.fit(X, y)  # in this process, after the block: no default
    pickle.loads(inside).fit(X, y)  # a copy is never in force in the process that made it
    assert len(budget) == 0
    assert "_skdp_default_budget" not in pickle.loads(outside).__dict__
    assert copy.get_params()["budget"] is None  # carried, not a parameter


def test_dask_workers_charge_the_default_budget():
    distributed = pytest.importorskip("distributed")
    X, y = _data()
    budget = PrivacyBudget(100.0, 1e-5)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster), joblib.parallel_config(backend="dask"):
        with config_context(budget=budget):
            cross_val_score(_nb(), X, y, cv=3, n_jobs=-1)
            spent = Parallel()(_fit_in_worker(X, y) for _ in range(2))
    assert len(budget) == 3 + 2 and spent == [epsilon_spent_of_fit(_nb(), X, y)] * 2
