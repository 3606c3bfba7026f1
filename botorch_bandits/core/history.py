"""What a decision sees of the past: each trial's point in the unit cube, its
objective (as maximized) and constraint values, its creation and arrival times, and
whether it explored uniformly; the failed trials; the last recorded GP fit."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from botorch_bandits.hyperparameters import Hyperparameters


@dataclass(frozen=True)
class TrialRecord:
    """One trial. ``f`` is ``None`` while its data has not arrived; ``g`` holds the
    constraint values (``g <= 0`` feasible) when there are constraints; ``sem`` and
    ``g_sem`` their standard errors where reported; a trial
    issued earlier in the same call (not yet in the experiment) has ``index=-1``
    and no times."""

    index: int
    x: tuple[float, ...]  # unit-cube coordinates
    f: float | None = None
    g: tuple[float, ...] | None = None
    created: float = math.nan  # seconds
    completed: float | None = None
    uniform: bool = False  # a GP-UCB-CPD uniform-exploration trial
    #: the reported standard errors (Ax's SEM) of the objective and of each
    #: constraint value, ``None`` or NaN where not reported
    sem: float | None = None
    g_sem: tuple[float, ...] | None = None

    @classmethod
    def issued(cls, x: list[float] | tuple[float, ...], uniform: bool) -> TrialRecord:
        """A candidate issued in this call: no trial yet, no value, no times."""
        return cls(index=-1, x=tuple(x), uniform=uniform)


@dataclass(frozen=True)
class History:
    """The trials in order (the experiment's, then this call's earlier candidates),
    the indices of failed / abandoned trials, of the trials left out because their
    point lies outside the search space (``out_of_design``), the objective's name
    (for messages),
    the number of constraints, and the last fit recorded with a trial (the next
    fit's warm start: ``warm``; the whole record, with the counts the refit
    schedule reads: ``last_fit``), and the residual change-point detector's state
    the latest decision recorded (``drift``: ``start``, the trial index the model's
    data begins with, and the ``restarts`` and ``detections`` so far); ``sign``: the
    objective's direction (the trials' values are maximized: -1 when the metric is
    minimized), which maps the censoring's ``y_min`` the same way."""

    trials: tuple[TrialRecord, ...] = ()
    failed: tuple[int, ...] = ()
    out_of_design: tuple[int, ...] = ()
    metric: str = "f"
    num_constraints: int = 0
    warm: Hyperparameters | None = None
    last_fit: dict | None = None
    fixed: dict = field(default_factory=dict)  # features fixed for this call
    drift: dict | None = None
    sign: float = 1.0

    def then(self, *records: TrialRecord) -> History:
        """This history with ``records`` appended (candidates issued in the call)."""
        return replace(self, trials=self.trials + tuple(records))
