"""BoTorch input constructors for every acquisition class of the package, registered
with ``acqf_input_constructor``: how Ax's modular BoTorch generator builds them
(``botorch_acqf_class=Cls``). Each declares ``X_pending`` and applies its pending
view through the model (ignore, hallucinate, censor, in_model); the round ``t`` is
left to the classes, and a TS draw's seed is :func:`~botorch_bandits.seeding.step_seed`
of the decision's index. docs/botorch.md ("Input constructors") has the details.
"""

from __future__ import annotations

from typing import Any

import torch
from botorch.acquisition.input_constructors import (
    MaybeDict,
    acqf_input_constructor,
)
from botorch.acquisition.objective import (
    PosteriorTransform,
    ScalarizedPosteriorTransform,
)
from botorch.models.model import Model
from botorch.sampling.pathwise.utils import get_train_inputs
from botorch.utils.datasets import SupervisedDataset
from torch import Tensor

from botorch_bandits.acquisition._batch import censored_model, hallucinated_model
from botorch_bandits.acquisition._common import num_observations
from botorch_bandits.acquisition.sdf import GPUCBSDF, GPThompsonSamplingSDF
from botorch_bandits.acquisition.thompson import GPThompsonSampling
from botorch_bandits.acquisition.ucb import GPUCB, IGPUCB
from botorch_bandits.seeding import step_seed
from botorch_bandits.upstream import dataset_field
from botorch_bandits.validation import check_choice

PENDING_VIEWS = ("ignore", "hallucinate")
SDF_PENDING_VIEWS = ("censor", "in_model")


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------
def _train_X(
    model: Model, training_data: MaybeDict[SupervisedDataset] | None
) -> Tensor:
    """``(batch) x n x d`` observed inputs, in the space ``model.posterior`` takes."""
    if training_data is not None:
        return dataset_field(training_data, "X")

    try:
        (X,) = get_train_inputs(model, transformed=False)
    except Exception as err:  # any model without exact-GP training inputs
        raise ValueError(
            f"Cannot read the training inputs of a {type(model).__name__}; pass "
            "`training_data`."
        ) from err
    return X


def _checked_pending(X_pending: Any, train_X: Tensor) -> Tensor | None:
    """``p x d`` pending points (``None`` for none), validated against the data."""
    if X_pending is None:
        return None
    if not isinstance(X_pending, Tensor):
        raise ValueError(
            f"`X_pending` must be a p x d tensor or None, got X_pending={X_pending!r}."
        )
    if X_pending.ndim != 2 or X_pending.shape[-1] != train_X.shape[-1]:
        raise ValueError(
            f"`X_pending` must be p x d with d={train_X.shape[-1]} (the training "
            f"inputs' width), got shape {tuple(X_pending.shape)}."
        )
    if X_pending.shape[0] == 0:
        return None
    return X_pending.detach().to(train_X)


def _check_counts(model: Model, train_X: Tensor) -> None:
    """The model must hold exactly the rows of ``training_data``."""
    try:
        n_model = num_observations(model)
    except ValueError:  # a model that does not expose its count: nothing to compare
        return
    if n_model != train_X.shape[-2]:
        raise ValueError(
            f"`training_data` holds {train_X.shape[-2]} points but the model holds "
            f"{n_model}: pass the data the model was trained on."
        )


def _model_for_pending(
    model: Model, X_pending: Tensor | None, pending: str, y_min: float = 0.0
) -> Model:
    if X_pending is None or pending in ("ignore", "in_model"):
        return model
    if pending == "hallucinate":
        return hallucinated_model(model, X_pending)
    return censored_model(model, X_pending, y_min)


def _decision_index(train_X: Tensor, X_pending: Tensor | None, pending: str) -> int:
    """Number of issued queries plus one (pending points are already in the data
    with ``pending="in_model"``)."""
    issued = train_X.shape[-2]
    if X_pending is not None and pending != "in_model":
        issued += X_pending.shape[0]
    return issued + 1


def _draw_seed(seed: Any, decision: int) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"`seed` must be an integer or None, got seed={seed!r}.")
    return step_seed(seed, decision)


