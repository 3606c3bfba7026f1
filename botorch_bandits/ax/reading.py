"""The Ax side of a decision: an experiment read into the decision core's
:class:`~botorch_bandits.core.History` (every trial checked, nothing dropped
silently), the outcome constraints as long-term constraints, and the search space
as the core's :class:`~botorch_bandits.core.Domain`."""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any

import torch
from ax.core.data import Data
from ax.core.experiment import Experiment
from ax.core.optimization_config import MultiObjectiveOptimizationConfig
from ax.core.parameter import RangeParameter
from ax.core.trial_status import TrialStatus
from ax.core.types import ComparisonOp

from botorch_bandits.ax.space import DecisionSet, Space
from botorch_bandits.core import Domain, History, TrialRecord
from botorch_bandits.core.steps.restarts import drift_state
from botorch_bandits.hyperparameters import Hyperparameters

_GONE = (TrialStatus.FAILED, TrialStatus.ABANDONED)
#: an outcome constraint as (metrics, weights, sign, bound): g = s (sum w m - b) <= 0
Constraint = tuple[list[str], list[float], float, float]


def outcome_constraints(opt: Any, long_term: bool) -> list[Constraint]:
    r"""The outcome constraints as :data:`Constraint` tuples; refused without
    ``long_term`` (never ignored silently).

    Args:
        opt: The experiment's optimization config (its ``outcome_constraints``).
        long_term: Whether the node runs long-term constraints
            (``long_term_constraints=True``).

    Returns:
        One ``(metrics, weights, sign, bound)`` tuple per constraint,
        :math:`g = s(\sum w m - b) \le 0` (``s = 1`` for ``<=``, -1 for ``>=``);
        an empty list without ``long_term`` (the experiment then has none).

    Raises:
        ValueError: Outcome constraints without ``long_term``, a relative
            constraint, or ``long_term`` without outcome constraints.
    """
    cons = list(opt.outcome_constraints)
    if not long_term:
        if cons:
            raise ValueError(
                f"The experiment has the outcome constraints "
                f"{[c.expression for c in cons]}, and BanditNode was built with "
                "long_term_constraints=False, which would ignore them. Set "
                "long_term_constraints=True (they then hold on average over the "
                "run: Shi & Eryilmaz 2022) or remove them from the optimization "
                "config."
            )
        return []
    out = []
    for c in cons:
        if c.relative:
            raise ValueError(
                f"Long-term constraints must be absolute, got the relative "
                f"constraint {c.expression!r}."
            )
        weights = [w for _, w in c.metric_weights]
        s = 1.0 if c.op == ComparisonOp.LEQ else -1.0
        out.append((c.metric_names, weights, s, float(c.bound)))
    if not out:
        raise ValueError(
            "`long_term_constraints=True` needs outcome constraints on the "
            "experiment (e.g. configure_optimization(..., "
            "outcome_constraints=['g <= 0'])); it has none."
        )
    return out


def check_sem(trial: int, metric: str, sem: float) -> None:
    """A reported standard error must be finite and >= 0 (NaN: not reported).

    Args:
        trial: The trial's index (for the message).
        metric: The metric's name (for the message).
        sem: The reported standard error (SEM).

    Raises:
        ValueError: A negative or infinite SEM.
    """
    if not (math.isnan(sem) or (math.isfinite(sem) and sem >= 0)):
        raise ValueError(
            f"Trial {trial} has the standard error (SEM) {sem!r} for the metric "
            f"{metric!r}: an SEM must be finite and >= 0, or left out (NaN: "
            "unknown, the model's noise applies). Attach the data again with a "
            "valid SEM (raw_data={'name': (mean, sem)}) or without one."
        )


def check_value(trial: int, metric: str, value: float) -> None:
    """A trial's metric value must be finite (NaN / inf would freeze the GP).

    Args:
        trial: The trial's index (for the message).
        metric: The metric's name (for the message).
        value: The trial's value of the metric.

    Raises:
        ValueError: A NaN or infinite value.
    """
    if not math.isfinite(value):
        raise ValueError(
            f"Trial {trial} has the non-finite value {value!r} for the metric "
            f"{metric!r}: BanditNode needs finite values. Attach a finite value or "
            f"mark the trial abandoned (client.mark_trial_abandoned(trial_index="
            f"{trial})) to leave it out (it is then counted in the metadata's "
            "'failed')."
        )


