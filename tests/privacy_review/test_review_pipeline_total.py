"""Review of DPPipeline's one total, its use inside private searches, and parts fitted in threads.

Verified here (each test passes):

- the split, the ledger's label and the charged curve are the same on two neighbouring
  datasets (one row added, with extreme values), with and without public bounds;
- a step that charges more on the real rows than on the placeholders is refused by the
  reservation (``_Prepaid``) after the one charge, which stays alone in the ledger, and the
  steps' parameters are given back;
- the steps' parameters come back after a step fails, the fitted copies of a
  ColumnTransformer with ``n_jobs`` hold no reservation (the fitted pipeline pickles);
- concurrent charges of the reservation never pass it (the lock);
- ``epsilon=inf`` is refused by a finite budget (given or the default), and bad totals and
  deltas cost nothing;
- a private search over a DPPipeline with a total gives its ``estimator`` back after a failure
  and after a refusal, charges once what ``privacy_cost`` reads, and releases a model without
  the recorder or the runs' seeds;
- under ``skdp.config_context`` a ColumnTransformer or FeatureUnion with ``n_jobs`` holding
  private parts is charged once, to the default budget.

Problems found. Fixed (the tests below pass): 1 (the parameters go back to the objects that
held them), 2 (every fitted copy still holding the reservation gets the budget back) and 3
(DPPipeline refuses, before its charge, the steps behind a private step that a private search
refuses). Still open (``xfail(strict=True)``: it fails now, and passes once fixed): 4.

1. With ``memory=`` scikit-learn's Pipeline fits clones of the steps and keeps the clones: the
   user's own step objects are left holding the reservation and the split ``epsilon`` (fit
   writes their parameters; they no longer pickle).
2. A meta-estimator that clones its private estimator in its fit (OneVsRestClassifier) keeps
   fitted copies holding the reservation: the fitted DPPipeline does not pickle.
3. A public step behind a private step whose output width depends on the values
   (OneHotEncoder(categories="auto") after an ordinal DPKBinsDiscretizer) makes the fit fail
   after the charge on one dataset and succeed on its neighbour (one row added): the error
   after the charge depends on a row.
4. A charge to the default budget made by code inside a public step (skdp.stats in a
   FunctionTransformer) is made in the serial fit, but not in the joblib threads that a
   ColumnTransformer with ``n_jobs`` runs in inside a DPPipeline (the default is thread-local).
"""

import math
import pickle
import tempfile
import threading
import time
import warnings

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import FeatureUnion
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

import skdp
from skdp import BudgetExceededError, PrivacyBudget, config_context, privacy_cost
from skdp.model_selection import DPGridSearchCV
from skdp.model_selection._probe import _CurveRecorder
from skdp.naive_bayes import DPGaussianNB
from skdp.pipeline import make_pipeline
from skdp.pipeline._pipeline import _Prepaid
from skdp.preprocessing import DPKBinsDiscretizer, DPMinMaxScaler, DPStandardScaler

pytestmark = pytest.mark.filterwarnings("ignore")

B = (-3.0, 3.0)


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    return X, (X[:, 0] > 0).astype(int)


