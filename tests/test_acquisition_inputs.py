"""Inputs the acquisitions must take or refuse clearly: GP-UCB through
``practical_acquisition`` (its schedule read from the candidates or the kernel), the
models ``practical_acquisition`` cannot read (a ``ModelListGP``, a multi-output
GP), points in another dtype than the model's, and models on the 'meta' device."""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models import ModelListGP, SingleTaskGP
from gpytorch.kernels import MaternKernel, ScaleKernel
from gpytorch.mlls import ExactMarginalLogLikelihood

from botorch_bandits import (
    GPUCB,
    GPUCBSDF,
    IGPUCB,
    FiniteArmGP,
    GammaOrder,
    GPThompsonSampling,
    GPThompsonSamplingSDF,
    practical_acquisition,
)
from botorch_bandits.acquisition.practical import PRACTICAL_B
from botorch_bandits.models import make_kernel

D = torch.double


def _data(n: int = 12, d: int = 1, dtype: torch.dtype = D):
    gen = torch.Generator().manual_seed(0)
    X = torch.rand(n, d, generator=gen, dtype=torch.double).to(dtype)
    Y = torch.sin(6 * X).sum(-1, keepdim=True)
    return X, Y


def _fitted(d: int = 1, **kwargs) -> SingleTaskGP:
    X, Y = _data(d=d)
    gp = SingleTaskGP(X, Y, **kwargs)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    return gp.eval()


def _mu_sigma(gp, X):
    with torch.no_grad():
        post = gp.posterior(X)
    return post.mean.reshape(-1), post.variance.sqrt().reshape(-1)


# ------------------------------------------------------------ GP-UCB, practical
def test_gp_ucb_without_candidates_uses_theorem_3_with_the_kernels_order() -> None:
    gp = _fitted(d=2)
    acqf = practical_acquisition(gp, "GP-UCB")
    assert isinstance(acqf, GPUCB) and acqf.schedule == "rkhs"
    t, d, delta = 13, 2, 0.1
    direct = GPUCB(
        gp,
        "rkhs",
        B_squared=PRACTICAL_B**2,
        gamma=GammaOrder("rbf", d),
        delta=delta,
        t=t,
    )
    # Srinivas et al. Thm 3 with gamma_t = (log t)^(d + 1) (Thm 5, RBF, constant 1)
    want = 2 * PRACTICAL_B**2 + 300 * math.log(t) ** (d + 1) * math.log(t / delta) ** 3
    assert acqf.t == t
    assert acqf.beta_t == pytest.approx(direct.beta_t, rel=1e-12)
    assert acqf.beta_t == pytest.approx(want, rel=1e-12)
    Xs = torch.rand(5, 1, d, generator=torch.Generator().manual_seed(1), dtype=D)
    with torch.no_grad():
        values = acqf(Xs)
    assert bool(torch.isfinite(values).all())
    mu, sigma = _mu_sigma(gp, Xs)
    torch.testing.assert_close(values, mu + math.sqrt(want) * sigma)
    with torch.no_grad():
        torch.testing.assert_close(values, direct(Xs))


def test_gp_ucb_with_candidates_uses_theorem_1_on_their_number() -> None:
    gp = _fitted()
    cands = torch.linspace(0, 1, 37, dtype=D).reshape(-1, 1)
    acqf = practical_acquisition(gp, "GP-UCB", candidates=cands, delta=0.05)
    assert isinstance(acqf, GPUCB) and acqf.schedule == "finite"
    assert acqf.num_arms == 37
    direct = GPUCB(gp, "finite", num_arms=37, delta=0.05, t=13)
    want = 2 * math.log(37 * 13**2 * math.pi**2 / (6 * 0.05))
    assert acqf.beta_t == pytest.approx(direct.beta_t, rel=1e-12)
    assert acqf.beta_t == pytest.approx(want, rel=1e-12)
    with torch.no_grad():
        values = acqf(cands.unsqueeze(-2))
    assert bool(torch.isfinite(values).all())
    mu, sigma = _mu_sigma(gp, cands.unsqueeze(-2))
    torch.testing.assert_close(values, mu + math.sqrt(want) * sigma)


def test_gp_ucb_reads_a_scaled_matern_kernel_and_its_active_dims() -> None:
    covar = ScaleKernel(MaternKernel(nu=2.5, active_dims=(0, 2)))
    gp = _fitted(d=3, covar_module=covar)
    acqf = practical_acquisition(gp, "GP-UCB", B=1.0)
    direct = GPUCB(
        gp, "rkhs", B_squared=1.0, gamma=GammaOrder("matern", 2, nu=2.5), t=13
    )
    assert acqf.beta_t == pytest.approx(direct.beta_t, rel=1e-12)
    # d = 2 (the kernel's active dims), not the 3 columns of the inputs
    other = GPUCB(gp, "rkhs", B_squared=1.0, gamma=GammaOrder("matern", 3, nu=2.5))
    assert acqf.beta_t != pytest.approx(other.beta_t)


def test_gp_ucb_without_an_order_asks_for_candidates() -> None:
    gp = _fitted(covar_module=MaternKernel(nu=0.5))
    with pytest.raises(ValueError, match=r"`candidates`.*nu=0\.5"):
        practical_acquisition(gp, "GP-UCB")
    cands = torch.linspace(0, 1, 9, dtype=D).reshape(-1, 1)
    acqf = practical_acquisition(gp, "GP-UCB", candidates=cands)
    assert acqf.num_arms == 9
    with pytest.raises(ValueError, match=r"`candidates` must have the model's input"):
        practical_acquisition(gp, "GP-UCB", candidates=torch.rand(9, 2, dtype=D))
    with pytest.raises(ValueError, match=r"`candidates` must be an N x d"):
        practical_acquisition(gp, "GP-UCB", candidates=torch.zeros(0, 1, dtype=D))


