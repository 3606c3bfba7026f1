"""GPs as the papers' theory writes them: a fixed kernel with unit variance
(:func:`make_kernel`) and a ``SingleTaskGP`` with prior GP(0, k), a fixed regularizer
and raw targets (:func:`fixed_gp`)."""

from __future__ import annotations

import torch
from botorch.models import SingleTaskGP
from gpytorch.kernels import Kernel, MaternKernel, RBFKernel
from gpytorch.means import ZeroMean
from gpytorch.settings import min_fixed_noise
from torch import Tensor

from botorch_bandits.validation import check_positive, check_row_noise, check_tensor


def make_kernel(
    name: str, lengthscale: float, dtype: torch.dtype = torch.double
) -> Kernel:
    """``"rbf"`` (squared exponential) or ``"matern52"`` with a fixed lengthscale and
    unit variance (k(x, x) = 1, as the papers assume).

    Args:
        name: ``"rbf"`` or ``"matern52"``.
        lengthscale: The lengthscale, ``> 0`` (not trained: ``requires_grad=False``).
        dtype: The kernel's dtype (default ``torch.double``).

    Returns:
        The GPyTorch kernel (no ``ScaleKernel``).

    Example:
        >>> k = make_kernel("matern52", lengthscale=0.2)
        >>> gp = fixed_gp(train_X, train_Y, k, noise=0.01)
    """
    if name == "rbf":
        kernel = RBFKernel()
    elif name == "matern52":
        kernel = MaternKernel(nu=2.5)
    else:
        raise ValueError(f"`kernel` must be 'rbf' or 'matern52', got kernel={name!r}.")
    check_positive("lengthscale", lengthscale)
    kernel.lengthscale = lengthscale
    kernel.raw_lengthscale.requires_grad_(False)
    return kernel.to(dtype)


def _noise_floor(dtype: torch.dtype) -> float:
    """GPyTorch's smallest fixed noise for ``dtype`` (``settings.min_fixed_noise``)."""
    return float(min_fixed_noise.value(dtype))


def fixed_gp(
    train_X: Tensor,
    train_Y: Tensor,
    kernel: Kernel,
    noise: float,
    known: Tensor | None = None,
) -> SingleTaskGP:
    r"""A ``SingleTaskGP`` exactly as the papers write it: prior GP(0, k) with a fixed
    kernel, regularizer :math:`\lambda` = ``noise`` on every observation, raw targets
    (no outcome transform), in eval mode and never fitted.

    Args:
        train_X: ``batch_shape x n x d`` inputs (``n`` may be 0: the prior).
        train_Y: ``batch_shape x n x 1`` observations.
        kernel: The kernel ``k`` (its hyperparameters are used as they are).
        noise: :math:`\lambda > 0`.
        known: ``n`` noise variances per observation in place of ``noise``
            (reported standard errors: the caller's rule makes them), raised to
            GPyTorch's floor.

    Returns:
        The ``SingleTaskGP`` in eval mode (``ZeroMean``, ``train_Yvar`` fixed).

    Raises:
        ValueError: For shapes that do not match, differing dtypes, or a ``noise``
            below GPyTorch's floor for the dtype (which it would use silently).
    """
    check_positive("noise", noise)
    check_tensor("train_X", train_X, min_ndim=2)
    check_tensor("train_Y", train_Y, min_ndim=2)
    if not isinstance(kernel, Kernel):
        raise ValueError(
            f"`kernel` must be a gpytorch Kernel, got kernel={kernel!r} of type "
            f"{type(kernel).__name__}."
        )
    if (
        train_Y.ndim != train_X.ndim
        or train_Y.shape[-1] != 1
        or train_Y.shape[:-1] != train_X.shape[:-1]
    ):
        raise ValueError(
            "`train_Y` must be batch_shape x n x 1 matching `train_X`, got shapes "
            f"{tuple(train_X.shape)} and {tuple(train_Y.shape)}."
        )
    if train_X.dtype != train_Y.dtype:
        raise ValueError(
            f"`train_X` and `train_Y` must share a dtype, got train_X.dtype="
            f"{train_X.dtype} and train_Y.dtype={train_Y.dtype}."
        )
    floor = _noise_floor(train_X.dtype)
    if noise < floor:
        raise ValueError(
            f"`noise` must be >= {floor:g} for {train_X.dtype} (GPyTorch's floor on a "
            f"fixed noise, which it would use silently instead), got noise={noise!r}."
        )
    if known is None:
        yvar = torch.full_like(train_Y, noise)
    else:
        check_row_noise("known", known, train_Y.shape[:-1].numel())
        yvar = known.to(train_Y).reshape(train_Y.shape).clamp_min(floor)
    model = SingleTaskGP(
        train_X,
        train_Y,
        train_Yvar=yvar,
        covar_module=kernel,
        mean_module=ZeroMean(),
        outcome_transform=None,
    )
    return model.eval()