def _thompson_transform(
    model: Model,
    posterior_transform: PosteriorTransform | None,
    sampler: str,
    candidates: Tensor | None,
    maximize: bool,
) -> tuple[PosteriorTransform | None, bool]:
    """The pathwise sampler takes no posterior transform: Ax's single-objective
    ``ScalarizedPosteriorTransform`` (weight +1 or -1, no offset) on a single-output
    model becomes the ``maximize`` flag (a draw of :math:`-f` has the law of minus a
    draw of :math:`f`). The exact sampler keeps it."""
    if sampler not in ("auto", "exact", "pathwise"):
        return posterior_transform, maximize  # the class reports the bad sampler
    pathwise = sampler == "pathwise" or (sampler == "auto" and candidates is None)
    if posterior_transform is None or not pathwise:
        return posterior_transform, maximize
    if (
        isinstance(posterior_transform, ScalarizedPosteriorTransform)
        and model.num_outputs == 1
        and posterior_transform.weights.numel() == 1
        and float(posterior_transform.offset) == 0.0
        and abs(float(posterior_transform.weights)) == 1.0
    ):
        sign = float(posterior_transform.weights) > 0
        return None, bool(maximize) == sign
    raise ValueError(
        "The pathwise GP-TS sampler supports no posterior transform other than a "
        "single-output ScalarizedPosteriorTransform with weight +1 or -1 and no "
        f"offset, got posterior_transform={posterior_transform!r}; pass `candidates` "
        "(exact sampler) or a single-output model."
    )


def _recent(
    train_X: Tensor,
    X_pending: Tensor | None,
    pending: str,
    window: Any,
    recent: Any,
) -> Tensor:
    r"""The queries :math:`x_{t-m}, ..., x_{t-1}` of Verma et al. 2022, Eq. (2):
    ``m x d`` (or ``m x batch x d`` for a batched model)."""
    if recent is not None:
        if window is not None:
            raise ValueError(
                "Pass either `recent` (the last m queries) or `window` (m), not both "
                f"(got window={window!r})."
            )
        if not isinstance(recent, Tensor) or recent.ndim < 2:
            raise ValueError(
                f"`recent` must be an m x d tensor, got recent={recent!r}."
            )
        if recent.shape[-1] != train_X.shape[-1]:
            raise ValueError(
                f"`recent` must have d={train_X.shape[-1]} columns, got shape "
                f"{tuple(recent.shape)}."
            )
        return recent.to(train_X)
    if window is not None and (
        isinstance(window, bool) or not isinstance(window, int) or window < 0
    ):
        raise ValueError(
            "`window` (m, in issued queries) must be an integer >= 0 or None (no "
            f"window), got window={window!r}."
        )
    issued = train_X  # (batch) x n x d, in issue order
    if X_pending is not None and pending == "censor":
        pend = X_pending.expand(*train_X.shape[:-2], *X_pending.shape)
        issued = torch.cat([train_X, pend], dim=-2)  # (batch) x (n + p) x d
    n = issued.shape[-2]
    lo = 0 if window is None else max(0, n - window)
    return issued[..., lo:, :].movedim(-2, 0)  # m x (batch) x d


def _prepare(
    model: Model,
    training_data: MaybeDict[SupervisedDataset] | None,
    X_pending: Any,
    pending: str,
    allowed: tuple[str, ...],
) -> tuple[Tensor, Tensor | None]:
    check_choice("pending", pending, allowed)
    train_X = _train_X(model, training_data)
    _check_counts(model, train_X)
    return train_X, _checked_pending(X_pending, train_X)


