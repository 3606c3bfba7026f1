"""The practical GP's refit schedule (issue 30): the hyperparameters are fitted again at
every decision while the model has at most ``refit_after`` observations, then when the
completed trials have grown by ``refit_growth`` (and after a restart); in between the
last recorded fit is reused -- read back from the trials' metadata, so a reload
decides the same."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
import torch
from botorch.test_functions import Hartmann

from botorch_bandits.core import DecisionOptions, Domain, History, TrialRecord, decide
from botorch_bandits.core.fit import refit_due
from botorch_bandits.core.options import Refit

D = 3
_F = Hartmann(dim=D)


def _value(x) -> float:
    return float(-_F(torch.tensor([list(x)], dtype=torch.double)))


def _box() -> Domain:
    sobol = torch.quasirandom.SobolEngine(D, scramble=True, seed=0)
    return Domain.box(sobol.draw(128, dtype=torch.double))


def _run(opts: DecisionOptions, steps: int) -> list[dict]:
    """A sequential loop on the core, each decision's recorded fit passed on as the
    Ax node reads it back from the last trial."""
    trials: list[TrialRecord] = []
    last, fits = None, []
    for i in range(steps):
        d = decide(History(trials=tuple(trials), last_fit=last), opts, _box())
        trials.append(
            TrialRecord(
                index=i,
                x=tuple(d.x),
                f=_value(d.x),
                created=float(i),
                completed=i + 0.5,
            )
        )
        last = d.metadata["fit"]
        fits.append({**last, "x": d.x})
    return fits


def test_the_options_default_check_and_belong_to_the_practical_mode() -> None:
    assert DecisionOptions.from_kwargs().refit == Refit(after=100, growth=1.2)
    assert DecisionOptions.from_kwargs(mode="theory").refit is None
    with pytest.raises(ValueError, match=r"refit_after=5.*practical mode"):
        DecisionOptions.from_kwargs(mode="theory", refit_after=5)
    for bad in (0.5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"refit_growth"):
            DecisionOptions.from_kwargs(refit_growth=bad)
    with pytest.raises(ValueError, match=r"refit_after.*integer >= 0.*-1"):
        DecisionOptions.from_kwargs(refit_after=-1)
    with pytest.raises(ValueError, match=r"refit_growth.*>= 1.*0.9"):
        Refit(after=5, growth=0.9)
    # options built directly (no schedule given) fit at every decision
    fits = _run(DecisionOptions(), 3)
    assert [f["status"] for f in fits] == ["prior", "fitted", "fitted"]


def test_refit_due_reads_the_counts_of_the_last_fit() -> None:
    refit = Refit(after=10, growth=1.5)
    last = {"status": "fitted", "lengthscale": [0.2], "noise": 0.1, "mean": 0.0}
    last.update(n=20, completed=20, start=0)
    now = {"n": 29, "completed": 29, "start": 0}
    assert not refit_due(last, now, refit)  # 9 new < 0.5 * 20
    assert refit_due(last, {**now, "n": 30, "completed": 30}, refit)
    assert refit_due(last, {**now, "start": 7}, refit)  # a restart since
    assert refit_due(None, now, refit)
    assert refit_due({k: v for k, v in last.items() if k != "n"}, now, refit)
    assert refit_due({**last, "status": "prior"}, now, refit)
    assert refit_due(last, {**now, "n": 10, "completed": 10}, refit)  # at most `after`
    assert refit_due(last, now, Refit(after=10, growth=1.0))  # growth 1: every time


def test_the_schedule_reuses_the_last_fit_between_refits() -> None:
    fits = _run(DecisionOptions.from_kwargs(refit_after=6, refit_growth=1.5), 16)
    status = [f["status"] for f in fits]
    fitted = [i for i, s in enumerate(status) if s == "fitted"]
    # every decision up to 6 observations, then at 6 * 1.5 = 9 and 9 * 1.5 = 13.5
    assert fitted == [1, 2, 3, 4, 5, 6, 9, 14], status
    assert status[0] == "prior" and status.count("reused") == 7
    for i, f in enumerate(fits):
        if f["status"] == "reused":  # the hyperparameters of the fit before, exactly
            before = fits[i - 1]
            for k in ("lengthscale", "noise", "mean", "n", "completed", "start"):
                assert f[k] == before[k]
    assert fits[9]["n"] == fits[9]["completed"] == 9


def test_a_model_window_refits_every_growth_times_its_size_of_completions() -> None:
    """Under ``model_window=W`` the model keeps W rows, so the every-decision phase
    ends when the completed trials pass ``refit_after`` (it never ended before issue
    62), then a fit every ``(growth - 1) W`` completions, as the docs say."""
    refit = Refit(after=10, growth=1.5)
    last = {"status": "fitted", "lengthscale": [0.2], "noise": 0.1, "mean": 0.0}
    last.update(n=4, completed=12, start=0)
    assert not refit_due(last, {"n": 4, "completed": 13, "start": 0}, refit)
    assert refit_due(last, {"n": 4, "completed": 14, "start": 0}, refit)  # 2 = 0.5 W
    fits = _run(
        DecisionOptions.from_kwargs(model_window=4, refit_after=6, refit_growth=1.5), 16
    )
    status = [f["status"] for f in fits]
    fitted = [i for i, s in enumerate(status) if s == "fitted"]
    # every decision while at most 6 trials have completed, then every 2 completions
    assert fitted == [1, 2, 3, 4, 5, 6, 8, 10, 12, 14], status
    assert all(f["n"] == 4 for f in fits[4:]), fits


def test_growth_one_refits_at_every_decision_as_before() -> None:
    """``refit_growth=1`` fits at every decision past ``refit_after`` too: the same
    decisions as a schedule that never leaves its every-decision phase."""
    a = _run(DecisionOptions.from_kwargs(refit_after=2, refit_growth=1.0), 8)
    b = _run(DecisionOptions.from_kwargs(refit_after=10**6), 8)
    assert [f["status"] for f in a[1:]] == ["fitted"] * 7
    assert a == b


def test_a_failed_fit_is_tried_again_at_the_next_decision(monkeypatch) -> None:
    """Past ``refit_after`` a fit that failed (``status="fallback"``) is not reused
    as if it had succeeded: the next decision fits again."""
    import botorch_bandits.core.fit as fit_module

    real = fit_module.fit_practical_gp

    def failing_at_five(X, z, warm, seed):
        if X.shape[0] == 5:
            return None, "RuntimeError: a failure for the test"
        return real(X, z, warm, seed)

    monkeypatch.setattr(fit_module, "fit_practical_gp", failing_at_five)
    with pytest.warns(UserWarning, match="failed"):
        fits = _run(DecisionOptions.from_kwargs(refit_after=5, refit_growth=3.0), 8)
    status = [f["status"] for f in fits]
    assert status[5] == "fallback", status  # the fit on 5 observations failed
    assert status[6] == "fitted", status  # past refit_after: tried again, not reused
    assert status[7] == "reused", status  # 1 new trial < (3 - 1) * 6


def test_epochs_refit_on_the_schedule_under_long_term_constraints() -> None:
    """With long-term constraints on the composite target (the paper's reading)
    the targets move with the epoch's multipliers: past ``refit_after`` a fit is
    due when the epochs begun since the last fit number at least ``growth - 1``
    times those begun at it (or the trials grew so); in between the fit is reused,
    across epochs too (issue 62: every new epoch refitted before)."""
    opts = DecisionOptions.from_kwargs(
        long_term_constraints=True,
        constraint_model="composite",
        epoch_length=2,
        refit_after=2,
        refit_growth=1.5,
    )
    trials: list[TrialRecord] = []
    last, rows = None, []
    for i in range(16):
        h = History(trials=tuple(trials), last_fit=last, num_constraints=1)
        d = decide(h, opts, _box())
        trials.append(
            TrialRecord(
                index=i,
                x=tuple(d.x),
                f=_value(d.x),
                g=(d.x[0] - 0.5,),
                created=float(i),
                completed=i + 0.5,
            )
        )
        last = d.metadata["fit"]
        rows.append((d.metadata["epoch"], last["status"], last["epoch"], last["n"]))
    fitted_epoch = fitted_n = None
    for i, (epoch, status, recorded, n) in enumerate(rows):
        due = (
            i <= 2  # at most refit_after observations
            or epoch - fitted_epoch >= max(0.5 * fitted_epoch, 1)
            or i - fitted_n >= 0.5 * fitted_n  # the trials' own schedule
        )
        assert (status != "reused") == due, (i, rows)  # "prior": no data yet
        if due:
            fitted_epoch, fitted_n = epoch, n
        assert recorded == fitted_epoch, (i, rows)
    # the schedule skipped some new epochs, and refitted at others
    news = [i for i in range(1, 16) if rows[i][0] != rows[i - 1][0]]
    assert {rows[i][1] for i in news} == {"fitted", "reused"}, rows


def test_a_node_saved_before_the_schedule_refits_at_every_decision() -> None:
    from botorch_bandits.ax import BanditNode
    from botorch_bandits.ax.storage import bandit_node_from_json

    saved = BanditNode().options()
    del saved["refit_after"], saved["refit_growth"]
    node = bandit_node_from_json(**saved)
    assert node.decision_options.refit == Refit(after=100, growth=1.0)
    theory = BanditNode(mode="theory").options()
    del theory["refit_after"], theory["refit_growth"]
    assert bandit_node_from_json(**theory).decision_options.refit is None
    fresh = BanditNode()
    assert bandit_node_from_json(**fresh.options()).options() == fresh.options()


RELOAD = """
import json, sys
from botorch_bandits.ax import sql
client = sql.load_client("refit", sys.argv[1], random_seed=0)
((index, params),) = client.get_next_trials(max_trials=1).items()
meta = client._experiment.trials[index].generator_runs[0].gen_metadata
print(json.dumps({"index": index, "params": params, "fit": meta["fit"],
                  "sparse": meta.get("sparse")}))
"""


#: the sparse model past 6 observations, its dictionary capped at 4 (issue 30)
SPARSE = {"sparse_after": 6, "sparse_size": 4}


def _client(path, **extra):
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax import bandit_generation_strategy, sql

    client = Client(random_seed=0, storage_config=sql.sqlite_storage(path))
    client.configure_experiment(
        name="refit",
        parameters=[
            RangeParameterConfig(name=f"x{i}", parameter_type="float", bounds=(0, 1))
            for i in range(D)
        ],
    )
    client.configure_optimization(objective="-f")
    client.set_generation_strategy(
        bandit_generation_strategy(refit_after=4, refit_growth=1.5, **extra)
    )
    return client


@pytest.mark.parametrize("extra", [{}, SPARSE], ids=["exact", "sparse"])
def test_a_reload_between_refits_decides_the_same_in_a_new_process(
    tmp_path, extra
) -> None:
    """Past the first scheduled refit, the next decision (reusing the recorded fit;
    with the sparse model, on a dictionary drawn again) is the same in this process
    and in a new one that loaded the SQLite file."""
    pytest.importorskip("sqlalchemy")
    path = tmp_path / "exp.db"
    client = _client(path, **extra)
    for _ in range(9):
        ((index, params),) = client.get_next_trials(max_trials=1).items()
        x = [params[f"x{i}"] for i in range(D)]
        client.complete_trial(trial_index=index, raw_data={"f": -_value(x)})
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
        "sparse": meta.get("sparse"),
    }
    assert json.loads(json.dumps(here)) == there
    assert here["fit"]["status"] == "reused", here["fit"]
    assert (here["sparse"] is not None) == bool(extra), here["sparse"]


LOOP = """
import sys
sys.path.insert(0, sys.argv[3])
from test_refit import D, _client, _value
from botorch_bandits.ax import sql
import json
path, total, extra = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[4])
try:
    client = sql.load_client("refit", path, random_seed=0)
