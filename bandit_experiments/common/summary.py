"""Summaries over seeds as the benchmarks' tables print them: mean ± s.e. as text,
and the heading of a table of kept jobs (their code fingerprints). The mean and
standard error themselves: :func:`botorch_bandits.demo.summary.mean_and_standard_error`."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["kept_jobs_heading", "mean_se_text"]


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
