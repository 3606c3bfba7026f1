r"""Benchmark of the Ax strategies on standard test functions
(``botorch-bandits ax-bench``).

Every *job* is one (problem, strategy, seed): a fresh in-memory ``ax.Client``,
``trials`` trials made one at a time (``get_next_trials(max_trials=1)``, evaluate,
``complete_trial``). Jobs run in local worker processes (one torch thread each) or on
a ``distributed.LocalCluster`` on 127.0.0.1; a job is a function of its seed alone.

Problems (all minimized; :math:`f^*` is the stated minimum, below or at the true one,
so every regret is :math:`\ge 0`):

* ``branin``: Branin on :math:`[-5, 10] \times [0, 15]`, :math:`f^* = 0.397887`.
* ``hartmann6``: Hartmann6 on :math:`[0, 1]^6`, :math:`f^* = -3.32237`.
* ``hartmann6-in-20d``: Hartmann6 on the first 6 of 20 unit-interval parameters
  (14 inert dimensions).
* ``mixed``: :math:`x_1 \in [-5, 10]`, :math:`x_2 \in [0, 15]`, an integer
  :math:`k \in \{0..4\}`, an unordered choice :math:`c \in \{a, b, c\}`;
  :math:`f = \mathrm{Branin}(x_1, x_2) + (k - 2)^2/2 + \{a: 0, b: 1.5, c: 3\}[c]`,
  :math:`f^* = 0.397887` (:math:`k = 2`, :math:`c = a`).
* ``hartmann6-constrained``: Hartmann6 with the linear parameter constraint
  :math:`x_0 + x_1 \le 0.5` (the minimizer has :math:`x_0 + x_1 \approx 0.35`).
* ``branin-log``: Branin with :math:`x_1 = -5 + 15(\log_{10} lr + 4)/4` from a
  log-scale parameter :math:`lr \in [10^{-4}, 1]`.
* ``hartmann6-noisy``: Hartmann6 observed with Gaussian noise of sd 0.1 (seeded by
  seed and trial).

Recorded per trial: the observed value, the noise-free value :math:`f(x_t)`, the
cumulative regret :math:`R_t = \sum_{s \le t} f(x_s) - f^*` (the maximization sense
:math:`\sum_s \max(-f) - (-f)(x_s)`, nonnegative), the best noise-free value so far
:math:`b_t = \min_{s \le t} f(x_s)`, the simple regret :math:`r_t = b_t - f^*` and the
wall seconds of the ``get_next_trials`` call. Regrets use the noise-free function.

Strategies: ``"IGP-UCB"``, ``"GP-TS"``, ``"GP-UCB"`` (``bandit_generation_strategy``,
``mode="practical"``), ``"IGP-UCB (theory)"`` (``mode="theory"``) and
``"Ax default"`` (the strategy ``Client.configure_generation_strategy`` chooses, with
its default initialization budget, its Sobol seeded by the job's seed).

Outputs in ``out``: ``ax_bench.csv`` (one row per trial), ``summary.csv`` (per problem
and strategy: final cumulative and simple regret, mean and s.e. over seeds, median
generation seconds at trial 10 and at the last trial) and ``<problem>.png``
(cumulative and simple regret against the trial, mean ± s.e. bands).

References:
    Branin, Hartmann: L. C. W. Dixon, G. P. Szegő. *The Global Optimisation Problem:
    an Introduction.* In Towards Global Optimisation 2, North-Holland, 1978.
"""

from __future__ import annotations

import contextlib
import csv
import logging
import math
import os
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from botorch_bandits._io import (
    atomic_open,
    atomic_path,
    check_not_symlink,
    ignore_sigint,
)

# --------------------------------------------------------------------------------------
# problems
# --------------------------------------------------------------------------------------
BRANIN_MIN = 0.397887  # botorch.test_functions.Branin.optimal_value
HARTMANN6_MIN = -3.32237  # botorch.test_functions.Hartmann(dim=6).optimal_value
HARTMANN6_ARGMIN = (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573)
MIXED_OFFSET = {"a": 0.0, "b": 1.5, "c": 3.0}


