"""The assembly of the actuator-coordinate form (paper 8.1.3): the forward kinematics for given
actuator coordinates by Gauss–Newton with the platform pose as an unknown (see
:mod:`pkm.kernels.actuator_form`), its index table and the small dense and arrow-structured linear
algebra the form's kernel shares with it.
"""
from __future__ import annotations

import numpy as np

from pkm.algorithms.inverse_kinematics import STALL
from pkm.kernels.ik import CHORD_MARGIN, _fk, _h_times, _loop_rows, _platform_error, _platform_jacobian
from pkm.kernels.model import (LAY_ACTPOS, LAY_CC, LAY_DMAX, LAY_HC, LAY_HCOL, LAY_HNZ, LAY_NMAX, LAY_QIDX, LAY_QP,
                               LI_ACTOFF, LI_AFF, LI_DOF, LI_N, LI_NACT, LI_NROWS, LI_PLAT, MI_PARENT)
from pkm.kernels.work import BW_K, M_G, M_H, M_J, M_LP, V_G, V_Q, _internal, _piece, _pose_at
from pkm.lie.linalg import _cholesky_into

__all__ = ["ASSEMBLY_FAILED", "index_table"]

#: Status code beside :mod:`pkm.kernels.dynamics`'s: the assembly did not converge (value: its residual).
ASSEMBLY_FAILED = 8

# columns of the index table ``ix`` (L, IX_FREE + n_max + d_max), :func:`index_table`
IX_NFREE, IX_FO, IX_NVF, IX_VO, IX_RO, IX_FREE = range(6)


def index_table(km):
    """``(ix, K, Kv, R)``: per limb the number and offset of its unknowns in the assembly (``nfree``,
    ``fo``, after the pose's 6) and in the velocity system (``nvf``, ``vo``), its first row ``ro`` of
    the assembly, then the free positions (q indices of a constant-H limb, tree indices of a general
    one) and the free q indices; the sizes of the unknowns ``K``, ``Kv`` and the rows ``R``."""
    mi, lay = km.mi, km.lay
    L = mi.shape[0]
    nmax, dmax = int(lay[LAY_NMAX]), int(lay[LAY_DMAX])
    ix = np.zeros((L, IX_FREE + nmax + dmax), np.int64)
    K = Kv = 6
    R = 0
    for l in range(L):
        n, d, na = mi[l, LI_N], mi[l, LI_DOF], mi[l, LI_NACT]
        qidx = mi[l, lay[LAY_QIDX]:lay[LAY_QIDX] + d]
        actpos = list(mi[l, lay[LAY_ACTPOS]:lay[LAY_ACTPOS] + na])
        vfree = [c for c in range(d) if c not in actpos]
        free = vfree if mi[l, LI_AFF] else [i for i in range(n) if i not in [qidx[a] for a in actpos]]
        ix[l, :IX_FREE] = (len(free), K, len(vfree), Kv, R)
        ix[l, IX_FREE:IX_FREE + len(free)] = free
        ix[l, IX_FREE + nmax:IX_FREE + nmax + len(vfree)] = vfree
        K += len(free)
        Kv += len(vfree)
        R += 6 + (0 if mi[l, LI_AFF] else mi[l, LI_NROWS])
    return ix, K, Kv, R


@_internal
def _chol_solve(Lf, n, b, out):
    """``out[:n] = (L Lᵀ)⁻¹ b[:n]`` with the Cholesky factor in the lower part of ``Lf``."""
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= Lf[i, k] * out[k]
        out[i] = s / Lf[i, i]
    for i in range(n - 1, -1, -1):
        s = out[i]
        for k in range(i + 1, n):
            s -= Lf[k, i] * out[k]
        out[i] = s / Lf[i, i]


@_internal
def _normal(A, rows, k, N):
    """``N[:k, :k] = AᵀA`` over the first ``rows`` rows of ``A``."""
    for a in range(k):
        for b in range(a + 1):
            acc = 0.0
            for r in range(rows):
                acc += A[r, a] * A[r, b]
            N[a, b] = acc
            N[b, a] = acc


@_internal
def _at_r(A, rows, k, r, out):
    """``out[:k] = Aᵀ r`` over the first ``rows`` rows."""
    for a in range(k):
        acc = 0.0
        for i in range(rows):
            acc += A[i, a] * r[i]
        out[a] = acc


