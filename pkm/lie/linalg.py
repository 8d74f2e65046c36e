"""Small dense linear algebra for the numba kernels: allocation-free, for matrices up to ~12×12.

numpy's ``linalg`` inside numba allocates on every call; the per-sample path of the batch kernels
must not, so it uses these. Condition numbers are 1-norm ones, ``‖A‖₁ ‖A⁻¹‖₁`` (exact for the
square matrices it is applied to; for a tall ``L`` the Gram matrix ``LᵀL`` is used and the square
root taken), and the same definition is used by the Python path so that one threshold means the
same everywhere.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from pkm.lie.interpret import kernel
from pkm.lie.options import KERNEL_FASTMATH

# Helpers called from numba code only: no Python entry point (no_cpython_wrapper: less compile in
# a first run). CALLING ONE FROM PYTHON CRASHES THE INTERPRETER; tests use conftest.numba_only.
# No numba runtime (_nrt=False): the batch kernel calls them (see pkm.kernels.work._OPTIONS).
_numba_only = njit(cache=True, nogil=True, no_cfunc_wrapper=True, no_cpython_wrapper=True, _nrt=False,
                   fastmath=KERNEL_FASTMATH)


def size(n):
    """A matrix size given as an int, or as a tuple whose length is the size: numba then compiles
    it as a constant and unrolls the small loops (:class:`pkm.kernels.model.KernelModel`)."""
    return len(n) if isinstance(n, tuple) else n


@overload(size, jit_options={"cache": True})
def _size_ol(n):
    if isinstance(n, types.BaseTuple):
        return lambda n: len(n)
    return lambda n: n


# The public routines are called from the batch kernel too: no numba runtime either.
@njit(cache=True, no_cfunc_wrapper=True, _nrt=False, fastmath=KERNEL_FASTMATH)
def inverse_into(A, n, out, work):
    """``out[:n, :n] = A[:n, :n]⁻¹`` by Gauss–Jordan elimination with partial pivoting.

    ``work`` is an (≥n, ≥n) scratch array. Returns False when a pivot is exactly zero.
    """
    for i in range(n):
        for j in range(n):
            work[i, j] = A[i, j]
            out[i, j] = 1.0 if i == j else 0.0
    for c in range(n):
        p = c
        best = abs(work[c, c])
        for r in range(c + 1, n):
            if abs(work[r, c]) > best:
                best = abs(work[r, c])
                p = r
        if best == 0.0:
            return False
        if p != c:
            for j in range(n):
                work[c, j], work[p, j] = work[p, j], work[c, j]
                out[c, j], out[p, j] = out[p, j], out[c, j]
        inv = 1.0 / work[c, c]
        for j in range(n):
            work[c, j] *= inv
            out[c, j] *= inv
        for r in range(n):
            if r != c:
                f = work[r, c]
                if f != 0.0:
                    for j in range(n):
                        work[r, j] -= f * work[c, j]
                        out[r, j] -= f * out[c, j]
    return True


@njit(cache=True, no_cfunc_wrapper=True, _nrt=False, fastmath=KERNEL_FASTMATH)
def norm1(A, n, m):
    """The 1-norm (largest column sum of magnitudes) of ``A[:n, :m]`` (sizes as in :func:`size`)."""
    n, m = size(n), size(m)
    best = 0.0
    for j in range(m):
        s = 0.0
        for i in range(n):
            s += abs(A[i, j])
        if s > best:
            best = s
    return best


def condition_number(A: np.ndarray) -> float:
    """1-norm condition number of a square matrix; of ``AᵀA`` square-rooted for a tall one (numpy)."""
    A = np.ascontiguousarray(A, dtype=float)   # one compiled signature (a column slice G[:, y] is Fortran-ordered)
    if A.shape[0] != A.shape[1]:
        A = A.T @ A
        root = True
    else:
        root = False
    n = A.shape[0]
    inv = np.empty((n, n))
    if not kernel(inverse_into)(A, n, inv, np.empty((n, n))):
        return np.inf
    c = kernel(norm1)(A, n, n) * kernel(norm1)(inv, n, n)
    return float(np.sqrt(c) if root else c)


@_numba_only
def _cholesky_into(A, n, L):
    """``A[:n, :n] = LLᵀ`` (Cholesky) into the lower part of ``L``; False when ``A`` is not
    numerically positive definite (a pivot ≤ 0). ``n`` as in :func:`size`."""
    n = size(n)
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= L[j, k] * L[j, k]
        if not d > 0.0:
            return False
        d = np.sqrt(d)
        L[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / d
    return True


@njit(cache=True, no_cfunc_wrapper=True, _nrt=False, fastmath=KERNEL_FASTMATH)
def cholesky_solve_into(A, n, b, out, work):
    """``out[:n] = A[:n, :n]⁻¹ b[:n]`` for a symmetric positive definite ``A`` (Cholesky, ``A = LLᵀ``).

    ``work`` is an (≥n, ≥n) scratch array that receives ``L``. Returns False when ``A`` is not
    numerically positive definite (a pivot ≤ 0), e.g. a rank-deficient Gram matrix.
    """
    if not _cholesky_into(A, n, work):
        return False
    for i in range(n):  # L y = b
        s = b[i]
        for k in range(i):
            s -= work[i, k] * out[k]
        out[i] = s / work[i, i]
    for i in range(n - 1, -1, -1):  # Lᵀ x = y
        s = out[i]
        for k in range(i + 1, n):
            s -= work[k, i] * out[k]
        out[i] = s / work[i, i]
    return True


@njit(cache=True, no_cfunc_wrapper=True, _nrt=False, fastmath=KERNEL_FASTMATH)
def spd_inverse_into(A, n, out, work):
    """``out[:n, :n] = A[:n, :n]⁻¹`` for a symmetric positive definite ``A``: Cholesky ``A = LLᵀ``
    (``L`` into ``work``), ``M = L⁻¹`` (into ``out``'s lower part), ``A⁻¹ = MᵀM``. No pivoting, so
    with a constant ``n`` (a tuple, :func:`size`) the loops unroll. Returns False when ``A`` is not
    numerically positive definite (a pivot ≤ 0)."""
    if not _cholesky_into(A, n, work):
        return False
    n = size(n)
    for i in range(n):
        out[i, i] = 1.0 / work[i, i]
    for j in range(n):  # M[i, j] = −(Σ_{j ≤ k < i} L[i, k] M[k, j]) / L[i, i]
        for i in range(j + 1, n):
            s = 0.0
            for k in range(j, i):
                s -= work[i, k] * out[k, j]
            out[i, j] = s * out[i, i]
    for i in range(n):  # A⁻¹ = MᵀM, upper part into work
        for j in range(i, n):
            s = 0.0
            for k in range(j, n):
                s += out[k, i] * out[k, j]
            work[i, j] = s
    for i in range(n):
        for j in range(i, n):
            out[i, j] = work[i, j]
            out[j, i] = work[i, j]
    return True
