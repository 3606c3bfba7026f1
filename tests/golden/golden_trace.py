"""The golden trace of issue 27: the decisions (and their metadata) the Ax strategy
makes over an option matrix in both modes, and the per-step statistics of every
reproduction's smoke run. ``python tests/golden/golden_trace.py`` writes them from
the code as it is (``... decisions``, ``... practical`` or ``... reproductions
[NAME ...]``: a part); ``tests/test_golden.py`` recomputes them and compares exactly. The practical
mode's sets are bit-identical only on a machine like the one they were recorded on
(``machine.json``, :func:`machine`): a fitted GP differs across CPUs in its last
digits and a few decisions later in its trials."""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
DECISIONS = HERE / "decisions.json"
REPRODUCTIONS = HERE / "reproductions.json"
MACHINE = HERE / "machine.json"
TRIALS = 20
IN_FLIGHT = 3

#: option sets valid in both modes (each run in "theory" and "practical")
BOTH_MODES: list[dict[str, Any]] = [
    dict(algorithm="IGP-UCB"),
    dict(algorithm="GP-UCB"),
    dict(algorithm="GP-TS"),
    dict(algorithm="IGP-UCB", pending="hallucinate"),
    dict(algorithm="GP-UCB", pending="hallucinate"),
    dict(algorithm="GP-TS", pending="hallucinate"),
    dict(algorithm="IGP-UCB", pending="ignore"),
    dict(algorithm="GP-TS", pending="ignore"),
    dict(algorithm="IGP-UCB", beta=1.5),
    dict(algorithm="GP-TS", beta=0.5),
    dict(algorithm="IGP-UCB", B=2.0, R=0.3, delta=0.05),
    dict(algorithm="IGP-UCB", pending="censor", window=4, y_min=-1.5, beta=1.0),
    dict(algorithm="GP-TS", pending="censor", window=4, y_min=-1.5, beta=1.0),
    dict(algorithm="IGP-UCB", pending="censor", window=3, y_min=-2.0, B_y=3.0),
    dict(algorithm="GP-TS", pending="censor", y_min=-2.0),
    dict(algorithm="IGP-UCB", long_term_constraints=True, epoch_length=5),
    dict(algorithm="GP-TS", long_term_constraints=True, multiplier_update="additive"),
    dict(
        algorithm="IGP-UCB",
        long_term_constraints=True,
        epoch_length=4,
        multiplier_update="additive",
        step=0.2,
        num_epochs=6,
        constraint_model="composite",
    ),
    dict(
        algorithm="GP-UCB",
        long_term_constraints=True,
        epoch_length=6,
        multiplier_update="multiplicative",
        penalty_c=2.0,
    ),
    dict(algorithm="IGP-UCB", restarts=True, beta=1.0),
    dict(algorithm="GP-TS", restarts=True, xi=2.5, cpd_c=5.0, cpd_C=1.0),
    dict(
        algorithm="IGP-UCB", restarts=True, xi=3.0, cpd_c=2.0, cpd_C=0.5, cpd_alpha=2.0
    ),
    dict(
        algorithm="IGP-UCB",
        long_term_constraints=True,
        epoch_length=5,
        pending="censor",
        window=4,
        y_min=-3.0,
        beta=1.0,
        restarts=True,
    ),
    dict(algorithm="IGP-UCB", optimizer="finite", num_candidates=64),
    dict(algorithm="GP-TS", optimizer="gradient", num_candidates=64, seed=3),
]
#: theory-only option sets (the practical mode refuses a fixed kernel)
THEORY_ONLY: list[dict[str, Any]] = [
    dict(algorithm="IGP-UCB", hyperparameters="fitted"),
    dict(algorithm="GP-TS", kernel="rbf", lengthscale=0.3, noise=0.05),
    dict(algorithm="GP-UCB", kernel="rbf", lengthscale=0.15),
]
#: practical-only option sets: the drift options of issue 48 (forgetting; the
#: residual detector is the practical default of ``restarts=True`` above) and the
#: scale-free detector the practical mode ran by default before
PRACTICAL_ONLY: list[dict[str, Any]] = [
    dict(algorithm="IGP-UCB", forgetting=True),
    dict(algorithm="qLogNEI", forgetting=True, restarts=True),
    dict(algorithm="IGP-UCB", restarts=True, cpd_detector="scale-free"),
]
#: the search spaces: a box with a linear constraint and a mixed space
SPACES = ("box", "mixed")


