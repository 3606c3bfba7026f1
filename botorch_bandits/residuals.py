r"""The practical mode's change-point detector (``cpd_detector="residual"``, the
default with ``restarts=True``): the GP's one-step-ahead residuals on the trials
since the last restart (:func:`prequential_residuals`) and a rank test of the most
recent ones against the earlier ones (:func:`residual_change`), repeated without
the most extreme value when it is far from the rest, so that one value alone
is no change (:func:`robust_residual_change`). It needs no uniform step: it tests the data the
run already has, where a change shows -- the points the rule chose, whose values
the GP predicted."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from botorch_bandits.validation import check_open_unit

__all__ = [
    "MAX_RUN",
    "MIN_REFERENCE",
    "MIN_RUN",
    "ResidualTest",
    "far_from_the_rest",
    "prequential_residuals",
    "residual_change",
    "robust_residual_change",
]

#: the residual detector's runs: the last ``k`` residuals, MIN_RUN <= k <= MAX_RUN,
#: tested against at least MIN_REFERENCE earlier ones
MIN_RUN, MAX_RUN, MIN_REFERENCE = 3, 10, 10


def prequential_residuals(K: Tensor, y: Tensor, noise: float, mean: float) -> Tensor:
    r"""Each observation's standardized one-step-ahead residual under the GP
    :math:`y \sim N(\text{mean}, K + \text{noise}\, I)` in the order given:
    :math:`z_i = (y_i - E[y_i \mid y_{<i}]) / \mathrm{sd}(y_i \mid y_{<i})`, all at
    once as :math:`L^{-1}(y - \text{mean})` with :math:`L` the Cholesky factor of
    the covariance (the prequential residuals; iid :math:`N(0, 1)` when the model
    is right).

    Args:
        K: ``n x n`` prior kernel matrix of the observations' inputs.
        y: ``n`` observations, in the order they are tested (oldest first).
        noise: The noise variance added to the diagonal (jitter from ``1e-9`` up,
            by tens, where the Cholesky factor fails, as GPyTorch does).
        mean: The GP's constant prior mean.

    Returns:
        ``n`` standardized residuals :math:`z`.
    """
    n = y.shape[-1]
    S = K + noise * torch.eye(n, dtype=K.dtype)
    L, info = torch.linalg.cholesky_ex(S)
    jitter = 1e-9
    while int(info) != 0 and jitter < 1.0:  # as GPyTorch's psd_safe_cholesky
        L, info = torch.linalg.cholesky_ex(S + jitter * torch.eye(n, dtype=K.dtype))
        jitter *= 10.0
    r = (y - mean).reshape(-1, 1)
    return torch.linalg.solve_triangular(L, r, upper=False).reshape(-1)


@dataclass(frozen=True)
class ResidualTest:
    """The residual detector's verdict: whether it fires, the run length ``k``
    with the smallest p-value (the change's estimated start: ``k`` observations
    before the end), that p-value (Bonferroni-corrected over the runs tried) and
    the reference's size; ``outlier``: the position (in the residuals tested) of
    the value far from the rest that :func:`robust_residual_change` repeated the
    test without (``fired`` is then the repeat's verdict), else ``None``.

    Attributes:
        fired: Whether the detector fires.
        run: The run length ``k`` with the smallest p-value (``None`` where no run
            could be tried).
        p_value: That p-value, Bonferroni-corrected (1 where none was tried).
        reference: The number of earlier residuals the run was compared with.
        outlier: The position of the value left out, else ``None``.
    """

    fired: bool
    run: int | None
    p_value: float
    reference: int
    outlier: int | None = None


def residual_change(z: Tensor, false_alarm: float) -> ResidualTest:
    r"""Whether the latest one-step-ahead residuals ``z`` (:func:`prequential_residuals`,
    oldest first) show a change: for each run of the last ``k`` residuals
    (:data:`MIN_RUN` to :data:`MAX_RUN`, leaving at least :data:`MIN_REFERENCE`
    earlier ones), the rank test that every one of them is larger in magnitude
    than the earlier ones: with :math:`c` the earlier residuals at least as large as
    the run's smallest, :math:`p_k = ((c + 1) / (m + 1))^k` (:math:`m` earlier ones;
    exact for one residual under exchangeability, and for a run of independent
    ones), corrected over the runs tried (Bonferroni); fires when the smallest is at
    most ``false_alarm``. Compared with the run's own earlier residuals, not with
    :math:`N(0, 1)`: free of the GP's miscalibration, so a model that is
    overconfident all along does not fire. In the spirit of ET-GP-UCB (Brunzema
    et al., TMLR 2025: a reset triggered by the GP's own error on new data, no
    forced exploration); the rank form is ours.

    Args:
        z: ``n`` residuals, oldest first (fewer than ``MIN_RUN + MIN_REFERENCE``
            = 13: no run is tried and the test does not fire).
        false_alarm: The test's level, in ``(0, 1)``.

    Returns:
        The :class:`ResidualTest`.
    """
    check_open_unit("false_alarm", false_alarm)
    a = z.detach().abs().reshape(-1).tolist()
    n = len(a)
    runs = range(MIN_RUN, min(MAX_RUN, n - MIN_REFERENCE) + 1)
    if not runs:
        return ResidualTest(False, None, 1.0, max(0, n - MIN_RUN))
    best, best_k = math.inf, None
    for k in runs:
        ref, run = a[: n - k], a[n - k :]
        low = min(run)
        c = sum(v >= low for v in ref)
        p = ((c + 1) / (len(ref) + 1)) ** k
        if p < best:
            best, best_k = p, k
    p = min(1.0, best * len(runs))
    return ResidualTest(p <= false_alarm, best_k, p, n - best_k)


def far_from_the_rest(y: Tensor, i: int) -> bool:
    """Whether the observation ``y[i]`` is one value far from the rest: outside
    the range of the others by more than that range is wide (``y`` in any units:
    the answer is the same for ``a y + b``, ``a > 0``).

    Args:
        y: The observations, any shape (flattened).
        i: The position of the value tested.

    Returns:
        ``True`` where ``y[i]`` lies more than the others' range outside it
        (``False`` with no other value).
    """
    v = y.detach().reshape(-1).tolist()
    others = v[:i] + v[i + 1 :]
    if not others:
        return False
    low, high = min(others), max(others)
    width = high - low
    return v[i] > high + width or v[i] < low - width


def robust_residual_change(
    z: Tensor, false_alarm: float, y: Tensor, without: Callable[[int], Tensor]
) -> ResidualTest:
    r""":func:`residual_change` on the residuals ``z`` of the observations ``y``
    (same order), and a change only if it does not rest on one value. The rule:
    when the test fires and the observation farthest from the observations'
    median (position ``i``) is one value far from the rest
    (:func:`far_from_the_rest`), the test is repeated on ``without(i)``, the
    residuals recomputed with that observation left out (the caller standardizes the others alone and fits the model to them
    again, so the value neither conditions the later predictions nor sets the
    scale or the hyperparameters). The detector then fires only if the repeat
    fires too, and the repeat's run dates the change (its first observation, never
    the value left out); either way the verdict names the value (``outlier=i``).

    Why: a single wrong value (a corrupted report, f + 50) has a huge residual of
    its own, and through the scale it sets, the fit it bends (a large noise, long
    lengthscales) and the points it then sends the rule to, the trials after it
    are predicted worse than those before it; the rank test alone then fires on a
    run that begins with that value, and the model restarts there, keeping the
    wrong value and dropping the good trials before it. A real change leaves more
    than one value: a shift by a lot puts the later values out there too (the
    largest is then no longer far from the rest, and the test is not repeated), a
    change within the values' range is not far from the rest either, and a lone
    far value followed by a change is found once a run without it fires. Ours, a
    practical safeguard, not a paper's rule.

    Args:
        z: ``n`` residuals of ``y``, oldest first.
        false_alarm: The test's level, in ``(0, 1)``.
        y: The ``n`` observations the residuals are of (same order).
        without: Maps a position ``i`` to the ``n - 1`` residuals recomputed with
            observation ``i`` left out (called at most once).

    Returns:
        The :class:`ResidualTest` (``run`` and ``reference`` counted among all
        ``n`` observations).
    """
    test = residual_change(z, false_alarm)
    if not test.fired:
        return test
    # the most extreme observation, not the largest residual: a fit that a wrong
    # value bends may predict its neighbours worse than the value itself
    v = y.detach().reshape(-1)
    i = int(torch.argmax((v - v.median()).abs()))
    if not far_from_the_rest(y, i):
        return test
    again = residual_change(without(i), false_alarm)
    if not again.fired:
        return ResidualTest(False, test.run, test.p_value, test.reference, outlier=i)
    # the repeat's run, counted among all the observations (with the value left
    # out, when it lies after the run's first one)
    first = again.reference + (again.reference >= i)
    n = z.reshape(-1).shape[0]
    return ResidualTest(True, n - first, again.p_value, first, outlier=i)
