"""The change-point detector's calibration on the online benchmark's drift problems
(``python -m bandit_experiments ax-online --calibrate``): GP-UCB-CPD's uniform steps and restarts
depend only on the uniform steps' values (Algorithm 2), so they are simulated
exactly without the GP: false alarms per 1000 trials without a change, detections
and their delay with one, for the node's own detector (``make_detector``) in the
practical mode, scale-free or the paper's."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from bandit_experiments.common.executors import run_specs
from bandit_experiments.online_benchmark.runner import PROBLEMS
from botorch_bandits.changepoint import GPUCBCPD, within_budget
from botorch_bandits.core import DecisionOptions, Domain
from botorch_bandits.core.steps.restarts import make_detector

#: trials the Ax strategy makes before the bandit node (the centre and Sobol points)
FIRST = 5
#: where the abrupt problems change (share of the trials), as in the benchmark
CHANGE_AT = {"branin-flip": 0.4, "hartmann4-flip": 0.5}


def simulate_restarts(
    problem: str, seed: int, trials: int, detector: str, static: bool
) -> dict[str, Any]:
    """One run of Algorithm 2's rule (with the practical mode's cap on uniform
    steps) on ``problem`` for ``trials`` trials: the node's detector
    (``"scale-free"`` or ``"paper"``) on a 512-point scrambled Sobol decision set;
    the objective at trial ``t`` (``static``: always trial 0's). Returns the
    trials that restarted and the number of uniform steps."""
    p = PROBLEMS[problem]
    opts = DecisionOptions.from_kwargs(restarts=True, cpd_detector=detector)
    unit = torch.quasirandom.SobolEngine(p.dim, scramble=True, seed=seed).draw(
        512, dtype=torch.double
    )
    det = make_detector(Domain.box(unit), opts, opts.restarts)
    xi, share = opts.restarts.xi, opts.restarts.max_uniform_share
    algo = GPUCBCPD(det, xi=xi)
    rng = np.random.default_rng([seed, 29])
    made = 0
    zero = torch.zeros(p.dim, dtype=torch.double)
    for t in range(trials):
        uniform = t >= FIRST and algo.next_is_uniform()
        uniform = uniform and within_budget(made, t, xi, share)
        if not uniform:
            algo.record(zero, 0.0, uniform=False)
            continue
        made += 1
        x = unit[int(rng.integers(len(unit)))]
        with torch.no_grad():
            y = -float(p.value(x.unsqueeze(0), 0 if static else t, trials))
        algo.record(x, y, uniform=True)
    return {
        "problem": problem,
        "seed": seed,
        "detector": detector,
        "trials": trials,
        "static": static,
        "restarts": list(algo.state.restarts),
        "uniform": made,
    }


def calibrate_restarts(
    problems: Sequence[str] | None = None,
    seeds: int = 10,
    long: int = 1000,
    short: int = 100,
    detectors: Sequence[str] = ("scale-free", "paper"),
    workers: int = 1,
) -> list[dict[str, Any]]:
    """For every drift problem (or those of ``problems``) and detector: ``seeds``
    runs without a change
    (``long`` trials) and with the benchmark's drift (``short`` trials, and the
    abrupt problems also over ``long`` trials, the change at the same share)."""
    drift = [n for n, p in PROBLEMS.items() if p.kind == "drift"]
    if problems is not None:
        if not problems or any(n not in drift for n in problems):
            raise ValueError(
                f"`problems` must be drift problems among {drift}, got {list(problems)!r}."
            )
        drift = list(problems)
    specs = []
    for det in detectors:
        for n in drift:
            for s in range(seeds):
                specs.append(
                    dict(problem=n, seed=s, trials=long, detector=det, static=True)
                )
                specs.append(
                    dict(problem=n, seed=s, trials=short, detector=det, static=False)
                )
                if n in CHANGE_AT:
                    specs.append(
                        dict(problem=n, seed=s, trials=long, detector=det, static=False)
                    )
    return run_specs(simulate_restarts, specs, workers)


def calibration_lines(runs: Sequence[dict[str, Any]]) -> list[str]:
    """The Markdown tables: false alarms per 1000 trials without a change; with
    the change, the runs that restarted after it, the mean delay (trials from the
    change to the first restart after it) and the restarts before it; on the
    gradual problems the restarts and the first one."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in runs:
        groups.setdefault(
            (r["detector"], r["problem"], r["trials"], r["static"]), []
        ).append(r)
    lines = [
        "| detector | problem | trials | runs | false alarms / 1000 trials | uniform share |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for (det, prob, T, static), rs in sorted(groups.items()):
        if not static:
            continue
        alarms = sum(len(r["restarts"]) for r in rs) / (len(rs) * T) * 1000
        share = np.mean([r["uniform"] / T for r in rs])
        lines.append(
            f"| {det} | {prob} | {T} | {len(rs)} | {alarms:.2f} | {share:.3f} |"
        )
    lines += [
        "",
        "| detector | problem | trials | change at | runs | detected | mean delay "
        "(trials) | restarts before the change | restarts per run | uniform share |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for (det, prob, T, static), rs in sorted(groups.items()):
        if static:
            continue
        at = CHANGE_AT.get(prob)
        per_run = np.mean([len(r["restarts"]) for r in rs])
        share = np.mean([r["uniform"] / T for r in rs])
        if at is None:  # gradual: no single change
            first = [r["restarts"][0] for r in rs if r["restarts"]]
            where = f"first at {np.mean(first):.0f}" if first else "none"
            lines.append(
                f"| {det} | {prob} | {T} | gradual | {len(rs)} | {where} | - | - | "
                f"{per_run:.2f} | {share:.3f} |"
            )
            continue
        change = math.ceil(at * T)
        after = [
            min([x for x in r["restarts"] if x >= change], default=None) for r in rs
        ]
        hits = [a - change for a in after if a is not None]
        before = sum(sum(x < change for x in r["restarts"]) for r in rs)
        delay = f"{np.mean(hits):.1f}" if hits else "-"
        lines.append(
            f"| {det} | {prob} | {T} | {change} | {len(rs)} | {len(hits)} | {delay} | "
            f"{before} | {per_run:.2f} | {share:.3f} |"
        )
    return lines


__all__ = ["calibrate_restarts", "calibration_lines", "simulate_restarts"]
