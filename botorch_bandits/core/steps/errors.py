"""The errors a decision raises on data it cannot use: targets too large to
standardize, or acquisition values that are not finite -- each naming the trial
with the largest value, never a silent argmax."""

from __future__ import annotations

import torch
from torch import Tensor

from botorch_bandits.core.history import TrialRecord

__all__ = ["not_finite"]


def not_finite(scores: Tensor | None, done: list[TrialRecord], metric: str) -> None:
    """Acquisition values that are not finite (``scores``), or targets too large to
    standardize (``None``): an error naming the largest target (values so large that
    the GP overflows), never a silent argmax.

    Args:
        scores: The ``N`` acquisition values on the decision set, or ``None``: the
            targets could not be standardized.
        done: The completed trials (the error names the one with the largest
            ``|f|``).
        metric: The objective's metric name, for the message.

    Raises:
        ValueError: Always: the targets cannot be standardized (``scores`` is
            ``None``), or the acquisition is not finite at some candidates.
    """
    if scores is None:
        worst = max(done, key=lambda e: abs(e.f))
        raise ValueError(
            f"BanditNode cannot standardize the objective: the largest value is "
            f"trial {worst.index}'s {metric!r} = {worst.f!r} (as maximized), and its "
            "mean or spread overflows. Rescale the objective (or constraints) or "
            "mark the trial abandoned."
        )
    bad = int((~torch.isfinite(scores)).sum())
    worst = max(done, key=lambda e: abs(e.f), default=None)
    culprit = (
        f" The largest value is trial {worst.index}'s {metric!r} = "
        f"{worst.f!r} (as maximized)."
        if worst is not None
        else ""
    )
    raise ValueError(
        f"BanditNode's acquisition is not finite at {bad} of {scores.numel()} "
        f"candidates.{culprit} Values this large overflow the GP: rescale the "
        "objective (or constraints) or mark the trial abandoned."
    )