@dataclass(frozen=True)
class Range:
    """A range parameter: ``kind`` ``"float"`` or ``"int"``, ``log`` scale or not."""

    name: str
    low: float
    high: float
    kind: str = "float"
    log: bool = False


@dataclass(frozen=True)
class Choice:
    """An unordered choice parameter over strings."""

    name: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Problem:
    """A minimization problem with a known minimum ``optimum`` (``<=`` the true one),
    attained (up to the stated digits) at ``optimizer``."""

    name: str
    title: str
    parameters: tuple[Range | Choice, ...]
    function: Callable[[Mapping[str, Any]], float]
    optimum: float
    optimizer: Mapping[str, Any]
    constraints: tuple[str, ...] = ()
    noise_sd: float = 0.0

    def __call__(self, params: Mapping[str, Any]) -> float:
        """The noise-free value at ``params``."""
        return self.function(params)

    def observe(self, params: Mapping[str, Any], seed: int, trial: int) -> float:
        """The observed value: noise-free plus Gaussian noise of sd ``noise_sd``,
        seeded by ``(seed, trial)``."""
        value = self.function(params)
        if self.noise_sd > 0:
            value += self.noise_sd * float(
                np.random.default_rng([seed, 13, trial]).normal()
            )
        return value


@cache
def _test_functions() -> tuple[Any, Any]:
    from botorch.test_functions import Branin, Hartmann

    return Branin(), Hartmann(dim=6)


def branin(x1: float, x2: float) -> float:
    """BoTorch's Branin (noise-free) at ``(x1, x2)``."""
    fn = _test_functions()[0]
    return float(fn.evaluate_true(torch.tensor([[x1, x2]], dtype=torch.double)))


def hartmann6(x: Sequence[float]) -> float:
    """BoTorch's Hartmann6 (noise-free) at ``x`` (6 numbers in [0, 1])."""
    fn = _test_functions()[1]
    return float(fn.evaluate_true(torch.tensor([list(x)], dtype=torch.double)))


def _hartmann6_params(p: Mapping[str, Any]) -> float:
    return hartmann6([p[f"x{i}"] for i in range(6)])


def _branin_params(p: Mapping[str, Any]) -> float:
    return branin(p["x1"], p["x2"])


def _mixed(p: Mapping[str, Any]) -> float:
    return branin(p["x1"], p["x2"]) + 0.5 * (p["k"] - 2) ** 2 + MIXED_OFFSET[p["c"]]


def _lr_to_x1(lr: float) -> float:
    return -5.0 + 15.0 * (math.log10(lr) + 4.0) / 4.0


def _branin_log(p: Mapping[str, Any]) -> float:
    return branin(_lr_to_x1(p["lr"]), p["x2"])


_UNIT6 = tuple(Range(f"x{i}", 0.0, 1.0) for i in range(6))
_H6_OPT = {f"x{i}": v for i, v in enumerate(HARTMANN6_ARGMIN)}
_BRANIN_XY = (Range("x1", -5.0, 10.0), Range("x2", 0.0, 15.0))

PROBLEMS: dict[str, Problem] = {
    p.name: p
    for p in (
        Problem(
            "branin",
            "Branin (2-D)",
            _BRANIN_XY,
            _branin_params,
            BRANIN_MIN,
            {"x1": math.pi, "x2": 2.275},
        ),
        Problem(
            "hartmann6",
            "Hartmann6 (6-D)",
            _UNIT6,
            _hartmann6_params,
            HARTMANN6_MIN,
            _H6_OPT,
        ),
        Problem(
            "hartmann6-in-20d",
            "Hartmann6 in 20-D (14 inert parameters)",
            tuple(Range(f"x{i}", 0.0, 1.0) for i in range(20)),
            _hartmann6_params,
            HARTMANN6_MIN,
            {**_H6_OPT, **{f"x{i}": 0.5 for i in range(6, 20)}},
        ),
        Problem(
            "mixed",
            "Branin + 0.5 (k - 2)² + offset(c): 2 floats, an integer, a choice",
            (*_BRANIN_XY, Range("k", 0, 4, kind="int"), Choice("c", ("a", "b", "c"))),
            _mixed,
            BRANIN_MIN,
            {"x1": math.pi, "x2": 2.275, "k": 2, "c": "a"},
        ),
        Problem(
            "hartmann6-constrained",
            "Hartmann6, x0 + x1 <= 0.5",
            _UNIT6,
            _hartmann6_params,
            HARTMANN6_MIN,
            _H6_OPT,
            constraints=("x0 + x1 <= 0.5",),
        ),
        Problem(
            "branin-log",
            "Branin, x1 from a log-scale lr in [1e-4, 1]",
            (Range("lr", 1e-4, 1.0, log=True), Range("x2", 0.0, 15.0)),
            _branin_log,
            BRANIN_MIN,
            {"lr": 10.0 ** (4.0 * (math.pi + 5.0) / 15.0 - 4.0), "x2": 2.275},
        ),
        Problem(
            "hartmann6-noisy",
            "Hartmann6, observation noise sd 0.1",
            _UNIT6,
            _hartmann6_params,
            HARTMANN6_MIN,
            _H6_OPT,
            noise_sd=0.1,
        ),
    )
}
"""The benchmark problems by name."""


