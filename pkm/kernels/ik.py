"""The batch kernel's inverse kinematics, on a :class:`pkm.kernels.model.KernelModel` (paper Sec. 3.5–3.7, eq. 75–84; Sec. 4–5, eq. 85–98).

Forward kinematics in joint frames (``K_i = K_{parent} P_i Z(θ_i)``, :func:`_fk`), the platform
pose error ``log(C_p⁻¹C_d)`` (eq. 96) and body-fixed Jacobian (eq. 154–156), the loops'
cut-joint residuals and constraint rows ``G`` in world axes (eq. 12–13, 16, 33), and the
Gauss–Newton solvers: in ``q`` for a limb with a constant ``H`` (:func:`_solve_affine`, paper Sec. 3.3, Ex. 7–9),
on all tree variables with the loops' rows otherwise (:func:`_solve_general`), and ``H`` from
``G`` (:func:`_build_H`, eq. 48). Also the scratch layout (``BW_*``, ``M_*``, ``V_*``,
:func:`make_work`) that these pieces and :mod:`pkm.kernels.inverse_dynamics` share.

Everything here is called from the numba code of :mod:`pkm.kernels.inverse_dynamics`; see there for why the
pieces take few, flat arrays. Most are compiled without a Python entry point (``_internal``): call
them from numba code only.
"""

from __future__ import annotations

import numpy as np

from pkm.algorithms.inverse_kinematics import STALL
from pkm.kernels.model import (BF_A, BF_B, BF_P, BF_SIZE, LAY_CC, LAY_DMAX, LAY_HC, LAY_HCOL, LAY_HNZ, LAY_LOOPF,
                               LAY_LOOPS, LAY_MARKS, LAY_NMAX, LAY_QIDX, LAY_QP, LI_DOF, LI_N, LI_NLOOP, LI_NROWS,
                               LI_PLAT, LOOP_TOL, LP_K, LP_M, LP_NN, LP_R, LP_ROWS, LP_SIZE, LP_Y, MI_PARENT, PF_C0,
                               PF_DK, PF_DR, PF_EK, PF_ER, PF_N, PF_SIZE)
from pkm.kernels.work import (BW_K, BW_T, BW_TRIG, M_CHORD, M_G, M_GY, M_GYI, M_H, M_J, M_LP, M_NM, M_SQ, V_DX, V_E,
                              V_G, V_Q, _internal, _piece, _pose_at, _set_pose_at, _vec_at)
from pkm.lie.linalg import cholesky_solve_into, inverse_into, norm1
from pkm.lie.small import add, cross, dot, get_pose, log_pose, mm, mtm, mtv, mv, scale, sub

#: Largest Newton step (rad) for which sines and cosines are updated by the series (:func:`_fk`).
SERIES_STEP = 1e-2
#: An IK iterate is accepted at ``CHORD_MARGIN · tol`` (:func:`_converged`): a Newton step usually
#: lands far below ``tol`` anyway, and a solution this close to the exact one does not depend on
#: where Newton started (so chunks and thread counts give the same results to ~1e-14).
CHORD_MARGIN = 1e-2
#: ... or, between that and ``tol · max(1, max|θ|)``, once a step reduced the error by less than
#: ``STALL`` (:mod:`pkm.algorithms.inverse_kinematics`): Newton has reached the rounding floor,
#: which grows with the joint values.

