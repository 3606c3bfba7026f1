"""The options of a bandit decision: typed, frozen dataclasses with ``Literal``
choices, grouped (the theory mode's model, censoring, long-term constraints,
restarts), built and checked from the flat keyword arguments of the Ax strategy by
:meth:`DecisionOptions.from_kwargs`, with each mode's defaults."""

from __future__ import annotations

import contextvars
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from botorch_bandits.acquisition.practical import PRACTICAL_B
from botorch_bandits.core.constraint_options import resolve_long_term
from botorch_bandits.core.detector_options import (
    ALPHA_DEFAULT,
    XI_DEFAULT,
    check_forgetting,
    refuse_detector_without_restarts,
    resolve_restarts,
)
from botorch_bandits.core.model_options import (
    check_growth,
    resolve_refit,
    resolve_search,
    resolve_sparse,
)
from botorch_bandits.validation import (
    check_choice,
    check_count,
    check_finite,
    check_magnitude,
    check_nonnegative,
    check_open_unit,
    check_positive,
    check_seed,
    did_you_mean,
)

Algorithm = Literal["IGP-UCB", "GP-UCB", "GP-TS", "qLogNEI"]
Mode = Literal["practical", "theory"]
Pending = Literal["ignore", "hallucinate", "censor"]
Optimizer = Literal["gradient", "finite"]
Hyper = Literal["fixed", "fitted"]
MultiplierUpdate = Literal["multiplicative", "additive"]
ConstraintModel = Literal["composite", "separate"]
Kernel = Literal["matern52", "rbf"]
Repeats = Literal["allow", "avoid"]
Detector = Literal["paper", "scale-free", "residual"]

#: the rules: the papers' bandits, and BoTorch's qLogNoisyExpectedImprovement (Ax's
#: default acquisition) under the same steps
ALGORITHMS: tuple[str, ...] = ("IGP-UCB", "GP-UCB", "GP-TS", "qLogNEI")
MODES: tuple[str, ...] = ("practical", "theory")
OPTIMIZERS: tuple[str, ...] = ("gradient", "finite")
PENDING: tuple[str, ...] = ("ignore", "hallucinate", "censor")
HYPERPARAMETERS: tuple[str, ...] = ("fixed", "fitted")
KERNELS: tuple[str, ...] = ("matern52", "rbf")
REPEATS: tuple[str, ...] = ("allow", "avoid")
#: how reported standard errors (Ax's SEMs) enter the model: "fixed" (SEM² is the
#: noise), "add" (the model's noise plus SEM²), "auto" (fixed if every observation
#: has one, add if some do), "ignore"
SEMS: tuple[str, ...] = ("auto", "fixed", "add", "ignore")
#: ``repeats="avoid"`` applies while the model's noise variance is at most this
#: share of its prior variance (a noise sd of at most 10 % of the signal's): (near)
#: noise-free. BoTorch's noise prior (log-normal, loc -4, scale 1) has its mode at
#: e^-5 = 6.7e-3, where a fit to noise-free data sits until many points pin it lower
NOISE_FREE = 1e-2

#: the theory mode's defaults (its settings before the practical mode existed)
THEORY_DEFAULTS: dict[str, Any] = {
    "pending": "ignore",
    "kernel": "matern52",
    "lengthscale": 0.2,
    "noise": 1e-2,
    "hyperparameters": "fixed",
    "R": 0.1,
    "B": 1.0,
    "optimizer": "finite",
    "repeats": "allow",
}
#: the practical mode's defaults (``R=None``: estimated from the fitted noise; B chosen on
#: the Ax benchmark's development half, :data:`PRACTICAL_B`)
PRACTICAL_DEFAULTS: dict[str, Any] = {
    "pending": "hallucinate",
    "hyperparameters": "fitted",
    "optimizer": "gradient",
    "repeats": "avoid",
    "B": PRACTICAL_B,
    "refit_after": 100,
    "refit_growth": 1.2,
    "sparse_after": 1000,
    "fit_start": "warm",
}
#: old spellings of options, kept as deprecated aliases: old -> new
RENAMED: dict[str, str] = {
    "cpd_c": "cpd_regularization",
    "cpd_C": "cpd_threshold_scale",
}


