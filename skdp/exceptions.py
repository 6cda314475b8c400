"""Exceptions and warnings of skdp."""

__all__ = [
    "BudgetExceededError",
    "BudgetExhaustedWarning",
    "LedgerMismatchError",
    "PrivacyLeakWarning",
]


class BudgetExceededError(ValueError):
    """A charge would cross the cap of a :class:`~skdp.PrivacyBudget`.

    Nothing is recorded when it is raised, and the data was not read.
    """


class LedgerMismatchError(OSError):
    """The file at a budget's ledger path is not the ledger the budget was made with.

    A handle knows its ledger by the host and the file's device and inode: a
    copy of the file, a restored backup or another machine's file at the same
    path would fork the spend (charges recorded in the copy are missing from
    the real ledger), so the handle refuses to charge or read it.
    """


class BudgetExhaustedWarning(UserWarning):
    """A fit inside a scikit-learn meta-estimator was refused by the budget.

    scikit-learn turns errors raised during cross-validation into NaN scores
    (``error_score=np.nan``); skdp emits this warning so that a run-out budget
    is never mistaken for a bad candidate. Prefer ``error_score="raise"``.
    """


class PrivacyLeakWarning(UserWarning):
    """An operation may weaken the privacy guarantee the user asked for."""
