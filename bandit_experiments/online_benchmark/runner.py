"""The online benchmark (``python -m bandit_experiments ax-online``): problems where the objective
drifts, evaluations return after random delays, or a cost must stay within a budget
on average; each job is one (problem, strategy, seed), a fresh in-memory
``ax.Client``. Strategies: practical IGP-UCB, IGP-UCB with the problem's matching
extension, Ax's default, and a sliding window of recent trials. What is run and
measured is listed by ``python -m bandit_experiments ax-online --help``."""

from __future__ import annotations

import hashlib
import inspect
import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scipy.optimize import minimize
from torch import Tensor

from bandit_experiments.ax_benchmark.runner import JobStore, job_environment
from bandit_experiments.ax_benchmark.strategies import (
    AX_DEFAULT,
    configure_strategy,
    parse_label,
    strategy_fingerprint,
)
from bandit_experiments.common.executors import run_kept
from bandit_experiments.online_benchmark import drift as drift_module
from bandit_experiments.online_benchmark.drift import (
    DEV,
    DRIFT_PROBLEMS,
    VALIDATION,
    branin,
    hartmann,
)
from botorch_bandits.demo.async_loop import run_async
from botorch_bandits.upstream import client_experiment

#: the plain strategy, Ax's default and the sliding window (the GP on the last 25
#: trials, the window fixed before any run) are run on every problem
PLAIN = "IGP-UCB"
WINDOW = "IGP-UCB[model_window=25]"
#: the drift options: restarts (the residual detector) and forgetting
RESTARTS = "IGP-UCB[restarts=True]"
FORGETTING = "IGP-UCB[forgetting=True]"
EXTENSIONS = {
    "drift": RESTARTS,
    "delays": "IGP-UCB[pending=censor;y_min=0]",
    "budget": "IGP-UCB[long_term_constraints=True]",
}
#: workers of the delay problems (durations: ``async_loop.duration``, 1 + Poisson(2))
DELAY_WORKERS = 4


@dataclass(frozen=True)
class OnlineProblem:
    """``value(x, t, T)``: the objective at trial ``t`` of ``T`` (unit cube, ``...
    x d`` -> ``...``, minimized); ``kind`` names the matching extension; ``cost``:
    the budget problem's constraint metric (``<= 0`` on average)."""

    name: str
    title: str
    kind: str
    dim: int
    value: Callable[[Tensor, int, int], Tensor]
    cost: Callable[[Tensor], Tensor] | None = None
    trials: int = 100
    noise: float = 0.0
    phase: Callable[[int, int], object] | None = None
    shape: str | None = None


PROBLEMS: dict[str, OnlineProblem] = {
    **DRIFT_PROBLEMS,
    **{
        p.name: p
        for p in (
            OnlineProblem(
                "hartmann3-delays",
                f"Hartmann-3, {DELAY_WORKERS} workers, durations 1 + Poisson(2) (3-D)",
                "delays",
                3,
                lambda x, t, T: hartmann(3)(x),
            ),
            OnlineProblem(
                "branin-budget",
                "Branin with a cost x1 + x2 of at most 0.6 on average (2-D)",
                "budget",
                2,
                lambda x, t, T: branin(x),
                cost=lambda x: x[..., 0] + x[..., 1] - 0.6,
            ),
        )
    },
}


#: the rules the benchmark can put under the extensions (``ax-online --rule``)
RULES = ("IGP-UCB", "qLogNEI")


def with_rule(label: str, rule: str = PLAIN) -> str:
    """A strategy label of :data:`PLAIN` with the rule ``rule`` instead (the same
    node options): ``with_rule("IGP-UCB[restarts=True]", "qLogNEI")`` is
    ``"qLogNEI[restarts=True]"``; Ax's default is left as it is."""
    if rule not in RULES:
        raise ValueError(f"`rule` must be one of {list(RULES)}, got rule={rule!r}.")
    if label == AX_DEFAULT or not label.startswith(PLAIN):
        return label
    return rule + label[len(PLAIN) :]


def strategies_for(problem: str, rule: str = PLAIN) -> list[str]:
    """The strategies run on ``problem``: plain, its extension (on the drift
    problems both drift options: restarts and forgetting), Ax's default, the
    sliding window, with ``rule`` as the bandit strategies' rule."""
    kind = PROBLEMS[problem].kind
    ext = [RESTARTS, FORGETTING] if kind == "drift" else [EXTENSIONS[kind]]
    return [with_rule(s, rule) for s in (PLAIN, *ext, AX_DEFAULT, WINDOW)]


def problem_names(spec: str) -> list[str]:
    """Comma-separated problem names, ``dev`` and ``validation`` standing for the
    drift problems' halves."""
    out: list[str] = []
    for n in (s.strip() for s in spec.split(",")):
        out += {"dev": DEV, "validation": VALIDATION}.get(n, [n])
    return out


