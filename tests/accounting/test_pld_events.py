"""Privacy events, the two accountants' shared interface, and accountant="pld" in calibration and the CLI."""

import dataclasses
import json
import math

import pytest

from skdp.accounting import (
    ApproximateDPEvent,
    BoundedRangeEvent,
    ComposedEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    DPEvent,
    GaussianEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PLDAccountant,
    PoissonSampledEvent,
    PureDPEvent,
    RandomizedResponseEvent,
    RDPAccountant,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ZCDPEvent,
    approximate_dp_rdp,
    calibrate_noise_multiplier,
    epsilon_for,
    event_from_dict,
    gaussian_rdp,
    laplace_rdp,
    poisson_subsampled_gaussian_rdp,
    pure_dp_rdp,
    randomized_response_rdp,
    sampled_without_replacement_gaussian_rdp,
    zcdp_rdp,
)
from skdp.cli import main
from skdp.mechanisms import exponential_mechanism_rdp

LEAVES = [
    GaussianEvent(1.5),
    LaplaceEvent(2.0),
    RandomizedResponseEvent(0.7, n_categories=4),
    PureDPEvent(0.3),
    ApproximateDPEvent(0.5, 1e-7),
    ZCDPEvent(0.02),
    DiscreteLaplaceEvent(3.0, sensitivity=2),
    DiscreteGaussianEvent(4.0, sensitivity=1),
    NonPrivateEvent(),
    PoissonSampledEvent(0.01, GaussianEvent(1.1)),
    SampledWithoutReplacementEvent(0.02, GaussianEvent(2.0)),
    BoundedRangeEvent(0.4),
]


# -- events ------------------------------------------------------------------------
@pytest.mark.parametrize("event", LEAVES + [
    SelfComposedEvent(PoissonSampledEvent(256 / 60000, GaussianEvent(1.1)), 14063),
    ComposedEvent([SelfComposedEvent(LaplaceEvent(10.0), 20), GaussianEvent(8.0), ComposedEvent([])]),
])
def test_events_round_trip_through_json(event):
    text = json.dumps(event.to_dict(), allow_nan=False)
    back = event_from_dict(json.loads(text))
    assert back == event
    assert hash(back) == hash(event)
    assert type(back) is type(event)
    assert DPEvent.from_dict(event.to_dict()) == event


def test_events_are_immutable_values():
    event = GaussianEvent(2)
    assert event.noise_multiplier == 2.0 and isinstance(event.noise_multiplier, float)
    assert event == GaussianEvent(2.0)
    assert {event, GaussianEvent(2.0)} == {event}
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.noise_multiplier = 3.0
    assert GaussianEvent.from_scale(6.0, sensitivity=3.0) == GaussianEvent(2.0)
    assert LaplaceEvent.from_scale(1.0, sensitivity=4.0) == LaplaceEvent(0.25)


