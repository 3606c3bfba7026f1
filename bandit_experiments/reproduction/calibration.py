"""The change-point detector's settings of the piecewise experiments: tuned as
Avanesov suggests (:func:`tune`, the figures' default; table
``<out>/avanesov-tuning-<measure>-m<points>.csv``), or ``c`` calibrated inside
GP-UCB-CPD for each reading on held-out draws (:func:`calibrate`, the earlier rule;
table ``<out>/avanesov-calibration-<reading>.csv``)."""

from __future__ import annotations

import csv
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from bandit_experiments.common.executors import init_worker
from bandit_experiments.reproduction import detector
from bandit_experiments.reproduction.cpd_tuning import (
    FALSE_ALARM_SHARE,
    TUNING_C_VALUES,
    TUNING_SAMPLES,
    DetectorTuning,
    suggested_tuning,
)
from bandit_experiments.reproduction.experiments import PIECEWISE_READINGS
from botorch_bandits._io import atomic_open

CALIBRATION_COLUMNS = (
    "reading",
    "c",
    "changes",
    "detected",
    "false_alarms",
    "false_alarm_rate",
    "mean_delay",
    "regret",
    "regret_se",
    "n_seeds",
    "horizon",
    "picked",
)


@dataclass
class Calibration:
    """:func:`~bandit_experiments.reproduction.detector.calibrate_in_algorithm`'s
    table for one reading, and the picked ``c``."""

    reading: str
    rows: list[detector.CalibrationRow]
    c: float
    n_seeds: int
    horizon: int
    path: Path | None = None


def reading_name(options: dict[str, Any]) -> str:
    """The name of a piecewise reading (``natural``, ``log10``; otherwise its
    settings spelled out)."""
    for name, opts in PIECEWISE_READINGS.items():
        if opts == dict(options):
            return name
    return "-".join(f"{k}={v}" for k, v in sorted(options.items())) or "natural"


def _calibration_job(
    c: float, horizon: int, seeds: int, options: dict[str, Any]
) -> detector.CalibrationRow:
    torch.set_num_threads(1)
    return detector.calibrate_in_algorithm(
        (c,), horizon=horizon, num_seeds=seeds, **options
    )[0]


def calibrate(
    options: dict[str, Any],
    seeds: int = 64,
    horizon: int = 1200,
    out: str | Path | None = "runs/reproduce",
    workers: int | None = None,
    c_values: tuple[float, ...] = detector.CALIBRATION_C_VALUES,
    pool: Executor | None = None,
) -> Calibration:
    """Pick the detector constant for a reading: GP-UCB-CPD with each of ``c_values``
    on Fig. 3's setting (K = 4, ``horizon``) with held-out draws, ``seeds`` runs each,
    then :func:`~bandit_experiments.reproduction.detector.pick_c`. The table goes to
    ``<out>/avanesov-calibration-<reading>.csv``; a table there with the same sizes
    and values of c is reused (the figures of one reading share one calibration).
    ``pool``: an executor to run the runs on (``reproduce all``'s shared pool; its
    workers set one torch thread each) instead of ``workers`` new processes."""
    name = reading_name(options)
    path = None if out is None else Path(out) / f"avanesov-calibration-{name}.csv"
    if path is not None and path.exists():
        cached = read_calibration(path)
        if (
            cached is not None
            and [r.c for r in cached.rows] == [float(c) for c in c_values]
            and cached.n_seeds == seeds
            and cached.horizon == horizon
        ):
            return cached
    n = workers or min(os.cpu_count() or 1, len(c_values))
    args = [(c, horizon, seeds, dict(options)) for c in c_values]
    if pool is not None:
        rows = list(pool.map(_calibration_job, *zip(*args, strict=True)))
    elif n <= 1:
        rows = [_calibration_job(*a) for a in args]
    else:
        with ProcessPoolExecutor(max_workers=n, initializer=init_worker) as pool:
            rows = list(pool.map(_calibration_job, *zip(*args, strict=True)))
    result = Calibration(name, rows, detector.pick_c(rows), seeds, horizon, path)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(CALIBRATION_COLUMNS)
            for r in rows:
                writer.writerow(
                    (
                        name,
                        f"{r.c:g}",
                        r.changes,
                        r.detected,
                        r.false_alarms,
                        f"{r.false_alarm_rate:.6g}",
                        f"{r.mean_delay:.6g}",
                        f"{r.regret:.8g}",
                        f"{r.regret_se:.8g}",
                        seeds,
                        horizon,
                        int(r.c == result.c),
                    )
                )
    return result


