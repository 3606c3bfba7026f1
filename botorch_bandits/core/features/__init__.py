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
    ``None``, "the mode's")."""
    return {"flat": name, "modal": modal}


def flat_name(f: Any) -> str:
    """The flat keyword of dataclass field ``f`` (its own name where not given)."""
    return f.metadata.get("flat", f.name)
