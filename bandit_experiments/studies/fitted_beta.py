r"""What the theory's B, R, δ and γ come to on a fitted ``SingleTaskGP``
(``python -m bandit_experiments beta-guide``; the numbers behind the docs page "Choosing B, R, δ
and β with fitted models"): :func:`fit_table` reads them and the multipliers they imply
off BoTorch's default model fitted on test functions, :func:`closed_loop` measures
what the choices cost in regret through ``ax.Client``.

References:
    Forrester's function: A. I. J. Forrester, A. Sóbester, A. J. Keane. *Engineering
    Design via Surrogate Modelling.* Wiley, 2008.
"""

from __future__ import annotations

import contextlib
import csv
import math
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from gpytorch.mlls import ExactMarginalLogLikelihood
from torch import Tensor

from bandit_experiments.ax_benchmark.problems import Range, unit_to_params
from bandit_experiments.ax_benchmark.results import BenchResult, summarize
from bandit_experiments.ax_benchmark.runner import run_job
from bandit_experiments.ax_benchmark.suite import PROBLEMS
from bandit_experiments.common.executors import worker_pool
from botorch_bandits._io import atomic_open
from botorch_bandits.beta import (
    gp_ts_scale,
    gp_ucb_beta_finite,
    gp_ucb_beta_rkhs,
    igp_ucb_beta,
    observed_information_gain,
)
from botorch_bandits.test_functions.problems import regularized_norm
from botorch_bandits.validation import check_count, check_open_unit

#: the fit table's problems
FIT_PROBLEMS = ("forrester", "branin", "hartmann6", "hartmann6-noisy")
#: the closed loop's problems (the Ax benchmark's)
LOOP_PROBLEMS = ("branin", "hartmann6")
#: GP-UCB Theorem 1's decision-set size in the table (the Ax node's default
#: ``num_candidates``)
NUM_ARMS = 512
#: the number of points whose median :math:`\hat B` the closed loop's ``B = B̂`` uses
B_HAT_AT = 30


def _forrester(u: Tensor) -> Tensor:
    x = u[..., 0]
    return (6.0 * x - 2.0) ** 2 * torch.sin(12.0 * x - 4.0)


def _ax_problem(name: str) -> tuple[int, Callable[[Tensor], Tensor], float]:
    prob = PROBLEMS[name]
    ranges = [p for p in prob.parameters if isinstance(p, Range)]
    if len(ranges) != len(prob.parameters) or any(r.log for r in ranges):
        raise ValueError(f"{name!r} is not a box of linear float ranges.")

    def function(u: Tensor) -> Tensor:
        values = [prob(unit_to_params(ranges, point)) for point in u.tolist()]
        return torch.tensor(values, dtype=u.dtype)

    return len(ranges), function, prob.noise_sd


def fit_problem(name: str) -> tuple[int, Callable[[Tensor], Tensor], float]:
    """``(dim, f, noise_sd)`` of a fit-table problem: ``f`` maps ``n x dim`` points
    of the unit cube to the ``n`` noise-free values (to be minimized)."""
    if name == "forrester":
        return 1, _forrester, 0.0
    if name not in FIT_PROBLEMS:
        raise ValueError(f"`problem` must be one of {FIT_PROBLEMS}, got {name!r}.")
    return _ax_problem(name)


@dataclass(frozen=True)
class FitRow:
    """One fitted model and the multipliers of :math:`\\sigma` it implies at
    :math:`t = n + 1` (standardized scale)."""

    problem: str
    n: int
    seed: int
    lengthscale: float  # geometric mean over dimensions
    R_hat: float  # fitted noise sd
    R_true: float  # the true noise sd on the standardized scale (noise sd / sd of y)
    gamma_hat: float  # observed information gain of the n points
    B_hat: float  # RKHS norm of the fitted posterior mean
    igp_ucb_B1: float  # beta_t, B = 1
    igp_ucb_Bhat: float  # beta_t, B = B_hat
    gp_ts_B1: float  # v_t, B = 1
    gp_ucb_thm1: float  # sqrt(beta_t), |D| = NUM_ARMS
    gp_ucb_thm3: float  # sqrt(2 B_hat^2 + 300 gamma_hat ln^3(t / delta))


