"""The practical (scale-free) mode's GP: BoTorch's default ``SingleTaskGP`` on
standardized targets (:func:`standardize`, :func:`practical_gp`), fitted by marginal
likelihood (:func:`fit_practical_gp`), its hyperparameters as plain floats, and
:func:`one_thread` (:func:`fixed_threads`) for bit-identical factorizations."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import torch
from botorch.exceptions.warnings import InputDataWarning
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.utils.gpytorch_modules import MIN_INFERRED_NOISE_LEVEL
from gpytorch.constraints import GreaterThan
from gpytorch.likelihoods import FixedNoiseGaussianLikelihood
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import LogNormalPrior
from gpytorch.settings import min_fixed_noise
from torch import Tensor

from botorch_bandits.hyperparameters import Hyperparameters
from botorch_bandits.validation import check_row_noise


@contextmanager
def fixed_threads(n: int | None) -> Iterator[None]:
    """Run the block on ``n`` torch threads, restored after.

    Args:
        n: The number of threads (``None``: as they are).

    Yields:
        Nothing; the block runs with ``n`` threads.
    """
    threads = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def one_thread() -> AbstractContextManager[None]:
    """Run the block on one torch thread (restored after): factorizations then give
    bit-identical results in this process, a worker process or a Dask worker."""
    return fixed_threads(1)


#: standardized targets are rounded to this grid (see :func:`standardize`)
STANDARDIZED_QUANTUM = 2.0**-30


#: below this standard deviation its squares near float64's smallest normal number
#: (1e-308): it is computed again on the values divided by their largest deviation
#: (so is an infinite one, whose squares overflowed)
TINY_SPREAD = 1e-150


def standardize(
    Y: Tensor, quantum: float = STANDARDIZED_QUANTUM
) -> tuple[Tensor, float, float]:
    r"""``(Y - m) / s`` with the mean ``m`` and the (Bessel-corrected) standard
    deviation ``s`` of ``Y``, as BoTorch's ``Standardize`` outcome transform computes
    them; ``s = 1`` when ``Y`` has fewer than two values or no spread, ``m = 0`` when
    it is empty.

    The result is rounded to a grid of ``quantum``: for ``a > 0``, ``a Y + b``
    then gives the *same* bits, not values equal up to a rounding error of
    :math:`10^{-16}` -- the fit and the optimizer downstream amplify such an error
    into different trials within a few decisions (measured: 1e-10 at trial 6, a
    different point by trial 16). So the decisions do not depend on the objective's
    units.

    Args:
        Y: The targets, any shape (flattened).
        quantum: The grid (default :data:`STANDARDIZED_QUANTUM`,
            :math:`2^{-30} \approx 10^{-9}` standard deviations, far below any
            noise); 0 skips the rounding.

    Returns:
        ``(Z, m, s)``: the ``n`` standardized targets and the two floats.

    Raises:
        ValueError: When ``m`` or ``s`` overflows (rescale the targets).

    Example:
        >>> Z, m, s = standardize(torch.tensor([1.0, 2.0, 3.0], dtype=torch.double))
        >>> Z.tolist(), m, s
        ([-1.0, 0.0, 1.0], 2.0, 1.0)
    """
    Y = Y.reshape(-1)
    if Y.numel() == 0:
        return Y, 0.0, 1.0
    m = float(Y.mean())
    s = float(Y.std()) if Y.numel() > 1 else 0.0
    if not s >= TINY_SPREAD or math.isinf(s):  # squares under- or overflowed
        c = Y - m
        a = float(c.abs().max())
        s = a * float((c / a).std()) if a > 0.0 and Y.numel() > 1 else 0.0
    if s == 0.0:
        s = 1.0
    if not (math.isfinite(m) and math.isfinite(s)):
        raise ValueError(
            f"The targets are too large to standardize (mean {m!r}, standard "
            f"deviation {s!r}): rescale them."
        )
    Z = (Y - m) / s
    if quantum > 0:
        Z = torch.round(Z / quantum) * quantum
    return Z, m, s


def known_floor(dtype: torch.dtype = torch.double) -> float:
    """GPyTorch's smallest fixed noise for ``dtype`` (it would raise smaller known
    noise variances to it with a warning; we do so first).

    Args:
        dtype: The dtype (default ``torch.double``).

    Returns:
        The floor, as a float.
    """
    return float(min_fixed_noise.value(dtype))


def practical_gp(
    X: Tensor,
    z: Tensor,
    hyper: Hyperparameters | None = None,
    row_noise: Tensor | None = None,
    learn_noise: bool = True,
) -> SingleTaskGP:
    r"""BoTorch's default ``SingleTaskGP`` (0.18: RBF kernel with one lengthscale per
    input and its dimension-scaled log-normal prior, constant mean, Gaussian noise
    with a log-normal prior and BoTorch's 1e-4 floor) with no outcome transform
    (the targets are already standardized, see :func:`standardize`).

    Args:
        X: ``n x d`` inputs in the unit cube.
        z: ``n`` standardized targets.
        hyper: Sets the lengthscales, noise and mean; ``None`` (default) keeps
            BoTorch's initial values.
        row_noise: ``n`` known noise variances of the observations (reported SEMs
            squared, standardized), or ``None`` (default).
        learn_noise: With ``row_noise``: ``True`` (default) adds a learned noise
            (BoTorch's prior and floor; ``hyper.noise``) to them (GPyTorch's
            ``FixedNoiseGaussianLikelihood(learn_additional_noise=True)``);
            ``False`` makes them the whole noise (BoTorch's ``train_Yvar``;
            ``hyper.noise`` is not used).

    Returns:
        The ``SingleTaskGP``, in eval mode.
    """
    X = X.reshape(-1, X.shape[-1])
    z = z.reshape(-1, 1).to(X)
    with warnings.catch_warnings():
        # standardized on the completed trials; pending ones (hallucinated or
        # censored targets) may move the mean and spread a little: intended
        warnings.simplefilter("ignore", InputDataWarning)
        given = {} if row_noise is None else known_noise_args(X, row_noise, learn_noise)
        model = SingleTaskGP(X, z, outcome_transform=None, **given)
    if hyper is not None:
        with torch.no_grad():
            model.covar_module.lengthscale = torch.tensor(
                list(hyper.lengthscale), dtype=X.dtype
            ).reshape(1, -1)
            noise = torch.tensor([hyper.noise], dtype=X.dtype)
            if row_noise is None:
                model.likelihood.noise = noise
            elif learn_noise:
                model.likelihood.second_noise = noise
            model.mean_module.constant = torch.tensor(hyper.mean, dtype=X.dtype)
    return model.eval()


def known_noise_args(X: Tensor, row_noise: Tensor, learn: bool) -> dict[str, Any]:
    """The ``SingleTaskGP`` arguments for known noise variances ``row_noise`` (one
    per row of ``X``, raised to :func:`known_floor`): with ``learn`` a likelihood
    adding a learned noise with BoTorch's prior and floor (GPyTorch's
    ``FixedNoiseGaussianLikelihood(learn_additional_noise=True)``), else BoTorch's
    ``train_Yvar`` (they are the whole noise).

    Args:
        X: ``n x d`` inputs (for the count, dtype and device).
        row_noise: ``n`` (or ``n x 1``) noise variances, finite and ``>= 0``.
        learn: Whether a noise is learned on top of them.

    Returns:
        ``{"likelihood": ...}`` or ``{"train_Yvar": n x 1}``.
    """
    check_row_noise("row_noise", row_noise, X.shape[0])
    known = row_noise.reshape(-1).to(X).clamp_min(known_floor(X.dtype))
    if not learn:
        return {"train_Yvar": known.reshape(-1, 1)}
    prior = LogNormalPrior(loc=-4.0, scale=1.0)  # BoTorch's default noise prior
    likelihood = FixedNoiseGaussianLikelihood(
        noise=known,
        learn_additional_noise=True,
        noise_prior=prior,
        noise_constraint=GreaterThan(
            MIN_INFERRED_NOISE_LEVEL, transform=None, initial_value=prior.mode
        ),
    )
    return {"likelihood": likelihood}


def likelihood_noise(likelihood: Any) -> float:
    """A likelihood's noise variance as one number: its (homoskedastic) noise; with
    known noise variances, the learned noise added to them, or (none learned) their
    mean, the model's typical noise.

    Args:
        likelihood: A GPyTorch Gaussian likelihood.

    Returns:
        The noise variance.
    """
    with torch.no_grad():
        if isinstance(likelihood, FixedNoiseGaussianLikelihood):
            second = likelihood.second_noise_covar
            if second is None:
                return float(likelihood.noise_covar.noise.mean())
            return float(second.noise.reshape(-1)[0])
        return float(likelihood.noise.reshape(-1)[0])


def gp_hyperparameters(model: SingleTaskGP) -> Hyperparameters:
    """The hyperparameters of a :func:`practical_gp` as plain floats (JSON-able:
    recorded in Ax's metadata and read back as the next fit's warm start).

    Args:
        model: A :func:`practical_gp`.

    Returns:
        Its :class:`~botorch_bandits.hyperparameters.Hyperparameters` (lengthscales,
        noise, mean).
    """
    with torch.no_grad():
        return Hyperparameters(
            lengthscale=tuple(model.covar_module.lengthscale.reshape(-1).tolist()),
            noise=likelihood_noise(model.likelihood),
            mean=float(model.mean_module.constant.reshape(-1)[0]),
        )


def fit_practical_gp(
    X: Tensor,
    z: Tensor,
    warm: Hyperparameters | None,
    seed: int,
    row_noise: Tensor | None = None,
    learn_noise: bool = True,
) -> tuple[Hyperparameters | None, str | None]:
    r"""Fit a :func:`practical_gp` by maximizing BoTorch's marginal likelihood
    (``fit_gpytorch_mll``: L-BFGS-B with the priors, retried from prior draws on
    failure). The retries draw from torch's generator seeded with ``seed`` inside a
    forked RNG state, so the fit is a function of its inputs.

    Args:
        X, z: ``n x d`` unit-cube inputs and ``n`` standardized targets.
        warm: The previous fit's hyperparameters to start from, or ``None``.
        seed: The seed of the retries' draws.
        row_noise, learn_noise: Known noise variances, as in :func:`practical_gp`.

    Returns:
        ``(hyperparameters, None)``, or ``(None, reason)`` when every attempt
        failed or the result is not finite -- the caller then falls back to the
        last good hyperparameters.
    """
    model = practical_gp(X, z, warm, row_noise, learn_noise)
    model.train()
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    try:
        with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
            torch.manual_seed(seed)
            warnings.simplefilter("ignore")  # retries are reported by the result
            fit_gpytorch_mll(mll)
    except Exception as err:  # any failure falls back, and is named
        return None, f"{type(err).__name__}: {err}"
    hyper = gp_hyperparameters(model)
    values = [*hyper.lengthscale, hyper.noise, hyper.mean]
    if not all(math.isfinite(v) for v in values):
        return None, f"the fit gave non-finite hyperparameters {hyper}"
    return hyper, None
