"""Checks of the privacy contract of skdp estimators, for the test suite.
They live beside the tests, above every layer of the package they test
(``from _testing import ...``: pytest puts ``tests/`` on ``sys.path``). They
raise ``AssertionError`` with a message and need no test framework:

- :func:`assert_charges_once`: one fit makes exactly one charge, with the
  expected curve, and the estimator reports it;
- :func:`assert_bad_input_costs_nothing`: invalid parameters or data raise a
  ``ValueError`` (or ``TypeError``) before any charge;
- :func:`assert_refused_fit_fits_nothing`: a budget too small raises
  :class:`~skdp.BudgetExceededError`, records nothing and leaves the
  estimator unfitted;
- :func:`seeded_secure`: lets ``secure=True`` fits and statistics take a seed, in tests only;
- :func:`charge_until_refused`: the loop of the processes that race for a cap;
- :func:`run_processes`: start processes, collect one result from each, join them;
- :func:`charge_in_process`: a worker process that charges a ledger, for any start method.
"""

import contextlib
import os

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from skdp import _base
from skdp.budget import PrivacyBudget
from skdp.exceptions import BudgetExceededError
from skdp.stats import _checks
from skdp._secure import SecureGenerator
from skdp.utils._validation import check_generator

__all__ = [
    "assert_bad_input_costs_nothing",
    "assert_charges_once",
    "assert_refused_fit_fits_nothing",
    "assert_same_curve",
    "charge_until_refused",
    "run_processes",
    "seeded_secure",
]


def _fit(estimator, X, y):
    return estimator.fit(X) if y is None else estimator.fit(X, y)


def epsilon_spent_of_fit(estimator, X, y):
    """``clone(estimator).fit(X, y).epsilon_spent_``: a task for joblib's worker processes.

    It lives in this module, which every worker imports as ``_testing``, because a
    test module under ``--import-mode=importlib`` is not importable from a worker.
    """
    return clone(estimator).fit(X, y).epsilon_spent_


def assert_same_curve(curve, expected, *, rtol=1e-12):
    """Two RDP curves agree on their orders, δ and pure ε."""
    if not np.array_equal(curve.orders, expected.orders):
        raise AssertionError("The curves have different orders.")
    if not np.allclose(curve.rdp, expected.rdp, rtol=rtol, atol=0):
        worst = np.max(np.abs(curve.rdp - expected.rdp))
        raise AssertionError(f"RDP curves differ (max abs difference {worst:g}): "
                             f"{curve.mechanism} vs {expected.mechanism}")
    if curve.delta != expected.delta or not np.isclose(
        curve.pure_epsilon, expected.pure_epsilon, rtol=rtol
    ):
        raise AssertionError(f"delta / pure epsilon differ: {curve!r} vs {expected!r}")


def assert_charges_once(estimator, X, y=None, *, expected_curve, budget_epsilon=1e6, delta=1e-5):
    """Fit a clone on a fresh budget; it charges once with ``expected_curve``.

    Returns the fitted clone.
    """
    budget = PrivacyBudget(budget_epsilon, delta)
    est = clone(estimator).set_params(budget=budget)
    _fit(est, X, y)
    if len(budget) != 1:
        raise AssertionError(f"One fit made {len(budget)} charges; expected exactly 1.")
    assert_same_curve(budget.ledger[0].curve, expected_curve)
    assert_same_curve(est.privacy_curve_, expected_curve)
    return est


