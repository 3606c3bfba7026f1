"""REPRODUCTION.md is written by a command from the reproductions' CSVs: the command
runs on smoke CSVs, its numbers are the CSVs' numbers, and its statistics (per-run
exponent, paired differences, verdicts) are right on data with known answers."""

from __future__ import annotations

import csv
import math
import random

import pytest

from bandit_experiments.cli import main
from bandit_experiments.reproduction import report as R
from bandit_experiments.reproduction.output import read_calls
from bandit_experiments.reproduction.runner import (
    EXPERIMENTS,
    all_experiments,
    read_timings,
    reproduce,
    reproduce_all,
)

SUBSET = (
    "avanesov-fig1",
    "avanesov-fig3",
    "srinivas2010-fig5a",
    "shi2022-fig1",
)  # cheap ones; the slow test below runs every experiment


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    seen = []
    reproduce_all(
        out=out,
        smoke=True,
        workers=1,
        show_progress=False,
        names=SUBSET,
        report=lambda name, result: seen.append((name, result is None)),
    )
    assert seen == [(name, False) for name in SUBSET]
    return out


def _rows(text: str) -> list[list[str]]:
    table = [line for line in text.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in table]


def test_report_command_runs_on_smoke_csvs(smoke_dir, capsys) -> None:
    out = smoke_dir / "REPRODUCTION.md"
    assert (
        main(["reproduction-report", "--csv-dir", str(smoke_dir), "--out", str(out)])
        == 0
    )
    text = out.read_text()
    claims = [
        r for r in _rows(text) if len(r) == 7 and r[0] != "paper" and r[0] != "---"
    ]
    assert len(claims) == len(R.CLAIMS)
    verdicts = {(r[0], r[1], r[2]): r[5] for r in claims}
    ran = {c: verdicts[(c.paper, c.figure, c.claim)] for c in R.CLAIMS}
    for claim, v in ran.items():
        uses = claim.evaluate(R.load(smoke_dir))
        expected = "**not run**" if all(o.holds is None for o in uses) else None
        if expected:
            assert v == expected
        else:
            assert v in (
                "**reproduces**",
                "**does not reproduce**",
                "**depends on an unstated setting**",
            )
    # the experiments not in the subset are reported as not run, the others are not
    fig1 = next(r for r in claims if r[1] == "Fig. 1" and r[0] == "Avanesov")
    assert (
        "per-run fit" in fig1[4] and "not run" in fig1[4]
    )  # natural ran, log10 did not
    assert any(r[5] == "**not run**" for r in claims if r[0].startswith("Chowdhury"))
    # the suggested tuning (one table: both readings integrate over X) and, beside
    # it, the earlier rule's calibration (the natural reading only ran)
    assert text.count("| **yes** |") == 2
    tuning = text.split("## The detector, tuned as Avanesov suggests")[1]
    assert tuning.split("## ")[0].count("| **yes** |") == 1
    assert "Total:" in text


