"""Every private or undocumented detail of Ax, BoTorch and torch the package relies on,
and the code using it (tests/test_upstream.py pins each; docs/design.md explains).
Ax SQL store (patched by :func:`install_sql_patches`): ``IntTimestamp``'s bind,
``Encoder.generator_run_to_sqa`` and ``data_to_sqa``, ``decoder.pd``, a generator run's
``_arm_weight_table``, the strategy's save and update (``_nodes``, ``_generator_runs``);
``db.SESSION_FACTORY``, ``utils.copy_db_ids``, ``_load_experiment_and_generation_strategy``.
``ax.Client``: ``_experiment``, ``_maybe_experiment``, ``_maybe_generation_strategy``,
``_storage_config``, ``_generation_strategy_or_choose``. Node: ``ExternalGenerationNode._gen``
and ``fit_time_since_gen``, a run's ``_generator_key``, ``_gen_metadata``, ``_fit_time``,
``IntToFloat.rounding``, the runner registry's order. BoTorch: none. torch: ``Tensor._version``."""

from __future__ import annotations

import json
import math
import weakref
from typing import Any

import torch
from botorch.utils.datasets import SupervisedDataset
from torch import Tensor

_ORIGINALS: dict[str, Any] = {}
# id(arm) -> (weakref to the arm, weakref to the generator run that saved it)
_ARM_OWNERS: dict[int, tuple[weakref.ref, weakref.ref]] = {}


# ------------------------------------------------------------------- Ax SQL store
def _bind_precise(self: Any, value: Any, dialect: Any) -> Any:
    if value is not None and dialect.name == "sqlite":
        return value.timestamp()  # REAL in SQLite: microseconds kept
    return _ORIGINALS["bind"](self, value, dialect)


def _forget(table: dict[int, Any], key: int) -> Any:
    """A weakref callback that drops ``key`` from ``table`` when its object goes."""
    return lambda _ref: table.pop(key, None)


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
            weakref.ref(arm, _forget(_ARM_OWNERS, id(arm))),
            weakref.ref(generator_run),
        )


def _data_to_sqa(self: Any, data: Any, *args: Any, **kw: Any) -> Any:
    """Ax's row with every finite float written exactly (Python's shortest repr,
    which round-trips): pandas' ``to_json`` keeps 10 decimal places."""

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


class PrecisePandas:
    """pandas as Ax's SQL decoder module sees it (its ``pd``), with ``read_json``
    parsing floats correctly rounded (``precise_float=True``): the exact values
    written by the data patch come back bit for bit. Everything else is pandas
    itself."""

    def __getattr__(self, name: str) -> Any:
        import pandas

        return getattr(pandas, name)

    @staticmethod
    def read_json(*args: Any, **kw: Any) -> Any:
        """``pandas.read_json`` with ``precise_float=True`` unless ``kw`` sets it.

        Args:
            *args: Passed to ``pandas.read_json``.
            **kw: Passed to ``pandas.read_json``.

        Returns:
            What ``pandas.read_json`` returns.
        """
        import pandas

        kw.setdefault("precise_float", True)
        return pandas.read_json(*args, **kw)


def _generator_run_to_sqa(self: Any, generator_run: Any, *args: Any, **kw: Any):
    _own_arms(generator_run)
    return _ORIGINALS["generator_run_to_sqa"](self, generator_run, *args, **kw)


# id(strategy) -> (weakref to it, (db_id, name, its nodes as JSON), number of its
# generator runs) at its last save
_STRATEGY_SAVED: dict[int, tuple[weakref.ref, tuple, int]] = {}


def _strategy_state(strategy: Any, encoder: Any) -> tuple:
    """What a save of ``strategy`` writes besides its generator runs and current
    node: its id, name and nodes (as Ax's encoder writes them)."""
    from ax.storage.json_store.encoder import object_to_json

    nodes = object_to_json(
        strategy._nodes,
        encoder_registry=encoder.config.json_encoder_registry,
        class_encoder_registry=encoder.config.json_class_encoder_registry,
    )
    return (strategy.db_id, strategy.name, json.dumps(nodes, sort_keys=True))


