"""The round's slices (issue 61): in every pipeline each field of the
:class:`~botorch_bandits.core.round.Round` has one writer and each metadata key one
writer, and each step, given by hand only the fields it reads (on a round fresh from
``Round.begin``, none of the steps before it run), writes what it writes in the
whole pipeline. Reads and writes are recorded as the steps run."""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
from typing import Any

import pytest
import torch

from botorch_bandits.core import DecisionCache, DecisionOptions, Domain, History
from botorch_bandits.core import TrialRecord as Rec
from botorch_bandits.core.decide import pipeline
from botorch_bandits.core.round import Round

D = 2
FIELDS = {f.name for f in dataclasses.fields(Round)}
#: the option sets: every step of the pipeline in at least one
SETS: dict[str, dict[str, Any]] = {
    "theory": {"mode": "theory"},
    "theory-hallucinate-fitted": {
        "mode": "theory",
        "pending": "hallucinate",
        "hyperparameters": "fitted",
    },
    "theory-composite": {
        "mode": "theory",
        "long_term_constraints": True,
        "epoch_length": 3,
    },
    "theory-restarts": {"mode": "theory", "restarts": True},
    "practical": {},
    "practical-censor-window": {"pending": "censor", "y_min": -1.0, "model_window": 6},
    "practical-separate-forgetting": {
        "long_term_constraints": True,
        "forgetting": True,
        "pending": "pessimistic",
    },
    "practical-composite-randomized": {
        "long_term_constraints": True,
        "constraint_model": "composite",
        "multiplier_update": "additive",
        "pending": "randomized-believer",
    },
    "practical-scale-free": {"restarts": True, "cpd_detector": "scale-free"},
    "practical-residual-ignore-qlognei": {
        "algorithm": "qLogNEI",
        "restarts": True,
        "pending": "ignore",
        "optimizer": "finite",
    },
    "theory-noise-free-avoid": {"mode": "theory", "noise": 1e-4, "repeats": "avoid"},
}


def _history() -> History:
    pts = torch.quasirandom.SobolEngine(D, scramble=True, seed=1).draw(12)
    trials = []
    for i, x in enumerate(pts.double().tolist()):
        done = i < 10
        f = -sum((v - 0.3) ** 2 for v in x) + 0.01 * i
        trials.append(
            Rec(
                index=i,
                x=tuple(x),
                f=f if done else None,
                g=(x[0] - 0.5,) if done else None,
                created=float(i),
                completed=float(i) + 1.0 if done else None,
            )
        )
    return History(trials=tuple(trials), num_constraints=1)


def _domain() -> Domain:
    sobol = torch.quasirandom.SobolEngine(D, scramble=True, seed=0)
    return Domain.box(sobol.draw(64, dtype=torch.double))


class _Meta(dict):
    """The metadata, recording the keys each step writes and reads."""

    log: dict[str, set[str]]
    reads: dict[str, set[str]]
    step: str = "begin"

    def __getitem__(self, key: str) -> Any:
        self.reads.setdefault(self.step, set()).add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __setitem__(self, key: str, value: Any) -> None:
        self.log.setdefault(key, set()).add(self.step)
        super().__setitem__(key, value)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value


