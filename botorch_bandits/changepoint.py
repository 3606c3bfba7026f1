r"""Change-point restarts for piecewise-stationary objectives (Avanesov, *How to gamble
with non-stationary X-armed bandits and have no regrets*): the GP change-point
detector (their Algorithm 1) with its integration domains (:func:`finite_domain`,
:func:`box_domain`), the schedules of their Theorem 3.1, and the state of GP-UCB-CPD
(Algorithm 2) as a pure function of the history. The GPR convention (their Eq.
2.1-2.3) and the detector's statistic are explained in ``docs/algorithms.md``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from botorch.utils.sampling import draw_sobol_samples
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_bandits.models.practical import standardize
from botorch_bandits.validation import (
    check_finite,
    check_open_unit,
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
    the base of :math:`\log` (default natural, see :data:`LOG_BASE_READINGS`)."""
    check_positive("g", g)
    check_round("horizon", horizon)
    return 6.0 * g**2 * _log(horizon, log_base)


def ucb_regularization(t: int, sigma2: float) -> float:
    r""":math:`\rho^{UCB}_t = \sigma^2 / t` (Eq. 3.5): GPR on ``t`` points then has
    noise :math:`t\rho = \sigma^2`."""
    return check_positive("sigma2", sigma2) / check_round("t", t)


def cpd_regularization(n: int, c: float, alpha: float = 2.5, d: int = 1) -> float:
    r""":math:`\rho^{CPD}_n = c\,n^{-(2\alpha+d)/(2\alpha+d+1)}` (Eq. 3.5)."""
    check_positive("c", c)
    return c * check_round("n", n) ** (-_rate(alpha, d))


PAPER_THRESHOLD_C = 2.6
r"""The constant of the experiments' threshold :math:`\theta_n = 2.6\,n^{-6/7}`
(Avanesov §4)."""


def cpd_threshold(
    n: int, C: float = PAPER_THRESHOLD_C, alpha: float = 2.5, d: int = 1
) -> float:
    r""":math:`\theta_n = C\,n^{-(2\alpha+d)/(2\alpha+d+1)}`; the experiments (§4) use
    :math:`C = 2.6` with :math:`\alpha = 5/2`, :math:`d = 1` (:math:`2.6\,n^{-6/7}`)."""
    check_positive("C", C)
    return C * check_round("n", n) ** (-_rate(alpha, d))


def cpd_threshold_theory(
    n: int, C: float, F: float, g: float, horizon: int, alpha: float = 2.5, d: int = 1
) -> float:
    r""":math:`\theta_n = C(F^2 + \mathfrak g\log^2 T)\,n^{-(2\alpha+d)/(2\alpha+d+1)}`
    (Eq. 3.6; ``C`` depends only on ``c`` and the kernel and is not given)."""
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
    :math:`\ln 10^4 \approx 28` times smaller; see :data:`LOG_BASE_READINGS`)."""
    check_positive("D", D)
    check_round("t", t)
    exponent = d * (d + 1) / (2 * alpha + d * (d + 1))
    return D * t**exponent * _log(check_round("horizon", horizon), log_base) ** 4


# -- integration domains ---------------------------------------------------------------
def check_scan_data(X: Any, y: Any) -> None:
    """A detector's data must be finite (NaN data would answer "no change")."""
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
    for the smooth (Matérn-5/2) means is :math:`O(N^{-2})` relative."""
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
        r""":math:`G_{ij} = \sum_g w_g k(x_i, g) k(g, x_j)` for ``points`` (``P x d``)."""
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
        r""":math:`n\rho^{CPD}_n`: the noise of each half's GPR."""
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


# -- the scale-free detector (the practical mode) --------------------------------------
#: the scale-free detector's cross-validation grid: Matérn-5/2 lengthscales (times
#: sqrt(d), on the unit cube) and nuggets (noise over signal variance)
CV_LENGTHSCALES: tuple[float, ...] = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
CV_NUGGETS: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0)
#: the fewest uniform values the scale-free detector tests (fewer: no scan)
MIN_SCAN = 4
#: the scale-free detector's scans by their settings and data (a cache)
_SCANS: dict[tuple, tuple[int | None, dict]] = {}


def matern52(A: np.ndarray, B: np.ndarray, lengthscale: float) -> np.ndarray:
    """The Matérn-5/2 kernel (unit variance) between the rows of ``A`` and ``B``."""
    sq = (A**2).sum(1)[:, None] + (B**2).sum(1)[None, :] - 2.0 * A @ B.T
    r = np.sqrt(5.0 * np.maximum(sq, 0.0)) / lengthscale
    return (1.0 + r + r**2 / 3.0) * np.exp(-r)


