"""The long-term constraints' acquisition for a multi-output model (the objective's
GP and one GP per constraint, e.g. a ``ModelListGP``): the objective's upper
confidence bound minus the multipliers times each constraint's upper bound, the
pessimistic estimate of the primal-dual methods (the practical reading of Shi &
Eryilmaz's Algorithms 2 / 3; the multipliers come from
:func:`~botorch_bandits.constraints.replay_multipliers` or the user's own loop)."""

from __future__ import annotations

import math
import warnings

import torch
from botorch.acquisition import AcquisitionFunction
from botorch.models.model import Model
from botorch.utils.transforms import t_batch_mode_transform
from gpytorch.models import ExactGP
from torch import Tensor

__all__ = ["PenalizedUCB", "UnfittedModelWarning"]


class UnfittedModelWarning(UserWarning):
    """A GP of the model given to :class:`PenalizedUCB` is in training mode: it was
    never fitted (``fit_gpytorch_mll`` leaves a fitted model in eval mode)."""


def _model_dtype(model: Model) -> torch.dtype | None:
    """The one floating dtype of the model's parameters and training inputs
    (``None``: it has none); several are refused, naming them."""
    tensors = [p for p in model.parameters()]
    for sub in model.modules():
        inputs = getattr(sub, "train_inputs", None)
        if isinstance(inputs, tuple):
            tensors += [t for t in inputs if isinstance(t, Tensor)]
    dtypes = sorted({str(t.dtype) for t in tensors if t.is_floating_point()})
    if len(dtypes) > 1:
        raise ValueError(
            f"`model` mixes dtypes {dtypes} across its outputs: build every GP in "
            "one dtype (torch.double, as BoTorch recommends)."
        )
    return getattr(torch, dtypes[0].split(".")[-1]) if dtypes else None


def _unfitted(model: Model) -> list[int]:
    """The outputs of ``model`` whose GP is in training mode (never fitted)."""
    subs = getattr(model, "models", None) or [model]
    return [
        i
        for i, sub in enumerate(subs)
        if any(m.training for m in sub.modules() if isinstance(m, ExactGP))
    ]


def _vector(name: str, value: Tensor | float | list, m: int, minimum: float) -> Tensor:
    v = torch.as_tensor(value, dtype=torch.double).reshape(-1)
    if v.numel() == 1 and m > 1:
        v = v.expand(m).clone()
    if (
        v.shape != (m,)
        or not bool(torch.isfinite(v).all())
        or bool((v < minimum).any())
    ):
        raise ValueError(
            f"`{name}` must hold {m} finite value(s) (one per constraint"
            f"{', each >= 0' if minimum == 0 else ''}), got {name}={value!r}."
        )
    return v


def _marginals(model: Model, X: Tensor) -> tuple[Tensor, Tensor]:
    """Each output's posterior mean and variance at ``X`` (``batch x 1 x d``), as
    ``batch x outputs``: of a list of models each model's own posterior (the
    marginals a joint ``ModelListGP`` posterior has, without building it: about a
    quarter of the time of an evaluation with two GPs)."""
    subs = getattr(model, "models", None)
    posteriors = (
        [model.posterior(X)] if subs is None else [m.posterior(X) for m in subs]
    )
    mean = torch.cat([p.mean for p in posteriors], dim=-1).squeeze(-2)
    var = torch.cat([p.variance for p in posteriors], dim=-1).squeeze(-2)
    return mean, var


