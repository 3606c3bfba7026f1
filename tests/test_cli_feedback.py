"""What the long commands tell a user while they run and when they end: the progress
lines (or bar) on stderr, the ``--smoke`` sizes, ax-bench's one-seed tables, and
``reproduce``'s unknown names, experiment list and files written."""

from __future__ import annotations

import io
import os
import types

import pytest
import torch

from bandit_experiments.cli import main, reproduction
from bandit_experiments.studies import engine
from bandit_experiments.studies import fitted_beta as fb
from botorch_bandits.cli import common


def _clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """A clock the progress lines read: set ``now[0]`` to move it."""
    now = [0.0]
    fake = types.SimpleNamespace(perf_counter=lambda: now[0])
    monkeypatch.setattr(common, "time", fake)
    return now


def test_progress_lines_off_a_terminal(monkeypatch, capsys) -> None:
    """A line when the phase starts; after 3 s one with the time left, then one per
    quarter of the work; nothing with show=False."""
    now = _clock(monkeypatch)
    with common.Progress("cmd", "phase of 8 things", "thing") as progress:
        progress(0, 8)
        now[0] = 1.0
        progress(1, 8)  # before 3 s: quiet
        now[0] = 4.0
        progress(2, 8)  # a quarter, 4 s: 6 left at this rate (2 per 4 s)
        progress(3, 8)  # the same quarter: quiet
        now[0] = 8.0
        progress.update()  # 4 of 8
        progress(8, 8)  # done: the command's own output follows
    assert capsys.readouterr().err.splitlines() == [
        "cmd: phase of 8 things...",
        "cmd: 2 of 8 things in 4 s, about 12 s left",
        "cmd: 4 of 8 things in 8 s, about 8 s left",
    ]
    with common.Progress("cmd", "quiet", "thing", show=False) as progress:
        now[0] = 100.0
        progress(1, 8)
    assert capsys.readouterr().err == ""


def test_progress_is_a_bar_on_a_terminal(monkeypatch) -> None:
    pytest.importorskip("tqdm")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(common.sys, "stderr", terminal)
    with common.Progress("cmd", "phase", "thing") as progress:
        assert progress.bar is not None
        progress(0, 4)
        progress.update(3)
        assert (progress.bar.n, progress.bar.total) == (3, 4)
    assert "phase" in terminal.getvalue() and "phase..." not in terminal.getvalue()


def test_the_engine_benchmarks_report_their_work() -> None:
    calls: list[tuple[int, int]] = []
    engine.drift(30, 2, progress=lambda d, t: calls.append((d, t)))
    assert calls[0] == (0, 30) and calls[-1] == (30, 30)
    calls.clear()
    engine.step_times(
        (30,),
        plain_repeats=1,
        engine_steps=10,
        batch_seeds=2,
        progress=lambda d, t: calls.append((d, t)),
    )
    done = [d for d, _ in calls]
    assert calls[0] == (0, (1 + 2) * (25 - 1 + 10)) and done[-1] == calls[-1][1]
    assert done == sorted(done)


def test_benchmark_engine_smoke(capsys) -> None:
    assert main(["benchmark-engine", "--smoke"]) == 0
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert out[0].startswith("drift after 500 updates x 5 seeds")
    assert [line[:9] for line in out[1:]] == ["t =   100", "t =   300"]
    assert captured.err.splitlines()[0] == (
        "benchmark-engine: drift over 500 updates x 5 seeds..."
    )
    assert (
        "benchmark-engine: per-step times of the plain BoTorch loop and the engine "
        "at t = 100, 300..." in captured.err
    )


def _fake_fit(problem: str, n: int, seed: int) -> fb.FitRow:
    return fb.FitRow(
        problem, n, seed, *[1.0] * (len(fb.FitRow.__dataclass_fields__) - 3)
    )


def _fake_job(problem, strategy, seed, trials, node_kwargs=None) -> dict:
    ones = [1.0] * trials
    return {
        "problem": problem,
        "strategy": strategy,
        "seed": seed,
        "cumulative_regret": ones,
        "simple_regret": ones,
        "gen_seconds": ones,
        "repeats": 0,
        "on_bound": 0.0,
    }


