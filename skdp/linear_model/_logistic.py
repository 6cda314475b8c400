"""DPLogisticRegression: logistic regression that needs no tuning, by noisy full-batch gradient descent."""

from __future__ import annotations

import math
import numbers
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .._base import DPEstimatorMixin
from ..accounting import RDPCurve, gaussian_rdp
from ..utils import check_bounds, check_delta, check_epsilon
from ..utils._rows import check_lazy_X, is_lazy, lazy_rows, row_sums
from ..utils._validation import check_classes, validate_data
from ._row_norm import (
    RowClipper,
    apply_clip_factors,
    row_blocks,
    row_norm_scales,
    box_centre_and_norm,
    calibrate_gaussian_after,
    check_data_norm,
    estimate_data_norm,
    norm_estimate_curve,
    wide_rows,
)

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPLogisticRegression"]

# Heavy-ball momentum and step size (as a multiple of 1/L, L the public bound on
# the smoothness of the objective). Post-processing: they cost no privacy. Fixed
# once, measured on UCI Adult (see docs/benchmarks.md, "Adult accuracy").
_MOMENTUM = 0.9
_STEP = 2.0


# Share of the Gaussian part's precision 1/σ² given to the noisy count n̂
# (the rest goes to the gradients), and the share of ε given to the private
# estimate of the row norm when neither ``data_norm`` nor ``bounds_X`` is public.
_COUNT_SHARE = 0.05
_NORM_EPSILON_SHARE = 0.2
# The schedule: T = n̂ / (_ROWS_PER_STEP · σ_g) steps, between _MIN_STEPS and
# _MAX_STEPS; the model is the mean of the iterates of the last half.
_ROWS_PER_STEP = 28.0
_MIN_STEPS = 10
_MAX_STEPS = 500
_AVG_FROM = 0.5
# Preconditioned schedule, where noise is cheap: from n̂/(28 σ_g) ≥ 250 (where the
# schedule above would take 250+ steps) and at most 1,000 columns with the intercept (the
# Gram matrix's n·p² pass then costs less than the 250+ passes it replaces), a share of
# the gradients' precision releases the noisy Gram matrix, and 14 preconditioned heavy-ball
# steps follow (step 2, momentum 0.2; chosen by the distance to scikit-learn's objective,
# where they came as close as 20 plain preconditioned steps of 2, and by the accuracy at
# finite epsilon: benchmarks/bench_logistic_schedule.py). Measured on the suite's tables (docs/benchmarks.md, "DPLogisticRegression at
# scale"): at or above the plain schedule's accuracy wherever n̂/(28 σ_g) ≥ 250.
_PRECONDITION_FROM = 250.0
_MAX_GRAM_WIDTH = 1000
_PRECONDITIONED_STEPS = 14
_GRAM_SHARE = 0.1
_PRECONDITIONED_STEP = 2.0
_PRECONDITIONED_MOMENTUM = 0.2
# The noisy Gram's eigenvalues are raised by (2√p + 3)·(its noise std): the spectral norm
# of a p×p symmetric Gaussian matrix is about 2√p std, with Gaussian tails beyond
# (Bandeira & van Handel 2016, Cor. 3.6), so the metric bounds the true Gram from above
# with high probability. Post-processing: only the speed of the descent depends on it.
_SPECTRAL_TAIL = 3.0


def _auto_steps(n_hat, sigma_grad):
    """Number of noisy gradient steps T, from the noisy count n̂ and the gradients' σ_g.

    n̂/σ_g is the data's size in units of the noise (it grows like ε·n):
    few steps when the noise dominates, more when it is cheap. Any T costs
    the same (each step's multiplier is σ_g·√T), so T may be chosen from the
    released n̂. Measured on Adult: see the class docstring.
    """
    return int(min(_MAX_STEPS, max(_MIN_STEPS, round(n_hat / (_ROWS_PER_STEP * sigma_grad)))))


def _preconditioned(n_hat, sigma_grad, width):
    """Whether the fit takes the preconditioned schedule: from the released n̂ and public values only."""
    return n_hat / (_ROWS_PER_STEP * sigma_grad) >= _PRECONDITION_FROM and width <= _MAX_GRAM_WIDTH


