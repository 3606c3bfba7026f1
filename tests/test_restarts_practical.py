"""Change-point restarts in the practical mode (issue 29): the scale-free detector
(its answer does not depend on the objective's units, its false alarms stay at the
level it is given, it finds a clear change), the cap on uniform steps, the options
and their storage, and an Ax loop with restarts on: the same trials for f and
100 f + 100, a reload in a new process and a SIGKILL resume that decide the same."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import torch

from botorch_bandits.changepoint import (
    GPUCBCPD,
    explore_uniformly,
    finite_domain,
    uniform_budget,
    within_budget,
)
from botorch_bandits.core import DecisionOptions, Domain, History, TrialRecord, decide
from botorch_bandits.scale_free import ScaleFreeDetector, loo_cv, matern52

HERE = Path(__file__).resolve().parent


def _detector(d: int = 2, **kw) -> ScaleFreeDetector:
    pts = torch.quasirandom.SobolEngine(d, scramble=True, seed=0).draw(
        256, dtype=torch.double
    )
    dom = finite_domain(pts)
    return ScaleFreeDetector(dom.points, dom.weights, d=d, **kw)


def _before(x: np.ndarray) -> np.ndarray:
    return np.sin(3 * x[:, 0]) * np.cos(2 * x[:, 1])


def _after(x: np.ndarray) -> np.ndarray:  # reflected, shifted and scaled
    return 3.0 - 2.0 * _before(1.0 - x)


def _sample(m: int, change: int | None, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    x = np.random.default_rng(seed).uniform(size=(m, 2))
    y = _before(x)
    if change is not None:
        y[change:] = _after(x[change:])
    return torch.tensor(x), torch.tensor(y)


# ---------------------------------------------------------------- the detector
def test_the_detector_answers_the_same_for_any_units() -> None:
    """Standardized and rounded values: a*y + b (a > 0) gives the same bits, so the
    same detection and the same fit (with and without a change, five samples)."""
    det = _detector()
    found_any = 0
    for seed in range(5):
        for change in (None, 10):
            X, y = _sample(20, change, seed=seed)
            found = []
            for a, b in ((1.0, 0.0), (100.0, 100.0), (1e-3, -7.0), (1e6, 1e6)):
                n = det.scan(X, a * y + b)
                found.append((n, det.last_))
            assert all(f == found[0] for f in found), found
            found_any += change is not None and found[0][0] is not None
    assert found_any >= 3  # the comparison covers detections too


def test_the_detector_finds_a_clear_change_and_not_its_absence() -> None:
    """Ten values before and ten after a clear change (reflected, shifted by about
    three standard deviations): found in at least 8 of 10 samples (measured 19 of
    20); without the change, at most one false alarm in 10 (level 1 %)."""
    det = _detector()
    hits = sum(det.scan(*_sample(20, 10, seed=s)) is not None for s in range(10))
    quiet = sum(det.scan(*_sample(20, None, seed=s)) is None for s in range(10))
    assert hits >= 8 and quiet >= 9, (hits, quiet)


def test_false_alarms_stay_at_the_level_given() -> None:
    """Uniform steps without a change are exchangeable, so the reorderings' test
    has level alpha per scan: 400 scans of stationary data (noise-free, a smooth
    function) at alpha = 0.05 give 20 alarms in expectation (sd 4.4)."""
    det = _detector(false_alarm=0.05)
    alarms = sum(
        det.scan(*_sample(10, None, seed=100 + k)) is not None for k in range(400)
    )
    assert 5 <= alarms <= 38, alarms


def test_constant_values_never_fire() -> None:
    X, _ = _sample(12, None, seed=0)
    det = _detector()
    assert det.scan(X, torch.full((12,), 4.2, dtype=torch.double)) is None
    assert det.scan(X[:3], torch.tensor([0.0, 9.0, -9.0])) is None  # too few


def test_leave_one_out_residuals_equal_refits() -> None:
    rng = np.random.default_rng(0)
    X, z = rng.uniform(size=(9, 2)), rng.normal(size=9)
    ell, lam, score = loo_cv(X, z, [0.3], [0.1])
    resid = []
    for i in range(9):
        keep = np.arange(9) != i
        A = matern52(X[keep], X[keep], ell) + lam * np.eye(8)
        mu = matern52(X[i : i + 1], X[keep], ell) @ np.linalg.solve(A, z[keep])
        resid.append(z[i] - mu[0])
    assert score == pytest.approx(np.mean(np.square(resid)), rel=1e-10)


def test_the_uniform_budget_never_binds_without_restarts_and_caps_with_them() -> None:
    xi = math.sqrt(3.0)
    # the rule alone (no restart): |U| <= xi sqrt(|H|) never reaches the cap
    uniform = 0
    for t in range(2000):
        if explore_uniformly(uniform, t, xi):
            assert within_budget(uniform, t, xi, 0.2), t
            uniform += 1

    # a detector that fires at every scan: the cap holds the share
    class Always:
        def scan(self, X, y, gram=None):
            return 1

    algo = GPUCBCPD(Always(), xi=xi)
    made = 0
    for t in range(500):
        u = algo.next_is_uniform() and within_budget(made, t, xi, 0.2)
        made += u
        algo.record(torch.zeros(2, dtype=torch.double), 0.0, uniform=u)
        assert made <= uniform_budget(t, xi, 0.2) + 1e-9
    assert made / 500 <= 0.21 and len(algo.state.restarts) > 10


# ---------------------------------------------------------------- options
def test_each_mode_gets_its_detector_and_bad_combinations_are_named() -> None:
    practical = DecisionOptions.from_kwargs(restarts=True).restarts
    assert practical.detector == "residual" and practical.false_alarm == 1e-3
    assert practical.max_uniform_share is None and not practical.uniform
    free = DecisionOptions.from_kwargs(restarts=True, cpd_detector="scale-free")
    free = free.restarts
    assert free.detector == "scale-free" and free.max_uniform_share == 0.2
    assert free.false_alarm == 0.01 and free.regularization == 20.0
    theory = DecisionOptions.from_kwargs(mode="theory", restarts=True).restarts
    assert theory.detector == "paper" and theory.max_uniform_share == 1.0
    assert (theory.regularization, theory.threshold_scale) == (20.0, 2.6)
    legacy = DecisionOptions.from_kwargs(restarts=True, cpd_detector="paper")
    assert legacy.restarts.max_uniform_share == 1.0
    bad = [
        (dict(mode="theory", cpd_detector="scale-free"), "cpd_detector='scale-free'"),
        (dict(cpd_detector="paper", cpd_false_alarm=0.1), "cpd_false_alarm=0.1"),
        (dict(cpd_detector="mine"), "cpd_detector"),
        (dict(cpd_false_alarm=1.5), "cpd_false_alarm=1.5"),
        (
            dict(cpd_detector="scale-free", cpd_max_uniform_share=0.0),
            "cpd_max_uniform_share",
        ),
        (
            dict(cpd_detector="scale-free", cpd_max_uniform_share=1.5),
            "cpd_max_uniform_share=1.5",
        ),
        (dict(mode="theory", model_window=10), "model_window=10"),
        (dict(model_window=0), "model_window"),
        (dict(mode="theory", cpd_max_uniform_share=0.3), "cpd_max_uniform_share=0.3"),
        (dict(cpd_threshold_scale=0.5, cpd_detector="scale-free"), "margin >= 1"),
        # the paper's C without the detector named: not reread as a margin
        (dict(cpd_threshold_scale=2.6), "name the detector"),
        (dict(cpd_C=2.6), "cpd_C=2.6"),
    ]
    for kwargs, named in bad:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(ValueError, match=named.replace("(", r"\(")):
                DecisionOptions.from_kwargs(restarts=True, **kwargs)


def test_a_node_saved_before_the_scale_free_detector_keeps_the_paper_detector() -> None:
    from botorch_bandits.ax import BanditNode
    from botorch_bandits.ax.storage import bandit_node_from_json

    saved = BanditNode(restarts=True).options()
    for new in ("cpd_detector", "cpd_false_alarm", "cpd_max_uniform_share"):
        del saved[new]
    del saved["model_window"]
    saved["cpd_regularization"], saved["cpd_threshold_scale"] = 20.0, 2.6
    node = bandit_node_from_json(**saved)
    r = node.decision_options.restarts
    assert r.detector == "paper" and r.max_uniform_share == 1.0
    assert (r.regularization, r.threshold_scale) == (20.0, 2.6)
    fresh = BanditNode(restarts=True)
    assert fresh.decision_options.restarts.detector == "residual"
    assert bandit_node_from_json(**fresh.options()).options() == fresh.options()


# ---------------------------------------------------------------- the decision core
def _records(n: int, uniform: set[int] = frozenset()) -> History:
    pts = torch.quasirandom.SobolEngine(2, scramble=True, seed=1).draw(n).double()
    return History(
        trials=tuple(
            TrialRecord(
                index=i,
                x=tuple(x),
                f=float(_before(np.array([x]))[0]),
                created=float(i),
                completed=float(i) + 1.0,
                uniform=i in uniform,
            )
            for i, x in enumerate(pts.tolist())
        )
    )


def _box() -> Domain:
    sobol = torch.quasirandom.SobolEngine(2, scramble=True, seed=0)
    return Domain.box(sobol.draw(64, dtype=torch.double))


def test_a_model_window_fits_the_last_trials_only() -> None:
    """With model_window=W the GP's data are the last W trials: the decision equals
    the one on a history holding only those (re-indexed trials, same points)."""
    history = _records(14)
    opts = DecisionOptions.from_kwargs(model_window=5)
    d = decide(history, opts, _box())
    assert d.metadata["model_window_start"] == 9
    full = decide(history, DecisionOptions.from_kwargs(), _box())
    assert d.metadata["fit"] != full.metadata["fit"]  # fitted on other data
    assert d.metadata["standardize"] != full.metadata["standardize"]


def test_the_cap_turns_a_uniform_step_into_a_model_step() -> None:
    """A run whose uniform steps have spent the budget and whose detector has just
    restarted (the paper's detector with a threshold that always fires: U is empty,
    so the rule asks for a uniform step): the cap says no, and the metadata say so;
    without the cap the same history explores."""
    xi, t = math.sqrt(3.0), 30
    made = int(uniform_budget(t, xi, 0.2))  # the budget is spent
    history = _records(t, uniform=set(range(t - made, t)))
    always = dict(restarts=True, cpd_detector="paper", cpd_threshold_scale=1e-9)
    d = decide(
        history,
        DecisionOptions.from_kwargs(**always, cpd_max_uniform_share=0.2),
        _box(),
    )
    meta = d.metadata
    assert meta["cpd_restarts"] and meta["cpd_uniform_count"] == 0  # U emptied
    assert explore_uniformly(0, meta["cpd_history"], xi)  # the rule says explore
    assert not within_budget(made, t, xi, 0.2)
    assert meta["cpd_uniform_capped"] is True and not d.uniform
    assert meta["cpd_uniform_share"] == pytest.approx(made / (t + 1))
    free = decide(history, DecisionOptions.from_kwargs(**always), _box())
    assert free.uniform and "cpd_uniform_capped" not in free.metadata


# ---------------------------------------------------------------- an Ax loop
CHANGE = 10


def _objective(params: dict, index: int, a: float = 1.0, b: float = 0.0) -> dict:
    x = np.array([[params["x1"], params["x2"]]])
    f = _before(x) if index < CHANGE else _after(x)
    return {"f": a * float(f[0]) + b}


def _ax_client(path: Path | None = None):
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax import bandit_generation_strategy, sql

    storage = None if path is None else sql.sqlite_storage(path)
    client = Client(random_seed=0, storage_config=storage)
    client.configure_experiment(
        name="restarts",
        parameters=[
            RangeParameterConfig(name=n, bounds=(0.0, 1.0), parameter_type="float")
            for n in ("x1", "x2")
        ],
    )
    client.configure_optimization(objective="f")
    # the scale-free detector (Avanesov's uniform steps); the residual detector,
    # the practical default since issue 48, is tested in test_drift.py
    client.set_generation_strategy(
        bandit_generation_strategy(restarts=True, cpd_detector="scale-free")
    )
    return client


def _trials(client) -> list[tuple[dict, dict]]:
    exp = client._experiment
    return [
        (t.arms[0].parameters, t.generator_runs[0].gen_metadata or {})
        for t in (exp.trials[i] for i in sorted(exp.trials))
    ]


def test_restarts_on_f_and_100f_plus_100_make_the_same_trials() -> None:
    """The issue's acceptance test: practical mode, restarts on with their defaults,
    two trials in flight; the objective changes at trial 10. The trials (and every
    restart and uniform step) are identical on f and on 100 f + 100, and the
    detector restarts after the change, not before."""
    pytest.importorskip("ax")
    from _ax_loop import run_in_flight

    runs = []
    for a, b in ((1.0, 0.0), (100.0, 100.0)):
        client = _ax_client()
        run_in_flight(client, 50, partial(_objective, a=a, b=b), in_flight=2)
        runs.append(_trials(client))
    params = [[p for p, _ in run] for run in runs]
    assert params[0] == params[1]
    last = [run[-1][1] for run in runs]
    assert last[0]["cpd_restarts"] == last[1]["cpd_restarts"]
    restarts = last[0]["cpd_restarts"]
    assert restarts and all(r > CHANGE for r in restarts), restarts
    uniform = [[m.get("cpd_uniform") for _, m in run] for run in runs]
    assert uniform[0] == uniform[1] and sum(filter(None, uniform[0])) >= 8
    # the share of uniform steps is reported and held under its bound
    for _, meta in runs[0][5:]:
        count = meta["cpd_uniform_share"] * meta["t"]  # uniform steps so far
        assert count <= meta["cpd_uniform_bound"] + 1e-9


RELOAD = """
import json, sys
from botorch_bandits.ax import sql
client = sql.load_client("restarts", sys.argv[1], random_seed=0)
((index, params),) = client.get_next_trials(max_trials=1).items()
meta = client._experiment.trials[index].generator_runs[0].gen_metadata
print(json.dumps({"index": index, "params": params, "restarts": meta["cpd_restarts"]}))
"""


@pytest.mark.slow  # 45 practical decisions (~40 s); the default run keeps the 100f test
def test_a_reload_after_a_restart_decides_the_same_in_a_new_process(tmp_path) -> None:
    pytest.importorskip("sqlalchemy")
    path = tmp_path / "exp.db"
    client = _ax_client(path)
    for _ in range(45):  # the restart comes at trial 41 in this sequential run
        ((index, params),) = client.get_next_trials(max_trials=1).items()
        client.complete_trial(trial_index=index, raw_data=_objective(params, index))
    assert _trials(client)[-1][1]["cpd_restarts"], "no restart before the reload"
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
    meta = _trials(client)[-1][1]
    here = {"index": index, "params": params, "restarts": meta["cpd_restarts"]}
    assert json.loads(json.dumps(here)) == there


LOOP = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[3])
from test_restarts_practical import _ax_client, _objective
from botorch_bandits.ax import sql
path, total = sys.argv[1], int(sys.argv[2])
try:
    client = sql.load_client("restarts", path, random_seed=0)
except Exception:
    client = _ax_client(__import__("pathlib").Path(path))
exp = client._experiment
have = set(exp.lookup_data().df["trial_index"])
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


def _loop(path: Path, total: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.Popen(
        [sys.executable, "-c", LOOP, str(path), str(total), str(HERE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def _stored(path: Path) -> list:
    from botorch_bandits.ax import sql

    client = sql.load_client("restarts", path, random_seed=0)
    exp = client._experiment
    data = exp.lookup_data().df.set_index("trial_index")["mean"].to_dict()
    return [
        (i, exp.trials[i].arms[0].parameters, data.get(i), exp.trials[i].status.name)
        for i in sorted(exp.trials)
    ]


@pytest.mark.slow
def test_a_sigkill_with_restarts_on_resumes_exactly(tmp_path) -> None:
    """SIGKILL the loop (SQLite) after a restart and before the end; the resumed
    run ends with the uninterrupted run's trials and values."""
    pytest.importorskip("sqlalchemy")
    total = 50
    whole = tmp_path / "whole.db"
    assert _loop(whole, total).wait(timeout=900) == 0
    expected = _stored(whole)
    killed = tmp_path / "killed.db"
    proc = _loop(killed, total)
    start = time.time()
    for line in proc.stdout:  # kill once trial 44 (after the restart) is complete
        if int(line) >= 44:
            os.kill(proc.pid, signal.SIGKILL)
            break
        assert time.time() - start < 900
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert _loop(killed, total).wait(timeout=900) == 0
    assert _stored(killed) == expected
