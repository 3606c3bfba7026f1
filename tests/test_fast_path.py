"""BoTorch's batched L-BFGS-B (its "fast path") is what every recorded benchmark and
golden trace of this project ran on. BoTorch 0.18.1 turns it off for scipy 1.18 and
later (``botorch.generation.gen.SCIPY_UNTESTED_VERSION``), logging why only at
DEBUG, and then maximizes the sum of all starts' acquisitions with one
``scipy.optimize.minimize``: slower, and other decisions. This test fails, naming
BoTorch's reasons, wherever the decision's optimizer would not take the fast path."""

from __future__ import annotations

import torch
from botorch.acquisition import UpperConfidenceBound
from botorch.generation import gen
from botorch.models import SingleTaskGP

from botorch_bandits.core.domain import Domain
from botorch_bandits.core.optimize import optimize


def test_the_decision_optimizer_takes_botorchs_fast_path(monkeypatch):
    seen: list[list[str]] = []
    original = gen.get_reasons_against_fast_path

    def recorded(*args, **kwargs):
        reasons = original(*args, **kwargs)
        seen.append(list(reasons))
        return reasons

    monkeypatch.setattr(gen, "get_reasons_against_fast_path", recorded)
    torch.manual_seed(0)
    X = torch.rand(12, 2, dtype=torch.double)
    gp = SingleTaskGP(X, (X - 0.3).square().sum(-1, keepdim=True)).eval()
    unit = torch.rand(64, 2, dtype=torch.double)
    acqf = UpperConfidenceBound(gp, beta=4.0)
    with torch.no_grad():
        scores = acqf(unit.unsqueeze(-2))
    meta: dict = {}
    optimize(acqf, scores, Domain.box(unit), None, meta, seed=0)
    assert seen, "the optimizer never reached BoTorch's gen_candidates_scipy"
    reasons = sorted({r for call in seen for r in call})
    assert reasons == [], (
        "BoTorch's batched L-BFGS-B is off in this environment "
        f"(get_reasons_against_fast_path: {reasons}); every recorded figure used it. "
        "With BoTorch 0.18.x install scipy < 1.18 (pyproject.toml pins it)."
    )
    assert meta["optimizer"] == "L-BFGS-B"
