"""Every private or undocumented detail of Ax, BoTorch and torch that
``botorch_bandits.upstream`` relies on is still what it expects: one test per touch
point, failing with the upstream name and the installed version when an upgrade
changes it."""

from __future__ import annotations

import importlib.metadata
import inspect
import math

import pytest
import torch
from botorch.utils.datasets import SupervisedDataset

from botorch_bandits import upstream


def _changed(package: str, what: str, detail: str) -> str:
    version = importlib.metadata.version(package)
    return (
        f"{package} {version} changed {what}, which botorch_bandits.upstream relies "
        f"on: {detail}. Adapt botorch_bandits/upstream.py (and its docstring)."
    )


def _parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


# ----------------------------------------------------------------------- torch
def test_tensor_version_counts_in_place_writes():
    X = torch.zeros(3)
    before = upstream.tensor_version(X)
    X.add_(1.0)
    assert isinstance(before, int) and upstream.tensor_version(X) > before, _changed(
        "torch", "Tensor._version", "it must grow with every in-place write"
    )


# --------------------------------------------------------------------- BoTorch
def test_dataset_field_matches_botorch():
    X = torch.rand(4, 2)
    a = SupervisedDataset(
        X, torch.rand(4, 1), feature_names=["a", "b"], outcome_names=["y"]
    )
    b = SupervisedDataset(
        X, torch.rand(4, 1), feature_names=["a", "b"], outcome_names=["z"]
    )
    c = SupervisedDataset(
        torch.rand(4, 2),
        torch.rand(4, 1),
        feature_names=["a", "b"],
        outcome_names=["w"],
    )
    assert upstream.dataset_field(a, "X") is X
    assert upstream.dataset_field({"y": a, "z": b}, "X") is X
    with pytest.raises(ValueError, match="Field `X` must be shared"):
        upstream.dataset_field({"y": a, "w": c}, "X")
    # while BoTorch still has the private function this replaces, both agree
    module = pytest.importorskip("botorch.acquisition.input_constructors")
    private = getattr(module, "_get_dataset_field", None)
    if private is None:
        pytest.skip("BoTorch no longer has _get_dataset_field: nothing to compare")
    for data in (a, {"y": a, "z": b}):
        assert private(data, "X", first_only=True, assert_shared=True) is (
            upstream.dataset_field(data, "X")
        )


def test_no_acquisition_overrides_a_private_botorch_method():
    from botorch.acquisition.analytic import AnalyticAcquisitionFunction

    import botorch_bandits.acquisition as acquisition

    for name in acquisition.__all__:
        cls = getattr(acquisition, name)
        if isinstance(cls, type):
            for klass in cls.__mro__:
                if klass.__module__.startswith("botorch_bandits"):
                    assert "_mean_and_sigma" not in vars(klass), klass
    assert hasattr(AnalyticAcquisitionFunction, "_mean_and_sigma")


# -------------------------------------------------------------------- Ax SQL
@pytest.fixture
def sql_store():
    """Ax with its SQL store; the patches installed, as the storage functions do."""
    pytest.importorskip("ax")
    pytest.importorskip("sqlalchemy")
    upstream.install_sql_patches()
    return upstream.sql_originals()


def test_int_timestamp_bind_is_what_the_timestamp_patch_replaces(sql_store):
    import datetime

    from ax.storage.sqa_store.timestamp import IntTimestamp

    bind = sql_store["bind"]
    assert _parameters(bind) == ["self", "value", "dialect"], _changed(
        "ax-platform", "IntTimestamp.process_bind_param", "(self, value, dialect)"
    )
    value = datetime.datetime(2024, 1, 2, 3, 4, 5, 678901)

    class SQLite:
        name = "sqlite"

    stored = bind(IntTimestamp(), value, SQLite())
    assert stored == int(value.timestamp()), _changed(
        "ax-platform",
        "IntTimestamp.process_bind_param",
        f"it stored {stored!r}, no longer whole seconds: the patch may be obsolete",
    )
    patched = IntTimestamp().process_bind_param(value, SQLite())
    assert patched == value.timestamp()


