"""The rule, one step per kind: the papers' bandits -- IGP-UCB, GP-UCB, GP-TS with
their confidence schedules, or GP-UCB-SDF / GP-TS-SDF under censoring
(:func:`bandit_rule`) -- or BoTorch's ``qLogNoisyExpectedImprovement``, Ax's
default acquisition (:func:`qlognei_rule`); then its scores on the decision set,
with the rows the earlier steps exclude (:func:`score_step`)."""

from __future__ import annotations

import math
from dataclasses import replace

import torch
from botorch.acquisition.logei import qLogNoisyExpectedImprovement
from botorch.sampling.normal import SobolQMCNormalSampler
from torch import Tensor

from botorch_bandits.acquisition.factory import Confidence, make_acquisition
from botorch_bandits.core.optimize import near_in_flight
from botorch_bandits.core.options import DecisionOptions
from botorch_bandits.core.round import Round, Steps
from botorch_bandits.core.steps.errors import not_finite
from botorch_bandits.models.forgetting import at_time, forgetting_summary, with_time
from botorch_bandits.seeding import step_seed

__all__ = [
    "QLOGNEI_SAMPLES",
    "at_now",
    "bandit_rule",
    "qlognei_rule",
    "qlognei_sampler",
    "score_step",
    "steps",
    "time_step",
]

#: quasi-Monte Carlo samples of qLogNEI (BoTorch's default for its MC acquisitions)
QLOGNEI_SAMPLES = 512


def bandit_rule(r: Round) -> None:
    """The papers' rule on the model (:func:`make_acquisition`): its confidence
    (a constant ``beta``, or ``B``, ``R`` and the epoch's ``delta``) at round
    ``t`` (the model's rows plus one); GP-TS draws exactly on the decision set, or
    a pathwise function for the gradient optimizer; under censoring the SDF
    variants with the recent queries and ``B_y``: in the theory mode with Verma et
    al.'s :math:`\\beta_t` (Thm. 1), in the practical mode with the rule's own
    :math:`\\beta_t` (the multiplier it has without censoring) plus the inflation
    :math:`B_y\\sum_s\\sigma_{t-1}(x_s)` (``censoring`` in the metadata).

    Args:
        r: The round; reads ``model``, ``X``, ``R`` and ``R_epoch``
            (:attr:`~botorch_bandits.core.round.Round.R_rule`), ``delta``,
            ``recent``, ``y_min``, ``B_y``, ``gradient``, ``opts``, ``domain`` and
            ``position``, writes ``acqf`` and the metadata's ``censoring`` (under
            censoring in the practical mode without a constant ``beta``).
    """
    opts, unit = r.opts, r.domain.unit
    conf = Confidence(
        beta=opts.beta, B=opts.B, R=r.R_rule, delta=r.delta, num_arms=unit.shape[0]
    )
    t = r.X.shape[0] + 1
    if r.recent is not None and opts.theory is None and opts.beta is None:
        plain = make_acquisition(r.model, opts.algorithm, conf, t=t)
        beta_t = float(torch.as_tensor(plain.sigma_multiplier).reshape(-1)[0])
        conf = replace(conf, beta=beta_t)
        r.meta["censoring"] = {"y_min": r.y_min, "B_y": r.B_y, "beta": beta_t}
    r.acqf = make_acquisition(
        r.model,
        opts.algorithm,
        conf,
        t=t,
        seed=step_seed(opts.seed, r.position),
        candidates=None if r.gradient else at_now(r, unit),
        sampler="pathwise" if r.gradient else None,
        recent=r.recent,
        B_y=r.B_y,
    )


def qlognei_rule(r: Round) -> None:
    """BoTorch's ``qLogNoisyExpectedImprovement`` on the model, its baseline the
    model's rows (the completed trials, and the running ones as the pending rule
    puts them), its quasi-Monte Carlo samples seeded by the decision's step: the
    acquisition most Ax users run, under the same steps as the bandits. With no row
    in the model yet the baseline is the running trials' points (with none, the
    decision set's first row; ``baseline`` in the metadata).

    Args:
        r: The round; reads ``model``, ``X``, ``H``, ``active``, ``domain``,
            ``opts`` and ``position``, writes ``acqf`` and the metadata's
            ``baseline`` (only with no row in the model).
    """
    # under forgetting the baseline's points at the decision's time (the best
    # point now, not when it was evaluated); with no row in the model yet (every
    # trial running, pending="ignore"), the running trials' points: the improvement
    # is then over the prior's values there
    X = r.X[:, : r.domain.dim]
    if X.shape[0] == 0:
        X = r.inputs(r.H)[:, : r.domain.dim] if r.H else r.domain.unit[:1]
        r.meta["baseline"] = "in flight" if r.H else "decision set"
    baseline = at_now(r, X)
    r.acqf = qLogNoisyExpectedImprovement(
        model=r.model,
        X_baseline=baseline,
        sampler=qlognei_sampler(r),
        prune_baseline=True,
    )