def fit_row(problem: str, n: int, seed: int, delta: float = 0.1) -> FitRow:
    """Fit BoTorch's default ``SingleTaskGP`` on ``n`` Sobol points (scrambled with
    ``seed``) of ``problem`` (observations negated: the model maximizes) and read off
    :math:`\\hat R, \\hat\\gamma, \\hat B` and the multipliers."""
    check_count("n", n, 2)
    check_open_unit("delta", delta)
    dim, function, noise_sd = fit_problem(problem)
    X = (
        torch.quasirandom.SobolEngine(dim, scramble=True, seed=seed)
        .draw(n)
        .to(torch.double)
    )
    y = -function(X)
    if noise_sd > 0:
        gen = torch.Generator().manual_seed(10_000 + seed)
        y = y + noise_sd * torch.randn(n, generator=gen, dtype=torch.double)
    with warnings.catch_warnings(), torch.random.fork_rng():
        warnings.simplefilter("ignore")
        torch.manual_seed(seed)
        model = SingleTaskGP(X, y.unsqueeze(-1))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    model.eval()
    with torch.no_grad():
        (Xt,) = model.train_inputs
        K = model.covar_module(Xt).to_dense()
        lam = float(model.likelihood.noise.squeeze())
        B_hat = float(regularized_norm(model.train_targets, K, lam))
        lengthscale = float(
            model.covar_module.lengthscale.log().mean().exp()
            if hasattr(model.covar_module, "lengthscale")
            else math.nan
        )
    gamma = float(observed_information_gain(model))
    R_hat = math.sqrt(lam)
    t = n + 1
    return FitRow(
        problem=problem,
        n=n,
        seed=seed,
        lengthscale=lengthscale,
        R_hat=R_hat,
        R_true=noise_sd / float(y.std()),
        gamma_hat=gamma,
        B_hat=B_hat,
        igp_ucb_B1=float(igp_ucb_beta(gamma, 1.0, R_hat, delta)),
        igp_ucb_Bhat=float(igp_ucb_beta(gamma, B_hat, R_hat, delta)),
        gp_ts_B1=float(gp_ts_scale(gamma, 1.0, R_hat, delta)),
        gp_ucb_thm1=math.sqrt(gp_ucb_beta_finite(t, NUM_ARMS, delta)),
        gp_ucb_thm3=math.sqrt(float(gp_ucb_beta_rkhs(t, B_hat**2, gamma, delta))),
    )


