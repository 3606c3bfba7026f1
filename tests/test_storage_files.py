"""Several SQLite files in one process (issue 60): each ``Client`` saves to the file
it was made with and the storage functions hold the writer lock of every file they
bound; a ``Client`` whose file ``close_storage`` let go of refuses to save; the
lock holds for the file, not the path (a hard link is the same file)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("ax")
pytest.importorskip("sqlalchemy")

from ax import Client, RangeParameterConfig
from sqlalchemy.exc import SAWarning

from botorch_bandits.ax import (
    bandit_generation_strategy,
    close_storage,
    load_client,
    sqlite_storage,
    writer_lock,
)

# another process tries the file's writer lock and says what it got
PROBE = (
    "import sys\nfrom botorch_bandits.ax import DatabaseBusyError, writer_lock\n"
    "try:\n    with writer_lock(sys.argv[1]):\n        print('took it')\n"
    "except DatabaseBusyError as err:\n    print(err)\n"
)


def _other_process(path: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def _client(path: Path, name: str) -> Client:
    client = Client(random_seed=0, storage_config=sqlite_storage(path))
    client.configure_experiment(
        name=name,
        parameters=[
            RangeParameterConfig(name="x", bounds=(0.0, 1.0), parameter_type="float")
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(bandit_generation_strategy())
    return client


def _trials(client: Client, n: int) -> None:
    for _ in range(n):
        (index, params), *_ = client.get_next_trials(max_trials=1).items()
        client.complete_trial(trial_index=index, raw_data={"f": params["x"]})


def _stored(path: Path) -> dict[str, list[float]]:
    """Each experiment of the file: its trials' x, by trial index."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        rows = con.execute(
            "SELECT e.name, a.parameters FROM experiment_v2 e "
            "JOIN trial_v2 t ON t.experiment_id = e.id "
            "JOIN generator_run_v2 g ON g.trial_id = t.id "
            "JOIN arm_v2 a ON a.generator_run_id = g.id "
            'ORDER BY e.name, t."index"'
        ).fetchall()
    out: dict[str, list[float]] = {}
    for name, parameters in rows:
        import json

        out.setdefault(name, []).append(json.loads(parameters)["x"])
    return out


def _xs(client: Client) -> list[float]:
    trials = client._experiment.trials
    return [trials[i].arms[0].parameters["x"] for i in sorted(trials)]


def test_two_clients_on_two_files_in_one_process_keep_their_own(tmp_path) -> None:
    """The notebook that compares two experiments: ``ca`` on LA.db makes 3
    trials, ``cb`` on LB.db 3, ``ca`` 2 more. Before, LA.db kept 3 trials and
    LB.db's experiment got ``ca``'s last 2 (the latest binding moved Ax's
    process-wide engine) and LA.db's lock was let go at the second binding."""
    la, lb = tmp_path / "LA.db", tmp_path / "LB.db"
    ca = _client(la, "A")
    _trials(ca, 3)
    cb = _client(lb, "B")
    _trials(cb, 3)
    _trials(ca, 2)
    assert _stored(la) == {"A": _xs(ca)} and len(_xs(ca)) == 5
    assert _stored(lb) == {"B": _xs(cb)} and len(_xs(cb)) == 3
    # both locks held by this process meanwhile
    for path in (la, lb):
        assert f"(pid {os.getpid()}, running)" in _other_process(path)
    # each reloads as it was made
    close_storage()
    assert _xs(load_client("A", la)) == _xs(ca)
    assert _xs(load_client("B", lb)) == _xs(cb)
    close_storage()


def test_a_client_after_close_storage_refuses_to_save(tmp_path) -> None:
    """After ``close_storage()`` the file's lock is released (another process may
    write it): a save through the old ``Client`` is refused, naming the file, and
    the file keeps what it had. Bound again, the same ``Client`` saves again."""
    path = tmp_path / "closed.db"
    client = _client(path, "closed")
    _trials(client, 3)
    close_storage()
    assert _other_process(path) == "took it"
    with pytest.raises(RuntimeError, match=r"closed\.db.*close_storage") as info:
        client.get_next_trials(max_trials=1)
    assert "load_client" in str(info.value)
    # refused before anything changed: no trial made in memory either
    assert len(_stored(path)["closed"]) == 3 == len(_xs(client))
    with pytest.raises(RuntimeError, match="close_storage"):
        client.complete_trial(trial_index=2, raw_data={"f": 0.0})
    sqlite_storage(path)
    _trials(client, 1)
    assert len(_stored(path)["closed"]) == len(_xs(client))
    close_storage(path)
    with pytest.raises(ValueError, match=r"`path`.*not bound"):
        close_storage(path)


def test_the_lock_holds_for_the_file_not_the_path(tmp_path) -> None:
    """A hard link to a locked file names the same file: another process that
    opens it through the link is refused (before, the lock followed the path)."""
    path = tmp_path / "held.db"
    link = tmp_path / "link.db"
    path.write_bytes(b"")
    with writer_lock(path):
        os.link(path, link)
        message = _other_process(link)
        assert f"(pid {os.getpid()}, running)" in message, message
        assert str(link) in message
    assert _other_process(link) == "took it"


def test_load_client_passes_on_no_sqlalchemy_cache_key_warning(tmp_path) -> None:
    """SQLAlchemy 2.x's SAWarning that Ax's JSONEncodedText sets no ``cache_ok``
    (twice per load) is Ax's loader's, not the caller's: load_client drops that
    one warning and passes on any other."""
    path = tmp_path / "w.db"
    client = Client(storage_config=sqlite_storage(path), random_seed=0)
    client.configure_experiment(
        name="w",
        parameters=[
            RangeParameterConfig(name="x", bounds=(0.0, 1.0), parameter_type="float")
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(bandit_generation_strategy(num_init=2))
    for _ in range(2):
        ((index, p),) = client.get_next_trials(max_trials=1).items()
        client.complete_trial(trial_index=index, raw_data={"f": p["x"]})
    close_storage()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        loaded = load_client("w", path, 0)
    close_storage()
    sa = [str(w.message) for w in seen if issubclass(w.category, SAWarning)]
    assert sa == [], sa
    assert len(loaded.summarize()) == 2
