"""BoTorch input constructors: the kwargs build each class, pending points are ignored,
hallucinated or censored as the algorithm says, the round is recomputed from the data,
and Ax's modular BoTorch generator drives one of them with trials in flight."""

from __future__ import annotations

import inspect
import math

import pytest
import torch
from botorch.acquisition.input_constructors import (
    ACQF_INPUT_CONSTRUCTOR_REGISTRY,
    get_acqf_input_constructor,
)
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.exceptions.errors import UnsupportedError
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize, Standardize
from botorch.utils.datasets import SupervisedDataset
from botorch.utils.testing import BotorchTestCase

import botorch_bandits
from botorch_bandits.acquisition import (
    GPUCB,
    GPUCBSDF,
    IGPUCB,
    GPThompsonSampling,
    GPThompsonSamplingSDF,
)
from botorch_bandits.acquisition import input_constructors as ic
from botorch_bandits.delays import FeedbackLedger, sdf_beta
from botorch_bandits.models import fixed_gp
from botorch_bandits.test_functions.problems import make_kernel

LAM = 0.01
CLASSES = [GPUCB, IGPUCB, GPThompsonSampling, GPUCBSDF, GPThompsonSamplingSDF]


def _kernel(dtype):
    return make_kernel("matern52", 0.3, dtype)


def _data(dtype, n=8, p=3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=gen, dtype=dtype)
    Y = torch.sin(3 * X.sum(-1, keepdim=True))
    Xp = torch.rand(p, 2, generator=gen, dtype=dtype)
    Xs = torch.rand(25, 2, generator=gen, dtype=dtype)  # test points / candidates
    return X, Y, Xp, Xs


def _dataset(X, Y):
    return SupervisedDataset(X, Y, feature_names=["x1", "x2"], outcome_names=["f"])


def _build(cls, model, X, Y, Xp, **options):
    kwargs = get_acqf_input_constructor(cls)(
        model=model, training_data=_dataset(X, Y), X_pending=Xp, **options
    )
    return kwargs, cls(**kwargs)


def _tol(dtype):
    return dict(atol=1e-4, rtol=1e-4) if dtype == torch.float else {}


# the hand-built reference options of each class (schedule in theory form)
OPTIONS = {
    GPUCB: dict(num_arms=100),
    IGPUCB: dict(B=1.0, R=0.1),
    GPThompsonSampling: dict(B=1.0, R=0.1),
    GPUCBSDF: dict(B_f=1.0, R=0.1, B_y=1.0),
    GPThompsonSamplingSDF: dict(B_f=1.0, R=0.1, B_y=1.0),
}


class TestRegistry(BotorchTestCase):
    def test_every_exported_acquisition_has_a_constructor_taking_X_pending(self):
        for name in botorch_bandits.ACQUISITION_FUNCTIONS:
            cls = getattr(botorch_bandits, name)
            self.assertIn(cls, ACQF_INPUT_CONSTRUCTOR_REGISTRY, name)
        for cls in CLASSES:  # the registry holds the wrapper; check the function
            fn = {
                GPUCB: ic.construct_inputs_gp_ucb,
                IGPUCB: ic.construct_inputs_igp_ucb,
                GPThompsonSampling: ic.construct_inputs_gp_ts,
                GPUCBSDF: ic.construct_inputs_gp_ucb_sdf,
                GPThompsonSamplingSDF: ic.construct_inputs_gp_ts_sdf,
            }[cls]
            params = inspect.signature(fn).parameters
            for arg in ("model", "training_data", "X_pending", "posterior_transform"):
                self.assertIn(arg, params, f"{fn.__name__} lacks {arg}")
            self.assertNotIn("t", params)  # the round is never an option

    def test_unknown_option_is_rejected(self):
        X, Y, Xp, _ = _data(torch.double)
        model = fixed_gp(X, Y, _kernel(torch.double), LAM)
        with pytest.raises(TypeError, match="t"):
            _build(IGPUCB, model, X, Y, Xp, B=1.0, R=0.1, t=5)


