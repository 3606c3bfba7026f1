"""The BoTorch compatibility matrix (issue 17): every exported acquisition x the models
BoTorch users have x float32 / float64 x BoTorch's three optimizers.

Every cell either returns the value of the paper's formula at the point the optimizer
chose -- recomputed here from the (transformed) posterior, and checked against
BoTorch's ``UpperConfidenceBound`` where that works -- or raises a clear error that is
listed in ``EXPECTED_ERRORS``; for each listed cell BoTorch's own analogue
(``UpperConfidenceBound`` for the UCB family, ``PathwiseThompsonSampling`` for the TS
family) is run on the same cell and must fail as well, except the cells in
``BOTORCH_RETURNS_VALUE`` (documented there).

``python tests/test_compat_matrix.py`` prints the matrix and its counts.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass

import pytest
import torch
from botorch.acquisition.analytic import UpperConfidenceBound
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.acquisition.thompson_sampling import PathwiseThompsonSampling
from botorch.models import MixedSingleTaskGP, ModelListGP, SingleTaskGP
from botorch.optim import optimize_acqf, optimize_acqf_discrete, optimize_acqf_mixed
from linear_operator.utils.cholesky import psd_safe_cholesky

import botorch_bandits
from botorch_bandits import FiniteArmGP, draw_posterior_paths
from botorch_bandits.beta import information_gain
from botorch_bandits.test_functions.problems import make_kernel

MODELS = ("stgp", "stgp_fixed", "batched", "multi", "list", "mixed", "engine")
ACQFS = botorch_bandits.ACQUISITION_FUNCTIONS
OPTIMIZERS = ("optimize_acqf", "optimize_acqf_discrete", "optimize_acqf_mixed")
DTYPES = (torch.float32, torch.float64)
UCB_FAMILY = ("GPUCB", "IGPUCB", "GPUCBSDF")
N, D, NUM_ARMS = 8, 2, 30

# (model, acquisition family or name, optimizer) -> message pattern of the clear error.
# ``"*"`` matches every value in that slot.
EXPECTED_ERRORS: dict[tuple[str, str, str], str] = {
    (
        "batched",
        "ucb",
        "*",
    ): r"model is batched \(batch_shape=\[3\].*optimize each batch",
    (
        "multi",
        "ts",
        "optimize_acqf",
    ): r"pathwise' does not support a posterior_transform",
    (
        "multi",
        "ts",
        "optimize_acqf_mixed",
    ): r"pathwise' does not support a posterior_tr",
    (
        "list",
        "ts",
        "optimize_acqf",
    ): r"pathwise' does not support a posterior_transform",
    ("list", "ts", "optimize_acqf_mixed"): r"pathwise' does not support a posterior_tr",
    ("mixed", "ts", "optimize_acqf"): r"BoTorch has none for AdditiveKernel",
    ("mixed", "ts", "optimize_acqf_mixed"): r"BoTorch has none for AdditiveKernel",
    ("engine", "ucb", "optimize_acqf"): r"FiniteArmGP answers on its arm set only",
    (
        "engine",
        "ucb",
        "optimize_acqf_mixed",
    ): r"FiniteArmGP answers on its arm set only",
    (
        "engine",
        "ts",
        "optimize_acqf",
    ): r"pathwise' needs an exact GP with a `covar_module`",
    ("engine", "ts", "optimize_acqf_mixed"): r"pathwise' needs an exact GP",
}
# Cells where we raise and BoTorch's analogue returns a value: none.
BOTORCH_RETURNS_VALUE: set[tuple[str, str, str]] = set()


def expected_error(model: str, acqf: str, optimizer: str) -> str | None:
    family = "ucb" if acqf in UCB_FAMILY else "ts"
    for (m, a, o), pattern in EXPECTED_ERRORS.items():
        if m in (model, "*") and a in (family, acqf, "*") and o in (optimizer, "*"):
            return pattern
    return None


# --------------------------------------------------------------------------- models
@dataclass
class Case:
    model: object
    transform: object | None
    bounds: torch.Tensor
    choices: torch.Tensor
    recent: torch.Tensor
    n: int


def _case(name: str, dtype: torch.dtype) -> Case:
    gen = torch.Generator().manual_seed(0)
    X = torch.rand(N, D, generator=gen, dtype=torch.float64)
    Y = torch.sin(5 * X).sum(-1, keepdim=True)
    X, Y = X.to(dtype), Y.to(dtype)
    cand = torch.rand(20, D, generator=gen, dtype=torch.float64).to(dtype)
    bounds = torch.tensor([[0.0] * D, [1.0] * D], dtype=dtype)
    transform = None
    w = torch.tensor([1.0, 0.5], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "stgp":
            model = SingleTaskGP(X, Y)
        elif name == "stgp_fixed":
            model = SingleTaskGP(X, Y, train_Yvar=torch.full_like(Y, 0.01))
        elif name == "batched":
            Yb = Y.expand(3, N, 1) + 0.1 * torch.arange(3, dtype=dtype).view(3, 1, 1)
            model = SingleTaskGP(X.expand(3, N, D), Yb)
        elif name == "multi":
            model = SingleTaskGP(X, torch.cat([Y, -Y], -1))
            transform = ScalarizedPosteriorTransform(w)
        elif name == "list":
            model = ModelListGP(SingleTaskGP(X, Y), SingleTaskGP(X, -Y))
            transform = ScalarizedPosteriorTransform(w)
        elif name == "mixed":
            X = X.clone()
            X[:, 1] = torch.arange(N, dtype=dtype) % 3
            model = MixedSingleTaskGP(X, Y, cat_dims=[1])
            cand = cand.clone()
            cand[:, 1] = torch.arange(20, dtype=dtype) % 3
            bounds[1, 1] = 2.0
        elif name == "engine":
            arms = cand
            model = FiniteArmGP(arms, make_kernel("matern52", 0.3, dtype), 0.01)
            for i in range(N):
                model.observe(torch.tensor([i % 20]), Y[i])
            X = arms[torch.arange(N) % 20]
        else:  # pragma: no cover
            raise ValueError(name)
    model.eval()
    return Case(model, transform, bounds, cand, X[-3:], N)


def _build(name: str, case: Case, discrete: bool):
    cls = getattr(botorch_bandits, name)
    pt = case.transform
    ts = {"seed": 0, "num_features": 256}
    if discrete:
        ts["candidates"] = case.choices
    if name == "GPUCB":
        return cls(
            case.model, schedule="finite", num_arms=NUM_ARMS, posterior_transform=pt
        )
    if name == "IGPUCB":
        return cls(case.model, B=1.0, R=0.1, posterior_transform=pt)
    if name == "GPThompsonSampling":
        return cls(case.model, B=1.0, R=0.1, posterior_transform=pt, **ts)
    if name == "GPUCBSDF":
        return cls(case.model, case.recent, B_f=1.0, R=0.1, posterior_transform=pt)
    return cls(case.model, case.recent, B_f=1.0, R=0.1, posterior_transform=pt, **ts)


def _analogue(name: str, case: Case, multiplier: float = 2.0):
    if name in UCB_FAMILY:
        return UpperConfidenceBound(
            case.model, beta=multiplier**2, posterior_transform=case.transform
        )
    return PathwiseThompsonSampling(case.model, posterior_transform=case.transform)


def _optimize(acqf, optimizer: str, case: Case):
    torch.manual_seed(0)
    opts = {"num_restarts": 2, "raw_samples": 16, "options": {"maxiter": 10}}
    if optimizer == "optimize_acqf":
        return optimize_acqf(acqf, case.bounds, q=1, **opts)
    if optimizer == "optimize_acqf_discrete":
        return optimize_acqf_discrete(acqf, q=1, choices=case.choices)
    return optimize_acqf_mixed(
        acqf, case.bounds, q=1, fixed_features_list=[{1: 0.0}, {1: 1.0}], **opts
    )


# -------------------------------------------------------------------- the formulas
def _gamma(model) -> torch.Tensor:
    """The observed information gain, recomputed: the sum over outputs (models of a
    list, or the output batch of a multi-output GP) of 1/2 log det(I + K / lambda);
    one value per batch of a batched model."""
    if isinstance(model, FiniteArmGP):
        idx = torch.tensor([h.item() for h in model._arms_hist])
        K = model.K[idx][:, idx]
        return information_gain(K, torch.tensor(model.noise, dtype=K.dtype)).double()
    models = model.models if isinstance(model, ModelListGP) else [model]
    total = torch.zeros((), dtype=torch.float64)
    for m in models:
        X = m.train_inputs[0]
        with torch.no_grad():
            K = m.covar_module(X).to_dense()
            noise = m.likelihood.noise
            noise = noise.expand(*noise.shape[:-1], K.shape[-1])
            gain = information_gain(K, noise).double()
        if getattr(m, "_num_outputs", 1) > 1:
            gain = gain.sum(-1)
        total = total + gain
    return total


def _multiplier(name: str, case: Case, acqf) -> torch.Tensor:
    """The sigma multiplier of the formula (one per batch of a batched model)."""
    g = _gamma(case.model)
    t = case.n + 1
    if name == "GPUCB":
        return torch.tensor(
            math.sqrt(2 * math.log(NUM_ARMS * t**2 * math.pi**2 / (6 * 0.1))),
            dtype=torch.float64,
        )
    if name == "IGPUCB":
        return 1.0 + 0.1 * torch.sqrt(2 * (g + 1 + math.log(1 / 0.1)))
    if name == "GPThompsonSampling":
        return 1.0 + 0.1 * torch.sqrt(2 * (g + 1 + math.log(2 / 0.1)))
    # SDF: nu = B_y sum sigma(recent) + B_f + (R + B_y) sqrt(2(gamma + 1 + log(2/delta)))
    recent = case.recent.view(3, *[1] * len(case.model.batch_shape), 1, D)
    post = case.model.posterior(recent, posterior_transform=case.transform)
    inflation = post.variance.clamp_min(0).sqrt().reshape(3, -1).sum(0).double()
    nu = inflation + 1.0 + 1.1 * torch.sqrt(2 * (g + 1 + math.log(2 / 0.1)))
    return nu.reshape(g.shape) if g.ndim else nu.reshape(())


def _formula(name: str, case: Case, acqf, x: torch.Tensor, discrete: bool) -> float:
    """The paper's value at ``x`` (1 x d), computed without the acquisition class."""
    mult = _multiplier(name, case, acqf).to(x.dtype)  # () or (batch,)
    batch = (
        len(case.model.batch_shape) if not isinstance(case.model, ModelListGP) else 0
    )
    xb = x.view(*[1] * batch, 1, D)  # every batch of a batched model
    post = case.model.posterior(xb, posterior_transform=case.transform)
    mu, sd = post.mean.reshape(mult.shape), post.variance.sqrt().reshape(mult.shape)
    if name in UCB_FAMILY:
        return float(mu + mult * sd)
    if discrete:  # exact joint draw on the candidates: mu + v L z, z from the seed
        cp = case.model.posterior(case.choices, posterior_transform=case.transform)
        L = psd_safe_cholesky(cp.distribution.covariance_matrix)
        z = torch.randn(
            cp.mean.shape[:-1],
            generator=torch.Generator().manual_seed(0),
            dtype=x.dtype,
        )
        f = cp.mean.squeeze(-1) + mult.unsqueeze(-1) * (L @ z.unsqueeze(-1)).squeeze(-1)
        i = int((case.choices == x).all(-1).nonzero()[0, 0])
        return float(f[..., i].sum())  # summed over the batches of a batched model
    with torch.random.fork_rng():  # pathwise: mu + v (f~ - mu), f~ drawn with the seed
        torch.manual_seed(0)
        path = draw_posterior_paths(case.model, None, 256)
    f_tilde = path(xb).reshape(mult.shape)
    return float((mu + mult * (f_tilde - mu)).sum())


