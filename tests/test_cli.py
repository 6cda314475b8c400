"""The ``skdp`` command line, called through ``main(argv)``."""

import json
import math
import subprocess
import sys

import pytest

from skdp import PrivacyBudget
from skdp.accounting import (
    approximate_dp_rdp,
    calibrate_noise_multiplier,
    gaussian_rdp,
    poisson_subsampled_gaussian_rdp,
    pure_dp_rdp,
    sampled_without_replacement_gaussian_rdp,
)
from skdp.cli import main

DPSGD = ["--noise-multiplier", "4", "--sampling-rate", "0.01", "--steps", "10000", "--delta", "1e-5"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert (code, err) == (0, "")
    return json.loads(out)


# -- account ------------------------------------------------------------------
def test_account_reference_value(capsys):
    # q=0.01, σ=4, T=10000, δ=1e-5: ε = 1.0355 ± 0.0005 at order 17, the
    # fixed reference value of this configuration (exact Poisson-subsampled
    # Gaussian RDP of MTZ19, converted with CKS20 Prop. 12).
    code, out, err = run(capsys, "account", *DPSGD, "--accountant", "rdp")
    assert (code, err) == (0, "")
    assert "epsilon = 1.0355 at delta = 1e-05 (Renyi DP accountant, optimal order 17)" in out
    result = run_json(capsys, "account", *DPSGD, "--accountant", "rdp")
    assert result["epsilon"] == pytest.approx(1.0355, abs=5e-4)
    assert result["order"] == 17
    assert (result["accountant"], result["composed_by"]) == ("rdp", "rdp")
    assert (result["steps"], result["sampling"], result["delta"]) == (10000, "poisson", 1e-5)


def test_account_matches_the_accounting_functions(capsys):
    for cli_name, curve_of in [
        ("poisson", poisson_subsampled_gaussian_rdp),
        ("without-replacement", sampled_without_replacement_gaussian_rdp),
    ]:
        result = run_json(
            capsys, "account", "--noise-multiplier", "1.1", "--sampling-rate", "0.004",
            "--steps", "2000", "--delta", "1e-6", "--sampling", cli_name, "--accountant", "rdp",
        )
        eps, order = curve_of(0.004, 1.1, 2000).epsilon_and_order(1e-6)
        assert (result["epsilon"], result["order"]) == (eps, order)


def test_account_epochs_become_steps(capsys):
    by_epochs = run_json(capsys, "account", "--noise-multiplier", "2", "--sampling-rate", "0.1",
                         "--epochs", "3", "--delta", "1e-5")
    # 3 / 0.1 is 30.000000000000004 in floats: still 30 steps, not 31.
    assert by_epochs["steps"] == 30
    by_steps = run_json(capsys, "account", "--noise-multiplier", "2", "--sampling-rate", "0.1",
                        "--steps", "30", "--delta", "1e-5")
    assert by_epochs["epsilon"] == by_steps["epsilon"]
    partial = run_json(capsys, "account", "--noise-multiplier", "2", "--sampling-rate", "0.3",
                       "--epochs", "1", "--delta", "1e-5")
    # one DP-SGD epoch at q = 0.3 is max(1, round(1 / 0.3)) = 3 steps (dpsgd_schedule)
    assert partial["steps"] == 3


def test_account_steps_may_be_written_as_a_float(capsys):
    result = run_json(capsys, "account", "--noise-multiplier", "4", "--sampling-rate", "0.01",
                      "--steps", "1e4", "--delta", "1e-5")
    assert result["steps"] == 10000


def test_account_by_default_reports_the_tighter_of_both_accountants(capsys):
    # Both are upper bounds on the true ε, so the smaller is valid; here PLD's
    # (0.947, test_pld_reference) is below RDP's 1.0355.
    code, out, err = run(capsys, "account", *DPSGD)
    assert (code, err) == (0, "")
    assert "epsilon = 0.9471 at delta = 1e-05 (privacy loss distribution accountant)" in out
    result = run_json(capsys, "account", *DPSGD)
    both = {a: run_json(capsys, "account", *DPSGD, "--accountant", a)["epsilon"]
            for a in ("rdp", "pld")}
    assert result["epsilon"] == min(both.values()) == both["pld"] < both["rdp"]
    assert (result["accountant"], result["composed_by"], result["order"]) == ("tightest", "pld", None)
    # A single full-batch Gaussian step: RDP's conversion is the smaller here
    # only if PLD's discretisation costs more; whichever wins is reported.
    one = run_json(capsys, "account", "--noise-multiplier", "1", "--steps", "1", "--delta", "1e-5")
    alone = {a: run_json(capsys, "account", "--noise-multiplier", "1", "--steps", "1",
                         "--delta", "1e-5", "--accountant", a)["epsilon"] for a in ("rdp", "pld")}
    assert one["epsilon"] == min(alone.values())
    assert one["composed_by"] == min(alone, key=alone.get)


# -- calibrate ----------------------------------------------------------------
def test_calibrate_prints_sigma(capsys):
    code, out, err = run(capsys, "calibrate", "--target-epsilon", "1.0", "--delta", "1e-5",
                         "--sampling-rate", "0.01", "--steps", "10000")
    assert (code, err) == (0, "")
    sigma = calibrate_noise_multiplier(1.0, 1e-5, sampling_rate=0.01, steps=10000)
    assert f"sigma = {sigma:.4f}" in out
    # The tightest accountant needs less noise than RDP alone for the same ε.
    assert sigma < calibrate_noise_multiplier(1.0, 1e-5, sampling_rate=0.01, steps=10000,
                                              accountant="rdp")
    result = run_json(capsys, "calibrate", "--target-epsilon", "1.0355", "--delta", "1e-5",
                      "--sampling-rate", "0.01", "--steps", "10000", "--accountant", "rdp")
    # Calibrating to the ε of σ=4 finds σ=4 back, on the safe side.
    assert result["noise_multiplier"] == pytest.approx(4.0, rel=1e-4)
    assert result["epsilon"] <= 1.0355


def test_calibrate_without_replacement(capsys):
    result = run_json(capsys, "calibrate", "--target-epsilon", "2", "--delta", "1e-5",
                      "--sampling-rate", "0.02", "--epochs", "10", "--sampling", "without-replacement",
                      "--accountant", "rdp")
    assert result["steps"] == 500 and result["sampling"] == "without_replacement"
    expected = calibrate_noise_multiplier(2.0, 1e-5, sampling_rate=0.02, steps=500,
                                          sampling="without_replacement", accountant="rdp")
    assert result["noise_multiplier"] == expected
    assert result["epsilon"] <= 2.0


# -- budget show --------------------------------------------------------------
def _ledger(tmp_path):
    path = str(tmp_path / "study.sqlite")
    # RDP: the running totals below are RDP compositions (open() keeps the accountant)
    budget = PrivacyBudget(3.0, 1e-5, ledger=path, accountant="rdp")
    budget.charge(gaussian_rdp(8.0), label="mean age")
    budget.charge(pure_dp_rdp(0.5), label="histogram of hours")
    budget.charge(approximate_dp_rdp(0.2, 1e-6), label="sparse vector")
    return path, budget


def test_budget_show_text(tmp_path, capsys):
    path, budget = _ledger(tmp_path)
    code, out, err = run(capsys, "budget", "show", path)
    assert (code, err) == (0, "")
    assert out.strip() == budget.report()
    lines = out.splitlines()
    assert "in 3 charges" in lines[0] and f"spent ε={budget.spent()[0]:.4f}" in lines[0]
    charges = budget.ledger
    running = [
        gaussian_rdp(8.0).epsilon(1e-5),
        (charges[0].curve + charges[1].curve).epsilon(1e-5),
        budget.spent()[0],
    ]
    for line, charge, total in zip(lines[3:], charges, running):
        assert line.split()[0] == str(charge.id)
        assert line.endswith(charge.label)
        assert f"{charge.epsilon:9.4f}  {total:9.4f}" in line


def test_budget_show_json(tmp_path, capsys):
    path, budget = _ledger(tmp_path)
    result = run_json(capsys, "budget", "show", path)
    assert (result["epsilon"], result["delta"], result["path"]) == (3.0, 1e-5, path)
    assert result["n_charges"] == 3
    assert result["spent_epsilon"] == budget.spent()[0]
    assert [c["label"] for c in result["charges"]] == ["mean age", "histogram of hours", "sparse vector"]
    assert [c["id"] for c in result["charges"]] == [1, 2, 3]
    assert result["charges"][-1]["total_epsilon"] == budget.spent()[0]
    assert result["charges"][2]["delta"] == 1e-6
    assert result["charges"][1]["epsilon"] == 0.5


def test_budget_show_writes_strict_json_for_infinite_values(tmp_path, capsys):
    path = str(tmp_path / "open.sqlite")
    PrivacyBudget(math.inf, 0.0, ledger=path).charge(gaussian_rdp(1.0), label="no δ")
    code, out, err = run(capsys, "budget", "show", path, "--json")
    assert code == 0
    result = json.loads(out, parse_constant=lambda name: pytest.fail(f"non-standard {name}"))
    assert result["epsilon"] == "inf" and result["spent_epsilon"] == "inf"


def test_budget_show_empty_ledger(tmp_path, capsys):
    path = str(tmp_path / "empty.sqlite")
    PrivacyBudget(1.0, 0.0, ledger=path)
    code, out, _ = run(capsys, "budget", "show", path)
    assert code == 0 and "in 0 charges" in out


# -- errors: exit 2, one line on stderr, no traceback -------------------------
@pytest.mark.parametrize(
    "argv, reason",
    [
        (["account", "--noise-multiplier", "-4", "--steps", "10", "--delta", "1e-5"], "noise_multiplier"),
        (["account", "--noise-multiplier", "nan", "--steps", "10", "--delta", "1e-5"], "noise_multiplier"),
        (["account", "--noise-multiplier", "abc", "--steps", "10", "--delta", "1e-5"], "invalid float"),
        (["account", "--noise-multiplier", "4", "--sampling-rate", "1.5", "--steps", "10",
          "--delta", "1e-5"], "sampling_rate"),
        (["account", "--noise-multiplier", "4", "--steps", "10", "--delta", "1"], "delta"),
        (["account", "--noise-multiplier", "4", "--steps", "10", "--delta", "0"], "delta"),
        (["account", "--noise-multiplier", "4", "--steps", "-3", "--delta", "1e-5"], "steps"),
        (["account", "--noise-multiplier", "4", "--steps", "2.5", "--delta", "1e-5"], "whole number"),
        (["account", "--noise-multiplier", "4", "--steps", "10", "--epochs", "1",
          "--delta", "1e-5"], "not allowed"),
        (["account", "--noise-multiplier", "4", "--delta", "1e-5"], "required"),
        (["account", "--noise-multiplier", "4", "--sampling-rate", "0.1", "--epochs", "-1",
          "--delta", "1e-5"], "--epochs"),
        (["account", "--noise-multiplier", "4", "--sampling-rate", "0", "--epochs", "1",
          "--delta", "1e-5"], "--sampling-rate"),
        (["account", "--noise-multiplier", "4", "--steps", "10", "--delta", "1e-5",
          "--sampling", "shuffle"], "invalid choice"),
        (["calibrate", "--target-epsilon", "0", "--steps", "10", "--delta", "1e-5"], "target_epsilon"),
        (["calibrate", "--target-epsilon", "inf", "--steps", "10", "--delta", "1e-5"], "target_epsilon"),
        (["calibrate", "--target-epsilon", "1", "--steps", "10", "--delta", "0"], "delta"),
        (["budget", "show", "/no/such/ledger.sqlite"], "No privacy ledger"),
        (["budget"], "required"),
        ([], "required"),
        (["fly"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, reason):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert reason in err and "Traceback" not in err


def test_budget_show_on_files_that_are_not_ledgers(tmp_path, capsys):
    text = tmp_path / "notes.txt"
    text.write_text("hello " * 200)
    for path in (text, tmp_path):
        code, out, err = run(capsys, "budget", "show", str(path))
        assert code == 2 and out == "" and err.count("\n") == 1


@pytest.mark.parametrize("argv", [["--help"], ["account", "--help"], ["calibrate", "--help"],
                                  ["budget", "--help"], ["budget", "show", "--help"]])
def test_help(capsys, argv):
    code, out, _ = run(capsys, *argv)
    assert code == 0 and out.startswith("usage: skdp")


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("skdp ")


def test_python_m_skdp():
    done = subprocess.run([sys.executable, "-m", "skdp", "--help"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0
    assert "account" in done.stdout and "calibrate" in done.stdout and "budget" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "skdp", "account", "--delta", "x"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
