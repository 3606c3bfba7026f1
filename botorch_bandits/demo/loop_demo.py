"""The demo: IGP-UCB, GP-TS and GP-UCB on an RKHS function (Chowdhury & Gopalan
2017, §6) with a plain BoTorch loop: at every step a fixed-hyperparameter
``SingleTaskGP`` is built from the history, the acquisition function is built from
it, and the arm with the largest acquisition value is pulled."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import Tensor

from botorch_bandits._io import atomic_open, atomic_path
from botorch_bandits.acquisition import GPUCB, IGPUCB, GPThompsonSampling
from botorch_bandits.beta import GreedyGamma
from botorch_bandits.demo.summary import mean_and_standard_error
from botorch_bandits.models import fixed_gp
from botorch_bandits.test_functions.problems import FiniteArmProblem, rkhs_function

# public: what the tutorials use (the rest serves the reproductions)
__all__ = ["run_bandit"]

ALGORITHMS = ("IGP-UCB", "GP-TS", "GP-UCB")


def make_acquisition(
    name: str,
    model,
    problem: FiniteArmProblem,
    gamma: GreedyGamma,
    delta: float,
    seed: int,
):
    """The paper's acquisition function for ``name`` with the problem's constants.

    Args:
        name: The algorithm, one of :data:`ALGORITHMS` (``"IGP-UCB"``, ``"GP-TS"``
            or ``"GP-UCB"``).
        model: The GP of the history.
        problem: The problem, whose RKHS norm ``B`` and noise ``R`` the acquisition
            uses (and GP-TS its arms, as the candidates).
        gamma: The bound on the maximum information gain :math:`\\gamma_t`.
        delta: The confidence parameter.
        seed: GP-TS's draw seed (unused by the UCBs).

    Returns:
        The acquisition function: :class:`IGPUCB`, :class:`GPThompsonSampling` or
        :class:`GPUCB` (the RKHS schedule, ``B_squared = B**2``).

    Raises:
        ValueError: If ``name`` is not one of :data:`ALGORITHMS`.
    """
    B, R = problem.rkhs_norm, problem.noise_sd
    if name == "IGP-UCB":
        return IGPUCB(model, B=B, R=R, delta=delta, gamma=gamma)
    if name == "GP-TS":
        return GPThompsonSampling(
            model,
            B=B,
            R=R,
            delta=delta,
            gamma=gamma,
            candidates=problem.arms,
            seed=seed,
        )
    if name == "GP-UCB":
        # Srinivas et al. Thm 3: B bounds the squared RKHS norm
        return GPUCB(model, schedule="rkhs", B_squared=B**2, gamma=gamma, delta=delta)
    raise ValueError(f"`algorithm` must be one of {ALGORITHMS}, got {name!r}.")


def run_bandit(
    problem: FiniteArmProblem,
    algorithm: str,
    horizon: int,
    seed: int,
    gamma: GreedyGamma,
    delta: float = 0.1,
    progress=None,
) -> dict[str, Tensor]:
    """Run one algorithm for ``horizon`` steps; return chosen arms, observations and
    cumulative regret (every observation is kept).

    Args:
        problem: The finite-arm problem.
        algorithm: One of :data:`ALGORITHMS` (``"IGP-UCB"``, ``"GP-TS"`` or
            ``"GP-UCB"``).
        horizon: The number of steps.
        seed: The seed of the noise (and, with the step ``t``, of GP-TS's draws:
            ``seed * 100003 + t``).
        gamma: The bound on the maximum information gain :math:`\\gamma_t`, a
            fitted :class:`GreedyGamma` (on the problem's arms).
        delta: The confidence parameter (default 0.1).
        progress: A progress bar updated by one each step (default ``None``: none).

    Returns:
        ``"arms"`` (the indices of the chosen arms), ``"observations"`` (their noisy
        values) and ``"cumulative_regret"``, each of shape ``horizon``.

    Raises:
        ValueError: If ``algorithm`` is not one of :data:`ALGORITHMS`.

    Example:
        >>> problem = rkhs_function(kernel="rbf", seed=0)
        >>> K = problem.kernel(problem.arms).to_dense()
        >>> gamma = GreedyGamma(K, noise=problem.noise_sd**2, horizon=50).fit()
        >>> out = run_bandit(problem, "IGP-UCB", horizon=50, seed=0, gamma=gamma)
    """
    gen = torch.Generator().manual_seed(seed)
    arms, values = problem.arms, problem.values
    lam = problem.noise_sd**2
    chosen: list[int] = []
    observations: list[float] = []
    for t in range(1, horizon + 1):
        X = arms[chosen] if chosen else arms[:0]
        Y = torch.tensor(observations, dtype=arms.dtype).unsqueeze(-1)
        model = fixed_gp(X, Y, problem.kernel, lam)
        acqf = make_acquisition(
            algorithm, model, problem, gamma, delta, seed=seed * 100003 + t
        )
        with torch.no_grad():
            scores = acqf(arms.unsqueeze(-2))  # N
        idx = int(scores.argmax())
        y = float(values[idx]) + problem.noise_sd * float(
            torch.randn((), generator=gen, dtype=arms.dtype)
        )
        chosen.append(idx)
        observations.append(y)
        if progress is not None:
            progress.update(1)
    idx_t = torch.tensor(chosen)
    regret = problem.optimum - values[idx_t]
    return {
        "arms": idx_t,
        "observations": torch.tensor(observations, dtype=arms.dtype),
        "cumulative_regret": regret.cumsum(0),
    }


def run_demo(
    out_dir: str | Path = "runs/loop-demo",
    horizon: int = 100,
    seeds: int = 3,
    kernel: str = "rbf",
    algorithms: Sequence[str] = ALGORITHMS,
    show_progress: bool = True,
) -> dict[str, tuple[float, float]]:
    """Run the demo, write ``regret.csv`` and ``regret.png`` to ``out_dir``; return the
    final mean cumulative regret and its standard error per algorithm.

    Args:
        out_dir: The output folder, made if missing (default ``"runs/loop-demo"``).
        horizon: The steps of each run, >= 1 (default 100).
        seeds: The number of seeds, >= 1 (default 3): seed ``s`` runs every
            algorithm on the RKHS function of seed ``s``.
        kernel: The RKHS function's kernel, ``"rbf"`` (default) or ``"matern52"``.
        algorithms: The algorithms run (default :data:`ALGORITHMS`, all three).
        show_progress: Show a tqdm progress bar where tqdm is installed (default
            ``True``).

    Returns:
        Per algorithm, the mean and the standard error over seeds of the
        cumulative regret after the last step.

    Raises:
        ValueError: If ``horizon`` or ``seeds`` is below 1, or an algorithm is not
            one of :data:`ALGORITHMS`.

    Example:
        >>> summary = run_demo("runs/loop-demo", horizon=50, seeds=2)
    """
    if horizon < 1 or seeds < 1:
        raise ValueError(f"`horizon` and `seeds` must be >= 1, got {horizon}, {seeds}.")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the plot extra
        tqdm = None
    bar = (
        tqdm(total=horizon * seeds * len(algorithms), desc="demo", unit="step")
        if show_progress and tqdm is not None
        else None
    )
    curves: dict[str, list[Tensor]] = {a: [] for a in algorithms}
    for s in range(seeds):
        problem = rkhs_function(kernel=kernel, seed=s)
        with torch.no_grad():
            K = problem.kernel(problem.arms).to_dense()
        gamma = GreedyGamma(K, noise=problem.noise_sd**2, horizon=horizon).fit()
        for name in algorithms:
            if bar is not None:
                bar.set_postfix_str(f"{name} seed {s}")
            result = run_bandit(
                problem, name, horizon, seed=s, gamma=gamma, progress=bar
            )
            curves[name].append(result["cumulative_regret"])
    if bar is not None:
        bar.close()
    stats = {
        name: mean_and_standard_error(torch.stack(runs))
        for name, runs in curves.items()
    }
    summary = {
        name: (float(mean[-1]), float(se[-1])) for name, (mean, se) in stats.items()
    }
    rows = [
        (name, t + 1, float(mean[t]), float(se[t]))
        for name, (mean, se) in stats.items()
        for t in range(horizon)
    ]
    with atomic_open(out / "regret.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            ["algorithm", "step", "mean_cumulative_regret", "se_cumulative_regret"]
        )
        writer.writerows(rows)
    _plot(stats, out / "regret.png", kernel)
    return summary


def _plot(stats: dict[str, tuple[Tensor, Tensor]], path: Path, kernel: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, (mean, se) in stats.items():
        steps = torch.arange(1, mean.shape[0] + 1)
        ax.plot(steps, mean, label=name)
        ax.fill_between(steps, mean - se, mean + se, alpha=0.2)
    ax.set_xlabel("step t")
    ax.set_ylabel("cumulative regret R_t")
    ax.set_title(f"RKHS function ({kernel}, l = 0.2), mean ± s.e.")
    ax.legend()
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120)
    plt.close(fig)
