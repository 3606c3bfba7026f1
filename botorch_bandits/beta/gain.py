r"""Information gain :math:`\tfrac12\log\det(I + \lambda^{-1}K)`: exact, along a
sequence, from posterior variances, of a model's training points, and the greedy
(uncertainty-sampling) bound on :math:`\gamma_T` (Srinivas et al. 2010 §5.1).

References:
    Srinivas, Krause, Kakade, Seeger. Gaussian Process Optimization in the Bandit
    Setting: No Regret and Experimental Design. ICML 2010.
    Chowdhury, Gopalan. On Kernelized Multi-armed Bandits. ICML 2017.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from botorch.models.model import ModelList
from botorch.sampling.pathwise.utils import get_train_inputs
from torch import Tensor

from botorch_bandits.validation import check_count, check_positive, check_tensor

GREEDY_FACTOR = 1.0 / (1.0 - math.exp(-1.0))
r"""The :math:`(1 - 1/e)^{-1}` factor of the greedy bound (Srinivas et al. 2010 §5.1)."""


def _noise_vector(noise: float | Tensor, K: Tensor) -> Tensor:
    noise_t = torch.as_tensor(noise, dtype=K.dtype, device=K.device)
    if torch.any(noise_t <= 0) or not bool(torch.isfinite(noise_t).all()):
        raise ValueError(
            f"`noise` (lambda) must be finite and > 0, got noise={noise!r}."
        )
    return noise_t.expand(K.shape[:-1])  # batch_shape x n


def information_gain_path(K: Tensor, noise: float | Tensor) -> Tensor:
    r"""Cumulative information gain :math:`I_1, \dots, I_n` along a sequence.

    :math:`I_t = \sum_{s \le t} \tfrac12\log(1 + \lambda^{-1}\sigma^2_{s-1}(x_s))`,
    computed from one Cholesky factor :math:`L` of :math:`K + \lambda I`
    (:math:`L_{ss}^2 = \sigma^2_{s-1}(x_s) + \lambda`). The last entry equals
    :func:`information_gain`. Repeated points are allowed.

    Unit: nats.

    Args:
        K: ``batch_shape x n x n`` prior kernel matrix of the sequence.
        noise: :math:`\lambda > 0`; a scalar or a ``batch_shape x n`` tensor
            (heteroskedastic, :math:`\tfrac12\log\det(I + \Lambda^{-1/2}K\Lambda^{-1/2})`).

    Returns:
        ``batch_shape x n`` tensor of cumulative information gains.
    """
    check_tensor("K", K, min_ndim=2, square=True)
    lam = _noise_vector(noise, K)  # batch_shape x n
    L = torch.linalg.cholesky(K + torch.diag_embed(lam))  # batch_shape x n x n
    diag = L.diagonal(dim1=-2, dim2=-1)  # batch_shape x n
    increments = torch.log(diag) - 0.5 * torch.log(lam)  # batch_shape x n
    return increments.cumsum(dim=-1)


def information_gain(K: Tensor, noise: float | Tensor) -> Tensor:
    r"""Exact information gain :math:`\tfrac12\log\det(I + \lambda^{-1}K)`.

    Unit: nats.

    Args:
        K: ``batch_shape x n x n`` prior kernel matrix of the observed points.
        noise: :math:`\lambda > 0` (scalar or ``batch_shape x n``).

    Returns:
        ``batch_shape`` tensor (0 for ``n = 0``).
    """
    check_tensor("K", K, min_ndim=2, square=True)
    if K.shape[-1] == 0:
        return K.new_zeros(K.shape[:-2])
    return information_gain_path(K, noise)[..., -1]


def incremental_information_gain(variances: Tensor, noise: float | Tensor) -> Tensor:
    r"""Cumulative :math:`\sum_{s \le t}\tfrac12\log(1 + \lambda^{-1}\sigma^2_{s-1}(x_s))`
    from the posterior variances of the chosen points at the time they were chosen.

    Unit: nats.

    Args:
        variances: ``batch_shape x T`` tensor of :math:`\sigma^2_{t-1}(x_t) \ge 0`.
        noise: :math:`\lambda > 0` (scalar or ``batch_shape x T``).

    Returns:
        ``batch_shape x T`` tensor of cumulative sums :math:`I_1, \dots, I_T`.
    """
    check_tensor("variances", variances)
    if torch.any(variances < 0):
        raise ValueError("`variances` must be >= 0 (posterior variances).")
    lam = torch.as_tensor(noise, dtype=variances.dtype, device=variances.device)
    if torch.any(lam <= 0) or not bool(torch.isfinite(lam).all()):
        raise ValueError(f"`noise` (lambda) must be > 0, got noise={noise!r}.")
    return (0.5 * torch.log1p(variances / lam)).cumsum(dim=-1)


@dataclass(frozen=True)
class GreedyInformationGain:
    r"""Result of :func:`greedy_information_gain`.

    Attributes:
        indices: ``batch_shape x T`` candidate indices chosen by uncertainty sampling.
        variances: ``batch_shape x T`` posterior variances
            :math:`\sigma^2_{t-1}(x_t)` at the time of choice.
        information_gain: ``batch_shape x T`` greedy information gains
            :math:`I(y_{A_t}; f)` for :math:`t = 1..T` (nats).
        gamma: ``batch_shape x T`` upper bounds
            :math:`\gamma_t \le (1 - 1/e)^{-1} I(y_{A_t}; f)` (nats).
    """

    indices: Tensor
    variances: Tensor
    information_gain: Tensor
    gamma: Tensor


def greedy_information_gain(
    K: Tensor, noise: float, horizon: int
) -> GreedyInformationGain:
    r"""Greedy (uncertainty-sampling) upper bound on :math:`\gamma_1, \dots, \gamma_T`
    over a finite candidate set (Srinivas et al. 2010, §5.1 and eq. (5)).

    Uncertainty sampling :math:`x_t = \arg\max_x \sigma^2_{t-1}(x)` is the greedy
    maximizer of the submodular :math:`F(A) = I(y_A; f)`, so
    :math:`\gamma_t \le (1 - 1/e)^{-1} I(y_{A_t}; f)`. Points may be chosen more than
    once (a bandit may pull an arm repeatedly; each pull is a new noisy observation).
    One pass of ``T`` rank-one (partial pivoted Cholesky) updates, ``O(N T)`` each,
    gives every :math:`\gamma_t` for :math:`t \le T`; ties go to the lowest index.

    Unit: nats.

    Args:
        K: ``batch_shape x N x N`` prior kernel matrix of the candidate set.
        noise: :math:`\lambda > 0`.
        horizon: :math:`T \ge 1`.

    Returns:
        A :class:`GreedyInformationGain`.

    Example:
        >>> X = torch.linspace(0, 1, 1000, dtype=torch.double).unsqueeze(-1)
        >>> K = torch.exp(-0.5 * torch.cdist(X, X) ** 2 / 0.2**2)
        >>> greedy_information_gain(K, noise=0.025, horizon=100).gamma[-1]
    """
    check_count("horizon", horizon, minimum=1)
    noise = check_positive("noise", noise)
    if K.ndim < 2 or K.shape[-1] != K.shape[-2]:
        raise ValueError(
            f"`K` must be batch_shape x N x N, got shape {tuple(K.shape)}."
        )
    batch_shape, N = K.shape[:-2], K.shape[-1]
    var = K.diagonal(dim1=-2, dim2=-1).clone()  # batch_shape x N
    factors = K.new_zeros(*batch_shape, horizon, N)  # batch_shape x T x N
    indices = torch.empty(*batch_shape, horizon, dtype=torch.long, device=K.device)
    chosen_var = K.new_empty(*batch_shape, horizon)  # batch_shape x T
    for t in range(horizon):
        idx = var.argmax(dim=-1, keepdim=True)  # batch_shape x 1
        v_idx = var.gather(-1, idx)  # batch_shape x 1
        # covariance of every candidate with x_t under the current posterior
        k_col = K.gather(-1, idx.unsqueeze(-1).expand(*batch_shape, N, 1)).squeeze(-1)
        f_idx = factors[..., :t, :].gather(
            -1, idx.unsqueeze(-2).expand(*batch_shape, t, 1)
        )  # batch_shape x t x 1
        cov = k_col - (factors[..., :t, :] * f_idx).sum(dim=-2)  # batch_shape x N
        new = cov / torch.sqrt(v_idx + noise)  # batch_shape x N
        factors[..., t, :] = new
        var = (var - new**2).clamp_min(0.0)
        indices[..., t] = idx.squeeze(-1)
        chosen_var[..., t] = v_idx.squeeze(-1)
    gains = incremental_information_gain(chosen_var, noise)
    return GreedyInformationGain(
        indices=indices,
        variances=chosen_var,
        information_gain=gains,
        gamma=GREEDY_FACTOR * gains,
    )


def observed_information_gain(model: Any, n: int | None = None) -> Tensor:
    r"""``batch_shape`` tensor of :math:`\tfrac12\log\det(I + \lambda^{-1}K_n)` for the
    training inputs of an exact GP ``model`` (e.g. ``SingleTaskGP``).

    Args:
        model: A GPyTorch ``ExactGP``-based BoTorch model with ``covar_module`` and a
            Gaussian likelihood.
        n: If given, the number of points expected (checked against the model:
            a ``ValueError`` where they differ).

    Returns:
        A ``batch_shape`` tensor (a 0-dim one for an unbatched model; 0 with no
        training data), in nats. A ``FiniteArmGP`` answers with the gain it tracks;
        a ``ModelList`` and a multi-output GP with the sum over their outputs.

    Example:
        >>> gp = SingleTaskGP(train_X, train_Y)
        >>> observed_information_gain(gp, n=train_X.shape[-2])
    """

    tracked = getattr(model, "information_gain_", None)
    if isinstance(tracked, Tensor):  # FiniteArmGP keeps it up to date
        counts = model.num_observations_
        if n is not None and bool(torch.any(counts != n)):
            raise ValueError(
                f"gamma='observed' can only give the information gain of the "
                f"{counts.tolist()} observed points, but gamma_{n} was asked for."
            )
        return tracked if model.batch_shape else tracked.squeeze(0)

    if isinstance(model, ModelList):
        # independent outputs: the gain of all observations about all outputs is the
        # sum of the per-output gains (and, by the data-processing inequality, an
        # upper bound on the gain about any scalarized objective)
        gains = [observed_information_gain(m, n) for m in model.models]
        total = gains[0]
        for g in gains[1:]:
            total = total + g
        return total
    if model is None or not hasattr(model, "covar_module"):
        raise TypeError(
            "gamma='observed' needs an exact GP model with `covar_module` and "
            f"training data (or a ModelListGP of them), got {type(model).__name__}; "
            "pass an a-priori gamma instead (a number, a callable n -> gamma_n, "
            "GreedyGamma or GammaOrder)."
        )
    train_inputs = getattr(model, "train_inputs", None)
    if not train_inputs:
        n_model = 0
    else:
        n_model = train_inputs[0].shape[-2]
    if n is not None and n != n_model:
        raise ValueError(
            f"gamma='observed' can only give the information gain of the "
            f"{n_model} observed points, but gamma_{n} was asked for."
        )
    if n_model == 0:
        return torch.zeros(())
    (X,) = get_train_inputs(model, transformed=True)
    with torch.no_grad():
        K = model.covar_module(X).to_dense()  # batch_shape (x m) x n x n
        noise = model.likelihood.noise  # batch_shape (x m) x 1 or x n
        if noise.shape[-1] != K.shape[-1]:
            noise = noise.expand(*noise.shape[:-1], K.shape[-1])
        gain = information_gain(K, noise)
    if getattr(model, "_num_outputs", 1) > 1:
        # a multi-output BoTorch GP keeps its m independent outputs as the last batch
        # dimension: their gains add up (as for a ModelListGP)
        gain = gain.sum(-1)
    return gain
