"""SQLite storage (Ax's own SQL storage) for experiments run with the bandit strategy:
:func:`sqlite_storage` for ``ax.Client(storage_config=...)``, :func:`load_client` to
continue in another process, and the one-writer :func:`writer_lock`, which both
storage functions take. Both install the SQL patches of :mod:`botorch_bandits.upstream`
(microsecond timestamps, exact data, arms re-pulled keep their rows, batch trials
keep theirs), and bind Ax's process-wide engine to their file: one file at a time
in a process (see docs/ax.md)."""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from botorch_bandits import upstream
from botorch_bandits.upstream import install_sql_patches as install_patches
from botorch_bandits.upstream import uninstall_sql_patches as uninstall_patches


# ------------------------------------------------------------------------ engine
def _engine_url() -> str | None:
    """The URL Ax's process-wide engine is bound to (``None``: none yet)."""
    from ax.storage.sqa_store import db

    return None if db.SESSION_FACTORY is None else str(db.get_engine().url)


def _init_engine(url: str) -> None:
    """Ax's process-wide engine on ``url``, with no connection pool (2.x pools a
    file's connections; 1.4 did not) and a full disk named (:func:`_name_the_file_on_errors`)."""
    from ax.storage.sqa_store import db
    from sqlalchemy.pool import NullPool

    db.init_engine_and_session_factory(url=url, force_init=True, poolclass=NullPool)
    _name_the_file_on_errors(db.get_engine())


def _bind_engine(url: str, argument: str) -> None:
    """Point Ax's process-wide engine at ``url`` and create the tables."""
    from ax.storage.sqa_store import db
    from sqlalchemy.exc import DatabaseError

    previous = _engine_url()
    if previous != url:
        _init_engine(url)
    try:
        db.create_all_tables(db.get_engine())
    except DatabaseError as err:
        if previous is not None and previous != url:  # back to the last good file
            _init_engine(previous)
        raise ValueError(_unusable(url[len("sqlite:///") :], argument, err)) from err