@pytest.mark.parametrize("make", [
    lambda: GaussianEvent(0.0),
    lambda: GaussianEvent(-1.0),
    lambda: GaussianEvent(math.nan),
    lambda: GaussianEvent(math.inf),
    lambda: GaussianEvent(True),
    lambda: GaussianEvent("1"),
    lambda: LaplaceEvent(0.0),
    lambda: RandomizedResponseEvent(1.0, n_categories=1),
    lambda: RandomizedResponseEvent(1.0, n_categories=2.5),
    lambda: PureDPEvent(0.0),
    lambda: ApproximateDPEvent(1.0, 1.0),
    lambda: ApproximateDPEvent(-1.0, 0.0),
    lambda: ZCDPEvent(-0.1),
    lambda: DiscreteLaplaceEvent(1.0, sensitivity=0),
    lambda: DiscreteGaussianEvent(1.0, sensitivity=1.5),
    lambda: PoissonSampledEvent(1.5, GaussianEvent(1.0)),
    lambda: PoissonSampledEvent(0.1, 1.0),
    lambda: SampledWithoutReplacementEvent(-0.1, GaussianEvent(1.0)),
    lambda: SelfComposedEvent(GaussianEvent(1.0), -1),
    lambda: SelfComposedEvent(GaussianEvent(1.0), 2.5),
    lambda: ComposedEvent([GaussianEvent(1.0), 3]),
])
def test_bad_event_parameters_are_refused(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("d", [{}, {"kind": "nope"}, [1], {"kind": "gaussian", "noise_multiplier": -1}])
def test_bad_event_dicts_are_refused(d):
    with pytest.raises(ValueError):
        event_from_dict(d)


# -- accountants -------------------------------------------------------------------
def test_supports():
    pld, rdp = PLDAccountant(), RDPAccountant()
    for leaf in LEAVES:
        assert rdp.supports(leaf)
        assert pld.supports(leaf) == (not isinstance(leaf, ZCDPEvent))
    assert not pld.supports(PoissonSampledEvent(0.1, LaplaceEvent(1.0)))
    assert not rdp.supports(PoissonSampledEvent(0.1, LaplaceEvent(1.0)))
    assert not pld.supports(ComposedEvent([GaussianEvent(1.0), ZCDPEvent(0.1)]))
    assert not pld.supports("gaussian")
    assert not rdp.supports(ApproximateDPEvent(0.0, 1e-6))


def test_unsupported_compose_changes_nothing():
    acc = PLDAccountant().compose(GaussianEvent(2.0))
    before = acc.epsilon(1e-5)
    with pytest.raises(ValueError):
        acc.compose(ComposedEvent([GaussianEvent(2.0), ZCDPEvent(0.1)]))
    assert acc.epsilon(1e-5) == before
    assert acc.event == ComposedEvent([GaussianEvent(2.0)])


def test_compose_counts_and_the_event_ledger():
    acc = PLDAccountant()
    acc.compose(GaussianEvent(2.0), 3).compose(SelfComposedEvent(GaussianEvent(2.0), 2)).compose(LaplaceEvent(1.0))
    assert acc.event == ComposedEvent([SelfComposedEvent(GaussianEvent(2.0), 5), LaplaceEvent(1.0)])
    again = PLDAccountant().compose(event_from_dict(json.loads(json.dumps(acc.event.to_dict()))))
    assert again.epsilon(1e-6) == acc.epsilon(1e-6)


def test_rdp_accountant_is_the_rdp_functions_added_up():
    acc = RDPAccountant()
    for leaf in LEAVES[:8] + LEAVES[9:]:
        acc.compose(leaf, 3)
    by_hand = (
        gaussian_rdp(1.5) * 3 + laplace_rdp(2.0) * 3 + randomized_response_rdp(0.7, n_categories=4) * 3
        + pure_dp_rdp(0.3) * 3 + approximate_dp_rdp(0.5, 1e-7) * 3 + zcdp_rdp(0.02) * 3
        + pure_dp_rdp(2 / 3.0) * 3 + zcdp_rdp(1 / 32) * 3
        + poisson_subsampled_gaussian_rdp(0.01, 1.1, 3) + sampled_without_replacement_gaussian_rdp(0.02, 2.0, 3)
        + exponential_mechanism_rdp(0.4) * 3
    )
    assert acc.epsilon(1e-5) == pytest.approx(by_hand.epsilon(1e-5), rel=1e-12)
    assert acc.delta(3.0) == pytest.approx(by_hand.delta_for(3.0), rel=1e-12)
    # the discrete Gaussian's ρ is rounded up, never down
    assert RDPAccountant().compose(DiscreteGaussianEvent(4.0)).curve.rdp[0] >= zcdp_rdp(1 / 32).rdp[0]


@pytest.mark.parametrize("event", [
    SelfComposedEvent(PoissonSampledEvent(256 / 60000, GaussianEvent(1.1)), 14063),
    SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(4.0)), 10000),
    SelfComposedEvent(GaussianEvent(8.0), 40),
    SelfComposedEvent(LaplaceEvent(10.0), 20),
    SelfComposedEvent(SampledWithoutReplacementEvent(0.01, GaussianEvent(2.0)), 500),
    ComposedEvent([SelfComposedEvent(PureDPEvent(0.1), 30), DiscreteGaussianEvent(3.0), RandomizedResponseEvent(1.0, 3)]),
])
def test_pld_is_tighter_than_rdp(event):
    pld = PLDAccountant().compose(event)
    rdp = RDPAccountant().compose(event)
    assert pld.epsilon(1e-5) < rdp.epsilon(1e-5)
    assert pld.delta(1.0) < rdp.delta(1.0)


