"""The online benchmark (issue 29): the problems' per-trial optima, the quantities
and the goal's verdict on constructed jobs, and a small run through ax.Client that
writes its table and reuses its kept jobs."""

from __future__ import annotations

import math

import pytest
import torch

pytest.importorskip("ax")

from bandit_experiments.online_benchmark import runner as online
from bandit_experiments.online_benchmark.runner import (
    AX_DEFAULT,
    EXTENSIONS,
    PLAIN,
    PROBLEMS,
    optimum,
    quantities,
    verdict,
)


def test_the_optima_are_the_known_minima_where_they_are_known() -> None:
    assert optimum("branin-flip", 0, 100) == pytest.approx(0.397887, abs=1e-5)
    assert optimum("branin-flip", 99, 100) == pytest.approx(0.397887, abs=1e-5)
    assert optimum("hartmann4-flip", 80, 100) == pytest.approx(-3.134494, abs=1e-5)
    # the budget's optimum is feasible and no better than the unconstrained one
    best = optimum("branin-budget", 0, 100)
    assert best > 0.397887 + 0.1
    g = torch.linspace(0, 1, 1025, dtype=torch.double)
    X = torch.cartesian_prod(g, g)
    feasible = X[PROBLEMS["branin-budget"].cost(X) <= 0]
    grid_best = float(PROBLEMS["branin-budget"].value(feasible, 0, 100).min())
    assert best <= grid_best + 1e-9 and best >= grid_best - 0.05


def test_the_turning_problem_turns() -> None:
    p = PROBLEMS["branin-spin"]
    x = torch.tensor([[0.2, 0.7]], dtype=torch.double)
    assert float(p.value(x, 0, 100)) == pytest.approx(float(online.branin(x)))
    assert float(p.value(x, 50, 100)) == pytest.approx(
        float(online.branin(torch.tensor([[0.3, 0.2]], dtype=torch.double)))
    )  # a quarter turn about the centre


def _job(regret, cost=None, completed_at=None, restarts=None) -> dict:
    return {
        "problem": "p",
        "strategy": "s",
        "seed": 0,
        "regret": regret,
        "cost": cost,
        "completed_at": completed_at,
        "restarts": restarts,
        "uniform": [1],
    }


def test_quantities_of_a_constructed_job() -> None:
    q = quantities(_job([3.0, 1.0, 2.0], cost=[0.3, -0.1, 0.1]))
    assert q["regret"] == 6.0 and q["violation"] == pytest.approx(0.1)
    assert math.isnan(q["restarts"]) and q["uniform"] == 1.0
    # completions at times 1, 4, 2: best regret 3 on [1, 2), 2 on [2, 4)
    q = quantities(_job([3.0, 1.0, 2.0], completed_at=[1.0, 4.0, 2.0], restarts=[]))
    assert q["time_regret"] == pytest.approx((3 * 1 + 2 * 2) / 3)
    assert q["restarts"] == 0.0


def _summary(problem: str, rows: dict) -> dict:
    return {(problem, s): {k: (v, 0.0) for k, v in r.items()} for s, r in rows.items()}


def test_the_verdict_needs_both_wins_and_the_budget() -> None:
    ext = EXTENSIONS["drift"]
    s = _summary(
        "branin-flip",
        {ext: {"regret": 10.0}, PLAIN: {"regret": 11.0}, AX_DEFAULT: {"regret": 12.0}},
    )
    assert verdict("branin-flip", s).startswith("MET")
    s[("branin-flip", AX_DEFAULT)]["regret"] = (9.0, 0.0)
    assert verdict("branin-flip", s).startswith("NOT MET")
    ext = EXTENSIONS["budget"]
    rows = {
        ext: {"regret": 10.0, "violation": 0.0},
        PLAIN: {"regret": 5.0, "violation": 0.3},  # cheaper, but misses the budget
        AX_DEFAULT: {"regret": 12.0, "violation": 0.0},
    }
    assert verdict("branin-budget", _summary("branin-budget", rows)).startswith("MET")
    rows[ext]["violation"] = 0.1
    assert verdict("branin-budget", _summary("branin-budget", rows)).startswith(
        "NOT MET"
    )


@pytest.mark.slow  # four Ax clients (~30 s)
def test_a_small_run_writes_its_table_and_reuses_its_jobs(tmp_path) -> None:
    """The delay problem (four workers on the simulated clock) for a few trials:
    every strategy, the table with its verdict; a second call runs nothing."""
    small = dict(problems=["hartmann3-delays"], seeds=1, trials=7, workers=1)
    jobs, _ = online.run_online(**small, out=tmp_path, show_progress=False)
    assert {j["strategy"] for j in jobs} == set(
        online.strategies_for("hartmann3-delays")
    )
    for job in jobs:
        assert len(job["regret"]) == 7 and min(job["regret"]) >= -1e-6
        assert all(t > 0 for t in job["completed_at"])
    table = (tmp_path / "summary.md").read_text()
    verdicts = [
        ln for ln in table.splitlines() if ln.startswith("- hartmann3-delays (")
    ]
    assert len(verdicts) == 1 and (
        "): MET (" in verdicts[0] or "NOT MET" in verdicts[0]
    )
    again, _ = online.run_online(**small, out=tmp_path, show_progress=False)
    assert [j["regret"] for j in again] == [j["regret"] for j in jobs]
    with pytest.raises(ValueError, match="problems"):
        online.run_online(problems=["nope"], out=None)


