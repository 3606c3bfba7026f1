"""Issue 52: what the strategy decided, read through public API: ``decision_table``
on a run with restarts, a long-term constraint and censored running trials has a
row per trial the bandit node made and the columns each option recorded."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("ax")

from ax import Client, RangeParameterConfig

from botorch_bandits.ax import (
    bandit_generation_strategy,
    decision_metadata,
    decision_table,
)


def _run(trials: int = 12) -> Client:
    client = Client(random_seed=0)
    client.configure_experiment(
        name="table",
        parameters=[
            RangeParameterConfig(name=n, bounds=(0.0, 1.0), parameter_type="float")
            for n in ("x1", "x2")
        ],
    )
    client.configure_optimization(objective="f", outcome_constraints=["g <= 0.5"])
    client.set_generation_strategy(
        bandit_generation_strategy(
            restarts=True,
            long_term_constraints=True,
            pending="censor",
            window=2,
            y_min=-1.0,
        )
    )
    running: list[tuple[int, dict]] = []
    for _ in range(trials):
        running += list(client.get_next_trials(max_trials=1).items())
        if len(running) == 2:  # two in flight, the oldest completes
            index, p = running.pop(0)
            f = math.sin(3 * p["x1"]) * math.cos(2 * p["x2"])
            client.complete_trial(trial_index=index, raw_data={"f": f, "g": p["x1"]})
    return client


def test_the_table_has_a_row_per_decision_and_each_option_s_columns():
    client = _run()
    table = decision_table(client)
    meta = decision_metadata(client)
    assert list(table.index) == sorted(meta) and table.index.name == "trial"
    assert len(table) == 12 - 5  # the 5 initial trials are not the node's
    columns = set(table.columns)
    # restarts, the budget's running average, censoring, the fit: nested keys
    # joined by dots, each the value the metadata holds
    assert {"cpd_restarts", "cpd_start", "fit.status", "sigma_multiplier"} <= columns
    assert any(c.startswith("budget.") for c in columns)
    assert any(c.startswith("censoring.") for c in columns)
    last = max(meta)
    assert table.loc[last, "fit.status"] == meta[last]["fit"]["status"]
    assert table.loc[last, "t"] == meta[last]["t"]
