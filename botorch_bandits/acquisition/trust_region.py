"""A trust region around the observed points for any acquisition: the union of L-inf
balls of a radius that widens with the number of points (Vizier's GP bandit:
0.2 + 0.3 n / (5 (d + 1)), none from 0.5 on), outside of which the acquisition is
lowered in proportion to the distance, so that a gradient optimizer stays inside
(:class:`TrustRegionAcquisition`, :func:`trust_radius`, :func:`sample_in_region`)."""

from __future__ import annotations

import math

import torch
from botorch.acquisition import AcquisitionFunction
from botorch.utils.transforms import t_batch_mode_transform
from torch import Tensor

__all__ = [
    "TRUST_PENALTY",
    "TrustRegionAcquisition",
    "linf_distance",
    "sample_in_region",
    "trust_radius",
]

#: the region's smallest radius, its last, and the points over which it widens (in
#: units of d + 1): Vizier's GP bandit (``gp_bandit.py``), as the ANCHORS cite it
MIN_RADIUS = 0.2
MAX_RADIUS = 0.5
WIDENS_OVER = 5
#: how much the acquisition drops per unit of L-inf distance beyond the radius (on
#: the standardized scale an acquisition's range is a few units)
TRUST_PENALTY = 1e3


def trust_radius(n: int, d: int) -> float | None:
    """The L-inf radius of the trust region around ``n`` observed points in ``d``
    dimensions, :math:`0.2 + 0.3\\,n / (5(d + 1))`; ``None`` (no region) once it
    reaches 0.5, at :math:`n = 5(d + 1)`, or with no point yet.

    Args:
        n: The number of observed points.
        d: The input dimension.

    Returns:
        The radius, or ``None``.

    Example:
        >>> trust_radius(n=6, d=2)
        0.32
    """
    if n < 1:
        return None
    r = MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) * n / (WIDENS_OVER * (d + 1))
    return None if r >= MAX_RADIUS else r


def linf_distance(X: Tensor, points: Tensor) -> Tensor:
    """The L-inf distance of each row of ``X`` (``... x d``) to its nearest row of
    ``points``.

    Args:
        X: ``... x d`` points.
        points: ``n x d`` points.

    Returns:
        ``...`` distances.
    """
    return (X.unsqueeze(-2) - points).abs().amax(-1).amin(-1)


class TrustRegionAcquisition(AcquisitionFunction):
    r""":math:`\alpha(x) - P\,\max(0, \min_i \|x - x_i\|_\infty - r)`: ``acqf``
    inside the union of L-inf balls of radius ``radius`` around ``points`` (the
    observed points, on the inputs' scale), lowered by ``penalty`` (default
    :data:`TRUST_PENALTY`) per unit of distance outside it (for ``q`` points, the
    farthest one's distance). Keeps ``acqf``'s ``sigma_multiplier`` for the record.

    Args:
        acqf: Any acquisition function.
        points: ``n x d`` observed points, ``n >= 1``.
        radius: :math:`r`, finite and ``> 0`` (e.g. :func:`trust_radius`).
        penalty: :math:`P` (default :data:`TRUST_PENALTY`, 1000).

    Example:
        >>> r = trust_radius(len(train_X), train_X.shape[-1])  # None: no region
        >>> acqf = TrustRegionAcquisition(IGPUCB(gp, beta=2.0), train_X, radius=r)
    """

    def __init__(
        self,
        acqf: AcquisitionFunction,
        points: Tensor,
        radius: float,
        penalty: float = TRUST_PENALTY,
    ) -> None:
        if not (math.isfinite(radius) and radius > 0):
            raise ValueError(f"`radius` must be finite and > 0, got radius={radius!r}.")
        if points.ndim != 2 or points.shape[0] < 1:
            raise ValueError(
                "`points` must be an n x d tensor with n >= 1 (the observed points), "
                f"got shape {tuple(points.shape)}."
            )
        # a wrapper without a model of its own (BoTorch's
        # FixedFeatureAcquisitionFunction, as under forgetting) leaves it None
        super().__init__(model=getattr(acqf, "model", None))
        self.acqf = acqf
        self.register_buffer("points", points)
        self.radius = float(radius)
        self.penalty = float(penalty)
        mult = getattr(acqf, "sigma_multiplier", None)
        if mult is not None:
            self.sigma_multiplier = mult

    @t_batch_mode_transform()
    def forward(self, X: Tensor) -> Tensor:
        """The penalized value.

        Args:
            X: ``batch_shape x q x d`` points.

        Returns:
            ``batch_shape`` values.
        """
        excess = (linf_distance(X, self.points.to(X)) - self.radius).clamp_min(0.0)
        return self.acqf(X) - self.penalty * excess.amax(-1)


def sample_in_region(
    samples: Tensor,
    points: Tensor,
    radius: float,
    hold: list[int],
    generator: torch.Generator,
) -> Tensor:
    """``samples`` (unit-cube points, ``m x d``) moved into the trust region: each
    about a point of ``points`` drawn at random, its free coordinates read as the
    uniform variate of that point's ball within the cube, a held (discrete)
    coordinate kept where it lies within ``radius`` of the point's and the point's
    own otherwise.

    Args:
        samples: ``m x d`` unit-cube points.
        points: ``n x d`` observed points (the balls' centres).
        radius: The region's radius.
        hold: The held (discrete) coordinates.
        generator: The torch generator that draws the centres.

    Returns:
        ``m x d`` points in the region.
    """
    centre = points[
        torch.randint(points.shape[0], (samples.shape[0],), generator=generator)
    ]
    lo = (centre - radius).clamp_min(0.0)
    hi = (centre + radius).clamp_max(1.0)
    out = lo + samples * (hi - lo)
    if hold:
        near = (samples[:, hold] - centre[:, hold]).abs() <= radius
        out[:, hold] = torch.where(near, samples[:, hold], centre[:, hold])
    return out
