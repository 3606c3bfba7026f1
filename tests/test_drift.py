"""Drift handling in the practical mode (issue 48): the residual change-point
detector (its one-step-ahead residuals are the sequential posterior's, its false
alarms stay at the level given, it is free of the residuals' scale, it finds a
clear change and estimates where it began), the forgetting option (time as an
input, the decision at the next trial's time), their options, and Ax loops with
each on: the same trials for f and 100 f + 100, a reload in a new process and a
SIGKILL resume that decide the same."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import torch

from botorch_bandits.core import DecisionOptions
from botorch_bandits.models.forgetting import (
    TIME_UNIT,
    at_time,
    fit_forgetting_gp,
    forgetting_summary,
    with_time,
)
from botorch_bandits.residuals import (
    MAX_RUN,
    MIN_REFERENCE,
    MIN_RUN,
    prequential_residuals,
    residual_change,
)

HERE = Path(__file__).resolve().parent
#: the Ax loops' drift options
OPTIONS = {"restarts": {"restarts": True}, "forgetting": {"forgetting": True}}


# ---------------------------------------------------------------- the detector
def test_prequential_residuals_are_the_sequential_posteriors() -> None:
    """z_i = (y_i - E[y_i | y_<i]) / sd(y_i | y_<i), each computed by conditioning
    on the earlier observations directly."""
    g = torch.Generator().manual_seed(0)
    X = torch.rand(12, 2, generator=g, dtype=torch.double)
    K = torch.exp(-torch.cdist(X, X).square() / (2 * 0.3**2))
    y = torch.randn(12, generator=g, dtype=torch.double)
    noise, mean = 0.05, 0.2
    z = prequential_residuals(K, y, noise, mean)
    for i in range(12):
        S = K[:i, :i] + noise * torch.eye(i, dtype=torch.double)
        k = K[:i, i]
        w = torch.linalg.solve(S, k) if i else k
        mu = mean + (w @ (y[:i] - mean) if i else 0.0)
        var = K[i, i] + noise - (k @ w if i else 0.0)
        assert float(z[i]) == pytest.approx(float((y[i] - mu) / var.sqrt()), rel=1e-8)


def test_false_alarms_stay_at_the_level_given() -> None:
    """Exchangeable residuals (iid, any scale): the detector fires on at most the
    level given (2000 sequences of 60, level 0.01: at most 1.5 %)."""
    rng = np.random.default_rng(1)
    fired = 0
    for _ in range(2000):
        z = torch.tensor(rng.standard_t(df=3, size=60))  # heavy tails too
        fired += residual_change(z, 0.01).fired
    assert fired / 2000 <= 0.015, fired


def test_the_test_is_free_of_the_residuals_scale() -> None:
    z = torch.tensor(np.random.default_rng(2).normal(size=40))
    z[-5:] *= 8.0
    a, b = residual_change(z, 1e-3), residual_change(1e4 * z, 1e-3)
    assert a == b and a.fired


def test_a_run_of_large_residuals_fires_and_dates_the_change() -> None:
    z = torch.tensor(np.random.default_rng(3).normal(size=30))
    assert not residual_change(z, 1e-3).fired
    z[-4:] = torch.tensor([9.0, -12.0, 10.0, 8.5])
    test = residual_change(z, 1e-3)
    assert test.fired and test.run == 4 and test.reference == 26
    # too few earlier residuals: no test
    short = torch.full((MIN_REFERENCE + MIN_RUN - 1,), 1.0)
    assert residual_change(short, 0.5).run is None
    assert MIN_RUN <= MAX_RUN


# ---------------------------------------------------------------- forgetting
def test_time_is_a_last_input_and_the_rule_is_evaluated_now() -> None:
    from botorch.acquisition import UpperConfidenceBound

    g = torch.Generator().manual_seed(4)
    X = torch.rand(20, 2, generator=g, dtype=torch.double)
    times = list(range(20))
    # the peak moves: early trials peak at x1 = 0.2, late ones at 0.8
    Y = torch.tensor(
        [
            -((x[0] - (0.2 if t < 10 else 0.8)) ** 2)
            for x, t in zip(X.tolist(), times, strict=True)
        ],
        dtype=torch.double,
    )
    Xt = with_time(X, times)
    assert Xt.shape == (20, 3) and float(Xt[-1, -1]) == pytest.approx(19 / TIME_UNIT)
    model = fit_forgetting_gp(X, Y, times)
    acqf = at_time(UpperConfidenceBound(model, beta=0.0), 2, time=20)
    grid = torch.tensor([[[0.2, 0.5]], [[0.8, 0.5]]], dtype=torch.double)
    with torch.no_grad():
        now = acqf(grid)
    assert float(now[1]) > float(now[0])  # the mean now favours the late peak
    summary = forgetting_summary(0.1)
    assert summary["time_lengthscale_trials"] == pytest.approx(0.1 * TIME_UNIT)
    assert summary["half_life_trials"] < summary["lag_5pct_trials"]


# ---------------------------------------------------------------- options
def test_the_drift_options_and_their_refusals() -> None:
    opts = DecisionOptions.from_kwargs(restarts=True, forgetting=True)
    assert opts.forgetting and opts.restarts.detector == "residual"
    assert not DecisionOptions.from_kwargs().forgetting
    bad = [
        (dict(restarts=True, xi=1.0), "xi=1.0"),
        (dict(restarts=True, cpd_regularization=5.0), "cpd_regularization=5.0"),
        (dict(restarts=True, cpd_max_uniform_share=0.1), "cpd_max_uniform_share=0.1"),
        (dict(restarts=True, cpd_alpha=2.0), "cpd_alpha=2.0"),
        (
            dict(restarts=True, mode="theory", cpd_detector="residual"),
            "cpd_detector='residual'",
        ),
        (dict(restarts=True, cpd_false_alarm=0.0), "cpd_false_alarm"),
        (dict(forgetting=True, mode="theory"), "forgetting=True"),
        (dict(forgetting="yes"), "forgetting='yes'"),
    ]
    for kwargs, named in bad:
        with pytest.raises(ValueError, match=named):
            DecisionOptions.from_kwargs(**kwargs)


# ---------------------------------------------------------------- Ax loops
CHANGE = 20


def _before(x: np.ndarray) -> np.ndarray:
    return np.sin(3 * x[:, 0]) * np.cos(2 * x[:, 1])


def _objective(params: dict, index: int, a: float = 1.0, b: float = 0.0) -> dict:
    x = np.array([[params["x1"], params["x2"]]])
    f = _before(x) if index < CHANGE else 3.0 - 2.0 * _before(1.0 - x)
    return {"f": a * float(f[0]) + b}


def _client(options: dict, path: Path | None = None):
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax import bandit_generation_strategy, sqlite_storage

    storage = None if path is None else sqlite_storage(path)
    client = Client(random_seed=0, storage_config=storage)
    client.configure_experiment(
        name="drift",
        parameters=[
            RangeParameterConfig(name=n, bounds=(0.0, 1.0), parameter_type="float")
            for n in ("x1", "x2")
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(bandit_generation_strategy(**options))
    return client


def _trials(client) -> list[tuple[dict, dict]]:
    from botorch_bandits.ax import decision_metadata

    meta = decision_metadata(client)
    exp = client._experiment
    return [(exp.trials[i].arms[0].parameters, meta.get(i, {})) for i in sorted(meta)]


def _loop(client, n: int, objective=_objective) -> None:
    for _ in range(n):
        ((index, params),) = client.get_next_trials(max_trials=1).items()
        client.complete_trial(trial_index=index, raw_data=objective(params, index))


@pytest.mark.parametrize(
    "option",
    [
        # restarts: the default run keeps test_restarts_practical's 100 f test
        # (two trials in flight, the uniform steps too)
        pytest.param(o, marks=pytest.mark.slow) if o == "restarts" else o
        for o in OPTIONS
    ],
)
def test_f_and_100f_plus_100_make_the_same_trials(option) -> None:
    """The drift options are unit-free: the same trials (and restarts, and fitted
    forgetting) on f and on 100 f + 100; the restarts come after the change (the
    kept trials begin at it or after), the forgetting is reported."""
    pytest.importorskip("ax")
    runs = []
    for a, b in ((1.0, 0.0), (100.0, 100.0)):
        client = _client(OPTIONS[option])
        _loop(client, 36, partial(_objective, a=a, b=b))
        runs.append(_trials(client))
    assert [p for p, _ in runs[0]] == [p for p, _ in runs[1]]
    last = [run[-1][1] for run in runs]
    if option == "restarts":
        assert last[0]["cpd_restarts"] == last[1]["cpd_restarts"]
        assert last[0]["cpd_restarts"], "no restart after the change"
        assert all(r >= CHANGE for r in last[0]["cpd_restarts"])
        assert not any(m.get("cpd_uniform") for _, m in runs[0])
    else:
        f0, f1 = last[0]["forgetting"], last[1]["forgetting"]
        assert f0 == f1 and f0["half_life_trials"] > 0
        assert len(last[0]["fit"]["lengthscale"]) == 3  # x1, x2 and time


RELOAD = """
import json, sys
from botorch_bandits.ax import decision_metadata, load_client
client = load_client("drift", sys.argv[1], random_seed=0)
((index, params),) = client.get_next_trials(max_trials=1).items()
meta = decision_metadata(client)[index]
print(json.dumps({"index": index, "params": params,
                  "restarts": meta.get("cpd_restarts"), "forgetting": meta.get("forgetting")}))
