"""What stands in for the running trials in the model, one step per ``pending``
rule: nothing (:func:`ignore_view`), the posterior mean of a model of the
completed trials (:func:`hallucinate_view`, GP-BUCB / BTS), or the censored target
``y_min`` within a window (:func:`censor_view`, GP-UCB-SDF / GP-TS-SDF)."""

from __future__ import annotations

import math
import warnings
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from botorch_bandits.core.fit import build_model
from botorch_bandits.core.history import TrialRecord
from botorch_bandits.core.options import Censoring
from botorch_bandits.core.round import Round
from botorch_bandits.core.steps.model import model_rows
from botorch_bandits.delays import FeedbackLedger
from botorch_bandits.seeding import IMPUTATION, derived_seed, step_seed

__all__ = [
    "CensoringWarning",
    "censor_view",
    "censored_view",
    "hallucinate_view",
    "ignore_view",
    "imputed_view",
]


def _own_targets(r: Round) -> tuple[dict[int, float], dict[int, float]]:
    """Each completed trial's target and known variance, as the model has them."""
    Y0 = r.targets
    targets = {e.index: float(y) for e, y in zip(r.done, Y0.tolist(), strict=True)}
    var_of = {}
    if r.known is not None:
        var_of = {e.index: v for e, v in zip(r.done, r.known.var.tolist(), strict=True)}
    return targets, var_of


def ignore_view(r: Round) -> None:
    """The completed trials alone (asynchronous GP-UCB / TS); ``pending`` (the
    running trials' count) in the metadata.

    Args:
        r: The round; reads ``X0``, the targets (``Y_model``, else ``Y_composite``,
            else ``Y0``), ``known`` and ``H``, writes ``X``, ``Y``, ``rows_known``
            and the metadata's ``pending``.
    """
    r.X, r.Y, r.rows_known = r.X0, r.targets, r.known
    r.meta["pending"] = sum(e.f is None for e in r.H)


#: an imputation rule: the model of the completed trials, the running trials'
#: inputs (``m x d``), the round and the decision's seed for the rule's draws (a
#: random rule's; :data:`~botorch_bandits.seeding.IMPUTATION`) -> their targets
#: (``m``)
Imputation = Callable[[Any, Tensor, Round, int], Tensor]


def imputed_view(r: Round, impute: Imputation) -> None:
    """The running trials at the targets ``impute`` gives them from the model of the
    completed trials (a believer: the kriging believer's posterior mean, or another
    rule's value); ``pending`` in the metadata. The rules that impute are each one
    module of :mod:`~botorch_bandits.core.steps` and one entry of
    :data:`~botorch_bandits.core.decide.VIEWS`.

    Args:
        r: The round; reads ``H``, ``done``, ``X0``, the targets, ``known``,
            ``hyper``, ``opts``, ``position``, ``active``, ``domain`` and ``cache``
            (the sparse model's), writes ``X``, ``Y`` and ``rows_known`` (the
            completed trials' rows first, then the running trials') and the
            metadata's ``pending`` (the running trials' count).
        impute: The :data:`Imputation`: the model of the completed trials, the
            running trials' ``m x d`` inputs, the round and the decision's seed
            -> their ``m`` targets (not called when none is running).

    Example:
        >>> def at_zero(model, X, r, seed):  # a rule imputing 0
        ...     return torch.zeros(X.shape[0], dtype=torch.double)
        >>> def zero_view(r):
        ...     imputed_view(r, at_zero)
    """
    waiting = [e for e in r.H if e.f is None]
    Y0 = r.targets
    X, Y, rows_known = r.X0, Y0, r.known
    if waiting:
        targets, var_of = _own_targets(r)
        Xw = r.inputs(waiting)
        with torch.no_grad():
            base = build_model(
                r.X0, Y0, r.opts.theory, r.hyper, **r.sparse, known=r.known
            )
            seed = derived_seed(step_seed(r.opts.seed, r.position), IMPUTATION)
            values = impute(base, Xw, r, seed).reshape(-1)
        X, Y = torch.cat([r.X0, Xw]), torch.cat([Y0, values])
        order = r.done + [e for e in r.H if e.f is None]
        rows_known = model_rows(r.known, order, Y, targets, var_of)
    r.X, r.Y, r.rows_known = X, Y, rows_known
    r.meta["pending"] = len(waiting)


def _posterior_mean(model: Any, X: Tensor, r: Round, seed: int) -> Tensor:
    """The kriging believer's target: the posterior mean at each running trial."""
    return model.posterior(X.unsqueeze(-2)).mean


def hallucinate_view(r: Round) -> None:
    """The running trials at the posterior mean of the completed trials' model (the
    kriging believer of GP-BUCB / BTS); ``pending`` in the metadata.

    Args:
        r: The round; reads and writes what :func:`imputed_view` does (``X``,
            ``Y``, ``rows_known``, the metadata's ``pending``).
    """
    imputed_view(r, _posterior_mean)


class CensoringWarning(UserWarning):
    """A censoring setting that cannot work on this experiment (see
    :func:`censor_view`)."""