#: a metric's values are resolved while the farthest from their median is at most
#: this many times the next farthest: past it, standardizing the values (their
#: spread is then the one value's) puts every other value within one step of the
#: standardized grid (2^-30, ``models.STANDARDIZED_QUANTUM``) of the same target,
#: and the GP sees one value and a constant
RESOLVED_RATIO = 2.0**30
#: differences among the other values this small against their magnitude count as
#: none (the rounding of a plateau: 0.1 + 0.2 against 0.3), so a plateau computed
#: two ways beside one good value is read, not refused
ROUNDING = 1e-12


def check_resolution(metric: str, values: list[tuple[int, float]]) -> None:
    """A metric's values (``(trial, value)`` of the completed trials) must not have
    one value so far from the others that standardizing them erases the others'
    differences (:data:`RESOLVED_RATIO`; e.g. a cost of 1e300 among costs of about
    1: the model then sees one spike and a constant, and the decisions freeze). The
    check is unit-free: values of any common scale (x 1e300 too) pass, and so does
    one value apart from others that are all equal, or equal but for rounding
    (:data:`ROUNDING`). Fewer than three values always pass.

    Args:
        metric: The metric's name (for the message).
        values: ``(trial index, value)`` of each completed trial.

    Raises:
        ValueError: One value lies more than :data:`RESOLVED_RATIO` times farther
            from the median than the next farthest.

    Example:
        >>> check_resolution("cost", [(0, 1.0), (1, 2.0), (2, 1e300)])
        Traceback (most recent call last):
        ValueError: BanditNode cannot read the metric 'cost': ...
    """
    if len(values) < 3:
        return
    v = torch.tensor([x for _, x in values], dtype=torch.double)
    dev = (v - v.median()).abs()
    top, i = (float(a) for a in dev.topk(2).values), int(dev.argmax())
    far, next_far = top
    others = torch.cat([v[:i], v[i + 1 :]]).abs().max()
    if next_far > ROUNDING * float(others) and far > RESOLVED_RATIO * next_far:
        trial, value = values[i]
        raise ValueError(
            f"BanditNode cannot read the metric {metric!r}: trial {trial}'s "
            f"{metric!r} = {value!r} lies {far / next_far:.3g} times farther from "
            f"the median of its {len(values)} values ({float(v.median())!r}) than "
            "any other, so standardized together every other value becomes the "
            "same target and the model sees one value and a constant. A value may "
            f"lie at most {RESOLVED_RATIO:.4g} (2^30) times farther from the median "
            "than the next farthest (any common scale is allowed). Attach the value "
            "again in the metric's units, or mark the trial abandoned "
            f"(client.mark_trial_abandoned(trial_index={trial}))."
        )


#: the statuses after which a trial's record cannot change (with its data unchanged)
_SETTLED = (
    TrialStatus.COMPLETED,
    TrialStatus.FAILED,
    TrialStatus.ABANDONED,
    TrialStatus.EARLY_STOPPED,
)


@dataclass(frozen=True)
class _Reading:
    """What one call reads every trial against: the objective metric and its sign
    (maximized: -1 when minimized), the constraints, their metrics (``others``), and
    the data's means and SEMs by (trial index, metric)."""

    metric: str
    sign: float
    constraints: list[Constraint]
    others: list[str]
    values: dict[tuple[int, str], float]
    sems: dict[tuple[int, str], float]


