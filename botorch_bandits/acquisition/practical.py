"""The practical reading of the papers' constants for a fitted GP (the Ax strategy's
``mode="practical"``, and BoTorch users' one call): :func:`practical_confidence`
and :func:`practical_acquisition`, built on the one acquisition factory."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from botorch.acquisition import AcquisitionFunction
from botorch.models.model import Model, ModelList
from gpytorch.kernels import LinearKernel, MaternKernel, RBFKernel, ScaleKernel
from torch import Tensor

from botorch_bandits import validation
from botorch_bandits.acquisition._common import check_input_dim, check_model_device
from botorch_bandits.acquisition.factory import Confidence, make_acquisition
from botorch_bandits.beta import GammaOrder

#: the practical reading's bound on the RKHS norm of a unit-variance objective,
#: chosen on the Ax benchmark's development half: 0.5 against 1 (issue 28), then 0.25
#: against 0.5 and 0.1 with the trust region (issue 51; ``docs/measured.md``)
PRACTICAL_B = 0.25


def practical_confidence(
    noise: float,
    *,
    B: float = PRACTICAL_B,
    R: float | None = None,
    delta: float = 0.1,
    beta: float | None = None,
    num_arms: int | None = None,
) -> Confidence:
    r"""The practical reading of the papers' constants for a GP whose prior variance
    is 1 on its targets' scale (standardized targets, the Ax strategy's
    ``mode="practical"``): ``B`` bounds the RKHS norm of a unit-variance objective
    (default :data:`PRACTICAL_B` = 0.25, chosen on the Ax benchmark's
    development half, 3 seeds: with IGP-UCB's trust region, cumulative regret below
    Ax's default on 11 of its 11 problems against 10 for B = 0.5 and 0.1, final
    simple regret within one s.e. of Ax's on 8 against 5 and 4; a smaller B
    narrows the confidence bound) and ``R`` is the fitted noise's standard deviation
    :math:`\sqrt{\texttt{noise}}` on that scale unless given. Both are unit-free: a
    model that predicts in the objective's units (BoTorch's ``Standardize``) scales
    :math:`\sigma` itself, so the same multiplier applies. The papers fix neither for
    an unknown objective; this reading is an option beside the theory's.

    Args:
        noise: The fitted noise variance on the unit-variance scale.
        B: The RKHS-norm bound (default :data:`PRACTICAL_B`).
        R: The noise constant (default ``None``: :math:`\sqrt{\texttt{noise}}`).
        delta: Confidence in ``(0, 1)`` (default 0.1).
        beta: A constant multiplier of :math:`\sigma` instead of the schedule
            (default ``None``).
        num_arms: :math:`|D|` for GP-UCB's finite schedule (default ``None``).

    Returns:
        The :class:`~botorch_bandits.acquisition.factory.Confidence`.

    Example:
        >>> practical_confidence(noise=0.04).R
        0.2
    """
    r = math.sqrt(noise) if R is None else R
    return Confidence(beta=beta, B=B, R=r, delta=delta, num_arms=num_arms)


def practical_acquisition(
    model: Model,
    algorithm: str = "IGP-UCB",
    *,
    B: float = PRACTICAL_B,
    delta: float = 0.1,
    seed: int | None = None,
    candidates: Tensor | None = None,
    sampler: str | None = None,
) -> AcquisitionFunction:
    r"""IGP-UCB, GP-UCB or GP-TS with the practical parameters for a fitted BoTorch
    ``SingleTaskGP`` in one call -- what the Ax strategy's practical mode uses.

    :func:`practical_confidence` is read from the fitted noise relative to the prior
    variance (the likelihood's noise, on the scale of the training targets --
    standardized under a ``Standardize`` outcome transform -- over the kernel's
    output scale when it has one); the round ``t`` is the number of training points
    plus one. GP-TS draws with ``seed`` on ``candidates`` or with ``sampler``
    (``"pathwise"`` for a gradient optimizer). GP-TS is for a randomized rule in few
    dimensions, not for regret: it trailed IGP-UCB in 6 and 20 dimensions at every
    batch size measured (``bandit_generation_strategy`` says where;
    ``python -m bandit_experiments ax-bench`` measures it).

    GP-UCB (:class:`~botorch_bandits.GPUCB`, Srinivas et al. 2010) takes its
    :math:`\beta_t` schedule from what is known of the decision set:

    * with ``candidates`` (a finite decision set :math:`D`): Theorem 1,
      :math:`\beta_t = 2\log(|D|t^2\pi^2/(6\delta))` with ``num_arms`` = :math:`|D|` =
      the number of candidates (``candidates.shape[-2]``);
    * without: Theorem 3 (``schedule="rkhs"``, for any compact domain),
      :math:`\beta_t = 2B^2 + 300\gamma_t\log^3(t/\delta)` with the practical ``B`` as
      the bound on the RKHS norm (``B_squared = B**2``) and :math:`\gamma_t` read as
      the Theorem 5 growth order of the model's kernel with constant 1
      (:class:`~botorch_bandits.beta.GammaOrder`) in the dimension ``d`` of its
      training inputs (the kernel's ``active_dims`` when it has them):
      :math:`(\log t)^{d+1}` for an RBF kernel, :math:`t^{d(d+1)/(2\nu+d(d+1))}\log t`
      for a Matérn kernel with :math:`\nu > 1`, :math:`d\log t` for a linear one (a
      ``ScaleKernel`` is looked through). The order's constant is unknown, so this is
      a reading, not a bound; the width it gives is large and grows quickly with ``d``
      (:math:`\beta_{13} \approx 2.3 \cdot 10^5` for an RBF kernel in one dimension, a
      multiplier of about 480 on :math:`\sigma`), so pass ``candidates`` where a
      decision set exists. Theorem 2's schedule for a continuous domain needs
      sample-path derivative constants that a fitted model does not give, so it is not
      used here (build ``GPUCB(model, "compact", ...)`` for it).

    Args:
        model: A fitted single-output GPyTorch model with a Gaussian likelihood
            (e.g. ``SingleTaskGP``). A ``ModelListGP`` or a multi-output model is
            refused: pass one of ``model.models`` or fit one model per objective.
        algorithm: ``"IGP-UCB"`` (default), ``"GP-UCB"`` or ``"GP-TS"``.
        B: Bound on the RKHS norm of the unit-variance objective (default
            :data:`PRACTICAL_B`).
        delta: Confidence :math:`\delta \in (0, 1)`.
        seed: Seed of GP-TS's draw.
        candidates: ``N x d`` finite decision set: GP-TS draws on it exactly, and
            GP-UCB takes Theorem 1's schedule with ``num_arms = N``.
        sampler: GP-TS's sampler (``"exact"``, ``"pathwise"`` or ``"auto"``).

    Returns:
        The acquisition function (``IGPUCB``, ``GPUCB`` or ``GPThompsonSampling``)
        at round ``t = n + 1``.

    Raises:
        ValueError: ``model`` is not a single-output GP with a readable noise, or lives
            on the ``'meta'`` device; ``candidates`` is not an ``N x d`` tensor of the
            model's width; GP-UCB without ``candidates`` on a kernel whose
            :math:`\gamma_t` order is unknown (pass ``candidates``); ``algorithm`` is
            not one of the three.

    Example:
        >>> gp = SingleTaskGP(train_X, train_Y, outcome_transform=Standardize(m=1))
        >>> fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
        >>> acqf = practical_acquisition(gp, "IGP-UCB")
    """
    confidence, t = _practical_parameters(model, algorithm, B, delta, candidates)
    return make_acquisition(
        model,
        algorithm,
        confidence,
        t=t,
        seed=seed,
        candidates=candidates,
        sampler=sampler,
    )


def _practical_parameters(
    model: Any, algorithm: str, B: float, delta: float, candidates: Tensor | None
) -> tuple[Confidence, int]:
    """:func:`practical_acquisition`'s confidence (read from the fit; GP-UCB's
    schedule from ``candidates`` or the kernel) and round ``t = n + 1``."""
    noise = _noise_ratio(model)
    n = int(model.train_inputs[0].shape[-2])
    confidence = practical_confidence(noise, B=B, delta=delta)
    if algorithm == "GP-UCB":
        confidence = _gp_ucb_confidence(model, confidence, candidates)
    return confidence, n + 1


def _noise_ratio(model: Any) -> float:
    """The fitted noise over the prior variance of a single-output GP (see
    :func:`practical_acquisition`); a clear ``ValueError`` naming ``model`` for a
    model it cannot be read from."""
    check_model_device(model)
    if isinstance(model, ModelList):
        raise ValueError(
            "`model` must be a single-output GP, got a "
            f"{type(model).__name__} of {len(model.models)} models "
            f"(num_outputs={model.num_outputs}): the practical parameters are read "
            "from one likelihood's noise and one kernel. Pass one of `model.models` "
            "(the objective's model, e.g. practical_acquisition(model.models[0]))."
        )
    num_outputs = getattr(model, "num_outputs", None)
    if num_outputs != 1:
        raise ValueError(
            "`model` must be a single-output GP (num_outputs=1), got "
            f"{type(model).__name__} with num_outputs={num_outputs}: the practical "
            "reading needs one objective. Fit one SingleTaskGP on the objective, or "
            "build IGPUCB / GPUCB / GPThompsonSampling with a posterior_transform."
        )
    noise = getattr(getattr(model, "likelihood", None), "noise", None)
    inputs = getattr(model, "train_inputs", None)
    if (
        not isinstance(noise, Tensor)
        or not isinstance(inputs, tuple)
        or not inputs
        or not isinstance(inputs[0], Tensor)
    ):
        raise ValueError(
            "`model` must be a GPyTorch exact GP with a Gaussian likelihood (its "
            "`likelihood.noise` and `train_inputs` are read), got "
            f"{type(model).__name__}; build the acquisition class with explicit "
            "`B` and `R` instead."
        )
    ratio = float(noise.detach().reshape(-1).mean())
    outputscale = getattr(model.covar_module, "outputscale", None)
    if outputscale is not None:
        ratio /= float(outputscale.detach().reshape(-1).mean())
    return ratio


def _gp_ucb_confidence(
    model: Any, confidence: Confidence, candidates: Tensor | None
) -> Confidence:
    r"""GP-UCB's schedule for :func:`practical_acquisition`: Theorem 1 on
    ``candidates``, else Theorem 3 with the kernel's :math:`\gamma_t` order."""
    if candidates is not None:
        validation.check_tensor("candidates", candidates, min_ndim=2)
        check_input_dim("candidates", candidates, model)
        if candidates.shape[-2] < 1:
            raise ValueError(
                "`candidates` must be an N x d tensor with N >= 1, got shape "
                f"{tuple(candidates.shape)}."
            )
        return dataclasses.replace(
            confidence, gp_ucb="finite", num_arms=int(candidates.shape[-2])
        )
    return dataclasses.replace(
        confidence, gp_ucb="rkhs", gamma=_kernel_gamma_order(model)
    )


