"""The bandit generation strategy for Ax: a Sobol initialization node, then
:class:`BanditNode`, a thin adapter that reads the experiment into the decision
core's history, asks :func:`botorch_bandits.core.decide` for each candidate and
records the decision in its generator run's metadata. Every call recomputes the
round's state from the experiment, so a reloaded experiment makes the same next
decision; the semantics (modes, options, search spaces, batches) are in docs/ax.md."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ax.adapter.registry import Generators
from ax.core.data import Data
from ax.core.experiment import Experiment
from ax.generation_strategy.external_generation_node import ExternalGenerationNode
from ax.generation_strategy.generation_node import GenerationNode
from ax.generation_strategy.generation_strategy import GenerationStrategy
from ax.generation_strategy.generator_spec import GeneratorSpec
from ax.generation_strategy.transition_criterion import MinTrials

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
from botorch_bandits.validation import check_count, did_you_mean

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
    "bandit_generation_strategy",
]


class BanditNode(ExternalGenerationNode):
    r"""An Ax generation node running a bandit algorithm through the decision core.

    Args:
        name: Node name (``"bandit"``).
        transition_criteria: Ax transition criteria (none: the node runs forever).
        stored: The options are a stored node's (migrated by
            :mod:`~botorch_bandits.ax.storage`): they load with what they hold.
        **options: The strategy's options, checked here (named as written), in
            their flat spelling: each sets a field of
            :class:`~botorch_bandits.core.DecisionOptions` or of one of its groups
            (``restarts`` and ``long_term_constraints`` also take a
            :class:`~botorch_bandits.core.Restarts` or
            :class:`~botorch_bandits.core.LongTermConstraints`). They follow,
            generated from the dataclasses; docs/ax.md describes each.

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

    def options(self) -> dict[str, Any]:
        """The constructor arguments (without the transition criteria)."""
        return {k: getattr(self, k) for k in self.OPTIONS}

    def space(self, experiment: Experiment) -> Space:
        """The experiment's search space as the node models it (Ax's transforms)."""
        return self._space(experiment)

    def decision_set(
        self, experiment: Experiment, fixed: dict[str, Any] | None = None
    ) -> DecisionSet:
        """The node's decision set for the experiment (with ``fixed`` features)."""
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
        checked, the new and changed ones read in full."""
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
        self._proposed, self._foreign = [], []
        self._cache = DecisionCache(features=self._features)

    def get_next_candidate(self, pending_parameters: list[dict]) -> dict:
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


#: the strategy's own arguments, beside the node's options
STRATEGY_ARGUMENTS = (
    "algorithm",
    "num_init",
    "seed",
    "mode",
    "initialize_with_center",
    "use_existing_trials_for_initialization",
)


def _refuse_unknown(node_kwargs: dict[str, Any]) -> None:
    """An unknown option of :func:`bandit_generation_strategy` raises a
    ``TypeError`` that suggests the closest of its arguments and the node's
    options (``num_inits`` -> ``num_init``)."""
    known = (*STRATEGY_ARGUMENTS, *FLAT_DEFAULTS)
    unknown = sorted(set(renamed(node_kwargs, warn=False)) - set(known))
    if unknown:
        hints = "".join(did_you_mean(u, known) for u in unknown)
        raise TypeError(
            f"Unknown option(s) {unknown} of bandit_generation_strategy.{hints} Its "
            f"arguments are {list(STRATEGY_ARGUMENTS)}, and the node's options "
            f"{list(FLAT_DEFAULTS)}."
        )


def bandit_generation_strategy(
    algorithm: str = "IGP-UCB",
    num_init: int | None = None,
    seed: int = 0,
    mode: str = "practical",
    initialize_with_center: bool | None = None,
    use_existing_trials_for_initialization: bool = True,
    **node_kwargs: Any,
) -> GenerationStrategy:
    """A ``GenerationStrategy``: ``num_init`` Sobol trials (Ax's Sobol generator,
        which keeps the search space's semantics and fixed features; points may repeat
        in a space smaller than ``num_init``), then :class:`BanditNode`
        (``node_kwargs``: its options, all checked here) for every later trial. One call
        makes at most ``num_init`` Sobol trials; after them every trial is a bandit
        decision on the data that has arrived (running trials pending under the
        ``pending`` rule). The bandit node has no transition and never loops.
        ``initialize_with_center``: the first of the ``num_init`` initial trials is the
        centre of the search space (Ax's ``CenterGenerationNode``, as Ax's default
        strategy does), the others Sobol; Ax skips the centre when it is already an arm
        or no feasible centre exists, leaving ``num_init - 1`` initial trials (up to
        ``num_init`` in a first call of several). A call's fixed parameters hold for it. ``None``
        (default): on in the practical mode (chosen on ``ax-bench``'s development half),
        off in the theory mode, which stays as it was.
        ``use_existing_trials_for_initialization`` (Ax's option of the same name and
        default): trials the experiment already holds -- attached with
        ``client.attach_trial``, or made before the strategy was set -- count toward
        the ``num_init`` initial trials (the centre is skipped when any exists); with
        ``False`` the strategy makes its ``num_init`` initial trials whatever the
        experiment holds.

        Which ``algorithm``: IGP-UCB (the default) for low cumulative regret; it had the
        lowest of the three on almost every ``ax-bench`` problem, and GP-UCB's own beta_t
        schedule was last or next to last and below Ax's default on none. Use ``"GP-TS"``
        where a randomized rule is the point (many workers drawing independently), in few
        dimensions, and not for its regret: in 6 and 20 dimensions its cumulative regret
        was several times IGP-UCB's at every batch size (``botorch-bandits ts-where``), and
        larger batches did not close the gap; BoTorch's ``PathwiseThompsonSampling`` does
        about as badly. ``"qLogNEI"`` is BoTorch's ``qLogNoisyExpectedImprovement`` (Ax's
        default acquisition) under the same steps: an extension's effect apart from the
        rule's. The measurements and when to prefer Ax's default:
        docs/guide/which-algorithm.md.

        The bandit node's options (``node_kwargs``, the flat spelling of
        :class:`~botorch_bandits.core.DecisionOptions`; generated from the dataclasses):

    {options}
    """
    _refuse_unknown(node_kwargs)
    if num_init is None:  # Ax's own default initialization budget in practice
        num_init = 5 if mode == "practical" else 3
    check_count("num_init", num_init, 1)
    initialize_with_center = _checked_initialization(
        initialize_with_center, use_existing_trials_for_initialization, mode
    )
    existing = use_existing_trials_for_initialization
    node = BanditNode(
        name="bandit", algorithm=algorithm, mode=mode, seed=seed, **node_kwargs
    )
    num_sobol = num_init - 1 if initialize_with_center else num_init
    nodes: list[Any] = [node]
    if num_sobol > 0:
        # counted over every trial of the experiment (the centre's among them), or
        # over the Sobol node's own
        threshold = num_init if existing else num_sobol
        nodes.insert(0, _sobol_node(seed, threshold, existing))
    name = ("Sobol+" if num_sobol > 0 else "") + algorithm
    name += " (practical)" if mode == "practical" else ""
    if initialize_with_center:
        nodes.insert(
            0,
            CenterFirst(
                next_node_name=nodes[0].name,
                num_init=num_init,
                use_existing_trials_for_initialization=existing,
            ),
        )
        name = f"Center+{name}"
    return GenerationStrategy(name=name, nodes=nodes)


def _checked_initialization(center: Any, existing: Any, mode: str) -> bool:
    """``initialize_with_center`` (``None``: on in the practical mode) and
    ``use_existing_trials_for_initialization`` checked; returns the first."""
    if center is None:
        center = mode == "practical"
    if not isinstance(center, bool):
        raise ValueError(
            f"`initialize_with_center` must be True, False or None, got {center!r}."
        )
    if not isinstance(existing, bool):
        raise ValueError(
            "`use_existing_trials_for_initialization` must be True or False, got "
            f"{existing!r}."
        )
    return center


def _sobol_node(seed: int, threshold: int, existing: bool) -> GenerationNode:
    """The Sobol initialization node (Ax's Sobol generator, points may repeat), on
    to the bandit node after ``threshold`` trials (of the experiment: ``existing``,
    or its own) and pausing there."""
    return GenerationNode(
        name="Sobol",
        generator_specs=[
            GeneratorSpec(
                generator_enum=Generators.SOBOL,
                generator_kwargs={"seed": seed, "deduplicate": False},
            )
        ],
        transition_criteria=[
            MinTrials(
                threshold=threshold,
                transition_to="bandit",
                use_all_trials_in_exp=existing,
            )
        ],
        pausing_criteria=[
            InitialTrials(threshold=threshold, use_all_trials_in_exp=existing)
        ],
    )


def load_options(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored node's options with today's names (old spellings renamed without a
    warning: they are the file's, not the user's)."""
    return renamed(stored, warn=False)


# the options' references in the docstrings, generated from the dataclasses
BanditNode.__doc__ = BanditNode.__doc__.replace(
    "{options}", flat_reference(" " * 4)[4:]
)
bandit_generation_strategy.__doc__ = bandit_generation_strategy.__doc__.replace(
    "{options}", flat_reference(" " * 4)[4:]
)
