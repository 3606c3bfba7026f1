"""Ax's own tools on a bandit experiment: ``Client.compute_analyses()`` gives at
least the cards it gives for Ax's default strategy on the same problem, with no
analysis failing and no ERROR beyond those Ax logs for its own default (its
early-stopping replay's "Data to attach is empty"); ``Client.predict`` works; the
strategy's own card tells the decisions' story; the analyses' fit draws nothing
from torch's global generator."""

from __future__ import annotations

import logging
import math

import pytest

pytest.importorskip("ax")

import torch
from ax import Client, RangeParameterConfig
from ax.core.analysis_card import AnalysisCardGroup, ErrorAnalysisCard

from botorch_bandits.ax import bandit_generation_strategy, decision_table
from botorch_bandits.ax.analyses import BanditDecisionsAnalysis
from botorch_bandits.upstream import client_experiment

TRIALS = 10


def _evaluate(index: int, p: dict) -> dict:
    sign = 1 if index < 6 else -1  # the objective turns over at trial 6
    return {
        "f": sign * math.sin(3 * p["x1"]) * math.cos(2 * p["x2"]),
        "cost": p["x1"],
    }


def _loop(strategy, constrained: bool) -> Client:
    client = Client(random_seed=0)
    client.configure_experiment(
        name="analyses",
        parameters=[
            RangeParameterConfig(name=n, bounds=(0.0, 1.0), parameter_type="float")
            for n in ("x1", "x2")
        ],
    )
    client.configure_optimization(
        objective="f", outcome_constraints=["cost <= 0.4"] if constrained else None
    )
    if strategy is not None:
        client.set_generation_strategy(strategy)
    running = []  # two in flight, the oldest completes first
    for _ in range(TRIALS):
        ((index, p),) = client.get_next_trials(max_trials=1).items()
        running.append((index, p))
        if len(running) == 2:
            done, q = running.pop(0)
            client.complete_trial(trial_index=done, raw_data=_evaluate(done, q))
    for done, q in running:
        client.complete_trial(trial_index=done, raw_data=_evaluate(done, q))
    return client


def _cards(card, out: list) -> list:
    if isinstance(card, AnalysisCardGroup):
        for child in card.children:
            _cards(child, out)
    else:
        out.append(card)
    return out


def _analyses(client: Client, caplog) -> tuple[set, list, list[str]]:
    """The cards' (class, name, title) set, the error cards and the ERROR lines."""
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        cards = _cards(client.compute_analyses(display=False)[0], [])
    errors = [
        r.getMessage().split(" while ")[0]
        for r in caplog.records
        if r.levelno >= logging.ERROR
    ]
    kinds = {(type(c).__name__, c.name, c.title.split(" (R")[0]) for c in cards}
    return kinds, [c for c in cards if isinstance(c, ErrorAnalysisCard)], errors


#: the bandit strategies the default run checks (one loop with restarts, a budget
#: and censoring) and the ones -m slow checks apart
COMBINED = dict(restarts=True, long_term_constraints=True, pending="censor", y_min=-1.0)
APART = {
    "plain": (dict(), False),
    "restarts": (dict(restarts=True), False),
    "budget": (dict(long_term_constraints=True), True),
    "censoring": (dict(pending="censor", y_min=-1.0), False),
}


