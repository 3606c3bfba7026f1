r"""The practical mode's change-point detector (``cpd_detector="residual"``, the
default with ``restarts=True``): the GP's one-step-ahead residuals on the trials
since the last restart (:func:`prequential_residuals`) and a rank test of the most
recent ones against the earlier ones (:func:`residual_change`). It needs no
uniform step: it tests the data the run already has, where a change shows -- the
points the rule chose, whose values the GP predicted."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from botorch_bandits.validation import check_open_unit

__all__ = [
    "MAX_RUN",
    "MIN_REFERENCE",
    "MIN_RUN",
    "ResidualTest",
    "prequential_residuals",
    "residual_change",
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
    is right)."""
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
    the reference's size."""

    fired: bool
    run: int | None
    p_value: float
    reference: int


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
    forced exploration); the rank form is ours."""
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