def loo_cv(
    X: np.ndarray,
    z: np.ndarray,
    lengthscales: Sequence[float],
    nuggets: Sequence[float],
) -> tuple[float, float, float]:
    r"""Leave-one-out cross-validation of GPR on ``(X, z)`` over a grid: for each
    lengthscale and nugget :math:`\lambda`, with :math:`B = (K + \lambda I)^{-1}` the
    held-out residuals are :math:`(Bz)_i / B_{ii}` (no refits). Returns the
    (lengthscale, nugget, mean squared residual) of the smallest score, ties to the
    grid's order; a grid point whose matrix cannot be factorized is skipped."""
    best = (math.nan, math.nan, math.inf)
    for ell in lengthscales:
        K = matern52(X, X, ell)
        for lam in nuggets:
            A = K + lam * np.eye(len(z))
            try:
                L = np.linalg.cholesky(A)
            except np.linalg.LinAlgError:
                continue
            Li = np.linalg.solve(L, np.eye(len(z)))
            B = Li.T @ Li
            score = float(np.mean(((B @ z) / np.diag(B)) ** 2))
            if score < best[2]:
                best = (float(ell), float(lam), score)
    return best


class ScaleFreeDetector:
    r"""Algorithm 1 on the standardized scale, its kernel and :math:`\theta_n` chosen
    from the uniformly sampled points as the paper's Remark 3.1 suggests: at each
    scan the ``m`` uniform values are standardized (``a*y + b`` gives the same
    bits), a Matérn-5/2 lengthscale is chosen by :func:`loo_cv` (nugget
    :math:`c\,m^{1-r}`), and the statistic between the values before and after
    every split (each part's nugget :math:`c\,n_i^{1-r}`, Eq. 3.5) is compared with
    its ``permutations`` fixed reorderings (the null distribution: without a change
    the uniform steps are exchangeable). Written out in ``docs/algorithms.md``.

    Args:
        points, weights: The integration set (``M x d``, unit cube) and weights.
        false_alarm: :math:`\alpha`, the chance of a false alarm in one scan.
        regularization: :math:`c` (default 20, the paper's experiments' constant
            for unit-variance draws: the standardized scale); ``None``: the
            nugget by CV as well (Remark 3.1's other reading; not an Ax option).
        threshold_scale: :math:`\kappa`: the observed statistics are divided by it
            before the comparison (1: no margin).
        alpha, d: Matérn smoothness and dimension in :math:`r`.
    """

    def __init__(
        self,
        points: Tensor,
        weights: Tensor,
        false_alarm: float = 0.01,
        regularization: float | None = 20.0,
        threshold_scale: float = 1.0,
        alpha: float = 2.5,
        d: int = 1,
    ) -> None:
        self.points = _numpy(points)
        self.weights = _numpy(weights)
        self.false_alarm = check_open_unit("false_alarm", false_alarm)
        self.c = None if regularization is None else check_positive("c", regularization)
        self.threshold_scale = check_positive("threshold_scale", threshold_scale)
        self.alpha = check_positive("alpha", alpha)
        self.d = check_round("d", d)
        #: reorderings: enough that a p-value of ``false_alarm`` can be reached
        self.permutations = max(199, math.ceil(2.0 / self.false_alarm) - 1)
        self.last_: dict[str, float] | None = None
        digest = hashlib.sha256(self.points.tobytes() + self.weights.tobytes())
        self._settings = (digest.hexdigest(), self.false_alarm, self.c)
        self._settings += (self.threshold_scale, self.alpha, self.d)

    def scan(
        self,
        X: Tensor,
        y: Tensor,
        gram: Tensor | None = None,
        kernel_matrix: Tensor | None = None,
    ) -> int | None:
        """As :meth:`ChangePointDetector.scan` (``gram`` and ``kernel_matrix`` are
        not used: the kernel is chosen at each scan); the fit and the scan's
        p-value are kept in ``last_``."""
        self.last_ = None
        check_scan_data(X, y)
        m = X.shape[0]
        if m < MIN_SCAN:
            return None
        z = _numpy(standardize(torch.as_tensor(y, dtype=torch.double))[0])
        if not np.any(z):
            return None  # no spread: nothing can have changed that the data shows
        Xn = _numpy(X)
        # a scan is a pure function of its data and settings, and every decision
        # replays the run's scans: kept (per process, bounded) by their bytes
        key = (self._settings, Xn.tobytes(), z.tobytes())
        if key not in _SCANS:
            if len(_SCANS) >= 4096:
                _SCANS.clear()
            _SCANS[key] = self._scan(Xn, z)
        n, last = _SCANS[key]
        self.last_ = dict(last)
        return n

    def _scan(self, Xn: np.ndarray, z: np.ndarray) -> tuple[int | None, dict]:
        m = Xn.shape[0]
        grid = CV_NUGGETS if self.c is None else [self.c * m ** (1 - self._r)]
        root_d = math.sqrt(Xn.shape[1])
        ell, lam, _ = loo_cv(Xn, z, [root_d * s for s in CV_LENGTHSCALES], grid)
        if not math.isfinite(ell):
            return None, {"m": m}
        c = self.c if self.c is not None else lam * m ** (self._r - 1)
        K = matern52(Xn, Xn, ell)
        Kpg = matern52(Xn, self.points, ell)
        G = (Kpg * self.weights) @ Kpg.T
        # the observed order first, then the fixed reorderings (seeded by m only)
        rng = np.random.default_rng([m, 2024])
        order = np.vstack(
            [np.arange(m)] + [rng.permutation(m) for _ in range(self.permutations)]
        )
        stats = _split_statistics(K, G, z, order, c, self._r)  # S x (m - 3)
        # each split's log statistic standardized over all orders (a symmetric
        # function of the orders: the test stays exact; the log tames the heavy
        # tails of the short parts' statistics), the largest over the splits
        logs = np.log(np.maximum(stats, np.finfo(float).tiny))
        centre, spread = logs.mean(axis=0), logs.std(axis=0)
        spread = np.where(spread > 0, spread, 1.0)
        logs[0] -= math.log(self.threshold_scale)  # the observed order's margin
        score = (logs - centre) / spread
        top = score.max(axis=1)
        p = (1 + int((top[1:] >= top[0]).sum())) / len(top)
        last = {"m": m, "lengthscale": ell, "nugget": lam, "p_value": p}
        if p > self.false_alarm:
            return None, last
        return m - 2 - int(np.argmax(score[0])), last  # the values after the split

    @property
    def _r(self) -> float:
        return _rate(self.alpha, self.d)


