"""The bandit strategy on an experiment that already holds trials (issue 46):
trials attached with ``client.attach_trial`` count toward the initial trials (Ax's
``use_existing_trials_for_initialization``), and a parameter added to the search
space after trials exist (Ax's ``add_parameters_to_search_space`` with a
``backfill_value``) gives the earlier trials its backfill value."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("ax")

from ax import Client, RangeParameterConfig
from ax.core.parameter import ParameterType, RangeParameter

from botorch_bandits.ax import bandit_generation_strategy


def _client(mode: str, **options) -> Client:
    client = Client(random_seed=0)
    client.configure_experiment(
        name="existing",
        parameters=[
            RangeParameterConfig(name=n, parameter_type="float", bounds=(0.0, 1.0))
            for n in ("x1", "x2")
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(bandit_generation_strategy(mode=mode, **options))
    return client


def _f(p: dict) -> float:
    return (
        -((p["x1"] - 0.3) ** 2) - (p["x2"] - 0.6) ** 2 - (p.get("x3", 0.5) - 0.2) ** 2
    )


def _nodes(client: Client, indices) -> list[str]:
    trials = client._experiment.trials
    return [trials[i].generator_runs[0]._generation_node_name for i in indices]


def _attach(client: Client, n: int) -> None:
    for k in range(n):
        p = {"x1": (0.37 * k) % 1.0, "x2": (0.61 * k + 0.1) % 1.0}
        index = client.attach_trial(p)
        client.complete_trial(index, {"f": _f(p)})


@pytest.mark.parametrize("mode", ["practical", "theory"])
def test_attached_trials_count_toward_the_initial_trials(mode) -> None:
    """Before: 23 attached completed trials, then the centre and Sobol trials
    anyway. Now the centre is skipped and the initial budget is met by the
    attached trials (the practical mode's strategy still makes one Sobol trial
    when it moves past the skipped centre, as Ax's default strategy does)."""
    client = _client(mode)
    _attach(client, 23)
    new = client.get_next_trials(max_trials=3)
    nodes = _nodes(client, new)
    assert "CenterOfSearchSpace" not in nodes
    assert nodes.count("Sobol") <= (1 if mode == "practical" else 0), nodes
    assert nodes[-1] == "bandit"
    # a few attached trials: the strategy makes the rest of the budget (5 / 3)
    client = _client(mode)
    _attach(client, 2)
    first = client.get_next_trials(max_trials=5)
    assert _nodes(client, first) == ["Sobol"] * (3 if mode == "practical" else 1)
    # the option off: the strategy makes its own initial trials whatever exists
    client = _client(mode, use_existing_trials_for_initialization=False)
    _attach(client, 23)
    own = _nodes(client, client.get_next_trials(max_trials=3))
    assert own == (
        ["CenterOfSearchSpace", "Sobol", "Sobol"]
        if mode == "practical"
        else ["Sobol"] * 3
    )


def test_the_option_is_checked_when_the_strategy_is_built() -> None:
    with pytest.raises(ValueError, match="`use_existing_trials_for_initialization`"):
        bandit_generation_strategy(use_existing_trials_for_initialization="yes")


@pytest.mark.parametrize("mode", ["practical", "theory"])
def test_a_parameter_added_later_takes_its_backfill_value(mode) -> None:
    """Before: ``KeyError: 'x3'`` from ``ax/space.py`` at the next decision."""
    client = _client(mode)
    for _ in range(6):
        (index, p), *_ = client.get_next_trials(max_trials=1).items()
        client.complete_trial(index, {"f": _f(p)})
    client._experiment.add_parameters_to_search_space(
        [
            RangeParameter(
                name="x3",
                parameter_type=ParameterType.FLOAT,
                lower=0.0,
                upper=1.0,
                backfill_value=0.5,
            )
        ]
    )
    for _ in range(3):
        (index, p), *_ = client.get_next_trials(max_trials=1).items()
        assert set(p) == {"x1", "x2", "x3"} and 0.0 <= p["x3"] <= 1.0
        client.complete_trial(index, {"f": _f(p)})
    meta = client._experiment.trials[8].generator_runs[0].gen_metadata
    # every earlier trial is in the model (none left out as outside the space)
    assert meta.get("out_of_design", 0) == 0 and meta["t"] == 9
    if mode == "practical":
        assert len(meta["fit"]["lengthscale"]) == 3
    # the node's coordinates of an earlier trial: x3 at its backfill value
    node = client._generation_strategy.nodes_by_name["bandit"]
    space = node.space(client._experiment)
    old = client._experiment.trials[2].arms[0].parameters
    assert "x3" not in old
    x = space.coordinates([old])[0].tolist()
    assert math.isclose(x[space.names.index("x3")], 0.5)
