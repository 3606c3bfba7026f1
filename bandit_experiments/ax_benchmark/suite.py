"""The Ax benchmark's problems and their split, fixed before any default was chosen
on them: a development half (the seven original problems, on which the practical
defaults were first developed, and four more) where defaults are chosen, and a
validation half that is only reported. BoTorch's test functions (smooth,
multimodal, noisy, integer, 2 to 30 dimensions, a linear constraint), a categorical
problem and three scikit-learn tuning tasks (``tuning``)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np
import torch
from botorch.test_functions import (
    Ackley,
    Hartmann,
    Levy,
    Rosenbrock,
    SixHumpCamel,
    StyblinskiTang,
)
from botorch.test_functions.synthetic import SyntheticTestFunction

from bandit_experiments.ax_benchmark import tuning
from bandit_experiments.ax_benchmark.problems import (
    ORIGINAL_PROBLEMS,
    Choice,
    Problem,
    Range,
)
from bandit_experiments.ax_benchmark.test_half import TEST_PROBLEMS


class _Synthetic:
    """A BoTorch test function (noise-free) of the parameters ``x0..x{d-1}``."""

    def __init__(self, fn: SyntheticTestFunction) -> None:
        self.fn = fn

    def __call__(self, p: Mapping[str, Any]) -> float:
        x = [float(p[f"x{i}"]) for i in range(self.fn.dim)]
        return float(self.fn.evaluate_true(torch.tensor([x], dtype=torch.double)))


def _synthetic(
    name: str,
    title: str,
    fn: SyntheticTestFunction,
    kind: str = "float",
    optimizer: tuple[float, ...] | None = None,
    optimum: float | None = None,
    **extra: Any,
) -> Problem:
    """A problem on ``fn``'s box (``kind="int"``: integer parameters), its minimum
    and minimizer from BoTorch unless given."""
    params = tuple(
        Range(f"x{i}", float(lo), float(hi), kind=kind)
        for i, (lo, hi) in enumerate(fn.bounds.T.tolist())
    )
    opt = optimizer if optimizer is not None else tuple(fn.optimizers[0].tolist())
    point = {f"x{i}": (int(v) if kind == "int" else v) for i, v in enumerate(opt)}
    value = fn.optimal_value if optimum is None else optimum
    return Problem(name, title, params, _Synthetic(fn), value, point, **extra)


#: below the true minimum -1.0316284535 (BoTorch states -1.0316, above it)
_CAMEL_MIN = -1.031629
_LEVELS = ("a", "b", "c", "d")


@cache
def _categorical_tables() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2026)
    return rng.normal(size=(6, 4)), rng.normal(size=(5, 4, 4))


def _categorical(p: Mapping[str, Any]) -> float:
    """Main effects plus interactions of neighbouring parameters, from fixed random
    tables (6 parameters, 4 levels each)."""
    main, pair = _categorical_tables()
    v = [_LEVELS.index(p[f"c{i}"]) for i in range(6)]
    return float(
        sum(main[i, v[i]] for i in range(6))
        + sum(pair[i, v[i], v[i + 1]] for i in range(5))
    )


def _categorical_problem() -> Problem:
    main, pair = _categorical_tables()
    grid = np.array(list(itertools.product(range(4), repeat=6)))  # every configuration
    values = main[np.arange(6), grid].sum(-1) + sum(
        pair[i, grid[:, i], grid[:, i + 1]] for i in range(5)
    )
    best = grid[int(values.argmin())]
    point = {f"c{i}": _LEVELS[int(best[i])] for i in range(6)}
    return Problem(
        "categorical-6",
        "6 choice parameters of 4 levels (main effects + neighbour interactions)",
        tuple(Choice(f"c{i}", _LEVELS) for i in range(6)),
        _categorical,
        _categorical(point),
        point,
    )


_NEW = (
    _synthetic("ackley-5", "Ackley (5-D, multimodal)", Ackley(dim=5)),
    _synthetic("rosenbrock-4", "Rosenbrock (4-D, smooth valley)", Rosenbrock(dim=4)),
    _synthetic(
        "styblinski-tang-int-6",
        "Styblinski-Tang on integers in [-5, 5] (6-D)",
        StyblinskiTang(dim=6),
        kind="int",
        optimizer=(-3,) * 6,
        optimum=-234.0,
    ),
    Problem(
        "tune-svm-digits",
        "SVC on digits: log C, log gamma; 3-fold error",
        (
            Range("C", 1e-2, 1e3, log=True),
            Range("gamma", 1e-5, 1e-1, log=True),
        ),
        tuning.svm_digits,
        0.0,
        None,
    ),
    # ------------------------------------------------------------- validation
    _synthetic(
        "six-hump-camel", "Six-hump camel (2-D)", SixHumpCamel(), optimum=_CAMEL_MIN
    ),
    _synthetic("hartmann3", "Hartmann3 (3-D)", Hartmann(dim=3)),
    _synthetic(
        "levy-4-constrained",
        "Levy (4-D), x0 + x1 <= 2",
        Levy(dim=4),
        constraints=("x0 + x1 <= 2",),
    ),
    _synthetic(
        "styblinski-tang-8", "Styblinski-Tang (8-D, separable)", StyblinskiTang(dim=8)
    ),
    _synthetic("ackley-10", "Ackley (10-D, multimodal)", Ackley(dim=10)),
    _synthetic("levy-30", "Levy (30-D)", Levy(dim=30)),
    _synthetic("levy-int-5", "Levy on integers in [-10, 10] (5-D)", Levy(dim=5), "int"),
    _categorical_problem(),
    _synthetic(
        "six-hump-camel-noisy",
        "Six-hump camel, observation noise sd 0.2",
        SixHumpCamel(),
        optimum=_CAMEL_MIN,
        noise_sd=0.2,
    ),
    Problem(
        "tune-hgb-breast-cancer",
        "Gradient boosting on breast cancer: log lr, leaves, leaf size, log L2",
        (
            Range("learning_rate", 1e-3, 1.0, log=True),
            Range("max_leaf_nodes", 2, 64, kind="int"),
            Range("min_samples_leaf", 1, 64, kind="int"),
            Range("l2_regularization", 1e-6, 10.0, log=True),
        ),
        tuning.hgb_breast_cancer,
        0.0,
        None,
    ),
    Problem(
        "tune-kernel-ridge-diabetes",
        "Kernel ridge on diabetes: log alpha, log gamma, kernel; 5-fold MSE / var",
        (
            Range("alpha", 1e-4, 10.0, log=True),
            Range("gamma", 1e-4, 1.0, log=True),
            Choice("kernel", ("rbf", "laplacian")),
        ),
        tuning.kernel_ridge_diabetes,
        0.0,
        None,
    ),
)

PROBLEMS: dict[str, Problem] = {
    **ORIGINAL_PROBLEMS,
    **{p.name: p for p in _NEW},
    **{p.name: p for p in TEST_PROBLEMS},
}
"""Every problem of the benchmark by name."""

HALVES: dict[str, tuple[str, ...]] = {
    "development": (
        *ORIGINAL_PROBLEMS,
        "ackley-5",
        "rosenbrock-4",
        "styblinski-tang-int-6",
        "tune-svm-digits",
    ),
    "validation": (
        "six-hump-camel",
        "hartmann3",
        "levy-4-constrained",
        "styblinski-tang-8",
        "ackley-10",
        "levy-30",
        "levy-int-5",
        "categorical-6",
        "six-hump-camel-noisy",
        "tune-hgb-breast-cancer",
        "tune-kernel-ridge-diabetes",
    ),
    # issue 51's fresh half, added before any of its runs (the validation half had
    # been looked at twice by then): run once, at the end, never by default
    "test": tuple(p.name for p in TEST_PROBLEMS),
}
"""The split, fixed in the code before any tuning: defaults are chosen on the
development half only; the validation half is reported, never tuned on; the test
half (:mod:`~bandit_experiments.ax_benchmark.test_half`) runs only when
asked for by name or with ``--half test``."""


def half_of(problem: str) -> str:
    """``"development"``, ``"validation"`` or ``"test"``."""
    return next(h for h, names in HALVES.items() if problem in names)
