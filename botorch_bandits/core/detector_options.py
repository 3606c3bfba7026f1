"""The change-point detector's options (GP-UCB-CPD's restarts) in the Ax strategy's
flat spelling: the detectors, each one's defaults, and their resolution and checks
(a step of :func:`~botorch_bandits.core.options.resolve_kwargs`)."""

from __future__ import annotations

from typing import Any

from botorch_bandits.validation import check_choice, check_open_unit, check_positive

DETECTORS: tuple[str, ...] = ("paper", "scale-free")
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
}


def resolve_restarts(k: dict[str, Any], said: dict[str, str]) -> None:
    """The detector (the theory mode: the paper's; the practical mode: the
    scale-free one by default) and its options' defaults, checked.

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
        k["cpd_detector"] = "paper" if k["mode"] == "theory" else "scale-free"
    check_choice("cpd_detector", k["cpd_detector"], DETECTORS)
    if k["mode"] == "theory" and k["cpd_detector"] != "paper":
        raise ValueError(
            f"mode='theory' runs the paper's detector (Avanesov, Algorithm 1), got "
            f"cpd_detector={k['cpd_detector']!r}: pass mode='practical' for the "
            "scale-free detector, or leave it out."
        )
    paper = k["cpd_detector"] == "paper"
    if paper and k["cpd_false_alarm"] is not None:
        raise ValueError(
            f"cpd_false_alarm={k['cpd_false_alarm']!r} is an option of the "
            "scale-free detector; the paper's detector has a fixed threshold "
            "(cpd_threshold_scale). Leave it out or pass cpd_detector='scale-free'."
        )
    for n, value in RESTART_DEFAULTS[k["cpd_detector"]].items():
        if k[n] is None:
            k[n] = value
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
