"""The pipeline asks each feature for its steps (issue 61): each feature's module
of ``core/steps/`` names the places its steps take, and the places run in the
order of ``decide.PLACES``."""

from __future__ import annotations

import importlib

import pytest

from botorch_bandits.core.decide import FEATURES, PLACES, pipeline
from botorch_bandits.core.options import DecisionOptions

#: option sets and the steps each runs, in order
EXPECTED = {
    "default": (
        {},
        "window_step sems_step practical_fit_step repeats_step hallucinate_view "
        "model_step bandit_rule trust_region_step score_step maximizer",
    ),
    "theory-ignore-paper-restarts": (
        dict(mode="theory", pending="ignore", restarts=True),
        "restart_step exclude_in_flight uniform_step window_step sems_step "
        "theory_fit_step ignore_view model_step bandit_rule score_step maximizer",
    ),
    "separate-constraints-forgetting-qlognei": (
        dict(algorithm="qLogNEI", long_term_constraints=True, forgetting=True),
        "multiplier_step window_step sems_step practical_fit_step "
        "constraint_fit_step repeats_step hallucinate_view model_step qlognei_rule "
        "penalty_step time_step score_step maximizer",
    ),
    "composite-residual-censor": (
        dict(
            restarts=True,
            long_term_constraints=True,
            constraint_model="composite",
            pending="censor",
            y_min=0.0,
            trust_region=False,
        ),
        "residual_step multiplier_step window_step composite_step sems_step "
        "practical_fit_step epoch_step repeats_step censor_view model_step "
        "bandit_rule score_step maximizer",
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_pipeline_runs_each_features_steps_in_place_order(name: str) -> None:
    kwargs, steps = EXPECTED[name]
    opts = DecisionOptions.from_kwargs(**kwargs)
    assert " ".join(s.__name__ for s in pipeline(opts)) == steps


def test_each_feature_takes_only_known_places_and_an_off_feature_none() -> None:
    opts = DecisionOptions.from_kwargs(restarts=True, long_term_constraints=True)
    for feature in FEATURES:
        assert set(feature(opts)) <= set(PLACES)
    plain = DecisionOptions.from_kwargs(trust_region=False, repeats="allow")
    on = {p for f in FEATURES for p in f(plain)}
    assert on == {
        "window",
        "sems",
        "fit",
        "pending",
        "model",
        "rule",
        "score",
        "maximize",
    }


def test_two_features_in_one_place_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def intruder(opts: DecisionOptions) -> dict:
        return {"rule": lambda r: None}

    core_decide = importlib.import_module("botorch_bandits.core.decide")
    monkeypatch.setattr(core_decide, "FEATURES", (*FEATURES, intruder))
    with pytest.raises(AssertionError, match="'rule': taken"):
        pipeline(DecisionOptions())