# --------------------------------------------------------------------------------------
# GP-UCB and IGP-UCB
# --------------------------------------------------------------------------------------
@acqf_input_constructor(GPUCB)
def construct_inputs_gp_ucb(
    model: Model,
    training_data: MaybeDict[SupervisedDataset] | None = None,
    X_pending: Tensor | None = None,
    posterior_transform: PosteriorTransform | None = None,
    pending: str = "ignore",
    schedule: str = "finite",
    delta: float = 0.1,
    num_arms: int | None = None,
    dim: int | None = None,
    a: float | None = None,
    b: float | None = None,
    r: float | None = None,
    B_squared: float | Tensor | None = None,
    gamma: Any = None,
    beta: float | None = None,
    beta_scale: float = 1.0,
    maximize: bool = True,
    B: float | Tensor | None = None,
) -> dict[str, Any]:
    r"""Keyword arguments of :class:`~botorch_bandits.acquisition.GPUCB`.

    GP-UCB (Srinivas et al. 2010, Algorithm 1, rule (6)):
    :math:`\mu_{t-1}(x) + \sqrt{\beta_t}\sigma_{t-1}(x)`, with ``t - 1`` the number of
    points of the model it is built on (recomputed on every call).

    Args:
        model: A fitted single-output model (or multi-output with
            ``posterior_transform``) on the observed points.
        training_data: The data the model was trained on (checked against it).
        X_pending: ``p x d`` points issued without feedback (Ax's running trials).
        posterior_transform: Passed through (Ax's scalarization of the objective).
        pending: ``"ignore"`` (asynchronous GP-UCB, Verma et al. 2022 §6:
            ``t = n + 1``) or ``"hallucinate"`` (GP-BUCB, Verma et al. 2022 §4: the
            model is conditioned on ``X_pending`` at its own posterior mean;
            ``t = n + p + 1``).
        schedule, delta, num_arms, dim, a, b, r, B_squared: As in
            :class:`~botorch_bandits.acquisition.GPUCB`.
        gamma, beta, beta_scale, maximize: As in
            :class:`~botorch_bandits.acquisition.GPUCB`.
        B: Deprecated spelling of ``B_squared`` (passed on: the class warns).

    Returns:
        The keyword arguments of ``GPUCB`` (``t`` is left to the class).
    """
    _, X_p = _prepare(model, training_data, X_pending, pending, PENDING_VIEWS)
    return {
        "model": _model_for_pending(model, X_p, pending),
        "schedule": schedule,
        "delta": delta,
        "num_arms": num_arms,
        "dim": dim,
        "a": a,
        "b": b,
        "r": r,
        "B_squared": B_squared,
        "B": B,
        "gamma": gamma,
        "beta": beta,
        "beta_scale": beta_scale,
        "posterior_transform": posterior_transform,
        "maximize": maximize,
    }


@acqf_input_constructor(IGPUCB)
def construct_inputs_igp_ucb(
    model: Model,
    training_data: MaybeDict[SupervisedDataset] | None = None,
    X_pending: Tensor | None = None,
    posterior_transform: PosteriorTransform | None = None,
    pending: str = "ignore",
    B: float | Tensor | None = None,
    R: float | Tensor | None = None,
    delta: float = 0.1,
    gamma: Any = "observed",
    beta: float | None = None,
    maximize: bool = True,
) -> dict[str, Any]:
    r"""Keyword arguments of :class:`~botorch_bandits.acquisition.IGPUCB`.

    IGP-UCB (Chowdhury & Gopalan 2017, Algorithm 1, Eq. (5)):
    :math:`\mu_{t-1}(x) + \beta_t\sigma_{t-1}(x)`,
    :math:`\beta_t = B + R\sqrt{2(\gamma_{t-1} + 1 + \ln(1/\delta))}`, where ``t - 1``
    and (``gamma="observed"``) :math:`\gamma_{t-1}` come from the model's points on
    every call.

    Args:
        model, training_data, X_pending, posterior_transform: As in
            :func:`construct_inputs_gp_ucb`.
        pending: ``"ignore"`` (``t = n + 1``) or ``"hallucinate"`` (GP-BUCB style,
            ``t = n + p + 1``, :math:`\gamma_{t-1}` of all issued points).
        B, R, delta, gamma, beta, maximize: As in
            :class:`~botorch_bandits.acquisition.IGPUCB`.

    Returns:
        The keyword arguments of ``IGPUCB``.
    """
    _, X_p = _prepare(model, training_data, X_pending, pending, PENDING_VIEWS)
    return {
        "model": _model_for_pending(model, X_p, pending),
        "B": B,
        "R": R,
        "delta": delta,
        "gamma": gamma,
        "beta": beta,
        "posterior_transform": posterior_transform,
        "maximize": maximize,
    }


