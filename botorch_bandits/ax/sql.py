r"""SQLite storage (Ax's own SQL storage) for experiments run with the bandit
strategy: save with ``ax.Client(storage_config=sqlite_storage(path))`` -- the
``Client`` saves every ``get_next_trials`` / ``complete_trial`` -- and continue in
another process with :func:`load_client`.

Importing this module applies three narrow patches to Ax's SQL store (idempotent, see
:func:`install_patches`); every process that saves should import it (using
:func:`sqlite_storage` or :func:`load_client` does) so that its saves keep what the
bandit node relies on:

* **Microsecond timestamps.** Ax stores ``time_created`` / ``time_completed`` /
  ``time_run_started`` of trials and generator runs in ``IntTimestamp`` columns,
  ``int(value.timestamp())`` (``ax/storage/sqa_store/timestamp.py``): a reloaded
  experiment has whole seconds, so trials created and completed within one second
  tie, and the node -- which orders creations and arrivals by these times -- can
  make a different decision after a reload. On SQLite (dynamically typed: an
  INTEGER column keeps a REAL value) the patch stores the float timestamp, which
  round-trips exactly to the microsecond; Ax's own reader already accepts floats,
  so files stay readable by unpatched Ax. Other dialects are unchanged.
* **Arms re-pulled by a bandit.** An arm row (``arm_v2``) belongs to exactly one
  generator run (``generator_run_id``), and Ax's encoder writes an ``Arm`` with
  ``id=arm.db_id``. A generator run that carries an ``Arm`` object already saved
  with another generator run (the experiment's existing arm, or one object shared
  by two runs) therefore *moves* that row to the new run on ``session.merge``: the
  earlier trial reloads with ``trial.arms == []``. The patch gives such a run its
  own copy of the arm (same name and parameters, a new row). Ax's
  ``ExternalGenerationNode`` builds fresh arms, so this is a guard, not a change of
  the stored result.

* **Exact data.** Ax writes each trial's data as ``data.full_df.to_json()``
  (pandas' default ``double_precision=10``, *decimal places*) and reads it with
  pandas' fast float parser, so a reloaded mean was only within about 1e-10 of the
  saved one -- enough to move the next candidate of a model refitted after a
  resume (Ax's default strategy drifted by 1e-8, then by 3e-3 a trial later). The
  patch writes every finite float with Python's round-tripping repr (still the same
  JSON layout, readable by unpatched Ax) and reads it with pandas'
  ``precise_float=True``: a reloaded value equals the saved one bit for bit.

:func:`load_client` attaches the loaded experiment and strategy without saving
them (Ax's ``Client.load_from_database`` saves both on load, rewriting every data
row of an intact file).

Ax binds one SQL engine per process (``ax.storage.sqa_store.db.SESSION_FACTORY``);
a ``Client`` does not rebind it. :func:`sqlite_storage` and :func:`load_client`
rebind it to their file, so the most recent call picks the file every ``Client`` of
the process writes to: use one file at a time in a process.
"""

from __future__ import annotations

import contextlib
import math
import os
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_ORIGINALS: dict[str, Any] = {}
# id(arm) -> (weakref to the arm, weakref to the generator run that saved it)
_ARM_OWNERS: dict[int, tuple[weakref.ref, weakref.ref]] = {}


# ------------------------------------------------------------------------ patches
def _bind_precise(self: Any, value: Any, dialect: Any) -> Any:
    if value is not None and dialect.name == "sqlite":
        return value.timestamp()  # REAL in SQLite: microseconds kept
    return _ORIGINALS["bind"](self, value, dialect)


def _forget(key: int) -> Any:
    return lambda _ref: _ARM_OWNERS.pop(key, None)


