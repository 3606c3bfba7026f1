"""The golden trace (issue 27; its two tiers since issue 61): the decisions the Ax
strategy makes over an option matrix in both modes, and the per-step statistics of
every reproduction's smoke run, recorded in this folder and recomputed by
``tests/test_golden.py`` in a process whose arithmetic is pinned (:func:`pinned`).
The exact tier (:func:`exact`) is replayed as a whole Ax loop; the sets with a
fitted GP or a gradient optimizer are replayed one decision at a time on their
recorded histories (``golden_replay``, compared within ``golden_compare``'s
tolerances). ``python tests/golden/golden_trace.py record [PART]`` records from the
code as it is (``decisions``, ``histories`` or ``reproductions [NAME ...]``); the
history of the re-recordings is in CHANGELOG.md."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
DECISIONS = HERE / "decisions.json"
HISTORIES = HERE / "histories.json"
#: the reproductions' record of the CPU family it was made on, and that machine
#: (the first record's files; :func:`records` finds the others)
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


def exact(options: dict[str, Any]) -> bool:
    """The exact tier: a fixed kernel and the finite optimizer (the theory mode but
    ``hyperparameters="fitted"`` and ``optimizer="gradient"``). Each decision is
    the argmax of a closed-form score over a fixed Sobol decision set, so it is a
    row of that set, and no iterative optimizer (L-BFGS-B on a likelihood or on the
    acquisition) with its stopping tests stands between the data and it; the other
    sets are replayed decision by decision (``golden_replay``)."""
    return not (
        options["mode"] == "practical"
        or options.get("hyperparameters") == "fitted"
        or options.get("optimizer") == "gradient"
    )


# ---------------------------------------------------------------- pinned arithmetic
def _numpy_wide_targets() -> list[str]:
    """numpy's dispatch targets wider than AVX2 in this build (``X86_V4``,
    ``AVX512_*``): numpy's float64 ``exp``/``log`` differ there in the last digit."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__ as targets
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_dispatch__ as targets
    return [t for t in targets if "512" in t or t == "X86_V4"]


def pinned() -> dict[str, str]:
    """The environment the trace is computed in, set before torch and numpy load:
    every numerical library on one code path and one thread. The decision sets then
    agree on the Intel Xeon and the AMD EPYC this project runs on; the reproductions
    do not (their last bits differ from the first step), hence :func:`records`.

    - ``MKL_CBWR=COMPATIBLE``: torch's MKL (BLAS, LAPACK: the GP's products,
      Cholesky, triangular solves) on its one branch for Intel and non-Intel CPUs
      (SSE2 without the approximate ``rcpps``/``rsqrtps``); AUTO picks a branch by
      CPU model and vendor, and MKL's own AVX2/AVX-512 branches run on Intel only.
    - ``ATEN_CPU_CAPABILITY=avx2``: torch's vectorized kernels at one width.
    - ``OPENBLAS_CORETYPE=Haswell``: numpy's and scipy's OpenBLAS on one kernel set
      (its default picks one by CPU model).
    - ``NPY_DISABLE_CPU_FEATURES``: numpy's loops no wider than AVX2.
    - one thread in MKL, OpenMP and OpenBLAS, fixed (``*_DYNAMIC=FALSE``): the
      order of every reduction then depends on the code only.
    """
    return {
        "MKL_CBWR": "COMPATIBLE",
        "ATEN_CPU_CAPABILITY": "avx2",
        "OPENBLAS_CORETYPE": "Haswell",
        "NPY_DISABLE_CPU_FEATURES": " ".join(_numpy_wide_targets()),
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_DYNAMIC": "FALSE",
        "OMP_DYNAMIC": "FALSE",
    }


def pinning() -> dict[str, str]:
    """:func:`pinned`, or nothing with ``GOLDEN_PIN=0`` (the trace then runs in
    the caller's environment: to show what the pinned variables change)."""
    return {} if os.environ.get("GOLDEN_PIN") == "0" else pinned()


def is_pinned() -> bool:
    return all(os.environ.get(k) == v for k, v in pinning().items())


