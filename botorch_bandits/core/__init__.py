"""The decision core, free of Ax: a history of trials and typed options in, the next
decision and its metadata out. The Ax node (:mod:`botorch_bandits.ax`) reads an
experiment into a :class:`History` and calls :func:`decide`; tests and custom loops
call it directly."""

from botorch_bandits.core.decide import Decision, DecisionCache, decide
from botorch_bandits.core.domain import Domain
from botorch_bandits.core.history import History, TrialRecord
from botorch_bandits.core.options import (
    Censoring,
    DecisionOptions,
    LongTermConstraints,
    Refit,
    Restarts,
    TheoryModel,
    resolve_kwargs,
)

__all__ = [
    "Censoring",
    "Decision",
    "DecisionCache",
    "DecisionOptions",
    "Domain",
    "History",
    "LongTermConstraints",
    "Refit",
    "Restarts",
    "TheoryModel",
    "TrialRecord",
    "decide",
    "resolve_kwargs",
]
