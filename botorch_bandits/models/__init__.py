"""Models: the papers' fixed-kernel GPs (:mod:`.fixed`), the exact finite-arm engine
(:mod:`.finite_arm`, its checked inputs :mod:`.arm_inputs`, its square roots
:mod:`.roots`), the practical mode's fitted GP (:mod:`.practical`) and the sparse
(Nystroem / DTC) GP for long runs (:mod:`.sparse`)."""

from __future__ import annotations

from botorch_bandits.models.finite_arm import FiniteArmGP
from botorch_bandits.models.fixed import fixed_gp, make_kernel
from botorch_bandits.models.practical import (
    STANDARDIZED_QUANTUM,
    fit_practical_gp,
    fixed_threads,
    gp_hyperparameters,
    one_thread,
    practical_gp,
    standardize,
)
from botorch_bandits.models.sparse import (
    FeatureCache,
    NystromGP,
    draw_dictionary,
    drawn_on,
)

__all__ = [
    "STANDARDIZED_QUANTUM",
    "FeatureCache",
    "FiniteArmGP",
    "NystromGP",
    "draw_dictionary",
    "drawn_on",
    "fit_practical_gp",
    "fixed_gp",
    "fixed_threads",
    "gp_hyperparameters",
    "make_kernel",
    "one_thread",
    "practical_gp",
    "standardize",
]
