"""The practical mode of the Ax strategy (issue 15): decisions that do not depend
on the objective's units, fits that never stop an experiment, acquisition
optimization over the search space itself, and the defaults a user gets -- all
through a real ``ax.Client``."""

from __future__ import annotations

import math
import warnings

import pytest

pytest.importorskip("ax")

from _ax_loop import run_in_flight  # tests/ helper
from ax import ChoiceParameterConfig, Client, RangeParameterConfig

from botorch_bandits.ax import BanditNode, CenterFirst, bandit_generation_strategy
from botorch_bandits.ax.reading import read_experiment
from botorch_bandits.ax.space import Space
from botorch_bandits.ax.storage import bandit_node_from_json
from botorch_bandits.hyperparameters import Hyperparameters


def _hartmann3(p: dict) -> float:
    """Hartmann3 (Dixon & Szego 1978), maximized form: max 3.86278."""
    alpha = [1.0, 1.2, 3.0, 3.2]
    A = [[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]]
    P = [
        [0.3689, 0.1170, 0.2673],
        [0.4699, 0.4387, 0.7470],
        [0.1091, 0.8732, 0.5547],
        [0.0381, 0.5743, 0.8828],
    ]
    x = [p["x0"], p["x1"], p["x2"]]
    return sum(
        a * math.exp(-sum(A[i][j] * (x[j] - P[i][j]) ** 2 for j in range(3)))
        for i, a in enumerate(alpha)
    )


def _client(minimize: bool = False, constraints=None, **kwargs) -> Client:
    client = Client(random_seed=0)
    client.configure_experiment(
        name="practical",
        parameters=[
            RangeParameterConfig(
                name=f"x{i}", bounds=(0.0, 1.0), parameter_type="float"
            )
            for i in range(3)
        ],
        parameter_constraints=constraints,
    )
    client.configure_optimization(objective="-f" if minimize else "f")
    client.set_generation_strategy(bandit_generation_strategy(**kwargs))
    return client


def _trajectory(scale: float, shift: float, minimize: bool, **kwargs) -> list[dict]:
    client = _client(minimize=minimize, **kwargs)
    sign = -1.0 if minimize else 1.0

    def data(p: dict, _i: int) -> dict:
        return {"f": scale * sign * _hartmann3(p) + shift}

    run_in_flight(client, 14, data, in_flight=2)
    trials = client._experiment.trials
    return [trials[i].arm.parameters for i in sorted(trials)]


@pytest.mark.parametrize(
    "algorithm, minimize",
    [
        # 12-18 s each: the default run keeps GP-TS through Ax (minimized), the
        # decision core's units test (test_core) and the Ax run with restarts on
        # f and 100 f + 100 (IGP-UCB)
        pytest.param("IGP-UCB", False, marks=pytest.mark.slow),
        ("GP-TS", True),
        pytest.param("GP-UCB", False, marks=pytest.mark.slow),
    ],
)
def test_decisions_do_not_depend_on_the_objective_units(algorithm, minimize) -> None:
    """Acceptance 1: the same trials, bit for bit, when the objective is multiplied
    by 100 and shifted by 100 (two trials in flight: batches and hallucinated
    pending trials included). Before the standardized targets were rounded to a grid,
    a rounding error of 1e-16 had become a different trial by trial 16."""
    plain = _trajectory(1.0, 0.0, minimize, algorithm=algorithm)
    scaled = _trajectory(100.0, 100.0, minimize, algorithm=algorithm)
    assert plain == scaled
    assert len({tuple(p.values()) for p in plain}) > 10  # it does explore


def test_theory_mode_depends_on_the_units_as_its_B_and_R_say() -> None:
    """The contrast: with a fixed kernel, B and R the objective's scale is part of
    the problem statement, so the theory mode's trials change with it."""
    plain = _trajectory(1.0, 0.0, False, mode="theory")
    scaled = _trajectory(100.0, 100.0, False, mode="theory")
    assert plain != scaled


