"""Shared by the Ax tests: the loop that keeps trials in flight, and the option
matrix of the bandit strategy (each option alone and combined)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any


def run_in_flight(
    client: Any,
    trials: int,
    data: Callable[[dict, int], dict],
    in_flight: int = 3,
    lifo: bool = False,
) -> None:
    """Keep ``in_flight`` trials running until ``trials`` are made; complete the
    oldest (or, with ``lifo``, the newest) first with ``data(params, index)``."""
    running: deque = deque()
    made = 0
    while made < trials or running:
        if made < trials and len(running) < in_flight:
            new = client.get_next_trials(
                max_trials=min(in_flight - len(running), trials - made)
            )
            assert new, "the strategy returned no trial"
            running.extend(new.items())
            made += len(new)
            continue
        idx, params = running.pop() if lifo else running.popleft()
        client.complete_trial(trial_index=idx, raw_data=data(params, idx))


_MATRIX = [
    dict(algorithm="IGP-UCB"),
    dict(algorithm="GP-UCB"),
    dict(algorithm="GP-TS"),
    dict(algorithm="IGP-UCB", pending="hallucinate"),
    dict(algorithm="IGP-UCB", pending="censor", window=4, y_min=-1.5, beta=1.0),
    dict(algorithm="GP-TS", pending="censor", window=4, y_min=-1.5, beta=1.0),
    dict(algorithm="IGP-UCB", pending="censor", window_seconds=0.05, y_min=-1.5),
    dict(algorithm="IGP-UCB", long_term_constraints=True, epoch_length=5),
    dict(algorithm="GP-TS", long_term_constraints=True, multiplier_update="additive"),
    dict(algorithm="IGP-UCB", restarts=True, beta=1.0),
    # constraints + censoring + restarts combined
    dict(
        algorithm="IGP-UCB",
        long_term_constraints=True,
        epoch_length=5,
        pending="censor",
        window=4,
        y_min=-3.0,
        beta=1.0,
        restarts=True,
    ),
]

#: the option matrix in both modes: the theory mode (fixed kernel, finite decision
#: set; plus its marginal-likelihood option) and the practical mode (fitted GP on
#: standardized targets, gradient optimizer)
OPTIONS = [
    *({"mode": "theory", **o} for o in _MATRIX),
    {"mode": "theory", "algorithm": "IGP-UCB", "hyperparameters": "fitted"},
    *({"mode": "practical", **o} for o in _MATRIX),
]


def resolved_pending(options: dict) -> str:
    """The pending rule a node built with ``options`` uses (the mode's default)."""
    default = (
        "hallucinate" if options.get("mode", "practical") == "practical" else "ignore"
    )
    return options.get("pending", default)