def test_issue_cases_gain_six_to_ten_percent():
    # the four cases of the issue: RDP 2.597, 1.035, 3.617, 1.690; PLD about 2.382, 0.947, 3.341, 1.592
    cases = [
        (SelfComposedEvent(PoissonSampledEvent(256 / 60000, GaussianEvent(1.1)), 14063), 2.3818),
        (SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(4.0)), 10000), 0.9470),
        (SelfComposedEvent(GaussianEvent(8.0), 40), 3.3414),
        (SelfComposedEvent(LaplaceEvent(10.0), 20), 1.5922),
    ]
    for event, expected in cases:
        assert PLDAccountant().compose(event).epsilon(1e-5) == pytest.approx(expected, rel=1e-3)


def test_nothing_and_no_privacy():
    assert PLDAccountant().epsilon(1e-5) == 0.0
    assert PLDAccountant().delta(0.0) == 0.0
    silent = PLDAccountant().compose(PoissonSampledEvent(0.0, GaussianEvent(1.0)), 100)
    assert silent.epsilon(1e-9) == 0.0
    acc = PLDAccountant().compose(GaussianEvent(1.0)).compose(NonPrivateEvent())
    assert acc.epsilon(1e-3) == math.inf and acc.delta(100.0) == 1.0
    assert RDPAccountant().compose(NonPrivateEvent()).epsilon(1e-3) == math.inf
    zero_count = PLDAccountant().compose(LaplaceEvent(1.0), 0)
    assert zero_count.epsilon(1e-5) == 0.0


def test_pure_dp_queries():
    acc = PLDAccountant().compose(LaplaceEvent(2.0), 3).compose(PureDPEvent(0.2))
    assert acc.epsilon(0.0) == pytest.approx(1.7)
    assert acc.delta(1.7) == 0.0
    assert PLDAccountant().compose(GaussianEvent(1.0)).epsilon(0.0) == math.inf


def test_accountant_parameters_are_checked():
    with pytest.raises(ValueError):
        PLDAccountant(value_discretization=0.0)
    with pytest.raises(ValueError):
        PLDAccountant(tail_bound=0.5)
    acc = PLDAccountant().compose(LaplaceEvent(1.0))
    with pytest.raises(ValueError):
        acc.epsilon(1.0)
    with pytest.raises(ValueError):
        acc.delta(-0.1)


def test_explicit_grid_is_used_and_stays_pessimistic():
    # 20 runs of 0.3-DP randomized response on grids that do not hold its losses:
    # connect the dots splits them, and ε stays above the exact binomial one
    from scipy.stats import binom

    eps0, count = 0.3, 20
    p = math.exp(eps0) / (1 + math.exp(eps0))
    j = list(range(count + 1))

    def exact_delta(eps):
        return sum(binom.pmf(i, count, p) * -math.expm1(eps - (2 * i - count) * eps0)
                   for i in j if (2 * i - count) * eps0 > eps)

    lo, hi = 0.0, count * eps0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if exact_delta(mid) > 1e-4 else (lo, mid)
    for step in [0.07, 0.011, 0.0013]:
        acc = PLDAccountant(value_discretization=step).compose(PureDPEvent(eps0), count)
        remove, _ = acc.privacy_loss_distributions()
        assert remove.step == step
        assert hi <= acc.epsilon(1e-4) <= hi + 2 * step
        assert acc.delta(1.0) >= exact_delta(1.0) * (1 - 1e-9)


