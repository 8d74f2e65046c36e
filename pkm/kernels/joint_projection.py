"""The joint form's closure projection (paper 8.1.2, §8.5; :meth:`pkm.sim.joint.JointModel.project`)
and its RK4 with projections, in numba.

After an accepted step θ is put back onto the closure manifold by Gauss–Newton on the stacked
residuals ``r = (g_(l)(θ_(l)); ξ_l = log(C_p(x)⁻¹ C_p(l)))_l`` with the task coordinates ``x`` as
unknowns too, the Jacobian ``[G_(l), 0; D_l J_p(l), −D_l Ad_{E_l⁻¹} P_p]``, ``D_l = dexp⁻¹(−ξ_l) = I +
ad_ξ/2 + ad_ξ²/12 + O(ξ⁴)`` (the residuals are tiny there). Each step is the correction of least
norm: ``Δθ = −(P A_θ)⁺ P r`` with ``P`` the projector onto the complement of ``A_x``'s columns and
``⁺`` truncated to the rank ``k`` the reference found at the closed initial state — here from a
one-sided Jacobi SVD of ``P A_θ`` (its right singular vectors carried from one projection to the
next, so that a sweep or two suffice) — then ``Δx`` by least squares.
"""
from __future__ import annotations

import numpy as np

from pkm.kernels.forward import _input, rk4_stage
from pkm.kernels.ik import _fk, _loop_rows, _platform_jacobian
from pkm.kernels.joint_form import _joint_dy, _joint_state
from pkm.kernels.model import LAY_QP, LI_N, LI_NROWS, LI_PLAT
from pkm.kernels.work import BW_K, M_G, M_J, M_NM, M_SQ, V_G, _internal, _jit, _piece, _pose_at
from pkm.lie.small import log_pose, mm, mtm, mtv, mv, sub

__all__ = ["project", "joint_rk4_projected"]


@_internal
def _closure(mi, mf, lay, R0, local0, axes, th, x, bw, mat, vec, A, Ax, r):
    """The residuals ``r`` and Jacobians ``A`` (rows × Σn) and ``Ax`` (rows × δ_p) at ``(θ, x)``
    (module docstring); returns ``max |r|``."""
    l0, l1, l2 = local0[0], local0[1], local0[2]
    for i in range(axes.shape[0]):
        if axes[i] == 0:
            l0 = x[i]
        elif axes[i] == 1:
            l1 = x[i]
        else:
            l2 = x[i]
    R0t = (R0[0, 0], R0[0, 1], R0[0, 2], R0[1, 0], R0[1, 1], R0[1, 2], R0[2, 0], R0[2, 1], R0[2, 2])
    px = mv(R0t, (l0, l1, l2))
    row, col, err = 0, 0, 0.0
    nt = A.shape[1]
    for l in range(mi.shape[0]):
        n, nr = mi[l, LI_N], mi[l, LI_NROWS]
        for a in range(nr + 6):
            for j in range(nt):
                A[row + a, j] = 0.0
            for i in range(axes.shape[0]):
                Ax[row + a, i] = 0.0
        _fk(l, mi, mf, th[l], bw, True)
        Rk, pk = _pose_at(bw, mi[l, LI_PLAT], BW_K)
        Rq, pq = _pose_at(mf, l, lay[LAY_QP] + 12)
        Rp, rp = mm(Rk, Rq), (mv(Rk, pq)[0] + pk[0], mv(Rk, pq)[1] + pk[1], mv(Rk, pq)[2] + pk[2])
        G, g = mat[M_G], vec[V_G]
        err = max(err, _loop_rows(l, mi, mf, lay, bw, G, g))
        for a in range(nr):
            r[row + a] = g[a]
            for j in range(n):
                A[row + a, col + j] = G[a, j]
        RE, pE = mtm(R0t, Rp), mtv(R0t, sub(rp, px))   # E = C_p(x)⁻¹ C_p(l)
        w, v = log_pose(RE, pE)
        xi = (w[0], w[1], w[2], v[0], v[1], v[2])
        for a in range(6):
            r[row + nr + a] = xi[a]
            err = max(err, abs(xi[a]))
        J = mat[M_J]
        for a in range(6):
            for j in range(n):
                J[a, j] = 0.0
        _platform_jacobian(l, mi, mf, bw, Rp, rp, J)
        D = mat[M_NM]   # dexp⁻¹(−ξ) = I + ad_ξ/2 + ad_ξ²/12, ad_ξ = [ŵ 0; v̂ ŵ]
        ad = mat[M_SQ]
        for a in range(6):
            for b in range(6):
                ad[a, b] = 0.0
        for blk in range(2):
            o = 3 * blk
            ad[o + 0, o + 1], ad[o + 0, o + 2], ad[o + 1, o + 2] = -w[2], w[1], -w[0]
            ad[o + 1, o + 0], ad[o + 2, o + 0], ad[o + 2, o + 1] = w[2], -w[1], w[0]
        ad[3, 1], ad[3, 2], ad[4, 2] = -v[2], v[1], -v[0]
        ad[4, 0], ad[5, 0], ad[5, 1] = v[2], -v[1], v[0]
        for a in range(6):
            for b in range(6):
                acc = 0.0
                for c in range(6):
                    acc += ad[a, c] * ad[c, b]
                D[a, b] = (1.0 if a == b else 0.0) + 0.5 * ad[a, b] + acc / 12.0
        for a in range(6):
            for j in range(n):
                acc = 0.0
                for b in range(6):
                    acc += D[a, b] * J[b, j]
                A[row + nr + a, col + j] = acc
        # Ad_{E⁻¹} P_p: P_p selects the translational columns 3 + axes[i]; Ad_{E⁻¹} (0; e) = (0; R_Eᵀ e)
        for i in range(axes.shape[0]):
            c3 = axes[i]
            e = (RE[3 * c3], RE[3 * c3 + 1], RE[3 * c3 + 2])   # R_Eᵀ e_c: row c3 of R_E
            for a in range(6):
                Ax[row + nr + a, i] = -(D[a, 3] * e[0] + D[a, 4] * e[1] + D[a, 5] * e[2])
        row += nr + 6
        col += n
    return err