def ax_parameters(problem: Problem) -> list[Any]:
    """The problem's parameters as Ax ``RangeParameterConfig`` /
    ``ChoiceParameterConfig``."""
    from ax import ChoiceParameterConfig, RangeParameterConfig

    configs: list[Any] = []
    for p in problem.parameters:
        if isinstance(p, Choice):
            configs.append(
                ChoiceParameterConfig(
                    name=p.name,
                    values=list(p.values),
                    parameter_type="str",
                    is_ordered=False,
                )
            )
        else:
            configs.append(
                RangeParameterConfig(
                    name=p.name,
                    bounds=(p.low, p.high),
                    parameter_type=p.kind,
                    scaling="log" if p.log else "linear",
                )
            )
    return configs


# --------------------------------------------------------------------------------------
# strategies
# --------------------------------------------------------------------------------------
AX_DEFAULT = "Ax default"
STRATEGIES: dict[str, tuple[str, str] | None] = {
    "IGP-UCB": ("IGP-UCB", "practical"),
    "GP-TS": ("GP-TS", "practical"),
    "GP-UCB": ("GP-UCB", "practical"),
    "IGP-UCB (theory)": ("IGP-UCB", "theory"),
    AX_DEFAULT: None,
}
"""Strategy labels: ``(algorithm, mode)`` of ``bandit_generation_strategy``, or
``None`` for Ax's default strategy."""


def bandit_strategy(
    label: str, seed: int, node_kwargs: Mapping[str, Any] | None = None
) -> Any:
    """The ``GenerationStrategy`` of a bandit label (not ``"Ax default"``), with
    ``node_kwargs`` (e.g. ``{"B": 3.0}`` or ``{"beta": 2.0}``) passed to the node."""
    from botorch_bandits.ax import bandit_generation_strategy

    algorithm, mode = STRATEGIES[label]
    return bandit_generation_strategy(
        algorithm=algorithm, seed=seed, mode=mode, **dict(node_kwargs or {})
    )


def _configure_strategy(
    client: Any, label: str, seed: int, node_kwargs: Mapping[str, Any] | None = None
) -> None:
    if STRATEGIES[label] is None:
        if node_kwargs:
            raise ValueError(
                f"`node_kwargs` are options of the bandit node; {label!r} takes none, "
                f"got {dict(node_kwargs)!r}."
            )
        # Ax's choice when none is set, its default initialization budget, seeded
        client.configure_generation_strategy(initialization_random_seed=seed)
    else:
        client.set_generation_strategy(bandit_strategy(label, seed, node_kwargs))


# --------------------------------------------------------------------------------------
# one job
# --------------------------------------------------------------------------------------
@contextlib.contextmanager
def _job_environment() -> Iterator[None]:
    """One torch thread, Ax's INFO logs and warnings off; restored afterwards (a job
    may run in the calling process)."""
    threads = torch.get_num_threads()
    disabled = logging.root.manager.disable
    torch.set_num_threads(1)
    logging.disable(logging.INFO)  # Ax logs every trial at INFO
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(disabled)
        torch.set_num_threads(threads)


