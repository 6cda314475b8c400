"""Split choice and leaf values: the only place where a tree reads gradient sums.

Two splitters share one interface. :class:`ExactSplitter` (ε = ∞) is the
non-private algorithm of scikit-learn's histogram gradient boosting
(Ke et al. 2017; Chen & Guestrin 2016, Eq. 7): the split of largest gain
G_L²/(H_L + λ) + G_R²/(H_R + λ) − G²/(H + λ), and Newton leaf values
−lr·G/(H + λ). :class:`PrivateSplitter` makes every read a noisy release:

- split: the exponential mechanism (McSherry & Talwar 2007) over every
  (feature, threshold, side of the missing values) of a node (the
  candidates of :mod:`skdp.tree._candidates`, fixed by ``max_bins``) with
  the score |G_L| + |G_R|, whose
  sensitivity is 1 when every row's gradient is in [−1, 1] (adding a row
  moves one of G_L, G_R by at most 1, whichever side its missing values
  go: every candidate is a fixed partition of the bins, the missing bin
  included). The gain itself has no bounded
  sensitivity (the Newton ratio G/H is unbounded as H → 0), so DPBoost
  (Li et al. 2020, Thm. 2) needs a large λ and a clipped gradient for it.
  Sampled by the Gumbel-max trick; the rows of a level's nodes are disjoint,
  so one level of one tree costs one ε_s-exponential mechanism, which is
  ε_s²/8-zCDP (ε_s-bounded range, Durfee & Rogers 2019; Cesar & Rogers 2021,
  Lemma 3.2), however many candidates it has: choosing the side of the
  missing values costs nothing more.
- leaves: Gaussian noise on each leaf's gradient and hessian sums (Maddock
  et al. 2022, "Federated boosted decision trees with differential
  privacy", CCS: Newton leaves from noisy gradient and hessian sums). A row
  is in one leaf, so a tree's leaf sums have the L2 sensitivity of one
  row's gradient (hessian); the caller sets the noise stds from that.
  The leaf value −lr·G̃/(max(H̃, 10·s_H) + λ), with s_H the std of H̃'s
  noise, is post-processing: a hessian sum not well above its own noise is
  not trusted, and the leaf is shrunk towards 0.

Missing values of a numeric feature have a bin of their own. With ε = ∞ a
split sends them where scikit-learn does: the side of larger gain when the
feature had missing values at fit (missing right first, kept on ties), and
otherwise the child with more rows.

Categorical features (codes 0..c − 1 of the public categories, c for a
missing value) split into two sets of categories:

- ε = ∞: scikit-learn's rule (Fisher 1958, "On grouping for maximum
  homogeneity"; LightGBM's): the categories with enough support
  (H_k·n/H ≥ 10) sorted by G_k/(H_k + 10) and scanned from both ends up to
  the middle, the low-support ones always right; the missing code is a
  category when the feature had missing values at fit, and otherwise goes
  to the child with more rows, with the categories never seen at fit.
- finite ε: the same exponential mechanism, whose candidates for a
  categorical feature are every sign pattern s ∈ {−1, +1}^(c+1) (code k
  goes right when s_k = +1) with the score Σ_k s_k·G_k = G_R − G_L
  (sensitivity 1: a row moves one G_k by at most 1; when G_L and G_R have
  opposite signs it is the numeric score |G_L| + |G_R|). Sorting by a ratio
  of sums would make the candidates depend on the data; this set is fixed.
  The score is additive, so the mechanism is sampled exactly without
  listing the 2^(c+1) patterns: the feature's total weight is
  μ·Π_k 2·cosh(ε_s·G_k/2), and given the feature each code goes right
  independently with probability 1/(1 + exp(−ε_s·G_k)). The base measure
  μ = (max_bins − 1)/2^(c+1) per pattern gives every feature, numeric
  (2·max_bins − 1 candidates of weight (max_bins − 1)/(2·max_bins − 1)) or
  categorical, the same prior mass max_bins − 1; an exponential mechanism with a fixed base measure keeps its
  privacy (McSherry & Talwar 2007, Thm. 6) and its ε_s-bounded range.
"""

import math

import numpy as np
from scipy.special import expit

from ...tree._candidates import left_sums, numeric_tables

__all__ = ["ExactSplitter", "PrivateSplitter", "leaf_sums"]

