"""The per-sample dynamics of a PKM in joint frames, shared by the inverse-dynamics kernel
(:mod:`pkm.kernels.inverse_dynamics`) and the forward-dynamics kernel (:mod:`pkm.kernels.forward`):
a limb's geometry at its IK solution (``H``, ``L_p⁺``, ``F`` and its rows of J_IK), its rates and
accelerations and its tree's Newton–Euler dynamics (App. B), the platform's Newton–Euler
equations and the actuator forces (eq. 104–106, 140). See :mod:`pkm.kernels.inverse_dynamics` for how
the kernel is made fast; every function here is inlined into its caller (``_internal``).
"""
from __future__ import annotations

import numpy as np

from pkm.algorithms.constraints import _bias_orient, _bias_rho
from pkm.kernels.ik import _build_H, _dof, _h_times
from pkm.kernels.model import (BF_A, BF_B, BF_IN, BF_JT, BF_SIZE, LAY_ACTPOS, LAY_DMAX, LAY_HC, LAY_HCOL, LAY_HNZ, LAY_LMAX,
                               LAY_LOOPF, LAY_LOOPS, LAY_QP, LI_ACTOFF, LI_AFF, LI_N, LI_NACT, LI_NLOOP, LI_PLAT, LP_K,
                               LP_M, LP_NN, LP_R, LP_ROWS, LP_SIZE, LP_Y, MI_PARENT, PF_DR, PF_EK, PF_ER, PF_N, PF_SIZE)
from pkm.kernels.work import (BW_A, BW_HD, BW_PHI, BW_T, BW_V, BW_W, M_F, M_GRAM, M_GRAMI, M_GYI, M_H, M_J, M_JT,
                              M_JTI, M_LP, M_SQ, V_G, V_Q, V_QD, V_QDD, V_RHS, _internal, _pose_at, _set_twist_at,
                              _twist_at, _vec_at, BW_K, unliteral)
from pkm.lie.linalg import inverse_into, norm1, spd_inverse_into
from pkm.lie.small import Ad, Ad_inv, add, coad, cross, dot, get_pose, mtm, mtv, mv, scale, sub

#: Status codes of the kernels: success, the IK or the loop closure failed, G_y, L_p or J_IK singular.
OK, IK_FAILED, LOOP_FAILED, SINGULAR_GY, SINGULAR_LP, SINGULAR_JIK = 0, 1, 2, 3, 4, 5

# ----------------------------------------------------------------------------- rates and dynamics
@unliteral
@_internal
def _params10(A, i, o):
    """``A[i, o:o+10]``, an inertia ``(m, mc_x, mc_y, mc_z, I_xx, I_xy, I_xz, I_yy, I_yz, I_zz)``, as a tuple."""
    return (A[i, o], A[i, o + 1], A[i, o + 2], A[i, o + 3], A[i, o + 4], A[i, o + 5], A[i, o + 6], A[i, o + 7],
            A[i, o + 8], A[i, o + 9])


@_internal
def _inertia_times(p, w, v):
    """``M (ω; v) = (I_o ω + mc × v; m v − mc × ω)`` for the 10 inertia parameters ``p`` (a rigid
    body's mass matrix about the frame origin, :func:`pkm.kernels.model.inertia10`)."""
    mc = (p[1], p[2], p[3])
    Iw = (p[4] * w[0] + p[5] * w[1] + p[6] * w[2], p[5] * w[0] + p[7] * w[1] + p[8] * w[2],
          p[6] * w[0] + p[8] * w[1] + p[9] * w[2])
    return add(Iw, cross(mc, v)), sub(scale(p[0], v), cross(mc, w))


