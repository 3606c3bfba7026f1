"""Shi & Eryilmaz's long-term constraints: :class:`LongTermConstraints` (checked at
construction; each mode's defaults: the theory mode's Algorithm 2 over epochs of 20
trials, the practical mode's per-trial additive updates with a slack and the
constraints' own GPs read pessimistically), their resolution and checks in the Ax
strategy's flat spelling (a step of :func:`~botorch_bandits.core.options.resolve_kwargs`)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from botorch_bandits.core.features import flat, flat_name
from botorch_bandits.validation import (
    check_choice,
    check_count,
    check_nonnegative,
    check_positive,
)

MultiplierUpdate = Literal["multiplicative", "additive"]
ConstraintModel = Literal["composite", "separate"]
MULTIPLIER_UPDATES: tuple[str, ...] = ("multiplicative", "additive")
#: how the constraints enter the rule: "composite" (the paper's: one GP on
#: f - sum_j kappa_j (psi(g_j) - 1)), "separate" (a GP per constraint, its upper
#: bound in the penalty: :class:`~botorch_bandits.acquisition.penalized.PenalizedUCB`)
CONSTRAINT_MODELS: tuple[str, ...] = ("composite", "separate")
#: the options of the long-term constraints (``None``: the mode's default)
LONG_TERM_OPTIONS: tuple[str, ...] = (
    "epoch_length",
    "multiplier_update",
    "penalty_c",
    "step",
    "num_epochs",
    "constraint_model",
    "slack",
    "initial_multiplier",
)
#: the theory mode's: Algorithm 2 as the paper runs it (S = 20, psi(x) = e^x; the
#: step mu = 0.5 of Algorithm 3 when chosen), no slack, kappa^1 the paper's
THEORY_LONG_TERM: dict[str, Any] = {
    "epoch_length": 20,
    "multiplier_update": "multiplicative",
    "step": 0.5,
    "constraint_model": "composite",
    "slack": 0.0,
    "initial_multiplier": None,
}
#: the practical mode's, on the constraints' observed spread and the standardized
#: objective: the multipliers updated after every trial (Algorithm 3 with S = 1) by
#: a step that does not vanish, aimed at an average of -slack, starting from
#: kappa^1 = initial_multiplier (PDBO's lambda_0 = 1). The step was chosen on the
#: budget problems' development half (``python -m bandit_experiments ax-online --problems
#: budget-dev``) among 0.5, 1 and 2, slack 0.05, 0.1, 0.2 and the composite target:
#: every candidate held the budget on every run, and mu = 0.5 had the lowest mean
#: rank of cumulative regret over its three problems (docs/measured.md)
PRACTICAL_LONG_TERM: dict[str, Any] = {
    "epoch_length": 1,
    "multiplier_update": "additive",
    "step": 0.5,
    "constraint_model": "separate",
    "slack": 0.1,
    "initial_multiplier": 1.0,
}
#: the rules with a confidence bound (the penalty reads the constraints' upper
#: bound at the same width) or an expectation of the Lagrangian (qLogNEI)
SEPARATE_RULES: tuple[str, ...] = ("IGP-UCB", "GP-UCB", "qLogNEI")
#: the longest epoch of a new strategy (past it the constraints never act)
MAX_EPOCH = 10**6


def resolve_long_term(k: dict[str, Any], strict: bool) -> None:
    """The long-term constraints' options: refused when the constraints are off
    (``strict``: a new strategy), the mode's defaults filled in when on, checked.

    Args:
        k: The flat options, the mode and algorithm resolved; updated in place.
        strict: A new strategy (a stored one loads with what it holds).
    """
    given = {n: k[n] for n in LONG_TERM_OPTIONS if k[n] is not None}
    given.pop("penalty_c", None)
    if k["penalty_c"] != 1.0:
        given["penalty_c"] = k["penalty_c"]
    _check(k)  # the values given, first
    if not k["long_term_constraints"]:
        if strict and given:
            named = ", ".join(f"{n}={v!r}" for n, v in given.items())
            raise ValueError(
                f"{named} set(s) the long-term constraints, which are off: pass "
                "long_term_constraints=True or leave them out."
            )
        return
    theory = k["mode"] == "theory"
    if strict and theory:
        practical = [
            f"{n}={given[n]!r}" for n in ("slack", "initial_multiplier") if n in given
        ]
        if given.get("constraint_model") == "separate":
            practical.append("constraint_model='separate'")
        if practical:
            raise ValueError(
                f"{', '.join(practical)} are options of the practical reading of the "
                "long-term constraints; the theory mode runs Shi & Eryilmaz's "
                "algorithms as written (no slack, kappa^1 = 1 or 0, one GP on the "
                "composite target). Pass mode='practical' or leave them out."
            )
    defaults = dict(THEORY_LONG_TERM if theory else PRACTICAL_LONG_TERM)
    if k["constraint_model"] is None and k["algorithm"] not in SEPARATE_RULES:
        k["constraint_model"] = "composite"  # GP-TS: no confidence bound to share
    if k["multiplier_update"] == "multiplicative":
        # the paper's Algorithm 2 in either mode: its epochs and composite target,
        # no step, slack nor kappa^1 (the practical mode still measures the
        # constraints in their spread)
        defaults.update(
            slack=0.0,
            initial_multiplier=None,
            epoch_length=THEORY_LONG_TERM["epoch_length"],
            constraint_model="composite",
        )
    for n, v in defaults.items():  # the defaults are valid values
        if k[n] is None:
            k[n] = v
    if not strict:
        return
    if k["epoch_length"] > MAX_EPOCH:
        raise ValueError(
            f"`epoch_length` must be at most {MAX_EPOCH:,} trials, got "
            f"epoch_length={k['epoch_length']!r}: the multipliers change only after "
            "an epoch, so the constraints would never act."
        )
    if k["constraint_model"] == "separate" and k["algorithm"] not in SEPARATE_RULES:
        raise ValueError(
            f"constraint_model='separate' reads each constraint's upper confidence "
            f"bound at the rule's width, and algorithm={k['algorithm']!r} has none: "
            f"choose one of {list(SEPARATE_RULES)}, or constraint_model='composite'."
        )
    if k["constraint_model"] == "separate" and "num_epochs" in given:
        raise ValueError(
            f"num_epochs={given['num_epochs']!r} sets the epochs' confidence "
            "delta/L of the composite target, and constraint_model='separate' has "
            "none (the objective's GP keeps its own confidence): pass "
            "constraint_model='composite' or leave num_epochs out."
        )
    multiplicative = k["multiplier_update"] == "multiplicative"
    unused = [
        f"{n}={given[n]!r}"
        for n in (("step", "slack", "initial_multiplier") if multiplicative else ())
        if n in given and (n != "slack" or given[n] != 0)
    ]
    if not multiplicative and "penalty_c" in given:
        unused.append(f"penalty_c={given['penalty_c']!r}")
    if unused:
        raise ValueError(
            f"{', '.join(unused)} set(s) the "
            f"{'additive' if multiplicative else 'multiplicative'} multiplier "
            f"update, and multiplier_update={k['multiplier_update']!r}: pass "
            f"multiplier_update={'additive' if multiplicative else 'multiplicative'!r}"
            " or leave them out."
        )


def _check(k: dict[str, Any]) -> None:
    """Each long-term option's value (those not ``None``)."""
    if k["multiplier_update"] is not None:
        check_choice("multiplier_update", k["multiplier_update"], MULTIPLIER_UPDATES)
    if k["constraint_model"] is not None:
        check_choice("constraint_model", k["constraint_model"], CONSTRAINT_MODELS)
    check_count("epoch_length", k["epoch_length"], 1, allow_none=True)
    check_count("num_epochs", k["num_epochs"], 1, allow_none=True)
    check_positive("penalty_c", k["penalty_c"])
    check_positive("step", k["step"], allow_none=True)
    for n in ("slack", "initial_multiplier"):
        if k[n] is not None:
            check_nonnegative(n, k[n])


