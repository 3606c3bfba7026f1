"""Ax integration (needs the ``ax`` extra): the bandit generation strategy and the
storage registration of its classes."""

from botorch_bandits.ax.generation import (
    ALGORITHMS,
    PENDING,
    BanditNode,
    bandit_generation_strategy,
)
from botorch_bandits.ax.storage import register

register()

__all__ = [
    "ALGORITHMS",
    "PENDING",
    "BanditNode",
    "bandit_generation_strategy",
    "register",
]
