r"""GP-UCB (Srinivas et al. 2010) and IGP-UCB (Chowdhury & Gopalan 2017): analytic
acquisitions whose confidence parameter is recomputed from the round index and the
model's data whenever one is built; pending points and q-batches as in GP-BUCB
(Desautels et al. 2014). Guide: docs/algorithms.md and docs/botorch.md.

References: Srinivas, Krause, Kakade, Seeger. Gaussian Process Optimization in the
Bandit Setting: No Regret and Experimental Design. ICML 2010. Chowdhury, Gopalan. On
Kernelized Multi-armed Bandits. ICML 2017. Desautels, Krause, Burdick. Parallelizing
Exploration-Exploitation Tradeoffs in Gaussian Process Bandit Optimization. JMLR 2014.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

import torch
from botorch.acquisition.analytic import AnalyticAcquisitionFunction
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from botorch.utils.transforms import (
    average_over_ensemble_models,
    t_batch_mode_transform,
)
from torch import Tensor

from botorch_bandits import beta as schedules
from botorch_bandits import validation
from botorch_bandits.acquisition._batch import (
    align_to_model_batch,
    check_pending,
    hallucinated_model,
    joint_moments,
    scalarization,
    stage_gain,
    stage_moments,
)
from botorch_bandits.acquisition._common import (
    RoundScheduleMixin,
    batch_multiplier,
    check_model_device,
    check_points,
    check_round,
    gamma_after,
    model_input_dim,
    scale_arguments,
    set_plain_attributes,
)

GPUCBSchedule = Literal["finite", "compact", "rkhs", "constant"]


class ScheduledUCB(RoundScheduleMixin, AnalyticAcquisitionFunction):
    r"""Base: :math:`\mu + m_t\sigma` with :math:`m_t` = ``sigma_multiplier``
    computed from the round index. Subclasses define ``unit`` and ``_beta``.

    Pending points and q-batches (``pending_rule``): ``"hallucinate"`` here
    (GP-BUCB), ``"censor"`` for GP-UCB-SDF. ``set_X_pending`` conditions the model on
    the pending points by that rule (so ``t``, :math:`\gamma` and the posterior are
    those of every issued point); a q-batch ``X`` is valued as the sequential rule
    would choose it: point ``j`` with points ``1..j-1`` of its batch pending, at round
    ``t + j - 1``, and the value is the sum of the points' upper confidence bounds.

    Args:
        model: A BoTorch model.
        t: Round index (default ``None``: ``num_observations(model) + 1``).
        posterior_transform: Optional ``PosteriorTransform``.
        maximize: If False, :math:`-\mu + m_t\sigma` (default True).
        X_pending: ``p x d`` pending points (default ``None``).
    """

    unit: schedules.BetaUnit
    pending_rule: str = "hallucinate"

    def __init__(
        self,
        model: Model,
        t: int | None = None,
        posterior_transform: PosteriorTransform | None = None,
        maximize: bool = True,
        X_pending: Tensor | None = None,
    ) -> None:
        check_model_device(model)
        super().__init__(model=model, posterior_transform=posterior_transform)
        # plain attributes (the base model is no second submodule; fast)
        set_plain_attributes(
            self,
            _t=check_round(t),
            maximize=bool(maximize),
            _memo=None,
            _base_model=model,
            X_pending=None,
        )
        if X_pending is not None:
            self.set_X_pending(X_pending)

    def _beta(self, t: int) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _beta_after(self, t: int, extra_gain: Tensor | float) -> float | Tensor:
        r""":math:`\beta_t` with the observed information gain raised by
        ``extra_gain`` (the gain of earlier points of the same q-batch). Schedules
        that do not use the observed gain ignore it."""
        return self._beta(t)

    # ------------------------------------------------------------------ pending
    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        r"""Condition on pending points by ``pending_rule``. The model given at
        construction is kept and conditioned anew on every call, so calls do not
        accumulate.

        Args:
            X_pending: ``p x d`` pending points; ``None`` (default) drops them.
        """
        base = self._base_model
        P = check_pending(X_pending, model_input_dim(base), base)
        set_plain_attributes(self, X_pending=P)
        model = base if P is None else self._pending_model(base, P)
        if model is not self.model:
            self.model = model
        set_plain_attributes(self, _memo=None)

    def _pending_model(self, model: Model, P: Tensor) -> Model:
        return hallucinated_model(model, P)

    def _pending_factor(self, j: int) -> float:
        r"""Factor on the sigma multiplier of a decision made with points pending
        (``X_pending``, or earlier points of its q-batch): :math:`e^{C}`, with
        ``C = hallucination_bound`` -- :math:`\beta_t` times :math:`e^{2C}` in the
        ``"sqrt"`` unit; 1 when nothing is pending or ``C = 0``."""
        C = getattr(self, "hallucination_bound", 0.0)
        if C == 0.0 or (j == 0 and self.X_pending is None):
            return 1.0
        return math.exp(C)

    # ------------------------------------------------------------------ values
    def _posterior_moments(
        self, X: Tensor, min_var: float = 1e-12
    ) -> tuple[Tensor, Tensor]:
        """Posterior mean and standard deviation at ``X`` (``(b1 x ... x bk) x 1 x d``
        in, ``(b1 x ... x bk) x m`` out), as BoTorch's analytic acquisitions compute
        them; the acquisition is moved to ``X``'s device only when the model is not
        there already (the walk over every buffer of the model is a large share of
        one step on the finite-arm engine). ``X``'s dtype is the model's: ``forward``
        refuses another one (:func:`check_points`) rather than cast the model."""
        ref = next(self.model.buffers(), None)
        if ref is None:
            ref = next(self.model.parameters(), None)
        if ref is None or ref.device != X.device or ref.dtype != X.dtype:
            self.to(X)  # buffers and parameters on X's device and dtype
        posterior = self.model.posterior(
            X=X, posterior_transform=self.posterior_transform
        )
        mean = posterior.mean.squeeze(-2)  # remove the q dim
        return mean, posterior.variance.clamp_min(min_var).sqrt().view(mean.shape)

    @property
    def beta_t(self) -> float | Tensor:
        r""":math:`\beta_t` in the paper's unit (see ``unit``); a ``batch_shape``
        tensor when it depends on per-batch data (``gamma="observed"`` on a batched
        model), so every batch (seed) gets its own."""
        return self._per_decision(self._beta)

    @property
    def sigma_multiplier(self) -> float | Tensor:
        r"""The factor that multiplies :math:`\sigma_{t-1}(x)`."""
        return schedules.sigma_multiplier(self.beta_t, self.unit)

    @t_batch_mode_transform()
    @average_over_ensemble_models
    def forward(self, X: Tensor) -> Tensor:
        r"""Evaluate the upper confidence bound.

        Args:
            X: ``(b1 x ... x bk) x q x d`` design points. On a batched model the
                trailing batch dims of ``X`` pair with the model's (BoTorch's
                broadcasting): ``b x 1 x q x d`` scores every point under every
                model batch (values ``b x M``), ``M x q x d`` point ``i`` under batch
                ``i``; ``X`` that cannot pair (``10 x q x d`` for ``M = 3``) raises a
                ``ValueError``. On an ensemble model (e.g.
                ``SaasFullyBayesianSingleTaskGP``) the values are averaged over its
                members, as BoTorch's ``UpperConfidenceBound`` does.

        Returns:
            ``(b1 x ... x bk)`` values :math:`\pm\mu + m_t\sigma` (``-\mu`` when
            ``maximize=False``, as in BoTorch's ``UpperConfidenceBound``); for
            ``q > 1`` the sum over the batch of the sequential rule's values.
        """
        check_points(X, self.model)
        X = align_to_model_batch(X, self.model)
        if X.shape[-2] > 1:
            return self._batch_value(X)
        mean, sigma = self._posterior_moments(X)  # (b1 x ... x bk) x 1
        mult = batch_multiplier(self.sigma_multiplier, mean)  # scalar or batch x 1
        if self.X_pending is not None:
            mult = mult * self._pending_factor(0)
        ucb = (mean if self.maximize else -mean) + mult * sigma  # (b1 x ... x bk) x 1
        return ucb.squeeze(-1)

    def _batch_value(self, X: Tensor) -> Tensor:
        """Sum over the q points of the sequential rule's values (see the class)."""
        q = X.shape[-2]
        mean, cov, noise = joint_moments(self.model, X)
        w, offset = scalarization(self.posterior_transform, mean.shape[-1], mean)
        targets = None if self.pending_rule == "hallucinate" else self.y_min
        total: Tensor | float = 0.0
        gain: Tensor | float = 0.0
        for j in range(q):
            mu, _, block = stage_moments(mean, cov, noise, 0, j, targets)
            g_mean = offset + (mu[..., -1, :] * w).sum(-1)
            g_var = torch.einsum("...ij,i,j->...", block, w, w).clamp_min(1e-12)
            if j == 0:
                mult = self.sigma_multiplier
            else:
                mult = schedules.sigma_multiplier(
                    self._beta_after(self._round(j), gain), self.unit
                )
            mult = _as_batch(mult, g_mean) * self._pending_factor(j)
            value = (g_mean if self.maximize else -g_mean) + mult * g_var.sqrt()
            total = total + value
            gain = gain + stage_gain(block, noise[..., j, :])
        return total


def _as_batch(value: float | Tensor, like: Tensor) -> Tensor:
    """A float or model-``batch_shape`` tensor, broadcast against ``like`` (whose
    trailing dims are the model batch dims)."""
    return torch.as_tensor(value, dtype=like.dtype, device=like.device)


class GPUCB(ScheduledUCB):
    r"""GP-UCB of Srinivas et al. 2010: :math:`\mu_{t-1}(x) + \sqrt{\beta_t}\sigma_{t-1}(x)`.

    Schedules (all in the ``"sqrt"`` unit; see :mod:`botorch_bandits.beta`):

    * ``"finite"`` (Theorem 1): :math:`2\log(|D|t^2\pi^2/(6\delta))`; needs ``num_arms``.
    * ``"compact"`` (Theorem 2, :math:`D \subset [0, r]^d`): needs ``dim``, ``a``,
      ``b``, ``r``.
    * ``"rkhs"`` (Theorem 3): :math:`2B + 300\gamma_t\log^3(t/\delta)`, where the
      paper's :math:`B` bounds the *squared* RKHS norm :math:`\|f\|_k^2`: needs
      ``B_squared`` (that bound; :class:`IGPUCB`'s ``B`` is the norm itself) and
      ``gamma`` -- evaluated at :math:`\gamma_t` as in the paper, so it must be an
      a-priori source (number, callable, ``GreedyGamma``, ``GammaOrder``), not
      ``"observed"``.
    * ``"constant"``: a fixed ``beta`` (practical choice, no guarantee).

    ``beta_scale`` multiplies the schedule (Srinivas et al. §6 use the Theorem 1
    schedule scaled down by 5, i.e. ``beta_scale=0.2``); any value other than 1 is a
    practical choice that leaves the theorems.

    Conventions: :math:`\beta_t` (and a constant ``beta``) is under the square root,
    as in BoTorch's ``UpperConfidenceBound(beta)`` (:math:`\mu + \sqrt{\beta}\sigma`):
    ``GPUCB(model, "constant", beta=b)`` is ``UpperConfidenceBound(model, beta=b)``;
    :class:`IGPUCB`'s ``beta`` multiplies :math:`\sigma` directly. ``B_squared``
    bounds the *squared* RKHS norm, :math:`\|f\|_k^2 \le B` (Srinivas et al.,
    Theorem 3); :class:`IGPUCB`'s ``B`` bounds the norm, so ``B_squared = B**2``.

    Args:
        model: A single-output BoTorch model (or multi-output with
            ``posterior_transform``).
        schedule: ``"finite"``, ``"compact"``, ``"rkhs"`` or ``"constant"``.
        delta: Confidence :math:`\delta \in (0, 1)`.
        num_arms: :math:`|D|` for ``"finite"``.
        dim, a, b, r: Theorem 2 constants for ``"compact"``.
        B_squared: Bound on the squared RKHS norm :math:`\|f\|_k^2` for ``"rkhs"``
            (float or ``batch_shape`` tensor): Srinivas et al.'s :math:`B`.
        B: Deprecated spelling of ``B_squared`` (same value, the squared norm; it
            warns).
        gamma: Source of :math:`\gamma_t` for ``"rkhs"``.
        beta: The constant for ``"constant"`` (``>= 0``).
        beta_scale: Multiplier of :math:`\beta_t`, ``> 0`` (default 1).
        t: Round index; default ``num_observations(model) + 1`` (which counts the
            hallucinated pending points). An explicit ``t`` is the round of a
            decision without pending points: with ``p`` pending the round is
            ``t + p``, and point ``j`` of a q-batch is decided at ``t + p + j``.
        posterior_transform: Optional ``PosteriorTransform``.
        maximize: If False, :math:`-\mu + \sqrt{\beta_t}\sigma` (BoTorch convention).
        hallucination_bound: ``C >= 0``: while points are pending, :math:`\beta_t` is
            multiplied by :math:`e^{2C}` (the form of Desautels et al.'s batch
            confidence, C bounding the information hallucinated in a batch); 0
            (default) keeps the sequential schedule, as Verma et al.'s experiments do.
        X_pending: ``p x d`` pending points: GP-BUCB (Desautels, Krause & Burdick
            2014) -- the model is conditioned on them at its posterior mean (mean
            unchanged, variance of every issued point; ``t = n + p + 1``). A q-batch
            ``X`` is valued as the sequential rule chooses it (point ``j`` with the
            earlier points hallucinated, round ``t + j``); the value is the sum.

    Example:
        >>> acqf = GPUCB(model, schedule="finite", num_arms=1000, delta=0.1)
        >>> rkhs = GPUCB(model, "rkhs", B_squared=norm**2, gamma=GammaOrder("rbf", d))
        >>> x_next, _ = optimize_acqf_discrete(acqf, q=1, choices=arms)
    """

    unit = "sqrt"

    def __init__(
        self,
        model: Model,
        schedule: GPUCBSchedule = "finite",
        *,
        delta: float = 0.1,
        num_arms: int | None = None,
        dim: int | None = None,
        a: float | None = None,
        b: float | None = None,
        r: float | None = None,
        B_squared: float | Tensor | None = None,
        gamma: Any = None,
        beta: float | None = None,
        beta_scale: float = 1.0,
        t: int | None = None,
        posterior_transform: PosteriorTransform | None = None,
        maximize: bool = True,
        hallucination_bound: float = 0.0,
        X_pending: Tensor | None = None,
        B: float | Tensor | None = None,
    ) -> None:
        B_squared = _squared_norm_bound(B_squared, B)
        super().__init__(
            model=model, t=t, posterior_transform=posterior_transform, maximize=maximize
        )
        required = {
            "finite": {"num_arms": num_arms},
            "compact": {"dim": dim, "a": a, "b": b, "r": r},
            "rkhs": {"B_squared": B_squared, "gamma": gamma},
            "constant": {"beta": beta},
        }
        _check_schedule_arguments(schedule, required, beta)
        validation.check_open_unit("delta", delta)
        validation.check_positive("beta_scale", beta_scale)
        self.schedule = schedule
        self.delta = float(delta)
        self.num_arms = num_arms
        self.dim, self.a, self.b, self.r = dim, a, b, r
        self.B_squared = B_squared
        self.beta_scale = float(beta_scale)
        self.beta = None if beta is None else float(beta)  # checked above
        self.gamma = None if gamma is None else schedules.resolve_gamma(gamma)
        if isinstance(self.gamma, schedules.ObservedInformationGain):
            raise ValueError(
                "GP-UCB's Theorem 3 schedule needs gamma_t (t points, including the one "
                "being chosen), which gamma='observed' cannot give; pass an a-priori "
                "source (number, callable, GreedyGamma, GammaOrder), or use IGPUCB, "
                "whose guarantee holds with the observed information gain."
            )
        # validate the schedule's own constants once, at t = 1
        if schedule == "finite":
            schedules.gp_ucb_beta_finite(1, num_arms, self.delta)
        elif schedule == "compact":
            schedules.gp_ucb_beta_compact(1, dim, a, b, r, self.delta)
        elif schedule == "rkhs":
            validation.check_nonnegative_values("B_squared", B_squared)
        self.hallucination_bound = validation.check_nonnegative(
            "hallucination_bound", hallucination_bound
        )
        if X_pending is not None:
            self.set_X_pending(X_pending)

    def _beta(self, t: int) -> float:
        if self.schedule == "finite":
            value = schedules.gp_ucb_beta_finite(t, self.num_arms, self.delta)
        elif self.schedule == "compact":
            value = schedules.gp_ucb_beta_compact(
                t, self.dim, self.a, self.b, self.r, self.delta
            )
        elif self.schedule == "rkhs":
            value = schedules.gp_ucb_beta_rkhs(
                t, self.B_squared, self.gamma(t, self.model), self.delta
            )
        else:
            value = self.beta
        return self.beta_scale * value

    @property
    def B(self) -> float | Tensor | None:
        """Deprecated: :attr:`B_squared` (the bound on the squared RKHS norm)."""
        warnings.warn(
            _B_DEPRECATED.format(what="GPUCB.B"), DeprecationWarning, stacklevel=2
        )
        return self.B_squared


_B_DEPRECATED = (
    "{what} is deprecated: use B_squared, the bound on the *squared* RKHS norm "
    "||f||_k^2 (Srinivas et al. Thm 3's B; the same value as before). IGPUCB's B "
    "bounds the norm itself."
)


def _check_schedule_arguments(
    schedule: str, required: dict[str, dict[str, Any]], beta: float | None
) -> None:
    """``schedule`` is one of ``required``'s, with every argument it needs
    (``required[schedule]``) and none of the other schedules' (a constant ``beta``
    checked first)."""
    if schedule not in required:
        raise ValueError(
            "`schedule` must be one of 'finite', 'compact', 'rkhs', 'constant', "
            f"got schedule={schedule!r}."
        )
    missing = [k for k, v in required[schedule].items() if v is None]
    if beta is not None:  # a constant beta: checked before the schedule's needs
        validation.check_nonnegative("beta", beta)
    if missing:
        raise ValueError(
            f"schedule={schedule!r} needs {', '.join(f'`{m}`' for m in missing)}."
        )
    given = {k: v for s, d in required.items() if s != schedule for k, v in d.items()}
    stray = [
        k for k, v in given.items() if v is not None and k not in required[schedule]
    ]
    if stray:
        raise ValueError(
            f"schedule={schedule!r} does not use {', '.join(f'`{s}`' for s in stray)}; "
            "remove it or choose the schedule that uses it."
        )


def _squared_norm_bound(
    B_squared: float | Tensor | None, B: float | Tensor | None
) -> float | Tensor | None:
    """``B_squared``, or the deprecated ``B`` (same value, with a warning)."""
    if B is None:
        return B_squared
    if B_squared is not None:
        raise ValueError(
            "Pass `B_squared` only: `B` is its deprecated spelling (got both, "
            f"B_squared={B_squared!r} and B={B!r})."
        )
    warnings.warn(
        _B_DEPRECATED.format(what="GPUCB(B=...)"), DeprecationWarning, stacklevel=3
    )
    return B


class IGPUCB(ScheduledUCB):
    r"""IGP-UCB of Chowdhury & Gopalan 2017 (Algorithm 1):
    :math:`\mu_{t-1}(x) + \beta_t\sigma_{t-1}(x)` with
    :math:`\beta_t = B + R\sqrt{2(\gamma_{t-1} + 1 + \ln(1/\delta))}` (``"linear"`` unit).

    Their Theorem 2 takes the model's noise (regularizer) :math:`\lambda = 1 + \eta`,
    :math:`\eta = 2/T`; their experiments use :math:`\lambda = R^2`. Set the model's
    likelihood noise accordingly -- this class reads :math:`\mu, \sigma` from the model.

    Conventions: :math:`\beta_t` (and a constant ``beta``) multiplies :math:`\sigma`
    directly, while BoTorch's ``UpperConfidenceBound(beta)`` computes
    :math:`\mu + \sqrt{\beta}\sigma`: ``UpperConfidenceBound(model, beta=b)`` is
    ``IGPUCB(model, beta=math.sqrt(b))``. ``B`` bounds the RKHS norm itself,
    :math:`\|f\|_k \le B` (Chowdhury & Gopalan); :class:`GPUCB`'s ``B_squared``
    bounds its square (``B_squared = B**2``).

    Args:
        model: A single-output BoTorch model (or multi-output with
            ``posterior_transform``).
        B: Bound on the RKHS norm :math:`\|f\|_k \le B` (not squared); a
            ``batch_shape`` tensor gives every model batch (seed) its own.
        R: Sub-Gaussian noise constant (float or ``batch_shape`` tensor).
        delta: Confidence :math:`\delta \in (0, 1)`.
        gamma: Source of :math:`\gamma_{t-1}`: ``"observed"`` (default: the
            information gain of the training points, which keeps the guarantee), a
            number, a callable ``n -> gamma_n``, or a ``GammaSource``.
        beta: Practical alternative: a constant :math:`\beta` (``"linear"`` unit),
            replacing the schedule (then ``B``, ``R``, ``gamma`` must be omitted).
        t: Round index; default ``num_observations(model) + 1`` (which counts the
            hallucinated pending points). An explicit ``t`` is the round of a
            decision without pending points: with ``p`` pending the round is
            ``t + p``, and point ``j`` of a q-batch is decided at ``t + p + j``.
        posterior_transform: Optional ``PosteriorTransform``.
        maximize: If False, :math:`-\mu + \beta_t\sigma`.
        hallucination_bound, X_pending: GP-BUCB with IGP-UCB's schedule, as in
            :class:`GPUCB` (with ``gamma="observed"``, point ``j`` of a q-batch uses the
            information gain of the data and the batch's earlier points).

    Example:
        >>> acqf = IGPUCB(model, B=1.0, R=0.1, delta=0.1)
        >>> x_next, _ = optimize_acqf(acqf, bounds, q=1, num_restarts=8, raw_samples=256)
    """

    unit = "linear"

    def __init__(
        self,
        model: Model,
        B: float | Tensor | None = None,
        R: float | Tensor | None = None,
        delta: float = 0.1,
        gamma: Any = "observed",
        beta: float | None = None,
        t: int | None = None,
        posterior_transform: PosteriorTransform | None = None,
        maximize: bool = True,
        hallucination_bound: float = 0.0,
        X_pending: Tensor | None = None,
    ) -> None:
        super().__init__(
            model=model, t=t, posterior_transform=posterior_transform, maximize=maximize
        )
        values = scale_arguments(
            B, R, delta, gamma, beta, constant_name="beta", algorithm="IGP-UCB"
        )
        set_plain_attributes(
            self, **dict(zip(("B", "R", "delta", "beta", "gamma"), values, strict=True))
        )
        set_plain_attributes(
            self,
            hallucination_bound=validation.check_nonnegative(
                "hallucination_bound", hallucination_bound
            ),
        )
        if X_pending is not None:
            self.set_X_pending(X_pending)

    def _beta(self, t: int) -> float:
        if self.beta is not None:
            return self.beta
        return schedules.igp_ucb_beta(gamma_after(self, t), self.B, self.R, self.delta)

    def _beta_after(self, t: int, extra_gain: Tensor | float) -> float | Tensor:
        if self.beta is not None:
            return self.beta
        return schedules.igp_ucb_beta(
            gamma_after(self, t, extra_gain), self.B, self.R, self.delta
        )
