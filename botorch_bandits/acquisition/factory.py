"""The one acquisition factory: the acquisition function of a bandit algorithm for
a model, a confidence (a constant multiplier of sigma, or the paper's schedule from
B, R, delta and an information-gain source) and the round -- used by the decision
core, the simulators and the Ax input constructors alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from botorch.acquisition import AcquisitionFunction
from botorch.acquisition.analytic import UpperConfidenceBound
from botorch.models.model import Model
from torch import Tensor

from botorch_bandits.acquisition.sdf import GPUCBSDF, GPThompsonSamplingSDF
from botorch_bandits.acquisition.thompson import GPThompsonSampling
from botorch_bandits.acquisition.ucb import GPUCB, IGPUCB

#: the algorithms the factory builds (GP-UCB's schedule is chosen by ``gp_ucb``)
FACTORY_ALGORITHMS = ("IGP-UCB", "GP-UCB", "GP-TS")


@dataclass(frozen=True)
class Confidence:
    r"""How wide the confidence is: a multiplier of :math:`\sigma` given directly,
    or the paper's schedule.

    Args:
        beta: The multiplier of :math:`\sigma` given directly (UCB: a number, or a
            tensor with one per model batch, as GP-UCB-CPD's :math:`\sqrt{\beta_t}`
            per seed; TS: the scale :math:`v` of its draws) instead of the
            schedules; default ``None``: the schedule.
        B: The RKHS-norm bound (default 1; GP-UCB's ``"rkhs"`` uses :math:`B^2`).
        R: The noise constant (default 0.1; a tensor: one per model batch).
        delta: Confidence in ``(0, 1)`` (default 0.1).
        gamma: An information-gain source (default ``None``: the class's default).
        gp_ucb: GP-UCB's schedule: ``"finite"`` (default; Srinivas et al. Thm 1,
            needs ``num_arms``) or ``"rkhs"`` (Thm 3).
        num_arms: :math:`|D|` for ``gp_ucb="finite"`` (default ``None``).
        beta_scale: GP-UCB's multiplier of :math:`\beta_t` (default ``None``: 1).
    """

    beta: float | Tensor | None = None
    B: float | Tensor = 1.0
    R: float | Tensor | None = 0.1
    delta: float = 0.1
    gamma: Any = None
    gp_ucb: Literal["finite", "rkhs"] = "finite"
    num_arms: int | None = None
    beta_scale: float | None = None


def make_acquisition(
    model: Model,
    algorithm: str,
    confidence: Confidence,
    *,
    t: int | None = None,
    seed: int | None = None,
    candidates: Tensor | None = None,
    sampler: str | None = None,
    recent: Tensor | None = None,
    B_y: float = 1.0,
) -> AcquisitionFunction:
    """The acquisition of ``algorithm`` (``"IGP-UCB"``, ``"GP-UCB"`` or ``"GP-TS"``)
    at round ``t``. ``recent`` (the queries whose feedback may still be censored)
    makes it the censored-feedback version (GP-UCB-SDF / GP-TS-SDF, Verma et al.
    2022, with ``B_y``); GP-TS draws with ``seed`` on ``candidates`` (an exact joint
    draw) or with ``sampler``. Arguments left ``None`` keep the class defaults.

    Args:
        model: The BoTorch model.
        algorithm: ``"IGP-UCB"``, ``"GP-UCB"`` or ``"GP-TS"``.
        confidence: The :class:`Confidence`; with a ``beta`` UCB is BoTorch's
            ``UpperConfidenceBound(beta=beta**2)`` (without ``recent``).
        t: The round (default ``None``: from the model).
        seed: GP-TS's draw seed.
        candidates: GP-TS's ``N x d`` candidate set (an exact joint draw).
        sampler: GP-TS's sampler name (see :class:`GPThompsonSampling`).
        recent: ``m x d`` recent queries (default ``None``: no censoring).
        B_y: The censoring's scale (default 1), with ``recent``.

    Returns:
        The acquisition function.

    Example:
        >>> acqf = make_acquisition(gp, "IGP-UCB", Confidence(B=2.0, R=0.1), t=11)
    """
    if algorithm not in FACTORY_ALGORITHMS:
        raise ValueError(
            f"`algorithm` must be one of {list(FACTORY_ALGORITHMS)}, got {algorithm!r}."
        )
    c = confidence
    ts = algorithm == "GP-TS"
    extra: dict[str, Any] = {"t": t}
    if ts:
        extra.update(seed=seed, candidates=candidates, sampler=sampler)
    extra = {k: v for k, v in extra.items() if v is not None}
    if recent is not None:  # censored feedback: the SDF classes
        if c.beta is not None:
            sched: dict[str, Any] = {"beta": float(c.beta)}
        else:
            gamma = "observed" if c.gamma is None else c.gamma
            sched = {"B_f": c.B, "R": c.R, "gamma": gamma}
        cls = GPThompsonSamplingSDF if ts else GPUCBSDF
        return cls(model, recent, B_y=B_y, delta=c.delta, **extra, **sched)
    if ts:
        sched = {"v": float(c.beta)} if c.beta is not None else {"B": c.B, "R": c.R}
        if c.beta is None and c.gamma is not None:
            sched["gamma"] = c.gamma
        return GPThompsonSampling(model, delta=c.delta, **extra, **sched)
    if c.beta is not None:  # BoTorch's UCB is mu + sqrt(beta) sigma
        beta = c.beta**2 if isinstance(c.beta, Tensor) else float(c.beta) ** 2
        return UpperConfidenceBound(model, beta=beta)
    if c.gamma is not None:
        extra["gamma"] = c.gamma
    if algorithm == "GP-UCB":
        if c.beta_scale is not None:
            extra["beta_scale"] = c.beta_scale
        if c.gp_ucb == "rkhs":
            return GPUCB(
                model, schedule="rkhs", B_squared=c.B**2, delta=c.delta, **extra
            )
        return GPUCB(
            model, schedule="finite", num_arms=c.num_arms, delta=c.delta, **extra
        )
    return IGPUCB(model, B=c.B, R=c.R, delta=c.delta, **extra)
