"""The result of one reproduction run (:class:`ReproduceResult`): its jobs' per-step
statistics and what the run prints from them (summary rows, the sweeps' power laws,
the paired differences of Avanesov's Fig. 3)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bandit_experiments.reproduction import stats
from bandit_experiments.reproduction.experiments import (
    FIG3_PAIRS,
    Experiment,
    problem_label,
)


@dataclass
class ReproduceResult:
    """The jobs of one run of an experiment (sorted as the experiment lists its
    problems and algorithms), the sizes that ran and the files written."""

    experiment: Experiment
    jobs: list[dict[str, Any]]
    horizon: int
    seeds: int
    seconds: float
    csv_path: Path | None
    png_path: Path | None
    runs_path: Path | None = None
    calibration: Any = None  # Calibration of the piecewise experiments
    tuning: Any = None  # DetectorTuning of the piecewise experiments
    record: str | int = "log"  # the CSV's steps (see recorded_steps)

    def summary(self) -> list[tuple[str, str, float, float, float, float]]:
        """``(problem, algorithm, final mean cumulative regret R_T, its s.e., mean
        R_t/t at t = T/2, mean R_T/T)``: the curve flattens when the last is smaller."""
        rows = []
        for job in self.jobs:
            mean, se = job["stats"]["cumulative_regret"]
            avg = job["stats"]["average_regret"][0]
            half = avg[max(mean.shape[0] // 2 - 1, 0)]
            rows.append(
                (
                    problem_label(job["problem"], job["steps"]),
                    job["algorithm"],
                    float(mean[-1]),
                    float(se[-1]),
                    float(half),
                    float(avg[-1]),
                )
            )
        return rows

    def power_law(self) -> stats.PowerLaw | None:
        """For the sweeps (Avanesov Figs. 1 and 2): the fit of the mean final regret
        :math:`R_T \approx C x^c` over the horizons (``x = T``) or the numbers of
        pieces (``x = K``)."""
        how = self.experiment.fit
        if how is None:
            return None
        xs = [j["steps"] if how == "T" else j["num_pieces"] for j in self.jobs]
        if len(set(xs)) < 3:
            return None
        ys = [float(j["stats"]["cumulative_regret"][0][-1]) for j in self.jobs]
        return stats.fit_power_law(xs, ys)

    def exponent_per_run(self) -> stats.Exponent | None:
        """For the sweeps: the exponent fitted on individual runs (each run's
        log-log slope over the sweep; mean and 95 % CI over runs,
        :func:`~bandit_experiments.reproduction.stats.exponent_per_run`)."""
        how = self.experiment.fit
        if how is None or len(self.jobs) < 3 or self.seeds < 2:
            return None
        xs = [j["steps"] if how == "T" else j["num_pieces"] for j in self.jobs]
        runs = [j["final_cumulative_regret"].reshape(-1).tolist() for j in self.jobs]
        return stats.exponent_per_run(xs, runs)

    def paired_differences(self) -> list[tuple[str, str, stats.Paired]]:
        """For Avanesov's Fig. 3: the paired differences of the final regrets
        (Oracle - CPD, CPD - GP-UCB, GP-UCB - NO-Detector) over runs that share
        their draws (common random numbers)."""
        finals = {j["algorithm"]: j["final_cumulative_regret"] for j in self.jobs}
        if len({j["problem"] for j in self.jobs}) != 1 or self.seeds < 2:
            return []
        out = []
        for a, b in FIG3_PAIRS:
            if a in finals and b in finals:
                diffs = (finals[a] - finals[b]).reshape(-1).tolist()
                out.append((a, b, stats.Paired.of(diffs)))
        return out
