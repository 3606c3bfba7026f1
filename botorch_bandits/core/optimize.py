"""The gradient optimizer of a decision, as thorough as Ax's default: raw samples
(the decision set and, where the domain can draw them, fresh points of the space),
starts chosen among them by BoTorch's Boltzmann heuristic (``initialize_q_batch``,
as ``gen_batch_initial_conditions`` does for Ax), then BoTorch's ``optimize_acqf``
(L-BFGS-B, or SLSQP under linear constraints) with discrete and fixed coordinates
held at their starting values (with no free coordinate, the best raw sample is the
answer); the result must map back to a valid candidate away
from the avoided points, else the best point of the decision set is taken."""

from __future__ import annotations

import math
import warnings
from typing import Any

import torch
from botorch.optim import optimize_acqf
from botorch.optim.initializers import initialize_q_batch
from torch import Tensor

from botorch_bandits.core.domain import Domain
from botorch_bandits.seeding import RAW_SAMPLES, STARTS, derived_seed

#: fresh raw samples per decision and starting points of the gradient optimizer
#: (Ax's defaults: ``ax.generators.torch.botorch_modular.optimizer_defaults``)
NUM_RAW_SAMPLES = 1024
NUM_STARTS = 20
#: L-BFGS-B iterations per start
MAX_ITER = 200
#: a point within this distance (max norm, unit cube) of an avoided one is that point
SAME_POINT = 1e-6


def near(points: Tensor, avoid: Tensor) -> Tensor:
    """Which rows of ``points`` lie within :data:`SAME_POINT` of a row of ``avoid``."""
    if avoid.shape[0] == 0 or points.shape[0] == 0:
        return torch.zeros(points.shape[0], dtype=torch.bool)
    return (torch.cdist(points, avoid, p=math.inf) < SAME_POINT).any(-1)


def optimize(
    acqf: Any,
    scores: Tensor,
    domain: Domain,
    avoid: list[list[float]] | None,
    meta: dict[str, Any],
    seed: int = 0,
) -> tuple[int | None, Any, list[float] | None]:
    """The acquisition's maximizer: ``(None, payload, coordinates)`` of the best
    optimized point that ``domain.accept`` admits, is no worse than the best raw
    sample and is not within :data:`SAME_POINT` of an ``avoid`` point; else ``(row,
    None, None)`` of the best point of the decision set (``scores``: the
    acquisition on it, ``-inf`` where excluded). ``seed`` draws the raw samples and
    the starts. Records ``optimizer`` (and ``acquisition_value``, the optimizer's
    warnings and errors) in ``meta``."""
    unit = domain.unit
    d = domain.dim
    away = torch.tensor(avoid or [], dtype=torch.double).reshape(-1, d)
    raw, raw_scores = unit, scores
    if domain.sample is not None:
        fresh = domain.sample(NUM_RAW_SAMPLES, derived_seed(seed, RAW_SAMPLES))
        if fresh.shape[0] > 0:
            with torch.no_grad():
                fresh_scores = acqf(fresh.unsqueeze(-2)).reshape(-1)
            fresh_scores = fresh_scores.masked_fill(near(fresh, away), -math.inf)
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
    results: list[tuple[float, Tensor]] = []
    if not free:  # nothing to optimize: the best raw sample, fresh ones included
        i = int(torch.where(finite, raw_scores, -math.inf).argmax())
        if i >= unit.shape[0]:  # a fresh point beat the decision set
            results.append((float(raw_scores[i]), raw[i]))
    else:
        groups: dict[tuple, list[Tensor]] = {}
        for x in _starts(raw[finite], raw_scores[finite], seed):
            groups.setdefault(tuple(x[hold].tolist()), []).append(x)
        bounds = torch.tensor([[0.0] * d, [1.0] * d], dtype=torch.double)
        for xs in groups.values():
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    x, v = _lbfgs(acqf, torch.stack(xs), hold, bounds, domain)
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
            results += list(zip(v.reshape(-1).tolist(), x.reshape(-1, d), strict=True))
    results.sort(key=lambda r: -r[0])
    for value, x in results:
        if value < best_raw:
            break  # no better than the best raw sample
        accepted = domain.accept(x) if domain.accept is not None else None
        if accepted is None:
            continue
        payload, coords = accepted
        if bool(near(torch.tensor([coords], dtype=torch.double), away).any()):
            continue
        meta["optimizer"] = "L-BFGS-B" if free else "raw samples"
        meta["acquisition_value"] = value
        return None, payload, coords
    meta["optimizer"] = "decision set"
    return best_row, None, None


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
) -> tuple[Tensor, Tensor]:
    """BoTorch's ``optimize_acqf`` from ``starts`` (``k x d``, sharing the values of
    the ``hold`` coordinates, fixed), with the domain's constraints."""
    return optimize_acqf(
        acqf,
        bounds=bounds,
        q=1,
        num_restarts=starts.shape[0],
        batch_initial_conditions=starts.unsqueeze(-2),
        fixed_features={i: float(starts[0, i]) for i in hold} or None,
        inequality_constraints=domain.inequality_constraints or None,
        options={"maxiter": MAX_ITER},
        return_best_only=False,
    )
