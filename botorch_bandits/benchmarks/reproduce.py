r"""The papers' experiments (``botorch-bandits reproduce <experiment>``).

An experiment is a set of problems and algorithms; every (problem, algorithm) pair is
one independent *job* that runs all seeds as one batch on the finite-arm engine
(:func:`~botorch_bandits.benchmarks.simulator.simulate`). Jobs run in worker processes
on this machine, or on a Dask cluster (``dask="local"`` starts a
``distributed.LocalCluster`` on 127.0.0.1; any other value is a scheduler address).

Output: ``<out>/<experiment>.csv`` in long form with the columns
``experiment,problem,algorithm,step,metric,mean,se,n_seeds`` (mean and standard error
over seeds at the recorded steps: see :func:`recorded_steps`), ``<out>/<experiment>-runs.csv`` (every run's final
cumulative regret: ``experiment,problem,algorithm,seed,metric,value``),
``<out>/<experiment>.png`` (cumulative regret, one panel per problem, mean ± standard
error bands) and a row of ``<out>/timings.csv`` (the experiment's wall time). The
piecewise experiments also write their reading's detector calibration,
``<out>/avanesov-calibration-<reading>.csv``.

Readings: settings a paper leaves unstated are explicit options, and an experiment
names the reading it runs (``Experiment.reading``; e.g. ``avanesov-fig1`` under the
natural log, ``avanesov-fig1-log10`` under log10). :func:`reproduce_all` runs every
experiment (``botorch-bandits reproduce all``), and
:mod:`~botorch_bandits.benchmarks.report` writes REPRODUCTION.md from the CSVs.
"""

from __future__ import annotations

import csv
import math
import os
import textwrap
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import torch

from botorch_bandits._io import atomic_open, atomic_path, ignore_sigint
from botorch_bandits.benchmarks import constrained as C
from botorch_bandits.benchmarks import piecewise as PW
from botorch_bandits.benchmarks import problems as P
from botorch_bandits.benchmarks.delayed import DELAYED_POLICIES, simulate_delayed
from botorch_bandits.benchmarks.report import CHECKPOINTS
from botorch_bandits.benchmarks.simulator import METRICS, POLICIES, simulate
from botorch_bandits.delays import DelayDistribution, FixedDelay, PoissonDelay

PROBLEMS: dict[str, Callable[..., P.BanditProblem]] = {
    "rkhs-se": partial(P.rkhs_problem, "rbf"),
    "rkhs-matern52": partial(P.rkhs_problem, "matern52"),
    "gp-se": partial(P.gp_sample_problem, "rbf"),
    "gp-matern52": partial(P.gp_sample_problem, "matern52"),
    "rosenbrock": partial(P.benchmark_function_problem, "rosenbrock"),
    "hartmann3": partial(P.benchmark_function_problem, "hartmann3"),
    "gp-se-grid1000": P.srinivas_gp_problem,
    "gp-se-grid1000-sv0.5": partial(P.srinivas_gp_problem, signal_variance=0.5),
}
"""Problem builders by name; each takes ``num_seeds`` and ``seed``."""

CONSTRAINED_PROBLEMS: dict[str, Callable[[], C.ConstrainedProblem]] = {
    "e1": partial(C.shi2022_e1_problem, noisy_g=False),
    "e1-noisy-g": partial(C.shi2022_e1_problem, noisy_g=True),
    "e2": partial(C.shi2022_e2_problem, noisy_g=False),
    "e2-noisy-g": partial(C.shi2022_e2_problem, noisy_g=True),
}
"""Long-term-constrained problems (Shi & Eryilmaz 2022, App. E); runs differ by their
random first point and noise."""


@dataclass(frozen=True)
class DelayedSetting:
    """A delayed-feedback problem: the function, the delays and the window ``m``."""

    problem: Callable[..., P.BanditProblem]
    delays: DelayDistribution
    window: float | None
    num_init: int = 5


def _lr_problem(num_seeds: int, seed: int) -> P.BanditProblem:
    from botorch_bandits.benchmarks.hyperparameters import lr_tuning_problem

    return lr_tuning_problem(num_seeds=num_seeds, seed=seed)


def _delayed_settings() -> dict[str, DelayedSetting]:
    verma = P.verma_gp_problem
    out = {}
    for mu in (2, 5, 10, 20):  # Fig. 1a: m = 2 mu
        out[f"gp-se0.02/poisson{mu}/m{2 * mu}"] = DelayedSetting(
            verma, PoissonDelay(mu), 2 * mu
        )
    for m in (1, 2, 5, 10, 40):  # Fig. 1b: mu = 10 (m = 20 above)
        out[f"gp-se0.02/poisson10/m{m}"] = DelayedSetting(verma, PoissonDelay(10), m)
    out["gp-se0.02/fixed10/m20"] = DelayedSetting(verma, FixedDelay(10), 20)
    out["lr/poisson10/m20"] = DelayedSetting(_lr_problem, PoissonDelay(10), 20)
    out["lr/fixed10/m20"] = DelayedSetting(_lr_problem, FixedDelay(10), 20)
    return dict(sorted(out.items()))


DELAYED_SETTINGS: dict[str, DelayedSetting] = _delayed_settings()
"""Delayed-feedback problems (Verma, Dai & Low 2022): ``<function>/<delays>/m<window>``;
the first ``num_init`` = 5 queries are random (as in the authors' real-data runs)."""

PIECEWISE_SETTINGS: dict[str, tuple[int, int]] = {
    **{f"pw-K3-T{T}": (3, T) for T in (900, 1275, 1650, 2025, 2400)},
    **{f"pw-K{K}-T2700": (K, 2700) for K in range(3, 10)},
    "pw-K4-T1200": (4, 1200),
}
"""Piecewise-stationary problems (Avanesov §4): name -> (pieces K, horizon T)."""