def option_sets() -> list[tuple[str, dict[str, Any]]]:
    """(space, options) pairs: every set in both modes; the mixed space for every
    third set."""
    out = []
    for i, o in enumerate(BOTH_MODES):
        space = "mixed" if i % 3 == 2 else "box"
        for mode in ("theory", "practical"):
            extra = {}
            if mode == "practical" and "cpd_C" in o:
                # the paper's C: the practical mode then asks for the detector by
                # name (these sets keep the paper's detector in the practical mode)
                extra = {"cpd_detector": "paper"}
            out.append((space, {"mode": mode, **o, **extra}))
    for o in THEORY_ONLY:
        out.append(("box", {"mode": "theory", **o}))
    for i, o in enumerate(PRACTICAL_ONLY):
        out.append(("mixed" if i == 1 else "box", {"mode": "practical", **o}))
    return out


def key(space: str, options: dict[str, Any]) -> str:
    return space + ":" + ",".join(f"{k}={options[k]!r}" for k in sorted(options))


def _client(space: str, options: dict[str, Any]) -> Any:
    from ax import (
        ChoiceParameterConfig,
        Client,
        RangeParameterConfig,
    )

    from botorch_bandits.ax import bandit_generation_strategy

    client = Client(random_seed=0)
    if space == "box":
        params = [
            RangeParameterConfig(
                name=f"x{i}", bounds=(0.0, 1.0), parameter_type="float"
            )
            for i in range(3)
        ]
        cons = ["x0 + x1 <= 1.5"]
    else:
        params = [
            RangeParameterConfig(name="x0", bounds=(0.0, 1.0), parameter_type="float"),
            RangeParameterConfig(
                name="lr", bounds=(1e-4, 1e-1), parameter_type="float", scaling="log"
            ),
            RangeParameterConfig(name="k", bounds=(1, 6), parameter_type="int"),
            ChoiceParameterConfig(
                name="c", values=["a", "b", "c"], parameter_type="str", is_ordered=False
            ),
        ]
        cons = None
    client.configure_experiment(
        name="golden", parameters=params, parameter_constraints=cons
    )
    ltc = options.get("long_term_constraints", False)
    client.configure_optimization(
        objective="f", outcome_constraints=["g <= 0.25"] if ltc else None
    )
    opts = dict(options)
    opts.setdefault("num_candidates", 128)
    client.set_generation_strategy(bandit_generation_strategy(num_init=3, **opts))
    return client


def _objective(space: str, p: dict[str, Any], index: int) -> dict[str, Any]:
    """A deterministic objective (its 'noise' a function of the trial index) and a
    constraint metric; the objective drifts after trial 10 (for the restarts)."""
    if space == "box":
        x = [float(p[f"x{i}"]) for i in range(3)]
    else:
        c = {"a": 0.0, "b": 0.5, "c": 1.0}[p["c"]]
        x = [float(p["x0"]), (math.log10(float(p["lr"])) + 4) / 3, (p["k"] - 1) / 5, c]
    shift = 0.0 if index < 10 else 0.6
    f = -sum((xi - 0.3 - shift * (j == 0)) ** 2 for j, xi in enumerate(x))
    f += 0.05 * math.sin(7.0 * index + 1.0)
    g = x[0] - 0.5 * x[1]
    return {"f": f, "g": g}


def _clean(value: Any) -> Any:
    """Metadata as JSON (floats by repr, so equal means bit-identical)."""
    if isinstance(value, dict):
        return {
            str(k): _clean(v)
            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
        }
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, float):
        return repr(value)
    if hasattr(value, "tolist"):
        return _clean(value.tolist())
    return value


def run_option_set(space: str, options: dict[str, Any]) -> list[dict[str, Any]]:
    """The trials of one option set: parameters and generator-run metadata."""
    import warnings
    from collections import deque

    client = _client(space, options)
    running: deque = deque()
    made = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while made < TRIALS or running:
            if made < TRIALS and len(running) < IN_FLIGHT:
                new = client.get_next_trials(
                    max_trials=min(IN_FLIGHT - len(running), TRIALS - made)
                )
                running.extend(new.items())
                made += len(new)
                continue
            idx, params = running.popleft()
            client.complete_trial(
                trial_index=idx, raw_data=_objective(space, params, idx)
            )
    out = []
    for t in sorted(client._experiment.trials.values(), key=lambda t: t.index):
        gr = t.generator_runs[0]
        out.append(
            {
                "node": gr._generator_key,
                "params": _clean(dict(t.arms[0].parameters)),
                "meta": _clean(dict(gr.gen_metadata or {})),
            }
        )
    return out


def _digest(t: Any) -> str:
    import torch

    return hashlib.sha256(
        t.detach().to(torch.double).contiguous().numpy().tobytes()
    ).hexdigest()


