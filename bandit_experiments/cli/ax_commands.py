"""The commands that run Ax: ``demo`` (the main job), ``ax-check`` (the papers'
problems through ax.Client), ``ax-bench`` (the bandit strategies against Ax's
default) and ``ax-online`` (drift, delays, budgets); each imports Ax and the
benchmarks only when it runs."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from botorch_bandits.cli.common import (
    Command,
    CommandError,
    Progress,
    missing,
    positive_int,
)


def _ax_check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("check", choices=["piecewise", "constrained"])
    parser.add_argument("--seeds", type=positive_int, help="seeds (4; 2 with --smoke)")
    parser.add_argument(
        "--trials", type=positive_int, help="trials (300; 30 with --smoke)"
    )
    parser.add_argument("--jobs", type=positive_int, default=2, help="processes (2)")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="quick check: 2 seeds x 30 trials (the piecewise change after 15)",
    )
    parser.add_argument(
        "--cpd-regularization",
        type=float,
        help="detector constant c for 'piecewise' (20)",
    )


def _run_ax_check(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bandit_experiments.ax_benchmark.checks import run_check

    seeds = args.seeds or (2 if args.smoke else 4)
    trials = args.trials or (30 if args.smoke else 300)
    start = time.perf_counter()
    with Progress(
        "ax-check", f"{args.check}: {2 * seeds} runs of {trials} trials", "run"
    ) as progress:
        lines = run_check(
            args.check,
            seeds,
            trials,
            args.jobs,
            cpd_regularization=args.cpd_regularization,
            progress=progress,
        )
    for line in lines:
        print(line)
    print(
        f"{args.check}: {seeds} seed{'s' if seeds > 1 else ''} x {trials} trials in "
        f"{time.perf_counter() - start:.1f} s"
    )
    return 0


AX_CHECK = Command(
    help="The papers' problems through ax.Client with the bandit strategy: "
    "'piecewise' (restarts vs none, dynamic regret) or 'constrained' (App. E.1, "
    "time-averaged CV).",
    add_arguments=_ax_check_arguments,
    run=_run_ax_check,
    needs=(("ax", "ax"), ("sqlalchemy", "ax")),
)


#: ``ax-bench --smoke``'s problems (continuous, constrained, mixed types) and strategies
SMOKE_PROBLEMS = ("branin", "hartmann6-constrained", "mixed")
SMOKE_STRATEGIES = ("IGP-UCB", "Ax default")


def _ax_bench_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--problems",
        help="comma-separated problems (default: the 22 of the development and "
        "validation halves, or those of --half; "
        "`python -m bandit_experiments ax-bench --list` names them)",
    )
    parser.add_argument(
        "--half",
        choices=("development", "validation", "test"),
        help="only the problems of one half (defaults are chosen on the development "
        "half; the validation half is only reported; the test half, issue 51's, is "
        "run only when asked for)",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the problems by half and exit"
    )
    parser.add_argument(
        "--strategies",
        help="comma-separated strategies (all 6: IGP-UCB, GP-TS, GP-UCB, "
        "'IGP-UCB (theory)', qLogNEI, 'Ax default'); a variant carries node options in "
        "brackets, e.g. 'IGP-UCB[beta=2;repeats=allow]'",
    )
    parser.add_argument(
        "--seeds", type=positive_int, help="seeds 0..n-1 (5; 1 with --smoke)"
    )
    parser.add_argument(
        "--trials", type=positive_int, help="trials per job (60; 8 with --smoke)"
    )
    parser.add_argument(
        "--workers", type=positive_int, help="worker processes (CPU count)"
    )
    parser.add_argument(
        "--dask",
        action="store_true",
        help="run the jobs on a Dask LocalCluster on 127.0.0.1 (--workers processes, "
        "one thread each)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="quick check that it runs: 1 seed, 8 trials, and unless given the "
        f"problems {','.join(SMOKE_PROBLEMS)} and the strategies "
        f"{','.join(SMOKE_STRATEGIES)} (6 jobs; a verdict needs seeds: none is given)",
    )
    parser.add_argument(
        "--out", default="runs/ax-bench", help="output folder (runs/ax-bench)"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="reuse the finished jobs kept in OUT/jobs (same problem, strategy, seed "
        "and trials) and run only the others; with --growth, the cells kept in "
        "OUT/growth-PROBLEM.jsonl (a failed one runs again)",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar"
    )
    parser.add_argument(
        "--growth-limit",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="with --growth: skip a cell whose calls, extrapolated from the strategy's "
        "two sizes before, would pass SECONDS (600)",
    )
    parser.add_argument(
        "--growth",
        metavar="N,N,...",
        help="instead of the benchmark: seconds of one decision after N completed "
        "trials (e.g. 100,200,400) on the first of --problems (hartmann6; or a "
        "budget problem of ax-online, e.g. hartmann4-noisy-cost: its costs are "
        "the outcome constraints of Ax default and of labels with "
        "long_term_constraints), for IGP-UCB practical and theory and Ax default "
        "(or --strategies, labels with options)",
    )


def _run_ax_bench(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.dask and missing("distributed"):
        raise CommandError(
            "`ax-bench --dask` needs distributed: pip install '.[dask]' from a clone of the repository"
        )
    if args.list:
        _list_bench_problems()
    elif args.growth:
        _run_growth(args)
    else:
        _run_bench(args)
    return 0


def _names(text: str | None) -> list[str] | None:
    """A comma-separated list of names (``None``: not given)."""
    return None if text is None else [n.strip() for n in text.split(",")]


def _list_bench_problems() -> None:
    """``ax-bench --list``: each half's problems with their titles."""
    from bandit_experiments.ax_benchmark.runner import HALVES, PROBLEMS

    for half, probs in HALVES.items():
        print(f"{half} half:")
        for p in probs:
            print(f"  {p:26s} {PROBLEMS[p].title}")


