"""The papers' problems run through ``ax.Client`` with the bandit strategy, to check
that the Ax integration behaves as the simulators do (``python -m bandit_experiments ax-check``):
``piecewise`` (Avanesov's piecewise-stationary GP draws, restarts against none) and
``constrained`` (Shi & Eryilmaz App. E.1, long-term constraints against unconstrained
IGP-UCB), trials one at a time. The settings: ``python -m bandit_experiments ax-check --help``.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

import numpy as np
import torch

from botorch_bandits.changepoint import cpd_noise_variance
from botorch_bandits.demo.summary import mean_and_standard_error
from botorch_bandits.test_functions.constrained import shi2022_e1_problem
from botorch_bandits.test_functions.piecewise import (
    DEFAULT_CPD_C,
    piecewise_gp_problem,
)
from botorch_bandits.upstream import client_experiment


def _sequential(client: Any, trials: int, data: Callable[[dict, int], dict]) -> None:
    for _ in range(trials):
        ((idx, params),) = client.get_next_trials(max_trials=1).items()
        client.complete_trial(trial_index=idx, raw_data=data(params, idx))


def _quiet() -> None:
    logging.disable(logging.INFO)  # Ax logs every trial at INFO
    warnings.simplefilter("ignore")


def piecewise_run(
    seed: int, trials: int, restarts: bool, cpd_regularization: float | None = None
) -> dict[str, Any]:
    """One seed: the dynamic regret curve and the restarts of the Ax strategy."""
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax.strategy import bandit_generation_strategy

    _quiet()
    problem = piecewise_gp_problem(num_pieces=2, horizon=trials, num_seeds=1, seed=seed)
    grid = problem.arms.reshape(-1).numpy()
    values = problem.values[:, 0].numpy()  # pieces x N
    change = problem.change_points[0]
    rng = np.random.default_rng([seed, 3])
    noise = rng.normal(size=trials) * problem.noise_sd

    def f(piece: int, x: float) -> float:
        return float(np.interp(x, grid, values[piece]))

    def data(params: dict, idx: int) -> dict:
        return {"f": f(int(idx >= change), params["x"]) + float(noise[idx])}

    client = Client(random_seed=seed)
    client.configure_experiment(
        name=f"pw-{seed}",
        parameters=[
            RangeParameterConfig(name="x", bounds=(0.0, 5.0), parameter_type="float")
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(
        bandit_generation_strategy(
            algorithm="IGP-UCB",
            mode="theory",  # the paper's setting: known kernel, B and R
            num_init=3,
            seed=seed,
            kernel="matern52",
            lengthscale=0.2,  # 1 on [0, 5]
            noise=cpd_noise_variance(problem.noise_sd, trials),
            beta=1.0,
            num_candidates=1000,
            restarts=restarts,
            xi=math.sqrt(3.0),  # GP-UCB-CPD's uniform steps (with restarts only)
            cpd_regularization=DEFAULT_CPD_C
            if cpd_regularization is None
            else cpd_regularization,
            cpd_threshold_scale=2.6,
        )
    )
    _sequential(client, trials, data)
    exp = client_experiment(client)
    xs = [exp.trials[i].arms[0].parameters["x"] for i in range(trials)]
    best = values.max(-1)
    regret = [best[int(i >= change)] - f(int(i >= change), x) for i, x in enumerate(xs)]
    meta = exp.trials[trials - 1].generator_runs[0].gen_metadata
    return {
        "regret": np.cumsum(regret),
        "restarts": list(meta.get("cpd_restarts", [])),
        "change": change,
    }


def constrained_run(seed: int, trials: int, constrained: bool) -> dict[str, Any]:
    """One seed of App. E.1 through Ax: time-averaged CV and regret curves."""
    from ax import ChoiceParameterConfig, Client

    from botorch_bandits.ax.strategy import bandit_generation_strategy

    _quiet()
    problem = shi2022_e1_problem()
    lin = [float(v) for v in np.linspace(0.0, 6.0, 25)]
    rng = np.random.default_rng([seed, 5])
    noise = rng.normal(size=trials) * problem.noise_sd_f

    def f(p: dict) -> float:
        return -math.sin(p["x1"]) - p["x2"]

    def g(p: dict) -> float:
        return math.sin(p["x1"]) * math.sin(p["x2"]) + 0.95

    def data(params: dict, idx: int) -> dict:
        return {"f": f(params) + float(noise[idx]), "g": g(params)}

    client = Client(random_seed=seed)
    client.configure_experiment(
        name=f"e1-{seed}",
        parameters=[
            ChoiceParameterConfig(
                name=n, values=lin, parameter_type="float", is_ordered=True
            )
            for n in ("x1", "x2")
        ],
    )
    # the unconstrained baseline tracks g without a constraint (BanditNode refuses
    # outcome constraints it would ignore)
    client.configure_optimization(
        objective="f", outcome_constraints=["g <= 0"] if constrained else None
    )
    client.set_generation_strategy(
        bandit_generation_strategy(
            algorithm="IGP-UCB",
            mode="theory",  # the paper's setting: known kernel, B and R
            num_init=1,  # the simulator's uniformly random first point
            seed=seed,
            kernel="matern52",
            # 1 on [0, 6]: Ax encodes an ordered choice by its index, grid point k
            # (x = k/4) at (k + 1/2)/25 on the unit cube, so 1 in x is 4/25
            lengthscale=4.0 / 25.0,
            noise=problem.noise,
            B=problem.B,
            R=problem.noise_sd_f,
            delta=0.1,
            num_candidates=625,
            long_term_constraints=constrained,
            # the epochs are the constraints' options: the unconstrained baseline
            # takes none (they are refused when the constraints are off)
            **(
                dict(epoch_length=20, num_epochs=math.ceil(trials / 20))
                if constrained
                else {}
            ),
        )
    )
    _sequential(client, trials, data)
    exp = client_experiment(client)
    ps = [exp.trials[i].arms[0].parameters for i in range(trials)]
    t = np.arange(1, trials + 1)
    kappa = exp.trials[trials - 1].generator_runs[0].gen_metadata.get("kappa")
    return {
        "avg_cv": np.cumsum([g(p) for p in ps]) / t,
        "avg_regret": np.cumsum([problem.optimum - f(p) for p in ps]) / t,
        "kappa": kappa,
    }


def run_check(
    name: str,
    seeds: int,
    trials: int,
    jobs: int = 1,
    cpd_regularization: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[str]:
    """Run a check over ``seeds`` seeds (``jobs`` processes); the report lines.
    ``progress(done, total)`` is called as each run ends."""
    torch.set_num_threads(1)
    if name == "piecewise":
        fn, arms = piecewise_run, {"GP-UCB-CPD (restarts)": True, "no restarts": False}
    elif name == "constrained":
        fn, arms = constrained_run, {"Alg. 2 (long-term)": True, "IGP-UCB": False}
    else:
        raise ValueError(f"`name` must be 'piecewise' or 'constrained', got {name!r}.")
    extra = {"cpd_regularization": cpd_regularization} if name == "piecewise" else {}
    jobs_list = [
        (fn, s, trials, flag, extra) for flag in arms.values() for s in range(seeds)
    ]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_call, job) for job in jobs_list]
        for done, _ in enumerate(as_completed(futures), 1):
            if progress is not None:
                progress(done, len(futures))
        results = [f.result() for f in futures]
    lines = []
    checkpoints = [t for t in (40, 100, 200, 350, trials) if t <= trials]
    checkpoints = sorted(set(checkpoints))
    for k, label in enumerate(arms):
        rs = results[k * seeds : (k + 1) * seeds]
        if name == "piecewise":
            m, se = mean_and_standard_error(np.stack([r["regret"] for r in rs]))
            restarts = [r["restarts"] for r in rs]
            lines.append(
                f"{label:<24s} dynamic regret R_T = {m[-1]:.2f} ± {se[-1]:.2f} "
                f"(T = {trials}, change at {rs[0]['change']}); restarts per seed: "
                f"{restarts}"
            )
        else:
            cv, cse = mean_and_standard_error(np.stack([r["avg_cv"] for r in rs]))
            rg, _ = mean_and_standard_error(np.stack([r["avg_regret"] for r in rs]))
            cells = ", ".join(
                f"t={t}: R/t {rg[t - 1]:.3f} CV/t {cv[t - 1]:.3f}±{cse[t - 1]:.3f}"
                for t in checkpoints
            )
            lines.append(f"{label:<20s} {cells}; kappa_T {[r['kappa'] for r in rs]}")
    return lines


def _call(args: tuple) -> dict:
    fn, seed, trials, flag, extra = args
    return fn(seed, trials, flag, **extra)