# A leaf's noisy hessian sum is floored at this many times its noise std s_H: a
# shrinkage of the leaves whose hessian is not well above the noise. Measured with
# benchmarks/bench_trees.py on the suite's tables at epsilon = 1 (3 seeds): 10 was at
# or near the best of 1, 3 and 10 on every table (loans R² 0.19 against -0.02 with 1).
HESSIAN_FLOOR = 10.0

# scikit-learn's MIN_CAT_SUPPORT (its splitting.pyx; LightGBM's cat_smooth): at ε = ∞, a
# category with less hessian support is not sorted (always right), and the sort key is
# G/(H + MIN_CAT_SUPPORT).
MIN_CAT_SUPPORT = 10.0


class _Layout:
    """Which features are categorical, their numbers of categories, the numeric bins."""

    def __init__(self, n_bins, n_categories):
        self.n_bins = n_bins  # bins of a numeric feature's values (max_bins); n_bins: missing
        self.n_categories = (None if n_categories is None
                             else np.asarray(n_categories, dtype=np.int64))
        if self.n_categories is None or not np.any(self.n_categories):
            self.categorical = np.array([], dtype=np.int64)
            self.numeric = None  # every feature
        else:
            self.categorical = np.flatnonzero(self.n_categories)
            self.numeric = np.flatnonzero(self.n_categories == 0)

    def numeric_left(self, hist):
        """Left sums (n_nodes, n_numeric, 2·n_bins − 1) of the numeric candidates."""
        part = hist if self.numeric is None else hist[:, self.numeric]
        return left_sums(part, self.n_bins)

    def numeric_feature(self, index):
        return index if self.numeric is None else self.numeric[index]


def leaf_sums(leaf, n_leaves, g, h):
    """Gradient and hessian sums of each leaf, from each row's leaf (sums over rows)."""
    return (np.bincount(leaf, weights=g, minlength=n_leaves),
            np.bincount(leaf, weights=h, minlength=n_leaves))


