"""The delay problems run and reported (``python -m bandit_experiments ax-online --problems
delay-dev`` / ``delay-validation``, ``--delay-report DIR``): every (problem,
strategy, seed) job kept under ``OUT/jobs``; per half a table of the simple regret
at equal simulated time (a quarter, half, three quarters and all of the run's
nominal time), its mean over those four times
(the goal's score), the cumulative regret and the share of trials on the box's
faces; then the issue's goal (:func:`goal_lines`)."""

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
from bandit_experiments.online_benchmark.delay import (
    CENSOR,
    CENSOR_QLOGNEI,
    DELAY_DEV,
    DELAY_PROBLEMS,
    DELAY_STRATEGIES,
    DELAY_VALIDATION,
    HALLUCINATE,
    delay_fingerprint,
    run_delay_job,
    strategies_for,
)

#: the shares of the completions at which the simple regret is read
QUARTERS = (0.25, 0.5, 0.75, 1.0)
#: the goal: censoring ahead of hallucination and Ax's default on this share of the
#: bounded-reward problems
GOAL_SHARE = 0.6
#: trials from this index on count for the faces' share (after the initial ones)
FIRST_CHOSEN = 5
HALVES = {"delay-dev": DELAY_DEV, "delay-validation": DELAY_VALIDATION}


def delay_names(spec: str) -> list[str] | None:
    """The delay problems of ``spec`` (a half's name, or comma-separated names all
    among the delay problems); ``None`` when ``spec`` names none of them."""
    if spec in HALVES:
        return list(HALVES[spec])
    names = [n.strip() for n in spec.split(",")]
    if all(n in DELAY_PROBLEMS for n in names):
        return names
    return None


def delay_quantities(job: dict[str, Any]) -> dict[str, float]:
    """A job's figures: the simple regret at each of :data:`QUARTERS` of the
    problem's nominal run time (``sr@q``: the best trial completed by then; the
    time ``trials x mean delay / workers`` ticks, the same for every strategy),
    their mean (``score``), the cumulative regret, the share of chosen trials with
    at least two coordinates on a bound (``faces``) and the median confidence
    multiplier (``sigma``; NaN for qLogNEI and Ax)."""
    p = DELAY_PROBLEMS[job["problem"]]
    regret = np.asarray(job["regret"], dtype=float)
    done = np.asarray(job["completed_at"], dtype=float)
    span = nominal_time(job["problem"], job["trials"])
    out = {}
    for q in QUARTERS:
        seen = regret[done <= q * span]
        # before any completion: the floor's (or the first trial's) regret
        worst = p.optimum - p.floor if p.bounded else float(regret[0])
        out[f"sr@{q}"] = float(seen.min()) if seen.size else worst
    out["score"] = float(np.mean([out[f"sr@{q}"] for q in QUARTERS]))
    out["cumulative"] = float(regret.sum())
    X = np.asarray(job["x"], dtype=float)[FIRST_CHOSEN:]
    on = ((X < 1e-3) | (X > 1 - 1e-3)).sum(1) >= 2
    out["faces"] = float(on.mean()) if len(on) else math.nan
    sig = [s for s in job["sigma"][FIRST_CHOSEN:] if s is not None]
    out["sigma"] = float(np.median(sig)) if sig else math.nan
    return out


def nominal_time(problem: str, trials: int) -> float:
    """The run's nominal length in ticks: ``trials x mean delay / workers``."""
    p = DELAY_PROBLEMS[problem]
    return trials * p.mean_delay / p.workers


def run_delays(
    names: Sequence[str],
    seeds: int = 3,
    strategies: Sequence[str] | None = None,
    out: str | Path = "runs/ax-online",
    workers: int | None = None,
    show_progress: bool = True,
    trials: int | None = None,
) -> list[dict[str, Any]]:
    """Every (problem, strategy, seed) job (the problem's strategies, or
    ``strategies``), seeds ``0..seeds-1``, kept under ``out/jobs``; writes
    ``out/summary.md``."""
    for label in strategies or ():
        parse_label(label)
    specs = [
        {
            "problem": n,
            "strategy": s,
            "seed": k,
            "trials": DELAY_PROBLEMS[n].trials if trials is None else trials,
        }
        for n in names
        for s in (strategies or strategies_for(n))
        for k in range(seeds)
    ]
    keep = JobStore(Path(out) / "jobs", delay_fingerprint)
    jobs = run_kept(run_delay_job, specs, keep, workers, show_progress, "delays")
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "summary.md").write_text("\n".join(table_lines(jobs)) + "\n")
    return jobs


def _cells(jobs: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[dict]]:
    """(problem, strategy) -> the seeds' quantities, on the seeds every strategy
    of the problem has (like with like)."""
    by: dict[tuple[str, str], dict[int, dict]] = {}
    for j in jobs:
        label = j.get("label", j["strategy"])
        by.setdefault((j["problem"], label), {})[j["seed"]] = j
    out: dict[tuple[str, str], list[dict]] = {}
    for name in {k[0] for k in by}:
        cells = {k: v for k, v in by.items() if k[0] == name}
        common = set.intersection(*(set(v) for v in cells.values()))
        for k, v in cells.items():
            out[k] = [{**delay_quantities(v[s]), "seed": s} for s in sorted(common)]
    return out