def _recorders_in(obj, seen=None):
    """Every curve recorder (or reservation) reachable from ``obj``'s attributes."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, (str, bytes, np.ndarray, type)):
        return []
    seen.add(id(obj))
    if isinstance(obj, _CurveRecorder):
        return [obj]
    if isinstance(obj, dict):
        children = list(obj.values())
    elif isinstance(obj, (list, tuple)):
        children = list(obj)
    else:
        children = list(vars(obj).values()) if hasattr(obj, "__dict__") else []
    return [r for child in children for r in _recorders_in(child, seen)]


@pytest.mark.parametrize("bounded", [True, False])
def test_neighbouring_datasets_get_the_same_split_label_and_curve(bounded):
    X, y = _data(1000)
    X2, y2 = np.vstack([X, [[100.0, -100.0, 1e9]]]), np.append(y, 1)
    seen = []
    for Xd, yd in ((X, y), (X2, y2)):
        budget = PrivacyBudget(10.0, 1e-5)
        steps = ([DPStandardScaler(bounds=B), DPGaussianNB(bounds=B, classes=[0, 1])] if bounded
                 else [DPStandardScaler(), DPGaussianNB(classes=[0, 1])])
        pipe = make_pipeline(*steps, epsilon=1.0, budget=budget).fit(Xd, yd)
        (charge,) = budget.ledger
        seen.append((pipe.epsilon_split_, charge.label, charge.curve.rdp))
    assert seen[0][0] == seen[1][0] and seen[0][1] == seen[1][1]
    np.testing.assert_array_equal(seen[0][2], seen[1][2])


class _Greedy(DPGaussianNB):
    """Charges twice its curve when its input varies (real rows), once on placeholders."""

    def fit(self, X, y):
        self._real = len(np.unique(np.asarray(X)[:, 0])) > 5
        return super().fit(X, y)

    def _charge_budget(self, curve, *, label=None):
        return super()._charge_budget(curve + curve if self._real else curve, label=label)


def test_a_step_charging_more_than_reserved_is_refused_after_the_one_charge():
    X, y = _data()
    budget = PrivacyBudget(10.0, 1e-5)
    pipe = make_pipeline(DPStandardScaler(bounds=B), _Greedy(bounds=B, classes=[0, 1]),
                         epsilon=1.0, budget=budget)
    before = pipe.get_params(deep=True)
    with pytest.raises(RuntimeError, match="charged more than the pipeline reserved"):
        pipe.fit(X, y)
    assert len(budget) == 1 and budget.spent()[0] <= 1.0
    after = pipe.get_params(deep=True)
    assert {k: after[k] for k in before if k.endswith(("epsilon", "budget"))} == {
        k: before[k] for k in before if k.endswith(("epsilon", "budget"))}


class _Boom(DPGaussianNB):
    def fit(self, X, y):
        super().fit(X, y)
        raise ZeroDivisionError("after the charge")


def _columns(n_jobs=2):
    return ColumnTransformer([("a", DPStandardScaler(bounds=B, random_state=3), [0, 1]),
                              ("b", DPMinMaxScaler(bounds=B), [2])], n_jobs=n_jobs)


def test_parameters_come_back_after_a_failure_and_fitted_copies_hold_no_reservation():
    X, y = _data()
    budget = PrivacyBudget(10.0, 1e-5)
    pipe = make_pipeline(_columns(), _Boom(bounds=(-5, 5), classes=[0, 1]), epsilon=1.0,
                         budget=budget)
    keys = ("epsilon", "budget", "random_state")
    before = {k: v for k, v in pipe.get_params(deep=True).items() if k.endswith(keys)}
    with pytest.raises(ZeroDivisionError):
        pipe.fit(X, y)
    after = {k: v for k, v in pipe.get_params(deep=True).items() if k.endswith(keys)}
    assert after == before and len(budget) == 1
    for _, fitted, _ in pipe[0].transformers_:
        assert fitted.budget is None
    assert pipe[0].transformers_[0][1].random_state == 3

    pipe = make_pipeline(_columns(), DPGaussianNB(bounds=(-5, 5), classes=[0, 1]), epsilon=1.0,
                         budget=PrivacyBudget(10.0, 1e-5)).fit(X, y)
    assert _recorders_in(pipe) == []
    pickle.dumps(pipe)


def test_concurrent_charges_never_pass_the_reservation(monkeypatch):
    recorder = _CurveRecorder()
    DPGaussianNB(bounds=B, classes=[0, 1], budget=recorder).fit(np.zeros((50, 2)),
                                                                 np.arange(50) % 2)
    one = recorder.total()
    total = _CurveRecorder.total

    def slow_total(self):  # widens the window between reading the spend and adding to it
        spent = total(self)
        time.sleep(0.002)
        return spent

    monkeypatch.setattr(_CurveRecorder, "total", slow_total)
    for _ in range(3):
        prepaid, accepted = _Prepaid(one + one + one), []

        def charge(prepaid=prepaid, accepted=accepted):
            try:
                prepaid.charge(one)
                accepted.append(1)
            except RuntimeError:
                pass

        threads = [threading.Thread(target=charge) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(accepted) == 3


def test_an_infinite_total_is_refused_by_a_finite_budget_and_bad_totals_cost_nothing():
    X, y = _data()

    def pipe(**kw):
        return make_pipeline(DPStandardScaler(bounds=B), DPGaussianNB(bounds=B, classes=[0, 1]),
                             **kw)

    budget = PrivacyBudget(10.0, 1e-5)
    with pytest.raises(BudgetExceededError):
        pipe(epsilon=math.inf, budget=budget).fit(X, y)
    with config_context(budget=budget), pytest.raises(BudgetExceededError):
        pipe(epsilon=math.inf).fit(X, y)
    for total in (0.0, -1.0, float("nan"), True, "1", [1.0]):
        with pytest.raises((TypeError, ValueError)):
            pipe(epsilon=total, budget=budget).fit(X, y)
    for delta in (1.0, -0.1, float("nan"), "x"):
        with pytest.raises((TypeError, ValueError)):
            pipe(epsilon=1.0, delta=delta, budget=budget).fit(X, y)
    assert len(budget) == 0


def test_a_search_over_a_pipeline_with_a_total_gives_its_estimator_back_and_charges_once():
    X, y = _data(800)
    pipe = make_pipeline(_columns(), DPGaussianNB(bounds=(-5, 5), classes=[0, 1]), epsilon=0.6)
    budget = PrivacyBudget(0.5, 1e-5)
    bad = DPGridSearchCV(pipe, {"nope": [1]}, epsilon=0.9, budget=budget, random_state=0)
    with pytest.raises(ValueError):
        bad.fit(X, y)
    assert bad.estimator is pipe and pipe.epsilon == 0.6
    grid = {"dpgaussiannb__var_smoothing": [1e-9, 1e-3]}
    refused = DPGridSearchCV(pipe, grid, epsilon=0.9, budget=budget, random_state=0)
    with pytest.raises(BudgetExceededError):
        refused.fit(X, y)
    assert refused.estimator is pipe and len(budget) == 0

    budget = PrivacyBudget(5.0, 1e-5)
    search = DPGridSearchCV(pipe, grid, epsilon=0.9, budget=budget, random_state=0, n_jobs=2)
    cost = privacy_cost(search, X, y).epsilon
    search.fit(X, y)
    assert search.estimator is pipe and pipe.epsilon == 0.6
    assert len(budget) == 1 and budget.spent()[0] == pytest.approx(cost, rel=1e-9)
    released = search.best_estimator_
    assert _recorders_in(released) == []
    assert released[0].transformers_[0][1].random_state == 3  # the user's, not a run's seed
    pickle.dumps(search)


@pytest.mark.parametrize("parallel", ["columns", "union"])
def test_parts_in_threads_charge_the_default_budget_once(parallel):
    X, y = _data()
    part = (_columns() if parallel == "columns" else
            FeatureUnion([("s", DPStandardScaler(bounds=B)), ("m", DPMinMaxScaler(bounds=B))],
                         n_jobs=2))
    budget = PrivacyBudget(5.0, 1e-5)
    pipe = make_pipeline(part, DPGaussianNB(bounds=(-5, 5), classes=[0, 1]), epsilon=1.0)
    with config_context(budget=budget):
        cost = privacy_cost(pipe, X, y).epsilon
        pipe.fit(X, y)
    assert len(budget) == 1 and budget.spent()[0] == pytest.approx(cost, rel=1e-9)


# -- problems found ---------------------------------------------------------------------------


def test_with_memory_the_users_steps_keep_their_parameters():
    X, y = _data()
    scaler = DPStandardScaler(bounds=B)
    pipe = make_pipeline(scaler, DPGaussianNB(bounds=(-5, 5), classes=[0, 1]), epsilon=1.0,
                         budget=PrivacyBudget(10.0, 1e-5), memory=tempfile.mkdtemp())
    pipe.fit(X, y)
    assert scaler.budget is None and scaler.epsilon == 1.0


def test_fitted_clones_of_a_meta_estimator_hold_no_reservation():
    X, _ = _data(900)
    y = np.digitize(X[:, 0], [-1, 1])
    budget = PrivacyBudget(20.0, 1e-5)
    pipe = make_pipeline(OneVsRestClassifier(DPGaussianNB(bounds=(-5, 5), classes=[0, 1])),
                         epsilon=1.0, budget=budget).fit(X, y)
    assert _recorders_in(pipe) == []
    assert all(e.budget is budget for e in pipe[-1].estimators_)
    pickle.dumps(pipe)
    # behind a private step, a meta-estimator (it learns the label set without privacy) is
    # refused before the charge, as a private search refuses it
    with pytest.raises(ValueError, match="learns from the data without privacy"):
        make_pipeline(DPStandardScaler(bounds=B),
                      OneVsRestClassifier(DPGaussianNB(bounds=(-5, 5), classes=[0, 1])),
                      epsilon=1.0, budget=budget).fit(X, y)
    assert len(budget) == 1


def test_whether_the_fit_fails_after_the_charge_does_not_depend_on_a_row():
    X, y = np.full((600, 3), -2.9), np.arange(600) % 2
    X2, y2 = np.vstack([X, [[2.9, 2.9, 2.9]]]), np.append(y, 1)
    outcomes = []
    for Xd, yd in ((X, y), (X2, y2)):
        budget = PrivacyBudget(10.0, 1e-5)
        pipe = make_pipeline(
            DPKBinsDiscretizer(bounds=B, encode="ordinal", n_bins=5, random_state=0),
            OneHotEncoder(sparse_output=False),
            DPGaussianNB(bounds=(0, 1), classes=[0, 1], epsilon=0.5, random_state=0),
            budget=budget)
        try:
            pipe.fit(Xd, yd)
            outcomes.append(("fitted", len(budget)))
        except BudgetExceededError:
            raise
        except Exception as exc:  # after the charge, or refused before it
            outcomes.append((type(exc).__name__, len(budget)))
    assert outcomes[0] == outcomes[1] == ("ValueError", 0)  # refused before the charge


def _private_centring(Z):
    Z = np.asarray(Z, dtype=float)
    return Z - skdp.stats.mean(Z[:, 0], epsilon=0.5, bounds=B)


@pytest.mark.xfail(strict=True, reason="the default budget is thread-local: a budget=None "
                   "charge made inside a ColumnTransformer's joblib threads is not made")
def test_a_default_budget_charge_inside_a_part_is_made_in_threads_too():
    X, y = _data()
    budget = PrivacyBudget(10.0, 1e-5)
    columns = ColumnTransformer([("c", FunctionTransformer(_private_centring), [0]),
                                 ("s", DPStandardScaler(bounds=B), [1, 2])], n_jobs=2)
    with config_context(budget=budget), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make_pipeline(columns, DPGaussianNB(bounds=(-9, 9), classes=[0, 1])).fit(X, y)
    assert any(charge.label.startswith("skdp.stats.mean") for charge in budget.ledger)
