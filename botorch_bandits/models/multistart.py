r"""A multi-start marginal-likelihood fit of a zero-mean GP with a scaled isotropic kernel
(lengthscale, output scale, noise) on many data sets at once: each data set of a batch
(a seed of a simulator, padded to a common length with a mask) is fitted from every
start by damped Newton steps on the exact log marginal likelihood, and keeps the start that reaches
the highest one. Verma, Dai & Low's experiments refit by marginal likelihood (App. C);
a single start stops at poor local optima (docs/reproducing.md, "Refits")."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor

from botorch_bandits.validation import check_count

DEFAULT_STARTS = 10
"""Starts per data set: the authors' public code refits with 10 restarts."""

_CHUNK = 2**18
"""On the CPU, entries of one chunk's ``P x n x n`` tensors: the problems are taken
in chunks of at most 2 MB per tensor, which stay in the allocator's heap and the
caches (one batch of hundreds of problems is mapped, zeroed and unmapped per step;
25 data sets of 200 points, 10 starts: 5.0-5.3 s in chunks against 8.6-9.7 s at
once). Other devices take every problem at once."""


@dataclass(frozen=True)
class MultiStartFit:
    r"""Per data set (``batch``): the hyperparameters of the best start, its log
    marginal likelihood per point, and whether it had data to fit (>= 2 points).

    Attributes:
        lengthscale, outputscale, noise: ``batch`` values :math:`\ell`,
            :math:`\sigma_f^2`, :math:`\sigma_n^2` (NaN where not fitted).
        log_likelihood: ``batch`` log marginal likelihoods per observation.
        fitted: ``batch`` bools.
    """

    lengthscale: Tensor
    outputscale: Tensor
    noise: Tensor
    log_likelihood: Tensor
    fitted: Tensor


def log_marginal_likelihood(
    X: Tensor, Y: Tensor, lengthscale: Tensor, outputscale: Tensor, noise: Tensor
) -> Tensor:
    r""":math:`\log p(y \mid X)` per point (``batch``) of a zero-mean GP with kernel
    :math:`\sigma_f^2\exp(-\lVert x - x'\rVert^2 / 2\ell^2)` and noise
    :math:`\sigma_n^2`: how well any fit's hyperparameters explain the data.

    Args:
        X: ``batch x n x d`` inputs.
        Y: ``batch x n`` targets.
        lengthscale, outputscale, noise: ``batch`` hyperparameters each.

    Returns:
        ``batch`` log likelihoods per point (``-inf`` where the factorization fails).
    """
    X, Y = X.double(), Y.double()
    m = torch.ones_like(Y)
    n = torch.full_like(Y[:, 0], Y.shape[-1])
    zero = torch.zeros_like(n)
    mm = m.unsqueeze(-1) * m.unsqueeze(-2)
    data = _Data(torch.cdist(X, X).pow(2), Y, m, mm, m, zero, n, n, zero)
    scale = outputscale.double()
    theta = torch.stack([lengthscale.log(), (noise / scale).log()], -1).double()
    _, _, L, info = _masked_system(data, theta)
    a = torch.linalg.solve_triangular(L, Y.unsqueeze(-1), upper=False).squeeze(-1)
    logdet = torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum(-1)
    quad = a.pow(2).sum(-1) / scale
    ll = -0.5 * (quad + n * math.log(2 * math.pi) + n * scale.log()) - logdet
    ll = ll / n
    return torch.where(info == 0, ll, torch.full_like(ll, -math.inf))


def _diameter(X: Tensor, mask: Tensor) -> Tensor:
    """Per data set: the largest distance between two of its points (1 if none)."""
    m = mask.to(X.dtype)
    far = torch.cdist(X, X) * (m.unsqueeze(-1) * m.unsqueeze(-2))
    diam = far.flatten(-2).max(-1).values
    return torch.where(diam > 0, diam, torch.ones_like(diam))


