r"""Change-point restarts for piecewise-stationary objectives (Avanesov, *How to gamble
with non-stationary X-armed bandits and have no regrets*): the GP change-point
detector (their Algorithm 1) with its integration domains (:func:`finite_domain`,
:func:`box_domain`), the schedules of their Theorem 3.1, and the state of GP-UCB-CPD
(Algorithm 2) as a pure function of the history. The GPR convention (their Eq.
2.1-2.3) and the detector's statistic are explained in ``docs/algorithms.md``. The
practical mode's scale-free detector is :mod:`botorch_bandits.scale_free`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from botorch.utils.sampling import draw_sobol_samples
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_bandits.validation import (
    check_finite,
    check_positive,
    check_round,
    check_tensor,
)


# -- schedules (Theorem 3.1 and the experiments of §4) ---------------------------------
def _rate(alpha: float, d: int) -> float:
    r""":math:`(2\alpha + d) / (2\alpha + d + 1)` (``alpha > 0``, ``d >= 1``)."""
    check_positive("alpha", alpha)
    check_round("d", d)
    return (2 * alpha + d) / (2 * alpha + d + 1)


def _log(x: float, log_base: float) -> float:
    """``log x`` in base ``log_base`` (``math.e``: the natural log)."""
    base = check_finite("log_base", log_base)
    if base <= 1:
        raise ValueError(
            f"`log_base` must be a number > 1 (math.e or 10), got log_base={log_base!r}."
        )
    return math.log(x) / math.log(base)


LOG_BASE_READINGS: dict[str, float] = {"natural": math.e, "log10": 10.0}
r"""The two readings of the paper's :math:`\log T` (Eqs. 3.4 and 3.7), by name. The
paper never says which base; its proofs use the natural log (Eq. B.14 bounds
:math:`\mathbb P\{\sup_{t\le T}|\varepsilon_t| > \mathfrak g\sqrt{2(u + \log T)}\} \le \exp(-u)`,
a Gaussian tail bound that holds with :math:`\log = \ln`), so ``"natural"`` is every
default here; ``"log10"`` is the other reading. REPRODUCTION.md reports both."""


def cpd_noise_variance(g: float, horizon: int, log_base: float = math.e) -> float:
    r""":math:`\sigma^2 = 6\mathfrak g^2 \log T` (Eq. 3.4; :math:`\mathfrak g^2`: the
    noise's sub-Gaussian constant, the variance for Gaussian noise). ``log_base``:
    the base of :math:`\log` (default natural, see :data:`LOG_BASE_READINGS`).

    Args:
        g: :math:`\mathfrak g > 0` (the standard deviation for Gaussian noise).
        horizon: The horizon :math:`T`, an integer >= 1.
        log_base: The base of :math:`\log`, a number > 1 (default ``math.e``).

    Returns:
        :math:`\sigma^2`.

    Raises:
        ValueError: If ``g`` <= 0, ``horizon`` is no integer >= 1 or ``log_base`` <= 1.

    Example:
        >>> sigma2 = cpd_noise_variance(g=0.1, horizon=1000)
    """
    check_positive("g", g)
    check_round("horizon", horizon)
    return 6.0 * g**2 * _log(horizon, log_base)


def ucb_regularization(t: int, sigma2: float) -> float:
    r""":math:`\rho^{UCB}_t = \sigma^2 / t` (Eq. 3.5): GPR on ``t`` points then has
    noise :math:`t\rho = \sigma^2`.

    Args:
        t: The number of points :math:`t`, an integer >= 1.
        sigma2: :math:`\sigma^2 > 0` (e.g. :func:`cpd_noise_variance`).

    Returns:
        :math:`\rho^{UCB}_t`.

    Raises:
        ValueError: If ``sigma2`` is not > 0 or ``t`` is not an integer >= 1.

    Example:
        >>> rho = ucb_regularization(10, cpd_noise_variance(0.1, 1000))
    """
    return check_positive("sigma2", sigma2) / check_round("t", t)


def cpd_regularization(n: int, c: float, alpha: float = 2.5, d: int = 1) -> float:
    r""":math:`\rho^{CPD}_n = c\,n^{-(2\alpha+d)/(2\alpha+d+1)}` (Eq. 3.5): the
    detector's regularization for halves of ``n`` points.

    Args:
        n: The number of points in each half, an integer >= 1.
        c: The constant :math:`c > 0`.
        alpha, d: The Matérn smoothness :math:`\alpha > 0` and the dimension (an
            integer >= 1) in the exponent (default 2.5, 1).

    Returns:
        :math:`\rho^{CPD}_n`.

    Raises:
        ValueError: If ``c`` or ``alpha`` <= 0, or ``n`` or ``d`` is no integer >= 1.

    Example:
        >>> rho = cpd_regularization(8, c=20.0)
    """
    check_positive("c", c)
    return c * check_round("n", n) ** (-_rate(alpha, d))


PAPER_THRESHOLD_C = 2.6
r"""The constant of the experiments' threshold :math:`\theta_n = 2.6\,n^{-6/7}`
(Avanesov §4)."""


def cpd_threshold(
    n: int, C: float = PAPER_THRESHOLD_C, alpha: float = 2.5, d: int = 1
) -> float:
    r""":math:`\theta_n = C\,n^{-(2\alpha+d)/(2\alpha+d+1)}`; the experiments (§4) use
    :math:`C = 2.6` with :math:`\alpha = 5/2`, :math:`d = 1` (:math:`2.6\,n^{-6/7}`).

    Args:
        n: The number of points in each half, an integer >= 1.
        C: The constant :math:`C > 0` (default :data:`PAPER_THRESHOLD_C`, 2.6).
        alpha, d: The Matérn smoothness :math:`\alpha > 0` and the dimension (an
            integer >= 1) in the exponent (default 2.5, 1).

    Returns:
        :math:`\theta_n`.

    Raises:
        ValueError: If ``C`` or ``alpha`` <= 0, or ``n`` or ``d`` is no integer >= 1.

    Example:
        >>> theta = cpd_threshold(8)  # 2.6 * 8 ** (-6 / 7)
    """
    check_positive("C", C)
    return C * check_round("n", n) ** (-_rate(alpha, d))


def cpd_threshold_theory(
    n: int, C: float, F: float, g: float, horizon: int, alpha: float = 2.5, d: int = 1
) -> float:
    r""":math:`\theta_n = C(F^2 + \mathfrak g\log^2 T)\,n^{-(2\alpha+d)/(2\alpha+d+1)}`
    (Eq. 3.6; ``C`` depends only on ``c`` and the kernel and is not given).

    Args:
        n: The number of points in each half, an integer >= 1.
        C: The constant :math:`C > 0`.
        F: :math:`F > 0`, as in Eq. 3.6.
        g: The noise's sub-Gaussian constant :math:`\mathfrak g > 0`.
        horizon: The horizon :math:`T`, an integer >= 1 (:math:`\log`: natural).
        alpha, d: The Matérn smoothness :math:`\alpha > 0` and the dimension (an
            integer >= 1) in the exponent (default 2.5, 1).

    Returns:
        :math:`\theta_n`.

    Raises:
        ValueError: If ``C``, ``F``, ``g`` or ``alpha`` is not > 0, or ``n``,
            ``horizon`` or ``d`` is not an integer >= 1.

    Example:
        >>> theta = cpd_threshold_theory(8, C=1.0, F=1.0, g=0.1, horizon=1000)
    """
    for name, value in (("C", C), ("F", F), ("g", g)):
        check_positive(name, value)
    scale = F**2 + g * math.log(check_round("horizon", horizon)) ** 2
    return C * scale * check_round("n", n) ** (-_rate(alpha, d))


def cpd_beta(
    t: int,
    D: float,
    horizon: int,
    alpha: float = 2.5,
    d: int = 1,
    log_base: float = math.e,
) -> float:
    r""":math:`\beta_t = D\,t^{d(d+1)/(2\alpha+d(d+1))}\log^4 T` (Eq. 3.7), used as
    :math:`\mu + \sqrt{\beta_t}\sigma` (Eq. 2.5; BoTorch's ``UpperConfidenceBound``
    convention). The experiments use :math:`D = 0.02`. ``log_base``: the base of
    :math:`\log` (default natural; with base 10, :math:`\log^4 T` is
    :math:`\ln 10^4 \approx 28` times smaller; see :data:`LOG_BASE_READINGS`).

    Args:
        t: The round :math:`t`, an integer >= 1.
        D: The constant :math:`D > 0`.
        horizon: The horizon :math:`T`, an integer >= 1.
        alpha, d: The Matérn smoothness and the dimension in the exponent (default
            2.5, 1).
        log_base: The base of :math:`\log`, a number > 1 (default ``math.e``).

    Returns:
        :math:`\beta_t`.

    Raises:
        ValueError: If ``D`` <= 0, ``t`` or ``horizon`` is no integer >= 1, or
            ``log_base`` <= 1.

    Example:
        >>> beta = cpd_beta(100, D=0.02, horizon=1000)
    """
    check_positive("D", D)
    check_round("t", t)
    exponent = d * (d + 1) / (2 * alpha + d * (d + 1))
    return D * t**exponent * _log(check_round("horizon", horizon), log_base) ** 4


# -- integration domains ---------------------------------------------------------------
def check_scan_data(X: Any, y: Any) -> None:
    """A detector's data must be finite (NaN data would answer "no change").

    Args:
        X: The detector's points (a tensor or anything ``torch.as_tensor`` takes).
        y: Their values.

    Raises:
        ValueError: If ``X`` or ``y`` has a NaN or infinite value.
    """
    for name, v in (("X", X), ("y", y)):
        if not bool(torch.isfinite(torch.as_tensor(v)).all()):
            raise ValueError(
                f"`{name}` of the change-point detector must be finite, got a NaN or "
                "infinite value (the test would answer 'no change')."
            )


@dataclass(frozen=True)
class IntegrationDomain:
    r""":math:`\int_{\mathcal X} h \approx \sum_g w_g h(x_g)`.

    Args:
        points, weights: ``M x d`` points and ``M`` weights."""

    points: Tensor
    weights: Tensor


def finite_domain(points: Tensor, volume: float | None = None) -> IntegrationDomain:
    r"""A finite set (or grid) of ``N`` points with equal weights ``volume / N``
    (``volume`` default 1: the mean over the set). For the paper's 1000-point grid
    of [0, 5], ``volume=5`` gives the midpoint rule of :math:`\int_0^5`, whose error
    for the smooth (Matérn-5/2) means is :math:`O(N^{-2})` relative.

    Args:
        points: The ``N x d`` points (a finite floating tensor, ``N >= 1``).
        volume: The set's volume, > 0 (default ``None``: 1).

    Returns:
        The :class:`IntegrationDomain`, of ``points``' dtype and device.

    Raises:
        ValueError: If ``points`` is no such tensor or ``volume`` <= 0.

    Example:
        >>> dom = finite_domain(torch.linspace(0, 5, 1000).unsqueeze(-1), volume=5)
    """
    check_tensor("points", points)
    if points.ndim != 2 or points.shape[0] < 1:
        raise ValueError(
            f"`points` must be N x d with N >= 1, got {tuple(points.shape)}."
        )
    vol = 1.0 if volume is None else check_positive("volume", volume)
    w = torch.full((points.shape[0],), vol / points.shape[0], dtype=points.dtype)
    return IntegrationDomain(points, w.to(points.device))


def box_domain(
    bounds: Tensor, num_points: int = 4096, seed: int = 0
) -> IntegrationDomain:
    r"""Quasi-Monte-Carlo on a box: ``num_points`` scrambled Sobol points (BoTorch's
    ``draw_sobol_samples``), weights ``volume / num_points``. The error of a
    randomized QMC estimate of a smooth integrand is :math:`O(M^{-1}\log^d M)`; the
    tests measure M = 4096 against a 10^6-point estimate (below 1 % relative).

    Args:
        bounds: ``2 x d`` lower and upper bounds (lower < upper).
        num_points, seed: :math:`M \ge 1` (default 4096) and the Sobol seed (0).
    Returns:
        The :class:`IntegrationDomain`, of ``bounds``' dtype and device."""

    if (
        bounds.ndim != 2
        or bounds.shape[0] != 2
        or not bool((bounds[1] > bounds[0]).all())
    ):
        raise ValueError(
            f"`bounds` must be 2 x d with lower < upper, got {bounds.tolist()}."
        )
    check_round("num_points", num_points)
    pts = draw_sobol_samples(bounds, n=num_points, q=1, seed=seed).squeeze(-2)
    volume = float(torch.prod(bounds[1] - bounds[0]))
    w = torch.full((num_points,), volume / num_points, dtype=bounds.dtype)
    return IntegrationDomain(pts.to(bounds), w.to(bounds.device))


# -- the detector (Algorithm 1) --------------------------------------------------------
class ChangePointDetector:
    r"""Algorithm 1: report a change in ``2n`` pairs iff :math:`\hat\Delta^2 > \theta_n`.

    Args:
        kernel: The GPyTorch kernel ``k`` (fixed hyperparameters).
        domain: Where :math:`\hat\Delta^2` integrates (:func:`finite_domain`,
            :func:`box_domain`).
        c: The constant of :math:`\rho^{CPD}_n = c\,n^{-(2\alpha+d)/(2\alpha+d+1)}`.
        threshold: ``n -> theta_n`` (default :func:`cpd_threshold`, the experiments'
            :math:`2.6\,n^{-6/7}` for :math:`\alpha = 5/2, d = 1`); ``math.inf`` for a
            detector that never fires (GP-UCB-NO-Detector).
        alpha, d: Matérn smoothness and dimension in the exponents (default 2.5, 1).
    """

    def __init__(
        self,
        kernel: Kernel,
        domain: IntegrationDomain,
        c: float,
        threshold: Callable[[int], float] | float | None = None,
        alpha: float = 2.5,
        d: int = 1,
    ) -> None:
        self.kernel = kernel
        self.domain = domain
        self.c = check_positive("c", c)
        self.alpha = check_positive("alpha", alpha)
        self.d = check_round("d", d)
        if threshold is None:
            threshold = lambda n: cpd_threshold(  # noqa: E731
                n, PAPER_THRESHOLD_C, self.alpha, self.d
            )
        elif isinstance(threshold, (int, float)):
            if not threshold > 0:
                raise ValueError(
                    f"`threshold` must be > 0, got threshold={threshold!r}."
                )
            value = float(threshold)
            threshold = lambda n: value  # noqa: E731
        self.threshold = threshold

    def _k(self, A: Tensor, B: Tensor) -> Tensor:
        with torch.no_grad():
            return self.kernel.to(A)(A, B).to_dense()

    def gram(self, points: Tensor) -> Tensor:
        r""":math:`G_{ij} = \sum_g w_g k(x_i, g) k(g, x_j)` for ``points`` (``P x d``).

        Args:
            points: ``P x d`` points.

        Returns:
            The ``P x P`` matrix :math:`G` (over the domain's points and weights).
        """
        Kpg = self._k(points, self.domain.points.to(points))  # P x M
        w = self.domain.weights.to(points)
        return (Kpg * w) @ Kpg.T

    def statistic(
        self,
        X: Tensor,
        y: Tensor,
        gram: Tensor | None = None,
        kernel_matrix: Tensor | None = None,
    ) -> float:
        r""":math:`\hat\Delta^2` of ``2n`` pairs.

        Args:
            X, y: ``2n x d`` points and ``2n`` values (halves: the first and last ``n``).
            gram, kernel_matrix: :math:`G` and :math:`k(X, X)` if precomputed (e.g.
                submatrices of the arms'; default ``None``).
        Returns:
            :math:`\hat\Delta^2`."""
        m = X.shape[0]
        if m < 2 or m % 2 or y.shape != (m,):
            raise ValueError(
                f"The detector needs 2n >= 2 pairs, got X {tuple(X.shape)} and y "
                f"{tuple(y.shape)}."
            )
        K = self._k(X, X) if kernel_matrix is None else kernel_matrix
        G = self.gram(X) if gram is None else gram
        return _delta2(*(_numpy(v) for v in (K, G, y)), self.noise(m // 2))

    def noise(self, n: int) -> float:
        r""":math:`n\rho^{CPD}_n`: the noise of each half's GPR.

        Args:
            n: The number of points in each half, an integer >= 1.

        Returns:
            The noise (:func:`cpd_regularization` with ``c``, ``alpha``, ``d``).
        """
        return n * cpd_regularization(n, self.c, self.alpha, self.d)

    def __call__(
        self,
        X: Tensor,
        y: Tensor,
        gram: Tensor | None = None,
        kernel_matrix: Tensor | None = None,
    ) -> bool:
        r"""Algorithm 1: ``True`` iff a change is reported.

        Args:
            X, y, gram, kernel_matrix: As in :meth:`statistic`.
        Returns:
            Whether :math:`\hat\Delta^2 > \theta_n`."""
        check_scan_data(X, y)
        theta = self.threshold(X.shape[0] // 2)
        if math.isinf(theta):
            return False
        return self.statistic(X, y, gram, kernel_matrix) > theta

    def scan(
        self,
        X: Tensor,
        y: Tensor,
        gram: Tensor | None = None,
        kernel_matrix: Tensor | None = None,
    ) -> int | None:
        r"""Algorithm 2, lines 10-17: test the tails of length ``2n``,
        ``n = 1, ..., floor(|U|/2)``, of the uniformly sampled pairs; the first ``n``
        that reports a change, or ``None``.

        Args:
            X, y, gram, kernel_matrix: The ``|U|`` uniform points, their values, and
                :math:`G` and :math:`k` on them if precomputed (default ``None``).
        Returns:
            That ``n``, or ``None``."""
        check_scan_data(X, y)
        m = X.shape[0]
        if m >= 2 and math.isinf(self.threshold(1)):
            return None  # a detector that never fires (GP-UCB-NO-Detector)
        K = self._k(X, X) if kernel_matrix is None else kernel_matrix
        G = self.gram(X) if gram is None else gram
        Kn, Gn, yn = (_numpy(v) for v in (K, G, y))
        for n in range(1, m // 2 + 1):
            lo = m - 2 * n
            theta = self.threshold(n)
            stat = _delta2(Kn[lo:, lo:], Gn[lo:, lo:], yn[lo:], self.noise(n))
            if stat > theta:
                return n
        return None


def _numpy(v: Tensor) -> np.ndarray:
    return np.asarray(v.detach().cpu(), dtype=float)


def _delta2(K: np.ndarray, G: np.ndarray, y: np.ndarray, noise: float) -> float:
    r""":math:`\hat\Delta^2 = a^\top G a`, :math:`a = (\alpha_1, -\alpha_2)`,
    :math:`\alpha_i = (K_{ii} + n\rho I)^{-1} y_i` for the two halves of ``2n``
    pairs (``K``, ``G``: ``2n x 2n``); NumPy, whose per-call overhead is a fraction of
    torch's for the scan's many small solves."""
    n = y.shape[0] // 2
    idx = np.arange(n)
    A1 = K[:n, :n].copy()
    A1[idx, idx] += noise
    A2 = K[n:, n:].copy()
    A2[idx, idx] += noise
    a = np.concatenate([np.linalg.solve(A1, y[:n]), -np.linalg.solve(A2, y[n:])])
    return float(a @ G @ a)


# -- the cap on uniform steps (the practical mode) -------------------------------------
def uniform_budget(t: int, xi: float, max_share: float) -> float:
    r"""The most uniform steps among the first ``t + 1``: :math:`\max(\xi\sqrt t + 1,
    s(t + 1))` with ``s = max_share``. The first term is what Algorithm 2's rule
    allows without restarts (so the cap never binds on a run without them); the
    second bounds the long-run share of uniform steps by ``s``.

    Args:
        t: The step (0-based): the budget is for the first ``t + 1`` steps.
        xi: :math:`\xi` of Algorithm 2's rule (:func:`explore_uniformly`).
        max_share: :math:`s`, the cap on the long-run share of uniform steps.

    Returns:
        The budget (a float; not rounded).
    """
    return max(xi * math.sqrt(t) + 1.0, max_share * (t + 1))


def within_budget(made: int, t: int, xi: float, max_share: float) -> bool:
    r"""Whether one more uniform step, after ``made`` among the first ``t`` steps,
    stays within :func:`uniform_budget` (ties as in :func:`explore_uniformly`).

    Args:
        made: The uniform steps made so far.
        t: The steps so far (the next step is step ``t``, 0-based).
        xi: :math:`\xi` of Algorithm 2's rule.
        max_share: The cap on the long-run share of uniform steps.

    Returns:
        Whether ``made + 1 <= uniform_budget(t, xi, max_share)`` (up to a relative
        1e-12).
    """
    return made + 1 <= uniform_budget(t, xi, max_share) * (1.0 + 1e-12)


# -- GP-UCB-CPD state (Algorithm 2) ----------------------------------------------------
def explore_uniformly(num_uniform: int, num_history: int, xi: float) -> bool:
    r"""Algorithm 2, line 6: explore uniformly iff :math:`|U| \le \xi\sqrt{|H|}`.
    Ties count as in exact arithmetic (a relative tolerance of 1e-12): with
    :math:`\xi = \sqrt 3`, :math:`|U| = |H| = 3` explores although
    ``math.sqrt(3) * math.sqrt(3)`` is 2.9999999999999996 in floating point.

    Args:
        num_uniform: :math:`|U|`, the uniformly sampled steps since the last restart.
        num_history: :math:`|H|`, the steps since the last restart.
        xi: :math:`\xi \ge 0` (:math:`\sqrt 3` in the experiments).

    Returns:
        Whether the next step explores uniformly.
    """
    return num_uniform <= xi * math.sqrt(num_history) * (1.0 + 1e-12)


@dataclass
class CPDState:
    """The state of GP-UCB-CPD after some steps: indices (into the record) of the
    history ``H`` and the uniformly sampled ``U``, the steps that restarted, and
    whether the next step explores uniformly.

    Attributes:
        history: The indices of ``H``, the steps since the last restart (default empty).
        uniform: The indices of ``U``, ``H``'s uniformly sampled steps (default empty).
        restarts: The steps (0-based) that reset ``H`` and ``U`` (default empty).
        detections: The ``n`` the detector reported at each restart (default empty).
    """

    history: list[int] = field(default_factory=list)
    uniform: list[int] = field(default_factory=list)
    restarts: list[int] = field(default_factory=list)  # steps (0-based) that reset
    detections: list[int] = field(default_factory=list)  # the n that fired

    def next_is_uniform(self, xi: float) -> bool:
        r"""Whether the next step explores uniformly (:func:`explore_uniformly` on
        :math:`|U|` and :math:`|H|`).

        Args:
            xi: :math:`\xi \ge 0` of Algorithm 2's rule.

        Returns:
            Whether :math:`|U| \le \xi\sqrt{|H|}`.
        """
        return explore_uniformly(len(self.uniform), len(self.history), xi)

    @property
    def last_restart(self) -> int | None:
        return self.restarts[-1] if self.restarts else None


class GPUCBCPD:
    r"""GP-UCB-CPD (Algorithm 2) as a state machine over the record of
    ``(x_t, y_t)``: whether step ``t`` explores uniformly is decided from
    :math:`|U|` and :math:`|H|` alone, so the whole state is a pure function of the
    record (:meth:`replay`) -- a resumed run recomputes it and takes the same next
    decision.

    Args:
        detector: A :class:`ChangePointDetector` (``threshold=math.inf`` for
            GP-UCB-NO-Detector).
        xi: :math:`\xi > 0` (:math:`\sqrt 3` in the experiments); ``xi=0`` is plain
            GP-UCB (one uniform step, then never again).
        points: Optional ``N x d`` arm set (:meth:`record` then takes arm indices).
        gram: Optional ``N x N`` :math:`G` on that arm set.
        kernel_matrix: Optional ``N x N`` kernel matrix :math:`k` on that arm set
            (the scans then slice it instead of evaluating the kernel).
    """

    def __init__(
        self,
        detector: ChangePointDetector,
        xi: float = math.sqrt(3.0),
        points: Tensor | None = None,
        gram: Tensor | None = None,
        kernel_matrix: Tensor | None = None,
    ) -> None:
        self.detector = detector
        self.xi = check_positive("xi", xi, allow_zero=True)
        self.points = points
        self.gram_ = gram
        self.kernel_matrix_ = kernel_matrix
        self.state = CPDState()
        self.X: list[Any] = []
        self.y: list[float] = []

    def next_is_uniform(self) -> bool:
        return self.state.next_is_uniform(self.xi)

    def record(self, x: Any, y: float | None, uniform: bool | None = None) -> bool:
        """Record step ``t``; after a uniform step, scan the tails of ``U`` (those
        whose values have arrived) and reset ``H`` and ``U`` on a detection.

        Args:
            x: The point (a tensor, or an arm index with ``points``).
            y: Its value, or ``None`` while it has not arrived (an Ax trial in
                flight): in ``H`` (and ``U``) but in no scan until replayed with it.
            uniform: The rule's decision as taken when the step was issued
                (default ``None``: take it now, :meth:`next_is_uniform`).
        Returns:
            Whether the step restarted (a detection)."""
        if y is not None and not math.isfinite(float(y)):
            raise ValueError(f"`y` must be finite, got y={y!r}.")
        if uniform is None:
            uniform = self.next_is_uniform()
        t = len(self.y)
        self.X.append(x)
        self.y.append(None if y is None else float(y))
        self.state.history.append(t)
        if not uniform:
            return False
        self.state.uniform.append(t)
        if y is None:
            return False
        idx = [i for i in self.state.uniform if self.y[i] is not None]
        if len(idx) < 2:
            return False
        Xu, yu, G, K = self._uniform_data(idx)
        # the kernel matrix only when given: a detector may scan on (X, y, G) alone
        extra = {} if K is None else {"kernel_matrix": K}
        n = self.detector.scan(Xu, yu, G, **extra)
        if n is None:
            return False
        self.state.history.clear()
        self.state.uniform.clear()
        self.state.restarts.append(t)
        self.state.detections.append(n)
        return True

    def _uniform_data(
        self, idx: Sequence[int]
    ) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        xs = [self.X[i] for i in idx]
        yu = torch.tensor([self.y[i] for i in idx], dtype=torch.double)
        if self.points is not None:
            arm = torch.as_tensor(xs, dtype=torch.long)
            G = self.gram_[arm][:, arm] if self.gram_ is not None else None
            K = None
            if self.kernel_matrix_ is not None:
                K = self.kernel_matrix_[arm][:, arm]
            return self.points[arm].to(torch.double), yu, G, K
        points = torch.stack([torch.as_tensor(x) for x in xs]).to(torch.double)
        return points, yu, None, None

    def reset(self) -> None:
        """A restart from outside the detector (an oracle that knows the change
        points): ``H`` and ``U`` start again at the next step, recorded as a
        restart of that step."""
        self.state.history.clear()
        self.state.uniform.clear()
        self.state.restarts.append(len(self.y))

    @property
    def history_data(self) -> tuple[list[Any], list[float]]:
        """The points and values of ``H`` (what GP-UCB trains on)."""
        return [self.X[i] for i in self.state.history], [
            self.y[i] for i in self.state.history
        ]

    @classmethod
    def replay(
        cls,
        X: Sequence[Any],
        y: Sequence[float | None],
        detector: ChangePointDetector,
        uniform: Sequence[bool] | None = None,
        **kw: Any,
    ) -> GPUCBCPD:
        """The state after the record ``(X, y)``, recomputed from scratch.

        Args:
            X, y, uniform: Points, values, and decisions as issued (:meth:`record`).
            detector: The constructor's ``detector``.
            **kw: Its other arguments (``xi``, ``points``, ``gram``, ...).
        Returns:
            The :class:`GPUCBCPD`."""
        if len(X) != len(y):
            raise ValueError(f"`X` and `y` differ in length: {len(X)} and {len(y)}.")
        if uniform is not None and len(uniform) != len(y):
            raise ValueError(
                f"`uniform` and `y` differ in length: {len(uniform)} and {len(y)}."
            )
        algo = cls(detector, **kw)
        flags = [None] * len(y) if uniform is None else list(uniform)
        for x, v, u in zip(X, y, flags, strict=True):
            algo.record(x, v, uniform=u)
        return algo
