"""The online benchmark's delay problems: evaluations that return after random
delays (geometric, Poisson, heavy-tailed) with 3 to 10 workers, on bounded rewards
with a known floor (conversion rates, accuracies: maximized, clipped to [0, 1]) and
on unbounded objectives (minimized); a development half (censoring's documented
settings are chosen on it) and a validation half (reported, never tuned on), fixed
here before any run. :func:`run_delay_job` runs one (problem, strategy, seed) on
the virtual clock of :func:`~botorch_bandits.demo.async_loop.run_async`."""

from __future__ import annotations

import hashlib
import inspect
import math
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import torch
from torch import Tensor

from bandit_experiments.ax_benchmark.runner import job_environment
from bandit_experiments.ax_benchmark.strategies import (
    AX_DEFAULT,
    configure_strategy,
    strategy_fingerprint,
)
from bandit_experiments.online_benchmark.drift import branin, hartmann
from botorch_bandits.demo.async_loop import run_async
from botorch_bandits.upstream import client_experiment

Fn = Callable[[Tensor], Tensor]

#: the minima of Hartmann-3, -4 and -6 (BoTorch's test functions)
HARTMANN_MIN = {3: -3.86278, 4: -3.134493, 6: -3.32237}
BRANIN_MIN = 0.397887


@dataclass(frozen=True)
class DelayProblem:
    """``value(x)``: the metric's noise-free value (``... x d`` -> ``...``),
    maximized when ``floor`` is given (a bounded reward: observations clipped to
    ``[floor, 1]``; ``floor`` is the censored value), minimized otherwise; ``noise``:
    the observations' noise s.d.; ``workers`` trials in flight; ``delay``: the
    durations' law (``"geometric"``, ``"poisson"`` or ``"heavy"``) with mean
    ``mean_delay`` ticks."""

    name: str
    title: str
    half: str
    dim: int
    value: Fn
    optimum: float
    workers: int
    delay: str
    mean_delay: float
    trials: int = 60
    noise: float = 0.0
    floor: float | None = None

    @property
    def bounded(self) -> bool:
        return self.floor is not None


def _reward(d: int, top: float) -> Fn:
    """Hartmann-``d`` as a rate in ``[0, top]`` (its minimum at ``top``, its
    positive values at 0)."""
    return lambda x: (top * hartmann(d)(x) / HARTMANN_MIN[d]).clamp_min(0.0)


def _accuracy(low: float, span: float, width: float, mirror: bool) -> Fn:
    """A Branin-shaped accuracy in ``(low, low + span]`` (mirrored: its optimum
    moved)."""

    def f(x: Tensor) -> Tensor:
        u = 1.0 - x if mirror else x
        return low + span * torch.exp(-(branin(u) - BRANIN_MIN) / width)

    return f


def _problems() -> list[DelayProblem]:
    hm = hartmann
    return [
        # development half
        DelayProblem(
            "conversion3-geometric",
            "3-D conversion rate in [0, 0.8], 5 workers, geometric delays (mean 4)",
            "dev", 3, _reward(3, 0.8), 0.8, 5, "geometric", 4.0, 60, 0.05, 0.0,
        ),
        DelayProblem(
            "accuracy2-poisson",
            "2-D accuracy in [0.5, 0.95], 8 workers, Poisson delays (mean 10)",
            "dev", 2, _accuracy(0.5, 0.45, 30.0, False), 0.95, 8, "poisson", 10.0,
            60, 0.01, 0.0,
        ),
        DelayProblem(
            "hartmann4-heavy",
            "Hartmann-4 minimized, 8 workers, heavy-tailed delays (mean 4)",
            "dev", 4, hm(4), HARTMANN_MIN[4], 8, "heavy", 4.0, 60, 0.05,
        ),
        # validation half
        DelayProblem(
            "conversion4-poisson",
            "4-D conversion rate in [0, 0.7], 3 workers, Poisson delays (mean 6)",
            "validation", 4, _reward(4, 0.7), 0.7, 3, "poisson", 6.0, 60, 0.05, 0.0,
        ),
        DelayProblem(
            "accuracy2-heavy",
            "2-D accuracy in [0.55, 0.95], 6 workers, heavy-tailed delays (mean 5)",
            "validation", 2, _accuracy(0.55, 0.4, 40.0, True), 0.95, 6, "heavy",
            5.0, 60, 0.02, 0.0,
        ),
        DelayProblem(
            "conversion6-geometric",
            "6-D conversion rate in [0, 0.9], 10 workers, geometric delays (mean 3)",
            "validation", 6, _reward(6, 0.9), 0.9, 10, "geometric", 3.0, 80, 0.03,
            0.0,
        ),
        DelayProblem(
            "branin-poisson",
            "Branin minimized, 5 workers, Poisson delays (mean 4)",
            "validation", 2, branin, BRANIN_MIN, 5, "poisson", 4.0, 60,
        ),
    ]  # fmt: skip


DELAY_PROBLEMS: dict[str, DelayProblem] = {p.name: p for p in _problems()}
DELAY_DEV = [n for n, p in DELAY_PROBLEMS.items() if p.half == "dev"]
DELAY_VALIDATION = [n for n, p in DELAY_PROBLEMS.items() if p.half == "validation"]

#: the strategies: hallucination (the default ``pending``), censoring around IGP-UCB
#: and around qLogNEI (the documented settings added per problem: ``window`` twice
#: the workers, ``y_min`` the floor), ``pending="ignore"``, Ax's default (its
#: pending points), and qLogNEI refitted at every completion with no pending rule
HALLUCINATE = "IGP-UCB"
CENSOR = "IGP-UCB[pending=censor]"
CENSOR_QLOGNEI = "qLogNEI[pending=censor]"
IGNORE = "IGP-UCB[pending=ignore]"
REFIT = "qLogNEI[pending=ignore]"
DELAY_STRATEGIES = [HALLUCINATE, CENSOR, CENSOR_QLOGNEI, IGNORE, AX_DEFAULT, REFIT]
#: the window of the documented setting: this many times the trials in flight
WINDOW_PER_WORKER = 2


