"""The main job (``botorch-bandits demo``): an Ax experiment with the bandit strategy
on Chowdhury & Gopalan's RKHS test functions (one per seed), trials evaluated
asynchronously (out of order, yet as a function of the seed: a virtual clock),
stored in SQLite, resumable after a kill, and compared with Ax's default strategy
on the same functions, budget, schedule and noise. By default the bandit runs in
the practical mode (told nothing about f, like Ax's default); what runs and what a
resume restores: ``docs/demo.md``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from botorch_bandits._install import install_hint
from botorch_bandits._io import check_not_symlink, ignore_sigint, stop_now
from botorch_bandits.demo.async_loop import duration, run_async
from botorch_bandits.demo.ax_demo_options import check_run_options
from botorch_bandits.demo.ax_demo_report import (
    DemoResult,
    label,
    write_costs,
    write_regret,
)
from botorch_bandits.models import fixed_threads
from botorch_bandits.test_functions.problems import rkhs_function
from botorch_bandits.upstream import (
    client_experiment,
    client_generation_strategy,
    generation_node_name,
    generator_key,
)
from botorch_bandits.validation import check_seed

EXPERIMENTS = {"bandit": "demo-igp-ucb", "ax-default": "demo-ax-default"}
LABELS = {"bandit": "IGP-UCB (botorch_bandits)", "ax-default": "Ax default strategy"}
#: Ax generation nodes that choose points without a model (the initial trials)
INITIAL_NODES = ("CenterOfSearchSpace", "Sobol")


def experiment_name(strategy: str, seed: int) -> str:
    """The name of one half of one seed in ``demo.db``.

    Args:
        strategy: The half, a key of :data:`EXPERIMENTS` (``"bandit"`` or
            ``"ax-default"``).
        seed: The seed.

    Returns:
        The experiment's name, ``<the half's experiment>-seed<seed>``.

    Raises:
        KeyError: If ``strategy`` is not a key of :data:`EXPERIMENTS`.

    Example:
        >>> experiment_name("bandit", 3)
        'demo-igp-ucb-seed3'
    """
    return f"{EXPERIMENTS[strategy]}-seed{seed}"


@dataclass(frozen=True)
class DemoFunction:
    """:math:`f(x) = \\sum_i \\alpha_i \\exp(-(x - x_i)^2 / 2\\ell^2)` on [0, 1] (NumPy,
    cheap to send to worker processes).

    Attributes:
        centers: The centres :math:`x_i` in [0, 1].
        coefficients: The coefficients :math:`\\alpha_i`, one per centre.
        lengthscale: The lengthscale :math:`\\ell` of the SE kernel.
        noise_sd: The standard deviation of the observation noise
            (:func:`evaluate`; the theory mode's ``R``).
        rkhs_norm: The function's RKHS norm (the theory mode's ``B``).
        seed: The seed the function was built from (it seeds :func:`evaluate`'s
            noise too).

    Example:
        >>> fn = demo_function(seed=0)
        >>> fn(np.array([0.25, 0.5])).shape
        (2,)
    """

    centers: tuple[float, ...]
    coefficients: tuple[float, ...]
    lengthscale: float
    noise_sd: float
    rkhs_norm: float
    seed: int

    def __call__(self, x: float | np.ndarray) -> np.ndarray:
        """:math:`f` at ``x``, without noise.

        Args:
            x: A point in [0, 1], or an array of points of any shape.

        Returns:
            :math:`f(x)`, the shape of ``x`` (a NumPy scalar for a number).
        """
        c = np.asarray(self.centers)
        d = np.subtract.outer(np.asarray(x, dtype=float), c)
        return np.exp(-0.5 * (d / self.lengthscale) ** 2) @ np.asarray(
            self.coefficients
        )

    @property
    def optimum(self) -> float:
        """:math:`\\max_{[0, 1]} f` on a grid of step 1e-5."""
        return float(self(np.linspace(0.0, 1.0, 100_001)).max())


def demo_function(seed: int = 0) -> DemoFunction:
    """The RKHS function of
    :func:`~botorch_bandits.test_functions.problems.rkhs_function` (SE kernel,
    lengthscale 0.2, 100 centers) for ``seed``.

    Args:
        seed: The seed of the RKHS function (default 0).

    Returns:
        The :class:`DemoFunction`, with the problem's noise and RKHS norm.

    Example:
        >>> fn = demo_function(seed=3)
        >>> best = fn.optimum
    """
    p = rkhs_function(kernel="rbf", lengthscale=0.2, seed=seed)
    return DemoFunction(
        centers=tuple(p.arms.reshape(-1).tolist()),
        coefficients=tuple(p.coefficients.tolist()),
        lengthscale=0.2,
        noise_sd=float(p.noise_sd),
        rkhs_norm=float(p.rkhs_norm),
        seed=seed,
    )


def evaluate(fn: DemoFunction, params: dict, trial_index: int) -> dict[str, float]:
    """One noisy evaluation (runs in a worker); the noise is seeded by the trial
    index, so evaluating a trial again gives the same value.

    Args:
        fn: The seed's function.
        params: The trial's parameters, ``{"x": x}``.
        trial_index: The trial's index (it seeds the noise, with ``fn.seed``).

    Returns:
        The raw data ``{"f": f(x) + noise}``, the noise normal with standard
        deviation ``fn.noise_sd``.

    Example:
        >>> evaluate(demo_function(0), {"x": 0.5}, trial_index=4)
    """
    noise = np.random.default_rng([fn.seed, 7, trial_index]).normal()
    return {"f": float(fn(params["x"])) + fn.noise_sd * float(noise)}


# --------------------------------------------------------------------------------------
# the demo
# --------------------------------------------------------------------------------------
MODES = ("theory", "practical")


def _bandit_strategy(seed: int, fn: DemoFunction, mode: str = "theory") -> Any:
    from botorch_bandits.ax.strategy import bandit_generation_strategy

    if mode == "practical":  # as a user runs it: every option at its default
        return bandit_generation_strategy(algorithm="IGP-UCB", seed=seed)
    return bandit_generation_strategy(
        algorithm="IGP-UCB",
        mode="theory",  # the RKHS test function's B, R and kernel are known
        num_init=3,
        seed=seed,
        pending="hallucinate",
        kernel="rbf",
        lengthscale=fn.lengthscale,
        noise=fn.noise_sd**2,
        B=fn.rkhs_norm,
        R=fn.noise_sd,
        delta=0.1,
        num_candidates=512,
    )


def _complete_setup(
    client: Any, strategy: str, seed: int, fn: DemoFunction, mode: str = "theory"
) -> None:
    """Finish what a killed run may have left unset: the optimization config and the
    generation strategy (each saved by its own ``Client`` call); a strategy other
    than the one the half runs is an error, never a silent substitute."""
    if client_experiment(client).optimization_config is None:
        client.configure_optimization(objective="f")
    gs = client_generation_strategy(client)
    # the name of the strategy this half builds (the practical one starts at the
    # centre): a stored strategy of another name is not resumed as this one
    want = _bandit_strategy(seed, fn, mode).name if strategy == "bandit" else None
    if gs is None:
        if client_experiment(client).trials:
            raise ValueError(
                f"Experiment {client_experiment(client).name!r} has trials but no stored "
                "generation strategy; it cannot be resumed."
            )
        if strategy == "bandit":
            client.set_generation_strategy(_bandit_strategy(seed, fn, mode))
        else:
            client.configure_generation_strategy()
    elif want is not None and gs.name != want:
        raise ValueError(
            f"Experiment {client_experiment(client).name!r} stores the strategy {gs.name!r}, "
            f"not {want!r}; it cannot be resumed as {LABELS[strategy]}."
        )


def _open_client(
    name: str,
    storage: Any,
    seed: int,
    strategy: str,
    fn: DemoFunction,
    resume: bool,
    mode: str = "theory",
) -> Any:
    """The half's client: loaded from the file when it holds the experiment (a
    resumed run, killed at any point of its setup), else created."""
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax.sql import experiment_names, load_client

    if resume and name in experiment_names():
        client = load_client(name, storage, random_seed=seed)
    else:
        client = Client(storage_config=storage, random_seed=seed)
        client.configure_experiment(
            name=name,
            parameters=[
                RangeParameterConfig(
                    name="x", bounds=(0.0, 1.0), parameter_type="float"
                )
            ],
        )
    _complete_setup(client, strategy, seed, fn, mode)
    return client


def regret_curve(client: Any, fn: DemoFunction) -> np.ndarray:
    """Cumulative regret :math:`\\sum_t f^* - f(x_t)` over the trials in index
    order (failed trials count their regret too: the point was spent).

    Args:
        client: The Ax ``Client`` of the experiment (single-arm trials of the
            parameter ``x``).
        fn: The function the trials were evaluated on (:math:`f^*` is its
            :attr:`~DemoFunction.optimum`).

    Returns:
        The cumulative regret after each trial, shape ``n`` (``n`` trials).
    """
    xs = [
        t.arms[0].parameters["x"]
        for t in sorted(
            client_experiment(client).trials.values(), key=lambda t: t.index
        )
    ]
    return np.cumsum(fn.optimum - fn(np.asarray(xs, dtype=float)))


class _CountedFallbacks(logging.Filter):
    """Drops Ax's warning that a node switched to its fallback generator: the
    demo counts those trials from the stored runs (:func:`trial_sources`) and
    prints the count with the results."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "switching to fallback" not in record.getMessage()


