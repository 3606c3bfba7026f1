"""botorch_bandits: bandit algorithms with regret guarantees for BoTorch and Ax.

The top-level package never imports Ax; the Ax integration lives in
``botorch_bandits.ax`` (installed with the ``ax`` extra).
"""

from botorch_bandits.acquisition import (
    GPUCB,
    GPUCBSDF,
    IGPUCB,
    GPThompsonSampling,
    GPThompsonSamplingSDF,
    draw_posterior_paths,
    num_observations,
)
from botorch_bandits.beta import (
    GREEDY_FACTOR,
    CallableGamma,
    ConstantGamma,
    GammaOrder,
    GammaSource,
    GreedyGamma,
    GreedyInformationGain,
    ObservedInformationGain,
    gamma_growth_order,
    gp_ts_scale,
    gp_ucb_beta_compact,
    gp_ucb_beta_finite,
    gp_ucb_beta_rkhs,
    greedy_information_gain,
    igp_ucb_beta,
    incremental_information_gain,
    information_gain,
    information_gain_path,
    observed_information_gain,
    resolve_gamma,
    sigma_multiplier,
    to_botorch_beta,
)
from botorch_bandits.delays import (
    BatchDelay,
    DelayDistribution,
    ExponentialDelay,
    FeedbackLedger,
    FixedDelay,
    GeometricDelay,
    InputDependentDelay,
    PoissonDelay,
    sdf_beta,
    sdf_inflation,
)
from botorch_bandits.models import FiniteArmGP, fixed_gp

__version__ = "0.1.0"

ACQUISITION_FUNCTIONS = (
    "GPUCB",
    "IGPUCB",
    "GPThompsonSampling",
    "GPUCBSDF",
    "GPThompsonSamplingSDF",
)
"""Names of the acquisition classes exported here (used by the contract tests)."""

__all__ = [
    "ACQUISITION_FUNCTIONS",
    "GPUCB",
    "GPUCBSDF",
    "GREEDY_FACTOR",
    "IGPUCB",
    "BatchDelay",
    "CallableGamma",
    "ConstantGamma",
    "DelayDistribution",
    "ExponentialDelay",
    "FeedbackLedger",
    "FiniteArmGP",
    "FixedDelay",
    "GPThompsonSampling",
    "GPThompsonSamplingSDF",
    "GammaOrder",
    "GammaSource",
    "GeometricDelay",
    "GreedyGamma",
    "GreedyInformationGain",
    "InputDependentDelay",
    "ObservedInformationGain",
    "PoissonDelay",
    "__version__",
    "draw_posterior_paths",
    "fixed_gp",
    "gamma_growth_order",
    "gp_ts_scale",
    "gp_ucb_beta_compact",
    "gp_ucb_beta_finite",
    "gp_ucb_beta_rkhs",
    "greedy_information_gain",
    "igp_ucb_beta",
    "incremental_information_gain",
    "information_gain",
    "information_gain_path",
    "num_observations",
    "observed_information_gain",
    "resolve_gamma",
    "sdf_beta",
    "sdf_inflation",
    "sigma_multiplier",
    "to_botorch_beta",
]
