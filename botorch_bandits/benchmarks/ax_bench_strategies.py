"""The strategies the Ax benchmark compares: the bandit strategies
(``bandit_generation_strategy`` in the practical or the theory mode) and the strategy
Ax chooses by default."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

AX_DEFAULT = "Ax default"
STRATEGIES: dict[str, tuple[str, str] | None] = {
    "IGP-UCB": ("IGP-UCB", "practical"),
    "GP-TS": ("GP-TS", "practical"),
    "GP-UCB": ("GP-UCB", "practical"),
    "IGP-UCB (theory)": ("IGP-UCB", "theory"),
    AX_DEFAULT: None,
}
"""Strategy labels: ``(algorithm, mode)`` of ``bandit_generation_strategy``, or
``None`` for Ax's default strategy."""


def bandit_strategy(
    label: str, seed: int, node_kwargs: Mapping[str, Any] | None = None
) -> Any:
    """The ``GenerationStrategy`` of a bandit label (not ``"Ax default"``), with
    ``node_kwargs`` (e.g. ``{"B": 3.0}`` or ``{"beta": 2.0}``) passed to the node."""
    from botorch_bandits.ax import bandit_generation_strategy

    algorithm, mode = STRATEGIES[label]
    return bandit_generation_strategy(
        algorithm=algorithm, seed=seed, mode=mode, **dict(node_kwargs or {})
    )


def configure_strategy(
    client: Any, label: str, seed: int, node_kwargs: Mapping[str, Any] | None = None
) -> None:
    """Set the strategy ``label`` on ``client``: a bandit strategy with
    ``node_kwargs``, or Ax's default choice seeded by ``seed``."""
    if STRATEGIES[label] is None:
        if node_kwargs:
            raise ValueError(
                f"`node_kwargs` are options of the bandit node; {label!r} takes none, "
                f"got {dict(node_kwargs)!r}."
            )
        # Ax's choice when none is set, its default initialization budget, seeded
        client.configure_generation_strategy(initialization_random_seed=seed)
    else:
        client.set_generation_strategy(bandit_strategy(label, seed, node_kwargs))