@dataclass(frozen=True)
class TheoryModel:
    """The theory mode's GP: a fixed kernel on the unit cube (or, with
    ``hyperparameters="fitted"``, its marginal-likelihood fit at every call)."""

    kernel: Kernel = "matern52"
    lengthscale: float = 0.2
    noise: float = 1e-2
    hyperparameters: Hyper = "fixed"


@dataclass(frozen=True)
class Censoring:
    """GP-UCB-SDF / GP-TS-SDF (``pending="censor"``): the window in trials or in
    seconds (at most one; neither: no window), the censored target ``y_min`` (the
    metric's worst value, in its units and direction) and the bound ``B_y`` on
    :math:`|y - y_{min}|` in the metric's units (Verma et al. 2022; ``None``: the
    practical mode's default, no inflation of :math:`\\nu_t`)."""

    window: int | None = None
    window_seconds: float | None = None
    y_min: float = 0.0
    B_y: float | None = 1.0


@dataclass(frozen=True)
class LongTermConstraints:
    """Shi & Eryilmaz 2022: epochs of ``epoch_length`` trials, the multiplier update
    (Algorithm 2 with :math:`\\psi(x) = e^{cx}` or Algorithm 3 with step
    :math:`\\mu`), and :math:`L` (``None``: the epochs begun so far); the practical
    reading's choices: the additive update's ``slack`` and :math:`\\kappa^1`
    (``initial``; ``None``: the paper's), and ``model`` (``"composite"``: the
    paper's GP on the composite target; ``"separate"``: a GP per constraint, read
    at its upper bound in the penalty)."""

    epoch_length: int = 20
    multiplier_update: MultiplierUpdate = "multiplicative"
    penalty_c: float = 1.0
    step: float = 0.5
    num_epochs: int | None = None
    slack: float = 0.0
    initial: float | None = None
    model: ConstraintModel = "composite"


@dataclass(frozen=True)
class Restarts:
    """GP-UCB-CPD (Avanesov): :math:`\\xi` of the uniform-exploration rule, the
    detector's regularization constant :math:`c`, its threshold scale (the paper's :math:`C`, or the
    scale-free detector's multiplier of its threshold), the smoothness
    :math:`\\alpha` in their exponents, which detector (``"paper"``: Algorithm 1 with
    a fixed kernel on the objective's values; ``"scale-free"``: on the standardized
    values, :class:`~botorch_bandits.changepoint.ScaleFreeDetector`;
    ``"residual"``: the GP's one-step-ahead residuals,
    :func:`~botorch_bandits.residuals.residual_change`, no uniform step), its
    false-alarm level per scan (per decision for ``"residual"``), and the cap on the
    share of uniform steps (1: none). The residual detector reads only
    ``false_alarm`` (the others are ``None``)."""

    xi: float = XI_DEFAULT
    regularization: float | None = 20.0
    threshold_scale: float | None = 2.6
    alpha: float = ALPHA_DEFAULT
    detector: Detector = "paper"
    false_alarm: float | None = 0.01
    max_uniform_share: float | None = 1.0

    @property
    def uniform(self) -> bool:
        """Whether the detector explores uniformly (Avanesov's Algorithm 2)."""
        return self.detector != "residual"


@dataclass(frozen=True)
class Refit:
    """When the practical GP's hyperparameters are fitted again by marginal
    likelihood: at every decision while the model has at most ``after``
    observations; past that when the trials completed since the last fit number at
    least ``(growth - 1)`` times the observations that fit used (fits at
    geometrically growing sizes; under a model window of W trials, every
    ``(growth - 1) W`` completions; ``growth=1``: at every decision), and after a
    failed fit, a restart or, with long-term constraints, a new epoch. In between,
    the last recorded fit is reused (``fit.status="reused"``)."""

    after: int = 100
    growth: float = 1.2

    def __post_init__(self) -> None:
        check_count("refit_after", self.after, 0)
        check_growth(self.growth)


