"""Long-term constraints (Shi & Eryilmaz 2022): penalty functions, multiplier updates,
epoch replay and composite targets, pinned against hand values."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_bandits.constraints import (
    CallablePenalty,
    ExponentialPenalty,
    MultiplierCapWarning,
    PolynomialPenalty,
    additive_update,
    check_penalty,
    composite_targets,
    epoch_schedule,
    multiplicative_update,
    replay_multipliers,
)
from botorch_bandits.models.finite_arm import FiniteArmGP
from botorch_bandits.test_functions.constrained import _ConstrainedRun
from botorch_bandits.test_functions.simulator import ENGINE_DEFER

D = torch.double


def test_penalties_by_hand() -> None:
    exp = ExponentialPenalty(c=2.0)
    assert exp(torch.tensor([-1.0, 0.0, 0.5], dtype=D)).tolist() == pytest.approx(
        [1.0, 1.0, math.e**1.0]
    )
    poly = PolynomialPenalty(c=2.0, n=3)
    assert poly(torch.tensor([-3.0, 0.5, 1.0], dtype=D)).tolist() == pytest.approx(
        [1.0, 8.0, 27.0]
    )
    # both satisfy Assumption 2 on a grid (eqs. 9, 10)
    check_penalty(exp)
    check_penalty(poly)


def test_user_penalty_checked_for_assumption_2() -> None:
    ok = CallablePenalty(lambda x: torch.where(x > 0, torch.exp(3 * x), 1.0))
    assert float(ok(torch.tensor(1.0, dtype=D))) == pytest.approx(math.exp(3))
    with pytest.raises(ValueError, match=r"2\(1\).*1 for x <= 0"):
        CallablePenalty(lambda x: torch.exp(x))  # psi(-1) != 1
    with pytest.raises(ValueError, match=r"2\(1\).*convex"):
        CallablePenalty(lambda x: 1 + x.clamp_min(0).sqrt())
    with pytest.raises(ValueError, match=r"2\(1\).*increasing"):
        CallablePenalty(lambda x: torch.ones_like(x))
    # 1 + x^2 is convex, 1 at 0, increasing on x >= 0, but
    # (1 + x^2)(1 + y^2) < 1 + (x + y)^2 for small positive x, y
    with pytest.raises(ValueError, match=r"2\(2\)"):
        CallablePenalty(lambda x: 1 + x.clamp_min(0) ** 2)


def test_bad_parameters_name_the_argument() -> None:
    with pytest.raises(ValueError, match="`c`"):
        ExponentialPenalty(c=0.0)
    with pytest.raises(ValueError, match="`n`"):
        PolynomialPenalty(c=1.0, n=0.5)
    with pytest.raises(ValueError, match="`step`"):
        additive_update(torch.zeros(1, dtype=D), torch.ones(1, dtype=D), step=0.0)
    with pytest.raises(ValueError, match="`epoch_length`"):
        replay_multipliers(torch.zeros(4, 1, dtype=D), 0, penalty=ExponentialPenalty())
    with pytest.raises(ValueError, match="`rule`"):
        replay_multipliers(torch.zeros(4, 1, dtype=D), 2, rule="dual")
    with pytest.raises(ValueError, match="`g_values` must be finite"):
        replay_multipliers(
            torch.tensor([[math.nan]], dtype=D), 1, penalty=ExponentialPenalty()
        )
    with pytest.raises(ValueError, match="`kappa`"):
        composite_targets(
            torch.zeros(2, dtype=D),
            torch.zeros(2, 1, dtype=D),
            torch.ones(2, dtype=D),
            penalty=ExponentialPenalty(),
        )
    with pytest.raises(ValueError, match="`delta`"):
        epoch_schedule("additive", 1.5, 2, 0.1, torch.zeros(1, dtype=D))


def test_update_rules_by_hand() -> None:
    psi = ExponentialPenalty(c=1.0)
    log_k = multiplicative_update(
        torch.zeros(2, dtype=D), torch.tensor([0.5, -1.0], dtype=D), psi
    )
    assert torch.exp(log_k).tolist() == pytest.approx([math.exp(0.5), 1.0])
    k = additive_update(torch.zeros(1, dtype=D), torch.tensor([0.4], dtype=D), 0.5)
    assert k.tolist() == pytest.approx([0.2])
    k = additive_update(k, torch.tensor([-1.0], dtype=D), 0.5)
    assert k.tolist() == [0.0]  # projected onto kappa >= 0


def test_overflow_guard_warns_and_caps() -> None:
    psi = ExponentialPenalty(c=1.0)
    with pytest.warns(MultiplierCapWarning, match="capped"):
        log_k = multiplicative_update(
            torch.zeros(1, dtype=D), torch.tensor([1000.0], dtype=D), psi, 50.0
        )
    assert float(log_k) == 50.0 and math.isfinite(float(torch.exp(log_k)))


def test_replay_is_a_function_of_the_constraint_history() -> None:
    psi = ExponentialPenalty(c=1.0)
    g = torch.tensor([[1.0], [0.0], [-1.0], [-2.0], [5.0]], dtype=D)  # S = 2
    kappa = replay_multipliers(g, 2, penalty=psi)
    # epoch means 0.5 and -1.5; the partial third epoch does not update
    assert kappa[:, 0].tolist() == pytest.approx([1.0, math.exp(0.5), math.exp(0.5)])
    kappa_add = replay_multipliers(g, 2, rule="additive", step=0.5)
    assert kappa_add[:, 0].tolist() == pytest.approx([0.0, 0.25, 0.0])
    # the same history gives the same multipliers (resume from data)
    assert torch.equal(kappa, replay_multipliers(g.clone(), 2, penalty=psi))


def test_composite_targets_by_hand() -> None:
    f = torch.tensor([1.0, 2.0], dtype=D)
    g = torch.tensor([[0.5, -1.0], [-1.0, 1.0]], dtype=D)
    kappa = torch.tensor([2.0, 3.0], dtype=D)
    psi = ExponentialPenalty(c=1.0)
    F = composite_targets(f, g, kappa, penalty=psi)
    assert F.tolist() == pytest.approx(
        [1.0 - 2.0 * (math.exp(0.5) - 1.0), 2.0 - 3.0 * (math.e - 1.0)]
    )
    G = composite_targets(f, g, kappa, rule="additive")
    assert G.tolist() == pytest.approx([1.0 - 1.0 + 3.0, 2.0 + 2.0 - 3.0])
    assert epoch_schedule("multiplicative", 0.1, 5, 0.1, kappa) == pytest.approx(
        (0.02, 0.1)
    )
    assert epoch_schedule("additive", 0.1, 5, 0.1, kappa) == pytest.approx(
        (0.01, 0.1 * math.sqrt(14.0))
    )


def test_set_targets_rebuilds_the_mean_exactly() -> None:
    from botorch_bandits.models import FiniteArmGP, fixed_gp
    from botorch_bandits.test_functions.problems import make_kernel

    gen = torch.Generator().manual_seed(0)
    arms = torch.rand(15, 1, generator=gen, dtype=D)
    kernel = make_kernel("rbf", 0.3)
    engine = FiniteArmGP(arms, kernel, 0.05, num_seeds=2)
    pulls = torch.randint(0, 15, (30, 2), generator=gen)
    pulls[3, 1] = -1  # a skipped observation stays skipped
    for i in range(30):
        engine.observe(pulls[i], torch.randn(2, generator=gen, dtype=D))
    new = torch.randn(30, 2, generator=gen, dtype=D)
    engine.set_targets(new)
    for s in range(2):
        kept = pulls[:, s] >= 0
        ref = fixed_gp(arms[pulls[kept, s]], new[kept, s].unsqueeze(-1), kernel, 0.05)
        expected = ref.posterior(arms).mean.squeeze(-1)
        assert torch.allclose(engine.mean_[s], expected, atol=1e-10)


def test_constrained_simulation_replays_its_multipliers() -> None:
    from botorch_bandits.test_functions.constrained import (
        shi2022_e1_problem,
        simulate_constrained,
    )

    problem = shi2022_e1_problem(noisy_g=True, points_per_dim=13)
    psi = ExponentialPenalty(1.0)
    for algorithm, rule in (("Alg2", "multiplicative"), ("Alg3", "additive")):
        res = simulate_constrained(
            problem, algorithm, horizon=23, epoch_length=5, num_seeds=3, seed=1
        )
        assert res.kappa.shape == (5, 3, 1)  # ceil(23 / 5) epochs
        for s in range(3):
            replay = replay_multipliers(
                res.g_obs[:, s],
                5,
                rule,
                penalty=psi if rule == "multiplicative" else None,
                step=0.5 if rule == "additive" else None,
            )
            assert torch.allclose(res.kappa[:, s], replay[:5])
        # CV from the true g values, regret against the constrained optimum
        g_sum = problem.g[res.arms].cumsum(0).clamp_min(0).norm(dim=-1)
        assert torch.allclose(res.constraint_violation, g_sum)
        assert torch.allclose(
            res.cumulative_regret, (problem.optimum - problem.f[res.arms]).cumsum(0)
        )
    again = simulate_constrained(
        problem, "Alg3", horizon=23, epoch_length=5, num_seeds=3, seed=1
    )
    assert torch.equal(again.arms, res.arms)
    unconstrained = simulate_constrained(problem, "IGP-UCB", horizon=12, num_seeds=2)
    assert float(unconstrained.kappa.abs().max()) == 0.0
    cei = simulate_constrained(problem, "LogCEI", horizon=8, num_seeds=2, seed=3)
    assert cei.arms.shape == (8, 2) and torch.isfinite(cei.constraint_violation).all()
    # LogCEI's own choice (after the random first point) moves off a constant arm
    assert len(set(cei.arms[:, 0].tolist())) > 1
    # its objective model sees f itself past every epoch boundary (no multipliers,
    # no composite targets): its mean is that of a GP fed the observed f alone
    cei = simulate_constrained(
        problem, "LogCEI", horizon=12, epoch_length=4, num_seeds=2, seed=3
    )
    assert float(cei.kappa.abs().max()) == 0.0
    run = _ConstrainedRun(
        problem,
        "LogCEI",
        "multiplicative",
        ExponentialPenalty(1.0),
        0.5,
        0.1,
        3,
        "IGP-UCB",
        4,
    )  # the simulation's steps, to read its objective model at the end
    run.start(2, 3, ENGINE_DEFER)
    for t in range(1, 13):
        if (t - 1) % 4 == 0:
            run.new_epoch(t)
        run.observe(run.choose(t))
    alone = FiniteArmGP(problem.arms, problem.K, problem.noise, num_seeds=2)
    for idx, y in zip(run.arms_t, run.fo_t, strict=True):
        alone.observe(idx, y)
    assert torch.equal(torch.stack(run.arms_t), cei.arms)
    assert torch.allclose(run.model.mean_, alone.mean_, rtol=1e-9, atol=1e-9)
    ts = simulate_constrained(
        problem, "Alg2", horizon=12, epoch_length=4, num_seeds=2, inner="GP-TS"
    )
    assert ts.kappa.shape == (3, 2, 1)
    with pytest.raises(ValueError, match="algorithm"):
        simulate_constrained(problem, "ADMMBO")
    with pytest.raises(ValueError, match="inner"):
        simulate_constrained(problem, "Alg2", inner="EI")
    with pytest.raises(ValueError, match="epoch_length"):
        simulate_constrained(problem, "Alg2", epoch_length=0)


def test_constrained_reproduction_writes_its_metrics(tmp_path, capsys) -> None:
    import csv

    from bandit_experiments.cli import main

    assert (
        main(
            [
                "reproduce",
                "shi2022-fig4",
                "--smoke",
                "--out",
                str(tmp_path),
                "--workers",
                "1",
                "--no-progress",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "V_t/t" in out and "Alg3" in out and "LogCEI" in out
    with open(tmp_path / "shi2022-fig4.csv") as fh:
        rows = list(csv.DictReader(fh))
    metrics = {r["metric"] for r in rows}
    assert metrics == {
        "cumulative_regret",
        "constraint_violation",
        "average_regret",
        "average_constraint_violation",
        "average_utility",
    }
    assert len(rows) == 3 * 30 * 5  # algorithms x T x metrics
    assert (tmp_path / "shi2022-fig4.png").exists()
