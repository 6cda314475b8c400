"""skdp: scikit-learn-compatible differentially private estimators.

All estimators draw on one shared :class:`PrivacyBudget`, which composes every
spend through Rényi differential privacy. :func:`config_context` sets a default
budget, charged by every fit, search and query given no ``budget``.
"""

import importlib

from ._config import config_context, get_config, set_config
from ._show_versions import show_versions
from ._version import __version__
from .budget import PrivacyBudget
from .exceptions import (
    BudgetExceededError,
    BudgetExhaustedWarning,
    LedgerConnectionError,
    LedgerMismatchError,
    NoisyEstimateWarning,
    PrivacyLeakWarning,
)

__all__ = [
    "BudgetExceededError",
    "BudgetExhaustedWarning",
    "LedgerConnectionError",
    "LedgerMismatchError",
    "NoisyEstimateWarning",
    "PrivacyBudget",
    "PrivacyCost",
    "PrivacyLeakWarning",
    "__version__",
    "config_context",
    "get_config",
    "privacy_cost",
    "set_config",
    "show_versions",
]

# ``import skdp`` loads only the budget and the accounting (numpy): scikit-learn
# and scipy take seconds to import and are loaded on first use, as
# tests/test_import.py checks. privacy_cost and PrivacyCost (which need
# scikit-learn) and the subpackages are imported when first accessed.
_LAZY = {"PrivacyCost": "._cost", "privacy_cost": "._cost"}
_SUBPACKAGES = {
    "accounting",
    "analysis",
    "budget",
    "cluster",
    "datasets",
    "decomposition",
    "ensemble",
    "exceptions",
    "impute",
    "linear_model",
    "mechanisms",
    "model_selection",
    "naive_bayes",
    "neural_network",
    "pipeline",
    "preprocessing",
    "stats",
    "tree",
    "utils",
}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBPACKAGES)
