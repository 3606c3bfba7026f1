"""The Ax benchmark's problems: standard test functions (Branin, Hartmann6, a mixed
space, a linear parameter constraint, a log-scale parameter, observation noise), all
minimized, each with a stated minimum at or below the true one, and their parameters
as Ax configurations. ``python -m bandit_experiments ax-bench --list`` names them.

References:
    Branin, Hartmann: L. C. W. Dixon, G. P. Szegő. *The Global Optimisation Problem:
    an Introduction.* In Towards Global Optimisation 2, North-Holland, 1978.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import torch
from botorch.test_functions import Branin, Hartmann

BRANIN_MIN = 0.397887  # botorch.test_functions.Branin.optimal_value
HARTMANN6_MIN = -3.32237  # botorch.test_functions.Hartmann(dim=6).optimal_value
HARTMANN6_ARGMIN = (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573)
MIXED_OFFSET = {"a": 0.0, "b": 1.5, "c": 3.0}


@dataclass(frozen=True)
class Range:
    """A range parameter: ``kind`` ``"float"`` or ``"int"``, ``log`` scale or not."""

    name: str
    low: float
    high: float
    kind: str = "float"
    log: bool = False


@dataclass(frozen=True)
class Choice:
    """An unordered choice parameter over strings."""

    name: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Problem:
    """A minimization problem with a known minimum ``optimum`` (``<=`` the true one),
    attained (up to the stated digits) at ``optimizer``; ``optimizer`` is ``None``
    where no minimizer is known and ``optimum`` is a lower bound only (a tuning
    task's error >= 0: the regrets of two strategies then differ exactly as they
    would against the true minimum, their absolute values are upper bounds)."""

    name: str
    title: str
    parameters: tuple[Range | Choice, ...]
    function: Callable[[Mapping[str, Any]], float]
    optimum: float
    optimizer: Mapping[str, Any] | None
    constraints: tuple[str, ...] = ()
    noise_sd: float = 0.0

    def __call__(self, params: Mapping[str, Any]) -> float:
        """The noise-free value at ``params``."""
        return self.function(params)

    def observe(self, params: Mapping[str, Any], seed: int, trial: int) -> float:
        """The observed value: noise-free plus Gaussian noise of sd ``noise_sd``,
        seeded by ``(seed, trial)``."""
        value = self.function(params)
        if self.noise_sd > 0:
            value += self.noise_sd * float(
                np.random.default_rng([seed, 13, trial]).normal()
            )
        return value

    def regrets(self, values: Sequence[float]) -> dict[str, list[float]]:
        """Of the noise-free ``values`` in evaluation order, per evaluation: the
        cumulative regret, the best value so far and the simple regret (against
        ``optimum``)."""
        f = np.asarray(values, dtype=float)
        best = np.minimum.accumulate(f)
        return {
            "cumulative_regret": np.cumsum(f - self.optimum).tolist(),
            "best_value": best.tolist(),
            "simple_regret": (best - self.optimum).tolist(),
        }


@cache
def _test_functions() -> tuple[Any, Any]:
    return Branin(), Hartmann(dim=6)


def branin(x1: float, x2: float) -> float:
    """BoTorch's Branin (noise-free) at ``(x1, x2)``."""
    fn = _test_functions()[0]
    return float(fn.evaluate_true(torch.tensor([[x1, x2]], dtype=torch.double)))


def hartmann6(x: Sequence[float]) -> float:
    """BoTorch's Hartmann6 (noise-free) at ``x`` (6 numbers in [0, 1])."""
    fn = _test_functions()[1]
    return float(fn.evaluate_true(torch.tensor([list(x)], dtype=torch.double)))


def _hartmann6_params(p: Mapping[str, Any]) -> float:
    return hartmann6([p[f"x{i}"] for i in range(6)])


def _branin_params(p: Mapping[str, Any]) -> float:
    return branin(p["x1"], p["x2"])


def _mixed(p: Mapping[str, Any]) -> float:
    return branin(p["x1"], p["x2"]) + 0.5 * (p["k"] - 2) ** 2 + MIXED_OFFSET[p["c"]]


def _lr_to_x1(lr: float) -> float:
    return -5.0 + 15.0 * (math.log10(lr) + 4.0) / 4.0


def _branin_log(p: Mapping[str, Any]) -> float:
    return branin(_lr_to_x1(p["lr"]), p["x2"])


