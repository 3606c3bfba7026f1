"""SQLite storage (Ax's own SQL storage) for experiments run with the bandit strategy:
:func:`sqlite_storage` for ``ax.Client(storage_config=...)``, :func:`load_client` to
continue in another process, and the one-writer :func:`writer_lock`, which both
storage functions take. Both install the SQL patches of :mod:`botorch_bandits.upstream`
(microsecond timestamps, exact data, arms re-pulled keep their rows, batch trials
keep theirs) and route each ``Client``'s saves to its own file: several files in one
process each keep their experiments and their writer locks (see docs/ax.md)."""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from botorch_bandits import upstream
from botorch_bandits.upstream import install_sql_patches as install_patches
from botorch_bandits.upstream import uninstall_sql_patches as uninstall_patches

# ------------------------------------------------------------------------ engine
# one session factory (an engine without a connection pool) per database URL: each
# ``Client`` saves through the factory of its own ``StorageConfig`` (:func:`_routed`)
_FACTORIES: dict[str, Any] = {}
# serializes the swaps of Ax's process-wide factory in :func:`_routed`
_ROUTE_GUARD = threading.RLock()


def _engine_url() -> str | None:
    """The URL Ax's process-wide engine is bound to (``None``: none yet)."""
    from ax.storage.sqa_store import db

    return None if db.SESSION_FACTORY is None else str(db.get_engine().url)


def _factory(url: str) -> Any:
    """The session factory of ``url`` (made on first use): an engine with no
    connection pool (2.x pools a file's connections; 1.4 did not) and a full disk
    named (:func:`_name_the_file_on_errors`)."""
    from ax.storage.sqa_store import db
    from sqlalchemy.orm import scoped_session, sessionmaker
    from sqlalchemy.pool import NullPool

    factory = _FACTORIES.get(url)
    if factory is None:
        engine = db.create_mysql_engine_from_url(url=url, poolclass=NullPool)
        _name_the_file_on_errors(engine)
        factory = scoped_session(
            sessionmaker(bind=engine, expire_on_commit=db.EXPIRE_ON_COMMIT)
        )
        _FACTORIES[url] = factory
    return factory


def _init_engine(url: str) -> None:
    """Ax's process-wide session factory on ``url``'s own (:func:`_factory`)."""
    from ax.storage.sqa_store import db

    db.SESSION_FACTORY = _factory(url)


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


@contextlib.contextmanager
def _routed(url: str | None, saving: bool = True) -> Iterator[None]:
    """For the block, Ax's process-wide session factory is ``url``'s own, so a
    ``Client`` (or ``Orchestrator``) saves to and loads from the file it was made
    with, whichever file the process bound last. A file the storage functions
    bound and :func:`close_storage` let go of is refused for a save
    (``saving``): its writer lock is gone (another process may write it now);
    reading it stays allowed. ``url=None`` (Ax's ``creator`` settings):
    Ax's own factory, as it is. Installed by :func:`install_patches` around every
    storage method of Ax's ``WithDBSettingsBase``; the swaps are serialized across
    threads."""
    if url is None:
        yield
        return
    from ax.storage.sqa_store import db

    if saving:
        _check_saving(url)
    with _ROUTE_GUARD:
        previous = db.SESSION_FACTORY
        db.SESSION_FACTORY = _factory(url)
        try:
            yield
        finally:
            db.SESSION_FACTORY = previous


def _check_saving(url: str) -> None:
    """Refuse a save to a file that :func:`close_storage` let go of (and that no
    storage function bound again since)."""
    if not url.startswith("sqlite:///"):
        return
    path = Path(url[len("sqlite:///") :])
    if path in _LET_GO and path not in _BOUND:
        raise RuntimeError(
            f"{path} was let go by close_storage(): a Client made with it saves "
            "nothing more (its writer lock is released, another process may be "
            "writing the file); nothing was changed. Continue from the file with "
            f"load_client(experiment_name, {str(path)!r}), or bind it again with "
            f"sqlite_storage({str(path)!r})."
        )


