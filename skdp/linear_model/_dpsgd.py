"""DP-SGD classifiers and regressors: linear by default, neural with hidden layers."""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._base import DPEstimatorMixin
from .._dpsgd import (
    OPTIMIZERS,
    SCHEDULES,
    DenseNetwork,
    dpsgd_privacy,
    dpsgd_schedule,
    make_loss,
    run_dpsgd,
)
from ..utils import (
    DEFAULT_DELTA,
    check_bounds,
    check_budget,
    check_delta,
    check_epsilon,
)
from ..stats._range import _bounds_curve, _bounds_release
from ..utils._validation import check_classes, check_numeric_target, check_scalar, validate_data

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray, RandomStateLike
    from ..budget import PrivacyBudget

__all__ = ["DPSGDClassifier", "DPSGDRegressor"]

_ACTIVATIONS = ("relu", "tanh")

# Poisson sampling rate of the default schedule: 100 steps per epoch whatever the number
# of rows, so the steps, the noise and the curve never depend on it (only the divisor of
# each step does, through a noisy count). Chosen on the benchmark suite's eight tables
# (benchmarks/bench_suite.py; 455 to 40,000 rows) against q = 256/n.
DEFAULT_SAMPLING_RATE = 0.01
# Adam's step size for learning_rate="auto", measured on the same tables (cosine decay).
_AUTO_LEARNING_RATE = {"linear": 0.03, "network": 0.01}
# Share of ε spent on private bounds of the target when DPSGDRegressor has no bounds_y.
TARGET_BOUNDS_SHARE = 0.1


def _check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}; got {value!r}.")
    return value


