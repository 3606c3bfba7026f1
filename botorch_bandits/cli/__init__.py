"""The ``botorch-bandits`` command: :data:`COMMANDS`, the table from a command's name
to its :class:`~botorch_bandits.cli.common.Command` (the main job ``demo`` and
``loop-demo``, in ``demos``), and :func:`run_commands`, which parses and runs a table of
commands with clean stops on Ctrl-C and SIGTERM (the repository's
``python -m bandit_experiments`` runs its research commands with it too). A command
imports torch, BoTorch or Ax only when it runs, so ``--help`` loads none of them."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from botorch_bandits._install import install_hint
from botorch_bandits.cli import demos
from botorch_bandits.cli.common import Command, CommandError, missing

__all__ = [
    "COMMANDS",
    "Command",
    "CommandError",
    "Terminated",
    "build_parser",
    "main",
    "run_commands",
]

#: command name -> the command, in the order ``botorch-bandits --help`` lists them
COMMANDS: dict[str, Command] = {
    "demo": demos.DEMO,
    "loop-demo": demos.LOOP_DEMO,
}

#: what ``botorch-bandits`` says a missing extra needs: ``None``, the ``pip install``
#: that works for how the package was installed (:func:`install_hint`)
INSTALL: str | None = None


def check_extras(
    command: str,
    commands: Mapping[str, Command] = COMMANDS,
    install: str | None = INSTALL,
) -> None:
    """Name the ``pip install`` a command needs before it does any work.

    Args:
        command: The command's name, a key of ``commands``.
        commands: The commands, each with the modules it needs and their extras
            (default :data:`COMMANDS`).
        install: The message's install hint, with ``{extras}`` for the extras'
            names (default :data:`INSTALL`, ``None``: :func:`install_hint` of them,
            the command that works for how the package was installed).

    Raises:
        CommandError: A module the command needs cannot be imported; the message
            names the modules and the ``pip install`` that brings them.
    """
    needed = [(m, extra) for m, extra in commands[command].needs if missing(m)]
    if needed:
        extras = ",".join(sorted({extra for _, extra in needed}))
        names = ", ".join(m for m, _ in needed)
        hint = (
            install_hint(extras) if install is None else install.format(extras=extras)
        )
        raise CommandError(f"`{command}` needs {names}: {hint}")


def build_parser(
    commands: Mapping[str, Command] = COMMANDS,
    prog: str = "botorch-bandits",
    description: str = "Bandit algorithms with regret guarantees for BoTorch and Ax.",
) -> argparse.ArgumentParser:
    """The parser of every command in ``commands``, with ``--debug``.

    Args:
        commands: The commands, by name (default :data:`COMMANDS`).
        prog: The program's name in usage and messages.
        description: The description ``--help`` prints.

    Returns:
        The ``argparse`` parser, one subcommand per command; each subcommand's
        parser is its ``command_parser`` default (its usage errors show its usage).
    """
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the full traceback of an error (also: BOTORCH_BANDITS_DEBUG=1)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, command in commands.items():
        own = sub.add_parser(name, help=command.help)
        command.add_arguments(own)
        own.set_defaults(command_parser=own)  # its usage errors show its own usage
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, ``timeout``, systemd, a container stop, a batch
    scheduler) or SIGHUP (the terminal or SSH session closed), raised where the
    signal lands: every clean-up a Ctrl-C runs runs for it too (a
    ``KeyboardInterrupt``); the command exits 128 + the signal's number (143,
    129)."""


#: the signals a command stops on cleanly, with the resume hint: Ctrl-C, and the
#: ones that end a process by default (SIGHUP where the platform has it)
STOP_SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP")
    if hasattr(signal, name)
)