@dataclass(frozen=True)
class DecisionOptions:
    """Everything that shapes a decision besides the data. ``theory`` is set in the
    theory mode only; ``constraints`` and ``restarts`` are ``None`` when off;
    ``censoring`` is read under ``pending="censor"``. ``repeats="avoid"``: while the
    model says the objective is (near) noise-free (:data:`NOISE_FREE`), no point
    evaluated since the last restart or in flight is proposed again (the practical
    default; a bandit's re-pull of an arm is the theory mode's). ``model_window``:
    the practical GP sees only the most recent trials (a sliding window).
    ``forgetting``: the practical GP has the trial's time (its position, in units
    of :data:`~botorch_bandits.models.forgetting.TIME_UNIT` trials) as one more
    input, with a lengthscale of its own fitted by marginal likelihood, and decides
    at the next trial's time: older trials count less, at the fitted rate.
    ``sparse_after``: past that many observations in the model (completed and
    hallucinated) the GP is the sparse
    :class:`~botorch_bandits.models.sparse.NystromGP` (``None``: always exact), its
    dictionary's expected size at most ``sparse_size``. ``sems``: how reported
    standard errors enter the model (:data:`SEMS`). ``fit_out_of_design``: the
    trials whose point lies outside the search space are used (Ax's option of the
    same name; by default they are left out, as Ax's models leave them out, and
    counted in the metadata). ``trust_region``: the practical rule kept to L-inf
    balls around the model's points that widen with their number
    (:mod:`~botorch_bandits.acquisition.trust_region`). ``fit_start``: where the
    practical GP's fit starts (:data:`~botorch_bandits.core.model_options.FIT_STARTS`)."""

    algorithm: Algorithm = "IGP-UCB"
    mode: Mode = "practical"
    pending: Pending = "hallucinate"
    optimizer: Optimizer = "gradient"
    beta: float | None = None
    B: float = PRACTICAL_B
    R: float | None = None
    delta: float = 0.1
    num_candidates: int = 512
    seed: int = 0
    theory: TheoryModel | None = None
    censoring: Censoring = field(default_factory=Censoring)
    constraints: LongTermConstraints | None = None
    restarts: Restarts | None = None
    repeats: Repeats = "allow"
    model_window: int | None = None
    forgetting: bool = False
    refit: Refit | None = None
    sparse_after: int | None = None
    sparse_size: int | None = None
    sems: str = "auto"
    fit_out_of_design: bool = False
    trust_region: bool = False
    fit_start: str = "warm"

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> DecisionOptions:
        """The options from the flat keyword arguments of
        :func:`~botorch_bandits.ax.bandit_generation_strategy` (see
        :func:`resolve_kwargs`)."""
        return cls.from_resolved(resolve_kwargs(**kwargs))

    @classmethod
    def from_resolved(cls, k: dict[str, Any]) -> DecisionOptions:
        """The options from a dict that :func:`resolve_kwargs` returned."""
        theory = None
        if k["mode"] == "theory":
            theory = TheoryModel(
                k["kernel"], k["lengthscale"], k["noise"], k["hyperparameters"]
            )
        return cls(
            algorithm=k["algorithm"],
            mode=k["mode"],
            pending=k["pending"],
            optimizer=k["optimizer"],
            beta=k["beta"],
            B=k["B"],
            R=k["R"],
            delta=k["delta"],
            num_candidates=k["num_candidates"],
            seed=k["seed"],
            theory=theory,
            censoring=_censoring(k),
            constraints=LongTermConstraints(
                k["epoch_length"],
                k["multiplier_update"],
                k["penalty_c"],
                k["step"],
                k["num_epochs"],
                k["slack"],
                k["initial_multiplier"],
                k["constraint_model"],
            )
            if k["long_term_constraints"]
            else None,
            restarts=Restarts(
                k["xi"],
                k["cpd_regularization"],
                k["cpd_threshold_scale"],
                k["cpd_alpha"],
                k["cpd_detector"],
                k["cpd_false_alarm"],
                k["cpd_max_uniform_share"],
            )
            if k["restarts"]
            else None,
            repeats=k["repeats"],
            model_window=k["model_window"],
            forgetting=k["forgetting"],
            refit=Refit(k["refit_after"], k["refit_growth"])
            if k["mode"] == "practical"
            else None,
            sparse_after=None if k["sparse_after"] == "never" else k["sparse_after"],
            sparse_size=k["sparse_size"],
            sems=k["sems"],
            fit_out_of_design=k["fit_out_of_design"],
            trust_region=bool(k["trust_region"]),
            fit_start=k["fit_start"] or "warm",
        )


def _censoring(k: dict[str, Any]) -> Censoring:
    """The censoring of resolved options: where not given, the theory mode's (and a
    stored strategy's) ``y_min = 0`` and ``B_y = 1`` (Verma et al.'s shifted
    targets); the practical mode's ``B_y`` stays ``None`` (its default)."""
    y_min = 0.0 if k["y_min"] is None else k["y_min"]
    B_y = k["B_y"]
    if B_y is None and k["mode"] == "theory":
        B_y = 1.0
    return Censoring(k["window"], k["window_seconds"], y_min, B_y)