def _save_strategy(
    generation_strategy: Any, encoder: Any, decoder: Any, suppress_all_errors: bool
) -> None:
    """Ax's save of a generation strategy (which ``Client.get_next_trials`` calls
    after every generation) writes every generator run again: O(trials) a call.
    Where the strategy's last save in this process worked and only new generator
    runs (those after the ones it saved) and its current node have changed since,
    Ax's own update
    (``_update_generation_strategy``, the one its ``Orchestrator`` uses) writes just
    those; otherwise (a strategy loaded or not saved yet, other changes, a failed
    save) the full save."""
    from ax.storage.sqa_store import with_db_settings_base as base

    gs = generation_strategy
    runs = gs._generator_runs
    record = _STRATEGY_SAVED.pop(id(gs), None)  # back only after a save that worked
    try:
        state = _strategy_state(gs, encoder)
    except Exception:  # Ax's full save decides what to raise or suppress
        state = None
    saved = 0 if record is None else record[2]
    if (
        state is not None
        and record is not None
        and record[0]() is gs
        and gs.db_id is not None
        and gs._experiment is not None
        and record[1] == state
        and saved <= len(runs)
        and all(gr.db_id is not None for gr in runs[:saved])
    ):
        # the runs since the last save, whatever their db_id (a trial's save may
        # have written one already; Ax's update merges it and links it)
        base._update_generation_strategy_in_db_if_possible(
            generation_strategy=gs,
            new_generator_runs=runs[saved:],
            encoder=encoder,
            decoder=decoder,
            suppress_all_errors=suppress_all_errors,
        )
    else:
        _ORIGINALS["save_strategy"](
            generation_strategy=gs,
            encoder=encoder,
            decoder=decoder,
            suppress_all_errors=suppress_all_errors,
        )
        try:
            state = _strategy_state(gs, encoder)  # its db_id is set now
        except Exception:
            state = None
    if (
        state is not None
        and gs.db_id is not None
        and all(gr.db_id is not None for gr in runs)
    ):
        ref = weakref.ref(gs, _forget(_STRATEGY_SAVED, id(gs)))
        _STRATEGY_SAVED[id(gs)] = (ref, state, len(runs))
    # else a save that failed (errors suppressed): the full save next time


#: the storage methods of Ax's ``WithDBSettingsBase`` (the base of ``Client`` and
#: ``Orchestrator``) that :func:`install_sql_patches` runs on their own engine;
#: the first two only read
ROUTED_METHODS = (
    "_get_experiment_and_generation_strategy_db_id",
    "_load_experiment_and_generation_strategy",
    "_maybe_save_experiment_and_generation_strategy",
    "_save_experiment_to_db_if_possible",
    "_save_or_update_trials_and_generation_strategy_if_possible",
    "_save_or_update_trial_in_db_if_possible",
    "_save_or_update_trials_in_db_if_possible",
    "_save_generation_strategy_to_db_if_possible",
    "_update_generation_strategy_in_db_if_possible",
    "_update_runner_on_experiment_in_db_if_possible",
    "_update_experiment_properties_in_db",
    "_save_analysis_card_to_db_if_possible",
)
_READS = ROUTED_METHODS[:2]

#: ``(url, saving) -> context manager`` that puts Ax's process-wide session
#: factory on ``url``'s own for the block (set by :mod:`botorch_bandits.ax.sql`)
SESSION_ROUTER: Any = None
#: ``url -> None`` that raises where a save to ``url`` is refused (set by
#: :mod:`botorch_bandits.ax.sql`: a file :func:`close_storage` let go of)
SAVE_CHECK: Any = None


def _saving_client_methods() -> list[str]:
    """The public methods of ``ax.Client`` that save (their docstrings say
    "Saves to database"): checked before they change anything."""
    from ax import Client

    return sorted(
        name
        for name, fn in vars(Client).items()
        if not name.startswith("_")
        and callable(fn)
        and "Saves to database" in (fn.__doc__ or "")
    )


