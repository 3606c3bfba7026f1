"""The decision core, free of Ax: from a :class:`~botorch_bandits.core.History`, the
:class:`~botorch_bandits.core.DecisionOptions` and a
:class:`~botorch_bandits.core.Domain`, the next decision and its metadata, as the
pipeline of steps the options switch on (:func:`pipeline`: each feature's module of
``core/steps/`` says which steps it takes, and where). The Ax node and the tests
call :func:`decide`."""

from __future__ import annotations

from collections.abc import Callable

from botorch_bandits.core.domain import Domain
from botorch_bandits.core.history import History
from botorch_bandits.core.options import DecisionOptions
from botorch_bandits.core.round import Decision, DecisionCache, Round, Step, Steps
from botorch_bandits.core.steps import (
    avoid,
    constraints,
    data,
    locality,
    maximize,
    model,
    penalty,
    restarts,
    rule,
)
from botorch_bandits.core.steps.data import exclude_in_flight
from botorch_bandits.core.steps.pending import (
    censor_view,
    hallucinate_view,
    ignore_view,
)
from botorch_bandits.core.steps.pessimistic import pessimistic_view
from botorch_bandits.core.steps.randomized import randomized_believer_view

__all__ = [
    "FEATURES",
    "PLACES",
    "VIEWS",
    "Decision",
    "DecisionCache",
    "Step",
    "decide",
    "pending_steps",
    "pipeline",
]

#: what stands in for the running trials, by ``pending``
VIEWS: dict[str, Step] = {
    "ignore": ignore_view,
    "hallucinate": hallucinate_view,
    "censor": censor_view,
    "randomized-believer": randomized_believer_view,
    "pessimistic": pessimistic_view,
}

#: the pipeline's places, in the order their steps run: restarts' detector; the
#: long-term multipliers; ``pending="ignore"``'s rows in flight; the restarts'
#: uniform draw; the data window; the composite target; the reported SEMs; the
#: fit; the composite target's epoch; the separate constraints' GPs; the points
#: not to repeat; the pending view; the GP; the rule; its penalty; forgetting's
#: time; the trust region; the scores; the maximizer
PLACES: tuple[str, ...] = (
    "detect",
    "multipliers",
    "exclude",
    "uniform",
    "window",
    "composite",
    "sems",
    "fit",
    "epoch",
    "constraint_fit",
    "repeats",
    "pending",
    "model",
    "rule",
    "penalty",
    "time",
    "local",
    "score",
    "maximize",
)


def pending_steps(opts: DecisionOptions) -> Steps:
    """The running trials' steps under ``opts``: the view ``pending`` names
    (:data:`VIEWS`), and with ``pending="ignore"`` the decision set's rows in flight
    kept out.

    Args:
        opts: The decision's options.

    Returns:
        The steps by their place in the pipeline.
    """
    out = {"exclude": exclude_in_flight} if opts.pending == "ignore" else {}
    return {**out, "pending": VIEWS[opts.pending]}


#: the features, each asked by :func:`pipeline` for its steps
FEATURES: tuple[Callable[[DecisionOptions], Steps], ...] = (
    restarts.steps,
    constraints.steps,
    penalty.steps,
    pending_steps,
    data.steps,
    model.steps,
    avoid.steps,
    rule.steps,
    locality.steps,
    maximize.steps,
)


def pipeline(opts: DecisionOptions) -> tuple[Step, ...]:
    """The steps of a decision under ``opts``, in order: each feature of
    :data:`FEATURES` gives its steps by place (none where it is off), and the
    places run in the order of :data:`PLACES`.

    Args:
        opts: The decision's options.

    Returns:
        The steps, each a :data:`Step`; the last is the maximizer.

    Raises:
        AssertionError: Two features take one place, or a feature a place not in
            :data:`PLACES` (a programming error, not a user's).
    """
    taken: dict[str, Step] = {}
    for feature in FEATURES:
        for place, step in feature(opts).items():
            if place not in PLACES or place in taken:
                raise AssertionError(
                    f"{feature.__module__}.{feature.__name__} takes the place "
                    f"{place!r}: {'taken' if place in taken else 'not in PLACES'}"
                )
            taken[place] = step
    return tuple(taken[p] for p in PLACES if p in taken)


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
