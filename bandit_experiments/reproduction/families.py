"""The simulator families of the reproductions and one job of an experiment.

A :class:`Family` says how its problems run (which simulator, with which settings),
the algorithm names its simulator knows and the metrics it records; :data:`FAMILY_OF`
maps every problem name of :mod:`~bandit_experiments.reproduction.experiments`
to its family, and :func:`run_job` runs one (problem, algorithm) pair through it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from bandit_experiments.reproduction.experiments import (
    CONSTRAINED_PROBLEMS,
    DELAYED_SETTINGS,
    PIECEWISE_SETTINGS,
    PROBLEMS,
)
from botorch_bandits.test_functions import constrained as C
from botorch_bandits.test_functions import piecewise as PW
from botorch_bandits.test_functions.delayed import DELAYED_POLICIES, simulate_delayed
from botorch_bandits.test_functions.simulator import METRICS, POLICIES, simulate

CSV_METRICS = ("cumulative_regret", "simple_regret", "information_gain")
"""Metrics written to the CSV (the average regret is cumulative_regret / step)."""

DELAYED_CSV_METRICS = (
    "simple_regret",
    "simple_regret_in_window",
    "best_value",
    "cumulative_regret",
)

CONSTRAINED_METRICS = (
    "cumulative_regret",
    "constraint_violation",
    "average_regret",
    "average_constraint_violation",
    "average_utility",
)


@dataclass(frozen=True)
class Job:
    """One (problem, algorithm) pair of an experiment and the settings its family's
    simulator reads (each family reads the ones it has a use for)."""

    problem: str
    algorithm: str
    horizon: int
    seeds: int
    seed: int = 0
    delta: float = 0.1
    beta_scale: float = 1.0
    epoch_length: int = 20  # constrained: the multipliers' epoch length S
    refit_every: int | None = None  # delayed: hyperparameter refits
    cpd_regularization: float | None = None  # piecewise: the detector constant c
    cpd_threshold_scale: float | None = None  # piecewise: theta_n = C n^(-6/7)
    options: Mapping[str, Any] | None = None  # piecewise: the reading's settings
    progress: Any = None
    device: str | None = None  # finite-arm: the torch device the seeds run on


@dataclass
class Simulated:
    """What a family's simulator gives for a job: every metric per step (``T x S``),
    each run's final cumulative regret (``S``) and facts beyond the per-step
    statistics."""

    per_step: dict[str, Tensor]
    final_cumulative_regret: Tensor
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    """A kind of problem and the simulator that runs it.

    Attributes:
        name: The family's name.
        problems: Its problems by name (builders or settings).
        algorithms: The algorithm names its simulator knows.
        csv_metrics: The metrics written to the experiment's CSV.
        plot_metrics: The metrics the plot shows, with their axis labels.
        simulate: Runs a :class:`Job` of the family.
        epoch_suffix: Algorithm names may carry an epoch length
            (``"Alg2/S=10"``).
        detector: Its algorithms take the change-point detector's constant
            ``cpd_regularization`` and ``cpd_threshold_scale`` (tuned as Avanesov suggests unless given).
    """

    name: str
    problems: Mapping[str, Any]
    algorithms: Collection[str]
    csv_metrics: tuple[str, ...]
    plot_metrics: Mapping[str, str]
    simulate: Callable[[Job], Simulated]
    epoch_suffix: bool = False
    detector: bool = False

    def knows(self, algorithm: str) -> bool:
        """Whether ``algorithm`` names one of the family's algorithms."""
        base = algorithm.partition("/S=")[0] if self.epoch_suffix else algorithm
        return base in self.algorithms


def _finite_arm(job: Job) -> Simulated:
    problem = PROBLEMS[job.problem](num_seeds=job.seeds, seed=job.seed)
    result = simulate(
        problem if job.device is None else problem.to(job.device),
        job.algorithm,
        job.horizon,
        seed=job.seed,
        delta=job.delta,
        beta_scale=job.beta_scale,
        progress=job.progress,
    )
    per_step = {metric: result.metric(metric) for metric in METRICS}
    return Simulated(per_step, result.cumulative_regret[-1])


def _constrained_name(algorithm: str, epoch_length: int) -> tuple[str, int]:
    """``"Alg2/S=10"`` -> ``("Alg2", 10)``; a plain name keeps ``epoch_length``."""
    base, _, text = algorithm.partition("/S=")
    if not text:
        return base, epoch_length
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"epoch length in {algorithm!r} must be an integer >= 1.")
    return base, int(text)


def _constrained(job: Job) -> Simulated:
    base, epochs = _constrained_name(job.algorithm, job.epoch_length)
    result = C.simulate_constrained(
        CONSTRAINED_PROBLEMS[job.problem](),
        base,
        job.horizon,
        epoch_length=epochs,
        num_seeds=job.seeds,
        delta=job.delta,
        seed=job.seed,
    )
    per_step = {
        "cumulative_regret": result.cumulative_regret,
        "constraint_violation": result.constraint_violation,
        "average_regret": result.time_averaged("cumulative_regret"),
        "average_constraint_violation": result.time_averaged("constraint_violation"),
        "average_utility": result.f.cumsum(0)
        / torch.arange(1, job.horizon + 1, dtype=result.f.dtype).unsqueeze(-1),
    }
    return Simulated(per_step, result.cumulative_regret[-1])


