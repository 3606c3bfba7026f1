"""The new user's trap of issue 50, run as that user would: an Ax experiment of
their own (4 parameters, ``lr`` on a log scale, a validation loss in [0, 1]
minimized), 3 trials in flight, ``pending="censor", window=4``; prints the share of
chosen trials' coordinates on a bound and the best loss after 25 trials, per
seed (``python -m bandit_experiments.studies.censor_trap [y_min ...]``;
``default``: the option left out)."""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from botorch_bandits.ax import bandit_generation_strategy

PARAMS = {
    "lr": (1e-5, 1e-1),
    "dropout": (0.0, 0.5),
    "weight_decay": (0.0, 0.01),
    "momentum": (0.8, 0.99),
}


def loss(p: dict[str, float]) -> float:
    """A smooth validation loss in (0.1, 1], best at lr = 1e-3, dropout = 0.2,
    weight_decay = 0.004, momentum = 0.9."""
    z = (
        ((math.log10(p["lr"]) + 3.0) / 1.2) ** 2
        + ((p["dropout"] - 0.2) / 0.2) ** 2
        + ((p["weight_decay"] - 0.004) / 0.005) ** 2
        + ((p["momentum"] - 0.9) / 0.08) ** 2
    )
    return 1.0 - 0.9 * math.exp(-z / 2.0)


def run(seed: int, trials: int = 25, in_flight: int = 3, **options: Any) -> dict:
    """One loop of ``trials`` trials with ``in_flight`` running (the oldest
    completed before the next is asked for), the loss's noise s.d. 0.01."""
    from ax import Client, RangeParameterConfig

    rng = np.random.default_rng(seed)
    client = Client(random_seed=seed)
    client.configure_experiment(
        name="trap",
        parameters=[
            RangeParameterConfig(
                name=n,
                parameter_type="float",
                bounds=b,
                scaling="log" if n == "lr" else "linear",
            )
            for n, b in PARAMS.items()
        ],
    )
    client.configure_optimization(objective="-loss")
    client.set_generation_strategy(
        bandit_generation_strategy(pending="censor", window=4, seed=seed, **options)
    )
    running: list = []
    made: list[dict] = []
    best = math.inf
    while len(made) < trials or running:
        while len(running) < in_flight and len(made) < trials:
            ((index, params),) = client.get_next_trials(max_trials=1).items()
            running.append((index, params))
            made.append(params)
        index, params = running.pop(0)
        value = loss(params)
        best = min(best, value)
        noisy = value + 0.01 * float(rng.normal())
        client.complete_trial(index, {"loss": noisy})
    on = [
        sum(
            math.isclose(p[n], b[0]) or math.isclose(p[n], b[1])
            for n, b in PARAMS.items()
        )
        / len(PARAMS)
        for p in made[5:]
    ]
    return {"faces": float(np.mean(on)), "best": best}


def main(argv: list[str]) -> int:
    for spec in argv or ["default"]:
        options = {} if spec == "default" else {"y_min": float(spec)}
        try:
            runs = [run(seed, **options) for seed in range(3)]
        except ValueError as err:
            print(f"y_min={spec}: refused at construction: {err}")
            continue
        faces = np.mean([r["faces"] for r in runs])
        best = [round(r["best"], 3) for r in runs]
        print(
            f"y_min={spec}: coordinates on a bound (trials 6-25) {faces:.0%}; best "
            f"loss after 25 trials per seed {best} (optimum 0.1)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
