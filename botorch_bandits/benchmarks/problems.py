r"""Benchmark problems from the papers.

References:
    Chowdhury, Gopalan. On Kernelized Multi-armed Bandits. ICML 2017, §6.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from gpytorch.kernels import Kernel, MaternKernel, RBFKernel
from torch import Tensor


def make_kernel(
    name: str, lengthscale: float, dtype: torch.dtype = torch.double
) -> Kernel:
    """``"rbf"`` (squared exponential) or ``"matern52"`` with a fixed lengthscale and
    unit variance (k(x, x) = 1, as the papers assume)."""
    if name == "rbf":
        kernel = RBFKernel()
    elif name == "matern52":
        kernel = MaternKernel(nu=2.5)
    else:
        raise ValueError(f"`kernel` must be 'rbf' or 'matern52', got kernel={name!r}.")
    if not lengthscale > 0:
        raise ValueError(f"`lengthscale` must be > 0, got lengthscale={lengthscale!r}.")
    kernel.lengthscale = lengthscale
    kernel.raw_lengthscale.requires_grad_(False)
    return kernel.to(dtype)


@dataclass(frozen=True)
class FiniteArmProblem:
    r"""A finite-arm bandit: arms ``X`` (``N x d``) with true values ``f`` (``N``).

    Attributes:
        arms: ``N x d`` decision set.
        values: ``N`` true function values.
        kernel: The kernel the algorithms use.
        noise_sd: ``R``, the standard deviation of the Gaussian observation noise.
        rkhs_norm: ``||f||_k`` (exact for functions built by :func:`rkhs_function`).
    """

    arms: Tensor
    values: Tensor
    kernel: Kernel
    noise_sd: float
    rkhs_norm: float

    @property
    def optimum(self) -> float:
        return float(self.values.max())


def rkhs_function(
    num_arms: int = 100,
    kernel: str = "rbf",
    lengthscale: float = 0.2,
    noise_fraction: float = 0.01,
    build_noise: float = 1e-2,
    seed: int = 0,
    dtype: torch.dtype = torch.double,
) -> FiniteArmProblem:
    r"""An RKHS test function built as in Chowdhury & Gopalan 2017, §6.

    ``num_arms`` points uniform in [0, 1]; :math:`y \sim N(0, K)` on them;
    :math:`f = \sum_i \alpha_i k(x_i, \cdot)` with :math:`\alpha = (K + \lambda_0 I)^{-1}y`
    (the posterior mean of that draw). The RKHS norm is exact:
    :math:`\|f\|_k^2 = \alpha^\top K\alpha` (the paper writes :math:`B^2 = f^\top K f`).
    The noise variance is :math:`R^2` = ``noise_fraction`` times the range of ``f`` on
    the arms (the paper: 1 %). :math:`\lambda_0` = ``build_noise`` is not given in the
    paper; 0.01 is our choice.
    """
    if isinstance(num_arms, bool) or not isinstance(num_arms, int) or num_arms < 2:
        raise ValueError(
            f"`num_arms` must be an integer >= 2, got num_arms={num_arms!r}."
        )
    if not noise_fraction > 0:
        raise ValueError(f"`noise_fraction` must be > 0, got {noise_fraction!r}.")
    gen = torch.Generator().manual_seed(seed)
    arms = torch.rand(num_arms, 1, generator=gen, dtype=dtype)
    k = make_kernel(kernel, lengthscale, dtype)
    with torch.no_grad():
        K = k(arms).to_dense()
        L = torch.linalg.cholesky(K + 1e-10 * torch.eye(num_arms, dtype=dtype))
        y = L @ torch.randn(num_arms, generator=gen, dtype=dtype)
        alpha = torch.linalg.solve(
            K + build_noise * torch.eye(num_arms, dtype=dtype), y
        )
        values = K @ alpha
        norm = float(torch.sqrt(alpha @ K @ alpha))
    value_range = float(values.max() - values.min())
    return FiniteArmProblem(
        arms=arms,
        values=values,
        kernel=k,
        noise_sd=(noise_fraction * value_range) ** 0.5,
        rkhs_norm=norm,
    )
