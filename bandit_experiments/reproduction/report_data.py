"""What REPRODUCTION.md reads: the reproductions' CSVs of one folder (:func:`load`
into :class:`Data`) and the paired comparisons of two algorithms' runs on them."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bandit_experiments.reproduction.output import (
    CHECKPOINTS,
    read_calls,
    read_timings,
)
from bandit_experiments.reproduction.stats import Paired


@dataclass
class Data:
    """What the report reads from a folder of CSVs."""

    folder: Path
    steps: dict[tuple[str, str, str, str], dict[int, tuple[float, float, int]]] = field(
        default_factory=dict
    )
    last: dict[tuple[str, str, str, str], tuple[int, float, float, int]] = field(
        default_factory=dict
    )
    runs: dict[tuple[str, str, str], dict[int, float]] = field(default_factory=dict)
    calibration: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    tuning: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    timings: dict[str, dict[str, str]] = field(default_factory=dict)
    calls: list[dict[str, str]] = field(default_factory=list)  # reproduce all's
    experiments: set[str] = field(default_factory=set)

    def has(self, experiment: str) -> bool:
        return experiment in self.experiments

    def problems(self, experiment: str) -> list[str]:
        seen: dict[str, None] = {}
        for e, p, _, _ in self.last:
            if e == experiment:
                seen[p] = None
        return list(seen)

    def final(
        self, exp: str, problem: str, algo: str, metric: str = "cumulative_regret"
    ) -> tuple[float, float, int]:
        """(mean, s.e., runs) at the last step."""
        _, mean, se, n = self.last[(exp, problem, algo, metric)]
        return mean, se, n

    def at(
        self, exp: str, problem: str, algo: str, metric: str, step: int
    ) -> tuple[float, float, int]:
        """(mean, s.e., runs) at ``step``, or at the last step if the run was
        shorter (a smoke run)."""
        last = self.last[(exp, problem, algo, metric)]
        if step >= last[0]:
            return last[1:]
        return self.steps[(exp, problem, algo, metric)][step]

    def marks(
        self, exp: str, problem: str, algo: str, wanted: Sequence[int]
    ) -> list[int]:
        """The steps of ``wanted`` that the run reached, and its last step."""
        T = self.horizon(exp, problem, algo)
        return [t for t in wanted if t < T] + [T]

    def horizon(self, exp: str, problem: str, algo: str) -> int:
        return self.last[(exp, problem, algo, "cumulative_regret")][0]

    def finals(self, exp: str, problem: str, algo: str) -> list[float]:
        """Every run's final cumulative regret, by seed."""
        by_seed = self.runs[(exp, problem, algo)]
        return [by_seed[s] for s in sorted(by_seed)]


def load(folder: str | Path) -> Data:
    """Read every reproduction CSV in ``folder``."""
    folder = Path(folder)
    data = Data(folder)
    for path in sorted(folder.glob("*.csv")):
        name = path.name
        if name == "timings.csv":
            data.timings = read_timings(folder)
        elif name == "reproduce-all.csv":
            data.calls = read_calls(folder)
        elif name.startswith("avanesov-tuning-"):
            with open(path, newline="") as fh:
                rows = list(csv.DictReader(fh))
            if rows:
                data.tuning[name[len("avanesov-tuning-") : -len(".csv")]] = rows
        elif name.startswith("avanesov-calibration-"):
            with open(path, newline="") as fh:
                rows = list(csv.DictReader(fh))
            if rows:
                data.calibration[rows[0]["reading"]] = rows
        elif name.endswith("-runs.csv"):
            with open(path, newline="") as fh:
                for r in csv.DictReader(fh):
                    key = (r["experiment"], r["problem"], r["algorithm"])
                    data.runs.setdefault(key, {})[int(r["seed"])] = float(r["value"])
        else:
            _load_steps(path, data)
    return data


def _load_steps(path: Path, data: Data) -> None:
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or header[:5] != [
            "experiment",
            "problem",
            "algorithm",
            "step",
            "metric",
        ]:
            return
        for exp, problem, algo, step_text, metric, mean, se, n in reader:
            step = int(step_text)
            key = (exp, problem, algo, metric)
            value = (float(mean), float(se), int(n))
            if step in CHECKPOINTS:
                data.steps.setdefault(key, {})[step] = value
            prev = data.last.get(key)
            if prev is None or step > prev[0]:
                data.last[key] = (step, *value)
            data.experiments.add(exp)


def paired(data: Data, exp: str, problem: str, a: str, b: str) -> Paired:
    """The paired difference of the final cumulative regrets of ``a`` and ``b``."""
    xa, xb = data.runs[(exp, problem, a)], data.runs[(exp, problem, b)]
    seeds = sorted(set(xa) & set(xb))
    return Paired.of([xa[s] - xb[s] for s in seeds])


def about_equal(data: Data, exp: str, problem: str, a: str, b: str) -> bool:
    d = paired(data, exp, problem, a, b)
    ma, mb = data.final(exp, problem, a)[0], data.final(exp, problem, b)[0]
    return abs(d.mean) <= 2 * d.se or abs(ma - mb) <= 0.1 * max(abs(ma), abs(mb))
