"""Split choice and leaf values: the only place where a tree reads gradient sums.

Two splitters share one interface. :class:`ExactSplitter` (ε = ∞) is the
non-private algorithm of scikit-learn's histogram gradient boosting
(Ke et al. 2017; Chen & Guestrin 2016, Eq. 7): the split of largest gain
G_L²/(H_L + λ) + G_R²/(H_R + λ) − G²/(H + λ), and Newton leaf values
−lr·G/(H + λ). :class:`PrivateSplitter` makes every read a noisy release:

- split: the exponential mechanism (McSherry & Talwar 2007) over every
  (feature, threshold) of a node with the score |G_L| + |G_R|, whose
  sensitivity is 1 when every row's gradient is in [−1, 1] (adding a row
  moves one of G_L, G_R by at most 1). The gain itself has no bounded
  sensitivity (the Newton ratio G/H is unbounded as H → 0), so DPBoost
  (Li et al. 2020, Thm. 2) needs a large λ and a clipped gradient for it.
  Sampled by the Gumbel-max trick; the rows of a level's nodes are disjoint,
  so one level of one tree costs one ε_s-exponential mechanism, which is
  ε_s²/8-zCDP (ε_s-bounded range, Durfee & Rogers 2019; Cesar & Rogers 2021,
  Lemma 3.2).
- leaves: Gaussian noise on each leaf's gradient and hessian sums (Maddock
  et al. 2022, "Federated boosted decision trees with differential
  privacy", CCS: Newton leaves from noisy gradient and hessian sums). A row
  is in one leaf, so a tree's leaf sums have the L2 sensitivity of one
  row's gradient (hessian); the caller sets the noise stds from that.
  The leaf value −lr·G̃/(max(H̃, 10·s_H) + λ), with s_H the std of H̃'s
  noise, is post-processing: a hessian sum not well above its own noise is
  not trusted, and the leaf is shrunk towards 0.
"""

import numpy as np

__all__ = ["ExactSplitter", "PrivateSplitter"]

# A leaf's noisy hessian sum is floored at this many times its noise std s_H: a
# shrinkage of the leaves whose hessian is not well above the noise. Measured with
# benchmarks/bench_trees.py on the suite's tables at epsilon = 1 (3 seeds): 10 was at
# or near the best of 1, 3 and 10 on every table (loans R² 0.19 against -0.02 with 1).
HESSIAN_FLOOR = 10.0


class ExactSplitter:
    """Non-private greedy splits and Newton leaves (ε = ∞), as scikit-learn's."""

    def __init__(self, *, l2_regularization, min_samples_leaf, min_hessian=1e-3):
        self.lam = l2_regularization
        self.min_samples_leaf = min_samples_leaf
        self.min_hessian = min_hessian

    def split(self, bins, node, n_nodes, g, h, rng):
        """(feature, threshold bin) of each node; threshold n_bins means no split."""
        G, Gt = bins.histograms(node, n_nodes, g)
        H, Ht = bins.histograms(node, n_nodes, h)
        C, Ct = bins.histograms(node, n_nodes, np.ones_like(g))
        GL, HL, CL = (np.cumsum(a, axis=2)[:, :, :-1] for a in (G, H, C))
        GR, HR, CR = Gt[:, None, None] - GL, Ht[:, None, None] - HL, Ct[:, None, None] - CL
        lam = self.lam
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = (GL**2 / (HL + lam) + GR**2 / (HR + lam)
                    - (Gt**2 / (Ht + lam))[:, None, None])
        valid = ((CL >= self.min_samples_leaf) & (CR >= self.min_samples_leaf)
                 & (HL >= self.min_hessian) & (HR >= self.min_hessian) & np.isfinite(gain))
        gain = np.where(valid, gain, -np.inf).reshape(n_nodes, -1)
        best = gain.argmax(axis=1)
        feature, threshold = np.divmod(best, bins.n_bins - 1)
        threshold = threshold + 1
        none = ~(gain[np.arange(n_nodes), best] > 0)
        threshold[none] = bins.n_bins
        feature[none] = 0
        return feature, threshold

    def leaves(self, leaf, n_leaves, g, h, rng):
        """Gradient and hessian sums of each leaf (exact)."""
        return (np.bincount(leaf, weights=g, minlength=n_leaves),
                np.bincount(leaf, weights=h, minlength=n_leaves))

    def leaf_values(self, G, H, learning_rate):
        denom = H + self.lam
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denom > 0, -learning_rate * G / denom, 0.0)


class PrivateSplitter:
    """Exponential-mechanism splits and Gaussian leaf sums; every read is a release.

    Parameters
    ----------
    split_epsilon : float
        ε_s of one level's exponential mechanism (score sensitivity 1).
    grad_std, hess_std : float
        Std of the Gaussian noise on each leaf's gradient and hessian sum.
    """

    def __init__(self, *, split_epsilon, grad_std, hess_std, l2_regularization):
        self.split_epsilon = split_epsilon
        self.grad_std = grad_std
        self.hess_std = hess_std
        self.lam = l2_regularization

    def split(self, bins, node, n_nodes, g, h, rng):
        G, Gt = bins.histograms(node, n_nodes, g)
        GL = np.cumsum(G, axis=2)[:, :, :-1]
        score = np.abs(GL) + np.abs(Gt[:, None, None] - GL)  # sensitivity 1 for |g| <= 1
        # Exponential mechanism, P ∝ exp(ε_s·u/(2Δ)) with Δ = 1, by Gumbel-max.
        logits = 0.5 * self.split_epsilon * score + rng.gumbel(size=score.shape)
        best = logits.reshape(n_nodes, -1).argmax(axis=1)
        feature, threshold = np.divmod(best, bins.n_bins - 1)
        return feature, threshold + 1

    def leaves(self, leaf, n_leaves, g, h, rng):
        G = np.bincount(leaf, weights=g, minlength=n_leaves)
        H = np.bincount(leaf, weights=h, minlength=n_leaves)
        return (G + self.grad_std * rng.standard_normal(n_leaves),
                H + self.hess_std * rng.standard_normal(n_leaves))

    def leaf_values(self, G, H, learning_rate):
        return -learning_rate * G / (np.maximum(H, HESSIAN_FLOOR * self.hess_std) + self.lam)