"""


@pytest.mark.parametrize("option", list(OPTIONS))
def test_a_reload_decides_the_same_in_a_new_process(tmp_path, option) -> None:
    """With each drift option: 30 trials on SQLite (the restarts one restarted),
    a copy loaded in a new process decides what this process decides next."""
    pytest.importorskip("sqlalchemy")
    path = tmp_path / "exp.db"
    client = _client(OPTIONS[option], path)
    _loop(client, 30)
    if option == "restarts":
        assert _trials(client)[-1][1]["cpd_restarts"], "no restart before the reload"
    copy = tmp_path / "copy.db"
    copy.write_bytes(path.read_bytes())
    res = subprocess.run(
        [sys.executable, "-c", RELOAD, str(copy)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        check=True,
    )
    there = json.loads(res.stdout.strip().splitlines()[-1])
    ((index, params),) = client.get_next_trials(max_trials=1).items()
    meta = _trials(client)[-1][1]
    here = {
        "index": index,
        "params": params,
        "restarts": meta.get("cpd_restarts"),
        "forgetting": meta.get("forgetting"),
    }
    assert json.loads(json.dumps(here)) == there


LOOP = """
import json, sys
sys.path.insert(0, sys.argv[4])
from test_drift import _client, _objective
from botorch_bandits.ax import load_client
path, total, options = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
try:
    client = load_client("drift", path, random_seed=0)
