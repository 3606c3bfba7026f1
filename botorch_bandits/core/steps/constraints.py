"""Long-term constraints' steps (Shi & Eryilmaz 2022): the epoch's multipliers
replayed from the constraint values (:func:`multiplier_step`), the composite
targets (:func:`composite_step`) and the epoch's confidence (:func:`epoch_step`);
the practical mode measures each constraint in its observed spread. The finite-arm
simulator replays the same multipliers with :func:`epoch_multipliers`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from botorch_bandits.constraints import (
    DEFAULT_MAX_LOG_MULTIPLIER,
    ExponentialPenalty,
    Penalty,
    composite_targets,
    epoch_schedule,
    replay_multipliers,
)
from botorch_bandits.core.history import TrialRecord
from botorch_bandits.core.options import DecisionOptions, LongTermConstraints
from botorch_bandits.core.round import Round, Steps
from botorch_bandits.core.steps.errors import not_finite
from botorch_bandits.models import STANDARDIZED_QUANTUM, standardize

__all__ = [
    "budget_summary",
    "capped_multipliers",
    "composite_step",
    "constraint_scales",
    "epoch_multipliers",
    "epoch_step",
    "in_units",
    "multiplier_step",
    "multipliers",
    "penalty_of",
    "steps",
]


def penalty_of(opts: LongTermConstraints) -> ExponentialPenalty | None:
    """Algorithm 2's penalty :math:`\\psi(x) = e^{cx}` (``None`` for Algorithm 3).

    Args:
        opts: The long-term constraints' options (``multiplier_update``,
            ``penalty_c``).

    Returns:
        :class:`ExponentialPenalty` with ``c = penalty_c`` for the multiplicative
        update, ``None`` for the additive one.
    """
    if opts.multiplier_update == "multiplicative":
        return ExponentialPenalty(opts.penalty_c)
    return None


def constraint_scales(active: Sequence[TrialRecord], m: int) -> Tensor:
    """The practical mode's unit of each of the ``m`` constraints: the spread
    (population standard deviation) of its observed values over every trial with
    one, or their root mean square where they have no spread, or 1 where every
    value is 0. A constraint written in other units (``s g <= s b``, ``s > 0``)
    has the same values in these units, so the multipliers, the penalty's ``c``
    and the additive step act on a scale the user's units do not change.

    Args:
        active: The trials (those without constraint values are left out).
        m: The number of constraints.

    Returns:
        The ``m`` units (all 1 where no trial has constraint values).

    Example:
        >>> scale = constraint_scales(history.trials, history.num_constraints)
    """
    rows = [list(e.g) for e in active if e.g is not None]
    if not rows:
        return torch.ones(m, dtype=torch.double)
    G = torch.tensor(rows, dtype=torch.double).reshape(-1, m)
    top = G.abs().amax(0).clamp_min(torch.finfo(torch.double).tiny)
    scaled = G / top  # no square over- or underflows
    sd = scaled.std(0, correction=0) * top
    rms = scaled.square().mean(0).sqrt() * top
    spread = sd > 1e-9 * rms  # a spread of rounding errors is none
    return torch.where(spread, sd, torch.where(rms > 0, rms, torch.ones_like(rms)))


def in_units(g: Tensor, scale: Tensor | None) -> Tensor:
    """Constraint values ``g`` (``n x m``) in the units ``scale`` (``None``: as
    given), on the standardized targets' grid: ``s g`` in ``s`` times the units
    gives the same bits.

    Args:
        g: ``n x m`` constraint values.
        scale: The ``m`` units (:func:`constraint_scales`), or ``None``: the values
            as given.

    Returns:
        ``g / scale`` rounded to
        :data:`~botorch_bandits.models.STANDARDIZED_QUANTUM` (``n x m``), or ``g``
        itself where ``scale`` is ``None``.
    """
    if scale is None:
        return g
    q = STANDARDIZED_QUANTUM
    return torch.round(g / scale / q) * q


def epoch_multipliers(
    g: Tensor,
    position: int,
    epoch_length: int,
    rule: str,
    penalty: Penalty | None,
    step: float,
    slack: float = 0.0,
    initial: float | None = None,
) -> tuple[Tensor, int, int]:
    """The multipliers of the epoch of decision ``position`` (0-based), replayed
    from the constraint values ``g`` (``n x m``, in the order observed, as far as
    every value is known): (kappa, epoch index, completed epochs used). An epoch
    updates the multipliers once all its trials have data (Algorithms 2 / 3);
    before any, :math:`\\kappa^1` (1 for the multiplicative rule, 0 -- or
    ``initial`` -- for the additive one, whose update aims at ``-slack``).

    Args:
        g: ``n x m`` constraint values, in the order observed.
        position: The decision's position (0-based): its epoch is
            ``position // epoch_length``.
        epoch_length: The trials of an epoch, S (an integer >= 1).
        rule: ``"multiplicative"`` (Algorithm 2) or ``"additive"`` (Algorithm 3).
        penalty: :math:`\\psi` for the multiplicative rule (:func:`penalty_of`).
        step: The additive rule's step :math:`\\mu` (unused by the multiplicative
            one).
        slack: The additive rule's slack (default 0; unused by the multiplicative
            one).
        initial: The additive rule's :math:`\\kappa^1` (default ``None``: 0;
            unused by the multiplicative one).

    Returns:
        ``(kappa, epoch, used)``: the ``m`` multipliers, the decision's epoch
        index (0-based), and the completed epochs whose update they include (at
        most ``epoch``).

    Raises:
        ValueError: ``epoch_length`` is not an integer >= 1, ``g`` is not
            ``n x m``, or a value is not finite
            (:func:`~botorch_bandits.constraints.replay_multipliers`).

    Warns:
        MultiplierCapWarning: The multiplicative update reached its cap
            (:data:`~botorch_bandits.constraints.DEFAULT_MAX_LOG_MULTIPLIER`).

    Example:
        >>> g = torch.tensor([[0.2], [-0.1], [0.3], [0.0]], dtype=torch.double)
        >>> kappa, epoch, used = epoch_multipliers(
        ...     g, 4, 2, "multiplicative", ExponentialPenalty(1.0), 0.5
        ... )  # kappa = [exp(0.05 + 0.15)], epoch = used = 2
    """
    additive = rule == "additive"
    rows = replay_multipliers(
        g,
        epoch_length,
        rule,
        penalty=penalty,
        step=step if additive else None,
        slack=slack if additive else 0.0,
        initial=initial if additive else None,
    )
    epoch = position // epoch_length
    used = min(epoch, rows.shape[0] - 1)
    return rows[used], epoch, used


def multipliers(
    active: Sequence[TrialRecord],
    opts: LongTermConstraints,
    m: int,
    scale: Tensor | None = None,
) -> tuple[Tensor, int, int]:
    """(kappa of the current epoch, epoch index l (0-based), completed epochs used)
    of the trials ``active`` (:func:`epoch_multipliers` on the prefix of trials with
    constraint values). ``scale``: the constraints' units (:func:`constraint_scales`;
    ``None``: the values as given, the theory mode's reading).

    Args:
        active: The trials, in order; the decision's position is ``len(active)``.
        opts: The long-term constraints' options.
        m: The number of constraints.
        scale: The constraints' ``m`` units (default ``None``: as given).

    Returns:
        ``(kappa, epoch, used)`` as :func:`epoch_multipliers` gives them.
    """
    prefix = []
    for e in active:
        if e.g is None:
            break
        prefix.append(list(e.g))
    g = in_units(torch.tensor(prefix, dtype=torch.double).reshape(-1, m), scale)
    return epoch_multipliers(
        g,
        len(active),
        opts.epoch_length,
        opts.multiplier_update,
        penalty_of(opts),
        opts.step,
        opts.slack,
        opts.initial,
    )


def capped_multipliers(kappa: Tensor, opts: LongTermConstraints) -> list[int]:
    """The constraints whose multiplier is at the multiplicative update's cap
    (:data:`~botorch_bandits.constraints.DEFAULT_MAX_LOG_MULTIPLIER`; the replay
    warns with a ``MultiplierCapWarning`` when it caps).

    Args:
        kappa: The ``m`` multipliers.
        opts: The long-term constraints' options.

    Returns:
        The indices of the capped constraints (none for the additive update).
    """
    if opts.multiplier_update != "multiplicative":
        return []
    cap = DEFAULT_MAX_LOG_MULTIPLIER * (1 - 1e-12)
    return [j for j, k in enumerate(kappa.tolist()) if math.log(k) >= cap]


def multiplier_step(r: Round) -> None:
    """This epoch's multipliers (``r.kappa``) and, in the practical mode, the
    constraints' units (``r.g_scale``); ``epoch``, ``kappa``, ``epochs_used`` (and
    ``constraint_scale``, ``kappa_capped``) in the metadata.

    Args:
        r: The round; reads ``opts``, ``history`` (the number of constraints) and
            ``active``, writes ``kappa`` and ``g_scale`` (the practical mode only)
            and the metadata's ``epoch``, ``kappa``, ``epochs_used``, ``budget``
            (:func:`budget_summary`), ``constraint_scale`` (the practical mode) and
            ``kappa_capped`` (where a multiplier is at the cap).
    """
    opts, meta = r.opts, r.meta
    m = r.history.num_constraints
    if opts.theory is None:  # the practical mode: unit-free constraints
        r.g_scale = constraint_scales(r.active, m)
        meta["constraint_scale"] = r.g_scale.tolist()
    r.kappa, epoch, used = multipliers(r.active, opts.constraints, m, r.g_scale)
    meta.update(epoch=epoch, kappa=r.kappa.tolist(), epochs_used=used)
    capped = capped_multipliers(r.kappa, opts.constraints)
    if capped:
        meta["kappa_capped"] = capped
    meta["budget"] = budget_summary(r.active, m)


def budget_summary(active: Sequence[TrialRecord], m: int) -> dict[str, Any]:
    """The running average of each constraint's ``g`` (its value minus its bound,
    in its units: ``<= 0`` is within budget) over the ``trials`` with values, and
    their sum.

    Args:
        active: The trials (those without constraint values are left out).
        m: The number of constraints.

    Returns:
        ``{"mean_g": ..., "sum_g": ..., "trials": ...}``: the ``m`` means (0
        without values) and sums, and the number of trials with values.
    """
    rows = [list(e.g) for e in active if e.g is not None]
    G = torch.tensor(rows, dtype=torch.double).reshape(-1, m)
    mean = G.mean(0) if rows else torch.zeros(m, dtype=torch.double)
    return {"mean_g": mean.tolist(), "sum_g": G.sum(0).tolist(), "trials": len(rows)}


def composite_step(r: Round) -> None:
    """The completed trials' targets become the composite
    :math:`f - \\sum_j \\kappa_j(\\psi(g_j) - 1)` (or
    :math:`f - \\sum_j \\kappa_j g_j`); in the practical mode formed in unit-free
    terms: the objective standardized first (``r.m_f``, ``r.s_f``), the constraints
    in their scales. With
    ``constraint_model="separate"`` the targets stay the objective's (the
    constraints have their own GPs: :func:`constraint_fit_step`).

    Args:
        r: The round; reads ``done``, ``opts``, ``Y0``, ``g_scale``, ``kappa`` and
            ``history`` (the metric, for an error), writes ``Y_composite``, and
            ``m_f`` and ``s_f`` in the practical mode (no metadata); nothing
            without completed trials or with ``constraint_model="separate"``.

    Raises:
        ValueError: The objective's values cannot be standardized
            (:func:`~botorch_bandits.core.steps.errors.not_finite`), or the
            composite target is not finite (:func:`overflowing_composite`).
    """
    if not r.done or r.opts.constraints.model == "separate":
        return
    opts = r.opts
    Y = r.Y0
    if r.g_scale is not None:
        try:
            Y, r.m_f, r.s_f = standardize(Y)
        except ValueError:
            not_finite(None, r.done, r.history.metric)
    G0 = torch.tensor([list(e.g) for e in r.done], dtype=torch.double)
    r.Y_composite = composite_targets(
        Y,
        in_units(G0, r.g_scale),
        r.kappa,
        opts.constraints.multiplier_update,
        penalty_of(opts.constraints),
    )
    if not bool(torch.isfinite(r.Y_composite).all()):
        overflowing_composite(G0, r.done, opts.constraints)


def overflowing_composite(
    G: Tensor, done: list[TrialRecord], opts: LongTermConstraints
) -> None:
    """The composite target of long-term constraints overflowed (the theory mode
    reads each constraint in its own units, and exp(c g) overflows past g of about
    709 / c): an error naming the largest constraint value and what to do.

    Args:
        G: The completed trials' ``n x m`` constraint values.
        done: The completed trials (the error names the largest value's).
        opts: The long-term constraints' options (``penalty_c``, for the message).

    Raises:
        ValueError: Always.
    """
    row, col = divmod(int(G.argmax()), G.shape[1])
    raise ValueError(
        f"The composite target f - kappa (psi(g) - 1) of the long-term constraints "
        f"is not finite: constraint {col}'s g - b = {float(G[row, col])!r} (trial "
        f"{done[row].index}) makes psi(g) = exp(penalty_c * g) overflow, with "
        f"penalty_c={opts.penalty_c!r}. The theory mode reads "
        "constraints in their own units, as Shi & Eryilmaz do: rescale the "
        "constraint (divide it by its typical size), lower penalty_c, or use the "
        "practical mode, which measures each constraint in its observed spread."
    )


def epoch_step(r: Round) -> None:
    """The epoch's confidence: :math:`(\\delta/L, R)` for Algorithm 2,
    :math:`(\\delta/(2L), R\\sqrt{1 + \\sum_j \\kappa_j^2})` for Algorithm 3;
    ``delta_epoch`` in the metadata. :math:`L` is ``num_epochs``, else the epochs
    begun so far.

    Args:
        r: The round; reads ``opts``, ``meta`` (``epoch``), ``R`` and ``kappa``,
            writes ``delta``, ``R_epoch`` and the metadata's ``delta_epoch``.
    """
    opts = r.opts.constraints
    L = opts.num_epochs or r.meta["epoch"] + 1
    r.delta, r.R_epoch = epoch_schedule(
        opts.multiplier_update, r.opts.delta, L, r.R, r.kappa
    )
    r.meta["delta_epoch"] = r.delta


def steps(opts: DecisionOptions) -> Steps:
    """The long-term constraints' steps under ``opts`` (none without them): the
    multipliers, and with ``constraint_model="composite"`` the composite target and
    its epoch's confidence (the separate constraints' GPs: ``penalty.steps``).

    Args:
        opts: The decision's options.

    Returns:
        The steps by their place in the pipeline.
    """
    if opts.constraints is None:
        return {}
    if opts.constraints.model == "separate":
        return {"multipliers": multiplier_step}
    return {
        "multipliers": multiplier_step,
        "composite": composite_step,
        "epoch": epoch_step,
    }
