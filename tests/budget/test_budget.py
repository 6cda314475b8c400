"""PrivacyBudget in one process: validation, refusals, handles, δ, display."""

import copy
import math
import os
import pickle
import sqlite3

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone

from skdp import BudgetExceededError, PrivacyBudget
from skdp._base import DPEstimatorMixin
from skdp.accounting import (
    GaussianEvent,
    RDPCurve,
    SelfComposedEvent,
    approximate_dp_rdp,
    epsilon_of,
    gaussian_rdp,
    laplace_rdp,
    pure_dp_rdp,
)


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "ledger.sqlite")


# -- validation ---------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.0, -1.0, math.nan, -math.inf])
def test_invalid_cap_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        PrivacyBudget(epsilon, 1e-5)


@pytest.mark.parametrize("delta", [-1e-9, 1.0, 1.5, math.nan, math.inf])
def test_invalid_cap_delta(delta):
    with pytest.raises(ValueError, match=r"delta must be in \[0, 1\)"):
        PrivacyBudget(1.0, delta)


@pytest.mark.parametrize("orders", [[1.0, 2.0], [0.5], [], [2.0, math.nan], [2.0, math.inf]])
def test_invalid_orders(orders):
    with pytest.raises(ValueError, match="order"):
        PrivacyBudget(1.0, 1e-5, orders=orders)


def test_invalid_cap_creates_no_ledger(path):
    with pytest.raises(ValueError):
        PrivacyBudget(-1.0, 1e-5, ledger=path)
    assert not os.path.exists(path)


@pytest.mark.parametrize("bad", [0.5, "pure_dp", None, {"rdp": [0.1]}, np.array([0.1])])
def test_charge_takes_only_curves(bad):
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises(TypeError, match="RDPCurve"):
        budget.charge(bad)
    with pytest.raises(TypeError, match="RDPCurve"):
        budget.can_afford(bad)
    assert len(budget) == 0


@pytest.mark.parametrize(
    "make",
    [
        lambda: pure_dp_rdp(0.0),
        lambda: pure_dp_rdp(-1.0),
        lambda: pure_dp_rdp(math.nan),
        lambda: gaussian_rdp(0.0),
        lambda: gaussian_rdp(math.nan),
        lambda: approximate_dp_rdp(1.0, 1.0),
        lambda: approximate_dp_rdp(1.0, -0.1),
        lambda: approximate_dp_rdp(1.0, math.nan),
        lambda: RDPCurve([2.0, 4.0], [0.1, math.nan]),
        lambda: RDPCurve([2.0, 4.0], [0.1, -0.1]),
    ],
)
def test_invalid_curves_cannot_be_built(make):
    # A charge can only take an RDPCurve, and an RDPCurve with a bad ε, δ or
    # RDP value cannot exist: the error comes before any budget is touched.
    with pytest.raises(ValueError):
        make()


def test_the_cap_is_read_only():
    budget = PrivacyBudget(1.0, 1e-5)
    for name in ("epsilon", "delta", "orders", "path"):
        with pytest.raises(AttributeError):
            setattr(budget, name, 100.0)
    assert budget.epsilon == 1.0 and budget.delta == 1e-5


# -- refusals -----------------------------------------------------------------
def test_refused_charge_records_nothing(path):
    budget = PrivacyBudget(1.0, 0.0, ledger=path)
    budget.charge(pure_dp_rdp(0.7), label="first")
    before = budget.ledger
    with sqlite3.connect(path) as conn:
        rows_before = conn.execute("SELECT * FROM charges").fetchall()
    assert not budget.can_afford(pure_dp_rdp(0.4))
    with pytest.raises(BudgetExceededError, match="Nothing was recorded"):
        budget.charge(pure_dp_rdp(0.4), label="too much")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT * FROM charges").fetchall() == rows_before
    assert len(budget) == 1
    assert [c.label for c in budget.ledger] == [c.label for c in before] == ["first"]
    assert budget.spent() == (0.7, 0.0)
    # A smaller charge still fits after the refusal, and the ids stay dense.
    assert budget.can_afford(pure_dp_rdp(0.3))
    assert budget.charge(pure_dp_rdp(0.3)).id == 2


def test_budget_exceeded_is_a_value_error():
    budget = PrivacyBudget(0.5, 1e-5)
    with pytest.raises(ValueError):
        budget.charge(pure_dp_rdp(1.0))


def test_non_private_charge_is_refused_by_a_finite_cap():
    budget = PrivacyBudget(100.0, 1e-5)
    with pytest.raises(BudgetExceededError):
        budget.charge(RDPCurve.non_private())
    assert len(budget) == 0
    unlimited = PrivacyBudget(math.inf, 1e-5)
    unlimited.charge(RDPCurve.non_private())
    assert unlimited.spent()[0] == math.inf and len(unlimited) == 1


