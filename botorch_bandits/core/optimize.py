"""The gradient optimizer of a decision, as thorough as Ax's default: raw samples
(the decision set and, where the domain can draw them, fresh points of the space),
starts chosen among them by BoTorch's Boltzmann heuristic (``initialize_q_batch``,
as ``gen_batch_initial_conditions`` does for Ax), then BoTorch's ``optimize_acqf``
(L-BFGS-B, or SLSQP under linear constraints) with discrete and fixed coordinates
held at their starting values (with no free coordinate, the best raw sample is the
answer); the result must map back to a valid candidate away from the avoided points
(and :data:`APART` from those in flight: SLSQP again, one constraint per point in
flight near it, :data:`APART_NEAREST`), else the best point of the decision set."""

from __future__ import annotations

import math
import warnings
from typing import Any

import torch
from botorch.optim import optimize_acqf
from botorch.optim.initializers import initialize_q_batch
from torch import Tensor

from botorch_bandits.core.domain import Domain
from botorch_bandits.core.options import NOISE_FREE
from botorch_bandits.seeding import RAW_SAMPLES, STARTS, derived_seed

#: fresh raw samples per decision and starting points of the gradient optimizer
#: (Ax's defaults: ``ax.generators.torch.botorch_modular.optimizer_defaults``)
NUM_RAW_SAMPLES = 1024
NUM_STARTS = 20
#: L-BFGS-B iterations per start
MAX_ITER = 200
#: starts of the constrained pass that keeps :data:`APART` from the points in flight
#: (SLSQP takes them one at a time: the best raw samples that keep it)
APART_STARTS = 4
#: a point within this distance (max norm, unit cube) of an avoided one is that point
SAME_POINT = 1e-6
#: under ``repeats="avoid"`` (a noise-free fit) a candidate closer than this to a
#: point in flight, in the GP's lengthscales (Euclidean in ``x / lengthscale``), is
#: that point again: the prior standard deviation of ``f(x) - f(x')`` is about their
#: distance in lengthscales (RBF: ``sqrt(2 - 2 exp(-r^2 / 2))``), so closer than
#: ``sqrt(NOISE_FREE)`` = 0.1 the two values differ by less than the noise a
#: noise-free fit allows. A hallucinated point leaves the posterior mean as it was,
#: so without this a batch piled up at the mean's maximum (9 of 10 points within
#: 0.01 lengthscales of each other)
APART = math.sqrt(NOISE_FREE)
#: the constrained pass keeps this distance (a thousandth more, past SLSQP's
#: tolerance), and its starts too
APART_MARGIN = 1.001 * APART
#: the constrained pass's constraints from one start: one per point in flight (the
#: distance to it, smooth) for this many points nearest the start; where SLSQP's
#: answer is within APART of a point not among them, this many nearest the answer
#: (and that point) are added and SLSQP runs again (:data:`APART_ROUNDS` rounds at
#: most). A single constraint on the distance to the nearest point in flight (a
#: minimum over all of them, not smooth where the nearest one changes) took SLSQP
#: hundreds of evaluations per start, up to its iteration limit, once a dozen points
#: were in flight around the maximum (a 150-trial batch in 2-D ran for over ten
#: minutes); one constraint per point in flight, all of them, would make each
#: evaluation cost in proportion to the batch. With this many, a decision's work
#: does not grow with the points in flight
APART_NEAREST = 8
#: rounds of the constrained pass from one start (see :data:`APART_NEAREST`)
APART_ROUNDS = 3


def near(points: Tensor, avoid: Tensor) -> Tensor:
    """Which rows of ``points`` lie within :data:`SAME_POINT` of a row of ``avoid``.

    Args:
        points: ``n x d`` unit-cube points.
        avoid: ``m x d`` points to avoid.

    Returns:
        ``n`` bools.
    """
    if avoid.shape[0] == 0 or points.shape[0] == 0:
        return torch.zeros(points.shape[0], dtype=torch.bool)
    return (torch.cdist(points, avoid, p=math.inf) < SAME_POINT).any(-1)


def near_in_flight(
    points: Tensor, flight: Tensor, lengthscale: Tensor, radius: float = APART
) -> Tensor:
    """Which rows of ``points`` lie within ``radius`` (default :data:`APART`) of a
    row of ``flight`` (the points in flight), in units of the GP's ``lengthscale``
    (one, or one per coordinate).

    Args:
        points: ``n x d`` unit-cube points.
        flight: ``m x d`` points in flight.
        lengthscale: One lengthscale, or ``d``.
        radius: The distance, in lengthscales (default :data:`APART`).

    Returns:
        ``n`` bools.
    """
    if flight.shape[0] == 0 or points.shape[0] == 0:
        return torch.zeros(points.shape[0], dtype=torch.bool)
    ls = lengthscale.to(points).reshape(-1)
    return (torch.cdist(points / ls, flight.to(points) / ls) < radius).any(-1)


