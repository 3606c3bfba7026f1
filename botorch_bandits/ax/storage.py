"""Ax storage for the package's classes: JSON (and so SQLite, which stores generation
strategies as JSON) encoders and decoders registered in Ax's core registries.
:func:`register` runs on ``import botorch_bandits.ax``; call it in any process that
saves or loads before it does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botorch_bandits.ax.generation import (
    BanditNode,
    CenterFirst,
    InitialTrials,
    load_options,
)
from botorch_bandits.core.features import constraints, model, restarts, theory

#: the version of a stored node's options: written with every node; a node stored
#: without one is schema 0 (every release before issue 61)
SCHEMA_VERSION = 1
#: (the schema a migration brings a stored node to, the migration), in order: each
#: extension migrates its own options (the mode first, which the others read)
MIGRATIONS: tuple[tuple[int, Callable[[dict[str, Any]], None]], ...] = (
    (1, theory.migrate_unversioned),
    (1, restarts.migrate_unversioned),
    (1, model.migrate_unversioned),
    (1, constraints.migrate_unversioned),
)


def bandit_node_to_dict(node: BanditNode) -> dict[str, Any]:
    """The node's constructor arguments (its whole state: everything else is
    recomputed from the experiment) and the schema version of its options.

    Args:
        node: The bandit node.

    Returns:
        Ax's JSON dict: ``"__type"``, ``"schema"`` (:data:`SCHEMA_VERSION`), the
        node's options (:attr:`BanditNode.OPTIONS`) and its transition criteria.
    """
    out = {"__type": "BanditNode", "schema": SCHEMA_VERSION}
    out.update(node.options())
    out["transition_criteria"] = list(node.transition_criteria)
    return out


def bandit_node_from_json(**kwargs: Any) -> BanditNode:
    """A stored node, its options migrated from their schema to today's (each
    extension's :data:`MIGRATIONS` past it) and resolved as stored: they load with
    what they hold and replay their decisions.

    Args:
        **kwargs: The stored dict's entries but ``"__type"``: the options, the
            transition criteria and ``schema`` (missing: schema 0, stored before
            the version).

    Returns:
        The node, built with ``stored=True``.

    Raises:
        ValueError: A schema newer than :data:`SCHEMA_VERSION`, or not an
            integer; or stored options :class:`BanditNode` refuses.
    """
    schema = kwargs.pop("schema", 0)
    if not isinstance(schema, int) or schema > SCHEMA_VERSION:
        raise ValueError(
            f"This BanditNode was stored with options of schema {schema!r}, and this "
            f"release of botorch_bandits reads schemas up to {SCHEMA_VERSION}: "
            "install the release that stored it (or a later one)."
        )
    for version, migrate in MIGRATIONS:
        if schema < version:
            migrate(kwargs)
    return BanditNode(stored=True, **load_options(kwargs))


def center_first_to_dict(node: CenterFirst) -> dict[str, Any]:
    """The centre node's constructor arguments (its pause follows from them).

    Args:
        node: The centre node.

    Returns:
        Ax's JSON dict: ``"__type"``, ``next_node_name``, ``num_init`` and
        ``use_existing_trials_for_initialization``.
    """
    return {
        "__type": "CenterFirst",
        "next_node_name": node.next_node_name,
        "num_init": node.num_init,
        # (files stored before this key load with False: as they were made)
        "use_existing_trials_for_initialization": (
            node.use_existing_trials_for_initialization
        ),
    }


def register() -> None:
    """Add the encoder and decoder to Ax's core JSON registries (idempotent)."""
    from ax.storage.json_store.encoders import pausing_criterion_to_dict
    from ax.storage.json_store.registry import (
        CORE_DECODER_REGISTRY,
        CORE_ENCODER_REGISTRY,
    )

    CORE_ENCODER_REGISTRY[BanditNode] = bandit_node_to_dict
    CORE_DECODER_REGISTRY["BanditNode"] = bandit_node_from_json
    # the Sobol node's pause (a MaxTrialsAwaitingData): Ax's own encoding
    CORE_ENCODER_REGISTRY[InitialTrials] = pausing_criterion_to_dict
    CORE_DECODER_REGISTRY["InitialTrials"] = InitialTrials
    CORE_ENCODER_REGISTRY[CenterFirst] = center_first_to_dict
    CORE_DECODER_REGISTRY["CenterFirst"] = CenterFirst
