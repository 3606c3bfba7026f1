"""botorch_bandits: bandit algorithms with regret guarantees for BoTorch and Ax.

The top-level package never imports Ax; the Ax integration lives in
``botorch_bandits.ax`` (installed with the ``ax`` extra).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from botorch_bandits._version import __version__

#: public name -> the submodule defining it; imported on first access (PEP 562), so
#: ``import botorch_bandits`` (and the ``botorch-bandits`` command) does not load
#: torch, BoTorch and GPyTorch until a name that needs them is used
_LAZY: dict[str, str] = {
    "GPUCB": "botorch_bandits.acquisition",
    "GPUCBSDF": "botorch_bandits.acquisition",
    "IGPUCB": "botorch_bandits.acquisition",
    "PenalizedUCB": "botorch_bandits.acquisition",
    "TrustRegionAcquisition": "botorch_bandits.acquisition",
    "GPThompsonSampling": "botorch_bandits.acquisition",
    "GPThompsonSamplingSDF": "botorch_bandits.acquisition",
    "draw_posterior_paths": "botorch_bandits.acquisition",
    "num_observations": "botorch_bandits.acquisition",
    "practical_acquisition": "botorch_bandits.acquisition",
    "practical_confidence": "botorch_bandits.acquisition",
    "GREEDY_FACTOR": "botorch_bandits.beta.gain",
    "CallableGamma": "botorch_bandits.beta.gamma",
    "ConstantGamma": "botorch_bandits.beta.gamma",
    "GammaOrder": "botorch_bandits.beta.gamma",
    "GammaSource": "botorch_bandits.beta.gamma",
    "GreedyGamma": "botorch_bandits.beta.gamma",
    "GreedyInformationGain": "botorch_bandits.beta.gain",
    "ObservedInformationGain": "botorch_bandits.beta.gamma",
    "gamma_growth_order": "botorch_bandits.beta.gamma",
    "gp_ts_scale": "botorch_bandits.beta.schedules",
    "gp_ucb_beta_compact": "botorch_bandits.beta.schedules",
    "gp_ucb_beta_finite": "botorch_bandits.beta.schedules",
    "gp_ucb_beta_rkhs": "botorch_bandits.beta.schedules",
    "greedy_information_gain": "botorch_bandits.beta.gain",
    "igp_ucb_beta": "botorch_bandits.beta.schedules",
    "incremental_information_gain": "botorch_bandits.beta.gain",
    "information_gain": "botorch_bandits.beta.gain",
    "information_gain_path": "botorch_bandits.beta.gain",
    "observed_information_gain": "botorch_bandits.beta.gain",
    "resolve_gamma": "botorch_bandits.beta.gamma",
    "sigma_multiplier": "botorch_bandits.beta.schedules",
    "to_botorch_beta": "botorch_bandits.beta.schedules",
    "GPUCBCPD": "botorch_bandits.changepoint",
    "LOG_BASE_READINGS": "botorch_bandits.changepoint",
    "ChangePointDetector": "botorch_bandits.changepoint",
    "box_domain": "botorch_bandits.changepoint",
    "cpd_beta": "botorch_bandits.changepoint",
    "cpd_noise_variance": "botorch_bandits.changepoint",
    "cpd_regularization": "botorch_bandits.changepoint",
    "cpd_threshold": "botorch_bandits.changepoint",
    "cpd_threshold_theory": "botorch_bandits.changepoint",
    "finite_domain": "botorch_bandits.changepoint",
    "ucb_regularization": "botorch_bandits.changepoint",
    "BatchDelay": "botorch_bandits.delays",
    "DelayDistribution": "botorch_bandits.delays",
    "ExponentialDelay": "botorch_bandits.delays",
    "FeedbackLedger": "botorch_bandits.delays",
    "FixedDelay": "botorch_bandits.delays",
    "GeometricDelay": "botorch_bandits.delays",
    "InputDependentDelay": "botorch_bandits.delays",
    "PoissonDelay": "botorch_bandits.delays",
    "sdf_beta": "botorch_bandits.delays",
    "sdf_inflation": "botorch_bandits.delays",
    "FiniteArmGP": "botorch_bandits.models.finite_arm",
    "fixed_gp": "botorch_bandits.models.fixed",
}
#: the core submodules, reachable as attributes as when the package imported them
#: eagerly (``botorch_bandits.beta``); ``botorch_bandits.ax`` and ``.benchmarks`` are
#: imported explicitly, as before
_SUBMODULES = frozenset(
    {"acquisition", "beta", "changepoint", "constraints", "delays", "models"}
)

if TYPE_CHECKING:  # the same names, eagerly, for type checkers and IDEs
    from botorch_bandits.acquisition import (
        GPUCB,
        GPUCBSDF,
        IGPUCB,
        GPThompsonSampling,
        GPThompsonSamplingSDF,
        PenalizedUCB,
        TrustRegionAcquisition,
        draw_posterior_paths,
        num_observations,
        practical_acquisition,
        practical_confidence,
    )
    from botorch_bandits.beta.gain import (
        GREEDY_FACTOR,
        GreedyInformationGain,
        greedy_information_gain,
        incremental_information_gain,
        information_gain,
        information_gain_path,
        observed_information_gain,
    )
    from botorch_bandits.beta.gamma import (
        CallableGamma,
        ConstantGamma,
        GammaOrder,
        GammaSource,
        GreedyGamma,
        ObservedInformationGain,
        gamma_growth_order,
        resolve_gamma,
    )
    from botorch_bandits.beta.schedules import (
        gp_ts_scale,
        gp_ucb_beta_compact,
        gp_ucb_beta_finite,
        gp_ucb_beta_rkhs,
        igp_ucb_beta,
        sigma_multiplier,
        to_botorch_beta,
    )
    from botorch_bandits.changepoint import (
        GPUCBCPD,
        LOG_BASE_READINGS,
        ChangePointDetector,
        box_domain,
        cpd_beta,
        cpd_noise_variance,
        cpd_regularization,
        cpd_threshold,
        cpd_threshold_theory,
        finite_domain,
        ucb_regularization,
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
    from botorch_bandits.models.finite_arm import FiniteArmGP
    from botorch_bandits.models.fixed import fixed_gp

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
    "GPUCBCPD",
    "GPUCBSDF",
    "GREEDY_FACTOR",
    "IGPUCB",
    "LOG_BASE_READINGS",
    "BatchDelay",
    "CallableGamma",
    "ChangePointDetector",
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
    "PenalizedUCB",
    "PoissonDelay",
    "TrustRegionAcquisition",
    "__version__",
    "box_domain",
    "cpd_beta",
    "cpd_noise_variance",
    "cpd_regularization",
    "cpd_threshold",
    "cpd_threshold_theory",
    "draw_posterior_paths",
    "finite_domain",
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
    "practical_acquisition",
    "practical_confidence",
    "resolve_gamma",
    "sdf_beta",
    "sdf_inflation",
    "sigma_multiplier",
    "to_botorch_beta",
    "ucb_regularization",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
