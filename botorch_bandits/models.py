"""Models: GPs with the fixed hyperparameters the papers' theory assumes, and the
finite-arm engine with O(N^2) exact updates."""

from __future__ import annotations

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.models import SingleTaskGP
from botorch.models.model import Model
from botorch.posteriors import GPyTorchPosterior, Posterior
from gpytorch.distributions import MultivariateNormal
from gpytorch.kernels import Kernel
from gpytorch.means import ZeroMean
from linear_operator.operators import DiagLinearOperator
from torch import Tensor

from botorch_bandits.beta import _check_count


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


class FiniteArmGP(Model):
    r"""Exact GP posterior over a finite arm set, updated in :math:`O(N^2)` per
    observation and batched over independent seeds (a leading batch dimension).

    The posterior is kept in the form (SPEC notation, prior GP(0, k), regularizer
    :math:`\lambda`, selection matrix :math:`M` of the pulled arms):

    * covariance :math:`\Sigma_t = K - K M^\top (M K M^\top + \lambda I)^{-1} M K`,
      updated by the rank-one rule
      :math:`\Sigma \leftarrow \Sigma - \Sigma_{:,i}\Sigma_{i,:}/(\Sigma_{ii} + \lambda)`;
    * mean :math:`\mu_t = \Sigma_t b_t` with :math:`b_t = M^\top y / \lambda` (the
      per-arm sums of the observations divided by :math:`\lambda`). This identity is
      exact (no inverse of :math:`K` is needed), so replacing the target of an earlier
      observation is an :math:`O(N)` change of :math:`b`.

    Repeated pulls of an arm are ordinary observations. The information-gain increment
    :math:`\tfrac12\log(1 + \lambda^{-1}\sigma^2_{t-1}(x_t))` comes for free from the
    update. Every ``refactor_every`` observations of a seed, :math:`\Sigma` is rebuilt
    exactly from the pull counts (``n_i`` pulls of arm ``i`` act as one observation
    with noise :math:`\lambda / n_i`), which bounds round-off drift over long runs.

    ``posterior(X)`` accepts points of the arm set only (matched exactly, up to
    round-off) and raises a ``ValueError`` otherwise.

    Args:
        arms: ``N x d`` arm set.
        kernel: A GPyTorch kernel (evaluated once on ``arms``) or an ``N x N`` matrix.
        noise: :math:`\lambda > 0`.
        num_seeds: Size of the leading seed batch (``None``: no batch dimension).
        refactor_every: Exact rebuild period in observations per seed (``None``: never).
    """

    def __init__(
        self,
        arms: Tensor,
        kernel: Kernel | Tensor,
        noise: float,
        num_seeds: int | None = None,
        refactor_every: int | None = 1000,
    ) -> None:
        super().__init__()
        if arms.ndim != 2 or arms.shape[0] < 1:
            raise ValueError(
                f"`arms` must be N x d with N >= 1, got shape {tuple(arms.shape)}."
            )
        if not noise > 0:
            raise ValueError(f"`noise` (lambda) must be > 0, got noise={noise!r}.")
        for name, value in (
            ("num_seeds", num_seeds),
            ("refactor_every", refactor_every),
        ):
            if value is not None:  # None is allowed for both
                _check_count(name, value, minimum=1)
        N = arms.shape[0]
        if isinstance(kernel, Tensor):
            K = kernel.to(arms)
            if K.shape != (N, N):
                raise ValueError(
                    f"`kernel` as a matrix must be {N} x {N}, got {tuple(K.shape)}."
                )
        else:
            with torch.no_grad():
                K = kernel.to(arms)(arms).to_dense()
        self.register_buffer("arms", arms)
        self.register_buffer("K", K)
        self.noise = float(noise)
        self.num_seeds = num_seeds
        self.refactor_every = refactor_every
        self._batch = torch.Size([]) if num_seeds is None else torch.Size([num_seeds])
        S = max(num_seeds or 1, 1)
        self.register_buffer("cov_", K.expand(S, N, N).clone())  # S x N x N
        self.register_buffer("b_", K.new_zeros(S, N))  # S x N
        self.register_buffer(
            "counts_", torch.zeros(S, N, dtype=torch.long, device=K.device)
        )
        self.register_buffer("information_gain_", K.new_zeros(S))  # S
        self.register_buffer(
            "num_observations_", torch.zeros(S, dtype=torch.long, device=K.device)
        )
        self.data_version_ = 0  # incremented by every change of the data
        self._arms_hist: list[Tensor] = []  # per step: S long (-1: no observation)
        self._y_hist: list[Tensor] = []  # per step: S

    # ------------------------------------------------------------------ BoTorch API
    @property
    def batch_shape(self) -> torch.Size:
        return self._batch

    @property
    def num_outputs(self) -> int:
        return 1

    def _seeds(self, t: Tensor) -> Tensor:
        return t if self.num_seeds is not None else t.squeeze(0)

    @property
    def mean_(self) -> Tensor:
        """``batch_shape x N`` posterior mean on the arms."""
        return self._seeds((self.cov_ @ self.b_.unsqueeze(-1)).squeeze(-1))

    @property
    def covariance_(self) -> Tensor:
        """``batch_shape x N x N`` posterior covariance on the arms."""
        return self._seeds(self.cov_)

    def arm_indices(self, X: Tensor) -> Tensor:
        """Indices into ``arms`` of the points ``X`` (``... x d``); raises if a point
        is not an arm."""
        flat = X.reshape(-1, X.shape[-1]).to(self.arms)
        N = self.arms.shape[0]
        if flat.shape == self.arms.shape and torch.equal(flat, self.arms):
            # the whole arm set in order (scoring every arm): no search needed
            return torch.arange(N, device=self.arms.device).reshape(X.shape[:-1])
        dist = torch.cdist(flat, self.arms, compute_mode="donot_use_mm_for_euclid_dist")
        min_dist, idx = dist.min(dim=-1)
        tol = (1e-6 if self.arms.dtype == torch.double else 1e-4) * (
            1 + self.arms.abs().max()
        )
        if torch.any(min_dist > tol):
            bad = flat[int(min_dist.argmax())].tolist()
            raise ValueError(
                f"FiniteArmGP answers on its arm set only; {bad} is not an arm. "
                "Use a SingleTaskGP for points outside the arm set."
            )
        return idx.reshape(X.shape[:-1])

    def posterior(
        self,
        X: Tensor,
        output_indices: list[int] | None = None,
        observation_noise: bool | Tensor = False,
        posterior_transform: PosteriorTransform | None = None,
    ) -> Posterior:
        r"""Joint posterior at arms ``X`` (``batch x q x d``, batch broadcast with the
        seed batch). ``observation_noise=True`` adds :math:`\lambda`."""
        if output_indices not in (None, [0]):
            raise ValueError(
                f"FiniteArmGP has one output, got output_indices={output_indices}."
            )
        idx = self.arm_indices(X)  # batch x q
        mean_all, cov_all = self.mean_, self.covariance_  # B x N, B x N x N
        out_batch = torch.broadcast_shapes(idx.shape[:-1], self._batch)
        q, N = idx.shape[-1], self.arms.shape[0]
        idx_b = idx.expand(*out_batch, q)
        mean = mean_all.expand(*out_batch, N).gather(-1, idx_b)  # out_batch x q
        if q == 1:  # one point per batch: its 1 x 1 covariance is the variance
            var_all = cov_all.diagonal(dim1=-2, dim2=-1)  # B x N (a view)
            var = var_all.expand(*out_batch, N).gather(-1, idx_b)  # out_batch x 1
            if observation_noise is True:
                var = var + self.noise
            elif isinstance(observation_noise, Tensor):
                var = var + observation_noise.squeeze(-1).expand(*out_batch, q)
            mvn = MultivariateNormal(
                mean.to(X.dtype), DiagLinearOperator(var.to(X.dtype))
            )
            post = GPyTorchPosterior(mvn)
            return (
                posterior_transform(post) if posterior_transform is not None else post
            )
        rows = cov_all.expand(*out_batch, N, N).gather(
            -2, idx_b.unsqueeze(-1).expand(*out_batch, q, N)
        )  # out_batch x q x N
        cov = rows.gather(-1, idx_b.unsqueeze(-2).expand(*out_batch, q, q))  # q x q
        if observation_noise is True:
            cov = cov + self.noise * torch.eye(q, dtype=cov.dtype, device=cov.device)
        elif isinstance(observation_noise, Tensor):
            cov = cov + torch.diag_embed(
                observation_noise.squeeze(-1).expand(*out_batch, q)
            )
        mvn = MultivariateNormal(mean.to(X.dtype), cov.to(X.dtype))
        post = GPyTorchPosterior(mvn)
        return posterior_transform(post) if posterior_transform is not None else post

    # ------------------------------------------------------------------ data
    @property
    def train_inputs(self) -> tuple[Tensor]:
        """``(batch_shape x n x d,)`` pulled arms, for seeds holding equal counts."""
        n = self.num_observations_
        if self._arms_hist and bool(torch.any(n != n[0])):
            raise ValueError(
                "Seeds hold different numbers of observations "
                f"{n.tolist()}; pass `t` to the acquisition explicitly."
            )
        if not self._arms_hist or int(n[0]) == 0:
            return (
                self._seeds(self.arms.new_zeros(n.shape[0], 0, self.arms.shape[-1])),
            )
        hist = torch.stack(self._arms_hist, dim=-1)  # S x steps
        rows = [h[h >= 0] for h in hist]
        return (self._seeds(self.arms[torch.stack(rows)]),)

    def observe(self, arm_idx: Tensor, y: Tensor) -> Tensor:
        r"""Add one observation per seed: arm ``arm_idx`` (``batch_shape`` long) with
        value ``y`` (``batch_shape``). Seeds may be left out with ``arm_idx = -1``.

        Returns:
            ``batch_shape`` posterior variances :math:`\sigma^2_{t-1}(x_t)` before the
            update (0 for skipped seeds).
        """
        self.data_version_ += 1
        S = self.cov_.shape[0]
        arm_idx = torch.as_tensor(arm_idx, device=self.K.device).reshape(S).long()
        y = torch.as_tensor(y, dtype=self.K.dtype, device=self.K.device).reshape(S)
        N = self.arms.shape[0]
        if torch.any(arm_idx >= N) or torch.any(arm_idx < -1):
            raise ValueError(
                f"`arm_idx` must lie in [0, {N}) (or -1 to skip), got {arm_idx.tolist()}."
            )
        if not torch.all(torch.isfinite(y[arm_idx >= 0])):
            raise ValueError(f"`y` must be finite, got {y.tolist()}.")
        active = arm_idx >= 0
        safe = arm_idx.clamp_min(0)
        col = self.cov_.gather(-1, safe.view(S, 1, 1).expand(S, N, 1)).squeeze(
            -1
        )  # S x N
        var = col.gather(-1, safe.view(S, 1)).squeeze(-1).clamp_min(0.0)  # S
        scale = torch.where(active, 1.0 / (var + self.noise), torch.zeros_like(var))
        # rank-one downdate in place: cov -= (scale * col) col^T
        self.cov_.baddbmm_(
            (scale.unsqueeze(-1) * col).unsqueeze(-1), col.unsqueeze(-2), alpha=-1.0
        )
        self.b_.scatter_add_(
            -1, safe.view(S, 1), torch.where(active, y / self.noise, 0.0).view(S, 1)
        )
        self.counts_.scatter_add_(-1, safe.view(S, 1), active.long().view(S, 1))
        var = torch.where(active, var, torch.zeros_like(var))
        self.information_gain_ += 0.5 * torch.log1p(var / self.noise)
        self.num_observations_ += active.long()
        self._arms_hist.append(torch.where(active, arm_idx, -1))
        self._y_hist.append(torch.where(active, y, torch.nan))
        if self.refactor_every is not None:
            due = active & (self.num_observations_ % self.refactor_every == 0)
            if bool(due.any()):
                self.refactor(due)
        return self._seeds(var)

    def _seed_mask(self, seeds: Tensor | None) -> Tensor:
        """The ``S`` bool mask of the seeds an operation applies to (default all)."""
        S = self.cov_.shape[0]
        if seeds is None:
            return torch.ones(S, dtype=torch.bool, device=self.cov_.device)
        return seeds.reshape(S).bool()

    def refactor(self, seeds: Tensor | None = None) -> None:
        r"""Rebuild :math:`\Sigma` exactly from the pull counts (``seeds``: a bool mask
        of ``batch_shape``; default all)."""
        self.data_version_ += 1
        mask = self._seed_mask(seeds)
        for s in torch.nonzero(mask).flatten().tolist():
            pulled = torch.nonzero(self.counts_[s] > 0).flatten()
            if pulled.numel() == 0:
                self.cov_[s] = self.K
                continue
            KU = self.K[:, pulled]  # N x u
            A = self.K[pulled][:, pulled] + torch.diag(
                self.noise / self.counts_[s, pulled].to(self.K)
            )
            L = torch.linalg.cholesky(A)
            W = torch.cholesky_solve(KU.T, L)  # u x N
            cov = self.K - KU @ W
            self.cov_[s] = 0.5 * (cov + cov.T)

    def reset(self, seeds: Tensor | None = None) -> None:
        """Forget every observation of the masked seeds (restarts)."""
        self.data_version_ += 1
        mask = self._seed_mask(seeds)
        self.cov_[mask] = self.K
        self.b_[mask] = 0.0
        self.counts_[mask] = 0
        self.information_gain_[mask] = 0.0
        self.num_observations_[mask] = 0
        for h in self._arms_hist:
            h[mask] = -1

    def replace_target(self, step: int, y: Tensor, seeds: Tensor | None = None) -> None:
        r"""Replace the observation made at ``step`` (0-based) by ``y`` for the masked
        seeds: an :math:`O(N)` change of :math:`b` (the covariance does not depend on
        the targets)."""
        self.data_version_ += 1
        if not 0 <= step < len(self._y_hist):
            raise ValueError(
                f"`step` must lie in [0, {len(self._y_hist)}), got {step}."
            )
        S = self.cov_.shape[0]
        mask = self._seed_mask(seeds)
        arm = self._arms_hist[step]
        mask = mask & (arm >= 0)
        y = torch.as_tensor(y, dtype=self.K.dtype).reshape(S)
        old = self._y_hist[step]
        delta = torch.where(mask, (y - old) / self.noise, 0.0)
        self.b_.scatter_add_(-1, arm.clamp_min(0).view(S, 1), delta.view(S, 1))
        self._y_hist[step] = torch.where(mask, y, old)
