"""Private hyper-parameter search: the search classes and the order of their work.

The whole search is one DP mechanism. Each *run* picks a candidate uniformly
at random (independently of the data), trains it privately on a training part
and scores it privately on a held-out validation part (a noisy count of
correct predictions). The number of runs K is random and secret; only the
best run is released (Papernot & Steinke 2022, Thms. 2 and 6, in
:func:`skdp.accounting.private_selection_rdp`).

:class:`DPGridSearchCV` and :class:`DPRandomizedSearchCV` differ only in how
they draw their candidates. Their base's ``fit`` refuses bad parameters and
input first (``_checks``), plans the whole search's curve from the parameters
and the public sizes (``_plan``, on the probes of ``_probe``), charges it
once, and only then runs the candidates on the data (``_runs``) and releases
the best, which the search then delegates ``predict`` to.
"""

from __future__ import annotations

import math
import numbers
import os
import time
import warnings
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from scipy.sparse import issparse
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    clone,
    is_classifier,
)
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve, run_count_distribution
from ..budget import PrivacyBudget
from ..utils import DEFAULT_DELTA, check_budget, check_epsilon
from ._checks import (
    _check_finite_input,
    _check_private_steps,
    _check_public_labels,
    _check_secure_steps,
    _check_values,
    _label_set,
)
from ._params import _quiet, _with_params
from ._plan import _SearchPlan
from ._probe import _n_samples, _ProbeCache
from ._runs import _best_run, _private_fit

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from .._typing import ArrayLike, NDArray, RandomStateLike

__all__ = ["DPGridSearchCV", "DPRandomizedSearchCV", "NoCandidateWarning"]

_Search = TypeVar("_Search", bound="_BaseDPSearch")


class NoCandidateWarning(UserWarning):
    """A private search ran K = 0 times (Poisson law) and outputs no candidate.

    This outcome is part of the mechanism of Papernot & Steinke 2022, Thm. 6;
    the search's charge covers it and is kept.
    """


_DISTRIBUTIONS = ("logarithmic", "geometric", "truncated_negative_binomial", "poisson")


def _released_has(search, method):
    """Whether the search's model has ``method`` (as for scikit-learn's searches, hasattr tells)."""
    inner = getattr(search, "best_estimator_", None)
    return hasattr(search.estimator if inner is None else inner, method)


