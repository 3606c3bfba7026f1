"""``python -m bandit_experiments ax-bench``: the problems' stated optima, and a tiny run through
the command's entry point (CSV columns, regrets, PNGs). The benchmark's numbers are
its own business (a benchmark, not a test)."""

from __future__ import annotations

import csv
import itertools
import math
from functools import partial

import pytest

pytest.importorskip("ax")
pytest.importorskip("matplotlib")
pytest.importorskip("tqdm")

from bandit_experiments.ax_benchmark import tuning
from bandit_experiments.ax_benchmark.runner import (
    CSV_COLUMNS,
    HALVES,
    PROBLEMS,
    SUMMARY_COLUMNS,
    Choice,
    Range,
    ax_parameters,
    branin,
    repeated_configurations,
    run_job,
    share_on_bound,
)
from bandit_experiments.ax_benchmark.strategies import strategy_fingerprint
from bandit_experiments.cli import main
from bandit_experiments.cli.ax_commands import SMOKE_PROBLEMS, SMOKE_STRATEGIES


@pytest.mark.parametrize("name", [n for n, p in PROBLEMS.items() if p.optimizer])
def test_stated_optimum_is_attained_and_not_above_the_true_one(name):
    problem = PROBLEMS[name]
    value = problem(problem.optimizer)
    assert value == pytest.approx(problem.optimum, abs=1e-4)
    assert value >= problem.optimum  # so every regret is >= 0


def test_optimizers_lie_in_the_search_space():
    from ax import Client

    for problem in PROBLEMS.values():
        if problem.optimizer is None:  # a tuning task: no known minimizer
            continue
        client = Client()
        client.configure_experiment(
            parameters=ax_parameters(problem),
            parameter_constraints=list(problem.constraints) or None,
        )
        space = client._experiment.search_space
        assert space.check_membership(dict(problem.optimizer)), problem.name


def test_mixed_and_log_problems_by_hand():
    mixed = PROBLEMS["mixed"]
    base = {"x1": 1.0, "x2": 3.0}
    assert mixed({**base, "k": 0, "c": "c"}) == pytest.approx(
        branin(1.0, 3.0) + 2.0 + 3.0
    )
    assert mixed({**base, "k": 2, "c": "b"}) == pytest.approx(branin(1.0, 3.0) + 1.5)
    log = PROBLEMS["branin-log"]
    assert log({"lr": 1e-4, "x2": 3.0}) == pytest.approx(branin(-5.0, 3.0))
    assert log({"lr": 1.0, "x2": 3.0}) == pytest.approx(branin(10.0, 3.0))
    assert log({"lr": 1e-2, "x2": 3.0}) == pytest.approx(branin(2.5, 3.0))
    embedded = PROBLEMS["hartmann6-in-20d"]
    point = dict(embedded.optimizer)
    point.update({f"x{i}": 0.9 for i in range(6, 20)})  # the inert parameters
    assert embedded(point) == pytest.approx(embedded(embedded.optimizer))


def test_the_halves_split_every_problem_and_each_spans_the_kinds():
    dev, val = set(HALVES["development"]), set(HALVES["validation"])
    test = set(HALVES["test"])
    assert not dev & val and not (dev | val) & test
    assert dev | val | test == set(PROBLEMS) and len(PROBLEMS) >= 16
    for half in (dev, val):
        probs = [PROBLEMS[n] for n in half]
        dims = [len(p.parameters) for p in probs]
        assert min(dims) == 2 and max(dims) >= 20
        assert any(p.noise_sd > 0 for p in probs)
        assert any(p.constraints for p in probs)
        assert any(any(isinstance(q, Choice) for q in p.parameters) for p in probs)
        assert any(
            any(isinstance(q, Range) and q.kind == "int" for q in p.parameters)
            for p in probs
        )
        assert any(p.optimizer is None for p in probs)  # a scikit-learn tuning task


