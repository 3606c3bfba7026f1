"""The GP a decision uses: BoTorch's standard GP fitted on standardized targets
(the practical mode, warm-started, with a recorded fallback, refitted on a schedule),
or the theory mode's fixed kernel, optionally fitted by marginal likelihood on raw
targets."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel
from gpytorch.means import ZeroMean
from gpytorch.mlls import ExactMarginalLogLikelihood
from torch import Tensor

from botorch_bandits.core.options import Refit, TheoryModel
from botorch_bandits.hyperparameters import Hyperparameters
from botorch_bandits.models import (
    FeatureCache,
    NystromGP,
    draw_dictionary,
    drawn_on,
    fit_practical_gp,
    fixed_gp,
    gp_hyperparameters,
    make_kernel,
    practical_gp,
)
from botorch_bandits.models.practical import (
    known_floor,
    known_noise_args,
    likelihood_noise,
)
from botorch_bandits.seeding import step_seed


@dataclass(frozen=True)
class KnownNoise:
    """Known noise variances of the model's rows.

    Args:
        var: ``n`` variances (reported SEMs squared, in the model's units; 0 where a
            row has none under ``learn``).
        learn: Whether the model's own noise (fitted, or the theory's) is added to
            them, or they are the whole noise.
    """

    var: Tensor
    learn: bool

    def rows(self, base: float) -> Tensor:
        """Each row's noise variance with the model's noise ``base``.

        Args:
            base: The model's noise variance.

        Returns:
            ``n`` variances, at least GPyTorch's floor.
        """
        total = self.var + base if self.learn else self.var
        return total.clamp_min(known_floor(self.var.dtype))

    def level(self, base: float) -> float:
        """The rows' mean noise variance (the model's noise level: for the
        confidence width and the noise-free test).

        Args:
            base: The model's noise variance (returned as is with no rows).

        Returns:
            The mean variance.
        """
        return float(self.rows(base).mean()) if self.var.numel() else base


def ard_kernel(kernel: str, d: int) -> Any:
    """The theory kernel with one lengthscale per dimension (for fitting).

    Args:
        kernel: ``"matern52"``, or anything else for RBF.
        d: The input dimension.

    Returns:
        The GPyTorch kernel (no ``ScaleKernel``).
    """
    if kernel == "matern52":
        return MaternKernel(nu=2.5, ard_num_dims=d)
    return RBFKernel(ard_num_dims=d)


def build_model(
    X: Tensor,
    Y: Tensor,
    theory: TheoryModel | None,
    hyper: Hyperparameters | None,
    sparse_after: int | None = None,
    seed: int = 0,
    sparse_size: int | None = None,
    cache: FeatureCache | None = None,
    completed: int | None = None,
    known: KnownNoise | None = None,
) -> Any:
    """The decision's GP on ``X`` (``n x d``) and targets ``Y``: the practical GP
    (``theory=None``) with ``hyper``, or the theory kernel, fixed or with the fitted
    ``hyper`` (a scaled ARD kernel) -- in either mode, past ``sparse_after`` points,
    the sparse :class:`NystromGP` with that kernel on a dictionary drawn from the
    first rows (:func:`drawn_on` of ``completed``, the rows of completed trials, or
    of all rows) with ``seed`` (expected size at most ``sparse_size``), its blocks
    kept in ``cache`` (:class:`FeatureCache`).

    Args:
        X: ``n x d`` unit-cube inputs.
        Y: ``n`` targets (standardized in the practical mode, raw in the theory's).
        theory: The theory mode's model options, or ``None`` (the practical GP).
        hyper: The hyperparameters, or ``None`` (the practical GP's initial values,
            or the theory's fixed kernel).
        sparse_after: Past this many rows, the sparse model (default ``None``:
            never).
        seed: The dictionary draw's seed (default 0).
        sparse_size: The dictionary's expected size at most (default ``None``: the
            sparse model's own cap).
        cache: The sparse model's :class:`FeatureCache` (default ``None``).
        completed: The rows of completed trials the dictionary is drawn from
            (default ``None``: all rows).
        known: Known noise variances of the rows (:class:`KnownNoise`), with the
            model's noise added or in its place (default ``None``).

    Returns:
        A ``SingleTaskGP`` or a :class:`NystromGP`, in eval mode.
    """
    d = X.shape[-1]
    if sparse_after is not None and X.shape[0] > sparse_after:
        # the exact model's kernel, lengthscales, output scale, noise, constant mean
        if theory is None:
            spec = None  # no hyperparameters yet: the exact prior GP
            if hyper is not None:
                spec = ("rbf", hyper.lengthscale, 1.0, hyper.noise, hyper.mean or 0.0)
        elif hyper is None:  # the theory's kernel: isotropic, unit variance
            spec = (theory.kernel, [theory.lengthscale] * d, 1.0, theory.noise, 0.0)
        else:
            spec = (
                theory.kernel,
                hyper.lengthscale,
                hyper.outputscale,
                hyper.noise,
                0.0,
            )
        if spec is not None:
            n = X.shape[0] if completed is None else min(completed, X.shape[0])
            a = drawn_on(n, max(sparse_after, 1))
            row_noise = None
            if known is not None:
                row_noise = known.rows(spec[3])
                if not known.learn:  # the known noise alone: its mean the model's
                    spec = (*spec[:3], float(row_noise.mean()), spec[4])
            return _sparse(X, Y, *spec, seed, sparse_size, a, cache, row_noise)
    if theory is None:
        if known is None:
            return practical_gp(X, Y, hyper)
        if hyper is None:
            return practical_gp(X, Y, None, known.var, known.learn)
        return practical_gp(X, Y, hyper, known.rows(hyper.noise), learn_noise=False)
    if hyper is None:
        kernel = make_kernel(theory.kernel, theory.lengthscale)
        rows = None if known is None else known.rows(theory.noise)
        return fixed_gp(X, Y.reshape(-1, 1), kernel, theory.noise, rows)
    k = ScaleKernel(ard_kernel(theory.kernel, d)).to(torch.double)
    k.base_kernel.lengthscale = torch.tensor(
        hyper.lengthscale, dtype=torch.double
    ).reshape(1, -1)
    k.outputscale = hyper.outputscale
    for p in k.parameters():
        p.requires_grad_(False)
    rows = None if known is None else known.rows(hyper.noise)
    return fixed_gp(X, Y.reshape(-1, 1), k, hyper.noise, rows)


def _sparse(
    X: Tensor,
    Y: Tensor,
    kernel: str,
    lengthscale: Sequence[float],
    outputscale: float,
    noise: float,
    mean: float,
    seed: int,
    size: int | None,
    rows: int,
    cache: FeatureCache | None,
    row_noise: Tensor | None = None,
) -> NystromGP:
    """:class:`NystromGP` on a dictionary drawn from the first ``rows`` rows with
    ``seed`` and ``rows`` (expected size at most ``size``); its
    ``leverage_regularization`` the one the scores were taken at, ``drawn_on``
    ``rows``."""
    ls = list(lengthscale)
    cache = cache if cache is not None else FeatureCache()
    key = (X[:rows].numpy().tobytes(), *ls, noise, seed, size, kernel, outputscale)
    dictionary, lam = cache.dictionary(
        key,
        lambda: draw_dictionary(
            X[:rows],
            ls,
            noise,
            step_seed(seed, rows),
            size=size,
            kernel=kernel,
            outputscale=outputscale,
        ),
    )
    model = NystromGP(
        X, Y, ls, noise, mean, dictionary, kernel, outputscale, cache, row_noise
    )
    model.leverage_regularization = lam
    model.drawn_on = rows
    return model


def fit_theory(
    X: Tensor, Y: Tensor, kernel: str, known: KnownNoise | None = None
) -> Hyperparameters | None:
    """Marginal-likelihood fit (lengthscales, output scale, noise) of a zero-mean GP
    with the theory kernel on raw targets; ``None`` with fewer than 2 points (the
    fixed prior is used). With ``known`` noise variances the noise fitted is the one
    added to them (``known.learn``), or none (its record: their mean).

    Args:
        X: ``n x d`` unit-cube inputs.
        Y: ``n`` raw targets.
        kernel: The theory kernel's name (``"rbf"`` or ``"matern52"``).
        known: Known noise variances of the rows (:class:`KnownNoise`; default ``None``).

    Returns:
        The fitted :class:`~botorch_bandits.hyperparameters.Hyperparameters`
        (lengthscales, output scale, noise), or ``None``.
    """
    if X.shape[0] < 2:
        return None
    extra = {} if known is None else known_noise_args(X, known.var, known.learn)
    gp = SingleTaskGP(
        X,
        Y.reshape(-1, 1),
        covar_module=ScaleKernel(ard_kernel(kernel, X.shape[-1])),
        mean_module=ZeroMean(),
        outcome_transform=None,
        **extra,
    ).to(torch.double)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    with torch.no_grad():
        return Hyperparameters(
            lengthscale=tuple(
                gp.covar_module.base_kernel.lengthscale.reshape(-1).tolist()
            ),
            outputscale=float(gp.covar_module.outputscale),
            noise=likelihood_noise(gp.likelihood),
        )


#: the fewest observations the sparse model's hyperparameters are fitted on (a fit
#: on fewer, with a low threshold, overestimated the noise: issue 30's six-hump
#: camel, 100 of 300 points)
FIT_SUBSET = 1000


def fit_subset(n: int, sparse_after: int | None, seed: int) -> Tensor | None:
    """The rows the practical GP is fitted on with the sparse model past
    ``sparse_after`` observations: ``size = max(sparse_after, FIT_SUBSET)`` of the
    ``n`` drawn uniformly with ``seed`` and ``n`` (sorted); ``None`` (all rows)
    without a sparse model or up to ``size`` observations.

    Args:
        n: The number of observations.
        sparse_after: The sparse model's threshold, or ``None``.
        seed: The draw's seed.

    Returns:
        The sorted row indices, or ``None``.
    """
    if sparse_after is None:
        return None
    size = max(sparse_after, FIT_SUBSET)
    if n <= size:
        return None
    rng = np.random.default_rng([int(seed), n, 32])
    return torch.as_tensor(np.sort(rng.permutation(n)[:size]))


def fit_practical(
    X0: Tensor,
    Z0: Tensor,
    warm: Hyperparameters | None,
    seed: int,
    cache: dict[Any, dict[str, Any]],
    known: KnownNoise | None = None,
    from_prior: bool = False,
) -> dict[str, Any]:
    """The practical GP's fit on the completed trials (standardized targets ``Z0``):
    a marginal-likelihood fit warm-started from ``warm`` (``from_prior``: from
    BoTorch's initial values, the priors' modes, instead); if it fails, ``warm`` with
    a warning (``status="fallback"`` and its reason). Returns the fit as recorded in
    the metadata (``status`` and the hyperparameters); one fit per data set in
    ``cache`` (every decision of a batch sees the same completed data).

    Args:
        X0: ``n x d`` unit-cube inputs of the completed trials.
        Z0: ``n`` standardized targets.
        warm: The previous fit's hyperparameters, or ``None``.
        seed: The run's seed (the fit's retries use :func:`step_seed` of it and ``n``).
        cache: Fits by their data (changed in place).
        known: The rows' known noise variances, standardized (default ``None``).
        from_prior: Start from BoTorch's initial values instead of ``warm``
            (default ``False``).

    Returns:
        A copy of the recorded fit: ``status`` (``"prior"``, ``"fitted"`` or
        ``"fallback"``, with ``reason``) and the hyperparameters.
    """
    key: tuple = (X0.numpy().tobytes(), Z0.numpy().tobytes())
    noise: dict[str, Any] = {}
    if known is not None:
        key += (known.var.numpy().tobytes(), known.learn)
        noise = {"row_noise": known.var, "learn_noise": known.learn}
    if key not in cache:
        reason = None
        hyper = warm
        if X0.shape[0] == 0:
            status = "prior"
        else:
            start = None if from_prior else warm
            fitted, reason = fit_practical_gp(
                X0, Z0, start, step_seed(seed, X0.shape[0]), **noise
            )
            status = "fitted"
            if fitted is None:
                status = "fallback"
                warnings.warn(
                    f"BanditNode: the GP fit on {X0.shape[0]} trials failed "
                    f"({reason}); this decision uses "
                    + (
                        "the last good hyperparameters"
                        if warm is not None
                        else "BoTorch's initial hyperparameters"
                    )
                    + " (recorded in the trial's metadata as fit.status="
                    "'fallback').",
                    stacklevel=3,
                )
            else:
                hyper = fitted
        if hyper is None:  # no fit yet: BoTorch's initial values
            hyper = gp_hyperparameters(practical_gp(X0, Z0, None, **noise))
        fit = {"status": status, **hyper.as_dict()}
        if reason is not None:
            fit["reason"] = reason
        cache[key] = fit
    return dict(cache[key])


#: the counts a practical fit is recorded with: its observations, the completed
#: trials of the history then, and the index of the first trial since the last
#: restart (with long-term constraints on the composite target also the epoch,
#: whose multipliers make the targets)
FIT_COUNTS = ("n", "completed", "start")


def refit_due(
    last: dict[str, Any] | None, counts: dict[str, int], refit: Refit
) -> bool:
    """Whether the practical GP is fitted again at this decision (:class:`Refit`):
    ``last`` is the last recorded fit (``None``, or one recorded without the
    counts of :data:`FIT_COUNTS`: due), ``counts`` this decision's.

    Args:
        last: The last recorded fit, or ``None``.
        counts: This decision's :data:`FIT_COUNTS` (and ``epoch``, ``sems``).
        refit: The refit schedule.

    Returns:
        Whether a fit is due.
    """
    # the trials completed since the last restart, or the model's rows if more: a
    # model window's rows stay at its size, its refits follow the completions
    if refit.growth == 1.0 or max(counts["n"], counts["completed"]) <= refit.after:
        return True
    if last is None or any(k not in last for k in (*FIT_COUNTS, "lengthscale")):
        return True
    if last.get("status") in ("prior", "fallback"):
        return True  # no fit yet, or the last one failed: try again
    if last.get("sems") != counts.get("sems"):
        return True  # what the recorded noise means changed
    if ("epoch" in last) != ("epoch" in counts):
        return True  # the targets are another kind (composite or not)
    if "epoch" in counts and _epochs_grown(last["epoch"], counts["epoch"], refit):
        return True  # the multipliers, and so the targets, moved far enough
    if last["start"] != counts["start"]:
        return True  # the data begin at another restart, or the targets changed
    grown = counts["completed"] - last["completed"]
    return grown >= (refit.growth - 1.0) * last["n"]


def _epochs_grown(fitted: int, now: int, refit: Refit) -> bool:
    """Whether the long-term constraints' epochs begun since a fit (the composite
    target's multipliers change at each) grew like the trials do between fits: by
    at least ``(growth - 1)`` times the epochs begun at that fit (``fitted`` and
    ``now`` 0-based: any new epoch after the first)."""
    grown = now - fitted
    return grown > 0 and grown >= (refit.growth - 1.0) * fitted


def reused_fit(last: dict[str, Any]) -> dict[str, Any]:
    """The last recorded fit, reused (``status="reused"``; its counts kept).

    Args:
        last: The last recorded fit.

    Returns:
        The record for this decision.
    """
    keep = ("lengthscale", "noise", "mean", *FIT_COUNTS, "epoch", "sems")
    return {"status": "reused", **{k: last[k] for k in keep if k in last}}
