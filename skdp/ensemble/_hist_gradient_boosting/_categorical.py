"""Categorical features with public categories: moved to :mod:`skdp.tree._categorical`.

The trees, the forest and the boosting share them; kept importable here.
"""

from ...tree._categorical import categorical_mask, check_categories, encode_categorical

__all__ = ["categorical_mask", "check_categories", "encode_categorical"]
