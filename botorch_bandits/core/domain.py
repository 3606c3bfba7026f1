"""What a decision needs of the search space, free of Ax: the finite decision set in
the GP's unit cube, the coordinates the optimizer holds (discrete or fixed), the
linear constraints, a check that maps an optimizer's point back to a valid
candidate, and the detector's integration domain. :meth:`Domain.box` builds one for
the unit box."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor
from torch.quasirandom import SobolEngine


@dataclass
class Domain:
    """What a decision needs of the search space.

    Args:
        unit: ``N x d`` decision set in the unit cube.
        hold: The coordinates held at their starting values by the gradient
            optimizer (discrete or fixed; default none).
        free: Whether any coordinate is free (default ``True``).
        inequality_constraints: The optimizer's linear constraints, as BoTorch's
            ``inequality_constraints`` (default none).
        accept: A unit-cube point -> a valid candidate ``(payload, coordinates)``
            or ``None``.
        detector: () -> the change-point detector's points and the domain's volume.
        sample: ``(n, seed)`` -> up to ``n`` fresh valid points, the optimizer's raw
            samples (``None``: the decision set only).
        index: The rows of ``unit`` by their coordinates (default ``None``: built).

    Example:
        >>> domain = Domain.box(torch.rand(512, 3, dtype=torch.double))
    """

    unit: Tensor
    hold: list[int] = field(default_factory=list)
    free: bool = True
    inequality_constraints: list[tuple[Tensor, Tensor, float]] = field(
        default_factory=list
    )
    accept: Callable[[Tensor], tuple[Any, list[float]] | None] | None = None
    detector: Callable[[], tuple[Tensor, float]] | None = None
    sample: Callable[[int, int], Tensor] | None = None
    index: dict[tuple, int] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.index is None:  # rows by coordinates, unless the caller has them
            self.index = {tuple(row): i for i, row in enumerate(self.unit.tolist())}

    @property
    def dim(self) -> int:
        """The input dimension ``d``."""
        return self.unit.shape[-1]

    @classmethod
    def box(cls, unit: Tensor) -> Domain:
        """The unit box ``[0, 1]^d`` with the decision set ``unit``: every point of
        the box is a candidate (its payload the coordinates), the detector integrates
        over the decision set with volume 1, raw samples are scrambled Sobol points.

        Args:
            unit: ``N x d`` decision set in the unit cube.

        Returns:
            The :class:`Domain`.
        """

        def accept(x: Tensor) -> tuple[Any, list[float]]:
            coords = x.reshape(-1).clamp(0.0, 1.0).tolist()
            return coords, coords

        def sample(n: int, seed: int) -> Tensor:
            engine = SobolEngine(unit.shape[-1], scramble=True, seed=seed)
            return engine.draw(n, dtype=torch.double)

        return cls(
            unit=unit,
            accept=accept,
            detector=lambda: (unit, 1.0),
            sample=sample,
        )
