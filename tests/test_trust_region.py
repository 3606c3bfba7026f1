"""Issue 51's practical options for many dimensions: the trust region (the rule kept
to L-inf balls around the model's points, widening with their number, as in
Vizier's GP bandit) and where the GP's fit starts; refused in the theory mode, a
node stored before them replays as it was, and the decision stays in the region."""

from __future__ import annotations

import pytest
import torch
from botorch.acquisition import UpperConfidenceBound
from botorch.models import SingleTaskGP

from botorch_bandits.acquisition.trust_region import (
    TRUST_PENALTY,
    TrustRegionAcquisition,
    linf_distance,
    sample_in_region,
    trust_radius,
)
from botorch_bandits.core import DecisionOptions, Domain, History, TrialRecord, decide
from botorch_bandits.core.decide import pipeline
from botorch_bandits.core.steps.locality import trust_region_step
from botorch_bandits.core.steps.rule import score_step

D = 8


def test_the_radius_widens_with_the_points_and_ends_at_one_half() -> None:
    assert trust_radius(0, D) is None
    assert trust_radius(1, D) == pytest.approx(0.2 + 0.3 / (5 * (D + 1)))
    assert trust_radius(5 * (D + 1) - 1, D) < 0.5
    assert trust_radius(5 * (D + 1), D) is None  # the region is off from 0.5 on
    radii = [trust_radius(n, D) for n in range(1, 5 * (D + 1))]
    assert radii == sorted(radii)


def test_the_acquisition_is_unchanged_inside_and_lowered_outside() -> None:
    X = torch.rand(10, 2, dtype=torch.double)
    model = SingleTaskGP(X, X.sum(-1, keepdim=True)).eval()
    ucb = UpperConfidenceBound(model, beta=4.0)
    points = torch.tensor([[0.5, 0.5]], dtype=torch.double)
    tr = TrustRegionAcquisition(ucb, points, radius=0.1)
    inside = torch.tensor([[[0.55, 0.45]]], dtype=torch.double)
    outside = torch.tensor([[[0.9, 0.5]]], dtype=torch.double)
    assert torch.allclose(tr(inside), ucb(inside))
    # 0.3 beyond the radius: lowered by the penalty times that distance
    with torch.no_grad():
        drop = float(ucb(outside) - tr(outside))
    assert drop == pytest.approx(0.3 * TRUST_PENALTY)
    with pytest.raises(ValueError, match="radius"):
        TrustRegionAcquisition(ucb, points, radius=0.0)


def test_raw_samples_moved_inside_keep_held_coordinates_valid() -> None:
    gen = torch.Generator().manual_seed(0)
    points = torch.tensor([[0.1, 0.9, 0.0], [0.8, 0.2, 1.0]], dtype=torch.double)
    samples = torch.rand(200, 3, dtype=torch.double, generator=gen)
    samples[:, 2] = samples[:, 2].round()  # a held binary coordinate
    out = sample_in_region(samples, points, 0.25, [2], gen)
    assert bool((linf_distance(out, points) <= 0.25 + 1e-12).all())
    assert bool(((out >= 0) & (out <= 1)).all())
    assert set(out[:, 2].tolist()) <= {0.0, 1.0}


def _history(n: int) -> History:
    pts = torch.quasirandom.SobolEngine(D, scramble=True, seed=1).draw(n).double()
    return History(
        trials=tuple(
            TrialRecord(
                index=i,
                x=tuple(x.tolist()),
                f=-float(((x - 0.3) ** 2).sum()),
                created=float(i),
                completed=float(i) + 1.0,
            )
            for i, x in enumerate(pts)
        )
    )


def test_the_step_is_in_the_pipeline_exactly_when_the_option_is_on() -> None:
    # on by default for IGP-UCB in the practical mode (chosen on the development
    # half), off for the other rules and in the theory mode unless asked for
    steps = pipeline(DecisionOptions.from_kwargs())
    assert steps.index(trust_region_step) == steps.index(score_step) - 1
    for kwargs in (
        {"trust_region": False},
        {"algorithm": "GP-TS"},
        {"algorithm": "qLogNEI"},
        {"mode": "theory"},
    ):
        assert trust_region_step not in pipeline(DecisionOptions.from_kwargs(**kwargs))
    assert trust_region_step in pipeline(
        DecisionOptions.from_kwargs(algorithm="GP-TS", trust_region=True)
    )


def test_the_decision_stays_in_the_region_and_records_it() -> None:
    unit = torch.quasirandom.SobolEngine(D, scramble=True, seed=0).draw(256).double()
    history = _history(12)
    opts = DecisionOptions.from_kwargs(seed=3)
    decision = decide(history, opts, Domain.box(unit))
    region = decision.metadata["trust_region"]
    assert region["points"] == 12
    assert region["radius"] == pytest.approx(trust_radius(12, D))
    points = torch.tensor([list(e.x) for e in history.trials], dtype=torch.double)
    x = torch.tensor([decision.x], dtype=torch.double)
    assert float(linf_distance(x, points)) <= region["radius"] + 1e-6
    # without the region the same decision leaves it (the rule seeks the box's
    # far corners from 12 points in 8 dimensions)
    whole = DecisionOptions.from_kwargs(trust_region=False, seed=3)
    free = decide(history, whole, Domain.box(unit))
    far = float(linf_distance(torch.tensor([free.x], dtype=torch.double), points))
    assert far > region["radius"]


def test_the_region_wraps_the_rule_at_the_decision_time_under_forgetting() -> None:
    unit = torch.quasirandom.SobolEngine(D, scramble=True, seed=0).draw(64).double()
    decision = decide(
        _history(12), DecisionOptions.from_kwargs(forgetting=True), Domain.box(unit)
    )
    assert decision.metadata["trust_region"]["points"] == 12
    assert "forgetting" in decision.metadata


def test_a_fit_from_the_prior_ignores_the_warm_start() -> None:
    from dataclasses import replace

    from botorch_bandits.hyperparameters import Hyperparameters

    unit = torch.quasirandom.SobolEngine(D, scramble=True, seed=0).draw(64).double()
    plain = _history(12)
    # a warm start far from where a fit from the priors' modes ends
    odd = replace(plain, warm=Hyperparameters((20.0,) * D, 0.5, 0.0))

    def fit(history: History, start: str) -> list[float]:
        opts = DecisionOptions.from_kwargs(fit_start=start, seed=1)
        return decide(history, opts, Domain.box(unit)).metadata["fit"]["lengthscale"]

    assert fit(odd, "prior") == pytest.approx(fit(plain, "prior"))
    assert fit(odd, "warm") != pytest.approx(fit(plain, "prior"), rel=1e-3)
    assert DecisionOptions.from_kwargs().fit_start == "warm"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mode": "theory", "trust_region": True}, "trust_region=True"),
        ({"mode": "theory", "fit_start": "prior"}, "fit_start='prior'"),
        ({"trust_region": "yes"}, "trust_region='yes'"),
        ({"fit_start": "cold"}, "fit_start='cold'"),
    ],
)
def test_the_options_are_refused_where_unused_or_unknown(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        DecisionOptions.from_kwargs(**kwargs)


def test_a_node_stored_before_the_options_replays_as_it_was() -> None:
    pytest.importorskip("ax")
    from botorch_bandits.ax.storage import bandit_node_from_json

    node = bandit_node_from_json(mode="practical", refit_growth=1.2)
    opts = node.decision_options
    assert (opts.trust_region, opts.fit_start) == (False, "warm")