# --------------------------------------------------------------------------------------
# optima
# --------------------------------------------------------------------------------------
def optimum(problem: str, t: int, T: int) -> float:
    """The minimum of the problem's objective at trial ``t`` on the unit cube (under
    the cost's bound for the budget problem): the best of 2^14 scrambled Sobol points
    (a 1025^2 grid in 2-D), polished by L-BFGS-B (SLSQP with the cost); computed
    once per phase of a piecewise objective."""
    p = PROBLEMS[problem]
    if p.phase is None:
        return _optimum(problem, t, T)
    return _phase_optimum(problem, p.phase(t, T), T, t)


_phases: dict[tuple, float] = {}


def _phase_optimum(problem: str, key: object, T: int, t: int) -> float:
    if (problem, key, T) not in _phases:
        _phases[(problem, key, T)] = _optimum(problem, t, T)
    return _phases[(problem, key, T)]


@cache
def _optimum(problem: str, t: int, T: int) -> float:
    p = PROBLEMS[problem]
    d = p.dim
    if d == 2:
        g = torch.linspace(0, 1, 1025, dtype=torch.double)
        X = torch.cartesian_prod(g, g)
    else:
        X = torch.quasirandom.SobolEngine(d, scramble=True, seed=0).draw(
            2**14, dtype=torch.double
        )
    with torch.no_grad():
        v = p.value(X, t, T)
        if p.cost is not None:
            v = torch.where(p.cost(X) <= 0, v, torch.inf)
    best = float(v.min())

    def fun(u: np.ndarray) -> tuple[float, np.ndarray]:
        x = torch.tensor(u, dtype=torch.double, requires_grad=True)
        y = p.value(x.unsqueeze(0), t, T).sum()
        y.backward()
        return y.item(), x.grad.numpy()

    cons = ()
    if p.cost is not None:
        cons = ({"type": "ineq", "fun": lambda u: -float(p.cost(torch.tensor(u)))},)
    for i in torch.argsort(v)[:5].tolist():
        res = minimize(
            fun,
            X[i].numpy(),
            jac=True,
            bounds=[(0.0, 1.0)] * d,
            method="SLSQP" if cons else "L-BFGS-B",
            constraints=cons,
        )
        x = torch.tensor(res.x, dtype=torch.double).clamp(0, 1)
        ok = p.cost is None or float(p.cost(x)) <= 1e-9
        if ok:
            best = min(best, float(p.value(x.unsqueeze(0), t, T)))
    return best


@cache
def online_fingerprint(label: str) -> str:
    """The strategy's fingerprint and a hash of what a job measures (the problems,
    the optima, the job's loop and its Ax client): a kept job is reused only when
    neither changed (the tables and verdicts may change without a rerun)."""
    digest = hashlib.sha256(Path(drift_module.__file__).read_bytes())
    for fn in (run_online_job, _client, optimum, _optimum, OnlineProblem):
        digest.update(inspect.getsource(fn).encode())
    return f"{strategy_fingerprint(label)} online {digest.hexdigest()[:16]}"


# --------------------------------------------------------------------------------------
# one job
# --------------------------------------------------------------------------------------
def _client(p: OnlineProblem, label: str, seed: int) -> Any:
    from ax import Client, RangeParameterConfig

    client = Client(random_seed=seed)
    client.configure_experiment(
        name=f"online-{p.name}-{seed}",
        parameters=[
            RangeParameterConfig(
                name=f"x{i + 1}", parameter_type="float", bounds=(0, 1)
            )
            for i in range(p.dim)
        ],
    )
    # the budget is an outcome constraint for the strategies that read one (Ax's
    # default: per trial; the long-term extension: on average); the others are not
    # told (plain IGP-UCB refuses a constraint it would ignore)
    told = p.cost is not None and (label == AX_DEFAULT or "long_term" in label)
    client.configure_optimization(
        objective="-f", outcome_constraints=["g <= 0"] if told else None
    )
    configure_strategy(client, label, seed)
    return client


def _point(params: dict[str, float], d: int) -> Tensor:
    return torch.tensor([params[f"x{i + 1}"] for i in range(d)], dtype=torch.double)


