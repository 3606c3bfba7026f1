"""The decision core without Ax (issue 27): a constructed history and typed options
in, a decision and its metadata out -- for each algorithm in both modes and for each
option group (pending views, censoring, long-term constraints, restarts)."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch

from botorch_bandits.constraints import ExponentialPenalty, replay_multipliers
from botorch_bandits.core import (
    DecisionCache,
    DecisionOptions,
    Domain,
    History,
    TrialRecord,
    decide,
)
from botorch_bandits.core.steps.avoid import not_again

D = 2


def _f(x: tuple[float, ...]) -> float:
    return -sum((xi - 0.3) ** 2 for xi in x)


def _domain(n: int = 64):
    sobol = torch.quasirandom.SobolEngine(D, scramble=True, seed=0)
    return Domain.box(sobol.draw(n, dtype=torch.double))


def _history(n: int = 8, running: int = 0, scale: float = 1.0, shift: float = 0.0):
    """``n`` completed trials on Sobol points of the box, then ``running`` in flight;
    created at seconds 0, 1, ..., each completed one second later."""
    pts = torch.quasirandom.SobolEngine(D, scramble=True, seed=1).draw(n + running)
    trials = []
    for i, x in enumerate(pts.double().tolist()):
        done = i < n
        trials.append(
            TrialRecord(
                index=i,
                x=tuple(x),
                f=scale * _f(x) + shift if done else None,
                created=float(i),
                completed=float(i) + 1.0 if done else None,
            )
        )
    return History(trials=tuple(trials))


ALGORITHMS = ("IGP-UCB", "GP-UCB", "GP-TS")
MODES = ("theory", "practical")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_decides_in_both_modes(algorithm, mode) -> None:
    opts = DecisionOptions.from_kwargs(algorithm=algorithm, mode=mode)
    domain = _domain()
    a = decide(_history(), opts, domain)
    b = decide(_history(), opts, domain)
    assert a.x == b.x and a.metadata == b.metadata  # a function of its inputs
    assert len(a.x) == D and all(0.0 <= v <= 1.0 for v in a.x)
    meta = a.metadata
    assert meta["algorithm"] == algorithm and meta["t"] == 9 and meta["round"] == 9
    assert meta["sigma_multiplier"] > 0
    if mode == "theory":  # the argmax over the finite decision set
        assert a.index is not None and a.x == domain.unit[a.index].tolist()
        assert "fit" not in meta
    else:  # a fitted GP on standardized targets, the gradient optimizer
        assert meta["fit"]["status"] == "fitted" and "standardize" in meta
        assert meta["optimizer"] in ("L-BFGS-B", "decision set")
        assert meta["R"] == pytest.approx(math.sqrt(meta["fit"]["noise"]))


def test_practical_decisions_do_not_depend_on_the_objectives_units() -> None:
    opts = DecisionOptions.from_kwargs(algorithm="IGP-UCB")
    a = decide(_history(), opts, _domain())
    b = decide(_history(scale=100.0, shift=100.0), opts, _domain())
    assert a.x == b.x


@pytest.mark.parametrize("scale", [1e-200, 1e-300, 1e200, 1e300])
def test_tiny_and_huge_objective_scales_decide_as_unit_ones(scale) -> None:
    """Issue 31: values x 1e-200 gave a flat fit (the spread's squares underflowed
    to a standard deviation of 0, so the targets stayed ~1e-200) whose metadata said
    'fitted'. The spread is now taken on rescaled values: the same decision."""
    opts = DecisionOptions.from_kwargs(algorithm="IGP-UCB")
    a = decide(_history(), opts, _domain())
    b = decide(_history(scale=scale), opts, _domain())
    assert b.metadata["standardize"]["std"] == pytest.approx(
        scale * a.metadata["standardize"]["std"], rel=1e-9
    )
    assert b.x == pytest.approx(a.x, abs=1e-6)
    assert b.metadata["fit"]["lengthscale"] == pytest.approx(
        a.metadata["fit"]["lengthscale"], rel=1e-4
    )


def test_a_constant_beta_is_the_sigma_multiplier() -> None:
    for algorithm in ALGORITHMS:
        opts = DecisionOptions.from_kwargs(algorithm=algorithm, mode="theory", beta=1.7)
        d = decide(_history(), opts, _domain())
        assert d.metadata["sigma_multiplier"] == pytest.approx(1.7)


def test_ignore_excludes_the_points_in_flight() -> None:
    domain = _domain(16)
    # three trials in flight, at points of the decision set
    flight = [TrialRecord.issued(domain.unit[i].tolist(), False) for i in range(3)]
    history = _history().then(*flight)
    opts = DecisionOptions.from_kwargs(mode="theory", pending="ignore")
    d = decide(history, opts, domain)
    assert d.metadata["excluded_in_flight"] == 3
    assert d.index not in (0, 1, 2)
    assert d.metadata["t"] == 12  # position among the issued trials
    assert d.metadata["round"] == 9  # the model's data: the completed trials only


def test_hallucinate_adds_the_pending_points_to_the_model() -> None:
    opts = DecisionOptions.from_kwargs(mode="theory", pending="hallucinate")
    d = decide(_history(running=2), opts, _domain())
    assert d.metadata["pending"] == 2 and d.metadata["round"] == 11


def test_censoring_counts_censored_and_late_feedback() -> None:
    # trial 0's data arrives after 5 more trials were created: late for window 2
    h = _history(n=6, running=2)
    trials = list(h.trials)
    trials[0] = TrialRecord(
        index=0, x=trials[0].x, f=trials[0].f, created=0.0, completed=5.5
    )
    history = History(trials=tuple(trials))
    opts = DecisionOptions.from_kwargs(
        mode="theory", pending="censor", window=2, y_min=-2.0, beta=1.0
    )
    d = decide(history, opts, _domain())
    assert d.metadata["late"] == 1  # arrived after its window: censored for good
    assert d.metadata["censored"] == 3  # the late one and the two running
    assert d.metadata["round"] == 9  # every issued query is in the model


def test_long_term_constraints_replay_the_multipliers_of_completed_epochs() -> None:
    h = _history(n=10)
    g = [(x[0] - 0.5,) for x in (e.x for e in h.trials)]
    trials = tuple(
        TrialRecord(e.index, e.x, e.f, gi, e.created, e.completed)
        for e, gi in zip(h.trials, g, strict=True)
    )
    history = History(trials=trials, num_constraints=1)
    opts = DecisionOptions.from_kwargs(
        mode="theory", long_term_constraints=True, epoch_length=4, penalty_c=2.0
    )
    d = decide(history, opts, _domain())
    rows = replay_multipliers(
        torch.tensor(g, dtype=torch.double),
        4,
        "multiplicative",
        penalty=ExponentialPenalty(2.0),
    )
    assert d.metadata["epoch"] == 2 and d.metadata["epochs_used"] == 2
    assert d.metadata["kappa"] == rows[2].tolist()
    assert d.metadata["delta_epoch"] < opts.delta  # the epochs' delta / L


def test_restarts_explore_uniformly_until_the_rule_is_met() -> None:
    opts = DecisionOptions.from_kwargs(mode="theory", restarts=True, xi=2.0)
    domain = _domain(32)
    cache = DecisionCache()
    d = decide(_history(n=4), opts, domain, cache)
    # |U| = 0 <= xi sqrt(|H|): a uniform draw from the decision set, seeded
    assert d.uniform and d.metadata["cpd_uniform"] and d.index is not None
    assert decide(_history(n=4), opts, domain, cache).index == d.index
    # enough uniform trials (8 > 2 sqrt(8)): the model decides
    tagged = tuple(
        TrialRecord(e.index, e.x, e.f, None, e.created, e.completed, uniform=True)
        for e in _history(n=8).trials
    )
    d2 = decide(History(trials=tagged), opts, domain, DecisionCache())
    assert not d2.uniform and d2.metadata["cpd_uniform_count"] == 8


def test_theory_hyperparameters_fitted_are_recorded() -> None:
    opts = DecisionOptions.from_kwargs(mode="theory", hyperparameters="fitted")
    d = decide(_history(), opts, _domain())
    fitted = d.metadata["fitted"]
    assert len(fitted["lengthscale"]) == D and fitted["noise"] > 0


def test_options_are_typed_and_grouped() -> None:
    o = DecisionOptions.from_kwargs(
        mode="theory",
        pending="censor",
        window=3,
        long_term_constraints=True,
        restarts=True,
        cpd_regularization=5.0,
    )
    assert o.theory is not None and o.theory.kernel == "matern52"
    assert o.censoring.window == 3 and o.constraints.epoch_length == 20
    assert o.restarts.regularization == 5.0
    with pytest.raises(AttributeError):
        o.seed = 3  # frozen
    plain = DecisionOptions.from_kwargs()
    assert plain.constraints is None and plain.restarts is None and plain.theory is None


def test_old_option_spellings_are_deprecated_aliases() -> None:
    with pytest.warns(DeprecationWarning, match="cpd_regularization"):
        o = DecisionOptions.from_kwargs(
            restarts=True, cpd_detector="paper", cpd_c=4.0, cpd_C=1.5
        )
    assert o.restarts.regularization == 4.0 and o.restarts.threshold_scale == 1.5
    with pytest.raises(ValueError, match="cpd_c"):  # named as the caller wrote it
        with pytest.warns(DeprecationWarning):
            DecisionOptions.from_kwargs(cpd_detector="paper", cpd_c=-1.0)
    with pytest.raises(ValueError, match="not both"):
        DecisionOptions.from_kwargs(cpd_c=1.0, cpd_regularization=2.0)
    with pytest.raises(TypeError, match="Unknown option"):
        DecisionOptions.from_kwargs(cpd_cc=1.0)


def test_the_core_imports_no_ax() -> None:
    code = (
        "import sys, botorch_bandits.core, botorch_bandits.acquisition.factory\n"
        "assert not [m for m in sys.modules if m == 'ax' or m.startswith('ax.')]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- no wasted evaluations
def _grid_history(values) -> History:
    """Completed trials at the 1-D points of ``values`` (a dict point -> value, or
    a list of (point, value) pairs)."""
    pairs = list(values.items()) if isinstance(values, dict) else list(values)
    trials = [
        TrialRecord(index=i, x=(x,), f=y, created=i, completed=i + 1.0)
        for i, (x, y) in enumerate(pairs)
    ]
    return History(trials=tuple(trials))


GRID = [[0.0], [0.25], [0.5], [0.75], [1.0]]
#: a deterministic objective peaked at 0.5: every point but 0.0 evaluated
PEAKED = {0.25: 0.6, 0.5: 1.0, 0.75: 0.6, 1.0: 0.0}


def _finite(repeats: str | None = None, **kw):
    kwargs = {"optimizer": "finite", **kw}
    if repeats is not None:
        kwargs["repeats"] = repeats
    return DecisionOptions.from_kwargs(**kwargs)


def test_a_noise_free_fit_never_proposes_an_evaluated_point_again() -> None:
    domain = Domain.box(torch.tensor(GRID, dtype=torch.double))
    history = _grid_history(PEAKED)
    allow = decide(history, _finite("allow", beta=0.5), domain)
    assert allow.x == [0.5]  # the incumbent: re-evaluating it wastes a trial
    avoid = decide(history, _finite(beta=0.5), domain)  # the practical default
    assert avoid.metadata["fit"]["noise"] <= 1e-2  # the fit says noise-free
    assert avoid.x == [0.0] and avoid.metadata["avoided"] == 4
    # the gradient optimizer keeps away from the evaluated points too
    grad = decide(history, DecisionOptions.from_kwargs(beta=0.5), domain)
    assert grad.metadata["avoided"] == 4
    assert min(abs(grad.x[0] - x) for x in PEAKED) >= 1e-6


def test_repeats_are_allowed_when_every_point_was_evaluated_or_the_fit_is_noisy():
    domain = Domain.box(torch.tensor(GRID, dtype=torch.double))
    full = _grid_history({0.0: 0.0, **PEAKED})
    d = decide(full, _finite(beta=0.5), domain)
    assert (
        d.metadata["repeat_reason"] == "every point of the decision set was evaluated"
    )
    assert d.metadata["avoided"] == 0
    # three different values at 0.5: the fit must see noise, and repeats stay allowed
    noisy = _grid_history([*PEAKED.items(), (0.5, 0.7), (0.5, 1.3)])
    n = decide(noisy, _finite(beta=0.5), domain)
    assert n.metadata["fit"]["noise"] > 1e-2 and "avoided" not in n.metadata
    # the theory mode re-pulls arms by default
    t = decide(_grid_history(PEAKED), _finite(mode="theory"), domain)
    assert "avoided" not in t.metadata


def test_points_evaluated_before_a_restart_may_be_evaluated_again() -> None:
    """After a restart the objective is another: only the trials since it, and those
    still running from before it, are kept out."""
    before = [
        TrialRecord(0, (0.1,), 1.0),
        TrialRecord(1, (0.2,)),
        TrialRecord(2, (0.3,), 0.5),
    ]
    after = [TrialRecord(3, (0.4,), 0.2), TrialRecord(4, (0.5,))]
    assert not_again([*before, *after], start=3) == [[0.2], [0.4], [0.5]]
    assert not_again([*before, *after], start=0) == [
        [x] for x in (0.1, 0.2, 0.3, 0.4, 0.5)
    ]


def _sine_history() -> History:
    """Five completed trials of the noise-free sin(6x) + x on [0, 1] (the centre and
    four Sobol points, as the Ax strategy starts)."""
    xs = (0.5, 0.0395, 0.4751, 0.5601, 0.9878)
    return _grid_history([(x, math.sin(6 * x) + x) for x in xs])


@pytest.mark.parametrize("optimizer", ["gradient", "finite"])
def test_a_noise_free_batch_keeps_its_points_apart(optimizer) -> None:
    """A point in flight is in the model at the posterior mean, which it leaves as it
    was: the upper confidence bound kept its maximum next to it, and 9 of 10 points
    of a batch fell within 0.004 lengthscales of each other (each a wasted trial
    under a noise-free fit). Now each keeps APART lengthscales from those in flight;
    the first, with none in flight, is decided as before."""
    from botorch_bandits.core.optimize import APART

    unit = torch.quasirandom.SobolEngine(1, scramble=True, seed=0).draw(512)
    domain = Domain.box(unit.double())
    opts = DecisionOptions.from_kwargs(optimizer=optimizer)  # practical defaults
    history, cache, batch = _sine_history(), DecisionCache(), []
    for _ in range(5):
        pending = history.then(*[b.record for b in batch])
        batch.append(decide(pending, opts, domain, cache))
    fit = batch[0].metadata["fit"]
    assert fit["noise"] <= 1e-2  # the fit says noise-free
    (ls,) = fit["lengthscale"]
    gaps = [abs(a.x[0] - b.x[0]) / ls for i, a in enumerate(batch) for b in batch[:i]]
    assert min(gaps) >= APART
    assert [b.metadata.get("kept_apart") for b in batch] == [None, 1, 2, 3, 4]
    if optimizer == "gradient":  # the constrained pass finds the boundary's best
        assert "SLSQP" in [b.metadata["optimizer"] for b in batch]


def test_the_constrained_pass_keeps_apart_from_the_points_in_flight() -> None:
    """The acquisition peaks at a point in flight: the optimizer's answer is its
    best point APART lengthscales away (SLSQP with the distance as a constraint),
    not a point of the decision set."""
    from botorch_bandits.core.optimize import APART, optimize

    unit = torch.quasirandom.SobolEngine(1, scramble=True, seed=0).draw(64).double()
    domain = Domain.box(unit)

    def acqf(X):  # peaked at 0.5, the point in flight
        return -((X[..., 0, 0] - 0.5) ** 2)

    ls = 0.2
    scores = acqf(unit.unsqueeze(-2))
    scores = scores.masked_fill((unit[:, 0] - 0.5).abs() < APART * ls, -math.inf)
    flight = torch.tensor([[0.5]], dtype=torch.double)
    meta: dict = {}
    apart = (flight, torch.tensor([ls], dtype=torch.double))
    row, _, coords = optimize(acqf, scores, domain, [[0.5]], meta, 0, apart)
    assert row is None and meta["optimizer"] == "SLSQP"
    assert APART * ls <= abs(coords[0] - 0.5) <= 1.01 * APART * ls


def test_bad_repeats_is_named() -> None:
    with pytest.raises(ValueError, match="repeats"):
        DecisionOptions.from_kwargs(repeats="never")


def test_with_no_free_coordinate_the_best_raw_sample_is_taken() -> None:
    """An all-discrete space has nothing for the gradient step: the answer is the
    best raw sample, a fresh one when it beats the decision set (before, the fresh
    samples were scored and never chosen)."""
    from botorch_bandits.core.optimize import optimize

    grid = torch.tensor([[0.0], [0.5], [1.0]], dtype=torch.double)
    fresh = torch.tensor([[0.25], [0.75]], dtype=torch.double)

    def acqf(X):  # peaked at 0.8: 0.75 (fresh) beats every point of the grid
        return -((X[..., 0, 0] - 0.8) ** 2)

    domain = Domain(
        unit=grid,
        hold=[0],
        accept=lambda x: (x.tolist(), x.reshape(-1).tolist()),
        sample=lambda n, seed: fresh,
    )
    meta: dict = {}
    row, payload, coords = optimize(acqf, acqf(grid.unsqueeze(-2)), domain, None, meta)
    assert row is None and payload == coords == [0.75]
    assert meta["optimizer"] == "raw samples"
    # avoided, the fresh point is not taken: the best of the rest
    meta = {}
    row, _, coords = optimize(acqf, acqf(grid.unsqueeze(-2)), domain, [[0.75]], meta)
    assert (row, coords, meta["optimizer"]) == (2, None, "decision set")
