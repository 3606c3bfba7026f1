r"""Delayed, censored feedback (Verma, Dai & Low, ICML 2022): the bookkeeping of queries
and their late feedback (:class:`FeedbackLedger`, iteration or time clock), the
censored, *ignore* and *hallucinate* views of the targets, the delay distributions,
and the GP-UCB-SDF exploration terms. The censoring rule is written out in
``docs/algorithms.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import Tensor

from botorch_bandits.validation import (
    check_nonnegative,
    check_open_unit,
    check_positive,
    check_tensor,
)

Clock = Literal["iteration", "time"]


@dataclass
class Query:
    """One issued query: its point, when it was issued, and its feedback if any.

    Args:
        id: The query's index in its ledger, from 0.
        x: The query's point (any object the caller uses).
        issued_at: The step (iteration clock, from 1) or time it was issued.
        y: Its feedback, ``None`` (default) until it arrives.
        arrived_at: The step or time the feedback arrived, ``None`` until then.
    """

    id: int
    x: Any
    issued_at: float
    y: float | None = None
    arrived_at: float | None = None

    @property
    def delay(self) -> float | None:
        """``arrived_at - issued_at``, or ``None`` before the feedback arrives."""
        return None if self.arrived_at is None else self.arrived_at - self.issued_at


class FeedbackLedger:
    r"""Every query with its issue step or time, its feedback when it arrives, and the
    censoring window.

    Args:
        window: :math:`m \ge 0`, in iterations (``clock="iteration"``) or in time units
            (``clock="time"``); ``None`` for no censoring window (:math:`m = \infty`).
        y_min: The known minimum of :math:`f` (or a lower bound): the censored target
            (default 0; finite).
        clock: ``"iteration"`` (default: query :math:`s` is issued at step :math:`s`,
            counted from 1; ``window`` a whole number) or ``"time"`` (the caller
            gives times).

    Example:
        >>> ledger = FeedbackLedger(window=5, y_min=0.0)
        >>> s = ledger.issue(x=[0.3])  # step 1
        >>> ledger.receive(s, y=0.8, at=3)
        >>> ledger.censored_targets(now=2), ledger.censored_targets(now=4)
        (tensor([0.], dtype=torch.float64), tensor([0.8000], dtype=torch.float64))
    """

    def __init__(
        self, window: float | None, y_min: float = 0.0, clock: Clock = "iteration"
    ) -> None:
        if clock not in ("iteration", "time"):
            raise ValueError(
                f"`clock` must be 'iteration' or 'time', got clock={clock!r}."
            )
        if window is not None and not (float(window) >= 0 and math.isfinite(window)):
            raise ValueError(
                f"`window` (m) must be >= 0 or None, got window={window!r}."
            )
        if not math.isfinite(float(y_min)):
            raise ValueError(f"`y_min` must be finite, got y_min={y_min!r}.")
        if clock == "iteration" and window is not None and float(window) != int(window):
            raise ValueError(
                f"`window` must be a whole number of iterations, got window={window!r}."
            )
        self.window = None if window is None else float(window)
        self.y_min = float(y_min)
        self.clock = clock
        self.queries: list[Query] = []

    # ------------------------------------------------------------------ recording
    def issue(self, x: Any, at: float | None = None) -> int:
        """Record a new query.

        Args:
            x: The query's point.
            at: With the iteration clock the step (default ``None``: the next one,
                1, 2, ...; another value is refused); with the time clock the issue
                time, required, finite and not before the previous query's.

        Returns:
            The query's id (its index, from 0).
        """
        if self.clock == "iteration":
            step = len(self.queries) + 1
            if at is not None and at != step:
                raise ValueError(
                    f"With the iteration clock query {len(self.queries)} is issued at step "
                    f"{step}, got at={at!r}."
                )
            at = step
        else:
            if at is None or not math.isfinite(float(at)):
                raise ValueError(
                    f"The time clock needs a finite issue time `at`, got {at!r}."
                )
            if self.queries and at < self.queries[-1].issued_at:
                raise ValueError(
                    f"Issue times must not decrease: got at={at!r} after "
                    f"{self.queries[-1].issued_at!r}."
                )
        self.queries.append(Query(id=len(self.queries), x=x, issued_at=float(at)))
        return len(self.queries) - 1

    def receive(self, query_id: int, y: float, at: float) -> None:
        """Record the feedback ``y`` of query ``query_id`` arriving at step/time ``at``.
        Late feedback (after the window) is kept and reported, but never used.

        Args:
            query_id: The id :meth:`issue` returned (feedback once per query).
            y: The feedback, finite.
            at: The step or time it arrives, not before the query was issued.
        """
        if isinstance(query_id, bool) or not isinstance(query_id, int):
            raise ValueError(f"`query_id` must be an integer, got {query_id!r}.")
        if not 0 <= query_id < len(self.queries):
            raise ValueError(
                f"Feedback for unknown query {query_id}: {len(self.queries)} queries issued."
            )
        q = self.queries[query_id]
        if q.y is not None:
            raise ValueError(
                f"Duplicate feedback for query {query_id}: it already has y={q.y!r} "
                f"(arrived at {q.arrived_at!r})."
            )
        if not math.isfinite(float(y)):
            raise ValueError(f"`y` must be finite, got y={y!r} for query {query_id}.")
        if not float(at) >= q.issued_at:
            raise ValueError(
                f"Negative delay: query {query_id} was issued at {q.issued_at!r}, its "
                f"feedback cannot arrive at {at!r}."
            )
        q.y, q.arrived_at = float(y), float(at)

    # ------------------------------------------------------------------ views
    def _elapsed(self, q: Query, now: float) -> float:
        return now - q.issued_at

    def usable(self, q: Query, now: float) -> bool:
        r""":math:`d_s \le \min(m, \text{now} - s)`: the feedback has arrived by ``now``
        and within the window.

        Args:
            q: A query of this ledger.
            now: The decision's step (iteration clock) or time.

        Returns:
            Whether its feedback is usable at ``now``.
        """
        if q.delay is None or q.delay > self._elapsed(q, now):
            return False
        return self.window is None or q.delay <= self.window

    def issued_before(self, now: float) -> list[Query]:
        """Queries issued strictly before ``now`` (the model at decision ``now``).

        Args:
            now: The decision's step (iteration clock) or time.

        Returns:
            Those queries, in issue order.
        """
        return [q for q in self.queries if q.issued_at < now]

    def censored_targets(self, now: float) -> Tensor:
        r""":math:`\tilde y_{s,\text{now}}` for every query issued before ``now``:
        ``y`` where usable, else ``y_min``.

        Args:
            now: The decision's step (iteration clock) or time.

        Returns:
            A double tensor, one target per query of :meth:`issued_before`.
        """
        return torch.tensor(
            [
                q.y if self.usable(q, now) else self.y_min
                for q in self.issued_before(now)
            ],
            dtype=torch.double,
        )

    def pending(self, now: float) -> list[Query]:
        """Queries without usable feedback that can still become usable: not arrived
        by ``now`` and ``now - s < m`` (feedback arriving later has a delay above
        ``now - s``, so it is usable only if that is still below ``m``).

        Args:
            now: The decision's step (iteration clock) or time.

        Returns:
            Those queries, in issue order.
        """
        return [
            q
            for q in self.issued_before(now)
            if not self.usable(q, now)
            and (self.window is None or self._elapsed(q, now) < self.window)
            and (q.arrived_at is None or q.arrived_at > now)
        ]

    def expired(self, now: float) -> list[Query]:
        """Queries whose window closed without usable feedback (censored for good):
        ``now - s >= m`` and nothing usable by ``now``.

        Args:
            now: The decision's step (iteration clock) or time.

        Returns:
            Those queries, in issue order (none without a window).
        """
        return [
            q
            for q in self.issued_before(now)
            if self.window is not None
            and self._elapsed(q, now) >= self.window
            and not self.usable(q, now)
        ]

    def late(self) -> list[Query]:
        """Queries whose feedback arrived after their window: recorded, never used.

        Returns:
            Those queries, in issue order (none without a window).
        """
        return [
            q
            for q in self.queries
            if q.delay is not None and self.window is not None and q.delay > self.window
        ]

    def completed(self, now: float) -> list[Query]:
        """The *ignore* view: queries with usable feedback only.

        Args:
            now: The decision's step (iteration clock) or time.

        Returns:
            Those queries, in issue order.
        """
        return [q for q in self.issued_before(now) if self.usable(q, now)]

    def hallucinated_targets(
        self, now: float, completed_mean: Callable[[Sequence[Any]], Tensor]
    ) -> Tensor:
        """The *hallucinate* view (GP-BUCB / GP-BTS): every query issued before
        ``now`` with its feedback if usable, else the posterior mean of the
        completed-only model at its point (``completed_mean(points)``).

        Args:
            now: The decision's step (iteration clock) or time.
            completed_mean: Maps the list of points without usable feedback to a
                tensor of their posterior means (called only where there are any).

        Returns:
            A double tensor, one target per query of :meth:`issued_before`.
        """
        qs = self.issued_before(now)
        missing = [q for q in qs if not self.usable(q, now)]
        means = completed_mean([q.x for q in missing]) if missing else torch.empty(0)
        fill = dict(zip((q.id for q in missing), means.tolist(), strict=True))
        return torch.tensor(
            [q.y if self.usable(q, now) else fill[q.id] for q in qs], dtype=torch.double
        )


# --------------------------------------------------------------------------------------
# GP-UCB-SDF exploration terms
# --------------------------------------------------------------------------------------
def sdf_beta(
    gamma_prev: float, B_f: float, R: float, B_y: float, delta: float
) -> float:
    r""":math:`\beta_t = B_f + (R + B_y)\sqrt{2(\gamma_{t-1} + 1 + \log(2/\delta))}`
    (Verma et al. 2022, GP-UCB-SDF; linear unit: multiplies :math:`\sigma`).

    Args:
        gamma_prev: :math:`\gamma_{t-1} \ge 0`.
        B_f: RKHS-norm bound of :math:`f`, :math:`\ge 0`.
        R: Sub-Gaussian noise constant, :math:`\ge 0`.
        B_y: Bound on :math:`|y - y_{\min}|`, the censoring's scale, :math:`\ge 0`.
        delta: Confidence :math:`\delta \in (0, 1)`.

    Returns:
        :math:`\beta_t` (a float).
    """
    for name, value in (
        ("gamma_prev", gamma_prev),
        ("B_f", B_f),
        ("R", R),
        ("B_y", B_y),
    ):
        check_nonnegative(name, value)
    check_open_unit("delta", delta)
    return B_f + (R + B_y) * math.sqrt(2.0 * (gamma_prev + 1.0 + math.log(2.0 / delta)))


def sdf_inflation(recent_sigmas: Tensor, B_y: float) -> Tensor:
    r""":math:`B_y\sum_{s=t-m}^{t-1}\sigma_{t-1}(x_s)`: the extra exploration of
    GP-UCB-SDF for the (up to) ``m`` most recent queries, whose feedback may still be
    censored.

    Args:
        recent_sigmas: ``... x m`` posterior standard deviations (``>= 0``) at those
            queries under the current model.
        B_y: The censoring's scale :math:`B_y \ge 0`.

    Returns:
        ``...`` inflations :math:`B_y \sum_s \sigma_{t-1}(x_s)`.
    """
    check_nonnegative("B_y", B_y)
    check_tensor("recent_sigmas", recent_sigmas)
    if bool((recent_sigmas < 0).any()):
        raise ValueError("`recent_sigmas` are standard deviations and must be >= 0.")
    return B_y * recent_sigmas.sum(-1)


# --------------------------------------------------------------------------------------
# Delay distributions (Verma et al. 2022, §6: Poisson and fixed delays; geometric,
# exponential, input-dependent and synchronous-batch delays as further named options)
# --------------------------------------------------------------------------------------
class DelayDistribution:
    r"""A distribution of feedback delays :math:`d_s \ge 0`.

    ``sample(points, step, generator)`` returns one delay per row of ``points``
    (``S x d``: the query of each seed at query index ``step``, counted from 1), in the
    clock's unit (iterations or time). Subclasses implement ``_draw``; every draw is
    checked to be finite and non-negative, so a user-supplied rule cannot produce a
    negative delay silently.
    """

    mean: float | None = None

    def sample(self, points: Tensor, step: int, generator: torch.Generator) -> Tensor:
        """One delay per query.

        Args:
            points: ``S x d`` queries (one per seed) issued at ``step``.
            step: The query index, from 1.
            generator: The torch generator the draws use.

        Returns:
            ``S`` delays, finite and ``>= 0`` (else a ``ValueError``), of
            ``points``' dtype and device.
        """
        d = self._draw(points, step, generator)
        d = torch.as_tensor(d, dtype=points.dtype, device=points.device).expand(
            points.shape[:-1]
        )
        if not bool(torch.isfinite(d).all()) or bool((d < 0).any()):
            raise ValueError(
                f"{type(self).__name__} produced invalid delays {d.tolist()} at query "
                f"{step}: delays must be finite and >= 0."
            )
        return d

    def _draw(
        self, points: Tensor, step: int, generator: torch.Generator
    ) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def _uniform(points: Tensor, generator: torch.Generator) -> Tensor:
        return torch.rand(
            points.shape[:-1], generator=generator, dtype=points.dtype
        ).to(points.device)


class PoissonDelay(DelayDistribution):
    """Delays ~ Poisson(``mean``) iterations (the paper's experiments, §6).

    Args:
        mean: The Poisson mean, finite and ``> 0``.
    """

    def __init__(self, mean: float) -> None:
        self.mean = check_positive("mean", mean)

    def _draw(self, points, step, generator):
        rate = torch.full(points.shape[:-1], self.mean, dtype=points.dtype)
        return torch.poisson(rate, generator=generator).to(points.device)

    def __repr__(self) -> str:
        return f"PoissonDelay(mean={self.mean:g})"


class FixedDelay(DelayDistribution):
    """Every delay equals ``delay`` (the paper's deterministic setting, §6).

    Args:
        delay: The delay, finite and ``>= 0``.
    """

    def __init__(self, delay: float) -> None:
        self.mean = self.delay = check_positive("delay", delay, allow_zero=True)

    def _draw(self, points, step, generator):
        return torch.full(points.shape[:-1], self.delay, dtype=points.dtype)

    def __repr__(self) -> str:
        return f"FixedDelay({self.delay:g})"


class GeometricDelay(DelayDistribution):
    r"""Delays ~ Geometric(``p``) on :math:`\{0, 1, 2, ...\}` (failures before the
    first success): :math:`P(d = k) = (1-p)^k p`, mean :math:`(1-p)/p`.

    Args:
        p: The success probability, in :math:`(0, 1]` (1: every delay is 0).
    """

    def __init__(self, p: float) -> None:
        p = check_positive("p", p)
        if p > 1:
            raise ValueError(f"`p` must lie in (0, 1], got p={p!r}.")
        self.p, self.mean = p, (1 - p) / p

    def _draw(self, points, step, generator):
        if self.p == 1:
            return torch.zeros(points.shape[:-1], dtype=points.dtype)
        u = self._uniform(points, generator).clamp_min(torch.finfo(points.dtype).tiny)
        return torch.floor(torch.log(u) / math.log1p(-self.p))

    def __repr__(self) -> str:
        return f"GeometricDelay(p={self.p:g})"


class ExponentialDelay(DelayDistribution):
    """Continuous delays ~ Exponential with mean ``mean`` (for the time clock, App. A.4).

    Args:
        mean: The mean delay, finite and ``> 0``.
    """

    def __init__(self, mean: float) -> None:
        self.mean = check_positive("mean", mean)

    def _draw(self, points, step, generator):
        u = self._uniform(points, generator).clamp_min(torch.finfo(points.dtype).tiny)
        return -self.mean * torch.log(u)

    def __repr__(self) -> str:
        return f"ExponentialDelay(mean={self.mean:g})"


class InputDependentDelay(DelayDistribution):
    r"""Delays whose mean depends on the query: :math:`d \sim \text{Poisson}(g(x))` or
    Exponential with mean :math:`g(x)` -- e.g. a training run that takes longer for a
    larger model.

    Args:
        mean_fn: Maps ``S x d`` points to ``S`` finite means ``>= 0``.
        family: ``"poisson"`` (default) or ``"exponential"``.

    Example:
        >>> delays = InputDependentDelay(lambda X: 1 + 10 * X[..., 0], "exponential")
    """

    def __init__(
        self,
        mean_fn: Callable[[Tensor], Tensor],
        family: Literal["poisson", "exponential"] = "poisson",
    ) -> None:
        if not callable(mean_fn):
            raise ValueError(f"`mean_fn` must be callable, got {mean_fn!r}.")
        if family not in ("poisson", "exponential"):
            raise ValueError(
                f"`family` must be 'poisson' or 'exponential', got family={family!r}."
            )
        self.mean_fn, self.family = mean_fn, family

    def _draw(self, points, step, generator):
        mean = torch.as_tensor(self.mean_fn(points), dtype=points.dtype)
        mean = mean.expand(points.shape[:-1]).cpu()
        if not bool(torch.isfinite(mean).all()) or bool((mean < 0).any()):
            raise ValueError(
                f"`mean_fn` must return finite means >= 0, got {mean.tolist()}."
            )
        if self.family == "poisson":
            return torch.poisson(mean, generator=generator).to(points.device)
        u = (
            self._uniform(points, generator)
            .cpu()
            .clamp_min(torch.finfo(points.dtype).tiny)
        )
        return (-mean * torch.log(u)).to(points.device)

    def __repr__(self) -> str:
        return f"InputDependentDelay({self.family})"


class BatchDelay(DelayDistribution):
    r"""Synchronous batch BO as delayed feedback (Verma et al. 2022, §4): queries are
    made in batches of ``batch_size`` :math:`B_x`, and the feedback of a whole batch
    is usable at the first decision of the next batch. With the indicator
    :math:`\mathbb 1\{d_s \le t - s\}` the :math:`j`-th query of a batch
    (:math:`j = 0, ..., B_x - 1`) has delay :math:`d_s = B_x - j \in [1, B_x]`; a
    window :math:`m \ge B_x` never censors (:math:`\rho_m = 1`). (The paper writes
    :math:`d_s \le B_x - 1` and :math:`m = B_x - 1`, counting delays from 0: under
    this indicator a delay of 0 and of 1 are the same -- usable at the next decision.)

    Args:
        batch_size: :math:`B_x`, an integer ``>= 1``.
    """

    def __init__(self, batch_size: int) -> None:
        if (
            isinstance(batch_size, bool)
            or not isinstance(batch_size, int)
            or batch_size < 1
        ):
            raise ValueError(
                f"`batch_size` must be an integer >= 1, got batch_size={batch_size!r}."
            )
        self.batch_size = batch_size
        self.mean = (batch_size + 1) / 2

    def _draw(self, points, step, generator):
        j = (step - 1) % self.batch_size
        return torch.full(
            points.shape[:-1], float(self.batch_size - j), dtype=points.dtype
        )

    def __repr__(self) -> str:
        return f"BatchDelay({self.batch_size})"
