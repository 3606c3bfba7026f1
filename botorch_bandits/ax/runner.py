r"""Distributed evaluation for Ax: a runner that evaluates trials on any
:class:`concurrent.futures.Executor`.

:class:`ExecutorRunner` is an Ax ``IRunner``: ``run_trial`` submits
``evaluate(parameterization)`` to the executor and keeps the future by trial index;
``poll_trial`` reports the trial RUNNING until its future is done, then COMPLETED,
or FAILED when ``evaluate`` raised or returned something unusable. Its metrics
(:class:`ExecutorMetric`, one per outcome name, from :meth:`ExecutorRunner.metrics`)
read the values of the finished futures. With ``ax.Client.run_trials(max_trials,
parallelism=k)`` (an Ax Orchestrator under the hood) up to ``k`` trials are in
flight and each one is completed when *its* future is done -- completion is out of
order, which is the asynchronous-feedback setting the bandit node handles.

Executors:

* ``None`` (default): a :class:`~concurrent.futures.ProcessPoolExecutor` created on
  the first submission and shut down by :meth:`ExecutorRunner.close` (or the
  ``with`` block). ``evaluate`` and its results must be picklable, so a top-level
  function, not a lambda or a closure.
* any :class:`~concurrent.futures.Executor`: a thread pool, a process pool of your
  own, ``distributed.Client(...).get_executor()`` -- the runner never shuts down an
  executor it did not create;
* a ``distributed.Client`` itself: used through ``client.get_executor(pure=False)``.
  Dask tasks are submitted with ``pure=False`` in both Dask cases: a bandit pulls
  the same arm again, and ``pure=True`` would give the second pull the first pull's
  result (one task per identical argument) instead of a new evaluation.

``evaluate(parameterization) -> dict`` maps every outcome name to a value or a
``(mean, sem)`` pair (numbers; ``sem`` may be NaN for "unknown"); other keys are
kept in :attr:`ExecutorRunner.results` but not reported to Ax. No failure is lost:
an exception in ``evaluate``, a missing or non-finite outcome, or a cancelled
future makes the trial FAILED, the reason is stored on the trial
(``trial.status_reason``, through the core runner's ``poll_exception`` hook) and in
:attr:`ExecutorRunner.errors`, and the exception object in
:attr:`ExecutorRunner.exceptions` (with the remote traceback as its ``__cause__``
for a process pool).

Recovery: the run metadata of a trial holds its parameterization. A trial that is
RUNNING in the experiment but has no future in this runner -- the experiment was
reloaded from storage after the process that ran it died, or the runner was
replaced -- is submitted again by the first ``poll_trial`` that sees it (it stays
RUNNING and is listed in :attr:`ExecutorRunner.resubmitted`), so no trial is lost
and none is left RUNNING for ever. A RUNNING trial that no runner started (made by
``Client.get_next_trials``, empty run metadata) is submitted with its arm's
parameters the same way. ``evaluate`` may therefore run more than once
for one trial; the last run's value is the one reported.

Pacing: Ax's Orchestrator sleeps until ``min_seconds_before_poll`` (1 s, not an
argument of ``Client.run_trials``) have passed since it last started a trial before
it polls or starts another one -- so ``Client.run_trials`` starts at most about one
trial per second, whatever the evaluation costs -- and, with every trial slot
busy, sleeps ``initial_seconds_between_polls`` (an integer, growing by 1.5x) between
polls. :func:`run_trials` builds the same Orchestrator with both settable
(defaults 0 s and 0.05 s), for evaluations that take seconds, not hours.

Storage: importing this module registers both classes with Ax's storage (in Ax's
core registries), so that an experiment with an :class:`ExecutorRunner` attached
can be saved and loaded -- a function and a live executor cannot be stored, so
only the runner's outcome names are:

* JSON (``Client.save_to_json_file``): the metrics are stored as plain
  ``MapMetric`` and the runner as a placeholder that loads as ``None``.
* SQL (``ax.Client(storage_config=...)``, e.g. :func:`botorch_bandits.ax.sqlite_storage`
  and :func:`botorch_bandits.ax.load_client`): the metrics are stored as plain
  ``MapMetric`` (``MapMetric``'s metric type, and ``MapMetric``'s arguments from
  :meth:`ExecutorMetric.serialize_init_args`: files readable without this
  package) and load as ``MapMetric``; the runner is stored with the runner type
  :data:`SQL_RUNNER_TYPE` and its outcome names
  (:meth:`ExecutorRunner.serialize_init_args`), and loads as a
  :class:`DetachedExecutorRunner`, whose every use raises
  :class:`DetachedRunnerError`. Loading such a file needs this module imported
  (``import botorch_bandits.ax`` does it).

After loading, attach a new runner (:func:`attach_executor_runner`); its first poll
resubmits the RUNNING trials.
"""

