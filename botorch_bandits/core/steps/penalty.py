"""The long-term constraints with their own GPs (``constraint_model="separate"``,
the practical default): each constraint's GP fitted on the completed trials in the
constraint's unit-free scale (:func:`constraint_fit_step`), and the rule made the
Lagrangian -- the objective's upper bound minus the multipliers times each
constraint's upper bound (:class:`~botorch_bandits.acquisition.penalized.PenalizedUCB`),
or qLogNEI of :math:`f - \\sum_j \\kappa_j g_j` (:func:`penalty_step`)."""

from __future__ import annotations

import torch
from botorch.acquisition.logei import qLogNoisyExpectedImprovement
from botorch.acquisition.objective import LinearMCObjective
from botorch.models.gpytorch import GPyTorchModel
from botorch.models.model import ModelList
from botorch.models.model_list_gp_regression import ModelListGP
from botorch.sampling.list_sampler import ListSampler
from botorch.sampling.normal import SobolQMCNormalSampler

from botorch_bandits.acquisition.penalized import PenalizedUCB
from botorch_bandits.core.fit import FIT_COUNTS, build_model
from botorch_bandits.core.options import DecisionOptions
from botorch_bandits.core.round import Round, Steps
from botorch_bandits.core.steps.constraints import in_units
from botorch_bandits.core.steps.data import known_noise_rule
from botorch_bandits.core.steps.model import fit_counts, known_noise, scheduled_fit
from botorch_bandits.core.steps.rule import at_now, qlognei_sampler
from botorch_bandits.hyperparameters import Hyperparameters
from botorch_bandits.models import FeatureCache, standardize
from botorch_bandits.seeding import step_seed

__all__ = [
    "constraint_fit_step",
    "penalty_step",
    "steps",
]


def constraint_fit_step(r: Round) -> None:
    """A GP per constraint on the completed trials (the model's inputs ``r.X0``),
    its targets the constraint's values in its scale (``r.g_scale``) standardized,
    their reported SEMs as known noise (the objective's ``sems`` rule), fitted by
    marginal likelihood on the objective's refit schedule (``refit``: each
    constraint's last recorded fit reused until it is due, and the next fit
    warm-started from it unless ``fit_start="prior"``; past ``sparse_after`` on the
    objective fit's uniform subset, and the sparse model, as the objective's GP); the
    penalty's multipliers and bounds in the GPs' units (``r.g_kappa``,
    ``r.g_bounds``); ``constraint_fits`` in the metadata. Running trials are not
    hallucinated for the constraints (their values are unknown; the objective's
    pending view applies to the objective).

    Args:
        r: The round; reads ``done``, ``X0``, ``g_scale``, ``kappa``, ``opts``,
            ``history`` (the number of constraints, their last recorded fits),
            what the refit schedule counts (:func:`fit_counts`) and ``cache`` (the fits; the
            sparse model's arguments), writes ``g_model``, ``g_kappa``,
            ``g_bounds`` and the metadata's ``constraint_fits``.

    Raises:
        ValueError: ``sems="fixed"`` and a constraint's target has no standard
            error (:func:`~botorch_bandits.core.steps.data.known_noise_rule`), or a
            constraint's values cannot be standardized.
    """
    done, m = r.done, r.history.num_constraints
    G = torch.tensor([list(e.g) for e in done], dtype=torch.double).reshape(-1, m)
    G = in_units(G, r.g_scale)
    nan = float("nan")
    S = (
        torch.tensor(
            [[nan] * m if e.g_sem is None else list(e.g_sem) for e in done],
            dtype=torch.double,
        ).reshape(-1, m)
        / r.g_scale
    )
    opts = r.opts
    # the sparse model's feature blocks of the constraints' own kernels (the
    # objective's cache keeps the last kernel only)
    sparse = {**r.sparse, "cache": FeatureCache()}
    base = {k: v for k, v in fit_counts(r).items() if k in FIT_COUNTS}
    last = _last_fits(r, m)
    models, kappa, bounds, fits = [], [], [], []
    for j in range(m):
        Z, mean, sd = standardize(G[:, j])
        rule = known_noise_rule(S[:, j], opts.sems, [e.index for e in done])
        known = known_noise((S[:, j] / sd).square(), rule)
        counts = {**base, **({"sems": rule} if rule != "none" else {})}
        warm = None  # (with fit_start="prior" none: a failed fit keeps the prior)
        if last[j] is not None and opts.fit_start != "prior":
            warm = Hyperparameters.from_dict(last[j])
        fit = scheduled_fit(r, Z, known, last[j], warm, counts)
        hyper = Hyperparameters.from_dict(fit)
        models.append(build_model(r.X0, Z, None, hyper, **sparse, known=known))
        # kappa_j (mean + sd z) = kappa_j sd (z - (-mean / sd)): the GP's units
        kappa.append(float(r.kappa[j]) * sd)
        bounds.append(-mean / sd)
        fits.append(fit)
    r.g_model = ModelList(*models)
    r.g_kappa = torch.tensor(kappa, dtype=torch.double)
    r.g_bounds = torch.tensor(bounds, dtype=torch.double)
    r.meta["constraint_fits"] = fits


