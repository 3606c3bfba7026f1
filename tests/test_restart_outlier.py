"""One wrong value is no change point: with ``restarts=True`` (the practical mode's
residual detector) a single corrupted observation -- a trial reported as f + 50 on
a stationary objective -- does not restart the model at that value and drop the
good trials before it (the residual test is repeated without a value far from the
rest, :func:`botorch_bandits.residuals.robust_residual_change`), while a real
change (a shift by a lot, a sign flip) is still found within a few trials."""

from __future__ import annotations

import itertools
import logging

import numpy as np
import pytest
import torch

from botorch_bandits.core import DecisionOptions, Domain, History, TrialRecord
from botorch_bandits.core.round import DecisionCache, Round
from botorch_bandits.core.steps.restarts import residual_step
from botorch_bandits.models import fit_practical_gp, standardize

#: the trial reported as f + 50
SPIKE = 20


def _f(x) -> float:
    """A smooth stationary objective on [0, 1]^3, its maximum 0 at x = 0.4."""
    return -float(np.sum((np.asarray(x, dtype=float) - 0.4) ** 2))


def _step(points: list, values: list[float]) -> dict:
    """The residual detector's step on completed trials at ``points`` with
    ``values`` (no restart so far), with the fit the model step would have
    recorded (a marginal-likelihood fit on all of them): the decision's metadata."""
    X = torch.tensor(points, dtype=torch.double)
    z, _, _ = standardize(torch.tensor(values, dtype=torch.double))
    warm, reason = fit_practical_gp(X, z, None, 0)
    assert warm is not None, reason
    trials = tuple(
        TrialRecord(index=i, x=tuple(x), f=v, created=float(i), completed=i + 1.0)
        for i, (x, v) in enumerate(zip(points, values, strict=True))
    )
    history = History(
        trials=trials, warm=warm, drift={"start": 0, "restarts": [], "detections": []}
    )
    sobol = torch.quasirandom.SobolEngine(3, scramble=True, seed=1)
    domain = Domain.box(sobol.draw(64, dtype=torch.double))
    r = Round.begin(
        history, DecisionOptions.from_kwargs(restarts=True), domain, DecisionCache()
    )
    residual_step(r)
    return r.meta


def _points(after: int) -> list:
    """Twenty-one points near the maximum (trials 0..20), then ``after`` corners of
    the cube: where a model bent by a wrong value at trial 20 sends the rule."""
    sobol = torch.quasirandom.SobolEngine(3, scramble=True, seed=0)
    inner = (0.25 + 0.3 * sobol.draw(SPIKE + 1, dtype=torch.double)).tolist()
    corners = [list(c) for c in itertools.product((0.0, 1.0), repeat=3)]
    return inner + corners[:after]


# ---------------------------------------------------------------- the step
@pytest.mark.parametrize("after", [2, 3])
def test_one_wrong_value_does_not_restart_the_model_at_it(after) -> None:
    """Trial 20 reported as f + 50, then two or three good trials: the rank test of
    the latest residuals fires (the wrong value bends the fit, so the trials after
    it are predicted worse than those before it), but not without that value; the
    model keeps its start (trial 0) and the value is named in ``cpd_test``. Before
    the fix the model restarted at trial 20: it kept the wrong value and dropped
    the twenty good trials before it."""
    points = _points(after)
    values = [_f(x) + (50.0 if i == SPIKE else 0.0) for i, x in enumerate(points)]
    meta = _step(points, values)
    assert meta["cpd_start"] == 0 and meta["cpd_restarts"] == [], meta["cpd_test"]
    test = meta["cpd_test"]
    assert test["fired"] is False and test.get("outlier") == SPIKE, test
    assert test["p_value"] <= 1e-3  # the test alone would have fired


@pytest.mark.parametrize(
    "change",
    [lambda f: f + 50.0, lambda f: f - 1.0],
    ids=["shift-by-50", "shift-by-minus-1"],
)
def test_a_real_change_is_still_found_within_a_few_trials(change) -> None:
    """The objective shifted by 50 (every value after the first out there, as the
    wrong value is) or by -1 (ten times the spread of the values before it, the
    first value after the change far from the rest) for every trial from 20 on: a
    restart within a few trials of the change, at it or after it."""
    found = None
    for after in range(1, 7):
        points = _points(after)
        values = [_f(x) if i < SPIKE else change(_f(x)) for i, x in enumerate(points)]
        meta = _step(points, values)
        if meta["cpd_restarts"]:
            found = after
            break
    assert found is not None and found <= 5, found
    assert SPIKE <= meta["cpd_start"] <= SPIKE + 1, meta["cpd_test"]


