"""The reproduction commands: ``reproduce`` (a paper's experiment on the finite-arm
engine, or every one of them, and the summary it prints) and
``reproduction-report`` (REPRODUCTION.md from their CSVs)."""

from __future__ import annotations

import argparse
import difflib
import math
import textwrap
from typing import Any

from botorch_bandits.cli.common import Command, CommandError, positive_int


def record_steps(text: str) -> str | int:
    """An argument type: ``'log'``, ``'all'`` or an integer K >= 1 (``--record``)."""
    if text in ("all", "log"):
        return text
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise argparse.ArgumentTypeError(
        f"must be 'log', 'all' or an integer K >= 1, got {text!r}"
    )


def cpd_constant(text: str) -> float | str:
    """An argument type: a number > 0, ``'suggested'`` or ``'calibrated'``
    (``--cpd-regularization``)."""
    if text in ("suggested", "calibrated"):
        return text
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(
            f"must be a number > 0, 'suggested' or 'calibrated', got {text!r}"
        )
    return value


#: ``reproduce``'s experiments and their titles, as in
#: ``reproduction.experiments.EXPERIMENTS`` (a test keeps them equal):
#: ``--help`` and the error for an unknown name use them without importing torch
EXPERIMENT_TITLES: dict[str, str] = {
    "avanesov-fig1": "GP-UCB-CPD, K = 3 pieces, T = 900..2400 (Avanesov, Fig. 1)",
    "avanesov-fig1-log10": "GP-UCB-CPD, K = 3 pieces, T = 900..2400 (Avanesov, Fig. 1; log10 reading)",
    "avanesov-fig2": "GP-UCB-CPD, T = 2700, K = 3..9 pieces (Avanesov, Fig. 2)",
    "avanesov-fig2-log10": "GP-UCB-CPD, T = 2700, K = 3..9 pieces (Avanesov, Fig. 2; log10 reading)",
    "avanesov-fig3": "T = 1200, K = 4: CPD vs Oracle vs NO-Detector vs GP-UCB (Avanesov, Fig. 3)",
    "avanesov-fig3-log10": "T = 1200, K = 4: CPD vs Oracle vs NO-Detector vs GP-UCB (Avanesov, Fig. 3; log10 reading)",
    "chowdhury2017-fig1": "RKHS functions (Chowdhury & Gopalan 2017, Fig. 1)",
    "chowdhury2017-fig2": "GP samples (Chowdhury & Gopalan 2017, Fig. 2)",
    "chowdhury2017-fig3": "Rosenbrock and Hartmann3 (Chowdhury & Gopalan 2017, Fig. 3)",
    "shi2022-fig1": "E.1, exact g: Alg. 2 with epoch lengths S = 5..70, T = 350 (Shi & Eryilmaz 2022, Fig. 1)",
    "shi2022-fig2": "E.1, noiseless g: Alg. 2 (Shi & Eryilmaz 2022, Figs. 2-3)",
    "shi2022-fig3": "E.1, noiseless g: Alg. 2 (Shi & Eryilmaz 2022, Figs. 2-3)",
    "shi2022-fig4": "E.1, noisy g: Alg. 3, mu = 0.5 (Shi & Eryilmaz 2022, Figs. 4-5)",
    "shi2022-fig5": "E.1, noisy g: Alg. 3, mu = 0.5 (Shi & Eryilmaz 2022, Figs. 4-5)",
    "shi2022-fig6": "E.2 data-rate allocation, noiseless g: Alg. 2 (Shi & Eryilmaz 2022, Figs. 6-7)",
    "shi2022-fig7": "E.2 data-rate allocation, noiseless g: Alg. 2 (Shi & Eryilmaz 2022, Figs. 6-7)",
    "shi2022-fig8": "E.2 data-rate allocation, noisy g: Alg. 3 (Shi & Eryilmaz 2022, Figs. 8-9)",
    "shi2022-fig9": "E.2 data-rate allocation, noisy g: Alg. 3 (Shi & Eryilmaz 2022, Figs. 8-9)",
    "srinivas2010-fig5a": "GP samples, SE kernel (Srinivas et al. 2010, Fig. 5a)",
    "srinivas2010-fig5a-sv0.5": "GP samples, SE kernel of variance 0.5 (Srinivas et al. 2010, Fig. 5a)",
    "verma2022-fig1a": "GP-UCB-SDF under Poisson(mu) delays, m = 2 mu (Verma et al. 2022, Fig. 1a)",
    "verma2022-fig1b": "GP-UCB-SDF, Poisson(10) delays, m = 1..40 (Verma et al. 2022, Fig. 1b)",
    "verma2022-fig1c": "Poisson(10) delays, m = 20: UCB family (Verma et al. 2022, Fig. 1c)",
    "verma2022-fig1d": "Fixed delay 10, m = 20: UCB family (Verma et al. 2022, Fig. 1d)",
    "verma2022-fig5": "TS family, Poisson(10) and fixed-10 delays, m = 20 (Verma et al. 2022, Fig. 5)",
    "verma2022-lr": "Logistic regression on breast cancer, Poisson(10) and fixed-10 delays, m = 20 (Verma et al. 2022, Fig. 3)",
    "verma2022-svm": "RBF SVM on breast cancer, Poisson(10) and fixed-10 delays, m = 20 (Verma et al. 2022, Fig. 2a-d)",
    "verma2022-fig1a-known": "GP-UCB-SDF under Poisson(mu) delays, m = 2 mu (Verma et al. 2022, Fig. 1a; fixed kernel, no refits)",
    "verma2022-fig1b-known": "GP-UCB-SDF, Poisson(10) delays, m = 1..40 (Verma et al. 2022, Fig. 1b; fixed kernel, no refits)",
    "verma2022-fig1c-known": "Poisson(10) delays, m = 20: UCB family (Verma et al. 2022, Fig. 1c; fixed kernel, no refits)",
    "verma2022-fig1d-known": "Fixed delay 10, m = 20: UCB family (Verma et al. 2022, Fig. 1d; fixed kernel, no refits)",
    "verma2022-fig5-known": "TS family, Poisson(10) and fixed-10 delays, m = 20 (Verma et al. 2022, Fig. 5; fixed kernel, no refits)",
    "verma2022-lr-known": "Logistic regression on breast cancer, Poisson(10) and fixed-10 delays, m = 20 (Verma et al. 2022, Fig. 3; fixed kernel, no refits)",
    "verma2022-svm-known": "RBF SVM on breast cancer, Poisson(10) and fixed-10 delays, m = 20 (Verma et al. 2022, Fig. 2a-d; fixed kernel, no refits)",
    "verma2022-fig1c-refit": "Poisson(10) delays, m = 20: UCB family (Verma et al. 2022, Fig. 1c)",
}


