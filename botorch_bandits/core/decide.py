"""The decision core, free of Ax: from a :class:`~botorch_bandits.core.History`, the
:class:`~botorch_bandits.core.DecisionOptions` and a
:class:`~botorch_bandits.core.Domain`, the next decision and its metadata -- restarts
and uniform exploration, the epoch's multipliers, the data view of running trials,
the GP, the acquisition and its maximizer. The Ax node and the tests call it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from botorch_bandits.acquisition.factory import Confidence, make_acquisition
from botorch_bandits.acquisition.practical import practical_confidence
from botorch_bandits.changepoint import (
    ChangePointDetector,
    ScaleFreeDetector,
    cpd_threshold,
    explore_uniformly,
    finite_domain,
    uniform_budget,
    within_budget,
)
from botorch_bandits.constraints import composite_targets, epoch_schedule
from botorch_bandits.core.domain import Domain
from botorch_bandits.core.fit import (
    KnownNoise,
    build_model,
    fit_practical,
    fit_subset,
    fit_theory,
    refit_due,
    reused_fit,
)
from botorch_bandits.core.history import History, TrialRecord
from botorch_bandits.core.optimize import near_in_flight, optimize
from botorch_bandits.core.options import (
    NOISE_FREE,
    THEORY_DEFAULTS,
    DecisionOptions,
    Restarts,
)
from botorch_bandits.core.views import (
    capped_multipliers,
    censored_view,
    constraint_scales,
    in_units,
    known_noise_rule,
    multipliers,
    penalty_of,
    restarts_state,
    target_sems,
)
from botorch_bandits.hyperparameters import Hyperparameters
from botorch_bandits.models import (
    STANDARDIZED_QUANTUM,
    FeatureCache,
    NystromGP,
    make_kernel,
    standardize,
)
from botorch_bandits.seeding import step_seed, uniform_choice


@dataclass
class Decision:
    """A decision: its unit-cube point ``x``, its row in the decision set
    (``index``; ``None`` for an optimizer's point, then ``payload`` is what
    ``Domain.accept`` returned), whether it explores uniformly, and its metadata."""

    x: list[float]
    index: int | None
    payload: Any
    uniform: bool
    metadata: dict[str, Any]

    @property
    def record(self) -> TrialRecord:
        """The decision as a trial issued in this call (for the next decision)."""
        return TrialRecord.issued(self.x, self.uniform)


@dataclass
class DecisionCache:
    """What decisions of one call may share: fits by their data, the detector. A
    cache only (pure functions of their keys), never state."""

    fits: dict[Any, dict[str, Any]] = field(default_factory=dict)
    detector: ChangePointDetector | ScaleFreeDetector | None = None
    # the sparse model's feature blocks (may be kept across calls: a pure cache)
    features: FeatureCache = field(default_factory=FeatureCache)


def make_detector(
    domain: Domain, opts: DecisionOptions, restarts: Restarts
) -> ChangePointDetector | ScaleFreeDetector:
    """GP-UCB-CPD's detector (Avanesov, Algorithm 1) on the domain's integration set.
    ``"scale-free"``: :class:`ScaleFreeDetector`, its kernel chosen at each scan from
    the uniform points alone (so a replay finds the same). ``"paper"``: a kernel
    fixed for the run (every call replays the detections): the theory kernel, or in
    the practical mode the theory mode's default (Matern-5/2, lengthscale 0.2 of the
    unit cube) -- the practical GP's fitted kernel would move past detections."""
    points, volume = domain.detector()
    if restarts.detector == "scale-free":
        dom = finite_domain(points, volume=volume)
        return ScaleFreeDetector(
            dom.points,
            dom.weights,
            false_alarm=restarts.false_alarm,
            regularization=restarts.regularization,
            threshold_scale=restarts.threshold_scale,
            alpha=restarts.alpha,
            d=domain.dim,
        )
    t = opts.theory
    kernel = (
        make_kernel(t.kernel, t.lengthscale)
        if t is not None
        else make_kernel(THEORY_DEFAULTS["kernel"], THEORY_DEFAULTS["lengthscale"])
    )
    d = domain.dim
    C, alpha = restarts.threshold_scale, restarts.alpha
    return ChangePointDetector(
        kernel,
        finite_domain(points, volume=volume),
        c=restarts.regularization,
        threshold=lambda n: cpd_threshold(n, C, alpha, d),
        alpha=alpha,
        d=d,
    )


