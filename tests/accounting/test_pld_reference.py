"""The PLD accountant against a stored table of dp-accounting's values.

tests/accounting/data/pld_reference.json was generated once by
``benchmarks/make_pld_reference.py`` with dp-accounting installed (its
``pessimistic`` ε is an upper bound on the exact ε, its ``optimistic`` one a
lower bound, both on a grid of 1e-4). dp-accounting is not needed to run
these tests: the table is read as plain JSON, and each case's event is
rebuilt from its stored dict. The cases: the four of the issue that asked for
the accountant, 24 random DP-SGD runs (q from 1e-5 to 1, σ from 0.4 to 50,
up to 1e5 steps, δ from 1e-10 to 1e-3), and compositions of Laplace,
discrete Laplace, discrete Gaussian, and Laplace with Gaussian releases.
"""

import json
import pathlib

import pytest

from skdp.accounting import PLDAccountant, event_from_dict

TABLE = json.loads((pathlib.Path(__file__).parent / "data" / "pld_reference.json").read_text())


def test_the_table_is_what_its_generator_says():
    assert TABLE["generator"] == "benchmarks/make_pld_reference.py"
    assert len(TABLE["cases"]) >= 30
    for case in TABLE["cases"]:
        assert 0 <= case["optimistic"] <= case["pessimistic"]


@pytest.mark.parametrize("case", TABLE["cases"], ids=lambda c: f"{c['event']['kind']}-{c['delta']:.2g}")
def test_between_dp_accountings_bounds(case):
    event = event_from_dict(case["event"])
    eps = PLDAccountant().compose(event).epsilon(case["delta"])
    # never below a lower bound on the exact ε
    assert eps >= case["optimistic"] * (1 - 1e-9)
    # and at most 0.1% above dp-accounting's pessimistic ε (the issue asked for 1%)
    assert eps <= case["pessimistic"] * 1.001
