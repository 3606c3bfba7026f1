r"""Pending points and q-batches, shared by every acquisition class: hallucination
(GP-BUCB, Desautels et al. 2014: a pending point observed at the posterior mean,
:func:`hallucinated_model`), censoring (Verma et al. 2022: observed at ``y_min``,
:func:`censored_model`), and the closed-form posterior of point ``j`` of a q-batch
given its earlier points (:func:`stage_moments`), so a joint q-batch has the value of
the sequential rule. Models: anything with ``condition_on_observations`` and
:class:`botorch_bandits.models.FiniteArmGP`. Guide: docs/botorch.md.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from botorch.acquisition.objective import (
    PosteriorTransform,
    ScalarizedPosteriorTransform,
)
from botorch.exceptions.errors import UnsupportedError
from botorch.models.model import Model, ModelList
from botorch.models.multitask import KroneckerMultiTaskGP
from botorch.utils.transforms import is_ensemble
from gpytorch.likelihoods import FixedNoiseGaussianLikelihood
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from botorch_bandits.acquisition._common import model_tensor


# --------------------------------------------------------------------------------------
# model batch
# --------------------------------------------------------------------------------------
def model_batch_shape(model: Model) -> torch.Size:
    """The model's batch shape (``[]`` when it has none or does not say: e.g. BoTorch's
    ``GenericDeterministicModel``, whose ``batch_shape`` is ``None`` unless given).

    Args:
        model: A BoTorch model.

    Returns:
        The batch shape.
    """
    try:
        shape = model.batch_shape
    except Exception:  # e.g. a ModelList of models with different batch shapes
        return torch.Size([])
    if shape is None:
        return torch.Size([])
    try:
        return torch.Size(shape)
    except (TypeError, ValueError):  # not a sequence of ints: treat as unbatched
        return torch.Size([])


def is_ensemble_model(model: Model) -> bool:
    """Whether ``model`` is an ensemble: BoTorch's ``is_ensemble`` (a fully Bayesian
    ``SaasFullyBayesianSingleTaskGP``, an ``EnsembleMapSaasSingleTaskGP``, any model
    with ``_is_ensemble``), or a model whose ``is_ensemble`` attribute is ``True``.
    Its posterior adds the ensemble dimension itself (at ``-3`` of ``X``), so ``X``
    never carries it.

    Args:
        model: A BoTorch model.

    Returns:
        Whether it is an ensemble.
    """
    return is_ensemble(model) or getattr(model, "is_ensemble", False) is True


def pairing_batch_shape(model: Model) -> torch.Size:
    """The model batch dims that the batch dims of ``X`` pair with: the model's batch
    shape, except ``[]`` for an ensemble (its posterior adds the ensemble dim to any
    ``X``, and the values get it as their last dim).

    Args:
        model: A BoTorch model.

    Returns:
        Those batch dims.
    """
    if is_ensemble_model(model):
        return torch.Size([])
    return model_batch_shape(model)


def _pairs(X: Tensor, batch: torch.Size) -> bool:
    """Whether the trailing t-batch dims of ``X`` broadcast with ``batch``."""
    t_batch = X.shape[:-2]
    k = len(batch)
    if len(t_batch) < k:
        return False
    try:
        torch.broadcast_shapes(tuple(t_batch[-k:]), tuple(batch))
    except RuntimeError:
        return False
    return True


def broadcast_over_model_batch(X: Tensor, model: Model) -> tuple[Tensor, int]:
    """``(X', k)`` for Thompson sampling on a batched model. BoTorch's broadcasting
    first, as the UCB classes (:func:`align_to_model_batch`): when the trailing batch
    dims of ``X`` broadcast with the model's batch shape they pair with it (``X`` of
    shape ``3 x 1 x d`` on a model of batch shape ``[3]``: point ``i`` on batch ``i``;
    ``b x 1 x q x d``: every point under every batch) and ``X`` is returned as it is
    (``k = 0``). Otherwise (``10 x 1 x d`` for batch shape ``[3]``) ``k`` singleton
    dims are inserted so that every point is valued under every model batch, and the
    caller sums the ``k`` trailing value dims (what BoTorch's
    ``PathwiseThompsonSampling`` does). An ensemble is never paired (see
    :func:`pairing_batch_shape`): the caller picks one member per draw.

    Args:
        X: ``batch x q x d`` points.
        model: A BoTorch model.

    Returns:
        ``(X', k)``: ``X`` (``k = 0``) or ``X`` with ``k`` singleton dims before
        ``q x d``.
    """
    batch = pairing_batch_shape(model)
    k = len(batch)
    if not batch or _pairs(X, batch):
        return X, 0
    return X.reshape(*X.shape[:-2], *([1] * k), *X.shape[-2:]), k


def align_to_model_batch(X: Tensor, model: Model) -> Tensor:
    r"""``X`` (``(b) x q x d``) checked against a batched model's batch shape.

    BoTorch's convention: the trailing batch dims of ``X`` pair with (broadcast
    against) the model's batch dims -- ``X`` of shape ``b x 1 x q x d`` scores every
    point under every model batch (values ``b x M``), ``b x M x q x d`` one point per
    model batch. ``X`` whose batch dims cannot pair (``10 x 1 x d`` for a model of
    batch shape ``[3]``) raises a ``ValueError`` that says so -- BoTorch's analytic
    acquisition functions fail there too, with a broadcasting error. An ensemble
    model (e.g. ``SaasFullyBayesianSingleTaskGP``) takes any ``X``: its posterior adds
    the ensemble dim, and the values are averaged over it (BoTorch's
    ``average_over_ensemble_models``, as its ``UpperConfidenceBound`` does).

    Args:
        X: ``(b) x q x d`` points.
        model: A BoTorch model.

    Returns:
        ``X`` unchanged (a ``ValueError`` where it cannot pair).
    """
    batch = pairing_batch_shape(model)
    if not batch:
        return X
    k = len(batch)
    if not _pairs(X, batch):
        shape = "x".join(str(s) for s in batch)
        raise ValueError(
            f"The model is batched (batch_shape={list(batch)}: one GP per batch) and "
            f"X of shape {tuple(X.shape)} has no batch dims that pair with it. Pass X "
            f"as b x {' x '.join('1' * k)} x q x d to score every point under every "
            f"model batch (values b x {shape}), or b x {shape} x q x d for one point "
            "per batch. BoTorch's optimizers need one value per candidate and cannot "
            "optimize a batched model: optimize each batch's GP on its own (e.g. "
            "SingleTaskGP on that batch's data), or use FiniteArmGP for many seeds."
        )
    return X


# --------------------------------------------------------------------------------------
# conditioning a model on pending points
# --------------------------------------------------------------------------------------
def _fixed_noise_level(model: Model) -> Tensor | None:
    """Mean training noise of a fixed-noise likelihood (``batch x 1``), else None."""
    likelihood = getattr(model, "likelihood", None)
    if not isinstance(likelihood, FixedNoiseGaussianLikelihood):
        return None
    noise = likelihood.noise  # batch_shape x n (already outcome-transformed)
    if noise.shape[-1] == 0:
        raise ValueError(
            "Cannot condition a fixed-noise model without observations: its noise "
            "level for the pending points is unknown."
        )
    return noise.mean(-1, keepdim=True)


def condition_model(model: Model, X: Tensor, Y: Tensor) -> Model:
    r"""``model`` conditioned on ``(X, Y)`` (``p x d``; ``(batch) x p x m``) with its
    hyperparameters kept: exact GP conditioning (BoTorch's
    ``condition_on_observations``), a copy for :class:`FiniteArmGP`. A fixed-noise
    likelihood gets the mean of its training noise levels for the new points (BoTorch's
    own choice for ``posterior(..., observation_noise=True)``).

    Args:
        model: A GP with ``condition_on_observations`` (or a ``ModelList`` of them),
            or a :class:`FiniteArmGP` (``X`` then arms).
        X: ``p x d`` points.
        Y: ``(batch) x p x m`` targets.

    Returns:
        The conditioned model (``model`` itself is not changed).

    Raises:
        UnsupportedError: For a model that cannot be conditioned (e.g. a
            ``KroneckerMultiTaskGP`` or ``GenericDeterministicModel``).
    """
    if hasattr(model, "score_points") and hasattr(model, "observe"):  # FiniteArmGP
        return _condition_finite_arm(model, X, Y)
    _check_conditionable(model)
    try:
        return _condition_exact(model, X, Y)
    except NotImplementedError as err:  # e.g. GenericDeterministicModel
        raise UnsupportedError(
            f"Pending points (X_pending of {X.shape[-2]} points) need a model that "
            f"can be conditioned on observations; {type(model).__name__} cannot "
            f"({err}). Drop X_pending and use q=1, or use a GP model."
        ) from err


def _check_conditionable(model: Model) -> None:
    """Models whose ``condition_on_observations`` does not give a model whose
    posterior holds the new points: a clear error instead of a wrong value."""

    models = model.models if isinstance(model, ModelList) else [model]
    for m in models:
        if isinstance(m, KroneckerMultiTaskGP):
            raise UnsupportedError(
                "Pending points (X_pending) are conditioned into the model, and "
                "KroneckerMultiTaskGP cannot be conditioned on observations (its "
                "posterior keeps its own caches, and GPyTorch's fantasy update fails "
                "on it). Use a multi-output SingleTaskGP or a ModelListGP, or drop "
                "X_pending (a joint q-batch without pending points works)."
            )


def _condition_exact(model: Model, X: Tensor, Y: Tensor) -> Model:
    """:func:`condition_model` for BoTorch's GPyTorch models and model lists."""
    if isinstance(model, ModelList):
        if not hasattr(model, "condition_on_observations"):
            raise UnsupportedError(
                f"Cannot condition a {type(model).__name__} on pending points."
            )
        models = model.models
        Xs = [X.expand(*model_batch_shape(m), *X.shape) for m in models]
        kwargs: dict[str, Any] = {}
        levels = [_fixed_noise_level(m) for m in models]
        if any(v is not None for v in levels):
            if not all(v is not None for v in levels):
                raise UnsupportedError(
                    "Cannot condition a ModelListGP that mixes fixed-noise and "
                    "inferred-noise models on pending points."
                )
            kwargs["noise"] = torch.cat(
                [v.unsqueeze(-1).expand(*Y.shape[:-1], 1) for v in levels], dim=-1
            ).to(Y)
        conditioned = model.condition_on_observations(X=Xs, Y=Y, **kwargs)
        for m in conditioned.models:
            _tuple_inputs(m)
        return conditioned
    X = X.expand(*model_batch_shape(model), *X.shape)  # batch_shape x p x d
    kwargs = {}
    level = _fixed_noise_level(model)
    if level is not None:
        # batch_shape(x m) x 1 -> the shape of Y
        level = level.reshape(*model_batch_shape(model), 1, -1)
        kwargs["noise"] = level.expand(Y.shape).to(Y)
    if not hasattr(model, "condition_on_observations"):
        raise UnsupportedError(
            f"Cannot condition a {type(model).__name__} on pending points."
        )
    conditioned = model.condition_on_observations(X=X, Y=Y, **kwargs)
    _tuple_inputs(conditioned)
    return conditioned