def _last_fits(r: Round, m: int) -> list[dict | None]:
    """Each constraint's last recorded fit, where the history holds one per
    constraint, each with hyperparameters for these inputs (else ``None``: fitted
    afresh)."""
    fits = r.history.constraint_fits
    d = r.X0.shape[-1]
    if fits is None or len(fits) != m:
        return [None] * m
    ok = all("mean" in f and len(f.get("lengthscale") or ()) == d for f in fits)
    return list(fits) if ok else [None] * m


def penalty_step(r: Round) -> None:
    """The rule on the objective becomes the Lagrangian's: for a confidence-bound
    rule, :class:`PenalizedUCB` on the objective's and the constraints' GPs at the
    rule's width (the constraints read at their upper bound: pessimistic); for
    qLogNEI, qLogNEI of :math:`f - \\sum_j \\kappa_j g_j` on their joint posterior
    (its baseline the objective model's rows).

    Args:
        r: The round; reads ``model``, ``g_model``, ``g_kappa`` and ``opts``; for
            a confidence-bound rule ``acqf`` (its ``sigma_multiplier``) and
            ``g_bounds``, for qLogNEI ``X``, ``domain`` and ``position``; writes
            ``penalized`` (no metadata).
    """
    models = (r.model, *r.g_model.models)
    joint = all(isinstance(m, GPyTorchModel) for m in models)
    # ModelListGP: a joint posterior; past sparse_after a list of the sparse and
    # exact posteriors, each sampled by its own seeded sampler
    model = ModelListGP(*models) if joint else ModelList(*models)
    if r.opts.algorithm == "qLogNEI":
        weights = torch.cat([torch.ones(1, dtype=torch.double), -r.g_kappa])
        sampler = qlognei_sampler(r)
        if not joint:
            base = step_seed(r.opts.seed, r.position)
            sampler = ListSampler(
                *(
                    SobolQMCNormalSampler(sampler.sample_shape, seed=base + i)
                    for i in range(len(models))
                )
            )
        r.penalized = qLogNoisyExpectedImprovement(
            model=model,
            X_baseline=at_now(r, r.X[:, : r.domain.dim]),
            sampler=sampler,
            objective=LinearMCObjective(weights),
            prune_baseline=True,
        )
        return
    # the rule's multiplier of sigma (BoTorch's UCB under a constant ``beta``: beta)
    mult = getattr(r.acqf, "sigma_multiplier", r.opts.beta)
    mult = float(torch.as_tensor(mult).reshape(-1)[0])
    r.penalized = PenalizedUCB(model, mult**2, r.g_kappa, r.g_bounds)
    r.penalized.sigma_multiplier = mult


def steps(opts: DecisionOptions) -> Steps:
    """The separate constraints' steps under ``opts`` (with
    ``constraint_model="separate"`` only): their GPs, and the rule as their penalty.

    Args:
        opts: The decision's options.

    Returns:
        The steps by their place in the pipeline.
    """
    if opts.constraints is None or opts.constraints.model != "separate":
        return {}
    return {"constraint_fit": constraint_fit_step, "penalty": penalty_step}
