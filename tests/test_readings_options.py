"""Settings the papers leave unstated, made explicit options of the finite-arm
simulators: the EI / PI incumbent and PI margin (simulator), the GP-TS-SDF draw's scale
(delayed), and the signal variance of Srinivas et al.'s GP samples (problems)."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_bandits.delays import FixedDelay, GeometricDelay
from botorch_bandits.models import FiniteArmGP, fixed_gp
from botorch_bandits.test_functions import delayed as D
from botorch_bandits.test_functions import problems as P
from botorch_bandits.test_functions.simulator import (
    INCUMBENT_READINGS,
    PI_MARGIN,
    POLICIES,
    StepContext,
    simulate,
)


# --------------------------------------------------------------------------- PI margin
def _observed_model(problem: P.BanditProblem, pulls: list[list[int]], seed: int = 0):
    """A FiniteArmGP on ``problem`` after ``pulls`` (per step, one arm per seed) with
    random observations; returns ``(model, idx (steps x S), y (steps x S))``."""
    gen = torch.Generator().manual_seed(seed)
    model = FiniteArmGP(
        problem.arms, problem.K, problem.noise, num_seeds=problem.num_seeds
    )
    idx = torch.tensor(pulls, dtype=torch.long)
    y = torch.randn(idx.shape, generator=gen, dtype=torch.double)
    for a, obs in zip(idx, y, strict=True):
        model.observe(a, obs)
    return model, idx, y


def _reference_log_pi(problem, idx, y, incumbent: str) -> torch.Tensor:
    """``N x S`` log P(f(x) > f+ + xi) recomputed per seed from a plain fixed GP:
    f+ = the best observation or the largest posterior mean among the pulled arms."""
    cols = []
    for s in range(problem.num_seeds):
        arms = problem.arms[s]
        gp = fixed_gp(
            arms[idx[:, s]],
            y[:, s].unsqueeze(-1),
            P.make_kernel("rbf", 0.2),
            float(problem.noise[s]),
        )
        with torch.no_grad():
            post = gp.posterior(arms.unsqueeze(-2))
        mu = post.mean.reshape(-1)
        sd = post.variance.clamp_min(1e-30).sqrt().reshape(-1)
        if incumbent == "observed":
            best = y[:, s].max()
        else:
            best = mu[idx[:, s].unique()].max()
        cols.append(torch.special.log_ndtr((mu - best - PI_MARGIN) / sd))
    return torch.stack(cols, -1)


@pytest.mark.parametrize(
    ("name", "plain", "incumbent"),
    [("PI-xi", "PI", "observed"), ("PI-mean-xi", "PI-mean", "posterior_mean")],
)
def test_pi_margin_scores_log_pi_at_incumbent_plus_xi(name, plain, incumbent) -> None:
    problem = P.rkhs_problem("rbf", num_seeds=2, num_arms=12)
    model, idx, y = _observed_model(problem, [[0, 3], [5, 5], [9, 1]])
    ctx = StepContext(
        t=4, best_y=y.max(0).values, step_seed=0, delta=0.1, beta_scale=1.0
    )
    X = model.score_points
    with torch.no_grad():
        scores = POLICIES[name](model, problem, ctx)(X)  # N x S
        plain_scores = POLICIES[plain](model, problem, ctx)(X)
    expected = _reference_log_pi(problem, idx, y, incumbent)
    assert PI_MARGIN == 0.01
    assert torch.allclose(scores, expected, rtol=1e-6, atol=1e-8)
    # the margin lowers every probability: xi is really there
    assert bool((scores < plain_scores).all())
    assert name in INCUMBENT_READINGS[incumbent]


def test_incumbent_readings_cover_the_ei_pi_policies() -> None:
    listed = [n for names in INCUMBENT_READINGS.values() for n in names]
    assert set(INCUMBENT_READINGS) == {"observed", "posterior_mean"}
    assert len(listed) == len(set(listed)) and set(listed) <= set(POLICIES)
    assert {n for n in POLICIES if n.startswith(("EI", "PI"))} == set(listed)


def test_pi_margin_policies_run_and_bad_names_are_rejected() -> None:
    problem = P.rkhs_problem("rbf", num_seeds=2, num_arms=12)
    for name in ("PI-xi", "PI-mean-xi"):
        res = simulate(problem, name, 5, seed=1)
        assert res.arms.shape == (5, 2)
    with pytest.raises(ValueError, match=r"`algorithm` must be one of .*'PI-xi'"):
        simulate(problem, "PI-xi-0.05", 5)


# ----------------------------------------------------------- GP-TS-SDF, unscaled draw
def _delayed_problem() -> P.BanditProblem:
    return P.verma_gp_problem(num_seeds=2, num_points=40, lengthscale=0.1)


def _censored_model(problem, arms_t: torch.Tensor) -> FiniteArmGP:
    """The censored view after queries ``arms_t`` (``k x S``) whose feedback has not
    arrived: every target is ``y_min = 0``."""
    model = FiniteArmGP(
        problem.arms, problem.K, problem.noise, num_seeds=2, keep_root=True
    )
    for a in arms_t:
        model.observe(a, torch.zeros(2, dtype=torch.double))
    return model


def _acqf(algorithm, model, problem, arms_t, t, beta, m=5.0):
    T = arms_t.shape[0] + 1
    issue = torch.arange(1, T + 1, dtype=torch.double)
    pad = torch.cat([arms_t, torch.zeros(1, 2, dtype=torch.long)])
    family = D.DELAYED_POLICIES[algorithm][1]
    settings = D.RoundSettings(
        algorithm, family, "censor", beta, 1.0, 0.1, 3, "iteration", m
    )
    return D.round_acquisition(model, problem, settings, t, issue, pad)


def test_unscaled_ts_sdf_draws_from_the_censored_posterior_with_scale_one() -> None:
    problem = _delayed_problem()
    arms_t = torch.tensor([[3, 10], [20, 11], [31, 30]])
    t = arms_t.shape[0] + 1
    model = _censored_model(problem, arms_t)
    X = model.score_points
    scaled = _acqf("GP-TS-SDF", model, problem, arms_t, t, 1.0)
    unscaled = _acqf("GP-TS-SDF-unscaled", model, problem, arms_t, t, 1.0)
    with torch.no_grad():
        d_s, d_u = scaled(X).T, unscaled(X).T  # S x N
    nu = torch.as_tensor(scaled.sigma_multiplier).reshape(-1, 1)  # nu_t
    assert bool((nu > 1.0).all())  # pending queries inflate nu_t above beta = 1
    assert float(unscaled.sigma_multiplier) == 1.0
    mean = model.mean_
    # same normals, different scale: draw - mean differs by exactly nu_t
    assert torch.allclose(d_s - mean, nu * (d_u - mean), rtol=1e-9, atol=1e-12)
    assert not torch.allclose(d_s, d_u)
    # the unscaled draw is mean + L z with L L^T the censored posterior covariance
    L = model.covariance_root_
    assert torch.allclose(L @ L.transpose(-1, -2), model.covariance_, atol=1e-9)
    step_seed = (3 * 1_000_003 + t) % (2**62)
    gen = torch.Generator().manual_seed(step_seed)
    z = torch.randn(mean.shape, generator=gen, dtype=mean.dtype)
    assert torch.allclose(d_u, mean + (L @ z.unsqueeze(-1)).squeeze(-1), atol=1e-12)
    # beta="theory" (and any constant beta) leaves the unscaled draw unchanged
    for beta in ("theory", 2.0):
        other = _acqf("GP-TS-SDF-unscaled", model, problem, arms_t, t, beta)
        with torch.no_grad():
            assert torch.equal(other(X).T, d_u)
        assert float(other.sigma_multiplier) == 1.0


def test_unscaled_ts_sdf_in_the_simulator() -> None:
    problem = _delayed_problem()
    kw = dict(delays=GeometricDelay(0.3), seed=4)

    def run(algorithm, window, **extra):
        return D.simulate_delayed(problem, algorithm, 10, window=window, **kw, **extra)

    a, b = run("GP-TS-SDF-unscaled", 5), run("GP-TS-SDF-unscaled", 5)
    assert torch.equal(a.arms, b.arms) and a.censoring
    assert D.DELAYED_POLICIES["GP-TS-SDF-unscaled"] == ("censor", "ts")
    assert D.UNSCALED_TS_POLICIES == frozenset({"GP-TS-SDF-unscaled"})
    # m = 0: nothing is recent, nu_t = beta = 1, so both readings draw the same
    assert torch.equal(run("GP-TS-SDF", 0).arms, run("GP-TS-SDF-unscaled", 0).arms)
    # m = 5 with pending feedback: nu_t > 1 and the decisions differ
    assert not torch.equal(run("GP-TS-SDF", 5).arms, a.arms)
    theory = run("GP-TS-SDF-unscaled", 5, beta="theory")
    assert torch.equal(theory.arms, a.arms)  # scale 1 whatever beta is
    with pytest.raises(ValueError, match="`algorithm` must be one of"):
        D.simulate_delayed(problem, "GP-TS-SDF-raw", 5, FixedDelay(1))


# ------------------------------------------------------------------- signal variance
def test_srinivas_signal_variance_scales_values_and_kernel() -> None:
    kw = dict(num_seeds=2, num_points=40)
    unit = P.srinivas_gp_problem(**kw)
    half = P.srinivas_gp_problem(**kw, signal_variance=0.5)
    # the default is the unit-variance draw, bit for bit
    _, K, draws = P._grid_gp_draws(2, 40, 0.2, 0)
    assert torch.equal(unit.values, draws) and torch.equal(unit.K, K)
    assert torch.equal(P.srinivas_gp_problem(**kw, signal_variance=1.0).values, draws)
    # same normals: f = sigma_f * unit draw; the algorithms get sigma_f^2 K
    assert torch.equal(half.values, math.sqrt(0.5) * unit.values)
    assert torch.equal(half.K, 0.5 * unit.K)
    assert torch.equal(half.arms, unit.arms) and torch.equal(half.noise, unit.noise)
    assert torch.allclose(half.noise, torch.tensor(0.025, dtype=torch.double))
    # noise = 5 % of the signal variance: 0.025 / k(x, x)
    ratio = half.noise.unsqueeze(-1) / half.K.diagonal()  # S x N
    assert torch.allclose(ratio, torch.tensor(0.05, dtype=torch.double))
    # B: the regularized interpolant's norm in the scaled kernel's RKHS, which is the
    # unit-kernel norm with lambda_0 / sigma_f^2
    assert torch.allclose(half.rkhs_norm, P.regularized_norm(half.values, half.K, 1e-2))
    assert torch.allclose(
        half.rkhs_norm, P.regularized_norm(unit.values, unit.K, 1e-2 / 0.5)
    )
    res = simulate(half, "GP-UCB-finite", 4, seed=0)
    assert res.arms.shape == (4, 2)


@pytest.mark.parametrize(
    "bad", [0.0, -0.5, float("nan"), float("inf"), True, "0.5", None]
)
def test_srinivas_signal_variance_rejects_bad_values(bad) -> None:
    with pytest.raises(ValueError, match=r"`signal_variance` must be .*> 0.*got"):
        P.srinivas_gp_problem(num_seeds=1, num_points=10, signal_variance=bad)
