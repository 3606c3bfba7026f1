"""The pictures on the documentation pages, drawn from the files commands wrote. A
block ``<!-- figures: KIND PATH[#PART] -->`` of an image kind (:data:`IMAGES`) puts
a PNG in ``docs/figures/`` and links it; each PNG carries :func:`stamp` (a hash of
its data, its part and the code that draws it), so ``docs-figures --check`` finds a
picture that no longer matches its data without redrawing it (pixels differ across
matplotlib versions; the data and the code do not)."""

from __future__ import annotations

import csv
import hashlib
import inspect
import json
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bandit_experiments.ax_benchmark.suite import PROBLEMS
from bandit_experiments.online_benchmark.drift import DRIFT_PROBLEMS
from bandit_experiments.reproduction.experiments import (
    EXPERIMENTS,
    problem_title,
)
from bandit_experiments.reproduction.families import FAMILY_OF
from botorch_bandits._io import atomic_path
from botorch_bandits.demo.ax_demo_report import (
    read_regret,
    regret_figure,
)
from botorch_bandits.demo.plotting import plain_log_ticks, pyplot
from botorch_bandits.demo.summary import mean_and_standard_error

FIGURES = Path("docs") / "figures"
"""Where the pictures go, relative to the repository."""
STAMP_KEY = "botorch-bandits-source"
CAPTION_KEY = "Description"


def demo_picture(path: Path, part: str | None) -> tuple[Any, str]:
    """The main job's cumulative regret (its ``regret.csv``), as ``regret.png``."""
    result = read_regret(path)
    n, trials = len(result.seeds), result.trials
    return regret_figure(result), (
        f"The main job: cumulative regret of IGP-UCB ({result.mode} mode) and Ax's "
        f"default on a 1-D problem, mean ± 1 s.e. over {n} seeds, {trials} trials "
        "each (lower is better)"
    )


def bench_picture(path: Path, part: str | None) -> tuple[Any, str]:
    """A half of ``ax-bench`` (its ``summary.csv``): per problem, IGP-UCB's mean
    cumulative and final simple regret divided by Ax default's, log axis."""
    with open(path, newline="") as fh:
        rows = {(r["problem"], r["strategy"]): r for r in csv.DictReader(fh)}
    problems = list(dict.fromkeys(p for p, _ in rows))
    first = next(iter(rows.values()))
    half, seeds, trials = first["half"], first["seeds"], first["trials"]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(problems) + 1.8))
    y = np.arange(len(problems))[::-1]
    for offset, key, marker, name in (
        (0.12, "cumulative_regret", "o", "cumulative regret"),
        (-0.12, "simple_regret", "s", "final simple regret"),
    ):
        ratio, low, high = [], [], []
        for p in problems:
            ours, ax_ = rows[p, "IGP-UCB"], rows[p, "Ax default"]
            r, lo, hi = _ratio(
                *(float(ours[f"{key}_{s}"]) for s in ("mean", "se")),
                *(float(ax_[f"{key}_{s}"]) for s in ("mean", "se")),
            )
            ratio.append(r)
            low.append(r - lo)
            high.append(hi - r)
        ax.errorbar(
            ratio, y + offset, xerr=[low, high], fmt=marker, capsize=2, label=name
        )
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_yticks(y, [PROBLEMS[p].title if p in PROBLEMS else p for p in problems])
    ax.tick_params(axis="y", labelsize=8)
    ax.set_xlabel("IGP-UCB ÷ Ax default (left of 1: IGP-UCB lower, better)")
    ax.set_title(
        f"ax-bench, {half} half: IGP-UCB (practical default) vs Ax's default,\n"
        f"{seeds} seeds × {trials} trials; bars: ±1 s.e. of the ratio",
        fontsize=9,
    )
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3, axis="x", which="both")
    fig.tight_layout()
    return fig, (
        f"ax-bench, {half} half ({len(problems)} problems, {seeds} seeds × {trials} "
        "trials): IGP-UCB's regrets divided by Ax default's, per problem (lower is "
        "better)"
    )


#: a ratio's floor and ceiling on the plot (a simple regret of 0 has no logarithm)
RATIO_RANGE = (1e-2, 1e2)


