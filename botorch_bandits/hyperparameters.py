"""The one record of a GP's hyperparameters: lengthscales, noise variance, and the
constant mean (BoTorch's standard GP) or the output scale (a scaled kernel), as
plain floats -- JSON-able, recorded in Ax's metadata and read back from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Hyperparameters:
    """Lengthscales (one per input), noise variance, and ``mean`` (a constant mean)
    or ``outputscale`` (a scaled kernel) where the model has one.

    Args:
        lengthscale: The kernel's lengthscales, one per input dimension ``d``.
        noise: The likelihood's noise variance.
        mean: The constant mean, or ``None`` (default) where the model has none.
        outputscale: The scaled kernel's output scale, or ``None`` (default).

    Example:
        >>> hp = Hyperparameters(lengthscale=(0.2, 0.3), noise=1e-3, outputscale=1.5)
        >>> Hyperparameters.from_dict(hp.as_dict()) == hp
        True
    """

    lengthscale: tuple[float, ...]
    noise: float
    mean: float | None = None
    outputscale: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The fields that are set, as a JSON-able dict.

        Returns:
            ``{"lengthscale": [...], "outputscale": ..., "noise": ..., "mean": ...}``
            with ``outputscale`` and ``mean`` only where they are set.
        """
        out: dict[str, Any] = {"lengthscale": list(self.lengthscale)}
        if self.outputscale is not None:
            out["outputscale"] = self.outputscale
        out["noise"] = self.noise
        if self.mean is not None:
            out["mean"] = self.mean
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Hyperparameters:
        """The record of :meth:`as_dict`.

        Args:
            d: A dict with ``"lengthscale"`` and ``"noise"``, and optionally
                ``"mean"`` and ``"outputscale"`` (other keys are ignored).

        Returns:
            The ``Hyperparameters`` with every value a ``float``.
        """
        return cls(
            lengthscale=tuple(float(v) for v in d["lengthscale"]),
            noise=float(d["noise"]),
            mean=None if d.get("mean") is None else float(d["mean"]),
            outputscale=None
            if d.get("outputscale") is None
            else float(d["outputscale"]),
        )
