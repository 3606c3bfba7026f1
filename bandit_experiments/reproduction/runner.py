"""Run the papers' experiments (``python -m bandit_experiments reproduce <experiment>``): every
(problem, algorithm) pair of an experiment is one job (all its seeds in one batch),
run in local worker processes or on a Dask cluster; :func:`reproduce` writes the
CSVs, the plot and the timing, :func:`reproduce_all` runs every experiment.

The experiments are in :mod:`~bandit_experiments.reproduction.experiments`,
the simulator families in :mod:`~bandit_experiments.reproduction.families`;
this module also re-exports their public names (and the output's, calibration's and
plot's), which it held before they moved out. User documentation:
``docs/reproducing.md``.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, as_completed
from pathlib import Path
from typing import Any

import torch

from bandit_experiments.common.executors import (
    check_dask_address,
    dask_map,
    pool_map,
    worker_pool,
)
from bandit_experiments.reproduction.calibration import (
    CALIBRATION_COLUMNS,
    Calibration,
    calibrate,
    read_calibration,
    reading_name,
    tune,
)
from bandit_experiments.reproduction.cpd_tuning import DetectorTuning
from bandit_experiments.reproduction.experiments import (
    ALIASES,
    CONSTRAINED_PROBLEMS,
    DELAYED_SETTINGS,
    EXPERIMENTS,
    PIECEWISE_READINGS,
    PIECEWISE_SETTINGS,
    PROBLEM_TITLES,
    PROBLEMS,
    DelayedSetting,
    Experiment,
    all_experiments,
    problem_label,
    problem_title,
)
from bandit_experiments.reproduction.families import (
    CONSTRAINED_METRICS,
    CSV_METRICS,
    DELAYED_CSV_METRICS,
    FAMILY_OF,
    Family,
    run_job,
)
from bandit_experiments.reproduction.output import (
    CSV_COLUMNS,
    RECORD_DENSE,
    RECORD_LOG_POINTS,
    RUNS_COLUMNS,
    TIMING_COLUMNS,
    check_record,
    job_seconds,
    protocol,
    read_timings,
    record_call,
    record_timing,
    recorded_steps,
    write_csv,
    write_runs_csv,
)
from bandit_experiments.reproduction.plots import plot
from bandit_experiments.reproduction.result import ReproduceResult
from botorch_bandits.validation import check_seed

__all__ = [
    "ALIASES",
    "CALIBRATION_COLUMNS",
    "CONSTRAINED_METRICS",
    "CONSTRAINED_PROBLEMS",
    "CSV_COLUMNS",
    "CSV_METRICS",
    "DELAYED_CSV_METRICS",
    "DELAYED_SETTINGS",
    "EXPERIMENTS",
    "PIECEWISE_READINGS",
    "PIECEWISE_SETTINGS",
    "PROBLEMS",
    "PROBLEM_TITLES",
    "RECORD_DENSE",
    "RECORD_LOG_POINTS",
    "RUNS_COLUMNS",
    "TIMING_COLUMNS",
    "Calibration",
    "DelayedSetting",
    "Experiment",
    "ReproduceResult",
    "all_experiments",
    "calibrate",
    "check_record",
    "plot",
    "problem_label",
    "problem_title",
    "read_calibration",
    "read_timings",
    "reading_name",
    "record_timing",
    "recorded_steps",
    "reproduce",
    "reproduce_all",
    "run_job",
    "write_csv",
    "write_runs_csv",
]


def _problem_horizon(
    problem: str, T: int, exp: Experiment, given: int | None, smoke: bool
) -> int:
    """The horizon of one problem. A piecewise problem has its own ``T`` (Fig. 1 sweeps
    it); ``--horizon`` / ``--smoke`` set the experiment's largest horizon and the
    others scale with it (so a sweep stays a sweep)."""
    if problem not in PIECEWISE_SETTINGS:
        return T
    K_pieces, own = PIECEWISE_SETTINGS[problem]
    if given is None and not smoke:
        return own
    return max(K_pieces, round(own * T / exp.horizon))


def _bar(total: int, name: str) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the plot extra
        return None
    return tqdm(total=total, desc=name, unit="step")


def _advance(bar: Any, T: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """What is done with each finished job: the bar advances by the job's steps."""

    def each(job: dict[str, Any]) -> dict[str, Any]:
        if bar is not None:
            bar.update(job.get("steps", T))
            bar.set_postfix_str(f"{job['problem']} {job['algorithm']} done")
        return job

    return each


