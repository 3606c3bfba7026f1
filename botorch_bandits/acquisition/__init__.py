"""BoTorch acquisition functions with the papers' confidence schedules."""

from botorch_bandits.acquisition import input_constructors  # noqa: F401 (registers)
from botorch_bandits.acquisition._common import num_observations
from botorch_bandits.acquisition.penalized import PenalizedUCB, UnfittedModelWarning
from botorch_bandits.acquisition.practical import (
    practical_acquisition,
    practical_confidence,
)
from botorch_bandits.acquisition.sdf import GPUCBSDF, GPThompsonSamplingSDF
from botorch_bandits.acquisition.thompson import (
    GPThompsonSampling,
    draw_posterior_paths,
)
from botorch_bandits.acquisition.trust_region import TrustRegionAcquisition
from botorch_bandits.acquisition.ucb import GPUCB, IGPUCB

__all__ = [
    "GPUCB",
    "GPUCBSDF",
    "IGPUCB",
    "GPThompsonSampling",
    "GPThompsonSamplingSDF",
    "PenalizedUCB",
    "TrustRegionAcquisition",
    "UnfittedModelWarning",
    "draw_posterior_paths",
    "num_observations",
    "practical_acquisition",
    "practical_confidence",
]
