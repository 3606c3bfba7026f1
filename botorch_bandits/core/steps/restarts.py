"""GP-UCB-CPD's steps (Avanesov): the detector, the restarts and uniform count
replayed from the trials (:func:`restart_step`), and the uniform-exploration
decision that ends a round early (:func:`uniform_step`)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from botorch_bandits.changepoint import (
    GPUCBCPD,
    ChangePointDetector,
    ScaleFreeDetector,
    cpd_threshold,
    explore_uniformly,
    finite_domain,
    uniform_budget,
    within_budget,
)
from botorch_bandits.core.domain import Domain
from botorch_bandits.core.history import TrialRecord
from botorch_bandits.core.options import THEORY_DEFAULTS, DecisionOptions, Restarts
from botorch_bandits.core.round import Decision, Round
from botorch_bandits.models import make_kernel
from botorch_bandits.seeding import uniform_choice

__all__ = ["make_detector", "restart_step", "restarts_state", "uniform_step"]


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


def restart_step(r: Round) -> None:
    """The trials since the last restart (``r.start``), and whether this decision
    explores uniformly (``r.uniform``: Algorithm 2's rule, under the cap on the
    share of uniform steps); ``cpd_*`` in the metadata."""
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
    decision set (its rows in flight left out under ``pending="ignore"``)."""
    if not r.uniform:
        return None
    free = sorted(set(range(r.domain.unit.shape[0])) - set(r.busy))
    best = free[uniform_choice(r.opts.seed, r.position, len(free))]
    r.meta["sigma_multiplier"] = None
    return r.on_set(best, uniform=True)
