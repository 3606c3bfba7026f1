"""The main job (``botorch-bandits demo``): an Ax experiment with the bandit strategy,
trials in flight on a process pool, SQLite storage, the plot -- and a real
kill-and-resume: the demo process is SIGKILLed mid-run, ``--resume`` finishes it, and
every trial, arm and datum equals an uninterrupted run's."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from botorch_bandits._install import install_hint

pytest.importorskip("ax")
pytest.importorskip("sqlalchemy")

from botorch_bandits.demo import ax_demo
from botorch_bandits.demo.ax_demo import demo_function, duration
from botorch_bandits.demo.ax_demo_report import read_regret, summary_lines

COMPLETED = 3  # ax.core.trial_status.TrialStatus.COMPLETED
BANDIT, AX = "demo-igp-ucb-seed0", "demo-ax-default-seed0"  # seed 0's experiments


def run_demo(*args, **kwargs):
    """The demo, by default on one seed in the theory mode (fast, as the tests
    were written; the command's defaults are 5 seeds, practical mode)."""
    return ax_demo.run_demo(*args, **{"seeds": 1, "mode": "theory", **kwargs})


def _trials(db: Path, name: str) -> list[tuple]:
    """(index, status, x, mean) of every trial, read back through Ax."""
    from botorch_bandits.ax.sql import load_client

    client = load_client(name, db, read_only=True)
    df = client._experiment.lookup_data().df
    means = dict(zip(df["trial_index"], df["mean"], strict=True))
    return [
        (t.index, t.status.name, t.arms[0].parameters["x"], means.get(t.index))
        for t in sorted(client._experiment.trials.values(), key=lambda t: t.index)
    ]


def _completed(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            return con.execute(
                "select count(*) from trial_v2 where status = ?", (COMPLETED,)
            ).fetchone()[0]
    except sqlite3.Error:  # not created yet
        return 0


def _command(*args: str) -> list[str]:
    """``botorch-bandits ARGS`` in this interpreter."""
    return [sys.executable, "-m", "botorch_bandits.cli", *args]


def _demo(out: Path, *extra: str) -> list[str]:
    """The bandit half alone, 14 trials."""
    return _command(
        "demo",
        "--bandit-only",
        "--seeds",
        "1",
        "--mode",
        "theory",
        "--trials",
        "14",
        "--no-progress",
        "--out",
        str(out),
        *extra,
    )


def test_demo_writes_sqlite_plot_and_compares_with_ax_default(tmp_path) -> None:
    """Two seeds, both halves: every seed's experiments in the file, regret.csv with
    every seed's curve and where each trial came from, the plot, and a summary
    that says what was compared and that lower is better."""
    result = run_demo(
        tmp_path, trials=7, seeds=2, mode="practical", show_progress=False
    )
    assert set(result.curves) == {"bandit", "ax-default"} and result.seeds == (0, 1)
    assert all(c.shape == (2, 7) and (c >= 0).all() for c in result.curves.values())
    # Ax's default and the practical strategy both start at the centre, then Sobol
    assert (result.sources["ax-default"][:, :5] == "initial").all()
    assert (result.sources["bandit"][:, :5] == "initial").all()
    png = (tmp_path / "regret.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 5000
    assert (tmp_path / "cost.png").read_bytes().startswith(b"\x89PNG")
    rows = (tmp_path / "regret.csv").read_text().splitlines()
    assert rows[0] == "strategy,mode,parallelism,seed,trial,source,cumulative_regret"
    assert len(rows) == 1 + 2 * 2 * 7
    assert rows[1].startswith("bandit,practical,3,0,1,initial,")
    costs = (tmp_path / "cost.csv").read_text().splitlines()
    assert costs[0] == "strategy,seed,trial,seconds" and len(costs) == 1 + 2 * 2 * 6
    assert all(float(row.split(",")[3]) >= 0 for row in costs[1:])
    for seed in (0, 1):
        for name in ("demo-igp-ucb", "demo-ax-default"):
            stored = _trials(tmp_path / "demo.db", f"{name}-seed{seed}")
            assert [r[0] for r in stored] == list(range(7))
            assert all(r[1] == "COMPLETED" and r[3] is not None for r in stored)
        # the stored values are the seed's function plus its seeded noise
        fn = demo_function(seed)
        stored = _trials(tmp_path / "demo.db", f"demo-igp-ucb-seed{seed}")
        assert all(abs(m - float(fn(x))) < 6 * fn.noise_sd for _, _, x, m in stored)
    assert demo_function(0).coefficients != demo_function(1).coefficients
    text = "\n".join(summary_lines(result))
    for said in ("practical mode", "told nothing about f", "lower is better"):
        assert said in text
    assert "2 seeds (0-1)" in text and "mean ± s.e. over seeds" in text
    final = result.final("bandit")
    assert f"{final.mean():.3f} ± " in text
    # the summary is a function of regret.csv alone (the docs render it from there)
    again = read_regret(tmp_path / "regret.csv")
    assert summary_lines(again) == summary_lines(result)


def test_one_seed_prints_no_standard_error_and_theory_mode_says_unlike(
    tmp_path,
) -> None:
    result = run_demo(tmp_path, trials=4, show_progress=False)
    text = "\n".join(summary_lines(result))
    assert "±" not in text and "1 seed: no s.e." in text
    assert "Not like with like" in text and "theory mode" in text


@pytest.mark.parametrize(
    ("node", "key", "source"),
    [
        ("CenterOfSearchSpace", "CenterOfSearchSpace", "initial"),
        ("Sobol", "Sobol", "initial"),
        ("MBM", "BoTorch", "model"),
        ("MBM", "Fallback_Sobol", "fallback"),  # Ax 1.3's name for a fallback run
        ("bandit", "bandit", "model"),
    ],
)
def test_each_trial_has_its_source(node, key, source) -> None:
    assert ax_demo.source_of(node, key) == source


def test_fallback_trials_are_counted_in_the_summary() -> None:
    from botorch_bandits.demo.ax_demo_report import DemoResult

    sources = np.array([["initial"] * 5 + ["model", "fallback", "fallback"]] * 2)
    curves = np.tile(np.arange(1.0, 9.0), (2, 1))
    result = DemoResult(
        seeds=(0, 1),
        mode="practical",
        trials=8,
        parallelism=3,
        curves={"bandit": curves, "ax-default": curves + 1},
        sources={
            "bandit": np.full((2, 8), "model", dtype=object),
            "ax-default": sources,
        },
        seconds={},
    )
    text = "\n".join(summary_lines(result))
    assert "Ax default: 4 of its 16 trials came from its fallback generator" in text
    # 8 trials on 2 seeds (--smoke): the summary says they cannot tell
    assert "too few to tell the strategies apart" in text
    many = DemoResult(
        seeds=(0, 1, 2),
        mode="practical",
        trials=30,
        parallelism=3,
        curves={"bandit": np.zeros((3, 30)), "ax-default": np.ones((3, 30))},
        sources={
            "bandit": np.full((3, 30), "model", dtype=object),
            "ax-default": np.full((3, 30), "model", dtype=object),
        },
        seconds={},
    )
    assert "too few" not in "\n".join(summary_lines(many))


def test_read_regret_refuses_a_file_with_missing_rows(tmp_path) -> None:
    rows = ["strategy,mode,parallelism,seed,trial,source,cumulative_regret"]
    rows += [f"bandit,practical,3,0,{t},model,{t}.0" for t in (1, 2, 3)]
    (tmp_path / "regret.csv").write_text("\n".join(rows[:-1]) + "\n")
    assert read_regret(tmp_path / "regret.csv").curves["bandit"].shape == (1, 2)
    rows.append("bandit,practical,3,1,1,model,1.0")  # seed 1 holds one trial of 3
    (tmp_path / "regret.csv").write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"expected one row per strategy, seed"):
        read_regret(tmp_path / "regret.csv")


def test_trials_complete_out_of_order() -> None:
    """The virtual schedule: durations differ, so completion order != index order."""
    ds = [duration(0, i) for i in range(20)]
    assert len(set(ds)) > 2


def test_sigkill_and_resume_lose_nothing_and_decide_the_same(tmp_path) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    ref = subprocess.run(_demo(whole), capture_output=True, text=True, env=env)
    assert ref.returncode == 0, ref.stderr[-2000:]
    proc = subprocess.Popen(
        _demo(killed),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,  # its own process group: the job and its workers
    )
    k = 6
    deadline = time.time() + 240
    while _completed(killed / "demo.db") < k and proc.poll() is None:
        assert time.time() < deadline, "the demo made no progress"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # kill -9 the whole job, pool included
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    at_kill = _trials(killed / "demo.db", BANDIT)
    assert k <= sum(r[1] == "COMPLETED" for r in at_kill) < 14
    res = subprocess.run(
        _demo(killed, "--resume"), capture_output=True, text=True, env=env
    )
    assert res.returncode == 0, res.stderr[-2000:]
    expected = _trials(whole / "demo.db", BANDIT)
    resumed = _trials(killed / "demo.db", BANDIT)
    # nothing stored before the kill was lost or changed (a trial the kill caught
    # inside ``complete_trial`` -- stored COMPLETED, its data not yet -- is
    # evaluated again on resume and gets its seeded value) ...
    for before in at_kill:
        if before[1] == "COMPLETED" and before[3] is not None:
            assert before in resumed
    # ... and the resumed run made the uninterrupted run's decisions and data
    assert resumed == expected


# ------------------------------------------------------------------ both halves
def _both(out: Path, *extra: str) -> list[str]:
    """Both halves (the bandit, then Ax's default strategy), one seed, small;
    ``extra`` may give other values (argparse keeps the last)."""
    return _command(
        "demo",
        *("--trials", "6", "--seeds", "1", "--mode", "theory"),
        *("--no-progress", "--out", str(out)),
        *extra,
    )


def _state(out: Path, seeds: int = 1) -> tuple:
    return (
        *(
            _trials(out / "demo.db", f"{name}-seed{k}")
            for k in range(seeds)
            for name in ("demo-igp-ucb", "demo-ax-default")
        ),
        (out / "regret.csv").read_text(),
    )


def _planned(extra: tuple[str, ...]) -> int:
    """Trials the run makes in all (both halves, every seed) under ``_both``."""
    value = {"--trials": 6, "--seeds": 1}
    for i, word in enumerate(extra[:-1]):
        if word in value:
            value[word] = int(extra[i + 1])
    return 2 * value["--trials"] * value["--seeds"]


def _kill_after(out: Path, k: int, env: dict, *extra: str) -> None:
    """Start the demo and SIGKILL its process group once ``k`` trials (over both
    experiments) are stored COMPLETED."""
    proc = subprocess.Popen(
        _both(out, *extra),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    deadline = time.time() + 240
    while _completed(out / "demo.db") < k and proc.poll() is None:
        assert time.time() < deadline, "the demo made no progress"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, f"the run ended before {k} trials"
    # the kill came while the run had trials left (not while it drew its plots)
    assert _completed(out / "demo.db") < _planned(extra), "killed after the last trial"


#: kill points: completed trials over both halves (6 per half; 6..11 are Ax's)
KILL_POINTS = (1, 3, 5, 7, 9, 11)
#: the slow marker runs (3, 9), all six in both modes (each point costs a demo and a
#: resume), and a two-seed practical run (7 trials per half) killed after 26 of 28
#: completions: in the second seed's Ax half, after Ax's model has begun (5 initial
#: trials); the default run's kill, in the bandit half, is
#: test_sigkill_and_resume_lose_nothing_and_decide_the_same)
QUICK_KILL_POINTS = (3, 9)


@pytest.mark.parametrize(
    ("mode", "seeds", "trials", "points"),
    [
        pytest.param("practical", 2, 7, (26,), marks=pytest.mark.slow),
        pytest.param("theory", 1, 6, QUICK_KILL_POINTS, marks=pytest.mark.slow),
        pytest.param("theory", 1, 6, KILL_POINTS, marks=pytest.mark.slow),
        pytest.param("practical", 1, 6, KILL_POINTS, marks=pytest.mark.slow),
    ],
    ids=["practical-two-seeds-ax-model", "theory", "theory-all-points", "practical"],
)
def test_sigkill_anywhere_in_either_half_resumes_exactly(
    tmp_path, mode, seeds, trials, points
) -> None:
    """A real SIGKILL at several points spread over both halves (1, in the second
    seed's Ax half, in the default run; all 6 under the slow marker); each resumed
    run ends with the uninterrupted run's trials, stored values and regret.csv (on
    main a kill in the first half could never be resumed: the second experiment was
    missing; and Ax's default strategy drifted after a resume). In the practical
    mode too: its fits start from the fit recorded in the last trial's metadata,
    so a resumed run fits from the same point."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    flag = ("--mode", mode, "--seeds", str(seeds), "--trials", str(trials))
    ref = subprocess.run(_both(tmp_path / "whole", *flag), capture_output=True, env=env)
    assert ref.returncode == 0, ref.stderr[-2000:]
    expected = _state(tmp_path / "whole", seeds)
    assert [len(t) for t in expected[:-1]] == [trials] * (2 * seeds)
    start = time.time()
    for k in points:
        out = tmp_path / f"killed-{k}"
        _kill_after(out, k, env, *flag)
        res = subprocess.run(
            _both(out, "--resume", *flag), capture_output=True, env=env
        )
        assert res.returncode == 0, (k, res.stderr[-2000:])
        assert _state(out, seeds) == expected, f"kill after {k} completed trials"
    print(f"{len(points)} kill points resumed in {time.time() - start:.1f} s")


def _running_with(text: str) -> list[int]:
    """The pids of processes whose command line contains ``text`` (Linux)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if text.encode() in cmdline:
                pids.append(int(entry.name))
    return pids


@pytest.mark.parametrize(
    ("signum", "whole_group"),
    [
        (signal.SIGTERM, False),
        pytest.param(signal.SIGTERM, True, marks=pytest.mark.slow),
        pytest.param(signal.SIGKILL, False, marks=pytest.mark.slow),
    ],
    ids=["sigterm-main", "sigterm-group", "sigkill-main-alone"],
)
def test_a_terminated_demo_resumes_exactly(tmp_path, signum, whole_group) -> None:
    """SIGTERM (what ``timeout``, systemd, a container stop send) to the demo's
    main process or its whole group stops it cleanly: exit 143 and the resume
    hint (before: killed at once, rc 143 with no hint, its pool workers left
    holding the lock, so ``--resume`` was refused for ever). A SIGKILL of the main
    process alone leaves no worker behind. Either way ``--resume`` ends with the
    uninterrupted run's trials, values and regret.csv."""
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc")
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    flag = ("--trials", "8")
    ref = subprocess.run(_both(tmp_path / "whole", *flag), capture_output=True, env=env)
    assert ref.returncode == 0, ref.stderr[-2000:]
    expected = _state(tmp_path / "whole")
    out = tmp_path / "stopped"
    proc = subprocess.Popen(
        _both(out, *flag),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    deadline = time.time() + 240
    while _completed(out / "demo.db") < 5 and proc.poll() is None:
        assert time.time() < deadline, "the demo made no progress"
        time.sleep(0.02)
    assert proc.poll() is None, "the demo ended before the signal"
    if whole_group:
        os.killpg(proc.pid, signum)
    else:
        os.kill(proc.pid, signum)
    _, err = proc.communicate(timeout=120)
    assert _completed(out / "demo.db") < 16, "stopped after the last trial"
    if signum == signal.SIGTERM:
        assert proc.returncode == 143, err[-2000:]
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("botorch-bandits: terminated (SIGTERM); continue")
        assert (
            f"demo --resume --trials 8 --seeds 1 --mode theory --out {out}"
            in (lines[0])
        )
    else:
        assert proc.returncode == -signal.SIGKILL
    deadline = time.time() + 30
    while _running_with(str(out)):  # no worker outlives the main process
        assert time.time() < deadline, _running_with(str(out))
        time.sleep(0.1)
    res = subprocess.run(_both(out, "--resume", *flag), capture_output=True, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    assert _state(out) == expected


def _record_options(db, **given) -> None:
    """What a run writes first: its options (run_demo's defaults but ``given``)."""
    from botorch_bandits.demo.ax_demo_options import check_run_options

    options = dict(
        trials=30,
        parallelism=3,
        seed=0,
        seeds=1,
        mode="theory",
        strategies=["bandit", "ax-default"],
    )
    check_run_options(db, False, {**options, **given})


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (dict(seed=1), r"seed \(--seed\) 0 when it began, 1 now"),
        (dict(parallelism=1), r"parallelism \(--parallelism\) 3 when it began, 1"),
        (dict(trials=6), r"trials \(--trials/--smoke\) 5 when it began, 6 now"),
        (dict(mode="practical"), r"mode \(--mode\) 'theory' when it began"),
        (dict(seeds=2), r"seeds \(--seeds/--smoke\) 1 when it began, 2 now"),
        (dict(strategies=("bandit",)), r"strategies \(--bandit-only\)"),
    ],
)
def test_a_resume_refuses_options_that_would_change_the_run(
    tmp_path, change, named
) -> None:
    """Before: ``--resume --seed 1`` on a seed-0 run was accepted and mixed two
    objective functions (exit 0); so was ``--parallelism 1``."""
    run_demo(tmp_path, trials=5, show_progress=False, stop_after=1)
    before = _trials(tmp_path / "demo.db", BANDIT)
    options = {"trials": 5, **change}
    with pytest.raises(ValueError, match=named):
        run_demo(tmp_path, show_progress=False, resume=True, **options)
    assert _trials(tmp_path / "demo.db", BANDIT) == before


def test_a_resume_of_an_earlier_versions_file_says_so(tmp_path) -> None:
    """A file whose record lacks an option of this version (before issue 33: no
    seeds) cannot be resumed; the message says why instead of naming a value the
    user cannot give."""
    con = sqlite3.connect(tmp_path / "demo.db")
    with con:
        con.execute("CREATE TABLE botorch_bandits_demo_run (option TEXT, value TEXT)")
        con.executemany(
            "INSERT INTO botorch_bandits_demo_run VALUES (?, ?)",
            [
                ("trials", "5"),
                ("parallelism", "3"),
                ("seed", "0"),
                ("mode", '"theory"'),
            ],
        )
    con.close()
    with pytest.raises(ValueError, match=r"written by an earlier version .*no seeds"):
        run_demo(tmp_path, trials=5, show_progress=False, resume=True)


def test_a_resume_of_a_file_without_a_run_is_refused(tmp_path) -> None:
    """Before: a zero-byte demo.db with --resume silently started a fresh run."""
    (tmp_path / "demo.db").write_bytes(b"")
    with pytest.raises(ValueError, match=r"holds no demo run \(0 bytes"):
        run_demo(tmp_path, trials=5, show_progress=False, resume=True)
    assert (tmp_path / "demo.db").read_bytes() == b""
    (tmp_path / "demo.db").write_bytes(b"garbage " * 100)
    with pytest.raises(ValueError, match=r"demo.db cannot be read as a SQLite"):
        run_demo(tmp_path, trials=5, show_progress=False, resume=True)


@pytest.mark.parametrize(
    "stored", [pytest.param("experiment", marks=pytest.mark.slow), "optimization"]
)
def test_a_kill_during_the_setup_resumes_with_the_right_strategy(
    tmp_path, stored
) -> None:
    """A kill after ``configure_experiment`` (or ``configure_optimization``) but
    before the strategy was saved: the resume sets the bandit strategy, never Ax's
    default under the bandit's label."""
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax.sql import sqlite_storage

    (tmp_path / "cut").mkdir()
    # a run records its options first, then Ax's setup begins
    _record_options(tmp_path / "cut" / "demo.db", trials=5)
    client = Client(storage_config=sqlite_storage(tmp_path / "cut" / "demo.db"))
    client.configure_experiment(
        name=BANDIT,
        parameters=[
            RangeParameterConfig(name="x", bounds=(0.0, 1.0), parameter_type="float")
        ],
    )
    if stored == "optimization":
        client.configure_optimization(objective="f")
    run_demo(tmp_path / "cut", trials=5, show_progress=False, resume=True)
    run_demo(tmp_path / "whole", trials=5, show_progress=False)
    assert _trials(tmp_path / "cut" / "demo.db", BANDIT) == _trials(
        tmp_path / "whole" / "demo.db", BANDIT
    )
    from botorch_bandits.ax.sql import load_client

    gs = load_client(BANDIT, tmp_path / "cut" / "demo.db")._generation_strategy
    assert gs.name == "Sobol+IGP-UCB"


def test_a_resume_refuses_a_stored_strategy_of_another_name(tmp_path) -> None:
    """A practical half stored with another strategy (here the practical mode's
    Sobol start, as before it began at the centre) is not resumed as this version's
    practical IGP-UCB: the error names both strategies, and nothing is run."""
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax import bandit_generation_strategy
    from botorch_bandits.ax.sql import sqlite_storage

    _record_options(tmp_path / "demo.db", trials=5, mode="practical")
    client = Client(storage_config=sqlite_storage(tmp_path / "demo.db"))
    client.configure_experiment(
        name=BANDIT,
        parameters=[
            RangeParameterConfig(name="x", bounds=(0.0, 1.0), parameter_type="float")
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(
        bandit_generation_strategy(num_init=3, initialize_with_center=False)
    )
    with pytest.raises(
        ValueError,
        match=r"stores the strategy 'Sobol\+IGP-UCB \(practical\)', not "
        r"'Center\+Sobol\+IGP-UCB \(practical\)'",
    ):
        run_demo(tmp_path, trials=5, show_progress=False, resume=True, mode="practical")
    assert _trials(tmp_path / "demo.db", BANDIT) == []


@pytest.mark.slow  # two demos racing on one file (~35 s)
def test_two_resumes_on_one_database_one_proceeds(tmp_path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    out = tmp_path / "run"
    _kill_after(out, 2, env)
    procs = [
        subprocess.Popen(
            _both(out, "--resume"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    codes = sorted(rc for rc, _ in results)
    assert codes == [0, 2], results
    err = next(e for rc, e in results if rc == 2)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "in use by another process" in lines[0], err
    with sqlite3.connect(out / "demo.db") as con:
        assert con.execute("pragma integrity_check").fetchone()[0] == "ok"
        rows = con.execute(
            'select experiment_id, count(*), count(distinct "index") from trial_v2 '
            "group by experiment_id"
        ).fetchall()
    assert [(n, d) for _, n, d in rows] == [(6, 6), (6, 6)]


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        _command(*args),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})},
    )


def test_cli_errors_are_one_line(tmp_path) -> None:
    # --resume on a folder with nothing to resume
    res = _cli("demo", "--resume", "--out", str(tmp_path / "missing"))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) <= 2
    assert "Nothing to resume" in res.stderr
    # a damaged database
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "demo.db").write_bytes(os.urandom(4096))
    res = _cli("demo", "--resume", "--no-progress", "--out", str(tmp_path / "bad"))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) <= 2
    assert "cannot be read as a SQLite database" in res.stderr
    # a missing extra (simulated: the module is unimportable), before any work
    res = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.modules['ax'] = None; "
            "from botorch_bandits.cli import main; "
            f"sys.exit(main(['demo', '--out', {str(tmp_path / 'x')!r}]))",
        ],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert install_hint("ax") in res.stderr  # the pip install for this install
    assert not (tmp_path / "x").exists()
    # --debug shows the traceback
    res = _cli("--debug", "demo", "--resume", "--out", str(tmp_path / "missing"))
    assert res.returncode == 1 and "Traceback" in res.stderr


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen(
        # long enough that the run is still going when Ctrl-C comes (with the
        # 6-trial run the whole demo could end between two polls on an idle machine)
        _command("demo", "--trials", "40", "--no-progress", "--out", str(out)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        start_new_session=True,
        # Ctrl-C must reach the demo even when the tests were started in the
        # background (a shell starts background jobs with SIGINT ignored, which
        # children inherit: the demo would then run on and exit 0)
        preexec_fn=_default_sigint,
    )
    deadline = time.time() + 240
    while _completed(out / "demo.db") < 2 and proc.poll() is None:
        assert time.time() < deadline
        time.sleep(0.02)
    assert proc.poll() is None, "the demo ended before Ctrl-C"
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    # the hint repeats the run's options (a resume with others is refused)
    assert f"botorch-bandits demo --resume --trials 40 --out {out}" in lines[0]


_INTERRUPTED_CLOSE = """
import contextlib, io, sys, sqlalchemy
if sys.argv[1] == "quiet":  # what the command sets up: a cheap run through main()
    from botorch_bandits.cli import main
    with contextlib.redirect_stderr(io.StringIO()):  # refused before any work
        assert main(["demo", "--smoke", "--trials", "3"]) == 2

def interrupted(connection):
    raise KeyboardInterrupt

# the pool Ax's storage uses for a file (NullPool) closes on check-in
engine = sqlalchemy.create_engine("sqlite:///" + sys.argv[2], poolclass=sqlalchemy.pool.NullPool)
try:
    with engine.connect() as conn:
        conn.exec_driver_sql("select 1")
        engine.dialect.do_close = interrupted
except KeyboardInterrupt:
    print("interrupted")
# any other error from the same logger still prints
engine.pool.logger.error("Other error", exc_info=(OSError, OSError("disk"), None))
"""


def test_an_interrupt_while_sqlalchemy_closes_a_connection_prints_no_traceback(
    tmp_path,
) -> None:
    """CI's run of the test above once caught Ctrl-C inside SQLAlchemy's pool, which
    logs "Exception closing connection" with the traceback before re-raising; the
    command's one line came after 7 lines of it. The same path, made certain: a
    connection whose close is interrupted, in a fresh process (as the command runs:
    no logging configured), without and after a run of the command's main()."""
    runs = {}
    for mode in ("plain", "quiet"):
        runs[mode] = subprocess.run(
            [sys.executable, "-c", _INTERRUPTED_CLOSE, mode, str(tmp_path / "x.db")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert runs[mode].stdout == "interrupted\n", runs[mode].stderr
        assert "Other error" in runs[mode].stderr
    assert "Exception closing connection" in runs["plain"].stderr  # SQLAlchemy's echo
    assert "Exception closing connection" not in runs["quiet"].stderr
    assert "KeyboardInterrupt" not in runs["quiet"].stderr


def test_outputs_are_never_written_through_a_symlink(tmp_path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("keep me\n")
    out = tmp_path / "run"
    out.mkdir()
    (out / "regret.csv").symlink_to(outside)
    with pytest.raises(ValueError, match="symlink"):
        run_demo(out, trials=4, show_progress=False)
    assert outside.read_text() == "keep me\n"
    assert not (out / "demo.db").exists()  # refused before any work


def test_atomic_outputs_replace_whole_files(tmp_path) -> None:
    from botorch_bandits._io import atomic_open

    target = tmp_path / "a.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_open(target) as fh:
        fh.write("half")
        raise RuntimeError("killed mid-write")
    assert target.read_text() == "old\n"  # never half a file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv"]
    with atomic_open(target) as fh:
        fh.write("new\n")
    assert target.read_text() == "new\n"


@pytest.mark.parametrize("mask", [0o077, 0o022, 0o002])
def test_atomic_outputs_follow_the_umask(tmp_path, mask) -> None:
    """The outputs get the mode ``open`` would give them (0666 less the umask):
    before, they were 0644 whatever the umask (``umask 077`` left the demo's
    CSVs and PNGs readable by every user)."""
    from botorch_bandits._io import atomic_open, current_umask

    before = os.umask(mask)
    try:
        assert current_umask() == mask
        with atomic_open(tmp_path / "a.csv") as fh:
            fh.write("x\n")
    finally:
        os.umask(before)
    assert (tmp_path / "a.csv").stat().st_mode & 0o777 == 0o666 & ~mask


def test_loading_never_writes(tmp_path) -> None:
    """On main ``load_client`` rewrote every data row of an intact file (Ax's
    ``load_from_database`` saves what it loads)."""
    from botorch_bandits.ax.sql import load_client

    run_demo(tmp_path, trials=4, show_progress=False, strategies=("bandit",))
    db = tmp_path / "demo.db"

    def snapshot() -> dict:
        with sqlite3.connect(db) as con:
            tables = [
                t
                for (t,) in con.execute(
                    "select name from sqlite_master where type='table'"
                )
            ]
            return {t: con.execute(f"select * from {t}").fetchall() for t in tables}

    before = snapshot()
    client = load_client(BANDIT, db)
    assert len(client._experiment.trials) == 4
    assert snapshot() == before
    assert db.stat().st_size > 0


def test_reloaded_data_is_exact(tmp_path) -> None:
    """Values come back bit for bit (Ax alone keeps 10 decimal places)."""
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax.sql import load_client, sqlite_storage

    client = Client(storage_config=sqlite_storage(tmp_path / "x.db"), random_seed=0)
    client.configure_experiment(
        name="exact",
        parameters=[
            RangeParameterConfig(name="x", bounds=(0.0, 1.0), parameter_type="float")
        ],
    )
    client.configure_optimization(objective="f")
    values = [0.1 + 1e-13, 1 / 3, -2.718281828459045e-7, 123456.78901234567]
    for v in values:
        ((idx, _),) = client.get_next_trials(max_trials=1).items()
        client.complete_trial(trial_index=idx, raw_data={"f": v})
    df = load_client("exact", tmp_path / "x.db")._experiment.lookup_data().df
    assert df.sort_values("trial_index")["mean"].tolist() == values


def test_an_error_the_ctrl_c_caused_is_reported_as_the_interrupt(
    monkeypatch, capsys
) -> None:
    """Under load a Ctrl-C could reach a pool worker before it ignored SIGINT: the
    pool broke, and the demo exited 2 with that error instead of 130 (the test
    above failed with ``assert 2 == 130`` in a loaded run). An error raised after the
    Ctrl-C is now reported as the interrupt."""
    import dataclasses

    from botorch_bandits import cli

    def broken_by_ctrl_c(args, parser):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            raise RuntimeError("A process in the process pool was terminated") from None
        return 0

    demo = dataclasses.replace(cli.COMMANDS["demo"], run=broken_by_ctrl_c)
    monkeypatch.setitem(cli.COMMANDS, "demo", demo)
    # Ctrl-C as in a terminal (a background job starts with SIGINT ignored, which
    # the command keeps)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert cli.main(["demo", "--out", "somewhere"]) == 130
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
    err = capsys.readouterr().err
    assert "interrupted; continue with: botorch-bandits demo --resume" in err


def test_unclear_messages_now_name_the_file_or_flag(tmp_path, capsys) -> None:
    """Issue 31's unclear messages: ``--out`` naming a file ("[Errno 17] File
    exists"), a symlinked lock ("Too many levels of symbolic links"), a damaged
    page (a raw SQLAlchemy error without the file), a full disk ("not a SQLite
    database" although the file was intact)."""
    from botorch_bandits import cli
    from botorch_bandits.ax.sql import _unusable, load_client, writer_lock

    afile = tmp_path / "afile"
    afile.write_text("")
    assert cli.main(["demo", "--smoke", "--out", str(afile), "--no-progress"]) == 2
    assert f"--out {afile} is a file" in capsys.readouterr().err
    lock = tmp_path / "x.db.lock"
    lock.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match=r"x.db.lock of .*x.db is a symbolic link"):
        with writer_lock(tmp_path / "x.db"):
            pass
    run_demo(tmp_path / "run", trials=4, show_progress=False, strategies=("bandit",))
    db = tmp_path / "run" / "demo.db"
    data = bytearray(db.read_bytes())
    for page in range(2, len(data) // 4096):  # every page after Ax's first tables
        data[page * 4096 + 100 : page * 4096 + 300] = bytes(range(200))
    db.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"demo.db cannot be read as a SQLite"):
        load_client(BANDIT, db)
    full = sqlite3.OperationalError("database or disk is full")
    assert "the disk is full" in _unusable("f.db", "path", full)


_SIGNAL_IN_A_FINALIZER = """
import gc, os, signal, sys, time, weakref
from botorch_bandits import cli

class Thing:
    pass

def run(args, parser):
    # the signal lands inside a weakref callback, where Python ignores exceptions
    # (SQLAlchemy runs such callbacks all the time: CI saw a Ctrl-C lost there)
    thing = Thing()
    ref = weakref.ref(thing, lambda _: os.kill(os.getpid(), int(sys.argv[1])))
    del thing
    gc.collect()
    deadline = time.time() + 20
    while time.time() < deadline:  # the run goes on unless the signal comes back
        time.sleep(0.01)
    return 0

cli.COMMANDS["loop-demo"] = cli.COMMANDS["loop-demo"].__class__(
    help="", add_arguments=lambda p: None, run=run
)
sys.exit(cli.main(["loop-demo"]))
"""


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)]
)
def test_a_signal_that_lands_in_a_finalizer_still_stops_the_command(
    signum, code
) -> None:
    """A Ctrl-C (or SIGTERM) whose exception Python ignores (it landed in a weakref
    callback or a ``__del__``) is delivered again: the command stops cleanly with
    its exit status and one line, no "Exception ignored" traceback (before: the
    run went on, and exited 0)."""
    start = time.time()
    out = subprocess.run(
        [sys.executable, "-c", _SIGNAL_IN_A_FINALIZER, str(int(signum))],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_default_sigint,
    )
    assert out.returncode == code, out.stderr
    assert "Exception ignored" not in out.stderr
    assert out.stderr.strip().startswith("botorch-bandits: ")
    assert time.time() - start < 19
