"""The options of a bandit decision: :class:`DecisionOptions`, a frozen dataclass
checked at construction that composes the extensions' options (one module each in
:mod:`~botorch_bandits.core.features`), the flat keyword arguments of the Ax strategy
derived from their fields (:data:`FLAT_FIELDS`, :data:`FLAT_DEFAULTS`), and
:func:`resolve_kwargs`, which checks those and fills in each mode's defaults."""

from __future__ import annotations

import warnings
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Literal

from botorch_bandits.acquisition.practical import PRACTICAL_B
from botorch_bandits.core.features import flat, flat_name
from botorch_bandits.core.features.censoring import Censoring, check_censoring
from botorch_bandits.core.features.constraints import (
    LongTermConstraints,
    resolve_long_term,
)
from botorch_bandits.core.features.model import (
    FIT_STARTS,
    SPARSE_SIZE,
    Refit,
    check_forgetting,
    resolve_refit,
    resolve_search,
    resolve_sparse,
)
from botorch_bandits.core.features.restarts import (
    Restarts,
    refuse_detector_without_restarts,
    resolve_restarts,
)
from botorch_bandits.core.features.theory import (
    HYPERPARAMETERS,
    KERNELS,
    TheoryModel,
)
from botorch_bandits.core.refusals import refuse_combinations
from botorch_bandits.validation import (
    check_choice,
    check_count,
    check_magnitude,
    check_nonnegative,
    check_open_unit,
    check_positive,
    check_seed,
    did_you_mean,
)

__all__ = [
    "ALGORITHMS",
    "FLAT_DEFAULTS",
    "FLAT_FIELDS",
    "Censoring",
    "DecisionOptions",
    "LongTermConstraints",
    "Refit",
    "Restarts",
    "TheoryModel",
    "resolve_kwargs",
]

Algorithm = Literal["IGP-UCB", "GP-UCB", "GP-TS", "qLogNEI"]
Mode = Literal["practical", "theory"]
Pending = Literal[
    "ignore", "hallucinate", "censor", "randomized-believer", "pessimistic"
]
Optimizer = Literal["gradient", "finite"]
Repeats = Literal["allow", "avoid"]

#: the rules: the papers' bandits, and BoTorch's qLogNoisyExpectedImprovement (Ax's
#: default acquisition) under the same steps
ALGORITHMS: tuple[str, ...] = ("IGP-UCB", "GP-UCB", "GP-TS", "qLogNEI")
MODES: tuple[str, ...] = ("practical", "theory")
OPTIMIZERS: tuple[str, ...] = ("gradient", "finite")
#: what stands in for the running trials (the pipeline's pending view of each)
PENDING: tuple[str, ...] = (
    "ignore",
    "hallucinate",
    "censor",
    "randomized-believer",
    "pessimistic",
)
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


def _group(
    cls: type, toggle: str | None = None, optional: bool = True
) -> dict[str, Any]:
    """A group field's metadata: the extension's options class, the flat
    ``True``/``False`` keyword that switches it on (``None``: none), and whether
    it may be ``None`` (off, or not of this mode)."""
    return {"group": cls, "toggle": toggle, "optional": optional}


