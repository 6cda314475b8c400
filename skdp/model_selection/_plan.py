"""The private search's plan: what it costs, from its parameters and public sizes alone.

The whole search is one mechanism (Papernot & Steinke 2022, Thms. 2 and 6):
runs of candidates drawn at random, each a private fit and a noisy count, of
which only the best is released, then the refit. Its curve is found before
the charge from the candidates' curves on placeholder rows (:mod:`._probe`),
the noise of the counts (:meth:`_SearchPlan._score_mechanism`) and the law of
the number of runs. Given a total ``epsilon``, the plan also scales the
candidates' own ``epsilon`` so that the search spends at most that, keeping
most of it for the refit (:meth:`_SearchPlan._candidates_within_epsilon`).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..accounting import DiscreteGaussianEvent, RDPCurve, private_selection_rdp
from ..accounting import epsilon_of as accounting_epsilon_of
from ..accounting._bisect import largest_within
from ..mechanisms import DiscreteGaussianMechanism, DiscreteLaplaceMechanism
from ._params import _nested_params, _quiet
from ._probe import _train_curve

# With a total epsilon and refit=True, the refit (the released model) gets a share of
# the total alone, and the runs and their scores what is left in the composition: on the
# suite's tables the untuned estimator at the whole epsilon was better than any tuned
# candidate at a third of it, so the search keeps most of the budget for the model it
# releases (benchmarks/bench_suite.py, the search row). The share is the first of
# REFIT_SHARES that leaves room beside the refit for runs of a tenth of its epsilon, raised
# by bisection towards the one above it (to REFIT_SHARE_TOL); where none does, the refit is
# scaled with the runs. (The room is not monotone in the share: runs so small that their
# noise cannot be calibrated do not fit either.)
REFIT_SHARES = (0.75, 0.6, 0.5, 0.4, 0.3)
REFIT_SHARE_TOL = 0.01
_SCORE_SHARE = 0.1
_SMALLEST_FACTOR = 1e-6
_LARGEST_FACTOR = 1e6
_RUNS_FACTOR_MIN = 0.1


def _curve_max(curves):
    """The order-wise maximum of curves: a bound for a run whose candidate is drawn at random.

    Rényi divergence is jointly quasi-convex (van Erven & Harremoës 2014,
    Thm. 13), so a data-independent mixture over candidates is no worse than
    its worst candidate at each order.
    """
    orders = curves[0].orders
    for c in curves[1:]:
        orders = np.intersect1d(orders, c.orders)
    rdp = np.max([c.rdp[np.isin(c.orders, orders)] for c in curves], axis=0)
    return RDPCurve(
        orders,
        rdp,
        pure_epsilon=max(c.pure_epsilon for c in curves),
        delta=max(c.delta for c in curves),
        mechanism=f"worst of {len(curves)} candidates",
    )


def _largest_factor(cost, target):
    """The largest t (to 0.01%) with ``cost(t) <= target``; cost grows with t.

    Each cost calibrates every candidate's noise, so the boundary is found by
    regula falsi in log t (:func:`~skdp.accounting._bisect.largest_within`),
    walking down from t = 1 while it is out of reach.
    """
    def floored(t):
        if t < _SMALLEST_FACTOR:
            raise ValueError(
                "epsilon is too small for this search: its noisy scores and the selection "
                "alone cost about that much. Give a larger epsilon, a smaller "
                "score_epsilon or a smaller n_runs_mean.")
        return cost(t)

    return largest_within(floored, target, 1.0, rtol=1e-4, upper=_LARGEST_FACTOR)


class _EventfulDiscreteGaussian(DiscreteGaussianMechanism):
    """The discrete Gaussian whose curve also names it, for the PLD accountant."""

    def privacy_curve(self, *, orders=None):
        return super().privacy_curve(orders=orders).with_event(DiscreteGaussianEvent(sigma=self.sigma))


def _count_noise_multiplier(epsilon, delta):
    """σ of the discrete Gaussian count, (1/(2σ²))-zCDP, that is (ε, δ)-DP by ρ + 2√(ρ log(1/δ)) = ε.

    Bun & Steinke 2016, Prop. 1.3, inverted: ρ = (√(log(1/δ) + ε) − √log(1/δ))².
    Tighter conversions (:func:`~skdp.accounting.zcdp_to_epsilon`) would allow
    less noise for the same ε alone, but the counts' noise is a trade: less
    of it costs the search's composition more. Planned on adult at totals of
    0.1 and 0.3, this closed form left the refit 0.741 and 0.75 of the total,
    the tightest conversion (Canonne, Kamath & Steinke 2020, Cor. 13) 0.712
    and 0.731.
    """
    log_inv_delta = math.log(1.0 / delta)
    # √(L + ε) − √L = ε/(√(L + ε) + √L): the difference of two close roots loses
    # digits beyond the margin below ε ≈ 1e-5, this form only a few ulps
    root_rho = epsilon / (math.sqrt(log_inv_delta + epsilon) + math.sqrt(log_inv_delta))
    return (1.0 + 1e-9) / (math.sqrt(2.0) * root_rho)  # a hair more noise: round-off stays below ε


class _SearchPlan:
    """The methods of a private search that plan its cost (a mixin of ``_BaseDPSearch``).

    They read the search's parameters (``estimator``, ``epsilon``,
    ``score_epsilon``, ``refit``), its ``_accounting_delta()`` and its
    ``_check_verbose()``, and the public sizes they are given; no value of
    the data.
    """

    def _score_epsilon(self):
        """ε of each run's noisy score: ``score_epsilon``, else 0.1, or a tenth of a total ε."""
        if self.score_epsilon is not None:
            return float(self.score_epsilon)
        return 0.1 if self.epsilon is None else _SCORE_SHARE * float(self.epsilon)

    def _score_mechanism(self):
        """The noise of every count the search releases (each run's correct predictions, the validation size).

        Counts of sensitivity 1 under add/remove. With ``score_epsilon`` given,
        or without a total ``epsilon``, or at an accounting δ of 0: discrete
        Laplace, ``score_epsilon``-DP (Canonne, Kamath & Steinke 2020). With a
        total ``epsilon`` and δ > 0: the discrete Gaussian of std σ,
        (1/(2σ²))-zCDP (ibid., Thm. 4), with σ such that one count alone is
        (ε/10, δ)-DP by Bun & Steinke 2016, Prop. 1.3
        (:func:`_count_noise_multiplier`). A pure ε/10-DP count has an RDP
        curve of about α(ε/10)²/2, some 2·log(1/δ) times (23 at δ = 1e-5)
        that of the Gaussian count: at a small total ε, Laplace counts cost a
        run many times its training.
        """
        delta = self._accounting_delta()
        if self.score_epsilon is not None or self.epsilon is None or delta == 0:
            return DiscreteLaplaceMechanism(self._score_epsilon())
        return _EventfulDiscreteGaussian(
            noise_multiplier=_count_noise_multiplier(self._score_epsilon(), delta))

    def _search_curve(self, candidates, X, y, n_train, n, distribution, score_curve, *,
                      refit_candidates=None):
        """The whole search's curve, each run's training curve and the refit's curve.

        The refit trains one of ``refit_candidates`` (default: ``candidates``).
        Every curve is probed on placeholders of the parts' sizes.
        """
        verbose, start = self._check_verbose() > 1, time.perf_counter()
        train_curves = []
        for i, p in enumerate(candidates):
            with _quiet():  # the probes' warnings (e.g. classes=None) repeat the search's own
                train_curves.append(_train_curve(self.estimator, p, X, y, n_train))
            if verbose:  # before the charge: public parameters and the time only
                print(f"[{type(self).__name__}] planned candidate {i + 1}/{len(candidates)} "
                      f"{p}, {time.perf_counter() - start:.2f} s", flush=True)
        run_curve = _curve_max([c + score_curve for c in train_curves])
        total = private_selection_rdp(run_curve, distribution)
        # The noisy size of the validation part, released once to turn the
        # best noisy count into an accuracy: score_epsilon-DP (count, sensitivity 1).
        total = total + score_curve
        refit_curve = None
        if self.refit:
            with _quiet():
                refit_curve = self._refit_curve(
                    candidates if refit_candidates is None else refit_candidates, X, y, n)
            total = total + refit_curve
        return total, train_curves, refit_curve

    def _refit_curve(self, candidates, X, y, n):
        """The refit's curve: the largest of the candidates' (the best one is not public)."""
        with _quiet():
            return _curve_max([_train_curve(self.estimator, p, X, y, n) for p in candidates])

    def _candidates_within_epsilon(self, candidates, sizes):
        """The runs' and the refit's candidates, their steps' ``epsilon`` scaled to the total.

        The steps' own ``epsilon`` values set how a run's ε is shared among
        them, and one factor scales them all. With ``refit``, the refit (the
        released model) is scaled first so that it alone costs the first of
        :data:`REFIT_SHARES` of ``epsilon`` that leaves room for runs of a
        tenth of its ε, raised towards the share above it by bisection (to
        :data:`REFIT_SHARE_TOL`; else it is scaled with the runs); the runs then get the largest
        factor (to 0.01%) for which the whole search, refit included, costs at
        most ``epsilon`` at the accounting δ. Without ``refit`` the runs' factor
        alone is searched. Only public inputs enter: the parameters and the
        parts' sizes.
        """
        keys = _nested_params(self.estimator, "epsilon")
        if not keys:
            raise ValueError(f"{type(self.estimator).__name__} has no `epsilon` parameter to "
                             "set from the search's total epsilon.")
        in_grid = sorted({k for p in candidates for k in p if k in keys})
        if in_grid:
            raise ValueError(f"With a total epsilon, the search sets {in_grid} itself; take "
                             "them out of the candidates, or pass epsilon=None.")
        for key, value in keys.items():
            if value is None or not 0 < float(value) < math.inf:
                raise ValueError(f"With a total epsilon, every step's epsilon sets its share "
                                 f"and must be finite and > 0; {key}={value!r}.")
        target, delta = float(self.epsilon), self._accounting_delta()
        X, y, _, n = sizes[:4]

        def scaled(t):
            return [{**{k: t * float(v) for k, v in keys.items()}, **p} for p in candidates]

        def epsilon_of(curve_of):
            """ε of ``curve_of()`` as the budget's default accountant composes it.

            An epsilon so small that no noise reaches it (a calibration raises) cannot be
            afforded either: inf.
            """
            try:
                curve = curve_of()
                return accounting_epsilon_of(curve, delta) if curve.delta <= delta else math.inf
            except ValueError:
                return math.inf

        def cost(t, refit):  # refit=None: the refit is scaled with the runs
            return epsilon_of(lambda: self._search_curve(scaled(t), *sizes,
                                                         refit_candidates=refit)[0])

        def refit_cost(t):
            return epsilon_of(lambda: self._refit_curve(scaled(t), X, y, n))

        def refit_at(share):
            """The refit's candidates at ``share`` of the total, or None if runs of a tenth of its ε do not fit beside it."""
            t_refit = _largest_factor(refit_cost, share * target)
            fits = cost(_RUNS_FACTOR_MIN * t_refit, scaled(t_refit)) <= target
            return scaled(t_refit) if fits else None

        refit, high = None, None
        for share in REFIT_SHARES if self.refit else ():
            refit = refit_at(share)
            if refit is not None:
                break
            high = share
        if refit is not None and high is not None:
            # the room beside the refit shrinks as its share grows: bisect between the
            # first share that fits and the one above it
            low = share
            while high - low > REFIT_SHARE_TOL:
                middle = (low + high) / 2.0
                found = refit_at(middle)
                if found is None:
                    high = middle
                else:
                    low, refit = middle, found
        runs = scaled(_largest_factor(lambda t: cost(t, refit), target))
        return runs, runs if refit is None else refit

    def _search_label(self, n_candidates, distribution):
        scores = f"score_epsilon={self._score_epsilon():g}"
        if not isinstance(self._score_mechanism(), DiscreteLaplaceMechanism):
            scores += f" at delta={self._accounting_delta():g} (discrete Gaussian)"
        return (f"{type(self).__name__}({type(self.estimator).__name__}, {n_candidates} candidates, "
                f"K~{distribution._describe()}, {scores}, refit={self.refit})")
