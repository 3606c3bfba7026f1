"""A value so far from a metric's others that standardizing erases them (issue 60:
a cost of 1e300 was accepted and the decisions froze on one point; an objective
of 1e300 too) is refused when the experiment is read, naming the trial, the
metric and the value; values of any common scale, and a large but resolvable
outlier, are still read."""

from __future__ import annotations

import pytest

pytest.importorskip("ax")


def _client():
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax import bandit_generation_strategy

    client = Client(random_seed=0)
    client.configure_experiment(
        name="huge",
        parameters=[
            RangeParameterConfig(name=n, parameter_type="float", bounds=(0.0, 1.0))
            for n in ("x1", "x2")
        ],
    )
    client.configure_optimization(objective="f", outcome_constraints=["lat <= 0.2"])
    client.set_generation_strategy(
        bandit_generation_strategy(long_term_constraints=True, seed=0)
    )
    return client


def _run(trials: int, odd: dict[int, dict[str, float]], scale: float = 1.0) -> list:
    """``trials`` trials of f = x1 + 0.1 x2 (times ``scale``) and the cost
    lat = x1, trial ``i``'s values replaced by ``odd[i]``; the points chosen."""
    client = _client()
    points = []
    for _ in range(trials):
        ((index, p),) = client.get_next_trials(max_trials=1).items()
        points += [p["x1"], p["x2"]]
        data = {"f": scale * (p["x1"] + 0.1 * p["x2"]), "lat": p["x1"]}
        client.complete_trial(index, {**data, **odd.get(index, {})})
    return points


@pytest.mark.parametrize("metric", ["lat", "f"])
def test_a_value_of_1e300_is_refused_naming_trial_metric_and_value(metric) -> None:
    """Before: accepted; with lat = 1e300 at trial 7 the next eight trials were
    all at one point (x1 = 0.95, over the budget), the cost's scale 3e299."""
    with pytest.raises(ValueError) as info:
        _run(12, {7: {metric: 1e300}})
    text = str(info.value)
    assert f"trial 7's {metric!r} = 1e+300" in text
    assert "2^30" in text and "mark_trial_abandoned(trial_index=7)" in text


def test_values_of_any_common_scale_and_a_resolvable_outlier_are_read() -> None:
    """The objective x 1e300 throughout (issue 31: any scale) decides as on the unit scale; a
    cost of 1e6 among costs of about 1 is far, but resolved, and read."""
    unit = _run(8, {})
    huge = _run(8, {}, scale=1e300)
    assert huge == pytest.approx(unit, abs=1e-6)
    points = _run(9, {6: {"lat": 1e6}})
    assert len(points) == 18


def test_a_plateau_equal_but_for_rounding_beside_one_value_is_read() -> None:
    """The other values equal but for rounding (0.1 + 0.2 against 0.3, a plateau
    computed two ways) count as equal: one good value beside them is read."""
    from botorch_bandits.ax.reading import check_resolution

    check_resolution("f", [(0, 0.1 + 0.2), (1, 0.3), (2, 0.3), (3, 5.0)])
    check_resolution("f", [(0, 0.0), (1, 0.0), (2, 1.0)])
    with pytest.raises(ValueError, match="trial 3's 'f' = 1e\\+300"):
        check_resolution("f", [(0, 0.2), (1, 0.5), (2, 0.3), (3, 1e300)])