def _experiments_epilog() -> str:
    width = max(map(len, EXPERIMENT_TITLES)) + 2
    lines = ["experiments (`--list`: the names alone):"]
    for name, title in {**EXPERIMENT_TITLES, "all": "every one above, in turn"}.items():
        lines += textwrap.wrap(
            title,
            100,
            initial_indent=f"  {name:{width}s}",
            subsequent_indent=" " * (width + 2),
        )
    return "\n".join(lines)


def _check_experiment(name: str) -> None:
    """One line naming an unknown experiment, its nearest names and every name."""
    if name in EXPERIMENT_TITLES:
        return
    near = sorted(difflib.get_close_matches(name, EXPERIMENT_TITLES, n=3))
    hint = ", ".join(near[:-1]) + " or " * (len(near) > 1) + "".join(near[-1:])
    hint = f" (did you mean {hint}?)" if near else ""
    raise CommandError(
        f"unknown experiment {name!r}{hint}; the experiments are: "
        + ", ".join(EXPERIMENT_TITLES)
        + " (or 'all'; `python -m bandit_experiments reproduce --help` gives their titles)"
    )


def _reproduce_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # the list below
    parser.epilog = _experiments_epilog()
    parser.add_argument(
        "experiment",
        nargs="?",
        help="experiment name (listed below), or 'all': every figure of the five "
        "papers under every reading, one after the other",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="with 'all': skip the experiments whose CSVs are already in OUT",
    )
    parser.add_argument(
        "--list", action="store_true", help="print the experiment names, one per line"
    )
    parser.add_argument("--seeds", type=positive_int, help="seeds (the paper's count)")
    parser.add_argument("--horizon", type=positive_int, help="steps T (the paper's T)")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny run (T=30, 2 seeds unless given)"
    )
    parser.add_argument(
        "--out", default="runs/reproduce", help="output folder (runs/reproduce)"
    )
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the jobs on a Dask cluster: 'local' for a LocalCluster on "
        "127.0.0.1 (TLS with the run's own credentials, no dashboard), or the "
        "address of a scheduler on this machine (another host needs --dask-remote). "
        "A Dask scheduler runs the code its clients send and this process unpickles "
        "its replies: use only a cluster you trust",
    )
    parser.add_argument(
        "--dask-remote",
        action="store_true",
        help="allow --dask ADDRESS on another host (you trust it and the network)",
    )
    parser.add_argument(
        "--workers", type=positive_int, help="local worker processes (CPU count)"
    )
    parser.add_argument(
        "--algorithms", help="comma-separated algorithms instead of the paper's"
    )
    parser.add_argument("--seed", type=int, default=0, help="base seed (0)")
    parser.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar"
    )
    parser.add_argument(
        "--cpd-regularization",
        type=cpd_constant,
        help="change-point detector of the avanesov-* experiments: 'suggested' (the "
        "default: c by cross-validation on uniform samples and theta_n = C n^(-6/7) "
        "with C from the statistic without a change, as Avanesov suggests; table in "
        "OUT/avanesov-tuning-<measure>-m<points>.csv), 'calibrated' (c chosen inside "
        "GP-UCB-CPD for the reading, C = 2.6; table in "
        "OUT/avanesov-calibration-<reading>.csv), or a number c (C = 2.6)",
    )
    parser.add_argument(
        "--record",
        type=record_steps,
        default="log",
        help="steps the CSV keeps: 'log' (default: every step up to 500, then 500 "
        "log-spaced steps; the last step and the report's checkpoints always), "
        "'all', or K (every K-th step)",
    )
    parser.add_argument(
        "--device",
        help="torch device of the finite-arm experiments (e.g. cuda): every seed of "
        "a job at once on it, the jobs one after the other",
    )


