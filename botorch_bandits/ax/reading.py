"""The Ax side of a decision: an experiment read into the decision core's
:class:`~botorch_bandits.core.History` (every trial checked, nothing dropped
silently), the outcome constraints as long-term constraints, and the search space
as the core's :class:`~botorch_bandits.core.Domain`."""

from __future__ import annotations

import math
import weakref
from typing import Any

from ax.core.data import Data
from ax.core.experiment import Experiment
from ax.core.optimization_config import MultiObjectiveOptimizationConfig
from ax.core.parameter import RangeParameter
from ax.core.trial_status import TrialStatus
from ax.core.types import ComparisonOp

from botorch_bandits.ax.space import DecisionSet, Space
from botorch_bandits.core import Domain, History, TrialRecord
from botorch_bandits.hyperparameters import Hyperparameters

_GONE = (TrialStatus.FAILED, TrialStatus.ABANDONED)
#: an outcome constraint as (metrics, weights, sign, bound): g = s (sum w m - b) <= 0
Constraint = tuple[list[str], list[float], float, float]


def outcome_constraints(opt: Any, long_term: bool) -> list[Constraint]:
    """The outcome constraints as :data:`Constraint` tuples; refused without
    ``long_term`` (never ignored silently)."""
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
    """A reported standard error must be finite and >= 0 (NaN: not reported)."""
    if not (math.isnan(sem) or (math.isfinite(sem) and sem >= 0)):
        raise ValueError(
            f"Trial {trial} has the standard error (SEM) {sem!r} for the metric "
            f"{metric!r}: an SEM must be finite and >= 0, or left out (NaN: "
            "unknown, the model's noise applies). Attach the data again with a "
            "valid SEM (raw_data={'name': (mean, sem)}) or without one."
        )


def check_value(trial: int, metric: str, value: float) -> None:
    """A trial's metric value must be finite (NaN / inf would freeze the GP)."""
    if not math.isfinite(value):
        raise ValueError(
            f"Trial {trial} has the non-finite value {value!r} for the metric "
            f"{metric!r}: BanditNode needs finite values. Attach a finite value or "
            f"mark the trial abandoned (client.mark_trial_abandoned(trial_index="
            f"{trial})) to leave it out (it is then counted in the metadata's "
            "'failed')."
        )