def reproduce(
    name: str,
    seeds: int | None = None,
    horizon: int | None = None,
    smoke: bool = False,
    out: str | Path | None = "runs/reproduce",
    dask: str | None = None,
    workers: int | None = None,
    algorithms: Sequence[str] | None = None,
    seed: int = 0,
    show_progress: bool = True,
    cpd_regularization: float | str | None = None,
    record: str | int = "log",
    device: str | None = None,
    dask_remote: bool = False,
) -> ReproduceResult:
    """Run experiment ``name``; write its CSV and PNG to ``out`` (``None``: write
    nothing); ``record``: the steps the CSV keeps (:func:`recorded_steps`; the plot
    and the printed summary always use every step). ``smoke`` uses the experiment's small sizes unless ``seeds`` /
    ``horizon`` are given. ``workers``: local worker processes (default: the number of
    CPUs, at most the number of jobs; 1 runs in this process with a per-step bar).
    ``cpd_regularization``: the change-point detector's constant c for the piecewise experiments:
    ``"suggested"`` (the default there: c and the threshold's C tuned as Avanesov
    suggests, :func:`tune`, on held-out draws, with its table), ``"calibrated"``
    (c picked inside GP-UCB-CPD for the experiment's reading, :func:`calibrate`, with
    its table; C = 2.6 as in §4), or a number (C = 2.6).
    ``device``: a torch device (``"cuda"``) for the finite-arm experiments: every
    seed of a job runs there at once, the jobs one after the other in this process
    (the instances are the CPU's; the noise comes from the device's generator, so
    the runs differ from the CPU's by their noise draws). ``dask_remote``: allow a
    ``dask`` scheduler on another host (``executors.DASK_TRUST``)."""
    exp, T, S, algos, family = _checked_run(
        name, seeds, horizon, smoke, dask, dask_remote, algorithms, seed, record, device
    )
    wall_start = time.perf_counter()
    calibration, tuning, cpd_regularization, cpd_threshold_scale = _detector_settings(
        exp, family, cpd_regularization, T, S, horizon, smoke, out, workers
    )
    specs = _job_specs(
        exp,
        algos,
        T,
        S,
        horizon,
        smoke,
        seed,
        cpd_regularization,
        cpd_threshold_scale,
        device,
    )
    start = time.perf_counter()
    jobs = _run_jobs(specs, name, T, dask, dask_remote, workers, device, show_progress)
    result = ReproduceResult(exp, jobs, T, S, time.perf_counter() - start, None, None)
    result.calibration = calibration
    result.tuning = tuning
    result.record = record
    if out is not None:
        seconds = time.perf_counter() - wall_start
        _write_outputs(result, name, Path(out), seconds, _pool_size(workers, specs))
    return result


def _pool_size(workers: int | None, specs: Sequence[Any]) -> int:
    """The local worker processes a run uses: ``workers``, by default the CPUs, at
    most one per job."""
    return max(1, workers or min(os.cpu_count() or 1, len(specs)))


def _checked_run(
    name: str,
    seeds: int | None,
    horizon: int | None,
    smoke: bool,
    dask: str | None,
    dask_remote: bool,
    algorithms: Sequence[str] | None,
    seed: int,
    record: str | int,
    device: str | None,
) -> tuple[Experiment, int, int, tuple[str, ...], Family]:
    """:func:`reproduce`'s arguments checked: the experiment, its horizon ``T`` and
    seeds ``S`` (given, or the smoke or paper sizes), its algorithms and their
    simulator family."""
    check_seed("seed", seed)
    if dask is not None:
        check_dask_address(dask, dask_remote)
    if name not in EXPERIMENTS:
        raise ValueError(
            f"`experiment` must be one of {sorted(EXPERIMENTS)}, got {name!r}."
        )
    exp = EXPERIMENTS[name]
    check_record(record)
    T = horizon or (exp.smoke_horizon if smoke else exp.horizon)
    S = seeds or (exp.smoke_seeds if smoke else exp.seeds)
    for arg, value in (("horizon", T), ("seeds", S)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"`{arg}` must be an integer >= 1, got {arg}={value!r}.")
    algos = tuple(algorithms) if algorithms else exp.algorithms
    family = FAMILY_OF[exp.problems[0]]
    if device is not None:
        check_device(device, family.name, name)
    unknown = [a for a in algos if not family.knows(a)]
    if unknown:
        raise ValueError(
            f"`algorithms` must be among {sorted(family.algorithms)}, got unknown "
            f"{unknown}."
        )
    return exp, T, S, algos, family


