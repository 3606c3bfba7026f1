"""Square roots ``R`` with ``A = R R^T`` of the finite-arm engine's covariances:
of a PSD matrix by eigendecomposition or by pivoted Cholesky, and of a posterior
covariance from a root of its prior (the batch form of Potter's rule)."""

from __future__ import annotations

import numpy as np
import torch
from scipy.linalg import lapack
from torch import Tensor


def psd_root(A: Tensor) -> Tensor:
    """A square root ``R`` with ``A = R R^T`` of symmetric PSD matrices (``... x N x
    N``), from the eigendecomposition (round-off negative eigenvalues set to 0).

    Args:
        A: ``... x N x N`` symmetric PSD matrices.

    Returns:
        ``... x N x N`` roots.
    """
    evals, evecs = torch.linalg.eigh(A)
    return evecs * evals.clamp_min(0.0).sqrt().unsqueeze(-2)


def pivoted_root(A: Tensor) -> Tensor:
    """A square root ``R`` with ``A = R R^T`` of one symmetric PSD ``N x N`` matrix by
    Cholesky factorization with complete pivoting (LAPACK ``?pstrf``, stopped at the
    numerical rank ``r``; its default tolerance ``N eps max(diag A)``), as ``N x N``
    with the columns after ``r`` zero. Far cheaper than :func:`psd_root` for
    kernel matrices of low numerical rank; computed on the CPU.

    Args:
        A: One ``N x N`` symmetric PSD matrix, finite.

    Returns:
        ``N x N`` root, of ``A``'s dtype and device.
    """
    if not bool(torch.isfinite(A).all()):
        raise ValueError("The kernel matrix has non-finite entries: no square root.")
    a = A.detach().to("cpu", torch.float64).numpy().copy(order="F")
    c, piv, rank, info = lapack.dpstrf(a, lower=1)
    if info < 0:
        raise ValueError(f"?pstrf rejected argument {-info} of the kernel matrix.")
    R = torch.zeros_like(A, device="cpu", dtype=torch.float64)
    R[torch.from_numpy(piv - 1), :rank] = torch.from_numpy(np.tril(c)[:, :rank])
    return R.to(A)


def posterior_root(R: Tensor, pulled: Tensor, L: Tensor) -> Tensor:
    r"""A square root of :math:`\Sigma = K - K_U A^{-1} K_U^\top` from a root
    :math:`R` of the prior (:math:`K = RR^\top`) and the Cholesky factor :math:`L`
    of :math:`A = K_{UU} + \Lambda`: with :math:`W = L^{-1}R_U`,
    :math:`\Sigma = R(I - W^\top W)R^\top`, and :math:`I - W^\top W = (I -
    W^\top BW)^2` for :math:`B = Q\,\mathrm{diag}(1/(1 + \sqrt{1 - \gamma}))Q^\top`,
    :math:`WW^\top = Q\,\mathrm{diag}(\gamma)Q^\top` (the batch form of Potter's
    rule); :math:`O(N^2|U|)`, no factorization of an :math:`N \times N` matrix.

    Args:
        R: ``N x N`` prior root.
        pulled: The ``u`` pulled arm indices :math:`U`.
        L: ``u x u`` lower Cholesky factor of :math:`A`.

    Returns:
        ``N x N`` posterior root.
    """
    W = torch.linalg.solve_triangular(L, R[pulled], upper=False)  # u x N
    gamma, Q = torch.linalg.eigh(W @ W.T)
    b = 1.0 / (1.0 + torch.sqrt((1.0 - gamma).clamp_min(0.0)))
    RW = R @ W.T  # N x u
    return R - (RW @ (Q * b) @ Q.T) @ W
