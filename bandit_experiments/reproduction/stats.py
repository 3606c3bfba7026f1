"""Statistics over runs: paired differences of final values (common random numbers)
and power-law exponents fitted to the means or to each run."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import curve_fit
from scipy.stats import t as student_t
from torch import Tensor


def _t975(df: int) -> float:
    return float(student_t.ppf(0.975, df))


@dataclass(frozen=True)
class Paired:
    """Mean and s.e. of ``a - b`` over runs."""

    mean: float
    se: float
    n: int

    def __str__(self) -> str:
        if max(abs(self.mean), self.se) >= 100:
            return f"{self.mean:+.0f} ± {self.se:.0f}"
        return f"{self.mean:+.4g} ± {self.se:.2g}"

    @classmethod
    def of(cls, diffs: Sequence[float]) -> Paired:
        """Mean and standard error of the per-run differences ``diffs``."""
        n = len(diffs)
        mean = sum(diffs) / n
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
        return cls(mean, math.sqrt(var / n), n)

    @property
    def a_better(self) -> bool:  # lower is better
        return self.mean < -2 * self.se

    @property
    def b_better(self) -> bool:
        return self.mean > 2 * self.se


@dataclass(frozen=True)
class Exponent:
    """A power-law exponent with its 95 % confidence interval."""

    value: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.value:.3f} ({self.low:.3f}, {self.high:.3f})"


def exponent_of_means(xs: Sequence[float], ys: Sequence[float]) -> Exponent:
    """The fit of :math:`C x^c` to the mean final regrets (as the paper fits its
    curves; :func:`fit_power_law`)."""
    law = fit_power_law(list(xs), list(ys))
    return Exponent(law.c, *law.ci)


def exponent_per_run(xs: Sequence[float], runs: Sequence[Sequence[float]]) -> Exponent:
    r"""The exponent fitted on individual runs: for every run (seed) ``s`` the
    least-squares slope of :math:`\log R^{(s)}` on :math:`\log x` over the sweep
    (``runs[i][s]`` is run ``s`` at ``xs[i]``; one seed is one function draw across the
    sweep, so the fit is per run), then the mean slope with the 95 % interval
    :math:`\bar c \pm t_{0.975, n-1}\,\mathrm{sd}/\sqrt n` over runs."""
    lx = [math.log(x) for x in xs]
    mx = sum(lx) / len(lx)
    sxx = sum((v - mx) ** 2 for v in lx)
    slopes = []
    for s in range(min(len(r) for r in runs)):
        ly = [math.log(max(r[s], 1e-12)) for r in runs]
        my = sum(ly) / len(ly)
        slopes.append(
            sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sxx
        )
    n = len(slopes)
    mean = sum(slopes) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in slopes) / (n - 1)) if n > 1 else 0.0
    half = _t975(n - 1) * sd / math.sqrt(n) if n > 1 else math.inf
    return Exponent(mean, mean - half, mean + half)


@dataclass(frozen=True)
class PowerLaw:
    r""":math:`y \approx C x^c` with a 95 % confidence interval for ``c``."""

    C: float
    c: float
    ci: tuple[float, float]

    def __str__(self) -> str:
        return f"{self.C:.3g} x^{self.c:.3f} (95% CI for the exponent: {self.ci[0]:.3f}, {self.ci[1]:.3f})"


def fit_power_law(x: Tensor | list[float], y: Tensor | list[float]) -> PowerLaw:
    r"""Least-squares fit of :math:`C x^c` to the points ``(x, y)`` (the mean regret per
    horizon or per number of pieces), as the paper fits its Figs. 1 and 2; the CI is
    :math:`\hat c \pm t_{0.975, n-2}\,\mathrm{se}(\hat c)` from the fit's covariance."""

    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    if xs.shape != ys.shape or xs.size < 3:
        raise ValueError(
            f"`x` and `y` must have the same length >= 3, got {xs.size} and {ys.size}."
        )
    if not (np.all(xs > 0) and np.all(ys > 0)):
        raise ValueError("`x` and `y` must be positive for a power law.")
    # start from the log-log line, then fit in the original scale
    slope, intercept = np.polyfit(np.log(xs), np.log(ys), 1)
    (C, c), cov = curve_fit(
        lambda v, C, c: C * v**c, xs, ys, p0=(math.exp(intercept), slope), maxfev=20000
    )
    half = student_t.ppf(0.975, xs.size - 2) * math.sqrt(cov[1, 1])
    return PowerLaw(float(C), float(c), (float(c - half), float(c + half)))
