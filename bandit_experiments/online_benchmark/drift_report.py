"""The drift problems' report (``python -m bandit_experiments ax-online --report``): per half,
the dynamic regret of every strategy, the goal's verdicts by the problem's shape,
and the residual detector's calibration read off the restarts' runs (false alarms
per 1000 trials without a change, detections and their delay after an abrupt
one, the share of uniform trials)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bandit_experiments.ax_benchmark.strategies import AX_DEFAULT
from bandit_experiments.online_benchmark.drift import (
    DEV,
    DRIFT_PROBLEMS,
    VALIDATION,
    hartmann,
)
from bandit_experiments.online_benchmark.runner import (
    FORGETTING,
    PLAIN,
    RESTARTS,
    RULES,
    WINDOW,
    quantities,
    summarize,
    with_rule,
)
from botorch_bandits.core import DecisionOptions, Domain, History, TrialRecord
from botorch_bandits.core.decide import decide
from botorch_bandits.core.steps.restarts import drift_state
from botorch_bandits.hyperparameters import Hyperparameters
from botorch_bandits.models import one_thread

#: on a stationary control a drift option may cost at most this share over plain
STATIONARY_MARGIN = 0.05
#: the share of a shape's problems on which the goal must hold
GOAL_SHARE = 0.8


def _cell(stat: tuple[float, float] | None) -> str:
    if stat is None or math.isnan(stat[0]):
        return "-"
    mean, se = stat
    digits = 1 if abs(mean) >= 10 else 2
    return f"{mean:.{digits}f} ± {se:.{digits}f}"


def columns(rule: str) -> list[str]:
    """The table's strategies under ``rule``."""
    return [with_rule(s, rule) for s in (PLAIN, RESTARTS, FORGETTING, WINDOW)] + [
        AX_DEFAULT
    ]


def regret_table(names: Sequence[str], summary: dict, rule: str) -> list[str]:
    """Markdown: per problem, each strategy's dynamic regret (mean ± s.e.), the
    restarts per run and the forgetting option's fitted half-life (trials)."""
    cols = columns(rule)
    lines = [
        "| problem | shape | dim | trials | noise | "
        + " | ".join(f"`{c}`" for c in cols)
        + " | restarts / run | half-life (trials) |",
        "| --- | --- | --- | --- | --- | "
        + " | ".join("---" for _ in cols)
        + " | --- | --- |",
    ]
    for n in names:
        p = DRIFT_PROBLEMS[n]
        row = [_cell(summary.get((n, c), {}).get("regret")) for c in cols]
        rs = summary.get((n, cols[1]), {}).get("restarts")
        hl = summary.get((n, cols[2]), {}).get("half_life")
        lines.append(
            f"| {n} | {p.shape} | {p.dim} | {p.trials} | {p.noise:g} | "
            + " | ".join(row)
            + f" | {'-' if rs is None else f'{rs[0]:.1f}'}"
            + f" | {'-' if hl is None or math.isnan(hl[0]) else f'{hl[0]:.0f}'} |"
        )
    return lines


def _mean(summary: dict, n: str, s: str) -> float | None:
    cell = summary.get((n, s))
    return None if cell is None else cell["regret"][0]


def goal_lines(names: Sequence[str], summary: dict, rule: str) -> list[str]:
    """The goal's verdict per problem and per shape: on abrupt changes (large and
    mild) the restarts below plain, the window and Ax's default; on gradual drift
    the forgetting option below the same three; on a stationary control neither
    more than :data:`STATIONARY_MARGIN` over plain; periodic drift reported."""
    plain, restarts, forgetting, window, ax = columns(rule)
    lines, tally = [], {"abrupt": [], "gradual": [], "stationary": []}
    for n in names:
        shape = DRIFT_PROBLEMS[n].shape
        m = {s: _mean(summary, n, s) for s in (plain, restarts, forgetting, window, ax)}
        # the window may not have been run around a rule: compared with the others
        if any(v is None for s, v in m.items() if s != window):
            continue
        others = [o for o in (plain, window, ax) if m[o] is not None]
        if shape in ("abrupt", "mild", "gradual", "periodic"):
            opt = restarts if shape in ("abrupt", "mild") else forgetting
            beaten = [o for o in others if m[opt] < m[o]]
            lost = [o for o in others if o not in beaten]
            ok = not lost
            if shape != "periodic":
                tally["gradual" if shape == "gradual" else "abrupt"].append(ok)
            lines.append(
                f"- {n} ({shape}): `{opt}` {m[opt]:.4g} — "
                + ("MET" if ok else "NOT MET")
                + (
                    f" (behind {', '.join(f'`{o}` {m[o]:.4g}' for o in lost)})"
                    if lost
                    else ""
                )
                + ("" if shape != "periodic" else " [periodic: reported, no goal]")
            )
        else:
            over = {
                s: m[s] / m[plain] - 1.0 if m[plain] > 0 else math.nan
                for s in (restarts, forgetting)
            }
            ok = all(v <= STATIONARY_MARGIN for v in over.values())
            tally["stationary"].append(ok)
            lines.append(
                f"- {n} (stationary): "
                + "; ".join(
                    f"`{s}` {100 * v:+.1f} % over plain" for s, v in over.items()
                )
                + (" — MET" if ok else " — NOT MET")
            )
    out = []
    for shape, oks in tally.items():
        if oks:
            share = sum(oks) / len(oks)
            goal = GOAL_SHARE if shape != "stationary" else 1.0
            out.append(
                f"- **{shape}** problems: goal met on {sum(oks)} of {len(oks)} "
                f"({100 * share:.0f} %; needed {100 * goal:.0f} %): "
                + ("MET" if share >= goal else "NOT MET")
            )
    return [*lines, "", *out]