def _reproduce_all(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bandit_experiments.reproduction.runner import reproduce_all

    for flag in (
        "seeds",
        "horizon",
        "dask",
        "algorithms",
        "cpd_regularization",
        "device",
    ):
        if getattr(args, flag) is not None:
            flag = flag.replace("_", "-")
            raise CommandError(
                f"'all' runs every experiment at its own sizes; drop --{flag}"
            )
    if args.seed != 0:
        raise CommandError("'all' runs with the base seed 0; drop --seed")

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


def _run_reproduce(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.list:
        for name in EXPERIMENT_TITLES:
            print(name)
        return 0
    if args.experiment is None:
        raise CommandError(
            "reproduce needs an experiment name, or 'all' (`python -m bandit_experiments reproduce "
            "--help` lists them)"
        )
    if args.experiment == "all":
        return _reproduce_all(args, parser)
    if args.resume:
        raise CommandError("--resume goes with 'all'")
    _check_experiment(args.experiment)
    from bandit_experiments.reproduction.output import written_files
    from bandit_experiments.reproduction.runner import reproduce

    result = reproduce(
        args.experiment,
        seeds=args.seeds,
        horizon=args.horizon,
        smoke=args.smoke,
        out=args.out,
        dask=args.dask,
        dask_remote=args.dask_remote,
        workers=args.workers,
        algorithms=args.algorithms.split(",") if args.algorithms else None,
        seed=args.seed,
        show_progress=not args.no_progress,
        cpd_regularization=args.cpd_regularization,
        record=args.record,
        device=args.device,
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
    _print_delayed(result)
    _print_constrained(result)
    _print_restarts(result)
    law = result.power_law()
    if law is not None:
        print(f"fitted R_T ~ {law}".replace(" x^", f" {result.experiment.fit}^"))
        per_run = result.exponent_per_run()
        if per_run is not None:
            print(f"exponent fitted on individual runs (log-log), 95% CI: {per_run}")
    for a, b, d in result.paired_differences():
        print(f"paired R_T difference {a} - {b}: {d} (mean ± s.e. over runs)")
    paths = [str(p) for p in written_files(result, args.out)]
    print(f"wrote {', '.join(paths[:-1])} and {paths[-1]}")
    return 0


def _print_delayed(result: Any) -> None:
    """The delayed-feedback jobs' simple regrets (Verma et al.), if any."""
    from bandit_experiments.reproduction.runner import problem_label

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


def _print_constrained(result: Any) -> None:
    """The constrained jobs' average regret and violation (Shi & Eryilmaz), if any."""
    from bandit_experiments.reproduction.runner import problem_label

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


def _print_restarts(result: Any) -> None:
    """The detector's calibration and the restarts of the piecewise jobs, if any."""
    from bandit_experiments.reproduction.runner import problem_label

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
    tuning = getattr(result, "tuning", None)
    if tuning is not None:
        print(
            f"detector tuned as Avanesov suggests: c = {tuning.c:g} (leave-one-out "
            f"CV on {tuning.samples} uniform samples of {tuning.draws} held-out "
            f"draws), theta_n = {tuning.C:.4g} n^(-6/7) (C: the {1 - tuning.share:g} "
            "quantile of the draws' peak n^(6/7) Delta^2 without a change)"
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


REPRODUCE = Command(
    help="Run a paper's experiment (`reproduce --help` lists them); writes "
    "OUT/<experiment>.csv (long form), OUT/<experiment>-runs.csv (each run's final "
    "regret), OUT/<experiment>.png and OUT/timings.csv.",
    add_arguments=_reproduce_arguments,
    run=_run_reproduce,
    needs=(("matplotlib", "plot"), ("tqdm", "plot")),
)


def _reproduction_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--csv-dir",
        default="runs/reproduce",
        help="folder of the reproductions' CSVs (runs/reproduce)",
    )
    parser.add_argument(
        "--out", default="REPRODUCTION.md", help="the report (REPRODUCTION.md)"
    )


def _run_reproduction_report(
    args: argparse.Namespace, parser: argparse.ArgumentParser
) -> int:
    from bandit_experiments.reproduction.report import write_report

    try:
        path = write_report(args.csv_dir, args.out)
    except ValueError as err:
        parser.error(str(err))
    print(f"wrote {path} from the CSVs in {args.csv_dir}")
    return 0


REPRODUCTION_REPORT = Command(
    help="Write REPRODUCTION.md from the CSVs of `reproduce` (one row per claim "
    "of the five papers: the paper's figure, ours under each reading, verdict).",
    add_arguments=_reproduction_report_arguments,
    run=_run_reproduction_report,
    out_is_file=True,
)
