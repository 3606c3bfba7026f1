r"""Long-term-constrained bandits on the finite-arm engine: Shi & Eryilmaz (AISTATS 2022)
Algorithms 2 and 3 with IGP-UCB (or GP-TS, their Remark 1) as the inner algorithm, over
a batch of seeds; docs/reproducing.md ("The simulators") describes an epoch and the
choices the paper leaves open."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from botorch.acquisition.analytic import LogConstrainedExpectedImprovement
from botorch.models.model import ModelList
from torch import Tensor

from botorch_bandits.acquisition.factory import Confidence, make_acquisition
from botorch_bandits.constraints import (
    ExponentialPenalty,
    Penalty,
    composite_targets,
    epoch_schedule,
)
from botorch_bandits.core.steps.constraints import epoch_multipliers
from botorch_bandits.models import FiniteArmGP
from botorch_bandits.seeding import step_seed
from botorch_bandits.test_functions.problems import make_kernel
from botorch_bandits.test_functions.simulator import ENGINE_DEFER

# public: what the tutorials use (the rest serves the reproductions)
__all__ = [
    "ConstrainedProblem",
    "ConstrainedResult",
    "shi2022_e1_problem",
    "shi2022_e2_problem",
    "simulate_constrained",
]


@dataclass(frozen=True)
class ConstrainedProblem:
    r"""A finite-arm problem with long-term constraints :math:`\frac1T\sum_t g(x_t)\le 0`.

    Attributes:
        name: Short name.
        arms: ``N x d`` candidate set.
        f: ``N`` objective values.
        g: ``N x m`` constraint values.
        K: ``N x N`` kernel matrix the algorithm uses.
        noise_sd_f, noise_sd_g: Observation noise standard deviations (0: exact g);
            with ``g_noise="uniform"``, ``noise_sd_g`` is the half-width ``a`` of
            Unif[-a, a] (an ``a``-sub-Gaussian noise).
        noise: The algorithm's regularizer :math:`\lambda`.
        B: RKHS-norm bound given to IGP-UCB.
        optimum: The true constrained optimum :math:`f(x^*)` over the whole domain
            (computed on a dense grid by the builder); regret is measured against it.
        g_noise: ``"normal"`` or ``"uniform"``.
    """

    name: str
    arms: Tensor
    f: Tensor
    g: Tensor
    K: Tensor
    noise_sd_f: float
    noise_sd_g: float
    noise: float
    B: float
    optimum: float
    g_noise: str = "normal"

    @property
    def candidate_optimum(self) -> float:
        """max f over the candidates with every g_j <= 0 (<= ``optimum``)."""
        feasible = (self.g <= 0).all(-1)
        if not bool(feasible.any()):
            raise ValueError(f"{self.name}: no candidate satisfies g <= 0.")
        return float(self.f[feasible].max())


def _matern_matrix(arms: Tensor, lengthscale: float) -> Tensor:
    """The Matérn-5/2 kernel matrix (unit variance) on the candidates."""
    with torch.no_grad():
        return make_kernel("matern52", lengthscale)(arms).to_dense()


def _dense_optimum(
    f: Callable[[Tensor], Tensor],
    g: Callable[[Tensor], Tensor],
    lo: float,
    hi: float,
    dim: int,
    per_dim: int,
) -> float:
    """max f subject to g <= 0 on a ``per_dim``-point-per-axis grid of [lo, hi]^dim."""
    lin = torch.linspace(lo, hi, per_dim, dtype=torch.double)
    X = torch.cartesian_prod(*([lin] * dim))
    feasible = (g(X) <= 0).all(-1)
    return float(f(X)[feasible].max())


def shi2022_e1_problem(
    noisy_g: bool = False,
    points_per_dim: int = 25,
    lengthscale: float = 1.0,
    B: float = 1.0,
) -> ConstrainedProblem:
    r"""Shi & Eryilmaz 2022, App. E.1: :math:`X = [0, 6]^2`,
    :math:`f = -\sin x_1 - x_2`, :math:`g = \sin x_1\sin x_2 + 0.95` (a small feasible
    region), :math:`f` noise :math:`N(0, 0.01)`, :math:`g` exact (E.1.1) or with
    :math:`N(0, 0.01)` noise (E.1.2); Matérn-5/2 kernel. Ours: a
    ``points_per_dim``-square grid as candidates, lengthscale 1 (on the raw scale),
    :math:`\lambda` = 0.01 (the f noise variance), ``B`` = 1.

    Args:
        noisy_g: Whether ``g`` is observed with :math:`N(0, 0.01)` noise (E.1.2;
            default ``False``: exact, E.1.1).
        points_per_dim: Grid points per axis (default 25):
            ``N = points_per_dim**2`` candidates.
        lengthscale: The Matérn-5/2 lengthscale on the raw scale (default 1.0).
        B: The RKHS-norm bound given to IGP-UCB (default 1.0).

    Returns:
        The :class:`ConstrainedProblem` ``"e1"`` (or ``"e1-noisy-g"``): ``N x 2``
        candidates, ``N`` values of ``f`` and ``N x 1`` of ``g``, and the
        constrained optimum on a dense grid (step 0.005).

    Example:
        >>> problem = shi2022_e1_problem(noisy_g=True)
        >>> res = simulate_constrained(problem, "Alg3", horizon=350, num_seeds=20)
    """

    def f_of(X: Tensor) -> Tensor:
        return -torch.sin(X[:, 0]) - X[:, 1]

    def g_of(X: Tensor) -> Tensor:
        return (torch.sin(X[:, 0]) * torch.sin(X[:, 1]) + 0.95).unsqueeze(-1)

    lin = torch.linspace(0.0, 6.0, points_per_dim, dtype=torch.double)
    arms = torch.cartesian_prod(lin, lin)
    f, g = f_of(arms), g_of(arms)
    K = _matern_matrix(arms, lengthscale)
    return ConstrainedProblem(
        name="e1-noisy-g" if noisy_g else "e1",
        arms=arms,
        f=f,
        g=g,
        K=K,
        noise_sd_f=0.1,
        noise_sd_g=0.1 if noisy_g else 0.0,
        noise=0.01,
        B=B,
        optimum=_dense_optimum(f_of, g_of, 0.0, 6.0, 2, 1201),  # step 0.005
    )


def _sigmoid_utility(x: Tensor, a: float, b: float) -> Tensor:
    lo = torch.sigmoid(torch.tensor(-a * b, dtype=x.dtype))
    hi = torch.sigmoid(torch.tensor(a * (2.0 - b), dtype=x.dtype))
    return (torch.sigmoid(a * (x - b)) - lo) / (hi - lo)


def _log_utility(x: Tensor, a: float) -> Tensor:
    return torch.log1p(a * x) / math.log1p(2.0 * a)


def shi2022_e2_problem(
    noisy_g: bool = False,
    num_points: int = 600,
    lengthscale: float = 1.0,
    B: float = 1.0,
    seed: int = 0,
) -> ConstrainedProblem:
    r"""Shi & Eryilmaz 2022, App. E.2, data-rate allocation: :math:`x \in [0, 2]^4`,
    :math:`f = \sum_i U_i(x_i)` (sigmoid utilities for servers 1 and 3, eq. 35;
    logarithmic for 2 and 4, eq. 36), f noise :math:`N(0, 0.01)`;
    :math:`g = 0.2x_1 + 0.4x_2 + 0.8x_3 + 1.2x_4 - 2` exact (E.2.1) or with
    Unif[-0.2, 0.2] noise (E.2.2). The paper takes the utility constants from Lee et
    al. (2005), which it does not list; **ours**: sigmoid :math:`a = 5, b = 1`
    (server 1) and :math:`a = 3, b = 1` (server 3), log :math:`a = 10` (server 2) and
    :math:`a = 3` (server 4), each scaled and shifted so that :math:`U_i(0) = 0`,
    :math:`U_i(2) = 1`. Candidates: ``num_points`` uniform points of the box (seeded);
    Matérn-5/2, lengthscale 1, :math:`\lambda` = 0.01, ``B`` = 1.

    Args:
        noisy_g: Whether ``g`` is observed with Unif[-0.2, 0.2] noise (E.2.2;
            default ``False``: exact, E.2.1).
        num_points: The number ``N`` of candidates (default 600).
        lengthscale: The Matérn-5/2 lengthscale (default 1.0).
        B: The RKHS-norm bound given to IGP-UCB (default 1.0).
        seed: Seed of the candidates (default 0).

    Returns:
        The :class:`ConstrainedProblem` ``"e2"`` (or ``"e2-noisy-g"``): ``N x 4``
        candidates, ``N`` values of ``f`` and ``N x 1`` of ``g``, uniform ``g``
        noise, and the constrained optimum on a dense grid (step 0.05).

    Example:
        >>> problem = shi2022_e2_problem(num_points=600)
        >>> res = simulate_constrained(problem, "Alg2", horizon=350, epoch_length=20)
    """
    price = torch.tensor([0.2, 0.4, 0.8, 1.2], dtype=torch.double)

    def f_of(X: Tensor) -> Tensor:
        return (
            _sigmoid_utility(X[:, 0], 5.0, 1.0)
            + _log_utility(X[:, 1], 10.0)
            + _sigmoid_utility(X[:, 2], 3.0, 1.0)
            + _log_utility(X[:, 3], 3.0)
        )

    def g_of(X: Tensor) -> Tensor:
        return (X @ price - 2.0).unsqueeze(-1)

    gen = torch.Generator().manual_seed(seed)
    arms = 2.0 * torch.rand(num_points, 4, generator=gen, dtype=torch.double)
    f, g = f_of(arms), g_of(arms)
    K = _matern_matrix(arms, lengthscale)
    return ConstrainedProblem(
        name="e2-noisy-g" if noisy_g else "e2",
        arms=arms,
        f=f,
        g=g,
        K=K,
        noise_sd_f=0.1,
        noise_sd_g=0.2 if noisy_g else 0.0,
        noise=0.01,
        B=B,
        optimum=_dense_optimum(f_of, g_of, 0.0, 2.0, 4, 41),  # step 0.05
        g_noise="uniform",
    )


@dataclass
class ConstrainedResult:
    """Per-step records (``T x S``; ``g`` values ``T x S x m``).

    Attributes:
        algorithm: The algorithm's name (see :data:`ALGORITHMS`).
        arms: ``T x S`` indices of the chosen candidates.
        f: ``T x S`` true objective values of them.
        g: ``T x S x m`` true constraint values of them.
        f_obs: ``T x S`` noisy observations of ``f``.
        g_obs: ``T x S x m`` observations of ``g`` (exact where the problem's
            ``noise_sd_g`` is 0).
        kappa: ``L x S x m``: the multipliers each epoch used.
        optimum: The problem's constrained optimum :math:`f(x^*)`.
    """

    algorithm: str
    arms: Tensor
    f: Tensor
    g: Tensor
    f_obs: Tensor
    g_obs: Tensor
    kappa: Tensor  # L x S x m: the multipliers each epoch used
    optimum: float

    @property
    def cumulative_regret(self) -> Tensor:
        return (self.optimum - self.f).cumsum(0)

    @property
    def constraint_violation(self) -> Tensor:
        r""":math:`V_t = \|[\sum_{s\le t} g(x_s)]^+\|_2` (true g values)."""
        return self.g.cumsum(0).clamp_min(0.0).norm(dim=-1)

    def time_averaged(self, name: str) -> Tensor:
        """A per-step metric divided by the step: its value at ``t`` over ``t``.

        Args:
            name: The name of a ``T x S`` attribute or property, e.g.
                ``"cumulative_regret"`` or ``"constraint_violation"``.

        Returns:
            The ``T x S`` time-averaged metric.

        Raises:
            AttributeError: If the result has no attribute ``name``.

        Example:
            >>> res.time_averaged("constraint_violation")[-1].mean()  # V_T / T
        """
        steps = torch.arange(1, self.f.shape[0] + 1, dtype=self.f.dtype)
        return getattr(self, name) / steps.unsqueeze(-1)


ALGORITHMS = ("Alg2", "Alg3", "IGP-UCB", "LogCEI")
r"""``Alg2``: multiplicative updates with ψ (noiseless g); ``Alg3``: additive updates
(noisy g); ``IGP-UCB``: unconstrained IGP-UCB on f (the multipliers stay 0);
``LogCEI``: BoTorch's ``LogConstrainedExpectedImprovement`` -- what a BoTorch user picks
today, a per-evaluation constraint -- on separate engines for f (:math:`\lambda`) and g
(:math:`\lambda_g` = the g noise variance, or 1e-6 for exact g), incumbent = the best
observed f among observations with observed g <= 0 (before any, the smallest observed f)."""


def simulate_constrained(
    problem: ConstrainedProblem,
    algorithm: str,
    horizon: int = 350,
    epoch_length: int = 20,
    num_seeds: int = 100,
    penalty: Penalty | None = None,
    step: float = 0.5,
    delta: float = 0.1,
    seed: int = 0,
    inner: str = "IGP-UCB",
    defer: int | None = ENGINE_DEFER,
) -> ConstrainedResult:
    r"""Run ``algorithm`` (see :data:`ALGORITHMS`) for ``horizon`` steps on
    ``num_seeds`` independent runs at once. ``L = ceil(horizon / epoch_length)``
    epochs; a last partial epoch runs with its multipliers like any other.
    ``inner``: ``"IGP-UCB"`` (the paper's Algorithms) or ``"GP-TS"`` (their Remark 1,
    with :math:`v_t` from the same B, R and epoch confidence). ``defer``: the
    engines' collected downdates (``None``: one per step, the same bits on any
    machine; GP-TS's engine keeps a square root instead). Each epoch's multipliers
    are replayed from the observed constraint values by the decision core's
    :func:`~botorch_bandits.core.steps.constraints.epoch_multipliers`.

    Args:
        problem: The constrained problem.
        algorithm: One of :data:`ALGORITHMS`.
        horizon: The steps ``T`` >= 1 (default 350).
        epoch_length: The steps of an epoch >= 1 (default 20).
        num_seeds: The independent runs ``S`` >= 1 (default 100).
        penalty: :math:`\psi` of Algorithm 2's multiplicative updates (default
            ``None``: ``ExponentialPenalty(1.0)``; unused by Alg3).
        step: The additive updates' step size (Alg3; default 0.5).
        delta: The confidence parameter (default 0.1), split over the epochs.
        seed: Seed of the first arms, the noise and the GP-TS draws (default 0).
        inner: ``"IGP-UCB"`` (default) or ``"GP-TS"``.
        defer: The engines' collected downdates (default
            :data:`~botorch_bandits.test_functions.simulator.ENGINE_DEFER`).

    Returns:
        The :class:`ConstrainedResult` (``T x S`` records, the ``L`` epochs'
        multipliers).

    Raises:
        ValueError: If ``algorithm`` or ``inner`` is unknown, or ``horizon``,
            ``epoch_length`` or ``num_seeds`` is not an integer >= 1.

    Example:
        >>> problem = shi2022_e2_problem()
        >>> res = simulate_constrained(problem, "Alg2", horizon=350, num_seeds=100)
        >>> res.cumulative_regret[-1].mean(), res.constraint_violation[-1].mean()
    """
    _check_constrained(algorithm, inner, horizon, epoch_length, num_seeds)
    rule = "additive" if algorithm == "Alg3" else "multiplicative"
    psi = (penalty or ExponentialPenalty(1.0)) if rule == "multiplicative" else None
    run = _ConstrainedRun(
        problem, algorithm, rule, psi, step, delta, seed, inner, epoch_length
    )
    run.start(num_seeds, math.ceil(horizon / epoch_length), defer)
    for t in range(1, horizon + 1):
        if (t - 1) % epoch_length == 0:  # a new epoch: replay kappa, rebuild targets
            run.new_epoch(t)
        run.observe(run.choose(t))
    return run.result()


def _check_constrained(
    algorithm: str, inner: str, horizon: int, epoch_length: int, num_seeds: int
) -> None:
    if algorithm not in ALGORITHMS:
        raise ValueError(f"`algorithm` must be one of {ALGORITHMS}, got {algorithm!r}.")
    if inner not in ("IGP-UCB", "GP-TS"):
        raise ValueError(f"`inner` must be 'IGP-UCB' or 'GP-TS', got inner={inner!r}.")
    for name, value in (
        ("horizon", horizon),
        ("epoch_length", epoch_length),
        ("num_seeds", num_seeds),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"`{name}` must be an integer >= 1, got {name}={value!r}.")


@dataclass
class _ConstrainedRun:
    """One simulation's state over every seed: the engines, the epoch's
    multipliers, and what was chosen and observed at each step."""

    problem: ConstrainedProblem
    algorithm: str
    rule: str
    psi: Penalty | None
    step: float
    delta: float
    seed: int
    inner: str
    epoch_length: int

    def start(self, S: int, L: int, defer: int | None) -> None:
        """The engines (the objective's, and LogCEI's per constraint), the noise
        generator and the empty record."""
        problem = self.problem
        self.S, self.L, self.m = S, L, problem.g.shape[-1]
        self.model = FiniteArmGP(
            problem.arms,
            problem.K,
            problem.noise,
            num_seeds=S,
            keep_root=self.inner == "GP-TS",
            defer=None if self.inner == "GP-TS" else defer,
        )
        self.g_models = [
            FiniteArmGP(
                problem.arms,
                problem.K,
                max(problem.noise_sd_g**2, 1e-6),
                num_seeds=S,
                defer=defer,
            )
            for _ in range(self.m if self.algorithm == "LogCEI" else 0)
        ]
        self.gen = torch.Generator().manual_seed(self.seed)
        self.dt = problem.f.dtype
        self.arms_t, self.f_t, self.g_t, self.fo_t, self.go_t = [], [], [], [], []
        self.kappas: list[Tensor] = []
        self.kappa = torch.zeros(S, self.m, dtype=self.dt)

    def new_epoch(self, t: int) -> None:
        """The multipliers of the epoch that step ``t`` begins (unconstrained
        IGP-UCB and LogCEI, whose models see f and each g themselves: 0), and the
        targets of every observation rebuilt with them."""
        S, m = self.S, self.m
        if self.algorithm in ("IGP-UCB", "LogCEI"):
            self.kappa = torch.zeros(S, m, dtype=self.dt)
        else:
            g_hist = (  # t-1 x S x m (what the algorithm observed)
                torch.stack(self.go_t)
                if self.go_t
                else torch.zeros(0, S, m, dtype=self.dt)
            )
            self.kappa = torch.stack(
                [
                    epoch_multipliers(
                        g_hist[:, s],
                        t - 1,
                        self.epoch_length,
                        self.rule,
                        self.psi,
                        self.step,
                    )[0]
                    for s in range(S)
                ]
            )
            if t > 1:
                self.model.set_targets(
                    _targets(self.fo_t, self.go_t, self.kappa, self.rule, self.psi)
                )
        self.kappas.append(self.kappa)

    def choose(self, t: int) -> Tensor:
        """Step ``t``'s arm of each seed: a uniformly random first arm, then
        LogCEI's or the inner bandit's argmax."""
        problem = self.problem
        if t == 1:  # different initial points: a uniformly random first arm per run
            return torch.randint(
                0, problem.arms.shape[0], (self.S,), generator=self.gen
            )
        if self.algorithm == "LogCEI":
            acqf = self._logcei()
        else:
            acqf = self._inner(t)
        with torch.no_grad():
            return acqf(self.model.score_points).argmax(0)

    def _logcei(self) -> Any:
        """BoTorch's LogCEI on the objective's and the constraints' engines, its
        incumbent the best observed f among observations with observed g <= 0."""
        fo, go = torch.stack(self.fo_t), torch.stack(self.go_t)  # t-1 x S (x m)
        feasible = (go <= 0).all(-1)
        best = fo.masked_fill(~feasible, -math.inf).max(0).values
        best = torch.where(torch.isfinite(best), best, fo.min(0).values)
        return LogConstrainedExpectedImprovement(
            ModelList(self.model, *self.g_models),
            best_f=best,
            objective_index=0,
            constraints={j + 1: [None, 0.0] for j in range(self.m)},
        )

    def _inner(self, t: int) -> Any:
        """The inner bandit (IGP-UCB, or GP-TS by Remark 1) with the epoch's
        confidence (Alg. 2: delta / L; Alg. 3: also R scaled by the multipliers)."""
        problem = self.problem
        d_l, R_l = [], []
        for s in range(self.S):
            d, r = epoch_schedule(
                self.rule, self.delta, self.L, problem.noise_sd_f, self.kappa[s]
            )
            d_l.append(d)
            R_l.append(r)
        conf = Confidence(
            B=problem.B,
            R=torch.tensor(R_l, dtype=self.dt),
            delta=d_l[0],
            gamma="observed",
        )
        ts = self.inner == "GP-TS"
        return make_acquisition(
            self.model,
            self.inner,
            conf,
            candidates=problem.arms if ts else None,
            seed=step_seed(self.seed, t) if ts else None,
        )

    def observe(self, idx: Tensor) -> None:
        """The chosen arms' noisy f and g: into the engines (the composite target
        of the epoch, or f and each g for LogCEI) and the record."""
        problem, S, m, dt, gen = self.problem, self.S, self.m, self.dt, self.gen
        f = problem.f[idx]
        g = problem.g[idx]  # S x m
        f_obs = f + problem.noise_sd_f * torch.randn(S, generator=gen, dtype=dt)
        if problem.g_noise == "uniform":
            unit = 2.0 * torch.rand(S, m, generator=gen, dtype=dt) - 1.0
        else:
            unit = torch.randn(S, m, generator=gen, dtype=dt)
        g_obs = g + problem.noise_sd_g * unit
        if self.algorithm == "LogCEI":  # the objective model sees f itself
            self.model.observe(idx, f_obs)
            for j, g_model in enumerate(self.g_models):
                g_model.observe(idx, g_obs[:, j])
        else:
            targets = _targets([f_obs], [g_obs], self.kappa, self.rule, self.psi)
            self.model.observe(idx, targets[0])
        self.arms_t.append(idx)
        self.f_t.append(f)
        self.g_t.append(g)
        self.fo_t.append(f_obs)
        self.go_t.append(g_obs)

    def result(self) -> ConstrainedResult:
        return ConstrainedResult(
            algorithm=self.algorithm,
            arms=torch.stack(self.arms_t),
            f=torch.stack(self.f_t),
            g=torch.stack(self.g_t),
            f_obs=torch.stack(self.fo_t),
            g_obs=torch.stack(self.go_t),
            kappa=torch.stack(self.kappas),
            optimum=self.problem.optimum,
        )


def _targets(
    f_obs: list[Tensor],
    g_obs: list[Tensor],
    kappa: Tensor,
    rule: str,
    psi: Penalty | None,
) -> Tensor:
    """Composite targets (``steps x S``) of stored observations with multipliers
    ``kappa`` (``S x m``)."""
    f = torch.stack(f_obs)  # steps x S
    g = torch.stack(g_obs)  # steps x S x m
    return torch.stack(
        [
            composite_targets(f[:, s], g[:, s], kappa[s], rule, psi)
            for s in range(f.shape[1])
        ],
        dim=-1,
    )