def _run_growth(args: argparse.Namespace) -> None:
    """``ax-bench --growth N,...``: the seconds of one decision after each number of
    completed trials, per strategy."""
    from bandit_experiments.ax_benchmark.runner import generation_growth

    sizes = _growth_sizes(args.growth)
    if not args.growth_limit > 0:
        raise CommandError(
            f"--growth-limit must be a number of seconds > 0, got {args.growth_limit}"
        )
    kwargs = {}
    if args.strategies:
        kwargs["strategies"] = _names(args.strategies)
    problem = (_names(args.problems) or ["hartmann6"])[0]
    from bandit_experiments.online_benchmark.budget import (
        BUDGET_PROBLEMS,
        budget_growth_setup,
    )

    if problem in BUDGET_PROBLEMS:
        kwargs["setup"] = budget_growth_setup
    # each cell's row kept as it is made: a killed run resumes (--resume)
    path = Path(args.out or "runs/ax-bench") / f"growth-{problem}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    done = _kept_rows(path) if args.resume else []
    if not args.resume:
        path.write_text("")

    def keep(row: dict) -> None:
        with path.open("a") as f:
            f.write(json.dumps(row) + "\n")
        status = (
            "failed"
            if row.get("failed")
            else "skipped"
            if row.get("skipped")
            else f"{row['seconds_median']:.3f} s"
        )
        print(
            f"  n={row['completed']} {row['strategy']}: {status}",
            file=sys.stderr,
            flush=True,
        )

    kwargs["limit"] = args.growth_limit
    rows = generation_growth(problem, sizes, done=done, on_row=keep, **kwargs)
    print(
        f"seconds of one decision after n completed trials ({problem}; median of "
        "3, then the first of the 3: the one that fits the GP on the attached "
        "trials)"
    )
    labels = list(dict.fromkeys(r["strategy"] for r in rows))
    width = max(20, *(len(label) + 2 for label in labels))
    print(f"  {'strategy':{width}s}" + "".join(f"{f'n={n}':>10s}" for n in sizes))
    # the ratio to plain IGP-UCB's median at the same n, in the same run
    plain = {r["completed"]: r for r in rows if r["strategy"] == PLAIN}
    for label in labels:
        mine = [r for r in rows if r["strategy"] == label]
        _print_growth_rows(mine, label, width, None if label == PLAIN else plain)
    print(
        "  (peak MB: the peak resident memory of the process that ran that "
        "strategy at that n, attaching the trials included; in the node: the "
        "median seconds of a call the bandit node spent reading the experiment "
        "and deciding, Ax's own: the rest of the call; skipped: its calls "
        "extrapolated from the two sizes before (like n to n^3), would pass "
        f"{args.growth_limit:g} s; "
        f"x {PLAIN}: the median's ratio to {PLAIN}'s at that n)"
    )
    print(f"  (each cell's row: {path})")
    failed = [r for r in rows if r.get("failed")]
    for r in failed:
        print(f"  failed: n={r['completed']} {r['strategy']}: {r['failed']}")
    if failed:
        raise CommandError(f"{len(failed)} growth cell(s) failed (listed above)")


