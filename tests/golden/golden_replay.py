"""The replayed tier of the golden trace: each decision of a set's Ax loop recorded
with the history it was made on (:func:`record_history`, the history as exact JSON:
:func:`encode`), and made again by ``botorch_bandits.core.decide`` on that history
(:func:`replay`): a last digit that differs at one decision cannot change the
decisions after it."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from golden_compare import MODEL_KEYS, REPLAY_KEYS
from golden_trace import (
    _clean,
    _client,
    _node_options,
    key,
    run_option_set,
    seed_global_rng,
)


def _types() -> dict[str, type]:
    from botorch_bandits.core import History, TrialRecord
    from botorch_bandits.hyperparameters import Hyperparameters

    return {c.__name__: c for c in (History, TrialRecord, Hyperparameters)}


def encode(value: Any, table: dict[str, int], records: list) -> Any:
    """``value`` (a History and what it holds) as JSON that decodes to an equal
    value: floats by JSON's repr (exact; NaN and inf as Python writes them),
    tuples and dataclasses tagged; each distinct TrialRecord once in ``records``,
    referred to by its position (``table``: its encoding -> position)."""
    from botorch_bandits.core import TrialRecord

    if isinstance(value, TrialRecord):
        text = json.dumps(_encode_fields(value, table, records), sort_keys=True)
        if text not in table:
            table[text] = len(records)
            records.append(json.loads(text))
        return {"__record__": table[text]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _encode_fields(value, table, records)
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, table, records) for v in value]}
    if isinstance(value, list):
        return [encode(v, table, records) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError(f"a history's dict with non-string keys: {value!r}")
        return {k: encode(v, table, records) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"cannot record {type(value).__name__} {value!r} in a history")


def _encode_fields(value: Any, table: dict[str, int], records: list) -> dict:
    fields = {
        f.name: encode(getattr(value, f.name), table, records)
        for f in dataclasses.fields(value)
    }
    return {"__type__": type(value).__name__, **fields}


def decode(value: Any, records: list) -> Any:
    """The inverse of :func:`encode`."""
    if isinstance(value, list):
        return [decode(v, records) for v in value]
    if not isinstance(value, dict):
        return value
    if "__record__" in value:
        return decode(records[value["__record__"]], records)
    if "__tuple__" in value:
        return tuple(decode(v, records) for v in value["__tuple__"])
    if "__type__" in value:
        cls = _types()[value["__type__"]]
        return cls(
            **{k: decode(v, records) for k, v in value.items() if k != "__type__"}
        )
    return {k: decode(v, records) for k, v in value.items()}


#: recorded with each replayed decision for the tolerance's second test
ACQUISITION = "acquisition_value"


def named(meta: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The ``keys`` of ``meta`` (a dot reaches into a dict) that it has, cleaned."""
    out = {}
    for k in keys:
        value: Any = meta
        for part in k.split("."):
            if not isinstance(value, dict) or part not in value:
                break
            value = value[part]
        else:
            out[k] = _clean(value)
    return out


def _decision(decision: Any, params: dict[str, Any]) -> dict[str, Any]:
    """One decision as the replayed tier records and compares it."""
    meta = decision.metadata
    value = meta.get(ACQUISITION)
    return {
        "x": [float(v) for v in decision.x],
        "uniform": bool(decision.uniform),
        "params": _clean(params),
        "meta": named(meta, REPLAY_KEYS + MODEL_KEYS),
        ACQUISITION: None if value is None else float(value),
    }


def record_history(space: str, options: dict[str, Any]) -> dict[str, Any]:
    """One replayed set's record: every decision of its Ax loop with the history
    it was made on (the trials' records listed once), grouped by Ax call."""
    trials, calls = run_option_set(space, options, capture=True)
    bandit = [t["params"] for t in trials if t["node"] == "bandit"]
    table: dict[str, int] = {}
    records: list = []
    steps, n = [], 0
    for c, call in enumerate(calls):
        for history, decision in call:
            enc = encode(history, table, records)
            if json.dumps(encode(decode(enc, records), table, records)) != json.dumps(
                enc
            ):
                raise AssertionError(f"{key(space, options)}: a history's round trip")
            params = decode(bandit[n], [])
            steps.append(
                {"call": c, "history": enc, "decision": _decision(decision, params)}
            )
            n += 1
    if n != len(bandit):
        raise AssertionError(f"{n} decisions for {len(bandit)} bandit trials")
    return {"records": records, "steps": steps}


def replay(
    space: str, options: dict[str, Any], recorded: dict[str, Any]
) -> list[dict[str, Any]]:
    """Each recorded decision made again by ``botorch_bandits.core.decide`` on its
    recorded history (the options and the domain as the Ax node builds them; the
    decisions of one Ax call share a cache, as in the node)."""
    import warnings

    from botorch_bandits.ax import bandit_generation_strategy
    from botorch_bandits.ax.reading import ax_domain
    from botorch_bandits.core import DecisionCache, DecisionOptions, decide
    from botorch_bandits.models import FeatureCache, one_thread

    opts = DecisionOptions.from_kwargs(**{"seed": 0, **_node_options(options)})
    experiment = _client(space, options)._experiment
    strategy = bandit_generation_strategy(num_init=3, **_node_options(options))
    node = strategy.nodes_by_name["bandit"]
    whole = node.decision_set(experiment, {})
    domain = ax_domain(
        node.space(experiment), whole, {}, lambda: node.decision_set(experiment, {})
    )
    features, cache, call = FeatureCache(), None, None
    out = []
    for n, step in enumerate(recorded["steps"]):
        if step["call"] != call:
            call, cache = step["call"], DecisionCache(features=features)
        history = decode(step["history"], recorded["records"])
        with warnings.catch_warnings(), one_thread():
            warnings.simplefilter("ignore")
            seed_global_rng(n)
            d = decide(history, opts, domain, cache)
        params = dict(d.payload) if d.index is None else dict(whole.params[d.index])
        out.append(_decision(d, params))
    return out
