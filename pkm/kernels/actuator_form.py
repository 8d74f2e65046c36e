"""Forward dynamics in actuator coordinates (paper 8.1.3, eq. 135–136) as a numba kernel: the
assembly (forward kinematics) and the EOM of :mod:`pkm.sim.actuator` at one state, allocation-free.

**Assembly.** The unknowns are the platform pose ``C`` and every limb's free coordinates (a
constant-H limb's ``q_(l)`` without the actuated ones, ``θ = H q + c``; a general limb's tree
variables without the actuated ones, with its loops' rows, as :func:`pkm.kernels.ik._solve_general`).
The equations are each limb's platform pose error ``e_l = log(C_p(l)⁻¹ C) = 0`` (eq. 96) and the
general limbs' loop constraints ``g = 0`` (eq. 12). Gauss–Newton on the stacked system

    ``L_(l),free Δq_l − δ = e_l``,  ``G_free Δθ_l = −g``,  ``C ← C exp(δ)``

(body-fixed ``δ``), warm-started from the last evaluation's tree variables. It is the system of
:func:`pkm.algorithms.assembly.assemble` with the platform pose as an unknown instead of
eliminated through the first limb: regular wherever the forward kinematics is, also where a
single limb's ``L_p`` loses rank (the Delta's stretched arm, where the task form's IK fails).

**Velocities and accelerations** (module docstring of :mod:`pkm.sim.actuator`): every limb moves
the one platform, ``L_l q̇_l = V_p`` (eq. 80) and ``L_l q̈_l + β_l = V̇_p`` with ``β_l = J_p Ḣ_l q̇_l +
J̇_p θ̇_l``. With the unknowns ``(V_p, q̇_free)`` the matrix ``B = [−I | L_(l),free]`` (rows limb by
limb) is factored once (normal equations, Cholesky); its solutions for the right-hand sides
``−L_(l),act e_a`` give ``Z`` (``q̇ = Z θ̇_act``, ``Θ_l = H_l Z_l``, ``Θ_p`` = the rows of ``V_p``), for
``−β`` the accelerations at ``θ̈_act = 0``: ``θ̈⁰_l = H_l q̈⁰_l + Ḣ_l q̇_l`` and ``V̇⁰_p``.

**EOM** by Jourdain's principle (eq. 116/135): ``M_a θ̈_act = u − b`` with

    ``b = Σ_l Θ_lᵀ τ_l(θ_l, θ̇_l, θ̈⁰_l) + Θ_pᵀ(φ_p(V_p, V̇⁰_p) − W^EE)``,
    ``M_a e_a = Σ_l Θ_lᵀ M̄_l Θ_l e_a + Θ_pᵀ M_p Θ_p e_a``,

the limbs' RNEA with gravity and the joint terms (:func:`pkm.kernels.dynamics._rnea`) and
``n_act`` velocity-free passes (:func:`pkm.kernels.dynamics._rnea_acc`), the platform by its
Newton–Euler equations (eq. 104–106) — the platform's inertia once, as the reference carries it
in the first limb's tree. :func:`actuator_rhs` evaluates one state,
:func:`pkm.kernels.actuator_rk4.actuator_rk4` a whole fixed-step RK4 run.
Failures set ``status = (code, step, limb, value)``: :data:`ASSEMBLY_FAILED` (value: the residual),
:data:`pkm.kernels.dynamics.SINGULAR_GY`, :data:`SINGULAR_B` (the forward kinematics degenerates:
a type-II singularity) or :data:`SINGULAR_MA`.
"""
from __future__ import annotations

import numpy as np

from pkm.algorithms.inverse_kinematics import STALL
from pkm.kernels.dynamics import SINGULAR_GY, _inertia_times, _loop_bias, _params10, _rnea, _rnea_acc, _twists
from pkm.kernels.ik import CHORD_MARGIN, _build_H, _fk, _h_times, _loop_rows, _platform_error, _platform_jacobian
from pkm.kernels.model import (LAY_ACTPOS, LAY_CC, LAY_DMAX, LAY_HC, LAY_HCOL, LAY_HNZ, LAY_LOOPS, LAY_NMAX, LAY_QIDX,
                               LAY_QP, LI_ACTOFF, LI_AFF, LI_DOF, LI_N, LI_NACT, LI_NLOOP, LI_NROWS, LI_PLAT, LP_M,
                               LP_SIZE, LP_Y, MI_PARENT)
from pkm.kernels.work import (BW_A, BW_HD, BW_K, BW_PHI, M_G, M_GYI, M_H, M_J, M_LP, V_G, V_Q, _internal, _jit, _piece,
                              _pose_at, _twist_at)
