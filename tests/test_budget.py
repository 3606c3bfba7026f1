"""Long-term constraints that hold the budget (issue 49): the practical reading's
multiplier replay (per-trial additive steps with a slack, kappa^1), the penalized
UCB over a multi-output model, its options (refused where they would be ignored,
a node stored before them replays as it was), the budget held on average by an Ax
loop while the plain strategy spends it, and the online benchmark's budget
problems and report."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.models import ModelListGP, SingleTaskGP

from botorch_bandits.acquisition.penalized import PenalizedUCB
from botorch_bandits.constraints import (
    ExponentialPenalty,
    additive_update,
    replay_multipliers,
)
from botorch_bandits.core import DecisionOptions
from botorch_bandits.core.features.constraints import PRACTICAL_LONG_TERM


# ------------------------------------------------------------ the multipliers
def test_the_practical_replay_steps_after_every_trial_with_slack() -> None:
    """kappa_{t+1} = [kappa_t + mu (g_t + eps)]^+ from kappa^1, by hand."""
    g = torch.tensor([[0.5], [-0.2], [-1.5], [0.1]], dtype=torch.double)
    rows = replay_multipliers(g, 1, "additive", step=2.0, slack=0.1, initial=1.0)
    k, expected = 1.0, [1.0]
    for v in g[:, 0].tolist():
        k = max(0.0, k + 2.0 * (v + 0.1))
        expected.append(k)
    assert rows[:, 0].tolist() == pytest.approx(expected)
    assert expected[3] == 0.0  # the clip at 0 acted
    # no slack and no kappa^1: the paper's Algorithm 3
    paper = replay_multipliers(g, 1, "additive", step=2.0)
    assert paper[0, 0] == 0 and paper[1, 0] == pytest.approx(1.0)
    assert additive_update(torch.zeros(1), torch.tensor([-0.05]), 1.0, 0.1) > 0


def test_the_replay_refuses_what_its_rule_does_not_use() -> None:
    g = torch.zeros(3, 1, dtype=torch.double)
    with pytest.raises(ValueError, match="`slack`"):
        replay_multipliers(g, 1, "additive", step=1.0, slack=-0.1)
    with pytest.raises(ValueError, match="`initial`"):
        replay_multipliers(g, 1, "additive", step=1.0, initial=math.inf)
    with pytest.raises(ValueError, match="does not use"):
        replay_multipliers(
            g, 1, "multiplicative", penalty=ExponentialPenalty(), slack=0.1
        )


# ------------------------------------------------------------- the acquisition
def _models() -> tuple[ModelListGP, SingleTaskGP, SingleTaskGP]:
    g = torch.Generator().manual_seed(0)
    X = torch.rand(8, 2, generator=g, dtype=torch.double)
    f = SingleTaskGP(X, (X.sum(-1, keepdim=True) - 1).sin())
    c = SingleTaskGP(X, X[:, :1] - 0.4)
    model = ModelListGP(f, c).eval()  # its hyperparameters as they are: not fitted
    return model, f, c


def test_penalized_ucb_is_the_lagrangian_of_the_bounds() -> None:
    """alpha = mu_f + sqrt(beta) s_f - kappa (mu_g + sqrt(beta) s_g - b), from the
    objective's and the constraint's own posteriors."""
    model, f, c = _models()
    X = torch.rand(5, 1, 2, dtype=torch.double)
    acqf = PenalizedUCB(model, beta=4.0, multipliers=[1.5], bounds=[0.1])
    pf, pc = f.posterior(X), c.posterior(X)
    ucb_f = pf.mean.reshape(-1) + 2.0 * pf.variance.sqrt().reshape(-1)
    ucb_g = pc.mean.reshape(-1) + 2.0 * pc.variance.sqrt().reshape(-1)
    expected = ucb_f - 1.5 * (ucb_g - 0.1)
    assert torch.allclose(acqf(X), expected, rtol=1e-10, atol=1e-10)
    # minimized objective: its lower bound; the constraints' own width
    low = PenalizedUCB(model, 4.0, 1.5, 0.1, maximize=False, constraint_beta=0.0)
    lcb = -pf.mean.reshape(-1) + 2.0 * pf.variance.sqrt().reshape(-1)
    assert torch.allclose(low(X), lcb - 1.5 * (pc.mean.reshape(-1) - 0.1))
    # no multiplier: the objective's UCB alone
    free = PenalizedUCB(model, 4.0, [0.0])
    assert torch.allclose(free(X), ucb_f)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"multipliers": [-1.0]}, "multipliers"),
        ({"multipliers": [1.0, 2.0]}, "multipliers"),
        ({"multipliers": [1.0], "bounds": [math.nan]}, "bounds"),
        ({"multipliers": [1.0], "beta": -1.0}, "beta"),
        ({"multipliers": [1.0], "objective_index": 2}, "objective_index"),
    ],
)
def test_penalized_ucb_names_a_bad_argument(kwargs, match) -> None:
    model, f, _ = _models()
    with pytest.raises(ValueError, match=match):
        PenalizedUCB(model, **{"beta": 1.0, **kwargs})
    with pytest.raises(ValueError, match="num_outputs=1"):
        PenalizedUCB(f, 1.0, [1.0])


# ----------------------------------------------------------------- the options
def test_each_mode_has_its_reading_of_the_long_term_constraints() -> None:
    practical = DecisionOptions.from_kwargs(long_term_constraints=True).constraints
    assert practical.model == "separate" and practical.epoch_length == 1
    assert practical.multiplier_update == "additive"
    assert practical.slack == PRACTICAL_LONG_TERM["slack"]
    assert practical.initial == PRACTICAL_LONG_TERM["initial_multiplier"]
    assert practical.step == PRACTICAL_LONG_TERM["step"]
    theory = DecisionOptions.from_kwargs(
        long_term_constraints=True, mode="theory"
    ).constraints
    assert (theory.model, theory.epoch_length, theory.slack, theory.initial) == (
        "composite",
        20,
        0.0,
        None,
    )
    assert theory.multiplier_update == "multiplicative" and theory.step == 0.5
    ts = DecisionOptions.from_kwargs(long_term_constraints=True, algorithm="GP-TS")
    assert ts.constraints.model == "composite"  # no confidence bound to share
    mult = DecisionOptions.from_kwargs(
        long_term_constraints=True, multiplier_update="multiplicative"
    ).constraints
    assert (mult.slack, mult.initial) == (0.0, None)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(slack=0.1), "long-term constraints, which are off"),
        (dict(long_term_constraints=True, mode="theory", slack=0.1), "slack=0.1"),
        (
            dict(
                long_term_constraints=True, mode="theory", constraint_model="separate"
            ),
            "constraint_model='separate'",
        ),
        (
            dict(
                long_term_constraints=True,
                algorithm="GP-TS",
                constraint_model="separate",
            ),
            "GP-TS",
        ),
        (
            dict(
                long_term_constraints=True, multiplier_update="multiplicative", step=2.0
            ),
            "step=2.0",
        ),
        (dict(long_term_constraints=True, penalty_c=2.0), "penalty_c=2.0"),
        (dict(long_term_constraints=True, slack=-1.0), "`slack`"),
        (
            dict(long_term_constraints=True, constraint_model="joint"),
            "constraint_model",
        ),
    ],
)
def test_the_long_term_options_are_refused_where_unused(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        DecisionOptions.from_kwargs(**kwargs)


def test_a_node_stored_before_the_practical_reading_replays_as_it_was() -> None:
    pytest.importorskip("ax")
    from botorch_bandits.ax.storage import bandit_node_from_json

    old = {
        "mode": "practical",
        "long_term_constraints": True,
        "epoch_length": 20,
        "multiplier_update": "additive",
        "step": 0.5,
    }
    node = bandit_node_from_json(**old)
    lt = node.decision_options.constraints
    assert (lt.model, lt.slack, lt.initial, lt.epoch_length) == (
        "composite",
        0.0,
        0.0,
        20,
    )
    node = bandit_node_from_json(**{**old, "multiplier_update": "multiplicative"})
    assert node.decision_options.constraints.initial is None


# ---------------------------------------------------------------- an Ax loop
def _budget_loop(options: dict, trials: int = 30) -> tuple[list[float], dict]:
    """Maximize f = x1 + 0.1 x2 on the unit square while the cost x1 is at most
    0.3 on average (told to the strategy when it reads constraints)."""
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax import bandit_generation_strategy

    client = Client(random_seed=0)
    client.configure_experiment(
        name="budget",
        parameters=[
            RangeParameterConfig(name=n, parameter_type="float", bounds=(0.0, 1.0))
            for n in ("x1", "x2")
        ],
    )
    told = options.get("long_term_constraints", False)
    client.configure_optimization(
        objective="f", outcome_constraints=["cost <= 0.3"] if told else None
    )
    client.set_generation_strategy(bandit_generation_strategy(**options))
    costs = []
    for _ in range(trials):
        ((index, p),) = client.get_next_trials(max_trials=1).items()
        costs.append(p["x1"])
        client.complete_trial(index, {"f": p["x1"] + 0.1 * p["x2"], "cost": p["x1"]})
    meta = client._experiment.trials[trials - 1].generator_runs[0].gen_metadata
    return costs, meta


def test_the_practical_defaults_hold_the_budget_that_plain_ucb_spends() -> None:
    """Before (the paper's epochs of 20 in the practical mode): the average cost
    over 30 trials was that of the strategy never told of the budget. Now it is
    within the bound at the middle and the end of the run, and the budget is used
    (not avoided): the last trials' cost is near the bound."""
    pytest.importorskip("ax")
    plain, _ = _budget_loop({})
    costs, meta = _budget_loop({"long_term_constraints": True})
    mean = sum(costs) / len(costs)
    assert sum(plain) / len(plain) > 0.6  # the unconstrained optimum has cost 1
    assert sum(costs[:15]) / 15 <= 0.3 + 0.01 and mean <= 0.3 + 0.01, costs
    assert sum(costs[-10:]) / 10 > 0.15, costs
    # the metadata's running average against the bound (g = cost - 0.3)
    assert meta["budget"]["trials"] == 29
    assert meta["budget"]["mean_g"][0] == pytest.approx(sum(costs[:29]) / 29 - 0.3)
    assert len(meta["constraint_fits"]) == 1 and meta["kappa"][0] > 0


# ------------------------------------------------ the core, beyond the defaults
def _history(n: int, m: int = 1, sems: bool = False):
    from botorch_bandits.core.history import History, TrialRecord

    g = torch.Generator().manual_seed(1)
    X = torch.rand(n, 2, generator=g, dtype=torch.double)
    trials = tuple(
        TrialRecord(
            index=i,
            x=tuple(x.tolist()),
            f=float(-((x - 0.7) ** 2).sum()),
            g=tuple(float(x[j % 2] - 0.4) for j in range(m)),
            g_sem=(0.01,) * m if sems else None,
            created=float(i),
            completed=i + 0.5,
        )
        for i, x in enumerate(X)
    )
    return History(trials=trials, num_constraints=m)


def _box():
    from botorch_bandits.core.domain import Domain

    sobol = torch.quasirandom.SobolEngine(2, scramble=True, seed=0)
    return Domain.box(sobol.draw(64, dtype=torch.double))


@pytest.mark.parametrize(
    "options",
    [
        dict(beta=2.0),  # BoTorch's UCB as the rule: its width is read from beta
        dict(sparse_after=8, sparse_size=6),  # the sparse objective and constraints
        dict(algorithm="qLogNEI", sparse_after=8, sparse_size=6),  # a list posterior
        dict(algorithm="qLogNEI"),
        dict(forgetting=True),
        dict(pending="censor", y_min=-1.0),
    ],
    ids=["beta", "sparse", "qlognei-sparse", "qlognei", "forgetting", "censor"],
)
def test_the_separate_constraint_gps_decide_under_each_option(options) -> None:
    """Before the review: beta= and the sparse model with qLogNEI stopped at the
    first decision (no sigma multiplier on BoTorch's UCB; a list posterior qLogNEI's
    sampler could not draw from)."""
    from botorch_bandits.core import decide

    opts = DecisionOptions.from_kwargs(long_term_constraints=True, **options)
    history = _history(12, m=2, sems=True)
    d = decide(history, opts, _box())
    again = decide(history, opts, _box())
    assert d.x == again.x  # seeded: the same decision
    meta = d.metadata
    assert len(meta["constraint_fits"]) == 2 and meta["budget"]["trials"] == 12
    assert all(0.0 <= v <= 1.0 for v in d.x)
    assert ("sparse" in meta) == ("sparse_after" in options)


def test_the_paper_update_in_the_practical_mode_keeps_the_papers_structure() -> None:
    """multiplier_update="multiplicative" asks for Algorithm 2: its epochs of 20
    and composite target in the practical mode too (no per-trial exponential
    update under a linear penalty)."""
    lt = DecisionOptions.from_kwargs(
        long_term_constraints=True, multiplier_update="multiplicative"
    ).constraints
    assert (lt.epoch_length, lt.model, lt.slack, lt.initial) == (
        20,
        "composite",
        0.0,
        None,
    )
    with pytest.raises(ValueError, match="num_epochs=5"):
        DecisionOptions.from_kwargs(long_term_constraints=True, num_epochs=5)
    composite = DecisionOptions.from_kwargs(
        long_term_constraints=True, constraint_model="composite", num_epochs=5
    )
    assert composite.constraints.num_epochs == 5


# ---------------------------------------------------------- the benchmark's CLI
def test_the_budget_problems_run_keep_their_jobs_and_report(tmp_path, capsys) -> None:
    """``--trials`` sets the budget jobs' horizon (before: silently each problem's
    own); a second run reuses the kept job; ``--budget-report`` reads it."""
    pytest.importorskip("ax")
    from bandit_experiments.cli import main

    out = tmp_path / "validation"
    argv = ["ax-online", "--problems", "branin-sweet-spot", "--strategies", "IGP-UCB"]
    argv += ["--seeds", "1", "--trials", "8", "--workers", "1", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 0
    (job,) = (out / "jobs").glob("*.json")
    assert job.name.endswith("__T8.json")
    stamp = job.stat().st_mtime_ns
    assert main([*argv, "--out", str(out)]) == 0
    assert job.stat().st_mtime_ns == stamp  # kept, not run again
    capsys.readouterr()
    assert main(["ax-online", "--budget-report", str(tmp_path)]) == 0
    report = capsys.readouterr().out
    assert "### Budget problems, validation" in report
    assert "| branin-sweet-spot | IGP-UCB |" in report
