"""A reproduction's files: the per-step CSV (at the recorded steps), the runs CSV
(every run's final cumulative regret) and ``timings.csv`` (each experiment's wall
time); :mod:`~bandit_experiments.reproduction.report` reads them back."""

from __future__ import annotations

import csv
import math
import time
from pathlib import Path
from typing import Any

import torch

from bandit_experiments.reproduction.experiments import problem_label
from bandit_experiments.reproduction.result import ReproduceResult
from botorch_bandits._io import atomic_open

CHECKPOINTS = frozenset({25, 40, 50, 100, 200, 350})
"""Steps the per-step CSVs always keep besides the last one (the report reads them)."""

CSV_COLUMNS = (
    "experiment",
    "problem",
    "algorithm",
    "step",
    "metric",
    "mean",
    "se",
    "n_seeds",
)

RECORD_DENSE = 500
"""``record="log"`` keeps every step up to this one ..."""
RECORD_LOG_POINTS = 500
"""... and this many log-spaced steps from there to the horizon."""


def check_record(record: Any) -> None:
    """``record`` is ``"all"``, ``"log"`` or an integer k >= 1 (every k-th step)."""
    if record in ("all", "log"):
        return
    if isinstance(record, bool) or not isinstance(record, int) or record < 1:
        raise ValueError(
            "`record` must be 'all', 'log' or an integer k >= 1 (every k-th step), "
            f"got record={record!r}."
        )


def recorded_steps(horizon: int, record: str | int = "log") -> list[int]:
    """The steps (1-based) a reproduction's CSV keeps for a job of ``horizon`` steps.

    * ``"all"``: every step.
    * ``"log"`` (default): every step up to :data:`RECORD_DENSE` (500), then
      :data:`RECORD_LOG_POINTS` (500) log-spaced steps up to the horizon -- at most
      about 1000 rows per curve, so a 30000-step figure's CSV stays near 2 MB instead
      of 70 MB, and a curve on a log axis keeps its resolution everywhere.
    * an integer k: every k-th step.

    The last step and the report's checkpoints (:data:`CHECKPOINTS`) up to the
    horizon are always kept, so REPRODUCTION.md reads the same numbers under every
    choice.
    """
    check_record(record)
    if record == "all":
        return list(range(1, horizon + 1))
    if record == "log":
        steps = set(range(1, min(horizon, RECORD_DENSE) + 1))
        if horizon > RECORD_DENSE:
            ratio = math.log(horizon / RECORD_DENSE) / RECORD_LOG_POINTS
            steps.update(
                round(RECORD_DENSE * math.exp(ratio * i))
                for i in range(1, RECORD_LOG_POINTS + 1)
            )
    else:
        steps = set(range(record, horizon + 1, record))
    steps.update(c for c in CHECKPOINTS if c <= horizon)
    steps.add(horizon)
    return sorted(s for s in steps if 1 <= s <= horizon)


def write_csv(result: ReproduceResult, path: Path) -> Path:
    """Long form, one row per (problem, algorithm, recorded step, metric) -- the steps
    of :func:`recorded_steps` under ``result.record`` -- values with 8 significant
    digits."""
    name = result.experiment.name
    with atomic_open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_COLUMNS)
        for job in result.jobs:
            steps = recorded_steps(job["steps"], result.record)
            index = torch.tensor(steps) - 1
            label = problem_label(job["problem"], job["steps"])
            for metric in job["csv_metrics"]:
                mean, se = job["stats"][metric]
                writer.writerows(
                    (
                        name,
                        label,
                        job["algorithm"],
                        step,
                        metric,
                        f"{m:.8g}",
                        f"{s:.8g}",
                        job["n_seeds"],
                    )
                    for step, m, s in zip(
                        steps,
                        mean[index].tolist(),
                        se[index].tolist(),
                        strict=True,
                    )
                )
    return path


RUNS_COLUMNS = ("experiment", "problem", "algorithm", "seed", "metric", "value")