def read_experiment(
    experiment: Experiment,
    data: Data,
    space: Space,
    long_term: bool,
    cache: dict[str, Any] | None = None,
    fit_out_of_design: bool = False,
) -> History:
    """Every trial in index order: its point, objective (as maximized) and
    constraint values, times and uniform tag, checked; failed and abandoned trials
    (and early-stopped ones without data) counted; the latest recorded fit.
    ``cache`` (a dict the caller keeps between calls): a settled trial (completed,
    failed, abandoned, early-stopped) is read once and reused while its status and
    values are those it was read with, for the same experiment, space, objective and
    constraints; each call then checks every trial's status and values (a cheap
    pass) and reads only the new or changed ones in full. A trial whose point is
    outside the search space (Ax's ``check_membership``, with its tolerance) is left
    out and listed in ``History.out_of_design``, as Ax's models leave it out, unless
    ``fit_out_of_design``.

    Args:
        experiment: The Ax experiment (one objective metric).
        data: Its data (Ax's ``Data``; of map data, each trial's last
            progression).
        space: The search space as the node models it (the trials' unit-cube
            points).
        long_term: Read the outcome constraints as long-term constraints (else
            an experiment with any is refused: :func:`outcome_constraints`).
        cache: A dict the caller keeps between calls (default ``None``: nothing
            kept, every trial read in full).
        fit_out_of_design: Keep the trials outside the search space (default
            ``False``: left out, listed in ``History.out_of_design``).

    Returns:
        The :class:`~botorch_bandits.core.History`: the trials' records (the
        objective as maximized), the failed and out-of-design trials' indices, the
        objective metric and its sign, the number of constraints, the latest
        recorded fit (and its hyperparameters as the next fit's start) and the
        latest drift state.

    Raises:
        ValueError: No optimization config or not one objective metric, outcome
            constraints the options refuse, a completed trial without its
            objective value, a non-finite value or invalid SEM, a trial without an
            arm or with several, a constraint metric missing, or a metric one value
            of which erases the others' differences (:func:`check_resolution`).
    """
    r = _reading(experiment, data, long_term)
    key = (space.key, r.metric, r.sign, repr(r.constraints))
    kept = _kept_trials({} if cache is None else cache, key, experiment)
    entries = [
        _entry(t, r, kept)
        for t in sorted(experiment.trials.values(), key=lambda t: t.index)
    ]
    _place([e for e in entries if e.get("row") is not None and "x" not in e], space)
    warm, last_fit = _latest_fit(entries)
    records, outside = [], []
    for e in entries:  # a settled trial's record is made once (its entry is kept)
        if e["row"] is not None and e["out"] and not fit_out_of_design:
            outside.append(e["index"])
        elif e["row"] is not None:
            if "record" not in e:
                e["record"] = TrialRecord(x=e["x"], **e["row"])
            records.append(e["record"])
    seen = [t.index for t in records if t.f is not None]
    for name in (r.metric, *r.others):
        check_resolution(name, [(i, r.values[(i, name)]) for i in seen])
    drifts = [e["drift"] for e in entries if e["drift"] is not None]
    return History(
        trials=tuple(records),
        failed=tuple(e["index"] for e in entries if e["row"] is None),
        out_of_design=tuple(outside),
        metric=r.metric,
        num_constraints=len(r.constraints),
        warm=None if warm is None else Hyperparameters.from_dict(warm),
        last_fit=last_fit,
        constraint_fits=next(
            (e["constraint_fits"] for e in reversed(entries) if e["constraint_fits"]),
            None,
        ),
        drift=drifts[-1] if drifts else None,
        sign=r.sign,
    )


def _reading(experiment: Experiment, data: Data, long_term: bool) -> _Reading:
    """The experiment's one objective metric (checked), its constraints and the
    data's means and SEMs (of map data, each trial's last progression)."""
    opt = experiment.optimization_config
    if opt is None:
        raise ValueError("BanditNode needs an optimization config (an objective).")
    objective = opt.objective
    if isinstance(opt, MultiObjectiveOptimizationConfig) or (
        len(objective.metric_names) != 1
    ):
        raise ValueError(
            f"BanditNode optimizes one objective metric, got the objective "
            f"{objective.metric_names}: use Ax's own strategies for several "
            "objectives, or give one metric."
        )
    constraints = outcome_constraints(opt, long_term)
    df = data.df
    if "step" in df.columns:  # map data: the last progression of each trial
        df = df.sort_values("step", kind="stable")
    values: dict[tuple[int, str], float] = {
        (int(i), str(m)): float(v)
        for i, m, v in zip(
            df["trial_index"], df["metric_name"], df["mean"], strict=True
        )
    }
    sems: dict[tuple[int, str], float] = {
        (int(i), str(m)): float(v)
        for i, m, v in zip(
            df["trial_index"],
            df["metric_name"],
            df["sem"] if "sem" in df.columns else [math.nan] * len(df),
            strict=True,
        )
    }
    return _Reading(
        metric=objective.metric_names[0],
        sign=-1.0 if objective.minimize else 1.0,
        constraints=constraints,
        others=sorted({n for names, *_ in constraints for n in names}),
        values=values,
        sems=sems,
    )


