r"""Long-term constraints (Shi & Eryilmaz, AISTATS 2022): penalty functions, multiplier
updates over epochs (kept in log space, capped, warned), their replay from the
constraint history, and the composite targets the inner bandit algorithm sees. The
algorithms are written out in ``docs/algorithms.md``.

Reference:
    Shi, Eryilmaz. Bayesian Optimization with Long-Term Constraints (GP-UCB with
    Noiseless / Noisy Constraints). AISTATS 2022. Algorithms 2 and 3, Assumption 2.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Literal

import torch
from torch import Tensor

__all__ = [
    "CallablePenalty",
    "ExponentialPenalty",
    "MultiplierCapWarning",
    "Penalty",
    "PolynomialPenalty",
    "additive_update",
    "check_penalty",
    "composite_targets",
    "epoch_schedule",
    "multiplicative_update",
    "replay_multipliers",
]

UpdateRule = Literal["multiplicative", "additive"]

DEFAULT_MAX_LOG_MULTIPLIER = 50.0


class MultiplierCapWarning(RuntimeWarning):
    """The multiplicative update hit the cap on log(kappa)."""


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"`{name}` must be finite and > 0, got {name}={value!r}.")
    return value


class Penalty:
    r"""A penalty function :math:`\psi` with :math:`\psi(x) = 1` for :math:`x \le 0`
    (Shi & Eryilmaz, Assumption 2). Subclasses give :math:`\log\psi` on :math:`x \ge 0`,
    which the multiplicative update uses in log space."""

    def log(self, x: Tensor) -> Tensor:  # pragma: no cover - abstract
        r""":math:`\log\psi(x)`.

        Args:
            x: Constraint values, any shape.

        Returns:
            :math:`\log\psi(x)`, the shape of ``x`` (0 where :math:`x \le 0`).
        """
        raise NotImplementedError

    def __call__(self, x: Tensor | float) -> Tensor:
        r""":math:`\psi(x) = \exp(\log\psi(x))`.

        Args:
            x: Constraint values: a tensor, or a number (as a double tensor).

        Returns:
            :math:`\psi(x)`, the shape of ``x``.
        """
        x = torch.as_tensor(x, dtype=torch.double) if not isinstance(x, Tensor) else x
        return torch.exp(self.log(x))


class ExponentialPenalty(Penalty):
    r""":math:`\psi(x) = e^{cx}` for :math:`x \ge 0`, 1 otherwise (eq. 10), :math:`c > 0`.

    Args:
        c: The rate :math:`c > 0`, finite (default 1).

    Example:
        >>> ExponentialPenalty(c=2.0)(torch.tensor([-1.0, 0.5]))
        tensor([1.0000, 2.7183])
    """

    def __init__(self, c: float = 1.0) -> None:
        self.c = _positive("c", c)

    def log(self, x: Tensor) -> Tensor:
        r""":math:`c \max(x, 0)`.

        Args:
            x: Constraint values, any shape.

        Returns:
            :math:`\log\psi(x)`, the shape of ``x``.
        """
        return self.c * x.clamp_min(0.0)

    def __repr__(self) -> str:
        return f"ExponentialPenalty(c={self.c!r})"


class PolynomialPenalty(Penalty):
    r""":math:`\psi(x) = (cx + 1)^n` for :math:`x \ge 0`, 1 otherwise (eq. 9),
    :math:`c > 0`, :math:`n \ge 1`.

    Args:
        c: The scale :math:`c > 0`, finite (default 1).
        n: The power :math:`n \ge 1` (default 2; need not be an integer).
    """

    def __init__(self, c: float = 1.0, n: float = 2.0) -> None:
        self.c = _positive("c", c)
        n = float(n)
        if not n >= 1:
            raise ValueError(f"`n` must be >= 1, got n={n!r}.")
        self.n = n

    def log(self, x: Tensor) -> Tensor:
        r""":math:`n \log(1 + c\max(x, 0))`.

        Args:
            x: Constraint values, any shape.

        Returns:
            :math:`\log\psi(x)`, the shape of ``x``.
        """
        return self.n * torch.log1p(self.c * x.clamp_min(0.0))

    def __repr__(self) -> str:
        return f"PolynomialPenalty(c={self.c!r}, n={self.n!r})"


class CallablePenalty(Penalty):
    r"""A user-supplied :math:`\psi` (a function of a tensor), checked for Assumption 2
    on a grid of ``domain`` (the range of the constraint values) when built; see
    :func:`check_penalty`.

    Args:
        fn: :math:`\psi`, mapping a double tensor to positive values of its shape.
        domain: ``(lo, hi)`` with ``lo < 0 < hi``, the grid's range (default
            ``(-2.0, 2.0)``).
        num: The number of grid points (default 201).

    Raises:
        ValueError: If ``fn`` is not callable or fails :func:`check_penalty`.
    """

    def __init__(
        self,
        fn: Callable[[Tensor], Tensor],
        domain: tuple[float, float] = (-2.0, 2.0),
        num: int = 201,
    ) -> None:
        if not callable(fn):
            raise ValueError(f"`fn` must be callable, got {fn!r}.")
        self.fn = fn
        self.domain = domain
        check_penalty(fn, domain, num)

    def __call__(self, x: Tensor | float) -> Tensor:
        r""":math:`\psi(x)` = ``fn(x)``.

        Args:
            x: Constraint values: a tensor, or a number (as a double tensor).

        Returns:
            ``fn(x)``.
        """
        x = torch.as_tensor(x, dtype=torch.double) if not isinstance(x, Tensor) else x
        return self.fn(x)

    def log(self, x: Tensor) -> Tensor:
        r""":math:`\log` ``fn(x)``.

        Args:
            x: Constraint values, any shape.

        Returns:
            :math:`\log\psi(x)`, the shape of ``x``.
        """
        return torch.log(self.fn(x))


def check_penalty(
    psi: Callable[[Tensor], Tensor],
    domain: tuple[float, float] = (-2.0, 2.0),
    num: int = 201,
    tol: float = 1e-9,
) -> None:
    r"""Check Assumption 2 of Shi & Eryilmaz on a grid of ``num`` points of ``domain``:
    (1) :math:`\psi(x) = 1` for :math:`x \le 0`, strictly increasing for :math:`x \ge 0`,
    convex; (2) :math:`\psi(x)\psi(y) \ge \psi(x + y)` for grid points with
    :math:`x + y` in the domain. A grid check cannot prove the properties; it
    catches violations.

    Args:
        psi: The penalty function, called on double tensors.
        domain: ``(lo, hi)`` with ``lo < 0 < hi`` (default ``(-2.0, 2.0)``); 0 is
            added to the grid.
        num: The number of grid points (default 201).
        tol: Tolerance of the checks (default ``1e-9``; relative for (2)).

    Raises:
        ValueError: Naming the failed property and a witness point.
    """
    lo, hi = float(domain[0]), float(domain[1])
    if not (lo < 0 < hi):
        raise ValueError(f"`domain` must contain 0 in its interior, got {domain!r}.")
    x = torch.linspace(lo, hi, num, dtype=torch.double)
    x = torch.cat([x, torch.zeros(1, dtype=torch.double)]).unique()
    v = torch.as_tensor(psi(x), dtype=torch.double)
    if v.shape != x.shape or not bool(torch.isfinite(v).all()):
        raise ValueError("`psi` must map a tensor to finite values of the same shape.")
    neg = x <= 0
    if not torch.allclose(v[neg], torch.ones_like(v[neg]), atol=tol, rtol=0):
        bad = x[neg][(v[neg] - 1).abs().argmax()]
        raise ValueError(
            f"`psi` violates Assumption 2(1): psi(x) must be 1 for x <= 0, got "
            f"psi({float(bad):.4g}) = {float(psi(bad.reshape(1))[0]):.6g}."
        )
    pos = v[~neg | (x == 0)]
    steps = pos[1:] - pos[:-1]
    if not bool((steps > 0).all()):
        i = int((steps <= 0).nonzero()[0])
        xp = x[~neg | (x == 0)]
        raise ValueError(
            "`psi` violates Assumption 2(1): it must be strictly increasing for x >= 0, "
            f"but psi({float(xp[i]):.4g}) >= psi({float(xp[i + 1]):.4g})."
        )
    second = v[2:] - 2 * v[1:-1] + v[:-2]  # grid is uniform except for the inserted 0
    dx = x[1:] - x[:-1]
    uniform = (dx[1:] - dx[:-1]).abs() < 1e-12
    if bool((second[uniform] < -tol).any()):
        i = int(((second < -tol) & uniform).nonzero()[0]) + 1
        raise ValueError(
            f"`psi` violates Assumption 2(1): it must be convex; the second difference "
            f"at x = {float(x[i]):.4g} is {float(second[i]):.3g} < 0."
        )
    X, Y = torch.meshgrid(x, x, indexing="ij")
    inside = ((X + Y) >= lo) & ((X + Y) <= hi)
    lhs = torch.as_tensor(psi(X[inside]), dtype=torch.double) * torch.as_tensor(
        psi(Y[inside]), dtype=torch.double
    )
    rhs = torch.as_tensor(psi((X + Y)[inside]), dtype=torch.double)
    gap = lhs - rhs
    if bool((gap < -tol * rhs.abs().clamp_min(1)).any()):
        i = int(gap.argmin())
        raise ValueError(
            "`psi` violates Assumption 2(2): psi(x) psi(y) >= psi(x + y) fails at "
            f"x = {float(X[inside][i]):.4g}, y = {float(Y[inside][i]):.4g} "
            f"({float(lhs[i]):.6g} < {float(rhs[i]):.6g})."
        )


# --------------------------------------------------------------------------------------
# multiplier updates
# --------------------------------------------------------------------------------------
def multiplicative_update(
    log_kappa: Tensor,
    g_mean: Tensor,
    penalty: Penalty,
    max_log_multiplier: float = DEFAULT_MAX_LOG_MULTIPLIER,
) -> Tensor:
    r"""Algorithm 2, step 4, in log space:
    :math:`\log\kappa^{l+1} = \log\kappa^l + \log\psi(\bar g^l)`, capped at
    ``max_log_multiplier`` (a ``MultiplierCapWarning`` when the cap acts).

    Args:
        log_kappa: ``m`` (or ``batch x m``) log multipliers of epoch ``l``.
        g_mean: Epoch averages :math:`\bar g^l` of the constraint values, same shape.
        penalty: :math:`\psi`.
        max_log_multiplier: Cap on :math:`\log\kappa` (``> 0``; default 50).

    Returns:
        :math:`\log\kappa^{l+1}`, the shape of ``log_kappa``.
    """
    _positive("max_log_multiplier", max_log_multiplier)
    new = log_kappa + penalty.log(g_mean)
    if bool((new > max_log_multiplier).any()):
        warnings.warn(
            f"log(kappa) reached {float(new.max()):.4g} > max_log_multiplier="
            f"{max_log_multiplier}; the multiplier is capped at exp({max_log_multiplier}) "
            "(the exponential update overflows otherwise). The update is exponential "
            "in the epochs' mean constraint values, read in the constraint's own "
            "units: in units where violations are large it caps within a few "
            "epochs; rescale the constraint or lower the penalty's c (the Ax "
            "strategy's practical mode measures constraints in their observed "
            "spread).",
            MultiplierCapWarning,
            stacklevel=2,
        )
        new = new.clamp_max(max_log_multiplier)
    return new


def additive_update(
    kappa: Tensor, g_mean: Tensor, step: float, slack: float = 0.0
) -> Tensor:
    r"""Algorithm 3: :math:`\kappa^{l+1} = [\kappa^l + \mu\,\bar g^l]^+` with step
    :math:`\mu` = ``step`` (``> 0``; the paper takes :math:`\mu = O(1/\sqrt L)`).
    ``slack`` :math:`\epsilon \ge 0` (not the paper's; 0 there): the update
    :math:`[\kappa^l + \mu(\bar g^l + \epsilon)]^+` of the primal-dual methods
    with slack (Xu et al.'s PDCBO; Zhou & Ji 2022), which aims the average
    constraint at :math:`-\epsilon` so that it stays :math:`\le 0` in a finite run.

    Args:
        kappa: ``m`` (or ``batch x m``) multipliers of epoch ``l``.
        g_mean: Epoch averages :math:`\bar g^l` of the constraint values, same shape.
        step: The step :math:`\mu > 0`.
        slack: The slack :math:`\epsilon` (default 0, the paper's update).

    Returns:
        :math:`\kappa^{l+1}`, the shape of ``kappa``, clamped at 0.
    """
    _positive("step", step)
    return (kappa + step * (g_mean + slack)).clamp_min(0.0)


def replay_multipliers(
    g_values: Tensor,
    epoch_length: int,
    rule: UpdateRule = "multiplicative",
    penalty: Penalty | None = None,
    step: float | None = None,
    max_log_multiplier: float = DEFAULT_MAX_LOG_MULTIPLIER,
    slack: float = 0.0,
    initial: float | None = None,
) -> Tensor:
    r"""The multipliers of every epoch, replayed from the constraint values alone.

    Args:
        g_values: ``n x m`` constraint values in the order observed (exact for
            Algorithm 2, noisy observations for Algorithm 3); a trailing partial epoch
            does not update the multipliers.
        epoch_length: :math:`S \ge 1`.
        rule: ``"multiplicative"`` (Algorithm 2, :math:`\kappa^1 = 1`) or
            ``"additive"`` (Algorithm 3, :math:`\kappa^1 = 0`).
        penalty: :math:`\psi` for the multiplicative rule.
        step: :math:`\mu` for the additive rule.
        max_log_multiplier: Cap of the multiplicative rule's :math:`\log\kappa`
            (default 50).
        slack: The additive rule's :math:`\epsilon \ge 0` (:func:`additive_update`).
        initial: The additive rule's :math:`\kappa^1 \ge 0` (``None``: the paper's
            0; the multiplicative rule's is always 1).

    Returns:
        ``(E + 1) x m`` multipliers :math:`\kappa^1, ..., \kappa^{E+1}` for the
        :math:`E = \lfloor n / S \rfloor` completed epochs; the last row is the current
        epoch's.
    """
    if isinstance(epoch_length, bool) or not isinstance(epoch_length, int):
        raise ValueError(
            f"`epoch_length` must be an integer >= 1, got {epoch_length!r}."
        )
    if epoch_length < 1:
        raise ValueError(
            f"`epoch_length` must be an integer >= 1, got {epoch_length!r}."
        )
    if g_values.ndim != 2:
        raise ValueError(
            f"`g_values` must be n x m, got shape {tuple(g_values.shape)}."
        )
    if not bool(torch.isfinite(g_values).all()):
        raise ValueError("`g_values` must be finite (every constraint value is used).")
    n, m = g_values.shape
    epochs = n // epoch_length
    means = (
        g_values[: epochs * epoch_length].reshape(epochs, epoch_length, m).mean(dim=1)
    )  # E x m
    if rule == "multiplicative":
        if penalty is None:
            raise ValueError("rule='multiplicative' needs a `penalty` (psi).")
        if step is not None or slack or initial is not None:
            raise ValueError(
                "rule='multiplicative' does not use `step`, `slack` or `initial`."
            )
        log_k = g_values.new_zeros(m)  # kappa^1 = 1
        out = [log_k]
        for e in range(epochs):
            log_k = multiplicative_update(log_k, means[e], penalty, max_log_multiplier)
            out.append(log_k)
        return torch.exp(torch.stack(out))
    if rule == "additive":
        if step is None:
            raise ValueError("rule='additive' needs the step size `step` (mu > 0).")
        if penalty is not None:
            raise ValueError(
                "rule='additive' uses the linear penalty; remove `penalty`."
            )
        if not (slack >= 0 and math.isfinite(slack)):
            raise ValueError(f"`slack` must be finite and >= 0, got slack={slack!r}.")
        k = g_values.new_zeros(m)  # kappa^1 = 0 (Algorithm 3)
        if initial is not None:
            if not (initial >= 0 and math.isfinite(initial)):
                raise ValueError(
                    f"`initial` must be finite and >= 0, got initial={initial!r}."
                )
            k = k + initial
        out = [k]
        for e in range(epochs):
            k = additive_update(k, means[e], step, slack)
            out.append(k)
        return torch.stack(out)
    raise ValueError(
        f"`rule` must be 'multiplicative' or 'additive', got rule={rule!r}."
    )


def composite_targets(
    f_values: Tensor,
    g_values: Tensor,
    kappa: Tensor,
    rule: UpdateRule = "multiplicative",
    penalty: Penalty | None = None,
) -> Tensor:
    r"""The inner algorithm's targets for the current epoch, from every observation:
    :math:`f - \sum_j \kappa_j(\psi(g_j) - 1)` (Algorithm 2) or
    :math:`f - \sum_j \kappa_j g_j` (Algorithm 3).

    Args:
        f_values: ``n`` observations of :math:`f` (noisy).
        g_values: ``n x m`` constraint values (exact for Algorithm 2, noisy for 3).
        kappa: ``m`` multipliers of the current epoch.
        rule: ``"multiplicative"`` (default) or ``"additive"``.
        penalty: :math:`\psi` (multiplicative rule only, where it is needed).

    Returns:
        ``n`` composite targets.

    Example:
        >>> kappa = replay_multipliers(g, epoch_length=10, penalty=ExponentialPenalty())[-1]
        >>> y = composite_targets(f, g, kappa, penalty=ExponentialPenalty())
    """
    if g_values.ndim != 2 or g_values.shape[0] != f_values.shape[-1]:
        raise ValueError(
            "`g_values` must be n x m with n = len(f_values), got shapes "
            f"{tuple(f_values.shape)} and {tuple(g_values.shape)}."
        )
    if kappa.shape != g_values.shape[-1:]:
        raise ValueError(
            f"`kappa` must have one value per constraint ({g_values.shape[-1]}), got "
            f"shape {tuple(kappa.shape)}."
        )
    for name, values in (
        ("f_values", f_values),
        ("g_values", g_values),
        ("kappa", kappa),
    ):
        if not bool(torch.isfinite(values).all()):
            raise ValueError(
                f"`{name}` must be finite, got {values.tolist()!r} (a NaN would pass "
                "into every target)."
            )
    if rule == "multiplicative":
        if penalty is None:
            raise ValueError("rule='multiplicative' needs a `penalty` (psi).")
        return f_values - ((penalty(g_values) - 1.0) * kappa).sum(-1)
    if rule == "additive":
        return f_values - (g_values * kappa).sum(-1)
    raise ValueError(
        f"`rule` must be 'multiplicative' or 'additive', got rule={rule!r}."
    )


def epoch_schedule(
    rule: UpdateRule, delta: float, num_epochs: int, R: float, kappa: Tensor
) -> tuple[float, float]:
    r"""``(delta_epoch, R_epoch)`` for the inner IGP-UCB of one epoch:
    :math:`(\delta/L, R)` for Algorithm 2, :math:`(\delta/(2L), R\sqrt{1 + \sum_j
    \kappa_j^2})` for Algorithm 3.

    Args:
        rule: ``"multiplicative"`` (Algorithm 2) or ``"additive"`` (Algorithm 3).
        delta: The run's confidence :math:`\delta \in (0, 1)`.
        num_epochs: The number of epochs :math:`L \ge 1`.
        R: The objective's sub-Gaussian constant.
        kappa: ``m`` multipliers of the epoch (read by the additive rule only).

    Returns:
        The pair ``(delta_epoch, R_epoch)`` of floats.
    """
    if not 0 < delta < 1:
        raise ValueError(f"`delta` must lie in (0, 1), got delta={delta!r}.")
    if (
        isinstance(num_epochs, bool)
        or not isinstance(num_epochs, int)
        or num_epochs < 1
    ):
        raise ValueError(f"`num_epochs` must be an integer >= 1, got {num_epochs!r}.")
    if rule == "multiplicative":
        return delta / num_epochs, float(R)
    if rule == "additive":
        return delta / (2 * num_epochs), float(R) * math.sqrt(
            1.0 + float((kappa**2).sum())
        )
    raise ValueError(
        f"`rule` must be 'multiplicative' or 'additive', got rule={rule!r}."
    )