# --------------------------------------------------------------------------------------
# GP-TS
# --------------------------------------------------------------------------------------
@acqf_input_constructor(GPThompsonSampling)
def construct_inputs_gp_ts(
    model: Model,
    training_data: MaybeDict[SupervisedDataset] | None = None,
    X_pending: Tensor | None = None,
    posterior_transform: PosteriorTransform | None = None,
    pending: str = "ignore",
    B: float | Tensor | None = None,
    R: float | Tensor | None = None,
    delta: float = 0.1,
    gamma: Any = "observed",
    v: float | None = None,
    candidates: Tensor | None = None,
    sampler: str = "auto",
    num_features: int = 4096,
    seed: int | None = None,
    maximize: bool = True,
) -> dict[str, Any]:
    r"""Keyword arguments of :class:`~botorch_bandits.acquisition.GPThompsonSampling`.

    GP-TS (Chowdhury & Gopalan 2017, Algorithm 2): one draw
    :math:`f_t \sim GP(\mu_{t-1}, v_t^2 k_{t-1})`,
    :math:`v_t = B + R\sqrt{2(\gamma_{t-1} + 1 + \ln(2/\delta))}`.

    Args:
        model, training_data, X_pending: As in :func:`construct_inputs_gp_ucb`.
        posterior_transform: Passed through for the exact sampler; for the pathwise
            sampler a single-output weight of +1 / -1 (Ax's objective) becomes
            ``maximize`` (other transforms raise ``ValueError``).
        pending: ``"ignore"`` (asy-TS, Verma et al. 2022 §6) or ``"hallucinate"``
            (GP-BTS, Verma et al. 2022 §4).
        B, R, delta, gamma, v, candidates, sampler, num_features, maximize: As in
            :class:`~botorch_bandits.acquisition.GPThompsonSampling`.
        seed: Base seed: the draw's seed is ``(seed * 1000003 + n + p + 1) % 2**62``
            (``n + p`` issued queries), so every decision gets its own draw and a
            replay gets the same one; ``None`` uses torch's global generator.

    Returns:
        The keyword arguments of ``GPThompsonSampling``.
    """
    train_X, X_p = _prepare(model, training_data, X_pending, pending, PENDING_VIEWS)
    transform, maximize = _thompson_transform(
        model, posterior_transform, sampler, candidates, maximize
    )
    return {
        "model": _model_for_pending(model, X_p, pending),
        "B": B,
        "R": R,
        "delta": delta,
        "gamma": gamma,
        "v": v,
        "candidates": candidates,
        "sampler": sampler,
        "num_features": num_features,
        "seed": _draw_seed(seed, _decision_index(train_X, X_p, pending)),
        "posterior_transform": transform,
        "maximize": maximize,
    }


# --------------------------------------------------------------------------------------
# GP-UCB-SDF and GP-TS-SDF
# --------------------------------------------------------------------------------------
def _sdf_inputs(
    model: Model,
    training_data: MaybeDict[SupervisedDataset] | None,
    X_pending: Any,
    pending: str,
    y_min: Any,
    window: Any,
    recent: Any,
) -> tuple[Model, Tensor, Tensor, Tensor | None]:
    train_X, X_p = _prepare(model, training_data, X_pending, pending, SDF_PENDING_VIEWS)
    if isinstance(y_min, bool) or not isinstance(y_min, (int, float)):
        raise ValueError(f"`y_min` must be a finite number, got y_min={y_min!r}.")
    if not torch.isfinite(torch.tensor(float(y_min))):
        raise ValueError(f"`y_min` must be a finite number, got y_min={y_min!r}.")
    last = _recent(train_X, X_p, pending, window, recent)
    return _model_for_pending(model, X_p, pending, float(y_min)), last, train_X, X_p