class DPLogisticRegression(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Differentially private L2-regularised logistic regression, with no tuning.

    It runs noisy full-batch gradient descent (DP-GD) on scikit-learn's
    objective, with a schedule set from public parameters and a noisy row
    count, so there is nothing to tune. A fit charges the budget once, before
    reading the data: (ε, δ) in all, for Gaussian noise on the count and the
    gradients, plus a private estimate of the row norm when neither
    ``data_norm`` nor ``bounds_X`` is given. Notes describe the algorithm, its
    privacy analysis and its measured accuracy.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
        Privacy parameter ε; ``inf`` gives the non-private model.
    delta : float in (0, 1), default=1e-5
        Privacy parameter δ (Gaussian noise needs δ > 0 for finite ε).
    C : float > 0, default=1.0
        Inverse regularisation strength, as in scikit-learn.
    data_norm : float > 0 or None, default=None
        Public bound on the L2 norm of a row of X (after the box clip). Rows
        with a larger norm are scaled down to it, at fit and at predict; it
        is never read from the data. With :func:`skdp.datasets.adult_preprocessor`
        use ``adult_schema()["max_row_norm"]`` (√14). None: the box's bound
        if ``bounds_X`` is given, else a private estimate (see Notes).
    bounds_X : tuple (lower, upper) or None, default=None
        Public bounds on the features (scalars or arrays of shape
        (n_features,)); rows are clipped to them at fit and at predict.
    fit_intercept : bool, default=True
        Learn an intercept (not penalised). It counts as a feature of value 1
        in the sensitivity.
    classes : array-like, default=None
        The public list of class labels. If None they are read from y, which
        reveals which labels occur, with a :class:`~skdp.PrivacyLeakWarning`;
        labels of y not in ``classes`` raise an error.
    max_iter : int >= 1 or "auto", default="auto"
        Number of noisy gradient steps T; "auto" picks it from the noisy
        count (see Notes). Any T costs the same. Changing it is tuning: it
        costs privacy if chosen by looking at results.
    budget : PrivacyBudget, default=None
        Shared budget charged once per fit, before the data's values are read.
    random_state : None, int or numpy Generator, default=None
        Seed of the noise; None draws OS entropy.
    secure : bool, default=False
        Draw every random number of the fit from the operating system's
        CSPRNG instead of numpy's generator; ``random_state`` must then be
        None. See :ref:`secure_randomness`.
    verbose : int, default=0
        When > 0, print the charge (ε and δ spent, from the parameters), the
        number of gradient steps (``n_iter_``) and about ten lines of
        progress with the elapsed time; nothing computed on the training
        rows without noise.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_iter_ : int
        Gradient steps taken (T); for ``epsilon=inf`` the L-BFGS iterations.
    noise_multiplier_ : float
        σ_g√T, the noise std over the L2 sensitivity of each gradient
        release (0 for ε = ∞).
    sensitivity_ : float
        Δ, the L2 sensitivity of one full-batch gradient sum.
    data_norm_ : float
        D, the norm to which rows (centred at the box's midpoint when it
        comes from ``bounds_X``) are scaled at fit and predict; ``inf`` when
        no row is scaled.
    privacy_curve_, epsilon_spent_, delta_spent_
        What the fit charged (see :class:`~skdp._base.DPEstimatorMixin`).
    n_features_in_, feature_names_in_

    Notes
    -----
    Tuning a private model costs privacy (every trial is a release), so this
    estimator fixes its algorithm and schedule from public parameters and a
    noisy count. It runs **noisy full-batch gradient descent** (DP-GD;
    Bassily, Smith & Thakurta 2014, Alg. 1 with batch = n; analysed with RDP
    as in Abadi et al. 2016):

    1. **One row map, at fit and at predict.** Rows are clipped to the public
       box ``bounds_X`` (if given), then their offset from a centre c is
       scaled down to L2 norm at most D (:class:`~skdp.linear_model._row_norm.RowClipper`).
       D is ``data_norm`` if given (c = 0); else, with ``bounds_X``, the
       box's own bound (c = the box's midpoint with an intercept, which
       absorbs the shift; D = ‖(upper − lower)/2‖₂, so no row in the box is
       scaled); else a private estimate (below). ``predict``,
       ``decision_function``, ``predict_proba`` and ``score`` apply the same
       map, so the model never meets rows unlike those it was fitted on; D is
       ``data_norm_``. An intercept column 1 is appended, so every row's
       gradient of the log-loss has norm at most Δ = √(D² + 1) (binary:
       ``|σ(z) − y| ≤ 1``; multinomial: ‖p − e_y‖₂ ≤ √2, so Δ = √2·√(D² + 1)).
    2. **Private norm** (only when neither ``data_norm`` nor ``bounds_X`` is
       given): a noisy histogram of the row norms over public log-scale
       bins (4 per factor 2, from 2^-20 to 2^40; exact discrete Gaussian
       noise costing (ε_n²/8)-zCDP at ε_n = ε/5, what a private quantile at
       ε_n would cost, and 2-zCDP from ε_n = 4 on), and D is where the bins
       that stand out of the noise
       reach 75% of their noisy mass
       (:func:`~skdp.linear_model._row_norm.estimate_data_norm`; 2^-20,
       an intercept-only model, when no bin stands out).
    3. A noisy row count n̂ = n + N(0, σ_c²) (sensitivity 1) replaces the
       private n in the mean loss and the penalty, and sets the schedule
       from r = n̂/(28 σ_g), the data's size in units of the noise.
    4. Where r < 250 (or the design has over 1,000 columns): T = r steps,
       between 10 and 500 (``max_iter="auto"``), of heavy-ball gradient
       descent (momentum 0.9, step 2/L with L = Δ²/4 + 1/(C n̂) the
       smoothness bound, from public and released values) on
       ``mean log-loss + ||w||² / (2 C n̂)`` (the objective of scikit-learn's
       ``LogisticRegression`` divided by C·n), each on the exact full-batch
       gradient sum plus N(0, (σ_g√T·Δ)² I).
    5. Where r ≥ 250 and the design has at most 1,000 columns, noise is
       cheap and plain steps are slow on ill-conditioned tables, so the fit
       is **preconditioned**: 10% of the gradients' precision releases the
       Gram matrix Σ x̃x̃ᵀ with Gaussian noise (Analyze Gauss, Dwork, Talwar,
       Thakurta & Zhang 2014; sensitivity ‖x̃‖² ≤ D² + 1), from which a noisy
       upper bound B on the Hessian follows (Böhning 1992's bound on the
       log-loss's curvature, raised by the noise's spectral margin); then
       T = 14 heavy-ball steps v ← 0.2·v + B⁻¹g̃, w ← w − 2v (the
       quadratic lower-bound algorithm of Böhning & Lindsay 1988, with
       momentum), each g̃ with noise
       N(0, (σ_s√T·Δ)² I), σ_s = σ_g/√0.9.

       In both schedules the model is the mean of the iterates of the last
       T/2 steps (post-processing).

    **Privacy.** The Gaussian part has one noise multiplier σ, the smallest
    that meets (ε, δ) together with the norm estimate's curve; it is split
    between the count (1/σ_c² = 0.05/σ²) and the gradients
    (1/σ_g² = 0.95/σ²). The T gradient releases at multiplier σ_g√T compose
    to T·α/(2σ_g²T) = α/(2σ_g²) (Mironov 2017, Prop. 7 and Prop. 1), the
    curve of one Gaussian at σ_g whatever T; so T may be chosen from the
    released n̂ (adaptive composition, Mironov 2017, Prop. 1). The same holds
    for the preconditioned schedule's split, chosen from n̂: the Gram release
    at σ_G = σ_g/√0.1 and the steps at σ_s = σ_g/√0.9 compose to
    α/(2σ_G²) + α/(2σ_s²) = α/(2σ_g²), for every n̂; so the
    charged curve ``[norm curve +] gaussian_rdp(σ_c) + gaussian_rdp(σ_g)``
    is computed from ε, δ and the parameters alone, before the charge. The
    exact n never decides the cost.

    **Schedule.** n̂/σ_g grows like ε·n: few steps when noise dominates (an
    early, averaged model is close to the class balance plus the mean
    gradient, which is how the model keeps above the majority class at small
    ε·n), more when noise is cheap, and from r = 250 the 14 preconditioned
    steps, which reach scikit-learn's objective closer than 500 plain steps
    on the benchmark suite's tables and cost one pass over X each (see
    docs/benchmarks.md, "DPLogisticRegression at scale"). Measured (benchmarks/bench_linear_defaults.py and
    bench_adult_accuracy.py, δ = 1e-5): on UCI Adult with the public norm
    √14, 0.83 accuracy at ε = 0.1 and 0.846 at ε = 1 (scikit-learn 0.848);
    on breast_cancer (398 training rows, bounds from its documentation)
    about 0.94 at ε = 5 against a majority class of 0.63.

    Why DP-GD: full-batch noisy gradient descent needs no sampling analysis
    and no extra regularisation, and with Gaussian noise its T-fold
    composition is tight under RDP. Iyengar et al. 2019 ("Towards practical
    differentially private convex optimization", IEEE S&P) found that
    well-configured private gradient methods match or beat objective and
    output perturbation (Chaudhuri et al. 2011; Kifer et al. 2012) on
    logistic regression; objective perturbation's guarantee also needs an
    exact minimiser and a regulariser ≥ 2β/ε (Kifer et al. 2012, Thm. 1),
    which at ε = 0.1 dominates C.

    Multiclass targets train one multinomial (softmax) model in one private
    run. ``epsilon=inf`` adds no noise, uses the true n, and minimises the
    same objective exactly by L-BFGS, like scikit-learn's
    ``LogisticRegression``; it clips only to a public ``bounds_X`` or
    ``data_norm`` if one is given (no norm is estimated).

    **Cost.** X is used as given (float64, or float32 read exactly as
    float64), never copied: the row map is kept as one factor per row, and
    each gradient step reads X once, by blocks of 4096 rows. A fit's memory
    beyond X and y is O(n + d²) for two classes (O(n·K + d²) for K), and each
    of its T steps is one pass over X; the preconditioned schedule adds one
    pass for the Gram matrix (measured against scikit-learn in
    docs/benchmarks.md, "DPLogisticRegression at scale").

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model import DPLogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 3)) / np.sqrt(3)
    >>> y = (X @ [3.0, -3.0, 1.0] > 0).astype(int)
    >>> clf = DPLogisticRegression(epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1],
    ...                            random_state=0).fit(X, y)
    >>> round(clf.epsilon_spent_, 3), clf.n_iter_
    (1.0, 47)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        C: float = 1.0,
        data_norm: float | None = None,
        bounds_X: ArrayLike | None = None,
        fit_intercept: bool = True,
        classes: ArrayLike | None = None,
        max_iter: int | str = "auto",
        budget: PrivacyBudget | None = None,
        random_state: RandomStateLike = None,
        secure: bool = False,
        verbose: int = 0,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.C = C
        self.data_norm = data_norm
        self.bounds_X = bounds_X
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.max_iter = max_iter
        self.budget = budget
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags

    # -- validation ---------------------------------------------------------
    def _check_params(self, n_features):
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        if epsilon < math.inf and delta == 0.0:
            raise ValueError("delta must be > 0 for finite epsilon: Gaussian noise never gives pure DP.")
        if isinstance(self.C, (bool, np.bool_)) or not isinstance(self.C, numbers.Real):
            raise TypeError(f"C must be a real number; got {type(self.C).__name__}.")
        if not (0 < float(self.C) < math.inf):
            raise ValueError(f"C must be finite and > 0; got {self.C!r}.")
        data_norm = None if self.data_norm is None else check_data_norm(self.data_norm)
        bounds = None if self.bounds_X is None else check_bounds(self.bounds_X, n_features,
                                                                  name="bounds_X")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be a bool; got {self.fit_intercept!r}.")
        if self.max_iter == "auto":
            steps = None
        elif isinstance(self.max_iter, numbers.Integral) and not isinstance(self.max_iter, bool):
            if self.max_iter < 1:
                raise ValueError(f"max_iter must be >= 1 or 'auto'; got {self.max_iter!r}.")
            steps = int(self.max_iter)
        else:
            raise ValueError(f"max_iter must be an int >= 1 or 'auto'; got {self.max_iter!r}.")
        return epsilon, delta, float(self.C), data_norm, bounds, steps

    def _row_clipper(self, bounds, data_norm, private):
        """The public part of the row map, and whether the norm must be estimated privately.

        ``data_norm`` given: rows (clipped to ``bounds_X`` if given) are
        scaled to it around 0. Only ``bounds_X``: rows are clipped to the box
        and, with an intercept, centred at its midpoint; the norm bound is the
        box's (:func:`~skdp.linear_model._row_norm.box_centre_and_norm`).
        Neither: no clipping without privacy; with privacy the norm is
        estimated (returned as ``True``).
        """
        lower, upper = (None, None) if bounds is None else bounds
        if data_norm is not None:
            return RowClipper(lower=lower, upper=upper, data_norm=data_norm), False
        if bounds is not None:
            centre, norm = box_centre_and_norm(lower, upper, centre=bool(self.fit_intercept))
            return RowClipper(lower=lower, upper=upper, centre=centre, data_norm=norm), False
        return RowClipper(), private

    # -- fit ----------------------------------------------------------------
    def fit(self, X: ArrayLike, y: ArrayLike) -> DPLogisticRegression:
        """Fit the model; charges ``budget`` once, before reading the data's values.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        # 1. validate parameters and input (shapes, dtypes, finiteness).
        # float64 and float32 are used as given, never copied (blocks of rows are
        # converted exactly to float64 when read): the fit's memory is X plus O(n + d).
        lazy = is_lazy(X)  # a dask array or DataFrame: sums on the workers (skdp.utils._rows)
        if lazy:
            X, y, labels = check_lazy_X(self, X, y, y_kind="labels")
        else:
            X, y = validate_data(self, X, y, accept_sparse=False,
                                 dtype=[np.float64, np.float32], y_numeric=False)
            labels = y
        epsilon, delta, C, data_norm, bounds, steps = self._check_params(X.shape[1])
        private = epsilon != math.inf
        classes = check_classes(labels, self.classes, private=private)
        n_classes = classes.size
        binary = n_classes == 2
        intercept = 1.0 if self.fit_intercept else 0.0
        clipper, estimate_norm = self._row_clipper(bounds, data_norm, private)
        if private and not estimate_norm and not clipper.data_norm**2 + intercept**2 > 0:
            raise ValueError(
                f"bounds_X / data_norm bound the rows' norm by {clipper.data_norm:g} and there is "
                "no intercept: the gradients' sensitivity is 0 or its square underflows, so "
                "there is nothing to learn. Give wider bounds or fit_intercept=True."
            )

        # 2. the privacy curve, from public parameters alone (never n, never a norm).
        if not private:
            sigma_count = sigma_grad = 0.0
            curve = RDPCurve.non_private()
        else:
            norm_epsilon = _NORM_EPSILON_SHARE * epsilon if estimate_norm else None
            fixed = norm_estimate_curve(norm_epsilon) if estimate_norm else None
            # One Gaussian of multiplier σ split in two releases: 1/σ² = 1/σ_c² + 1/σ_g².
            sigma = calibrate_gaussian_after(fixed, epsilon, delta)
            sigma_count = sigma / math.sqrt(_COUNT_SHARE)
            sigma_grad = sigma / math.sqrt(1.0 - _COUNT_SHARE)
            # The count (sensitivity 1) and the T gradient sums, each Gaussian
            # (Mironov 2017, Prop. 7) at multiplier σ_g·√T: T·α/(2σ_g²T) = α/(2σ_g²)
            # whatever T, so T may follow from n̂ (adaptive composition, Prop. 1).
            curve = gaussian_rdp(sigma_count) + gaussian_rdp(sigma_grad)
            if fixed is not None:
                curve = fixed + curve

        rng = self._check_generator()  # a bad seed is refused before the charge
        say = self._progress(self._check_verbose())  # so is a bad verbose

        # 3. charge, once.
        self._charge_budget(curve)
        say(f"charged epsilon={self.epsilon_spent_:.4g}, delta={self.delta_spent_:.3g}")

        # 4. only now read the data's values.
        if estimate_norm:
            clipper.data_norm = estimate_data_norm(X, norm_epsilon, rng)
            say("released a bound of the rows' norm (data_norm_)")
        Xa = (_LazyDesign if lazy else _Design)(X, clipper, self.fit_intercept)
        if binary:
            Y = (y == classes[1]).astype(float)[:, None]
        else:
            Y = (y[:, None] == classes[None, :]).astype(float)
        n_out = 1 if binary else n_classes
        penalised = np.ones((Xa.shape[1], 1))
        if self.fit_intercept:
            penalised[-1] = 0.0
        # L2 norm of a row's log-loss gradient: |σ(z) − y|·‖x̃‖ (binary) or
        # ‖p − e_y‖₂·‖x̃‖ ≤ √2·‖x̃‖ (softmax), with ‖x̃‖² ≤ data_norm² + intercept².
        sensitivity = math.sqrt(clipper.data_norm**2 + intercept**2) * (1.0 if binary else math.sqrt(2.0))

        if not private:
            say("exact fit (epsilon=inf) by L-BFGS")
            W, n_iter = _exact_fit(Xa, Y, C, penalised, binary)
            step_sigma = 0.0
            say(f"done in {n_iter} iterations")
        else:
            n_hat = max(Xa.shape[0] + sigma_count * rng.standard_normal(), 1.0)
            metric = None
            if _preconditioned(n_hat, sigma_grad, Xa.shape[1]):
                # 1/σ_g² = 1/σ_G² + 1/σ_s², split after n̂: the same curve (see the docstring).
                sigma_gram = sigma_grad / math.sqrt(_GRAM_SHARE)
                sigma_steps = sigma_grad / math.sqrt(1.0 - _GRAM_SHARE)
                n_iter = _PRECONDITIONED_STEPS if steps is None else steps
                metric = _noisy_metric(Xa, C, penalised, binary, n_hat, sigma_gram,
                                       clipper.data_norm**2 + intercept**2, rng)
            else:
                sigma_steps = sigma_grad
                n_iter = _auto_steps(n_hat, sigma_grad) if steps is None else steps
            step_sigma = sigma_steps * math.sqrt(n_iter)
            # n_iter is set from the released count n̂ (it is n_iter_): public
            say(f"{n_iter} steps of noisy gradient descent"
                + (" with a noisy Gram matrix's metric" if metric is not None else ""))
            every = max(1, n_iter // 10)

            def report(t):
                if t % every == 0 or t == n_iter:
                    say(f"step {t}/{n_iter}")

            W = _noisy_gd(Xa, Y, C, penalised, binary, n_hat, n_iter, step_sigma, sensitivity, rng,
                          metric=metric, report=report)

        coef = W[:-1] if self.fit_intercept else W
        self.coef_ = np.ascontiguousarray(coef.T)
        self.intercept_ = W[-1].copy() if self.fit_intercept else np.zeros(n_out)
        if clipper.centre is not None:  # w·(x − c) + b = w·x + (b − w·c)
            self.intercept_ = self.intercept_ - self.coef_ @ clipper.centre
        self.classes_ = classes
        self.n_iter_ = n_iter
        self.noise_multiplier_ = step_sigma
        self.sensitivity_ = sensitivity
        self.data_norm_ = clipper.data_norm
        self._clipper = clipper
        return self

    # -- predict ------------------------------------------------------------
    @lazy_rows
    def decision_function(self, X: ArrayLike) -> NDArray:
        """Linear scores of the rows clipped as in ``fit``: shape (n,) for two classes, (n, n_classes) otherwise."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, accept_sparse=False, dtype=[np.float64, np.float32])
        scores = np.empty((X.shape[0], self.coef_.shape[0]))
        for rows in row_blocks(X.shape[0]):  # temporaries of one block of rows, never a copy of X
            scores[rows] = self._clipper.transform(X[rows]) @ self.coef_.T + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    @lazy_rows
    def predict_proba(self, X: ArrayLike) -> NDArray:
        """Class probabilities (sigmoid for two classes, softmax otherwise)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        return softmax(scores, axis=1)

    @lazy_rows
    def predict_log_proba(self, X: ArrayLike) -> NDArray:
        """Log of :meth:`predict_proba`."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            scores = np.column_stack([np.zeros_like(scores), scores])
        return log_softmax(scores, axis=1)

    @lazy_rows
    def predict(self, X: ArrayLike) -> NDArray:
        """The class of highest score."""
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[index]