#: The SIMD path (:mod:`pkm.kernels.simd_kernel`): a constant-H limb's start whose pose error is at most
#: ``CHORD_REACH`` (m, rad) takes chord steps in the lanes, up to ``CHORD_STEPS``, each of which must cut the error
#: to ``CHORD_CONTRACTION`` of the last, until the error is ``CHORD_MARGIN · tol`` (as the scalar IK accepts an
#: iterate); else the lane's sample goes to the scalar IK. With
#: ``P`` the last two samples' ``L_p⁺`` extrapolated, a step leaves ``O(|e| h³ + |e|²)`` of a start ``e``: one step from
#: a start within ``tol`` (a smooth trajectory), two or three from one off by the noise of measured or rounded
#: samples, whose extrapolation misses by 10–100 times the noise (1e-5 m of noise: starts beyond 1e-4). Those had
#: each gone to the scalar IK: the Delta ran at the scalar kernel's speed with noise of 1e-12 m (2.3 µs per sample
#: against 0.4 µs; benchmarks/bench_simd_noise.py). A step from a start this far cannot leave the branch: the
#: contraction it must show is that of Newton's basin around the predicted solution. A general limb
#: (:mod:`pkm.kernels.simd_general_limb`) takes up to ``GENERAL_CHORD_STEPS`` chord steps the same way before its
#: geometry: with the last sample's geometry, not an extrapolation, a step contracts by ~1e-2 only, and a start off
#: by 1e-6…1e-5 needs more steps before the geometry than a constant-H limb's (eight instead of four: 3R[2US] 1.07 →
#: 0.98 µs per sample with 1e-6 m of noise, IRSBot-2 0.78 → 0.67, AVX-512; smooth samples never take them).
CHORD_REACH, CHORD_STEPS, CHORD_CONTRACTION, GENERAL_CHORD_STEPS = 1e-2, 4, 0.25, 8

# Taylor coefficients of sin (d³ … d⁹) and cos (d⁴ … d¹⁰)
_S3, _S5, _S7, _S9 = -1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0
_C4, _C6, _C8, _C10 = 1.0 / 24.0, -1.0 / 720.0, 1.0 / 40320.0, -1.0 / 3628800.0


@_internal
def _sincos_step(d):
    """``(sin d, cos d)`` for ``|d| ≤ SERIES_STEP`` by their Taylor series (truncation < 1e-22).

    Horner in ``t = d²`` with the coefficients as constants: a division by a constant is not
    turned into a multiplication without fastmath, and eight dependent divisions made this the
    most expensive part of the forward kinematics."""
    t = d * d
    s = d * (1.0 + t * (_S3 + t * (_S5 + t * (_S7 + t * _S9))))
    c = 1.0 + t * (-0.5 + t * (_C4 + t * (_C6 + t * (_C8 + t * _C10))))
    return s, c


# ----------------------------------------------------------------------------- kinematics
@_internal
def _fk(l, mi, mf, th, bw, fresh):
    """Joint-frame poses ``K_i = K_{parent} T_i``, ``T_i = P_i Z(θ_i)`` of limb ``l`` (eq. 1–2 in
    joint frames, :mod:`pkm.kernels.model`) into ``bw[:, BW_K]`` and ``bw[:, BW_T]``.

    ``bw[i, BW_TRIG:] = (cos, sin, θ)`` of the last evaluation. Unless ``fresh``, an angle that
    moved by at most ``SERIES_STEP`` since then is updated by the angle-addition formula with
    :func:`_sincos_step` (a Newton step within one solve: a few roundings, no drift over samples
    since every solve starts fresh).
    """
    for i in range(mi[l, LI_N]):
        o = BF_SIZE * i
        a, b = mf[l, o + BF_A], mf[l, o + BF_B]
        x = th[i]
        c, s = 1.0, 0.0
        if a != 0.0:
            d = x - bw[i, BW_TRIG + 2]
            if not fresh and abs(d) <= SERIES_STEP:
                sd, cd = _sincos_step(d)
                c0, s0 = bw[i, BW_TRIG], bw[i, BW_TRIG + 1]
                c, s = c0 * cd - s0 * sd, s0 * cd + c0 * sd
            else:
                c, s = np.cos(x), np.sin(x)
            bw[i, BW_TRIG], bw[i, BW_TRIG + 1], bw[i, BW_TRIG + 2] = c, s, x
        P, p = _pose_at(mf, l, o + BF_P)
        R = (c * P[0] + s * P[1], c * P[1] - s * P[0], P[2],
             c * P[3] + s * P[4], c * P[4] - s * P[3], P[5],
             c * P[6] + s * P[7], c * P[7] - s * P[6], P[8])
        bx = b * x
        p = (p[0] + bx * P[2], p[1] + bx * P[5], p[2] + bx * P[8])
        _set_pose_at(bw, i, BW_T, R, p)
        k = mi[l, MI_PARENT + i]
        if k >= 0:
            Rk, pk = _pose_at(bw, k, BW_K)
            R, p = mm(Rk, R), add(mv(Rk, p), pk)
        _set_pose_at(bw, i, BW_K, R, p)


