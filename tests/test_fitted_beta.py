"""The beta-guide measurements (bandit_experiments.studies.fitted_beta): the
fitted quantities recomputed independently, the multipliers against the papers'
formulas, the closed loop's options reaching the Ax node, and the CLI."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bandit_experiments.studies import fitted_beta as fb


@pytest.fixture(scope="module")
def forrester_row() -> fb.FitRow:
    return fb.fit_row("forrester", 12, seed=3)


def test_fit_row_against_an_independent_computation(forrester_row) -> None:
    """R-hat, gamma-hat and B-hat recomputed with numpy from a refit of the same
    model (same data, same seed), and the multipliers from the papers' formulas."""
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.mlls import ExactMarginalLogLikelihood

    r = forrester_row
    X = torch.quasirandom.SobolEngine(1, scramble=True, seed=3).draw(12).double()
    y = -((6 * X[:, 0] - 2) ** 2 * torch.sin(12 * X[:, 0] - 4))
    with torch.random.fork_rng():
        torch.manual_seed(3)
        model = SingleTaskGP(X, y.unsqueeze(-1))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    model.eval()
    with torch.no_grad():
        K = model.covar_module(X).to_dense().numpy()
        lam = float(model.likelihood.noise)
    z = ((y - y.mean()) / y.std()).numpy()  # Standardize: unbiased sd
    A = K + lam * np.eye(12)
    alpha = np.linalg.solve(A, z)
    eig = np.linalg.eigvalsh(K)
    gamma = 0.5 * float(np.sum(np.log1p(np.clip(eig, 0, None) / lam)))
    assert r.R_hat == pytest.approx(math.sqrt(lam), rel=1e-6)
    assert r.R_true == 0.0  # Forrester is noise-free
    assert r.B_hat == pytest.approx(math.sqrt(alpha @ K @ alpha), rel=1e-5)
    assert r.gamma_hat == pytest.approx(gamma, rel=1e-5)
    # Chowdhury & Gopalan Alg. 1 / Alg. 2 and Srinivas Thm 1 / Thm 3 at t = n + 1
    root = math.sqrt(2 * (gamma + 1 + math.log(1 / 0.1)))
    assert r.igp_ucb_B1 == pytest.approx(1 + r.R_hat * root, rel=1e-5)
    assert r.igp_ucb_Bhat == pytest.approx(r.B_hat + r.R_hat * root, rel=1e-5)
    root_ts = math.sqrt(2 * (gamma + 1 + math.log(2 / 0.1)))
    assert r.gp_ts_B1 == pytest.approx(1 + r.R_hat * root_ts, rel=1e-5)
    t = 13
    assert r.gp_ucb_thm1 == pytest.approx(
        math.sqrt(2 * math.log(512 * t**2 * math.pi**2 / (6 * 0.1)))
    )
    assert r.gp_ucb_thm3 == pytest.approx(
        math.sqrt(2 * r.B_hat**2 + 300 * gamma * math.log(t / 0.1) ** 3), rel=1e-5
    )


def test_noisy_problem_reports_the_standardized_noise() -> None:
    row = fb.fit_row("hartmann6-noisy", 10, seed=0)
    assert 0.0 < row.R_true < 1.0
    assert row.R_hat > 0.0 and row.B_hat > 0.0


def test_b_hat_is_the_median_at_n_to_two_digits() -> None:
    rows = [
        fb.FitRow("p", 30, s, 0.1, 0.1, 0.0, 1.0, b, 1, 1, 1, 1, 1)
        for s, b in enumerate((3.14159, 7.777, 5.4321))
    ] + [fb.FitRow("p", 10, 9, 0.1, 0.1, 0.0, 1.0, 100.0, 1, 1, 1, 1, 1)]
    assert fb.b_hat(rows, "p") == 5.4
    with pytest.raises(ValueError, match="no fit of 'q'"):
        fb.b_hat(rows, "q")
    summary = fb.fit_summary(rows)
    assert [(s["problem"], s["n"], s["seeds"]) for s in summary] == [
        ("p", 30, 3),
        ("p", 10, 1),
    ]
    assert summary[0]["B_hat"] == 5.4321


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="`problem` must be one of"):
        fb.fit_row("rosenbrock", 10, 0)
    with pytest.raises(ValueError, match="n"):
        fb.fit_row("branin", 1, 0)
    with pytest.raises(ValueError, match="delta"):
        fb.fit_row("branin", 10, 0, delta=1.5)


def test_loop_options_reach_the_ax_node() -> None:
    """The closed loop's variants differ only in the node options they pass, and
    those options are the node's B and beta (not dropped on the way)."""
    from bandit_experiments.ax_benchmark.runner import (
        AX_DEFAULT,
        bandit_strategy,
    )

    variants = fb.loop_variants(7.1)
    assert [kw for _, kw in variants.values()] == [
        {"B": 1.0},
        {"B": 7.1},
        {"beta": 0.5},
        {"beta": 2.0},
        {"B": 1.0},
    ]
    for strategy, kwargs in variants.values():
        gs = bandit_strategy(strategy, 0, kwargs)
        node = gs._nodes[-1]
        assert node.B == kwargs.get("B", 0.25)  # the practical default
        assert node.beta == kwargs.get("beta")
    from bandit_experiments.ax_benchmark.runner import PROBLEMS, new_client

    with pytest.raises(ValueError, match="node_kwargs"):
        new_client(PROBLEMS["branin"], "x", AX_DEFAULT, 0, {"B": 2.0})


@pytest.mark.slow  # ~9 s
def test_cli_fit_table(tmp_path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bandit_experiments",
            "beta-guide",
            "--seeds",
            "1",
            "--no-loop",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[1],  # bandit_experiments runs from a clone
    )
    assert out.returncode == 0, out.stderr
    table = [line for line in out.stdout.splitlines() if line.startswith("| ")]
    assert len(table) == 2 + 4 * 3  # header, rule, 4 problems x 3 sizes
    assert "| branin | 30 |" in out.stdout
    lines = (tmp_path / "fits.csv").read_text().splitlines()
    assert lines[0].startswith("problem,n,seed,lengthscale,R_hat,R_true,gamma_hat")
    assert len(lines) == 1 + 4 * 3


def test_closed_loop_summarizes_every_variant() -> None:
    """Five Ax loops (5 Sobol trials and one bandit trial each) summarized by the Ax
    benchmark's summary, B-hat given per problem and shown in the report's label."""
    rows = fb.closed_loop({"branin": 3.0}, seeds=1, trials=6, workers=1)
    assert [r["strategy"] for r in rows] == list(fb.loop_variants(3.0))
    for r in rows:
        assert r["problem"] == "branin" and r["B_hat"] == 3.0
        assert (r["seeds"], r["trials"]) == (1, 6)
        assert r["cumulative_regret_mean"] >= r["simple_regret_mean"] >= 0.0
    report = fb.loop_report(rows)
    assert len(report) == 2 + 5
    assert "| branin | IGP-UCB, B = B̂ = 3 |" in report[3]
    with pytest.raises(ValueError, match="workers"):
        fb.closed_loop({"branin": 3.0}, workers=0)
