"""What the benchmarks' plots share: matplotlib's pyplot on the file-only Agg
backend, and a log axis labelled with plain numbers."""

from __future__ import annotations

from typing import Any


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (files only, no window)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plain_log_ticks(axis: Any) -> None:
    """A log axis labelled 0.05, 0.1, 0.2, 0.5 instead of 5×10⁻², 10⁻¹, 2×10⁻¹.

    Args:
        axis: The matplotlib axis on a log scale (e.g. ``ax.yaxis``): its major
            ticks at 1, 2 and 5 times the powers of ten, its minor ticks unlabelled.

    Example:
        >>> ax.set_yscale("log")
        >>> plain_log_ticks(ax.yaxis)
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


__all__ = ["plain_log_ticks", "pyplot"]