# ---------------------------------------------------------------- the rule
def test_the_rule_repeats_the_test_only_without_a_value_far_from_the_rest() -> None:
    from botorch_bandits.residuals import far_from_the_rest, robust_residual_change

    y = torch.tensor([0.0, 1.0, 0.5, 12.0, 0.2])
    assert far_from_the_rest(y, 3) and not far_from_the_rest(y, 1)
    assert far_from_the_rest(100.0 * y + 7.0, 3)  # free of the units
    assert not far_from_the_rest(torch.tensor([3.0]), 0)

    z = torch.tensor(np.random.default_rng(3).normal(size=30))
    z[-3:] = torch.tensor([40.0, 9.0, 10.0])  # fires: a run of three
    y = torch.tensor(np.random.default_rng(4).normal(size=30))
    y[-3] = 100.0  # the most extreme value, far from the rest
    asked: list[int] = []

    def quiet(i: int) -> torch.Tensor:  # without it, nothing shows
        asked.append(i)
        return torch.tensor(np.random.default_rng(5).normal(size=29))

    test = robust_residual_change(z, 1e-3, y, quiet)
    assert asked == [27] and not test.fired and test.outlier == 27
    assert test.p_value <= 1e-3  # the first test's, which fired

    def loud(i: int) -> torch.Tensor:  # without it, the later ones still show
        out = torch.tensor(np.random.default_rng(5).normal(size=29))
        out[-4:] = torch.tensor([8.0, 9.0, 10.0, 11.0])
        return out

    test = robust_residual_change(z, 1e-3, y, loud)
    # dated by the repeat: its run of four begins before the value left out
    assert test.fired and test.outlier == 27 and test.run == 5
    assert test.reference == 25

    y[-3] = 1.0  # not far from the rest: the first test's verdict, no repeat
    asked.clear()
    test = robust_residual_change(z, 1e-3, y, quiet)
    assert test.fired and asked == [] and test.outlier is None


# ---------------------------------------------------------------- an Ax loop
def test_an_ax_loop_with_one_wrong_value_keeps_the_good_trials() -> None:
    """``restarts=True`` through ax.Client on a stationary 3-D objective, trial 20
    reported as f + 50, 32 trials one at a time: no decision after it starts the
    model at trial 20 or later (dropping the twenty good trials before it), and
    the decisions that set the value aside name it. Before the fix the model
    restarted at trial 20 three trials later."""
    pytest.importorskip("ax")
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax import bandit_generation_strategy, decision_table

    names = ("x1", "x2", "x3")
    logging.getLogger("ax").setLevel(logging.WARNING)
    client = Client(random_seed=0)
    client.configure_experiment(
        name="spike",
        parameters=[
            RangeParameterConfig(name=n, bounds=(0.0, 1.0), parameter_type="float")
            for n in names
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(bandit_generation_strategy(restarts=True))
    for _ in range(32):
        ((index, params),) = client.get_next_trials(max_trials=1).items()
        value = _f([params[n] for n in names]) + (50.0 if index == SPIKE else 0.0)
        client.complete_trial(trial_index=index, raw_data={"f": value})
    table = decision_table(client)
    after = table.loc[SPIKE + 1 :]
    assert len(after) == 32 - SPIKE - 1
    starts = after["cpd_start"].tolist()
    assert all(s < SPIKE for s in starts), starts
    assert all(r == [] or min(r) < SPIKE for r in after["cpd_restarts"])
    named = after["cpd_test.outlier"].dropna() if "cpd_test.outlier" in after else []
    assert len(named) and set(named) == {SPIKE}, named


def test_past_sparse_after_the_test_reads_the_last_trials_only() -> None:
    """Past ``sparse_after`` completed trials since the start the residual test
    reads the last ``sparse_after`` of them (issue 62: all of them cost a
    factorization of their number cubed at every decision): the same test as on a
    history holding only those, and the whole one without the cap."""
    rng = np.random.default_rng(3)
    points = rng.uniform(size=(40, 3)).tolist()
    values = [_f(x) + 0.01 * rng.standard_normal() for x in points]
    X = torch.tensor(points, dtype=torch.double)
    z, _, _ = standardize(torch.tensor(values, dtype=torch.double))
    warm, _ = fit_practical_gp(X, z, None, 0)
    sobol = torch.quasirandom.SobolEngine(3, scramble=True, seed=1)
    domain = Domain.box(sobol.draw(64, dtype=torch.double))

    def test_of(first: int, sparse_after) -> dict:
        trials = tuple(
            TrialRecord(index=i, x=tuple(x), f=v, created=float(i), completed=i + 1.0)
            for i, (x, v) in enumerate(zip(points, values, strict=True))
            if i >= first
        )
        history = History(
            trials=trials,
            warm=warm,
            drift={"start": first, "restarts": [], "detections": []},
        )
        opts = DecisionOptions.from_kwargs(restarts=True, sparse_after=sparse_after)
        r = Round.begin(history, opts, domain, DecisionCache())
        residual_step(r)
        return r.meta["cpd_test"]

    capped = test_of(0, 25)
    assert capped["reference"] + capped["run"] == 25
    assert capped == test_of(15, 25) == test_of(15, None)
    whole = test_of(0, None)
    assert whole["reference"] + whole["run"] == 40
