"""The executor runner in a real ``ax.Client`` loop: a process pool (the default), a
``distributed.LocalCluster`` on 127.0.0.1 with out-of-order completion, failures
that stay visible, resubmission after a reload, and argument checks."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("ax")

from ax import Client, RangeParameterConfig
from ax.core.trial_status import TrialStatus

from botorch_bandits.ax import bandit_generation_strategy
from botorch_bandits.ax.runner import (
    DetachedExecutorRunner,
    DetachedRunnerError,
    ExecutorMetric,
    ExecutorRunner,
    attach_executor_runner,
    run_trials,
)
from botorch_bandits.ax.sql import close_storage, load_client, sqlite_storage

# The evaluations are top-level functions: a process pool pickles them by reference.


def _objective(p: dict) -> float:
    return math.sin(3 * p["x1"]) * math.cos(2 * p["x2"]) + 0.5 * p["x1"]


def _timed(p: dict) -> dict:
    """1.5 s per evaluation (``Client.run_trials`` starts about one trial a second,
    so consecutive trials overlap); the worker's start and end times ride along."""
    start = time.time()
    time.sleep(1.5)
    return {"f": _objective(p), "start": start, "end": time.time()}


def _slow_below_half(p: dict) -> dict:
    """1 s when ``x1 < 0.5``, else 0.05 s: the first Sobol trial (x1 ~ 0.48 with
    seed 0) finishes after the next two (x1 ~ 0.58 and 0.95)."""
    time.sleep(1.0 if p["x1"] < 0.5 else 0.05)
    return {"f": _objective(p)}


def _fails_above(p: dict) -> dict:
    if p["x1"] > 0.9:
        raise ValueError(f"x1 = {p['x1']:.3f} is out of the lab's range")
    return {"f": (_objective(p), 0.1)}


def _quick(p: dict) -> dict:
    time.sleep(0.05)
    return {"f": _objective(p)}


NAME = "runner_test"