_NODE_LOGGER = "ax.generation_strategy.generation_node"


def trial_sources(client: Any) -> np.ndarray:
    """Where each trial (in index order) came from: ``"initial"`` (a node that
    chooses points without a model, :data:`INITIAL_NODES`), ``"fallback"`` (a
    model node's fallback generator, e.g. Ax's Sobol after its model proposed
    already-evaluated points) or ``"model"``.

    Args:
        client: The Ax ``Client`` of the experiment.

    Returns:
        An object array of shape ``n`` (``n`` trials): :func:`source_of` the node and
        generator of each trial's first generator run.
    """
    trials = sorted(client_experiment(client).trials.values(), key=lambda t: t.index)
    return np.asarray(
        [
            source_of(generation_node_name(gr), generator_key(gr))
            for gr in (t.generator_runs[0] for t in trials)
        ],
        dtype=object,
    )


def source_of(node: str | None, key: str | None) -> str:
    """A trial's source from the name of the node that made it and its generator's
    key: Ax names a node's fallback run ``Fallback_<generator>`` (Ax 1.3:
    ``Fallback_Sobol``); an initial node's own Sobol run is initial.

    Args:
        node: The name of the generation node that made the trial (``None`` where
            none is recorded).
        key: The key of the node's generator for that run (``None`` where none is
            recorded).

    Returns:
        ``"initial"`` (a node of :data:`INITIAL_NODES`), ``"fallback"`` (a key that
        starts with ``Fallback`` or names an initial node) or ``"model"``.

    Example:
        >>> source_of("MBM", "Fallback_Sobol")
        'fallback'
    """
    if node in INITIAL_NODES:
        return "initial"
    if key is not None and (key.startswith("Fallback") or key in INITIAL_NODES):
        return "fallback"
    return "model"


