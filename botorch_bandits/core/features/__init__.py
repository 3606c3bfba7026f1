"""The extensions' options, one module a feature: its frozen dataclass (checked at
construction, its per-mode defaults in :meth:`for_mode`), the checks and defaults of
its options in the Ax strategy's flat spelling, and the migration of the options a
stored strategy holds. :func:`flat` names a field's flat keyword."""

from __future__ import annotations

from typing import Any

__all__ = ["flat", "flat_name"]


def flat(name: str, modal: bool = False) -> dict[str, Any]:
    """A dataclass field's metadata: its flat keyword ``name`` in the Ax strategy,
    and whether its default depends on the mode (``modal``: its flat default is
    ``None``, "the mode's").

    Args:
        name: The field's flat keyword.
        modal: Whether its default depends on the mode (default ``False``).

    Returns:
        The metadata dict, ``{"flat": name, "modal": modal}``.

    Example:
        >>> y_min: float = field(default=0.0, metadata=flat("y_min", modal=True))
    """
    return {"flat": name, "modal": modal}


def flat_name(f: Any) -> str:
    """The flat keyword of dataclass field ``f`` (its own name where not given).

    Args:
        f: A ``dataclasses.Field``.

    Returns:
        Its metadata's ``"flat"`` keyword, else the field's name.
    """
    return f.metadata.get("flat", f.name)