@_internal
def _ax_solve(Ax, rows, dp, b, out, N):
    """``out = (AxᵀAx)⁻¹ Axᵀ b`` (least squares, δ_p ≤ 3 unknowns; ``N`` scratch)."""
    for a in range(dp):
        for c in range(dp):
            acc = 0.0
            for i in range(rows):
                acc += Ax[i, a] * Ax[i, c]
            N[a, c] = acc
        acc = 0.0
        for i in range(rows):
            acc += Ax[i, a] * b[i]
        N[a, 3] = acc
    for a in range(dp):   # Gauss–Jordan on the small SPD system
        p = N[a, a]
        for c in range(a, 4):
            N[a, c] /= p
        for e in range(dp):
            if e != a:
                f = N[e, a]
                for c in range(a, 4):
                    N[e, c] -= f * N[a, c]
    for a in range(dp):
        out[a] = N[a, 3]


@_internal
def _jacobi(B, rows, n, V):
    """One-sided Jacobi: rotate the columns of ``B`` (rows × n) and of ``V`` (n × n) until the
    columns of ``B`` are orthogonal (``B ← B V``, ``V`` accumulating the rotations)."""
    for sweep in range(60):
        rotated = False
        for i in range(n - 1):
            for j in range(i + 1, n):
                a = b = c = 0.0
                for k in range(rows):
                    a += B[k, i] * B[k, i]
                    b += B[k, j] * B[k, j]
                    c += B[k, i] * B[k, j]
                if a == 0.0 or b == 0.0 or abs(c) <= 1e-15 * np.sqrt(a * b):
                    continue
                rotated = True
                zeta = (b - a) / (2.0 * c)
                t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
                cs = 1.0 / np.sqrt(1.0 + t * t)
                sn = cs * t
                for k in range(rows):
                    bi, bj = B[k, i], B[k, j]
                    B[k, i], B[k, j] = cs * bi - sn * bj, sn * bi + cs * bj
                for k in range(n):
                    vi, vj = V[k, i], V[k, j]
                    V[k, i], V[k, j] = cs * vi - sn * vj, sn * vi + cs * vj
        if not rotated:
            return


