"""The audit's smaller findings (issue 60), each a clear error naming the argument
or a documented warning instead of torch's message, a misleading hint or nothing:
``qLogNEI`` with ``delta`` at its default value, ``decision_table`` of something
that is no Client, ``num_inits`` for ``num_init``, ``PenalizedUCB`` on a model of
another dtype than ``X``, of mixed dtypes, or never fitted."""

from __future__ import annotations

import warnings

import pytest
import torch
from botorch.models import ModelListGP, SingleTaskGP

from botorch_bandits.acquisition import PenalizedUCB


def test_qlognei_refuses_delta_at_any_value() -> None:
    """The docs say ``beta=`` and ``delta=`` are refused with qLogNEI; before,
    ``delta=0.1`` (the default's value) was accepted and ignored."""
    pytest.importorskip("ax")
    from botorch_bandits.ax import bandit_generation_strategy

    for delta in (0.1, 0.05):
        with pytest.raises(ValueError, match=rf"delta={delta}.*qLogNEI"):
            bandit_generation_strategy(algorithm="qLogNEI", delta=delta)
    bandit_generation_strategy(algorithm="qLogNEI")  # nothing given: fine
    bandit_generation_strategy(algorithm="IGP-UCB", delta=0.1)


def test_decision_table_names_its_argument() -> None:
    """Before: an ``AttributeError`` about ``_experiment``."""
    pytest.importorskip("ax")
    from ax import Client

    from botorch_bandits.ax import decision_metadata, decision_table

    for reading in (decision_table, decision_metadata):
        with pytest.raises(ValueError, match=r"`source` must be an ax\.Client.*None"):
            reading(None)
        with pytest.raises(ValueError, match=r"`source`: the Client has no experiment"):
            reading(Client())


def test_a_misspelt_strategy_argument_suggests_the_strategy_s_own() -> None:
    """``num_inits=3`` suggested the node option ``num_candidates``; the strategy's
    own argument ``num_init`` is the closer one."""
    pytest.importorskip("ax")
    from botorch_bandits.ax import bandit_generation_strategy

    with pytest.raises(TypeError, match=r"\['num_inits'\].*Did you mean 'num_init'\?"):
        bandit_generation_strategy(num_inits=3)
    with pytest.raises(TypeError, match=r"Did you mean 'num_candidates'\?"):
        bandit_generation_strategy(num_candidate=64)


def _gp(dtype: torch.dtype) -> SingleTaskGP:
    g = torch.Generator().manual_seed(0)
    X = torch.rand(8, 2, generator=g).to(dtype)
    return SingleTaskGP(X, X.sum(-1, keepdim=True))


def test_penalized_ucb_names_a_dtype_mismatch() -> None:
    """A float32 model read at float64 points: before, torch's "expected m1 and m2
    to have the same dtype"; a model of mixed dtypes is refused at construction."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # BoTorch's advice to use double precision
        single = ModelListGP(_gp(torch.float), _gp(torch.float)).eval()
        mixed = ModelListGP(_gp(torch.double), _gp(torch.float)).eval()
    acqf = PenalizedUCB(single, beta=4.0, multipliers=1.0)
    X = torch.rand(3, 1, 2, dtype=torch.double)
    with pytest.raises(
        ValueError, match=r"`X` is torch\.float64.*model is torch\.float32"
    ):
        acqf(X)
    assert acqf(X.float()).shape == (3,)
    with pytest.raises(ValueError, match=r"`model` mixes dtypes"):
        PenalizedUCB(mixed, beta=4.0, multipliers=1.0)


def test_penalized_ucb_warns_of_a_model_never_fitted() -> None:
    """An unfitted ``ModelListGP`` (its GPs in training mode, as built) read with
    GPyTorch's initial hyperparameters without a word; now a warning names the
    outputs. A fitted (eval-mode) model gets none."""
    from botorch_bandits.acquisition import UnfittedModelWarning

    model = ModelListGP(_gp(torch.double), _gp(torch.double))
    with pytest.warns(
        UnfittedModelWarning, match=r"output\(s\) \[0, 1\].*never fitted"
    ):
        PenalizedUCB(model, beta=4.0, multipliers=1.0)
    model.models[0].eval()
    with pytest.warns(UnfittedModelWarning, match=r"output\(s\) \[1\]"):
        PenalizedUCB(model, beta=4.0, multipliers=1.0)
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnfittedModelWarning)
        PenalizedUCB(model, beta=4.0, multipliers=1.0)
