"""Forward dynamics in joint coordinates plus task velocity (paper 8.1.2, eq. 131–134) as a numba
kernel: the right-hand side of :class:`pkm.sim.joint.JointModel` at one state, allocation-free.

The state's tree variables ``θ`` are used as they are — no inverse kinematics, so a state off the
constraint manifold (the integrator's drift) is evaluated there, as the reference does: every
limb's ``H`` from its loops' ``G(θ)`` (eq. 44–45; the model is packed with the general path for
every limb, :func:`pkm.kernels.model.pack` ``affine=False``), ``L_p = J_p H``, ``F = L_p⁺ P_p``
(eq. 80, 94) with the singularity checks of the task form (:func:`pkm.kernels.dynamics._limb_geometry`),
``θ̇ = H F V_t`` (eq. 134), then the task form's passes (:func:`pkm.kernels.dynamics._limb_motion`,
:func:`pkm.kernels.dynamics._limb_unit`) and solve (:func:`pkm.kernels.forward._task_solve`):
``V̇_t = M_t⁻¹(J_IKᵀu + W_t^EE − C_t V_t − W_t^grav)`` (eq. 133), the platform at the task
coordinates ``x`` of θ (the mean of the limbs' platform positions, in the platform's reference
axes). Translational task spaces (``V_t = ẋ``), as the joint form. Its RK4:
:func:`pkm.kernels.joint_projection.joint_rk4_projected` (with or without the projections).
"""
from __future__ import annotations

import numpy as np

from pkm.kernels.dynamics import _limb_geometry, _limb_motion, _limb_unit, _pinv_slot
from pkm.kernels.forward import _set_state, _task_solve
from pkm.kernels.ik import _fk, _loop_rows, _platform_jacobian
from pkm.kernels.model import LAY_QP, LI_N, LI_PLAT
from pkm.kernels.work import BW_K, M_G, M_J, V_G, _internal, _jit, _pose_at

__all__ = ["joint_rhs"]