def _kept_trials(
    cache: dict[str, Any], key: tuple, experiment: Experiment
) -> dict[int, Any]:
    """The settled trials' entries kept in ``cache``, emptied first when the
    experiment or ``key`` (space, objective, constraints) is not the cached one."""
    held = cache.get("experiment")  # a weak reference: the node does not keep it
    if cache.get("key") != key or held is None or held() is not experiment:
        cache.clear()
        cache.update(key=key, experiment=weakref.ref(experiment), trials={})
    return cache["trials"]


def _entry(t: Any, r: _Reading, kept: dict[int, Any]) -> dict[str, Any]:
    """Trial ``t``'s entry: the kept one while its status and values are those it
    was read with, else read again (and kept when the trial is settled)."""
    status = t.status
    f = r.values.get((t.index, r.metric))
    signature = (
        status,
        f,
        tuple(r.values.get((t.index, n)) for n in r.others),
        repr([r.sems.get((t.index, n)) for n in (r.metric, *r.others)]),  # NaN == NaN
    )
    entry = kept.get(t.index)
    if entry is None or entry["signature"] != signature:
        entry = _read_trial(t, status, f, r)
        entry["signature"] = signature
        if status in _SETTLED:
            kept[t.index] = entry
        else:
            kept.pop(t.index, None)
    return entry


def _place(fresh: list[dict[str, Any]], space: Space) -> None:
    """The newly read trials' unit-cube points (``x``) and whether each lies
    outside the search space (``out``: Ax's ``check_membership``)."""
    if not fresh:
        return
    coords = space.coordinates([e["params"] for e in fresh]).tolist()
    for e, x in zip(fresh, coords, strict=True):
        e["x"] = tuple(x)
        e["out"] = not space.search_space.check_membership(
            space.complete(e["params"]),
            raise_error=False,
            check_all_parameters_present=True,
        )


def _latest_fit(
    entries: list[dict[str, Any]],
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The latest recorded fit of this node: its hyperparameters (the next fit's
    start) and the whole record (``None``, ``None``: no fit recorded)."""
    warm = last_fit = None
    for e in entries:
        if e["fit"] is not None:
            warm = {k: e["fit"][k] for k in ("lengthscale", "noise", "mean")}
            last_fit = dict(e["fit"])
    return warm, last_fit


def _constraint_fits(fits: Any) -> tuple[dict[str, Any], ...] | None:
    """A trial's recorded constraint fits (``constraint_fits``: one record per
    constraint) if each holds hyperparameters, else ``None``."""
    if not isinstance(fits, list) or not fits:
        return None
    if not all(isinstance(f, dict) and "lengthscale" in f for f in fits):
        return None
    return tuple(dict(f) for f in fits)


def _read_trial(
    t: Any, status: TrialStatus, f: float | None, r: _Reading
) -> dict[str, Any]:
    """One trial read and checked: ``row`` (a :class:`TrialRecord`'s fields but
    its point; ``None`` for a failed trial), ``params`` and ``fit`` (its recorded
    fit, or ``None``)."""
    meta = (t.generator_runs[0].gen_metadata or {}) if t.generator_runs else {}
    fit = meta.get("fit")
    entry: dict[str, Any] = {
        "index": t.index,
        "fit": dict(fit) if isinstance(fit, dict) and "lengthscale" in fit else None,
        "constraint_fits": _constraint_fits(meta.get("constraint_fits")),
        "drift": drift_state(meta),
        "row": None,
    }
    if status in _GONE or (status == TrialStatus.EARLY_STOPPED and f is None):
        return entry
    arm = _single_arm(t)
    if f is None and status.is_completed:
        raise ValueError(
            f"Trial {t.index} is {status.name} but has no value for the "
            f"objective metric {r.metric!r}: attach it "
            f"(client.complete_trial(trial_index={t.index}, raw_data=...)) or "
            f"mark the trial abandoned "
            f"(client.mark_trial_abandoned(trial_index={t.index})); BanditNode "
            "does not guess it."
        )
    sem = None
    if f is not None:
        check_value(t.index, r.metric, f)
        sem = r.sems.get((t.index, r.metric), math.nan)
        check_sem(t.index, r.metric, sem)
    g = g_sem = None
    if f is not None and r.constraints:
        g, g_sem = _constraint_values(t.index, r)
    done = t.time_completed if f is not None else None
    entry["params"] = arm.parameters
    entry["row"] = dict(
        index=t.index,
        f=None if f is None else r.sign * f,
        g=g,
        created=t.time_created.timestamp(),
        completed=None if f is None else (done or t.time_created).timestamp(),
        uniform=bool(meta.get("cpd_uniform", False)),
        sem=None if sem is None or math.isnan(sem) else sem,
        g_sem=g_sem,
    )
    return entry


def _single_arm(t: Any) -> Any:
    """Trial ``t``'s one arm (a trial without an arm, or with several, is refused)."""
    arms = t.arms
    if not arms:  # e.g. lost by a save (issue 46): not the user's trial design
        raise ValueError(
            f"Trial {t.index} has no arm: its point is missing from the "
            "experiment (in a SQLite file saved before botorch_bandits worked around "
            "Ax's batch-save defect, get_next_trials(max_trials > 1) lost arms; see "
            "docs/ax.md, Storage on SQLite). BanditNode cannot place "
            f"it: mark it abandoned (client.mark_trial_abandoned(trial_index="
            f"{t.index})) to go on without it."
        )
    if len(arms) != 1:
        raise ValueError(
            f"Trial {t.index} has {len(arms)} arms: BanditNode needs "
            "single-arm trials (one point per trial)."
        )
    return arms[0]


