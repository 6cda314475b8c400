"""The zCDP ρ of a fit at (ε, δ): the unit the trees and the boosting share out."""

import functools
import math

from ..accounting import zcdp_rdp

__all__ = ["calibrate_rho"]


@functools.lru_cache(maxsize=64)  # public parameters only; a fit asks twice
def calibrate_rho(epsilon, delta, *, rtol=1e-9):
    """The largest ρ (to ``rtol``) with ``zcdp_rdp(ρ).epsilon(delta) <= epsilon``.

    ε(ρ) increases with ρ; the bracket's lower end always meets the target
    and is returned (the safe side).
    """
    def meets(rho):
        return zcdp_rdp(rho).epsilon(delta) <= epsilon

    lo = hi = epsilon**2 / (4.0 * math.log(1.0 / delta) + 4.0 * epsilon)  # meets in practice
    while not meets(lo):
        lo *= 0.5
    while meets(hi):
        lo, hi = hi, 2.0 * hi
    while hi / lo - 1.0 > rtol:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if meets(mid) else (lo, mid)
    return lo