def _tuple_inputs(model: Model) -> None:
    inputs = getattr(model, "train_inputs", None)
    if isinstance(inputs, list):
        # GPyTorch's get_fantasy_model stores a list; ExactGP (and num_observations,
        # which counts the round t from it) use a tuple
        model.train_inputs = tuple(inputs)


def _condition_finite_arm(model: Any, X: Tensor, Y: Tensor) -> Any:
    """A copy of a :class:`FiniteArmGP` with ``X`` (arms) observed at ``Y``."""
    new = copy.deepcopy(model)
    idx = model.arm_indices(X.unsqueeze(-2)).squeeze(-1)  # p, or p x S (broadcast)
    S = model.num_seeds
    y = Y[..., 0]  # (S) x p
    for i in range(X.shape[-2]):
        arm = idx[i]
        if S is not None:
            arm = arm.expand(S)
            target = y[..., i].expand(S)
        else:
            arm, target = arm.reshape(1), y[..., i].reshape(1)
        new.observe(arm, target)
    return new


def hallucinated_model(model: Model, X_pending: Tensor) -> Model:
    r"""GP-BUCB / GP-BTS: ``model`` conditioned on ``X_pending`` (``p x d``) with
    targets the posterior mean :math:`\mu_{t-1}` of the completed-only ``model``
    (Desautels et al. 2014; Verma et al. 2022, §4): the mean is unchanged, the
    variance is that of all issued points. Every output of a multi-output model is
    hallucinated at its own mean.

    Args:
        model: The completed-only model (see :func:`condition_model`).
        X_pending: ``p x d`` pending points.

    Returns:
        The conditioned model.
    """
    with torch.no_grad():  # also fills the caches condition_on_observations needs
        mean = model.posterior(X_pending).mean  # batch_shape x p x m
    return condition_model(model, X_pending, mean.detach())