def trial_seconds(client: Any) -> np.ndarray:
    """Seconds from each trial's creation to the next trial's, in index order (one
    fewer than the trials): the cost of a trial -- the decision, the completion and
    the storage writes -- as the loop saw it (the demo's evaluations are instant; a
    pause or a resumed kill shows as one long gap).

    Args:
        client: The Ax ``Client`` of the experiment.

    Returns:
        The gaps between consecutive trials' creation times, in seconds, shape
        ``n - 1`` (``n`` trials; empty for fewer than two).
    """
    created = [
        t.time_created.timestamp()
        for t in sorted(
            client_experiment(client).trials.values(), key=lambda t: t.index
        )
    ]
    return np.diff(np.asarray(created, dtype=float))


@contextlib.contextmanager
def _closed(close: Callable[[], None]) -> Iterator[None]:
    try:
        yield
    finally:
        close()


def run_demo(
    out_dir: str | Path = "runs/demo",
    trials: int = 30,
    parallelism: int = 3,
    seed: int = 0,
    seeds: int = 5,
    resume: bool = False,
    executor: Executor | None = None,
    show_progress: bool = True,
    strategies: tuple[str, ...] = ("bandit", "ax-default"),
    stop_after: int | None = None,
    mode: str = "practical",
    torch_threads: int | None = 1,
) -> DemoResult:
    """Run (or resume) the demo on the RKHS functions of seeds ``seed, ...,
    seed + seeds - 1`` (each seed: its own function, noise, schedule and Ax seed);
    writes ``demo.db`` (SQLite), ``regret.csv`` and ``regret.png`` (mean ± s.e. over
    seeds), ``cost.csv`` and ``cost.png`` (:func:`trial_seconds`) to ``out_dir``.
    ``stop_after``: stop each experiment after that many completions in this call
    (a stand-in for a kill, for tests). ``torch_threads``: torch's threads during
    the run (restored after; None leaves them): the decisions fit GPs on a few
    dozen points, and one thread keeps torch's threads from contending with other
    processes on a loaded machine.

    Args:
        out_dir: The output folder, made if missing (default ``"runs/demo"``).
        trials: The trials of each experiment, an integer >= 4 (default 30).
        parallelism: The trials in flight at once, an integer >= 1 (default 3); also
            the workers of the run's own process pool.
        seed: The first seed (default 0).
        seeds: The number of seeds, an integer >= 1 (default 5).
        resume: Continue the run stored in ``out_dir/demo.db`` (default ``False``: a
            fresh run, which replaces the file); the values that make the run
            (:data:`~botorch_bandits.demo.ax_demo_options.RUN_OPTIONS`) must be
            those it began with.
        executor: The pool that evaluates the trials (default ``None``: a process
            pool of ``parallelism`` workers, shut down after the run).
        show_progress: Show a tqdm progress bar (default ``True``).
        strategies: The halves run on each seed, among ``"bandit"`` and
            ``"ax-default"`` (default both).
        stop_after: The completions after which each experiment stops in this call
            (default ``None``: run to ``trials``).
        mode: The bandit's mode (default ``"practical"``: told nothing about f;
            ``"theory"``: told f's kernel, RKHS norm and noise).
        torch_threads: torch's threads during the run, an integer >= 1 or ``None``
            (default 1).

    Returns:
        The run's :class:`DemoResult`: per strategy the ``seeds x trials``
        cumulative regret and trial sources, and each seed's trial seconds. A run
        stopped early (``stop_after``) with curves of unequal length has no curves
        or sources and writes no regret or cost files.

    Raises:
        ValueError: If ``trials``, ``parallelism``, ``seeds`` or ``torch_threads`` is
            not an integer at least its minimum, ``seed`` is not an integer from 0
            to 2**63 - 1, ``mode`` or a strategy is unknown, an output file is a
            symlink, or a resumed file holds another run
            (:func:`~botorch_bandits.demo.ax_demo_options.check_run_options`) or an
            experiment that cannot be resumed as its half.
        FileNotFoundError: If ``resume`` and ``out_dir`` holds no ``demo.db``.
        DatabaseBusyError: If another process holds ``demo.db``'s writer lock
            (:func:`~botorch_bandits.ax.sql.writer_lock`).
        ModuleNotFoundError: Without matplotlib (or tqdm, with ``show_progress``):
            the ``plot`` extra.

    Example:
        >>> result = run_demo("runs/demo", trials=30, seeds=5)
        >>> result.final("bandit")  # the cumulative regret of each seed
    """
    from botorch_bandits.ax.sql import close_storage, sqlite_storage, writer_lock

    _check_demo_arguments(
        trials, parallelism, seed, seeds, mode, strategies, torch_threads
    )
    out, db = _prepare_output(Path(out_dir), resume, show_progress)
    run = _DemoRun(
        tuple(range(seed, seed + seeds)),
        tuple(strategies),
        trials,
        parallelism,
        resume,
        stop_after,
        mode,
    )
    # one writer per database; the file let go of when the run ends
    with fixed_threads(torch_threads), writer_lock(db), _closed(close_storage):
        if not resume and db.exists():
            db.unlink()  # a fresh run replaces the previous one
        check_run_options(
            db,
            resume,
            dict(
                trials=trials,
                parallelism=parallelism,
                seed=seed,
                seeds=seeds,
                mode=mode,
                strategies=list(strategies),
            ),
        )
        storage = sqlite_storage(db)
        curves, sources, costs = _run_all(run, storage, executor, show_progress)
        return _demo_result(out, run, curves, sources, costs)


