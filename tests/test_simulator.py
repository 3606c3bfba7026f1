"""The bandit simulator, the batched problems and the reproduction harness."""

from __future__ import annotations

import csv
import itertools
import math

import pytest
import torch

from bandit_experiments.cli import main
from bandit_experiments.reproduction.runner import (
    CSV_COLUMNS,
    CSV_METRICS,
    EXPERIMENTS,
    reproduce,
)
from botorch_bandits import IGPUCB
from botorch_bandits.beta import information_gain
from botorch_bandits.models import fixed_gp
from botorch_bandits.test_functions import problems as P
from botorch_bandits.test_functions.simulator import (
    METRICS,
    POLICIES,
    gamma_order,
    simulate,
)


def _small_rkhs(seeds: int = 3) -> P.BanditProblem:
    return P.rkhs_problem("rbf", num_seeds=seeds, num_arms=20)


def test_simulate_is_deterministic_and_records_every_step() -> None:
    problem = _small_rkhs()
    a = simulate(problem, "IGP-UCB", 25, seed=4)
    b = simulate(problem, "IGP-UCB", 25, seed=4)
    c = simulate(problem, "IGP-UCB", 25, seed=5)
    assert torch.equal(a.arms, b.arms) and torch.equal(a.observations, b.observations)
    assert not torch.equal(a.observations, c.observations)
    for name in ("arms", "values", "observations", "information_gain"):
        assert getattr(a, name).shape == (25, 3)
    # values are the true f at the pulled arms; regrets follow SPEC §6
    f = problem.values.gather(-1, a.arms.T).T
    assert torch.equal(a.values, f)
    regret = (problem.optimum - f).cumsum(0)
    assert torch.allclose(a.cumulative_regret, regret)
    assert torch.all(a.simple_regret[1:] <= a.simple_regret[:-1])
    assert torch.allclose(a.average_regret[-1], regret[-1] / 25)
    for metric in METRICS:
        assert a.metric(metric).shape == (25, 3)


def test_information_gain_record_equals_log_det() -> None:
    """I_t recorded from the engine's free increments equals 1/2 log det(I + K_t /
    lambda) of the pulled points, computed from scratch."""
    problem = _small_rkhs()
    res = simulate(problem, "GP-TS", 15, seed=1)
    for s in range(problem.num_seeds):
        idx = res.arms[:, s]
        K_t = problem.K[s][idx][:, idx]
        expected = information_gain(K_t, float(problem.noise[s]))
        assert math.isclose(
            float(res.information_gain[-1, s]), float(expected), rel_tol=1e-9
        )


def test_decisions_match_a_plain_botorch_loop() -> None:
    """Per seed, every IGP-UCB decision equals the argmax of IGPUCB on a SingleTaskGP
    rebuilt from that seed's history (per-seed arms, B, R and lambda)."""
    problem = _small_rkhs()
    res = simulate(problem, "IGP-UCB", 12, seed=2)
    gamma = gamma_order(problem)
    for s in range(problem.num_seeds):
        arms = problem.arms[s]
        for t in range(12):
            idx = res.arms[:t, s]
            model = fixed_gp(
                arms[idx],
                res.observations[:t, s].unsqueeze(-1),
                P.make_kernel("rbf", 0.2),
                float(problem.noise[s]),
            )
            acqf = IGPUCB(
                model,
                B=float(problem.rkhs_norm[s]),
                R=float(problem.noise_sd[s]),
                gamma=gamma,
            )
            with torch.no_grad():
                choice = int(acqf(arms.unsqueeze(-2)).argmax())
            assert choice == int(res.arms[t, s]), (s, t)


@pytest.mark.parametrize("algorithm", sorted(POLICIES))
def test_every_policy_runs_on_per_seed_and_shared_arms(algorithm: str) -> None:
    for problem in (_small_rkhs(2), P.srinivas_gp_problem(num_seeds=2, num_points=30)):
        res = simulate(problem, algorithm, 6, seed=0)
        assert res.arms.shape == (6, 2)
        assert bool(torch.all((res.arms >= 0) & (res.arms < problem.num_arms)))
        assert bool(torch.all(res.cumulative_regret[-1] >= 0))


