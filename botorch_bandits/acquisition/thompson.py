r"""GP-TS (Chowdhury & Gopalan 2017, Algorithm 2): :class:`GPThompsonSampling` values
one draw :math:`f_t \sim GP(\mu_{t-1}, v_t^2 k_{t-1})` per decision, exact on a finite
candidate set (``sampler="exact"``) or pathwise on a box (``sampler="pathwise"``,
:func:`draw_posterior_paths`: every path with its own random-feature frequencies).
Guide: docs/algorithms.md; sampler accuracy: ``botorch-bandits ts-variance``.

Reference:
    Chowdhury, Gopalan. On Kernelized Multi-armed Bandits. ICML 2017.
"""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any, Literal

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.acquisition.objective import PosteriorTransform
from botorch.exceptions.errors import UnsupportedError
from botorch.models.model import Model
from botorch.sampling.pathwise import (
    draw_kernel_feature_paths,
    draw_matheron_paths,
    gen_kernel_features,
)
from botorch.utils.transforms import t_batch_mode_transform
from linear_operator.utils.cholesky import psd_safe_cholesky
from linear_operator.utils.warnings import NumericalWarning
from torch import Size, Tensor

from botorch_bandits import beta as schedules
from botorch_bandits import validation
from botorch_bandits._matching import match_points
from botorch_bandits.acquisition._batch import (
    broadcast_over_model_batch,
    check_pending,
    is_ensemble_model,
    model_batch_shape,
)
from botorch_bandits.acquisition._common import (
    RoundScheduleMixin,
    check_input_dim,
    check_model_device,
    check_points,
    check_round,
    gamma_after,
    model_input_dim,
    scale_arguments,
    set_plain_attributes,
)
from botorch_bandits.seeding import DRAW, MEMBER, NOISE, derived_seed

Sampler = Literal["auto", "exact", "pathwise"]
# the Matheron noise of unseeded q-batch draws is made in blocks of this many
_NOISE_BLOCK = 16


