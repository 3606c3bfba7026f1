"""The commands' plumbing: output files and worker processes.

A command's outputs (CSV, PNG) are written to a temporary file in the same folder
and renamed over the target (``os.replace``, atomic on POSIX): a reader or a killed
run never sees half a file. A target that is a symlink is refused -- writing
through it would change a file outside the output folder. Pool workers leave Ctrl-C
to the main process (:func:`ignore_sigint`); :func:`stop_now` ends a pool at once."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def check_not_symlink(path: str | os.PathLike) -> Path:
    """``path`` as a ``Path``, refused if it is a symlink.

    Args:
        path: The file to be written.

    Returns:
        ``Path(path)``.

    Raises:
        ValueError: If ``path`` is a symlink (the message names its target).
    """
    p = Path(path)
    if p.is_symlink():
        raise ValueError(
            f"{p} is a symlink (to {os.readlink(p)}); refusing to write through it: "
            "remove it or choose another output folder."
        )
    return p


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed over ``path`` when the
    block ends without an error (removed otherwise).

    Args:
        path: The target file (not a symlink: :func:`check_not_symlink`).

    Yields:
        The temporary file's ``Path`` (same folder and suffix as ``path``); on
        success it gets the mode ``open()`` would have given (``0o666`` less the
        umask).
    """
    target = check_not_symlink(path)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent
    )
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~current_umask())  # as open() would have made it
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def current_umask() -> int:
    """The process's file-mode creation mask (read without changing it on Linux;
    elsewhere set and restored at once)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", **kwargs) -> Iterator:
    """``open`` on a temporary file renamed over ``path`` at the end (see
    :func:`atomic_path`).

    Args:
        path: The target file (not a symlink).
        mode: ``open``'s mode (default ``"w"``).
        **kwargs: Passed to ``open`` (``encoding=``, ``newline=``, ...).

    Yields:
        The open file object.

    Example:
        >>> with atomic_open(out / "table.csv", newline="") as fh:
        ...     csv.writer(fh).writerows(rows)
    """
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as fh:
        yield fh


def ignore_sigint() -> None:
    """A pool worker's initializer: Ctrl-C is left to the main process, which stops
    the pool and prints one line -- no traceback per worker; SIGTERM ends the
    worker at once (the main process's handler, inherited through the fork, would
    turn it into an exception inside the job); and on Linux the worker gets
    SIGTERM when the main process dies (even by SIGKILL), so no idle worker
    outlives its run."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent()


def die_with_parent() -> None:
    """Linux's ``prctl(PR_SET_PDEATHSIG, SIGTERM)`` for this process (nothing
    elsewhere); if the parent is already gone, end now."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no libc to call: the worker may outlive
        return
    if os.getppid() != parent:  # the parent died before the call
        os.kill(os.getpid(), signal.SIGTERM)


def stop_now(pool: Any) -> None:
    """Stop a ``ProcessPoolExecutor``'s processes without waiting for their work (on
    Ctrl-C: a worker still starting may have died of the signal, and a waiting
    shutdown can then hang).

    Args:
        pool: the ``concurrent.futures.ProcessPoolExecutor`` to stop; its queued
            work is cancelled.
    """
    for proc in list((pool._processes or {}).values()):
        proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
