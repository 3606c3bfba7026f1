"""One decision's working state: the :class:`Round` the pipeline's steps read and
write (each step its own fields), the :class:`Decision` it ends with, and the
:class:`DecisionCache` that the decisions of one call may share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from torch import Tensor

from botorch_bandits.changepoint import ChangePointDetector
from botorch_bandits.core.domain import Domain
from botorch_bandits.core.fit import KnownNoise
from botorch_bandits.core.history import History, TrialRecord
from botorch_bandits.core.options import DecisionOptions
from botorch_bandits.hyperparameters import Hyperparameters
from botorch_bandits.models import FeatureCache
from botorch_bandits.models.forgetting import with_time
from botorch_bandits.scale_free import ScaleFreeDetector

__all__ = ["Decision", "DecisionCache", "Round", "Step", "Steps"]


@dataclass
class Decision:
    """A decision: its unit-cube point ``x``, its row in the decision set
    (``index``; ``None`` for an optimizer's point, then ``payload`` is what
    ``Domain.accept`` returned), whether it explores uniformly, and its metadata.

    Attributes:
        x: The decision's point, its ``d`` unit-cube coordinates.
        index: Its row in the decision set (``Domain.unit``), or ``None`` for a
            point of the gradient optimizer.
        payload: What ``Domain.accept`` returned for an optimizer's point (``None``
            for a row of the decision set).
        uniform: Whether it is a uniform-exploration step (GP-UCB-CPD).
        metadata: The decision's metadata (the round's ``meta``: each key written
            by one step).
    """

    x: list[float]
    index: int | None
    payload: Any
    uniform: bool
    metadata: dict[str, Any]

    @property
    def record(self) -> TrialRecord:
        """The decision as a trial issued in this call (for the next decision)."""
        return TrialRecord.issued(self.x, self.uniform)


@dataclass
class DecisionCache:
    """What decisions of one call may share: fits by their data, the detector. A
    cache only (pure functions of their keys), never state.

    Attributes:
        fits: The marginal-likelihood fits by their data (default empty).
        detector: GP-UCB-CPD's change-point detector, built by
            :func:`~botorch_bandits.core.steps.restarts.restart_step` on first use
            (default ``None``).
        features: The sparse model's feature blocks (may be kept across calls: a
            pure cache; default an empty :class:`FeatureCache`).
    """

    fits: dict[Any, dict[str, Any]] = field(default_factory=dict)
    detector: ChangePointDetector | ScaleFreeDetector | None = None
    # the sparse model's feature blocks (may be kept across calls: a pure cache)
    features: FeatureCache = field(default_factory=FeatureCache)


@dataclass
class Round:
    """The state of one decision as the steps build it. The inputs come first;
    each later field is written by one step of a pipeline (the one named beside its
    group; of a choice such as the pending views, the one the options pick) and read
    by the steps after it; ``meta``, the decision's metadata, takes each key from
    one step (``tests/test_round_slices.py``). Where a step refines an earlier
    step's result, it writes a field of its own and :attr:`targets`, :attr:`R_rule`
    and :attr:`rule` read the latest.

    Attributes:
        history: The trials (the inputs, as :meth:`begin` takes them: a warm start
            recorded for other inputs dropped).
        opts: The decision's options.
        domain: The search space (the trust region's step moves its raw samples).
        cache: What the decisions of one call may share.
        meta: The decision's metadata, each key from one step.
        active: The live trials, this call's earlier candidates last.
        position: This trial's position among them (0-based: ``len(active)``).

        start: Restarts (GP-UCB-CPD; ``restart_step`` / ``residual_step``): the
            position in ``active`` of the first trial of ``H`` (default 0).
        restart: The position of the last restart (default 0).
        uniform: Whether this decision explores uniformly (default ``False``).

        kappa: Long-term constraints (``multiplier_step``): the epoch's ``m``
            multipliers (default ``None``).
        g_scale: The constraints' ``m`` units (the practical mode; default
            ``None``: the values as given).

        g_model: ``constraint_model="separate"`` (``constraint_fit_step``): the
            constraints' GPs (a ``ModelList``; default ``None``).
        g_kappa: The ``m`` multipliers in the GPs' units (default ``None``).
        g_bounds: The ``m`` bounds in the GPs' units (default ``None``).

        busy: ``pending="ignore"`` (``exclude_in_flight``): the decision set's rows
            in flight (default empty).

        window_start: The data window (``window_step``): its first trial, a
            position in ``active`` (default 0).
        H: The trials the model sees (default empty).
        done: The completed ones among them (default empty).
        X0: Their ``n x d`` model inputs (the time column last under forgetting;
            default ``None``).
        Y0: Their ``n`` objective values (default ``None``).

        Y_composite: The targets: the ``n`` composite targets (``composite_step``;
            default ``None``).
        Y_model: The ``n`` standardized targets (``practical_fit_step``; default
            ``None``).
        m_f: The objective's own standardization's mean, before the composite
            (``composite_step``; default 0).
        s_f: Its spread (default 1).
        se: The ``n`` reported standard errors of the targets, NaN where none
            (``sems_step``; default ``None``).
        sems_rule: Their rule: ``"fixed"``, ``"add"`` or ``"none"`` (default
            ``"none"``).

        known: The model's known noise of the targets (the fit step; default
            ``None``).
        hyper: The model's hyperparameters (the fit step; default ``None``).
        R: The confidence's R (``opts.R`` from :meth:`begin`, else the practical
            fit's; default ``None``).
        delta: The confidence's delta (``opts.delta``; the epoch's from
            ``epoch_step``; default 0.1).

        R_epoch: Long-term constraints' epoch (``epoch_step``): R of the composite
            target (default ``None``).
        y_min: The censoring's ``y_min``, as maximized and in the model's units
            (the practical fit maps it under ``pending="censor"``; default 0).
        B_y: The censoring's ``B_y``, in the model's units (default 1; ``None``:
            the practical default).

        evaluated: ``repeats="avoid"`` (``repeats_step``): the points not to propose
            again (default ``None``: the step did not run or the fit is noisy).
        apart: ``(points in flight, lengthscales)`` to keep apart from (default
            ``None``: likewise, or none in flight).

        X: The pending view: the model's inputs, one row per model row (running
            trials ignored, hallucinated or censored; default ``None``).
        Y: The model's targets, one per row (default ``None``).
        rows_known: The known noise of its rows (default ``None``).
        recent: The recent queries, censoring's :math:`\\nu_t` (default ``None``).

        model: The model (``model_step``; default ``None``).
        gradient: Whether the rule is maximized by gradient (default ``False``).
        acqf: The rule on it (the rule's step; default ``None``).
        penalized: The rule as the constraints' penalty (``penalty_step``; default
            ``None``).
        timed: The rule at the decision's time (``time_step``, forgetting; default
            ``None``).
        local: The rule in the trust region (``trust_region_step``; default
            ``None``).
        scores: The rule's ``N`` scores on the decision set, ``-inf`` where kept
            out (``score_step``; default ``None``).
        kept_out: The points the maximizer keeps out (default empty).
        kept_apart: ``(points in flight, lengthscales)`` the maximizer keeps apart
            from (default ``None``).
    """

    history: History
    opts: DecisionOptions
    domain: Domain
    cache: DecisionCache
    meta: dict[str, Any]
    active: list[TrialRecord]  # the live trials, this call's earlier candidates last
    position: int  # this trial's position among them
    # restarts (GP-UCB-CPD): the first trial of H, the last restart, uniform or not
    start: int = 0
    restart: int = 0
    uniform: bool = False
    # long-term constraints: the epoch's multipliers and the constraints' units
    kappa: Tensor | None = None
    g_scale: Tensor | None = None
    # constraint_model="separate": the constraints' GPs, the multipliers and
    # bounds in their units
    g_model: Any = None
    g_kappa: Tensor | None = None
    g_bounds: Tensor | None = None
    # pending="ignore": the decision set's rows in flight
    busy: list[int] = field(default_factory=list)
    # the data window: its first trial, the trials the model sees, the completed
    # ones, their data (the objective's values)
    window_start: int = 0
    H: list[TrialRecord] = field(default_factory=list)
    done: list[TrialRecord] = field(default_factory=list)
    X0: Tensor | None = None
    Y0: Tensor | None = None
    # the targets: composite (composite_step, with the objective's own
    # standardization), standardized (practical_fit_step); the reported standard
    # errors and their rule (sems_step)
    Y_composite: Tensor | None = None
    Y_model: Tensor | None = None
    m_f: float = 0.0
    s_f: float = 1.0
    se: Tensor | None = None
    sems_rule: str = "none"
    # the model's hyperparameters and noise, the confidence's R and delta, the
    # censoring constants in the model's units
    known: KnownNoise | None = None
    hyper: Hyperparameters | None = None
    R: float | None = None
    delta: float = 0.1
    # long-term constraints' epoch (epoch_step): R of the composite target
    R_epoch: float | None = None
    y_min: float = 0.0
    B_y: float | None = 1.0
    # repeats="avoid": the points not to propose again, and those to keep apart from
    # (None: the step did not run or the fit is noisy)
    evaluated: list[list[float]] | None = None
    apart: tuple[Tensor, Tensor] | None = None
    # the pending view: the model's data (running trials ignored, hallucinated or
    # censored), its rows' known noise, the recent queries (censoring's nu_t)
    X: Tensor | None = None
    Y: Tensor | None = None
    rows_known: KnownNoise | None = None
    recent: Tensor | None = None
    # the model, the rule on it (the rule's step), the rule as the constraints'
    # penalty, forgetting's time and the trust region wrap it (a field each), its
    # scores on the decision set and the points the maximizer keeps out and apart
    # from (score_step)
    model: Any = None
    gradient: bool = False
    acqf: Any = None
    penalized: Any = None
    timed: Any = None
    local: Any = None
    scores: Tensor | None = None
    kept_out: list[list[float]] = field(default_factory=list)
    kept_apart: tuple[Tensor, Tensor] | None = None

    @classmethod
    def begin(
        cls,
        history: History,
        opts: DecisionOptions,
        domain: Domain,
        cache: DecisionCache,
    ) -> Round:
        """A round on ``history`` with the metadata every decision records
        (``algorithm``, ``pending_view``, ``t``, ``failed``, ``decision_set_size``;
        ``fixed_features`` and ``out_of_design`` where there are any). A warm start
        recorded for other inputs (with(out) forgetting, another search space) is
        dropped.

        Args:
            history: The trials so far (this call's earlier candidates last).
            opts: The decision's options.
            domain: The search space.
            cache: What the decisions of one call may share.

        Returns:
            The round, its inputs set, ``R`` and ``delta`` from ``opts``, and
            ``y_min`` (as maximized) and ``B_y`` from its censoring options.

        Example:
            >>> domain = Domain.box(torch.rand(64, 2, dtype=torch.double))
            >>> opts = DecisionOptions.from_kwargs()
            >>> r = Round.begin(History(), opts, domain, DecisionCache())
        """
        active = list(history.trials)
        position = len(active)
        warm = history.warm
        if warm is not None and len(warm.lengthscale) != domain.dim + opts.forgetting:
            # a fit recorded for other inputs (with(out) forgetting, another
            # search space): not this model's warm start
            history = replace(history, warm=None, last_fit=None, constraint_fits=None)
        meta: dict[str, Any] = {
            "algorithm": opts.algorithm,
            "pending_view": opts.pending,
            "t": position + 1,
            "failed": len(history.failed),
            "decision_set_size": int(domain.unit.shape[0]),
        }
        if history.fixed:
            meta["fixed_features"] = dict(history.fixed)
        if history.out_of_design:  # left out of the model, as Ax's models leave them
            meta["out_of_design"] = len(history.out_of_design)
        cens = opts.censoring
        return cls(
            history=history,
            opts=opts,
            domain=domain,
            cache=cache,
            meta=meta,
            active=active,
            position=position,
            R=opts.R,
            delta=opts.delta,
            # the user's units and direction to the maximized values'
            y_min=history.sign * cens.y_min,
            B_y=cens.B_y,
        )

    @property
    def targets(self) -> Tensor | None:
        """The completed trials' targets as the latest step made them: standardized,
        else composite, else the objective's values (``n``)."""
        for Y in (self.Y_model, self.Y_composite):
            if Y is not None:
                return Y
        return self.Y0

    @property
    def R_rule(self) -> float | None:
        """The rule's R: the epoch's (long-term constraints), else the model's."""
        return self.R if self.R_epoch is None else self.R_epoch

    @property
    def rule(self) -> Any:
        """The rule as the latest step wrapped it: in the trust region, at the
        decision's time, as the constraints' penalty, else the rule's own."""
        for acqf in (self.local, self.timed, self.penalized):
            if acqf is not None:
                return acqf
        return self.acqf

    def inputs(self, records: list[TrialRecord]) -> Tensor:
        """The model's inputs for ``records`` (trials of ``active``): their points,
        and under ``forgetting`` their times (positions in ``active``) last.

        Args:
            records: Trials of ``active`` (each found by identity under
                ``forgetting``).

        Returns:
            The ``len(records) x d`` points (``d + 1`` columns under
            ``forgetting``).
        """
        d = self.domain.dim
        X = torch.tensor([list(e.x) for e in records], dtype=torch.double)
        X = X.reshape(-1, d)
        if not self.opts.forgetting:
            return X
        at = {id(e): i for i, e in enumerate(self.active)}
        return with_time(X, [at[id(e)] for e in records])

    def on_set(self, row: int, uniform: bool = False) -> Decision:
        """The decision of the decision set's ``row``.

        Args:
            row: The row of ``domain.unit``.
            uniform: Whether it is a uniform-exploration step (default ``False``).

        Returns:
            The :class:`Decision`, with the round's metadata.
        """
        return Decision(self.domain.unit[row].tolist(), row, None, uniform, self.meta)

    @property
    def sparse(self) -> dict[str, Any]:
        """The sparse model's arguments of :func:`~botorch_bandits.core.fit.build_model`
        (the same for the model of the hallucinated trials and the decision's)."""
        opts = self.opts
        return {
            "sparse_after": opts.sparse_after,
            "seed": opts.seed,
            "sparse_size": opts.sparse_size,
            "cache": self.cache.features,
            # the dictionary's rows by the completed trials
            "completed": len(self.done),
        }


#: a step reads and writes its fields of the round; a step that decides (a uniform
#: draw, the maximizer) returns the decision and ends the round
Step = Callable[[Round], "Decision | None"]

#: a feature's steps under the options, by the place each takes in the pipeline
#: (:data:`~botorch_bandits.core.decide.PLACES`); empty where the feature is off
Steps = dict[str, Step]