def decide(
    history: History,
    opts: DecisionOptions,
    domain: Domain,
    cache: DecisionCache | None = None,
) -> Decision:
    """The next decision on ``history`` (its trials in order, this call's earlier
    candidates last)."""
    cache = cache or DecisionCache()
    unit: Tensor = domain.unit
    d = domain.dim
    active = list(history.trials)
    position = len(active)  # this trial's position among the live trials
    meta: dict[str, Any] = {
        "algorithm": opts.algorithm,
        "pending_view": opts.pending,
        "t": position + 1,
        "failed": len(history.failed),
        "decision_set_size": int(unit.shape[0]),
    }
    if history.fixed:
        meta["fixed_features"] = dict(history.fixed)
    if history.out_of_design:  # left out of the model, as Ax's models leave them
        meta["out_of_design"] = len(history.out_of_design)
    # --- GP-UCB-CPD: restarts and the uniform-exploration rule
    start, uniform = 0, False
    if opts.restarts is not None:
        if cache.detector is None:
            cache.detector = make_detector(domain, opts, opts.restarts)
        if hasattr(cache.detector, "last_"):
            cache.detector.last_ = None  # this replay's last scan, or none
        start, num_uniform, restarts, fired = restarts_state(
            active, cache.detector, opts.restarts.xi
        )
        xi = opts.restarts.xi
        uniform = explore_uniformly(num_uniform, position - start, xi)
        share = opts.restarts.max_uniform_share
        if share < 1.0:  # the cap on uniform steps among all trials so far
            so_far = sum(e.uniform for e in active)
            bound = uniform_budget(position, xi, share)
            capped = uniform and not within_budget(so_far, position, xi, share)
            uniform = uniform and not capped
            meta.update(
                cpd_uniform_capped=capped,
                cpd_uniform_bound=bound,
                cpd_uniform_share=(so_far + uniform) / (position + 1),
            )
        meta.update(
            cpd_uniform=uniform,
            cpd_restarts=restarts,
            cpd_detections=fired,
            cpd_history=position - start,
            cpd_uniform_count=num_uniform,
        )
        last = getattr(cache.detector, "last_", None)
        if last is not None:
            meta["cpd_last_scan"] = dict(last)
    # --- long-term constraints: this epoch's multipliers
    kappa = g_scale = None
    if opts.constraints is not None:
        if opts.theory is None:  # the practical mode: unit-free constraints
            g_scale = constraint_scales(active, history.num_constraints)
            meta["constraint_scale"] = g_scale.tolist()
        kappa, epoch, used = multipliers(
            active, opts.constraints, history.num_constraints, g_scale
        )
        meta.update(epoch=epoch, kappa=kappa.tolist(), epochs_used=used)
        capped = capped_multipliers(kappa, opts.constraints)
        if capped:
            meta["kappa_capped"] = capped
    # under "ignore": the arms in flight (running trials and this call's earlier
    # candidates), excluded while another candidate remains
    busy: list[int] = []
    if opts.pending == "ignore":
        busy = sorted(
            {domain.index.get(tuple(e.x)) for e in active if e.f is None} - {None}
        )
        if len(busy) >= unit.shape[0]:
            busy = []
        meta["excluded_in_flight"] = len(busy)
    if uniform:
        free = sorted(set(range(unit.shape[0])) - set(busy))
        best = free[uniform_choice(opts.seed, position, len(free))]
        meta["sigma_multiplier"] = None
        return _on_set(domain, best, True, meta)
    # --- the data the model sees (since the last restart; with a model window,
    # the most recent trials only)
    restart = start  # the position of the last restart (0: none)
    if opts.model_window is not None:
        start = max(start, position - opts.model_window)
        meta["model_window_start"] = start
    H = active[start:]
    done = [e for e in H if e.f is not None]
    X0 = torch.tensor([list(e.x) for e in done], dtype=torch.double).reshape(-1, d)
    Y0 = torch.tensor([e.f for e in done], dtype=torch.double)
    # the practical mode forms the composite target in unit-free terms: the
    # objective standardized (m_f, s_f), the constraints in their scales
    m_f, s_f = 0.0, 1.0
    if kappa is not None and done:
        if g_scale is not None:
            try:
                Y0, m_f, s_f = standardize(Y0)
            except ValueError:
                not_finite(None, done, history.metric)
        rule = opts.constraints.multiplier_update
        G0 = torch.tensor([list(e.g) for e in done], dtype=torch.double)
        Y0 = composite_targets(
            Y0, in_units(G0, g_scale), kappa, rule, penalty_of(opts.constraints)
        )
        if not bool(torch.isfinite(Y0).all()):
            overflowing_composite(G0, done, opts)
    # reported standard errors: the targets' known noise variances (sems=...)
    se = target_sems(done, kappa, opts.constraints, s_f, g_scale)
    rule = known_noise_rule(se, opts.sems, [e.index for e in done])
    reported = int((~torch.isnan(se)).sum())
    var = se.square()  # the theory mode's (raw targets); standardized below
    if reported:
        meta["sems"] = {
            "rule": "ignore" if opts.sems == "ignore" else rule,
            "reported": reported,
            "observations": len(done),
        }
    cens = opts.censoring
    y_min, B_y, R = cens.y_min, cens.B_y, opts.R
    sparse = {
        "sparse_after": opts.sparse_after,
        "seed": opts.seed,
        "sparse_size": opts.sparse_size,
        "cache": cache.features,
        # the dictionary's rows by the completed trials (the same for the model of
        # the hallucinated ones and the decision's)
        "completed": len(done),
    }
    hyper: Hyperparameters | None = None
    if opts.theory is None:
        # standardized targets (the decision is the same for a*y + b, a > 0);
        # y_min and B_y are in the objective's units: mapped the same way
        try:
            Y0, m, s = standardize(Y0)
        except ValueError:
            not_finite(None, done, history.metric)
        # the objective's units to the model's: one affine map (the composite
        # target's standardization after the objective's own, if any)
        m_all, s_all = m_f + s_f * m, s_f * s
        if opts.pending == "censor":
            y_min, B_y = censoring_units(cens.y_min, cens.B_y, m_all, s_all)
        meta["standardize"] = {"mean": m_all, "std": s_all}
        var = (se / s).square()  # scaled first: no square over- or underflows
        known = known_noise(var, rule)
        counts = {
            "n": len(done),
            "completed": sum(e.f is not None for e in active),
            # the first trial since the last restart, by its index (0: none)
            "start": active[restart].index if 0 < restart < position else 0,
        }
        if kappa is not None:  # the targets change with the epoch's multipliers
            counts["epoch"] = meta["epoch"]
        if rule != "none":  # the noise a fit records is read by its rule
            counts["sems"] = rule
        if opts.refit is None or refit_due(history.last_fit, counts, opts.refit):
            rows = fit_subset(len(done), opts.sparse_after, opts.seed)
            Xf, Yf, kf = (X0, Y0, known)
            if rows is not None:
                Xf, Yf = X0[rows], Y0[rows]
                kf = None if known is None else KnownNoise(known.var[rows], known.learn)
            fit = {**fit_practical(Xf, Yf, history.warm, opts.seed, cache.fits, kf)}
            fit.update(counts)
            if rows is not None:  # fitted on a subset (the sparse model's size)
                fit["subset"] = len(rows)
        else:
            fit = reused_fit(history.last_fit)
        meta["fit"] = fit
        hyper = Hyperparameters.from_dict(fit)
        if R is None:  # the fitted noise's standard deviation (standardized)
            R = practical_confidence(noise_ratio(opts, hyper, known)).R
        meta["R"] = R
    else:
        known = known_noise(var, rule)
    if opts.theory is not None and opts.theory.hyperparameters == "fitted":
        hyper = fit_theory(X0, Y0, opts.theory.kernel, known)
        if hyper is not None:
            meta["fitted"] = {
                "lengthscale": list(hyper.lengthscale),
                "outputscale": hyper.outputscale,
                "noise": hyper.noise,
            }
    delta = opts.delta
    if kappa is not None:
        L = opts.constraints.num_epochs or meta["epoch"] + 1
        delta, R = epoch_schedule(
            opts.constraints.multiplier_update, opts.delta, L, R, kappa
        )
        meta["delta_epoch"] = delta
    # (near) noise-free: no point evaluated since the last restart (H; before it
    # the objective was another) and none running, again (repeats="avoid"); nor a
    # point within APART lengthscales of one running (``apart``)
    evaluated: list[list[float]] = []
    apart: tuple[Tensor, Tensor] | None = None
    if opts.repeats == "avoid" and noise_ratio(opts, hyper, known) <= NOISE_FREE:
        evaluated = not_again(active, start)
        meta["avoided"] = len(evaluated)
        apart = in_flight(active, opts, hyper, d)
    targets = {e.index: float(y) for e, y in zip(done, Y0.tolist(), strict=True)}
    var_of = {}  # each completed trial's known variance, as the model has it
    if known is not None:
        var_of = {e.index: v for e, v in zip(done, known.var.tolist(), strict=True)}
    recent = None
    if opts.pending == "censor":
        X, Y, recent, n_cens, n_late = censored_view(H, targets, y_min, cens, d)
        meta.update(censored=n_cens, late=n_late)
        order = [e for e in H if e.index >= 0] + [e for e in H if e.index < 0]
        rows_known = model_rows(known, order, Y, targets, var_of)
    else:
        X, Y, rows_known = X0, Y0, known
        waiting = [list(e.x) for e in H if e.f is None]
        if opts.pending == "hallucinate" and waiting:
            Xw = torch.tensor(waiting, dtype=torch.double)
            with torch.no_grad():
                mu = (
                    build_model(X0, Y0, opts.theory, hyper, **sparse, known=known)
                    .posterior(Xw.unsqueeze(-2))
                    .mean.reshape(-1)
                )
            X, Y = torch.cat([X0, Xw]), torch.cat([Y0, mu])
            order = done + [e for e in H if e.f is None]
            rows_known = model_rows(known, order, Y, targets, var_of)
        meta["pending"] = len(waiting)
    model = build_model(X, Y, opts.theory, hyper, **sparse, known=rows_known)
    t = X.shape[0] + 1
    # GP-TS: an exact joint draw on the decision set, or a pathwise draw (a
    # function of x) for the gradient optimizer -- not on the sparse model, whose
    # draw is on the decision set
    gradient = opts.optimizer == "gradient"
    if isinstance(model, NystromGP):
        meta["sparse"] = {
            "dictionary": int(model.dictionary.numel()),
            "n": t - 1,
            "drawn_on": model.drawn_on,  # the first rows the dictionary is from
            # the regularization the leverage scores were taken at (above the
            # fitted noise where the cap on the dictionary's size bound)
            "leverage_regularization": model.leverage_regularization,
        }
        if opts.algorithm == "GP-TS":
            gradient = False
            meta["sparse"]["gp_ts"] = "decision set"
    acqf = make_acquisition(
        model,
        opts.algorithm,
        Confidence(beta=opts.beta, B=opts.B, R=R, delta=delta, num_arms=unit.shape[0]),
        t=t,
        seed=step_seed(opts.seed, position),
        candidates=None if gradient else unit,
        sampler="pathwise" if gradient else None,
        recent=recent,
        B_y=B_y,
    )
    with torch.no_grad():
        scores = acqf(unit.unsqueeze(-2))
    if not bool(torch.isfinite(scores).all()):
        not_finite(scores, done, history.metric)
    if evaluated:  # their rows of the decision set, unless every row is one
        rows = {domain.index.get(tuple(x)) for x in evaluated} - {None}
        if apart is not None:  # and the rows close to a point in flight, if any remain
            close = set(near_in_flight(unit, *apart).nonzero().reshape(-1).tolist())
            if len(rows | close | set(busy)) < unit.shape[0]:
                rows |= close
                meta["kept_apart"] = int(apart[0].shape[0])
            else:
                apart = None
        if len(rows | set(busy)) < unit.shape[0]:
            busy = sorted(rows | set(busy))
        else:
            meta["avoided"] = 0
            meta["repeat_reason"] = "every point of the decision set was evaluated"
            evaluated = []
            apart = None
    if busy:
        scores = scores.clone()
        scores[busy] = -math.inf
    mult = getattr(acqf, "sigma_multiplier", opts.beta)
    meta["sigma_multiplier"] = float(torch.as_tensor(mult).reshape(-1)[0])
    meta["round"] = t
    if gradient:
        flight = [list(e.x) for e in active if e.f is None]
        avoid = flight if opts.pending == "ignore" else []
        avoid = evaluated or avoid  # the evaluated points include those in flight
        row, payload, coords = optimize(
            acqf, scores, domain, avoid, meta, step_seed(opts.seed, position), apart
        )
        if row is None:
            return Decision(coords, None, payload, False, meta)
        return _on_set(domain, row, False, meta)
    return _on_set(domain, int(scores.argmax()), False, meta)