_UNIT6 = tuple(Range(f"x{i}", 0.0, 1.0) for i in range(6))
_H6_OPT = {f"x{i}": v for i, v in enumerate(HARTMANN6_ARGMIN)}
_BRANIN_XY = (Range("x1", -5.0, 10.0), Range("x2", 0.0, 15.0))

ORIGINAL_PROBLEMS: dict[str, Problem] = {
    p.name: p
    for p in (
        Problem(
            "branin",
            "Branin (2-D)",
            _BRANIN_XY,
            _branin_params,
            BRANIN_MIN,
            {"x1": math.pi, "x2": 2.275},
        ),
        Problem(
            "hartmann6",
            "Hartmann6 (6-D)",
            _UNIT6,
            _hartmann6_params,
            HARTMANN6_MIN,
            _H6_OPT,
        ),
        Problem(
            "hartmann6-in-20d",
            "Hartmann6 in 20-D (14 inert parameters)",
            tuple(Range(f"x{i}", 0.0, 1.0) for i in range(20)),
            _hartmann6_params,
            HARTMANN6_MIN,
            {**_H6_OPT, **{f"x{i}": 0.5 for i in range(6, 20)}},
        ),
        Problem(
            "mixed",
            "Branin + 0.5 (k - 2)² + offset(c): 2 floats, an integer, a choice",
            (*_BRANIN_XY, Range("k", 0, 4, kind="int"), Choice("c", ("a", "b", "c"))),
            _mixed,
            BRANIN_MIN,
            {"x1": math.pi, "x2": 2.275, "k": 2, "c": "a"},
        ),
        Problem(
            "hartmann6-constrained",
            "Hartmann6, x0 + x1 <= 0.5",
            _UNIT6,
            _hartmann6_params,
            HARTMANN6_MIN,
            _H6_OPT,
            constraints=("x0 + x1 <= 0.5",),
        ),
        Problem(
            "branin-log",
            "Branin, x1 from a log-scale lr in [1e-4, 1]",
            (Range("lr", 1e-4, 1.0, log=True), Range("x2", 0.0, 15.0)),
            _branin_log,
            BRANIN_MIN,
            {"lr": 10.0 ** (4.0 * (math.pi + 5.0) / 15.0 - 4.0), "x2": 2.275},
        ),
        Problem(
            "hartmann6-noisy",
            "Hartmann6, observation noise sd 0.1",
            _UNIT6,
            _hartmann6_params,
            HARTMANN6_MIN,
            _H6_OPT,
            noise_sd=0.1,
        ),
    )
}
"""The benchmark's first seven problems by name (the practical defaults were first
developed on them: they belong to the development half, ``suite``)."""


def ax_parameters(problem: Problem) -> list[Any]:
    """The problem's parameters as Ax ``RangeParameterConfig`` /
    ``ChoiceParameterConfig``."""
    from ax import ChoiceParameterConfig, RangeParameterConfig

    configs: list[Any] = []
    for p in problem.parameters:
        if isinstance(p, Choice):
            configs.append(
                ChoiceParameterConfig(
                    name=p.name,
                    values=list(p.values),
                    parameter_type="str",
                    is_ordered=False,
                )
            )
        else:
            configs.append(
                RangeParameterConfig(
                    name=p.name,
                    bounds=(p.low, p.high),
                    parameter_type=p.kind,
                    scaling="log" if p.log else "linear",
                )
            )
    return configs


def repeated_configurations(configurations: Sequence[Mapping[str, Any]]) -> int:
    """How many configurations equal (exactly) one evaluated before them."""
    seen: set[str] = set()
    count = 0
    for params in configurations:
        key = json.dumps(dict(params), sort_keys=True)
        count += key in seen
        seen.add(key)
    return count


def unit_to_params(ranges: Sequence[Range], unit: Sequence[float]) -> dict[str, float]:
    """The parameters at a point ``unit`` of the unit cube: each float range scaled
    linearly, or log-linearly for a ``log`` range."""
    params = {}
    for p, u in zip(ranges, unit, strict=True):
        if p.log:
            lo, hi = math.log10(p.low), math.log10(p.high)
            params[p.name] = 10.0 ** (lo + u * (hi - lo))
        else:
            params[p.name] = p.low + u * (p.high - p.low)
    return params
