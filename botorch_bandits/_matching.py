"""Matching query points to a finite point set (the engine's arms, GP-TS candidates)."""

from __future__ import annotations

import math

import torch
from torch import Tensor


def match_points(X: Tensor, table: Tensor, not_found: str) -> Tensor:
    r"""Indices of the points ``X`` in ``table``.

    Args:
        X: ``(*xb) x d`` points. The trailing dims of ``xb`` broadcast against the
            batch dims of ``table`` (one table per model batch, e.g. per seed).
        table: ``(*tb) x N x d`` point sets (``tb`` may be empty: one shared set).
        not_found: Message of the ``ValueError`` raised when a point is not in its
            table (up to round-off); ``{point}`` is replaced by the point.

    Returns:
        ``broadcast(xb, tb)`` long indices into the ``N`` points of the matching table.
    """
    N, d = table.shape[-2], table.shape[-1]
    tb = table.shape[:-2]
    if X.shape[-1] != d:
        raise ValueError(
            f"Points have d={X.shape[-1]} but the finite set has d={d}. "
            + not_found.format(point=f"of shape {list(X.shape)}")
        )
    X = X.to(table)
    arange = torch.arange(N, device=table.device)
    # fast paths: the whole set, laid out as N x tb x d (scoring every arm) or as tb x N x d
    if X.shape == (N, *tb, d) and torch.equal(X, table.movedim(-2, 0)):
        return arange.view(N, *([1] * len(tb))).expand(N, *tb)
    if X.shape == table.shape and torch.equal(X, table):
        return arange.expand(table.shape[:-1])
    out = torch.broadcast_shapes(X.shape[:-1], tb)
    k = len(tb)
    prefix = out[: len(out) - k]
    tail = out[len(out) - k :]
    Xb = X.expand(*out, d)
    if k:  # move the table's batch dims in front: tail x prefix x d
        Xb = Xb.movedim(tuple(range(len(prefix), len(out))), tuple(range(k)))
    flat = Xb.reshape(math.prod(tail), -1, d)
    tab = table.expand(*tail, N, d).reshape(-1, N, d)
    dist = torch.cdist(flat, tab, compute_mode="donot_use_mm_for_euclid_dist")
    min_dist, idx = dist.min(dim=-1)  # prod(tail) x prod(prefix)
    tol = (1e-6 if table.dtype == torch.double else 1e-4) * (1 + table.abs().max())
    if torch.any(min_dist > tol):
        worst = divmod(int(min_dist.argmax()), min_dist.shape[-1])
        raise ValueError(not_found.format(point=flat[worst].tolist()))
    idx = idx.reshape(*tail, *prefix)
    if k:
        idx = idx.movedim(tuple(range(k)), tuple(range(len(prefix), len(out))))
    return idx