def test_gaussian_charge_at_delta_zero_is_refused():
    # A Gaussian mechanism has no pure ε-DP bound: at δ = 0 its ε is infinite.
    budget = PrivacyBudget(10.0, 0.0)
    with pytest.raises(BudgetExceededError):
        budget.charge(gaussian_rdp(100.0))
    assert len(budget) == 0


# -- pure and approximate DP --------------------------------------------------
def test_pure_dp_charges_sum_exactly_at_delta_zero():
    budget = PrivacyBudget(1.0, 0.0)
    for eps in (0.25, 0.5, 0.125):
        budget.charge(pure_dp_rdp(eps))
    assert budget.spent() == (0.875, 0.0)
    budget.charge(laplace_rdp(8.0))  # Laplace with scale 8: ε = 1/8
    assert budget.spent() == (1.0, 0.0)
    with pytest.raises(BudgetExceededError):
        budget.charge(pure_dp_rdp(1e-6))


def test_pure_dp_charges_at_positive_delta_use_the_smaller_bound():
    # Many small pure-DP charges compose below their sum under RDP.
    budget = PrivacyBudget(10.0, 1e-5, accountant="rdp")
    for _ in range(30):
        budget.charge(pure_dp_rdp(0.05))
    eps, delta = budget.spent()
    assert eps < 1.1 < 1.5 and delta == 1e-5  # RDP gives 1.0513 < the sum 1.5
    expected = (30 * pure_dp_rdp(0.05)).epsilon(1e-5)
    assert eps == pytest.approx(expected, rel=1e-12)
    # A few large ones: the plain sum is the smaller bound, reported at δ = 0.
    pure = PrivacyBudget(10.0, 1e-5, accountant="rdp")
    pure.charge(pure_dp_rdp(2.0))
    pure.charge(pure_dp_rdp(3.0))
    assert pure.spent() == (5.0, 0.0)


def test_approximate_dp_deltas_add_up_separately():
    budget = PrivacyBudget(10.0, 1e-5, accountant="rdp")
    budget.charge(approximate_dp_rdp(1.0, 3e-6))
    budget.charge(approximate_dp_rdp(1.0, 3e-6))
    total = budget.total_curve()
    assert total.delta == pytest.approx(6e-6, rel=1e-12)
    # The RDP part is converted at what is left of δ (RDPCurve docstring).
    left = 1e-5 - total.delta
    pure_part = pure_dp_rdp(1.0) * 2
    assert budget.spent()[0] == pytest.approx(min(2.0, pure_part.epsilon(left)), rel=1e-12)
    # A third one fits in δ (9e-6 <= 1e-5) ...
    budget.charge(approximate_dp_rdp(0.5, 3e-6))
    # ... a fourth would need 1.2e-5 > 1e-5: refused whatever its ε.
    assert not budget.can_afford(approximate_dp_rdp(1e-3, 3e-6))
    with pytest.raises(BudgetExceededError):
        budget.charge(approximate_dp_rdp(1e-3, 3e-6))
    assert len(budget) == 3


def test_budget_delta_smaller_than_one_approximate_delta_refuses():
    budget = PrivacyBudget(10.0, 1e-6)
    with pytest.raises(BudgetExceededError):
        budget.charge(approximate_dp_rdp(0.1, 2e-6))
    assert len(budget) == 0


def test_approximate_deltas_summing_past_one_are_refused_not_crashing():
    budget = PrivacyBudget(10.0, 0.9)
    budget.charge(approximate_dp_rdp(0.1, 0.6))
    assert not budget.can_afford(approximate_dp_rdp(0.1, 0.5))
    with pytest.raises(BudgetExceededError):
        budget.charge(approximate_dp_rdp(0.1, 0.5))
    assert len(budget) == 1


# -- handles: copies, clones and pickles keep the one ledger -------------------
class _Spender(DPEstimatorMixin, BaseEstimator):
    """A minimal estimator that charges a pure-DP curve per fit."""

    def __init__(self, epsilon=0.1, budget=None):
        self.epsilon = epsilon
        self.budget = budget

    def fit(self, X=None, y=None):
        self._charge_budget(pure_dp_rdp(self.epsilon))
        return self