@_internal
def _platform_error(l, mi, mf, lay, bw, Cd, s, e):
    """Platform pose ``C_p = K_p Q_p⁻¹`` (``F_p``) and ``e[:6] = log(C_p⁻¹ C_d)`` (eq. 96) with
    ``C_d = Cd[s]``. Returns ``(|e|, R_p, r_p)``."""
    Rk, pk = _pose_at(bw, mi[l, LI_PLAT], BW_K)
    Rq, pq = _pose_at(mf, l, lay[LAY_QP] + 12)  # Q_p⁻¹
    Rp, rp = mm(Rk, Rq), add(mv(Rk, pq), pk)
    Rd, rd = get_pose(Cd, s)
    w, v = log_pose(mtm(Rp, Rd), mtv(Rp, sub(rd, rp)))
    e[0], e[1], e[2] = w
    e[3], e[4], e[5] = v
    return np.sqrt(dot(w, w) + dot(v, v)), Rp, rp


@_internal
def _platform_jacobian(l, mi, mf, bw, Rp, rp, J):
    """Columns ``j ⪯ p`` of the platform's body-fixed Jacobian in ``F_p`` into ``J`` (6, n):
    ``J_{p,j} = Ad_{C_p}⁻¹ S_j`` with the world screw ``S_j = (a z_j; o_j × a z_j + b z_j)`` read off
    ``K_j`` (eq. 154–156). The other columns are not touched (the caller keeps them zero)."""
    j = mi[l, LI_PLAT]
    while j >= 0:
        R, o = _pose_at(bw, j, BW_K)
        z = (R[2], R[5], R[8])
        az = scale(mf[l, BF_SIZE * j + BF_A], z)
        w = mtv(Rp, az)
        v = mtv(Rp, add(cross(sub(o, rp), az), scale(mf[l, BF_SIZE * j + BF_B], z)))
        J[0, j], J[1, j], J[2, j] = w
        J[3, j], J[4, j], J[5, j] = v
        j = mi[l, MI_PARENT + j]


@_internal
def _loop_points(l, mi, mf, lay, bw, lp):
    """Loop ``lp``'s cut-joint geometry in world axes: ``R_k, R_r``, the joint points ``x_k`` (on
    body k) and ``x_r`` (on r), ``Δ = x_r − x_k``, and the record offsets ``(oi, of)``."""
    oi = lay[LAY_LOOPS] + LP_SIZE * lp
    of = lay[LAY_LOOPF] + PF_SIZE * lp
    Rk, ok = _pose_at(bw, mi[l, oi + LP_K], BW_K)
    Rr, orr = _pose_at(bw, mi[l, oi + LP_R], BW_K)
    xk = add(ok, mv(Rk, _vec_at(mf, l, of + PF_DK)))
    xr = add(orr, mv(Rr, _vec_at(mf, l, of + PF_DR)))
    return Rk, Rr, xk, xr, sub(xr, xk), oi, of


