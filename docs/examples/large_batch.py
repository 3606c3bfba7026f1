"""Seconds of one ``get_next_trials(max_trials=q)`` for q = 10, 50, 150 after 3
initial trials in 2-D (the default strategy; a fresh experiment for each q, one run
each): a batch's time grows linearly in its size (issue 60)."""

from __future__ import annotations

import logging
import time

from ax import Client, RangeParameterConfig

from botorch_bandits.ax import bandit_generation_strategy


def f(p: dict) -> float:
    return -((p["x"] - 0.3) ** 2) - (p["y"] - 0.7) ** 2


def main() -> None:
    logging.disable(logging.INFO)
    print("   q  trials   seconds  seconds per trial")
    for q in (10, 50, 150):
        client = Client(random_seed=0)
        client.configure_experiment(
            name="large_batch",
            parameters=[
                RangeParameterConfig(name=n, parameter_type="float", bounds=(0.0, 1.0))
                for n in "xy"
            ],
        )
        client.configure_optimization(objective="f")
        client.set_generation_strategy(bandit_generation_strategy(num_init=3))
        for _ in range(3):
            ((index, params),) = client.get_next_trials(max_trials=1).items()
            client.complete_trial(index, {"f": f(params)})
        start = time.perf_counter()
        trials = client.get_next_trials(max_trials=q)
        seconds = time.perf_counter() - start
        print(
            f"{q:4d}  {len(trials):6d}  {seconds:8.1f}  {seconds / len(trials):17.2f}"
        )


if __name__ == "__main__":
    main()
