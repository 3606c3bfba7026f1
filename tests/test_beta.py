"""Schedules and information gain, pinned against values computed by hand from the
papers' formulas (the literals below were evaluated from the formula in the comment)."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.utils.testing import BotorchTestCase

from botorch_bandits import beta as bb
from botorch_bandits.models import fixed_gp
from botorch_bandits.test_functions.problems import make_kernel


class TestSchedules(BotorchTestCase):
    def test_gp_ucb_finite_thm1(self) -> None:
        # 2 log(|D| t^2 pi^2 / (6 delta)), |D| = 100, t = 3, delta = 0.1
        self.assertAlmostEqual(bb.gp_ucb_beta_finite(3, 100, 0.1), 19.205360317578204)
        # grows like 4 log t
        diff = bb.gp_ucb_beta_finite(20, 100, 0.1) - bb.gp_ucb_beta_finite(10, 100, 0.1)
        self.assertAlmostEqual(diff, 4 * math.log(2))

    def test_gp_ucb_compact_thm2(self) -> None:
        # 2 log(2 t^2 pi^2/(3 delta)) + 2d log(t^2 d b r sqrt(log(4 d a/delta)))
        # t=2, d=2, a=2, b=1.5, r=3, delta=0.05
        self.assertAlmostEqual(
            bb.gp_ucb_beta_compact(2, 2, 2.0, 1.5, 3.0, 0.05), 30.370880449508164
        )

    def test_gp_ucb_rkhs_thm3(self) -> None:
        # 2B + 300 gamma_t log^3(t/delta), B=4, gamma=2.5, t=5, delta=0.1
        self.assertAlmostEqual(bb.gp_ucb_beta_rkhs(5, 4.0, 2.5, 0.1), 44909.97705632012)

    def test_igp_ucb_alg1(self) -> None:
        # B + R sqrt(2(gamma + 1 + ln(1/delta))), B=2, R=0.5, gamma=3, delta=0.1
        self.assertAlmostEqual(bb.igp_ucb_beta(3.0, 2.0, 0.5, 0.1), 3.7751880313073944)

    def test_gp_ts_alg2(self) -> None:
        # B + R sqrt(2(gamma + 1 + ln(2/delta)))
        self.assertAlmostEqual(bb.gp_ts_scale(3.0, 2.0, 0.5, 0.1), 3.870258307501131)

    def test_units(self) -> None:
        # the one conversion: "sqrt" -> sqrt(beta), "linear" -> beta
        self.assertAlmostEqual(bb.sigma_multiplier(9.0, "sqrt"), 3.0)
        self.assertAlmostEqual(bb.sigma_multiplier(9.0, "linear"), 9.0)
        self.assertAlmostEqual(bb.to_botorch_beta(9.0, "sqrt"), 9.0)
        self.assertAlmostEqual(bb.to_botorch_beta(3.0, "linear"), 9.0)
        with self.assertRaisesRegex(ValueError, "unit"):
            bb.sigma_multiplier(1.0, "std")

    def test_validation_names_argument(self) -> None:
        cases = [
            (lambda: bb.gp_ucb_beta_finite(0, 10, 0.1), "`t`"),
            (lambda: bb.gp_ucb_beta_finite(1, 0, 0.1), "`num_arms`"),
            (lambda: bb.gp_ucb_beta_finite(1, 10, 1.0), "`delta`"),
            (lambda: bb.gp_ucb_beta_finite(1, 10, 0.0), r"\(0, 1\)"),
            (lambda: bb.gp_ucb_beta_compact(1, 1, -1.0, 1.0, 1.0, 0.1), "`a`"),
            (lambda: bb.gp_ucb_beta_compact(1, 1, 1.0, 1.0, 0.0, 0.1), "`r`"),
            (lambda: bb.gp_ucb_beta_rkhs(1, -1.0, 1.0, 0.1), "`B`"),
            (lambda: bb.igp_ucb_beta(1.0, 1.0, -0.1, 0.1), "`R`"),
            (lambda: bb.igp_ucb_beta(float("nan"), 1.0, 0.1, 0.1), "`gamma_prev`"),
            (lambda: bb.gp_ts_scale(1.0, 1.0, 0.1, 1.5), "`delta`"),
        ]
        for fn, pattern in cases:
            with self.assertRaisesRegex(ValueError, pattern):
                fn()


class TestInformationGain(BotorchTestCase):
    def test_hand_value(self) -> None:
        # K = [[1, .5], [.5, 1]], lambda = .5: det(I + 2K) = det([[3, 1], [1, 3]]) = 8
        for dtype in (torch.float, torch.double):
            K = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=dtype)
            self.assertAlmostEqual(
                float(bb.information_gain(K, 0.5)), 0.5 * math.log(8), places=5
            )
            # incremental: 1/2 log 3 (sigma_0^2 = 1), then 1/2 log(1 + 2 * 5/6)
            path = bb.information_gain_path(K, 0.5)
            expected = [0.5 * math.log(3), 0.5 * math.log(3) + 0.5 * math.log(8 / 3)]
            self.assertAllClose(path, torch.tensor(expected, dtype=dtype), atol=1e-5)
            inc = bb.incremental_information_gain(
                torch.tensor([1.0, 5 / 6], dtype=dtype), 0.5
            )
            self.assertAllClose(inc, path, atol=1e-5)

    def test_exact_matches_logdet_and_model_variances(self) -> None:
        torch.manual_seed(0)
        X = torch.rand(30, 2, dtype=torch.double)
        X[5] = X[3]  # a repeated pull
        k = make_kernel("rbf", 0.3)
        K = k(X).to_dense()
        lam = 0.05
        exact = torch.logdet(torch.eye(30, dtype=torch.double) + K / lam) / 2
        self.assertAllClose(bb.information_gain(K, lam), exact)
        # incremental along the sequence from a real GP's posterior variances
        variances = []
        for t in range(30):
            model = fixed_gp(X[:t], torch.zeros(t, 1, dtype=torch.double), k, lam)
            variances.append(model.posterior(X[t : t + 1]).variance.squeeze())
        inc = bb.incremental_information_gain(torch.stack(variances), lam)
        self.assertAllClose(inc[-1], exact, atol=1e-8)
        self.assertAllClose(inc, bb.information_gain_path(K, lam), atol=1e-8)

    def test_heteroskedastic_and_batch(self) -> None:
        torch.manual_seed(1)
        X = torch.rand(3, 8, 1, dtype=torch.double)  # 3 batches
        K = make_kernel("matern52", 0.2)(X).to_dense()
        noise = torch.rand(3, 8, dtype=torch.double) + 0.1
        got = bb.information_gain(K, noise)
        self.assertEqual(got.shape, torch.Size([3]))
        D = torch.diag_embed(noise.rsqrt())
        exact = torch.logdet(torch.eye(8, dtype=torch.double) + D @ K @ D) / 2
        self.assertAllClose(got, exact)
        with self.assertRaisesRegex(ValueError, "`noise`"):
            bb.information_gain(K, 0.0)
        self.assertEqual(float(bb.information_gain(K[0, :0, :0], 0.1)), 0.0)

    def test_observed_information_gain_of_model(self) -> None:
        torch.manual_seed(2)
        X = torch.rand(12, 1, dtype=torch.double)
        k = make_kernel("rbf", 0.2)
        model = fixed_gp(X, torch.randn(12, 1, dtype=torch.double), k, 0.02)
        expected = bb.information_gain(k(X).to_dense(), 0.02)
        self.assertAllClose(bb.observed_information_gain(model), expected)
        src = bb.resolve_gamma("observed")
        self.assertAlmostEqual(src(12, model), float(expected))
        with self.assertRaisesRegex(ValueError, "12 observed points"):
            src(13, model)


def _greedy_brute_force(K: torch.Tensor, lam: float, T: int) -> list[float]:
    """Uncertainty sampling by recomputing every posterior variance from scratch."""
    chosen: list[int] = []
    gains = []
    total = 0.0
    for _ in range(T):
        if chosen:
            Kc = K[chosen][:, chosen] + lam * torch.eye(len(chosen), dtype=K.dtype)
            kx = K[:, chosen]
            var = K.diagonal() - (kx @ torch.linalg.solve(Kc, kx.T)).diagonal()
        else:
            var = K.diagonal().clone()
        i = int(var.argmax())
        total += 0.5 * math.log(1 + float(var[i]) / lam)
        gains.append(total)
        chosen.append(i)
    return gains


class TestGreedyGamma(BotorchTestCase):
    def test_matches_brute_force_greedy(self) -> None:
        X = torch.linspace(0, 1, 40, dtype=torch.double).unsqueeze(-1)
        K = make_kernel("rbf", 0.2)(X).to_dense()
        res = bb.greedy_information_gain(K, 0.025, horizon=60)  # T > N: repeats
        brute = torch.tensor(_greedy_brute_force(K, 0.025, 60), dtype=torch.double)
        self.assertAllClose(res.information_gain, brute, atol=1e-8)
        self.assertAllClose(res.gamma, bb.GREEDY_FACTOR * brute, atol=1e-8)
        self.assertAlmostEqual(bb.GREEDY_FACTOR, 1.5819767068693265)
        # the greedy information gain equals the exact gain of the chosen points
        Kc = K[res.indices][:, res.indices]
        self.assertAllClose(res.information_gain[-1], bb.information_gain(Kc, 0.025))

    def test_batched(self) -> None:
        X = torch.rand(2, 25, 1, dtype=torch.double)
        K = make_kernel("rbf", 0.2)(X).to_dense()
        res = bb.greedy_information_gain(K, 0.1, horizon=10)
        self.assertEqual(res.gamma.shape, torch.Size([2, 10]))
        for i in range(2):
            single = bb.greedy_information_gain(K[i], 0.1, horizon=10)
            self.assertAllClose(res.gamma[i], single.gamma)

    def test_srinivas_sec6_setting_is_sublinear(self) -> None:
        # acceptance 3: SE l = 0.2 on 1000 points of [0, 1], lambda = 0.025
        X = torch.linspace(0, 1, 1000, dtype=torch.double).unsqueeze(-1)
        K = make_kernel("rbf", 0.2)(X).to_dense()
        gamma = bb.greedy_information_gain(K, 0.025, horizon=1000).gamma
        g10, g100, g1000 = (float(gamma[n - 1]) for n in (10, 100, 1000))
        print(
            f"greedy gamma_T: T=10 {g10:.3f}, T=100 {g100:.3f}, T=1000 {g1000:.3f}, "
            f"ratio gamma_1000/gamma_100 = {g1000 / g100:.3f}"
        )
        self.assertLess(g10, g100)
        self.assertLess(g100, g1000)
        self.assertLess(g1000 / g100, 10.0)

    def test_gamma_sources(self) -> None:
        X = torch.linspace(0, 1, 50, dtype=torch.double).unsqueeze(-1)
        K = make_kernel("rbf", 0.2)(X).to_dense()
        src = bb.GreedyGamma(K, noise=0.05, horizon=20)
        res = bb.greedy_information_gain(K, 0.05, 20)
        self.assertEqual(src(0), 0.0)
        self.assertAlmostEqual(src(7), float(res.gamma[6]))
        with self.assertRaisesRegex(ValueError, "horizon=20"):
            src(21)
        self.assertIsInstance(bb.resolve_gamma(2.5), bb.ConstantGamma)
        self.assertEqual(bb.resolve_gamma(2.5)(100), 2.5)
        self.assertEqual(bb.resolve_gamma(lambda n: 0.5 * n)(4), 2.0)
        self.assertIs(bb.resolve_gamma(src), src)
        with self.assertRaisesRegex(ValueError, "'observed'"):
            bb.resolve_gamma("max")
        with self.assertRaisesRegex(ValueError, "`gamma`"):
            bb.resolve_gamma(-1.0)
        with self.assertRaisesRegex(ValueError, "need >= 0"):
            bb.resolve_gamma(lambda n: -1.0)(3)


class TestOrders:
    def test_theorem5_orders(self) -> None:
        # d log T; (log T)^(d+1); T^(d(d+1)/(2 nu + d(d+1))) log T, at T = 100
        assert bb.gamma_growth_order("linear", 100, dim=2) == pytest.approx(
            9.210340371976184
        )
        assert bb.gamma_growth_order("rbf", 100, dim=1) == pytest.approx(
            21.207592441913597
        )
        assert bb.gamma_growth_order("matern", 100, dim=1, nu=2.5) == pytest.approx(
            17.166203466270794
        )
        with pytest.raises(ValueError, match="`nu`"):
            bb.gamma_growth_order("matern", 100, dim=1, nu=0.5)
        with pytest.raises(ValueError, match="`kernel`"):
            bb.gamma_growth_order("periodic", 100, dim=1)
        order = bb.GammaOrder("rbf", dim=1, scale=0.5)
        assert order(0) == 0.0
        assert order(100) == pytest.approx(0.5 * 21.207592441913597)