class TestIgnore(BotorchTestCase):
    """GP-UCB / IGP-UCB / asy-TS: pending points left out, t = n + 1."""

    def test_values_equal_the_class_on_the_model(self):
        for dtype in (torch.float, torch.double):
            X, Y, Xp, Xs = _data(dtype)
            model = fixed_gp(X, Y, _kernel(dtype), LAM)
            for cls in (GPUCB, IGPUCB, GPThompsonSampling):
                opts = dict(OPTIONS[cls])
                if cls is GPThompsonSampling:
                    opts.update(candidates=Xs, seed=3)
                kwargs, acqf = _build(cls, model, X, Y, Xp, **opts)
                self.assertIs(kwargs["model"], model)
                self.assertEqual(acqf.t, X.shape[0] + 1)
                if cls is GPThompsonSampling:
                    # the draw's seed counts every issued query: n + p + 1
                    opts["seed"] = 3 * 1_000_003 + X.shape[0] + Xp.shape[0] + 1
                    self.assertEqual(kwargs["seed"], opts["seed"])
                ref = cls(model, **opts)
                self.assertAllClose(acqf(Xs.unsqueeze(-2)), ref(Xs.unsqueeze(-2)))

    def test_second_call_with_more_data_recomputes_t_and_beta(self):
        X, Y, Xp, _ = _data(torch.double, n=10)
        k = _kernel(torch.double)
        first = _build(
            IGPUCB, fixed_gp(X[:6], Y[:6], k, LAM), X[:6], Y[:6], Xp, B=1.0, R=0.1
        )[1]
        second = _build(IGPUCB, fixed_gp(X, Y, k, LAM), X, Y, Xp, B=1.0, R=0.1)[1]
        self.assertEqual((first.t, second.t), (7, 11))
        self.assertGreater(second.beta_t, first.beta_t)  # gamma_{t-1} grows
        ref = IGPUCB(fixed_gp(X, Y, k, LAM), B=1.0, R=0.1)
        self.assertAlmostEqual(second.beta_t, ref.beta_t, places=12)
        gp_ucb = [
            _build(
                GPUCB, fixed_gp(X[:n], Y[:n], k, LAM), X[:n], Y[:n], None, num_arms=50
            )[1]
            for n in (6, 10)
        ]
        expected = [2 * math.log(50 * t**2 * math.pi**2 / 0.6) for t in (7, 11)]
        self.assertAllClose(
            torch.tensor([a.beta_t for a in gp_ucb]), torch.tensor(expected)
        )


