"""A large batch (``get_next_trials(max_trials=q)``) costs each candidate about the
same, however many are already in flight: the pass that keeps a candidate APART
lengthscales from the points in flight (SLSQP) once took hundreds of evaluations per
start once a dozen points were in flight near the maximum (its single constraint,
the distance to the nearest point in flight, is not smooth), and a 150-trial batch in
2-D did not return in ten minutes. Counted, not timed: the optimizer's evaluations
per candidate."""

from __future__ import annotations

import math

import pytest
import scipy.optimize
import torch

pytest.importorskip("ax")

from ax import Client, RangeParameterConfig

from botorch_bandits.ax import bandit_generation_strategy
from botorch_bandits.ax.generation import BanditNode
from botorch_bandits.core import Domain
from botorch_bandits.core.optimize import APART, optimize

#: the batch: enough candidates for a dozen and more to be kept apart at once
Q = 24
#: SLSQP's evaluations of the acquisition per candidate, at most (a few starts of a
#: few iterations each; before the fix up to 1786 for one candidate of this batch)
MAX_PER_CANDIDATE = 100


def _objective(p: dict) -> float:
    return -((p["x"] - 0.3) ** 2) - (p["y"] - 0.7) ** 2


def _slsqp_counter(monkeypatch) -> list[tuple[int, int]]:
    """``(evaluations, constraints)`` of every SLSQP run that scipy makes (BoTorch's
    ``optimize_acqf`` calls ``scipy.optimize.minimize``), appended as they finish."""
    runs: list[tuple[int, int]] = []
    minimize = scipy.optimize.minimize

    def counted(*args, **kwargs):
        res = minimize(*args, **kwargs)
        if kwargs.get("method") == "SLSQP":
            runs.append((int(res.nfev), len(kwargs.get("constraints") or [])))
        return res

    monkeypatch.setattr(scipy.optimize, "minimize", counted)
    return runs


def test_a_large_batch_costs_each_candidate_a_bounded_number_of_evaluations(
    monkeypatch,
) -> None:
    """After three initial trials in 2-D, one call for ``Q`` trials: every candidate
    kept apart from those before it at a bounded cost (SLSQP's evaluations per
    candidate), so the batch's cost grows linearly in ``Q``; the batch keeps its
    points APART lengthscales from each other."""
    client = Client(random_seed=0)
    client.configure_experiment(
        name="large_batch",
        parameters=[
            RangeParameterConfig(name=n, parameter_type="float", bounds=(0.0, 1.0))
            for n in ("x", "y")
        ],
    )
    client.configure_optimization(objective="f")
    client.set_generation_strategy(bandit_generation_strategy(num_init=3))
    for _ in range(3):
        ((index, params),) = client.get_next_trials(max_trials=1).items()
        client.complete_trial(index, {"f": _objective(params)})

    runs = _slsqp_counter(monkeypatch)
    per_candidate: list[int] = []
    exp = client._experiment
    # the node decides each trial with the earlier ones in flight; one decision is
    # one call of get_next_candidate, so the count during it is that decision's
    gen_next = BanditNode.get_next_candidate

    def counted_candidate(self, pending_parameters):
        before = len(runs)
        out = gen_next(self, pending_parameters)
        per_candidate.append(sum(n for n, _ in runs[before:]))
        return out

    monkeypatch.setattr(BanditNode, "get_next_candidate", counted_candidate)
    trials = client.get_next_trials(max_trials=Q)
    assert len(trials) == Q and len(per_candidate) == Q
    metas = [exp.trials[i].generator_runs[0].gen_metadata for i in sorted(trials)]
    kept = [m["optimizer"] for m in metas].count("SLSQP")
    assert kept >= Q // 2  # the constrained pass ran for most candidates
    assert max(per_candidate) <= MAX_PER_CANDIDATE, per_candidate
    # the later half, with twice as many in flight, costs about what the first did
    half = Q // 2
    assert sum(per_candidate[half:]) <= 2 * sum(per_candidate[:half]) + 50

    # the keep-apart guarantee: each candidate APART lengthscales from the earlier
    # ones (the decision's fitted lengthscales)
    xs = [exp.trials[i].arms[0].parameters for i in sorted(trials)]
    for i in range(1, Q):
        ls = torch.tensor(metas[i]["fit"]["lengthscale"][:2], dtype=torch.double)
        here = torch.tensor([xs[i]["x"], xs[i]["y"]], dtype=torch.double)
        before = torch.tensor([[p["x"], p["y"]] for p in xs[:i]], dtype=torch.double)
        gap = float(((here - before) / ls).norm(dim=-1).min())
        assert gap >= APART * (1 - 1e-9), (i, gap)


