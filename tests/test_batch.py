"""Pending points and q-batches (issue 17): GP-BUCB, batch / asynchronous TS and the
GP-UCB-SDF / GP-TS-SDF batch case, each pinned to an explicitly conditioned GP."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf, optimize_acqf_discrete

from botorch_bandits import (
    GPUCB,
    GPUCBSDF,
    IGPUCB,
    GPThompsonSampling,
    GPThompsonSamplingSDF,
    fixed_gp,
)
from botorch_bandits.test_functions.problems import make_kernel

D = 2
LAMBDA = 0.01


def _data(n: int = 8, seed: int = 0, dtype: torch.dtype = torch.double):
    gen = torch.Generator().manual_seed(seed)
    X = torch.rand(n, D, generator=gen, dtype=dtype)
    Y = torch.sin(3 * X.sum(-1, keepdim=True))
    return X, Y


def _kernel(dtype: torch.dtype = torch.double):
    return make_kernel("matern52", 0.3, dtype)


def _fixed(X, Y, dtype=torch.double):
    return fixed_gp(X, Y, _kernel(dtype), LAMBDA)


def _inferred(X, Y, hyper_from=None):
    """A SingleTaskGP with inferred-noise likelihood and set hyperparameters."""
    model = SingleTaskGP(X, Y, outcome_transform=None)
    if hyper_from is None:
        model.covar_module.lengthscale = 0.3
        model.likelihood.noise = 0.02
        model.mean_module.constant.data.fill_(0.1)
    else:
        model.load_state_dict(hyper_from.state_dict(), strict=False)
    return model.eval()


def _conditioned_reference(model_fn, X, Y, points, base):
    """``model_fn`` rebuilt on ``X`` plus ``points`` with targets the posterior mean of
    ``base`` (GP-BUCB's hallucination, written out)."""
    with torch.no_grad():
        mu = base.posterior(points).mean
    return model_fn(torch.cat([X, points]), torch.cat([Y, mu]))


BUILDERS = {
    "GPUCB": lambda m, **kw: GPUCB(m, schedule="constant", beta=4.0, **kw),
    "IGPUCB": lambda m, **kw: IGPUCB(m, B=1.0, R=0.1, **kw),
    "GPThompsonSampling": lambda m, **kw: GPThompsonSampling(
        m, B=1.0, R=0.1, seed=0, num_features=512, **kw
    ),
    "GPUCBSDF": lambda m, **kw: GPUCBSDF(
        m, m.train_inputs[0][-3:], B_f=1.0, R=0.1, **kw
    ),
    "GPThompsonSamplingSDF": lambda m, **kw: GPThompsonSamplingSDF(
        m, m.train_inputs[0][-3:], B_f=1.0, R=0.1, seed=0, num_features=512, **kw
    ),
}


# ------------------------------------------------------------------------- q = 4
@pytest.mark.parametrize("name", list(BUILDERS))
@pytest.mark.parametrize("sequential", [False, True])
def test_optimize_acqf_q4_gives_four_distinct_points(
    name: str, sequential: bool
) -> None:
    X, Y = _data()
    acqf = BUILDERS[name](_fixed(X, Y))
    bounds = torch.tensor([[0.0] * D, [1.0] * D], dtype=torch.double)
    torch.manual_seed(0)
    x, _ = optimize_acqf(
        acqf, bounds, q=4, num_restarts=4, raw_samples=64, sequential=sequential
    )
    assert x.shape == (4, D)
    assert torch.all((x >= 0) & (x <= 1))
    dist = torch.cdist(x, x) + torch.eye(4, dtype=x.dtype)
    assert float(dist.min()) > 1e-3, f"{name}: repeated point in {x.tolist()}"
    assert acqf.X_pending is None  # optimize_acqf restores the base pending points


@pytest.mark.parametrize("name", list(BUILDERS))
def test_optimize_acqf_discrete_q3_distinct(name: str) -> None:
    X, Y = _data()
    gen = torch.Generator().manual_seed(1)
    cand = torch.rand(30, D, generator=gen, dtype=torch.double)
    kw = {"candidates": cand} if "Thompson" in name else {}
    acqf = BUILDERS[name](_fixed(X, Y), **kw)
    x, _ = optimize_acqf_discrete(acqf, q=3, choices=cand)
    assert x.shape == (3, D)
    assert torch.unique(x, dim=0).shape[0] == 3


# ------------------------------------------------------------------ GP-BUCB pins
@pytest.mark.parametrize("kind", ["fixed", "inferred"])
def test_gp_bucb_posterior_equals_conditioned_single_task_gp(kind: str) -> None:
    X, Y = _data()
    P = torch.rand(3, D, generator=torch.Generator().manual_seed(5), dtype=torch.double)
    if kind == "fixed":
        base = _fixed(X, Y)

        def build(A, B):
            return _fixed(A, B)
    else:
        base = _inferred(X, Y)

        def build(A, B):
            return _inferred(A, B, hyper_from=base)

    acqf = GPUCB(base, schedule="constant", beta=4.0, X_pending=P)
    ref = _conditioned_reference(build, X, Y, P, base)
    Xt = torch.rand(50, 1, D, generator=torch.Generator().manual_seed(6), dtype=X.dtype)
    got, want = acqf.model.posterior(Xt), ref.posterior(Xt)
    assert torch.allclose(got.mean, want.mean, atol=1e-8, rtol=0)
    assert torch.allclose(got.variance, want.variance, atol=1e-8, rtol=0)
    # the mean is that of the completed-only model (hallucination leaves it alone)
    assert torch.allclose(got.mean, base.posterior(Xt).mean, atol=1e-8, rtol=0)
    # ... and the acquisition is mu + 2 sigma of that posterior, at t = n + p + 1
    value = acqf(Xt)
    assert torch.allclose(
        value, (want.mean + 2.0 * want.variance.sqrt()).view(-1), atol=1e-8, rtol=0
    )
    assert acqf.t == X.shape[0] + P.shape[0] + 1
    # set_X_pending does not accumulate, None restores the completed-only model
    acqf.set_X_pending(P)
    assert acqf.t == X.shape[0] + P.shape[0] + 1
    acqf.set_X_pending(None)
    assert acqf.model is base and acqf.t == X.shape[0] + 1


@pytest.mark.parametrize("cls", ["GPUCB", "IGPUCB"])
def test_gp_bucb_joint_batch_equals_sequential_rule(cls: str) -> None:
    """The value of a q-batch is the sum of each point's GP-BUCB value with the
    pending points and the batch's earlier points hallucinated -- IGP-UCB's beta at
    round t + j with the observed gain of the conditioned model."""
    X, Y = _data()
    P = torch.rand(2, D, generator=torch.Generator().manual_seed(2), dtype=torch.double)
    base = _fixed(X, Y)
    build = BUILDERS[cls]
    acqf = build(base, X_pending=P)
    batch = torch.rand(
        5, 3, D, generator=torch.Generator().manual_seed(3), dtype=X.dtype
    )
    got = acqf(batch)
    want = torch.zeros(5, dtype=X.dtype)
    for b in range(5):
        for j in range(3):
            points = torch.cat([P, batch[b, :j]])
            model_j = _conditioned_reference(_fixed, X, Y, points, base)
            want[b] += build(model_j)(batch[b, j : j + 1])[0]
    assert torch.allclose(got, want, atol=1e-7, rtol=0)


def test_hallucination_bound_scales_the_pending_decisions() -> None:
    X, Y = _data()
    P = X[:1] + 0.05
    base = _fixed(X, Y)
    plain = GPUCB(base, schedule="constant", beta=4.0, X_pending=P)
    bound = GPUCB(
        base, schedule="constant", beta=4.0, X_pending=P, hallucination_bound=0.5
    )
    Xt = torch.rand(7, 1, D, dtype=X.dtype)
    post = plain.model.posterior(Xt)
    want = post.mean + math.exp(0.5) * 2.0 * post.variance.sqrt()
    assert torch.allclose(bound(Xt), want.view(-1), atol=1e-10)
    assert torch.allclose(plain(Xt), (post.mean + 2.0 * post.variance.sqrt()).view(-1))
    with pytest.raises(ValueError, match="hallucination_bound"):
        GPUCB(base, schedule="constant", beta=4.0, hallucination_bound=-1.0)


# -------------------------------------------------------------- SDF batch case
def test_gp_ucb_sdf_joint_batch_equals_sequential_censoring() -> None:
    """Verma et al. §4: the batch's pending points are censored at y_min and count in
    nu; the joint value equals GP-UCB-SDF on the explicitly censored model."""
    X, Y = _data()
    P = torch.rand(2, D, generator=torch.Generator().manual_seed(2), dtype=torch.double)
    base = _fixed(X, Y)
    y_min = -1.0
    recent = X[-3:]
    acqf = GPUCBSDF(base, recent, B_f=1.0, R=0.1, B_y=2.0, y_min=y_min, X_pending=P)
    batch = torch.rand(
        4, 3, D, generator=torch.Generator().manual_seed(3), dtype=X.dtype
    )
    got = acqf(batch)
    want = torch.zeros(4, dtype=X.dtype)
    for b in range(4):
        for j in range(3):
            points = torch.cat([P, batch[b, :j]])
            model_j = _fixed(
                torch.cat([X, points]),
                torch.cat([Y, torch.full((points.shape[0], 1), y_min, dtype=Y.dtype)]),
            )
            ref = GPUCBSDF(
                model_j,
                torch.cat([recent, points]),
                B_f=1.0,
                R=0.1,
                B_y=2.0,
                y_min=y_min,
            )
            want[b] += ref(batch[b, j : j + 1])[0]
    # relative 1e-7: sqrt of the small variances at the (training) recent points
    # amplifies the round-off of incremental vs fresh conditioning
    assert torch.allclose(got, want, atol=1e-8, rtol=1e-7)
    # window: the inflation sums the last `window` issued queries only
    w = GPUCBSDF(
        base, recent, B_f=1.0, R=0.1, B_y=2.0, y_min=y_min, X_pending=P, window=2
    )
    ref = GPUCBSDF(
        _fixed(
            torch.cat([X, P]), torch.cat([Y, torch.full((2, 1), y_min, dtype=Y.dtype)])
        ),
        P,
        B_f=1.0,
        R=0.1,
        B_y=2.0,
    )
    assert math.isclose(float(w.nu_t), float(ref.nu_t), rel_tol=1e-10)


def test_gp_ts_sdf_joint_batch_draw_law() -> None:
    """Point 2 of a joint batch is a draw from the posterior with point 1 censored,
    scaled by that decision's nu: its mean and variance over seeds match."""
    X, Y = _data()
    base = _fixed(X, Y)
    x0 = torch.tensor([[0.3, 0.6]], dtype=X.dtype)
    x1 = torch.tensor([[0.35, 0.55]], dtype=X.dtype)
    y_min = -1.0
    recent = X[-2:]
    cand = torch.cat([x0, x1, X[:2] + 0.1])  # the exact sampler (fast); same rule
    values = []
    for seed in range(400):
        acqf = GPThompsonSamplingSDF(
            base, recent, beta=1.0, B_y=0.5, y_min=y_min, seed=seed, candidates=cand
        )
        both = acqf(torch.cat([x0, x1]).unsqueeze(0))
        values.append(float(both - acqf(x0.unsqueeze(0))))
    values = torch.tensor(values, dtype=X.dtype)
    model_1 = _fixed(
        torch.cat([X, x0]), torch.cat([Y, torch.tensor([[y_min]], dtype=Y.dtype)])
    )
    ref = GPUCBSDF(model_1, torch.cat([recent, x0]), beta=1.0, B_y=0.5)
    post = model_1.posterior(x1)
    mean, sd = float(post.mean), float(ref.nu_t) * float(post.variance.sqrt())
    assert abs(float(values.mean()) - mean) < 4 * sd / math.sqrt(400)
    assert 0.8 < float(values.std()) / sd < 1.2


# --------------------------------------------------------------------- batch TS
def test_batch_ts_one_independent_draw_per_point() -> None:
    """Each point of a batch gets its own draw: over seeds, the draws of points 1 and
    2 at the same candidate are uncorrelated, each with the posterior's law; a
    pending point moves the next decision to the next draw."""
    X, Y = _data()
    model = _fixed(X, Y)
    cand = torch.rand(6, D, generator=torch.Generator().manual_seed(4), dtype=X.dtype)
    c = cand[:1]
    first, second = [], []
    for seed in range(500):
        acqf = GPThompsonSampling(model, v=1.0, candidates=cand, seed=seed)
        f0 = acqf(c.unsqueeze(0))
        f01 = acqf(torch.cat([c, c]).unsqueeze(0))
        first.append(float(f0))
        second.append(float(f01 - f0))
        if seed < 3:  # the pending point used draw 0: the next decision uses draw 1
            acqf.set_X_pending(cand[3:4])
            assert torch.allclose(acqf(c.unsqueeze(0)), f01 - f0)
    a, b = torch.tensor(first), torch.tensor(second)
    corr = float(torch.corrcoef(torch.stack([a, b]))[0, 1])
    assert abs(corr) < 0.15
    post = model.posterior(c)
    sd = float(post.variance.sqrt())
    for v in (a, b):
        assert abs(float(v.mean()) - float(post.mean)) < 4 * sd / math.sqrt(500)
        assert 0.85 < float(v.std()) / sd < 1.15


def test_asynchronous_ts_ignores_pending_in_the_posterior() -> None:
    X, Y = _data()
    model = _fixed(X, Y)
    acqf = GPThompsonSampling(model, B=1.0, R=0.1, seed=0, num_features=256)
    v0 = acqf.v_t
    acqf.set_X_pending(X[:2] + 0.01)
    assert acqf.model is model and acqf.v_t == v0  # completed observations only


def test_bad_pending_names_the_argument() -> None:
    X, Y = _data()
    model = _fixed(X, Y)
    with pytest.raises(ValueError, match="X_pending"):
        GPUCB(model, schedule="constant", beta=1.0, X_pending=torch.rand(3, D + 1))
    with pytest.raises(ValueError, match="X_pending"):
        IGPUCB(model, B=1.0, R=0.1).set_X_pending(torch.rand(D))
    with pytest.raises(ValueError, match="X_pending"):
        GPThompsonSampling(model, v=1.0, X_pending=torch.full((1, D), math.nan))


# ------------------------------------------- simulator and classes: one GP-BUCB rule
def test_simulator_gp_bucb_decides_as_the_class_with_pending_points() -> None:
    """The delayed simulator's GP-BUCB (the engine view, BatchDelay(3)) and GPUCB with
    X_pending = the batch's pending points on the completed-only model make the same
    decision at every step."""
    from botorch_bandits.delays import BatchDelay
    from botorch_bandits.models import FiniteArmGP
    from botorch_bandits.test_functions.delayed import simulate_delayed
    from botorch_bandits.test_functions.problems import verma_gp_problem

    problem = verma_gp_problem(num_seeds=1, num_points=60, lengthscale=0.1)
    T, B = 15, 3
    res = simulate_delayed(problem, "GP-BUCB", T, BatchDelay(B), beta=1.0, seed=0)
    arms = problem.arms
    for t in range(2, T + 1):
        now = res.issue_times[t - 1]
        done = [s for s in range(t - 1) if float(res.arrival_times[s, 0]) <= float(now)]
        pending = [s for s in range(t - 1) if s not in done]
        K = problem.K if problem.K.ndim == 2 else problem.K[0]
        completed = FiniteArmGP(arms, K, float(problem.noise[0]))
        for s in done:
            completed.observe(res.arms[s, :1], res.observations[s, :1])
        P = arms[res.arms[pending, 0]] if pending else None
        acqf = GPUCB(completed, schedule="constant", beta=1.0, X_pending=P)
        choice = int(acqf(arms.unsqueeze(-2)).argmax())
        assert choice == int(res.arms[t - 1, 0]), f"step {t}"


def test_batch_tradeoff_report_runs_every_policy() -> None:
    from bandit_experiments.studies.batch import batch_tradeoff, report
    from botorch_bandits.test_functions.problems import verma_gp_problem

    problem = verma_gp_problem(num_seeds=2, num_points=50, lengthscale=0.1)
    result = batch_tradeoff(problem, batch_size=2, horizon=8)
    assert set(result.results) == {
        "GP-UCB (sequential)",
        "GP-BUCB (B=2)",
        "GP-UCB-SDF (B=2, m=2)",
    }
    rounds = result.per_round(4)
    assert rounds["GP-UCB (sequential)"]["evaluations"][0] == 4
    assert rounds["GP-BUCB (B=2)"]["evaluations"][0] == 8
    seq = result.results["GP-UCB (sequential)"]
    want = float(seq.cumulative_regret[3].mean())
    assert rounds["GP-UCB (sequential)"]["cumulative"][0] == pytest.approx(want)
    assert any("per batch round" in line for line in report(result))
    with pytest.raises(ValueError, match="horizon"):
        batch_tradeoff(problem, batch_size=3, horizon=8)


@pytest.mark.parametrize("kind", ["multi", "list"])
@pytest.mark.parametrize("cls", ["GPUCB", "IGPUCB"])
def test_gp_bucb_batch_on_multi_output_models(kind: str, cls: str) -> None:
    """Every output is hallucinated at its own mean; the joint value is the sum of
    the sequential rule's values on the explicitly hallucinated models (with the
    scalarized objective, and IGP-UCB's observed gain summed over the outputs)."""
    from botorch.acquisition.objective import ScalarizedPosteriorTransform
    from botorch.models import ModelListGP

    from botorch_bandits.acquisition._batch import hallucinated_model

    X, Y = _data()
    Y2 = -(Y**2)
    if kind == "multi":
        model = SingleTaskGP(X, torch.cat([Y, Y2], -1)).eval()
    else:
        model = ModelListGP(SingleTaskGP(X, Y), SingleTaskGP(X, Y2)).eval()
    pt = ScalarizedPosteriorTransform(torch.tensor([1.0, 0.5], dtype=X.dtype))
    build = BUILDERS[cls]
    batch = torch.rand(3, D, generator=torch.Generator().manual_seed(9), dtype=X.dtype)
    got = build(model, posterior_transform=pt)(batch.unsqueeze(0))
    want = sum(
        build(
            hallucinated_model(model, batch[:j]) if j else model, posterior_transform=pt
        )(batch[j : j + 1].unsqueeze(0))
        for j in range(3)
    )
    assert torch.allclose(got, want, atol=1e-10, rtol=1e-10)


# ------------------------------------------------------ models without a batch shape
def test_model_without_batch_shape_works_at_q1_and_q2() -> None:
    """GenericDeterministicModel's batch_shape is None: treated as unbatched (it was a
    TypeError from torch.Size(None)); sigma is 0, so every value is f itself."""
    from botorch.models.deterministic import GenericDeterministicModel

    from botorch_bandits.acquisition._batch import model_batch_shape

    model = GenericDeterministicModel(lambda X: X.sum(-1, keepdim=True))
    assert model.batch_shape is None and model_batch_shape(model) == torch.Size([])
    X = torch.rand(5, 1, D, generator=torch.Generator().manual_seed(0)).double()
    f = X.sum(-1).squeeze(-1)
    for acqf in (
        GPUCB(model, schedule="constant", beta=4.0, t=1),
        IGPUCB(model, beta=2.0, t=1),
    ):
        assert torch.allclose(acqf(X), f)
        assert torch.allclose(acqf(X.view(1, 5, D)), f.sum().view(1))  # q = 5
    ts = GPThompsonSampling(model, v=1.0, t=1, candidates=X.squeeze(1), seed=0)
    assert torch.allclose(ts(X), f, atol=1e-3)  # jitter on a zero covariance


# ------------------------------------------------------------------ ensemble models
def _ensemble(kind: str):
    """An ensemble of 3 GPs with set hyperparameters: BoTorch's
    EnsembleMapSaasSingleTaskGP, or SaasFullyBayesianSingleTaskGP with three fixed
    MCMC samples (needs JAX, as BoTorch's fully Bayesian models do)."""
    X, Y = _data()
    lengthscale = torch.tensor([[0.3, 0.5], [0.6, 0.4], [0.2, 0.9]], dtype=X.dtype)
    outputscale = torch.tensor([1.0, 0.5, 2.0], dtype=X.dtype)
    noise = torch.tensor([0.01, 0.02, 0.05], dtype=X.dtype)
    if kind == "saas":
        pytest.importorskip("jax")
        from botorch.models.fully_bayesian import SaasFullyBayesianSingleTaskGP

        model = SaasFullyBayesianSingleTaskGP(X, Y)
        model.load_mcmc_samples(
            {
                "mean": torch.tensor([0.0, 0.1, -0.1], dtype=X.dtype),
                "outputscale": outputscale,
                "lengthscale": lengthscale,
                "noise": noise,
            }
        )
        return model.eval(), X, Y
    from botorch.models.map_saas import EnsembleMapSaasSingleTaskGP

    taus = torch.tensor([0.1, 0.5, 1.0], dtype=X.dtype)
    model = EnsembleMapSaasSingleTaskGP(
        X, Y, num_taus=3, taus=taus, outcome_transform=None
    )
    model.covar_module.base_kernel.lengthscale = lengthscale.unsqueeze(-2)
    model.covar_module.outputscale = outputscale
    model.likelihood.noise = noise.unsqueeze(-1)
    return model.eval(), X, Y


@pytest.mark.parametrize("kind", ["map", "saas"])
def test_ucb_on_an_ensemble_averages_over_members_as_botorch(kind: str) -> None:
    """UCB on an ensemble (SAAS): the values are averaged over the members, exactly
    as BoTorch's UpperConfidenceBound (average_over_ensemble_models); pending points
    and q-batches work there too (joint = sequential)."""
    from botorch.acquisition.analytic import UpperConfidenceBound

    model, X, _ = _ensemble(kind)
    Xt = torch.rand(6, 1, D, generator=torch.Generator().manual_seed(1), dtype=X.dtype)
    with torch.no_grad():
        ref = UpperConfidenceBound(model, beta=4.0)(Xt)
        assert torch.allclose(
            GPUCB(model, schedule="constant", beta=4.0)(Xt), ref, atol=1e-10
        )
        # IGP-UCB: one beta per member (observed gain of that member's kernel)
        igp = IGPUCB(model, B=1.0, R=0.1)
        mult = igp.sigma_multiplier
        assert isinstance(mult, torch.Tensor) and mult.shape == (3,)
        ref = UpperConfidenceBound(model, beta=(mult**2).unsqueeze(-1))(Xt)
        assert torch.allclose(igp(Xt), ref, atol=1e-10)
        # a q-batch of 2 with one pending point = the sequential rule
        P = X[:1] + 0.05
        batch = Xt[:4].view(2, 2, D)
        joint = IGPUCB(model, B=1.0, R=0.1, X_pending=P)(batch)
        first = IGPUCB(model, B=1.0, R=0.1, X_pending=P)(batch[:, :1])
        second = torch.stack(
            [
                IGPUCB(model, B=1.0, R=0.1, X_pending=torch.cat([P, b[:1]]))(b[1:])
                for b in batch
            ]
        ).view(-1)
        assert torch.allclose(joint, first + second, atol=1e-8)


def test_ts_on_an_ensemble_draws_from_one_member_per_draw() -> None:
    """TS on an ensemble: each draw is one member's draw, the member drawn once per
    draw from the seed (the mixture posterior, as PathwiseThompsonSampling picks one
    member per path)."""
    from linear_operator.utils.cholesky import psd_safe_cholesky

    model, X, _ = _ensemble("map")
    cand = torch.rand(5, D, generator=torch.Generator().manual_seed(2), dtype=X.dtype)
    members = set()
    with torch.no_grad():
        post = model.posterior(cand)  # 3 members x 5
        mean = post.mean.squeeze(-1)
        L = psd_safe_cholesky(post.distribution.covariance_matrix)
        for seed in range(12):
            acqf = GPThompsonSampling(model, v=2.0, candidates=cand, seed=seed)
            got = acqf(cand.unsqueeze(-2))
            assert got.shape == (5,)
            e = acqf._member(0)
            members.add(e)
            z = torch.randn(
                3, 5, generator=torch.Generator().manual_seed(seed), dtype=X.dtype
            )
            want = mean[e] + 2.0 * (L[e] @ z[e])
            assert torch.allclose(got, want, atol=1e-8)
            assert torch.equal(acqf(cand.unsqueeze(-2)), got)  # the same member
    assert members == {0, 1, 2}
    # BoTorch's paths fail on members with their own training inputs: a clear error
    from botorch.exceptions.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match="batched training inputs"):
        GPThompsonSampling(model, v=1.0)


