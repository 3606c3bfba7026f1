"""The commands' plumbing: output files and worker processes.

A command's outputs (CSV, PNG) are written to a temporary file in the same folder
and renamed over the target (``os.replace``, atomic on POSIX): a reader or a killed
run never sees half a file. A target that is a symlink is refused -- writing
through it would change a file outside the output folder. Pool workers leave Ctrl-C
to the main process (:func:`ignore_sigint`)."""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path


def check_not_symlink(path: str | os.PathLike) -> Path:
    """``path`` as a ``Path``; a ``ValueError`` if it is a symlink."""
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
    block ends without an error (removed otherwise)."""
    target = check_not_symlink(path)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent
    )
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", **kwargs) -> Iterator:
    """``open`` on a temporary file renamed over ``path`` at the end (see
    :func:`atomic_path`)."""
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as fh:
        yield fh


def ignore_sigint() -> None:
    """A pool worker's initializer: Ctrl-C is left to the main process, which stops
    the pool and prints one line -- no traceback per worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
