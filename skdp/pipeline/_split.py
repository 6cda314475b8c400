"""One total ε for a pipeline, split among the private steps that leave theirs unset.

The rule (:func:`step_weights`): every private step that leaves its
``epsilon`` at the default of its class gets a weight by its role, the
pipeline's last step (the model) :data:`MODEL_WEIGHT`, every step before it
(preprocessing: an imputer, a scaler, a discretiser, a projection)
:data:`PREPROCESSING_WEIGHT` divided by √total above a total of 1
(:func:`preprocessing_weight`), or :data:`PUBLIC_BOUNDS_WEIGHT` when it is
given public ``bounds`` (it then estimates no ranges); each such step's ``epsilon``
is its weight times one factor, the largest (to 0.01 %, as a private search
scales its candidates) for which the whole pipeline, the steps that set their
own ``epsilon`` included, costs at most the total at the accounting δ. The curves come from probes on placeholder rows, as
:func:`skdp.privacy_cost` finds them: the split reads only the parameters and
the data's shape, dtypes and column names (a step's curve may depend on
the number of rows, as its charge does).
"""

from __future__ import annotations

import inspect
import math

from sklearn.base import clone

from ..accounting._accountants import spend_of
from ..model_selection._params import _nested_params, _quiet
from ..model_selection._plan import _largest_factor
from ..model_selection._probe import _CurveRecorder, _n_samples, _probe, _ProbeCache

# Equal weights. A preprocessing step does not need less than the model: a scaler or an
# imputer without public bounds first estimates every column's range privately, and with a
# tenth of the total (the first rule tried) those ranges fell below the noise on the suite's
# small and wide tables (breast cancer, digits: every column dropped, the model at the
# majority class). On the suite's five classification tables, four pipelines and
# epsilon = 0.5, 1, 5, equal weights had the smallest largest shortfall against the best
# weight of a grid from 0.1 to 2 (benchmarks/bench_pipeline_split.py; the table and where
# it misses in docs/benchmarks.md, "Pipelines: one total").
MODEL_WEIGHT = 1.0
PREPROCESSING_WEIGHT = 1.0
# A preprocessing step given public ``bounds`` estimates no ranges: a scaler then releases
# only its columns' means and variances, and the model needs the ε more. On the same grid
# (the `scaler(bounds)` pipeline, five tables, epsilon = 0.5, 1, 5), w = 0.35 is within
# 1 point of the best weight chosen on other seeds in all 15 rows since the scaler floors
# a variance below its noise (12 of 15 before, breast cancer's three missing by 3-9 points
# where 46 % of its variances were released as 0 and kept their raw units).
PUBLIC_BOUNDS_WEIGHT = 0.35


def preprocessing_weight(total):
    """The weight of a preprocessing step that estimates its ranges, for a pipeline's ``total``.

    :data:`PREPROCESSING_WEIGHT` up to a total of 1, then that divided by
    √total. A private range settles once its histogram's bins stand above
    the noise, and a scale or a centre a little off costs the model little,
    while the model's own error keeps falling as its ε grows: the larger the
    total, the less of it preprocessing needs. On the suite's grid at
    epsilon = 5 (benchmarks/bench_pipeline_split.py), equal weights missed
    the best weight by more than 1 point on digits with each of its three
    range-estimating pipelines (the best there 0.35 to 0.5); 1/√5 = 0.45 is
    within 1 point of the best on all of them, and on the other tables where
    equal weights were (docs/benchmarks.md, "Pipelines: one total"). Below a
    total of 1 the ranges need their share: equal weights were the best
    fixed weight there.
    """
    return PREPROCESSING_WEIGHT / math.sqrt(max(1.0, total))


