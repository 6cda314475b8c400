"""Aggregates of a group-by as noisy sums per group, and their post-processing.

Every aggregate is computed from a few sums over the rows of each group,
which any engine can compute where its rows live and add up:

========== ============================================= =====================
aggregate  sums per group (values clipped to [L, U])      one row moves each by
========== ============================================= =====================
count()    rows                                          1
count      n = values present                            1
sum        Σx                                            max(|L|, |U|)
mean       n, Σ(x − c)                                   1, h
var, std   n, Σ(x − c), Σ((x − c)² − h²/2)               1, h, h²/2
quantile   n, and counts of x in public bins (an exponential mechanism,
           below)
histogram  the count of each public bin (one vector)       1 (a row is in one bin)
========== ============================================= =====================

with c = (L + U)/2 and h = (U − L)/2 (the centred sums of
:mod:`skdp.stats._sums`). A NaN value adds 0 to every sum of its column, inside
each sum's range, so the sensitivities hold (Dwork, McSherry, Nissim & Smith
2006, Prop. 1). With a privacy unit a person adds at most R rows to each of at
most G groups, so each sum moves by R times the above in at most G groups.

**Noise.** The k distinct sums of a query over G groups per person are one
release of k·G sums in the sense of :mod:`skdp.stats._noise`: Laplace noise of
scale R·Δⱼ·k·G/ε on each (ε/(kG) per normalised sum; Dwork & Roth 2014,
Thm. 3.14), or, where it adds less noise and δ > 0, one Gaussian vector with
std z·√(kG)·R·Δⱼ (L2 sensitivity √(kG) after normalising; Mironov 2017,
Prop. 7). One row (or one person) changes only its own G groups: the groups
compose in parallel, so the release costs what G groups cost, whatever the
number of groups.

**Quantiles** are the exponential mechanism over B equal public bins from L
to U (B = :func:`n_bins`: :data:`GRID_SIZE`, fewer when there are many groups) (McSherry & Talwar 2007, Thm. 6). Bin j holds the
values in [g_j, g_(j+1)) (the last one closed); with t = ⌊qN + ½⌋ its loss is
r_j = dist(t, [#{x < g_j}, #{x < g_(j+1)}]), 0 for the bins that hold the
t-th value. Adding a row (a person's R rows) raises each count and t by
between 0 and 1 (R), so r moves by at most 1 (R), as for the rank utility of
:func:`skdp.stats._quantiles._quantile_losses` (our derivation, the same
argument). One bin is drawn per group and level with weights exp(−ε′·r/(2R))
by the Gumbel-max trick, each at ε′ = ε_q/(G·m) for m levels, and its
midpoint is released. The bins' counts are sums, so the mechanism runs on any
engine; the answer is within half a bin, (U − L)/(2B), of a value
that minimises the loss. Bins (rather than points) keep a value that many
rows share, a common income or 40 hours a week, inside the bin that holds it.

Everything after the noise is post-processing: means and variances divide by
the noisy count (floored at 1) and are clipped to what values in [L, U] allow.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["Aggregate", "quantile"]

# Equal public bins of a quantile, from L to U (at most; see n_bins). Finer bins bring the
# mechanism closer to Smith's over the real line, but weigh against a value that many rows
# share (an income of 0): 60 zeros among 200 incomes up to 100,000 gave their 0.1-quantile
# (in the zero bin) 78 % of the time at 2**16 bins, 98 % at 4,096 (epsilon = 0.5, 400 draws).
GRID_SIZE = 4096
# The bins' counts of one quantile column take n_groups * n_bins int64 cells at most this many.
_MAX_CELLS = 2**23
# The names an aggregate can be asked by.
_NAMES = ("count", "sum", "mean", "var", "std", "median")


@dataclass(frozen=True)
class Aggregate:
    """One aggregate of a column: ``count``, ``sum``, ``mean``, ``var``, ``std`` or ``quantile``.

    Build quantiles with :func:`quantile`; the others are asked by name
    (``"mean"``). ``var`` and ``std`` use ``ddof=1``, as pandas does.

    Parameters
    ----------
    kind : str
        ``"count"``, ``"sum"``, ``"mean"``, ``"var"``, ``"std"``,
        ``"quantile"`` or ``"histogram"``.
    q : float in [0, 1], default=None
        The level of a quantile.
    bins : int, default=None
        A histogram's number of equal-width bins over the column's bounds.
    edges : tuple of floats, default=None
        A histogram's public bin edges.
    """

    kind: str
    q: float | None = None
    bins: int | None = None
    edges: tuple | None = None

    @property
    def label(self) -> str:
        """The result column's suffix: ``mean``, ``median``, ``q0.9``, ``histogram``."""
        if self.kind != "quantile":
            return self.kind
        return "median" if self.q == 0.5 else f"q{self.q:g}"