def _residual(Z, Y, binary):
    """Gradient of the summed log-loss with respect to the scores Z."""
    return expit(Z) - Y if binary else softmax(Z, axis=1) - Y


def _block_residual(Z, Y, binary, with_loss):
    """The residuals of the scores Z of a block of rows, and their summed log-loss (or 0)."""
    loss = 0.0
    if with_loss:
        if binary:
            loss = np.sum(np.logaddexp(0.0, Z) - Y * Z)
        else:
            loss = -np.sum(Y * log_softmax(Z, axis=1))
    return _residual(Z, Y, binary), loss


def _matmul(A, B):
    """``A @ B``, by a matrix-vector product when B has one column (BLAS gemv beats gemm there)."""
    return (A @ B[:, 0])[:, None] if B.shape[1] == 1 else A @ B


class _Design:
    """The fit's design, rows ``x̃_i = (s_i·(boxed(x_i) − c), 1)``, never materialised.

    ``boxed``, the centre c and the factors s_i = min(1, D/‖boxed(x_i) − c‖)
    are the fit's :class:`~skdp.linear_model._row_norm.RowClipper`, so row i
    is ``clipper.centred(x_i)`` with the intercept's 1 appended (without an
    intercept, no 1). Only X (as given, float64 or float32), the n
    factors and which rows are too wide to multiply before their clip are
    kept (computed block by block on the first pass); :meth:`gradient` walks X by
    blocks of rows, so a pass needs temporaries of one block, and reads each block
    once for both of its matrix products.
    """

    def __init__(self, X, clipper, fit_intercept):
        self.X = X
        self.clipper = clipper
        self.intercept = bool(fit_intercept)
        # The factors s_i, and the rows too wide to multiply before their clip (norm >
        # WIDE_NORM), whose blocks are clipped first, exactly (``_block``). None without a
        # finite norm bound; else filled by the first pass over X (``_factors``), which
        # saves a pass of its own.
        clipped = math.isfinite(clipper.data_norm)
        self.scales = np.empty(X.shape[0]) if clipped else None
        self.wide = np.empty(X.shape[0], dtype=bool) if clipped else None
        self._factors_known = not clipped
        self.shape = (X.shape[0], X.shape[1] + int(self.intercept))

    def _factors(self, B, rows):
        """Fill ``scales`` and ``wide`` for one block of boxed rows, on the first pass over X."""
        if not self._factors_known:
            A = B if self.clipper.centre is None else B - self.clipper.centre
            self.scales[rows] = row_norm_scales(A, self.clipper.data_norm)
            self.wide[rows] = wide_rows(self.scales[rows], self.clipper.data_norm)

    def _blocks(self):
        """The blocks of rows of one pass over X; after a whole pass the factors are known."""
        yield from row_blocks(self.X.shape[0])
        self._factors_known = True

    def _block(self, B, rows):
        """The clipped, centred rows ``s·(B − c)`` of one block of boxed rows (read only)."""
        A = B if self.clipper.centre is None else B - self.clipper.centre
        if self.scales is None:
            return A
        return apply_clip_factors(A, self.scales[rows], self.wide[rows], self.clipper.data_norm)

    def gradient(self, W, Y, binary, with_loss=False):
        """``Σ_i x̃_i ⊗ r_i`` (shape of W) and ``Σ`` of the log-losses (0 without ``with_loss``).

        r_i is the gradient of row i's log-loss in its scores, for the
        targets ``Y`` (one column for two classes, one-hot otherwise;
        :func:`_block_residual`). With s and c:
        x̃·w = s·(boxed(x)·w − c·w) + b, and Σ r ⊗ s·(boxed(x) − c) =
        boxed(X)ᵀ(s r) − c ⊗ Σ s r, so the clipped rows are never stored.
        """
        d = self.X.shape[1]
        weights = W[:d]
        shift = None if self.clipper.centre is None else self.clipper.centre @ weights
        grad = np.zeros_like(W)
        scaled_sum = np.zeros(W.shape[1])
        loss = 0.0
        for rows in self._blocks():
            B = self.clipper.boxed(self.X[rows])
            self._factors(B, rows)
            # B·w could overflow before the clip where a row is huge: that block is clipped first
            factored = self.wide is None or not self.wide[rows].any()
            if not factored:
                B = self._block(B, rows)
            Z = _matmul(B, weights)
            if factored:
                if shift is not None:
                    Z -= shift
                if self.scales is not None:
                    Z *= self.scales[rows, None]
            if self.intercept:
                Z += W[d]
            R, block_loss = _block_residual(Z, Y[rows], binary, with_loss)
            loss += block_loss
            if self.intercept:
                grad[d] += R.sum(axis=0)
            if factored:
                if self.scales is not None:
                    R = R * self.scales[rows, None]
                scaled_sum += R.sum(axis=0)
            grad[:d] += _matmul(B.T, R)
        if shift is not None:
            grad[:d] -= np.outer(self.clipper.centre, scaled_sum)
        return grad, loss

    def gram(self):
        """``Σ_i x̃_i x̃_iᵀ``, of shape (p, p) with p = ``self.shape[1]``, by blocks of rows."""
        d = self.X.shape[1]
        G = np.zeros((self.shape[1], self.shape[1]))
        for rows in self._blocks():
            B = self.clipper.boxed(self.X[rows])
            self._factors(B, rows)
            A = self._block(B, rows)  # x̃ = s·(boxed(x) − c)
            G[:d, :d] += A.T @ A
            if self.intercept:
                G[:d, d] += A.sum(axis=0)
        if self.intercept:
            G[d, :d] = G[:d, d]
            G[d, d] = self.X.shape[0]
        return G

    def copy(self):
        """The design as a new dense array of shape ``self.shape`` (O(n·d) memory; for inspection)."""
        Xa = np.empty(self.shape)
        for rows in row_blocks(self.X.shape[0]):
            Xa[rows, : self.X.shape[1]] = self.clipper.centred(self.X[rows])
        if self.intercept:
            Xa[:, -1] = 1.0
        return Xa


