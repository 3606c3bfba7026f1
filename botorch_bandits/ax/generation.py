r"""The bandit generation strategy for Ax: a Sobol initialization node, then
:class:`BanditNode`, which runs one of the package's acquisition functions on the
experiment's data.

Every call recomputes the round's state from the experiment alone -- the completed
trials and their objective values, the pending (running) trials and when their data
arrived -- so a reloaded experiment makes the same next decision as an uninterrupted
one (nothing is cached on the node; it stores only its constructor arguments).

Bandit semantics in Ax (DESIGN.md facts):

* arms may be pulled again: the node is built with ``should_deduplicate=False`` and a
  fallback-free path, so Ax neither rejects a repeated arm nor silently replaces it by
  a Sobol point;
* the decision set is finite: the full grid of the search space when it is discrete
  and small enough, else ``num_candidates`` scrambled Sobol points (seeded, so fixed
  for the experiment's life); the GP works on the unit cube;
* raw objective values: no Winsorize / standardize / log transform, so :math:`\beta_t`
  means what the theory says (the objective is negated when it is minimized);
* fixed kernel hyperparameters (the theory's setting).

Pending trials (RUNNING without data), ``pending=``:

* ``"ignore"``: left out (GP-UCB / asy-TS style);
* ``"hallucinate"``: in the GP with the completed-only posterior mean as target
  (GP-BUCB / GP-BTS);
* ``"censor"``: in the GP with target ``y_min`` until their data arrives -- and for
  good if it arrives more than ``window`` trials after they were started (it is
  recorded, never used); the acquisition becomes GP-UCB-SDF / GP-TS-SDF with the
  :math:`\nu_t` inflation over the pending points (Verma et al. 2022).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from ax.adapter.registry import Generators
from ax.core.data import Data
from ax.core.experiment import Experiment
from ax.core.parameter import ChoiceParameter, RangeParameter
from ax.core.trial_status import TrialStatus
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
from botorch_bandits.benchmarks.problems import make_kernel
from botorch_bandits.delays import FeedbackLedger
from botorch_bandits.models import fixed_gp

ALGORITHMS = ("IGP-UCB", "GP-UCB", "GP-TS")
PENDING = ("ignore", "hallucinate", "censor")


class BanditNode(ExternalGenerationNode):
    r"""An Ax generation node running a bandit algorithm on a finite decision set.

    Args:
        name: Node name (``"bandit"``).
        algorithm: ``"IGP-UCB"`` (Chowdhury & Gopalan, Alg. 1), ``"GP-UCB"``
            (Srinivas et al., Thm 1 schedule on the finite set) or ``"GP-TS"``
            (Chowdhury & Gopalan, Alg. 2; exact joint draw on the set).
        pending: ``"ignore"``, ``"hallucinate"`` or ``"censor"`` (see the module).
        window: Censoring window m in trials (``pending="censor"``; ``None``: no
            window).
        y_min: The censored target (a lower bound of the objective as maximized).
        B_y: Bound on :math:`|y|` for the SDF inflation.
        beta: A constant :math:`\beta` (linear unit, multiplies :math:`\sigma`)
            instead of the theory schedules (``None``).
        kernel, lengthscale: The fixed kernel on the unit cube (``"matern52"``,
            ``"rbf"``).
        noise: :math:`\lambda`, the GP's noise variance.
        B, R, delta: RKHS-norm bound, sub-Gaussian noise constant, confidence.
        num_candidates: Size of the Sobol decision set for continuous spaces.
        seed: Seed of the decision set and of the GP-TS draws.
        transition_criteria: Ax transition criteria (none: the node runs forever).
    """

    def __init__(
        self,
        name: str = "bandit",
        algorithm: str = "IGP-UCB",
        pending: str = "ignore",
        window: int | None = None,
        y_min: float = 0.0,
        B_y: float = 1.0,
        beta: float | None = None,
        kernel: str = "matern52",
        lengthscale: float = 0.2,
        noise: float = 1e-2,
        B: float = 1.0,
        R: float = 0.1,
        delta: float = 0.1,
        num_candidates: int = 512,
        seed: int = 0,
        transition_criteria: list[Any] | None = None,
    ) -> None:
        if algorithm not in ALGORITHMS:
            raise ValueError(
                f"`algorithm` must be one of {list(ALGORITHMS)}, got {algorithm!r}."
            )
        if pending not in PENDING:
            raise ValueError(
                f"`pending` must be one of {list(PENDING)}, got {pending!r}."
            )
        if window is not None and (
            isinstance(window, bool) or not isinstance(window, int) or window < 0
        ):
            raise ValueError(
                f"`window` must be an integer >= 0 or None, got {window!r}."
            )
        if not noise > 0:
            raise ValueError(f"`noise` must be > 0, got noise={noise!r}.")
        if (
            isinstance(num_candidates, bool)
            or not isinstance(num_candidates, int)
            or num_candidates < 1
        ):
            raise ValueError(
                f"`num_candidates` must be an integer >= 1, got {num_candidates!r}."
            )
        super().__init__(
            name=name, should_deduplicate=False, transition_criteria=transition_criteria
        )
        # no silent Sobol fallback: a failure must surface
        self.fallback_specs = {}
        self.algorithm, self.pending, self.window = algorithm, pending, window
        self.y_min, self.B_y, self.beta = float(y_min), float(B_y), beta
        self.kernel, self.lengthscale, self.noise = (
            kernel,
            float(lengthscale),
            float(noise),
        )
        self.B, self.R, self.delta = float(B), float(R), float(delta)
        self.num_candidates, self.seed = num_candidates, seed
        self._state: dict[str, Any] = {}

    # ------------------------------------------------------------------ decision set
    def _decision_set(self, experiment: Experiment) -> tuple[list[dict], Tensor]:
        """(parameterizations, their unit-cube coordinates ``N x d``)."""
        params = list(experiment.search_space.parameters.values())
        axes: list[list[Any] | None] = []
        for p in params:
            if isinstance(p, ChoiceParameter):
                axes.append(list(p.values))
            elif isinstance(p, RangeParameter) and p.parameter_type.name == "INT":
                axes.append(list(range(int(p.lower), int(p.upper) + 1)))
            elif isinstance(p, RangeParameter):
                axes.append(None)
            else:
                raise ValueError(
                    f"BanditNode supports range and choice parameters, got {p.name!r} "
                    f"of type {type(p).__name__}."
                )
        size = (
            math.prod(len(a) for a in axes)
            if all(a is not None for a in axes)
            else None
        )
        if size is not None and size <= self.num_candidates:
            idx = torch.cartesian_prod(*[torch.arange(len(a)) for a in axes]).reshape(
                size, len(axes)
            )
            unit = torch.stack(
                [idx[:, j].double() / max(len(a) - 1, 1) for j, a in enumerate(axes)],
                -1,
            )
        else:
            from torch.quasirandom import SobolEngine

            unit = SobolEngine(len(params), scramble=True, seed=self.seed).draw(
                self.num_candidates, dtype=torch.double
            )
            for j, a in enumerate(axes):  # snap discrete coordinates to their values
                if a is not None:
                    k = torch.round(unit[:, j] * (len(a) - 1))
                    unit[:, j] = k / max(len(a) - 1, 1)
        cands = []
        for row in unit.tolist():
            cand = {}
            for p, a, u in zip(params, axes, row, strict=True):
                if a is not None:
                    cand[p.name] = a[round(u * (len(a) - 1))]
                else:
                    cand[p.name] = p.lower + u * (p.upper - p.lower)
            cands.append(cand)
        return cands, unit

    def _to_unit(self, experiment: Experiment, parameterization: dict) -> list[float]:
        out = []
        for p in experiment.search_space.parameters.values():
            v = parameterization[p.name]
            if isinstance(p, ChoiceParameter):
                vals = list(p.values)
                out.append(vals.index(v) / max(len(vals) - 1, 1))
            else:
                out.append((float(v) - p.lower) / (p.upper - p.lower))
        return out

    # ------------------------------------------------------------------ Ax hooks
    def update_generator_state(self, experiment: Experiment, data: Data) -> None:
        """Rebuild everything from the experiment: decision set, completed and
        pending trials, the ledger of arrivals (for censoring)."""
        cands, unit = self._decision_set(experiment)
        objective = experiment.optimization_config.objective
        metric = objective.metric_names[0]
        sign = -1.0 if objective.minimize else 1.0
        df = data.df
        values = {
            int(r.trial_index): sign * float(r.mean)
            for r in df[df["metric_name"] == metric].itertuples()
        }
        # the window censors only in the censor view; the baselines use all arrivals
        window = self.window if self.pending == "censor" else None
        ledger = FeedbackLedger(window=window, y_min=self.y_min)
        trials = sorted(experiment.trials.values(), key=lambda t: t.index)
        created = [t.time_created for t in trials]
        for t in trials:
            arm = t.arms[0] if t.arms else None
            qid = ledger.issue(self._to_unit(experiment, arm.parameters))
            if t.index in values and t.status == TrialStatus.COMPLETED:
                done = t.time_completed or t.time_created
                # the decision at which the data was first available: trials
                # created before the completion, plus one
                arrival = sum(c <= done for c in created) + 1
                ledger.receive(qid, values[t.index], at=max(arrival, qid + 2))
        self._state = {
            "cands": cands,
            "unit": unit,
            "ledger": ledger,
            "num_trials": len(trials),
            "experiment": experiment,
            "proposed": [],  # candidates made in this get_next_trials call
        }

    def _model(self, X: Tensor, Y: Tensor) -> Any:
        k = make_kernel(self.kernel, self.lengthscale)
        return fixed_gp(X.reshape(-1, X.shape[-1]), Y.reshape(-1, 1), k, self.noise)

    def get_next_candidate(self, pending_parameters: list[dict]) -> dict:
        st = self._state
        ledger: FeedbackLedger = st["ledger"]
        unit: Tensor = st["unit"]
        d = unit.shape[-1]
        now = st["num_trials"] + 1  # the decision being made (iteration clock)
        done = ledger.completed(now) if self.pending != "censor" else []
        extra = list(st["proposed"])  # candidates proposed earlier in this same call
        meta: dict[str, Any] = {
            "algorithm": self.algorithm,
            "pending_view": self.pending,
            "t": now,
        }
        if self.pending == "censor":
            qs = ledger.issued_before(now)
            X = torch.tensor([q.x for q in qs] + extra, dtype=torch.double).reshape(
                -1, d
            )
            Y = torch.cat(
                [
                    ledger.censored_targets(now),
                    torch.full((len(extra),), self.y_min, dtype=torch.double),
                ]
            )
            # nu_t sums over the last m queries x_{t-m}, ..., x_{t-1} (all if no window)
            issued = [q.x for q in qs] + extra
            last = (
                issued if self.window is None else issued[len(issued) - self.window :]
            )
            recent = torch.tensor(last, dtype=torch.double).reshape(-1, d)
            meta["censored"] = int(len(qs) - len(ledger.completed(now)))
        else:
            X0 = torch.tensor([q.x for q in done], dtype=torch.double).reshape(-1, d)
            Y0 = torch.tensor([q.y for q in done], dtype=torch.double)
            X, Y = X0, Y0
            if self.pending == "hallucinate":
                waiting = [q.x for q in ledger.pending(now)] + extra
                if waiting:
                    Xw = torch.tensor(waiting, dtype=torch.double)
                    with torch.no_grad():
                        mu = (
                            self._model(X0, Y0)
                            .posterior(Xw.unsqueeze(-2))
                            .mean.reshape(-1)
                        )
                    X, Y = torch.cat([X0, Xw]), torch.cat([Y0, mu])
            meta["pending"] = len(ledger.pending(now)) + len(extra)
        model = self._model(X, Y)
        t = X.shape[0] + 1
        acqf = self._acquisition(
            model, unit, recent if self.pending == "censor" else None, t
        )
        with torch.no_grad():
            scores = acqf(unit.unsqueeze(-2))
        best = int(scores.argmax())
        mult = getattr(acqf, "sigma_multiplier", self.beta)
        meta["sigma_multiplier"] = float(torch.as_tensor(mult).reshape(-1)[0])
        self._last_meta = meta
        st["proposed"].append(unit[best].tolist())
        return dict(st["cands"][best])

    def _acquisition(
        self, model: Any, unit: Tensor, recent: Tensor | None, t: int
    ) -> Any:
        seed = self.seed * 1_000_003 + t
        if self.pending == "censor":
            sched = (
                dict(beta=float(self.beta))
                if self.beta is not None
                else dict(B_f=self.B, R=self.R, gamma="observed")
            )
            if self.algorithm == "GP-TS":
                return GPThompsonSamplingSDF(
                    model,
                    recent,
                    B_y=self.B_y,
                    delta=self.delta,
                    candidates=unit,
                    seed=seed,
                    t=t,
                    **sched,
                )
            return GPUCBSDF(model, recent, B_y=self.B_y, delta=self.delta, t=t, **sched)
        if self.algorithm == "GP-TS":
            sched = (
                dict(v=float(self.beta))
                if self.beta is not None
                else dict(B=self.B, R=self.R)
            )
            return GPThompsonSampling(
                model, delta=self.delta, candidates=unit, seed=seed, t=t, **sched
            )
        if self.algorithm == "GP-UCB":
            return GPUCB(
                model, schedule="finite", num_arms=unit.shape[0], delta=self.delta, t=t
            )
        if self.beta is not None:
            from botorch.acquisition.analytic import UpperConfidenceBound

            return UpperConfidenceBound(model, beta=float(self.beta) ** 2)
        return IGPUCB(model, B=self.B, R=self.R, delta=self.delta, t=t)

    def _gen(self, experiment, data=None, n=None, pending_observations=None, **kwargs):
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


def bandit_generation_strategy(
    algorithm: str = "IGP-UCB",
    num_init: int = 3,
    seed: int = 0,
    **node_kwargs: Any,
) -> GenerationStrategy:
    """A ``GenerationStrategy``: ``num_init`` Sobol trials, then :class:`BanditNode`
    (``node_kwargs``: its options) for every later trial. The Sobol node pauses
    while its trials await data, so it never makes more than ``num_init``; the
    bandit node has no transition and never loops."""
    if isinstance(num_init, bool) or not isinstance(num_init, int) or num_init < 1:
        raise ValueError(f"`num_init` must be an integer >= 1, got {num_init!r}.")
    sobol = GenerationNode(
        name="Sobol",
        generator_specs=[
            GeneratorSpec(
                generator_enum=Generators.SOBOL, generator_kwargs={"seed": seed}
            )
        ],
        transition_criteria=[MinTrials(threshold=num_init, transition_to="bandit")],
        pausing_criteria=[MaxTrialsAwaitingData(threshold=num_init)],
    )
    node = BanditNode(name="bandit", algorithm=algorithm, seed=seed, **node_kwargs)
    return GenerationStrategy(name=f"Sobol+{algorithm}", nodes=[sobol, node])