def read_calibration(path: Path) -> Calibration | None:
    """A calibration table written by :func:`calibrate` (``None`` if it is empty)."""
    with open(path, newline="") as fh:
        records = list(csv.DictReader(fh))
    if not records:
        return None
    rows = [
        detector.CalibrationRow(
            c=float(r["c"]),
            changes=int(r["changes"]),
            detected=int(r["detected"]),
            false_alarms=int(r["false_alarms"]),
            mean_delay=float(r["mean_delay"]),
            regret=float(r["regret"]),
            regret_se=float(r["regret_se"]),
        )
        for r in records
    ]
    picked = [float(r["c"]) for r in records if r["picked"] == "1"]
    first = records[0]
    return Calibration(
        first["reading"],
        rows,
        picked[0],
        int(first["n_seeds"]),
        int(first["horizon"]),
        path,
    )


TUNING_COLUMNS = ("kind", "c", "value", "picked", "C", "draws", "samples", "share")


def tune(
    options: dict[str, Any],
    out: str | Path | None = "runs/reproduce",
    draws: int = 64,
    samples: int = TUNING_SAMPLES,
) -> DetectorTuning:
    """The detector tuned as Avanesov suggests
    (:func:`~bandit_experiments.reproduction.cpd_tuning.suggested_tuning`) for
    the reading's integration measure (the only setting of a reading it depends on). The
    table goes to ``<out>/avanesov-tuning-<measure>-m<points>.csv`` (rows ``cv``:
    each ``c`` and its leave-one-out score; rows ``peak``: each draw's peak statistic), and a
    table there with the same sizes, candidates and share is reused."""
    measure = options.get("measure", "volume")
    name = f"avanesov-tuning-{measure}-m{samples}.csv"
    path = None if out is None else Path(out) / name
    if path is not None and path.exists():
        cached = read_tuning(path)
        same = cached is not None and (
            (cached.draws, cached.samples, cached.share)
            == (draws, samples, FALSE_ALARM_SHARE)
            and [c for c, _ in cached.cv] == [float(c) for c in TUNING_C_VALUES]
        )
        if same:
            return cached
    result = suggested_tuning(draws, samples, measure=measure)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(TUNING_COLUMNS)
            common = (f"{result.C:.10g}", result.draws, result.samples, result.share)
            for c, score in result.cv:
                picked = int(c == result.c)
                writer.writerow(("cv", f"{c:.10g}", f"{score:.10g}", picked, *common))
            for peak in result.peaks:
                writer.writerow(
                    ("peak", f"{result.c:.10g}", f"{peak:.10g}", 0, *common)
                )
    return result


def read_tuning(path: Path) -> DetectorTuning | None:
    """A table written by :func:`tune` (``None`` if it is empty)."""
    with open(path, newline="") as fh:
        records = list(csv.DictReader(fh))
    if not records:
        return None
    cv = tuple((float(r["c"]), float(r["value"])) for r in records if r["kind"] == "cv")
    peaks = tuple(float(r["value"]) for r in records if r["kind"] == "peak")
    picked = [
        float(r["c"]) for r in records if r["kind"] == "cv" and r["picked"] == "1"
    ]
    first = records[0]
    return DetectorTuning(
        picked[0],
        float(first["C"]),
        cv,
        peaks,
        int(first["draws"]),
        int(first["samples"]),
        float(first["share"]),
    )
