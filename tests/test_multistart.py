"""The multi-start marginal-likelihood fit the simulators refit with (issue 32):
its likelihood is the exact GP likelihood (also with repeated points given once), its
gradient and Hessian are those of that likelihood, and on Verma et al.'s draws it
finds the optimum that one start from GPyTorch's default misses."""

from __future__ import annotations

import math

import pytest
import torch

from bandit_experiments.studies.fit_quality import fit_quality, single_start_fit
from botorch_bandits.models.multistart import (
    _Data,
    _derivatives,
    fit_gp_multistart,
    log_marginal_likelihood,
    profiled_nll,
)


def _data(X, Y, counts=None, within=None, mask=None) -> _Data:
    m = torch.ones_like(Y) if mask is None else mask.to(Y.dtype)
    c = torch.ones_like(Y) if counts is None else counts
    ss = torch.zeros_like(Y[:, 0]) if within is None else within
    return _Data(
        torch.cdist(X, X).pow(2),
        Y * m,
        m,
        m.unsqueeze(-1) * m.unsqueeze(-2),
        m / c,
        ss,
        (c * m).sum(-1),
        m.sum(-1),
        (c.log() * m).sum(-1),
    )


def _masked_sine(seed: int, sets: int, n: int, freq: float, kept: int):
    """``sets`` noisy sines of ``n`` points; the last set keeps its first ``kept``
    rows (the mask)."""
    gen = torch.Generator().manual_seed(seed)
    X = torch.rand(sets, n, 1, generator=gen, dtype=torch.double)
    Y = torch.sin(freq * X[..., 0])
    Y = Y + 0.1 * torch.randn(sets, n, generator=gen).double()
    mask = torch.ones(sets, n, dtype=torch.bool)
    mask[-1, kept:] = False
    return X, Y, mask


def _exact_nll(X, Y, ls, scale, noise) -> float:
    """-log N(Y; 0, scale * k_SE + noise I) / n, by torch.distributions."""
    K = scale * torch.exp(-0.5 * torch.cdist(X, X).pow(2) / ls**2)
    K = K + noise * torch.eye(X.shape[0], dtype=X.dtype)
    dist = torch.distributions.MultivariateNormal(torch.zeros_like(Y), K)
    return float(-dist.log_prob(Y) / Y.numel())


def test_the_profiled_likelihood_is_the_exact_one_at_its_best_scale() -> None:
    gen = torch.Generator().manual_seed(0)
    X = torch.rand(1, 15, 1, generator=gen, dtype=torch.double)
    Y = torch.randn(1, 15, generator=gen, dtype=torch.double)
    theta = torch.tensor([[math.log(0.2), math.log(0.05)]], dtype=torch.double)
    nll, scale = profiled_nll(_data(X, Y), theta)
    exact = _exact_nll(X[0], Y[0], 0.2, float(scale), 0.05 * float(scale))
    assert float(nll) == pytest.approx(exact, rel=1e-10)
    # the profiled scale is the best one at this noise-to-signal ratio
    for factor in (0.8, 1.25):
        s = factor * float(scale)
        assert _exact_nll(X[0], Y[0], 0.2, s, 0.05 * s) > exact


def test_repeated_points_given_once_have_the_likelihood_of_every_observation() -> None:
    gen = torch.Generator().manual_seed(1)
    points = torch.rand(6, 1, generator=gen, dtype=torch.double)
    counts = torch.tensor([1, 3, 2, 1, 4, 2], dtype=torch.double)
    rows = torch.repeat_interleave(torch.arange(6), counts.long())
    y = torch.randn(rows.numel(), generator=gen, dtype=torch.double)
    mean = torch.zeros(6, dtype=torch.double).index_add_(0, rows, y) / counts
    within = (y - mean[rows]).pow(2).sum()
    theta = torch.tensor([[math.log(0.3), math.log(0.2)]], dtype=torch.double)
    once = profiled_nll(
        _data(points[None], mean[None], counts[None], within[None]), theta
    )
    every = profiled_nll(_data(points[rows][None], y[None]), theta)
    assert float(once[0]) == pytest.approx(float(every[0]), rel=1e-10)
    assert float(once[1]) == pytest.approx(float(every[1]), rel=1e-10)


