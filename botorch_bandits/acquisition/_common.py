"""Helpers shared by the acquisition functions: round index, schedule arguments,
plain attributes and validation."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import torch
from botorch.models.model import Model, ModelList
from torch import Tensor

from botorch_bandits import beta as schedules
from botorch_bandits import upstream, validation
from botorch_bandits.beta import ObservedInformationGain


def num_observations(model: Model) -> int:
    """Number of training observations of ``model`` (``t - 1`` at round ``t``).

    Works for GPyTorch exact GPs (``train_inputs``) and for ``ModelList`` /
    ``ModelListGP`` whose members all hold the same number of points.

    Args:
        model: A BoTorch model (a :class:`FiniteArmGP` answers with its per-seed
            count, which must be the same for every seed).

    Returns:
        The number of observations.

    Example:
        >>> num_observations(SingleTaskGP(train_X, train_Y)) == train_X.shape[-2]
        True

    Raises:
        ValueError: if the count cannot be inferred; pass ``t`` explicitly then.
    """
    counts = getattr(model, "num_observations_", None)
    if isinstance(counts, Tensor):  # FiniteArmGP: per-seed counts, kept up to date
        if counts.numel() > 1 and bool(torch.any(counts != counts.flatten()[0])):
            raise ValueError(
                "Cannot infer the round index t: the seeds hold different numbers of "
                f"observations {counts.tolist()}; pass `t` explicitly."
            )
        return int(counts.flatten()[0])
    train_inputs = getattr(model, "train_inputs", None)
    if (
        isinstance(train_inputs, (tuple, list))
        and len(train_inputs) > 0
        and isinstance(train_inputs[0], Tensor)  # not ModelListGP's list of tuples
    ):
        return int(train_inputs[0].shape[-2])
    if isinstance(model, ModelList):
        counts = {num_observations(m) for m in model.models}
        if len(counts) == 1:
            return counts.pop()
        raise ValueError(
            "Cannot infer the round index t: the models of the ModelList hold "
            f"different numbers of observations {sorted(counts)}; pass `t` explicitly."
        )
    if train_inputs is None and hasattr(model, "train_targets"):
        return 0
    raise ValueError(
        f"Cannot infer the round index t from a {type(model).__name__}; "
        "pass `t` (round index, >= 1) explicitly."
    )


def check_round(t: Any) -> int | None:
    """Validate an optional round index ``t >= 1``.

    Args:
        t: An integer ``>= 1``, or ``None``.

    Returns:
        ``t``.
    """
    if t is None:
        return None
    if isinstance(t, bool) or not isinstance(t, int) or t < 1:
        raise ValueError(f"`t` must be an integer >= 1 (the round index), got t={t!r}.")
    return t


def data_key(model: Model) -> tuple:
    """A cheap identity of the model's training data, used to memoize per-decision
    quantities (beta_t) within one acquisition instance without ever carrying them
    across data changes.

    Args:
        model: A BoTorch model.

    Returns:
        ``(id(model), ...)`` with the data's version where it can be read.
    """
    version = getattr(model, "data_version_", None)
    if isinstance(version, int):  # FiniteArmGP counts its own data changes
        return (id(model), version)
    train_inputs = getattr(model, "train_inputs", None)
    if (
        isinstance(train_inputs, (tuple, list))
        and len(train_inputs) > 0
        and isinstance(train_inputs[0], Tensor)  # not ModelListGP's list of tuples
    ):
        X = train_inputs[0]
        return (id(model), X.data_ptr(), tuple(X.shape), upstream.tensor_version(X))
    return (id(model),)


class RoundScheduleMixin:
    """For acquisition functions whose confidence parameter depends on the round.

    Provides ``t`` and ``_per_decision(compute)``, which evaluates ``compute(t)``
    once for the model's current data and recomputes it whenever the data or ``t``
    differ -- nothing survives a change of data.

    The round of a decision made with ``p`` points pending (``X_pending``), and of
    point ``j`` of a q-batch (the earlier points of its batch pending too):

    * an explicit ``t`` (the round of the first decision without pending points)
      gives ``t + p + j``, for every class;
    * without one, the round is counted from the model: ``n + 1`` for its ``n``
      observations, then ``+ j``. A class that conditions its model on the pending
      points (``_pending_in_model``: GP-BUCB, the SDF classes) counts them in ``n``;
      asynchronous TS, whose posterior leaves them out, does not count them or the
      earlier batch points (every point is decided at ``n + 1``).
    """

    _t: int | None
    _memo: tuple[tuple, float | Tensor] | None
    _pending_in_model: bool = True

    @property
    def _num_pending(self) -> int:
        P = getattr(self, "X_pending", None)
        return 0 if P is None else int(P.shape[-2])

    @property
    def t(self) -> int:
        """Round index ``t`` of this decision (with its pending points)."""
        if self._t is not None:
            return self._t + self._num_pending
        return num_observations(self.model) + 1

    def _round(self, j: int) -> int:
        """Round of point ``j`` of a q-batch (``j = 0``: this decision)."""
        if self._t is None and not self._pending_in_model:
            return self.t  # the earlier batch points are left out like pending ones
        return self.t + j

    def _data_round(self) -> int:
        r"""The round whose :math:`\gamma_{t-1}` the observed information gain of
        ``model`` answers for: one more than the points it holds."""
        if self._t is None:
            return num_observations(self.model) + 1
        return self._t + (self._num_pending if self._pending_in_model else 0)

    def _per_decision(self, compute: Callable[[int], float | Tensor]) -> float | Tensor:
        """``compute(t)``: a float, or a ``batch_shape`` tensor when the schedule
        depends on per-batch data (the observed information gain of a batched model)."""
        t = self.t
        key = (data_key(self.model), t)
        if self._memo is None or self._memo[0] != key:
            value = compute(t)
            if isinstance(value, Tensor) and value.ndim > 0:
                value = value.detach()
            else:
                value = float(value)
            set_plain_attributes(self, _memo=(key, value))
        return self._memo[1]


def set_plain_attributes(module: Any, **values: Any) -> None:
    """Set plain attributes of an ``nn.Module`` without its ``__setattr__``: a model
    stored so is not registered as a second submodule (``_base_model`` next to
    ``model``), a tensor does not become a buffer, and it costs a fraction of
    ``nn.Module.__setattr__`` (acquisitions are rebuilt at every step). Only for
    names that are not a parameter, buffer or submodule of ``module``.

    Args:
        module: The module (an acquisition function).
        **values: The attributes to set, by name.
    """
    for name, value in values.items():
        object.__setattr__(module, name, value)


def batch_multiplier(value: float | Tensor, like: Tensor) -> Tensor:
    """A sigma multiplier (float, or ``model batch_shape`` tensor) as a tensor that
    broadcasts against ``like`` (``(b1 x ... x bk) x 1``, model batch dims last).

    Args:
        value: The multiplier.
        like: The tensor it multiplies.

    Returns:
        A 0-dim tensor, or ``batch_shape x 1``.
    """
    mult = torch.as_tensor(value, dtype=like.dtype, device=like.device)
    return mult.unsqueeze(-1) if mult.ndim > 0 else mult


def model_input_dim(model: Any) -> int | None:
    """The model's input dimension ``d`` when it can be read cheaply (a finite-arm
    engine's arms, a GPyTorch model's training inputs), else ``None``.

    Args:
        model: A BoTorch model or the finite-arm engine.

    Returns:
        ``d``, or ``None``.
    """
    arms = getattr(model, "arms", None)
    if isinstance(arms, Tensor):
        return int(arms.shape[-1])
    try:
        inputs = model.train_inputs
    except Exception:  # no inputs, or none readable (e.g. uneven seeds)
        return None
    if isinstance(inputs, tuple) and inputs and isinstance(inputs[0], Tensor):
        return int(inputs[0].shape[-1])
    return None


def check_input_dim(name: str, X: Tensor, model: Any) -> None:
    """``X``'s last dimension must be the model's input dimension (when readable).

    Args:
        name: The argument's name, for the message.
        X: The points.
        model: The model (see :func:`model_input_dim`).
    """
    d = model_input_dim(model)
    if d is not None and X.shape[-1] != d:
        raise ValueError(
            f"`{name}` must have the model's input dimension d={d}, got shape "
            f"{tuple(X.shape)}."
        )


def model_tensor(model: Any) -> Tensor | None:
    """A floating-point tensor of ``model`` that gives its dtype and device: a
    finite-arm engine's arms, else the training inputs, else the first floating-point
    parameter or buffer; ``None`` when the model holds none (e.g. BoTorch's
    ``GenericDeterministicModel``). Cheap: it stops at the first tensor found.

    Args:
        model: A BoTorch model or the package's finite-arm engine.

    Returns:
        The tensor, or ``None``.
    """
    arms = getattr(model, "arms", None)
    if isinstance(arms, Tensor):
        return arms
    try:
        inputs = model.train_inputs
    except Exception:  # no inputs, or none readable
        inputs = None
    if isinstance(inputs, tuple) and inputs and isinstance(inputs[0], Tensor):
        return inputs[0]
    if isinstance(model, torch.nn.Module):
        tensors = itertools.chain(model.parameters(), model.buffers())
        return next((x for x in tensors if x.is_floating_point()), None)
    return None


def check_model_device(model: Any) -> None:
    """Refuse a model that holds no data: its training inputs, parameters or buffers
    on PyTorch's ``'meta'`` device (shapes without values), where every posterior
    fails deep inside torch. Called at construction, before anything reads it.

    Args:
        model: The model an acquisition function is built on.

    Raises:
        ValueError: naming ``model``, when its tensors are on the 'meta' device.
    """
    tensors = [model_tensor(model)]
    if isinstance(model, torch.nn.Module):
        tensors += [next(model.parameters(), None), next(model.buffers(), None)]
    if any(x is not None and x.device.type == "meta" for x in tensors):
        raise ValueError(
            f"`model` ({type(model).__name__}) holds its parameters or training data "
            "on the 'meta' device (device='meta'), which stores shapes but no values, "
            "so it has no posterior to compute. Build the model on a real device "
            "('cpu' or 'cuda'), or materialize it first (model.to_empty(device='cpu') "
            "and then load_state_dict)."
        )


def check_dtype(X: Tensor, model: Any) -> None:
    """``X`` must be on a real device and in the model's dtype.

    GPyTorch's exact posterior multiplies ``X``'s kernel rows with caches made in
    the model's dtype, so a float64 ``X`` on a float32 model fails with a bare torch
    error (BoTorch's own analytic acquisitions, e.g. ``UpperConfidenceBound``, fail
    the same way). Casting either side silently would change the model the user
    holds or the precision of the optimizer's points, so this asks for one dtype.

    Args:
        X: The points to score.
        model: The model they are scored on.

    Raises:
        ValueError: naming ``X``, with its dtype, the model's dtype and what to do.
    """
    if X.device.type == "meta":
        raise ValueError(
            f"`X` is on the 'meta' device (X.device={X.device}), which holds no "
            "values; pass points on the model's device."
        )
    ref = model_tensor(model)
    if ref is None or X.dtype == ref.dtype:
        return
    raise ValueError(
        f"`X` must have the model's dtype {ref.dtype}, got X.dtype={X.dtype}: the "
        "posterior needs the points and the model in one dtype. Pass "
        f"X.to({ref.dtype}) (with BoTorch's optimizers: `bounds` or `choices` in "
        f"{ref.dtype}), or build the model in {X.dtype} (e.g. from training data "
        f"in {X.dtype}) and the acquisition on it."
    )


def check_points(X: Tensor, model: Any) -> None:
    """Points to score: on a real device and in the model's dtype
    (:func:`check_dtype`), finite (a NaN or infinite coordinate would give a NaN
    score that an argmax or an optimizer takes silently) and of the model's width.

    Args:
        X: The points to score.
        model: The model they are scored on (the width is not checked when it has
            an ``input_transform``).
    """
    check_dtype(X, model)
    if not bool(torch.isfinite(X).all()):
        bad = (~torch.isfinite(X)).reshape(-1, X.shape[-1]).any(-1).nonzero()
        raise ValueError(
            f"`X` must be finite, got {bad.numel()} point(s) with a NaN or infinite "
            f"coordinate (the first at flat row {int(bad[0])} of shape "
            f"{tuple(X.shape)})."
        )
    if getattr(model, "input_transform", None) is None:  # else another width
        check_input_dim("X", X, model)


def gamma_after(acqf: Any, t: int, extra_gain: Tensor | float = 0.0) -> float | Tensor:
    r""":math:`\gamma_{t-1}` for the decision at round ``t`` (``acqf.t``, or
    ``acqf._round(j)`` for point ``j`` of a q-batch): an a-priori source is asked
    for ``t - 1``; the observed information gain, which can only answer for the
    points the model holds, is asked for those (``acqf._data_round() - 1``: this
    also checks an explicit ``t`` against them) and raised by ``extra_gain``.

    Args:
        acqf: An acquisition with ``gamma``, ``model`` and the round methods of
            :class:`RoundScheduleMixin`.
        t: The decision's round.
        extra_gain: The gain of the batch's earlier points (chain rule; default 0),
            added to the observed gain only.

    Returns:
        :math:`\gamma_{t-1}`: a float, or a ``batch_shape`` tensor.
    """
    if isinstance(acqf.gamma, ObservedInformationGain):
        return acqf.gamma(acqf._data_round() - 1, acqf.model) + extra_gain
    return acqf.gamma(t - 1, acqf.model)


def scale_arguments(
    B: float | Tensor | None,
    R: float | Tensor | None,
    delta: float,
    gamma: Any,
    constant: float | None,
    constant_name: str,
    algorithm: str,
) -> tuple[float | None, float | None, float, float | None, Any]:
    """Validate the (B, R, delta, gamma) schedule of IGP-UCB and GP-TS (``algorithm``)
    or its constant replacement (``constant_name``).

    Args:
        B, R: The RKHS-norm bound and sub-Gaussian constant (floats or
            ``batch_shape`` tensors), both or neither.
        delta: Confidence in ``(0, 1)``.
        gamma: The user's ``gamma`` (:func:`~botorch_bandits.beta.resolve_gamma`).
        constant: The constant replacing the schedule, or ``None``.
        constant_name: Its argument's name (``"beta"``, ``"v"``), for the messages.
        algorithm: ``"IGP-UCB"`` or ``"GP-TS"``, for the messages.

    Returns:
        ``(B, R, delta, constant, gamma)``, the unused ones ``None``.
    """
    validation.check_open_unit("delta", delta)
    if constant is not None:
        if B is not None or R is not None:
            raise ValueError(
                f"Pass either a constant `{constant_name}` or the schedule's `B` and `R`, "
                f"not both (got {constant_name}={constant!r}, B={B!r}, R={R!r})."
            )
        return (
            None,
            None,
            float(delta),
            validation.check_nonnegative(constant_name, constant),
            None,
        )
    if B is None or R is None:
        raise ValueError(
            f"{algorithm}'s schedule needs the RKHS-norm bound `B` and the sub-Gaussian "
            f"constant `R` (got B={B!r}, R={R!r}); pass both, or a constant "
            f"`{constant_name}`, or build it in one call with the practical B and R "
            f'read from a fitted model: practical_acquisition(model, "{algorithm}").'
        )
    return (
        validation.check_nonnegative_values("B", B),
        validation.check_nonnegative_values("R", R),
        float(delta),
        None,
        schedules.resolve_gamma(gamma),
    )
