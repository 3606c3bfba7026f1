r"""GP-UCB-SDF and GP-TS-SDF (Verma, Dai & Low 2022): bandits with censored, delayed
feedback. The model holds every issued query with censored targets; the exploration
multiplier :math:`\nu_t` adds to :math:`\beta_t` the inflation from the recent
queries whose feedback may still be censored. Guide: docs/algorithms.md.

Reference:
    Verma, Dai, Low. Bayesian Optimization under Stochastic Delayed Feedback. ICML 2022.
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
from botorch_bandits.acquisition._batch import (
    censored_model,
    joint_moments,
    pairing_batch_shape,
    scalarization,
    single_output,
    stage_gain,
    stage_moments,
)
from botorch_bandits.acquisition._common import (
    check_input_dim,
    gamma_after,
    set_plain_attributes,
)
from botorch_bandits.acquisition.thompson import GPThompsonSampling
from botorch_bandits.acquisition.ucb import ScheduledUCB
from botorch_bandits.delays import sdf_beta, sdf_inflation


class _SDFMixin:
    """Computes nu_t from the recent queries and the beta_t schedule (or constant);
    censors pending points and the earlier points of a q-batch (Verma et al. 2022,
    §4: batch BO is BO-SDF with the batch's queries pending)."""

    pending_rule = "censor"
    _pending_in_model = True  # the model holds the pending points, censored

    def _init_sdf(
        self,
        recent: Tensor,
        B_f: float | None,
        R: float | None,
        B_y: float,
        delta: float,
        gamma: Any,
        beta: float | None,
        y_min: float = 0.0,
        window: int | None = None,
    ) -> None:
        validation.check_tensor("recent", recent, min_ndim=1)
        if recent.ndim < 2:
            raise ValueError(
                f"`recent` must be m x d (the last m queries), got shape {tuple(recent.shape)}."
            )
        check_input_dim("recent", recent, self.model)
        validation.check_nonnegative("B_y", B_y)
        validation.check_open_unit("delta", delta)
        validation.check_finite("y_min", y_min)
        if window is not None:
            validation.check_count("window", window, 0)
        if beta is not None:
            if B_f is not None or R is not None:
                raise ValueError(
                    "Pass either a constant `beta` or the schedule's `B_f` and `R`, not both."
                )
            validation.check_nonnegative("beta", beta)
            set_plain_attributes(self, B_f=None, R=None, gamma=None, beta=float(beta))
        else:
            if B_f is None or R is None:
                raise ValueError(
                    "The beta_t schedule needs `B_f` and `R` (or pass a constant `beta`)."
                )
            for name, value in (("B_f", B_f), ("R", R)):
                validation.check_nonnegative_values(name, value)
            set_plain_attributes(
                self,
                B_f=B_f if isinstance(B_f, Tensor) and B_f.numel() > 1 else float(B_f),
                R=R if isinstance(R, Tensor) and R.numel() > 1 else float(R),
                gamma=schedules.resolve_gamma(gamma),
                beta=None,
            )
        set_plain_attributes(
            self,
            recent=recent,
            B_y=float(B_y),
            delta=float(delta),
            y_min=float(y_min),
            window=window,
        )

    def _pending_model(self, model: Model, P: Tensor) -> Model:
        return censored_model(model, P, self.y_min)

    def _issued_recent(self) -> Tensor:
        r"""``recent`` followed by the pending points (issued after them, censored),
        the last ``window`` of them: ``m x d`` or ``m x batch x d``."""
        recent, P = self.recent, self.X_pending
        if P is not None:
            P = P.to(recent)
            if recent.ndim == 3:
                P = P.unsqueeze(1).expand(P.shape[0], recent.shape[1], P.shape[-1])
            recent = torch.cat([recent, P], dim=0)
        if self.window is not None:
            recent = recent[max(0, recent.shape[0] - self.window) :]
        return recent

    def _beta_t(self, t: int, gamma: Any = None) -> float | Tensor:
        if self.beta is not None:
            return self.beta
        if gamma is None:
            gamma = gamma_after(self, t)
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
        recent = self._issued_recent()
        if recent.shape[0] == 0 or self.B_y == 0:
            return self._beta_t(t)
        batch = pairing_batch_shape(self.model)  # [] for an ensemble: it adds its dim
        if recent.ndim == 2 and batch:
            # the same queries for every model batch: m x 1 x d
            recent = recent.view(recent.shape[0], *[1] * len(batch), -1)
        with torch.no_grad():
            var = self.model.posterior(
                recent.unsqueeze(-2), posterior_transform=self.posterior_transform
            ).variance  # m x batch x 1 x 1
        sigmas = var.clamp_min(0).sqrt().squeeze(-1).squeeze(-1)  # m (x batch)
        inflation = sdf_inflation(sigmas.movedim(0, -1), self.B_y)  # (batch)
        nu = inflation + self._beta_t(t)
        return nu if isinstance(nu, Tensor) and nu.ndim > 0 else float(nu)

    def _stages(self, X: Tensor) -> Any:
        r"""For a q-batch ``X`` (``batch x q x d``): per point ``j``, the censored
        posterior mean and variance of the objective at ``x_j`` given the batch's
        earlier points (censored at ``y_min``), :math:`\nu` of that decision (its
        recent queries include the earlier points, with their censored variances),
        the joint moments of the batch points and the conditioning set. Yields
        ``(j, mean_j, var_j, nu_j)`` plus the moments ``(mean, cov, noise, r, w)``,
        for the UCB and TS rules.

        The model's output is censored at ``y_min`` (the pending points' targets, as
        ``set_X_pending`` conditions the model); means, variances and
        :math:`\nu` are those of the objective :math:`o + w f` of the
        ``posterior_transform`` (a ``ScalarizedPosteriorTransform``), as at
        ``q = 1``. The moments stay those of the model's output."""
        single_output(self.model, f"A q-batch of {type(self).__name__}")
        recent = self._issued_recent()  # m x (batch) x d
        r = recent.shape[0]
        R = recent.movedim(0, -2) if recent.ndim == 3 else recent  # (batch) x m x d
        shape = torch.broadcast_shapes(R.shape[:-2], X.shape[:-2])
        Z = torch.cat(
            [R.to(X).expand(*shape, *R.shape[-2:]), X.expand(*shape, *X.shape[-2:])],
            dim=-2,
        )
        mean, cov, noise = joint_moments(self.model, Z)  # of the model's output
        w, offset = scalarization(self.posterior_transform, 1, mean)
        w = w[0]  # the objective is offset + w f
        q = X.shape[-2]
        gain: Tensor | float = 0.0
        out = []
        for j in range(q):
            # censored at y_min in the model's output, as the pending points are
            mu, blocks, block = stage_moments(
                mean, cov, noise, r, j, self.y_min, evaluate=slice(0, r + j + 1)
            )
            mu = offset + w * mu  # the objective's mean
            var = (w**2 * blocks[..., :, 0, 0]).clamp_min(1e-12)  # b x (r + j + 1)
            issued = var[..., :-1].sqrt()  # recent and the earlier batch points
            if self.window is not None:
                issued = issued[..., max(0, issued.shape[-1] - self.window) :]
            if j == 0:
                beta = self._beta_t(self.t)
            else:
                t_j = self._round(j)
                g = gamma_after(self, t_j, gain) if self.beta is None else None
                beta = self._beta_t(t_j, g)
            beta = torch.as_tensor(beta, dtype=var.dtype, device=var.device)
            nu = self.B_y * issued.sum(-1) + beta
            out.append((j, mu[..., -1, 0], var[..., -1], nu))
            gain = gain + stage_gain(block, noise[..., r + j, :])
        return out, (mean, cov, noise, r, w)


class GPUCBSDF(_SDFMixin, ScheduledUCB):
    r"""GP-UCB-SDF: :math:`\mu_{t-1}(x) + \nu_t\sigma_{t-1}(x)` (``"linear"`` unit).

    Pending points (``X_pending`` / ``set_X_pending``) are issued queries whose
    feedback is censored: the model is conditioned on them at ``y_min`` and they join
    the ``recent`` queries of the inflation. A q-batch is valued as the sequential
    rule chooses it (Verma et al. 2022, §4, batch BO as BO-SDF): point ``j`` with the
    batch's earlier points censored and counted in :math:`\nu`, at round ``t + j``;
    the value is the sum over the batch.

    Args:
        model: A model on every issued query with censored targets.
        recent: ``m x d`` the last :math:`m` queries :math:`x_{t-m}, ..., x_{t-1}`
            (fewer at the start; ``0 x d`` for none).
        B_f: RKHS-norm bound of f (for :math:`\beta_t`).
        R: Sub-Gaussian noise constant (for :math:`\beta_t`).
        B_y: Bound :math:`|y| \le B_y` on the (shifted) observations.
        delta: Confidence :math:`\delta \in (0, 1)`.
        gamma: Source of :math:`\gamma_{t-1}` (default ``"observed"``).
        beta: The experiments' constant :math:`\beta_t` (e.g. 1.0) instead of the
            schedule (then omit ``B_f`` and ``R``).
        y_min: The censored value of a pending query (the paper's 0 after shifting
            f to a minimum of 0; default 0).
        window: The censoring window :math:`m` in queries: the inflation sums over
            the last ``window`` of ``recent``, the pending points and the batch's
            earlier points (``None``: all of them).
        t, posterior_transform, maximize: As in ``IGPUCB``.
        X_pending: ``p x d`` pending (censored) queries.

    Example:
        >>> acqf = GPUCBSDF(model, X_issued[-5:], B_f=1.0, R=0.1, window=5)
        >>> x_next, _ = optimize_acqf_discrete(acqf, q=1, choices=arms)
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
        y_min: float = 0.0,
        window: int | None = None,
        X_pending: Tensor | None = None,
    ) -> None:
        super().__init__(
            model=model, t=t, posterior_transform=posterior_transform, maximize=maximize
        )
        self._init_sdf(recent, B_f, R, B_y, delta, gamma, beta, y_min, window)
        if X_pending is not None:
            self.set_X_pending(X_pending)

    def _beta(self, t: int) -> float | Tensor:
        return self._nu(t)

    @property
    def nu_t(self) -> float | Tensor:
        r""":math:`\nu_t` (multiplies :math:`\sigma_{t-1}`)."""
        return self.beta_t

    def _batch_value(self, X: Tensor) -> Tensor:
        stages, _ = self._stages(X)
        total: Tensor | float = 0.0
        for _, mean, var, nu in stages:
            total = total + (mean if self.maximize else -mean) + nu * var.sqrt()
        return total


class GPThompsonSamplingSDF(_SDFMixin, GPThompsonSampling):
    r"""GP-TS-SDF: one draw :math:`f_t \sim GP(\mu_{t-1}, \nu_t^2 k_{t-1})`; the
    other arguments (``candidates``, ``sampler``, ``seed``, ...) as in
    :class:`GPThompsonSampling`; ``y_min``, ``window`` and pending points as in
    :class:`GPUCBSDF`.

    Point ``j`` of a q-batch gets draw number ``p + j`` from the posterior in which
    the pending points and the batch's earlier points are censored at ``y_min``
    (the draw is conditioned on them by Matheron's rule, with its own observation
    noise), scaled by that decision's :math:`\nu` -- what choosing the batch one
    point at a time would do.

    Args:
        model, recent, B_f, R, B_y, delta, gamma, beta: As in :class:`GPUCBSDF`
            (:math:`\nu_t` replaces GP-TS's :math:`v_t`).
        y_min, window, X_pending: As in :class:`GPUCBSDF`.
        **kwargs: :class:`GPThompsonSampling`'s other arguments (``t``,
            ``candidates``, ``sampler``, ``num_features``, ``seed``,
            ``posterior_transform``, ``maximize``, ...).

    Example:
        >>> acqf = GPThompsonSamplingSDF(model, X_issued[-5:], beta=1.0, candidates=arms)
    """

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
        y_min: float = 0.0,
        window: int | None = None,
        X_pending: Tensor | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model, v=1.0, delta=delta, **kwargs)  # v replaced by nu_t
        self._init_sdf(recent, B_f, R, B_y, delta, gamma, beta, y_min, window)
        if X_pending is not None:
            self.set_X_pending(X_pending)

    def _scale(self, t: int) -> float | Tensor:
        return self._nu(t)

    def _censors_batch(self) -> bool:
        return True

    def _censored_batch_value(self, X: Tensor, draws: list[int]) -> Tensor:
        r"""Sum over the batch of draw ``draws[j]`` (``p + j`` with ``p`` pending
        points set once) at ``x_j``, conditioned on the
        censored earlier points: with :math:`d_k = \tilde f_k - \mu` the draw's
        deviation (of the objective :math:`o + w f`), :math:`f(x_j) = \mu'_j +
        \nu_j (d_k(x_j) - K_{jO}(K_{OO} + \Lambda)^{-1}(d_k(x_O) +
        |w|\varepsilon_k))`, :math:`O` the earlier points, :math:`K, \Lambda` the
        model output's covariance and noise."""
        stages, (_, cov, noise, r, w) = self._stages(X)
        total: Tensor | float = 0.0
        for j, mean_j, _, nu in stages:
            k = draws[j]
            _, dev_j = self._mean_and_deviation(X[..., j : j + 1, :], k)
            if j > 0:
                devs = torch.stack(
                    [
                        self._mean_and_deviation(X[..., i : i + 1, :], k)[1]
                        for i in range(j)
                    ],
                    dim=-1,
                )  # batch x j
                obs = slice(r, r + j)
                K = cov[..., obs, 0, obs, 0]  # batch x j x j
                lam = noise[..., obs, 0]  # batch x j
                # the draw's observation noise, in the objective's scale (|w| eps
                # has the law of w eps: the deviations are the objective's)
                eps = self._draw_noise(k, j, lam) * lam.sqrt() * w.abs()
                A = K + torch.diag_embed(lam)
                k_j = cov[..., r + j, 0, obs, 0]  # batch x j
                sol = torch.linalg.solve(A, (devs + eps).unsqueeze(-1)).squeeze(-1)
                dev_j = dev_j - (k_j * sol).sum(-1)
            total = total + self._select_member(mean_j + nu * dev_j, k)
        return total
