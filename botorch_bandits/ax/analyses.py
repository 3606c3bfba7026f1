"""What Ax's own tools read of a bandit experiment: the adapter its analyses,
``Client.predict`` and model-based best points ask the current node for
(:func:`analysis_surrogate`: Ax's default surrogate, fitted on the experiment's data
when asked -- it describes the data as Ax's default would, not the model the node
decides with), and the strategy's own card of what it did
(:class:`BanditDecisionsAnalysis`). Guide: docs/ax.md."""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go
import torch
from ax.adapter.base import Adapter
from ax.adapter.registry import Generators
from ax.analysis.analysis import Analysis
from ax.analysis.plotly.plotly_analysis import create_plotly_analysis_card
from ax.core.analysis_card import AnalysisCard
from ax.core.experiment import Experiment
from ax.generation_strategy.dispatch_utils import get_derelativize_config
from ax.generation_strategy.generator_spec import GeneratorSpec
from ax.generators.torch.botorch_modular.surrogate import ModelConfig, SurrogateSpec
from plotly.subplots import make_subplots

from botorch_bandits.ax.decisions import constraint_names, decision_table

__all__ = ["BanditDecisionsAnalysis", "analysis_surrogate", "surrogate_spec"]


def surrogate_spec() -> GeneratorSpec:
    """The generator spec of the analyses' surrogate: Ax's modular BoTorch generator
    with the model configuration and transforms of the model node of Ax's default
    strategy (``ax.api.utils.generation_strategy_dispatch``, method ``"fast"``).

    Returns:
        An unfitted ``GeneratorSpec``.
    """
    return GeneratorSpec(
        generator_enum=Generators.BOTORCH_MODULAR,
        generator_kwargs={
            "surrogate_spec": SurrogateSpec(
                model_configs=[ModelConfig(name="MBM defaults")]
            ),
            "transform_configs": get_derelativize_config(
                derelativize_with_raw_status_quo=True
            ),
        },
    )


def _data_key(experiment: Experiment) -> tuple:
    """What the surrogate's fit depends on: the data, the search space and the
    optimization config."""
    df = experiment.lookup_data().full_df
    rows = int(pd.util.hash_pandas_object(df, index=False).sum()) if len(df) else 0
    return (
        rows,
        len(df),
        repr(experiment.search_space),
        repr(experiment.optimization_config),
    )


def analysis_surrogate(
    spec: GeneratorSpec, experiment: Experiment, kept: dict[str, Any]
) -> Adapter | None:
    """``spec``'s adapter fitted on ``experiment``'s data (Ax's own fit), refitted
    only when the data, the search space or the optimization config changed since
    the fit ``kept`` holds. The fit draws nothing from torch's global generator
    (it runs in a forked one), so asking for it never changes a later decision.

    Args:
        spec: The spec of :func:`surrogate_spec`.
        experiment: The experiment.
        kept: The last fit's key and adapter (updated here).

    Returns:
        The fitted adapter, or ``None`` before any trial has data (Ax's default
        strategy has no model then either).
    """
    if experiment.lookup_data().df.empty:
        return None
    key = _data_key(experiment)
    if kept.get("key") != key:
        with torch.random.fork_rng():
            spec.fit(experiment=experiment, data=experiment.lookup_data())
        kept.update(key=key, adapter=spec._fitted_adapter)
    return kept["adapter"]


