"""A plain BoTorch loop on the Ax benchmark's float problems (no Ax): the same fitted
``SingleTaskGP`` (BoTorch's defaults, ``Standardize``) and the same optimizer
(``optimize_acqf``, Ax's 20 restarts and 1024 raw samples) for every policy, so the
policies differ only in the acquisition -- the package's IGP-UCB and GP-TS built by
``practical_acquisition`` against BoTorch's ``UpperConfidenceBound(beta=2)``,
``LogExpectedImprovement`` and ``PathwiseThompsonSampling``."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from botorch.acquisition import LogExpectedImprovement, UpperConfidenceBound
from botorch.acquisition.thompson_sampling import PathwiseThompsonSampling
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf
from gpytorch.mlls import ExactMarginalLogLikelihood
from torch import Tensor
from torch.quasirandom import SobolEngine

from bandit_experiments.ax_benchmark.problems import (
    Problem,
    Range,
    repeated_configurations,
    unit_to_params,
)
from bandit_experiments.ax_benchmark.suite import PROBLEMS
from botorch_bandits.acquisition.practical import practical_acquisition
from botorch_bandits.demo.summary import mean_and_standard_error
from botorch_bandits.models import one_thread
from botorch_bandits.seeding import step_seed

#: the loop's policies: the model (maximizing -f) and the round -> an acquisition
POLICIES: dict[str, Callable[[SingleTaskGP, Tensor, int], Any]] = {
    "IGP-UCB (practical_acquisition)": lambda m, Y, s: practical_acquisition(m),
    "GP-TS (practical_acquisition)": lambda m, Y, s: practical_acquisition(
        m, "GP-TS", seed=s, sampler="pathwise"
    ),
    "UCB(beta=2)": lambda m, Y, s: UpperConfidenceBound(m, beta=2.0),
    "LogEI": lambda m, Y, s: LogExpectedImprovement(m, best_f=Y.max()),
    "PathwiseTS": lambda m, Y, s: PathwiseThompsonSampling(m),
}
#: Sobol points before the first model (Ax's default initialization budget)
NUM_INIT = 5


def float_problems() -> list[str]:
    """The problems whose parameters are all float ranges (the loop's unit cube)."""
    return [
        name
        for name, p in PROBLEMS.items()
        if all(isinstance(q, Range) and q.kind == "float" for q in p.parameters)
        and not p.constraints
    ]


def run_loop(problem: str, policy: str, seed: int, trials: int) -> dict[str, Any]:
    """One run: ``NUM_INIT`` scrambled Sobol points (seeded by ``seed``, the same for
    every policy), then ``trials - NUM_INIT`` rounds of fit, acquisition, optimize.
    Returns the per-trial noise-free values, the cumulative and simple regrets (the
    problem minimized, against its stated minimum) and the repeated points."""
    if problem not in float_problems():
        raise ValueError(
            f"`problem` must be one of the float problems {float_problems()}, "
            f"got {problem!r}."
        )
    if policy not in POLICIES:
        raise ValueError(f"`policy` must be one of {list(POLICIES)}, got {policy!r}.")
    prob: Problem = PROBLEMS[problem]
    d = len(prob.parameters)
    bounds = torch.tensor([[0.0] * d, [1.0] * d], dtype=torch.double)
    X = SobolEngine(d, scramble=True, seed=seed).draw(NUM_INIT, dtype=torch.double)
    values = [_value(prob, x, seed, i) for i, x in enumerate(X)]
    true = [prob(unit_to_params(prob.parameters, x.tolist())) for x in X]
    with one_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in range(NUM_INIT, trials):
            Y = -torch.tensor(values, dtype=torch.double).reshape(-1, 1)
            torch.manual_seed(step_seed(seed, t))
            model = SingleTaskGP(X, Y)
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            acqf = POLICIES[policy](model, Y, step_seed(seed, t))
            x, _ = optimize_acqf(
                acqf, bounds=bounds, q=1, num_restarts=20, raw_samples=1024
            )
            x = x.detach().reshape(-1)
            X = torch.cat([X, x.unsqueeze(0)])
            values.append(_value(prob, x, seed, t))
            true.append(prob(unit_to_params(prob.parameters, x.tolist())))
    return {
        "problem": problem,
        "policy": policy,
        "seed": seed,
        "noise_free_value": true,
        **prob.regrets(true),
        "repeats": repeated_configurations(
            [unit_to_params(prob.parameters, x) for x in X.tolist()]
        ),
        "on_bound": float(((X == 0) | (X == 1)).double().mean()),
    }


def _value(prob: Problem, x: Tensor, seed: int, trial: int) -> float:
    return prob.observe(unit_to_params(prob.parameters, x.tolist()), seed, trial)


def summarize_loops(jobs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per problem and policy: final cumulative and simple regret, mean and s.e. over
    the seeds, and the mean repeats and share of coordinates on a bound."""
    rows = []
    keys = dict.fromkeys((j["problem"], j["policy"]) for j in jobs)
    for problem, policy in keys:
        runs = [j for j in jobs if (j["problem"], j["policy"]) == (problem, policy)]
        row: dict[str, Any] = {"problem": problem, "policy": policy, "seeds": len(runs)}
        for key in ("cumulative_regret", "simple_regret"):
            last = torch.tensor([[r[key][-1]] for r in runs], dtype=torch.double)
            mean, se = mean_and_standard_error(last)
            row[f"{key}_mean"], row[f"{key}_se"] = float(mean), float(se)
        row["repeats_mean"] = float(np.mean([r["repeats"] for r in runs]))
        row["on_bound_mean"] = float(np.mean([r["on_bound"] for r in runs]))
        rows.append(row)
    return rows