@dataclass(frozen=True)
class LongTermConstraints:
    """Shi & Eryilmaz 2022's long-term constraints, checked at construction. The
    defaults are the practical mode's (:data:`PRACTICAL_LONG_TERM`);
    :meth:`for_mode` gives each mode's (the theory mode: Algorithm 2 as the paper
    runs it, :data:`THEORY_LONG_TERM`).

    Args:
        epoch_length: The trials of an epoch, S (an integer >= 1; default 1).
        multiplier_update: ``"multiplicative"`` (Algorithm 2, :math:`\\psi(x) =
            e^{cx}`) or ``"additive"`` (Algorithm 3 with step :math:`\\mu`; the
            default).
        penalty_c: The multiplicative update's :math:`c` (> 0; default 1).
        step: The additive update's step :math:`\\mu` (> 0; default 0.5).
        num_epochs: :math:`L`, the epochs the confidence is shared over (an
            integer >= 1; ``None``, the default: the epochs begun so far).
        slack: The additive update's target average of -slack (>= 0; the practical
            reading; default 0.1).
        initial: :math:`\\kappa^1` (>= 0; ``None``: the paper's; default 1).
        model: ``"composite"`` (the paper's GP on the composite target) or
            ``"separate"`` (a GP per constraint, read at its upper bound in the
            penalty; the default).

    Raises:
        ValueError: An invalid value, or ``None`` for a field that must be given.

    Example:
        >>> LongTermConstraints.for_mode("theory").epoch_length
        20
    """

    epoch_length: int = field(default=1, metadata=flat("epoch_length", modal=True))
    multiplier_update: MultiplierUpdate = field(
        default="additive", metadata=flat("multiplier_update", modal=True)
    )
    penalty_c: float = field(default=1.0, metadata=flat("penalty_c"))
    step: float = field(default=0.5, metadata=flat("step", modal=True))
    num_epochs: int | None = field(default=None, metadata=flat("num_epochs"))
    slack: float = field(default=0.1, metadata=flat("slack", modal=True))
    initial: float | None = field(
        default=1.0, metadata=flat("initial_multiplier", modal=True)
    )
    model: ConstraintModel = field(
        default="separate", metadata=flat("constraint_model", modal=True)
    )

    def __post_init__(self) -> None:
        k = {flat_name(f): getattr(self, f.name) for f in fields(self)}
        for n in ("epoch_length", "multiplier_update", "step", "slack"):
            if k[n] is None:  # (None: the flat spelling's "the mode's default")
                raise ValueError(f"`{n}` must be given, got {n}=None.")
        if k["constraint_model"] is None:
            raise ValueError("`constraint_model` must be given, got None.")
        _check(k)

    @classmethod
    def for_mode(
        cls, mode: str, algorithm: str = "IGP-UCB", **given: Any
    ) -> LongTermConstraints:
        """The constraints of ``mode`` for ``algorithm``'s rule, with the fields
        ``given`` (flat names: :func:`resolve_long_term`'s defaults).

        Args:
            mode: ``"practical"`` or ``"theory"``.
            algorithm: The rule (default ``"IGP-UCB"``): GP-TS has no confidence
                bound to share, so its default model is ``"composite"``.
            **given: Fields of :class:`LongTermConstraints` (their field names),
                over the mode's defaults.

        Returns:
            The checked constraints.

        Example:
            >>> LongTermConstraints.for_mode("practical", "GP-TS").model
            'composite'
        """
        k = {"long_term_constraints": True, "mode": mode, "algorithm": algorithm}
        k.update({n: None for n in LONG_TERM_OPTIONS}, penalty_c=1.0)
        names = {f.name: flat_name(f) for f in fields(cls)}
        k.update({names[n]: v for n, v in given.items()})
        resolve_long_term(k, strict=False)
        return cls(**{f.name: k[flat_name(f)] for f in fields(cls)})


def migrate_unversioned(stored: dict[str, Any]) -> None:
    """A node stored before the schema version (schema 0) and before the practical
    reading of the long-term constraints (issue 49) ran the paper's composite target
    with :math:`\\kappa^1` as the paper has it and no slack, in either mode (and
    stored its epochs, update and step): it replays.

    Args:
        stored: The stored node's options, by flat name; with long-term
            constraints and no ``constraint_model``, the paper's composite target,
            no slack and its :math:`\\kappa^1` set, in place.
    """
    if stored.get("long_term_constraints") and "constraint_model" not in stored:
        stored.update(constraint_model="composite", slack=0.0)
        additive = stored.get("multiplier_update") == "additive"
        stored["initial_multiplier"] = 0.0 if additive else None