def censored_model(model: Model, X_pending: Tensor, y_min: float) -> Model:
    r"""GP-UCB-SDF / GP-TS-SDF: ``model`` conditioned on ``X_pending`` with the
    censored target ``y_min`` (Verma et al. 2022, Eq. (1)).

    Args:
        model: A single-output model (see :func:`condition_model`).
        X_pending: ``p x d`` pending points.
        y_min: The censored target.

    Returns:
        The conditioned model.
    """
    single_output(model, "Censoring pending points")
    with torch.no_grad():  # fills the caches condition_on_observations needs
        mean = model.posterior(X_pending).mean  # batch_shape x p x 1
    return condition_model(model, X_pending, torch.full_like(mean, float(y_min)))


def single_output(model: Model, what: str) -> None:
    """Refuse a model with more than one output (censoring needs the objective's).

    Args:
        model: A BoTorch model.
        what: What needs it, for the message (e.g. ``"Censoring pending points"``).
    """
    if model.num_outputs != 1:
        raise ValueError(
            f"{what} needs a single-output model (the objective's), got "
            f"num_outputs={model.num_outputs}: censoring is defined for one observed "
            "output (Verma et al. 2022, Eq. (1))."
        )


def check_pending(X_pending: Any, d: int | None, model: Any = None) -> Tensor | None:
    """``p x d`` pending points, detached (``None`` for none or ``p = 0``), in the
    dtype and on the device of ``model`` (a float32 ``X_pending`` on a float64
    model is cast, as ``optimize_acqf``'s float32 candidates would otherwise fail
    deep inside the model's conditioning).

    Args:
        X_pending: ``p x d`` points, or ``None``.
        d: The model's input dimension (``None``: not checked).
        model: The model whose dtype and device the points take (default ``None``:
            kept).

    Returns:
        A detached copy of ``X_pending``, or ``None``.
    """
    if X_pending is None:
        return None
    if not isinstance(X_pending, Tensor) or X_pending.ndim != 2:
        raise ValueError(
            "`X_pending` must be a p x d tensor or None, got "
            f"{type(X_pending).__name__} of shape "
            f"{tuple(getattr(X_pending, 'shape', ()))}."
        )
    if d is not None and X_pending.shape[-1] != d:
        raise ValueError(
            f"`X_pending` must be p x d with the model's d={d}, got shape "
            f"{tuple(X_pending.shape)}."
        )
    if not bool(torch.isfinite(X_pending).all()):
        raise ValueError("`X_pending` must be finite, got NaN or inf entries.")
    if X_pending.shape[0] == 0:
        return None
    ref = None if model is None else model_tensor(model)
    if ref is not None:
        X_pending = X_pending.to(dtype=ref.dtype, device=ref.device)
    return X_pending.detach().clone()


