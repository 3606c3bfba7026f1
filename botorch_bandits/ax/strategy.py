"""The bandit generation strategy for Ax, :func:`bandit_generation_strategy`: the
initial trials (the centre of the search space with :class:`CenterFirst`, then Sobol
points), then the :class:`~botorch_bandits.ax.generation.BanditNode` of
:mod:`~botorch_bandits.ax.generation` for every later trial; the strategy's own
arguments checked and an unknown option refused with the closest name. The
semantics (modes, options, search spaces, batches) are in docs/ax.md."""

from __future__ import annotations

from typing import Any

from ax.adapter.registry import Generators
from ax.generation_strategy.generation_node import GenerationNode
from ax.generation_strategy.generation_strategy import GenerationStrategy
from ax.generation_strategy.generator_spec import GeneratorSpec
from ax.generation_strategy.transition_criterion import MinTrials

from botorch_bandits.ax.generation import BanditNode
from botorch_bandits.ax.initial import CenterFirst, InitialTrials
from botorch_bandits.core.options import FLAT_DEFAULTS, renamed
from botorch_bandits.core.reference import flat_reference
from botorch_bandits.validation import check_count, did_you_mean

__all__ = ["bandit_generation_strategy"]

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

    The bandit node's options (``node_kwargs``, the flat spelling of
    :class:`~botorch_bandits.core.DecisionOptions`; generated from the dataclasses):

    {options}

    Args:
        algorithm: The bandit rule, one of
            :data:`~botorch_bandits.ax.ALGORITHMS` (default
            ``"IGP-UCB"``). Which ``algorithm``: IGP-UCB (the default) for low
            cumulative regret; it had the lowest of the three on almost every
            ``ax-bench`` problem, and GP-UCB's own beta_t schedule was last or next
            to last and below Ax's default on none. Use ``"GP-TS"`` where a
            randomized rule is the point (many workers drawing independently), in
            few dimensions, and not for its regret: in 6 and 20 dimensions its
            cumulative regret was several times IGP-UCB's at every batch size
            (``botorch-bandits ts-where``), and larger batches did not close the
            gap; BoTorch's ``PathwiseThompsonSampling`` does about as badly.
            ``"qLogNEI"`` is BoTorch's ``qLogNoisyExpectedImprovement`` (Ax's
            default acquisition) under the same steps: an extension's effect apart
            from the rule's. The measurements and when to prefer Ax's default:
            docs/guide/which-algorithm.md.
        num_init: The initial trials before the bandit node (an integer >= 1;
            default ``None``: Ax's own default initialization budget in practice, 5
            in the practical mode, 3 in the theory mode).
        seed: The seed of the Sobol trials and of the bandit node (its decision
            set and draws; default 0).
        mode: The node's mode, ``"practical"`` (the default) or ``"theory"``; it
            also sets the defaults of ``num_init`` and ``initialize_with_center``,
            and the strategy's name.
        initialize_with_center: The first of the ``num_init`` initial trials is the
            centre of the search space (Ax's ``CenterGenerationNode``, as Ax's
            default strategy does), the others Sobol; Ax skips the centre when it
            is already an arm or no feasible centre exists, leaving
            ``num_init - 1`` initial trials (up to ``num_init`` in a first call of
            several). A call's fixed parameters hold for it. ``None`` (default): on
            in the practical mode (chosen on ``ax-bench``'s development half), off
            in the theory mode, which stays as it was.
        use_existing_trials_for_initialization: Ax's option of the same name and
            default (``True``): trials the experiment already holds -- attached
            with ``client.attach_trial``, or made before the strategy was set --
            count toward the ``num_init`` initial trials (the centre is skipped when
            any exists); with ``False`` the strategy makes its ``num_init`` initial
            trials whatever the experiment holds.
        **node_kwargs: The bandit node's options, passed to :class:`BanditNode`
            and all checked here: the flat options listed above (generated from
            the dataclasses; docs/ax.md describes each).

    Returns:
        The strategy: a ``CenterFirst`` node (with ``initialize_with_center``), a
        ``"Sobol"`` node (when ``num_init`` leaves Sobol trials), then the
        ``"bandit"`` node; named after them (e.g. ``"Center+Sobol+IGP-UCB
        (practical)"``).

    Raises:
        TypeError: An unknown option, with the closest of the strategy's arguments
            and the node's options (``num_inits`` -> ``num_init``).
        ValueError: ``num_init`` not an integer >= 1, ``initialize_with_center``
            not ``True``, ``False`` or ``None``,
            ``use_existing_trials_for_initialization`` not ``True`` or ``False``, or
            an invalid node option (named as the caller wrote it).

    Example:
        >>> strategy = bandit_generation_strategy(algorithm="IGP-UCB")
        >>> client.set_generation_strategy(strategy)  # an ax.Client
        >>> strategy = bandit_generation_strategy("GP-TS", num_init=8, restarts=True)
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


# the options' reference in the docstring, generated from the dataclasses
bandit_generation_strategy.__doc__ = bandit_generation_strategy.__doc__.replace(
    "{options}", flat_reference(" " * 4)[4:]
)
