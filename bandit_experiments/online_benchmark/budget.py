"""The online benchmark's budget problems: an objective minimized on the unit cube
under one or two costs that must stay within their bounds on average (tight and
loose budgets, a constraint satisfiable only in a small region, noisy costs with
and without reported SEMs; 2 to 6 dimensions, 60 to 150 trials), split into a
development half (the long-term constraints' practical defaults are chosen on it)
and a validation half (reported, never tuned on). The split is fixed here, before
any run; :func:`run_budget_job` runs one (problem, strategy, seed)."""

from __future__ import annotations

import hashlib
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import torch
from scipy.optimize import minimize
from torch import Tensor

from bandit_experiments.ax_benchmark.runner import GROWTH_INIT, job_environment
from bandit_experiments.ax_benchmark.strategies import (
    AX_DEFAULT,
    configure_strategy,
    strategy_fingerprint,
)
from bandit_experiments.online_benchmark.drift import branin, hartmann
from botorch_bandits.upstream import client_experiment

Fn = Callable[[Tensor], Tensor]


@dataclass(frozen=True)
class BudgetProblem:
    """``value(x)``: the objective (``... x d`` -> ``...``, minimized); ``costs(x)``
    (``... x d`` -> ``... x m``): the constraints, each ``<= 0`` on average over
    the run; ``noise``: the objective's noise s.d.; ``cost_noise``: the observed
    costs' noise s.d. (the regret and violations use the noise-free costs);
    ``sem``: whether the noisy costs are reported with their SEM."""

    name: str
    title: str
    half: str
    dim: int
    value: Fn
    costs: Fn
    trials: int
    noise: float = 0.0
    cost_noise: float = 0.0
    sem: bool = False

    @property
    def m(self) -> int:
        return int(
            self.costs(torch.full((1, self.dim), 0.5, dtype=torch.double)).shape[-1]
        )


def _stack(*fns: Fn) -> Fn:
    return lambda x: torch.stack([f(x) for f in fns], dim=-1)


def _sweet_spot(
    centre: tuple[float, ...], width: float, top: float, depth: float
) -> Fn:
    """A cost ``top`` far from ``centre`` and ``top - depth`` at it (a Gaussian
    dip of ``width``): within budget only in a small region around ``centre``."""
    c = torch.tensor(centre, dtype=torch.double)

    def cost(x: Tensor) -> Tensor:
        r2 = (x - c.to(x)).square().sum(-1)
        return top - depth * torch.exp(-r2 / (2 * width**2))

    return cost


def _problems() -> list[BudgetProblem]:
    h3, h4, h6 = hartmann(3), hartmann(4), hartmann(6)
    return [
        # ---------------------------------------------------------------- dev
        BudgetProblem(
            "hartmann3-tight",
            "Hartmann-3, a cost x3 of at most 0.4 on average (the optimum has 0.85)",
            "dev",
            3,
            h3,
            _stack(lambda x: x[..., 2] - 0.4),
            60,
        ),
        BudgetProblem(
            "branin-two",
            "Branin (noise s.d. 2), two costs: x1 <= 0.45 and x2 <= 0.6 on average",
            "dev",
            2,
            branin,
            _stack(lambda x: x[..., 0] - 0.45, lambda x: x[..., 1] - 0.6),
            80,
            noise=2.0,
        ),
        BudgetProblem(
            "hartmann4-noisy-cost",
            "Hartmann-4, a noisy cost (s.d. 0.1) x3 <= 0.4 on average",
            "dev",
            4,
            h4,
            _stack(lambda x: x[..., 2] - 0.4),
            100,
            cost_noise=0.1,
        ),
        # --------------------------------------------------------- validation
        BudgetProblem(
            "hartmann6-loose",
            "Hartmann-6 (noise s.d. 0.05), a cost x6 <= 0.55 on average "
            "(the optimum has 0.66)",
            "validation",
            6,
            h6,
            _stack(lambda x: x[..., 5] - 0.55),
            120,
            noise=0.05,
        ),
        BudgetProblem(
            "branin-sweet-spot",
            "Branin, a cost within budget only within 0.23 of (0.3, 0.45)",
            "validation",
            2,
            branin,
            _stack(_sweet_spot((0.3, 0.45), 0.12, 0.2, 1.2)),
            60,
        ),
        BudgetProblem(
            "hartmann4-two",
            "Hartmann-4, two costs: x2 + x4 <= 0.9 and x3 <= 0.45 on average",
            "validation",
            4,
            h4,
            _stack(
                lambda x: x[..., 1] + x[..., 3] - 0.9,
                lambda x: x[..., 2] - 0.45,
            ),
            80,
        ),
        BudgetProblem(
            "hartmann3-sem-cost",
            "Hartmann-3 (noise s.d. 0.05), a noisy cost (s.d. 0.05, SEM reported) "
            "x1 + x3 <= 0.8 on average",
            "validation",
            3,
            h3,
            _stack(lambda x: x[..., 0] + x[..., 2] - 0.8),
            150,
            noise=0.05,
            cost_noise=0.05,
            sem=True,
        ),
    ]