def optimize(
    acqf: Any,
    scores: Tensor,
    domain: Domain,
    avoid: list[list[float]] | None,
    meta: dict[str, Any],
    seed: int = 0,
    apart: tuple[Tensor, Tensor] | None = None,
) -> tuple[int | None, Any, list[float] | None]:
    """The acquisition's maximizer: ``(None, payload, coordinates)`` of the best
    optimized point that ``domain.accept`` admits, is no worse than the best raw
    sample and is not within :data:`SAME_POINT` of an ``avoid`` point nor within
    :data:`APART` lengthscales of a point in flight (``apart``: those points and the
    GP's lengthscales; ``None``: no such rule); else ``(row,
    None, None)`` of the best point of the decision set (``scores``: the
    acquisition on it, ``-inf`` where excluded). ``seed`` draws the raw samples and
    the starts. Records ``optimizer`` (and ``acquisition_value``, the optimizer's
    warnings and errors) in ``meta``.

    Args:
        acqf: The acquisition function (``batch x 1 x d`` -> ``batch``).
        scores: ``N`` acquisition values on the decision set (``-inf`` where
            excluded).
        domain: The search space.
        avoid: Unit-cube points not to propose again, or ``None``.
        meta: The decision's metadata (changed in place).
        seed: Draws the raw samples and the starts (default 0).
        apart: ``(points in flight, lengthscales)``, or ``None`` (default).

    Returns:
        ``(None, payload, coordinates)`` for an optimized point, else ``(row, None,
        None)``.
    """
    unit = domain.unit
    d = domain.dim
    away = torch.tensor(avoid or [], dtype=torch.double).reshape(-1, d)

    def excluded(points: Tensor) -> Tensor:
        out = near(points, away)
        return out if apart is None else out | near_in_flight(points, *apart)

    raw, raw_scores = unit, scores
    if domain.sample is not None:
        fresh = domain.sample(NUM_RAW_SAMPLES, derived_seed(seed, RAW_SAMPLES))
        if fresh.shape[0] > 0:
            with torch.no_grad():
                fresh_scores = acqf(fresh.unsqueeze(-2)).reshape(-1)
            fresh_scores = fresh_scores.masked_fill(excluded(fresh), -math.inf)
            raw = torch.cat([unit, fresh])
            raw_scores = torch.cat([scores, fresh_scores])
    finite = torch.isfinite(raw_scores)
    best_row = int(torch.where(torch.isfinite(scores), scores, -math.inf).argmax())
    if not bool(finite.any()):
        meta["optimizer"] = "decision set"
        return best_row, None, None
    best_raw = float(raw_scores[finite].max())
    hold = domain.hold
    free = [i for i in range(d) if i not in hold] if domain.free else []
    results: list[tuple[float, Tensor, str]] = []  # (value, point, how)
    if not free:  # nothing to optimize: the best raw sample, fresh ones included
        i = int(torch.where(finite, raw_scores, -math.inf).argmax())
        if i >= unit.shape[0]:  # a fresh point beat the decision set
            results.append((float(raw_scores[i]), raw[i], "raw samples"))
    else:
        starts = _starts(raw[finite], raw_scores[finite], seed)
        results = _ascend(acqf, starts, domain, meta)
        results.sort(key=lambda r: -r[0])  # the best first
        if apart is not None and results and bool(excluded(results[0][1][None])):
            # the best result is too close to a point in flight: maximize again
            # keeping APART from them, from the best raw samples that do
            ok = finite & ~near_in_flight(raw, *apart, radius=APART_MARGIN)
            order = raw_scores[ok].argsort(descending=True)[:APART_STARTS]
            again = _ascend(acqf, list(raw[ok][order]), domain, meta, apart)
            results = sorted(results + again, key=lambda r: -r[0])
    for value, x, how in results:
        if value < best_raw:
            break  # no better than the best raw sample
        accepted = domain.accept(x) if domain.accept is not None else None
        if accepted is None:
            continue
        payload, coords = accepted
        if bool(excluded(torch.tensor([coords], dtype=torch.double)).any()):
            continue
        meta["optimizer"] = how
        meta["acquisition_value"] = value
        return None, payload, coords
    meta["optimizer"] = "decision set"
    return best_row, None, None


