"""Shared by the Ax tests: the loop that keeps trials in flight, the option matrix
of the bandit strategy (each option alone and combined) and the contract every
loop over it keeps."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any


def run_in_flight(
    client: Any,
    trials: int,
    data: Callable[[dict, int], dict],
    in_flight: int = 3,
    lifo: bool = False,
) -> None:
    """Keep ``in_flight`` trials running until ``trials`` are made; complete the
    oldest (or, with ``lifo``, the newest) first with ``data(params, index)``."""
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
        client.complete_trial(trial_index=idx, raw_data=data(params, idx))


#: constraints + censoring + restarts combined: every option group in one node
ALL_GROUPS = dict(
    algorithm="IGP-UCB",
    long_term_constraints=True,
    epoch_length=5,
    pending="censor",
    window=4,
    y_min=-3.0,
    beta=1.0,
    restarts=True,
)

_MATRIX = [
    dict(algorithm="IGP-UCB"),
    dict(algorithm="GP-UCB"),
    dict(algorithm="GP-TS"),
    dict(algorithm="IGP-UCB", pending="hallucinate"),
    dict(algorithm="IGP-UCB", pending="censor", window=4, y_min=-1.5, beta=1.0),
    dict(algorithm="GP-TS", pending="censor", window=4, y_min=-1.5, beta=1.0),
    dict(algorithm="IGP-UCB", pending="censor", window_seconds=0.05, y_min=-1.5),
    dict(algorithm="IGP-UCB", long_term_constraints=True, epoch_length=5),
    dict(algorithm="GP-TS", long_term_constraints=True, multiplier_update="additive"),
    dict(algorithm="IGP-UCB", restarts=True, beta=1.0),
    ALL_GROUPS,
]

#: the option matrix in both modes: the theory mode (fixed kernel, finite decision
#: set; plus its marginal-likelihood option) and the practical mode (fitted GP on
#: standardized targets, gradient optimizer)
OPTIONS = [
    *({"mode": "theory", **o} for o in _MATRIX),
    {"mode": "theory", "algorithm": "IGP-UCB", "hyperparameters": "fitted"},
    *({"mode": "practical", **o} for o in _MATRIX),
]


def resolved_pending(options: dict) -> str:
    """The pending rule a node built with ``options`` uses (the mode's default)."""
    default = (
        "hallucinate" if options.get("mode", "practical") == "practical" else "ignore"
    )
    return options.get("pending", default)


def initial_nodes(options: dict, num_init: int = 3) -> list[str]:
    """The nodes of the ``num_init`` initial trials of a strategy built with
    ``options``: the practical mode's first is the search space's centre."""
    center = options.get("initialize_with_center")
    if center is None:
        center = options.get("mode", "practical") == "practical"
    if center:
        return ["CenterOfSearchSpace"] + ["Sobol"] * (num_init - 1)
    return ["Sobol"] * num_init


def check_loop_contract(client: Any, options: dict, trials: int = 30) -> None:
    """What a loop of ``trials`` (3 initial trials, then the bandit node) keeps for every
    option set: each trial completed, no Sobol fallback, the decision's metadata
    (algorithm, pending view, round, the option groups' keys, the practical mode's
    fit and optimizer), and a strategy that never loops."""
    from ax.core.trial_status import TrialStatus

    ts = client._experiment.trials
    assert len(ts) == trials
    assert all(t.status == TrialStatus.COMPLETED for t in ts.values())
    nodes = [t.generator_runs[0]._generation_node_name for t in ts.values()]
    keys = [t.generator_runs[0]._generator_key for t in ts.values()]
    assert nodes[:3] == initial_nodes(options) and nodes[3:] == ["bandit"] * (
        trials - 3
    )
    assert "Fallback_Sobol" not in keys  # no silent Sobol fallback
    meta = ts[10].generator_runs[0].gen_metadata
    assert meta["algorithm"] == options["algorithm"]
    assert meta["pending_view"] == resolved_pending(options)
    assert meta["t"] == 11
    if not meta.get("cpd_uniform"):
        assert meta["sigma_multiplier"] > 0
    for key, present in (
        ("kappa", "long_term_constraints"),
        ("cpd_restarts", "restarts"),
        ("fitted", "hyperparameters"),
    ):
        assert (key in meta) == (present in options)
    if options["mode"] == "practical" and not meta.get("cpd_uniform"):
        # the practical mode's fit and optimizer, recorded for every decision
        assert meta["fit"]["status"] == "fitted"
        assert len(meta["fit"]["lengthscale"]) == 2
        # (SLSQP: kept apart from the points in flight under a noise-free fit)
        assert meta["optimizer"] in ("L-BFGS-B", "SLSQP", "decision set")
    # the strategy never loops: the limit call returns
    limit, done = client._generation_strategy.current_generator_run_limit()
    assert limit != 0 and done is False