# ------------------------------------------------ practical: models it cannot read
@pytest.mark.parametrize("algorithm", ["IGP-UCB", "GP-UCB", "GP-TS"])
def test_practical_refuses_a_model_list_and_a_multi_output_model(algorithm) -> None:
    X, Y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        listed = ModelListGP(SingleTaskGP(X, Y), SingleTaskGP(X, -Y))
        multi = SingleTaskGP(X, torch.cat([Y, -Y], -1))
    with pytest.raises(ValueError, match=r"`model`.*ModelListGP.*model\.models"):
        practical_acquisition(listed, algorithm)
    with pytest.raises(ValueError, match=r"`model`.*num_outputs=2"):
        practical_acquisition(multi, algorithm)
    # one of the list's models is what it asks for, and it works
    acqf = practical_acquisition(listed.models[0], algorithm, seed=0)
    with torch.no_grad():
        assert bool(torch.isfinite(acqf(X[:3].unsqueeze(-2))).all())


def test_practical_refuses_a_model_on_the_meta_device() -> None:
    gp = _fitted().to("meta")
    with pytest.raises(ValueError, match=r"`model`.*'meta' device"):
        practical_acquisition(gp)


# ------------------------------------------- dtype of X and the 'meta' device
def _build(name: str, model, dtype: torch.dtype):
    cands = torch.linspace(0, 1, 9, dtype=torch.double).reshape(-1, 1).to(dtype)
    recent = cands[:2].clone()
    if name == "GPUCB":
        return GPUCB(model, "finite", num_arms=9)
    if name == "IGPUCB":
        return IGPUCB(model, B=1.0, R=0.1)
    if name == "GPThompsonSampling":
        return GPThompsonSampling(model, B=1.0, R=0.1, seed=0, candidates=cands)
    if name == "GPThompsonSampling-pathwise":
        return GPThompsonSampling(model, B=1.0, R=0.1, seed=0, sampler="pathwise")
    if name == "GPUCBSDF":
        return GPUCBSDF(model, recent, B_f=1.0, R=0.1)
    return GPThompsonSamplingSDF(
        model, recent, B_f=1.0, R=0.1, seed=0, candidates=cands
    )


NAMES = [
    "GPUCB",
    "IGPUCB",
    "GPThompsonSampling",
    "GPThompsonSampling-pathwise",
    "GPUCBSDF",
    "GPThompsonSamplingSDF",
]


def _stgp(dtype: torch.dtype) -> SingleTaskGP:
    X, Y = _data(n=6, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SingleTaskGP(X, Y).eval()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("model_dtype", "x_dtype"),
    [(torch.float32, torch.float64), (torch.float64, torch.float32)],
)
def test_points_in_another_dtype_are_refused_clearly(name, model_dtype, x_dtype):
    model = _stgp(model_dtype)
    acqf = _build(name, model, model_dtype)
    Xs = torch.linspace(0, 1, 9, dtype=torch.double).reshape(-1, 1, 1)
    with torch.no_grad():
        ok = acqf(Xs.to(model_dtype))  # fills the model's caches in its dtype
    assert ok.dtype == model_dtype and bool(torch.isfinite(ok).all())
    with pytest.raises(ValueError) as info:
        acqf(Xs.to(x_dtype))
    msg = str(info.value)
    assert "`X`" in msg and f"X.dtype={x_dtype}" in msg and str(model_dtype) in msg
    assert f"X.to({model_dtype})" in msg  # what to do
    # the user's model is left as it was, and still answers in its dtype
    assert model.train_inputs[0].dtype == model_dtype
    assert next(model.parameters()).dtype == model_dtype
    with torch.no_grad():
        torch.testing.assert_close(acqf(Xs.to(model_dtype)), ok)


@pytest.mark.parametrize("name", ["GPUCB", "IGPUCB", "GPThompsonSampling"])
def test_a_float32_engine_is_not_cast_by_float64_points(name) -> None:
    arms = torch.linspace(0, 1, 9, dtype=torch.float32).reshape(-1, 1)
    engine = FiniteArmGP(arms, make_kernel("rbf", 0.3, torch.float32), 0.01)
    engine.observe(torch.tensor([2]), torch.tensor([0.5]))
    acqf = _build(name, engine, torch.float32)
    with pytest.raises(ValueError, match=r"`X` must have the model's dtype"):
        acqf(arms.double().unsqueeze(-2))
    assert engine.arms.dtype == engine.K.dtype == torch.float32


@pytest.mark.parametrize("name", NAMES)
def test_a_model_on_the_meta_device_is_refused_at_construction(name) -> None:
    model = _stgp(torch.float64).to("meta")
    with pytest.raises(ValueError) as info:
        _build(name, model, torch.float64)
    msg = str(info.value)
    assert "`model`" in msg and "'meta' device" in msg and "SingleTaskGP" in msg


@pytest.mark.parametrize("name", NAMES)
def test_points_on_the_meta_device_are_refused(name) -> None:
    acqf = _build(name, _stgp(torch.float64), torch.float64)
    with pytest.raises(ValueError, match=r"`X` is on the 'meta' device"):
        acqf(torch.zeros(3, 1, 1, dtype=D, device="meta"))
