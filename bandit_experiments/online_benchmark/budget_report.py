"""The budget problems run and reported (``python -m bandit_experiments ax-online --problems
budget-dev`` / ``budget-validation``, ``--budget-report DIR``): every (problem,
strategy, seed) job kept under ``OUT/jobs`` and reused while its fingerprint
holds; per half a table of cumulative regret against the best feasible point and
the running average of each cost at 25 %, 50 % and 100 % of the run, and the
issue's goal: the budget held at 50 % and 100 % on >= 80 % of runs, and lower
regret than Ax's default on >= 80 % of problems."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bandit_experiments.ax_benchmark.runner import JobStore
from bandit_experiments.ax_benchmark.strategies import AX_DEFAULT, parse_label
from bandit_experiments.common.executors import run_kept
from bandit_experiments.common.summary import kept_jobs_heading, mean_se_text
from bandit_experiments.online_benchmark.budget import (
    BUDGET_DEV,
    BUDGET_PROBLEMS,
    BUDGET_STRATEGIES,
    BUDGET_VALIDATION,
    budget_fingerprint,
    cost_ranges,
    run_budget_job,
)

#: the fractions of the run at which the running average of each cost is read
FRACTIONS = (0.25, 0.5, 1.0)
#: a cost's running average counts as within its bound up to this share of its range
TOLERANCE = 0.01
#: the goal's shares: runs holding the budget, problems beating Ax's default
GOAL_HELD = 0.8
GOAL_BEATEN = 0.8
HALVES = {"budget-dev": BUDGET_DEV, "budget-validation": BUDGET_VALIDATION}
#: what the development half's labels meant when its candidates ran
CANDIDATES = (
    "Candidates: `IGP-UCB[long_term_constraints=True]` here is the first candidate "
    "(step 1, slack 0.1, kappa^1 = 1, a GP per constraint); each other candidate "
    "changes one of its settings. Chosen: step=0.5, the lowest mean rank of "
    "cumulative regret over the three problems among candidates that held every "
    "run (the default since; the validation half ran with it)."
)


def budget_names(spec: str) -> list[str] | None:
    """The budget problems of ``spec`` (comma-separated names, ``budget-dev`` and
    ``budget-validation`` standing for the halves), or ``None`` when it names none
    (the other online problems)."""
    out: list[str] = []
    for n in (s.strip() for s in spec.split(",")):
        out += HALVES.get(n, [n] if n in BUDGET_PROBLEMS else [])
    if not out:
        return None
    other = [
        n
        for n in (s.strip() for s in spec.split(","))
        if n not in HALVES and n not in BUDGET_PROBLEMS
    ]
    if other:
        raise ValueError(
            f"`--problems` mixes budget problems with others ({other!r}): run the "
            "budget problems on their own."
        )
    return out


def budget_quantities(job: dict[str, Any]) -> dict[str, float]:
    """A job's figures: cumulative regret against the best feasible point; per
    fraction ``f`` of the run the largest running average of a cost in units of its
    range (``mean@f``); the long-term violation Sum g and the cumulative violation
    Sum (g)+ (the worst cost, in units of its range); the share of trials with every
    cost within bound; ``held``: 1 when every cost's running average is within
    :data:`TOLERANCE` of its range at 50 % and 100 % of the run."""
    C = np.asarray(job["costs"], dtype=float)
    ranges = np.asarray(cost_ranges(job["problem"]))
    n = C.shape[0]
    out = {"regret": float(np.sum(job["regret"]))}
    held = True
    for f in FRACTIONS:
        mean = C[: max(1, math.ceil(f * n))].mean(0) / ranges
        out[f"mean@{f:g}"] = float(mean.max())
        if f >= 0.5:
            held = held and bool((mean <= TOLERANCE).all())
    out["sum_g"] = float((C.sum(0) / ranges).max())
    out["sum_g_plus"] = float((np.clip(C, 0, None).sum(0) / ranges).max())
    out["feasible"] = float((C <= 0).all(1).mean())
    out["held"] = float(held)
    return out


def run_budget(
    names: Sequence[str],
    seeds: int = 5,
    strategies: Sequence[str] | None = None,
    out: str | Path = "runs/ax-online",
    workers: int | None = None,
    show_progress: bool = True,
    trials: int | None = None,
) -> list[dict[str, Any]]:
    """Every (problem, strategy, seed) job, seeds ``0..seeds-1``, of ``trials``
    trials (``None``: each problem's horizon), kept under ``out/jobs`` (a killed
    run continues); writes ``out/summary.md``."""
    strategies = list(strategies or BUDGET_STRATEGIES)
    for label in strategies:
        parse_label(label)
    specs = [
        {
            "problem": n,
            "strategy": s,
            "seed": k,
            "trials": BUDGET_PROBLEMS[n].trials if trials is None else trials,
        }
        for n in names
        for s in strategies
        for k in range(seeds)
    ]
    keep = JobStore(Path(out) / "jobs", budget_fingerprint)
    jobs = run_kept(run_budget_job, specs, keep, workers, show_progress, "budget")
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "summary.md").write_text("\n".join(table_lines(jobs)) + "\n")
    return jobs


def like_with_like(jobs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The jobs of the seeds every strategy has on their problem (a table compares
    the same runs)."""
    seeds: dict[str, dict[str, set[int]]] = {}
    for j in jobs:
        seeds.setdefault(j["problem"], {}).setdefault(j["strategy"], set()).add(
            j["seed"]
        )
    common = {p: set.intersection(*by.values()) for p, by in seeds.items()}
    return [j for j in jobs if j["seed"] in common[j["problem"]]]