class _Data(NamedTuple):
    r"""Padded data sets (``P`` of them, ``u`` rows each): squared distances ``D2``,
    masked row means ``y``, the mask ``m`` (and ``mm``, its outer product),
    ``w = m / counts``, the within-row sum of
    squares ``ss``, the observation count ``n``, the row count ``u`` and
    :math:`\sum \log c_i` (``logc``)."""

    D2: Tensor
    y: Tensor
    m: Tensor
    mm: Tensor
    w: Tensor
    ss: Tensor
    n: Tensor
    u: Tensor
    logc: Tensor

    def take(self, idx: Tensor) -> _Data:
        """The problems ``idx`` (sorted, unique: every one is the data itself)."""
        if idx.numel() == self.y.shape[0]:  # every set, in order (idx is sorted)
            return self
        return _Data(*(v[idx] for v in self))

    def repeat(self, times: int) -> _Data:
        return _Data(*(v.repeat(times, *([1] * (v.ndim - 1))) for v in self))


def _masked_system(
    data: _Data, theta: Tensor, derivatives: bool = False
) -> tuple[Tensor | None, Tensor | None, Tensor, Tensor]:
    r"""``(E, C, L, info)`` of :math:`A = C_\ell + r\,\mathrm{diag}(1/c)` on the
    masked rows (``theta``: ``P x 2``, :math:`(\log\ell, \log r)`); padded rows are
    those of an identity with target 0, so they leave the likelihood unchanged.
    :math:`E = D^2/\ell^2` and :math:`C` are returned with ``derivatives`` only."""
    inv = torch.exp(-2 * theta[:, 0])[:, None, None]
    E = data.D2 * inv if derivatives else None
    C = torch.exp(E * -0.5) if E is not None else torch.exp(data.D2 * (-0.5 * inv))
    padded = bool((data.m < 1).any())
    if padded:
        C = C * data.mm
    # A is C with the diagonal added: a copy where C is still needed (derivatives,
    # or autograd through the exponential)
    A = C.clone() if derivatives or (not padded and C.requires_grad) else C
    A.diagonal(dim1=-2, dim2=-1).add_(
        torch.exp(theta[:, 1]).unsqueeze(-1) * data.w + (1.0 - data.m)
    )
    L, info = torch.linalg.cholesky_ex(A)
    return E, (C if derivatives else None), L, info


def _value(data: _Data, theta: Tensor, q: Tensor, L: Tensor) -> Tensor:
    r"""The profiled negative log likelihood per observation from :math:`q` and the
    factor of :math:`A`: :math:`\tfrac12[1 + \log(2\pi q/n)] + [\log|A|/2 +
    (n - u)\log r/2 + \sum\log c_i/2] / n`."""
    n = data.n.clamp_min(1.0)
    logdet = torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum(-1)
    extra = 0.5 * ((data.n - data.u) * theta[:, 1] + data.logc)
    return 0.5 * (1.0 + math.log(2 * math.pi) + torch.log(q / n)) + (logdet + extra) / n


def profiled_nll(data: _Data, theta: Tensor) -> tuple[Tensor, Tensor]:
    r"""Negative log marginal likelihood per observation of a zero-mean GP with kernel
    :math:`\sigma_f^2\exp(-\lVert x - x'\rVert^2 / 2\ell^2)` and noise
    :math:`\sigma_n^2 = r\sigma_f^2`, the output scale profiled out. Row :math:`i`
    holds the mean :math:`\bar y_i` of :math:`c_i` observations at one point; their
    likelihood is that of the means, :math:`N(\bar y; 0, \sigma_f^2 A)` with
    :math:`A = C_\ell + r\,\mathrm{diag}(1/c)`, times the within-row factor
    :math:`\prod_i (2\pi\sigma_n^2)^{-(c_i - 1)/2} c_i^{-1/2}
    e^{-SS_i / 2\sigma_n^2}` (exact). The best :math:`\sigma_f^2 = q / n`,
    :math:`q = \bar y^\top A^{-1}\bar y + SS / r`.

    Args:
        data: ``P`` padded data sets (this module's ``_Data``).
        theta: ``P x 2`` :math:`(\log\ell, \log r)`.

    Returns:
        ``(nll, outputscale)``: ``P`` each (``nll`` ``inf`` where the factorization
        fails).
    """
    _, _, L, info = _masked_system(data, theta)
    a = torch.linalg.solve_triangular(L, data.y.unsqueeze(-1), upper=False)
    q = a.squeeze(-1).pow(2).sum(-1) + data.ss * torch.exp(-theta[:, 1])
    nll = _value(data, theta, q, L)
    bad = (info != 0) | ~torch.isfinite(nll)
    return torch.where(bad, torch.full_like(nll, math.inf), nll), q / data.n.clamp_min(
        1.0
    )