class TestHallucinate(BotorchTestCase):
    """GP-BUCB / GP-BTS: the model is conditioned on the pending points at its own
    posterior mean; t = n + p + 1."""

    def test_model_equals_a_gp_on_data_plus_fantasies(self):
        for dtype in (torch.float, torch.double):
            X, Y, Xp, Xs = _data(dtype)
            k = _kernel(dtype)
            model = fixed_gp(X, Y, k, LAM)
            with torch.no_grad():
                fantasy = model.posterior(Xp).mean  # completed-only mean
            ref_model = fixed_gp(torch.cat([X, Xp]), torch.cat([Y, fantasy]), k, LAM)
            for cls in (GPUCB, IGPUCB, GPThompsonSampling):
                opts = dict(OPTIONS[cls])
                if cls is GPThompsonSampling:
                    opts.update(candidates=Xs, seed=5)
                kwargs, acqf = _build(
                    cls, model, X, Y, Xp, pending="hallucinate", **opts
                )
                hal = kwargs["model"]
                self.assertIsNot(hal, model)
                with torch.no_grad():
                    got, want, base = (m.posterior(Xs) for m in (hal, ref_model, model))
                self.assertAllClose(got.mean, want.mean, **_tol(dtype))
                self.assertAllClose(got.variance, want.variance, **_tol(dtype))
                # the mean is that of the completed-only model (Verma et al. §4)
                self.assertAllClose(got.mean, base.mean, **_tol(dtype))
                self.assertTrue(bool((got.variance <= base.variance + 1e-6).all()))
                self.assertEqual(acqf.t, X.shape[0] + Xp.shape[0] + 1)
                if cls is GPThompsonSampling:
                    opts["seed"] = kwargs["seed"]
                ref = cls(ref_model, **opts)
                self.assertEqual(ref.t, acqf.t)
                self.assertAllClose(
                    acqf(Xs.unsqueeze(-2)), ref(Xs.unsqueeze(-2)), **_tol(dtype)
                )
                if cls is IGPUCB:
                    self.assertAlmostEqual(acqf.beta_t, ref.beta_t, places=4)
            # the original model is left untouched
            self.assertEqual(model.train_inputs[0].shape[-2], X.shape[0])

    def test_transformed_single_task_gp(self):
        """A SingleTaskGP with input and outcome transforms (Ax's default kind)."""
        X, Y, Xp, Xs = _data(torch.double)
        scale = 10.0  # raw inputs on [0, 10]
        model = SingleTaskGP(
            scale * X,
            Y,
            input_transform=Normalize(2),
            outcome_transform=Standardize(1),
        ).eval()
        kwargs, acqf = _build(
            IGPUCB, model, scale * X, Y, scale * Xp, pending="hallucinate", B=1.0, R=0.1
        )
        hal = kwargs["model"]
        with torch.no_grad():
            got, base = hal.posterior(scale * Xs), model.posterior(scale * Xs)
            at_pending = (
                hal.posterior(scale * Xp).variance,
                model.posterior(scale * Xp).variance,
            )
        self.assertAllClose(got.mean, base.mean, atol=1e-6, rtol=1e-6)
        self.assertTrue(bool((at_pending[0] < at_pending[1]).all()))
        self.assertEqual(acqf.t, X.shape[0] + Xp.shape[0] + 1)
        self.assertTrue(math.isfinite(float(acqf.beta_t)))

    def test_batched_model(self):
        X, Y, Xp, Xs = _data(torch.double)
        Xb, Yb = X.expand(3, *X.shape), torch.stack([Y, 2 * Y, -Y])
        model = fixed_gp(Xb, Yb, _kernel(torch.double), LAM)
        kwargs, acqf = _build(
            IGPUCB, model, Xb, Yb, Xp, pending="hallucinate", B=1.0, R=0.1
        )
        self.assertEqual(acqf.t, 12)
        self.assertEqual(acqf(Xs.view(25, 1, 1, 2)).shape, torch.Size([25, 3]))
        # every batch (seed) is conditioned on the pending points at its own mean
        with torch.no_grad():
            fantasy = model.posterior(Xp).mean  # 3 x p x 1
        Xr = torch.cat([Xb, Xp.expand(3, *Xp.shape)], dim=-2)
        ref = fixed_gp(Xr, torch.cat([Yb, fantasy], -2), _kernel(torch.double), LAM)
        with torch.no_grad():
            got, want = kwargs["model"].posterior(Xs), ref.posterior(Xs)
        self.assertAllClose(got.mean, want.mean)
        self.assertAllClose(got.variance, want.variance)
        # censoring a batched model: recent is m x batch x d
        kwargs, ucb = _build(GPUCBSDF, model, Xb, Yb, Xp, window=2, beta=1.0)
        self.assertEqual(kwargs["recent"].shape, torch.Size([2, 3, 2]))
        self.assertEqual(ucb(Xs.view(25, 1, 1, 2)).shape, torch.Size([25, 3]))