def _detector_settings(
    exp: Experiment,
    family: Family,
    cpd_regularization: float | str | None,
    T: int,
    S: int,
    horizon: int | None,
    smoke: bool,
    out: str | Path | None,
    workers: int | None,
) -> tuple[Calibration | None, DetectorTuning | None, float | str | None, float | None]:
    """The change-point detector's calibration or tuning (each with its table) and
    the constants ``c`` and ``C`` it gives, for a family with a detector; a given
    ``cpd_regularization`` checked (``C`` then the paper's)."""
    calibration = tuning = None
    cpd_threshold_scale = None
    if family.detector and cpd_regularization == "calibrated":
        calibration = calibrate(
            exp.options,
            seeds=S,
            horizon=_problem_horizon("pw-K4-T1200", T, exp, horizon, smoke),
            out=out,
            workers=workers,
        )
        cpd_regularization = calibration.c
    elif family.detector and (
        cpd_regularization is None or cpd_regularization == "suggested"
    ):
        # as many uniform points as the experiment's longest run collects,
        # xi sqrt(T) with xi = sqrt(3) (smoke runs: 8 draws of 20 points)
        longest = max(_problem_horizon(p, T, exp, horizon, smoke) for p in exp.problems)
        sizes = (
            {"draws": 8, "samples": 20}
            if smoke
            else {"samples": math.ceil(math.sqrt(3.0 * longest))}
        )
        tuning = tune(exp.options, out=out, **sizes)
        cpd_regularization, cpd_threshold_scale = tuning.c, tuning.C
    elif cpd_regularization is not None and not (
        isinstance(cpd_regularization, int | float)
        and not isinstance(cpd_regularization, bool)
        and cpd_regularization > 0
    ):
        raise ValueError(
            "`cpd_regularization` must be a number > 0, 'suggested' or 'calibrated', got "
            f"cpd_regularization={cpd_regularization!r}."
        )
    return calibration, tuning, cpd_regularization, cpd_threshold_scale


def _job_specs(
    exp: Experiment,
    algos: tuple[str, ...],
    T: int,
    S: int,
    horizon: int | None,
    smoke: bool,
    seed: int,
    cpd_regularization: float | str | None,
    cpd_threshold_scale: float | None,
    device: str | None,
) -> list[dict[str, Any]]:
    """One job's keyword arguments (:func:`run_job`) per (problem, algorithm) pair,
    in the experiment's order."""
    return [
        dict(
            problem=p,
            algorithm=a,
            horizon=_problem_horizon(p, T, exp, horizon, smoke),
            seeds=S,
            seed=seed,
            delta=exp.delta,
            beta_scale=exp.beta_scale,
            epoch_length=exp.epoch_length,
            **({"refit_every": exp.refit_every} if exp.refit_every else {}),
            **(
                {"cpd_regularization": cpd_regularization}
                if cpd_regularization is not None
                else {}
            ),
            **(
                {"cpd_threshold_scale": cpd_threshold_scale}
                if cpd_threshold_scale is not None
                else {}
            ),
            **({"options": exp.options} if exp.options else {}),
            **({"device": device} if device is not None else {}),
        )
        for p in exp.problems
        for a in algos
    ]


def _run_jobs(
    specs: list[dict[str, Any]],
    name: str,
    T: int,
    dask: str | None,
    dask_remote: bool,
    workers: int | None,
    device: str | None,
    show_progress: bool,
) -> list[dict[str, Any]]:
    """Run the jobs on the Dask cluster, in local worker processes or here (one
    worker, or a ``device``), with a progress bar; returns them in ``specs``'
    order."""
    bar = _bar(sum(s["horizon"] for s in specs), name) if show_progress else None
    if dask is not None:
        jobs = dask_map(
            run_job, specs, dask, _advance(bar, T), allow_remote=dask_remote
        )
    else:
        n = 1 if device is not None else workers or min(os.cpu_count() or 1, len(specs))
        if n <= 1:
            jobs = [run_job(**spec, progress=bar, threads=None) for spec in specs]
        else:
            # longest jobs first (the piecewise sweeps differ in T): less idle time
            # at the end
            ordered = sorted(specs, key=lambda spec: -spec["horizon"])
            with worker_pool(n) as pool:
                jobs = pool_map(pool, run_job, ordered, _advance(bar, T))
    if bar is not None:
        bar.close()
    order = {(s["problem"], s["algorithm"]): i for i, s in enumerate(specs)}
    jobs.sort(key=lambda j: order[(j["problem"], j["algorithm"])])
    return jobs