def test_report_numbers_are_the_csvs_numbers(smoke_dir) -> None:
    data = R.load(smoke_dir)
    exp, problem = "avanesov-fig3", "pw-K4-T60"
    with open(smoke_dir / f"{exp}.csv", newline="") as fh:
        last = {}
        for r in csv.DictReader(fh):
            if r["metric"] == "cumulative_regret":
                last[r["algorithm"]] = float(r["mean"])
    for algo, mean in last.items():
        assert data.final(exp, problem, algo)[0] == mean
    # the paired difference comes from the runs file: change one run, it changes
    before = R.paired(data, exp, problem, "GP-UCB-Oracle", "GP-UCB-CPD")
    runs = smoke_dir / f"{exp}-runs.csv"
    rows = list(csv.DictReader(open(runs, newline="")))
    for r in rows:
        if r["algorithm"] == "GP-UCB-Oracle" and r["seed"] == "0":
            r["value"] = str(float(r["value"]) + 10.0)
    tampered = smoke_dir.parent / "tampered"
    tampered.mkdir(exist_ok=True)
    for f in smoke_dir.glob(f"{exp}*.csv"):
        (tampered / f.name).write_text(f.read_text())
    with open(tampered / runs.name, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    after = R.paired(R.load(tampered), exp, problem, "GP-UCB-Oracle", "GP-UCB-CPD")
    assert after.mean == pytest.approx(before.mean + 10.0 / before.n)
    assert f"{after}" in R.render(R.load(tampered))


def test_resume_skips_finished_experiments(smoke_dir) -> None:
    seen = []
    reproduce_all(
        out=smoke_dir,
        smoke=True,
        resume=True,
        workers=1,
        show_progress=False,
        names=SUBSET[:2],
        report=lambda name, result: seen.append((name, result is None)),
    )
    assert seen == [(SUBSET[0], True), (SUBSET[1], True)]


def test_the_shared_pool_writes_what_each_experiments_own_pool_writes(
    tmp_path,
) -> None:
    """``reproduce all`` on two workers runs every experiment's jobs on one pool
    (issue 62: a worker idled at the end of each experiment); each experiment's
    CSVs are byte for byte those of its own run on a pool of two (both in
    one-thread workers), its timing is its jobs' seconds over the workers, and the
    call's wall time is kept."""
    names = ("avanesov-fig3", "srinivas2010-fig5a", "shi2022-fig1")
    seen = []
    wall = reproduce_all(
        out=tmp_path / "shared",
        smoke=True,
        workers=2,
        show_progress=False,
        names=names,
        report=lambda name, result: seen.append((name, result is None)),
    )
    assert sorted(seen) == sorted((name, False) for name in names)
    for name in names:
        reproduce(
            name, smoke=True, out=tmp_path / "own", workers=2, show_progress=False
        )
        for suffix in (".csv", "-runs.csv"):
            own = (tmp_path / "own" / f"{name}{suffix}").read_bytes()
            assert (tmp_path / "shared" / f"{name}{suffix}").read_bytes() == own
    # the earlier rule's calibration ran on the shared pool too
    assert (tmp_path / "shared" / "avanesov-calibration-natural.csv").exists()
    timings = read_timings(tmp_path / "shared")
    for name in names:
        row = timings[name]
        assert row["workers"] == "2"
        assert float(row["seconds"]) == pytest.approx(
            float(row["job_seconds"]) / 2, abs=0.06
        )
    assert read_timings(tmp_path / "own")["shi2022-fig1"]["workers"] == "2"
    (call,) = read_calls(tmp_path / "shared")
    assert call["workers"] == "2" and call["experiments"] == "3"
    assert float(call["seconds"]) == pytest.approx(wall, abs=0.06)
    text = R.render(R.load(tmp_path / "shared"))
    assert "in 1 call(s) on 2 worker processes" in text
    # a resumed call that runs nothing adds no row
    reproduce_all(
        out=tmp_path / "shared",
        smoke=True,
        resume=True,
        workers=2,
        show_progress=False,
        names=names,
    )
    assert len(read_calls(tmp_path / "shared")) == 1


def test_all_covers_every_experiment_once() -> None:
    names = all_experiments()
    assert len(names) == len(set(names))
    assert {"shi2022-fig3", "shi2022-fig5"}.isdisjoint(names)
    for fig in ("avanesov-fig1", "avanesov-fig2", "avanesov-fig3"):
        assert fig in names and f"{fig}-log10" in names
        assert EXPERIMENTS[f"{fig}-log10"].options == {"log_base": 10.0}
    with pytest.raises(ValueError, match="names"):
        reproduce_all(names=["no-such-figure"], out="unused")


def test_per_run_exponent_recovers_a_known_power_law() -> None:
    rng = random.Random(0)
    xs = [900.0, 1275.0, 1650.0, 2025.0, 2400.0]
    runs = [[0.0] * 64 for _ in xs]
    for s in range(64):
        c_s = 0.74 + rng.gauss(0.0, 0.05)  # each run its own exponent
        scale = math.exp(rng.gauss(0.0, 0.3))
        for i, x in enumerate(xs):
            runs[i][s] = scale * 1.86 * x**c_s * math.exp(rng.gauss(0.0, 0.02))
    fit = R.exponent_per_run(xs, runs)
    assert fit.low < 0.74 < fit.high
    assert fit.high - fit.low < 0.05
    means = [sum(r) / len(r) for r in runs]
    assert abs(R.exponent_of_means(xs, means).value - 0.74) < 0.05
    # a sweep with a different exponent is told apart
    steeper = [
        [v * (x / 900.0) ** 0.2 for v in r] for x, r in zip(xs, runs, strict=True)
    ]
    assert R.exponent_per_run(xs, steeper).low > 0.84


def test_paired_difference_and_verdicts() -> None:
    data = R.Data(folder=None)
    data.runs[("e", "p", "a")] = {0: 1.0, 1: 2.0, 2: 3.0}
    data.runs[("e", "p", "b")] = {0: 2.0, 1: 3.5, 2: 4.0}
    d = R.paired(data, "e", "p", "a", "b")
    assert d.mean == pytest.approx(-3.5 / 3.0)
    diffs = [-1.0, -1.5, -1.0]
    sd = math.sqrt(sum((x - d.mean) ** 2 for x in diffs) / 2)
    assert d.se == pytest.approx(sd / math.sqrt(3))
    assert d.a_better and not d.b_better
    held, failed, missing = (
        R.Outcome("x", "", True),
        R.Outcome("y", "", False),
        R.Outcome("z", "", None),
    )
    assert R.verdict([held, held]) == "reproduces"
    assert R.verdict([held, failed]) == "depends on an unstated setting"
    assert R.verdict([failed, missing]) == "does not reproduce"
    assert R.verdict([missing]) == "not run"
    # two problems under one reading: the reading holds only if both do
    same_reading = [R.Outcome("r", "", True), R.Outcome("r", "", False)]
    assert R.verdict(same_reading) == "does not reproduce"
    assert R.verdict([*same_reading, R.Outcome("s", "", True)]) == (
        "depends on an unstated setting"
    )


@pytest.mark.slow
def test_report_on_every_smoke_experiment_leaves_no_claim_unrun(tmp_path) -> None:
    reproduce_all(out=tmp_path, smoke=True, show_progress=False)
    text = R.render(R.load(tmp_path))
    claims = [r for r in _rows(text) if len(r) == 7 and r[0] not in ("paper", "---")]
    assert len(claims) == len(R.CLAIMS)
    assert all(r[5] != "**not run**" and "not run" not in r[4] for r in claims)
    assert text.count("| **yes** |") == 3  # the tuning, one calibration per reading
