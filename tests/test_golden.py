"""The golden trace (issue 27; two tiers and no skip since issue 61): the decisions
of the Ax strategy over an option matrix and every reproduction's smoke run,
recomputed in one process whose arithmetic is pinned (``golden_trace.pinned``) and
compared with the record: the exact tier (a fixed kernel, the finite optimizer) bit
for bit, the sets with a fitted GP or a gradient optimizer decision by decision on
their recorded histories within ``golden_compare.TOL_X`` / ``TOL_ACQ``, and the
reproductions bit for bit against the record of this machine's CPU family (the
pinned arithmetic gives other last bits on an Intel Xeon and an AMD EPYC, so each
has its own record; on a family with none, each job's final regret within
``golden_compare.TOL_FINAL`` of a record); a failure names the first divergence.
The default run checks every exact set, a sample of the others and two
reproductions; ``-m slow`` checks all. The record's history (what was re-recorded,
when and why) is in CHANGELOG.md."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "golden"))
import golden_compare as compare
import golden_trace as golden

DECISIONS = json.loads(golden.DECISIONS.read_text())
HISTORIES = json.loads(golden.HISTORIES.read_text())
#: the reproductions' records by CPU model; this machine's family compares with its
#: own bit for bit, another with every record within ``golden_compare.TOL_FINAL``
RECORDS = {cpu: json.loads(p.read_text()) for cpu, p in golden.records().items()}
OWN = RECORDS.get(golden.cpu_model())
REPRODUCTIONS = OWN if OWN is not None else next(iter(RECORDS.values()))
SETS = {golden.key(s, o): o for s, o in golden.option_sets()}
EXACT = sorted(k for k, o in SETS.items() if golden.exact(o))
REPLAYED = sorted(k for k, o in SETS.items() if not golden.exact(o))
#: the default run's replayed sets: censoring, long-term constraints and restarts
#: combined (the box), and qLogNEI with forgetting and restarts (the mixed space)
REPLAY_SAMPLE = [
    "box:algorithm='IGP-UCB',beta=1.0,epoch_length=5,long_term_constraints=True,"
    "mode='practical',pending='censor',restarts=True,window=4,y_min=-3.0",
    "mixed:algorithm='qLogNEI',forgetting=True,mode='practical',restarts=True",
]
#: the default run's reproductions: the finite-arm engine and a fixed-kernel run of
#: Verma et al. (the one that differed on an Intel CPU before the pinning)
REPRO_SAMPLE = ["chowdhury2017-fig1", "verma2022-fig1a-known"]


def _run(sets: list[str], reproductions: list[str]) -> dict:
    pytest.importorskip("ax")
    return golden.run_pinned({"sets": sets, "reproductions": reproductions})


@pytest.fixture(scope="module")
def default_run() -> dict:
    return _run([*EXACT, *REPLAY_SAMPLE], REPRO_SAMPLE)


@pytest.fixture(scope="module")
def slow_run() -> dict:
    rest = sorted(set(REPLAYED) - set(REPLAY_SAMPLE))
    return _run(rest, sorted(set(REPRODUCTIONS) - set(REPRO_SAMPLE)))


def _check_set(run: dict, name: str) -> None:
    got = run["sets"][name]
    assert "error" not in got, got.get("error")
    if name in DECISIONS:
        failure = compare.compare_exact(name, got["trials"], DECISIONS[name])
    else:
        steps = [s["decision"] for s in HISTORIES[name]["steps"]]
        failure = compare.compare_replay(name, got["decisions"], steps)
    assert failure is None, failure


def _check_reproduction(run: dict, name: str) -> None:
    got = run["reproductions"][name]
    assert "error" not in got, got.get("error")
    if OWN is not None:
        failure = compare.compare_reproduction(name, got, OWN[name])
        assert failure is None, failure
    else:  # no record of this CPU family: near one of the others
        failures = [compare.compare_near(name, got, r[name]) for r in RECORDS.values()]
        assert None in failures, "; ".join(failures)


@pytest.mark.parametrize("name", EXACT + REPLAY_SAMPLE)
def test_decisions_equal_the_golden_trace(default_run, name) -> None:
    _check_set(default_run, name)


@pytest.mark.parametrize("name", REPRO_SAMPLE)
def test_reproduction_smoke_runs_equal_the_golden_trace(default_run, name) -> None:
    _check_reproduction(default_run, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(REPLAYED) - set(REPLAY_SAMPLE)))
def test_decisions_equal_the_golden_trace_all(slow_run, name) -> None:
    _check_set(slow_run, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(REPRODUCTIONS) - set(REPRO_SAMPLE)))
def test_reproduction_smoke_runs_equal_the_golden_trace_all(slow_run, name) -> None:
    _check_reproduction(slow_run, name)


def test_the_trace_covers_the_option_matrix() -> None:
    assert set(DECISIONS) == set(EXACT) and set(HISTORIES) == set(REPLAYED)
    assert len(SETS) >= 2 * 20 and len(EXACT) >= 20 and len(REPLAYED) >= 20
    assert {o["mode"] for o in SETS.values()} == {"theory", "practical"}
    for record in RECORDS.values():
        assert set(record) == set(golden.experiments())
    assert set(REPLAY_SAMPLE) <= set(REPLAYED)


def test_the_pinned_process_runs_the_pinned_paths(default_run) -> None:
    """The child's torch runs at AVX2 where the CPU has it (the pin took effect)."""
    pinned = golden.pinned()
    assert pinned["MKL_CBWR"] == "COMPATIBLE" and pinned["MKL_NUM_THREADS"] == "1"
    here = golden.machine()
    if "avx2" in here["vector"].split() and golden.pinning():
        assert default_run["machine"]["torch_cpu"] == "AVX2"