class TestCensor(BotorchTestCase):
    """GP-UCB-SDF / GP-TS-SDF: pending points in the model at y_min, nu_t over the
    last m issued queries, t = n + p + 1."""

    def test_model_recent_and_values(self):
        for dtype in (torch.float, torch.double):
            X, Y, Xp, Xs = _data(dtype)
            k = _kernel(dtype)
            model = fixed_gp(X, Y, k, LAM)
            y_min, m = -1.5, 4
            Yc = torch.full((Xp.shape[0], 1), y_min, dtype=dtype)
            ref_model = fixed_gp(torch.cat([X, Xp]), torch.cat([Y, Yc]), k, LAM)
            recent = torch.cat([X, Xp])[
                -m:
            ]  # the last m issued: 1 observed + 3 pending
            for cls in (GPUCBSDF, GPThompsonSamplingSDF):
                opts = dict(OPTIONS[cls])
                if cls is GPThompsonSamplingSDF:
                    opts.update(candidates=Xs, seed=7)
                kwargs, acqf = _build(
                    cls, model, X, Y, Xp, y_min=y_min, window=m, **opts
                )
                self.assertAllClose(kwargs["recent"], recent)
                with torch.no_grad():
                    got, want = kwargs["model"].posterior(Xs), ref_model.posterior(Xs)
                self.assertAllClose(got.mean, want.mean, **_tol(dtype))
                self.assertAllClose(got.variance, want.variance, **_tol(dtype))
                self.assertEqual(acqf.t, X.shape[0] + Xp.shape[0] + 1)
                if cls is GPThompsonSamplingSDF:
                    self.assertEqual(kwargs["seed"], 7 * 1_000_003 + 12)
                    opts["seed"] = kwargs["seed"]
                ref = cls(ref_model, recent, **opts)
                self.assertAllClose(
                    acqf(Xs.unsqueeze(-2)), ref(Xs.unsqueeze(-2)), **_tol(dtype)
                )
            # nu_t by hand: B_y * sum of sigma_{t-1} at the recent queries + beta_t
            with torch.no_grad():
                sig = ref_model.posterior(recent.unsqueeze(-2)).variance.sqrt()
            gamma = ref.gamma(ref.t - 1, ref_model)
            nu = float(sig.sum()) + sdf_beta(gamma, 1.0, 0.1, 1.0, 0.1)
            ucb = _build(
                GPUCBSDF, model, X, Y, Xp, y_min=y_min, window=m, **OPTIONS[GPUCBSDF]
            )[1]
            self.assertAlmostEqual(float(ucb.nu_t), nu, places=3)

    def test_window_variants_and_explicit_recent(self):
        X, Y, Xp, _ = _data(torch.double)
        model = fixed_gp(X, Y, _kernel(torch.double), LAM)
        opts = dict(beta=1.0, B_y=1.0)
        allq = _build(GPUCBSDF, model, X, Y, Xp, **opts)[0]["recent"]
        self.assertAllClose(allq, torch.cat([X, Xp]))  # window None: m = infinity
        none = _build(GPUCBSDF, model, X, Y, Xp, window=0, **opts)[1]
        self.assertEqual(none.nu_t, 1.0)  # no recent queries: nu_t = beta
        mine = Xp[:1]
        given = _build(GPUCBSDF, model, X, Y, Xp, recent=mine, **opts)[0]["recent"]
        self.assertAllClose(given, mine)

    def test_in_model_from_a_ledger(self):
        """The caller's model already holds every issued query with its censored
        target (FeedbackLedger): nothing is added, recent = last m rows of the data."""
        X, Y, Xp, Xs = _data(torch.double)
        ledger = FeedbackLedger(window=3, y_min=-1.0)
        points = torch.cat([X, Xp])
        for i, x in enumerate(points):
            ledger.issue(x.tolist())
            if i < X.shape[0]:
                ledger.receive(i, float(Y[i]), at=i + 2)
        now = points.shape[0] + 1
        Yc = ledger.censored_targets(now).unsqueeze(-1)
        self.assertEqual(Yc[-3:].flatten().tolist(), [-1.0] * 3)
        model = fixed_gp(points, Yc, _kernel(torch.double), LAM)
        kwargs, acqf = _build(
            GPUCBSDF, model, points, Yc, Xp, pending="in_model", window=3, beta=1.0
        )
        self.assertIs(kwargs["model"], model)
        self.assertAllClose(kwargs["recent"], Xp)
        self.assertEqual(acqf.t, now)
        # the same decision as the constructor's own censoring
        cons = _build(
            GPUCBSDF,
            fixed_gp(X, Y, _kernel(torch.double), LAM),
            X,
            Y,
            Xp,
            y_min=-1.0,
            window=3,
            beta=1.0,
        )[1]
        self.assertAllClose(acqf(Xs.unsqueeze(-2)), cons(Xs.unsqueeze(-2)))

    def test_second_call_with_more_data_recomputes(self):
        X, Y, Xp, _ = _data(torch.double, n=10)
        k = _kernel(torch.double)
        a = _build(
            GPUCBSDF,
            fixed_gp(X[:6], Y[:6], k, LAM),
            X[:6],
            Y[:6],
            Xp,
            window=2,
            **OPTIONS[GPUCBSDF],
        )[1]
        b = _build(
            GPUCBSDF,
            fixed_gp(X, Y, k, LAM),
            X,
            Y,
            Xp[:1],
            window=2,
            **OPTIONS[GPUCBSDF],
        )[1]
        self.assertEqual((a.t, b.t), (10, 12))
        self.assertNotAlmostEqual(float(a.nu_t), float(b.nu_t), places=6)