from pkm.lie.linalg import _cholesky_into
from pkm.lie.small import Ad, Ad_inv, coad, sub

__all__ = ["ASSEMBLY_FAILED", "SINGULAR_B", "SINGULAR_MA", "index_table", "actuator_rhs"]

#: Status codes beside :mod:`pkm.kernels.dynamics`'s: the assembly did not converge, the velocity
#: system ``B`` (the forward kinematics) or the actuator-space mass matrix is singular.
ASSEMBLY_FAILED, SINGULAR_B, SINGULAR_MA = 8, 9, 10

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


@_internal
def _q_vector(l, mi, lay, ix, col, Z, act, x):
    """Limb ``l``'s generalized rates ``x`` (δ_l) from the velocity system's solution column ``col``
    of ``Z`` (its free entries) and, for ``act ≥ 0``, a unit rate of that actuator (else zero)."""
    for c in range(mi[l, LI_DOF]):
        x[c] = 0.0
    vo = ix[l, IX_VO]
    for k in range(ix[l, IX_NVF]):
        x[ix[l, IX_FREE + lay[LAY_NMAX] + k]] = Z[vo + k, col]
    off = mi[l, LI_ACTOFF]
    for k in range(mi[l, LI_NACT]):
        if off + k == act:
            x[mi[l, lay[LAY_ACTPOS] + k]] = 1.0