def _own_arms(generator_run: Any) -> None:
    """Give ``generator_run`` its own copy of every arm that is saved with, or
    shared by, another generator run."""
    from ax.core.generator_run import ArmWeight

    table = generator_run._arm_weight_table
    for signature, cw in list(table.items()):
        arm = cw.arm
        record = _ARM_OWNERS.get(id(arm))
        owner = record[1]() if record is not None and record[0]() is arm else None
        shared = owner is not None and owner is not generator_run
        same_row = (
            shared and owner.db_id is not None and owner.db_id == (generator_run.db_id)
        )
        saved_elsewhere = (
            owner is None and generator_run.db_id is None and arm.db_id is not None
        )
        if (shared and not same_row) or saved_elsewhere:
            arm = arm.clone()  # same name and parameters, no db_id: a row of its own
            table[signature] = ArmWeight(arm=arm, weight=cw.weight)
        _ARM_OWNERS[id(arm)] = (
            weakref.ref(arm, _forget(id(arm))),
            weakref.ref(generator_run),
        )


def _data_to_sqa(self: Any, data: Any, *args: Any, **kw: Any) -> Any:
    """Ax's row with every finite float written exactly (Python's shortest repr,
    which round-trips): pandas' ``to_json`` keeps 10 decimal places."""
    import json

    import pandas as pd

    sqa = _ORIGINALS["data_to_sqa"](self, data, *args, **kw)
    df = data.full_df
    obj = json.loads(sqa.data_json)
    for col in df.columns:
        if col in obj and pd.api.types.is_float_dtype(df[col]):
            keys = list(obj[col])
            for key, value in zip(keys, df[col].tolist(), strict=True):
                if math.isfinite(value):
                    obj[col][key] = value
    sqa.data_json = json.dumps(obj, allow_nan=False)
    return sqa


class _PrecisePandas:
    """pandas as Ax's SQL decoder module sees it (its ``pd``), with ``read_json``
    parsing floats correctly rounded (``precise_float=True``): the exact values
    written by :func:`_data_to_sqa` come back bit for bit. Everything else is
    pandas itself."""

    def __getattr__(self, name: str) -> Any:
        import pandas

        return getattr(pandas, name)

    @staticmethod
    def read_json(*args: Any, **kw: Any) -> Any:
        import pandas

        kw.setdefault("precise_float", True)
        return pandas.read_json(*args, **kw)


def _generator_run_to_sqa(self: Any, generator_run: Any, *args: Any, **kw: Any):
    _own_arms(generator_run)
    return _ORIGINALS["generator_run_to_sqa"](self, generator_run, *args, **kw)


def install_patches() -> None:
    """Apply the patches described in the module docstring (idempotent; runs
    on import of this module)."""
    from ax.storage.sqa_store.encoder import Encoder
    from ax.storage.sqa_store.timestamp import IntTimestamp

    if _ORIGINALS:
        return
    from ax.storage.sqa_store import decoder

    _ORIGINALS["bind"] = IntTimestamp.process_bind_param
    _ORIGINALS["generator_run_to_sqa"] = Encoder.generator_run_to_sqa
    _ORIGINALS["data_to_sqa"] = Encoder.data_to_sqa
    _ORIGINALS["decoder_pd"] = decoder.pd
    IntTimestamp.process_bind_param = _bind_precise
    Encoder.generator_run_to_sqa = _generator_run_to_sqa
    Encoder.data_to_sqa = _data_to_sqa
    decoder.pd = _PrecisePandas()  # the decoder reads data with pd.read_json


def uninstall_patches() -> None:
    """Restore Ax's original functions (for tests and comparisons; nothing in this
    module re-applies the patches until :func:`install_patches`)."""
    from ax.storage.sqa_store.encoder import Encoder
    from ax.storage.sqa_store.timestamp import IntTimestamp

    if not _ORIGINALS:
        return
    from ax.storage.sqa_store import decoder

    IntTimestamp.process_bind_param = _ORIGINALS.pop("bind")
    Encoder.generator_run_to_sqa = _ORIGINALS.pop("generator_run_to_sqa")
    Encoder.data_to_sqa = _ORIGINALS.pop("data_to_sqa")
    decoder.pd = _ORIGINALS.pop("decoder_pd")
    _ARM_OWNERS.clear()


