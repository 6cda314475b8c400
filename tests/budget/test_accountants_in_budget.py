"""PrivacyBudget's accountants: events in the ledger, the tightest ε, legacy ledgers, calibration."""

import json
import math
import os
import shutil
import sqlite3
import time

import numpy as np
import pytest

from skdp import BudgetExceededError, PrivacyBudget
from skdp.accounting import (
    GaussianEvent,
    PLDAccountant,
    RDPAccountant,
    RDPCurve,
    calibrate_noise_multiplier,
    epsilon_of,
    gaussian_rdp,
    geometric,
    laplace_rdp,
    poisson_subsampled_gaussian_rdp,
    private_selection_rdp,
    pure_dp_rdp,
    randomized_response_rdp,
    sampled_without_replacement_gaussian_rdp,
    zcdp_rdp,
)
from skdp.budget import _ledger

DATA = os.path.join(os.path.dirname(__file__), "data")
SHARES = (0.5, 0.25, 0.75, 0.1, 0.9, 0.03, 0.97, 0.01, 0.99)


def _schema_version(path):
    with sqlite3.connect(path) as conn:
        return json.loads(conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])


def _hybrid(pld, rest, delta):
    """PLD part and RDP part joined by basic composition, the best of the budget's δ splits."""
    return min(rest.epsilon(delta * (1 - f)) + pld.epsilon(delta * f) for f in SHARES)


# -- a ledger written before events were recorded ---------------------------------------
@pytest.fixture
def legacy(tmp_path):
    """A copy of a ledger (schema 2) written by skdp before it stored events, and what that skdp reported."""
    path = str(tmp_path / "legacy.sqlite")
    shutil.copy(os.path.join(DATA, "legacy_v2.sqlite"), path)
    with open(os.path.join(DATA, "legacy_v2.json")) as f:
        return path, json.load(f)


def test_legacy_ledger_opens_and_composes_as_before(legacy):
    path, before = legacy
    budget = PrivacyBudget.open(path)
    assert budget.accountant == "tightest" and len(budget) == 8
    # No charge has an event: every one is composed by its RDP curve, bit for bit as before.
    assert all(c.event is None for c in budget.ledger)
    assert list(budget.spent()) == before["spent"]
    info = budget.to_dict()
    assert [c["total_epsilon"] for c in info["charges"]] == before["totals"]
    assert [c["epsilon"] for c in info["charges"]] == before["alone"]
    assert budget.total_curve().rdp.tolist() == RDPCurve.from_dict(before["total_curve"]).rdp.tolist()
    assert "no charge has a PLD" in budget.report().splitlines()[-1]
    for accountant in ("rdp", "pld"):
        assert list(PrivacyBudget.open(path, accountant=accountant).spent()) == before["spent"]
    # Reading wrote nothing.
    assert _schema_version(path) == 2


def test_legacy_ledger_migrates_in_the_first_charge_and_mixes_with_events(legacy):
    path, before = legacy
    budget = PrivacyBudget.open(path)
    new = poisson_subsampled_gaussian_rdp(0.01, 2.0, 1000)
    old_total = budget.total_curve()
    charge = budget.charge(new, label="new")
    assert _schema_version(path) == 4
    assert charge.event == new.event and budget.ledger[-1].event == new.event
    # The old charges still read as before, and count by their curves.
    history = budget.to_dict()["charges"]
    assert [c["total_epsilon"] for c in history[:8]] == before["totals"]
    assert [c["composed_by"] for c in history] == ["rdp"] * 8 + [charge.composed_by]
    rdp = (old_total + new).epsilon(1e-5)
    pld = PLDAccountant().compose(new.event)
    expected = min(rdp, _hybrid(pld, old_total, 1e-5))
    assert budget.spent()[0] == pytest.approx(expected, rel=1e-12)
    assert budget.spent()[0] <= rdp
    assert "8 charge(s) without a PLD" in budget.report().splitlines()[-1]


# -- the tightest ε is min(RDP, PLD) of the same events ----------------------------------
CURVES = [
    poisson_subsampled_gaussian_rdp(256 / 60000, 1.1, 2000),
    sampled_without_replacement_gaussian_rdp(0.01, 2.0, 300),
    laplace_rdp(10.0) * 5,
    gaussian_rdp(8.0) * 3 + gaussian_rdp(5.0),
    pure_dp_rdp(0.1),
    randomized_response_rdp(0.5, n_categories=4),
]


