"""``repeats="avoid"``'s step: under a (near) noise-free fit, no point evaluated
since the last restart or in flight is proposed again, and none within
:data:`~botorch_bandits.core.optimize.APART` lengthscales of a point in flight
(:func:`repeats_step`)."""

from __future__ import annotations

import torch
from torch import Tensor

from botorch_bandits.core.history import TrialRecord
from botorch_bandits.core.options import NOISE_FREE, DecisionOptions
from botorch_bandits.core.round import Round, Steps
from botorch_bandits.core.steps.model import noise_ratio
from botorch_bandits.hyperparameters import Hyperparameters

__all__ = ["in_flight", "not_again", "repeats_step", "steps"]


def repeats_step(r: Round) -> None:
    """(Near) noise-free (:data:`NOISE_FREE`): the points not to propose again
    (``r.evaluated``; :func:`~botorch_bandits.core.steps.rule.score_step` records
    how many it kept out, ``avoided``) and those to keep apart from (``r.apart``).
    Under a noisier fit it writes nothing (both stay ``None``).

    Args:
        r: The round; reads ``opts``, ``hyper``, ``known``, ``active``,
            ``window_start`` and ``domain``, writes ``evaluated`` and ``apart`` (no
            metadata).
    """
    if noise_ratio(r.opts, r.hyper, r.known) <= NOISE_FREE:
        r.evaluated = not_again(r.active, r.window_start)
        r.apart = in_flight(r.active, r.opts, r.hyper, r.domain.dim)


def not_again(active: list[TrialRecord], start: int) -> list[list[float]]:
    """The points ``repeats="avoid"`` keeps out of a decision: every trial since the
    last restart (``active[start:]``: before it the objective was another, and
    evaluating a point again is how a drift is seen) and every trial in flight,
    whenever it was issued.

    Args:
        active: The live trials, this call's earlier candidates last.
        start: The position in ``active`` of the first trial since the last restart
            (:func:`repeats_step` passes the data window's first trial).

    Returns:
        The points' unit-cube coordinates, one list of ``d`` floats each.
    """
    return [list(e.x) for i, e in enumerate(active) if i >= start or e.f is None]


def in_flight(
    active: list[TrialRecord],
    opts: DecisionOptions,
    hyper: Hyperparameters | None,
    d: int,
) -> tuple[Tensor, Tensor] | None:
    """The points in flight (running trials and this call's earlier candidates) and
    the GP's lengthscales (fitted, or the theory kernel's), which a decision under a
    noise-free fit keeps :data:`~botorch_bandits.core.optimize.APART` lengthscales
    away from; ``None`` when none is in flight. A point in flight is in the model
    (hallucinated) at the posterior mean, which it leaves unchanged: the upper
    confidence bound kept its maximum next to it, and a batch piled up there.

    Args:
        active: The live trials (those without a value are in flight).
        opts: The decision's options (the theory kernel's lengthscale where
            ``hyper`` is ``None``).
        hyper: The fitted hyperparameters, or ``None``.
        d: The input dimension.

    Returns:
        ``(points, lengthscales)``: the ``k x d`` points in flight and the ``d``
        lengthscales (one, the theory kernel's, without a fit); ``None`` when none
        is in flight.
    """
    flight = [list(e.x) for e in active if e.f is None]
    if not flight:
        return None
    # the practical mode gets here fitted only (unfitted, its noise is not known)
    ls = hyper.lengthscale[:d] if hyper is not None else [opts.theory.lengthscale]
    return (
        torch.tensor(flight, dtype=torch.double).reshape(-1, d),
        torch.tensor(list(ls), dtype=torch.double),
    )


def steps(opts: DecisionOptions) -> Steps:
    """``repeats="avoid"``'s step (none with ``repeats="allow"``).

    Args:
        opts: The decision's options.

    Returns:
        The steps by their place in the pipeline.
    """
    return {"repeats": repeats_step} if opts.repeats == "avoid" else {}
