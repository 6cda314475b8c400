"""Bisection on a monotone yes/no question, for calibrations that compose curves.

Every calibration in skdp asks "does this noise (or this share of ε) meet
the target?" of a question whose answer changes once as the quantity grows.
Both searches bracket the change by a constant factor from a starting point,
narrow the bracket in log scale, and return the end of the bracket that
meets the target: the safe side, within a factor ``1 + rtol`` of the
boundary.
"""

import math

__all__ = ["largest_within", "smallest_meeting"]


def smallest_meeting(meets, start, *, rtol, factor=2.0):
    """The smallest x > 0 (to a relative ``rtol``) with ``meets(x)``, returned on the side that meets.

    ``meets`` is False below a boundary and True above it (a noise
    multiplier: more noise, less ε). The bracket grows from ``start`` by
    ``factor``; ``meets`` must turn True for some finite x.

    Examples
    --------
    >>> from skdp.accounting._bisect import smallest_meeting
    >>> x = smallest_meeting(lambda s: s * s >= 2.0, 1.0, rtol=1e-9)
    >>> x * x >= 2.0 and abs(x - 2.0 ** 0.5) < 2e-9
    True
    """
    hi = float(start)
    while not meets(hi):
        hi *= factor
    lo = hi / factor
    while meets(lo):
        lo, hi = lo / factor, lo
    while hi / lo - 1.0 > rtol:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if meets(mid) else (mid, hi)
    return hi


def largest_within(cost, target, start, *, rtol, factor=2.0, upper=None):
    """The largest x in (0, ``upper``] (to a relative ``rtol``) with ``cost(x) <= target``.

    ``cost`` grows with x and may be costly to evaluate (it is asked nothing
    above the bracket's upper end: a value far above the boundary can be
    costly to answer, a tiny noise multiplier or a huge PLD grid). Once bracketed,
    the boundary is found by the Illinois variant of regula falsi in log x
    (Dowell & Jarratt 1971), which needs a few evaluations where bisection
    needs a dozen; an infinite cost (x out of reach) takes a bisection step.
    The x returned was evaluated and meets the target (the safe side).
    ``cost`` may raise to stop the search (for example below a floor).

    Examples
    --------
    >>> from skdp.accounting._bisect import largest_within
    >>> calls = []
    >>> def cost(t):
    ...     calls.append(t)
    ...     return t ** 1.5
    >>> x = largest_within(cost, 2.0, 1.0, rtol=1e-6)
    >>> x ** 1.5 <= 2.0 and abs(x - 2.0 ** (2 / 3)) < 2e-6 * x
    True
    >>> len(calls) < 12
    True
    """
    def excess(x):
        return cost(x) - target

    x = float(start) if upper is None else min(float(start), float(upper))
    e = excess(x)
    if e <= 0:  # grow while it meets; nothing above the bracket is asked
        lo, e_lo = x, e
        while True:
            x = lo * factor
            if upper is not None and x >= upper:
                x = float(upper)
                e = excess(x)
                if e <= 0:
                    return x
                hi, e_hi = x, e
                break
            e = excess(x)
            if not e <= 0:
                hi, e_hi = x, e
                break
            lo, e_lo = x, e
    else:  # shrink until it meets
        hi, e_hi = x, e
        while True:
            x = hi / factor
            e = excess(x)
            if e <= 0:
                lo, e_lo = x, e
                break
            hi, e_hi = x, e
    tol = math.log1p(rtol)
    side = 0
    while math.log(hi / lo) > tol:
        a, b = math.log(lo), math.log(hi)
        if math.isfinite(e_hi):
            m = b - e_hi * (b - a) / (e_hi - e_lo)
            # at least half a tolerance inside the bracket, so that it shrinks
            m = min(max(m, a + 0.5 * tol), b - 0.5 * tol)
        else:
            m = 0.5 * (a + b)
        x = math.exp(m)
        e = excess(x)
        if e <= 0:
            lo, e_lo = x, e
            if side < 0 and math.isfinite(e_hi):
                e_hi *= 0.5
            side = -1
        else:
            hi, e_hi = x, e
            if side > 0:
                e_lo *= 0.5
            side = 1
    return lo
