"""The executor runner and its metrics: :class:`ExecutorRunner` (an Ax ``IRunner``
that evaluates ``evaluate(parameterization)`` on any ``concurrent.futures`` executor
or Dask client, resubmits RUNNING trials it does not know, and reports failures
with their reason) and :class:`ExecutorMetric` (one outcome of its finished
evaluations). Usage, executors, recovery and storage: docs/ax.md."""

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

# the runner's log messages keep the name of the module they were written in first
logger = logging.getLogger("botorch_bandits.ax.runner")

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


def real_number(value: Any) -> float | None:
    """``value`` as a float if it is a real number (a bool is not), else ``None``.

    Args:
        value: Anything.

    Returns:
        ``float(value)``, or ``None``.
    """
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
        resubmitted: Trials submitted again by ``poll_trial`` (RUNNING trials this
            runner had no future for, e.g. after a reload from storage).

    Example:
        >>> with ExecutorRunner(evaluate, ThreadPoolExecutor(4), metric_names="f") as r:
        ...     client.configure_runner(r)
        ...     client.configure_metrics(r.metrics())
        ...     client.run_trials(max_trials=20, parallelism=4)
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
        alone).

        Args:
            wait: Wait for the running evaluations (default ``True``); ``False``
                also cancels the evaluations not yet started.
        """
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
        :class:`DetachedExecutorRunner`.

        Args:
            obj: The runner.

        Returns:
            ``{"metric_names": [...], "max_workers": ...}``.
        """
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
        """Submit the trial.

        Args:
            trial_index: The trial's index.
            parameterization: Its parameters (passed to ``evaluate``).

        Returns:
            The run metadata: the parameterization (for resubmission), the
            submission time and the executor's class name.
        """
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
        without a future here is resubmitted from its run metadata.

        Args:
            trial_index: The trial's index.
            trial_metadata: The trial's run metadata (:meth:`run_trial`'s).

        Returns:
            The trial's status (EARLY_STOPPED once stopped).
        """
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
        interrupted through the Executor interface and is left to finish).

        Args:
            trial_index: The trial's index.
            trial_metadata: The trial's run metadata (:meth:`run_trial`'s).

        Returns:
            ``{"cancelled": bool}``.
        """
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
        trial with :meth:`poll_trial`.

        Args:
            trials: The trials to poll.

        Returns:
            The trial indices by status.
        """
        trials = list(trials)
        for trial in trials:
            arm = getattr(trial, "arm", None)
            if trial.index not in self._futures and arm is not None:
                self._arm_parameters[trial.index] = dict(arm.parameters)
        return super().poll_trial_status(trials)

    def poll_exception(self, trial: BaseTrial) -> str:
        """The failure reason Ax stores on a FAILED trial (core ``Runner`` hook).

        Args:
            trial: The trial.

        Returns:
            The reason.
        """
        return self.errors.get(trial.index, "no reason recorded by ExecutorRunner")

    # ------------------------------------------------------------------ results
    def outcome(self, trial_index: int, name: str) -> tuple[float, float]:
        """``(mean, sem)`` of a completed trial (``sem`` NaN when not reported).

        Args:
            trial_index: The trial's index.
            name: The outcome's name.

        Returns:
            The pair of floats.

        Raises:
            KeyError: For a trial without that value here (failed or unfinished).
        """
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
            mean, sem = real_number(value[0]), real_number(value[1])
        else:
            mean, sem = real_number(value), math.nan
        if mean is None or sem is None or not math.isfinite(mean):
            return None
        if not (math.isnan(sem) or (math.isfinite(sem) and sem >= 0)):
            return None
        return mean, sem


class ExecutorMetric(IMetric):
    """An Ax metric reading one outcome of an :class:`ExecutorRunner`'s finished
    evaluations (available once the trial is COMPLETED; progression 0).

    Args:
        name: The outcome's name.
        runner: The :class:`ExecutorRunner` it reads.
    """

    def __init__(self, name: str, runner: ExecutorRunner) -> None:
        if not isinstance(runner, ExecutorRunner):
            raise ValueError(f"`runner` must be an ExecutorRunner, got {runner!r}.")
        super().__init__(name=name)
        self.runner = runner

    def fetch(
        self, trial_index: int, trial_metadata: Mapping[str, Any]
    ) -> tuple[int, tuple[float, float]]:
        """The outcome (``IMetric``'s hook).

        Args:
            trial_index: The trial's index.
            trial_metadata: The trial's run metadata (:meth:`run_trial`'s).

        Returns:
            ``(0, (mean, sem))``: progression 0 and :meth:`ExecutorRunner.outcome`.
        """
        return 0, self.runner.outcome(trial_index, self.name)

    @classmethod
    def serialize_init_args(cls, obj: Any) -> dict[str, Any]:
        """What Ax's SQL storage keeps: the arguments of the plain ``MapMetric``
        the metric is stored as (no runner).

        Args:
            obj: The metric.

        Returns:
            Those arguments.
        """
        plain = plain_metric(obj)
        return type(plain).serialize_init_args(obj=plain)

    def clone(self) -> ExecutorMetric:
        """A metric of the same name and options reading the same runner."""
        metric = type(self)(name=self.name, runner=self.runner)
        metric.lower_is_better = self.lower_is_better
        metric.properties = dict(self.properties)
        return metric


def plain_metric(metric: ExecutorMetric) -> Any:
    """The plain ``MapMetric`` an :class:`ExecutorMetric` is stored as (same name,
    direction, properties and signature; no runner).

    Args:
        metric: The metric.

    Returns:
        The ``MapMetric``.
    """
    from ax.core.map_metric import MapMetric

    return MapMetric(
        name=metric.name,
        lower_is_better=metric.lower_is_better,
        properties=metric.properties,
        signature_override=getattr(metric, "signature_override", None),
    )