def write_runs_csv(result: ReproduceResult, path: Path) -> Path:
    """One row per run (seed) and job: the final cumulative regret R_T of every run
    (the per-run exponent fits and the paired differences of REPRODUCTION.md need
    the runs, not only their mean). Seed ``s`` of two algorithms on one problem shares
    its function draws (common random numbers)."""
    name = result.experiment.name
    with atomic_open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(RUNS_COLUMNS)
        for job in result.jobs:
            finals = job["final_cumulative_regret"].reshape(-1).tolist()
            writer.writerows(
                (
                    name,
                    problem_label(job["problem"], job["steps"]),
                    job["algorithm"],
                    s,
                    "final_cumulative_regret",
                    f"{v:.10g}",
                )
                for s, v in enumerate(finals)
            )
    return path


TIMING_COLUMNS = (
    "experiment",
    "seeds",
    "horizon",
    "seconds",
    "finished",
    "protocol",
    "job_seconds",
    "workers",
)
"""``seconds``: the experiment's wall time when it ran alone (``reproduce``), its
share of the pool's wall time when it ran with the others (``reproduce all``: its
``job_seconds`` over the ``workers``); ``job_seconds``: the seconds its jobs ran,
summed (older files have neither of the last two columns)."""


def read_timings(out_dir: str | Path) -> dict[str, dict[str, str]]:
    """``<out>/timings.csv`` by experiment (empty if there is none)."""
    path = Path(out_dir) / "timings.csv"
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        return {r["experiment"]: r for r in csv.DictReader(fh)}


def job_seconds(jobs: list[dict[str, Any]]) -> float:
    """The seconds the jobs ran (each job's own ``seconds``), summed."""
    return sum(float(j["seconds"]) for j in jobs)


def protocol(exp: Any) -> str:
    """What an experiment's runs depend on beyond its sizes (its reading and
    refits): a resumed ``reproduce all`` reruns an experiment whose recorded
    protocol differs (e.g. runs made before App. C's refits were the default)."""
    return f"{exp.reading} | refit_every={exp.refit_every}"


def record_timing(
    out_dir: Path, result: ReproduceResult, seconds: float, workers: int
) -> None:
    """Append the run's time (:data:`TIMING_COLUMNS`: ``seconds``, and the seconds
    its jobs ran on ``workers`` processes) to ``<out>/timings.csv``; a rerun of an
    experiment replaces its row."""
    rows = read_timings(out_dir)
    rows[result.experiment.name] = {
        "experiment": result.experiment.name,
        "seeds": result.seeds,
        "horizon": result.horizon,
        "seconds": f"{seconds:.1f}",
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "protocol": protocol(result.experiment),
        "job_seconds": f"{job_seconds(result.jobs):.1f}",
        "workers": workers,
    }
    with atomic_open(out_dir / "timings.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=TIMING_COLUMNS)
        writer.writeheader()
        writer.writerows(rows.values())


CALL_COLUMNS = ("finished", "seconds", "workers", "experiments")
"""``<out>/reproduce-all.csv``: one row per finished call of ``reproduce all`` (a
resumed run adds one; a killed call none): when it ended, its wall time (calibrations included), its worker
processes and the experiments it ran."""


def record_call(out_dir: Path, seconds: float, workers: int, ran: int) -> None:
    """Append one call of ``reproduce all`` (:data:`CALL_COLUMNS`) to
    ``<out>/reproduce-all.csv``."""
    rows = read_calls(out_dir)
    rows.append(
        {
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "seconds": f"{seconds:.1f}",
            "workers": workers,
            "experiments": ran,
        }
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_open(out_dir / "reproduce-all.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CALL_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def read_calls(out_dir: str | Path) -> list[dict[str, str]]:
    """``<out>/reproduce-all.csv``'s rows (empty if there is none)."""
    path = Path(out_dir) / "reproduce-all.csv"
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def written_files(result: ReproduceResult, out_dir: str | Path) -> list[Path]:
    """The files a run of ``reproduce`` leaves in ``out_dir``: the per-step CSV, the
    runs CSV, the plot and ``timings.csv``, then a piecewise experiment's detector
    table (written, or reused when one with the same settings was there)."""
    out = Path(out_dir)
    paths = [result.csv_path, result.runs_path, result.png_path, out / "timings.csv"]
    if result.calibration is not None:
        paths.append(result.calibration.path)
    if result.tuning is not None:  # calibration.tune's name for its table
        measure = result.experiment.options.get("measure", "volume")
        paths.append(out / f"avanesov-tuning-{measure}-m{result.tuning.samples}.csv")
    return [p for p in paths if p is not None]
