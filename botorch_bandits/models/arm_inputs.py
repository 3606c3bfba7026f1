"""The finite-arm engine's inputs, checked: its arm set (shared or per seed), kernel
matrix and noise, the arm set laid out for one batched acquisition call, and each
observation's arm indices and values
(:class:`~botorch_bandits.models.finite_arm.FiniteArmGP`)."""

from __future__ import annotations

import math

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_bandits.validation import check_count, check_tensor


def checked_num_seeds(
    arms: Tensor,
    num_seeds: int | None,
    refactor_every: int | None,
    defer: int | None,
    root_method: str,
) -> int | None:
    """The engine's arguments but the prior checked (in this order).

    Args:
        arms: ``N x d`` (shared) or ``S x N x d`` (per seed) arms, ``N >= 1``.
        num_seeds: ``S >= 1`` or ``None`` (must match per-seed ``arms``).
        refactor_every, defer: Integers ``>= 1`` or ``None``.
        root_method: ``"eigh"`` or ``"pivoted"``.

    Returns:
        The number of seeds (``S`` of per-seed ``arms`` when not given; ``None`` for
        shared arms without ``num_seeds``).
    """
    if root_method not in ("eigh", "pivoted"):
        raise ValueError(
            f"`root_method` must be 'eigh' or 'pivoted', got {root_method!r}."
        )
    check_tensor("arms", arms, min_ndim=2)
    if arms.ndim not in (2, 3) or arms.shape[-2] < 1:
        raise ValueError(
            "`arms` must be N x d (shared) or S x N x d (per seed) with N >= 1, "
            f"got shape {tuple(arms.shape)}."
        )
    for name, value in (
        ("num_seeds", num_seeds),
        ("refactor_every", refactor_every),
        ("defer", defer),
    ):
        if value is not None:  # None is allowed for both
            check_count(name, value, minimum=1)
    if arms.ndim == 3:
        if num_seeds is None:
            num_seeds = arms.shape[0]
        elif num_seeds != arms.shape[0]:
            raise ValueError(
                f"`num_seeds`={num_seeds} does not match the {arms.shape[0]} "
                "per-seed arm sets of `arms` (S x N x d)."
            )
    return num_seeds


def kernel_matrix(
    kernel: Kernel | Tensor, arms: Tensor, num_seeds: int | None
) -> Tensor:
    """The prior's kernel matrix on ``arms``: the given matrix checked, or the kernel
    evaluated once.

    Args:
        kernel: A GPyTorch kernel, or the matrix (``N x N``, or ``S x N x N`` with
            ``num_seeds``).
        arms: ``N x d`` or ``S x N x d`` arms.
        num_seeds: ``S``, or ``None``.

    Returns:
        ``N x N`` or ``S x N x N`` kernel matrix of ``arms``' dtype and device.
    """
    S = num_seeds or 1
    N = arms.shape[-2]
    if isinstance(kernel, Tensor):
        K = kernel.to(arms)
        per_seed = (S, N, N) if num_seeds is not None else (N, N)
        if K.shape not in ((N, N), per_seed):
            raise ValueError(
                f"`kernel` as a matrix must be {N} x {N} (or one per seed, "
                f"{S} x {N} x {N}), got {tuple(K.shape)}."
            )
    else:
        with torch.no_grad():
            K = kernel.to(arms)(arms).to_dense()
    return K


def noise_values(noise: float | Tensor, arms: Tensor, S: int) -> Tensor:
    r""":math:`\lambda` as a tensor like ``arms``, checked.

    Args:
        noise: :math:`\lambda > 0`, finite: a number or ``S`` values.
        arms: The arms (for the dtype and device).
        S: The number of seeds.

    Returns:
        A tensor of 1 or ``S`` values.
    """
    noise_t = torch.as_tensor(noise, dtype=arms.dtype, device=arms.device)
    if noise_t.numel() not in (1, S) or not bool(
        torch.all((noise_t > 0) & torch.isfinite(noise_t))
    ):
        raise ValueError(
            "`noise` (lambda) must be finite and > 0: a number or one value per seed "
            f"({S}), got noise={noise!r}."
        )
    return noise_t


def score_layout(arms: Tensor, num_seeds: int | None) -> Tensor:
    """The whole arm set laid out for one batched acquisition call (the engine's
    ``score_points``).

    Args:
        arms: ``N x d`` or ``S x N x d`` arms.
        num_seeds: ``S``, or ``None``.

    Returns:
        ``N x 1 x d`` (no seeds) or ``N x S x 1 x d`` (an expanded view for shared
        arms).
    """
    N = arms.shape[-2]
    if num_seeds is None:
        return arms.unsqueeze(-2)  # N x 1 x d
    if arms.ndim == 2:
        # N x S x 1 x d (an expanded view): every acquisition sees one point per
        # (arm, seed), as BoTorch's batch-model conventions expect
        return arms.view(N, 1, 1, -1).expand(N, num_seeds, 1, arms.shape[-1])
    return arms.transpose(0, 1).unsqueeze(-2)  # N x S x 1 x d


def as_observation(arm_idx: Tensor, y: Tensor, like: Tensor) -> tuple[Tensor, Tensor]:
    """``arm_idx`` as ``S`` long indices and ``y`` as ``S`` values of the dtype and
    on the device of ``like``; returned as given when they already are.

    Args:
        arm_idx: One integer arm index per seed (a fractional index is refused).
        y: One value per seed.
        like: The engine's ``S x N x N`` covariance.

    Returns:
        ``(arm_idx, y)``: ``S`` long indices and ``S`` values.
    """
    S = like.shape[0]
    if not (
        isinstance(arm_idx, Tensor)
        and arm_idx.dtype == torch.long
        and arm_idx.shape == (S,)
        and arm_idx.device == like.device
    ):
        raw = torch.as_tensor(arm_idx, device=like.device)
        if raw.is_floating_point() and not bool((raw == raw.round()).all()):
            raise ValueError(
                f"`arm_idx` must be integer arm indices, got arm_idx={arm_idx!r} "
                "(a fractional index is not an arm)."
            )
        if raw.numel() != S:
            raise ValueError(
                f"`arm_idx` must have one index per seed ({S}), got "
                f"arm_idx={arm_idx!r}."
            )
        arm_idx = raw.reshape(S).long()
    if not (isinstance(y, Tensor) and y.dtype == like.dtype and y.shape == (S,)):
        y = torch.as_tensor(y, dtype=like.dtype, device=like.device).reshape(S)
    return arm_idx, y


def check_observation(arm_idx: Tensor, y: Tensor, like: Tensor) -> bool:
    """Raise unless every index of ``arm_idx`` is one of the ``N`` arms of ``like``
    (the engine's ``S x N x N`` covariance) or -1 (skipped) and every observed ``y``
    is finite.

    Args:
        arm_idx: ``S`` long arm indices (-1: the seed skips this step).
        y: ``S`` values.
        like: The engine's ``S x N x N`` covariance.

    Returns:
        Whether every seed observes (no -1).
    """
    N = like.shape[-1]
    # validate on the host: one transfer each, no per-check device syncs
    arm_list, y_list = arm_idx.tolist(), y.to(like.device).tolist()
    lo, hi = min(arm_list), max(arm_list)
    if lo < -1 or hi >= N:
        raise ValueError(
            f"`arm_idx` must lie in [0, {N}) (or -1 to skip), got {arm_list}."
        )
    if not all(
        math.isfinite(v) for a, v in zip(arm_list, y_list, strict=True) if a >= 0
    ):
        raise ValueError(f"`y` must be finite for observed seeds, got {y_list}.")
    return lo >= 0
