"""Pessimistic imputation (Volk, Reyes, Ethier & Baldwin 2026, Digital Discovery,
"Pessimistic asynchronous sampling in high-cost Bayesian optimization"): the running
trials imputed below the kriging believer's mean, at the lower confidence bound
``mu - KAPPA sigma`` of the completed trials' model on the maximized scale
(``pending="pessimistic"``). The paper's exact offset is the reading stated at
:data:`KAPPA`."""

from __future__ import annotations

from typing import Any

from torch import Tensor

from botorch_bandits.core.round import Round
from botorch_bandits.core.steps.pending import imputed_view

__all__ = ["KAPPA", "lower_bound", "pessimistic_view"]

#: the pessimistic target's distance below the posterior mean, in posterior
#: standard deviations of f. The paper imputes a pending experiment at a
#: "pessimistic prediction" and names no constant we could check here: one standard
#: deviation (the lower edge of the usual 68 % band) is this package's reading
KAPPA = 1.0


def lower_bound(model: Any, X: Tensor, r: Round, seed: int) -> Tensor:
    """``mu(x) - KAPPA sigma(x)`` of ``model``'s posterior of f at the running
    trials' inputs ``X`` (``m x d`` -> ``m``; the targets are maximized).

    Args:
        model: The model of the completed trials.
        X: The running trials' ``m x d`` inputs.
        r: The round (not read: the signature of an
            :data:`~botorch_bandits.core.steps.pending.Imputation`).
        seed: The decision's seed for a random rule's draws (not used: the bound is
            deterministic).

    Returns:
        The ``m`` imputed targets.
    """
    post = model.posterior(X.unsqueeze(-2))
    return post.mean.reshape(-1) - KAPPA * post.variance.clamp_min(0).sqrt().reshape(-1)


def pessimistic_view(r: Round) -> None:
    """The running trials at the lower confidence bound of the completed trials'
    model (pessimistic imputation); ``pending`` in the metadata.

    Args:
        r: The round; reads and writes what
            :func:`~botorch_bandits.core.steps.pending.imputed_view` does (``X``,
            ``Y``, ``rows_known``, the metadata's ``pending``).
    """
    imputed_view(r, lower_bound)