def _split_statistics(
    K: np.ndarray, G: np.ndarray, z: np.ndarray, order: np.ndarray, c: float, r: float
) -> np.ndarray:
    r""":math:`\hat\Delta^2` (as :func:`_delta2`, each part's nugget
    :math:`c\,n_i^{1-r}`) between the values before and after each split point,
    both parts of at least two values, for each row of ``order`` (``S x m``
    reorderings of the points): ``S x (m - 3)``, the split after 2, 3, ..., m - 2
    values, batched over the reorderings."""
    S, m = order.shape
    Ks = K[order[:, :, None], order[:, None, :]]
    Gs = G[order[:, :, None], order[:, None, :]]
    zs = z[order]
    out = np.empty((S, m - 3))
    for j, cut in enumerate(range(2, m - 1)):
        n1, n2 = cut, m - cut
        A1 = Ks[:, :cut, :cut] + c * n1 ** (1 - r) * np.eye(n1)
        A2 = Ks[:, cut:, cut:] + c * n2 ** (1 - r) * np.eye(n2)
        a1 = np.linalg.solve(A1, zs[:, :cut, None])
        a2 = np.linalg.solve(A2, zs[:, cut:, None])
        a = np.concatenate([a1, -a2], axis=1)[..., 0]
        out[:, j] = np.einsum("si,sij,sj->s", a, Gs, a)
    return out


def uniform_budget(t: int, xi: float, max_share: float) -> float:
    r"""The most uniform steps among the first ``t + 1``: :math:`\max(\xi\sqrt t + 1,
    s(t + 1))` with ``s = max_share``. The first term is what Algorithm 2's rule
    allows without restarts (so the cap never binds on a run without them); the
    second bounds the long-run share of uniform steps by ``s``."""
    return max(xi * math.sqrt(t) + 1.0, max_share * (t + 1))


def within_budget(made: int, t: int, xi: float, max_share: float) -> bool:
    """Whether one more uniform step, after ``made`` among the first ``t`` steps,
    stays within :func:`uniform_budget` (ties as in :func:`explore_uniformly`)."""
    return made + 1 <= uniform_budget(t, xi, max_share) * (1.0 + 1e-12)


# -- GP-UCB-CPD state (Algorithm 2) ----------------------------------------------------
def explore_uniformly(num_uniform: int, num_history: int, xi: float) -> bool:
    r"""Algorithm 2, line 6: explore uniformly iff :math:`|U| \le \xi\sqrt{|H|}`.
    Ties count as in exact arithmetic (a relative tolerance of 1e-12): with
    :math:`\xi = \sqrt 3`, :math:`|U| = |H| = 3` explores although
    ``math.sqrt(3) * math.sqrt(3)`` is 2.9999999999999996 in floating point."""
    return num_uniform <= xi * math.sqrt(num_history) * (1.0 + 1e-12)


@dataclass
class CPDState:
    """The state of GP-UCB-CPD after some steps: indices (into the record) of the
    history ``H`` and the uniformly sampled ``U``, the steps that restarted, and
    whether the next step explores uniformly."""

    history: list[int] = field(default_factory=list)
    uniform: list[int] = field(default_factory=list)
    restarts: list[int] = field(default_factory=list)  # steps (0-based) that reset
    detections: list[int] = field(default_factory=list)  # the n that fired

    def next_is_uniform(self, xi: float) -> bool:
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
