"""Model helpers: GPs with the fixed hyperparameters the papers' theory assumes."""

from __future__ import annotations

import torch
from botorch.models import SingleTaskGP
from gpytorch.kernels import Kernel
from gpytorch.means import ZeroMean
from torch import Tensor


def fixed_gp(
    train_X: Tensor, train_Y: Tensor, kernel: Kernel, noise: float
) -> SingleTaskGP:
    r"""A ``SingleTaskGP`` exactly as the papers write it: prior GP(0, k) with a fixed
    kernel, regularizer :math:`\lambda` = ``noise`` on every observation, raw targets
    (no outcome transform), in eval mode and never fitted.

    Args:
        train_X: ``batch_shape x n x d`` inputs (``n`` may be 0: the prior).
        train_Y: ``batch_shape x n x 1`` observations.
        kernel: The kernel ``k`` (its hyperparameters are used as they are).
        noise: :math:`\lambda > 0`.
    """
    if not noise > 0:
        raise ValueError(f"`noise` (lambda) must be > 0, got noise={noise!r}.")
    if train_Y.ndim != train_X.ndim or train_Y.shape[-1] != 1:
        raise ValueError(
            "`train_Y` must be batch_shape x n x 1 matching `train_X`, got shapes "
            f"{tuple(train_X.shape)} and {tuple(train_Y.shape)}."
        )
    model = SingleTaskGP(
        train_X,
        train_Y,
        train_Yvar=torch.full_like(train_Y, noise),
        covar_module=kernel,
        mean_module=ZeroMean(),
        outcome_transform=None,
    )
    return model.eval()
