"""The golden trace's comparisons: what each tier compares, its tolerance, and the
report of the first divergence (``None`` when the values agree). Pure functions of
the recorded and the recomputed JSON, tested on their own in ``test_golden.py``."""

from __future__ import annotations

import math
from typing import Any

#: the exact tier's metadata keys, compared by repr (bit for bit) with each trial's
#: parameters: the round, what the pending rule and the options did, and the
#: numbers the decisions are made with (the bonus multiplier, the multipliers and
#: the budget of long-term constraints); any other key may change unrecorded
EXACT_KEYS = (
    "t",
    "round",
    "pending_view",
    "pending",
    "excluded_in_flight",
    "failed",
    "decision_set_size",
    "sigma_multiplier",
    "censored",
    "in_flight",
    "late",
    "cpd_uniform",
    "cpd_uniform_count",
    "cpd_history",
    "cpd_restarts",
    "cpd_detections",
    "epoch",
    "epochs_used",
    "kappa",
    "budget.trials",
    "budget.mean_g",
    "budget.sum_g",
)
#: the replayed tier's metadata keys, recorded and compared exactly: what the
#: decision did (its round, the pending rule, the restarts, the fit's counts), not
#: the fit's or the optimizer's floats
REPLAY_KEYS = (
    "t",
    "round",
    "pending_view",
    "pending",
    "failed",
    "censored",
    "in_flight",
    "epoch",
    "cpd_start",
    "cpd_restarts",
    "cpd_uniform",
    "fit.status",
    "fit.n",
    "fit.completed",
    "fit.start",
)
#: the replayed tier's model, compared within ``TOL_MODEL`` (relative): the bonus
#: multiplier and the fitted hyperparameters. Made again on the same history they
#: agreed to about 1e-13 on another code path (the fit's last digits); the margin
#: is for an L-BFGS-B that stops at another iterate (another scipy), and a change
#: of the model step moves them by far more
MODEL_KEYS = (
    "sigma_multiplier",
    "fit.lengthscale",
    "fit.noise",
    "fitted.lengthscale",
    "fitted.noise",
    "fitted.outputscale",
)
TOL_MODEL = 1e-3
#: a lengthscale past this (on the unit cube) switches its coordinate off: the
#: kernel then varies by under 1e-4 across the cube, and two such lengthscales,
#: however far apart (a flat direction of the likelihood, 786 on one CPU and 1234
#: on another), are the same model
LENGTHSCALE_OFF = 100.0
#: the replayed tier's point: it agrees when it lies within ``TOL_X`` of the
#: recorded one in every unit-cube coordinate (a choice or an integer differs by a
#: whole step, so they must be equal) ...
TOL_X = 1e-3
#: ... or, the model being the same (``MODEL_KEYS``), when the acquisition value it
#: reached is within ``TOL_ACQ`` (relative, of at least 1) of the recorded one: the
#: acquisition has several maxima, and the optimizer's multi-start L-BFGS-B lands
#: on another one when a last digit reorders its starts (measured on this trace
#: under another code path: points 0.07 apart, values 3 % apart, the fit equal to
#: 1e-13)
TOL_ACQ = 0.05
#: the replayed decisions' first trial index (``num_init`` initial trials before)
FIRST_BANDIT_TRIAL = 3


def _get(meta: dict[str, Any], dotted: str) -> tuple[bool, Any]:
    value: Any = meta
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def compare_exact(
    name: str, got: list[dict[str, Any]], recorded: list[dict[str, Any]]
) -> str | None:
    """The exact tier: every trial's node and parameters, and the
    :data:`EXACT_KEYS` its metadata has, equal by repr; the first difference."""
    if len(got) != len(recorded):
        return f"{name}: {len(got)} trials, the record has {len(recorded)}"
    for i, (g, e) in enumerate(zip(got, recorded, strict=True)):
        if g["node"] != e["node"] or g["params"] != e["params"]:
            return (
                f"{name}: trial {i} differs first, in its point: recorded "
                f"{e['node']} {e['params']}, obtained {g['node']} {g['params']}"
            )
        for k in EXACT_KEYS:
            had, want = _get(e["meta"], k)
            has, value = _get(g["meta"], k)
            if had != has or want != value:
                want = want if had else "(no such key)"
                value = value if has else "(no such key)"
                return (
                    f"{name}: trial {i} differs first, in its metadata's {k!r}: "
                    f"recorded {want!r}, obtained {value!r}"
                )
    return None