class _LazyDesign:
    """The fit's design on a dask array: each pass is the sum over its chunks of rows.

    Every chunk is a :class:`_Design` of its own rows (the same clip, the
    same products), built on the worker that holds it; only the (p, k)
    gradient, the loss and the (p, p) Gram matrix come back
    (:func:`skdp.utils._rows.row_sums`).
    """

    def __init__(self, X, clipper, fit_intercept):
        self.X = X
        self.clipper = clipper
        self.intercept = bool(fit_intercept)
        self.shape = (X.shape[0], X.shape[1] + int(self.intercept))

    def gradient(self, W, Y, binary, with_loss=False):
        return row_sums(partial(_chunk_gradient, W=W, clipper=self.clipper,
                                intercept=self.intercept, binary=binary, with_loss=with_loss),
                        self.X, Y)

    def gram(self):
        return row_sums(partial(_chunk_gram, clipper=self.clipper, intercept=self.intercept),
                        self.X)


def _chunk_gradient(X, Y, *, W, clipper, intercept, binary, with_loss):
    """:meth:`_Design.gradient` of one chunk of rows (the block function of a dask pass)."""
    return _Design(X, clipper, intercept).gradient(W, Y, binary, with_loss)


def _chunk_gram(X, *, clipper, intercept):
    """:meth:`_Design.gram` of one chunk of rows (the block function of a dask pass)."""
    return _Design(X, clipper, intercept).gram()


