r"""The bandit node's decision set, built with Ax's own search-space transforms
(``Cont_X_trans``: the GP works in their unit cube, as Ax's models do): every point of
a small discrete space, else seeded scrambled Sobol points mapped back by the
transforms' ``untransform`` (integers rounded to the nearest, deterministically), each
checked with ``SearchSpace.check_membership`` (rejection sampling inside the linear
parameter constraints); features fixed for one call are set on every candidate.
Guide: docs/ax.md.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch
from ax.adapter.registry import Cont_X_trans
from ax.adapter.transforms.fill_missing_parameters import FillMissingParameters
from ax.adapter.transforms.int_to_float import IntToFloat
from ax.adapter.transforms.one_hot import OH_PARAM_INFIX
from ax.core.observation import ObservationFeatures
from ax.core.parameter import (
    ChoiceParameter,
    FixedParameter,
    ParameterType,
    RangeParameter,
)
from ax.core.search_space import SearchSpace
from torch import Tensor
from torch.quasirandom import SobolEngine

from botorch_bandits import upstream

#: rejection sampling gives up after this many Sobol draws per wanted candidate
DRAWS_PER_CANDIDATE = 64
#: the gradient optimizer's linear constraints are tightened by this much (unit cube)
CONSTRAINT_MARGIN = 1e-9


def _owner(name: str, search_space: SearchSpace) -> str:
    """The user's parameter behind a transformed coordinate (one-hot coordinates are
    named ``<parameter>_OH_PARAM_<i>`` by Ax's ``OneHot``)."""
    if name in search_space.parameters:
        return name
    return name.split(OH_PARAM_INFIX)[0]


@dataclass
class DecisionSet:
    """Candidates in the user's space and their coordinates in the GP's cube.

    Args:
        params: The ``N`` candidates' parameterizations.
        unit: ``N x d`` Ax-transformed unit-cube coordinates.
        fraction: The share of the cube's draws (or grid points) that were valid.
        draws: The points drawn (or enumerated) to get them.
    """

    params: list[dict[str, Any]]
    unit: Tensor
    fraction: float
    draws: int
    index: dict[tuple, int] = field(init=False, repr=False)  # coordinates -> row

    def __post_init__(self) -> None:
        self.index = {tuple(row): i for i, row in enumerate(self.unit.tolist())}


