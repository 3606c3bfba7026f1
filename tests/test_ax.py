"""The bandit generation strategy in a real ``ax.Client`` loop (trials in flight,
out-of-order completion), its storage, and its guarantees (no Sobol fallback, no
endless loop, arms pulled again)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

pytest.importorskip("ax")

from _ax_loop import OPTIONS, check_loop_contract, run_in_flight  # tests/ helper
from ax import Client, RangeParameterConfig

from botorch_bandits.ax import BanditNode, bandit_generation_strategy


def _objective(p: dict) -> float:
    return math.sin(3 * p["x1"]) * math.cos(2 * p["x2"]) + 0.5 * p["x1"]


def _client(constraints: bool = False, **kwargs) -> Client:
    client = Client(random_seed=0)
    client.configure_experiment(
        name="bandit_test",
        parameters=[
            RangeParameterConfig(name="x1", bounds=(0.0, 1.0), parameter_type="float"),
            RangeParameterConfig(name="x2", bounds=(0.0, 1.0), parameter_type="float"),
        ],
    )
    client.configure_optimization(
        objective="f", outcome_constraints=["g <= 0"] if constraints else None
    )
    client.set_generation_strategy(
        bandit_generation_strategy(num_init=3, num_candidates=128, **kwargs)
    )
    return client


def _data(params: dict, index: int) -> dict:
    return {"f": _objective(params), "g": params["x1"] - 0.5}


def _run(
    client: Client,
    trials: int,
    in_flight: int = 3,
    lifo: bool = False,
    data=_data,
) -> None:
    run_in_flight(client, trials, data, in_flight=in_flight, lifo=lifo)


# the default run checks this contract over the whole matrix on a box with a linear
# parameter constraint (test_ax_contract); -m slow checks it on the plain box too
@pytest.mark.slow
@pytest.mark.parametrize(
    "options", OPTIONS, ids=lambda o: "-".join(map(str, o.values()))
)
def test_client_loop_with_three_in_flight(options) -> None:
    client = _client(constraints=options.get("long_term_constraints", False), **options)
    _run(client, 30, in_flight=3, lifo=options.get("pending") == "censor")
    check_loop_contract(client, options)


def test_arms_are_pulled_again() -> None:
    """A bandit re-pulls its best arm (Ax's BO would avoid an observed point)."""
    client = _client(algorithm="IGP-UCB", mode="theory", beta=0.1)
    _run(client, 40, in_flight=1)
    names = [t.arms[0].name for t in client._experiment.trials.values()]
    assert len(set(names)) < len(names)


def test_bad_options_are_named() -> None:
    with pytest.raises(ValueError, match="algorithm"):
        BanditNode(algorithm="EI")
    with pytest.raises(ValueError, match="pending"):
        BanditNode(pending="drop")
    with pytest.raises(ValueError, match="window"):
        BanditNode(window=-2)
    with pytest.raises(ValueError, match="num_init"):
        bandit_generation_strategy(num_init=0)


_RESUME = """
import json, math, sys
from ax import Client
import botorch_bandits.ax  # registers the storage of BanditNode
client = Client.load_from_json_file(sys.argv[1])
nxt = client.get_next_trials(max_trials=1)
print(json.dumps(list(nxt.values())[0]))
"""


@pytest.mark.parametrize(
    # the practical mode's reload runs in the default suite through SQLite
    # (test_ax_sqlite); this JSON one with the slow checks
    "mode",
    ["theory", pytest.param("practical", marks=pytest.mark.slow)],
)
def test_json_reload_in_a_new_process_makes_the_same_decision(tmp_path, mode) -> None:
    client = _client(
        algorithm="GP-TS", mode=mode, pending="censor", window=3, beta=1.0, y_min=-1.5
    )
    _run(client, 12, in_flight=3)
    # two trials left running: the reloaded run must see them as pending
    pending = client.get_next_trials(max_trials=2)
    path = tmp_path / "exp.json"
    client.save_to_json_file(str(path))
    out = subprocess.run(
        [sys.executable, "-c", _RESUME, str(path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-2000:]
    resumed = json.loads(out.stdout.strip().splitlines()[-1])
    uninterrupted = next(iter(client.get_next_trials(max_trials=1).values()))
    assert resumed == pytest.approx(uninterrupted)
    assert len(pending) == 2


def _meta(client: Client, index: int) -> dict:
    return client._experiment.trials[index].generator_runs[0].gen_metadata


@pytest.mark.parametrize(
    "rule", ["multiplicative", pytest.param("additive", marks=pytest.mark.slow)]
)
def test_multipliers_are_replayed_from_the_constraint_values(rule) -> None:
    """Every bandit trial's kappa equals Algorithm 2's (3's) replay over the
    completed epochs' constraint values, recomputed here by hand -- in the
    practical mode's units: each value over the spread (population standard
    deviation) of the values observed before the decision, on the standardized
    grid of 2**-30; the additive rule with the practical mode's slack and kappa^1."""
    import torch

    from botorch_bandits.constraints import ExponentialPenalty, replay_multipliers
    from botorch_bandits.core.features.constraints import PRACTICAL_LONG_TERM

    client = _client(
        constraints=True,
        long_term_constraints=True,
        epoch_length=5,
        multiplier_update=rule,
        constraint_model="composite",
        **({"step": 0.5} if rule == "additive" else {}),
    )
    _run(client, 26, in_flight=1)
    trials = client._experiment.trials
    g = torch.tensor(
        [[trials[i].arms[0].parameters["x1"] - 0.5] for i in range(26)],
        dtype=torch.double,
    )
    kw = dict(penalty=ExponentialPenalty(1.0)) if rule == "multiplicative" else {}
    if rule == "additive":
        kw["step"] = 0.5
        kw["slack"] = PRACTICAL_LONG_TERM["slack"]
        kw["initial"] = PRACTICAL_LONG_TERM["initial_multiplier"]
    q = 2.0**-30
    for i in range(3, 26):
        meta = _meta(client, i)
        epoch = i // 5
        spread = float(g[:i].std(correction=0))  # the i trials completed before
        assert meta["constraint_scale"] == pytest.approx([spread], rel=1e-12)
        units = torch.round(g[: 5 * epoch] / spread / q) * q
        expected = replay_multipliers(units, 5, rule, **kw)[-1]
        assert meta["epoch"] == epoch and meta["epochs_used"] == epoch
        assert meta["kappa"] == pytest.approx(expected.tolist(), rel=1e-12)
    assert _meta(client, 25)["kappa"] != _meta(client, 4)["kappa"]


def test_restart_follows_the_change() -> None:
    """The paper's detector in the practical mode, with constants for this scale: a
    flat objective that changes at trial 25: no restart before it, a restart soon
    after, recorded in the metadata; later trials use only the history since
    the restart; uniform-exploration trials are tagged."""

    def data(params: dict, index: int) -> dict:
        return {"f": 0.0 if index < 25 else math.sin(2 * math.pi * params["x1"])}

    client = _client(
        restarts=True,
        beta=1.0,
        cpd_detector="paper",
        cpd_regularization=1.0,
        cpd_threshold_scale=0.05,
    )
    _run(client, 45, in_flight=1, data=data)
    metas = [_meta(client, i) for i in range(3, 45)]
    restarts = metas[-1]["cpd_restarts"]
    assert restarts and all(r >= 25 for r in restarts), restarts
    assert restarts[0] <= 35
    first = restarts[0]
    after = _meta(client, first + 1)
    assert after["cpd_restarts"][0] == first
    assert after["cpd_history"] == 0 and after["cpd_uniform"] is True
    uniform = [i for i in range(3, 45) if _meta(client, i)["cpd_uniform"]]
    assert any(i < 25 for i in uniform) and any(i > first for i in uniform)
    assert first in uniform  # the detector runs over uniform trials only


def test_trial_running_past_its_window_is_censored_and_its_late_value_kept() -> None:
    import time

    client = _client(pending="censor", window_seconds=0.3, y_min=-1.5)
    _run(client, 3, in_flight=3)  # Sobol, completed at once
    ((idx, params),) = client.get_next_trials(max_trials=1).items()
    time.sleep(0.5)  # longer than the window
    client.complete_trial(trial_index=idx, raw_data=_data(params, idx))
    (nxt,) = client.get_next_trials(max_trials=1)
    meta = _meta(client, nxt)
    assert meta["late"] == 1 and meta["censored"] == 1
    # the late value is stored by Ax (not dropped), just not used by the model
    df = client._experiment.lookup_data().df
    assert idx in set(df["trial_index"])


def test_failed_trials_are_left_out_and_counted() -> None:
    client = _client()
    _run(client, 5, in_flight=1)
    ((idx, _),) = client.get_next_trials(max_trials=1).items()
    client.mark_trial_failed(trial_index=idx, failed_reason="simulator crashed")
    (nxt,) = client.get_next_trials(max_trials=1)
    assert _meta(client, nxt)["failed"] == 1


def test_long_term_constraints_need_constraints() -> None:
    client = _client(long_term_constraints=True)
    with pytest.raises(ValueError, match="outcome constraints"):
        _run(client, 5, in_flight=1)


@pytest.mark.parametrize("num_init", [1, 3])
def test_initialize_with_center_makes_the_centre_first(num_init) -> None:
    """Ax's default strategy evaluates the centre of the box first; the option does
    the same: the centre, then num_init - 1 Sobol trials, then the bandit."""
    client = Client(random_seed=0)
    client.configure_experiment(
        name="center_first",
        parameters=[
            RangeParameterConfig(
                name="x1", bounds=(-5.0, 10.0), parameter_type="float"
            ),
            RangeParameterConfig(name="x2", bounds=(0.0, 15.0), parameter_type="float"),
        ],
    )
    client.configure_optimization(objective="f")
    strategy = bandit_generation_strategy(
        num_init=num_init, initialize_with_center=True, num_candidates=64
    )
    assert strategy.name.startswith("Center+")
    client.set_generation_strategy(strategy)
    nodes = []
    for _ in range(num_init + 2):
        (index, params), *_ = client.get_next_trials(max_trials=1).items()
        gr = client._experiment.trials[index].generator_runs[0]
        nodes.append(gr._generation_node_name)
        if index == 0:
            assert params == {"x1": 2.5, "x2": 7.5}
        client.complete_trial(
            index,
            raw_data={
                "f": _objective(
                    {"x1": (params["x1"] + 5) / 15, "x2": params["x2"] / 15}
                )
            },
        )
    assert (
        nodes == ["CenterOfSearchSpace"] + ["Sobol"] * (num_init - 1) + ["bandit"] * 2
    )
    with pytest.raises(ValueError, match=r"initialize_with_center.*'yes'"):
        bandit_generation_strategy(initialize_with_center="yes")


def test_the_practical_mode_starts_at_the_centre_and_the_theory_mode_does_not() -> None:
    """``initialize_with_center=None`` (the default) is on in the practical mode
    (chosen on ax-bench's development half) and off in the theory mode; an explicit
    value wins in either."""
    names = {
        (mode, center): bandit_generation_strategy(
            mode=mode, initialize_with_center=center
        ).name
        for mode in ("practical", "theory")
        for center in (None, True, False)
    }
    assert names == {
        ("practical", None): "Center+Sobol+IGP-UCB (practical)",
        ("practical", True): "Center+Sobol+IGP-UCB (practical)",
        ("practical", False): "Sobol+IGP-UCB (practical)",
        ("theory", None): "Sobol+IGP-UCB",
        ("theory", True): "Center+Sobol+IGP-UCB",
        ("theory", False): "Sobol+IGP-UCB",
    }


def test_a_first_calls_fixed_parameters_hold_for_the_centre() -> None:
    """Ax's centre node ignores a call's fixed parameters; CenterFirst lays them
    over the centre, so no trial of the call breaks them."""
    client = _client()
    made = client.get_next_trials(max_trials=3, fixed_parameters={"x1": 0.2})
    assert [p["x1"] for p in made.values()] == [0.2] * 3
    assert made[0] == {"x1": 0.2, "x2": 0.5}  # the centre in the free coordinate


def test_a_centre_trial_already_there_does_not_block_the_strategy() -> None:
    """An experiment whose first trial is Ax's default's centre, then a centre-first
    strategy with num_init=1: the centre is skipped (already an arm) and the bandit
    decides (the pause used to read as met and blocked every call)."""
    client = _client()
    client.configure_generation_strategy()  # Ax's default
    ((index, params),) = client.get_next_trials(max_trials=1).items()
    assert params == {"x1": 0.5, "x2": 0.5}
    client.complete_trial(index, raw_data={"f": 1.0})
    client.set_generation_strategy(
        bandit_generation_strategy(num_init=1, num_candidates=64)
    )
    for _ in range(2):
        ((index, params),) = client.get_next_trials(max_trials=1).items()
        client.complete_trial(index, raw_data={"f": params["x1"]})
    nodes = [
        t.generator_runs[0]._generation_node_name
        for t in client._experiment.trials.values()
    ]
    assert nodes == ["CenterOfSearchSpace", "bandit", "bandit"]