def test_building_pathwise_ts_leaves_the_global_rng_alone() -> None:
    """The pathwise sampler's kernel check draws random features under a forked
    generator: constructing the acquisition does not move torch's global RNG."""
    X, Y = _data()
    model = _fixed(X, Y)
    torch.manual_seed(123)
    state = torch.get_rng_state()
    GPThompsonSampling(model, v=1.0, seed=0, num_features=64)
    GPThompsonSamplingSDF(model, X[-2:], beta=1.0, num_features=64)
    assert torch.equal(torch.get_rng_state(), state)


@pytest.mark.parametrize("weight,offset", [(-1.0, 0.0), (-2.0, 0.3)])
def test_sdf_batch_applies_the_posterior_transform(
    weight: float, offset: float
) -> None:
    """GP-UCB-SDF at q > 1 with a ScalarizedPosteriorTransform: the model's output is
    censored at y_min (as set_X_pending does), the values are the objective's --
    pinned to the formula written out here; with weight -1 (minimization) they are
    those of the negated problem (censored at -y_min), for GP-TS-SDF too."""
    from botorch.acquisition.objective import ScalarizedPosteriorTransform

    X, Y = _data()
    base = _fixed(X, Y)
    pt = ScalarizedPosteriorTransform(
        torch.tensor([weight], dtype=X.dtype), offset=offset
    )
    P = torch.rand(1, D, generator=torch.Generator().manual_seed(2), dtype=X.dtype)
    batch = torch.rand(
        2, 3, D, generator=torch.Generator().manual_seed(3), dtype=X.dtype
    )
    recent, y_min, B_y, beta = X[-2:], 1.0, 2.0, 1.0
    kw = {"beta": beta, "B_y": B_y, "posterior_transform": pt, "X_pending": P}
    got = GPUCBSDF(base, recent, y_min=y_min, **kw)(batch)
    want = torch.zeros(2, dtype=X.dtype)
    with torch.no_grad():
        for b in range(2):
            for j in range(3):
                points = torch.cat([P, batch[b, :j]])
                censored = torch.full((points.shape[0], 1), y_min, dtype=Y.dtype)
                model_j = _fixed(torch.cat([X, points]), torch.cat([Y, censored]))
                post = model_j.posterior(batch[b, j : j + 1])
                issued = torch.cat([recent, points]).unsqueeze(-2)
                sigmas = model_j.posterior(issued).variance.sqrt().view(-1)
                nu = B_y * abs(weight) * float(sigmas.sum()) + beta
                mu, sd = float(post.mean), float(post.variance.sqrt())
                want[b] += offset + weight * mu + nu * abs(weight) * sd
    assert torch.allclose(got, want, atol=1e-8, rtol=1e-7)
    if weight != -1.0:
        return
    neg = _fixed(X, -Y)
    del kw["posterior_transform"]
    negated = GPUCBSDF(neg, recent, y_min=-y_min, **kw)(batch)
    assert torch.allclose(got, negated, atol=1e-8, rtol=1e-7)
    cand = torch.cat([batch.reshape(-1, D), P])
    ts = {"candidates": cand, "seed": 5, "beta": beta, "B_y": B_y, "X_pending": P}
    draw = GPThompsonSamplingSDF(
        base, recent, y_min=y_min, posterior_transform=pt, **ts
    )
    ref = GPThompsonSamplingSDF(neg, recent, y_min=-y_min, **ts)
    assert torch.allclose(draw(batch), ref(batch), atol=1e-8, rtol=1e-7)