@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_budget_epsilon_is_the_min_of_rdp_and_pld_of_the_same_events(tmp_path, delta):
    budgets = {a: PrivacyBudget(math.inf, delta, ledger=tmp_path / f"{a}.sqlite", accountant=a)
               for a in ("tightest", "pld", "rdp")}
    pld, rdp = PLDAccountant(), RDPAccountant()
    for curve in CURVES:
        for budget in budgets.values():
            budget.charge(curve)
        pld.compose(curve.event)
        rdp.compose(curve.event)
        eps_pld, eps_rdp = pld.epsilon(delta), rdp.epsilon(delta)
        # the budget extends its running PLD state charge by charge, on the grid
        # it started with rather than the one a full composition picks: both
        # are upper bounds, close to each other
        assert budgets["pld"].spent()[0] == pytest.approx(eps_pld, rel=1e-3)
        assert budgets["rdp"].spent()[0] == pytest.approx(eps_rdp, rel=1e-12)
        assert budgets["tightest"].spent()[0] == pytest.approx(min(eps_pld, eps_rdp), rel=1e-3)
    # PLD is the tighter one on this ledger (the test has power)
    assert budgets["tightest"].spent()[0] < 0.97 * budgets["rdp"].spent()[0]
    # re-accounted from the file alone, by either accountant
    for a, budget in budgets.items():
        again = PrivacyBudget.open(budget.path)  # composes from scratch: no running state yet
        assert again.accountant == a
        assert again.spent() == (budget.spent() if a == "rdp" else pytest.approx(budget.spent(), rel=1e-3))


def test_refusal_uses_the_same_accountant_as_spent(tmp_path):
    curve = poisson_subsampled_gaussian_rdp(0.01, 1.0, 1000)
    n = 4
    tight = epsilon_of(curve * n, 1e-5)
    assert tight < epsilon_of(curve * n, 1e-5, accountant="rdp")
    budget = PrivacyBudget(tight, 1e-5, ledger=tmp_path / "a.sqlite")
    for _ in range(n):
        budget.charge(curve)
    assert budget.spent()[0] == pytest.approx(tight, rel=1e-3)  # the running state's grid
    assert budget.spent()[0] <= tight * (1 + 1e-12)  # over the cap it is checked by a full composition
    with pytest.raises(BudgetExceededError, match="accountant 'tightest'"):
        budget.charge(curve)
    assert len(budget) == n
    # The RDP accountant refuses the n-th charge on the same cap.
    rdp = PrivacyBudget(tight, 1e-5, ledger=tmp_path / "b.sqlite", accountant="rdp")
    for _ in range(n - 1):
        rdp.charge(curve)
    with pytest.raises(BudgetExceededError):
        rdp.charge(curve)


def test_charges_without_a_pld_join_by_basic_composition(tmp_path):
    selection = private_selection_rdp(gaussian_rdp(4.0), geometric(0.1))
    assert selection.event is None
    dpsgd = poisson_subsampled_gaussian_rdp(0.01, 1.5, 2000)
    zcdp = zcdp_rdp(0.01)  # an event the PLD accountant does not analyse
    budget = PrivacyBudget(math.inf, 1e-5, ledger=tmp_path / "mixed.sqlite")
    for curve in (dpsgd, selection, zcdp):
        budget.charge(curve)
    rest = selection + zcdp.with_event(None)
    pld = PLDAccountant().compose(dpsgd.event)
    rdp = (dpsgd + selection + zcdp).epsilon(1e-5)
    hybrid = _hybrid(pld, rest, 1e-5)
    assert budget.spent()[0] == pytest.approx(min(rdp, hybrid), rel=1e-12)
    assert [c.composed_by for c in budget.ledger][0] == "pld"
    pld_only = PrivacyBudget.open(budget.path, accountant="pld")
    assert pld_only.spent()[0] == pytest.approx(hybrid, rel=1e-12)
    text = budget.report()
    assert "2 charge(s) without a PLD" in text and "basic composition" in text


