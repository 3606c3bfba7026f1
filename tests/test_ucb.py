"""GPUCB and IGPUCB: the value is mu + (paper multiplier) * sigma, pinned by hand."""

from __future__ import annotations

import math

import torch
from botorch.acquisition import UpperConfidenceBound
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.models import ModelListGP
from botorch.utils.testing import BotorchTestCase, MockModel, MockPosterior

from botorch_bandits import GPUCB, IGPUCB, GammaOrder, GreedyGamma
from botorch_bandits import beta as bb
from botorch_bandits.models import fixed_gp
from botorch_bandits.test_functions.problems import make_kernel


def _hand_posterior(X, Y, Xs, lengthscale, lam):
    """mu and sigma from the formulas of SPEC (k(x, x') = exp(-|x-x'|^2 / (2 l^2)))."""
    k = lambda A, B: torch.exp(-(torch.cdist(A, B) ** 2) / (2 * lengthscale**2))  # noqa: E731
    Kinv = torch.linalg.inv(k(X, X) + lam * torch.eye(X.shape[0], dtype=X.dtype))
    ks = k(X, Xs)
    mu = ks.T @ Kinv @ Y.squeeze(-1)
    var = 1.0 - (ks.T @ Kinv @ ks).diagonal()
    return mu, var.sqrt()