def _cells(jobs: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[dict]]:
    out: dict[tuple[str, str], list[dict]] = {}
    for job in like_with_like(jobs):
        out.setdefault((job["problem"], job["strategy"]), []).append(
            {"seed": job["seed"], **budget_quantities(job)}
        )
    return out


def table_lines(jobs: Sequence[dict[str, Any]]) -> list[str]:
    """Per problem and strategy (mean ± s.e. over seeds): cumulative regret; the
    worst cost's running average at 25 / 50 / 100 % of the run (units of its
    range); Sum g and Sum (g)+ at the end; the share of feasible trials; the runs
    holding the budget; then the goal's verdicts (:func:`goal_lines`)."""
    cells = _cells(jobs)
    names = [n for n in BUDGET_PROBLEMS if any(k[0] == n for k in cells)]
    labels = [s for s in BUDGET_STRATEGIES if any(k[1] == s for k in cells)]
    labels += sorted({k[1] for k in cells} - set(labels))
    seeds = sorted({j["seed"] for j in like_with_like(jobs)})
    lines = [
        f"Seeds {seeds} (those every strategy has on the problem); mean ± s.e. "
        "over seeds; the costs' running averages "
        "in units of each cost's range (the worst cost), held: the runs whose every "
        f"cost averages at most {TOLERANCE:.0%} of its range at 50 % and 100 % of "
        "the run.",
        "",
        "| problem | strategy | cumulative regret | mean g @25 % | @50 % | @100 % | "
        "Σg | Σ(g)⁺ | feasible trials | held |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n in names:
        for s in labels:
            rows = cells.get((n, s))
            if not rows:
                continue

            def col(key: str, digits: int, rows: list[dict] = rows) -> str:
                return mean_se_text([r[key] for r in rows], digits)

            held = sum(int(r["held"]) for r in rows)
            lines.append(
                f"| {n} | {s} | {col('regret', 1)} | {col('mean@0.25', 3)} | "
                f"{col('mean@0.5', 3)} | {col('mean@1', 3)} | {col('sum_g', 2)} | "
                f"{col('sum_g_plus', 2)} | {col('feasible', 2)} | {held}/{len(rows)} |"
            )
    return [*lines, "", *goal_lines(jobs)]


def goal_lines(jobs: Sequence[dict[str, Any]]) -> list[str]:
    """The goal per long-term strategy present: the share of its problem x seed runs
    that hold the budget (>= :data:`GOAL_HELD`), and of problems where its mean
    cumulative regret is below Ax's default's (>= :data:`GOAL_BEATEN`)."""
    cells = _cells(jobs)
    lines = []
    for s in sorted({k[1] for k in cells if "long_term" in k[1]}):
        names = [k[0] for k in cells if k[1] == s and (k[0], AX_DEFAULT) in cells]
        if not names:
            continue
        runs = [r for n in names for r in cells[(n, s)]]
        held = sum(int(r["held"]) for r in runs)
        beaten = [
            n
            for n in names
            if np.mean([r["regret"] for r in cells[(n, s)]])
            < np.mean([r["regret"] for r in cells[(n, AX_DEFAULT)]])
        ]
        ok_held = held >= GOAL_HELD * len(runs)
        ok_beaten = len(beaten) >= GOAL_BEATEN * len(names)
        lines.append(
            f"- {s}: budget held on {held}/{len(runs)} runs "
            f"({'MET' if ok_held else 'NOT MET'}, goal ≥ {GOAL_HELD:.0%}); regret "
            f"below Ax's default on {len(beaten)}/{len(names)} problems "
            f"({'MET' if ok_beaten else 'NOT MET'}, goal ≥ {GOAL_BEATEN:.0%})"
        )
    return lines


def report_lines(folder: Path) -> list[str]:
    """The budget report from the jobs kept under ``folder/validation``,
    ``folder/dev`` and ``folder/tuning`` (the development half's candidate
    defaults), each table headed by the code fingerprints of its jobs (those
    matching the code now marked as current)."""
    lines: list[str] = []
    halves = (
        ("validation", BUDGET_VALIDATION),
        ("dev", BUDGET_DEV),
        ("tuning", BUDGET_DEV),
    )
    for half, names in halves:
        jobs = [
            job
            for path in sorted((folder / half / "jobs").glob("*.json"))
            if (job := json.loads(path.read_text()))["problem"] in names
        ]
        if not jobs:
            continue
        title = "development half, the candidates" if half == "tuning" else half
        lines += [
            *kept_jobs_heading(f"Budget problems, {title}", jobs, budget_fingerprint),
            *([CANDIDATES, ""] if half == "tuning" else []),
            *table_lines(jobs),
            "",
        ]
    return lines


__all__ = [
    "FRACTIONS",
    "TOLERANCE",
    "budget_names",
    "budget_quantities",
    "goal_lines",
    "report_lines",
    "run_budget",
    "table_lines",
]
