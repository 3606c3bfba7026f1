"""``practical_acquisition``: the Ax strategy's practical parameters for a fitted
BoTorch model in one call (issue 28)."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms.outcome import Standardize
from gpytorch.mlls import ExactMarginalLogLikelihood

from botorch_bandits import (
    IGPUCB,
    GPThompsonSampling,
    practical_acquisition,
    practical_confidence,
)
from botorch_bandits.acquisition.practical import (
    PRACTICAL_B,
)


def _fitted(Y, transform: bool):
    X = torch.linspace(0, 1, 12, dtype=torch.double).reshape(-1, 1)
    gp = SingleTaskGP(
        X, Y(X), outcome_transform=Standardize(m=1) if transform else None
    )
    torch.manual_seed(0)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    return gp


def _f(X):
    return torch.sin(6 * X) + 0.05 * torch.cos(40 * X)


def test_parameters_are_read_from_the_fitted_model() -> None:
    gp = _fitted(lambda X: 100 * _f(X) + 7, transform=True)
    acqf = practical_acquisition(gp)
    assert isinstance(acqf, IGPUCB)
    noise = float(gp.likelihood.noise.detach().reshape(-1)[0])
    # unit-free: the Standardize'd posterior carries the objective's units itself
    assert float(acqf.B) == PRACTICAL_B == 0.25
    assert float(acqf.R) == pytest.approx(math.sqrt(noise))
    assert int(acqf.t) == 13
    c = practical_confidence(noise)
    assert (c.B, c.R) == (0.25, pytest.approx(math.sqrt(noise)))
    assert float(practical_acquisition(gp, B=1.0).B) == 1.0


def test_the_choice_does_not_depend_on_the_objectives_units() -> None:
    grid = torch.linspace(0, 1, 201, dtype=torch.double).reshape(-1, 1, 1)
    picks = []
    for a, b in ((1.0, 0.0), (250.0, -3.0)):
        gp = _fitted(lambda X, a=a, b=b: a * _f(X) + b, transform=True)
        with torch.no_grad():
            picks.append(int(practical_acquisition(gp)(grid).argmax()))
    assert picks[0] == picks[1]


def test_thompson_sampling_in_one_call() -> None:
    gp = _fitted(_f, transform=False)
    cands = torch.linspace(0, 1, 50, dtype=torch.double).reshape(-1, 1)
    acqf = practical_acquisition(gp, "GP-TS", seed=3, candidates=cands)
    assert isinstance(acqf, GPThompsonSampling)
    with torch.no_grad():
        a = acqf(cands.unsqueeze(-2))
        b = practical_acquisition(gp, "GP-TS", seed=3, candidates=cands)(
            cands.unsqueeze(-2)
        )
    assert torch.equal(a, b)
    with pytest.raises(ValueError, match="algorithm"):
        practical_acquisition(gp, "EI")
