"""Trials outside the search space (issue 31): left out of the model by default, as
Ax's models leave them out, and counted in the metadata; ``fit_out_of_design=True``
(Ax's option of that name) uses them."""

from __future__ import annotations

import pytest

from botorch_bandits.ax import bandit_generation_strategy


def _run(**options):
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig

    client = Client()
    client.configure_experiment(
        parameters=[
            RangeParameterConfig(name=n, parameter_type="float", bounds=(0, 1))
            for n in ("x1", "x2")
        ]
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(
        bandit_generation_strategy(num_init=3, seed=0, **options)
    )
    for _ in range(4):
        ((idx, p),) = client.get_next_trials(max_trials=1).items()
        client.complete_trial(trial_index=idx, raw_data={"f": -((p["x1"] - 0.3) ** 2)})
    idx = client.attach_trial(parameters={"x1": 3.0, "x2": -2.0})
    client.complete_trial(trial_index=idx, raw_data={"f": 5.0})
    ((new, _),) = client.get_next_trials(max_trials=1).items()
    return client._experiment.trials[new].generator_runs[0].gen_metadata


@pytest.mark.parametrize("mode", ["practical", "theory"])
def test_out_of_design_trials_are_left_out_and_counted(mode) -> None:
    """Before: the attached point outside the bounds entered the model."""
    meta = _run(mode=mode)
    assert meta["out_of_design"] == 1
    assert meta["t"] == 5  # four trials in the model, the fifth the new one
    used = _run(mode=mode, fit_out_of_design=True)
    assert "out_of_design" not in used
    assert used["t"] == 6


def test_fit_out_of_design_must_be_a_bool() -> None:
    with pytest.raises(ValueError, match="fit_out_of_design"):
        bandit_generation_strategy(fit_out_of_design="yes")
