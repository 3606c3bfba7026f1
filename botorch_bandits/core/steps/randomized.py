"""The randomized kriging believer (Sugiura, Takeuchi & Takeno 2026, arXiv
2603.01470): the running trials imputed at one joint draw of f from the posterior of
the completed trials' model (the kriging believer imputes its mean), seeded by the
decision (``pending="randomized-believer"``)."""

from __future__ import annotations

from typing import Any

import torch
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from botorch_bandits.core.round import Round
from botorch_bandits.core.steps.pending import imputed_view

__all__ = ["posterior_draw", "randomized_believer_view"]


def posterior_draw(model: Any, X: Tensor, r: Round, seed: int) -> Tensor:
    """One joint draw of the latent f at the running trials' inputs ``X``
    (``m x d``) from ``model``'s posterior (no observation noise), with a generator
    seeded by ``seed``: ``mean + L z`` with ``L L^T`` the posterior covariance and
    ``z ~ N(0, I)`` (``m``).

    Args:
        model: The model of the completed trials.
        X: The running trials' ``m x d`` inputs.
        r: The round (not read: the signature of an
            :data:`~botorch_bandits.core.steps.pending.Imputation`).
        seed: The draw's seed (the decision's, derived for imputation).

    Returns:
        The ``m`` drawn targets.
    """
    post = model.posterior(X)
    mean = post.mean.reshape(-1)  # m
    cov = post.distribution.covariance_matrix.reshape(mean.numel(), -1)  # m x m
    L = psd_safe_cholesky(cov)
    gen = torch.Generator().manual_seed(seed)
    z = torch.randn(mean.numel(), generator=gen, dtype=mean.dtype)
    return mean + L @ z


def randomized_believer_view(r: Round) -> None:
    """The running trials at one joint posterior draw of the completed trials'
    model (the randomized kriging believer); ``pending`` in the metadata.

    Args:
        r: The round; reads and writes what
            :func:`~botorch_bandits.core.steps.pending.imputed_view` does (``X``,
            ``Y``, ``rows_known``, the metadata's ``pending``).
    """
    imputed_view(r, posterior_draw)
