"""Summaries over seeds: the mean and standard error of a batch of runs, as the
benchmarks' tables and plots report them, as table text, and the heading of a
table of kept jobs (their code fingerprints)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

__all__ = ["kept_jobs_heading", "mean_and_standard_error", "mean_se_text"]


def mean_and_standard_error(
    runs: Tensor | np.ndarray,
) -> tuple[Tensor, Tensor] | tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over the first (seed) dimension of ``seeds x T``;
    the standard error is 0 for a single seed. A NumPy array gives arrays (computed
    by the same torch code)."""
    if not isinstance(runs, Tensor):
        mean, se = mean_and_standard_error(torch.as_tensor(np.asarray(runs)))
        return mean.numpy(), se.numpy()
    mean = runs.mean(0)
    if runs.shape[0] < 2:
        return mean, torch.zeros_like(mean)
    return mean, runs.std(0, unbiased=True) / math.sqrt(runs.shape[0])


def mean_se_text(values: Sequence[float], digits: int) -> str:
    """``"mean ± s.e."`` of ``values`` over seeds with ``digits`` decimals, NaNs
    left out (one value: itself; none: ``"-"``)."""
    v = [x for x in values if not math.isnan(x)]
    if not v:
        return "-"
    if len(v) < 2:
        return f"{v[0]:.{digits}f}"
    se = float(np.std(v, ddof=1) / math.sqrt(len(v)))
    return f"{float(np.mean(v)):.{digits}f} ± {se:.{digits}f}"


def kept_jobs_heading(
    title: str, jobs: Sequence[dict[str, Any]], fingerprint: Callable[[str], str]
) -> list[str]:
    """A Markdown heading ``title`` and the kept ``jobs``' count and code
    fingerprints (after the versions of Ax, BoTorch, GPyTorch and torch), with how
    many match ``fingerprint(strategy)`` now."""
    codes = sorted({" ".join(j["code"].split()[8:]) for j in jobs})
    current = sum(j["code"] == fingerprint(j["strategy"]) for j in jobs)
    return [
        f"### {title}",
        "",
        f"{len(jobs)} jobs; code fingerprints {', '.join(codes)} ({current} "
        "of the current code).",
        "",
    ]