def run_pinned(request: dict[str, Any], env: dict[str, str] | None = None) -> Any:
    """:func:`compute` for ``request`` (``{"sets": [KEY, ...], "reproductions":
    [NAME, ...]}``) in a child process with :func:`pinned`'s environment (over
    ``env``, default this one's), importing the same ``botorch_bandits``."""
    import botorch_bandits

    root = str(Path(botorch_bandits.__file__).resolve().parents[1])
    child = {**(os.environ if env is None else env), **pinning()}
    child["PYTHONPATH"] = os.pathsep.join(
        [root, *filter(None, child.get("PYTHONPATH", "").split(os.pathsep))]
    )
    with tempfile.TemporaryDirectory() as tmp:
        ask, out = Path(tmp) / "request.json", Path(tmp) / "out.json"
        ask.write_text(json.dumps(request))
        proc = subprocess.run(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "compute",
                str(ask),
                str(out),
            ],
            env=child,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(
                f"the pinned golden-trace process exited with {proc.returncode}:\n"
                f"{proc.stderr[-4000:]}"
            )
        return json.loads(out.read_text())


# ------------------------------------------------------------------- the Ax loop
def _node_options(options: dict[str, Any]) -> dict[str, Any]:
    return {"num_candidates": 128, **options}


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
    client.set_generation_strategy(
        bandit_generation_strategy(num_init=3, **_node_options(options))
    )
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


def run_option_set(
    space: str, options: dict[str, Any], capture: bool = False
) -> list[dict[str, Any]] | tuple[list[dict[str, Any]], list[list[tuple]]]:
    """The trials of one option set: parameters and generator-run metadata; with
    ``capture`` also every ``decide`` call of the bandit node, grouped by the Ax
    call it belongs to: ``(history, decision)``."""
    import logging
    import warnings
    from collections import deque

    import botorch_bandits.ax.generation as generation

    calls: list[list[tuple]] = []
    caches: list[Any] = []
    real = generation.decide

    def recording(history, opts, domain, cache=None):
        seed_global_rng(sum(len(c) for c in calls))
        decision = real(history, opts, domain, cache)
        if not caches or caches[-1] is not cache:
            caches.append(cache)
            calls.append([])
        calls[-1].append((history, decision))
        return decision

    client = _client(space, options)
    running: deque = deque()
    made = 0
    logging.disable(logging.INFO)
    generation.decide = recording
    try:
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
    finally:
        generation.decide = real
        logging.disable(logging.NOTSET)
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
    return (out, calls) if capture else out


# ------------------------------------------------------------ the global RNG
def seed_global_rng(n: int) -> None:
    """Seed torch's global random generator before a set's ``n``-th decision, where
    the trace is recorded and where it is replayed: qLogNEI's decisions depend on
    it (BoTorch's ``prune_inferior_points``, run by ``prune_baseline=True``, takes
    its sampler's seed from it), so its state must be the same in both."""
    import torch

    torch.manual_seed(1_000_003 + n)


# ---------------------------------------------------------------- reproductions
def run_reproduction(name: str) -> dict[str, Any]:
    """Every job of one experiment's smoke run: each per-step statistic's mean and
    standard error (float64 values, which JSON keeps exactly) and the final mean
    cumulative regret."""
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
        values = {
            m: [mean.double().tolist(), se.double().tolist()]
            for m, (mean, se) in sorted(j["stats"].items())
        }
        jobs[f"{j['problem']}|{j['algorithm']}"] = {
            "values": values,
            "final": repr(float(j["stats"]["cumulative_regret"][0][-1])),
        }
    cal = res.calibration
    return {"jobs": jobs, "cpd_c": None if cal is None else repr(float(cal.c))}


def experiments() -> list[str]:
    from bandit_experiments.reproduction.runner import all_experiments

    return all_experiments()


def cpu_model() -> str:
    """This machine's CPU model as ``/proc/cpuinfo`` names it (e.g. ``"AMD EPYC"``;
    the platform's processor elsewhere)."""
    import platform

    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "model name":
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def records() -> dict[str, Path]:
    """The reproductions' records by the CPU model each was made on (its
    ``machine*.json``): the pinned arithmetic gives the same bits on one CPU family
    and not across them (an Intel Xeon and an AMD EPYC differ from the first step in
    the 11th digit), so each family this project runs on has its own record."""
    out = {}
    for m in sorted(HERE.glob("machine*.json")):
        suffix = m.stem[len("machine") :]
        out[json.loads(m.read_text())["cpu"]] = HERE / f"reproductions{suffix}.json"
    return out