@dataclass(frozen=True)
class _DemoRun:
    """What one call of :func:`run_demo` runs: its seeds, strategies and sizes."""

    seeds: tuple[int, ...]
    strategies: tuple[str, ...]
    trials: int
    parallelism: int
    resume: bool
    stop_after: int | None
    mode: str


#: per strategy, one array per seed (regret curves, trial sources or seconds)
_PerStrategy = dict[str, list[np.ndarray]]


def _check_demo_arguments(
    trials: int,
    parallelism: int,
    seed: int,
    seeds: int,
    mode: str,
    strategies: tuple[str, ...],
    torch_threads: int | None,
) -> None:
    """Refuse a size below its minimum, a bad seed, an unknown mode or strategy."""
    for name, value, low in (
        ("trials", trials, 4),
        ("parallelism", parallelism, 1),
        ("seeds", seeds, 1),
        ("torch_threads", 1 if torch_threads is None else torch_threads, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"`{name}` must be an integer >= {low}, got {value!r}.")
    check_seed("seed", seed)
    if mode not in MODES:
        raise ValueError(f"`mode` must be one of {list(MODES)}, got mode={mode!r}.")
    unknown = [s for s in strategies if s not in EXPERIMENTS]
    if unknown:
        raise ValueError(
            f"`strategies` must be among {list(EXPERIMENTS)}, got {unknown!r}."
        )


def _prepare_output(out: Path, resume: bool, show_progress: bool) -> tuple[Path, Path]:
    """``out`` (made) and its ``demo.db``, after the checks that must come before
    any work: something to resume, no output file a symlink, the plot extra."""
    db = out / "demo.db"
    if resume and not db.exists():
        raise FileNotFoundError(f"Nothing to resume: {db} does not exist.")
    out.mkdir(parents=True, exist_ok=True)
    for name in ("demo.db", "regret.csv", "regret.png", "cost.csv", "cost.png"):
        check_not_symlink(out / name)  # before any work, not at the end of the run
    for module in ("matplotlib", "tqdm") if show_progress else ("matplotlib",):
        if importlib.util.find_spec(module) is None:  # before the run, not after it
            raise ModuleNotFoundError(
                f"run_demo needs {module} (the 'plot' extra): {install_hint('plot')}",
                name=module,
            )
    return out, db


def _run_all(
    run: _DemoRun, storage: Any, executor: Executor | None, show_progress: bool
) -> tuple[_PerStrategy, _PerStrategy, _PerStrategy]:
    """Every half of every seed on the pool (``executor``, or a process pool of
    ``parallelism`` workers of its own), Ax's logs quieted and a progress bar, each
    restored or closed after (Ctrl-C: an own pool's workers stopped at once);
    returns the regret curves, the trial sources and the trial seconds."""
    own = executor is None
    # (a SIGKILL of this process alone leaves the idle pool workers behind; kill
    # the job's process group, ``kill -9 -PGID``, to stop it whole -- no data
    # lives in the workers)
    pool = (
        ProcessPoolExecutor(max_workers=run.parallelism, initializer=ignore_sigint)
        if own
        else executor
    )
    disabled = logging.root.manager.disable  # restored after the run
    logging.disable(logging.INFO)  # Ax logs every trial at INFO
    quiet = _CountedFallbacks()
    logging.getLogger(_NODE_LOGGER).addFilter(quiet)
    bar = _progress_bar(run) if show_progress else None
    curves: _PerStrategy = {s: [] for s in run.strategies}
    sources: _PerStrategy = {s: [] for s in run.strategies}
    costs: _PerStrategy = {s: [] for s in run.strategies}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for run_seed in run.seeds:
                fn = demo_function(run_seed)
                for strategy in run.strategies:
                    client = _run_half(run, storage, pool, bar, run_seed, strategy, fn)
                    curves[strategy].append(regret_curve(client, fn))
                    sources[strategy].append(trial_sources(client))
                    costs[strategy].append(trial_seconds(client))
    except KeyboardInterrupt:
        if own:  # the workers ignore Ctrl-C: stop them, do not wait for them
            stop_now(pool)
        raise
    finally:
        logging.getLogger(_NODE_LOGGER).removeFilter(quiet)
        logging.disable(disabled)
        if bar is not None:
            bar.close()
        if own:
            pool.shutdown(cancel_futures=True)
    return curves, sources, costs


def _progress_bar(run: _DemoRun) -> Any:
    """A bar over every trial of the run (tqdm)."""
    from tqdm.auto import tqdm

    total = run.trials * len(run.strategies) * len(run.seeds)
    return tqdm(total=total, desc="demo", unit="trial")


def _run_half(
    run: _DemoRun,
    storage: Any,
    pool: Executor,
    bar: Any,
    run_seed: int,
    strategy: str,
    fn: DemoFunction,
) -> Any:
    """One strategy on one seed's function: its client opened (or resumed), the
    bar told how far it is, its trials run to the end; returns the client."""
    client = _open_client(
        experiment_name(strategy, run_seed),
        storage,
        run_seed,
        strategy,
        fn,
        run.resume,
        run.mode,
    )
    if bar is not None:
        bar.set_postfix_str(f"{label(strategy, run.mode)}, seed {run_seed}")
        bar.update(
            sum(
                t.status.is_completed for t in client_experiment(client).trials.values()
            )
        )
    run_async(
        client,
        lambda params, idx, fn=fn: pool.submit(evaluate, fn, params, idx),
        total=run.trials,
        parallelism=run.parallelism,
        seed=run_seed,
        on_complete=(lambda _i, _c: bar.update(1)) if bar is not None else None,
        stop_after=run.stop_after,
    )
    return client


def _demo_result(
    out: Path,
    run: _DemoRun,
    curves: _PerStrategy,
    sources: _PerStrategy,
    costs: _PerStrategy,
) -> DemoResult:
    """The run's result, its regret and cost files written to ``out``; a run
    stopped early (``stop_after``) with curves of unequal length draws nothing."""
    if run.stop_after is not None:  # curves of unequal length: nothing to draw
        lengths = {len(c) for v in curves.values() for c in v}
        if lengths != {run.trials}:
            return DemoResult(
                run.seeds, run.mode, run.trials, run.parallelism, {}, {}, costs
            )
    result = DemoResult(
        seeds=run.seeds,
        mode=run.mode,
        trials=run.trials,
        parallelism=run.parallelism,
        curves={s: np.stack(c) for s, c in curves.items()},
        sources={s: np.stack(c) for s, c in sources.items()},
        seconds=costs,
    )
    write_regret(out, result)
    write_costs(out, result)
    return result


__all__ = [
    "DemoFunction",
    "DemoResult",
    "demo_function",
    "duration",
    "evaluate",
    "experiment_name",
    "regret_curve",
    "run_async",
    "run_demo",
    "source_of",
    "trial_seconds",
    "trial_sources",
]
