"""The pending rules added on the imputation view (issue 61): the randomized kriging
believer (Sugiura, Takeuchi & Takeno 2026) and pessimistic imputation (Volk et al.
2026), each on its own step, in a custom loop through ``decide`` and in an Ax loop."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.models import SingleTaskGP

from botorch_bandits.core import (
    DecisionCache,
    DecisionOptions,
    Domain,
    History,
    TrialRecord,
    decide,
)
from botorch_bandits.core.round import Round
from botorch_bandits.core.steps.randomized import (
    posterior_draw,
    randomized_believer_view,
)

D = 2


def _history(n: int = 6, running: int = 2) -> History:
    pts = torch.quasirandom.SobolEngine(D, scramble=True, seed=1).draw(n + running)
    trials = []
    for i, x in enumerate(pts.double().tolist()):
        done = i < n
        f = -sum((v - 0.3) ** 2 for v in x)
        trials.append(
            TrialRecord(
                index=i,
                x=tuple(x),
                f=f if done else None,
                created=float(i),
                completed=float(i) + 1.0 if done else None,
            )
        )
    return History(trials=tuple(trials))


def _domain() -> Domain:
    sobol = torch.quasirandom.SobolEngine(D, scramble=True, seed=0)
    return Domain.box(sobol.draw(32, dtype=torch.double))


def _prepared(pending: str) -> Round:
    """A round built by hand as the view expects it (the completed trials' data,
    targets and hyperparameters set), without the steps before the view."""
    opts = DecisionOptions.from_kwargs(mode="theory", pending=pending)
    r = Round.begin(_history(), opts, _domain(), DecisionCache())
    r.H = list(r.active)
    r.done = [e for e in r.H if e.f is not None]
    r.X0 = r.inputs(r.done)
    r.Y0 = torch.tensor([e.f for e in r.done], dtype=torch.double)
    return r


def test_the_draw_has_the_posterior_mean_and_covariance() -> None:
    torch.manual_seed(0)
    X = torch.rand(8, D, dtype=torch.double)
    model = SingleTaskGP(X, torch.sin(6 * X).sum(-1, keepdim=True))
    Xp = torch.rand(3, D, dtype=torch.double)
    draws = torch.stack([posterior_draw(model, Xp, None, s) for s in range(4000)])
    post = model.posterior(Xp)
    mean = post.mean.reshape(-1).detach()
    cov = post.distribution.covariance_matrix.detach()
    se = (cov.diagonal() / 4000).sqrt()
    assert torch.all((draws.mean(0) - mean).abs() < 4 * se)
    emp = torch.cov(draws.T)
    assert torch.allclose(
        emp, cov, atol=4 * float(cov.diagonal().max()) / math.sqrt(4000)
    )
    # a seed is a draw: the same seed, the same values
    assert torch.equal(
        posterior_draw(model, Xp, None, 7), posterior_draw(model, Xp, None, 7)
    )


def test_the_randomized_believer_imputes_a_draw_seeded_by_the_decision() -> None:
    r = _prepared("randomized-believer")
    randomized_believer_view(r)
    assert r.X.shape == (8, D) and r.meta["pending"] == 2
    assert torch.equal(r.Y[:6], r.Y0)
    again = _prepared("randomized-believer")
    randomized_believer_view(again)
    assert torch.equal(r.Y, again.Y)  # reproducible: seeded by seed and position
    kb = _prepared("hallucinate")
    from botorch_bandits.core.steps.pending import hallucinate_view

    hallucinate_view(kb)
    assert not torch.equal(r.Y[6:], kb.Y[6:])  # a draw, not the mean
    assert torch.equal(r.X, kb.X)


@pytest.mark.parametrize("mode", ["theory", "practical"])
def test_a_custom_loop_decides_with_the_randomized_believer(mode) -> None:
    opts = DecisionOptions.from_kwargs(mode=mode, pending="randomized-believer")
    a = decide(_history(), opts, _domain())
    b = decide(_history(), opts, _domain())
    assert a.x == b.x and a.metadata["pending"] == 2
    assert a.metadata["pending_view"] == "randomized-believer"


def test_an_ax_loop_runs_the_randomized_believer() -> None:
    pytest.importorskip("ax")
    from _ax_loop import run_in_flight  # tests/ helper
    from ax import Client, RangeParameterConfig

    from botorch_bandits.ax import bandit_generation_strategy

    client = Client(random_seed=0)
    client.configure_experiment(
        parameters=[
            RangeParameterConfig(name=f"x{i}", parameter_type="float", bounds=(0, 1))
            for i in range(2)
        ]
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(
        bandit_generation_strategy(num_init=3, pending="randomized-believer")
    )

    def data(p: dict, _: int) -> dict:
        return {"f": -((p["x0"] - 0.3) ** 2) - (p["x1"] - 0.6) ** 2}

    run_in_flight(client, 8, data, in_flight=3)
    views = [
        (t.generator_runs[0].gen_metadata or {}).get("pending_view")
        for t in client._experiment.trials.values()
    ]
    assert views[-5:] == ["randomized-believer"] * 5


def test_pessimistic_imputation_is_the_lower_bound_below_the_believer() -> None:
    from botorch_bandits.core.steps.pending import hallucinate_view
    from botorch_bandits.core.steps.pessimistic import KAPPA, pessimistic_view

    r = _prepared("pessimistic")
    pessimistic_view(r)
    kb = _prepared("hallucinate")
    hallucinate_view(kb)
    assert r.meta["pending"] == 2 and torch.equal(r.X, kb.X)
    assert torch.equal(r.Y[:6], r.Y0)
    # mu - KAPPA sigma, with the believer's mu and the same model's sigma
    from botorch_bandits.core.fit import build_model

    base = build_model(r.X0, r.Y0, r.opts.theory, r.hyper, **r.sparse, known=r.known)
    post = base.posterior(r.X[6:].unsqueeze(-2))
    sigma = post.variance.reshape(-1).sqrt()
    assert torch.allclose(r.Y[6:], kb.Y[6:] - KAPPA * sigma.detach())
    assert torch.all(r.Y[6:] < kb.Y[6:])


@pytest.mark.parametrize("mode", ["theory", "practical"])
def test_a_custom_loop_decides_with_pessimistic_imputation(mode) -> None:
    opts = DecisionOptions.from_kwargs(mode=mode, pending="pessimistic")
    a = decide(_history(), opts, _domain())
    assert a.metadata["pending"] == 2 and a.metadata["pending_view"] == "pessimistic"
    believer = DecisionOptions.from_kwargs(mode=mode, pending="hallucinate")
    kb = decide(_history(), believer, _domain())
    assert a.x != kb.x  # the running trials' targets moved the decision
