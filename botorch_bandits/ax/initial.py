"""The strategy's initial trials: the centre node with a first call's limit
(:class:`CenterFirst`) and the Sobol node's pause (:class:`InitialTrials`), both
counting the experiment's existing trials when asked to (Ax's
``use_existing_trials_for_initialization``)."""

from __future__ import annotations

from typing import Any

from ax.core.experiment import Experiment
from ax.generation_strategy.center_generation_node import CenterGenerationNode
from ax.generation_strategy.transition_criterion import MaxTrialsAwaitingData

__all__ = ["CenterFirst", "InitialTrials"]


class InitialTrials(MaxTrialsAwaitingData):
    """The Sobol node's pause: at most ``threshold`` initial trials (failed and
    abandoned ones are replaced). Once they exist the strategy moves on to the
    bandit node at its next generation, so this node no longer limits how many
    trials one call may ask for (Ax's ``GenerationStrategy.gen`` asks the current
    node for that limit *before* moving on: with ``MaxTrialsAwaitingData`` itself,
    ``get_next_trials(max_trials=4)`` right after the initialization made 1)."""

    def num_till_threshold(
        self, experiment: Experiment, trials_from_node: set[int]
    ) -> int:
        """Ax's count of trials left before the threshold, ``-1`` (no limit) once
        none is left.

        Args:
            experiment: The experiment.
            trials_from_node: The trials this node made.

        Returns:
            The number of trials left, or ``-1``.
        """
        left = super().num_till_threshold(experiment, trials_from_node)
        return left if left > 0 else -1


class CenterFirst(CenterGenerationNode):
    """Ax's ``CenterGenerationNode`` with a pause: the strategy reads a call's trial
    limit from its current node before it moves on, and Ax's centre node has none,
    so a first ``get_next_trials(max_trials=6)`` made the centre and then 5 Sobol
    trials (the Sobol node's count does not grow within one call) whatever
    ``num_init`` said. Here the first call makes at most ``num_init`` trials.

    Args:
        next_node_name: The node after the centre (the Sobol node).
        num_init: The initial trials, the centre included: the first call's limit.
        use_existing_trials_for_initialization: Whether the experiment's existing
            trials count (Ax's option; default ``False``).
    """

    def __init__(
        self,
        next_node_name: str,
        num_init: int,
        use_existing_trials_for_initialization: bool = False,
    ) -> None:
        super().__init__(
            next_node_name=next_node_name,
            use_existing_trials_for_initialization=use_existing_trials_for_initialization,
        )
        self.num_init = num_init
        self._pausing_criteria = [
            _FirstCallLimit(
                threshold=num_init,
                use_all_trials_in_exp=use_existing_trials_for_initialization,
            )
        ]
        self._fixed: dict[str, Any] = {}

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, CenterFirst)
            and super().__eq__(other)
            and self.num_init == other.num_init
            and self.use_existing_trials_for_initialization
            == other.use_existing_trials_for_initialization
        )

    __hash__ = None  # type: ignore[assignment]

    def gen(self, *, experiment: Experiment, **kwargs: Any) -> Any:
        """Ax's centre with the call's fixed parameters laid over it.

        Args:
            experiment: The experiment.
            **kwargs: Ax's generation arguments (``fixed_features`` is read).

        Returns:
            Ax's generator run (the centre is skipped where the fixed parameters
            take it out of the search space).
        """
        # a call's fixed parameters hold for the centre too (Ax's centre node
        # ignores them): laid over the centre, which is skipped if that leaves the
        # search space
        fixed = kwargs.get("fixed_features")
        self._fixed = dict(fixed.parameters) if fixed is not None else {}
        return super().gen(experiment=experiment, **kwargs)

    def compute_center_params(self) -> Any:
        params = super().compute_center_params()
        if params is None or not self._fixed:
            return params
        params = {**params, **self._fixed}
        space = self.search_space
        return params if space.check_membership(parameterization=params) else None


class _FirstCallLimit(InitialTrials):
    """The centre node's pause: it caps a first call at ``threshold`` trials and is
    never met (an experiment that already holds a trial of a node of the centre's
    name would otherwise block the strategy: Ax checks a met pause before the
    centre node has marked itself skipped)."""

    def is_met(self, experiment: Experiment, curr_node: Any) -> bool:
        return False