def strategies_for(problem: str) -> list[str]:
    """The strategies run on ``problem`` (censoring only on a bounded reward)."""
    if DELAY_PROBLEMS[problem].bounded:
        return list(DELAY_STRATEGIES)
    return [s for s in DELAY_STRATEGIES if "censor" not in s]


def node_label(p: DelayProblem, label: str) -> str:
    """``label`` with censoring's documented settings for ``p`` added (a window of
    :data:`WINDOW_PER_WORKER` times the workers, ``y_min`` the floor) unless the
    label gives them."""
    if "pending=censor" not in label:
        return label
    extra = []
    if "window=" not in label:
        extra.append(f"window={WINDOW_PER_WORKER * p.workers}")
    if "y_min=" not in label:
        extra.append(f"y_min={p.floor}")
    return label[:-1] + "".join(f";{e}" for e in extra) + "]"


def durations(p: DelayProblem) -> Callable[[int, int], float]:
    """A trial's virtual ticks under ``p``'s law (seeded by the seed and the trial):
    geometric (support 1, 2, ...), Poisson (at least 1) or heavy-tailed (1 plus a
    scaled Lomax(1.5), infinite variance), each with mean about ``p.mean_delay``."""
    mu = p.mean_delay

    def ticks(seed: int, index: int) -> float:
        rng = np.random.default_rng([seed, 50, index])
        if p.delay == "geometric":
            return float(rng.geometric(1.0 / mu))
        if p.delay == "poisson":
            return float(max(1, rng.poisson(mu)))
        return float(1 + math.floor(rng.pareto(1.5) * (mu - 0.5) / 2.0))

    return ticks


@cache
def delay_fingerprint(label: str) -> str:
    """The strategy's fingerprint and a hash of what a job measures: a kept job is
    reused only when neither changed."""
    digest = hashlib.sha256()
    for fn in (DelayProblem, _reward, _accuracy, _problems, node_label, durations):
        digest.update(inspect.getsource(fn).encode())
    for fn in (_client, run_delay_job):
        digest.update(inspect.getsource(fn).encode())
    return f"{strategy_fingerprint(label)} delay {digest.hexdigest()[:16]}"


def _client(p: DelayProblem, label: str, seed: int) -> Any:
    from ax import Client, RangeParameterConfig

    client = Client(random_seed=seed)
    client.configure_experiment(
        name=f"delay-{p.name}-{seed}",
        parameters=[
            RangeParameterConfig(
                name=f"x{i + 1}", parameter_type="float", bounds=(0, 1)
            )
            for i in range(p.dim)
        ],
    )
    client.configure_optimization(objective="r" if p.bounded else "-r")
    configure_strategy(client, node_label(p, label), seed)
    return client


def run_delay_job(
    problem: str, strategy: str, seed: int, trials: int | None = None
) -> dict[str, Any]:
    """One (problem, strategy, seed) of ``trials`` trials, ``p.workers`` in flight.
    Returns per-trial lists (in trial order): ``value`` (noise-free), ``regret``
    (the distance to the optimum, >= 0), ``completed_at`` (virtual clock), ``x``;
    the decisions' confidence multipliers (``sigma``) and the last decision's
    censoring counts; the fingerprint."""
    p = DELAY_PROBLEMS[problem]
    trials = p.trials if trials is None else trials
    noise = np.random.default_rng([seed, 50]).normal(size=trials) * p.noise
    values: dict[int, float] = {}
    points: dict[int, list[float]] = {}
    done_at: dict[int, float] = {}
    start = time.perf_counter()
    with job_environment():
        client = _client(p, strategy, seed)

        def submit(params: dict, index: int) -> Future:
            x = torch.tensor([[params[f"x{i + 1}"] for i in range(p.dim)]])
            x = x.to(torch.double)
            with torch.no_grad():
                values[index] = float(p.value(x)[0])
            points[index] = x[0].tolist()
            y = values[index] + float(noise[index])
            if p.bounded:
                y = min(max(y, p.floor), 1.0)
            fut: Future = Future()
            fut.set_result({"r": y})
            return fut

        def on_complete(index: int, clock: float) -> None:
            done_at[index] = clock

        run_async(
            client, submit, trials, p.workers, seed, on_complete, None, durations(p)
        )
        exp = client_experiment(client)
        metas = [
            exp.trials[i].generator_runs[0].gen_metadata or {} for i in range(trials)
        ]
    sign = -1.0 if p.bounded else 1.0
    order = range(trials)
    last = metas[-1]
    return {
        "problem": problem,
        "strategy": strategy,
        "seed": seed,
        "trials": trials,
        "value": [values[i] for i in order],
        "regret": [sign * (values[i] - p.optimum) for i in order],
        "completed_at": [done_at[i] for i in order],
        "x": [points[i] for i in order],
        "sigma": [m.get("sigma_multiplier") for m in metas],
        "late": last.get("late"),
        "censored": last.get("censored"),
        "seconds": time.perf_counter() - start,
        "code": delay_fingerprint(strategy),
    }


__all__ = [
    "CENSOR",
    "CENSOR_QLOGNEI",
    "DELAY_DEV",
    "DELAY_PROBLEMS",
    "DELAY_STRATEGIES",
    "DELAY_VALIDATION",
    "HALLUCINATE",
    "IGNORE",
    "REFIT",
    "DelayProblem",
    "delay_fingerprint",
    "durations",
    "node_label",
    "run_delay_job",
    "strategies_for",
]
