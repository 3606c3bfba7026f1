r"""Piecewise-stationary bandits and GP-UCB-CPD (Avanesov, §4) on the finite-arm engine:
the problem and the four algorithms. The settings the paper leaves unstated are
explicit options of :func:`simulate_piecewise`; docs/reproducing.md ("The
simulators") lists them. The detector's calibration and the power-law fits of the
figures are experiments (the repository's ``bandit_experiments.reproduction``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_bandits.acquisition.factory import Confidence, make_acquisition
from botorch_bandits.changepoint import (
    GPUCBCPD,
    PAPER_THRESHOLD_C,
    ChangePointDetector,
    IntegrationDomain,
    cpd_beta,
    cpd_noise_variance,
    cpd_threshold,
    finite_domain,
)
from botorch_bandits.models import FiniteArmGP
from botorch_bandits.test_functions.problems import (
    jittered_cholesky,
    make_kernel,
    one_thread,
)
from botorch_bandits.test_functions.simulator import ENGINE_DEFER
from botorch_bandits.validation import check_choice, check_count

# public: what the tutorials use (the rest serves the reproductions)
__all__ = [
    "DEFAULT_CPD_C",
    "PIECEWISE_ALGORITHMS",
    "PiecewiseProblem",
    "PiecewiseResult",
    "piecewise_gp_problem",
    "simulate_piecewise",
]

DEFAULT_CPD_C = 20.0
r"""The detector constant ``c`` of the experiments (:math:`\rho^{CPD}_n = c\,n^{-6/7}`),
chosen by the repository's detector calibration (``python -m bandit_experiments
cpd-detector``)."""

PIECEWISE_ALGORITHMS = ("GP-UCB-CPD", "GP-UCB-Oracle", "GP-UCB-NO-Detector", "GP-UCB")
"""The algorithms of Avanesov's experiments, for :func:`simulate_piecewise`: the
detector's restarts, restarts at the true change points (an oracle), uniform exploration
without restarts, and GP-UCB alone (one uniform step)."""

NOISE_VARIANCES = ("theorem", "noise")
"""Readings of the GP's sigma^2: Eq. 3.4's 6 g^2 log T, or the noise variance g^2."""

MEASURES = ("volume", "mean")
"""Readings of Algorithm 1's integral: over X as written, or the mean over X."""


def gp_noise_variance(
    problem: PiecewiseProblem, noise_variance: str = "theorem", log_base: float = math.e
) -> float:
    r"""The GP's :math:`\sigma^2` under a reading (:data:`NOISE_VARIANCES`).

    Args:
        problem: The problem (its ``noise_sd`` and ``horizon``).
        noise_variance: ``"theorem"`` (default: Eq. 3.4's
            :math:`6\mathfrak g^2\log T` over the problem's horizon,
            :func:`~botorch_bandits.changepoint.cpd_noise_variance`) or ``"noise"``
            (:math:`\mathfrak g^2`, the noise variance).
        log_base: The base of :math:`\log` of the ``"theorem"`` reading, > 1
            (default ``math.e``).

    Returns:
        :math:`\sigma^2`.

    Raises:
        ValueError: If ``noise_variance`` is not one of :data:`NOISE_VARIANCES` (or
            ``log_base`` <= 1 under ``"theorem"``).

    Example:
        >>> sigma2 = gp_noise_variance(problem, "noise")  # problem.noise_sd**2
    """
    check_choice("noise_variance", noise_variance, NOISE_VARIANCES)
    if noise_variance == "noise":
        return problem.noise_sd**2
    return cpd_noise_variance(problem.noise_sd, problem.horizon, log_base)


def detector_domain(
    problem: PiecewiseProblem, measure: str = "volume"
) -> IntegrationDomain:
    """The detector's integration rule under a reading (:data:`MEASURES`): the
    problem's midpoint rule of the integral over X, or the same points weighted to
    sum to 1 (the mean over X).

    Args:
        problem: The problem (its ``domain``).
        measure: ``"volume"`` (default: the integral over X) or ``"mean"`` (the
            mean over X).

    Returns:
        The :class:`~botorch_bandits.changepoint.IntegrationDomain`: the problem's
        own, or its points with the weights normalized.

    Raises:
        ValueError: If ``measure`` is not one of :data:`MEASURES`.

    Example:
        >>> domain = detector_domain(problem, "mean")  # weights summing to 1
    """
    check_choice("measure", measure, MEASURES)
    if measure == "volume":
        return problem.domain
    w = problem.domain.weights
    return IntegrationDomain(problem.domain.points, w / w.sum())