@_internal
def _loop_row(l, mi, mf, oi, of, ia, Rk, Rr, D):
    """Selected row ``ia`` of a loop: ``(is_distance, N or R_k e_k, R_r e_r, g)``: a distance row
    is ``g = N·Δ`` with ``N = R_k n``, an orientation row ``g = (R_k e_k)·(R_r e_r) − c0`` (eq. 16, 33)."""
    ri = mi[l, oi + LP_ROWS + ia]
    nn = mi[l, oi + LP_NN]
    if ri < nn:
        N = mv(Rk, _vec_at(mf, l, of + PF_N + 3 * ri))
        return True, N, N, dot(N, D)
    jj = ri - nn
    Ek = mv(Rk, _vec_at(mf, l, of + PF_EK + 3 * jj))
    Er = mv(Rr, _vec_at(mf, l, of + PF_ER + 3 * jj))
    return False, Ek, Er, dot(Ek, Er) - mf[l, of + PF_C0 + jj]


@_internal
def _loop_residuals(l, mi, mf, lay, bw):
    """``max |g|`` over the loops' selected residuals (eq. 12)."""
    gmax = 0.0
    for lp in range(mi[l, LI_NLOOP]):
        Rk, Rr, xk, xr, D, oi, of = _loop_points(l, mi, mf, lay, bw, lp)
        for ia in range(mi[l, oi + LP_M]):
            gmax = max(gmax, abs(_loop_row(l, mi, mf, oi, of, ia, Rk, Rr, D)[3]))
    return gmax


@_internal
def _loop_rows(l, mi, mf, lay, bw, G, g):
    """The loops' selected residuals ``g`` (eq. 12, 16, 33) into ``g`` and their rows of ``G``
    (eq. 13) into ``G`` (Σm, n). Returns ``max |g|``.

    Joint ``j`` (world screw ``(a z; ·)`` through ``o``) moves a point ``x`` at
    ``u(x) = a z × (x − o) + b z``, so, differentiating the rows of :func:`_loop_row`,
    ``G_j = a (z × N)·Δ − N·u(x_k)`` (j on k's path only) or ``N·u(x_r)`` (on r's only) for a
    distance row and ``± a z·(E_k × E_r)`` for an orientation row; joints on both paths cancel.
    """
    n = mi[l, LI_N]
    gmax = 0.0
    row = 0
    for lp in range(mi[l, LI_NLOOP]):
        Rk, Rr, xk, xr, D, oi, of = _loop_points(l, mi, mf, lay, bw, lp)
        om = lay[LAY_MARKS] + lay[LAY_NMAX] * lp  # path marks of the loop's joints (pkm.kernels.model)
        for ia in range(mi[l, oi + LP_M]):
            dist, N, Er, val = _loop_row(l, mi, mf, oi, of, ia, Rk, Rr, D)
            g[row] = val
            gmax = max(gmax, abs(val))
            ExE = cross(N, Er)
            for j in range(n):
                mk = mi[l, om + j]
                col = 0.0
                if mk != 0:
                    Rj, o = _pose_at(bw, j, BW_K)
                    a = mf[l, BF_SIZE * j + BF_A]
                    z = (Rj[2], Rj[5], Rj[8])
                    if dist:
                        u = add(scale(a, cross(z, sub(xk if mk == 1 else xr, o))), scale(mf[l, BF_SIZE * j + BF_B], z))
                        col = a * dot(cross(z, N), D) - dot(N, u) if mk == 1 else dot(N, u)
                    else:
                        col = a * dot(z, ExE) if mk == 1 else -a * dot(z, ExE)
                G[row, j] = col
            row += 1
    return gmax


@_internal
def _converged(perr, prev, it, tol, th, n):
    """Whether the IK iterate ``it`` (after at least one step) with pose error ``perr`` (``prev``
    the step before) is a solution: ``perr ≤ CHORD_MARGIN · tol``, or Newton stalled at the rounding
    floor within ``tol · max(1, max|θ|)``."""
    if it < 1:
        return False
    if perr <= CHORD_MARGIN * tol:
        return True
    if it < 2 or perr <= STALL * prev:
        return False
    big = 1.0
    for i in range(n):
        big = max(big, abs(th[i]))
    return perr <= tol * big