PROBLEM_TITLES: dict[str, str] = {
    "rkhs-se": "RKHS function, SE kernel",
    "rkhs-matern52": "RKHS function, Matérn-5/2 kernel",
    "gp-se": "GP sample, SE kernel",
    "gp-matern52": "GP sample, Matérn-5/2 kernel",
    "rosenbrock": "Rosenbrock",
    "hartmann3": "Hartmann-3",
    "gp-se-grid1000": "GP sample on a 1000-point grid, SE kernel",
    "gp-se-grid1000-sv0.5": "GP sample on a 1000-point grid, SE kernel, variance 0.5",
    "e1": "App. E.1, exact g",
    "e1-noisy-g": "App. E.1, noisy g",
    "e2": "App. E.2, exact g",
    "e2-noisy-g": "App. E.2, noisy g",
}
"""Readable titles of the problems (plots say these, not the internal names)."""


def problem_title(problem: str, steps: int) -> str:
    """A problem's title with the horizon that actually ran."""
    if problem in PIECEWISE_SETTINGS:
        return f"K = {PIECEWISE_SETTINGS[problem][0]} pieces, T = {steps}"
    return f"{PROBLEM_TITLES.get(problem, problem)}, T = {steps}"


def problem_label(problem: str, steps: int) -> str:
    """The CSV's problem name: a piecewise problem's name carries its horizon, so it
    names the horizon that actually ran (``pw-K3-T22`` in a smoke run, not T900)."""
    if problem in PIECEWISE_SETTINGS:
        return f"pw-K{PIECEWISE_SETTINGS[problem][0]}-T{steps}"
    return problem


DELAYED_CSV_METRICS = (
    "simple_regret",
    "simple_regret_in_window",
    "best_value",
    "cumulative_regret",
)

CONSTRAINED_METRICS = (
    "cumulative_regret",
    "constraint_violation",
    "average_regret",
    "average_constraint_violation",
    "average_utility",
)


@dataclass(frozen=True)
class Experiment:
    """One figure of a paper."""

    name: str
    title: str
    problems: tuple[str, ...]
    algorithms: tuple[str, ...]
    horizon: int
    seeds: int
    beta_scale: float = 1.0
    delta: float = 0.1
    smoke_horizon: int = 30
    smoke_seeds: int = 2
    claim: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    epoch_length: int = 20  # constrained experiments: S
    refit_every: int | None = None  # delayed experiments: hyperparameter refits
    fit: str | None = None  # piecewise sweeps: fit R_T ~ C x^c over "T" or "K"
    options: dict[str, Any] = field(default_factory=dict)  # the reading's settings
    reading: str = ""  # what `options` mean, in words (CSV, plot and report say it)


