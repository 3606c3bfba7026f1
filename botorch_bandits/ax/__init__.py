"""Ax integration (needs the ``ax`` extra): the bandit generation strategy, its
analysis card, the storage registration of its classes, SQLite storage, and a runner over any
``concurrent.futures.Executor`` (process pool, Dask)."""

from botorch_bandits._install import install_hint

try:
    import ax  # noqa: F401  (the extra this package needs)
except ModuleNotFoundError as err:  # name the extra, not a traceback into Ax
    if err.name != "ax":
        raise
    raise ModuleNotFoundError(
        f"botorch_bandits.ax needs Ax (the 'ax' extra, Ax >= 1.3): {install_hint('ax')}",
        name="ax",
    ) from None

from botorch_bandits.ax.analyses import BanditDecisionsAnalysis
from botorch_bandits.ax.decisions import decision_metadata, decision_table
from botorch_bandits.ax.generation import (
    ALGORITHMS,
    PENDING,
    BanditNode,
    CenterFirst,
    InitialTrials,
)
from botorch_bandits.ax.runner import (
    ExecutorMetric,
    ExecutorRunner,
    attach_executor_runner,
    run_trials,
)
from botorch_bandits.ax.sql import (
    DatabaseBusyError,
    close_storage,
    load_client,
    sqlite_storage,
    writer_lock,
)
from botorch_bandits.ax.storage import register
from botorch_bandits.ax.strategy import bandit_generation_strategy

register()

__all__ = [
    "ALGORITHMS",
    "PENDING",
    "BanditDecisionsAnalysis",
    "BanditNode",
    "CenterFirst",
    "DatabaseBusyError",
    "ExecutorMetric",
    "ExecutorRunner",
    "InitialTrials",
    "attach_executor_runner",
    "bandit_generation_strategy",
    "close_storage",
    "decision_metadata",
    "decision_table",
    "load_client",
    "register",
    "run_trials",
    "sqlite_storage",
    "writer_lock",
]