def _new_client(
    prob: Problem,
    name: str,
    strategy: str,
    seed: int,
    node_kwargs: Mapping[str, Any] | None = None,
) -> Any:
    """A fresh in-memory ``Client`` on the problem (minimized) with the strategy."""
    from ax import Client  # (a fresh Dask worker: Ax logs at INFO on import)

    client = Client(random_seed=seed)
    client.configure_experiment(
        name=name,
        parameters=ax_parameters(prob),
        parameter_constraints=list(prob.constraints) or None,
    )
    client.configure_optimization(objective="-f")
    _configure_strategy(client, strategy, seed, node_kwargs)
    return client


def _complete(client: Any, prob: Problem, seed: int) -> float:
    """Make one trial, evaluate and complete it; the seconds of the decision."""
    start = time.perf_counter()
    ((index, params),) = client.get_next_trials(max_trials=1).items()
    seconds = time.perf_counter() - start
    value = prob.observe(params, seed, index)
    client.complete_trial(trial_index=index, raw_data={"f": value})
    return seconds


def run_job(
    problem: str,
    strategy: str,
    seed: int,
    trials: int,
    node_kwargs: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One (problem, strategy, seed): a fresh in-memory ``Client``, ``trials`` trials
    one at a time (``node_kwargs``: options of a bandit strategy's node). Returns the
    job's keys and per-trial lists ``value`` (observed), ``noise_free_value``,
    ``cumulative_regret``, ``best_value``, ``simple_regret``, ``gen_seconds`` (of each
    ``get_next_trials`` call)."""
    prob = PROBLEMS[problem]
    values, true_values, gen_seconds = [], [], []
    with _job_environment():
        client = _new_client(
            prob, f"ax-bench-{problem}-{seed}", strategy, seed, node_kwargs
        )
        for _ in range(trials):
            start = time.perf_counter()
            new = client.get_next_trials(max_trials=1)
            gen_seconds.append(time.perf_counter() - start)
            if len(new) != 1:
                raise RuntimeError(
                    f"{strategy} on {problem} (seed {seed}) made {len(new)} trials "
                    f"for one request at trial {len(values) + 1}."
                )
            ((index, params),) = new.items()
            value = prob.observe(params, seed, index)
            client.complete_trial(trial_index=index, raw_data={"f": value})
            values.append(value)
            true_values.append(prob(params))
    true = np.asarray(true_values)
    best = np.minimum.accumulate(true)
    return {
        "problem": problem,
        "strategy": strategy,
        "seed": seed,
        "value": values,
        "noise_free_value": true_values,
        "cumulative_regret": np.cumsum(true - prob.optimum).tolist(),
        "best_value": best.tolist(),
        "simple_regret": (best - prob.optimum).tolist(),
        "gen_seconds": gen_seconds,
    }


# --------------------------------------------------------------------------------------
# the benchmark
# --------------------------------------------------------------------------------------
CSV_COLUMNS = (
    "problem",
    "strategy",
    "seed",
    "trial",
    "value",
    "noise_free_value",
    "cumulative_regret",
    "best_value",
    "simple_regret",
    "gen_seconds",
)
SUMMARY_COLUMNS = (
    "problem",
    "strategy",
    "seeds",
    "trials",
    "cumulative_regret_mean",
    "cumulative_regret_se",
    "simple_regret_mean",
    "simple_regret_se",
    "gen_seconds_median_t10",
    "gen_seconds_median_last",
)
GEN_MARK = 10
"""The trial whose median generation seconds the summary reports (with the last)."""


@dataclass
class BenchResult:
    """The jobs (sorted by problem, strategy, seed), the summary rows and the files."""

    jobs: list[dict[str, Any]]
    problems: tuple[str, ...]
    strategies: tuple[str, ...]
    seeds: int
    trials: int
    seconds: float
    summary: list[dict[str, Any]] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)

    def comparison_lines(self) -> list[str]:
        """Per problem: is practical IGP-UCB's mean cumulative regret below Ax
        default's, and is its mean final simple regret within one s.e. (Ax's) of Ax
        default's, or below it. Empty unless both strategies ran."""
        if not {"IGP-UCB", AX_DEFAULT} <= set(self.strategies):
            return []
        rows = {(r["problem"], r["strategy"]): r for r in self.summary}
        lines = []
        for p in self.problems:
            ours, ax = rows[(p, "IGP-UCB")], rows[(p, AX_DEFAULT)]
            below = ours["cumulative_regret_mean"] < ax["cumulative_regret_mean"]
            close = (
                ours["simple_regret_mean"]
                <= ax["simple_regret_mean"] + ax["simple_regret_se"]
            )
            lines.append(
                f"  {p:22s} cumulative regret below Ax default: "
                f"{'yes' if below else 'no ':3s} ({ours['cumulative_regret_mean']:.3f} "
                f"vs {ax['cumulative_regret_mean']:.3f});  simple regret within one "
                f"s.e. of Ax default or better: {'yes' if close else 'no ':3s} "
                f"({ours['simple_regret_mean']:.4f} vs {ax['simple_regret_mean']:.4f}"
                f" ± {ax['simple_regret_se']:.4f})"
            )
        return lines

    def table_lines(self) -> list[str]:
        """The summary as a printed table."""
        head = (
            f"  {'problem':22s} {'strategy':17s} {'cumulative regret':>21s}  "
            f"{'simple regret':>21s}  {f'gen s t={GEN_MARK}':>10s} "
            f"{f'gen s t={self.trials}':>10s}"
        )
        lines = [head]
        for r in self.summary:
            mark = r["gen_seconds_median_t10"]
            lines.append(
                f"  {r['problem']:22s} {r['strategy']:17s} "
                f"{r['cumulative_regret_mean']:10.3f} ± {r['cumulative_regret_se']:8.3f}  "
                f"{r['simple_regret_mean']:10.4f} ± {r['simple_regret_se']:8.4f}  "
                f"{'n/a' if mark is None else f'{mark:.3f}':>10s} "
                f"{r['gen_seconds_median_last']:10.3f}"
            )
        return lines


def _check_names(
    arg: str, given: Sequence[str] | None, known: Sequence[str]
) -> tuple[str, ...]:
    if given is None:
        return tuple(known)
    names = tuple(given)
    unknown = [n for n in names if n not in known]
    if unknown or not names or len(set(names)) != len(names):
        raise ValueError(
            f"`{arg}` must be distinct names among {list(known)}, got {list(names)!r}."
        )
    return names


def _init_worker() -> None:
    """One torch thread per worker; Ctrl-C is left to the main process."""
    torch.set_num_threads(1)
    ignore_sigint()


def run_bench(
    problems: Sequence[str] | None = None,
    strategies: Sequence[str] | None = None,
    seeds: int = 5,
    trials: int = 60,
    workers: int | None = None,
    dask: bool = False,
    out: str | Path | None = "runs/ax-bench",
    show_progress: bool = True,
    resume: bool = False,
) -> BenchResult:
    """Run every (problem, strategy, seed) job, seeds ``0..seeds-1``; write the CSVs
    and PNGs to ``out`` (``None``: write nothing).

    Each finished job is also kept in ``out/jobs/`` (one JSON file, written
    atomically); ``resume=True`` reuses the kept jobs of the same problem, strategy,
    seed and number of trials (a job is a function of those: only its generation
    seconds differ between runs) and runs the others -- an interrupted full-size run
    continues where it stopped.

    ``workers``: processes (default: the CPU count, at most the number of jobs; 1 runs
    the jobs in this process). ``dask``: run them on a ``distributed.LocalCluster`` on
    127.0.0.1 with ``workers`` processes of one thread each."""
    probs = _check_names("problems", problems, list(PROBLEMS))
    strats = _check_names("strategies", strategies, list(STRATEGIES))
    for arg, value in (("seeds", seeds), ("trials", trials), ("workers", workers)):
        if value is None and arg == "workers":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"`{arg}` must be an integer >= 1, got {arg}={value!r}.")
    out_dir = None if out is None else Path(out)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name in ("ax_bench.csv", "summary.csv", *(f"{p}.png" for p in probs)):
            check_not_symlink(out_dir / name)  # before any work
    for label in strats:  # a strategy's arguments are checked when it is built
        if STRATEGIES[label] is not None:
            bandit_strategy(label, 0)
    all_specs = [
        {"problem": p, "strategy": s, "seed": k, "trials": trials}
        for p in probs
        for s in strats
        for k in range(seeds)
    ]
    keep = None if out_dir is None else _JobStore(out_dir / "jobs")
    kept = [] if keep is None or not resume else keep.load(all_specs)
    found = {(j["problem"], j["strategy"], j["seed"]) for j in kept}
    specs = [
        s for s in all_specs if (s["problem"], s["strategy"], s["seed"]) not in found
    ]
    n = max(1, min(workers or os.cpu_count() or 1, len(specs)))
    bar = None
    if show_progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(all_specs), initial=len(kept), desc="ax-bench", unit="job")
    bar = _Progress(bar, keep)
    start = time.perf_counter()
    try:
        if not specs:
            jobs = []
        elif dask:
            jobs = _run_dask(specs, n, bar)
        elif n <= 1:
            jobs = [_advance(bar, run_job(**spec)) for spec in specs]
        else:
            with ProcessPoolExecutor(max_workers=n, initializer=_init_worker) as pool:
                try:
                    jobs = _run_pool(pool, specs, bar)
                except KeyboardInterrupt:  # the workers ignore it: stop them now
                    for proc in list((pool._processes or {}).values()):
                        proc.terminate()
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
    finally:
        bar.close()
    jobs = kept + jobs
    order = {
        (s["problem"], s["strategy"], s["seed"]): i for i, s in enumerate(all_specs)
    }
    jobs.sort(key=lambda j: order[(j["problem"], j["strategy"], j["seed"])])
    result = BenchResult(
        jobs, probs, strats, seeds, trials, time.perf_counter() - start
    )
    result.summary = summarize(result)
    if out_dir is not None:
        result.paths = [
            write_csv(result, out_dir / "ax_bench.csv"),
            write_summary(result, out_dir / "summary.csv"),
            *(plot(result, p, out_dir / f"{p}.png") for p in probs),
        ]
    return result