def unset_epsilon_keys(pipeline):
    """The ``epsilon`` keys of the private steps that leave theirs at their class's default.

    A private step is one with a ``budget`` parameter; one nested inside
    another private step (a search's estimator) is its owner's business, and
    is left out. A step given another ``epsilon`` than its default keeps it.
    """
    params = pipeline.get_params(deep=True)
    owners = [key[: -len("budget")] for key in _nested_params(pipeline, "budget")
              if key != "budget"]
    outermost = [p for p in owners if not any(o != p and p.startswith(o) for o in owners)]
    unset = []
    for prefix in outermost:
        key = prefix + "epsilon"
        owner = params.get(prefix[:-2])
        if key in params and owner is not None and params[key] == _default_epsilon(owner):
            unset.append(key)
    return unset


def _default_epsilon(estimator):
    parameter = inspect.signature(type(estimator).__init__).parameters.get("epsilon")
    return None if parameter is None else parameter.default


def step_weights(pipeline, keys, total):
    """The weight of each key of :func:`unset_epsilon_keys` for the pipeline's ``total`` ε.

    The rule of the module's docstring; it reads the steps' parameters and
    the total, never the data. At ``total=inf`` every step fits without
    privacy and the weights are those of a total of 1.
    """
    last = pipeline.steps[-1][0]
    params = pipeline.get_params(deep=True)
    preprocessing = preprocessing_weight(total if math.isfinite(total) else 1.0)

    def weight(key):
        if key.split("__", 1)[0] == last:
            return MODEL_WEIGHT
        # the step's own parameter: public, read before any value is
        public = params.get(key[: -len("epsilon")] + "bounds") is not None
        return PUBLIC_BOUNDS_WEIGHT if public else preprocessing

    return {key: weight(key) for key in keys}


def split_epsilon(pipeline, total, X_like, y_like, *, delta, accountant="tightest",
                  weights=None):
    """``{key: epsilon}`` for the unset steps of ``pipeline``, so that it costs ``total``.

    Parameters
    ----------
    pipeline : Pipeline
        An unfitted pipeline; not changed.
    total : float
        The total ε, > 0 (inf gives every unset step ``epsilon=inf``).
    X_like, y_like
        Placeholders with the data's shape, dtypes and column names, and its
        labels' placeholder.
    delta : float
        The δ at which the total is stated.
    accountant : str
        How a curve is converted to ε, as a budget with that accountant does.
    weights : dict, optional
        Weights per key instead of the rule's (:func:`step_weights`).
    """
    keys = unset_epsilon_keys(pipeline)
    if not keys:
        raise ValueError(
            f"epsilon={total!r} is given to the pipeline, but no private step leaves its "
            "epsilon unset to take a share of it: leave a step's epsilon at its default, or "
            "pass epsilon=None (each step then spends its own); nothing was charged.")
    weights = step_weights(pipeline, keys, total) if weights is None else weights
    if total == math.inf:
        return dict.fromkeys(keys, math.inf)
    model, cache, n = clone(pipeline), _ProbeCache(X_like), _n_samples(X_like)
    refusals = {}  # factor -> what a probe raised there

    def too_small():
        # a probe that failed at an epsilon of 1 or more per weight failed on something
        # else than a calibration out of reach (the input, a parameter): say that
        raised = [exc for factor, exc in refusals.items() if factor >= 1.0]
        return raised[0] if raised else ValueError(
            f"epsilon={total:g} is too small for this pipeline: the steps that set their "
            f"own epsilon cost about that much already at delta={delta:g}. Give a larger "
            "total or smaller epsilons to those steps; nothing was charged.")

    def cost(t):
        recorder = _CurveRecorder()
        recorder.delta, recorder._accountant = delta, accountant
        probe = clone(model).set_params(**{k: t * weights[k] for k in keys})
        probe.set_params(**{k: recorder for k in _nested_params(probe, "budget")})
        try:  # a step whose noise cannot be calibrated that small cannot be afforded either
            with _quiet():
                _probe(probe, cache.placeholder_X(n), y_like, recorder, cache, key=("X",))
            curve = recorder.total()
            if curve.delta > delta:
                return math.inf
            return spend_of(curve, delta, accountant=accountant)[0]  # as the budget composes
        except ValueError as exc:
            refusals[t] = exc
            return math.inf

    factor = _largest_factor(cost, total, too_small)
    return {k: factor * weights[k] for k in keys}