BUDGET_PROBLEMS: dict[str, BudgetProblem] = {p.name: p for p in _problems()}
BUDGET_DEV = [n for n, p in BUDGET_PROBLEMS.items() if p.half == "dev"]
BUDGET_VALIDATION = [n for n, p in BUDGET_PROBLEMS.items() if p.half == "validation"]

#: the strategies on every budget problem: plain IGP-UCB (not told of the budget),
#: the long-term constraints around IGP-UCB and around qLogNEI, Ax's default with
#: the per-trial outcome constraints
PLAIN = "IGP-UCB"
LONG_TERM = "IGP-UCB[long_term_constraints=True]"
LONG_TERM_QLOGNEI = "qLogNEI[long_term_constraints=True]"
BUDGET_STRATEGIES = [LONG_TERM, LONG_TERM_QLOGNEI, AX_DEFAULT, PLAIN]


# --------------------------------------------------------------------------------------
# the best feasible point, the costs' ranges
# --------------------------------------------------------------------------------------
def _grid(d: int) -> Tensor:
    if d == 2:
        g = torch.linspace(0, 1, 513, dtype=torch.double)
        return torch.cartesian_prod(g, g)
    return torch.quasirandom.SobolEngine(d, scramble=True, seed=0).draw(
        2**14, dtype=torch.double
    )


@cache
def feasible_optimum(problem: str) -> float:
    """The minimum of the objective over the points where every cost is ``<= 0``:
    the best of a 513^2 grid (2-D) or 2^14 scrambled Sobol points, polished by
    SLSQP from the five best."""
    p = BUDGET_PROBLEMS[problem]
    X = _grid(p.dim)
    with torch.no_grad():
        ok = (p.costs(X) <= 0).all(-1)
        v = torch.where(ok, p.value(X), torch.inf)
    best = float(v.min())

    def fun(u: np.ndarray) -> tuple[float, np.ndarray]:
        x = torch.tensor(u, dtype=torch.double, requires_grad=True)
        y = p.value(x.unsqueeze(0)).sum()
        y.backward()
        return y.item(), x.grad.numpy()

    cons = [
        {"type": "ineq", "fun": lambda u, j=j: -float(p.costs(torch.tensor(u))[j])}
        for j in range(p.m)
    ]
    for i in torch.argsort(v)[:5].tolist():
        res = minimize(
            fun,
            X[i].numpy(),
            jac=True,
            bounds=[(0.0, 1.0)] * p.dim,
            method="SLSQP",
            constraints=cons,
        )
        x = torch.tensor(res.x, dtype=torch.double).clamp(0, 1)
        if bool((p.costs(x) <= 1e-9).all()):
            best = min(best, float(p.value(x.unsqueeze(0))))
    return best


@cache
def cost_ranges(problem: str) -> tuple[float, ...]:
    """Each cost's range (max - min) over the unit cube (on :func:`_grid`)."""
    p = BUDGET_PROBLEMS[problem]
    with torch.no_grad():
        C = p.costs(_grid(p.dim))
    return tuple((C.amax(0) - C.amin(0)).tolist())


@cache
def budget_fingerprint(label: str) -> str:
    """The strategy's fingerprint and a hash of what a job measures (the problems,
    the best feasible point, the job's loop and its Ax client): a kept job is
    reused only when neither changed (the tables may change without a rerun)."""
    digest = hashlib.sha256()
    for fn in (BudgetProblem, _stack, _sweet_spot, _problems, _grid):
        digest.update(inspect.getsource(fn).encode())
    for fn in (feasible_optimum, _client, run_budget_job):
        digest.update(inspect.getsource(fn).encode())
    return f"{strategy_fingerprint(label)} budget {digest.hexdigest()[:16]}"