# -- calibration and epsilon_for with accountant="pld" ------------------------------------
def test_epsilon_for_pld_is_the_accountant():
    eps = epsilon_for(4.0, 1e-5, sampling_rate=0.01, steps=10_000, accountant="pld")
    acc = PLDAccountant().compose(PoissonSampledEvent(0.01, GaussianEvent(4.0)), 10_000)
    assert eps == acc.epsilon(1e-5)
    assert epsilon_for(4.0, 1e-5, sampling_rate=0.01, steps=10_000) == min(eps, epsilon_for(
        4.0, 1e-5, sampling_rate=0.01, steps=10_000, accountant="rdp"))
    wor = epsilon_for(2.0, 1e-5, sampling_rate=0.01, steps=100, sampling="without_replacement", accountant="pld")
    assert wor == PLDAccountant().compose(SampledWithoutReplacementEvent(0.01, GaussianEvent(2.0)), 100).epsilon(1e-5)
    with pytest.raises(ValueError):
        epsilon_for(4.0, 1e-5, accountant="prv")
    with pytest.raises(ValueError):
        epsilon_for(4.0, 1e-5, sampling="nope", accountant="pld")


@pytest.mark.parametrize("target, delta, q, steps, sampling", [
    (1.0, 1e-5, 0.01, 10_000, "poisson"),
    (2.3818, 1e-5, 256 / 60000, 14_063, "poisson"),
    (0.5, 1e-8, 0.05, 300, "poisson"),
    (1.0, 1e-5, 0.01, 1000, "without_replacement"),
])
def test_pld_calibration_is_safe_and_nearly_minimal(target, delta, q, steps, sampling):
    sigma = calibrate_noise_multiplier(target, delta, sampling_rate=q, steps=steps, sampling=sampling,
                                       accountant="pld", rtol=1e-4)
    assert epsilon_for(sigma, delta, sampling_rate=q, steps=steps, sampling=sampling, accountant="pld") <= target
    smaller = sigma * (1 - 2e-3)
    assert epsilon_for(smaller, delta, sampling_rate=q, steps=steps, sampling=sampling, accountant="pld") > target
    # and less noise than the RDP calibration needs
    assert sigma < calibrate_noise_multiplier(target, delta, sampling_rate=q, steps=steps, sampling=sampling,
                                              accountant="rdp")


def test_pld_calibration_of_the_plain_gaussian_is_the_exact_gdp_inverse():
    sigma = calibrate_noise_multiplier(1.0, 1e-5, steps=100, accountant="pld")
    eps = PLDAccountant().compose(GaussianEvent(sigma), 100).epsilon(1e-5)
    assert eps <= 1.0
    assert eps == pytest.approx(1.0, rel=1e-10)


def test_the_issue_run_is_recovered_by_calibration():
    # ε of σ = 1.1 for 14,063 steps, then σ for that ε: back to 1.1
    q, steps = 256 / 60000, 14_063
    eps = epsilon_for(1.1, 1e-5, sampling_rate=q, steps=steps, accountant="pld")
    sigma = calibrate_noise_multiplier(eps, 1e-5, sampling_rate=q, steps=steps, accountant="pld")
    assert sigma == pytest.approx(1.1, rel=1e-3)


# -- the command line ------------------------------------------------------------------
DPSGD = ["--noise-multiplier", "4", "--sampling-rate", "0.01", "--steps", "10000", "--delta", "1e-5"]


def test_cli_account_with_the_pld_accountant(capsys):
    assert main(["account", *DPSGD, "--accountant", "pld", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accountant"] == "pld"
    assert out["epsilon"] == epsilon_for(4.0, 1e-5, sampling_rate=0.01, steps=10000, accountant="pld")
    assert out["order"] is None
    assert main(["account", *DPSGD, "--accountant", "rdp", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accountant"] == "rdp" and out["order"] == 17.0
    assert main(["account", *DPSGD, "--accountant", "pld"]) == 0
    assert "privacy loss distribution" in capsys.readouterr().out


def test_cli_calibrate_with_the_pld_accountant(capsys):
    argv = ["calibrate", "--target-epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.01", "--steps", "10000"]
    assert main([*argv, "--accountant", "pld", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accountant"] == "pld" and out["epsilon"] <= 1.0
    assert out["noise_multiplier"] == calibrate_noise_multiplier(1.0, 1e-5, sampling_rate=0.01, steps=10000,
                                                                 accountant="pld")
    assert main([*argv, "--accountant", "prv"]) == 2
