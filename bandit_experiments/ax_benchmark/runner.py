"""The Ax benchmark (``python -m bandit_experiments ax-bench``): every job is one (problem,
strategy, seed), a fresh in-memory ``ax.Client`` making its trials one at a time; jobs
run in local worker processes or on a ``distributed.LocalCluster``. Also the
generation time against the number of completed trials (:func:`generation_growth`).

The problems, strategies and results are in this folder's ``problems``, ``strategies``
and ``results`` (their public names are re-exported here); what is run and recorded
is listed by ``python -m bandit_experiments ax-bench --help``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import multiprocessing
import os
import resource
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.quasirandom import SobolEngine

from bandit_experiments.ax_benchmark.problems import (
    Choice,
    Problem,
    Range,
    ax_parameters,
    branin,
    hartmann6,
    repeated_configurations,
    unit_to_params,
)
from bandit_experiments.ax_benchmark.results import (
    CSV_COLUMNS,
    GEN_MARK,
    SUMMARY_COLUMNS,
    BenchResult,
    plot,
    summarize,
    write_csv,
    write_markdown,
    write_summary,
)
from bandit_experiments.ax_benchmark.strategies import (
    AX_DEFAULT,
    STRATEGIES,
    bandit_strategy,
    configure_strategy,
    parse_label,
    strategy_fingerprint,
)
from bandit_experiments.ax_benchmark.suite import HALVES, PROBLEMS, half_of
from bandit_experiments.common.executors import dask_map, pool_map, worker_pool
from botorch_bandits._io import atomic_open, check_not_symlink
from botorch_bandits.upstream import client_generation_strategy


# --------------------------------------------------------------------------------------
# one job
# --------------------------------------------------------------------------------------
@contextlib.contextmanager
def job_environment() -> Iterator[None]:
    """One torch thread, Ax's INFO logs and warnings off; restored afterwards (a job
    may run in the calling process)."""
    threads = torch.get_num_threads()
    disabled = logging.root.manager.disable
    torch.set_num_threads(1)
    logging.disable(logging.INFO)  # Ax logs every trial at INFO
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(disabled)
        torch.set_num_threads(threads)


def new_client(
    prob: Problem,
    name: str,
    strategy: str,
    seed: int,
    node_kwargs: Mapping[str, Any] | None = None,
) -> Any:
    """A fresh in-memory ``Client`` on the problem (minimized) with the strategy."""
    from ax import Client  # (a fresh Dask worker: Ax logs at INFO on import)

    client = Client(random_seed=seed)
    client.configure_experiment(
        name=name,
        parameters=ax_parameters(prob),
        parameter_constraints=list(prob.constraints) or None,
    )
    client.configure_optimization(objective="-f")
    configure_strategy(client, strategy, seed, node_kwargs)
    return client


def run_job(
    problem: str,
    strategy: str,
    seed: int,
    trials: int,
    node_kwargs: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One (problem, strategy, seed): a fresh in-memory ``Client``, ``trials`` trials
    one at a time (``node_kwargs``: options of a bandit strategy's node). Returns the
    job's keys and per-trial lists ``value`` (observed), ``noise_free_value``,
    ``cumulative_regret``, ``best_value``, ``simple_regret``, ``gen_seconds`` (of each
    ``get_next_trials`` call); ``repeats`` (trials at a configuration evaluated
    before), ``on_bound`` (the share of range coordinates exactly on a bound) and the
    strategy's ``code`` fingerprint."""
    prob = PROBLEMS[problem]
    values, true_values, gen_seconds = [], [], []
    configurations: list[dict[str, Any]] = []
    with job_environment():
        client = new_client(
            prob, f"ax-bench-{problem}-{seed}", strategy, seed, node_kwargs
        )
        for _ in range(trials):
            start = time.perf_counter()
            new = client.get_next_trials(max_trials=1)
            gen_seconds.append(time.perf_counter() - start)
            if len(new) != 1:
                raise RuntimeError(
                    f"{strategy} on {problem} (seed {seed}) made {len(new)} trials "
                    f"for one request at trial {len(values) + 1}."
                )
            ((index, params),) = new.items()
            value = prob.observe(params, seed, index)
            client.complete_trial(trial_index=index, raw_data={"f": value})
            values.append(value)
            true_values.append(prob(params))
            configurations.append(dict(params))
    return {
        "problem": problem,
        "strategy": strategy,
        "seed": seed,
        "value": values,
        "noise_free_value": true_values,
        **prob.regrets(true_values),
        "gen_seconds": gen_seconds,
        "repeats": repeated_configurations(configurations),
        "on_bound": share_on_bound(prob, configurations),
        "code": strategy_fingerprint(strategy),
    }


