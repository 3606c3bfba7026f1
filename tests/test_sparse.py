"""The sparse model (issue 30): the Nystroem / DTC posterior that BKB uses. With every
point in the dictionary it is the exact GP's posterior; its leverage scores sum to the
effective dimension; with a dictionary drawn by them it stays close to the exact GP."""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from linear_operator.utils.warnings import NumericalWarning

from botorch_bandits.beta import information_gain
from botorch_bandits.core import DecisionOptions, Domain, History, TrialRecord, decide
from botorch_bandits.hyperparameters import Hyperparameters
from botorch_bandits.models import practical_gp
from botorch_bandits.models.sparse import (
    NystromGP,
    draw_dictionary,
    leverage_path,
    positive_definite,
    rbf,
    ridge_leverage,
)

D = 3
LENGTHSCALE = [0.3, 0.5, 0.4]
NOISE, MEAN = 1e-2, 0.2


def _data(n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, D, generator=g, dtype=torch.double)
    z = torch.sin(6 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * torch.randn(n, generator=g)
    return X, z.double()


def _exact(X, z):
    hyper = Hyperparameters(lengthscale=tuple(LENGTHSCALE), noise=NOISE, mean=MEAN)
    return practical_gp(X, z, hyper)


def test_with_every_point_in_the_dictionary_it_is_the_exact_gp() -> None:
    X, z = _data(60)
    sparse = NystromGP(X, z, LENGTHSCALE, NOISE, MEAN, torch.arange(60))
    exact = _exact(X, z)
    T = torch.rand(
        7, 1, D, dtype=torch.double, generator=torch.Generator().manual_seed(1)
    )
    a, b = sparse.posterior(T), exact.posterior(T)
    assert torch.allclose(a.mean, b.mean, atol=1e-6)
    assert torch.allclose(a.variance, b.variance, atol=1e-6)
    # a joint posterior of 7 points, and the observation noise
    J = T.reshape(1, 7, D)
    a, b = sparse.posterior(J), exact.posterior(J)
    assert torch.allclose(
        a.distribution.covariance_matrix, b.distribution.covariance_matrix, atol=1e-6
    )
    noisy = sparse.posterior(T, observation_noise=True).variance
    assert torch.allclose(noisy, sparse.posterior(T).variance + NOISE)
    # the information gain of the exact kernel
    K = rbf(X, X, torch.tensor([LENGTHSCALE], dtype=torch.double))
    assert math.isclose(
        float(sparse.information_gain_), float(information_gain(K, NOISE)), rel_tol=1e-8
    )


def test_with_the_theory_kernels_and_a_full_dictionary_it_is_the_exact_gp() -> None:
    """The theory mode's kernels: Matern-5/2 and RBF with one lengthscale and unit
    variance (the papers'), and a fitted output scale."""
    from gpytorch.kernels import ScaleKernel

    from botorch_bandits.models import fixed_gp
    from botorch_bandits.models.fixed import make_kernel

    X, z = _data(50)
    T = torch.rand(
        9, 1, D, dtype=torch.double, generator=torch.Generator().manual_seed(4)
    )
    for name, scale in (("matern52", 1.0), ("rbf", 1.0), ("matern52", 2.5)):
        kernel = make_kernel(name, 0.3)
        if scale != 1.0:
            kernel = ScaleKernel(kernel).to(torch.double)
            kernel.outputscale = scale
        exact = fixed_gp(X, z.reshape(-1, 1), kernel, NOISE)
        sparse = NystromGP(X, z, [0.3] * D, NOISE, 0.0, torch.arange(50), name, scale)
        a, b = sparse.posterior(T), exact.posterior(T)
        assert torch.allclose(a.mean, b.mean, atol=1e-6), name
        assert torch.allclose(a.variance, b.variance, atol=1e-6), name


def test_the_leverage_scores_sum_to_the_effective_dimension() -> None:
    X, z = _data(80)
    model = NystromGP(X, z, LENGTHSCALE, NOISE, MEAN, torch.arange(80))
    K = rbf(X, X, torch.tensor([LENGTHSCALE], dtype=torch.double))
    d_eff = torch.trace(
        K @ torch.linalg.inv(K + NOISE * torch.eye(80, dtype=torch.double))
    )
    tau = ridge_leverage(model, X)
    assert bool((tau >= 0).all()) and bool((tau <= 1 + 1e-9).all())
    assert math.isclose(float(tau.sum()), float(d_eff), rel_tol=1e-6)


def test_a_dictionary_drawn_by_leverage_keeps_the_posterior_close() -> None:
    """BKB's rule, q-bar = 4: each point with probability min(q tau_i, 1); the drawn
    dictionary is smaller than the data and the posterior stays close to the exact."""
    X, z = _data(400)
    full = NystromGP(X, z, LENGTHSCALE, NOISE, MEAN, torch.arange(400))
    tau = ridge_leverage(full, X)
    u = torch.rand(400, generator=torch.Generator().manual_seed(2), dtype=torch.double)
    dictionary = torch.nonzero(u < (4 * tau).clamp(max=1.0)).reshape(-1)
    assert 0 < dictionary.numel() < 400
    sparse = NystromGP(X, z, LENGTHSCALE, NOISE, MEAN, dictionary)
    T = torch.rand(
        200, 1, D, dtype=torch.double, generator=torch.Generator().manual_seed(3)
    )
    a, b = sparse.posterior(T), full.posterior(T)
    assert float((a.mean - b.mean).abs().max()) < 0.05
    ratio = a.variance / b.variance
    assert float(ratio.min()) > 0.5 and float(ratio.max()) < 2.0  # within BKB's factor


def test_the_scores_at_another_regularization_are_those_of_that_noise() -> None:
    X, z = _data(120)
    pilot = torch.arange(0, 120, 3)
    path = leverage_path(NystromGP(X, z, LENGTHSCALE, NOISE, MEAN, pilot), X)
    for lam in (NOISE, 0.3):
        other = NystromGP(X, z, LENGTHSCALE, lam, MEAN, pilot)
        assert torch.allclose(path(lam), ridge_leverage(other, X), atol=1e-8)


def test_the_cap_bounds_the_dictionary_of_a_near_noise_free_objective() -> None:
    """With a tiny noise nearly every point has a high score; the cap takes the
    scores at a larger regularization so that the expected size is the cap."""
    X, _ = _data(1500)
    free, lam0 = draw_dictionary(X, LENGTHSCALE, 1e-6, seed=4, size=None)
    capped, lam = draw_dictionary(X, LENGTHSCALE, 1e-6, seed=4, size=200)
    assert lam0 == 1e-6 and free.numel() > 600
    assert lam > 1e-6 and 150 <= capped.numel() <= 250  # binomial around 200
    again, lam2 = draw_dictionary(X, LENGTHSCALE, 1e-6, seed=4, size=200)
    assert torch.equal(again, capped) and lam2 == lam  # a function of the data
    # a cap that does not bind changes nothing
    loose, lam3 = draw_dictionary(X, LENGTHSCALE, 1e-6, seed=4, size=10**6)
    assert torch.equal(loose, free) and lam3 == lam0


def test_the_stream_of_uniforms_is_a_prefix() -> None:
    """Row i's uniform does not depend on how many rows there are."""
    import numpy as np

    a = np.random.default_rng([3, 31]).random(10)
    b = np.random.default_rng([3, 31]).random(1000)
    assert (a == b[:10]).all()


def _history(n: int, running: int = 0):
    from botorch_bandits.core import History, TrialRecord

    X, _ = _data(n + running, seed=5)
    trials = []
    for i, x in enumerate(X.tolist()):
        done = i < n
        f = -sum((v - 0.3) ** 2 for v in x) if done else None
        trials.append(
            TrialRecord(
                index=i,
                x=tuple(x),
                f=f,
                created=float(i),
                completed=i + 0.5 if done else None,
            )
        )
    return History(trials=tuple(trials))


def test_past_sparse_after_a_decision_uses_the_sparse_model() -> None:
    from botorch_bandits.core import DecisionOptions, Domain, decide

    domain = Domain.box(
        torch.quasirandom.SobolEngine(D, scramble=True, seed=0).draw(
            64, dtype=torch.double
        )
    )
    for algorithm in ("IGP-UCB", "GP-TS"):
        opts = DecisionOptions.from_kwargs(algorithm=algorithm, sparse_after=20)
        history = _history(40, running=2)  # two trials hallucinated
        a = decide(history, opts, domain)
        b = decide(history, opts, domain)
        assert a.x == b.x and a.metadata == b.metadata  # a function of the data
        sparse = a.metadata["sparse"]
        assert sparse["n"] == 42 and 0 < sparse["dictionary"] <= 42
        assert sparse["leverage_regularization"] > 0
        # drawn on the first rows by the completed trials (20, 22, 24, 26, 28, 30,
        # 33, 36, 39, 42: 39 of 40), not by all 42 (the hallucinated two)
        assert sparse["drawn_on"] == 39
        assert "subset" not in a.metadata["fit"]  # fitted on all 40 (under 1000)
        if algorithm == "GP-TS":
            assert sparse["gp_ts"] == "decision set" and a.index is not None
        exact = decide(
            history, DecisionOptions.from_kwargs(algorithm=algorithm), domain
        )
        assert "sparse" not in exact.metadata
    # the theory mode, with its fixed kernel, when asked
    for algorithm in ("IGP-UCB", "GP-TS"):
        opts = DecisionOptions.from_kwargs(
            algorithm=algorithm, mode="theory", sparse_after=20
        )
        a = decide(_history(40, running=2), opts, domain)
        seen = 42 if opts.pending == "hallucinate" else 40  # running: left out
        assert a.metadata["sparse"]["n"] == seen and a.index is not None
        plain = DecisionOptions.from_kwargs(algorithm=algorithm, mode="theory")
        assert "sparse" not in decide(_history(40), plain, domain).metadata
    below = decide(_history(15), DecisionOptions.from_kwargs(sparse_after=20), domain)
    assert "sparse" not in below.metadata and "subset" not in below.metadata["fit"]


def test_sparse_after_is_checked() -> None:
    import pytest

    from botorch_bandits.core import DecisionOptions

    assert DecisionOptions.from_kwargs().sparse_after == 1000  # the default
    assert DecisionOptions.from_kwargs(sparse_after="never").sparse_after is None
    assert DecisionOptions.from_kwargs(mode="theory").sparse_after is None
    assert (
        DecisionOptions.from_kwargs(mode="theory", sparse_after=50).sparse_size == 512
    )
    with pytest.raises(ValueError, match=r"sparse_after.*integer >= 1.*0"):
        DecisionOptions.from_kwargs(sparse_after=0)
    assert DecisionOptions.from_kwargs(sparse_after=50).sparse_size == 512
    assert (
        DecisionOptions.from_kwargs(sparse_after=50, sparse_size=64).sparse_size == 64
    )
    with pytest.raises(ValueError, match=r"sparse_size=64.*'never'.*never sparse"):
        DecisionOptions.from_kwargs(sparse_size=64, sparse_after="never")
    with pytest.raises(ValueError, match=r"sparse_size=64.*theory mode's default"):
        DecisionOptions.from_kwargs(sparse_size=64, mode="theory")
    with pytest.raises(ValueError, match=r"sparse_after.*'never'.*got.*'sometimes'"):
        DecisionOptions.from_kwargs(sparse_after="sometimes")
    with pytest.raises(ValueError, match=r"sparse_size.*integer >= 1.*0"):
        DecisionOptions.from_kwargs(sparse_after=50, sparse_size=0)


def test_the_threshold_survives_storage() -> None:
    """A stored node keeps its threshold: the default, a count, 'never', the theory
    mode's default; a practical node stored with no threshold (or None, as stored
    before 'never' was spelled out) keeps the exact GP it had."""
    from botorch_bandits.ax import BanditNode
    from botorch_bandits.ax.storage import bandit_node_from_json

    cases = (
        ({}, 1000),
        ({"sparse_after": "never"}, None),
        ({"sparse_after": 5}, 5),
        ({"mode": "theory"}, None),
        ({"mode": "theory", "sparse_after": 7}, 7),
    )
    for kwargs, expected in cases:
        node = BanditNode(**kwargs)
        again = bandit_node_from_json(**node.options())
        assert node.decision_options.sparse_after == expected, kwargs
        assert again.decision_options.sparse_after == expected, kwargs
        assert again.options() == node.options()
    saved = BanditNode().options()
    saved["sparse_after"], saved["sparse_size"] = None, None
    assert bandit_node_from_json(**saved).decision_options.sparse_after is None
    del saved["sparse_after"]
    assert bandit_node_from_json(**saved).decision_options.sparse_after is None


def test_a_dictionary_size_is_checked() -> None:
    import pytest

    X, _ = _data(20)
    with pytest.raises(ValueError, match=r"`size`.*integer >= 1.*size=0"):
        draw_dictionary(X, LENGTHSCALE, NOISE, seed=0, size=0)


def test_the_fit_subset_is_at_least_a_thousand_points() -> None:
    from botorch_bandits.core.fit import fit_subset

    assert fit_subset(900, 100, 0) is None  # under 1000: every point
    assert fit_subset(5000, None, 0) is None  # no sparse model: every point
    rows = fit_subset(1500, 100, 3)
    assert rows.numel() == 1000 and bool((rows[1:] > rows[:-1]).all())
    assert torch.equal(rows, fit_subset(1500, 100, 3))  # a function of (seed, n)
    assert fit_subset(3000, 2000, 3).numel() == 2000


def test_the_feature_cache_gives_the_model_it_would_be_without_it() -> None:
    """Blocks kept across decisions: a model on the same rows and more, on rows
    changed in the middle, or on fewer rows equals (bit for bit) the model built
    without the cache; another kernel or dictionary starts it again."""
    from botorch_bandits.models.sparse import BLOCK, KEEP, FeatureCache

    n = BLOCK * (KEEP + 5) + 17
    X, z = _data(n + 3 * BLOCK, seed=3)
    D0 = torch.arange(0, 200, 3)
    cache = FeatureCache()

    def same(rows: torch.Tensor, dictionary=D0, ls=LENGTHSCALE) -> None:
        a = NystromGP(
            rows, z[: rows.shape[0]], ls, NOISE, MEAN, dictionary, cache=cache
        )
        b = NystromGP(rows, z[: rows.shape[0]], ls, NOISE, MEAN, dictionary)
        assert torch.equal(a.chol, b.chol) and torch.equal(a.weights, b.weights)
        assert torch.equal(a.train_features, b.train_features)

    same(X[:n])
    assert len(cache.features) == n // BLOCK
    same(X[: n + 2 * BLOCK + 5])  # more rows: the new blocks only
    changed = X[: n + 2 * BLOCK].clone()
    changed[n - 10] = changed[n - 9]  # a change within the kept sums
    same(changed)
    early = X[:n].clone()
    early[3] = early[4]  # before them: every block again
    same(early)
    same(X[: BLOCK // 2], dictionary=torch.arange(0, 30, 3))  # less than a block
    same(X[:n], dictionary=torch.arange(1, 150, 4))
    same(X[:n], ls=[0.2, 0.5, 0.4])


def test_the_dictionary_is_drawn_again_as_the_rows_grow_by_a_tenth() -> None:
    from botorch_bandits.models.sparse import drawn_on

    assert [drawn_on(n, 10) for n in (5, 10, 11, 12, 13, 14)] == [5, 10, 11, 12, 13, 14]
    assert drawn_on(1000, 1000) == 1000 and drawn_on(1099, 1000) == 1000
    assert drawn_on(1100, 1000) == 1100 and drawn_on(1209, 1000) == 1100
    assert drawn_on(1210, 1000) == 1210
    assert drawn_on(10, 1) == 10  # from one row on, one at a time while below 10


def test_a_singular_covariance_gets_the_smallest_jitter_and_a_warning() -> None:
    """A rank-deficient covariance (a smooth kernel on more points than the
    dictionary: issue 62's qLogNEI with long-term constraints past sparse_after)
    gets the smallest jitter that factorizes it, on the singular matrix of a batch
    only; a positive definite one is returned as it is."""
    g = torch.Generator().manual_seed(0)
    A = torch.randn(40, 3, generator=g, dtype=torch.double)
    low = A @ A.T  # rank 3
    good = low + torch.eye(40, dtype=torch.double)
    assert positive_definite(good) is good
    with pytest.warns(NumericalWarning, match="jitter"):
        fixed = positive_definite(torch.stack([low, good]))
    assert torch.equal(fixed[1], good)
    jitter = (fixed[0] - low).diagonal()
    assert torch.allclose(jitter, jitter[0].expand(40)) and float(jitter[0]) > 0
    scale = float(low.diagonal().mean())
    assert float(jitter[0]) <= 1e-3 * scale * (1 + 1e-12)
    _, info = torch.linalg.cholesky_ex(fixed)
    assert not bool(info.any())
    # a tenth of the jitter found does not factorize it (the smallest of the ladder)
    if float(jitter[0]) > 1e-9 * scale * (1 + 1e-9):
        _, info = torch.linalg.cholesky_ex(low + 0.1 * jitter[0] * torch.eye(40))
        assert bool(info.any())


def test_qlognei_with_long_term_constraints_decides_past_sparse_after() -> None:
    """qLogNEI's baseline pruning samples each sparse GP's joint posterior at every
    completed trial; a constraint linear in the inputs made it singular and the
    decision raised (issue 62's growth table, at 1,000 trials)."""
    X = torch.quasirandom.SobolEngine(D, scramble=True, seed=1).draw(300).double()
    z = torch.sin(6 * X[:, 0]) + X[:, 1] ** 2
    trials = tuple(
        TrialRecord(
            index=i,
            x=tuple(x.tolist()),
            f=float(z[i]),
            g=(float(x[0]) - 0.5,),
            created=float(i),
            completed=i + 0.5,
        )
        for i, x in enumerate(X)
    )
    box = Domain.box(torch.quasirandom.SobolEngine(D, seed=0).draw(64).double())
    opts = DecisionOptions.from_kwargs(
        algorithm="qLogNEI",
        long_term_constraints=True,
        sparse_after=50,
        sparse_size=20,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        d = decide(History(trials=trials, num_constraints=1), opts, box)
    assert d.metadata.get("sparse") is not None
    assert all(0.0 <= v <= 1.0 for v in d.x)