def run_online_job(
    problem: str, strategy: str, seed: int, trials: int | None = None
) -> dict[str, Any]:
    """One (problem, strategy, seed) of ``trials`` trials. Returns the job's keys and
    per-trial lists (in trial order) ``value`` (the objective at its trial),
    ``regret`` (against that trial's minimum), ``cost`` (budget problem), the
    completion times on the simulated clock (delay problem), the restarts (as the
    last trial's metadata reports them: those that shaped a decision) and the
    uniform trials the bandit node reported, and the strategy's ``code``."""
    p = PROBLEMS[problem]
    trials = p.trials if trials is None else trials
    # the observation noise of trial i: a function of (seed, i) alone
    noise = np.random.default_rng([seed, 48]).normal(size=trials) * p.noise
    values: dict[int, float] = {}
    costs: dict[int, float] = {}
    done_at: dict[int, float] = {}
    start = time.perf_counter()
    with job_environment():
        client = _client(p, strategy, seed)

        def evaluate(params: dict, index: int) -> dict[str, float]:
            x = _point(params, p.dim).unsqueeze(0)
            with torch.no_grad():
                values[index] = float(p.value(x, index, trials))
                data = {"f": values[index] + float(noise[index])}
                if p.cost is not None:
                    costs[index] = float(p.cost(x))
                    data["g"] = costs[index]
            return data

        if p.kind == "delays":
            exp = client_experiment(client)

            def submit(params: dict, index: int) -> Future:
                fut: Future = Future()
                fut.set_result(evaluate(params, index))
                return fut

            def on_complete(index: int, clock: float) -> None:
                done_at[index] = clock

            run_async(client, submit, trials, DELAY_WORKERS, seed, on_complete)
            assert len(exp.trials) == trials
        else:
            for _ in range(trials):
                ((index, params),) = client.get_next_trials(max_trials=1).items()
                client.complete_trial(
                    trial_index=index, raw_data=evaluate(params, index)
                )
        exp = client_experiment(client)
        metas = [
            exp.trials[i].generator_runs[0].gen_metadata or {} for i in range(trials)
        ]
    order = list(range(trials))
    regret = [values[i] - optimum(problem, i, trials) for i in order]
    last = metas[-1]
    return {
        "problem": problem,
        "strategy": strategy,
        "seed": seed,
        "value": [values[i] for i in order],
        "regret": regret,
        "cost": [costs[i] for i in order] if costs else None,
        "completed_at": [done_at[i] for i in order] if done_at else None,
        "trials": trials,
        "restarts": last.get("cpd_restarts"),
        # the decisions (round t) at which the residual detector fired
        "detections": last.get("cpd_detections")
        if last.get("cpd_start") is not None
        else None,
        "forgetting": last.get("forgetting"),
        "uniform": [i for i in order if metas[i].get("cpd_uniform")],
        "seconds": time.perf_counter() - start,
        "code": online_fingerprint(strategy),
    }


# --------------------------------------------------------------------------------------
# the quantities and the verdicts
# --------------------------------------------------------------------------------------
#: the budget counts as met when the time-averaged violation is at most this (the
#: cost x1 + x2 spans [0, 2]: 1 % of its range)
BUDGET_SLACK = 0.02


def quantities(job: dict[str, Any]) -> dict[str, float]:
    """A job's figures: the cumulative (dynamic) regret; on the delay problem also
    the simple regret of the best completed trial averaged over the simulated time;
    on the budget problem the time-averaged violation ``max(0, mean cost)``."""
    out = {"regret": float(np.sum(job["regret"]))}
    if job["completed_at"] is not None:
        ends = np.asarray(job["completed_at"])
        order = np.argsort(ends, kind="stable")
        best = np.minimum.accumulate(np.asarray(job["regret"])[order])
        times = ends[order]
        spans = np.diff(np.append(times, times[-1]))
        total = times[-1] - times[0]
        out["time_regret"] = float((best * spans).sum() / total) if total > 0 else 0.0
    if job["cost"] is not None:
        out["violation"] = max(0.0, float(np.mean(job["cost"])))
    restarts = job.get("restarts")
    out["restarts"] = float(len(restarts)) if restarts is not None else math.nan
    out["uniform"] = float(len(job["uniform"]))
    fit = job.get("forgetting") or {}
    out["half_life"] = float(fit.get("half_life_trials", math.nan))
    return out


def summarize(
    jobs: Sequence[dict[str, Any]],
) -> dict[tuple[str, str], dict[str, tuple[float, float]]]:
    """(problem, strategy) -> quantity -> (mean, standard error over seeds)."""
    table: dict[tuple[str, str], dict[str, list[float]]] = {}
    for job in jobs:
        cell = table.setdefault((job["problem"], job["strategy"]), {})
        for k, v in quantities(job).items():
            cell.setdefault(k, []).append(v)
    out = {}
    for key, cell in table.items():
        out[key] = {
            k: (
                float(np.mean(v)),
                float(np.std(v, ddof=1) / math.sqrt(len(v)))
                if len(v) > 1
                else math.nan,
            )
            for k, v in cell.items()
        }
    return out


