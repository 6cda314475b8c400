"""skdp: scikit-learn-compatible differentially private estimators.

All estimators draw on one shared :class:`PrivacyBudget`, which composes every
spend through Rényi differential privacy.
"""

from ._cost import PrivacyCost, privacy_cost
from .budget import PrivacyBudget
from .exceptions import (
    BudgetExceededError,
    BudgetExhaustedWarning,
    LedgerMismatchError,
    PrivacyLeakWarning,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "BudgetExceededError",
    "BudgetExhaustedWarning",
    "LedgerMismatchError",
    "PrivacyBudget",
    "PrivacyCost",
    "PrivacyLeakWarning",
    "__version__",
    "privacy_cost",
]