def test_later_draws_of_a_seed_are_not_other_seeds_first_draws() -> None:
    """Draw 0 is the seed itself (one-point decisions unchanged); draw k > 0 of seed
    s has a derived seed that no small user seed equals: draw 1 of seed 0 is not
    draw 0 of seed 1 (it was, with the old (s * 1_000_003 + k) rule)."""
    from botorch_bandits.seeding import derived_seed as _derived_seed

    X, Y = _data()
    model = _fixed(X, Y)
    cand = torch.rand(4, D, generator=torch.Generator().manual_seed(4), dtype=X.dtype)
    c = cand[:1].unsqueeze(0)
    seeds = {_derived_seed(s, 1, k) for s in range(50) for k in range(1, 50)}
    assert len(seeds) == 50 * 49 and min(seeds) >= 2**63
    zero = GPThompsonSampling(model, v=1.0, candidates=cand, seed=0)
    one = GPThompsonSampling(model, v=1.0, candidates=cand, seed=1)
    second_of_zero = zero(torch.cat([c, c], dim=-2)) - zero(c)
    assert not torch.allclose(second_of_zero, one(c))
    # draw 0 of a seed: mu + v L z with z from torch's generator seeded with it
    post = model.posterior(cand)
    L = torch.linalg.cholesky(post.distribution.covariance_matrix)
    z = torch.randn(4, generator=torch.Generator().manual_seed(1), dtype=X.dtype)
    assert torch.allclose(one(c), post.mean[0, 0] + (L @ z)[0], atol=1e-10)