def _checked_first(method: Any) -> Any:
    """``method`` of ``ax.Client`` refused before it runs where its storage
    refuses saves (:data:`SAVE_CHECK`): Ax saves after the change, so a refusal
    at the save would leave a trial in memory that the file never gets."""

    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        config = getattr(self, "_storage_config", None)
        if SAVE_CHECK is not None and config is not None and config.url:
            SAVE_CHECK(config.url)
        return method(self, *args, **kwargs)

    checked.__wrapped__ = method
    checked.__name__ = method.__name__
    checked.__doc__ = method.__doc__
    return checked


def _on_own_engine(name: str, method: Any) -> Any:
    """``method`` run with Ax's session factory on the instance's own URL: Ax's
    save functions use one process-wide engine, which the latest binding moves,
    so a ``Client`` made with one file saved into the file bound last."""
    saving = name not in _READS

    def routed(self: Any, *args: Any, **kwargs: Any) -> Any:
        settings = getattr(self, "_db_settings", None)
        url = None if settings is None else settings.url
        if SESSION_ROUTER is None or settings is None:
            return method(self, *args, **kwargs)
        with SESSION_ROUTER(url, saving):
            return method(self, *args, **kwargs)

    routed.__wrapped__ = method
    routed.__name__ = method.__name__
    routed.__doc__ = method.__doc__
    return routed


def install_sql_patches() -> None:
    """Patch Ax's SQL store for the whole process (idempotent): microsecond
    timestamps on SQLite, exact data, and a row of its own for an arm saved with
    another generator run (see docs/design.md). Called by
    :func:`botorch_bandits.ax.sqlite_storage`, :func:`botorch_bandits.ax.load_client`
    and :func:`botorch_bandits.ax.run_trials` with storage; never on import. Also a
    generation strategy's save writes only its new generator runs where nothing
    else of it changed (:func:`_save_strategy`), and each storage method of
    ``WithDBSettingsBase`` (:data:`ROUTED_METHODS`) runs on its instance's own
    engine (:func:`_on_own_engine`)."""
    from ax.storage.sqa_store import decoder
    from ax.storage.sqa_store import with_db_settings_base as base
    from ax.storage.sqa_store.encoder import Encoder
    from ax.storage.sqa_store.timestamp import IntTimestamp

    if _ORIGINALS:
        return
    _ORIGINALS["bind"] = IntTimestamp.process_bind_param
    _ORIGINALS["generator_run_to_sqa"] = Encoder.generator_run_to_sqa
    _ORIGINALS["data_to_sqa"] = Encoder.data_to_sqa
    _ORIGINALS["decoder_pd"] = decoder.pd
    _ORIGINALS["save_strategy"] = base._save_generation_strategy_to_db_if_possible
    IntTimestamp.process_bind_param = _bind_precise
    Encoder.generator_run_to_sqa = _generator_run_to_sqa
    Encoder.data_to_sqa = _data_to_sqa
    decoder.pd = PrecisePandas()  # the decoder reads data with pd.read_json
    base._save_generation_strategy_to_db_if_possible = _save_strategy
    cls = base.WithDBSettingsBase
    for name in ROUTED_METHODS:
        _ORIGINALS[f"method:{name}"] = cls.__dict__[name]
        setattr(cls, name, _on_own_engine(name, cls.__dict__[name]))
    from ax import Client

    for name in _saving_client_methods():
        _ORIGINALS[f"client:{name}"] = vars(Client)[name]
        setattr(Client, name, _checked_first(vars(Client)[name]))


def uninstall_sql_patches() -> None:
    """Restore Ax's original functions (for tests and comparisons; the storage
    functions install the patches again when next called)."""
    if not _ORIGINALS:
        return
    from ax.storage.sqa_store import decoder
    from ax.storage.sqa_store import with_db_settings_base as base
    from ax.storage.sqa_store.encoder import Encoder
    from ax.storage.sqa_store.timestamp import IntTimestamp

    IntTimestamp.process_bind_param = _ORIGINALS.pop("bind")
    Encoder.generator_run_to_sqa = _ORIGINALS.pop("generator_run_to_sqa")
    Encoder.data_to_sqa = _ORIGINALS.pop("data_to_sqa")
    decoder.pd = _ORIGINALS.pop("decoder_pd")
    base._save_generation_strategy_to_db_if_possible = _ORIGINALS.pop("save_strategy")
    for name in ROUTED_METHODS:
        setattr(base.WithDBSettingsBase, name, _ORIGINALS.pop(f"method:{name}"))
    from ax import Client

    for key in [k for k in _ORIGINALS if k.startswith("client:")]:
        setattr(Client, key[len("client:") :], _ORIGINALS.pop(key))
    _ARM_OWNERS.clear()
    _STRATEGY_SAVED.clear()


