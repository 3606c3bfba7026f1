"""The gradient optimizer of a decision: BoTorch's ``optimize_acqf`` (L-BFGS-B, or
SLSQP under linear constraints) from the best points of the decision set, discrete
and fixed coordinates held at their starting values; the result must map back to a
valid candidate, else the best point of the decision set is taken."""

from __future__ import annotations

import math
import warnings
from typing import Any

import torch
from botorch.optim import optimize_acqf
from torch import Tensor

from botorch_bandits.core.domain import Domain

#: starting points of the gradient optimizer: the best points of the decision set
NUM_STARTS = 8
#: L-BFGS-B iterations per start
MAX_ITER = 200


def optimize(
    acqf: Any,
    scores: Tensor,
    domain: Domain,
    avoid: list[list[float]] | None,
    meta: dict[str, Any],
) -> tuple[int | None, Any, list[float] | None]:
    """The acquisition's maximizer: ``(None, payload, coordinates)`` of the best
    optimized point that ``domain.accept`` admits, is better than the best start and
    (with ``avoid``) is not within 1e-6 of an avoided point; else ``(row, None,
    None)`` of the best point of the decision set. Records ``optimizer`` (and
    ``acquisition_value``, the optimizer's warnings and errors) in ``meta``."""
    unit = domain.unit
    d = domain.dim
    finite = torch.isfinite(scores)
    k = min(NUM_STARTS, int(finite.sum()))
    starts = torch.topk(torch.where(finite, scores, -math.inf), k).indices.tolist()
    hold = domain.hold
    free = [i for i in range(d) if i not in hold] if domain.free else []
    results: list[tuple[float, Tensor]] = []
    if free:
        groups: dict[tuple, list[int]] = {}
        for i in starts:
            groups.setdefault(tuple(unit[i, hold].tolist()), []).append(i)
        bounds = torch.tensor([[0.0] * d, [1.0] * d], dtype=torch.double)
        for idx in groups.values():
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    x, v = _lbfgs(acqf, unit, idx, hold, bounds, domain)
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
    near = torch.tensor(avoid or [], dtype=torch.double).reshape(-1, d)
    for value, x in results:
        if value < float(scores[starts[0]]):
            break  # no better than the best start
        accepted = domain.accept(x) if domain.accept is not None else None
        if accepted is None:
            continue
        payload, coords = accepted
        if avoid is not None and near.shape[0] > 0:
            c = torch.tensor([coords], dtype=torch.double)
            if bool(((near - c).abs().amax(-1) < 1e-6).any()):
                continue
        meta["optimizer"] = "L-BFGS-B"
        meta["acquisition_value"] = value
        return None, payload, coords
    meta["optimizer"] = "decision set"
    return starts[0], None, None


def _lbfgs(
    acqf: Any,
    unit: Tensor,
    idx: list[int],
    hold: list[int],
    bounds: Tensor,
    domain: Domain,
) -> tuple[Tensor, Tensor]:
    """BoTorch's ``optimize_acqf`` from the starts ``unit[idx]`` (which share the
    values of the ``hold`` coordinates, fixed), with the domain's constraints."""
    return optimize_acqf(
        acqf,
        bounds=bounds,
        q=1,
        num_restarts=len(idx),
        batch_initial_conditions=unit[idx].unsqueeze(-2),
        fixed_features={i: float(unit[idx[0], i]) for i in hold} or None,
        inequality_constraints=domain.inequality_constraints or None,
        options={"maxiter": MAX_ITER},
        return_best_only=False,
    )