@_piece
def _state(mi, mf, lay, Mp, ix, K, Kv, R, qa, qda, u, g0, Wee, th, bwL, matL, vecL, Cd, A, N, Lf, res, dx, Z, Theta,
           thd, thdd, Ma, sv, general, tol, max_iter, status):
    """The actuator-form EOM at ``(θ_act, θ̇_act) = (qa, qda)`` under forces ``u`` (module docstring).
    Writes ``θ`` (``th``), ``θ̇``, ``θ̈`` (L, n_max), ``Θ`` (L, n_act, n_max), ``M_a``, and into ``sv``:
    row 0 ``θ̈_act``, 1 ``u − b``, 2 ``V_p``, 3 ``V̇⁰_p``, 4 ``(assembly residual, ·, whether rows 5, 6
    hold the last evaluation's θ_act, θ̇_act)``; each limb's
    ``L_p`` stays in ``matL[l, M_LP]``. Returns False after writing a failure into ``status``."""
    L, na = mi.shape[0], qa.shape[0]
    err = _assemble(mi, mf, lay, ix, K, R, qa, th, bwL, matL, vecL, Cd, A, N, Lf, res, dx, general, tol, max_iter,
                    status)
    if not err < np.inf:
        return False
    sv[4, 0] = err
    if general is not None:
        for l in range(L):
            if mi[l, LI_AFF] == 0:
                cg = _build_H(l, mi, lay, matL[l])  # H, L_p = J_p H and each loop's G_y⁻¹
                if not cg < np.inf:
                    status[0], status[2], status[3] = SINGULAR_GY, l, cg
                    return False
    Rv = 6 * L  # B = [−I | L_(l),free], rows limb by limb
    for r in range(Rv):
        for c in range(Kv):
            A[r, c] = 0.0
    for l in range(L):
        Lp, vo = matL[l, M_LP], ix[l, IX_VO]
        for r in range(6):
            A[6 * l + r, r] = -1.0
            for k in range(ix[l, IX_NVF]):
                A[6 * l + r, vo + k] = Lp[r, ix[l, IX_FREE + lay[LAY_NMAX] + k]]
    _normal(A, Rv, Kv, N)
    if not _cholesky_into(N, Kv, Lf):
        status[0], status[2], status[3] = SINGULAR_B, -1, np.inf
        return False
    for l in range(L):  # Z e_a: the rates of a unit rate of actuator a
        Lp, off = matL[l, M_LP], mi[l, LI_ACTOFF]
        for k in range(mi[l, LI_NACT]):
            pa = mi[l, lay[LAY_ACTPOS] + k]
            for r in range(Rv):
                res[r] = 0.0
            for r in range(6):
                res[6 * l + r] = -Lp[r, pa]
            _at_r(A, Rv, Kv, res, dx[Kv:])
            _chol_solve(Lf, Kv, dx[Kv:], dx)
            for c in range(Kv):
                Z[c, off + k] = dx[c]
    for r in range(6):
        acc = 0.0
        for a in range(na):
            acc += Z[r, a] * qda[a]
        sv[2, r] = acc
    for l in range(L):  # Θ_l = H_l Z_l, θ̇_l = Θ_l θ̇_act, the twists and Ḣq̇, −β_l
        n, d = mi[l, LI_N], mi[l, LI_DOF]
        aff = True if general is None else mi[l, LI_AFF] != 0
        bw, mat, vec = bwL[l], matL[l], vecL[l]
        x = vec[V_Q]
        for a in range(na):
            _q_vector(l, mi, lay, ix, a, Z, a, x)
            _h_times(l, mi, mf, lay, mat[M_H], aff, n, d, x, Theta[l, a])
        for i in range(th.shape[1]):
            acc = 0.0
            if i < n:
                for a in range(na):
                    acc += Theta[l, a, i] * qda[a]
            thd[l, i] = acc
        _twists(l, mi, mf, thd[l], bw)
        for i in range(n):
            bw[i, BW_HD] = 0.0
        if not aff:  # Ḣq̇ = −G_y⁻¹ Ġθ̇ per loop (eq. 46–47)
            g = vec[V_G]
            _loop_bias(l, mi, mf, lay, bw, g)
            row = 0
            for lp in range(mi[l, LI_NLOOP]):
                oi = lay[LAY_LOOPS] + LP_SIZE * lp
                m = mi[l, oi + LP_M]
                Gyi = mat[M_GYI + lp]
                for a in range(m):
                    acc = 0.0
                    for b in range(m):
                        acc -= Gyi[a, b] * g[row + b]
                    bw[mi[l, oi + LP_Y + a], BW_HD] = acc
                row += m
        RQ, pQ = _pose_at(mf, l, lay[LAY_QP])  # J̇_pθ̇ = Ad_{Q_p} A_p, from K_p to F_p
        pw, pv = _twist_at(bw, mi[l, LI_PLAT], BW_A)
        aw, av = Ad(RQ, pQ, pw, pv)
        J = mat[M_J]
        for r in range(6):
            acc = aw[r] if r < 3 else av[r - 3]
            if not aff:
                for i in range(n):
                    acc += J[r, i] * bw[i, BW_HD]
            res[6 * l + r] = -acc
    _at_r(A, Rv, Kv, res, dx[Kv:])  # the accelerations at θ̈_act = 0
    _chol_solve(Lf, Kv, dx[Kv:], dx)
    for r in range(6):
        sv[3, r] = dx[r]
    for l in range(L):
        n, d = mi[l, LI_N], mi[l, LI_DOF]
        aff = True if general is None else mi[l, LI_AFF] != 0
        bw, x = bwL[l], vecL[l, V_Q]
        for c in range(d):
            x[c] = 0.0
        vo = ix[l, IX_VO]
        for k in range(ix[l, IX_NVF]):
            x[ix[l, IX_FREE + lay[LAY_NMAX] + k]] = dx[vo + k]
        _h_times(l, mi, mf, lay, matL[l, M_H], aff, n, d, x, thdd[l])
        for i in range(th.shape[1]):
            thdd[l, i] = thdd[l, i] + bw[i, BW_HD] if i < n else 0.0
    b = sv[1]
    for a in range(na):
        b[a] = 0.0
    for l in range(L):  # b = Σ Θ_lᵀ τ_l(θ, θ̇, θ̈⁰) + Θ_pᵀ(φ_p − W^EE)
        bw = bwL[l]
        _rnea(l, mi, mf, thd[l], thdd[l], g0, bw)
        for a in range(na):
            acc = 0.0
            for i in range(mi[l, LI_N]):
                acc += Theta[l, a, i] * bw[i, BW_PHI]
            b[a] += acc
    Rc, pc = (Cd[0, 0, 0], Cd[0, 0, 1], Cd[0, 0, 2], Cd[0, 1, 0], Cd[0, 1, 1], Cd[0, 1, 2], Cd[0, 2, 0], Cd[0, 2, 1],
              Cd[0, 2, 2]), (Cd[0, 0, 3], Cd[0, 1, 3], Cd[0, 2, 3])
    gw, gv = Ad_inv(Rc, pc, (0.0, 0.0, 0.0), (g0[0], g0[1], g0[2]))
    p10 = _params10(Mp, 0, 0)
    fw, fv = _inertia_times(p10, sub((sv[3, 0], sv[3, 1], sv[3, 2]), gw), sub((sv[3, 3], sv[3, 4], sv[3, 5]), gv))
    w, v = (sv[2, 0], sv[2, 1], sv[2, 2]), (sv[2, 3], sv[2, 4], sv[2, 5])
    hw, hv = _inertia_times(p10, w, v)
    cw, cv = coad(w, v, hw, hv)
    phi = (fw[0] - cw[0] - Wee[0], fw[1] - cw[1] - Wee[1], fw[2] - cw[2] - Wee[2],
           fv[0] - cv[0] - Wee[3], fv[1] - cv[1] - Wee[4], fv[2] - cv[2] - Wee[5])
    for a in range(na):
        acc = 0.0
        for r in range(6):
            acc += Z[r, a] * phi[r]
        b[a] = u[a] - (b[a] + acc)
    for a in range(na):  # M_a e_a: the velocity-free passes
        for a2 in range(na):
            Ma[a2, a] = 0.0
        for l in range(L):
            bw = bwL[l]
            _rnea_acc(l, mi, mf, Theta[l, a], bw)
            for a2 in range(na):
                acc = 0.0
                for i in range(mi[l, LI_N]):
                    acc += Theta[l, a2, i] * bw[i, BW_PHI]
                Ma[a2, a] += acc
        mw, mv_ = _inertia_times(p10, (Z[0, a], Z[1, a], Z[2, a]), (Z[3, a], Z[4, a], Z[5, a]))
        for a2 in range(na):
            Ma[a2, a] += Z[0, a2] * mw[0] + Z[1, a2] * mw[1] + Z[2, a2] * mw[2] + Z[3, a2] * mv_[0] + \
                Z[4, a2] * mv_[1] + Z[5, a2] * mv_[2]
    qdd = sv[0]
    if not _cholesky_into(Ma, na, Lf):
        status[0], status[2], status[3] = SINGULAR_MA, -1, np.inf
        return False
    _chol_solve(Lf, na, b, qdd)
    for a in range(na):
        if not np.isfinite(qdd[a]):
            status[0], status[2], status[3] = SINGULAR_MA, -1, np.inf
            return False
    for l in range(L):
        for i in range(mi[l, LI_N]):
            acc = thdd[l, i]
            for a in range(na):
                acc += Theta[l, a, i] * qdd[a]
            thdd[l, i] = acc
    return True


