"""GP-UCB-CPD's restarts (Avanesov): :class:`Restarts`, the change-point detector's
options (the detectors, each one's defaults, checked at construction), their checks
and defaults in the Ax strategy's flat spelling (steps of
:func:`~botorch_bandits.core.options.resolve_kwargs`), and the migration of a stored
strategy's detector options."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from botorch_bandits.core.features import flat
from botorch_bandits.validation import check_choice, check_open_unit, check_positive

#: the flat defaults of ``xi`` and ``cpd_alpha`` (read by the uniform detectors)
XI_DEFAULT = math.sqrt(3.0)
ALPHA_DEFAULT = 2.5

Detector = Literal["paper", "scale-free", "residual"]
DETECTORS: tuple[str, ...] = ("paper", "scale-free", "residual")
#: the options the residual detector does not read (it makes no uniform step and
#: has no kernel statistic): refused with it
UNIFORM_ONLY: tuple[str, ...] = (
    "cpd_regularization",
    "cpd_threshold_scale",
    "cpd_max_uniform_share",
)
#: the restart options by detector, when not given: the paper's constants (c = 20,
#: C = 2.6 of its §4), or the scale-free detector's (the same c, now on the
#: standardized scale where the paper's draws have unit variance; its threshold from
#: reorderings; false alarms at 1 % per scan; at most 20 % uniform steps)
RESTART_DEFAULTS: dict[str, dict[str, Any]] = {
    "paper": {
        "cpd_regularization": 20.0,
        "cpd_threshold_scale": 2.6,
        "cpd_max_uniform_share": 1.0,
    },
    "scale-free": {
        "cpd_regularization": 20.0,
        "cpd_threshold_scale": 1.0,
        "cpd_false_alarm": 0.01,
        "cpd_max_uniform_share": 0.2,
    },
    # the practical mode's default: the GP's own one-step-ahead residuals
    # (residuals.residual_change); false alarms at most 1 in 1000 decisions
    # (nominal; measured by ax-online's calibration)
    "residual": {"cpd_false_alarm": 1e-3},
}


@dataclass(frozen=True)
class Restarts:
    """GP-UCB-CPD (Avanesov): the change-point detector and its options, checked at
    construction. The defaults are the practical mode's (the residual detector);
    :meth:`for_mode` gives each mode's (the theory mode: the paper's Algorithm 1
    with c = 20, C = 2.6 of its §4).

    Args:
        xi: :math:`\\xi` of the uniform-exploration rule (Algorithm 2), >= 0;
            read by the ``"paper"`` and ``"scale-free"`` detectors only (default
            :math:`\\sqrt 3`, :data:`XI_DEFAULT`).
        regularization: The detector's regularization constant :math:`c` (> 0;
            ``None``, the default, for the residual detector).
        threshold_scale: The paper's :math:`C`, or the scale-free detector's
            margin (>= 1) over its threshold; ``None`` (the default) for the
            residual detector.
        alpha: The smoothness :math:`\\alpha` in the detectors' exponents (> 0;
            default 2.5).
        detector: ``"paper"`` (Algorithm 1 with a fixed kernel on the objective's
            values), ``"scale-free"`` (on the standardized values,
            :class:`~botorch_bandits.scale_free.ScaleFreeDetector`) or
            ``"residual"`` (the GP's one-step-ahead residuals,
            :func:`~botorch_bandits.residuals.residual_change`; no uniform step;
            the default).
        false_alarm: The false-alarm level in (0, 1), per scan (per decision for
            ``"residual"``; default 1e-3); ``None`` for the paper's detector (a
            fixed threshold).
        max_uniform_share: The cap in (0, 1] on the share of uniform steps (1:
            none); ``None`` (the default) for the residual detector.

    Raises:
        ValueError: An invalid value, or an option the detector does not read.

    Example:
        >>> Restarts(false_alarm=1e-4).detector
        'residual'
    """

    xi: float = field(default=XI_DEFAULT, metadata=flat("xi"))
    regularization: float | None = field(
        default=None, metadata=flat("cpd_regularization", modal=True)
    )
    threshold_scale: float | None = field(
        default=None, metadata=flat("cpd_threshold_scale", modal=True)
    )
    alpha: float = field(default=ALPHA_DEFAULT, metadata=flat("cpd_alpha"))
    detector: Detector = field(
        default="residual", metadata=flat("cpd_detector", modal=True)
    )
    false_alarm: float | None = field(
        default=1e-3, metadata=flat("cpd_false_alarm", modal=True)
    )
    max_uniform_share: float | None = field(
        default=None, metadata=flat("cpd_max_uniform_share", modal=True)
    )

    def __post_init__(self) -> None:
        check_choice("cpd_detector", self.detector, DETECTORS)
        check_positive("xi", self.xi, allow_zero=True)
        check_positive("cpd_alpha", self.alpha)
        k = {f"cpd_{n}": getattr(self, n) for n in _FIELDS}
        k.update(xi=self.xi, cpd_alpha=self.alpha, mode="practical")
        if self.detector == "residual":
            check_open_unit("cpd_false_alarm", self.false_alarm)
            _resolve_residual(dict(k), {})
        else:
            _check_uniform(k, {})

    @property
    def uniform(self) -> bool:
        """Whether the detector explores uniformly (Avanesov's Algorithm 2)."""
        return self.detector != "residual"

    @classmethod
    def for_mode(cls, mode: str, detector: str | None = None, **given: Any) -> Restarts:
        """The restarts of ``mode`` (``"theory"``: the paper's detector;
        ``"practical"``: the residual one) or of ``detector``, with the detector's
        defaults (:data:`RESTART_DEFAULTS`) under the fields ``given``.

        Args:
            mode: ``"practical"`` or ``"theory"``.
            detector: The detector (:data:`DETECTORS`; default ``None``: the
                mode's).
            **given: Fields of :class:`Restarts`, over the detector's defaults.

        Returns:
            The checked restarts.

        Raises:
            ValueError: An unknown detector, or an invalid field.

        Example:
            >>> Restarts.for_mode("theory").threshold_scale
            2.6
        """
        detector = detector or ("paper" if mode == "theory" else "residual")
        check_choice("cpd_detector", detector, DETECTORS)
        defaults = {
            n.removeprefix("cpd_"): v for n, v in RESTART_DEFAULTS[detector].items()
        }
        unread = {n: None for n in ("regularization", "threshold_scale")}
        unread.update(false_alarm=None, max_uniform_share=None)
        return cls(detector=detector, **{**unread, **defaults, **given})


#: the detector's fields that differ by detector (their flat names: ``cpd_`` first)
_FIELDS = ("regularization", "threshold_scale", "detector", "false_alarm")
_FIELDS += ("max_uniform_share",)


def resolve_restarts(k: dict[str, Any], said: dict[str, str]) -> None:
    """The detector (the theory mode: the paper's; the practical mode: the
    residual one by default) and its options' defaults, checked.

    Args:
        k: The flat options, the mode resolved; updated in place.
        said: An option's name as the caller wrote it (a deprecated spelling), by
            its name.
    """
    for n in ("cpd_regularization", "cpd_threshold_scale"):  # as given, first
        if k[n] is not None:
            check_positive(said.get(n, n), k[n])
    if k["cpd_detector"] is None:
        if k["mode"] == "practical" and k["cpd_threshold_scale"] is not None:
            # the paper's C and the scale-free detector's margin share the name:
            # code written for the paper's detector must not be reread silently
            named = said.get("cpd_threshold_scale", "cpd_threshold_scale")
            raise ValueError(
                f"{named}={k['cpd_threshold_scale']!r} means the paper detector's "
                "threshold C or the scale-free detector's margin: in the practical "
                "mode name the detector too (cpd_detector='paper' for the paper's "
                "Algorithm 1 on the objective's values, or 'scale-free')."
            )
        k["cpd_detector"] = "paper" if k["mode"] == "theory" else "residual"
    check_choice("cpd_detector", k["cpd_detector"], DETECTORS)
    if k["cpd_detector"] == "residual":
        _resolve_residual(k, said)
        return
    if k["mode"] == "theory" and k["cpd_detector"] != "paper":
        raise ValueError(
            f"mode='theory' runs the paper's detector (Avanesov, Algorithm 1), got "
            f"cpd_detector={k['cpd_detector']!r}: pass mode='practical' for the "
            "scale-free detector, or leave it out."
        )
    if k["cpd_detector"] == "paper" and k["cpd_false_alarm"] is not None:
        raise ValueError(
            f"cpd_false_alarm={k['cpd_false_alarm']!r} is an option of the "
            "scale-free detector; the paper's detector has a fixed threshold "
            "(cpd_threshold_scale). Leave it out or pass cpd_detector='scale-free'."
        )
    for n, value in RESTART_DEFAULTS[k["cpd_detector"]].items():
        if k[n] is None:
            k[n] = value
    _check_uniform(k, said)


def _check_uniform(k: dict[str, Any], said: dict[str, str]) -> None:
    """The options of the paper's or the scale-free detector, their defaults
    filled in (``k``: flat options; ``said``: names as the caller wrote them)."""
    paper = k["cpd_detector"] == "paper"
    if paper and k["cpd_false_alarm"] is not None:
        raise ValueError(
            f"cpd_false_alarm={k['cpd_false_alarm']!r} is an option of the "
            "scale-free detector; the paper's detector has a fixed threshold "
            "(cpd_threshold_scale). Leave it out or pass cpd_detector='scale-free'."
        )
    check_positive(
        said.get("cpd_regularization", "cpd_regularization"), k["cpd_regularization"]
    )
    scale_name = said.get("cpd_threshold_scale", "cpd_threshold_scale")
    check_positive(scale_name, k["cpd_threshold_scale"])
    if not paper and not k["cpd_threshold_scale"] >= 1.0:
        raise ValueError(
            f"`{scale_name}` of the scale-free detector is a margin >= 1 (below 1 "
            f"its false alarms exceed cpd_false_alarm), got "
            f"{scale_name}={k['cpd_threshold_scale']!r}."
        )
    check_positive("cpd_alpha", k["cpd_alpha"])
    if not paper:
        check_open_unit("cpd_false_alarm", k["cpd_false_alarm"])
    share = k["cpd_max_uniform_share"]
    check_positive("cpd_max_uniform_share", share)
    if not share <= 1.0:
        raise ValueError(
            f"`cpd_max_uniform_share` must be in (0, 1] (1: no cap), got "
            f"cpd_max_uniform_share={share!r}."
        )
    if k["mode"] == "theory" and share != 1.0:
        raise ValueError(
            f"mode='theory' runs the paper's Algorithm 2, whose uniform steps are "
            f"not capped, got cpd_max_uniform_share={share!r}: pass "
            "mode='practical' or leave it out."
        )


def _resolve_residual(k: dict[str, Any], said: dict[str, str]) -> None:
    """The residual detector's options: its false-alarm level per decision; the
    uniform-exploration detectors' options and a changed ``xi`` or ``cpd_alpha``
    (read by those detectors only) are refused, never ignored."""
    if k["mode"] == "theory":
        raise ValueError(
            "mode='theory' runs the paper's detector (Avanesov, Algorithm 1), got "
            "cpd_detector='residual': pass mode='practical' for the residual "
            "detector, or leave it out."
        )
    given = [f"{said.get(n, n)}={k[n]!r}" for n in UNIFORM_ONLY if k[n] is not None]
    if k["xi"] != XI_DEFAULT:
        given.append(f"xi={k['xi']!r}")
    if k["cpd_alpha"] != ALPHA_DEFAULT:
        given.append(f"cpd_alpha={k['cpd_alpha']!r}")
    if given:
        raise ValueError(
            f"{', '.join(given)} set(s) the uniform steps or the kernel statistic of "
            "the paper's and the scale-free detectors; the residual detector (the "
            "practical default) makes no uniform step and reads neither. Pass "
            "cpd_detector='scale-free' (or 'paper') to use them, or leave them out."
        )
    if k["cpd_false_alarm"] is None:
        k["cpd_false_alarm"] = RESTART_DEFAULTS["residual"]["cpd_false_alarm"]
    check_open_unit("cpd_false_alarm", k["cpd_false_alarm"])


#: the detector's options (GP-UCB-CPD's), read only with ``restarts=True``
CPD_OPTIONS = (
    "cpd_regularization",
    "cpd_threshold_scale",
    "cpd_alpha",
    "cpd_detector",
    "cpd_false_alarm",
    "cpd_max_uniform_share",
)


def refuse_detector_without_restarts(k: dict[str, Any], said: dict[str, str]) -> None:
    """A detector option given without ``restarts=True`` is refused: a value other
    than its default or the mode's resolved default (which a stored strategy holds).

    Args:
        k: The flat options, the mode resolved (``restarts`` and the detector's
            options of :data:`CPD_OPTIONS` read).
        said: An option's name as the caller wrote it (a deprecated spelling), by
            its name.

    Raises:
        ValueError: A detector option away from its defaults with restarts off.
    """
    if k["restarts"]:
        return
    detector = "paper" if k["mode"] == "theory" else "residual"
    defaults = {
        "cpd_detector": detector,
        "cpd_alpha": ALPHA_DEFAULT,
        **RESTART_DEFAULTS[detector],
    }
    given = [
        f"{said.get(n, n)}={k[n]!r}"
        for n in CPD_OPTIONS
        if k[n] is not None and k[n] != defaults.get(n)
    ]
    if given:
        raise ValueError(
            f"{', '.join(given)} set(s) GP-UCB-CPD's change-point detector, and "
            "restarts are off: pass restarts=True or leave them out."
        )


def migrate_unversioned(stored: dict[str, Any]) -> None:
    """A node stored before the schema version (schema 0) and before the
    scale-free detector ran the paper's detector (and stored its constants) in
    either mode: it replays its restarts exactly.

    Args:
        stored: The stored node's options, by flat name; ``cpd_detector`` set to
            ``"paper"`` where missing, in place.
    """
    stored.setdefault("cpd_detector", "paper")
