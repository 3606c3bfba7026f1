"""GP-UCB-SDF / GP-TS-SDF's censoring of running trials (Verma et al. 2022):
:class:`Censoring` (checked at construction; each mode's defaults in
:meth:`Censoring.for_mode`) and its checks in the Ax strategy's flat spelling (a
step of :func:`~botorch_bandits.core.options.resolve_kwargs`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from botorch_bandits.core.features import flat
from botorch_bandits.validation import (
    check_count,
    check_finite,
    check_nonnegative,
    check_positive,
)

__all__ = ["Censoring", "check_censoring"]


@dataclass(frozen=True)
class Censoring:
    """GP-UCB-SDF / GP-TS-SDF (``pending="censor"``), checked at construction. The
    defaults are the practical mode's (no inflation of :math:`\\nu_t`);
    :meth:`for_mode` gives each mode's (the theory mode: Verma et al.'s shifted
    targets, ``B_y = 1``).

    Args:
        window: The censoring window in trials (an integer >= 0; ``None``: no
            window). At most one of ``window`` and ``window_seconds``.
        window_seconds: The window in seconds of Ax's trial times (> 0; ``None``:
            none).
        y_min: The censored target: the metric's worst value, in its units and
            direction (finite; default 0).
        B_y: The bound on :math:`|y - y_{min}|` in the metric's units that inflates
            :math:`\\nu_t` (Verma et al. 2022, Eq. 4; >= 0; ``None``: no
            inflation, the practical mode's default).

    Example:
        >>> Censoring(window=6, y_min=0.0).B_y is None
        True
    """

    window: int | None = field(default=None, metadata=flat("window"))
    window_seconds: float | None = field(default=None, metadata=flat("window_seconds"))
    y_min: float = field(default=0.0, metadata=flat("y_min", modal=True))
    B_y: float | None = field(default=None, metadata=flat("B_y", modal=True))

    def __post_init__(self) -> None:
        k = {"window": self.window, "window_seconds": self.window_seconds}
        k.update(y_min=self.y_min, B_y=self.B_y, mode="theory", pending="censor")
        check_finite("y_min", self.y_min)
        check_censoring(k)

    @classmethod
    def for_mode(cls, mode: str, **given: Any) -> Censoring:
        """The censoring of ``mode`` (the theory mode's ``B_y`` is 1) with the
        fields ``given``.

        Args:
            mode: ``"practical"`` or ``"theory"``.
            **given: Fields of :class:`Censoring`, over the mode's defaults.

        Returns:
            The checked censoring.

        Example:
            >>> Censoring.for_mode("theory", window=5).B_y
            1.0
        """
        defaults = {"B_y": 1.0} if mode == "theory" else {}
        return cls(**{**defaults, **given})


def check_censoring(k: dict[str, Any]) -> None:
    """GP-UCB-SDF's flat options: the window (at most one of trials and seconds),
    ``y_min``, ``B_y``; the practical mode's censoring needs ``y_min``.

    Args:
        k: The flat options (``window``, ``window_seconds``, ``y_min``, ``B_y``,
            ``mode`` and ``pending`` read; ``None``: not given).

    Raises:
        ValueError: An invalid value, both windows, or ``pending="censor"`` in
            the practical mode without ``y_min``.
    """
    check_count("window", k["window"], 0, allow_none=True)
    check_positive("window_seconds", k["window_seconds"], allow_none=True)
    if k["window"] is not None and k["window_seconds"] is not None:
        raise ValueError(
            f"Give at most one of `window` (trials) and `window_seconds`, got "
            f"window={k['window']!r} and window_seconds={k['window_seconds']!r}."
        )
    if k["y_min"] is not None:
        check_finite("y_min", k["y_min"])
    if k["B_y"] is not None:
        check_nonnegative("B_y", k["B_y"])
    practical = k["mode"] == "practical"
    if practical and k["pending"] == "censor" and k["y_min"] is None:
        raise ValueError(
            "pending='censor' needs y_min, the value a running trial is censored at: "
            "the metric's worst value in its own units (the floor of a maximized "
            "metric, e.g. y_min=0 for an accuracy or a conversion rate; the ceiling "
            "of a minimized one, e.g. y_min=1 for an error rate). Censoring suits a "
            "metric bounded on that side; for one that is not, use "
            "pending='hallucinate' (the default)."
        )