class PenalizedUCB(AcquisitionFunction):
    r""":math:`\alpha(x) = \mathrm{UCB}_f(x) - \sum_j \kappa_j\,(\mu_{g_j}(x) +
    \sqrt{\beta}\,\sigma_{g_j}(x) - b_j)`: the Lagrangian of the long-term
    constraints :math:`\frac1T\sum_t g_j(x_t) \le b_j` with the objective read
    optimistically and each constraint pessimistically (its upper bound).

    Args:
        model: A model with ``1 + m`` outputs: the objective at
            ``objective_index`` (0), the constraints at the others, in order
            (a ``ModelListGP`` of one GP per metric, or a multi-output GP).
        beta: :math:`\beta \ge 0` of the confidence bounds (BoTorch's UCB
            convention: the width is :math:`\sqrt\beta\,\sigma`); a constraint
            bound's own ``constraint_beta`` if given.
        multipliers: :math:`\kappa_j \ge 0`, one per constraint (or one for all).
        bounds: :math:`b_j` (default 0): constraint ``j`` holds when its output is
            at most :math:`b_j` on average.
        maximize: Whether the objective is maximized (``False``: the objective's
            lower bound is minimized, i.e. :math:`-\mathrm{LCB}_f` is maximized).
        objective_index: The objective's output.
        constraint_beta: :math:`\beta` of the constraints' upper bounds (``None``:
            ``beta``; 0: their posterior means).

    Example:
        >>> model = ModelListGP(gp_f, gp_g)  # the objective, then one constraint
        >>> acqf = PenalizedUCB(model, beta=4.0, multipliers=[0.5], bounds=[0.0])
    """

    def __init__(
        self,
        model: Model,
        beta: float,
        multipliers: Tensor | float | list,
        bounds: Tensor | float | list = 0.0,
        maximize: bool = True,
        objective_index: int = 0,
        constraint_beta: float | None = None,
    ) -> None:
        super().__init__(model=model)
        outputs = int(model.num_outputs)
        if outputs < 2:
            raise ValueError(
                f"`model` must have the objective and at least one constraint as "
                f"outputs, got a model with num_outputs={outputs}."
            )
        if not 0 <= objective_index < outputs:
            raise ValueError(
                f"`objective_index` must be an output of the model (0..{outputs - 1}), "
                f"got objective_index={objective_index!r}."
            )
        for name, b in (("beta", beta), ("constraint_beta", constraint_beta)):
            if b is not None and not (math.isfinite(float(b)) and float(b) >= 0):
                raise ValueError(f"`{name}` must be finite and >= 0, got {name}={b!r}.")
        m = outputs - 1
        self.objective_index = objective_index
        self.constraint_indices = [i for i in range(outputs) if i != objective_index]
        self.beta = float(beta)
        self.constraint_beta = (
            self.beta if constraint_beta is None else float(constraint_beta)
        )
        self.maximize = bool(maximize)
        self.register_buffer("multipliers", _vector("multipliers", multipliers, m, 0.0))
        self.register_buffer("bounds", _vector("bounds", bounds, m, -math.inf))
        self.model_dtype = _model_dtype(model)
        unfitted = _unfitted(model)
        if unfitted:
            warnings.warn(
                f"PenalizedUCB: the GP(s) of output(s) {unfitted} of `model` are in "
                "training mode, i.e. never fitted: they read with GPyTorch's initial "
                "hyperparameters. Fit them first (fit_gpytorch_mll leaves them in "
                "eval mode), or call model.eval() where their hyperparameters are set "
                "by hand.",
                UnfittedModelWarning,
                stacklevel=2,
            )

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: Tensor) -> Tensor:
        """The penalized upper confidence bound.

        Args:
            X: ``batch x 1 x d`` points (in the model's dtype).

        Returns:
            ``batch`` values.
        """
        if self.model_dtype is not None and X.dtype != self.model_dtype:
            raise ValueError(
                f"`X` is {X.dtype} but the model is {self.model_dtype}: give X (with "
                "optimize_acqf, its `bounds`) in the model's dtype."
            )
        mean, var = _marginals(self.model, X)  # batch x outputs
        sd = var.clamp_min(0).sqrt()
        i, js = self.objective_index, self.constraint_indices
        sign = 1.0 if self.maximize else -1.0
        ucb_f = sign * mean[..., i] + math.sqrt(self.beta) * sd[..., i]
        upper = mean[..., js] + math.sqrt(self.constraint_beta) * sd[..., js]
        kappa = self.multipliers.to(mean)
        return ucb_f - ((upper - self.bounds.to(mean)) * kappa).sum(-1)