#: the flat options in their persisted order, with their defaults (``None`` for the
#: mode-dependent ones, resolved by :func:`resolve_kwargs`)
FLAT_DEFAULTS: dict[str, Any] = {
    "algorithm": "IGP-UCB",
    "mode": "practical",
    "pending": None,
    "window": None,
    "window_seconds": None,
    "y_min": None,
    "B_y": None,
    "beta": None,
    "kernel": None,
    "lengthscale": None,
    "noise": None,
    "hyperparameters": None,
    "B": None,
    "R": None,
    "delta": 0.1,
    "num_candidates": 512,
    "optimizer": None,
    "seed": 0,
    "long_term_constraints": False,
    "epoch_length": None,
    "multiplier_update": None,
    "penalty_c": 1.0,
    "step": None,
    "num_epochs": None,
    "restarts": False,
    "xi": XI_DEFAULT,
    "cpd_regularization": None,
    "cpd_threshold_scale": None,
    "cpd_alpha": ALPHA_DEFAULT,
    "repeats": None,
    "cpd_detector": None,
    "cpd_false_alarm": None,
    "cpd_max_uniform_share": None,
    "model_window": None,
    "refit_after": None,
    "refit_growth": None,
    "sparse_after": None,
    "sparse_size": None,
    "sems": "auto",
    "fit_out_of_design": False,
    "forgetting": False,
    "constraint_model": None,
    "slack": None,
    "initial_multiplier": None,
    "trust_region": None,
    "fit_start": None,
}


def renamed(kwargs: dict[str, Any], warn: bool = True) -> dict[str, Any]:
    """``kwargs`` with the old spellings of :data:`RENAMED` under their new names (a
    ``DeprecationWarning`` for each when ``warn``; both spellings: an error)."""
    out = dict(kwargs)
    for old, new in RENAMED.items():
        if old not in out:
            continue
        if new in out:
            raise ValueError(
                f"Give `{new}` or its deprecated spelling `{old}`, not both "
                f"(got {old}={out[old]!r} and {new}={out[new]!r})."
            )
        if warn:
            warnings.warn(
                f"`{old}` is deprecated: use `{new}` (same meaning).",
                DeprecationWarning,
                stacklevel=4,
            )
        out[new] = out.pop(old)
    return out


def resolve_kwargs(**kwargs: Any) -> dict[str, Any]:
    """Every flat option, checked (the argument named as the caller wrote it) and
    with the mode's defaults filled in; the practical mode refuses the theory's
    kernel settings (they would be ignored). Unknown names raise a ``TypeError``."""
    # the steps run in this order: a bad combination raises the first step's error
    said = {RENAMED[o]: o for o in RENAMED if o in kwargs}  # named as written
    strict = not LOADING.get()  # a stored strategy loads with what it holds
    k = _with_defaults(renamed(kwargs))
    _fill_mode_defaults(k)
    _check_choices(k)
    _check_censoring(k)
    _check_scales(k, strict)
    _check_decision_set(k, strict)
    check_choice("sems", k["sems"], SEMS)
    _check_flags(k)
    resolve_long_term(k, strict)
    check_positive("xi", k["xi"], allow_zero=True)
    if strict:
        refuse_detector_without_restarts(k, said)
    resolve_restarts(k, said)
    if strict:
        _refuse_unused(k, set(renamed(kwargs, warn=False)))
    check_count("model_window", k["model_window"], 1, allow_none=True)
    _practical_only(
        k,
        "model_window",
        "(a GP on the most recent trials); the theory mode's algorithms use every "
        "trial.",
    )
    check_forgetting(k)
    resolve_refit(k, PRACTICAL_DEFAULTS)
    resolve_sparse(k, PRACTICAL_DEFAULTS)
    resolve_search(k, PRACTICAL_DEFAULTS)
    _as_floats(k)
    return k


