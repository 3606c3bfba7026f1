r"""Check of the GP-TS samplers: the empirical variance of many draws of
:math:`f_t \sim GP(\mu_{t-1}, v_t^2 k_{t-1})` against :math:`v_t^2\sigma^2_{t-1}`.

``python -m bandit_experiments ts-variance`` prints the ratios for the exact sampler, our pathwise
sampler (fresh random-feature frequencies per path) and BoTorch's default pathwise
sampler (frequencies shared by all paths), side by side."""

from __future__ import annotations

from functools import partial

import torch
from botorch.sampling.pathwise import draw_kernel_feature_paths, draw_matheron_paths
from torch import Size, Tensor

from botorch_bandits.acquisition import GPThompsonSampling, draw_posterior_paths
from botorch_bandits.models import fixed_gp
from botorch_bandits.seeding import step_seed
from botorch_bandits.test_functions.problems import make_kernel

SAMPLERS = ("exact", "pathwise", "botorch-shared")


def _setup(kernel: str, dtype: torch.dtype, n_train: int = 20, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    X = torch.rand(n_train, 1, generator=gen, dtype=dtype)
    Y = torch.sin(6 * X) + 0.1 * torch.randn(n_train, 1, generator=gen, dtype=dtype)
    model = fixed_gp(X, Y, make_kernel(kernel, 0.2, dtype), 0.01)
    test_X = torch.linspace(0.05, 0.95, 5, dtype=dtype).unsqueeze(-1)
    return model, test_X


def ts_variance_ratios(
    kernel: str = "rbf",
    sampler: str = "exact",
    num_draws: int = 2000,
    num_features: int = 4096,
    seed: int = 0,
    dtype: torch.dtype = torch.double,
    B: float = 1.0,
    R: float = 0.1,
) -> Tensor:
    r"""Ratios (empirical variance of ``num_draws`` draws) / (:math:`v_t^2\sigma^2`) at
    5 test points, for GP-TS with :math:`v_t` from Algorithm 2 (``B``, ``R``,
    :math:`\delta = 0.1`, observed information gain) on a 20-point GP."""
    model, test_X = _setup(kernel, dtype)
    acqf = GPThompsonSampling(model, B=B, R=R, candidates=test_X)
    v = acqf.v_t
    with torch.no_grad():
        post = model.posterior(test_X)
        mean, var = post.mean.squeeze(-1), post.variance.squeeze(-1)  # 5, 5
        torch.manual_seed(seed)
        if sampler == "exact":
            draws = torch.stack(
                [
                    GPThompsonSampling(
                        model, B=B, R=R, candidates=test_X, seed=step_seed(seed, i)
                    )(test_X.unsqueeze(-2))
                    for i in range(num_draws)
                ]
            )  # num_draws x 5
        elif sampler in ("pathwise", "botorch-shared"):
            if sampler == "pathwise":
                paths = draw_posterior_paths(model, num_draws, num_features)
            else:
                paths = draw_matheron_paths(
                    model,
                    sample_shape=Size([num_draws]),
                    prior_sampler=partial(
                        draw_kernel_feature_paths, num_features=num_features
                    ),
                )
            f_tilde = paths(test_X)  # num_draws x 5
            draws = mean + v * (f_tilde - mean)  # the acquisition's rescaling
        else:
            raise ValueError(f"`sampler` must be one of {SAMPLERS}, got {sampler!r}.")
    return draws.var(dim=0) / (v**2 * var)


def report(
    num_draws: int = 2000, num_features: int = 4096
) -> list[tuple[str, str, Tensor]]:
    rows = []
    for kernel in ("rbf", "matern52"):
        for sampler in SAMPLERS:
            ratios = ts_variance_ratios(kernel, sampler, num_draws, num_features)
            rows.append((kernel, sampler, ratios))
    return rows