def _derivatives(data: _Data, theta: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    r""":func:`profiled_nll` with its exact gradient and Hessian in ``theta``:
    with :math:`\alpha = A^{-1}\bar y`, :math:`A_i = \partial_i A`,
    :math:`\partial_i f = q_i/(2q) + \operatorname{tr}(A^{-1}A_i)/(2n) + [i = r](n -
    u)/(2n)`, :math:`q_i = -\alpha^\top A_i\alpha - [i = r]\,SS/r` and
    :math:`\partial_{ij} f = \tfrac12(q_{ij}/q - q_iq_j/q^2) + [\operatorname{tr}(A^{-1}
    A_{ij}) - \operatorname{tr}(A^{-1}A_iA^{-1}A_j)]/(2n)`,
    :math:`q_{ij} = 2\alpha^\top A_iA^{-1}A_j\alpha - \alpha^\top A_{ij}\alpha + [i = j =
    r]\,SS/r`; for the SE kernel :math:`A_\ell = C\circ E`, :math:`A_{\ell\ell} =
    C\circ(E^2 - 2E)` (:math:`E = D^2/\ell^2`), :math:`A_r = A_{rr} =
    r\,\mathrm{diag}(1/c)`, :math:`A_{\ell r} = 0`."""
    E, C, L, info = _masked_system(data, theta, derivatives=True)
    y, w = data.y, data.w
    n = data.n.clamp_min(1.0)
    r = torch.exp(theta[:, 1])
    Ainv = torch.cholesky_inverse(L)
    alpha = (Ainv @ y.unsqueeze(-1)).squeeze(-1)
    ss_r = data.ss / r
    q = (y * alpha).sum(-1) + ss_r
    f = _value(data, theta, q, L)
    # A_l = C o E and A_ll = C o (E^2 - 2E), neither built: A_ll x = (A_l o E) x -
    # 2 A_l x and tr(Ainv A_ll) = sum(Ainv o A_l o E) - 2 tr(Ainv A_l)
    A1 = C * E
    v1 = (A1 @ alpha.unsqueeze(-1)).squeeze(-1)
    v11 = ((A1 * E) @ alpha.unsqueeze(-1)).squeeze(-1) - 2 * v1
    v2 = r.unsqueeze(-1) * w * alpha
    w1 = (Ainv @ v1.unsqueeze(-1)).squeeze(-1)
    q1 = -(alpha * v1).sum(-1)
    q2 = -(alpha * v2).sum(-1) - ss_r
    q11 = 2 * (v1 * w1).sum(-1) - (alpha * v11).sum(-1)
    q22 = 2 * (v2 * (Ainv @ v2.unsqueeze(-1)).squeeze(-1)).sum(-1)
    q22 = q22 - (alpha * v2).sum(-1) + ss_r
    q12 = 2 * (w1 * v2).sum(-1)
    M1 = Ainv @ A1
    diag_inv = torch.diagonal(Ainv, dim1=-2, dim2=-1)
    G = Ainv * A1
    t1 = G.sum((-1, -2))
    t2 = r * (diag_inv * w).sum(-1)
    t11 = (G * E).sum((-1, -2)) - 2 * t1 - (M1 * M1.transpose(-1, -2)).sum((-1, -2))
    sq = ((Ainv * Ainv) @ w.unsqueeze(-1)).squeeze(-1)  # (Ainv o Ainv) w
    t22 = t2 - r.pow(2) * (sq * w).sum(-1)
    t12 = -r * (w * (M1 * Ainv).sum(-1)).sum(-1)
    g = torch.stack(
        [
            q1 / (2 * q) + t1 / (2 * n),
            q2 / (2 * q) + t2 / (2 * n) + (data.n - data.u) / (2 * n),
        ],
        -1,
    )
    hq = [[q11, q12], [q12, q22]]
    ht = [[t11, t12], [t12, t22]]
    qs = [q1, q2]
    H = torch.stack(
        [
            torch.stack(
                [
                    0.5 * (hq[i][j] / q - qs[i] * qs[j] / q.pow(2)) + ht[i][j] / (2 * n)
                    for j in range(2)
                ],
                -1,
            )
            for i in range(2)
        ],
        -2,
    )
    bad = (info != 0) | ~torch.isfinite(f) | ~torch.isfinite(g).all(-1)
    f = torch.where(bad, torch.full_like(f, math.inf), f)
    return f, g, H


def _chunked(
    fn: Callable[[_Data, Tensor], tuple[Tensor, ...]], data: _Data, theta: Tensor
) -> tuple[Tensor, ...]:
    """``fn(data, theta)`` (each output ``P``-leading) evaluated chunk by chunk on
    the CPU (:data:`_CHUNK`), at once elsewhere."""
    P, n = theta.shape[0], data.D2.shape[-1]
    size = max(1, _CHUNK // max(n * n, 1))
    if P <= size or theta.device.type != "cpu":
        return fn(data, theta)
    parts = [
        fn(_Data(*(v[a : a + size] for v in data)), theta[a : a + size])
        for a in range(0, P, size)
    ]
    return tuple(torch.cat(p) for p in zip(*parts, strict=True))


def _newton(
    data: _Data, theta: Tensor, lo: Tensor, hi: Tensor, iters: int, sets: int
) -> Tensor:
    """Newton steps on many problems at once (``theta``: ``P x 2``): a coordinate at
    a bound whose gradient points out of the box is held there (the step is taken in
    the other), the Hessian shifted to be positive definite where it is not, the step at most one log unit
    long and projected into [lo, hi], taken at the largest of 1, 1/2, 1/4, 1/16 of
    its length that lowers that problem's :func:`profiled_nll` (the shorter ones
    tried only where the longer fail). A problem stops when no fraction lowers it,
    when its step moves it less than 1e-6 (log units) or lowers it by less than 1e-8
    per observation, or when it comes within 1e-3 (log units) of an earlier start of
    the same data set (problem ``i`` is data set ``i % sets``: from there both
    follow the same path); the others go on, at most ``iters`` rounds."""
    P = theta.shape[0]
    eye = torch.eye(2, dtype=theta.dtype, device=theta.device)
    fractions = (1.0, 0.5, 0.25, 0.0625)
    theta = theta.clone()
    active = torch.ones(P, dtype=torch.bool, device=theta.device)
    for _ in range(iters):
        idx = torch.nonzero(active).flatten()
        if idx.numel() == 0:
            break
        sub = data.take(idx)
        f, g, H = _chunked(_derivatives, sub, theta[idx])
        finite = torch.isfinite(f)
        # a coordinate at a bound whose gradient points out of the box stays there:
        # the Newton step is taken in the other coordinate (projected Newton)
        at = theta[idx]
        fixed = ((at <= lo[idx] + 1e-12) & (g > 0)) | (
            (at >= hi[idx] - 1e-12) & (g < 0)
        )
        free = (~fixed).to(g.dtype)
        H = 0.5 * (H + H.transpose(-1, -2))
        H = H * (free.unsqueeze(-1) * free.unsqueeze(-2)) + torch.diag_embed(1 - free)
        g = g * free
        low = torch.linalg.eigvalsh(H)[:, 0]
        scale = H.diagonal(dim1=-2, dim2=-1).abs().amax(-1).clamp_min(1e-12)
        shift = (1e-6 * scale - low).clamp_min(0.0)
        step = torch.linalg.solve(H + shift.view(-1, 1, 1) * eye, g.unsqueeze(-1))
        step = -step.squeeze(-1) * free
        step = step / step.norm(dim=-1, keepdim=True).clamp_min(1.0)
        ok = finite & torch.isfinite(step).all(-1)
        step = torch.where(ok.unsqueeze(-1), step, torch.zeros_like(step))
        k = idx.numel()
        start = theta[idx]
        moved, took = start.clone(), torch.zeros(k, dtype=torch.bool, device=g.device)
        after = f.clone()
        for frac in fractions:  # the full step first; shorter ones where it fails
            left = torch.nonzero(~took & ok).flatten()
            if left.numel() == 0:
                break
            trial = torch.clamp(
                start[left] + frac * step[left], lo[idx[left]], hi[idx[left]]
            )
            with torch.no_grad():
                vals = _chunked(profiled_nll, sub.take(left), trial)[0]
            better = vals < f[left] - 1e-13
            moved[left[better]] = trial[better]
            after[left[better]] = vals[better]
            took[left[better]] = True
        gain = f - after
        change = (moved - start).abs().amax(-1)
        theta[idx[took]] = moved[took]
        done = ~took | (change < 1e-6) | (gain < 1e-8)
        active[idx[done]] = False
        grid = theta.reshape(-1, sets, 2)  # starts x sets x 2
        close = (grid.unsqueeze(0) - grid.unsqueeze(1)).abs().amax(-1) < 1e-3
        earlier = torch.ones_like(close[:, :, 0]).tril(-1).bool()  # (j, i): i < j
        twin = (close & earlier.unsqueeze(-1)).any(1).reshape(-1)
        active &= ~twin
    return theta


def fit_gp_multistart(
    X: Tensor,
    Y: Tensor,
    mask: Tensor | None = None,
    *,
    counts: Tensor | None = None,
    within: Tensor | None = None,
    starts: int = DEFAULT_STARTS,
    max_iter: int = 50,
) -> MultiStartFit:
    r"""Maximum marginal likelihood (no priors) of a zero-mean GP with kernel
    :math:`\sigma_f^2\exp(-\lVert x - x'\rVert^2 / 2\ell^2)` and Gaussian noise
    :math:`\sigma_n^2` on each data set of ``X`` (``batch x n x d``), ``Y``
    (``batch x n``), ``mask`` (``batch x n``: the rows that hold data; default all).
    Repeated points may be given once: ``Y`` the mean of the ``counts`` (``batch x
    n``) observations at each row's point and ``within`` (``batch``) the sum over rows
    of their squared deviations from that mean; the likelihood is then exactly that
    of every observation (:func:`profiled_nll`), at the cost of the distinct points.

    The output scale is profiled out; :math:`\log\ell` and the noise-to-signal ratio
    :math:`\log(\sigma_n^2/\sigma_f^2)` are found by damped Newton steps (exact
    gradient and Hessian, :func:`_derivatives`) from ``starts`` starting points per
    data set: lengthscales log-spaced from 1 % to 100 % of the data's diameter (one
    start: 10 %), ratio 0.1. Bounds: :math:`\ell` in [1e-3, 10] x the diameter, the ratio in [1e-6, 10].
    All starts of all data sets run as one batch (on the CPU in chunks of at most
    :data:`_CHUNK` entries per matrix); each data set keeps its best start.
    Data sets with fewer than 2 distinct points, or whose targets are all 0, are not
    fitted (``fitted`` False, values NaN).

    Args:
        X: ``batch x n x d`` inputs.
        Y: ``batch x n`` targets (row means where ``counts`` is given).
        mask: ``batch x n``: the rows that hold data (default ``None``: all).
        counts: ``batch x n`` observations per row (``>= 1``; default 1).
        within: ``batch`` within-row sums of squares (default 0).
        starts: Starts per data set, ``>= 1`` (default :data:`DEFAULT_STARTS`, 10).
        max_iter: Newton steps at most, ``>= 1`` (default 50).

    Returns:
        The :class:`MultiStartFit`.

    Example:
        >>> fit = fit_gp_multistart(X, Y, starts=10)  # X: 25 x 200 x 2, Y: 25 x 200
        >>> fit.lengthscale[fit.fitted]
    """
    check_count("starts", starts, 1)
    check_count("max_iter", max_iter, 1)
    if X.ndim != 3 or Y.shape != X.shape[:-1]:
        raise ValueError(
            f"`X` must be batch x n x d and `Y` batch x n, got {tuple(X.shape)} and "
            f"{tuple(Y.shape)}."
        )
    X, Y = X.double(), Y.double()
    mask = torch.ones_like(Y, dtype=torch.bool) if mask is None else mask.bool()
    X = torch.where(mask.unsqueeze(-1), X, torch.zeros_like(X))  # padding: any value
    data = _padded_data(X, Y, mask, counts, within)
    B = X.shape[0]
    theta, lo, hi = _starting_points(_diameter(X, mask), starts)
    data = data.repeat(starts)
    theta = _newton(data, theta, lo, hi, max_iter, B)
    with torch.no_grad():
        nll, scale = _chunked(profiled_nll, data, theta)
        best = nll.reshape(starts, B).argmin(0)
        pick = best * B + torch.arange(B, device=X.device)
        ls = theta[pick, 0].exp()
        scale = scale[pick]
        noise = theta[pick, 1].exp() * scale
        ll = -nll[pick]
    # fewer than 2 distinct points, or all targets 0 (e.g. every one censored): no
    # fit (one point leaves the lengthscale without a gradient)
    fitted = (data.u[:B] >= 2) & (scale > 0) & torch.isfinite(ll)
    out = [
        torch.where(fitted, v, torch.full_like(v, math.nan))
        for v in (ls, scale, noise, ll)
    ]
    return MultiStartFit(*out, fitted=fitted)


def _padded_data(
    X: Tensor, Y: Tensor, mask: Tensor, counts: Tensor | None, within: Tensor | None
) -> _Data:
    """:func:`fit_gp_multistart`'s data sets (``X`` already padded) as :class:`_Data`:
    the padding rows' targets 0 and counts 1; ``counts`` checked."""
    Y = torch.where(mask, Y, torch.zeros_like(Y))
    m = mask.to(X.dtype)
    c = torch.ones_like(Y) if counts is None else counts.to(X.dtype)
    c = torch.where(mask, c, torch.ones_like(c))
    if bool((c < 1).any()):
        raise ValueError("`counts` must be >= 1 on the rows that hold data.")
    ss = torch.zeros_like(Y[:, 0]) if within is None else within.to(X.dtype)
    n_obs = (c * m).sum(-1)
    return _Data(
        torch.cdist(X, X).pow(2),
        Y * m,
        m,
        m.unsqueeze(-1) * m.unsqueeze(-2),
        m / c,
        ss,
        n_obs,
        m.sum(-1),
        (m * c.log()).sum(-1),
    )


def _starting_points(diam: Tensor, starts: int) -> tuple[Tensor, Tensor, Tensor]:
    """The ``starts x B`` starting points (log lengthscale, log noise ratio; rows
    start-major) for the data sets' diameters ``diam`` (``B``), and the bounds
    ``lo`` and ``hi`` of each row."""
    B = diam.shape[0]
    dev = {"dtype": diam.dtype, "device": diam.device}
    grid = torch.logspace(-2, 0, starts, **dev) if starts > 1 else None
    grid = torch.full((1,), 0.1, **dev) if grid is None else grid
    theta = torch.stack(
        [
            (grid.unsqueeze(-1) * diam).log(),
            torch.full((starts, B), math.log(0.1), **dev),
        ],
        -1,
    ).reshape(starts * B, 2)
    lo = torch.stack([(diam * 1e-3).log(), torch.full_like(diam, math.log(1e-6))], -1)
    hi = torch.stack([(diam * 10).log(), torch.full_like(diam, math.log(10.0))], -1)
    return theta, lo.repeat(starts, 1), hi.repeat(starts, 1)
