"""Change-point restarts (Avanesov): the detector, GP-UCB-CPD's state, the schedules,
the piecewise simulator."""

from __future__ import annotations

import math

import pytest
import torch

from bandit_experiments.reproduction.stats import fit_power_law
from botorch_bandits.changepoint import (
    GPUCBCPD,
    ChangePointDetector,
    box_domain,
    cpd_beta,
    cpd_noise_variance,
    cpd_regularization,
    cpd_threshold,
    cpd_threshold_theory,
    finite_domain,
    ucb_regularization,
)
from botorch_bandits.models import fixed_gp
from botorch_bandits.test_functions.piecewise import (
    PIECEWISE_ALGORITHMS,
    piecewise_gp_problem,
    simulate_piecewise,
)
from botorch_bandits.test_functions.problems import make_kernel

GRID = torch.linspace(0, 5, 1000, dtype=torch.double).unsqueeze(-1)


def _draws(num: int, seed: int) -> torch.Tensor:
    p = piecewise_gp_problem(num_pieces=num, horizon=num, num_seeds=1, seed=seed)
    return p.values[:, 0]  # num x 1000


def test_schedules_by_hand() -> None:
    assert cpd_threshold(1) == 2.6
    assert math.isclose(cpd_threshold(8), 2.6 * 8 ** (-6 / 7))
    assert math.isclose(cpd_regularization(4, c=3.0), 3.0 * 4 ** (-6 / 7))
    assert math.isclose(cpd_noise_variance(0.05, 1200), 6 * 0.0025 * math.log(1200))
    assert math.isclose(ucb_regularization(10, 0.5), 0.05)
    # beta_t = D t^(d(d+1)/(2 alpha + d(d+1))) log^4 T: d = 1, alpha = 5/2 -> t^(2/7)
    assert math.isclose(
        cpd_beta(100, 0.02, 2400), 0.02 * 100 ** (2 / 7) * math.log(2400) ** 4
    )
    theory = cpd_threshold_theory(5, C=1.0, F=2.0, g=0.05, horizon=1000)
    assert math.isclose(theory, (4 + 0.05 * math.log(1000) ** 2) * 5 ** (-6 / 7))
    with pytest.raises(ValueError, match="`c`"):
        cpd_regularization(3, c=-1.0)
    with pytest.raises(ValueError, match="`n`"):
        cpd_threshold(0)


def test_statistic_matches_a_brute_force_integral() -> None:
    """Delta^2 on the grid equals sum_g w_g (mu_1 - mu_2)^2 with the two means from
    SingleTaskGPs (noise n rho_n), and a 100x finer grid agrees to 1e-3 relative."""
    k = make_kernel("matern52", 1.0)
    det = ChangePointDetector(k, finite_domain(GRID, volume=5.0), c=2.0)
    gen = torch.Generator().manual_seed(3)
    X = 5 * torch.rand(12, 1, generator=gen, dtype=torch.double)
    y = torch.randn(12, generator=gen, dtype=torch.double)
    n, noise = 6, 6 * cpd_regularization(6, 2.0)
    mus = []
    fine = torch.linspace(0, 5, 100001, dtype=torch.double).unsqueeze(-1)
    for half in (slice(0, n), slice(n, 12)):
        gp = fixed_gp(X[half], y[half].unsqueeze(-1), k, noise)
        with torch.no_grad():
            mus.append(
                (
                    gp.posterior(GRID.unsqueeze(-2)).mean.reshape(-1),
                    gp.posterior(fine.unsqueeze(-2)).mean.reshape(-1),
                )
            )
    grid_sum = float(((mus[0][0] - mus[1][0]) ** 2).sum() * 5 / 1000)
    brute = float(torch.trapezoid((mus[0][1] - mus[1][1]) ** 2, fine.squeeze(-1)))
    stat = det.statistic(X, y)
    assert math.isclose(stat, grid_sum, rel_tol=1e-9)
    assert math.isclose(stat, brute, rel_tol=1e-3)


