"""GP-UCB-CPD's steps (Avanesov): the detector, the restarts and uniform count
replayed from the trials (:func:`restart_step`), and the uniform-exploration
decision that ends a round early (:func:`uniform_step`); the practical mode's
residual detector, which makes no uniform step (:func:`residual_step`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from botorch_bandits.changepoint import (
    GPUCBCPD,
    ChangePointDetector,
    cpd_threshold,
    explore_uniformly,
    finite_domain,
    uniform_budget,
    within_budget,
)
from botorch_bandits.core.domain import Domain
from botorch_bandits.core.history import TrialRecord
from botorch_bandits.core.options import THEORY_DEFAULTS, DecisionOptions, Restarts
from botorch_bandits.core.round import Decision, Round, Steps
from botorch_bandits.models import (
    fit_practical_gp,
    make_kernel,
    practical_gp,
    standardize,
)
from botorch_bandits.residuals import (
    MIN_REFERENCE,
    MIN_RUN,
    ResidualTest,
    prequential_residuals,
    robust_residual_change,
)
from botorch_bandits.scale_free import ScaleFreeDetector
from botorch_bandits.seeding import step_seed, uniform_choice

__all__ = [
    "drift_state",
    "make_detector",
    "residual_step",
    "restart_step",
    "restarts_state",
    "steps",
    "uniform_step",
]


def make_detector(
    domain: Domain, opts: DecisionOptions, restarts: Restarts
) -> ChangePointDetector | ScaleFreeDetector:
    """GP-UCB-CPD's detector (Avanesov, Algorithm 1) on the domain's integration set.
    ``"scale-free"``: :class:`ScaleFreeDetector`, its kernel chosen at each scan from
    the uniform points alone (so a replay finds the same). ``"paper"``: a kernel
    fixed for the run (every call replays the detections): the theory kernel, or in
    the practical mode the theory mode's default (Matern-5/2, lengthscale 0.2 of the
    unit cube) -- the practical GP's fitted kernel would move past detections.

    Args:
        domain: The search space (its detector's integration points and volume).
        opts: The decision's options (the theory kernel, in the theory mode).
        restarts: The restarts' options (``cpd_detector``, ``false_alarm``,
            ``regularization``, ``threshold_scale``, ``alpha``).

    Returns:
        The detector: a :class:`ScaleFreeDetector` for ``"scale-free"``, else a
        :class:`ChangePointDetector`.
    """
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


def restarts_state(
    active: Sequence[TrialRecord], detector: ChangePointDetector, xi: float
) -> tuple[int, int, list[int], list[int]]:
    """GP-UCB-CPD's state replayed over the trials (:meth:`GPUCBCPD.replay`, each
    trial's uniform decision as issued, running trials in ``H`` without a value):
    (position where the history H starts, :math:`|U|`, trial indices that
    restarted, the n that fired).

    Args:
        active: The live trials, in order.
        detector: GP-UCB-CPD's detector (:func:`make_detector`).
        xi: The uniform-exploration rate :math:`\\xi`.

    Returns:
        ``(start, num_uniform, restarts, detections)``: the position in ``active``
        after the last restart (0 without one), :math:`|U|` (the uniform steps
        since it), the indices of the trials at which it restarted, and the n at
        which the detector fired.
    """
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


def restart_step(r: Round) -> None:
    """The trials since the last restart (``r.start``), and whether this decision
    explores uniformly (``r.uniform``: Algorithm 2's rule, under the cap on the
    share of uniform steps); ``cpd_*`` in the metadata.

    Args:
        r: The round; reads ``opts``, ``cache`` (the detector, built there on first
            use from ``domain``), ``active`` and ``position``, writes ``start``,
            ``restart``, ``uniform`` and the metadata's ``cpd_uniform``,
            ``cpd_restarts``, ``cpd_detections``, ``cpd_history``,
            ``cpd_uniform_count``, ``cpd_last_scan`` (where the detector records
            its last scan) and, under a cap (``max_uniform_share < 1``),
            ``cpd_uniform_capped``, ``cpd_uniform_bound`` and
            ``cpd_uniform_share``.
    """
    opts, cache, meta = r.opts, r.cache, r.meta
    if cache.detector is None:
        cache.detector = make_detector(r.domain, opts, opts.restarts)
    if hasattr(cache.detector, "last_"):
        cache.detector.last_ = None  # this replay's last scan, or none
    xi = opts.restarts.xi
    start, num_uniform, restarts, fired = restarts_state(r.active, cache.detector, xi)
    uniform = explore_uniformly(num_uniform, r.position - start, xi)
    share = opts.restarts.max_uniform_share
    if share < 1.0:  # the cap on uniform steps among all trials so far
        so_far = sum(e.uniform for e in r.active)
        bound = uniform_budget(r.position, xi, share)
        capped = uniform and not within_budget(so_far, r.position, xi, share)
        uniform = uniform and not capped
        meta.update(
            cpd_uniform_capped=capped,
            cpd_uniform_bound=bound,
            cpd_uniform_share=(so_far + uniform) / (r.position + 1),
        )
    meta.update(
        cpd_uniform=uniform,
        cpd_restarts=restarts,
        cpd_detections=fired,
        cpd_history=r.position - start,
        cpd_uniform_count=num_uniform,
    )
    last = getattr(cache.detector, "last_", None)
    if last is not None:
        meta["cpd_last_scan"] = dict(last)
    r.start = r.restart = start
    r.uniform = uniform


def uniform_step(r: Round) -> Decision | None:
    """A uniform-exploration step ends the round: a seeded uniform draw from the
    decision set (its rows in flight left out under ``pending="ignore"``).

    Args:
        r: The round; reads ``uniform``, ``domain``, ``busy``, ``opts`` (the seed)
            and ``position``, writes the metadata's ``sigma_multiplier``
            (``None``) when it decides.

    Returns:
        The uniform draw's :class:`Decision` (``uniform=True``), or ``None`` when
        this decision does not explore uniformly (the round goes on).
    """
    if not r.uniform:
        return None
    free = sorted(set(range(r.domain.unit.shape[0])) - set(r.busy))
    best = free[uniform_choice(r.opts.seed, r.position, len(free))]
    r.meta["sigma_multiplier"] = None
    return r.on_set(best, uniform=True)


def residual_step(r: Round) -> None:
    """The residual detector (``cpd_detector="residual"``, the practical default):
    the trials since the start the latest decision recorded (``cpd_start``, a
    trial index; the history's ``drift``); on the completed ones, the one-step-ahead
    residuals of the GP with the latest recorded fit
    (:func:`~botorch_bandits.residuals.prequential_residuals`) and the test of
    :func:`~botorch_bandits.residuals.robust_residual_change`: when the trial of
    the most extreme observation is one value far from the rest, a change must still
    show with it left out (and the GP fitted again without it), and is dated without
    it, so one wrong value never restarts the model by itself nor begins the
    kept data; it is named in ``cpd_test`` as ``outlier`` (a trial index) at each
    decision that set it aside, and stays in the model unless a restart past it
    drops it (as without restarts). When it fires, the model restarts from the run
    that fired (the estimated change point: those trials are kept). No uniform
    step. ``cpd_start``, ``cpd_restarts`` (the trial indices each restart began
    with), ``cpd_detections`` (the decisions that fired, by round ``t``),
    ``cpd_test`` in the metadata. The state is recorded, not replayed: the next
    decision continues from it (a reload reads it back).

    Args:
        r: The round; reads ``active``, ``position``, ``history`` (``drift``, the
            warm start), ``opts`` and ``domain``, writes ``start`` and ``restart``
            and the metadata's ``cpd_uniform`` (``False``), ``cpd_start``,
            ``cpd_restarts``, ``cpd_detections``, ``cpd_history`` and ``cpd_test``
            (where the test ran).
    """
    active, meta = r.active, r.meta
    state = r.history.drift or {}
    restarts = list(state.get("restarts", []))
    detections = list(state.get("detections", []))
    start = _position_of(active, state.get("start", 0))
    test, tested = _residual_test(r, start)
    if test is not None and test.fired:
        done = [i for i in range(start, r.position) if active[i].f is not None]
        start = done[len(done) - test.run]
        restarts.append(active[start].index)
        detections.append(r.position + 1)
    if start < r.position and active[start].index >= 0:
        first = active[start].index
    else:  # no trial since the start yet: the next one's index
        first = max((e.index for e in active), default=-1) + 1
    meta.update(
        cpd_uniform=False,
        cpd_start=first,
        cpd_restarts=restarts,
        cpd_detections=detections,
        cpd_history=r.position - start,
    )
    if test is not None:
        meta["cpd_test"] = {
            "p_value": test.p_value,
            "run": test.run,
            "reference": test.reference,
            "fired": test.fired,
        }
        if test.outlier is not None:  # one value far from the rest, set aside
            meta["cpd_test"]["outlier"] = tested[test.outlier].index
    r.start = r.restart = start


def drift_state(meta: dict[str, Any]) -> dict[str, Any] | None:
    """The residual detector's state as a decision recorded it in its metadata
    (:func:`residual_step`'s ``cpd_start``, ``cpd_restarts``, ``cpd_detections``),
    as :attr:`~botorch_bandits.core.History.drift` holds it; ``None`` when the
    decision recorded none.

    Args:
        meta: A decision's metadata.

    Returns:
        ``{"start": ..., "restarts": [...], "detections": [...]}`` (trial indices,
        and the rounds that fired), or ``None`` without an integer ``cpd_start``.

    Example:
        >>> drift_state({"cpd_start": 4, "cpd_restarts": [4], "cpd_detections": [9]})
        {'start': 4, 'restarts': [4], 'detections': [9]}
    """
    start = meta.get("cpd_start")
    if not isinstance(start, int) or isinstance(start, bool):
        return None
    return {
        "start": start,
        "restarts": [int(i) for i in meta.get("cpd_restarts") or []],
        "detections": [int(i) for i in meta.get("cpd_detections") or []],
    }


def _position_of(active: Sequence[TrialRecord], index: int) -> int:
    """The position in ``active`` of the first trial with index ``index`` or
    later (this call's candidates, index -1, come after every trial)."""
    for i, e in enumerate(active):
        if e.index < 0 or e.index >= index:
            return i
    return len(active)


def _residual_test(
    r: Round, start: int
) -> tuple[ResidualTest | None, list[TrialRecord]]:
    """The residual detector's test on the completed trials since ``start`` (also
    returned, in the residuals' order), with the latest recorded fit's
    hyperparameters (``None``: too few trials, or no fit for these inputs yet).
    The repeat of :func:`~botorch_bandits.residuals.robust_residual_change`
    without one trial standardizes the others alone and fits the GP to them
    afresh (from BoTorch's initial values, seeded; the recorded fit if that
    fails): the recorded fit saw the trial, and one wrong value bends it -- a
    long lengthscale and a large noise that make the trials after it look
    changed against those before it. Past ``sparse_after`` completed trials since
    the start the test reads the last ``sparse_after`` of them (as the exact GP
    is bounded there: the residuals of all of them cost a factorization of their
    number cubed at every decision, 20 s at 10,000 trials)."""
    done = [e for e in r.active[start:] if e.f is not None]
    cap = r.opts.sparse_after
    if cap is not None and len(done) > cap:
        done = done[-cap:]
    warm = r.history.warm
    if len(done) < MIN_REFERENCE + MIN_RUN or warm is None:
        return None, done
    X = r.inputs(done)
    y = torch.tensor([e.f for e in done], dtype=torch.double)
    try:
        z, _, _ = standardize(y)
    except ValueError:
        return None, done  # not finite: the fit step names the trial
    with torch.no_grad():
        model = practical_gp(X, z, warm)
        K = model.covar_module(X).to_dense()
    res = prequential_residuals(K, z, warm.noise, warm.mean)

    def without(i: int) -> torch.Tensor:
        keep = [j for j in range(len(done)) if j != i]
        zi, _, _ = standardize(y[keep])
        fitted, _ = fit_practical_gp(
            X[keep], zi, None, step_seed(r.opts.seed, len(keep))
        )
        hyper = warm if fitted is None else fitted
        with torch.no_grad():
            Ki = practical_gp(X[keep], zi, hyper).covar_module(X[keep]).to_dense()
        return prequential_residuals(Ki, zi, hyper.noise, hyper.mean)

    test = robust_residual_change(res, r.opts.restarts.false_alarm, z, without)
    return test, done


def steps(opts: DecisionOptions) -> Steps:
    """The restarts' steps under ``opts`` (none without ``restarts``): Avanesov's
    detector and its uniform draws, or the residual detector.

    Args:
        opts: The decision's options.

    Returns:
        The steps by their place in the pipeline
        (:data:`~botorch_bandits.core.decide.PLACES`).
    """
    if opts.restarts is None:
        return {}
    if opts.restarts.uniform:
        return {"detect": restart_step, "uniform": uniform_step}
    return {"detect": residual_step}
