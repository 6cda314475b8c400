"""The privacy loss distribution of each mechanism, on a grid, pessimistically.

Every function returns a :class:`~skdp.accounting.PrivacyLossDistribution`
under the add/remove-one-row relation, built by "connect the dots"
(Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022): see
:mod:`skdp.accounting._pld`. Where the two orders of a neighbouring pair
give different PLDs (Poisson subsampling),
there are two functions, one per direction: "remove" is the PLD of
(M(D ∪ {x}), M(D)) and "add" that of (M(D), M(D ∪ {x})).

``step`` is the grid spacing and ``tail`` the probability left beyond the
grid at each end (moved to the atom at ∞ at the top, to the lowest grid
point at the bottom: both only increase δ).
"""

import math

import numpy as np

# scipy.special is imported where used: import skdp stays fast
from ._pld import PrivacyLossDistribution, check_grid_range

__all__ = []


def _z(tail):
    """z with Φ̄(z) = tail (standard normal quantile)."""
    from scipy.special import ndtri

    return float(-ndtri(tail))


# --------------------------------------------------------------------------
# builders
# --------------------------------------------------------------------------
def _from_survival(step, lo, hi, survival, *, atom_below=True):
    """Connect-the-dots PLD of a loss with survival functions S_P(l) = P(L > l), S_Q(l) = Q(L > l).

    The interval (l_i, l_{i+1}] holds P-mass A and Q-mass B = ∫ e^{−l} dP; it
    is split into masses at its two ends with the same A and B
    (Doroshenko et al. 2022): at l_{i+1} goes (A − e^{l_i} B)/(1 − e^{−h}).
    Mass at or below the lowest grid point stays there (moved up) and mass
    above the top goes to ∞.
    """
    check_grid_range(lo, hi, step)
    i0 = math.floor(lo / step)
    i1 = max(math.ceil(hi / step), i0 + 1)
    grid = np.arange(i0, i1 + 1) * step
    sp, sq = survival(grid)
    sp = np.clip(sp, 0.0, 1.0)
    sq = np.clip(sq, 0.0, 1.0)
    a = np.maximum(sp[:-1] - sp[1:], 0.0)
    b = np.maximum(sq[:-1] - sq[1:], 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        upper = (a - np.exp(grid[:-1]) * b) / -math.expm1(-step)
    upper = np.clip(np.where(np.isfinite(upper), upper, a), 0.0, a)
    pmf = np.zeros(grid.size)
    pmf[:-1] += a - upper
    pmf[1:] += upper
    pmf[0] += 1.0 - sp[0]
    return PrivacyLossDistribution(step, i0, pmf, float(sp[-1]))


def _from_atoms(step, losses, masses, infinity_mass=0.0):
    """Connect-the-dots PLD of a finite PLD: loss ``losses[j]`` with probability ``masses[j]``.

    An atom p at a < l < b goes p(1 − e^{a−l})/(1 − e^{−h}) to b and the rest to a
    (same mass and same E[e^{−L}]; Doroshenko et al. 2022).
    """
    losses = np.asarray(losses, dtype=float)
    masses = np.asarray(masses, dtype=float)
    keep = masses > 0
    losses, masses = losses[keep], masses[keep]
    if losses.size:
        check_grid_range(float(np.min(losses)), float(np.max(losses)), step)
    pos = losses / step
    below = np.floor(pos)
    # an atom a rounding error below a grid point goes to that point (up: pessimistic)
    nearest = np.round(pos)
    on_grid = (nearest >= pos) & (nearest - pos <= 1e-12 * np.maximum(1.0, np.abs(pos)))
    below = np.where(on_grid, nearest, below)
    frac = np.where(on_grid, 0.0, losses - below * step)
    up = masses * -np.expm1(-frac) / -math.expm1(-step)
    up = np.clip(up, 0.0, masses)
    i0 = int(below.min())
    i1 = int(below.max()) + 1
    pmf = np.zeros(i1 - i0 + 1)
    np.add.at(pmf, (below - i0).astype(np.int64), masses - up)
    np.add.at(pmf, (below - i0 + 1).astype(np.int64), up)
    return PrivacyLossDistribution(step, i0, pmf, infinity_mass)


# --------------------------------------------------------------------------
# mechanisms
# --------------------------------------------------------------------------
def gaussian_pld(noise_multiplier, step, tail):
    """Gaussian mechanism: L ~ N(μ²/2, μ²) under P and N(−μ²/2, μ²) under Q, μ = 1/σ.

    The pair (N(μ, 1), N(0, 1)) is tight for both orders (Balle & Wang 2018, Thm. 8).
    """
    mu = 1.0 / noise_multiplier
    z = _z(tail)
    m = mu * mu / 2.0

    def survival(l):
        from scipy.special import ndtr

        return ndtr((m - l) / mu), ndtr((-m - l) / mu)

    return _from_survival(step, m - z * mu, m + z * mu, survival)


def laplace_pld(noise_multiplier, step, tail):
    """Laplace mechanism with scale λ = b/Δ: P = Lap(0, λ), Q = Lap(1, λ), ε₀ = 1/λ.

    The loss is ε₀ for x <= 0, −ε₀ for x >= 1 and ε₀(1 − 2x) between (from the
    two densities; the pair is tight for both orders by symmetry), so
    L > l ⟺ x < (1 − λl)/2, which gives δ(ε) = 1 − e^{(ε − ε₀)/2} on [0, ε₀].
    """
    lam = float(noise_multiplier)
    eps0 = 1.0 / lam

    def survival(l):
        x = (1.0 - lam * l) / 2.0
        inside = (l >= -eps0) & (l < eps0)
        sp = np.where(l < -eps0, 1.0, np.where(inside, 1.0 - 0.5 * np.exp(-np.clip(x, 0, None) / lam), 0.0))
        sq = np.where(l < -eps0, 1.0, np.where(inside, 0.5 * np.exp((np.clip(x, None, 1.0) - 1.0) / lam), 0.0))
        return sp, sq

    return _from_survival(step, -eps0, eps0, survival)


def randomized_response_pld(epsilon, n_categories, step):
    """k-ary randomized response: the worst pair of inputs swaps two categories.

    P = (p₁, p₂, p₂, ...), Q = (p₂, p₁, p₂, ...), p₁ = e^ε/(e^ε + k − 1),
    p₂ = 1/(e^ε + k − 1) (Warner 1965; Kairouz, Oh & Viswanath 2016): losses
    ε, −ε and 0 with probabilities p₁, p₂ and (k − 2)p₂. For k = 2 this is the
    dominating pair of every ε-DP mechanism (Kairouz, Oh & Viswanath 2015, Thm. 2.4).
    """
    k = int(n_categories)
    log_norm = float(np.logaddexp(epsilon, math.log(k - 1)))
    p1 = math.exp(epsilon - log_norm)
    p2 = math.exp(-log_norm)
    return _from_atoms(step, [epsilon, -epsilon, 0.0], [p1, p2, (k - 2) * p2])


def approximate_dp_pld(epsilon, delta, step):
    """(ε, δ)-DP: the dominating pair of Kairouz, Oh & Viswanath 2015 (Thm. 2.4 / Fig. 1).

    Loss ∞ with probability δ, ε with (1 − δ)e^ε/(1 + e^ε), −ε with (1 − δ)/(1 + e^ε).
    """
    p = (1.0 - delta) / (1.0 + math.exp(-epsilon))
    return _from_atoms(step, [epsilon, -epsilon], [p, 1.0 - delta - p], infinity_mass=delta)


def discrete_laplace_pld(scale, sensitivity, step):
    """Discrete Laplace P(x) ∝ e^{−a|x|}, a = 1/scale, on an integer query of sensitivity Δ.

    P = DLap(0), Q = DLap(Δ): L(x) = a(|x − Δ| − |x|), i.e. aΔ for x <= 0,
    −aΔ for x >= Δ and a(Δ − 2x) between, with P(x <= 0) = 1/(1 + e^{−a}),
    P(x >= Δ) = e^{−aΔ}/(1 + e^{−a}) and P(x) = tanh(a/2) e^{−ax} (Ghosh,
    Roughgarden & Sundararajan 2009; Canonne, Kamath & Steinke 2020, Sec. 2).
    The pair is tight for both orders by symmetry.
    """
    return _from_atoms(step, *discrete_laplace_atoms(scale, sensitivity))


def discrete_laplace_atoms(scale, sensitivity):
    """(losses, masses) of the discrete Laplace PLD (see :func:`discrete_laplace_pld`)."""
    a = 1.0 / float(scale)
    d = int(sensitivity)
    x = np.arange(1, d, dtype=float)
    log_c = math.log(-math.expm1(-a)) - math.log1p(math.exp(-a))
    losses = np.concatenate([[a * d, -a * d], a * (d - 2.0 * x)])
    masses = np.concatenate([
        [1.0 / (1.0 + math.exp(-a)), math.exp(-a * d) / (1.0 + math.exp(-a))],
        np.exp(log_c - a * x),
    ])
    return losses, masses


def laplace_loss_variance(noise_multiplier):
    """Variance of the Laplace PLD of :func:`laplace_pld`: atoms ±ε₀ and density e^{(l − ε₀)/2}/4 between."""
    eps0 = 1.0 / float(noise_multiplier)
    l = np.linspace(-eps0, eps0, 2001)
    dens = 0.25 * np.exp((l - eps0) / 2.0)
    w = np.full(l.size, l[1] - l[0])
    w[0] = w[-1] = w[0] / 2.0  # trapezoid rule
    p_hi, p_lo = 0.5, 0.5 * math.exp(-eps0)
    m1 = p_hi * eps0 - p_lo * eps0 + float(np.sum(w * dens * l))
    m2 = (p_hi + p_lo) * eps0 * eps0 + float(np.sum(w * dens * l * l))
    return max(m2 - m1 * m1, 0.0)


def discrete_gaussian_pld(sigma, sensitivity, step, tail, *, max_support=1 << 24):
    """Discrete Gaussian N_Z(0, σ²) on an integer query of sensitivity Δ.

    P = N_Z(0, σ²), Q = N_Z(Δ, σ²) (Canonne, Kamath & Steinke 2020, Def. 1):
    L(x) = (Δ² − 2xΔ)/(2σ²), enumerated over the integers x where P has
    mass above ``tail`` (the rest of the top goes to ∞, of the bottom to the
    lowest loss). The pair is tight for both orders by symmetry.
    """
    sigma = float(sigma)
    d = int(sensitivity)
    reach = math.ceil(max(_z(tail), 1.0) * sigma * 1.2) + 2
    if 2 * reach + d + 1 > max_support:
        raise ValueError(
            f"the discrete Gaussian with sigma={sigma:g} has too wide a support for the PLD "
            f"accountant ({2 * reach + d + 1} points)."
        )
    x = np.arange(-reach, reach + d + 1, dtype=float)
    log_w = -x * x / (2.0 * sigma * sigma)
    # the normaliser over all of Z: the terms beyond ±(reach + 40σ) are below e^{-800}
    far = np.arange(-reach - math.ceil(40 * sigma) - 2, reach + d + math.ceil(40 * sigma) + 3, dtype=float)
    log_far = -far * far / (2.0 * sigma * sigma)
    top = log_far.max()
    log_z = top + math.log(np.sum(np.exp(log_far - top)))
    masses = np.exp(log_w - log_z)
    losses = (d * d - 2.0 * x * d) / (2.0 * sigma * sigma)
    # P-mass of x < −reach has the largest losses: to ∞ (x > reach + d: lowest loss)
    below = float(np.sum(np.exp(log_far[far < -reach] - log_z)))
    above = float(np.sum(np.exp(log_far[far > reach + d] - log_z)))
    masses[-1] += above
    return _from_atoms(step, losses, masses, infinity_mass=min(1.0, below))


def _subsampled_loss(x, q, mu):
    """log(1 − q + q e^{μx − μ²/2}): the remove-direction loss at x."""
    return np.logaddexp(math.log1p(-q), math.log(q) + mu * x - mu * mu / 2.0)


def _subsampled_inverse(g, q, mu):
    """x with log(1 − q + q e^{μx − μ²/2}) = g, for g > log(1 − q)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = np.log(np.expm1(g) + q) - math.log(q)
    return (inner + mu * mu / 2.0) / mu


def poisson_gaussian_remove_pld(sampling_rate, noise_multiplier, step, tail):
    """Poisson-subsampled Gaussian, remove direction: P = (1 − q)N(0,1) + qN(μ,1), Q = N(0,1).

    The pair of Koskela, Jälkö & Honkela 2020 and Zhu, Dong & Wang
    2022 (dominating pairs of Poisson subsampling under add/remove), μ = 1/σ:
    L(x) = log(1 − q + q e^{μx − μ²/2}) increases in x.
    """
    q, mu = float(sampling_rate), 1.0 / float(noise_multiplier)
    if q >= 1.0:
        return gaussian_pld(noise_multiplier, step, tail)
    z = _z(tail)
    floor_loss = math.log1p(-q)

    def survival(l):
        from scipy.special import ndtr

        x = _subsampled_inverse(l, q, mu)
        ok = l > floor_loss
        x = np.where(ok, x, -np.inf)
        sp = (1.0 - q) * ndtr(-x) + q * ndtr(mu - x)
        sq = ndtr(-x)
        return np.where(ok, sp, 1.0), np.where(ok, sq, 1.0)

    lo = float(_subsampled_loss(-z, q, mu))
    hi = float(_subsampled_loss(mu + z, q, mu))
    return _from_survival(step, lo, hi, survival)


def poisson_gaussian_add_pld(sampling_rate, noise_multiplier, step, tail):
    """Poisson-subsampled Gaussian, add direction: P = N(0,1), Q = (1 − q)N(0,1) + qN(μ,1).

    The reverse pair of :func:`poisson_gaussian_remove_pld` (same sources):
    L(x) = −log(1 − q + q e^{μx − μ²/2}) decreases in x and stays below −log(1 − q).
    """
    q, mu = float(sampling_rate), 1.0 / float(noise_multiplier)
    if q >= 1.0:
        return gaussian_pld(noise_multiplier, step, tail)
    z = _z(tail)
    ceiling = -math.log1p(-q)

    def survival(l):
        from scipy.special import ndtr

        ok = l < ceiling
        x = _subsampled_inverse(np.where(ok, -l, 1.0), q, mu)  # L > l ⟺ X < x
        x = np.where(ok, x, -np.inf)
        sp = ndtr(x)
        sq = (1.0 - q) * ndtr(x) + q * ndtr(x - mu)
        return np.where(ok, sp, 0.0), np.where(ok, sq, 0.0)

    lo = -float(_subsampled_loss(z, q, mu))
    return _from_survival(step, lo, ceiling, survival)


def _symmetrise(pld):
    """The symmetric PLD with the same δ(ε) for ε >= 0 as ``pld``.

    Keeps the cells with loss l > 0, adds their mirror images at −l with mass
    e^{−l}·p(l) and puts the remaining mass at 0. A symmetric PLD
    (T(P, Q) = T(Q, P)) satisfies δ(−ε) = 1 − e^{−ε} + e^{−ε} δ(ε), so its δ
    is at least the given one at every ε >= 0 and, by that identity, at every
    ε < 0 too (clipping a negative remainder at 0 only adds mass).
    """
    h = pld.step
    start = max(0, -pld.offset + 1)
    pos = pld.pmf[start:]
    if pos.size == 0:
        return PrivacyLossDistribution(h, 0, [1.0 - pld.infinity_mass], pld.infinity_mass)
    first = pld.offset + start  # grid index of pos[0] (>= 1)
    idx = first + np.arange(pos.size)
    mirror = pos * np.exp(-idx * h)
    top = int(idx[-1])
    pmf = np.zeros(2 * top + 1)
    pmf[top + idx] = pos
    pmf[top - idx] = mirror
    pmf[top] = max(0.0, 1.0 - pld.infinity_mass - pos.sum() - mirror.sum())
    return PrivacyLossDistribution(h, -top, pmf, pld.infinity_mass)


def without_replacement_gaussian_pld(sampling_rate, noise_multiplier, step, tail):
    """Gaussian on a batch of γn rows sampled without replacement (replace-one, sensitivity doubled).

    skdp's σ is relative to the add/remove sensitivity C; replacing a row
    moves the sum by up to 2C, so the base mechanism is μ-GDP with μ = 2/σ.
    Sampling a γ fraction without replacement then gives the symmetric
    trade-off function C_γ(G_μ) = min{f_γ, f_γ⁻¹}** with f_γ = γG_μ + (1 − γ)Id
    (Dong, Roth & Su 2022, Thm. 4.2), whose δ(ε) for ε >= 0 is the larger of
    the two directions of the γ-subsampled pair ((1 − γ)N(0,1) + γN(μ,1),
    N(0,1)), which is the "remove" one (Zhu, Dong & Wang 2022; checked in
    the tests). Its PLD is the symmetric one with that δ (:func:`_symmetrise`).
    """
    remove = poisson_gaussian_remove_pld(sampling_rate, float(noise_multiplier) / 2.0, step, tail)
    return _symmetrise(remove)