def test_an_event_more_private_than_its_curve_is_not_used(tmp_path):
    strong = gaussian_rdp(1.0)
    lying = strong.with_event(GaussianEvent(100.0))
    budget = PrivacyBudget(math.inf, 1e-5, ledger=tmp_path / "l.sqlite")
    charge = budget.charge(lying)
    assert charge.epsilon == strong.epsilon(1e-5) and charge.composed_by == "rdp"
    assert epsilon_of(lying, 1e-5) == strong.epsilon(1e-5)


# -- the running state: a charge does not read the ledger ------------------------------
def _fill(path, n, delta=1e-5):
    """n charges of a handful of mechanisms, inserted as a charge would, then one real charge."""
    mechanisms = [
        poisson_subsampled_gaussian_rdp(256 / 60000, 1.1, 469),  # one epoch of the DP-SGD run
        laplace_rdp(20.0),
        gaussian_rdp(30.0),
        gaussian_rdp(45.0) * 2,
        pure_dp_rdp(0.01),
        randomized_response_rdp(0.05, n_categories=3),
    ]
    budget = PrivacyBudget(math.inf, delta, ledger=path)
    with _ledger._connect(path, write=True) as conn:
        _ledger.ensure_schema(conn)
        for i in range(n - 1):
            _ledger.insert_charge(conn, label=f"c{i}", epsilon=0.0, curve=mechanisms[i % len(mechanisms)])
    budget.charge(mechanisms[0])  # recomposes once and stores the running state
    return budget, mechanisms


def test_a_charge_on_a_ledger_of_1000_charges_does_not_recompose_it(tmp_path, monkeypatch):
    budget, mechanisms = _fill(str(tmp_path / "big.sqlite"), 1000)

    def forbidden(*args, **kwargs):
        raise AssertionError("the whole ledger was recomposed")

    monkeypatch.setattr(_ledger, "compose_charges", forbidden)
    times = []
    for curve in mechanisms:
        start = time.perf_counter()
        charge = budget.charge(curve)
        times.append(time.perf_counter() - start)
    assert len(budget) == 1006
    # the running state composes the same events as the ledger holds
    pld = PLDAccountant()
    for c in budget.ledger:
        pld.compose(c.event)
    assert charge.total_epsilon == pytest.approx(min(pld.epsilon(1e-5), budget.total_curve().epsilon(1e-5)),
                                                 rel=1e-4)
    assert budget._pld.incremental  # extended, not composed again
    # the target is 50 ms (benchmarks/bench_budget.py); leave room for a loaded machine
    assert min(times) < 0.5


# -- the running PLD state of a handle, kept across charges and processes ---------------
def _exact_pure_epsilon(epsilons, delta):
    """The exact ε at δ of ε-DP randomized responses composed (their PLD enumerated)."""
    import itertools

    losses, probs = [], []
    for signs in itertools.product((1, -1), repeat=len(epsilons)):
        losses.append(sum(s * e for s, e in zip(signs, epsilons)))
        probs.append(math.prod(1 / (1 + math.exp(-s * e)) for s, e in zip(signs, epsilons)))
    losses, probs = np.array(losses), np.array(probs)
    lo, hi = 0.0, sum(epsilons)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if np.sum(probs * np.maximum(0.0, 1 - np.exp(mid - losses))) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def test_two_handles_extend_their_states_by_each_others_charges(tmp_path):
    # two handles (two processes' worth of state) on one ledger, charging in turn
    path = tmp_path / "shared.sqlite"
    a = PrivacyBudget(math.inf, 1e-5, ledger=path, accountant="pld")
    b = PrivacyBudget.open(path)
    epsilons = [0.0137, 0.353, 0.6071, 0.912, 0.4433, 1.31]
    for k, e in enumerate(epsilons, start=1):
        (a if k % 2 else b).charge(pure_dp_rdp(e))
        exact = _exact_pure_epsilon(epsilons[:k], 1e-5)
        for handle in (a, b):
            eps = handle.spent()[0]
            assert exact * (1 - 1e-12) <= eps <= exact * 1.01
    # each state was extended by the other handle's charges, not composed again
    assert a._pld.incremental and b._pld.incremental
    # what can_afford composes is not kept: the ledger does not hold it
    state = a._pld
    assert a.can_afford(pure_dp_rdp(0.5)) and a._pld is state
    # a pickled handle starts without a state (it is the process's own)
    import pickle

    assert pickle.loads(pickle.dumps(a))._pld is None