# -------------------------------------------------------------------------- cells
@dataclass
class Cell:
    model: str
    acqf: str
    dtype: str
    optimizer: str
    outcome: str  # "value" or "error"
    detail: str
    botorch: str


def run_cell(model: str, name: str, dtype: torch.dtype, optimizer: str) -> Cell:
    case = _case(model, dtype)
    discrete = optimizer == "optimize_acqf_discrete"
    dname = "float32" if dtype == torch.float32 else "float64"
    pattern = expected_error(model, name, optimizer)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            acqf = _build(name, case, discrete)
            x, val = _optimize(acqf, optimizer, case)
    except Exception as err:
        msg = f"{type(err).__name__}: {err}"
        if pattern is None or not re.search(pattern, msg, re.S):
            raise AssertionError(f"{model}/{name}/{dname}/{optimizer}: {msg}") from err
        return Cell(
            model,
            name,
            dname,
            optimizer,
            "error",
            msg,
            _botorch(model, name, case, optimizer),
        )
    assert pattern is None, f"{model}/{name}/{optimizer}: expected an error ({pattern})"
    x = x.reshape(1, D)
    tol = (
        {"rtol": 1e-3, "atol": 1e-4}
        if dtype == torch.float32
        else {"rtol": 1e-7, "atol": 1e-9}
    )
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # 1 x 1 x d broadcasts with a batched model: one value per batch (BoTorch's
        # pairing), whose sum is the summed value the optimizer saw
        got = float(acqf(x.unsqueeze(0)).sum())
        want = _formula(name, case, acqf, x, discrete)
        assert math.isclose(
            got, float(val), **{"rel_tol": tol["rtol"], "abs_tol": tol["atol"]}
        )
        assert math.isclose(got, want, rel_tol=tol["rtol"], abs_tol=tol["atol"]), (
            f"{model}/{name}/{dname}/{optimizer}: value {got} != formula {want}"
        )
        note = f"value {got:.6g} = formula {want:.6g}"
        if name in UCB_FAMILY:  # BoTorch's UCB with beta = multiplier^2 agrees
            mult = float(_multiplier(name, case, acqf))
            ref = float(_analogue(name, case, mult)(x.unsqueeze(0)))
            # BoTorch's own path through the posterior (its caches, its clamping):
            # agreement to 1e-6 (float64), 1e-3 (float32)
            assert math.isclose(
                got, ref, rel_tol=max(tol["rtol"], 1e-6), abs_tol=1e-6
            ), f"{model}/{name}/{dname}/{optimizer}: value {got} != BoTorch {ref}"
            note += f"; BoTorch UCB {ref:.6g}"
    return Cell(model, name, dname, optimizer, "value", note, "works")


