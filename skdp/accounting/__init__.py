"""Privacy accounting: pure math, no data and no scikit-learn.

RDP curves of mechanisms, composition, and conversion to (ε, δ)-DP; privacy
events and the accountants that compose them (RDP, and privacy loss
distributions for the tightest (ε, δ)).
"""

from ._accountants import PLDAccountant, RDPAccountant, epsilon_of
from ._analytic_gaussian import analytic_gaussian_sigma
from ._basic import (
    approximate_dp_rdp,
    gaussian_rdp,
    laplace_rdp,
    pure_dp_rdp,
    randomized_response_rdp,
    zcdp_rdp,
)
from ._calibration import calibrate_noise_multiplier, epsilon_for
from ._conversions import rdp_to_delta, rdp_to_epsilon
from ._curve import RDPCurve
from ._events import (
    ApproximateDPEvent,
    BoundedRangeEvent,
    ComposedEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    DPEvent,
    GaussianEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PoissonSampledEvent,
    PureDPEvent,
    RandomizedResponseEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ZCDPEvent,
    event_from_dict,
)
from ._gdp import (
    compose_gdp,
    dp_tradeoff,
    gaussian_mu,
    gdp_to_delta,
    gdp_to_epsilon,
    gdp_tradeoff,
    group_gdp,
    poisson_subsampled_gaussian_clt_mu,
)
from ._orders import DEFAULT_ORDERS, check_orders
from ._pld import PrivacyLossDistribution
from ._selection import (
    Poisson,
    TruncatedNegativeBinomial,
    geometric,
    logarithmic,
    private_selection_rdp,
    run_count_distribution,
)
from ._subsampled import (
    poisson_subsampled_gaussian_rdp,
    sampled_without_replacement_gaussian_rdp,
)
from ._zcdp import zcdp_to_delta, zcdp_to_epsilon

__all__ = [
    "ApproximateDPEvent",
    "ComposedEvent",
    "DEFAULT_ORDERS",
    "DPEvent",
    "DiscreteGaussianEvent",
    "DiscreteLaplaceEvent",
    "GaussianEvent",
    "LaplaceEvent",
    "NonPrivateEvent",
    "PLDAccountant",
    "PoissonSampledEvent",
    "PrivacyLossDistribution",
    "PureDPEvent",
    "BoundedRangeEvent",
    "RDPAccountant",
    "RandomizedResponseEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "ZCDPEvent",
    "Poisson",
    "RDPCurve",
    "TruncatedNegativeBinomial",
    "analytic_gaussian_sigma",
    "approximate_dp_rdp",
    "calibrate_noise_multiplier",
    "check_orders",
    "compose_gdp",
    "dp_tradeoff",
    "epsilon_for",
    "epsilon_of",
    "event_from_dict",
    "gaussian_mu",
    "gaussian_rdp",
    "gdp_to_delta",
    "gdp_to_epsilon",
    "gdp_tradeoff",
    "geometric",
    "group_gdp",
    "laplace_rdp",
    "logarithmic",
    "poisson_subsampled_gaussian_clt_mu",
    "poisson_subsampled_gaussian_rdp",
    "private_selection_rdp",
    "pure_dp_rdp",
    "randomized_response_rdp",
    "rdp_to_delta",
    "rdp_to_epsilon",
    "run_count_distribution",
    "sampled_without_replacement_gaussian_rdp",
    "zcdp_rdp",
    "zcdp_to_delta",
    "zcdp_to_epsilon",
]