def distance(a: list[float], b: list[float]) -> float:
    """The largest coordinate difference of two unit-cube points (inf if their
    dimensions differ)."""
    if len(a) != len(b):
        return math.inf
    return max((abs(x - y) for x, y in zip(a, b, strict=True)), default=0.0)


def acquisition_gap(got: float | None, want: float | None) -> float:
    """The relative difference of two acquisition values (of at least 1: values
    near 0 are compared absolutely); inf where either is missing."""
    if got is None or want is None:
        return math.inf
    return abs(got - want) / max(1.0, abs(want))


def model_gap(got: Any, want: Any) -> float:
    """The largest relative difference of two model values (numbers, numbers as
    repr strings, lists of them); inf where their shapes differ."""
    if isinstance(want, list) or isinstance(got, list):
        if not (isinstance(want, list) and isinstance(got, list)):
            return math.inf
        if len(got) != len(want):
            return math.inf
        gaps = [model_gap(g, w) for g, w in zip(got, want, strict=True)]
        return max(gaps, default=0.0)
    if got is None or want is None:
        return 0.0 if got is want else math.inf
    a, b = float(got), float(want)
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def _switched_off(value: Any) -> Any:
    """Lengthscales past :data:`LENGTHSCALE_OFF` as that bound (the same model)."""
    if isinstance(value, list):
        return [_switched_off(v) for v in value]
    if value is None or float(value) <= LENGTHSCALE_OFF:
        return value
    return LENGTHSCALE_OFF


def step_report(got: dict[str, Any], want: dict[str, Any]) -> str | None:
    """Why one replayed decision disagrees with its record (``None``: it agrees)."""
    if got["uniform"] != want["uniform"]:
        return f"uniform {got['uniform']} (recorded {want['uniform']})"
    for k in sorted(set(got["meta"]) | set(want["meta"])):
        g, w = got["meta"].get(k), want["meta"].get(k)
        if k in MODEL_KEYS:
            if k.endswith("lengthscale"):
                g, w = _switched_off(g), _switched_off(w)
            if model_gap(g, w) > TOL_MODEL:
                return (
                    f"model {k!r} {g!r} (recorded {w!r}, relative gap "
                    f"{model_gap(g, w):.3g} > {TOL_MODEL:g})"
                )
        elif g != w:
            return f"metadata {k!r} {g!r} (recorded {w!r})"
    d = distance(got["x"], want["x"])
    if d <= TOL_X:
        return None
    gap = acquisition_gap(got["acquisition_value"], want["acquisition_value"])
    if gap <= TOL_ACQ:
        return None
    return (
        f"point {got['params']} (recorded {want['params']}): distance {d:.3g} > "
        f"{TOL_X:g} in the unit cube, acquisition value "
        f"{got['acquisition_value']!r} (recorded {want['acquisition_value']!r}, "
        f"relative gap {gap:.3g} > {TOL_ACQ:g})"
    )


def compare_replay(
    name: str, got: list[dict[str, Any]], recorded: list[dict[str, Any]]
) -> str | None:
    """The replayed tier: each decision made again on its recorded history agrees
    with the recorded one (:func:`step_report`); the first that does not, and how
    many do not."""
    if len(got) != len(recorded):
        return f"{name}: {len(got)} decisions replayed, the record has {len(recorded)}"
    bad = [
        (i, r)
        for i, (g, e) in enumerate(zip(got, recorded, strict=True))
        if (r := step_report(g, e)) is not None
    ]
    if not bad:
        return None
    i, why = bad[0]
    return (
        f"{name}: {len(bad)} of {len(got)} decisions differ beyond the tolerance; "
        f"the first is trial {FIRST_BANDIT_TRIAL + i} (decision {i}): {why}"
    )


def replay_deviation(
    got: list[dict[str, Any]], recorded: list[dict[str, Any]]
) -> tuple[float, float, float]:
    """The largest point distance, acquisition gap and model gap over a replayed
    set."""
    pairs = list(zip(got, recorded, strict=True))
    ds = [distance(g["x"], e["x"]) for g, e in pairs]
    gaps = [
        acquisition_gap(g["acquisition_value"], e["acquisition_value"])
        for g, e in pairs
        if e["acquisition_value"] is not None
    ]
    models = [
        model_gap(g["meta"].get(k), e["meta"].get(k))
        for g, e in pairs
        for k in MODEL_KEYS
        if k in e["meta"]
    ]
    return max(ds, default=0.0), max(gaps, default=0.0), max(models, default=0.0)


