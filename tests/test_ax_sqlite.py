"""The bandit strategy with Ax's SQL storage (SQLite): a run saved by ``ax.Client``
reloads in a new process with every trial, arm, status, metadata, timestamp and
data point, and makes the same next decision; arms pulled again keep their rows;
one file at a time per process; bad arguments are named."""

from __future__ import annotations

import json
import math
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ax")
pytest.importorskip("sqlalchemy")

from ax import ChoiceParameterConfig, Client, RangeParameterConfig
from ax.api.configs import StorageConfig
from ax.core.generator_run import ArmWeight
from ax.storage.json_store.encoder import object_to_json

from botorch_bandits import upstream
from botorch_bandits.ax import bandit_generation_strategy, sql

NAME = "bandit_sqlite"


def _objective(p: dict) -> float:
    return math.sin(3 * p["x1"]) * math.cos(2 * p["x2"]) + 0.5 * p["x1"]


def _client(
    path: Path, name: str = NAME, grid: tuple[int, int] = (5, 3), **options
) -> Client:
    """A ``grid[0]`` x ``grid[1]`` decision set: more trials than points forces
    re-pulls."""
    client = Client(random_seed=0, storage_config=sql.sqlite_storage(path))
    client.configure_experiment(
        name=name,
        parameters=[
            ChoiceParameterConfig(
                name="x1",
                values=[i / (grid[0] - 1) for i in range(grid[0])],
                parameter_type="float",
            ),
            ChoiceParameterConfig(
                name="x2",
                values=[i / (grid[1] - 1) for i in range(grid[1])],
                parameter_type="float",
            ),
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(bandit_generation_strategy(num_init=3, **options))
    return client


def _finite(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def snapshot(client: Client) -> dict:
    """Everything the comparison looks at, as JSON."""
    exp = client._experiment
    df = exp.lookup_data().df
    data = sorted(
        (int(r.trial_index), r.arm_name, r.metric_name, r.mean, _finite(r.sem))
        for r in df.itertuples()
    )
    trials = []
    for t in sorted(exp.trials.values(), key=lambda t: t.index):
        gr = t.generator_runs[0] if t.generator_runs else None
        trials.append(
            {
                "index": t.index,
                "status": t.status.name,
                "arms": [[a.name, a.parameters] for a in t.arms],
                "run_metadata": t.run_metadata,
                "gen_metadata": gr.gen_metadata if gr else None,
                "node": gr._generation_node_name if gr else None,
                "created": t.time_created.isoformat(),
                "completed": t.time_completed and t.time_completed.isoformat(),
            }
        )
    gs = client._generation_strategy
    strategy = {
        "name": gs.name,
        "current": gs.current_node_name,
        "nodes": [object_to_json(n) for n in gs._nodes if n.name == "bandit"],
        "generator_runs": len(gs._generator_runs),
    }
    return json.loads(
        json.dumps({"trials": trials, "data": data, "strategy": strategy})
    )


def next_decision(client: Client) -> dict:
    new = client.get_next_trials(max_trials=1)
    (index, params), *_ = new.items()
    meta = client._experiment.trials[index].generator_runs[0].gen_metadata
    return json.loads(json.dumps({"index": index, "params": params, "meta": meta}))


RELOAD = """
import json, shutil, sys
sys.path.insert(0, sys.argv[1])
from test_ax_sqlite import next_decision, snapshot
from botorch_bandits.ax.sql import load_client
path, copy, name = sys.argv[2:]
shutil.copy(path, copy)  # the original keeps going in its own file
client = load_client(name, copy, random_seed=0)
out = snapshot(client)
out["next"] = next_decision(client)
print(json.dumps(out))
"""


# the theory mode's reload in a new process is also checked through JSON (test_ax)
@pytest.mark.parametrize(
    "mode", [pytest.param("theory", marks=pytest.mark.slow), "practical"]
)
def test_reload_in_a_new_process_is_identical_and_decides_the_same(tmp_path, mode):
    path = tmp_path / "exp.db"
    client = _client(path, mode=mode, pending="censor", window=4, y_min=-2.0)
    running: list[int] = []
    made = 0
    while made < 20 or len(running) > 1:  # two in flight, newest first
        if made < 20 and len(running) < 2:
            (idx, _), *_ = client.get_next_trials(max_trials=1).items()
            running.append(idx)
            made += 1
            continue
        idx = running.pop()
        # saved with the completion (Ax saves a trial when its status changes)
        client._experiment.trials[idx].update_run_metadata({"worker": idx % 3})
        if idx == 7:
            client.mark_trial_failed(trial_index=idx, failed_reason="boom")
        else:
            params = client._experiment.trials[idx].arms[0].parameters
            client.complete_trial(trial_index=idx, raw_data={"f": _objective(params)})
    before = snapshot(client)
    names = [t["arms"][0][0] for t in before["trials"]]
    repulls = [i for i, n in enumerate(names) if n in names[:i]]
    assert len(repulls) >= 5, names  # the bandit did pull arms again
    assert {t["status"] for t in before["trials"]} == {
        "COMPLETED",
        "FAILED",
        "RUNNING",
    }
    assert any(t["created"][19:] for t in before["trials"])  # microseconds present
    # one arm row per trial generator run: no row moved to a later run
    with sqlite3.connect(path) as con:
        counts = con.execute(
            "SELECT (SELECT COUNT(*) FROM arm_v2 a WHERE a.generator_run_id = g.id) "
            "FROM generator_run_v2 g WHERE g.trial_id IS NOT NULL"
        ).fetchall()
    assert [c for (c,) in counts] == [1] * len(names)

    out = subprocess.run(
        [
            sys.executable,
            "-c",
            RELOAD,
            str(Path(__file__).parent),
            str(path),
            str(tmp_path / "copy.db"),
            NAME,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    after = json.loads(out.stdout.strip().splitlines()[-1])
    resumed_next = after.pop("next")
    for a, b in zip(before["trials"], after["trials"], strict=True):
        assert a == b  # exact, timestamps to the microsecond included
    # Ax writes data with pandas' to_json (10 decimal places) and reads it with
    # its fast float parser: equal to ~1e-10, not bit for bit
    data_before, data_after = before.pop("data"), after.pop("data")
    assert [r[:3] for r in data_before] == [r[:3] for r in data_after]
    assert [r[3] for r in data_after] == pytest.approx(
        [r[3] for r in data_before], rel=0, abs=1e-9
    )
    assert before == after
    assert next_decision(client) == resumed_next


def _reuse_saved_arms(node) -> None:
    """Make ``node`` put the experiment's existing Arm objects (saved, with db
    ids) in its generator runs -- what a naive 're-pull this arm' would do."""
    gen = node._gen

    def _gen(*args, **kwargs):
        gr = gen(*args, **kwargs)
        experiment = kwargs.get("experiment", args[0] if args else None)
        table = gr._arm_weight_table
        for signature, cw in list(table.items()):
            old = experiment.arms_by_signature.get(signature)
            if old is not None:
                table[signature] = ArmWeight(arm=old, weight=cw.weight)
        return gr

    node._gen = _gen


def _trials_without_arm_rows(path: Path) -> list[int]:
    with sqlite3.connect(path) as con:
        rows = con.execute(
            'SELECT t."index" FROM trial_v2 t JOIN generator_run_v2 g '
            "ON g.trial_id = t.id WHERE NOT EXISTS (SELECT 1 FROM arm_v2 a "
            'WHERE a.generator_run_id = g.id) ORDER BY t."index"'
        ).fetchall()
    return [i for (i,) in rows]


def _run_reusing(path: Path, name: str, patched: bool = True) -> list[int]:
    client = _client(path, name=name, grid=(2, 2))  # 4 points, 5 trials
    if not patched:  # sqlite_storage installed the patches: take them off again
        sql.uninstall_patches()
    _reuse_saved_arms(client._generation_strategy.nodes_by_name["bandit"])
    for _ in range(5):
        (idx, params), *_ = client.get_next_trials(max_trials=1).items()
        client.complete_trial(trial_index=idx, raw_data={"f": _objective(params)})
    names = [t.arms[0].name for t in client._experiment.trials.values()]
    assert len(set(names)) < len(names)  # arms were pulled again
    return _trials_without_arm_rows(path)


def test_generator_runs_reusing_saved_arms_keep_every_trial(tmp_path):
    # the root cause: without the guard the arm row moves to the latest run
    try:
        lost = _run_reusing(tmp_path / "unpatched.db", "unpatched", patched=False)
    finally:
        sql.install_patches()
    assert lost, "Ax no longer moves a reused arm's row: the guard can go"
    path = tmp_path / "patched.db"
    assert _run_reusing(path, "patched") == []
    loaded = sql.load_client("patched", path)
    assert all(len(t.arms) == 1 for t in loaded._experiment.trials.values())


def test_one_file_at_a_time_in_a_process(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    _client(a, name="exp_a")
    _client(b, name="exp_b")
    for path, name in ((a, "exp_a"), (b, "exp_b")):
        with sqlite3.connect(path) as con:
            assert con.execute("SELECT name FROM experiment_v2").fetchall() == [(name,)]
    client = sql.load_client("exp_a", a)  # rebinds to a.db
    assert client._experiment.name == "exp_a"
    assert client._random_seed is None
    with pytest.raises(ValueError, match=r"`experiment_name`.*exp_b.*exp_a"):
        sql.load_client("exp_b", sql.sqlite_storage_config(a))
    assert sql.load_client("exp_b", b, random_seed=3)._random_seed == 3
    assert sql.sqlite_storage(a).url == f"sqlite:///{a.resolve()}"


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"`path`.*does not exist"):
        sql.sqlite_storage(tmp_path / "missing" / "exp.db")
    with pytest.raises(ValueError, match="`path` is a directory"):
        sql.sqlite_storage(tmp_path)
    for bad in (3, None, True, ""):
        with pytest.raises(ValueError, match="`path`"):
            sql.sqlite_storage(bad)
    text = tmp_path / "notes.txt"
    text.write_text("not a database, just text " * 100)
    with pytest.raises(
        ValueError, match=r"`path`.*cannot be read as a SQLite database"
    ):
        sql.sqlite_storage(text)
    with pytest.raises(FileNotFoundError, match=r"`storage`.*does not exist"):
        sql.load_client("exp", tmp_path / "none.db")
    with pytest.raises(ValueError, match="`storage` must be a SQLite"):
        sql.load_client("exp", StorageConfig(url="mysql://user@host/db"))
    with pytest.raises(ValueError, match="`storage` must be a file path"):
        sql.load_client("exp", 42)
    sql.sqlite_storage(tmp_path / "ok.db")
    with pytest.raises(ValueError, match="`experiment_name`"):
        sql.load_client("", tmp_path / "ok.db")
    with pytest.raises(ValueError, match="`random_seed`"):
        sql.load_client("exp", tmp_path / "ok.db", random_seed=1.5)


def test_patches_are_idempotent():
    from ax.storage.sqa_store.timestamp import IntTimestamp

    sql.install_patches()
    patched = IntTimestamp.process_bind_param
    sql.install_patches()
    assert IntTimestamp.process_bind_param is patched
    assert patched.__module__ == "botorch_bandits.upstream"
    sql.uninstall_patches()
    sql.uninstall_patches()
    assert IntTimestamp.process_bind_param.__module__.startswith("ax.")
    sql.install_patches()
    assert IntTimestamp.process_bind_param is patched


IMPORT_ONLY = """
import json
import pandas
import botorch_bandits, botorch_bandits.ax, botorch_bandits.ax.sql
from botorch_bandits import upstream
from ax.storage.sqa_store import decoder
from ax.storage.sqa_store.encoder import Encoder
from ax.storage.sqa_store.timestamp import IntTimestamp
functions = (
    IntTimestamp.process_bind_param,
    Encoder.generator_run_to_sqa,
    Encoder.data_to_sqa,
)
print(json.dumps({
    "modules": [f.__module__ for f in functions],
    "pd_is_pandas": decoder.pd is pandas,
    "installed": upstream.sql_patches_installed(),
}))
"""


def test_importing_the_package_leaves_ax_untouched():
    """``import botorch_bandits.ax`` patches nothing: the storage functions do."""
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_ONLY], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {
        "modules": [
            "ax.storage.sqa_store.timestamp",
            "ax.storage.sqa_store.encoder",
            "ax.storage.sqa_store.encoder",
        ],
        "pd_is_pandas": True,
        "installed": False,
    }


@pytest.mark.parametrize("use", ["sqlite_storage", "load_client"])
def test_the_storage_functions_install_the_patches(tmp_path, use):
    from ax.storage.sqa_store import decoder

    path = tmp_path / "exp.db"
    _client(path, name="exp")
    sql.uninstall_patches()
    assert not upstream.sql_patches_installed()
    if use == "sqlite_storage":
        sql.sqlite_storage(path)
    else:
        sql.load_client("exp", path)
    assert upstream.sql_patches_installed()
    assert isinstance(decoder.pd, upstream.PrecisePandas)


def _centre_client(path: Path, **options) -> Client:
    """The unit square stored in ``path`` (experiment ``"centre"``), with the
    strategy of ``options`` and 3 initial trials."""
    client = Client(random_seed=0, storage_config=sql.sqlite_storage(path))
    client.configure_experiment(
        name="centre",
        parameters=[
            RangeParameterConfig(name="x1", bounds=(0.0, 1.0), parameter_type="float"),
            RangeParameterConfig(name="x2", bounds=(0.0, 1.0), parameter_type="float"),
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(bandit_generation_strategy(num_init=3, **options))
    return client


def test_a_centre_first_strategy_reloads_and_decides_the_same(tmp_path) -> None:
    """``initialize_with_center=True`` (Ax's CenterGenerationNode first) stores and
    reloads with the rest of the strategy; the reloaded client's next decision is
    the original's."""
    path = tmp_path / "centre.db"
    client = _centre_client(path, initialize_with_center=True)
    for _ in range(5):
        (idx, params), *_ = client.get_next_trials(max_trials=1).items()
        client.complete_trial(trial_index=idx, raw_data={"f": _objective(params)})
    assert client._experiment.trials[0].arms[0].parameters == {"x1": 0.5, "x2": 0.5}
    before = snapshot(client)
    copy = tmp_path / "copy.db"  # the original keeps going in its own file
    copy.write_bytes(path.read_bytes())
    reloaded = sql.load_client("centre", copy, random_seed=0)
    assert snapshot(reloaded) == before
    assert next_decision(reloaded) == next_decision(client)


def test_a_centre_first_strategy_reloaded_before_its_first_trial_keeps_its_pause(
    tmp_path,
) -> None:
    """The centre node's pause (a first call makes at most num_init trials) is
    stored with it: a strategy reloaded before any trial makes the same first call
    of 6 as the original -- the centre and 2 Sobol trials, the same points."""
    path = tmp_path / "centre.db"
    client = _centre_client(path)
    reloaded = sql.load_client("centre", path, random_seed=0)
    firsts = [c.get_next_trials(max_trials=6) for c in (client, reloaded)]
    nodes = [
        [
            t.generator_runs[0]._generation_node_name
            for t in c._experiment.trials.values()
        ]
        for c in (client, reloaded)
    ]
    assert firsts[0] == firsts[1] and len(firsts[0]) == 3
    assert nodes[0] == nodes[1] == ["CenterOfSearchSpace", "Sobol", "Sobol"]


def test_a_saved_strategy_is_updated_with_its_new_generator_runs_only(
    tmp_path, monkeypatch
):
    """Ax saves the whole generation strategy after every generation (every
    generator run written again: O(trials) a call); with the patches a strategy
    saved by this process is updated with its new runs, the full save running only
    where something else of it changed -- and the file holds each run once, and
    reloads as the live run."""
    sql.install_patches()
    full = []
    original = upstream._ORIGINALS["save_strategy"]

    def counted(**kw):
        full.append(len(kw["generation_strategy"]._generator_runs))
        return original(**kw)

    monkeypatch.setitem(upstream._ORIGINALS, "save_strategy", counted)
    path = tmp_path / "incremental.db"
    client = _client(path, name="incremental")
    for _ in range(7):
        (index, params), *_ = client.get_next_trials(max_trials=1).items()
        client.complete_trial(trial_index=index, raw_data={"f": _objective(params)})
    gs = client._generation_strategy
    assert len(gs._generator_runs) == 7
    # the first save, and a save while the initial nodes hand over (their JSON
    # changes); none once the bandit node (from trial 3 on) makes the runs
    assert full[0] == 0 and max(full) <= 3, full
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT COUNT(*) FROM generator_run_v2 WHERE generation_strategy_id = ?",
            (gs.db_id,),
        ).fetchone()[0]
    assert rows == 7
    loaded = sql.load_client("incremental", path, random_seed=0)
    assert snapshot(loaded) == snapshot(client)


# ------------------------------------------------------------- batch trials
def batch_calls(client: Client, sizes: list[int]) -> None:
    """``get_next_trials(max_trials=q)`` for each ``q`` of ``sizes``, every trial
    completed before the next call."""
    for q in sizes:
        new = client.get_next_trials(max_trials=q)
        assert new, "the strategy made no trial"
        for index, params in new.items():
            client.complete_trial(trial_index=index, raw_data={"f": _objective(params)})


def arm_rows(path: Path) -> dict[int, int]:
    """Each stored trial's index -> the number of ``arm_v2`` rows of its
    generator run (read with SQLite itself, not through Ax)."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        rows = con.execute(
            'SELECT t."index", COUNT(a.id) FROM trial_v2 t '
            "LEFT JOIN generator_run_v2 g ON g.trial_id = t.id "
            "LEFT JOIN arm_v2 a ON a.generator_run_id = g.id "
            'GROUP BY t.id ORDER BY t."index"'
        ).fetchall()
    return dict(rows)


CONTINUE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from test_ax_sqlite import arm_rows, batch_calls
from botorch_bandits.ax.sql import load_client
path, name, sizes = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
client = load_client(name, path, random_seed=0)
before = len(client._experiment.trials)
batch_calls(client, sizes)
print(json.dumps([before, len(client._experiment.trials)]))
"""


def _continue(path: Path, name: str, sizes: list[int]) -> tuple[int, int]:
    """Load ``name`` from ``path`` in a new process and make batch calls of
    ``sizes``: (trials before, trials after)."""
    sql.close_storage()  # this process lets go of the file: the other one writes
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CONTINUE,
            str(Path(__file__).parent),
            str(path),
            name,
            json.dumps(sizes),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    before, after = json.loads(out.stdout.strip().splitlines()[-1])
    return before, after


@pytest.mark.parametrize(
    "mode", [pytest.param("theory", marks=pytest.mark.slow), "practical"]
)
def test_batch_trials_keep_their_arms_through_a_reload(tmp_path, mode) -> None:
    """Calls of ``max_trials`` 3 and 2 (Ax 1.3's ``ExternalGenerationNode`` gave the
    second run of a call an int fit time, the save's ``copy_db_ids`` failed on it,
    and the next save moved the arm's row: half the trials reloaded with no arm):
    every trial keeps its one arm row, and a new process continues the run."""
    path = tmp_path / "batch.db"
    client = _centre_client(path, mode=mode)
    batch_calls(client, [3, 2, 3, 2, 3])
    n = len(client._experiment.trials)
    assert n >= 11 and arm_rows(path) == dict.fromkeys(range(n), 1)
    before, after = _continue(path, "centre", [3, 2])
    assert before == n and after == n + 5
    assert arm_rows(path) == dict.fromkeys(range(after), 1)


def test_without_the_workaround_ax_loses_batch_arms(tmp_path, monkeypatch) -> None:
    """The Ax defect itself: with the fit time left as Ax sets it, batch trials
    lose their arm rows (if this fails, Ax fixed it: the workaround can go)."""
    from botorch_bandits.ax import generation

    monkeypatch.setattr(generation, "float_fit_time", lambda node, gr: None)
    path = tmp_path / "lost.db"
    client = _centre_client(path, mode="theory")
    batch_calls(client, [3, 3, 3])
    assert 0 in arm_rows(path).values(), "Ax no longer loses batch arms"


BATCH_LOOP = """
import sys
sys.path.insert(0, sys.argv[1])
from test_ax_sqlite import _centre_client, batch_calls
client = _centre_client(__import__("pathlib").Path(sys.argv[2]), mode=sys.argv[3])
batch_calls(client, [3] * 40)
"""


def _kill_batch_run(path: Path, mode: str, k: int) -> None:
    """Start a run of batch calls in a new process and SIGKILL it once ``k``
    trials are stored."""
    proc = subprocess.Popen(
        [sys.executable, "-c", BATCH_LOOP, str(Path(__file__).parent), str(path), mode],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 240
    while True:
        try:
            stored = len(arm_rows(path))
        except sqlite3.Error:  # not created yet
            stored = 0
        if stored >= k or proc.poll() is not None:
            break
        assert time.time() < deadline, "the run made no progress"
        time.sleep(0.01)
    proc.kill()
    _, err = proc.communicate()
    assert proc.returncode == -signal.SIGKILL, err.decode()[-3000:]


@pytest.mark.parametrize(
    ("mode", "points"),
    [
        ("theory", (9,)),
        pytest.param("theory", (4, 7, 11, 16), marks=pytest.mark.slow),
        pytest.param("practical", (5, 8, 13), marks=pytest.mark.slow),
    ],
    ids=["theory", "theory-more-points", "practical"],
)
def test_a_sigkilled_batch_run_keeps_its_arms_and_continues(
    tmp_path, mode, points
) -> None:
    """SIGKILL a run of ``max_trials=3`` calls at a point (several under the slow
    marker); the file reloads in a new process with one arm row per trial, and the
    run continues with batch calls."""
    for k in points:
        path = tmp_path / f"killed-{k}.db"
        _kill_batch_run(path, mode, k)
        rows = arm_rows(path)
        assert len(rows) >= k and set(rows.values()) == {1}, (k, rows)
        before, after = _continue(path, "centre", [3, 2])
        assert before == len(rows) and after >= before + 4, (k, before, after)
        assert arm_rows(path) == dict.fromkeys(range(after), 1), k