def quantile(q: float) -> Aggregate:
    """The ``q``-quantile of a column, as an aggregate for :meth:`PrivateTable.agg`.

    Parameters
    ----------
    q : float in [0, 1]

    Returns
    -------
    Aggregate

    Examples
    --------
    >>> from skdp.analysis import quantile
    >>> quantile(0.9).label
    'q0.9'
    """
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0.0 <= float(q) <= 1.0:
        raise ValueError(f"q must be a number in [0, 1]; got {q!r}.")
    return Aggregate("quantile", float(q))


def parse_spec(spec):
    """``{column: aggregate or list}`` as a list of (column, Aggregate), in order."""
    if not isinstance(spec, dict) or not spec:
        raise TypeError('agg takes a non-empty dict {column: aggregate or list of aggregates}, '
                        'for example {"income": ["mean", "median"]}.')
    out = []
    for column, aggs in spec.items():
        if not isinstance(column, str):
            raise TypeError(f"agg's columns must be names (str); got {column!r}.")
        for agg in aggs if isinstance(aggs, (list, tuple)) else [aggs]:
            if isinstance(agg, str):
                if agg not in _NAMES:
                    raise ValueError(f"Unknown aggregate {agg!r} for column {column!r}; "
                                     f"choose from {list(_NAMES)} or skdp.analysis.quantile(q).")
                agg = quantile(0.5) if agg == "median" else Aggregate(agg)
            elif not isinstance(agg, Aggregate):
                raise TypeError(f"Aggregate of column {column!r} must be a name or "
                                f"skdp.analysis.quantile(q); got {type(agg).__name__}.")
            if (column, agg) in out:
                raise ValueError(f"Column {column!r} asks for {agg.label!r} twice.")
            out.append((column, agg))
    return out


def sums_needed(aggregates):
    """The distinct noisy sums the aggregates read, in a fixed order: (column, what).

    ``column`` None with ``"rows"`` is the count of rows.
    """
    needs = []
    for column, agg in aggregates:
        if column is None:
            parts = ["rows"]
        elif agg.kind == "sum":
            parts = ["sum"]
        elif agg.kind == "histogram":
            parts = ["hist"]
        elif agg.kind in ("count", "quantile"):
            parts = ["n"]
        elif agg.kind == "mean":
            parts = ["n", "s1"]
        else:
            parts = ["n", "s1", "s2"]
        for part in parts:
            if (column, part) not in needs:
                needs.append((column, part))
    return needs


def sensitivity(part, lower, upper):
    """How much one row moves the sum ``part`` of a column clipped to [lower, upper]."""
    h = (upper - lower) / 2.0
    if part in ("rows", "n", "hist"):  # a row is in one bin of a histogram
        return 1.0
    if part == "sum":
        return max(abs(lower), abs(upper))
    if part == "s1":
        return h
    return h * h / 2.0  # s2