def table_lines(jobs: Sequence[dict[str, Any]]) -> list[str]:
    """Per problem and strategy (mean ± s.e. over the seeds every strategy has):
    the simple regret at equal simulated time, the score, the cumulative regret,
    the faces' share and the median confidence multiplier; then the goal."""
    cells = _cells(jobs)
    names = [n for n in DELAY_PROBLEMS if any(k[0] == n for k in cells)]
    labels = [s for s in DELAY_STRATEGIES if any(k[1] == s for k in cells)]
    labels += sorted({k[1] for k in cells} - set(labels))
    lines = [
        "Mean ± s.e. over seeds (those every strategy has on the problem). Simple "
        "regret (distance of the best trial completed by then to the optimum, "
        "noise-free) at 25 / 50 / 75 / 100 % of the run's nominal time (trials x "
        "mean delay / workers ticks on the simulated clock, the same for every "
        "strategy; the trials' durations are seeded by the trial); score: their "
        "mean; faces: the share "
        f"of trials from the {FIRST_CHOSEN + 1}th on with two or more coordinates on "
        "a bound; sigma: the median confidence multiplier (nu_t under censoring).",
        "",
        "| problem | strategy | seeds | SR @25 % | @50 % | @75 % | @100 % | score | "
        "cumulative regret | faces | sigma |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n in names:
        digits = 3 if DELAY_PROBLEMS[n].bounded else 2
        for s in labels:
            rows = cells.get((n, s))
            if not rows:
                continue

            def col(key: str, d: int = digits, rows: list[dict] = rows) -> str:
                return mean_se_text([r[key] for r in rows], d)

            lines.append(
                f"| {n} | {s} | {len(rows)} | {col('sr@0.25')} | {col('sr@0.5')} | "
                f"{col('sr@0.75')} | {col('sr@1.0')} | {col('score')} | "
                f"{col('cumulative', 1)} | {col('faces', 2)} | {col('sigma', 1)} |"
            )
    return [*lines, "", *goal_lines(jobs)]


def _score(cells: dict, n: str, s: str) -> float | None:
    rows = cells.get((n, s))
    return float(np.mean([r["score"] for r in rows])) if rows else None


def goal_lines(jobs: Sequence[dict[str, Any]]) -> list[str]:
    """The issue's goal on these jobs: per censoring strategy, the bounded-reward
    problems where its score is below both hallucination's and Ax's default's
    (met on >= :data:`GOAL_SHARE` of them) and those where it is the last of all
    strategies (never); per problem, whether the default ``pending`` is no worse
    than Ax's default (its score at most Ax's plus one s.e. of the paired
    differences; the cumulative regret read alike beside it)."""
    cells = _cells(jobs)
    names = [n for n in DELAY_PROBLEMS if any(k[0] == n for k in cells)]
    lines = ["Goal:", ""]
    bounded = [n for n in names if DELAY_PROBLEMS[n].bounded]
    for cens in (CENSOR, CENSOR_QLOGNEI):
        wins, last, seen = [], [], 0
        for n in bounded:
            mine = _score(cells, n, cens)
            rivals = [_score(cells, n, s) for s in (HALLUCINATE, AX_DEFAULT)]
            if mine is None or None in rivals:
                continue
            seen += 1
            if all(mine < r for r in rivals):
                wins.append(n)
            others = [_score(cells, n, s) for (m, s) in cells if m == n]
            if mine >= max(o for o in others if o is not None) and len(others) > 1:
                last.append(n)
        if not seen:
            continue
        met = len(wins) >= GOAL_SHARE * seen and not last
        lines.append(
            f"- {cens}: score below hallucination's and Ax's default's on "
            f"{len(wins)} of {seen} bounded-reward problems ({', '.join(wins) or '-'})"
            f"; the last on {len(last)} ({', '.join(last) or '-'}): goal "
            f"{'MET' if met else 'NOT MET'}."
        )
    for n in names:
        a, b = cells.get((n, HALLUCINATE)), cells.get((n, AX_DEFAULT))
        if not a or not b:
            continue
        verdicts = []
        for key, digits in (("score", 3), ("cumulative", 1)):
            diff = np.array([x[key] - y[key] for x, y in zip(a, b, strict=True)])
            se = (
                float(np.std(diff, ddof=1) / math.sqrt(len(diff)))
                if len(diff) > 1
                else 0
            )
            ok = float(diff.mean()) <= se
            verdicts.append(
                f"{key} {diff.mean():+.{digits}f} (s.e. {se:.{digits}f}): "
                f"{'no worse' if ok else 'WORSE'}"
            )
        lines.append(
            f"- {n}: default pending (hallucinate) minus Ax's default, "
            f"{verdicts[0]} (the goal's measure); {verdicts[1]}."
        )
    return lines


def report_lines(folder: Path) -> list[str]:
    """The delay report from the jobs kept under ``folder/validation``,
    ``folder/dev`` and ``folder/tuning/CANDIDATE`` (the development half's
    candidate defaults, each strategy label suffixed with its candidate's folder
    name), each table headed by its jobs' code fingerprints."""
    lines: list[str] = []
    for half, names in (
        ("validation", DELAY_VALIDATION),
        ("dev", DELAY_DEV),
        ("tuning", DELAY_DEV),
    ):
        jobs = []
        for path in sorted((folder / half).glob("**/jobs/*.json")):
            job = json.loads(path.read_text())
            if job["problem"] not in names:
                continue
            if half == "tuning":  # the candidate's folder names what it changed
                job["label"] = f"{job['strategy']} ({path.parent.parent.name})"
            jobs.append(job)
        if not jobs:
            continue
        title = "development half, the candidates" if half == "tuning" else half
        lines += [
            *kept_jobs_heading(f"Delay problems, {title}", jobs, delay_fingerprint),
            *table_lines(jobs),
            "",
        ]
    return lines


__all__ = [
    "QUARTERS",
    "delay_names",
    "delay_quantities",
    "goal_lines",
    "nominal_time",
    "report_lines",
    "run_delays",
    "table_lines",
]