def _constraint_values(
    index: int, r: _Reading
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    r"""Trial ``index``'s constraint values :math:`g = s(\sum w m - b)` (each metric
    checked) and their standard errors (the weighted metrics' combined)."""
    g, g_sem = [], ()
    for names, weights, s, bound in r.constraints:
        missing = [n for n in names if (index, n) not in r.values]
        if missing:
            raise ValueError(
                f"Trial {index} has objective data but no value for "
                f"the constraint metric(s) {missing}: every constraint "
                "value is needed for the multipliers."
            )
        for n in names:
            check_value(index, n, r.values[(index, n)])
            check_sem(index, n, r.sems.get((index, n), math.nan))
        lhs = sum(w * r.values[(index, n)] for n, w in zip(names, weights, strict=True))
        g.append(s * (lhs - bound))
        # its standard error: the weighted metrics' combined (independent;
        # hypot: no square over- or underflows)
        se = math.hypot(
            *(
                w * r.sems.get((index, n), math.nan)
                for n, w in zip(names, weights, strict=True)
            )
        )
        g_sem = (*g_sem, se)
    return tuple(g), g_sem


def ax_domain(
    space: Space,
    decision_set: DecisionSet,
    fixed: dict[str, Any],
    whole: Any,
) -> Domain:
    """The core's domain for a call: the decision set with the call's fixed
    features; the optimizer holds the discrete and fixed coordinates, keeps the
    linear constraints (tightened), and its point must map back into the search
    space exactly (``Space.contains``); the detector integrates over the decision
    set of the whole space (``whole()``), its volume the product of the range
    widths (a choice counts 1) times the share inside the constraints; the
    optimizer's raw samples are fresh decision sets of the call's space.

    Args:
        space: The search space as the node models it.
        decision_set: The call's decision set (with the fixed features).
        fixed: The call's fixed features, parameter name -> value.
        whole: A callable returning the decision set of the whole space (no fixed
            features), called by the domain's ``detector`` when it runs.

    Returns:
        The :class:`~botorch_bandits.core.Domain`.
    """

    def accept(x: Any) -> tuple[dict[str, Any], list[float]] | None:
        params = {**space.parameterizations(x.unsqueeze(0))[0], **fixed}
        if not space.contains(params):
            return None
        return params, space.coordinates([params])[0].tolist()

    def detector() -> tuple[Any, float]:
        ds = whole()
        box = math.prod(
            float(p.upper - p.lower)
            for p in space.search_space.parameters.values()
            if isinstance(p, RangeParameter)
        )
        return ds.unit, box * ds.fraction

    def sample(n: int, seed: int) -> Any:
        return space.decision_set(n, seed, fixed, quiet=True).unit

    return Domain(
        unit=decision_set.unit,
        hold=sorted(set(space.discrete) | set(space.fixed_dims(fixed))),
        free=bool(space.names),
        inequality_constraints=space.inequality_constraints_with_margin,
        accept=accept,
        detector=detector,
        sample=sample,
        index=decision_set.index,
    )