@_internal
def _predict(mi, th, thd, thdd, Theta, sv, qa, h, limit):
    """The next assembly's start: ``θ + h θ̇ + h²/2 θ̈ + Θ (θ_act − θ̃_act)`` from the last evaluation
    (``θ_act``, ``θ̇_act`` in ``sv[5]``, ``sv[6]``, ``θ̈_act`` in ``sv[0]``; ``θ̃_act`` their Taylor
    prediction): the time step's Taylor prediction corrected to the actuator coordinates asked for
    (``h = 0``: a new state at the same time, e.g. RK4's stages 2 and 3). Nothing where the last
    evaluation failed or was replaced (``sv[4, 2] = 0``) or a variable would move by more than
    ``limit`` (the last solution stays the start: the branch)."""
    if sv[4, 2] == 0.0:
        return
    na = qa.shape[0]
    for sweep in range(2):
        for l in range(th.shape[0]):
            for i in range(mi[l, LI_N]):
                dlt = h * (thd[l, i] + 0.5 * h * thdd[l, i])
                for a in range(na):
                    dlt += Theta[l, a, i] * (qa[a] - (sv[5, a] + h * (sv[6, a] + 0.5 * h * sv[0, a])))
                if sweep == 0 and not abs(dlt) <= limit:
                    return
                if sweep == 1:
                    th[l, i] += dlt


@_internal
def _keep(sv, qa, qda):
    """The evaluation's ``θ_act``, ``θ̇_act`` for :func:`_predict`."""
    for a in range(qa.shape[0]):
        sv[5, a], sv[6, a] = qa[a], qda[a]
    sv[4, 2] = 1.0


@_jit
def actuator_rhs(mi, mf, lay, Mp, ix, K, Kv, R, qa, qda, u, g0, Wee, th, th0, limit, bwL, matL, vecL, Cd, A, N, Lf, res,
                 dx, Z, Theta, thd, thdd, Ma, sv, general, tol, max_iter, status):
    """One evaluation of :func:`_state` (arguments there; ``th0`` (L, n_max) scratch), the assembly
    started from the last solution ``th`` corrected to ``qa`` (:func:`_predict`, at most ``limit``
    per variable); ``th`` is kept on failure, the solution on success; ``status[0]`` 0 on success."""
    for l in range(th.shape[0]):
        for j in range(th.shape[1]):
            th0[l, j] = th[l, j]
    _predict(mi, th, thd, thdd, Theta, sv, qa, 0.0, limit)
    if _state(mi, mf, lay, Mp, ix, K, Kv, R, qa, qda, u, g0, Wee, th, bwL, matL, vecL, Cd, A, N, Lf, res, dx, Z,
              Theta, thd, thdd, Ma, sv, general, tol, max_iter, status):
        _keep(sv, qa, qda)
        status[0] = 0
        return
    sv[4, 2] = 0.0
    for l in range(th.shape[0]):
        for j in range(th.shape[1]):
            th[l, j] = th0[l, j]