def _client(storage_config=None) -> Client:
    client = Client(random_seed=0, storage_config=storage_config)
    client.configure_experiment(
        name=NAME,
        parameters=[
            RangeParameterConfig(name="x1", bounds=(0.0, 1.0), parameter_type="float"),
            RangeParameterConfig(name="x2", bounds=(0.0, 1.0), parameter_type="float"),
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(
        # Sobol from the first trial: the timing and failure fixtures above are
        # written for the seed-0 Sobol points (the centre would be x1 = 0.5)
        bandit_generation_strategy(
            num_init=3, num_candidates=64, initialize_with_center=False
        )
    )
    return client


def _data(client: Client) -> dict[int, tuple[float, float]]:
    df = client._experiment.lookup_data().df
    df = df[df["metric_name"] == "f"]
    assert not df["trial_index"].duplicated().any()
    return {int(r.trial_index): (float(r.mean), float(r.sem)) for r in df.itertuples()}


def _assert_data_matches(client: Client, completed: list[int], rel: float = 0) -> None:
    data = _data(client)
    assert sorted(data) == sorted(completed)
    for idx in completed:
        params = client._experiment.trials[idx].arm.parameters
        assert data[idx][0] == pytest.approx(_objective(params), rel=rel, abs=1e-12)


@pytest.mark.slow  # ~17 s; the default run keeps the Dask cluster's runner tests
def test_default_process_pool_with_client_run_trials() -> None:
    """Ax's own ``Client.run_trials`` with the default process pool: 12 trials, all
    COMPLETED with the values recomputed here, evaluations overlapping."""
    client = _client()
    with attach_executor_runner(client, _timed, ["f"]) as runner:
        client.run_trials(max_trials=12, parallelism=3)
    trials = client._experiment.trials
    assert len(trials) == 12
    assert {t.status for t in trials.values()} == {TrialStatus.COMPLETED}
    _assert_data_matches(client, list(trials))
    for idx, trial in trials.items():
        assert trial.run_metadata["parameterization"] == trial.arm.parameters
        assert runner.results[idx]["f"] == pytest.approx(
            _objective(trial.arm.parameters)
        )
    # peak number of evaluations running at once, from the workers' own clocks
    events = sorted(
        [(r["start"], 1) for r in runner.results.values()]
        + [(r["end"], -1) for r in runner.results.values()]
    )
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    assert peak >= 2
    assert runner.errors == {} and runner.resubmitted == []


def test_failure_is_recorded_never_dropped() -> None:
    """An exception in ``evaluate`` makes that trial FAILED with the error as its
    reason; the other trials complete; every trial is accounted for."""
    client = _client()
    with attach_executor_runner(client, _fails_above, "f") as runner:
        run_trials(client, max_trials=6, parallelism=3)
    trials = client._experiment.trials
    assert len(trials) == 6
    failed = [i for i, t in trials.items() if t.status == TrialStatus.FAILED]
    completed = [i for i, t in trials.items() if t.status == TrialStatus.COMPLETED]
    assert failed and sorted(failed + completed) == list(range(6))
    for idx in failed:
        x1 = trials[idx].arm.parameters["x1"]
        assert x1 > 0.9
        reason = trials[idx].status_reason
        assert reason == runner.errors[idx]
        assert "ValueError" in reason and f"x1 = {x1:.3f}" in reason
        assert isinstance(runner.exceptions[idx], ValueError)
    _assert_data_matches(client, completed)
    assert all(sem == pytest.approx(0.1) for _, sem in _data(client).values())


def test_unusable_results_fail_with_a_reason() -> None:
    """A missing outcome, a non-finite value or a non-dict result is a failure
    with a reason, and a fetch for it says why."""

    def evaluate(p: dict):  # a thread pool needs no pickling
        return {"bad": {"g": 1.0}, "nan": {"f": math.nan}, "list": [1.0]}[p["kind"]]

    with ThreadPoolExecutor(2) as pool:
        runner = ExecutorRunner(evaluate, pool, metric_names=["f"])
        for idx, kind in enumerate(["bad", "nan", "list"]):
            meta = runner.run_trial(idx, {"kind": kind})
            while (status := runner.poll_trial(idx, meta)) == TrialStatus.RUNNING:
                time.sleep(0.01)
            assert status == TrialStatus.FAILED
        assert "no value for 'f'" in runner.errors[0]
        assert "nan" in runner.errors[1]
        assert "returned list" in runner.errors[2]
        with pytest.raises(KeyError, match="failed"):
            runner.outcome(0, "f")
        runner.close()  # not ours: the pool stays usable
        assert pool.submit(int, "3").result() == 3


def test_running_trials_resubmitted_after_reload(tmp_path) -> None:
    """Trials RUNNING when the process 'died' (the experiment saved to JSON, the
    runner gone) are evaluated by a new runner after the reload; a RUNNING trial
    no runner ever started (``get_next_trials``) is evaluated too."""
    client = _client()
    old_pool = ThreadPoolExecutor(1)
    first = attach_executor_runner(client, _quick, ["f"], old_pool)
    run_trials(client, max_trials=3, parallelism=3)
    started = client.get_next_trials(max_trials=1)
    started.update(client.get_next_trials(max_trials=1))
    idx_a, idx_b = sorted(started)
    trial = client._experiment.trials[idx_a]
    trial.update_run_metadata(first.run_trial(idx_a, started[idx_a]))
    path = tmp_path / "client.json"
    client.save_to_json_file(str(path))
    old_pool.shutdown()

    loaded = Client.load_from_json_file(str(path))
    assert loaded._experiment.runner is None  # a runner cannot be stored
    statuses = {i: t.status for i, t in loaded._experiment.trials.items()}
    assert statuses[idx_a] == statuses[idx_b] == TrialStatus.RUNNING
    with attach_executor_runner(loaded, _quick, ["f"], ThreadPoolExecutor(2)) as new:
        run_trials(loaded, max_trials=1, parallelism=3)
    assert sorted(new.resubmitted) == [idx_a, idx_b]
    trials = loaded._experiment.trials
    assert len(trials) == 6
    assert {t.status for t in trials.values()} == {TrialStatus.COMPLETED}
    # Ax's JSON storage keeps 10 significant digits of the stored data's means
    _assert_data_matches(loaded, list(trials), rel=1e-9)


# The second process of the SQLite test: load, check the detached runner, attach a
# new one, finish the RUNNING trials and two more; the last line is a JSON report.
RESUME = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, sys.argv[1])
from test_ax_runner import _quick
from botorch_bandits.ax.runner import (
    DetachedExecutorRunner, DetachedRunnerError, attach_executor_runner, run_trials)
from botorch_bandits.ax.sql import load_client

client = load_client(sys.argv[3], sys.argv[2], random_seed=0)
experiment = client._experiment
assert type(experiment.runner) is DetachedExecutorRunner, experiment.runner
try:
    run_trials(client, max_trials=1)
    error = None
except DetachedRunnerError as err:
    error = str(err)
report = {
    "error": error,
    "metric": type(experiment.metrics["f"]).__name__,
    "statuses": {i: t.status.name for i, t in experiment.trials.items()},
}
with attach_executor_runner(client, _quick, ["f"], ThreadPoolExecutor(2)) as runner:
    run_trials(client, max_trials=2, parallelism=3)
report["resubmitted"] = sorted(runner.resubmitted)
print(json.dumps(report))
"""


@pytest.mark.slow  # ~12 s; test_ax_sqlite's reloads stay in the default run
def test_sqlite_experiment_resumed_in_a_new_process(tmp_path) -> None:
    """Ax's SQL storage (SQLite): an experiment with an executor runner is saved as
    it runs; a new process loads it (the runner detached: using it raises, and
    changes nothing), attaches a new runner and finishes the trials left RUNNING
    by the first one -- every trial COMPLETED with its value, nothing lost."""
    path = tmp_path / "run.db"
    client = _client(storage_config=sqlite_storage(path))
    old_pool = ThreadPoolExecutor(2)
    first = attach_executor_runner(client, _quick, ["f"], old_pool)
    run_trials(client, max_trials=6, parallelism=3)
    before = _data(client)
    assert sorted(before) == list(range(6))
    # two trials RUNNING when the process 'dies': one started by the runner (run
    # metadata saved, as the Orchestrator does), one that no runner ever started
    started = client.get_next_trials(max_trials=1)
    started.update(client.get_next_trials(max_trials=1))
    idx_a, idx_b = sorted(started)
    trial = client._experiment.trials[idx_a]
    trial.update_run_metadata(first.run_trial(idx_a, started[idx_a]))
    client._save_or_update_trial_in_db_if_possible(
        experiment=client._experiment, trial=trial
    )
    old_pool.shutdown()
    close_storage()  # the process 'dies': its writer lock goes with it

    out = subprocess.run(
        [sys.executable, "-c", RESUME, str(Path(__file__).parent), str(path), NAME],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert "attach_executor_runner" in report["error"]
    assert report["metric"] == "MapMetric"
    running = {str(idx_a), str(idx_b)}
    assert {i for i, s in report["statuses"].items() if s == "RUNNING"} == running
    assert len(report["statuses"]) == 8  # the failed run_trials made no trial
    assert report["resubmitted"] == [idx_a, idx_b]

    loaded = load_client(NAME, path, random_seed=0)
    trials = loaded._experiment.trials
    assert len(trials) == 10
    assert {t.status for t in trials.values()} == {TrialStatus.COMPLETED}
    data = _data(loaded)
    assert sorted(data) == list(trials)
    # Ax's SQL storage keeps the data to ~1e-10 (pandas' to_json), see sql.py
    for idx, (mean, _) in data.items():
        expected = _objective(trials[idx].arm.parameters)
        assert mean == pytest.approx(expected, rel=0, abs=1e-9)
        if idx in before:
            assert mean == pytest.approx(before[idx][0], rel=0, abs=1e-9)
    assert type(loaded._experiment.runner) is DetachedExecutorRunner


def test_storage_arguments_are_json_and_detached_runner_raises() -> None:
    """What Ax's SQL storage keeps of the runner and a metric is JSON data only;
    clones and ``==`` still use the function and executor; a detached runner
    raises a DetachedRunnerError (an Ax UnsupportedError) naming the fix."""
    with ThreadPoolExecutor(1) as pool:
        runner = ExecutorRunner(_quick, pool, metric_names=["f", "g"])
        args = ExecutorRunner.serialize_init_args(obj=runner)
        assert json.loads(json.dumps(args)) == {
            "metric_names": ["f", "g"],
            "max_workers": None,
        }
        metric = runner.metrics()[0]
        assert json.loads(json.dumps(ExecutorMetric.serialize_init_args(obj=metric)))
        assert metric.clone().runner is runner
        clone = runner.clone()
        assert clone == runner and clone.executor is pool
        assert ExecutorRunner(_objective, pool, metric_names=["f", "g"]) != runner
    detached = DetachedExecutorRunner(**args)
    assert detached.metric_names == ("f", "g") and detached != runner
    assert detached.clone() == detached
    for use in (
        lambda: detached.poll_trial(0, {}),
        lambda: detached.run_trial(0, {"x1": 0.1}),
        lambda: detached.poll_available_capacity(),
        lambda: detached.executor,
        lambda: detached.outcome(0, "f"),
    ):
        with pytest.raises(DetachedRunnerError, match="attach_executor_runner"):
            use()


def test_bad_arguments_raise_value_error() -> None:
    with pytest.raises(ValueError, match=r"`evaluate` must be callable, got 42"):
        ExecutorRunner(42, metric_names=["f"])
    with pytest.raises(ValueError, match=r"`executor` must be .* got 'pool' \(str\)"):
        ExecutorRunner(_quick, "pool", metric_names=["f"])
    for names in ([], "", ["f", "f"], [3]):
        with pytest.raises(ValueError, match="`metric_names` must be"):
            ExecutorRunner(_quick, metric_names=names)
    with pytest.raises(ValueError, match="`evaluate` must be picklable"):
        ExecutorRunner(lambda p: {"f": 0.0}, metric_names=["f"])
    with pytest.raises(ValueError, match=r"`max_workers` must be .* got 0"):
        ExecutorRunner(_quick, metric_names=["f"], max_workers=0)
    with pytest.raises(ValueError, match=r"`client` must be an ax\.Client"):
        attach_executor_runner(object(), _quick, ["f"])
    with pytest.raises(ValueError, match="`parallelism` must be an integer >= 1"):
        run_trials(_client(), max_trials=2, parallelism=0)
    with pytest.raises(ValueError, match="`runner` must be an ExecutorRunner"):
        ExecutorMetric("f", runner=None)


def test_default_pool_is_closed_by_the_context_manager() -> None:
    with ExecutorRunner(_quick, metric_names="f", max_workers=1) as runner:
        meta = runner.run_trial(0, {"x1": 0.2, "x2": 0.3})
        pool = runner.executor
        while runner.poll_trial(0, meta) == TrialStatus.RUNNING:
            time.sleep(0.01)
    assert runner.outcome(0, "f")[0] == pytest.approx(
        _objective({"x1": 0.2, "x2": 0.3})
    )
    with pytest.raises(RuntimeError):
        pool.submit(int, "1")


@pytest.mark.parametrize("via", ["get_executor", "client"])
def test_dask_local_cluster_out_of_order(via: str) -> None:
    """A real ``distributed.LocalCluster`` (TCP on 127.0.0.1, two one-thread
    workers): the slow first trial completes after later ones, and every value
    is there and right. Both a Dask ``Client`` and its executor are accepted."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            protocol="tcp://",
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as dask,
    ):
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        client = _client()
        executor = dask.get_executor() if via == "get_executor" else dask
        runner = attach_executor_runner(client, _slow_below_half, ["f"], executor)
        run_trials(client, max_trials=6, parallelism=3)
    trials = client._experiment.trials
    assert len(trials) == 6
    assert {t.status for t in trials.values()} == {TrialStatus.COMPLETED}
    _assert_data_matches(client, list(trials))
    assert trials[0].arm.parameters["x1"] < 0.5 <= trials[1].arm.parameters["x1"], (
        "the seed-0 Sobol points changed: _slow_below_half no longer makes trial 0 slow"
    )
    by_completion = sorted(trials, key=lambda i: trials[i].time_completed)
    assert by_completion != sorted(trials)
    assert trials[1].time_completed < trials[0].time_completed
    assert runner.finished_at[1] < runner.finished_at[0]