class _NotTheInterrupt(logging.Filter):
    """Drops a log record that carries the Ctrl-C itself. SQLAlchemy's pool logs
    "Exception closing connection" with the traceback when the interrupt lands while
    it closes a connection, then re-raises it; :func:`main` reports the interrupt in
    one line, so that record would only repeat it as a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[0] if record.exc_info else None
        return not (exc is not None and issubclass(exc, KeyboardInterrupt))


_QUIET = _NotTheInterrupt()


def quiet_interrupt_logs() -> None:
    """Let no log handler of the root logger (nor Python's last-resort handler,
    which prints a library's records when nobody configured logging) print a
    traceback of Ctrl-C. Other records, errors included, pass unchanged."""
    for handler in (logging.lastResort, *logging.getLogger().handlers):
        if handler is not None:
            handler.addFilter(_QUIET)  # addFilter ignores a filter already there


def main(argv: Sequence[str] | None = None) -> int:
    """Run a ``botorch-bandits`` command (:func:`run_commands` of :data:`COMMANDS`).

    Args:
        argv: The arguments (default ``None``: ``sys.argv[1:]``).

    Returns:
        The exit status: 0, 2 for an error a user can act on, 130 after Ctrl-C,
        128 + the signal's number after SIGTERM or SIGHUP.

    Example:
        >>> main(["demo", "--smoke", "--out", "runs/smoke"])
        0
    """
    return run_commands(COMMANDS, argv)


def run_commands(
    commands: Mapping[str, Command],
    argv: Sequence[str] | None = None,
    prog: str = "botorch-bandits",
    description: str = "Bandit algorithms with regret guarantees for BoTorch and Ax.",
    install: str | None = INSTALL,
) -> int:
    """Parse ``argv`` and run one of ``commands`` (``prog`` names them in messages;
    ``install`` is what a missing extra needs, see :func:`check_extras`). An error a
    user can act on prints one line on stderr and exits 2 (``--debug`` or
    ``BOTORCH_BANDITS_DEBUG=1``: the traceback instead); Ctrl-C stops cleanly, says
    how to continue, and exits 130; SIGTERM does the same and exits 143 (128 + 15,
    as a process killed by it).

    Args:
        commands: The commands, by name.
        argv: The arguments (default ``None``: ``sys.argv[1:]``).
        prog: The program's name in usage and messages.
        description: The description ``--help`` prints.
        install: The install hint for a missing extra, with ``{extras}``
            (``None``: :func:`install_hint`).

    Returns:
        The exit status (0 on success; 2, 130 or 143 as above).
    """
    parser = build_parser(commands, prog, description)
    args = parser.parse_args(argv)
    debug = args.debug or os.environ.get("BOTORCH_BANDITS_DEBUG", "") not in ("", "0")
    if not debug:
        logging.disable(logging.INFO)  # Ax announces its storage at INFO on import
        quiet_interrupt_logs()
    interrupted: list[int] = []

    def on_signal(signum: int, frame: Any) -> None:
        interrupted.append(signum)  # remembered: the error it causes is the signal
        raise Terminated if signum != signal.SIGINT else KeyboardInterrupt

    def on_unraisable(unraisable: Any) -> None:
        # a signal that landed inside a finalizer (a weakref callback, a __del__:
        # SQLAlchemy runs them often) raised where Python ignores exceptions: the
        # run went on. Send it again from another thread a moment later, so that
        # it lands once the finalizer is over (quietly: no traceback; one that
        # lands in a finalizer again comes back here)
        exc = unraisable.exc_type
        if exc is not None and issubclass(exc, KeyboardInterrupt) and interrupted:
            again = threading.Timer(0.05, resend, (interrupted[-1],))
            again.daemon = True
            pending.append(again)
            again.start()
            return
        unraisable_before(unraisable)

    def resend(signum: int) -> None:
        # not once the command has ended (it may have ended on the same signal
        # another way, e.g. a worker the Ctrl-C killed broke the pool): with the
        # handlers restored, a signal sent now would kill the process (exit -2)
        if not ended:
            os.kill(os.getpid(), signum)

    pending: list[threading.Timer] = []
    ended: list[bool] = []

    unraisable_before = sys.unraisablehook
    sys.unraisablehook = on_unraisable
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        # (a background job started with SIGINT ignored keeps ignoring it, and
        # one under nohup SIGHUP)
        for signum in STOP_SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                previous[signum] = signal.signal(signum, on_signal)
    try:
        check_extras(args.command, commands, install)
        out = getattr(args, "out", None)
        folder = not commands[args.command].out_is_file  # --out names a folder
        if isinstance(out, str) and not out.strip():
            raise CommandError(
                f"--out {out!r} is empty: give the "
                f"{'folder' if folder else 'file'} the outputs go to (an empty "
                "one would write into the current folder, over what is there)."
            )
        if folder and isinstance(out, str) and os.path.isfile(out):
            raise CommandError(
                f"--out {out} is a file; --out names the folder the outputs go to: "
                "give a folder (it is created if missing)."
            )
        return commands[args.command].run(args, args.command_parser)
    except KeyboardInterrupt:
        return _interrupted(prog, commands[args.command], args, interrupted)
    except Exception as err:
        if interrupted:  # e.g. a worker killed by the same Ctrl-C broke the pool
            return _interrupted(prog, commands[args.command], args, interrupted)
        if debug:
            raise
        text = " ".join(str(err).split()) or type(err).__name__
        print(f"{prog} {args.command}: error: {text}", file=sys.stderr)
        if not isinstance(err, (CommandError, ValueError, OSError, RuntimeError)):
            print("(run with --debug for the traceback)", file=sys.stderr)
        return 2
    finally:
        ended.append(True)
        for timer in pending:
            timer.cancel()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        sys.unraisablehook = unraisable_before


def _interrupted(
    prog: str, command: Command, args: argparse.Namespace, signals: Sequence[int] = ()
) -> int:
    """Ctrl-C, SIGTERM or SIGHUP (the last of ``signals`` that came; none: a
    Ctrl-C): one line saying how to continue; exit status 128 + the signal's
    number (130, 143, 129)."""
    hint = ""
    if command.resume_hint is not None:  # e.g. the run's own options to repeat
        hint = command.resume_hint(args, args.command_parser)
    signum = signals[-1] if signals else signal.SIGINT
    what = {
        signal.SIGINT: "interrupted",
        signal.SIGTERM: "terminated (SIGTERM)",
    }.get(signum, f"stopped by {signal.Signals(signum).name}")
    if signum == getattr(signal, "SIGHUP", None):
        what = "hung up (SIGHUP: the terminal closed)"
    try:  # after a hang-up the terminal may be gone
        print(f"{prog}: {what}{hint}", file=sys.stderr)
    except OSError:
        pass
    return 128 + int(signum)
