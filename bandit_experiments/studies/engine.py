"""Benchmarks of the finite-arm engine (``python -m bandit_experiments benchmark-engine``):
drift against an exact rebuild after many updates, and the per-step time of
engine + IGPUCB versus the plain BoTorch loop, measured side by side in one run.
Both take a ``progress(done, total)`` callback (the command's bar or lines)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch
from botorch.acquisition import UpperConfidenceBound

from botorch_bandits.acquisition import IGPUCB
from botorch_bandits.models import FiniteArmGP, fixed_gp
from botorch_bandits.test_functions.problems import rkhs_function

#: ``progress(done, total)``: the units of work done so far and in all
Progress = Callable[[int, int], None]


def drift(
    horizon: int = 30000,
    num_seeds: int = 25,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, float]:
    """Run ``horizon`` random updates without periodic rebuilds on the 100-arm RKHS
    problem; return the max abs difference of mean and covariance against an exact
    rebuild from the pull counts, and the time per update. ``progress`` is called
    with the updates done (about 100 times; its own time is in the timing, a few
    microseconds a call)."""
    problem = rkhs_function(seed=seed)
    engine = FiniteArmGP(
        problem.arms,
        problem.kernel,
        problem.noise_sd**2,
        num_seeds=num_seeds,
        refactor_every=None,
    )
    gen = torch.Generator().manual_seed(seed)
    every = max(horizon // 100, 1)
    if progress is not None:
        progress(0, horizon)
    start = time.perf_counter()
    for i in range(1, horizon + 1):
        arms = torch.randint(0, problem.arms.shape[0], (num_seeds,), generator=gen)
        y = problem.values[arms] + problem.noise_sd * torch.randn(
            num_seeds, generator=gen, dtype=problem.values.dtype
        )
        engine.observe(arms, y)
        if progress is not None and (i % every == 0 or i == horizon):
            progress(i, horizon)
    elapsed = time.perf_counter() - start
    cov, mean = engine.covariance_.clone(), engine.mean_.clone()
    engine.refactor()
    return {
        "cov_drift": float((cov - engine.covariance_).abs().max()),
        "mean_drift": float((mean - engine.mean_).abs().max()),
        "seconds_per_update": elapsed / horizon,
    }


def step_times(
    checkpoints: tuple[int, ...] = (500, 2000),
    plain_repeats: int = 3,
    engine_steps: int = 200,
    seed: int = 0,
    batch_seeds: int = 25,
    progress: Progress | None = None,
) -> list[dict[str, float]]:
    """Per-step time at round ``t`` of (a) the plain BoTorch loop -- rebuild a
    fixed-hyperparameter ``SingleTaskGP`` from the ``t - 1`` observations, score the
    100 arms with ``UpperConfidenceBound``, take the argmax (median of
    ``plain_repeats`` steps) -- and (b) the engine: one rank-one update, ``IGPUCB``
    (observed information gain) on the 100 arms, argmax, averaged over
    ``engine_steps`` consecutive steps centred on ``t`` (so the periodic exact
    rebuilds are included at their amortized cost), for one seed and for a batch of
    ``batch_seeds`` seeds stepped together (time per step of one seed). All measured in
    the same run. ``progress`` is called with the engine's seed-updates done (warm-up
    and timed steps; an update of the batch counts ``batch_seeds``), never inside a
    timed step."""
    problem = rkhs_function(seed=seed)
    arms, lam = problem.arms, problem.noise_sd**2
    X = arms.unsqueeze(-2)  # N x 1 x d (the plain loop)
    gen = torch.Generator().manual_seed(seed)
    rows = []
    units = sum(
        (1 + batch_seeds) * (max(t - engine_steps // 2, 1) - 1 + engine_steps)
        for t in checkpoints
    )
    done = 0
    if progress is not None:
        progress(done, units)
    for t in checkpoints:
        total = t + engine_steps
        pulls = torch.randint(0, arms.shape[0], (total,), generator=gen)
        ys = problem.values[pulls] + problem.noise_sd * torch.randn(
            total, generator=gen, dtype=arms.dtype
        )
        plain = []
        for r in range(plain_repeats):
            n = t - 1 + r  # observations before this step
            start = time.perf_counter()
            model = fixed_gp(arms[pulls[:n]], ys[:n].unsqueeze(-1), problem.kernel, lam)
            with torch.no_grad():
                int(UpperConfidenceBound(model, beta=0.2)(X).argmax())
            plain.append(time.perf_counter() - start)
        first = max(t - engine_steps // 2, 1)
        fast = {}
        for seeds in (None, batch_seeds):
            S = seeds or 1
            engine = FiniteArmGP(arms, problem.kernel, lam, num_seeds=seeds)
            for i in range(first - 1):
                engine.observe(pulls[i].expand(S), ys[i].expand(S))
                if progress is not None and (i + 1) % 100 == 0:
                    progress(done + (i + 1) * S, units)
            done += (first - 1) * S
            Xs = engine.score_points  # every arm, for every seed
            start = time.perf_counter()
            for i in range(first - 1, first - 1 + engine_steps):
                with torch.no_grad():
                    IGPUCB(engine, B=1.0, R=0.1)(Xs).argmax(0)
                engine.observe(pulls[i].expand(S), ys[i].expand(S))
            # per step of one seed
            fast[seeds] = (time.perf_counter() - start) / engine_steps / S
            done += engine_steps * S
            if progress is not None:
                progress(done, units)
        p = statistics.median(plain)
        rows.append(
            {
                "t": t,
                "plain_s": p,
                "engine_s": fast[None],
                "ratio": p / fast[None],
                "batched_s": fast[batch_seeds],
                "batched_ratio": p / fast[batch_seeds],
                "batch_seeds": batch_seeds,
            }
        )
    return rows