# ---------------------------------------------------------------- drift problems
def test_the_drift_problems_are_split_before_any_run() -> None:
    """At least 12 drift problems of every shape, 2 to 10 dimensions, noisy and
    noise-free, horizons 100-300; two disjoint halves, each with every shape."""
    from bandit_experiments.online_benchmark.drift import (
        DEV,
        DRIFT_PROBLEMS,
        SHAPES,
        VALIDATION,
    )

    assert len(DRIFT_PROBLEMS) >= 12 and not set(DEV) & set(VALIDATION)
    assert set(DEV) | set(VALIDATION) == set(DRIFT_PROBLEMS)
    for half in (DEV, VALIDATION):
        assert {DRIFT_PROBLEMS[n].shape for n in half} == set(SHAPES)
    dims = {p.dim for p in DRIFT_PROBLEMS.values()}
    assert min(dims) == 2 and max(dims) == 10
    assert {p.noise > 0 for p in DRIFT_PROBLEMS.values()} == {True, False}
    assert all(100 <= p.trials <= 300 for p in DRIFT_PROBLEMS.values())
    for p in DRIFT_PROBLEMS.values():  # only the controls stay put
        X = torch.rand(64, p.dim, dtype=torch.double)
        before, mid = p.value(X, 0, p.trials), p.value(X, p.trials // 2, p.trials)
        moved = not torch.allclose(before, mid)
        assert moved == (p.shape != "stationary"), p.name


def _drift_job(problem, strategy, seed, regret, detections=None) -> dict:
    T = len(regret)
    return {
        "problem": problem,
        "strategy": strategy,
        "seed": seed,
        "value": [0.0] * T,
        "regret": list(regret),
        "cost": None,
        "completed_at": None,
        "restarts": [] if detections is not None else None,
        "detections": detections,
        "uniform": [],
        "code": "x botorch_bandits abc online def",
    }


def test_the_drift_report_counts_wins_false_alarms_and_delays(tmp_path) -> None:
    """A constructed half: the restarts win on an abrupt problem (detected 2 trials
    after the change in one run, a false alarm in the other), forgetting costs 10 %
    on the stationary control: the verdicts and the calibration say so."""
    import json

    from bandit_experiments.online_benchmark import drift_report
    from bandit_experiments.online_benchmark.drift import DRIFT_PROBLEMS

    abrupt, still = "branin-flip", "hartmann6-still"
    Ta, Ts = DRIFT_PROBLEMS[abrupt].trials, DRIFT_PROBLEMS[still].trials
    change = DRIFT_PROBLEMS[abrupt].change_trial
    jobs = []
    for seed in (0, 1):
        for s, r in (
            ("IGP-UCB", 2.0),
            ("IGP-UCB[forgetting=True]", 2.0),
            ("IGP-UCB[model_window=25]", 1.5),
            ("Ax default", 3.0),
        ):
            jobs.append(_drift_job(abrupt, s, seed, [r] * Ta))
            jobs.append(
                _drift_job(
                    still,
                    s,
                    seed,
                    [1.0 if s != "IGP-UCB[forgetting=True]" else 1.1] * Ts,
                )
            )
        det = [change + 3] if seed == 0 else [10]  # round t decides trial t - 1
        jobs.append(_drift_job(abrupt, "IGP-UCB[restarts=True]", seed, [1.0] * Ta, det))
        jobs.append(_drift_job(still, "IGP-UCB[restarts=True]", seed, [1.0] * Ts, []))
    folder = tmp_path / "dev" / "jobs"
    folder.mkdir(parents=True)
    for i, j in enumerate(jobs):
        (folder / f"{i}.json").write_text(json.dumps(j))
    text = "\n".join(drift_report.report_lines(tmp_path))
    assert f"- {abrupt} (abrupt): `IGP-UCB[restarts=True]` 100 — MET" in text
    assert "`IGP-UCB[forgetting=True]` +10.0 % over plain — NOT MET" in text
    row = next(
        ln
        for ln in text.splitlines()
        if ln.startswith(f"| {abrupt} | abrupt | 2 | {Ta} | 0 | 2")
    )
    assert row
    calib = next(
        ln
        for ln in text.splitlines()
        if ln.startswith(f"| {abrupt} | abrupt | 2 | {Ta} |") and "of 2" in ln
    )
    # one false alarm in 2 runs before the change; one run detected, 2 trials late
    assert f"| {1000 / (2 * change):.2f} | 1 of 2 | 2.0 |" in calib