def test_deepcopy_copy_clone_and_pickle_keep_the_same_ledger(path):
    budget = PrivacyBudget(1.0, 0.0, ledger=path)
    assert copy.deepcopy(budget) is budget
    assert copy.copy(budget) is budget
    estimator = _Spender(budget=budget)
    assert copy.deepcopy(estimator).budget is budget
    cloned = clone(estimator)
    assert cloned.budget is budget
    cloned.fit()
    pickled = pickle.loads(pickle.dumps(estimator))
    assert pickled.budget == budget and pickled.budget.path == budget.path
    pickled.fit()
    twice = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(budget))))
    twice.charge(pure_dp_rdp(0.2))
    for handle in (budget, pickled.budget, twice):
        assert len(handle) == 3
        assert handle.spent()[0] == pytest.approx(0.4, rel=1e-12)
    assert (twice.epsilon, twice.delta) == (1.0, 0.0)
    np.testing.assert_array_equal(twice.orders, budget.orders)


def test_pickled_temporary_budget_shares_the_ledger():
    budget = PrivacyBudget(1.0, 0.0)
    other = pickle.loads(pickle.dumps(budget))
    other.charge(pure_dp_rdp(0.5))
    assert len(budget) == 1 and budget.spent() == (0.5, 0.0)


def test_unpickled_handle_without_its_ledger_fails_clearly(path):
    budget = PrivacyBudget(1.0, 0.0, ledger=path)
    data = pickle.dumps(budget)
    for name in os.listdir(os.path.dirname(path)):
        os.remove(os.path.join(os.path.dirname(path), name))
    orphan = pickle.loads(data)
    with pytest.raises(FileNotFoundError, match="No privacy ledger"):
        orphan.charge(pure_dp_rdp(0.1))
    assert not os.path.exists(path)  # no empty ledger was created


# -- reopening ----------------------------------------------------------------
def test_reopen_in_the_same_process(path):
    first = PrivacyBudget(2.0, 1e-5, ledger=path, orders=[2.0, 8.0, 32.0])
    first.charge(pure_dp_rdp(0.5), label="a")
    again = PrivacyBudget.open(path)
    assert (again.epsilon, again.delta) == (2.0, 1e-5)
    assert again.orders.tolist() == [2.0, 8.0, 32.0]
    same = PrivacyBudget(2.0, 1e-5, ledger=path, orders=[2.0, 8.0, 32.0])
    same.charge(pure_dp_rdp(0.5), label="b")
    assert [c.label for c in again.ledger] == ["a", "b"]
    with pytest.raises(ValueError, match="PrivacyBudget.open"):
        PrivacyBudget(3.0, 1e-5, ledger=path, orders=[2.0, 8.0, 32.0])
    with pytest.raises(ValueError, match="PrivacyBudget.open"):
        PrivacyBudget(2.0, 1e-6, ledger=path, orders=[2.0, 8.0, 32.0])
    with pytest.raises(ValueError, match="PrivacyBudget.open"):
        PrivacyBudget(2.0, 1e-5, ledger=path)  # default orders differ
    assert len(again) == 2


def test_open_missing_or_foreign_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        PrivacyBudget.open(tmp_path / "missing.sqlite")
    text = tmp_path / "notes.txt"
    text.write_text("not a database " * 100)
    with pytest.raises(ValueError, match="not a skdp privacy ledger"):
        PrivacyBudget.open(text)
    with pytest.raises(ValueError, match="not a skdp privacy ledger"):
        PrivacyBudget(1.0, 0.0, ledger=text)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
    with pytest.raises(ValueError, match="not a skdp privacy ledger"):
        PrivacyBudget(1.0, 0.0, ledger=other)
    with sqlite3.connect(other) as conn:  # left untouched
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
    assert tables == ["people"]


def test_infinite_cap_round_trips(path):
    PrivacyBudget(math.inf, 0.0, ledger=path).charge(RDPCurve.non_private())
    again = PrivacyBudget.open(path)
    assert again.epsilon == math.inf and len(again) == 1


# -- display ------------------------------------------------------------------
def _two_charges(path):
    budget = PrivacyBudget(2.0, 1e-5, ledger=path)
    budget.charge(gaussian_rdp(8.0), label="mean <age>")
    budget.charge(pure_dp_rdp(0.25), label="histogram & counts")
    return budget