from __future__ import annotations

import logging
import math
import pickle
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from numbers import Real
from typing import Any

from ax.api.protocols.metric import IMetric
from ax.api.protocols.runner import IRunner
from ax.core.base_trial import BaseTrial
from ax.core.trial_status import TrialStatus
from ax.exceptions.core import UnsupportedError

logger = logging.getLogger(__name__)

Evaluate = Callable[[dict[str, Any]], Mapping[str, Any]]


def _is_dask(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "distributed"


def _check_names(names: Any, argument: str) -> tuple[str, ...]:
    """A non-empty tuple of distinct non-empty strings (one string is one name)."""
    if isinstance(names, str):
        names = (names,)
    if (
        not isinstance(names, Sequence)
        or len(names) == 0
        or not all(isinstance(n, str) and n for n in names)
        or len(set(names)) != len(names)
    ):
        raise ValueError(
            f"`{argument}` must be a non-empty sequence of distinct non-empty "
            f"strings, got {names!r}."
        )
    return tuple(names)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    return float(value)


class ExecutorRunner(IRunner):
    r"""An Ax runner evaluating ``evaluate(parameterization)`` on an executor.

    Args:
        evaluate: ``parameterization -> {outcome name: value or (mean, sem)}``;
            picklable for a process pool or a Dask cluster (a top-level function).
        executor: A :class:`concurrent.futures.Executor` or a ``distributed.Client``;
            ``None``: a process pool owned (and closed) by the runner.
        metric_names: The outcome names ``evaluate`` reports (one string: one name).
        max_workers: Worker count of the default process pool (``None``: the CPU
            count); only with ``executor=None``.

    Every attribute below is a dict keyed by trial index.

    Attributes:
        results: The raw dicts returned by ``evaluate`` (extra keys included).
        errors: The reason of every FAILED trial (also ``trial.status_reason``).
        exceptions: The exception behind a failure, where there was one.
        finished_at: ``time.time()`` when the future finished (set by a done
            callback, so it does not depend on when Ax polls).
        resubmitted: Trials submitted again by ``poll_trial`` (see the module).
    """

    def __init__(
        self,
        evaluate: Evaluate,
        executor: Executor | Any | None = None,
        *,
        metric_names: Sequence[str] | str,
        max_workers: int | None = None,
    ) -> None:
        if not callable(evaluate):
            raise ValueError(f"`evaluate` must be callable, got {evaluate!r}.")
        self.metric_names = _check_names(metric_names, "metric_names")
        if max_workers is not None and (
            isinstance(max_workers, bool)
            or not isinstance(max_workers, int)
            or max_workers < 1
        ):
            raise ValueError(
                f"`max_workers` must be a positive integer or None, got {max_workers!r}."
            )
        if max_workers is not None and executor is not None:
            raise ValueError(
                f"`max_workers` ({max_workers!r}) only applies to the default process "
                f"pool, but `executor` is given ({executor!r})."
            )
        if executor is not None and not isinstance(executor, Executor):
            if _is_dask(executor) and callable(getattr(executor, "get_executor", None)):
                executor = executor.get_executor(pure=False)
            else:
                raise ValueError(
                    "`executor` must be a concurrent.futures.Executor or a "
                    f"distributed.Client, got {executor!r} ({type(executor).__name__})."
                )
        if executor is None or isinstance(executor, ProcessPoolExecutor):
            try:
                pickle.dumps(evaluate)
            except Exception as err:
                raise ValueError(
                    "`evaluate` must be picklable (a top-level function) to run in a "
                    f"process pool, got {evaluate!r}: {err}"
                ) from err
        self.evaluate = evaluate
        self.max_workers = max_workers
        self._executor = executor
        self._owns_executor = executor is None
        self._submit_kwargs = {"pure": False} if _is_dask(executor) else {}
        self._futures: dict[int, Any] = {}
        self._stopped: set[int] = set()
        self._arm_parameters: dict[int, dict[str, Any]] = {}
        self.results: dict[int, Mapping[str, Any]] = {}
        self._values: dict[int, dict[str, tuple[float, float]]] = {}
        self.errors: dict[int, str] = {}
        self.exceptions: dict[int, BaseException] = {}
        self.finished_at: dict[int, float] = {}
        self.resubmitted: list[int] = []

    # ------------------------------------------------------------------ executor
    @property
    def executor(self) -> Executor:
        """The executor (the default process pool is created on first use)."""
        if self._executor is None:
            self._executor = ProcessPoolExecutor(max_workers=self.max_workers)
        return self._executor

    def close(self, wait: bool = True) -> None:
        """Shut down the default process pool (an executor passed in is left
        alone). ``wait=False`` also cancels the evaluations not yet started."""
        if self._owns_executor and self._executor is not None:
            self._executor.shutdown(wait=wait, cancel_futures=not wait)
            self._executor = None

    def __enter__(self) -> ExecutorRunner:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    @classmethod
    def serialize_init_args(cls, obj: Any) -> dict[str, Any]:
        """What Ax's SQL storage keeps of the runner (``runner.properties``):
        JSON data only -- the outcome names and ``max_workers`` -- since a function
        and a live executor cannot be stored. It loads as a
        :class:`DetachedExecutorRunner` (see the module)."""
        return {
            "metric_names": list(obj.metric_names),
            "max_workers": obj.max_workers,
        }

    def _init_args(self) -> dict[str, Any]:
        """The constructor arguments (the default pool is not created for them)."""
        return {
            "evaluate": self.evaluate,
            "executor": None if self._owns_executor else self._executor,
            "metric_names": self.metric_names,
            "max_workers": self.max_workers,
        }

    def clone(self) -> ExecutorRunner:
        """A new runner with the same ``evaluate``, outcome names and executor (a
        pool of its own where this one owns its default pool); no trial state."""
        args = self._init_args()
        return type(self)(args.pop("evaluate"), args.pop("executor"), **args)

    def __eq__(self, other: object) -> bool:
        """Same class and constructor arguments (the same ``evaluate`` and executor
        objects); the trial state is not compared."""
        return type(self) is type(other) and self._init_args() == other._init_args()

    __hash__ = None  # type: ignore[assignment]  # as Ax's Runner (defines __eq__)

    def metrics(self) -> list[ExecutorMetric]:
        """One :class:`ExecutorMetric` per outcome name, reading this runner."""
        return [ExecutorMetric(name=name, runner=self) for name in self.metric_names]

    # ------------------------------------------------------------------ IRunner
    def run_trial(
        self, trial_index: int, parameterization: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Submit the trial; the run metadata keeps the parameterization (for
        resubmission) and the submission time."""
        params = dict(parameterization)
        self._submit(trial_index, params)
        return {
            "parameterization": params,
            "submitted_at": time.time(),
            "executor": type(self.executor).__name__,
        }

    def poll_trial(
        self, trial_index: int, trial_metadata: Mapping[str, Any]
    ) -> TrialStatus:
        """RUNNING while the future is pending, then COMPLETED or FAILED; a trial
        without a future here is resubmitted from its run metadata."""
        if trial_index in self._values:
            return TrialStatus.COMPLETED
        if trial_index in self.errors:
            return TrialStatus.FAILED
        if trial_index in self._stopped:
            return TrialStatus.EARLY_STOPPED
        future = self._futures.get(trial_index)
        if future is None:
            params = (trial_metadata or {}).get("parameterization")
            if not isinstance(params, Mapping):
                params = self._arm_parameters.get(trial_index)
            if not isinstance(params, Mapping):
                self._fail(
                    trial_index,
                    "the trial is RUNNING but unknown to this runner, and its run "
                    "metadata has no parameterization to resubmit it with",
                )
                return TrialStatus.FAILED
            logger.warning(
                "Trial %d is RUNNING but has no future in this runner; resubmitting it.",
                trial_index,
            )
            self._submit(trial_index, dict(params))
            self.resubmitted.append(trial_index)
            return TrialStatus.RUNNING
        if not future.done():
            return TrialStatus.RUNNING
        del self._futures[trial_index]
        self._settle(trial_index, future)
        return (
            TrialStatus.COMPLETED if trial_index in self._values else TrialStatus.FAILED
        )

    def stop_trial(
        self, trial_index: int, trial_metadata: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Cancel the evaluation if it has not started (a running one cannot be
        interrupted through the Executor interface and is left to finish)."""
        future = self._futures.pop(trial_index, None)
        self._stopped.add(trial_index)
        cancelled = bool(future is not None and future.cancel())
        return {"cancelled": cancelled}

    def poll_trial_status(
        self, trials: Iterable[BaseTrial]
    ) -> dict[TrialStatus, set[int]]:
        """Ax's batch poll (core ``Runner``): remembers the arm parameters of
        trials unknown here (a fallback for trials whose run metadata has no
        parameterization, e.g. made by ``Client.get_next_trials``), then polls each
        trial with :meth:`poll_trial`."""
        trials = list(trials)
        for trial in trials:
            arm = getattr(trial, "arm", None)
            if trial.index not in self._futures and arm is not None:
                self._arm_parameters[trial.index] = dict(arm.parameters)
        return super().poll_trial_status(trials)

    def poll_exception(self, trial: BaseTrial) -> str:
        """The failure reason Ax stores on a FAILED trial (core ``Runner`` hook)."""
        return self.errors.get(trial.index, "no reason recorded by ExecutorRunner")

    # ------------------------------------------------------------------ results
    def outcome(self, trial_index: int, name: str) -> tuple[float, float]:
        """``(mean, sem)`` of a completed trial (``sem`` NaN when not reported)."""
        try:
            return self._values[trial_index][name]
        except KeyError:
            state = (
                f"failed: {self.errors[trial_index]}"
                if trial_index in self.errors
                else "not finished in this runner"
            )
            raise KeyError(
                f"no value of {name!r} for trial {trial_index} ({state})."
            ) from None

    # ------------------------------------------------------------------ internals
    def _submit(self, trial_index: int, params: dict[str, Any]) -> None:
        future = self.executor.submit(self.evaluate, params, **self._submit_kwargs)
        self._futures[trial_index] = future
        self.finished_at.pop(trial_index, None)

        def _done(_: Any, index: int = trial_index) -> None:
            self.finished_at[index] = time.time()

        future.add_done_callback(_done)

    def _fail(
        self, trial_index: int, reason: str, exc: BaseException | None = None
    ) -> None:
        self.errors[trial_index] = reason
        if exc is not None:
            self.exceptions[trial_index] = exc
        logger.warning("Trial %d failed: %s", trial_index, reason, exc_info=exc)

    def _settle(self, trial_index: int, future: Any) -> None:
        """Move a done future into ``results`` / ``_values`` or ``errors``."""
        if future.cancelled():
            self._fail(trial_index, "the evaluation was cancelled")
            return
        try:
            result = future.result()
        except BaseException as exc:  # the evaluation's own error, re-raised here
            self._fail(trial_index, f"evaluate raised {type(exc).__name__}: {exc}", exc)
            return
        if not isinstance(result, Mapping):
            self._fail(
                trial_index,
                f"evaluate returned {type(result).__name__}, expected a dict "
                f"of outcome values: {result!r}",
            )
            return
        values: dict[str, tuple[float, float]] = {}
        for name in self.metric_names:
            if name not in result:
                self._fail(
                    trial_index,
                    f"evaluate returned no value for {name!r} (keys: {sorted(result)})",
                )
                return
            pair = self._pair(result[name])
            if pair is None:
                self._fail(
                    trial_index,
                    f"evaluate returned {result[name]!r} for {name!r}; expected a "
                    "finite number or a (mean, sem) pair with sem >= 0 or NaN",
                )
                return
            values[name] = pair
        self.results[trial_index] = result
        self._values[trial_index] = values

    @staticmethod
    def _pair(value: Any) -> tuple[float, float] | None:
        if isinstance(value, (tuple, list)) and len(value) == 2:
            mean, sem = _number(value[0]), _number(value[1])
        else:
            mean, sem = _number(value), math.nan
        if mean is None or sem is None or not math.isfinite(mean):
            return None
        if not (math.isnan(sem) or (math.isfinite(sem) and sem >= 0)):
            return None
        return mean, sem


class ExecutorMetric(IMetric):
    """An Ax metric reading one outcome of an :class:`ExecutorRunner`'s finished
    evaluations (available once the trial is COMPLETED; progression 0)."""

    def __init__(self, name: str, runner: ExecutorRunner) -> None:
        if not isinstance(runner, ExecutorRunner):
            raise ValueError(f"`runner` must be an ExecutorRunner, got {runner!r}.")
        super().__init__(name=name)
        self.runner = runner

    def fetch(
        self, trial_index: int, trial_metadata: Mapping[str, Any]
    ) -> tuple[int, tuple[float, float]]:
        return 0, self.runner.outcome(trial_index, self.name)

    @classmethod
    def serialize_init_args(cls, obj: Any) -> dict[str, Any]:
        """What Ax's SQL storage keeps: the arguments of the plain ``MapMetric``
        the metric is stored as (no runner; see the module)."""
        plain = _plain_metric(obj)
        return type(plain).serialize_init_args(obj=plain)

    def clone(self) -> ExecutorMetric:
        """A metric of the same name and options reading the same runner."""
        metric = type(self)(name=self.name, runner=self.runner)
        metric.lower_is_better = self.lower_is_better
        metric.properties = dict(self.properties)
        return metric


class DetachedRunnerError(UnsupportedError, RuntimeError):
    """A :class:`DetachedExecutorRunner` (a runner loaded from storage) was used.

    An Ax ``UnsupportedError``: Ax's Orchestrator lets it through at once instead
    of retrying, or marking the trials it could not poll ABANDONED."""


class DetachedExecutorRunner(ExecutorRunner):
    r"""What a stored :class:`ExecutorRunner` loads as from Ax's SQL storage: the
    outcome names and ``max_workers`` of the runner, but no ``evaluate`` function
    and no executor (they cannot be stored). Every use -- running, polling or
    stopping a trial, its executor, its metrics or outcomes -- raises
    :class:`DetachedRunnerError` telling to attach a new runner with
    :func:`attach_executor_runner`; that runner's first poll resubmits the trials
    left RUNNING. Saving it again stores the same record.

    A subclass of :class:`ExecutorRunner` with only attributes an
    ``ExecutorRunner`` has: after every save Ax decodes what it wrote and copies
    the database ids from that object onto the saved one
    (``ax.storage.sqa_store.utils.copy_db_ids``), which needs the two classes
    related and walks the decoded object's attributes on the saved one.
    """

    def __init__(
        self, metric_names: Sequence[str] | str = (), max_workers: int | None = None
    ) -> None:
        names = (metric_names,) if isinstance(metric_names, str) else metric_names
        self.metric_names = tuple(names or ())
        self.max_workers = max_workers

    def _detached(self, action: str) -> DetachedRunnerError:
        names = list(self.metric_names) or ["<outcome names>"]
        return DetachedRunnerError(
            f"Cannot {action}: this ExecutorRunner was loaded from storage and is "
            "detached (its evaluate function and executor cannot be stored). Attach "
            "a new runner first: botorch_bandits.ax.attach_executor_runner(client, "
            f"evaluate, {names!r}, executor); its first poll resubmits the trials "
            "left RUNNING."
        )

    def _init_args(self) -> dict[str, Any]:
        return {"metric_names": self.metric_names, "max_workers": self.max_workers}

    def clone(self) -> DetachedExecutorRunner:
        return type(self)(**self._init_args())

    def __repr__(self) -> str:
        return f"DetachedExecutorRunner(metric_names={list(self.metric_names)!r})"

    @property
    def executor(self) -> Executor:
        raise self._detached("use the executor")

    def close(self, wait: bool = True) -> None:
        """Nothing to close."""

    def metrics(self) -> list[ExecutorMetric]:
        raise self._detached("make metrics")

    def poll_available_capacity(self) -> int:
        # Ax's Orchestrator asks this before it generates a trial: none is made.
        raise self._detached("run trials")

    def run(self, trial: BaseTrial) -> dict[str, Any]:
        raise self._detached(f"run trial {trial.index}")

    def run_trial(
        self, trial_index: int, parameterization: Mapping[str, Any]
    ) -> dict[str, Any]:
        raise self._detached(f"run trial {trial_index}")

    def poll_trial_status(
        self, trials: Iterable[BaseTrial]
    ) -> dict[TrialStatus, set[int]]:
        raise self._detached("poll trials")

    def poll_trial(
        self, trial_index: int, trial_metadata: Mapping[str, Any]
    ) -> TrialStatus:
        raise self._detached(f"poll trial {trial_index}")

    def stop(self, trial: BaseTrial, reason: str | None = None) -> dict[str, Any]:
        raise self._detached(f"stop trial {trial.index}")

    def stop_trial(
        self, trial_index: int, trial_metadata: Mapping[str, Any]
    ) -> dict[str, Any]:
        raise self._detached(f"stop trial {trial_index}")

    def poll_exception(self, trial: BaseTrial) -> str:
        raise self._detached(f"read the failure of trial {trial.index}")

    def outcome(self, trial_index: int, name: str) -> tuple[float, float]:
        raise self._detached(f"read {name!r} of trial {trial_index}")


def attach_executor_runner(
    client: Any,
    evaluate: Evaluate,
    outcome_names: Sequence[str] | str,
    executor: Executor | Any | None = None,
    **runner_kwargs: Any,
) -> ExecutorRunner:
    """Build an :class:`ExecutorRunner` and attach it to an ``ax.Client``
    (``configure_runner`` and ``configure_metrics``, which replaces the client's
    plain metrics of the same names). Returns the runner (close it when done)."""
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
    ``orchestrator_options`` (e.g. ``logging_level``).
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
        number = _number(value)
        if number is None or not math.isfinite(number) or number < 0:
            raise ValueError(f"`{name}` must be a finite number >= 0, got {value!r}.")
    try:
        experiment = client._experiment
        generation_strategy = client._generation_strategy_or_choose()
        storage_config = client._storage_config
    except AttributeError as err:
        raise ValueError(
            f"`client` must be a configured ax.Client, got {client!r}: {err}"
        ) from err
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


# ---------------------------------------------------------------------- storage
#: The runner type of :class:`ExecutorRunner` in Ax's SQL storage
#: (``runner_v2.runner_type``): Ax's default for a registered class,
#: ``abs(stable_hash("ExecutorRunner")) % 10**5``. It is written into files: never
#: change it.
SQL_RUNNER_TYPE = 4396


def _plain_metric(metric: ExecutorMetric) -> Any:
    from ax.core.map_metric import MapMetric

    return MapMetric(
        name=metric.name,
        lower_is_better=metric.lower_is_better,
        properties=metric.properties,
        signature_override=getattr(metric, "signature_override", None),
    )


def _metric_to_dict(metric: ExecutorMetric) -> dict[str, Any]:
    from ax.storage.json_store.encoders import metric_to_dict

    return metric_to_dict(_plain_metric(metric))


def _runner_to_dict(runner: ExecutorRunner) -> dict[str, Any]:
    return {"__type": "ExecutorRunner", "metric_names": list(runner.metric_names)}


def _runner_from_json(**kwargs: Any) -> None:
    """A stored ExecutorRunner loads as no runner: attach a new one."""
    return None


def _register_sql() -> None:
    """Ax's SQL registries: both runner classes under :data:`SQL_RUNNER_TYPE`
    (decoding to :class:`DetachedExecutorRunner`), and :class:`ExecutorMetric`
    under ``MapMetric``'s metric type (decoding to ``MapMetric``)."""
    from ax.core.map_metric import MapMetric
    from ax.storage.metric_registry import CORE_METRIC_REGISTRY
    from ax.storage.runner_registry import CORE_RUNNER_REGISTRY

    ours = (ExecutorRunner, DetachedExecutorRunner)
    taken = [
        c
        for c, t in CORE_RUNNER_REGISTRY.items()
        if t == SQL_RUNNER_TYPE and c not in ours
    ]
    if taken:
        raise RuntimeError(
            f"Ax's SQL runner type {SQL_RUNNER_TYPE} is already registered to "
            f"{taken[0]}; ExecutorRunner cannot be registered."
        )
    # Ax decodes a type to the *last* class registered with it (a reversed dict):
    # (re-)insert the class to decode to last.
    for cls in ours:
        CORE_RUNNER_REGISTRY.pop(cls, None)
        CORE_RUNNER_REGISTRY[cls] = SQL_RUNNER_TYPE
    map_type = CORE_METRIC_REGISTRY[MapMetric]
    CORE_METRIC_REGISTRY[ExecutorMetric] = map_type
    del CORE_METRIC_REGISTRY[MapMetric]
    CORE_METRIC_REGISTRY[MapMetric] = map_type


def register_storage() -> None:
    """Register the classes with Ax's storage (runs on import of this module;
    idempotent): the JSON encoders and the placeholder decoder in Ax's core JSON
    registries, and the SQL runner and metric types (see the module)."""
    from ax.storage.json_store.registry import (
        CORE_DECODER_REGISTRY,
        CORE_ENCODER_REGISTRY,
    )

    CORE_ENCODER_REGISTRY[ExecutorMetric] = _metric_to_dict
    CORE_ENCODER_REGISTRY[ExecutorRunner] = _runner_to_dict
    CORE_ENCODER_REGISTRY[DetachedExecutorRunner] = _runner_to_dict
    CORE_DECODER_REGISTRY["ExecutorRunner"] = _runner_from_json
    try:
        _register_sql()
    except ImportError:  # Ax without its SQL storage dependencies: nothing to register
        pass


register_storage()