def test_box_domain_qmc_integral() -> None:
    """On a 2-D box the QMC statistic matches a dense-grid integral within 1 %."""
    k = make_kernel("matern52", 0.5)
    bounds = torch.tensor([[0.0, 0.0], [2.0, 1.0]], dtype=torch.double)
    gen = torch.Generator().manual_seed(0)
    X = torch.rand(16, 2, generator=gen, dtype=torch.double) * bounds[1]
    y = torch.randn(16, generator=gen, dtype=torch.double)
    qmc = ChangePointDetector(k, box_domain(bounds, 4096, seed=1), c=1.0).statistic(
        X, y
    )
    g1, g2 = (
        torch.linspace(0, 2, 401, dtype=torch.double),
        torch.linspace(0, 1, 201, dtype=torch.double),
    )
    dense = torch.cartesian_prod(g1, g2)
    w = torch.full((dense.shape[0],), 2.0 / dense.shape[0], dtype=torch.double)
    from botorch_bandits.changepoint import IntegrationDomain

    ref = ChangePointDetector(k, IntegrationDomain(dense, w), c=1.0).statistic(X, y)
    assert abs(qmc - ref) / ref < 0.01
    with pytest.raises(ValueError, match="bounds"):
        box_domain(torch.tensor([[1.0], [0.0]]))


def test_detector_quiet_on_stationary_data_and_fires_on_a_jump() -> None:
    k = make_kernel("matern52", 1.0)
    det = ChangePointDetector(k, finite_domain(GRID, volume=5.0), c=20.0)
    f = _draws(2, seed=5)
    gen = torch.Generator().manual_seed(11)
    arms = torch.randint(1000, (80,), generator=gen)
    noise = 0.05 * torch.randn(80, generator=gen, dtype=torch.double)
    y = f[0][arms] + noise
    assert det.scan(GRID[arms], y) is None  # stationary: no tail reports a change
    jump = y.clone()
    jump[40:] = f[1][arms[40:]] + noise[40:]  # another function from sample 41 on
    n = det.scan(GRID[arms], jump)
    assert n is not None and n <= 40
    shifted = y.clone()
    shifted[40:] += 3.0  # a clear jump of the level
    assert det(GRID[arms], shifted) is True
    never = ChangePointDetector(k, finite_domain(GRID, 5.0), c=20.0, threshold=math.inf)
    assert never.scan(GRID[arms], shifted) is None


def test_uniform_exploration_rule_on_a_hand_trace() -> None:
    """|U| <= xi sqrt(|H|) with xi = sqrt(3), step by step (hand computed):
    (U, H) = (0,0) T, (1,1) T, (2,2) T, (3,3) T, (4,4) F: 4 > 3.46, (4,5) F: 4 > 3.87,
    (4,6) T: 4 <= 4.24, (5,7) F, (5,8) F, (5,9) T: 5 <= 5.196, (6,10) F, (6,11) F,
    (6,12) T: 6 <= 6."""
    k = make_kernel("matern52", 1.0)
    never = ChangePointDetector(k, finite_domain(GRID, 5.0), c=1.0, threshold=math.inf)
    algo = GPUCBCPD(never, xi=math.sqrt(3.0), points=GRID)
    seen = []
    for t in range(13):
        seen.append(algo.next_is_uniform())
        algo.record(t, 0.1 * t)
    T, F = True, False
    assert seen == [T, T, T, T, F, F, T, F, F, T, F, F, T]
    assert algo.state.uniform == [0, 1, 2, 3, 6, 9, 12]
    assert algo.state.history == list(range(13))
    plain = GPUCBCPD(never, xi=0.0, points=GRID)  # GP-UCB: one uniform step
    flags = []
    for t in range(5):
        flags.append(plain.next_is_uniform())
        plain.record(t, 0.0)
    assert flags == [T, F, F, F, F]


def test_a_reset_empties_exactly_h_and_u_and_replay_agrees() -> None:
    k = make_kernel("matern52", 1.0)
    eager = ChangePointDetector(k, finite_domain(GRID, 5.0), c=1.0, threshold=1e-12)
    algo = GPUCBCPD(eager, points=GRID)
    assert algo.record(100, 0.3) is False  # one uniform pair: nothing to test
    assert algo.state.uniform == [0] and algo.state.history == [0]
    assert algo.record(900, -0.8) is True  # two pairs that differ: detected, reset
    assert algo.state.history == [] and algo.state.uniform == []
    assert algo.state.restarts == [1] and algo.state.detections == [1]
    assert algo.X == [100, 900] and algo.y == [0.3, -0.8]  # the record keeps every pair
    algo.record(500, 0.1)
    assert algo.state.history == [2] and algo.state.uniform == [2]
    again = GPUCBCPD.replay(algo.X, algo.y, eager, points=GRID)
    assert again.state == algo.state
    with pytest.raises(ValueError, match="`y` must be finite"):
        algo.record(3, math.nan)


