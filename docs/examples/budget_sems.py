"""A budget on average with the cost reported with an SEM and without (issue 60):
f = x1 + 0.1 x2 maximized, the cost lat = x1 (reported as ``(x1, 0.02)`` or as
``x1``), ``lat <= 0.2`` on average (``long_term_constraints=True``), 40 trials one at
a time; mean(c - b) over the first 20 (50 %) and all 40 (100 %), 3 seeds."""

from __future__ import annotations

import logging
import warnings
from concurrent.futures import ProcessPoolExecutor

from ax import Client, RangeParameterConfig

from botorch_bandits.ax import bandit_generation_strategy

TRIALS, BUDGET, SEEDS = 40, 0.2, (0, 1, 2)


def run(job: tuple[float | None, int]) -> tuple[float, float]:
    sem, seed = job
    warnings.simplefilter("ignore")
    logging.disable(logging.INFO)
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
        lat = p["x1"] if sem is None else (p["x1"], sem)
        client.complete_trial(index, {"f": p["x1"] + 0.1 * p["x2"], "lat": lat})
    half = TRIALS // 2
    return sum(costs[:half]) / half - BUDGET, sum(costs) / TRIALS - BUDGET


def main() -> None:
    jobs = [(sem, seed) for sem in (None, 0.02) for seed in SEEDS]
    with ProcessPoolExecutor(2) as pool:
        out = dict(zip(jobs, pool.map(run, jobs), strict=True))
    print("SEM    seed  mean(c-b) at 50 %  at 100 %")
    for sem, seed in jobs:
        half, full = out[sem, seed]
        print(f"{sem!s:5}  {seed:4d}  {half:+17.3f}  {full:+8.3f}")


if __name__ == "__main__":
    main()