def test_beta_guide_smoke_sizes_and_progress(monkeypatch, tmp_path, capsys) -> None:
    """--smoke: fits at n = 10 and 30, one seed; 1 seed x 6 trials of every loop; a
    progress line per phase; one-seed loop rows without a ±. (Fits and Ax loops
    faked: the sizes and the lines are the point; test_fitted_beta runs them.)"""
    monkeypatch.setattr(fb, "fit_row", _fake_fit)
    monkeypatch.setattr(fb, "run_job", _fake_job)
    args = ["beta-guide", "--smoke", "--workers", "1", "--out", str(tmp_path)]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "beta-guide: fitting 4 problems x n = 10, 30 x 1 seed...",
        "beta-guide: 10 ax.Client loops of 6 trials (2 problems x 5 strategies x 1 "
        "seed) in this process...",
    ]
    fits = (tmp_path / "fits.csv").read_text().splitlines()
    assert len(fits) == 1 + 4 * 2
    assert {line.split(",")[1] for line in fits[1:]} == {"10", "30"}
    loops = [line for line in captured.out.splitlines() if "| IGP-UCB, " in line]
    assert len(loops) == 2 * 4 and "±" not in "".join(loops)
    assert "1 seed x 6 trials" in captured.out
    assert (tmp_path / "loop.csv").exists()


def test_smoke_sizes_reach_the_benchmarks(monkeypatch, capsys) -> None:
    """ts-variance, cpd-detector and batch-tradeoff --smoke (the benchmarks faked)."""
    from bandit_experiments.reproduction import detector
    from bandit_experiments.studies import batch, ts_variance

    seen: dict[str, list] = {}

    def fake(name, value):
        return lambda *a, **kw: seen.setdefault(name, []).append((a, kw)) or value

    monkeypatch.setattr(ts_variance, "ts_variance_ratios", fake("ts", torch.ones(5)))
    monkeypatch.setattr(detector, "calibrate_detector", fake("cpd", []))
    monkeypatch.setattr(batch, "batch_tradeoff", fake("batch", None))
    monkeypatch.setattr(batch, "report", lambda result: [])
    for command in ("ts-variance", "cpd-detector", "batch-tradeoff"):
        assert main([command, "--smoke"]) == 0
    assert [a[2:] for a, _ in seen["ts"]] == [(100, 512)] * 6
    assert seen["cpd"][0][1]["runs"] == 8
    (problem, _, horizon), _ = seen["batch"][0]
    assert (problem.num_seeds, horizon) == (2, 20)
    assert "2 seeds, 20 evaluations" in capsys.readouterr().out


def test_smoke_runs_of_the_loops_report_each_run(monkeypatch, tmp_path, capsys) -> None:
    """botorch-loop, ts-where and ax-check --smoke (the runs faked): their sizes, and
    a progress line for the runs of the loops."""
    from bandit_experiments.studies import botorch_loop, ts_where

    specs: list[dict] = []
    monkeypatch.setattr(botorch_loop, "run_loop", lambda **s: specs.append(s) or s)
    monkeypatch.setattr(botorch_loop, "summarize_loops", lambda jobs: [])
    monkeypatch.setattr(ts_where, "run_kept", lambda **s: specs.append(s) or s)
    monkeypatch.setattr(ts_where, "summarize", lambda jobs, horizons: [])
    assert main(["botorch-loop", "--smoke"]) == 0
    assert {(s["seed"], s["trials"]) for s in specs} == {(0, 7)} and len(specs) == 20
    specs.clear()
    assert main(["ts-where", "--smoke", "--out", str(tmp_path)]) == 0
    assert {(s["seed"], s["evaluations"]) for s in specs} == {(0, 8)}
    assert len(specs) == 3 * 3 * 2  # problems x batch sizes x algorithms
    captured = capsys.readouterr()
    assert "botorch-loop: 20 runs of 7 trials in this process..." in captured.err
    assert "ts-where: 18 runs of 8 evaluations in this process..." in captured.err
    assert "| cumulative @6 | simple @6 | cumulative @8 |" in captured.out
    pytest.importorskip("ax")
    from bandit_experiments.ax_benchmark import checks

    calls: list[tuple] = []
    monkeypatch.setattr(checks, "run_check", lambda *a, **kw: calls.append(a) or [])
    assert main(["ax-check", "piecewise", "--smoke"]) == 0
    assert calls == [("piecewise", 2, 30, 2)]
    assert "piecewise: 2 seeds x 30 trials" in capsys.readouterr().out


