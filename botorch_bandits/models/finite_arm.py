"""The finite-arm engine: :class:`FiniteArmGP`, the exact GP posterior over a finite
arm set with O(N^2) rank-one updates, batched over independent seeds (the
reproductions' engine), and its marginal posterior for one point per batch."""

from __future__ import annotations

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from botorch.posteriors import GPyTorchPosterior, Posterior
from gpytorch.distributions import MultivariateNormal
from gpytorch.kernels import Kernel
from linear_operator.operators import DenseLinearOperator, DiagLinearOperator
from torch import Tensor

from botorch_bandits._matching import match_points
from botorch_bandits.models.arm_inputs import (
    as_observation,
    check_observation,
    checked_num_seeds,
    kernel_matrix,
    noise_values,
    score_layout,
)
from botorch_bandits.models.roots import pivoted_root, posterior_root, psd_root
from botorch_bandits.validation import check_single_output


class _MarginalPosterior(GPyTorchPosterior):
    """The posterior at one point per batch (``q = 1``): a ``GPyTorchPosterior`` whose
    ``mean`` and ``variance`` are read directly, and whose ``MultivariateNormal`` (with
    a diagonal covariance) is only built if something asks for the distribution
    (sampling, posterior transforms). Analytic acquisition functions read ``mean`` and
    ``variance`` only, so scoring every arm skips the distribution's construction."""

    def __init__(self, mean: Tensor, variance: Tensor) -> None:  # batch x q, q = 1
        self._loc, self._var, self._mvn = mean, variance, None

    @property
    def distribution(self) -> MultivariateNormal:
        if self._mvn is None:
            self._mvn = MultivariateNormal(self._loc, DiagLinearOperator(self._var))
        return self._mvn

    @property
    def mean(self) -> Tensor:
        return self._loc.unsqueeze(-1)

    @property
    def variance(self) -> Tensor:
        return self._var.unsqueeze(-1)

    @property
    def device(self) -> torch.device:
        return self._loc.device

    @property
    def dtype(self) -> torch.dtype:
        return self._loc.dtype


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

    Every seed may have its own arm set, kernel matrix and :math:`\lambda` (the
    papers' trials draw a new decision set and function each): pass ``arms`` as
    ``S x N x d``, the kernel matrix as ``S x N x N`` and ``noise`` as an ``S`` tensor.
    A shared arm set may have per-seed kernel matrices (e.g. hyperparameters refit
    per seed).

    ``posterior(X)`` accepts points of the arm set only (matched exactly, up to
    round-off; the batch dims of ``X`` broadcast against the seed batch, and with
    per-seed arms each seed's points are looked up in its own set) and raises a
    ``ValueError`` otherwise. ``score_points`` is the whole arm set laid out for one
    batched acquisition call (``N x S x 1 x d``; ``N x 1 x d`` without seeds), which
    takes a fast path.

    Args:
        arms: ``N x d`` arm set shared by all seeds, or ``S x N x d`` per seed.
        kernel: A GPyTorch kernel (evaluated once on ``arms``), or the kernel matrix
            (``N x N`` or ``S x N x N``).
        noise: :math:`\lambda > 0`: a float, or an ``S`` tensor (one per seed).
        num_seeds: Size of the leading seed batch (``None``: no batch dimension,
            unless ``arms`` is ``S x N x d``, which sets it to ``S``).
        refactor_every: Exact rebuild period in observations per seed (``None``: never).
        keep_root: Also keep a square root :math:`L_t` with
            :math:`\Sigma_t = L_t L_t^\top` (``covariance_root_``), updated by Potter's
            square-root rule :math:`L \leftarrow L - b\,(Lw)w^\top`, :math:`w = L_{i,:}`,
            :math:`b = 1/((w^\top w + \lambda)(1 + \sqrt{\lambda/(w^\top w + \lambda)}))`
            -- :math:`O(N^2)`, no factorization of the (near-singular) posterior
            covariance. Exact joint draws on the arms (GP-TS) then cost one
            matrix-vector product.
        defer: Collect up to this many rank-one downdates of :math:`\Sigma` and
            apply them together (one matrix product, :math:`\Sigma \leftarrow
            \Sigma - UDU^\top`) instead of one pass over :math:`\Sigma` per
            observation; meanwhile a column of :math:`\Sigma` is read as
            :math:`\Sigma_{:,i} - UDU_{i,:}^\top` and the variances are kept
            apart. The same posterior up to round-off, many times faster for large
            arm sets and many seeds (the single downdate is bound by memory); the
            sum over the collected updates makes the last bits depend on the
            machine's matrix kernels. ``None`` (default): one downdate per
            observation, bit-for-bit reproducible. Not with ``keep_root``.
        root_method: How ``keep_root`` takes the prior's square root:
            ``"eigh"`` (default; eigendecomposition, round-off negative eigenvalues
            set to 0) or ``"pivoted"`` (Cholesky with complete pivoting, LAPACK
            ``?pstrf``, to the numerical rank: the same matrix up to round-off,
            many times faster when the kernel matrix has low numerical rank, as
            short lengthscales on many arms do; e.g. for every refit of a long run).

    Example:
        >>> gp = FiniteArmGP(arms, make_kernel("rbf", 0.2), noise=0.01, num_seeds=8)
    """

    def __init__(
        self,
        arms: Tensor,
        kernel: Kernel | Tensor,
        noise: float | Tensor,
        num_seeds: int | None = None,
        refactor_every: int | None = 1000,
        keep_root: bool = False,
        defer: int | None = None,
        root_method: str = "eigh",
    ) -> None:
        super().__init__()
        num_seeds = checked_num_seeds(
            arms, num_seeds, refactor_every, defer, root_method
        )
        S = num_seeds or 1
        N = arms.shape[-2]
        K = kernel_matrix(kernel, arms, num_seeds)
        noise_t = noise_values(noise, arms, S)
        self.register_buffer("arms", arms)
        self.register_buffer("K", K)
        self.noise = float(noise_t) if noise_t.numel() == 1 else noise_t.reshape(S)
        self.register_buffer("_noise", noise_t.reshape(-1).expand(S).clone())  # S
        self.num_seeds = num_seeds
        self.refactor_every = refactor_every
        self.keep_root = bool(keep_root)
        self.root_method = root_method
        self._batch = torch.Size([]) if num_seeds is None else torch.Size([num_seeds])
        self.register_buffer("_K3", K.reshape(-1, N, N))  # 1 x N x N or S x N x N
        self.register_buffer("_cov", self._K3.expand(S, N, N).clone())  # S x N x N
        if defer is not None and keep_root:
            raise ValueError("`defer` cannot be combined with `keep_root`.")
        self.defer = defer
        self._init_posterior(K, S, N)
        self.score_points = score_layout(arms, num_seeds)
        self._state = {"version": 0, "countdown": refactor_every or 0, "pending": 0}
        self.register_buffer("_seed_range", torch.arange(S, device=K.device))
        self.register_buffer("_ones", torch.ones(S, dtype=torch.long, device=K.device))
        self._arms_hist: list[Tensor] = []  # per step: S long (-1: no observation)
        self._y_hist: list[Tensor] = []  # per step: S

    def _init_posterior(self, K: Tensor, S: int, N: int) -> None:
        """The rest of the posterior's state, at the prior (registered after
        ``_cov``, in this order): the collected downdates, :math:`b`, the mean, the
        square root, the pull counts, the information gain, the observations."""
        defer = self.defer
        if defer is not None:  # the collected downdates: columns, scales
            self.register_buffer("_U", K.new_zeros(S, N, defer))
            self.register_buffer("_coef", K.new_zeros(S, defer))
            self.register_buffer("_diag", K.new_zeros(S, N))
        self.register_buffer("b_", K.new_zeros(S, N))  # S x N
        self.register_buffer("mean_buf_", K.new_zeros(S, N))  # S x N, = cov_ @ b_
        if self.keep_root:
            root = (
                psd_root(self._K3)
                if self.root_method == "eigh"
                else torch.stack([pivoted_root(k) for k in self._K3])
            )
            self.register_buffer("_K3_root", root)
            self.register_buffer(
                "covariance_root_", self._K3_root.expand(S, N, N).clone()
            )
        self.register_buffer(
            "counts_", torch.zeros(S, N, dtype=torch.long, device=K.device)
        )
        self.register_buffer("information_gain_", K.new_zeros(S))  # S
        self.register_buffer(
            "num_observations_", torch.zeros(S, dtype=torch.long, device=K.device)
        )

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
        return self._seeds(self.mean_buf_)

    def _recompute_mean(self, mask: Tensor | None = None) -> None:
        """mu = Sigma b exactly (after rebuilds and resets)."""
        mean = (self.cov_ @ self.b_.unsqueeze(-1)).squeeze(-1)
        if mask is None:
            self.mean_buf_.copy_(mean)
        else:
            self.mean_buf_[mask] = mean[mask]

    @property
    def cov_(self) -> Tensor:
        """``S x N x N`` posterior covariance, every collected downdate applied."""
        self._flush()
        return self._cov

    def _flush(self) -> None:
        """Apply the collected downdates (``defer``): one batched matrix product."""
        p = self._state["pending"]
        if p:
            U = self._U[:, :, :p]
            self._cov.baddbmm_(
                U * self._coef[:, None, :p], U.transpose(-1, -2), alpha=-1.0
            )
            self._state["pending"] = 0

    def _variances(self) -> Tensor:
        """``S x N`` posterior variances on the arms (no flush)."""
        if self._state["pending"]:
            return self._diag
        return self._cov.diagonal(dim1=-2, dim2=-1)

    @property
    def covariance_(self) -> Tensor:
        """``batch_shape x N x N`` posterior covariance on the arms."""
        return self._seeds(self.cov_)

    def arm_indices(self, X: Tensor) -> Tensor:
        """Indices into the arm set of the points ``X``.

        Args:
            X: ``... x d`` arms; with per-seed arms, the seed dim of ``X`` (its last
                batch dim) picks the set.

        Returns:
            ``...`` long indices (a ``ValueError`` if a point is not an arm).
        """
        if self.arms.ndim == 3 and X.ndim >= 2:
            # per-seed sets: the seed dim is the last batch dim of X (before q)
            return match_points(X.movedim(-2, 0), self.arms, self._not_an_arm).movedim(
                0, -1
            )
        return match_points(X, self.arms, self._not_an_arm)

    _not_an_arm = (
        "FiniteArmGP answers on its arm set only; {point} is not an arm. Optimize "
        "over the arms with optimize_acqf_discrete(choices=model.arms), or use a "
        "SingleTaskGP for points outside the arm set (optimize_acqf, "
        "optimize_acqf_mixed)."
    )

    def _noise_like(self, like: Tensor) -> Tensor:
        """lambda per seed, shaped to broadcast against ``out_batch x q``."""
        noise = self._noise.to(like)
        return noise.unsqueeze(-1) if self.num_seeds is not None else noise[0]

    def posterior(
        self,
        X: Tensor,
        output_indices: list[int] | None = None,
        observation_noise: bool | Tensor = False,
        posterior_transform: PosteriorTransform | None = None,
    ) -> Posterior:
        r"""Joint posterior at arms ``X``.

        Args:
            X: ``batch x q x d`` arms (batch broadcast with the seed batch), or
                ``score_points``.
            output_indices: ``None`` or ``[0]`` (one output).
            observation_noise: ``True`` adds :math:`\lambda`, a tensor adds those
                variances (default ``False``).
            posterior_transform: Applied to the posterior if given.

        Returns:
            A ``GPyTorchPosterior`` with ``out_batch x q`` mean (marginal, no
            distribution built, for ``q = 1``).
        """
        check_single_output("FiniteArmGP", output_indices)
        if X is self.score_points:  # every arm, one per batch: mean and variance only
            mean = self.mean_.transpose(-1, 0).unsqueeze(-1)  # N x S x 1 (N x 1)
            var = self._seeds(self._variances()).transpose(-1, 0)
            var = var.unsqueeze(-1)
            return self._diagonal_posterior(
                X, mean, var, observation_noise, posterior_transform
            )
        idx = self.arm_indices(X)  # batch x q
        mean_all = self.mean_  # B x N
        out_batch = torch.broadcast_shapes(idx.shape[:-1], self._batch)
        q, N = idx.shape[-1], self.arms.shape[-2]
        idx_b = idx.expand(*out_batch, q)
        mean = mean_all.expand(*out_batch, N).gather(-1, idx_b)  # out_batch x q
        if q == 1:  # one point per batch: its 1 x 1 covariance is the variance
            var_all = self._seeds(self._variances())  # B x N
            var = var_all.expand(*out_batch, N).gather(-1, idx_b)  # out_batch x 1
            return self._diagonal_posterior(
                X, mean, var, observation_noise, posterior_transform
            )
        cov_all = self.covariance_  # B x N x N
        rows = cov_all.expand(*out_batch, N, N).gather(
            -2, idx_b.unsqueeze(-1).expand(*out_batch, q, N)
        )  # out_batch x q x N
        cov = rows.gather(-1, idx_b.unsqueeze(-2).expand(*out_batch, q, q))  # q x q
        if observation_noise is True:
            eye = torch.eye(q, dtype=cov.dtype, device=cov.device)
            cov = cov + self._noise_like(mean).unsqueeze(-1) * eye
        elif isinstance(observation_noise, Tensor):
            cov = cov + torch.diag_embed(
                observation_noise.squeeze(-1).expand(*out_batch, q)
            )
        # a linear operator: no Cholesky at construction (posterior covariances of
        # smooth kernels are near-singular; samplers add their own jitter)
        mvn = MultivariateNormal(mean.to(X.dtype), DenseLinearOperator(cov.to(X.dtype)))
        post = GPyTorchPosterior(mvn)
        return posterior_transform(post) if posterior_transform is not None else post

    def _diagonal_posterior(
        self,
        X: Tensor,
        mean: Tensor,
        var: Tensor,
        observation_noise: bool | Tensor,
        posterior_transform: PosteriorTransform | None,
    ) -> Posterior:
        if observation_noise is True:
            var = var + self._noise_like(var)
        elif isinstance(observation_noise, Tensor):
            var = var + observation_noise.squeeze(-1).expand_as(var)
        post = _MarginalPosterior(mean.to(X.dtype), var.to(X.dtype))
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
        d = self.arms.shape[-1]
        if not self._arms_hist or int(n[0]) == 0:
            return (self._seeds(self.arms.new_zeros(n.shape[0], 0, d)),)
        hist = torch.stack(self._arms_hist, dim=-1)  # S x steps
        arms3 = self.arms.reshape(-1, *self.arms.shape[-2:])
        arms3 = arms3.expand(hist.shape[0], *arms3.shape[-2:])
        rows = [a[h[h >= 0]] for a, h in zip(arms3, hist, strict=True)]
        return (self._seeds(torch.stack(rows)),)

    @property
    def data_version_(self) -> int:
        """Incremented by every change of the data (keys per-decision memos)."""
        return self._state["version"]

    def _changed(self) -> None:
        self._state["version"] += 1

    def _reset_countdown(self) -> None:
        """Observations until the first seed can be due for its exact rebuild."""
        every = self.refactor_every
        if every is not None:
            rem = every - self.num_observations_ % every
            self._state["countdown"] = int(rem.min())

    def _column(self, arm: Tensor) -> Tensor:
        """``S x N``: column ``arm[s]`` of each seed's posterior covariance (with the
        collected downdates subtracted, without applying them; with ``defer`` the
        row, which equals it up to round-off and is read contiguously)."""
        seeds = self._seed_range
        if self.defer is None:
            return self._cov[seeds, :, arm]
        # deferred: the row, which is the column up to round-off (contiguous)
        col = self._cov[seeds, arm, :]
        p = self._state["pending"]
        if p:
            U = self._U[:, :, :p]
            w = self._coef[:, :p] * U[seeds, arm, :]  # S x p
            col = col - (U @ w.unsqueeze(-1)).squeeze(-1)
        return col

    def observe(self, arm_idx: Tensor, y: Tensor) -> Tensor:
        r"""Add one observation per seed.

        Args:
            arm_idx: ``batch_shape`` long arm indices (-1: the seed is left out).
            y: ``batch_shape`` values (finite for the observing seeds).

        Returns:
            ``batch_shape`` posterior variances :math:`\sigma^2_{t-1}(x_t)` before the
            update (0 for skipped seeds).
        """
        arm_idx, y = as_observation(arm_idx, y, self._cov)
        every_seed = check_observation(arm_idx, y, self._cov)
        seeds, mean, noise = self._seed_range, self.mean_buf_, self._noise
        if every_seed:  # every seed observes (the common case): no masking
            safe, active = arm_idx, None
            col = self._column(safe)  # S x N (a copy: the column before the update)
            var = col[seeds, safe].clamp_min(0.0)  # S
            scale = 1.0 / (var + noise)
            y_kept = y.clone()
            y_used = y
        else:
            active = arm_idx >= 0
            safe = arm_idx.clamp_min(0)
            col = self._column(safe)  # S x N
            var = col[seeds, safe].clamp_min(0.0) * active  # 0 for skipped seeds
            scale = active / (var + noise)
            y_kept = torch.where(active, y, torch.nan)
            y_used = y_kept.nan_to_num(0.0)
        b_add = y_used / noise
        # mean: the Kalman form of mu = Sigma b, mu += col (y - mu_i) / (var + lambda)
        innovation = (y_used - mean[seeds, safe]) * scale  # 0 for skipped seeds
        mean.addcmul_(col, innovation.unsqueeze(-1))
        self._changed()
        self._downdate(col, scale)
        self.b_.index_put_((seeds, safe), b_add, accumulate=True)
        self.counts_.index_put_(
            (seeds, safe),
            self._ones if active is None else active.long(),
            accumulate=True,
        )
        if self.keep_root:
            self._downdate_root(safe, active)
        self.information_gain_.add_(torch.log1p(var / noise), alpha=0.5)
        self.num_observations_.add_(1 if active is None else active)
        self._arms_hist.append(
            arm_idx.clone() if active is None else torch.where(active, arm_idx, -1)
        )
        self._y_hist.append(y_kept)
        if self.refactor_every is not None:
            self._count_down(active)
        return self._seeds(var)

    def _downdate(self, col: Tensor, scale: Tensor) -> None:
        r""":math:`\Sigma \leftarrow \Sigma - s\,c c^\top` for the column ``col``
        (``S x N``) and ``scale`` (``S``): in place, or collected (``defer``)."""
        cov = self._cov
        if self.defer is None:  # rank-one downdate in place: cov -= (scale * col) col^T
            cov.baddbmm_(
                (scale.unsqueeze(-1) * col).unsqueeze(-1), col.unsqueeze(-2), alpha=-1.0
            )
        else:  # collected; applied together when `defer` are held (or read)
            p = self._state["pending"]
            if p == 0:
                self._diag.copy_(cov.diagonal(dim1=-2, dim2=-1))
            self._U[:, :, p] = col
            self._coef[:, p] = scale
            self._diag.addcmul_(col * col, scale.unsqueeze(-1), value=-1.0)
            self._state["pending"] = p + 1
            if p + 1 == self.defer:
                self._flush()

    def _downdate_root(self, safe: Tensor, active: Tensor | None) -> None:
        """Potter's square-root downdate (stable form of b) of ``covariance_root_``
        for the observed arms ``safe`` (``active``: the observing seeds; ``None``:
        all)."""
        L, noise = self.covariance_root_, self._noise
        w = L[self._seed_range, safe, :]  # S x N: row i of L
        ww = (w * w).sum(-1)  # = Sigma_ii up to round-off
        b = 1.0 / ((ww + noise) * (1.0 + torch.sqrt(noise / (ww + noise))))
        if active is not None:
            b = b * active
        L.baddbmm_(
            (L @ w.unsqueeze(-1)) * b.view(L.shape[0], 1, 1),
            w.unsqueeze(-2),
            alpha=-1.0,
        )

    def _count_down(self, active: Tensor | None) -> None:
        """One observation nearer the exact rebuilds (``refactor_every``): the seeds
        due (and observing: ``active``) are rebuilt."""
        self._state["countdown"] -= 1
        if self._state["countdown"] <= 0:
            due = self.num_observations_ % self.refactor_every == 0
            if active is not None:
                due &= active
            if bool(due.any()):
                self.refactor(due)
            self._reset_countdown()

    def _seed_mask(self, seeds: Tensor | None) -> Tensor:
        """The ``S`` bool mask of the seeds an operation applies to (default all)."""
        S = self.cov_.shape[0]
        if seeds is None:
            return torch.ones(S, dtype=torch.bool, device=self.cov_.device)
        return seeds.reshape(S).bool()

    def _prior_index(self, s: int) -> int:
        """Index of seed ``s``'s prior (kernel matrix, its root): shared or per seed."""
        return s if self._K3.shape[0] > 1 else 0

    def refactor(self, seeds: Tensor | None = None) -> None:
        r"""Rebuild :math:`\Sigma` exactly from the pull counts.

        Args:
            seeds: A ``batch_shape`` bool mask (default ``None``: every seed).
        """
        self._changed()
        mask = self._seed_mask(seeds)
        for s in torch.nonzero(mask).flatten().tolist():
            self._rebuild_seed(s)
        self._recompute_mean(mask)

    def _rebuild_seed(
        self, s: int, root_from_prior: bool = False
    ) -> tuple[Tensor, Tensor] | None:
        r"""Seed ``s``'s :math:`\Sigma` (and, with ``keep_root``, its square root:
        by eigendecomposition, or ``root_from_prior`` from the prior's by
        :func:`~botorch_bandits.models.roots.posterior_root`) exactly from its pull
        counts; returns the pulled arms and the Cholesky factor
        of :math:`A = K_{UU} + \lambda\,\mathrm{diag}(1/n)` (``None``: no pulls)."""
        K = self._K3[self._prior_index(s)]
        pulled = torch.nonzero(self.counts_[s] > 0).flatten()
        if pulled.numel() == 0:
            self.cov_[s] = K
            if self.keep_root:
                self.covariance_root_[s] = self._K3_root[self._prior_index(s)]
            return None
        KU = K[:, pulled]  # N x u
        A = K[pulled][:, pulled] + torch.diag(
            self._noise[s] / self.counts_[s, pulled].to(K)
        )
        L = torch.linalg.cholesky(A)
        W = torch.cholesky_solve(KU.T, L)  # u x N
        cov = K - KU @ W
        self.cov_[s] = 0.5 * (cov + cov.T)
        if self.keep_root:
            self.covariance_root_[s] = (
                posterior_root(self._K3_root[self._prior_index(s)], pulled, L)
                if root_from_prior
                else psd_root(self.cov_[s])
            )
        return pulled, L

    def with_prior(
        self, kernel: Tensor, noise: float | Tensor, root_method: str | None = None
    ) -> FiniteArmGP:
        r"""A new engine on the same arms with another kernel matrix and noise
        (e.g. refitted hyperparameters) holding every stored observation, in order
        (its ``observe`` history, targets and pull counts). Built exactly from the
        pull counts (as :meth:`refactor`, with ``keep_root`` a square root from
        the prior's, :func:`~botorch_bandits.models.roots.posterior_root`),
        :math:`b` from the targets, and the information gain from
        :math:`\tfrac12\log\det(I + \lambda^{-1}K_{XX})` over the observations,
        :math:`\tfrac12[\sum_i\log(n_i/\lambda) + \log\det(K_{UU} +
        \lambda\,\mathrm{diag}(1/n))]` over the pulled arms
        :math:`U` (the sum of the per-observation gains, exactly).

        Args:
            kernel: The new kernel matrix (``N x N`` or ``S x N x N``).
            noise: The new :math:`\lambda`: a float or an ``S`` tensor.
            root_method: ``"eigh"`` or ``"pivoted"`` for the new prior's root
                (default ``None``: this engine's).

        Returns:
            The new :class:`FiniteArmGP`.
        """
        new = FiniteArmGP(
            self.arms,
            kernel,
            noise,
            num_seeds=self.num_seeds,
            refactor_every=self.refactor_every,
            keep_root=self.keep_root,
            defer=self.defer,
            root_method=root_method or self.root_method,
        )
        new.counts_.copy_(self.counts_)
        new.num_observations_.copy_(self.num_observations_)
        new._arms_hist = [a.clone() for a in self._arms_hist]
        new._y_hist = [y.clone() for y in self._y_hist]
        if self._arms_hist:
            arms = torch.stack(new._arms_hist)  # steps x S
            y = torch.stack(new._y_hist).nan_to_num(0.0)
            kept = arms >= 0
            new.b_.scatter_add_(
                -1,
                arms.clamp_min(0).T,
                (torch.where(kept, y, 0.0) / new._noise).T,
            )
        new._changed()
        for s in range(new.cov_.shape[0]):
            rebuilt = new._rebuild_seed(s, root_from_prior=True)
            if rebuilt is None:
                continue
            pulled, L = rebuilt
            c = new.counts_[s, pulled].to(L)
            lam = new._noise[s]
            logdet = 2 * torch.log(torch.diagonal(L)).sum()
            new.information_gain_[s] = 0.5 * (torch.log(c / lam).sum() + logdet)
        new._recompute_mean()
        new._reset_countdown()
        return new

    def reset(self, seeds: Tensor | None = None) -> None:
        """Forget every observation of the masked seeds (restarts).

        Args:
            seeds: A ``batch_shape`` bool mask (default ``None``: every seed).
        """
        self._changed()
        mask = self._seed_mask(seeds)
        S, N = self.cov_.shape[0], self.cov_.shape[-1]
        self.cov_[mask] = self._K3.expand(S, N, N)[mask]
        if self.keep_root:
            self.covariance_root_[mask] = self._K3_root.expand(S, N, N)[mask]
        self.b_[mask] = 0.0
        self.mean_buf_[mask] = 0.0
        self.counts_[mask] = 0
        self.information_gain_[mask] = 0.0
        self.num_observations_[mask] = 0
        for h in self._arms_hist:
            h[mask] = -1
        self._reset_countdown()

    def set_targets(self, y: Tensor) -> None:
        r"""Replace the targets of every stored observation at once: :math:`b` is
        rebuilt in :math:`O(\text{steps})` and :math:`\mu = \Sigma b` recomputed
        exactly; the covariance is unchanged. Used when the composite targets of every
        past observation change (constraint multipliers of a new epoch).

        Args:
            y: ``steps x batch_shape`` targets in the order observed (entries of
                skipped or reset observations are ignored; the others finite).
        """
        steps = len(self._y_hist)
        S = self.cov_.shape[0]
        y = torch.as_tensor(y, dtype=self.K.dtype, device=self.K.device).reshape(
            steps, S
        )
        if steps == 0:
            return
        arms = torch.stack(self._arms_hist)  # steps x S
        kept = arms >= 0
        if not bool(torch.isfinite(y[kept]).all()):
            raise ValueError("`y` must be finite for every stored observation.")
        self._changed()
        y = torch.where(kept, y, torch.nan)
        self.b_.zero_()
        self.b_.scatter_add_(
            -1, arms.clamp_min(0).T, (y.nan_to_num(0.0) / self._noise).T
        )
        self._y_hist = list(y.unbind(0))
        self._recompute_mean()

    def replace_target(self, step: int, y: Tensor, seeds: Tensor | None = None) -> None:
        r"""Replace the observation made at ``step`` (0-based) by ``y`` for the masked
        seeds: an :math:`O(N)` change of :math:`b` (the covariance does not depend on
        the targets).

        Args:
            step: The observation's step, in ``[0, steps)``.
            y: ``batch_shape`` new values.
            seeds: A ``batch_shape`` bool mask (default ``None``: every seed).
        """
        if not 0 <= step < len(self._y_hist):
            raise ValueError(
                f"`step` must lie in [0, {len(self._y_hist)}), got {step}."
            )
        self._changed()
        S = self.cov_.shape[0]
        mask = self._seed_mask(seeds)
        arm = self._arms_hist[step]
        mask = mask & (arm >= 0)
        y = torch.as_tensor(y, dtype=self.K.dtype, device=self.K.device).reshape(S)
        old = self._y_hist[step]
        delta = torch.where(mask, (y - old) / self._noise, 0.0)
        safe = arm.clamp_min(0)
        self.b_.scatter_add_(-1, safe.view(S, 1), delta.view(S, 1))
        # mu = Sigma b is linear in b: add Sigma[:, i] * delta_i
        self.mean_buf_.addcmul_(
            self.cov_[self._seed_range, :, safe], delta.unsqueeze(-1)
        )
        self._y_hist[step] = torch.where(mask, y, old)
