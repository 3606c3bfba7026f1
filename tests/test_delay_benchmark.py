"""The delay problems of ``ax-online`` (issue 50): the split fixed in code, the
durations' laws, censoring's documented settings per problem, the quantities at
equal simulated time, and a short run through the CLI (more workers than Ax's
initial trials, so the loop waits for data) reported from its kept jobs."""

from __future__ import annotations

import numpy as np
import pytest

from bandit_experiments.online_benchmark.delay import (
    CENSOR,
    DELAY_DEV,
    DELAY_PROBLEMS,
    DELAY_VALIDATION,
    durations,
    node_label,
    strategies_for,
)
from bandit_experiments.online_benchmark.delay_report import (
    delay_quantities,
    nominal_time,
)


def test_the_split_has_both_kinds_of_problem_in_each_half() -> None:
    assert not set(DELAY_DEV) & set(DELAY_VALIDATION)
    assert len(DELAY_DEV) + len(DELAY_VALIDATION) >= 6
    for half in (DELAY_DEV, DELAY_VALIDATION):
        kinds = {DELAY_PROBLEMS[n].bounded for n in half}
        assert kinds == {True, False}
    laws = {p.delay for p in DELAY_PROBLEMS.values()}
    assert laws == {"geometric", "poisson", "heavy"}
    assert all(3 <= p.workers <= 10 for p in DELAY_PROBLEMS.values())


@pytest.mark.parametrize("name", sorted(DELAY_PROBLEMS))
def test_durations_are_seeded_and_have_their_mean(name) -> None:
    p = DELAY_PROBLEMS[name]
    ticks = durations(p)
    draws = np.array([ticks(3, i) for i in range(4000)])
    assert draws.min() >= 1 and [ticks(3, i) for i in range(5)] == list(draws[:5])
    if p.delay != "heavy":  # the heavy tail's sample mean converges slowly
        assert abs(draws.mean() - p.mean_delay) < 0.1 * p.mean_delay
    else:
        assert abs(np.median(draws) - p.mean_delay) < p.mean_delay


def test_censoring_gets_the_documented_settings_and_only_on_bounded_rewards() -> None:
    p = DELAY_PROBLEMS["conversion3-geometric"]
    assert node_label(p, CENSOR) == "IGP-UCB[pending=censor;window=10;y_min=0.0]"
    assert node_label(p, "IGP-UCB[pending=censor;window=3]").endswith(
        "window=3;y_min=0.0]"
    )
    assert CENSOR in strategies_for("conversion3-geometric")
    assert not any("censor" in s for s in strategies_for("branin-poisson"))


def test_simple_regret_is_read_at_equal_simulated_time() -> None:
    job = {
        "problem": "conversion3-geometric",
        "trials": 4,
        "regret": [0.5, 0.1, 0.3, 0.0],
        "completed_at": [1.0, 30.0, 2.0, 100.0],
        "x": [[0.5, 0.5, 0.5]] * 4,
        "sigma": [None] * 4,
    }
    span = nominal_time("conversion3-geometric", 4)
    assert span == pytest.approx(4 * 4.0 / 5)
    q = delay_quantities(job)
    # by a quarter of 3.2 ticks nothing has completed: the floor's regret
    assert q["sr@0.25"] == pytest.approx(0.8)
    assert q["sr@0.75"] == pytest.approx(0.3) and q["sr@1.0"] == pytest.approx(0.3)
    assert q["cumulative"] == pytest.approx(0.9)


def test_a_short_run_through_the_cli_is_kept_and_reported(tmp_path, capsys) -> None:
    pytest.importorskip("ax")
    from bandit_experiments.cli import main

    out = tmp_path / "delay"
    args = ["ax-online", "--problems", "accuracy2-poisson", "--seeds", "1"]
    args += ["--trials", "7", "--workers", "1", "--no-progress", "--out"]
    args += [str(out / "dev"), "--strategies", f"{CENSOR},Ax default"]
    assert main(args) == 0
    assert len(list((out / "dev" / "jobs").glob("*.json"))) == 2
    capsys.readouterr()
    assert main(["ax-online", "--delay-report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "### Delay problems, dev" in text
    assert "| accuracy2-poisson | IGP-UCB[pending=censor] | 1 |" in text
    assert "default pending" not in text  # hallucination was not run
