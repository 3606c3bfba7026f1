"""A reload at scale (issue 62): after 1,000 completed trials, with each feature on
(restarts, forgetting, both, a window, the long-term constraints on separate and on
composite models, censoring, the qLogNEI rule alone and with long-term constraints),
a new process that loads the SQLite file makes the same next decision as the process
that wrote it, with the same recorded fits (reused there and here: the schedule's
last fit, read back from the trials' metadata)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from botorch.test_functions import Hartmann

D = 3
N = 1000
_F = Hartmann(dim=D)
NAME = "reload-at-scale"
#: at most this many trials of the strategy's own before its node decides
INITIAL = 10

#: each feature's options; a trial of each is left running where censoring reads it
FEATURES = {
    "plain": {},
    "restarts": {"restarts": True},
    "forgetting": {"forgetting": True},
    "restarts+forgetting": {"restarts": True, "forgetting": True},
    "window": {"model_window": 25},
    "long-term": {"long_term_constraints": True},
    "long-term-composite": {
        "long_term_constraints": True,
        "constraint_model": "composite",
    },
    "censor": {"pending": "censor", "y_min": 0.0},
    "qLogNEI": {"algorithm": "qLogNEI"},
    "qLogNEI+long-term": {"algorithm": "qLogNEI", "long_term_constraints": True},
}

RELOAD = """
import json, sys
from botorch_bandits.ax import sql
client = sql.load_client(sys.argv[2], sys.argv[1], random_seed=0)
((index, params),) = client.get_next_trials(max_trials=1).items()
meta = client._experiment.trials[index].generator_runs[0].gen_metadata
print(json.dumps({"index": index, "params": params,
                  "fit": meta.get("fit"), "constraint_fits": meta.get("constraint_fits")}))
"""


def _raw(x: list[float], constrained: bool) -> dict[str, float]:
    """Hartmann3 (minimized, ``f <= 0``; 0 is its worst value, the censored trials'
    ``y_min``) and, under the outcome constraint ``c <= 0.5``, the cost ``c = x0``."""
    value = float(_F(torch.tensor([x], dtype=torch.double)))
    return {"f": value, "c": x[0]} if constrained else {"f": value}


def _filled(path, options: dict):
    """A SQLite-backed client with ``N`` completed trials at scrambled-Sobol points
    (attached and saved once: each ``complete_trial`` would append to the data) and
    one running one."""
    from ax import Client, RangeParameterConfig
    from ax.core.data import Data

    from botorch_bandits.ax import bandit_generation_strategy, sql

    client = Client(random_seed=0, storage_config=sql.sqlite_storage(path))
    client.configure_experiment(
        name=NAME,
        parameters=[
            RangeParameterConfig(name=f"x{i}", parameter_type="float", bounds=(0, 1))
            for i in range(D)
        ],
    )
    constrained = options.get("long_term_constraints", False)
    client.configure_optimization(
        objective="-f", outcome_constraints=["c <= 0.5"] if constrained else None
    )
    client.set_generation_strategy(bandit_generation_strategy(**options))
    experiment = client._experiment
    points = torch.quasirandom.SobolEngine(D, scramble=True, seed=3).draw(N + 1)
    datas = []
    for row in points.double().tolist():
        params = {f"x{i}": v for i, v in enumerate(row)}
        index = client.attach_trial(parameters=params)
        if len(datas) == N:  # the last one stays running (censoring reads it)
            break
        trial = experiment.trials[index]
        raw = {trial.arm.name: [(float("nan"), _raw(row, constrained))]}
        datas.append(trial._raw_evaluations_to_data(raw_data=raw))
        trial.mark_completed()
    experiment.attach_data(Data.from_multiple_data(datas))
    client._save_experiment_to_db_if_possible(experiment=experiment)
    return client


def _decide(client) -> dict:
    ((index, params),) = client.get_next_trials(max_trials=1).items()
    meta = client._experiment.trials[index].generator_runs[0].gen_metadata
    return {
        "index": index,
        "params": params,
        "fit": meta.get("fit"),
        "constraint_fits": meta.get("constraint_fits"),
    }


@pytest.mark.slow  # ten experiments of 1,000 trials, a fit and a new process each
@pytest.mark.parametrize("feature", list(FEATURES))
def test_a_reload_after_1000_trials_decides_the_same_in_a_new_process(
    tmp_path, feature
) -> None:
    pytest.importorskip("sqlalchemy")
    path = tmp_path / "exp.db"
    client = _filled(path, FEATURES[feature])
    constrained = FEATURES[feature].get("long_term_constraints", False)
    first = None
    for _ in range(INITIAL + 1):  # the strategy's own first trials, then a fit
        first = _decide(client)
        x = [first["params"][f"x{i}"] for i in range(D)]
        client.complete_trial(trial_index=first["index"], raw_data=_raw(x, constrained))
        if first["fit"] is not None:
            break
    assert first["fit"] is not None and first["fit"]["status"] == "fitted", first
    copy = tmp_path / "copy.db"
    copy.write_bytes(path.read_bytes())
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    res = subprocess.run(
        [sys.executable, "-c", RELOAD, str(copy), NAME],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    there = json.loads(res.stdout.strip().splitlines()[-1])
    here = _decide(client)
    assert json.loads(json.dumps(here)) == there
    assert here["index"] == first["index"] + 1
    assert here["fit"]["status"] == "reused", here["fit"]
    assert here["fit"]["completed"] == first["fit"]["completed"] >= N
    if FEATURES[feature].get("constraint_model", "separate") == "separate" and (
        FEATURES[feature].get("long_term_constraints")
    ):
        assert [f["status"] for f in here["constraint_fits"]] == ["reused"], here
