"""The commands that check one piece and print a table: ``loop-demo`` (a plain
BoTorch loop), ``ts-variance``, ``batch-tradeoff``, ``beta-guide``,
``benchmark-engine``, ``cpd-detector``, ``fit-quality``, ``botorch-loop`` and
``ts-where``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from botorch_bandits.cli.common import Command, positive_int


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


def _ts_variance_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--draws", type=positive_int, default=2000, help="draws (2000)")
    parser.add_argument(
        "--features", type=positive_int, default=4096, help="random features (4096)"
    )


def _run_ts_variance(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from botorch_bandits.benchmarks.ts_variance import report

    print(f"variance ratio of {args.draws} GP-TS draws to v_t^2 sigma^2 at 5 points")
    for kernel, sampler, ratios in report(args.draws, args.features):
        values = " ".join(f"{r:.3f}" for r in ratios.tolist())
        worst = float((ratios - 1).abs().max())
        print(f"  {kernel:9s} {sampler:15s} {values}   max |ratio-1| = {worst:.3f}")
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
        "--horizon", type=positive_int, default=200, help="evaluations (200)"
    )
    parser.add_argument("--seeds", type=positive_int, default=25, help="seeds (25)")


def _run_batch_tradeoff(
    args: argparse.Namespace, parser: argparse.ArgumentParser
) -> int:
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
    return 0


BATCH_TRADEOFF = Command(
    help="Batch BO versus sequential: GP-BUCB and GP-UCB-SDF with batches of B "
    "against sequential GP-UCB on Verma et al.'s GP sample; cumulative regret per "
    "evaluation and per batch round.",
    add_arguments=_batch_tradeoff_arguments,
    run=_run_batch_tradeoff,
)


def _beta_guide_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seeds", type=positive_int, default=5, help="fits per problem and n (5)"
    )
    parser.add_argument(
        "--loop-seeds", type=positive_int, default=5, help="closed-loop seeds (5)"
    )
    parser.add_argument(
        "--trials", type=positive_int, default=50, help="closed-loop trials (50)"
    )
    parser.add_argument("--workers", type=positive_int, default=2, help="processes (2)")
    parser.add_argument(
        "--no-loop", action="store_true", help="only the fit table (seconds)"
    )
    parser.add_argument("--out", default="runs/beta-guide", help="output folder")


def _run_beta_guide(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
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
        return 0
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


def _benchmark_engine_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--horizon", type=positive_int, default=30000, help="updates (30000)"
    )
    parser.add_argument(
        "--seeds", type=positive_int, default=25, help="seed batch (25)"
    )


def _run_benchmark_engine(
    args: argparse.Namespace, parser: argparse.ArgumentParser
) -> int:
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


BENCHMARK_ENGINE = Command(
    help="FiniteArmGP: drift after many updates, and per-step time versus the plain "
    "BoTorch loop (SingleTaskGP rebuild + UCB on 100 arms), side by side.",
    add_arguments=_benchmark_engine_arguments,
    run=_run_benchmark_engine,
)


def _cpd_detector_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=positive_int, default=64, help="runs per c (64)")
    parser.add_argument(
        "--c", default="5,10,20,50", help="comma-separated constants c (5,10,20,50)"
    )


def _run_cpd_detector(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
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


def _run_fit_quality(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from botorch_bandits.benchmarks.fit_quality import fit_quality, fit_quality_lines

    if args.points < 2:
        parser.error(f"--points must be at least 2, got {args.points}")
    result = fit_quality(args.draws, args.points, args.seed, args.starts)
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
    parser.add_argument("--seeds", type=positive_int, default=5, help="seeds (5)")
    parser.add_argument(
        "--trials", type=positive_int, default=40, help="trials per run (40)"
    )
    parser.add_argument(
        "--workers", type=positive_int, default=1, help="worker processes (1)"
    )


def _run_botorch_loop(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from botorch_bandits.benchmarks.botorch_loop import (
        POLICIES,
        run_loop,
        summarize_loops,
    )
    from botorch_bandits.benchmarks.executors import run_specs

    problems = [p.strip() for p in args.problems.split(",")]
    policies = (
        [p.strip() for p in args.policies.split(",")] if args.policies else POLICIES
    )
    specs = [
        {"problem": p, "policy": q, "seed": s, "trials": args.trials}
        for p in problems
        for q in policies
        for s in range(args.seeds)
    ]
    start = time.perf_counter()
    jobs = run_specs(run_loop, specs, args.workers)
    print(
        f"botorch-loop: {len(jobs)} runs of {args.trials} trials in "
        f"{time.perf_counter() - start:.0f} s; final regrets (mean ± s.e. over "
        f"{args.seeds} seeds), repeated points, share of coordinates on a bound"
    )
    for r in summarize_loops(jobs):
        print(
            f"  {r['problem']:18s} {r['policy']:32s} cumulative "
            f"{r['cumulative_regret_mean']:10.4g} ± {r['cumulative_regret_se']:8.3g}"
            f"  simple {r['simple_regret_mean']:9.4g} ± {r['simple_regret_se']:8.3g}"
            f"  repeats {r['repeats_mean']:4.1f}  on bound {r['on_bound_mean']:4.0%}"
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
        default=60,
        help="evaluations per run, the 5 Sobol points included (60)",
    )
    parser.add_argument(
        "--horizons",
        default="20,40,60",
        help="report the regrets after these many evaluations (20,40,60)",
    )
    parser.add_argument("--seeds", type=positive_int, default=3, help="seeds (3)")
    parser.add_argument(
        "--workers", type=positive_int, default=1, help="worker processes (1)"
    )
    parser.add_argument(
        "--out",
        default="runs/ts-where",
        help="output folder; finished jobs are kept in OUT/jobs and reused "
        "(runs/ts-where)",
    )


def _run_ts_where(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from botorch_bandits.benchmarks.botorch_loop import float_problems
    from botorch_bandits.benchmarks.executors import run_specs
    from botorch_bandits.benchmarks.ts_where import ALGORITHMS, run_kept, summarize

    problems = [p.strip() for p in args.problems.split(",")]
    unknown = [p for p in problems if p not in float_problems()]
    if unknown:
        parser.error(
            f"--problems: {unknown} are not float problems of ax-bench "
            f"(allowed: {', '.join(float_problems())})"
        )
    try:
        batches = [int(b) for b in args.batches.split(",")]
        horizons = [int(n) for n in args.horizons.split(",")]
    except ValueError:
        parser.error(
            f"--batches / --horizons: integers separated by commas, got "
            f"{args.batches!r} / {args.horizons!r}"
        )
    if min(batches) < 1 or min(horizons) < 1 or max(horizons) > args.evaluations:
        parser.error(
            f"--batches must be >= 1 and --horizons in 1..--evaluations "
            f"({args.evaluations}), got {args.batches!r} / {args.horizons!r}"
        )
    specs = [
        {
            "out": args.out,
            "problem": p,
            "algorithm": a,
            "batch": q,
            "seed": s,
            "evaluations": args.evaluations,
        }
        for p in problems
        for q in batches
        for s in range(args.seeds)
        for a in ALGORITHMS
    ]
    start = time.perf_counter()
    jobs = run_specs(run_kept, specs, args.workers)
    print(
        f"ts-where: {len(jobs)} runs of {args.evaluations} evaluations in "
        f"{time.perf_counter() - start:.0f} s (finished jobs reused from "
        f"{args.out}/jobs); practical IGP-UCB and GP-TS through the decision core, "
        f"q decisions per round; regrets (mean ± s.e. over {args.seeds} seeds) after "
        f"n evaluations"
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
                cells.append(f"{mean:.4g} ± {se:.2g}")
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
