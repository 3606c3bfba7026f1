"""SQLite storage (Ax's own SQL storage) for experiments run with the bandit strategy:
:func:`sqlite_storage` for ``ax.Client(storage_config=...)``, :func:`load_client` to
continue in another process, and the one-writer :func:`writer_lock`. Both storage
functions install the SQL patches of :mod:`botorch_bandits.upstream` (microsecond
timestamps, exact data, arms re-pulled keep their rows), and bind Ax's process-wide
engine to their file: one file at a time in a process (see docs/ax.md)."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from botorch_bandits import upstream
from botorch_bandits.upstream import install_sql_patches as install_patches
from botorch_bandits.upstream import uninstall_sql_patches as uninstall_patches


# ------------------------------------------------------------------------ engine
def _bind_engine(url: str, argument: str) -> None:
    """Point Ax's process-wide engine at ``url`` and create the tables."""
    from ax.storage.sqa_store import db
    from sqlalchemy.exc import DatabaseError
    from sqlalchemy.pool import NullPool  # 2.x pools a file's connections; 1.4 did not

    previous = None if db.SESSION_FACTORY is None else str(db.get_engine().url)
    if previous != url:
        db.init_engine_and_session_factory(url=url, force_init=True, poolclass=NullPool)
    try:
        db.create_all_tables(db.get_engine())
    except DatabaseError as err:
        if previous is not None and previous != url:  # back to the last good file
            db.init_engine_and_session_factory(
                url=previous, force_init=True, poolclass=NullPool
            )
        raise ValueError(_unusable(url[len("sqlite:///") :], argument, err)) from err


def _unusable(path: str, argument: str, err: Exception) -> str:
    """What to say of a SQLite file that an operation failed on, naming it."""
    why = str(getattr(err, "orig", None) or err)
    if "full" in why:
        return (
            f"`{argument}`: cannot write to {path}: the disk is full ({why}); the "
            "file was left as it is. Free some space and run again."
        )
    return (
        f"`{argument}`: {path} cannot be read as a SQLite database of Ax "
        f"experiments ({why}); it was left as it is."
    )


def _check_path(path: Any, argument: str) -> Path:
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise ValueError(
            f"`{argument}` must be a file path (str or os.PathLike), got {path!r}."
        )
    if not str(path).strip():
        raise ValueError(f"`{argument}` must be a non-empty file path.")
    p = Path(path).expanduser().resolve()
    if p.is_dir():
        raise ValueError(f"`{argument}` is a directory, not a file: {p}.")
    if not p.parent.is_dir():
        raise FileNotFoundError(
            f"`{argument}`: the directory {p.parent} does not exist (create it first)."
        )
    return p


def sqlite_storage(path: str | os.PathLike) -> Any:
    """An ``ax.api.configs.StorageConfig`` for the SQLite file ``path`` (made
    absolute; created with Ax's tables if new; an existing file is kept, with its
    experiments). Binds Ax's process-wide engine to this file (one file at a time) and
    installs the SQL patches (:func:`botorch_bandits.upstream.install_sql_patches`)
    that the saves of the bandit strategy rely on.

    Example::

        client = Client(random_seed=0, storage_config=sqlite_storage("run.db"))
    """
    from ax.api.configs import StorageConfig

    url = f"sqlite:///{_check_path(path, 'path')}"
    _bind_engine(url, "path")
    install_patches()
    return StorageConfig(url=url)


#: Alias of :func:`sqlite_storage`.
sqlite_storage_config = sqlite_storage


class DatabaseBusyError(RuntimeError):
    """Another process holds the writer lock of a SQLite file."""


@contextlib.contextmanager
def writer_lock(path: str | os.PathLike) -> Iterator[Path]:
    """Hold the one-writer lock of the SQLite file ``path`` for the block: an
    exclusive ``flock`` on ``<path>.lock`` (released by the OS when the process
    dies, even by SIGKILL, so a killed run never leaves a stale lock; the file is
    removed when the block ends, and a lock whose file was removed meanwhile is
    taken again on the path's new file). A second
    process gets :class:`DatabaseBusyError` at once, naming the file and the pid
    that holds it -- never two writers appending trials to one experiment."""
    import fcntl

    db = _check_path(path, "path")
    lock = db.with_name(db.name + ".lock")
    while True:
        fd = _open_lock(lock, db)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise DatabaseBusyError(
                f"{db} is in use by another process (pid {holder}): one writer per "
                "database; wait for it to finish or stop it first."
            ) from None
        # the holder before us removes the file as it lets go: a lock on a file
        # no longer at the path is no lock; open the path again
        here = os.fstat(fd)
        try:
            now = os.stat(lock, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == (here.st_dev, here.st_ino):
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield db
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)  # no lock file is left behind after the block
        os.close(fd)  # releases the lock


