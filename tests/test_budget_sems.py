"""A budget on average (long-term constraints) holds the same with the cost reported
with an SEM as without it (issue 60's audit: ``lat <= 0.2`` with the cost reported as
``(x, 0.02)`` had mean(c - b) at +0.188 after 20 trials and +0.063 after 30, against
-0.019 without the SEM, one seed). Not reproduced on 1f07768 nor since (15 seeds and
other settings scanned, docs/measured.md); this test keeps it so: the SEM reaches the
cost's GP as its noise (``sems="auto"`` -> ``"fixed"``) and never the multipliers,
which read the reported means."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("ax")

#: the budget, and the trials of each run
BUDGET, TRIALS = 0.2, 30


def _mean_overspend(sem: float | None, seed: int) -> float:
    """mean(c - b) over ``TRIALS`` trials of f = x1 + 0.1 x2 with the cost lat = x1
    (reported as ``(x1, sem)`` when ``sem`` is given)."""
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax import bandit_generation_strategy

    logging.getLogger("ax").setLevel(logging.WARNING)
    client = Client(random_seed=seed)
    client.configure_experiment(
        name="budget_sems",
        parameters=[
            RangeParameterConfig(name=n, parameter_type="float", bounds=(0.0, 1.0))
            for n in ("x1", "x2")
        ],
    )
    client.configure_optimization(
        objective="f", outcome_constraints=[f"lat <= {BUDGET}"]
    )
    client.set_generation_strategy(
        bandit_generation_strategy(long_term_constraints=True, seed=seed)
    )
    costs = []
    for _ in range(TRIALS):
        ((index, p),) = client.get_next_trials(max_trials=1).items()
        costs.append(p["x1"])
        lat = (p["x1"], sem) if sem is not None else p["x1"]
        client.complete_trial(index, {"f": p["x1"] + 0.1 * p["x2"], "lat": lat})
    return sum(costs) / len(costs) - BUDGET


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_budget_with_reported_sems_holds_as_without(seed) -> None:
    plain = _mean_overspend(None, seed)
    with_sem = _mean_overspend(0.02, seed)
    assert plain <= 0.02, plain
    assert with_sem <= 0.02, with_sem  # the audit's +0.063 after 30 trials
    assert abs(with_sem - plain) <= 0.03, (with_sem, plain)
