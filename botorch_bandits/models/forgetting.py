r"""Forgetting for slowly drifting objectives: the trial's time as one more input of
BoTorch's default ``SingleTaskGP`` (its RBF kernel with one lengthscale per input
is then a product of a spatial kernel and :math:`\exp(-(t-t')^2/2\ell_t^2)` in
time, as W-DBO's spatio-temporal kernel, Bardou et al. 2024, and Ax's optional
``TimeAsFeature``), the time lengthscale fitted by marginal likelihood (a long one
when there is no drift), and the rule evaluated at the next trial's time with
BoTorch's ``FixedFeatureAcquisitionFunction`` (as Xopt's time-dependent BO). In
your own loop: :func:`fit_forgetting_gp`, then :func:`at_time` around any BoTorch
acquisition (docs/botorch.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from botorch.acquisition import AcquisitionFunction
from botorch.acquisition.fixed_feature import FixedFeatureAcquisitionFunction
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms import Standardize
from gpytorch.mlls import ExactMarginalLogLikelihood
from torch import Tensor

__all__ = [
    "TIME_UNIT",
    "at_time",
    "fit_forgetting_gp",
    "forgetting_summary",
    "with_time",
]

#: trials per unit of the time input. BoTorch's lengthscale prior (log-normal,
#: median about 5-10 units in 2-10 dimensions) then expects a drift over hundreds of
#: trials, and the data must show a faster one; chosen on the development half of
#: ``ax-online`` (see docs/measured.md)
TIME_UNIT = 100.0


def with_time(X: Tensor, times: Sequence[float] | Tensor) -> Tensor:
    """``X`` with the times as a last column, in units of :data:`TIME_UNIT`.

    Args:
        X: ``n x d`` inputs.
        times: ``n`` times, in trials.

    Returns:
        ``n x (d + 1)`` inputs.
    """
    t = torch.as_tensor(times, dtype=X.dtype).reshape(-1, 1) / TIME_UNIT
    return torch.cat([X.reshape(-1, X.shape[-1]), t], dim=-1)


def at_time(acqf: AcquisitionFunction, d: int, time: float) -> AcquisitionFunction:
    """``acqf`` (on ``d + 1`` inputs, time last) as a function of the ``d`` others
    at ``time`` (in trials): BoTorch's ``FixedFeatureAcquisitionFunction``.

    Args:
        acqf: An acquisition on ``d + 1`` inputs, time last.
        d: The number of other inputs.
        time: The time to evaluate at, in trials (e.g. the next trial's index).

    Returns:
        The wrapped acquisition on ``d`` inputs (carrying ``acqf``'s
        ``sigma_multiplier`` where it has one).

    Example:
        >>> gp = fit_forgetting_gp(X, Y, times=range(len(X)))
        >>> acqf = at_time(IGPUCB(gp, beta=2.0), d=X.shape[-1], time=len(X))
    """
    wrapped = FixedFeatureAcquisitionFunction(
        acqf, d=d + 1, columns=[d], values=[float(time) / TIME_UNIT]
    )
    mult = getattr(acqf, "sigma_multiplier", None)
    if mult is not None:  # the bandit rules' confidence multiplier, for the record
        wrapped.sigma_multiplier = mult
    return wrapped


def fit_forgetting_gp(
    X: Tensor, Y: Tensor, times: Sequence[float] | Tensor
) -> SingleTaskGP:
    """BoTorch's default ``SingleTaskGP`` (``Standardize``-d outcomes) on ``X`` with
    the times as one more input (:func:`with_time`), fitted by marginal
    likelihood: the BoTorch-level model of ``forgetting=True``.

    Args:
        X: ``n x d`` inputs.
        Y: ``n`` (or ``n x 1``) observations.
        times: ``n`` times, in trials.

    Returns:
        The fitted ``SingleTaskGP`` on ``d + 1`` inputs, in eval mode.
    """
    model = SingleTaskGP(
        with_time(X, times),
        Y.reshape(X.shape[0], -1),
        outcome_transform=Standardize(m=1),
    )
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return model.eval()


def forgetting_summary(time_lengthscale: float) -> dict[str, float]:
    """The fitted time lengthscale read as a forgetting rate: the lengthscale in
    trials and the lag (in trials) at which an old trial's correlation with the
    present has fallen to one half (the half-life) and to 5 %.

    Args:
        time_lengthscale: The fitted lengthscale of the time input (in units of
            :data:`TIME_UNIT`).

    Returns:
        ``{"time_lengthscale_trials", "half_life_trials", "lag_5pct_trials"}``.
    """
    ell = time_lengthscale * TIME_UNIT
    return {
        "time_lengthscale_trials": ell,
        "half_life_trials": ell * math.sqrt(2.0 * math.log(2.0)),
        "lag_5pct_trials": ell * math.sqrt(2.0 * math.log(20.0)),
    }