def sql_patches_installed() -> bool:
    """Whether :func:`install_sql_patches` is in effect."""
    return bool(_ORIGINALS)


def sql_originals() -> dict[str, Any]:
    """Ax's own functions that the SQL patches replace, installed or not: keys
    ``"bind"``, ``"generator_run_to_sqa"``, ``"data_to_sqa"``, ``"decoder_pd"``,
    ``"save_strategy"``."""
    from ax.storage.sqa_store import decoder
    from ax.storage.sqa_store import with_db_settings_base as base
    from ax.storage.sqa_store.encoder import Encoder
    from ax.storage.sqa_store.timestamp import IntTimestamp

    if _ORIGINALS:
        return dict(_ORIGINALS)
    return {
        "bind": IntTimestamp.process_bind_param,
        "generator_run_to_sqa": Encoder.generator_run_to_sqa,
        "data_to_sqa": Encoder.data_to_sqa,
        "decoder_pd": decoder.pd,
        "save_strategy": base._save_generation_strategy_to_db_if_possible,
    }


# ---------------------------------------------------------------------- Ax client
def load_experiment_and_strategy(storage_config: Any, experiment_name: str) -> Any:
    """``(experiment, generation strategy or None)`` read from Ax's SQL store with
    Ax's own loader, without saving anything (``Client.load_from_database`` saves
    both on load).

    Args:
        storage_config: Ax's ``StorageConfig`` of the store.
        experiment_name: The stored experiment's name.

    Returns:
        The pair ``(experiment, generation strategy or None)``.
    """
    from ax.api.utils.storage import db_settings_from_storage_config
    from ax.storage.sqa_store.with_db_settings_base import WithDBSettingsBase

    settings = db_settings_from_storage_config(storage_config)
    loader = WithDBSettingsBase(db_settings=settings)
    return loader._load_experiment_and_generation_strategy(
        experiment_name=experiment_name
    )


def attach_to_client(client: Any, experiment: Any, strategy: Any) -> None:
    """Set a loaded experiment and strategy on an ``ax.Client`` without saving
    them (``set_experiment`` / ``set_generation_strategy`` save).

    Args:
        client: An ``ax.Client``.
        experiment: The loaded ``Experiment``.
        strategy: The loaded ``GenerationStrategy``, or ``None`` (left unset); its
            ``experiment`` is set to ``experiment``.
    """
    client._maybe_experiment = experiment
    if strategy is not None:
        client._maybe_generation_strategy = strategy
        strategy.experiment = experiment


def client_experiment(client: Any) -> Any:
    """The experiment of an ``ax.Client`` (raises if none is configured).

    Args:
        client: An ``ax.Client``.

    Returns:
        The client's ``Experiment``.
    """
    return client._experiment


def client_has_experiment(client: Any) -> bool:
    """Whether an ``ax.Client`` has an experiment configured (or loaded).

    Args:
        client: An ``ax.Client``.

    Returns:
        ``True`` where it has one.
    """
    return getattr(client, "_maybe_experiment", None) is not None


def client_generation_strategy(client: Any, choose: bool = False) -> Any:
    """The client's generation strategy: ``None`` if none is set, or, with
    ``choose=True``, the one ``Client.run_trials`` would use (chosen if unset).

    Args:
        client: An ``ax.Client``.
        choose: Whether to let Ax choose one where none is set (default ``False``).

    Returns:
        The ``GenerationStrategy``, or ``None``.
    """
    if choose:
        return client._generation_strategy_or_choose()
    return client._maybe_generation_strategy