@_internal
def _take_step(x, dx, k):
    """``x[:k] += dx[:k]``, scaled so that no component moves more than 0.5 (rad or m) at once
    (as :func:`pkm.algorithms.limb._limit`)."""
    big = 0.0
    for j in range(k):
        big = max(big, abs(dx[j]))
    sc = 0.5 / big if big > 0.5 else 1.0
    for j in range(k):
        x[j] += sc * dx[j]


@_internal
def _dof(l, mi, d_static):
    """Limb ``l``'s ``δ_l``: the compile-time constant ``len(d_static)`` when every limb has the
    same (:class:`pkm.kernels.model.KernelModel`), else read from ``mi``."""
    return len(d_static) if len(d_static) > 0 else mi[l, LI_DOF]


# ----------------------------------------------------------------------------- Gauss–Newton
@_internal
def _normal_equations(A, G, nr, k, e, g, Nm):
    """Gauss–Newton normal equations of ``[A; G] Δx = (e; −g)`` in ``k`` unknowns: ``Nm[:k, :k] =
    AᵀA + GᵀG`` and the right-hand side ``Aᵀe − Gᵀg`` into ``e[6:6+k]`` (``A`` has 6 rows, ``G`` the
    first ``nr``)."""
    for a in range(k):
        for b in range(a + 1):
            acc = 0.0
            for r in range(6):
                acc += A[r, a] * A[r, b]
            for r in range(nr):
                acc += G[r, a] * G[r, b]
            Nm[a, b] = acc
            Nm[b, a] = acc
        acc = 0.0
        for r in range(6):
            acc += A[r, a] * e[r]
        for r in range(nr):
            acc -= G[r, a] * g[r]
        e[6 + a] = acc


