"""The bandit generation strategy in a real ``ax.Client`` loop (trials in flight,
out-of-order completion), its storage, and its guarantees (no Sobol fallback, no
endless loop, arms pulled again)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import deque

import pytest

pytest.importorskip("ax")

from ax import Client, RangeParameterConfig
from ax.core.trial_status import TrialStatus

from botorch_bandits.ax import BanditNode, bandit_generation_strategy


def _objective(p: dict) -> float:
    return math.sin(3 * p["x1"]) * math.cos(2 * p["x2"]) + 0.5 * p["x1"]


def _client(**kwargs) -> Client:
    client = Client(random_seed=0)
    client.configure_experiment(
        name="bandit_test",
        parameters=[
            RangeParameterConfig(name="x1", bounds=(0.0, 1.0), parameter_type="float"),
            RangeParameterConfig(name="x2", bounds=(0.0, 1.0), parameter_type="float"),
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(
        bandit_generation_strategy(num_init=3, num_candidates=128, **kwargs)
    )
    return client


def _run(client: Client, trials: int, in_flight: int = 3, lifo: bool = False) -> None:
    """Keep ``in_flight`` trials running; complete the oldest (or newest) first."""
    running: deque = deque()
    made = 0
    while made < trials or running:
        if made < trials and len(running) < in_flight:
            new = client.get_next_trials(
                max_trials=min(in_flight - len(running), trials - made)
            )
            assert new, "the strategy returned no trial"
            running.extend(new.items())
            made += len(new)
            continue
        idx, params = running.pop() if lifo else running.popleft()
        client.complete_trial(trial_index=idx, raw_data={"f": _objective(params)})


OPTIONS = [
    dict(algorithm="IGP-UCB"),
    dict(algorithm="GP-UCB"),
    dict(algorithm="GP-TS"),
    dict(algorithm="IGP-UCB", pending="hallucinate"),
    dict(algorithm="IGP-UCB", pending="censor", window=4, y_min=-1.5, beta=1.0),
    dict(algorithm="GP-TS", pending="censor", window=4, y_min=-1.5, beta=1.0),
]


@pytest.mark.parametrize(
    "options", OPTIONS, ids=lambda o: "-".join(map(str, o.values()))
)
def test_client_loop_with_three_in_flight(options) -> None:
    client = _client(**options)
    _run(client, 30, in_flight=3, lifo=options.get("pending") == "censor")
    trials = client._experiment.trials
    assert len(trials) == 30
    assert all(t.status == TrialStatus.COMPLETED for t in trials.values())
    nodes = [t.generator_runs[0]._generation_node_name for t in trials.values()]
    keys = [t.generator_runs[0]._generator_key for t in trials.values()]
    assert nodes[:3] == ["Sobol"] * 3 and nodes[3:] == ["bandit"] * 27
    assert "Fallback_Sobol" not in keys  # no silent Sobol fallback
    meta = trials[10].generator_runs[0].gen_metadata
    assert meta["algorithm"] == options["algorithm"]
    assert meta["pending_view"] == options.get("pending", "ignore")
    assert meta["t"] == 11 and meta["sigma_multiplier"] > 0
    # the strategy never loops: the limit call returns
    limit, done = client._generation_strategy.current_generator_run_limit()
    assert limit != 0 and done is False


def test_arms_are_pulled_again() -> None:
    """A bandit re-pulls its best arm (Ax's BO would avoid an observed point)."""
    client = _client(algorithm="IGP-UCB", beta=0.1)
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


def test_json_reload_in_a_new_process_makes_the_same_decision(tmp_path) -> None:
    client = _client(
        algorithm="GP-TS", pending="censor", window=3, beta=1.0, y_min=-1.5
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