@_internal
def _arrow_normal(mi, lay, ix, matL, L, k, N):
    """``N[:k, :k] = BᵀB`` for the velocity system ``B = [−I | L_(l),free]`` (rows limb by limb) from
    the limbs' ``L_p`` in ``matL``, by its structure: ``L·I`` for the pose, ``−L_(l),free`` beside it,
    ``L_(l),freeᵀ L_(l),free`` on the diagonal, zero between limbs."""
    for a in range(k):
        for b in range(k):
            N[a, b] = 0.0
    for a in range(6):
        N[a, a] = float(L)
    co = IX_FREE + lay[LAY_NMAX]
    for l in range(L):
        Lp, vo, nv = matL[l, M_LP], ix[l, IX_VO], ix[l, IX_NVF]
        for j in range(nv):
            cj = ix[l, co + j]
            for r in range(6):
                N[r, vo + j] = -Lp[r, cj]
                N[vo + j, r] = -Lp[r, cj]
            for i in range(j + 1):
                ci = ix[l, co + i]
                acc = 0.0
                for r in range(6):
                    acc += Lp[r, ci] * Lp[r, cj]
                N[vo + i, vo + j] = acc
                N[vo + j, vo + i] = acc


@_internal
def _arrow_at(lay, ix, matL, L, r, out):
    """``out = Bᵀ r`` for the velocity system of :func:`_arrow_normal` (``r``: 6 rows per limb)."""
    for c in range(6):
        acc = 0.0
        for l in range(L):
            acc -= r[6 * l + c]
        out[c] = acc
    co = IX_FREE + lay[LAY_NMAX]
    for l in range(L):
        Lp, vo = matL[l, M_LP], ix[l, IX_VO]
        for j in range(ix[l, IX_NVF]):
            cj = ix[l, co + j]
            acc = 0.0
            for q in range(6):
                acc += Lp[q, cj] * r[6 * l + q]
            out[vo + j] = acc


@_internal
def _retract(Cd, dx):
    """``C ← C exp(δ)`` to first order in the translation (a retraction: ``R ← R exp(ω)``, ``p ← p +
    R v``), ``δ = dx[:6]`` body-fixed, ``C = Cd[0]``."""
    w0, w1, w2 = dx[0], dx[1], dx[2]
    t = w0 * w0 + w1 * w1 + w2 * w2
    if t < 1e-16:
        a, b = 1.0 - t / 6.0, 0.5 - t / 24.0
    else:
        th = np.sqrt(t)
        a, b = np.sin(th) / th, (1.0 - np.cos(th)) / t
    # E = I + a W + b W², W = skew(ω)
    E = (1.0 - b * (w1 * w1 + w2 * w2), -a * w2 + b * w0 * w1, a * w1 + b * w0 * w2,
         a * w2 + b * w0 * w1, 1.0 - b * (w0 * w0 + w2 * w2), -a * w0 + b * w1 * w2,
         -a * w1 + b * w0 * w2, a * w0 + b * w1 * w2, 1.0 - b * (w0 * w0 + w1 * w1))
    for r in range(3):
        c0, c1, c2 = Cd[0, r, 0], Cd[0, r, 1], Cd[0, r, 2]
        Cd[0, r, 3] += c0 * dx[3] + c1 * dx[4] + c2 * dx[5]
        Cd[0, r, 0] = c0 * E[0] + c1 * E[3] + c2 * E[6]
        Cd[0, r, 1] = c0 * E[1] + c1 * E[4] + c2 * E[7]
        Cd[0, r, 2] = c0 * E[2] + c1 * E[5] + c2 * E[8]


