"""A real hyperparameter-tuning workload that runs offline: logistic regression on
scikit-learn's breast-cancer dataset (Verma, Dai & Low 2022, §6.2 / App. C.2) --
three hyperparameters (batch size, learning rate, decay) on a grid of configurations,
each trained for real once per process; a query reads its validation accuracy. The
paper's settings and our choices are listed in ``docs/reproducing.md``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import torch
from torch import Tensor

from botorch_bandits._install import install_hint
from botorch_bandits.test_functions.problems import BanditProblem, table_problem
from botorch_bandits.validation import check_count

BATCH_RANGE = (32.0, 128.0)
LR_RANGE = (1e-6, 1.0)
DECAY_RANGE = (1e-6, 1.0)


def _scale(u: float, lo_hi: tuple[float, float]) -> float:
    lo, hi = lo_hi
    return lo + u * (hi - lo)


def decode(unit: Tensor) -> tuple[int, float, float]:
    """A point of [0, 1]^3 -> (batch size, learning rate, decay).

    Each coordinate is mapped linearly onto its range (``BATCH_RANGE``,
    ``LR_RANGE``, ``DECAY_RANGE``); the batch size is rounded to an integer.

    Args:
        unit: Three numbers in ``[0, 1]`` (a ``3`` tensor, or anything iterable).

    Returns:
        ``(batch_size, lr, decay)``: an ``int`` in [32, 128] and two floats in
        [1e-6, 1].

    Raises:
        ValueError: If ``unit`` is not three numbers in ``[0, 1]``.

    Example:
        >>> decode(torch.tensor([0.0, 0.5, 1.0]))
        (32, 0.5000005, 1.0)
    """
    u = [float(v) for v in unit]
    if len(u) != 3 or not all(0.0 <= v <= 1.0 for v in u):
        raise ValueError(f"`unit` must be 3 numbers in [0, 1], got {u}.")
    return (
        round(_scale(u[0], BATCH_RANGE)),
        _scale(u[1], LR_RANGE),
        _scale(u[2], DECAY_RANGE),
    )


@lru_cache(maxsize=1)
def breast_cancer_split() -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(X_train, y_train, X_val, y_val): a stratified 70/30 split (seed 0), features
    standardized with the training split's statistics."""
    try:
        from sklearn.datasets import load_breast_cancer
        from sklearn.model_selection import train_test_split
    except ImportError as err:  # pragma: no cover - scikit-learn is in the lr extra
        raise ImportError(
            f"The LR workload needs scikit-learn: {install_hint('lr')}"
        ) from err
    data = load_breast_cancer()
    X_tr, X_va, y_tr, y_va = train_test_split(
        data.data, data.target, test_size=0.3, stratify=data.target, random_state=0
    )
    X_tr, X_va = (torch.as_tensor(a, dtype=torch.double) for a in (X_tr, X_va))
    mean, scale = X_tr.mean(0), X_tr.std(0).clamp_min(1e-12)
    return (
        (X_tr - mean) / scale,
        torch.as_tensor(y_tr, dtype=torch.double),
        (X_va - mean) / scale,
        torch.as_tensor(y_va, dtype=torch.double),
    )


