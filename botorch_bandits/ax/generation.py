"""The bandit node of the Ax generation strategy (which
:mod:`~botorch_bandits.ax.strategy` builds: a Sobol initialization node, then
:class:`BanditNode`): a thin adapter that reads the experiment into the decision
core's history, asks :func:`botorch_bandits.core.decide` for each candidate and
records the decision in its generator run's metadata. Every call recomputes the
round's state from the experiment, so a reloaded experiment makes the same next
decision; the semantics (modes, options, search spaces, batches) are in docs/ax.md."""

from __future__ import annotations

import weakref
from dataclasses import replace
from typing import Any

from ax.core.data import Data
from ax.core.experiment import Experiment
from ax.generation_strategy.external_generation_node import ExternalGenerationNode

from botorch_bandits.ax.analyses import analysis_surrogate, surrogate_spec
from botorch_bandits.ax.initial import CenterFirst, InitialTrials
from botorch_bandits.ax.reading import ax_domain, read_experiment
from botorch_bandits.ax.space import DecisionSet, Space
from botorch_bandits.core import (
    DecisionCache,
    DecisionOptions,
    Domain,
    History,
    TrialRecord,
    decide,
    resolve_kwargs,
)
from botorch_bandits.core.features.constraints import MULTIPLIER_UPDATES
from botorch_bandits.core.optimize import MAX_ITER, NUM_STARTS
from botorch_bandits.core.options import (
    ALGORITHMS,
    FLAT_DEFAULTS,
    HYPERPARAMETERS,
    KERNELS,
    MODES,
    OPTIMIZERS,
    PENDING,
    PRACTICAL_DEFAULTS,
    THEORY_DEFAULTS,
    renamed,
)
from botorch_bandits.core.reference import flat_reference
from botorch_bandits.models import FeatureCache, one_thread
from botorch_bandits.upstream import float_fit_time, generator_key, set_gen_metadata

__all__ = [
    "ALGORITHMS",
    "HYPERPARAMETERS",
    "KERNELS",
    "MAX_ITER",
    "MODES",
    "MULTIPLIER_UPDATES",
    "NUM_STARTS",
    "OPTIMIZERS",
    "PENDING",
    "PRACTICAL_DEFAULTS",
    "THEORY_DEFAULTS",
    "BanditNode",
    "CenterFirst",
    "InitialTrials",
]