@dataclass(frozen=True)
class PiecewiseProblem:
    r"""``num_pieces`` functions per seed on a shared arm set, switching at evenly
    spaced change points.

    Attributes:
        name: Short name.
        arms: ``N x d`` arm set, shared by the seeds and the pieces.
        values: ``K x S x N`` the pieces' values on the arms.
        kernel: The GPyTorch kernel the pieces are drawn from (the detector's).
        K: ``N x N`` kernel matrix on the arms (the GP's prior).
        noise_sd: The standard deviation of the Gaussian observation noise.
        horizon: ``T``.
        change_points: The steps (0-based) at which pieces 2..K start.
        domain: The :class:`~botorch_bandits.changepoint.IntegrationDomain` the
            detector integrates over.
        alpha: The Matérn smoothness :math:`\alpha` in the detector's and
            :math:`\beta_t`'s rates (default 2.5).
    """

    name: str
    arms: Tensor
    values: Tensor
    kernel: Kernel
    K: Tensor
    noise_sd: float
    horizon: int
    change_points: tuple[int, ...]
    domain: IntegrationDomain
    alpha: float = 2.5

    @property
    def num_seeds(self) -> int:
        return self.values.shape[1]

    @property
    def num_pieces(self) -> int:
        return self.values.shape[0]

    def piece_index(self) -> Tensor:
        """``T`` long: the active piece at every step."""
        idx = torch.zeros(self.horizon, dtype=torch.long)
        for i, cp in enumerate(self.change_points, start=1):
            idx[cp:] = i
        return idx


def _cholesky_sample(K: Tensor, num: int, gen: torch.Generator) -> Tensor:
    """``num`` draws of N(0, K) (``num x N``) from one Cholesky factor
    (:func:`~botorch_bandits.test_functions.problems.jittered_cholesky`, one
    thread, so bit-identical anywhere)."""
    with one_thread():
        L = jittered_cholesky(K)
        z = torch.randn(K.shape[-1], num, generator=gen, dtype=K.dtype)
        return (L @ z).T