@_internal
def _twists(l, mi, mf, thd, bw):
    """Twists ``V_i = Ad_{T_i}⁻¹ V_{parent} + S θ̇_i`` (eq. 3) and bias accelerations
    ``A_i = J̇_i θ̇ = Ad_{T_i}⁻¹ A_{parent} + ad_{V_i} S θ̇_i`` (θ̈ = 0, eq. 163) in joint frames."""
    for i in range(mi[l, LI_N]):
        R, p = _pose_at(bw, i, BW_T)
        k = mi[l, MI_PARENT + i]
        pw, pv = _twist_at(bw, k, BW_V)
        w, v = Ad_inv(R, p, pw, pv)
        pw, pv = _twist_at(bw, k, BW_A)
        aw, av = Ad_inv(R, p, pw, pv)
        a, b = mf[l, BF_SIZE * i + BF_A] * thd[i], mf[l, BF_SIZE * i + BF_B] * thd[i]
        w = (w[0], w[1], w[2] + a)
        v = (v[0], v[1], v[2] + b)
        _set_twist_at(bw, i, BW_V, w, v)  # ad_V (S θ̇) = (ω × a e_z; v × a e_z + ω × b e_z)
        _set_twist_at(bw, i, BW_A, (aw[0] + a * w[1], aw[1] - a * w[0], aw[2]),
                      (av[0] + a * v[1] + b * w[1], av[1] - a * v[0] - b * w[0], av[2]))


@_internal
def _loop_bias(l, mi, mf, lay, bw, g):
    """``Ġθ̇`` (eq. 14, 47; paper eq. 16, 22, 28, 32; eq. 33, 37, 41) of the loops' selected rows into ``g``, from the twists
    and bias accelerations ``J̇θ̇`` in ``bw``: :func:`pkm.algorithms.constraints._bias_rho` and
    :func:`pkm.algorithms.constraints._bias_orient`, as :func:`pkm.algorithms.constraints.cut_bias_into` uses them, on
    data the pack moved into the ``K`` frames."""
    row = 0
    for lp in range(mi[l, LI_NLOOP]):
        oi = lay[LAY_LOOPS] + LP_SIZE * lp
        of = lay[LAY_LOOPF] + PF_SIZE * lp
        k, r = mi[l, oi + LP_K], mi[l, oi + LP_R]
        Rk, rk = _pose_at(bw, k, BW_K)
        Rr, rr = _pose_at(bw, r, BW_K)
        Rkr = mtm(Rk, Rr)
        dr = _vec_at(mf, l, of + PF_DR)
        sv = mtv(Rk, sub(add(rr, mv(Rr, dr)), rk))
        wk, vk = _twist_at(bw, k, BW_V)
        wr, vr = _twist_at(bw, r, BW_V)
        ak, bk = _twist_at(bw, k, BW_A)
        ar, br = _twist_at(bw, r, BW_A)
        acc, _ = _bias_rho(Rkr, sv, dr, wk, vk, wr, vr, ak, bk, ar, br)
        nn = mi[l, oi + LP_NN]
        for ia in range(mi[l, oi + LP_M]):
            ri = mi[l, oi + LP_ROWS + ia]
            if ri < nn:
                g[row] = dot(_vec_at(mf, l, of + PF_N + 3 * ri), acc)
            else:
                jj = ri - nn
                g[row] = _bias_orient(Rkr, _vec_at(mf, l, of + PF_EK + 3 * jj), _vec_at(mf, l, of + PF_ER + 3 * jj),
                                      wk, wr, ak, ar)
            row += 1



@_internal
def _h_dot_q_dot(l, mi, mf, lay, bw, g, mat):
    """``Ḣq̇ = −G_y⁻¹ Ġθ̇`` per loop of limb ``l`` (eq. 46–47) into ``bw[:, BW_HD]`` at each loop's
    dependent variables (the others left as they are), with ``Ġθ̇`` from :func:`_loop_bias` in ``g``
    and the loops' ``G_y⁻¹`` in ``mat[M_GYI + loop]``."""
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


