"""The Ax benchmark's test half (issue 51), written before any run of that issue:
eight problems no default was chosen or looked at on -- six in 8 to 25 dimensions,
multimodal ones, a rotated embedding, a noisy one and a tuning task -- run once at
the end of the work that needs them and reported as they come out. Functions whose
minimizer is the box's centre are shifted (the strategies may start at the centre)."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np
import torch
from botorch.test_functions import (
    DixonPrice,
    Hartmann,
    Levy,
    Michalewicz,
    Powell,
    Rastrigin,
    Shekel,
)
from botorch.test_functions.synthetic import SyntheticTestFunction

from bandit_experiments.ax_benchmark import tuning
from bandit_experiments.ax_benchmark.problems import Problem, Range

#: Hartmann-6's minimum and minimizer (BoTorch)
_HARTMANN6 = Hartmann(dim=6)
#: below Shekel-10's true minimum -10.5364431531 (BoTorch states -10.536443, above it)
_SHEKEL_MIN = -10.536444


class _Shifted:
    """``fn`` (noise-free) at ``x - shift`` of the parameters ``x0..x{d-1}``."""

    def __init__(self, fn: SyntheticTestFunction, shift: tuple[float, ...]) -> None:
        self.fn, self.shift = fn, torch.tensor(shift, dtype=torch.double)

    def __call__(self, p: Mapping[str, Any]) -> float:
        x = torch.tensor([[float(p[f"x{i}"]) for i in range(self.fn.dim)]])
        return float(self.fn.evaluate_true(x.double() - self.shift))


def _shift(name: str, d: int, width: float) -> tuple[float, ...]:
    """A fixed shift in ``[-width, width]^d``, seeded by the problem's name."""
    rng = np.random.default_rng([zlib.crc32(name.encode()), 51])
    return tuple(rng.uniform(-width, width, size=d).tolist())


def _shifted(
    name: str,
    title: str,
    cls: type[SyntheticTestFunction],
    d: int,
    box: tuple[float, float],
    width: float,
    **extra: Any,
) -> Problem:
    """``cls`` in ``d`` dimensions on ``box^d``, moved by :func:`_shift` (its
    minimizer with it; its own bounds widened by the shift)."""
    shift = _shift(name, d, width)
    fn = cls(dim=d, bounds=[(box[0] - width, box[1] + width)] * d)
    opt = (np.asarray(fn.optimizers[0].tolist()) + np.asarray(shift)).tolist()
    params = tuple(Range(f"x{i}", box[0], box[1]) for i in range(fn.dim))
    point = {f"x{i}": v for i, v in enumerate(opt)}
    return Problem(
        name, title, params, _Shifted(fn, shift), fn.optimal_value, point, **extra
    )


@cache
def _rotation(d: int = 25, active: int = 6) -> np.ndarray:
    """``active x d`` orthonormal rows (a fixed random rotation's first rows)."""
    q, _ = np.linalg.qr(np.random.default_rng(5125).normal(size=(d, d)))
    return q[:active]


def _hartmann6_rotated(p: Mapping[str, Any]) -> float:
    """Hartmann-6 at ``0.5 + A (x - 0.5)`` (``A``: :func:`_rotation`, clipped to the
    unit cube) of 25 parameters in [0, 1]."""
    x = np.array([float(p[f"x{i}"]) for i in range(25)])
    z = np.clip(0.5 + _rotation() @ (x - 0.5), 0.0, 1.0)
    return float(_HARTMANN6.evaluate_true(torch.from_numpy(z[None, :]).double()))


def _hartmann6_rotated_problem() -> Problem:
    z = np.asarray(_HARTMANN6.optimizers[0].tolist())
    x = 0.5 + _rotation().T @ (z - 0.5)  # in the cube: checked by the tests
    return Problem(
        "hartmann6-rotated-25",
        "Hartmann-6 rotated into 25 dimensions (a 6-D subspace in general position)",
        tuple(Range(f"x{i}", 0.0, 1.0) for i in range(25)),
        _hartmann6_rotated,
        _HARTMANN6.optimal_value,
        {f"x{i}": float(v) for i, v in enumerate(x)},
    )


def _michalewicz_10(p: Mapping[str, Any]) -> float:
    x = torch.tensor([[float(p[f"x{i}"]) for i in range(10)]], dtype=torch.double)
    return float(Michalewicz(dim=10).evaluate_true(x))


TEST_PROBLEMS: tuple[Problem, ...] = (
    _shifted(
        "levy-12-shifted",
        "Levy (12-D, multimodal), shifted",
        Levy,
        12,
        (-10.0, 10.0),
        4.0,
    ),
    _shifted("powell-8-shifted", "Powell (8-D), shifted", Powell, 8, (-4.0, 5.0), 1.5),
    _shifted(
        "dixon-price-16-shifted",
        "Dixon-Price (16-D), shifted",
        DixonPrice,
        16,
        (-10.0, 10.0),
        4.0,
    ),
    _hartmann6_rotated_problem(),
    Problem(
        "michalewicz-10",
        "Michalewicz (10-D, steep multimodal; minimum value known, minimizer not)",
        tuple(Range(f"x{i}", 0.0, float(np.pi)) for i in range(10)),
        _michalewicz_10,
        -9.66015,
        None,
    ),
    _shifted(
        "rastrigin-8-shifted",
        "Rastrigin (8-D, multimodal), shifted",
        Rastrigin,
        8,
        (-5.12, 5.12),
        2.0,
    ),
    Problem(
        "shekel-noisy",
        "Shekel (4-D, 10 wells), observation noise sd 0.5",
        tuple(Range(f"x{i}", 0.0, 10.0) for i in range(4)),
        _Shifted(Shekel(m=10), (0.0,) * 4),
        _SHEKEL_MIN,
        {f"x{i}": v for i, v in enumerate(Shekel(m=10).optimizers[0].tolist())},
        noise_sd=0.5,
    ),
    Problem(
        "tune-rf-wine",
        "Random forest on wine: trees, depth, leaf size, feature share; 3-fold error",
        (
            Range("n_estimators", 5, 100, kind="int"),
            Range("max_depth", 1, 12, kind="int"),
            Range("min_samples_leaf", 1, 20, kind="int"),
            Range("max_features", 0.05, 1.0),
        ),
        tuning.rf_wine,
        0.0,
        None,
    ),
)

__all__ = ["TEST_PROBLEMS"]