def _fresh_feature_maps(
    kernel: Any, num_inputs: int, num_outputs: int, num_draws: int, **kwargs: Any
) -> Any:
    """A BoTorch kernel feature map whose frequencies have a leading
    ``num_draws`` dimension: one independent set of frequencies per path.

    BoTorch's generator is asked once for ``num_draws`` times as many frequencies
    (one call, so one quasi-random sequence) and they are split between the paths;
    the map's output scaling stays that of ``num_outputs`` features."""
    feature_map = gen_kernel_features(
        kernel, num_inputs=num_inputs, num_outputs=num_outputs
    )
    if num_draws == 1:
        return feature_map
    pool = gen_kernel_features(
        kernel, num_inputs=num_inputs, num_outputs=num_outputs * num_draws
    ).weight  # batch_shape x (num_draws * num_outputs / 2) x d
    batch_shape, d = pool.shape[:-2], pool.shape[-1]
    weight = pool.reshape(*batch_shape, num_draws, num_outputs // 2, d)
    # num_draws x batch_shape x num_outputs/2 x d
    feature_map.weight = weight.movedim(-3, 0)
    return feature_map


def _check_num_features(num_features: Any) -> None:
    if (
        isinstance(num_features, bool)
        or not isinstance(num_features, int)
        or (num_features < 2 or num_features % 2)
    ):
        raise ValueError(
            f"`num_features` must be an even integer >= 2, got num_features={num_features!r}."
        )


def _check_pathwise_kernel(model: Model) -> None:
    """The pathwise sampler needs BoTorch random features for the model's kernel."""
    kernel = getattr(model, "covar_module", None)
    if kernel is None:
        raise UnsupportedError(
            f"sampler='pathwise' needs an exact GP with a `covar_module`, got "
            f"{type(model).__name__}; pass `candidates` (sampler='exact')."
        )
    _check_pathwise_ensemble(model)
    d = model_input_dim(model) or 1
    # the probe draws random frequencies: fork the generators it may use (CPU and the
    # kernel's CUDA device) so that building the acquisition leaves them as they were
    param = next(iter(kernel.parameters()), None)
    devices = [param.device] if param is not None and param.is_cuda else []
    try:
        with torch.random.fork_rng(devices=devices):
            gen_kernel_features(kernel, num_inputs=d, num_outputs=2)
    except NotImplementedError as err:
        raise UnsupportedError(
            "sampler='pathwise' draws random Fourier features of the kernel, and "
            f"BoTorch has none for {type(kernel).__name__} (e.g. the categorical "
            "kernel of MixedSingleTaskGP; BoTorch's PathwiseThompsonSampling fails "
            "the same way). Pass `candidates` (sampler='exact') -- for mixed spaces "
            "the enumerated categorical values with a set of continuous points -- and "
            "optimize with optimize_acqf_discrete."
        ) from err


def _check_pathwise_ensemble(model: Model) -> None:
    """BoTorch's Matheron paths of an ensemble add the member dim to ``X`` themselves,
    which works for an ensemble over one training set (``SaasFullyBayesianSingleTaskGP``)
    and fails inside BoTorch when every member has its own copy of the training
    inputs (``EnsembleMapSaasSingleTaskGP``; a fully Bayesian model conditioned on
    pending points)."""
    if not is_ensemble_model(model):
        return
    inputs = getattr(model, "train_inputs", None)
    if inputs and isinstance(inputs[0], Tensor) and inputs[0].ndim > 2:
        raise UnsupportedError(
            "sampler='pathwise' cannot draw from this ensemble model: its members "
            f"hold batched training inputs (shape {tuple(inputs[0].shape)}), and "
            "BoTorch's Matheron paths fail to evaluate there (as they do for "
            "PathwiseThompsonSampling's own draw_matheron_paths). Pass `candidates` "
            "(sampler='exact') and optimize with optimize_acqf_discrete."
        )


def _resolve_sampler(
    sampler: Sampler,
    model: Model,
    candidates: Tensor | None,
    posterior_transform: PosteriorTransform | None,
    num_features: Any,
) -> str:
    """GP-TS's sampler (``"auto"``: ``"exact"`` with ``candidates``, else
    ``"pathwise"``), checked with what it needs: ``candidates`` for the exact draw;
    a single-output model, no ``posterior_transform``, a feature count and a
    supported kernel for the pathwise one."""
    if sampler not in ("auto", "exact", "pathwise"):
        raise ValueError(
            f"`sampler` must be 'auto', 'exact' or 'pathwise', got sampler={sampler!r}."
        )
    if sampler == "auto":
        sampler = "exact" if candidates is not None else "pathwise"
    if sampler == "exact":
        if candidates is None:
            raise ValueError("sampler='exact' needs `candidates` (an N x d tensor).")
        validation.check_tensor("candidates", candidates, min_ndim=2)
        check_input_dim("candidates", candidates, model)
        if candidates.ndim < 2 or candidates.shape[-2] < 1:
            raise ValueError(
                "`candidates` must be an N x d tensor (or batch_shape x N x d, one "
                f"set per model batch) with N >= 1, got shape {tuple(candidates.shape)}."
            )
    elif candidates is not None:
        raise ValueError("`candidates` is only used by sampler='exact'.")
    if sampler == "pathwise":
        if posterior_transform is not None:
            raise UnsupportedError(
                "sampler='pathwise' does not support a posterior_transform; use a "
                "single-output model or sampler='exact' with candidates."
            )
        if model.num_outputs != 1:
            raise UnsupportedError(
                f"sampler='pathwise' needs a single-output model, got "
                f"num_outputs={model.num_outputs}."
            )
        _check_num_features(num_features)
        _check_pathwise_kernel(model)
    elif posterior_transform is None and model.num_outputs != 1:
        raise UnsupportedError(
            "Multi-output models need a `posterior_transform` to give one objective."
        )
    return sampler


def draw_posterior_paths(
    model: Model, num_paths: int | None = None, num_features: int = 4096
) -> Any:
    r"""Draw Matheron posterior sample paths of an exact GP, each with its own
    random-Fourier-feature frequencies (see docs/algorithms.md, GP-TS).

    Args:
        model: A single-output exact GP (e.g. ``SingleTaskGP``) with an RBF or Matérn
            kernel (optionally inside a ``ScaleKernel``).
        num_paths: Number of independent paths, or ``None`` for a single path with
            no sample dimension (what GP-TS uses for its one draw per decision).
        num_features: Number of random features per path (even, >= 2).

    Returns:
        A BoTorch ``MatheronPath``. For ``X`` of shape ``batch_shape x n x d``,
        ``paths(X)`` has shape ``num_paths x batch_shape x n``, or
        ``batch_shape x n`` when ``num_paths`` is ``None``. (With a sample dimension
        of size one, BoTorch broadcasts it against ``batch_shape``; leaving it out
        avoids that ambiguity.)

    Example:
        >>> paths = draw_posterior_paths(gp, num_paths=16)
        >>> paths(X).shape  # X: n x d
        torch.Size([16, n])
    """
    _check_num_features(num_features)
    if num_paths is not None and (
        isinstance(num_paths, bool) or not isinstance(num_paths, int) or num_paths < 1
    ):
        raise ValueError(
            f"`num_paths` must be None or an integer >= 1, got num_paths={num_paths!r}."
        )
    sample_shape = Size([]) if num_paths is None else Size([num_paths])
    prior_sampler = partial(
        draw_kernel_feature_paths,
        num_features=num_features,
        map_generator=partial(_fresh_feature_maps, num_draws=num_paths or 1),
    )
    return draw_matheron_paths(
        model, sample_shape=sample_shape, prior_sampler=prior_sampler
    )


class GPThompsonSampling(RoundScheduleMixin, AcquisitionFunction):
    r"""GP-TS (Chowdhury & Gopalan 2017, Algorithm 2): the value at ``x`` is one draw
    :math:`f_t(x)`, :math:`f_t \sim GP(\mu_{t-1}, v_t^2 k_{t-1})`.

    Build one instance per decision: the draw is made lazily at the first evaluation
    and reused by later evaluations of the same instance (so that an optimizer sees a
    single function).

    Conventions: :math:`v_t` (and a constant ``v``) multiplies the posterior standard
    deviation directly, as :class:`~botorch_bandits.IGPUCB`'s :math:`\beta_t` does;
    ``B`` bounds the RKHS norm itself, :math:`\|f\|_k \le B`, as IGP-UCB's
    (:class:`~botorch_bandits.GPUCB`'s ``B_squared`` bounds its square).

    Args:
        model: A BoTorch model. ``"exact"`` works with any single-output model or a
            ``posterior_transform``; ``"pathwise"`` needs a single-output exact GP.
        B: RKHS-norm bound :math:`\|f\|_k \le B` (float or ``batch_shape`` tensor).
        R: Sub-Gaussian noise constant (float or ``batch_shape`` tensor).
        delta: Confidence :math:`\delta \in (0, 1)`.
        gamma: Source of :math:`\gamma_{t-1}` (default ``"observed"``, which keeps
            the guarantee; see :mod:`botorch_bandits.beta`).
        v: Practical alternative: a constant scale :math:`v` (then omit ``B``,
            ``R``); ``v=1`` is plain posterior sampling.
        candidates: ``N x d`` finite decision set :math:`D_t` for the exact sampler
            (or ``batch_shape x N x d``: one set per model batch, e.g. per seed).
        sampler: ``"exact"``, ``"pathwise"``, or ``"auto"`` (exact iff candidates).
        num_features: Random features per path for ``"pathwise"`` (default 4096).
        seed: Seed of this decision's draw; ``None`` uses torch's global generator.
        t: Round index; default ``num_observations(model) + 1`` (pending points
            and the earlier points of a q-batch, left out of the posterior, do not
            count). An explicit ``t`` is the round of a decision without pending
            points: with ``p`` pending, point ``j`` of a q-batch is decided at
            ``t + p + j`` (its :math:`v` uses that round's :math:`\gamma`).
        posterior_transform: Optional ``PosteriorTransform`` (exact sampler).
        maximize: If False, the value is :math:`-f_t(x)`.
        X_pending: ``p x d`` pending points: asynchronous / batch Thompson sampling
            (Kandasamy et al. 2018) -- the posterior stays that of the completed
            observations and the next point gets its own, independent draw (draw
            ``p``; see ``set_X_pending``). Point ``j`` of a q-batch is valued on
            draw ``p + j``; the value is the sum, so joint, sequential and cyclic
            optimization value the same draws.

    Example:
        >>> acqf = GPThompsonSampling(model, B=1.0, R=0.1, candidates=arms, seed=0)
        >>> x_next, _ = optimize_acqf_discrete(acqf, q=1, choices=arms)
    """

    _pending_in_model = False  # asynchronous TS: its posterior leaves them out

    def __init__(
        self,
        model: Model,
        B: float | Tensor | None = None,
        R: float | Tensor | None = None,
        delta: float = 0.1,
        gamma: Any = "observed",
        v: float | None = None,
        candidates: Tensor | None = None,
        sampler: Sampler = "auto",
        num_features: int = 4096,
        seed: int | None = None,
        t: int | None = None,
        posterior_transform: PosteriorTransform | None = None,
        maximize: bool = True,
        X_pending: Tensor | None = None,
    ) -> None:
        check_model_device(model)
        super().__init__(model=model)
        self.B, self.R, self.delta, self.v, self.gamma = scale_arguments(
            B, R, delta, gamma, v, constant_name="v", algorithm="GP-TS"
        )
        sampler = _resolve_sampler(
            sampler, model, candidates, posterior_transform, num_features
        )
        validation.check_count("seed", seed, 0, allow_none=True)
        self.sampler = sampler
        self.num_features = num_features
        self.seed = seed
        self._t = check_round(t)
        self.posterior_transform = posterior_transform
        self.maximize = bool(maximize)
        if candidates is not None:
            self.register_buffer("candidates", candidates)
        else:
            self.candidates = None
        self._draws: dict[int, Any] = {}  # draw number -> draw
        self._members: dict[int, int] = {}  # draw number -> ensemble member
        self._noises: dict[int, Tensor] = {}  # draw number -> its observation noise
        # draw numbers of pending points: the point that holds each draw, the draws
        # the current pending points hold, the draw of the last decision evaluated
        self._holders: dict[int, Tensor] = {}
        self._held: frozenset[int] = frozenset()
        self._last_draw: int | None = None
        self._memo: tuple[tuple, float] | None = None
        # plain attributes: the base model is no second submodule
        set_plain_attributes(self, _base_model=model, X_pending=None)
        if X_pending is not None:
            self.set_X_pending(X_pending)

    # ---------------------------------------------------------------- schedule
    def _scale(self, t: int) -> float:
        if self.v is not None:
            return self.v
        return schedules.gp_ts_scale(gamma_after(self, t), self.B, self.R, self.delta)

    @property
    def v_t(self) -> float | Tensor:
        r""":math:`v_t` (``"linear"`` unit: multiplies the posterior std); a
        ``batch_shape`` tensor when it depends on per-batch data."""
        return self._per_decision(self._scale)

    @property
    def sigma_multiplier(self) -> float | Tensor:
        r"""The factor applied to the posterior standard deviation (:math:`v_t`)."""
        return schedules.sigma_multiplier(self.v_t, "linear")

    # ---------------------------------------------------------------- pending
    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        r"""Pending points (``p x d``), as asynchronous / batch Thompson sampling
        treats them (Kandasamy et al. 2018): the posterior is that of the completed
        observations only, and the next point gets its own draw, independent of the
        draws the pending points were chosen on. ``GPThompsonSamplingSDF`` also
        censors them (see there).

        Draw numbers: every pending point holds one draw, and the next decision takes
        the lowest draw no pending point holds (point ``j`` of a q-batch the
        ``j``-th lowest). A point that was pending before keeps its draw; a new one
        takes the draw of the decision evaluated last (the decision that chose it)
        if no other point holds that, else the lowest free draw. Pending points set
        once give draws ``0 .. p-1`` and the next decision draw ``p``; BoTorch's
        sequential optimizers (``optimize_acqf(sequential=True)``,
        ``optimize_acqf_discrete``) give point ``j`` draw ``p + j``, as a joint
        q-batch does; and ``optimize_acqf_cyclic``, which re-optimizes point ``i``
        with the other ``q - 1`` points pending, values it on its own draw
        ``p + i`` again, so the points do not collapse onto one draw's maximizer.

        Args:
            X_pending: ``p x d`` pending points, or ``None`` (default) for none.
        """
        base = self._base_model
        P = check_pending(X_pending, model_input_dim(base), base)
        set_plain_attributes(self, X_pending=P)
        self._hold_draws(P)
        model = base if P is None else self._pending_model(base, P)
        if model is not self.model:
            self.model = model
            self._draws = {}  # draws of another posterior
            self._members = {}
            self._noises = {}
        set_plain_attributes(self, _memo=None)

    def _pending_model(self, model: Model, P: Tensor) -> Model:
        return model

    def _hold_draws(self, P: Tensor | None) -> None:
        """Assign the pending points their draw numbers (see ``set_X_pending``)."""
        held: set[int] = set()
        new: list[Tensor] = []
        for x in [] if P is None else P:
            match = next(
                (
                    k
                    for k, y in self._holders.items()
                    if k not in held and y.shape == x.shape and torch.equal(y, x)
                ),
                None,
            )
            if match is None:
                new.append(x)
            else:
                held.add(match)
        for x in new:
            k = self._last_draw
            if k is None or k in held:
                k = next(i for i in range(len(held) + 1) if i not in held)
            held.add(k)
            self._holders[k] = x
        self._held = frozenset(held)

    def _decision_draws(self, q: int) -> list[int]:
        """Draw numbers of the ``q`` points of a batch: the lowest ``q`` draws no
        pending point holds."""
        free, k = [], 0
        while len(free) < q:
            if k not in self._held:
                free.append(k)
            k += 1
        return free

    # ---------------------------------------------------------------- drawing
    def _draw_seed(self, k: int) -> int | None:
        """Seed of draw ``k``: ``seed`` itself for the first (so one-point decisions
        are unchanged), a derived seed for every later one that no user seed below
        ``2**63`` collides with (``None``: the global generator)."""
        if self.seed is None:
            return None
        return self.seed if k == 0 else derived_seed(self.seed, DRAW, k)

    def _seeded(self, fn: Any, k: int = 0) -> Any:
        seed = self._draw_seed(k)
        if seed is None:
            return fn()
        # fork (and so restore) the generator of the device the draw is made on
        tensor = self.candidates
        if tensor is None:
            tensor = next(iter(self.model.parameters()), None)
        devices = [tensor.device] if tensor is not None and tensor.is_cuda else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            return fn()

    def _generator(
        self, k: int, device: torch.device | str = "cpu", *keys: int
    ) -> torch.Generator | None:
        """A generator on ``device`` seeded with draw ``k``'s seed (with ``keys``:
        the seed of that sub-stream of it), so the global RNG is left alone; ``None``
        without a seed (torch's global generator)."""
        seed = self._draw_seed(k)
        if seed is None:
            return None
        if keys:
            seed = derived_seed(seed, *keys)
        return torch.Generator(device=device).manual_seed(seed)

    def _normal(self, like: Tensor, k: int = 0) -> Tensor:
        """Standard normals shaped like ``like`` for draw ``k``: from a generator
        seeded with the draw's seed (the global RNG is left alone), or from the
        global RNG without a seed."""
        gen = self._generator(k, like.device)
        return torch.randn(
            like.shape, generator=gen, dtype=like.dtype, device=like.device
        )

    def _draw_noise(self, k: int, n: int, like: Tensor) -> Tensor:
        """The first ``n`` standard normals of draw ``k``'s observation noise (one
        per earlier point of its q-batch, for GP-TS-SDF's Matheron update). Part of
        the draw, so made once and kept like the draw itself -- with ``seed=None``
        too, so that every evaluation of the instance values the same function.
        Made in blocks of 16, block ``m`` from its own derived seed, so the values do
        not depend on the batch sizes asked before."""
        noise = self._noises.get(k)
        while noise is None or noise.numel() < n:
            block = 0 if noise is None else noise.numel() // _NOISE_BLOCK
            gen = self._generator(k, like.device, NOISE, block)
            new = torch.randn(
                _NOISE_BLOCK, generator=gen, dtype=like.dtype, device=like.device
            )
            noise = new if noise is None else torch.cat([noise, new.to(noise)])
            self._noises[k] = noise
        return noise[:n].to(like)

    def _exact_draw(self, k: int = 0) -> tuple[Tensor, Tensor]:
        """Draw ``k`` on the candidates: ``(mean, deviation)``, ``batch_shape x N``
        each; the draw is ``mean + v_t * deviation`` (deviation ``L z``)."""
        if k not in self._draws:
            cand = self.candidates

            def draw() -> tuple[Tensor, Tensor]:
                root = self._model_root(cand)
                if (
                    root is not None
                ):  # Sigma = L L^T kept by the model: no factorization
                    mean, L = root
                    z = self._normal(mean, k)
                    return mean, (L @ z.unsqueeze(-1)).squeeze(-1)
                with torch.no_grad():
                    post = self.model.posterior(
                        cand, posterior_transform=self.posterior_transform
                    )
                    mean = post.mean.squeeze(-1)  # batch_shape x N
                    mvn = getattr(post, "distribution", None)
                    cov = (
                        mvn.covariance_matrix
                        if mvn is not None
                        else torch.diag_embed(post.variance.squeeze(-1))
                    )  # batch_shape x N x N
                    with warnings.catch_warnings():
                        # jitter on a near-singular candidate covariance is expected
                        # (smooth kernels, many candidates); psd_safe_cholesky still
                        # raises if no jitter up to its limit makes it p.d.
                        warnings.simplefilter("ignore", NumericalWarning)
                        L = psd_safe_cholesky(cov)  # batch_shape x N x N
                    z = self._normal(mean, k)
                    return mean, (L @ z.unsqueeze(-1)).squeeze(-1)

            self._draws[k] = draw()
        return self._draws[k]

    def _model_root(self, cand: Tensor) -> tuple[Tensor, Tensor] | None:
        """``(mean, L)`` on the candidates when the model keeps a square root of its
        posterior covariance on exactly this point set (``FiniteArmGP(keep_root=True)``
        with ``candidates`` = its arms, in order), else ``None``."""
        L = getattr(self.model, "covariance_root_", None)
        arms = getattr(self.model, "arms", None)
        if L is None or self.posterior_transform is not None or arms is None:
            return None
        if cand is not arms and not (
            cand.shape == arms.shape and torch.equal(cand, arms)
        ):
            return None
        return self.model.mean_, L if self.model.num_seeds is not None else L[0]

    def _scores_every_candidate(self, X: Tensor) -> bool:
        """``X`` is ``FiniteArmGP.score_points`` and the candidates are its arms."""
        if X is not getattr(self.model, "score_points", None):
            return False
        arms = self.model.arms
        cand = self.candidates
        return cand is arms or (cand.shape == arms.shape and torch.equal(cand, arms))

    def _path(self, k: int = 0) -> Any:
        if k not in self._draws:
            _check_pathwise_ensemble(self.model)  # e.g. conditioned on pending points
            self._draws[k] = self._seeded(
                lambda: draw_posterior_paths(self.model, None, self.num_features), k
            )
        return self._draws[k]

    def _member(self, k: int) -> int:
        """The ensemble member draw ``k`` is taken from (an ensemble model, e.g.
        ``SaasFullyBayesianSingleTaskGP``): uniform over the members, drawn once per
        draw from the draw's seed -- a draw from the ensemble's mixture posterior, as
        BoTorch's ``PathwiseThompsonSampling`` picks one member per path."""
        if k not in self._members:
            num = model_batch_shape(self.model)
            if len(num) != 1:
                raise UnsupportedError(
                    "Thompson sampling on an ensemble model needs one ensemble "
                    f"dimension (batch_shape=[num_members]), got batch_shape={list(num)}."
                )
            gen = self._generator(k, "cpu", MEMBER)
            self._members[k] = int(torch.randint(num[0], (1,), generator=gen))
        return self._members[k]

    def _match_candidates(self, X: Tensor) -> Tensor:
        """Indices into ``candidates`` of the ``batch x d`` points ``X``."""
        return match_points(
            X,
            self.candidates,
            "The exact GP-TS sampler draws f_t on `candidates` only; point {point} is "
            "not a candidate. Optimize with optimize_acqf_discrete(choices=candidates), "
            "or use sampler='pathwise' on a continuous domain.",
        )

    def _mean_and_deviation(self, X: Tensor, k: int) -> tuple[Tensor, Tensor]:
        """``(mean, deviation)`` of draw ``k`` at ``X`` (``(b) x 1 x d``), each
        ``(b)``: the draw's value is ``mean + v * deviation``."""
        if self.sampler == "exact" and self._scores_every_candidate(X):
            # X is the model's own arm layout (N x batch x 1 x d) and the candidates
            # are its arms in order: the draw needs no point matching
            mean, dev = self._exact_draw(k)  # model_batch x N
            mean, dev = mean.to(X), dev.to(X)
            if mean.ndim > 1:
                return mean.transpose(-1, 0), dev.transpose(-1, 0)
            return mean, dev
        ensemble = is_ensemble_model(self.model)
        if self.sampler == "exact":
            idx = self._match_candidates(X.squeeze(-2))  # (b1 x ... x bk)
            if ensemble:  # every point under every member: (b1 x ... x bk) x 1
                idx = idx.unsqueeze(-1)
            mean, dev = self._exact_draw(k)  # model_batch x N
            out_shape = torch.broadcast_shapes(idx.shape, mean.shape[:-1])
            index = idx.expand(out_shape).unsqueeze(-1)

            def pick(v: Tensor) -> Tensor:
                v = v.to(X)
                return v.expand(*out_shape, v.shape[-1]).gather(-1, index).squeeze(-1)

            return pick(mean), pick(dev)
        path = self._path(k)
        # (b1 x ... x bk) (x members): an ensemble's paths and posterior add the
        # member dim themselves, as BoTorch's do
        f_tilde = path(X)[..., 0]  # drop the q dim
        mean = self.model.posterior(X).mean[..., 0, 0]
        return mean, f_tilde - mean

    @t_batch_mode_transform()
    def forward(self, X: Tensor) -> Tensor:
        r"""Evaluate the draw :math:`f_t` at ``X``.

        Args:
            X: ``(b1 x ... x bk) x q x d`` design points. Point ``j`` of a q-batch is
                valued on its own draw (number ``p + j`` with ``p`` pending points
                set once; see ``set_X_pending``), independent of the other points'
                draws; the value is the sum. On a batched model, ``X`` whose trailing
                batch dims broadcast with the model's batch shape pairs with it, as
                in BoTorch and the UCB classes
                (``3 x 1 x d`` on batch shape ``[3]``: point ``i`` valued under batch
                ``i``; ``b x 1 x q x d``: one value per point and batch); ``X`` whose
                batch dims do not pair (``10 x 1 x d``) gets the sum over the batches
                of their draws (as BoTorch's ``PathwiseThompsonSampling``). On an
                ensemble model (e.g. ``SaasFullyBayesianSingleTaskGP``) every draw is
                taken from one member, drawn uniformly once per draw -- a draw from
                the ensemble's mixture posterior, as ``PathwiseThompsonSampling``.

        Returns:
            ``(b1 x ... x bk)`` values of :math:`f_t` (negated if ``maximize=False``).
        """
        check_points(X, self.model)
        # X whose batch dims do not pair with those of a batched model: every point
        # is valued under every model batch and the draws are summed over the
        # batches, as BoTorch's PathwiseThompsonSampling does (a draw of the sum of
        # the batches' GPs); X that pairs is valued point i <-> batch i, as BoTorch
        X, summed = broadcast_over_model_batch(X, self.model)
        q = X.shape[-2]
        draws = self._decision_draws(q)  # draw number of every point of the batch
        self._last_draw = draws[0]
        if q > 1 and self._censors_batch():
            values = self._censored_batch_value(X, draws)
        else:
            values = None
            for j, k in enumerate(draws):
                # X itself at q = 1 (FiniteArmGP's score_points takes a fast path)
                Xj = X if q == 1 else X[..., j : j + 1, :]
                mean, dev = self._mean_and_deviation(Xj, k)
                # v of the point's round, per model batch (its dims are last in mean)
                scale = torch.as_tensor(
                    self._multiplier_at(j), dtype=mean.dtype, device=mean.device
                )
                value = mean + scale * dev
                value = self._select_member(value, k)
                values = value if values is None else values + value
        if summed:
            values = values.sum(dim=tuple(range(-summed, 0)))
        return values if self.maximize else -values

    def _multiplier_at(self, j: int) -> float | Tensor:
        """:math:`v` of point ``j`` of a q-batch, decided at round
        ``self._round(j)``; :math:`v_t` itself when that is this decision's round or
        when :math:`v` does not depend on the round (a constant ``v``, or the
        observed information gain)."""
        t_j = self._round(j)
        if t_j == self.t or self.v is not None:
            return self.sigma_multiplier
        if isinstance(self.gamma, schedules.ObservedInformationGain):
            return self.sigma_multiplier
        return schedules.sigma_multiplier(self._scale(t_j), "linear")

    def _select_member(self, value: Tensor, k: int) -> Tensor:
        """``value`` of draw ``k`` (``(b) x members`` on an ensemble model, whose
        member dim is last) under the draw's member; ``value`` itself otherwise."""
        if not is_ensemble_model(self.model):
            return value
        return value[..., self._member(k)]

    def _censors_batch(self) -> bool:
        """Whether the points of a q-batch censor each other (GP-TS-SDF)."""
        return False

    def _censored_batch_value(
        self, X: Tensor, draws: list[int]
    ) -> Tensor:  # pragma: no cover
        raise NotImplementedError