@pytest.mark.parametrize("sampler", ["exact", "pathwise"])
def test_ts_sdf_batch_without_seed_is_one_function(sampler: str) -> None:
    """seed=None: the draws and their Matheron noise are made once per draw index,
    so two evaluations of the same q-batch agree (an optimizer sees one function)."""
    X, Y = _data()
    model = _fixed(X, Y)
    batch = torch.rand(
        4, 3, D, generator=torch.Generator().manual_seed(8), dtype=X.dtype
    )
    kw = {"candidates": batch.reshape(-1, D)} if sampler == "exact" else {}
    acqf = GPThompsonSamplingSDF(
        model, X[-2:], beta=1.0, y_min=-1.0, num_features=64, **kw
    )
    first = acqf(batch)
    torch.rand(7)  # the global generator moves on between evaluations
    assert torch.equal(acqf(batch), first)
    assert torch.allclose(acqf(batch[:2]), first[:2], atol=1e-10, rtol=0)


# ------------------------------------------------------------ explicit round index t
EXPLICIT_T = {
    "GPUCB": lambda m, t, **kw: GPUCB(m, schedule="finite", num_arms=30, t=t, **kw),
    "IGPUCB": lambda m, t, **kw: IGPUCB(m, B=1.0, R=0.1, t=t, **kw),
    "IGPUCB-apriori": lambda m, t, **kw: IGPUCB(
        m, B=1.0, R=0.1, gamma=lambda n: 0.5 * n, t=t, **kw
    ),
    "GPThompsonSampling": lambda m, t, **kw: GPThompsonSampling(
        m, B=1.0, R=0.1, gamma=lambda n: 0.5 * n, seed=3, t=t, **kw
    ),
    "GPUCBSDF": lambda m, t, **kw: GPUCBSDF(
        m, m.train_inputs[0][-2:], B_f=1.0, R=0.1, gamma=lambda n: 0.5 * n, t=t, **kw
    ),
    "GPThompsonSamplingSDF": lambda m, t, **kw: GPThompsonSamplingSDF(
        m, m.train_inputs[0][-2:], B_f=1.0, R=0.1, gamma=lambda n: 0.5 * n, t=t, **kw
    ),
}


