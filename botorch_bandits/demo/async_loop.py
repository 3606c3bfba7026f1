"""The asynchronous loop of the main job and the online benchmark: trials kept in
flight on a virtual clock (each lasts :func:`duration` ticks, seeded by its index),
completed in virtual-time order, so a run is a function of its seed; a resumed run
rebuilds the clock from the stored trials and makes the same calls
(:func:`run_async`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np

from botorch_bandits.upstream import client_experiment

#: a trial in flight: (its virtual end, the future of its raw data)
InFlight = dict[int, tuple[float, Future]]


def duration(seed: int, trial_index: int) -> int:
    """Virtual ticks the trial takes: 1 + Poisson(2), seeded by the trial index.

    Args:
        seed: The run's seed.
        trial_index: The trial's index.

    Returns:
        The trial's ticks, an integer >= 1 (the same for the same seed and index).

    Example:
        >>> duration(0, trial_index=5)
    """
    return 1 + int(np.random.default_rng([seed, 11, trial_index]).poisson(2.0))


def run_async(
    client: Any,
    evaluate_trial: Callable[[dict, int], Future],
    total: int,
    parallelism: int,
    seed: int,
    on_complete: Callable[[int, float], None] | None = None,
    stop_after: int | None = None,
    durations: Callable[[int, int], float] | None = None,
) -> int:
    """Keep ``parallelism`` trials in flight until ``total`` trials are complete.

    ``evaluate_trial(params, index)`` returns a future of the raw data. Trials that
    are RUNNING in the experiment without a future (a resumed run) are submitted
    again. Completions are processed in virtual-time order (ties: lower index), new
    trials are asked for one at a time -- the same calls in a fresh and in a resumed
    run. ``stop_after``: return after that many completions in this call (tests).
    ``durations(seed, index)``: a trial's virtual ticks (default :func:`duration`).
    Returns the number of completions made.

    Args:
        client: The Ax ``Client`` of the experiment (its optimization config set;
            single-arm trials).
        evaluate_trial: ``evaluate_trial(params, index)``: a future of the trial's
            raw data (a future that raises marks the trial failed, with the error).
        total: The trials to end (completed or failed, the stored ones included).
        parallelism: The most trials in flight at once.
        seed: The seed of the virtual durations.
        on_complete: Called as ``on_complete(index, clock)`` after each completion,
            with the trial's index and virtual end (default ``None``: nothing).
        stop_after: The completions after which to return (default ``None``: run
            until ``total`` trials have ended).
        durations: ``durations(seed, index)``, a trial's virtual ticks (default
            ``None``: :func:`duration`).

    Returns:
        The number of completions made in this call.

    Raises:
        ValueError: If a trial has other than one arm, or a stored trial is neither
            RUNNING, COMPLETED nor FAILED.
        RuntimeError: If no trial is in flight and the strategy proposes none.

    Example:
        >>> pool = ProcessPoolExecutor(3)
        >>> made = run_async(
        ...     client, lambda p, i: pool.submit(evaluate, fn, p, i), total=30,
        ...     parallelism=3, seed=0,
        ... )
    """
    durations = duration if durations is None else durations
    exp = client_experiment(client)
    trials = sorted(exp.trials.values(), key=lambda t: t.index)
    if any(len(t.arms) != 1 for t in trials):
        raise ValueError("The demo loop runs single-arm trials only.")
    done, ends, clock = _virtual_clock(trials, seed, durations)
    _attach_lost_data(client, exp, done, evaluate_trial)
    running = _resubmit_running(trials, ends, evaluate_trial)
    completed = len(done)
    made = 0
    while completed < total:
        start = (clock, seed, durations)
        _fill(client, exp, running, total, parallelism, start, evaluate_trial)
        if not running:
            raise RuntimeError(
                f"No trial in flight and the strategy proposes none ({completed} of "
                f"{total} complete)."
            )
        idx, clock = _complete_next(client, running)
        completed += 1
        made += 1
        if on_complete is not None:
            on_complete(idx, clock)
        if stop_after is not None and made >= stop_after:
            break
    return made


def _virtual_clock(
    trials: Sequence[Any], seed: int, durations: Callable[[int, int], float]
) -> tuple[list[Any], dict[int, float], float]:
    """The trials that ended (completed or failed, by completion time), every
    trial's virtual end and the clock now: a trial starts at the end of the last
    completion stored before it was created."""
    from ax.core.trial_status import TrialStatus

    ends: dict[int, float] = {}
    # completed and failed trials both ended (the loop counts both as done)
    ended = (TrialStatus.COMPLETED, TrialStatus.FAILED)
    done = sorted(
        (t for t in trials if t.status in ended and t.time_completed is not None),
        key=lambda t: t.time_completed,
    )
    start: dict[int, float] = {}
    for t in trials:
        before = [ends[u.index] for u in done if u.time_completed <= t.time_created]
        start[t.index] = max(before) if before else 0.0
        ends[t.index] = start[t.index] + durations(seed, t.index)
    clock = max((ends[t.index] for t in done), default=0.0)
    return done, ends, clock


def _attach_lost_data(
    client: Any,
    exp: Any,
    done: Sequence[Any],
    evaluate_trial: Callable[[dict, int], Future],
) -> None:
    """A kill inside ``complete_trial`` can leave a trial stored COMPLETED without
    its data (Ax saves the data and the status in separate writes): evaluate it
    again (the value is seeded by the trial) and attach the data."""
    from ax.core.trial_status import TrialStatus

    objective = exp.optimization_config.objective.metric_names[0]
    df = exp.lookup_data().df
    have = set(df.loc[df["metric_name"] == objective, "trial_index"].astype(int))
    for t in done:
        if t.status == TrialStatus.COMPLETED and t.index not in have:
            data = evaluate_trial(t.arms[0].parameters, t.index).result()
            client.attach_data(trial_index=t.index, raw_data=data)


def _resubmit_running(
    trials: Sequence[Any],
    ends: dict[int, float],
    evaluate_trial: Callable[[dict, int], Future],
) -> InFlight:
    """The RUNNING trials of a resumed run, evaluated again, at their virtual ends;
    a trial neither running nor ended is refused."""
    from ax.core.trial_status import TrialStatus

    running: InFlight = {}
    for t in trials:
        if t.status == TrialStatus.RUNNING:
            running[t.index] = (
                ends[t.index],
                evaluate_trial(t.arms[0].parameters, t.index),
            )
        elif t.status not in (TrialStatus.COMPLETED, TrialStatus.FAILED):
            raise ValueError(
                f"Trial {t.index} is {t.status.name}; the demo loop resumes RUNNING "
                "and COMPLETED trials only."
            )
    return running


def _fill(
    client: Any,
    exp: Any,
    running: InFlight,
    total: int,
    parallelism: int,
    start: tuple[float, int, Callable[[int, int], float]],
    evaluate_trial: Callable[[dict, int], Future],
) -> None:
    """Ask the strategy for new trials, one at a time, until ``parallelism`` are in
    flight, ``total`` exist or it proposes none (or, with trials in flight, waits
    for their data: Ax's default once its initial trials are out); each starts at
    ``start`` (the clock now, the seed and the durations)."""
    from ax.exceptions.core import DataRequiredError
    from ax.exceptions.generation_strategy import MaxParallelismReachedException

    while len(exp.trials) < total and len(running) < parallelism:
        try:
            new = client.get_next_trials(max_trials=1)
        except (DataRequiredError, MaxParallelismReachedException):
            if not running:
                raise
            break
        if not new:
            break
        for idx, params in new.items():
            clock, seed, durations = start
            end = clock + durations(seed, idx)
            running[idx] = (end, evaluate_trial(params, idx))


def _complete_next(client: Any, running: InFlight) -> tuple[int, float]:
    """Complete the trial that ends first (ties: the lower index) with its data, or
    mark it failed with the error; returns its index and end (the new clock)."""
    idx = min(running, key=lambda i: (running[i][0], i))
    end, future = running.pop(idx)
    try:
        data = future.result()
    except Exception as err:  # recorded on the trial, never dropped silently
        client.mark_trial_failed(trial_index=idx, failed_reason=repr(err))
    else:
        client.complete_trial(trial_index=idx, raw_data=data)
    return idx, end


__all__ = ["duration", "run_async"]
