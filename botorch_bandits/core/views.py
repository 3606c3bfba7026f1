"""The round's state recomputed from the trials: the epoch's multipliers (long-term
constraints), GP-UCB-CPD's restarts and uniform count, and the censored view of
delayed feedback (every issued query with its censored target)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from botorch_bandits.changepoint import GPUCBCPD, ChangePointDetector
from botorch_bandits.constraints import ExponentialPenalty, replay_multipliers
from botorch_bandits.core.history import TrialRecord
from botorch_bandits.core.options import Censoring, LongTermConstraints
from botorch_bandits.delays import FeedbackLedger


def penalty_of(opts: LongTermConstraints) -> ExponentialPenalty | None:
    """Algorithm 2's penalty :math:`\\psi(x) = e^{cx}` (``None`` for Algorithm 3)."""
    if opts.multiplier_update == "multiplicative":
        return ExponentialPenalty(opts.penalty_c)
    return None


def multipliers(
    active: Sequence[TrialRecord], opts: LongTermConstraints, m: int
) -> tuple[Tensor, int, int]:
    """(kappa of the current epoch, epoch index l (0-based), completed epochs used).
    Epochs are blocks of ``epoch_length`` trials in order; an epoch updates the
    multipliers once all its trials have data (Shi & Eryilmaz 2022, Alg. 2 / 3)."""
    prefix = []
    for e in active:
        if e.g is None:
            break
        prefix.append(list(e.g))
    g = torch.tensor(prefix, dtype=torch.double).reshape(-1, m)
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
) -> Tensor:
    r"""The known standard error of each completed trial's target (NaN where not
    known): its objective's SEM; with long-term constraints the composite target's,
    :math:`(\mathrm{SEM}_f^2 + \sum_j \kappa_j^2 \psi'(g_j)^2
    \mathrm{SEM}_{g_j}^2)^{1/2}` (the delta method; :math:`\psi' = 1` for Algorithm
    3's linear target; no square formed, so none over- or underflows), a constraint
    with :math:`\kappa_j = 0` not entering."""
    nan = float("nan")
    se = torch.tensor(
        [nan if e.sem is None else e.sem for e in done], dtype=torch.double
    )
    if kappa is None or not done:
        return se
    g = torch.tensor([list(e.g) for e in done], dtype=torch.double)
    g_sem = torch.tensor(
        [[nan] * g.shape[1] if e.g_sem is None else list(e.g_sem) for e in done],
        dtype=torch.double,
    )
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