def _name_the_file_on_errors(engine: Any) -> None:
    """A full disk during any save through ``engine`` (Ax saves inside every
    ``get_next_trials`` / ``complete_trial``) raises an ``OSError`` (ENOSPC) naming
    the file and what to do, instead of SQLAlchemy's bare "database or disk is
    full" (SQLAlchemy's ``handle_error`` event; the transaction is rolled back as
    before, so the file holds every earlier save)."""
    from sqlalchemy import event

    if getattr(engine, "_botorch_bandits_errors", False):
        return

    def on_error(context: Any) -> None:
        why = str(context.original_exception)
        if "full" in why:
            path = str(engine.url)[len("sqlite:///") :]
            raise OSError(
                errno.ENOSPC,
                f"Cannot write to {path}: the disk is full ({why}). The change "
                "being saved was rolled back: the file holds every earlier save. "
                "Free some space, then continue from the file: "
                "load_client(name, path).",
            ) from context.original_exception

    event.listen(engine, "handle_error", on_error)
    engine._botorch_bandits_errors = True


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
    experiments). Takes the file's writer lock (:func:`writer_lock`) and holds it
    while the process writes to the file -- until it binds another file,
    :func:`close_storage`, or ends -- so a second process that opens the file to
    write gets :class:`DatabaseBusyError` naming the holder instead of sharing it
    (two writers gave two trials one index, and lost data, silently). Binds Ax's
    process-wide engine to this file (one file at a time) and installs the SQL
    patches (:func:`botorch_bandits.upstream.install_sql_patches`) that the saves
    of the bandit strategy rely on.

    Example::

        client = Client(random_seed=0, storage_config=sqlite_storage("run.db"))
    """
    from ax.api.configs import StorageConfig

    db = _check_path(path, "path")
    url = f"sqlite:///{db}"
    _bind(db, url, "path")
    install_patches()
    return StorageConfig(url=url)


def _bind(db: Path, url: str, argument: str) -> None:
    """Take ``db``'s writer lock, bind Ax's engine to it, then let go of the file
    bound before (a busy or unusable file leaves the binding as it was)."""
    if _BOUND and _BOUND[0] == db:
        _bind_engine(url, argument)
        return
    _acquire(db)
    try:
        _bind_engine(url, argument)
    except BaseException:
        _release(db)
        raise
    if _BOUND:
        _release(_BOUND.pop())
    _BOUND.append(db)


#: Alias of :func:`sqlite_storage`.
sqlite_storage_config = sqlite_storage


class DatabaseBusyError(RuntimeError):
    """Another process holds the writer lock of a SQLite file."""


# the writer locks this process holds: database path -> [lock file descriptor,
# number of holders in this process]
_HELD: dict[Path, list[int]] = {}
_HELD_GUARD = threading.Lock()
# the file this process's storage functions bound Ax's engine to, and hold the
# writer lock of (see :func:`sqlite_storage`)
_BOUND: list[Path] = []


def _lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".lock")


#: how long a refused process waits for the holder to write its pid: the holder
#: writes it right after taking the lock, so a refusal in between would otherwise
#: name no pid
HOLDER_PID_WAIT = 2.0


def _holder(fd: int) -> str:
    """Who holds the lock on ``fd``'s file: its pid (written by the holder, waited
    for up to :data:`HOLDER_PID_WAIT` seconds), and whether that process still
    runs."""
    deadline = time.monotonic() + HOLDER_PID_WAIT
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    while not text.isdigit() and time.monotonic() < deadline:
        time.sleep(0.01)
        text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    if not text.isdigit():
        return "pid unknown: the holder has not written it yet"
    pid = int(text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return (
            f"pid {pid}, which is no longer running: a process it started still "
            "holds the file open; stop it"
        )
    except PermissionError:  # runs, as another user
        pass
    return f"pid {pid}, running"


def _acquire(db: Path) -> None:
    """Take (or, held by this process already, count once more) the writer lock
    of ``db``: an exclusive ``flock`` on ``<db>.lock``, which the OS releases when
    the process dies, even by SIGKILL. Its descriptor is closed at ``exec`` and, in
    a child this process forks (a pool worker), at the fork (:func:`_forked`), so
    no other process keeps it after the writer is gone."""
    import fcntl

    with _HELD_GUARD:
        if db in _HELD:  # this process holds it: one more holder
            _HELD[db][1] += 1
            return
        lock = _lock_path(db)
        while True:
            fd = _open_lock(lock, db)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                os.close(fd)
                raise DatabaseBusyError(
                    f"{db} is in use by another process ({holder}): one writer per "
                    "database; wait for it to finish or stop it first (or read it "
                    "with load_client(..., read_only=True))."
                ) from None
            # the holder before us removes the file as it lets go: a lock on a
            # file no longer at the path is no lock; open the path again
            here = os.fstat(fd)
            try:
                now = os.stat(lock, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == (
                here.st_dev,
                here.st_ino,
            ):
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        _HELD[db] = [fd, 1]


def _forked() -> None:
    """In a child just forked: close the inherited descriptors of the parent's
    writer locks (closing, not unlocking: the parent keeps its lock), so that a
    worker that outlives its parent holds none."""
    for fd, _ in _HELD.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()
    _BOUND.clear()


os.register_at_fork(after_in_child=_forked)


def _release(db: Path) -> None:
    """One holder of ``db``'s writer lock in this process lets go; the last one
    removes the lock file and releases the lock."""
    with _HELD_GUARD:
        held = _HELD.get(db)
        if held is None:
            return
        held[1] -= 1
        if held[1] > 0:
            return
        del _HELD[db]
        with contextlib.suppress(FileNotFoundError):
            os.unlink(_lock_path(db))  # no lock file is left behind
        os.close(held[0])  # releases the lock


@contextlib.contextmanager
def writer_lock(path: str | os.PathLike) -> Iterator[Path]:
    """Hold the one-writer lock of the SQLite file ``path`` for the block.

    The lock is an exclusive ``flock`` on ``<path>.lock``: released by the OS when
    the process dies (even by SIGKILL), so a killed run never leaves a stale
    lock; never kept by a process the holder forks or starts (a pool worker); the
    file is removed when the last holder lets go. Within one process the lock is
    re-entrant (:func:`sqlite_storage` and :func:`load_client` hold it too).
    Another process gets :class:`DatabaseBusyError` at once, naming the file and
    the holder's pid and whether it still runs -- never two writers appending
    trials to one experiment.

    Example::

        with writer_lock("run.db"):
            client = Client(storage_config=sqlite_storage("run.db"))
            ...
    """
    db = _check_path(path, "path")
    _acquire(db)
    try:
        yield db
    finally:
        _release(db)


def close_storage() -> None:
    """Let go of the file the storage functions bound: its writer lock is
    released (another process may write to it now) and Ax's engine closes its
    connections. A ``Client`` made with it must not be used to save afterwards."""
    from ax.storage.sqa_store import db

    if _BOUND:
        _release(_BOUND.pop())
    if db.SESSION_FACTORY is not None:
        db.get_engine().dispose()


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
    experiment_name: str,
    storage: Any,
    random_seed: int | None = None,
    read_only: bool = False,
) -> Any:
    """``ax.Client.load_from_database`` for a file made with
    :func:`sqlite_storage`: the experiment, its data and its generation strategy;
    later calls keep saving to the file. Takes the file's writer lock as
    :func:`sqlite_storage` does (another process writing to the file:
    :class:`DatabaseBusyError`), and installs the SQL patches.

    Args:
        experiment_name: The experiment's name.
        storage: The ``StorageConfig`` of :func:`sqlite_storage`, or the file path.
        random_seed: The ``Client``'s ``random_seed`` (``load_from_database`` has
            none); give the one the saving client had.
        read_only: Read the file without its writer lock (a run may be writing
            it): the ``Client`` holds an in-memory copy and saves nothing, and the
            process's storage binding is left as it was.
    """
    from ax import Client
    from ax.api.configs import StorageConfig

    if not isinstance(experiment_name, str) or not experiment_name:
        raise ValueError(
            f"`experiment_name` must be a non-empty string, got {experiment_name!r}."
        )
    if not isinstance(read_only, bool):
        raise ValueError(f"`read_only` must be True or False, got {read_only!r}.")
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
    if read_only:
        with _bound_for_reading(url):
            experiment, strategy = _load(path, url, experiment_name)
        client = Client(random_seed=random_seed)  # no storage: saves nothing
    else:
        _bind(path, url, "storage")
        install_patches()  # the data are read back exactly, and later saves patched
        experiment, strategy = _load(path, url, experiment_name)
        client = Client(storage_config=StorageConfig(url=url), random_seed=random_seed)
    upstream.attach_to_client(client, experiment, strategy)
    return client


@contextlib.contextmanager
def _bound_for_reading(url: str) -> Iterator[None]:
    """Ax's engine on ``url`` for the block, then back on the file it was bound
    to (if any)."""
    previous = _engine_url()
    _bind_engine(url, "storage")
    install_patches()
    try:
        yield
    finally:
        if previous is not None and previous != url:
            _bind_engine(previous, "storage")


def _load(path: Path, url: str, experiment_name: str) -> tuple[Any, Any]:
    """The experiment and strategy ``experiment_name`` of the bound file."""
    from ax.api.configs import StorageConfig
    from sqlalchemy.exc import DatabaseError

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
    try:
        return upstream.load_experiment_and_strategy(
            StorageConfig(url=url), experiment_name
        )
    except DatabaseError as err:  # e.g. a damaged page: "disk image is malformed"
        raise ValueError(_unusable(str(path), "storage", err)) from err


__all__ = [
    "DatabaseBusyError",
    "close_storage",
    "experiment_names",
    "install_patches",
    "load_client",
    "sqlite_storage",
    "sqlite_storage_config",
    "uninstall_patches",
    "writer_lock",
]
