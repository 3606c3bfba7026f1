"""Helpers shared by the acquisition functions: round index and validation."""

from __future__ import annotations

from typing import Any

from botorch.models.model import Model, ModelList


def num_observations(model: Model) -> int:
    """Number of training observations of ``model`` (``t - 1`` at round ``t``).

    Works for GPyTorch exact GPs (``train_inputs``) and for ``ModelList`` /
    ``ModelListGP`` whose members all hold the same number of points.

    Raises:
        ValueError: if the count cannot be inferred; pass ``t`` explicitly then.
    """
    train_inputs = getattr(model, "train_inputs", None)
    if isinstance(train_inputs, tuple) and len(train_inputs) > 0:
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
    """Validate an optional round index ``t >= 1``."""
    if t is None:
        return None
    if isinstance(t, bool) or not isinstance(t, int) or t < 1:
        raise ValueError(f"`t` must be an integer >= 1 (the round index), got t={t!r}.")
    return t


def data_key(model: Model) -> tuple:
    """A cheap identity of the model's training data, used to memoize per-decision
    quantities (beta_t) within one acquisition instance without ever carrying them
    across data changes."""
    train_inputs = getattr(model, "train_inputs", None)
    if isinstance(train_inputs, tuple) and len(train_inputs) > 0:
        X = train_inputs[0]
        return (id(model), X.data_ptr(), tuple(X.shape), X._version)
    return (id(model),)