class ExactSplitter:
    """Non-private greedy splits and Newton leaves (ε = ∞), as scikit-learn's."""

    def __init__(self, *, l2_regularization, min_samples_leaf, n_bins, min_hessian=1e-3,
                 n_categories=None, seen=None):
        self.lam = l2_regularization
        self.min_samples_leaf = min_samples_leaf
        self.min_hessian = min_hessian
        self.layout = _Layout(n_bins, n_categories)
        self.seen = seen  # (d, B) bool: the codes present at fit (categorical features)

    def split(self, bins, node, n_nodes, g, h, rng):
        """(feature, bool row over the bins: True goes right) of each node.

        A node with no split of positive gain sends every row left.
        """
        return self.choose(self.histograms(bins, node, n_nodes, g, h), rng)

    def histograms(self, bins, node, n_nodes, g, h):
        """The sums :meth:`choose` reads: gradient, hessian and count histograms and totals.

        Sums over rows: those of several blocks of rows add up to the whole's.
        """
        return (*bins.histograms(node, n_nodes, g), *bins.histograms(node, n_nodes, h),
                *bins.histograms(node, n_nodes, np.ones_like(g)))

    def choose(self, sums, rng):
        """The splits of :meth:`split` from the level's :meth:`histograms` (the greedy rule)."""
        layout = self.layout
        B = layout.n_bins
        G, Gt, H, Ht, C, Ct = sums
        n_nodes, d, n_bins = G.shape
        GL, HL, CL = (layout.numeric_left(a) for a in (G, H, C))
        GR, HR, CR = Gt[:, None, None] - GL, Ht[:, None, None] - HL, Ct[:, None, None] - CL
        lam = self.lam
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = (GL**2 / (HL + lam) + GR**2 / (HR + lam)
                    - (Gt**2 / (Ht + lam))[:, None, None])
        valid = ((CL >= self.min_samples_leaf) & (CR >= self.min_samples_leaf)
                 & (HL >= self.min_hessian) & (HR >= self.min_hessian) & np.isfinite(gain))
        gain = np.where(valid, gain, -np.inf)
        # scikit-learn's scans: missing values right (the first best threshold), then left
        # (the last best), kept only when strictly better. Without a missing value in the
        # node the two give equal gains, so the first is kept: the node's count of missing
        # values says so, not the gains (the missing bin's gradient sum is a round-off away
        # from 0 when it is the feature's most common bin, filled with the total less the
        # other bins, _histogram._fill_common).
        numeric = np.arange(d) if layout.numeric is None else layout.numeric
        right = gain[:, :, :B].argmax(axis=2)
        left = B + (B - 2) - gain[:, :, :B - 1:-1].argmax(axis=2)
        g_right = np.take_along_axis(gain, right[:, :, None], 2)[..., 0]
        g_left = np.take_along_axis(gain, left[:, :, None], 2)[..., 0]
        g_left = np.where(C[:, numeric, B] > 0, g_left, -np.inf)
        best_numeric = np.where(g_left > g_right, left, right)
        feature_gain = np.full((n_nodes, d), -np.inf)
        feature_gain[:, numeric] = np.maximum(g_left, g_right)
        left_sets = {}
        for j in layout.categorical:
            c = int(layout.n_categories[j])
            for i in range(n_nodes):
                feature_gain[i, j], left_sets[i, j] = self._categorical(
                    G[i, j, :c + 1], H[i, j, :c + 1], C[i, j, :c + 1], Gt[i], Ht[i], Ct[i],
                    has_missing=bool(self.seen[j, c]))
        feature = feature_gain.argmax(axis=1)  # the first of the best (scikit-learn's order)
        table = np.zeros((n_nodes, n_bins), dtype=bool)
        position = np.full(d, -1)
        position[numeric] = np.arange(numeric.size)
        for i in range(n_nodes):
            j = feature[i]
            if not feature_gain[i, j] > 0:
                feature[i] = 0  # no split: every row left
                continue
            if position[j] >= 0:
                candidate = best_numeric[i, position[j]]
                table[i] = numeric_tables([candidate], B, n_bins)[0]
                if not self.seen[j, B]:  # no missing value at fit: to the child with more rows
                    n_left = CL[i, position[j], candidate]
                    table[i, B] = not n_left > Ct[i] - n_left
                continue
            c = int(layout.n_categories[j])
            table[i, :c + 1] = True
            table[i, left_sets[i, j]] = False
            if not self.seen[j, c]:  # no missing value at fit: to the child with more rows
                n_left = C[i, j, left_sets[i, j]].sum()
                table[i, c] = not n_left > Ct[i] - n_left
            # A category never seen at fit is unknown, as in scikit-learn: with the missing.
            table[i, :c][~self.seen[j, :c]] = table[i, c]
        return feature, table

    def _categorical(self, G, H, C, Gt, Ht, n, *, has_missing):
        """Best gain and left codes of one categorical feature in one node (scikit-learn's)."""
        c = G.size - 1
        support = n / Ht if Ht > 0 else 0.0
        used = [k for k in range(c + has_missing) if H[k] * support >= MIN_CAT_SUPPORT]
        if len(used) <= 1:
            return -np.inf, []
        used = np.array(used)
        used = used[np.argsort(G[used] / (H[used] + MIN_CAT_SUPPORT), kind="stable")]
        lam = self.lam
        parent = Gt**2 / (Ht + lam)
        best_gain, best = -1.0, None
        for direction in (1, -1):
            middle = (used.size + 1) // 2 - (direction == -1)
            gl = hl = cl = 0.0
            for i in range(middle):
                k = used[i] if direction == 1 else used[used.size - 1 - i]
                gl, hl, cl = gl + G[k], hl + H[k], cl + C[k]
                gr, hr, cr = Gt - gl, Ht - hl, n - cl
                if cl < self.min_samples_leaf or hl < self.min_hessian:
                    continue
                if cr < self.min_samples_leaf or hr < self.min_hessian:
                    break
                gain = gl**2 / (hl + lam) + gr**2 / (hr + lam) - parent
                if gain > best_gain and gain > 0:
                    best_gain = gain
                    best = used[:i + 1] if direction == 1 else used[used.size - 1 - i:]
        if best is None:
            return -np.inf, []
        return best_gain, list(best)

    def leaves(self, leaf, n_leaves, g, h, rng):
        """Gradient and hessian sums of each leaf (exact)."""
        return self.release_leaves(*leaf_sums(leaf, n_leaves, g, h), rng)

    def release_leaves(self, G, H, rng):
        """The leaves' sums as they are (ε = ∞)."""
        return G, H

    def leaf_values(self, G, H, learning_rate):
        denom = H + self.lam
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denom > 0, -learning_rate * G / denom, 0.0)

    def impurity(self, G, H):
        """−G²/(H + λ) of each node: a split's gain is its parent's less its children's."""
        denom = H + self.lam
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denom > 0, -G**2 / denom, 0.0)