def calibration_lines(jobs: Sequence[dict[str, Any]], rule: str) -> list[str]:
    """The residual detector's calibration from the restarts' runs: false alarms per
    1000 trials on the stationary problems (and before the change on the abrupt
    ones); on the abrupt ones the runs whose detector fired after the change, the
    mean delay (trials from the change to the first detection after it); the
    share of uniform trials."""
    restarts = with_rule(RESTARTS, rule)
    rows: dict[str, list[dict]] = {}
    for j in jobs:
        if j["strategy"] == restarts and j["problem"] in DRIFT_PROBLEMS:
            rows.setdefault(j["problem"], []).append(j)
    lines = [
        "| problem | shape | runs | trials | false alarms / 1000 trials | detected "
        "| mean delay (trials) | detections / run | uniform share |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    still_alarms, still_trials = 0, 0
    for n, js in rows.items():
        p = DRIFT_PROBLEMS[n]
        T = len(js[0]["value"])
        det = [j.get("detections") or [] for j in js]
        uniform = np.mean([len(j["uniform"]) / T for j in js])
        change = p.change_trial if p.change is not None else None
        if p.shape == "stationary" or change is not None:
            end = T if change is None else change
            # a detection at round t decides trial t - 1: before the change when
            # it fired on data from before it
            alarms = sum(sum(t - 1 < end for t in d) for d in det)
            if change is None:
                still_alarms += alarms
                still_trials += end * len(js)
            rate = f"{1000 * alarms / (end * len(js)):.2f}"
        else:
            rate = "-"
        if change is not None:
            first = [
                min([t - 1 for t in d if t - 1 >= change], default=None) for d in det
            ]
            hits = [f - change for f in first if f is not None]
            found = f"{len(hits)} of {len(js)}"
            delay = f"{np.mean(hits):.1f}" if hits else "-"
        else:
            found, delay = "-", "-"
        per_run = np.mean([len(d) for d in det])
        lines.append(
            f"| {n} | {p.shape} | {len(js)} | {T} | {rate} | {found} | {delay} | "
            f"{per_run:.2f} | {uniform:.3f} |"
        )
    if still_trials:
        lines += [
            "",
            f"Stationary controls together: {still_alarms} false alarms in "
            f"{still_trials} trials ({1000 * still_alarms / still_trials:.2f} per 1000).",
        ]
    return lines


def load_jobs(folder: Path) -> list[dict[str, Any]]:
    """Every kept job in ``folder/jobs`` (as measured, whatever code it was run
    with: the report names the fingerprints)."""
    jobs = []
    for path in sorted((folder / "jobs").glob("*.json")):
        with open(path) as fh:
            jobs.append(json.load(fh))
    return jobs


def report_lines(root: Path) -> list[str]:
    """The report of the kept drift jobs under ``root/dev`` and
    ``root/validation``: per half and rule, the regret table, the goal's verdicts
    and the detector's calibration."""
    lines: list[str] = []
    for half, names in (("dev", DEV), ("validation", VALIDATION)):
        every = [j for j in load_jobs(root / half) if j["problem"] in DRIFT_PROBLEMS]
        if not every:
            continue
        codes = sorted(
            {
                j["code"].split(" botorch_bandits ")[-1]
                for j in every
                if " botorch_bandits " in j["code"]
            }
        )
        title = "Development" if half == "dev" else "Validation"
        for rule in RULES:
            # like with like: the (problem, seed) pairs the rule's plain run has
            ran = {(j["problem"], j["seed"]) for j in every if j["strategy"] == rule}
            if not ran:
                continue
            jobs = [j for j in every if (j["problem"], j["seed"]) in ran]
            summary = summarize(jobs)
            seeds = sorted({j["seed"] for j in jobs})
            lines += [
                f"### {title} half, rule {rule}",
                "",
                f"Dynamic regret Σ_t (f_t(x_t) − min f_t), mean ± s.e. over seeds "
                f"{seeds} (the problems and seeds run with {rule}); {len(jobs)} "
                f"jobs; code fingerprints {', '.join(codes)}.",
                "",
                *regret_table(names, summary, rule),
                "",
                "Goal:",
                "",
                *goal_lines(names, summary, rule),
                "",
                "Detector calibration (the restarts' runs):",
                "",
                *calibration_lines(jobs, rule),
                "",
            ]
    return lines + long_lines(load_jobs(root / "long"))


def long_lines(jobs: Sequence[dict[str, Any]]) -> list[str]:
    """The long runs (``root/long``): per job its problem, strategy, trials,
    dynamic regret, restarts (on a stationary problem: false alarms), the fitted
    forgetting's half-life and the wall-clock seconds."""
    if not jobs:
        return []
    lines = [
        "### Long runs",
        "",
        "| problem | strategy | seed | trials | dynamic regret | restarts (trials) | "
        "half-life (trials) | seconds |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for j in jobs:
        q = quantities(j)
        hl = "-" if math.isnan(q["half_life"]) else f"{q['half_life']:.0f}"
        rs = "-" if j.get("restarts") is None else str(j["restarts"])
        lines.append(
            f"| {j['problem']} | `{j['strategy']}` | {j['seed']} | {len(j['value'])} | "
            f"{q['regret']:.1f} | {rs} | {hl} | {j['seconds']:.0f} |"
        )
    return [*lines, ""]


__all__ = [
    "calibration_lines",
    "columns",
    "decision_seconds",
    "goal_lines",
    "load_jobs",
    "long_lines",
    "regret_table",
    "report_lines",
    "speed_lines",
]


#: the drift options timed by :func:`decision_seconds`
SPEED_OPTIONS: dict[str, dict[str, Any]] = {
    "plain": {},
    "restarts": {"restarts": True},
    "forgetting": {"forgetting": True},
    "restarts + forgetting": {"restarts": True, "forgetting": True},
}


def decision_seconds(
    n: int = 1000, d: int = 3, repeats: int = 3, seed: int = 0
) -> dict[str, dict[str, float]]:
    """One decision of the decision core after ``n`` completed trials (Hartmann-3
    values with noise at scrambled Sobol points), by drift option
    (:data:`SPEED_OPTIONS`): the fastest of ``repeats`` decisions that fit the GP
    again from the last fit (``fit``, as a run's refit schedule does) and that
    reuse the recorded fit (``reuse``, its usual decision at that size), in
    seconds, on one thread; the residual detector runs in both."""

    sobol = torch.quasirandom.SobolEngine(d, scramble=True, seed=seed)
    X = sobol.draw(n, dtype=torch.double)
    f = -hartmann(d)(X) + 0.05 * torch.randn(
        n, generator=torch.Generator().manual_seed(seed), dtype=torch.double
    )
    trials = tuple(
        TrialRecord(
            index=i, x=tuple(x), f=float(v), created=float(i), completed=i + 0.5
        )
        for i, (x, v) in enumerate(zip(X.tolist(), f.tolist(), strict=True))
    )
    unit = torch.quasirandom.SobolEngine(d, scramble=True, seed=seed + 1).draw(
        512, dtype=torch.double
    )
    domain = Domain.box(unit)
    out: dict[str, dict[str, float]] = {}
    with one_thread():
        for label, kwargs in SPEED_OPTIONS.items():
            opts = DecisionOptions.from_kwargs(**kwargs)
            # a cold fit first (untimed): what a run has recorded by then
            meta = decide(History(trials=trials), opts, domain).metadata
            warm = Hyperparameters.from_dict(meta["fit"])
            drift = drift_state(meta)
            refit = History(trials=trials, warm=warm, drift=drift)
            again = History(
                trials=trials, warm=warm, last_fit=dict(meta["fit"]), drift=drift
            )
            fit, reuse = math.inf, math.inf
            for _ in range(repeats):
                start = time.perf_counter()
                decide(refit, opts, domain)  # refitted, from the last fit
                fit = min(fit, time.perf_counter() - start)
                start = time.perf_counter()
                decide(again, opts, domain)  # the last fit reused
                reuse = min(reuse, time.perf_counter() - start)
            out[label] = {"fit": fit, "reuse": reuse}
    return out


def speed_lines(seconds: dict[str, dict[str, float]], n: int) -> list[str]:
    """The timings as a table, each option's ratio to plain measured in the same
    run."""
    base = seconds["plain"]
    lines = [
        f"One decision after {n} completed trials (decision core, one thread; the "
        "fastest of the repeats), and its ratio to plain IGP-UCB in this run:",
        "",
        "| drift option | with a fit (s) | ratio | fit reused (s) | ratio |",
        "| --- | --- | --- | --- | --- |",
    ]
    for label, s in seconds.items():
        lines.append(
            f"| {label} | {s['fit']:.2f} | {s['fit'] / base['fit']:.2f} | "
            f"{s['reuse']:.2f} | {s['reuse'] / base['reuse']:.2f} |"
        )
    return lines