def test_a_failed_fit_falls_back_to_the_last_good_hyperparameters(monkeypatch) -> None:
    """A fit that raises (BoTorch's ``ModelFittingError: All attempts to fit the
    model have failed.``, as measured on main) no longer stops the experiment: the
    decision uses the last recorded fit, warns, and records the fallback."""
    from botorch.exceptions.errors import ModelFittingError

    client = _client()

    def data(p: dict, _i: int) -> dict:
        return {"f": _hartmann3(p)}

    run_in_flight(client, 8, data, in_flight=1)
    trials = client._experiment.trials
    last = trials[max(trials)].generator_runs[0].gen_metadata["fit"]
    assert last["status"] == "fitted"

    def fail(*args, **kwargs):
        raise ModelFittingError("All attempts to fit the model have failed.")

    monkeypatch.setattr("botorch_bandits.models.practical.fit_gpytorch_mll", fail)
    with pytest.warns(UserWarning, match="GP fit on 8 trials failed"):
        new = client.get_next_trials(max_trials=1)
    (index,) = new
    fit = client._experiment.trials[index].generator_runs[0].gen_metadata["fit"]
    assert fit["status"] == "fallback"
    assert "All attempts to fit the model have failed" in fit["reason"]
    for key in ("lengthscale", "noise", "mean"):
        assert fit[key] == last[key]
    # and once fitting works again, the experiment goes on with fresh fits
    monkeypatch.undo()
    client.complete_trial(trial_index=index, raw_data=data(new[index], index))
    (index,) = client.get_next_trials(max_trials=1)
    fit = client._experiment.trials[index].generator_runs[0].gen_metadata["fit"]
    assert fit["status"] == "fitted"


def test_the_fit_is_warm_started_from_the_recorded_fit() -> None:
    """The node keeps no state between calls: the warm start is read from the
    previous trial's metadata, so a reloaded experiment starts from the same
    point (the reload tests check the whole decision)."""
    client = _client()

    def data(p: dict, _i: int) -> dict:
        return {"f": _hartmann3(p)}

    run_in_flight(client, 9, data, in_flight=1)
    node = client._generation_strategy._curr
    assert isinstance(node, BanditNode)
    trials = client._experiment.trials
    recorded = trials[max(trials)].generator_runs[0].gen_metadata["fit"]
    experiment = client._experiment
    history = read_experiment(
        experiment, experiment.lookup_data(), Space(experiment.search_space), False
    )
    assert history.warm == Hyperparameters.from_dict(recorded)
    assert history.warm.as_dict() == {
        k: recorded[k] for k in ("lengthscale", "noise", "mean")
    }


def test_a_cached_read_is_the_full_read(monkeypatch) -> None:
    """The node reads settled trials once (issue 30): with the cache kept between
    calls the history equals a fresh read, after new trials, a completion, a
    failure and a trial whose value arrives late; running trials are never kept."""
    client = _client()

    def data(p: dict, _i: int) -> dict:
        return {"f": _hartmann3(p)}

    run_in_flight(client, 8, data, in_flight=2)
    experiment = client._experiment
    space = Space(experiment.search_space)
    cache: dict = {}

    def check() -> set[int]:
        for _ in range(2):  # filling the cache, then reading from it
            kept = read_experiment(
                experiment, experiment.lookup_data(), space, False, cache
            )
            fresh = read_experiment(experiment, experiment.lookup_data(), space, False)
            assert kept == fresh
        running = {i for i, t in experiment.trials.items() if not t.status.is_terminal}
        assert not running & set(cache["trials"])
        return running

    check()
    new = client.get_next_trials(max_trials=2)
    first, second = sorted(new)
    assert check() == {first, second}
    client.mark_trial_failed(trial_index=first)
    assert check() == {second}
    client.complete_trial(trial_index=second, raw_data=data(new[second], second))
    (third,) = client.get_next_trials(max_trials=1)
    assert check() == {third}
    assert {first, second} <= set(cache["trials"])
    # the cache is used: a read with nothing new reads only the running trial
    import botorch_bandits.ax.reading as reading

    calls = []
    real = reading._read_trial

    def counting(t, *args):
        calls.append(t.index)
        return real(t, *args)

    monkeypatch.setattr(reading, "_read_trial", counting)
    read_experiment(experiment, experiment.lookup_data(), space, False, cache)
    assert calls == [third]
    # a settled trial whose value changed is read again, and the read is the fresh one
    from ax.core.data import Data

    df = experiment.lookup_data().df
    row = df[df["trial_index"] == second].copy()
    row["mean"] = row["mean"] + 1.0
    experiment.attach_data(Data(df=row))
    calls.clear()
    kept = read_experiment(experiment, experiment.lookup_data(), space, False, cache)
    assert sorted(calls) == [second, third]
    fresh = read_experiment(experiment, experiment.lookup_data(), space, False)
    assert kept == fresh
    # another space (or objective, or constraints) starts the cache again
    other = Space(experiment.search_space, key="another")
    read_experiment(experiment, experiment.lookup_data(), other, False, cache)
    assert cache["key"][0] == "another" and third not in cache["trials"]
    # and so does another experiment (a copy: the same space and trials)
    import copy

    twin = copy.deepcopy(experiment)
    read_experiment(twin, twin.lookup_data(), other, False, cache)
    assert cache["experiment"]() is twin


