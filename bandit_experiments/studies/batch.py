r"""Batch BO against sequential BO on a shipped problem (``python -m
bandit_experiments batch-tradeoff``): what a batch of ``B`` evaluations per round costs per evaluation
and buys per round. Synchronous batches are delayed feedback with
:class:`~botorch_bandits.delays.BatchDelay`, so the delayed-feedback simulator runs
sequential GP-UCB, GP-BUCB and GP-UCB-SDF with one implementation of each round (the
policies and the measurement: ``docs/measured.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torch import Tensor

from botorch_bandits.delays import BatchDelay
from botorch_bandits.test_functions.delayed import simulate_delayed
from botorch_bandits.test_functions.delayed_result import DelayedResult
from botorch_bandits.test_functions.problems import BanditProblem, verma_gp_problem
from botorch_bandits.validation import check_count


@dataclass
class BatchTradeoff:
    """Results of :func:`batch_tradeoff` (``T x S`` regret per policy)."""

    batch_size: int
    horizon: int
    results: dict[str, DelayedResult]  # "GP-UCB (sequential)", "GP-BUCB (B=5)", ...

    def cumulative_per_evaluation(self, n: int) -> dict[str, tuple[float, float]]:
        """Mean and standard error over seeds of :math:`R_n`, after ``n`` evaluations."""
        return {
            k: _mean_se(r.cumulative_regret[n - 1]) for k, r in self.results.items()
        }

    def per_round(self, rounds: int) -> dict[str, dict[str, tuple[float, float]]]:
        """After ``rounds`` rounds (``rounds`` evaluations sequentially,
        ``rounds * B`` in batches): cumulative regret, the mean instantaneous regret
        of the round's evaluations, and the simple regret (best evaluation so far)."""
        out = {}
        for key, r in self.results.items():
            B = 1 if key.endswith("(sequential)") else self.batch_size
            n = rounds * B
            inst = (r.optimum - r.values)[n - B : n].mean(0)  # the round's mean
            best = (r.optimum - r.values)[:n].min(0).values
            out[key] = {
                "evaluations": (float(n), 0.0),
                "cumulative": _mean_se(r.cumulative_regret[n - 1]),
                "round_instant": _mean_se(inst),
                "simple": _mean_se(best),
            }
        return out


def _mean_se(x: Tensor) -> tuple[float, float]:
    x = x.double()
    se = float(x.std() / x.numel() ** 0.5) if x.numel() > 1 else 0.0
    return float(x.mean()), se


def batch_tradeoff(
    problem: BanditProblem,
    batch_size: int = 5,
    horizon: int = 200,
    beta: float | str = 1.0,
    y_min: float = 0.0,
    seed: int = 0,
    progress: Any = None,
) -> BatchTradeoff:
    """Run sequential GP-UCB, GP-BUCB and GP-UCB-SDF (batch size ``batch_size``) for
    ``horizon`` evaluations on every seed of ``problem`` (see the module docstring)."""
    B = check_count("batch_size", batch_size, minimum=2)
    T = check_count("horizon", horizon, minimum=B)
    if T % B:
        raise ValueError(
            f"`horizon` must be a multiple of `batch_size` (whole rounds), got "
            f"horizon={horizon!r}, batch_size={batch_size!r}."
        )
    common = dict(beta=beta, seed=seed, progress=progress)
    results = {
        "GP-UCB (sequential)": simulate_delayed(
            problem, "GP-UCB", T, BatchDelay(1), **common
        ),
        f"GP-BUCB (B={B})": simulate_delayed(
            problem, "GP-BUCB", T, BatchDelay(B), **common
        ),
        f"GP-UCB-SDF (B={B}, m={B})": simulate_delayed(
            problem, "GP-UCB-SDF", T, BatchDelay(B), window=B, y_min=y_min, **common
        ),
    }
    return BatchTradeoff(B, T, results)


def report(tradeoff: BatchTradeoff, rounds: tuple[int, ...] = ()) -> list[str]:
    """Text table of a :class:`BatchTradeoff`."""
    B, T = tradeoff.batch_size, tradeoff.horizon
    lines = [f"cumulative regret R_n per evaluation (mean +- s.e. over seeds), B = {B}"]
    marks = sorted({n for n in (B, 4 * B, T // 4, T // 2, T) if B <= n <= T})
    keys = list(tradeoff.results)
    lines.append("  n      " + "".join(f"{k:>28s}" for k in keys))
    for n in marks:
        row = tradeoff.cumulative_per_evaluation(n)
        lines.append(
            f"  {n:<7d}"
            + "".join(f"{row[k][0]:>20.3f} +- {row[k][1]:5.3f}" for k in keys)
        )
    lines.append("per batch round r (sequential: 1 evaluation per round, batch: B)")
    lines.append(
        "  r     policy                      evals   R(evals)          "
        "round's mean regret   simple regret"
    )
    for r in rounds or sorted({1, 4, T // (4 * B), T // (2 * B), T // B} - {0}):
        for key, v in tradeoff.per_round(r).items():
            lines.append(
                f"  {r:<5d} {key:28s} {int(v['evaluations'][0]):5d}   "
                f"{v['cumulative'][0]:7.3f} +- {v['cumulative'][1]:5.3f}   "
                f"{v['round_instant'][0]:7.3f} +- {v['round_instant'][1]:5.3f}     "
                f"{v['simple'][0]:6.3f} +- {v['simple'][1]:5.3f}"
            )
    return lines


def main_problem(num_seeds: int = 25, seed: int = 0) -> BanditProblem:
    """The problem of the report: Verma et al.'s GP sample (SE, l = 0.02, 1000 points)."""
    return verma_gp_problem(num_seeds=num_seeds, seed=seed)
