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
    """The Cholesky factor ``C`` (``A = CCᵀ``, :func:`pkm.lie.linalg._cholesky_into`'s operations, each column
    multiplied by its pivot's reciprocal instead of divided by the pivot) of the d × d lanes matrix at rows
    ``oa + i·dmax + j`` of ``A`` into rows ``oc + …`` of ``A`` (lower triangle); the reciprocals ``1 / C_jj`` into
    rows ``oinv + j·dmax + j`` unless ``oinv < 0`` (the diagonal of ``C⁻¹``). Returns the mask of lanes whose
    pivots are all > 0 (the others get pivot 1)."""
    ok = splat(1.0, L) > 0.0
    for j in range(d):
        dd = vload(A, oa + j * dmax + j, L)
        for k in range(j):
            cjk = vload(A, oc + j * dmax + k, L)
            dd = dd - cjk * cjk
        ok = ok & (dd > 0.0)
        dd = vsqrt(select(ok, dd, 1.0))
        inv = 1.0 / dd
        vstore(A, oc + j * dmax + j, dd)
        if oinv >= 0:
            vstore(A, oinv + j * dmax + j, inv)
        for i in range(j + 1, d):
            s = vload(A, oa + i * dmax + j, L)
            for k in range(j):
                s = s - vload(A, oc + i * dmax + k, L) * vload(A, oc + j * dmax + k, L)
            vstore(A, oc + i * dmax + j, s * inv)
    return ok