def test_problems_follow_the_papers() -> None:
    rk = P.rkhs_problem("matern52", num_seeds=2, num_arms=30)
    single = P.rkhs_function(30, "matern52", seed=1)  # seed + 1
    assert torch.equal(rk.arms[1], single.arms)
    assert math.isclose(float(rk.rkhs_norm[1]), single.rkhs_norm)
    rng = rk.values.max(-1).values - rk.values.min(-1).values
    assert torch.allclose(rk.noise, 0.01 * rng) and torch.allclose(
        rk.noise_sd**2, rk.noise
    )
    for fn, d in (("rosenbrock", 2), ("hartmann3", 3)):
        bf = P.benchmark_function_problem(fn, num_seeds=2)
        assert bf.arms.shape == (2, 100 * d, d) and bf.dim == d
        assert float(bf.values.min()) == 0.0 and float(bf.values.max()) == 1.0
    sr = P.srinivas_gp_problem(num_seeds=2, num_points=50)
    assert sr.arms.shape == (50, 1) and torch.allclose(
        sr.noise, torch.tensor(0.025, dtype=torch.double)
    )
    with pytest.raises(ValueError, match="num_seeds"):
        P.gp_sample_problem("rbf", num_seeds=0)
    with pytest.raises(ValueError, match="function"):
        P.benchmark_function_problem("branin")


def test_simulate_rejects_bad_input() -> None:
    problem = _small_rkhs(1)
    with pytest.raises(ValueError, match="algorithm"):
        simulate(problem, "UCB-1", 5)
    with pytest.raises(ValueError, match="horizon"):
        simulate(problem, "EI", 0)


def test_reproduce_writes_long_csv_and_png(tmp_path) -> None:
    result = reproduce(
        "chowdhury2017-fig1",
        horizon=8,
        seeds=2,
        out=tmp_path,
        workers=1,
        algorithms=["IGP-UCB", "EI"],
        show_progress=False,
    )
    with open(result.csv_path) as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) - 1 == 2 * 2 * 8 * len(
        CSV_METRICS
    )  # problems x algos x T x metrics
    assert {r[4] for r in rows[1:]} == set(CSV_METRICS)
    first = dict(zip(rows[0], rows[1], strict=True))
    assert first["experiment"] == "chowdhury2017-fig1" and first["n_seeds"] == "2"
    assert result.png_path.stat().st_size > 1000
    with pytest.raises(ValueError, match="experiment"):
        reproduce("chowdhury2017-fig9", out=None)


def test_cli_list(capsys) -> None:
    assert main(["reproduce", "--list"]) == 0
    names = capsys.readouterr().out.split()
    assert names == list(EXPERIMENTS)
    assert {
        "chowdhury2017-fig1",
        "chowdhury2017-fig2",
        "chowdhury2017-fig3",
        "srinivas2010-fig5a",
    } <= set(names)


@pytest.mark.slow  # ~9 s; test_ax_runner keeps a Dask cluster in the default run
def test_dask_local_cluster_matches_local_run(tmp_path) -> None:
    """The --dask path on a real distributed.LocalCluster (127.0.0.1) gives the same
    numbers as the in-process run (up to floating-point summation order)."""
    pytest.importorskip("distributed")
    kwargs = dict(
        horizon=6, seeds=2, algorithms=["GP-TS", "IGP-UCB"], show_progress=False
    )
    local = reproduce("chowdhury2017-fig2", out=None, workers=1, **kwargs)
    remote = reproduce("chowdhury2017-fig2", out=tmp_path, dask="local", **kwargs)
    assert len(remote.jobs) == len(local.jobs) == 4
    for a, b in zip(local.jobs, remote.jobs, strict=True):
        assert (a["problem"], a["algorithm"]) == (b["problem"], b["algorithm"])
        # same decisions; the sums may differ in the last bits (thread counts differ)
        assert torch.allclose(
            a["final_cumulative_regret"], b["final_cumulative_regret"], rtol=1e-10
        )
    assert (tmp_path / "chowdhury2017-fig2.csv").exists()