@_piece
def project(mi, mf, lay, R0, local0, axes, rank, th, x, bw, mat, vec, A, Ax, r, B, V, pr, sv, N, tol, max_iter,
            out):
    """:meth:`pkm.sim.joint.JointModel.project` on ``th`` (L, n_max) from ``x`` (its task coordinates,
    the mean platform position), in place; ``V`` (Σn × Σn) the last projection's right singular
    vectors (or the identity). Writes ``out = (residual before, largest |Δθ|, iterations)``; returns
    False where it does not converge (``out[0]`` then the last residual)."""
    rows, nt, dp = A.shape[0], A.shape[1], axes.shape[0]
    before, err, big = np.inf, np.inf, 0.0
    for j in range(nt):
        pr[3 * nt + j] = 0.0
    it = 0
    for it in range(max_iter + 1):
        prev = err
        err = _closure(mi, mf, lay, R0, local0, axes, th, x, bw, mat, vec, A, Ax, r)
        if it == 0:
            before = err
        if err <= tol:
            break
        if it >= 2 and err > 0.1 * prev and err <= 1e3 * tol:
            break
        if not np.isfinite(err) or it == max_iter:
            out[0], out[1], out[2] = err, big, it
            return False
        _ax_solve(Ax, rows, dp, r, pr, N)   # P r = r − Ax (AxᵀAx)⁻¹ Axᵀ r
        for i in range(rows):
            acc = 0.0
            for a in range(dp):
                acc += Ax[i, a] * pr[a]
            sv[i] = r[i] - acc
        for j in range(nt):   # P A_θ
            for i in range(rows):
                pr[i] = A[i, j]
            _ax_solve(Ax, rows, dp, pr, pr[rows:], N)
            for i in range(rows):
                acc = 0.0
                for a in range(dp):
                    acc += Ax[i, a] * pr[rows + a]
                B[i, j] = A[i, j] - acc
        for i in range(rows):   # B ← (P A_θ) V: start from the last projection's singular vectors
            for j in range(nt):
                pr[j] = B[i, j]
            for j in range(nt):
                acc = 0.0
                for k in range(nt):
                    acc += pr[k] * V[k, j]
                B[i, j] = acc
        _jacobi(B, rows, nt, V)
        for j in range(nt):   # the squared singular values (column norms), largest ``rank`` kept
            acc = 0.0
            for i in range(rows):
                acc += B[i, j] * B[i, j]
            pr[j] = acc
        for j in range(nt):
            pr[nt + j] = 0.0   # Δθ
        for q in range(rank):
            best, jb = -1.0, -1
            for j in range(nt):
                if pr[j] > best:
                    best, jb = pr[j], j
            if not best > 0.0:
                break
            pr[jb] = -1.0
            acc = 0.0
            for i in range(rows):
                acc += B[i, jb] * sv[i]
            acc /= best
            for k in range(nt):
                pr[nt + k] -= V[k, jb] * acc
        for i in range(rows):   # Δx = −lstsq(Ax, r + A_θ Δθ)
            acc = r[i]
            for j in range(nt):
                acc += A[i, j] * pr[nt + j]
            sv[i] = acc
        _ax_solve(Ax, rows, dp, sv, pr[2 * nt:], N)
        for a in range(dp):
            x[a] -= pr[2 * nt + a]
        o = 0
        for l in range(th.shape[0]):
            for j in range(mi[l, LI_N]):
                th[l, j] += pr[nt + o + j]
                pr[3 * nt + o + j] += pr[nt + o + j]   # the projection's Δθ so far
            o += mi[l, LI_N]
    for j in range(nt):
        big = max(big, abs(pr[3 * nt + j]))
    out[0], out[1], out[2] = before, big, it
    return True


#: Status codes of :func:`joint_rk4_projected` beside the forward kernel's: a row of J_IK turned by
#: more than 90° within a step (value: the actuator), the projection did not converge (value: its residual).
TURNED, NOT_PROJECTED = 11, 12
#: … and J_IK's 2-norm condition number above the run's ``max_cond`` at an evaluation (value: it), the
#: reference's check of every evaluation (:meth:`pkm.sim.joint.JointRhs._condition`).
ILL_JIK = 13


@_internal
def _jik_ok(pJIK, max_cond, jw, status):
    """Whether ``J_IK = pJIK[0]`` is finite with a 2-norm condition number ≤ ``max_cond`` (else the
    status :data:`ILL_JIK`, its condition number as the value); no check for ``max_cond = inf``
    beyond finiteness, as the reference's. ``jw`` (n_act + δ_p, δ_p): scratch."""
    J = pJIK[0]
    for a in range(J.shape[0]):
        for i in range(J.shape[1]):
            if not np.isfinite(J[a, i]):
                status[0], status[2], status[3] = ILL_JIK, -1, np.inf
                return False
    if max_cond == np.inf:
        return True
    na, dp = J.shape[0], J.shape[1]
    B, V = jw[:na], jw[na:na + dp]   # σ(J): the column norms after one-sided Jacobi (accurate σ_min)
    for a in range(na):
        for i in range(dp):
            B[a, i] = J[a, i]
    for a in range(dp):
        for i in range(dp):
            V[a, i] = 1.0 if a == i else 0.0
    _jacobi(B, J.shape[0], J.shape[1], V)
    lo, hi = np.inf, 0.0
    for i in range(J.shape[1]):
        norm = 0.0
        for a in range(J.shape[0]):
            norm += B[a, i] * B[a, i]
        lo, hi = min(lo, np.sqrt(norm)), max(hi, np.sqrt(norm))
    c = hi / lo if lo > 0.0 else np.inf
    if not c <= max_cond:
        status[0], status[2], status[3] = ILL_JIK, -1, c
        return False
    return True


