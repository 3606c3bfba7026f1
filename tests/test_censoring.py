"""Censoring in the user's units (issue 50): ``y_min`` and ``B_y`` are read in the
metric's units and direction, so a minimized loss with its ceiling censors as the
maximized reward with its floor, and ``a y + b`` (``a > 0``) with ``a y_min + b`` and
``a B_y`` makes the same trials; the practical mode asks for ``y_min``; settings
that cannot work warn (:class:`CensoringWarning`)."""

from __future__ import annotations

import math
import random
import warnings

import pytest

pytest.importorskip("ax")

import torch
from ax import Client, RangeParameterConfig

from botorch_bandits.ax import bandit_generation_strategy
from botorch_bandits.core.history import TrialRecord
from botorch_bandits.core.options import Censoring
from botorch_bandits.core.steps.pending import CensoringWarning, _by_trials
from botorch_bandits.delays import FeedbackLedger


def _reward(params: dict) -> float:
    """A rate in [0, 0.8] peaked at (0.3, 0.7)."""
    d2 = (params["x1"] - 0.3) ** 2 + (params["x2"] - 0.7) ** 2
    return 0.8 * math.exp(-d2 / 0.08)


def _run(
    to_metric, minimize: bool, trials: int = 14, in_flight: int = 3, **options
) -> tuple[list[dict], list[dict]]:
    """An asynchronous loop: ``in_flight`` trials running, the oldest completed
    before the next is asked for; the metric is ``to_metric(reward)``. Returns the
    trials' parameters and metadata."""
    client = Client(random_seed=0)
    client.configure_experiment(
        name="censor",
        parameters=[
            RangeParameterConfig(name=n, parameter_type="float", bounds=(0.0, 1.0))
            for n in ("x1", "x2")
        ],
    )
    client.configure_optimization(objective="-loss" if minimize else "loss")
    client.set_generation_strategy(
        bandit_generation_strategy(pending="censor", seed=0, **options)
    )
    running, made = [], []
    while len(made) < trials:
        while len(running) < in_flight and len(made) < trials:
            ((index, params),) = client.get_next_trials(max_trials=1).items()
            running.append((index, params))
            made.append(params)
        index, params = running.pop(0)
        client.complete_trial(index, {"loss": to_metric(_reward(params))})
    exp = client._experiment
    metas = [exp.trials[i].generator_runs[0].gen_metadata or {} for i in range(trials)]
    return made, metas


def _same(a: list[dict], b: list[dict]) -> None:
    assert len(a) == len(b)
    for p, q in zip(a, b, strict=True):
        assert p == pytest.approx(q, abs=1e-9)


def test_a_minimized_loss_with_its_ceiling_censors_as_the_reward_with_its_floor():
    """loss = 1 - reward, minimized, censored at its worst value 1 makes the same
    trials as the reward maximized and censored at 0 (before issue 50, y_min was
    read on the maximized scale: y_min=1 censored a running trial at the best
    loss)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", CensoringWarning)
        reward, metas = _run(lambda r: r, False, y_min=0.0, window=6)
        loss, _ = _run(lambda r: 1.0 - r, True, y_min=1.0, window=6)
    _same(reward, loss)
    chosen = [m for m in metas if m.get("pending_view") == "censor"]
    assert chosen and all("censoring" in m for m in chosen)
    # the censored value sits below every standardized target
    assert chosen[-1]["censoring"]["y_min"] < -1.0


@pytest.mark.parametrize("B_y", [None, 0.5])
def test_a_y_plus_b_with_the_bounds_mapped_makes_the_same_trials(B_y) -> None:
    """y -> 40 y + 7 with y_min -> 40 y_min + 7 and B_y -> 40 B_y: the same trials
    (the practical censoring is scale- and shift-invariant)."""
    a, b = 40.0, 7.0
    base, _ = _run(lambda r: r, False, y_min=0.0, B_y=B_y, window=6)
    mapped, _ = _run(
        lambda r: a * r + b,
        False,
        y_min=b,
        B_y=None if B_y is None else a * B_y,
        window=6,
    )
    _same(base, mapped)


def test_the_practical_mode_asks_for_y_min_at_construction() -> None:
    with pytest.raises(ValueError, match="pending='censor' needs y_min"):
        bandit_generation_strategy(pending="censor")
    # the theory mode keeps Verma et al.'s shifted targets (censored at 0)
    bandit_generation_strategy(mode="theory", pending="censor")
    with pytest.raises(ValueError, match=r"B_y=0\.5"):
        bandit_generation_strategy(B_y=0.5)  # censoring's bound without censoring


def test_settings_that_cannot_work_warn() -> None:
    """A window below the trials in flight (and so most values arriving after
    it), and a y_min above observed values, each warn by name."""
    with pytest.warns(CensoringWarning) as caught:
        _run(lambda r: r, False, trials=12, in_flight=4, y_min=0.0, window=1)
    text = " ".join(str(w.message) for w in caught)
    assert "window=1" in text and "trials in flight" in text
    assert "arrived after their window" in text
    with pytest.warns(CensoringWarning, match=r"y_min=0\.5 is not the metric's worst"):
        _run(lambda r: r, False, trials=10, y_min=0.5, window=6)


def test_qlognei_decides_with_every_trial_in_flight() -> None:
    """With more workers than initial trials, the bandit node is asked before any
    trial has data; under pending="ignore" qLogNEI's model then has no row (its
    baseline was empty: an error before issue 50) and takes the running trials'
    points as its baseline."""
    client = Client(random_seed=0)
    client.configure_experiment(
        name="busy",
        parameters=[
            RangeParameterConfig(name=n, parameter_type="float", bounds=(0.0, 1.0))
            for n in ("x1", "x2")
        ],
    )
    client.configure_optimization(objective="loss")
    client.set_generation_strategy(
        bandit_generation_strategy(algorithm="qLogNEI", pending="ignore", seed=0)
    )
    made = [client.get_next_trials(max_trials=1) for _ in range(7)]
    assert len({i for m in made for i in m}) == 7
    meta = client._experiment.trials[6].generator_runs[0].gen_metadata
    assert meta["algorithm"] == "qLogNEI" and meta["baseline"] == "in flight"


def test_arrivals_are_counted_as_by_the_trials_created_by_each_completion() -> None:
    """The censored view counts each value's arrival as the trials created by its
    completion, plus one (issue 62: by bisection of the sorted creation times, not
    a sum over them per trial): the same targets as that count made directly,
    with ties, a creation time unknown (NaN: never counted) and values pending."""
    rng = random.Random(0)
    live, targets = [], {}
    for i in range(60):
        created = math.nan if i == 7 else float(rng.randint(0, 40))
        done = rng.random() < 0.8
        completed = created + rng.randint(0, 15) if done else None
        if done and math.isnan(created):
            completed = 30.0
        live.append(
            TrialRecord(
                index=i,
                x=(rng.random(),),
                f=rng.random() if done else None,
                created=created,
                completed=completed,
            )
        )
        if done:
            targets[i] = live[-1].f
    for window in (None, 5, 20):
        opts = Censoring(window=window)
        ledger, now, _ = _by_trials(live, [], targets, -1.0, opts)
        direct = FeedbackLedger(window, -1.0)
        for e in live:
            q = direct.issue(list(e.x))
            if e.f is not None:
                by = sum(c.created <= e.completed for c in live)
                direct.receive(q, targets[e.index], at=max(by + 1, q + 2))
        assert torch.equal(ledger.censored_targets(now), direct.censored_targets(now))
        assert ledger.late() == direct.late()