# --------------------------------------------------------------------------------------
# the objective of a (multi-output) posterior
# --------------------------------------------------------------------------------------
def scalarization(
    transform: PosteriorTransform | None, num_outputs: int, like: Tensor
) -> tuple[Tensor, Tensor]:
    """``(weights, offset)`` of the objective :math:`g = o + w^\\top f`.

    Args:
        transform: ``None`` (a single-output model: ``w = 1``, ``o = 0``) or a
            ``ScalarizedPosteriorTransform`` (any other is refused).
        num_outputs: The model's number of outputs ``m``.
        like: A tensor whose dtype and device the results take.

    Returns:
        ``m`` weights and a 0-dim offset.
    """
    if transform is None:
        if num_outputs != 1:
            raise UnsupportedError(
                f"A model with {num_outputs} outputs needs a posterior_transform "
                "(e.g. ScalarizedPosteriorTransform) that gives one objective."
            )
        return like.new_ones(1), like.new_zeros(())
    if not isinstance(transform, ScalarizedPosteriorTransform):
        raise UnsupportedError(
            "Pending points and q > 1 need a linear objective: pass a "
            "ScalarizedPosteriorTransform, got "
            f"posterior_transform={type(transform).__name__}."
        )
    w = transform.weights.to(like)
    if w.numel() != num_outputs:
        raise ValueError(
            f"The posterior_transform has {w.numel()} weights but the model has "
            f"{num_outputs} outputs."
        )
    # in the value's dtype (a float32 tensor of 0.1 is 0.1 + 1.5e-9 in float64)
    offset = torch.as_tensor(transform.offset, dtype=like.dtype, device=like.device)
    return w, offset