_CG = ("IGP-UCB", "GP-TS", "GP-UCB", "EI", "PI")
_INCUMBENTS = ("EI-mean", "PI-mean", "PI-mean-xi")
"""EI/PI with the posterior-mean incumbent (and PI with the margin xi): the other
reading of the incumbent, which neither Chowdhury & Gopalan nor Srinivas et al. state."""
_INCUMBENT_LABELS = {
    "EI": "EI (observed incumbent)",
    "PI": "PI (observed incumbent)",
    "EI-mean": "EI (posterior-mean incumbent)",
    "PI-mean": "PI (posterior-mean incumbent)",
    "PI-mean-xi": "PI (posterior-mean incumbent, xi)",
}
_CG_CLAIM = (
    "Chowdhury & Gopalan 2017 §6: IGP-UCB has the lowest cumulative regret; GP-TS "
    "fares well against GP-UCB and GP-EI/PI."
)
EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment(
            "chowdhury2017-fig1",
            "RKHS functions (Chowdhury & Gopalan 2017, Fig. 1)",
            ("rkhs-se", "rkhs-matern52"),
            _CG,
            horizon=30000,
            seeds=25,
            claim=_CG_CLAIM,
        ),
        Experiment(
            "chowdhury2017-fig2",
            "GP samples (Chowdhury & Gopalan 2017, Fig. 2)",
            ("gp-se", "gp-matern52"),
            _CG,
            horizon=30000,
            seeds=25,
            claim="As Fig. 1 (relative performance similar).",
        ),
        Experiment(
            "chowdhury2017-fig3",
            "Rosenbrock and Hartmann3 (Chowdhury & Gopalan 2017, Fig. 3)",
            ("rosenbrock", "hartmann3"),
            (*_CG, *_INCUMBENTS),
            horizon=30000,
            seeds=25,
            claim="GP-EI/PI best; IGP-UCB and GP-TS competitive.",
            labels=_INCUMBENT_LABELS,
            reading="EI/PI with both incumbents (observed best; posterior mean)",
        ),
        Experiment(
            "srinivas2010-fig5a",
            "GP samples, SE kernel (Srinivas et al. 2010, Fig. 5a)",
            ("gp-se-grid1000",),
            ("GP-UCB-finite", "EI", "PI", *_INCUMBENTS, "mean-only", "variance-only"),
            horizon=1000,
            seeds=30,
            beta_scale=0.2,
            claim=(
                "Srinivas et al. 2010 §6: GP-UCB (Thm 1 beta_t / 5) is comparable to EI "
                "and beats MPI, mean-only and variance-only in mean average regret."
            ),
            labels={
                **_INCUMBENT_LABELS,
                "GP-UCB-finite": "GP-UCB (Thm 1, beta/5)",
                "PI": "MPI (observed incumbent)",
            },
            reading="signal variance 1 (unit-variance kernel); both incumbents",
        ),
        Experiment(
            "shi2022-fig1",
            "E.1, exact g: Alg. 2 with epoch lengths S = 5..70, T = 350 (Shi & Eryilmaz 2022, Fig. 1)",
            ("e1",),
            ("Alg2/S=5", "Alg2/S=10", "Alg2/S=20", "Alg2/S=35", "Alg2/S=70"),
            horizon=350,
            seeds=20,
            claim=(
                "App. E.1.1: a regret-CV trade-off in L and S; more frequent multiplier "
                "updates (small S) reduce the CV."
            ),
        ),
        Experiment(
            "shi2022-fig2",
            "E.1, noiseless g: Alg. 2 (Shi & Eryilmaz 2022, Figs. 2-3)",
            ("e1",),
            ("Alg2", "IGP-UCB", "LogCEI"),
            horizon=350,
            seeds=100,
            claim=(
                "Shi & Eryilmaz 2022 App. E.1.1: Alg. 2's time-averaged regret and CV "
                "both tend to 0."
            ),
        ),
        Experiment(
            "shi2022-fig4",
            "E.1, noisy g: Alg. 3, mu = 0.5 (Shi & Eryilmaz 2022, Figs. 4-5)",
            ("e1-noisy-g",),
            ("Alg3", "IGP-UCB", "LogCEI"),
            horizon=350,
            seeds=100,
            claim=(
                "Shi & Eryilmaz 2022 App. E.1.2: Alg. 3's time-averaged regret and CV "
                "tend to 0, CV more slowly than Alg. 2's."
            ),
        ),
        Experiment(
            "shi2022-fig6",
            "E.2 data-rate allocation, noiseless g: Alg. 2 (Shi & Eryilmaz 2022, Figs. 6-7)",
            ("e2",),
            ("Alg2", "IGP-UCB", "LogCEI"),
            horizon=350,
            seeds=100,
            claim="App. E.2.1: Alg. 2's time-averaged CV approaches 0; utility converges.",
        ),
        Experiment(
            "shi2022-fig8",
            "E.2 data-rate allocation, noisy g: Alg. 3 (Shi & Eryilmaz 2022, Figs. 8-9)",
            ("e2-noisy-g",),
            ("Alg3", "IGP-UCB", "LogCEI"),
            horizon=350,
            seeds=100,
            claim=(
                "App. E.2.2: Alg. 3's time-averaged CV approaches 0 (more slowly than "
                "Alg. 2's; first rising, then falling)."
            ),
        ),
        Experiment(
            "verma2022-fig1a",
            "GP-UCB-SDF under Poisson(mu) delays, m = 2 mu (Verma et al. 2022, Fig. 1a)",
            tuple(f"gp-se0.02/poisson{mu}/m{2 * mu}" for mu in (2, 5, 10, 20)),
            ("GP-UCB-SDF",),
            horizon=200,
            seeds=25,
            claim="Verma et al. 2022 §6.1: larger delays (larger mu) give worse performance.",
        ),
        Experiment(
            "verma2022-fig1b",
            "GP-UCB-SDF, Poisson(10) delays, m = 1..40 (Verma et al. 2022, Fig. 1b)",
            tuple(f"gp-se0.02/poisson10/m{m}" for m in (1, 2, 5, 10, 20, 40)),
            ("GP-UCB-SDF",),
            horizon=200,
            seeds=25,
            claim=(
                "§6.1: an overly small m gives large regret; m = 20 = 2 mu and m = 40 "
                "perform comparably."
            ),
        ),
        Experiment(
            "verma2022-fig1c",
            "Poisson(10) delays, m = 20: UCB family (Verma et al. 2022, Fig. 1c)",
            ("gp-se0.02/poisson10/m20",),
            ("GP-UCB-SDF", "GP-BUCB", "GP-UCB"),
            horizon=200,
            seeds=25,
            claim="§6.1: GP-UCB-SDF achieves smaller simple regret than the baselines.",
        ),
        Experiment(
            "verma2022-fig1c-refit",
            "As Fig. 1c with the paper's protocol: SE hyperparameters refit by "
            "marginal likelihood every 10 queries (Verma et al. 2022, App. C)",
            ("gp-se0.02/poisson10/m20",),
            ("GP-UCB-SDF", "GP-BUCB", "GP-UCB"),
            horizon=200,
            seeds=25,
            refit_every=10,
            claim="§6.1: GP-UCB-SDF achieves smaller simple regret than the baselines.",
        ),
        Experiment(
            "verma2022-fig1d",
            "Fixed delay 10, m = 20: UCB family (Verma et al. 2022, Fig. 1d)",
            ("gp-se0.02/fixed10/m20",),
            ("GP-UCB-SDF", "GP-BUCB", "GP-UCB"),
            horizon=200,
            seeds=25,
            claim="§6.1: GP-UCB-SDF achieves smaller simple regret than the baselines.",
        ),
        Experiment(
            "verma2022-fig5",
            "TS family, Poisson(10) and fixed-10 delays, m = 20 (Verma et al. 2022, Fig. 5)",
            ("gp-se0.02/poisson10/m20", "gp-se0.02/fixed10/m20"),
            ("GP-TS-SDF", "GP-TS-SDF-unscaled", "GP-BTS", "asy-TS"),
            horizon=200,
            seeds=25,
            claim="App. C, Fig. 5: GP-TS-SDF outperforms the TS-based baselines.",
            reading="GP-TS-SDF with the text's scaled draws and with unscaled draws",
        ),
        Experiment(
            "verma2022-lr",
            "Logistic regression on breast cancer, Poisson(10) and fixed-10 delays, "
            "m = 20 (Verma et al. 2022, Fig. 3)",
            ("lr/poisson10/m20", "lr/fixed10/m20"),
            ("GP-UCB-SDF", "GP-BUCB", "GP-UCB", "GP-TS-SDF", "GP-BTS", "asy-TS"),
            horizon=100,
            seeds=10,
            smoke_horizon=20,
            claim=(
                "§6.2: GP-UCB-SDF and GP-TS-SDF outperform their baselines with "
                "stochastic and deterministic delays."
            ),
        ),
        Experiment(
            "avanesov-fig1",
            "GP-UCB-CPD, K = 3 pieces, T = 900..2400 (Avanesov, Fig. 1)",
            tuple(f"pw-K3-T{T}" for T in (900, 1275, 1650, 2025, 2400)),
            ("GP-UCB-CPD",),
            horizon=2400,
            seeds=64,
            smoke_horizon=60,
            fit="T",
            claim="§4: R_T ~ 1.86 T^0.74, exponent CI (0.64, 0.84); theory 0.786.",
        ),
        Experiment(
            "avanesov-fig2",
            "GP-UCB-CPD, T = 2700, K = 3..9 pieces (Avanesov, Fig. 2)",
            tuple(f"pw-K{K}-T2700" for K in range(3, 10)),
            ("GP-UCB-CPD",),
            horizon=2700,
            seeds=64,
            smoke_horizon=60,
            fit="K",
            claim="§4: R_T ~ 502 K^0.282, exponent CI (0.21, 0.35).",
        ),
        Experiment(
            "avanesov-fig3",
            "T = 1200, K = 4: CPD vs Oracle vs NO-Detector vs GP-UCB (Avanesov, Fig. 3)",
            ("pw-K4-T1200",),
            PW.PIECEWISE_ALGORITHMS,
            horizon=1200,
            seeds=64,
            smoke_horizon=60,
            claim=(
                "§4: Oracle best, CPD second; GP-UCB only slightly better than "
                "NO-Detector after the first change."
            ),
        ),
    )
}


