r"""The delayed-feedback simulator (Verma, Dai & Low, ICML 2022): one query per step for
every seed, feedback after a random delay, seen through one of three views (censor,
ignore, hallucinate) on the finite-arm engine; acquisitions from the package's
factory. docs/reproducing.md ("The simulators") describes the views, clocks and
metrics."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import Tensor

from botorch_bandits import seeding
from botorch_bandits.acquisition.factory import Confidence, make_acquisition
from botorch_bandits.beta import ObservedInformationGain, observed_information_gain
from botorch_bandits.delays import DelayDistribution
from botorch_bandits.models import FiniteArmGP
from botorch_bandits.models.multistart import fit_gp_multistart
from botorch_bandits.test_functions.delayed_result import DelayedResult
from botorch_bandits.test_functions.problems import BanditProblem

# public: what the tutorials use (the rest serves the reproductions); DelayedResult
# is re-exported from delayed_result
__all__ = ["DelayedResult", "simulate_delayed"]

View = Literal["censor", "ignore", "hallucinate"]

DELAYED_POLICIES: dict[str, tuple[View, str]] = {
    "GP-UCB-SDF": ("censor", "ucb"),
    "GP-TS-SDF": ("censor", "ts"),
    "GP-TS-SDF-unscaled": ("censor", "ts"),
    "GP-UCB": ("ignore", "ucb"),
    "asy-TS": ("ignore", "ts"),
    "GP-BUCB": ("hallucinate", "ucb"),
    "GP-BTS": ("hallucinate", "ts"),
}
r"""Algorithm name -> (view of the delayed feedback, acquisition family). With
``beta`` a number (the experiments' choice, :math:`\beta_t = 1`): UCB is
:math:`\mu + \beta\sigma` (plus the SDF inflation for GP-UCB-SDF), TS draws from
:math:`GP(\mu, \beta^2 k)` (:math:`\nu_t^2 k` for GP-TS-SDF). With ``beta="theory"``:
the SDF methods use :math:`\beta_t = B_f + (R + B_y)\sqrt{2(\gamma_{t-1} + 1 +
\log(2/\delta))}`, the baselines IGP-UCB's / GP-TS's schedules (Chowdhury & Gopalan),
all with the observed information gain of the model's points. ``GP-TS-SDF-unscaled``:
the censored view of GP-TS-SDF with the draw's scale fixed to 1 (see
:data:`UNSCALED_TS_POLICIES`)."""

UNSCALED_TS_POLICIES: frozenset[str] = frozenset({"GP-TS-SDF-unscaled"})
r"""TS policies whose draw is unscaled: :math:`f_t \sim GP(\mu_{t-1}, k_{t-1})`, the
posterior itself (scale 1, as the baselines' draws with :math:`\beta = 1`), on the
same censored view as GP-TS-SDF.

Verma, Dai & Low 2022, §3.2 (Eq. 3) define GP-TS-SDF as "similarly to GP-UCB-SDF,
except that the t-th function query is selected as follows:
:math:`x_t = \arg\max_{x} f_t(x)` where
:math:`f_t \sim \mathcal{GP}(\mu_{t-1}(\cdot), \nu_t^2\sigma_{t-1}^2(\cdot))`" --
the draw scaled by :math:`\nu_t = B_y\sum_{s=t-m}^{t-1}\sigma_{t-1}(x_s) + \beta_t`,
which is ``GP-TS-SDF`` here (the default reading: it is the paper's text and what
Theorem 3 covers). Their experiments (App. C) only say "we set :math:`\beta_t` to be
a constant (:math:`\beta_t = 1`) for all methods". The authors' public code is
reported to draw its TS samples without the :math:`\nu_t` scale (a report we have not
checked against that code); ``GP-TS-SDF-unscaled`` is that reading. Its scale is 1 for
every ``beta`` -- ``beta="theory"`` and any constant included -- since an unscaled draw
has no schedule to follow (``beta`` and ``B_y`` do not enter it; the window ``m`` and
``y_min`` still define the censored targets its posterior is built on)."""


def _check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(
            f"`{name}` must be an integer >= {minimum}, got {name}={value!r}."
        )
    return value


def _gather_arms(arms: Tensor, idx: Tensor) -> Tensor:
    """Points of arm indices ``idx`` (``k x S``) -> ``k x S x d``."""
    if arms.ndim == 2:
        return arms[idx]
    seeds = torch.arange(arms.shape[0], device=arms.device)
    return arms[seeds, idx]


def simulate_delayed(
    problem: BanditProblem,
    algorithm: str,
    horizon: int,
    delays: DelayDistribution,
    window: float | None = None,
    *,
    clock: Literal["iteration", "time"] = "iteration",
    issue_interval: float = 1.0,
    beta: float | Literal["theory"] = 1.0,
    B_y: float = 1.0,
    y_min: float = 0.0,
    delta: float = 0.1,
    num_init: int = 0,
    contexts: Tensor | None = None,
    arm_contexts: Tensor | None = None,
    refit_every: int | None = None,
    seed: int = 0,
    progress: Any = None,
) -> DelayedResult:
    r"""Run ``algorithm`` (a key of :data:`DELAYED_POLICIES`) for ``horizon`` queries
    on every seed of ``problem`` with delayed feedback.

    Args:
        problem: The batch of instances; its kernel matrix and :math:`\lambda` are
            the algorithms' (fixed hyperparameters).
        algorithm: Policy name.
        horizon: Number of queries ``T >= 1`` per seed.
        delays: The delay distribution (``PoissonDelay(10)``, ``FixedDelay(10)``, ...).
        window: The censoring window ``m >= 0`` (iterations or time), used by the SDF
            methods; ``None``: no window (:math:`m = \infty`).
        clock: ``"iteration"`` or ``"time"`` (App. A.4).
        issue_interval: Time between query starts (time clock).
        beta: The constant :math:`\beta_t` (default 1, as in the paper's experiments)
            or ``"theory"`` (the schedules).
        B_y: Bound on :math:`|y|` (SDF inflation).
        y_min: The censored target (the known minimum of ``f``).
        delta: Confidence of the theory schedules.
        num_init: The first ``num_init`` queries are uniformly random arms (their
            feedback is delayed like any other).
        contexts: Contextual variant (§5): ``T`` context ids given by the environment;
            query ``t`` must be an arm with ``arm_contexts == contexts[t]``.
        arm_contexts: ``N`` context id of each arm (with ``contexts``).
        refit_every: Practical option (the paper's experiments, App. C): every
            ``refit_every`` queries, refit an SE kernel's lengthscale, outputscale and
            noise per seed by maximizing the marginal likelihood of the model's data
            (all queries with their censored targets for the SDF methods, the
            completed ones for the baselines), and rebuild the model with them.
            ``None`` (default): the problem's fixed kernel, as the theory assumes.
        seed: Seed of the noise, the delays, the initial arms and the TS draws.
        progress: A tqdm-like object advanced once per step.

    Returns:
        The :class:`~botorch_bandits.test_functions.delayed_result.DelayedResult`
        (``T x S`` records: the queries, their values, observations, delays and
        arrival times, and the metrics read from them).

    Raises:
        ValueError: If ``algorithm`` is not a key of :data:`DELAYED_POLICIES`;
            ``horizon``, ``num_init`` or ``refit_every`` is not an integer in range;
            ``delays`` is not a ``DelayDistribution``; ``window`` is not ``None``
            or a finite number >= 0; ``clock`` is unknown; ``issue_interval`` is not
            > 0; ``beta`` is neither a number >= 0 nor ``"theory"``; or
            ``contexts`` comes without ``arm_contexts``, with the wrong shapes or
            with ids that no arm has.

    Example:
        >>> problem = verma_gp_problem(num_seeds=25)
        >>> res = simulate_delayed(problem, "GP-UCB-SDF", 200, PoissonDelay(10),
        ...                        window=20, num_init=5, seed=0)
        >>> res.simple_regret[-1].mean()
    """
    T = _check_delayed(
        algorithm,
        horizon,
        num_init,
        refit_every,
        delays,
        window,
        clock,
        issue_interval,
        beta,
    )
    view, family = DELAYED_POLICIES[algorithm]
    allowed, optimum = _contexts(problem, T, contexts, arm_contexts)
    m = None if window is None else float(window)
    run = _DelayedRun(problem, view, family, seed, T, clock, issue_interval)
    settings = RoundSettings(algorithm, family, view, beta, B_y, delta, seed, clock, m)
    for t in range(1, T + 1):
        if t > 1:  # feedback that has arrived by this decision
            run.arrivals(t, m, refit_every)
        if t <= num_init:
            idx = run.random_arms(t, allowed)
        else:
            idx = run.choose(t, settings, allowed)
        run.issue(t, idx, delays, y_min)
        if progress is not None:
            progress.update(1)
    return run.result(algorithm, optimum, m)


def arrived_by(issue: Tensor, delay: Tensor, now: Tensor | float) -> Tensor:
    """Which queries' feedback has arrived by ``now`` (``issue``: ``k`` issue times;
    ``delay``: ``k x S`` delays): issued at ``s``, arrived at ``s + d <= now`` --
    :meth:`~botorch_bandits.delays.FeedbackLedger.usable`'s first half, over every
    seed at once.

    Args:
        issue: The ``k`` issue times of the queries.
        delay: Their ``k x S`` delays.
        now: The decision's time.

    Returns:
        The ``k x S`` bool mask ``issue + delay <= now``.

    Example:
        >>> usable = arrived_by(issue[:k], delay[:k], now) & within_window(
        ...     delay[:k], window
        ... )
    """
    return (issue.unsqueeze(-1) + delay) <= now


def within_window(delay: Tensor, window: float | None) -> Tensor:
    """Which delays are within the censoring window (all without one) -- the
    ledger's second half: feedback later than the window is censored for good.

    Args:
        delay: The delays (any shape, e.g. ``k x S``).
        window: The censoring window ``m`` (``None``: no window).

    Returns:
        The bool mask ``delay <= window`` of ``delay``'s shape (all ``True`` without
        a window).

    Example:
        >>> within_window(torch.tensor([3.0, 12.0]), window=10.0)
        tensor([ True, False])
    """
    if window is None:
        return torch.ones_like(delay, dtype=torch.bool)
    return delay <= window


def _check_delayed(
    algorithm: str,
    horizon: int,
    num_init: int,
    refit_every: int | None,
    delays: DelayDistribution,
    window: float | None,
    clock: str,
    issue_interval: float,
    beta: float | str,
) -> int:
    """The checked arguments of :func:`simulate_delayed`; the horizon."""
    if algorithm not in DELAYED_POLICIES:
        raise ValueError(
            f"`algorithm` must be one of {sorted(DELAYED_POLICIES)}, got {algorithm!r}."
        )
    T = _check_int("horizon", horizon, 1)
    _check_int("num_init", num_init, 0)
    if refit_every is not None:
        _check_int("refit_every", refit_every, 1)
    if not isinstance(delays, DelayDistribution):
        raise ValueError(
            f"`delays` must be a DelayDistribution (PoissonDelay, FixedDelay, ...), "
            f"got {delays!r}."
        )
    if window is not None and not (
        isinstance(window, (int, float)) and math.isfinite(window) and window >= 0
    ):
        raise ValueError(f"`window` (m) must be >= 0 or None, got window={window!r}.")
    if clock not in ("iteration", "time"):
        raise ValueError(f"`clock` must be 'iteration' or 'time', got clock={clock!r}.")
    if not (isinstance(issue_interval, (int, float)) and issue_interval > 0):
        raise ValueError(
            f"`issue_interval` must be > 0, got issue_interval={issue_interval!r}."
        )
    if beta != "theory" and not (
        isinstance(beta, (int, float)) and not isinstance(beta, bool) and beta >= 0
    ):
        raise ValueError(
            f"`beta` must be a number >= 0 or 'theory', got beta={beta!r}."
        )
    return T


def _contexts(
    problem: BanditProblem,
    T: int,
    contexts: Tensor | None,
    arm_contexts: Tensor | None,
) -> tuple[Tensor | None, Tensor]:
    """The arms allowed at each step (``T x N``; ``None``: all) and the optimum of
    each step (``T x S``)."""
    S, N = problem.num_seeds, problem.num_arms
    values = problem.values
    device = values.device
    if contexts is None:
        return None, problem.optimum.unsqueeze(0).expand(T, S)
    if arm_contexts is None:
        raise ValueError(
            "`contexts` needs `arm_contexts` (the context id of each arm)."
        )
    contexts = torch.as_tensor(contexts, device=device).long()
    arm_contexts = torch.as_tensor(arm_contexts, device=device).long()
    if contexts.shape != (T,) or arm_contexts.shape != (N,):
        raise ValueError(
            f"`contexts` must have shape ({T},) and `arm_contexts` ({N},), got "
            f"{tuple(contexts.shape)} and {tuple(arm_contexts.shape)}."
        )
    missing = set(contexts.tolist()) - set(arm_contexts.tolist())
    if missing:
        raise ValueError(f"`contexts` has ids without arms: {sorted(missing)}.")
    allowed = arm_contexts.unsqueeze(0) == contexts.unsqueeze(1)  # T x N
    optimum = torch.stack(
        [values.masked_fill(~allowed[t], -math.inf).max(-1).values for t in range(T)]
    )  # T x S
    return allowed, optimum


class _DelayedRun:
    """One simulation's state over every seed: the engines of the view (every
    query's, the completed queries'), the issue times, and what was chosen,
    observed and delayed at each step."""

    def __init__(
        self,
        problem: BanditProblem,
        view: str,
        family: str,
        seed: int,
        T: int,
        clock: str,
        issue_interval: float,
    ) -> None:
        self.problem, self.view = problem, view
        S = problem.num_seeds
        values = problem.values
        dtype, device = values.dtype, values.device
        ts = family == "ts"
        self.main = FiniteArmGP(
            problem.arms,
            problem.K,
            problem.noise,
            num_seeds=S,
            keep_root=ts and view != "ignore",
        )
        self.completed = None
        if view in ("ignore", "hallucinate"):
            self.completed = FiniteArmGP(
                problem.arms,
                problem.K,
                problem.noise,
                num_seeds=S,
                keep_root=ts and view == "ignore",
            )
        self._point_models()
        self.gen = torch.Generator().manual_seed(seed)
        self.noise_sd = problem.noise_sd.to(device)
        issue = torch.arange(T, dtype=dtype) * (
            issue_interval if clock == "time" else 1.0
        )
        if clock == "iteration":
            issue = issue + 1.0
        self.issue_times = issue.to(device)
        self.arms_t = torch.empty(T, S, dtype=torch.long, device=device)
        self.f_t = torch.empty(T, S, dtype=dtype, device=device)
        self.y_t = torch.empty(T, S, dtype=dtype, device=device)
        self.d_t = torch.empty(T, S, dtype=dtype, device=device)
        self.arrived = torch.zeros(T, S, dtype=torch.bool, device=device)
        self.seeds = torch.arange(S, device=device)

    def _point_models(self) -> None:
        """The model the rule reads (the completed queries' under "ignore") and
        its score points."""
        self.model = self.completed if self.view == "ignore" else self.main
        self.X = self.model.score_points

    def arrivals(self, t: int, m: float | None, refit_every: int | None) -> None:
        """Feedback that has arrived by decision ``t``: under censoring a value is
        used once it has arrived and only if its delay is within the window (the
        rule of :class:`~botorch_bandits.delays.FeedbackLedger`, over every seed at
        once), else completed-only models learn it; a refit on schedule; the
        hallucinated targets brought up to date."""
        k = t - 1
        now = self.issue_times[t - 1]
        arr_now = arrived_by(self.issue_times[:k], self.d_t[:k], now)
        new = arr_now & ~self.arrived[:k]
        self.arrived[:k] = arr_now
        if bool(new.any()):
            if self.view == "censor":
                usable = new & within_window(self.d_t[:k], m)
                for s in torch.nonzero(usable.any(-1)).flatten().tolist():
                    self.main.replace_target(s, self.y_t[s], usable[s])
            else:
                _observe_arrivals(self.completed, new, self.arms_t[:k], self.y_t[:k])
        if refit_every is not None and k % refit_every == 0:
            self.main, self.completed = _refit(
                self.problem, self.view, self.main, self.completed, self.arms_t[:k]
            )
            self._point_models()
        if self.view == "hallucinate":
            # pending -> completed-only posterior mean at its arm (GP-BUCB / GP-BTS)
            mu_c = self.completed.mean_buf_.gather(-1, self.arms_t[:k].T).T  # k x S
            self.main.set_targets(torch.where(self.arrived[:k], self.y_t[:k], mu_c))

    def random_arms(self, t: int, allowed: Tensor | None) -> Tensor:
        """An initial step: a uniformly random arm per seed (among those its context
        allows)."""
        S, N = self.problem.num_seeds, self.problem.num_arms
        device = self.problem.values.device
        if allowed is None:
            return torch.randint(N, (S,), generator=self.gen).to(device)
        choices = torch.nonzero(allowed[t - 1]).flatten()
        pick = torch.randint(choices.numel(), (S,), generator=self.gen).to(device)
        return choices[pick]

    def choose(self, t: int, settings: RoundSettings, allowed: Tensor | None) -> Tensor:
        """The rule's argmax per seed (over the arms the context allows)."""
        acqf = round_acquisition(
            self.model, self.problem, settings, t, self.issue_times, self.arms_t
        )
        with torch.no_grad():
            scores = acqf(self.X)  # N x S
        if allowed is not None:
            scores = scores.masked_fill(~allowed[t - 1].unsqueeze(-1), -math.inf)
        return scores.argmax(0)

    def issue(
        self, t: int, idx: Tensor, delays: DelayDistribution, y_min: float
    ) -> None:
        """Query ``idx`` at step ``t``: its value, noisy observation and delay
        drawn; every issued query enters the view's model, censored at ``y_min`` or
        hallucinated at the completed-only posterior mean ("ignore": none)."""
        problem, gen = self.problem, self.gen
        values = problem.values
        dtype, device = values.dtype, values.device
        S = problem.num_seeds
        f = values.gather(-1, idx.unsqueeze(-1)).squeeze(-1)
        y = f + self.noise_sd * torch.randn(S, generator=gen, dtype=dtype).to(device)
        point = _gather_arms(problem.arms, idx.unsqueeze(0))[0]  # S x d
        d = delays.sample(point, t, gen).to(device=device, dtype=dtype)
        self.arms_t[t - 1], self.f_t[t - 1], self.y_t[t - 1] = idx, f, y
        self.d_t[t - 1] = d
        if self.view == "censor":
            target = torch.full((S,), y_min, dtype=dtype, device=device)
            self.main.observe(idx, target)
        elif self.view == "hallucinate":
            self.main.observe(idx, self.completed.mean_buf_[self.seeds, idx])

    def result(self, algorithm: str, optimum: Tensor, m: float | None) -> DelayedResult:
        arrival = self.issue_times.unsqueeze(-1) + self.d_t
        late = torch.zeros_like(self.arrived) if m is None else self.d_t > m
        return DelayedResult(
            problem=self.problem.name,
            algorithm=algorithm,
            arms=self.arms_t,
            values=self.f_t,
            observations=self.y_t,
            delays=self.d_t,
            issue_times=self.issue_times,
            arrival_times=arrival,
            optimum=optimum,
            worst=self.problem.values.min(-1).values,
            window=m,
            late=late,
            censoring=self.view == "censor",
        )


def _refit(
    problem: BanditProblem,
    view: str,
    main: FiniteArmGP,
    completed: FiniteArmGP | None,
    arms_t: Tensor,
) -> tuple[FiniteArmGP, FiniteArmGP | None]:
    """Refit the SE hyperparameters per seed on the view's data (every query with its
    current, censored target for the SDF methods; the completed queries for the
    baselines) by the multi-start marginal-likelihood fit, and rebuild the model(s)
    with them, holding every stored observation (nothing is dropped)."""
    if view == "censor":
        Y = torch.stack(main._y_hist).T  # S x k
        idx = arms_t.T  # S x k
        mask = torch.ones_like(idx, dtype=torch.bool)
    else:  # the completed queries of each seed (their numbers differ): masked
        idx = torch.stack(completed._arms_hist).T  # S x steps, -1: none
        mask = idx >= 0
        Y = torch.stack(completed._y_hist).T.nan_to_num(0.0)
        idx = idx.clamp_min(0)
    X, mean, keep, counts, within = _distinct_rows(problem.arms, idx, Y, mask)
    fit = fit_gp_multistart(X, mean, keep, counts=counts, within=within)
    K, lam = _se_matrices(problem, main, fit.lengthscale, fit.outputscale, fit.noise)
    # a new prior per refit: its root (TS methods) by pivoted Cholesky, not eigh
    main = main.with_prior(K, lam, root_method="pivoted")
    if completed is not None:
        completed = completed.with_prior(K, lam, root_method="pivoted")
    return main, completed


def _distinct_rows(
    arms: Tensor, idx: Tensor, Y: Tensor, mask: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Each seed's observations (arm indices ``idx``, targets ``Y``, ``mask``:
    ``S x k``) as one row per distinct arm: ``(X, mean, mask, counts, within)`` for
    :func:`~botorch_bandits.models.multistart.fit_gp_multistart` (padded to the
    largest number of distinct arms; the likelihood is that of every observation)."""
    S = idx.shape[0]
    rows = []
    for s in range(S):
        a, y = idx[s][mask[s]], Y[s][mask[s]]
        uniq, inv = torch.unique(a, return_inverse=True)
        c = torch.bincount(inv, minlength=uniq.numel()).to(Y.dtype)
        mean = torch.zeros_like(c).index_add_(0, inv, y) / c.clamp_min(1.0)
        rows.append((uniq, mean, c, (y - mean[inv]).pow(2).sum()))
    u = max(1, max(r[0].numel() for r in rows))
    pad_idx = torch.zeros(S, u, dtype=torch.long, device=idx.device)
    dev = {"dtype": Y.dtype, "device": Y.device}
    means, counts = torch.zeros(S, u, **dev), torch.ones(S, u, **dev)
    keep = torch.zeros(S, u, dtype=torch.bool, device=Y.device)
    for s, (uniq, mean, c, _) in enumerate(rows):
        j = uniq.numel()
        pad_idx[s, :j], means[s, :j], counts[s, :j], keep[s, :j] = uniq, mean, c, True
    X = _gather_arms(arms, pad_idx.T).transpose(0, 1)  # S x u x d
    within = torch.stack([r[3] for r in rows])
    return X, means, keep, counts, within


def _se_matrices(problem, engine, ls, scale, noise) -> tuple[Tensor, Tensor]:
    """``S x N x N`` kernel matrices and ``S`` noises from the fits (seeds without a
    fit keep the engine's current ones)."""
    arms = problem.arms
    S, N = problem.num_seeds, problem.num_arms
    dtype = engine.K.dtype
    ls, scale, noise = (v.to(dtype) for v in (ls, scale, noise))
    fitted = torch.isfinite(ls)
    K = engine._K3.expand(S, N, N).clone()
    sq = torch.cdist(arms, arms).pow(2) if arms.ndim == 2 else None
    for s in torch.nonzero(fitted).flatten().tolist():
        d2 = sq if sq is not None else torch.cdist(arms[s], arms[s]).pow(2)
        torch.exp(d2 * (-0.5 / float(ls[s]) ** 2), out=K[s])
        K[s].mul_(float(scale[s]))
    lam = torch.where(fitted, noise.nan_to_num(1.0), engine._noise)
    return K, lam


def _observe_arrivals(model: FiniteArmGP, new: Tensor, arms: Tensor, y: Tensor) -> None:
    """Add the newly arrived feedback (``new``: ``k x S`` bool) to the completed-only
    model, oldest query first; seeds with fewer arrivals skip a round (arm -1)."""
    S = new.shape[1]
    lists = [torch.nonzero(new[:, s]).flatten() for s in range(S)]
    rounds = max(len(x) for x in lists)
    for r in range(rounds):
        idx = torch.full((S,), -1, dtype=torch.long, device=arms.device)
        val = torch.zeros(S, dtype=y.dtype, device=y.device)
        for s, steps in enumerate(lists):
            if r < len(steps):
                idx[s] = arms[steps[r], s]
                val[s] = y[steps[r], s]
        model.observe(idx, val)


def _recent(
    issue: Tensor, arms_t: Tensor, t: int, m: float | None, clock: str, arms: Tensor
) -> Tensor:
    r"""The queries whose feedback may still be censored at decision ``t``:
    :math:`x_{t-m}, ..., x_{t-1}` (iteration clock) or those issued within the last
    ``m`` time units (time clock); ``k x S x d``."""
    k = t - 1
    if m is None:
        lo = 0
    elif clock == "iteration":
        lo = max(0, k - int(m))
    else:
        lo = int(torch.searchsorted(issue[:k], issue[k] - m).item()) if k else 0
    return _gather_arms(arms, arms_t[lo:k])


class _TrackedGain(ObservedInformationGain):
    """The information gain the engine tracks for each seed's own points (seeds of
    the completed-only model may hold different numbers of points)."""

    def __call__(self, n: int, model: Any = None) -> Tensor:
        return observed_information_gain(model)


@dataclass(frozen=True)
class RoundSettings:
    r"""A delayed run's settings that shape each round's acquisition.

    Attributes:
        algorithm: The policy's name (a key of :data:`DELAYED_POLICIES`).
        family: ``"ucb"`` or ``"ts"``.
        view: ``"ignore"``, ``"hallucinate"`` or ``"censor"``.
        beta: A constant :math:`\beta_t`, or ``"theory"`` (the schedules).
        B_y: Bound on :math:`|y|` (the SDF inflation).
        delta: Confidence of the theory schedules.
        seed: The run's seed (each round's TS draw seeded from it and ``t``).
        clock: ``"iteration"`` or ``"time"``.
        window: The censoring window ``m`` (``None``: no window).
    """

    algorithm: str
    family: str  # "ucb" or "ts"
    view: str  # "ignore", "hallucinate" or "censor"
    beta: float | str  # a constant, or "theory"
    B_y: float
    delta: float
    seed: int
    clock: str
    window: float | None


def round_acquisition(
    model: FiniteArmGP,
    problem: BanditProblem,
    r: RoundSettings,
    t: int,
    issue: Tensor,
    arms_t: Tensor,
) -> Any:
    """Round ``t``'s acquisition through the package's factory: the censored view
    gets GP-UCB-SDF / GP-TS-SDF (the unscaled TS variant: GP-TS with v = 1 on the
    censored view), the others IGP-UCB / GP-TS with the tracked information gain (or
    a constant ``beta``).

    Args:
        model: The engine the rule reads (the view's model).
        problem: The problem (its arms, RKHS norm and noise).
        r: The run's :class:`RoundSettings`.
        t: The round (1-based).
        issue: The issue times of the queries (at least ``t``).
        arms_t: The ``T x S`` arm indices of the queries (the first ``t - 1`` rows
            issued).

    Returns:
        The round's acquisition function (from
        :func:`~botorch_bandits.acquisition.factory.make_acquisition`); TS draws
        on the problem's arms, seeded from ``r.seed`` and ``t``.

    Example:
        >>> r = RoundSettings("GP-UCB-SDF", "ucb", "censor", 1.0, 1.0, 0.1, 0,
        ...                   "iteration", 20.0)
        >>> acqf = round_acquisition(engine, problem, r, t, issue_times, arms_t)
        >>> scores = acqf(engine.score_points)  # N x S
    """
    theory = r.beta == "theory"
    algorithm = "GP-TS" if r.family == "ts" else "IGP-UCB"
    draws = {"candidates": problem.arms, "seed": seeding.step_seed(r.seed, t)}
    if r.family != "ts":
        draws = {}
    if r.view == "censor":
        recent = _recent(issue, arms_t, t, r.window, r.clock, problem.arms)
        if r.algorithm in UNSCALED_TS_POLICIES:  # GP(mu, k_post) on the censored view
            return make_acquisition(
                model, "GP-TS", Confidence(beta=1.0, delta=r.delta), t=t, **draws
            )
        conf = Confidence(
            beta=None if theory else float(r.beta),
            B=problem.rkhs_norm,
            R=problem.noise_sd,
            delta=r.delta,
        )
        return make_acquisition(
            model, algorithm, conf, t=t, recent=recent, B_y=r.B_y, **draws
        )
    conf = Confidence(
        beta=None if theory else float(r.beta),
        B=problem.rkhs_norm,
        R=problem.noise_sd,
        delta=r.delta,
        gamma=_TrackedGain() if theory else None,
    )
    return make_acquisition(model, algorithm, conf, t=t, **draws)