def fit_table(
    problems: Sequence[str] = FIT_PROBLEMS,
    sizes: Sequence[int] = (10, 30, 100),
    seeds: int = 5,
    progress: Callable[[int, int], None] | None = None,
) -> list[FitRow]:
    r""":func:`fit_row` for every problem, size and seed ``0 .. seeds - 1``
    (``progress(done, total)``: called with the fits done, 0 first).

    Each row fits BoTorch's default ``SingleTaskGP`` (RBF kernel with
    :math:`k(x, x) = 1`, ``Standardize`` outcome transform, likelihood noise fitted) on
    ``n`` scrambled Sobol points of a test function in the unit cube, and reads off
    what the theorems need on the standardized scale the model works in:

    - :math:`\hat R`, the fitted noise standard deviation (the experiments' reading
      :math:`\lambda = R^2` of Chowdhury & Gopalan 2017, §6), next to the true noise
      sd on that scale (the noise sd divided by the sample sd of the observations);
    - :math:`\hat\gamma`, the information gain of the training points
      :math:`\tfrac12\log\det(I + \hat\lambda^{-1}K_n)` (``gamma="observed"``);
    - :math:`\hat B = \sqrt{\alpha^\top K_n\alpha}`,
      :math:`\alpha = (K_n + \hat\lambda I)^{-1} z`, the RKHS norm of the fitted
      posterior mean. With noise-free data it is a lower bound on :math:`\|f\|_k` for
      the fitted kernel (the regularized fit has at most the norm of the minimum-norm
      interpolant, which has at most the norm of any function through the data);
      with noise it is an estimate. The true norm is unknown either way.

    From these the multipliers of :math:`\sigma` at the next round :math:`t = n + 1`:
    IGP-UCB's :math:`\beta_t` (Chowdhury & Gopalan 2017, Alg. 1) with ``B = 1`` (the
    practical mode's default) and with :math:`B = \hat B`, GP-TS's :math:`v_t`
    (Alg. 2) with ``B = 1``, GP-UCB's Theorem 1 :math:`\sqrt{\beta_t}` for a
    512-point decision set and Theorem 3's
    :math:`\sqrt{2\hat B^2 + 300\hat\gamma\ln^3(t/\delta)}` with :math:`\hat\gamma`
    plugged in for :math:`\gamma_t` (Srinivas et al. 2010).

    The functions (all maximized as their negatives; parameters
    scaled to the unit cube): Forrester et al.'s 1-D function
    :math:`(6x - 2)^2\sin(12x - 4)` on :math:`[0, 1]`, Branin, Hartmann6 and
    Hartmann6 with noise sd 0.1 (the Ax benchmark's problems).
    """
    check_count("seeds", seeds, 1)
    cases = [(p, n, s) for p in problems for n in sizes for s in range(seeds)]
    rows: list[FitRow] = []
    if progress is not None:
        progress(0, len(cases))
    for case in cases:
        rows.append(fit_row(*case))
        if progress is not None:
            progress(len(rows), len(cases))
    return rows


def _median(rows: Sequence[FitRow], key: str) -> float:
    return statistics.median(getattr(r, key) for r in rows)


def fit_summary(rows: Sequence[FitRow]) -> list[dict[str, Any]]:
    """Medians over seeds per (problem, n)."""
    groups: dict[tuple[str, int], list[FitRow]] = {}
    for r in rows:
        groups.setdefault((r.problem, r.n), []).append(r)
    keys = [f.name for f in fields(FitRow)][3:]
    return [
        {"problem": p, "n": n, "seeds": len(g), **{k: _median(g, k) for k in keys}}
        for (p, n), g in groups.items()
    ]


def b_hat(rows: Sequence[FitRow], problem: str, n: int = B_HAT_AT) -> float:
    """The median :math:`\\hat B` of ``problem`` at ``n`` points, to two significant
    digits (the closed loop's ``B = B̂``)."""
    chosen = [r for r in rows if r.problem == problem and r.n == n]
    if not chosen:
        raise ValueError(f"no fit of {problem!r} at n = {n} in the rows.")
    value = _median(chosen, "B_hat")
    return float(f"{value:.2g}")


B_HAT_LABEL = "IGP-UCB, B = B̂"
r"""The closed loop's label of IGP-UCB with ``B`` = the problem's :math:`\hat B`."""


def loop_variants(B_hat: float) -> dict[str, tuple[str, dict[str, Any]]]:
    """Label -> (Ax benchmark strategy, node options) of the closed loop."""
    return {
        # B = 1 explicit: the default when the guide's table was measured (now 0.5)
        "IGP-UCB, B = 1": ("IGP-UCB", {"B": 1.0}),
        B_HAT_LABEL: ("IGP-UCB", {"B": B_hat}),
        "IGP-UCB, constant β = 0.5": ("IGP-UCB", {"beta": 0.5}),
        "IGP-UCB, constant β = 2": ("IGP-UCB", {"beta": 2.0}),
        "GP-TS, B = 1": ("GP-TS", {"B": 1.0}),
    }


def _loop_job(args: tuple[str, str, str, dict[str, Any], int, int]) -> dict[str, Any]:
    problem, label, strategy, kwargs, seed, trials = args
    return {
        **run_job(problem, strategy, seed, trials, node_kwargs=kwargs),
        "strategy": label,
    }


