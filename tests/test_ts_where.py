"""``python -m bandit_experiments ts-where``: practical GP-TS against IGP-UCB through the
decision core, in batches (issue 28). Its numbers are a benchmark's, not a test's."""

from __future__ import annotations

import itertools
import json

import pytest

from bandit_experiments.cli import main
from bandit_experiments.studies import ts_where
from bandit_experiments.studies.ts_where import (
    job_path,
    run_core_loop,
    run_kept,
)


def test_batches_of_distinct_points_after_the_same_sobol_start() -> None:
    runs = [
        run_core_loop("branin", a, batch=3, evaluations=11, seed=2)
        for a in ("IGP-UCB", "GP-TS")
    ]
    for run in runs:
        assert run["round"] == [0] * 5 + [1] * 3 + [2] * 3
        cum, simple = run["cumulative_regret"], run["simple_regret"]
        assert len(cum) == 11 and all(b >= a >= 0 for a, b in itertools.pairwise(cum))
        assert all(b <= a for a, b in itertools.pairwise(simple))
        values = run["noise_free_value"]
        for r in (1, 2):  # a round's points are three different points
            assert len({values[i] for i, k in enumerate(run["round"]) if k == r}) == 3
    assert runs[0]["noise_free_value"][:5] == runs[1]["noise_free_value"][:5]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="problem"):
        run_core_loop("mixed", "GP-TS", 1, 8, 0)
    with pytest.raises(ValueError, match="algorithm"):
        run_core_loop("branin", "EI", 1, 8, 0)
    with pytest.raises(ValueError, match="batch"):
        run_core_loop("branin", "GP-TS", 0, 8, 0)


def test_a_kept_job_is_reused_only_under_the_same_code(tmp_path, monkeypatch) -> None:
    spec = {
        "problem": "branin",
        "algorithm": "GP-TS",
        "batch": 2,
        "seed": 0,
        "evaluations": 7,
    }
    first = run_kept(str(tmp_path), **spec)
    assert job_path(tmp_path, spec).exists()

    def fail(**_):
        raise AssertionError("the kept job should have been reused")

    monkeypatch.setattr(ts_where, "run_core_loop", fail)
    assert run_kept(str(tmp_path), **spec) == first
    kept = json.loads(job_path(tmp_path, spec).read_text())
    job_path(tmp_path, spec).write_text(json.dumps({**kept, "code": "other"}))
    with pytest.raises(AssertionError, match="reused"):
        run_kept(str(tmp_path), **spec)


def test_the_command_prints_a_row_per_batch_and_algorithm(tmp_path, capsys) -> None:
    args = (
        f"ts-where --problems branin --batches 1,2 --evaluations 7 --horizons 6,7 "
        f"--seeds 1 --out {tmp_path}"
    )
    assert main(args.split()) == 0
    out = capsys.readouterr().out
    for q, a in itertools.product((1, 2), ("IGP-UCB", "GP-TS")):
        assert f"| branin (2) | {q} | {a} |" in out
    with pytest.raises(SystemExit):
        main([*args.split(), "--batches", "0"])
    assert "--batches" in capsys.readouterr().err
