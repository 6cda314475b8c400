"""A huge but finite epsilon (up to the float maximum) is accounted, not crashed on.

At a noise multiplier z of 1e-100 the Gaussian's privacy loss has mean
1/(2z²) = 5e199: no PLD grid holds it (its index is beyond 2**53), so the
"tightest" accountant answers by RDP and accountant="pld" refuses with a
clear ValueError.
"""

import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdp import PrivacyBudget
from skdp.accounting import (
    ComposedEvent,
    DiscreteGaussianEvent,
    GaussianEvent,
    LaplaceEvent,
    PLDAccountant,
    epsilon_of,
    gaussian_rdp,
    laplace_rdp,
    zcdp_rdp,
)
from skdp.linear_model import DPLogisticRegression
from skdp.naive_bayes import DPGaussianNB

HUGE = (1e100, 1e300, 1e308)
# from where the PLD grid stops (about 1e-13) to where ε = 1/(2z²) nears the float maximum
TINY_Z = (1e-15, 1e-50, 1e-100, 1e-150)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    y = (X[:, 0] > 0).astype(int)
    return X, y


def _mixed(z):
    """A Gaussian of multiplier z with a Laplace of scale 1, curve and event."""
    curve = gaussian_rdp(z) + laplace_rdp(1.0)
    return curve.with_event(ComposedEvent((GaussianEvent(z), LaplaceEvent(1.0))))


def _with_discrete(z):
    """A Gaussian and a discrete Gaussian (sensitivity 1), both of multiplier z (a private norm's pair)."""
    rho = (1.0 / z) * (1.0 / z) / 2.0  # 1/(2z²) (Canonne, Kamath & Steinke 2020, Thm. 4)
    curve = gaussian_rdp(z) + zcdp_rdp(math.nextafter(rho, math.inf))
    return curve.with_event(ComposedEvent((GaussianEvent(z), DiscreteGaussianEvent(z, 1))))


CASES = [(make, z) for make in (_mixed, _with_discrete) for z in TINY_Z]


# with data_norm given, 1e100 and 1e300 worked already (no private norm, so no
# discrete Gaussian beside the Gaussians and no PLD grid); 1e308 looped forever
# in the noise calibration
@pytest.mark.parametrize(("epsilon", "data_norm"), [(e, None) for e in HUGE] + [(1e308, 5.0)])
def test_logistic_regression_fits_at_huge_epsilon(data, epsilon, data_norm):
    X, y = data
    model = DPLogisticRegression(epsilon=epsilon, classes=[0, 1], data_norm=data_norm, random_state=0)
    model.fit(X, y)
    assert np.all(np.isfinite(model.coef_)) and np.all(np.isfinite(model.intercept_))
    # the noise (multiplier about 1e-50 and below) is far below float rounding:
    # the fit is that of epsilon=1e6 (noise about 1e-3 of the signal) within 1%
    ref = DPLogisticRegression(epsilon=1e6, classes=[0, 1], data_norm=data_norm, random_state=0).fit(X, y)
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-2)
    exact = LogisticRegression().fit(X, y)
    assert np.mean(model.predict(X) == exact.predict(X)) >= 0.99


@pytest.mark.parametrize("epsilon", HUGE[1:])
def test_gaussian_nb_fits_at_huge_epsilon(data, epsilon):
    X, y = data
    model = DPGaussianNB(epsilon=epsilon, classes=[0, 1], bounds=(-5.0, 5.0), random_state=0).fit(X, y)
    exact_means = np.array([X[y == c].mean(axis=0) for c in (0, 1)])
    exact_vars = np.array([X[y == c].var(axis=0) for c in (0, 1)])
    np.testing.assert_allclose(model.theta_, exact_means, atol=1e-6)
    np.testing.assert_allclose(model.var_, exact_vars, rtol=1e-3)


@pytest.mark.parametrize(("make", "z"), CASES)
def test_epsilon_of_tiny_noise_is_the_rdp_one(make, z):
    curve = make(z)
    eps = epsilon_of(curve, 1e-5)
    assert math.isfinite(eps) and eps > 0
    assert eps == epsilon_of(curve, 1e-5, accountant="rdp")


@pytest.mark.parametrize(("make", "z"), CASES)
def test_pld_accountant_refuses_tiny_noise_clearly(make, z):
    curve = make(z)
    with pytest.raises(ValueError, match="privacy loss .* PLD grid"):
        epsilon_of(curve, 1e-5, accountant="pld")
    acc = PLDAccountant().compose(curve.event)
    with pytest.raises(ValueError, match="privacy loss .* PLD grid"):
        acc.epsilon(1e-5)
    with pytest.raises(ValueError, match="privacy loss .* PLD grid"):
        acc.delta(1.0)


def test_pld_grid_limit_is_at_two_to_the_53_cells():
    # a Gaussian with a Laplace: the grid step is about 1/(1000 z), the mean
    # loss 1/(2z²), so the mean is about 500/z cells from 0
    assert math.isfinite(PLDAccountant().compose(_mixed(1e-10).event).epsilon(1e-5))
    with pytest.raises(ValueError, match="2\\*\\*53"):
        PLDAccountant().compose(_mixed(1e-15).event).epsilon(1e-5)


@pytest.mark.parametrize("make", [_mixed, _with_discrete])
def test_budget_charges_tiny_noise_by_rdp(make, tmp_path):
    curve = make(1e-100)
    budget = PrivacyBudget(epsilon=1e300, delta=1e-5, ledger=tmp_path / "ledger.db")
    charge = budget.charge(curve, label="huge")
    assert charge.total_epsilon == epsilon_of(curve, 1e-5, accountant="rdp")
    assert budget.spent()[0] == charge.total_epsilon
    budget.charge(curve, label="again")  # a second charge extends the running state
    assert math.isfinite(budget.spent()[0]) and len(budget) == 2


def test_pld_budget_refuses_tiny_noise_and_records_nothing(tmp_path):
    budget = PrivacyBudget(epsilon=1e300, delta=1e-5, ledger=tmp_path / "ledger.db", accountant="pld")
    budget.charge(_mixed(1.0), label="fine")
    with pytest.raises(ValueError, match="privacy loss .* PLD grid"):
        budget.charge(_mixed(1e-100), label="huge")
    assert len(budget) == 1
    assert budget.spent()[0] == pytest.approx(epsilon_of(_mixed(1.0), 1e-5, accountant="pld"))


def test_discrete_gaussian_too_small_for_a_float_rho_is_refused_clearly():
    from skdp.mechanisms import DiscreteGaussianMechanism

    assert DiscreteGaussianMechanism(noise_multiplier=5.4e-155).rho == pytest.approx(1 / (2 * 5.4e-155**2))
    with pytest.raises(ValueError, match="too small: the discrete Gaussian's rho"):
        DiscreteGaussianMechanism(noise_multiplier=1e-160)