def share_on_bound(prob: Problem, configurations: Sequence[Mapping[str, Any]]) -> float:
    """The share of the float range coordinates of ``configurations`` that lie
    exactly on their range's lower or upper bound (0 without float ranges)."""
    ranges = [p for p in prob.parameters if isinstance(p, Range) and p.kind == "float"]
    hits = [
        float(params[r.name]) in (r.low, r.high)
        for params in configurations
        for r in ranges
    ]
    return float(np.mean(hits)) if hits else 0.0


# --------------------------------------------------------------------------------------
# the benchmark
# --------------------------------------------------------------------------------------
def _check_names(
    arg: str, given: Sequence[str] | None, known: Sequence[str]
) -> tuple[str, ...]:
    if given is None:
        return tuple(known)
    names = tuple(given)
    unknown = [n for n in names if n not in known]
    if unknown or not names or len(set(names)) != len(names):
        raise ValueError(
            f"`{arg}` must be distinct names among {list(known)}, got {list(names)!r}."
        )
    return names


def _check_strategies(given: Sequence[str] | None) -> tuple[str, ...]:
    """The strategy labels (default: every one of ``STRATEGIES``), variants
    (``"IGP-UCB[beta=2]"``) included."""
    if given is None:
        return tuple(STRATEGIES)
    labels = tuple(given)
    if not labels or len(set(labels)) != len(labels):
        raise ValueError(
            f"`strategies` must be distinct labels among {list(STRATEGIES)} (or "
            f"their variants), got {list(labels)!r}."
        )
    for label in labels:
        parse_label(label)
    return labels


def run_bench(
    problems: Sequence[str] | None = None,
    half: str | None = None,
    strategies: Sequence[str] | None = None,
    seeds: int = 5,
    trials: int = 60,
    workers: int | None = None,
    dask: bool = False,
    out: str | Path | None = "runs/ax-bench",
    show_progress: bool = True,
    resume: bool = False,
) -> BenchResult:
    """Run every (problem, strategy, seed) job, seeds ``0..seeds-1``; write the CSVs
    and PNGs to ``out`` (``None``: write nothing). ``problems``: names (default:
    the development and validation halves, or the problems of ``half``:
    ``"development"``, ``"validation"`` or ``"test"``).

    Each finished job is also kept in ``out/jobs/`` (one JSON file, written
    atomically); ``resume=True`` reuses the kept jobs of the same problem, strategy,
    seed and number of trials whose strategy has the same fingerprint (a job is a
    function of those: only its generation seconds differ between runs) and runs the
    others -- an interrupted full-size run continues where it stopped, and a changed
    default reruns its jobs.

    ``workers``: processes (default: the CPU count, at most the number of jobs; 1 runs
    the jobs in this process). ``dask``: run them on a ``distributed.LocalCluster`` on
    127.0.0.1 with ``workers`` processes of one thread each."""
    probs, strats = _check_bench(problems, half, strategies, seeds, trials, workers)
    out_dir = None if out is None else _prepare_out(Path(out), probs)
    for label in strats:  # a strategy's arguments are checked when it is built
        if STRATEGIES[parse_label(label)[0]] is not None:
            bandit_strategy(label, 0)
    all_specs = [
        {"problem": p, "strategy": s, "seed": k, "trials": trials}
        for p in probs
        for s in strats
        for k in range(seeds)
    ]
    keep = None if out_dir is None else JobStore(out_dir / "jobs")
    kept = [] if keep is None or not resume else keep.load(all_specs)
    jobs, start = _run_missing(all_specs, kept, keep, workers, dask, show_progress)
    result = BenchResult(
        jobs, probs, strats, seeds, trials, time.perf_counter() - start
    )
    result.summary = summarize(result)
    if out_dir is not None:
        result.paths = [
            write_csv(result, out_dir / "ax_bench.csv"),
            write_summary(result, out_dir / "summary.csv"),
            write_markdown(result, out_dir / "summary.md"),
            *(plot(result, p, out_dir / f"{p}.png") for p in probs),
        ]
    return result