@_piece
def _solve_affine(l, mi, mf, lay, d_static, Cd, s, th, bw, mat, vec, tol, max_iter, chord, accept):
    """Geometric IK of limb ``l`` with an affine loop closure ``θ = H q + c`` (constant ``H``,
    :meth:`pkm.algorithms.limb.LimbModel.affine_closure`, paper Sec. 3.3, Ex. 7–9) towards ``C_d = Cd[s]``.

    Gauss–Newton in ``q`` on the platform pose error, ``L_p Δq = log(C_p⁻¹C_d)`` with ``L_p = J_p H``
    (eq. 80, 96), from ``q = θ[q_index]`` of the given ``th`` (``d_static``: see
    :class:`pkm.kernels.model.KernelModel`). With ``chord`` the first step is a
    chord step ``Δq = P e`` with ``P = mat[M_CHORD]`` (the ``L_p⁺`` of the previous samples,
    extrapolated, :func:`pkm.kernels.inverse_dynamics._chord_matrix`): no Jacobian, normal equations or
    factorisation at the start, which is already close. At least one step is always taken, so a
    solution is never a bare prediction; an iterate is accepted at ``CHORD_MARGIN · tol`` (or at the
    rounding floor, :func:`_converged`), else Newton goes on. Every iterate closes the loops;
    at the solution their residuals are still evaluated and must be ≤ ``LOOP_TOL``. On success
    ``th``, ``bw``'s poses, ``J_p`` and ``L_p`` hold the solution's values. Returns ``(converged,
    pose error, loop error, at_start)``.

    With ``chord`` and ``accept``, a start whose pose error is already ≤ ``CHORD_MARGIN · tol`` (the
    acceptance of any iterate) is accepted without the chord step and its second forward
    kinematics: ``J_p`` and ``L_p`` are evaluated there and ``at_start`` is True. The caller must then
    apply the Newton correction ``Δq = L_p⁺ e`` with the ``L_p⁺`` its rate IK computes at that point
    anyway (:func:`pkm.kernels.inverse_dynamics._correct_start`; ``e`` stays in ``vec[V_E]``), which
    leaves an error O(|e|²) as the step it replaces. (Accepting at ``tol`` itself saved ~10 % more
    on the Delta, but the dynamics is then evaluated up to ``tol`` away from the solution: torques
    2.6e-13 relative off the reference instead of ~4e-14.)
    """
    n, d = mi[l, LI_N], _dof(l, mi, d_static)
    oq, oh, oc, onz, ocol = lay[LAY_QIDX], lay[LAY_HC], lay[LAY_CC], lay[LAY_HNZ], lay[LAY_HCOL]
    dmax = lay[LAY_DMAX]
    J, Lp, Nm, e, q, dx = mat[M_J], mat[M_LP], mat[M_NM], vec[V_E], vec[V_Q], vec[V_DX]
    for r in range(6):
        for j in range(n):
            J[r, j] = 0.0
    for c in range(d):
        q[c] = th[mi[l, oq + c]]
    perr = np.inf
    for it in range(max_iter + 1):
        _h_times(l, mi, mf, lay, mat[M_H], True, n, d, q, th)  # θ = H q + c over H's nonzeros
        for i in range(n):
            th[i] += mf[l, oc + i]
        _fk(l, mi, mf, th, bw, it == 0)
        prev = perr
        perr, Rp, rp = _platform_error(l, mi, mf, lay, bw, Cd, s, e)
        if not np.isfinite(perr):
            break
        at_start = accept and chord and it == 0 and perr <= CHORD_MARGIN * tol
        if chord and it == 0 and max_iter > 0 and not at_start:
            P = mat[M_CHORD]
            for c in range(d):
                acc = 0.0
                for r in range(6):
                    acc += P[c, r] * e[r]
                dx[c] = acc
            _take_step(q, dx, d)
            continue
        _platform_jacobian(l, mi, mf, bw, Rp, rp, J)
        for c in range(d):  # L_p = J_p H (eq. 80) over H's nonzeros on the platform's path
            for r in range(6):
                Lp[r, c] = 0.0
        j = mi[l, LI_PLAT]
        while j >= 0:
            for k in range(mi[l, onz + j]):
                c, hv = mi[l, ocol + dmax * j + k], mf[l, oh + dmax * j + k]
                for r in range(6):
                    Lp[r, c] += hv * J[r, j]
            j = mi[l, MI_PARENT + j]
        if at_start or _converged(perr, prev, it, tol, th, n):
            gerr = _loop_residuals(l, mi, mf, lay, bw)
            return gerr <= LOOP_TOL, perr, gerr, at_start
        if it == max_iter:
            break
        _normal_equations(Lp, mat[M_G], 0, d, e, vec[V_G], Nm)  # L_pᵀL_p Δq = L_pᵀ e
        if not cholesky_solve_into(Nm, d, e[6:], dx, mat[M_SQ]):
            break
        _take_step(q, dx, d)
    return False, perr, np.inf, False


