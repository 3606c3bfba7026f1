"""The papers' test problems and simulators, for tutorials and custom studies (as
BoTorch's ``test_functions``): the problems (``problems``: RKHS functions, GP draws,
the finite-arm setting), the finite-arm simulator (``simulator``), the
delayed-feedback (``delayed``; its result: ``delayed_result``),
piecewise-stationary (``piecewise``) and long-term-constrained (``constrained``)
simulators, and Verma et al.'s logistic-regression and SVM tuning workloads
(``lr_tuning``, ``svm_tuning``: the ``lr`` extra). The experiments that run them live
in the repository, not here."""

from __future__ import annotations

from botorch_bandits.test_functions.constrained import (
    ConstrainedProblem,
    ConstrainedResult,
    shi2022_e1_problem,
    shi2022_e2_problem,
    simulate_constrained,
)
from botorch_bandits.test_functions.delayed import simulate_delayed
from botorch_bandits.test_functions.delayed_result import DelayedResult
from botorch_bandits.test_functions.lr_tuning import lr_tuning_problem
from botorch_bandits.test_functions.piecewise import (
    DEFAULT_CPD_C,
    PIECEWISE_ALGORITHMS,
    PiecewiseProblem,
    PiecewiseResult,
    piecewise_gp_problem,
    simulate_piecewise,
)
from botorch_bandits.test_functions.problems import (
    BanditProblem,
    FiniteArmProblem,
    make_kernel,
    rkhs_function,
    rkhs_problem,
    verma_gp_problem,
)
from botorch_bandits.test_functions.simulator import (
    SimulationResult,
    gamma_order,
    simulate,
)
from botorch_bandits.test_functions.svm_tuning import svm_tuning_problem

__all__ = [
    "DEFAULT_CPD_C",
    "PIECEWISE_ALGORITHMS",
    "BanditProblem",
    "ConstrainedProblem",
    "ConstrainedResult",
    "DelayedResult",
    "FiniteArmProblem",
    "PiecewiseProblem",
    "PiecewiseResult",
    "SimulationResult",
    "gamma_order",
    "lr_tuning_problem",
    "make_kernel",
    "piecewise_gp_problem",
    "rkhs_function",
    "rkhs_problem",
    "shi2022_e1_problem",
    "shi2022_e2_problem",
    "simulate",
    "simulate_constrained",
    "simulate_delayed",
    "simulate_piecewise",
    "svm_tuning_problem",
    "verma_gp_problem",
]