def censor_view(r: Round) -> None:
    """Every issued query with its censored target (Verma et al. 2022, Eq. 3) and
    the recent queries for :math:`\\nu_t`; ``censored``, ``late`` and ``in_flight``
    in the metadata; a :class:`CensoringWarning` where the settings cannot work.

    Args:
        r: The round; reads ``H``, ``done``, the targets, ``known``, ``y_min``,
            ``opts``, ``domain``, ``history`` (the objective's direction) and,
            under ``forgetting``, ``active``; writes ``X``, ``Y``, ``recent``,
            ``rows_known`` and the metadata's ``censored``, ``late`` and
            ``in_flight``.

    Warns:
        CensoringWarning: The window is below the trials in flight, more than half
            of the values arrived too late to be used, or a trial reported a value
            worse than ``y_min``.
    """
    targets, var_of = _own_targets(r)
    d = r.domain.dim
    r.X, r.Y, r.recent, n_cens, n_late = censored_view(
        r.H, targets, r.y_min, r.opts.censoring, d
    )
    in_flight = sum(e.f is None for e in r.H)
    r.meta.update(censored=n_cens, late=n_late, in_flight=in_flight)
    _warn_censoring(r, in_flight, n_late)
    order = [e for e in r.H if e.index >= 0] + [e for e in r.H if e.index < 0]
    if r.opts.forgetting:  # the rows' times (in censored_view's order)
        r.X = r.inputs(order)
        r.recent = r.X[r.X.shape[0] - r.recent.shape[0] :]
    r.rows_known = model_rows(r.known, order, r.Y, targets, var_of)


def _warn_censoring(r: Round, in_flight: int, n_late: int) -> None:
    """Warn when the window is below the trials in flight, when more than half of
    the values arrived too late to be used, or when a trial reported a value worse
    than ``y_min`` (which is then not the metric's worst value)."""
    cens, sign = r.opts.censoring, r.history.sign
    window = cens.window
    if window is not None and in_flight > window:
        warnings.warn(
            f"window={window} (trials created while a value may still arrive) is "
            f"below the {in_flight} trials in flight: a value arriving after its "
            "window is never used, so most values would be lost. Give a window of "
            "at least twice the trials in flight.",
            CensoringWarning,
            stacklevel=2,
        )
    completed = sum(e.f is not None for e in r.H)
    if completed >= 4 and n_late > completed / 2:
        warnings.warn(
            f"More than half of the values arrived after their window "
            f"(window={window}) and are never used (the metadata's `late`): "
            "widen the window.",
            CensoringWarning,
            stacklevel=2,
        )
    # (on the maximized scale: a minimized metric's values and y_min negated)
    worse = [e for e in r.done if e.f is not None and e.f < sign * cens.y_min]
    if worse:
        e = worse[0]
        warnings.warn(
            f"y_min={cens.y_min!r} is not the metric's worst value: trial {e.index} "
            f"reported {sign * e.f!r}, worse than y_min. A running trial is "
            "censored at y_min, the value it is known to be no "
            f"worse than: give the metric's {'floor' if sign > 0 else 'ceiling'}.",
            CensoringWarning,
            stacklevel=2,
        )


def censored_view(
    H: Sequence[TrialRecord],
    targets: dict[int, float],
    y_min: float,
    opts: Censoring,
    d: int,
) -> tuple[Tensor, Tensor, Tensor, int, int]:
    """Every trial of ``H`` with its censored target (Verma et al. 2022, Eq. 3),
    the recent queries for :math:`\\nu_t`, and the censored / late counts. Trials
    issued in this call (``index < 0``) have target ``y_min``.

    Args:
        H: The trials the model sees, in order (this call's candidates last).
        targets: The completed trials' targets, by trial index.
        y_min: The censored target (as maximized, in the targets' units).
        opts: The censoring options (``window``, or ``window_seconds``: the window
            in Ax's trial times).
        d: The input dimension.

    Returns:
        ``(X, Y, recent, censored, late)``: the ``k x d`` points (the trials of the
        experiment first, then this call's), their ``k`` censored targets, the
        recent queries (the last rows of ``X``), the number of queries standing at
        ``y_min`` (this call's included) and the number of values that arrived
        too late to be used.
    """
    live = [e for e in H if e.index >= 0]
    extra = [e for e in H if e.index < 0]
    if opts.window_seconds is not None:
        ledger, now, lo = _by_seconds(live, extra, targets, y_min, opts)
    else:
        ledger, now, lo = _by_trials(live, extra, targets, y_min, opts)
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


def _by_seconds(
    live: list[TrialRecord],
    extra: list[TrialRecord],
    targets: dict[int, float],
    y_min: float,
    opts: Censoring,
) -> tuple[Any, float, int]:
    """The ledger of a window in seconds (Ax's trial times), the decision's time
    and the first recent query."""
    ledger = FeedbackLedger(opts.window_seconds, y_min, clock="time")
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
    return ledger, now, lo


def _by_trials(
    live: list[TrialRecord],
    extra: list[TrialRecord],
    targets: dict[int, float],
    y_min: float,
    opts: Censoring,
) -> tuple[Any, float, int]:
    """The ledger of a window in trials (each arrival counted by the trials created
    by then), the decision's step and the first recent query."""
    ledger = FeedbackLedger(opts.window, y_min)
    # the creation times in order (a NaN one is never "by" a completion), so that
    # the trials created by a completion are counted by bisection: O(n log n), not
    # O(n^2) (5 s a decision at 10,000 trials)
    created = sorted(e.created for e in live if not math.isnan(e.created))
    for e in live:
        q = ledger.issue(list(e.x))
        if e.f is not None:
            # the decision at which the data was first available: trials
            # created by the completion, plus one
            by = 0 if math.isnan(e.completed) else bisect_right(created, e.completed)
            ledger.receive(q, targets[e.index], at=max(by + 1, q + 2))
    now = len(live) + 1
    n_all = len(live) + len(extra)
    lo = 0 if opts.window is None else max(0, n_all - opts.window)
    return ledger, now, lo
