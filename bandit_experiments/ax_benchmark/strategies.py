"""The strategies the Ax benchmark compares: the bandit strategies
(``bandit_generation_strategy`` in the practical or the theory mode) and the strategy
Ax chooses by default."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

import botorch_bandits

AX_DEFAULT = "Ax default"
STRATEGIES: dict[str, tuple[str, str] | None] = {
    "IGP-UCB": ("IGP-UCB", "practical"),
    "GP-TS": ("GP-TS", "practical"),
    "GP-UCB": ("GP-UCB", "practical"),
    "IGP-UCB (theory)": ("IGP-UCB", "theory"),
    "qLogNEI": ("qLogNEI", "practical"),
    AX_DEFAULT: None,
}
"""Strategy labels: ``(algorithm, mode)`` of ``bandit_generation_strategy``, or
``None`` for Ax's default strategy."""


def parse_label(label: str) -> tuple[str, dict[str, Any]]:
    """A strategy label and the node options it carries: ``"IGP-UCB"`` ->
    ``("IGP-UCB", {})``; a variant ``"IGP-UCB[beta=2.5;model_window=25]"`` ->
    ``("IGP-UCB", {"beta": 2.5, "model_window": 25})`` (digits alone as ints, other
    numbers as floats, ``None``, ``True`` and ``False`` as themselves, other values
    as strings). Raises
    ``ValueError`` naming the label when its base is unknown or it is malformed."""
    base, _, rest = label.partition("[")
    if base not in STRATEGIES or (rest and not rest.endswith("]")):
        raise ValueError(
            f"`strategies` must be labels among {list(STRATEGIES)}, optionally with "
            f"node options in brackets (e.g. 'IGP-UCB[beta=2]'), got {label!r}."
        )
    options: dict[str, Any] = {}
    for item in filter(None, rest[:-1].split(";")):
        name, eq, text = item.partition("=")
        if not eq or STRATEGIES[base] is None:
            raise ValueError(
                f"`strategies`: {label!r} must give bandit node options as "
                "name=value pairs (Ax default takes none)."
            )
        words = {"None": None, "True": True, "False": False}
        if text in words:
            value: Any = words[text]
        elif text.isdigit():
            value = int(text)
        else:
            try:
                value = float(text)
            except ValueError:
                value = text
        options[name.strip()] = value
    return base, options


def bandit_strategy(
    label: str, seed: int, node_kwargs: Mapping[str, Any] | None = None
) -> Any:
    """The ``GenerationStrategy`` of a bandit label (not ``"Ax default"``; a variant
    label's options first), with ``node_kwargs`` (e.g. ``{"B": 3.0}`` or
    ``{"beta": 2.0}``) passed to the node."""
    from botorch_bandits.ax import bandit_generation_strategy

    base, options = parse_label(label)
    algorithm, mode = STRATEGIES[base]
    return bandit_generation_strategy(
        algorithm=algorithm,
        seed=seed,
        mode=mode,
        **{**options, **dict(node_kwargs or {})},
    )


def configure_strategy(
    client: Any, label: str, seed: int, node_kwargs: Mapping[str, Any] | None = None
) -> None:
    """Set the strategy ``label`` on ``client``: a bandit strategy with
    ``node_kwargs``, or Ax's default choice seeded by ``seed``."""
    if STRATEGIES[parse_label(label)[0]] is None:
        if node_kwargs:
            raise ValueError(
                f"`node_kwargs` are options of the bandit node; {label!r} takes none, "
                f"got {dict(node_kwargs)!r}."
            )
        # Ax's choice when none is set, its default initialization budget, seeded
        client.configure_generation_strategy(initialization_random_seed=seed)
    else:
        client.set_generation_strategy(bandit_strategy(label, seed, node_kwargs))


@cache
def strategy_fingerprint(label: str) -> str:
    """What a job's result depends on besides its problem, seed and trials: the
    versions of Ax, BoTorch, GPyTorch and torch, and for a bandit strategy a hash of
    the package's library code (everything but its test functions and demos, which
    lay in ``benchmarks/`` before issue 61). A kept job is reused only under the same
    fingerprint, so a changed default reruns."""
    versions = " ".join(
        f"{name} {version(name)}"
        for name in ("ax-platform", "botorch", "gpytorch", "torch")
    )
    if STRATEGIES[parse_label(label)[0]] is None:
        return versions
    root = Path(botorch_bandits.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        if not {"test_functions", "demo"} & set(path.relative_to(root).parts):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return f"{versions} botorch_bandits {digest.hexdigest()[:16]}"
