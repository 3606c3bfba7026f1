"""How well a refit finds the marginal-likelihood optimum (``python -m
bandit_experiments fit-quality``): on draws of Verma et al.'s GP (SE, lengthscale 0.02 on [0, 1], min-max
normalized, the problem's noise) observed at ``n`` uniformly drawn grid points, the
fitted lengthscale and log marginal likelihood per point of the simulators' earlier
refit (BoTorch's ``fit_gpytorch_mll`` from GPyTorch's default start, one start) and of
the multi-start fit (:mod:`botorch_bandits.models.multistart`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from gpytorch.kernels import RBFKernel, ScaleKernel
from gpytorch.means import ZeroMean
from gpytorch.mlls import ExactMarginalLogLikelihood
from torch import Tensor

from botorch_bandits.models.multistart import (
    DEFAULT_STARTS,
    fit_gp_multistart,
    log_marginal_likelihood,
)
from botorch_bandits.test_functions.problems import verma_gp_problem
from botorch_bandits.validation import check_count


def single_start_fit(X: Tensor, Y: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The simulators' refit before the multi-start fit: a zero-mean ``SingleTaskGP``
    with a scaled SE kernel on raw targets (batched over data sets), fitted by
    ``fit_gpytorch_mll`` from GPyTorch's default start (lengthscale ln 2).
    Returns (lengthscale, outputscale, noise), each ``batch``."""
    batch = X.shape[:-2]
    gp = SingleTaskGP(
        X,
        Y.unsqueeze(-1),
        covar_module=ScaleKernel(RBFKernel(batch_shape=batch), batch_shape=batch),
        mean_module=ZeroMean(batch_shape=batch),
        outcome_transform=None,
    )
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    with torch.no_grad():
        return (
            gp.covar_module.base_kernel.lengthscale.reshape(batch),
            gp.covar_module.outputscale.reshape(batch),
            gp.likelihood.noise.reshape(batch),
        )


def fit_quality(
    draws: int = 8,
    points: int = 200,
    seed: int = 0,
    starts: int = DEFAULT_STARTS,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Both fits on ``draws`` data sets of ``points`` observations each; per draw the
    lengthscales and log marginal likelihoods per point (both evaluated by the same
    exact formula), and each fit's wall time. ``progress(done, 2)`` after each fit."""
    check_count("draws", draws, 1)
    check_count("points", points, 2)
    problem = verma_gp_problem(num_seeds=draws, seed=seed)
    gen = torch.Generator().manual_seed(seed + 1)
    idx = torch.randint(problem.num_arms, (draws, points), generator=gen)
    X = problem.arms[idx]
    noise = torch.randn(draws, points, generator=gen, dtype=X.dtype)
    Y = problem.values.gather(-1, idx) + problem.noise_sd.reshape(-1, 1) * noise
    start = time.perf_counter()
    old = single_start_fit(X, Y)
    old_seconds = time.perf_counter() - start
    if progress is not None:
        progress(1, 2)
    start = time.perf_counter()
    new = fit_gp_multistart(X, Y, starts=starts)
    new_seconds = time.perf_counter() - start
    if progress is not None:
        progress(2, 2)
    return {
        "true_lengthscale": 0.02,
        "noise_variance": problem.noise_sd.pow(2).reshape(-1).tolist(),
        "old_lengthscale": old[0].tolist(),
        "old_log_likelihood": log_marginal_likelihood(X, Y, *old).tolist(),
        "new_lengthscale": new.lengthscale.tolist(),
        "new_noise": new.noise.tolist(),
        "new_log_likelihood": new.log_likelihood.tolist(),
        "old_seconds": old_seconds,
        "new_seconds": new_seconds,
        "starts": starts,
        "points": points,
    }


def fit_quality_lines(result: dict[str, Any]) -> list[str]:
    """The table ``fit-quality`` prints."""
    lines = [
        f"{len(result['old_lengthscale'])} draws, true lengthscale "
        f"{result['true_lengthscale']}, n = {result['points']}; log marginal "
        "likelihood per point (higher is better)",
        f"{'draw':>4}  {'1 start: l':>11} {'loglik/pt':>9}  "
        f"{result['starts']} starts: l {'loglik/pt':>9}",
    ]
    rows = zip(
        result["old_lengthscale"],
        result["old_log_likelihood"],
        result["new_lengthscale"],
        result["new_log_likelihood"],
        strict=True,
    )
    for i, (lo, llo, ln, lln) in enumerate(rows):
        lines.append(f"{i:>4}  {lo:11.4f} {llo:9.3f}  {ln:11.4f} {lln:9.3f}")
    lines.append(
        f"time: 1 start {result['old_seconds']:.1f} s, {result['starts']} starts "
        f"{result['new_seconds']:.1f} s (all draws)"
    )
    return lines