class _Records(logging.Handler):
    """The log records of a block (``caplog`` is function-scoped)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def ax_default_cards():
    """Ax's default strategy's cards and ERROR lines on the problem (with or
    without the constraint), each computed once, when first asked."""
    done: dict[bool, tuple] = {}

    def cards(constrained: bool) -> tuple:
        if constrained not in done:
            log = _Records()
            logging.getLogger().addHandler(log)
            try:
                client = _loop(None, constrained)
                found = _cards(client.compute_analyses(display=False)[0], [])
            finally:
                logging.getLogger().removeHandler(log)
            errors = [
                r.getMessage().split(" while ")[0]
                for r in log.records
                if r.levelno >= logging.ERROR
            ]
            kinds = {(type(c).__name__, c.name, c.title.split(" (R")[0]) for c in found}
            done[constrained] = (kinds, errors)
        return done[constrained]

    return cards


def _check(client: Client, constrained: bool, ax_default_cards, caplog) -> list:
    kinds, error_cards, errors = _analyses(client, caplog)
    want, ax_errors = ax_default_cards(constrained)
    assert error_cards == [], [c.title for c in error_cards]
    missing = want - kinds
    assert not missing, missing
    assert {"ArmEffectsPlot", "CrossValidationPlot", "SlicePlot"} <= {
        name for _, name, _ in kinds
    }
    # no ERROR but Ax's own, which it logs alike for its default strategy
    assert set(errors) <= set(ax_errors), errors
    return errors


def test_ax_analyses_on_a_bandit_experiment_give_ax_defaults_cards(
    ax_default_cards, caplog
) -> None:
    client = _loop(bandit_generation_strategy(num_candidates=128, **COMBINED), True)
    _check(client, True, ax_default_cards, caplog)
    # the model Ax's tools read predicts like any Ax adapter
    mean, sem = client.predict(points=[{"x1": 0.2, "x2": 0.5}])[0]["f"]
    assert math.isfinite(mean) and sem > 0
    # the strategy's own card: a panel each for the objective and its restarts,
    # the multipliers, the budget's running average and the censored trials
    (card,) = client.compute_analyses([BanditDecisionsAnalysis()], display=False)
    assert card.name == "BanditDecisionsAnalysis"
    titles = [a["text"] for a in card.get_figure().layout.annotations]
    assert titles[0].startswith("Observed f"), titles
    for panel in ("Multipliers", "Running average", "Running trials", "Trust region"):
        assert any(panel in t for t in titles), (panel, titles)
    assert not any("Forgetting" in t for t in titles)  # an option it did not use
    assert {"kappa.cost", "budget.mean_g.cost", "censored"} <= set(card.df.columns)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(APART))
def test_ax_analyses_on_each_extension_give_ax_defaults_cards(
    ax_default_cards, caplog, name
) -> None:
    options, constrained = APART[name]
    client = _loop(
        bandit_generation_strategy(num_candidates=128, **options), constrained
    )
    _check(client, constrained, ax_default_cards, caplog)


def test_the_analyses_fit_leaves_the_global_generator_and_the_decision_alone() -> None:
    def run(ask: bool) -> list:
        torch.manual_seed(0)  # qLogNEI's baseline pruning draws from it
        client = Client(random_seed=0)
        client.configure_experiment(
            parameters=[
                RangeParameterConfig(
                    name="x", bounds=(0.0, 1.0), parameter_type="float"
                )
            ]
        )
        client.configure_optimization(objective="f")
        client.set_generation_strategy(
            bandit_generation_strategy("qLogNEI", num_init=3, num_candidates=64)
        )
        made = []
        for i in range(6):
            ((index, p),) = client.get_next_trials(max_trials=1).items()
            client.complete_trial(
                trial_index=index, raw_data={"f": math.sin(5 * p["x"])}
            )
            made.append(p["x"])
            if ask and i >= 3:  # the bandit node current
                before = torch.random.get_rng_state()
                client.predict(points=[{"x": 0.5}])  # fits the analyses' surrogate
                assert torch.equal(before, torch.random.get_rng_state())
        return made

    assert run(ask=True) == run(ask=False)


def test_decision_table_has_a_numeric_column_per_constraint() -> None:
    client = Client(random_seed=0)
    client.configure_experiment(
        parameters=[
            RangeParameterConfig(name=n, bounds=(0.0, 1.0), parameter_type="float")
            for n in ("x1", "x2")
        ]
    )
    client.configure_optimization(
        objective="f", outcome_constraints=["cost <= 0.4", "risk <= 0.5"]
    )
    client.set_generation_strategy(
        bandit_generation_strategy(
            num_init=3, num_candidates=64, long_term_constraints=True
        )
    )
    for _ in range(7):
        ((index, p),) = client.get_next_trials(max_trials=1).items()
        client.complete_trial(
            trial_index=index,
            raw_data={"f": p["x1"] * p["x2"], "cost": p["x1"], "risk": p["x2"]},
        )
    table = decision_table(client)
    assert len(table) == 4
    for key in ("kappa", "budget.mean_g", "budget.sum_g", "constraint_scale"):
        for name in ("cost", "risk"):
            column = table[f"{key}.{name}"]
            assert column.dtype.kind == "f", (key, name, column.dtype)
        assert key not in table  # no list cells left
    for name in ("cost", "risk"):
        assert table[f"constraint_fits.{name}.noise"].dtype.kind == "f"
        assert table[f"constraint_fits.{name}.lengthscale.x1"].dtype.kind == "f"
    assert table["fit.lengthscale.x2"].dtype.kind == "f"
    # the running average is the constraint's mean over the trials so far, minus
    # its bound (the budget's record), per constraint and in its own units
    exp = client_experiment(client)
    df = exp.lookup_data().df
    last = table.index[-1]
    trials = table.loc[last, "budget.trials"]
    for name, bound in (("cost", 0.4), ("risk", 0.5)):
        values = df[(df.metric_name == name) & (df.trial_index < last)]["mean"]
        assert len(values) == trials
        assert table.loc[last, f"budget.mean_g.{name}"] == pytest.approx(
            values.mean() - bound
        )
