"""One draw per row from the exponential mechanism's distribution, by its inverse CDF.

Row i of the log weights holds ln w_ij = ε·u_ij/(2Δ) (plus any log base
measure) for its candidates j; candidate j is drawn with probability
w_ij / Σ_j w_ij, the exponential mechanism's distribution (McSherry &
Talwar 2007), from one uniform u_i: the first j whose
cumulative weight exceeds u_i·Σ_j w_ij. This is the distribution the
Gumbel-max trick samples, from one uniform per choice instead of one Gumbel
per candidate, so the privacy analysis is unchanged.
"""

import numpy as np

__all__ = ["exponential_choice"]


def exponential_choice(log_weights, uniform):
    """The index drawn in each row of ``log_weights`` (n, m), from ``uniform`` (n,) in [0, 1).

    Candidates of weight 0 (log weight −∞) are never drawn; each row needs
    one finite log weight. The weights are exponentiated with each row's
    largest subtracted (its largest weight is 1: no overflow). The drawn
    index is the number of cumulative weights <= u·total: for u < 1 the
    product rounds below the total in binary64, so a candidate of weight 0,
    whose cumulative weight equals the one before it, is never the first to
    exceed it.
    """
    log_weights = np.asarray(log_weights, dtype=np.float64)
    weights = np.exp(log_weights - log_weights.max(axis=1, keepdims=True))
    cumulative = np.cumsum(weights, axis=1)
    target = np.asarray(uniform) * cumulative[:, -1]
    return np.count_nonzero(cumulative <= target[:, None], axis=1)