def _kept_rows(path: Path) -> list[dict]:
    """The rows a growth run kept in ``path`` (none if it is missing)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _growth_sizes(text: str) -> list[int]:
    """``--growth``'s numbers of completed trials, each at least 1."""
    try:
        sizes = [int(n) for n in text.split(",")]
    except ValueError:
        raise CommandError(
            f"--growth must be integers separated by commas, got {text!r}"
        ) from None
    if min(sizes) < 1:
        raise CommandError(
            f"--growth sizes are numbers of completed trials, each >= 1, got {text!r}"
        )
    return sizes


#: the growth table's baseline: each strategy's median is also given as a ratio to it
PLAIN = "IGP-UCB"


def _print_growth_rows(
    mine: list[dict], label: str, width: int, plain: dict[int, dict] | None
) -> None:
    """One strategy's rows of the growth table: median and first call, the ratio to
    ``plain``'s median at the same n (where given and measured), peak memory, and
    the node's and Ax's shares where measured."""

    def line(name: str, cells: str) -> None:
        print(f"  {name:{width}s}" + cells)

    line(label, "".join(_growth_cell(r, "seconds_median") for r in mine))
    line("  first call", "".join(_growth_cell(r, "first") for r in mine))
    if plain:
        line(f"  x {PLAIN}", "".join(_ratio_cell(r, plain) for r in mine))
    line("  peak MB", "".join(_growth_cell(r, "peak_rss_mb") for r in mine))
    if any("node_seconds_median" in r for r in mine):
        for key, name in (("node", "in the node"), ("ax", "Ax's own")):
            line(
                f"  {name}",
                "".join(_growth_cell(r, f"{key}_seconds_median") for r in mine),
            )


def _ratio_cell(row: dict, plain: dict[int, dict]) -> str:
    """``row``'s median over plain's at its n (``-`` where either is missing)."""
    base = plain.get(row["completed"], {}).get("seconds_median")
    if "seconds_median" not in row or not base:
        return f"{'-':>10s}"
    return f"{row['seconds_median'] / base:9.2f}x"


def _growth_cell(row: dict, key: str) -> str:
    """A cell of the growth table: seconds, megabytes, "skipped" or "failed"."""
    if row.get("skipped") or row.get("failed"):
        return f"{'skipped' if row.get('skipped') else 'failed':>10s}"
    if key != "first" and key not in row:  # not measured there (Ax's own node)
        return f"{'-':>10s}"
    value = row[key] if key != "first" else row["seconds"][0]
    return f"{value:10.3f}" if key != "peak_rss_mb" else f"{value:10.0f}"


def _run_bench(args: argparse.Namespace) -> None:
    """``ax-bench``: run the benchmark and print its sizes, tables and files."""
    from bandit_experiments.ax_benchmark.runner import AX_DEFAULT, run_bench

    seeds = args.seeds or (1 if args.smoke else 5)
    trials = args.trials or (8 if args.smoke else 60)
    problems, strategies = _names(args.problems), _names(args.strategies)
    if args.smoke:  # a few jobs: that everything runs, not which strategy wins
        if problems is None and args.half is None:
            problems = list(SMOKE_PROBLEMS)
        strategies = strategies or list(SMOKE_STRATEGIES)
    result = run_bench(
        problems=problems,
        half=args.half,
        strategies=strategies,
        seeds=seeds,
        trials=trials,
        workers=args.workers,
        dask=args.dask,
        out=args.out,
        show_progress=not args.no_progress,
        resume=args.resume,
    )
    print(
        f"ax-bench: {_count(len(result.problems), 'problem')} x "
        f"{_count(len(result.strategies), 'strategy')} x {_count(seeds, 'seed')}, "
        f"{_count(trials, 'trial')} each: {_count(len(result.jobs), 'job')} in "
        f"{result.seconds:.1f} s"
    )
    spread = "1 seed: no s.e." if seeds == 1 else f"mean ± s.e. over {seeds} seeds"
    print(
        f"final regrets after {_count(trials, 'trial')} ({spread}); median seconds "
        "of get_next_trials"
    )
    for line in result.table_lines():
        print(line)
    for label in result.strategies:
        comparison = result.comparison_lines(label) if label != AX_DEFAULT else []
        if comparison:
            print(f"{label} against Ax default:")
            for line in comparison:
                print(line)
    print(f"wrote {', '.join(str(p) for p in result.paths)}")