class _BaseDPSearch(DPEstimatorMixin, _SearchPlan, MetaEstimatorMixin, ClassifierMixin,
                     BaseEstimator):
    def __init__(
        self,
        estimator: BaseEstimator,
        *,
        epsilon: float | str | None = "auto",
        score_epsilon: float | None = None,
        n_runs_mean: float = 10.0,
        n_runs_distribution: str = "logarithmic",
        eta: float | None = None,
        validation_fraction: float = 0.2,
        refit: bool = True,
        budget: PrivacyBudget | None = None,
        delta: float | None = None,
        n_jobs: int | None = None,
        random_state: RandomStateLike = None,
        secure: bool = False,
        verbose: int = 0,
    ) -> None:
        self.estimator = estimator
        self.epsilon = epsilon
        self.score_epsilon = score_epsilon
        self.n_runs_mean = n_runs_mean
        self.n_runs_distribution = n_runs_distribution
        self.eta = eta
        self.validation_fraction = validation_fraction
        self.refit = refit
        self.budget = budget
        self.delta = delta
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose

    def _accounting_delta(self):
        if self.delta is not None:
            return float(self.delta)
        budget = self._budget_in_force()
        return budget.delta if budget is not None else DEFAULT_DELTA

    def _check_params(self):
        if not is_classifier(self.estimator):
            raise ValueError("The private search scores classifiers by noisy accuracy; "
                             f"{type(self.estimator).__name__} is not a classifier.")
        if isinstance(self.epsilon, str):
            if self.epsilon != "auto":
                raise ValueError(f"epsilon must be 'auto', a float > 0 or None; got "
                                 f"{self.epsilon!r}.")
        elif self.epsilon is not None:
            check_epsilon(self.epsilon)
        if self.score_epsilon is not None:
            check_epsilon(self.score_epsilon, name="score_epsilon", allow_inf=False)
        if self.n_runs_distribution not in _DISTRIBUTIONS:
            raise ValueError(f"n_runs_distribution must be one of {_DISTRIBUTIONS}; "
                             f"got {self.n_runs_distribution!r}.")
        distribution = run_count_distribution(self.n_runs_distribution, self.n_runs_mean,
                                              eta=self.eta)
        frac = self.validation_fraction
        if isinstance(frac, bool) or not isinstance(frac, numbers.Real) or not 0 < frac < 1:
            raise ValueError(f"validation_fraction must be in (0, 1); got {frac!r}.")
        if not isinstance(self.refit, (bool, np.bool_)):
            raise ValueError(f"refit must be True or False; got {self.refit!r}.")
        if self.delta is not None:
            d = float(self.delta)
            if not 0 <= d < 1:
                raise ValueError(f"delta must be in [0, 1); got {self.delta!r}.")
        check_budget(self.budget)
        return distribution

    def fit(self: _Search, X: ArrayLike, y: ArrayLike) -> _Search:
        """Run the private search; charge the budget once, before any training.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        resolve = getattr(self.estimator, "_with_total_split", None)
        if resolve is not None and self.estimator.epsilon is not None:
            # A DPPipeline given a total: split it once (from the shape of X), then search
            # as over a pipeline whose steps have their own epsilon, which the plan scales.
            given = self.estimator
            self.estimator = resolve(X, y, self._budget_in_force())
            try:
                return self.fit(X, y)
            finally:
                self.estimator = given
        # (1) validate: parameters, candidates, shapes (no value of X is read).
        distribution = self._check_params()
        rng = self._check_generator()
        verbose = self._check_verbose()
        start = time.perf_counter()
        if verbose:
            print(f"[{type(self).__name__}] planning the search's cost", flush=True)
        if isinstance(self.random_state, np.random.Generator):
            # One draw from the user's generator, whatever K is: its state afterwards
            # must not reveal how many runs (K is secret) drew from it.
            rng = np.random.default_rng(rng.integers(2**63))
        candidates = self._candidates(rng)
        if not candidates:
            raise ValueError("There are no candidates to search.")
        for p in candidates:
            _check_private_steps(clone(self.estimator).set_params(**p))
            if self.secure:
                _check_secure_steps(clone(self.estimator).set_params(**p))
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target "
                             "y is None.")
        if issparse(X):
            raise TypeError(f"{type(self).__name__} does not support sparse input: its "
                            "candidates are probed on dense placeholders.")
        n = _n_samples(X)
        if n != _n_samples(y):
            raise ValueError(f"X has {n} rows but y has {_n_samples(y)}.")
        if len(getattr(y, "shape", ())) == 2 and y.shape[1] == 1:
            # warned here, once (the runs' own warnings are not shown: see _private_fit)
            y = column_or_1d(y, warn=True)
        if (len(y.shape) if hasattr(y, "shape") else np.asarray(y).ndim) > 1:
            raise ValueError("y must be one-dimensional: the private search does not support "
                             "multi-output targets; nothing was charged.")
        _check_finite_input(self.estimator, X, y)
        for p in candidates:
            _check_public_labels(clone(self.estimator).set_params(**p), y)
        labels = _label_set([clone(self.estimator).set_params(**p) for p in candidates], y)
        with _quiet():  # a run's warnings are not shown either
            for p in candidates:
                _check_values(clone(self.estimator).set_params(**p), X, y, labels)
        # A data-independent split: each row is a validation row with
        # probability validation_fraction, shared by all runs.
        is_val = rng.random(n) < self.validation_fraction
        train_idx, val_idx = np.flatnonzero(~is_val), np.flatnonzero(is_val)
        if train_idx.size == 0 or val_idx.size == 0:
            raise ValueError(f"Too few rows (n_samples={n}) to split into a training and a "
                             "validation part.")
        # K is independent of the data: drawn now, secret, never stored. The
        # charge below does not depend on it (K = 0 is covered by Thm. 6).
        n_runs = int(distribution.sample(rng))

        # (2) the curve of the whole search, from the parameters and shapes:
        # candidates are probed on placeholders of the parts' sizes.
        cache = _ProbeCache(X)
        total_epsilon = self._total_epsilon(candidates, X, y, n, cache)
        refit_candidates = candidates
        if total_epsilon == math.inf:
            # Not private: every step at epsilon=inf, each candidate run once, exact counts.
            candidates = refit_candidates = self._at_infinity(candidates)
            n_runs = len(candidates)
            train_curves = [RDPCurve.non_private()] * n_runs
            refit_curve = RDPCurve.non_private() if self.refit else None
            total = RDPCurve.non_private()
        else:
            score_curve = self._score_mechanism(total_epsilon).privacy_curve()
            sizes = (X, y, train_idx.size, n, distribution, score_curve)
            if total_epsilon is not None:
                candidates, refit_candidates = self._candidates_within_epsilon(
                    candidates, sizes, total_epsilon, cache)
            total, train_curves, refit_curve = self._search_curve(
                candidates, *sizes, refit_candidates=refit_candidates, cache=cache)

        # (3) charge once, whatever K is.
        self._charge_budget(total, label=self._search_label(len(candidates), distribution,
                                                            total_epsilon))
        if verbose:
            print(f"[{type(self).__name__}] charged epsilon={self.epsilon_spent_:.4g}, "
                  f"delta={self.delta_spent_:.3g} for {len(candidates)} candidates; "
                  f"running, {time.perf_counter() - start:.2f} s", flush=True)

        # (4) only now read the data.
        self.candidates_ = [dict(p) for p in candidates]
        if n_runs == 0:
            # Poisson K = 0: the mechanism of Thm. 6 outputs "no candidate" (⊥).
            warnings.warn(
                "The Poisson number of runs K was 0: the search outputs no candidate "
                "(best_estimator_ is None). Its charge is kept: it covers this outcome too.",
                NoCandidateWarning, stacklevel=2)
            for name in ("classes_", "n_features_in_", "feature_names_in_"):
                if hasattr(self, name):  # left by an earlier fit
                    delattr(self, name)
            self.best_estimator_ = None
            self.best_params_ = None
            self.best_index_ = None
            self.best_score_ = math.nan
            self.cv_results_ = {"params": [], "mean_test_score": np.array([]),
                                "rank_test_score": np.array([], dtype=np.int32)}
            return self
        # Whatever a run could refuse was refused above; an error raised anyway
        # (a bug, or a step failing on a part of the data though not on all of
        # it) must not show or depend on a row, so it is replaced by one
        # generic error, raised outside the handler (no chain, no context).
        try:
            self._select(X, y, rng, candidates, n_runs, train_idx, val_idx, train_curves,
                         refit_curve, labels, refit_candidates, total_epsilon)
        except Exception:
            pass
        else:
            if verbose:  # the released choice and noisy score; no time (it grows with K)
                print(f"[{type(self).__name__}] released candidate {self.best_index_ + 1}/"
                      f"{len(candidates)} {self.best_params_}, noisy validation accuracy "
                      f"{self.best_score_:.3f}", flush=True)
            return self
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")
                     and k not in ("privacy_curve_", "epsilon_spent_", "delta_spent_")]:
            delattr(self, name)
        raise RuntimeError(
            f"A run of {type(self).__name__} failed after the budget was charged; the charge "
            "is kept and nothing is released. The error is not shown: it could reveal a "
            "value of the data. Fit one candidate alone on public or made-up rows of the "
            "same schema to see it.")

    def _total_epsilon(self, candidates, X, y, n, cache):
        """The search's total ε: ``epsilon`` (a number), the estimator's own (``"auto"``), or None.

        ``"auto"`` is what one fit of the estimator costs at the accounting δ
        (the largest over the candidates, each as the grid gives it, on the
        data's size): only the parameters and the public sizes are read.
        """
        if not isinstance(self.epsilon, str):
            return self._given_total()
        keys = self._epsilon_keys(candidates, allow_inf=True)
        if any(float(v) == math.inf for v in keys.values()):
            return math.inf
        own = self._own_epsilon(candidates, X, y, n, cache)
        if self._check_verbose():
            print(f"[{type(self).__name__}] planning: epsilon='auto' is the estimator's own, "
                  f"{own:.4g} at delta={self._accounting_delta():g}, "
                  f"{time.perf_counter() - cache.start:.2f} s", flush=True)
        return own

    def _at_infinity(self, candidates):
        """The candidates with every private step's ``epsilon`` set to inf (a total ε = ∞)."""
        keys = self._epsilon_keys(candidates, allow_inf=True)
        return [{**dict.fromkeys(keys, math.inf), **p} for p in candidates]

    def _select(self, X, y, rng, candidates, n_runs, train_idx, val_idx, train_curves,
                refit_curve, labels, refit_candidates, total_epsilon=None):
        """Step (4) of ``fit`` with K >= 1: the runs, the choice of the best, the refit.

        At a total ε = ∞ each candidate runs once, in order, with exact counts.
        """
        self.candidates_ = [dict(p) for p in candidates]
        counts = self._score_mechanism(total_epsilon)  # the noise of every count released
        picks = np.arange(len(candidates)) if total_epsilon == math.inf else None
        best_index, best_count, best_model = _best_run(
            self.estimator, candidates, train_curves, n_runs, X, y, train_idx, val_idx, counts,
            labels, rng, secure=self.secure, n_jobs=self.n_jobs, picks=picks)
        noisy_n_val = int(counts.randomise(val_idx.size, random_state=rng))
        self.best_index_ = best_index
        self.best_params_ = dict(candidates[self.best_index_])
        self.best_score_ = float(min(1.0, max(0.0, best_count / max(noisy_n_val, 1))))
        self.cv_results_ = {
            "params": [self.best_params_],
            "mean_test_score": np.array([self.best_score_]),
            "rank_test_score": np.array([1], dtype=np.int32),
        }
        if self.refit:
            # the best candidate with the refit's epsilon (the runs' own, or with a total
            # epsilon the refit's share): the released model's parameters
            self.best_params_ = dict(refit_candidates[self.best_index_])
            self.cv_results_["params"] = [self.best_params_]
            with _quiet():
                self.best_estimator_ = _private_fit(
                    _with_params(self.estimator, self.best_params_), X, y, rng,
                    refit_curve, self.best_params_, labels, os.getpid())
        else:
            self.best_estimator_ = best_model
        self.classes_ = self.best_estimator_.classes_
        if hasattr(self.best_estimator_, "n_features_in_"):
            self.n_features_in_ = self.best_estimator_.n_features_in_
        if hasattr(self.best_estimator_, "feature_names_in_"):
            self.feature_names_in_ = self.best_estimator_.feature_names_in_

    # -- delegation -----------------------------------------------------------------
    def _released(self):
        check_is_fitted(self, "candidates_")
        if self.best_estimator_ is None:
            raise ValueError("The search output no candidate (Poisson K = 0): there is no "
                             "model to predict with.")
        return self.best_estimator_

    def predict(self, X: ArrayLike) -> NDArray:
        return self._released().predict(X)

    @available_if(lambda self: _released_has(self, "predict_proba"))
    def predict_proba(self, X: ArrayLike) -> NDArray:
        return self._released().predict_proba(X)

    @available_if(lambda self: _released_has(self, "decision_function"))
    def decision_function(self, X: ArrayLike) -> NDArray:
        return self._released().decision_function(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.input_tags = inner.input_tags
        tags.non_deterministic = True
        # Private training and noisy scores on small data score poorly by design.
        tags.classifier_tags.poor_score = True
        return tags


_PRIVACY_DOC = """
    **What is private.** The whole search is one differentially private
    mechanism, charged to ``budget`` once, before any training:

    - every *run* draws one candidate uniformly at random (independently of the
      data), trains it on the training part with the candidate's own private
      estimator, and scores it on the validation part with a noisy count of
      correct predictions (one row changes the count by at most 1 under
      add/remove): discrete Laplace noise, ``score_epsilon``-DP, or with a
      total ``epsilon`` and no ``score_epsilon`` discrete Gaussian noise of
      ρ-zCDP with ρ + 2√(ρ log(1/δ)) = ε/10, so one count alone is
      (ε/10, δ)-DP (Canonne, Kamath & Steinke 2020, Thm. 4; Bun & Steinke
      2016, Prop. 1.3);
    - the number of runs K is random (``n_runs_distribution`` with mean
      ``n_runs_mean``) and secret; only the best run is released: its
      parameters, its noisy score and its model. The cost is that of
      Papernot & Steinke 2022, Thms. 2 and 6
      (:func:`skdp.accounting.private_selection_rdp`), for a run as costly as
      the worst candidate at each order;
    - ``best_score_`` is the best noisy count divided by a noisy count of the
      validation rows (one more release, with the same noise);
    - ``refit=True`` trains the chosen candidate again on all the data: one
      more private fit, charged (for the worst candidate) in the same charge.
      ``refit=False`` keeps the best run's model, trained on the training
      part only, and costs nothing more.

    The split is drawn once: each row is a validation row with probability
    ``validation_fraction``. The candidates' own ``budget`` parameters are
    ignored (replaced inside the search: runs never write the ledger, so the
    search runs alike on every joblib backend), and their ``random_state``
    parameters are replaced by fresh seeds from the search's generator, so
    that runs are independent as the analysis requires.

    Not released, on purpose: K, the scores and models of the other runs, and
    which run won. ``cv_results_`` holds the released candidate only. The
    running time grows with K and so reveals something about it; do not
    publish it. Scoring is accuracy (classifiers only).

    **Which steps a candidate may have.** Every step must be an skdp
    estimator, or a transformer that learns nothing from the data:
    ``FunctionTransformer`` (with ``check_inverse=False`` when it has an
    ``inverse_func``), ``OneHotEncoder`` with explicit ``categories`` lists
    and no ``min_frequency`` / ``max_categories``, ``"passthrough"``,
    ``"drop"``, and ``Pipeline`` / ``ColumnTransformer`` made of these (so
    :func:`skdp.datasets.adult_preprocessor` is allowed). Anything else, such
    as scikit-learn's ``StandardScaler``, would put exact statistics of the
    data in the released model: ``fit`` refuses it with a ``ValueError``
    before charging. Behind an skdp step, whose output exists only after the
    charge, a step that may refuse a value is refused too: a
    ``OneHotEncoder`` with ``handle_unknown="error"`` (pass ``"ignore"``) or
    a ``FunctionTransformer`` with a ``func`` (apply it to the input, before
    the skdp steps). So is a sparse ``OneHotEncoder`` that ignores unknown
    categories or drops one, inside a ``ColumnTransformer`` that stacks
    sparse below a density (0 < ``sparse_threshold`` < 1, as by default):
    the rows decide there whether the output is sparse (pass
    ``sparse_output=False``). An estimator given as a value in the
    parameter grid is cloned for every run, as in scikit-learn's searches.

    **Order of work.** ``fit`` validates the parameters, the candidates'
    steps and the shapes. It then lets every step of every candidate refuse
    the real input as it would in a run: public steps fit on it (so a value
    outside an encoder's ``categories`` is refused), skdp steps run their own
    validation and stop at their charge (so a string where a number is
    needed, or NaN where it is refused, is refused), and labels are checked
    against ``classes``. It finds each candidate's curve by fitting it on
    *placeholders* (zeros, or missing values in non-numeric columns, with
    the shapes, dtypes and column names of the data, and labels cycling
    through ``classes`` or the label set of ``y``), stopping each final
    estimator at its charge; it charges the budget once; only then does it
    compute anything from the data. Bad input is refused before the charge
    and costs nothing. If a run fails after the charge all the same, ``fit``
    raises a ``RuntimeError`` that says so, without the run's error (which
    could show a value of the data); the charge is kept, nothing is
    released.

    By contrast, scikit-learn's ``GridSearchCV`` over skdp estimators charges
    every fit, but its validation scores and its choice of the best candidate
    are computed on private data without noise: they are **not**
    differentially private, and charging every fit does not change that.
"""

_PARAMS_DOC = """
    epsilon : float > 0, "auto" or None, default="auto"
        The total ε of the whole search (its runs, their scores, the
        selection and the refit), at ``delta``. The search then sets the
        ``epsilon`` of every private step of each candidate itself: the
        steps' own ``epsilon`` values say how a run's share is split among
        them, and one factor scales them all. With ``refit=True`` the refit,
        the model released, is scaled first to cost three quarters of
        ``epsilon`` alone, where the scores and the selection leave room
        beside it for runs of a tenth of the refit's ε; else the first of
        0.6, 0.5, 0.4, 0.3 that does, raised by bisection towards the share
        above it (to 0.01); at last the refit is scaled with the runs. The
        runs then get the largest
        values whose whole search costs at most ``epsilon``. A search at a
        total ε so keeps most of it for the model it releases, and loses
        little to an untuned estimator at the same ε where the candidates
        differ little. ``best_params_`` shows the refit's values.
        ``"auto"`` (the default): the total is the estimator's own ε, what
        fitting it once costs at ``delta`` as its steps' ``epsilon`` say (the
        largest over the candidates, on the data's size), so that the search
        spends no more than one fit of its estimator would (its released
        model, the refit, then gets about three quarters of that); the grid
        may then not set an ``epsilon`` of a step (pass ``epsilon=None`` to
        search over them). ``inf``: not private (every private step at
        ``epsilon=inf``, each candidate run once on the training part and
        scored by its exact count of correct predictions, the best refitted;
        ``score_epsilon`` is not used): a hold-out search of the non-private
        estimators; a budget with a finite cap refuses it before any run.
        ``None``: each run spends what its candidate's parameters say, and
        the total follows. Whatever the value, :func:`skdp.privacy_cost`
        reads the total before the fit.
    score_epsilon : float > 0, default=None
        ε of each run's noisy validation count, with discrete Laplace noise
        (pure DP). ``None``: with a total ``epsilon`` (and δ > 0), discrete
        Gaussian noise such that one count alone is (``epsilon``/10, δ)-DP
        (in the composition a pure ε/10-DP count costs some 2·log(1/δ) times
        as much, many times a run's training at a small total ε); without a
        total ``epsilon``, 0.1.
    n_runs_mean : float, default=10
        E[K], the mean number of runs: > 1 for the truncated laws, >= 1 for
        Poisson (Papernot & Steinke 2022, Thm. 6 does not hold below 1).
    n_runs_distribution : {"logarithmic", "geometric", "truncated_negative_binomial", \
"poisson"}, default="logarithmic"
        The law of K: logarithmic (η = 0), geometric (η = 1) or a truncated
        negative binomial with shape ``eta`` (Papernot & Steinke 2022,
        Thm. 2), or Poisson (Thm. 6). Smaller η costs less privacy for the
        same mean and has a heavier tail. With the Poisson law K = 0 happens
        with probability exp(-n_runs_mean): the search then outputs no
        candidate (the ⊥ of Thm. 6): it warns with
        :class:`NoCandidateWarning`, ``best_estimator_`` and ``best_params_``
        are None, ``predict`` raises, and the charge (which covers this
        outcome) is kept. The truncated laws always run at least once.
    eta : float > -1, default=None
        η of the truncated negative binomial law; only with that law.
    validation_fraction : float in (0, 1), default=0.2
        Probability that a row is used for scoring rather than training.
    refit : bool, default=True
        Train the chosen candidate again on all the data (one more private
        fit, charged up front) rather than keeping the best run's model.
    budget : PrivacyBudget or None, default=None
        The budget charged once for the whole search. ``None``: the default
        budget of :func:`skdp.config_context`, if one is in force.
    delta : float in [0, 1), default=None
        δ at which ``epsilon_spent_`` is reported; ``None`` is the budget's δ
        (or the default budget's), or 1e-5 without a budget.
    n_jobs : int, default=None
        Runs in parallel through joblib (any backend).
    random_state : int, numpy Generator or None, default=None
        Seeds the split, the candidates, K, the runs and the noise. ``None``
        draws from the operating system; use it for a release, since a known
        seed makes the noise reproducible. The runs and the refit get fresh
        seeds drawn from it, which the released model does not keep: its
        ``random_state`` is the one the estimator was given.
    secure : bool, default=False
        Draw every random number of the search (the split, K, the runs'
        picks) and of its runs from the operating system's CSPRNG;
        ``random_state`` must then be None, and every step that has
        ``secure`` must have ``secure=True`` (checked before the charge); the
        runs get no seed. See :ref:`secure_randomness`.
    verbose : int, default=0
        Print progress when > 0: the planning (public: with a total ε, each
        share of it tried for the refit and the runs' scale, with the time),
        the charge with the time so far, and the released candidate with its
        noisy score; > 1 also each candidate as its cost is planned (once per
        ε tried). Nothing tells how many
        runs were drawn (K is secret): no time is printed after the runs
        start, and the estimator's own ``verbose`` is set to 0 in every run.

    Attributes
    ----------
    best_estimator_ : estimator
        The released model (refit on all the data, or the best run's model).
    best_params_ : dict
        The released candidate.
    best_index_ : int
        Its position in ``candidates_``.
    best_score_ : float
        Its noisy validation accuracy.
    candidates_ : list of dict
        The candidates (chosen without looking at the data).
    cv_results_ : dict
        ``params``, ``mean_test_score`` (noisy) and ``rank_test_score`` of
        the released candidate only.
    classes_ : ndarray
    privacy_curve_ : RDPCurve
        The curve charged for the whole search.
    epsilon_spent_, delta_spent_ : float
        That curve as (ε, δ)-DP at ``delta``.
"""


class DPGridSearchCV(_BaseDPSearch):
    __doc__ = (
        """Private selection over a grid of hyper-parameters.

    The whole search is one differentially private mechanism, charged to the
    budget once before any training: a random, secret number of runs, each a
    random candidate trained privately and scored by a noisy count, of which
    only the best is released (Papernot & Steinke 2022). Notes say what is
    private, which candidates are allowed and the order of work.

    Parameters
    ----------
    estimator : skdp classifier or Pipeline ending in one
        Every step that learns from the data must be an skdp estimator.
    param_grid : dict or list of dicts
        As in :class:`sklearn.model_selection.GridSearchCV`.
"""
        + _PARAMS_DOC
        + """
    Notes
    -----
    Each run picks one point of ``param_grid`` uniformly at random.
"""
        + _PRIVACY_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> from skdp import PrivacyBudget, privacy_cost
    >>> from skdp.model_selection import DPGridSearchCV
    >>> from skdp.naive_bayes import DPGaussianNB
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, size=2000)
    >>> X = rng.normal(size=(2000, 2)) + 2 * y[:, None]
    >>> budget = PrivacyBudget(epsilon=3.0, delta=1e-5)
    >>> nb = DPGaussianNB(bounds=([-3, -3], [5, 5]), classes=[0, 1], epsilon=1.0)
    >>> search = DPGridSearchCV(nb, {"var_smoothing": [1e-9, 1e-3]}, budget=budget,
    ...                         random_state=0)
    >>> round(privacy_cost(search, X, y).epsilon, 3)  # read before the fit: nb's own epsilon
    1.0
    >>> search = search.fit(X, y)
    >>> len(budget), round(budget.spent()[0], 3)  # one charge for the whole search
    (1, 1.0)
    >>> round(search.best_params_["epsilon"], 2)  # the released model's share of it
    0.75
    >>> bool(search.score(X, y) > 0.8)
    True

    With ``epsilon=None`` each run spends its candidate's own ``epsilon``
    (here searched over) and the total follows:

    >>> search = DPGridSearchCV(nb, {"epsilon": [0.1, 0.5]}, epsilon=None, score_epsilon=0.2)
    >>> round(privacy_cost(search, X, y).epsilon, 2)  # the runs, the selection and the refit
    2.05
    """
    )

    def __init__(
        self,
        estimator: BaseEstimator,
        param_grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]],
        *,
        epsilon: float | str | None = "auto",
        score_epsilon: float | None = None,
        n_runs_mean: float = 10.0,
        n_runs_distribution: str = "logarithmic",
        eta: float | None = None,
        validation_fraction: float = 0.2,
        refit: bool = True,
        budget: PrivacyBudget | None = None,
        delta: float | None = None,
        n_jobs: int | None = None,
        random_state: RandomStateLike = None,
        secure: bool = False,
        verbose: int = 0,
    ) -> None:
        super().__init__(
            estimator,
            epsilon=epsilon,
            score_epsilon=score_epsilon,
            n_runs_mean=n_runs_mean,
            n_runs_distribution=n_runs_distribution,
            eta=eta,
            validation_fraction=validation_fraction,
            refit=refit,
            budget=budget,
            delta=delta,
            n_jobs=n_jobs,
            random_state=random_state,
            secure=secure,
            verbose=verbose,
        )
        self.param_grid = param_grid

    def _candidates(self, rng):
        return list(ParameterGrid(self.param_grid))


class DPRandomizedSearchCV(_BaseDPSearch):
    __doc__ = (
        """Private selection over ``n_iter`` random hyper-parameters.

    ``n_iter`` candidates are drawn from ``param_distributions``
    (as by :class:`sklearn.model_selection.ParameterSampler`) before the
    search looks at the data; each run then picks one of them uniformly at
    random, so that the search's curve covers the worst of them.

    The whole search is one differentially private mechanism, charged to the
    budget once before any training: a random, secret number of runs, each a
    random candidate trained privately and scored by a noisy count, of which
    only the best is released (Papernot & Steinke 2022). Notes say what is
    private, which candidates are allowed and the order of work.

    Parameters
    ----------
    estimator : skdp classifier or Pipeline ending in one
    param_distributions : dict or list of dicts
        As in :class:`sklearn.model_selection.RandomizedSearchCV`.
    n_iter : int, default=None
        Number of candidates drawn from ``param_distributions``, as in
        :class:`sklearn.model_selection.RandomizedSearchCV` (it is not a number
        of runs: the search runs a random, secret number of times, see
        ``n_runs_mean``). None draws 10.
    n_candidates : int, default=None
        The same as ``n_iter``, under skdp's earlier name; give at most one of
        the two (both, with different values, is refused before any charge).
"""
        + _PARAMS_DOC
        + """
    Notes
    -----"""
        + _PRIVACY_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import loguniform
    >>> from skdp.model_selection import DPRandomizedSearchCV
    >>> from skdp.naive_bayes import DPGaussianNB
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, size=2000)
    >>> X = rng.normal(size=(2000, 2)) + 2 * y[:, None]
    >>> nb = DPGaussianNB(bounds=([-3, -3], [5, 5]), classes=[0, 1])
    >>> search = DPRandomizedSearchCV(nb, {"epsilon": loguniform(0.05, 1.0)}, n_iter=5,
    ...                               epsilon=None, random_state=0).fit(X, y)
    >>> len(search.candidates_), len(search.cv_results_["params"])
    (5, 1)
    >>> round(search.epsilon_spent_, 2) < 5 * 1.2
    True
    """
    )

    def __init__(
        self,
        estimator: BaseEstimator,
        param_distributions: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        n_iter: int | None = None,
        n_candidates: int | None = None,
        epsilon: float | str | None = "auto",
        score_epsilon: float | None = None,
        n_runs_mean: float = 10.0,
        n_runs_distribution: str = "logarithmic",
        eta: float | None = None,
        validation_fraction: float = 0.2,
        refit: bool = True,
        budget: PrivacyBudget | None = None,
        delta: float | None = None,
        n_jobs: int | None = None,
        random_state: RandomStateLike = None,
        secure: bool = False,
        verbose: int = 0,
    ) -> None:
        super().__init__(
            estimator,
            epsilon=epsilon,
            score_epsilon=score_epsilon,
            n_runs_mean=n_runs_mean,
            n_runs_distribution=n_runs_distribution,
            eta=eta,
            validation_fraction=validation_fraction,
            refit=refit,
            budget=budget,
            delta=delta,
            n_jobs=n_jobs,
            random_state=random_state,
            secure=secure,
            verbose=verbose,
        )
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.n_candidates = n_candidates

    def _n_iter(self):
        """The number of candidates: ``n_iter`` or its other name ``n_candidates`` (default 10)."""
        given = {name: value for name, value in (("n_iter", self.n_iter),
                                                 ("n_candidates", self.n_candidates))
                 if value is not None}
        for name, n in given.items():
            if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {n!r}.")
        if len(given) == 2 and self.n_iter != self.n_candidates:
            raise ValueError("n_iter and n_candidates are two names of the number of candidates; "
                             f"give one (got n_iter={self.n_iter!r}, "
                             f"n_candidates={self.n_candidates!r}).")
        return int(next(iter(given.values()), 10))

    def _candidates(self, rng):
        n = self._n_iter()
        seed = int(rng.integers(2**31 - 1))
        return list(ParameterSampler(self.param_distributions, n, random_state=seed))