@_internal
def _rnea(l, mi, mf, thd, thdd, g0, bw):
    """Recursive Newton–Euler inverse dynamics of limb ``l``'s tree (App. B) in joint frames, with
    the twists of :func:`_twists` in ``bw``: ``φ_i = Sᵀ W_i`` into ``bw[:, BW_PHI]``. Gravity enters
    as the ground's acceleration ``(0; −g)``; ``W_i = M_i A_i − ad_{V_i}ᵀ M_i V_i + Σ_c Ad_{T_c}⁻ᵀ W_c``."""
    n = mi[l, LI_N]
    for i in range(n):
        R, p = _pose_at(bw, i, BW_T)
        k = mi[l, MI_PARENT + i]
        if k >= 0:
            pw, pv = _twist_at(bw, k, BW_A)
        else:
            pw, pv = (0.0, 0.0, 0.0), (-g0[0], -g0[1], -g0[2])
        aw, av = Ad_inv(R, p, pw, pv)
        w, v = _twist_at(bw, i, BW_V)
        o = BF_SIZE * i
        a, b = mf[l, o + BF_A], mf[l, o + BF_B]
        qd, qdd = thd[i], thdd[i]
        _set_twist_at(bw, i, BW_A, (aw[0] + a * qd * w[1], aw[1] - a * qd * w[0], aw[2] + a * qdd),
                      (av[0] + qd * (a * v[1] + b * w[1]), av[1] - qd * (a * v[0] + b * w[0]), av[2] + b * qdd))
        _set_twist_at(bw, i, BW_W, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    for i in range(n - 1, -1, -1):
        fw, fv = _twist_at(bw, i, BW_W)  # the children's wrenches
        if mf[l, BF_SIZE * i + BF_IN] != 0.0:
            p10 = _params10(mf, l, BF_SIZE * i + BF_IN)
            w, v = _twist_at(bw, i, BW_V)
            aw, av = _twist_at(bw, i, BW_A)
            hw, hv = _inertia_times(p10, w, v)
            cw, cv = coad(w, v, hw, hv)  # ad_Vᵀ M V
            mw, mv_ = _inertia_times(p10, aw, av)
            fw = add(sub(mw, cw), fw)  # M A − ad_Vᵀ M V + children
            fv = add(sub(mv_, cv), fv)
        bw[i, BW_PHI] = mf[l, BF_SIZE * i + BF_A] * fw[2] + mf[l, BF_SIZE * i + BF_B] * fv[2] + \
            _joint_terms(mf, l, BF_SIZE * i + BF_JT, thd[i], thdd[i])
        _to_parent(l, mi, bw, i, fw, fv)


@_internal
def _joint_terms(mf, l, o, qd, qdd):
    """The joint variable's own force (:attr:`pkm.description.model.TreeModel.joint_terms`, the
    paper's ``Q`` of eq. 100): ``armature θ̈ + viscous θ̇ + coulomb tanh(θ̇ / coulomb_speed)``."""
    arm, fv, fc = mf[l, o], mf[l, o + 1], mf[l, o + 2]
    out = arm * qdd + fv * qd
    if fc != 0.0:
        out += fc * np.tanh(qd / mf[l, o + 3])
    return out


@_internal
def _limb_dynamics(l, mi, mf, lay, d_static, dp_static, Vp, dVp, g0, s, thresh, thd, thdd, JIK, limbW, bw, mat,
                   vec, general, status):
    """Limb ``l`` at its IK solution (poses, ``J_p``, ``G``, ``L_p`` from the IK): its geometry
    (:func:`_limb_geometry`) and its dynamics at sample ``s`` (:func:`_limb_motion`). Returns False
    after writing a failure into ``status``. ``general`` is None when every limb is affine (see
    :func:`run_range`)."""
    if not _limb_geometry(l, mi, mf, lay, d_static, dp_static, s, thresh, JIK, mat, general, status):
        return False
    _limb_motion(l, mi, mf, lay, d_static, dp_static, mat[_pinv_slot(lay, l, s)], Vp, dVp, g0, s, thd, thdd, limbW,
                 bw, mat, vec, general)
    return True


@_internal
def _limb_geometry(l, mi, mf, lay, d_static, dp_static, s, thresh, JIK, mat, general, status):
    """Limb ``l`` at its IK solution: ``H`` and ``L_p`` with their singularity checks, ``L_p⁺``
    (into the slot :func:`_pinv_slot` of sample ``s``) and ``F = L_p⁺P_p`` (eq. 94) into
    ``J_IK[s]``. Returns False after writing a failure into ``status``."""
    d, dp = _dof(l, mi, d_static), len(dp_static)
    aff = True if general is None else mi[l, LI_AFF] != 0
    Lp, Gram, Grami, F = mat[M_LP], mat[M_GRAM], mat[M_GRAMI], mat[M_F]
    if not aff and general is not None:
        cg = _build_H(l, mi, lay, mat)
        if not cg <= thresh:
            status[0], status[1], status[2], status[3] = SINGULAR_GY, s, l, cg
            return False
    for a in range(d):
        for b in range(d):
            acc = 0.0
            for r in range(6):
                acc += Lp[r, a] * Lp[r, b]
            Gram[a, b] = acc
    cl = np.inf  # the Gram matrix is SPD at a regular configuration (Cholesky fails otherwise)
    if len(d_static) > 0:  # with the size a compile-time constant: unrolled
        if spd_inverse_into(Gram, d_static, Grami, mat[M_SQ]):
            cl = np.sqrt(norm1(Gram, d_static, d_static) * norm1(Grami, d_static, d_static))
    elif spd_inverse_into(Gram, d, Grami, mat[M_SQ]):
        cl = np.sqrt(norm1(Gram, d, d) * norm1(Grami, d, d))
    if not cl <= thresh:
        status[0], status[1], status[2], status[3] = SINGULAR_LP, s, l, cl
        return False
    Pinv = mat[_pinv_slot(lay, l, s)]  # kept for the chord steps of samples s + 1 and s + 2
    for a in range(d):  # L_p⁺ = (L_pᵀL_p)⁻¹ L_pᵀ (eq. 94)
        for r in range(6):
            acc = 0.0
            for b in range(d):
                acc += Grami[a, b] * Lp[r, b]
            Pinv[a, r] = acc
    for a in range(d):  # F = L_p⁺ P_p (eq. 94), P_p selecting rows (pkm.kernels.model.task_rows), and
        for c in range(dp):  # below the limb's rows of J_IK (eq. 97–98)
            F[a, c] = Pinv[a, dp_static[c]]
    off, oa = mi[l, LI_ACTOFF], lay[LAY_ACTPOS]
    for a in range(mi[l, LI_NACT]):
        for c in range(dp):
            JIK[s, off + a, c] = F[mi[l, oa + a], c]
    return True


@_internal
def _limb_motion(l, mi, mf, lay, d_static, dp_static, Pinv, Vp, dVp, g0, s, thd, thdd, limbW, bw, mat, vec,
                 general):
    """Limb ``l``'s dynamics at sample ``s``, with its geometry from :func:`_limb_geometry` (``L_p⁺``
    in ``Pinv``, ``H`` and ``F`` in ``mat``): ``θ̇`` and ``θ̈`` (eq. 86–88, paper Sec. 4.2, eq. 90–93), the tree
    dynamics ``φ`` (App. B) and ``W̄ = FᵀHᵀφ`` (eq. 144) into ``limbW[s, l]``."""
    n, d, plat, dp = mi[l, LI_N], _dof(l, mi, d_static), mi[l, LI_PLAT], len(dp_static)
    aff = True if general is None else mi[l, LI_AFF] != 0
    H, F, J = mat[M_H], mat[M_F], mat[M_J]
    q, qd, qdd, g = vec[V_Q], vec[V_QD], vec[V_QDD], vec[V_G]
    # ---- velocities (eq. 86–87) and accelerations (eq. 88, corrected as in paper Sec. 4.2, eq. 90–93)
    for a in range(d):  # q̇ = L_p⁺ V_p
        acc = 0.0
        for r in range(6):
            acc += Pinv[a, r] * Vp[s, r]
        qd[a] = acc
    _h_times(l, mi, mf, lay, H, aff, n, d, qd, thd)  # θ̇ = H q̇
    _twists(l, mi, mf, thd, bw)
    for i in range(n):
        bw[i, BW_HD] = 0.0
    if not aff and general is not None:  # Ḣq̇ = −G_y⁻¹ Ġθ̇ per loop (eq. 46–47); zero for a constant H
        _h_dot_q_dot(l, mi, mf, lay, bw, g, mat)
    # V̇_p − J̇_pθ̇ − J_p Ḣq̇, with J̇_pθ̇ = Ad_{Q_p} A_p moved from K_p to F_p
    RQ, pQ = _pose_at(mf, l, lay[LAY_QP])
    pw, pv = _twist_at(bw, plat, BW_A)
    aw, av = Ad(RQ, pQ, pw, pv)
    r0, r1, r2 = dVp[s, 0] - aw[0], dVp[s, 1] - aw[1], dVp[s, 2] - aw[2]
    r3, r4, r5 = dVp[s, 3] - av[0], dVp[s, 4] - av[1], dVp[s, 5] - av[2]
    if not aff:
        for i in range(n):
            hd = bw[i, BW_HD]
            r0 -= J[0, i] * hd
            r1 -= J[1, i] * hd
            r2 -= J[2, i] * hd
            r3 -= J[3, i] * hd
            r4 -= J[4, i] * hd
            r5 -= J[5, i] * hd
    for a in range(d):  # q̈ = L_p⁺ (V̇_p − J̇_pθ̇ − J_p Ḣq̇)
        qdd[a] = Pinv[a, 0] * r0 + Pinv[a, 1] * r1 + Pinv[a, 2] * r2 + Pinv[a, 3] * r3 + Pinv[a, 4] * r4 + \
            Pinv[a, 5] * r5
    _h_times(l, mi, mf, lay, H, aff, n, d, qdd, thdd)  # θ̈ = H q̈ + Ḣq̇
    for i in range(n):
        thdd[i] += bw[i, BW_HD]
    # ---- limb dynamics φ (App. B) and W̄ = Fᵀ Hᵀ φ (eq. 144)
    _rnea(l, mi, mf, thd, thdd, g0, bw)
    _limb_wrench(l, mi, mf, lay, n, d, dp, aff, H, F, q, bw, limbW, s)


@_internal
def _limb_unit(l, mi, mf, lay, d_static, dp_static, Pinv, row, s, thdd, limbW, bw, mat, vec, general):
    """Limb ``l``'s share of ``M_t e`` for the unit task acceleration with platform acceleration
    ``V̇_p = e_row`` at rest and without gravity (the velocity-free part of :func:`_limb_motion`):
    ``θ̈ = H L_p⁺ e_row`` (eq. 88 with ``θ̇ = 0``), the tree's ``φ = M θ̈`` (App. B, :func:`_rnea_acc`)
    and ``W̄ = FᵀHᵀφ`` (eq. 144) into ``limbW[s, l]``; ``θ̈`` into ``thdd``."""
    n, d, dp = mi[l, LI_N], _dof(l, mi, d_static), len(dp_static)
    aff = True if general is None else mi[l, LI_AFF] != 0
    H, F = mat[M_H], mat[M_F]
    q, qdd = vec[V_Q], vec[V_QDD]
    for a in range(d):
        qdd[a] = Pinv[a, row]
    _h_times(l, mi, mf, lay, H, aff, n, d, qdd, thdd)
    _rnea_acc(l, mi, mf, thdd, bw)
    _limb_wrench(l, mi, mf, lay, n, d, dp, aff, H, F, q, bw, limbW, s)


@_internal
def _rnea_acc(l, mi, mf, thdd, bw):
    """:func:`_rnea` at rest and without gravity: ``A_i = Ad_{T_i}⁻¹ A_{parent} + S θ̈_i``,
    ``W_i = M_i A_i + Σ_c Ad_{T_c}⁻ᵀ W_c``, ``φ_i = Sᵀ W_i`` (the joint-space ``M θ̈``)."""
    n = mi[l, LI_N]
    for i in range(n):
        k = mi[l, MI_PARENT + i]
        o = BF_SIZE * i
        a, b = mf[l, o + BF_A] * thdd[i], mf[l, o + BF_B] * thdd[i]
        if k >= 0:
            R, p = _pose_at(bw, i, BW_T)
            pw, pv = _twist_at(bw, k, BW_A)
            aw, av = Ad_inv(R, p, pw, pv)
            _set_twist_at(bw, i, BW_A, (aw[0], aw[1], aw[2] + a), (av[0], av[1], av[2] + b))
        else:
            _set_twist_at(bw, i, BW_A, (0.0, 0.0, a), (0.0, 0.0, b))
        _set_twist_at(bw, i, BW_W, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    for i in range(n - 1, -1, -1):
        fw, fv = _twist_at(bw, i, BW_W)
        if mf[l, BF_SIZE * i + BF_IN] != 0.0:
            aw, av = _twist_at(bw, i, BW_A)
            mw, mv_ = _inertia_times(_params10(mf, l, BF_SIZE * i + BF_IN), aw, av)
            fw, fv = add(mw, fw), add(mv_, fv)
        bw[i, BW_PHI] = mf[l, BF_SIZE * i + BF_A] * fw[2] + mf[l, BF_SIZE * i + BF_B] * fv[2] + \
            mf[l, BF_SIZE * i + BF_JT] * thdd[i]   # the armature (velocity-free: no friction)
        _to_parent(l, mi, bw, i, fw, fv)


@_internal
def _to_parent(l, mi, bw, i, fw, fv):
    """Add body ``i``'s wrench ``(fw; fv)`` (in ``K_i``) to its parent's, ``Ad_{T_i}⁻ᵀ W_i``."""
    k = mi[l, MI_PARENT + i]
    if k >= 0:
        R, p = _pose_at(bw, i, BW_T)
        Rf = mv(R, fv)
        mw = add(mv(R, fw), cross(p, Rf))
        bw[k, BW_W] += mw[0]
        bw[k, BW_W + 1] += mw[1]
        bw[k, BW_W + 2] += mw[2]
        bw[k, BW_W + 3] += Rf[0]
        bw[k, BW_W + 4] += Rf[1]
        bw[k, BW_W + 5] += Rf[2]


@_internal
def _limb_wrench(l, mi, mf, lay, n, d, dp, aff, H, F, q, bw, limbW, s):
    """``W̄ = FᵀHᵀφ`` (eq. 144) of limb ``l`` from the joint forces ``φ`` in ``bw`` into
    ``limbW[s, l]`` (``q`` scratch)."""
    if aff:  # q = Hᵀ φ
        oh, onz, ocol, dmax = lay[LAY_HC], lay[LAY_HNZ], lay[LAY_HCOL], lay[LAY_DMAX]
        for c in range(d):
            q[c] = 0.0
        for i in range(n):
            for k in range(mi[l, onz + i]):
                q[mi[l, ocol + dmax * i + k]] += mf[l, oh + dmax * i + k] * bw[i, BW_PHI]
    else:
        for c in range(d):
            acc = 0.0
            for i in range(n):
                acc += H[i, c] * bw[i, BW_PHI]
            q[c] = acc
    for c in range(dp):
        acc = 0.0
        for a in range(d):
            acc += F[a, c] * q[a]
        limbW[s, l, c] = acc


@_internal
def _actuator_forces(Mp, dp_static, Cd, Vp, dVp, Wee, g0, s, limbW, platW, JIK, tau, mat, vec, thresh, status):
    """``J_IK⁻ᵀ`` (:func:`_jik_inverse`) and the actuator forces at sample ``s``
    (:func:`_platform_forces`). Returns False after writing a failure (J_IK singular) into
    ``status``. With redundant actuation (more rows in ``J_IK`` than ``δ_p``) only the task-space
    wrench is formed (``platW[s]`` + ``Σ limbW[s]``) and ``tau[s]`` is zeroed: the distribution
    ``u = (J_IKᵀ)⁺_W φ_t`` (Sec. 8.2) and the check of ``J_IK``'s rank follow the kernel
    (:mod:`pkm.algorithms.distribution`)."""
    if JIK.shape[1] != len(dp_static):
        _platform_wrench(Mp, dp_static, Cd, Vp, dVp, Wee, g0, s, limbW, platW, mat, vec)
        for a in range(tau.shape[1]):
            tau[s, a] = 0.0
        return True
    if not _jik_inverse(dp_static, s, JIK, mat, thresh, status):
        return False
    _platform_forces(Mp, dp_static, Cd, Vp, dVp, Wee, g0, s, limbW, platW, tau, mat, vec)
    return True


@_internal
def _least_norm(JIK, s, dp, rhs, tau, mat):
    """``tau[s] = J_IK (J_IKᵀ J_IK)⁻¹ rhs``: the least-norm forces with ``J_IKᵀ u = rhs`` for a redundantly
    actuated robot (``J_IK[s]`` with more rows than ``δ_p``, Sec. 8.2), through the normal equations
    (``mat[M_GRAM]``, ``mat[M_GRAMI]``, ``mat[M_SQ]`` as scratch); NaN where ``J_IKᵀ J_IK`` is singular.
    The inverse dynamics distributes after the kernel, with weights and through an SVD
    (:mod:`pkm.algorithms.distribution`); this is for the forward dynamics' holding forces ``u_0``."""
    na = JIK.shape[1]
    G, Gi = mat[M_GRAM], mat[M_GRAMI]
    for a in range(dp):
        for b in range(dp):
            acc = 0.0
            for k in range(na):
                acc += JIK[s, k, a] * JIK[s, k, b]
            G[a, b] = acc
    if not inverse_into(G, dp, Gi, mat[M_SQ]):
        for k in range(na):
            tau[s, k] = np.nan
        return
    for k in range(na):
        acc = 0.0
        for a in range(dp):
            y = 0.0
            for b in range(dp):
                y += Gi[a, b] * rhs[b]
            acc += JIK[s, k, a] * y
        tau[s, k] = acc


@_internal
def _jik_inverse(dp_static, s, JIK, mat, thresh, status):
    """``J_IK[s]ᵀ`` into ``mat[M_JT]`` and its inverse into ``mat[M_JTI]``, with the singularity check
    (1-norm condition number ≤ ``thresh``). Returns False after writing a failure into ``status``."""
    dp = len(dp_static)
    Jt, Jti = mat[M_JT], mat[M_JTI]
    for a in range(dp):
        for b in range(dp):
            Jt[a, b] = JIK[s, b, a]
    if not inverse_into(Jt, dp, Jti, mat[M_SQ]):
        status[0], status[1], status[2], status[3] = SINGULAR_JIK, s, -1, np.inf
        return False
    cj = norm1(Jt, dp, dp) * norm1(Jti, dp, dp)
    if not cj <= thresh:
        status[0], status[1], status[2], status[3] = SINGULAR_JIK, s, -1, cj
        return False
    return True


@_internal
def _platform_forces(Mp, dp_static, Cd, Vp, dVp, Wee, g0, s, limbW, platW, tau, mat, vec):
    """The platform (eq. 104–106) into ``platW[s]`` (:func:`_platform_wrench`), and the actuator
    forces ``u = J_IK⁻ᵀ(Σ W̄ + P_pᵀφ_p)`` (eq. 140) into ``tau[s]``, with ``J_IK⁻ᵀ`` in
    ``mat[M_JTI]`` (:func:`_jik_inverse`)."""
    _platform_wrench(Mp, dp_static, Cd, Vp, dVp, Wee, g0, s, limbW, platW, mat, vec)
    dp = len(dp_static)
    Jti, rhs = mat[M_JTI], vec[V_RHS]
    for a in range(dp):
        acc = 0.0
        for b in range(dp):
            acc += Jti[a, b] * rhs[b]
        tau[s, a] = acc


@_internal
def _platform_wrench(Mp, dp_static, Cd, Vp, dVp, Wee, g0, s, limbW, platW, mat, vec):
    """The platform (eq. 104–106), ``P_pᵀ(M_p (V̇_p − Ad_{C_p}⁻¹(0; g)) − ad_{V_p}ᵀ M_p V_p − W^EE)``
    into ``platW[s]``, and the task-space wrench ``Σ_l W̄_(l) + P_pᵀφ_p`` (the bracket of eq. 140:
    ``M_t V̇_t + C_t V_t + W_t^grav − W_t^EE``) into ``vec[V_RHS]``."""
    R, p = get_pose(Cd, s)
    gw, gv = Ad_inv(R, p, (0.0, 0.0, 0.0), (g0[0], g0[1], g0[2]))
    p10 = _params10(Mp, 0, 0)
    aw, av = _twist_at(dVp, s, 0)
    fw, fv = _inertia_times(p10, sub(aw, gw), sub(av, gv))
    w, v = _twist_at(Vp, s, 0)
    hw, hv = _inertia_times(p10, w, v)
    cw, cv = coad(w, v, hw, hv)
    phi = (fw[0] - cw[0] - Wee[s, 0], fw[1] - cw[1] - Wee[s, 1], fw[2] - cw[2] - Wee[s, 2],
           fv[0] - cv[0] - Wee[s, 3], fv[1] - cv[1] - Wee[s, 4], fv[2] - cv[2] - Wee[s, 5])
    dp = len(dp_static)
    rhs = vec[V_RHS]
    for c in range(dp):  # P_pᵀ φ_p: the task's rows of φ_p (pkm.kernels.model.task_rows)
        acc = phi[dp_static[c]]
        platW[s, c] = acc
        for l in range(limbW.shape[1]):
            acc += limbW[s, l, c]
        rhs[c] = acc


@_internal
def _pinv_slot(lay, l, s):
    """Slot of ``mat`` holding limb ``l``'s ``L_p⁺`` of sample ``s`` (two per limb, alternating)."""
    return M_GYI + lay[LAY_LMAX] + 2 * l + (s & 1)