def qlognei_sampler(r: Round) -> SobolQMCNormalSampler:
    """qLogNEI's quasi-Monte Carlo sampler, seeded by the decision's step.

    Args:
        r: The round; reads ``opts`` (the seed) and ``position``.

    Returns:
        A ``SobolQMCNormalSampler`` of :data:`QLOGNEI_SAMPLES` samples.
    """
    return SobolQMCNormalSampler(
        sample_shape=torch.Size([QLOGNEI_SAMPLES]),
        seed=step_seed(r.opts.seed, r.position),
    )


def at_now(r: Round, X: Tensor) -> Tensor:
    """``X`` (the search space's coordinates) as the model's inputs at the
    decision's time: under ``forgetting`` the time column added.

    Args:
        r: The round; reads ``opts`` (``forgetting``) and ``position``.
        X: ``k x d`` points of the search space (unit-cube coordinates).

    Returns:
        ``X`` itself without ``forgetting``, else ``k x (d + 1)``: the decision's
        position as the last column.
    """
    if not r.opts.forgetting:
        return X
    return with_time(X, [r.position] * X.shape[0])


def time_step(r: Round) -> None:
    """Under ``forgetting``: the rule as a function of the point at the decision's
    time (:func:`~botorch_bandits.models.forgetting.at_time`); the fitted rate in
    the metadata (``forgetting``: the time lengthscale, half-life and 5 % lag, in
    trials).

    Args:
        r: The round; reads the rule (``r.rule``), ``domain``, ``position`` and
            ``hyper``, writes ``timed`` and the metadata's ``forgetting`` (with
            fitted hyperparameters).
    """
    r.timed = at_time(r.rule, r.domain.dim, r.position)
    if r.hyper is not None:
        r.meta["forgetting"] = forgetting_summary(r.hyper.lengthscale[-1])


def score_step(r: Round) -> None:
    """The rule's scores on the decision set (an error naming the largest target
    where one is not finite); the rows of points not to propose again
    (``repeats="avoid"``) and in flight (``pending="ignore"``) at ``-inf`` while
    another row remains; ``sigma_multiplier`` and ``round`` in the metadata.

    Args:
        r: The round; reads the rule (``r.rule``), ``domain``, ``busy``,
            ``evaluated``, ``apart``, ``done``, ``X``, ``opts`` and ``history``
            (the metric, for an error), writes ``scores``, ``kept_out``,
            ``kept_apart`` and the metadata's ``sigma_multiplier``, ``round``,
            ``avoided`` (where ``evaluated`` is set), ``kept_apart`` (where points
            are kept apart) and ``repeat_reason`` (where every row was evaluated).

    Raises:
        ValueError: A score is not finite
            (:func:`~botorch_bandits.core.steps.errors.not_finite`).
    """
    unit, meta, acqf = r.domain.unit, r.meta, r.rule
    with torch.no_grad():
        scores = acqf(unit.unsqueeze(-2))
    if not bool(torch.isfinite(scores).all()):
        not_finite(scores, r.done, r.history.metric)
    busy = r.busy
    kept_out, kept_apart = r.evaluated or [], r.apart
    if kept_out:  # their rows of the decision set, unless every row is one
        rows = {r.domain.index.get(tuple(x)) for x in kept_out} - {None}
        if kept_apart is not None:  # and the rows close to a point in flight
            near = near_in_flight(unit, *kept_apart)
            close = set(near.nonzero().reshape(-1).tolist())
            if len(rows | close | set(busy)) < unit.shape[0]:
                rows |= close
                meta["kept_apart"] = int(kept_apart[0].shape[0])
            else:
                kept_apart = None
        if len(rows | set(busy)) < unit.shape[0]:
            busy = sorted(rows | set(busy))
        else:
            meta["repeat_reason"] = "every point of the decision set was evaluated"
            kept_out, kept_apart = [], None
    if r.evaluated is not None:  # (repeats="avoid" under a noise-free fit)
        meta["avoided"] = len(kept_out)
    r.kept_out, r.kept_apart = kept_out, kept_apart
    if busy:
        scores = scores.clone()
        scores[busy] = -math.inf
    r.scores = scores
    mult = getattr(acqf, "sigma_multiplier", r.opts.beta)
    meta["sigma_multiplier"] = (
        None if mult is None else float(torch.as_tensor(mult).reshape(-1)[0])
    )
    meta["round"] = r.X.shape[0] + 1


def steps(opts: DecisionOptions) -> Steps:
    """The rule's steps, in every decision: the rule by ``algorithm``, forgetting's
    time (with ``forgetting`` only) and the scores on the decision set.

    Args:
        opts: The decision's options.

    Returns:
        The steps by their place in the pipeline.
    """
    rule = qlognei_rule if opts.algorithm == "qLogNEI" else bandit_rule
    return {
        "rule": rule,
        **({"time": time_step} if opts.forgetting else {}),
        "score": score_step,
    }