def test_encoder_methods_the_patches_wrap(sql_store):
    gr_to_sqa = sql_store["generator_run_to_sqa"]
    data_to_sqa = sql_store["data_to_sqa"]
    assert _parameters(gr_to_sqa)[:2] == ["self", "generator_run"], _changed(
        "ax-platform", "Encoder.generator_run_to_sqa", "(self, generator_run, ...)"
    )
    assert _parameters(data_to_sqa)[:2] == ["self", "data"], _changed(
        "ax-platform", "Encoder.data_to_sqa", "(self, data, ...)"
    )
    source = inspect.getsource(data_to_sqa)
    assert "data_json" in source and "to_json" in source, _changed(
        "ax-platform",
        "Encoder.data_to_sqa",
        "writes data.full_df.to_json() to data_json",
    )


def test_generator_run_arm_weight_table(sql_store):
    from ax.core.arm import Arm
    from ax.core.generator_run import ArmWeight, GeneratorRun

    arm = Arm(parameters={"x": 0.5})
    gr = GeneratorRun(arms=[arm], weights=[2.0])
    table = getattr(gr, "_arm_weight_table", None)
    assert isinstance(table, dict) and list(table) == [arm.signature], _changed(
        "ax-platform",
        "GeneratorRun._arm_weight_table",
        "a dict from arm signature to ArmWeight",
    )
    assert table[arm.signature] == ArmWeight(arm=arm, weight=2.0)
    table[arm.signature] = ArmWeight(arm=arm.clone(), weight=2.0)
    assert gr.arms[0] is not arm and gr.arms[0].parameters == arm.parameters, _changed(
        "ax-platform", "GeneratorRun.arms", "read from _arm_weight_table"
    )


def test_the_strategy_save_the_patch_replaces(sql_store):
    """What :func:`upstream._save_strategy` relies on: Ax's module function that
    ``WithDBSettingsBase`` calls to save a strategy, the update Ax's Orchestrator
    uses, and a full save writing exactly the name, nodes, current node and runs."""
    from ax.storage.sqa_store import encoder, with_db_settings_base

    save = sql_store["save_strategy"]
    keywords = ["generation_strategy", "encoder", "decoder", "suppress_all_errors"]
    assert _parameters(save) == keywords, _changed(
        "ax-platform", "_save_generation_strategy_to_db_if_possible", str(keywords)
    )
    update = with_db_settings_base._update_generation_strategy_in_db_if_possible
    assert _parameters(update)[:4] == [
        "generation_strategy",
        "new_generator_runs",
        "encoder",
        "decoder",
    ], _changed("ax-platform", "_update_generation_strategy_in_db_if_possible", "")
    method = inspect.getsource(with_db_settings_base.WithDBSettingsBase)
    assert "_save_generation_strategy_to_db_if_possible(\n" in method, _changed(
        "ax-platform", "WithDBSettingsBase", "calls the module's save function"
    )
    source = inspect.getsource(encoder.Encoder.generation_strategy_to_sqa)
    for field in ("name=", "nodes=", "curr_node_name=", "generator_runs="):
        assert field in source, _changed(
            "ax-platform", "Encoder.generation_strategy_to_sqa", f"writes {field}"
        )
    assert "steps=[]" in source, _changed(
        "ax-platform", "Encoder.generation_strategy_to_sqa", "steps are not stored"
    )


def test_decoder_reads_data_with_its_module_pd(sql_store):
    import io

    import pandas
    from ax.storage.sqa_store import decoder

    assert sql_store["decoder_pd"] is pandas, _changed(
        "ax-platform",
        "ax.storage.sqa_store.decoder.pd",
        "the module imports pandas as pd",
    )
    assert "pd.read_json(" in inspect.getsource(decoder), _changed(
        "ax-platform", "the SQL decoder", "it reads data with pd.read_json"
    )
    assert isinstance(decoder.pd, upstream.PrecisePandas)
    exact = '{"mean":{"0":' + repr(0.1 + 0.2) + ',"1":' + repr(math.pi / 3) + "}}"
    back = decoder.pd.read_json(io.StringIO(exact), dtype=False)
    assert back["mean"].tolist() == [0.1 + 0.2, math.pi / 3]


def test_sql_engine_global(sql_store):
    from ax.storage.sqa_store import db

    for name in (
        "SESSION_FACTORY",
        "init_engine_and_session_factory",
        "get_engine",
        "create_all_tables",
        "session_scope",
    ):
        assert hasattr(db, name), _changed(
            "ax-platform", f"ax.storage.sqa_store.db.{name}", "used by ax/sql.py"
        )
    assert "force_init" in _parameters(db.init_engine_and_session_factory)