def not_again(active: list[TrialRecord], start: int) -> list[list[float]]:
    """The points ``repeats="avoid"`` keeps out of a decision: every trial since the
    last restart (``active[start:]``: before it the objective was another, and
    evaluating a point again is how a drift is seen) and every trial in flight,
    whenever it was issued."""
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
    confidence bound kept its maximum next to it, and a batch piled up there."""
    flight = [list(e.x) for e in active if e.f is None]
    if not flight:
        return None
    # the practical mode gets here fitted only (unfitted, its noise is not known)
    ls = hyper.lengthscale if hyper is not None else [opts.theory.lengthscale]
    return (
        torch.tensor(flight, dtype=torch.double).reshape(-1, d),
        torch.tensor(list(ls), dtype=torch.double),
    )


def noise_ratio(
    opts: DecisionOptions, hyper: Hyperparameters | None, known: KnownNoise | None
) -> float:
    """The model's noise variance over its prior variance: the practical GP's fitted
    noise (its prior variance is 1), the theory kernel's noise (unit variance), or
    the fitted theory kernel's noise over its output scale; with known noise
    variances, their mean with the model's noise (:meth:`KnownNoise.level`)."""
    if opts.theory is None:
        if hyper is None:
            return math.inf
        return hyper.noise if known is None else known.level(hyper.noise)
    base = opts.theory.noise if hyper is None else hyper.noise
    level = base if known is None else known.level(base)
    return level if hyper is None else level / hyper.outputscale