class BanditNode(ExternalGenerationNode):
    r"""An Ax generation node running a bandit algorithm through the decision core.

    Args:
        name: Node name, a non-empty string (default ``"bandit"``).
        transition_criteria: Ax transition criteria (default ``None``: none, the
            node runs forever).
        stored: The options are a stored node's (migrated by
            :mod:`~botorch_bandits.ax.storage`): they load with what they hold
            (default ``False``).
        **options: The strategy's options, checked here (named as written), in
            their flat spelling: each sets a field of
            :class:`~botorch_bandits.core.DecisionOptions` or of one of its groups
            (``restarts`` and ``long_term_constraints`` also take a
            :class:`~botorch_bandits.core.Restarts` or
            :class:`~botorch_bandits.core.LongTermConstraints`). They follow,
            generated from the dataclasses; docs/ax.md describes each.

    Raises:
        TypeError: An unknown option.
        ValueError: An empty ``name``, or an invalid option or combination (named
            as the caller wrote it).

    Example:
        >>> node = BanditNode(algorithm="GP-UCB", seed=1)

    The options:

    {options}
    """

    #: the flat options that make up the node's whole persisted state
    OPTIONS = ("name", *FLAT_DEFAULTS)

    def __init__(
        self,
        name: str = "bandit",
        transition_criteria: list[Any] | None = None,
        *,
        stored: bool = False,
        **options: Any,
    ) -> None:
        # every option checked here, when the strategy is built (not at the first
        # decision), and named as the caller wrote it
        if not isinstance(name, str) or not name:
            raise ValueError(f"`name` must be a non-empty string, got name={name!r}.")
        resolved = resolve_kwargs(stored=stored, **options)
        super().__init__(
            name=name, should_deduplicate=False, transition_criteria=transition_criteria
        )
        # no silent Sobol fallback: a failure must surface
        self.fallback_specs = {}
        for key, value in resolved.items():
            setattr(self, key, value)
        self.decision_options = DecisionOptions.from_resolved(resolved)
        # one call's inputs, rebuilt by every call: the history read from the
        # experiment, the search space, the call's decision set and domain, the
        # candidates other nodes and this node made earlier in the call
        self._history = History()
        self._space_now: Space | None = None
        self._set_now: DecisionSet | None = None
        self._domain: Domain | None = None
        self._proposed: list[TrialRecord] = []
        self._foreign: list[TrialRecord] = []
        self._cache = DecisionCache()
        # the sparse model's feature blocks, kept across calls (a pure cache, in
        # memory only: a node loaded from storage computes them once)
        self._features = FeatureCache()
        self._last_meta: dict[str, Any] = {}
        # Ax's transforms and decision sets by search space and fixed features: pure
        # functions of those and of the options, so a cache, not state
        self._spaces: dict[str, Space] = {}
        # the settled trials already read (read_experiment's cache, for one
        # experiment; in memory only: a node loaded from storage reads every trial
        # once)
        self._read: dict[str, Any] = {}
        self._sets: dict[tuple, DecisionSet] = {}
        # the adapter Ax's analyses and predictions read (:mod:`.analyses`): fitted
        # on the experiment last read, when asked; in memory only
        self._surrogate = surrogate_spec()
        self._surrogate_fit: dict[str, Any] = {}
        self._experiment: weakref.ref | None = None

    @property
    def _fitted_adapter(self) -> Any:
        """The adapter Ax's analyses, ``Client.predict`` and model-based best points
        read from the current node: Ax's default surrogate fitted on the data of the
        experiment the node last read (:func:`~botorch_bandits.ax.analyses.
        analysis_surrogate`), not the model the node decides with; ``None`` before
        the node has read an experiment with data."""
        experiment = self._experiment() if self._experiment is not None else None
        if experiment is None:
            return None
        return analysis_surrogate(self._surrogate, experiment, self._surrogate_fit)

    def options(self) -> dict[str, Any]:
        """The constructor arguments (without the transition criteria)."""
        return {k: getattr(self, k) for k in self.OPTIONS}

    def space(self, experiment: Experiment) -> Space:
        """The experiment's search space as the node models it (Ax's transforms),
        cached for the latest search space.

        Args:
            experiment: The Ax experiment.

        Returns:
            The :class:`~botorch_bandits.ax.space.Space` of its search space.
        """
        return self._space(experiment)

    def decision_set(
        self, experiment: Experiment, fixed: dict[str, Any] | None = None
    ) -> DecisionSet:
        """The node's decision set for the experiment (with ``fixed`` features):
        :meth:`~botorch_bandits.ax.space.Space.decision_set` with the node's
        ``num_candidates`` and ``seed``, cached.

        Args:
            experiment: The Ax experiment.
            fixed: Parameter name -> value held fixed (default ``None``: none).

        Returns:
            The :class:`~botorch_bandits.ax.space.DecisionSet`.

        Raises:
            ValueError: ``fixed`` names an unknown parameter, or no point of the
                space satisfies the constraints.
        """
        return self._decision_set(self._space(experiment), fixed or {})

    # ------------------------------------------------------------------ caches
    def _space(self, experiment: Experiment) -> Space:
        key = repr(experiment.search_space)
        if key not in self._spaces:
            self._spaces = {key: Space(experiment.search_space, key=key)}
        return self._spaces[key]

    def _decision_set(self, space: Space, fixed: dict[str, Any]) -> DecisionSet:
        key = (space.key, repr(sorted(fixed.items())))
        if key not in self._sets:
            if len(self._sets) > 16:
                self._sets.clear()
            self._sets[key] = space.decision_set(self.num_candidates, self.seed, fixed)
        return self._sets[key]

    # ------------------------------------------------------------------ Ax hooks
    def update_generator_state(self, experiment: Experiment, data: Data) -> None:
        """Read the experiment into the history: every trial's status and values
        checked, the new and changed ones read in full
        (:func:`~botorch_bandits.ax.reading.read_experiment`); the call's earlier
        candidates and the decision cache start afresh. Ax calls it before
        :meth:`get_next_candidate`.

        Args:
            experiment: The Ax experiment.
            data: The experiment's data (Ax's ``Data``).

        Raises:
            ValueError: A trial the node cannot read (see
                :func:`~botorch_bandits.ax.reading.read_experiment`).
        """
        space = self._space(experiment)
        self._history = read_experiment(
            experiment,
            data,
            space,
            self.long_term_constraints,
            self._read,
            self.decision_options.fit_out_of_design,
        )
        self._space_now = space
        self._experiment = weakref.ref(experiment)
        self._proposed, self._foreign = [], []
        self._cache = DecisionCache(features=self._features)

    def get_next_candidate(self, pending_parameters: list[dict]) -> dict:
        """The next candidate: :func:`~botorch_bandits.core.decide` on the history
        with the call's candidates made so far (other nodes' and this node's) as
        running trials, on one torch thread. Ax calls it once per candidate.

        Args:
            pending_parameters: Ax's pending parameterizations (unused: the node
                reads the pending trials from the experiment and the call).

        Returns:
            The candidate's parameterization (parameter name -> value): a row of
            the call's decision set, or the optimizer's point.
        """
        # one torch thread: the matrices are small, and extra threads only compete
        # with the evaluations (measured 3-4x slower with two threads on two cores);
        # it also makes the decision bit-identical wherever it is recomputed
        with one_thread():
            history = self._history.then(*self._foreign, *self._proposed)
            decision = decide(history, self.decision_options, self._domain, self._cache)
        self._proposed.append(decision.record)
        self._last_meta = decision.metadata
        if decision.index is None:
            return dict(decision.payload)
        return dict(self._set_now.params[decision.index])

    def _gen(self, experiment, data=None, n=None, pending_observations=None, **kwargs):
        """Ax's generation call: the decision set with the call's fixed features
        (``get_next_trials(fixed_parameters=...)`` arrives here as
        ``fixed_features``), and the candidates other nodes made earlier in the same
        call (Ax has not attached them to the experiment yet; they are pending)."""
        space = self._space_now
        fixed_features = kwargs.get("fixed_features")
        fixed = dict(fixed_features.parameters) if fixed_features is not None else {}
        self._set_now = self._decision_set(space, fixed)
        self._domain = ax_domain(
            space, self._set_now, fixed, lambda: self._decision_set(space, {})
        )
        self._history = replace(self._history, fixed=fixed)
        # this call's candidates not yet on the experiment: Ax lists them as pending
        # observations without a trial index, in the order they were made; the last
        # ones are this node's own (recorded with their uniform tags)
        h = self._history
        known = {e.index for e in h.trials} | set(h.failed) | set(h.out_of_design)
        lists = list((pending_observations or {}).values())
        in_call = [
            o.parameters
            for o in (max(lists, key=len) if lists else [])
            if o.trial_index is None or int(o.trial_index) not in known
        ]
        others = in_call[: max(len(in_call) - len(self._proposed), 0)]
        coords = space.coordinates(others).tolist() if others else []
        self._foreign = [TrialRecord.issued(x, uniform=False) for x in coords]
        gr = super()._gen(
            experiment=experiment,
            data=data,
            n=n,
            pending_observations=pending_observations,
            **kwargs,
        )
        if generator_key(gr) == self.name:
            set_gen_metadata(gr, dict(self._last_meta))
        float_fit_time(self, gr)
        return gr


def load_options(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored node's options with today's names (old spellings renamed without a
    warning: they are the file's, not the user's).

    Args:
        stored: The options a stored node holds, by name.

    Returns:
        The options, the old spellings of
        :data:`~botorch_bandits.core.options.RENAMED` under their new names.

    Raises:
        ValueError: An option stored under both spellings.
    """
    return renamed(stored, warn=False)


# the options' reference in the docstring, generated from the dataclasses
BanditNode.__doc__ = BanditNode.__doc__.replace(
    "{options}", flat_reference(" " * 4)[4:]
)
