"""Ax integration (needs the ``ax`` extra): the bandit generation strategy, the
storage registration of its classes, SQLite storage, and a runner over any
``concurrent.futures.Executor`` (process pool, Dask)."""

from botorch_bandits.ax.generation import (
    ALGORITHMS,
    PENDING,
    BanditNode,
    CenterFirst,
    InitialTrials,
    bandit_generation_strategy,
)
from botorch_bandits.ax.runner import (
    ExecutorMetric,
    ExecutorRunner,
    attach_executor_runner,
    run_trials,
)
from botorch_bandits.ax.sql import load_client, sqlite_storage
from botorch_bandits.ax.storage import register

register()

__all__ = [
    "ALGORITHMS",
    "PENDING",
    "BanditNode",
    "CenterFirst",
    "ExecutorMetric",
    "ExecutorRunner",
    "InitialTrials",
    "attach_executor_runner",
    "bandit_generation_strategy",
    "load_client",
    "register",
    "run_trials",
    "sqlite_storage",
]