def n_bins(n_groups):
    """The number of bins of a quantile over ``n_groups`` groups (public).

    :data:`GRID_SIZE`, or fewer (at least 256) so that the counts of one
    column stay within :data:`_MAX_CELLS` cells (64 MB): 4,096 bins up to 2,048
    groups.
    """
    return int(min(GRID_SIZE, max(256, _MAX_CELLS // max(n_groups, 1))))


def grid(lower, upper, n_groups):
    """The public edges of a quantile's bins: :func:`n_bins` + 1 points from lower to upper."""
    return np.linspace(lower, upper, n_bins(n_groups) + 1)


def bin_counts(group, n_groups, x, edges):
    """Counts (n_groups, n_bins) of the values in each bin, as ``np.histogram`` bins them.

    Bins are [e_i, e_(i+1)), the last one closed; NaN and values outside the
    edges are not counted.
    """
    edges = np.asarray(edges, dtype=float)
    n_bins = edges.size - 1
    idx = np.searchsorted(edges, x, side="right") - 1
    idx[x == edges[-1]] = n_bins - 1
    inside = (idx >= 0) & (idx < n_bins)
    return np.bincount(group[inside] * n_bins + idx[inside],
                       minlength=n_groups * n_bins).reshape(n_groups, n_bins).astype(float)


def chunk_sums(group, n_groups, values, needs, quantile_columns, bounds, edges=None):
    """The sums of one chunk's rows per group: a dict of arrays (n_groups,) or (n_groups, B+1).

    ``group`` holds each row's group in [0, n_groups), or -1 for rows left
    out (not kept, or of no released key). The counts of a quantile column in
    its :func:`grid` bins are under ``(column, "bins")``.
    """
    rows = group >= 0
    g = group[rows]
    out = {}
    clipped = {}
    for column, part in needs:
        if part == "rows":
            out[(column, part)] = np.bincount(g, minlength=n_groups).astype(float)
            continue
        if part == "hist":
            out[(column, part)] = bin_counts(g, n_groups, values[column][rows], edges[column])
            continue
        x = clipped.get(column)
        if x is None:
            lower, upper = bounds[column]
            x = clipped[column] = np.clip(values[column][rows], lower, upper)
        observed = ~np.isnan(x)
        lower, upper = bounds[column]
        c, h = (lower + upper) / 2.0, (upper - lower) / 2.0
        if part == "n":
            w = observed.astype(float)
        elif part == "sum":
            w = np.where(observed, x, 0.0)
        elif part == "s1":
            w = np.where(observed, x - c, 0.0)
        else:
            w = np.where(observed, (x - c) ** 2 - h * h / 2.0, 0.0)
        out[(column, part)] = np.bincount(g, weights=w, minlength=n_groups)
    for column in quantile_columns:
        x = clipped.get(column)
        if x is None:
            lower, upper = bounds[column]
            x = clipped[column] = np.clip(values[column][rows], lower, upper)
        out[(column, "bins")] = bin_counts(g, n_groups, x, grid(*bounds[column], n_groups))
    return out


def quantile_losses(counts, level):
    """Integer losses r_j >= 0 of every bin, per group (rows of ``counts``, shape (m, B)).

    r_j = dist(t, [#{x < g_j}, #{x < g_(j+1)}]) with t = ⌊qN + ½⌋ (module
    docstring): sensitivity 1 per row.
    """
    above = np.cumsum(counts, axis=1)
    below = above - counts
    t = np.floor(level * above[:, -1:] + 0.5)
    r = np.maximum(np.maximum(below - t, t - above), 0)
    return r - r.min(axis=1, keepdims=True)


def sample_quantiles(losses, edges, epsilon, sensitivity, rng):
    """The midpoint of one bin per row of ``losses``, drawn with probability ∝ exp(−ε·r/(2Δ)).

    The Gumbel-max trick: argmax of log-weight plus a standard Gumbel draw is
    an exact sample of the softmax (Gumbel 1954; Maddison, Tarlow & Minka
    2014, Sec. 2). With ``epsilon=inf``, the middle of the bins of least loss
    (the loss falls, then rises: they are one run).
    """
    midpoints = (edges[:-1] + edges[1:]) / 2.0
    if epsilon == math.inf:
        least = losses == losses.min(axis=1, keepdims=True)
        first = np.argmax(least, axis=1)
        last = losses.shape[1] - 1 - np.argmax(least[:, ::-1], axis=1)
        return (midpoints[first] + midpoints[last]) / 2.0
    scores = -epsilon * losses / (2.0 * sensitivity) + rng.gumbel(size=losses.shape)
    return midpoints[np.argmax(scores, axis=1)]


def finish(agg, column, noisy, bounds, exact):
    """The released value of one aggregate per group, from its noisy sums (post-processing).

    ``exact`` marks a release without noise (ε = ∞), which then returns what
    pandas returns on the clipped values (NaN where pandas gives NaN).
    """
    if column is None:
        return noisy[(None, "rows")]
    if agg.kind == "count":
        return noisy[(column, "n")]
    if agg.kind == "sum":
        return noisy[(column, "sum")]
    if agg.kind == "histogram":
        return noisy[(column, "hist")]
    lower, upper = bounds[column]
    c, h = (lower + upper) / 2.0, (upper - lower) / 2.0
    n = noisy[(column, "n")]
    floor = np.maximum(n, 1.0)
    if agg.kind == "mean":
        mean = np.clip(c + noisy[(column, "s1")] / floor, lower, upper)
        return np.where(n > 0, mean, np.nan) if exact else mean
    mean_y = np.clip(noisy[(column, "s1")] / floor, -h, h)
    mean_sq = np.clip(noisy[(column, "s2")] / floor + h * h / 2.0, 0.0, h * h)
    var = np.clip(mean_sq - mean_y**2, 0.0, h * h) * floor / np.maximum(floor - 1.0, 1.0)
    if exact:
        var = np.where(n > 1, var, np.nan)
    return np.sqrt(var) if agg.kind == "std" else var