@dataclass(frozen=True)
class DecisionOptions:
    """Everything that shapes a decision besides the data, checked at construction
    (an invalid value or combination raises a ``ValueError`` naming the option).
    The defaults are the practical mode's, those of :meth:`from_kwargs` with no
    arguments (``DecisionOptions() == DecisionOptions.from_kwargs()``); the theory
    mode's come with ``from_kwargs(mode="theory")``. Each field's flat keyword in
    the Ax strategy is in :data:`FLAT_FIELDS`.

    Args:
        algorithm: The rule (:data:`ALGORITHMS`): ``"IGP-UCB"``, ``"GP-UCB"``,
            ``"GP-TS"`` or ``"qLogNEI"``.
        mode: ``"practical"`` (BoTorch's fitted GP on standardized outcomes) or
            ``"theory"`` (the papers' settings; needs ``theory``).
        pending: What stands in for running trials (:data:`PENDING`).
        optimizer: ``"gradient"`` (multi-start L-BFGS-B) or ``"finite"`` (the best
            of ``num_candidates`` Sobol points).
        beta: A constant confidence width β (> 0; ``None``: the rule's schedule).
        B: The RKHS-norm bound of the confidence width (>= 0).
        R: The noise's sub-Gaussian constant (>= 0; ``None``: from the fitted
            noise).
        delta: The confidence level in (0, 1).
        num_candidates: The decision set's size (an integer >= 1).
        seed: The seed of the decision set and the rule's draws (integer >= 0).
        theory: The theory mode's GP (:class:`TheoryModel`); ``None`` in the
            practical mode.
        censoring: GP-UCB-SDF's censoring (:class:`Censoring`), read under
            ``pending="censor"``.
        constraints: Long-term constraints (:class:`LongTermConstraints`;
            ``None``: off).
        restarts: GP-UCB-CPD's restarts (:class:`Restarts`; ``None``: off).
        repeats: ``"avoid"``: while the model says the objective is (near)
            noise-free (:data:`NOISE_FREE`), no point evaluated since the last
            restart or in flight is proposed again; ``"allow"``: a bandit's re-pull.
        model_window: The practical GP sees only the most recent trials (an
            integer >= 1; ``None``: all).
        forgetting: The practical GP has the trial's time as one more input, with
            its own fitted lengthscale, and decides at the next trial's time.
        refit: The practical GP's refit schedule (:class:`Refit`); ``None`` in the
            theory mode.
        sparse_after: Past that many observations in the model the GP is the
            sparse :class:`~botorch_bandits.models.sparse.NystromGP` (``None``:
            always exact).
        sparse_size: The sparse model's dictionary's expected size at most (read
            with ``sparse_after`` only).
        sems: How reported standard errors enter the model (:data:`SEMS`).
        fit_out_of_design: Use the trials whose point lies outside the search
            space (Ax's option of the same name; by default they are left out and
            counted in the metadata).
        trust_region: Keep the practical rule to L-inf balls around the model's
            points that widen with their number
            (:mod:`~botorch_bandits.acquisition.trust_region`). The flat default is
            on for the rules of
            :data:`~botorch_bandits.core.features.model.TRUST_REGION_RULES`.
        fit_start: Where the practical GP's fit starts (:data:`FIT_STARTS`).

    Example:
        >>> opts = DecisionOptions(pending="censor", censoring=Censoring(y_min=0.0))
        >>> opts == DecisionOptions.from_kwargs(pending="censor", y_min=0.0)
        True
    """

    algorithm: Algorithm = field(default="IGP-UCB", metadata=flat("algorithm"))
    mode: Mode = field(default="practical", metadata=flat("mode"))
    pending: Pending = field(default="hallucinate", metadata=flat("pending", True))
    optimizer: Optimizer = field(default="gradient", metadata=flat("optimizer", True))
    beta: float | None = field(default=None, metadata=flat("beta"))
    B: float = field(default=PRACTICAL_B, metadata=flat("B", True))
    R: float | None = field(default=None, metadata=flat("R", True))
    delta: float = field(default=0.1, metadata=flat("delta"))
    num_candidates: int = field(default=512, metadata=flat("num_candidates"))
    seed: int = field(default=0, metadata=flat("seed"))
    theory: TheoryModel | None = field(default=None, metadata=_group(TheoryModel))
    censoring: Censoring = field(
        default_factory=Censoring, metadata=_group(Censoring, optional=False)
    )
    constraints: LongTermConstraints | None = field(
        default=None, metadata=_group(LongTermConstraints, "long_term_constraints")
    )
    restarts: Restarts | None = field(
        default=None, metadata=_group(Restarts, "restarts")
    )
    repeats: Repeats = field(default="avoid", metadata=flat("repeats", True))
    model_window: int | None = field(default=None, metadata=flat("model_window"))
    forgetting: bool = field(default=False, metadata=flat("forgetting"))
    refit: Refit | None = field(default_factory=Refit, metadata=_group(Refit))
    sparse_after: int | None = field(default=1000, metadata=flat("sparse_after", True))
    sparse_size: int | None = field(
        default=SPARSE_SIZE, metadata=flat("sparse_size", True)
    )
    sems: str = field(default="auto", metadata=flat("sems"))
    fit_out_of_design: bool = field(default=False, metadata=flat("fit_out_of_design"))
    trust_region: bool = field(default=True, metadata=flat("trust_region", True))
    fit_start: str = field(default="warm", metadata=flat("fit_start", True))

    def __post_init__(self) -> None:
        _check_fields(self)
        refuse_combinations(self)

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> DecisionOptions:
        """The options from the flat keyword arguments of
        :func:`~botorch_bandits.ax.bandit_generation_strategy` (see
        :func:`resolve_kwargs`), with each mode's defaults.

        Args:
            **kwargs: Flat options (:data:`FLAT_DEFAULTS`); ``restarts`` and
                ``long_term_constraints`` may also be a :class:`Restarts` or
                :class:`LongTermConstraints`.

        Returns:
            The checked options.
        """
        return cls.from_resolved(resolve_kwargs(**kwargs))

    @classmethod
    def from_resolved(cls, k: dict[str, Any]) -> DecisionOptions:
        """The options from a dict that :func:`resolve_kwargs` returned: each
        field from its flat keyword (:data:`FLAT_FIELDS`), a group where it is on.
        Where not given, ``y_min`` is 0 and the theory mode's ``B_y`` 1 (Verma et
        al.'s shifted targets); ``sparse_after="never"`` is ``None``.

        Args:
            k: Every flat option, resolved (not changed: a copy is read).

        Returns:
            The checked options.
        """
        k = dict(k)
        theory = k["mode"] == "theory"
        # where not given: the theory mode's (and a stored strategy's) y_min = 0
        # and B_y = 1 (Verma et al.'s shifted targets); the practical B_y stays None
        if k["y_min"] is None:
            k["y_min"] = 0.0
        if k["B_y"] is None and theory:
            k["B_y"] = 1.0
        if k["sparse_after"] == "never":
            k["sparse_after"] = None
        k["trust_region"] = bool(k["trust_region"])
        k["fit_start"] = k["fit_start"] or "warm"
        on = {"theory": theory, "censoring": True, "refit": not theory}
        values: dict[str, Any] = {}
        for f in fields(cls):
            group, toggle = f.metadata.get("group"), f.metadata.get("toggle")
            if group is None:
                values[f.name] = k[flat_name(f)]
            elif on.get(f.name, False) or (toggle is not None and k[toggle]):
                values[f.name] = group(
                    **{g.name: k[flat_name(g)] for g in fields(group)}
                )
            else:
                values[f.name] = None
        return cls(**values)