def test_the_test_half_is_fresh_and_what_issue_51_asks_for():
    """At least 8 problems, 4 of them in 8-40 dimensions, a noisy one, a tuning
    task, a rotated embedding; none with its minimizer at the box's centre (the
    strategies may start there), and none run by default."""
    from bandit_experiments.ax_benchmark.runner import _check_bench

    probs = [PROBLEMS[n] for n in HALVES["test"]]
    dims = [len(p.parameters) for p in probs]
    assert len(probs) >= 8 and sum(8 <= d <= 40 for d in dims) >= 4
    assert any(p.noise_sd > 0 for p in probs)
    assert any(p.name.startswith("tune-") for p in probs)
    assert any("rotated" in p.name for p in probs)
    for p in probs:
        if p.optimizer is None:
            continue
        centre = {q.name: (q.low + q.high) / 2 for q in p.parameters}
        assert p(centre) > p.optimum + 1e-3, p.name
    names, _ = _check_bench(None, None, None, 1, 1, None)
    assert not set(names) & set(HALVES["test"])
    assert _check_bench(None, "test", None, 1, 1, None)[0] == HALVES["test"]


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("tune-svm-digits", {"C": 10.0, "gamma": 1e-3}),
        (
            "tune-hgb-breast-cancer",
            {
                "learning_rate": 0.1,
                "max_leaf_nodes": 31,
                "min_samples_leaf": 20,
                "l2_regularization": 1e-3,
            },
        ),
        ("tune-kernel-ridge-diabetes", {"alpha": 0.1, "gamma": 0.01, "kernel": "rbf"}),
        (
            "tune-rf-wine",
            {
                "n_estimators": 20,
                "max_depth": 4,
                "min_samples_leaf": 2,
                "max_features": 0.5,
            },
        ),
    ],
)
def test_tuning_tasks_are_errors_and_cached(name, params, tmp_path, monkeypatch):
    monkeypatch.setenv(tuning.CACHE_ENV, str(tmp_path))
    problem = PROBLEMS[name]
    value = problem(params)
    assert problem.optimum == 0.0 <= value < 1.0  # an error rate / a relative MSE
    # the second call reads the cache: a value planted there is what comes back
    import sqlite3

    with sqlite3.connect(tuning.cache_path()) as db:
        db.execute("UPDATE evaluations SET value = 0.5")
    assert problem(params) == 0.5
    other = {**params, next(iter(params)): params[next(iter(params))] * 2}
    assert problem(other) != 0.5  # another configuration is computed


def test_repeats_and_bound_shares_by_hand():
    configs = [{"x": 0.0, "y": 1.0}, {"x": 0.5, "y": 1.0}, {"x": 0.0, "y": 1.0}]
    assert repeated_configurations(configs) == 1
    assert repeated_configurations(configs[:2]) == 0
    mixed = PROBLEMS["mixed"]  # x1 in [-5, 10], x2 in [0, 15], k an integer, c
    points = [
        {"x1": -5.0, "x2": 3.0, "k": 0, "c": "a"},
        {"x1": 1.0, "x2": 15.0, "k": 4, "c": "b"},
    ]
    assert share_on_bound(mixed, points) == 0.5  # 2 of 4 float coordinates
    assert share_on_bound(PROBLEMS["categorical-6"], [{}]) == 0.0


def test_a_kept_job_is_reused_only_under_the_same_fingerprint(tmp_path):
    from bandit_experiments.ax_benchmark.runner import JobStore

    store = JobStore(tmp_path)
    job = {
        "problem": "branin",
        "strategy": "IGP-UCB",
        "seed": 0,
        "value": [1.0, 2.0],
        "code": strategy_fingerprint("IGP-UCB"),
    }
    store.save(job)
    spec = {"problem": "branin", "strategy": "IGP-UCB", "seed": 0, "trials": 2}
    assert store.load([spec]) == [job]
    store.save({**job, "code": "an older version of the package"})
    assert store.load([spec]) == []
    assert strategy_fingerprint("IGP-UCB") != strategy_fingerprint("Ax default")


def test_noise_is_seeded_by_seed_and_trial():
    noisy = PROBLEMS["hartmann6-noisy"]
    x = noisy.optimizer
    assert noisy.observe(x, 0, 3) == noisy.observe(x, 0, 3)
    assert noisy.observe(x, 0, 3) != noisy.observe(x, 1, 3)
    assert noisy.observe(x, 0, 3) != noisy.observe(x, 0, 4)
    assert PROBLEMS["hartmann6"].observe(x, 0, 3) == PROBLEMS["hartmann6"](x)


