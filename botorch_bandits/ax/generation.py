r"""The bandit generation strategy for Ax: a Sobol initialization node, then
:class:`BanditNode`, which runs one of the package's acquisition functions on the
experiment's data.

Every call recomputes the round's state from the experiment alone -- the trials in
index order, their objective and constraint values, which trials are still running
and when their data arrived, which trials explored uniformly -- so a reloaded
experiment makes the same next decision as an uninterrupted one (the node persists
only its constructor arguments; it caches Ax's transforms and the decision sets,
pure functions of the search space, the fixed features and the options).

Bandit semantics in Ax (DESIGN.md facts):

* arms may be pulled again: the node is built with ``should_deduplicate=False`` and a
  fallback-free path, so Ax neither rejects a repeated arm nor silently replaces it by
  a Sobol point;
* the search space keeps Ax's semantics (:mod:`botorch_bandits.ax.space`): the GP
  works in the unit cube of Ax's own transforms (``RemoveFixed``, ordered choices
  as integers, ``OneHot``, ``IntToFloat``, ``Log``, ``Logit``, ``UnitX``: a log-scale
  parameter is modelled in the log); the decision set is finite -- every point of a
  small discrete space, else ``num_candidates`` scrambled Sobol points of that cube
  (seeded, so fixed for the experiment's life) -- and every candidate passes
  ``SearchSpace.check_membership`` (bounds, choices, linear parameter
  constraints), with the features that ``get_next_trials(fixed_parameters=...)``
  fixes set on it;
* batches: ``get_next_trials(max_trials=n)`` makes n decisions in a row; each sees
  the earlier ones (and any Sobol trials of the same call) as pending under the
  ``pending`` rule. Under ``"ignore"`` a pending trial is left out of the model, and
  the decision is the best arm *not in flight* (the arms of running trials and of
  the batch so far are excluded while another candidate remains; counted as
  ``excluded_in_flight`` in the metadata): the papers' asynchronous GP-UCB would
  re-pull the same arm n times, which in an Ax loop wastes n - 1 evaluations;
* bad data stops the strategy with an error naming the trial and the metric, never
  a silent freeze: a non-finite objective or constraint value, a COMPLETED trial
  without its objective value, or acquisition values that are not finite (values
  so large that the GP overflows). Mark such a trial abandoned
  (``client.mark_trial_abandoned``) to leave it out -- it is then counted, like a
  failed trial;
* outcome constraints are never ignored: they are long-term constraints under
  ``long_term_constraints=True``; without it the node refuses the experiment with
  an error naming the constraints and the option (the bandit algorithms of the
  other papers have no constraint to honour per trial);
* two modes, the same algorithm (the objective is negated when it is minimized):

  - ``mode="theory"``: raw objective values, no outcome transform --
    :math:`\beta_t` bounds :math:`|f - \mu_{t-1}| / \sigma_{t-1}` for the objective
    as the user states it, with :math:`B` its RKHS norm and :math:`R` its noise
    scale; a fixed kernel (or ``hyperparameters="fitted"``: a marginal-likelihood
    fit on the completed trials at every call, recorded in the metadata); the
    argmax over the finite decision set (``optimizer="finite"``); pending trials
    ignored by default;
  - ``mode="practical"`` (the default): BoTorch's standard ``SingleTaskGP`` fitted
    at every call on the targets standardized over the completed trials (and
    rounded to a :math:`2^{-30}` grid, so that ``a*y + b``, ``a > 0``, gives the
    same trials), warm-started from the fit recorded in the latest trial's
    metadata, falling back to it (with a warning, recorded) when a fit fails; the
    schedules on the standardized scale with ``B = 1`` and ``R`` the fitted noise's
    standard deviation unless given; the acquisition maximized over the search
    space (``optimizer="gradient"``: BoTorch's ``optimize_acqf`` from the best
    points of the decision set, discrete coordinates held at their starting values,
    GP-TS on a pathwise draw); pending trials hallucinated by default.

Options, orthogonal and combinable:

* ``pending`` -- running trials (RUNNING, no data): ``"ignore"`` (left out; GP-UCB /
  asy-TS style), ``"hallucinate"`` (in the GP with the completed-only posterior mean
  as target: GP-BUCB / GP-BTS), ``"censor"`` (in the GP with target ``y_min`` until
  their data arrives, and for good if it arrives more than ``window`` trials or
  ``window_seconds`` seconds after the trial started -- the value is stored by Ax and
  reported, never used; the acquisition becomes GP-UCB-SDF / GP-TS-SDF with the
  :math:`\nu_t` inflation, Verma et al. 2022, Alg. 1). FAILED and ABANDONED trials
  have no data: they are left out of the model and counted in the metadata.
* ``long_term_constraints`` -- the experiment's outcome constraints
  (``metric <= bound`` / ``>= bound``) are long-term constraints
  :math:`\sum_t g(x_t) \le 0` (Shi & Eryilmaz 2022): trials are split into epochs of
  ``epoch_length``; the multipliers :math:`\kappa^l` are replayed from the
  constraint values of every completed epoch (Algorithm 2, multiplicative with
  :math:`\psi(x) = e^{cx}`; or Algorithm 3, additive with step :math:`\mu`), the
  model is fitted on the composite targets :math:`f - \sum_j\kappa_j(\psi(g_j) - 1)`
  (or :math:`f - \sum_j\kappa_j g_j`) and the inner confidence uses
  :math:`(\delta/L, R)` (or :math:`(\delta/2L, R\sqrt{1+\|\kappa\|^2})`). An epoch
  updates the multipliers once all its trials have data.
* ``restarts`` -- GP-UCB-CPD (Avanesov, Algorithm 2): a trial explores uniformly
  (a seeded uniform draw from the decision set, tagged ``cpd_uniform`` in its
  metadata) iff :math:`|U| \le \xi\sqrt{|H|}`; each completed uniform trial runs the
  detector (Algorithm 1) over the tails of the completed uniform trials since the
  last restart; a detection restarts: the model uses only trials after it.

Each generator run's metadata records the decision: the round, the multiplier of
:math:`\sigma`, the pending / censored / failed counts, the epoch and
:math:`\kappa`, the restarts so far and whether the trial explored uniformly.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from ax.adapter.registry import Generators
from ax.core.data import Data
from ax.core.experiment import Experiment
from ax.core.optimization_config import MultiObjectiveOptimizationConfig
from ax.core.parameter import RangeParameter
from ax.core.trial_status import TrialStatus
from ax.core.types import ComparisonOp
from ax.generation_strategy.external_generation_node import ExternalGenerationNode
from ax.generation_strategy.generation_node import GenerationNode
from ax.generation_strategy.generation_strategy import GenerationStrategy
from ax.generation_strategy.generator_spec import GeneratorSpec
from ax.generation_strategy.transition_criterion import MaxTrialsAwaitingData, MinTrials
from torch import Tensor

from botorch_bandits.acquisition import (
    GPUCB,
    GPUCBSDF,
    IGPUCB,
    GPThompsonSampling,
    GPThompsonSamplingSDF,
)
from botorch_bandits.ax.space import Space
from botorch_bandits.changepoint import (
    GPUCBCPD,
    ChangePointDetector,
    cpd_threshold,
    explore_uniformly,
    finite_domain,
)
from botorch_bandits.constraints import (
    ExponentialPenalty,
    composite_targets,
    epoch_schedule,
    replay_multipliers,
)
from botorch_bandits.delays import FeedbackLedger
from botorch_bandits.models import (
    STANDARDIZED_QUANTUM,
    fit_practical_gp,
    fixed_gp,
    gp_hyperparameters,
    make_kernel,
    one_thread,
    practical_gp,
    standardize,
)
from botorch_bandits.validation import (
    check_choice,
    check_count,
    check_finite,
    check_nonnegative,
    check_open_unit,
    check_positive,
)

ALGORITHMS = ("IGP-UCB", "GP-UCB", "GP-TS")
"""The ``algorithm=`` values of :func:`bandit_generation_strategy`."""
MODES = ("practical", "theory")
OPTIMIZERS = ("gradient", "finite")
PENDING = ("ignore", "hallucinate", "censor")
"""The ``pending=`` rules for running trials: left out (asynchronous GP-UCB / TS), in the
GP at the posterior mean (GP-BUCB / BTS), or censored at ``y_min`` (GP-UCB-SDF / TS-SDF)."""
HYPERPARAMETERS = ("fixed", "fitted")
MULTIPLIER_UPDATES = ("multiplicative", "additive")
KERNELS = ("matern52", "rbf")
_GONE = (TrialStatus.FAILED, TrialStatus.ABANDONED)
#: the theory mode's defaults (its settings before the practical mode existed)
THEORY_DEFAULTS = {
    "pending": "ignore",
    "kernel": "matern52",
    "lengthscale": 0.2,
    "noise": 1e-2,
    "hyperparameters": "fixed",
    "R": 0.1,
    "optimizer": "finite",
}
#: the practical mode's defaults (``R=None``: estimated from the fitted noise)
PRACTICAL_DEFAULTS = {
    "pending": "hallucinate",
    "hyperparameters": "fitted",
    "optimizer": "gradient",
}
#: starting points of the gradient optimizer: the best points of the decision set
NUM_STARTS = 8
#: L-BFGS-B iterations per start
MAX_ITER = 200


@dataclass
class _Trial:
    """One trial as the node sees it (recomputed from the experiment every call)."""

    index: int
    x: list[float]  # unit-cube coordinates
    f: float | None  # objective as maximized; None while no data
    g: list[float] | None  # constraint values, g <= 0 feasible
    created: float  # seconds
    completed: float | None
    uniform: bool  # a GP-UCB-CPD uniform-exploration trial


def _issued(x: list[float], uniform: bool) -> _Trial:
    """A candidate issued in this call: no Ax trial yet, no value, no times."""
    return _Trial(
        index=-1, x=x, f=None, g=None, created=math.nan, completed=None, uniform=uniform
    )


class BanditNode(ExternalGenerationNode):
    r"""An Ax generation node running a bandit algorithm on a finite decision set.

    Args:
        name: Node name (``"bandit"``).
        algorithm: ``"IGP-UCB"`` (Chowdhury & Gopalan, Alg. 1), ``"GP-UCB"``
            (Srinivas et al., Thm 1 schedule with :math:`|D|` the decision set's
            size) or ``"GP-TS"`` (Chowdhury & Gopalan, Alg. 2; an exact joint draw on
            the set, or a pathwise draw for the gradient optimizer).
        mode: ``"practical"`` (default) or ``"theory"`` (see the module).
        pending: ``"ignore"``, ``"hallucinate"`` or ``"censor"`` (see the module);
            default ``"hallucinate"`` (practical) / ``"ignore"`` (theory).
        window: Censoring window m in trials (``pending="censor"``).
        window_seconds: Censoring window in seconds instead (the time clock,
            Verma et al. App. A.4); at most one of the two windows; neither: no
            window.
        y_min: The censored target (a lower bound of the objective as maximized).
        B_y: Bound on :math:`|y|` for the SDF inflation.
        beta: A constant :math:`\beta` (linear unit, multiplies :math:`\sigma`)
            instead of the theory schedules (``None``).
        kernel, lengthscale: Theory mode: the fixed kernel on the unit cube
            (``"matern52"``, ``"rbf"``; default Matern-5/2, 0.2); with
            ``hyperparameters="fitted"`` the starting point. Refused in the
            practical mode.
        noise: Theory mode: :math:`\lambda`, the GP's noise variance (0.01).
        hyperparameters: Theory mode: ``"fixed"`` (default) or ``"fitted"``
            (lengthscale, output scale and noise fitted by marginal likelihood on the
            completed trials at every call; the schedules then use the fitted
            model). The practical mode always fits (``"fitted"``).
        B, R, delta: RKHS-norm bound, sub-Gaussian noise constant, confidence; in
            the practical mode on the standardized scale, ``R=None`` (default) the
            fitted noise's standard deviation; in the theory mode ``R`` defaults
            to 0.1.
        num_candidates: Size of the Sobol decision set for continuous spaces (in
            the practical mode: where the optimizer's starting points come from).
        optimizer: ``"gradient"`` (practical default) or ``"finite"`` (theory
            default; see the module).
        seed: Seed of the decision set, the GP-TS draws and the uniform draws.
        long_term_constraints: Treat the experiment's outcome constraints as
            long-term constraints (see the module).
        epoch_length: Trials per epoch S (``long_term_constraints``).
        multiplier_update: ``"multiplicative"`` (Alg. 2) or ``"additive"`` (Alg. 3).
        penalty_c: :math:`c` of the exponential penalty :math:`\psi(x) = e^{cx}`.
        step: :math:`\mu` of the additive update.
        num_epochs: :math:`L`, for the epochs' confidence :math:`\delta/L`
            (``None``: the number of epochs begun so far).
        restarts: GP-UCB-CPD restarts (see the module).
        xi: :math:`\xi` of the uniform-exploration rule.
        cpd_c: :math:`c` of the detector's regularization
            :math:`\rho_n = c\,n^{-(2\alpha+d)/(2\alpha+d+1)}`.
        cpd_C: :math:`C` of the threshold :math:`\theta_n = C n^{-2\alpha/(2\alpha+d+1)}`.
        cpd_alpha: :math:`\alpha` (the kernel's smoothness) in those exponents.
        transition_criteria: Ax transition criteria (none: the node runs forever).
    """

    def __init__(
        self,
        name: str = "bandit",
        algorithm: str = "IGP-UCB",
        mode: str = "practical",
        pending: str | None = None,
        window: int | None = None,
        window_seconds: float | None = None,
        y_min: float = 0.0,
        B_y: float = 1.0,
        beta: float | None = None,
        kernel: str | None = None,
        lengthscale: float | None = None,
        noise: float | None = None,
        hyperparameters: str | None = None,
        B: float = 1.0,
        R: float | None = None,
        delta: float = 0.1,
        num_candidates: int = 512,
        optimizer: str | None = None,
        seed: int = 0,
        long_term_constraints: bool = False,
        epoch_length: int = 20,
        multiplier_update: str = "multiplicative",
        penalty_c: float = 1.0,
        step: float = 0.5,
        num_epochs: int | None = None,
        restarts: bool = False,
        xi: float = math.sqrt(3.0),
        cpd_c: float = 20.0,
        cpd_C: float = 2.6,
        cpd_alpha: float = 2.5,
        transition_criteria: list[Any] | None = None,
    ) -> None:
        # every argument checked here, when the strategy is built (not at the first
        # decision), and named as the caller wrote it
        if not isinstance(name, str) or not name:
            raise ValueError(f"`name` must be a non-empty string, got name={name!r}.")
        check_choice("algorithm", algorithm, ALGORITHMS)
        check_choice("mode", mode, MODES)
        if mode == "practical":
            # the practical mode fits BoTorch's standard GP: the theory's kernel
            # settings would be ignored, so they are refused, never mixed in
            given = {
                k: v
                for k, v in (
                    ("kernel", kernel),
                    ("lengthscale", lengthscale),
                    ("noise", noise),
                )
                if v is not None
            }
            if given or hyperparameters == "fixed":
                named = ", ".join(f"{k}={v!r}" for k, v in given.items()) or (
                    "hyperparameters='fixed'"
                )
                raise ValueError(
                    f"mode='practical' fits BoTorch's standard GP (RBF, priors, "
                    f"standardized outcomes) and does not use {named}: pass "
                    "mode='theory' for the theory's fixed kernel, or leave them out."
                )
            defaults = PRACTICAL_DEFAULTS
        else:
            defaults = THEORY_DEFAULTS
        pending = defaults["pending"] if pending is None else pending
        hyperparameters = (
            defaults["hyperparameters"] if hyperparameters is None else hyperparameters
        )
        optimizer = defaults["optimizer"] if optimizer is None else optimizer
        if mode == "theory":
            kernel = THEORY_DEFAULTS["kernel"] if kernel is None else kernel
            lengthscale = (
                THEORY_DEFAULTS["lengthscale"] if lengthscale is None else lengthscale
            )
            noise = THEORY_DEFAULTS["noise"] if noise is None else noise
            R = THEORY_DEFAULTS["R"] if R is None else R
        check_choice("pending", pending, PENDING)
        check_choice("hyperparameters", hyperparameters, HYPERPARAMETERS)
        check_choice("optimizer", optimizer, OPTIMIZERS)
        check_choice("multiplier_update", multiplier_update, MULTIPLIER_UPDATES)
        if mode == "theory":
            check_choice("kernel", kernel, KERNELS)
        check_count("window", window, 0, allow_none=True)
        check_positive("window_seconds", window_seconds, allow_none=True)
        if window is not None and window_seconds is not None:
            raise ValueError(
                f"Give at most one of `window` (trials) and `window_seconds`, got "
                f"window={window!r} and window_seconds={window_seconds!r}."
            )
        check_finite("y_min", y_min)
        check_nonnegative("B_y", B_y)
        check_positive("beta", beta, allow_none=True)
        if mode == "theory":
            check_positive("lengthscale", lengthscale)
            check_positive("noise", noise)
        check_nonnegative("B", B)
        if R is not None:
            check_nonnegative("R", R)
        check_open_unit("delta", delta)
        check_count("num_candidates", num_candidates, 1)
        check_count("seed", seed, 0)
        for flag, value in (
            ("long_term_constraints", long_term_constraints),
            ("restarts", restarts),
        ):
            if not isinstance(value, bool):
                raise ValueError(
                    f"`{flag}` must be True or False, got {flag}={value!r}."
                )
        check_count("epoch_length", epoch_length, 1)
        check_count("num_epochs", num_epochs, 1, allow_none=True)
        check_positive("penalty_c", penalty_c)
        check_positive("step", step)
        check_positive("xi", xi, allow_zero=True)
        check_positive("cpd_c", cpd_c)
        check_positive("cpd_C", cpd_C)
        check_positive("cpd_alpha", cpd_alpha)
        super().__init__(
            name=name, should_deduplicate=False, transition_criteria=transition_criteria
        )
        # no silent Sobol fallback: a failure must surface
        self.fallback_specs = {}
        self.algorithm, self.mode, self.pending = algorithm, mode, pending
        self.window, self.window_seconds = window, window_seconds
        self.y_min, self.B_y, self.beta = float(y_min), float(B_y), beta
        self.kernel = kernel
        self.lengthscale = None if lengthscale is None else float(lengthscale)
        self.noise = None if noise is None else float(noise)
        self.hyperparameters = hyperparameters
        self.B, self.delta = float(B), float(delta)
        self.R = None if R is None else float(R)
        self.num_candidates, self.optimizer, self.seed = num_candidates, optimizer, seed
        self.long_term_constraints = bool(long_term_constraints)
        self.epoch_length, self.multiplier_update = epoch_length, multiplier_update
        self.penalty_c, self.step, self.num_epochs = (
            float(penalty_c),
            float(step),
            num_epochs,
        )
        self.restarts, self.xi = bool(restarts), float(xi)
        self.cpd_c, self.cpd_C, self.cpd_alpha = (
            float(cpd_c),
            float(cpd_C),
            float(cpd_alpha),
        )
        self._state: dict[str, Any] = {}
        # Ax's transforms and decision sets by search space and fixed features: pure
        # functions of those and of the options, so a cache, not state
        self._spaces: dict[str, Space] = {}
        self._sets: dict[tuple, Any] = {}

    #: constructor arguments that make up the node's whole persisted state
    OPTIONS = (
        "name",
        "algorithm",
        "mode",
        "pending",
        "window",
        "window_seconds",
        "y_min",
        "B_y",
        "beta",
        "kernel",
        "lengthscale",
        "noise",
        "hyperparameters",
        "B",
        "R",
        "delta",
        "num_candidates",
        "optimizer",
        "seed",
        "long_term_constraints",
        "epoch_length",
        "multiplier_update",
        "penalty_c",
        "step",
        "num_epochs",
        "restarts",
        "xi",
        "cpd_c",
        "cpd_C",
        "cpd_alpha",
    )

    def options(self) -> dict[str, Any]:
        """The constructor arguments (without the transition criteria)."""
        return {k: getattr(self, k) for k in self.OPTIONS}

    # ------------------------------------------------------------------ decision set
    def _space(self, experiment: Experiment) -> Space:
        key = repr(experiment.search_space)
        if key not in self._spaces:
            self._spaces = {key: Space(experiment.search_space, key=key)}
        return self._spaces[key]

    def _decision_set(self, space: Space, fixed: dict[str, Any]) -> Any:
        key = (space.key, repr(sorted(fixed.items())))
        if key not in self._sets:
            if len(self._sets) > 16:
                self._sets.clear()
            self._sets[key] = space.decision_set(self.num_candidates, self.seed, fixed)
        return self._sets[key]

    # ------------------------------------------------------------------ Ax hooks
    def update_generator_state(self, experiment: Experiment, data: Data) -> None:
        """Rebuild everything from the experiment: every trial (point, objective and
        constraint values, times, uniform tag), checked; the decision set is built
        per call, in :meth:`_gen` (it depends on the call's fixed features)."""
        opt = experiment.optimization_config
        if opt is None:
            raise ValueError("BanditNode needs an optimization config (an objective).")
        objective = opt.objective
        if isinstance(opt, MultiObjectiveOptimizationConfig) or (
            len(objective.metric_names) != 1
        ):
            raise ValueError(
                f"BanditNode optimizes one objective metric, got the objective "
                f"{objective.metric_names}: use Ax's own strategies for several "
                "objectives, or give one metric."
            )
        metric = objective.metric_names[0]
        sign = -1.0 if objective.minimize else 1.0
        constraints = self._constraints(opt)
        space = self._space(experiment)
        df = data.df
        if "step" in df.columns:  # map data: the last progression of each trial
            df = df.sort_values("step", kind="stable")
        values: dict[tuple[int, str], float] = {
            (int(r.trial_index), str(r.metric_name)): float(r.mean)
            for r in df.itertuples()
        }
        trials, failed, points = [], [], []
        warm = None  # the latest recorded fit of this node: the next fit's start
        for t in sorted(experiment.trials.values(), key=lambda t: t.index):
            fit = (
                (t.generator_runs[0].gen_metadata or {}).get("fit")
                if t.generator_runs
                else None
            )
            if isinstance(fit, dict) and "lengthscale" in fit:
                warm = {k: fit[k] for k in ("lengthscale", "noise", "mean")}
            f = values.get((t.index, metric))
            if t.status in _GONE or (
                t.status == TrialStatus.EARLY_STOPPED and f is None
            ):
                failed.append(t.index)
                continue
            if len(t.arms) != 1:
                raise ValueError(
                    f"Trial {t.index} has {len(t.arms)} arms: BanditNode needs "
                    "single-arm trials (one point per trial)."
                )
            if f is None and t.status.is_completed:
                raise ValueError(
                    f"Trial {t.index} is {t.status.name} but has no value for the "
                    f"objective metric {metric!r}: attach it "
                    f"(client.complete_trial(trial_index={t.index}, raw_data=...)) or "
                    f"mark the trial abandoned "
                    f"(client.mark_trial_abandoned(trial_index={t.index})); BanditNode "
                    "does not guess it."
                )
            if f is not None:
                _check_value(t.index, metric, f)
            g = None
            if f is not None and constraints:
                g = []
                for names, weights, s, bound in constraints:
                    missing = [n for n in names if (t.index, n) not in values]
                    if missing:
                        raise ValueError(
                            f"Trial {t.index} has objective data but no value for "
                            f"the constraint metric(s) {missing}: every constraint "
                            "value is needed for the multipliers."
                        )
                    for n in names:
                        _check_value(t.index, n, values[(t.index, n)])
                    lhs = sum(
                        w * values[(t.index, n)]
                        for n, w in zip(names, weights, strict=True)
                    )
                    g.append(s * (lhs - bound))
            meta = t.generator_runs[0].gen_metadata if t.generator_runs else {}
            done = t.time_completed if f is not None else None
            points.append(t.arms[0].parameters)
            trials.append(
                _Trial(
                    index=t.index,
                    x=[],
                    f=None if f is None else sign * f,
                    g=g,
                    created=t.time_created.timestamp(),
                    completed=None
                    if f is None
                    else (done or t.time_created).timestamp(),
                    uniform=bool((meta or {}).get("cpd_uniform", False)),
                )
            )
        for e, x in zip(trials, space.coordinates(points).tolist(), strict=True):
            e.x = x
        self._state = {
            "space": space,
            "metric": metric,
            "trials": trials,
            "failed": failed,
            "num_constraints": len(constraints),
            "proposed": [],  # candidates made by this node in this call
            "warm": warm
            if warm is not None and len(warm["lengthscale"]) == space.dim
            else None,
            "fits": {},  # this call's fits by their data (one fit per data set)
            "foreign": [],  # other nodes' candidates of this call (Sobol)
        }

    def _constraints(
        self, opt: Any
    ) -> list[tuple[list[str], list[float], float, float]]:
        """The outcome constraints as (metrics, weights, sign, bound) of
        :math:`g = s(\\sum w m - b) \\le 0`; refused without ``long_term_constraints``
        (never ignored silently)."""
        cons = list(opt.outcome_constraints)
        if not self.long_term_constraints:
            if cons:
                raise ValueError(
                    f"The experiment has the outcome constraints "
                    f"{[c.expression for c in cons]}, and BanditNode was built with "
                    "long_term_constraints=False, which would ignore them. Set "
                    "long_term_constraints=True (they then hold on average over the "
                    "run: Shi & Eryilmaz 2022) or remove them from the optimization "
                    "config."
                )
            return []
        out = []
        for c in cons:
            if c.relative:
                raise ValueError(
                    f"Long-term constraints must be absolute, got the relative "
                    f"constraint {c.expression!r}."
                )
            weights = [w for _, w in c.metric_weights]
            s = 1.0 if c.op == ComparisonOp.LEQ else -1.0
            out.append((c.metric_names, weights, s, float(c.bound)))
        if not out:
            raise ValueError(
                "`long_term_constraints=True` needs outcome constraints on the "
                "experiment (e.g. configure_optimization(..., "
                "outcome_constraints=['g <= 0'])); it has none."
            )
        return out

    # ------------------------------------------------------------------ pieces
    def _base_kernel(self) -> Any:
        return make_kernel(self.kernel, self.lengthscale)

    def _ard_kernel(self) -> Any:
        """The node's kernel with one lengthscale per dimension (for fitting)."""
        from gpytorch.kernels import MaternKernel, RBFKernel

        if self.kernel == "matern52":
            return MaternKernel(nu=2.5, ard_num_dims=self.d)
        return RBFKernel(ard_num_dims=self.d)

    def _model(self, X: Tensor, Y: Tensor, hyper: dict | None) -> Any:
        X = X.reshape(-1, self.d)
        if self.mode == "practical":
            return practical_gp(X, Y, hyper)
        if hyper is None:
            return fixed_gp(X, Y.reshape(-1, 1), self._base_kernel(), self.noise)
        from gpytorch.kernels import ScaleKernel

        k = ScaleKernel(self._ard_kernel()).to(torch.double)
        k.base_kernel.lengthscale = hyper["lengthscale"]
        k.outputscale = hyper["outputscale"]
        for p in k.parameters():
            p.requires_grad_(False)
        return fixed_gp(X, Y.reshape(-1, 1), k, hyper["noise"])

    def _fit_hyperparameters(self, X: Tensor, Y: Tensor) -> dict | None:
        """Marginal-likelihood fit (lengthscale(s), output scale, noise) of a
        zero-mean GP with the node's kernel on raw targets; ``None`` with < 2
        points (the fixed prior is used)."""
        if X.shape[0] < 2:
            return None
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from gpytorch.kernels import ScaleKernel
        from gpytorch.means import ZeroMean
        from gpytorch.mlls import ExactMarginalLogLikelihood

        gp = SingleTaskGP(
            X,
            Y.reshape(-1, 1),
            covar_module=ScaleKernel(self._ard_kernel()),
            mean_module=ZeroMean(),
            outcome_transform=None,
        ).to(torch.double)
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
        with torch.no_grad():
            return {
                "lengthscale": gp.covar_module.base_kernel.lengthscale.detach().clone(),
                "outputscale": float(gp.covar_module.outputscale),
                "noise": float(gp.likelihood.noise.reshape(-1)[0]),
            }

    def _multipliers(self, active: list[_Trial]) -> tuple[Tensor, int, int]:
        """(kappa of the current epoch, epoch index l (0-based), completed epochs
        used). Epochs are blocks of ``epoch_length`` trials in index order; an
        epoch updates the multipliers once all its trials have data."""
        m = self._state["num_constraints"]
        prefix = []
        for e in active:
            if e.g is None:
                break
            prefix.append(e.g)
        g = torch.tensor(prefix, dtype=torch.double).reshape(-1, m)
        rule = self.multiplier_update
        rows = replay_multipliers(
            g,
            self.epoch_length,
            rule,
            penalty=ExponentialPenalty(self.penalty_c)
            if rule == "multiplicative"
            else None,
            step=self.step if rule == "additive" else None,
        )
        epoch = len(active) // self.epoch_length
        used = min(epoch, rows.shape[0] - 1)
        return rows[used], epoch, used

    def _cpd(self, active: list[_Trial]) -> tuple[int, int, list[int], list[int]]:
        """GP-UCB-CPD's state replayed over the trials by the changepoint module
        (:meth:`GPUCBCPD.replay`, with each trial's uniform decision as issued and
        running trials in ``H`` without a value): (position where the history H
        starts, :math:`|U|`, trial indices that restarted, the n that fired)."""
        st = self._state
        if "detector" not in st:
            # the integration domain: the decision set of the whole space (no fixed
            # features); its volume the product of the range widths in the user's
            # units (a choice counts 1) times the share inside the constraints
            domain = self._decision_set(st["space"], {})
            box = math.prod(
                float(p.upper - p.lower)
                for p in st["space"].search_space.parameters.values()
                if isinstance(p, RangeParameter)
            )
            # the detector's kernel is fixed for the run (every call replays the
            # detections): the theory kernel, or in the practical mode the theory
            # mode's default (Matern-5/2, lengthscale 0.2 of the unit cube) -- a
            # fitted kernel would change past detections as the fit moves
            kernel = (
                self._base_kernel()
                if self.mode == "theory"
                else make_kernel(
                    THEORY_DEFAULTS["kernel"], THEORY_DEFAULTS["lengthscale"]
                )
            )
            st["detector"] = ChangePointDetector(
                kernel,
                finite_domain(domain.unit, volume=box * domain.fraction),
                c=self.cpd_c,
                threshold=lambda n: cpd_threshold(
                    n, self.cpd_C, self.cpd_alpha, self.d
                ),
                alpha=self.cpd_alpha,
                d=self.d,
            )
        algo = GPUCBCPD.replay(
            [torch.tensor(e.x, dtype=torch.double) for e in active],
            [e.f for e in active],
            st["detector"],
            uniform=[e.uniform for e in active],
            xi=self.xi,
        )
        state = algo.state
        start = state.restarts[-1] + 1 if state.restarts else 0
        restarts = [active[t].index for t in state.restarts]
        return start, len(state.uniform), restarts, list(state.detections)

    # ------------------------------------------------------------------ decision
    @property
    def d(self) -> int:
        return self._state["space"].dim

    def get_next_candidate(self, pending_parameters: list[dict]) -> dict:
        # one torch thread: the matrices are small, and extra threads only compete
        # with the evaluations (measured 3-4x slower with two threads on two cores);
        # it also makes the decision bit-identical wherever it is recomputed
        with one_thread():
            return self._next_candidate()

    def _next_candidate(self) -> dict:
        st = self._state
        cands = st["set"]
        unit: Tensor = cands.unit
        # the live trials in order: the experiment's, then this call's earlier
        # candidates (other nodes' first, then this node's)
        active: list[_Trial] = st["trials"] + st["foreign"] + st["proposed"]
        position = len(active)  # this trial's position among the live trials
        meta: dict[str, Any] = {
            "algorithm": self.algorithm,
            "pending_view": self.pending,
            "t": position + 1,
            "failed": len(st["failed"]),
            "decision_set_size": int(unit.shape[0]),
        }
        if st["fixed"]:
            meta["fixed_features"] = dict(st["fixed"])
        # --- GP-UCB-CPD: restarts and the uniform-exploration rule
        start, uniform = 0, False
        if self.restarts:
            start, num_uniform, restarts, fired = self._cpd(active)
            uniform = explore_uniformly(num_uniform, position - start, self.xi)
            meta.update(
                cpd_uniform=uniform,
                cpd_restarts=restarts,
                cpd_detections=fired,
                cpd_history=position - start,
                cpd_uniform_count=num_uniform,
            )
        # --- long-term constraints: this epoch's multipliers
        kappa = None
        if self.long_term_constraints:
            kappa, epoch, used = self._multipliers(active)
            meta.update(epoch=epoch, kappa=kappa.tolist(), epochs_used=used)
        # under "ignore": the arms in flight (running trials and this call's earlier
        # candidates), excluded while another candidate remains (see the module)
        busy: list[int] = []
        if self.pending == "ignore":
            busy = sorted(
                {cands.index.get(tuple(e.x)) for e in active if e.f is None} - {None}
            )
            if len(busy) >= unit.shape[0]:
                busy = []
            meta["excluded_in_flight"] = len(busy)
        if uniform:
            rng = np.random.default_rng([int(self.seed), position])
            free = sorted(set(range(unit.shape[0])) - set(busy))
            best = free[int(rng.integers(len(free)))]
            meta["sigma_multiplier"] = None
            return self._propose(best, uniform=True, meta=meta)
        # --- the data the model sees
        H = active[start:]

        # the targets of the completed trials: f, or the composite targets of the
        # epoch's multipliers (one vectorized call)
        done = [e for e in H if e.f is not None]
        X0 = torch.tensor([e.x for e in done], dtype=torch.double).reshape(-1, self.d)
        Y0 = torch.tensor([e.f for e in done], dtype=torch.double)
        if kappa is not None and done:
            Y0 = composite_targets(
                Y0,
                torch.tensor([e.g for e in done], dtype=torch.double),
                kappa,
                self.multiplier_update,
                ExponentialPenalty(self.penalty_c)
                if self.multiplier_update == "multiplicative"
                else None,
            )
        y_min, B_y, R = self.y_min, self.B_y, self.R
        if self.mode == "practical":
            # standardized targets (the decision is the same for a*y + b, a > 0);
            # y_min and B_y are in the objective's units: mapped the same way
            try:
                Y0, m, s = standardize(Y0)
            except ValueError:
                self._not_finite(None, done)
            q = STANDARDIZED_QUANTUM
            y_min = round((self.y_min - m) / s / q) * q
            B_y = round((self.B_y + abs(m)) / s / q) * q
            meta["standardize"] = {"mean": m, "std": s}
            hyper = self._practical_fit(X0, Y0, meta)
            if R is None:  # the fitted noise's standard deviation (standardized)
                R = math.sqrt(hyper["noise"])
            meta["R"] = R
        elif self.hyperparameters == "fitted":
            hyper = self._fit_hyperparameters(X0, Y0)
            if hyper is not None:
                meta["fitted"] = {
                    "lengthscale": hyper["lengthscale"].reshape(-1).tolist(),
                    "outputscale": hyper["outputscale"],
                    "noise": hyper["noise"],
                }
        else:
            hyper = None
        delta = self.delta
        if kappa is not None:
            L = self.num_epochs or meta["epoch"] + 1
            delta, R = epoch_schedule(self.multiplier_update, self.delta, L, R, kappa)
            meta["delta_epoch"] = delta
        targets = {e.index: float(y) for e, y in zip(done, Y0.tolist(), strict=True)}
        recent = None
        if self.pending == "censor":
            X, Y, recent, n_cens, n_late = self._censored_view(H, targets, y_min)
            meta.update(censored=n_cens, late=n_late)
        else:
            X, Y = X0, Y0
            waiting = [e.x for e in H if e.f is None]
            if self.pending == "hallucinate" and waiting:
                Xw = torch.tensor(waiting, dtype=torch.double)
                with torch.no_grad():
                    mu = (
                        self._model(X0, Y0, hyper)
                        .posterior(Xw.unsqueeze(-2))
                        .mean.reshape(-1)
                    )
                X, Y = torch.cat([X0, Xw]), torch.cat([Y0, mu])
            meta["pending"] = len(waiting)
        model = self._model(X, Y, hyper)
        t = X.shape[0] + 1
        acqf = self._acquisition(model, unit, recent, t, position, R, delta, B_y)
        with torch.no_grad():
            scores = acqf(unit.unsqueeze(-2))
        if not bool(torch.isfinite(scores).all()):
            self._not_finite(scores, done)
        if busy:
            scores = scores.clone()
            scores[busy] = -math.inf
        mult = getattr(acqf, "sigma_multiplier", self.beta)
        meta["sigma_multiplier"] = float(torch.as_tensor(mult).reshape(-1)[0])
        meta["round"] = t
        if self.optimizer == "gradient":
            flight = [e.x for e in active if e.f is None]
            return self._optimized(acqf, scores, flight, meta)
        return self._propose(int(scores.argmax()), uniform=False, meta=meta)

    def _practical_fit(self, X0: Tensor, Z0: Tensor, meta: dict) -> dict:
        """The practical GP's hyperparameters on the completed trials (standardized
        targets): a marginal-likelihood fit warm-started from the last recorded fit;
        if the fit fails, the last good hyperparameters with a warning (recorded in
        the metadata as ``fit.status = "fallback"`` and its reason). One fit per
        data set in a call (every decision of a batch sees the same completed data)."""
        st = self._state
        key = (X0.numpy().tobytes(), Z0.numpy().tobytes())
        if key not in st["fits"]:
            warm = st["warm"]
            reason = None
            if X0.shape[0] == 0:
                hyper, status = warm, "prior"
            else:
                seed = self.seed * 1_000_003 + X0.shape[0]
                hyper, reason = fit_practical_gp(X0, Z0, warm, seed)
                status = "fitted"
                if hyper is None:
                    hyper, status = warm, "fallback"
                    warnings.warn(
                        f"BanditNode: the GP fit on {X0.shape[0]} trials failed "
                        f"({reason}); this decision uses "
                        + (
                            "the last good hyperparameters"
                            if warm is not None
                            else "BoTorch's initial hyperparameters"
                        )
                        + " (recorded in the trial's metadata as fit.status="
                        "'fallback').",
                        stacklevel=2,
                    )
            if hyper is None:  # no fit yet: BoTorch's initial values
                hyper = gp_hyperparameters(practical_gp(X0, Z0))
            fit = {"status": status, **hyper}
            if reason is not None:
                fit["reason"] = reason
            st["fits"][key] = fit
        fit = st["fits"][key]
        meta["fit"] = dict(fit)
        return {k: fit[k] for k in ("lengthscale", "noise", "mean")}

    def _optimized(
        self, acqf: Any, scores: Tensor, flight: list[list[float]], meta: dict
    ) -> dict:
        """The acquisition's maximizer over the search space: L-BFGS-B (BoTorch's
        ``optimize_acqf``, with the search space's linear constraints and the call's
        fixed features) from the ``NUM_STARTS`` best points of the decision set;
        discrete coordinates (integers, choices) keep their starting values, so the
        points of the decision set are the discrete search. The result is mapped back
        with Ax's transforms and checked exactly (:meth:`Space.contains`); a result that
        fails the check, or (under ``pending="ignore"``) that repeats a point in
        flight, gives way to the next best result, then to the best point of the
        decision set (recorded as ``optimizer`` in the metadata)."""
        st = self._state
        space: Space = st["space"]
        unit = st["set"].unit
        finite = torch.isfinite(scores)
        k = min(NUM_STARTS, int(finite.sum()))
        starts = torch.topk(torch.where(finite, scores, -math.inf), k).indices.tolist()
        hold = sorted(set(space.discrete) | set(space.fixed_dims(st["fixed"])))
        free = [i for i in range(self.d) if i not in hold] if space.names else []
        results: list[tuple[float, Tensor]] = []
        if free:
            groups: dict[tuple, list[int]] = {}
            for i in starts:
                groups.setdefault(tuple(unit[i, hold].tolist()), []).append(i)
            bounds = torch.tensor([[0.0] * self.d, [1.0] * self.d], dtype=torch.double)
            for idx in groups.values():
                try:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        x, v = self._lbfgs(acqf, unit, idx, hold, bounds)
                    # BoTorch's warnings (a start that scipy stopped early) are
                    # recorded with the decision, not printed at every call
                    for w in caught:
                        notes = meta.setdefault("optimizer_warnings", [])
                        if str(w.message) not in notes:
                            notes.append(str(w.message))
                except Exception as err:  # a failed start never stops the experiment
                    meta.setdefault("optimizer_errors", []).append(
                        f"{type(err).__name__}: {err}"
                    )
                    continue
                results += list(
                    zip(v.reshape(-1).tolist(), x.reshape(-1, self.d), strict=True)
                )
        results.sort(key=lambda r: -r[0])
        near = torch.tensor(flight, dtype=torch.double).reshape(-1, self.d)
        for value, x in results:
            if value < float(scores[starts[0]]):
                break  # no better than the best start
            params = space.parameterizations(x.unsqueeze(0))[0]
            params = {**params, **st["fixed"]}
            if not space.contains(params):
                continue
            coords = space.coordinates([params])
            if self.pending == "ignore" and near.shape[0] > 0:
                if bool(((near - coords).abs().amax(-1) < 1e-6).any()):
                    continue
            meta["optimizer"] = "L-BFGS-B"
            meta["acquisition_value"] = value
            return self._propose_params(params, coords[0].tolist(), meta)
        meta["optimizer"] = "decision set"
        return self._propose(starts[0], uniform=False, meta=meta)

    def _not_finite(self, scores: Tensor | None, done: list[_Trial]) -> None:
        """Acquisition values that are not finite (``scores``), or targets too large
        to standardize (``None``): an error naming the largest target (values so
        large that the GP overflows), never a silent argmax."""
        if scores is None:
            worst = max(done, key=lambda e: abs(e.f))
            raise ValueError(
                f"BanditNode cannot standardize the objective: the largest value is "
                f"trial {worst.index}'s {self._state['metric']!r} = {worst.f!r} (as "
                "maximized), and its mean or spread overflows. Rescale the objective "
                "(or constraints) or mark the trial abandoned."
            )
        bad = int((~torch.isfinite(scores)).sum())
        worst = max(done, key=lambda e: abs(e.f), default=None)
        culprit = (
            f" The largest value is trial {worst.index}'s {self._state['metric']!r} = "
            f"{worst.f!r} (as maximized)."
            if worst is not None
            else ""
        )
        raise ValueError(
            f"BanditNode's acquisition is not finite at {bad} of {scores.numel()} "
            f"candidates.{culprit} Values this large overflow the GP: rescale the "
            "objective (or constraints) or mark the trial abandoned."
        )

    def _lbfgs(
        self, acqf: Any, unit: Tensor, idx: list[int], hold: list[int], bounds: Tensor
    ) -> tuple[Tensor, Tensor]:
        """BoTorch's ``optimize_acqf`` from the starts ``unit[idx]`` (which share the
        values of the ``hold`` coordinates, fixed), with the space's constraints."""
        from botorch.optim import optimize_acqf

        space: Space = self._state["space"]
        return optimize_acqf(
            acqf,
            bounds=bounds,
            q=1,
            num_restarts=len(idx),
            batch_initial_conditions=unit[idx].unsqueeze(-2),
            fixed_features={i: float(unit[idx[0], i]) for i in hold} or None,
            inequality_constraints=space.inequality_constraints_with_margin or None,
            options={"maxiter": MAX_ITER},
            return_best_only=False,
        )

    def _propose(self, best: int, uniform: bool, meta: dict) -> dict:
        st = self._state
        st["proposed"].append(_issued(st["set"].unit[best].tolist(), uniform))
        self._last_meta = meta
        return dict(st["set"].params[best])

    def _propose_params(self, params: dict, x: list[float], meta: dict) -> dict:
        """A candidate off the decision set (the gradient optimizer's)."""
        self._state["proposed"].append(_issued(x, uniform=False))
        self._last_meta = meta
        return dict(params)

    def _censored_view(
        self, H: list[_Trial], targets: dict[int, float], y_min: float
    ) -> tuple[Tensor, Tensor, Tensor, int, int]:
        """Every trial of ``H`` with its censored target (Verma et al., Eq. 3), the
        recent queries for :math:`\nu_t`, and the censored / late counts."""
        live = [e for e in H if e.index >= 0]
        extra = [e for e in H if e.index < 0]  # proposed in this call: y_min
        if self.window_seconds is not None:
            ledger = FeedbackLedger(self.window_seconds, y_min, clock="time")
            events = [e.created for e in live] + [
                e.completed for e in live if e.completed is not None
            ]
            now = (max(events) if events else 0.0) + 1e-3
            for e in live:
                q = ledger.issue(e.x, at=e.created)
                if e.f is not None:
                    ledger.receive(q, targets[e.index], at=max(e.completed, e.created))
            issued = np.array([e.created for e in live] + [now] * len(extra))
            lo = int(np.searchsorted(issued, now - self.window_seconds, side="left"))
        else:
            ledger = FeedbackLedger(self.window, y_min)
            created = [e.created for e in live]
            for e in live:
                q = ledger.issue(e.x)
                if e.f is not None:
                    # the decision at which the data was first available: trials
                    # created by the completion, plus one
                    arrival = sum(c <= e.completed for c in created) + 1
                    ledger.receive(q, targets[e.index], at=max(arrival, q + 2))
            now = len(live) + 1
            n_all = len(live) + len(extra)
            lo = 0 if self.window is None else max(0, n_all - self.window)
        points = [e.x for e in live] + [e.x for e in extra]
        X = torch.tensor(points, dtype=torch.double).reshape(-1, self.d)
        Y = torch.cat(
            [
                ledger.censored_targets(now),
                torch.full((len(extra),), y_min, dtype=torch.double),
            ]
        )
        recent = X[lo:]
        n_cens = len(ledger.issued_before(now)) - len(ledger.completed(now))
        return X, Y, recent, n_cens + len(extra), len(ledger.late())

    def _acquisition(
        self,
        model: Any,
        unit: Tensor,
        recent: Tensor | None,
        t: int,
        position: int,
        R: float,
        delta: float,
        B_y: float,
    ) -> Any:
        seed = self.seed * 1_000_003 + position
        # GP-TS: an exact joint draw on the decision set, or a pathwise draw (a
        # function of x) for the gradient optimizer
        draw = (
            dict(sampler="pathwise")
            if self.optimizer == "gradient"
            else dict(candidates=unit)
        )
        if self.pending == "censor":
            sched = (
                dict(beta=float(self.beta))
                if self.beta is not None
                else dict(B_f=self.B, R=R, gamma="observed")
            )
            if self.algorithm == "GP-TS":
                return GPThompsonSamplingSDF(
                    model, recent, B_y=B_y, delta=delta, seed=seed, t=t, **draw, **sched
                )
            return GPUCBSDF(model, recent, B_y=B_y, delta=delta, t=t, **sched)
        if self.algorithm == "GP-TS":
            sched = (
                dict(v=float(self.beta))
                if self.beta is not None
                else dict(B=self.B, R=R)
            )
            return GPThompsonSampling(
                model, delta=delta, seed=seed, t=t, **draw, **sched
            )
        if self.beta is not None:
            from botorch.acquisition.analytic import UpperConfidenceBound

            return UpperConfidenceBound(model, beta=float(self.beta) ** 2)
        if self.algorithm == "GP-UCB":
            return GPUCB(
                model, schedule="finite", num_arms=unit.shape[0], delta=delta, t=t
            )
        return IGPUCB(model, B=self.B, R=R, delta=delta, t=t)

    def _gen(self, experiment, data=None, n=None, pending_observations=None, **kwargs):
        """Ax's generation call: the decision set with the call's fixed features
        (``get_next_trials(fixed_parameters=...)`` arrives here as
        ``fixed_features``), and the candidates other nodes made earlier in the same
        call (Ax has not attached them to the experiment yet; they are pending)."""
        st = self._state
        fixed_features = kwargs.get("fixed_features")
        fixed = dict(fixed_features.parameters) if fixed_features is not None else {}
        st["fixed"] = fixed
        st["set"] = self._decision_set(st["space"], fixed)
        # this call's candidates not yet on the experiment: Ax lists them as pending
        # observations without a trial index, in the order they were made; the last
        # ones are this node's own (recorded with their uniform tags)
        known = {e.index for e in st["trials"]} | set(st["failed"])
        lists = list((pending_observations or {}).values())
        in_call = [
            o.parameters
            for o in (max(lists, key=len) if lists else [])
            if o.trial_index is None or int(o.trial_index) not in known
        ]
        others = in_call[: max(len(in_call) - len(st["proposed"]), 0)]
        coords = st["space"].coordinates(others).tolist() if others else []
        st["foreign"] = [_issued(x, uniform=False) for x in coords]
        gr = super()._gen(
            experiment=experiment,
            data=data,
            n=n,
            pending_observations=pending_observations,
            **kwargs,
        )
        if gr._generator_key == self.name:
            gr._gen_metadata = dict(getattr(self, "_last_meta", {}))
        return gr


def _check_value(trial: int, metric: str, value: float) -> None:
    """A trial's metric value must be finite (NaN / inf would freeze the GP)."""
    if not math.isfinite(value):
        raise ValueError(
            f"Trial {trial} has the non-finite value {value!r} for the metric "
            f"{metric!r}: BanditNode needs finite values. Attach a finite value or "
            f"mark the trial abandoned (client.mark_trial_abandoned(trial_index="
            f"{trial})) to leave it out (it is then counted in the metadata's "
            "'failed')."
        )


class InitialTrials(MaxTrialsAwaitingData):
    """The Sobol node's pause: at most ``threshold`` initial trials (failed and
    abandoned ones are replaced). Once they exist the strategy moves on to the
    bandit node at its next generation, so this node no longer limits how many
    trials one call may ask for (Ax's ``GenerationStrategy.gen`` asks the current
    node for that limit *before* moving on: with ``MaxTrialsAwaitingData`` itself,
    ``get_next_trials(max_trials=4)`` right after the initialization made 1)."""

    def num_till_threshold(
        self, experiment: Experiment, trials_from_node: set[int]
    ) -> int:
        left = super().num_till_threshold(experiment, trials_from_node)
        return left if left > 0 else -1


def bandit_generation_strategy(
    algorithm: str = "IGP-UCB",
    num_init: int | None = None,
    seed: int = 0,
    mode: str = "practical",
    **node_kwargs: Any,
) -> GenerationStrategy:
    """A ``GenerationStrategy``: ``num_init`` Sobol trials (Ax's Sobol generator,
    which keeps the search space's semantics and fixed features; points may repeat
    in a space smaller than ``num_init``), then :class:`BanditNode`
    (``node_kwargs``: its options, all checked here) for every later trial. One call
    makes at most ``num_init`` Sobol trials; after them every trial is a bandit
    decision on the data that has arrived (running trials pending under the
    ``pending`` rule). The bandit node has no transition and never loops."""
    if num_init is None:  # Ax's own default initialization budget in practice
        num_init = 5 if mode == "practical" else 3
    check_count("num_init", num_init, 1)
    node = BanditNode(
        name="bandit", algorithm=algorithm, mode=mode, seed=seed, **node_kwargs
    )
    sobol = GenerationNode(
        name="Sobol",
        generator_specs=[
            GeneratorSpec(
                generator_enum=Generators.SOBOL,
                generator_kwargs={"seed": seed, "deduplicate": False},
            )
        ],
        transition_criteria=[MinTrials(threshold=num_init, transition_to="bandit")],
        pausing_criteria=[InitialTrials(threshold=num_init)],
    )
    name = f"Sobol+{algorithm}" + (" (practical)" if mode == "practical" else "")
    return GenerationStrategy(name=name, nodes=[sobol, node])
