"""Does the decision's optimizer find the acquisition's maximum in many dimensions?
On a development problem with float parameters only, after ``n`` Sobol points: the
practical GP fitted, IGP-UCB on it, the value the core's optimizer reaches
(1024 raw samples, 20 starts) against BoTorch's ``optimize_acqf`` with 16 times the
raw samples and 10 times the starts; the gap in units of the acquisition's spread
over the raw samples (``python -m bandit_experiments.ax_benchmark.optimizer_gap
[problem] [n ...]``; hartmann6-in-20d, n = 20 and 39)."""

from __future__ import annotations

import sys

import torch
from botorch.optim import optimize_acqf
from torch.quasirandom import SobolEngine

from bandit_experiments.ax_benchmark.problems import Range, unit_to_params
from bandit_experiments.ax_benchmark.suite import PROBLEMS, half_of
from botorch_bandits.acquisition.practical import practical_acquisition
from botorch_bandits.core.domain import Domain
from botorch_bandits.core.optimize import NUM_RAW_SAMPLES, NUM_STARTS, optimize
from botorch_bandits.models import practical_gp, standardize
from botorch_bandits.models.practical import fit_practical_gp

#: the long run's budget, in multiples of the core's
LONG_RAW, LONG_STARTS = 16, 10


def gap(problem: str, n: int, seed: int) -> dict[str, float]:
    """The core optimizer's and the long run's IGP-UCB values after ``n`` Sobol
    points (drawn with ``seed``), and the gap over the raw samples' spread."""
    prob = PROBLEMS[problem]
    if not all(isinstance(p, Range) and p.kind == "float" for p in prob.parameters):
        raise ValueError(f"{problem!r} has non-float parameters: give a float one.")
    d = len(prob.parameters)
    X = SobolEngine(d, scramble=True, seed=seed).draw(n, dtype=torch.double)
    y = torch.tensor(
        [-prob(unit_to_params(prob.parameters, x.tolist())) for x in X],
        dtype=torch.double,
    )
    z, _, _ = standardize(y)
    hyper, _ = fit_practical_gp(X, z, None, seed)
    acqf = practical_acquisition(practical_gp(X, z, hyper))
    unit = SobolEngine(d, scramble=True, seed=seed + 1).draw(512, dtype=torch.double)
    with torch.no_grad():
        scores = acqf(unit.unsqueeze(-2)).reshape(-1)
    meta: dict = {}
    optimize(acqf, scores, Domain.box(unit), [], meta, seed)
    ours = float(meta.get("acquisition_value", scores.max()))
    torch.manual_seed(seed)
    _, long_value = optimize_acqf(
        acqf,
        bounds=torch.tensor([[0.0] * d, [1.0] * d], dtype=torch.double),
        q=1,
        num_restarts=LONG_STARTS * NUM_STARTS,
        raw_samples=LONG_RAW * NUM_RAW_SAMPLES,
    )
    spread = float(scores.max() - scores.median())
    best = float(long_value)
    return {"ours": ours, "long": best, "gap": (best - ours) / spread}


def main(argv: list[str]) -> None:
    problem = argv[0] if argv else "hartmann6-in-20d"
    if half_of(problem) != "development":
        raise SystemExit(f"{problem!r} is not a development problem.")
    sizes = [int(a) for a in argv[1:]] or [20, 39]
    print(f"{problem}: IGP-UCB's value, core optimizer vs a long multi-start run")
    print("  n  seed      core      long  gap/spread")
    for n in sizes:
        for seed in range(5):
            g = gap(problem, n, seed)
            print(
                f"{n:3d} {seed:5d} {g['ours']:9.4f} {g['long']:9.4f} {g['gap']:10.4f}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