def _bench(seeds: int, trials: int):
    from bandit_experiments.ax_benchmark.results import BenchResult, summarize

    jobs = [
        {
            "problem": p,
            "strategy": s,
            "seed": k,
            "cumulative_regret": [
                float(t + k + (s == "IGP-UCB")) for t in range(trials)
            ],
            "simple_regret": [1.0 / (t + 1 + k) for t in range(trials)],
            "gen_seconds": [0.01 * (t + 1) for t in range(trials)],
            "repeats": 0,
            "on_bound": 0.1,
        }
        for p in ("branin", "hartmann6")
        for s in ("IGP-UCB", "Ax default")
        for k in range(seeds)
    ]
    result = BenchResult(
        jobs, ("branin", "hartmann6"), ("IGP-UCB", "Ax default"), seeds, trials, 1.0
    )
    result.summary = summarize(result)
    return result


def test_ax_bench_one_seed_tables_show_no_standard_error() -> None:
    pytest.importorskip("ax")
    result = _bench(seeds=1, trials=8)
    table = result.table_lines()
    assert "±" not in "".join(table) and "n/a" not in "".join(table)
    assert "gen s t=8" in table[0] and "gen s t=10" not in table[0]
    comparison = "\n".join(result.comparison_lines("IGP-UCB"))
    assert "within one s.e." not in comparison and "±" not in comparison
    # one seed: the numbers of both regrets, no yes/no verdict (issue 52)
    assert comparison.count("(1 seed: no s.e.)") == 4
    assert "simple regret: 1 seed: no s.e." in comparison
    assert "cumulative regret: 1 seed: no s.e." in comparison
    assert "below Ax default" not in comparison and "yes" not in comparison
    markdown = "\n".join(result.markdown_lines())
    assert "±" not in markdown and markdown.startswith("1 seed (no s.e.) x 8 trials")


def test_ax_bench_tables_with_seeds_and_the_trial_ten_column() -> None:
    pytest.importorskip("ax")
    result = _bench(seeds=3, trials=12)
    table = result.table_lines()
    assert "gen s t=10" in table[0] and "gen s t=12" in table[0]
    assert all(line.count("±") == 2 for line in table[1:])
    assert all("0.100" in line for line in table[1:])  # trial 10's median seconds
    assert "within one s.e. or better on" in "\n".join(result.comparison_lines())
    # 10 trials: trial 10 is the last, one column
    assert _bench(seeds=2, trials=10).table_lines()[0].count("gen s t=10") == 1


def test_reproduce_unknown_experiment_is_one_line(capsys) -> None:
    assert main(["reproduce", "chowdhury2017-fig9"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "usage" not in err
    assert err.startswith(
        "python -m bandit_experiments reproduce: error: unknown experiment 'chowdhury2017-fig9' "
        "(did you mean chowdhury2017-fig1, chowdhury2017-fig2 or chowdhury2017-fig3?)"
    )
    assert all(name in err for name in reproduction.EXPERIMENT_TITLES)
    assert main(["reproduce"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "needs an experiment name" in err


def test_reproduce_help_lists_the_experiments(capsys) -> None:
    from bandit_experiments.reproduction.experiments import EXPERIMENTS

    # the CLI's copy (kept free of torch for --help) is the experiments' own list
    titles = {name: e.title for name, e in EXPERIMENTS.items()}
    assert list(reproduction.EXPERIMENT_TITLES.items()) == list(titles.items())
    with pytest.raises(SystemExit) as stop:
        main(["reproduce", "--help"])
    assert stop.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    for name in [*EXPERIMENTS, "all"]:
        assert any(line.startswith(f"  {name} ") for line in lines), name


def test_a_command_usage_error_shows_that_command_usage(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit):
        main(["ts-where", "--batches", "0", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m bandit_experiments ts-where ")
    assert "python -m bandit_experiments ts-where: error: --batches must be >= 1" in err


def test_reproduce_names_every_file_it_writes(tmp_path, capsys) -> None:
    """A piecewise smoke run: the CSV, the runs CSV, the plot, timings.csv and the
    detector's tuning table, every file of the folder, named in the last line."""
    pytest.importorskip("matplotlib")
    argv = ["reproduce", "avanesov-fig3", "--smoke", "--workers", "1"]
    assert main([*argv, "--no-progress", "--out", str(tmp_path)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("wrote ")
    named = last.removeprefix("wrote ").replace(" and ", ", ").split(", ")
    assert sorted(os.path.basename(p) for p in named) == sorted(os.listdir(tmp_path))
    assert {"avanesov-fig3-runs.csv", "timings.csv"} <= set(os.listdir(tmp_path))