except Exception:
    client = _client(options, __import__("pathlib").Path(path))
exp = client._experiment
have = set(exp.lookup_data().df["trial_index"]) if len(exp.trials) else set()
for t in list(exp.trials.values()):  # a kill between the writes of a completion
    if t.status.name == "RUNNING":
        client.complete_trial(trial_index=t.index, raw_data=_objective(t.arms[0].parameters, t.index))
    elif t.status.name == "COMPLETED" and t.index not in have:
        client.attach_data(trial_index=t.index, raw_data=_objective(t.arms[0].parameters, t.index))
while len(client._experiment.trials) < total:
    ((index, params),) = client.get_next_trials(max_trials=1).items()
    client.complete_trial(trial_index=index, raw_data=_objective(params, index))
    print(index, flush=True)
"""


def _run(path: Path, total: int, options: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            LOOP,
            str(path),
            str(total),
            json.dumps(options),
            str(HERE),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


def _stored(path: Path) -> list:
    from botorch_bandits.ax import close_storage, load_client

    client = load_client("drift", path, random_seed=0, read_only=True)
    exp = client._experiment
    data = exp.lookup_data().df.set_index("trial_index")["mean"].to_dict()
    out = [
        (i, exp.trials[i].arms[0].parameters, data.get(i), exp.trials[i].status.name)
        for i in sorted(exp.trials)
    ]
    close_storage()
    return out


@pytest.mark.slow
@pytest.mark.parametrize("option", list(OPTIONS))
def test_a_sigkill_with_a_drift_option_resumes_exactly(tmp_path, option) -> None:
    """SIGKILL the loop (SQLite) after the change and before the end; the resumed
    run ends with the uninterrupted run's trials and values."""
    pytest.importorskip("sqlalchemy")
    total, options = 38, OPTIONS[option]
    whole = tmp_path / "whole.db"
    assert _run(whole, total, options).wait(timeout=900) == 0
    expected = _stored(whole)
    killed = tmp_path / "killed.db"
    proc = _run(killed, total, options)
    start = time.time()
    for line in proc.stdout:  # kill once trial 30 (after the change) is complete
        if int(line) >= 30:
            os.kill(proc.pid, signal.SIGKILL)
            break
        assert time.time() - start < 900
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert _run(killed, total, options).wait(timeout=900) == 0
    assert _stored(killed) == expected
