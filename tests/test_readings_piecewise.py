"""Avanesov's unstated settings as options: the log base of log T, the GP's sigma^2,
the measure of the detector's integral, and c chosen inside GP-UCB-CPD."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from bandit_experiments.reproduction import detector
from botorch_bandits.changepoint import (
    LOG_BASE_READINGS,
    ChangePointDetector,
    cpd_beta,
    cpd_noise_variance,
)
from botorch_bandits.test_functions import piecewise as PW


def test_log_base_reading_of_the_schedules() -> None:
    T = 2400
    assert cpd_beta(100, 0.02, T) == cpd_beta(100, 0.02, T, log_base=math.e)
    assert math.isclose(
        cpd_beta(100, 0.02, T, log_base=10), 0.02 * 100 ** (2 / 7) * math.log10(T) ** 4
    )
    assert math.isclose(
        cpd_noise_variance(0.05, T, log_base=10), 6 * 0.05**2 * math.log10(T)
    )
    # the natural reading is the default everywhere, bit for bit
    assert cpd_noise_variance(0.05, T) == 6 * 0.05**2 * math.log(T)
    assert LOG_BASE_READINGS == {"natural": math.e, "log10": 10.0}
    for bad in (1.0, 0.5, -10, math.nan, math.inf, True, "10"):
        with pytest.raises(ValueError, match="log_base"):
            cpd_beta(10, 0.02, T, log_base=bad)


def test_readings_change_what_they_say_and_nothing_else() -> None:
    p = PW.piecewise_gp_problem(num_pieces=2, horizon=60, num_seeds=3, seed=4)
    base = PW.simulate_piecewise(p, "GP-UCB-Oracle", seed=1)
    same = PW.simulate_piecewise(
        p, "GP-UCB-Oracle", seed=1, log_base=math.e, noise_variance="theorem"
    )
    assert torch.equal(base.arms, same.arms)
    # a smaller beta (log10) and a smaller sigma^2 each change the GP-UCB steps only
    for kwargs in ({"log_base": 10.0}, {"noise_variance": "noise"}):
        other = PW.simulate_piecewise(p, "GP-UCB-Oracle", seed=1, **kwargs)
        assert torch.equal(other.uniform, base.uniform)
        assert torch.equal(other.arms[base.uniform], base.arms[base.uniform])
        assert not torch.equal(other.arms[~base.uniform], base.arms[~base.uniform])
    assert PW.gp_noise_variance(p, "noise") == 0.05**2
    assert PW.gp_noise_variance(p, "theorem", 10.0) == cpd_noise_variance(
        0.05, 60, 10.0
    )
    with pytest.raises(ValueError, match="noise_variance"):
        PW.simulate_piecewise(p, "GP-UCB", noise_variance="fitted")
    with pytest.raises(ValueError, match="measure"):
        PW.simulate_piecewise(p, "GP-UCB-CPD", measure="sum")
    with pytest.raises(ValueError, match="log_base"):
        PW.simulate_piecewise(p, "GP-UCB", log_base=1)


def test_mean_measure_is_the_integral_over_the_volume() -> None:
    p = PW.piecewise_gp_problem(num_pieces=2, horizon=2, num_seeds=1, seed=0)
    volume, mean = PW.detector_domain(p, "volume"), PW.detector_domain(p, "mean")
    assert math.isclose(float(volume.weights.sum()), 5.0)
    assert math.isclose(float(mean.weights.sum()), 1.0)
    arms = torch.tensor([10, 200, 400, 600, 800, 990])
    y = torch.cat([p.values[0, 0, arms[:3]], p.values[1, 0, arms[3:]]])
    stats = []
    for dom in (volume, mean):
        det = ChangePointDetector(p.kernel, dom, c=1.0)
        stats.append(det.statistic(p.arms[arms], y))
    assert float(stats[0]) > 0
    assert math.isclose(float(stats[0]) / 5.0, float(stats[1]), rel_tol=1e-12)


def _row(c, changes, detected, false, delay):
    return detector.CalibrationRow(c, changes, detected, false, delay, 0.0, 0.0)


def test_pick_c_follows_the_stated_rule() -> None:
    rows = [
        _row(1.0, 100, 99, 900, 5.0),  # most detections, far too many false alarms
        _row(5.0, 100, 90, 5, 20.0),  # 0.05 per change: allowed, most detections
        _row(10.0, 100, 90, 0, 25.0),  # same detections, longer delay
        _row(20.0, 100, 40, 0, 60.0),
    ]
    assert detector.pick_c(rows) == 5.0
    rows[2] = _row(10.0, 100, 90, 0, 20.0)  # tie on delay too: the larger c
    assert detector.pick_c(rows) == 10.0
    assert detector.pick_c([_row(1.0, 10, 9, 9, 1.0), _row(2.0, 10, 8, 8, 1.0)]) == 2.0
    with pytest.raises(ValueError, match="rows"):
        detector.pick_c([])


def test_calibration_runs_gp_ucb_cpd_and_counts_its_restarts() -> None:
    rows = detector.calibrate_in_algorithm(
        (1.0, 40.0), num_pieces=2, horizon=80, num_seeds=3
    )
    assert [r.c for r in rows] == [1.0, 40.0]
    for r in rows:
        assert r.changes == 3  # one change per run
        assert 0 <= r.detected <= r.changes
    # the less regularized detector restarts at least as often
    assert (
        rows[0].detected + rows[0].false_alarms
        >= rows[1].detected + rows[1].false_alarms
    )
    direct = PW.simulate_piecewise(
        PW.piecewise_gp_problem(2, 80, num_seeds=3, seed=detector.CALIBRATION_SEED),
        "GP-UCB-CPD",
        c=1.0,
        seed=detector.CALIBRATION_SEED,
    )
    delays, _, false = direct.detection_delays()
    assert (rows[0].detected, rows[0].false_alarms) == (len(delays), false)


def test_the_suggested_tuning_cross_validates_c_and_puts_c_above_the_peaks(
    tmp_path,
) -> None:
    from bandit_experiments.reproduction.calibration import read_tuning, tune
    from bandit_experiments.reproduction.cpd_tuning import suggested_tuning

    t = suggested_tuning(draws=6, samples=12, c_values=(0.001, 0.1, 10.0))
    scores = dict(t.cv)
    assert t.c == min(scores, key=lambda c: (scores[c], -c))  # the smallest score
    assert len(t.peaks) == 6
    above = sum(p > t.C for p in t.peaks)
    assert above <= math.ceil(0.05 * 6)  # C is the 0.95 quantile of the peaks
    assert t.C == pytest.approx(float(np.quantile(t.peaks, 0.95)))
    # the table: written once, read back, reused while the sizes match
    first = tune({}, out=tmp_path, draws=4, samples=10)
    path = tmp_path / "avanesov-tuning-volume-m10.csv"
    again = read_tuning(path)
    assert again.c == first.c and again.C == pytest.approx(first.C)
    assert tune({}, out=tmp_path, draws=4, samples=10).C == pytest.approx(first.C)
    assert tune({}, out=tmp_path, draws=5, samples=10).draws == 5  # other sizes: again