def test_a_charge_over_the_cap_by_the_running_state_is_decided_by_a_full_composition(tmp_path, monkeypatch):
    from skdp.accounting import _running

    monkeypatch.setattr(_running, "_FULL_UP_TO", 0)  # extend the state even for two mechanisms
    # a cap at the full composition's ε of five charges: the running state
    # composes the Gaussians one by one (not merged into one) and ends a
    # little above it (3.1533543 against 3.1533539); the fifth charge fits
    curves = [laplace_rdp(2.0)] + [gaussian_rdp(3.0)] * 4
    pld = PLDAccountant()
    for c in curves:
        pld.compose(c.event)
    cap = pld.epsilon(1e-5)
    budget = PrivacyBudget(cap, 1e-5, ledger=tmp_path / "cap.sqlite", accountant="pld")
    for c in curves[:-1]:
        budget.charge(c)
    state = budget._pld
    assert state.incremental
    over = state.with_leaves([(curves[0].event, 1), (GaussianEvent(3.0), 4)]).epsilon(1e-5)
    assert over > cap * (1 + 1e-9)  # the running state alone would refuse it
    budget.charge(curves[-1])
    assert budget.spent()[0] == cap and not budget._pld.incremental
    with pytest.raises(BudgetExceededError):
        budget.charge(laplace_rdp(5.0))


# -- estimators calibrated by the tightest accountant fit their own cap -------------------
def test_a_pld_calibrated_dpsgd_fit_fits_a_budget_of_its_epsilon(tmp_path):
    from skdp.linear_model import DPSGDClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = (X[:, 0] > 0).astype(int)
    budget = PrivacyBudget(1.0, 1e-5, ledger=tmp_path / "fit.sqlite")
    model = DPSGDClassifier(epsilon=1.0, delta=1e-5, budget=budget, max_iter=5, random_state=0,
                            classes=[0, 1]).fit(X, y)
    curve = model.privacy_curve_
    # its event: a Gaussian (the noisy count) and the DP-SGD steps
    assert '"kind": "poisson_sampled"' in json.dumps(curve.event.to_dict())
    # less noise than RDP calibration: RDP alone puts the fit over its own ε
    assert curve.epsilon(1e-5) > 1.0
    assert model.epsilon_spent_ <= 1.0 and budget.spent()[0] <= 1.0
    assert budget.spent()[0] == model.epsilon_spent_
    # the same fit on a budget accounted by RDP alone is refused
    rdp = PrivacyBudget(1.0, 1e-5, ledger=tmp_path / "rdp.sqlite", accountant="rdp")
    with pytest.warns(Warning), pytest.raises(BudgetExceededError):
        DPSGDClassifier(epsilon=1.0, delta=1e-5, budget=rdp, max_iter=5, random_state=0,
                        classes=[0, 1]).fit(X, y)


def test_a_gaussian_fit_is_calibrated_by_the_exact_gdp_inverse(tmp_path):
    from skdp.linear_model import DPLinearRegression

    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(500, 2))
    y = X @ [1.0, -1.0]
    budget = PrivacyBudget(0.5, 1e-6, ledger=tmp_path / "lin.sqlite")
    model = DPLinearRegression(epsilon=0.5, delta=1e-6, bounds_X=(-1, 1), bounds_y=(-2, 2), budget=budget,
                               random_state=0).fit(X, y)
    event = model.privacy_curve_.event
    assert isinstance(event, GaussianEvent)
    assert event.noise_multiplier == calibrate_noise_multiplier(0.5, 1e-6, accountant="pld")
    assert event.noise_multiplier < calibrate_noise_multiplier(0.5, 1e-6, accountant="rdp")
    assert model.epsilon_spent_ <= 0.5 and budget.spent()[0] <= 0.5
    assert model.epsilon_spent_ == pytest.approx(0.5, rel=1e-6)
