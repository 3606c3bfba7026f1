"""The long-term constraints' own GPs (``constraint_model="separate"``) follow the
objective's refit schedule (issue 62): refitted at every decision up to
``refit_after`` observations, then when the completed trials have grown by
``refit_growth``, each warm-started from its last recorded fit; in between the
recorded fits are reused, read back from the trials' metadata, so a reload in a new
process decides the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest
import torch
from botorch.test_functions import Hartmann

from botorch_bandits.core import DecisionOptions, Domain, History, TrialRecord, decide

D = 3
_F = Hartmann(dim=D)


def _value(x) -> float:
    return float(-_F(torch.tensor([list(x)], dtype=torch.double)))


def _box() -> Domain:
    sobol = torch.quasirandom.SobolEngine(D, scramble=True, seed=0)
    return Domain.box(sobol.draw(128, dtype=torch.double))


def test_the_constraint_gps_reuse_their_fits_between_refits() -> None:
    opts = DecisionOptions.from_kwargs(
        long_term_constraints=True, refit_after=4, refit_growth=1.5
    )
    assert opts.constraints.model == "separate"
    trials: list[TrialRecord] = []
    last = fits = None
    rows = []
    for i in range(12):
        h = History(
            trials=tuple(trials), last_fit=last, constraint_fits=fits, num_constraints=2
        )
        d = decide(h, opts, _box())
        trials.append(
            TrialRecord(
                index=i,
                x=tuple(d.x),
                f=_value(d.x),
                g=(d.x[0] - 0.5, d.x[1] + d.x[2] - 1.0),
                created=float(i),
                completed=i + 0.5,
            )
        )
        last, fits = d.metadata["fit"], tuple(d.metadata["constraint_fits"])
        rows.append((last["status"], [f["status"] for f in fits], fits))
    for objective, constraints, fits in rows:
        # each constraint's GP is fitted exactly when the objective's is
        assert constraints == [objective] * 2, rows
        assert all(f["n"] == fits[0]["n"] for f in fits)
    statuses = [r[0] for r in rows]
    assert statuses[:5] == ["prior"] + ["fitted"] * 4
    assert "reused" in statuses and statuses.count("fitted") < len(statuses) - 1
    for (status, _, fits), (_, _, before) in zip(rows[1:], rows, strict=False):
        if status == "reused":  # the recorded hyperparameters, unchanged
            for f, b in zip(fits, before, strict=True):
                assert (f["lengthscale"], f["noise"], f["mean"]) == (
                    b["lengthscale"],
                    b["noise"],
                    b["mean"],
                )


def test_the_constraint_gps_refit_from_a_fit_recorded_for_other_inputs() -> None:
    """A recorded constraint fit with another number of lengthscales (another
    search space) is not reused: the GPs are fitted afresh."""
    opts = DecisionOptions.from_kwargs(
        long_term_constraints=True, refit_after=2, refit_growth=10.0
    )
    trials = [
        TrialRecord(index=i, x=x, f=_value(x), g=(x[0] - 0.5,), created=i, completed=i)
        for i, x in enumerate(_box().unit[:6].tolist())
    ]
    d = decide(History(trials=tuple(trials), num_constraints=1), opts, _box())
    good = tuple(d.metadata["constraint_fits"])
    wrong = ({**good[0], "lengthscale": [0.3] * (D + 1)},)
    h = History(trials=tuple(trials), last_fit=d.metadata["fit"], num_constraints=1)
    reused = decide(replace(h, constraint_fits=good), opts, _box())
    fresh = decide(replace(h, constraint_fits=wrong), opts, _box())
    assert reused.metadata["constraint_fits"][0]["status"] == "reused"
    assert fresh.metadata["constraint_fits"][0]["status"] == "fitted"


RELOAD = """
import json, sys
from botorch_bandits.ax import sql
client = sql.load_client("budget-refit", sys.argv[1], random_seed=0)
((index, params),) = client.get_next_trials(max_trials=1).items()
meta = client._experiment.trials[index].generator_runs[0].gen_metadata
print(json.dumps({"index": index, "params": params, "fit": meta["fit"],
                  "constraint_fits": meta["constraint_fits"]}))
"""


def _client(path):
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax import bandit_generation_strategy, sql

    client = Client(random_seed=0, storage_config=sql.sqlite_storage(path))
    client.configure_experiment(
        name="budget-refit",
        parameters=[
            RangeParameterConfig(name=f"x{i}", parameter_type="float", bounds=(0, 1))
            for i in range(D)
        ],
    )
    client.configure_optimization(objective="-f", outcome_constraints=["c <= 0.5"])
    client.set_generation_strategy(
        bandit_generation_strategy(
            long_term_constraints=True, refit_after=4, refit_growth=1.5
        )
    )
    return client


def test_a_reload_between_constraint_refits_decides_the_same_in_a_new_process(
    tmp_path,
) -> None:
    pytest.importorskip("sqlalchemy")
    path = tmp_path / "exp.db"
    client = _client(path)
    for _ in range(9):
        ((index, params),) = client.get_next_trials(max_trials=1).items()
        x = [params[f"x{i}"] for i in range(D)]
        client.complete_trial(trial_index=index, raw_data={"f": -_value(x), "c": x[0]})
    copy = tmp_path / "copy.db"
    copy.write_bytes(path.read_bytes())
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    res = subprocess.run(
        [sys.executable, "-c", RELOAD, str(copy)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    there = json.loads(res.stdout.strip().splitlines()[-1])
    ((index, params),) = client.get_next_trials(max_trials=1).items()
    meta = client._experiment.trials[index].generator_runs[0].gen_metadata
    here = {
        "index": index,
        "params": params,
        "fit": meta["fit"],
        "constraint_fits": meta["constraint_fits"],
    }
    assert json.loads(json.dumps(here)) == there
    assert [f["status"] for f in here["constraint_fits"]] == ["reused"], here