def test_gradient_optimizer_searches_the_space_and_keeps_its_rules() -> None:
    """Continuous coordinates are optimized off the decision set (L-BFGS-B), with
    the linear parameter constraint, a log-scale parameter, an integer and a choice
    kept exactly; the call's fixed parameters are honoured."""
    client = Client(random_seed=0)
    client.configure_experiment(
        name="mixed",
        parameters=[
            RangeParameterConfig(name="x", bounds=(0.0, 1.0), parameter_type="float"),
            RangeParameterConfig(name="y", bounds=(0.0, 1.0), parameter_type="float"),
            RangeParameterConfig(
                name="lr", bounds=(1e-4, 1.0), parameter_type="float", scaling="log"
            ),
            RangeParameterConfig(name="n", bounds=(0, 4), parameter_type="int"),
            ChoiceParameterConfig(
                name="c", values=["a", "b", "c"], parameter_type="str", is_ordered=False
            ),
        ],
        parameter_constraints=["x + y <= 0.8"],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(bandit_generation_strategy(num_candidates=64))

    def f(p: dict) -> float:
        return (
            -((p["x"] - 0.6) ** 2)
            - (p["y"] - 0.4) ** 2
            - 0.1 * (math.log10(p["lr"]) + 2.0) ** 2
            - 0.05 * (p["n"] - 3) ** 2
            + {"a": 0.0, "b": 0.3, "c": 0.1}[p["c"]]
        )

    run_in_flight(client, 20, lambda p, _i: {"f": f(p)}, in_flight=2)
    fixed = client.get_next_trials(max_trials=2, fixed_parameters={"c": "a", "n": 1})
    for index, p in fixed.items():
        assert p["c"] == "a" and p["n"] == 1
        client.complete_trial(trial_index=index, raw_data={"f": f(p)})
    exp = client._experiment
    node = client._generation_strategy._curr
    decision_set = {tuple(sorted(p.items())) for p in node.decision_set(exp).params}
    off_set = 0
    for t in exp.trials.values():
        p = t.arm.parameters
        assert exp.search_space.check_membership(p, raise_error=False)
        assert p["x"] + p["y"] <= 0.8 + 1e-9
        assert isinstance(p["n"], int) and p["c"] in ("a", "b", "c")
        assert 1e-4 <= p["lr"] <= 1.0
        meta = t.generator_runs[0].gen_metadata or {}
        if meta.get("optimizer") == "L-BFGS-B":
            off_set += tuple(sorted(p.items())) not in decision_set
    assert off_set >= 5  # the optimizer, not the finite set, made the decisions
    # and the decisions improve on the initialization's best
    init = [t for t in exp.trials.values() if not t.generator_runs[0].gen_metadata]
    best_init = max(f(t.arm.parameters) for t in init)
    assert max(f(t.arm.parameters) for t in exp.trials.values()) > best_init


def test_defaults_are_the_practical_mode() -> None:
    """A user who passes nothing gets the practical mode (docs/ax.md, "Why the practical mode is the default")."""
    gs = bandit_generation_strategy()
    center, sobol, node = gs._nodes
    assert isinstance(center, CenterFirst) and center.num_init == 5  # the box's centre
    assert isinstance(node, BanditNode)
    assert node.mode == "practical"
    assert node.hyperparameters == "fitted"
    assert node.optimizer == "gradient"
    assert node.pending == "hallucinate"
    assert node.R is None and node.B == 0.25  # chosen on the development half
    assert node.trust_region is True and node.fit_start == "warm"  # issue 51
    # 5 initial trials in all, counted over the experiment's trials (the centre's
    # and any attached before, as Ax's default counts them)
    assert sobol.transition_criteria[0].threshold == 5
    assert sobol.transition_criteria[0].use_all_trials_in_exp is True
    assert center.use_existing_trials_for_initialization is True
    theory = bandit_generation_strategy(mode="theory")._nodes[1]
    assert theory.B == 1.0
    assert (theory.kernel, theory.lengthscale, theory.noise, theory.R) == (
        "matern52",
        0.2,
        0.01,
        0.1,
    )
    assert (theory.pending, theory.optimizer, theory.hyperparameters) == (
        "ignore",
        "finite",
        "fixed",
    )


@pytest.mark.parametrize(
    "kwargs, named",
    [
        (dict(lengthscale=0.2), "lengthscale=0.2"),
        (dict(noise=0.01), "noise=0.01"),
        (dict(kernel="rbf"), "kernel='rbf'"),
        (dict(hyperparameters="fixed"), "hyperparameters='fixed'"),
        (dict(mode="bayes"), "mode"),
        (dict(optimizer="adam"), "optimizer"),
    ],
)
def test_theory_settings_are_refused_in_the_practical_mode(kwargs, named) -> None:
    with pytest.raises(ValueError, match=named.replace("(", r"\(")):
        bandit_generation_strategy(**kwargs)


def test_a_node_saved_before_the_modes_loads_in_the_theory_mode() -> None:
    """Databases written before the practical mode store no ``mode``: their nodes
    were theory-mode nodes and must decide as before."""
    saved = BanditNode(mode="theory").options()
    del saved["mode"], saved["optimizer"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        node = bandit_node_from_json(**saved)
    assert node.mode == "theory" and node.optimizer == "finite"
    assert node.options() == BanditNode(mode="theory").options()


def test_a_node_saved_with_the_old_restart_option_names_loads() -> None:
    """Databases written before issue 27 store ``cpd_c`` / ``cpd_C``: they load, with
    no warning (the spelling is the file's, not the user's), as the renamed options
    ``cpd_regularization`` / ``cpd_threshold_scale``, and save under the new names."""
    saved = BanditNode(mode="theory", restarts=True).options()
    saved["cpd_c"] = saved.pop("cpd_regularization")
    saved["cpd_C"] = saved.pop("cpd_threshold_scale")
    saved["cpd_c"], saved["cpd_C"] = 7.0, 0.9
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        node = bandit_node_from_json(**saved)
    assert node.cpd_regularization == 7.0 and node.cpd_threshold_scale == 0.9
    assert node.decision_options.restarts.regularization == 7.0
    assert (
        "cpd_c" not in node.options() and node.options()["cpd_threshold_scale"] == 0.9
    )


def test_equality_parameter_constraints_are_refused_by_name() -> None:
    """Ax's core API allows ``w^T x == b``; the decision set (rejection sampling)
    would be empty, so the node says why instead of 'no point satisfies'."""
    from ax.core.parameter import ParameterType, RangeParameter
    from ax.core.parameter_constraint import ParameterConstraint
    from ax.core.search_space import SearchSpace

    from botorch_bandits.ax.space import Space

    space = SearchSpace(
        [RangeParameter(n, ParameterType.FLOAT, 0.0, 1.0) for n in ("a", "b")],
        parameter_constraints=[ParameterConstraint(equality="a + b == 1")],
    )
    with pytest.raises(ValueError, match="equality constraint"):
        Space(space)
