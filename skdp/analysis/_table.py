"""PrivateTable and its group-by: private queries on a DataFrame, one charge per query."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ..utils import check_budget, check_delta, check_epsilon, check_generator
from ..utils._validation import check_scalar
from . import _aggregates, _keys, _passes, _plan, _release
from ._aggregates import Aggregate
from ._engines import engine_for

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._typing import RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["PrivateTable", "GroupBy", "SmallGroupWarning"]

class SmallGroupWarning(UserWarning):
    """Some groups hold too few rows for their means or quantiles to say much.

    Raised after a release from the released values alone; the result's
    ``too_few_rows`` column names the groups.
    """


def _check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}.")
    return float(alpha)


class _Queries:
    """What a table and a group-by share: the aggregates, each one query, one charge."""

    _table: PrivateTable
    _by: list
    _keys: list | None

    def count(self, *, epsilon: float, delta: float | None = None, intervals: bool = False,
              alpha: float = 0.05) -> Any:
        """The number of rows (of each group), one noisy count each.

        Parameters
        ----------
        epsilon : float > 0
            The privacy of the whole query (``inf``: no noise, no privacy).
        delta : float in [0, 1), optional
            Defaults to the table's ``delta``.
        intervals : bool, default=False
            Add the columns ``count_lower`` and ``count_upper``: the (1 − α)
            interval of the noise.
        alpha : float in (0, 1), default=0.05

        Returns
        -------
        float for a table; a DataFrame with a ``count`` column for a group-by.

        Examples
        --------
        >>> import pandas as pd
        >>> from skdp.analysis import PrivateTable
        >>> df = pd.DataFrame({"region": ["N", "S"] * 500,
        ...                    "income": [20_000.0, 60_000.0] * 500})
        >>> t = PrivateTable(df, bounds={"income": (0, 100_000)}, random_state=0)
        >>> t.groupby("region", keys=["N", "S"]).count(epsilon=1.0).round()
                count  too_few_rows
        region
        N       500.0         False
        S       499.0         False
        >>> round(t.count(epsilon=1.0))  # the table has 1,000 rows
        997
        """
        return self._query([(None, Aggregate("count"))], epsilon, delta, intervals, alpha)

    def agg(self, spec: dict, *, epsilon: float, delta: float | None = None,
            intervals: bool = False, alpha: float = 0.05) -> Any:
        """Several aggregates of several columns in one release, charged once.

        Parameters
        ----------
        spec : dict
            ``{column: aggregate or list of aggregates}``; an aggregate is one
            of ``"count"`` (values present), ``"sum"``, ``"mean"``,
            ``"var"``, ``"std"`` (both ``ddof=1``), ``"median"`` or
            :func:`skdp.analysis.quantile`. NaN values are skipped, as pandas
            does, and counted privately.
        epsilon : float > 0
            The privacy of the whole query (``inf``: no noise, no privacy).
        delta : float in [0, 1), optional
            Defaults to the table's ``delta``.
        intervals : bool, default=False
            Add ``<name>_lower`` and ``<name>_upper`` columns: the (1 − α)
            interval of the noise of counts and sums, and its linearised
            propagation for means, variances and standard deviations (the
            noise only, not the sampling error; NaN for quantiles, whose
            rank error :meth:`accuracy` gives).
        alpha : float in (0, 1), default=0.05

        Returns
        -------
        DataFrame
            Of the input's kind, one row per group (a single row for a
            table), one column ``<column>_<aggregate>`` per aggregate and a
            boolean ``too_few_rows`` that flags groups whose means or
            quantiles mean little (their (1 − α) interval covers over a
            quarter of the column's range, or a quantile's rank error
            over a quarter of its count).

        Examples
        --------
        >>> import pandas as pd
        >>> from skdp.analysis import PrivateTable
        >>> df = pd.DataFrame({"region": ["N", "S"] * 500,
        ...                    "income": [20_000.0, 60_000.0] * 500})
        >>> t = PrivateTable(df, bounds={"income": (0, 100_000)}, random_state=0)
        >>> t.groupby("region", keys=["N", "S"]).agg({"income": ["mean", "median"]},
        ...                                           epsilon=1.0).round(-2)
                income_mean  income_median  too_few_rows
        region
        N           19100.0        20000.0         False
        S           58700.0        60000.0         False
        """
        return self._query(_aggregates.parse_spec(spec), epsilon, delta, intervals, alpha)

    def sum(self, column: str, **kwargs: Any) -> Any:
        """``agg({column: "sum"}, ...)``."""
        return self._one(column, "sum", kwargs)

    def mean(self, column: str, **kwargs: Any) -> Any:
        """``agg({column: "mean"}, ...)``."""
        return self._one(column, "mean", kwargs)

    def var(self, column: str, **kwargs: Any) -> Any:
        """``agg({column: "var"}, ...)`` (``ddof=1``)."""
        return self._one(column, "var", kwargs)

    def std(self, column: str, **kwargs: Any) -> Any:
        """``agg({column: "std"}, ...)`` (``ddof=1``)."""
        return self._one(column, "std", kwargs)

    def median(self, column: str, **kwargs: Any) -> Any:
        """``agg({column: "median"}, ...)``."""
        return self._one(column, "median", kwargs)

    def quantile(self, column: str, q: float, **kwargs: Any) -> Any:
        """``agg({column: skdp.analysis.quantile(q)}, ...)``."""
        return self._one(column, _aggregates.quantile(q), kwargs)

    def _one(self, column, agg, kwargs):
        return self._query(_aggregates.parse_spec({column: agg}), **_query_kwargs(kwargs))

    def accuracy(self, spec: dict | None = None, *, epsilon: float, delta: float | None = None,
                 alpha: float = 0.05) -> Any:
        """The noise of a query, before it is run: nothing is read and nothing charged.

        Parameters
        ----------
        spec : dict, optional
            As in :meth:`agg`; None describes :meth:`count`.
        epsilon, delta : as in :meth:`agg`
        alpha : float in (0, 1), default=0.05

        Returns
        -------
        DataFrame
            Of the input's kind (pandas for dask), one row per noisy quantity:
            ``quantity`` (what is noised), ``noise`` (``laplace``,
            ``gaussian``, or ``exponential mechanism``), ``std`` (of the
            noise, in the column's units) and ``half_width`` (of its central
            1 − α interval; for a quantile, the rank error in rows exceeded
            with probability α; for a privately chosen key, the people a key
            needs to be released with probability 1 − α).

        Examples
        --------
        >>> import pandas as pd
        >>> from skdp.analysis import PrivateTable
        >>> df = pd.DataFrame({"region": ["N", "S"] * 500,
        ...                    "income": [20_000.0, 60_000.0] * 500})
        >>> t = PrivateTable(df, bounds={"income": (0, 100_000)}, random_state=0)
        >>> t.groupby("region", keys=["N"]).accuracy({"income": "mean"}, epsilon=1.0).round(1)
                     quantity    noise       std  half_width
        0        income count  laplace       2.8         6.0
        1  income centred sum  laplace  141421.4    299573.2
        """
        aggregates = ([(None, Aggregate("count"))] if spec is None
                      else _aggregates.parse_spec(spec))
        alpha = _check_alpha(alpha)
        plan, bounds, estimate = self._prepare(aggregates, epsilon, delta)
        names, kinds, stds, widths = [], [], [], []
        needs = _aggregates.sums_needed(aggregates)
        if plan.n_sums:
            # a sum over a column whose bounds are not released yet has no known scale
            sens = [_aggregates.sensitivity(part, *bounds[column]) if column in bounds
                    else 1.0 if part in ("rows", "n", "hist") else math.nan
                    for column, part in needs]
            dist, scales = plan.sum_noise(sens)
            for (column, part), scale in zip(needs, scales):
                names.append(_release.quantity_name(column, part))
                kinds.append(dist)
                stds.append(_plan.noise_std(dist, scale))
                widths.append(_plan.noise_half_width(dist, scale, alpha))
        for column, agg in aggregates:
            if agg.kind == "quantile":
                names.append(f"{column} {agg.label} (rank, rows)")
                kinds.append("exponential mechanism")
                stds.append(math.nan)
                n_groups = len(self._keys) if self._keys is not None else None
                widths.append(plan.rank_error(alpha, n_groups)
                              if plan.epsilon < math.inf else 0.0)
        if plan.n_bounds:
            eps, d = plan.budgets["bounds"]
            dist, scale = plan.bounds_noise(eps, d)
            names.append(f"bounds of {', '.join(estimate)} (counts of a log-scale histogram)")
            kinds.append(dist)
            stds.append(_plan.noise_std(dist, scale))
            widths.append(_plan.noise_half_width(dist, scale, alpha))
        if plan.counts_from_selection:
            eps, _ = plan.budgets["select"]
            scale = _keys.selection_scale(eps, plan.max_groups)
            names.append("rows")
            kinds.append("laplace")
            stds.append(_plan.noise_std("laplace", scale))
            widths.append(_plan.noise_half_width("laplace", scale, alpha))
        if plan.select:
            eps, d = plan.budgets["select"]
            names.append("key kept (people)")
            kinds.append("laplace threshold")
            stds.append(_plan.noise_std("laplace", _keys.selection_scale(eps, plan.max_groups)))
            widths.append(_keys.people_needed(eps, d, plan.max_groups, alpha))
        columns = {"quantity": np.array(names, dtype=object), "noise": np.array(kinds, dtype=object),
                   "std": np.array(stds), "half_width": np.array(widths)}
        return _plain(self._table._engine, columns)

    # ------------------------------------------------------------------
    def _prepare(self, aggregates, epsilon, delta):
        """Validate a query and plan it, reading metadata only."""
        table = self._table
        epsilon = check_epsilon(epsilon)
        delta = table.delta if delta is None else check_delta(delta)
        if epsilon < math.inf and self._keys is None and self._by and delta == 0:
            raise ValueError("Choosing keys privately (keys=None) needs delta > 0: a key that "
                             "one person alone holds is kept with probability delta.")
        columns = set(table._engine.columns())
        bounds = {}
        estimate = []
        for column, agg in aggregates:
            if column is None:
                continue
            if column not in columns:
                raise ValueError(f"Unknown column {column!r}.")
            if not table._engine.is_numeric(column):
                raise ValueError(f"Column {column!r} is not numeric: it has no {agg.label}. "
                                 "Group by it, or count its values with a group-by.")
            if agg.kind == "count" or (agg.kind == "histogram" and agg.edges is not None):
                continue
            if column in table._bounds:
                bounds[column] = table._bounds[column]
            elif column in table._released_bounds:
                bounds[column] = table._released_bounds[column]
            elif column not in estimate:
                estimate.append(column)
        n_quantiles = sum(agg.kind == "quantile" for _, agg in aggregates)
        select = self._keys is None and bool(self._by)
        # one row per person and key: the selection's people counts are the row counts
        from_selection = select and aggregates == [(None, Aggregate("count"))] and \
            table._max_rows == 1
        plan = _plan.Plan(
            epsilon=epsilon, delta=delta, counts_from_selection=from_selection,
            n_sums=0 if from_selection else len(_aggregates.sums_needed(aggregates)),
            n_quantiles=n_quantiles, n_aggregates=len(aggregates),
            select=select,
            n_bounds=len(estimate) if epsilon < math.inf else 0,
            max_groups=table._max_groups if self._by else 1, max_rows=table._max_rows,
            accountant=getattr(table._budget_now(), "accountant", "tightest"),
        )
        return plan, bounds, estimate

    def _query(self, aggregates, epsilon, delta, intervals, alpha):
        keys, columns, flags = self._release(aggregates, epsilon, delta, intervals, alpha)
        if not self._by:
            return self._table._scalar_or_frame(columns, aggregates, flags)
        columns["too_few_rows"] = flags
        if flags.any():
            warnings.warn(
                f"{int(flags.sum())} of {len(keys)} groups hold too few rows for their means or "
                "quantiles to say much: see the column too_few_rows.",
                SmallGroupWarning, stacklevel=3)
        return self._table._engine.frame(self._by, keys, columns)

    def _release(self, aggregates, epsilon, delta, intervals, alpha):
        """Validate, plan, charge, then run the passes: (keys, columns, flags) of the release."""
        table = self._table
        alpha = _check_alpha(alpha)
        if not isinstance(intervals, (bool, np.bool_)):
            raise TypeError(f"intervals must be a bool; got {intervals!r}.")
        plan, bounds, estimate = self._prepare(aggregates, epsilon, delta)
        budget = table._budget_now()
        if budget is not None:
            budget.charge(plan.curve, label=self._label(aggregates, plan))
        # Charged: from here on only the released values may shape what is returned.
        rng = table._rng
        key = int(rng.integers(2**63)) if table.privacy_unit is not None else 0
        exact = plan.epsilon == math.inf
        keys = self._keys if self._by else [()]
        if plan.select or estimate:
            keys, released, people = self._first_pass(plan, keys, estimate, key, rng)
            if plan.counts_from_selection:
                return keys, *_release.selection_counts(people, plan, intervals, alpha)
            bounds.update(released)
            if not exact:  # the exact range of an epsilon=inf query is not for later queries
                table._released_bounds.update(released)
        for column, agg in aggregates:
            if column is not None and agg.kind == "count":
                bounds.setdefault(column, (0.0, 0.0))  # counts read presence only
        needs = _aggregates.sums_needed(aggregates)
        quantile_columns = list(dict.fromkeys(c for c, a in aggregates if a.kind == "quantile"))
        edges = {c: a.edges if a.edges is not None else tuple(np.linspace(*bounds[c], a.bins + 1))
                 for c, a in aggregates if a.kind == "histogram"}
        sums = table._engine.map_reduce(
            _passes.AggregatePass({k: i for i, k in enumerate(keys)}, key, table._max_groups,
                                  table._max_rows, needs, quantile_columns, bounds, edges),
            keys=self._by, unit=table.privacy_unit,
            values=list(dict.fromkeys(c for c, _ in aggregates if c is not None)))
        n_groups = len(keys)
        noisy, noise = _release.noisy_sums(sums, needs, bounds, plan, n_groups, rng, exact)
        columns = {}
        for column, agg in aggregates:
            name = "count" if column is None else f"{column}_{agg.label}"
            if agg.kind == "quantile":
                value = _release.release_quantile(sums, column, agg.q, bounds, plan, rng, exact)
            else:
                value = _aggregates.finish(agg, column, noisy, bounds, exact)
            names = _bin_names(column, edges[column]) if agg.kind == "histogram" else [name]
            cells = [value] if value.ndim == 1 else list(value.T)
            if intervals:
                lower, upper = _release.interval(agg, column, noisy, noise, bounds, alpha,
                                                 n_groups)
                lower, upper = ([lower], [upper]) if lower.ndim == 1 else (lower.T, upper.T)
            for i, (label, cell) in enumerate(zip(names, cells)):
                columns[label] = cell
                if intervals:
                    columns[f"{label}_lower"], columns[f"{label}_upper"] = lower[i], upper[i]
        flags = _release.small_groups(aggregates, noisy, noise, bounds, plan, alpha, n_groups)
        return keys, columns, flags

    def histogram(self, column: str, *, bins: Any = 10, categories: Any = None,
                  epsilon: float, delta: float | None = None, intervals: bool = False,
                  alpha: float = 0.05) -> Any:
        """Counts of a column's values in bins, or of its categories, in one release.

        A row falls in one bin, so each group's histogram is one noisy vector
        of sensitivity 1 (R with a privacy unit) whatever its number of bins
        (Dwork, McSherry, Nissim & Smith 2006).

        Parameters
        ----------
        column : str
        bins : int or sequence of float, default=10
            For a numeric column: a number of equal bins over its bounds
            (public, or released privately as for a mean), or the bins'
            edges, increasing (``np.histogram``'s bins: the last one closed;
            values outside and NaN are not counted). Ignored with
            ``categories`` or for a column that is not numeric.
        categories : list, optional
            Count each of these values of the column (a categorical
            histogram, strings allowed); absent categories get noisy zeros.
            For a column that is not numeric and no ``categories``, the
            categories are chosen privately with the groups, as
            :meth:`GroupBy.count` chooses keys (this needs ``delta > 0``);
            a category not released for a group counts NaN there.
        epsilon, delta, intervals, alpha
            As in :meth:`agg`.

        Returns
        -------
        DataFrame
            One row per group (one row for a table), one column per bin
            (``"<column>[lo, hi)"``) or category (``"<column>=<value>"``).

        Examples
        --------
        >>> import pandas as pd
        >>> from skdp.analysis import PrivateTable
        >>> df = pd.DataFrame({"region": ["N", "S"] * 500,
        ...                    "income": [20_000.0, 60_000.0] * 500})
        >>> t = PrivateTable(df, bounds={"income": (0, 100_000)}, random_state=0)
        >>> t.groupby("region", keys=["N", "S"]).histogram(
        ...     "income", bins=[0, 50_000, 100_000], epsilon=1.0).round()
                income[0, 50000)  income[50000, 100000]
        region
        N                  500.0                   -1.0
        S                   -3.0                  497.0
        """
        table = self._table
        if column not in table._engine.columns():
            raise ValueError(f"Unknown column {column!r}.")
        if categories is None and table._engine.is_numeric(column):
            agg = _histogram_aggregate(column, bins)
            keys, columns, _ = self._release([(column, agg)], epsilon, delta, intervals, alpha)
            return table._engine.frame(self._by, keys, columns)
        if column in self._by:
            raise ValueError(f"histogram: the table is already grouped by {column!r}.")
        categories = None if categories is None else [
            k[0] for k in _keys.check_keys(categories, [column], table._engine.kind)]
        if categories is None or self._keys is None:
            pair_keys = None
        else:
            pair_keys = [(*k, c) for k in (self._keys or [()]) for c in categories]
        pairs = GroupBy(table, [*self._by, column], pair_keys)
        keys, columns, _ = pairs._release([(None, Aggregate("count"))], epsilon, delta,
                                          intervals, alpha)
        return _pivot(table._engine, self._by, self._keys, column, categories, keys, columns)

    def _first_pass(self, plan, keys, estimate, key, rng):
        """Choose the keys and estimate missing bounds: one pass, released at once.

        Returns the keys, the released bounds, and the kept keys' noisy people
        counts (None with public keys).
        """
        from ..stats import _range

        table = self._table
        result = table._engine.map_reduce(
            _passes.FirstPass(None if plan.select else {k: i for i, k in enumerate(keys)}, key,
                              table._max_groups, table._max_rows, plan.select, estimate,
                              plan.epsilon == math.inf),
            keys=self._by, unit=table.privacy_unit, values=estimate)
        people = None
        if plan.select:
            eps, d = plan.budgets["select"]
            keys, people = _keys.select_keys(result.get("people", {}), epsilon=eps, delta=d,
                                             max_groups=plan.max_groups, rng=rng)
        released = {}
        if estimate and plan.epsilon == math.inf:
            for column in estimate:
                lo, hi = result[column]
                released[column] = (float(lo), float(hi)) if lo <= hi else (0.0, 0.0)
        elif estimate:
            eps, d = plan.budgets["bounds"]
            sens = plan.max_rows * plan.max_groups  # the rows a person keeps in all
            counts = np.stack([result[c] for c in estimate])
            noisy = _release.noisy_counts(counts, eps, d, rng, len(estimate), sens)
            # The noise of every count is sens times that of skdp.stats.bounds, and so are
            # the levels of its rule: a column none of whose bins stands out shares the
            # range of the quiet columns' pooled counts instead of (0, 0) (post-processing).
            n_columns = len(estimate)
            lower, upper = _range._feature_hull(
                np.asarray(noisy, dtype=float), sens * _range._threshold(eps, d, n_columns),
                sens * _range._pair_level(eps, d, n_columns),
                lambda k: sens * _range._threshold(eps, d, n_columns,
                                                   rate=_range.CANDIDATE_RATE, n_bins=k))
            for column, lo, hi in zip(estimate, lower, upper):
                released[column] = (float(lo), float(hi))
        return keys, released, people

    def _label(self, aggregates, plan):
        """The ledger's label: the query's public parameters only."""
        parts = {}
        for column, agg in aggregates:
            parts.setdefault("*" if column is None else column, []).append(agg.label)
        what = "; ".join(f"{c}: {', '.join(a)}" for c, a in parts.items())
        table = self._table
        if not self._by:
            where = "table"
        elif self._keys is None:
            where = f"groupby({self._by}, keys chosen privately)"
        else:
            where = f"groupby({self._by}, {len(self._keys)} public keys)"
        unit = "rows" if table.privacy_unit is None else (
            f"{table.privacy_unit!r} (max_groups_per_unit={plan.max_groups}, "
            f"max_rows_per_unit={plan.max_rows})")
        return (f"skdp.analysis {where}.agg({what}) epsilon={plan.epsilon:.6g}, "
                f"delta={plan.delta:.6g}, privacy_unit={unit}")


def _histogram_aggregate(column, bins):
    """The histogram aggregate of a numeric column for ``bins`` (a number or edges)."""
    if isinstance(bins, numbers.Integral) and not isinstance(bins, (bool, np.bool_)):
        if bins < 1:
            raise ValueError(f"bins must be >= 1; got {bins!r}.")
        return Aggregate("histogram", bins=int(bins))
    try:
        edges = np.asarray(bins, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("bins must be an int or a sequence of edges.") from None
    if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)) \
            or np.any(np.diff(edges) <= 0):
        raise ValueError(f"The bins of column {column!r} must be at least two finite, "
                         "increasing edges.")
    return Aggregate("histogram", edges=tuple(float(e) for e in edges))


def _bin_names(column, edges):
    last = len(edges) - 2
    return [f"{column}[{lo:g}, {hi:g}{']' if i == last else ')'}"
            for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:]))]


def _pivot(engine, by, group_keys, column, categories, pair_keys, columns):
    """The released counts of (group, category) pairs as one row per group, one column per
    category; a pair that was not released is NaN."""
    counts = {k: v for k, v in zip(pair_keys, columns["count"])}
    if group_keys is None:
        group_keys = _keys.sorted_keys(list(dict.fromkeys(k[:-1] for k in pair_keys)))
    if categories is None:
        categories = [k[0] for k in _keys.sorted_keys(list({(k[-1],) for k in pair_keys}))]
    out = {}
    for c in categories:
        out[f"{column}={c}"] = np.array([counts.get((*g, c), np.nan) for g in group_keys])
        for side in ("lower", "upper"):
            if f"count_{side}" in columns:
                bound = dict(zip(pair_keys, columns[f"count_{side}"]))
                out[f"{column}={c}_{side}"] = np.array([bound.get((*g, c), np.nan)
                                                        for g in group_keys])
    return engine.frame(by, group_keys, out)


def _query_kwargs(kwargs):
    allowed = {"epsilon", "delta", "intervals", "alpha"}
    unknown = set(kwargs) - allowed
    if unknown:
        raise TypeError(f"Unexpected keyword argument {sorted(unknown)[0]!r}.")
    if "epsilon" not in kwargs:
        raise TypeError("Missing keyword argument 'epsilon'.")
    return {"epsilon": kwargs["epsilon"], "delta": kwargs.get("delta"),
            "intervals": kwargs.get("intervals", False), "alpha": kwargs.get("alpha", 0.05)}


class GroupBy(_Queries):
    """A group-by of a :class:`PrivateTable`: its queries release one row per key.

    Made by :meth:`PrivateTable.groupby`; every method is one query, charged
    once (see :meth:`agg`).

    Parameters
    ----------
    table : PrivateTable
    by : list of str
        The grouping columns.
    keys : list or None
        The public keys, or ``None`` for keys chosen privately (see
        :meth:`PrivateTable.groupby`).
    """

    def __init__(self, table: PrivateTable, by: list, keys: list | None) -> None:
        self._table = table
        self._by = by
        self._keys = keys

    def __repr__(self):
        keys = "chosen privately" if self._keys is None else f"{len(self._keys)} public"
        return f"<GroupBy by={self._by} keys: {keys}>"


class PrivateTable(_Queries):
    """A DataFrame behind a privacy budget: private counts, sums, means and quantiles.

    Every query (:meth:`count`, :meth:`agg`, ..., and the same on
    :meth:`groupby`) is one release charged once to ``budget`` before any
    value is read; disjoint groups compose in parallel, so a group-by costs
    what one group costs. Works on pandas, polars and dask DataFrames: the
    result is of the input's kind (pandas for dask), and a dask table is
    reduced where its partitions live.

    Parameters
    ----------
    data : pandas, polars or dask DataFrame
    budget : PrivacyBudget, optional
        Charged once per query. None: the default budget of
        :func:`skdp.config_context` in force at each query, if any; without
        one, queries are still private at their own (ε, δ), but nothing
        keeps count.
    bounds : dict, optional
        ``{column: (lower, upper)}``, public bounds of numeric columns; values
        are clipped to them. A column without bounds that a sum, mean,
        variance or quantile needs gets private bounds from its first such
        query, which spends a share of that query's ε on them (see
        :mod:`skdp.analysis._plan`) and keeps them for later queries.
    privacy_unit : str, optional
        The column that identifies a person. None: each row is one person.
    max_rows_per_unit : int, optional
        Rows a person keeps in each group (1 by default with a privacy unit),
        sampled at random, never by value.
    max_groups_per_unit : int, optional
        Groups a person keeps in a group-by (1 by default with a privacy unit).
    delta : float in [0, 1), default=1e-5
        The default δ of queries.
    random_state : None, int or numpy.random.Generator
        The noise of every query; secret, never recorded.

    Attributes
    ----------
    released_bounds : dict
        The bounds that queries released privately, column by column.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skdp import PrivacyBudget
    >>> from skdp.analysis import PrivateTable
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"region": rng.choice(["N", "S"], 10_000),
    ...                    "income": rng.uniform(0, 100_000, 10_000)})
    >>> budget = PrivacyBudget(2.0, 1e-5)
    >>> t = PrivateTable(df, budget=budget, bounds={"income": (0, 100_000)}, random_state=0)
    >>> res = t.groupby("region", keys=["N", "S"]).agg({"income": "mean"}, epsilon=1.0)
    >>> list(res.columns), list(res.index)
    (['income_mean', 'too_few_rows'], ['N', 'S'])
    >>> bool((abs(res["income_mean"] - 50_000) < 2_000).all())
    True
    >>> len(budget)
    1
    """

    def __init__(self, data: Any, *, budget: PrivacyBudget | None = None,
                 bounds: dict | None = None, privacy_unit: str | None = None,
                 max_rows_per_unit: int | None = None, max_groups_per_unit: int | None = None,
                 delta: float = 1e-5, random_state: RandomStateLike = None) -> None:
        self._engine = engine_for(data)
        self.budget = check_budget(budget)
        self.delta = check_delta(delta)
        columns = self._engine.columns()
        if privacy_unit is not None and privacy_unit not in columns:
            raise ValueError(f"privacy_unit: unknown column {privacy_unit!r}.")
        if privacy_unit is None and (max_rows_per_unit is not None
                                     or max_groups_per_unit is not None):
            raise ValueError("max_rows_per_unit and max_groups_per_unit bound a person's rows: "
                             "they need privacy_unit, the column that names the person.")
        self.privacy_unit = privacy_unit
        self._max_rows = check_scalar(
            1 if max_rows_per_unit is None else max_rows_per_unit, "max_rows_per_unit", int,
            min_val=1)
        self._max_groups = check_scalar(
            1 if max_groups_per_unit is None else max_groups_per_unit, "max_groups_per_unit", int,
            min_val=1)
        self._bounds = self._check_bounds(bounds or {}, columns)
        self._rng = check_generator(random_state)
        self._released_bounds: dict = {}
        self._table = self
        self._by: list = []
        self._keys: list | None = [()]

    def _check_bounds(self, bounds, columns):
        if not isinstance(bounds, dict):
            raise TypeError("bounds must be a dict {column: (lower, upper)}.")
        out = {}
        for column, pair in bounds.items():
            if column not in columns:
                raise ValueError(f"bounds: unknown column {column!r}.")
            if not self._engine.is_numeric(column):
                raise ValueError(f"bounds: column {column!r} is not numeric.")
            try:
                lower, upper = (float(v) for v in pair)
            except (TypeError, ValueError):
                raise ValueError(f"bounds of column {column!r} must be two numbers "
                                 "(lower, upper).") from None
            if not (math.isfinite(lower) and math.isfinite(upper)):
                raise ValueError(f"bounds of column {column!r} must be finite.")
            if not lower < upper:
                raise ValueError(f"bounds of column {column!r}: lower must be below upper.")
            out[column] = (lower, upper)
        return out

    def _budget_now(self):
        """The budget a query charges: the table's, else :func:`skdp.config_context`'s now."""
        from .._config import _resolve_budget

        return _resolve_budget(self.budget)

    @property
    def released_bounds(self) -> dict:
        return dict(self._released_bounds)

    @property
    def max_rows_per_unit(self) -> int:
        return self._max_rows

    @property
    def max_groups_per_unit(self) -> int:
        return self._max_groups

    def groupby(self, by: str | Sequence[str], *, keys: Any = None) -> GroupBy:
        """Group the table by one or several columns.

        Parameters
        ----------
        by : str or list of str
        keys : list, dict or DataFrame, optional
            The public keys: a list of values (of tuples for several
            columns), a dict ``{column: values}`` (all their combinations) or
            a DataFrame of key rows. Every public key gets a row, with noisy
            zeros where the data has none; rows of other keys are left out.
            None: the keys are chosen privately, and only keys held by
            enough people are released (this needs ``delta > 0``).

        Returns
        -------
        GroupBy

        Examples
        --------
        >>> import pandas as pd
        >>> from skdp.analysis import PrivateTable
        >>> df = pd.DataFrame({"region": ["N", "S"] * 500,
        ...                    "income": [20_000.0, 60_000.0] * 500})
        >>> t = PrivateTable(df, bounds={"income": (0, 100_000)}, random_state=0)
        >>> t.groupby("region")
        <GroupBy by=['region'] keys: chosen privately>
        >>> t.groupby("region", keys=["N", "S"])
        <GroupBy by=['region'] keys: 2 public>
        """
        by = [by] if isinstance(by, str) else list(by)
        if not by:
            raise ValueError("by names no column.")
        columns = self._engine.columns()
        for column in by:
            if column not in columns:
                raise ValueError(f"groupby: unknown column {column!r}.")
            if column == self.privacy_unit:
                raise ValueError(f"groupby: {column!r} is the privacy unit; grouping by it "
                                 "would release one row per person.")
        if len(set(by)) != len(by):
            raise ValueError("groupby names a column twice.")
        return GroupBy(self, by, _keys.check_keys(keys, by, self._engine.kind))

    def _scalar_or_frame(self, columns, aggregates, flags):
        if len(aggregates) == 1 and len(columns) == 1:
            return float(next(iter(columns.values()))[0])
        columns = dict(columns)
        columns["too_few_rows"] = flags
        return self._engine.frame([], [()], columns)

    def __repr__(self):
        unit = "one row per person" if self.privacy_unit is None else \
            f"privacy unit {self.privacy_unit!r}"
        return f"<PrivateTable ({self._engine.kind}), {unit}>"


def _plain(engine, columns):
    """A frame of ``columns`` with a default index, of the engine's kind."""
    if engine.kind == "polars":
        import polars as pl

        return pl.DataFrame({k: list(v) for k, v in columns.items()})
    import pandas as pd

    return pd.DataFrame(columns)