def _with_defaults(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Every flat option: ``kwargs`` over :data:`FLAT_DEFAULTS` (an unknown name
    raises a ``TypeError``)."""
    unknown = sorted(set(kwargs) - set(FLAT_DEFAULTS))
    if unknown:
        hints = "".join(did_you_mean(u, FLAT_DEFAULTS) for u in unknown)
        raise TypeError(
            f"Unknown option(s) {unknown} of the bandit strategy.{hints} The options "
            f"are {list(FLAT_DEFAULTS)}."
        )
    return {**FLAT_DEFAULTS, **kwargs}


def _fill_mode_defaults(k: dict[str, Any]) -> None:
    """The algorithm and mode checked, and the mode's defaults filled in; the
    practical mode refuses the theory's kernel settings."""
    check_choice("algorithm", k["algorithm"], ALGORITHMS)
    check_choice("mode", k["mode"], MODES)
    if k["mode"] == "practical":
        # the practical mode fits BoTorch's standard GP: the theory's kernel
        # settings would be ignored, so they are refused, never mixed in
        given = {
            n: k[n] for n in ("kernel", "lengthscale", "noise") if k[n] is not None
        }
        if given or k["hyperparameters"] == "fixed":
            named = ", ".join(f"{n}={v!r}" for n, v in given.items()) or (
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
    for n in ("pending", "hyperparameters", "optimizer", "repeats", "B"):
        if k[n] is None:
            k[n] = defaults[n]
    if k["mode"] == "theory":
        for n in ("kernel", "lengthscale", "noise", "R"):
            if k[n] is None:
                k[n] = THEORY_DEFAULTS[n]


def _check_choices(k: dict[str, Any]) -> None:
    """The options with a fixed set of values (the kernel's in the theory mode)."""
    check_choice("pending", k["pending"], PENDING)
    check_choice("hyperparameters", k["hyperparameters"], HYPERPARAMETERS)
    check_choice("optimizer", k["optimizer"], OPTIMIZERS)
    check_choice("repeats", k["repeats"], REPEATS)
    if k["mode"] == "theory":
        check_choice("kernel", k["kernel"], KERNELS)


def _check_censoring(k: dict[str, Any]) -> None:
    """GP-UCB-SDF's window (at most one of trials and seconds), ``y_min``, ``B_y``."""
    check_count("window", k["window"], 0, allow_none=True)
    check_positive("window_seconds", k["window_seconds"], allow_none=True)
    if k["window"] is not None and k["window_seconds"] is not None:
        raise ValueError(
            f"Give at most one of `window` (trials) and `window_seconds`, got "
            f"window={k['window']!r} and window_seconds={k['window_seconds']!r}."
        )
    if k["y_min"] is not None:
        check_finite("y_min", k["y_min"])
    if k["B_y"] is not None:
        check_nonnegative("B_y", k["B_y"])
    practical = k["mode"] == "practical"
    if practical and k["pending"] == "censor" and k["y_min"] is None:
        raise ValueError(
            "pending='censor' needs y_min, the value a running trial is censored at: "
            "the metric's worst value in its own units (the floor of a maximized "
            "metric, e.g. y_min=0 for an accuracy or a conversion rate; the ceiling "
            "of a minimized one, e.g. y_min=1 for an error rate). Censoring suits a "
            "metric bounded on that side; for one that is not, use "
            "pending='hallucinate' (the default)."
        )


def _check_scales(k: dict[str, Any], strict: bool) -> None:
    """The confidence width's and the theory kernel's numbers (and, ``strict``: a
    new strategy, their magnitudes)."""
    check_positive("beta", k["beta"], allow_none=True)
    if k["mode"] == "theory":
        check_positive("lengthscale", k["lengthscale"])
        check_positive("noise", k["noise"])
    check_nonnegative("B", k["B"])
    if k["R"] is not None:
        check_nonnegative("R", k["R"])
    check_open_unit("delta", k["delta"])
    if strict:
        for n in ("y_min", "B_y", "beta", "B", "R"):
            check_magnitude(n, k[n])


def _check_decision_set(k: dict[str, Any], strict: bool) -> None:
    """``num_candidates`` (at most :data:`MAX_CANDIDATES` for a new strategy:
    ``strict``) and ``seed``."""
    check_count("num_candidates", k["num_candidates"], 1)
    if strict and k["num_candidates"] > MAX_CANDIDATES:
        raise ValueError(
            f"`num_candidates` (the decision set's size) must be at most "
            f"{MAX_CANDIDATES:,}, got num_candidates={k['num_candidates']!r}: every "
            "decision scores every candidate (in the audit of issue 31, 10**7 had not "
            "returned after 240 s)."
        )
    (check_seed if strict else check_count)("seed", k["seed"])


def _check_flags(k: dict[str, Any]) -> None:
    """The options that are ``True`` or ``False``."""
    for flag in (
        "long_term_constraints",
        "restarts",
        "fit_out_of_design",
        "forgetting",
    ):
        if not isinstance(k[flag], bool):
            raise ValueError(f"`{flag}` must be True or False, got {flag}={k[flag]!r}.")


def _as_floats(k: dict[str, Any]) -> None:
    """The numeric options as floats (those that may be ``None`` kept so)."""
    floats = ("B", "delta", "penalty_c", "xi", "cpd_alpha")
    for n in floats:
        k[n] = float(k[n])
    # the residual detector leaves the uniform detectors' options None
    maybe = ("lengthscale", "noise", "R", "cpd_regularization", "cpd_false_alarm")
    maybe += ("y_min", "B_y")
    maybe += ("step", "slack", "initial_multiplier")
    maybe += ("cpd_threshold_scale", "cpd_max_uniform_share")
    for n in maybe:
        k[n] = None if k[n] is None else float(k[n])


#: set while a stored strategy is loaded (:func:`loading_stored`): the refusals
#: added in issue 31 (options left unused, degenerate sizes and magnitudes) apply to
#: new strategies only, so that an experiment stored before them loads and replays
LOADING: contextvars.ContextVar[bool] = contextvars.ContextVar("LOADING", default=False)


@contextmanager
def loading_stored() -> Iterator[None]:
    """Resolve options as a stored strategy holds them (see :data:`LOADING`)."""
    token = LOADING.set(True)
    try:
        yield
    finally:
        LOADING.reset(token)


#: the largest decision set and epoch (past them a decision does not return in
#: minutes, the constraints never act)
MAX_CANDIDATES = 10**6


def _refuse_unused(k: dict[str, Any], given: set[str] | None = None) -> None:
    """Options that the other options would leave unused (or that make their
    algorithm do nothing) are refused, never ignored: a value other than its default,
    and for the confidence bound's ``beta`` and ``delta`` any value ``given`` (the
    names passed). A stored strategy holds every option and loads without these
    refusals (:data:`LOADING`)."""
    censor = k["pending"] == "censor"
    if censor and k["window"] == 0:
        raise ValueError(
            "window=0 with pending='censor' censors every observation (the model "
            "would only ever see y_min): give a window of at least 1 trial, "
            "window_seconds, or neither (no window)."
        )
    unused = []
    if not censor:
        unused += [
            f"{n}={k[n]!r}" for n in ("window", "window_seconds") if k[n] is not None
        ]
        unused += [f"{n}={k[n]!r}" for n in ("y_min", "B_y") if k[n] is not None]
    if unused:
        raise ValueError(
            f"{', '.join(unused)} set(s) GP-UCB-SDF's censoring, which runs only with "
            f"pending='censor' (got pending={k['pending']!r}): pass "
            "pending='censor' or leave them out."
        )
    # given (at any value, the default's too) or away from the default
    confidence = [
        f"{n}={k[n]!r}"
        for n in ("beta", "delta")
        if k[n] != FLAT_DEFAULTS[n] or (n in (given or ()) and k[n] is not None)
    ]
    if k["algorithm"] == "qLogNEI" and confidence:
        raise ValueError(
            f"{', '.join(confidence)} set(s) the bandits' confidence bound, which "
            "algorithm='qLogNEI' (an expected improvement) has none of: leave them "
            "out, or choose IGP-UCB, GP-UCB or GP-TS."
        )
    if not k["restarts"] and k["xi"] != FLAT_DEFAULTS["xi"]:
        raise ValueError(
            f"xi={k['xi']!r} sets GP-UCB-CPD's uniform steps, and restarts are off: "
            "pass restarts=True or leave it out."
        )
    if k["restarts"] and k["xi"] == 0:
        raise ValueError(
            "xi=0 with restarts=True makes no uniform step, so no change can ever "
            "be detected: give xi > 0 (default sqrt(3))."
        )


def _practical_only(k: dict[str, Any], name: str, why: str) -> None:
    """Refuse option ``name`` (given, not ``None``) in the theory mode, saying ``why``."""
    if k[name] is not None and k["mode"] == "theory":
        raise ValueError(
            f"{name}={k[name]!r} is an option of the practical mode {why} Pass "
            "mode='practical' or leave it out."
        )
