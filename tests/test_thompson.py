"""GPThompsonSampling: one draw f_t ~ GP(mu, v_t^2 k) per decision."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.exceptions.errors import UnsupportedError
from botorch.models import ModelListGP
from botorch.optim import optimize_acqf, optimize_acqf_discrete
from botorch.utils.testing import BotorchTestCase

from bandit_experiments.studies.ts_variance import ts_variance_ratios
from botorch_bandits import GPThompsonSampling, draw_posterior_paths
from botorch_bandits import beta as bb
from botorch_bandits.models import fixed_gp
from botorch_bandits.test_functions.problems import make_kernel


def _model(dtype=torch.double, kernel="rbf", n=10, seed=0):
    gen = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 1, generator=gen, dtype=dtype)
    Y = torch.sin(6 * X) + 0.05 * torch.randn(n, 1, generator=gen, dtype=dtype)
    return fixed_gp(X, Y, make_kernel(kernel, 0.2, dtype), 0.01)


class TestScale(BotorchTestCase):
    def test_v_t_is_algorithm_2(self) -> None:
        model = _model()
        acqf = GPThompsonSampling(model, B=2.0, R=0.3, delta=0.1, sampler="pathwise")
        gain = float(bb.observed_information_gain(model))
        v = 2.0 + 0.3 * math.sqrt(2 * (gain + 1 + math.log(2 / 0.1)))
        self.assertAlmostEqual(acqf.v_t, v, places=10)
        self.assertAlmostEqual(acqf.sigma_multiplier, v, places=10)
        self.assertEqual(GPThompsonSampling(model, v=1.0).v_t, 1.0)


@pytest.mark.parametrize(
    "kernel", ["rbf", pytest.param("matern52", marks=pytest.mark.slow)]
)
@pytest.mark.parametrize(
    "sampler", ["exact", pytest.param("pathwise", marks=pytest.mark.slow)]
)
def test_variance_of_2000_draws_matches_v2_sigma2(kernel: str, sampler: str) -> None:
    """Acceptance 4: empirical variance of 2000 draws at 5 points within 10 %."""
    ratios = ts_variance_ratios(kernel, sampler, num_draws=2000)
    print(
        f"{kernel} {sampler}: variance ratios {[round(r, 3) for r in ratios.tolist()]}"
    )
    assert torch.all((ratios - 1).abs() < 0.10), ratios


class TestExactSampler(BotorchTestCase):
    def test_mean_and_covariance_of_draws(self) -> None:
        model = _model()
        cand = torch.tensor([[0.1], [0.12], [0.6]], dtype=torch.double)
        post = model.posterior(cand)
        cov = post.distribution.covariance_matrix
        draws = torch.stack(
            [
                GPThompsonSampling(model, v=2.0, candidates=cand, seed=i)(
                    cand.unsqueeze(-2)
                )
                for i in range(2000)
            ]
        )
        emp = torch.cov(draws.T)
        # joint draw: the correlation of two close points is reproduced
        self.assertAllClose(
            emp, 4.0 * cov, atol=0.15 * float(4.0 * cov.diagonal().max())
        )
        se = (4.0 * cov.diagonal() / 2000).sqrt()
        self.assertTrue(
            torch.all((draws.mean(0) - post.mean.squeeze(-1)).abs() < 4 * se)
        )

    def test_one_function_per_instance_and_seeding(self) -> None:
        model = _model()
        cand = torch.linspace(0, 1, 50, dtype=torch.double).unsqueeze(-1)
        acqf = GPThompsonSampling(model, B=1.0, R=0.1, candidates=cand, seed=3)
        full = acqf(cand.unsqueeze(-2))
        # evaluating in chunks or shuffled gives the same function
        perm = torch.randperm(50)
        self.assertAllClose(acqf(cand[perm].unsqueeze(-2)), full[perm])
        x, val = optimize_acqf_discrete(acqf, q=1, choices=cand, max_batch_size=7)
        self.assertAllClose(val, full.max())
        self.assertAllClose(x, cand[full.argmax()].unsqueeze(0))
        same = GPThompsonSampling(model, B=1.0, R=0.1, candidates=cand, seed=3)
        self.assertAllClose(same(cand.unsqueeze(-2)), full)
        other = GPThompsonSampling(model, B=1.0, R=0.1, candidates=cand, seed=4)
        self.assertFalse(torch.allclose(other(cand.unsqueeze(-2)), full))
        neg = GPThompsonSampling(
            model, B=1.0, R=0.1, candidates=cand, seed=3, maximize=False
        )
        self.assertAllClose(neg(cand.unsqueeze(-2)), -full)

    def test_float32_large_candidate_set_jitter(self) -> None:
        model = _model(torch.float, n=30)
        cand = torch.linspace(0, 1, 1000).unsqueeze(-1)  # near-singular covariance
        acqf = GPThompsonSampling(model, B=1.0, R=0.1, candidates=cand, seed=0)
        vals = acqf(cand.unsqueeze(-2))
        self.assertEqual(vals.dtype, torch.float)
        self.assertTrue(torch.isfinite(vals).all())

    def test_non_candidate_raises(self) -> None:
        model = _model()
        cand = torch.linspace(0, 1, 5, dtype=torch.double).unsqueeze(-1)
        acqf = GPThompsonSampling(model, v=1.0, candidates=cand)
        with self.assertRaisesRegex(ValueError, "not a candidate"):
            acqf(torch.tensor([[[0.33]]], dtype=torch.double))

    def test_batched_model_and_posterior_transform(self) -> None:
        gen = torch.Generator().manual_seed(0)
        X = torch.rand(3, 6, 1, generator=gen, dtype=torch.double)
        Y = torch.randn(3, 6, 1, generator=gen, dtype=torch.double)
        model = fixed_gp(X, Y, make_kernel("rbf", 0.2), 0.1)
        cand = torch.linspace(0, 1, 20, dtype=torch.double).unsqueeze(-1)
        acqf = GPThompsonSampling(model, v=1.0, candidates=cand, seed=0)
        out = acqf(cand.unsqueeze(-2).unsqueeze(-3))  # 20 x 1 x 1 x 1 vs model batch 3
        self.assertEqual(out.shape, torch.Size([20, 3]))
        # v_t per batch from each batch's own observed information gain
        per_batch = GPThompsonSampling(model, B=1.0, R=0.1, candidates=cand, seed=0)
        gains = bb.observed_information_gain(model)
        expected = torch.stack(
            [torch.tensor(bb.gp_ts_scale(float(g), 1.0, 0.1, 0.1)) for g in gains]
        )
        self.assertAllClose(per_batch.v_t, expected.to(per_batch.v_t))
        self.assertEqual(
            per_batch(cand.unsqueeze(-2).unsqueeze(-3)).shape, torch.Size([20, 3])
        )
        pathwise = GPThompsonSampling(model, B=1.0, R=0.1, seed=0, num_features=256)
        self.assertEqual(
            pathwise(cand.unsqueeze(-2).unsqueeze(-3)).shape, torch.Size([20, 3])
        )
        # a model list with a scalarizing transform
        m1, m2 = _model(seed=1), _model(seed=2)
        pt = ScalarizedPosteriorTransform(torch.tensor([1.0, -1.0], dtype=torch.double))
        acqf = GPThompsonSampling(
            ModelListGP(m1, m2), v=1.0, candidates=cand, seed=0, posterior_transform=pt
        )
        self.assertEqual(acqf(cand.unsqueeze(-2)).shape, torch.Size([20]))


class TestPathwiseSampler(BotorchTestCase):
    def test_value_is_rescaled_path_and_optimizable(self) -> None:
        torch.manual_seed(0)
        for dtype in (torch.float, torch.double):
            model = _model(dtype, kernel="matern52")
            acqf = GPThompsonSampling(model, B=1.0, R=0.1, seed=0, num_features=1024)
            X = torch.rand(7, 1, 1, dtype=dtype)
            values = acqf(X)
            # one function: a t-batch of 7 points equals 7 single evaluations
            singles = torch.cat([acqf(X[i : i + 1]) for i in range(7)])
            tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == torch.float else {}
            self.assertAllClose(values, singles, **tol)
            # ... and equals mu + v_t (f~ - mu) with f~ the path evaluated jointly
            path = acqf._path()
            joint = X.squeeze(-2)  # 7 x d, one q-batch
            f_tilde = path(joint)  # 7
            self.assertEqual(f_tilde.shape, torch.Size([7]))
            mean = model.posterior(joint).mean.squeeze(-1)
            self.assertAllClose(values, mean + acqf.v_t * (f_tilde - mean), **tol)
            bounds = torch.tensor([[0.0], [1.0]], dtype=dtype)
            x, val = optimize_acqf(acqf, bounds, q=1, num_restarts=4, raw_samples=64)
            self.assertEqual(x.shape, torch.Size([1, 1]))
            grid = torch.linspace(0, 1, 501, dtype=dtype).view(-1, 1, 1)
            self.assertGreaterEqual(float(val), float(acqf(grid).max()) - 1e-3)
            Xg = torch.rand(5, 1, 1, dtype=dtype, requires_grad=True)
            acqf(Xg).sum().backward()
            self.assertTrue(torch.isfinite(Xg.grad).all() and Xg.grad.abs().sum() > 0)

    def test_seed_reproducible(self) -> None:
        model = _model()
        X = torch.rand(6, 1, 1, dtype=torch.double)
        a = GPThompsonSampling(model, v=1.0, seed=11, num_features=512)(X)
        b = GPThompsonSampling(model, v=1.0, seed=11, num_features=512)(X)
        c = GPThompsonSampling(model, v=1.0, seed=12, num_features=512)(X)
        self.assertAllClose(a, b)
        self.assertFalse(torch.allclose(a, c))

    def test_paths_have_their_own_frequencies(self) -> None:
        model = _model()
        paths = draw_posterior_paths(model, num_paths=3, num_features=64)
        weight = paths.paths["prior_paths"].feature_map.weight  # 3 x 32 x 1
        self.assertEqual(weight.shape[0], 3)
        self.assertFalse(torch.allclose(weight[0], weight[1]))
        self.assertEqual(
            paths(torch.rand(4, 1, dtype=torch.double)).shape, torch.Size([3, 4])
        )


class TestValidation(BotorchTestCase):
    def test_errors_name_the_argument(self) -> None:
        model = _model()
        cand = torch.rand(4, 1, dtype=torch.double)
        cases = [
            (
                lambda: GPThompsonSampling(model),
                r"`B`.*`R`.*practical_acquisition\(model, \"GP-TS\"\)",
            ),
            (lambda: GPThompsonSampling(model, B=1.0, R=1.0, v=2.0), "not both"),
            (lambda: GPThompsonSampling(model, v=-1.0), "`v`"),
            (lambda: GPThompsonSampling(model, v=1.0, delta=2.0), "`delta`"),
            (lambda: GPThompsonSampling(model, v=1.0, sampler="gibbs"), "`sampler`"),
            (lambda: GPThompsonSampling(model, v=1.0, sampler="exact"), "`candidates`"),
            (
                lambda: GPThompsonSampling(model, v=1.0, candidates=cand[0]),
                "`candidates`",
            ),
            (
                lambda: GPThompsonSampling(model, v=1.0, num_features=7),
                "`num_features`",
            ),
            (lambda: GPThompsonSampling(model, v=1.0, seed=1.5), "`seed`"),
            (lambda: GPThompsonSampling(model, v=1.0, t=0), "`t`"),
            (
                lambda: GPThompsonSampling(
                    model, v=1.0, sampler="pathwise", candidates=cand
                ),
                "`candidates`",
            ),
        ]
        for fn, pattern in cases:
            with self.assertRaisesRegex(ValueError, pattern):
                fn()
        pt = ScalarizedPosteriorTransform(torch.tensor([1.0], dtype=torch.double))
        with self.assertRaisesRegex(UnsupportedError, "posterior_transform"):
            GPThompsonSampling(model, v=1.0, posterior_transform=pt)


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["rbf", "matern52"])
def test_pathwise_acquisition_instances_variance(kernel: str) -> None:
    """2000 separate acquisition instances (one path each, as in a real run)."""
    model = _model(kernel=kernel, n=20)
    X = torch.linspace(0.05, 0.95, 5, dtype=torch.double).view(-1, 1, 1)
    acqfs = [GPThompsonSampling(model, B=1.0, R=0.1, seed=i) for i in range(2000)]
    with torch.no_grad():
        draws = torch.stack([a(X) for a in acqfs])
        var = model.posterior(X).variance.view(-1)
    ratios = draws.var(0) / (acqfs[0].v_t ** 2 * var)
    print(f"{kernel}: per-instance pathwise variance ratios {ratios.tolist()}")
    assert torch.all((ratios - 1).abs() < 0.10), ratios