class TestUCBValues(BotorchTestCase):
    def _model(self, dtype, n=6, lam=0.05):
        gen = torch.Generator().manual_seed(3)
        X = torch.rand(n, 1, generator=gen, dtype=dtype)
        Y = torch.sin(6 * X) + 0.1 * torch.randn(n, 1, generator=gen, dtype=dtype)
        kernel = make_kernel("rbf", 0.2, dtype)
        return X, Y, fixed_gp(X, Y, kernel, lam)

    def test_gp_ucb_finite_equals_mu_plus_sqrt_beta_sigma(self) -> None:
        for dtype in (torch.float, torch.double):
            X, Y, model = self._model(dtype)
            Xs = torch.tensor([[0.1], [0.45], [0.9]], dtype=dtype)
            mu, sigma = _hand_posterior(X, Y, Xs, 0.2, 0.05)
            acqf = GPUCB(model, schedule="finite", num_arms=100, delta=0.1)
            self.assertEqual(acqf.t, 7)  # 6 observations -> round 7
            beta = 2 * math.log(100 * 49 * math.pi**2 / (6 * 0.1))
            self.assertAlmostEqual(acqf.beta_t, beta, places=10)
            expected = mu + math.sqrt(beta) * sigma
            tol = 1e-4 if dtype == torch.float else 1e-6
            self.assertAllClose(acqf(Xs.unsqueeze(-2)), expected, atol=tol, rtol=tol)
            # same number as BoTorch's UCB with beta in the "sqrt" unit
            ref = UpperConfidenceBound(model, beta=bb.to_botorch_beta(beta, "sqrt"))
            self.assertAllClose(acqf(Xs.unsqueeze(-2)), ref(Xs.unsqueeze(-2)))

    def test_gp_ucb_other_schedules(self) -> None:
        X, Y, model = self._model(torch.double)
        Xs = torch.tensor([[0.3]], dtype=torch.double)
        mu, sigma = _hand_posterior(X, Y, Xs, 0.2, 0.05)
        cases = [
            (
                GPUCB(model, "compact", dim=1, a=1.0, b=2.0, r=1.0, delta=0.1),
                2 * math.log(2 * 49 * math.pi**2 / 0.3)
                + 2 * math.log(49 * 2.0 * math.sqrt(math.log(40.0))),
            ),
            (
                GPUCB(model, "rkhs", B_squared=2.0, gamma=lambda n: 0.1 * n, delta=0.1),
                2 * 2.0 + 300 * 0.7 * math.log(70.0) ** 3,  # gamma_t at t = 7
            ),
            (GPUCB(model, "constant", beta=4.0), 4.0),
            (
                GPUCB(model, "finite", num_arms=10, beta_scale=0.2),
                0.2 * 2 * math.log(10 * 49 * math.pi**2 / 0.6),
            ),
        ]
        for acqf, beta in cases:
            self.assertAlmostEqual(acqf.beta_t, beta, places=8)
            self.assertAllClose(acqf(Xs.unsqueeze(-2)), mu + math.sqrt(beta) * sigma)

    def test_igp_ucb_equals_mu_plus_beta_sigma(self) -> None:
        for dtype in (torch.float, torch.double):
            X, Y, model = self._model(dtype)
            Xs = torch.tensor([[0.05], [0.5], [0.77]], dtype=dtype)
            mu, sigma = _hand_posterior(X, Y, Xs, 0.2, 0.05)
            # gamma_{t-1} = observed information gain of the 6 points (by hand)
            K = torch.exp(-(torch.cdist(X, X) ** 2) / (2 * 0.2**2))
            gain = float(torch.logdet(torch.eye(6, dtype=dtype) + K / 0.05) / 2)
            acqf = IGPUCB(model, B=2.0, R=0.3, delta=0.1)
            beta = 2.0 + 0.3 * math.sqrt(2 * (gain + 1 + math.log(10.0)))
            places = 4 if dtype == torch.float else 6
            self.assertAlmostEqual(acqf.beta_t, beta, places=places)
            tol = 1e-4 if dtype == torch.float else 1e-6
            self.assertAllClose(
                acqf(Xs.unsqueeze(-2)), mu + beta * sigma, atol=tol, rtol=tol
            )
            # a number, a callable of the index, and the constant-beta option
            self.assertAlmostEqual(
                IGPUCB(model, B=2.0, R=0.3, gamma=1.5).beta_t,
                2.0 + 0.3 * math.sqrt(2 * (1.5 + 1 + math.log(10.0))),
            )
            seen: list[int] = []

            def record(n: int, seen: list[int] = seen) -> float:
                seen.append(n)
                return 0.0

            beta_rec = IGPUCB(model, B=1.0, R=0.1, gamma=record).beta_t
            self.assertEqual(seen, [6])  # gamma_{t-1} at t = 7
            self.assertAlmostEqual(
                beta_rec, 1.0 + 0.1 * math.sqrt(2 * (1 + math.log(10.0)))
            )
            self.assertEqual(IGPUCB(model, beta=2.5).beta_t, 2.5)

    def test_round_index_override_and_maximize(self) -> None:
        X, Y, model = self._model(torch.double)
        Xs = torch.tensor([[0.2]], dtype=torch.double)
        mu, sigma = _hand_posterior(X, Y, Xs, 0.2, 0.05)
        acqf = GPUCB(model, num_arms=5, t=2, maximize=False)
        beta = 2 * math.log(5 * 4 * math.pi**2 / 0.6)
        self.assertEqual(acqf.t, 2)
        self.assertAllClose(acqf(Xs.unsqueeze(-2)), -mu + math.sqrt(beta) * sigma)

    def test_mock_model_hand_values(self) -> None:
        # MockPosterior: mean 1.5, variance 4 -> IGP-UCB with beta 3: 1.5 + 3 * 2
        mean = torch.tensor([[[1.5]]], dtype=torch.double)
        variance = torch.tensor([[[4.0]]], dtype=torch.double)
        model = MockModel(MockPosterior(mean=mean, variance=variance))
        X = torch.zeros(1, 1, 1, dtype=torch.double)
        acqf = IGPUCB(model, beta=3.0, t=4)
        self.assertAllClose(acqf(X), torch.tensor([7.5], dtype=torch.double))
        acqf = GPUCB(model, "constant", beta=9.0, t=4)  # sqrt unit: 1.5 + 3 * 2
        self.assertAllClose(acqf(X), torch.tensor([7.5], dtype=torch.double))
        with self.assertRaisesRegex(ValueError, "pass `t`"):
            _ = IGPUCB(model, beta=1.0).t

    def test_posterior_transform_two_outputs(self) -> None:
        # independent outputs scalarized by w = (1, 2): mean w.mu, var sum w_i^2 var_i
        X, Y, _ = self._model(torch.double)
        Y2 = torch.cat([Y, -2 * Y], dim=-1)
        model = fixed_gp(X, Y2[:, :1], make_kernel("rbf", 0.2), 0.05)
        model2 = fixed_gp(X, Y2[:, 1:], make_kernel("rbf", 0.3), 0.05)
        models = ModelListGP(model, model2)
        w = torch.tensor([1.0, 2.0], dtype=torch.double)
        pt = ScalarizedPosteriorTransform(w)
        Xs = torch.tensor([[0.3], [0.6]], dtype=torch.double)
        p1, p2 = model.posterior(Xs), model2.posterior(Xs)
        mu = (p1.mean + 2 * p2.mean).squeeze(-1)
        sigma = (p1.variance + 4 * p2.variance).sqrt().squeeze(-1)
        acqf = IGPUCB(models, beta=1.7, posterior_transform=pt)
        self.assertEqual(acqf.t, 7)
        self.assertAllClose(acqf(Xs.unsqueeze(-2)), mu + 1.7 * sigma)

    def test_model_list_round_index(self) -> None:
        _, _, m1 = self._model(torch.double)
        _, _, m2 = self._model(torch.double)
        models = ModelListGP(m1, m2)
        pt = ScalarizedPosteriorTransform(torch.tensor([0.5, 0.5], dtype=torch.double))
        acqf = GPUCB(models, num_arms=10, posterior_transform=pt)
        self.assertEqual(acqf.t, 7)

    def test_batch_model(self) -> None:
        gen = torch.Generator().manual_seed(0)
        X = torch.rand(3, 5, 1, generator=gen, dtype=torch.double)  # 3 seeds
        Y = torch.randn(3, 5, 1, generator=gen, dtype=torch.double)
        model = fixed_gp(X, Y, make_kernel("rbf", 0.2), 0.1)
        acqf = GPUCB(model, num_arms=50)
        Xs = torch.rand(4, 3, 1, 1, dtype=torch.double)  # 4 x (model batch 3) x q x d
        self.assertEqual(acqf(Xs).shape, torch.Size([4, 3]))
        # observed gamma of a batched model: each batch (seed) gets its own beta_t
        acqf2 = IGPUCB(model, B=1.0, R=0.1)
        gains = bb.observed_information_gain(model)
        self.assertEqual(gains.shape, torch.Size([3]))
        self.assertFalse(torch.allclose(gains[0], gains[1]))
        expected_beta = torch.tensor(
            [bb.igp_ucb_beta(float(g), 1.0, 0.1, 0.1) for g in gains],
            dtype=torch.double,
        )
        self.assertAllClose(acqf2.beta_t, expected_beta)
        post = model.posterior(Xs)
        mean = post.mean.squeeze(-1).squeeze(-1)  # 4 x 3
        sigma = post.variance.sqrt().squeeze(-1).squeeze(-1)
        self.assertAllClose(acqf2(Xs), mean + expected_beta * sigma)
        # each seed's value depends on its own data only
        single = fixed_gp(X[1], Y[1], make_kernel("rbf", 0.2), 0.1)
        alone = IGPUCB(single, B=1.0, R=0.1)(Xs[:, 1])
        self.assertAllClose(acqf2(Xs)[:, 1], alone)