def record_files(cpu: str) -> tuple[Path, Path]:
    """The reproductions' record and machine file of CPU model ``cpu``: its record's
    where one exists, else new files named after it (``reproductions-amd-epyc.json``)."""
    known = records()
    if cpu in known:
        path = known[cpu]
        return path, HERE / path.name.replace("reproductions", "machine", 1)
    slug = "-".join("".join(c if c.isalnum() else " " for c in cpu.lower()).split())
    return HERE / f"reproductions-{slug}.json", HERE / f"machine-{slug}.json"


def machine() -> dict[str, str]:
    """Where a record was made: the CPU (its model, which picks the reproductions'
    record a run is compared with exactly, and its vector extensions), the numerical
    libraries' versions and the variables :func:`pinned` sets, as they were."""
    import botorch
    import gpytorch
    import numpy
    import scipy
    import torch

    model, flags = cpu_model(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "flags":
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
        "arithmetic": " ".join(
            f"{k}={os.environ.get(k, '')}" for k in sorted(pinned())
        ),
    }


# ---------------------------------------------------------------------- commands
def compute(sets: list[str], reproductions: list[str]) -> dict[str, Any]:
    """What the test compares, for the option sets named by key (the exact tier's
    trials, the replayed tier's decisions) and the reproductions named; an error
    is returned as its traceback, so one set's failure is that set's alone."""
    from golden_replay import replay

    by_key = {key(s, o): (s, o) for s, o in option_sets()}
    recorded = json.loads(HISTORIES.read_text())
    out: dict[str, Any] = {"sets": {}, "reproductions": {}, "machine": machine()}
    for k in sets:
        space, options = by_key[k]
        try:
            if exact(options):
                out["sets"][k] = {"trials": run_option_set(space, options)}
            else:
                out["sets"][k] = {"decisions": replay(space, options, recorded[k])}
        except Exception:
            out["sets"][k] = {"error": traceback.format_exc()}
    for name in reproductions:
        try:
            out["reproductions"][name] = run_reproduction(name)
        except Exception:
            out["reproductions"][name] = {"error": traceback.format_exc()}
    return out


def record(what: str, names: list[str]) -> None:
    """Record ``what`` from the code as it is: ``decisions`` (the exact tier's Ax
    loops), ``histories`` (the replayed tier's), ``reproductions`` (only ``names``
    if given, the others kept) or ``all``; sets no longer listed are dropped."""
    from golden_replay import record_history

    if what in ("all", "decisions", "histories"):
        for path, tier in ((DECISIONS, True), (HISTORIES, False)):
            if what not in ("all", "decisions" if tier else "histories"):
                continue
            data = {}
            for space, options in option_sets():
                if exact(options) == tier:
                    k = key(space, options)
                    run = run_option_set if tier else record_history
                    data[k] = run(space, options)
                    print("recorded", k, flush=True)
            indent = 0 if tier else None
            path.write_text(json.dumps(data, indent=indent, sort_keys=True) + "\n")
    here = machine()
    reproductions, machine_file = record_files(here["cpu"])
    if what in ("all", "reproductions"):
        keep = names and reproductions.exists()
        data = json.loads(reproductions.read_text()) if keep else {}
        data = {k: v for k, v in data.items() if k in experiments()}
        for name in names or experiments():
            data[name] = run_reproduction(name)
            print("recorded", name, flush=True)
        reproductions.write_text(json.dumps(data, sort_keys=True) + "\n")
    machine_file.write_text(json.dumps(here, indent=1, sort_keys=True) + "\n")


def main(argv: list[str]) -> None:
    """``record [PART [NAME ...]]`` or ``compute REQUEST OUT`` (JSON files), each
    in the pinned arithmetic (the process starts itself again in it)."""
    if not is_pinned():
        env = {**os.environ, **pinning()}
        sys.exit(subprocess.call([sys.executable, *argv], env=env))
    import torch

    torch.set_num_threads(1)
    command = argv[1] if len(argv) > 1 else "record"
    if command == "record":
        record(argv[2] if len(argv) > 2 else "all", argv[3:])
    elif command == "compute":
        request = json.loads(Path(argv[2]).read_text())
        result = compute(request.get("sets", []), request.get("reproductions", []))
        Path(argv[3]).write_text(json.dumps(result))
    else:
        raise SystemExit(f"unknown command {command!r}: record or compute")


if __name__ == "__main__":
    main(sys.argv)