def verdict(problem: str, summary: dict, rule: str = PLAIN) -> str:
    """The goal's verdict on ``problem``: the extension beats the plain rule and Ax's
    default on the quantity it exists for (lower mean cumulative regret; on the
    budget problem, the budget met within :data:`BUDGET_SLACK` and a lower regret
    than each other strategy that meets it too)."""
    p = PROBLEMS[problem]
    ext = with_rule(EXTENSIONS[p.kind], rule)
    mine = summary[(problem, ext)]
    results = []
    for other in (rule, AX_DEFAULT):
        theirs = summary[(problem, other)]
        if p.kind == "budget" and mine["violation"][0] > BUDGET_SLACK:
            results.append((False, f"{other}: lost (the budget is missed)"))
        elif p.kind == "budget" and theirs["violation"][0] > BUDGET_SLACK:
            results.append((True, f"{other}: beaten ({other} misses the budget)"))
        else:
            won = mine["regret"][0] < theirs["regret"][0]
            results.append((won, f"{other}: {'beaten' if won else 'lost'}"))
    met = all(won for won, _ in results)
    return ("MET" if met else "NOT MET") + " (" + "; ".join(t for _, t in results) + ")"


# --------------------------------------------------------------------------------------
# the benchmark
# --------------------------------------------------------------------------------------
def run_online(
    problems: Sequence[str] | None = None,
    seeds: int = 5,
    trials: int | None = None,
    workers: int | None = None,
    out: str | Path | None = "runs/ax-online",
    show_progress: bool = True,
    rule: str = PLAIN,
) -> tuple[list[dict[str, Any]], dict]:
    """Every (problem, strategy, seed) job, seeds ``0..seeds-1``; finished jobs are
    kept in ``out/jobs/`` and reused under the same strategy fingerprint (a killed
    run continues); writes ``out/summary.md``. ``trials``: every job's horizon
    (``None``: each problem's own). ``rule``: the bandit strategies'
    rule (:data:`RULES`; ``"qLogNEI"``: BoTorch's qLogNEI under the same
    extensions). Returns the jobs and the summary."""
    names = list(PROBLEMS) if problems is None else list(problems)
    unknown = [n for n in names if n not in PROBLEMS]
    if unknown or not names:
        raise ValueError(
            f"`problems` must be names among {list(PROBLEMS)}, got {names!r}."
        )
    for arg, value in (("seeds", seeds), ("trials", trials)):
        if value is None and arg == "trials":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"`{arg}` must be an integer >= 1, got {arg}={value!r}.")
    for label in {s for n in names for s in strategies_for(n, rule)}:
        parse_label(label)
    specs = [
        {
            "problem": n,
            "strategy": s,
            "seed": k,
            "trials": PROBLEMS[n].trials if trials is None else trials,
        }
        for n in names
        for s in strategies_for(n, rule)
        for k in range(seeds)
    ]
    keep = None if out is None else JobStore(Path(out) / "jobs", online_fingerprint)
    jobs = run_kept(run_online_job, specs, keep, workers, show_progress, "ax-online")
    summary = summarize(jobs)
    if out is not None:
        (Path(out) / "summary.md").write_text(
            "\n".join(table_lines(names, summary, seeds, trials, rule)) + "\n"
        )
    return jobs, summary


def _cell(stat: tuple[float, float] | None, digits: int = 1) -> str:
    if stat is None or math.isnan(stat[0]):
        return "-"
    mean, se = stat
    return f"{mean:.{digits}f} ± {se:.{digits}f}"


def table_lines(
    names: Sequence[str], summary: dict, seeds: int, trials: int, rule: str = PLAIN
) -> list[str]:
    """The Markdown table: per problem and strategy, the cumulative regret (and the
    time-averaged simple regret or the violation where they apply), the restarts and
    uniform trials; then the goal's verdict per problem."""
    lines = [
        f"{'each problem' + chr(39) + 's horizon' if trials is None else trials} "
        f"trials, {seeds} seeds; mean ± s.e. over seeds.",
        "",
        "| problem | strategy | cumulative regret | time-avg. simple regret | "
        "violation | restarts | uniform trials |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n in names:
        for s in strategies_for(n, rule):
            row = summary.get((n, s))
            if row is None:
                continue
            lines.append(
                f"| {n} | {s} | {_cell(row['regret'])} | "
                f"{_cell(row.get('time_regret'), 3)} | {_cell(row.get('violation'), 3)} | "
                f"{_cell(row['restarts'])} | {_cell(row['uniform'])} |"
            )
    lines += ["", f"Goal (the extension beats plain {rule} and Ax's default):", ""]
    for n in names:
        ext = with_rule(EXTENSIONS[PROBLEMS[n].kind], rule)
        if all((n, s) in summary for s in (rule, ext, AX_DEFAULT)):
            lines.append(f"- {n} ({ext}): {verdict(n, summary, rule)}")
    return lines


__all__ = [
    "EXTENSIONS",
    "PROBLEMS",
    "OnlineProblem",
    "optimum",
    "quantities",
    "run_online",
    "run_online_job",
    "summarize",
    "table_lines",
    "verdict",
]