def test_simulator_baselines_behave_as_defined() -> None:
    p = piecewise_gp_problem(num_pieces=3, horizon=90, num_seeds=3, seed=1)
    results = {a: simulate_piecewise(p, a, seed=2) for a in PIECEWISE_ALGORITHMS}
    oracle = results["GP-UCB-Oracle"]
    assert all(r == list(p.change_points) for r in oracle.restarts)
    assert all(r == [] for r in results["GP-UCB-NO-Detector"].restarts)
    plain = results["GP-UCB"]
    assert plain.uniform.sum(0).tolist() == [1, 1, 1]  # xi = 0: the first step only
    pieces = p.piece_index()
    opt = p.values.max(-1).values[pieces]  # T x S: the active piece's optimum
    for r in results.values():
        assert torch.equal(r.optimum, opt)
        assert bool((r.cumulative_regret.diff(dim=0) >= -1e-12).all())
    # the same uniform-step draws across algorithms (common random numbers)
    assert torch.equal(results["GP-UCB-CPD"].arms[0], oracle.arms[0])
    with pytest.raises(ValueError, match="algorithm"):
        simulate_piecewise(p, "GP-UCB-XYZ")


def test_cpd_restarts_after_a_change() -> None:
    """A single strong change: GP-UCB-CPD restarts after it, not before."""
    p = piecewise_gp_problem(num_pieces=2, horizon=400, num_seeds=4, seed=3)
    r = simulate_piecewise(p, "GP-UCB-CPD", seed=0)
    delays, missed, false = r.detection_delays()
    assert false == 0
    assert len(delays) + missed == 4 and len(delays) >= 1


def test_power_law_fit_recovers_the_exponent() -> None:
    x = torch.tensor([900.0, 1275, 1650, 2025, 2400])
    y = 1.86 * x**0.74 * torch.tensor([1.01, 0.99, 1.02, 0.98, 1.0])
    law = fit_power_law(x, y)
    assert abs(law.c - 0.74) < 0.03 and law.ci[0] < 0.74 < law.ci[1]
    with pytest.raises(ValueError, match="length"):
        fit_power_law([1.0, 2.0], [1.0, 2.0])


def test_asynchronous_replay_skips_values_not_yet_arrived() -> None:
    """The Ax node's record: uniform decisions as issued and running steps without
    a value. With every value known and the flags the rule itself takes, the replay
    equals the synchronous one; a uniform step without a value is in U but in no
    scan until it has one."""
    torch.manual_seed(0)
    kernel = make_kernel("matern52", 0.2)
    domain = finite_domain(torch.linspace(0, 1, 64).unsqueeze(-1), volume=1.0)
    det = ChangePointDetector(
        kernel, domain, c=1.0, threshold=lambda n: 0.05, alpha=2.5, d=1
    )
    X = torch.rand(40, 1, dtype=torch.double)
    y = [0.0 if t < 20 else math.sin(6 * float(X[t])) for t in range(40)]
    sync = GPUCBCPD.replay(list(X), y, det)
    # the flags of the synchronous run (the rule's decisions, step by step)
    flags = [False] * 40
    algo = GPUCBCPD(det)
    for t in range(40):
        flags[t] = algo.next_is_uniform()
        algo.record(X[t], y[t])
    async_all = GPUCBCPD.replay(list(X), y, det, uniform=flags)
    assert async_all.state == sync.state and sync.state.restarts
    # the first uniform step after the change has not returned yet: it is kept in U,
    # no scan uses it, and the detection waits for a later uniform step with a value
    first = next(t for t in range(20, 40) if flags[t])
    y_pending = list(y)
    y_pending[first] = None
    pending = GPUCBCPD.replay(list(X), y_pending, det, uniform=flags)
    assert all(r != first for r in pending.state.restarts)
    with pytest.raises(ValueError, match="uniform"):
        GPUCBCPD.replay(list(X), y, det, uniform=flags[:-1])
