"""The theory mode's GP: :class:`TheoryModel`, a fixed kernel on the unit cube (or
its marginal-likelihood fit at every call), checked at construction."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from botorch_bandits.core.features import flat
from botorch_bandits.validation import check_choice, check_positive

__all__ = ["HYPERPARAMETERS", "KERNELS", "TheoryModel"]

Kernel = Literal["matern52", "rbf"]
Hyper = Literal["fixed", "fitted"]
KERNELS: tuple[str, ...] = ("matern52", "rbf")
HYPERPARAMETERS: tuple[str, ...] = ("fixed", "fitted")


@dataclass(frozen=True)
class TheoryModel:
    """The theory mode's GP on the unit cube, checked at construction.

    Args:
        kernel: ``"matern52"`` (Matérn-5/2, the default) or ``"rbf"``.
        lengthscale: The kernel's lengthscale on the unit cube (> 0; default 0.2).
        noise: The observation noise variance (> 0; default 1e-2).
        hyperparameters: ``"fixed"`` (the values above, the papers' known kernel)
            or ``"fitted"`` (a marginal-likelihood fit at every call, from them).

    Example:
        >>> TheoryModel(kernel="rbf", lengthscale=0.1).noise
        0.01
    """

    kernel: Kernel = field(default="matern52", metadata=flat("kernel", modal=True))
    lengthscale: float = field(default=0.2, metadata=flat("lengthscale", modal=True))
    noise: float = field(default=1e-2, metadata=flat("noise", modal=True))
    hyperparameters: Hyper = field(
        default="fixed", metadata=flat("hyperparameters", modal=True)
    )

    def __post_init__(self) -> None:
        check_choice("kernel", self.kernel, KERNELS)
        check_positive("lengthscale", self.lengthscale)
        check_positive("noise", self.noise)
        check_choice("hyperparameters", self.hyperparameters, HYPERPARAMETERS)


def migrate_unversioned(stored: dict[str, Any]) -> None:
    """A node stored before the schema version (schema 0) and before the practical
    mode existed was a theory-mode node (and stored every theory setting): it loads
    as such, with its decision set.

    Args:
        stored: The stored node's options, by flat name; ``mode`` and
            ``optimizer`` set where missing (``"theory"``, ``"finite"``), in place.
    """
    stored.setdefault("mode", "theory")
    stored.setdefault("optimizer", "finite")