upstream.SESSION_ROUTER = _routed
upstream.SAVE_CHECK = _check_saving


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
    while the process writes to the file -- until :func:`close_storage` or the
    process ends -- so a second process that opens the file to write gets
    :class:`DatabaseBusyError` naming the holder instead of sharing it (two
    writers gave two trials one index, and lost data, silently). Several files
    in one process: each ``Client`` saves to the file it was made with and the
    lock of each is held (:func:`install_patches` routes Ax's saves); Ax's
    process-wide engine is left on the latest file. Installs the SQL patches
    (:func:`botorch_bandits.upstream.install_sql_patches`) that the saves of the
    bandit strategy rely on.

    Args:
        path: The SQLite file (its directory must exist; not a directory).

    Returns:
        The ``StorageConfig`` (``url="sqlite:///<absolute path>"``).

    Raises:
        DatabaseBusyError: When another process holds the file's writer lock.

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
    """Take ``db``'s writer lock (once: a file bound already keeps its one
    hold), create Ax's tables in it and point Ax's process-wide engine at it (a
    busy or unusable file leaves every binding as it was). Files bound before
    stay bound, their locks held, until :func:`close_storage`."""
    if db in _BOUND:
        _bind_engine(url, argument)
        return
    _acquire(db)
    try:
        _bind_engine(url, argument)
    except BaseException:
        _release(db)
        raise
    _BOUND.append(db)
    _LET_GO.discard(db)


#: Alias of :func:`sqlite_storage`.
sqlite_storage_config = sqlite_storage


class DatabaseBusyError(RuntimeError):
    """Another process holds the writer lock of a SQLite file."""


# the writer locks this process holds: the database file's (device, inode) ->
# [descriptor of the database file (flocked), number of holders in this
# process, descriptor of the ``<path>.lock`` file that names the holder's pid]
_HELD: dict[tuple[int, int], list[int]] = {}
_HELD_GUARD = threading.Lock()
# the files this process's storage functions bound, in order, each holding its
# writer lock once (see :func:`sqlite_storage`)
_BOUND: list[Path] = []
# the files :func:`close_storage` let go of (a save to one is refused)
_LET_GO: set[Path] = set()


def _lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".lock")


#: how long a refused process waits for the holder to write its pid: the holder
#: writes it right after taking the lock, so a refusal in between would otherwise
#: name no pid
HOLDER_PID_WAIT = 2.0


def _locker_pid(st: os.stat_result) -> int | None:
    """The pid holding a ``flock`` on the file ``st`` describes, from Linux's
    ``/proc/locks`` (``None`` where there is none, or no such file)."""
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        if "->" in parts:  # a waiter, not a holder
            continue
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == where:
            pid = parts[4]
            if pid.isdigit() and int(pid) > 0:
                return int(pid)
    return None