def _botorch(model: str, name: str, case: Case, optimizer: str) -> str:
    """What BoTorch's analogue does on the same cell."""
    family = "ucb" if name in UCB_FAMILY else "ts"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _optimize(_analogue(name, case), optimizer, case)
    except Exception as err:
        return f"fails: {type(err).__name__}: {str(err)[:90]}"
    assert (model, family, optimizer) in BOTORCH_RETURNS_VALUE, (
        f"{model}/{name}/{optimizer}: we raise but BoTorch's analogue works"
    )
    return "returns a value (sum of the batches' draws)"


#: every model in float64; in float32 the default run keeps the single-output GP
#: and the engine (the dtype's own code paths), -m slow every model
_ROWS = [
    pytest.param(
        model,
        dtype,
        id=f"{model}-{str(dtype).split('.')[-1]}",
        marks=()
        if dtype == torch.float64 or model in ("stgp", "engine")
        else pytest.mark.slow,
    )
    for model in MODELS
    for dtype in DTYPES
]


@pytest.mark.parametrize(("model", "dtype"), _ROWS)
def test_matrix_row(model: str, dtype: torch.dtype) -> None:
    for name in ACQFS:
        for optimizer in OPTIMIZERS:
            run_cell(model, name, dtype, optimizer)


@pytest.mark.parametrize("name", ACQFS)
def test_batched_model_values_per_batch(name: str) -> None:
    """Where a batched model is usable -- X with the model's batch dims -- every
    batch gets the formula's value with its own data (and gamma). X whose batch dims
    broadcast with the model's (3 x 1 x d for batch shape [3]) pairs point i with
    batch i in every class; X that cannot pair sums the TS draws over the batches."""
    case = _case("batched", torch.float64)
    acqf = _build(name, case, discrete=True)
    X = case.choices[:5].view(5, 1, 1, D)
    values = acqf(X)
    assert values.shape == (5, 3)
    for b in range(3):
        Xb = case.model.train_inputs[0][b]
        Yb = (
            case.model.outcome_transform.untransform(
                case.model.train_targets.unsqueeze(-1)
            )[0]
        )[b]
        # the batched model is unfitted: batch b is SingleTaskGP's default on its data
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            single = SingleTaskGP(Xb, Yb).eval()
        if name in UCB_FAMILY:
            sub = Case(
                single,
                None,
                case.bounds,
                case.choices,
                case.recent[..., b, :, :] if case.recent.ndim == 3 else case.recent,
                N,
            )
            mult = float(_multiplier(name, sub, None))
            post = single.posterior(case.choices[:5].unsqueeze(-2))
            want = (post.mean + mult * post.variance.sqrt()).view(-1)
            assert torch.allclose(values[:, b], want, rtol=1e-6, atol=1e-8)
    # X of shape 3 x 1 x d pairs with batch shape [3] (BoTorch's broadcasting), for
    # every class alike: point i is valued under batch i
    paired = acqf(case.choices[:3].view(3, 1, D))
    assert torch.allclose(paired, values[:3, :3].diagonal(), rtol=1e-10, atol=1e-12)
    if name in UCB_FAMILY:  # as BoTorch's UpperConfidenceBound, which fails there
        with pytest.raises(ValueError, match="batch_shape=\\[3\\]"):
            acqf(case.choices[:5].view(5, 1, D))
    else:  # as BoTorch's PathwiseThompsonSampling: the sum over the batches' draws
        summed = acqf(case.choices[:5].view(5, 1, D))
        assert torch.allclose(summed, values.sum(-1))
        # the pathwise sampler pairs and sums by the same rule
        path = _build(name, case, discrete=False)
        every = path(case.choices[:5].view(5, 1, 1, D))  # 5 x 3
        paired = path(case.choices[:3].view(3, 1, D))
        assert torch.allclose(paired, every[:3, :3].diagonal(), rtol=1e-9, atol=1e-9)
        summed = path(case.choices[:5].view(5, 1, D))
        assert torch.allclose(summed, every.sum(-1), rtol=1e-9, atol=1e-9)


def main() -> None:  # pragma: no cover - prints the matrix for the issue note
    cells = [
        run_cell(m, a, d, o)
        for m in MODELS
        for a in ACQFS
        for d in DTYPES
        for o in OPTIMIZERS
    ]
    values = [c for c in cells if c.outcome == "value"]
    errors = [c for c in cells if c.outcome == "error"]
    print(
        f"cells {len(cells)}: {len(values)} pinned to the formula, {len(errors)} clear errors"
    )
    seen = set()
    for c in errors:
        key = (c.model, c.acqf, c.optimizer)
        if key in seen:
            continue
        seen.add(key)
        print(f"- {c.model} / {c.acqf} / {c.optimizer} (both dtypes): {c.detail[:110]}")
        print(f"    BoTorch's analogue: {c.botorch}")


if __name__ == "__main__":  # pragma: no cover
    main()
