"""
A budget that survives restarts: one ledger file for a whole study
==================================================================

Run it several times: ``python examples/durable_budget.py ledger.sqlite``.
Each run stands for one session of a notebook (a kernel restart loses every
Python object). The budget lives in an SQLite ledger file, so each session
reopens it with :meth:`skdp.PrivacyBudget.open` and continues the spend;
restarting Python does not reset it. Once the cap is reached, the next
release is refused before it reads the data.

Run without a file name, as in the documentation's gallery, it plays four
sessions on a ledger in a temporary folder (the fourth is refused) and plots
the spend with :meth:`skdp.PrivacyBudget.plot`.
"""

import os
import sys
import tempfile

from skdp import BudgetExceededError, PrivacyBudget, stats
from skdp.datasets import adult_schema, load_adult

CAP = 1.0  # the study's total ε (pure DP)
PER_SESSION = 0.3  # each session releases one mean at this ε


def open_budget(path):
    """Continue the study's budget if its ledger exists, else start it."""
    if os.path.exists(path):
        return PrivacyBudget.open(path)  # the cap and δ are stored in the file
    return PrivacyBudget(epsilon=CAP, delta=0.0, ledger=path)


def main(ledger_path, *, n_rows=None, random_state=None, out=sys.stdout):
    """One session: reopen the budget, release the mean age, print the ledger.

    Returns ``(budget, released)`` where ``released`` is the private mean, or
    ``None`` if the budget refused it.
    """
    budget = open_budget(ledger_path)
    print(f"Session start: {budget!r}", file=out)
    X, _ = load_adult(return_X_y=True)
    if n_rows is not None:
        X = X[:n_rows]
    schema = adult_schema()
    age = X[:, schema["feature_names"].index("age")].astype(float)
    try:
        released = stats.mean(age, epsilon=PER_SESSION, bounds=schema["numeric_bounds"]["age"],
                              budget=budget, random_state=random_state)
        print(f"Released the mean age: {released:.2f} (ε = {PER_SESSION})", file=out)
    except BudgetExceededError as exc:
        released = None
        print(f"Refused, nothing read: {exc}", file=out)
    print(budget.report(), file=out)
    return budget, released


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])  # one session on the study's ledger file
    else:
        import matplotlib.pyplot as plt

        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "study.sqlite")
            for session in range(1, 5):
                print(f"--- session {session} ---")
                budget, _ = main(path)
                print()
            budget.plot()  # the composed ε after each charge, against the cap
        plt.show()