class TestThompsonDetails(BotorchTestCase):
    def test_seed_per_decision(self):
        X, Y, Xp, Xs = _data(torch.double)
        model = fixed_gp(X, Y, _kernel(torch.double), LAM)
        opts = dict(B=1.0, R=0.1, candidates=Xs, seed=0)
        a = _build(GPThompsonSampling, model, X, Y, Xp[:1], **opts)[1]
        b = _build(GPThompsonSampling, model, X, Y, Xp[:2], **opts)[1]
        c = _build(GPThompsonSampling, model, X, Y, Xp[:2], **opts)[1]
        va, vb, vc = (f(Xs.unsqueeze(-2)) for f in (a, b, c))
        self.assertFalse(torch.allclose(va, vb))  # a new decision, a new draw
        self.assertAllClose(vb, vc)  # a replay makes the same draw

    def test_pathwise_objective_sign(self):
        X, Y, Xp, Xs = _data(torch.double)
        model = fixed_gp(X, Y, _kernel(torch.double), LAM)
        neg = ScalarizedPosteriorTransform(
            weights=torch.tensor([-1.0], dtype=torch.double)
        )
        for cls in (GPThompsonSampling, GPThompsonSamplingSDF):
            opts = dict(OPTIONS[cls], num_features=64, posterior_transform=neg)
            kwargs = _build(cls, model, X, Y, Xp, **opts)[0]
            self.assertIsNone(kwargs["posterior_transform"])
            self.assertFalse(kwargs["maximize"])
            # exact sampler: the transform is kept
            kwargs = _build(cls, model, X, Y, Xp, candidates=Xs, **opts)[0]
            self.assertIs(kwargs["posterior_transform"], neg)
            self.assertTrue(kwargs["maximize"])
        two = ScalarizedPosteriorTransform(
            weights=torch.tensor([2.0], dtype=torch.double)
        )
        with pytest.raises(ValueError, match="posterior_transform="):
            _build(
                GPThompsonSampling,
                model,
                X,
                Y,
                Xp,
                B=1.0,
                R=0.1,
                posterior_transform=two,
            )


class TestBadOptions(BotorchTestCase):
    def test_named_errors(self):
        X, Y, Xp, _ = _data(torch.double)
        model = fixed_gp(X, Y, _kernel(torch.double), LAM)
        sdf = dict(beta=1.0)
        cases = [
            (IGPUCB, dict(B=1.0, R=0.1, pending="drop"), "pending='drop'"),
            (IGPUCB, dict(B=1.0, R=0.1, pending="censor"), "pending='censor'"),
            (GPUCBSDF, dict(sdf, pending="hallucinate"), "pending='hallucinate'"),
            (GPUCBSDF, dict(sdf, window=-1), "window=-1"),
            (GPUCBSDF, dict(sdf, window=2.5), "window=2.5"),
            (GPUCBSDF, dict(sdf, y_min=float("nan")), "y_min=nan"),
            (GPUCBSDF, dict(sdf, window=2, recent=Xp), "window=2"),
            (GPThompsonSampling, dict(B=1.0, R=0.1, seed="x"), "seed='x'"),
        ]
        for cls, opts, match in cases:
            with pytest.raises(ValueError, match=match):
                _build(cls, model, X, Y, Xp, **opts)
        with pytest.raises(ValueError, match="X_pending"):
            _build(IGPUCB, model, X, Y, Xp[:, :1], B=1.0, R=0.1)
        with pytest.raises(ValueError, match="training_data"):
            _build(IGPUCB, model, X[:5], Y[:5], Xp, B=1.0, R=0.1)
        # the classes' own options are validated when the kwargs build the class
        kwargs = get_acqf_input_constructor(IGPUCB)(model=model, B=1.0)
        with pytest.raises(ValueError, match="R=None"):
            IGPUCB(**kwargs)

    def test_multi_output_model_is_hallucinated_per_output(self):
        """Every output is hallucinated at its own mean; the objective still needs a
        posterior transform (BoTorch's rule for multi-output models)."""
        X, Y, Xp, _ = _data(torch.double)
        model = SingleTaskGP(X, torch.cat([Y, -Y], -1)).eval()
        transform = ScalarizedPosteriorTransform(torch.tensor([1.0, 0.5]).double())
        kwargs = get_acqf_input_constructor(IGPUCB)(
            model=model,
            X_pending=Xp,
            pending="hallucinate",
            B=1.0,
            R=0.1,
            posterior_transform=transform,
        )
        acqf = IGPUCB(**kwargs)
        assert acqf.t == X.shape[0] + Xp.shape[0] + 1
        with pytest.raises(UnsupportedError, match="posterior transform"):
            IGPUCB(
                **get_acqf_input_constructor(IGPUCB)(
                    model=model, X_pending=Xp, pending="hallucinate", B=1.0, R=0.1
                )
            )


