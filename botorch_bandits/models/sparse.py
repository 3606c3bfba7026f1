"""The sparse model for long runs (issue 30): GP regression projected on a dictionary
of observed points (Nystroem), with the DTC posterior that BKB uses (Calandriello et
al. 2019): its variance keeps the prior's part outside the dictionary's span, so it
does not collapse far from the dictionary. With n points and m in the dictionary a
fit costs O(n m^2) and a posterior O(m^2) a point, not O(n^3) and O(n^2); with a
:class:`FeatureCache` kept across decisions, O(k m^2 + m^3 + n m) for k new points.
:func:`draw_dictionary` draws one as BKB does, by ridge leverage (:func:`ridge_leverage`)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from botorch.posteriors import GPyTorchPosterior, Posterior
from gpytorch.distributions import MultivariateNormal
from linear_operator.utils.warnings import NumericalWarning
from torch import Tensor

from botorch_bandits.validation import check_row_noise, check_single_output


def rbf(X1: Tensor, X2: Tensor, lengthscale: Tensor) -> Tensor:
    """BoTorch's standard kernel with unit prior variance, ``exp(-|x - x'|^2 / 2)`` on
    inputs divided by ``lengthscale``.

    Args:
        X1, X2: ``... x n1 x d`` and ``... x n2 x d`` inputs.
        lengthscale: ``d`` (or ``1 x d``) lengthscales.

    Returns:
        ``... x n1 x n2`` kernel matrix.
    """
    return torch.exp(-0.5 * _sq_dist(X1, X2, lengthscale))


def matern52(X1: Tensor, X2: Tensor, lengthscale: Tensor) -> Tensor:
    """The Matern-5/2 kernel with unit prior variance, ``(1 + sqrt5 r + 5 r^2 / 3)
    exp(-sqrt5 r)`` with ``r = |x - x'|`` on inputs divided by ``lengthscale`` (as
    GPyTorch's ``MaternKernel(nu=2.5)``).

    Args:
        X1, X2: ``... x n1 x d`` and ``... x n2 x d`` inputs.
        lengthscale: ``d`` (or ``1 x d``) lengthscales.

    Returns:
        ``... x n1 x n2`` kernel matrix.
    """
    r = _sq_dist(X1, X2, lengthscale).clamp_min(1e-30).sqrt()
    s5r = math.sqrt(5.0) * r
    return (1.0 + s5r + s5r.square() / 3.0) * torch.exp(-s5r)


def _sq_dist(X1: Tensor, X2: Tensor, lengthscale: Tensor) -> Tensor:
    a, b = X1 / lengthscale, X2 / lengthscale
    d2 = (a * a).sum(-1, keepdim=True) + (b * b).sum(-1).unsqueeze(-2) - 2 * a @ b.mT
    return d2.clamp_min(0.0)


#: the kernels the sparse model knows, by the names of the theory mode's kernels
KERNELS: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = {
    "rbf": rbf,
    "matern52": matern52,
}


def pinv_root(K: Tensor) -> Tensor:
    r""":math:`K^{+1/2}` of a PSD matrix (``m x m`` -> ``m x r``): the eigenvectors of
    the eigenvalues above ``max * m * eps`` (as the BKB authors' code drops them),
    each scaled by its eigenvalue's inverse root; :math:`R R^\top = K^+`.

    Args:
        K: ``m x m`` PSD matrix.

    Returns:
        ``m x r`` root :math:`R` (``r``: the eigenvalues kept).
    """
    s, V = torch.linalg.eigh(K)
    keep = s > s.max().clamp_min(0.0) * K.shape[-1] * torch.finfo(K.dtype).eps
    return V[:, keep] / s[keep].sqrt()


class NystromGP(Model):
    r"""GP regression on ``X`` (``n x d``), targets ``z`` (``n``), a constant
    ``mean`` and noise variance ``noise`` (:math:`\lambda`), with the kernel projected
    on the dictionary ``X[dictionary]``: features
    :math:`\phi(x) = K_{DD}^{+1/2} k_D(x)`, :math:`A = \Phi^\top\Phi + \lambda I`,

    .. math::
        \tilde\mu(x) = c + \phi(x)^\top A^{-1}\Phi^\top(z - c), \quad
        \tilde k(x, x') = k(x, x') - \phi(x)^\top\phi(x') + \lambda\,
        \phi(x)^\top A^{-1}\phi(x'),

    the DTC posterior (BKB's :math:`\lambda\tilde\sigma^2`); :math:`k` is ``kernel``
    (:data:`KERNELS`) times ``outputscale``. With every point in the dictionary it is
    the exact GP posterior. :math:`\Phi^\top\Phi` is summed over blocks of
    :data:`BLOCK` rows, taken from ``cache`` where it holds them. ``information_gain_`` is
    :math:`\tfrac12\log\det(I + \lambda^{-1}\Phi\Phi^\top)`, the projected kernel's
    information gain (IGP-UCB's observed :math:`\gamma`). ``row_noise`` (``n``): a
    noise variance per observation in place of :math:`\lambda` -- each row of
    :math:`\Phi` and :math:`z - c` weighted by :math:`\sqrt{\lambda/\lambda_i}`
    (generalized least squares; the cached sums are then not used).

    Args:
        X: ``n x d`` training inputs.
        z: ``n`` targets.
        lengthscale: ``d`` lengthscales.
        noise: :math:`\lambda > 0`.
        mean: The constant mean :math:`c`.
        dictionary: Long indices of the dictionary's rows of ``X`` (copied).
        kernel: A name in :data:`KERNELS`: ``"rbf"`` (default) or ``"matern52"``.
        outputscale: The kernel's output scale, finite and ``> 0`` (default 1).
        cache: A :class:`FeatureCache` kept across decisions (default ``None``: a
            fresh one).
        row_noise: ``n`` noise variances, one per observation, or ``None``.

    Example:
        >>> idx, _ = draw_dictionary(X, lengthscale=[0.2, 0.3], noise=0.01, seed=0)
        >>> gp = NystromGP(X, z, [0.2, 0.3], noise=0.01, mean=0.0, dictionary=idx)
        >>> gp.posterior(X_test).mean
    """

    _num_outputs = 1

    def __init__(
        self,
        X: Tensor,
        z: Tensor,
        lengthscale: Tensor | list[float],
        noise: float,
        mean: float,
        dictionary: Tensor,
        kernel: str = "rbf",
        outputscale: float = 1.0,
        cache: FeatureCache | None = None,
        row_noise: Tensor | None = None,
    ) -> None:
        super().__init__()
        if not noise > 0:
            raise ValueError(f"`noise` must be > 0, got noise={noise!r}.")
        if kernel not in KERNELS:
            raise ValueError(
                f"`kernel` must be one of {sorted(KERNELS)}, got kernel={kernel!r}."
            )
        if not (math.isfinite(outputscale) and outputscale > 0):
            raise ValueError(
                f"`outputscale` must be finite and > 0, got outputscale={outputscale!r}."
            )
        self.kernel_name, self.outputscale = kernel, float(outputscale)
        X = X.reshape(-1, X.shape[-1])
        self.train_inputs = (X,)
        self.lengthscale = torch.as_tensor(lengthscale, dtype=X.dtype).reshape(1, -1)
        self.noise, self.constant = float(noise), float(mean)
        self.dictionary = torch.as_tensor(dictionary, dtype=torch.long).reshape(-1)
        self.dictionary = self.dictionary.clone()  # never the caller's (or a cache's)
        self.U = X[self.dictionary]
        cache = cache if cache is not None else FeatureCache()
        self.root = cache.root(self)  # m x r
        Phi, G = cache.gram(self, X)
        self.train_features = Phi
        r = Phi.shape[-1]
        resid = z.reshape(-1, 1).to(X) - self.constant
        if row_noise is not None:  # per-row noise: rows weighted by its root ratio
            check_row_noise("row_noise", row_noise, X.shape[0])
            row_noise = row_noise.clamp_min(torch.finfo(X.dtype).tiny)
            w = (self.noise / row_noise.reshape(-1, 1).to(X)).sqrt()
            Phi, resid = w * Phi, w * resid
            G = Phi.mT @ Phi
        A = G + self.noise * torch.eye(r, dtype=X.dtype)
        self.chol = torch.linalg.cholesky(A)
        self.weights = torch.cholesky_solve(Phi.mT @ resid, self.chol).squeeze(-1)
        n = X.shape[0]
        gain = self.chol.diagonal().log().sum() - 0.5 * r * math.log(self.noise)
        self.information_gain_ = gain.reshape(1)
        self.num_observations_ = torch.tensor([n])

    @property
    def num_outputs(self) -> int:
        return 1

    @property
    def batch_shape(self) -> torch.Size:
        return torch.Size()

    def _solve(self, phi: Tensor) -> Tensor:
        r""":math:`(L^{-1}\phi^\top)^\top` for ``phi`` (``... x r``), as one
        two-dimensional solve (a batched solve would copy the factor per batch)."""
        flat = phi.reshape(-1, phi.shape[-1])
        V = torch.linalg.solve_triangular(self.chol, flat.mT, upper=False)
        return V.mT.reshape(phi.shape)

    def features(self, X: Tensor) -> Tensor:
        """:math:`\\phi(X)`.

        Args:
            X: ``... x q x d`` inputs.

        Returns:
            ``... x q x r`` features.
        """
        return self.k(X, self.U) @ self.root

    def k(self, X1: Tensor, X2: Tensor) -> Tensor:
        """The prior kernel (its output scale included).

        Args:
            X1, X2: ``... x n1 x d`` and ``... x n2 x d`` inputs.

        Returns:
            ``... x n1 x n2`` kernel matrix.
        """
        return self.outputscale * KERNELS[self.kernel_name](X1, X2, self.lengthscale)

    def posterior(
        self,
        X: Tensor,
        output_indices: list[int] | None = None,
        observation_noise: bool | Tensor = False,
        posterior_transform: PosteriorTransform | None = None,
    ) -> Posterior:
        """The joint DTC posterior at ``X``.

        Args:
            X: ``... x q x d`` points.
            output_indices: ``None`` or ``[0]`` (one output).
            observation_noise: ``True`` adds :math:`\\lambda` to the diagonal, a
                tensor (of the mean's shape) adds those variances; default ``False``.
            posterior_transform: Applied to the posterior if given.

        Returns:
            A ``GPyTorchPosterior`` with ``... x q`` mean and ``... x q x q``
            covariance (or what ``posterior_transform`` makes of it).
        """
        check_single_output("NystromGP", output_indices)
        phi = self.features(X)  # ... x q x r
        mean = self.constant + phi @ self.weights  # ... x q
        V = self._solve(phi)  # ... x q x r: rows of L^-1 phi
        cov = self.k(X, X) - phi @ phi.mT + self.noise * (V @ V.mT)
        eye = torch.eye(cov.shape[-1], dtype=cov.dtype)
        if observation_noise is True:
            cov = cov + self.noise * eye
        elif isinstance(observation_noise, Tensor):
            cov = cov + torch.diag_embed(observation_noise.reshape(mean.shape))
        post = GPyTorchPosterior(MultivariateNormal(mean, positive_definite(cov)))
        return post if posterior_transform is None else posterior_transform(post)


def positive_definite(cov: Tensor) -> Tensor:
    """``cov`` itself where every matrix factorizes (torch's ``MultivariateNormal``
    takes the Cholesky factor of a dense covariance at construction, with no
    jitter); else with the smallest jitter of ``1e-9``, ``1e-8``, ... ``1e-3`` times
    the diagonal's mean added to the matrices that do not, as GPyTorch's
    ``psd_safe_cholesky`` (and its ``NumericalWarning``). The DTC covariance of
    more points than the dictionary holds has rank about the dictionary's where the
    kernel is smooth (a long lengthscale: a constraint linear in the inputs), and
    round-off makes it indefinite.

    Args:
        cov: ``... x q x q`` symmetric covariances.

    Returns:
        ``cov``, or ``cov`` with the jitter on the diagonals that needed it (at
        ``1e-3`` still indefinite: returned so, and the distribution raises).
    """
    _, info = torch.linalg.cholesky_ex(cov)
    bad = info != 0
    if not bool(bad.any()):
        return cov
    diag = cov.diagonal(dim1=-2, dim2=-1)
    scale = diag.mean(-1).abs().clamp_min(torch.finfo(cov.dtype).tiny)
    eye = torch.eye(cov.shape[-1], dtype=cov.dtype, device=cov.device)
    jitter = 1e-9
    while True:
        fixed = cov + (bad * scale * jitter)[..., None, None] * eye
        _, info = torch.linalg.cholesky_ex(fixed)
        if not bool((info != 0).any()) or jitter >= 1e-3:
            break
        jitter *= 10.0
    warnings.warn(
        f"The sparse model's posterior covariance of {cov.shape[-1]} points was not "
        f"positive definite; added jitter {jitter:.0e} times its mean variance.",
        NumericalWarning,
        stacklevel=3,
    )
    return fixed


#: rows per block of :class:`FeatureCache` (the rows since the last full block are
#: computed at every decision), and the running sums it keeps (the last ones: a
#: change of the data before them recomputes every block)
BLOCK = 64
KEEP = 32


@dataclass
class FeatureCache:
    r"""The features of a :class:`NystromGP`'s training rows in full blocks of
    :data:`BLOCK` rows, and :math:`\Phi^\top\Phi` summed over them in order, for
    one kernel and dictionary, kept across decisions (the last key only): a new
    decision on the same rows and more computes the new blocks only. A cache, not
    state: every model computes the same blocks in the same order, with or
    without it, so a decision is the same in a process that starts without it.
    Also the last dictionary drawn (:meth:`dictionary`). Made empty
    (``FeatureCache()``); the fields are its state.

    Attributes:
        key: The kernel and dictionary the blocks are for.
        rows: The cached full blocks' rows.
        features: The blocks' features.
        sums: Running :math:`\Phi^\top\Phi` by block (``None``: no longer kept).
        draws: The last dictionary drawn, by its key.
        pinv: :func:`pinv_root` of the kernel on the dictionary.
    """

    key: tuple = ()
    rows: Tensor | None = None  # the cached full blocks' rows
    features: list[Tensor] = field(default_factory=list)
    sums: list[Tensor | None] = field(default_factory=list)  # running, by block
    draws: dict[tuple, tuple[Tensor, float]] = field(default_factory=dict)
    pinv: Tensor | None = None  # pinv_root of the kernel on the dictionary

    def _key(self, model: NystromGP) -> None:
        key = (
            model.kernel_name,
            model.outputscale,
            model.lengthscale.numpy().tobytes(),
            model.U.numpy().tobytes(),
        )
        if key != self.key:
            pinv = pinv_root(model.k(model.U, model.U))  # before the key changes
            self.key, self.pinv = key, pinv
            self.rows, self.features, self.sums = None, [], []

    def root(self, model: NystromGP) -> Tensor:
        """:func:`pinv_root` of the model's kernel on its dictionary (a copy).

        Args:
            model: The :class:`NystromGP` being built.

        Returns:
            ``m x r`` root.
        """
        self._key(model)
        return self.pinv.clone()

    def gram(self, model: NystromGP, X: Tensor) -> tuple[Tensor, Tensor]:
        r""":math:`\Phi` (``n x r``) and :math:`\Phi^\top\Phi` of ``model`` at its
        rows ``X`` (the cache changes only once both are computed).

        Args:
            model: The :class:`NystromGP` being built.
            X: Its ``n x d`` training rows.

        Returns:
            ``(Phi, G)``: ``n x r`` features and ``r x r`` :math:`\Phi^\top\Phi`.
        """
        self._key(model)
        full = X.shape[0] // BLOCK
        keep = 0  # the leading cached blocks whose rows are X's
        if self.rows is not None:
            common = min(self.rows.shape[0], full * BLOCK)
            differ = (self.rows[:common] != X[:common]).any(-1).nonzero()
            keep = (int(differ[0]) if differ.numel() else common) // BLOCK
            if keep > 0 and self.sums[keep - 1] is None:
                keep = 0  # the sum before the change is no longer kept
        features, sums = self.features[:keep], self.sums[:keep]
        for b in range(keep, full):
            phi = model.features(X[b * BLOCK : (b + 1) * BLOCK])
            gram = phi.mT @ phi
            features.append(phi)
            sums.append(gram if b == 0 else sums[b - 1] + gram)
        tail = model.features(X[full * BLOCK :])
        gram = tail.mT @ tail
        Phi = torch.cat([*features, tail])
        G = gram if full == 0 else sums[full - 1] + gram
        for b in range(max(0, full - KEEP)):
            sums[b] = None
        self.rows, self.features, self.sums = X[: full * BLOCK].clone(), features, sums
        return Phi, G

    def dictionary(self, key: tuple, draw: Callable[[], Any]) -> Any:
        """The dictionary drawn by ``draw()`` for ``key`` (the last key only).

        Args:
            key: What the draw depends on.
            draw: Called (once per new key) to draw it.

        Returns:
            What ``draw()`` returned for ``key``.
        """
        if key not in self.draws:
            self.draws = {key: draw()}
        return self.draws[key]


#: the dictionary is drawn again when the rows have grown by this factor since the
#: ones it was drawn on (BKB draws one at every step; between draws, the new rows are
#: in the model's data, not in its dictionary): chosen a priori, so that the cost of
#: the draws, O(n m^2) each, is O(m^2) a decision on average
REDRAW = 1.1


def drawn_on(n: int, start: int) -> int:
    r"""The rows a dictionary for ``n`` rows is drawn on, the first ``a``: the largest
    ``a <= n`` of ``a_0 = start``, ``a_{k+1} = max(a_k + 1, floor(REDRAW a_k))``
    (``n`` itself where ``n < start``).

    Args:
        n: The number of rows.
        start: :math:`a_0 \ge 1`.

    Returns:
        The number of leading rows to draw on.
    """
    a = start
    if n < a:
        return n
    while True:
        nxt = max(a + 1, math.floor(REDRAW * a))
        if nxt > n:
            return a
        a = nxt


def ridge_leverage(model: NystromGP, X: Tensor) -> Tensor:
    r"""The posterior variances of the model at ``X`` (``n x d``) over its noise,
    :math:`\tilde\sigma^2(x_i)` in BKB's scaling (at the model's own points, their
    ridge leverage scores, which sum to the effective dimension): BKB includes point
    ``i`` in the next dictionary with probability
    :math:`\min(\bar q\,\tilde\sigma^2(x_i), 1)`.

    Args:
        model: A :class:`NystromGP`.
        X: ``n x d`` points.

    Returns:
        ``n`` scores, ``>= 0``.
    """
    phi = model.features(X)  # n x r
    V = model._solve(phi)  # n x r
    prior = torch.full((X.shape[0],), model.outputscale, dtype=X.dtype)  # k(x, x)
    var = prior - (phi * phi).sum(-1) + model.noise * (V * V).sum(-1)
    return var.clamp_min(0.0) / model.noise


#: BKB's oversampling factor q-bar (the authors' code advises 2-10), the size of the
#: uniform pilot dictionary whose leverage scores weight the draw, and the practical
#: cap on the dictionary's expected size (chosen a priori: the cost of a decision is
#: O(n m^2) with m near it)
QBAR = 4.0
PILOT = 256
SIZE = 512


def leverage_path(model: NystromGP, X: Tensor) -> Callable[[float], Tensor]:
    r"""``tau(lam)``: the scores of :func:`ridge_leverage` at ``X`` with the
    model's features and a regularization ``lam`` in place of its noise,
    :math:`(k(x_i, x_i) - |\phi_i|^2)/\lambda + \sum_j (\phi_i^\top w_j)^2/(s_j + \lambda)`
    (:math:`s_j, w_j`: the eigenpairs of :math:`\Phi^\top\Phi`), each ``O(n r)``
    after one ``O(n r^2)`` step. At the model's noise it is ``ridge_leverage``.

    Args:
        model: A :class:`NystromGP`.
        X: ``n x d`` points (the model's own rows reuse its features).

    Returns:
        The function ``tau(lam) -> n`` scores.
    """
    same = X.shape == model.train_inputs[0].shape and bool(
        torch.equal(X, model.train_inputs[0])
    )
    phi = model.train_features if same else model.features(X)  # n x r
    s, W = torch.linalg.eigh(phi.mT @ phi)
    P2 = (phi @ W).square()  # n x r
    resid = (model.outputscale - phi.square().sum(-1)).clamp_min(0.0)

    def tau(lam: float) -> Tensor:
        return resid / lam + (P2 / (s.clamp_min(0.0) + lam)).sum(-1)

    return tau


def draw_dictionary(
    X: Tensor,
    lengthscale: Tensor | list[float],
    noise: float,
    seed: int,
    qbar: float = QBAR,
    pilot: int = PILOT,
    size: int | None = SIZE,
    kernel: str = "rbf",
    outputscale: float = 1.0,
) -> tuple[Tensor, float]:
    r"""A dictionary of rows of ``X`` drawn as BKB draws one (row ``i`` with
    probability :math:`\min(\bar q\,\tilde\sigma^2(x_i), 1)`, independently), the
    leverage scores estimated with a pilot dictionary of ``pilot`` rows drawn
    uniformly (one level of Musco & Musco's recursive leverage sampling; BKB uses the
    previous step's dictionary, which a decision rebuilt from the data does not
    have). ``size`` caps the expected size (our approximation, not BKB's): where the
    scores at ``noise`` would give more, they are taken at the smallest
    regularization ``lam > noise`` whose expected size is ``size`` (the scores fall
    as it grows; bisection on its logarithm). Row ``i``'s uniform is the ``i``-th of
    a stream seeded with ``seed`` and the pilot is drawn with ``seed`` and ``n``: a
    function of the data, the same in every process.

    Args:
        X: ``n x d`` rows.
        lengthscale: ``d`` lengthscales of the kernel.
        noise: :math:`\lambda > 0`.
        seed: The draws' seed.
        qbar: BKB's oversampling factor :math:`\bar q` (default :data:`QBAR`, 4).
        pilot: The pilot dictionary's size (default :data:`PILOT`, 256).
        size: The cap on the expected size, an integer ``>= 1``, or ``None`` for no
            cap (default :data:`SIZE`, 512).
        kernel: ``"rbf"`` (default) or ``"matern52"``.
        outputscale: The kernel's output scale (default 1).

    Returns:
        ``(rows, lam)``: the sorted row indices (never empty) and the
        regularization the scores were taken at.
    """
    if size is not None and (
        not isinstance(size, int) or isinstance(size, bool) or size < 1
    ):
        raise ValueError(
            f"`size` (the dictionary's expected size at most) must be an integer "
            f">= 1 or None (no cap), got size={size!r}."
        )
    n = X.shape[0]
    rng = np.random.default_rng([int(seed), n, 30])
    rows = np.sort(rng.permutation(n)[: min(n, pilot)])
    zeros = torch.zeros(n, dtype=X.dtype)
    model = NystromGP(
        X, zeros, lengthscale, noise, 0.0, torch.as_tensor(rows), kernel, outputscale
    )
    tau_at = leverage_path(model, X)

    def expected(lam: float) -> float:
        return float((qbar * tau_at(lam)).clamp(max=1.0).sum())

    lam = float(noise)
    if size is not None and expected(lam) > size:
        lo, hi = math.log(lam), math.log(lam)
        while expected(math.exp(hi)) > size:
            hi += math.log(10.0)
        for _ in range(40):  # the expected size is decreasing in lam
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if expected(math.exp(mid)) > size else (lo, mid)
        lam = math.exp(hi)
    tau = tau_at(lam)
    u = torch.as_tensor(np.random.default_rng([int(seed), 31]).random(n), dtype=X.dtype)
    keep = torch.nonzero(u < (qbar * tau).clamp(max=1.0)).reshape(-1)
    if keep.numel() == 0:  # every score tiny: the row the model is least sure of
        keep = tau.argmax().reshape(1)
    return keep, lam
