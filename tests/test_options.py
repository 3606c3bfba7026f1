"""The typed options (issue 61): every field of :class:`DecisionOptions` and of its
groups is checked at construction, the dataclass defaults are ``from_kwargs()``'s,
the flat keywords are generated from the fields, the feature objects pass as
themselves, and stored nodes carry a schema version."""

from __future__ import annotations

import dataclasses

import pytest

from botorch_bandits.core import (
    Censoring,
    DecisionOptions,
    LongTermConstraints,
    Restarts,
    TheoryModel,
)
from botorch_bandits.core.features.model import Refit
from botorch_bandits.core.options import FLAT_DEFAULTS, FLAT_FIELDS

#: a bad value of every field, by (class, field): each must raise at construction
BAD: dict[tuple[type, str], object] = {
    (DecisionOptions, "algorithm"): "nonsense",
    (DecisionOptions, "mode"): "fast",
    (DecisionOptions, "pending"): "nope",
    (DecisionOptions, "optimizer"): "adam",
    (DecisionOptions, "beta"): -1.0,
    (DecisionOptions, "B"): float("nan"),
    (DecisionOptions, "R"): -0.1,
    (DecisionOptions, "delta"): 1.0,
    (DecisionOptions, "num_candidates"): 0,
    (DecisionOptions, "seed"): -1,
    (DecisionOptions, "theory"): TheoryModel(),  # in the practical mode
    (DecisionOptions, "censoring"): None,
    (DecisionOptions, "constraints"): "on",
    (DecisionOptions, "restarts"): True,
    (DecisionOptions, "repeats"): "never",
    (DecisionOptions, "model_window"): 0,
    (DecisionOptions, "forgetting"): "yes",
    (DecisionOptions, "refit"): None,  # in the practical mode
    (DecisionOptions, "sparse_after"): 0,
    (DecisionOptions, "sparse_size"): 2.5,
    (DecisionOptions, "sems"): "sometimes",
    (DecisionOptions, "fit_out_of_design"): 1,
    (DecisionOptions, "trust_region"): None,
    (DecisionOptions, "fit_start"): "cold",
    (TheoryModel, "kernel"): "matern32",
    (TheoryModel, "lengthscale"): 0.0,
    (TheoryModel, "noise"): -1e-2,
    (TheoryModel, "hyperparameters"): "learned",
    (Censoring, "window"): -1,
    (Censoring, "window_seconds"): 0.0,
    (Censoring, "y_min"): float("inf"),
    (Censoring, "B_y"): -1.0,
    (LongTermConstraints, "epoch_length"): 0,
    (LongTermConstraints, "multiplier_update"): "exponential",
    (LongTermConstraints, "penalty_c"): 0.0,
    (LongTermConstraints, "step"): -0.5,
    (LongTermConstraints, "num_epochs"): 0,
    (LongTermConstraints, "slack"): -0.1,
    (LongTermConstraints, "initial"): -1.0,
    (LongTermConstraints, "model"): "joint",
    (Restarts, "xi"): -1.0,
    (Restarts, "regularization"): 20.0,  # the residual detector reads none
    (Restarts, "threshold_scale"): 2.6,
    (Restarts, "alpha"): 0.0,
    (Restarts, "detector"): "cusum",
    (Restarts, "false_alarm"): 1.5,
    (Restarts, "max_uniform_share"): 0.2,
    (Refit, "after"): -1,
    (Refit, "growth"): 0.5,
}
CLASSES = (
    DecisionOptions,
    TheoryModel,
    Censoring,
    LongTermConstraints,
    Restarts,
    Refit,
)


def test_the_table_has_a_bad_value_for_every_field() -> None:
    fields = {(c, f.name) for c in CLASSES for f in dataclasses.fields(c)}
    assert fields == set(BAD)


@pytest.mark.parametrize(
    ("cls", "name"), list(BAD), ids=[f"{c.__name__}.{n}" for c, n in BAD]
)
def test_every_invalid_field_raises_at_construction(cls, name) -> None:
    value = BAD[(cls, name)]
    with pytest.raises(ValueError) as err:
        cls(**{name: value})
    assert repr(value) in str(err.value) or str(value) in str(err.value)


def test_the_message_names_the_option_and_suggests_the_closest() -> None:
    with pytest.raises(ValueError, match=r"`algorithm` must be one of .*nonsense"):
        DecisionOptions(algorithm="nonsense")
    with pytest.raises(ValueError, match="Did you mean 'hallucinate'"):
        DecisionOptions(pending="halucinate")


def test_the_dataclass_defaults_are_from_kwargs_defaults() -> None:
    assert DecisionOptions() == DecisionOptions.from_kwargs()
    assert Censoring() == DecisionOptions.from_kwargs().censoring
    assert Restarts() == DecisionOptions.from_kwargs(restarts=True).restarts
    got = DecisionOptions.from_kwargs(long_term_constraints=True).constraints
    assert LongTermConstraints() == got
    assert Refit() == DecisionOptions.from_kwargs().refit


def test_each_mode_defaults_of_a_feature_are_its_for_mode() -> None:
    theory = DecisionOptions.from_kwargs(mode="theory", restarts=True)
    assert theory.restarts == Restarts.for_mode("theory")
    assert theory.theory == TheoryModel()
    both = DecisionOptions.from_kwargs(mode="theory", long_term_constraints=True)
    assert both.constraints == LongTermConstraints.for_mode("theory")
    censor = DecisionOptions.from_kwargs(mode="theory", pending="censor")
    assert censor.censoring == Censoring.for_mode("theory")
    ts = DecisionOptions.from_kwargs(algorithm="GP-TS", long_term_constraints=True)
    assert ts.constraints == LongTermConstraints.for_mode("practical", "GP-TS")
    scale_free = DecisionOptions.from_kwargs(restarts=True, cpd_detector="scale-free")
    assert scale_free.restarts == Restarts.for_mode("practical", "scale-free")