def joint_moments(model: Model, Z: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    r"""The joint posterior of all outputs at ``Z`` (``batch x n x d``), point-major:
    mean ``batch x n x m``, covariance ``batch x n x m x n x m``, observation noise
    ``batch x n x m`` (the model's, as ``posterior(observation_noise=True)`` adds).

    Args:
        model: A BoTorch model.
        Z: ``batch x n x d`` points.

    Returns:
        ``(mean, cov, noise)`` in those shapes (zeros for a deterministic model).
    """
    post = model.posterior(Z)
    mean = post.mean  # batch x n x m
    n, m = mean.shape[-2], mean.shape[-1]
    dist = getattr(post, "distribution", None)
    if dist is None or not hasattr(dist, "covariance_matrix"):
        # no Gaussian posterior (e.g. GenericDeterministicModel's EnsemblePosterior):
        # fine when it is deterministic, else the joint law is unknown
        if bool((post.variance > 0).any()):
            raise UnsupportedError(
                "q > 1 and pending points need a model with a Gaussian posterior "
                f"(a joint covariance), got a {type(post).__name__} from "
                f"{type(model).__name__}; optimize with q=1."
            )
        zeros = mean.new_zeros(*mean.shape[:-2], n, m, n, m)
        return mean, zeros, mean.new_zeros(mean.shape)
    cov = dist.covariance_matrix  # batch x nm x nm
    if m > 1 and not getattr(dist, "_interleaved", True):
        # output-major (k, i) -> point-major (i, k)
        cov = cov.reshape(*cov.shape[:-2], m, n, m, n).permute(
            *range(cov.ndim - 2), -3, -4, -1, -2
        )
    else:
        cov = cov.reshape(*cov.shape[:-2], n, m, n, m)
    noisy = model.posterior(Z, observation_noise=True).variance
    noise = (noisy - post.variance).clamp_min(0.0)
    return mean, cov, noise


def stage_moments(
    mean: Tensor,
    cov: Tensor,
    noise: Tensor,
    first: int,
    j: int,
    targets: float | None = None,
    evaluate: slice | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    r"""Posterior of the points ``evaluate`` (default: point ``first + j``) given
    noisy observations of points ``first .. first + j - 1`` (the earlier points of a
    q-batch), from the joint moments of :func:`joint_moments`.

    Args:
        mean, cov, noise: The joint moments (``batch x n x m``,
            ``batch x n x m x n x m``, ``batch x n x m``).
        first: The index of the batch's first point.
        j: The number of earlier points observed.
        targets: ``None`` (default): the observations are hallucinated at their
            mean (GP-BUCB: the mean is unchanged); a number: censored at it
            (GP-UCB-SDF).
        evaluate: The points to evaluate (default ``None``: point ``first + j``).

    Returns:
        ``(mean, cov, cov_of_observed_point)``: ``batch x e x m``,
        ``batch x e x m x m`` (the diagonal blocks), and the block of the evaluated
        point ``first + j`` before conditioning on itself (for the information gain).
    """
    n, m = mean.shape[-2], mean.shape[-1]
    batch = mean.shape[:-2]
    ev = evaluate if evaluate is not None else slice(first + j, first + j + 1)
    idx = torch.arange(n, device=mean.device)[ev]
    e = idx.numel()
    cov_ee = cov.index_select(-4, idx).index_select(-2, idx)  # b x e x m x e x m
    block = cov_ee.diagonal(dim1=-4, dim2=-2).movedim(-1, -3)  # batch x e x m x m
    mu = mean[..., idx, :]
    if j == 0:
        return mu, block, block[..., -1, :, :]
    obs = torch.arange(first, first + j, device=mean.device)
    k = j * m
    A = cov.index_select(-4, obs).index_select(-2, obs).reshape(*batch, k, k)
    A = A + torch.diag_embed(noise[..., obs, :].reshape(*batch, k))
    C = cov.index_select(-4, idx).index_select(-2, obs)
    C = C.reshape(*batch, e * m, k)  # e m x k
    L = psd_safe_cholesky(A)  # jitter only if round-off makes A indefinite
    W = torch.cholesky_solve(C.transpose(-1, -2), L)  # k x e m
    # C A^{-1} C^T, of which the diagonal (per point) m x m blocks are needed
    red = (C @ W).reshape(*batch, e, m, e, m).diagonal(dim1=-4, dim2=-2)
    cond = block - red.movedim(-1, -3)
    if targets is not None:
        resid = float(targets) - mean[..., obs, :].reshape(*batch, k, 1)
        shift = (W.transpose(-1, -2) @ resid).reshape(*batch, e, m)
        mu = mu + shift
    return mu, cond, cond[..., -1, :, :]


def stage_gain(block: Tensor, noise: Tensor) -> Tensor:
    r"""Information gain of one more noisy observation of all outputs at a point with
    posterior covariance ``block`` (``batch x m x m``) and noise ``noise``
    (``batch x m``): :math:`\tfrac12\log\det(I + \Lambda^{-1/2} B \Lambda^{-1/2})`
    (the chain rule: the gains of a batch's points add up to the batch's gain).

    Args:
        block: ``batch x m x m`` posterior covariance.
        noise: ``batch x m`` noise variances (clamped at ``1e-12``).

    Returns:
        ``batch`` gains, in nats.
    """
    scale = noise.clamp_min(1e-12).rsqrt()
    M = block * scale.unsqueeze(-1) * scale.unsqueeze(-2)
    eye = torch.eye(M.shape[-1], dtype=M.dtype, device=M.device)
    return 0.5 * torch.logdet(eye + M)
