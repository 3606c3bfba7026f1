"""Summaries over seeds: the mean and standard error of a batch of runs, as the
demos' tables and plots (and the repository's benchmarks) report them."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

__all__ = ["mean_and_standard_error"]


def mean_and_standard_error(
    runs: Tensor | np.ndarray,
) -> tuple[Tensor, Tensor] | tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over the first (seed) dimension of ``seeds x T``;
    the standard error is 0 for a single seed. A NumPy array gives arrays (computed
    by the same torch code).

    Args:
        runs: The ``seeds x T`` runs (a tensor or a NumPy array; the seeds first,
            any shape after).

    Returns:
        The mean and the standard error (the sample standard deviation over
        :math:`\\sqrt{\\text{seeds}}`), each of shape ``T``: tensors for a tensor,
        NumPy arrays for an array.

    Example:
        >>> mean_and_standard_error(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        (tensor([2., 3.]), tensor([1., 1.]))
    """
    if not isinstance(runs, Tensor):
        mean, se = mean_and_standard_error(torch.as_tensor(np.asarray(runs)))
        return mean.numpy(), se.numpy()
    mean = runs.mean(0)
    if runs.shape[0] < 2:
        return mean, torch.zeros_like(mean)
    return mean, runs.std(0, unbiased=True) / math.sqrt(runs.shape[0])