def test_device_runs_the_same_jobs_and_refuses_what_it_cannot() -> None:
    """``device="cpu"`` takes the device path (instances moved, the noise from the
    device's generator, results brought back) and gives the in-process numbers
    exactly; a device torch lacks, or one for a simulator that runs on the CPU only,
    is refused before any job runs, naming the argument."""
    kwargs = dict(horizon=5, seeds=3, algorithms=["GP-TS", "IGP-UCB"], out=None)
    plain = reproduce("chowdhury2017-fig1", show_progress=False, workers=1, **kwargs)
    moved = reproduce("chowdhury2017-fig1", show_progress=False, device="cpu", **kwargs)
    for a, b in zip(plain.jobs, moved.jobs, strict=True):
        assert torch.equal(a["final_cumulative_regret"], b["final_cumulative_regret"])
        assert b["final_cumulative_regret"].device.type == "cpu"
    with pytest.raises(ValueError, match=r"`device` must be a torch device.*nowhere"):
        reproduce("chowdhury2017-fig1", device="nowhere", **kwargs)
    with pytest.raises(ValueError, match="`device` is supported by the finite-arm"):
        reproduce("verma2022-fig1a", device="cpu", smoke=True, out=None)


def test_smoke_runs_are_labelled_with_the_sizes_that_ran(tmp_path) -> None:
    """A smoke run of the T = 900..2400 sweep names the horizons it ran (the CSV's
    problems, the plot's title), not the paper's."""
    import csv

    from bandit_experiments.reproduction.plots import run_title
    from bandit_experiments.reproduction.runner import reproduce

    result = reproduce(
        "avanesov-fig1", smoke=True, seeds=1, out=tmp_path, show_progress=False
    )
    with open(tmp_path / "avanesov-fig1.csv") as fh:
        problems = {row["problem"] for row in csv.DictReader(fh)}
    steps = sorted({j["steps"] for j in result.jobs})
    assert problems == {f"pw-K3-T{t}" for t in steps}
    assert max(steps) <= 60
    title = run_title(result)
    assert f"T = {steps[0]}..{steps[-1]}" in title and "reduced size" in title


def test_recorded_steps() -> None:
    from bandit_experiments.reproduction.report import CHECKPOINTS
    from bandit_experiments.reproduction.runner import recorded_steps

    assert recorded_steps(30, "log") == list(range(1, 31))
    assert recorded_steps(30000, "all") == list(range(1, 30001))
    steps = recorded_steps(30000)  # the default
    assert steps == sorted(set(steps)) and steps[-1] == 30000
    assert steps[:500] == list(range(1, 501)) and len(steps) <= 1001
    assert CHECKPOINTS <= set(steps)
    # log-spaced beyond the dense part: (30000 / 500) ** (1 / 500) = 1.0082 apart
    gaps = [b / a for a, b in itertools.pairwise(steps[499:])]
    assert max(gaps) < 1.01
    assert recorded_steps(60, 7) == sorted(
        {7, 14, 21, 28, 35, 42, 49, 56} | {25, 40, 50, 60}
    )
    for bad in (0, -3, 2.5, "every", True):
        with pytest.raises(ValueError, match="`record` must be"):
            recorded_steps(10, bad)


def test_recorded_csv_gives_the_report_the_same_numbers(tmp_path) -> None:
    """A thinned CSV keeps what REPRODUCTION.md reads: the last step and the
    checkpoints, with the same values as the CSV of every step."""
    from bandit_experiments.reproduction import report as R

    runs = {}
    for record in ("all", 7):
        out = tmp_path / str(record)
        runs[record] = reproduce(
            "chowdhury2017-fig1",
            horizon=60,
            seeds=2,
            out=out,
            workers=1,
            algorithms=["IGP-UCB"],
            show_progress=False,
            record=record,
        )
    with open(runs[7].csv_path) as fh:
        rows = list(csv.DictReader(fh))
    steps = sorted({int(r["step"]) for r in rows})
    assert steps == sorted({7, 14, 21, 28, 35, 42, 49, 56} | {25, 40, 50, 60})
    full, thin = R.load(tmp_path / "all"), R.load(tmp_path / "7")
    assert full.last == thin.last
    for key, by_step in full.steps.items():
        assert thin.steps[key] == by_step
    assert full.steps  # the checkpoints below T were read