# ------------------------------------------------------------------------ engine
def _bind_engine(url: str, argument: str) -> None:
    """Point Ax's process-wide engine at ``url`` and create the tables."""
    from ax.storage.sqa_store import db
    from sqlalchemy.exc import DatabaseError

    previous = None if db.SESSION_FACTORY is None else str(db.get_engine().url)
    if previous != url:
        db.init_engine_and_session_factory(url=url, force_init=True)
    try:
        db.create_all_tables(db.get_engine())
    except DatabaseError as err:
        if previous is not None and previous != url:  # back to the last good file
            db.init_engine_and_session_factory(url=previous, force_init=True)
        raise ValueError(
            f"`{argument}`: {url[len('sqlite:///') :]} is not a SQLite database "
            f"({err.orig})."
        ) from err


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
    experiments). Binds Ax's process-wide engine to this file (see the module).

    Example::

        client = Client(random_seed=0, storage_config=sqlite_storage("run.db"))
    """
    from ax.api.configs import StorageConfig

    url = f"sqlite:///{_check_path(path, 'path')}"
    _bind_engine(url, "path")
    return StorageConfig(url=url)


#: Alias of :func:`sqlite_storage`.
sqlite_storage_config = sqlite_storage


class DatabaseBusyError(RuntimeError):
    """Another process holds the writer lock of a SQLite file."""


@contextlib.contextmanager
def writer_lock(path: str | os.PathLike) -> Iterator[Path]:
    """Hold the one-writer lock of the SQLite file ``path`` for the block: an
    exclusive ``flock`` on ``<path>.lock`` (released by the OS when the process
    dies, even by SIGKILL, so a killed run never leaves a stale lock). A second
    process gets :class:`DatabaseBusyError` at once, naming the file and the pid
    that holds it -- never two writers appending trials to one experiment."""
    import fcntl

    db = _check_path(path, "path")
    lock = db.with_name(db.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise DatabaseBusyError(
                f"{db} is in use by another process (pid {holder}): one writer per "
                "database; wait for it to finish or stop it first."
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield db
    finally:
        os.close(fd)  # releases the lock


def _experiment_names() -> list[str]:
    from ax.storage.sqa_store.db import session_scope
    from ax.storage.sqa_store.sqa_classes import SQAExperiment

    with session_scope() as session:
        return sorted(name for (name,) in session.query(SQAExperiment.name))


def load_client(
    experiment_name: str, storage: Any, random_seed: int | None = None
) -> Any:
    """``ax.Client.load_from_database`` for a file made with
    :func:`sqlite_storage`: the experiment, its data and its generation strategy;
    later calls keep saving to the file.

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
    names = _experiment_names()
    if experiment_name not in names:
        raise ValueError(
            f"`experiment_name`: no experiment {experiment_name!r} in {path}; it "
            f"holds {names}."
        )
    # Ax's ``Client.load_from_database`` sets the experiment and the strategy
    # through ``set_experiment`` / ``set_generation_strategy``, which *save* them:
    # loading an intact file rewrote every data row. Load with Ax's own loader and
    # attach without saving; later calls save as usual.
    from ax.api.utils.storage import db_settings_from_storage_config
    from ax.storage.sqa_store.with_db_settings_base import WithDBSettingsBase

    config = StorageConfig(url=url)
    loader = WithDBSettingsBase(db_settings=db_settings_from_storage_config(config))
    experiment, strategy = loader._load_experiment_and_generation_strategy(
        experiment_name=experiment_name
    )
    client = Client(storage_config=config, random_seed=random_seed)
    client._maybe_experiment = experiment
    if strategy is not None:
        client._maybe_generation_strategy = strategy
        strategy._experiment = experiment
    return client


try:
    install_patches()
except ImportError:  # Ax without SQLAlchemy: nothing to patch (the functions raise)
    pass

__all__ = [
    "DatabaseBusyError",
    "install_patches",
    "load_client",
    "sqlite_storage",
    "sqlite_storage_config",
    "uninstall_patches",
    "writer_lock",
]