class PrivateSplitter:
    """Exponential-mechanism splits and Gaussian leaf sums; every read is a release.

    Parameters
    ----------
    split_epsilon : float
        ε_s of one level's exponential mechanism (score sensitivity 1).
    grad_std, hess_std : float
        Std of the Gaussian noise on each leaf's gradient and hessian sum.
    gradient_bound : float, default=1.0
        The public bound on every row's |gradient|: the sensitivity Δ of the
        split score.
    """

    def __init__(self, *, split_epsilon, grad_std, hess_std, l2_regularization, n_bins,
                 n_categories=None, gradient_bound=1.0):
        self.split_epsilon = split_epsilon
        self.gradient_bound = gradient_bound
        self.grad_std = grad_std
        self.hess_std = hess_std
        self.lam = l2_regularization
        self.layout = _Layout(n_bins, n_categories)

    def split(self, bins, node, n_nodes, g, h, rng):
        return self.choose(self.histograms(bins, node, n_nodes, g, h), rng)

    def histograms(self, bins, node, n_nodes, g, h):
        """The sums :meth:`choose` reads: the gradient histograms and totals of the nodes.

        Sums over rows: those of several blocks of rows add up to the whole's.
        """
        return bins.histograms(node, n_nodes, g)

    def choose(self, sums, rng):
        """The splits of :meth:`split` from the level's :meth:`histograms` (the mechanism)."""
        layout = self.layout
        B = layout.n_bins
        G, Gt = sums
        n_nodes, _, n_bins = G.shape
        GL = layout.numeric_left(G)  # every (threshold, missing direction): _candidates
        score = np.abs(GL) + np.abs(Gt[:, None, None] - GL)  # sensitivity Δ for |g| <= Δ
        # Exponential mechanism, P ∝ μ·exp(ε_s·u/(2Δ)), Δ = gradient_bound, by Gumbel-max;
        # the base measure μ = (B − 1)/(2B − 1) of each numeric candidate gives every feature
        # the prior mass B − 1 (module docstring).
        half = 0.5 * self.split_epsilon / self.gradient_bound
        log_mu = math.log((B - 1) / (2 * B - 1))
        logits = (log_mu + half * score + rng.gumbel(size=score.shape)).reshape(n_nodes, -1)
        if logits.shape[1] == 0:  # every feature categorical
            logits = np.full((n_nodes, 1), -np.inf)
        best = logits.argmax(axis=1)
        feature, candidate = np.divmod(best, max(GL.shape[2], 1))
        table = numeric_tables(candidate, B, n_bins)
        if layout.categorical.size == 0:
            return feature, table
        best_logit = logits[np.arange(n_nodes), best]
        feature = layout.numeric_feature(feature) if layout.numeric.size else feature
        # Each categorical feature's total weight over its sign patterns (module docstring):
        # log μ_total + Σ_k log cosh(ε_s·G_k/2), μ_total = max_bins − 1; plus one Gumbel.
        cat_G = []
        for j in layout.categorical:
            Gj = G[:, j, :layout.n_categories[j] + 1]
            cat_G.append(Gj)
            weight = (math.log(B - 1) + np.sum(
                np.logaddexp(half * Gj, -half * Gj) - math.log(2.0), axis=1))
            logit = weight + rng.gumbel(size=n_nodes)
            wins = logit > best_logit
            best_logit = np.where(wins, logit, best_logit)
            feature = np.where(wins, j, feature)
        for k, j in enumerate(layout.categorical):
            nodes = np.flatnonzero(feature == j)
            if nodes.size:
                Gj = cat_G[k][nodes]
                table[nodes] = False
                table[nodes, :Gj.shape[1]] = rng.random(Gj.shape) < expit(2.0 * half * Gj)
        return feature, table

    def leaves(self, leaf, n_leaves, g, h, rng):
        return self.release_leaves(*leaf_sums(leaf, n_leaves, g, h), rng)

    def release_leaves(self, G, H, rng):
        """The leaves' gradient and hessian sums with their Gaussian noise."""
        n_leaves = G.shape[0]
        return (G + self.grad_std * rng.standard_normal(n_leaves),
                H + self.hess_std * rng.standard_normal(n_leaves))

    def leaf_values(self, G, H, learning_rate):
        return -learning_rate * G / (np.maximum(H, HESSIAN_FLOOR * self.hess_std) + self.lam)

    def impurity(self, G, H):
        """−G̃²/(max(H̃, 10·s_H) + λ) of each node from its leaves' noisy sums (post-processing).

        A split's gain is its parent's less its children's, the gain of the exact
        splitter with the hessian floored as in :meth:`leaf_values`.
        """
        return -G**2 / (np.maximum(H, HESSIAN_FLOOR * self.hess_std) + self.lam)