class _JobStore:
    """Finished jobs as JSON files in a folder, one per (problem, strategy, seed,
    trials)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, spec: Mapping[str, Any]) -> Path:
        slug = "".join(
            c if c.isalnum() or c in "-." else "_" for c in str(spec["strategy"])
        )
        return self.folder / (
            f"{spec['problem']}__{slug}__seed{spec['seed']}__T{spec['trials']}.json"
        )

    def save(self, job: dict[str, Any]) -> None:
        import json

        self.folder.mkdir(parents=True, exist_ok=True)
        spec = {**job, "trials": len(job["value"])}
        with atomic_open(self.path(spec), "w") as fh:
            json.dump(job, fh)

    def load(self, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        import json

        jobs = []
        for spec in specs:
            path = self.path(spec)
            if path.is_file():
                with open(path) as fh:
                    job = json.load(fh)
                if len(job["value"]) == spec["trials"]:
                    jobs.append(job)
        return jobs


class _Progress:
    """The tqdm bar (or none) and the job store, advanced as each job finishes."""

    def __init__(self, bar: Any, keep: _JobStore | None) -> None:
        self.bar, self.keep = bar, keep

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _advance(progress: _Progress, job: dict[str, Any]) -> dict[str, Any]:
    if progress.keep is not None:
        progress.keep.save(job)
    if progress.bar is not None:
        progress.bar.update(1)
        progress.bar.set_postfix_str(
            f"{job['problem']} / {job['strategy']} / {job['seed']}"
        )
    return job


def _run_pool(
    pool: Executor, specs: list[dict[str, Any]], bar: Any
) -> list[dict[str, Any]]:
    futures = [pool.submit(run_job, **spec) for spec in specs]
    return [_advance(bar, fut.result()) for fut in as_completed(futures)]


def _run_dask(
    specs: list[dict[str, Any]], workers: int, bar: Any
) -> list[dict[str, Any]]:
    try:
        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError as err:  # the cli names the extra before any work
        raise ImportError(
            "--dask needs the `distributed` package: pip install 'botorch-bandits[dask]'"
        ) from err
    cluster = LocalCluster(
        host="127.0.0.1",
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    )
    client = Client(cluster)
    try:
        futures = [client.submit(run_job, **spec, pure=False) for spec in specs]
        return [_advance(bar, fut.result()) for fut in dask_completed(futures)]
    finally:
        client.close()
        cluster.close()


# --------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------
def _curves(result: BenchResult, problem: str, strategy: str, key: str) -> np.ndarray:
    """``seeds x trials`` of one per-trial record."""
    return np.asarray(
        [
            j[key]
            for j in result.jobs
            if j["problem"] == problem and j["strategy"] == strategy
        ],
        dtype=float,
    )


def _mean_se(runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from botorch_bandits.benchmarks.demo import mean_and_standard_error

    mean, se = mean_and_standard_error(torch.as_tensor(runs))
    return mean.numpy(), se.numpy()


def summarize(result: BenchResult) -> list[dict[str, Any]]:
    """Per problem and strategy: the final cumulative and simple regret (mean, s.e.
    over seeds) and the median seconds of ``get_next_trials`` at trial 10 (``None``
    when fewer trials ran) and at the last trial."""
    rows = []
    for p in result.problems:
        for s in result.strategies:
            cum_mean, cum_se = _mean_se(_curves(result, p, s, "cumulative_regret"))
            sr_mean, sr_se = _mean_se(_curves(result, p, s, "simple_regret"))
            gen = _curves(result, p, s, "gen_seconds")
            rows.append(
                {
                    "problem": p,
                    "strategy": s,
                    "seeds": result.seeds,
                    "trials": result.trials,
                    "cumulative_regret_mean": float(cum_mean[-1]),
                    "cumulative_regret_se": float(cum_se[-1]),
                    "simple_regret_mean": float(sr_mean[-1]),
                    "simple_regret_se": float(sr_se[-1]),
                    "gen_seconds_median_t10": float(np.median(gen[:, GEN_MARK - 1]))
                    if result.trials >= GEN_MARK
                    else None,
                    "gen_seconds_median_last": float(np.median(gen[:, -1])),
                }
            )
    return rows


def write_csv(result: BenchResult, path: Path) -> Path:
    """One row per (problem, strategy, seed, trial); trials count from 1."""
    with atomic_open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_COLUMNS)
        for j in result.jobs:
            for t in range(len(j["value"])):
                writer.writerow(
                    (
                        j["problem"],
                        j["strategy"],
                        j["seed"],
                        t + 1,
                        *(repr(float(j[k][t])) for k in CSV_COLUMNS[4:-1]),
                        f"{j['gen_seconds'][t]:.6f}",
                    )
                )
    return path


def write_summary(result: BenchResult, path: Path) -> Path:
    """The :func:`summarize` rows; an empty cell where trial 10 did not run."""
    with atomic_open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(SUMMARY_COLUMNS)
        for r in result.summary:
            writer.writerow(["" if r[c] is None else r[c] for c in SUMMARY_COLUMNS])
    return path


def plot(result: BenchResult, problem: str, path: Path) -> Path:
    """Cumulative regret and simple regret against the trial for every strategy on
    ``problem``: mean ± s.e. over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    trials = np.arange(1, result.trials + 1)
    for s in result.strategies:
        for ax, key in ((left, "cumulative_regret"), (right, "simple_regret")):
            mean, se = _mean_se(_curves(result, problem, s, key))
            (line,) = ax.plot(trials, mean, label=s)
            ax.fill_between(
                trials, mean - se, mean + se, alpha=0.2, color=line.get_color()
            )
    left.set_ylabel("cumulative regret R_t")
    right.set_ylabel("simple regret r_t")
    right.set_yscale("log")  # r_t > 0: each stated optimum is below the true one
    for ax in (left, right):
        ax.set_xlabel("trial t")
        ax.grid(alpha=0.3)
    left.legend(fontsize="small")
    fig.suptitle(
        f"{PROBLEMS[problem].title}: {result.seeds} seed"
        f"{'s' if result.seeds > 1 else ''}, mean ± s.e."
    )
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120)
    plt.close(fig)
    return path