@_internal
def _joint_state(mi, mf, lay, Mp, d_static, dp_static, theta, Vt, u, R0, local0, axes, g0, pCd, pVp, pdVp, pWee, pthd,
                 pthdd, ptau, pJIK, plimbW, pplatW, th, bw, mat, vec, general, thresh, xdd, thd, thdd, x, status):
    """Eq. 133–134 at the joint state ``(θ, V_t)`` (``theta`` all limbs' tree variables, limb after
    limb) under forces ``u``; the end-effector wrench in ``pWee[0]``, the pass scratch as
    :func:`pkm.kernels.forward.forward_range`'s. Writes ``V̇_t`` into ``xdd``, ``θ̇`` and the joint
    accelerations at that ``V̇_t`` into ``thd``, ``thdd`` (L, n_max), ``x``, ``J_IK`` into
    ``pJIK[0]``; ``status[0]`` 0 on success, else the failure (limb, condition) as the task form's."""
    L, m = mi.shape[0], len(dp_static) + 1
    o = 0
    for l in range(L):
        for j in range(th.shape[1]):
            th[l, j] = theta[o + j] if j < mi[l, LI_N] else 0.0
        o += mi[l, LI_N]
    for r in range(6):
        pVp[0, r] = 0.0
    for i in range(axes.shape[0]):  # V_p = P_p V_t = (0; ℓ̇)
        pVp[0, 3 + axes[i]] = Vt[i]
    s0 = s1 = s2 = 0.0
    for l in range(L):
        n = mi[l, LI_N]
        tl = th[l]
        J = mat[M_J]
        for r in range(6):
            for j in range(n):
                J[r, j] = 0.0
        _fk(l, mi, mf, tl, bw, True)
        Rk, pk = _pose_at(bw, mi[l, LI_PLAT], BW_K)  # C_p = K_p Q_p⁻¹
        Rq, pq = _pose_at(mf, l, lay[LAY_QP] + 12)
        Rp = (Rk[0] * Rq[0] + Rk[1] * Rq[3] + Rk[2] * Rq[6], Rk[0] * Rq[1] + Rk[1] * Rq[4] + Rk[2] * Rq[7],
              Rk[0] * Rq[2] + Rk[1] * Rq[5] + Rk[2] * Rq[8], Rk[3] * Rq[0] + Rk[4] * Rq[3] + Rk[5] * Rq[6],
              Rk[3] * Rq[1] + Rk[4] * Rq[4] + Rk[5] * Rq[7], Rk[3] * Rq[2] + Rk[4] * Rq[5] + Rk[5] * Rq[8],
              Rk[6] * Rq[0] + Rk[7] * Rq[3] + Rk[8] * Rq[6], Rk[6] * Rq[1] + Rk[7] * Rq[4] + Rk[8] * Rq[7],
              Rk[6] * Rq[2] + Rk[7] * Rq[5] + Rk[8] * Rq[8])
        rp = (Rk[0] * pq[0] + Rk[1] * pq[1] + Rk[2] * pq[2] + pk[0],
              Rk[3] * pq[0] + Rk[4] * pq[1] + Rk[5] * pq[2] + pk[1],
              Rk[6] * pq[0] + Rk[7] * pq[1] + Rk[8] * pq[2] + pk[2])
        s0, s1, s2 = s0 + rp[0], s1 + rp[1], s2 + rp[2]
        _platform_jacobian(l, mi, mf, bw, Rp, rp, J)
        _loop_rows(l, mi, mf, lay, bw, mat[M_G], vec[V_G])
        if not _limb_geometry(l, mi, mf, lay, d_static, dp_static, 0, thresh, pJIK, mat, general, status):
            return False
        Pinv = mat[_pinv_slot(lay, l, 0)]
        _limb_motion(l, mi, mf, lay, d_static, dp_static, Pinv, pVp, pdVp, g0, 0, pthd[0, l], pthdd[0, l], plimbW, bw,
                     mat, vec, general)
        for k in range(1, m):  # M_t e_k: at rest, without gravity
            _limb_unit(l, mi, mf, lay, d_static, dp_static, Pinv, dp_static[k - 1], k, pthdd[k, l], plimbW, bw, mat,
                       vec, general)
    s0, s1, s2 = s0 / L, s1 / L, s2 / L  # x: the mean platform position in the reference axes
    for i in range(axes.shape[0]):
        a = axes[i]
        x[i] = R0[0, a] * s0 + R0[1, a] * s1 + R0[2, a] * s2
    _set_state(R0, local0, axes, x, Vt, pCd, pVp)  # the platform pose of x (its gravity)
    return _task_solve(mi, Mp, dp_static, pCd, pVp, pdVp, pWee, g0, u, th, pthd, pthdd, ptau, pJIK, plimbW, pplatW, mat,
                       vec, np.inf, status, xdd, thd, thdd, False)


@_jit
def joint_rhs(mi, mf, lay, Mp, d_static, dp_static, theta, Vt, u, R0, local0, axes, g0, pCd, pVp, pdVp, pWee, pthd,
              pthdd, ptau, pJIK, plimbW, pplatW, th, bw, mat, vec, general, thresh, xdd, thd, thdd, x, status):
    """One evaluation of :func:`_joint_state`; ``status[0]`` 0 on success; ``M_t`` and its inverse stay
    in ``mat[M_JT]``, ``mat[M_JTI]``."""
    if _joint_state(mi, mf, lay, Mp, d_static, dp_static, theta, Vt, u, R0, local0, axes, g0, pCd, pVp, pdVp, pWee,
                    pthd, pthdd, ptau, pJIK, plimbW, pplatW, th, bw, mat, vec, general, thresh, xdd, thd, thdd, x,
                    status):
        status[0] = 0


@_internal
def _joint_dy(mi, th, thd, xdd, pJIK, u, ys, n, dp, out):
    """``y' = (θ̇, V̇_t, u · J_IK V_t)`` of the evaluation just made at ``ys`` into ``out``."""
    o = 0
    for l in range(th.shape[0]):
        for j in range(mi[l, LI_N]):
            out[o + j] = thd[l, j]
        o += mi[l, LI_N]
    power = 0.0
    for i in range(dp):
        out[n + i] = xdd[i]
    for a in range(u.shape[0]):  # u · θ̇_act = u · J_IK V_t
        acc = 0.0
        for i in range(dp):
            acc += pJIK[0, a, i] * ys[n + i]
        power += u[a] * acc
    out[n + dp] = power