@pytest.mark.parametrize("name", list(EXPLICIT_T))
def test_explicit_t_advances_with_pending_and_batch_points(name: str) -> None:
    """With an explicit t, pending point / batch point j is decided at round
    t + p + j in every class: a joint q-batch equals the sequential rule (each point
    valued with the earlier ones pending), and optimize_acqf_discrete(q=2) works
    with the observed information gain (it asked gamma_{t-1} of a model holding
    t points). GP-TS-SDF's joint draw is the sequential one in law only (Matheron's
    update of one draw): there the stages' censored moments and nu are compared."""
    X, Y = _data()
    model = _fixed(X, Y)
    t = X.shape[0] + 1
    build = EXPLICIT_T[name]
    gen = torch.Generator().manual_seed(6)
    P = torch.rand(1, D, generator=gen, dtype=X.dtype)
    batch = torch.rand(2, 3, D, generator=gen, dtype=X.dtype)
    cand = torch.cat([batch.reshape(-1, D), P])
    kw = {"candidates": cand} if "Thompson" in name else {}
    joint = build(model, t, X_pending=P, **kw)
    assert joint.t == t + 1
    sdf_ts = name == "GPThompsonSamplingSDF"
    got = torch.stack([s[3] for s in joint._stages(batch)[0]]) if sdf_ts else None
    got = joint(batch) if got is None else got  # TS-SDF: nu_j, 3 x 2
    want = torch.zeros_like(got)
    for b in range(2):
        for j in range(3):
            pending = torch.cat([P, batch[b, :j]])
            single = build(model, t, X_pending=pending, **kw)
            assert single.t == t + 1 + j
            if sdf_ts:
                want[j, b] = single.v_t  # nu_t of GP-TS-SDF
            else:
                want[b] += single(batch[b, j : j + 1])[0]
    assert torch.allclose(got, want, atol=1e-8, rtol=1e-7)
    x, _ = optimize_acqf_discrete(build(model, t, **kw), q=2, choices=cand)
    assert x.shape == (2, D)


