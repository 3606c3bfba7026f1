"""Argument checks shared by the whole package (one module, one wording).

Every check names the argument as the caller wrote it, its value and what is
allowed, e.g. ``ValueError: `R` must be a finite number > 0, got R=inf.``; each
returns the value converted (``float`` / ``int``) so a constructor can store it.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

__all__ = [
    "check_choice",
    "check_count",
    "check_finite",
    "check_nonnegative",
    "check_nonnegative_values",
    "check_open_unit",
    "check_positive",
    "check_round",
    "check_single_output",
    "did_you_mean",
]


def _as_float(name: str, value: Any, allowed: str) -> float:
    """``float(value)`` for a real number (not a bool, a string or a tensor with
    more than one element), else a ``ValueError`` naming the argument."""
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise ValueError(f"`{name}` must be {allowed}, got {name}={value!r}.")
    try:
        return float(value)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(f"`{name}` must be {allowed}, got {name}={value!r}.") from None


def check_finite(name: str, value: Any, allow_none: bool = False) -> float | None:
    """A finite real number.

    Args:
        name: The argument's name, as the caller wrote it (used in the message).
        value: The value to check (a bool, a string or a tensor of more than one
            element is refused).
        allow_none: Whether ``None`` passes (default ``False``).

    Returns:
        ``float(value)``, or ``None`` where ``value`` is ``None`` and allowed.
    """
    if allow_none and value is None:
        return None
    allowed = "a finite number" + (" or None" if allow_none else "")
    v = _as_float(name, value, allowed)
    if not math.isfinite(v):
        raise ValueError(f"`{name}` must be {allowed}, got {name}={value!r}.")
    return v


def check_positive(
    name: str, value: Any, allow_zero: bool = False, allow_none: bool = False
) -> float | None:
    """A finite number > 0 (``>= 0`` with ``allow_zero``).

    Args:
        name: The argument's name, as the caller wrote it (used in the message).
        value: The value to check (NaN and inf are refused).
        allow_zero: Whether 0 passes (default ``False``).
        allow_none: Whether ``None`` passes (default ``False``).

    Returns:
        ``float(value)``, or ``None`` where ``value`` is ``None`` and allowed.
    """
    if allow_none and value is None:
        return None
    bound = ">= 0" if allow_zero else "> 0"
    allowed = f"a finite number {bound}" + (" or None" if allow_none else "")
    v = _as_float(name, value, allowed)
    ok = (v >= 0 if allow_zero else v > 0) and math.isfinite(v)
    if not ok:  # also rejects NaN
        raise ValueError(f"`{name}` must be {allowed}, got {name}={value!r}.")
    return v


def check_nonnegative(name: str, value: Any) -> float:
    """A finite number >= 0.

    Args:
        name: The argument's name, as the caller wrote it (used in the message).
        value: The value to check.

    Returns:
        ``float(value)``.
    """
    return check_positive(name, value, allow_zero=True)


def check_nonnegative_values(name: str, value: float | Tensor) -> float | Tensor:
    """Like :func:`check_nonnegative` but keeps a tensor (one value per batch).

    Args:
        name: The argument's name, as the caller wrote it (used in the message).
        value: A number, or a ``batch_shape`` tensor whose entries must all be
            finite and >= 0.

    Returns:
        The tensor unchanged (one with ``ndim > 0``), else ``float(value)``.
    """
    if isinstance(value, Tensor) and value.ndim > 0:
        if not bool(torch.all((value >= 0) & torch.isfinite(value))):
            raise ValueError(
                f"`{name}` must be finite numbers >= 0, got {name}={value.tolist()!r}."
            )
        return value
    return check_nonnegative(name, value)


def check_open_unit(name: str, value: Any) -> float:
    """A number in the open interval (0, 1) (a confidence such as ``delta``).

    Args:
        name: The argument's name, as the caller wrote it (used in the message).
        value: The value to check.

    Returns:
        ``float(value)``.
    """
    v = _as_float(name, value, "a number in (0, 1)")
    if not 0.0 < v < 1.0:
        raise ValueError(f"`{name}` must lie in (0, 1), got {name}={value!r}.")
    return v


def check_count(
    name: str, value: Any, minimum: int = 0, allow_none: bool = False
) -> int | None:
    """An integer >= ``minimum`` (bools are rejected).

    Args:
        name: The argument's name, as the caller wrote it (used in the message).
        value: The value to check (a Python ``int``; a float such as ``3.0`` is
            refused).
        minimum: The smallest allowed value (default 0).
        allow_none: Whether ``None`` passes (default ``False``).

    Returns:
        ``value`` (or ``None`` where allowed).
    """
    if allow_none and value is None:
        return None
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
    if not ok:
        none = " or None" if allow_none else ""
        raise ValueError(
            f"`{name}` must be an integer >= {minimum}{none}, got {name}={value!r}."
        )
    return value


#: the largest seed: torch's and numpy's seeds are 64-bit integers (Ax's Sobol
#: generator overflowed past 2**64 - 1), kept to the signed range
MAX_SEED = 2**63 - 1


def check_seed(name: str, value: Any) -> int:
    """A seed: an integer in ``[0, MAX_SEED]`` (bools are rejected).

    Args:
        name: The argument's name, as the caller wrote it (used in the message).
        value: The seed to check.

    Returns:
        ``value``.
    """
    check_count(name, value, 0)
    if value > MAX_SEED:
        raise ValueError(
            f"`{name}` must be an integer from 0 to 2**63 - 1, got {name}={value!r}."
        )
    return value


#: the largest magnitude of a value option (its square is a finite float)
MAX_MAGNITUDE = 1e100


def check_magnitude(name: str, value: Any) -> None:
    """A number (or ``None``) of magnitude at most :data:`MAX_MAGNITUDE`.

    Args:
        name: The argument's name, as the caller wrote it (used in the message).
        value: A number or ``None`` (``None`` passes).
    """
    if value is not None and abs(value) > MAX_MAGNITUDE:
        raise ValueError(
            f"`{name}` must be at most 1e100 in magnitude (its square must be a "
            f"finite float), got {name}={value!r}."
        )


def check_row_noise(name: str, value: Any, n: int) -> None:
    """Noise variances, one per observation: a tensor of ``n`` finite values >= 0
    (``n x 1`` too).

    Args:
        name: The argument's name, as the caller wrote it (used in the message).
        value: The noise variances (``n`` or ``n x 1``).
        n: The number of observations.
    """
    if not (isinstance(value, torch.Tensor) and value.numel() == n):
        raise ValueError(
            f"`{name}` must be a tensor of {n} noise variances (one per observation), "
            f"got {value!r}."
        )
    check_nonnegative_values(name, value.reshape(-1))


def check_single_output(model: str, output_indices: Any) -> None:
    """A one-output model's ``posterior(output_indices=...)``: ``None`` or ``[0]``.

    Args:
        model: The model's name, for the message (e.g. ``"FiniteArmGP"``).
        output_indices: The ``output_indices`` the caller passed.
    """
    if output_indices not in (None, [0]):
        raise ValueError(
            f"{model} has one output, got output_indices={output_indices}."
        )


def check_round(name: str, t: Any) -> int:
    """A round index t >= 1.

    Args:
        name: The argument's name, as the caller wrote it (used in the message).
        t: The round index.

    Returns:
        ``t``.
    """
    return check_count(name, t, minimum=1)


def did_you_mean(value: Any, allowed: Iterable[Any]) -> str:
    """``" Did you mean 'x'?"`` for the string of ``allowed`` closest to ``value``
    (the same letters in another case first, then :func:`difflib.get_close_matches`),
    or ``""`` where none is close.

    Args:
        value: What the caller passed (a non-string gets ``""``).
        allowed: The allowed values (only the strings among them are suggested).

    Returns:
        The suggestion, with a leading space, or ``""``.
    """
    if not isinstance(value, str):
        return ""
    words = [a for a in allowed if isinstance(a, str)]
    same = [w for w in words if w.lower() == value.lower()]
    close = same or difflib.get_close_matches(value, words, n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def check_choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """One of ``allowed`` (the error suggests the closest one).

    Args:
        name: The argument's name, as the caller wrote it (used in the message).
        value: The value to check.
        allowed: The allowed values.

    Returns:
        ``value``.
    """
    allowed = tuple(allowed)
    if value not in allowed:
        raise ValueError(
            f"`{name}` must be one of {list(allowed)}, got {name}={value!r}."
            + did_you_mean(value, allowed)
        )
    return value


def check_tensor(
    name: str, value: Any, min_ndim: int = 1, square: bool = False
) -> Tensor:
    """A tensor with at least ``min_ndim`` dimensions (the last two equal with
    ``square``), of a floating dtype, with finite entries.

    Args:
        name: The argument's name, as the caller wrote it (used in the message).
        value: The value to check.
        min_ndim: The fewest dimensions allowed (default 1).
        square: Whether the last two dimensions must be equal (default ``False``).

    Returns:
        ``value``.
    """
    if not isinstance(value, Tensor):
        raise ValueError(
            f"`{name}` must be a torch.Tensor, got {name} of type "
            f"{type(value).__name__}."
        )
    shape = tuple(value.shape)
    if value.ndim < min_ndim:
        raise ValueError(
            f"`{name}` must have at least {min_ndim} dimensions, got {name} of "
            f"shape {shape}."
        )
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"`{name}` must be square (... x n x n), got shape {shape}.")
    if not value.is_floating_point():
        raise ValueError(
            f"`{name}` must have a floating dtype (float32 / float64), got "
            f"{name}.dtype={value.dtype}."
        )
    if not bool(torch.isfinite(value).all()):
        raise ValueError(f"`{name}` must be finite (no NaN or inf).")
    return value