def test_the_constrained_pass_uses_a_bounded_number_of_constraints(
    monkeypatch,
) -> None:
    """Many points in flight around the acquisition's peak: the constrained pass's
    answer keeps APART from every one of them, each SLSQP run with a number of
    constraints that does not grow with the points in flight, and a few
    evaluations each."""
    d = 2
    sobol = torch.quasirandom.SobolEngine(d, scramble=True, seed=0)
    unit = sobol.draw(256, dtype=torch.double)
    domain = Domain.box(unit)  # raw samples too: fresh Sobol points

    def acqf(X):  # peaked at (0.5, 0.5), among the points in flight
        return -((X[..., 0, :] - 0.5) ** 2).sum(-1)

    ls = torch.tensor([0.2, 0.3], dtype=torch.double)
    # a grid of points in flight, 2.5 APART (in lengthscales) from each other, 81 of
    # them around the peak (the peak among them)
    step = 2.5 * APART * ls
    grid = torch.arange(-4, 5, dtype=torch.double)
    flight = torch.stack(
        torch.meshgrid(0.5 + grid * step[0], 0.5 + grid * step[1], indexing="ij"),
        -1,
    ).reshape(-1, d)
    scores = acqf(unit.unsqueeze(-2))
    close = (torch.cdist(unit / ls, flight / ls) < APART).any(-1)
    scores = scores.masked_fill(close, -math.inf)
    runs = _slsqp_counter(monkeypatch)
    meta: dict = {}
    apart = (flight, ls)
    row, _, coords = optimize(acqf, scores, domain, flight.tolist(), meta, 0, apart)
    assert row is None and meta["optimizer"] == "SLSQP"
    gap = float(((torch.tensor(coords) - flight) / ls).norm(dim=-1).min())
    assert gap >= APART
    # next to the peak: a gap between the grid's points (at most one grid step from
    # the peak in each coordinate)
    assert (abs(torch.tensor(coords) - 0.5) <= step + 1e-9).all()
    assert runs and max(c for _, c in runs) <= 24 < flight.shape[0]
    assert max(n for n, _ in runs) <= MAX_PER_CANDIDATE


def test_a_point_in_flight_missed_by_the_first_round_is_kept_apart_from(
    monkeypatch,
) -> None:
    """The constrained pass constrains the points in flight nearest its start: where
    SLSQP's answer lands next to another one (here the peak's, farther from the start
    than the nearest APART_NEAREST), that one is constrained too and SLSQP runs
    again, to the best point APART from it."""
    from botorch_bandits.core.optimize import APART_NEAREST, _kept_apart

    ls = 0.1
    peak = 0.8
    # the start at 0.3, the nearest points in flight below it, the peak's far off
    near = [0.02 + 0.025 * i for i in range(APART_NEAREST)]
    flight = torch.tensor([[x] for x in [*near, peak]], dtype=torch.double)
    domain = Domain.box(torch.linspace(0, 1, 11, dtype=torch.double).reshape(-1, 1))
    bounds = torch.tensor([[0.0], [1.0]], dtype=torch.double)

    def acqf(X):  # peaked at the last point in flight
        return -((X[..., 0, 0] - peak) ** 2)

    runs = _slsqp_counter(monkeypatch)
    start = torch.tensor([[0.3]], dtype=torch.double)
    apart = (flight, torch.tensor([ls], dtype=torch.double))
    x, _ = _kept_apart(acqf, start, [], bounds, domain, apart)
    assert [c for _, c in runs] == [APART_NEAREST, APART_NEAREST + 1]
    assert APART * ls <= abs(float(x.reshape(-1)[0]) - peak) <= 1.01 * APART * ls