def test_report_lists_each_charge_with_running_total(path):
    budget = _two_charges(path)
    text = budget.report()
    lines = text.splitlines()
    assert "cap ε=2 at δ=1e-05" in lines[0] and "in 2 charges" in lines[0]
    assert path in lines[1]
    first, second = lines[3], lines[4]
    # the default accountant: the smaller of RDP and PLD of the same events
    alone_1 = epsilon_of(gaussian_rdp(8.0), 1e-5)
    total_2 = epsilon_of(gaussian_rdp(8.0) + pure_dp_rdp(0.25), 1e-5)
    assert alone_1 < gaussian_rdp(8.0).epsilon(1e-5)
    assert first.split()[0] == "1" and first.endswith("mean <age>")
    assert f"{alone_1:9.4f}" in first and "  pld      yes  " in first
    assert second.split()[0] == "2" and second.endswith("histogram & counts")
    assert f"{0.25:9.4f}  {total_2:9.4f}" in second
    assert f"spent ε={budget.spent()[0]:.4f}" in lines[0] and "accountant 'tightest'" in lines[0]
    assert lines[-1].startswith("spend composed by the smaller of RDP")


def test_repr_and_html(path):
    budget = _two_charges(path)
    text = repr(budget)
    assert text.startswith("PrivacyBudget(epsilon=2, delta=1e-05")
    assert "charges=2" in text and repr(path) in text
    assert "ledger=temporary" in repr(PrivacyBudget(1.0, 0.0))
    page = budget._repr_html_()
    assert page.count("<tr><td>") == 2
    assert "mean &lt;age&gt;" in page and "histogram &amp; counts" in page
    assert "in 2 charges" in page


def test_charge_records_label_time_pid_and_epsilon_alone(path):
    budget = PrivacyBudget(5.0, 1e-5, ledger=path)
    curve = gaussian_rdp(4.0) * 3
    charge = budget.charge(curve)
    (stored,) = budget.ledger
    assert stored.id == charge.id == 1
    assert stored.label == charge.label == curve.mechanism
    assert stored.pid == os.getpid()
    assert stored.time == charge.time and stored.datetime.year >= 2024
    assert stored.epsilon == charge.epsilon == epsilon_of(curve, 1e-5)
    assert stored.curve == curve
    assert stored.event == charge.event == curve.event == SelfComposedEvent(GaussianEvent(4.0), 3)
    assert stored.total_epsilon == charge.total_epsilon == charge.epsilon
    assert stored.composed_by == charge.composed_by == "pld"


# -- plot ---------------------------------------------------------------------
def test_plot_draws_the_cumulative_epsilon_and_the_cap(path):
    import matplotlib  # in the `test` extra

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    budget = _two_charges(path)
    ax = budget.plot()
    try:
        steps, cap = ax.get_lines()
        x, y = steps.get_data()
        np.testing.assert_array_equal(x, [0, 1, 2])
        expected = [0.0, budget.ledger[0].epsilon, budget.spent()[0]]
        np.testing.assert_allclose(y, expected, rtol=1e-12)
        assert cap.get_ydata()[0] == 2.0
        ax.figure.canvas.draw()  # the charge axis is counted: whole-number ticks only
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks)
        fig, given = plt.subplots()
        assert budget.plot(ax=given) is given
    finally:
        plt.close("all")


def test_plot_without_matplotlib_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ImportError, match=r"skdp\[plot\]"):
        PrivacyBudget(1.0, 0.0).plot()


def test_to_dict_lists_the_charges_with_running_totals(path):
    budget = _two_charges(path)
    info = budget.to_dict()
    assert (info["path"], info["epsilon"], info["delta"], info["n_charges"]) == (path, 2.0, 1e-5, 2)
    assert (info["spent_epsilon"], info["spent_delta"]) == budget.spent()
    first, second = info["charges"]
    assert (first["id"], first["label"], first["mechanism"]) == (1, "mean <age>", "gaussian(noise_multiplier=8)")
    assert first["epsilon"] == first["total_epsilon"] == epsilon_of(gaussian_rdp(8.0), 1e-5)
    assert first["event"] == {"kind": "gaussian", "noise_multiplier": 8.0}
    assert first["composed_by"] == "pld" and info["accountant"] == "tightest"
    # PLD of 0.25-DP randomized response at δ = 1e-5: just below its pure bound
    assert second["epsilon"] == epsilon_of(pure_dp_rdp(0.25), 1e-5) < 0.25 and second["delta"] == 1e-5
    assert second["total_epsilon"] == budget.spent()[0]
    assert second["pid"] == os.getpid() and second["datetime"][:2] == "20"


def test_opening_an_existing_ledger_does_not_wait_for_the_write_lock(path):
    import threading

    _two_charges(path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process in the middle of a charge
    opened = []
    thread = threading.Thread(target=lambda: opened.append(PrivacyBudget.open(path)), daemon=True)
    try:
        thread.start()
        thread.join(timeout=20)
        assert opened and len(opened[0]) == 2
    finally:
        writer.execute("ROLLBACK")
        writer.close()
        thread.join()
