r"""Confidence schedules and information gain.

Every schedule here is a small pure function named after its paper and equation.
Each docstring states the **unit** of the returned value, because the papers differ:

* ``"sqrt"`` unit (Srinivas et al. 2010): the acquisition is
  :math:`\mu + \sqrt{\beta_t}\,\sigma` -- the same unit as BoTorch's
  ``UpperConfidenceBound(beta=...)``.
* ``"linear"`` unit (Chowdhury & Gopalan 2017, Verma et al. 2022): the acquisition is
  :math:`\mu + \beta_t\,\sigma` -- the value multiplies :math:`\sigma` directly.

:func:`sigma_multiplier` is the single place that converts either unit into the
factor that multiplies :math:`\sigma`; :func:`to_botorch_beta` converts into the
``beta`` argument of BoTorch's ``UpperConfidenceBound``.

Information gain (SPEC §1, Srinivas et al. 2010 §2): for points
:math:`A = (x_1, \dots, x_n)` and regularizer :math:`\lambda`,
:math:`I(y_A; f) = \tfrac12 \log\det(I + \lambda^{-1} K_A)
= \sum_t \tfrac12 \log(1 + \lambda^{-1}\sigma^2_{t-1}(x_t))`.
The maximum information gain is :math:`\gamma_n = \max_{|A| = n} I(y_A; f)`.

Where :math:`\gamma` comes from is the user's choice (:func:`resolve_gamma`):

* a number (:class:`ConstantGamma`) or a callable of the index (:class:`CallableGamma`):
  keeps a theorem's guarantee only if it upper-bounds :math:`\gamma_n` for every
  index used;
* the greedy bound (:class:`GreedyGamma`): :math:`(1 - 1/e)^{-1}` times the information
  gain of uncertainty sampling (Srinivas et al. 2010 §5.1); an upper bound on
  :math:`\gamma_n` over the candidate set, so it keeps the guarantees when the
  candidate set *is* the decision set :math:`D`;
* the data-dependent information gain of the points actually observed
  (:class:`ObservedInformationGain`, ``"observed"``): the quantity
  :math:`\tfrac12\log\det(I + \lambda^{-1}K_{t-1})` in which the self-normalized bound
  (Chowdhury & Gopalan 2017, Theorem 1) and hence their Theorem 2 are stated. It keeps
  the IGP-UCB / GP-TS guarantees (with the model's noise equal to the theory's
  :math:`\lambda = 1 + \eta`), and it is never larger than :math:`\gamma_{t-1}`. It does
  **not** keep Srinivas et al.'s Theorem 3, whose proof needs :math:`\gamma_t` itself;
* the growth orders of Srinivas et al. 2010, Theorem 5 (:func:`gamma_growth_order`,
  :class:`GammaOrder`): orders only, the constants are unknown, so no guarantee unless
  the constant you supply makes them an upper bound.

References:
    Srinivas, Krause, Kakade, Seeger. Gaussian Process Optimization in the Bandit
    Setting: No Regret and Experimental Design. ICML 2010
    (``papers/004_3d781d3cdb5f1a76.txt``).
    Chowdhury, Gopalan. On Kernelized Multi-armed Bandits. ICML 2017
    (``papers/000_f7ea69f20c9ee7c4.txt``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import torch
from torch import Tensor

from botorch_bandits.validation import (
    check_count,
    check_nonnegative,
    check_nonnegative_values,
    check_open_unit,
    check_positive,
    check_round,
    check_tensor,
)

BetaUnit = Literal["sqrt", "linear"]
"""``"sqrt"``: the acquisition uses ``sqrt(beta) * sigma``; ``"linear"``: ``beta * sigma``."""

GREEDY_FACTOR = 1.0 / (1.0 - math.exp(-1.0))
r"""The :math:`(1 - 1/e)^{-1}` factor of the greedy bound (Srinivas et al. 2010 §5.1)."""


# --------------------------------------------------------------------------------------
# Units
# --------------------------------------------------------------------------------------
def sigma_multiplier(beta: float | Tensor, unit: BetaUnit) -> float | Tensor:
    r"""The factor that multiplies :math:`\sigma` in an upper confidence bound.

    This is the one place where paper units are converted (DESIGN convention 3).

    Args:
        beta: A confidence parameter in ``unit``.
        unit: ``"sqrt"`` (Srinivas et al. 2010: :math:`\mu + \sqrt{\beta}\sigma`) or
            ``"linear"`` (Chowdhury & Gopalan 2017: :math:`\mu + \beta\sigma`).

    Returns:
        :math:`\sqrt{\beta}` for ``"sqrt"``, :math:`\beta` for ``"linear"``.
    """
    if unit not in ("sqrt", "linear"):
        raise ValueError(f"`unit` must be 'sqrt' or 'linear', got unit={unit!r}.")
    check_nonnegative_values("beta", beta)  # a negative beta has no square root
    return beta**0.5 if unit == "sqrt" else beta


def to_botorch_beta(beta: float | Tensor, unit: BetaUnit) -> float | Tensor:
    r"""Convert a paper's :math:`\beta_t` to the ``beta`` of BoTorch's
    ``UpperConfidenceBound`` (which computes :math:`\mu + \sqrt{\beta}\sigma`).

    Args:
        beta: A confidence parameter in ``unit``.
        unit: ``"sqrt"`` or ``"linear"`` (see :func:`sigma_multiplier`).

    Returns:
        The value ``b`` with ``sqrt(b) == sigma_multiplier(beta, unit)``.
    """
    return sigma_multiplier(beta, unit) ** 2


# --------------------------------------------------------------------------------------
# GP-UCB (Srinivas et al. 2010)
# --------------------------------------------------------------------------------------
def gp_ucb_beta_finite(t: int, num_arms: int, delta: float) -> float:
    r"""GP-UCB :math:`\beta_t` for a finite decision set (Srinivas et al. 2010, Thm 1).

    :math:`\beta_t = 2\log(|D|\,t^2\pi^2 / (6\delta))`.

    Unit: ``"sqrt"`` -- the acquisition is :math:`\mu_{t-1} + \sqrt{\beta_t}\sigma_{t-1}`.

    Args:
        t: Round index :math:`t \ge 1` (``t - 1`` observations so far).
        num_arms: :math:`|D| \ge 1`.
        delta: Confidence :math:`\delta \in (0, 1)`.
    """
    check_round("t", t)
    check_count("num_arms", num_arms, minimum=1)
    check_open_unit("delta", delta)
    return 2.0 * math.log(num_arms * t**2 * math.pi**2 / (6.0 * delta))


def gp_ucb_beta_compact(
    t: int, dim: int, a: float, b: float, r: float, delta: float
) -> float:
    r"""GP-UCB :math:`\beta_t` for compact convex :math:`D \subset [0, r]^d`
    (Srinivas et al. 2010, Thm 2).

    :math:`\beta_t = 2\log(2t^2\pi^2/(3\delta))
    + 2d\log\big(t^2 d\, b\, r \sqrt{\log(4da/\delta)}\big)`,
    where :math:`a, b` bound the sample-path derivatives:
    :math:`\Pr\{\sup_x |\partial f/\partial x_j| > L\} \le a e^{-(L/b)^2}`.

    Unit: ``"sqrt"``.

    Args:
        t: Round index :math:`t \ge 1`.
        dim: Dimension :math:`d \ge 1`.
        a: Derivative-tail constant :math:`a > 0`.
        b: Derivative-tail constant :math:`b > 0`.
        r: Side length :math:`r > 0` of the box :math:`[0, r]^d`.
        delta: Confidence :math:`\delta \in (0, 1)`.
    """
    check_round("t", t)
    check_count("dim", dim, minimum=1)
    check_positive("a", a)
    check_positive("b", b)
    check_positive("r", r)
    check_open_unit("delta", delta)
    inner_log = math.log(4.0 * dim * a / delta)
    if inner_log <= 0.0:
        raise ValueError(
            "Theorem 2 of Srinivas et al. needs log(4*dim*a/delta) > 0, got "
            f"dim={dim}, a={a}, delta={delta} (log = {inner_log:.4g})."
        )
    return 2.0 * math.log(
        2.0 * t**2 * math.pi**2 / (3.0 * delta)
    ) + 2.0 * dim * math.log(t**2 * dim * b * r * math.sqrt(inner_log))


def gp_ucb_beta_rkhs(
    t: int, B: float | Tensor, gamma_t: float | Tensor, delta: float
) -> float | Tensor:
    r"""GP-UCB :math:`\beta_t` for :math:`f` in the RKHS (Srinivas et al. 2010, Thm 3).

    :math:`\beta_t = 2B + 300\,\gamma_t \log^3(t/\delta)` with
    :math:`\|f\|_k^2 \le B` (note: ``B`` bounds the **squared** RKHS norm, as in the
    paper) and :math:`\gamma_t` the maximum information gain of ``t`` points.
    Chowdhury & Gopalan 2017 (§3.1) quote the same rule as the multiplier
    :math:`\sqrt{2B'^2 + 300\gamma_{t-1}\ln^3(t/\delta)}` with :math:`\|f\|_k \le B'`;
    pass ``B = B'**2`` and ``gamma_t = gamma_{t-1}`` to get their form.

    Unit: ``"sqrt"``.

    Args:
        t: Round index :math:`t \ge 1`.
        B: Bound on the squared RKHS norm, :math:`B \ge 0` (a tensor: one per model
            batch, e.g. per seed).
        gamma_t: Maximum information gain (or an upper bound), :math:`\ge 0`.
        delta: Confidence :math:`\delta \in (0, 1)`.
    """
    check_round("t", t)
    check_nonnegative_values("B", B)
    check_nonnegative_values("gamma_t", gamma_t)
    check_open_unit("delta", delta)
    return 2.0 * B + 300.0 * gamma_t * math.log(t / delta) ** 3


# --------------------------------------------------------------------------------------
# IGP-UCB and GP-TS (Chowdhury & Gopalan 2017)
# --------------------------------------------------------------------------------------
def igp_ucb_beta(
    gamma_prev: float | Tensor, B: float | Tensor, R: float | Tensor, delta: float
) -> float | Tensor:
    r"""IGP-UCB :math:`\beta_t` (Chowdhury & Gopalan 2017, Algorithm 1).

    :math:`\beta_t = B + R\sqrt{2(\gamma_{t-1} + 1 + \ln(1/\delta))}` with
    :math:`\|f\|_k \le B` (the RKHS norm itself) and :math:`R`-sub-Gaussian noise.
    Theory uses :math:`\lambda = 1 + \eta`, :math:`\eta = 2/T` (their Theorem 2).

    Unit: ``"linear"`` -- the acquisition is :math:`\mu_{t-1} + \beta_t\sigma_{t-1}`.

    Args:
        gamma_prev: :math:`\gamma_{t-1} \ge 0` (see the module docstring for sources);
            a tensor (one value per model batch) gives a tensor.
        B: RKHS-norm bound :math:`B \ge 0` (float, or a tensor per model batch).
        R: Sub-Gaussian constant :math:`R \ge 0` (float, or a tensor per model batch).
        delta: Confidence :math:`\delta \in (0, 1)`.
    """
    return _self_normalized_width(gamma_prev, B, R, delta, confidence_split=1.0)


def gp_ts_scale(
    gamma_prev: float | Tensor, B: float | Tensor, R: float | Tensor, delta: float
) -> float | Tensor:
    r"""GP-TS posterior scale :math:`v_t` (Chowdhury & Gopalan 2017, Algorithm 2).

    :math:`v_t = B + R\sqrt{2(\gamma_{t-1} + 1 + \ln(2/\delta))}`; GP-TS draws
    :math:`f_t \sim GP(\mu_{t-1}, v_t^2 k_{t-1})`.

    Unit: ``"linear"`` -- :math:`v_t` multiplies the posterior standard deviation.

    Args:
        gamma_prev: :math:`\gamma_{t-1} \ge 0` (float, or a tensor per model batch).
        B: RKHS-norm bound :math:`B \ge 0` (float, or a tensor per model batch).
        R: Sub-Gaussian constant :math:`R \ge 0` (float, or a tensor per model batch).
        delta: Confidence :math:`\delta \in (0, 1)`.
    """
    return _self_normalized_width(gamma_prev, B, R, delta, confidence_split=2.0)


def _self_normalized_width(
    gamma_prev: float | Tensor,
    B: float | Tensor,
    R: float | Tensor,
    delta: float,
    confidence_split: float,
) -> float | Tensor:
    r""":math:`B + R\sqrt{2(\gamma_{t-1} + 1 + \ln(c/\delta))}`, the width of
    Chowdhury & Gopalan's Theorem 2 (``c = 1``) and of GP-TS's split confidence
    (``c = 2``), with the arguments validated. A tensor ``gamma_prev`` (one value per
    model batch) gives a tensor of widths."""
    gamma_prev = check_nonnegative_values("gamma_prev", gamma_prev)
    check_nonnegative_values("B", B)
    check_nonnegative_values("R", R)
    check_open_unit("delta", delta)
    return (
        B + R * (2.0 * (gamma_prev + 1.0 + math.log(confidence_split / delta))) ** 0.5
    )


# --------------------------------------------------------------------------------------
# Information gain
# --------------------------------------------------------------------------------------
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


KernelName = Literal["linear", "rbf", "matern"]


def gamma_growth_order(
    kernel: KernelName, T: int | Tensor, dim: int, nu: float | None = None
) -> float | Tensor:
    r"""Growth **order** of :math:`\gamma_T` (Srinivas et al. 2010, Theorem 5).

    Returns the expression inside the :math:`O(\cdot)` with constant 1:

    * ``"linear"``: :math:`d \log T`;
    * ``"rbf"`` (squared exponential): :math:`(\log T)^{d+1}`;
    * ``"matern"`` (:math:`\nu > 1`): :math:`T^{d(d+1)/(2\nu + d(d+1))}\log T`.

    These are orders, **not** bounds: the hidden constants (which depend on the
    lengthscale, the domain and :math:`\lambda`) are unknown. Use :class:`GammaOrder`
    with an explicit ``scale`` if you want to plug an order into a schedule.

    Unit: nats, up to the unknown constant.
    """
    check_count("dim", dim, minimum=1)
    T_t = torch.as_tensor(T, dtype=torch.double)
    if torch.any(T_t < 1):
        raise ValueError(f"`T` must be >= 1, got T={T!r}.")
    logT = torch.log(T_t)
    if kernel == "linear":
        out = dim * logT
    elif kernel == "rbf":
        out = logT ** (dim + 1)
    elif kernel == "matern":
        if nu is None or not nu > 1.0:
            raise ValueError(
                f"`nu` must be > 1 for the Matérn order (Theorem 5), got nu={nu!r}."
            )
        expo = dim * (dim + 1) / (2.0 * nu + dim * (dim + 1))
        out = T_t**expo * logT
    else:
        raise ValueError(
            f"`kernel` must be one of 'linear', 'rbf', 'matern', got kernel={kernel!r}."
        )
    return out if isinstance(T, Tensor) else float(out)


# --------------------------------------------------------------------------------------
# Sources of gamma
# --------------------------------------------------------------------------------------
@runtime_checkable
class GammaSource(Protocol):
    r"""Where :math:`\gamma_n` comes from: ``source(n, model) -> float`` (nats).

    ``n`` is the number of points (IGP-UCB and GP-TS at round ``t`` ask for
    :math:`\gamma_{t-1}`, GP-UCB's Theorem 3 asks for :math:`\gamma_t`); ``model`` is
    the model the acquisition function was built on.
    """

    def __call__(self, n: int, model: Any = None) -> float | Tensor: ...


class ConstantGamma:
    r"""A fixed :math:`\gamma` for every index. Keeps a guarantee only if it
    upper-bounds :math:`\gamma_n` for every ``n`` used (e.g. ``n <= T - 1``).

    Args:
        value: :math:`\gamma \ge 0` in nats.
    """

    def __init__(self, value: float) -> None:
        self.value = check_nonnegative("gamma", value)

    def __call__(self, n: int, model: Any = None) -> float:
        return self.value

    def __repr__(self) -> str:
        return f"ConstantGamma(value={self.value!r})"


class CallableGamma:
    r"""A user function of the index: ``fn(n) -> gamma_n`` (nats). Keeps a guarantee
    only if ``fn(n)`` upper-bounds :math:`\gamma_n`.

    Args:
        fn: Callable taking the number of points ``n`` and returning
            :math:`\gamma_n \ge 0`.
    """

    def __init__(self, fn: Callable[[int], float]) -> None:
        if not callable(fn):
            raise TypeError(f"`fn` must be callable, got {type(fn).__name__}.")
        self.fn = fn

    def __call__(self, n: int, model: Any = None) -> float:
        value = float(self.fn(n))
        if not value >= 0.0:
            raise ValueError(f"gamma callable returned {value!r} for n={n}; need >= 0.")
        return value

    def __repr__(self) -> str:
        return f"CallableGamma(fn={self.fn!r})"


class GammaOrder:
    r""":math:`\gamma_n \approx` ``scale`` :math:`\times` the Theorem 5 order of
    Srinivas et al. 2010 (see :func:`gamma_growth_order`). ``scale`` is *your*
    constant: no guarantee follows unless it makes the order an upper bound.
    :math:`\gamma_0 = 0`; for ``n = 1`` the order is evaluated at ``n = 2`` (its
    logarithm vanishes at 1) -- a documented convention, not part of the theorem.

    Args:
        kernel: ``"linear"``, ``"rbf"`` or ``"matern"``.
        dim: Input dimension ``d``.
        nu: Matérn smoothness (``> 1``); only for ``"matern"``.
        scale: Multiplicative constant, ``> 0`` (default 1).
    """

    def __init__(
        self,
        kernel: KernelName,
        dim: int,
        nu: float | None = None,
        scale: float = 1.0,
    ) -> None:
        gamma_growth_order(kernel, 2, dim, nu)  # validates the arguments
        self.kernel = kernel
        self.dim = dim
        self.nu = nu
        self.scale = check_positive("scale", scale)

    def __call__(self, n: int, model: Any = None) -> float:
        if n <= 0:
            return 0.0
        return self.scale * float(
            gamma_growth_order(self.kernel, max(n, 2), self.dim, self.nu)
        )

    def __repr__(self) -> str:
        return (
            f"GammaOrder(kernel={self.kernel!r}, dim={self.dim}, nu={self.nu!r}, "
            f"scale={self.scale!r})"
        )


class GreedyGamma:
    r"""Greedy upper bound :math:`(1 - 1/e)^{-1} I(y_{A_n}; f)` on :math:`\gamma_n`
    over a candidate set (Srinivas et al. 2010, §5.1); see
    :func:`greedy_information_gain`. Computed once, lazily, for ``n <= horizon``
    (it does not depend on any observation). Keeps the guarantees when the
    candidate set is the decision set.

    Args:
        K: ``N x N`` prior kernel matrix of the candidate set (e.g.
            ``kernel(candidates).to_dense()``).
        noise: :math:`\lambda > 0`.
        horizon: Largest ``n`` that will be asked for.
    """

    def __init__(self, K: Tensor, noise: float, horizon: int) -> None:
        if K.ndim != 2:
            raise ValueError(f"`K` must be N x N, got shape {tuple(K.shape)}.")
        self.K = check_tensor("K", K, min_ndim=2, square=True)
        self.noise = check_positive("noise", noise)
        self.horizon = check_count("horizon", horizon, minimum=1)
        self.gammas_: Tensor | None = None

    def fit(self) -> GreedyGamma:
        """Run the greedy pass (idempotent)."""
        if self.gammas_ is None:
            self.gammas_ = greedy_information_gain(
                self.K.detach(), self.noise, self.horizon
            ).gamma
        return self

    def __call__(self, n: int, model: Any = None) -> float:
        if n <= 0:
            return 0.0
        if n > self.horizon:
            raise ValueError(
                f"GreedyGamma was built for horizon={self.horizon}, asked for "
                f"gamma_{n}; build it with a larger `horizon`."
            )
        return float(self.fit().gammas_[n - 1])

    def __repr__(self) -> str:
        return f"GreedyGamma(N={self.K.shape[-1]}, noise={self.noise!r}, horizon={self.horizon})"


class ObservedInformationGain:
    r"""The information gain of the points the model was actually trained on,
    :math:`\tfrac12\log\det(I + \lambda^{-1}K_n)`, with :math:`K_n` the model's prior
    kernel matrix of its (transformed) training inputs and :math:`\lambda` its
    likelihood noise (per point for fixed-noise likelihoods).

    This is the data-dependent quantity of Chowdhury & Gopalan 2017, Theorem 1: it
    keeps the IGP-UCB and GP-TS guarantees. It can only answer for
    ``n`` = the number of training points (asking for :math:`\gamma_t` of points not
    yet chosen, as Srinivas et al.'s Theorem 3 does, raises an error).
    Batched models (e.g. one batch per seed) give one value per batch, returned as a
    ``batch_shape`` tensor, so that every batch gets its own :math:`\beta_t` and
    independent seeds stay independent; an unbatched model gives a float.

    Models with several independent outputs (a multi-output ``SingleTaskGP``, a
    ``ModelListGP``) give the sum of the per-output gains: the information of all
    observations about all outputs, an upper bound (data-processing inequality) on
    the information about any objective scalarized from them. (The theorems are
    stated for one observed function; with several outputs this is the conservative
    reading: a larger :math:`\gamma` only widens the confidence width.)
    """

    def __call__(self, n: int, model: Any = None) -> float | Tensor:
        gain = observed_information_gain(model, n)
        return float(gain) if gain.ndim == 0 else gain

    def __repr__(self) -> str:
        return "ObservedInformationGain()"


def observed_information_gain(model: Any, n: int | None = None) -> Tensor:
    r"""``batch_shape`` tensor of :math:`\tfrac12\log\det(I + \lambda^{-1}K_n)` for the
    training inputs of an exact GP ``model`` (e.g. ``SingleTaskGP``).

    Args:
        model: A GPyTorch ``ExactGP``-based BoTorch model with ``covar_module`` and a
            Gaussian likelihood.
        n: If given, the number of points expected (checked against the model).
    """
    from botorch.sampling.pathwise.utils import get_train_inputs

    tracked = getattr(model, "information_gain_", None)
    if isinstance(tracked, Tensor):  # FiniteArmGP keeps it up to date
        counts = model.num_observations_
        if n is not None and bool(torch.any(counts != n)):
            raise ValueError(
                f"gamma='observed' can only give the information gain of the "
                f"{counts.tolist()} observed points, but gamma_{n} was asked for."
            )
        return tracked if model.batch_shape else tracked.squeeze(0)
    from botorch.models.model import ModelList

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


def resolve_gamma(gamma: Any) -> GammaSource:
    r"""Turn a user's ``gamma`` argument into a :class:`GammaSource`.

    Accepts a number (constant), ``"observed"`` (:class:`ObservedInformationGain`),
    any :class:`GammaSource` instance, or a callable ``fn(n) -> float``.
    """
    if isinstance(gamma, bool):
        raise TypeError(
            "`gamma` must be a number, 'observed', or a callable, got a bool."
        )
    if isinstance(gamma, (int, float)):
        return ConstantGamma(gamma)
    if isinstance(gamma, Tensor) and gamma.numel() == 1:
        return ConstantGamma(float(gamma))
    if isinstance(gamma, str):
        if gamma == "observed":
            return ObservedInformationGain()
        raise ValueError(
            f"`gamma` as a string must be 'observed', got gamma={gamma!r}."
        )
    if isinstance(
        gamma,
        (
            ConstantGamma,
            CallableGamma,
            GammaOrder,
            GreedyGamma,
            ObservedInformationGain,
        ),
    ):
        return gamma
    if callable(gamma):
        return CallableGamma(gamma)
    raise TypeError(
        "`gamma` must be a number, 'observed', a GammaSource, or a callable n -> "
        f"gamma_n; got {type(gamma).__name__}."
    )