@_piece
def _assemble(mi, mf, lay, ix, K, R, qa, th, bwL, matL, vecL, Cd, A, N, Lf, res, dx, general, tol, max_iter,
              status):
    """The assembly (module docstring) from the tree variables in ``th`` (L, n_max) with the actuated
    ones set to ``qa``; on success ``th``, each limb's ``bwL[l]`` poses, ``J_p``, ``L_p`` (and ``G``)
    in ``matL[l]``, ``C`` in ``Cd[0]``. Returns the final residual (inf on failure, with
    ``status``)."""
    L = mi.shape[0]
    oq, oa = lay[LAY_QIDX], lay[LAY_ACTPOS]
    for l in range(L):
        n, d, na, off = mi[l, LI_N], mi[l, LI_DOF], mi[l, LI_NACT], mi[l, LI_ACTOFF]
        J = matL[l, M_J]
        for r in range(6):
            for j in range(n):
                J[r, j] = 0.0
        q = vecL[l, V_Q]
        for c in range(d):
            q[c] = th[l, mi[l, oq + c]]
        for a in range(na):
            q[mi[l, oa + a]] = qa[off + a]
            th[l, mi[l, oq + mi[l, oa + a]]] = qa[off + a]
    err, prev = np.inf, np.inf
    for it in range(max_iter + 1):
        if general is not None:
            for r in range(R):
                for c in range(K):
                    A[r, c] = 0.0
        prev, err, big = err, 0.0, 1.0
        for l in range(L):
            n, d = mi[l, LI_N], mi[l, LI_DOF]
            aff = True if general is None else mi[l, LI_AFF] != 0
            tl, bw, mat, vec = th[l], bwL[l], matL[l], vecL[l]
            J, Lp, q = mat[M_J], mat[M_LP], vec[V_Q]
            if aff:
                _h_times(l, mi, mf, lay, mat[M_H], True, n, d, q, tl)  # θ = H q + c
                for i in range(n):
                    tl[i] += mf[l, lay[LAY_CC] + i]
            _fk(l, mi, mf, tl, bw, it == 0)
            if it == 0 and l == 0:  # the platform pose starts at the first limb's
                Rk, pk = _pose_at(bw, mi[l, LI_PLAT], BW_K)
                Rq, pq = _pose_at(mf, l, lay[LAY_QP] + 12)
                for a in range(3):
                    for b in range(3):
                        Cd[0, a, b] = Rk[3 * a] * Rq[b] + Rk[3 * a + 1] * Rq[3 + b] + Rk[3 * a + 2] * Rq[6 + b]
                    Cd[0, a, 3] = Rk[3 * a] * pq[0] + Rk[3 * a + 1] * pq[1] + Rk[3 * a + 2] * pq[2] + pk[a]
                    Cd[0, 3, a] = 0.0
                Cd[0, 3, 3] = 1.0
            e = vec[0]
            _, Rp, rp = _platform_error(l, mi, mf, lay, bw, Cd, 0, e)
            _platform_jacobian(l, mi, mf, bw, Rp, rp, J)
            ro, fo, nf = ix[l, IX_RO], ix[l, IX_FO], ix[l, IX_NFREE]
            for r in range(6):
                res[ro + r] = e[r]
                err = max(err, abs(e[r]))
                if general is not None:
                    A[ro + r, r] = -1.0
            if aff:  # L_p = J_p H over H's nonzeros on the platform's path
                for c in range(d):
                    for r in range(6):
                        Lp[r, c] = 0.0
                j = mi[l, LI_PLAT]
                while j >= 0:
                    for k in range(mi[l, lay[LAY_HNZ] + j]):
                        c, hv = mi[l, lay[LAY_HCOL] + lay[LAY_DMAX] * j + k], mf[l, lay[LAY_HC] + lay[LAY_DMAX] * j + k]
                        for r in range(6):
                            Lp[r, c] += hv * J[r, j]
                    j = mi[l, MI_PARENT + j]
                if general is not None:
                    for k in range(nf):
                        c = ix[l, IX_FREE + k]
                        for r in range(6):
                            A[ro + r, fo + k] = Lp[r, c]
            else:
                G, g = mat[M_G], vec[V_G]
                gerr = _loop_rows(l, mi, mf, lay, bw, G, g)
                err = max(err, gerr)
                for k in range(nf):
                    c = ix[l, IX_FREE + k]
                    for r in range(6):
                        A[ro + r, fo + k] = J[r, c]
                for i in range(mi[l, LI_NROWS]):
                    res[ro + 6 + i] = -g[i]
                    for k in range(nf):
                        A[ro + 6 + i, fo + k] = G[i, ix[l, IX_FREE + k]]
            for i in range(n):
                big = max(big, abs(tl[i]))
        if not np.isfinite(err):
            break
        if err <= CHORD_MARGIN * tol or (it >= 2 and err > STALL * prev and err <= tol * big):
            res[R] = it
            return err
        if it == max_iter:
            break
        if general is None:   # constant-H limbs: the assembly's system is the velocity system's (arrow)
            _arrow_normal(mi, lay, ix, matL, L, K, N)
            _arrow_at(lay, ix, matL, L, res, dx[K:])
        else:
            _normal(A, R, K, N)
            _at_r(A, R, K, res, dx[K:])
        if not _cholesky_into(N, K, Lf):
            break
        _chol_solve(Lf, K, dx[K:], dx)
        top = 0.0
        for c in range(K):
            top = max(top, abs(dx[c]))
        if top > 0.5:
            for c in range(K):
                dx[c] *= 0.5 / top
        _retract(Cd, dx)
        for l in range(L):
            aff = True if general is None else mi[l, LI_AFF] != 0
            fo = ix[l, IX_FO]
            for k in range(ix[l, IX_NFREE]):
                if aff:
                    vecL[l, V_Q, ix[l, IX_FREE + k]] += dx[fo + k]
                else:
                    th[l, ix[l, IX_FREE + k]] += dx[fo + k]
    status[0], status[2], status[3] = ASSEMBLY_FAILED, -1, err
    return np.inf
