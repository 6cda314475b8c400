"""Validation helpers shared by skdp's estimators and functions."""

from ._validation import (
    DEFAULT_DELTA,
    check_bounds,
    check_budget,
    check_delta,
    check_epsilon,
    check_generator,
)

__all__ = [
    "DEFAULT_DELTA",
    "check_bounds",
    "check_budget",
    "check_delta",
    "check_epsilon",
    "check_generator",
]
