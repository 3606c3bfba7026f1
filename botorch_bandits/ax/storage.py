"""Ax storage for the package's classes: JSON (and so SQLite, which stores generation
strategies as JSON) encoders and decoders registered in Ax's core registries.
:func:`register` runs on ``import botorch_bandits.ax``; call it in any process that
saves or loads before it does."""

from __future__ import annotations

from typing import Any

from botorch_bandits.ax.generation import (
    BanditNode,
    CenterFirst,
    InitialTrials,
    load_options,
)
from botorch_bandits.core.options import loading_stored


def bandit_node_to_dict(node: BanditNode) -> dict[str, Any]:
    """The node's constructor arguments (its whole state: everything else is
    recomputed from the experiment)."""
    out = {"__type": "BanditNode"}
    out.update(node.options())
    out["transition_criteria"] = list(node.transition_criteria)
    return out


def bandit_node_from_json(**kwargs: Any) -> BanditNode:
    # nodes saved before the practical mode existed were theory-mode nodes (and
    # stored every theory setting): they load as such, with their decision set
    kwargs.setdefault("mode", "theory")
    kwargs.setdefault("optimizer", "finite")
    # nodes saved before the scale-free detector existed ran the paper's detector
    # (and stored its constants) in either mode: they replay their restarts exactly
    kwargs.setdefault("cpd_detector", "paper")
    # nodes saved before the refit schedule refitted the practical GP at every
    # decision: they keep doing so, and replay exactly
    if kwargs["mode"] == "practical":
        kwargs.setdefault("refit_growth", 1.0)
        # and kept the exact GP however many trials it had (None, as stored before
        # "never" was spelled out, meant the same)
        if kwargs.get("sparse_after") is None:
            kwargs["sparse_after"] = "never"
    # nodes saved before the practical reading of the long-term constraints (issue
    # 49) ran the paper's composite target with kappa^1 as the paper has it and no
    # slack, in either mode (and stored their epochs, update and step): they replay
    if kwargs.get("long_term_constraints") and "constraint_model" not in kwargs:
        kwargs.update(constraint_model="composite", slack=0.0)
        additive = kwargs.get("multiplier_update") == "additive"
        kwargs["initial_multiplier"] = 0.0 if additive else None
    # nodes saved before the trust region and the fit's start were options (issue
    # 51) searched the whole box and warm-started each fit: they replay
    if kwargs["mode"] == "practical":
        kwargs.setdefault("trust_region", False)
        kwargs.setdefault("fit_start", "warm")
    with loading_stored():  # the options it was stored with, as they are
        return BanditNode(**load_options(kwargs))


def center_first_to_dict(node: CenterFirst) -> dict[str, Any]:
    """The centre node's constructor arguments (its pause follows from them)."""
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