def run_reproduction(name: str) -> dict[str, Any]:
    """Every job of one experiment's smoke run: per-step statistics as digests (and
    the final mean cumulative regret, readable)."""
    import torch

    from bandit_experiments.reproduction.runner import reproduce

    # one torch thread, as recorded: the bits of some runs (the LR workload, the
    # refits' batched factorizations) depend on the thread count, and a test
    # session's count depends on the tests before
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        res = reproduce(name, smoke=True, out=None, show_progress=False, workers=1)
    finally:
        torch.set_num_threads(threads)
    jobs = {}
    for j in res.jobs:
        stats = {
            m: [_digest(mean), _digest(se)]
            for m, (mean, se) in sorted(j["stats"].items())
        }
        jobs[f"{j['problem']}|{j['algorithm']}"] = {
            "stats": stats,
            "final": repr(float(j["stats"]["cumulative_regret"][0][-1])),
        }
    cal = res.calibration
    return {"jobs": jobs, "cpd_c": None if cal is None else repr(float(cal.c))}


def experiments() -> list[str]:
    from bandit_experiments.reproduction.runner import all_experiments

    return all_experiments()


def machine_dependent(options: dict[str, Any]) -> bool:
    """The sets whose bits depend on the machine: a fitted GP (L-BFGS-B on a
    likelihood) or a gradient optimizer -- the practical mode, the theory mode's
    ``hyperparameters="fitted"`` or ``optimizer="gradient"``."""
    return (
        options["mode"] == "practical"
        or options.get("hyperparameters") == "fitted"
        or options.get("optimizer") == "gradient"
    )


def reproduction_machine_dependent(name: str) -> bool:
    """The reproductions whose bits depend on the machine: all of them -- App. C's
    multi-start marginal-likelihood fits, the engine's collected downdates (a matrix
    product over them) in the finite-arm, constrained and piecewise simulators, and
    (measured in issue 60: CI on an Intel Xeon) Verma et al.'s fixed-kernel runs
    (``-known``) too, whose four jobs differed there from the AMD EPYC record, two in
    the 8th digit and two by 0.3-1.5 % in the final regret. Issue 61 replaces the
    skip with a comparison that holds on every machine."""
    del name
    return True


def machine() -> dict[str, str]:
    """What the practical mode's bits depend on besides our code: the CPU (its model
    and vector extensions) and the numerical libraries' versions."""
    import platform

    import botorch
    import gpytorch
    import numpy
    import scipy
    import torch

    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "model name":
                model = value.strip()
            elif name.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    vector = [f for f in ("avx2", "fma", "avx512f", "avx512_bf16") if f in flags]
    return {
        "cpu": model,
        "vector": " ".join(vector),
        "torch_cpu": torch.backends.cpu.get_cpu_capability(),
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "botorch": botorch.__version__,
        "gpytorch": gpytorch.__version__,
    }


def main(argv: list[str]) -> None:
    import torch

    torch.set_num_threads(1)
    what = argv[1] if len(argv) > 1 else "all"
    if what in ("all", "decisions", "practical", "practical-restarts", "machine"):
        # "practical": only the practical mode's sets, the others kept as recorded
        # (a change of a practical default leaves the theory's decisions alone);
        # "practical-restarts": only its sets with restarts; sets no longer
        # listed are dropped
        # "machine": the sets of :func:`machine_dependent`, on this machine
        partial = what.startswith("practical") or what == "machine"
        data = json.loads(DECISIONS.read_text()) if partial else {}
        listed = {key(space, options) for space, options in option_sets()}
        data = {k: v for k, v in data.items() if k in listed}
        for space, options in option_sets():
            if what == "machine" and not machine_dependent(options):
                continue
            if what.startswith("practical") and options["mode"] != "practical":
                continue
            drift = options.get("restarts") or options.get("forgetting")
            if what == "practical-restarts" and not drift:
                continue
            data[key(space, options)] = run_option_set(space, options)
            print("recorded", key(space, options), flush=True)
        DECISIONS.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
        MACHINE.write_text(json.dumps(machine(), indent=1, sort_keys=True) + "\n")
    if what in ("all", "reproductions"):
        # "reproductions NAME ...": only those experiments, the others kept as
        # recorded (experiments no longer listed are dropped)
        names = argv[2:] if what == "reproductions" and len(argv) > 2 else None
        data = json.loads(REPRODUCTIONS.read_text()) if names else {}
        data = {k: v for k, v in data.items() if k in experiments()}
        for name in names or experiments():
            data[name] = run_reproduction(name)
            print("recorded", name, flush=True)
        REPRODUCTIONS.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv)
