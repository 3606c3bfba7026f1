"""The ablation table of issue 51: the kept jobs of the development half's variants of
IGP-UCB (``ax-bench --half development --strategies 'IGP-UCB[...]'``) against Ax's
default and the plain IGP-UCB on the seeds they share, per variant and per problem
(``python -m bandit_experiments.ax_benchmark.ablation DIR [DIR ...]
[--seeds N]``; DIR holds ``jobs/``)."""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from bandit_experiments.ax_benchmark.strategies import AX_DEFAULT
from bandit_experiments.ax_benchmark.suite import HALVES
from botorch_bandits.demo.summary import mean_and_standard_error

BASE = "IGP-UCB"


def load(folders: list[Path], seeds: int) -> dict[tuple[str, str], list[dict]]:
    """The jobs of the development half in ``folders`` with a seed below ``seeds``,
    by (problem, strategy), sorted by seed; a (problem, strategy) that lacks a seed
    is left out (the means compare the same seeds)."""
    jobs: dict[tuple[str, str], dict[int, dict]] = defaultdict(dict)
    for folder in folders:
        for path in sorted((folder / "jobs").glob("*.json")):
            job = json.loads(path.read_text())
            if job["problem"] in HALVES["development"] and job["seed"] < seeds:
                jobs[(job["problem"], job["strategy"])][job["seed"]] = job
    return {
        key: [by_seed[s] for s in sorted(by_seed)]
        for key, by_seed in jobs.items()
        if len(by_seed) == seeds
    }


def _mean_se(jobs: list[dict], key: str) -> tuple[float, float]:
    """The mean and standard error over the seeds of each job's final ``key``."""
    mean, se = mean_and_standard_error(np.array([j[key][-1] for j in jobs], float))
    return float(mean), float(se)


def table(
    jobs: dict[tuple[str, str], list[dict]], seeds: int, base_note: str = ""
) -> list[str]:
    """Per variant: on how many development problems its mean cumulative regret is
    below Ax's default's and the plain IGP-UCB's, its mean final simple regret
    within one s.e. (Ax's) of Ax's or better, the geometric mean of its cumulative
    regret over Ax's, the mean share of coordinates on a bound and the median
    generation seconds; then the mean cumulative regret per problem. ``base_note``
    follows the plain IGP-UCB's label (what it was, e.g. an earlier default)."""
    problems = [p for p in HALVES["development"] if (p, AX_DEFAULT) in jobs]
    variants = sorted({s for _, s in jobs if s != AX_DEFAULT}, key=_order)
    ran = {v: [p for p in problems if (p, v) in jobs] for v in variants}
    lines = [
        f"Development half, {seeds} seeds x 40 trials (seeds 0-{seeds - 1}); a variant "
        "only on the problems where all its seeds ran.",
        "",
        "| variant | problems | cum. regret below Ax | below IGP-UCB | simple regret "
        "within 1 s.e. of Ax | cum. regret / Ax (geo. mean) | on a bound | gen. s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for v in variants:
        probs = ran[v]
        below = below_base = close = 0
        ratios, bound, gen = [], [], []
        for p in probs:
            ours, ax = jobs[(p, v)], jobs[(p, AX_DEFAULT)]
            cum, ax_cum = (
                _mean_se(ours, "cumulative_regret")[0],
                _mean_se(ax, "cumulative_regret")[0],
            )
            below += cum < ax_cum
            if (p, BASE) in jobs:
                below_base += cum < _mean_se(jobs[(p, BASE)], "cumulative_regret")[0]
            simple = _mean_se(ours, "simple_regret")[0]
            ax_simple, ax_se = _mean_se(ax, "simple_regret")
            close += simple <= ax_simple + ax_se
            ratios.append(cum / ax_cum)
            bound.append(np.mean([j["on_bound"] for j in ours]))
            gen.append(np.median([np.median(j["gen_seconds"]) for j in ours]))
        n = len(probs)
        label = f"{v} {base_note}".strip() if v == BASE else v
        lines.append(
            f"| {label} | {n} | {below} | {'-' if v == BASE else below_base} | {close} "
            f"| {math.exp(np.mean(np.log(ratios))):.3f} | {np.mean(bound):.0%} "
            f"| {np.median(gen):.2f} |"
        )
    lines += [
        "",
        "Mean cumulative regret per problem:",
        "",
        "| problem | " + " | ".join([AX_DEFAULT, *variants]) + " |",
        "| --- " * (len(variants) + 2) + "|",
    ]
    for p in problems:
        cells = [
            f"{_mean_se(jobs[(p, s)], 'cumulative_regret')[0]:.4g}"
            if (p, s) in jobs
            else "-"
            for s in [AX_DEFAULT, *variants]
        ]
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    return lines


def _order(label: str) -> tuple[int, str]:
    """The plain IGP-UCB first, then the variants by name."""
    return (label != BASE, label)


def main(argv: list[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--base-note", default="", help="text after IGP-UCB's label")
    args = parser.parse_args(argv)
    lines = table(load(args.folders, args.seeds), args.seeds, args.base_note)
    print("\n".join(lines))
    return lines


if __name__ == "__main__":
    main()
