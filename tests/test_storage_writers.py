"""One writer per SQLite file (issue 46): the storage functions take the file's
writer lock, a second process that would write gets a clear error naming the file
and the holder (never two trials with one index), the lock is re-entrant within a
process, never inherited by a forked worker, and released by close_storage or the
holder's death; read_only loading takes none."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ax")
pytest.importorskip("sqlalchemy")

from ax import Client, RangeParameterConfig

from botorch_bandits.ax import (
    DatabaseBusyError,
    bandit_generation_strategy,
    close_storage,
    load_client,
    sqlite_storage,
    writer_lock,
)

NAME = "writers"


def _new_experiment(path: Path) -> Client:
    client = Client(random_seed=0, storage_config=sqlite_storage(path))
    client.configure_experiment(
        name=NAME,
        parameters=[
            RangeParameterConfig(name="x", bounds=(0.0, 1.0), parameter_type="float")
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(bandit_generation_strategy(mode="theory"))
    for _ in range(4):
        (index, params), *_ = client.get_next_trials(max_trials=1).items()
        client.complete_trial(trial_index=index, raw_data={"f": params["x"]})
    return client


def _indices(path: Path) -> list[int]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        rows = con.execute('SELECT "index" FROM trial_v2 ORDER BY "index"')
        return [i for (i,) in rows.fetchall()]


# a writer: waits for the go file, loads the experiment and makes one trial
WRITER = """
import json, os, sys, time
from pathlib import Path
from botorch_bandits.ax import DatabaseBusyError, load_client
path, go = sys.argv[1], Path(sys.argv[2])
while not go.exists():
    time.sleep(0.001)
try:
    client = load_client("writers", path, random_seed=0)
    (index, params), *_ = client.get_next_trials(max_trials=1).items()
    client.complete_trial(trial_index=index, raw_data={"f": params["x"]})
    time.sleep(float(sys.argv[3]))  # still the writer meanwhile
    print(json.dumps({"pid": os.getpid(), "trial": index}))
except DatabaseBusyError as err:
    print(json.dumps({"pid": os.getpid(), "busy": str(err)}))
"""


def test_two_writers_at_once_one_writes_the_other_is_told(tmp_path) -> None:
    """The audit's race: two processes load the experiment and make a trial at the
    same moment. Before: both got trial 4 with the same point and the file held
    two rows of index 4. Now one makes trial 4, the other is refused, naming the
    file and the writer's pid; the file's indices stay unique."""
    path = tmp_path / "race.db"
    _new_experiment(path)
    close_storage()
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(go), "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    time.sleep(0.5)  # both waiting on the go file (imports done or nearly)
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    made = [r for r in results if "trial" in r]
    busy = [r for r in results if "busy" in r]
    assert len(made) == 1 and len(busy) == 1, results
    assert made[0]["trial"] == 4
    message = busy[0]["busy"]
    assert str(path) in message and f"pid {made[0]['pid']}" in message, message
    assert "one writer per database" in message and "read_only=True" in message
    assert _indices(path) == [0, 1, 2, 3, 4]


def test_the_storage_functions_hold_the_lock_until_closed(tmp_path) -> None:
    """``sqlite_storage`` takes the lock and holds it while the process is bound to
    the file; another process is refused meanwhile, also after the process binds
    another file; ``close_storage`` lets go; ``load_client(read_only=True)`` takes no lock and
    saves nothing."""
    path, other = tmp_path / "a.db", tmp_path / "b.db"
    client = _new_experiment(path)
    lock = Path(f"{path}.lock")
    assert lock.read_text() == str(os.getpid())
    probe = (
        "import sys\nfrom botorch_bandits.ax import DatabaseBusyError, writer_lock\n"
        "try:\n    with writer_lock(sys.argv[1]):\n        print('took it')\n"
        "except DatabaseBusyError as err:\n    print(err)\n"
    )

    def other_process() -> str:
        out = subprocess.run(
            [sys.executable, "-c", probe, str(path)], capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout.strip()

    assert f"(pid {os.getpid()}, running)" in other_process()
    # a reader in another process: no lock, an in-memory copy
    reader = (
        "import sys\nfrom botorch_bandits.ax import load_client\n"
        "c = load_client('writers', sys.argv[1], read_only=True)\n"
        "print(len(c._experiment.trials), c._storage_config)\n"
        "c.get_next_trials(max_trials=1)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", reader, str(path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["4", "None"]
    assert _indices(path) == [0, 1, 2, 3]  # the reader's trial was not saved
    # binding another file keeps the first one's lock: the first Client still
    # saves to it; close_storage(path) lets go of one file, close_storage() of all
    _new_experiment(other)
    assert lock.exists() and "running" in other_process()
    close_storage(path)
    assert not lock.exists() and other_process() == "took it"
    close_storage()
    assert not Path(f"{other}.lock").exists()
    # a read-only load in this process keeps the binding as it was
    again = load_client(NAME, path)
    assert lock.exists()
    copy = load_client(NAME, other, read_only=True)
    assert copy._storage_config is None and lock.exists()
    (index, params), *_ = again.get_next_trials(max_trials=1).items()
    again.complete_trial(trial_index=index, raw_data={"f": params["x"]})
    assert _indices(path) == [0, 1, 2, 3, 4]  # saved to its own file
    assert _indices(other) == [0, 1, 2, 3]
    close_storage()
    del client


def test_the_lock_is_reentrant_in_a_process_and_leaves_no_file(tmp_path) -> None:
    """A nested ``writer_lock`` in one process (the demo holds it around
    ``sqlite_storage``) is the same writer, not "another process"; the file goes
    when the last holder lets go, also after an error."""
    db = tmp_path / "x.db"
    lock = tmp_path / "x.db.lock"
    with writer_lock(db):
        with writer_lock(db):
            assert lock.read_text() == str(os.getpid())
        assert lock.exists()
    assert not lock.exists()
    with pytest.raises(RuntimeError, match="boom"):
        with writer_lock(db):
            raise RuntimeError("boom")
    assert not lock.exists()


# holds the lock, forks a child that sleeps (a pool worker), prints both pids
FORKER = """
import multiprocessing as mp, os, sys, time
from botorch_bandits.ax import writer_lock
def sleep():
    time.sleep(60)
