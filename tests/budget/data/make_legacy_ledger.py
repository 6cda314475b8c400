"""Write legacy_v2.sqlite and legacy_v2.json with an skdp from before ledgers stored events.

Run with that version first on the path, e.g. from a checkout of commit d9e8e70::

    git archive d9e8e70 skdp | tar -x -C /tmp/old_skdp
    PYTHONPATH=/tmp/old_skdp python tests/budget/data/make_legacy_ledger.py

The JSON keeps what that version reported (spent, the running totals, the
composed curve), which tests/budget/test_accountants_in_budget.py compares
with what the current version reads from the same file. (pytest imports
this file when it collects doctests: nothing runs on import.)
"""

import json
import os
import sqlite3
import sys

from skdp import PrivacyBudget
from skdp.accounting import (
    approximate_dp_rdp,
    gaussian_rdp,
    geometric,
    laplace_rdp,
    poisson_subsampled_gaussian_rdp,
    private_selection_rdp,
    pure_dp_rdp,
    zcdp_rdp,
)



def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "legacy_v2.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    budget = PrivacyBudget(8.0, 1e-5, ledger=path)
    curves = [
        gaussian_rdp(6.0),
        laplace_rdp(5.0),
        pure_dp_rdp(0.1),
        poisson_subsampled_gaussian_rdp(0.01, 1.5, 500),
        approximate_dp_rdp(0.2, 1e-7),
        zcdp_rdp(0.01),
        private_selection_rdp(gaussian_rdp(4.0), geometric(0.1)),
        gaussian_rdp(10.0) * 5,
    ]
    for i, curve in enumerate(curves):
        budget.charge(curve, label=f"legacy {i}")
    info = budget.to_dict()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with open(os.path.join(here, "legacy_v2.json"), "w") as f:
        json.dump({
            "spent": list(budget.spent()),
            "totals": [c["total_epsilon"] for c in info["charges"]],
            "alone": [c["epsilon"] for c in info["charges"]],
            "total_curve": budget.total_curve().to_dict(),
        }, f, indent=1)
    print("wrote", path, file=sys.stderr)


if __name__ == "__main__":
    main()
