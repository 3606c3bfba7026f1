"""The reference of the Ax strategy's flat options, generated from the fields of
:class:`~botorch_bandits.core.DecisionOptions` and its groups (so that it cannot
drift from them): each keyword, the field it sets, its allowed values and its real
default in each mode. :func:`flat_reference` is the text the docstrings of
:class:`~botorch_bandits.ax.BanditNode` and
:func:`~botorch_bandits.ax.bandit_generation_strategy` show."""

from __future__ import annotations

from typing import Any

from botorch_bandits.core.features.constraints import (
    CONSTRAINT_MODELS,
    MULTIPLIER_UPDATES,
)
from botorch_bandits.core.features.model import FIT_STARTS
from botorch_bandits.core.features.restarts import DETECTORS
from botorch_bandits.core.features.theory import HYPERPARAMETERS, KERNELS
from botorch_bandits.core.options import (
    ALGORITHMS,
    FLAT_DEFAULTS,
    FLAT_FIELDS,
    MODES,
    OPTIMIZERS,
    PENDING,
    REPEATS,
    SEMS,
    DecisionOptions,
    resolve_kwargs,
)

__all__ = ["CHOICES", "flat_reference"]

#: the flat options with a fixed set of values
CHOICES: dict[str, tuple[Any, ...]] = {
    "algorithm": ALGORITHMS,
    "mode": MODES,
    "pending": PENDING,
    "optimizer": OPTIMIZERS,
    "repeats": REPEATS,
    "sems": SEMS,
    "fit_start": FIT_STARTS,
    "kernel": KERNELS,
    "hyperparameters": HYPERPARAMETERS,
    "multiplier_update": MULTIPLIER_UPDATES,
    "constraint_model": CONSTRAINT_MODELS,
    "cpd_detector": DETECTORS,
}


def _field(flat: str) -> str:
    """The dataclass field a flat keyword sets, as a cross-reference."""
    group, name = FLAT_FIELDS[flat]
    if group is None:
        return f"``DecisionOptions.{name}``"
    cls = DecisionOptions.__dataclass_fields__[group].metadata["group"].__name__
    if name is None:
        return f"``DecisionOptions.{group}`` on (a :class:`{cls}`) or off"
    return f"``{cls}.{name}``"


def flat_reference(indent: str = "") -> str:
    """Every flat option as a reStructuredText list: the keyword, the field it sets,
    its allowed values, and its default in the practical and the theory mode (the
    groups' options as resolved with their group on).

    Args:
        indent: Put before every line (to nest the list in a docstring).

    Returns:
        The list, one option a line.
    """
    on = {"restarts": True, "long_term_constraints": True}
    practical = resolve_kwargs(**on, pending="censor", y_min=0.0)
    theory = resolve_kwargs(mode="theory", **on, pending="censor")
    lines = []
    for flat in FLAT_DEFAULTS:
        p, t = practical[flat], theory[flat]
        if flat in on:
            p = t = False
        if flat == "pending":
            p, t = "hallucinate", "ignore"  # (resolved above with censoring on)
        if flat == "y_min":
            p, t = None, 0.0  # (given above: the practical censoring needs it)
        if flat == "B_y":
            t = 1.0  # (Verma et al.'s shifted targets: DecisionOptions.from_resolved)
        if p == t:
            default = f"default ``{p!r}``"
        elif t is None and flat not in ("B_y", "R"):
            default = f"default ``{p!r}``, the practical mode's only"
            if flat == "trust_region":
                default = "default ``True`` for IGP-UCB, else ``False``; practical only"
        elif p is None and FLAT_FIELDS[flat][0] == "theory":
            default = f"the theory mode's only, default ``{t!r}``"
        else:
            default = f"default ``{p!r}`` (theory: ``{t!r}``)"
        allowed = CHOICES.get(flat)
        values = (
            f"; one of {', '.join(f'``{v!r}``' for v in allowed)}" if allowed else ""
        )
        lines.append(f"{indent}- ``{flat}``: {_field(flat)}{values}; {default}.")
    return "\n".join(lines)
