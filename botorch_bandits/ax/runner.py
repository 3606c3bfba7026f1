"""Running an Ax experiment on an executor: :func:`attach_executor_runner` (an
:class:`ExecutorRunner` and its metrics on an ``ax.Client``) and :func:`run_trials`
(``Client.run_trials`` with the Orchestrator's pacing settable). Re-exports the
runner classes of :mod:`botorch_bandits.ax.executor` and
:mod:`botorch_bandits.ax.stored_runner` (importing it registers them with Ax's
storage). Guide: docs/ax.md."""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any

from botorch_bandits import upstream
from botorch_bandits.ax.executor import (
    Evaluate,
    ExecutorMetric,
    ExecutorRunner,
    real_number,
)
from botorch_bandits.ax.stored_runner import (
    SQL_RUNNER_TYPE,
    DetachedExecutorRunner,
    DetachedRunnerError,
    register_storage,
)


def attach_executor_runner(
    client: Any,
    evaluate: Evaluate,
    outcome_names: Sequence[str] | str,
    executor: Executor | Any | None = None,
    **runner_kwargs: Any,
) -> ExecutorRunner:
    """Build an :class:`ExecutorRunner` and attach it to an ``ax.Client``
    (``configure_runner`` and ``configure_metrics``, which replaces the client's
    plain metrics of the same names).

    Args:
        client: An ``ax.Client`` with its experiment configured.
        evaluate: ``parameters -> {metric: value or (mean, sem)}``, run on the
            executor (see :class:`ExecutorRunner`).
        outcome_names: The metric name(s) ``evaluate`` reports.
        executor: A ``concurrent.futures.Executor`` or a ``distributed.Client``;
            ``None`` (default): a process pool owned (and closed) by the runner.
        **runner_kwargs: :class:`ExecutorRunner`'s other arguments.

    Returns:
        The runner (close it when done).

    Example:
        >>> with ThreadPoolExecutor(4) as pool:
        ...     runner = attach_executor_runner(client, evaluate, "f", pool)
        ...     run_trials(client, max_trials=30, parallelism=4)
    """
    if not callable(getattr(client, "configure_runner", None)) or not callable(
        getattr(client, "configure_metrics", None)
    ):
        raise ValueError(f"`client` must be an ax.Client, got {client!r}.")
    runner = ExecutorRunner(
        evaluate, executor, metric_names=outcome_names, **runner_kwargs
    )
    client.configure_runner(runner)
    client.configure_metrics(runner.metrics())
    return runner


def run_trials(
    client: Any,
    max_trials: int,
    parallelism: int = 1,
    *,
    seconds_between_polls: float = 0.05,
    min_seconds_before_poll: float = 0.0,
    tolerated_trial_failure_rate: float = 0.5,
    **orchestrator_options: Any,
) -> None:
    """``client.run_trials`` with the Orchestrator's pacing settable.

    Builds the Orchestrator exactly as ``ax.Client.run_trials`` does in Ax 1.3 (the
    client's experiment, generation strategy and storage settings; these are
    private attributes of the client) but with ``min_seconds_before_poll`` (Ax: 1 s
    after every trial start) and a constant ``seconds_between_polls`` (Ax: 1 s
    growing by 1.5x). Polling an :class:`ExecutorRunner` only checks local futures,
    so a short interval is cheap. Other ``OrchestratorOptions`` fields pass through
    ``orchestrator_options`` (e.g. ``logging_level``). With a storage config, the
    SQL patches of :func:`botorch_bandits.upstream.install_sql_patches` are
    installed first, as :func:`botorch_bandits.ax.sqlite_storage` does.

    Args:
        client: A configured ``ax.Client`` (with a runner, e.g. from
            :func:`attach_executor_runner`).
        max_trials: Trials to run, an integer ``>= 1``.
        parallelism: Trials running at once (``max_pending_trials``; default 1).
        seconds_between_polls: Constant poll interval, ``>= 0`` (default 0.05).
        min_seconds_before_poll: Wait after a trial starts, ``>= 0`` (default 0).
        tolerated_trial_failure_rate: Ax's option (default 0.5).
        **orchestrator_options: Other ``OrchestratorOptions`` fields.
    """
    from ax.api.utils.storage import db_settings_from_storage_config
    from ax.orchestration.orchestrator import Orchestrator, OrchestratorOptions

    for name, value, low in (
        ("max_trials", max_trials, 1),
        ("parallelism", parallelism, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"`{name}` must be an integer >= {low}, got {value!r}.")
    for name, value in (
        ("seconds_between_polls", seconds_between_polls),
        ("min_seconds_before_poll", min_seconds_before_poll),
    ):
        number = real_number(value)
        if number is None or not math.isfinite(number) or number < 0:
            raise ValueError(f"`{name}` must be a finite number >= 0, got {value!r}.")
    try:
        experiment = upstream.client_experiment(client)
        generation_strategy = upstream.client_generation_strategy(client, choose=True)
        storage_config = upstream.client_storage_config(client)
    except AttributeError as err:
        raise ValueError(
            f"`client` must be a configured ax.Client, got {client!r}: {err}"
        ) from err
    if storage_config is not None:  # the Orchestrator saves every trial
        upstream.install_sql_patches()
    orchestrator = Orchestrator(
        experiment=experiment,
        generation_strategy=generation_strategy,
        options=OrchestratorOptions(
            max_pending_trials=parallelism,
            tolerated_trial_failure_rate=tolerated_trial_failure_rate,
            init_seconds_between_polls=seconds_between_polls,
            min_seconds_before_poll=min_seconds_before_poll,
            seconds_between_polls_backoff_factor=1.0,
            **orchestrator_options,
        ),
        db_settings=None
        if storage_config is None
        else db_settings_from_storage_config(storage_config),
    )
    orchestrator.run_n_trials(max_trials=max_trials)


__all__ = [
    "SQL_RUNNER_TYPE",
    "DetachedExecutorRunner",
    "DetachedRunnerError",
    "ExecutorMetric",
    "ExecutorRunner",
    "attach_executor_runner",
    "register_storage",
    "run_trials",
]