def test_gradient_and_hessian_are_the_likelihoods() -> None:
    gen = torch.Generator().manual_seed(2)
    X = torch.rand(2, 12, 1, generator=gen, dtype=torch.double)
    Y = torch.randn(2, 12, generator=gen, dtype=torch.double)
    counts = torch.randint(1, 4, (2, 12), generator=gen).double()
    data = _data(X, Y, counts, torch.tensor([0.3, 1.1], dtype=torch.double))
    theta = torch.tensor([[-1.5, -2.0], [-0.5, 0.3]], dtype=torch.double)
    th = theta.clone().requires_grad_(True)
    f = profiled_nll(data, th)[0]
    (g,) = torch.autograd.grad(f.sum(), th, create_graph=True)
    H = torch.stack(
        [torch.autograd.grad(g[:, j].sum(), th, retain_graph=True)[0] for j in (0, 1)],
        -2,
    )
    f2, g2, H2 = _derivatives(data, theta)
    assert torch.allclose(f2, f.detach(), atol=1e-12)
    assert torch.allclose(g2, g.detach(), atol=1e-10)
    assert torch.allclose(H2, H.detach(), atol=1e-9)


def test_masked_rows_leave_a_data_set_as_if_they_were_absent() -> None:
    X, Y, mask = _masked_sine(seed=3, sets=2, n=20, freq=8, kept=12)
    both = fit_gp_multistart(X, Y, mask)
    alone = fit_gp_multistart(X[1:, :12], Y[1:, :12])
    for field in ("lengthscale", "outputscale", "noise", "log_likelihood"):
        assert float(getattr(both, field)[1]) == pytest.approx(
            float(getattr(alone, field)[0]), rel=1e-6
        )


def test_chunks_give_the_fit_of_one_batch(monkeypatch) -> None:
    """Problems taken a few at a time (a tiny chunk size) give the same fit as all
    at once, masked rows included; the padded system's derivatives are still those
    autograd finds through the likelihood."""
    X, Y, mask = _masked_sine(seed=4, sets=3, n=25, freq=9, kept=15)
    whole = fit_gp_multistart(X, Y, mask)
    monkeypatch.setattr("botorch_bandits.models.multistart._CHUNK", 3 * 25 * 25)
    chunked = fit_gp_multistart(X, Y, mask)
    for field in ("lengthscale", "outputscale", "noise", "log_likelihood"):
        assert torch.allclose(getattr(whole, field), getattr(chunked, field))
    data = _data(X, Y, mask=mask)
    th = torch.tensor([[-2.0, -3.0]] * 3, dtype=torch.double, requires_grad=True)
    (g,) = torch.autograd.grad(profiled_nll(data, th)[0].sum(), th)
    assert torch.allclose(_derivatives(data, th.detach())[1], g, atol=1e-10)


def test_too_little_data_is_not_fitted_and_bad_input_is_named() -> None:
    X = torch.rand(2, 3, 1, dtype=torch.double)
    Y = torch.zeros(2, 3, dtype=torch.double)
    Y[1] = torch.tensor([0.3, -0.2, 0.5])
    mask = torch.tensor([[True, True, True], [True, False, False]])
    fit = fit_gp_multistart(X, Y, mask)  # all targets 0 / one point
    assert fit.fitted.tolist() == [False, False]
    assert torch.isnan(fit.lengthscale).all()
    with pytest.raises(ValueError, match="starts"):
        fit_gp_multistart(X, Y, starts=0)
    with pytest.raises(ValueError, match="batch x n x d"):
        fit_gp_multistart(X[0], Y[0])


def test_on_verma_draws_the_multistart_fit_is_never_worse_than_one_start() -> None:
    result = fit_quality(draws=3, points=120, seed=0)
    old, new = result["old_log_likelihood"], result["new_log_likelihood"]
    assert all(n >= o - 1e-9 for o, n in zip(old, new, strict=True))
    # the generating lengthscale is 0.02: every multi-start fit lands near it
    assert all(0.01 < ls < 0.05 for ls in result["new_lengthscale"])


def test_the_reported_likelihood_is_the_models(monkeypatch) -> None:
    gen = torch.Generator().manual_seed(4)
    X = torch.rand(2, 25, 1, generator=gen, dtype=torch.double)
    Y = torch.cos(5 * X[..., 0]) + 0.05 * torch.randn(2, 25, generator=gen).double()
    fit = fit_gp_multistart(X, Y)
    again = log_marginal_likelihood(X, Y, fit.lengthscale, fit.outputscale, fit.noise)
    assert torch.allclose(again, fit.log_likelihood, atol=1e-10)
    ls, scale, noise = single_start_fit(X, Y)
    assert bool((log_marginal_likelihood(X, Y, ls, scale, noise) <= again + 1e-6).all())