@acqf_input_constructor(GPUCBSDF)
def construct_inputs_gp_ucb_sdf(
    model: Model,
    training_data: MaybeDict[SupervisedDataset] | None = None,
    X_pending: Tensor | None = None,
    posterior_transform: PosteriorTransform | None = None,
    pending: str = "censor",
    y_min: float = 0.0,
    window: int | None = None,
    recent: Tensor | None = None,
    B_f: float | None = None,
    R: float | None = None,
    B_y: float = 1.0,
    delta: float = 0.1,
    gamma: Any = "observed",
    beta: float | None = None,
    maximize: bool = True,
) -> dict[str, Any]:
    r"""Keyword arguments of :class:`~botorch_bandits.acquisition.GPUCBSDF`.

    GP-UCB-SDF (Verma et al. 2022, Eq. (2)): :math:`\mu_{t-1} + \nu_t\sigma_{t-1}`,
    :math:`\nu_t = B_y\sum_{s=t-m}^{t-1}\sigma_{t-1}(x_s) + \beta_t`, on the posterior
    of Eq. (1) (every issued query, censored targets); ``t = n + p + 1``.

    Args:
        model: A fitted single-output model on the observed points
            (``pending="censor"``), or on every issued query with censored targets
            (``pending="in_model"``).
        training_data: The data the model was trained on, rows in issue order (the
            last ``window`` of them, followed by ``X_pending``, are the recent
            queries).
        X_pending: ``p x d`` queries issued without feedback, the most recent last.
        posterior_transform: Passed through.
        pending: ``"censor"`` (default: condition the model on ``X_pending`` with
            target ``y_min``) or ``"in_model"`` (already censored; nothing added).
        y_min: The censored target -- the known minimum (or a lower bound) of the
            objective, in the model's outcome units (Verma et al. 2022 shift f so it
            is 0).
        window: :math:`m`, the number of most recent issued queries in the sum
            (``None``: all of them, :math:`m = \infty`).
        recent: ``m x d`` the recent queries given explicitly (e.g. the time clock of
            their App. A.4); excludes ``window``.
        B_f, R, B_y, delta, gamma, beta, maximize: As in
            :class:`~botorch_bandits.acquisition.GPUCBSDF`.

    Returns:
        The keyword arguments of ``GPUCBSDF``.
    """
    cond, last, _, _ = _sdf_inputs(
        model, training_data, X_pending, pending, y_min, window, recent
    )
    return {
        "model": cond,
        "recent": last,
        "B_f": B_f,
        "R": R,
        "B_y": B_y,
        "delta": delta,
        "gamma": gamma,
        "beta": beta,
        "posterior_transform": posterior_transform,
        "maximize": maximize,
    }


@acqf_input_constructor(GPThompsonSamplingSDF)
def construct_inputs_gp_ts_sdf(
    model: Model,
    training_data: MaybeDict[SupervisedDataset] | None = None,
    X_pending: Tensor | None = None,
    posterior_transform: PosteriorTransform | None = None,
    pending: str = "censor",
    y_min: float = 0.0,
    window: int | None = None,
    recent: Tensor | None = None,
    B_f: float | None = None,
    R: float | None = None,
    B_y: float = 1.0,
    delta: float = 0.1,
    gamma: Any = "observed",
    beta: float | None = None,
    candidates: Tensor | None = None,
    sampler: str = "auto",
    num_features: int = 4096,
    seed: int | None = None,
    maximize: bool = True,
) -> dict[str, Any]:
    r"""Keyword arguments of :class:`~botorch_bandits.acquisition.GPThompsonSamplingSDF`.

    GP-TS-SDF (Verma et al. 2022, Eq. (3)): one draw
    :math:`f_t \sim GP(\mu_{t-1}, \nu_t^2\sigma_{t-1}^2)` on the censored posterior.

    Args:
        model, training_data, X_pending, posterior_transform: As in
            :func:`construct_inputs_gp_ucb_sdf` (a ``posterior_transform`` as in
            :func:`construct_inputs_gp_ts` for the pathwise sampler).
        pending, y_min, window, recent: As in :func:`construct_inputs_gp_ucb_sdf`.
        B_f, R, B_y, delta, gamma, beta, maximize: As in
            :class:`~botorch_bandits.acquisition.GPThompsonSamplingSDF`.
        candidates, sampler, num_features: As in
            :class:`~botorch_bandits.acquisition.GPThompsonSampling`.
        seed: Base seed, the per-decision rule of :func:`construct_inputs_gp_ts`.

    Returns:
        The keyword arguments of ``GPThompsonSamplingSDF``.
    """
    cond, last, train_X, X_p = _sdf_inputs(
        model, training_data, X_pending, pending, y_min, window, recent
    )
    transform, maximize = _thompson_transform(
        model, posterior_transform, sampler, candidates, maximize
    )
    return {
        "model": cond,
        "recent": last,
        "B_f": B_f,
        "R": R,
        "B_y": B_y,
        "delta": delta,
        "gamma": gamma,
        "beta": beta,
        "candidates": candidates,
        "sampler": sampler,
        "num_features": num_features,
        "seed": _draw_seed(seed, _decision_index(train_X, X_p, pending)),
        "posterior_transform": transform,
        "maximize": maximize,
    }


__all__ = [
    "PENDING_VIEWS",
    "SDF_PENDING_VIEWS",
    "construct_inputs_gp_ts",
    "construct_inputs_gp_ts_sdf",
    "construct_inputs_gp_ucb",
    "construct_inputs_gp_ucb_sdf",
    "construct_inputs_igp_ucb",
]