def _check_bench(
    problems: Sequence[str] | None,
    half: str | None,
    strategies: Sequence[str] | None,
    seeds: int,
    trials: int,
    workers: int | None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:func:`run_bench`'s problems (of ``half``) and strategies, its sizes
    checked."""
    if half is not None and half not in HALVES:
        raise ValueError(f"`half` must be one of {list(HALVES)}, got {half!r}.")
    known = list(PROBLEMS) if half is None else list(HALVES[half])
    if problems is None and half is None:
        # every problem but the test half's, which runs when asked for (once, at
        # the end of issue 51)
        problems = [n for n in known if n not in HALVES["test"]]
    probs = _check_names("problems", problems, known)
    strats = _check_strategies(strategies)
    for arg, value in (("seeds", seeds), ("trials", trials), ("workers", workers)):
        if value is None and arg == "workers":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"`{arg}` must be an integer >= 1, got {arg}={value!r}.")
    return probs, strats


def _prepare_out(out_dir: Path, probs: Sequence[str]) -> Path:
    """``out_dir``, made, none of its output files a symlink (before any work)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = ("ax_bench.csv", "summary.csv", "summary.md")
    for name in (*files, *(f"{p}.png" for p in probs)):
        check_not_symlink(out_dir / name)  # before any work
    return out_dir


def _run_missing(
    all_specs: list[dict[str, Any]],
    kept: list[dict[str, Any]],
    keep: JobStore | None,
    workers: int | None,
    dask: bool,
    show_progress: bool,
) -> tuple[list[dict[str, Any]], float]:
    """Run the jobs of ``all_specs`` not ``kept`` (each kept as it finishes) on the
    Dask cluster, in worker processes or here; returns every job in ``all_specs``'
    order and when the run began (``time.perf_counter``)."""
    found = {(j["problem"], j["strategy"], j["seed"]) for j in kept}
    specs = [
        s for s in all_specs if (s["problem"], s["strategy"], s["seed"]) not in found
    ]
    n = max(1, min(workers or os.cpu_count() or 1, len(specs)))
    bar = None
    if show_progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(all_specs), initial=len(kept), desc="ax-bench", unit="job")
    bar = _Progress(bar, keep)
    start = time.perf_counter()
    try:
        if not specs:
            jobs = []
        elif dask:
            jobs = dask_map(run_job, specs, "local", partial(_advance, bar), workers=n)
        elif n <= 1:
            jobs = [_advance(bar, run_job(**spec)) for spec in specs]
        else:
            with worker_pool(n) as pool:
                jobs = pool_map(pool, run_job, specs, partial(_advance, bar))
    finally:
        bar.close()
    jobs = kept + jobs
    order = {
        (s["problem"], s["strategy"], s["seed"]): i for i, s in enumerate(all_specs)
    }
    jobs.sort(key=lambda j: order[(j["problem"], j["strategy"], j["seed"])])
    return jobs, start