def _ratio(m1: float, s1: float, m2: float, s2: float) -> tuple[float, float, float]:
    """m1 / m2 with a ±1 s.e. interval by the delta method on the log scale,
    clipped to :data:`RATIO_RANGE`; 1 where both means are below 1e-12."""
    if max(m1, m2) < 1e-12:
        return 1.0, 1.0, 1.0
    lo_r, hi_r = RATIO_RANGE
    if m1 <= 0 or m2 <= 0:
        r = hi_r if m2 <= 0 else lo_r
        return r, r, r
    r = m1 / m2
    spread = float(np.exp(np.hypot(s1 / m1, s2 / m2)))
    return (
        float(np.clip(r, lo_r, hi_r)),
        float(np.clip(r / spread, lo_r, hi_r)),
        float(np.clip(r * spread, lo_r, hi_r)),
    )


def online_picture(path: Path, part: str | None) -> tuple[Any, str]:
    """The drift jobs of a half (a ``jobs`` folder of ``ax-online``): cumulative
    dynamic regret against the trial, one panel per problem, mean ± s.e."""
    jobs = [json.loads(p.read_text()) for p in sorted(path.glob("*.json"))]
    problems = list(dict.fromkeys(j["problem"] for j in jobs))
    strategies = list(dict.fromkeys(j["strategy"] for j in jobs))
    plt = pyplot()
    cols = 2
    rows = -(-len(problems) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(11, 3.2 * rows), squeeze=False)
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colours = {s: cycle[i % len(cycle)] for i, s in enumerate(strategies)}
    for ax, p in zip(axes.flat, problems, strict=False):
        for s in strategies:
            runs = [
                np.cumsum(j["regret"])
                for j in jobs
                if (j["problem"], j["strategy"]) == (p, s)
            ]
            if not runs:
                continue
            mean, se = mean_and_standard_error(np.stack(runs))
            x = np.arange(1, len(mean) + 1)
            style = "--" if s.startswith("qLogNEI") else "-"
            (line,) = ax.plot(
                x,
                mean,
                style,
                color=colours.get(s),
                lw=1.2,
                label=f"{s} ({len(runs)} seeds)",
            )
            ax.fill_between(
                x, mean - se, mean + se, alpha=0.15, color=line.get_color(), lw=0
            )
        problem = DRIFT_PROBLEMS.get(p)
        if problem is not None and problem.change_trial is not None:
            ax.axvline(problem.change_trial, color="grey", ls=":", lw=1)
        ax.set_title(problem.title if problem else p, fontsize=8)
        ax.set_xlabel("trial", fontsize=8)
        ax.set_ylabel("cumulative dynamic regret", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    spare = list(axes.flat)[len(problems) :]
    for ax in spare:
        ax.axis("off")
    legend = {}  # every strategy once, from whichever panel has it
    for ax in axes.flat:
        for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
            legend.setdefault(name, handle)
    (spare[0] if spare else fig).legend(
        list(legend.values()), list(legend), loc="center", fontsize=8
    )
    fig.suptitle(
        "ax-online, drift problems: cumulative dynamic regret Σ(f_t(x_t) − min f_t), "
        "mean ± 1 s.e. (lower is better; dotted: the change)",
        fontsize=9,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig, (
        f"ax-online, drift problems ({len(problems)}): cumulative dynamic regret of "
        "each strategy against the trial, mean ± 1 s.e. over seeds (lower is better)"
    )


def reproduction_picture(path: Path, part: str | None) -> tuple[Any, str]:
    """One experiment (``part``) of a curves file (:func:`collect_curves`): its
    metrics against the step, one panel per problem and metric, mean ± s.e."""
    if not part:
        raise ValueError(f"figures block: {path} needs #EXPERIMENT after its path")
    with open(path, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["experiment"] == part]
    if not rows:
        raise ValueError(f"figures block: {path} holds no rows of experiment {part!r}")
    exp = EXPERIMENTS[part]
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    metrics = FAMILY_OF[problems[0]].plot_metrics
    panels = [(p, m) for p in problems for m in metrics]
    plt = pyplot()
    fig, axes = plt.subplots(
        1, len(panels), figsize=(max(4.6 * len(panels), 6.0), 3.8), squeeze=False
    )
    seeds = rows[0]["n_seeds"]
    for ax, (problem, metric) in zip(axes[0], panels, strict=True):
        for algo in dict.fromkeys(r["algorithm"] for r in rows):
            curve = [
                r
                for r in rows
                if (r["problem"], r["algorithm"], r["metric"])
                == (problem, algo, metric)
            ]
            if not curve:
                continue
            step = np.array([int(r["step"]) for r in curve])
            mean = np.array([float(r["mean"]) for r in curve])
            se = np.array([float(r["se"]) for r in curve])
            (line,) = ax.plot(step, mean, label=exp.labels.get(algo, algo))
            ax.fill_between(
                step, mean - se, mean + se, alpha=0.2, color=line.get_color(), lw=0
            )
        horizon = max(int(r["step"]) for r in rows if r["problem"] == problem)
        ax.set_title(problem_title(problem, horizon), fontsize=8)
        ax.set_xlabel("step t")
        ax.set_ylabel(f"{metrics[metric]} (lower is better)", fontsize=8)
        if metric == "simple_regret":
            ax.set_yscale("symlog", linthresh=1e-4)
        finals = [
            float(r["mean"])
            for r in rows
            if (r["problem"], r["metric"], int(r["step"])) == (problem, metric, horizon)
        ]
        if metric == "cumulative_regret" and min(finals) > 0:
            if max(finals) / min(finals) > 30:  # the curves span decades
                ax.set_yscale("log")
                ax.set_ylabel(f"{metrics[metric]}, log scale (lower is better)")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    title = f"{exp.title}: {seeds} seeds, mean ± 1 s.e."
    fig.suptitle(textwrap.fill(title, width=70 * len(panels)), fontsize=9)
    fig.tight_layout()
    return (
        fig,
        f"{exp.title}, as reproduced here: {seeds} seeds, mean ± 1 s.e. (lower is better)",
    )


#: image kind -> drawer of (data path, part after '#') -> (figure, caption)
IMAGES: dict[str, Callable[[Path, str | None], tuple[Any, str]]] = {
    "demo-picture": demo_picture,
    "bench-picture": bench_picture,
    "online-picture": online_picture,
    "reproduction-picture": reproduction_picture,
}


#: the modules whose code draws the pictures: this one, and those of their titles
DRAWING_MODULES = (
    __name__,
    "botorch_bandits.demo.plotting",
    "botorch_bandits.demo.ax_demo_report",
    "bandit_experiments.ax_benchmark.suite",
    "bandit_experiments.online_benchmark.drift",
    "bandit_experiments.reproduction.experiments",
    "bandit_experiments.reproduction.families",
)


def picture_path(kind: str, data: str) -> Path:
    """Where the picture of a block goes (relative to the repository)."""
    stem = re.sub(r"[^A-Za-z0-9]+", "-", data.removeprefix("docs/data/")).strip("-")
    return FIGURES / f"{kind.removesuffix('-picture')}-{stem}.png"


def stamp(kind: str, path: Path, part: str | None) -> str:
    """A hash of the block's data (a file, or every file under a folder), its part
    and the code that draws it (:data:`DRAWING_MODULES`): a change to either makes the
    picture stale."""
    digest = hashlib.sha256(f"{kind}#{part}".encode())
    for module in DRAWING_MODULES:
        digest.update(inspect.getsource(sys.modules[module]).encode())
    files = (
        sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    )
    for f in files:
        digest.update(f.relative_to(path).as_posix().encode() if path.is_dir() else b"")
        digest.update(f.read_bytes())
    return digest.hexdigest()[:32]


def stamp_of(png: Path) -> tuple[str | None, str]:
    """The stamp and the caption a picture carries (None and "": no picture, or
    none drawn by :func:`draw`)."""
    if not png.is_file():
        return None, ""
    from PIL import Image

    with Image.open(png) as image:
        return image.text.get(STAMP_KEY), image.text.get(CAPTION_KEY, "")


def draw(kind: str, path: Path, part: str | None, png: Path) -> str:
    """Draw the picture into ``png`` with its stamp; returns its caption."""
    fig, caption = IMAGES[kind](path, part)
    png.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(png) as tmp:
        fig.savefig(
            tmp,
            dpi=100,
            format="png",
            metadata={
                "Software": None,
                STAMP_KEY: stamp(kind, path, part),
                CAPTION_KEY: caption,
            },
        )
    pyplot().close(fig)
    return caption


__all__ = [
    "FIGURES",
    "IMAGES",
    "draw",
    "picture_path",
    "stamp",
    "stamp_of",
]