def _kernel_gamma_order(model: Any) -> GammaOrder:
    r""":math:`\gamma_t` as the Theorem 5 order (constant 1) of the model's kernel in
    the dimension of its inputs; a ``ValueError`` naming ``candidates`` when the
    kernel has no such order."""
    kernel = getattr(model, "covar_module", None)
    while isinstance(kernel, ScaleKernel):
        kernel = kernel.base_kernel
    active = getattr(kernel, "active_dims", None)
    if isinstance(active, Tensor):
        d = int(active.numel())
    else:
        d = int(model.train_inputs[0].shape[-1])
    if isinstance(kernel, RBFKernel):
        return GammaOrder("rbf", d)
    if isinstance(kernel, MaternKernel) and float(kernel.nu) > 1.0:
        return GammaOrder("matern", d, nu=float(kernel.nu))
    if isinstance(kernel, LinearKernel):
        return GammaOrder("linear", d)
    what = type(kernel).__name__
    if isinstance(kernel, MaternKernel):
        what += f" with nu={float(kernel.nu)} (Theorem 5 needs nu > 1)"
    raise ValueError(
        "GP-UCB without `candidates` uses Srinivas et al.'s Theorem 3 schedule, "
        "whose gamma_t is read as the Theorem 5 order of the model's kernel; there "
        f"is none for {what} (orders: RBF, Matern nu > 1, linear). Pass "
        "`candidates` (a finite decision set: Theorem 1 with num_arms = N), or "
        'build GPUCB(model, "rkhs", B_squared=..., gamma=...) with your own gamma.'
    )