def test_bad_names_are_named(tmp_path, capsys):
    code = main(["ax-bench", "--problems", "branin,nope", "--out", str(tmp_path)])
    assert code == 2
    assert "`problems`" in capsys.readouterr().err
    code = main(["ax-bench", "--strategies", "UCB", "--out", str(tmp_path)])
    assert code == 2
    assert "`strategies`" in capsys.readouterr().err


def test_tiny_run_through_the_command(tmp_path, capsys):
    out = tmp_path / "bench"
    problems = ("branin", "mixed")
    strategies = ("Ax default", "IGP-UCB (theory)")
    trials = 5
    code = main(
        [
            "ax-bench",
            "--problems",
            ",".join(problems),
            "--strategies",
            ",".join(strategies),
            "--seeds",
            "1",
            "--trials",
            str(trials),
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "Ax default" in printed and "IGP-UCB (theory)" in printed
    with open(out / "ax_bench.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == CSV_COLUMNS
        rows = list(reader)
    assert len(rows) == len(problems) * len(strategies) * trials
    for p in problems:
        optimum = PROBLEMS[p].optimum
        for s in strategies:
            job = [r for r in rows if r["problem"] == p and r["strategy"] == s]
            assert [int(r["trial"]) for r in job] == list(range(1, trials + 1))
            cum = [float(r["cumulative_regret"]) for r in job]
            assert all(b >= a for a, b in itertools.pairwise(cum))
            for r in job:
                best, simple = float(r["best_value"]), float(r["simple_regret"])
                assert float(r["cumulative_regret"]) >= 0
                assert simple >= 0
                # minimized: r_t = best value - f* (optimum - best, maximizing -f)
                assert simple == pytest.approx(best - optimum, abs=1e-12)
                assert float(r["value"]) == float(r["noise_free_value"])  # no noise
                assert float(r["gen_seconds"]) >= 0
            assert cum[0] == pytest.approx(float(job[0]["value"]) - optimum)
    with open(out / "summary.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == SUMMARY_COLUMNS
        summary = list(reader)
    assert len(summary) == len(problems) * len(strategies)
    assert all(r["gen_seconds_median_t10"] == "" for r in summary)  # 5 < 10 trials
    for p in problems:
        assert (out / f"{p}.png").stat().st_size > 0
    # the Markdown the docs paste: a row per summary row, with its figures (one seed:
    # the means alone), and the tally of every bandit strategy against Ax's default
    # under each half
    markdown = (out / "summary.md").read_text().splitlines()
    assert markdown[0].startswith("1 seed (no s.e.) x 5 trials")
    for r in summary:
        mean = float(r["cumulative_regret_mean"])
        row = f"| {r['problem']} | {r['strategy']} | {mean:.4g} | "
        assert sum(line.startswith(row) for line in markdown) == 1, row
    assert "±" not in "".join(markdown) and "±" not in printed
    for s in strategies:
        if s != "Ax default":
            assert any(
                line.startswith(f"- {s}: cumulative regret") for line in markdown
            )


def test_a_job_is_a_function_of_its_seed():
    first = run_job("hartmann6-noisy", "IGP-UCB (theory)", seed=1, trials=5)
    again = run_job("hartmann6-noisy", "IGP-UCB (theory)", seed=1, trials=5)
    for key in ("value", "noise_free_value", "cumulative_regret", "simple_regret"):
        assert first[key] == again[key]
    assert all(math.isfinite(v) for v in first["value"])
    assert first["value"] != first["noise_free_value"]  # noisy


def test_resume_reuses_the_kept_jobs(tmp_path, capsys):
    """Each finished job is kept in OUT/jobs; ``--resume`` loads it instead of
    running it again (its generation seconds, which a rerun would change, stay)."""
    args = [
        "ax-bench",
        "--problems",
        "branin",
        "--strategies",
        "IGP-UCB (theory)",
        "--seeds",
        "2",
        "--trials",
        "4",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        str(tmp_path),
    ]
    assert main(args) == 0

    def rows() -> list[dict]:
        with open(tmp_path / "ax_bench.csv", newline="") as fh:
            return list(csv.DictReader(fh))

    first = rows()
    kept = sorted(p.name for p in (tmp_path / "jobs").iterdir())
    assert kept == [
        "branin__IGP-UCB__theory___seed0__T4.json",
        "branin__IGP-UCB__theory___seed1__T4.json",
    ]
    (tmp_path / "jobs" / kept[1]).unlink()  # as if killed before that job ended
    assert main([*args, "--resume"]) == 0
    again = rows()
    assert len(again) == len(first) == 8
    # seed 0 reused as kept (its timings too); seed 1 run again: same trials
    assert [r for r in again if r["seed"] == "0"] == [
        r for r in first if r["seed"] == "0"
    ]
    strip = [{k: v for k, v in r.items() if k != "gen_seconds"} for r in again]
    assert strip == [{k: v for k, v in r.items() if k != "gen_seconds"} for r in first]
    capsys.readouterr()


# the growth command's table and its kept cells are the default run's
# test_the_growth_command_prints_kept_cells_with_their_ratio_to_plain
@pytest.mark.slow
def test_generation_growth_times_one_decision_after_n_trials():
    from bandit_experiments.ax_benchmark.runner import generation_growth

    rows = generation_growth(
        "branin", sizes=(6, 9), strategies=("IGP-UCB (theory)",), repeats=1
    )
    assert [r["completed"] for r in rows] == [6, 9]
    assert all(r["seconds_median"] > 0 and r["peak_rss_mb"] > 0 for r in rows)
    # the bandit node's own part of each call, and Ax's rest
    for r in rows:
        (inside,) = r["node_seconds"]
        assert 0 < inside < r["seconds"][0]
        assert r["ax_seconds_median"] == r["seconds"][0] - inside
    # past the limit (the calls at 7, grown as from 6 to 7) a size is skipped, and
    # the larger ones after it
    rows = generation_growth(
        "branin",
        sizes=(6, 7, 10**4, 10**5),
        strategies=("IGP-UCB (theory)",),
        repeats=1,
        limit=1.0,
        isolate=False,
    )
    assert [r.get("skipped", False) for r in rows] == [False, False, True, True]
    assert [r["completed"] for r in rows][2:] == [10**4, 10**5]
    # each estimate from the last two sizes that ran
    assert 1.0 < rows[2]["estimate"] < rows[3]["estimate"]


def test_generation_growth_on_a_budget_problem_with_option_labels():
    """A budget problem of the online benchmark: the costs reach the long-term
    constraints (their GPs fitted, their fits recorded), labels carry options."""
    from bandit_experiments.ax_benchmark.runner import generation_growth
    from bandit_experiments.online_benchmark.budget import budget_growth_setup

    label = "IGP-UCB[long_term_constraints=True;refit_after=4]"
    (row,) = generation_growth(
        "hartmann3-tight",
        sizes=(8,),
        strategies=(label,),
        repeats=2,
        isolate=False,
        setup=budget_growth_setup,
    )
    assert row["strategy"] == label and row["completed"] == 8
    assert len(row["seconds"]) == 2 and all(t > 0 for t in row["seconds"])
    client, data, points = budget_growth_setup("hartmann3-tight", label, 0, 8)
    assert len(points) == 3 and set(data(points[0], 0)) == {"f", "c1"}
    # the long-term label is told of the cost (an outcome constraint), plain is not
    assert len(client._experiment.optimization_config.outcome_constraints) == 1
    plain, _, _ = budget_growth_setup("hartmann3-tight", "IGP-UCB", 0, 8)
    assert plain._experiment.optimization_config.outcome_constraints == []


def _failing_setup(problem, label, seed, n):
    """A growth setup whose cells at 9 trials raise (a module-level function)."""
    from bandit_experiments.ax_benchmark.runner import _growth_setup

    if n == 9:
        raise RuntimeError("no factorization at 9")
    return _growth_setup(problem, label, seed, n)


def test_a_failed_growth_cell_is_its_row_and_a_kept_run_resumes():
    """A cell that raises is a row naming the error, and the other cells still run;
    each row goes to ``on_row`` as it is made, and a run given those rows (``done``)
    reuses them and runs again only the failed cell."""
    from bandit_experiments.ax_benchmark.runner import generation_growth

    grow = partial(
        generation_growth,
        "branin",
        sizes=(6, 9, 7),
        strategies=("IGP-UCB (theory)",),
        repeats=1,
        isolate=False,
    )
    kept: list[dict] = []
    rows = grow(setup=_failing_setup, on_row=kept.append)
    assert [r["completed"] for r in rows] == [6, 9, 7]
    assert rows[1]["failed"] == "RuntimeError: no factorization at 9"
    assert rows[0]["seconds_median"] > 0 and rows[2]["seconds_median"] > 0
    assert kept == rows
    again: list[dict] = []
    rerun = grow(done=kept, on_row=again.append)
    assert [r["completed"] for r in again] == [9]  # only the failed cell ran
    assert "failed" not in rerun[1] and rerun[1]["seconds_median"] > 0
    assert rerun[0] == rows[0] and rerun[2] == rows[2]
    # rows of another seed or number of repeats are not this run's
    other = grow(sizes=(6,), seed=1, done=kept)
    assert other[0]["seed"] == 1 and other[0] != rows[0]


def test_the_growth_command_prints_kept_cells_with_their_ratio_to_plain(
    tmp_path, capsys
):
    """``ax-bench --growth --resume`` reads the cells a run kept (no cell runs when
    every one is there), prints each strategy's median with its ratio to plain
    IGP-UCB's at the same n, and a kept failed cell is run again."""
    import json

    rows = [
        {
            "problem": "branin",
            "strategy": label,
            "completed": n,
            "repeats": 3,
            "seed": 0,
            "seconds_median": base * n,
            "seconds": [base * n] * 3,
            "peak_rss_mb": 400.0,
        }
        for label, base in (("IGP-UCB", 0.01), ("IGP-UCB[restarts=True]", 0.03))
        for n in (6, 8)
    ]
    kept = tmp_path / "growth-branin.jsonl"
    kept.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["ax-bench", "--growth", "6,8", "--problems", "branin"]
    args += ["--strategies", "IGP-UCB,IGP-UCB[restarts=True]", "--out", str(tmp_path)]
    assert main([*args, "--resume"]) == 0
    out = capsys.readouterr().out
    (ratio,) = [line for line in out.splitlines() if "x IGP-UCB" in line.split("  ")]
    assert ratio.split()[-2:] == ["3.00x", "3.00x"]
    assert len(kept.read_text().splitlines()) == 4  # nothing ran again
    # a limit that is not > 0 is refused before the kept cells are touched
    assert main([*args, "--growth-limit", "0"]) == 2
    assert "--growth-limit" in capsys.readouterr().err
    assert len(kept.read_text().splitlines()) == 4
    # a failed cell is run again (here: it then succeeds) and kept
    failed = {**rows[3], "failed": "RuntimeError: x"}
    del failed["seconds_median"]
    kept.write_text("".join(json.dumps(r) + "\n" for r in [*rows[:3], failed]))
    assert main([*args, "--resume"]) == 0
    again = [json.loads(line) for line in kept.read_text().splitlines()]
    assert len(again) == 5 and again[-1]["seconds_median"] > 0
    assert "failed" not in again[-1]


def test_attached_trials_are_those_the_client_would_attach():
    """The growth benchmark attaches its trials with their data at once: the same
    trials, statuses, parameters and data as attach_trial + complete_trial."""
    from bandit_experiments.ax_benchmark.runner import (
        PROBLEMS,
        _sobol_points,
        attach_completed,
        job_environment,
        new_client,
    )

    prob = PROBLEMS["branin"]
    points = _sobol_points(prob, 7, 0)
    with job_environment():
        one, bulk = (new_client(prob, "c", "IGP-UCB", 0) for _ in range(2))
        for params in points:
            index = one.attach_trial(parameters=params)
            value = prob.observe(params, 0, index)
            one.complete_trial(trial_index=index, raw_data={"f": value})
        assert attach_completed(bulk, prob, points, 0) == list(range(7))
    a, b = one._experiment, bulk._experiment
    assert a.lookup_data().df.equals(b.lookup_data().df)
    for i in range(7):
        assert a.trials[i].status == b.trials[i].status
        assert a.trials[i].arm.parameters == b.trials[i].arm.parameters


def test_variant_labels_carry_node_options():
    from bandit_experiments.ax_benchmark.runner import parse_label

    assert parse_label("IGP-UCB") == ("IGP-UCB", {})
    assert parse_label("GP-TS[beta=1.5;repeats=allow;R=None]") == (
        "GP-TS",
        {"beta": 1.5, "repeats": "allow", "R": None},
    )
    for bad in ("UCB[beta=1]", "IGP-UCB[beta=1", "Ax default[beta=1]", "IGP-UCB[x]"):
        with pytest.raises(ValueError, match="strategies"):
            parse_label(bad)


def _job(problem: str, strategy: str, seed: int, cum: float, simple: float) -> dict:
    return {
        "problem": problem,
        "strategy": strategy,
        "seed": seed,
        "cumulative_regret": [0.0, cum],
        "simple_regret": [1.0, simple],
        "gen_seconds": [0.1, 0.2],
        "on_bound": 0.25,
    }


def test_the_ablation_table_counts_by_hand(tmp_path):
    import json

    from bandit_experiments.ax_benchmark.ablation import load, table

    jobs = tmp_path / "jobs"
    jobs.mkdir()
    rows = [
        # branin: the variant below Ax and below IGP-UCB, its simple regret close
        ("branin", "Ax default", (10.0, 12.0), (1.0, 1.2)),
        ("branin", "IGP-UCB", (8.0, 9.0), (2.0, 2.0)),
        ("branin", "IGP-UCB[B=0.1]", (5.0, 6.0), (1.1, 1.1)),
        # hartmann6: the variant above both, its simple regret far worse
        ("hartmann6", "Ax default", (1.0, 1.0), (0.1, 0.1)),
        ("hartmann6", "IGP-UCB", (2.0, 2.0), (0.2, 0.2)),
        ("hartmann6", "IGP-UCB[B=0.1]", (4.0, 4.0), (0.9, 0.9)),
        # mixed: one seed of the variant only, so it is left out there
        ("mixed", "Ax default", (1.0, 1.0), (0.1, 0.1)),
        ("mixed", "IGP-UCB[B=0.1]", (0.5, math.nan), (0.1, math.nan)),
    ]
    for problem, strategy, cums, simples in rows:
        for seed, (c, s) in enumerate(zip(cums, simples, strict=True)):
            if math.isnan(c):
                continue
            job = _job(problem, strategy, seed, c, s)
            (jobs / f"{problem}__{strategy}__{seed}.json").write_text(json.dumps(job))
    lines = table(load([tmp_path], 2), 2, "(before)")
    base = next(line for line in lines if line.startswith("| IGP-UCB (before)"))
    variant = next(line for line in lines if line.startswith("| IGP-UCB[B=0.1]"))
    # IGP-UCB: below Ax on branin only; simple regret close on neither
    assert base.split(" | ")[1:5] == ["2", "1", "-", "0"]
    # the variant on 2 problems: below Ax on 1, below IGP-UCB on 1, close on 1;
    # geometric mean of 5.5 / 11 and 4 / 1
    cells = variant.split(" | ")
    assert cells[1:5] == ["2", "1", "1", "1"]
    assert float(cells[5]) == pytest.approx(math.sqrt(0.5 * 4.0), abs=1e-3)
    assert "| mixed | 1 | - | - |" in lines


@pytest.mark.slow
def test_the_optimizer_gap_compares_with_a_longer_run():
    from bandit_experiments.ax_benchmark.optimizer_gap import gap

    g = gap("hartmann6", 8, 0)
    # the long run starts from more points: never worse than the core's optimizer
    # by more than the optimizers' tolerance
    assert math.isfinite(g["gap"]) and g["long"] >= g["ours"] - 1e-3
    with pytest.raises(ValueError, match="non-float"):
        gap("mixed", 8, 0)


@pytest.mark.slow  # 6 jobs of 8 trials (about half a minute)
def test_smoke_runs_a_few_jobs_of_two_strategies(tmp_path, capsys):
    """Issue 52: ``--smoke`` ran every problem and strategy (20 minutes); now three
    problems (continuous, constrained, mixed) with IGP-UCB and Ax's default, one seed
    of 8 trials, and no verdict (one seed has no standard error)."""
    out = tmp_path / "smoke"
    args = ["ax-bench", "--smoke", "--workers", "1", "--no-progress", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "3 problems x 2 strategies x 1 seed, 8 trials each: 6 jobs" in printed
    with open(out / "ax_bench.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["problem"] for r in rows} == set(SMOKE_PROBLEMS)
    assert {r["strategy"] for r in rows} == set(SMOKE_STRATEGIES)
    assert "below Ax default: yes" not in printed and "1 seed: no s.e." in printed