# ------------------------------------------------------------- cyclic optimization
def test_draw_numbers_follow_the_points_through_cyclic_optimization() -> None:
    """The draw-number rule on the calls optimize_acqf_cyclic makes (base pending
    point b0): the sequential pass gives point j draw 1 + j; re-optimizing point i
    with the other points pending values it on its own draw 1 + i again, also after
    the other points moved."""
    X, Y = _data()
    cand = torch.rand(8, D, generator=torch.Generator().manual_seed(5), dtype=X.dtype)
    b0, c = cand[:1], list(cand[1:4])
    acqf = GPThompsonSampling(
        _fixed(X, Y), v=1.0, candidates=cand, seed=0, X_pending=b0
    )

    def decide(pending):
        acqf.set_X_pending(pending)
        acqf(cand[:1].unsqueeze(0))  # an evaluation: the decision's draw is used
        return acqf._decision_draws(1)[0]

    assert decide(b0) == 1
    assert decide(torch.cat([b0, c[0][None]])) == 2
    assert decide(torch.cat([b0, c[0][None], c[1][None]])) == 3
    acqf.set_X_pending(b0)  # the sequential pass restores the base
    for _ in range(2):  # two cycles, point i moves to a new value each time
        for i in range(3):
            others = [c[k][None] for k in range(3) if k != i]
            assert decide(torch.cat([b0, *others])) == 1 + i
            c[i] = c[i] + 0.01
    # joint batches and pending points set once: p + j
    fresh = GPThompsonSampling(_fixed(X, Y), v=1.0, candidates=cand, seed=0)
    fresh.set_X_pending(cand[4:6])
    assert fresh._decision_draws(3) == [2, 3, 4]