def _holder(db: Path, fd: int) -> str:
    """Who holds the lock on ``fd``'s file: its pid (from ``/proc/locks``, else
    the ``<db>.lock`` file the holder writes, waited for up to
    :data:`HOLDER_PID_WAIT` seconds), and whether that process still runs."""
    pid = _locker_pid(os.fstat(fd))
    if pid is None:
        deadline = time.monotonic() + HOLDER_PID_WAIT
        text = ""
        while True:
            with contextlib.suppress(OSError):
                text = _lock_path(db).read_text(errors="replace").strip()
            if text.isdigit() or time.monotonic() >= deadline:
                break
            time.sleep(0.01)
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
    of ``db``: an exclusive ``flock`` on the database file itself, so the lock
    holds for the file whatever path (a hard link, a symbolic link) names it;
    the OS releases it when the process dies, even by SIGKILL. SQLite's own locks
    are POSIX record locks, which ``flock`` does not touch. The pid is written to
    ``<db>.lock`` for people and for a refused process without ``/proc/locks``.
    The descriptors are closed at ``exec`` and, in a child this process forks (a
    pool worker), at the fork (:func:`_forked`), so no other process keeps the
    lock after the writer is gone. Creates ``db`` (empty) if it does not exist."""
    import fcntl

    with _HELD_GUARD:
        pidfile = _lock_path(db)
        pid_fd = _open_lock(pidfile, db)  # refuses a symbolic link first
        try:
            fd = os.open(db, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except BaseException:
            os.close(pid_fd)
            raise
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        if key in _HELD:  # this process holds it: one more holder
            os.close(fd)  # closing it keeps SQLite's locks: none is open now
            os.close(pid_fd)
            _HELD[key][1] += 1
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(db, fd)
            os.close(fd)
            os.close(pid_fd)
            raise DatabaseBusyError(
                f"{db} is in use by another process ({holder}): one writer per "
                "database; wait for it to finish or stop it first (or read it "
                "with load_client(..., read_only=True))."
            ) from None
        os.ftruncate(pid_fd, 0)
        os.pwrite(pid_fd, str(os.getpid()).encode(), 0)
        _HELD[key] = [fd, 1, pid_fd]


def _forked() -> None:
    """In a child just forked: close the inherited descriptors of the parent's
    writer locks (closing, not unlocking: the parent keeps its lock), so that a
    worker that outlives its parent holds none."""
    for fd, _, pid_fd in _HELD.values():
        for each in (fd, pid_fd):
            with contextlib.suppress(OSError):
                os.close(each)
    _HELD.clear()
    _BOUND.clear()
    _FACTORIES.clear()


os.register_at_fork(after_in_child=_forked)


def _release(db: Path) -> None:
    """One holder of ``db``'s writer lock in this process lets go; the last one
    removes the ``<db>.lock`` file and releases the lock."""
    with _HELD_GUARD:
        try:
            st = os.stat(db)
        except FileNotFoundError:
            return
        key = (st.st_dev, st.st_ino)
        held = _HELD.get(key)
        if held is None:
            return
        held[1] -= 1
        if held[1] > 0:
            return
        del _HELD[key]
        with contextlib.suppress(FileNotFoundError):
            os.unlink(_lock_path(db))  # no lock file is left behind
        os.close(held[2])
        os.close(held[0])  # releases the lock


@contextlib.contextmanager
def writer_lock(path: str | os.PathLike) -> Iterator[Path]:
    """Hold the one-writer lock of the SQLite file ``path`` for the block.

    The lock is an exclusive ``flock`` on the database file itself (created
    empty if new), so it holds for the file under any path that names it (a hard
    link too): released by the OS when the process dies (even by SIGKILL), so a
    killed run never leaves a stale lock; never kept by a process the holder
    forks or starts (a pool worker). The holder's pid is written to
    ``<path>.lock``, which is removed when the last holder lets go. Within one
    process the lock is re-entrant (:func:`sqlite_storage` and
    :func:`load_client` hold it too). Another process gets
    :class:`DatabaseBusyError` at once, naming the file and the holder's pid and
    whether it still runs -- never two writers appending trials to one
    experiment.

    Args:
        path: The SQLite file.

    Yields:
        The file's absolute ``Path``.

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


def close_storage(path: str | os.PathLike | None = None) -> None:
    """Let go of a file the storage functions bound (``path``), or of every one
    (``None``): its writer lock is released (another process may write to it
    now) and its engine closes its connections. A ``Client`` made with it then
    refuses to save (a ``RuntimeError`` naming the file): continue from the file
    with :func:`load_client`, or bind it again with :func:`sqlite_storage`.

    Args:
        path: A file bound in this process (a ``ValueError`` otherwise), or
            ``None`` (default) for every one.
    """
    if path is None:
        files = list(_BOUND)
    else:
        db = _check_path(path, "path")
        if db not in _BOUND:
            raise ValueError(
                f"`path`: {db} is not bound by sqlite_storage() or load_client() "
                f"in this process; bound: {[str(p) for p in _BOUND] or 'none'}."
            )
        files = [db]
    for db in files:
        _BOUND.remove(db)
        _LET_GO.add(db)
        factory = _FACTORIES.get(f"sqlite:///{db}")
        if factory is not None:
            factory.remove()
            factory.bind.dispose()
        _release(db)


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

    Returns:
        The ``ax.Client``.

    Example::

        client = load_client("my-experiment", "run.db", random_seed=0)
        trials = client.get_next_trials(max_trials=1)
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
        with warnings.catch_warnings():
            # Ax's JSONEncodedText column type sets no ``cache_ok``, so SQLAlchemy
            # 2.x says twice per load that it will not cache those statements: a
            # cost of Ax's loader (the statements run uncached), nothing a caller
            # can act on, so that one warning is not passed on
            warnings.filterwarnings(
                "ignore",
                message=r"TypeDecorator JSONEncodedText\(\) will not produce a cache key",
            )
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
