"""The library's own commands: ``demo`` (the main job: an asynchronous, resumable Ax
experiment with the bandit strategy against Ax's default strategy, regret plots) and
``loop-demo`` (IGP-UCB, GP-TS and GP-UCB in a plain BoTorch loop); each imports torch,
BoTorch or Ax only when it runs. The research commands are in the repository's
``bandit_experiments`` folder (``python -m bandit_experiments``)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from botorch_bandits.cli.common import Command, CommandError, positive_int


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trials", type=positive_int, help="trials per strategy (30; 8 with --smoke)"
    )
    parser.add_argument(
        "--parallelism", type=positive_int, default=3, help="trials in flight (3)"
    )
    parser.add_argument(
        "--seeds",
        type=positive_int,
        help="seeds, each its own RKHS function, noise and schedule (5; 2 with --smoke)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the first seed (0)")
    parser.add_argument("--out", default="runs/demo", help="output folder (runs/demo)")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the run stored in OUT/demo.db (without it a new run replaces it)",
    )
    parser.add_argument(
        "--bandit-only",
        action="store_true",
        help="run only the bandit strategy (no Ax-default comparison)",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="tiny run: 8 trials, 2 seeds"
    )
    parser.add_argument(
        "--mode",
        choices=("theory", "practical"),
        default="practical",
        help="the bandit's mode: 'practical' (default: fitted GP, standardized "
        "outcomes, told nothing about f, like Ax's default) or 'theory' (told the "
        "function's kernel, B and R: not like with like against Ax's default)",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar"
    )


def _run_demo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from botorch_bandits.demo.ax_demo import run_demo
    from botorch_bandits.demo.ax_demo_report import summary_lines

    for flag, value in (("--trials", args.trials), ("--seeds", args.seeds)):
        if args.smoke and value is not None:
            raise CommandError(
                f"--smoke runs 8 trials on 2 seeds and cannot be combined with "
                f"{flag} {value}: give one of them."
            )
    trials = 8 if args.smoke else (args.trials or 30)
    seeds = 2 if args.smoke else (args.seeds or 5)
    start = time.perf_counter()
    result = run_demo(
        out_dir=args.out,
        trials=trials,
        parallelism=args.parallelism,
        seed=args.seed,
        seeds=seeds,
        resume=args.resume,
        show_progress=not args.no_progress,
        strategies=("bandit",) if args.bandit_only else ("bandit", "ax-default"),
        mode=args.mode,
    )
    for line in summary_lines(result):
        print(line)
    out = Path(args.out)
    written = ", ".join(
        str(out / f) for f in ("demo.db", "regret.csv", "regret.png", "cost.csv")
    )
    print(
        f"wrote {written} and {out / 'cost.png'} (seconds per trial) "
        f"in {time.perf_counter() - start:.1f} s"
    )
    return 0


def _demo_resume_hint(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    """How to continue an interrupted ``demo``: its own options, which a resume must
    repeat."""
    options = ""
    for dest in ("trials", "seeds", "seed", "parallelism", "mode", "smoke"):
        value = getattr(args, dest)
        if value != parser.get_default(dest):
            flag = "--" + dest
            options += f" {flag}" if value is True else f" {flag} {value}"
    options += " --bandit-only" if args.bandit_only else ""
    return f"; continue with: botorch-bandits demo --resume{options} --out {args.out}"


DEMO = Command(
    help="The main job: Ax experiments with the IGP-UCB bandit strategy (practical "
    "mode: told nothing about f) against Ax's default strategy on 5 seeds' RKHS "
    "functions, 3 trials in flight on a process pool, stored in SQLite "
    "(OUT/demo.db); writes OUT/regret.png (mean ± s.e. over seeds), "
    "OUT/regret.csv and OUT/cost.png / cost.csv (seconds per trial). --resume "
    "continues a killed run.",
    add_arguments=_demo_arguments,
    run=_run_demo,
    needs=(
        ("ax", "ax"),
        ("sqlalchemy", "ax"),
        ("matplotlib", "plot"),
        ("tqdm", "plot"),
    ),
    resume_hint=_demo_resume_hint,
)


def _loop_demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--horizon", type=positive_int, default=100, help="steps T (100)"
    )
    parser.add_argument("--seeds", type=positive_int, default=5, help="repetitions (5)")
    parser.add_argument(
        "--kernel", choices=["rbf", "matern52"], default="rbf", help="kernel (rbf)"
    )
    parser.add_argument(
        "--out", default="runs/loop-demo", help="output folder (runs/loop-demo)"
    )
    parser.add_argument("--smoke", action="store_true", help="tiny run: T=10, 1 seed")
    parser.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar"
    )


def _run_loop_demo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from botorch_bandits.demo.loop_demo import run_demo

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
    print(f"final cumulative regret after T={horizon} ({seeds} seeds, mean ± s.e.):")
    for name, (mean, se) in summary.items():
        print(f"  {name:8s} {mean:9.3f} ± {se:.3f}")
    print(f"wrote {args.out}/regret.csv and {args.out}/regret.png in {elapsed:.1f} s")
    return 0


LOOP_DEMO = Command(
    help="IGP-UCB vs GP-TS vs GP-UCB on an RKHS function (a plain BoTorch loop); "
    "writes a cumulative-regret plot (PNG) and CSV.",
    add_arguments=_loop_demo_arguments,
    run=_run_loop_demo,
    needs=(("matplotlib", "plot"), ("tqdm", "plot")),
)
