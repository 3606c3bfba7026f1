"""A reproduction's plot: mean ± s.e. over seeds per problem and metric, or for the
sweeps (Avanesov Figs. 1 and 2) the final regret against the swept quantity with the
fitted power law."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import torch

from bandit_experiments.reproduction.experiments import problem_title
from bandit_experiments.reproduction.families import FAMILY_OF
from bandit_experiments.reproduction.result import ReproduceResult
from botorch_bandits._io import atomic_path


def plot(result: ReproduceResult, path: Path) -> Path:
    """Mean ± s.e. over seeds, one panel per (problem, metric): cumulative regret for
    bandit experiments; time-averaged regret and constraint violation for constrained
    ones."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    exp = result.experiment
    law = result.power_law()
    if law is not None:
        return _plot_sweep(result, law, path, plt)
    problems = list(dict.fromkeys(j["problem"] for j in result.jobs))
    metrics = FAMILY_OF[problems[0]].plot_metrics
    panels = [(p, m) for p in problems for m in metrics]
    fig, axes = plt.subplots(
        1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False
    )
    for ax, (problem, metric) in zip(axes[0], panels, strict=True):
        for job in result.jobs:
            if job["problem"] != problem:
                continue
            mean, se = job["stats"][metric]
            steps = torch.arange(1, mean.shape[0] + 1)
            label = exp.labels.get(job["algorithm"], job["algorithm"])
            ax.plot(steps, mean, label=label)
            ax.fill_between(steps, mean - se, mean + se, alpha=0.2)
        steps_run = next(j["steps"] for j in result.jobs if j["problem"] == problem)
        ax.set_title(problem_title(problem, steps_run))
        ax.set_xlabel("step t")
        ax.set_ylabel(metrics[metric])
        if metric == "simple_regret":  # spans 1 .. 1e-5 and reaches 0: linear near 0
            ax.set_yscale("symlog", linthresh=1e-4)
        ax.legend(fontsize=8)
    title = f"{run_title(result)}: {result.seeds} seeds, mean ± s.e."
    fig.suptitle(textwrap.fill(title, width=60 * len(panels)), fontsize=10)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
    return path


def run_title(result: ReproduceResult) -> str:
    """The experiment's title, or -- for a run at other sizes than the paper's (a
    smoke run, ``--horizon``) -- one that says which horizons actually ran."""
    exp = result.experiment
    if exp.reading:
        return f"{_sized_title(result)} [{exp.reading}]"
    return _sized_title(result)


def _sized_title(result: ReproduceResult) -> str:
    exp = result.experiment
    if result.horizon == exp.horizon:
        return exp.title
    steps = sorted({int(j["steps"]) for j in result.jobs})
    ran = f"T = {steps[0]}" if len(steps) == 1 else f"T = {steps[0]}..{steps[-1]}"
    return f"{exp.name} at reduced size ({ran}; the paper's setting: {exp.title})"


def _plot_sweep(result: ReproduceResult, law: Any, path: Path, plt: Any) -> Path:
    """Final mean R_T ± s.e. against the swept quantity, log-log, with the fit."""
    exp = result.experiment
    how = exp.fit
    xs = [j["steps"] if how == "T" else j["num_pieces"] for j in result.jobs]
    means = [float(j["stats"]["cumulative_regret"][0][-1]) for j in result.jobs]
    ses = [float(j["stats"]["cumulative_regret"][1][-1]) for j in result.jobs]
    fig, ax = plt.subplots(figsize=(5.5, 4))
    ax.errorbar(xs, means, yerr=ses, fmt="o", capsize=3, label="mean R_T ± s.e.")
    grid = torch.linspace(min(xs), max(xs), 100)
    ax.plot(grid, law.C * grid**law.c, "--", label=f"{law.C:.3g} {how}^{law.c:.3f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("horizon T" if how == "T" else "number of pieces K")
    ax.set_ylabel("dynamic regret R_T")
    ax.legend(fontsize=8)
    title = (
        f"{run_title(result)}: {result.seeds} seeds; exponent 95% CI "
        f"({law.ci[0]:.3f}, {law.ci[1]:.3f})"
    )
    fig.suptitle(textwrap.fill(title, width=60), fontsize=10)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
    return path
