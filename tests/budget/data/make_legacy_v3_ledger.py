"""Write legacy_v3.sqlite and legacy_v3.json with an skdp whose ledgers are of schema version 3.

Version 3 stored each charge's event in the charge's own row and the whole
multiset of events in the running total. Run with that version first on the
path, e.g. from a checkout of commit 7bfcbbd::

    git worktree add /tmp/v3 7bfcbbd
    PYTHONPATH=/tmp/v3 python tests/budget/data/make_legacy_v3_ledger.py

The JSON keeps what that version reported (spent, each charge's event and
totals, the composed curve), which tests/budget/test_ledger_events.py compares
with what the current version reads from the same file. (pytest imports this
file when it collects doctests: nothing runs on import.)
"""

import json
import os
import sqlite3
import sys

from skdp import PrivacyBudget
from skdp.accounting import (
    gaussian_rdp,
    geometric,
    laplace_rdp,
    private_selection_rdp,
    pure_dp_rdp,
    zcdp_rdp,
)


# A few orders keep the file small (every charge stores its curve on them).
ORDERS = [1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 64.0]


def curves():
    """70 distinct Laplace releases, some charged again, and charges without a PLD."""
    out = [laplace_rdp(40.0 + i, orders=ORDERS) for i in range(70)]
    out += [gaussian_rdp(20.0, orders=ORDERS)] * 3
    out += [zcdp_rdp(0.001, orders=ORDERS), pure_dp_rdp(0.01, orders=ORDERS)]
    out.append(private_selection_rdp(gaussian_rdp(30.0, orders=ORDERS), geometric(0.1)))
    out += [laplace_rdp(40.0 + i, orders=ORDERS) for i in range(0, 70, 7)]
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "legacy_v3.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    budget = PrivacyBudget(50.0, 1e-5, ledger=path, orders=ORDERS)
    for i, curve in enumerate(curves()):
        budget.charge(curve, label=f"legacy {i}")
    info = budget.to_dict()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        version = json.loads(conn.execute(
            "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
    assert version == 3, version
    with open(os.path.join(here, "legacy_v3.json"), "w") as f:
        json.dump({
            "spent": list(budget.spent()),
            "totals": [c["total_epsilon"] for c in info["charges"]],
            "composed_by": [c["composed_by"] for c in info["charges"]],
            "events": [c["event"] for c in info["charges"]],
            "total_curve": budget.total_curve().to_dict(),
        }, f, indent=1)
    print("wrote", path, file=sys.stderr)


if __name__ == "__main__":
    main()
