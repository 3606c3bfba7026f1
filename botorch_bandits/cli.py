"""Command-line entry point: ``botorch-bandits``."""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

#: the packages each command needs beyond the core, and the extra that brings them
NEEDS: dict[str, tuple[tuple[str, str], ...]] = {
    "demo": (
        ("ax", "ax"),
        ("sqlalchemy", "ax"),
        ("matplotlib", "plot"),
        ("tqdm", "plot"),
    ),
    "ax-check": (("ax", "ax"), ("sqlalchemy", "ax")),
    "ax-bench": (("ax", "ax"), ("matplotlib", "plot"), ("tqdm", "plot")),
    "loop-demo": (("matplotlib", "plot"), ("tqdm", "plot")),
    "reproduce": (("matplotlib", "plot"), ("tqdm", "plot")),
}


class CommandError(Exception):
    """An error the user can act on: printed as one line, exit code 2."""


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # a module set to None, a broken package
        return True


def check_extras(command: str) -> None:
    """Name the ``pip install`` a command needs before it does any work."""
    missing = [(m, extra) for m, extra in NEEDS.get(command, ()) if _missing(m)]
    if missing:
        extras = ",".join(sorted({extra for _, extra in missing}))
        names = ", ".join(m for m, _ in missing)
        raise CommandError(
            f"`{command}` needs {names}: pip install 'botorch-bandits[{extras}]'"
        )


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="botorch-bandits",
        description="Bandit algorithms with regret guarantees for BoTorch and Ax.",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the full traceback of an error (also: BOTORCH_BANDITS_DEBUG=1)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo",
        help="The main job: an Ax experiment with the IGP-UCB bandit strategy on an "
        "RKHS function, 3 trials in flight on a process pool, stored in SQLite "
        "(OUT/demo.db), against Ax's default strategy; writes OUT/regret.png and "
        "OUT/regret.csv. --resume continues a killed run.",
    )
    demo.add_argument(
        "--trials", type=_positive_int, default=30, help="trials per strategy (30)"
    )
    demo.add_argument(
        "--parallelism", type=_positive_int, default=3, help="trials in flight (3)"
    )
    demo.add_argument("--seed", type=int, default=0, help="seed (0)")
    demo.add_argument("--out", default="runs/demo", help="output folder (runs/demo)")
    demo.add_argument(
        "--resume",
        action="store_true",
        help="continue the run stored in OUT/demo.db (without it a new run replaces it)",
    )
    demo.add_argument(
        "--bandit-only",
        action="store_true",
        help="run only the bandit strategy (no Ax-default comparison)",
    )
    demo.add_argument("--smoke", action="store_true", help="tiny run: 8 trials")
    demo.add_argument(
        "--mode",
        choices=("theory", "practical"),
        default="theory",
        help="the bandit's mode: 'theory' (the function's known kernel, B and R; "
        "default) or 'practical' (fitted GP, standardized outcomes, gradient "
        "optimizer)",
    )
    demo.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar"
    )
    loop = sub.add_parser(
        "loop-demo",
        help="IGP-UCB vs GP-TS vs GP-UCB on an RKHS function (a plain BoTorch loop); "
        "writes a cumulative-regret plot (PNG) and CSV.",
    )
    loop.add_argument(
        "--horizon", type=_positive_int, default=100, help="steps T (100)"
    )
    loop.add_argument("--seeds", type=_positive_int, default=5, help="repetitions (5)")
    loop.add_argument(
        "--kernel", choices=["rbf", "matern52"], default="rbf", help="kernel (rbf)"
    )
    loop.add_argument(
        "--out", default="runs/loop-demo", help="output folder (runs/loop-demo)"
    )
    loop.add_argument("--smoke", action="store_true", help="tiny run: T=10, 1 seed")
    loop.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar"
    )
    check = sub.add_parser(
        "ax-check",
        help="The papers' problems through ax.Client with the bandit strategy: "
        "'piecewise' (restarts vs none, dynamic regret) or 'constrained' (App. E.1, "
        "time-averaged CV).",
    )
    check.add_argument("check", choices=["piecewise", "constrained"])
    check.add_argument("--seeds", type=_positive_int, default=4, help="seeds (4)")
    check.add_argument("--trials", type=_positive_int, default=300, help="trials (300)")
    check.add_argument("--jobs", type=_positive_int, default=2, help="processes (2)")
    check.add_argument(
        "--cpd-c", type=float, help="detector constant c for 'piecewise' (20)"
    )
    axb = sub.add_parser(
        "ax-bench",
        help="Benchmark through ax.Client: the bandit strategies and Ax's default on "
        "Branin, Hartmann6 (also in 20-D, with a linear constraint, noisy), a mixed "
        "space and a log-scale parameter; writes OUT/ax_bench.csv, OUT/summary.csv "
        "and OUT/<problem>.png.",
    )
    axb.add_argument(
        "--problems",
        help="comma-separated problems (all 7: branin, hartmann6, hartmann6-in-20d, "
        "mixed, hartmann6-constrained, branin-log, hartmann6-noisy)",
    )
    axb.add_argument(
        "--strategies",
        help="comma-separated strategies (all 5: IGP-UCB, GP-TS, GP-UCB, "
        "'IGP-UCB (theory)', 'Ax default')",
    )
    axb.add_argument(
        "--seeds", type=_positive_int, help="seeds 0..n-1 (5; 1 with --smoke)"
    )
    axb.add_argument(
        "--trials", type=_positive_int, help="trials per job (60; 8 with --smoke)"
    )
    axb.add_argument(
        "--workers", type=_positive_int, help="worker processes (CPU count)"
    )
    axb.add_argument(
        "--dask",
        action="store_true",
        help="run the jobs on a Dask LocalCluster on 127.0.0.1 (--workers processes, "
        "one thread each)",
    )
    axb.add_argument(
        "--smoke", action="store_true", help="quick check: 1 seed, 8 trials"
    )
    axb.add_argument(
        "--out", default="runs/ax-bench", help="output folder (runs/ax-bench)"
    )
    axb.add_argument(
        "--resume",
        action="store_true",
        help="reuse the finished jobs kept in OUT/jobs (same problem, strategy, seed "
        "and trials) and run only the others",
    )
    axb.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    axb.add_argument(
        "--growth",
        metavar="N,N,...",
        help="instead of the benchmark: seconds of one decision after N completed "
        "trials (e.g. 100,200,400) on the first of --problems (hartmann6), for "
        "IGP-UCB practical and theory and Ax default (or --strategies)",
    )
    tsv = sub.add_parser(
        "ts-variance",
        help="GP-TS sampler check: empirical variance of draws / (v_t^2 sigma^2) at 5 "
        "points, for the exact, our pathwise, and BoTorch's default pathwise sampler.",
    )
    tsv.add_argument("--draws", type=_positive_int, default=2000, help="draws (2000)")
    tsv.add_argument(
        "--features", type=_positive_int, default=4096, help="random features (4096)"
    )
    bat = sub.add_parser(
        "batch-tradeoff",
        help="Batch BO versus sequential: GP-BUCB and GP-UCB-SDF with batches of B "
        "against sequential GP-UCB on Verma et al.'s GP sample; cumulative regret per "
        "evaluation and per batch round.",
    )
    bat.add_argument("--batch-size", type=_positive_int, default=5, help="B (5)")
    bat.add_argument(
        "--horizon", type=_positive_int, default=200, help="evaluations (200)"
    )
    bat.add_argument("--seeds", type=_positive_int, default=25, help="seeds (25)")
    bg = sub.add_parser(
        "beta-guide",
        help="What B, R, delta and gamma come to on a fitted SingleTaskGP (standardized "
        "outcomes): the fitted R, observed gamma, the RKHS norm of the posterior mean "
        "and the multipliers of sigma they imply, for n = 10, 30, 100 points of "
        "Forrester (1-D), Branin, Hartmann6 (also noisy); then the regret of B = 1, "
        "B = B-hat, constant beta and GP-TS through ax.Client. Writes OUT/fits.csv "
        "and OUT/loop.csv.",
    )
    bg.add_argument(
        "--seeds", type=_positive_int, default=5, help="fits per problem and n (5)"
    )
    bg.add_argument(
        "--loop-seeds", type=_positive_int, default=5, help="closed-loop seeds (5)"
    )
    bg.add_argument(
        "--trials", type=_positive_int, default=50, help="closed-loop trials (50)"
    )
    bg.add_argument("--workers", type=_positive_int, default=2, help="processes (2)")
    bg.add_argument(
        "--no-loop", action="store_true", help="only the fit table (seconds)"
    )
    bg.add_argument("--out", default="runs/beta-guide", help="output folder")
    bench = sub.add_parser(
        "benchmark-engine",
        help="FiniteArmGP: drift after many updates, and per-step time versus the plain "
        "BoTorch loop (SingleTaskGP rebuild + UCB on 100 arms), side by side.",
    )
    bench.add_argument(
        "--horizon", type=_positive_int, default=30000, help="updates (30000)"
    )
    bench.add_argument(
        "--seeds", type=_positive_int, default=25, help="seed batch (25)"
    )
    rep = sub.add_parser(
        "reproduce",
        help="Run a paper's experiment on the finite-arm engine; writes "
        "OUT/<experiment>.csv (long form) and OUT/<experiment>.png.",
    )
    rep.add_argument(
        "experiment",
        nargs="?",
        help="experiment name (see --list), or 'all': every figure of the five "
        "papers under every reading, one after the other",
    )
    rep.add_argument(
        "--resume",
        action="store_true",
        help="with 'all': skip the experiments whose CSVs are already in OUT",
    )
    rep.add_argument(
        "--list", action="store_true", help="print the experiment names, one per line"
    )
    rep.add_argument("--seeds", type=_positive_int, help="seeds (the paper's count)")
    rep.add_argument("--horizon", type=_positive_int, help="steps T (the paper's T)")
    rep.add_argument(
        "--smoke", action="store_true", help="tiny run (T=30, 2 seeds unless given)"
    )
    rep.add_argument(
        "--out", default="runs/reproduce", help="output folder (runs/reproduce)"
    )
    rep.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the jobs on a Dask cluster: a scheduler address, or 'local' for a "
        "LocalCluster on 127.0.0.1",
    )
    rep.add_argument(
        "--workers", type=_positive_int, help="local worker processes (CPU count)"
    )
    rep.add_argument(
        "--algorithms", help="comma-separated algorithms instead of the paper's"
    )
    rep.add_argument("--seed", type=int, default=0, help="base seed (0)")
    rep.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    rep.add_argument(
        "--cpd-c",
        type=_cpd_c,
        help="change-point detector constant c of the avanesov-* experiments: a "
        "number, or 'calibrated' (the default: chosen inside GP-UCB-CPD for the "
        "experiment's reading, table in OUT/avanesov-calibration-<reading>.csv)",
    )
    rep.add_argument(
        "--record",
        type=_record,
        default="log",
        help="steps the CSV keeps: 'log' (default: every step up to 500, then 500 "
        "log-spaced steps; the last step and the report's checkpoints always), "
        "'all', or K (every K-th step)",
    )
    rpt = sub.add_parser(
        "reproduction-report",
        help="Write REPRODUCTION.md from the CSVs of `reproduce` (one row per claim "
        "of the five papers: the paper's figure, ours under each reading, verdict).",
    )
    rpt.add_argument(
        "--csv-dir",
        default="runs/reproduce",
        help="folder of the reproductions' CSVs (runs/reproduce)",
    )
    rpt.add_argument(
        "--out", default="REPRODUCTION.md", help="the report (REPRODUCTION.md)"
    )
    det = sub.add_parser(
        "cpd-detector",
        help="The change-point detector on uniformly sampled GP data (Avanesov §4 "
        "setting): false-positive rate and detection delay for candidate constants c.",
    )
    det.add_argument("--runs", type=_positive_int, default=64, help="runs per c (64)")
    det.add_argument(
        "--c", default="5,10,20,50", help="comma-separated constants c (5,10,20,50)"
    )
    return parser


