"""Strategies stored by earlier releases load and make their recorded next decision.

Each fixture in ``tests/fixtures/stored/`` is an SQLite file written by the library
at an earlier commit (named in the file and in its ``.json``): an Ax experiment on a
2-D quadratic with seven trials, one left running, and the generation strategy that
release built from its defaults (or the options in ``strategy_options``). Its
``.json`` holds what that release decided next (``recorded_next``), before storing
it. Together they cover every change of the stored options' defaults: the
practical mode, the centre-first start, the practical B, the refit schedule,
``sparse_after``, the scale-free and residual detectors, the practical long-term
constraints, the trust region, and the last unversioned release (eec637c) before
``SCHEMA_VERSION``.

A fixture is loaded from a copy (the file in the repository is never written), the
bandit node's stored options pass through the migrations, and the next decision is
compared with the record: within 1e-3 in every coordinate of the unit box (the
replayed tier's tolerance of the golden trace: a fitted GP's last digits differ
across CPUs), with the distance in the failure message.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

from botorch_bandits.ax.sql import close_storage, load_client

FIXTURES = Path(__file__).parent / "fixtures" / "stored"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.json"))
TOLERANCE = 1e-3


def test_there_is_a_fixture_from_each_default_change() -> None:
    assert len(NAMES) >= 14
    assert all((FIXTURES / f"{n}.db").is_file() for n in NAMES)
    holds = {
        json.loads((FIXTURES / f"{n}.json").read_text())["commit"][:7] for n in NAMES
    }
    assert "eec637c" in holds  # the last release storing unversioned options


@pytest.mark.parametrize("name", NAMES)
def test_a_stored_strategy_loads_and_makes_its_recorded_decision(
    name: str, tmp_path: Path
) -> None:
    record = json.loads((FIXTURES / f"{name}.json").read_text())
    db = tmp_path / "stored.db"
    shutil.copy(FIXTURES / f"{name}.db", db)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Ax's deprecation notices on load
            client = load_client(
                record["experiment"], db, random_seed=record["random_seed"]
            )
            experiment = client._experiment
            # nothing lost on load: every trial, the running one still running
            assert sorted(experiment.trials) == [t["index"] for t in record["trials"]]
            running = [i for i, t in experiment.trials.items() if t.status.is_running]
            assert running == record["left_running"]
            ((index, params),) = client.get_next_trials(max_trials=1).items()
        expected = record["recorded_next"]
        assert index == expected["index"]
        node = experiment.trials[index].generator_runs[0]._generation_node_name
        assert node == expected["node"]
        space = record["search_space"]
        distance = {
            k: abs(params[k] - expected["parameters"][k]) / (hi - lo)
            for k, (lo, hi) in space.items()
        }
        assert max(distance.values()) <= TOLERANCE, (
            f"{name}: next decision {params} (recorded {expected['parameters']}), "
            f"distance per coordinate {distance}"
        )
    finally:
        close_storage()
