r"""The scale-free change-point detector of the practical mode
(``cpd_detector="scale-free"``): Avanesov's Algorithm 1 on the standardized uniform
values, its Matérn-5/2 lengthscale chosen by leave-one-out cross-validation
(:func:`loo_cv`, :func:`matern52`) and its threshold from fixed reorderings of the
uniform steps (:class:`ScaleFreeDetector`). GP-UCB-CPD's state, the paper's detector
and the integration domains are in :mod:`botorch_bandits.changepoint`; the test is
written out in ``docs/algorithms.md``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from botorch_bandits.changepoint import check_scan_data
from botorch_bandits.models.practical import standardize
from botorch_bandits.validation import check_open_unit, check_positive, check_round

#: the scale-free detector's cross-validation grid: Matérn-5/2 lengthscales (times
#: sqrt(d), on the unit cube) and nuggets (noise over signal variance)
CV_LENGTHSCALES: tuple[float, ...] = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
CV_NUGGETS: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0)
#: the fewest uniform values the scale-free detector tests (fewer: no scan)
MIN_SCAN = 4
#: the scale-free detector's scans by their settings and data (a cache)
_SCANS: dict[tuple, tuple[int | None, dict]] = {}


def matern52(A: np.ndarray, B: np.ndarray, lengthscale: float) -> np.ndarray:
    r"""The Matérn-5/2 kernel (unit variance) between the rows of ``A`` and ``B``:
    :math:`(1 + r + r^2/3)\,e^{-r}` with :math:`r = \sqrt 5\,\lVert a - b\rVert / \ell`.

    Args:
        A: ``n x d`` points (NumPy).
        B: ``m x d`` points (NumPy).
        lengthscale: The lengthscale :math:`\ell > 0` (not checked).

    Returns:
        The ``n x m`` kernel matrix.

    Example:
        >>> K = matern52(X, X, lengthscale=0.2)
    """
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
    grid's order; a grid point whose matrix cannot be factorized is skipped.

    Args:
        X: ``n x d`` points (NumPy).
        z: Their ``n`` values (the detector's standardized ones).
        lengthscales: The Matérn-5/2 (:func:`matern52`) lengthscales to try, in
            order (the outer loop).
        nuggets: The nuggets :math:`\lambda` to try with each lengthscale, in order.

    Returns:
        ``(lengthscale, nugget, score)``: the grid point of the smallest mean squared
        held-out residual and that score; ``(nan, nan, inf)`` where no grid point's
        matrix could be factorized.

    Example:
        >>> ell, lam, score = loo_cv(X, z, [0.1, 0.2, 0.4], [1e-3, 1e-2])
    """
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
        """As :meth:`~botorch_bandits.changepoint.ChangePointDetector.scan` (``gram``
        and ``kernel_matrix`` are not used: the kernel is chosen at each scan); the
        fit and the scan's p-value are kept in ``last_``. Fewer than
        :data:`MIN_SCAN` values, or values without spread, are not scanned
        (``last_`` stays ``None``); a scan is cached by its settings and data.

        Args:
            X: The ``m x d`` uniformly sampled points (on the unit cube), oldest
                first.
            y: Their ``m`` values.
            gram: Not used (default ``None``).
            kernel_matrix: Not used (default ``None``).

        Returns:
            The number of values after the split that scored highest, where the
            scan's p-value is at most ``false_alarm``; else ``None`` (no change).

        Raises:
            ValueError: If ``X`` or ``y`` has a NaN or infinite value.

        Example:
            >>> det = ScaleFreeDetector(dom.points, dom.weights, d=2)
            >>> n = det.scan(X_uniform, y_uniform)
        """
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
        # the exponent's rate (2 alpha + d) / (2 alpha + d + 1), as in changepoint
        return (2 * self.alpha + self.d) / (2 * self.alpha + self.d + 1)


def _split_statistics(
    K: np.ndarray, G: np.ndarray, z: np.ndarray, order: np.ndarray, c: float, r: float
) -> np.ndarray:
    r""":math:`\hat\Delta^2` (as ``changepoint._delta2``, each part's nugget
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


def _numpy(v: Tensor) -> np.ndarray:
    return np.asarray(v.detach().cpu(), dtype=float)
