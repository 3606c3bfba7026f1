"""The delayed-feedback simulator's result, :class:`DelayedResult` (what
:func:`~botorch_bandits.test_functions.delayed.simulate_delayed` returns): the
per-step records of one policy on a batch of seeds and the metrics read from them --
the simple regret of the converted evaluations (or of those usable within the
window), the best value found, the cumulative and average regret. docs/reproducing.md
("The simulators") describes the metrics."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["DELAYED_METRICS", "DelayedResult"]


@dataclass
class DelayedResult:
    """Per-step records of one policy on a batch of seeds (``T x S`` unless noted).

    Attributes:
        problem: The problem's name.
        algorithm: The policy's name (a key of
            :data:`~botorch_bandits.test_functions.delayed.DELAYED_POLICIES`).
        arms: ``T x S`` indices of the queried arms.
        values: ``T x S`` true values of the queries.
        observations: ``T x S`` noisy observations of them.
        delays: ``T x S`` feedback delays.
        issue_times: ``T`` issue times of the queries.
        arrival_times: ``T x S`` arrival times of their feedback (issue + delay).
        optimum: ``T x S``: the optimum of each step's context (``f*`` without
            contexts).
        worst: ``S``: ``min f`` (the simple regret before anything has converted).
        window: The censoring window ``m`` (``None``: no window).
        late: ``T x S`` bool: feedback that arrived after the window (SDF: unused).
        censoring: Whether the run used the SDF (censored) view, where the window
            applies (default ``False``).
    """

    problem: str
    algorithm: str
    arms: Tensor
    values: Tensor
    observations: Tensor
    delays: Tensor
    issue_times: Tensor  # T
    arrival_times: Tensor
    optimum: Tensor  # T x S: the optimum of each step's context (f* without contexts)
    worst: Tensor  # S: min f (the simple regret before anything has converted)
    window: float | None
    late: Tensor  # T x S bool: feedback that arrived after the window (SDF: unused)
    censoring: bool = False  # the SDF view (the window applies)

    def converted(self, step: int) -> Tensor:
        """``step x S`` bool: which of queries ``1..step`` have their feedback by the
        decision after ``step``.

        The decision after ``step`` is at the issue time of query ``step + 1`` (after
        the last query: one issue interval later).

        Args:
            step: The number of queries issued, in ``0..T``.

        Returns:
            The ``step x S`` bool mask: arrival time <= the decision's time.

        Example:
            >>> res.converted(res.values.shape[0]).double().mean()  # at the end
        """
        T = self.values.shape[0]
        now = (
            self.issue_times[step]
            if step < T
            else self.issue_times[-1] + self._interval()
        )
        return self.arrival_times[:step] <= now

    def _interval(self) -> Tensor:
        if self.issue_times.numel() > 1:
            return self.issue_times[-1] - self.issue_times[-2]
        return torch.ones((), dtype=self.issue_times.dtype)

    def _simple_regret(self, counted: Callable[[int], Tensor]) -> Tensor:
        """``T x S``: :math:`f^*` minus the best value among the queries that
        ``counted(t)`` (``t x S`` bool) marks after step ``t`` (``f* - min f`` while
        none is)."""
        T = self.values.shape[0]
        rows = []
        for t in range(1, T + 1):
            best = torch.where(counted(t), self.values[:t], -math.inf).max(0).values
            best = torch.where(torch.isfinite(best), best, self.worst)
            rows.append(self.optimum[t - 1] - best)
        return torch.stack(rows)

    @property
    def simple_regret(self) -> Tensor:
        r"""``T x S``: :math:`f^*` minus the best converted evaluation after each step."""
        return self._simple_regret(self.converted)

    @property
    def simple_regret_in_window(self) -> Tensor:
        r"""``T x S``: as :attr:`simple_regret`, but an SDF method's evaluation counts
        only once its feedback is usable -- arrived *and* :math:`d_s \le m` -- the
        measure of the authors' code (late feedback, recorded but never used, does
        not count). Equal to :attr:`simple_regret` for the baselines (no window)."""
        if not self.censoring or self.window is None:
            return self.simple_regret
        return self._simple_regret(lambda t: self.converted(t) & ~self.late[:t])

    @property
    def best_value(self) -> Tensor:
        """``T x S``: the best converted true value after each step (e.g. the best
        validation accuracy found so far); :math:`f^* - r_t` without contexts."""
        return self.optimum - self.simple_regret

    @property
    def cumulative_regret(self) -> Tensor:
        return (self.optimum - self.values).cumsum(0)

    @property
    def average_regret(self) -> Tensor:
        steps = torch.arange(1, self.values.shape[0] + 1, dtype=self.values.dtype)
        return self.cumulative_regret / steps.unsqueeze(-1)

    def metric(self, name: str) -> Tensor:
        """A metric by name.

        Args:
            name: One of :data:`DELAYED_METRICS` (``"simple_regret"``,
                ``"simple_regret_in_window"``, ``"best_value"``,
                ``"cumulative_regret"``, ``"average_regret"``).

        Returns:
            The ``T x S`` metric.

        Raises:
            ValueError: If ``name`` is not one of :data:`DELAYED_METRICS`.

        Example:
            >>> res.metric("simple_regret_in_window")[-1].mean()
        """
        if name not in DELAYED_METRICS:
            raise ValueError(
                f"`metric` must be one of {DELAYED_METRICS}, got {name!r}."
            )
        return getattr(self, name)


DELAYED_METRICS = (
    "simple_regret",
    "simple_regret_in_window",
    "best_value",
    "cumulative_regret",
    "average_regret",
)
"""The metrics of :meth:`DelayedResult.metric`, by name (each ``T x S``)."""
