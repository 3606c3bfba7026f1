r"""Where :math:`\gamma` comes from: the growth orders of Srinivas et al. 2010
(Theorem 5), the :class:`GammaSource` classes a ``gamma=`` argument may be (a number,
a callable, a growth order, the greedy bound, the observed information gain) and
:func:`resolve_gamma`, which turns a user's ``gamma`` into one.

References:
    Srinivas, Krause, Kakade, Seeger. Gaussian Process Optimization in the Bandit
    Setting: No Regret and Experimental Design. ICML 2010.
    Chowdhury, Gopalan. On Kernelized Multi-armed Bandits. ICML 2017.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

import torch
from torch import Tensor

from botorch_bandits.beta.gain import greedy_information_gain, observed_information_gain
from botorch_bandits.validation import (
    check_count,
    check_nonnegative,
    check_positive,
    check_tensor,
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

    Args:
        kernel: ``"linear"``, ``"rbf"`` or ``"matern"``.
        T: The number of points :math:`T \ge 1` (an int, or a tensor of them).
        dim: Input dimension :math:`d \ge 1`.
        nu: Matérn smoothness :math:`\nu > 1`; needed for ``"matern"`` only.

    Returns:
        The order with constant 1: a float, or a double tensor of ``T``'s shape.

    Example:
        >>> round(gamma_growth_order("rbf", T=100, dim=2), 2)
        97.66
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


@runtime_checkable
class GammaSource(Protocol):
    r"""Where :math:`\gamma_n` comes from: ``source(n, model) -> float`` (nats).

    ``n`` is the number of points (IGP-UCB and GP-TS at round ``t`` ask for
    :math:`\gamma_{t-1}`, GP-UCB's Theorem 3 asks for :math:`\gamma_t`); ``model`` is
    the model the acquisition function was built on.
    """

    def __call__(self, n: int, model: Any = None) -> float | Tensor:
        r""":math:`\gamma_n`.

        Args:
            n: The number of points.
            model: The model the acquisition function was built on (a source that
                does not read it ignores it; default ``None``).

        Returns:
            :math:`\gamma_n` in nats: a float, or a ``batch_shape`` tensor.
        """
        ...


class ConstantGamma:
    r"""A fixed :math:`\gamma` for every index. Keeps a guarantee only if it
    upper-bounds :math:`\gamma_n` for every ``n`` used (e.g. ``n <= T - 1``).

    Args:
        value: :math:`\gamma \ge 0` in nats.
    """

    def __init__(self, value: float) -> None:
        self.value = check_nonnegative("gamma", value)

    def __call__(self, n: int, model: Any = None) -> float:
        r"""``value``, whatever ``n``.

        Args:
            n: The number of points :math:`n \ge 0`.
            model: The acquisition's model (ignored).

        Returns:
            :math:`\gamma_n` in nats.
        """
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
        r"""``fn(n)``, checked to be ``>= 0``.

        Args:
            n: The number of points :math:`n \ge 0`.
            model: The acquisition's model (ignored).

        Returns:
            :math:`\gamma_n` in nats.
        """
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
        r"""``scale`` times the order at ``max(n, 2)``; 0 for ``n <= 0``.

        Args:
            n: The number of points :math:`n \ge 0`.
            model: The acquisition's model (ignored).

        Returns:
            :math:`\gamma_n` in nats.
        """
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
        """Run the greedy pass (idempotent).

        Returns:
            ``self``, with ``gammas_`` (``horizon`` values) set.
        """
        if self.gammas_ is None:
            self.gammas_ = greedy_information_gain(
                self.K.detach(), self.noise, self.horizon
            ).gamma
        return self

    def __call__(self, n: int, model: Any = None) -> float:
        r"""The greedy bound on :math:`\gamma_n` (the greedy pass runs on first use).

        Args:
            n: The number of points, at most ``horizon`` (0 for ``n <= 0``).
            model: The acquisition's model (ignored).

        Returns:
            :math:`\gamma_n` in nats.
        """
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
        r"""The information gain of ``model``'s training points.

        Args:
            n: The number of points: must equal the model's number of training
                points (else a ``ValueError``).
            model: The acquisition's model (see :func:`observed_information_gain`).

        Returns:
            A float for an unbatched model, else a ``batch_shape`` tensor (nats).
        """
        gain = observed_information_gain(model, n)
        return float(gain) if gain.ndim == 0 else gain

    def __repr__(self) -> str:
        return "ObservedInformationGain()"


def resolve_gamma(gamma: Any) -> GammaSource:
    r"""Turn a user's ``gamma`` argument into a :class:`GammaSource`.

    Args:
        gamma: A number :math:`\ge 0` or a one-element tensor
            (:class:`ConstantGamma`), ``"observed"`` (:class:`ObservedInformationGain`),
            an instance of one of this module's sources (returned as is), or a
            callable ``fn(n) -> float`` (:class:`CallableGamma`).

    Returns:
        The :class:`GammaSource`.

    Raises:
        TypeError: For a bool or any other type.
        ValueError: For a string other than ``"observed"``.

    Example:
        >>> resolve_gamma(2.5)
        ConstantGamma(value=2.5)
        >>> resolve_gamma("observed")
        ObservedInformationGain()
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