def _write_outputs(
    result: ReproduceResult, name: str, out_dir: Path, seconds: float, workers: int
) -> None:
    """The run's CSVs and plot in ``out_dir``, and its time (``seconds``, its jobs'
    on ``workers`` processes) in ``timings.csv``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    result.csv_path = write_csv(result, out_dir / f"{name}.csv")
    result.runs_path = write_runs_csv(result, out_dir / f"{name}-runs.csv")
    result.png_path = plot(result, out_dir / f"{name}.png")
    record_timing(out_dir, result, seconds, workers)


def check_device(device: str, family: str, experiment: str) -> None:
    """Refuse a ``device`` that torch cannot use, or one given for an experiment
    whose simulator runs on the CPU only (every family but the finite-arm one)."""
    if family != "finite-arm":
        raise ValueError(
            f"`device` is supported by the finite-arm experiments only; {experiment!r} "
            f"is a {family} experiment, got device={device!r}."
        )
    try:
        torch.empty(0, device=device)
    except (RuntimeError, AssertionError) as err:
        raise ValueError(
            f"`device` must be a torch device available here (e.g. 'cpu', 'cuda'), "
            f"got device={device!r}: {err}"
        ) from err


def reproduce_all(
    out: str | Path = "runs/reproduce",
    smoke: bool = False,
    resume: bool = False,
    workers: int | None = None,
    show_progress: bool = True,
    names: Sequence[str] | None = None,
    report: Callable[[str, ReproduceResult | None], None] | None = None,
    record: str | int = "log",
) -> float:
    """Run every experiment (``names``: a subset) into ``out``, each with its
    paper's sizes (or smoke sizes). ``resume`` skips an experiment whose CSV and
    runs CSV are already in ``out`` and whose recorded sizes and protocol
    (:func:`~bandit_experiments.reproduction.output.protocol`: reading, refits)
    match, so an interrupted run goes on where it stopped. ``workers``: local
    worker processes (default: the CPUs); with more than one, every job of every
    experiment runs on one pool of them (:class:`_SharedPool`: no worker idles at
    the end of an experiment waiting for its last job), each experiment's files
    written as its last job finishes; with one, the experiments run one after the
    other in this process (:func:`reproduce`). Returns the wall time of this call;
    ``<out>/timings.csv`` keeps each experiment's time
    (:data:`~bandit_experiments.reproduction.output.TIMING_COLUMNS`: on the shared
    pool its jobs' seconds over the workers, its share of the pool's wall time).
    ``report(name, result)`` is called after each experiment (``result`` None for
    a skipped one), in the order they finish. Each piecewise reading also gets the
    earlier rule's calibration table (:func:`calibrate`), which the report shows
    beside the suggested tuning the figures use (its time is not in
    ``timings.csv``; the returned wall time includes it)."""
    check_record(record)
    chosen = list(names) if names else all_experiments()
    unknown = [n for n in chosen if n not in EXPERIMENTS]
    if unknown:
        raise ValueError(
            f"`names` must be among {sorted(EXPERIMENTS)}, got unknown {unknown}."
        )
    out_dir = Path(out)
    start = time.perf_counter()
    done = read_timings(out_dir) if resume else {}
    n, ran = workers or os.cpu_count() or 1, 0
    with contextlib.ExitStack() as stack:
        shared = (
            stack.enter_context(_SharedPool(n, out_dir, record, report, show_progress))
            if n > 1
            else None
        )
        for name in chosen:
            exp = EXPERIMENTS[name]
            seeds, horizon = (
                (exp.smoke_seeds, exp.smoke_horizon)
                if smoke
                else (exp.seeds, exp.horizon)
            )
            if FAMILY_OF[exp.problems[0]].detector:
                # the earlier rule's table, reported beside the suggested tuning the
                # figures use (one per reading, reused by its other figures and by a
                # resumed run)
                calibrate(
                    exp.options,
                    seeds=seeds,
                    horizon=_problem_horizon("pw-K4-T1200", horizon, exp, None, smoke),
                    out=out_dir,
                    workers=workers,
                    pool=None if shared is None else shared.pool,
                )
            row = done.get(name)
            if (
                row is not None
                and (row["seeds"], row["horizon"]) == (str(seeds), str(horizon))
                and row.get("protocol") == protocol(exp)
                and (out_dir / f"{name}.csv").exists()
                and (out_dir / f"{name}-runs.csv").exists()
            ):
                if report is not None:
                    report(name, None)
                continue
            if shared is not None:
                shared.submit(name, smoke)
            else:
                result = reproduce(
                    name,
                    smoke=smoke,
                    out=out_dir,
                    workers=1,
                    show_progress=show_progress,
                    record=record,
                )
                if report is not None:
                    report(name, result)
            ran += 1
    seconds = time.perf_counter() - start
    if ran:
        record_call(out_dir, seconds, n, ran)
    return seconds


class _SharedPool:
    """One pool of worker processes for the jobs of several experiments
    (:func:`reproduce_all`). :meth:`submit` plans an experiment as
    :func:`reproduce` does (its detector tuning, if any, here, while the workers run
    the jobs already given) and queues its jobs, the longest horizon first; the
    context's exit waits for every job. Each job's result is taken as it finishes,
    and an experiment's files and timing are written (and ``report`` called) as its
    last job finishes. A job that fails stops the run with its error; the
    experiments finished before it keep their files, so ``--resume`` goes on."""

    def __init__(
        self,
        workers: int,
        out_dir: Path,
        record: str | int,
        report: Callable[[str, ReproduceResult | None], None] | None,
        show_progress: bool,
    ) -> None:
        self.workers, self.out_dir, self.record = workers, out_dir, record
        self.report = report
        self.bar = _bar(0, "all experiments") if show_progress else None
        self.plans: dict[str, ReproduceResult] = {}
        self.left: dict[str, int] = {}  # jobs not finished, by experiment
        self.order: dict[tuple[str, str, str], int] = {}  # a job's place in its specs
        self.futures: dict[Future, str] = {}
        self.stack = contextlib.ExitStack()

    def __enter__(self) -> _SharedPool:
        self.pool = self.stack.enter_context(worker_pool(self.workers))
        return self

    def submit(self, name: str, smoke: bool) -> None:
        """Plan experiment ``name`` (its paper's or smoke sizes) and queue its jobs."""
        exp, T, S, algos, family = _checked_run(
            name, None, None, smoke, None, False, None, 0, self.record, None
        )
        calibration, tuning, c, C = _detector_settings(
            exp, family, None, T, S, None, smoke, self.out_dir, self.workers
        )
        specs = _job_specs(exp, algos, T, S, None, smoke, 0, c, C, None)
        result = ReproduceResult(exp, [], T, S, 0.0, None, None, record=self.record)
        result.calibration, result.tuning = calibration, tuning
        self.plans[name], self.left[name] = result, len(specs)
        for i, spec in enumerate(specs):
            self.order[(name, spec["problem"], spec["algorithm"])] = i
        if self.bar is not None:
            self.bar.total += sum(s["horizon"] for s in specs)
            self.bar.refresh()
        for spec in sorted(specs, key=lambda spec: -spec["horizon"]):
            self.futures[self.pool.submit(run_job, **spec)] = name
        self._collect(wait=False)

    def _collect(self, wait: bool) -> None:
        """Take the finished jobs (``wait``: every job, as each finishes)."""
        ready = (
            as_completed(list(self.futures))
            if wait
            else [f for f in list(self.futures) if f.done()]
        )
        for future in ready:
            name = self.futures.pop(future)
            job = future.result()
            if self.bar is not None:
                self.bar.update(job["steps"])
            result = self.plans[name]
            result.jobs.append(job)
            self.left[name] -= 1
            if self.left[name] == 0:
                self._finish(name, result)

    def _finish(self, name: str, result: ReproduceResult) -> None:
        """Write a finished experiment's files and timing (its jobs' seconds over
        the workers) and report it."""
        result.jobs.sort(key=lambda j: self.order[(name, j["problem"], j["algorithm"])])
        result.seconds = job_seconds(result.jobs) / self.workers
        _write_outputs(result, name, self.out_dir, result.seconds, self.workers)
        if self.report is not None:
            self.report(name, result)

    def __exit__(self, *exc: Any) -> bool:
        error = exc
        try:
            if exc[0] is None:
                self._collect(wait=True)
        except BaseException as err:
            error = (type(err), err, err.__traceback__)
            raise
        finally:
            if error[0] is not None:  # the queued jobs are not run
                for future in self.futures:
                    future.cancel()
            if self.bar is not None:
                self.bar.close()
            self.stack.__exit__(*error)
        return False