class TestUCBValidation(BotorchTestCase):
    def test_errors_name_the_argument(self) -> None:
        X = torch.rand(3, 1, dtype=torch.double)
        model = fixed_gp(
            X, torch.zeros(3, 1, dtype=torch.double), make_kernel("rbf", 0.2), 0.1
        )
        cases = [
            (lambda: GPUCB(model, "finite"), "`num_arms`"),
            (lambda: GPUCB(model, "finite", num_arms=0), "`num_arms`"),
            (lambda: GPUCB(model, "sphere"), "`schedule`"),
            (lambda: GPUCB(model, "finite", num_arms=3, delta=0.0), "`delta`"),
            (
                lambda: GPUCB(model, "finite", num_arms=3, B_squared=1.0),
                "does not use `B_squared`",
            ),
            (lambda: GPUCB(model, "rkhs", B_squared=1.0), "`gamma`"),
            (lambda: GPUCB(model, "rkhs", B_squared=-1.0, gamma=1.0), "`B_squared`"),
            (lambda: GPUCB(model, "rkhs", B_squared=1.0, gamma="observed"), "gamma_t"),
            (
                lambda: GPUCB(model, "rkhs", B_squared=1.0, B=1.0, gamma=1.0),
                "`B_squared`.*`B`.*both",
            ),
            (lambda: GPUCB(model, "constant", beta=-1.0), "`beta`"),
            (lambda: GPUCB(model, "finite", num_arms=3, t=0), "`t`"),
            (
                lambda: GPUCB(model, "finite", num_arms=3, beta_scale=0.0),
                "`beta_scale`",
            ),
            (
                lambda: IGPUCB(model),
                r"`B`.*`R`.*practical_acquisition\(model, \"IGP-UCB\"\)",
            ),
            (lambda: IGPUCB(model, B=1.0, R=-1.0), "`R`"),
            (lambda: IGPUCB(model, B=-1.0, R=1.0), "`B`"),
            (lambda: IGPUCB(model, B=1.0, R=1.0, delta=1.0), "`delta`"),
            (lambda: IGPUCB(model, B=1.0, R=1.0, beta=2.0), "not both"),
            (lambda: IGPUCB(model, B=1.0, R=1.0, t=-3), "`t`"),
        ]
        for fn, pattern in cases:
            with self.assertRaisesRegex(ValueError, pattern):
                fn()

    def test_gamma_order_source_in_rkhs_schedule(self) -> None:
        X = torch.rand(4, 1, dtype=torch.double)
        model = fixed_gp(
            X, torch.zeros(4, 1, dtype=torch.double), make_kernel("rbf", 0.2), 0.1
        )
        order = GammaOrder("rbf", dim=1, scale=2.0)
        acqf = GPUCB(model, "rkhs", B_squared=1.0, gamma=order)
        self.assertAlmostEqual(acqf.beta_t, bb.gp_ucb_beta_rkhs(5, 1.0, order(5), 0.1))
        K = make_kernel("rbf", 0.2)(
            torch.linspace(0, 1, 30, dtype=torch.double).unsqueeze(-1)
        )
        greedy = GreedyGamma(K.to_dense(), noise=0.1, horizon=10)
        acqf = GPUCB(model, "rkhs", B_squared=1.0, gamma=greedy)
        self.assertAlmostEqual(acqf.beta_t, bb.gp_ucb_beta_rkhs(5, 1.0, greedy(5), 0.1))

    def test_B_is_a_deprecated_alias_of_B_squared(self) -> None:
        """``GPUCB(B=...)`` still takes the bound on the squared norm (the same value
        as ``B_squared``), and says so; IGPUCB's ``B`` is the norm."""
        X = torch.rand(4, 1, dtype=torch.double)
        model = fixed_gp(
            X, torch.zeros(4, 1, dtype=torch.double), make_kernel("rbf", 0.2), 0.1
        )
        new = GPUCB(model, "rkhs", B_squared=4.0, gamma=1.0)
        with self.assertWarnsRegex(
            DeprecationWarning, r"B_squared.*\*squared\* RKHS norm"
        ):
            old = GPUCB(model, "rkhs", B=4.0, gamma=1.0)
        self.assertEqual(old.B_squared, 4.0)
        self.assertEqual(old.beta_t, new.beta_t)
        self.assertEqual(new.beta_t, bb.gp_ucb_beta_rkhs(5, 4.0, 1.0, 0.1))
        with self.assertWarnsRegex(DeprecationWarning, "GPUCB.B is deprecated"):
            self.assertEqual(new.B, 4.0)