def test_ax_modular_botorch_generator_with_pending_trials(monkeypatch) -> None:
    """Ax's BOTORCH_MODULAR generator with botorch_acqf_class=IGPUCB (GP-BUCB style):
    X_pending reaches the constructor and the model it builds holds the pending
    points (t = n + p + 1); no Sobol fallback."""
    pytest.importorskip("ax")
    from ax import Client, RangeParameterConfig
    from ax.adapter.registry import Generators
    from ax.generation_strategy.generation_node import GenerationNode
    from ax.generation_strategy.generation_strategy import GenerationStrategy
    from ax.generation_strategy.generator_spec import GeneratorSpec
    from ax.generation_strategy.transition_criterion import MinTrials

    calls = []
    original = ACQF_INPUT_CONSTRUCTOR_REGISTRY[IGPUCB]

    def spy(**kwargs):
        out = original(**kwargs)
        calls.append((kwargs.get("X_pending"), kwargs["training_data"], IGPUCB(**out)))
        return out

    monkeypatch.setitem(ACQF_INPUT_CONSTRUCTOR_REGISTRY, IGPUCB, spy)
    client = Client(random_seed=0)
    client.configure_experiment(
        name="input_constructors",
        parameters=[
            RangeParameterConfig(name=n, bounds=(0.0, 1.0), parameter_type="float")
            for n in ("x1", "x2")
        ],
    )
    client.configure_optimization(objective="f")
    sobol = GenerationNode(
        name="Sobol",
        generator_specs=[
            GeneratorSpec(generator_enum=Generators.SOBOL, generator_kwargs={"seed": 0})
        ],
        transition_criteria=[MinTrials(threshold=3, transition_to="IGP-UCB")],
    )
    bo = GenerationNode(
        name="IGP-UCB",
        generator_specs=[
            GeneratorSpec(
                generator_enum=Generators.BOTORCH_MODULAR,
                generator_kwargs={
                    "botorch_acqf_class": IGPUCB,
                    "botorch_acqf_options": {
                        "B": 1.0,
                        "R": 0.1,
                        "pending": "hallucinate",
                    },
                },
            )
        ],
    )
    client.set_generation_strategy(GenerationStrategy(name="ic", nodes=[sobol, bo]))

    def f(p):
        return math.sin(3 * p["x1"]) * math.cos(2 * p["x2"]) + 0.5 * p["x1"]

    for i, p in client.get_next_trials(max_trials=3).items():
        client.complete_trial(trial_index=i, raw_data={"f": f(p)})
    made = client.get_next_trials(max_trials=2)  # the second sees the first pending
    assert len(made) == 2
    (p0, _, a0), (p1, data1, a1) = calls
    assert p0 is None and a0.t == 4
    assert p1 is not None and p1.shape[0] == 1 and data1.X.shape[0] == 3
    assert a1.t == 5 and a1.model.train_inputs[0].shape[-2] == 4
    keys = [
        t.generator_runs[0]._generator_key for t in client._experiment.trials.values()
    ]
    assert keys == ["Sobol"] * 3 + ["BoTorch"] * 2
