"""Exceptions and warnings of skdp."""

__all__ = [
    "BudgetExceededError",
    "BudgetExhaustedWarning",
    "LedgerConnectionError",
    "LedgerMismatchError",
    "NoisyEstimateWarning",
    "PrivacyLeakWarning",
]


class BudgetExceededError(ValueError):
    """A charge would cross the cap of a :class:`~skdp.PrivacyBudget`.

    Nothing is recorded when it is raised, and the data was not read.
    """


class LedgerMismatchError(OSError):
    """The ledger at a budget's address is not the ledger the budget was made with.

    A copy of a ledger's file, a restored backup, or another database at the
    same address would fork the spend, so the handle refuses to charge or read
    it. Notes say how a handle recognises its ledger.

    Notes
    -----
    A handle knows a file ledger by the host and the file's device and inode,
    and a PostgreSQL ledger by its budget's row id and a random id written
    when the budget was created: a copy of the file, a restored backup,
    another machine's file at the same path, or another database at the same
    address would fork the spend (charges recorded in the copy are missing
    from the real ledger), so the handle refuses to charge or read it. A
    handle also remembers the last charge it saw recorded, and refuses a
    ledger without it (a backup restored into the same file or database, or
    charges deleted by hand).
    """


class LedgerConnectionError(OSError):
    """The connection to a PostgreSQL ledger was lost in the middle of a transaction.

    The server rolls back a transaction whose connection is gone, so a charge
    interrupted before its commit records nothing; the error says so, and
    the fit that asked for the charge does not run. When the connection is
    lost during the commit itself, the handle reconnects and looks the charge
    up: found, the charge stands and no error is raised; not found, nothing
    was recorded. The next charge or read opens a new connection.
    """


class BudgetExhaustedWarning(UserWarning):
    """A fit inside a scikit-learn meta-estimator was refused by the budget.

    scikit-learn turns errors raised during cross-validation into NaN scores
    (``error_score=np.nan``); skdp emits this warning so that a run-out budget
    is never mistaken for a bad candidate. Prefer ``error_score="raise"``.
    """


class NoisyEstimateWarning(UserWarning):
    """A private estimate did not stand out of its noise, and the fit fell back to a safer one.

    For example a regressor's private target range where no bin of the
    noisy histogram stood out of the noise. The warning's text depends only on released (noisy) values and
    public parameters, never on a row. Public bounds or a larger ε avoid it.
    """


class PrivacyLeakWarning(UserWarning):
    """An operation may weaken the privacy guarantee the user asked for."""
