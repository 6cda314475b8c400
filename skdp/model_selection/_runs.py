"""The private search's runs, after its charge: each a private fit and a noisy count.

:func:`_best_run` draws the K runs' candidates and seeds, runs them in joblib
workers and keeps the best. A run trains one candidate privately on the
training part and counts its correct predictions on the validation part with
noise (:func:`_one_run`), with a curve recorder for a budget: the search
charged the whole curve before. :func:`_private_fit` is one private fit as a
part of the search (a run's, or the refit's): secret seeds, the label set
read before the charge, no warning shown, and nothing of the noise left in
the released model.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.pipeline import FeatureUnion, Pipeline

from .._secure import SecureGenerator
from ..utils._parallel import Parallel, delayed
from ._params import _fill_missing, _nested_params, _quiet, _set_nested, _with_params
from ._probe import _CurveRecorder, _recorders_stay_here


def _best_run(estimator, candidates, train_curves, n_runs, X, y, train_idx, val_idx, counts,
              labels, rng, *, secure, n_jobs, picks=None):
    """The runs: ``n_runs`` candidates drawn at random, each trained and scored; the best.

    Each run draws its candidate uniformly at random from ``candidates`` and
    a secret seed from ``rng`` (none with ``secure``: it then reads the
    CSPRNG), trains the candidate on the rows ``train_idx`` and counts its
    correct predictions on the rows ``val_idx`` with the noise of ``counts``
    (:func:`_one_run`), in ``n_jobs`` joblib workers. Returns the best run's
    candidate index, noisy count and model.
    """
    y_arr = np.asarray(y)
    X_train, y_train = _take(X, train_idx), y_arr[train_idx]
    X_val, y_val = _take(X, val_idx), y_arr[val_idx]
    if picks is None:  # given only at a total epsilon=inf: every candidate once
        picks = rng.integers(len(candidates), size=n_runs)
    seeds = [None] * n_runs if secure else rng.integers(2**62, size=n_runs)
    with _quiet():  # no run's warning is shown: their number would reveal K
        results = Parallel(n_jobs=n_jobs)(
            delayed(_one_run)(estimator, candidates[c], None if s is None else int(s),
                              X_train, y_train, X_val, y_val, counts, train_curves[c], labels,
                              os.getpid())
            for c, s in zip(picks, seeds)
        )
    # The best run by noisy count; ties go to the earliest run, which
    # among i.i.d. runs is a uniformly random tie-break.
    best_run = int(np.argmax([r[0] for r in results]))
    best_count, best_model = results[best_run]
    return int(picks[best_run]), best_count, best_model


def _take(X, index):
    """The rows ``index`` of ``X`` (an array, a DataFrame, a list or an array-like)."""
    if hasattr(X, "iloc"):
        return X.iloc[index]
    if isinstance(X, np.ndarray) or hasattr(X, "shape"):
        return X[index]
    if hasattr(X, "__array__") and not hasattr(X, "__getitem__"):
        return np.asarray(X)[index]
    return [X[i] for i in index]


def _one_run(estimator, params, seed, X_train, y_train, X_val, y_val, score_mechanism, expected,
             labels, main_pid):
    """Train one candidate privately and count its correct validation predictions with noise.

    Runs with ``budget`` replaced by a recorder: workers never write the
    ledger; the run's privacy is in the search's curve, charged before.
    """
    rng = SecureGenerator() if seed is None else np.random.default_rng(seed)
    candidate = _private_fit(_with_params(estimator, params), X_train, y_train, rng,
                             expected, params, labels, main_pid)
    # For a fixed model one validation row changes the count by at most 1 (add/remove).
    correct = int(np.sum(np.asarray(candidate.predict(X_val)) == np.asarray(y_val)))
    return int(score_mechanism.randomise(correct, random_state=rng)), candidate


def _private_fit(model, X, y, rng, expected, params, labels, main_pid):
    """Fit ``model`` as one part of the search, and return it ready to be released.

    - Its ``budget`` is a recorder, checked against ``expected`` (the search
      charged the whole curve before); the released model holds none.
    - Its ``random_state`` parameters get fresh secret seeds from ``rng``,
      and the user's values back after the fit (never the noise's seeds).
    - A ``classes=None`` gets the label set the search read from ``y``
      before its charge (``labels``), so no run reads its own part's labels:
      a rare label missing from a training part would otherwise fail that
      run after the charge.
    - Its warnings are not shown: their number would reveal the secret
      number of runs K (found in a privacy review). The search's
      process silences them around all runs; a worker process, here.
    """
    recorder = _CurveRecorder()
    _set_nested(model, "budget", lambda: recorder)
    users = _secret_seeds(model, rng)
    if labels is not None:
        users.update(_fill_missing(model, "classes", labels))
    with _quiet_in_worker_process(main_pid), _recorders_stay_here():
        model.fit(X, y)
    _check_within(recorder.total(), expected, params)
    _set_nested(model, "budget", lambda: None)
    model.set_params(**users)
    _sync_fitted_copies(model)
    return model


def _secret_seeds(estimator, rng):
    """Give every (nested) ``random_state`` a fresh seed from ``rng``; return the user's values.

    The seeds fix the noise of the fit. They must never be released with the
    model: whoever knows them can refit on each of two neighbouring datasets
    and see which one reproduces the released values exactly (found in a
    privacy review). The caller puts the returned values back with
    ``set_params`` once the fit is done.
    """
    users = _nested_params(estimator, "random_state")
    params = estimator.get_params(deep=True)
    # No seed for a step with secure=True (it refuses one and reads the CSPRNG), nor for
    # any step of a search with secure=True (rng is then the CSPRNG).
    unseeded = isinstance(rng, SecureGenerator)
    estimator.set_params(**{
        k: None if unseeded or params.get(k[:-len("random_state")] + "secure") is True
        else int(rng.integers(2**62)) for k in users})
    # No run prints: how many runs print would reveal K (a step's own verbose is set to 0).
    quiet = {k: v for k, v in _nested_params(estimator, "verbose").items() if v}
    estimator.set_params(**{k: 0 for k in quiet})
    return {**users, **quiet}


def _quiet_in_worker_process(main_pid):
    """Ignore warnings here if this is a worker process, not the search's own.

    The warning filters are process-wide and ``warnings.catch_warnings`` is
    not thread-safe (Python 3.11): the search's own process silences them once
    around all its runs (:func:`_quiet`), and a worker process (loky, dask)
    silences them for its run, where no other thread of the search shares them.
    """
    return _quiet() if os.getpid() != main_pid else contextlib.nullcontext()


def _check_within(spent, expected, params):
    common, i_s, i_e = np.intersect1d(spent.orders, expected.orders, return_indices=True)
    ok = common.size and np.all(spent.rdp[i_s] <= expected.rdp[i_e] * (1 + 1e-9) + 1e-12)
    if not ok or spent.delta > expected.delta:
        raise RuntimeError(
            f"The candidate {params!r} charged more than its probed curve; the search's "
            "accounting does not cover it. This is a bug in an estimator's fit."
        )


def _sync_fitted_copies(estimator):
    """Give the fitted copies inside ``estimator`` the parameters of their originals.

    A ``ColumnTransformer`` fits clones of its transformers (``transformers_``),
    and a ``TransformedTargetRegressor`` of its regressor (``regressor_``):
    resetting ``budget`` and ``random_state`` on the originals leaves the
    clones with the recorder and the secret seeds of the noise, which the
    released model would carry (found in a review). Pipelines and
    ``FeatureUnion`` fit their own steps, which are walked for nested ones.
    """
    if isinstance(estimator, Pipeline):
        for _, step in estimator.steps:
            _sync_fitted_copies(step)
    elif isinstance(estimator, FeatureUnion):
        for _, step in estimator.transformer_list:
            _sync_fitted_copies(step)
    elif isinstance(estimator, TransformedTargetRegressor) and hasattr(estimator, "regressor_"):
        # it fits a clone of its regressor, kept as regressor_
        wanted = {**_nested_params(estimator.regressor, "budget"),
                  **_nested_params(estimator.regressor, "random_state")}
        if wanted and hasattr(estimator.regressor_, "set_params"):
            estimator.regressor_.set_params(**wanted)
        _sync_fitted_copies(estimator.regressor_)
    elif isinstance(estimator, ColumnTransformer) and hasattr(estimator, "transformers_"):
        originals = {name: step for name, step, _ in estimator.transformers}
        originals["remainder"] = estimator.remainder
        for name, fitted, _ in estimator.transformers_:
            original = originals.get(name)
            if hasattr(fitted, "get_params") and hasattr(original, "get_params"):
                wanted = {**_nested_params(original, "budget"),
                          **_nested_params(original, "random_state")}
                if wanted:
                    fitted.set_params(**wanted)  # a clone has the original's parameter keys
                _sync_fitted_copies(fitted)