# --------------------------------------------- the comparisons on hand-made values
def _trial(x0: str, t: int = 4, **meta) -> dict:
    return {"node": "bandit", "params": {"x0": x0}, "meta": {"t": t, **meta}}


def test_exact_compares_the_named_metadata_only() -> None:
    rec = [_trial("0.5"), _trial("0.25", sigma_multiplier="2.0")]
    assert compare.compare_exact("s", rec, rec) is None
    # a key no test names may change (or appear) without a new record
    other = [_trial("0.5", fit_time="1.0"), _trial("0.25", sigma_multiplier="2.0")]
    assert compare.compare_exact("s", other, rec) is None
    moved = [_trial("0.5"), _trial("0.2500000000000001", sigma_multiplier="2.0")]
    msg = compare.compare_exact("s", moved, rec)
    assert "trial 1" in msg and "0.2500000000000001" in msg
    beta = [_trial("0.5"), _trial("0.25", sigma_multiplier="2.0000000000000004")]
    msg = compare.compare_exact("s", beta, rec)
    assert "'sigma_multiplier'" in msg and "trial 1" in msg


def _decision(x: list[float], acq: float | None = 1.0, **meta) -> dict:
    return {
        "x": x,
        "uniform": False,
        "params": {"x0": repr(x[0])},
        "meta": {"t": 4, **meta},
        "acquisition_value": acq,
    }


def test_replay_holds_within_the_tolerance_and_names_the_first_divergence() -> None:
    rec = [_decision([0.1, 0.2]), _decision([0.3, 0.4], 2.0)]
    near = [_decision([0.1 + 0.5e-3, 0.2]), _decision([0.3, 0.4 - 0.9e-3], 2.0)]
    assert compare.compare_replay("s", near, rec) is None
    # another maximum of the same height: the acquisition values agree
    basin = [_decision([0.1, 0.2]), _decision([0.9, 0.1], 2.0 + 1e-3)]
    assert compare.compare_replay("s", basin, rec) is None
    far = [_decision([0.1, 0.2]), _decision([0.9, 0.1], 2.5)]
    msg = compare.compare_replay("s", far, rec)
    assert "1 of 2" in msg and "trial 4 (decision 1)" in msg
    assert "distance 0.6" in msg and "0.25" in msg
    # the named metadata must agree exactly, whatever the point
    restart = [_decision([0.1, 0.2], cpd_restarts=[3]), rec[1]]
    msg = compare.compare_replay("s", restart, rec)
    assert "trial 3" in msg and "'cpd_restarts'" in msg
    assert compare.replay_deviation(near, rec) == pytest.approx((0.9e-3, 0.0, 0.0))
    # the model must be the same for the acquisition values to say anything
    fit = {"fit.lengthscale": ["0.3", "0.5"], "sigma_multiplier": "2.0"}
    rec = [_decision([0.3, 0.4], 2.0, **fit)]
    same = {"fit.lengthscale": ["0.30000001", "0.5"], "sigma_multiplier": "2.0"}
    assert (
        compare.compare_replay("s", [_decision([0.9, 0.1], 2.01, **same)], rec) is None
    )
    moved = {"fit.lengthscale": ["0.31", "0.5"], "sigma_multiplier": "2.0"}
    msg = compare.compare_replay("s", [_decision([0.3, 0.4], 2.0, **moved)], rec)
    assert "model 'fit.lengthscale'" in msg and "0.0323" in msg


def test_reproductions_report_the_first_step_that_differs() -> None:
    def run(values: list[float]) -> dict:
        job = {"values": {"regret": [values, [0.0] * len(values)]}, "final": "1.0"}
        return {"cpd_c": None, "jobs": {"p|a": job}}

    rec = run([1.0, 2.0, 3.0])
    assert compare.compare_reproduction("r", run([1.0, 2.0, 3.0]), rec) is None
    msg = compare.compare_reproduction("r", run([1.0, 2.0000000000000004, 3.5]), rec)
    assert "step 1" in msg and "'regret'" in msg and "2.0000000000000004" in msg
    assert compare.compare_reproduction(
        "r", run([1.0, -0.0, 3.0]), run([1.0, 0.0, 3.0])
    )
    nan = run([1.0, math.nan, 3.0])
    assert compare.compare_reproduction("r", nan, nan) is None


def test_another_cpu_familys_record_is_compared_by_its_final_regrets() -> None:
    def run(final: str, steps: int = 3, c: str | None = None) -> dict:
        job = {"values": {"regret": [[1.0] * steps, [0.0] * steps]}, "final": final}
        return {"cpd_c": c, "jobs": {"p|a": job}}

    rec = run("20.0")
    assert compare.compare_near("r", run("21.9"), rec) is None  # within 10 %
    assert "beyond 10%" in compare.compare_near("r", run("22.5"), rec)
    assert "steps" in compare.compare_near("r", run("20.0", steps=4), rec)
    assert "calibrated c" in compare.compare_near("r", run("20.0", c="1.5"), rec)
    assert (
        compare.compare_near("r", run("20.0", c="1.55"), run("20.0", c="1.5")) is None
    )
    # a small regret is compared on the scale of 1
    assert compare.compare_near("r", run("0.05"), run("0.12")) is None


def test_each_cpu_familys_record_has_its_machine() -> None:
    found = golden.records()
    assert "Intel(R) Xeon(R) Processor" in found
    for cpu, path in found.items():
        assert path.exists(), (cpu, path)
    path, machine = golden.record_files("AMD EPYC 9R14")
    assert path.name == "reproductions-amd-epyc-9r14.json"
    assert machine.name == "machine-amd-epyc-9r14.json"
