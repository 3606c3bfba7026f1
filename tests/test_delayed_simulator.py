"""The delayed-feedback simulator against an independent recomputation: every decision
must be the argmax of the acquisition computed from scratch with a ``SingleTaskGP`` on
the ledger's view of the recorded trace (censor / ignore / hallucinate)."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.acquisition.analytic import UpperConfidenceBound

from botorch_bandits.delays import (
    BatchDelay,
    DelayDistribution,
    ExponentialDelay,
    FeedbackLedger,
    FixedDelay,
    GeometricDelay,
    InputDependentDelay,
    PoissonDelay,
)
from botorch_bandits.models import fixed_gp
from botorch_bandits.test_functions.delayed import simulate_delayed
from botorch_bandits.test_functions.problems import (
    BanditProblem,
    make_kernel,
    verma_gp_problem,
)

NOISE = 0.05


def _problem(num_seeds: int = 3, num_arms: int = 30) -> BanditProblem:
    gen = torch.Generator().manual_seed(7)
    arms = torch.rand(num_arms, 1, generator=gen, dtype=torch.double)
    K = make_kernel("rbf", 0.15)(arms).to_dense().detach()
    L = torch.linalg.cholesky(K + 1e-8 * torch.eye(num_arms, dtype=torch.double))
    values = (L @ torch.randn(num_arms, num_seeds, generator=gen, dtype=torch.double)).T
    values = (values - values.min(-1, keepdim=True).values) / (
        values.max(-1, keepdim=True).values - values.min(-1, keepdim=True).values
    )
    sd = torch.full((num_seeds,), NOISE**0.5, dtype=torch.double)
    return BanditProblem(
        name="toy",
        arms=arms,
        values=values,
        K=K,
        noise_sd=sd,
        noise=sd**2,
        rkhs_norm=torch.ones(num_seeds, dtype=torch.double),
        kernel="rbf",
    )


def _ledger(result, seed: int, window, clock: str) -> FeedbackLedger:
    ledger = FeedbackLedger(window=window, y_min=0.0, clock=clock)
    for s in range(result.values.shape[0]):
        at = float(result.issue_times[s])
        qid = ledger.issue(int(result.arms[s, seed]), at=at)
        ledger.receive(
            qid,
            float(result.observations[s, seed]),
            at=float(result.arrival_times[s, seed]),
        )
    return ledger


def _gp(problem, arm_ids, targets):
    kernel = make_kernel("rbf", 0.15)
    X = problem.arms[torch.as_tensor(arm_ids, dtype=torch.long)].reshape(-1, 1)
    return fixed_gp(X, targets.reshape(-1, 1), kernel, NOISE)


def _expected_arm(problem, result, seed, step, algorithm, window, clock) -> int:
    """The decision at ``step`` (1-based), recomputed from the ledger. The baselines
    use every arrived feedback (no window); only the SDF methods censor."""
    sdf = algorithm.endswith("SDF")
    ledger = _ledger(result, seed, window if sdf else None, clock)
    now = float(result.issue_times[step - 1])
    qs = ledger.issued_before(now)
    arms = problem.arms
    if algorithm == "GP-UCB":
        done = ledger.completed(now)
        if not done:
            return 0  # flat prior: ties go to the lowest index
        model = _gp(
            problem,
            [q.x for q in done],
            torch.tensor([q.y for q in done], dtype=torch.double),
        )
        scores = UpperConfidenceBound(model, beta=1.0)(arms.unsqueeze(-2))
    elif algorithm == "GP-BUCB":
        done = ledger.completed(now)

        def completed_mean(points):
            if not done:
                return torch.zeros(len(points), dtype=torch.double)
            m = _gp(
                problem,
                [q.x for q in done],
                torch.tensor([q.y for q in done], dtype=torch.double),
            )
            idx = torch.as_tensor(points, dtype=torch.long)
            return m.posterior(arms[idx].unsqueeze(-2)).mean.reshape(-1).detach()

        targets = ledger.hallucinated_targets(now, completed_mean)
        model = _gp(problem, [q.x for q in qs], targets)
        scores = UpperConfidenceBound(model, beta=1.0)(arms.unsqueeze(-2))
    else:  # GP-UCB-SDF, beta = 1, B_y = 1
        model = _gp(problem, [q.x for q in qs], ledger.censored_targets(now))
        if clock == "iteration":
            recent = [q.x for q in qs[-int(window) :]] if window else []
        else:
            recent = [q.x for q in qs if q.issued_at >= now - window]
        post = model.posterior(
            arms[torch.as_tensor(recent, dtype=torch.long)].unsqueeze(-2)
        )
        nu = post.variance.clamp_min(0).sqrt().sum() + 1.0
        p = model.posterior(arms.unsqueeze(-2))
        scores = p.mean.reshape(-1) + nu * p.variance.clamp_min(0).sqrt().reshape(-1)
    return int(scores.detach().reshape(-1).argmax())


@pytest.mark.parametrize("algorithm", ["GP-UCB-SDF", "GP-UCB", "GP-BUCB"])
@pytest.mark.parametrize("clock", ["iteration", "time"])
def test_every_decision_matches_a_recomputation_from_the_ledger(
    algorithm, clock
) -> None:
    problem = _problem()
    if clock == "iteration":
        delays, window = PoissonDelay(4.0), 5
    else:
        delays, window = ExponentialDelay(2.0), 3.0
    result = simulate_delayed(
        problem,
        algorithm,
        25,
        delays,
        window=window,
        clock=clock,
        issue_interval=0.7,
        num_init=2,
        seed=3,
    )
    assert bool((result.late).any()), "the trace should contain late feedback"
    for seed in range(problem.num_seeds):
        for step in range(3, 26):
            assert int(result.arms[step - 1, seed]) == _expected_arm(
                problem, result, seed, step, algorithm, window, clock
            ), (algorithm, clock, seed, step)


def test_simple_regret_counts_converted_evaluations_only() -> None:
    problem = _problem(num_seeds=2)
    r = simulate_delayed(problem, "GP-UCB-SDF", 15, PoissonDelay(3.0), window=6, seed=1)
    sr = r.simple_regret
    for seed in range(2):
        for t in range(1, 16):
            now = t + 1  # the next decision (iteration clock: query s at step s)
            got = [
                float(r.values[s, seed])
                for s in range(t)
                if float(r.arrival_times[s, seed]) <= now
            ]
            best = max(got) if got else float(problem.values[seed].min())
            assert math.isclose(
                float(sr[t - 1, seed]), float(problem.values[seed].max()) - best
            )


def test_batch_delays_release_whole_batches() -> None:
    problem = _problem(num_seeds=2)
    B = 4
    r = simulate_delayed(problem, "GP-BUCB", 12, BatchDelay(B), window=B, seed=0)
    # query s (1-based) of batch k is usable at the first decision of batch k + 1
    s = torch.arange(1, 13, dtype=torch.double)
    first_of_next = (torch.div(s - 1, B, rounding_mode="floor") + 1) * B + 1
    assert torch.equal(r.arrival_times[:, 0], first_of_next)
    assert not bool(r.late.any())  # m = B_x never censors (rho_m = 1)


def test_contexts_restrict_the_arms_and_the_regret() -> None:
    problem = _problem(num_seeds=2, num_arms=30)
    arm_contexts = torch.arange(30) % 3
    contexts = torch.tensor([0, 1, 2, 2, 1, 0, 0, 1, 2, 1])
    r = simulate_delayed(
        problem,
        "GP-UCB-SDF",
        10,
        PoissonDelay(2.0),
        window=4,
        contexts=contexts,
        arm_contexts=arm_contexts,
        num_init=1,
    )
    assert torch.equal(arm_contexts[r.arms], contexts.unsqueeze(-1).expand(10, 2))
    for t in range(10):
        in_ctx = problem.values[:, arm_contexts == contexts[t]]
        assert torch.equal(r.optimum[t], in_ctx.max(-1).values)
    assert bool((r.cumulative_regret[-1] >= 0).all())


@pytest.mark.parametrize("algorithm", ["GP-TS-SDF", "asy-TS", "GP-BTS"])
def test_thompson_variants_run_and_are_reproducible(algorithm) -> None:
    problem = _problem(num_seeds=2)
    a = simulate_delayed(problem, algorithm, 12, GeometricDelay(0.3), window=5, seed=4)
    b = simulate_delayed(problem, algorithm, 12, GeometricDelay(0.3), window=5, seed=4)
    assert torch.equal(a.arms, b.arms) and torch.equal(a.delays, b.delays)
    assert len(set(a.arms[:, 0].tolist())) > 1


def test_theory_beta_runs_for_every_view() -> None:
    problem = _problem(num_seeds=2)
    for algorithm in ("GP-UCB-SDF", "GP-UCB", "GP-BUCB", "GP-TS-SDF"):
        r = simulate_delayed(
            problem, algorithm, 8, PoissonDelay(2.0), window=4, beta="theory"
        )
        assert r.arms.shape == (8, 2)


def test_bad_input_is_named() -> None:
    problem = _problem(num_seeds=1)
    with pytest.raises(ValueError, match="window"):
        simulate_delayed(problem, "GP-UCB-SDF", 5, PoissonDelay(2.0), window=-1)
    with pytest.raises(ValueError, match="algorithm"):
        simulate_delayed(problem, "GP-UCB-XYZ", 5, PoissonDelay(2.0))
    with pytest.raises(ValueError, match="mean_fn"):
        simulate_delayed(
            problem, "GP-UCB", 5, InputDependentDelay(lambda x: -x[..., 0] - 1.0)
        )

    class Negative(DelayDistribution):
        def _draw(self, points, step, generator):
            return torch.full(points.shape[:-1], -1.0)

    with pytest.raises(ValueError, match="delays must be finite and >= 0"):
        simulate_delayed(problem, "GP-UCB", 5, Negative())
    with pytest.raises(ValueError, match="mean"):
        PoissonDelay(-1.0)
    with pytest.raises(ValueError, match="delay"):
        FixedDelay(-2)
    with pytest.raises(ValueError, match="p"):
        GeometricDelay(1.5)
    with pytest.raises(ValueError, match="batch_size"):
        BatchDelay(0)


def test_verma_problem_is_normalized() -> None:
    p = verma_gp_problem(num_seeds=2, num_points=200)
    assert torch.allclose(p.values.max(-1).values, torch.ones(2, dtype=torch.double))
    assert torch.allclose(p.values.min(-1).values, torch.zeros(2, dtype=torch.double))


def test_reproduce_delayed_writes_simple_regret_csv(tmp_path) -> None:
    import csv

    from bandit_experiments.reproduction.runner import (
        CSV_COLUMNS,
        DELAYED_CSV_METRICS,
        reproduce,
    )

    result = reproduce(
        "verma2022-fig1d",
        horizon=12,
        seeds=2,
        out=tmp_path,
        workers=1,
        show_progress=False,
    )
    with open(result.csv_path) as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) - 1 == 3 * 12 * len(DELAYED_CSV_METRICS)  # algos x T x metrics
    assert {r[2] for r in rows[1:]} == {"GP-UCB-SDF", "GP-BUCB", "GP-UCB"}
    assert result.png_path.stat().st_size > 1000
    with pytest.raises(ValueError, match="algorithms"):
        reproduce("verma2022-fig1c", horizon=3, seeds=1, out=None, algorithms=["EI"])


def test_lr_workload_runs_end_to_end_with_delays() -> None:
    """Real training of logistic regression (a 3 x 3 x 3 grid here), Poisson delays."""
    pytest.importorskip("sklearn")
    from botorch_bandits.test_functions.lr_tuning import (
        lr_tuning_problem,
        validation_accuracy,
    )

    problem = lr_tuning_problem(num_seeds=2, points_per_dim=3, epochs=5)
    acc = problem.values[0]
    assert bool(((acc > 0.5) & (acc <= 1)).all())
    # the table is the training: recompute one configuration from scratch
    assert float(acc[13]) == validation_accuracy(80, 0.5000005, 0.5000005, epochs=5)
    for algorithm in ("GP-UCB-SDF", "GP-BUCB", "asy-TS"):
        r = simulate_delayed(problem, algorithm, 10, PoissonDelay(3.0), window=6)
        best = r.best_value[-1]
        assert bool((best <= acc.max()).all()) and bool((best >= acc.min()).all())
    with pytest.raises(ValueError, match="batch_size"):
        validation_accuracy(0, 0.1, 0.1)


def test_in_window_regret_ignores_late_feedback_for_sdf_only() -> None:
    problem = _problem(num_seeds=2)
    r = simulate_delayed(problem, "GP-UCB-SDF", 15, PoissonDelay(4.0), window=2, seed=2)
    assert bool(r.late.any())
    iw, sr = r.simple_regret_in_window, r.simple_regret
    assert bool((iw >= sr).all()) and bool((iw > sr).any())
    t = 15
    usable = r.converted(t) & (r.delays[:t] <= 2)
    for seed in range(2):
        vals = r.values[:t, seed][usable[:, seed]]
        best = float(vals.max()) if vals.numel() else float(problem.values[seed].min())
        assert math.isclose(float(iw[-1, seed]), float(r.optimum[-1, seed]) - best)
    base = simulate_delayed(problem, "GP-UCB", 15, PoissonDelay(4.0), window=2, seed=2)
    assert torch.equal(base.simple_regret_in_window, base.simple_regret)


@pytest.mark.parametrize(
    "keep_root, root_method", [(False, None), (True, None), (True, "pivoted")]
)
def test_with_prior_equals_replaying_every_observation(keep_root, root_method) -> None:
    from botorch_bandits.models import FiniteArmGP

    problem = _problem(num_seeds=3)
    gp = FiniteArmGP(
        problem.arms, problem.K, problem.noise, num_seeds=3, keep_root=keep_root
    )
    gen = torch.Generator().manual_seed(0)
    for step in range(12):
        idx = torch.randint(30, (3,), generator=gen)
        idx[1] = -1 if step % 3 == 1 else idx[1]  # seed 1 skips some rounds
        idx[2] = 4 if step % 2 else idx[2]  # seed 2 repeats an arm
        gp.observe(idx, torch.rand(3, generator=gen, dtype=torch.double))
    K = 1.7 * problem.K.pow(0.5).expand(3, 30, 30).clone()  # a wider, larger kernel
    lam = torch.tensor([0.02, 0.05, 0.1], dtype=torch.double)
    replayed = FiniteArmGP(problem.arms, K, lam, num_seeds=3, keep_root=keep_root)
    for a, y in zip(gp._arms_hist, gp._y_hist, strict=True):
        replayed.observe(a, y.nan_to_num(0.0))
    new = gp.with_prior(K, lam, root_method=root_method)
    assert new.root_method == (root_method or "eigh")
    assert torch.equal(new.counts_, replayed.counts_)
    assert torch.equal(new.num_observations_, replayed.num_observations_)
    assert torch.allclose(new.covariance_, replayed.covariance_, atol=1e-10)
    assert torch.allclose(new.mean_, replayed.mean_, atol=1e-10)
    assert torch.allclose(new.information_gain_, replayed.information_gain_, atol=1e-10)
    if keep_root:
        R = new.covariance_root_
        assert torch.allclose(R @ R.transpose(-1, -2), replayed.covariance_, atol=1e-10)
    new.observe(torch.tensor([3, 3, 3]), torch.ones(3, dtype=torch.double))
    replayed.observe(torch.tensor([3, 3, 3]), torch.ones(3, dtype=torch.double))
    assert torch.allclose(new.mean_, replayed.mean_, atol=1e-10)


def test_refits_run_for_every_view() -> None:
    problem = _problem(num_seeds=2)
    for algorithm in ("GP-TS-SDF", "GP-BUCB"):  # the censor and hallucinate paths
        fixed = simulate_delayed(problem, algorithm, 9, PoissonDelay(2.0), window=4)
        refit = simulate_delayed(
            problem, algorithm, 9, PoissonDelay(2.0), window=4, refit_every=4
        )
        assert torch.equal(fixed.arms[:4], refit.arms[:4])  # first refit: decision 5
        assert refit.arms.shape == (9, 2)
    with pytest.raises(ValueError, match="refit_every"):
        simulate_delayed(problem, "GP-UCB", 5, PoissonDelay(2.0), refit_every=0)


@pytest.mark.parametrize("window", [None, 0.0, 3.0, 2.5])
def test_the_simulators_censoring_rule_is_the_ledgers(window) -> None:
    """The delayed simulator keeps the censoring rule as batched masks (a value is
    used once it has arrived, and only if its delay is within the window); the
    decision core keeps it in ``FeedbackLedger``. On the same events -- integer
    steps with integer delays (the iteration clock, boundaries included) and
    random times -- the two say the same for every query at every decision."""
    from botorch_bandits.delays import FeedbackLedger
    from botorch_bandits.test_functions.delayed import arrived_by, within_window

    gen = torch.Generator().manual_seed(0)
    clocks = {
        "iteration": (
            torch.arange(1, 13, dtype=torch.double),
            torch.randint(0, 6, (12, 3), generator=gen).double(),
        ),
        "time": (
            torch.rand(12, generator=gen, dtype=torch.double).cumsum(0) * 3,
            torch.rand(12, 3, generator=gen, dtype=torch.double) * 5,
        ),
    }
    for clock, (issue, delay) in clocks.items():
        if clock == "iteration" and window is not None and window % 1:
            continue  # a window in iterations is a whole number
        for now in torch.unique(
            torch.cat([issue, (issue.unsqueeze(-1) + delay).flatten()])
        ):
            k = int((issue < now).sum())  # the queries issued before the decision
            batched = arrived_by(issue[:k], delay[:k], now) & within_window(
                delay[:k], window
            )
            for s in range(3):
                ledger = FeedbackLedger(window, y_min=0.0, clock=clock)
                for i in range(k):
                    q = ledger.issue([float(i)], at=float(issue[i]))
                    ledger.receive(q, 1.0, at=float(issue[i] + delay[i, s]))
                rule = [ledger.usable(q, float(now)) for q in ledger.queries]
                assert batched[:, s].tolist() == rule, (clock, float(now), s)
