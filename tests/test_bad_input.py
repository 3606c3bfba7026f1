"""Bad input over the public API (issue 14): every case must raise the expected
exception type, up front, with a message that names the argument. A case that
returns (a silent wrong result) or raises a deep library error fails.

``python tests/test_bad_input.py`` prints the count by outcome (clear error /
unclear error / silent result) for the code on the path."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

import botorch_bandits as bb
from botorch_bandits.models import make_kernel

D = torch.double


def _data(n: int = 5, d: int = 1):
    X = torch.linspace(0.1, 0.9, n, dtype=D).reshape(-1, 1).repeat(1, d)
    Y = torch.sin(6 * X[:, :1])
    return X, Y


def _kernel():
    return make_kernel("matern52", 0.2)


def _model(d: int = 1):
    X, Y = _data(d=d)
    return bb.fixed_gp(X, Y, _kernel(), 0.01)


def _arms(n: int = 8, d: int = 1):
    return torch.linspace(0, 1, n, dtype=D).reshape(-1, 1).repeat(1, d)


def _engine(**kw):
    return bb.FiniteArmGP(_arms(), _kernel(), **{"noise": 0.01, **kw})


def _detector(**kw):
    args = dict(kernel=_kernel(), domain=bb.finite_domain(_arms()), c=1.0)
    args.update(kw)
    return bb.ChangePointDetector(**args)


INF, NAN = math.inf, math.nan

#: (id, call, exception type(s), the argument the message must name)
CASES: list[tuple[str, Callable[[], object], type | tuple, str]] = [
    # ------------------------------------------------------------ schedules (beta)
    ("beta_finite-t0", lambda: bb.gp_ucb_beta_finite(0, 10, 0.1), ValueError, "t"),
    ("beta_finite-t1.5", lambda: bb.gp_ucb_beta_finite(1.5, 10, 0.1), ValueError, "t"),
    (
        "beta_finite-arms0",
        lambda: bb.gp_ucb_beta_finite(1, 0, 0.1),
        ValueError,
        "num_arms",
    ),
    (
        "beta_finite-delta0",
        lambda: bb.gp_ucb_beta_finite(1, 10, 0.0),
        ValueError,
        "delta",
    ),
    (
        "beta_finite-delta1",
        lambda: bb.gp_ucb_beta_finite(1, 10, 1.0),
        ValueError,
        "delta",
    ),
    (
        "beta_finite-deltanan",
        lambda: bb.gp_ucb_beta_finite(1, 10, NAN),
        ValueError,
        "delta",
    ),
    (
        "beta_compact-dim0",
        lambda: bb.gp_ucb_beta_compact(1, 0, 1, 1, 1, 0.1),
        ValueError,
        "dim",
    ),
    (
        "beta_compact-a-inf",
        lambda: bb.gp_ucb_beta_compact(1, 1, INF, 1, 1, 0.1),
        ValueError,
        "a",
    ),
    (
        "beta_compact-b0",
        lambda: bb.gp_ucb_beta_compact(1, 1, 1, 0, 1, 0.1),
        ValueError,
        "b",
    ),
    (
        "beta_compact-r-neg",
        lambda: bb.gp_ucb_beta_compact(1, 1, 1, 1, -1, 0.1),
        ValueError,
        "r",
    ),
    ("beta_rkhs-B-inf", lambda: bb.gp_ucb_beta_rkhs(1, INF, 1.0, 0.1), ValueError, "B"),
    (
        "beta_rkhs-B-neg",
        lambda: bb.gp_ucb_beta_rkhs(1, -1.0, 1.0, 0.1),
        ValueError,
        "B",
    ),
    (
        "beta_rkhs-gamma-nan",
        lambda: bb.gp_ucb_beta_rkhs(1, 1.0, NAN, 0.1),
        ValueError,
        "gamma_t",
    ),
    (
        "beta_rkhs-gamma-inf",
        lambda: bb.gp_ucb_beta_rkhs(1, 1.0, INF, 0.1),
        ValueError,
        "gamma_t",
    ),
    ("igp_beta-B-inf", lambda: bb.igp_ucb_beta(1.0, INF, 0.1, 0.1), ValueError, "B"),
    ("igp_beta-R-inf", lambda: bb.igp_ucb_beta(1.0, 1.0, INF, 0.1), ValueError, "R"),
    ("igp_beta-R-neg", lambda: bb.igp_ucb_beta(1.0, 1.0, -0.1, 0.1), ValueError, "R"),
    (
        "igp_beta-gamma-neg",
        lambda: bb.igp_ucb_beta(-1.0, 1.0, 0.1, 0.1),
        ValueError,
        "gamma_prev",
    ),
    (
        "igp_beta-delta2",
        lambda: bb.igp_ucb_beta(1.0, 1.0, 0.1, 2.0),
        ValueError,
        "delta",
    ),
    (
        "igp_beta-B-tensor-inf",
        lambda: bb.igp_ucb_beta(1.0, torch.tensor([1.0, INF]), 0.1, 0.1),
        ValueError,
        "B",
    ),
    ("ts_scale-B-nan", lambda: bb.gp_ts_scale(1.0, NAN, 0.1, 0.1), ValueError, "B"),
    (
        "ts_scale-delta-str",
        lambda: bb.gp_ts_scale(1.0, 1.0, 0.1, "0.1"),
        ValueError,
        "delta",
    ),
    (
        "sdf_beta-B_y-inf",
        lambda: bb.sdf_beta(1.0, 1.0, 0.1, INF, 0.1),
        ValueError,
        "B_y",
    ),
    (
        "sdf_beta-B_f-neg",
        lambda: bb.sdf_beta(1.0, -1.0, 0.1, 1.0, 0.1),
        ValueError,
        "B_f",
    ),
    (
        "sdf_inflation-B_y-neg",
        lambda: bb.sdf_inflation(torch.ones(3, dtype=D), -1.0),
        ValueError,
        "B_y",
    ),
    (
        "sdf_inflation-sigmas-nan",
        lambda: bb.sdf_inflation(torch.tensor([NAN], dtype=D), 1.0),
        ValueError,
        "recent_sigmas",
    ),
    (
        "sigma_mult-neg-sqrt",
        lambda: bb.sigma_multiplier(-4.0, "sqrt"),
        ValueError,
        "beta",
    ),
    (
        "sigma_mult-neg-linear",
        lambda: bb.sigma_multiplier(-4.0, "linear"),
        ValueError,
        "beta",
    ),
    ("sigma_mult-unit", lambda: bb.sigma_multiplier(1.0, "square"), ValueError, "unit"),
    ("sigma_mult-inf", lambda: bb.sigma_multiplier(INF, "sqrt"), ValueError, "beta"),
    ("to_botorch-neg", lambda: bb.to_botorch_beta(-1.0, "linear"), ValueError, "beta"),
    ("to_botorch-unit", lambda: bb.to_botorch_beta(1.0, None), ValueError, "unit"),
    (
        "growth-kernel",
        lambda: bb.gamma_growth_order("cosine", 10, 1),
        ValueError,
        "kernel",
    ),
    ("growth-T0", lambda: bb.gamma_growth_order("rbf", 0, 1), ValueError, "T"),
    ("growth-dim0", lambda: bb.gamma_growth_order("rbf", 10, 0), ValueError, "dim"),
    (
        "growth-nu0",
        lambda: bb.gamma_growth_order("matern", 10, 1, nu=0.0),
        ValueError,
        "nu",
    ),
    ("constant_gamma-neg", lambda: bb.ConstantGamma(-1.0), ValueError, "gamma"),
    ("constant_gamma-inf", lambda: bb.ConstantGamma(INF), ValueError, "gamma"),
    ("callable_gamma-int", lambda: bb.CallableGamma(3), (TypeError, ValueError), "fn"),
    (
        "gamma_order-scale0",
        lambda: bb.GammaOrder("rbf", 1, scale=0.0),
        ValueError,
        "scale",
    ),
    ("gamma_order-dim0", lambda: bb.GammaOrder("rbf", 0), ValueError, "dim"),
    (
        "greedy_gamma-noise0",
        lambda: bb.GreedyGamma(torch.eye(3, dtype=D), 0.0, 5),
        ValueError,
        "noise",
    ),
    (
        "greedy_gamma-horizon0",
        lambda: bb.GreedyGamma(torch.eye(3, dtype=D), 0.1, 0),
        ValueError,
        "horizon",
    ),
    (
        "greedy_gamma-K-nonsquare",
        lambda: bb.GreedyGamma(torch.ones(3, 2, dtype=D), 0.1, 2),
        ValueError,
        "K",
    ),
    (
        "resolve_gamma-str",
        lambda: bb.resolve_gamma("greedy"),
        (TypeError, ValueError),
        "gamma",
    ),
    (
        "info_gain-noise0",
        lambda: bb.information_gain(torch.eye(3, dtype=D), 0.0),
        ValueError,
        "noise",
    ),
    (
        "info_gain-noise-inf",
        lambda: bb.information_gain(torch.eye(3, dtype=D), INF),
        ValueError,
        "noise",
    ),
    (
        "info_gain-K-1d",
        lambda: bb.information_gain(torch.ones(3, dtype=D), 0.1),
        ValueError,
        "K",
    ),
    (
        "info_gain-K-nonsquare",
        lambda: bb.information_gain(torch.ones(3, 2, dtype=D), 0.1),
        ValueError,
        "K",
    ),
    (
        "info_path-noise-neg",
        lambda: bb.information_gain_path(torch.eye(3, dtype=D), -0.1),
        ValueError,
        "noise",
    ),
    (
        "incr_gain-noise0",
        lambda: bb.incremental_information_gain(torch.ones(3, dtype=D), 0.0),
        ValueError,
        "noise",
    ),
    (
        "incr_gain-var-neg",
        lambda: bb.incremental_information_gain(torch.tensor([-1.0], dtype=D), 0.1),
        ValueError,
        "variances",
    ),
    (
        "greedy_ig-horizon0",
        lambda: bb.greedy_information_gain(torch.eye(3, dtype=D), 0.1, 0),
        ValueError,
        "horizon",
    ),
    (
        "greedy_ig-noise-nan",
        lambda: bb.greedy_information_gain(torch.eye(3, dtype=D), NAN, 2),
        ValueError,
        "noise",
    ),
    # ------------------------------------------------------------ models
    (
        "fixed_gp-noise0",
        lambda: bb.fixed_gp(*_data(), _kernel(), 0.0),
        ValueError,
        "noise",
    ),
    (
        "fixed_gp-noise-inf",
        lambda: bb.fixed_gp(*_data(), _kernel(), INF),
        ValueError,
        "noise",
    ),
    (
        "fixed_gp-noise-nan",
        lambda: bb.fixed_gp(*_data(), _kernel(), NAN),
        ValueError,
        "noise",
    ),
    (
        "fixed_gp-noise-below-floor",
        lambda: bb.fixed_gp(*_data(), _kernel(), 1e-10),
        ValueError,
        "noise",
    ),
    (
        "fixed_gp-Y-shape",
        lambda: bb.fixed_gp(_data()[0], torch.ones(4, 1, dtype=D), _kernel(), 0.01),
        ValueError,
        "train_Y",
    ),
    (
        "fixed_gp-X-1d",
        lambda: bb.fixed_gp(torch.ones(5, dtype=D), _data()[1], _kernel(), 0.01),
        ValueError,
        "train_X",
    ),
    (
        "fixed_gp-X-nan",
        lambda: bb.fixed_gp(
            torch.full((5, 1), NAN, dtype=D), _data()[1], _kernel(), 0.01
        ),
        ValueError,
        "train_X",
    ),
    (
        "fixed_gp-Y-inf",
        lambda: bb.fixed_gp(
            _data()[0], torch.full((5, 1), INF, dtype=D), _kernel(), 0.01
        ),
        ValueError,
        "train_Y",
    ),
    (
        "fixed_gp-dtype-mix",
        lambda: bb.fixed_gp(_data()[0].float(), _data()[1], _kernel(), 0.01),
        ValueError,
        "dtype",
    ),
    (
        "fixed_gp-kernel-str",
        lambda: bb.fixed_gp(*_data(), "rbf", 0.01),
        (TypeError, ValueError),
        "kernel",
    ),
    ("make_kernel-name", lambda: make_kernel("cosine", 0.2), ValueError, "kernel"),
    ("make_kernel-ls0", lambda: make_kernel("rbf", 0.0), ValueError, "lengthscale"),
    ("make_kernel-ls-inf", lambda: make_kernel("rbf", INF), ValueError, "lengthscale"),
    ("engine-noise0", lambda: _engine(noise=0.0), ValueError, "noise"),
    ("engine-noise-inf", lambda: _engine(noise=INF), ValueError, "noise"),
    ("engine-noise-nan", lambda: _engine(noise=NAN), ValueError, "noise"),
    (
        "engine-arms-1d",
        lambda: bb.FiniteArmGP(torch.ones(4, dtype=D), _kernel(), 0.01),
        ValueError,
        "arms",
    ),
    (
        "engine-arms-nan",
        lambda: bb.FiniteArmGP(torch.full((4, 1), NAN, dtype=D), _kernel(), 0.01),
        ValueError,
        "arms",
    ),
    ("engine-seeds0", lambda: _engine(num_seeds=0), ValueError, "num_seeds"),
    (
        "engine-refactor0",
        lambda: _engine(refactor_every=0),
        ValueError,
        "refactor_every",
    ),
    (
        "engine-K-shape",
        lambda: bb.FiniteArmGP(_arms(), torch.eye(3, dtype=D), 0.01),
        ValueError,
        "kernel",
    ),
    (
        "engine-observe-float-arm",
        lambda: _engine().observe(2.7, 0.5),
        (TypeError, ValueError),
        "arm_idx",
    ),
    (
        "engine-observe-arm-range",
        lambda: _engine().observe(99, 0.5),
        (IndexError, ValueError),
        "arm_idx",
    ),
    ("engine-observe-y-nan", lambda: _engine().observe(1, NAN), ValueError, "y"),
    ("engine-observe-y-inf", lambda: _engine().observe(1, INF), ValueError, "y"),
    # ------------------------------------------------------------ acquisitions
    ("igpucb-B-inf", lambda: bb.IGPUCB(_model(), B=INF, R=0.1), ValueError, "B"),
    ("igpucb-R-inf", lambda: bb.IGPUCB(_model(), B=1.0, R=INF), ValueError, "R"),
    ("igpucb-R-neg", lambda: bb.IGPUCB(_model(), B=1.0, R=-0.1), ValueError, "R"),
    (
        "igpucb-delta0",
        lambda: bb.IGPUCB(_model(), B=1.0, R=0.1, delta=0.0),
        ValueError,
        "delta",
    ),
    ("igpucb-beta-inf", lambda: bb.IGPUCB(_model(), beta=INF), ValueError, "beta"),
    ("igpucb-beta-neg", lambda: bb.IGPUCB(_model(), beta=-1.0), ValueError, "beta"),
    ("igpucb-t0", lambda: bb.IGPUCB(_model(), B=1.0, R=0.1, t=0), ValueError, "t"),
    (
        "igpucb-gamma-neg",
        lambda: bb.IGPUCB(_model(), B=1.0, R=0.1, gamma=-1.0),
        ValueError,
        "gamma",
    ),
    (
        "gpucb-schedule",
        lambda: bb.GPUCB(_model(), schedule="magic"),
        ValueError,
        "schedule",
    ),
    (
        "gpucb-num_arms0",
        lambda: bb.GPUCB(_model(), schedule="finite", num_arms=0),
        ValueError,
        "num_arms",
    ),
    (
        "gpucb-beta_scale0",
        lambda: bb.GPUCB(_model(), num_arms=5, beta_scale=0.0),
        ValueError,
        "beta_scale",
    ),
    (
        "gpucb-beta_scale-inf",
        lambda: bb.GPUCB(_model(), num_arms=5, beta_scale=INF),
        ValueError,
        "beta_scale",
    ),
    ("gpucb-beta-inf", lambda: bb.GPUCB(_model(), beta=INF), ValueError, "beta"),
    (
        "gpucb-rkhs-B_squared-inf",
        lambda: bb.GPUCB(_model(), schedule="rkhs", B_squared=INF, gamma=1.0),
        ValueError,
        "B_squared",
    ),
    ("gpts-v-inf", lambda: bb.GPThompsonSampling(_model(), v=INF), ValueError, "v"),
    ("gpts-v-neg", lambda: bb.GPThompsonSampling(_model(), v=-1.0), ValueError, "v"),
    (
        "gpts-B-inf",
        lambda: bb.GPThompsonSampling(_model(), B=INF, R=0.1),
        ValueError,
        "B",
    ),
    (
        "gpts-sampler",
        lambda: bb.GPThompsonSampling(_model(), v=1.0, sampler="magic"),
        ValueError,
        "sampler",
    ),
    (
        "gpts-features0",
        lambda: bb.GPThompsonSampling(_model(), v=1.0, num_features=0),
        ValueError,
        "num_features",
    ),
    (
        "gpts-candidates-int",
        lambda: bb.GPThompsonSampling(
            _model(), v=1.0, candidates=torch.arange(4).reshape(-1, 1)
        ),
        (TypeError, ValueError),
        "candidates",
    ),
    (
        "gpts-candidates-dim",
        lambda: bb.GPThompsonSampling(
            _model(), v=1.0, candidates=torch.ones(4, 3, dtype=D)
        ),
        ValueError,
        "candidates",
    ),
    (
        "gpts-seed-neg",
        lambda: bb.GPThompsonSampling(_model(), v=1.0, seed=-1),
        ValueError,
        "seed",
    ),
    (
        "ucbsdf-B_y-inf",
        lambda: bb.GPUCBSDF(_model(), _arms(3), beta=1.0, B_y=INF),
        ValueError,
        "B_y",
    ),
    (
        "ucbsdf-beta-inf",
        lambda: bb.GPUCBSDF(_model(), _arms(3), beta=INF),
        ValueError,
        "beta",
    ),
    (
        "ucbsdf-B_f-inf",
        lambda: bb.GPUCBSDF(_model(), _arms(3), B_f=INF, R=0.1),
        ValueError,
        "B_f",
    ),
    (
        "ucbsdf-recent-dim",
        lambda: bb.GPUCBSDF(_model(), torch.ones(3, 4, dtype=D), beta=1.0),
        ValueError,
        "recent",
    ),
    (
        "tssdf-B_y-neg",
        lambda: bb.GPThompsonSamplingSDF(_model(), _arms(3), beta=1.0, B_y=-1.0),
        ValueError,
        "B_y",
    ),
    # ------------------------------------------------------------ delays
    ("poisson-mean0", lambda: bb.PoissonDelay(0.0), ValueError, "mean"),
    ("poisson-mean-inf", lambda: bb.PoissonDelay(INF), ValueError, "mean"),
    ("fixed-delay-neg", lambda: bb.FixedDelay(-1.0), ValueError, "delay"),
    ("fixed-delay-nan", lambda: bb.FixedDelay(NAN), ValueError, "delay"),
    ("geometric-p0", lambda: bb.GeometricDelay(0.0), ValueError, "p"),
    ("geometric-p2", lambda: bb.GeometricDelay(2.0), ValueError, "p"),
    ("exponential-mean-neg", lambda: bb.ExponentialDelay(-2.0), ValueError, "mean"),
    ("batch-size0", lambda: bb.BatchDelay(0), ValueError, "batch_size"),
    ("batch-size-float", lambda: bb.BatchDelay(2.5), ValueError, "batch_size"),
    (
        "input-delay-fn",
        lambda: bb.InputDependentDelay(3.0),
        (TypeError, ValueError),
        "mean_fn",
    ),
    (
        "input-delay-family",
        lambda: bb.InputDependentDelay(lambda x: x.sum(-1), family="normal"),
        ValueError,
        "family",
    ),
    ("ledger-window-neg", lambda: bb.FeedbackLedger(-1), ValueError, "window"),
    ("ledger-clock", lambda: bb.FeedbackLedger(5, clock="wall"), ValueError, "clock"),
    ("ledger-y_min-nan", lambda: bb.FeedbackLedger(5, y_min=NAN), ValueError, "y_min"),
    ("ledger-y_min-inf", lambda: bb.FeedbackLedger(5, y_min=-INF), ValueError, "y_min"),
    # ------------------------------------------------------------ change points
    ("cpd_beta-t0", lambda: bb.cpd_beta(0, 0.02, 100), ValueError, "t"),
    ("cpd_beta-D-neg", lambda: bb.cpd_beta(1, -0.02, 100), ValueError, "D"),
    ("cpd_noise-g-neg", lambda: bb.cpd_noise_variance(-1.0, 100), ValueError, "g"),
    (
        "cpd_noise-horizon0",
        lambda: bb.cpd_noise_variance(1.0, 0),
        ValueError,
        "horizon",
    ),
    ("cpd_reg-c0", lambda: bb.cpd_regularization(1, 0.0), ValueError, "c"),
    ("cpd_thr-n0", lambda: bb.cpd_threshold(0), ValueError, "n"),
    ("cpd_thr-alpha-neg", lambda: bb.cpd_threshold(1, alpha=-1.0), ValueError, "alpha"),
    (
        "cpd_thr_theory-F-inf",
        lambda: bb.cpd_threshold_theory(1, 1.0, INF, 1.0, 100),
        ValueError,
        "F",
    ),
    ("ucb_reg-sigma2-0", lambda: bb.ucb_regularization(1, 0.0), ValueError, "sigma2"),
    (
        "finite_domain-1d",
        lambda: bb.finite_domain(torch.ones(4, dtype=D)),
        ValueError,
        "points",
    ),
    (
        "finite_domain-volume0",
        lambda: bb.finite_domain(_arms(), volume=0.0),
        ValueError,
        "volume",
    ),
    (
        "finite_domain-nan",
        lambda: bb.finite_domain(torch.full((4, 1), NAN, dtype=D)),
        ValueError,
        "points",
    ),
    (
        "box_domain-bounds",
        lambda: bb.box_domain(torch.tensor([[1.0], [0.0]], dtype=D)),
        ValueError,
        "bounds",
    ),
    (
        "box_domain-points0",
        lambda: bb.box_domain(torch.tensor([[0.0], [1.0]], dtype=D), num_points=0),
        ValueError,
        "num_points",
    ),
    ("detector-c0", lambda: _detector(c=0.0), ValueError, "c"),
    ("detector-c-inf", lambda: _detector(c=INF), ValueError, "c"),
    ("detector-d0", lambda: _detector(d=0), ValueError, "d"),
    ("detector-alpha0", lambda: _detector(alpha=0.0), ValueError, "alpha"),
    ("gpucbcpd-xi-neg", lambda: bb.GPUCBCPD(_detector(), xi=-1.0), ValueError, "xi"),
    (
        "gpucbcpd-record-y-nan",
        lambda: bb.GPUCBCPD(_detector()).record(_arms(1)[0], NAN),
        ValueError,
        "y",
    ),
    # issue 31: options the other options would leave unused, or that disable
    # their algorithm, are refused when the options are resolved
    (
        "options-censor-window0",
        lambda: _opts(pending="censor", window=0, y_min=0.0),
        ValueError,
        "window",
    ),
    ("options-window-hallucinate", lambda: _opts(window=4), ValueError, "window"),
    (
        "options-window-seconds-ignore",
        lambda: _opts(pending="ignore", window_seconds=2.0),
        ValueError,
        "window_seconds",
    ),
    (
        "options-y_min-ignore",
        lambda: _opts(pending="ignore", y_min=-3.0),
        ValueError,
        "y_min",
    ),
    ("options-step-no-constraints", lambda: _opts(step=0.1), ValueError, "step"),
    ("options-xi-no-restarts", lambda: _opts(xi=1.0), ValueError, "xi"),
    ("options-xi0-restarts", lambda: _opts(restarts=True, xi=0.0), ValueError, "xi"),
    # issue 31, the rest of the list: detector options without restarts, the
    # constraints' without constraints, degenerate sizes, overflowing magnitudes,
    # the new options, NaN paths
    (
        "options-cpd_alpha-no-restarts",
        lambda: _opts(cpd_alpha=3.0),
        ValueError,
        "cpd_alpha",
    ),
    ("options-cpd_c-no-restarts", lambda: _opts(cpd_c=5.0), ValueError, "cpd_c"),
    (
        "options-cpd_detector-no-restarts",
        lambda: _opts(cpd_detector="paper"),
        ValueError,
        "cpd_detector",
    ),
    (
        "options-epoch_length-no-constraints",
        lambda: _opts(epoch_length=7),
        ValueError,
        "epoch_length",
    ),
    (
        "options-epoch_length-1e9",
        lambda: _opts(long_term_constraints=True, epoch_length=10**9),
        ValueError,
        "epoch_length",
    ),
    (
        "options-num_candidates-1e7",
        lambda: _opts(num_candidates=10**7),
        ValueError,
        "num_candidates",
    ),
    (
        "options-y_min-1e308",
        lambda: _opts(pending="censor", y_min=-1e308),
        ValueError,
        "y_min",
    ),
    ("options-beta-1e300", lambda: _opts(beta=1e300), ValueError, "beta"),
    ("options-seed-2**70", lambda: _opts(seed=2**70), ValueError, "seed"),
    ("options-sems-bad", lambda: _opts(sems="sometimes"), ValueError, "sems"),
    (
        "options-fit_out_of_design-str",
        lambda: _opts(fit_out_of_design="yes"),
        ValueError,
        "fit_out_of_design",
    ),
    (
        "penalty-exp-c-inf",
        lambda: bb.constraints.ExponentialPenalty(c=INF),
        ValueError,
        "c",
    ),
    (
        "composite-targets-nan",
        lambda: _composite(NAN),
        ValueError,
        "f_values",
    ),
    ("igpucb-X-nan", lambda: bb.IGPUCB(_model(), beta=1.0)(_nan_X()), ValueError, "X"),
    (
        "gpucb-X-nan",
        lambda: bb.GPUCB(_model(), num_arms=8)(_nan_X()),
        ValueError,
        "X",
    ),
    (
        "gpts-X-nan",
        lambda: bb.GPThompsonSampling(_model(), v=1.0, seed=0)(_nan_X()),
        ValueError,
        "X",
    ),
    (
        "gpucbsdf-X-nan",
        lambda: bb.GPUCBSDF(_model(), _arms(2), beta=1.0)(_nan_X()),
        ValueError,
        "X",
    ),
    (
        "gptssdf-X-nan",
        lambda: bb.GPThompsonSamplingSDF(_model(), _arms(2), beta=1.0)(_nan_X()),
        ValueError,
        "X",
    ),
    (
        "igpucb-X-wrong-width",
        lambda: bb.IGPUCB(_model(), beta=1.0)(torch.rand(3, 1, 2, dtype=D)),
        ValueError,
        "X",
    ),
    (
        "detector-scan-y-nan",
        lambda: _detector().scan(_arms(4), torch.tensor([0.1, NAN, 0.2, 0.3], dtype=D)),
        ValueError,
        "y",
    ),
    (
        "reproduce-seed-neg",
        lambda: _reproduce(seed=-1),
        ValueError,
        "seed",
    ),
    (
        "practical-model-list",
        lambda: bb.practical_acquisition(
            __import__("botorch.models").models.ModelListGP(_model(), _model())
        ),
        ValueError,
        "model",
    ),
    (
        "practical-multi-output",
        lambda: bb.practical_acquisition(
            __import__("botorch.models").models.SingleTaskGP(
                _data()[0], _data()[1].repeat(1, 2)
            )
        ),
        ValueError,
        "model",
    ),
    (
        "practical-meta-model",
        lambda: bb.practical_acquisition(_model().to("meta")),
        ValueError,
        "model",
    ),
    (
        "practical-gpucb-no-order",
        lambda: bb.practical_acquisition(
            bb.fixed_gp(
                *_data(), __import__("gpytorch").kernels.MaternKernel(nu=0.5), 0.01
            ),
            "GP-UCB",
        ),
        ValueError,
        "candidates",
    ),
    (
        "practical-gpucb-candidates-width",
        lambda: bb.practical_acquisition(_model(), "GP-UCB", candidates=_arms(4, 2)),
        ValueError,
        "candidates",
    ),
    (
        "gpucb-meta-model",
        lambda: bb.GPUCB(_model().to("meta"), num_arms=8),
        ValueError,
        "model",
    ),
    (
        "igpucb-meta-model",
        lambda: bb.IGPUCB(_model().to("meta"), beta=1.0),
        ValueError,
        "model",
    ),
    (
        "gpts-meta-model",
        lambda: bb.GPThompsonSampling(_model().to("meta"), v=1.0, seed=0),
        ValueError,
        "model",
    ),
    (
        "gpucbsdf-meta-model",
        lambda: bb.GPUCBSDF(_model().to("meta"), _arms(2), beta=1.0),
        ValueError,
        "model",
    ),
    (
        "gptssdf-meta-model",
        lambda: bb.GPThompsonSamplingSDF(_model().to("meta"), _arms(2), beta=1.0),
        ValueError,
        "model",
    ),
    (
        "gpucb-X-float64-on-float32",
        lambda: bb.GPUCB(_model().float(), num_arms=8)(torch.rand(3, 1, 1, dtype=D)),
        ValueError,
        "X",
    ),
    (
        "igpucb-X-float64-on-float32",
        lambda: bb.IGPUCB(_model().float(), beta=1.0)(torch.rand(3, 1, 1, dtype=D)),
        ValueError,
        "X",
    ),
    (
        "gpts-X-float64-on-float32",
        lambda: bb.GPThompsonSampling(_model().float(), v=1.0, seed=0)(
            torch.rand(3, 1, 1, dtype=D)
        ),
        ValueError,
        "X",
    ),
    (
        "gpucbsdf-X-float64-on-float32",
        lambda: bb.GPUCBSDF(_model().float(), _arms(2).float(), beta=1.0)(
            torch.rand(3, 1, 1, dtype=D)
        ),
        ValueError,
        "X",
    ),
    (
        "gptssdf-X-float64-on-float32",
        lambda: bb.GPThompsonSamplingSDF(_model().float(), _arms(2).float(), beta=1.0)(
            torch.rand(3, 1, 1, dtype=D)
        ),
        ValueError,
        "X",
    ),
    # ------------------------------------------------ Ax storage and strategy
    (
        "strategy-use-existing-str",
        lambda: _ax().bandit_generation_strategy(
            use_existing_trials_for_initialization="yes"
        ),
        ValueError,
        "use_existing_trials_for_initialization",
    ),
    (
        "load_client-read_only-str",
        lambda: _ax().load_client("e", "missing.db", read_only="yes"),
        ValueError,
        "read_only",
    ),
    (
        "writer_lock-path-int",
        lambda: _ax().writer_lock(3).__enter__(),
        ValueError,
        "path",
    ),
]


def _ax():
    """``botorch_bandits.ax`` (imported when a case runs: it needs the ax extra)."""
    import botorch_bandits.ax as ax

    return ax


def _nan_X():
    X = torch.rand(3, 1, 1, dtype=D)
    X[1, 0, 0] = NAN
    return X


def _composite(f):
    return bb.constraints.composite_targets(
        torch.tensor([1.0, f], dtype=D),
        torch.zeros(2, 1, dtype=D),
        torch.ones(1, dtype=D),
        "additive",
    )


def _reproduce(**kw):
    from bandit_experiments.reproduction.runner import reproduce

    return reproduce("chowdhury2017-fig1", smoke=True, out=None, **kw)


def _opts(**kwargs):
    from botorch_bandits.core import DecisionOptions

    return DecisionOptions.from_kwargs(**kwargs)


_IDS = [c[0] for c in CASES]
assert len(set(_IDS)) == len(_IDS), "duplicate case ids"


def classify(call, types, name) -> str:
    """'clear' (the expected type, naming the argument), 'unclear' (another
    exception, or a message without the name) or 'silent' (no exception)."""
    try:
        call()
    except Exception as err:
        message = str(err)
        named = f"`{name}`" in message or f"{name}=" in message
        return "clear" if isinstance(err, types) and named else "unclear"
    return "silent"


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_bad_input_is_named(case) -> None:
    _, call, types, name = case
    with pytest.raises(types) as info:
        call()
    message = str(info.value)
    assert f"`{name}`" in message or f"{name}=" in message, message


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 100


if __name__ == "__main__":  # the counts by outcome, for the note
    from collections import Counter

    outcomes = {c[0]: classify(c[1], c[2], c[3]) for c in CASES}
    print(len(CASES), "cases:", dict(Counter(outcomes.values())))
    for k, v in outcomes.items():
        if v != "clear":
            print(f"  {v:8s} {k}")


# ----------------------------------------------- a misspelling gets a suggestion
@pytest.mark.parametrize(
    ("kwargs", "error", "hint"),
    [
        ({"restart": True}, TypeError, "Did you mean 'restarts'?"),
        ({"trustregion": True}, TypeError, "Did you mean 'trust_region'?"),
        ({"algorithm": "IGP-UBC"}, ValueError, "Did you mean 'IGP-UCB'?"),
        ({"algorithm": "igp-ucb"}, ValueError, "Did you mean 'IGP-UCB'?"),
        ({"pending": "halucinate"}, ValueError, "Did you mean 'hallucinate'?"),
    ],
)
def test_a_misspelled_option_or_value_gets_the_closest_name(kwargs, error, hint):
    from botorch_bandits.core import DecisionOptions

    with pytest.raises(error) as caught:
        DecisionOptions.from_kwargs(**kwargs)
    assert hint in str(caught.value)


def test_no_suggestion_where_nothing_is_close():
    from botorch_bandits.core import DecisionOptions

    with pytest.raises(TypeError) as caught:
        DecisionOptions.from_kwargs(zzz=1)
    assert "Did you mean" not in str(caught.value) and "'zzz'" in str(caught.value)
    assert bb.validation.did_you_mean(3, ["a"]) == ""


def test_the_ax_strategy_suggests_too():
    pytest.importorskip("ax")
    from botorch_bandits.ax import bandit_generation_strategy

    with pytest.raises(TypeError, match="Did you mean 'restarts'"):
        bandit_generation_strategy(restart=True)