def _count(n: int, word: str) -> str:
    """``n`` and ``word``, plural unless ``n`` is 1."""
    plural = word[:-1] + "ies" if word.endswith("y") else word + "s"
    return f"{n} {word if n == 1 else plural}"


AX_BENCH = Command(
    help="Benchmark through ax.Client: the bandit strategies and Ax's default on 22 "
    "problems in a development and a validation half (BoTorch's test functions in "
    "2-30 dimensions, noisy, integer, categorical and mixed spaces, a linear "
    "constraint, scikit-learn tuning tasks); writes OUT/ax_bench.csv, "
    "OUT/summary.csv, OUT/summary.md (the tables the docs paste) and "
    "OUT/<problem>.png.",
    add_arguments=_ax_bench_arguments,
    run=_run_ax_bench,
    needs=(("ax", "ax"), ("matplotlib", "plot"), ("tqdm", "plot")),
)


def _ax_online_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--problems",
        help="comma-separated problems, or 'dev' / 'validation' for a half of the "
        "drift problems, 'budget-dev' / 'budget-validation' for a half of the "
        "budget problems, 'delay-dev' / 'delay-validation' for a half of the delay "
        "problems (budget and delay problems run on their own; default: all drift, "
        "the first delay and the first budget problem; --list names them)",
    )
    parser.add_argument(
        "--strategies",
        help="budget and delay problems only: comma-separated strategy labels "
        "(default, budget: long-term constraints around IGP-UCB and qLogNEI, Ax's "
        "default with the per-trial constraints, plain IGP-UCB; delays: "
        "hallucination, censoring around IGP-UCB and qLogNEI with the documented "
        "window and y_min, pending='ignore', Ax's default, qLogNEI with no pending "
        "rule)",
    )
    parser.add_argument(
        "--delay-report",
        metavar="DIR",
        help="instead of the benchmark: the delay problems' report from the jobs "
        "kept under DIR/dev, DIR/validation and DIR/tuning; runs nothing",
    )
    parser.add_argument(
        "--budget-report",
        metavar="DIR",
        help="instead of the benchmark: the budget problems' report from the jobs "
        "kept under DIR/dev and DIR/validation; runs nothing",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the problems and exit"
    )
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="instead of the benchmark: the change-point detector's false alarms "
        "and detection delays on the drift problems (--seeds runs each, 10; "
        "simulated without the GP); writes OUT/calibration.md",
    )
    parser.add_argument(
        "--report",
        metavar="DIR",
        help="instead of the benchmark: the drift problems' report from the jobs "
        "kept under DIR/dev and DIR/validation (regret tables per half and rule, "
        "the goal's verdicts, the residual detector's calibration); runs nothing",
    )
    parser.add_argument(
        "--speed",
        action="store_true",
        help="instead of the benchmark: one decision after 1000 trials (--trials "
        "sets it) with each drift option, and its ratio to plain IGP-UCB",
    )
    parser.add_argument(
        "--rule",
        choices=("IGP-UCB", "qLogNEI"),
        default="IGP-UCB",
        help="the bandit strategies' rule under the extensions: IGP-UCB (default) "
        "or qLogNEI (BoTorch's qLogNoisyExpectedImprovement, Ax's default "
        "acquisition)",
    )
    parser.add_argument(
        "--seeds", type=positive_int, help="seeds 0..n-1 (5; 2 with --smoke)"
    )
    parser.add_argument(
        "--trials",
        type=positive_int,
        help="trials per job (each problem's own horizon; 20 with --smoke)",
    )
    parser.add_argument(
        "--workers", type=positive_int, help="worker processes (CPU count)"
    )
    parser.add_argument(
        "--smoke", action="store_true", help="quick check: 2 seeds, 20 trials"
    )
    parser.add_argument(
        "--out", default="runs/ax-online", help="output folder (runs/ax-online)"
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar"
    )


def _run_kept_half(
    kind: str,
    report: ModuleType,
    run: Callable[..., list],
    names: list[str],
    seeds: int,
    args: argparse.Namespace,
) -> int:
    """The budget or delay problems ``names`` (``kind``) run by ``run`` (``seeds``
    by default, 2 with ``--smoke``), kept under ``--out``; prints ``report``'s
    table of the jobs."""
    start = time.perf_counter()
    jobs = run(
        names,
        seeds=args.seeds or (2 if args.smoke else seeds),
        strategies=None
        if args.strategies is None
        else [s.strip() for s in args.strategies.split(",")],
        out=args.out,
        workers=args.workers,
        show_progress=not args.no_progress,
        trials=args.trials or (20 if args.smoke else None),
    )
    print(f"ax-online: {len(jobs)} {kind} jobs in {time.perf_counter() - start:.1f} s")
    print("\n".join(report.table_lines(jobs)))
    print(f"wrote {args.out}/summary.md (finished jobs kept in {args.out}/jobs)")
    return 0