def closed_loop(
    B_hats: dict[str, float],
    seeds: int = 4,
    trials: int = 40,
    workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    r"""The Ax benchmark's summary
    (:func:`~bandit_experiments.ax_benchmark.results.summarize`: final
    cumulative and simple regret, mean and s.e. over seeds) of the
    :func:`loop_variants` on every problem in ``B_hats`` (problem -> its B̂, also given
    in each row as ``B_hat``): ``ax.Client`` loops (the Ax benchmark's
    :func:`~bandit_experiments.ax_benchmark.runner.run_job`) of the practical
    IGP-UCB strategy with ``B = 1`` (the default before 0.5), with :math:`B = \hat B`
    (the median estimate at ``n = 30`` from the fit table), with constant multipliers
    :math:`\beta = 0.5` and :math:`\beta = 2`, and GP-TS (``B = 1``).
    ``progress(done, total)`` is called with the loops done (0 first)."""
    check_count("seeds", seeds, 1)
    check_count("trials", trials, 1)
    check_count("workers", workers, 1)
    labels = tuple(loop_variants(1.0))
    jobs = [
        (problem, label, strategy, kwargs, seed, trials)
        for problem, B in B_hats.items()
        for label, (strategy, kwargs) in loop_variants(B).items()
        for seed in range(seeds)
    ]
    start = time.perf_counter()
    results: list[dict[str, Any]] = []
    if progress is not None:
        progress(0, len(jobs))
    with contextlib.ExitStack() as stack:
        if workers == 1:
            done = map(_loop_job, jobs)
        else:
            done = stack.enter_context(worker_pool(workers)).map(_loop_job, jobs)
        for result in done:  # in the order of the jobs, as each is done
            results.append(result)
            if progress is not None:
                progress(len(results), len(jobs))
    bench = BenchResult(
        results, tuple(B_hats), labels, seeds, trials, time.perf_counter() - start
    )
    return [{**row, "B_hat": B_hats[row["problem"]]} for row in summarize(bench)]


def fit_report(summary: Sequence[dict[str, Any]]) -> list[str]:
    """The fit table as Markdown."""
    lines = [
        "| problem | n | ℓ | R̂ (true) | γ̂ | B̂ | IGP-UCB β_t (B = 1) | IGP-UCB β_t (B = B̂) "
        "| GP-TS v_t (B = 1) | GP-UCB √β_t, Thm 1 | GP-UCB √β_t, Thm 3 |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in summary:
        lines.append(
            f"| {s['problem']} | {s['n']} | {s['lengthscale']:.2f} | {s['R_hat']:.3f} "
            f"({s['R_true']:.3f}) "
            f"| {s['gamma_hat']:.1f} | {s['B_hat']:.1f} | {s['igp_ucb_B1']:.2f} "
            f"| {s['igp_ucb_Bhat']:.1f} | {s['gp_ts_B1']:.2f} | {s['gp_ucb_thm1']:.2f} "
            f"| {s['gp_ucb_thm3']:.0f} |"
        )
    return lines


def loop_report(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The closed-loop table as Markdown (mean ± s.e. over seeds; the mean alone for
    one seed)."""
    lines = [
        "| problem | strategy | cumulative regret | simple regret |",
        "| --- | --- | ---: | ---: |",
    ]
    for r in rows:
        label = r["strategy"]
        if label == B_HAT_LABEL:
            label = f"{label} = {r['B_hat']:g}"
        one = r["seeds"] == 1
        cum = "" if one else f" ± {r['cumulative_regret_se']:.1f}"
        simple = "" if one else f" ± {r['simple_regret_se']:.2g}"
        lines.append(
            f"| {r['problem']} | {label} | {r['cumulative_regret_mean']:.1f}{cum} "
            f"| {r['simple_regret_mean']:.3g}{simple} |"
        )
    return lines


def write_csv(rows: Sequence[FitRow] | Sequence[dict[str, Any]], path: Path) -> Path:
    """The fit rows (:class:`FitRow`) or the closed loop's rows as a CSV, one row
    each, the columns in their order."""
    table = [asdict(r) if isinstance(r, FitRow) else r for r in rows]
    with atomic_open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    return path
