"""The online benchmark's drift problems: abrupt changes (large and mild), gradual
drift, periodic drift and stationary controls in 2 to 10 dimensions, noisy and
noise-free, over 100 to 300 trials; split into a development half (the defaults of
the drift options are chosen on it) and a validation half (reported, never tuned
on). The split is fixed here, before any run. Every objective is minimized on the
unit cube; ``value(x, t, T)`` is its noise-free value at trial ``t`` of ``T``."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import torch
from botorch.test_functions import Branin, Hartmann
from torch import Tensor

Value = Callable[[Tensor, int, int], Tensor]

#: the drift problems' shapes
SHAPES = ("abrupt", "mild", "gradual", "periodic", "stationary")


@cache
def _hartmann(d: int) -> Hartmann:
    return Hartmann(dim=d)


@cache
def _branin() -> Branin:
    # Branin's formula holds everywhere: wider bounds let a turned square (corners
    # up to 0.21 outside the unit square) be evaluated
    return Branin(bounds=[(-10.0, 15.0), (-5.0, 20.0)])


def branin(x: Tensor) -> Tensor:
    """Branin on the unit square (``... x 2``), minimized."""
    scale = torch.tensor([15.0, 15.0], dtype=x.dtype)
    return _branin()(x * scale + torch.tensor([-5.0, 0.0], dtype=x.dtype))


def hartmann(d: int) -> Callable[[Tensor], Tensor]:
    """Hartmann in ``d`` = 3, 4 or 6 dimensions, minimized."""
    return lambda x: _hartmann(d)(x)


def rotate(x: Tensor, angle: float) -> Tensor:
    """The first two coordinates of ``x`` turned by ``angle`` about the centre."""
    c, s = math.cos(angle), math.sin(angle)
    u = x - 0.5
    return (
        torch.stack([c * u[..., 0] - s * u[..., 1], s * u[..., 0] + c * u[..., 1]], -1)
        + 0.5
    )


def reflect(x: Tensor, dims: tuple[int, ...] | None = None) -> Tensor:
    """``x`` with the coordinates ``dims`` (``None``: all) mapped to ``1 - x``."""
    if dims is None:
        return 1.0 - x
    out = x.clone()
    out[..., list(dims)] = 1.0 - x[..., list(dims)]
    return out


def bumps(centres: Tensor, heights: Tensor, width: float) -> Callable[[Tensor], Tensor]:
    """Gaussian bumps (minimized: ``-sum_j h_j exp(-|x - c_j|^2 / (2 w^2 d))``;
    the width scales with the dimension's diameter)."""
    d = centres.shape[-1]

    def f(x: Tensor) -> Tensor:
        sq = ((x.unsqueeze(-2) - centres.to(x)) ** 2).sum(-1)
        return -(heights.to(x) * torch.exp(-sq / (2.0 * width**2 * d))).sum(-1)

    return f


def _centres(d: int, n: int, seed: int) -> Tensor:
    g = torch.Generator().manual_seed(seed)
    return 0.15 + 0.7 * torch.rand(n, d, generator=g, dtype=torch.double)


@dataclass(frozen=True)
class DriftProblem:
    """A drift problem: ``shape`` (:data:`SHAPES`), its half (``"dev"`` or
    ``"validation"``), horizon ``trials``, Gaussian observation noise of standard
    deviation ``noise`` (objective units; 0: noise-free), the share of the run at
    which an abrupt change happens (``change``), and ``phase(t, T)``: a key equal
    for trials with the same objective (their optimum is computed once)."""

    name: str
    title: str
    shape: str
    half: str
    dim: int
    trials: int
    value: Value
    noise: float = 0.0
    change: float | None = None
    phase: Callable[[int, int], object] | None = None
    cost: None = None  # no budget (the runner's problems share the field)

    @property
    def kind(self) -> str:
        return "drift"

    @property
    def change_trial(self) -> int | None:
        """The first trial of the changed objective (abrupt problems)."""
        return None if self.change is None else math.ceil(self.change * self.trials)


def _switch(before: Callable, after: Callable, at: float) -> tuple[Value, Callable]:
    def value(x: Tensor, t: int, T: int) -> Tensor:
        return before(x) if t < at * T else after(x)

    return value, lambda t, T: t >= at * T


def _still(f: Callable) -> tuple[Value, Callable]:
    return (lambda x, t, T: f(x)), (lambda t, T: 0)


def _problems() -> list[DriftProblem]:
    h3, h4, h6 = hartmann(3), hartmann(4), hartmann(6)
    out = []

    def add(name, title, shape, half, dim, trials, vp, noise=0.0, change=None):
        value, phase = vp if isinstance(vp, tuple) else (vp, None)
        out.append(
            DriftProblem(
                name, title, shape, half, dim, trials, value, noise, change, phase
            )
        )

    # ---- the development half
    add(
        "branin-flip",
        "Branin turned by 180 degrees at 40 % of the run (2-D)",
        "abrupt",
        "dev",
        2,
        100,
        _switch(branin, lambda x: branin(1.0 - x), 0.4),
        change=0.4,
    )
    add(
        "hartmann6-flip",
        "Hartmann-6, every coordinate reflected at half the run (6-D)",
        "abrupt",
        "dev",
        6,
        120,
        _switch(h6, lambda x: h6(reflect(x)), 0.5),
        change=0.5,
    )
    add(
        "hartmann3-mild",
        "Hartmann-3, x1 reflected at 40 % of the run, noisy (3-D)",
        "mild",
        "dev",
        3,
        120,
        _switch(h3, lambda x: h3(reflect(x, (0,))), 0.4),
        noise=0.05,
        change=0.4,
    )
    add(
        "branin-spin",
        "Branin turning about the centre by 180 degrees over the run (2-D)",
        "gradual",
        "dev",
        2,
        100,
        lambda x, t, T: branin(rotate(x, math.pi * t / T)),
    )
    c4 = _centres(4, 3, 4)
    add(
        "bumps4-glide",
        "4-D bumps, the highest gliding across the cube, noisy (4-D)",
        "gradual",
        "dev",
        4,
        150,
        lambda x, t, T: bumps(
            torch.stack([c4[0] + (t / T) * (c4[1] - c4[0]), c4[2]]),
            torch.tensor([1.0, 0.6], dtype=torch.double),
            0.2,
        )(x),
        noise=0.02,
    )
    add(
        "hartmann3-periodic",
        "Hartmann-3 blending into its reflection and back every 60 trials (3-D)",
        "periodic",
        "dev",
        3,
        150,
        lambda x, t, T: (lambda w: (1 - w) * h3(x) + w * h3(reflect(x)))(
            (1 - math.cos(2 * math.pi * t / 60)) / 2
        ),
    )
    add(
        "hartmann6-still",
        "Hartmann-6, no change: the control (6-D)",
        "stationary",
        "dev",
        6,
        100,
        _still(h6),
    )
    # ---- the validation half
    add(
        "hartmann4-flip",
        "Hartmann-4, every coordinate reflected at half the run (4-D)",
        "abrupt",
        "validation",
        4,
        150,
        _switch(h4, lambda x: h4(reflect(x)), 0.5),
        change=0.5,
    )
    c10a, c10b = _centres(10, 2, 10), _centres(10, 2, 11)
    heights = torch.tensor([1.0, 0.7], dtype=torch.double)
    add(
        "bumps10-jump",
        "10-D bumps that jump to new places at half the run, noisy (10-D)",
        "abrupt",
        "validation",
        10,
        150,
        _switch(bumps(c10a, heights, 0.25), bumps(c10b, heights, 0.25), 0.5),
        noise=0.02,
        change=0.5,
    )
    add(
        "hartmann4-mild",
        "Hartmann-4, x2 reflected at 40 % of the run, noisy (4-D)",
        "mild",
        "validation",
        4,
        150,
        _switch(h4, lambda x: h4(reflect(x, (1,))), 0.4),
        noise=0.05,
        change=0.4,
    )
    add(
        "hartmann6-blend",
        "Hartmann-6 blending into its reflection over the run (6-D)",
        "gradual",
        "validation",
        6,
        150,
        lambda x, t, T: (1 - t / T) * h6(x) + t / T * h6(reflect(x)),
    )
    c3 = _centres(3, 3, 3)
    add(
        "bumps3-glide",
        "3-D bumps, the highest gliding along a line, noisy (3-D)",
        "gradual",
        "validation",
        3,
        120,
        lambda x, t, T: bumps(
            torch.stack([c3[0] + (t / T) * (c3[1] - c3[0]), c3[2]]),
            torch.tensor([1.0, 0.6], dtype=torch.double),
            0.2,
        )(x),
        noise=0.02,
    )
    add(
        "branin-periodic",
        "Branin swinging by up to 180 degrees and back every 100 trials (2-D)",
        "periodic",
        "validation",
        2,
        300,
        lambda x, t, T: branin(
            rotate(x, math.pi * (1 - math.cos(2 * math.pi * t / 100)) / 2)
        ),
    )
    add(
        "hartmann3-still",
        "Hartmann-3, no change, noisy: the control (3-D)",
        "stationary",
        "validation",
        3,
        150,
        _still(h3),
        noise=0.05,
    )
    return out


DRIFT_PROBLEMS: dict[str, DriftProblem] = {p.name: p for p in _problems()}
#: the halves, fixed before any run
DEV = [n for n, p in DRIFT_PROBLEMS.items() if p.half == "dev"]
VALIDATION = [n for n, p in DRIFT_PROBLEMS.items() if p.half == "validation"]

__all__ = [
    "DEV",
    "DRIFT_PROBLEMS",
    "SHAPES",
    "VALIDATION",
    "DriftProblem",
    "branin",
    "bumps",
    "hartmann",
    "reflect",
    "rotate",
]