class _BaseDPSGD(DPEstimatorMixin, BaseEstimator):
    """What the DP-SGD classifier and regressor share: validation, accounting, training."""

    _losses = ()

    def _validate_params(self):
        """Check every hyper-parameter; return the privacy ones as floats."""
        _check_choice("loss", self.loss, self._losses)
        sizes = self.hidden_layer_sizes
        if isinstance(sizes, numbers.Integral) and not isinstance(sizes, bool):
            sizes = (sizes,)
        try:
            sizes = tuple(sizes)
        except TypeError:
            raise TypeError(
                f"hidden_layer_sizes must be a tuple of ints; got {self.hidden_layer_sizes!r}."
            ) from None
        sizes = tuple(check_scalar(s, "hidden_layer_sizes", int, min_val=1) for s in sizes)
        _check_choice("activation", self.activation, _ACTIVATIONS)
        check_scalar(self.alpha, "alpha", float, min_val=0.0)
        noise_multiplier = self.noise_multiplier
        if noise_multiplier is not None:
            noise_multiplier = check_scalar(noise_multiplier, "noise_multiplier", float, min_val=0.0,
                                            include_boundaries="neither")
            epsilon = None if self.epsilon is None else check_epsilon(self.epsilon)
        else:
            if self.epsilon is None:
                raise ValueError("Give epsilon, or noise_multiplier (with epsilon=None).")
            epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        private = noise_multiplier is not None or epsilon != math.inf
        if private and delta == 0.0:
            raise ValueError(
                "delta must be > 0 for DP-SGD: the Gaussian mechanism has no pure "
                "epsilon-DP guarantee (Mironov 2017, Prop. 7)."
            )
        check_budget(self.budget)
        clip_norm = check_scalar(self.clip_norm, "clip_norm", float, min_val=0.0,
                                 include_boundaries="neither")
        if not (isinstance(self.batch_size, str) and self.batch_size == "auto"):
            check_scalar(self.batch_size, "batch_size", int, min_val=1)
        if self.sampling_rate is not None:
            check_scalar(self.sampling_rate, "sampling_rate", float, min_val=0.0, max_val=1.0,
                         include_boundaries="right")
        check_scalar(self.max_iter, "max_iter", int, min_val=1)
        if isinstance(self.learning_rate, str) and self.learning_rate in SCHEDULES + ("adaptive",):
            # scikit-learn's MLP names its schedule learning_rate (its step size is
            # learning_rate_init); here learning_rate is the step size
            raise ValueError(
                f"learning_rate is the initial step size (a float > 0 or 'auto'); got "
                f"{self.learning_rate!r}, a schedule: pass it as schedule= (one of "
                f"{', '.join(map(repr, SCHEDULES))})."
            )
        if not (isinstance(self.learning_rate, str) and self.learning_rate == "auto"):
            check_scalar(self.learning_rate, "learning_rate", float, min_val=0.0,
                         include_boundaries="neither")
        _check_choice("optimizer", self.optimizer, OPTIMIZERS)
        _check_choice("schedule", self.schedule, SCHEDULES)
        check_scalar(self.momentum, "momentum", float, min_val=0.0, max_val=1.0,
                     include_boundaries="left")
        return sizes, epsilon, delta, noise_multiplier, clip_norm, private

    def _sampling(self, n_samples):
        """``(q, batch_size)`` from public parameters: ``batch_size=None`` means q times a count.

        With ``sampling_rate=None`` and ``batch_size="auto"`` q is
        :data:`DEFAULT_SAMPLING_RATE`; with an int ``batch_size`` alone it is
        ``batch_size / n_samples`` (the number of rows is then treated as
        public). The divisor of each noisy gradient sum is an int
        ``batch_size`` as given, else (``"auto"``) q times the number of rows:
        a noisy count in a private fit, the exact one at ``epsilon=inf``.
        """
        auto = isinstance(self.batch_size, str)
        if self.sampling_rate is not None:
            return float(self.sampling_rate), None if auto else int(self.batch_size)
        if auto:
            return DEFAULT_SAMPLING_RATE, None
        if self.batch_size > n_samples:
            raise ValueError(
                f"batch_size={self.batch_size} is larger than the number of samples "
                f"({n_samples}). Use a smaller batch_size or 'auto'."
            )
        return self.batch_size / n_samples, int(self.batch_size)

    def _learning_rate(self, sizes):
        if isinstance(self.learning_rate, str):  # "auto"
            return _AUTO_LEARNING_RATE["network" if sizes else "linear"]
        return float(self.learning_rate)

    def _fit(self, X, targets, n_outputs, loss, params, *, fixed=None, before=None):
        """Steps 2-4 of every fit: curve from public sizes, charge, then train.

        ``fixed`` is the curve of the fit's other releases; ``before(rng)``
        makes them, after the charge and before the training. ``targets()``
        encodes ``y``; it is called only after the charge.
        """
        sizes, epsilon, delta, noise_multiplier, clip_norm, private = params
        rng = self._check_generator()  # a bad seed is refused before the charge
        verbose = self._check_verbose()
        n_samples = X.shape[0]
        q, batch_size = self._sampling(n_samples)
        _, steps_per_epoch, n_steps = dpsgd_schedule(
            n_samples, batch_size, self.max_iter, sampling_rate=q
        )
        count = private and batch_size is None
        sigma, sigma_count, curve = dpsgd_privacy(
            q, n_steps, epsilon=epsilon, delta=delta, noise_multiplier=noise_multiplier,
            count=count, fixed=fixed,
        )
        # Charge before reading any value of X or y (beyond finiteness checks).
        self._charge_budget(curve)
        if before is not None:
            before(rng)
        if batch_size is None:
            n_rows = n_samples + sigma_count * rng.standard_normal() if count else n_samples
            batch_size = max(q * n_rows, 1.0)  # the divisor: q times the (noisy) count
        self.noise_multiplier_ = sigma
        self.sampling_rate_ = q
        self.n_steps_ = n_steps
        self.batch_size_ = batch_size
        self.learning_rate_ = self._learning_rate(sizes)
        Y = targets()
        network = DenseNetwork((X.shape[1], *sizes, n_outputs), self.activation, rng)
        run_dpsgd(
            network,
            loss,
            X,
            Y,
            rng=rng,
            sampling_rate=q,
            expected_batch_size=batch_size,
            n_steps=n_steps,
            steps_per_epoch=steps_per_epoch,
            noise_multiplier=sigma,
            clip_norm=clip_norm if private else None,
            alpha=self.alpha,
            optimizer=self.optimizer,
            learning_rate=self.learning_rate_,
            schedule=self.schedule,
            momentum=self.momentum,
            verbose=verbose,
        )
        self._network = network
        self.coefs_ = [w.copy() for w in network.weights]
        self.intercepts_ = [b.copy() for b in network.biases]
        self.n_iter_ = int(self.max_iter)
        self.n_layers_ = len(sizes) + 2
        self.n_outputs_ = n_outputs
        if not sizes:
            self.coef_ = self.coefs_[0].T.copy()
            self.intercept_ = self.intercepts_[0].copy()
        return self

    def _forget_fit(self):
        # A refused or failed (re)fit leaves the estimator unfitted, never half old, half new.
        if hasattr(self, "_network"):
            del self._network

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_network")

    def _output(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._network.predict(X)


_COMMON_PARAMS_DOC = """
    hidden_layer_sizes : tuple of int, default=()
        Sizes of the hidden layers. ``()`` is a linear model; e.g. ``(64, 64)``
        is a neural network with two hidden layers.
    activation : {"relu", "tanh"}, default="relu"
        Activation of the hidden layers.
    alpha : float >= 0, default=1e-4
        L2 penalty on the weights, added to the noisy gradient
        (post-processing: it costs no privacy).
    epsilon : float > 0 or inf, default=1.0
        Target ε. With ``noise_multiplier=None``, σ is calibrated so that the
        run is (``epsilon``, ``delta``)-DP. ``inf`` trains without noise and
        without clipping (``clip_norm`` is ignored) and charges
        :meth:`RDPCurve.non_private <skdp.accounting.RDPCurve.non_private>`.
        With ``noise_multiplier`` set, ``epsilon`` is a cap (``None``: no cap).
    delta : float in (0, 1), default=1e-5
        δ of the (ε, δ) guarantee; must be > 0 unless ``epsilon=inf``.
    budget : PrivacyBudget or None, default=None
        The shared budget charged (once, before the data is read) by ``fit``.
    noise_multiplier : float > 0 or None, default=None
        σ: the noise std divided by ``clip_norm``. When given it is used as is
        and the ε actually spent is reported in ``epsilon_spent_``.
    clip_norm : float > 0, default=1.0
        Every per-example gradient is clipped to this L2 norm.
    batch_size : int or "auto", default="auto"
        The expected batch size that divides each step's noisy sum of clipped
        gradients (never the realised batch size). ``"auto"``: the sampling
        rate times the number of rows, which a private fit takes from a noisy
        count released in its one charge (5%
        of the noise budget; the exact number at ``epsilon=inf``). An int with
        ``sampling_rate=None`` also sets ``q = batch_size / n_samples``, which
        treats the number of rows as public (see Notes).
    sampling_rate : float in (0, 1] or None, default=None
        Poisson sampling rate ``q``: each row joins a step's batch
        independently with probability q. ``None`` is 0.01 (100 steps per
        epoch) with ``batch_size="auto"``, and ``batch_size / n_samples`` with
        an int ``batch_size``.
    max_iter : int >= 1, default=20
        Number of epochs. Every epoch is ``max(1, round(1 / q))`` steps, fixed
        before the data is read (there is no early stopping: it would read the
        data).
    learning_rate : float > 0 or "auto", default="auto"
        Initial step size; ``"auto"`` is 0.03 for a linear model and 0.01 with
        hidden layers (chosen with the default schedule, Adam and sampling
        rate on the eight tables of ``benchmarks/bench_suite.py``).
    optimizer : {"adam", "sgd"}, default="adam"
        Adam, or SGD with ``momentum``. Both only see the noisy gradient.
    schedule : {"constant", "invscaling", "cosine"}, default="cosine"
        Learning-rate schedule over the steps (cosine decays it to 0 by the
        last step, so the final iterate averages out the noise of the last
        steps).
    momentum : float in [0, 1), default=0.9
        Momentum of ``optimizer="sgd"``.
    random_state : int, numpy Generator or None, default=None
        Seeds initialisation, sampling and noise. ``None`` draws OS entropy.
    secure : bool, default=False
        Draw every random number of the fit (initialisation, sampling, noise)
        from the operating system's CSPRNG instead of numpy's generator;
        ``random_state`` must then be None. See :ref:`secure_randomness`.
    verbose : int, default=0
        Print one line per epoch (steps done, step size, elapsed time) when
        > 0; nothing computed on the training rows is printed.
"""

_COMMON_ATTRS_DOC = """
    coefs_ : list of ndarray
        Weight matrix of each layer, shape (fan_in, fan_out).
    intercepts_ : list of ndarray
        Bias vector of each layer.
    n_iter_ : int
        Number of epochs run (``max_iter``).
    n_steps_ : int
        Number of DP-SGD steps run.
    sampling_rate_ : float
        Poisson sampling rate ``q``.
    batch_size_ : float
        The expected batch size dividing each noisy gradient sum:
        ``batch_size``, or for ``"auto"`` ``q`` times the noisy count (at
        least 1; the exact count at ``epsilon=inf``).
    learning_rate_ : float
        The initial step size used.
    noise_multiplier_ : float
        σ used (0 when ``epsilon=inf``).
    epsilon_spent_, delta_spent_ : float
        The (ε, δ) actually spent: the tightest valid ε of ``privacy_curve_``
        (:func:`skdp.accounting.epsilon_of`).
    privacy_curve_ : RDPCurve
        The RDP curve charged to ``budget``: the noisy count's Gaussian (with
        ``batch_size="auto"``) plus ``poisson_subsampled_gaussian_rdp(q, σ,
        n_steps)``.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Notes
    -----
    Privacy of the number of rows. Under skdp's add/remove-one-row adjacency
    the number of rows ``n_samples`` is private. By default nothing but the
    noisy count depends on it: q, the steps, σ and the curve come from
    public parameters, and the divisor of each step is q times the noisy
    count. An int ``batch_size`` with ``sampling_rate=None`` follows the
    convention of Abadi et al. 2016, Opacus and TF Privacy instead, ``q =
    batch_size / n_samples``, which treats the number of rows as public:
    ``sampling_rate_``, ``n_steps_``, ``noise_multiplier_``,
    ``epsilon_spent_`` and the charged curve (``privacy_curve_``, also stored
    in the budget's ledger) then reveal it.
"""


class DPSGDClassifier(ClassifierMixin, _BaseDPSGD):
    __doc__ = (
        """Classifier trained by differentially private SGD (DP-SGD).

    Linear by default; a neural network (multilayer perceptron) when
    ``hidden_layer_sizes`` is given. Trained by DP-SGD (Abadi et al. 2016)
    with Poisson sampling, per-example clipping by ghost norms, Gaussian
    noise and Rényi-DP accounting: see :mod:`skdp._dpsgd`. Multiclass
    problems are one model trained in one DP-SGD run (softmax for
    ``log_loss``; one output per class for the margin losses), never
    one-vs-rest runs that would split the budget.

    The features should be scaled to a known, public range (e.g. with public
    bounds): privacy does not depend on it (clipping bounds every gradient)
    but accuracy does.

    Parameters
    ----------
    loss : {"log_loss", "hinge", "modified_huber"}, default="log_loss"
        ``log_loss`` gives logistic regression (softmax for more than two
        classes); ``hinge`` a linear SVM; ``modified_huber`` a smooth hinge
        that also gives probabilities (Zhang 2004)."""
        + _COMMON_PARAMS_DOC
        + """    classes : array-like or None, default=None
        The public list of labels. ``None`` takes the labels present in ``y``,
        as scikit-learn does, which reveals which labels occur: a private fit
        then emits a :class:`~skdp.PrivacyLeakWarning`. Give the public list.

    Attributes
    ----------
    classes_ : ndarray
        The class labels.
    coef_, intercept_ : ndarray
        For a linear model (no hidden layer): shape (1, n_features) for two
        classes, (n_classes, n_features) otherwise."""
        + _COMMON_ATTRS_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model import DPSGDClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(10000, 3))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> clf = DPSGDClassifier(epsilon=1.0, delta=1e-5, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95)
    True
    >>> clf.sampling_rate_, clf.n_steps_, round(clf.noise_multiplier_, 2)
    (0.01, 2000, 1.88)
    >>> bool(clf.epsilon_spent_ <= 1.0)
    True

    Nothing above depends on the number of rows but the divisor of each
    step, ``batch_size_``: 0.01 times a noisy count of the rows.
    """
    )

    _losses = ("log_loss", "hinge", "modified_huber")

    def __init__(
        self,
        loss: str = "log_loss",
        *,
        hidden_layer_sizes: tuple[int, ...] = (),
        activation: str = "relu",
        alpha: float = 1e-4,
        epsilon: float = 1.0,
        delta: float = DEFAULT_DELTA,
        budget: PrivacyBudget | None = None,
        noise_multiplier: float | None = None,
        clip_norm: float = 1.0,
        batch_size: int | str = "auto",
        sampling_rate: float | None = None,
        max_iter: int = 20,
        learning_rate: float | str = "auto",
        optimizer: str = "adam",
        schedule: str = "cosine",
        momentum: float = 0.9,
        classes: ArrayLike | None = None,
        random_state: RandomStateLike = None,
        secure: bool = False,
        verbose: int = 0,
    ) -> None:
        self.loss = loss
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.alpha = alpha
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.noise_multiplier = noise_multiplier
        self.clip_norm = clip_norm
        self.batch_size = batch_size
        self.sampling_rate = sampling_rate
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.optimizer = optimizer
        self.schedule = schedule
        self.momentum = momentum
        self.classes = classes
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose

    def fit(self, X: ArrayLike, y: ArrayLike) -> DPSGDClassifier:
        """Fit by DP-SGD; charges ``budget`` once, before reading the data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Dense, finite features.
        y : array-like of shape (n_samples,)
            Labels.

        Returns
        -------
        self
        """
        self._forget_fit()
        # 1. validate parameters and input (shapes, dtypes, finiteness, labels)
        params = self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        y = column_or_1d(y, warn=True)
        classes = check_classes(y, self.classes, private=params[-1])
        n_classes = classes.size
        binary = n_classes == 2
        n_outputs = 1 if binary else n_classes
        if self.loss == "log_loss":
            loss = make_loss("log_loss_binary" if binary else "log_loss_multinomial")
        else:
            loss = make_loss(self.loss)

        def targets():
            # 0/1 codes (binary log-loss), one-hot (softmax) or +-1 codes (margin losses)
            codes = np.searchsorted(classes, y)
            if binary:
                Y = codes[:, None].astype(np.float64)
            else:
                Y = np.zeros((y.shape[0], n_classes))
                Y[np.arange(y.shape[0]), codes] = 1.0
            return Y if self.loss == "log_loss" else 2.0 * Y - 1.0

        # 2-4. curve from public sizes, charge, then train
        self._fit(X, targets, n_outputs, loss, params)
        self.classes_ = classes
        return self

    def decision_function(self, X: ArrayLike) -> NDArray:
        """Network outputs: shape (n_samples,) for two classes, else (n_samples, n_classes)."""
        f = self._output(X)
        return f[:, 0] if f.shape[1] == 1 else f

    def predict(self, X: ArrayLike) -> NDArray:
        """Predicted class labels."""
        f = self._output(X)
        if f.shape[1] == 1:
            return self.classes_[(f[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(f, axis=1)]

    def _has_proba(self):
        return self.loss in ("log_loss", "modified_huber")

    @available_if(_has_proba)
    def predict_proba(self, X: ArrayLike) -> NDArray:
        """Class probabilities (``log_loss`` and ``modified_huber`` only, as in scikit-learn)."""
        f = self._output(X)
        if self.loss == "log_loss":
            if f.shape[1] == 1:
                p = 1.0 / (1.0 + np.exp(-np.clip(f[:, 0], -500, 500)))
                return np.column_stack([1.0 - p, p])
            z = np.exp(f - f.max(axis=1, keepdims=True))
            return z / z.sum(axis=1, keepdims=True)
        # modified_huber: (clip(f, -1, 1) + 1) / 2 (Zhang 2004), normalised over classes
        p = (np.clip(f, -1.0, 1.0) + 1.0) / 2.0
        if f.shape[1] == 1:
            return np.column_stack([1.0 - p[:, 0], p[:, 0]])
        total = p.sum(axis=1, keepdims=True)
        uniform = total[:, 0] == 0
        p[uniform] = 1.0
        total[uniform] = p.shape[1]
        return p / total

    @available_if(_has_proba)
    def predict_log_proba(self, X: ArrayLike) -> NDArray:
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class DPSGDRegressor(RegressorMixin, _BaseDPSGD):
    __doc__ = (
        """Regressor trained by differentially private SGD (DP-SGD).

    Linear by default; a neural network when ``hidden_layer_sizes`` is given.
    Same engine as :class:`DPSGDClassifier` (see :mod:`skdp._dpsgd`).
    Targets are clipped to ``bounds_y`` and rescaled to [-1, 1]; without
    public bounds a tenth of ε releases private ones, in the fit's one
    charge (see Notes).

    Parameters
    ----------
    loss : {"squared_error", "huber"}, default="squared_error"
        Squared error, or Huber's loss with ``huber_threshold``."""
        + _COMMON_PARAMS_DOC
        + """    bounds_y : tuple (lower, upper) or None, default=None
        Public bounds of the target. ``None``: estimated privately with a
        tenth of ``epsilon`` (see Notes; needs a finite ``epsilon``), or the
        exact range at ``epsilon=inf`` without ``noise_multiplier``.
    huber_threshold : float > 0, default=0.1
        Where the Huber loss turns linear, in units of the rescaled target
        (half the width of ``bounds_y`` is 1).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        For a linear model, in units of the rescaled target.
    intercept_ : ndarray of shape (1,)
    bounds_y_ : tuple of two floats
        The bounds the targets were clipped to: ``bounds_y``, the private
        estimate, or the exact range at ``epsilon=inf`` without bounds."""
        + _COMMON_ATTRS_DOC
        + """
    Targets are clipped to the bounds ``bounds_y`` and rescaled to [-1, 1]
    with them; predictions are mapped back. Public bounds (chosen without
    looking at the data) are best. Without them a private fit first releases
    private bounds of the target (:func:`skdp.stats.bounds`, a noisy
    log-scale histogram, within a factor 2 of the range) with
    a tenth of ε, composed into the fit's one charge;
    they are never read from ``y`` without noise. The released range is
    never a single point, and takes in a neighbouring bin that holds a
    large noisy share of the rows; where no bin stands out of the noise it
    rests on the largest noisy counts and the fit warns
    (:class:`~skdp.NoisyEstimateWarning`; see :mod:`skdp.stats._range`).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model import DPSGDRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(2000, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=2000)
    >>> reg = DPSGDRegressor(epsilon=1.0, bounds_y=(-4, 4), random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.9)
    True
    """
    )

    _losses = ("squared_error", "huber")

    def __init__(
        self,
        loss: str = "squared_error",
        *,
        hidden_layer_sizes: tuple[int, ...] = (),
        activation: str = "relu",
        alpha: float = 1e-4,
        epsilon: float = 1.0,
        delta: float = DEFAULT_DELTA,
        budget: PrivacyBudget | None = None,
        noise_multiplier: float | None = None,
        clip_norm: float = 1.0,
        batch_size: int | str = "auto",
        sampling_rate: float | None = None,
        max_iter: int = 20,
        learning_rate: float | str = "auto",
        optimizer: str = "adam",
        schedule: str = "cosine",
        momentum: float = 0.9,
        bounds_y: ArrayLike | None = None,
        huber_threshold: float = 0.1,
        random_state: RandomStateLike = None,
        secure: bool = False,
        verbose: int = 0,
    ) -> None:
        self.loss = loss
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.alpha = alpha
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.noise_multiplier = noise_multiplier
        self.clip_norm = clip_norm
        self.batch_size = batch_size
        self.sampling_rate = sampling_rate
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.optimizer = optimizer
        self.schedule = schedule
        self.momentum = momentum
        self.bounds_y = bounds_y
        self.huber_threshold = huber_threshold
        self.random_state = random_state
        self.secure = secure
        self.verbose = verbose

    def fit(self, X: ArrayLike, y: ArrayLike) -> DPSGDRegressor:
        """Fit by DP-SGD; charges ``budget`` once, before reading the data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Dense, finite features.
        y : array-like of shape (n_samples,)
            Targets; clipped to ``bounds_y``.

        Returns
        -------
        self
        """
        self._forget_fit()
        params = self._validate_params()
        private = params[-1]
        threshold = check_scalar(self.huber_threshold, "huber_threshold", float, min_val=0.0,
                                 include_boundaries="neither")
        epsilon, delta = params[1], params[2]
        if self.bounds_y is not None:
            (lo,), (hi,) = check_bounds(self.bounds_y, 1, name="bounds_y")
            if hi == lo:
                raise ValueError(f"bounds_y must have lower < upper; got {self.bounds_y!r}.")
            target_bounds = [float(lo), float(hi)]
        elif private and (epsilon is None or epsilon == math.inf):
            raise ValueError(
                "bounds_y=(lower, upper) public bounds of the target are required with "
                "noise_multiplier and no finite epsilon: private bounds take a share of it."
            )
        X, y = validate_data(self, X, check_numeric_target(y), dtype=np.float64,
                             y_numeric=True)
        y = column_or_1d(y, warn=True)
        loss = make_loss(self.loss, huber_threshold=threshold)
        fixed = before = None
        if self.bounds_y is None:
            # Private bounds of the target (a noisy log-scale histogram, skdp.stats.bounds);
            # at epsilon=inf the exact range, as nothing is private.
            bounds_epsilon = TARGET_BOUNDS_SHARE * epsilon if private else math.inf
            fixed = _bounds_curve(bounds_epsilon, delta, 1) if private else None
            target_bounds = [0.0, 0.0]

            def before(rng):
                (lo,), (hi,) = _bounds_release(y[:, None], epsilon=bounds_epsilon,
                                               delta=delta, rng=rng, n_targets=1)
                target_bounds[:] = [float(lo), float(hi)]

        def targets():
            # the bounds' affine map onto [-1, 1], then clipping to it
            lo, hi = target_bounds
            centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0
            if half == 0:  # the bounds are one point: every target is clipped to it
                return np.zeros((y.shape[0], 1))
            return np.clip((y - centre)[:, None] / half, -1.0, 1.0)

        self._fit(X, targets, 1, loss, params, fixed=fixed, before=before)
        lo, hi = target_bounds
        self._y_center, self._y_half = (lo + hi) / 2.0, ((hi - lo) / 2.0 or 1.0)
        self.bounds_y_ = (lo, hi)
        return self

    def predict(self, X: ArrayLike) -> NDArray:
        """Predicted targets."""
        return self._output(X)[:, 0] * self._y_half + self._y_center