class Space:
    """Ax's transforms fitted on one search space: coordinates of any
    parameterization and the decision set of a call.

    Args:
        search_space: The experiment's search space.
        key: Its identity for caches (default: its ``repr``).
    """

    def __init__(self, search_space: SearchSpace, key: str | None = None) -> None:
        for p in search_space.parameters.values():
            if not isinstance(p, (RangeParameter, ChoiceParameter, FixedParameter)):
                raise ValueError(
                    "BanditNode supports range, choice and fixed parameters, got "
                    f"{p.name!r} of type {type(p).__name__}."
                )
        equal = [
            str(c)
            for c in search_space.parameter_constraints
            if getattr(c, "is_equality", False)
        ]
        if equal:
            raise ValueError(
                f"BanditNode supports linear inequality parameter constraints, got the "
                f"equality constraint(s) {equal}: its decision set is drawn by "
                "rejection sampling, which an equality leaves empty. Eliminate the "
                "constrained parameter (express it through the others in your "
                "evaluation) instead."
            )
        self.search_space = search_space
        self.key = repr(search_space) if key is None else key
        self._fill = FillMissingParameters(search_space=search_space)
        space = search_space.clone()
        self.transforms = []
        for cls in Cont_X_trans:
            t = cls(search_space=space)
            if isinstance(t, IntToFloat):
                # deterministic rounding to the nearest integer: Ax switches to
                # randomized rounding (global RNG, up to 10^4 tries a point) when a
                # constraint involves an integer; the membership check below rejects
                # the rounded points that break a constraint instead, so the seeded
                # decision set stays the same for the experiment's life
                upstream.set_strict_rounding(t)
            space = t.transform_search_space(space)
            self.transforms.append(t)
        #: the GP's coordinates: the transformed parameters, in Ax's order
        self.names = list(space.parameters)
        self.owner = [_owner(n, search_space) for n in self.names]
        #: coordinates that take discrete values (integers, choices, one-hot)
        self.discrete = [
            i
            for i, p in enumerate(self.owner)
            if not (
                isinstance(search_space.parameters[p], RangeParameter)
                and search_space.parameters[p].parameter_type == ParameterType.FLOAT
            )
        ]
        #: the linear parameter constraints on the GP's coordinates, as BoTorch's
        #: ``(indices, coefficients, rhs)`` with ``sum coefficients * x >= rhs``
        self.inequality_constraints = []
        for c in space.parameter_constraints:
            items = sorted(
                (self.names.index(n), -float(w)) for n, w in c.constraint_dict.items()
            )
            self.inequality_constraints.append(
                (
                    torch.tensor([i for i, _ in items]),
                    torch.tensor([w for _, w in items], dtype=torch.double),
                    -float(c.bound),
                )
            )

    @property
    def dim(self) -> int:
        """The GP's input dimension (at least 1: an all-fixed space is one point,
        given one constant coordinate)."""
        return max(len(self.names), 1)

    def complete(self, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` with the backfill value of every parameter it lacks (a
        parameter added to the search space after the trial, with Ax's
        ``backfill_value``; Ax's own ``FillMissingParameters`` transform).

        Args:
            params: A parameterization in the user's space.

        Returns:
            The completed parameterization.
        """
        obs = [ObservationFeatures(parameters=dict(params))]
        return self._fill.transform_observation_features(obs)[0].parameters

    def coordinates(self, parameterizations: list[dict[str, Any]]) -> Tensor:
        """``N x d`` unit-cube coordinates of parameterizations in the user's space
        (a parameter added after a trial takes its backfill value there).

        Args:
            parameterizations: ``N`` parameterizations in the user's space.

        Returns:
            ``N x d`` double tensor.
        """
        obs = [ObservationFeatures(parameters=dict(p)) for p in parameterizations]
        obs = self._fill.transform_observation_features(obs)
        missing = sorted(
            {
                n
                for o in obs
                for n in self.search_space.parameters
                if o.parameters.get(n) is None
            }
        )
        if missing:
            raise ValueError(
                f"A trial has no value for the parameter(s) {missing} and the search "
                "space gives them no backfill value: add them with "
                "`backfill_value=` (Ax's add_parameters_to_search_space) so that "
                "the earlier trials have a point in the new space."
            )
        for t in self.transforms:
            obs = t.transform_observation_features(obs)
        rows = [[float(o.parameters[n]) for n in self.names] for o in obs]
        if not self.names:
            rows = [[0.0] for _ in obs]
        return torch.tensor(rows, dtype=torch.double).reshape(-1, self.dim)

    @property
    def inequality_constraints_with_margin(self) -> list[tuple[Tensor, Tensor, float]]:
        """:attr:`inequality_constraints` tightened by ``CONSTRAINT_MARGIN`` (times the
        size of the coefficients): the optimizer (SLSQP) may end a hair outside its
        constraints, and a trial must satisfy them exactly (:meth:`contains`)."""
        return [
            (i, w, rhs + CONSTRAINT_MARGIN * float(w.abs().sum()))
            for i, w, rhs in self.inequality_constraints
        ]

    def contains(self, params: dict[str, Any]) -> bool:
        """``params`` is in the search space: Ax's ``check_membership`` (bounds,
        choices, types) and every linear parameter constraint exactly, without
        Ax's tolerance.

        Args:
            params: A parameterization in the user's space.

        Returns:
            Whether it is in the space.
        """
        space = self.search_space
        if not space.check_membership(
            params, raise_error=False, check_all_parameters_present=True
        ):
            return False
        for c in space.parameter_constraints:
            lhs = sum(w * float(params[n]) for n, w in c.constraint_dict.items())
            if lhs > c.bound:
                return False
        return True

    def fixed_dims(self, fixed: dict[str, Any]) -> list[int]:
        """The coordinates of the parameters in ``fixed`` (features fixed for a call).

        Args:
            fixed: The fixed features, by parameter name.

        Returns:
            The coordinates' indices.
        """
        return [i for i, p in enumerate(self.owner) if p in fixed]

    def parameterizations(self, unit: Tensor) -> list[dict[str, Any]]:
        """Parameterizations in the user's space of unit-cube points (``N x d``):
        Ax's ``untransform`` (integers rounded to the nearest, one-hot choices by
        their largest coordinate).

        Args:
            unit: ``N x d`` unit-cube points.

        Returns:
            ``N`` parameterizations.
        """
        if not self.names:
            return self._untransform(unit[:, :0])
        return self._untransform(unit)

    def _untransform(self, unit: Tensor) -> list[dict[str, Any]]:
        obs = [
            ObservationFeatures(parameters=dict(zip(self.names, row, strict=True)))
            for row in unit.tolist()
        ]
        for t in reversed(self.transforms):
            obs = t.untransform_observation_features(obs)
        return [o.parameters for o in obs]

    def _grid(self) -> list[list[Any]] | None:
        """Every parameter's values when the space is discrete, else ``None``."""
        axes = []
        for p in self.search_space.parameters.values():
            if isinstance(p, FixedParameter):
                axes.append([p.value])
            elif isinstance(p, ChoiceParameter):
                axes.append(list(p.values))
            elif p.parameter_type == ParameterType.INT:
                axes.append(list(range(int(p.lower), int(p.upper) + 1)))
            else:
                return None
        return axes

    def decision_set(
        self,
        num_candidates: int,
        seed: int,
        fixed: dict[str, Any] | None = None,
        quiet: bool = False,
    ) -> DecisionSet:
        """The call's decision set (see the module).

        Args:
            num_candidates: The number of candidates wanted.
            seed: The Sobol points' seed.
            fixed: Features fixed for this call (default ``None``: none).
            quiet: No warning when fewer than ``num_candidates`` points were found
                (the optimizer's raw samples; default ``False``).

        Returns:
            The :class:`DecisionSet`.

        Raises:
            ValueError: When ``fixed`` names an unknown parameter, or no point of
                the space satisfies the constraints (with the fixed features).
        """
        fixed = dict(fixed or {})
        unknown = sorted(set(fixed) - set(self.search_space.parameters))
        if unknown:
            raise ValueError(
                f"`fixed_parameters` names {unknown}, which are not parameters of the "
                f"search space {sorted(self.search_space.parameters)}."
            )
        names = list(self.search_space.parameters)
        grid = self._grid()
        size = math.prod(len(a) for a in grid) if grid is not None else None
        seen: set[tuple] = set()
        valid: list[dict[str, Any]] = []

        def admit(batch: list[dict[str, Any]]) -> int:
            ok = 0
            for p in batch:
                p = {**p, **fixed}
                if not self.search_space.check_membership(
                    p, raise_error=False, check_all_parameters_present=True
                ):
                    continue
                ok += 1
                key = tuple(p[n] for n in names)
                if key not in seen and len(valid) < num_candidates:
                    seen.add(key)
                    valid.append(p)
            return ok

        if size is not None and size <= num_candidates:
            points = [
                dict(zip(names, v, strict=True)) for v in itertools.product(*grid)
            ]
            accepted, draws = admit(points), size
        else:
            engine = SobolEngine(len(self.names), scramble=True, seed=seed)
            max_draws = DRAWS_PER_CANDIDATE * num_candidates
            accepted = draws = 0
            chunk = num_candidates
            while len(valid) < num_candidates and draws < max_draws:
                unit = engine.draw(chunk, dtype=torch.double)
                accepted += admit(self._untransform(unit))
                draws += chunk
                chunk = max(num_candidates, 1024)
        if not valid:
            constraints = [str(c) for c in self.search_space.parameter_constraints]
            raise ValueError(
                f"No point of the search space satisfies its parameter constraints "
                f"{constraints} with the fixed parameters {fixed} ({draws} points "
                "tried): BanditNode needs a non-empty decision set; loosen the "
                "constraints or the fixed parameters."
            )
        if len(valid) < num_candidates and size is None and not quiet:
            warnings.warn(
                f"BanditNode's decision set has {len(valid)} of num_candidates="
                f"{num_candidates} points: only {accepted} of {draws} Sobol points "
                "satisfied the parameter constraints (or repeated a point).",
                stacklevel=2,
            )
        return DecisionSet(
            params=valid,
            unit=self.coordinates(valid),
            fraction=accepted / max(draws, 1),
            draws=draws,
        )