def piecewise_gp_problem(
    num_pieces: int = 3,
    horizon: int = 900,
    num_seeds: int = 64,
    num_points: int = 1000,
    lengthscale: float = 1.0,
    width: float = 5.0,
    noise_sd: float = 0.05,
    seed: int = 0,
) -> PiecewiseProblem:
    r"""Avanesov §4: ``num_pieces`` independent draws of GP(0, Matérn-5/2,
    :math:`\ell` = ``lengthscale``) per seed on ``num_points`` equally spaced points of
    [0, ``width``], evenly spaced change points over ``horizon`` steps, Gaussian noise
    sd ``noise_sd``. The detector integrates over the grid with weights
    ``width / num_points`` (the midpoint rule of :math:`\int_0^{5}`).

    Args:
        num_pieces: The number of pieces ``K`` >= 1 (default 3).
        horizon: The horizon ``T`` >= ``num_pieces`` (default 900); piece ``i``
            starts at step ``round(i * T / K)``.
        num_seeds: The number of seeds ``S`` >= 1 (default 64).
        num_points: The grid size ``N`` (default 1000).
        lengthscale: The Matérn-5/2 lengthscale :math:`\ell` (default 1.0).
        width: The domain's width: the grid spans [0, ``width``] (default 5.0).
        noise_sd: The noise standard deviation (default 0.05).
        seed: Seed of the draws (default 0).

    Returns:
        The :class:`PiecewiseProblem` ``"pw-matern52-K{num_pieces}-T{horizon}"``:
        the ``N x 1`` grid, ``K x S x N`` values and ``K - 1`` change points.

    Raises:
        ValueError: If ``num_seeds``, ``num_pieces`` or ``horizon`` is not an
            integer >= 1, or ``horizon`` < ``num_pieces``.

    Example:
        >>> problem = piecewise_gp_problem(num_pieces=4, horizon=1200, num_seeds=16)
        >>> problem.values.shape, problem.change_points
        (torch.Size([4, 16, 1000]), (300, 600, 900))
    """
    check_count("num_seeds", num_seeds, 1)
    for name, value, low in (("num_pieces", num_pieces, 1), ("horizon", horizon, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"`{name}` must be an integer >= {low}, got {value!r}.")
    if horizon < num_pieces:
        raise ValueError(
            f"`horizon` ({horizon}) must be at least `num_pieces` ({num_pieces})."
        )
    dtype = torch.double
    grid = torch.linspace(0, width, num_points, dtype=dtype).unsqueeze(-1)
    kernel = make_kernel("matern52", lengthscale, dtype)
    with torch.no_grad():
        K = kernel(grid).to_dense()
    gen = torch.Generator().manual_seed(seed)
    values = _cholesky_sample(K, num_pieces * num_seeds, gen)
    values = values.reshape(num_pieces, num_seeds, num_points)
    cps = tuple(round(i * horizon / num_pieces) for i in range(1, num_pieces))
    return PiecewiseProblem(
        name=f"pw-matern52-K{num_pieces}-T{horizon}",
        arms=grid,
        values=values,
        kernel=kernel,
        K=K,
        noise_sd=float(noise_sd),
        horizon=horizon,
        change_points=cps,
        domain=finite_domain(grid, volume=width),
    )


@dataclass
class PiecewiseResult:
    """Per-step records (``T x S``) and the restarts of every seed.

    Attributes:
        problem: The problem's name.
        algorithm: The algorithm's name.
        arms: ``T x S`` indices of the pulled arms.
        values: ``T x S`` true values (the active piece's) of the pulled arms.
        observations: ``T x S`` noisy observations of them.
        optimum: ``T x S``: the active piece's optimum.
        uniform: ``T x S`` bool: uniform exploration steps.
        restarts: Per seed: the steps (0-based) at which it restarted.
        change_points: The problem's change points within the run.
    """

    problem: str
    algorithm: str
    arms: Tensor
    values: Tensor
    observations: Tensor
    optimum: Tensor  # T x S: the active piece's optimum
    uniform: Tensor  # T x S bool: uniform exploration steps
    restarts: list[list[int]] = field(default_factory=list)  # per seed: steps (0-based)
    change_points: tuple[int, ...] = ()

    @property
    def cumulative_regret(self) -> Tensor:
        """Dynamic regret :math:`R_t` (against the active piece's optimum)."""
        return (self.optimum - self.values).cumsum(0)

    @property
    def average_regret(self) -> Tensor:
        steps = torch.arange(1, self.values.shape[0] + 1, dtype=self.values.dtype)
        return self.cumulative_regret / steps.unsqueeze(-1)

    def detection_delays(self) -> tuple[list[int], int, int]:
        """(delays of the first restart after each change point and before the next
        one, in steps; number of missed changes; number of false alarms = restarts
        not preceded by an undetected change point), over all seeds."""
        T = self.values.shape[0]
        bounds = [*self.change_points, T]
        delays, missed, false = [], 0, 0
        for restarts in self.restarts:
            rs = sorted(restarts)
            used = set()
            for i, cp in enumerate(self.change_points):
                hit = [r for r in rs if cp <= r < bounds[i + 1]]
                if hit:
                    delays.append(hit[0] - cp)
                    used.add(hit[0])
                else:
                    missed += 1
            false += len([r for r in rs if r not in used])
        return delays, missed, false


def simulate_piecewise(
    problem: PiecewiseProblem,
    algorithm: str,
    horizon: int | None = None,
    *,
    xi: float = math.sqrt(3.0),
    D: float = 0.02,
    c: float = DEFAULT_CPD_C,
    C: float = PAPER_THRESHOLD_C,
    seed: int = 0,
    progress: Any = None,
    log_base: float = math.e,
    noise_variance: str = "theorem",
    measure: str = "volume",
    defer: int | None = ENGINE_DEFER,
) -> PiecewiseResult:
    r"""Run ``algorithm`` (one of :data:`PIECEWISE_ALGORITHMS`) on every seed at once.
    GP-UCB's posterior on ``H`` is the exact finite-arm engine (prior GP(0, k), noise
    :math:`\sigma^2`, by default :math:`6\mathfrak g^2\log T`); a restart resets the
    seed's engine to the prior. Uniform steps draw arms uniformly from the grid (the
    discretized :math:`U[\mathcal X]`). ``log_base``, ``noise_variance`` and
    ``measure`` are the readings of the settings the paper leaves unstated
    (docs/reproducing.md, "The simulators"); the defaults are the natural log, Eq.
    3.4's :math:`\sigma^2` and the integral over X as Algorithm 1 writes it.
    ``defer``: the engine's collected downdates (:class:`FiniteArmGP`; ``None``: one
    per observation, bit-for-bit reproducible across machines, several times
    slower).

    Args:
        problem: The piecewise-stationary problem.
        algorithm: One of :data:`PIECEWISE_ALGORITHMS`.
        horizon: The steps to run, an integer in [1, ``problem.horizon``] (default
            ``None``: ``problem.horizon``).
        xi: GP-UCB-CPD's :math:`\xi` (default :math:`\sqrt 3`; plain GP-UCB
            uses 0).
        D: The constant of :math:`\beta_t`
            (:func:`~botorch_bandits.changepoint.cpd_beta`, default 0.02).
        c: The detector's constant of :math:`\rho^{CPD}_n` (default
            :data:`DEFAULT_CPD_C`).
        C: The threshold's constant
            (:func:`~botorch_bandits.changepoint.cpd_threshold`, default
            :data:`~botorch_bandits.changepoint.PAPER_THRESHOLD_C`); GP-UCB-Oracle
            and GP-UCB-NO-Detector use an infinite threshold.
        seed: Seed of the uniform arms and the noise (default 0).
        progress: A tqdm-like object (``update(n)``), advanced once per step.
        log_base: The base of :math:`\log` in :math:`\beta_t` and :math:`\sigma^2`
            (default ``math.e``).
        noise_variance: The reading of :math:`\sigma^2` (:func:`gp_noise_variance`,
            default ``"theorem"``).
        measure: The reading of the detector's integral (:func:`detector_domain`,
            default ``"volume"``).
        defer: The engine's collected downdates (default
            :data:`~botorch_bandits.test_functions.simulator.ENGINE_DEFER`).

    Returns:
        The :class:`PiecewiseResult` (``T x S`` records and each seed's restarts).

    Raises:
        ValueError: If ``algorithm``, ``noise_variance`` or ``measure`` is unknown,
            ``horizon`` is out of range, or ``D`` or ``log_base`` is invalid.

    Example:
        >>> problem = piecewise_gp_problem(num_pieces=4, horizon=1200, num_seeds=16)
        >>> res = simulate_piecewise(problem, "GP-UCB-CPD", seed=0)
        >>> delays, missed, false_alarms = res.detection_delays()
    """
    T, sigma2, xi, detector = _piecewise_settings(
        problem, algorithm, horizon, xi, D, c, C, log_base, noise_variance, measure
    )
    S, N = problem.num_seeds, problem.arms.shape[0]
    engine = FiniteArmGP(problem.arms, problem.K, sigma2, num_seeds=S, defer=defer)
    X = engine.score_points
    cpd = _state_machines(problem, detector, xi, algorithm == "GP-UCB-CPD")
    pieces = problem.piece_index()
    optima = problem.values.max(-1).values  # K x S
    gen = torch.Generator().manual_seed(seed)
    arms_t = torch.empty(T, S, dtype=torch.long)
    f_t = torch.empty(T, S, dtype=torch.double)
    y_t = torch.empty(T, S, dtype=torch.double)
    u_t = torch.zeros(T, S, dtype=torch.bool)
    oracle_resets = (
        set(problem.change_points) if algorithm == "GP-UCB-Oracle" else set()
    )
    for t in range(T):
        if t in oracle_resets:
            engine.reset()
            for algo in cpd:
                algo.reset()
        uniform = torch.tensor([algo.next_is_uniform() for algo in cpd])
        idx = torch.randint(N, (S,), generator=gen)  # drawn every step (same stream)
        if not bool(uniform.all()):
            idx = torch.where(
                uniform, idx, _ucb_argmax(engine, X, problem, D, log_base)
            )
        piece = int(pieces[t])
        f = problem.values[piece].gather(-1, idx.unsqueeze(-1)).squeeze(-1)
        y = f + problem.noise_sd * torch.randn(S, generator=gen, dtype=torch.double)
        engine.observe(idx, y)
        arms_t[t], f_t[t], y_t[t], u_t[t] = idx, f, y, uniform
        _record(cpd, engine, idx, y, uniform)
        if progress is not None:
            progress.update(1)
    return PiecewiseResult(
        problem=problem.name,
        algorithm=algorithm,
        arms=arms_t,
        values=f_t,
        observations=y_t,
        optimum=optima[pieces[:T]],
        uniform=u_t,
        restarts=[list(algo.state.restarts) for algo in cpd],
        change_points=tuple(cp for cp in problem.change_points if cp < T),
    )


def _state_machines(
    problem: PiecewiseProblem,
    detector: ChangePointDetector,
    xi: float,
    scans: bool,
) -> list[GPUCBCPD]:
    """GP-UCB-CPD, the state machine the decision core replays, one per seed, on
    the arm set (its scans slice the precomputed G and k; ``scans=False``: a
    detector that never fires, which needs neither)."""
    gram = detector.gram(problem.arms) if scans else None
    return [
        GPUCBCPD(
            detector,
            xi=xi,
            points=problem.arms,
            gram=gram,
            kernel_matrix=problem.K if scans else None,
        )
        for _ in range(problem.num_seeds)
    ]


def _record(
    cpd: list[GPUCBCPD], engine: FiniteArmGP, idx: Tensor, y: Tensor, uniform: Tensor
) -> None:
    """Each seed's step recorded by its state machine (a uniform step scans); the
    engine of a seed that restarted goes back to the prior."""
    reset = torch.tensor(
        [
            algo.record(int(i), float(v), uniform=bool(u))
            for algo, i, v, u in zip(cpd, idx, y, uniform, strict=True)
        ]
    )
    if bool(reset.any()):
        engine.reset(reset)


def _piecewise_settings(
    problem: PiecewiseProblem,
    algorithm: str,
    horizon: int | None,
    xi: float,
    D: float,
    c: float,
    C: float,
    log_base: float,
    noise_variance: str,
    measure: str,
) -> tuple[int, float, float, ChangePointDetector]:
    r"""The run's checked horizon, the GP's noise variance, :math:`\xi` (0 for plain
    GP-UCB) and the detector (one that never fires without GP-UCB-CPD)."""
    if algorithm not in PIECEWISE_ALGORITHMS:
        raise ValueError(
            f"`algorithm` must be one of {list(PIECEWISE_ALGORITHMS)}, got {algorithm!r}."
        )
    cpd_beta(1, D, problem.horizon, problem.alpha, 1, log_base)  # checks D, log_base
    T = problem.horizon if horizon is None else horizon
    if isinstance(T, bool) or not isinstance(T, int) or not 1 <= T <= problem.horizon:
        raise ValueError(
            f"`horizon` must be an integer in [1, {problem.horizon}], got {T!r}."
        )
    sigma2 = gp_noise_variance(problem, noise_variance, log_base)
    domain = detector_domain(problem, measure)
    if algorithm == "GP-UCB":
        xi = 0.0
    threshold = (
        math.inf if algorithm in ("GP-UCB-NO-Detector", "GP-UCB-Oracle") else None
    )
    d = problem.arms.shape[-1]
    detector = ChangePointDetector(
        problem.kernel,
        domain,
        c=c,
        threshold=threshold
        if threshold is not None
        else (lambda n: cpd_threshold(n, C, problem.alpha, d)),
        alpha=problem.alpha,
        d=d,
    )
    return T, sigma2, xi, detector


def _ucb_argmax(
    engine: FiniteArmGP, X: Tensor, problem: PiecewiseProblem, D: float, log_base: float
) -> Tensor:
    r"""Each seed's GP-UCB arm on its history ``H``: :math:`\mu + \sqrt{\beta_t}
    \sigma` (Eq. 2.5) with :math:`\beta_t` of the seed's :math:`|H|`."""
    d = problem.arms.shape[-1]
    beta = torch.tensor(
        [
            cpd_beta(max(n, 1), D, problem.horizon, problem.alpha, d, log_base)
            for n in engine.num_observations_.tolist()
        ],
        dtype=torch.double,
    )
    # one multiplier per seed (seeds x 1: BoTorch keeps the q dim of mean and sigma
    # before squeezing)
    ucb = make_acquisition(engine, "GP-UCB", Confidence(beta=beta.sqrt().unsqueeze(-1)))
    with torch.no_grad():
        return ucb(X).argmax(0)  # N x S -> S
