"""The bandit node's decisions read back from an Ax experiment: each trial's
recorded metadata (:func:`decision_metadata`) and the table of them
(:func:`decision_table`: a row per decision, a numeric column per constraint and
multiplier), the source of the strategy's own analysis card
(:mod:`~botorch_bandits.ax.analyses`). Guide: docs/ax.md."""

from __future__ import annotations

import copy
from typing import Any

import pandas as pd
from ax import Client
from ax.core.experiment import Experiment

from botorch_bandits.ax.space import Space
from botorch_bandits.upstream import client_experiment, client_has_experiment

__all__ = ["PER_CONSTRAINT", "constraint_names", "decision_metadata", "decision_table"]


def decision_metadata(source: Any) -> dict[int, dict[str, Any]]:
    """What the bandit node recorded with each trial it made, by trial index: the
    decision's metadata (its round ``t``, the fit, and what each option did --
    ``cpd_restarts`` and ``cpd_start`` with restarts, ``forgetting`` with
    forgetting, the epoch's multipliers with long-term constraints, ...; the keys
    are listed in docs/ax.md). Trials the node did not make (the initial ones,
    attached ones) are left out. ``source``: an ``ax.Client`` or its
    ``Experiment``; a copy, so changing it changes nothing stored.

    Args:
        source: An ``ax.Client`` (with an experiment) or an Ax ``Experiment``.

    Returns:
        Trial index -> a deep copy of the metadata the node recorded with it, in
        trial order.

    Raises:
        ValueError: ``source`` is neither, or a Client without an experiment.

    Example:
        >>> meta = decision_metadata(client)
        >>> meta[5]["t"]  # the round of trial 5's decision
    """
    exp = _experiment_of(source)
    out: dict[int, dict[str, Any]] = {}
    for index in sorted(exp.trials):
        runs = exp.trials[index].generator_runs
        meta = (runs[0].gen_metadata or {}) if runs else {}
        if "pending_view" in meta and "t" in meta:  # the decision core's record
            out[index] = copy.deepcopy(dict(meta))
    return out


def _experiment_of(source: Any) -> Experiment:
    """The experiment of ``source`` (an ``ax.Client`` with one, or an
    ``Experiment``); anything else is refused naming the argument."""
    if isinstance(source, Experiment):
        return source
    if isinstance(source, Client):
        if not client_has_experiment(source):
            raise ValueError(
                "`source`: the Client has no experiment yet (configure_experiment "
                "or load_client first); there is nothing decided to read."
            )
        return client_experiment(source)
    raise ValueError(
        "`source` must be an ax.Client or an ax Experiment, got "
        f"{type(source).__name__} ({source!r})."
    )


def decision_table(source: Any) -> Any:
    """:func:`decision_metadata` as a ``pandas.DataFrame``: a row per trial the
    bandit node made (the index: its trial index), a column per metadata key, nested
    ones joined with a dot (``fit.status``, ``trust_region.radius``,
    ``censoring.beta``). The long-term constraints' values get a column each, named
    after the constraint (:func:`constraint_names`): ``kappa.cost``,
    ``budget.mean_g.cost``, ``budget.sum_g.cost``, ``constraint_scale.cost``,
    ``kappa_capped.cost`` (``True`` where the multiplier is at its cap) and the
    constraint's fit (``constraint_fits.cost.noise``, ...); the fitted lengthscales
    one per coordinate of the GP (``fit.lengthscale.x1``; under forgetting
    ``fit.lengthscale.time`` last). The lists of trials (``cpd_restarts``,
    ``cpd_detections``) stay whole in their cell; a key a decision did not record
    is missing (NaN) in its row.

    Args:
        source: An ``ax.Client`` (with an experiment) or an Ax ``Experiment``.

    Returns:
        The ``pandas.DataFrame``, its index named ``"trial"`` (empty when the node
        made no trial).

    Raises:
        ValueError: ``source`` is neither, or a Client without an experiment.

    Example:
        >>> table = decision_table(client)
        >>> table[["t", "fit.status", "kappa.cost", "budget.mean_g.cost"]]
    """
    exp = _experiment_of(source)
    names = {
        "constraint": constraint_names(exp.optimization_config),
        "coordinate": _coordinates(exp),
    }
    rows = {i: _columns(_flat(m), names) for i, m in decision_metadata(exp).items()}
    table = pd.DataFrame.from_dict(rows, orient="index")
    return table.rename_axis("trial")


#: the metadata's lists with a value per long-term constraint, in their order
PER_CONSTRAINT = ("kappa", "constraint_scale", "budget.mean_g", "budget.sum_g")


def constraint_names(opt: Any) -> list[str]:
    """A name for each outcome constraint of ``opt`` (an optimization config, or
    ``None``), in their order: its metric (the metrics joined by ``+`` for a
    weighted sum), or its expression where two constraints share their metrics.

    Args:
        opt: The experiment's optimization config.

    Returns:
        The names (empty without constraints).
    """
    cons = list(opt.outcome_constraints) if opt is not None else []
    names = ["+".join(c.metric_names) for c in cons]
    if len(set(names)) < len(names):
        names = [str(c.expression) for c in cons]
    return names


def _coordinates(exp: Experiment) -> list[str]:
    """The GP's coordinates of the experiment's search space (its transformed
    parameters), or none where the node could not model it."""
    try:
        return list(Space(exp.search_space).names)
    except ValueError:
        return []


def _split(key: str, values: list, names: list[str]) -> dict[str, Any] | None:
    """``key``'s list as one column per name (``None`` where the lengths differ)."""
    if len(values) != len(names):
        return None
    return {f"{key}.{n}": v for n, v in zip(names, values, strict=True)}


def _columns(flat: dict[str, Any], names: dict[str, list[str]]) -> dict[str, Any]:
    """A decision's flat metadata with its per-constraint and per-coordinate lists
    as columns of their own (kept whole where their length does not match)."""
    cons, coords = names["constraint"], names["coordinate"]
    out: dict[str, Any] = {}
    for key, value in flat.items():
        split = None
        if isinstance(value, list):
            if key in PER_CONSTRAINT:
                split = _split(key, value, cons)
            elif key == "kappa_capped":
                split = {f"{key}.{n}": j in value for j, n in enumerate(cons)}
            elif key == "constraint_fits" and len(value) == len(cons):
                split = {}
                for n, fit in zip(cons, value, strict=True):
                    fit_columns = _flat(fit or {}, f"{key}.{n}.")
                    split.update(_columns(fit_columns, {**names, "constraint": []}))
            elif key.endswith("lengthscale"):
                split = _split(key, value, coords) or _split(
                    key, value, [*coords, "time"]
                )
        out.update({key: value} if split is None else split)
    return out


def _flat(meta: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``meta`` with nested dicts' keys joined by dots."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if isinstance(value, dict) and value:
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
