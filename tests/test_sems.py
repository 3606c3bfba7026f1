"""Reported standard errors (Ax's SEMs) reach the model (issue 31): each observation's
known noise variance, BoTorch's fixed-noise likelihood when every trial reports one,
the model's noise plus the SEMs when some do (``sems="auto"``), in both modes and in
the sparse model; invalid SEMs refused naming the trial."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_bandits.core import (
    DecisionOptions,
    Domain,
    History,
    TrialRecord,
    decide,
)
from botorch_bandits.core.steps.data import known_noise_rule, target_sems
from botorch_bandits.models import NystromGP, practical_gp

D = 2


def _f(x) -> float:
    return -sum((xi - 0.3) ** 2 for xi in x)


def _history(sem_of, n: int = 8) -> History:
    pts = torch.quasirandom.SobolEngine(D, scramble=True, seed=1).draw(n)
    return History(
        trials=tuple(
            TrialRecord(
                index=i,
                x=tuple(x),
                f=_f(x) + 0.05 * math.sin(3.0 * i),
                created=float(i),
                completed=float(i) + 1,
                sem=sem_of(i),
            )
            for i, x in enumerate(pts.double().tolist())
        )
    )


def _decide(sem_of, mode: str, **kw):
    domain = Domain.box(torch.quasirandom.SobolEngine(D, seed=0).draw(64).double())
    opts = DecisionOptions.from_kwargs(mode=mode, seed=3, **kw)
    return decide(_history(sem_of), opts, domain)


@pytest.mark.parametrize("mode", ["theory", "practical"])
def test_sems_change_the_decision_and_are_recorded(mode) -> None:
    """Before: sem none / 0 / 5 gave identical trials. After: the rule and counts
    are in the metadata and a large SEM (the data nearly uninformative) moves the
    decision."""
    none = _decide(lambda i: None, mode)
    small = _decide(lambda i: 0.0, mode)
    large = _decide(lambda i: 5.0, mode)
    mixed = _decide(lambda i: 0.5 if i % 2 else None, mode)
    assert "sems" not in none.metadata
    assert small.metadata["sems"] == {"rule": "fixed", "reported": 8, "observations": 8}
    assert mixed.metadata["sems"] == {"rule": "add", "reported": 4, "observations": 8}

    def seen(d):  # the point and the width IGP-UCB's information gain gives
        return d.x, d.metadata["sigma_multiplier"]

    assert seen(large) != seen(none)
    assert seen(mixed) != seen(none)
    assert seen(small) != seen(large)
    ignored = _decide(lambda i: 5.0, mode, sems="ignore")
    assert seen(ignored) == seen(none)
    assert ignored.metadata["sems"]["rule"] == "ignore"


def test_fixed_needs_every_sem_and_names_the_trials() -> None:
    with pytest.raises(ValueError, match=r"sems='fixed'.*\[0, 2, 4, 6\]"):
        _decide(lambda i: 0.5 if i % 2 else None, "practical", sems="fixed")
    assert known_noise_rule(torch.tensor([1.0, math.nan]), "auto", [0, 1]) == "add"
    assert known_noise_rule(torch.tensor([1.0, 2.0]), "auto", [0, 1]) == "fixed"


def test_bad_sems_option_is_named() -> None:
    with pytest.raises(ValueError, match="sems"):
        DecisionOptions.from_kwargs(sems="sometimes")


def test_the_practical_gp_uses_the_known_noise() -> None:
    X = torch.rand(6, D, dtype=torch.double)
    z = torch.randn(6, dtype=torch.double)
    var = torch.tensor([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], dtype=torch.double)
    fixed = practical_gp(X, z, None, var, learn_noise=False)
    assert torch.allclose(fixed.likelihood.noise.reshape(-1), var)
    added = practical_gp(X, z, None, var, learn_noise=True)
    second = float(added.likelihood.second_noise.reshape(-1)[0])
    assert second > 0
    assert torch.allclose(added.likelihood.noise.reshape(-1), var + second)


def test_composite_targets_add_the_constraints_sems() -> None:
    """Algorithm 3's target f - kappa g: its SEM is (SEM_f^2 + kappa^2 SEM_g^2)^1/2;
    kappa = 0 leaves the constraint's (unknown) SEM out; an unknown objective SEM
    stays unknown."""
    from botorch_bandits.core.options import LongTermConstraints

    rec = [
        TrialRecord(0, (0.1, 0.2), f=1.0, g=(0.5,), sem=0.3, g_sem=(0.4,)),
        TrialRecord(1, (0.3, 0.2), f=1.0, g=(0.5,), sem=None, g_sem=(0.4,)),
    ]
    opts = LongTermConstraints(multiplier_update="additive")
    v = target_sems(rec, torch.tensor([2.0], dtype=torch.double), opts)
    assert v[0].item() == pytest.approx(math.sqrt(0.3**2 + 4 * 0.4**2))
    assert math.isnan(v[1].item())
    rec0 = [TrialRecord(0, (0.1, 0.2), f=1.0, g=(0.5,), sem=0.3, g_sem=(math.nan,))]
    v0 = target_sems(rec0, torch.tensor([0.0], dtype=torch.double), opts)
    assert v0[0].item() == pytest.approx(0.3)


def test_the_sparse_model_with_every_point_is_the_exact_gp_with_row_noise() -> None:
    torch.manual_seed(0)
    X = torch.rand(12, D, dtype=torch.double)
    z = torch.randn(12, dtype=torch.double)
    noise = torch.linspace(0.05, 0.5, 12, dtype=torch.double)
    sparse = NystromGP(X, z, [0.3, 0.3], 0.1, 0.0, torch.arange(12), row_noise=noise)
    exact = practical_gp(X, z, None, noise, learn_noise=False)
    with torch.no_grad():
        exact.covar_module.lengthscale = torch.tensor([[0.3, 0.3]], dtype=X.dtype)
        exact.mean_module.constant = torch.tensor(0.0, dtype=X.dtype)
    Xt = torch.rand(5, D, dtype=torch.double)
    with torch.no_grad():
        a, b = sparse.posterior(Xt), exact.posterior(Xt)
    assert torch.allclose(a.mean, b.mean, atol=1e-6)
    assert torch.allclose(a.variance, b.variance, atol=1e-6)


def _client():
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig

    from botorch_bandits.ax import bandit_generation_strategy

    client = Client()
    client.configure_experiment(
        parameters=[
            RangeParameterConfig(name=f"x{i}", parameter_type="float", bounds=(0, 1))
            for i in range(D)
        ]
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(bandit_generation_strategy(num_init=3, seed=0))
    return client


@pytest.mark.parametrize("sem", [-1.0, math.inf])
def test_an_invalid_sem_is_refused_naming_the_trial(sem) -> None:
    """Before: sem=-1 and sem=inf were accepted (and ignored)."""
    client = _client()
    for _ in range(4):
        ((idx, p),) = client.get_next_trials(max_trials=1).items()
        bad = sem if idx == 3 else 0.1
        client.complete_trial(trial_index=idx, raw_data={"f": (_f(p.values()), bad)})
    with pytest.raises(ValueError, match=r"Trial 3 .*standard error.*'f'"):
        client.get_next_trials(max_trials=1)


def test_ax_sems_reach_the_model() -> None:
    client = _client()
    for _ in range(5):
        ((idx, p),) = client.get_next_trials(max_trials=1).items()
        client.complete_trial(trial_index=idx, raw_data={"f": (_f(p.values()), 0.2)})
    ((idx, _),) = client.get_next_trials(max_trials=1).items()
    meta = client._experiment.trials[idx].generator_runs[0].gen_metadata
    assert meta["sems"] == {"rule": "fixed", "reported": 5, "observations": 5}
