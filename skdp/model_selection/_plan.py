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
from ._probe import _ProbeCache, _train_curve

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


def _largest_factor(cost, target, too_small=None):
    """The largest t (to 0.01%) with ``cost(t) <= target``; cost grows with t.

    Each cost calibrates every candidate's noise, so the boundary is found by
    regula falsi in log t (:func:`~skdp.accounting._bisect.largest_within`),
    walking down from t = 1 while it is out of reach. Below
    :data:`_SMALLEST_FACTOR` it raises what ``too_small()`` returns (the
    search's message by default; a DPPipeline's split scales its steps so).
    """
    def floored(t):
        if t < _SMALLEST_FACTOR:
            if too_small is not None:
                raise too_small()
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


class _ExactCounts:
    """The counts of a search at a total ``epsilon=inf``: exact, and not private at all."""

    def randomise(self, value, *, random_state=None):
        return int(value)

    def privacy_curve(self, *, orders=None):
        return RDPCurve.non_private(orders)


class _SearchPlan:
    """The methods of a private search that plan its cost (a mixin of ``_BaseDPSearch``).

    They read the search's parameters (``estimator``, ``epsilon``,
    ``score_epsilon``, ``refit``), its ``_accounting_delta()`` and its
    ``_check_verbose()``, and the public sizes they are given; no value of
    the data.
    """

    def _given_total(self):
        """The total ε given as a number (inf included), else None (``"auto"`` or None)."""
        epsilon = self.epsilon
        return None if epsilon is None or isinstance(epsilon, str) else float(epsilon)

    def _score_epsilon(self, total=None):
        """ε of each run's noisy score: ``score_epsilon``, else 0.1, or a tenth of a total ε.

        ``total``: the search's total ε (``"auto"`` resolved); None reads a
        number given as ``epsilon``.
        """
        if total is None:
            total = self._given_total()
        if self.score_epsilon is not None:
            return float(self.score_epsilon)
        return 0.1 if total is None else _SCORE_SHARE * float(total)

    def _score_mechanism(self, total=None):
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
        run many times its training. At a total of ε = ∞, exact counts.
        """
        if total is None:
            total = self._given_total()
        if total == math.inf:
            return _ExactCounts()
        delta = self._accounting_delta()
        if self.score_epsilon is not None or total is None or delta == 0:
            return DiscreteLaplaceMechanism(self._score_epsilon(total))
        return _EventfulDiscreteGaussian(
            noise_multiplier=_count_noise_multiplier(self._score_epsilon(total), delta))

    def _search_curve(self, candidates, X, y, n_train, n, distribution, score_curve, *,
                      refit_candidates=None, cache=None):
        """The whole search's curve, each run's training curve and the refit's curve.

        The refit trains one of ``refit_candidates`` (default: ``candidates``).
        Every curve is probed on placeholders of the parts' sizes (through
        ``cache``, a :class:`~._probe._ProbeCache`, when given).
        """
        cache = _ProbeCache(X) if cache is None else cache
        train_curves = [self._probe_curve(cache, p, y, n_train, i, len(candidates))
                        for i, p in enumerate(candidates)]
        total = self._selection_curve(train_curves, distribution, score_curve)
        refit_curve = None
        if self.refit:
            refit_curve = self._refit_curve(
                candidates if refit_candidates is None else refit_candidates, X, y, n, cache)
            total = total + refit_curve
        return total, train_curves, refit_curve

    @staticmethod
    def _selection_curve(train_curves, distribution, score_curve):
        """The runs' selection (Papernot & Steinke 2022, Thms. 2 and 6) and the validation size's count."""
        run_curve = _curve_max([c + score_curve for c in train_curves])
        # The noisy size of the validation part, released once to turn the
        # best noisy count into an accuracy: score_epsilon-DP (count, sensitivity 1).
        return private_selection_rdp(run_curve, distribution) + score_curve

    def _refit_curve(self, candidates, X, y, n, cache=None):
        """The refit's curve: the largest of the candidates' (the best one is not public)."""
        cache = _ProbeCache(X) if cache is None else cache
        return _curve_max([self._probe_curve(cache, p, y, n) for p in candidates])

    def _probe_curve(self, cache, params, y, n, index=None, count=None):
        """A candidate's curve on ``n`` placeholder rows, probed once per search (``cache``)."""
        found = cache.curve_of(params, n)
        if found is not None:
            return found
        with _quiet():  # the probes' warnings (e.g. classes=None) repeat the search's own
            curve = _train_curve(self.estimator, params, cache.X_like, y, n, cache)
        cache.keep_curve(params, n, curve)
        if index is not None and self._check_verbose() > 1:
            # before the charge: public parameters and the time only
            print(f"[{type(self).__name__}] planned candidate {index + 1}/{count} {params}, "
                  f"{time.perf_counter() - cache.start:.2f} s", flush=True)
        return curve

    def _own_epsilon(self, candidates, X, y, n, cache):
        """``epsilon="auto"``: what fitting the estimator once costs, the largest over the candidates.

        Each candidate as the grid gives it (its steps' own ``epsilon``),
        probed on ``n`` placeholder rows and converted to ε at the accounting
        δ as the plan converts the whole search: only public inputs.
        """
        delta = self._accounting_delta()
        worst = 0.0
        for p in candidates:
            curve = self._probe_curve(cache, p, y, n)
            worst = max(worst, accounting_epsilon_of(curve, delta) if curve.delta <= delta
                        else math.inf)
        return worst

    def _candidates_within_epsilon(self, candidates, sizes, target=None, cache=None):
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
        parts' sizes. ``target`` is the total (``epsilon`` by default); each
        candidate is probed once per factor tried (``cache``).
        """
        keys = self._epsilon_keys(candidates)
        target = float(self.epsilon) if target is None else float(target)
        delta = self._accounting_delta()
        X, y, n_train, n, distribution, score_curve = sizes
        cache = _ProbeCache(X) if cache is None else cache
        verbose, name = self._check_verbose(), type(self).__name__

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

        def refit_curve_at(t):
            return _curve_max([self._probe_curve(cache, p, y, n) for p in scaled(t)])

        def cost(t, t_refit):  # t_refit=None: the refit is scaled with the runs
            def curve():
                train = [self._probe_curve(cache, p, y, n_train) for p in scaled(t)]
                total = self._selection_curve(train, distribution, score_curve)
                if self.refit:
                    total = total + refit_curve_at(t if t_refit is None else t_refit)
                return total
            return epsilon_of(curve)

        def refit_at(share):
            """The refit's factor at ``share`` of the total, or None if runs of a tenth of its ε do not fit beside it."""
            t_refit = _largest_factor(lambda t: epsilon_of(lambda: refit_curve_at(t)),
                                      share * target)
            fits = cost(_RUNS_FACTOR_MIN * t_refit, t_refit) <= target
            if verbose:  # public: the share tried, and the time
                print(f"[{name}] planning: the refit at {share:.3g} of epsilon="
                      f"{target:.4g} {'leaves' if fits else 'leaves no'} room for the runs, "
                      f"{time.perf_counter() - cache.start:.2f} s", flush=True)
            return t_refit if fits else None

        t_refit, high = None, None
        for share in REFIT_SHARES if self.refit else ():
            t_refit = refit_at(share)
            if t_refit is not None:
                break
            high = share
        if t_refit is not None and high is not None:
            # the room beside the refit shrinks as its share grows: bisect between the
            # first share that fits and the one above it
            low = share
            while high - low > REFIT_SHARE_TOL:
                middle = (low + high) / 2.0
                found = refit_at(middle)
                if found is None:
                    high = middle
                else:
                    low, t_refit = middle, found
        t_runs = _largest_factor(lambda t: cost(t, t_refit), target)
        runs = scaled(t_runs)
        if verbose:
            print(f"[{name}] planning: the runs' epsilon scaled by {t_runs:.4g} to fit "
                  f"epsilon={target:.4g}, {time.perf_counter() - cache.start:.2f} s", flush=True)
        return runs, runs if t_refit is None else scaled(t_refit)

    def _epsilon_keys(self, candidates, allow_inf=False):
        """The steps' (nested) ``epsilon`` keys that a total ε scales, checked before any probe."""
        keys = _nested_params(self.estimator, "epsilon")
        if "epsilon" in keys and "steps" in self.estimator.get_params(deep=False):
            # a DPPipeline's own total (None here: fit splits a total first): not a step's
            keys.pop("epsilon")
        auto = isinstance(self.epsilon, str)
        given = "epsilon='auto' (the default)" if auto else "a total epsilon"
        if not keys:
            raise ValueError(f"{type(self.estimator).__name__} has no `epsilon` parameter to "
                             f"set from the search's total epsilon ({given}); pass "
                             "epsilon=None to let each run spend what its candidate says.")
        in_grid = sorted({k for p in candidates for k in p if k in keys})
        if in_grid:
            raise ValueError(f"With {given}, the search sets {in_grid} itself; take "
                             "them out of the candidates, or pass epsilon=None (each run then "
                             "spends its candidate's epsilon; skdp.privacy_cost reads the "
                             "total before the fit).")
        for key, value in keys.items():
            finite = value is not None and 0 < float(value) < math.inf
            if not (finite or (allow_inf and value is not None and float(value) == math.inf)):
                raise ValueError(f"With {given}, every step's epsilon sets its share "
                                 f"and must be finite and > 0; {key}={value!r}.")
        return keys

    def _search_label(self, n_candidates, distribution, total=None):
        if total == math.inf:
            return (f"{type(self).__name__}({type(self.estimator).__name__}, {n_candidates} "
                    "candidates, epsilon=inf: not private, each candidate run once, exact "
                    f"scores, refit={self.refit})")
        scores = f"score_epsilon={self._score_epsilon(total):g}"
        if not isinstance(self._score_mechanism(total), DiscreteLaplaceMechanism):
            scores += f" at delta={self._accounting_delta():g} (discrete Gaussian)"
        return (f"{type(self).__name__}({type(self.estimator).__name__}, {n_candidates} candidates, "
                f"K~{distribution._describe()}, {scores}, refit={self.refit})")