def _print_report(
    lines: list[str], message: str, parser: argparse.ArgumentParser
) -> int:
    """A kept jobs' report, or ``message`` as the parser's error when none."""
    if not lines:
        parser.error(message)
    print("\n".join(lines))
    return 0


def _run_ax_online(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bandit_experiments.online_benchmark import budget_report, delay_report
    from bandit_experiments.online_benchmark.budget import BUDGET_PROBLEMS
    from bandit_experiments.online_benchmark.delay import DELAY_PROBLEMS
    from bandit_experiments.online_benchmark.runner import (
        PROBLEMS,
        problem_names,
        run_online,
        table_lines,
    )

    if args.list:
        for name, p in {**PROBLEMS, **DELAY_PROBLEMS, **BUDGET_PROBLEMS}.items():
            half = getattr(p, "half", "")
            print(f"  {name:20s} {half:10s} {p.trials:4d} trials  {p.title}")
        return 0
    if args.budget_report:
        return _print_report(
            budget_report.report_lines(Path(args.budget_report)),
            f"no budget jobs kept under {args.budget_report}/dev or /validation",
            parser,
        )
    if args.delay_report:
        return _print_report(
            delay_report.report_lines(Path(args.delay_report)),
            f"no delay jobs kept under {args.delay_report}/dev etc.",
            parser,
        )
    delays = None if args.problems is None else delay_report.delay_names(args.problems)
    if delays:
        run = delay_report.run_delays
        return _run_kept_half("delay", delay_report, run, delays, 3, args)
    budget = (
        None if args.problems is None else budget_report.budget_names(args.problems)
    )
    if args.strategies and budget is None:
        parser.error("--strategies applies to the budget and delay problems only")
    if budget is not None:
        run = budget_report.run_budget
        return _run_kept_half("budget", budget_report, run, budget, 5, args)
    if args.report or args.speed:
        from bandit_experiments.online_benchmark import drift_report

        if args.report:
            lines = drift_report.report_lines(Path(args.report))
            if not lines:
                parser.error(
                    f"no drift jobs kept under {args.report}/dev or /validation"
                )
        else:
            n = args.trials or 1000
            lines = drift_report.speed_lines(drift_report.decision_seconds(n), n)
        print("\n".join(lines))
        return 0
    if args.calibrate:
        from bandit_experiments.online_benchmark.calibration import (
            calibrate_restarts,
            calibration_lines,
        )

        long = 200 if args.smoke else 1000
        runs = calibrate_restarts(
            problems=None
            if args.problems is None
            else [n.strip() for n in args.problems.split(",")],
            seeds=args.seeds or (2 if args.smoke else 10),
            long=long,
            short=args.trials or 100,
            workers=args.workers or 1,
        )
        lines = calibration_lines(runs)
        print("\n".join(lines))
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "calibration.md").write_text("\n".join(lines) + "\n")
        print(f"wrote {out / 'calibration.md'}")
        return 0
    seeds = args.seeds or (2 if args.smoke else 5)
    trials = args.trials or (20 if args.smoke else None)
    names = None if args.problems is None else problem_names(args.problems)
    start = time.perf_counter()
    jobs, summary = run_online(
        problems=names,
        seeds=seeds,
        trials=trials,
        workers=args.workers,
        out=args.out,
        show_progress=not args.no_progress,
        rule=args.rule,
    )
    print(f"ax-online: {len(jobs)} jobs in {time.perf_counter() - start:.1f} s")
    for line in table_lines(names or list(PROBLEMS), summary, seeds, trials, args.rule):
        print(line)
    print(f"wrote {args.out}/summary.md (finished jobs kept in {args.out}/jobs)")
    return 0


AX_ONLINE = Command(
    help="The online benchmark through ax.Client: drifting objectives, random "
    "evaluation delays with several workers, a cost budget on average; practical "
    "IGP-UCB plain and with its matching extension (restarts, censoring, long-term "
    "constraints), Ax's default and a sliding window; writes OUT/summary.md. "
    "Finished jobs are kept and reused: a killed run continues.",
    add_arguments=_ax_online_arguments,
    run=_run_ax_online,
    needs=(("ax", "ax"), ("tqdm", "plot")),
)
