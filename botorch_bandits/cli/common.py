"""What every command module shares (the library's and the repository's
``bandit_experiments``): the :class:`Command` record (help, arguments, handler, extras
needed), :class:`CommandError`, the check that an optional package is installed, the
argument type :func:`positive_int`, and :class:`Progress` (feedback on stderr for a
long phase of a command)."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: a command's handler: the parsed arguments and the parser (for usage errors) -> the
#: exit code
Handler = Callable[[argparse.Namespace, argparse.ArgumentParser], int]


@dataclass(frozen=True)
class Command:
    """One command of ``botorch-bandits`` (or of ``python -m bandit_experiments``).

    Attributes:
        help: The line ``--help`` shows for it.
        add_arguments: Adds the command's options to its subparser.
        run: Runs the command (imports its heavy packages only then).
        needs: ``(module, extra)`` pairs: the packages it needs beyond the core and
            the extra that brings each.
        out_is_file: Its ``--out`` names a file (by default: a folder).
        resume_hint: The parsed arguments and the command's parser -> what to add
            to the line printed when it is interrupted (how to continue), or ``None``.
    """

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Handler
    needs: tuple[tuple[str, str], ...] = ()
    out_is_file: bool = False
    resume_hint: Callable[[argparse.Namespace, argparse.ArgumentParser], str] | None = (
        None
    )


class CommandError(Exception):
    """An error the user can act on: printed as one line, exit code 2."""


def missing(module: str) -> bool:
    """Whether ``module`` cannot be imported (not installed, or broken).

    Args:
        module: The module's dotted name, e.g. ``"ax"``.

    Returns:
        ``True`` when no spec is found for it or finding one fails.
    """
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # a module set to None, a broken package
        return True


def positive_int(text: str) -> int:
    """An argument type: an integer >= 1.

    Args:
        text: The argument as given on the command line.

    Returns:
        Its value.

    Raises:
        ValueError: ``text`` is not an integer (argparse reports it as invalid).
        argparse.ArgumentTypeError: The integer is below 1.
    """
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text}")
    return value


# argparse names the type in its message for a non-integer ("invalid _positive_int
# value: 'x'"): the name it had before the CLI became a package, so the output is
# unchanged
positive_int.__name__ = positive_int.__qualname__ = "_positive_int"


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


class Progress:
    """Feedback on stderr for one long phase of a command, fed as ``progress(done,
    total)`` or, like a tqdm bar, ``update(n)``: a tqdm bar when tqdm is installed and
    stderr is a terminal; otherwise a line when the phase starts, then, once 3 s have
    passed, one with the time left (extrapolated from the rate so far) and one at each
    further quarter of the work. Silent when ``show`` is false.

    Args:
        command: The command's name, at the start of each line.
        phase: What the phase does, e.g. ``"running trials"`` (the bar's label).
        unit: The unit of the work counted, e.g. ``"trial"``.
        show: Whether to show anything (default ``True``).
        total: The work's size, when known at the start (default ``None``).

    Example:
        >>> with Progress("demo", "running trials", "trial", total=30) as progress:
        ...     progress.update()
    """

    def __init__(
        self,
        command: str,
        phase: str,
        unit: str,
        show: bool = True,
        total: int | None = None,
    ) -> None:
        self.command, self.unit, self.show = command, unit, show
        self.done, self.total, self.quarter, self.estimated = 0, total, 0, False
        self.start = time.perf_counter()
        self.bar: Any = None
        if show and not missing("tqdm") and sys.stderr.isatty():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=phase, unit=unit, file=sys.stderr)
        elif show:
            print(f"{command}: {phase}...", file=sys.stderr, flush=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units done, as tqdm's ``update``.

        Args:
            n: The units done since the last call (default 1).
        """
        self(self.done + n, self.total or 0)

    def __call__(self, done: int, total: int) -> None:
        """Report ``done`` of ``total`` units (a progress callback's signature).

        Args:
            done: The units done so far.
            total: The units in all.
        """
        previous, self.done, self.total = self.done, done, total
        if self.bar is not None:
            self.bar.total = total
            self.bar.update(done - previous)
            return
        if not (self.show and 0 < done < total):
            return
        elapsed = time.perf_counter() - self.start
        quarter = 4 * done // total
        if elapsed >= 3 and (quarter > self.quarter or not self.estimated):
            self.quarter, self.estimated = quarter, True
            left = elapsed * (total - done) / done
            print(
                f"{self.command}: {done} of {total} {self.unit}s in "
                f"{_duration(elapsed)}, about {_duration(left)} left",
                file=sys.stderr,
                flush=True,
            )