def _reproduce_all(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from botorch_bandits.benchmarks.reproduce import reproduce_all

    for flag in ("seeds", "horizon", "dask", "algorithms", "cpd_c"):
        if getattr(args, flag) is not None:
            parser.error(f"'all' runs every experiment at its own sizes; drop --{flag}")
    if args.seed != 0:
        parser.error("'all' runs with the base seed 0; drop --seed")

    def report(name: str, result) -> None:
        if result is None:
            print(f"{name}: already in {args.out} (--resume)", flush=True)
        else:
            print(
                f"{name}: {len(result.jobs)} jobs, T={result.horizon}, "
                f"{result.seeds} seeds, {result.seconds:.1f} s",
                flush=True,
            )

    seconds = reproduce_all(
        out=args.out,
        smoke=args.smoke,
        resume=args.resume,
        workers=args.workers,
        show_progress=not args.no_progress,
        report=report,
        record=args.record,
    )
    print(
        f"all experiments: {seconds:.1f} s wall in this call; see {args.out}/timings.csv"
    )
    return 0


def _record(text: str) -> str | int:
    if text in ("all", "log"):
        return text
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise argparse.ArgumentTypeError(
        f"must be 'log', 'all' or an integer K >= 1, got {text!r}"
    )


def _cpd_c(text: str) -> float | str:
    if text == "calibrated":
        return text
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(
            f"must be a number > 0 or 'calibrated', got {text!r}"
        )
    return value


def _reproduce(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from botorch_bandits.benchmarks.reproduce import (
        EXPERIMENTS,
        problem_label,
        reproduce,
    )

    if args.list:
        for name in EXPERIMENTS:
            print(name)
        return 0
    if args.experiment is None:
        parser.error("reproduce needs an experiment name (see --list)")
    if args.experiment == "all":
        return _reproduce_all(args, parser)
    if args.resume:
        parser.error("--resume goes with 'all'")
    if args.experiment not in EXPERIMENTS:
        parser.error(
            f"unknown experiment {args.experiment!r}; choose one of: "
            + ", ".join(EXPERIMENTS)
        )
    result = reproduce(
        args.experiment,
        seeds=args.seeds,
        horizon=args.horizon,
        smoke=args.smoke,
        out=args.out,
        dask=args.dask,
        workers=args.workers,
        algorithms=args.algorithms.split(",") if args.algorithms else None,
        seed=args.seed,
        show_progress=not args.no_progress,
        cpd_c=args.cpd_c,
        record=args.record,
    )
    print(
        f"{args.experiment}: T={result.horizon}, {result.seeds} seeds, "
        f"{len(result.jobs)} jobs in {result.seconds:.1f} s"
    )
    print(
        f"  {'problem':26s} {'algorithm':14s} {'R_T mean':>12s}   {'s.e.':>9s}  "
        f"{'R_t/t at T/2':>12s} {'R_T/T':>10s}"
    )
    for problem, algorithm, mean, se, half, last in result.summary():
        print(
            f"  {problem:26s} {algorithm:14s} {mean:12.3f} ± {se:9.3f}  "
            f"{half:12.5f} {last:10.5f}"
        )
    delayed = [j for j in result.jobs if "best_value" in j["stats"]]
    if delayed:
        T = result.horizon
        marks = sorted({max(T // 4, 1), max(T // 2, 1), T})
        head = "".join(f"{'r_t, t=' + str(t):>22s}" for t in marks)
        print(
            f"  {'problem':26s} {'algorithm':11s}{head}{'best value at T':>22s}"
            f"{'r_T in window':>22s}"
        )
        for job in delayed:
            sr_mean, sr_se = job["stats"]["simple_regret"]
            bv_mean, bv_se = job["stats"]["best_value"]
            iw_mean, iw_se = job["stats"]["simple_regret_in_window"]
            cells = "".join(
                f"{float(sr_mean[t - 1]):>12.5f} ± {float(sr_se[t - 1]):<7.5f}"
                for t in marks
            )
            print(
                f"  {problem_label(job['problem'], job['steps']):26s} {job['algorithm']:11s}{cells}"
                f"{float(bv_mean[-1]):>12.5f} ± {float(bv_se[-1]):<7.5f}"
                f"{float(iw_mean[-1]):>12.5f} ± {float(iw_se[-1]):<7.5f}"
            )
    constrained = [
        j for j in result.jobs if "average_constraint_violation" in j["stats"]
    ]
    if constrained:
        checkpoints = sorted(
            {t for t in (40, 100, 200, 350) if t <= result.horizon} | {result.horizon}
        )
        print("time-averaged regret R_t/t and CV V_t/t (mean ± s.e.):")
        for job in constrained:
            (r, r_se), (v, v_se) = (
                job["stats"]["average_regret"],
                job["stats"]["average_constraint_violation"],
            )
            cells = "  ".join(
                f"t={t}: {float(r[t - 1]):+.3f}±{float(r_se[t - 1]):.3f} / "
                f"{float(v[t - 1]):.3f}±{float(v_se[t - 1]):.3f}"
                for t in checkpoints
            )
            print(
                f"  {problem_label(job['problem'], job['steps']):12s} "
                f"{job['algorithm']:8s} {cells}"
            )
    piecewise = [j for j in result.jobs if "detection_delays" in j]
    if result.calibration is not None:
        cal = result.calibration
        print(
            f"detector constant c = {cal.c:g}, calibrated inside GP-UCB-CPD "
            f"(reading {cal.reading}; table {cal.path}):"
        )
        for r in cal.rows:
            print(
                f"  c = {r.c:5g}: detected {r.detected:4d} of {r.changes:4d} changes, "
                f"false alarms {r.false_alarms:5d}, mean delay {r.mean_delay:7.1f}, "
                f"R_T {r.regret:9.2f} ± {r.regret_se:.2f}"
            )
    if piecewise:
        print(
            "restarts (all seeds): detected changes, mean detection delay, missed, false alarms"
        )
        for job in piecewise:
            delays = job["detection_delays"]
            mean = f"{sum(delays) / len(delays):7.1f}" if delays else "     --"
            print(
                f"  {problem_label(job['problem'], job['steps']):15s} "
                f"{job['algorithm']:19s} detected {len(delays):4d}, "
                f"delay {mean} steps, missed {job['missed_changes']:4d}, false "
                f"{job['false_alarms']:4d}; uniform steps per seed {job['uniform_steps']:.1f}"
            )
    law = result.power_law()
    if law is not None:
        print(f"fitted R_T ~ {law}".replace(" x^", f" {result.experiment.fit}^"))
        per_run = result.exponent_per_run()
        if per_run is not None:
            print(f"exponent fitted on individual runs (log-log), 95% CI: {per_run}")
    for a, b, d in result.paired_differences():
        print(f"paired R_T difference {a} - {b}: {d} (mean ± s.e. over runs)")
    print(f"wrote {result.csv_path} and {result.png_path}")
    return 0


def _ax_demo(args: argparse.Namespace) -> int:
    from botorch_bandits.benchmarks.ax_demo import run_demo, summary_lines

    trials = 8 if args.smoke else args.trials
    start = time.perf_counter()
    result = run_demo(
        out_dir=args.out,
        trials=trials,
        parallelism=args.parallelism,
        seed=args.seed,
        resume=args.resume,
        show_progress=not args.no_progress,
        strategies=("bandit",) if args.bandit_only else ("bandit", "ax-default"),
        mode=args.mode,
    )
    for line in summary_lines(result, trials):
        print(line)
    print(
        f"wrote {args.out}/demo.db, {args.out}/regret.png and {args.out}/regret.csv "
        f"in {time.perf_counter() - start:.1f} s"
    )
    return 0


def _ax_bench(args: argparse.Namespace) -> int:
    if args.dask and _missing("distributed"):
        raise CommandError(
            "`ax-bench --dask` needs distributed: pip install 'botorch-bandits[dask]'"
        )
    from botorch_bandits.benchmarks.ax_bench import run_bench

    def names(text: str | None) -> list[str] | None:
        return None if text is None else [n.strip() for n in text.split(",")]

    if args.growth:
        from botorch_bandits.benchmarks.ax_bench import generation_growth

        try:
            sizes = [int(n) for n in args.growth.split(",")]
        except ValueError:
            raise CommandError(
                f"--growth must be integers separated by commas, got {args.growth!r}"
            ) from None
        kwargs = {}
        if args.strategies:
            kwargs["strategies"] = names(args.strategies)
        problem = (names(args.problems) or ["hartmann6"])[0]
        rows = generation_growth(problem, sizes, **kwargs)
        print(
            f"seconds of one decision after n completed trials ({problem}; median of 3)"
        )
        print(f"  {'strategy':20s}" + "".join(f"{f'n={n}':>10s}" for n in sizes))
        for label in dict.fromkeys(r["strategy"] for r in rows):
            cells = [r["seconds_median"] for r in rows if r["strategy"] == label]
            print(f"  {label:20s}" + "".join(f"{c:10.3f}" for c in cells))
        return 0

    seeds = args.seeds or (1 if args.smoke else 5)
    trials = args.trials or (8 if args.smoke else 60)
    result = run_bench(
        problems=names(args.problems),
        strategies=names(args.strategies),
        seeds=seeds,
        trials=trials,
        workers=args.workers,
        dask=args.dask,
        out=args.out,
        show_progress=not args.no_progress,
        resume=args.resume,
    )

    def count(n: int, word: str) -> str:
        plural = word[:-1] + "ies" if word.endswith("y") else word + "s"
        return f"{n} {word if n == 1 else plural}"

    print(
        f"ax-bench: {count(len(result.problems), 'problem')} x "
        f"{count(len(result.strategies), 'strategy')} x {count(seeds, 'seed')}, "
        f"{count(trials, 'trial')} each: {count(len(result.jobs), 'job')} in "
        f"{result.seconds:.1f} s"
    )
    print(
        f"final regrets after {trials} trials (mean ± s.e. over seeds); median "
        "seconds of get_next_trials"
    )
    for line in result.table_lines():
        print(line)
    comparison = result.comparison_lines()
    if comparison:
        print("IGP-UCB (practical) against Ax default:")
        for line in comparison:
            print(line)
    print(f"wrote {', '.join(str(p) for p in result.paths)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command. An error a user can act on prints one line on stderr and
    exits 2 (``--debug`` or ``BOTORCH_BANDITS_DEBUG=1``: the traceback instead);
    Ctrl-C stops cleanly, says how to continue, and exits 130."""
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = args.debug or os.environ.get("BOTORCH_BANDITS_DEBUG", "") not in ("", "0")
    if not debug:
        import logging

        logging.disable(logging.INFO)  # Ax announces its storage at INFO on import
    try:
        check_extras(args.command)
        return _dispatch(args, parser)
    except KeyboardInterrupt:
        hint = ""
        if args.command == "demo":
            hint = f"; continue with: botorch-bandits demo --resume --out {args.out}"
        print(f"botorch-bandits: interrupted{hint}", file=sys.stderr)
        return 130
    except Exception as err:
        if debug:
            raise
        text = " ".join(str(err).split()) or type(err).__name__
        print(f"botorch-bandits {args.command}: error: {text}", file=sys.stderr)
        if not isinstance(err, (CommandError, ValueError, OSError, RuntimeError)):
            print("(run with --debug for the traceback)", file=sys.stderr)
        return 2


def _dispatch(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.command == "reproduction-report":
        from botorch_bandits.benchmarks.report import write_report

        try:
            path = write_report(args.csv_dir, args.out)
        except ValueError as err:
            parser.error(str(err))
        print(f"wrote {path} from the CSVs in {args.csv_dir}")
        return 0
    if args.command == "reproduce":
        return _reproduce(args, parser)
    if args.command == "demo":
        return _ax_demo(args)
    if args.command == "ax-bench":
        return _ax_bench(args)
    if args.command == "ax-check":
        from botorch_bandits.benchmarks.ax_checks import run_check

        start = time.perf_counter()
        for line in run_check(
            args.check, args.seeds, args.trials, args.jobs, cpd_c=args.cpd_c
        ):
            print(line)
        print(
            f"{args.check}: {args.seeds} seeds x {args.trials} trials in "
            f"{time.perf_counter() - start:.1f} s"
        )
        return 0
    if args.command == "loop-demo":
        from botorch_bandits.benchmarks.demo import run_demo

        horizon, seeds = (10, 1) if args.smoke else (args.horizon, args.seeds)
        start = time.perf_counter()
        summary = run_demo(
            out_dir=args.out,
            horizon=horizon,
            seeds=seeds,
            kernel=args.kernel,
            show_progress=not args.no_progress,
        )
        elapsed = time.perf_counter() - start
        print(
            f"final cumulative regret after T={horizon} ({seeds} seeds, mean ± s.e.):"
        )
        for name, (mean, se) in summary.items():
            print(f"  {name:8s} {mean:9.3f} ± {se:.3f}")
        print(
            f"wrote {args.out}/regret.csv and {args.out}/regret.png in {elapsed:.1f} s"
        )
    elif args.command == "cpd-detector":
        from botorch_bandits.benchmarks.piecewise import calibrate_detector

        cs = tuple(float(v) for v in args.c.split(","))
        print(
            f"{args.runs} runs per c; 60 uniform samples each; change after 30 in the "
            "changing runs; theta_n = 2.6 n^(-6/7)"
        )
        for rep in calibrate_detector(cs, runs=args.runs):
            print(
                f"  c = {rep.c:6g}: false-positive rate {rep.false_positive_rate:.3f}; "
                f"changes detected {rep.detected}/{rep.runs} (early {rep.early}), mean "
                f"delay {rep.mean_delay:.1f} uniform samples"
            )
    elif args.command == "ts-variance":
        from botorch_bandits.benchmarks.ts_variance import report

        print(
            f"variance ratio of {args.draws} GP-TS draws to v_t^2 sigma^2 at 5 points"
        )
        for kernel, sampler, ratios in report(args.draws, args.features):
            values = " ".join(f"{r:.3f}" for r in ratios.tolist())
            worst = float((ratios - 1).abs().max())
            print(f"  {kernel:9s} {sampler:15s} {values}   max |ratio-1| = {worst:.3f}")
    elif args.command == "batch-tradeoff":
        from botorch_bandits.benchmarks.batch import (
            batch_tradeoff,
            main_problem,
            report,
        )

        problem = main_problem(num_seeds=args.seeds)
        print(
            f"{problem.name}: {args.seeds} seeds, {args.horizon} evaluations, beta = 1 "
            "(the experiments' constant) for every policy"
        )
        result = batch_tradeoff(problem, args.batch_size, args.horizon)
        print("\n".join(report(result)))
    elif args.command == "beta-guide":
        _beta_guide(args)
    elif args.command == "benchmark-engine":
        from botorch_bandits.benchmarks.engine import drift, step_times

        d = drift(args.horizon, args.seeds)
        print(
            f"drift after {args.horizon} updates x {args.seeds} seeds (no rebuild): "
            f"covariance {d['cov_drift']:.2e}, mean {d['mean_drift']:.2e} "
            f"({1e6 * d['seconds_per_update']:.0f} us per batched update)"
        )
        for row in step_times():
            print(
                f"t = {row['t']:5d}: plain BoTorch loop {1e3 * row['plain_s']:9.2f} ms/step, "
                f"engine + IGPUCB {1e3 * row['engine_s']:7.3f} ms/step "
                f"(ratio {row['ratio']:6.0f}x); {row['batch_seeds']} seeds batched "
                f"{1e3 * row['batched_s']:7.4f} ms per seed-step "
                f"(ratio {row['batched_ratio']:6.0f}x)"
            )
    return 0


def _beta_guide(args: argparse.Namespace) -> None:
    from botorch_bandits.benchmarks import fitted_beta as fb

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    rows = fb.fit_table(seeds=args.seeds)
    fb.write_csv(rows, out / "fits.csv")
    print(
        f"BoTorch's default SingleTaskGP on n Sobol points, medians over {args.seeds} "
        f"seeds; multipliers of sigma at t = n + 1, delta = 0.1, standardized scale "
        f"({time.perf_counter() - start:.1f} s)"
    )
    print("\n".join(fb.fit_report(fb.fit_summary(rows))))
    if args.no_loop:
        return
    B_hats = {p: fb.b_hat(rows, p) for p in fb.LOOP_PROBLEMS}
    print(
        f"\nax.Client loops, {args.loop_seeds} seeds x {args.trials} trials; B-hat = "
        f"median at n = {fb.B_HAT_AT}: "
        + ", ".join(f"{p} {b:g}" for p, b in B_hats.items())
    )
    loop = fb.closed_loop(
        B_hats, seeds=args.loop_seeds, trials=args.trials, workers=args.workers
    )
    fb.write_csv(loop, out / "loop.csv")
    print("\n".join(fb.loop_report(loop)))
    print(
        f"wrote {out}/fits.csv and {out}/loop.csv in {time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
