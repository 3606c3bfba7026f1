r"""Confidence schedules and information gain: the :math:`\beta_t` / :math:`v_t`
schedules in their papers' units (:mod:`.schedules`), the information gain
(:mod:`.gain`) and the sources of :math:`\gamma` (:mod:`.gamma`). Units and the
choice of :math:`\gamma` are explained in ``docs/algorithms.md``."""

from __future__ import annotations

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
    KernelName,
    ObservedInformationGain,
    gamma_growth_order,
    resolve_gamma,
)
from botorch_bandits.beta.schedules import (
    BetaUnit,
    gp_ts_scale,
    gp_ucb_beta_compact,
    gp_ucb_beta_finite,
    gp_ucb_beta_rkhs,
    igp_ucb_beta,
    sigma_multiplier,
    to_botorch_beta,
)

__all__ = [
    "GREEDY_FACTOR",
    "BetaUnit",
    "CallableGamma",
    "ConstantGamma",
    "GammaOrder",
    "GammaSource",
    "GreedyGamma",
    "GreedyInformationGain",
    "KernelName",
    "ObservedInformationGain",
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
    "observed_information_gain",
    "resolve_gamma",
    "sigma_multiplier",
    "to_botorch_beta",
]