@pytest.mark.parametrize("name", ["GPThompsonSampling", "GPThompsonSamplingSDF"])
def test_optimize_acqf_cyclic_gives_distinct_points(name: str) -> None:
    """optimize_acqf_cyclic re-optimizes each point with the q - 1 others pending:
    every point keeps its own draw, so the q points differ (they collapsed onto the
    maximizer of one draw)."""
    from botorch.optim import optimize_acqf_cyclic

    X, Y = _data()
    model, kw = _fixed(X, Y), {"seed": 1, "num_features": 128}
    if name == "GPThompsonSampling":
        acqf = GPThompsonSampling(model, B=1.0, R=0.1, **kw)
    else:
        acqf = GPThompsonSamplingSDF(model, X[-2:], beta=1.0, y_min=-1.0, **kw)
    bounds = torch.tensor([[0.0] * D, [1.0] * D], dtype=torch.double)
    torch.manual_seed(0)
    x, _ = optimize_acqf_cyclic(
        acqf,
        bounds,
        q=3,
        num_restarts=2,
        raw_samples=32,
        options={"maxiter": 30},
        cyclic_options={"maxiter": 2},
    )
    dist = torch.cdist(x, x) + torch.eye(3, dtype=x.dtype)
    assert float(dist.min()) > 1e-3, f"repeated point in {x.tolist()}"
    assert acqf.X_pending is None