# ------------------------------------------------------------------- Ax client
def test_loader_and_client_attributes(sql_store, tmp_path):
    from ax import Client, RangeParameterConfig
    from ax.storage.sqa_store.with_db_settings_base import WithDBSettingsBase

    from botorch_bandits.ax import sql

    load = getattr(WithDBSettingsBase, "_load_experiment_and_generation_strategy", None)
    assert load is not None and "experiment_name" in _parameters(load), _changed(
        "ax-platform",
        "WithDBSettingsBase._load_experiment_and_generation_strategy",
        "(self, experiment_name, ...) -> (experiment, strategy)",
    )
    storage = sql.sqlite_storage(tmp_path / "exp.db")
    client = Client(storage_config=storage, random_seed=0)
    assert upstream.client_storage_config(client) is storage, _changed(
        "ax-platform", "Client._storage_config", "the StorageConfig given"
    )
    assert upstream.client_generation_strategy(client) is None, _changed(
        "ax-platform", "Client._maybe_generation_strategy", "None until one is set"
    )
    client.configure_experiment(
        name="touch", parameters=[RangeParameterConfig("x", (0.0, 1.0), "float")]
    )
    client.configure_optimization(objective="f")
    experiment = upstream.client_experiment(client)
    assert experiment.name == "touch", _changed(
        "ax-platform", "Client._experiment", "the configured experiment"
    )
    chosen = upstream.client_generation_strategy(client, choose=True)
    assert chosen is upstream.client_generation_strategy(client), _changed(
        "ax-platform",
        "Client._generation_strategy_or_choose",
        "chooses and sets the strategy Client.run_trials uses",
    )
    loaded, strategy = upstream.load_experiment_and_strategy(storage, "touch")
    other = Client(storage_config=storage)
    upstream.attach_to_client(other, loaded, strategy)
    assert upstream.client_experiment(other) is loaded, _changed(
        "ax-platform", "Client._maybe_experiment", "read by Client._experiment"
    )
    assert upstream.client_generation_strategy(other) is strategy
    assert strategy is None or strategy.experiment is loaded


# --------------------------------------------------------------------- Ax node
def test_external_generation_node_gen_signature(sql_store):
    from ax.generation_strategy.external_generation_node import (
        ExternalGenerationNode,
    )

    assert _parameters(ExternalGenerationNode._gen) == [
        "self",
        "experiment",
        "data",
        "n",
        "pending_observations",
        "generator_gen_kwargs",
    ], _changed(
        "ax-platform",
        "ExternalGenerationNode._gen",
        "(self, experiment, data, n, pending_observations, **kwargs), overridden by "
        "BanditNode",
    )


def test_external_generation_node_fit_time(sql_store):
    """The batch-save workaround (``upstream.float_fit_time``): Ax's node keeps its
    fit time in ``fit_time_since_gen`` and a run's in ``GeneratorRun._fit_time``,
    and resets the former to an int after a run (the defect it works around)."""
    import inspect as _inspect

    from ax.core.arm import Arm
    from ax.core.generator_run import GeneratorRun
    from ax.generation_strategy.external_generation_node import (
        ExternalGenerationNode,
    )

    source = _inspect.getsource(ExternalGenerationNode._gen)
    assert "self.fit_time_since_gen = 0\n" in source, _changed(
        "ax-platform",
        "ExternalGenerationNode._gen",
        "it no longer resets fit_time_since_gen to the int 0 (the cause of the "
        "lost batch arms, issue 46): check tests/test_ax_sqlite.py's "
        "test_without_the_workaround_ax_loses_batch_arms; the workaround may go",
    )
    gr = GeneratorRun(arms=[Arm(parameters={"x": 0.5})], fit_time=0)
    assert gr._fit_time == 0 and isinstance(gr._fit_time, int), _changed(
        "ax-platform", "GeneratorRun._fit_time", "the fit_time given, as given"
    )

    class Node:
        fit_time_since_gen = 0

    node = Node()
    upstream.float_fit_time(node, gr)
    assert isinstance(node.fit_time_since_gen, float)
    assert isinstance(gr.fit_time, float) and gr.fit_time == 0.0, _changed(
        "ax-platform", "GeneratorRun.fit_time", "returns _fit_time"
    )


