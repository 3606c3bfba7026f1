"""The round's state recomputed from the trials: the epoch's multipliers (long-term
constraints), GP-UCB-CPD's restarts and uniform count, and the censored view of
delayed feedback (every issued query with its censored target)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from botorch_bandits.changepoint import GPUCBCPD, ChangePointDetector
from botorch_bandits.constraints import (
    DEFAULT_MAX_LOG_MULTIPLIER,
    ExponentialPenalty,
    replay_multipliers,
)
from botorch_bandits.core.history import TrialRecord
from botorch_bandits.core.options import Censoring, LongTermConstraints
from botorch_bandits.delays import FeedbackLedger
from botorch_bandits.models import STANDARDIZED_QUANTUM


def penalty_of(opts: LongTermConstraints) -> ExponentialPenalty | None:
    """Algorithm 2's penalty :math:`\\psi(x) = e^{cx}` (``None`` for Algorithm 3)."""
    if opts.multiplier_update == "multiplicative":
        return ExponentialPenalty(opts.penalty_c)
    return None


def constraint_scales(active: Sequence[TrialRecord], m: int) -> Tensor:
    """The practical mode's unit of each of the ``m`` constraints: the spread
    (population standard deviation) of its observed values over every trial with
    one, or their root mean square where they have no spread, or 1 where every
    value is 0. A constraint written in other units (``s g <= s b``, ``s > 0``)
    has the same values in these units, so the multipliers, the penalty's ``c``
    and the additive step act on a scale the user's units do not change."""
    rows = [list(e.g) for e in active if e.g is not None]
    if not rows:
        return torch.ones(m, dtype=torch.double)
    G = torch.tensor(rows, dtype=torch.double).reshape(-1, m)
    top = G.abs().amax(0).clamp_min(torch.finfo(torch.double).tiny)
    scaled = G / top  # no square over- or underflows
    sd = scaled.std(0, correction=0) * top
    rms = scaled.square().mean(0).sqrt() * top
    spread = sd > 1e-9 * rms  # a spread of rounding errors is none
    scale = torch.where(spread, sd, torch.where(rms > 0, rms, torch.ones_like(rms)))
    return scale


def in_units(g: Tensor, scale: Tensor | None) -> Tensor:
    """Constraint values ``g`` (``n x m``) in the units ``scale`` (``None``: as
    given), on the standardized targets' grid: ``s g`` in ``s`` times the units
    gives the same bits."""
    if scale is None:
        return g
    q = STANDARDIZED_QUANTUM
    return torch.round(g / scale / q) * q


def multipliers(
    active: Sequence[TrialRecord],
    opts: LongTermConstraints,
    m: int,
    scale: Tensor | None = None,
) -> tuple[Tensor, int, int]:
    """(kappa of the current epoch, epoch index l (0-based), completed epochs used).
    Epochs are blocks of ``epoch_length`` trials in order; an epoch updates the
    multipliers once all its trials have data (Shi & Eryilmaz 2022, Alg. 2 / 3).
    ``scale``: the constraints' units (:func:`constraint_scales`; ``None``: the
    values as given, the theory mode's reading)."""
    prefix = []
    for e in active:
        if e.g is None:
            break
        prefix.append(list(e.g))
    g = in_units(torch.tensor(prefix, dtype=torch.double).reshape(-1, m), scale)
    rule = opts.multiplier_update
    rows = replay_multipliers(
        g,
        opts.epoch_length,
        rule,
        penalty=penalty_of(opts),
        step=opts.step if rule == "additive" else None,
    )
    epoch = len(active) // opts.epoch_length
    used = min(epoch, rows.shape[0] - 1)
    return rows[used], epoch, used


def capped_multipliers(kappa: Tensor, opts: LongTermConstraints) -> list[int]:
    """The constraints whose multiplier is at the multiplicative update's cap
    (:data:`~botorch_bandits.constraints.DEFAULT_MAX_LOG_MULTIPLIER`; the replay
    warns with a ``MultiplierCapWarning`` when it caps)."""
    if opts.multiplier_update != "multiplicative":
        return []
    cap = DEFAULT_MAX_LOG_MULTIPLIER * (1 - 1e-12)
    return [j for j, k in enumerate(kappa.tolist()) if math.log(k) >= cap]


def restarts_state(
    active: Sequence[TrialRecord], detector: ChangePointDetector, xi: float
) -> tuple[int, int, list[int], list[int]]:
    """GP-UCB-CPD's state replayed over the trials (:meth:`GPUCBCPD.replay`, each
    trial's uniform decision as issued, running trials in ``H`` without a value):
    (position where the history H starts, :math:`|U|`, trial indices that
    restarted, the n that fired)."""
    algo = GPUCBCPD.replay(
        [torch.tensor(e.x, dtype=torch.double) for e in active],
        [e.f for e in active],
        detector,
        uniform=[e.uniform for e in active],
        xi=xi,
    )
    state = algo.state
    start = state.restarts[-1] + 1 if state.restarts else 0
    restarts = [active[t].index for t in state.restarts]
    return start, len(state.uniform), restarts, list(state.detections)