def same(a: float, b: float) -> bool:
    """Bit for bit, as far as JSON tells: equal with the same sign, or both NaN."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def compare_reproduction(
    name: str, got: dict[str, Any], recorded: dict[str, Any]
) -> str | None:
    """A reproduction: every job's per-step statistics (mean and standard error)
    bit for bit, and the calibration; on a difference, the first step at which a
    statistic differs, with both values and their relative difference."""
    if got["cpd_c"] != recorded["cpd_c"]:
        return f"{name}: calibrated c {got['cpd_c']} (recorded {recorded['cpd_c']})"
    if set(got["jobs"]) != set(recorded["jobs"]):
        jobs = sorted(got["jobs"])
        return f"{name}: jobs {jobs} (recorded {sorted(recorded['jobs'])})"
    first = None
    for job in sorted(recorded["jobs"]):
        g, e = got["jobs"][job]["values"], recorded["jobs"][job]["values"]
        if set(g) != set(e):
            return f"{name}: job {job!r} has the statistics {sorted(g)} (recorded {sorted(e)})"
        for metric in sorted(e):
            for which, gv, ev in zip(
                ("mean", "s.e."), g[metric], e[metric], strict=True
            ):
                if len(gv) != len(ev):
                    return (
                        f"{name}: job {job!r}'s {metric!r} has {len(gv)} steps "
                        f"(recorded {len(ev)})"
                    )
                step = next(
                    (
                        i
                        for i, (a, b) in enumerate(zip(gv, ev, strict=True))
                        if not same(a, b)
                    ),
                    None,
                )
                if step is not None and (first is None or step < first[0]):
                    a, b = gv[step], ev[step]
                    rel = abs(a - b) / max(abs(a), abs(b), 1e-300)
                    first = (step, job, metric, which, b, a, rel)
    if first is None:
        return None
    step, job, metric, which, want, value, rel = first
    return (
        f"{name}: differs first at step {step} of job {job!r}, in the {which} of "
        f"{metric!r}: recorded {want!r}, obtained {value!r} (relative {rel:.3g}); "
        f"final mean cumulative regret {got['jobs'][job]['final']} (recorded "
        f"{recorded['jobs'][job]['final']})"
    )


#: on a CPU family with no record of its own, each job's final mean cumulative
#: regret within this share of another family's record (see :func:`compare_near`)
TOL_FINAL = 0.1


def compare_near(
    name: str, got: dict[str, Any], recorded: dict[str, Any], rtol: float = TOL_FINAL
) -> str | None:
    """A reproduction against another CPU family's record: the same jobs, statistics
    and steps, the calibration and every job's final mean cumulative regret within
    ``rtol`` (relative to the larger magnitude, at least 1). A run's trajectory
    follows its last bits (a near tie between two arms goes the other way), so this
    is the check where no record of the family exists, not a bit-for-bit one."""
    if set(got["jobs"]) != set(recorded["jobs"]):
        jobs = sorted(got["jobs"])
        return f"{name}: jobs {jobs} (recorded {sorted(recorded['jobs'])})"
    pairs = [("calibrated c", got["cpd_c"], recorded["cpd_c"])]
    for job in sorted(recorded["jobs"]):
        g, e = got["jobs"][job], recorded["jobs"][job]
        if set(g["values"]) != set(e["values"]):
            return f"{name}: job {job!r} has the statistics {sorted(g['values'])}"
        for metric, (mean, _) in sorted(e["values"].items()):
            if len(g["values"][metric][0]) != len(mean):
                return f"{name}: job {job!r}'s {metric!r} has another number of steps"
        pairs.append(
            (f"job {job!r}'s final mean cumulative regret", g["final"], e["final"])
        )
    for what, a, b in pairs:
        if (a is None) != (b is None):
            return f"{name}: {what} {a} (recorded {b})"
        if a is not None:
            a, b = float(a), float(b)
            if not abs(a - b) <= rtol * max(abs(a), abs(b), 1.0):
                return f"{name}: {what} {a!r}, recorded {b!r} (beyond {rtol:.0%})"
    return None