#: the statuses after which a trial's record cannot change (with its data unchanged)
_SETTLED = (
    TrialStatus.COMPLETED,
    TrialStatus.FAILED,
    TrialStatus.ABANDONED,
    TrialStatus.EARLY_STOPPED,
)


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
    ``fit_out_of_design``."""
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
    metric = objective.metric_names[0]
    sign = -1.0 if objective.minimize else 1.0
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
    others = sorted({n for names, *_ in constraints for n in names})
    key = (space.key, metric, sign, repr(constraints))
    if cache is None:
        cache = {}
    held = cache.get("experiment")  # a weak reference: the node does not keep it
    if cache.get("key") != key or held is None or held() is not experiment:
        cache.clear()
        cache.update(key=key, experiment=weakref.ref(experiment), trials={})
    kept: dict[int, Any] = cache["trials"]
    entries, fresh = [], []
    for t in sorted(experiment.trials.values(), key=lambda t: t.index):
        status = t.status
        f = values.get((t.index, metric))
        signature = (
            status,
            f,
            tuple(values.get((t.index, n)) for n in others),
            repr([sems.get((t.index, n)) for n in (metric, *others)]),  # NaN == NaN
        )
        entry = kept.get(t.index)
        if entry is None or entry["signature"] != signature:
            entry = _read_trial(t, status, f, metric, sign, constraints, values, sems)
            entry["signature"] = signature
            if status in _SETTLED:
                kept[t.index] = entry
            else:
                kept.pop(t.index, None)
        if entry.get("row") is not None and "x" not in entry:
            fresh.append(entry)
        entries.append(entry)
    if fresh:
        coords = space.coordinates([e["params"] for e in fresh]).tolist()
        for e, x in zip(fresh, coords, strict=True):
            e["x"] = tuple(x)
            e["out"] = not space.search_space.check_membership(
                space.complete(e["params"]),
                raise_error=False,
                check_all_parameters_present=True,
            )
    warm = None  # the latest recorded fit of this node: the next fit's start
    last_fit = None
    for e in entries:
        if e["fit"] is not None:
            warm = {k: e["fit"][k] for k in ("lengthscale", "noise", "mean")}
            last_fit = dict(e["fit"])
    records, outside = [], []
    for e in entries:  # a settled trial's record is made once (its entry is kept)
        if e["row"] is not None and e["out"] and not fit_out_of_design:
            outside.append(e["index"])
        elif e["row"] is not None:
            if "record" not in e:
                e["record"] = TrialRecord(x=e["x"], **e["row"])
            records.append(e["record"])
    trials = tuple(records)
    failed = tuple(e["index"] for e in entries if e["row"] is None)
    if warm is not None and len(warm["lengthscale"]) != space.dim:
        warm = last_fit = None
    return History(
        trials=trials,
        failed=failed,
        out_of_design=tuple(outside),
        metric=metric,
        num_constraints=len(constraints),
        warm=None if warm is None else Hyperparameters.from_dict(warm),
        last_fit=last_fit,
    )


def _read_trial(
    t: Any,
    status: TrialStatus,
    f: float | None,
    metric: str,
    sign: float,
    constraints: list[Constraint],
    values: dict[tuple[int, str], float],
    sems: dict[tuple[int, str], float],
) -> dict[str, Any]:
    """One trial read and checked: ``row`` (a :class:`TrialRecord`'s fields but
    its point; ``None`` for a failed trial), ``params`` and ``fit`` (its recorded
    fit, or ``None``)."""
    meta = (t.generator_runs[0].gen_metadata or {}) if t.generator_runs else {}
    fit = meta.get("fit")
    entry: dict[str, Any] = {
        "index": t.index,
        "fit": dict(fit) if isinstance(fit, dict) and "lengthscale" in fit else None,
        "row": None,
    }
    if status in _GONE or (status == TrialStatus.EARLY_STOPPED and f is None):
        return entry
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
    if f is None and status.is_completed:
        raise ValueError(
            f"Trial {t.index} is {status.name} but has no value for the "
            f"objective metric {metric!r}: attach it "
            f"(client.complete_trial(trial_index={t.index}, raw_data=...)) or "
            f"mark the trial abandoned "
            f"(client.mark_trial_abandoned(trial_index={t.index})); BanditNode "
            "does not guess it."
        )
    sem = None
    if f is not None:
        check_value(t.index, metric, f)
        sem = sems.get((t.index, metric), math.nan)
        check_sem(t.index, metric, sem)
    g = g_sem = None
    if f is not None and constraints:
        g = []
        for names, weights, s, bound in constraints:
            missing = [n for n in names if (t.index, n) not in values]
            if missing:
                raise ValueError(
                    f"Trial {t.index} has objective data but no value for "
                    f"the constraint metric(s) {missing}: every constraint "
                    "value is needed for the multipliers."
                )
            for n in names:
                check_value(t.index, n, values[(t.index, n)])
                check_sem(t.index, n, sems.get((t.index, n), math.nan))
            lhs = sum(
                w * values[(t.index, n)] for n, w in zip(names, weights, strict=True)
            )
            g.append(s * (lhs - bound))
            # its standard error: the weighted metrics' combined (independent;
            # hypot: no square over- or underflows)
            se = math.hypot(
                *(
                    w * sems.get((t.index, n), math.nan)
                    for n, w in zip(names, weights, strict=True)
                )
            )
            g_sem = (*(g_sem or ()), se)
    done = t.time_completed if f is not None else None
    entry["params"] = arms[0].parameters
    entry["row"] = dict(
        index=t.index,
        f=None if f is None else sign * f,
        g=None if g is None else tuple(g),
        created=t.time_created.timestamp(),
        completed=None if f is None else (done or t.time_created).timestamp(),
        uniform=bool(meta.get("cpd_uniform", False)),
        sem=None if sem is None or math.isnan(sem) else sem,
        g_sem=g_sem,
    )
    return entry


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
    optimizer's raw samples are fresh decision sets of the call's space."""

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
