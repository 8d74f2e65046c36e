"""Small dense linear algebra in SIMD lanes (:mod:`pkm.kernels.simd_vec` vectors): the operations of
:mod:`pkm.lie.linalg`'s solvers on ``d × d`` matrices stored one entry per row of a ``(rows, W)`` scratch,
shared by the limb geometry (:func:`pkm.kernels.simd_pipeline.vgeometry`) and the batch lanes' ``M_t``
solve (:mod:`pkm.kernels.simd_forward`)."""
from __future__ import annotations

from pkm.kernels.simd_vec import select, splat, vload, vsqrt, vstore
from pkm.kernels.work import _internal

__all__ = ["vcholesky"]


@_internal
def vcholesky(A, oa, oc, d, dmax, oinv, L):
    """The Cholesky factor ``C`` (``A = CCᵀ``) of the d × d lanes matrix at rows ``oa + i·dmax + j`` of ``A`` into
    rows ``oc + …`` of ``A`` (lower triangle and diagonal); the reciprocals ``1 / C_jj`` into rows
    ``oinv + j·dmax + j`` unless ``oinv < 0`` (the diagonal of ``C⁻¹``). Returns the mask of lanes whose pivots
    are all > 0 (the others get pivot 1).

    Factored as ``A = S D⁻¹ Sᵀ`` (``S = C · diag(C_jj)``, ``D = diag(C_jj²)``: the pivots): ``s_ij = a_ij −
    Σ_k s_ik s_jk / d_k`` with ``t_jk = s_jk / d_k`` kept in ``C``'s upper triangle, so that the pivots' chain of
    dependent operations holds one division per column and no square root (on AVX2 the square root and the
    division in a row had been the kernel's slowest stretch, ~5 % of the Delta's samples); then, off that chain,
    ``1 / C_jj = √(1/d_j)`` and ``C_jj = d_j / C_jj`` where the reciprocals are kept (the pivots' reciprocals of the
    chain reused: no second division), else ``C_jj = √d_j`` and its reciprocal, and ``C_ij = s_ij / C_jj``. The same
    sums as :func:`pkm.lie.linalg._cholesky_into`'s, rounded differently."""
    ok = splat(1.0, L) > 0.0
    for j in range(d):
        dd = vload(A, oa + j * dmax + j, L)
        for k in range(j):
            dd = dd - vload(A, oc + j * dmax + k, L) * vload(A, oc + k * dmax + j, L)
        ok = ok & (dd > 0.0)
        dd = select(ok, dd, 1.0)
        rd = 1.0 / dd
        vstore(A, oc + j * dmax + j, dd)
        if oinv >= 0:
            vstore(A, oinv + j * dmax + j, rd)
        for i in range(j + 1, d):
            s = vload(A, oa + i * dmax + j, L)
            for k in range(j):
                s = s - vload(A, oc + i * dmax + k, L) * vload(A, oc + k * dmax + j, L)
            vstore(A, oc + i * dmax + j, s)
            vstore(A, oc + j * dmax + i, s * rd)
    for j in range(d):
        dd = vload(A, oc + j * dmax + j, L)
        if oinv >= 0:  # 1/C_jj = √(1/d_j) from the pivot's reciprocal, C_jj = d_j/C_jj: no second division
            inv = vsqrt(vload(A, oinv + j * dmax + j, L))
            r = dd * inv
            vstore(A, oinv + j * dmax + j, inv)
        else:
            r = vsqrt(dd)
            inv = 1.0 / r
        vstore(A, oc + j * dmax + j, r)
        for i in range(j + 1, d):
            vstore(A, oc + i * dmax + j, vload(A, oc + i * dmax + j, L) * inv)
    return ok
