"""What a decision sees of the past: each trial's point in the unit cube, its
objective (as maximized) and constraint values, its creation and arrival times, and
whether it explored uniformly; the failed trials; the last recorded GP fit."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from botorch_bandits.hyperparameters import Hyperparameters


@dataclass(frozen=True)
class TrialRecord:
    """One trial.

    Args:
        index: The trial's index (-1: issued earlier in the same call, not yet in
            the experiment, and then without times).
        x: Its point's unit-cube coordinates.
        f: Its objective value, as maximized (``None`` while its data has not
            arrived).
        g: Its constraint values (``g <= 0`` feasible) when there are constraints.
        created: When it was created, in seconds (default NaN).
        completed: When its data arrived, in seconds (default ``None``).
        uniform: Whether it was a GP-UCB-CPD uniform-exploration trial.
        sem, g_sem: The reported standard errors (Ax's SEM) of the objective and of
            each constraint value, ``None`` or NaN where not reported.
    """

    index: int
    x: tuple[float, ...]
    f: float | None = None
    g: tuple[float, ...] | None = None
    created: float = math.nan
    completed: float | None = None
    uniform: bool = False
    sem: float | None = None
    g_sem: tuple[float, ...] | None = None

    @classmethod
    def issued(cls, x: list[float] | tuple[float, ...], uniform: bool) -> TrialRecord:
        """A candidate issued in this call: no trial yet, no value, no times.

        Args:
            x: Its unit-cube coordinates.
            uniform: Whether it explored uniformly.

        Returns:
            The record, with ``index=-1``.
        """
        return cls(index=-1, x=tuple(x), uniform=uniform)


@dataclass(frozen=True)
class History:
    """What a decision sees of the past.

    Args:
        trials: The :class:`TrialRecord` s in order (the experiment's, then this
            call's earlier candidates).
        failed: The indices of failed / abandoned trials.
        out_of_design: The indices of the trials left out because their point lies
            outside the search space.
        metric: The objective's name, for messages (default ``"f"``).
        num_constraints: The number of constraints (default 0).
        warm: The last fit recorded with a trial: the next fit's warm start.
        last_fit: That fit's whole record, with the counts the refit schedule reads.
        constraint_fits: The long-term constraints' GP fits the latest decision
            with them recorded (``constraint_model="separate"``), one record per
            constraint with the counts the refit schedule reads; ``None``
            (default): none.
        fixed: The features fixed for this call (default empty).
        drift: The residual change-point detector's state the latest decision
            recorded: ``start`` (the trial index the model's data begins with) and
            the ``restarts`` and ``detections`` so far; ``None`` (default): none.
        sign: The objective's direction (the trials' values are maximized: -1 when
            the metric is minimized), which maps the censoring's ``y_min`` the same
            way (default 1).
    """

    trials: tuple[TrialRecord, ...] = ()
    failed: tuple[int, ...] = ()
    out_of_design: tuple[int, ...] = ()
    metric: str = "f"
    num_constraints: int = 0
    warm: Hyperparameters | None = None
    last_fit: dict | None = None
    constraint_fits: tuple[dict, ...] | None = None
    fixed: dict = field(default_factory=dict)
    drift: dict | None = None
    sign: float = 1.0

    def then(self, *records: TrialRecord) -> History:
        """This history with ``records`` appended (candidates issued in the call).

        Args:
            *records: The records to append, in order.

        Returns:
            A new :class:`History`.
        """
        return replace(self, trials=self.trials + tuple(records))
