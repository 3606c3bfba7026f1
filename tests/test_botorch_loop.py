"""``python -m bandit_experiments botorch-loop``: a plain BoTorch loop where policies differ only
in the acquisition (issue 28). Its numbers are a benchmark's, not a test's."""

from __future__ import annotations

import itertools

import pytest

from bandit_experiments.cli import main
from bandit_experiments.studies.botorch_loop import (
    POLICIES,
    float_problems,
    run_loop,
    summarize_loops,
)


def test_a_short_run_records_regrets_and_starts_alike() -> None:
    runs = [run_loop("branin", p, seed=1, trials=7) for p in ("LogEI", "PathwiseTS")]
    for run in runs:
        cum, simple = run["cumulative_regret"], run["simple_regret"]
        assert len(cum) == 7 and all(b >= a >= 0 for a, b in itertools.pairwise(cum))
        assert all(b <= a for a, b in itertools.pairwise(simple)) and simple[-1] >= 0
    # the same Sobol start for every policy
    assert runs[0]["noise_free_value"][:5] == runs[1]["noise_free_value"][:5]
    (row, _) = summarize_loops(runs)
    assert row["seeds"] == 1 and row["simple_regret_se"] == 0.0


def test_only_float_problems_and_known_policies() -> None:
    assert "branin" in float_problems() and "mixed" not in float_problems()
    assert "hartmann6-constrained" not in float_problems()
    with pytest.raises(ValueError, match="problem"):
        run_loop("mixed", "LogEI", 0, 6)
    with pytest.raises(ValueError, match="policy"):
        run_loop("branin", "EI", 0, 6)
    assert "IGP-UCB (practical_acquisition)" in POLICIES


def test_the_command_prints_a_row_per_problem_and_policy(capsys) -> None:
    args = "botorch-loop --problems branin --seeds 1 --trials 6".split()
    code = main([*args, "--policies", "UCB(beta=2)"])
    assert code == 0
    assert "UCB(beta=2)" in capsys.readouterr().out