def assert_bad_input_costs_nothing(estimator, X, y=None, *, bad_params=(), bad_data=(),
                                   match=None):
    """Each bad parameter set or bad data raises a clear error and charges nothing.

    Parameters
    ----------
    bad_params : iterable of dict
        Parameters that ``set_params`` gives the estimator, one case each.
    bad_data : iterable of (X, y)
        Data that ``fit`` gets, one case each.
    """
    budget = PrivacyBudget(1e6, 1e-5)
    cases = [(params, X, y) for params in bad_params] + [({}, bX, by) for bX, by in bad_data]
    for params, X_case, y_case in cases:
        est = clone(estimator).set_params(budget=budget, **params)
        try:
            _fit(est, X_case, y_case)
        except (ValueError, TypeError) as exc:
            if isinstance(exc, BudgetExceededError):
                raise AssertionError(f"{params}: refused by the budget, not validated.") from exc
            if not str(exc):
                raise AssertionError(f"{params}: the error has no message.") from exc
        else:
            raise AssertionError(f"No error for bad input {params or 'data'}.")
        if len(budget) != 0:
            raise AssertionError(f"Bad input {params or 'data'} was charged to the budget.")


def charge_until_refused(budget, curve, attempts, *, label=None):
    """Charge ``curve`` ``attempts`` times; return (accepted, refused) counts.

    A charge over the cap raises :class:`~skdp.BudgetExceededError`, which is
    counted; any other exception propagates (a racing process reports it).
    """
    accepted = refused = 0
    for _ in range(attempts):
        try:
            budget.charge(curve, label=label)
            accepted += 1
        except BudgetExceededError:
            refused += 1
    return accepted, refused


def charge_in_process(path, curve, n, go, results):
    """A worker process (any start method: it is importable): open the ledger at ``path``,
    wait for ``go``, charge ``curve`` ``n`` times labelled with its pid; put None, or the error."""
    try:
        budget = PrivacyBudget.open(path)
        go.wait(60)
        for _ in range(n):
            budget.charge(curve, label=f"process {os.getpid()}")
    except BaseException as exc:  # reported to the parent
        results.put(repr(exc))
    else:
        results.put(None)


def run_processes(processes, results, *, timeout=60):
    """Start ``processes``, take one item each from the queue ``results``, join them; the items."""
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=timeout) for _ in processes]
    for process in processes:
        process.join(timeout=timeout)
    return outcomes


def assert_refused_fit_fits_nothing(estimator, X, y=None, *, budget_epsilon=1e-3, delta=1e-5):
    """A budget too small refuses the fit: nothing recorded, nothing fitted."""
    budget = PrivacyBudget(budget_epsilon, delta)
    est = clone(estimator).set_params(budget=budget)
    try:
        _fit(est, X, y)
    except BudgetExceededError:
        pass
    else:
        raise AssertionError("The fit was not refused by a budget too small for it.")
    if len(budget) != 0:
        raise AssertionError("A refused fit recorded a charge.")
    try:
        check_is_fitted(est)
    except NotFittedError:
        return
    raise AssertionError("A refused fit left fitted attributes: "
                         f"{[k for k in vars(est) if k.endswith('_')]}.")


def seeded_secure(monkeypatch):
    """In a test, let ``secure=True`` estimators and statistics take a seed (they refuse one).

    scikit-learn's checks seed every estimator (``random_state=0``), and
    tests of the secure samplers and releases need reproducible draws. With
    ``monkeypatch`` (pytest's fixture), an estimator's fit and every
    :mod:`skdp.stats` function called with ``secure=True`` and an int seed
    (or a numpy ``Generator``) get a ``SecureGenerator``
    (``skdp._secure``) that reads its bytes from
    ``np.random.default_rng(seed).bytes`` (or the generator's ``bytes``)
    instead of :func:`os.urandom`: the same samplers run, reproducibly, and
    a secure fit and the secure statistic on the same seed read the same bytes.
    """

    def seeded(random_state, *, secure=False):
        if secure and isinstance(random_state, (int, np.integer)):
            return SecureGenerator(source=np.random.default_rng(int(random_state)).bytes)
        if secure and isinstance(random_state, np.random.Generator):
            return SecureGenerator(source=random_state.bytes)
        return check_generator(random_state, secure=secure)

    for module in (_base, _checks):  # the modules that call check_generator(secure=)
        monkeypatch.setattr(module, "check_generator", seeded)


@contextlib.contextmanager
def dask_client():
    """A real ``distributed.LocalCluster`` of two one-thread workers in this process, and its client."""
    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        yield client