def known_noise(var: Tensor, rule: str) -> KnownNoise | None:
    """The model's :class:`KnownNoise` for targets with known variances ``var``
    under the resolved ``rule`` (:func:`~botorch_bandits.core.views.known_noise_rule`)."""
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
    call) has none added (``learn``) or the known variances' mean."""
    if known is None:
        return None
    other = 0.0 if known.learn else float(known.var.mean())
    out = [
        var[e.index] if e.f is not None and targets.get(e.index) == y else other
        for e, y in zip(rows, Y.tolist(), strict=True)
    ]
    return KnownNoise(torch.tensor(out, dtype=torch.double), known.learn)


def censoring_units(
    y_min: float, B_y: float, m: float, s: float
) -> tuple[float, float]:
    """``y_min`` and ``B_y`` (the objective's units) on the standardized targets'
    grid; an error naming them when the objective's spread ``s`` is so small that
    they overflow there."""
    q = STANDARDIZED_QUANTUM
    a, b = (y_min - m) / s / q, (B_y + abs(m)) / s / q
    if not (math.isfinite(a) and math.isfinite(b)):
        raise ValueError(
            f"y_min={y_min!r} and B_y={B_y!r} are in the objective's units, and its "
            f"spread (standard deviation {s!r}) puts them beyond any float once "
            "standardized: give them on the objective's scale."
        )
    return round(a) * q, round(b) * q


