r"""Where practical GP-TS is worth using (``python -m bandit_experiments ts-where``): practical
GP-TS against practical IGP-UCB on float problems of 2 to 20 dimensions, batch
sizes and horizons, through the decision core (:func:`~botorch_bandits.core.decide`,
no Ax) as the Ax node drives it: a fixed Sobol decision set, ``q`` decisions per
round (each seeing the round's earlier ones as running, under the node's default
``pending`` rule), the last fit the next fit's warm start. After ``NUM_INIT`` Sobol
points (the same for both) a round's points are evaluated together; regret is the
noise-free value against the stated minimum."""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch.quasirandom import SobolEngine

from bandit_experiments.ax_benchmark.problems import Problem, unit_to_params
from bandit_experiments.ax_benchmark.strategies import strategy_fingerprint
from bandit_experiments.ax_benchmark.suite import PROBLEMS, half_of
from bandit_experiments.studies.botorch_loop import NUM_INIT, float_problems
from botorch_bandits.core import (
    DecisionCache,
    DecisionOptions,
    Domain,
    History,
    TrialRecord,
    decide,
)
from botorch_bandits.demo.summary import mean_and_standard_error
from botorch_bandits.hyperparameters import Hyperparameters
from botorch_bandits.models import one_thread

#: the study's default problems: the development half's float problems of 2, 6 and
#: 20 dimensions (the validation half is not used to choose anything)
TS_WHERE_PROBLEMS = ("branin", "hartmann6", "hartmann6-in-20d")
ALGORITHMS = ("IGP-UCB", "GP-TS")


def run_core_loop(
    problem: str,
    algorithm: str,
    batch: int,
    evaluations: int,
    seed: int,
    num_candidates: int = 512,
) -> dict[str, Any]:
    """One run: ``NUM_INIT`` scrambled Sobol points (seeded by ``seed``), then
    rounds of ``batch`` decisions of the practical ``algorithm`` (the node's
    defaults) until ``evaluations`` points are evaluated. Returns the noise-free
    values in evaluation order, the cumulative and simple regrets per evaluation,
    and the round each evaluation belongs to (the Sobol points are round 0)."""
    if problem not in float_problems():
        raise ValueError(
            f"`problem` must be one of the float problems {float_problems()}, "
            f"got {problem!r}."
        )
    if algorithm not in ALGORITHMS:
        raise ValueError(f"`algorithm` must be one of {ALGORITHMS}, got {algorithm!r}.")
    if batch < 1 or evaluations <= NUM_INIT:
        raise ValueError(
            f"`batch` must be >= 1 and `evaluations` > {NUM_INIT}, got batch={batch}, "
            f"evaluations={evaluations}."
        )
    prob: Problem = PROBLEMS[problem]
    d = len(prob.parameters)
    opts = DecisionOptions.from_kwargs(
        algorithm=algorithm, seed=seed, num_candidates=num_candidates
    )
    unit = SobolEngine(d, scramble=True, seed=seed).draw(
        num_candidates, dtype=torch.double
    )
    domain = Domain.box(unit)
    init = SobolEngine(d, scramble=True, seed=seed).draw(NUM_INIT, dtype=torch.double)
    records: list[TrialRecord] = []
    true: list[float] = []
    rounds: list[int] = []
    warm: Hyperparameters | None = None
    last_fit: dict | None = None  # as the Ax node reads it back from the last trial

    def evaluate(xs: Sequence[Sequence[float]], round_: int) -> None:
        for x in xs:
            params = unit_to_params(prob.parameters, list(x))
            i = len(records)
            y = prob.observe(params, seed, i)
            records.append(TrialRecord(index=i, x=tuple(x), f=-y))
            true.append(prob(params))
            rounds.append(round_)

    evaluate(init.tolist(), 0)
    round_ = 0
    with one_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while len(records) < evaluations:
            round_ += 1
            q = min(batch, evaluations - len(records))
            history = History(trials=tuple(records), warm=warm, last_fit=last_fit)
            cache = DecisionCache()
            issued: list[TrialRecord] = []
            for _ in range(q):
                decision = decide(history.then(*issued), opts, domain, cache)
                issued.append(decision.record)
                fit = decision.metadata.get("fit")
                if fit is not None:
                    last_fit = fit
                    warm = Hyperparameters.from_dict(
                        {k: fit[k] for k in ("lengthscale", "noise", "mean")}
                    )
            evaluate([e.x for e in issued], round_)
    return {
        "problem": problem,
        "algorithm": algorithm,
        "batch": batch,
        "seed": seed,
        "noise_free_value": true,
        "round": rounds,
        **prob.regrets(true),
    }


def summarize(
    jobs: Sequence[dict[str, Any]], horizons: Sequence[int]
) -> list[dict[str, Any]]:
    """Per problem, batch size and algorithm: the rounds taken, and the cumulative
    and simple regret after each of ``horizons`` evaluations (mean and s.e. over the
    seeds)."""
    rows = []
    keys = dict.fromkeys((j["problem"], j["batch"], j["algorithm"]) for j in jobs)
    for key3 in keys:
        runs = [j for j in jobs if keys_of(j) == key3]
        problem, batch, algorithm = key3
        row: dict[str, Any] = {
            "problem": problem,
            "half": half_of(problem),
            "dim": len(PROBLEMS[problem].parameters),
            "batch": batch,
            "algorithm": algorithm,
            "seeds": len(runs),
            "rounds": max(r["round"][-1] for r in runs),
        }
        for n in horizons:
            for key in ("cumulative_regret", "simple_regret"):
                values = torch.tensor(
                    [r[key][min(n, len(r[key])) - 1] for r in runs], dtype=torch.double
                )
                mean, se = mean_and_standard_error(values)
                row[f"{key}@{n}"] = (float(mean), float(se))
        rows.append(row)
    return rows


def keys_of(job: dict[str, Any]) -> tuple[str, int, str]:
    """A job's problem, batch size and algorithm."""
    return job["problem"], job["batch"], job["algorithm"]


def job_path(out: str | Path, spec: dict[str, Any]) -> Path:
    """Where a finished job is kept: one JSON file per problem, algorithm, batch,
    seed and evaluations."""
    name = "{problem}__{algorithm}__q{batch}__seed{seed}__n{evaluations}.json"
    return Path(out) / "jobs" / name.format(**spec)


def run_kept(out: str, **spec: Any) -> dict[str, Any]:
    """:func:`run_core_loop` for ``spec``, reusing the job kept under ``out`` when it
    was made by the same library code (:func:`code_fingerprint`), else running it and
    keeping it."""
    path = job_path(out, spec)
    code = code_fingerprint()
    if path.exists():
        kept = json.loads(path.read_text())
        if kept.get("code") == code:
            return kept
    job = {**run_core_loop(**spec), "evaluations": spec["evaluations"], "code": code}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(job))
    tmp.replace(path)
    return job


def code_fingerprint() -> str:
    """The library's fingerprint as the Ax benchmark keys its jobs (versions and a
    hash of the library code, its test functions and demos excluded)."""
    return strategy_fingerprint("IGP-UCB")