def _check_fields(o: DecisionOptions) -> None:
    """Each field of ``o`` on its own (the groups check themselves)."""
    check_choice("algorithm", o.algorithm, ALGORITHMS)
    check_choice("mode", o.mode, MODES)
    check_choice("pending", o.pending, PENDING)
    check_choice("optimizer", o.optimizer, OPTIMIZERS)
    check_choice("repeats", o.repeats, REPEATS)
    check_choice("sems", o.sems, SEMS)
    check_choice("fit_start", o.fit_start, FIT_STARTS)
    check_positive("beta", o.beta, allow_none=True)
    check_nonnegative("B", o.B)
    if o.R is not None:
        check_nonnegative("R", o.R)
    check_open_unit("delta", o.delta)
    check_count("num_candidates", o.num_candidates, 1)
    check_count("seed", o.seed, 0)
    check_count("model_window", o.model_window, 1, allow_none=True)
    check_count("sparse_after", o.sparse_after, 1, allow_none=True)
    check_count("sparse_size", o.sparse_size, 1, allow_none=True)
    for name in ("forgetting", "fit_out_of_design", "trust_region"):
        if not isinstance(getattr(o, name), bool):
            raise ValueError(
                f"`{name}` must be True or False, got {name}={getattr(o, name)!r}."
            )
    for f in fields(o):
        group = f.metadata.get("group")
        value = getattr(o, f.name)
        optional = f.metadata.get("optional", False)
        if group is not None and not (
            isinstance(value, group) or (optional and value is None)
        ):
            allowed = f"a {group.__name__}" + (" or None" if optional else "")
            raise ValueError(f"`{f.name}` must be {allowed}, got {f.name}={value!r}.")


def _vocabulary() -> tuple[dict[str, tuple[str | None, str | None]], dict[str, Any]]:
    """The flat keywords read off :class:`DecisionOptions`' fields: each one's
    (group field, field) and flat default (``None`` where it depends on the mode)."""
    where: dict[str, tuple[str | None, str | None]] = {}
    defaults: dict[str, Any] = {}
    for f in fields(DecisionOptions):
        group, toggle = f.metadata.get("group"), f.metadata.get("toggle")
        if group is None:
            where[flat_name(f)] = (None, f.name)
            defaults[flat_name(f)] = None if f.metadata["modal"] else f.default
            continue
        if toggle is not None:
            where[toggle], defaults[toggle] = (f.name, None), False
        for g in fields(group):
            modal = g.metadata["modal"] or g.default is MISSING
            where[flat_name(g)] = (f.name, g.name)
            defaults[flat_name(g)] = None if modal else g.default
    return where, defaults


