"""The commands that check one piece and print a table: ``loop-demo`` (a plain
BoTorch loop), ``ts-variance``, ``batch-tradeoff``, ``beta-guide``,
``benchmark-engine``, ``cpd-detector``, ``fit-quality``, ``botorch-loop`` and
``ts-where``; the long ones take ``--smoke`` and report their progress on stderr
(:class:`Progress`)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from botorch_bandits.cli.common import Command, Progress, positive_int


def _where(workers: int) -> str:
    return "in this process" if workers == 1 else f"on {workers} processes"


def _run_jobs(
    function: Callable[..., Any],
    specs: Sequence[Mapping[str, Any]],
    workers: int,
    progress: Progress,
) -> list[Any]:
    """``executors.run_specs`` (jobs in completion order), advancing ``progress``."""
    from bandit_experiments.common.executors import pool_map, worker_pool

    progress(0, len(specs))

    def each(job: Any) -> Any:
        progress.update()
        return job

    if workers > 1:
        with worker_pool(workers) as pool:
            return pool_map(pool, function, specs, each)
    return [each(function(**spec)) for spec in specs]


def _smoke(parser: argparse.ArgumentParser, sizes: str) -> None:
    parser.add_argument("--smoke", action="store_true", help=sizes)


def _no_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-progress", action="store_true", help="hide the progress")


def _ts_variance_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--draws", type=positive_int, help="draws (2000; 100 with --smoke)"
    )
    parser.add_argument(
        "--features",
        type=positive_int,
        help="random features (4096; 512 with --smoke)",
    )
    _smoke(parser, "tiny run (seconds): 100 draws, 512 features (noisy ratios)")


def _run_ts_variance(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bandit_experiments.studies.ts_variance import (
        SAMPLERS,
        ts_variance_ratios,
    )

    draws = args.draws or (100 if args.smoke else 2000)
    features = args.features or (512 if args.smoke else 4096)
    print(f"variance ratio of {draws} GP-TS draws to v_t^2 sigma^2 at 5 points")
    for kernel in ("rbf", "matern52"):  # ts_variance.report's rows, each as it ends
        for sampler in SAMPLERS:
            ratios = ts_variance_ratios(kernel, sampler, draws, features)
            values = " ".join(f"{r:.3f}" for r in ratios.tolist())
            worst = float((ratios - 1).abs().max())
            print(
                f"  {kernel:9s} {sampler:15s} {values}   max |ratio-1| = {worst:.3f}",
                flush=True,
            )
    return 0


TS_VARIANCE = Command(
    help="GP-TS sampler check: empirical variance of draws / (v_t^2 sigma^2) at 5 "
    "points, for the exact, our pathwise, and BoTorch's default pathwise sampler.",
    add_arguments=_ts_variance_arguments,
    run=_run_ts_variance,
)


def _batch_tradeoff_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batch-size", type=positive_int, default=5, help="B (5)")
    parser.add_argument(
        "--horizon",
        type=positive_int,
        help="evaluations, a multiple of B (200; 20 with --smoke)",
    )
    parser.add_argument("--seeds", type=positive_int, help="seeds (25; 2 with --smoke)")
    _smoke(parser, "tiny run (seconds): 2 seeds, 20 evaluations")
    _no_progress(parser)


def _run_batch_tradeoff(
    args: argparse.Namespace, parser: argparse.ArgumentParser
) -> int:
    from bandit_experiments.studies.batch import (
        batch_tradeoff,
        main_problem,
        report,
    )

    seeds = args.seeds or (2 if args.smoke else 25)
    horizon = args.horizon or (20 if args.smoke else 200)
    problem = main_problem(num_seeds=seeds)
    print(
        f"{problem.name}: {seeds} seeds, {horizon} evaluations, beta = 1 "
        "(the experiments' constant) for every policy",
        flush=True,
    )
    with Progress(
        "batch-tradeoff",
        f"3 policies x {horizon} evaluations, {seeds} seeds batched",
        "step",
        not args.no_progress,
        total=3 * horizon,
    ) as progress:
        result = batch_tradeoff(problem, args.batch_size, horizon, progress=progress)
    print("\n".join(report(result)))
    return 0


BATCH_TRADEOFF = Command(
    help="Batch BO versus sequential: GP-BUCB and GP-UCB-SDF with batches of B "
    "against sequential GP-UCB on Verma et al.'s GP sample; cumulative regret per "
    "evaluation and per batch round.",
    add_arguments=_batch_tradeoff_arguments,
    run=_run_batch_tradeoff,
)


#: ``beta-guide --smoke``: the fit table's n (30 is where B-hat is read), fits per
#: problem and n, closed-loop seeds and trials (5 Sobol trials, then 1 decided)
BETA_SMOKE = {"sizes": (10, 30), "seeds": 1, "loop_seeds": 1, "trials": 6}


def _beta_guide_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seeds", type=positive_int, help="fits per problem and n (5; 1 with --smoke)"
    )
    parser.add_argument(
        "--loop-seeds",
        type=positive_int,
        help="closed-loop seeds (5; 1 with --smoke)",
    )
    parser.add_argument(
        "--trials", type=positive_int, help="closed-loop trials (50; 6 with --smoke)"
    )
    parser.add_argument("--workers", type=positive_int, default=2, help="processes (2)")
    parser.add_argument("--no-loop", action="store_true", help="only the fit table")
    _smoke(
        parser,
        "tiny run of the same steps: fits "
        "at n = 10 and 30 only (not 100), 1 per problem and n; closed loop of 1 seed "
        "x 6 trials (5 of them Sobol)",
    )
    parser.add_argument("--out", default="runs/beta-guide", help="output folder")
    _no_progress(parser)


def _run_beta_guide(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bandit_experiments.studies import fitted_beta as fb

    smoke = BETA_SMOKE if args.smoke else {}
    seeds = args.seeds or smoke.get("seeds", 5)
    loop_seeds = args.loop_seeds or smoke.get("loop_seeds", 5)
    trials = args.trials or smoke.get("trials", 50)
    sizes = smoke.get("sizes", (10, 30, 100))
    show = not args.no_progress
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    phase = (
        f"fitting {len(fb.FIT_PROBLEMS)} problems x n = "
        f"{', '.join(map(str, sizes))} x {seeds} seed{'s' if seeds > 1 else ''}"
    )
    with Progress("beta-guide", phase, "fit", show) as progress:
        rows = fb.fit_table(sizes=sizes, seeds=seeds, progress=progress)
    fb.write_csv(rows, out / "fits.csv")
    print(
        f"BoTorch's default SingleTaskGP on n Sobol points, medians over {seeds} "
        f"seed{'s' if seeds > 1 else ''}; multipliers of sigma at t = n + 1, "
        f"delta = 0.1, standardized scale ({time.perf_counter() - start:.1f} s)"
    )
    print("\n".join(fb.fit_report(fb.fit_summary(rows))), flush=True)
    if args.no_loop:
        print(f"wrote {out}/fits.csv in {time.perf_counter() - start:.0f} s")
        return 0
    B_hats = {p: fb.b_hat(rows, p) for p in fb.LOOP_PROBLEMS}
    print(
        f"\nax.Client loops, {loop_seeds} seed{'s' if loop_seeds > 1 else ''} x "
        f"{trials} trials; B-hat = median at n = {fb.B_HAT_AT}: "
        + ", ".join(f"{p} {b:g}" for p, b in B_hats.items()),
        flush=True,
    )
    variants = len(fb.loop_variants(1.0))
    phase = (
        f"{len(B_hats) * variants * loop_seeds} ax.Client loops of {trials} trials "
        f"({len(B_hats)} problems x {variants} strategies x {loop_seeds} "
        f"seed{'s' if loop_seeds > 1 else ''}) {_where(args.workers)}"
    )
    with Progress("beta-guide", phase, "loop", show) as progress:
        loop = fb.closed_loop(
            B_hats,
            seeds=loop_seeds,
            trials=trials,
            workers=args.workers,
            progress=progress,
        )
    fb.write_csv(loop, out / "loop.csv")
    print("\n".join(fb.loop_report(loop)))
    print(
        f"wrote {out}/fits.csv and {out}/loop.csv in {time.perf_counter() - start:.0f} s"
    )
    return 0


BETA_GUIDE = Command(
    help="What B, R, delta and gamma come to on a fitted SingleTaskGP (standardized "
    "outcomes): the fitted R, observed gamma, the RKHS norm of the posterior mean "
    "and the multipliers of sigma they imply, for n = 10, 30, 100 points of "
    "Forrester (1-D), Branin, Hartmann6 (also noisy); then the regret of B = 1, "
    "B = B-hat, constant beta and GP-TS through ax.Client. Writes OUT/fits.csv "
    "and OUT/loop.csv.",
    add_arguments=_beta_guide_arguments,
    run=_run_beta_guide,
)


#: ``benchmark-engine``'s rounds t of the per-step times (and with --smoke)
ENGINE_CHECKPOINTS, ENGINE_SMOKE_CHECKPOINTS = (500, 2000), (100, 300)


def _benchmark_engine_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--horizon",
        type=positive_int,
        help="updates of the drift check (30000; 500 with --smoke)",
    )
    parser.add_argument(
        "--seeds", type=positive_int, help="seed batch (25; 5 with --smoke)"
    )
    _smoke(
        parser,
        "tiny run (seconds): drift over 500 updates x 5 seeds, per-step times "
        "at t = 100 and 300 (not 500 and 2000)",
    )
    _no_progress(parser)


def _run_benchmark_engine(
    args: argparse.Namespace, parser: argparse.ArgumentParser
) -> int:
    from bandit_experiments.studies.engine import drift, step_times

    horizon = args.horizon or (500 if args.smoke else 30000)
    seeds = args.seeds or (5 if args.smoke else 25)
    checkpoints = ENGINE_SMOKE_CHECKPOINTS if args.smoke else ENGINE_CHECKPOINTS
    show = not args.no_progress
    phase = f"drift over {horizon} updates x {seeds} seeds"
    with Progress("benchmark-engine", phase, "update", show) as progress:
        d = drift(horizon, seeds, progress=progress)
    print(
        f"drift after {horizon} updates x {seeds} seeds (no rebuild): "
        f"covariance {d['cov_drift']:.2e}, mean {d['mean_drift']:.2e} "
        f"({1e6 * d['seconds_per_update']:.0f} us per batched update)",
        flush=True,
    )
    phase = (
        "per-step times of the plain BoTorch loop and the engine at t = "
        + ", ".join(map(str, checkpoints))
    )
    with Progress("benchmark-engine", phase, "seed-update", show) as progress:
        rows = step_times(checkpoints, progress=progress)
    for row in rows:
        print(
            f"t = {row['t']:5d}: plain BoTorch loop {1e3 * row['plain_s']:9.2f} ms/step, "
            f"engine + IGPUCB {1e3 * row['engine_s']:7.3f} ms/step "
            f"(ratio {row['ratio']:6.0f}x); {row['batch_seeds']} seeds batched "
            f"{1e3 * row['batched_s']:7.4f} ms per seed-step "
            f"(ratio {row['batched_ratio']:6.0f}x)"
        )
    return 0


BENCHMARK_ENGINE = Command(
    help="FiniteArmGP: drift after many updates, and per-step time versus the plain "
    "BoTorch loop (SingleTaskGP rebuild + UCB on 100 arms), side by side.",
    add_arguments=_benchmark_engine_arguments,
    run=_run_benchmark_engine,
)


def _cpd_detector_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runs", type=positive_int, help="runs per c (64; 8 with --smoke)"
    )
    parser.add_argument(
        "--c", default="5,10,20,50", help="comma-separated constants c (5,10,20,50)"
    )
    _smoke(parser, "tiny run (seconds): 8 runs per c")


def _run_cpd_detector(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bandit_experiments.reproduction.detector import calibrate_detector

    cs = tuple(float(v) for v in args.c.split(","))
    runs = args.runs or (8 if args.smoke else 64)
    print(
        f"{runs} runs per c; 60 uniform samples each; change after 30 in the "
        "changing runs; theta_n = 2.6 n^(-6/7)",
        flush=True,
    )
    for rep in calibrate_detector(cs, runs=runs):
        print(
            f"  c = {rep.c:6g}: false-positive rate {rep.false_positive_rate:.3f}; "
            f"changes detected {rep.detected}/{rep.runs} (early {rep.early}), mean "
            f"delay {rep.mean_delay:.1f} uniform samples"
        )
    return 0


CPD_DETECTOR = Command(
    help="The change-point detector on uniformly sampled GP data (Avanesov §4 "
    "setting): false-positive rate and detection delay for candidate constants c.",
    add_arguments=_cpd_detector_arguments,
    run=_run_cpd_detector,
)


def _fit_quality_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--draws", type=positive_int, default=8, help="draws (8)")
    parser.add_argument(
        "--points",
        type=positive_int,
        default=200,
        help="observations per draw, at least 2 (200)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws (0)")
    parser.add_argument(
        "--starts", type=positive_int, default=10, help="starts of the new fit (10)"
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress lines on stderr"
    )


def _run_fit_quality(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bandit_experiments.studies.fit_quality import (
        fit_quality,
        fit_quality_lines,
    )

    if args.points < 2:
        parser.error(f"--points must be at least 2, got {args.points}")
    with Progress(
        "fit-quality",
        f"one-start and {args.starts}-start fits of {args.draws} draws",
        "fit",
        show=not args.no_progress,
    ) as progress:
        result = fit_quality(
            args.draws, args.points, args.seed, args.starts, progress=progress
        )
    print("\n".join(fit_quality_lines(result)))
    return 0


FIT_QUALITY = Command(
    help="The simulators' hyperparameter refit, one start against the multi-start "
    "fit, on Verma et al.'s GP draws (lengthscale 0.02): fitted lengthscale and "
    "log marginal likelihood per point.",
    add_arguments=_fit_quality_arguments,
    run=_run_fit_quality,
)


#: the botorch-loop command's default problems: the validation half's float problems
LOOP_PROBLEMS = "six-hump-camel,hartmann3,styblinski-tang-8,ackley-10"


def _botorch_loop_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--problems",
        default=LOOP_PROBLEMS,
        help=f"comma-separated float problems of ax-bench ({LOOP_PROBLEMS})",
    )
    parser.add_argument(
        "--policies", help="comma-separated policies (default: all five)"
    )
    parser.add_argument("--seeds", type=positive_int, help="seeds (5; 1 with --smoke)")
    parser.add_argument(
        "--trials",
        type=positive_int,
        help="trials per run, the 5 Sobol points included (40; 7 with --smoke)",
    )
    parser.add_argument(
        "--workers", type=positive_int, default=1, help="worker processes (1)"
    )
    _smoke(
        parser, "tiny run: 1 seed x 7 trials (2 decided) of every problem and policy"
    )
    _no_progress(parser)


def _run_botorch_loop(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bandit_experiments.studies.botorch_loop import (
        POLICIES,
        run_loop,
        summarize_loops,
    )

    seeds = args.seeds or (1 if args.smoke else 5)
    trials = args.trials or (7 if args.smoke else 40)
    problems = [p.strip() for p in args.problems.split(",")]
    policies = (
        [p.strip() for p in args.policies.split(",")] if args.policies else POLICIES
    )
    specs = [
        {"problem": p, "policy": q, "seed": s, "trials": trials}
        for p in problems
        for q in policies
        for s in range(seeds)
    ]
    start = time.perf_counter()
    phase = f"{len(specs)} runs of {trials} trials {_where(args.workers)}"
    with Progress("botorch-loop", phase, "run", not args.no_progress) as progress:
        jobs = _run_jobs(run_loop, specs, args.workers, progress)
    spread = "1 seed: no s.e." if seeds == 1 else f"mean ± s.e. over {seeds} seeds"
    print(
        f"botorch-loop: {len(jobs)} runs of {trials} trials in "
        f"{time.perf_counter() - start:.0f} s; final regrets ({spread}), repeated "
        "points, share of coordinates on a bound"
    )
    for r in summarize_loops(jobs):
        cum, sr = r["cumulative_regret_se"], r["simple_regret_se"]
        print(
            f"  {r['problem']:18s} {r['policy']:32s} cumulative "
            f"{r['cumulative_regret_mean']:10.4g}"
            + (f" ± {cum:8.3g}" if seeds > 1 else "")
            + f"  simple {r['simple_regret_mean']:9.4g}"
            + (f" ± {sr:8.3g}" if seeds > 1 else "")
            + f"  repeats {r['repeats_mean']:4.1f}  on bound {r['on_bound_mean']:4.0%}"
        )
    return 0


BOTORCH_LOOP = Command(
    help="A plain BoTorch loop (fitted SingleTaskGP, optimize_acqf with 20 restarts "
    "and 1024 raw samples) on ax-bench's float problems: IGP-UCB and GP-TS from "
    "practical_acquisition against UpperConfidenceBound(beta=2), LogEI and "
    "PathwiseThompsonSampling.",
    add_arguments=_botorch_loop_arguments,
    run=_run_botorch_loop,
)


def _ts_where_arguments(parser: argparse.ArgumentParser) -> None:
    from_default = "branin,hartmann6,hartmann6-in-20d"
    parser.add_argument(
        "--problems",
        default=from_default,
        help=f"comma-separated float problems of ax-bench ({from_default}: the "
        "development half's of 2, 6 and 20 dimensions)",
    )
    parser.add_argument(
        "--batches", default="1,5,10", help="comma-separated batch sizes q (1,5,10)"
    )
    parser.add_argument(
        "--evaluations",
        type=positive_int,
        help="evaluations per run, the 5 Sobol points included (60; 8 with --smoke)",
    )
    parser.add_argument(
        "--horizons",
        help="report the regrets after these many evaluations (20,40,60; 6,8 "
        "with --smoke)",
    )
    parser.add_argument("--seeds", type=positive_int, help="seeds (3; 1 with --smoke)")
    parser.add_argument(
        "--workers", type=positive_int, default=1, help="worker processes (1)"
    )
    _smoke(
        parser,
        "small run: 1 seed x 8 evaluations (3 decided; regrets after 6 and 8) of "
        "every problem, batch size and algorithm",
    )
    parser.add_argument(
        "--out",
        default="runs/ts-where",
        help="output folder; finished jobs are kept in OUT/jobs and reused "
        "(runs/ts-where)",
    )
    _no_progress(parser)


def _run_ts_where(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bandit_experiments.studies.botorch_loop import float_problems
    from bandit_experiments.studies.ts_where import (
        ALGORITHMS,
        run_kept,
        summarize,
    )

    evaluations = args.evaluations or (8 if args.smoke else 60)
    seeds = args.seeds or (1 if args.smoke else 3)
    given = args.horizons or ("6,8" if args.smoke else "20,40,60")
    problems = [p.strip() for p in args.problems.split(",")]
    unknown = [p for p in problems if p not in float_problems()]
    if unknown:
        parser.error(
            f"--problems: {unknown} are not float problems of ax-bench "
            f"(allowed: {', '.join(float_problems())})"
        )
    try:
        batches = [int(b) for b in args.batches.split(",")]
        horizons = [int(n) for n in given.split(",")]
    except ValueError:
        parser.error(
            f"--batches / --horizons: integers separated by commas, got "
            f"{args.batches!r} / {given!r}"
        )
    if min(batches) < 1 or min(horizons) < 1 or max(horizons) > evaluations:
        parser.error(
            f"--batches must be >= 1 and --horizons in 1..--evaluations "
            f"({evaluations}), got {args.batches!r} / {given!r}"
        )
    specs = [
        {
            "out": args.out,
            "problem": p,
            "algorithm": a,
            "batch": q,
            "seed": s,
            "evaluations": evaluations,
        }
        for p in problems
        for q in batches
        for s in range(seeds)
        for a in ALGORITHMS
    ]
    start = time.perf_counter()
    phase = f"{len(specs)} runs of {evaluations} evaluations {_where(args.workers)}"
    with Progress("ts-where", phase, "run", not args.no_progress) as progress:
        jobs = _run_jobs(run_kept, specs, args.workers, progress)
    spread = "1 seed: no s.e." if seeds == 1 else f"mean ± s.e. over {seeds} seeds"
    print(
        f"ts-where: {len(jobs)} runs of {evaluations} evaluations in "
        f"{time.perf_counter() - start:.0f} s (finished jobs reused from "
        f"{args.out}/jobs); practical IGP-UCB and GP-TS through the decision core, "
        f"q decisions per round; regrets ({spread}) after n evaluations"
    )
    head = "| problem (d) | q | algorithm | rounds | " + " | ".join(
        f"cumulative @{n} | simple @{n}" for n in horizons
    )
    print(head + " |")
    print("|" + " --- |" * (4 + 2 * len(horizons)))
    for r in summarize(jobs, horizons):
        cells = []
        for n in horizons:
            for key in ("cumulative_regret", "simple_regret"):
                mean, se = r[f"{key}@{n}"]
                cells.append(f"{mean:.4g}" + (f" ± {se:.2g}" if seeds > 1 else ""))
        print(
            f"| {r['problem']} ({r['dim']}) | {r['batch']} | {r['algorithm']} | "
            f"{r['rounds']} | " + " | ".join(cells) + " |"
        )
    return 0


TS_WHERE = Command(
    help="Where practical GP-TS is worth using: GP-TS against IGP-UCB through the "
    "decision core on float problems of 2, 6 and 20 dimensions, batches of q "
    "decisions per round, regrets after several horizons (jobs kept, resumable).",
    add_arguments=_ts_where_arguments,
    run=_run_ts_where,
)
