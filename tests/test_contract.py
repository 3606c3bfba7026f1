"""One contract, run over every acquisition class exported by botorch_bandits."""

from __future__ import annotations

import pytest
import torch
from botorch.acquisition import AcquisitionFunction
from botorch.optim import optimize_acqf, optimize_acqf_discrete

import botorch_bandits
from botorch_bandits.models import fixed_gp
from botorch_bandits.test_functions.problems import make_kernel

DEVICES = [torch.device("cpu")] + (
    [torch.device("cuda")] if torch.cuda.is_available() else []
)


# (exported class, variant): every class in ACQUISITION_FUNCTIONS has at least one
RECIPES = [
    ("GPUCB", "finite"),
    ("IGPUCB", "observed"),
    ("GPThompsonSampling", "exact"),
    ("GPThompsonSampling", "pathwise"),
    ("GPUCBSDF", "schedule"),
    ("GPUCBSDF", "constant"),
    ("GPThompsonSamplingSDF", "exact"),
    ("GPThompsonSamplingSDF", "pathwise"),
]
IDS = [f"{n}-{v}" for n, v in RECIPES]


def _build(recipe: tuple[str, str], model, candidates):
    name, variant = recipe
    cls = getattr(botorch_bandits, name)
    if name.endswith("SDF"):
        # the last 3 queries (m = 3): m x batch x d for a batched model
        recent = model.train_inputs[0][..., -3:, :].movedim(-2, 0)
        sched = (
            dict(B_f=1.0, R=0.1, B_y=1.0)
            if variant != "constant"
            else dict(beta=1.0, B_y=1.0)
        )
        if name == "GPUCBSDF":
            return cls(model, recent, **sched)
        if variant == "exact":
            return cls(model, recent, candidates=candidates, seed=0, **sched)
        return cls(model, recent, sampler="pathwise", seed=0, num_features=512, **sched)
    if name == "GPUCB":
        return cls(model, schedule="finite", num_arms=candidates.shape[0])
    if name == "IGPUCB":
        return cls(model, B=1.0, R=0.1)
    if variant == "exact":
        return cls(model, B=1.0, R=0.1, candidates=candidates, seed=0)
    return cls(model, B=1.0, R=0.1, sampler="pathwise", seed=0, num_features=512)


def _data(dtype, device, batch=()):
    gen = torch.Generator().manual_seed(0)
    X = torch.rand(*batch, 8, 2, generator=gen, dtype=dtype)
    Y = torch.sin(3 * X.sum(-1, keepdim=True))
    model = fixed_gp(
        X.to(device), Y.to(device), make_kernel("matern52", 0.3, dtype).to(device), 0.01
    )
    cand = torch.rand(40, 2, generator=gen, dtype=dtype).to(device)
    return model, cand


def test_every_exported_acquisition_has_a_contract() -> None:
    assert set(botorch_bandits.ACQUISITION_FUNCTIONS) <= set(botorch_bandits.__all__)
    for name in botorch_bandits.ACQUISITION_FUNCTIONS:
        assert issubclass(getattr(botorch_bandits, name), AcquisitionFunction)
        assert name in {n for n, _ in RECIPES}, f"no contract recipe for {name}"


@pytest.mark.parametrize("recipe", RECIPES, ids=IDS)
@pytest.mark.parametrize("dtype", [torch.float, torch.double])
@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_contract(
    recipe: tuple[str, str], dtype: torch.dtype, device: torch.device
) -> None:
    model, cand = _data(dtype, device)
    acqf = _build(recipe, model, cand)
    # t-batch shapes: b1 x b2 x 1 x d -> b1 x b2
    X = cand[:12].view(3, 4, 1, 2)
    values = acqf(X)
    assert values.shape == torch.Size([3, 4])
    # one function per instance: batched evaluation equals point-by-point evaluation
    singles = torch.stack([acqf(x) for x in X.reshape(12, 1, 2)]).view(3, 4)
    assert torch.allclose(values, singles, rtol=1e-4, atol=1e-5)
    assert values.dtype == dtype and values.device.type == device.type
    assert torch.isfinite(values).all()
    # q x d without batch -> scalar batch
    assert acqf(cand[:1]).shape == torch.Size([1])
    # q > 1: one value per q-batch (the batch rules are pinned in test_batch.py)
    batch_values = acqf(cand[:4].view(2, 2, 2))
    assert batch_values.shape == torch.Size([2])
    assert torch.isfinite(batch_values).all()
    # discrete optimization picks the best candidate
    x, val = optimize_acqf_discrete(acqf, q=1, choices=cand)
    all_vals = acqf(cand.unsqueeze(-2))
    assert torch.isclose(val.squeeze(), all_vals.max(), rtol=1e-5, atol=1e-5)
    assert x.shape == torch.Size([1, 2])
    # round index from the data: 8 observations -> t = 9
    assert acqf.t == 9


@pytest.mark.parametrize("recipe", [r for r in RECIPES if r[1] != "exact"], ids=str)
def test_continuous_optimization_and_gradients(recipe: tuple[str, str]) -> None:
    model, cand = _data(torch.double, torch.device("cpu"))
    acqf = _build(recipe, model, cand)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.double)
    x, val = optimize_acqf(acqf, bounds, q=1, num_restarts=4, raw_samples=128)
    assert torch.all((x >= 0) & (x <= 1))
    assert float(val) >= float(acqf(cand.unsqueeze(-2)).max()) - 1e-6
    Xg = cand[:5].unsqueeze(-2).clone().requires_grad_(True)
    acqf(Xg).sum().backward()
    assert torch.isfinite(Xg.grad).all() and Xg.grad.abs().sum() > 0


@pytest.mark.parametrize("recipe", RECIPES, ids=IDS)
def test_batched_model(recipe: tuple[str, str]) -> None:
    model, cand = _data(torch.double, torch.device("cpu"), batch=(3,))
    acqf = _build(recipe, model, cand)
    X = cand[:10].view(10, 1, 1, 2)
    out = acqf(X)
    assert out.shape == torch.Size([10, 3])
    singles = torch.cat([acqf(X[i : i + 1]) for i in range(10)])
    assert torch.allclose(out, singles)