def test_the_combinations_are_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="needs theory=TheoryModel"):
        DecisionOptions(mode="theory", refit=None, trust_region=False)
    with pytest.raises(ValueError, match="options of the practical mode"):
        DecisionOptions(mode="theory", theory=TheoryModel(), trust_region=False)
    with pytest.raises(ValueError, match="the paper's detector"):
        DecisionOptions(
            mode="theory",
            theory=TheoryModel(),
            refit=None,
            trust_region=False,
            restarts=Restarts(),
        )
    with pytest.raises(ValueError, match="qLogNEI"):
        DecisionOptions(algorithm="qLogNEI", beta=2.0)
    # a valid theory-mode object, built by hand, is the one from_kwargs builds
    hand = DecisionOptions(
        mode="theory",
        theory=TheoryModel(),
        pending="ignore",
        optimizer="finite",
        B=1.0,
        R=0.1,
        repeats="allow",
        refit=None,
        sparse_after=None,
        sparse_size=None,
        trust_region=False,
        censoring=Censoring.for_mode("theory"),
    )
    assert hand == DecisionOptions.from_kwargs(mode="theory")


def test_the_flat_keywords_are_read_off_the_fields() -> None:
    top = {f.name for f in dataclasses.fields(DecisionOptions)}
    groups = {
        f.name: f.metadata["group"]
        for f in dataclasses.fields(DecisionOptions)
        if f.metadata.get("group")
    }
    for flat_name, (group, name) in FLAT_FIELDS.items():
        if group is None:
            assert name in top and name == flat_name
        elif name is not None:
            assert name in {g.name for g in dataclasses.fields(groups[group])}
    every = {(g, n) for g, n in FLAT_FIELDS.values()}
    assert len(every) == len(FLAT_FIELDS) == len(FLAT_DEFAULTS)
    # each flat keyword sets the field it names
    cases = {
        "cpd_false_alarm": ({"restarts": True}, 1e-4, ("restarts", "false_alarm")),
        "initial_multiplier": (
            {"long_term_constraints": True},
            0.5,
            ("constraints", "initial"),
        ),
        "constraint_model": (
            {"long_term_constraints": True},
            "composite",
            ("constraints", "model"),
        ),
        "refit_growth": ({}, 1.5, ("refit", "growth")),
        "window": ({"pending": "censor", "y_min": 0.0}, 4, ("censoring", "window")),
        "lengthscale": ({"mode": "theory"}, 0.3, ("theory", "lengthscale")),
    }
    for flat_name, (extra, value, (group, name)) in cases.items():
        assert FLAT_FIELDS[flat_name] == (group, name)
        opts = DecisionOptions.from_kwargs(**extra, **{flat_name: value})
        assert getattr(getattr(opts, group), name) == value


def test_a_feature_object_passes_as_itself() -> None:
    obj = DecisionOptions.from_kwargs(restarts=Restarts(false_alarm=1e-4))
    flat = DecisionOptions.from_kwargs(restarts=True, cpd_false_alarm=1e-4)
    assert obj == flat and obj.restarts == Restarts(false_alarm=1e-4)
    paper = Restarts.for_mode("theory")
    obj = DecisionOptions.from_kwargs(mode="theory", restarts=paper)
    assert obj == DecisionOptions.from_kwargs(mode="theory", restarts=True)
    lt = LongTermConstraints(slack=0.2)
    obj = DecisionOptions.from_kwargs(long_term_constraints=lt)
    assert obj.constraints == lt
    with pytest.raises(ValueError, match="not both"):
        DecisionOptions.from_kwargs(
            restarts=Restarts(false_alarm=1e-4), cpd_false_alarm=1e-2
        )


def test_a_stored_node_carries_its_schema_and_migrates_from_none() -> None:
    pytest.importorskip("ax")
    from botorch_bandits.ax import BanditNode
    from botorch_bandits.ax.storage import (
        SCHEMA_VERSION,
        bandit_node_from_json,
        bandit_node_to_dict,
    )

    node = BanditNode(restarts=True)
    stored = bandit_node_to_dict(node)
    assert stored["schema"] == SCHEMA_VERSION
    stored.pop("__type")
    again = bandit_node_from_json(**dict(stored))
    assert again.decision_options == node.decision_options
    # schema 0 (no version): a practical node from before the refit schedule
    old = dict(stored)
    del old["schema"], old["refit_growth"], old["trust_region"]
    migrated = bandit_node_from_json(**old).decision_options
    assert migrated.refit == Refit(after=100, growth=1.0)
    assert migrated.trust_region is False
    with pytest.raises(ValueError, match="schema 99"):
        bandit_node_from_json(**{**stored, "schema": 99})


def test_the_reference_shows_every_option_with_its_default() -> None:
    pytest.importorskip("ax")
    from botorch_bandits.ax import BanditNode, bandit_generation_strategy

    for doc in (BanditNode.__doc__, bandit_generation_strategy.__doc__):
        for name in FLAT_DEFAULTS:
            (line,) = [
                x for x in doc.splitlines() if x.strip().startswith(f"- ``{name}``")
            ]
            assert "default" in line
    assert "``'residual'`` (theory: ``'paper'``)" in BanditNode.__doc__