except Exception:
    client = _client(__import__("pathlib").Path(path), **extra)
exp = client._experiment
have = set(exp.lookup_data().df["trial_index"]) if exp.trials else set()
value = lambda p: {"f": -_value([p[f"x{i}"] for i in range(D)])}
for t in list(exp.trials.values()):  # a kill between the writes of a completion
    if t.status.name == "RUNNING":
        client.complete_trial(trial_index=t.index, raw_data=value(t.arms[0].parameters))
    elif t.status.name == "COMPLETED" and t.index not in have:
        client.attach_data(trial_index=t.index, raw_data=value(t.arms[0].parameters))
while len(client._experiment.trials) < total:
    ((index, params),) = client.get_next_trials(max_trials=1).items()
    client.complete_trial(trial_index=index, raw_data=value(params))
    print(index, flush=True)
"""


def _loop(path, total: int, extra: dict | None = None) -> subprocess.Popen:
    here = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    options = json.dumps(extra or {})
    return subprocess.Popen(
        [sys.executable, "-c", LOOP, str(path), str(total), here, options],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def _stored(path) -> list:
    from botorch_bandits.ax import sql

    exp = sql.load_client("refit", path, random_seed=0)._experiment
    data = exp.lookup_data().df.set_index("trial_index")["mean"].to_dict()
    return [
        (
            i,
            exp.trials[i].arms[0].parameters,
            data.get(i),
            (exp.trials[i].generator_runs[0].gen_metadata or {}).get("fit"),
            (exp.trials[i].generator_runs[0].gen_metadata or {}).get("sparse"),
        )
        for i in sorted(exp.trials)
    ]


@pytest.mark.slow  # three kills and four processes of 30 practical decisions
@pytest.mark.parametrize("extra", [{}, SPARSE], ids=["exact", "sparse"])
def test_sigkill_at_three_points_past_a_scheduled_refit_resumes_exactly(
    tmp_path, extra
):
    """SIGKILL the loop (SQLite) at three points past its first scheduled refit (the
    fits at 5, 8, 12, 18 and 27 observations, reused in between; with the sparse
    model past 6); the resumed run ends with the uninterrupted run's trials, values
    and recorded fits (and dictionaries)."""
    pytest.importorskip("sqlalchemy")
    total = 30
    whole = tmp_path / "whole.db"
    assert _loop(whole, total, extra).wait(timeout=1200) == 0
    expected = _stored(whole)
    sparse = [row[-1] for row in expected if row[-1]]
    assert bool(sparse) == bool(extra), sparse
    status = [row[3]["status"] for row in expected if row[3]]
    assert "reused" in status and status.count("fitted") >= 5, status
    killed = tmp_path / "killed.db"
    for at in (10, 17, 24):
        proc = _loop(killed, total, extra)
        for line in proc.stdout:
            if int(line) >= at:
                os.kill(proc.pid, signal.SIGKILL)
                break
        proc.wait(timeout=60)
        assert proc.returncode == -signal.SIGKILL
    assert _loop(killed, total, extra).wait(timeout=1200) == 0
    assert _stored(killed) == expected
