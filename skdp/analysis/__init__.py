"""Private queries on tables: counts, sums, means and quantiles by group, under one budget.

:class:`PrivateTable` wraps a pandas, polars or dask DataFrame; each query
(``count``, ``agg``, ``mean``, ..., on the table or on a ``groupby``) is one
release, charged once to the table's :class:`~skdp.PrivacyBudget` before any
value is read. Disjoint groups compose in parallel; keys are public or chosen
privately; with a privacy unit, each person's rows are bounded first and
every sensitivity scales with the bound. See the user guide, "Analysing a
table".
"""

from ._aggregates import Aggregate, quantile
from ._table import GroupBy, PrivateTable, SmallGroupWarning

__all__ = ["Aggregate", "GroupBy", "PrivateTable", "SmallGroupWarning", "quantile"]