class JobStore:
    """Finished jobs as JSON files in a folder, one per (problem, strategy, seed,
    trials); a job is loaded only under its strategy's current ``fingerprint``."""

    def __init__(
        self, folder: Path, fingerprint: Callable[[str], str] = strategy_fingerprint
    ) -> None:
        self.folder = folder
        self.fingerprint = fingerprint

    def path(self, spec: Mapping[str, Any]) -> Path:
        slug = "".join(
            c if c.isalnum() or c in "-." else "_" for c in str(spec["strategy"])
        )
        return self.folder / (
            f"{spec['problem']}__{slug}__seed{spec['seed']}__T{spec['trials']}.json"
        )

    def save(self, job: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        spec = {**job, "trials": len(job["value"])}
        with atomic_open(self.path(spec), "w") as fh:
            json.dump(job, fh)

    def load(self, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        jobs = []
        for spec in specs:
            path = self.path(spec)
            if path.is_file():
                with open(path) as fh:
                    job = json.load(fh)
                if len(job["value"]) == spec["trials"] and job.get(
                    "code"
                ) == self.fingerprint(spec["strategy"]):
                    jobs.append(job)
        return jobs


class _Progress:
    """The tqdm bar (or none) and the job store, advanced as each job finishes."""

    def __init__(self, bar: Any, keep: JobStore | None) -> None:
        self.bar, self.keep = bar, keep

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _advance(progress: _Progress, job: dict[str, Any]) -> dict[str, Any]:
    if progress.keep is not None:
        progress.keep.save(job)
    if progress.bar is not None:
        progress.bar.update(1)
        progress.bar.set_postfix_str(
            f"{job['problem']} / {job['strategy']} / {job['seed']}"
        )
    return job


# --------------------------------------------------------------------------------------
# generation time against the number of completed trials
# --------------------------------------------------------------------------------------
#: trials the strategy makes itself before the Sobol points are attached (Ax's
#: default initialization budget, and the practical mode's)
GROWTH_INIT = 5


def generation_growth(
    problem: str = "hartmann6",
    sizes: Sequence[int] = (100, 200, 400),
    strategies: Sequence[str] = ("IGP-UCB", "IGP-UCB (theory)", AX_DEFAULT),
    repeats: int = 3,
    seed: int = 0,
    limit: float | None = 600.0,
    isolate: bool = True,
    setup: Callable[[str, str, int, int], tuple[Any, Any, list]] | None = None,
    done: Sequence[Mapping[str, Any]] = (),
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Seconds of one ``get_next_trials(max_trials=1)`` call on an experiment that
    already holds ``n`` completed trials, for each ``n`` in ``sizes`` and each
    strategy: the strategy makes its first ``GROWTH_INIT`` trials, then ``n`` minus
    those completed trials at scrambled-Sobol points (the same for every strategy) are
    attached with their values, then ``repeats`` decisions are timed (each
    completed before the next; the median is reported). The node recomputes its
    state from the experiment on every call, so this is the cost a user waits for
    at that point of a long experiment. A strategy is skipped at a size where its
    ``repeats`` calls, extrapolated from the two sizes before (:func:`_extrapolate`),
    would pass ``limit`` seconds (the row says ``skipped`` and that estimate). ``isolate``: each size and
    strategy in a fresh process (``peak_rss_mb`` is then that cell's own peak
    resident memory, the attaching included; else the process's peak so far).
    ``setup``: ``(problem, label, seed, n)`` -> the client, the raw data of a trial
    (``(params, index)`` -> values by metric) and the points to attach (a
    module-level function: it runs in the cell's process; default: the
    benchmark's problems). ``done``: rows of an earlier run (kept in a file), each
    reused for its cell where its problem, repeats and seed are this run's (a failed
    one is run again); ``on_row``: called with each new row as it is made (to keep
    it). A cell that raises is a row with ``failed`` (the exception's type and
    message), and the others go on."""
    setup = _growth_setup if setup is None else setup
    if setup is _growth_setup:
        PROBLEMS[problem]  # a KeyError names an unknown problem early
    _check_strategies(strategies)
    kept = {
        (r["strategy"], r["completed"]): dict(r)
        for r in done
        if (r.get("problem"), r.get("repeats"), r.get("seed"))
        == (problem, repeats, seed)
        and not r.get("failed")
    }
    rows: list[dict[str, Any]] = []
    for n in sizes:
        for label in strategies:
            if (label, n) in kept:
                rows.append(kept[(label, n)])
                continue
            ran = [
                r
                for r in rows
                if r["strategy"] == label and not (r.get("skipped") or r.get("failed"))
            ]
            if limit is not None and len(ran) >= 2:
                estimate = _extrapolate(ran[-2], ran[-1], n)
                if estimate > limit:
                    row = {"skipped": True, "estimate": estimate}
                    rows.append(_keyed(row, problem, label, n, repeats, seed, on_row))
                    continue
            try:
                if isolate:  # a fresh process: its peak memory is this call's alone
                    context = multiprocessing.get_context("spawn")
                    with ProcessPoolExecutor(1, context) as pool:  # one task, closed
                        row = pool.submit(
                            _growth_cell, problem, n, label, repeats, seed, setup
                        ).result()
                else:
                    row = _growth_cell(problem, n, label, repeats, seed, setup)
            except Exception as err:  # the cell's failure is its row; the rest go on
                row = {"failed": f"{type(err).__name__}: {err}"}
            rows.append(_keyed(row, problem, label, n, repeats, seed, on_row))
    return rows


def _keyed(
    row: dict[str, Any],
    problem: str,
    label: str,
    n: int,
    repeats: int,
    seed: int,
    on_row: Callable[[dict[str, Any]], None] | None,
) -> dict[str, Any]:
    """A growth row with its cell's keys, passed to ``on_row``."""
    row = {
        **row,
        "problem": problem,
        "strategy": label,
        "completed": n,
        "repeats": repeats,
        "seed": seed,
    }
    if on_row is not None:
        on_row(row)
    return row


def _extrapolate(a: dict[str, Any], b: dict[str, Any], n: int) -> float:
    """The seconds of the calls at ``n``, from the two sizes before (rows ``a`` and
    ``b``): ``b``'s total grown like ``n^p``, ``p`` the growth between ``a`` and
    ``b`` (between 1 and 3: a fixed cost per call dominates at small sizes)."""
    ta, tb = sum(a["seconds"]), sum(b["seconds"])
    p = math.log(max(tb, 1e-9) / max(ta, 1e-9)) / math.log(
        b["completed"] / a["completed"]
    )
    return tb * (n / b["completed"]) ** min(max(p, 1.0), 3.0)


def _growth_cell(
    problem: str, n: int, label: str, repeats: int, seed: int, setup: Any
) -> dict[str, Any]:
    """One cell of :func:`generation_growth`: its row."""
    with job_environment():
        client, data, points = setup(problem, label, seed, n)

        def complete() -> float:  # one decision, evaluated and completed
            start = time.perf_counter()
            ((index, params),) = client.get_next_trials(max_trials=1).items()
            seconds = time.perf_counter() - start
            client.complete_trial(trial_index=index, raw_data=data(params, index))
            return seconds

        # the first trials (the initialization) made by the strategy itself
        for _ in range(min(GROWTH_INIT, n)):
            complete()
        _attach(client, points, data)
        spent = _time_nodes(client)
        seconds, inside = [], []
        for _ in range(repeats):
            before = spent[0]
            seconds.append(complete())
            inside.append(spent[0] - before)
    row = {
        "problem": problem,
        "strategy": label,
        "completed": n,
        "seconds_median": float(np.median(seconds)),
        "seconds": seconds,
        # the process's peak resident memory so far (Linux: KiB)
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
    }
    if any(inside):  # a bandit node: its own seconds in each call, and Ax's rest
        row["node_seconds"] = inside
        row["node_seconds_median"] = float(np.median(inside))
        row["ax_seconds_median"] = float(
            np.median([t - i for t, i in zip(seconds, inside, strict=True)])
        )
    return row


def _growth_setup(problem: str, label: str, seed: int, n: int) -> tuple[Any, Any, list]:
    """A growth cell's client on a benchmark problem, the data of a trial
    (``(params, index)`` -> raw data) and the ``n - GROWTH_INIT`` Sobol points
    attached (the ``setup`` of :func:`generation_growth`)."""
    prob = PROBLEMS[problem]
    client = new_client(prob, f"growth-{problem}-{n}", label, seed)
    points = _sobol_points(prob, n - GROWTH_INIT, seed)
    return client, lambda params, i: {"f": prob.observe(params, seed, i)}, points


def _time_nodes(client: Any) -> list[float]:
    """Wrap the bandit nodes of the client's strategy (this process's objects only)
    so that the seconds they spend reading the experiment and deciding add up in
    the returned one-element list."""
    spent = [0.0]
    for node in client_generation_strategy(client).nodes_by_name.values():
        if not hasattr(node, "decision_options"):
            continue
        for name in ("update_generator_state", "get_next_candidate"):
            method = getattr(node, name)

            def timed(*args: Any, _method: Any = method, **kw: Any) -> Any:
                start = time.perf_counter()
                try:
                    return _method(*args, **kw)
                finally:
                    spent[0] += time.perf_counter() - start

            setattr(node, name, timed)
    return spent


def attach_completed(
    client: Any, prob: Problem, points: Sequence[Mapping[str, Any]], seed: int
) -> list[int]:
    """Attach ``points`` to ``client`` as completed trials with the problem's values,
    in order; the same trials, statuses and data as ``attach_trial`` then
    ``complete_trial`` with ``raw_data={"f": value}`` for each, but the data are
    attached to the experiment once (each ``complete_trial`` appends to the
    experiment's data: quadratic in the trials, about 2 minutes for 2000)."""
    return _attach(client, points, lambda p, i: {"f": prob.observe(p, seed, i)})


def _attach(client: Any, points: Sequence[Mapping[str, Any]], data: Any) -> list[int]:
    """:func:`attach_completed` with each trial's raw data from ``data(params,
    index)`` (a metric's value by its name)."""
    from ax.core.data import Data

    experiment = client._experiment
    datas, indices = [], []
    for params in points:
        index = client.attach_trial(parameters=params)
        trial = experiment.trials[index]
        values = data(params, index)
        raw = {trial.arm.name: [(np.nan, values)]}  # as Client.attach_data
        datas.append(trial._raw_evaluations_to_data(raw_data=raw))
        trial.mark_completed()
        indices.append(index)
    if datas:
        experiment.attach_data(Data.from_multiple_data(datas))
    return indices


def _sobol_points(prob: Problem, count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` points of the problem's space (scrambled Sobol in its box, kept if
    they satisfy its constraints; ranges only)."""
    if count <= 0:
        return []
    if any(isinstance(p, Choice) or p.kind != "float" for p in prob.parameters):
        raise ValueError(
            f"generation_growth needs a float-only problem, not {prob.name}."
        )
    engine = SobolEngine(len(prob.parameters), scramble=True, seed=seed + 7)
    points: list[dict[str, Any]] = []
    while len(points) < count:
        for row in engine.draw(count).tolist():
            params = unit_to_params(prob.parameters, row)
            if all(_satisfies(c, params) for c in prob.constraints):
                points.append(params)
    return points[:count]


def _satisfies(constraint: str, params: Mapping[str, Any]) -> bool:
    """``"x0 + x1 <= 0.5"`` (a sum of parameters, ``<=`` a number) at ``params``."""
    lhs, rhs = constraint.split("<=")
    return sum(params[t.strip()] for t in lhs.split("+")) <= float(rhs)


__all__ = [
    "AX_DEFAULT",
    "CSV_COLUMNS",
    "GEN_MARK",
    "GROWTH_INIT",
    "HALVES",
    "PROBLEMS",
    "STRATEGIES",
    "SUMMARY_COLUMNS",
    "BenchResult",
    "Choice",
    "JobStore",
    "Problem",
    "Range",
    "attach_completed",
    "ax_parameters",
    "bandit_strategy",
    "branin",
    "configure_strategy",
    "generation_growth",
    "half_of",
    "hartmann6",
    "job_environment",
    "new_client",
    "parse_label",
    "plot",
    "repeated_configurations",
    "run_bench",
    "run_job",
    "share_on_bound",
    "summarize",
    "unit_to_params",
    "write_csv",
    "write_markdown",
    "write_summary",
]
