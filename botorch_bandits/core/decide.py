"""The decision core, free of Ax: from a :class:`~botorch_bandits.core.History`, the
:class:`~botorch_bandits.core.DecisionOptions` and a
:class:`~botorch_bandits.core.Domain`, the next decision and its metadata, as the
pipeline of steps the options switch on (:func:`pipeline`). The Ax node and the
tests call :func:`decide`."""

from __future__ import annotations

from collections.abc import Callable

from botorch_bandits.core.domain import Domain
from botorch_bandits.core.history import History
from botorch_bandits.core.options import DecisionOptions
from botorch_bandits.core.round import Decision, DecisionCache, Round
from botorch_bandits.core.steps.avoid import repeats_step
from botorch_bandits.core.steps.constraints import (
    composite_step,
    epoch_step,
    multiplier_step,
)
from botorch_bandits.core.steps.data import exclude_in_flight, sems_step, window_step
from botorch_bandits.core.steps.locality import trust_region_step
from botorch_bandits.core.steps.maximize import maximizer
from botorch_bandits.core.steps.model import (
    model_step,
    practical_fit_step,
    theory_fit_step,
)
from botorch_bandits.core.steps.penalty import constraint_fit_step, penalty_step
from botorch_bandits.core.steps.pending import (
    censor_view,
    hallucinate_view,
    ignore_view,
)
from botorch_bandits.core.steps.pessimistic import pessimistic_view
from botorch_bandits.core.steps.randomized import randomized_believer_view
from botorch_bandits.core.steps.restarts import (
    residual_step,
    restart_step,
    uniform_step,
)
from botorch_bandits.core.steps.rule import (
    bandit_rule,
    qlognei_rule,
    score_step,
    time_step,
)

__all__ = ["Decision", "DecisionCache", "Step", "decide", "pipeline"]

#: a step reads and writes its fields of the round; a step that decides (a
#: uniform draw, the maximizer) returns the decision and ends the round
Step = Callable[[Round], Decision | None]

#: what stands in for the running trials, by ``pending``
VIEWS: dict[str, Step] = {
    "ignore": ignore_view,
    "hallucinate": hallucinate_view,
    "censor": censor_view,
    "randomized-believer": randomized_believer_view,
    "pessimistic": pessimistic_view,
}


def pipeline(opts: DecisionOptions) -> tuple[Step, ...]:
    """The steps of a decision under ``opts``, in order; an option off leaves its
    step out.

    Args:
        opts: The decision's options.

    Returns:
        The steps, each a :data:`Step`; the last is the maximizer.
    """
    restarts = opts.restarts is not None
    uniform = restarts and opts.restarts.uniform  # Avanesov's detectors
    constraints = opts.constraints is not None
    separate = constraints and opts.constraints.model == "separate"
    composite = constraints and not separate
    return (
        *((restart_step,) if uniform else ()),
        *((residual_step,) if restarts and not uniform else ()),
        *((multiplier_step,) if constraints else ()),
        *((exclude_in_flight,) if opts.pending == "ignore" else ()),
        *((uniform_step,) if uniform else ()),
        window_step,
        *((composite_step,) if composite else ()),
        sems_step,
        practical_fit_step if opts.theory is None else theory_fit_step,
        *((epoch_step,) if composite else ()),
        *((constraint_fit_step,) if separate else ()),
        *((repeats_step,) if opts.repeats == "avoid" else ()),
        VIEWS[opts.pending],
        model_step,
        qlognei_rule if opts.algorithm == "qLogNEI" else bandit_rule,
        *((penalty_step,) if separate else ()),
        *((time_step,) if opts.forgetting else ()),
        *((trust_region_step,) if opts.trust_region else ()),
        score_step,
        maximizer,
    )


def decide(
    history: History,
    opts: DecisionOptions,
    domain: Domain,
    cache: DecisionCache | None = None,
) -> Decision:
    """The next decision on ``history`` (its trials in order, this call's earlier
    candidates last): the round passes through :func:`pipeline`'s steps until one
    decides.

    Args:
        history: The trials so far.
        opts: The decision's options.
        domain: The search space.
        cache: What decisions of one call may share (fits by their data, the
            detector): a cache, never state (default ``None``: a fresh one).

    Returns:
        The :class:`Decision` (its candidate and metadata).

    Example:
        >>> domain = Domain.box(torch.rand(256, 2, dtype=torch.double))
        >>> decision = decide(History(), DecisionOptions.from_kwargs(), domain)
    """
    r = Round.begin(history, opts, domain, cache or DecisionCache())
    for step in pipeline(opts):
        decision = step(r)
        if decision is not None:
            return decision
    raise AssertionError("the pipeline ends with the maximizer, which decides")
