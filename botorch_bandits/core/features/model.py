"""The options of the practical GP and its search: :class:`Refit` (when it is
refitted), when it is sparse, where a fit starts, the trust region the rule is kept
to, its data window and time input (``model_window``, ``forgetting``); checked on
the flat options (``k``) with the practical mode's ``defaults``, refused in the
theory mode where they would go unused."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from botorch_bandits.core.features import flat
from botorch_bandits.models.sparse import SIZE as SPARSE_SIZE
from botorch_bandits.validation import check_choice, check_count

__all__ = [
    "FIT_STARTS",
    "SPARSE_SIZE",
    "TRUST_REGION_RULES",
    "Refit",
    "check_forgetting",
    "check_growth",
    "resolve_refit",
    "resolve_search",
    "resolve_sparse",
]

#: where the practical GP's marginal-likelihood fit starts: "warm" (the last fit's
#: hyperparameters) or "prior" (BoTorch's initial values, the priors' modes, as
#: Ax's models start each fit)
FIT_STARTS: tuple[str, ...] = ("warm", "prior")
#: the rules with the trust region on by default in the practical mode: IGP-UCB, on
#: which it was chosen (the Ax benchmark's development half, issue 51); the others
#: keep the whole box unless ``trust_region=True``
TRUST_REGION_RULES: tuple[str, ...] = ("IGP-UCB",)


def check_growth(growth: Any) -> None:
    """``refit_growth``: a finite number >= 1.

    Args:
        growth: The value given for ``refit_growth``.

    Raises:
        ValueError: Not a finite number >= 1 (a bool is not a number here).
    """
    ok = isinstance(growth, (int, float)) and not isinstance(growth, bool)
    if not (ok and math.isfinite(growth) and growth >= 1.0):
        raise ValueError(
            f"`refit_growth` is the factor by which the completed trials grow "
            f"between fits, a finite number >= 1 (1: a fit at every decision), got "
            f"refit_growth={growth!r}."
        )


@dataclass(frozen=True)
class Refit:
    """When the practical GP's hyperparameters are fitted again by marginal
    likelihood, checked at construction: at every decision while the model has at
    most ``after`` observations; past that when the trials completed since the last
    fit number at least ``(growth - 1)`` times the observations that fit used (fits
    at geometrically growing sizes; under a model window of W trials, every
    ``(growth - 1) W`` completions; ``growth=1``: at every decision), and after a
    failed fit or a restart; with long-term constraints on the composite target,
    also when the epochs begun since the last fit (each moves the multipliers, and
    so the targets) number at least ``(growth - 1)`` times those begun at that fit
    (a new epoch refitted at every decision before issue 62). In between, the last
    recorded fit is reused (``fit.status="reused"``).

    Args:
        after: The observations up to which every decision refits (an integer
            >= 0; default 100).
        growth: The factor by which the completed trials grow between fits past
            ``after`` (a finite number >= 1; default 1.2).

    Raises:
        ValueError: ``after`` not an integer >= 0, or an invalid ``growth``.

    Example:
        >>> Refit(after=0, growth=1.0)  # a fit at every decision
        Refit(after=0, growth=1.0)
    """

    after: int = field(default=100, metadata=flat("refit_after", modal=True))
    growth: float = field(default=1.2, metadata=flat("refit_growth", modal=True))

    def __post_init__(self) -> None:
        check_count("refit_after", self.after, 0)
        check_growth(self.growth)


def check_forgetting(k: dict[str, Any]) -> None:
    """``forgetting=True`` (time as an input of the fitted GP) is refused in the
    theory mode.

    Args:
        k: The flat options (``forgetting`` and ``mode`` read).

    Raises:
        ValueError: ``forgetting`` on in the theory mode.
    """
    if k["forgetting"] and k["mode"] == "theory":
        raise ValueError(
            "forgetting=True is an option of the practical mode (the fitted GP "
            "with time as an input); the theory mode's algorithms assume a fixed "
            "objective (GP-UCB-CPD restarts: restarts=True). Pass mode='practical' "
            "or leave it out."
        )


def resolve_sparse(k: dict[str, Any], defaults: dict[str, Any]) -> None:
    """``sparse_after``: a count, ``"never"`` (always exact; kept as given, so that a
    stored node keeps it) or ``None`` (the mode's default: 1000 in the practical
    mode, never in the theory mode, whose default is the papers' exact GP), and
    ``sparse_size`` (only with a sparse model; default :data:`SPARSE_SIZE`).

    Args:
        k: The flat options, the mode resolved; ``sparse_after`` and
            ``sparse_size`` filled in, in place.
        defaults: The practical mode's defaults (``sparse_after`` read).

    Raises:
        ValueError: An invalid ``sparse_after`` or ``sparse_size``, or
            ``sparse_size`` given where the GP is never sparse.
    """
    value = k["sparse_after"]
    if value is None and k["mode"] == "practical":
        k["sparse_after"] = value = defaults["sparse_after"]
    if (
        value is not None
        and value != "never"
        and (not isinstance(value, int) or isinstance(value, bool) or value < 1)
    ):
        default = defaults["sparse_after"]
        raise ValueError(
            "`sparse_after` must be an integer >= 1 (the observations past which "
            "the GP is sparse), 'never' (always exact) or None (the mode's default: "
            f"{default} in the practical mode, never in the theory mode), got "
            f"sparse_after={value!r}."
        )
    check_count("sparse_size", k["sparse_size"], 1, allow_none=True)
    if value is None or value == "never":
        if k["sparse_size"] is not None:
            why = "sparse_after='never'" if value else "the theory mode's default"
            raise ValueError(
                f"sparse_size={k['sparse_size']!r} caps the sparse model's "
                f"dictionary, and with {why} the GP is never sparse. Leave "
                "sparse_size out, or pass sparse_after=N (the observations past "
                "which the GP is sparse)."
            )
    elif k["sparse_size"] is None:
        k["sparse_size"] = SPARSE_SIZE


def _theory_refuses(k: dict[str, Any], names: tuple[str, ...], why: str) -> bool:
    """In the theory mode: an error naming the practical-only options of ``names``
    that were given, followed by ``why``; ``True`` (nothing to resolve) if none
    was. ``False`` in the practical mode."""
    if k["mode"] != "theory":
        return False
    given = {n: k[n] for n in names if k[n] is not None}
    if given:
        named = ", ".join(f"{n}={v!r}" for n, v in given.items())
        raise ValueError(f"{named}: {why}")
    return True


def resolve_refit(k: dict[str, Any], defaults: dict[str, Any]) -> None:
    """The practical GP's refit schedule (:class:`Refit`), checked; the theory mode
    refuses it (its fitted hyperparameters are refitted at every decision).

    Args:
        k: The flat options, the mode resolved; ``refit_after`` and
            ``refit_growth`` (a float) filled in (the practical mode), in place.
        defaults: The practical mode's defaults (``refit_after`` and
            ``refit_growth`` read).

    Raises:
        ValueError: An invalid value, or either option given in the theory mode.
    """
    names = ("refit_after", "refit_growth")
    if _theory_refuses(
        k,
        names,
        "the refit schedule is an option of the practical mode (its fitted GP); the "
        "theory mode's kernel is fixed or fitted at every decision. Pass "
        "mode='practical' or leave it out.",
    ):
        return
    for n in names:
        if k[n] is None:
            k[n] = defaults[n]
    check_count("refit_after", k["refit_after"], 0)
    check_growth(k["refit_growth"])
    k["refit_growth"] = float(k["refit_growth"])


def resolve_search(k: dict[str, Any], defaults: dict[str, Any]) -> None:
    """``trust_region`` (``True``/``False``; not given: on for the rules of
    :data:`TRUST_REGION_RULES`) and ``fit_start`` (:data:`FIT_STARTS`; the practical
    mode's default where not given); given in the theory mode (whose fixed or
    fitted kernel and finite decision set have neither), an error.

    Args:
        k: The flat options, the mode and algorithm resolved; ``trust_region``
            and ``fit_start`` filled in (the practical mode), in place.
        defaults: The practical mode's defaults (``fit_start`` read).

    Raises:
        ValueError: ``trust_region`` not ``True`` or ``False``, an unknown
            ``fit_start``, or either given in the theory mode.
    """
    if _theory_refuses(
        k,
        ("trust_region", "fit_start"),
        "options of the practical mode (its fitted GP and gradient search); the "
        "theory mode follows the papers. Pass mode='practical' or leave them out.",
    ):
        return
    if k["trust_region"] is None:
        k["trust_region"] = k["algorithm"] in TRUST_REGION_RULES
    if k["fit_start"] is None:
        k["fit_start"] = defaults["fit_start"]
    if not isinstance(k["trust_region"], bool):
        raise ValueError(
            "`trust_region` must be True (the rule kept to L-inf balls around the "
            "observed points, widening with their number) or False, got "
            f"trust_region={k['trust_region']!r}."
        )
    check_choice("fit_start", k["fit_start"], FIT_STARTS)


def migrate_unversioned(stored: dict[str, Any]) -> None:
    """A practical node stored before the schema version (schema 0): before the
    refit schedule it refitted at every decision, and kept the exact GP however
    many trials it had (``None``, as stored before "never" was spelled out, meant
    the same); before the trust region and the fit's start were options (issue 51)
    it searched the whole box and warm-started each fit. It replays.

    Args:
        stored: The stored node's options, by flat name; a practical node's
            ``refit_growth``, ``sparse_after``, ``trust_region`` and ``fit_start``
            set as it ran, in place.
    """
    if stored["mode"] != "practical":
        return
    stored.setdefault("refit_growth", 1.0)
    if stored.get("sparse_after") is None:
        stored["sparse_after"] = "never"
    stored.setdefault("trust_region", False)
    stored.setdefault("fit_start", "warm")