def client_storage_config(client: Any) -> Any:
    """The ``StorageConfig`` an ``ax.Client`` was made with (or ``None``).

    Args:
        client: An ``ax.Client``.

    Returns:
        The ``StorageConfig``, or ``None``.
    """
    return client._storage_config


# ------------------------------------------------------------------------ Ax node
def generator_key(generator_run: Any) -> str | None:
    """The name of the generator (node) that made ``generator_run``.

    Args:
        generator_run: An Ax ``GeneratorRun``.

    Returns:
        Its generator key, or ``None``.
    """
    return generator_run._generator_key


def generation_node_name(generator_run: Any) -> str | None:
    """The name of the generation node that made ``generator_run`` (a node's
    fallback generator keeps the node's name: the key differs).

    Args:
        generator_run: An Ax ``GeneratorRun``.

    Returns:
        The node's name, or ``None``.
    """
    return generator_run._generation_node_name


def set_gen_metadata(generator_run: Any, metadata: dict[str, Any]) -> None:
    """Replace the metadata a ``GeneratorRun`` returns as ``gen_metadata`` (Ax has
    no setter; ``ExternalGenerationNode`` makes its runs without metadata).

    Args:
        generator_run: An Ax ``GeneratorRun``.
        metadata: The new metadata (stored as given, not copied).
    """
    generator_run._gen_metadata = metadata


def float_fit_time(node: Any, generator_run: Any) -> None:
    """Keep a generator run's fit time a float, as SQLite gives it back.

    Ax 1.3's ``ExternalGenerationNode._gen`` resets ``fit_time_since_gen`` to the
    int ``0`` after each generator run, so the second and later runs of one call
    carry ``fit_time=0`` (an int). SQLite returns ``0.0``, and Ax's ``copy_db_ids``
    refuses the save's copy as "two objects of different types": the arm never gets
    its db id and the next save moves its row to another generator run, so a batch
    trial loses its arm in the file. Here the node's counter and the run's fit time
    become floats (``GeneratorRun._fit_time``: Ax has no setter).

    Args:
        node: The ``ExternalGenerationNode`` that made ``generator_run``.
        generator_run: Its latest ``GeneratorRun``.
    """
    node.fit_time_since_gen = float(node.fit_time_since_gen)
    if isinstance(generator_run._fit_time, int):
        generator_run._fit_time = float(generator_run._fit_time)


def set_strict_rounding(transform: Any) -> None:
    """Make Ax's ``IntToFloat`` transform round to the nearest integer (Ax switches
    to randomized rounding when a constraint involves an integer).

    Args:
        transform: An Ax ``IntToFloat`` transform (changed in place).
    """
    transform.rounding = "strict"


# ------------------------------------------------------------------ BoTorch, torch
def dataset_field(
    training_data: SupervisedDataset | dict[Any, SupervisedDataset], fieldname: str
) -> Any:
    """``fieldname`` of a dataset, or of the first of a dict of datasets, which must
    all share it (BoTorch's private ``_get_dataset_field(..., first_only=True,
    assert_shared=True)``, written with public attributes only).

    Args:
        training_data: A ``SupervisedDataset``, or a dict of them.
        fieldname: The attribute to read (e.g. ``"feature_names"``).

    Returns:
        The field's value.

    Raises:
        AttributeError: If a dataset has no such field.
        ValueError: If the datasets of a dict do not share the value.
    """
    if isinstance(training_data, dict):
        base = None
        for dataset in training_data.values():
            if not hasattr(dataset, fieldname):
                raise AttributeError(
                    f"{type(dataset)} object has no field `{fieldname}`."
                )
            value = getattr(dataset, fieldname)
            if base is None:
                base = value
            elif isinstance(base, Tensor):
                if not torch.equal(base, value):
                    raise ValueError(f"Field `{fieldname}` must be shared.")
            elif base != value:
                raise ValueError(f"Field `{fieldname}` must be shared.")
        training_data = next(iter(training_data.values()))
    return getattr(training_data, fieldname)


def tensor_version(X: Tensor) -> int:
    """torch's in-place modification counter of ``X`` (``Tensor._version``): it
    changes whenever ``X`` is written in place.

    Args:
        X: Any tensor.

    Returns:
        The counter's current value.
    """
    return X._version