# The paper's Figs. 3, 5, 7 and 9 show the means of the runs whose box plots are Figs. 2,
# 4, 6 and 8: the same jobs (our CSV and plot give means and standard errors for both).
for _fig, _runs in (
    ("shi2022-fig3", "shi2022-fig2"),
    ("shi2022-fig5", "shi2022-fig4"),
    ("shi2022-fig7", "shi2022-fig6"),
    ("shi2022-fig9", "shi2022-fig8"),
):
    EXPERIMENTS[_fig] = replace(EXPERIMENTS[_runs], name=_fig)
EXPERIMENTS["srinivas2010-fig5a-sv0.5"] = replace(
    EXPERIMENTS["srinivas2010-fig5a"],
    name="srinivas2010-fig5a-sv0.5",
    title="GP samples, SE kernel of variance 0.5 (Srinivas et al. 2010, Fig. 5a)",
    problems=("gp-se-grid1000-sv0.5",),
    reading="signal variance 0.5 (noise 0.025 = 5 % of it); both incumbents",
)

PIECEWISE_READINGS: dict[str, dict[str, Any]] = {
    "natural": {"log_base": math.e},
    "log10": {"log_base": 10.0},
}
"""The readings of Avanesov's log T the figures run under (both with Eq. 3.4's sigma^2
and the integral over X as written; see :mod:`~botorch_bandits.benchmarks.piecewise`).
``natural`` is the default reading (the base of the paper's proofs)."""


def _reading_text(name: str) -> str:
    return (
        f"log = {'ln' if name == 'natural' else 'log10'} in log^4 T and "
        "sigma^2 = 6 g^2 log T; integral over X; c calibrated"
    )


for _fig in ("avanesov-fig1", "avanesov-fig2", "avanesov-fig3"):
    EXPERIMENTS[_fig] = replace(
        EXPERIMENTS[_fig],
        options=PIECEWISE_READINGS["natural"],
        reading=_reading_text("natural"),
    )
    EXPERIMENTS[f"{_fig}-log10"] = replace(
        EXPERIMENTS[_fig],
        name=f"{_fig}-log10",
        title=EXPERIMENTS[_fig].title.replace(")", "; log10 reading)"),
        options=PIECEWISE_READINGS["log10"],
        reading=_reading_text("log10"),
    )
EXPERIMENTS = dict(sorted(EXPERIMENTS.items()))  # `--list` prints them in this order
ALIASES = {"shi2022-fig3", "shi2022-fig5", "shi2022-fig7", "shi2022-fig9"}
"""Figures drawn from another experiment's runs (``reproduce all`` skips them)."""


# --------------------------------------------------------------------------------------
# jobs
# --------------------------------------------------------------------------------------
def run_job(
    problem: str,
    algorithm: str,
    horizon: int,
    seeds: int,
    seed: int = 0,
    delta: float = 0.1,
    beta_scale: float = 1.0,
    progress: Any = None,
    threads: int | None = 1,
    epoch_length: int = 20,
    refit_every: int | None = None,
    cpd_c: float | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One (problem, algorithm) job: build the problem's ``seeds`` instances, simulate,
    and reduce to per-step mean and standard error of every metric. Runs anywhere
    (a worker process, a Dask worker); the result is plain tensors. ``options``: the
    experiment's reading (keyword arguments of the piecewise simulator)."""
    if threads is not None:
        torch.set_num_threads(threads)
    start = time.perf_counter()
    extra: dict[str, Any] = {}  # job facts beyond the per-step statistics
    if problem in CONSTRAINED_PROBLEMS:
        base, epochs = _constrained_name(algorithm, epoch_length)
        result = C.simulate_constrained(
            CONSTRAINED_PROBLEMS[problem](),
            base,
            horizon,
            epoch_length=epochs,
            num_seeds=seeds,
            delta=delta,
            seed=seed,
        )
        per_step = {
            "cumulative_regret": result.cumulative_regret,
            "constraint_violation": result.constraint_violation,
            "average_regret": result.time_averaged("cumulative_regret"),
            "average_constraint_violation": result.time_averaged(
                "constraint_violation"
            ),
            "average_utility": result.f.cumsum(0)
            / torch.arange(1, horizon + 1, dtype=result.f.dtype).unsqueeze(-1),
        }
        csv_metrics = CONSTRAINED_METRICS
    elif problem in PIECEWISE_SETTINGS:
        K_pieces, _ = PIECEWISE_SETTINGS[problem]
        result = PW.simulate_piecewise(
            PW.piecewise_gp_problem(K_pieces, horizon, num_seeds=seeds, seed=seed),
            algorithm,
            c=PW.DEFAULT_CPD_C if cpd_c is None else cpd_c,
            seed=seed,
            progress=progress,
            **(options or {}),
        )
        per_step = {
            "cumulative_regret": result.cumulative_regret,
            "average_regret": result.average_regret,
        }
        csv_metrics = ("cumulative_regret",)
        delays, missed, false = result.detection_delays()
        extra = {
            "num_pieces": K_pieces,
            "detection_delays": delays,
            "missed_changes": missed,
            "false_alarms": false,
            "uniform_steps": float(result.uniform.sum(0).double().mean()),
            "cpd_c": PW.DEFAULT_CPD_C if cpd_c is None else cpd_c,
        }
    elif problem in DELAYED_SETTINGS:
        setting = DELAYED_SETTINGS[problem]
        result = simulate_delayed(
            setting.problem(num_seeds=seeds, seed=seed),
            algorithm,
            horizon,
            setting.delays,
            window=setting.window,
            num_init=setting.num_init,
            refit_every=refit_every,
            delta=delta,
            seed=seed,
            progress=progress,
        )
        per_step = {m: result.metric(m) for m in DELAYED_CSV_METRICS}
        per_step["average_regret"] = result.average_regret
        csv_metrics = DELAYED_CSV_METRICS
    else:
        result = simulate(
            PROBLEMS[problem](num_seeds=seeds, seed=seed),
            algorithm,
            horizon,
            seed=seed,
            delta=delta,
            beta_scale=beta_scale,
            progress=progress,
        )
        per_step = {metric: result.metric(metric) for metric in METRICS}
        csv_metrics = CSV_METRICS
    stats = {}
    for metric, values in per_step.items():  # T x S
        mean = values.mean(-1)
        se = (
            values.std(-1, unbiased=True) / math.sqrt(seeds)
            if seeds > 1
            else torch.zeros_like(mean)
        )
        stats[metric] = (mean, se)
    return {
        "problem": problem,
        "algorithm": algorithm,
        "n_seeds": seeds,
        "stats": stats,
        "csv_metrics": csv_metrics,
        "final_cumulative_regret": result.cumulative_regret[-1],
        "steps": horizon,
        "seconds": time.perf_counter() - start,
        **extra,
    }


def _constrained_name(algorithm: str, epoch_length: int) -> tuple[str, int]:
    """``"Alg2/S=10"`` -> ``("Alg2", 10)``; a plain name keeps ``epoch_length``."""
    base, _, text = algorithm.partition("/S=")
    if not text:
        return base, epoch_length
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"epoch length in {algorithm!r} must be an integer >= 1.")
    return base, int(text)


