r"""GP-UCB-SDF and GP-TS-SDF (Verma, Dai & Low, ICML 2022): bandits with censored,
delayed feedback.

The model holds every issued query, with censored targets
(:meth:`botorch_bandits.delays.FeedbackLedger.censored_targets`). The exploration
multiplier is

.. math:: \nu_t = B_y\sum_{s=t-m}^{t-1}\sigma_{t-1}(x_s) + \beta_t,\qquad
          \beta_t = B_f + (R + B_y)\sqrt{2(\gamma_{t-1} + 1 + \log(2/\delta))},

(linear unit: it multiplies :math:`\sigma`), where :math:`x_{t-m}, ..., x_{t-1}` are the
``recent`` queries, whose feedback may still be censored. GP-UCB-SDF maximizes
:math:`\mu_{t-1} + \nu_t\sigma_{t-1}`; GP-TS-SDF draws
:math:`f_t \sim GP(\mu_{t-1}, \nu_t^2 k_{t-1})`. The paper's experiments replace
:math:`\beta_t` by the constant 1 (``beta=1.0``, a named practical choice).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from torch import Tensor

from botorch_bandits import beta as schedules
from botorch_bandits import validation
from botorch_bandits.acquisition._common import check_input_dim
from botorch_bandits.acquisition.thompson import GPThompsonSampling
from botorch_bandits.acquisition.ucb import _ScheduledUCB
from botorch_bandits.delays import sdf_beta, sdf_inflation


class _SDFMixin:
    """Computes nu_t from the recent queries and the beta_t schedule (or constant)."""

    def _init_sdf(
        self,
        recent: Tensor,
        B_f: float | None,
        R: float | None,
        B_y: float,
        delta: float,
        gamma: Any,
        beta: float | None,
    ) -> None:
        validation.check_tensor("recent", recent, min_ndim=1)
        if recent.ndim < 2:
            raise ValueError(
                f"`recent` must be m x d (the last m queries), got shape {tuple(recent.shape)}."
            )
        check_input_dim("recent", recent, self.model)
        validation.check_nonnegative("B_y", B_y)
        validation.check_open_unit("delta", delta)
        if beta is not None:
            if B_f is not None or R is not None:
                raise ValueError(
                    "Pass either a constant `beta` or the schedule's `B_f` and `R`, not both."
                )
            validation.check_nonnegative("beta", beta)
            self.__dict__.update(B_f=None, R=None, gamma=None, beta=float(beta))
        else:
            if B_f is None or R is None:
                raise ValueError(
                    "The beta_t schedule needs `B_f` and `R` (or pass a constant `beta`)."
                )
            for name, value in (("B_f", B_f), ("R", R)):
                validation.check_nonnegative_values(name, value)
            self.__dict__.update(
                B_f=B_f if isinstance(B_f, Tensor) and B_f.numel() > 1 else float(B_f),
                R=R if isinstance(R, Tensor) and R.numel() > 1 else float(R),
                gamma=schedules.resolve_gamma(gamma),
                beta=None,
            )
        self.__dict__.update(recent=recent, B_y=float(B_y), delta=float(delta))

    def _beta_t(self, t: int) -> float | Tensor:
        if self.beta is not None:
            return self.beta
        gamma = self.gamma(t - 1, self.model)
        if any(isinstance(v, Tensor) and v.ndim > 0 for v in (gamma, self.B_f, self.R)):
            # per-batch values (one per seed): the same formula, elementwise
            gamma, B_f, R = (torch.as_tensor(v) for v in (gamma, self.B_f, self.R))
            if bool((gamma < 0).any()):
                raise ValueError(f"`gamma_prev` must be >= 0, got {gamma.tolist()}.")
            return B_f + (R + self.B_y) * torch.sqrt(
                2.0 * (gamma + 1.0 + math.log(2.0 / self.delta))
            )
        return sdf_beta(float(gamma), self.B_f, self.R, self.B_y, self.delta)

    def _nu(self, t: int) -> float | Tensor:
        r""":math:`\nu_t` = inflation from the recent queries + :math:`\beta_t`."""
        if self.recent.shape[-2] == 0 or self.B_y == 0:
            return self._beta_t(t)
        with torch.no_grad():
            var = self.model.posterior(
                self.recent.unsqueeze(-2)
            ).variance  # m x batch x 1 x 1
        sigmas = var.clamp_min(0).sqrt().squeeze(-1).squeeze(-1)  # m (x batch)
        inflation = sdf_inflation(sigmas.movedim(0, -1), self.B_y)  # (batch)
        nu = inflation + self._beta_t(t)
        return nu if inflation.ndim > 0 else float(nu)


class GPUCBSDF(_SDFMixin, _ScheduledUCB):
    r"""GP-UCB-SDF: :math:`\mu_{t-1}(x) + \nu_t\sigma_{t-1}(x)` (``"linear"`` unit).

    Args:
        model: A model on every issued query with censored targets.
        recent: ``m x d`` the last :math:`m` queries :math:`x_{t-m}, ..., x_{t-1}`
            (fewer at the start; ``0 x d`` for none).
        B_f: RKHS-norm bound of f; R: sub-Gaussian noise constant (for :math:`\beta_t`).
        B_y: Bound :math:`|y| \le B_y` on the (shifted) observations.
        delta: Confidence :math:`\delta \in (0, 1)`.
        gamma: Source of :math:`\gamma_{t-1}` (default ``"observed"``).
        beta: The experiments' constant :math:`\beta_t` (e.g. 1.0) instead of the
            schedule (then omit ``B_f`` and ``R``).
        t, posterior_transform, maximize: As in ``IGPUCB``.
    """

    unit = "linear"

    def __init__(
        self,
        model: Model,
        recent: Tensor,
        B_f: float | None = None,
        R: float | None = None,
        B_y: float = 1.0,
        delta: float = 0.1,
        gamma: Any = "observed",
        beta: float | None = None,
        t: int | None = None,
        posterior_transform: PosteriorTransform | None = None,
        maximize: bool = True,
    ) -> None:
        super().__init__(
            model=model, t=t, posterior_transform=posterior_transform, maximize=maximize
        )
        self._init_sdf(recent, B_f, R, B_y, delta, gamma, beta)

    def _beta(self, t: int) -> float | Tensor:
        return self._nu(t)

    @property
    def nu_t(self) -> float | Tensor:
        r""":math:`\nu_t` (multiplies :math:`\sigma_{t-1}`)."""
        return self.beta_t


class GPThompsonSamplingSDF(_SDFMixin, GPThompsonSampling):
    r"""GP-TS-SDF: one draw :math:`f_t \sim GP(\mu_{t-1}, \nu_t^2 k_{t-1})`; the
    other arguments (``candidates``, ``sampler``, ``seed``, ...) as in
    :class:`GPThompsonSampling`."""

    def __init__(
        self,
        model: Model,
        recent: Tensor,
        B_f: float | None = None,
        R: float | None = None,
        B_y: float = 1.0,
        delta: float = 0.1,
        gamma: Any = "observed",
        beta: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model, v=1.0, delta=delta, **kwargs)  # v replaced by nu_t
        self._init_sdf(recent, B_f, R, B_y, delta, gamma, beta)

    def _scale(self, t: int) -> float | Tensor:
        return self._nu(t)