def _noisy_metric(Xa, C, penalised, binary, n_hat, sigma, row_norm_sq, rng):
    """The preconditioner P = B⁻¹, B a noisy upper bound on the objective's Hessian.

    Releases ``Σ x̃x̃ᵀ`` plus a symmetric matrix of N(0, (σ·‖x̃‖²_max)²)
    entries on and above the diagonal: the Analyze Gauss mechanism (Dwork,
    Talwar, Thakurta & Zhang 2014, Alg. 1), whose L2 sensitivity is
    ‖x̃x̃ᵀ‖_F = ‖x̃‖² ≤ ``row_norm_sq`` = D² + intercept² (adding or removing
    a row). Everything after the release is post-processing: the noisy Gram
    over n̂, its eigenvalues floored at 0 and raised by the noise's spectral
    margin (``_SPECTRAL_TAIL``), times the log-loss's curvature bound (1/4
    binary; 1/2 for softmax, Böhning 1992, Lemma), plus the penalty's
    1/(C n̂). With an upper bound B, w ← w − B⁻¹∇ is the quadratic
    lower-bound (MM) algorithm of Böhning & Lindsay 1988, which decreases the
    objective at every step.
    """
    G = Xa.gram()
    noise = np.triu(rng.standard_normal(G.shape)) * (sigma * row_norm_sq)
    G += noise + np.triu(noise, 1).T
    eigenvalues, vectors = np.linalg.eigh(G / n_hat)
    margin = sigma * row_norm_sq * (2.0 * math.sqrt(G.shape[0]) + _SPECTRAL_TAIL) / n_hat
    curvature = 0.25 if binary else 0.5
    bound = (vectors * (curvature * (np.maximum(eigenvalues, 0.0) + margin))) @ vectors.T
    bound[np.diag_indices_from(bound)] += penalised[:, 0] / (C * n_hat)
    return np.linalg.inv(bound)


