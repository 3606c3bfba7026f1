"""fixed_gp and the finite-arm engine FiniteArmGP, checked against SingleTaskGP."""

from __future__ import annotations

import pytest
import torch
from botorch.acquisition import (
    LogExpectedImprovement,
    ProbabilityOfImprovement,
    UpperConfidenceBound,
)
from botorch.utils.testing import BotorchTestCase

from botorch_bandits import GPUCB, IGPUCB, GPThompsonSampling
from botorch_bandits import beta as bb
from botorch_bandits.models import FiniteArmGP, fixed_gp
from botorch_bandits.test_functions.problems import make_kernel

LAM = 0.05


def _run(num_seeds=3, steps=40, N=25, seed=0, refactor_every=None):
    gen = torch.Generator().manual_seed(seed)
    arms = torch.rand(N, 2, generator=gen, dtype=torch.double)
    kernel = make_kernel("matern52", 0.3)
    engine = FiniteArmGP(
        arms, kernel, LAM, num_seeds=num_seeds, refactor_every=refactor_every
    )
    S = num_seeds
    pulls = torch.randint(0, N // 2, (steps, S), generator=gen)  # many repeats
    ys = torch.randn(steps, S, generator=gen, dtype=torch.double)
    for t in range(steps):
        engine.observe(pulls[t], ys[t])
    return engine, arms, kernel, pulls, ys


def _reference(arms, kernel, pulls_s, ys_s):
    return fixed_gp(arms[pulls_s], ys_s.unsqueeze(-1), kernel, LAM)


class TestFiniteArmGP(BotorchTestCase):
    def test_matches_single_task_gp_per_seed(self) -> None:
        engine, arms, kernel, pulls, ys = _run()
        for s in range(3):
            ref = _reference(arms, kernel, pulls[:, s], ys[:, s])
            post = ref.posterior(arms)
            self.assertAllClose(engine.mean_[s], post.mean.squeeze(-1), atol=1e-8)
            self.assertAllClose(
                engine.covariance_[s], post.distribution.covariance_matrix, atol=1e-8
            )
            K = kernel(arms[pulls[:, s]]).to_dense()
            self.assertAllClose(
                engine.information_gain_[s], bb.information_gain(K, LAM), atol=1e-8
            )
        self.assertEqual(engine.num_observations_.tolist(), [40, 40, 40])

    def test_posterior_shapes_and_acquisitions(self) -> None:
        engine, arms, kernel, pulls, ys = _run()
        # t-batch over arms, broadcast with the seed batch: N x 1 x 1 x d -> N x 3
        X = arms.view(-1, 1, 1, 2)
        ref = fixed_gp(
            arms[pulls.T], ys.T.unsqueeze(-1), kernel, LAM
        )  # batched SingleTaskGP: 3 seeds
        for acqf_cls, kwargs in [
            (GPUCB, {"schedule": "finite", "num_arms": 25}),
            (IGPUCB, {"B": 1.0, "R": 0.1, "gamma": 2.0}),
            (UpperConfidenceBound, {"beta": 4.0}),
            (LogExpectedImprovement, {"best_f": 0.5}),
            (ProbabilityOfImprovement, {"best_f": 0.5}),
        ]:
            got = acqf_cls(engine, **kwargs)(X)
            want = acqf_cls(ref, **kwargs)(X)
            self.assertEqual(got.shape, torch.Size([25, 3]))
            self.assertAllClose(got, want, atol=1e-7, rtol=1e-6)
        # observed information gain comes from the engine's running total, per seed
        self.assertAllClose(
            bb.observed_information_gain(engine), engine.information_gain_
        )
        igp = IGPUCB(engine, B=1.0, R=0.1)
        expected = torch.tensor(
            [
                bb.igp_ucb_beta(float(g), 1.0, 0.1, 0.1)
                for g in engine.information_gain_
            ],
            dtype=torch.double,
        )
        self.assertAllClose(igp.beta_t, expected)
        self.assertAllClose(igp(X), IGPUCB(ref, B=1.0, R=0.1)(X), atol=1e-7, rtol=1e-6)
        # exact GP-TS draws on the arms
        ts = GPThompsonSampling(engine, v=1.0, candidates=arms, seed=0)
        self.assertEqual(ts(X).shape, torch.Size([25, 3]))

    def test_joint_posterior_and_noise(self) -> None:
        engine, arms, kernel, pulls, ys = _run(num_seeds=2)
        ref = _reference(arms, kernel, pulls[:, 1], ys[:, 1])
        Xq = arms[[3, 7, 7]]  # q = 3 with a repeated point
        got = engine.posterior(Xq, observation_noise=True)
        want = ref.posterior(Xq, observation_noise=True)
        self.assertAllClose(
            got.distribution.covariance_matrix[1],
            want.distribution.covariance_matrix,
            atol=1e-8,
        )

    def test_unbatched_engine(self) -> None:
        gen = torch.Generator().manual_seed(1)
        arms = torch.rand(10, 1, generator=gen, dtype=torch.double)
        engine = FiniteArmGP(arms, make_kernel("rbf", 0.2), LAM)
        for i in [2, 5, 2]:
            engine.observe(torch.tensor(i), torch.tensor(0.3 * i))
        self.assertEqual(engine.batch_shape, torch.Size([]))
        self.assertEqual(engine.mean_.shape, torch.Size([10]))
        acqf = IGPUCB(engine, B=1.0, R=0.1)
        self.assertEqual(acqf.t, 4)
        self.assertEqual(acqf(arms.unsqueeze(-2)).shape, torch.Size([10]))

    def test_reset_one_seed(self) -> None:
        engine, arms, kernel, _, _ = _run()
        before = engine.mean_.clone()
        engine.reset(torch.tensor([False, True, False]))
        self.assertAllClose(engine.mean_[1], torch.zeros(25, dtype=torch.double))
        self.assertAllClose(engine.covariance_[1], kernel(arms).to_dense())
        self.assertAllClose(engine.mean_[[0, 2]], before[[0, 2]])
        self.assertEqual(engine.num_observations_.tolist(), [40, 0, 40])
        self.assertEqual(float(engine.information_gain_[1]), 0.0)
        with self.assertRaisesRegex(ValueError, "different numbers"):
            _ = engine.train_inputs

    def test_replace_target_equals_rebuild(self) -> None:
        engine, arms, kernel, pulls, ys = _run()
        ys2 = ys.clone()
        ys2[7] = ys[7] + torch.tensor([1.0, -2.0, 0.5], dtype=torch.double)
        engine.replace_target(7, ys2[7])
        for s in range(3):
            ref = _reference(arms, kernel, pulls[:, s], ys2[:, s])
            self.assertAllClose(
                engine.mean_[s], ref.posterior(arms).mean.squeeze(-1), atol=1e-8
            )

    def test_refactor_and_skipped_seeds(self) -> None:
        engine, *_ = _run(refactor_every=7)
        plain, *_ = _run(refactor_every=None)
        self.assertAllClose(engine.covariance_, plain.covariance_, atol=1e-9)
        self.assertAllClose(engine.mean_, plain.mean_, atol=1e-9)
        var = engine.observe(torch.tensor([-1, 3, -1]), torch.tensor([0.0, 1.0, 0.0]))
        self.assertEqual(var[0].item(), 0.0)
        self.assertEqual(engine.num_observations_.tolist(), [40, 41, 40])

    def test_errors(self) -> None:
        arms = torch.rand(5, 1, dtype=torch.double)
        kernel = make_kernel("rbf", 0.2)
        with self.assertRaisesRegex(ValueError, "`noise`"):
            FiniteArmGP(arms, kernel, 0.0)
        with self.assertRaisesRegex(ValueError, "`num_seeds`"):
            FiniteArmGP(arms, kernel, 0.1, num_seeds=0)
        with self.assertRaisesRegex(ValueError, "`refactor_every`"):
            FiniteArmGP(arms, kernel, 0.1, refactor_every=0)
        engine = FiniteArmGP(arms, kernel, 0.1, num_seeds=2)
        with self.assertRaisesRegex(ValueError, "`arm_idx`"):
            engine.observe(torch.tensor([0, 5]), torch.tensor([1.0, 1.0]))
        with self.assertRaisesRegex(ValueError, "`y`"):
            engine.observe(torch.tensor([0, 1]), torch.tensor([float("nan"), 1.0]))
        with self.assertRaisesRegex(ValueError, "not an arm"):
            engine.posterior(torch.tensor([[2.0]], dtype=torch.double))
        with self.assertRaisesRegex(ValueError, "`step`"):
            engine.replace_target(0, torch.zeros(2))


class TestFixedGP(BotorchTestCase):
    def test_errors(self) -> None:
        X = torch.rand(3, 1, dtype=torch.double)
        with self.assertRaisesRegex(ValueError, "`noise`"):
            fixed_gp(X, X, make_kernel("rbf", 0.2), 0.0)
        with self.assertRaisesRegex(ValueError, "`train_Y`"):
            fixed_gp(X, X.squeeze(-1), make_kernel("rbf", 0.2), 0.1)


@pytest.mark.parametrize(
    "refactor_every",
    [pytest.param(None, marks=pytest.mark.slow), 1000],
    ids=["no-rebuild", "rebuild"],
)
def test_exact_after_3000_random_updates(refactor_every: int | None) -> None:
    """Issue 3 acceptance 1: engine = exact SingleTaskGP to 1e-8 after 3000 updates,
    with the incremental updates alone (no rebuild) and with the default rebuilds."""
    gen = torch.Generator().manual_seed(5)
    arms = torch.rand(60, 1, generator=gen, dtype=torch.double)
    kernel = make_kernel("rbf", 0.2)
    engine = FiniteArmGP(arms, kernel, LAM, num_seeds=2, refactor_every=refactor_every)
    pulls = torch.randint(0, 60, (3000, 2), generator=gen)
    ys = torch.randn(3000, 2, generator=gen, dtype=torch.double)
    for t in range(3000):
        engine.observe(pulls[t], ys[t])
    for s in range(2):
        post = _reference(arms, kernel, pulls[:, s], ys[:, s]).posterior(arms)
        mean_err = (engine.mean_[s] - post.mean.squeeze(-1)).abs().max()
        cov_err = (
            (engine.covariance_[s] - post.distribution.covariance_matrix).abs().max()
        )
        print(
            f"seed {s}: max |mean error| {mean_err:.2e}, max |cov error| {cov_err:.2e}"
        )
        assert mean_err < 1e-8 and cov_err < 1e-8


def test_per_seed_arms_kernels_and_noise_match_single_task_gp() -> None:
    """Every seed with its own arm set, kernel matrix and lambda (the papers' trials)
    equals an exact SingleTaskGP on that seed's data; points are looked up in the
    seed's own set, and another seed's arm is rejected."""
    gen = torch.Generator().manual_seed(3)
    S, N = 3, 12
    arms = torch.rand(S, N, 1, generator=gen, dtype=torch.double)
    kernel = make_kernel("matern52", 0.2)
    noise = torch.tensor([0.01, 0.05, 0.2], dtype=torch.double)
    engine = FiniteArmGP(arms, kernel, noise)
    assert engine.batch_shape == torch.Size([S])
    pulls = torch.randint(0, N, (40, S), generator=gen)
    ys = torch.randn(40, S, generator=gen, dtype=torch.double)
    for i in range(40):
        engine.observe(pulls[i], ys[i])
    scores = engine.posterior(engine.score_points)  # N x S x 1 x 1
    for s in range(S):
        X = arms[s, pulls[:, s]]
        ref = fixed_gp(X, ys[:, s].unsqueeze(-1), kernel, float(noise[s]))
        post = ref.posterior(arms[s])
        assert torch.allclose(engine.mean_[s], post.mean.squeeze(-1), atol=1e-10)
        assert torch.allclose(
            engine.covariance_[s], post.distribution.covariance_matrix, atol=1e-10
        )
        assert torch.allclose(scores.mean[:, s, 0, 0], post.mean.squeeze(-1))
        # a point looked up through the general path, in a batch over the seeds
    X = arms[:, 5:7].unsqueeze(-2).transpose(0, 1)  # 2 x S x 1 x d
    general = engine.posterior(X).mean[..., 0, 0]
    assert torch.allclose(general, engine.mean_[:, 5:7].T)
    other = arms[1, 0].expand(1, S, 1, 1).clone()  # seed 1's arm asked of every seed
    if not torch.isclose(arms[0], arms[1, 0]).any():
        with pytest.raises(ValueError, match="not an arm"):
            engine.posterior(other)
    with pytest.raises(ValueError, match="num_seeds"):
        FiniteArmGP(arms, kernel, 0.1, num_seeds=2)
    with pytest.raises(ValueError, match="noise"):
        FiniteArmGP(arms, kernel, torch.tensor([0.1, -1.0, 0.1]))


def test_square_root_follows_the_covariance() -> None:
    """keep_root=True: L L^T equals the posterior covariance after many updates (with
    skipped seeds), after an exact rebuild and after a reset of one seed; GP-TS on the
    engine draws f = mu + v L z with that root."""
    gen = torch.Generator().manual_seed(5)
    arms = torch.rand(30, 1, generator=gen, dtype=torch.double)
    kernel = make_kernel("matern52", 0.2)
    engine = FiniteArmGP(arms, kernel, LAM, num_seeds=3, keep_root=True)
    for step in range(700):
        idx = torch.randint(0, 30, (3,), generator=gen)
        if step % 7 == 0:
            idx[1] = -1  # seed 1 skips this step
        engine.observe(idx, torch.randn(3, generator=gen, dtype=torch.double))
    L = engine.covariance_root_
    assert torch.allclose(L @ L.transpose(-1, -2), engine.covariance_, atol=1e-10)
    engine.reset(torch.tensor([False, True, False]))
    L = engine.covariance_root_
    assert torch.allclose(L[1] @ L[1].T, engine.K, atol=1e-10)
    engine.refactor()
    assert torch.allclose(L @ L.transpose(-1, -2), engine.covariance_, atol=1e-10)
    acqf = GPThompsonSampling(engine, v=2.0, candidates=arms, seed=11, t=701)
    draw = acqf(engine.score_points)  # N x S
    z = torch.randn(
        3, 30, generator=torch.Generator().manual_seed(11), dtype=torch.double
    )
    expected = engine.mean_ + 2.0 * (L @ z.unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(draw.T, expected)


def test_pivoted_prior_root() -> None:
    """root_method='pivoted': the prior's root by pivoted Cholesky reproduces the
    kernel matrix (rank-deficient and full-rank alike, per-seed matrices), Potter's
    updates keep following the covariance from it; a bad value is refused at
    construction."""
    gen = torch.Generator().manual_seed(3)
    arms = torch.rand(200, 1, generator=gen, dtype=torch.double)
    d2 = torch.cdist(arms, arms).pow(2)
    K = torch.stack([torch.exp(-0.5 * d2 / ell**2) for ell in (0.005, 0.05, 0.5)])
    engine = FiniteArmGP(
        arms, K, LAM, num_seeds=3, keep_root=True, root_method="pivoted"
    )
    R = engine.covariance_root_
    assert torch.allclose(R @ R.transpose(-1, -2), K, atol=1e-10)
    ranks = (R.abs().sum(-2) > 0).sum(-1)  # nonzero columns: the numerical rank
    assert ranks[0] > ranks[1] > ranks[2]  # shorter lengthscale: higher rank
    for _ in range(40):
        engine.observe(
            torch.randint(200, (3,), generator=gen),
            torch.randn(3, generator=gen, dtype=torch.double),
        )
    R = engine.covariance_root_
    assert torch.allclose(R @ R.transpose(-1, -2), engine.covariance_, atol=1e-10)
    with pytest.raises(ValueError, match=r"root_method.*'pivoted'.*'cholesky'"):
        FiniteArmGP(arms, K[0], LAM, keep_root=True, root_method="cholesky")
    bad = K[0].clone()
    bad[3, 3] = float("nan")
    with pytest.raises(ValueError, match="non-finite"):
        FiniteArmGP(arms, bad, LAM, keep_root=True, root_method="pivoted")


def test_collected_downdates_give_the_same_posterior() -> None:
    """``defer``: the downdates applied together equal one at a time (up to
    round-off) through skips, resets, exact rebuilds, replaced targets and joint
    posteriors; and ``defer`` with ``keep_root`` is refused."""
    gen = torch.Generator().manual_seed(1)
    N, S = 60, 4
    arms = torch.rand(N, 1, generator=gen, dtype=torch.double)
    K = torch.exp(-0.5 * torch.cdist(arms, arms).pow(2) / 0.1**2)
    one = FiniteArmGP(arms, K, 0.01, num_seeds=S, refactor_every=25)
    many = FiniteArmGP(arms, K, 0.01, num_seeds=S, refactor_every=25, defer=7)
    for t in range(80):
        idx = torch.randint(N, (S,), generator=gen)
        if t % 5 == 2:
            idx[1] = -1
        y = torch.randn(S, generator=gen, dtype=torch.double)
        assert torch.allclose(one.observe(idx, y), many.observe(idx, y), atol=1e-12)
        a, b = one.posterior(one.score_points), many.posterior(many.score_points)
        assert torch.allclose(a.mean, b.mean, atol=1e-10)
        assert torch.allclose(a.variance, b.variance, atol=1e-10)
        if t == 40:
            mask = torch.tensor([True, False, True, False])
            one.reset(mask)
            many.reset(mask)
        if t == 60:
            zero = torch.zeros(S, dtype=torch.double)
            one.replace_target(50, zero)
            many.replace_target(50, zero)
    X = arms[torch.randint(N, (S, 3), generator=gen)]
    a, b = one.posterior(X), many.posterior(X)
    assert torch.allclose(a.covariance_matrix, b.covariance_matrix, atol=1e-10)
    assert torch.allclose(one.covariance_, many.covariance_, atol=1e-12)
    assert torch.allclose(one.information_gain_, many.information_gain_, atol=1e-10)
    with pytest.raises(ValueError, match="defer"):
        FiniteArmGP(arms, K, 0.01, num_seeds=S, keep_root=True, defer=4)
    with pytest.raises(ValueError, match="defer"):
        FiniteArmGP(arms, K, 0.01, num_seeds=S, defer=0)
