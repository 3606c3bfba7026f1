"""One wrong value and ``restarts=True`` (issue 60): BoTorch's Hartmann-3 (maximized,
stationary), 40 trials one at a time, trial 20 reported as f + 50; for each seed, the
trial the model starts at in the decisions after it (``cpd_start``: 0 keeps every
trial) with restarts and without them (plain: always 0), and both runs' simple
regret (of the true values) after 40 trials."""

from __future__ import annotations

import logging
import warnings
from concurrent.futures import ProcessPoolExecutor

import torch
from ax import Client, RangeParameterConfig
from botorch.test_functions import Hartmann

from botorch_bandits.ax import bandit_generation_strategy, decision_table

TRIALS, SPIKE, SEEDS = 40, 20, range(10)


def run(job: tuple[int, bool]) -> tuple[list[int], float]:
    seed, restarts = job
    warnings.simplefilter("ignore")
    logging.disable(logging.INFO)
    problem = Hartmann(dim=3, negate=True)
    client = Client(random_seed=seed)
    client.configure_experiment(
        name="one_wrong_value",
        parameters=[
            RangeParameterConfig(name=f"x{i}", parameter_type="float", bounds=(0, 1))
            for i in range(3)
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(
        bandit_generation_strategy(restarts=restarts, seed=seed)
    )
    best = -float("inf")
    for _ in range(TRIALS):
        ((index, p),) = client.get_next_trials(max_trials=1).items()
        x = torch.tensor([[p[f"x{i}"] for i in range(3)]], dtype=torch.double)
        value = float(problem(x))
        best = max(best, value)
        client.complete_trial(index, {"f": value + (50.0 if index == SPIKE else 0.0)})
    table = decision_table(client)
    after = table.loc[SPIKE + 1 :]
    starts = after["cpd_start"].tolist() if restarts else [0] * len(after)
    return [int(s) for s in starts], problem.optimal_value - best


def main() -> None:
    jobs = [(seed, restarts) for seed in SEEDS for restarts in (True, False)]
    with ProcessPoolExecutor(2) as pool:
        out = dict(zip(jobs, pool.map(run, jobs), strict=True))
    print(f"model's start in the decisions after trial {SPIKE} (reported as f + 50)")
    print(
        "seed  restarts: first, last, latest start   plain   simple regret (restarts, plain)"
    )
    for seed in SEEDS:
        starts, regret = out[seed, True]
        plain, regret_plain = out[seed, False]
        print(
            f"{seed:4d}  {starts[0]:9d} {starts[-1]:5d} {max(starts):6d}"
            f"{max(plain):15d}   {regret:.4f}, {regret_plain:.4f}"
        )
    moved = sum(max(out[s, True][0]) >= SPIKE for s in SEEDS)
    print(
        f"seeds whose model started at trial {SPIKE} or later: {moved} of {len(SEEDS)}"
    )


if __name__ == "__main__":
    main()