class _Tracked(Round):
    """A round recording, for the step that runs, the fields it reads and sets."""

    def __getattribute__(self, name: str) -> Any:
        if name in FIELDS:
            rec = object.__getattribute__(self, "__dict__").get("_rec")
            if rec is not None and rec["step"] is not None:
                rec["reads"].setdefault(rec["step"], set()).add(name)
        return object.__getattribute__(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        rec = self.__dict__.get("_rec")
        if rec is not None and rec["step"] is not None and name in FIELDS:
            rec["writes"].setdefault(rec["step"], set()).add(name)
        object.__setattr__(self, name, value)


def _snapshot(r: Round) -> dict[str, Any]:
    out = {n: copy.copy(object.__getattribute__(r, n)) for n in FIELDS - {"meta"}}
    out["meta"] = dict(object.__getattribute__(r, "meta"))
    return out


@functools.cache
def _run_cached(key: str):
    return _run(SETS[key])


def _run(options: dict[str, Any]):
    """The pipeline run step by step on a recording round: each step's reads, field
    writes and metadata keys, and the round's fields before and after it."""
    opts = DecisionOptions.from_kwargs(**options)
    r = _Tracked.begin(_history(), opts, _domain(), DecisionCache())
    meta = _Meta(r.meta)
    meta.log = {k: {"begin"} for k in r.meta}
    meta.reads = {}
    object.__setattr__(r, "meta", meta)
    rec = {"step": None, "reads": {}, "writes": {}}
    r.__dict__["_rec"] = rec
    steps, before, after = [], {}, {}
    for step in pipeline(opts):
        name = step.__name__
        before[name] = _snapshot(r)
        rec["step"] = meta.step = name
        decision = step(r)
        rec["step"] = None
        after[name] = _snapshot(r)
        steps.append(step)
        if decision is not None:
            after[name]["decision"] = decision
            break
    rec["meta_reads"] = meta.reads
    return opts, steps, rec, meta.log, before, after


@pytest.mark.parametrize("name", list(SETS))
def test_every_field_and_metadata_key_has_one_writer(name) -> None:
    rec, keys = _run_cached(name)[2:4]
    writers: dict[str, set[str]] = {}
    for step, fields in rec["writes"].items():
        for f in fields:
            writers.setdefault(f, set()).add(step)
    shared = {f: sorted(s) for f, s in writers.items() if len(s) > 1}
    assert not shared, f"fields with more than one writer: {shared}"
    shared = {k: sorted(s) for k, s in keys.items() if len(s) > 1}
    assert not shared, f"metadata keys with more than one writer: {shared}"


#: each feature's switches, to ask the features for every step they have
GRID: dict[str, tuple[Any, ...]] = {
    "mode": ("practical", "theory"),
    "restarts": (False, True),
    "cpd_detector": (None, "scale-free"),
    "long_term_constraints": (False, True),
    "constraint_model": (None, "composite"),
    "pending": (
        "ignore",
        "hallucinate",
        "censor",
        "randomized-believer",
        "pessimistic",
    ),
    "algorithm": (None, "qLogNEI"),
    "forgetting": (False, True),
    "trust_region": (None, True),
    "repeats": (None, "avoid"),
}


def _every_step() -> set[str]:
    """The steps of every pipeline over :data:`GRID` (the option sets that can be
    built: some switches exclude others)."""
    every: set[str] = set()
    for values in itertools.product(*GRID.values()):
        kwargs = {k: v for k, v in zip(GRID, values, strict=True) if v is not None}
        if kwargs["pending"] == "censor":
            kwargs["y_min"] = -1.0
        try:
            opts = DecisionOptions.from_kwargs(**kwargs)
        except (ValueError, TypeError):
            continue
        every |= {step.__name__ for step in pipeline(opts)}
    return every


def test_the_sets_run_every_step() -> None:
    every = _every_step()
    assert len(every) >= 20, sorted(every)
    ran = {step.__name__ for name in SETS for step in _run_cached(name)[1]}
    assert every - ran == set()


def _same(a: Any, b: Any, r: Round) -> bool:
    """Equal values (NaN equal to NaN); a model or an acquisition by its state."""
    if isinstance(a, torch.Tensor):
        return (
            isinstance(b, torch.Tensor)
            and a.shape == b.shape
            and torch.allclose(a, b, rtol=0.0, atol=0.0, equal_nan=True)
        )
    if isinstance(a, torch.nn.Module):  # a model or a rule: its state
        # (the pipeline's object was used by the later steps since: buffers made on
        # first use are in its state only, and a QMC sampler's base samples are
        # drawn, from its seed, in the shape of its first use)
        sa, sb = a.state_dict(), b.state_dict()
        keep = [k for k in sb if "sampler.base_samples" not in k]
        return (
            type(a) is type(b)
            and set(sb) <= set(sa)
            and all(_same(sa[k], sb[k], r) for k in keep)
        )
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            _same(getattr(a, f.name), getattr(b, f.name), r)
            for f in dataclasses.fields(a)
        )
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(
            _same(x, y, r) for x, y in zip(a, b, strict=True)
        )
    if callable(a):  # a sampling function of the domain
        return callable(b)
    return a == b


@pytest.mark.parametrize("name", list(SETS))
def test_each_step_runs_on_a_hand_built_round_of_what_it_reads(name) -> None:
    opts, steps, rec, keys, before, after = _run_cached(name)
    for step in steps:
        s = step.__name__
        fresh = Round.begin(_history(), opts, _domain(), DecisionCache())
        for f in rec["reads"].get(s, set()) - {"meta", "opts", "history", "cache"}:
            setattr(fresh, f, copy.copy(before[s][f]))
        for key in rec["meta_reads"].get(s, set()) & set(before[s]["meta"]):
            fresh.meta[key] = before[s]["meta"][key]  # (e.g. the epoch)
        decision = step(fresh)
        for f in rec["writes"].get(s, set()):
            assert _same(after[s][f], getattr(fresh, f), fresh), f"{s} wrote {f}"
        for key in [k for k, who in keys.items() if s in who]:
            assert _same(after[s]["meta"][key], fresh.meta[key], fresh), f"{s}: {key}"
        if "decision" in after[s]:
            assert decision is not None and decision.x == after[s]["decision"].x
