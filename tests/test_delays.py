"""Delayed, censored feedback (Verma, Dai & Low 2022): the ledger on hand traces."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_bandits.delays import FeedbackLedger, sdf_beta, sdf_inflation


def _iteration_trace() -> FeedbackLedger:
    ledger = FeedbackLedger(window=2, y_min=0.0)
    for x in range(4):  # queries 0..3 issued at steps 1..4, x = query index
        ledger.issue(x)
    ledger.receive(0, 0.5, at=2)  # d = 1
    ledger.receive(1, 0.7, at=5)  # d = 3 > m: late, never used
    ledger.receive(2, 0.9, at=5)  # d = 2 = m: used from step 5 on
    return ledger


def test_censored_targets_iteration_clock() -> None:
    ledger = _iteration_trace()
    assert ledger.censored_targets(3).tolist() == [0.5, 0.0]
    assert [q.id for q in ledger.pending(3)] == [1]
    assert ledger.censored_targets(4).tolist() == [0.5, 0.0, 0.0]
    assert [q.id for q in ledger.pending(4)] == [2]  # arrives at 5
    # q1: not arrived by step 4 = s + m, so any later arrival has d > m
    assert [q.id for q in ledger.expired(4)] == [1]
    assert ledger.censored_targets(5).tolist() == [0.5, 0.0, 0.9, 0.0]
    assert [q.id for q in ledger.expired(5)] == [1]
    assert [q.id for q in ledger.pending(5)] == [3]
    late = ledger.late()
    assert [q.id for q in late] == [1] and late[0].y == 0.7  # recorded, not lost
    assert [q.id for q in ledger.completed(5)] == [0, 2]  # the "ignore" view


def test_censored_targets_time_clock() -> None:
    ledger = FeedbackLedger(window=1.5, y_min=-1.0, clock="time")
    for t in (0.0, 0.4, 1.0):
        ledger.issue(x=t, at=t)
    ledger.receive(0, 2.0, at=1.2)  # d = 1.2
    ledger.receive(1, 3.0, at=2.5)  # d = 2.1 > 1.5: late
    assert ledger.censored_targets(1.3).tolist() == [2.0, -1.0, -1.0]
    assert [q.id for q in ledger.pending(1.3)] == [1, 2]
    assert ledger.censored_targets(3.0).tolist() == [2.0, -1.0, -1.0]
    assert [q.id for q in ledger.expired(3.0)] == [1, 2]
    assert [q.id for q in ledger.late()] == [1]


def test_hallucinated_view() -> None:
    ledger = _iteration_trace()
    seen = []

    def completed_mean(points):
        seen.append(list(points))
        return torch.tensor([10.0 * x for x in points], dtype=torch.double)

    assert ledger.hallucinated_targets(5, completed_mean).tolist() == [
        0.5,
        10.0,
        0.9,
        30.0,
    ]
    assert seen == [[1, 3]]  # only queries without usable feedback are hallucinated


def test_bad_input_is_named() -> None:
    ledger = _iteration_trace()
    with pytest.raises(ValueError, match="Negative delay"):
        ledger.receive(3, 0.1, at=3)
    with pytest.raises(ValueError, match="unknown query 9"):
        ledger.receive(9, 0.1, at=6)
    with pytest.raises(ValueError, match="Duplicate feedback for query 0"):
        ledger.receive(0, 0.2, at=6)
    with pytest.raises(ValueError, match="`y` must be finite"):
        ledger.receive(3, math.nan, at=6)
    with pytest.raises(ValueError, match="`window`"):
        FeedbackLedger(window=-1)
    with pytest.raises(ValueError, match="`clock`"):
        FeedbackLedger(window=1, clock="wall")
    timed = FeedbackLedger(window=1.0, clock="time")
    timed.issue(0, at=2.0)
    with pytest.raises(ValueError, match="must not decrease"):
        timed.issue(1, at=1.0)


def test_sdf_terms_by_hand() -> None:
    beta = sdf_beta(gamma_prev=2.0, B_f=1.0, R=0.1, B_y=1.0, delta=0.1)
    assert beta == pytest.approx(1.0 + 1.1 * math.sqrt(2.0 * (3.0 + math.log(20.0))))
    sig = torch.tensor([0.1, 0.2, 0.3], dtype=torch.double)
    assert float(sdf_inflation(sig, B_y=2.0)) == pytest.approx(1.2)
    with pytest.raises(ValueError, match="`B_y`"):
        sdf_inflation(sig, B_y=-1.0)
    with pytest.raises(ValueError, match="`delta`"):
        sdf_beta(1.0, 1.0, 0.1, 1.0, delta=2.0)


def test_gp_ucb_sdf_value_by_hand() -> None:
    from botorch_bandits.acquisition.sdf import GPUCBSDF, GPThompsonSamplingSDF
    from botorch_bandits.beta import information_gain
    from botorch_bandits.models import fixed_gp
    from botorch_bandits.test_functions.problems import make_kernel

    kernel = make_kernel("rbf", 0.2)
    X = torch.tensor([[0.1], [0.5], [0.52], [0.9]], dtype=torch.double)
    Y = torch.tensor([[0.3], [0.0], [0.0], [0.8]], dtype=torch.double)  # two censored
    model = fixed_gp(X, Y, kernel, 0.01)
    recent = X[1:3]  # the last m = 2 queries
    post = model.posterior(recent)
    sig_recent = post.variance.squeeze(-1).sqrt()
    with torch.no_grad():
        K = kernel(X).to_dense()
    gamma = float(information_gain(K, 0.01))  # observed, t - 1 = 4 points
    beta = 1.0 + (0.1 + 1.0) * math.sqrt(2.0 * (gamma + 1.0 + math.log(2.0 / 0.1)))
    nu = 1.0 * float(sig_recent.sum()) + beta
    acqf = GPUCBSDF(model, recent, B_f=1.0, R=0.1, B_y=1.0, delta=0.1)
    assert float(acqf.nu_t) == pytest.approx(nu)
    x = torch.tensor([[[0.3]]], dtype=torch.double)
    p = model.posterior(x)
    expected = float(p.mean) + nu * float(p.variance.sqrt())
    assert float(acqf(x)) == pytest.approx(expected)
    constant = GPUCBSDF(model, recent, B_y=2.0, beta=1.0)
    assert float(constant.nu_t) == pytest.approx(2.0 * float(sig_recent.sum()) + 1.0)
    ts = GPThompsonSamplingSDF(
        model, recent, B_f=1.0, R=0.1, B_y=1.0, delta=0.1, candidates=X, seed=0
    )
    assert float(ts.v_t) == pytest.approx(nu)
    with pytest.raises(ValueError, match="`recent`"):
        GPUCBSDF(model, torch.zeros(3, dtype=torch.double), beta=1.0)
    with pytest.raises(ValueError, match="either a constant `beta`"):
        GPUCBSDF(model, recent, B_f=1.0, R=0.1, beta=1.0)


def test_contextual_sdf_with_botorch_fixed_features() -> None:
    """§5: the context z_t is given; BoTorch's FixedFeatureAcquisitionFunction fixes
    it and GP-UCB-SDF is maximized over the action x only."""
    from botorch.acquisition.fixed_feature import FixedFeatureAcquisitionFunction
    from botorch.optim import optimize_acqf_discrete

    from botorch_bandits import GPUCBSDF, fixed_gp
    from botorch_bandits.test_functions.problems import make_kernel

    gen = torch.Generator().manual_seed(0)
    ZX = torch.rand(10, 2, generator=gen, dtype=torch.double)  # (context, action)
    Y = torch.sin(4 * ZX.sum(-1, keepdim=True)).clamp_min(0)
    model = fixed_gp(ZX, Y, make_kernel("rbf", 0.3), 0.01)
    acqf = GPUCBSDF(model, recent=ZX[-3:], beta=1.0)
    z_t = 0.25
    fixed = FixedFeatureAcquisitionFunction(acqf, d=2, columns=[0], values=[z_t])
    actions = torch.linspace(0, 1, 51, dtype=torch.double).unsqueeze(-1)
    x, val = optimize_acqf_discrete(fixed, q=1, choices=actions)
    full = torch.cat([torch.full_like(actions, z_t), actions], -1)
    direct = acqf(full.unsqueeze(-2))
    assert torch.isclose(val.squeeze(), direct.max())
    assert torch.equal(x, actions[direct.argmax()].unsqueeze(0))
