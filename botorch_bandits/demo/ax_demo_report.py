"""The main job's results: :class:`DemoResult` (cumulative regret per strategy and
seed), the files ``regret.csv`` / ``regret.png`` (mean ± s.e. over seeds, initial
trials marked, the bandit's mode named) and ``cost.csv`` / ``cost.png``, and the
printed summary that says what was compared (:func:`summary_lines`)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from botorch_bandits._io import atomic_open, atomic_path
from botorch_bandits.demo.plotting import plain_log_ticks, pyplot
from botorch_bandits.demo.summary import mean_and_standard_error

#: what each mode of the bandit is told about f (Ax's default is told nothing)
MODE_LABELS = {
    "practical": "practical mode: GP fitted to the data, told nothing about f",
    "theory": "theory mode: told f's kernel, RKHS norm B and noise R",
}


def label(strategy: str, mode: str) -> str:
    """The strategy's name with the bandit's mode.

    Args:
        strategy: The half: ``"bandit"``, or another (``"ax-default"``).
        mode: The bandit's mode (``"practical"`` or ``"theory"``).

    Returns:
        ``"IGP-UCB (<mode> mode)"`` for the bandit, else ``"Ax default"``.

    Example:
        >>> label("bandit", "practical")
        'IGP-UCB (practical mode)'
    """
    return f"IGP-UCB ({mode} mode)" if strategy == "bandit" else "Ax default"


@dataclass(frozen=True)
class DemoResult:
    """One run's curves: ``curves[strategy]`` is (seeds, trials) cumulative regret,
    ``sources[strategy]`` (seeds, trials) says where each trial came from
    (``"initial"``, ``"model"``, ``"fallback"``: ``ax_demo.trial_sources``),
    ``seconds`` holds each seed's seconds per trial.

    Attributes:
        seeds: The seeds run, in order.
        mode: The bandit's mode (``"practical"`` or ``"theory"``).
        trials: The trials of each experiment.
        parallelism: The trials in flight at once.
        curves: Per strategy, the ``seeds x trials`` cumulative regret.
        sources: Per strategy, the ``seeds x trials`` object array of sources.
        seconds: Per strategy, one array per seed of the seconds per trial
            (``ax_demo.trial_seconds``; empty when read from ``regret.csv``).
    """

    seeds: tuple[int, ...]
    mode: str
    trials: int
    parallelism: int
    curves: dict[str, np.ndarray]
    sources: dict[str, np.ndarray]
    seconds: dict[str, list[np.ndarray]]

    def final(self, strategy: str) -> np.ndarray:
        """Cumulative regret after the last trial, one value per seed.

        Args:
            strategy: A key of :attr:`curves` (``"bandit"`` or ``"ax-default"``).

        Returns:
            The final cumulative regret, shape ``seeds``.
        """
        return self.curves[strategy][:, -1]


def read_regret(path: Path) -> DemoResult:
    """The curves of a run back from its ``regret.csv`` (no seconds: ``cost.csv``
    holds them); every (strategy, seed, trial) must be there once, with one mode
    and one parallelism.

    Args:
        path: The ``regret.csv`` (as :func:`write_regret` writes it).

    Returns:
        The :class:`DemoResult`, its strategies in the file's order, its seeds
        sorted and ``seconds`` empty.

    Raises:
        ValueError: If the file holds no rows, its rows differ in mode or
            parallelism, or it holds other than one row per strategy, seed and
            trial ``1..trials``.

    Example:
        >>> result = read_regret(Path("runs/demo/regret.csv"))
    """
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        raise ValueError(f"{path} holds no rows")
    for column in ("mode", "parallelism"):
        if len({r[column] for r in rows}) != 1:
            raise ValueError(f"{path}: the rows differ in {column!r}")
    strategies = list(dict.fromkeys(r["strategy"] for r in rows))
    seeds = tuple(sorted({int(r["seed"]) for r in rows}))
    trials = max(int(r["trial"]) for r in rows)
    cells = {(r["strategy"], int(r["seed"]), int(r["trial"])): r for r in rows}
    want = [(s, k, t) for s in strategies for k in seeds for t in range(1, trials + 1)]
    if len(cells) != len(rows) or set(cells) != set(want):
        raise ValueError(
            f"{path}: expected one row per strategy, seed and trial 1..{trials} "
            f"({len(want)} rows), found {len(rows)} ({len(cells)} distinct)"
        )
    shape = (len(seeds), trials)
    curves = {
        s: np.array(
            [
                float(cells[s, k, t]["cumulative_regret"])
                for k in seeds
                for t in range(1, trials + 1)
            ]
        ).reshape(shape)
        for s in strategies
    }
    sources = {
        s: np.array(
            [cells[s, k, t]["source"] for k in seeds for t in range(1, trials + 1)],
            dtype=object,
        ).reshape(shape)
        for s in strategies
    }
    return DemoResult(
        seeds=seeds,
        mode=rows[0]["mode"],
        trials=trials,
        parallelism=int(rows[0]["parallelism"]),
        curves=curves,
        sources=sources,
        seconds={},
    )


def _seed_range(seeds: tuple[int, ...]) -> str:
    n = len(seeds)
    return f"seed {seeds[0]}" if n == 1 else f"{n} seeds ({seeds[0]}-{seeds[-1]})"


def write_regret(out: Path, result: DemoResult) -> None:
    """``regret.csv`` (every seed's curve) and ``regret.png`` (mean ± s.e.).

    Args:
        out: The folder the files are written to (each to a temporary file beside
            it, renamed over it at the end).
        result: The run's result, with its curves and sources.
    """
    with atomic_open(out / "regret.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "strategy",
                "mode",
                "parallelism",
                "seed",
                "trial",
                "source",
                "cumulative_regret",
            ]
        )
        for s, c in result.curves.items():
            for k, run_seed in enumerate(result.seeds):
                w.writerows(
                    (s, result.mode, result.parallelism, run_seed, i + 1, src, float(v))
                    for i, (v, src) in enumerate(
                        zip(c[k], result.sources[s][k], strict=True)
                    )
                )
    fig = regret_figure(result)
    with atomic_path(out / "regret.png") as tmp:
        fig.savefig(tmp, dpi=120)
    pyplot().close(fig)


def regret_figure(result: DemoResult) -> Any:
    """The figure of ``regret.png`` (and of the docs' main-job picture): cumulative
    regret against the trial, mean ± s.e. over seeds, the initial trials marked.

    Args:
        result: The run's result, with its curves and sources.

    Returns:
        The matplotlib figure (for the caller to save and close).

    Example:
        >>> fig = regret_figure(read_regret(Path("runs/demo/regret.csv")))
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = np.arange(1, result.trials + 1)
    initial = []
    for s, c in result.curves.items():
        mean, se = mean_and_standard_error(c)  # (a band only for more than one seed)
        n_init = int((result.sources[s] == "initial").sum(axis=1).max())
        initial.append(n_init)
        (line,) = ax.plot(x, mean, label=label(s, result.mode))
        if len(c) > 1:
            ax.fill_between(
                x, mean - se, mean + se, color=line.get_color(), alpha=0.2, lw=0
            )
        # the initial trials (centre, Sobol): the markers on the curve
        ax.plot(x[:n_init], mean[:n_init], "o", mfc="none", color=line.get_color())
    first = (
        f"the first {initial[0]} of each"
        if len(set(initial)) == 1
        else "the first " + " / ".join(str(n) for n in initial)
    )
    ax.set_xlabel(f"trial (open circles: {first}, chosen without a model)")
    ax.set_ylabel("cumulative regret (lower is better)")
    band = "mean ± 1 s.e. over " if len(result.seeds) > 1 else ""
    ax.set_title(
        "Cumulative regret on a 1-D problem: an RKHS function on [0, 1] (Chowdhury "
        f"& Gopalan 2017)\n{band}{_seed_range(result.seeds)}, {result.parallelism} "
        f"trials in flight\nbandit in the {MODE_LABELS[result.mode]}",
        fontsize=9,
    )
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def write_costs(out: Path, result: DemoResult) -> None:
    """``cost.csv`` and ``cost.png``: the seconds of each trial.

    Args:
        out: The folder the files are written to (each to a temporary file beside
            it, renamed over it at the end).
        result: The run's result, with its seconds (``cost.png`` draws the median
            over seeds of each strategy, on a log scale).
    """
    with atomic_open(out / "cost.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["strategy", "seed", "trial", "seconds"])
        for s, runs in result.seconds.items():
            for run_seed, c in zip(result.seeds, runs, strict=True):
                w.writerows((s, run_seed, i, float(v)) for i, v in enumerate(c))
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6, 4))
    for s, runs in result.seconds.items():
        c = np.median(np.stack(runs), axis=0) if runs and len(runs[0]) else None
        if c is None:
            continue
        x = np.arange(len(c))
        ax.plot(x, c, ".-", label=f"{label(s, result.mode)} (median over seeds)")
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_xlabel("number of trials already made")
    ax.set_ylabel("seconds to make the next trial (log scale)")
    ax.set_title(
        f"Cost of a trial, {result.parallelism} in flight, {_seed_range(result.seeds)}"
    )
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    with atomic_path(out / "cost.png") as tmp:
        fig.savefig(tmp, dpi=120)
    plt.close(fig)


#: below these many trials or seeds the summary says a run cannot tell the strategies
#: apart (``--smoke``: 8 trials, 2 seeds; the main job: 30 trials, 5 seeds)
TELLS_TRIALS = 20
TELLS_SEEDS = 3


def summary_lines(result: DemoResult) -> list[str]:
    """What was compared, on what, and the final cumulative regret of each
    strategy (mean ± s.e. over seeds; per seed and paired for two strategies).

    Args:
        result: The run's result, with its curves and sources.

    Returns:
        The summary's lines, without newlines; they also count the trials from a
        fallback generator and say when a run is too small to tell the strategies
        apart (under :data:`TELLS_TRIALS` trials or :data:`TELLS_SEEDS` seeds).

    Example:
        >>> lines = summary_lines(read_regret(Path("runs/demo/regret.csv")))
    """
    n = len(result.seeds)
    lines = [
        "Compared: "
        + " vs ".join(
            f"IGP-UCB ({MODE_LABELS[result.mode]})"
            if s == "bandit"
            else "Ax's default strategy (centre, Sobol, then BoTorch's model; "
            "told nothing about f)"
            for s in result.curves
        ),
        f"on {_seed_range(result.seeds)}: one RKHS function of Chowdhury & Gopalan "
        f"(2017) on [0, 1] per seed, noisy, {result.trials} trials each, "
        f"{result.parallelism} in flight.",
    ]
    if result.mode == "theory" and "ax-default" in result.curves:
        lines.append(
            "Not like with like: the theory mode is told the function's kernel, B "
            "and R; Ax's default is not (--mode practical compares like with like)."
        )
    stat = "mean ± s.e. over seeds" if n > 1 else "1 seed: no s.e."
    lines.append(
        f"Cumulative regret after {result.trials} trials (lower is better; {stat}):"
    )
    for s in result.curves:
        v = result.final(s)
        mean, se = mean_and_standard_error(v)
        cell = f"{mean:.3f} ± {se:.3f}" if n > 1 else f"{mean:.3f}"
        per_seed = ", ".join(f"{x:.2f}" for x in v)
        lines.append(f"  {label(s, result.mode):<26s} {cell}   (per seed: {per_seed})")
    for s in result.curves:
        fallback = int((result.sources[s] == "fallback").sum())
        if fallback:
            lines.append(
                f"  {label(s, result.mode)}: {fallback} of its {n * result.trials} "
                "trials came from its fallback generator (Sobol: its model proposed "
                "points already evaluated)"
            )
    if result.trials < TELLS_TRIALS or n < TELLS_SEEDS:
        lines.append(
            f"  {result.trials} trials on {n} seed(s) are too few to tell the "
            "strategies apart: a check that the run works, not a comparison (the "
            "main job runs 30 trials on 5 seeds)."
        )
    if {"bandit", "ax-default"} <= set(result.curves) and n > 1:
        d = result.final("ax-default") - result.final("bandit")
        mean, se = mean_and_standard_error(d)
        lines.append(
            f"  IGP-UCB lower on {int((d > 0).sum())} of {n} seeds; Ax default minus "
            f"IGP-UCB, paired: {mean:.3f} ± {se:.3f}"
        )
    return lines


__all__ = [
    "MODE_LABELS",
    "DemoResult",
    "label",
    "regret_figure",
    "summary_lines",
    "write_costs",
    "write_regret",
]