def validation_accuracy(
    batch_size: int, lr: float, decay: float, epochs: int = 20, seed: int = 0
) -> float:
    """Train logistic regression by mini-batch SGD and return its validation accuracy.

    The weights start at 0; every epoch shuffles the training split of
    :func:`breast_cancer_split` and takes one step per mini-batch on the mean
    logistic loss, with the decayed step size ``lr / (1 + decay * k)`` (``k``: the
    number of steps taken so far).

    Args:
        batch_size: The mini-batch size, an integer >= 1.
        lr: The initial learning rate (finite, >= 0).
        decay: The step-size decay (finite, >= 0).
        epochs: The passes over the training split (default 20).
        seed: Seed of the shuffles (default 0).

    Returns:
        The fraction of the validation split's labels predicted right, in [0, 1].

    Raises:
        ValueError: If ``batch_size`` is not an integer >= 1, or ``lr`` or ``decay``
            is not finite and >= 0.
        ImportError: Without scikit-learn (the ``lr`` extra).

    Example:
        >>> validation_accuracy(*decode(torch.tensor([0.5, 0.1, 0.0])))
    """
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, int)
        or batch_size < 1
    ):
        raise ValueError(f"`batch_size` must be an integer >= 1, got {batch_size!r}.")
    for name, value in (("lr", lr), ("decay", decay)):
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"`{name}` must be finite and >= 0, got {name}={value!r}.")
    X, y, X_val, y_val = breast_cancer_split()
    n, d = X.shape
    w = torch.zeros(d, dtype=X.dtype)
    b = torch.zeros((), dtype=X.dtype)
    gen = torch.Generator().manual_seed(seed)
    k = 0
    for _ in range(epochs):
        order = torch.randperm(n, generator=gen)
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            xb, yb = X[idx], y[idx]
            p = torch.sigmoid(xb @ w + b)
            err = p - yb  # gradient of the mean logistic loss
            step = lr / (1.0 + decay * k)
            w = w - step * (xb.T @ err) / len(idx)
            b = b - step * err.mean()
            k += 1
    pred = (X_val @ w + b) > 0
    return float((pred == y_val.bool()).double().mean())


@lru_cache(maxsize=4)
def accuracy_table(points_per_dim: int = 8, epochs: int = 20) -> tuple[Tensor, Tensor]:
    """(``N x 3`` grid of [0, 1]^3, ``N`` validation accuracies), every configuration
    trained once (cached per process).

    Each grid point is decoded by :func:`decode` and trained by
    :func:`validation_accuracy` (seed 0), on one torch thread.

    Args:
        points_per_dim: Grid points per axis (default 8): ``N = points_per_dim**3``.
        epochs: Training epochs of every configuration (default 20).

    Returns:
        ``(grid, accuracies)``: the ``N x 3`` grid (double) and the ``N``
        validation accuracies.

    Example:
        >>> grid, acc = accuracy_table(points_per_dim=4)  # 64 configurations
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small matrices: one thread is fastest and reproducible
    try:
        axis = torch.linspace(0, 1, points_per_dim, dtype=torch.double)
        grid = torch.cartesian_prod(axis, axis, axis)
        acc = torch.tensor(
            [validation_accuracy(*decode(u), epochs=epochs) for u in grid],
            dtype=torch.double,
        )
    finally:
        torch.set_num_threads(threads)
    return grid, acc


def lr_tuning_problem(
    num_seeds: int = 10,
    points_per_dim: int = 8,
    lengthscale: float = 0.3,
    noise: float = 1e-3,
    epochs: int = 20,
    seed: int = 0,
) -> BanditProblem:
    r"""The LR workload as a bandit: arms = the hyperparameter grid, values = the
    validation accuracies (one function; seeds differ in delays, initial points and TS
    draws). Evaluations are deterministic (``noise_sd`` 0); the algorithms use an SE
    kernel with fixed lengthscale ``lengthscale`` on [0, 1]^3 and :math:`\lambda` =
    ``noise`` (our choices; the paper refits hyperparameters).

    Args:
        num_seeds: The number of seeds ``S`` >= 1 (default 10), all on the same
            function.
        points_per_dim: Grid points per axis (default 8): ``N = points_per_dim**3``
            arms.
        lengthscale: The SE kernel's fixed lengthscale on [0, 1]^3 (default 0.3).
        noise: The algorithms' regularizer :math:`\lambda` (default 1e-3).
        epochs: Training epochs of every configuration (default 20).
        seed: Accepted for the problem builders' common signature; unused.

    Returns:
        The :class:`~botorch_bandits.test_functions.problems.BanditProblem`
        ``"lr-breast-cancer"``: ``N x 3`` arms shared by the seeds, ``S x N`` values.

    Raises:
        ValueError: If ``num_seeds`` is not an integer >= 1.

    Example:
        >>> problem = lr_tuning_problem(num_seeds=5)  # trains 512 configurations
        >>> problem.arms.shape, problem.values.shape
        (torch.Size([512, 3]), torch.Size([5, 512]))
    """
    check_count("num_seeds", num_seeds, minimum=1)
    grid, acc = accuracy_table(points_per_dim, epochs)
    return table_problem("lr-breast-cancer", grid, acc, num_seeds, lengthscale, noise)
