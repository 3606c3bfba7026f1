"""Censoring's decisions under ``y -> a y + b`` (``a > 0``, ``y_min -> a y_min + b``)
through a real ``ax.Client`` with trials in flight across calls (issue 60),
including the decisions made while the completed values have no spread."""

from __future__ import annotations

import logging
import math
import warnings
from collections import deque

import pytest
from ax import Client, RangeParameterConfig

from botorch_bandits.ax import bandit_generation_strategy


def _f(p: dict) -> float:
    x, y = p["x0"], p["x1"]
    bump = 0.5 * math.exp(-((x - 0.6) ** 2 + (y - 0.3) ** 2) / 0.1)
    return math.sin(3 * x) * math.cos(2 * y) + bump


def _loop(a: float, b: float, y_min: float, num_init: int, trials: int = 8):
    """3 trials in flight: the first call asks for 3, then the oldest completes
    and one more is asked for; each trial's point and its censored ``y_min`` on
    the model's scale."""
    client = Client(random_seed=0)
    client.configure_experiment(
        name="censor_invariance",
        parameters=[
            RangeParameterConfig(
                name=f"x{i}", bounds=(0.0, 1.0), parameter_type="float"
            )
            for i in range(2)
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(
        bandit_generation_strategy(
            pending="censor", y_min=y_min, window=6, num_init=num_init
        )
    )
    running: deque = deque()
    made = 0
    while made < trials or running:
        if made < trials and len(running) < 3:
            new = client.get_next_trials(max_trials=3 - len(running))
            running.extend(new.items())
            made += len(new)
            continue
        idx, params = running.popleft()
        client.complete_trial(trial_index=idx, raw_data={"f": a * _f(params) + b})
    out = []
    for _, trial in sorted(client._experiment.trials.items()):
        meta = trial.generator_runs[0].gen_metadata or {}
        p = trial.arms[0].parameters
        out.append(([p["x0"], p["x1"]], meta.get("censoring", {}).get("y_min")))
    return out


@pytest.mark.parametrize("num_init", [1, 3])
def test_censoring_invariant_with_trials_in_flight(num_init: int) -> None:
    # num_init=3: the first decision has one completed value and two in flight;
    # num_init=1: the first decisions have none completed (the model then sees
    # y_min alone). Before the fix the spread of such data was 1 in the
    # objective's units, so y_min landed at -1.84 for f and at -184 for 100 f + 100.
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            one = _loop(1.0, 0.0, -1.0, num_init)
            other = _loop(100.0, 100.0, 100.0 * -1.0 + 100.0, num_init)
    finally:
        logging.disable(logging.NOTSET)
    assert len(one) == len(other) == 8
    for i, ((x, ym), (x2, ym2)) in enumerate(zip(one, other, strict=True)):
        assert x == pytest.approx(x2, abs=1e-6), f"trial {i}: {x} vs {x2}"
        if ym is not None or ym2 is not None:
            assert ym == pytest.approx(ym2, abs=1e-6), f"trial {i}: y_min"