def _init_worker() -> None:
    """One torch thread per worker; Ctrl-C is left to the main process."""
    torch.set_num_threads(1)
    ignore_sigint()


@dataclass
class ReproduceResult:
    experiment: Experiment
    jobs: list[dict[str, Any]]
    horizon: int
    seeds: int
    seconds: float
    csv_path: Path | None
    png_path: Path | None
    runs_path: Path | None = None
    calibration: Any = None  # Calibration of the piecewise experiments
    record: str | int = "log"  # the CSV's steps (see recorded_steps)

    def summary(self) -> list[tuple[str, str, float, float, float, float]]:
        """``(problem, algorithm, final mean cumulative regret R_T, its s.e., mean
        R_t/t at t = T/2, mean R_T/T)``: the curve flattens when the last is smaller."""
        rows = []
        for job in self.jobs:
            mean, se = job["stats"]["cumulative_regret"]
            avg = job["stats"]["average_regret"][0]
            half = avg[max(mean.shape[0] // 2 - 1, 0)]
            rows.append(
                (
                    problem_label(job["problem"], job["steps"]),
                    job["algorithm"],
                    float(mean[-1]),
                    float(se[-1]),
                    float(half),
                    float(avg[-1]),
                )
            )
        return rows

    def power_law(self) -> PW.PowerLaw | None:
        """For the sweeps (Avanesov Figs. 1 and 2): the fit of the mean final regret
        :math:`R_T \approx C x^c` over the horizons (``x = T``) or the numbers of
        pieces (``x = K``)."""
        how = self.experiment.fit
        if how is None:
            return None
        xs = [j["steps"] if how == "T" else j["num_pieces"] for j in self.jobs]
        if len(set(xs)) < 3:
            return None
        ys = [float(j["stats"]["cumulative_regret"][0][-1]) for j in self.jobs]
        return PW.fit_power_law(xs, ys)

    def exponent_per_run(self) -> Any:
        """For the sweeps: the exponent fitted on individual runs (each run's
        log-log slope over the sweep; mean and 95 % CI over runs,
        :func:`~botorch_bandits.benchmarks.report.exponent_per_run`)."""
        from botorch_bandits.benchmarks.report import exponent_per_run

        how = self.experiment.fit
        if how is None or len(self.jobs) < 3 or self.seeds < 2:
            return None
        xs = [j["steps"] if how == "T" else j["num_pieces"] for j in self.jobs]
        runs = [j["final_cumulative_regret"].reshape(-1).tolist() for j in self.jobs]
        return exponent_per_run(xs, runs)

    def paired_differences(self) -> list[tuple[str, str, Any]]:
        """For Avanesov's Fig. 3: the paired differences of the final regrets
        (Oracle - CPD, CPD - GP-UCB, GP-UCB - NO-Detector) over runs that share
        their draws (common random numbers)."""
        from botorch_bandits.benchmarks.report import FIG3_PAIRS, Paired

        finals = {j["algorithm"]: j["final_cumulative_regret"] for j in self.jobs}
        if len({j["problem"] for j in self.jobs}) != 1 or self.seeds < 2:
            return []
        out = []
        for a, b in FIG3_PAIRS:
            if a in finals and b in finals:
                diffs = (finals[a] - finals[b]).reshape(-1).tolist()
                out.append((a, b, Paired.of(diffs)))
        return out


def reproduce(
    name: str,
    seeds: int | None = None,
    horizon: int | None = None,
    smoke: bool = False,
    out: str | Path | None = "runs/reproduce",
    dask: str | None = None,
    workers: int | None = None,
    algorithms: Sequence[str] | None = None,
    seed: int = 0,
    show_progress: bool = True,
    cpd_c: float | str | None = None,
    record: str | int = "log",
) -> ReproduceResult:
    """Run experiment ``name``; write its CSV and PNG to ``out`` (``None``: write
    nothing); ``record``: the steps the CSV keeps (:func:`recorded_steps`; the plot
    and the printed summary always use every step). ``smoke`` uses the experiment's small sizes unless ``seeds`` /
    ``horizon`` are given. ``workers``: local worker processes (default: the number of
    CPUs, at most the number of jobs; 1 runs in this process with a per-step bar).
    ``cpd_c``: the change-point detector's constant c for the piecewise experiments:
    a number, or ``"calibrated"`` (the default there: :func:`calibrate` picks it for
    the experiment's reading, on held-out draws, and writes its table)."""
    if name not in EXPERIMENTS:
        raise ValueError(
            f"`experiment` must be one of {sorted(EXPERIMENTS)}, got {name!r}."
        )
    exp = EXPERIMENTS[name]
    check_record(record)
    T = horizon or (exp.smoke_horizon if smoke else exp.horizon)
    S = seeds or (exp.smoke_seeds if smoke else exp.seeds)
    for arg, value in (("horizon", T), ("seeds", S)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"`{arg}` must be an integer >= 1, got {arg}={value!r}.")
    algos = tuple(algorithms) if algorithms else exp.algorithms
    constrained = exp.problems[0] in CONSTRAINED_PROBLEMS
    if constrained:
        known = C.ALGORITHMS
    elif exp.problems[0] in DELAYED_SETTINGS:
        known = tuple(DELAYED_POLICIES)
    elif exp.problems[0] in PIECEWISE_SETTINGS:
        known = PW.PIECEWISE_ALGORITHMS
    else:
        known = tuple(POLICIES)
    unknown = [
        a for a in algos if (a.partition("/S=")[0] if constrained else a) not in known
    ]
    if unknown:
        raise ValueError(
            f"`algorithms` must be among {sorted(known)}, got unknown {unknown}."
        )
    wall_start = time.perf_counter()
    piecewise = exp.problems[0] in PIECEWISE_SETTINGS
    calibration = None
    if piecewise and (cpd_c is None or cpd_c == "calibrated"):
        calibration = calibrate(
            exp.options,
            seeds=S,
            horizon=_problem_horizon("pw-K4-T1200", T, exp, horizon, smoke),
            out=out,
            workers=workers,
        )
        cpd_c = calibration.c
    elif cpd_c is not None and not (
        isinstance(cpd_c, int | float) and not isinstance(cpd_c, bool) and cpd_c > 0
    ):
        raise ValueError(
            f"`cpd_c` must be a number > 0 or 'calibrated', got cpd_c={cpd_c!r}."
        )
    specs = [
        dict(
            problem=p,
            algorithm=a,
            horizon=_problem_horizon(p, T, exp, horizon, smoke),
            seeds=S,
            seed=seed,
            delta=exp.delta,
            beta_scale=exp.beta_scale,
            **({"epoch_length": exp.epoch_length} if constrained else {}),
            **({"refit_every": exp.refit_every} if exp.refit_every else {}),
            **({"cpd_c": cpd_c} if cpd_c is not None else {}),
            **({"options": exp.options} if exp.options else {}),
        )
        for p in exp.problems
        for a in algos
    ]
    start = time.perf_counter()
    bar = _bar(sum(s["horizon"] for s in specs), name) if show_progress else None
    if dask is not None:
        jobs = _run_dask(specs, dask, bar, T)
    else:
        n = workers or min(os.cpu_count() or 1, len(specs))
        if n <= 1:
            jobs = [run_job(**spec, progress=bar, threads=None) for spec in specs]
        else:
            with ProcessPoolExecutor(max_workers=n, initializer=_init_worker) as pool:
                try:
                    jobs = _run_executor(pool, specs, bar, T)
                except KeyboardInterrupt:  # the workers ignore it: stop them now
                    for proc in list((pool._processes or {}).values()):
                        proc.terminate()
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
    if bar is not None:
        bar.close()
    order = {(s["problem"], s["algorithm"]): i for i, s in enumerate(specs)}
    jobs.sort(key=lambda j: order[(j["problem"], j["algorithm"])])
    result = ReproduceResult(exp, jobs, T, S, time.perf_counter() - start, None, None)
    result.calibration = calibration
    result.record = record
    if out is not None:
        out_dir = Path(out)
        out_dir.mkdir(parents=True, exist_ok=True)
        result.csv_path = write_csv(result, out_dir / f"{name}.csv")
        result.runs_path = write_runs_csv(result, out_dir / f"{name}-runs.csv")
        result.png_path = plot(result, out_dir / f"{name}.png")
        record_timing(out_dir, result, time.perf_counter() - wall_start)
    return result


TIMING_COLUMNS = ("experiment", "seeds", "horizon", "seconds", "finished")


def read_timings(out_dir: str | Path) -> dict[str, dict[str, str]]:
    """``<out>/timings.csv`` by experiment (empty if there is none)."""
    path = Path(out_dir) / "timings.csv"
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        return {r["experiment"]: r for r in csv.DictReader(fh)}


def record_timing(out_dir: Path, result: ReproduceResult, seconds: float) -> None:
    """Append the run's wall time (calibration, jobs, CSVs and plot) to
    ``<out>/timings.csv``; a rerun of an experiment replaces its row."""
    rows = read_timings(out_dir)
    rows[result.experiment.name] = {
        "experiment": result.experiment.name,
        "seeds": result.seeds,
        "horizon": result.horizon,
        "seconds": f"{seconds:.1f}",
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    with atomic_open(out_dir / "timings.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=TIMING_COLUMNS)
        writer.writeheader()
        writer.writerows(rows.values())


def all_experiments() -> list[str]:
    """Every figure of the five papers under every reading, each experiment once
    (the aliases share their runs' CSVs). The experiments with readings (the claims
    that hinge on an unstated setting) come first, the longest of them
    (``chowdhury2017-fig3``, 80 jobs of T = 30000) last among them; then the rest
    by name."""
    names = [name for name in EXPERIMENTS if name not in ALIASES]

    def key(n: str) -> tuple[bool, bool, str]:
        return (not EXPERIMENTS[n].reading, n == "chowdhury2017-fig3", n)

    return sorted(names, key=key)


def reproduce_all(
    out: str | Path = "runs/reproduce",
    smoke: bool = False,
    resume: bool = False,
    workers: int | None = None,
    show_progress: bool = True,
    names: Sequence[str] | None = None,
    report: Callable[[str, ReproduceResult | None], None] | None = None,
    record: str | int = "log",
) -> float:
    """Run every experiment (``names``: a subset) one after the other into ``out``,
    each with its paper's sizes (or smoke sizes). ``resume`` skips an experiment
    whose CSV and runs CSV are already in ``out`` and whose recorded sizes match, so an
    interrupted run goes on where it stopped. Returns the wall time of this call;
    ``<out>/timings.csv`` keeps each experiment's own time (the sum over a resumed
    run's parts is the whole run's time). ``report(name, result)`` is called after
    each experiment (``result`` None for a skipped one)."""
    check_record(record)
    chosen = list(names) if names else all_experiments()
    unknown = [n for n in chosen if n not in EXPERIMENTS]
    if unknown:
        raise ValueError(
            f"`names` must be among {sorted(EXPERIMENTS)}, got unknown {unknown}."
        )
    out_dir = Path(out)
    start = time.perf_counter()
    done = read_timings(out_dir) if resume else {}
    for name in chosen:
        exp = EXPERIMENTS[name]
        sizes = (
            str(exp.smoke_seeds if smoke else exp.seeds),
            str(exp.smoke_horizon if smoke else exp.horizon),
        )
        if (
            name in done
            and (done[name]["seeds"], done[name]["horizon"]) == sizes
            and (out_dir / f"{name}.csv").exists()
            and (out_dir / f"{name}-runs.csv").exists()
        ):
            if report is not None:
                report(name, None)
            continue
        result = reproduce(
            name,
            smoke=smoke,
            out=out_dir,
            workers=workers,
            show_progress=show_progress,
            record=record,
        )
        if report is not None:
            report(name, result)
    return time.perf_counter() - start


# --------------------------------------------------------------------------------------
# the detector constant c, chosen inside the algorithm
# --------------------------------------------------------------------------------------
CALIBRATION_COLUMNS = (
    "reading",
    "c",
    "changes",
    "detected",
    "false_alarms",
    "false_alarm_rate",
    "mean_delay",
    "regret",
    "regret_se",
    "n_seeds",
    "horizon",
    "picked",
)


@dataclass
class Calibration:
    """:func:`~botorch_bandits.benchmarks.piecewise.calibrate_in_algorithm`'s table
    for one reading, and the picked ``c``."""

    reading: str
    rows: list[PW.CalibrationRow]
    c: float
    n_seeds: int
    horizon: int
    path: Path | None = None


def reading_name(options: dict[str, Any]) -> str:
    """The name of a piecewise reading (``natural``, ``log10``; otherwise its
    settings spelled out)."""
    for name, opts in PIECEWISE_READINGS.items():
        if opts == dict(options):
            return name
    return "-".join(f"{k}={v}" for k, v in sorted(options.items())) or "natural"


def _calibration_job(
    c: float, horizon: int, seeds: int, options: dict[str, Any]
) -> PW.CalibrationRow:
    torch.set_num_threads(1)
    return PW.calibrate_in_algorithm((c,), horizon=horizon, num_seeds=seeds, **options)[
        0
    ]


def calibrate(
    options: dict[str, Any],
    seeds: int = 64,
    horizon: int = 1200,
    out: str | Path | None = "runs/reproduce",
    workers: int | None = None,
    c_values: tuple[float, ...] = PW.CALIBRATION_C_VALUES,
) -> Calibration:
    """Pick the detector constant for a reading: GP-UCB-CPD with each of ``c_values``
    on Fig. 3's setting (K = 4, ``horizon``) with held-out draws, ``seeds`` runs each,
    then :func:`~botorch_bandits.benchmarks.piecewise.pick_c`. The table goes to
    ``<out>/avanesov-calibration-<reading>.csv``; a table there with the same sizes
    and values of c is reused (the figures of one reading share one calibration)."""
    name = reading_name(options)
    path = None if out is None else Path(out) / f"avanesov-calibration-{name}.csv"
    if path is not None and path.exists():
        cached = read_calibration(path)
        if (
            cached is not None
            and [r.c for r in cached.rows] == [float(c) for c in c_values]
            and cached.n_seeds == seeds
            and cached.horizon == horizon
        ):
            return cached
    n = workers or min(os.cpu_count() or 1, len(c_values))
    args = [(c, horizon, seeds, dict(options)) for c in c_values]
    if n <= 1:
        rows = [_calibration_job(*a) for a in args]
    else:
        with ProcessPoolExecutor(max_workers=n, initializer=_init_worker) as pool:
            rows = list(pool.map(_calibration_job, *zip(*args, strict=True)))
    result = Calibration(name, rows, PW.pick_c(rows), seeds, horizon, path)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(CALIBRATION_COLUMNS)
            for r in rows:
                writer.writerow(
                    (
                        name,
                        f"{r.c:g}",
                        r.changes,
                        r.detected,
                        r.false_alarms,
                        f"{r.false_alarm_rate:.6g}",
                        f"{r.mean_delay:.6g}",
                        f"{r.regret:.8g}",
                        f"{r.regret_se:.8g}",
                        seeds,
                        horizon,
                        int(r.c == result.c),
                    )
                )
    return result


def read_calibration(path: Path) -> Calibration | None:
    """A calibration table written by :func:`calibrate` (``None`` if it is empty)."""
    with open(path, newline="") as fh:
        records = list(csv.DictReader(fh))
    if not records:
        return None
    rows = [
        PW.CalibrationRow(
            c=float(r["c"]),
            changes=int(r["changes"]),
            detected=int(r["detected"]),
            false_alarms=int(r["false_alarms"]),
            mean_delay=float(r["mean_delay"]),
            regret=float(r["regret"]),
            regret_se=float(r["regret_se"]),
        )
        for r in records
    ]
    picked = [float(r["c"]) for r in records if r["picked"] == "1"]
    first = records[0]
    return Calibration(
        first["reading"],
        rows,
        picked[0],
        int(first["n_seeds"]),
        int(first["horizon"]),
        path,
    )


def _problem_horizon(
    problem: str, T: int, exp: Experiment, given: int | None, smoke: bool
) -> int:
    """The horizon of one problem. A piecewise problem has its own ``T`` (Fig. 1 sweeps
    it); ``--horizon`` / ``--smoke`` set the experiment's largest horizon and the
    others scale with it (so a sweep stays a sweep)."""
    if problem not in PIECEWISE_SETTINGS:
        return T
    K_pieces, own = PIECEWISE_SETTINGS[problem]
    if given is None and not smoke:
        return own
    return max(K_pieces, round(own * T / exp.horizon))


def _bar(total: int, name: str) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the plot extra
        return None
    return tqdm(total=total, desc=name, unit="step")


def _run_executor(
    pool: Executor, specs: list[dict[str, Any]], bar: Any, T: int
) -> list[dict[str, Any]]:
    # longest jobs first (the piecewise sweeps differ in T): less idle time at the end
    ordered = sorted(specs, key=lambda spec: -spec["horizon"])
    futures = [pool.submit(run_job, **spec) for spec in ordered]
    return _collect(as_completed(futures), bar, T)


def _collect(completed: Any, bar: Any, T: int) -> list[dict[str, Any]]:
    """Results of futures in completion order, advancing the bar by a job's steps."""
    jobs = []
    for fut in completed:
        job = fut.result()
        jobs.append(job)
        if bar is not None:
            bar.update(job.get("steps", T))
            bar.set_postfix_str(f"{job['problem']} {job['algorithm']} done")
    return jobs


def _run_dask(
    specs: list[dict[str, Any]], address: str, bar: Any, T: int
) -> list[dict[str, Any]]:
    try:
        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError as err:  # pragma: no cover - distributed is in the dask extra
        raise ImportError(
            "--dask needs the `distributed` package: pip install 'botorch-bandits[dask]'"
        ) from err
    cluster = None
    if address == "local":
        cluster = LocalCluster(
            host="127.0.0.1",
            n_workers=min(os.cpu_count() or 1, len(specs)),
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        futures = [client.submit(run_job, **spec, pure=False) for spec in specs]
        return _collect(dask_completed(futures), bar, T)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


# --------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------
CSV_COLUMNS = (
    "experiment",
    "problem",
    "algorithm",
    "step",
    "metric",
    "mean",
    "se",
    "n_seeds",
)


CSV_METRICS = ("cumulative_regret", "simple_regret", "information_gain")
"""Metrics written to the CSV (the average regret is cumulative_regret / step)."""

RECORD_DENSE = 500
"""``record="log"`` keeps every step up to this one ..."""
RECORD_LOG_POINTS = 500
"""... and this many log-spaced steps from there to the horizon."""


def check_record(record: Any) -> None:
    """``record`` is ``"all"``, ``"log"`` or an integer k >= 1 (every k-th step)."""
    if record in ("all", "log"):
        return
    if isinstance(record, bool) or not isinstance(record, int) or record < 1:
        raise ValueError(
            "`record` must be 'all', 'log' or an integer k >= 1 (every k-th step), "
            f"got record={record!r}."
        )


def recorded_steps(horizon: int, record: str | int = "log") -> list[int]:
    """The steps (1-based) a reproduction's CSV keeps for a job of ``horizon`` steps.

    * ``"all"``: every step.
    * ``"log"`` (default): every step up to :data:`RECORD_DENSE` (500), then
      :data:`RECORD_LOG_POINTS` (500) log-spaced steps up to the horizon -- at most
      about 1000 rows per curve, so a 30000-step figure's CSV stays near 2 MB instead
      of 70 MB, and a curve on a log axis keeps its resolution everywhere.
    * an integer k: every k-th step.

    The last step and the report's checkpoints
    (:data:`~botorch_bandits.benchmarks.report.CHECKPOINTS`) up to the horizon are
    always kept, so REPRODUCTION.md reads the same numbers under every choice.
    """
    check_record(record)
    if record == "all":
        return list(range(1, horizon + 1))
    if record == "log":
        steps = set(range(1, min(horizon, RECORD_DENSE) + 1))
        if horizon > RECORD_DENSE:
            ratio = math.log(horizon / RECORD_DENSE) / RECORD_LOG_POINTS
            steps.update(
                round(RECORD_DENSE * math.exp(ratio * i))
                for i in range(1, RECORD_LOG_POINTS + 1)
            )
    else:
        steps = set(range(record, horizon + 1, record))
    steps.update(c for c in CHECKPOINTS if c <= horizon)
    steps.add(horizon)
    return sorted(s for s in steps if 1 <= s <= horizon)


def write_csv(result: ReproduceResult, path: Path) -> Path:
    """Long form, one row per (problem, algorithm, recorded step, metric) -- the steps
    of :func:`recorded_steps` under ``result.record`` -- values with 8 significant
    digits."""
    name = result.experiment.name
    with atomic_open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_COLUMNS)
        for job in result.jobs:
            steps = recorded_steps(job["steps"], result.record)
            index = torch.tensor(steps) - 1
            label = problem_label(job["problem"], job["steps"])
            for metric in job["csv_metrics"]:
                mean, se = job["stats"][metric]
                writer.writerows(
                    (
                        name,
                        label,
                        job["algorithm"],
                        step,
                        metric,
                        f"{m:.8g}",
                        f"{s:.8g}",
                        job["n_seeds"],
                    )
                    for step, m, s in zip(
                        steps,
                        mean[index].tolist(),
                        se[index].tolist(),
                        strict=True,
                    )
                )
    return path


RUNS_COLUMNS = ("experiment", "problem", "algorithm", "seed", "metric", "value")


def write_runs_csv(result: ReproduceResult, path: Path) -> Path:
    """One row per run (seed) and job: the final cumulative regret R_T of every run
    (the per-run exponent fits and the paired differences of REPRODUCTION.md need
    the runs, not only their mean). Seed ``s`` of two algorithms on one problem shares
    its function draws (common random numbers)."""
    name = result.experiment.name
    with atomic_open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(RUNS_COLUMNS)
        for job in result.jobs:
            finals = job["final_cumulative_regret"].reshape(-1).tolist()
            writer.writerows(
                (
                    name,
                    problem_label(job["problem"], job["steps"]),
                    job["algorithm"],
                    s,
                    "final_cumulative_regret",
                    f"{v:.10g}",
                )
                for s, v in enumerate(finals)
            )
    return path


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
    if problems[0] in DELAYED_SETTINGS:
        metrics = {"simple_regret": "simple regret (converted evaluations)"}
    elif problems[0] in CONSTRAINED_PROBLEMS:
        metrics = {
            "average_regret": "time-averaged regret R_t / t",
            "average_constraint_violation": "time-averaged CV V_t / t",
        }
    else:
        metrics = {"cumulative_regret": "cumulative regret R_t"}
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
    title = f"{_run_title(result)}: {result.seeds} seeds, mean ± s.e."
    fig.suptitle(textwrap.fill(title, width=60 * len(panels)), fontsize=10)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
    return path


def _run_title(result: ReproduceResult) -> str:
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
        f"{_run_title(result)}: {result.seeds} seeds; exponent 95% CI "
        f"({law.ci[0]:.3f}, {law.ci[1]:.3f})"
    )
    fig.suptitle(textwrap.fill(title, width=60), fontsize=10)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
    return path
