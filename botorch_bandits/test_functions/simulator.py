r"""The finite-arm bandit simulator: any policy (an acquisition built afresh every step
through the package's factory) run for ``T`` steps over a batch of seeds on the exact
engine :class:`~botorch_bandits.models.FiniteArmGP`, with the regret metrics of
SPEC §6. docs/reproducing.md ("The simulators") describes a step and the metrics."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from botorch.acquisition.analytic import (
    LogExpectedImprovement,
    LogProbabilityOfImprovement,
    PosteriorMean,
    PosteriorStandardDeviation,
    UpperConfidenceBound,
)
from torch import Tensor

from botorch_bandits.acquisition.factory import Confidence, make_acquisition
from botorch_bandits.beta import CallableGamma, GammaOrder
from botorch_bandits.models import FiniteArmGP
from botorch_bandits.seeding import step_seed
from botorch_bandits.test_functions.problems import BanditProblem

# public: what the tutorials use (the rest serves the reproductions)
__all__ = ["SimulationResult", "gamma_order", "simulate"]


@dataclass
class StepContext:
    """What a policy may use besides the model: the round, the best observation per
    seed so far (``-inf`` before the first), a per-step seed, and the run's settings.

    Attributes:
        t: The round (1-based).
        best_y: ``S``: each seed's best observation so far (``-inf`` before the
            first).
        step_seed: This step's seed (of the GP-TS draws).
        delta: The run's confidence parameter.
        beta_scale: The run's multiplier of GP-UCB's :math:`\\beta_t`.
    """

    t: int
    best_y: Tensor
    step_seed: int
    delta: float
    beta_scale: float


def gamma_order(problem: BanditProblem) -> GammaOrder:
    r""":math:`\gamma_t` from the theoretical upper bound for the problem's kernel
    (Srinivas et al. 2010, Thm 5, constant 1), as Chowdhury & Gopalan's experiments
    set it ("according to theoretical upper bounds for corresponding kernels").

    Args:
        problem: The problem; its ``kernel`` (``"rbf"``, else Matérn with
            :math:`\nu = 2.5`) and dimension ``d`` set the order.

    Returns:
        The :class:`~botorch_bandits.beta.GammaOrder` of the problem's kernel.

    Example:
        >>> problem = rkhs_problem("rbf", num_seeds=10)
        >>> acqf = IGPUCB(engine, B=problem.rkhs_norm, R=problem.noise_sd,
        ...               gamma=gamma_order(problem))
    """
    if problem.kernel == "rbf":
        return GammaOrder("rbf", dim=problem.dim)
    return GammaOrder("matern", dim=problem.dim, nu=2.5)


def _best_f(ctx: StepContext) -> Tensor:
    # before the first observation every arm has the same prior; 0 = the prior mean.
    # S x 1: BoTorch's analytic EI/PI keep the output dim of the batch-S posterior mean
    return torch.where(torch.isfinite(ctx.best_y), ctx.best_y, 0.0).unsqueeze(-1)


def _best_mean(model: FiniteArmGP) -> Tensor:
    """Plug-in incumbent: the largest posterior mean among the arms pulled so far
    (0, the prior mean, before the first observation), ``S x 1``."""
    mean = model.mean_.reshape(model.counts_.shape)
    best = mean.masked_fill(model.counts_ == 0, -math.inf).max(-1).values
    return torch.where(torch.isfinite(best), best, 0.0).unsqueeze(-1)


PI_MARGIN = 0.01
r"""The margin :math:`\xi` of the ``PI-xi`` / ``PI-mean-xi`` policies: they score
:math:`P(f(x) > f^+ + \xi)` (BoTorch's ``LogProbabilityOfImprovement`` with
``best_f`` = incumbent + :math:`\xi`). Neither paper gives a margin, or says whether
their PI has one: Srinivas et al. 2010, §6 compare "with heuristics such as the
Expected Improvement (EI) and Most Probable Improvement (MPI)", and Chowdhury & Gopalan
2017, §6 "compare GP-UCB, IGP-UCB and GP-TS with GP-EI and GP-PI" (footnote: "GP-EI
and PI perform similarly and thus are not separately distinguishable in the plots").
0.01 is the customary value (Lizotte 2008; Brochu, Cora & de Freitas 2010, §2.3), stated
for objectives on a unit scale -- here the Fig. 3 objectives are min-max normalized to
[0, 1], and the GP-sample objectives have prior variance at most 1. The margin-free
``PI`` / ``PI-mean`` (:math:`\xi = 0`) stay the default reading (the unmodified
acquisition; ``PI_MARGIN`` is a named constant, not a simulator argument)."""


def _pi_margin(incumbent: Tensor) -> Tensor:
    """``best_f`` of the PI-with-margin policies: the incumbent plus
    :data:`PI_MARGIN`."""
    return incumbent + PI_MARGIN


def _theory(problem: BanditProblem, ctx: StepContext, **kw: Any) -> Confidence:
    r"""The papers' confidence for the problem: its RKHS norm, noise and the
    :math:`\gamma_t` order of its kernel (``kw`` overrides)."""
    base: dict[str, Any] = dict(
        B=problem.rkhs_norm,
        R=problem.noise_sd,
        delta=ctx.delta,
        gamma=gamma_order(problem),
    )
    return Confidence(**{**base, **kw})


def _igp_ucb(model, problem, ctx):
    return make_acquisition(model, "IGP-UCB", _theory(problem, ctx))


def _gp_ts(model, problem, ctx):
    return make_acquisition(
        model,
        "GP-TS",
        _theory(problem, ctx),
        candidates=problem.arms,
        seed=ctx.step_seed,
    )


def _gp_ucb_rkhs(model, problem, ctx):
    # Chowdhury & Gopalan §3.1 quote Srinivas et al. Thm 3 as the multiplier
    # sqrt(2 B^2 + 300 gamma_{t-1} ln^3(t / delta)): B^2 = squared norm, gamma_{t-1}
    order = gamma_order(problem)
    return make_acquisition(
        model,
        "GP-UCB",
        _theory(
            problem,
            ctx,
            gamma=CallableGamma(lambda n: order(n - 1)),
            gp_ucb="rkhs",
            beta_scale=ctx.beta_scale,
        ),
    )


def _gp_ucb_finite(model, problem, ctx):
    return make_acquisition(
        model,
        "GP-UCB",
        Confidence(
            delta=ctx.delta, num_arms=problem.num_arms, beta_scale=ctx.beta_scale
        ),
    )


POLICIES: dict[str, Callable[[FiniteArmGP, BanditProblem, StepContext], Any]] = {
    "IGP-UCB": _igp_ucb,
    "GP-TS": _gp_ts,
    "GP-UCB": _gp_ucb_rkhs,
    "GP-UCB-finite": _gp_ucb_finite,
    "EI": lambda model, problem, ctx: LogExpectedImprovement(model, _best_f(ctx)),
    "PI": lambda model, problem, ctx: LogProbabilityOfImprovement(model, _best_f(ctx)),
    "EI-mean": lambda model, problem, ctx: LogExpectedImprovement(
        model, _best_mean(model)
    ),
    "PI-mean": lambda model, problem, ctx: LogProbabilityOfImprovement(
        model, _best_mean(model)
    ),
    "PI-xi": lambda model, problem, ctx: LogProbabilityOfImprovement(
        model, _pi_margin(_best_f(ctx))
    ),
    "PI-mean-xi": lambda model, problem, ctx: LogProbabilityOfImprovement(
        model, _pi_margin(_best_mean(model))
    ),
    "UCB-0.2": lambda model, problem, ctx: UpperConfidenceBound(model, beta=0.2),
    "mean-only": lambda model, problem, ctx: PosteriorMean(model),
    "variance-only": lambda model, problem, ctx: PosteriorStandardDeviation(model),
}
r"""Algorithms by name. ``GP-UCB``: Srinivas et al. Thm 3 (RKHS) in the form quoted by
Chowdhury & Gopalan; ``GP-UCB-finite``: Thm 1 (finite D). Both honour ``beta_scale``
(Srinivas et al. §6 scale Thm 1 down by 5). ``EI`` / ``PI``: BoTorch's analytic
``LogExpectedImprovement`` / ``LogProbabilityOfImprovement`` (same argmax as EI / PI,
without their underflow), incumbent = best observation so far; ``EI-mean`` /
``PI-mean``: the same with the plug-in incumbent (largest posterior mean among the
pulled arms), a common remedy for noisy observations -- a practical variant, not a
paper's baseline. ``PI-xi`` / ``PI-mean-xi``: ``PI`` / ``PI-mean`` with the margin
:data:`PI_MARGIN` (:math:`\xi = 0.01`), i.e. ``best_f`` = incumbent + :math:`\xi`.

Neither paper states the incumbent :math:`f^+` of its EI / PI (MPI) baselines, nor a
PI margin (Srinivas et al. 2010, §6: "heuristics such as the Expected Improvement (EI)
and Most Probable Improvement (MPI)"; Chowdhury & Gopalan 2017, §6 and Fig. 3: "We see
GP-EI/PI perform better than the rest"). The readings are explicit options, listed in
:data:`INCUMBENT_READINGS`: ``observed`` (the best noisy observation -- the default
reading, ``EI`` / ``PI``: the textbook definition of the improvement) and
``posterior_mean`` (the largest posterior mean among the pulled arms).

``UCB-0.2``: BoTorch's ``UpperConfidenceBound`` with its default-style constant
:math:`\beta = 0.2` (:math:`\mu + \sqrt{0.2}\sigma`). ``mean-only`` /
``variance-only``: pure exploitation / pure exploration (Srinivas et al. §6)."""


INCUMBENT_READINGS: dict[str, tuple[str, ...]] = {
    "observed": ("EI", "PI", "PI-xi"),
    "posterior_mean": ("EI-mean", "PI-mean", "PI-mean-xi"),
}
"""The EI / PI policies of :data:`POLICIES` by their incumbent :math:`f^+`:
``observed`` -- the best noisy observation so far (0, the prior mean, before the first);
``posterior_mean`` -- the largest posterior mean among the arms pulled so far (0 before
the first). The papers do not say which (see :data:`POLICIES`); ``observed`` is the
default reading (the policies named ``EI`` / ``PI``)."""


@dataclass
class SimulationResult:
    """Per-step records of one policy on a batch of seeds (all ``T x S``).

    Attributes:
        problem: The problem's name.
        algorithm: The policy's name.
        arms: ``T x S`` indices of the pulled arms.
        values: ``T x S`` true values of the pulled arms.
        observations: ``T x S`` noisy observations of them.
        information_gain: ``T x S`` information gain of the pulled points after
            each step.
        optimum: ``S`` optimal values.
    """

    problem: str
    algorithm: str
    arms: Tensor
    values: Tensor
    observations: Tensor
    information_gain: Tensor
    optimum: Tensor  # S

    @property
    def cumulative_regret(self) -> Tensor:
        return (self.optimum - self.values).cumsum(0)

    @property
    def simple_regret(self) -> Tensor:
        return self.optimum - self.values.cummax(0).values

    @property
    def average_regret(self) -> Tensor:
        steps = torch.arange(
            1,
            self.values.shape[0] + 1,
            dtype=self.values.dtype,
            device=self.values.device,
        )
        return self.cumulative_regret / steps.unsqueeze(-1)

    def metric(self, name: str) -> Tensor:
        """A metric by name.

        Args:
            name: One of :data:`METRICS` (``"cumulative_regret"``,
                ``"simple_regret"``, ``"average_regret"``, ``"information_gain"``).

        Returns:
            The ``T x S`` metric.

        Raises:
            ValueError: If ``name`` is not one of :data:`METRICS`.

        Example:
            >>> simulate(problem, "GP-TS", 100).metric("simple_regret")[-1].mean()
        """
        if name not in METRICS:
            raise ValueError(f"`metric` must be one of {METRICS}, got {name!r}.")
        return getattr(self, name)


ENGINE_DEFER = 32
"""The simulators' :class:`FiniteArmGP` collects this many rank-one downdates and
applies them together (``defer``; not with GP-TS's square root): the same posterior
up to round-off, several times faster on large arm sets (one pass over the seeds'
covariances per 32 steps instead of one per step)."""

METRICS = ("cumulative_regret", "simple_regret", "average_regret", "information_gain")


def simulate(
    problem: BanditProblem,
    algorithm: str,
    horizon: int,
    seed: int = 0,
    delta: float = 0.1,
    beta_scale: float = 1.0,
    progress: Any = None,
    refactor_every: int | None = 1000,
    defer: int | None = ENGINE_DEFER,
) -> SimulationResult:
    """Run ``algorithm`` (a key of :data:`POLICIES`) for ``horizon`` steps on every
    seed of ``problem`` at once, on the problem's device (``problem.to("cuda")`` runs
    it on a GPU; the noise stream then comes from that device's generator).

    Args:
        problem: The batch of instances (one per seed).
        algorithm: Policy name.
        horizon: Steps ``T >= 1``.
        seed: Seed of the observation noise and of the GP-TS draws.
        delta: Confidence parameter of the schedules.
        beta_scale: Multiplier of GP-UCB's :math:`\\beta_t` (1 = the theorem).
        progress: A tqdm-like object (``update(n)``), advanced once per step.
        refactor_every: The engine's exact-rebuild period.
        defer: The engine's collected downdates (:class:`FiniteArmGP`; ``None``:
            one per step, bit-for-bit reproducible on any machine). GP-TS keeps a
            square root instead and ignores it.

    Returns:
        The :class:`SimulationResult` (``T x S`` records).

    Raises:
        ValueError: If ``algorithm`` is not a key of :data:`POLICIES` or ``horizon``
            is not an integer >= 1.

    Example:
        >>> problem = rkhs_problem("rbf", num_seeds=10)
        >>> res = simulate(problem, "IGP-UCB", horizon=200, seed=0)
        >>> res.cumulative_regret[-1].mean()
    """
    _check_run(algorithm, horizon)
    policy = POLICIES[algorithm]
    S = problem.num_seeds
    model = _engine(problem, algorithm, refactor_every, defer)
    X = model.score_points
    values, noise_sd = problem.values, problem.noise_sd
    dtype, device = values.dtype, values.device
    gen = torch.Generator(device=device).manual_seed(seed)
    best_y = torch.full((S,), -math.inf, dtype=dtype, device=device)
    arms_t, values_t, obs_t, gain_t = [], [], [], []
    for t in range(1, horizon + 1):
        ctx = StepContext(
            t=t,
            best_y=best_y,
            step_seed=step_seed(seed, t),
            delta=delta,
            beta_scale=beta_scale,
        )
        with torch.no_grad():
            scores = policy(model, problem, ctx)(X)  # N x S
        idx = scores.argmax(0)  # S
        f = values.gather(-1, idx.unsqueeze(-1)).squeeze(-1)
        y = f + noise_sd * torch.randn(S, generator=gen, dtype=dtype, device=device)
        model.observe(idx, y)
        best_y = torch.maximum(best_y, y)
        arms_t.append(idx)
        values_t.append(f)
        obs_t.append(y)
        gain_t.append(model.information_gain_.clone())
        if progress is not None:
            progress.update(1)
    return SimulationResult(
        problem=problem.name,
        algorithm=algorithm,
        arms=torch.stack(arms_t),
        values=torch.stack(values_t),
        observations=torch.stack(obs_t),
        information_gain=torch.stack(gain_t),
        optimum=problem.optimum,
    )


def _check_run(algorithm: str, horizon: int) -> None:
    """Refuse an unknown policy or a horizon that is not an integer >= 1."""
    if algorithm not in POLICIES:
        raise ValueError(
            f"`algorithm` must be one of {sorted(POLICIES)}, got {algorithm!r}."
        )
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1:
        raise ValueError(f"`horizon` must be an integer >= 1, got horizon={horizon!r}.")


def _engine(
    problem: BanditProblem,
    algorithm: str,
    refactor_every: int | None,
    defer: int | None,
) -> FiniteArmGP:
    """The exact engine over the problem's arms for every seed: GP-TS keeps a square
    root of the posterior (exact joint draws) and no deferred downdates."""
    return FiniteArmGP(
        problem.arms,
        problem.K,
        problem.noise,
        num_seeds=problem.num_seeds,
        refactor_every=refactor_every,
        keep_root=algorithm == "GP-TS",  # exact joint draws without a factorization
        defer=None if algorithm == "GP-TS" else defer,
    )