def _noisy_gd(Xa, Y, C, penalised, binary, n_hat, steps, sigma, sensitivity, rng, metric=None,
              report=None):
    """T steps of heavy-ball DP-GD on mean log-loss + ‖w‖²/(2Cn̂), from 0.

    ``Xa`` is the fit's :class:`_Design`. Each step adds N(0, (σΔ)² I) to the
    exact full-batch gradient sum
    (Δ = ``sensitivity``) and divides by the noisy count n̂. The step is
    ``_STEP``/L, with L the bound on the smoothness of the objective: that of
    the mean log-loss, ‖x̃‖²/4 (binary, σ' ≤ 1/4) or ‖x̃‖²/2 (softmax, whose
    Hessian in the scores is at most ½(I − 11ᵀ/K), Böhning 1992, Lemma), both
    Δ²/4, plus the penalty's 1/(C n̂). Without the penalty's part the steps
    diverged where C·n̂ is small against 1/Δ² (few rows, a small C, a small
    norm without an intercept).
    The model is the mean of the iterates of the last half (``_AVG_FROM``),
    which damps the oscillation of heavy-ball steps and averages noise
    (post-processing).

    With a ``metric`` P (:func:`_noisy_metric`), each step is
    v ← m·v + P·g̃, w ← w − s·v instead: the MM step with heavy-ball momentum
    m = ``_PRECONDITIONED_MOMENTUM`` and step s = ``_PRECONDITIONED_STEP``.
    ``report(t)``, when given, is called after each step t = 1..T.
    """
    if metric is None:
        step = _STEP / (sensitivity**2 / 4.0 + 1.0 / (C * n_hat))
        momentum = _MOMENTUM
    else:
        step, momentum = _PRECONDITIONED_STEP, _PRECONDITIONED_MOMENTUM
    W = np.zeros((Xa.shape[1], Y.shape[1]))
    velocity = np.zeros_like(W)
    average = np.zeros_like(W)
    start = int(_AVG_FROM * steps)

    for t in range(steps):
        grad_sum, _ = Xa.gradient(W, Y, binary)
        noise = sigma * sensitivity * rng.standard_normal(W.shape)
        grad = (grad_sum + noise) / n_hat + penalised * W / (C * n_hat)
        velocity = momentum * velocity + (grad if metric is None else metric @ grad)
        W = W - step * velocity
        if t >= start:
            average += (W - average) / (t - start + 1)
        if report is not None:
            report(t + 1)
    return average


def _exact_fit(Xa, Y, C, penalised, binary):
    """Minimise mean log-loss + ‖w‖²/(2Cn) (penalty off the intercept) by L-BFGS: ε = ∞.

    ``Xa`` is the fit's :class:`_Design`. The same minimiser as
    scikit-learn's C·Σ log-loss + ½‖w‖², scaled by 1/(Cn).
    """
    shape = (Xa.shape[1], Y.shape[1])
    n = Xa.shape[0]

    def objective(w):
        W = w.reshape(shape)
        grad_sum, loss = Xa.gradient(W, Y, binary, with_loss=True)
        grad = grad_sum / n + penalised * W / (C * n)
        return loss / n + 0.5 * np.sum(penalised * W**2) / (C * n), grad.ravel()

    result = minimize(
        objective, np.zeros(shape).ravel(), jac=True, method="L-BFGS-B",
        options={"maxiter": 1000, "gtol": 1e-6},
    )
    return result.x.reshape(shape), int(result.nit)