if __name__ == "__main__":
    with writer_lock(sys.argv[1]):
        child = mp.get_context("fork").Process(target=sleep)
        child.start()
        print(os.getpid(), child.pid, flush=True)
        time.sleep(60)
"""


def test_a_worker_of_a_killed_writer_does_not_keep_the_lock(tmp_path) -> None:
    """SIGKILL of the writer alone leaves its forked workers running; before, they
    held the inherited ``flock`` for ever and every later writer was refused
    naming the dead pid. The lock is not inherited: the next writer takes it."""
    db = tmp_path / "x.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", FORKER, str(db)], stdout=subprocess.PIPE, text=True
    )
    parent, child = map(int, proc.stdout.readline().split())
    try:
        with pytest.raises(DatabaseBusyError, match=f"pid {parent}, running"):
            with writer_lock(db):
                pass
        os.kill(parent, signal.SIGKILL)
        proc.wait()
        os.kill(child, 0)  # the worker lives on
        with writer_lock(db):
            pass
    finally:
        for pid in (parent, child):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_full_disk_during_a_save_names_the_file(tmp_path) -> None:
    """A save that fills the disk (here SQLite's ``max_page_count``, which fails
    the same way) raises an ``OSError`` (ENOSPC) naming the file -- before,
    SQLAlchemy's bare "database or disk is full" -- and the file keeps every
    earlier trial."""
    import errno

    from ax.storage.sqa_store import db
    from sqlalchemy import event

    path = tmp_path / "full.db"
    client = _new_experiment(path)
    pages = path.stat().st_size // 4096

    def cap(connection, _record) -> None:
        connection.execute(f"PRAGMA max_page_count = {pages + 1}")

    event.listen(db.get_engine(), "connect", cap)
    try:
        with pytest.raises(OSError) as info:
            for _ in range(40):
                (index, params), *_ = client.get_next_trials(max_trials=1).items()
                client.complete_trial(trial_index=index, raw_data={"f": params["x"]})
    finally:
        event.remove(db.get_engine(), "connect", cap)
    assert info.value.errno == errno.ENOSPC
    assert str(path) in str(info.value) and "load_client" in str(info.value)
    close_storage()
    stored = _indices(path)
    assert stored[:4] == [0, 1, 2, 3] and stored == list(range(len(stored)))
    assert len(load_client(NAME, path)._experiment.trials) == len(stored)
    close_storage()
