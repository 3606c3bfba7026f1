"""The model's steps: the practical mode's standardized targets and fitted GP on
its refit schedule (:func:`practical_fit_step`), the theory mode's fixed or fitted
kernel (:func:`theory_fit_step`), and the decision's GP on the pending view's data
(:func:`model_step`, exact or sparse)."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from botorch_bandits.acquisition.practical import practical_confidence
from botorch_bandits.core.fit import (
    KnownNoise,
    build_model,
    fit_practical,
    fit_subset,
    fit_theory,
    refit_due,
    reused_fit,
)
from botorch_bandits.core.history import TrialRecord
from botorch_bandits.core.options import DecisionOptions
from botorch_bandits.core.round import Round, Steps
from botorch_bandits.core.steps.errors import not_finite
from botorch_bandits.hyperparameters import Hyperparameters
from botorch_bandits.models import STANDARDIZED_QUANTUM, NystromGP, standardize

#: the practical mode's default ``B_y`` on the standardized scale: 0, no inflation
#: of nu_t (Verma et al.'s B_y sum sigma over the window); chosen on the delay
#: problems' development half against 0.1, 0.3, 1 and the observed range, where
#: the inflation sent the decisions to the box's faces (docs/measured.md)
PRACTICAL_B_Y = 0.0

__all__ = [
    "PRACTICAL_B_Y",
    "censoring_spread",
    "censoring_units",
    "fit_counts",
    "known_noise",
    "model_rows",
    "model_step",
    "noise_ratio",
    "practical_fit_step",
    "scheduled_fit",
    "steps",
    "theory_fit_step",
]


def practical_fit_step(r: Round) -> None:
    """The practical mode: the targets standardized (the decision is the same for
    ``a y + b``, ``a > 0``; ``y_min`` and ``B_y`` mapped the same way), their known
    noise, the GP fitted by marginal likelihood when the refit schedule says so (the
    last fit reused otherwise), and ``R`` from the fitted noise unless given;
    ``standardize``, ``fit``, ``R`` in the metadata.

    Args:
        r: The round; reads the targets (``Y_composite``, else ``Y0``), ``done``,
            ``X0``, ``m_f``, ``s_f``, ``se``, ``sems_rule``, ``y_min``, ``B_y``,
            ``R``, ``kappa``, ``active``, ``restart``, ``position``, ``opts``,
            ``history`` (the last fit, the warm start, the metric), ``cache`` (the
            fits) and ``meta`` (``epoch``, under composite constraints), writes
            ``Y_model``, ``known``, ``hyper``, ``R`` (unless given), ``y_min`` and
            ``B_y`` (under ``pending="censor"``: in the model's units), and the
            metadata's ``standardize``, ``fit`` and ``R``.

    Raises:
        ValueError: The targets cannot be standardized
            (:func:`~botorch_bandits.core.steps.errors.not_finite`), or ``y_min``
            and ``B_y`` overflow on the model's scale (:func:`censoring_units`).
    """
    opts, meta, done = r.opts, r.meta, r.done
    try:
        r.Y_model, m, s = standardize(r.targets)
    except ValueError:
        not_finite(None, done, r.history.metric)
    # the objective's units to the model's: one affine map (the composite
    # target's standardization after the objective's own, if any)
    m_all, s_all = r.m_f + r.s_f * m, r.s_f * s
    if opts.pending == "censor":
        if not bool(r.Y_model.any()):  # no spread: none of the default's units
            m_all, s_all = censoring_spread(r.y_min, r.B_y, m_all, len(done))
            s = s_all / r.s_f
        r.y_min, r.B_y = censoring_units(r.y_min, r.B_y, m_all, s_all)
    meta["standardize"] = {"mean": m_all, "std": s_all}
    var = (r.se / s).square()  # scaled first: no square over- or underflows
    r.known = known_noise(var, r.sems_rule)
    counts = fit_counts(r)
    h = r.history
    fit = scheduled_fit(r, r.targets, r.known, h.last_fit, h.warm, counts)
    meta["fit"] = fit
    r.hyper = Hyperparameters.from_dict(fit)
    if r.R is None:  # the fitted noise's standard deviation (standardized)
        r.R = practical_confidence(noise_ratio(opts, r.hyper, r.known)).R
    meta["R"] = r.R


def fit_counts(r: Round) -> dict[str, Any]:
    """What the refit schedule reads of this decision's data
    (:data:`~botorch_bandits.core.fit.FIT_COUNTS`, and the epoch and the known
    noise's rule where they make the targets).

    Args:
        r: The round; reads ``done``, ``active``, ``restart``, ``position``,
            ``kappa``, ``opts``, ``meta`` (``epoch``) and ``sems_rule``.

    Returns:
        The counts, by name.
    """
    counts = {
        "n": len(r.done),
        "completed": sum(e.f is not None for e in r.active),
        # the first trial since the last restart, by its index (0: none)
        "start": r.active[r.restart].index if 0 < r.restart < r.position else 0,
    }
    composite = r.kappa is not None and r.opts.constraints.model == "composite"
    if composite:  # the targets change with the epoch's multipliers
        counts["epoch"] = r.meta["epoch"]
    if r.sems_rule != "none":  # the noise a fit records is read by its rule
        counts["sems"] = r.sems_rule
    return counts


def scheduled_fit(
    r: Round,
    targets: Tensor,
    known: KnownNoise | None,
    last: dict[str, Any] | None,
    warm: Hyperparameters | None,
    counts: dict[str, Any],
) -> dict[str, Any]:
    """The practical GP's fit under the refit schedule (``opts.refit``): ``last``
    reused while no refit is due (:func:`~botorch_bandits.core.fit.refit_due`), else
    a new marginal-likelihood fit on the completed trials (on a uniform subset past
    the sparse model's size), warm-started from ``warm`` unless
    ``fit_start="prior"``, recorded with the counts. The objective's fit and each
    long-term constraint's.

    Args:
        r: The round; reads ``opts``, ``done``, ``X0`` and ``cache`` (the fits).
        targets: The completed trials' standardized targets.
        known: Their known noise, or ``None``.
        last: The last recorded fit, or ``None``.
        warm: The new fit's start (and its fallback), or ``None``.
        counts: This decision's counts (:func:`fit_counts`).

    Returns:
        The fit as recorded in the metadata.
    """
    opts = r.opts
    if opts.refit is not None and not refit_due(last, counts, opts.refit):
        return reused_fit(last)
    rows = fit_subset(len(r.done), opts.sparse_after, opts.seed)
    Xf, Yf, kf = (r.X0, targets, known)
    if rows is not None:
        Xf, Yf = r.X0[rows], targets[rows]
        kf = None if known is None else KnownNoise(known.var[rows], known.learn)
    prior = opts.fit_start == "prior"
    fit = {**fit_practical(Xf, Yf, warm, opts.seed, r.cache.fits, kf, prior)}
    fit.update(counts)
    if rows is not None:  # fitted on a subset (the sparse model's size)
        fit["subset"] = len(rows)
    return fit


def theory_fit_step(r: Round) -> None:
    """The theory mode: raw targets with their known noise; with
    ``hyperparameters="fitted"``, the theory kernel fitted by marginal likelihood
    (``fitted`` in the metadata).

    Args:
        r: The round; reads ``se``, ``sems_rule``, ``opts``, ``X0`` and the targets
            (``Y_composite``, else ``Y0``), writes ``known``, and with
            ``hyperparameters="fitted"`` ``hyper`` and the metadata's ``fitted``
            (where the fit gives one).
    """
    r.known = known_noise(r.se.square(), r.sems_rule)
    if r.opts.theory.hyperparameters != "fitted":
        return
    r.hyper = fit_theory(r.X0, r.targets, r.opts.theory.kernel, r.known)
    if r.hyper is not None:
        r.meta["fitted"] = {
            "lengthscale": list(r.hyper.lengthscale),
            "outputscale": r.hyper.outputscale,
            "noise": r.hyper.noise,
        }


def model_step(r: Round) -> None:
    """The decision's GP on the pending view's data (exact, or past
    ``sparse_after`` the sparse model: ``sparse`` in the metadata); whether the rule
    is maximized by gradient (``r.gradient``: GP-TS on the sparse model draws on
    the decision set).

    Args:
        r: The round; reads ``X``, ``Y``, ``rows_known``, ``hyper``, ``opts``,
            ``cache`` and ``done`` (the sparse model's arguments,
            :attr:`~botorch_bandits.core.round.Round.sparse`), writes ``model``,
            ``gradient`` and the metadata's ``sparse`` (the sparse model only).
    """
    opts = r.opts
    r.model = build_model(
        r.X, r.Y, opts.theory, r.hyper, **r.sparse, known=r.rows_known
    )
    r.gradient = opts.optimizer == "gradient"
    if isinstance(r.model, NystromGP):
        model = r.model
        r.meta["sparse"] = {
            "dictionary": int(model.dictionary.numel()),
            "n": r.X.shape[0],
            "drawn_on": model.drawn_on,  # the first rows the dictionary is from
            # the regularization the leverage scores were taken at (above the
            # fitted noise where the cap on the dictionary's size bound)
            "leverage_regularization": model.leverage_regularization,
        }
        if opts.algorithm == "GP-TS":
            r.gradient = False
            r.meta["sparse"]["gp_ts"] = "decision set"


def noise_ratio(
    opts: DecisionOptions, hyper: Hyperparameters | None, known: KnownNoise | None
) -> float:
    """The model's noise variance over its prior variance: the practical GP's fitted
    noise (its prior variance is 1), the theory kernel's noise (unit variance), or
    the fitted theory kernel's noise over its output scale; with known noise
    variances, their mean with the model's noise (:meth:`KnownNoise.level`).

    Args:
        opts: The decision's options (the mode; the theory kernel's noise).
        hyper: The fitted hyperparameters, or ``None`` (not fitted).
        known: The targets' known noise, or ``None``.

    Returns:
        The ratio (``inf`` in the practical mode without a fit).
    """
    if opts.theory is None:
        if hyper is None:
            return math.inf
        return hyper.noise if known is None else known.level(hyper.noise)
    base = opts.theory.noise if hyper is None else hyper.noise
    level = base if known is None else known.level(base)
    return level if hyper is None else level / hyper.outputscale


def known_noise(var: Tensor, rule: str) -> KnownNoise | None:
    """The model's :class:`KnownNoise` for targets with known variances ``var``
    under the resolved ``rule``
    (:func:`~botorch_bandits.core.steps.data.known_noise_rule`).

    Args:
        var: The ``n`` known variances (NaN: not known).
        rule: ``"fixed"``, ``"add"`` or ``"none"``.

    Returns:
        ``None`` for ``"none"``; else the variances, as the whole noise
        (``"fixed"``) or added to the model's (``"add"``, NaN read as 0).
    """
    if rule == "none":
        return None
    return KnownNoise(var.nan_to_num(0.0) if rule == "add" else var, rule == "add")


def model_rows(
    known: KnownNoise | None,
    rows: list[TrialRecord],
    Y: Tensor,
    targets: dict[int, float],
    var: dict[int, float],
) -> KnownNoise | None:
    """``known`` for the model's ``rows`` (targets ``Y``): a row with its trial's
    own target has its variance; another (hallucinated, censored, issued in this
    call) has none added (``learn``) or the known variances' mean.

    Args:
        known: The completed trials' known noise, or ``None``.
        rows: The model's rows' trials, in the rows' order.
        Y: The rows' targets (one per row).
        targets: Each completed trial's own target, by trial index.
        var: Each completed trial's known variance, by trial index.

    Returns:
        One variance per row (``learn`` as ``known``'s), or ``None`` where
        ``known`` is ``None``.
    """
    if known is None:
        return None
    other = 0.0 if known.learn else float(known.var.mean())
    out = [
        var[e.index] if e.f is not None and targets.get(e.index) == y else other
        for e, y in zip(rows, Y.tolist(), strict=True)
    ]
    return KnownNoise(torch.tensor(out, dtype=torch.double), known.learn)


def censoring_spread(
    y_min: float, B_y: float | None, m: float, n: int
) -> tuple[float, float]:
    """The mean and spread of the standardized targets (the maximized objective's
    units) when the completed values have no spread (fewer than two, or all equal),
    where :func:`~botorch_bandits.models.standardize` takes a spread of 1 in the
    objective's units: the distance of their value ``m`` from ``y_min`` (else
    ``B_y``, else 1), and ``y_min`` as the mean when there are none (``n = 0``),
    so that ``y_min`` and ``B_y`` land on the model's scale alike for ``a y + b``
    (``a > 0``) with ``a y_min + b`` and ``a B_y``.

    Args:
        y_min: The censored value (as maximized).
        B_y: The censoring's scale, or ``None``.
        m: The completed values' common value (their mean).
        n: The number of completed values.

    Returns:
        ``(mean, spread)``: ``m`` (``y_min`` when ``n = 0``), and the first
        positive, finite one of ``|mean - y_min|`` and ``B_y``, else 1.
    """
    if n == 0:
        m = y_min
    for s in (abs(m - y_min), B_y or 0.0):
        if s > 0.0 and math.isfinite(s):
            return m, s
    return m, 1.0


def censoring_units(
    y_min: float, B_y: float | None, m: float, s: float
) -> tuple[float, float]:
    """``y_min`` and ``B_y`` (the maximized objective's units) on the grid of the
    standardized targets (mean ``m``, spread ``s``): ``(y_min - m) / s`` and
    ``B_y / s``, so that ``a y + b`` (``a > 0``) with ``a y_min + b`` and ``a B_y``
    censors alike; ``B_y=None``: :data:`PRACTICAL_B_Y`. An error naming them when
    ``s`` is so small that they overflow there.

    Args:
        y_min: The censored value (as maximized).
        B_y: The censoring's scale, or ``None``: :data:`PRACTICAL_B_Y`.
        m: The standardization's mean.
        s: The standardization's spread (``> 0``).

    Returns:
        ``(y_min, B_y)`` in the model's units, each rounded to
        :data:`~botorch_bandits.models.STANDARDIZED_QUANTUM`.

    Raises:
        ValueError: Either is not finite once standardized.
    """
    q = STANDARDIZED_QUANTUM
    a = (y_min - m) / s / q
    # the practical default: no inflation (chosen on the delay problems'
    # development half; PRACTICAL_B_Y)
    b = (PRACTICAL_B_Y if B_y is None else B_y / s) / q
    if not (math.isfinite(a) and math.isfinite(b)):
        raise ValueError(
            f"y_min={y_min!r} and B_y={B_y!r} are in the objective's units, and its "
            f"spread (standard deviation {s!r}) puts them beyond any float once "
            "standardized: give them on the objective's scale."
        )
    return round(a) * q, round(b) * q


def steps(opts: DecisionOptions) -> Steps:
    """The model's steps, in every decision: the fit by mode (the practical fit, or
    the theory mode's given kernel) and the GP on the pending view's data.

    Args:
        opts: The decision's options.

    Returns:
        The steps by their place in the pipeline.
    """
    fit = practical_fit_step if opts.theory is None else theory_fit_step
    return {"fit": fit, "model": model_step}