def overflowing_composite(
    G: Tensor, done: list[TrialRecord], opts: DecisionOptions
) -> None:
    """The composite target of long-term constraints overflowed (the theory mode
    reads each constraint in its own units, and exp(c g) overflows past g of about
    709 / c): an error naming the largest constraint value and what to do."""
    row, col = divmod(int(G.argmax()), G.shape[1])
    raise ValueError(
        f"The composite target f - kappa (psi(g) - 1) of the long-term constraints "
        f"is not finite: constraint {col}'s g - b = {float(G[row, col])!r} (trial "
        f"{done[row].index}) makes psi(g) = exp(penalty_c * g) overflow, with "
        f"penalty_c={opts.constraints.penalty_c!r}. The theory mode reads "
        "constraints in their own units, as Shi & Eryilmaz do: rescale the "
        "constraint (divide it by its typical size), lower penalty_c, or use the "
        "practical mode, which measures each constraint in its observed spread."
    )


def _on_set(domain: Domain, row: int, uniform: bool, meta: dict) -> Decision:
    return Decision(domain.unit[row].tolist(), row, None, uniform, meta)


def not_finite(scores: Tensor | None, done: list[TrialRecord], metric: str) -> None:
    """Acquisition values that are not finite (``scores``), or targets too large to
    standardize (``None``): an error naming the largest target (values so large that
    the GP overflows), never a silent argmax."""
    if scores is None:
        worst = max(done, key=lambda e: abs(e.f))
        raise ValueError(
            f"BanditNode cannot standardize the objective: the largest value is "
            f"trial {worst.index}'s {metric!r} = {worst.f!r} (as maximized), and its "
            "mean or spread overflows. Rescale the objective (or constraints) or "
            "mark the trial abandoned."
        )
    bad = int((~torch.isfinite(scores)).sum())
    worst = max(done, key=lambda e: abs(e.f), default=None)
    culprit = (
        f" The largest value is trial {worst.index}'s {metric!r} = "
        f"{worst.f!r} (as maximized)."
        if worst is not None
        else ""
    )
    raise ValueError(
        f"BanditNode's acquisition is not finite at {bad} of {scores.numel()} "
        f"candidates.{culprit} Values this large overflow the GP: rescale the "
        "objective (or constraints) or mark the trial abandoned."
    )