def censored_view(
    H: Sequence[TrialRecord],
    targets: dict[int, float],
    y_min: float,
    opts: Censoring,
    d: int,
) -> tuple[Tensor, Tensor, Tensor, int, int]:
    """Every trial of ``H`` with its censored target (Verma et al. 2022, Eq. 3),
    the recent queries for :math:`\\nu_t`, and the censored / late counts. Trials
    issued in this call (``index < 0``) have target ``y_min``."""
    live = [e for e in H if e.index >= 0]
    extra = [e for e in H if e.index < 0]
    if opts.window_seconds is not None:
        ledger: Any = FeedbackLedger(opts.window_seconds, y_min, clock="time")
        events = [e.created for e in live] + [
            e.completed for e in live if e.completed is not None
        ]
        now = (max(events) if events else 0.0) + 1e-3
        for e in live:
            q = ledger.issue(list(e.x), at=e.created)
            if e.f is not None:
                ledger.receive(q, targets[e.index], at=max(e.completed, e.created))
        issued = np.array([e.created for e in live] + [now] * len(extra))
        lo = int(np.searchsorted(issued, now - opts.window_seconds, side="left"))
    else:
        ledger = FeedbackLedger(opts.window, y_min)
        created = [e.created for e in live]
        for e in live:
            q = ledger.issue(list(e.x))
            if e.f is not None:
                # the decision at which the data was first available: trials
                # created by the completion, plus one
                arrival = sum(c <= e.completed for c in created) + 1
                ledger.receive(q, targets[e.index], at=max(arrival, q + 2))
        now = len(live) + 1
        n_all = len(live) + len(extra)
        lo = 0 if opts.window is None else max(0, n_all - opts.window)
    points = [list(e.x) for e in live] + [list(e.x) for e in extra]
    X = torch.tensor(points, dtype=torch.double).reshape(-1, d)
    Y = torch.cat(
        [
            ledger.censored_targets(now),
            torch.full((len(extra),), y_min, dtype=torch.double),
        ]
    )
    recent = X[lo:]
    n_cens = len(ledger.issued_before(now)) - len(ledger.completed(now))
    return X, Y, recent, n_cens + len(extra), len(ledger.late())


def target_sems(
    done: Sequence[TrialRecord],
    kappa: Tensor | None,
    opts: LongTermConstraints | None,
    f_scale: float = 1.0,
    g_scale: Tensor | None = None,
) -> Tensor:
    r"""The known standard error of each completed trial's target (NaN where not
    known): its objective's SEM; with long-term constraints the composite target's,
    :math:`(\mathrm{SEM}_f^2 + \sum_j \kappa_j^2 \psi'(g_j)^2
    \mathrm{SEM}_{g_j}^2)^{1/2}` (the delta method; :math:`\psi' = 1` for Algorithm
    3's linear target; no square formed, so none over- or underflows), a constraint
    with :math:`\kappa_j = 0` not entering. ``f_scale`` and ``g_scale``: the units
    the composite is formed in (the practical mode's: the objective's spread, the
    constraints' :func:`constraint_scales`)."""
    nan = float("nan")
    se = torch.tensor(
        [nan if e.sem is None else e.sem for e in done], dtype=torch.double
    )
    se = se / f_scale
    if kappa is None or not done:
        return se
    unit = torch.ones(kappa.shape, dtype=torch.double) if g_scale is None else g_scale
    g = torch.tensor([list(e.g) for e in done], dtype=torch.double) / unit
    g_sem = torch.tensor(
        [[nan] * g.shape[1] if e.g_sem is None else list(e.g_sem) for e in done],
        dtype=torch.double,
    )
    g_sem = g_sem / unit
    slope = torch.ones_like(g)
    penalty = penalty_of(opts)
    if penalty is not None:
        x = g.clone().requires_grad_(True)
        penalty(x).sum().backward()
        slope = x.grad
    terms = torch.cat([se.unsqueeze(-1), (kappa * slope * g_sem)[:, kappa != 0]], -1)
    scale = terms.abs().amax(-1, keepdim=True)  # NaN where any term is NaN
    scaled = torch.where(scale > 0, terms / scale, torch.zeros_like(terms))
    return scale.squeeze(-1) * scaled.square().sum(-1).sqrt()


def known_noise_rule(var: Tensor, rule: str, trials: Sequence[int]) -> str:
    """Which rule ``sems`` gives for targets with the known standard errors (or
    variances) ``var`` (NaN: not known) of ``trials``: ``"fixed"``, ``"add"``, or
    ``"none"`` (the model's noise alone); ``"fixed"`` with a trial that has none is
    refused, naming it."""
    known = ~torch.isnan(var)
    if rule == "ignore" or not bool(known.any()):
        return "none"
    if rule == "fixed" and not bool(known.all()):
        missing = [t for t, k in zip(trials, known.tolist(), strict=True) if not k]
        raise ValueError(
            f"sems='fixed' takes each observation's noise from its SEM, and the "
            f"target of trial(s) {missing[:10]} has none (no SEM for the objective, "
            "or, with long-term constraints, for a constraint metric whose "
            "multiplier is > 0): attach their SEMs, or pass sems='add' (the model's "
            "noise plus the SEMs where given) or 'auto'."
        )
    if rule == "fixed" or (rule == "auto" and bool(known.all())):
        return "fixed"
    return "add"