def test_generator_run_key_and_metadata(sql_store):
    from ax.core.arm import Arm
    from ax.core.generator_run import GeneratorRun

    gr = GeneratorRun(arms=[Arm(parameters={"x": 0.5})], generator_key="bandit")
    assert upstream.generator_key(gr) == "bandit", _changed(
        "ax-platform", "GeneratorRun._generator_key", "the generator_key given"
    )
    assert gr.gen_metadata is None
    meta = {"beta": 1.5}
    upstream.set_gen_metadata(gr, meta)
    assert gr.gen_metadata == meta, _changed(
        "ax-platform", "GeneratorRun._gen_metadata", "returned by gen_metadata"
    )
    assert gr.clone().gen_metadata == meta, _changed(
        "ax-platform", "GeneratorRun.clone", "copies _gen_metadata"
    )


def test_int_to_float_rounding(sql_store):
    from ax.adapter.transforms.int_to_float import IntToFloat
    from ax.core.observation import ObservationFeatures
    from ax.core.parameter import ParameterType, RangeParameter
    from ax.core.parameter_constraint import ParameterConstraint
    from ax.core.search_space import SearchSpace

    space = SearchSpace(
        parameters=[
            RangeParameter("k", ParameterType.INT, 0, 10),
            RangeParameter("x", ParameterType.FLOAT, 0.0, 10.0),
        ],
        parameter_constraints=[ParameterConstraint(inequality="k + x <= 12")],
    )
    t = IntToFloat(search_space=space)
    assert getattr(t, "rounding", None) == "randomized", _changed(
        "ax-platform",
        "IntToFloat.rounding",
        "'randomized' when a constraint involves an integer",
    )
    upstream.set_strict_rounding(t)
    (obs,) = t.untransform_observation_features(
        [ObservationFeatures(parameters={"k": 2.6, "x": 1.0})]
    )
    assert obs.parameters["k"] == 3, _changed(
        "ax-platform", "IntToFloat.rounding", "'strict' rounds to the nearest integer"
    )


def test_runner_registry_decodes_to_the_last_class_registered(sql_store):
    from ax.core.map_metric import MapMetric
    from ax.storage.sqa_store.sqa_config import SQAConfig

    from botorch_bandits.ax.runner import SQL_RUNNER_TYPE, DetachedExecutorRunner

    config = SQAConfig()
    assert config.reverse_runner_registry[SQL_RUNNER_TYPE] is (
        DetachedExecutorRunner
    ), _changed(
        "ax-platform",
        "SQAConfig.reverse_runner_registry",
        "a type decodes to the last class registered with it",
    )
    map_type = config.metric_registry[MapMetric]
    assert config.reverse_metric_registry[map_type] is MapMetric


def test_copy_db_ids_exists(sql_store):
    from ax.storage.sqa_store import utils

    assert _parameters(utils.copy_db_ids)[:2] == ["source", "target"], _changed(
        "ax-platform",
        "ax.storage.sqa_store.utils.copy_db_ids",
        "walks the decoded runner's attributes on the saved one "
        "(DetachedExecutorRunner relies on it)",
    )


def test_every_storage_method_of_ax_runs_on_its_own_engine(sql_store):
    """The storage functions route each of ``WithDBSettingsBase``'s storage methods
    to the instance's own file (several files in one process): a storage method
    Ax adds is one the routing misses, so the list is pinned to the class."""
    from ax import Client
    from ax.storage.sqa_store.with_db_settings_base import WithDBSettingsBase

    own = {
        name
        for name, value in vars(WithDBSettingsBase).items()
        if callable(value) and not name.startswith("__")
    }
    plain = {"_get_default_db_settings"}  # no database access
    assert own - plain == set(upstream.ROUTED_METHODS), _changed(
        "ax-platform",
        "WithDBSettingsBase's storage methods",
        f"{sorted(own - plain)} (routed: {sorted(upstream.ROUTED_METHODS)})",
    )
    for name in upstream.ROUTED_METHODS:
        assert (
            getattr(WithDBSettingsBase, name).__module__ == "botorch_bandits.upstream"
        )
    saving = upstream._saving_client_methods()
    assert {"get_next_trials", "complete_trial", "attach_data"} <= set(saving), (
        _changed("ax-platform", "Client's docstrings", "'Saves to database'")
    )
    assert all(getattr(Client, name).__wrapped__ for name in saving)
