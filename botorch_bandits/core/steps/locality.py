"""The trust region, a practical option (``trust_region=True``): the rule kept to
the union of L-inf balls around the model's points, whose radius widens with their
number as in Vizier's GP bandit, and the optimizer's raw samples drawn inside it
(:func:`trust_region_step`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import torch
from botorch.optim.parameter_constraints import evaluate_feasibility
from torch import Tensor

from botorch_bandits.acquisition.trust_region import (
    TrustRegionAcquisition,
    sample_in_region,
    trust_radius,
)
from botorch_bandits.core.domain import Domain
from botorch_bandits.core.options import DecisionOptions
from botorch_bandits.core.round import Round, Steps
from botorch_bandits.seeding import TRUST_CENTRES, derived_seed

__all__ = ["steps", "trust_region_step"]


def trust_region_step(r: Round) -> None:
    """The rule within the trust region around the model's points (completed, and
    the running ones as the pending view puts them), its radius
    :func:`~botorch_bandits.acquisition.trust_region.trust_radius`; the raw samples
    of the optimizer moved inside. ``trust_region`` in the metadata: the radius
    (``None`` once the region covers the box) and the points.

    Args:
        r: The round; reads ``domain``, ``X`` and the rule (``r.rule``),
            writes ``local`` and ``domain`` (its ``sample`` moved into the region,
            where it has one; neither once the region covers the box) and the
            metadata's ``trust_region``.
    """
    d = r.domain.dim
    points = r.X[:, :d] if r.X is not None else torch.empty(0, d)
    radius = trust_radius(points.shape[0], d)
    r.meta["trust_region"] = {"radius": radius, "points": int(points.shape[0])}
    if radius is None:
        return
    r.local = TrustRegionAcquisition(r.rule, points, radius)
    if r.domain.sample is not None:
        r.domain = replace(r.domain, sample=_local(r.domain, points, radius))


def _local(
    domain: Domain, points: Tensor, radius: float
) -> Callable[[int, int], Tensor]:
    """The domain's raw samples moved into the region; those that then break a
    linear constraint of the search space left out."""
    base, hold = domain.sample, domain.hold
    constraints = domain.inequality_constraints

    def sample(n: int, seed: int) -> Tensor:
        raw = base(n, seed)
        if raw.shape[0] == 0:
            return raw
        gen = torch.Generator().manual_seed(derived_seed(seed, TRUST_CENTRES))
        out = sample_in_region(raw, points, radius, hold, gen)
        if not constraints:
            return out
        ok = evaluate_feasibility(out.unsqueeze(-2), constraints, tolerance=1e-9)
        return out[ok]

    return sample


def steps(opts: DecisionOptions) -> Steps:
    """The trust region's step (with ``trust_region=True`` only).

    Args:
        opts: The decision's options.

    Returns:
        The steps by their place in the pipeline.
    """
    return {"local": trust_region_step} if opts.trust_region else {}