__all__ = [
    "AX_DEFAULT",
    "CSV_COLUMNS",
    "PROBLEMS",
    "STRATEGIES",
    "SUMMARY_COLUMNS",
    "BenchResult",
    "Choice",
    "Problem",
    "Range",
    "ax_parameters",
    "bandit_strategy",
    "branin",
    "hartmann6",
    "plot",
    "run_bench",
    "run_job",
    "summarize",
    "write_csv",
    "write_summary",
]


# --------------------------------------------------------------------------------------
# generation time against the number of completed trials
# --------------------------------------------------------------------------------------
#: trials the strategy makes itself before the Sobol points are attached (Ax's
#: default initialization budget, and the practical mode's)
GROWTH_INIT = 5


def generation_growth(
    problem: str = "hartmann6",
    sizes: Sequence[int] = (100, 200, 400),
    strategies: Sequence[str] = ("IGP-UCB", "IGP-UCB (theory)", AX_DEFAULT),
    repeats: int = 3,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Seconds of one ``get_next_trials(max_trials=1)`` call on an experiment that
    already holds ``n`` completed trials, for each ``n`` in ``sizes`` and each
    strategy: the strategy makes its first ``GROWTH_INIT`` trials, then ``n`` minus
    those completed trials at scrambled-Sobol points (the same for every strategy) are
    attached with their values, then ``repeats`` decisions are timed (each
    completed before the next; the median is reported). The node recomputes its
    state from the experiment on every call, so this is the cost a user waits for
    at that point of a long experiment."""
    prob = PROBLEMS[problem]
    _check_names("strategies", strategies, list(STRATEGIES))
    rows = []
    for n in sizes:
        for label in strategies:
            with _job_environment():
                client = _new_client(prob, f"growth-{problem}-{n}", label, seed)
                # the first trials (the initialization) made by the strategy itself
                for _ in range(min(GROWTH_INIT, n)):
                    _complete(client, prob, seed)
                for params in _sobol_points(prob, n - GROWTH_INIT, seed):
                    index = client.attach_trial(parameters=params)
                    value = prob.observe(params, seed, index)
                    client.complete_trial(trial_index=index, raw_data={"f": value})
                seconds = [_complete(client, prob, seed) for _ in range(repeats)]
            rows.append(
                {
                    "problem": problem,
                    "strategy": label,
                    "completed": n,
                    "seconds_median": float(np.median(seconds)),
                    "seconds": seconds,
                }
            )
    return rows


def unit_to_params(ranges: Sequence[Range], unit: Sequence[float]) -> dict[str, float]:
    """The parameters at a point ``unit`` of the unit cube: each float range scaled
    linearly, or log-linearly for a ``log`` range."""
    params = {}
    for p, u in zip(ranges, unit, strict=True):
        if p.log:
            lo, hi = math.log10(p.low), math.log10(p.high)
            params[p.name] = 10.0 ** (lo + u * (hi - lo))
        else:
            params[p.name] = p.low + u * (p.high - p.low)
    return params


def _sobol_points(prob: Problem, count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` points of the problem's space (scrambled Sobol in its box, kept if
    they satisfy its constraints; ranges only)."""
    from torch.quasirandom import SobolEngine

    if count <= 0:
        return []
    if any(isinstance(p, Choice) or p.kind != "float" for p in prob.parameters):
        raise ValueError(
            f"generation_growth needs a float-only problem, not {prob.name}."
        )
    engine = SobolEngine(len(prob.parameters), scramble=True, seed=seed + 7)
    points: list[dict[str, Any]] = []
    while len(points) < count:
        for row in engine.draw(count).tolist():
            params = unit_to_params(prob.parameters, row)
            if all(_satisfies(c, params) for c in prob.constraints):
                points.append(params)
    return points[:count]


def _satisfies(constraint: str, params: Mapping[str, Any]) -> bool:
    """``"x0 + x1 <= 0.5"`` (a sum of parameters, ``<=`` a number) at ``params``."""
    lhs, rhs = constraint.split("<=")
    return sum(params[t.strip()] for t in lhs.split("+")) <= float(rhs)
