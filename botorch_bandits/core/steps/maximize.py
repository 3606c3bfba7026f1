"""The maximizer, the pipeline's last step: the rule's argmax over the finite
decision set (:func:`finite_maximizer`), or its gradient maximum over the search
space (:func:`gradient_maximizer`, :func:`~botorch_bandits.core.optimize.optimize`),
the decision set's best row where no optimized point is admitted."""

from __future__ import annotations

from botorch_bandits.core.optimize import optimize
from botorch_bandits.core.options import DecisionOptions
from botorch_bandits.core.round import Decision, Round, Steps
from botorch_bandits.seeding import step_seed

__all__ = ["finite_maximizer", "gradient_maximizer", "maximizer", "steps"]


def finite_maximizer(r: Round) -> Decision:
    """The decision set's row with the best score.

    Args:
        r: The round; reads ``scores``, ``domain`` and ``meta`` (writes nothing).

    Returns:
        The :class:`Decision` of the row with the largest ``r.scores``.
    """
    return r.on_set(int(r.scores.argmax()))


def gradient_maximizer(r: Round) -> Decision:
    """The rule maximized over the search space from raw samples and the decision
    set, away from the points not to propose again (the evaluated ones; under
    ``pending="ignore"`` those in flight) and apart from the points in flight.

    Args:
        r: The round; reads ``active``, ``opts``, ``kept_out``, the rule
            (``r.rule``), ``scores``, ``domain``, ``position`` and ``kept_apart``,
            writes the metadata's ``optimizer`` (and ``acquisition_value`` for an
            optimized point, ``optimizer_warnings`` and ``optimizer_errors`` where
            there are any; see :func:`~botorch_bandits.core.optimize.optimize`).

    Returns:
        The :class:`Decision`: the optimized point (``index`` ``None``, its
        ``payload`` from ``Domain.accept``), else the decision set's best row.
    """
    flight = [list(e.x) for e in r.active if e.f is None]
    avoid = flight if r.opts.pending == "ignore" else []
    avoid = r.kept_out or avoid  # the evaluated points include those in flight
    row, payload, coords = optimize(
        r.rule,
        r.scores,
        r.domain,
        avoid,
        r.meta,
        step_seed(r.opts.seed, r.position),
        r.kept_apart,
    )
    if row is None:
        return Decision(coords, None, payload, False, r.meta)
    return r.on_set(row)


def maximizer(r: Round) -> Decision:
    """The gradient maximizer where the model step allows it (``r.gradient``),
    else the decision set's argmax.

    Args:
        r: The round; reads ``gradient``, and what :func:`gradient_maximizer` or
            :func:`finite_maximizer` reads; writes their metadata.

    Returns:
        The :class:`Decision` (the pipeline's last step always decides).
    """
    return gradient_maximizer(r) if r.gradient else finite_maximizer(r)


def steps(opts: DecisionOptions) -> Steps:
    """The maximizer, the last step of every decision.

    Args:
        opts: The decision's options.

    Returns:
        The steps by their place in the pipeline.
    """
    return {"maximize": maximizer}