def _ascend(
    acqf: Any,
    starts: list[Tensor],
    domain: Domain,
    meta: dict[str, Any],
    apart: tuple[Tensor, Tensor] | None = None,
) -> list[tuple[float, Tensor, str]]:
    """``(value, point, how)`` of BoTorch's ``optimize_acqf`` from each of ``starts``
    (grouped by their held coordinates): ``"L-BFGS-B"``, or kept :data:`APART` from
    the points in flight of ``apart`` if given (``"SLSQP"``, each start on its own:
    its constraints are the points in flight near it); warnings and errors recorded
    in ``meta``."""
    d = domain.dim
    hold = domain.hold
    groups: dict[tuple, list[Tensor]] = {}
    for i, x in enumerate(starts):
        key = tuple(x[hold].tolist()) if apart is None else (i,)
        groups.setdefault(key, []).append(x)
    bounds = torch.tensor([[0.0] * d, [1.0] * d], dtype=torch.double)
    how = "L-BFGS-B" if apart is None else "SLSQP"
    results: list[tuple[float, Tensor, str]] = []
    for xs in groups.values():
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                x, v = _lbfgs(acqf, torch.stack(xs), hold, bounds, domain, apart)
            # BoTorch's warnings (a start that scipy stopped early) are
            # recorded with the decision, not printed at every call
            for w in caught:
                notes = meta.setdefault("optimizer_warnings", [])
                if str(w.message) not in notes:
                    notes.append(str(w.message))
        except Exception as err:  # a failed start never stops the experiment
            meta.setdefault("optimizer_errors", []).append(
                f"{type(err).__name__}: {err}"
            )
            continue
        results += [
            (value, point, how)
            for value, point in zip(
                v.reshape(-1).tolist(), x.reshape(-1, d), strict=True
            )
        ]
    return results


def _starts(points: Tensor, values: Tensor, seed: int) -> list[Tensor]:
    """:data:`NUM_STARTS` of ``points`` by BoTorch's Boltzmann heuristic on their
    acquisition ``values`` (the best always among them), drawn with ``seed``."""
    n = min(NUM_STARTS, points.shape[0])
    with torch.random.fork_rng():
        torch.manual_seed(derived_seed(seed, STARTS))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # equal values: chosen at random, fine
            chosen, _ = initialize_q_batch(points.unsqueeze(-2), values, n)
    return list(chosen.squeeze(-2))


def _lbfgs(
    acqf: Any,
    starts: Tensor,
    hold: list[int],
    bounds: Tensor,
    domain: Domain,
    apart: tuple[Tensor, Tensor] | None = None,
) -> tuple[Tensor, Tensor]:
    """BoTorch's ``optimize_acqf`` from ``starts`` (``k x d``, sharing the values of
    the ``hold`` coordinates, fixed), with the domain's constraints and, given
    ``apart`` (points in flight, lengthscales; then one start), :data:`APART` from
    those points (:func:`_kept_apart`)."""
    if apart is not None:
        return _kept_apart(acqf, starts, hold, bounds, domain, apart)
    return _optimize_acqf(acqf, starts, hold, bounds, domain)


def _optimize_acqf(
    acqf: Any,
    starts: Tensor,
    hold: list[int],
    bounds: Tensor,
    domain: Domain,
    kept: list[Any] | None = None,
) -> tuple[Tensor, Tensor]:
    """BoTorch's ``optimize_acqf`` from ``starts`` with the ``hold`` coordinates
    fixed, the domain's linear constraints and the non-linear ones ``kept``."""
    return optimize_acqf(
        acqf,
        bounds=bounds,
        q=1,
        num_restarts=starts.shape[0],
        batch_initial_conditions=starts.unsqueeze(-2),
        fixed_features={i: float(starts[0, i]) for i in hold} or None,
        inequality_constraints=domain.inequality_constraints or None,
        nonlinear_inequality_constraints=kept,
        options={"maxiter": MAX_ITER},
        return_best_only=False,
    )


def _kept_apart(
    acqf: Any,
    start: Tensor,
    hold: list[int],
    bounds: Tensor,
    domain: Domain,
    apart: tuple[Tensor, Tensor],
) -> tuple[Tensor, Tensor]:
    """SLSQP from one ``start`` (``1 x d``) keeping :data:`APART_MARGIN` (past
    :data:`APART`: the exact test then passes) from the points in flight of
    ``apart`` nearest it: one constraint per point, the :data:`APART_NEAREST`
    nearest the start, and as many more nearest the answer while it is within
    :data:`APART` of a point not yet constrained (:data:`APART_ROUNDS` rounds at
    most; an answer still too close is refused by the caller's exact test)."""
    ls = apart[1].to(start).reshape(-1)
    flight = apart[0].to(start) / ls  # in lengthscales
    r2 = APART_MARGIN**2

    def squared(x: Tensor) -> Tensor:  # to each point in flight, in lengthscales
        return ((x.reshape(-1) / ls - flight) ** 2).sum(-1)

    def nearest(dist: Tensor) -> set[int]:
        k = min(APART_NEAREST, flight.shape[0])
        return set(dist.topk(k, largest=False).indices.tolist())

    def distance_to(f: Tensor) -> Any:  # >= 0: APART_MARGIN from f or more
        return lambda x: ((x / ls - f) ** 2).sum(-1) - r2

    chosen = nearest(squared(start))
    for _ in range(APART_ROUNDS):
        kept = [(distance_to(flight[j]), True) for j in sorted(chosen)]
        x, v = _optimize_acqf(acqf, start, hold, bounds, domain, kept)
        dist = squared(x)
        missed = set((dist < APART**2).nonzero().reshape(-1).tolist()) - chosen
        if not missed:
            break
        chosen |= nearest(dist) | missed
    return x, v