@_piece
def _solve_general(l, mi, mf, lay, Cd, s, th, bw, mat, vec, tol, max_iter):
    """Geometric IK of limb ``l`` towards ``C_d = Cd[s]`` by Gauss–Newton on all its tree variables.

    The equations are the platform pose error (eq. 96, ``J_p Δθ = log(C_p⁻¹C_d)``) stacked on the
    loops' selected rows (``G Δθ = −g``, eq. 12–13). At a regular configuration ``[J_p; G]`` has
    full column rank and the system is consistent, so this converges quadratically to the
    solution of Newton in ``q`` with the loops closed after every step (paper Sec. 3.5–3.7, eq. 75–84; eq. 83, 85), with one
    forward kinematics per step. Stops when the pose error is converged (:func:`_converged`) and
    every loop residual ≤ ``LOOP_TOL`` after at least one step, so that a solution is never a bare
    prediction; ``bw``'s poses, ``J_p`` and ``G`` then hold the solution's values. Returns
    ``(converged, pose error, loop error)``.
    """
    n, nr = mi[l, LI_N], mi[l, LI_NROWS]
    J, G, Nm, e, g, dx = mat[M_J], mat[M_G], mat[M_NM], vec[V_E], vec[V_G], vec[V_DX]
    perr = np.inf
    gerr = np.inf
    for r in range(6):
        for j in range(n):
            J[r, j] = 0.0
    for it in range(max_iter + 1):
        _fk(l, mi, mf, th, bw, it == 0)
        prev = perr
        perr, Rp, rp = _platform_error(l, mi, mf, lay, bw, Cd, s, e)
        gerr = _loop_rows(l, mi, mf, lay, bw, G, g)
        if not (np.isfinite(perr) and np.isfinite(gerr)):
            break
        _platform_jacobian(l, mi, mf, bw, Rp, rp, J)
        if gerr <= LOOP_TOL and _converged(perr, prev, it, tol, th, n):
            return True, perr, gerr
        if it == max_iter:
            break
        _normal_equations(J, G, nr, n, e, g, Nm)  # AᵀA Δθ = Aᵀ(e; −g) with A = [J_p; G]
        if not cholesky_solve_into(Nm, n, e[6:], dx, mat[M_SQ]):
            break
        _take_step(th, dx, n)
    return False, perr, gerr


@_piece
def _build_H(l, mi, lay, mat):
    """``H`` (n × δ, eq. 48) from the loop rows ``G``: ``H_q = I``, ``H_y = −G_y⁻¹ G_q`` per loop,
    and ``L_p = J_p H`` (eq. 80). ``G_y⁻¹`` of loop λ stays in ``mat[M_GYI + λ]`` for ``Ḣq̇``.
    Returns the largest 1-norm condition number of the ``G_y`` (inf if one is singular)."""
    n, d = mi[l, LI_N], mi[l, LI_DOF]
    oq = lay[LAY_QIDX]
    H, G, Gy, J, Lp = mat[M_H], mat[M_G], mat[M_GY], mat[M_J], mat[M_LP]
    for i in range(n):
        for c in range(d):
            H[i, c] = 0.0
    for c in range(d):
        H[mi[l, oq + c], c] = 1.0
    worst = 0.0
    row = 0
    for lp in range(mi[l, LI_NLOOP]):
        oi = lay[LAY_LOOPS] + LP_SIZE * lp
        m = mi[l, oi + LP_M]
        Gyi = mat[M_GYI + lp]
        for a in range(m):
            for b in range(m):
                Gy[a, b] = G[row + a, mi[l, oi + LP_Y + b]]
        if not inverse_into(Gy, m, Gyi, mat[M_SQ]):
            return np.inf
        worst = max(worst, norm1(Gy, m, m) * norm1(Gyi, m, m))
        for c in range(d):
            v = mi[l, oq + c]
            for a in range(m):
                acc = 0.0
                for b in range(m):
                    acc += Gyi[a, b] * G[row + b, v]
                H[mi[l, oi + LP_Y + a], c] = -acc
        row += m
    for r in range(6):
        for c in range(d):
            acc = 0.0
            for j in range(n):
                acc += J[r, j] * H[j, c]
            Lp[r, c] = acc
    return worst


@_internal
def _h_times(l, mi, mf, lay, H, aff, n, d, x, out):
    """``out[:n] = H x``: over the sparse rows of the model's constant H (``aff``), else with the
    dense ``H`` the IK built (:func:`_build_H`)."""
    if aff:
        oh, onz, ocol, dmax = lay[LAY_HC], lay[LAY_HNZ], lay[LAY_HCOL], lay[LAY_DMAX]
        for i in range(n):
            acc = 0.0
            for k in range(mi[l, onz + i]):
                acc += mf[l, oh + dmax * i + k] * x[mi[l, ocol + dmax * i + k]]
            out[i] = acc
    else:
        for i in range(n):
            acc = 0.0
            for c in range(d):
                acc += H[i, c] * x[c]
            out[i] = acc