def _delayed(job: Job) -> Simulated:
    setting = DELAYED_SETTINGS[job.problem]
    result = simulate_delayed(
        setting.problem(num_seeds=job.seeds, seed=job.seed),
        job.algorithm,
        job.horizon,
        setting.delays,
        window=setting.window,
        num_init=setting.num_init,
        refit_every=job.refit_every,
        delta=job.delta,
        seed=job.seed,
        progress=job.progress,
    )
    per_step = {m: result.metric(m) for m in DELAYED_CSV_METRICS}
    per_step["average_regret"] = result.average_regret
    return Simulated(per_step, result.cumulative_regret[-1])


def _piecewise(job: Job) -> Simulated:
    K_pieces, _ = PIECEWISE_SETTINGS[job.problem]
    c = PW.DEFAULT_CPD_C if job.cpd_regularization is None else job.cpd_regularization
    result = PW.simulate_piecewise(
        PW.piecewise_gp_problem(
            K_pieces, job.horizon, num_seeds=job.seeds, seed=job.seed
        ),
        job.algorithm,
        c=c,
        **({} if job.cpd_threshold_scale is None else {"C": job.cpd_threshold_scale}),
        seed=job.seed,
        progress=job.progress,
        **(job.options or {}),
    )
    per_step = {
        "cumulative_regret": result.cumulative_regret,
        "average_regret": result.average_regret,
    }
    delays, missed, false = result.detection_delays()
    extra = {
        "num_pieces": K_pieces,
        "detection_delays": delays,
        "missed_changes": missed,
        "false_alarms": false,
        "uniform_steps": float(result.uniform.sum(0).double().mean()),
        "cpd_regularization": c,
        "cpd_threshold_scale": PW.PAPER_THRESHOLD_C
        if job.cpd_threshold_scale is None
        else job.cpd_threshold_scale,
    }
    return Simulated(per_step, result.cumulative_regret[-1], extra)


_CUMULATIVE = {"cumulative_regret": "cumulative regret R_t"}

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "finite-arm",
            PROBLEMS,
            POLICIES,
            CSV_METRICS,
            _CUMULATIVE,
            _finite_arm,
        ),
        Family(
            "constrained",
            CONSTRAINED_PROBLEMS,
            C.ALGORITHMS,
            CONSTRAINED_METRICS,
            {
                "average_regret": "time-averaged regret R_t / t",
                "average_constraint_violation": "time-averaged CV V_t / t",
            },
            _constrained,
            epoch_suffix=True,
        ),
        Family(
            "delayed",
            DELAYED_SETTINGS,
            DELAYED_POLICIES,
            DELAYED_CSV_METRICS,
            {"simple_regret": "simple regret (converted evaluations)"},
            _delayed,
        ),
        Family(
            "piecewise",
            PIECEWISE_SETTINGS,
            PW.PIECEWISE_ALGORITHMS,
            ("cumulative_regret",),
            _CUMULATIVE,
            _piecewise,
            detector=True,
        ),
    )
}
"""The simulator families by name."""

FAMILY_OF: dict[str, Family] = {
    problem: family for family in FAMILIES.values() for problem in family.problems
}
"""Every problem name's family."""


def run_job(
    problem: str,
    algorithm: str,
    horizon: int,
    seeds: int,
    seed: int = 0,
    delta: float = 0.1,
    beta_scale: float = 1.0,
    progress: Any = None,
    threads: int | None = 1,
    epoch_length: int = 20,
    refit_every: int | None = None,
    cpd_regularization: float | None = None,
    options: dict[str, Any] | None = None,
    device: str | None = None,
    cpd_threshold_scale: float | None = None,
) -> dict[str, Any]:
    """One (problem, algorithm) job: build the problem's ``seeds`` instances, simulate,
    and reduce to per-step mean and standard error of every metric. Runs anywhere
    (a worker process, a Dask worker); the result is plain CPU tensors. ``options``:
    the experiment's reading (keyword arguments of the piecewise simulator);
    ``device``: the torch device a finite-arm job's seeds run on (the instances are
    built on the CPU, as without it; the noise then comes from that device's
    generator)."""
    if threads is not None:
        torch.set_num_threads(threads)
    start = time.perf_counter()
    family = FAMILY_OF[problem]
    job = Job(
        problem,
        algorithm,
        horizon,
        seeds,
        seed=seed,
        delta=delta,
        beta_scale=beta_scale,
        epoch_length=epoch_length,
        refit_every=refit_every,
        cpd_regularization=cpd_regularization,
        cpd_threshold_scale=cpd_threshold_scale,
        options=options,
        progress=progress,
        device=device,
    )
    run = family.simulate(job)
    stats = {}
    for metric, values in run.per_step.items():  # T x S
        mean = values.mean(-1)
        se = (
            values.std(-1, unbiased=True) / math.sqrt(seeds)
            if seeds > 1
            else torch.zeros_like(mean)
        )
        stats[metric] = (mean.cpu(), se.cpu())
    return {
        "problem": problem,
        "algorithm": algorithm,
        "n_seeds": seeds,
        "stats": stats,
        "csv_metrics": family.csv_metrics,
        "final_cumulative_regret": run.final_cumulative_regret.cpu(),
        "steps": horizon,
        "seconds": time.perf_counter() - start,
        **run.extra,
    }
