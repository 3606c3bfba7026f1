"""The steps that choose the model's data: the decision set's rows in flight
under ``pending="ignore"`` (:func:`exclude_in_flight`), the trials the model sees
-- since the last restart, within a model window (:func:`window_step`) -- and the
known noise of their targets from the reported standard errors
(:func:`sems_step`)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from botorch_bandits.core.history import TrialRecord
from botorch_bandits.core.options import DecisionOptions, LongTermConstraints
from botorch_bandits.core.round import Round, Steps
from botorch_bandits.core.steps.constraints import penalty_of

__all__ = [
    "exclude_in_flight",
    "known_noise_rule",
    "sems_step",
    "steps",
    "target_sems",
    "window_step",
]


def exclude_in_flight(r: Round) -> None:
    """Under ``pending="ignore"``: the decision set's rows in flight (running
    trials and this call's earlier candidates), excluded while another candidate
    remains (``r.busy``; ``excluded_in_flight`` in the metadata).

    Args:
        r: The round; reads ``domain`` and ``active``, writes ``busy`` (empty when
            every row is in flight) and the metadata's ``excluded_in_flight``.
    """
    index, n = r.domain.index, r.domain.unit.shape[0]
    busy = sorted({index.get(tuple(e.x)) for e in r.active if e.f is None} - {None})
    r.busy = [] if len(busy) >= n else busy
    r.meta["excluded_in_flight"] = len(r.busy)


def window_step(r: Round) -> None:
    """The trials the model sees (``r.H``): since the last restart, and with a
    model window only the most recent ones (``model_window_start``); the completed
    ones (``r.done``) with their points and values (``r.X0``, ``r.Y0``); the
    window's first trial in ``r.window_start``.

    Args:
        r: The round; reads ``start``, ``opts``, ``position``, ``active`` and
            ``domain``, writes ``window_start``, ``H``, ``done``, ``X0`` and
            ``Y0``, and the metadata's ``model_window_start`` (with a model window).
    """
    r.window_start = r.start
    if r.opts.model_window is not None:
        r.window_start = max(r.start, r.position - r.opts.model_window)
        r.meta["model_window_start"] = r.window_start
    r.H = r.active[r.window_start :]
    r.done = [e for e in r.H if e.f is not None]
    r.X0 = r.inputs(r.done)
    r.Y0 = torch.tensor([e.f for e in r.done], dtype=torch.double)


def sems_step(r: Round) -> None:
    """The reported standard errors of the targets (``r.se``, in the units the
    targets are formed in) and the rule they enter the model by
    (``r.sems_rule``); ``sems`` in the metadata when any is reported.

    Args:
        r: The round; reads ``opts``, ``kappa`` (the composite target's),
            ``done``, ``s_f`` and ``g_scale``, writes ``se``, ``sems_rule`` and the
            metadata's ``sems``.

    Raises:
        ValueError: ``sems="fixed"`` and a target has no standard error
            (:func:`known_noise_rule`).
    """
    opts = r.opts
    separate = opts.constraints is not None and opts.constraints.model == "separate"
    kappa = None if separate else r.kappa  # the targets are the objective's
    r.se = target_sems(r.done, kappa, opts.constraints, r.s_f, r.g_scale)
    r.sems_rule = known_noise_rule(r.se, opts.sems, [e.index for e in r.done])
    reported = int((~torch.isnan(r.se)).sum())
    if reported:
        r.meta["sems"] = {
            "rule": "ignore" if opts.sems == "ignore" else r.sems_rule,
            "reported": reported,
            "observations": len(r.done),
        }


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
    constraints' scales).

    Args:
        done: The completed trials.
        kappa: The ``m`` multipliers of the composite target, or ``None``: the
            objective's SEMs alone.
        opts: The long-term constraints' options (the penalty :math:`\psi`), or
            ``None`` without them.
        f_scale: The objective's unit (default 1).
        g_scale: The constraints' ``m`` units (default ``None``: 1 each).

    Returns:
        The ``n`` standard errors, NaN where not known.
    """
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
    refused, naming it.

    Args:
        var: The ``n`` known standard errors or variances, NaN where not known.
        rule: The ``sems`` option: ``"ignore"``, ``"fixed"``, ``"add"`` or
            ``"auto"``.
        trials: The ``n`` trials' indices, for the error.

    Returns:
        ``"none"`` (``"ignore"``, or none known), ``"fixed"`` (``"fixed"``, or
        ``"auto"`` with every one known) or ``"add"``.

    Raises:
        ValueError: ``rule="fixed"`` and a target has none.
    """
    known = ~torch.isnan(var)
    if rule == "ignore" or not bool(known.any()):
        return "none"
    if rule == "fixed" and not bool(known.all()):
        missing = [t for t, k in zip(trials, known.tolist(), strict=True) if not k]
        raise ValueError(
            f"sems='fixed' takes each observation's noise from its SEM, and the "
            f"target of trial(s) {missing[:10]} has none (no SEM for the objective, "
            "or, with long-term constraints, for a constraint metric: its own GP's "
            "target under constraint_model='separate', a part of the composite "
            "target where its multiplier is > 0): attach their SEMs, or pass "
            "sems='add' (the model's "
            "noise plus the SEMs where given) or 'auto'."
        )
    if rule == "fixed" or (rule == "auto" and bool(known.all())):
        return "fixed"
    return "add"


def steps(opts: DecisionOptions) -> Steps:
    """The model's data, in every decision: the window of trials and the reported
    standard errors (``pending="ignore"``'s rows in flight: the pending feature's).

    Args:
        opts: The decision's options.

    Returns:
        The steps by their place in the pipeline.
    """
    return {"window": window_step, "sems": sems_step}