#: generated from the fields of :class:`DecisionOptions` and its groups:
#: ``FLAT_FIELDS``, flat keyword -> (the group field, or ``None`` at the top; the
#: field in it, or ``None`` for a group's on/off switch); ``FLAT_DEFAULTS``, the
#: flat options in their persisted order with their defaults (``None`` for the
#: mode-dependent ones, resolved by :func:`resolve_kwargs`)
FLAT_FIELDS, FLAT_DEFAULTS = _vocabulary()


def _expand_features(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``restarts=Restarts(...)`` and ``long_term_constraints=LongTermConstraints(...)``
    as their flat options (``True`` and each field that differs from its mode's
    default); the same option given both ways is an error."""
    out = dict(kwargs)
    mode = kwargs.get("mode", "practical")
    for toggle, cls in (
        ("restarts", Restarts),
        ("long_term_constraints", LongTermConstraints),
    ):
        obj = out.get(toggle)
        if not isinstance(obj, cls):
            continue
        if cls is Restarts:
            base = Restarts.for_mode(mode, detector=obj.detector)
        else:
            base = LongTermConstraints.for_mode(
                mode, kwargs.get("algorithm", "IGP-UCB")
            )
        out[toggle] = True
        for g in fields(cls):
            name, value = flat_name(g), getattr(obj, g.name)
            if value == getattr(base, g.name) and name != "cpd_detector":
                continue
            if name in kwargs:
                raise ValueError(
                    f"Give `{name}` in {toggle}={obj!r} or as its own option, not both "
                    f"(got {name}={kwargs[name]!r})."
                )
            out[name] = value
    return out


def renamed(kwargs: dict[str, Any], warn: bool = True) -> dict[str, Any]:
    """``kwargs`` with the old spellings of :data:`RENAMED` under their new names (a
    ``DeprecationWarning`` for each when ``warn``; both spellings: an error).

    Args:
        kwargs: The flat options as given (not changed: a copy is returned).
        warn: Warn for each old spelling (default ``True``).

    Returns:
        The options under their current names.

    Raises:
        ValueError: An option given under both spellings.

    Example:
        >>> renamed({"cpd_c": 10.0}, warn=False)
        {'cpd_regularization': 10.0}
    """
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


def resolve_kwargs(*, stored: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Every flat option, checked (the argument named as the caller wrote it) and
    with the mode's defaults filled in; the practical mode refuses the theory's
    kernel settings (they would be ignored). Unknown names raise a ``TypeError``.

    Args:
        stored: The options a stored strategy holds (already migrated, see
            :mod:`~botorch_bandits.ax.storage`): the refusals that apply to new
            strategies only (options left unused, degenerate sizes and magnitudes,
            added in issue 31) are skipped, so that an experiment stored before
            them loads and replays.
        **kwargs: The flat options (:data:`FLAT_DEFAULTS`); ``restarts`` and
            ``long_term_constraints`` may be a :class:`Restarts` or a
            :class:`LongTermConstraints`.

    Returns:
        Every flat option, resolved.
    """
    # the steps run in this order: a bad combination raises the first step's error
    said = {RENAMED[o]: o for o in RENAMED if o in kwargs}  # named as written
    strict = not stored  # a stored strategy loads with what it holds
    kwargs = _expand_features(kwargs)
    k = _with_defaults(renamed(kwargs))
    _fill_mode_defaults(k)
    _check_choices(k)
    check_censoring(k)
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


#: the largest decision set and epoch (past them a decision does not return in
#: minutes, the constraints never act)
MAX_CANDIDATES = 10**6


def _refuse_unused(k: dict[str, Any], given: set[str] | None = None) -> None:
    """Options that the other options would leave unused (or that make their
    algorithm do nothing) are refused, never ignored: a value other than its default,
    and for the confidence bound's ``beta`` and ``delta`` any value ``given`` (the
    names passed). A stored strategy holds every option and loads without these
    refusals (``resolve_kwargs(stored=True)``)."""
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
