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
    rows ``oc + …`` of ``A`` (lower triangle and diagonal; the upper triangle is scratch); the reciprocals
    ``1 / C_jj`` into rows ``oinv + j·dmax + j`` unless ``oinv < 0`` (the diagonal of ``C⁻¹``). Returns the mask of
    lanes whose pivots are all > 0 (the others get ``C = I``).

    Fraction-free (Bareiss) elimination of the lower triangle: step ``k`` sets ``w_ij ← (w_kk w_ij − w_ik w_jk) /
    w_{k−1,k−1}`` for ``i ≥ j > k``, so that ``w_kk = m_k``, the leading principal minor of order ``k + 1``, and
    ``w_ik = m_{k−1} s_ik`` with ``s_ik`` the column of the Schur complement (``C_ik = s_ik / C_kk``). The division
    by ``m_{k−1}`` is a product with its reciprocal, computed a step before it is used: the chain of dependent
    operations from pivot to pivot is a product, a fused multiply-add and a product, with the divisions beside it
    (the left-looking ``S D⁻¹ Sᵀ`` form had a division per column on that chain, ~6 % of the Delta's samples on
    the AVX2 target, perf). Then, off the chain: the pivots ``d_k = m_k / m_{k−1}``, ``1 / C_kk = √(m_{k−1} / m_k)``,
    ``C_kk = d_k / C_kk`` and ``C_ik = w_ik · (C_kk / m_k)``. The minors are of degree ≤ d ≤ 6 in the entries (no
    overflow or underflow for entries between 1e−50 and 1e50). The same factor as :func:`pkm.lie.linalg._cholesky_into`'s,
    rounded differently (tests/test_simd.py::test_lane_cholesky_against_numpy: within ``cond(C)·ε`` of numpy's)."""
    ok = splat(1.0, L) > 0.0
    for i in range(d):
        for j in range(i + 1):
            vstore(A, oc + i * dmax + j, vload(A, oa + i * dmax + j, L))
    prev = splat(1.0, L)  # 1 / m_{k−1}
    rlast = prev
    for k in range(d):
        p = vload(A, oc + k * dmax + k, L)
        ok = ok & (p > 0.0)
        rk = 1.0 / p
        if k + 1 < d:
            vstore(A, oc + k * dmax + k + 1, rk)  # 1 / m_k, in the scratch above the diagonal
        else:
            rlast = rk
        for i in range(k + 1, d):
            wik = vload(A, oc + i * dmax + k, L)
            for j in range(k + 1, i + 1):
                o = oc + i * dmax + j
                vstore(A, o, (p * vload(A, o, L) - wik * vload(A, oc + j * dmax + k, L)) * prev)
        prev = rk
    mprev, rprev = splat(1.0, L), splat(1.0, L)
    for k in range(d):
        mk = vload(A, oc + k * dmax + k, L)
        rk = vload(A, oc + k * dmax + k + 1, L) if k + 1 < d else rlast
        inv = vsqrt(mprev * rk)
        ckk = mk * rprev * inv
        f = ckk * rk
        vstore(A, oc + k * dmax + k, select(ok, ckk, 1.0))
        if oinv >= 0:
            vstore(A, oinv + k * dmax + k, select(ok, inv, 1.0))
        for i in range(k + 1, d):
            vstore(A, oc + i * dmax + k, select(ok, vload(A, oc + i * dmax + k, L) * f, 0.0))
        mprev, rprev = mk, rk
    return ok