class BanditDecisionsAnalysis(Analysis):
    """The bandit node's decisions as an Ax analysis card: a panel per thing the
    strategy did, over the trials it made (from :func:`decision_table`, which is
    the card's data): the objective as observed, with the restarts as dashed
    lines; each long-term constraint's multiplier and its running average against
    its bound (0: the bound); the running trials in the model and censored; the
    half-life forgetting fitted; the trust region's radius. Panels of options the
    strategy did not use are left out.

    Example:
        >>> (card,) = client.compute_analyses([BanditDecisionsAnalysis()])
    """

    def validate_applicable_state(
        self,
        experiment: Experiment | None = None,
        generation_strategy: Any = None,
        adapter: Adapter | None = None,
    ) -> str | None:
        """Why the card cannot be made yet (``None``: it can).

        Args:
            experiment: The experiment.
            generation_strategy: Unused.
            adapter: Unused.

        Returns:
            ``None``, or the reason: no experiment, or no trial made by the node.
        """
        if experiment is None:
            return "BanditDecisionsAnalysis needs the experiment."
        if decision_table(experiment).empty:
            return "The bandit node has made no trial of this experiment yet."
        return None

    def compute(
        self,
        experiment: Experiment | None = None,
        generation_strategy: Any = None,
        adapter: Adapter | None = None,
    ) -> AnalysisCard:
        """The card.

        Args:
            experiment: The experiment.
            generation_strategy: Unused (the decisions are read from the trials).
            adapter: Unused.

        Returns:
            A ``PlotlyAnalysisCard``, its data the decision table (a row per
            decision).

        Raises:
            ValueError: No experiment, or no decision of the node in it.
        """
        why = self.validate_applicable_state(experiment)
        if why is not None:
            raise ValueError(why)
        table = decision_table(experiment)
        panels = _panels(experiment, table)
        fig = make_subplots(
            rows=len(panels),
            cols=1,
            shared_xaxes=True,
            vertical_spacing=0.06,
            subplot_titles=[title for title, _ in panels],
        )
        for row, (_, traces) in enumerate(panels, 1):
            for trace in traces:
                fig.add_trace(trace, row=row, col=1)
        for start in _restarts(table):
            fig.add_vline(x=start, line_dash="dash", line_color="grey")
        fig.update_xaxes(title_text="trial", row=len(panels), col=1)
        fig.update_layout(height=220 * len(panels) + 80, legend_tracegroupgap=12)
        return create_plotly_analysis_card(
            name="BanditDecisionsAnalysis",
            title="What the bandit strategy did",
            subtitle=(
                "Per trial the bandit node made: the observed objective (restarts "
                "dashed), and where the strategy uses them the long-term "
                "constraints' multipliers and running averages (at most 0 holds the "
                "bound), the running trials censored, forgetting's half-life and "
                "the trust region's radius."
            ),
            df=table.reset_index(),
            fig=fig,
        )


def _restarts(table: pd.DataFrame) -> list[int]:
    """The trials the restarts began with (the last decision's record)."""
    if "cpd_restarts" not in table:
        return []
    last = table["cpd_restarts"].dropna()
    return [int(t) for t in last.iloc[-1]] if len(last) else []


def _line(table: pd.DataFrame, column: str, name: str, group: str) -> go.Scatter:
    values = table[column].dropna()
    return go.Scatter(
        x=values.index,
        y=values.astype(float),
        mode="lines+markers",
        name=name,
        legendgroup=group,
        legendgrouptitle_text=group,
    )


def _panels(experiment: Experiment, table: pd.DataFrame) -> list[tuple[str, list]]:
    """(title, traces) for each panel the table has data for."""
    objective = experiment.optimization_config.objective
    metric = objective.metric_names[0]
    df = experiment.lookup_data().df
    seen = df[df["metric_name"] == metric].groupby("trial_index")["mean"].mean()
    panels = [
        (
            f"Observed {metric} (dashed: restarts)",
            [
                go.Scatter(
                    x=seen.index,
                    y=seen.values,
                    mode="markers",
                    name=metric,
                    legendgroup="objective",
                    legendgrouptitle_text="objective",
                )
            ],
        )
    ]
    names = constraint_names(experiment.optimization_config)
    for key, title in (
        ("kappa", "Multipliers (kappa) of the long-term constraints"),
        ("budget.mean_g", "Running average of each constraint (<= 0: within)"),
    ):
        traces = [
            _line(table, f"{key}.{n}", n, key) for n in names if f"{key}.{n}" in table
        ]
        if traces:
            panels.append((title, traces))
    running = [
        _line(table, c, label, "running trials")
        for c, label in (("in_flight", "running"), ("censored", "censored"))
        if c in table and "censoring.beta" in table
    ]
    if running:
        panels.append(("Running trials in the model, and censored", running))
    for column, title in (
        ("forgetting.half_life_trials", "Forgetting: fitted half-life (trials)"),
        ("trust_region.radius", "Trust region: radius (unit cube)"),
    ):
        if column in table and table[column].notna().any():
            panels.append((title, [_line(table, column, column, column)]))
    return panels