def test_scalarization_offset_keeps_the_value_dtype() -> None:
    from botorch.acquisition.objective import ScalarizedPosteriorTransform

    from botorch_bandits.acquisition._batch import scalarization

    pt = ScalarizedPosteriorTransform(torch.tensor([1.0, 0.5]), offset=0.1)
    like = torch.zeros(3, dtype=torch.double)
    w, offset = scalarization(pt, 2, like)
    assert offset.dtype == w.dtype == torch.double and offset.item() == 0.1


@pytest.mark.parametrize("name", list(BUILDERS))
def test_float32_pending_points_on_a_float64_model_are_cast(name: str) -> None:
    X, Y = _data()
    model = _fixed(X, Y)
    P = torch.rand(2, D, generator=torch.Generator().manual_seed(9))  # float32
    got = BUILDERS[name](model, X_pending=P)
    want = BUILDERS[name](model, X_pending=P.double())
    assert got.X_pending.dtype == torch.double
    Xt = X[:3].unsqueeze(1) + 0.01
    assert torch.equal(got(Xt), want(Xt))


def test_models_that_cannot_hold_pending_points_raise_a_clear_error() -> None:
    """KroneckerMultiTaskGP and GenericDeterministicModel cannot be conditioned on
    pending points: an UnsupportedError that names X_pending (KroneckerMultiTaskGP
    failed inside GPyTorch); a joint q-batch without pending points still works."""
    from botorch.acquisition.objective import ScalarizedPosteriorTransform
    from botorch.exceptions.errors import UnsupportedError
    from botorch.models import KroneckerMultiTaskGP
    from botorch.models.deterministic import GenericDeterministicModel

    X, Y = _data()
    kron = KroneckerMultiTaskGP(X, torch.cat([Y, -Y], -1)).eval()
    pt = ScalarizedPosteriorTransform(torch.tensor([1.0, 0.5], dtype=X.dtype))
    P = X[:2] + 0.01
    with pytest.raises(UnsupportedError, match=r"X_pending.*KroneckerMultiTaskGP"):
        GPUCB(kron, schedule="constant", beta=1.0, posterior_transform=pt, X_pending=P)
    joint = GPUCB(kron, schedule="constant", beta=1.0, posterior_transform=pt, t=9)
    assert joint(P.unsqueeze(0)).shape == (1,)
    det = GenericDeterministicModel(lambda Z: Z.sum(-1, keepdim=True))
    with pytest.raises(UnsupportedError, match=r"X_pending.*GenericDeterministicModel"):
        IGPUCB(det, beta=1.0, t=1, X_pending=P)
