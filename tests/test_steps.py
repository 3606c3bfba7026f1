"""The decision's steps one at a time (issue 47): each step, run on a round that the
steps before it prepared, writes its own fields and metadata; ``pipeline`` holds a
step exactly when its option is on; the steps end in a decision."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.acquisition.logei import qLogNoisyExpectedImprovement

from botorch_bandits.constraints import ExponentialPenalty, composite_targets
from botorch_bandits.core import (
    DecisionCache,
    DecisionOptions,
    Domain,
    History,
    TrialRecord,
    decide,
)
from botorch_bandits.core.decide import pipeline
from botorch_bandits.core.round import Round
from botorch_bandits.core.steps.avoid import repeats_step
from botorch_bandits.core.steps.constraints import (
    composite_step,
    epoch_step,
    multiplier_step,
)
from botorch_bandits.core.steps.data import exclude_in_flight, sems_step, window_step
from botorch_bandits.core.steps.locality import trust_region_step
from botorch_bandits.core.steps.maximize import finite_maximizer, maximizer
from botorch_bandits.core.steps.model import (
    model_step,
    practical_fit_step,
    theory_fit_step,
)
from botorch_bandits.core.steps.penalty import constraint_fit_step, penalty_step
from botorch_bandits.core.steps.pending import (
    censor_view,
    hallucinate_view,
    ignore_view,
)
from botorch_bandits.core.steps.restarts import (
    residual_step,
    restart_step,
    uniform_step,
)
from botorch_bandits.core.steps.rule import (
    bandit_rule,
    qlognei_rule,
    score_step,
    time_step,
)

D = 2


def _domain(n: int = 32) -> Domain:
    sobol = torch.quasirandom.SobolEngine(D, scramble=True, seed=0)
    return Domain.box(sobol.draw(n, dtype=torch.double))


def _history(n: int = 8, running: int = 0, g: bool = False, on_set: bool = False):
    """``n`` completed trials (on the decision set's rows with ``on_set``), then
    ``running`` in flight; constraint values ``g = x_1 - 0.5`` with ``g``."""
    if on_set:
        pts = _domain().unit[: n + running].tolist()
    else:
        pts = torch.quasirandom.SobolEngine(D, scramble=True, seed=1).draw(n + running)
        pts = pts.double().tolist()
    trials = []
    for i, x in enumerate(pts):
        done = i < n
        f = -sum((v - 0.3) ** 2 for v in x)
        trials.append(
            TrialRecord(
                index=i,
                x=tuple(x),
                f=f if done else None,
                g=(x[0] - 0.5,) if (g and done) else None,
                created=float(i),
                completed=float(i) + 1.0 if done else None,
            )
        )
    return History(trials=tuple(trials), num_constraints=1 if g else 0)


def _round(history: History, until=None, **options) -> Round:
    """A round on ``history`` after the steps of the pipeline before ``until``."""
    opts = DecisionOptions.from_kwargs(**options)
    r = Round.begin(history, opts, _domain(), DecisionCache())
    for step in pipeline(opts):
        if step is until:
            return r
        assert step(r) is None, f"{step.__name__} decided before {until}"
    raise AssertionError(f"{until} is not in the pipeline")


def test_the_pipeline_holds_a_step_exactly_when_its_option_is_on() -> None:
    plain = pipeline(DecisionOptions.from_kwargs(mode="theory"))
    assert plain == (
        exclude_in_flight,
        window_step,
        sems_step,
        theory_fit_step,
        ignore_view,
        model_step,
        bandit_rule,
        score_step,
        maximizer,
    )
    everything = pipeline(
        DecisionOptions.from_kwargs(
            long_term_constraints=True,
            constraint_model="composite",
            restarts=True,
            cpd_detector="scale-free",
            pending="censor",
            window=4,
            y_min=-1.0,
        )
    )
    assert everything == (
        restart_step,
        multiplier_step,
        uniform_step,
        window_step,
        composite_step,
        sems_step,
        practical_fit_step,
        epoch_step,
        repeats_step,
        censor_view,
        model_step,
        bandit_rule,
        trust_region_step,
        score_step,
        maximizer,
    )
    # the practical default detector (residuals: no uniform step) and forgetting
    drift = pipeline(DecisionOptions.from_kwargs(restarts=True, forgetting=True))
    assert drift == (
        residual_step,
        window_step,
        sems_step,
        practical_fit_step,
        repeats_step,
        hallucinate_view,
        model_step,
        bandit_rule,
        time_step,
        trust_region_step,
        score_step,
        maximizer,
    )
    # the practical long-term constraints: a GP per constraint, the penalized rule
    separate = pipeline(DecisionOptions.from_kwargs(long_term_constraints=True))
    assert separate == (
        multiplier_step,
        window_step,
        sems_step,
        practical_fit_step,
        constraint_fit_step,
        repeats_step,
        hallucinate_view,
        model_step,
        bandit_rule,
        penalty_step,
        trust_region_step,
        score_step,
        maximizer,
    )
    views = {
        p: pipeline(DecisionOptions.from_kwargs(pending=p, **kw))[-6]
        for p, kw in (("hallucinate", {}), ("censor", {"y_min": 0.0}))
    }
    assert views == {"hallucinate": hallucinate_view, "censor": censor_view}


def test_the_data_window_keeps_the_most_recent_trials() -> None:
    r = _round(_history(10), until=window_step, model_window=4)
    window_step(r)
    assert r.window_start == 6 and r.meta["model_window_start"] == 6
    assert [e.index for e in r.done] == [6, 7, 8, 9]
    assert r.X0.shape == (4, D) and r.Y0.tolist() == [e.f for e in r.done]


def test_ignore_excludes_the_rows_in_flight() -> None:
    h = _history(4, running=2, on_set=True)
    r = _round(h, until=exclude_in_flight, mode="theory")
    exclude_in_flight(r)
    assert r.busy == [4, 5] and r.meta["excluded_in_flight"] == 2


def test_multipliers_and_composite_targets_of_the_epoch() -> None:
    """Algorithm 2 with epochs of 4: after two completed epochs the multiplier is
    exp(c * mean g) of each, multiplied; the completed trials' targets become
    f - kappa (psi(g) - 1); the epoch's delta is delta / L."""
    h = _history(9, g=True)
    r = _round(h, until=multiplier_step, mode="theory", long_term_constraints=True)
    r.opts = DecisionOptions.from_kwargs(
        mode="theory", long_term_constraints=True, epoch_length=4
    )
    multiplier_step(r)
    g = torch.tensor([[e.g[0]] for e in h.trials[:8]], dtype=torch.double)
    expected = math.exp(max(float(g[:4].mean()), 0.0))  # psi = exp(c x), c = 1
    expected *= math.exp(max(float(g[4:8].mean()), 0.0))
    assert r.meta["epoch"] == 2 and r.meta["epochs_used"] == 2
    assert r.kappa.tolist() == pytest.approx([expected])
    assert "constraint_scale" not in r.meta  # the theory mode: the paper's units
    window_step(r)
    f = r.Y0.clone()
    composite_step(r)
    G = torch.tensor([list(e.g) for e in r.done], dtype=torch.double)
    want = composite_targets(f, G, r.kappa, "multiplicative", ExponentialPenalty())
    assert torch.equal(r.Y_composite, want) and torch.equal(r.targets, want)
    assert torch.equal(r.Y0, f)  # the objective's values, as window_step left them
    sems_step(r)
    theory_fit_step(r)
    epoch_step(r)
    assert r.delta == pytest.approx(0.1 / 3) and r.meta["delta_epoch"] == r.delta


def test_the_practical_fit_standardizes_and_records_its_fit() -> None:
    r = _round(_history(8), until=practical_fit_step)
    practical_fit_step(r)
    Y = r.targets
    assert Y is r.Y_model and not torch.equal(Y, r.Y0)
    assert Y.mean().abs() < 1e-8 and Y.std() == pytest.approx(1.0, abs=1e-8)
    assert r.meta["fit"]["status"] == "fitted" and r.meta["fit"]["n"] == 8
    assert r.hyper is not None and r.R == r.meta["R"] > 0
    assert set(r.meta["standardize"]) == {"mean", "std"}


def test_repeats_are_avoided_under_a_noise_free_fit() -> None:
    r = _round(
        _history(8, running=2),
        until=repeats_step,
        mode="theory",
        noise=1e-3,
        repeats="avoid",
    )
    repeats_step(r)
    assert len(r.evaluated) == 10
    flight, ls = r.apart
    assert flight.shape == (2, D) and ls.tolist() == [0.2]
    for step in pipeline(r.opts)[pipeline(r.opts).index(repeats_step) + 1 :]:
        if step is score_step:
            break
        step(r)
    score_step(r)  # records how many points it keeps out
    assert r.meta["avoided"] == len(r.kept_out) == 10


@pytest.mark.parametrize("pending", ["ignore", "hallucinate", "censor"])
def test_each_pending_view_puts_the_running_trials_its_way(pending) -> None:
    view = {"ignore": ignore_view, "hallucinate": hallucinate_view}.get(
        pending, censor_view
    )
    extra = {"window": 4, "y_min": -1.0} if pending == "censor" else {}
    r = _round(
        _history(6, running=2), until=view, mode="theory", pending=pending, **extra
    )
    view(r)
    if pending == "ignore":
        assert torch.equal(r.X, r.X0) and r.meta["pending"] == 2
    elif pending == "hallucinate":
        assert r.X.shape == (8, D) and r.meta["pending"] == 2
        assert torch.equal(r.Y[:6], r.Y0)  # the running ones at the posterior mean
    else:
        assert r.X.shape == (8, D) and r.meta["censored"] == 2
        assert r.Y[-2:].tolist() == [-1.0, -1.0] and r.recent.shape == (4, D)


def test_score_step_excludes_busy_rows_and_records_the_multiplier() -> None:
    h = _history(4, running=2, on_set=True)
    r = _round(h, until=score_step, mode="theory")
    score_step(r)
    assert r.scores[4] == -math.inf and r.scores[5] == -math.inf
    assert torch.isfinite(r.scores[:4]).all() and r.meta["round"] == 5
    assert r.meta["sigma_multiplier"] > 0
    decision = finite_maximizer(r)
    assert decision.index not in (4, 5) and decision.metadata is r.meta


def test_a_uniform_step_ends_the_round() -> None:
    r = _round(History(), until=uniform_step, mode="theory", restarts=True)
    assert r.uniform  # the first step of GP-UCB-CPD explores uniformly
    decision = uniform_step(r)
    assert decision.uniform and decision.metadata["sigma_multiplier"] is None
    r.uniform = False
    assert uniform_step(r) is None


@pytest.mark.parametrize("mode", ["theory", "practical"])
def test_qlognei_is_a_rule_under_the_same_steps(mode) -> None:
    """BoTorch's qLogNEI as the rule: its baseline is the model's rows, it scores
    the decision set, and the decision is a function of the inputs (seeded QMC)."""
    r = _round(
        _history(8, running=1), until=qlognei_rule, mode=mode, algorithm="qLogNEI"
    )
    qlognei_rule(r)
    assert isinstance(r.acqf, qLogNoisyExpectedImprovement)
    score_step(r)
    assert torch.isfinite(r.scores).all() and r.meta["sigma_multiplier"] is None
    opts = DecisionOptions.from_kwargs(mode=mode, algorithm="qLogNEI")
    a = decide(_history(8, running=1), opts, _domain())
    b = decide(_history(8, running=1), opts, _domain())
    assert a.x == b.x and a.metadata["algorithm"] == "qLogNEI"


@pytest.mark.parametrize(
    "options",
    [
        {},
        {
            "long_term_constraints": True,
            "epoch_length": 4,
            "pending": "censor",
            "window": 4,
            "y_min": -3.0,
            "restarts": True,
        },
    ],
    ids=["plain", "every-extension"],
)
def test_qlognei_runs_in_an_ax_loop_with_the_extensions(options) -> None:
    """``bandit_generation_strategy("qLogNEI", ...)`` in an ``ax.Client`` loop with
    three trials in flight: every trial completes, each bandit decision records
    the rule and its extensions' metadata, and ``beta`` is refused with it."""
    pytest.importorskip("ax")
    from _ax_loop import run_in_flight
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax import bandit_generation_strategy

    with pytest.raises(ValueError, match=r"beta=2\.0 set"):
        bandit_generation_strategy("qLogNEI", beta=2.0)
    client = Client(random_seed=0)
    client.configure_experiment(
        name="qlognei",
        parameters=[
            RangeParameterConfig(name=n, parameter_type="float", bounds=(0.0, 1.0))
            for n in ("x1", "x2")
        ],
    )
    constrained = options.get("long_term_constraints", False)
    client.configure_optimization(
        objective="f", outcome_constraints=["g <= 0"] if constrained else None
    )
    client.set_generation_strategy(bandit_generation_strategy("qLogNEI", **options))

    def data(p: dict, index: int) -> dict:
        f = -((p["x1"] - 0.3) ** 2) - (p["x2"] - 0.7) ** 2
        return {"f": f, "g": p["x1"] - 0.5}

    run_in_flight(client, 14, data, in_flight=3)
    trials = client._experiment.trials
    assert len(trials) == 14 and all(t.status.is_completed for t in trials.values())
    meta = [
        t.generator_runs[0].gen_metadata
        for t in trials.values()
        if t.generator_runs[0]._generation_node_name == "bandit"
    ]
    assert meta and all(m["algorithm"] == "qLogNEI" for m in meta)
    for key in ("kappa", "cpd_restarts", "censored"):
        assert all(
            (key in m) == bool(options) for m in meta if not m.get("cpd_uniform")
        )
