"""What every command module of the CLI shares: the :class:`Command` record (help,
arguments, handler, extras needed), :class:`CommandError`, the check that an optional
package is installed, and the argument types of the parsers."""

from __future__ import annotations

import argparse
import importlib.util
import math
from collections.abc import Callable
from dataclasses import dataclass

#: a command's handler: the parsed arguments and the parser (for usage errors) -> the
#: exit code
Handler = Callable[[argparse.Namespace, argparse.ArgumentParser], int]


@dataclass(frozen=True)
class Command:
    """One ``botorch-bandits`` command.

    Attributes:
        help: The line ``botorch-bandits --help`` shows for it.
        add_arguments: Adds the command's options to its subparser.
        run: Runs the command (imports its heavy packages only then).
        needs: ``(module, extra)`` pairs: the packages it needs beyond the core and
            the extra that brings each.
    """

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Handler
    needs: tuple[tuple[str, str], ...] = ()


class CommandError(Exception):
    """An error the user can act on: printed as one line, exit code 2."""


def missing(module: str) -> bool:
    """Whether ``module`` cannot be imported (not installed, or broken)."""
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # a module set to None, a broken package
        return True


def positive_int(text: str) -> int:
    """An argument type: an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text}")
    return value


# argparse names the type in its message for a non-integer ("invalid _positive_int
# value: 'x'"): the name it had before the CLI became a package, so the output is
# unchanged
positive_int.__name__ = positive_int.__qualname__ = "_positive_int"


def record_steps(text: str) -> str | int:
    """An argument type: ``'log'``, ``'all'`` or an integer K >= 1 (``--record``)."""
    if text in ("all", "log"):
        return text
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise argparse.ArgumentTypeError(
        f"must be 'log', 'all' or an integer K >= 1, got {text!r}"
    )


def cpd_constant(text: str) -> float | str:
    """An argument type: a number > 0, ``'suggested'`` or ``'calibrated'``
    (``--cpd-c``)."""
    if text in ("suggested", "calibrated"):
        return text
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(
            f"must be a number > 0, 'suggested' or 'calibrated', got {text!r}"
        )
    return value