@_jit
def joint_rk4_projected(n_steps, T, y0, tb, uc, mi, mf, lay, Mp, d_static, dp_static, R0, local0, axes, g0, pCd, pVp,
                        pdVp, pWee, pthd, pthdd, ptau, pJIK, plimbW, pplatW, th, bw, mat, vec, general, thresh, xdd,
                        thd, thdd, x, rank, A, Ax, r, B, V, pr, sv, N, tol, max_iter, J0, proj, Y, scratch, u, status,
                        max_cond, resume, jw, do_project):
    """Classical RK4 on the joint form's ``y = (θ, V_t, w)`` (:func:`pkm.kernels.joint_form._joint_state`,
    eq. 133–134 and the actuator work ``ẇ = u·J_IK V_t``) from ``y0`` over the step ends ``T``, forces
    from the piecewise cubic ``(tb, uc)``, with the reference's step acceptance
    (:meth:`pkm.sim.joint.JointRhs.accept`): after each step the check that no row of J_IK turned by
    more than 90° since the last accepted state (:data:`TURNED`), then the projection of θ
    (:func:`project`, its ``(residual before, largest |Δθ|, iterations)`` into ``proj[s]``); the next
    step starts from the projected state, the outputs ``Y`` are the integrated (unprojected) ones,
    as the reference's. ``max_cond``: every evaluation (stages and step ends) stops the run with
    :data:`ILL_JIK` where J_IK's condition number exceeds it (:func:`_jik_ok`, scratch ``jw``). ``resume``: ``y0`` is the
    projected state after an earlier call's last step and ``J0`` that call's last accepted J_IK (the
    next chunk of one run, :mod:`pkm.sim.rk4_forms`: the same steps as one call); ``scratch[5]`` holds
    the projected state after the last step. ``do_project`` False (the joint form's ``project=False``):
    the check without the projection (``proj`` and ``rank`` unused), as the reference's ``accept``."""
    ny, dp = y0.shape[0], axes.shape[0]
    n = ny - dp - 1
    k1, k2, k3, k4, ys, y = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4], scratch[5]
    for i in range(ny):
        Y[0, i] = y0[i]
        y[i] = y0[i]
    for s in range(n_steps):
        t = T[s]
        h = T[s + 1] - t
        for stage in range(4):
            ts, c, kin, out = rk4_stage(stage, t, h, k1, k2, k3, k4)
            for i in range(ny):
                ys[i] = y[i] + c * kin[i]
            _input(tb, uc, ts, u)
            if not _joint_state(mi, mf, lay, Mp, d_static, dp_static, ys[:n], ys[n:n + dp], u, R0, local0, axes, g0,
                                pCd, pVp, pdVp, pWee, pthd, pthdd, ptau, pJIK, plimbW, pplatW, th, bw, mat, vec,
                                general, thresh, xdd, thd, thdd, x, status):
                status[1] = s
                return
            if not _jik_ok(pJIK, max_cond, jw, status):
                status[1] = s
                return
            if s == 0 and stage == 0 and not resume:   # J_IK of the initial (accepted) state
                for a in range(J0.shape[0]):
                    for i in range(dp):
                        J0[a, i] = pJIK[0, a, i]
            _joint_dy(mi, th, thd, xdd, pJIK, u, ys, n, dp, out)
        for i in range(ny):
            Y[s + 1, i] = y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
            y[i] = Y[s + 1, i]
        _input(tb, uc, T[s + 1], u)   # J_IK and x at the step's end (its θ unpacked into th)
        if not _joint_state(mi, mf, lay, Mp, d_static, dp_static, y[:n], y[n:n + dp], u, R0, local0, axes, g0, pCd,
                            pVp, pdVp, pWee, pthd, pthdd, ptau, pJIK, plimbW, pplatW, th, bw, mat, vec, general,
                            thresh, xdd, thd, thdd, x, status):
            status[1] = s + 1
            return
        if not _jik_ok(pJIK, max_cond, jw, status):
            status[1] = s + 1
            return
        for a in range(J0.shape[0]):
            turn = 0.0
            for i in range(dp):
                turn += pJIK[0, a, i] * J0[a, i]
            if not turn > 0.0:
                status[0], status[1], status[2], status[3] = TURNED, s + 1, -1, a
                return
            for i in range(dp):
                J0[a, i] = pJIK[0, a, i]
        if not do_project:   # project=False: the integrated state goes on as it is
            continue
        if not project(mi, mf, lay, R0, local0, axes, rank, th, x, bw, mat, vec, A, Ax, r, B, V, pr, sv, N, tol,
                       max_iter, proj[s]):
            status[0], status[1], status[2], status[3] = NOT_PROJECTED, s + 1, -1, proj[s, 0]
            return
        o = 0
        for l in range(th.shape[0]):
            for j in range(mi[l, LI_N]):
                y[o + j] = th[l, j]
            o += mi[l, LI_N]
    status[0] = 0
