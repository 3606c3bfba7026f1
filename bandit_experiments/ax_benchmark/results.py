"""The Ax benchmark's results (:class:`BenchResult`): the per-trial records of every
job, the summary per problem and strategy (final regrets, generation seconds), the
comparison with Ax's default, and the files: ``ax_bench.csv``, ``summary.csv``,
``summary.md`` (the tables the docs paste) and a plot per problem."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bandit_experiments.ax_benchmark.strategies import AX_DEFAULT
from bandit_experiments.ax_benchmark.suite import PROBLEMS, half_of
from botorch_bandits._io import atomic_open, atomic_path
from botorch_bandits.demo.summary import mean_and_standard_error

CSV_COLUMNS = (
    "problem",
    "strategy",
    "seed",
    "trial",
    "value",
    "noise_free_value",
    "cumulative_regret",
    "best_value",
    "simple_regret",
    "gen_seconds",
)
SUMMARY_COLUMNS = (
    "half",
    "problem",
    "strategy",
    "seeds",
    "trials",
    "cumulative_regret_mean",
    "cumulative_regret_se",
    "simple_regret_mean",
    "simple_regret_se",
    "gen_seconds_median_t10",
    "gen_seconds_median_last",
    "gen_seconds_median",
    "repeats_mean",
    "on_bound_mean",
)
GEN_MARK = 10
"""The trial whose median generation seconds the summary reports (with the last)."""
ONE_SEED = "1 seed: no s.e."
"""What the tables say instead of a standard error (and a verdict by it) for one
seed."""


@dataclass
class BenchResult:
    """The jobs (sorted by problem, strategy, seed), the summary rows and the files."""

    jobs: list[dict[str, Any]]
    problems: tuple[str, ...]
    strategies: tuple[str, ...]
    seeds: int
    trials: int
    seconds: float
    summary: list[dict[str, Any]] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)

    def comparison_lines(self, label: str = "IGP-UCB") -> list[str]:
        """Per half, then per problem: is the mean cumulative regret of ``label``
        below Ax default's, and is its mean final simple regret within one s.e.
        (Ax's) of Ax default's, or below it (one seed: both simple regrets, no
        verdict); each half ends with the tallies and the median generation seconds
        of both. Empty unless both strategies ran."""
        if not {label, AX_DEFAULT} <= set(self.strategies):
            return []
        lines = []
        for half in self.halves():
            per_problem, tally = self.comparison(label, half)
            probs = [p for p in self.problems if half_of(p) == half]
            lines += [f"  {half} half ({len(probs)} problems):", *per_problem]
            lines.append(f"    {tally}")
        return lines

    def halves(self) -> list[str]:
        """The halves of the problems that ran, in their order."""
        return list(dict.fromkeys(half_of(p) for p in self.problems))

    def comparison(self, label: str, half: str) -> tuple[list[str], str]:
        """:meth:`comparison_lines` of one half: the per-problem lines and the
        tally."""
        rows = {(r["problem"], r["strategy"]): r for r in self.summary}
        probs = [p for p in self.problems if half_of(p) == half]
        below_count = close_count = 0
        lines = []
        for p in probs:
            ours, ax = rows[(p, label)], rows[(p, AX_DEFAULT)]
            below = ours["cumulative_regret_mean"] < ax["cumulative_regret_mean"]
            close = (
                ours["simple_regret_mean"]
                <= ax["simple_regret_mean"] + ax["simple_regret_se"]
            )
            below_count += below
            close_count += close
            simple = (
                f"simple regret {ours['simple_regret_mean']:.4g} vs "
                f"{ax['simple_regret_mean']:.4g} ({ONE_SEED})"
                if self.seeds == 1
                else f"simple regret within one s.e. of Ax default or better: "
                f"{'yes' if close else 'no ':3s} ({ours['simple_regret_mean']:.4g} "
                f"vs {ax['simple_regret_mean']:.4g} ± {ax['simple_regret_se']:.2g})"
            )
            cumulative = (
                f"cumulative regret {ours['cumulative_regret_mean']:.4g} vs "
                f"{ax['cumulative_regret_mean']:.4g} ({ONE_SEED})"
                if self.seeds == 1  # one seed: the numbers, no verdict
                else f"cumulative regret below Ax default: "
                f"{'yes' if below else 'no ':3s} "
                f"({ours['cumulative_regret_mean']:.4g} vs "
                f"{ax['cumulative_regret_mean']:.4g})"
            )
            lines.append(f"    {p:26s} {cumulative};  {simple}")
        gen = {
            s: float(np.median([rows[(p, s)]["gen_seconds_median"] for p in probs]))
            for s in (label, AX_DEFAULT)
        }
        simple = (
            f"simple regret: {ONE_SEED}"
            if self.seeds == 1
            else f"simple regret within one s.e. or better on {close_count} of "
            f"{len(probs)}"
        )
        cumulative = (
            f"cumulative regret: {ONE_SEED}"
            if self.seeds == 1
            else f"cumulative regret below Ax default on {below_count} of {len(probs)}"
        )
        tally = (
            f"{label}: {cumulative}, {simple}; median generation seconds "
            f"{gen[label]:.3f} vs {gen[AX_DEFAULT]:.3f}"
        )
        return lines, tally

    def markdown_lines(self) -> list[str]:
        """The summary as Markdown, one table per half (final cumulative and simple
        regret, mean ± s.e. over the seeds; median generation seconds; mean
        repeated configurations; mean share of coordinates on a bound), each
        followed by the tally of every bandit strategy against Ax's default: the
        text the docs' tables are pasted from (``OUT/summary.md``). One seed: the
        means alone."""
        seeds = "1 seed (no s.e.)" if self.seeds == 1 else f"{self.seeds} seeds"
        lines = [
            f"{seeds} x {self.trials} trials, one trial at a time; "
            "regrets of the noise-free objective, minimized.",
        ]
        for half in self.halves():
            probs = [p for p in self.problems if half_of(p) == half]
            lines += [
                "",
                f"**{half.capitalize()} half** ({len(probs)} problems)",
                "",
                "| problem | strategy | cumulative regret | final simple regret "
                "| gen. s (median) | repeats | on a bound |",
                "| --- | --- | --- | --- | --- | --- | --- |",
            ]
            for r in self.summary:
                if r["problem"] in probs:
                    lines.append(
                        f"| {r['problem']} | {r['strategy']} "
                        f"| {self._spread(r, 'cumulative_regret', '.4g', '.2g')} "
                        f"| {self._spread(r, 'simple_regret', '.4g', '.2g')} "
                        f"| {r['gen_seconds_median']:.2f} | {r['repeats_mean']:.1f} "
                        f"| {r['on_bound_mean']:.0%} |"
                    )
            if AX_DEFAULT in self.strategies:
                tallies = [
                    self.comparison(label, half)[1]
                    for label in self.strategies
                    if label != AX_DEFAULT
                ]
                lines += ["", *(f"- {t}" for t in tallies)]
        return lines

    def _spread(self, row: dict[str, Any], key: str, mean: str, se: str) -> str:
        """``mean ± s.e.`` of ``row[key + '_mean' / '_se']``; the mean alone for one
        seed."""
        text = f"{row[f'{key}_mean']:{mean}}"
        return text if self.seeds == 1 else f"{text} ± {row[f'{key}_se']:{se}}"

    def table_lines(self) -> list[str]:
        """The summary as a printed table: the regrets (mean ± s.e.; the mean alone
        for one seed), the median generation seconds at trial :data:`GEN_MARK` (a
        column only when more trials ran) and at the last trial, repeats and the
        share on a bound."""
        cum, simple = (17, 13) if self.seeds == 1 else (21, 21)  # column widths
        mark = self.trials > GEN_MARK
        head = (
            f"  {'problem':26s} {'strategy':17s} {'cumulative regret':>{cum}s}  "
            f"{'simple regret':>{simple}s}  "
            + (f"{f'gen s t={GEN_MARK}':>10s} " if mark else "")
            + f"{f'gen s t={self.trials}':>10s} {'repeats':>7s} {'on bound':>8s}"
        )
        lines = [head]
        for r in self.summary:
            lines.append(
                f"  {r['problem']:26s} {r['strategy']:17s} "
                f"{self._spread(r, 'cumulative_regret', '10.4g', '8.3g'):>{cum}s}  "
                f"{self._spread(r, 'simple_regret', '10.4g', '8.3g'):>{simple}s}  "
                + (f"{r['gen_seconds_median_t10']:10.3f} " if mark else "")
                + f"{r['gen_seconds_median_last']:10.3f} {r['repeats_mean']:7.1f} "
                f"{r['on_bound_mean']:8.0%}"
            )
        return lines


def _curves(result: BenchResult, problem: str, strategy: str, key: str) -> np.ndarray:
    """``seeds x trials`` of one per-trial record."""
    return np.asarray(
        [
            j[key]
            for j in result.jobs
            if j["problem"] == problem and j["strategy"] == strategy
        ],
        dtype=float,
    )


def summarize(result: BenchResult) -> list[dict[str, Any]]:
    """Per problem and strategy: the final cumulative and simple regret (mean, s.e.
    over seeds), the median seconds of ``get_next_trials`` at trial 10 (``None``
    when fewer trials ran), at the last trial and over all trials, the mean number of
    repeated configurations and the mean share of coordinates on a bound."""
    rows = []
    for p in result.problems:
        for s in result.strategies:
            cum_mean, cum_se = mean_and_standard_error(
                _curves(result, p, s, "cumulative_regret")
            )
            sr_mean, sr_se = mean_and_standard_error(
                _curves(result, p, s, "simple_regret")
            )
            gen = _curves(result, p, s, "gen_seconds")
            jobs = [j for j in result.jobs if j["problem"] == p and j["strategy"] == s]
            rows.append(
                {
                    "half": half_of(p),
                    "problem": p,
                    "strategy": s,
                    "seeds": result.seeds,
                    "trials": result.trials,
                    "cumulative_regret_mean": float(cum_mean[-1]),
                    "cumulative_regret_se": float(cum_se[-1]),
                    "simple_regret_mean": float(sr_mean[-1]),
                    "simple_regret_se": float(sr_se[-1]),
                    "gen_seconds_median_t10": float(np.median(gen[:, GEN_MARK - 1]))
                    if result.trials >= GEN_MARK
                    else None,
                    "gen_seconds_median_last": float(np.median(gen[:, -1])),
                    "gen_seconds_median": float(np.median(gen)),
                    "repeats_mean": float(np.mean([j["repeats"] for j in jobs])),
                    "on_bound_mean": float(np.mean([j["on_bound"] for j in jobs])),
                }
            )
    return rows


def write_csv(result: BenchResult, path: Path) -> Path:
    """One row per (problem, strategy, seed, trial); trials count from 1."""
    with atomic_open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_COLUMNS)
        for j in result.jobs:
            for t in range(len(j["value"])):
                writer.writerow(
                    (
                        j["problem"],
                        j["strategy"],
                        j["seed"],
                        t + 1,
                        *(repr(float(j[k][t])) for k in CSV_COLUMNS[4:-1]),
                        f"{j['gen_seconds'][t]:.6f}",
                    )
                )
    return path


def write_summary(result: BenchResult, path: Path) -> Path:
    """The :func:`summarize` rows; an empty cell where trial 10 did not run."""
    with atomic_open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(SUMMARY_COLUMNS)
        for r in result.summary:
            writer.writerow(["" if r[c] is None else r[c] for c in SUMMARY_COLUMNS])
    return path


def write_markdown(result: BenchResult, path: Path) -> Path:
    """:meth:`BenchResult.markdown_lines` as a file."""
    with atomic_open(path, "w") as fh:
        fh.write("\n".join(result.markdown_lines()) + "\n")
    return path


def plot(result: BenchResult, problem: str, path: Path) -> Path:
    """Cumulative regret and simple regret against the trial for every strategy on
    ``problem``: mean ± s.e. over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    trials = np.arange(1, result.trials + 1)
    for s in result.strategies:
        for ax, key in ((left, "cumulative_regret"), (right, "simple_regret")):
            mean, se = mean_and_standard_error(_curves(result, problem, s, key))
            (line,) = ax.plot(trials, mean, label=s)
            ax.fill_between(
                trials, mean - se, mean + se, alpha=0.2, color=line.get_color()
            )
    left.set_ylabel("cumulative regret R_t")
    right.set_ylabel("simple regret r_t")
    right.set_yscale("log")  # r_t > 0: each stated optimum is below the true one
    for ax in (left, right):
        ax.set_xlabel("trial t")
        ax.grid(alpha=0.3)
    left.legend(fontsize="small")
    seeds = "1 seed" if result.seeds == 1 else f"{result.seeds} seeds, mean ± s.e."
    fig.suptitle(f"{PROBLEMS[problem].title}: {seeds}")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120)
    plt.close(fig)
    return path
