r"""Confidence schedules: GP-UCB's :math:`\beta_t` (Srinivas et al. 2010), IGP-UCB's
:math:`\beta_t` and GP-TS's :math:`v_t` (Chowdhury & Gopalan 2017), each in its paper's
unit, and the one conversion of a unit to the multiplier of :math:`\sigma`.

References:
    Srinivas, Krause, Kakade, Seeger. Gaussian Process Optimization in the Bandit
    Setting: No Regret and Experimental Design. ICML 2010.
    Chowdhury, Gopalan. On Kernelized Multi-armed Bandits. ICML 2017.
"""

from __future__ import annotations

import math
from typing import Literal

from torch import Tensor

from botorch_bandits.validation import (
    check_count,
    check_nonnegative_values,
    check_open_unit,
    check_positive,
    check_round,
)

BetaUnit = Literal["sqrt", "linear"]
"""``"sqrt"``: the acquisition uses ``sqrt(beta) * sigma``; ``"linear"``: ``beta * sigma``."""


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

    Returns:
        :math:`\beta_t` (a float, ``"sqrt"`` unit).

    Example:
        >>> round(gp_ucb_beta_finite(t=1, num_arms=100, delta=0.1), 4)
        14.8109
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

    Returns:
        :math:`\beta_t` (a float, ``"sqrt"`` unit).

    Raises:
        ValueError: If :math:`\log(4da/\delta) \le 0` (the theorem needs it positive).
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

    Returns:
        :math:`\beta_t` (``"sqrt"`` unit): a float, or a ``batch_shape`` tensor where
        ``B`` or ``gamma_t`` is one.
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
        gamma_prev: :math:`\gamma_{t-1} \ge 0` (see :func:`resolve_gamma` for sources);
            a tensor (one value per model batch) gives a tensor.
        B: RKHS-norm bound :math:`B \ge 0` (float, or a tensor per model batch).
        R: Sub-Gaussian constant :math:`R \ge 0` (float, or a tensor per model batch).
        delta: Confidence :math:`\delta \in (0, 1)`.

    Returns:
        :math:`\beta_t` (``"linear"`` unit): a float, or a ``batch_shape`` tensor
        where any of ``gamma_prev``, ``B``, ``R`` is one.

    Example:
        >>> round(igp_ucb_beta(gamma_prev=2.0, B=1.0, R=0.1, delta=0.1), 4)
        1.3257
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

    Returns:
        :math:`v_t` (``"linear"`` unit): a float, or a ``batch_shape`` tensor where
        any of ``gamma_prev``, ``B``, ``R`` is one.
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
