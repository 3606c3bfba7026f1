"""The executor runner in Ax's storage: what is kept of an :class:`ExecutorRunner`
and its metrics (outcome names only: a function and a live executor cannot be
stored), :class:`DetachedExecutorRunner` that a stored runner loads as, and the
registration of both with Ax's JSON and SQL registries (on import)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

from ax.core.base_trial import BaseTrial
from ax.core.trial_status import TrialStatus
from ax.exceptions.core import UnsupportedError

from botorch_bandits.ax.executor import ExecutorMetric, ExecutorRunner, plain_metric


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

    Args:
        metric_names: The stored runner's outcome names (default none).
        max_workers: Its ``max_workers`` (default ``None``).
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
        """Nothing to close.

        Args:
            wait: Ignored.
        """

    def metrics(self) -> list[ExecutorMetric]:
        raise self._detached("make metrics")

    def poll_available_capacity(self) -> int:
        # Ax's Orchestrator asks this before it generates a trial: none is made.
        raise self._detached("run trials")

    def run(self, trial: BaseTrial) -> dict[str, Any]:
        """Refused: a detached runner runs nothing.

        Args:
            trial: The trial.

        Returns:
            Nothing: it raises.

        Raises:
            DetachedRunnerError: Always (attach a new runner).
        """
        raise self._detached(f"run trial {trial.index}")

    def run_trial(
        self, trial_index: int, parameterization: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Refused (see :meth:`run`).

        Args:
            trial_index, parameterization: As in :meth:`ExecutorRunner.run_trial`.

        Returns:
            Nothing: it raises.

        Raises:
            DetachedRunnerError: Always (attach a new runner).
        """
        raise self._detached(f"run trial {trial_index}")

    def poll_trial_status(
        self, trials: Iterable[BaseTrial]
    ) -> dict[TrialStatus, set[int]]:
        """Refused (see :meth:`run`).

        Args:
            trials: The trials.

        Returns:
            Nothing: it raises.

        Raises:
            DetachedRunnerError: Always (attach a new runner).
        """
        raise self._detached("poll trials")

    def poll_trial(
        self, trial_index: int, trial_metadata: Mapping[str, Any]
    ) -> TrialStatus:
        """Refused (see :meth:`run`).

        Args:
            trial_index, trial_metadata: As in :meth:`ExecutorRunner.poll_trial`.

        Returns:
            Nothing: it raises.

        Raises:
            DetachedRunnerError: Always (attach a new runner).
        """
        raise self._detached(f"poll trial {trial_index}")

    def stop(self, trial: BaseTrial, reason: str | None = None) -> dict[str, Any]:
        """Refused (see :meth:`run`).

        Args:
            trial: The trial.
            reason: Ax's stop reason (unused).

        Returns:
            Nothing: it raises.

        Raises:
            DetachedRunnerError: Always (attach a new runner).
        """
        raise self._detached(f"stop trial {trial.index}")

    def stop_trial(
        self, trial_index: int, trial_metadata: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Refused (see :meth:`run`).

        Args:
            trial_index, trial_metadata: As in :meth:`ExecutorRunner.stop_trial`.

        Returns:
            Nothing: it raises.

        Raises:
            DetachedRunnerError: Always (attach a new runner).
        """
        raise self._detached(f"stop trial {trial_index}")

    def poll_exception(self, trial: BaseTrial) -> str:
        """Refused (see :meth:`run`).

        Args:
            trial: The trial.

        Returns:
            Nothing: it raises.

        Raises:
            DetachedRunnerError: Always (attach a new runner).
        """
        raise self._detached(f"read the failure of trial {trial.index}")

    def outcome(self, trial_index: int, name: str) -> tuple[float, float]:
        """Refused (see :meth:`run`).

        Args:
            trial_index, name: As in :meth:`ExecutorRunner.outcome`.

        Returns:
            Nothing: it raises.

        Raises:
            DetachedRunnerError: Always (attach a new runner).
        """
        raise self._detached(f"read {name!r} of trial {trial_index}")


# ---------------------------------------------------------------------- storage
#: The runner type of :class:`ExecutorRunner` in Ax's SQL storage
#: (``runner_v2.runner_type``): Ax's default for a registered class,
#: ``abs(stable_hash("ExecutorRunner")) % 10**5``. It is written into files: never
#: change it.
SQL_RUNNER_TYPE = 4396


def _metric_to_dict(metric: ExecutorMetric) -> dict[str, Any]:
    from ax.storage.json_store.encoders import metric_to_dict

    return metric_to_dict(plain_metric(metric))


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
    registries, and the SQL runner and metric types."""
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