def _open_lock(lock: Path, db: Path) -> int:
    """Open (create) the lock file, never through a symbolic link."""
    try:
        return os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as err:
        if err.errno == errno.ELOOP:  # O_NOFOLLOW met a symbolic link
            raise ValueError(
                f"The lock file {lock} of {db} is a symbolic link; locks are never "
                "taken through one (another file would be written): remove it."
            ) from None
        raise


def experiment_names() -> list[str]:
    """The names of the experiments in the file Ax's engine is bound to (the last
    :func:`sqlite_storage` or :func:`load_client` of the process)."""
    from ax.storage.sqa_store.db import get_engine, session_scope
    from ax.storage.sqa_store.sqa_classes import SQAExperiment
    from sqlalchemy.exc import DatabaseError

    try:
        with session_scope() as session:
            return sorted(name for (name,) in session.query(SQAExperiment.name))
    except DatabaseError as err:
        path = str(get_engine().url)[len("sqlite:///") :]
        raise ValueError(_unusable(path, "storage", err)) from err


def load_client(
    experiment_name: str, storage: Any, random_seed: int | None = None
) -> Any:
    """``ax.Client.load_from_database`` for a file made with
    :func:`sqlite_storage`: the experiment, its data and its generation strategy;
    later calls keep saving to the file. Installs the SQL patches, as
    :func:`sqlite_storage` does.

    Args:
        experiment_name: The experiment's name.
        storage: The ``StorageConfig`` of :func:`sqlite_storage`, or the file path.
        random_seed: The ``Client``'s ``random_seed`` (``load_from_database`` has
            none); give the one the saving client had.
    """
    from ax import Client
    from ax.api.configs import StorageConfig

    if not isinstance(experiment_name, str) or not experiment_name:
        raise ValueError(
            f"`experiment_name` must be a non-empty string, got {experiment_name!r}."
        )
    if isinstance(storage, StorageConfig):
        url = storage.url or ""
        if not url.startswith("sqlite:///"):
            raise ValueError(
                "`storage` must be a SQLite StorageConfig (from sqlite_storage()), "
                f"got url={storage.url!r}."
            )
        path = _check_path(url[len("sqlite:///") :], "storage")
    else:
        path = _check_path(storage, "storage")
    if not path.is_file():
        raise FileNotFoundError(f"`storage`: the file {path} does not exist.")
    if random_seed is not None and (
        isinstance(random_seed, bool) or not isinstance(random_seed, int)
    ):
        raise ValueError(f"`random_seed` must be an int or None, got {random_seed!r}.")
    url = f"sqlite:///{path}"
    _bind_engine(url, "storage")
    install_patches()  # the data are read back exactly, and later saves patched
    names = experiment_names()
    if experiment_name not in names:
        raise ValueError(
            f"`experiment_name`: no experiment {experiment_name!r} in {path}; it "
            f"holds {names}."
        )
    # Ax's ``Client.load_from_database`` sets the experiment and the strategy
    # through ``set_experiment`` / ``set_generation_strategy``, which *save* them:
    # loading an intact file rewrote every data row. Load with Ax's own loader and
    # attach without saving; later calls save as usual.
    config = StorageConfig(url=url)
    from sqlalchemy.exc import DatabaseError

    try:
        experiment, strategy = upstream.load_experiment_and_strategy(
            config, experiment_name
        )
    except DatabaseError as err:  # e.g. a damaged page: "disk image is malformed"
        raise ValueError(_unusable(str(path), "storage", err)) from err
    client = Client(storage_config=config, random_seed=random_seed)
    upstream.attach_to_client(client, experiment, strategy)
    return client


__all__ = [
    "DatabaseBusyError",
    "experiment_names",
    "install_patches",
    "load_client",
    "sqlite_storage",
    "sqlite_storage_config",
    "uninstall_patches",
    "writer_lock",
]
