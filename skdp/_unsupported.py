"""What skdp refuses on purpose that a scikit-learn user may pass, and why in privacy terms.

Each name maps to its reason. :class:`skdp._base.DPEstimatorMixin` refuses these
names when they are passed to an estimator's constructor, ``fit``,
``fit_transform``, ``fit_predict`` or ``set_params``, and gives ``partial_fit``
the same kind of error, so that every refusal reads the same. The user guide
lists them (docs/user_guide/sklearn_differences.rst; tests/test_unsupported.py
checks that every name here is on that page).
"""

__all__ = ["UNSUPPORTED", "PARTIAL_FIT", "refuse_unsupported"]

_STOPPING = (
    "the number of iterations is fixed by the parameters (max_iter) and charged before any "
    "row is read; stopping when the loss or a validation score stops improving would make "
    "it, and so the model, depend on the data in a way that no charge accounts for."
)

UNSUPPORTED = {
    "sample_weight": (
        "the noise of a fit is calibrated to the most that one row can change the result "
        "(its sensitivity); a weight scales a row's influence, so a row of weight above 1 "
        "could move the result further than the noise hides, and the privacy guarantee "
        "would no longer hold. Fit on unweighted rows."
    ),
    "class_weight": (
        "weighting the rows of a class scales their influence beyond the one-row "
        "sensitivity the noise is calibrated to, and class_weight='balanced' would compute "
        "the weights from the class counts of y without privacy."
    ),
    "warm_start": (
        "every fit starts from a data-independent initialisation and is charged once, for a "
        "privacy curve computed from its parameters before any row is read; continuing an "
        "earlier fit would release a model shaped by both fits (and by whatever rows the "
        "first one saw), which that one charge does not describe. Fit again from scratch "
        "(charged again), or ask for the iterations you need (max_iter) in one fit."
    ),
    "early_stopping": _STOPPING,
    "n_iter_no_change": _STOPPING,
    "tol": _STOPPING,
    "n_init": (
        "keeping the best of several runs by a score computed on the data (the inertia of "
        "k-means) selects on the data without privacy; DPKMeans makes one private "
        "initialisation. A private selection among runs is what DPGridSearchCV does."
    ),
    "bootstrap": (
        "a bootstrap sample can hold a row several times, which multiplies its influence on "
        "a tree beyond the one-row sensitivity the noise is calibrated to; every tree of "
        "DPRandomForestClassifier uses each row once."
    ),
    "oob_score": (
        "the out-of-bag score is computed on the training rows without noise, and would be "
        "released with the model without privacy."
    ),
    "return_train_score": (
        "scores on the training rows are computed without noise, and would be released "
        "with the search without privacy; a run's score is a noisy count on held-out rows."
    ),
    "cv": (
        "a private search trains each run once and scores it on held-out rows "
        "(validation_fraction); its privacy analysis (Papernot & Steinke 2022) covers such "
        "runs, not k-fold cross-validation, where every row is in k fits."
    ),
    "scoring": (
        "a run's score is a noisy count of correct predictions on the held-out rows "
        "(accuracy: one row changes the count by at most 1, the sensitivity its noise is "
        "calibrated to); other scores have other sensitivities."
    ),
}

PARTIAL_FIT = (
    "a fit is charged once, for a curve computed from its parameters before any row is read, "
    "and releases one model; updates batch after batch would release a new model after each "
    "batch, a further release of every row it saw, at a cost that no single charge describes. "
    "Fit on all the data at once (DPSGDClassifier and DPSGDRegressor train in noisy "
    "mini-batches within one fit)."
)


def refuse_unsupported(cls, names, exception=TypeError):
    """Raise ``exception`` naming the first refused name in ``names``, with its reason."""
    for name in names:
        if name in UNSUPPORTED:
            raise exception(f"{cls.__name__} does not take {name}: {UNSUPPORTED[name]}")