# --------------------------------------------------------------------------------------
# one job
# --------------------------------------------------------------------------------------
def _client(p: BudgetProblem, label: str, seed: int) -> Any:
    from ax import Client, RangeParameterConfig

    client = Client(random_seed=seed)
    client.configure_experiment(
        name=f"budget-{p.name}-{seed}",
        parameters=[
            RangeParameterConfig(
                name=f"x{i + 1}", parameter_type="float", bounds=(0, 1)
            )
            for i in range(p.dim)
        ],
    )
    # the costs are outcome constraints for the strategies that read them (Ax's
    # default: per trial; the long-term constraints: on average); plain IGP-UCB is
    # not told (it refuses a constraint it would ignore)
    told = label == AX_DEFAULT or "long_term" in label
    client.configure_optimization(
        objective="-f",
        outcome_constraints=[f"c{j + 1} <= 0" for j in range(p.m)] if told else None,
    )
    configure_strategy(client, label, seed)
    return client


def run_budget_job(
    problem: str, strategy: str, seed: int, trials: int | None = None
) -> dict[str, Any]:
    """One (problem, strategy, seed) of ``trials`` trials, run in sequence. Returns
    per-trial lists (in trial order): ``value`` (noise-free objective), ``regret``
    (against the best feasible point), ``costs`` (noise-free, ``trials x m``); the
    last decision's metadata keys of the long-term constraints; the fingerprint."""
    p = BUDGET_PROBLEMS[problem]
    trials = p.trials if trials is None else trials
    rng = np.random.default_rng([seed, 49])
    noise = rng.normal(size=trials) * p.noise
    cost_noise = rng.normal(size=(trials, p.m)) * p.cost_noise
    values: dict[int, float] = {}
    costs: dict[int, list[float]] = {}
    start = time.perf_counter()
    with job_environment():
        client = _client(p, strategy, seed)
        for _ in range(trials):
            ((index, params),) = client.get_next_trials(max_trials=1).items()
            x = torch.tensor(
                [[params[f"x{i + 1}"] for i in range(p.dim)]], dtype=torch.double
            )
            with torch.no_grad():
                values[index] = float(p.value(x)[0])
                costs[index] = p.costs(x)[0].tolist()
            data: dict[str, Any] = {"f": values[index] + float(noise[index])}
            for j in range(p.m):
                seen = costs[index][j] + float(cost_noise[index, j])
                data[f"c{j + 1}"] = (seen, p.cost_noise) if p.sem else seen
            client.complete_trial(trial_index=index, raw_data=data)
        exp = client_experiment(client)
        last = exp.trials[trials - 1].generator_runs[0].gen_metadata or {}
    best = feasible_optimum(problem)
    return {
        "problem": problem,
        "strategy": strategy,
        "seed": seed,
        "trials": trials,
        "value": [values[i] for i in range(trials)],
        "regret": [values[i] - best for i in range(trials)],
        "costs": [costs[i] for i in range(trials)],
        "kappa": last.get("kappa"),
        "budget": last.get("budget"),
        "seconds": time.perf_counter() - start,
        "code": budget_fingerprint(strategy),
    }


def budget_growth_setup(
    problem: str, label: str, seed: int, n: int
) -> tuple[Any, Any, list[dict[str, float]]]:
    """The growth command's setup (``generation_growth(setup=...)``) on a budget
    problem: its client (the costs the outcome constraints of the strategies told
    of them, as in :func:`run_budget_job`), a trial's raw data (objective and costs
    with their noise, seeded by trial) and ``n - GROWTH_INIT`` scrambled-Sobol
    points of the unit cube to attach."""
    p = BUDGET_PROBLEMS[problem]
    names = [f"x{i + 1}" for i in range(p.dim)]

    def data(params: dict[str, float], index: int) -> dict[str, float]:
        x = torch.tensor([[params[k] for k in names]], dtype=torch.double)
        rng = np.random.default_rng([seed, 49, index])
        with torch.no_grad():
            out = {"f": float(p.value(x)[0]) + p.noise * float(rng.normal())}
            for j, c in enumerate(p.costs(x)[0].tolist()):
                out[f"c{j + 1}"] = c + p.cost_noise * float(rng.normal())
        return out

    count = max(n - GROWTH_INIT, 0)
    unit = torch.quasirandom.SobolEngine(p.dim, scramble=True, seed=seed + 7)
    points = [dict(zip(names, u, strict=True)) for u in unit.draw(count).tolist()]
    return _client(p, label, seed), data, points


__all__ = [
    "BUDGET_DEV",
    "BUDGET_PROBLEMS",
    "BUDGET_STRATEGIES",
    "BUDGET_VALIDATION",
    "LONG_TERM",
    "LONG_TERM_QLOGNEI",
    "PLAIN",
    "BudgetProblem",
    "budget_fingerprint",
    "budget_growth_setup",
    "cost_ranges",
    "feasible_optimum",
    "run_budget_job",
]
