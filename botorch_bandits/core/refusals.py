"""The refusals across the extensions' options, in one place:
:func:`refuse_combinations`, run by every
:class:`~botorch_bandits.core.options.DecisionOptions` at construction after each
field's own checks (the options a stored strategy holds pass here; the refusals of
a new strategy only are :func:`~botorch_bandits.core.options.resolve_kwargs`')."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from botorch_bandits.core.options import DecisionOptions

__all__ = ["refuse_combinations"]


def refuse_combinations(o: DecisionOptions) -> None:
    """The refusals across extensions, in one place: the theory mode has its model
    and none of the practical GP's options; its restarts run the paper's detector,
    uncapped; qLogNEI has no confidence width. (The refusals that apply to a new
    strategy only, such as an option given and left unused, are
    :func:`~botorch_bandits.core.options.resolve_kwargs`'s: the options a stored
    strategy holds pass here.)

    Args:
        o: The :class:`~botorch_bandits.core.options.DecisionOptions`, each field
            already checked on its own.

    Raises:
        ValueError: A combination refused, naming the options.
    """
    theory = o.mode == "theory"
    if theory and o.theory is None:
        raise ValueError(
            "mode='theory' needs theory=TheoryModel(...) (its fixed kernel), got "
            "theory=None: pass one, or use DecisionOptions.from_kwargs(mode='theory') "
            "for the theory mode's defaults."
        )
    if not theory and o.theory is not None:
        raise ValueError(
            f"theory={o.theory!r} is the theory mode's GP, and mode='practical' fits "
            "BoTorch's standard GP: pass mode='theory' or leave it out."
        )
    if not theory and o.refit is None:
        raise ValueError(
            "mode='practical' needs its refit schedule, got refit=None: leave it "
            "out (Refit(): after=100, growth=1.2) or pass Refit(after=0, growth=1.0) "
            "for a fit at every decision."
        )
    practical_only = {
        "refit": o.refit is not None,
        "model_window": o.model_window is not None,
        "forgetting": o.forgetting,
        "trust_region": o.trust_region,
        "fit_start": o.fit_start != "warm",
    }
    used = [n for n, on in practical_only.items() if on]
    if theory and used:
        named = ", ".join(f"{n}={getattr(o, n)!r}" for n in used)
        raise ValueError(
            f"{named}: options of the practical mode (its fitted GP and gradient "
            "search); the theory mode follows the papers. Pass mode='practical' or "
            "leave them out."
        )
    r = o.restarts
    if theory and r is not None and r.detector != "paper":
        raise ValueError(
            f"mode='theory' runs the paper's detector (Avanesov, Algorithm 1), got "
            f"restarts.detector={r.detector!r}: pass mode='practical', or "
            "Restarts.for_mode('theory')."
        )
    if theory and r is not None and r.max_uniform_share != 1.0:
        raise ValueError(
            f"mode='theory' runs the paper's Algorithm 2, whose uniform steps are "
            f"not capped, got cpd_max_uniform_share={r.max_uniform_share!r}: pass "
            "mode='practical' or leave it out."
        )
    if o.algorithm == "qLogNEI" and o.beta is not None:
        raise ValueError(
            f"beta={o.beta!r} sets the bandits' confidence bound, which "
            "algorithm='qLogNEI' (an expected improvement) has none of: leave it "
            "out, or choose IGP-UCB, GP-UCB or GP-TS."
        )
